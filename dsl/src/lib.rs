//! kgen-dsl: the ISA table and everything that reads it (encoder, decoder, printer,
//! parser), targets, the kernel builder, register allocation and the checks.

pub mod ext;
pub mod isa;
pub mod target;
pub mod text;

pub use ext::{Ext, ExtSet};
pub use isa::{table, Form, Inst, Row};
