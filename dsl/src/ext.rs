//! ISA extensions and sets of them.
//!
//! Every extension is named once, here; rows of the ISA table require an [`ExtSet`] (any one
//! of its members suffices), targets allow an [`ExtSet`].

use std::fmt;

macro_rules! extensions {
    ($($(#[$m:meta])* $v:ident = $s:literal,)*) => {
        /// One ISA extension.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Ext { $($(#[$m])* $v,)* }
        impl Ext {
            /// Every extension, in declaration order.
            pub const ALL: &'static [Ext] = &[$(Ext::$v,)*];
            /// The lower-case name used in `-march` strings and `.option arch`.
            pub const fn name(self) -> &'static str { match self { $(Ext::$v => $s,)* } }
        }
    };
}

extensions! {
    /// RV64I base.
    I = "i",
    M = "m",
    A = "a",
    F = "f",
    D = "d",
    C = "c",
    Zicsr = "zicsr",
    Zifencei = "zifencei",
    Zba = "zba",
    Zbb = "zbb",
    Zbc = "zbc",
    Zbs = "zbs",
    Zbkb = "zbkb",
    Zbkc = "zbkc",
    Zicond = "zicond",
    XTheadBa = "xtheadba",
    XTheadBb = "xtheadbb",
    XTheadBs = "xtheadbs",
    XTheadCondMov = "xtheadcondmov",
    XTheadMac = "xtheadmac",
    XTheadMemIdx = "xtheadmemidx",
    XTheadMemPair = "xtheadmempair",
    XTheadSync = "xtheadsync",
    /// RVV 0.7.1 as implemented by the C906/C910 (`th.v*` mnemonics).
    XTheadVector = "xtheadvector",
    /// RVV 1.0.
    V = "v",
    Zvkb = "zvkb",
    Zvbb = "zvbb",
    Zvbc = "zvbc",
    Zvkg = "zvkg",
}

impl Ext {
    /// Parses an extension name as written in `-march` (case-insensitive).
    pub fn from_name(s: &str) -> Option<Ext> {
        let s = s.to_ascii_lowercase();
        Ext::ALL.iter().copied().find(|e| e.name() == s)
    }
    const fn bit(self) -> u64 {
        1u64 << (self as u8)
    }
}

impl fmt::Display for Ext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of extensions (a bit set over [`Ext`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ExtSet(u64);

impl ExtSet {
    pub const EMPTY: ExtSet = ExtSet(0);
    pub const fn of(exts: &[Ext]) -> ExtSet {
        let mut b = 0;
        let mut i = 0;
        while i < exts.len() {
            b |= exts[i].bit();
            i += 1;
        }
        ExtSet(b)
    }
    pub const fn one(e: Ext) -> ExtSet {
        ExtSet(e.bit())
    }
    pub const fn contains(self, e: Ext) -> bool {
        self.0 & e.bit() != 0
    }
    pub const fn intersects(self, o: ExtSet) -> bool {
        self.0 & o.0 != 0
    }
    pub const fn union(self, o: ExtSet) -> ExtSet {
        ExtSet(self.0 | o.0)
    }
    pub const fn without(self, e: Ext) -> ExtSet {
        ExtSet(self.0 & !e.bit())
    }
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn iter(self) -> impl Iterator<Item = Ext> {
        Ext::ALL.iter().copied().filter(move |e| self.contains(*e))
    }
}

impl fmt::Display for ExtSet {
    /// Members joined with `|` (a row's requirement reads "any of these").
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Ext::name).collect();
        f.write_str(&names.join("|"))
    }
}

impl Ext {
    /// Whether GNU binutils 2.40 (Debian bookworm) assembles this extension. Everything else
    /// needs 2.44 (XTheadVector, the vector-crypto extensions, Zicond) or `.word`.
    pub const fn known_to_binutils_2_40(self) -> bool {
        !matches!(self, Ext::XTheadVector | Ext::Zvkb | Ext::Zvbb | Ext::Zvbc | Ext::Zvkg | Ext::Zicond)
    }
}
