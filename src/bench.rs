//! `kgen bench`: instructions and modeled C906 cycles for every kernel variant (or for an
//! assembly file that implements a kernel's OpenSSL ABI, through the same driver).

use kgen_dsl::object::Object;
use kgen_dsl::target::Target;
use kgen_sim::{CallError, Env};
use std::collections::HashMap;
use std::fmt::Write as _;

/// Message sizes of the tables (bytes).
pub const SIZES: [usize; 7] = [16, 64, 256, 1024, 1400, 4096, 16384];

/// The largest message `kgen bench` runs (the simulator maps each buffer in memory).
pub const MAX_SIZE: usize = 64 << 20;

/// One measurement.
#[derive(Clone, Debug)]
pub struct Row {
    pub kernel: String,
    pub variant: String,
    /// What was measured (function or operation).
    pub what: String,
    pub bytes: usize,
    pub instructions: u64,
    pub cycles: u64,
}

impl Row {
    pub fn cpb(&self) -> f64 {
        self.cycles as f64 / self.bytes.max(1) as f64
    }
}

/// Where a benchmark driver calls the functions it measures: kgen-sim with the cost model
/// ([`Env`]), or the JIT buffer on a riscv64 host with its cycle counter
/// ([`crate::jit_bench`]).
pub trait Harness {
    /// A buffer holding `data` at `offset` bytes past a 64-byte boundary; its address.
    fn buffer(&mut self, data: &[u8], offset: usize, writable: bool) -> u64;
    /// The function implementing entry point `e`: (symbol, address).
    fn entry(&self, e: &kgen_dsl::entry::Entry) -> Result<(String, u64), String>;
    /// The address of symbol `name`.
    fn lookup(&self, name: &str) -> Result<u64, String>;
    /// Calls `f`: (instructions, cycles) of the call (instructions 0 where not counted).
    fn call(&mut self, f: u64, args: &[u64]) -> Result<(u64, u64), String>;
}

impl Harness for Env {
    fn buffer(&mut self, data: &[u8], offset: usize, writable: bool) -> u64 {
        Env::buffer(self, data, offset, writable)
    }
    fn entry(&self, e: &kgen_dsl::entry::Entry) -> Result<(String, u64), String> {
        Env::entry(self, e)
    }
    fn lookup(&self, name: &str) -> Result<u64, String> {
        Env::lookup(self, name)
    }
    fn call(&mut self, f: u64, args: &[u64]) -> Result<(u64, u64), String> {
        Env::call(self, f, args).map(|o| (o.instructions, o.cycles)).map_err(|e: CallError| e.to_string())
    }
}

/// Runs `f` twice (the first call warms the model's predictor and the buffers, or the
/// caches) and keeps the second call's counts.
fn measured<H: Harness>(env: &mut H, f: impl Fn(&mut H) -> Result<(u64, u64), String>) -> Result<(u64, u64), String> {
    f(env)?;
    f(env)
}

