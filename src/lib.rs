//! The kgen command-line tool's library: shared by the binary and the integration tests.

pub mod asmcall;
pub mod bench;
pub mod d1;
pub mod gcm;
pub mod goldens;
pub mod gopatches;
pub mod jit_bench;
pub mod jit_run;
pub mod openssl;
pub mod oracle;
pub mod outputs;
pub mod plot;
pub mod rtl;
