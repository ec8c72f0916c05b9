//! kgen-sim: runs RISC-V machine code (RV64GC, the T-Head scalar extensions, XTheadVector,
//! RVV 1.0 with vector crypto) using the semantics in kgen-dsl's ISA table; calls functions
//! through the C ABI with checks; and models C906 timing.

pub mod call;
pub mod cost;
pub mod diff;
pub mod machine;
pub mod mem;

pub use call::{CallError, Env, Outcome};
pub use machine::{Fault, Machine};
