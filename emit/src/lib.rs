//! kgen-emit
