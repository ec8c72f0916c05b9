//! Every file kgen writes: kernel × variant × ABI × format, with the canonical command
//! recorded in each file's header (no paths, no timestamps: generation is deterministic).

use kgen_dsl::Abi;
use kgen_emit::{Compat, EmitOptions};
use kgen_kernels::{Kernel, Variant};

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Assembly source (`.S`).
    S,
    /// OpenSSL perlasm shim (`.pl`).
    Pl,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::S => "s",
            Format::Pl => "pl",
        }
    }
    pub fn from_name(s: &str) -> Option<Format> {
        match s {
            "s" | "S" => Some(Format::S),
            "pl" => Some(Format::Pl),
            _ => None,
        }
    }
}

/// One output file (or pair, for Go).
#[derive(Clone, Copy)]
pub struct Output {
    pub kernel: &'static Kernel,
    pub variant: &'static Variant,
    pub abi: Abi,
    pub format: Format,
}

/// The formats an ABI has.
pub fn formats(abi: Abi) -> &'static [Format] {
    match abi {
        Abi::Psabi => &[Format::S, Format::Pl],
        Abi::Linux => &[Format::S],
        Abi::Go => &[],
    }
}

/// Every output of every kernel.
pub fn all() -> Vec<Output> {
    let mut v = Vec::new();
    for k in kgen_kernels::kernels() {
        for var in k.variants {
            for &abi in var.abis {
                for &format in formats(abi) {
                    v.push(Output { kernel: k, variant: var, abi, format });
                }
            }
        }
    }
    v
}

impl Output {
    /// The command that regenerates this file (recorded in its header).
    pub fn command(&self, compat: Compat) -> String {
        let mut c = format!("kgen emit {} --variant {} --abi {} --format {}", self.kernel.name, self.variant.name, self.abi.name(), self.format.name());
        if compat == Compat::Binutils240 {
            c.push_str(" --asm-compat binutils-2.40");
        }
        c
    }

    /// Path of the file relative to an output directory.
    pub fn path(&self) -> String {
        let ext = match (self.abi, self.format) {
            (_, Format::Pl) => "pl",
            (_, Format::S) => "S",
        };
        format!("{}/{}/{}/{}-{}.{ext}", self.kernel.name, self.variant.name, self.abi.name(), self.kernel.name, self.variant.name)
    }

    /// Builds the kernel and renders the file.
    pub fn render(&self, compat: Compat) -> Result<Vec<u8>, String> {
        let m = self.variant.build(self.abi).map_err(|e| e.to_string())?;
        let o = EmitOptions { command: self.command(compat), compat };
        let text = match (self.abi, self.format) {
            (Abi::Psabi, Format::S) => kgen_emit::openssl_s(&m, &o),
            (Abi::Psabi, Format::Pl) => kgen_emit::openssl_s(&m, &o).map(|s| kgen_emit::perlasm_shim(&s, &o)),
            (Abi::Linux, Format::S) => kgen_emit::linux_s(&m, &o),
            (abi, f) => return Err(format!("no {} output for the {} ABI", f.name(), abi.name())),
        };
        text.map(String::into_bytes).map_err(|e| e.to_string())
    }
}
