//! kgen-kernels