/// The benchmark driver of a kernel, on a harness where its OpenSSL-ABI symbols are linked
/// (a kgen module's, or an assembled file's: functions are found by their entry points'
/// names, see [`kgen_dsl::entry::Entry::find_in`]).
pub fn drive<H: Harness>(kernel: &str, variant: &str, env: &mut H, sizes: &[usize]) -> Result<Vec<Row>, String> {
    use kgen_kernels::{aes, aes_gcm, chacha, chacha20_poly1305, ghash, poly1305, sha2};
    let mut rows = Vec::new();
    let row = |what: &str, bytes: usize, (instructions, cycles): (u64, u64)| Row {
        kernel: kernel.into(),
        variant: variant.into(),
        what: what.into(),
        bytes,
        instructions,
        cycles,
    };
    match kernel {
        "aes" => {
            let key = env.buffer(&[0x2b; 16], 0, false);
            let ks = env.buffer(&[0u8; 244], 0, true);
            let dks = env.buffer(&[0u8; 244], 0, true);
            let (set_name, set_e) = env.entry(&aes::SET_ENCRYPT_KEY)?;
            let (_, set_d) = env.entry(&aes::SET_DECRYPT_KEY)?;
            env.call(set_e, &[key, 128, ks])?;
            env.call(set_d, &[key, 128, dks])?;
            for (entry, ks) in [(&aes::ENCRYPT, ks), (&aes::DECRYPT, dks)] {
                let (name, f) = env.entry(entry)?;
                for &n in sizes {
                    let inp = env.buffer(&vec![0x5a; n.max(16)], 0, true);
                    let m = measured(env, |env| {
                        let (mut i, mut c) = (0, 0);
                        for b in 0..n.div_ceil(16) {
                            let p = inp + 16 * b as u64;
                            let (oi, oc) = env.call(f, &[p, p, ks])?;
                            i += oi;
                            c += oc;
                        }
                        Ok((i, c))
                    })
                    ?;
                    rows.push(row(&name, n, m));
                }
            }
            let m = measured(env, |env| env.call(set_e, &[key, 128, ks]))?;
            rows.push(row(&format!("{set_name}(128)"), 16, m));
            // Counter mode over the size in whole blocks (in place), AES-128, from a counter
            // whose low byte starts at 0x02 (as after GCM's J0): one cache refresh per 256
            // blocks.
            if let Ok((name, ctr)) = env.entry(&aes::CTR32) {
                let iv = env.buffer(&[0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce, 0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88, 0, 0, 0, 2], 0, false);
                for &n in sizes {
                    let n = n.max(16).next_multiple_of(16);
                    let buf = env.buffer(&vec![0x5a; n], 0, true);
                    let m = measured(env, |env| env.call(ctr, &[buf, buf, (n / 16) as u64, ks, iv]))?;
                    rows.push(row(&name, n, m));
                }
            }
        }
        "aes-gcm" => {
            // aes_gcm_encrypt/decrypt over the size rounded up to whole 128-byte groups (what
            // the functions process), in place, AES-128, with the key schedule and GHASH table
            // of `aes c906` and `ghash c906`; sizes below a group are not measured. Every call
            // starts from the same counter (the functions advance ivec, and where the counter's
            // low byte wraps decides when the AES cache is refreshed), so a row does not depend
            // on the sizes measured before it.
            let k = crate::gcm::GcmSetup::new()?.key(&[0x2b; 16])?;
            let ks = env.buffer(&k.schedule, 0, false);
            let ctx = env.buffer(&k.context(&[0u8; 16]), 0, true);
            const IV: [u8; 16] = [0xca, 0xfe, 0xba, 0xbe, 0xfa, 0xce, 0xdb, 0xad, 0xde, 0xca, 0xf8, 0x88, 0, 0, 0, 2];
            for entry in [&aes_gcm::ENCRYPT, &aes_gcm::DECRYPT] {
                let (name, f) = env.entry(entry)?;
                let mut done: Vec<usize> = Vec::new();
                for &n in sizes {
                    let n = n.max(128).next_multiple_of(128);
                    if done.contains(&n) {
                        continue;
                    }
                    done.push(n);
                    let buf = env.buffer(&vec![0x5a; n], 0, true);
                    let m = measured(env, |env| {
                        let iv = env.buffer(&IV, 0, true);
                        env.call(f, &[buf, buf, n as u64, ks, iv, ctx])
                    })?;
                    rows.push(row(&name, n, m));
                }
            }
        }
        "chacha20" => {
            // ChaCha20_ctr32 over the size (OpenSSL ABI: out, in, len, key, counter).
            let key = env.buffer(&[0x42; 32], 0, false);
            let ctr = env.buffer(&[1, 0, 0, 0, 9, 9, 9, 9, 7, 7, 7, 7, 5, 5, 5, 5], 0, false);
            let (name, f) = env.entry(&chacha::CTR32)?;
            for &n in sizes {
                let buf = env.buffer(&vec![0x5a; n], 0, true);
                let m = measured(env, |env| env.call(f, &[buf, buf, n as u64, key, ctr]))?;
                rows.push(row(&name, n, m));
            }
        }
        "chacha20-poly1305" => {
            // seal and open over the size rounded up to whole 64-byte blocks (what they
            // process), in place, counter 1; the Poly1305 context as poly1305 32-c906's init
            // lays it out for a fixed key (the kernel is constant time: the values do not
            // change the cost).
            let key = env.buffer(&[0x42; 32], 0, false);
            let ctr = env.buffer(&[1, 0, 0, 0, 9, 9, 9, 9, 7, 7, 7, 7, 5, 5, 5, 5], 0, false);
            let ctx = env.buffer(&poly1305_context(&[0x3c; 16]), 0, true);
            for entry in [&chacha20_poly1305::SEAL, &chacha20_poly1305::OPEN] {
                let (name, f) = env.entry(entry)?;
                for &n in sizes {
                    let n = n.max(64).next_multiple_of(64);
                    if rows.iter().any(|r: &Row| r.what == name && r.bytes == n) {
                        continue; // a smaller size rounded up to the same blocks
                    }
                    let buf = env.buffer(&vec![0x5a; n], 0, true);
                    let m = measured(env, |env| env.call(f, &[buf, buf, n as u64, key, ctr, ctx]))?;
                    rows.push(row(&name, n, m));
                }
            }
        }
        "chacha20-poly1305-macstate" => {
            // The Go forms on x/crypto's macState (h = 0, r clamped from a 0x3c key): seal and
            // open as for "chacha20-poly1305".
            let key = env.buffer(&[0x42; 32], 0, false);
            let ctr = env.buffer(&[1, 0, 0, 0, 9, 9, 9, 9, 7, 7, 7, 7, 5, 5, 5, 5], 0, false);
            let st = env.buffer(&macstate(0x3c3c_3c3c_3c3c_3c3c), 0, true);
            for entry in [&chacha20_poly1305::MACSTATE_SEAL, &chacha20_poly1305::MACSTATE_OPEN] {
                let (name, f) = env.entry(entry)?;
                for &n in sizes {
                    let n = n.max(64).next_multiple_of(64);
                    if rows.iter().any(|r: &Row| r.what == name && r.bytes == n) {
                        continue;
                    }
                    let buf = env.buffer(&vec![0x5a; n], 0, true);
                    let m = measured(env, |env| env.call(f, &[buf, buf, n as u64, key, ctr, st]))?;
                    rows.push(row(&name, n, m));
                }
            }
        }
        "ghash" => {
            // gcm_init, then gcm_ghash over the size (whole blocks); init is the one with the
            // same variant part as ghash's (a file may hold several).
            let (ghash_name, ghash) = env.entry(&ghash::GHASH)?;
            let part = ghash::GHASH.variant_part(&ghash_name).unwrap_or_default().to_string();
            let init = env.lookup(&ghash::INIT.symbol_for_part(&part))?;
            let table = env.buffer(&[0u8; 256], 0, true);
            let h = env.buffer(&[0x66, 0xe9, 0x4b, 0xd4, 0xef, 0x8a, 0x2c, 0x3b, 0x88, 0x4c, 0xfa, 0x59, 0xca, 0x34, 0x2b, 0x2e], 0, false);
            env.call(init, &[table, h])?;
            let xi = env.buffer(&[0u8; 16], 0, true);
            for &n in sizes {
                let n = n.max(16).next_multiple_of(16);
                let inp = env.buffer(&vec![0x5a; n], 0, false);
                let m = measured(env, |env| env.call(ghash, &[xi, table, inp, n as u64]))?;
                rows.push(row(&ghash_name, n, m));
            }
        }
        "poly1305" => {
            // One init, then poly1305_blocks over the size (rounded up to whole 16-byte
            // blocks, which is what blocks hashes) with padbit 1, from a 64-byte aligned buffer.
            let key = env.buffer(&[0x3c; 32], 0, false);
            let ctx = env.buffer(&[0u8; 192], 0, true);
            let (_, init) = env.entry(&poly1305::INIT)?;
            let (name, blocks) = env.entry(&poly1305::BLOCKS)?;
            env.call(init, &[ctx, key, 0])?;
            for &n in sizes {
                let n = n.max(16).next_multiple_of(16);
                let inp = env.buffer(&vec![0x5a; n], 0, false);
                let m = measured(env, |env| env.call(blocks, &[ctx, inp, n as u64, 1]))?;
                rows.push(row(&name, n, m));
            }
        }
        "poly1305-macstate" => {
            // x/crypto's macState (h = 0, r clamped from a 0x3c key, s), then the blocks
            // function over the size rounded up to whole blocks with padbit 1.
            let st = env.buffer(&macstate(0x3c3c_3c3c_3c3c_3c3c), 0, true);
            let (name, blocks) = env.entry(&poly1305::MACSTATE_BLOCKS)?;
            for &n in sizes {
                let n = n.max(16).next_multiple_of(16);
                let inp = env.buffer(&vec![0x5a; n], 0, false);
                let m = measured(env, |env| env.call(blocks, &[st, inp, n as u64, 1]))?;
                rows.push(row(&name, n, m));
            }
        }
        "sha256-go" | "sha512-go" => {
            // The Go form: the length in bytes (whole blocks of it are compressed).
            let (entry, block) = if kernel == "sha256-go" { (&sha2::SHA256_GO, 64) } else { (&sha2::SHA512_GO, 128) };
            let (name, f) = env.entry(entry)?;
            let dig = env.buffer(&[0x6au8; 64], 0, true);
            for &n in sizes {
                let n = n.max(block).next_multiple_of(block);
                if rows.iter().any(|r: &Row| r.bytes == n) {
                    continue;
                }
                let inp = env.buffer(&vec![0x5a; n], 0, false);
                let m = measured(env, |env| env.call(f, &[dig, inp, n as u64]))?;
                rows.push(row(&name, n, m));
            }
        }
        // ANCHOR: sha2-driver
        "sha256" | "sha512" => {
            // sha*_block_data_order over the size rounded up to whole blocks, from a 64-byte
            // aligned buffer (OpenSSL ABI: ctx, in, num).
            let (entry, block) = if kernel == "sha256" { (&sha2::SHA256_BLOCKS, 64) } else { (&sha2::SHA512_BLOCKS, 128) };
            let (name, f) = env.entry(entry)?;
            let ctx = env.buffer(&[0x6au8; 216], 0, true);
            for &n in sizes {
                let n = n.max(block).next_multiple_of(block);
                if rows.iter().any(|r: &Row| r.bytes == n) {
                    continue; // a smaller size rounded up to the same blocks
                }
                let inp = env.buffer(&vec![0x5a; n], 0, false);
                let m = measured(env, |env| env.call(f, &[ctx, inp, (n / block) as u64]))?;
                rows.push(row(&name, n, m));
            }
        }
        // ANCHOR_END: sha2-driver
        other => return Err(format!("no benchmark driver for kernel `{other}`")),
    }
    Ok(rows)
}

