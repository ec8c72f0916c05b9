//! ABI profiles: which registers a function may use, which it must preserve, which it must
//! never write.

use std::fmt;

/// A calling convention / environment a kernel is built for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Abi {
    /// RISC-V psABI (LP64D): OpenSSL and user space.
    Psabi,
    /// Linux kernel: psABI plus no s0/fp as a general register (frame-pointer unwinding),
    /// no floating point; vector use is bracketed by the C glue.
    Linux,
    /// Go ABI0 (assembly functions): arguments in the caller's frame, no callee-saved
    /// registers, X27 (g), X26 (closure context) and X31 (assembler temporary) reserved.
    Go,
}

impl fmt::Display for Abi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Callee-saved integer registers of the psABI: s0..s11.
pub const PSABI_CALLEE_SAVED: &[u8] = &[8, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27];

impl Abi {
    pub fn name(self) -> &'static str {
        match self {
            Abi::Psabi => "openssl",
            Abi::Linux => "linux",
            Abi::Go => "go",
        }
    }
    pub fn from_name(s: &str) -> Option<Abi> {
        match s {
            "openssl" | "psabi" => Some(Abi::Psabi),
            "linux" => Some(Abi::Linux),
            "go" => Some(Abi::Go),
            _ => None,
        }
    }
    pub const ALL: [Abi; 3] = [Abi::Psabi, Abi::Linux, Abi::Go];

    /// Integer registers the allocator may assign, in order of preference (caller-saved
    /// temporaries first, then argument registers, then callee-saved ones, `ra` last; under
    /// Go a function that writes `ra` gets a frame, whose prologue saves it).
    pub fn allocatable_x(self) -> Vec<u8> {
        let mut v = vec![5, 6, 7, 28, 29, 30, 31, 10, 11, 12, 13, 14, 15, 16, 17, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 8, 1];
        v.retain(|r| !self.reserved().contains(r));
        v
    }

    /// Registers the function must restore if it writes them.
    pub fn callee_saved(self) -> &'static [u8] {
        match self {
            Abi::Psabi | Abi::Linux => PSABI_CALLEE_SAVED,
            Abi::Go => &[],
        }
    }

    /// Registers a function must never write (besides x0, which is harmless). Under Linux
    /// that includes s0, the frame pointer the kernel's unwinder follows.
    pub fn reserved(self) -> &'static [u8] {
        match self {
            Abi::Psabi => &[3, 4],
            Abi::Linux => &[3, 4, 8],
            Abi::Go => &[3, 4, 26, 27, 31],
        }
    }

    /// Whether `ra` must be saved when the allocator uses it (it holds the return address).
    pub fn ra(self) -> u8 {
        1
    }
}
