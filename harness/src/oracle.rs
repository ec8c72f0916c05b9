//! The external tools kgen checks itself against (GNU as/objdump 2.40 and 2.44, upstream and
//! T-Head QEMU, the riscv64 cross gcc, Go), found where `scripts/setup-toolchain.sh` puts
//! them. A test that needs a missing tool fails under `CI=true` and says how to install it;
//! elsewhere it prints that it skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The root of the kgen checkout this crate was built from (where `scripts/` lives).
pub fn repo_root() -> PathBuf {
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    here.parent().map(Path::to_path_buf).unwrap_or(here)
}

/// The private toolchain folder.
pub fn toolchain_dir() -> PathBuf {
    std::env::var_os("KGEN_TOOLCHAIN").map(PathBuf::from).unwrap_or_else(|| repo_root().join(".toolchain"))
}

/// True when running under CI (missing oracles are then failures).
pub fn ci() -> bool {
    std::env::var("CI").map(|v| v == "true" || v == "1").unwrap_or(false)
}

/// A binutils version kgen uses as an oracle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binutils {
    V2_40,
    V2_44,
}

impl Binutils {
    pub fn label(self) -> &'static str {
        match self {
            Binutils::V2_40 => "GNU binutils 2.40",
            Binutils::V2_44 => "GNU binutils 2.44",
        }
    }
}

/// A command line for a tool (the 2.44 tools run through their own ld.so).
#[derive(Clone, Debug)]
pub struct Tool {
    pub program: PathBuf,
    pub pre_args: Vec<String>,
}

impl Tool {
    pub fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.pre_args);
        c
    }
    pub fn run(&self, args: &[&str]) -> std::io::Result<Output> {
        self.command().args(args).output()
    }
}

fn binutils_tool(v: Binutils, tool: &str) -> Option<Tool> {
    match v {
        Binutils::V2_40 => {
            let p = PathBuf::from(format!("/usr/bin/riscv64-linux-gnu-{tool}"));
            p.exists().then(|| Tool { program: p, pre_args: vec![] })
        }
        Binutils::V2_44 => {
            let b = toolchain_dir().join("binutils-2.44");
            let ld = b.join("usr/lib64/ld-linux-x86-64.so.2");
            let prog = b.join(format!("usr/bin/riscv64-linux-gnu-{tool}"));
            (ld.exists() && prog.exists()).then(|| Tool {
                program: ld,
                pre_args: vec![
                    "--library-path".into(),
                    b.join("usr/lib/x86_64-linux-gnu").display().to_string(),
                    prog.display().to_string(),
                ],
            })
        }
    }
}

const SETUP: &str = "run scripts/setup-toolchain.sh";

/// Reports a missing oracle: panics under CI, otherwise prints a skip line. Returns `None`
/// so callers can `let Some(x) = require(...) else { return };`.
pub fn missing<T>(what: &str) -> Option<T> {
    if ci() {
        panic!("oracle missing under CI=true: {what} ({SETUP})");
    }
    eprintln!("SKIPPED: {what} is not installed ({SETUP}; under CI=true this fails)");
    None
}

pub fn assembler(v: Binutils) -> Option<Tool> {
    binutils_tool(v, "as").or_else(|| missing(&format!("{} riscv64 assembler", v.label())))
}

pub fn objdump(v: Binutils) -> Option<Tool> {
    binutils_tool(v, "objdump").or_else(|| missing(&format!("{} riscv64 objdump", v.label())))
}

pub fn binutils(v: Binutils, tool: &str) -> Option<Tool> {
    binutils_tool(v, tool).or_else(|| missing(&format!("{} riscv64 {tool}", v.label())))
}

