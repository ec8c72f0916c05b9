//! Typed entry points: a kernel declares each function's interface once — its symbol per
//! variant, its parameters (pointers with element type, access, alignment and secrecy;
//! integers; sizes) and its result — and everything that needs the interface derives it
//! from here: the builder's argument registers, the checks (what is a pointer, how it is
//! aligned, what is secret), the prototypes printed in every emitted file, the C headers,
//! the Go declarations, the benchmark drivers, the JIT plans and the tests' look-ups. No
//! symbol name or prototype is spelled anywhere else.

use crate::abi::Abi;
use std::fmt::Write as _;

/// What a pointer points to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    U8,
    U32,
    U64,
    /// OpenSSL's `u128` (a pair of `u64`).
    U128,
    Void,
    /// A named C structure (`AES_KEY`); `align` is its alignment, `def` a C definition
    /// compatible with the caller's (for headers used outside the caller's tree).
    Named { name: &'static str, align: u32, def: &'static str },
    /// A type of the Go package the function is written for (x/crypto's `macState`): for
    /// Go-only entry points; opaque (`void`) to C.
    Go { name: &'static str, align: u32 },
}

impl Elem {
    /// The alignment the element type itself guarantees.
    pub fn align(self) -> u32 {
        match self {
            Elem::U8 | Elem::Void => 1,
            Elem::U32 => 4,
            Elem::U64 | Elem::U128 => 8,
            Elem::Named { align, .. } | Elem::Go { align, .. } => align,
        }
    }
    fn c(self, abi: Abi) -> &'static str {
        match (self, abi) {
            (Elem::U8, Abi::Linux) => "u8",
            (Elem::U8, _) => "unsigned char",
            (Elem::U32, Abi::Linux) => "u32",
            (Elem::U32, _) => "unsigned int",
            (Elem::U64, _) => "u64",
            (Elem::U128, _) => "u128",
            (Elem::Void | Elem::Go { .. }, _) => "void",
            (Elem::Named { name, .. }, _) => name,
        }
    }
}

/// How the function uses the memory a pointer gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    In,
    Out,
    InOut,
}

/// A parameter's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// A pointer; `align` is the alignment the caller guarantees (at least the element's).
    Ptr { elem: Elem, access: Access, align: u32 },
    /// `unsigned int` / `u32` (arrives sign-extended, as the psABI passes 32-bit values).
    U32,
    /// `int`.
    I32,
    /// `size_t`.
    Size,
    /// A 64-bit unsigned value: `uint64_t` (Linux: `u64`; Go: `uint64`).
    U64,
    /// A table of function pointers the function fills (`void *func[]`).
    FuncTable,
}

impl Ty {
    pub fn is_ptr(self) -> bool {
        matches!(self, Ty::Ptr { .. } | Ty::FuncTable)
    }
    /// The alignment a pointer argument is guaranteed (1 for non-pointers).
    pub fn align(self) -> u32 {
        match self {
            Ty::Ptr { elem, align, .. } => align.max(elem.align()),
            Ty::FuncTable => 8,
            _ => 1,
        }
    }
    /// The C spelling under `abi` (Linux uses the kernel's `u8`/`u32`).
    pub fn c(self, abi: Abi) -> String {
        match self {
            Ty::Ptr { elem, access, .. } => {
                let c = if access == Access::In { "const " } else { "" };
                format!("{c}{} *", elem.c(abi))
            }
            Ty::U32 if abi == Abi::Linux => "u32".into(),
            Ty::U32 => "unsigned int".into(),
            Ty::I32 => "int".into(),
            Ty::Size => "size_t".into(),
            Ty::U64 if abi == Abi::Linux => "u64".into(),
            Ty::U64 => "uint64_t".into(),
            Ty::FuncTable => "void **".into(),
        }
    }
}

/// One parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: &'static str,
    pub ty: Ty,
    /// The memory it points to (or, for a value, the value) is secret.
    pub secret: bool,
    /// Byte ranges [lo, hi) of secret memory that are public nonetheless (a structure's
    /// length field, a counter next to a key).
    pub public: &'static [(i64, i64)],
    /// For a pointer: the caller passes an array of this many elements, which C spells
    /// `T name[N]` (as OpenSSL declares `ivec[16]`); 0: a plain pointer.
    pub array: u32,
}

impl Param {
    /// A pointer parameter.
    pub const fn ptr(name: &'static str, elem: Elem, access: Access, secret: bool) -> Param {
        Param { name, ty: Ty::Ptr { elem, access, align: 1 }, secret, public: &[], array: 0 }
    }
    /// A value parameter.
    pub const fn val(name: &'static str, ty: Ty, secret: bool) -> Param {
        Param { name, ty, secret, public: &[], array: 0 }
    }
    /// The caller guarantees `align`-byte alignment (for a pointer).
    pub const fn aligned(mut self, align: u32) -> Param {
        if let Ty::Ptr { elem, access, .. } = self.ty {
            self.ty = Ty::Ptr { elem, access, align };
        }
        self
    }
    /// The pointer is to an array of `n` elements (C: `T name[n]`).
    pub const fn array(mut self, n: u32) -> Param {
        self.array = n;
        self
    }
    /// These bytes of the secret memory are public.
    pub const fn public(mut self, ranges: &'static [(i64, i64)]) -> Param {
        self.public = ranges;
        self
    }
}

/// A function's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ret {
    Void,
    Int,
    Size,
    /// A 64-bit unsigned value in a0: `uint64_t` (Linux: `u64`; Go: `uint64`).
    U64,
}