/// x/crypto's macState (56 bytes) with h = 0 and r clamped from the 64-bit `r` twice (s
/// zero: the kernels never read it).
fn macstate(r: u64) -> [u8; 56] {
    let mut state = [0u8; 56];
    state[24..32].copy_from_slice(&(r & 0x0fff_fffc_0fff_ffff).to_le_bytes());
    state[32..40].copy_from_slice(&(r & 0x0fff_fffc_0fff_fffc).to_le_bytes());
    state
}

/// A Poly1305 context as the base-2^32 `poly1305_init` fills it for the 16-byte `r` (the
/// layout in kernels/src/poly1305.rs): h = 0, r clamped, s_i = r_i + (r_i >> 2).
fn poly1305_context(r: &[u8; 16]) -> [u8; 192] {
    use kgen_kernels::poly1305::{CTX_R, CTX_S1, CTX_S23};
    let w = |i: usize| u32::from_le_bytes(r[4 * i..4 * i + 4].try_into().expect("4 bytes"));
    let clamp = [0x0fff_ffffu32, 0x0fff_fffc, 0x0fff_fffc, 0x0fff_fffc];
    let rs: Vec<u32> = (0..4).map(|i| w(i) & clamp[i]).collect();
    let mut ctx = [0u8; 192];
    let mut put = |off: i64, v: u32| ctx[off as usize..off as usize + 4].copy_from_slice(&v.to_le_bytes());
    for (i, &x) in rs.iter().enumerate() {
        put(CTX_R + 4 * i as i64, x);
    }
    put(CTX_S23, rs[2] + (rs[2] >> 2));
    put(CTX_S23 + 4, rs[3] + (rs[3] >> 2));
    put(CTX_S1, rs[1] + (rs[1] >> 2));
    ctx
}

