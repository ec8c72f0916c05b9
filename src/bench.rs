//! `kgen bench`: instructions and modeled C906 cycles for every kernel variant (or for an
//! assembly file that implements a kernel's OpenSSL ABI, through the same driver).

use kgen_dsl::object::Object;
use kgen_dsl::target::Target;
use kgen_sim::{CallError, Env};
use std::fmt::Write as _;

/// Message sizes of the tables (bytes).
pub const SIZES: [usize; 7] = [16, 64, 256, 1024, 1400, 4096, 16384];

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
    use kgen_kernels::{aes, chacha, ghash, poly1305, sha2};
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

/// Benchmarks an object (a kgen module's, or an assembled file's).
pub fn bench_object(kernel: &str, variant: &str, obj: &Object, target: &Target, sizes: &[usize]) -> Result<Vec<Row>, String> {
    let mut env = Env::new(obj, target)?.with_cost_model();
    env.m.max_steps = 1 << 34;
    drive(kernel, variant, &mut env, sizes)
}

/// The table as text.
pub fn table(rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{:<10} {:<14} {:<26} {:>7} {:>12} {:>12} {:>9}", "kernel", "variant", "measured", "bytes", "instructions", "cycles", "cyc/byte");
    for r in rows {
        let _ = writeln!(
            s,
            "{:<10} {:<14} {:<26} {:>7} {:>12} {:>12} {:>9.2}",
            r.kernel, r.variant, r.what, r.bytes, r.instructions, r.cycles, r.cpb()
        );
    }
    s
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
    let mut keys: Vec<(&str, &str, &str)> = Vec::new();
    for r in rows {
        let k = (r.kernel.as_str(), r.variant.as_str(), r.what.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
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
