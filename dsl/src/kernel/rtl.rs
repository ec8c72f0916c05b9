//! RTL plans: what the cycle-accurate C906 RTL runs for `kgen bench --rtl`. Buffers
//! (64-byte aligned, filled with fixed bytes) and a list of calls, each made once to warm
//! caches and predictors and then `reps` times, as the RTL kit's harness does; the rows say
//! which call's cycles make which `kgen bench` figure. The RTL bridge turns a plan into the
//! harness's C table and runs the same calls on kgen's cost model for comparison.

use crate::entry::Entry;
use crate::Abi;

/// An argument of a planned call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    /// Buffer k of the plan.
    Buf(usize),
    Int(u64),
}

/// One harness entry: `func(args)` called once, then `reps` times.
#[derive(Clone, Debug)]
pub struct Call {
    /// The symbol called.
    pub symbol: String,
    pub args: Vec<Arg>,
    pub reps: u64,
}

/// What a row of `kgen bench` is made of: `calls` times the cycles of planned call `call`.
#[derive(Clone, Debug)]
pub struct RowPlan {
    pub what: String,
    pub bytes: usize,
    pub call: usize,
    pub calls: u64,
}

/// Buffers, calls in order, and the rows they give.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub label: String,
    pub bufs: Vec<Vec<u8>>,
    pub calls: Vec<Call>,
    pub rows: Vec<RowPlan>,
}

impl Plan {
    pub fn new(label: String) -> Plan {
        Plan { label, ..Default::default() }
    }
    /// A buffer holding `data`.
    pub fn buf(&mut self, data: Vec<u8>) -> Arg {
        self.bufs.push(data);
        Arg::Buf(self.bufs.len() - 1)
    }
    /// A call of entry point `e` of `variant` (one argument per parameter, else an error
    /// naming the symbol); its index.
    pub fn call(&mut self, e: &Entry, variant: &str, args: Vec<Arg>) -> Result<usize, String> {
        if args.len() != e.params.len() {
            return Err(format!("{}: the RTL plan passes {} arguments for {} parameters", e.symbol(variant), args.len(), e.params.len()));
        }
        self.calls.push(Call { symbol: e.symbol(variant), args, reps: 1 });
        Ok(self.calls.len() - 1)
    }
    /// A row: `calls` times the cycles of call `call`.
    pub fn row(&mut self, what: String, bytes: usize, call: usize, calls: u64) {
        self.rows.push(RowPlan { what, bytes, call, calls });
    }
}

/// The name `kgen bench` gives an entry's row (the alias a module exports, else the symbol).
pub fn bench_name(e: &Entry, variant: &str) -> String {
    e.alias_in(Abi::Psabi).map(str::to_string).unwrap_or_else(|| e.symbol(variant))
}