/// Benchmarks an object (a kgen module's, or an assembled file's).
pub fn bench_object(kernel: &str, variant: &str, obj: &Object, target: &Target, sizes: &[usize]) -> Result<Vec<Row>, String> {
    let mut env = Env::new(obj, target)?.with_cost_model();
    env.m.max_steps = 1 << 34;
    drive(kernel, variant, &mut env, sizes)
}

/// Go's ABI0 on kgen-sim: the functions as Go's assembler builds them from kgen's Go output
/// ([`kgen_emit::go::abi0_object`]: prologue, argument loads from the caller's frame, body,
/// epilogue), called with their arguments written where ABI0 puts them.
struct Abi0 {
    env: Env,
    frames: HashMap<u64, kgen_emit::go::ArgFrame>,
}

impl Harness for Abi0 {
    fn buffer(&mut self, data: &[u8], offset: usize, writable: bool) -> u64 {
        self.env.buffer(data, offset, writable)
    }
    fn entry(&self, e: &kgen_dsl::entry::Entry) -> Result<(String, u64), String> {
        self.env.entry(e)
    }
    fn lookup(&self, name: &str) -> Result<u64, String> {
        self.env.lookup(name)
    }
    fn call(&mut self, f: u64, args: &[u64]) -> Result<(u64, u64), String> {
        let fr = self.frames.get(&f).ok_or_else(|| format!("no Go function at {f:#x}"))?;
        for ((name, t, off), v) in fr.args.iter().zip(args) {
            let b = v.to_le_bytes();
            let n = t.size as usize;
            if n < 8 && v >> (8 * n) != 0 && (*v as i64) >> (8 * n - 1) != -1 {
                return Err(format!("argument `{name}` = {v:#x} does not fit {}", t.name));
            }
            self.env.m.mem.write_bytes(kgen_sim::call::CALL_SP + kgen_emit::go::FIXED_FRAME as u64 + *off as u64, &b[..n]);
        }
        Env::call(&mut self.env, f, &[]).map(|o| (o.instructions, o.cycles)).map_err(|e: CallError| e.to_string())
    }
}

