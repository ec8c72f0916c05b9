//! Every file kgen writes: kernel × variant × ABI × format, with the canonical command
//! recorded in each file's header (no paths, no timestamps: generation is deterministic).

use kgen_dsl::Abi;
use kgen_emit::{Compat, EmitOptions};
use kgen_dsl::kernel::{Kernel, Variant};

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Assembly source (`.S`; for Go, the `.s` plus the `.go` declarations).
    S,
    /// OpenSSL perlasm shim (`.pl`).
    Pl,
    /// ELF relocatable object (`.o`).
    O,
    /// C header with the functions' prototypes (`.h`).
    H,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::S => "s",
            Format::Pl => "pl",
            Format::O => "o",
            Format::H => "h",
        }
    }
    pub fn from_name(s: &str) -> Option<Format> {
        match s {
            "s" | "S" => Some(Format::S),
            "pl" => Some(Format::Pl),
            "o" => Some(Format::O),
            "h" => Some(Format::H),
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
        Abi::Psabi => &[Format::S, Format::Pl, Format::O, Format::H],
        Abi::Linux => &[Format::S, Format::O, Format::H],
        Abi::Go => &[Format::S],
    }
}

/// Every output of every kernel of `kernels`.
pub fn all(kernels: &[&'static Kernel]) -> Vec<Output> {
    let mut v = Vec::new();
    for &k in kernels {
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

    /// Go package name of a kernel.
    pub fn go_package(&self) -> String {
        self.kernel.name.replace('-', "")
    }

    /// The files this output consists of: (path relative to an output directory, bytes).
    pub fn render(&self, compat: Compat) -> Result<Vec<(String, Vec<u8>)>, String> {
        let m = self.build()?;
        self.render_module(&m, compat)
    }

    /// Builds the module this output is made from.
    pub fn build(&self) -> Result<kgen_dsl::Module, String> {
        self.variant.build(self.abi).map_err(|e| e.to_string())
    }

    /// As [`Output::render`], from a module already built by [`Output::build`] (outputs of
    /// the same kernel, variant and ABI share one).
    pub fn render_module(&self, m: &kgen_dsl::Module, compat: Compat) -> Result<Vec<(String, Vec<u8>)>, String> {
        self.render_sharing(m, compat, &mut None)
    }

    /// As [`Output::render_module`]; `openssl_s` holds the module's OpenSSL assembly once
    /// one output has made it (the `.pl` shim embeds the `.S` file's text).
    fn render_sharing(&self, m: &kgen_dsl::Module, compat: Compat, openssl_s: &mut Option<String>) -> Result<Vec<(String, Vec<u8>)>, String> {
        let o = EmitOptions { command: self.command(compat), compat };
        let dir = format!("{}/{}/{}", self.kernel.name, self.variant.name, self.abi.name());
        let stem = format!("{}-{}", self.kernel.name, self.variant.name);
        let e = |x: kgen_emit::EmitError| x.to_string();
        Ok(match (self.abi, self.format) {
            (Abi::Psabi, Format::S | Format::Pl) => {
                // Made once with the `.S` file's command in its header.
                let so = EmitOptions { command: Output { format: Format::S, ..*self }.command(compat), compat };
                let s = match openssl_s {
                    Some(s) => s.clone(),
                    None => openssl_s.insert(kgen_emit::openssl_s(m, &so).map_err(e)?).clone(),
                };
                if self.format == Format::S {
                    vec![(format!("{dir}/{stem}.S"), s.into_bytes())]
                } else {
                    // The embedded text names the shim's own command, as if made for it.
                    let s = s.replacen(&so.command, &o.command, 1);
                    vec![(format!("{dir}/{stem}.pl"), kgen_emit::perlasm_shim(&s, &o).into_bytes())]
                }
            }
            (Abi::Linux, Format::S) => vec![(format!("{dir}/{stem}.S"), kgen_emit::linux_s(m, &o).map_err(e)?.into_bytes())],
            (_, Format::O) => vec![(format!("{dir}/{stem}.o"), kgen_emit::elf::elf_object(m).map_err(e)?)],
            (Abi::Psabi | Abi::Linux, Format::H) => vec![(format!("{dir}/{stem}.h"), kgen_emit::c_header(m, &o).map_err(e)?.into_bytes())],
            (Abi::Go, Format::S) => {
                let pkg = self.go_package();
                let (s, g) = kgen_emit::go::go_files(m, &o, &pkg).map_err(e)?;
                let base = format!("{}_{}_riscv64", self.kernel.name, kgen_dsl::entry::symbol_suffix(self.variant.name));
                vec![(format!("{dir}/{base}.s"), s.into_bytes()), (format!("{dir}/{base}.go"), g.into_bytes())]
            }
            (abi, f) => return Err(format!("no {} output for the {} ABI", f.name(), abi.name())),
        })
    }
}

/// Every output of `outs` (one kernel, variant and ABI) from the module `m`, in order, the
/// OpenSSL assembly made once for the `.S` file and the `.pl` shim.
pub fn render_group(m: &kgen_dsl::Module, outs: &[&Output], compat: Compat) -> Result<Vec<Vec<(String, Vec<u8>)>>, String> {
    let mut shared = None;
    outs.iter().map(|o| o.render_sharing(m, compat, &mut shared)).collect()
}
