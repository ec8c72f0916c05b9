//! The kgen command-line tool's library: shared by the binary and the integration tests.

pub mod oracle;