/// Benchmarks a module built for the Go ABI as Go runs it (see [`Abi0`]) with the driver
/// of `driver`. Returns the rows and the functions left out (Go's stack-check prologue is
/// not modeled).
pub fn bench_go_module(driver: &str, variant: &str, m: &kgen_dsl::Module, sizes: &[usize]) -> Result<(Vec<Row>, Vec<String>), String> {
    let (obj, skipped) = kgen_emit::go::abi0_object(m).map_err(|e| format!("{} {variant}: {e}", m.kernel))?;
    if !skipped.is_empty() {
        return Ok((Vec::new(), skipped));
    }
    let mut env = Env::new(&obj, &m.target)?.for_abi(kgen_dsl::Abi::Go).with_cost_model();
    env.m.max_steps = 1 << 34;
    let mut frames = HashMap::new();
    for l in m.funcs.iter().filter(|l| l.global) {
        let a = env.lookup(&l.func.name)?;
        frames.insert(a, kgen_emit::go::arg_frame(l).map_err(|e| e.to_string())?);
    }
    let mut h = Abi0 { env, frames };
    let mut rows = drive(driver, variant, &mut h, sizes)?;
    for r in &mut rows {
        r.kernel = m.kernel.clone();
        // The Go name of the function (`ChaCha20_ctr32_c906` → `chaCha20Ctr32C906`).
        let (sym, rest) = r.what.split_at(r.what.find('(').unwrap_or(r.what.len()));
        r.what = format!("{}{rest}", kgen_emit::go::go_name(sym).map_err(|e| e.to_string())?);
    }
    Ok((rows, Vec::new()))
}

