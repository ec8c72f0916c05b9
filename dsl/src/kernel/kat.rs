//! Known-answer plans: the buffers (initial bytes, placement), the calls (entry point,
//! arguments, expected result) and the byte ranges compared with known answers, for one
//! variant of a kernel in the OpenSSL ABI. One plan runs three ways: in kgen-sim, natively
//! from a JIT buffer on a riscv64 host, and through a C loader under QEMU (the tests);
//! each yields an [`Outcome`] that [`Plan::verdicts`] compares.

use crate::entry::Entry;

/// A buffer the calls of a plan use.
#[derive(Clone, Debug)]
pub struct Buffer {
    pub name: &'static str,
    pub bytes: Vec<u8>,
    /// Placement: the buffer starts this many bytes past a 64-byte boundary.
    pub offset: usize,
    /// The alignment the entry points it is passed to guarantee (placements must keep it).
    pub align: u32,
}

/// An argument of a call.
#[derive(Clone, Copy, Debug)]
pub enum Arg {
    /// The address of byte `.1` of buffer `.0`.
    Buf(usize, usize),
    Int(u64),
}

/// A call through the C ABI.
#[derive(Clone, Debug)]
pub struct Call {
    pub func: String,
    pub args: Vec<Arg>,
    /// The a0 the call must return (for functions with a result).
    pub ret: Option<u64>,
}

/// A known answer: bytes `off..off + want.len()` of buffer `buf` after the last call.
#[derive(Clone, Debug)]
pub struct Expect {
    pub name: String,
    pub buf: usize,
    pub off: usize,
    pub want: Vec<u8>,
}

/// Buffers, calls (in order) and the known answers of one kernel variant.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub buffers: Vec<Buffer>,
    pub calls: Vec<Call>,
    pub expects: Vec<Expect>,
    /// Calls that do not match their entry points' declarations.
    pub errors: Vec<String>,
}

/// What running a plan gave: a0 of every call, the final bytes of every buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub rets: Vec<u64>,
    pub buffers: Vec<Vec<u8>>,
}

/// One comparison with a known answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub name: String,
    /// Hex bytes, or a decimal result.
    pub got: String,
    pub want: String,
}

impl Verdict {
    pub fn ok(&self) -> bool {
        self.got == self.want
    }
}

/// Lowercase hex.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Bytes of a hex constant (panics on a malformed constant: plans spell them literally).
pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2).map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex constant")).collect()
}

impl Plan {
    /// A buffer of `bytes`, placed `offset` bytes past a 64-byte boundary; its index.
    pub fn buf(&mut self, name: &'static str, bytes: Vec<u8>, offset: usize) -> usize {
        self.buffers.push(Buffer { name, bytes, offset, align: 1 });
        self.buffers.len() - 1
    }

    /// A call of entry point `e` of `variant`: the arguments must match its parameters (a
    /// buffer for each pointer, an integer for each value), else the plan records why not.
    pub fn call(&mut self, e: &Entry, variant: &str, args: Vec<Arg>, ret: Option<u64>) {
        let func = e.symbol(variant);
        if args.len() != e.params.len() {
            self.errors.push(format!("{func}: {} arguments for {} parameters", args.len(), e.params.len()));
        }
        for (a, p) in args.iter().zip(e.params) {
            if let Arg::Buf(i, _) = a {
                // Placements of the buffer may move it by multiples of the parameter's
                // alignment only.
                if let Some(b) = self.buffers.get_mut(*i) {
                    b.align = b.align.max(p.ty.align());
                }
            }
            let ok = match (a, p.ty) {
                (Arg::Buf(..), t) => t.is_ptr(),
                // A null pointer (poly1305_init's optional table) is an integer 0.
                (Arg::Int(v), t) => !t.is_ptr() || *v == 0,
            };
            if !ok {
                self.errors.push(format!("{func}: argument `{}` is a {:?} but the plan passes {a:?}", p.name, p.ty));
            }
        }
        if ret.is_some() != e.ret.is_value() {
            self.errors.push(format!("{func}: the plan's expected result does not match its {} result", e.ret.c()));
        }
        self.calls.push(Call { func, args, ret });
    }

    /// Bytes `off..` of buffer `buf` must be `want` after the last call.
    pub fn expect(&mut self, name: String, buf: usize, off: usize, want: Vec<u8>) {
        self.expects.push(Expect { name, buf, off, want });
    }

    /// Compares `o` with the expected results and known answers.
    pub fn verdicts(&self, o: &Outcome) -> Vec<Verdict> {
        let mut v = Vec::new();
        for (k, (c, r)) in self.calls.iter().zip(&o.rets).enumerate() {
            if let Some(want) = c.ret {
                // C `int` results come back sign-extended in a0.
                let name = format!("call {} {}: result", k + 1, c.func);
                v.push(Verdict { name, got: (*r as i64).to_string(), want: (want as i64).to_string() });
            }
        }
        for e in &self.expects {
            let got = o.buffers.get(e.buf).and_then(|b| b.get(e.off..e.off + e.want.len())).map(hex).unwrap_or_default();
            v.push(Verdict { name: e.name.clone(), got, want: hex(&e.want) });
        }
        v
    }
}