impl Ret {
    /// The C spelling in the OpenSSL ABI.
    pub fn c(self) -> &'static str {
        self.c_in(Abi::Psabi)
    }
    /// The C spelling under `abi`.
    pub fn c_in(self, abi: Abi) -> &'static str {
        match self {
            Ret::Void => "void",
            Ret::Int => "int",
            Ret::Size => "size_t",
            Ret::U64 if abi == Abi::Linux => "u64",
            Ret::U64 => "uint64_t",
        }
    }
    /// Whether a0 carries a value at return.
    pub fn is_value(self) -> bool {
        self != Ret::Void
    }
}

/// One entry point of a kernel.
#[derive(Debug, PartialEq, Eq)]
pub struct Entry {
    pub kernel: &'static str,
    /// The symbol is `prefix` + the variant (`-` as `_`) + `suffix`: `AES_encrypt_` +
    /// `c906`, `ghash_` + `c906` + `_init`.
    pub prefix: &'static str,
    pub suffix: &'static str,
    /// The name callers use whatever the variant (OpenSSL's `AES_encrypt`): exported as
    /// an alias in the OpenSSL ABI.
    pub alias: Option<&'static str>,
    /// The ABIs this entry point has (a Linux form with other parameters is another entry).
    pub abis: &'static [Abi],
    pub params: &'static [Param],
    pub ret: Ret,
    pub summary: &'static str,
}

/// The variant name in symbols: `c906-novector` → `c906_novector`.
pub fn symbol_suffix(variant: &str) -> String {
    variant.replace('-', "_")
}

impl Entry {
    /// The entry's symbol for `variant`.
    pub fn symbol(&self, variant: &str) -> String {
        format!("{}{}{}", self.prefix, symbol_suffix(variant), self.suffix)
    }

    /// The alias exported under `abi`, if any.
    pub fn alias_in(&self, abi: Abi) -> Option<&'static str> {
        self.alias.filter(|_| abi == Abi::Psabi)
    }

    /// The C prototype of the variant's function under `abi` (`void AES_encrypt_c906(const
    /// unsigned char *in, ...)`), or of the alias when `name` is given.
    pub fn prototype_named(&self, name: &str, abi: Abi) -> String {
        let mut s = format!("{} {name}(", self.ret.c_in(abi));
        if self.params.is_empty() {
            s.push_str("void");
        }
        for (k, p) in self.params.iter().enumerate() {
            if k > 0 {
                s.push_str(", ");
            }
            let c = p.ty.c(abi);
            let _ = if p.array > 0 && c.ends_with(" *") {
                write!(s, "{}{}[{}]", &c[..c.len() - 1], p.name, p.array)
            } else if c.ends_with('*') {
                write!(s, "{c}{}", p.name)
            } else {
                write!(s, "{c} {}", p.name)
            };
        }
        s.push(')');
        s
    }

    pub fn prototype(&self, variant: &str, abi: Abi) -> String {
        self.prototype_named(&self.symbol(variant), abi)
    }

    /// In a set of symbol names (an assembled file's), the one implementing this entry: the
    /// alias, or else the first (in name order) of the form prefix…suffix.
    pub fn find_in<'a>(&self, names: impl IntoIterator<Item = &'a String>) -> Option<String> {
        let mut matching: Vec<&String> = Vec::new();
        for n in names {
            if Some(n.as_str()) == self.alias {
                return Some(n.clone());
            }
            if n.len() > self.prefix.len() + self.suffix.len() && n.starts_with(self.prefix) && n.ends_with(self.suffix) {
                matching.push(n);
            }
        }
        matching.sort();
        matching.first().map(|s| s.to_string())
    }

    /// The variant part of a symbol of this entry (`rv64i_zbc` of `gcm_ghash_rv64i_zbc`).
    pub fn variant_part<'a>(&self, symbol: &'a str) -> Option<&'a str> {
        symbol.strip_prefix(self.prefix)?.strip_suffix(self.suffix).filter(|p| !p.is_empty())
    }

    /// The symbol of this entry for a variant part taken from another entry's symbol (a
    /// file's `gcm_init_X` beside its `gcm_ghash_X`).
    pub fn symbol_for_part(&self, part: &str) -> String {
        format!("{}{part}{}", self.prefix, self.suffix)
    }

    /// The Go name of the variant's function (see [`go_name`]).
    pub fn go_name(&self, variant: &str) -> Option<String> {
        go_name(&self.symbol(variant))
    }
}

/// Go spelling of a C symbol: split at `_`; the first part lowercased if it is all capitals
/// (an acronym) or with its first letter lowercased otherwise, later parts with their first
/// letter uppercased: `AES_encrypt_c906` → `aesEncryptC906`. None if the result is not a Go
/// identifier.
pub fn go_name(c: &str) -> Option<String> {
    let mut out = String::new();
    for part in c.split('_').filter(|p| !p.is_empty()) {
        if out.is_empty() {
            if part.chars().all(|ch| !ch.is_ascii_lowercase()) {
                out.push_str(&part.to_ascii_lowercase());
            } else {
                let mut cs = part.chars();
                out.extend(cs.next().map(|ch| ch.to_ascii_lowercase()));
                out.extend(cs);
            }
        } else {
            let mut cs = part.chars();
            out.extend(cs.next().map(|ch| ch.to_ascii_uppercase()));
            out.extend(cs);
        }
    }
    let mut cs = out.chars();
    let ok = matches!(cs.next(), Some(c) if c.is_ascii_alphabetic() || c == '_') && cs.all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then_some(out)
}

impl Ty {
    /// The element type a pointer parameter points to.
    pub fn elem(self) -> Option<Elem> {
        match self {
            Ty::Ptr { elem, .. } => Some(elem),
            _ => None,
        }
    }
}