/// The table as text.
pub fn table(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{:<10} {:<16} {:<34} {:>7} {:>12} {:>12} {:>9}", "kernel", "variant", "measured", "bytes", "instructions", "cycles", "cyc/byte");
    for r in rows {
        let _ = writeln!(
            s,
            "{:<10} {:<16} {:<34} {:>7} {:>12} {:>12} {:>9.2}",
            r.kernel, r.variant, r.what, r.bytes, r.instructions, r.cycles, r.cpb()
        );
    }
    s
}

/// The (kernel, variant, function) of `rows`, each once, in the order they first appear:
/// the lines of a table.
pub fn row_keys(rows: &[Row]) -> Vec<(&str, &str, &str)> {
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for r in rows {
        let k = (r.kernel.as_str(), r.variant.as_str(), r.what.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys
}

/// A Markdown summary: one line per kernel, variant and function, modeled cycles per byte
/// for each size (instructions per byte in the last column, at the largest size). A size a
/// block-granular kernel rounded up shares the requested size's column.
pub fn markdown(rows: &[Row]) -> String {
    // Kernels that work in whole blocks round a size up (1400 -> 1408): same column.
    let col = |b: usize| rows.iter().map(|r| r.bytes).filter(|&x| x <= b && b - x < 16).min().unwrap_or(b);
    let mut sizes: Vec<usize> = rows.iter().map(|r| col(r.bytes)).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let keys = row_keys(rows);
    let mut s = String::from("| kernel | variant | function |");
    for n in &sizes {
        let _ = write!(s, " {n} B |");
    }
    s.push_str(" instr/B |\n|---|---|---|");
    for _ in &sizes {
        s.push_str("---:|");
    }
    s.push_str("---:|\n");
    for (k, v, w) in keys {
        let _ = write!(s, "| {k} | {v} | {w} |");
        let mut last = None;
        for n in &sizes {
            match rows.iter().find(|r| r.kernel == k && r.variant == v && r.what == w && col(r.bytes) == *n) {
                Some(r) => {
                    let _ = write!(s, " {:.2} |", r.cpb());
                    last = Some(r);
                }
                None => s.push_str(" – |"),
            }
        }
        match last {
            Some(r) => {
                let _ = writeln!(s, " {:.2} |", r.instructions as f64 / r.bytes.max(1) as f64);
            }
            None => s.push_str(" – |\n"),
        }
    }
    s
}

pub fn csv(rows: &[Row]) -> String {
    let mut s = String::from("kernel,variant,measured,bytes,instructions,cycles,cycles_per_byte\n");
    for r in rows {
        let _ = writeln!(s, "{},{},{},{},{},{},{:.3}", r.kernel, r.variant, r.what, r.bytes, r.instructions, r.cycles, r.cpb());
    }
    s
}

pub fn json(rows: &[Row]) -> String {
    let items: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "  {{\"kernel\": \"{}\", \"variant\": \"{}\", \"measured\": \"{}\", \"bytes\": {}, \"instructions\": {}, \"cycles\": {}, \"cycles_per_byte\": {:.3}}}",
                r.kernel,
                r.variant,
                r.what,
                r.bytes,
                r.instructions,
                r.cycles,
                r.cpb()
            )
        })
        .collect();
    format!("[\n{}\n]\n", items.join(",\n"))
}
