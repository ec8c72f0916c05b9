//! kgen-calibration: the cost model against measurements of a physical C906 (the Allwinner
//! D1 figures in ../shared/calibration): rvv-bench's and rvv-chacha-poly's code run as the
//! measurements ran it ([`d1`]). Only the tests use it; the `kgen` tool does not depend on
//! it.

pub mod d1;
