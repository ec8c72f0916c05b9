//! kgen: the command-line tool as a library. [`cli::run`] gives any crate every command
//! of `kgen` for its own kernels; [`outputs`] enumerates the files a kernel's variants
//! make, [`goldens`] compares them with a goldens tree, [`plot`] draws `kgen bench --plot`.

pub mod cli;
pub mod goldens;
pub mod outputs;
pub mod plot;
