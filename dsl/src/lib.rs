//! kgen-dsl: the ISA table and everything that reads it (encoder, decoder, printer,
//! parser), targets, the kernel builder, register allocation and the checks.

pub mod abi;
pub mod alloc;
pub mod analysis;
pub mod asmfile;
pub mod check;
pub mod entry;
pub mod ext;
pub mod func;
pub mod ir;
pub mod kernel;
pub mod lower;
pub mod module;
pub mod object;
pub mod report;
pub mod sched;
pub mod timing;
mod pseudo;
pub mod isa;
pub mod target;
pub mod text;

pub use ext::{Ext, ExtSet};
pub use abi::Abi;
pub use func::{BuildError, Func, Label, Opnd, Reg, Slot};
pub use isa::{table, Form, Inst, Row};
pub use module::Module;
pub use pseudo::{li_steps, PSEUDOS};
