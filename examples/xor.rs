//! The smallest kgen kernel, the first step of docs/writing-a-kernel.md: `out[i] = a[i] ^
//! b[i]` for `n` bytes. `cargo run --example xor` builds it for the C906 (OpenSSL ABI), which
//! lowers it and runs every check, prints the check report and the `.S`, and runs it once in
//! kgen-sim. `cargo run --example xor -- rv64gc` builds it for another target.

// ANCHOR: entry
use kgen_dsl::entry::{Access::*, Elem, Entry, Param, Ret, Ty};
use kgen_dsl::{target::target, Abi, Func, Module};
use kgen_macros::kasm;

/// `void xor_bytes_<variant>(unsigned char *out, const unsigned char *a, const unsigned
/// char *b, size_t n)`: the interface, declared once.
const XOR: Entry = Entry {
    kernel: "xor",
    prefix: "xor_bytes_",
    suffix: "",
    alias: None,
    abis: &[Abi::Psabi],
    params: &[
        Param::ptr("out", Elem::U8, Out, false),
        Param::ptr("a", Elem::U8, In, true),
        Param::ptr("b", Elem::U8, In, true),
        Param::val("n", Ty::Size, false),
    ],
    ret: Ret::Void,
    summary: "out[i] = a[i] ^ b[i] for i < n",
};
// ANCHOR_END: entry

// ANCHOR: body
/// The function for one target: a byte loop.
pub fn xor_bytes(variant: &str, t: &kgen_dsl::target::Target) -> Func {
    let mut f = Func::entry(&XOR, variant, t, Abi::Psabi);
    let [out, a, b, n] = f.params();
    let (x, y) = (f.xreg("x"), f.xreg("y"));
    kasm!(f,
        beqz {n}, done;
    top:
        lbu {x}, 0({a});                    // *out++ = *a++ ^ *b++
        lbu {y}, 0({b});
        xor {x}, {x}, {y};
        sb {x}, 0({out});
        addi {a}, {a}, 1;
        addi {b}, {b}, 1;
        addi {out}, {out}, 1;
        addi {n}, {n}, -1;                  // while (--n)
        bnez {n}, top;
    done:
    );
    f.ret();
    f
}
// ANCHOR_END: body

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // ANCHOR: main
    let name = std::env::args().nth(1).unwrap_or_else(|| "c906".into());
    let t = target(&name).ok_or(format!("unknown target `{name}` (see `kgen list`)"))?;
    let mut m = Module::new("xor", &name, &t, Abi::Psabi);
    m.add(xor_bytes(&name, &t), true)?; // lowers (registers, frame, wipes) and checks
    for line in kgen_dsl::report::Report::of(&m.funcs[0]).lines() {
        println!("# {line}");
    }
    let o = kgen_emit::EmitOptions { command: format!("cargo run --example xor -- {name}"), ..Default::default() };
    print!("{}", kgen_emit::openssl_s(&m, &o)?);
    // ANCHOR_END: main
    // ANCHOR: run
    let mut env = kgen_sim::Env::new(&m.object()?, &m.target)?;
    let (a, b) = (b"kgen".to_vec(), vec![0x20u8; 4]);
    let (pa, pb, out) = (env.buffer(&a, 1, false), env.buffer(&b, 2, false), env.buffer(&[0; 4], 3, true));
    env.call(env.lookup(&XOR.symbol(&name))?, &[out, pa, pb, 4])?;
    let got = env.read(out, 4);
    println!("# kgen-sim: \"kgen\" ^ 0x20 = {:?}", String::from_utf8_lossy(&got));
    assert_eq!(got, b"KGEN");
    // ANCHOR_END: run
    Ok(())
}