/// Upstream QEMU 10 user-mode (`-cpu thead-c906`, `-cpu rv64,v=true`).
pub fn qemu() -> Option<Tool> {
    let p = Path::new("/usr/bin/qemu-riscv64");
    let ok = p.exists()
        && Command::new(p).args(["-cpu", "help"]).output().map(|o| String::from_utf8_lossy(&o.stdout).contains("thead-c906")).unwrap_or(false);
    if ok {
        Some(Tool { program: p.into(), pre_args: vec![] })
    } else {
        missing("qemu-riscv64 10 with -cpu thead-c906 (bookworm-backports qemu-user)")
    }
}

/// T-Head's QEMU (`-cpu c906fdv` runs XTheadVector).
pub fn xuantie_qemu() -> Option<Tool> {
    let p = toolchain_dir().join("xuantie/qemu/qemu-riscv64");
    if p.exists() {
        Some(Tool { program: p, pre_args: vec![] })
    } else {
        missing("T-Head qemu-riscv64 (PyPI xuantie-qemu)")
    }
}

/// The riscv64 cross C compiler.
pub fn gcc() -> Option<Tool> {
    let p = Path::new("/usr/bin/riscv64-linux-gnu-gcc");
    if p.exists() {
        Some(Tool { program: p.into(), pre_args: vec![] })
    } else {
        missing("riscv64-linux-gnu-gcc")
    }
}

/// Go 1.23.
pub fn go() -> Option<Tool> {
    let p = Path::new("/usr/lib/go-1.23/bin/go");
    if p.exists() {
        Some(Tool { program: p.into(), pre_args: vec![] })
    } else {
        missing("Go 1.23 (bookworm-backports golang-1.23-go)")
    }
}

/// Go 1.27.4 (trixie-backports' golang-1.27-go, unpacked into `.toolchain/go-1.27` by
/// `scripts/setup-toolchain.sh`): x/crypto v0.58.0 needs Go 1.26 or later.
pub fn go_1_27() -> Option<Tool> {
    let p = toolchain_dir().join("go-1.27/usr/lib/go-1.27/bin/go");
    if p.exists() {
        Some(Tool { program: p, pre_args: vec![] })
    } else {
        missing("Go 1.27 (.toolchain/go-1.27, scripts/setup-toolchain.sh)")
    }
}

/// kgen built for riscv64 (`scripts/build-riscv64.sh`, which `scripts/test.sh` runs), to
/// run under qemu-riscv64.
pub fn riscv64_kgen() -> Option<Tool> {
    let p = std::env::var_os("KGEN_RISCV64_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/riscv64/riscv64gc-unknown-linux-gnu/release/kgen"));
    if p.exists() {
        Some(Tool { program: p, pre_args: vec![] })
    } else {
        missing("kgen for riscv64 (scripts/build-riscv64.sh)")
    }
}

/// A program of the build host found on PATH (`make`, `perl`, `patch`), for the tests that
/// build third-party code.
pub fn host_tool(program: &str) -> Option<Tool> {
    let found = std::env::var_os("PATH").and_then(|path| std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file()));
    match found {
        Some(p) => Some(Tool { program: p, pre_args: vec![] }),
        None => missing(&format!("`{program}` on PATH")),
    }
}

/// Debian's OpenSSL source tarball of release `base` (`openssl_<base>.orig.tar.gz`: 3.5.7
/// from trixie, 3.6.3 from sid, 4.0.2 from experimental), which
/// `scripts/setup-toolchain.sh` downloads.
pub fn openssl_tarball(base: &str) -> Option<PathBuf> {
    let dir = if base == "3.5.7" { "apt-trixie-src" } else { "apt-sid-src" };
    let p = toolchain_dir().join(dir).join(format!("dl/openssl_{base}.orig.tar.gz"));
    if p.is_file() {
        Some(p)
    } else {
        missing(&format!("Debian's openssl_{base}.orig.tar.gz (scripts/setup-toolchain.sh)"))
    }
}

/// A scratch directory under the target directory, unique per name.
pub fn scratch(name: &str) -> PathBuf {
    let d = repo_root().join("target").join("kgen-scratch").join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("create scratch dir");
    d
}
