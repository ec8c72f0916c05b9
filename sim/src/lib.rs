//! kgen-sim
