//! The kgen command-line tool's library: shared by the binary and the integration tests.

pub mod bench;
pub mod goldens;
pub mod jit_bench;
pub mod jit_run;
pub mod openssl;
pub mod oracle;
pub mod outputs;
