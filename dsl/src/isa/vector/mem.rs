//! Vector loads and stores. XTheadVector names the memory width in the mnemonic
//! (`th.vlb/vlh/vlw[u].v`, `th.vle.v` = SEW) and extends into SEW-wide elements; RVV 1.0
//! names the element width (`vle32.v`) and sizes the register group by it.

use super::*;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Unit,
    Strided,
    Indexed,
    /// RVV 1.0 `vlm.v`/`vsm.v`: ceil(vl/8) bytes of mask.
    Mask,
    /// RVV 1.0 whole-register `vl<n>re<eew>.v` / `vs<n>r.v`.
    Whole(u8),
}

#[derive(Clone, Copy, Debug)]
struct Spec {
    d: VDialect,
    dir: Dir,
    mode: Mode,
    nf: u8,
    /// XTheadVector: memory bytes per element (0 = SEW). RVV 1.0: EEW in bits of the data
    /// (unit/strided) or of the index (indexed).
    width: u8,
    signed: bool,
    ff: bool,
}

/// funct3 width code for a size in bytes (XTheadVector: 0 = SEW) or an EEW in bits.
fn width_code(d: VDialect, w: u8) -> u32 {
    match (d, w) {
        (VDialect::Thead, 1) | (VDialect::V1, 8) => 0b000,
        (VDialect::Thead, 2) | (VDialect::V1, 16) => 0b101,
        (VDialect::Thead, 4) | (VDialect::V1, 32) => 0b110,
        (VDialect::Thead, 0) | (VDialect::V1, 64) => 0b111,
        _ => unreachable!(),
    }
}

pub(super) fn rows(t: &mut Vec<RowDef>, d: VDialect) {
    match d {
        VDialect::Thead => thead(t),
        VDialect::V1 => v1(t),
    }
}

fn seg_name(nf: u8) -> String {
    if nf == 1 { String::new() } else { format!("seg{nf}") }
}

fn thead(t: &mut Vec<RowDef>) {
    let d = VDialect::Thead;
    // (suffix, bytes, signed) — loads; stores use the signed=true entries' letters and `e`.
    let loads: [(&str, u8, bool); 7] =
        [("b", 1, true), ("h", 2, true), ("w", 4, true), ("bu", 1, false), ("hu", 2, false), ("wu", 4, false), ("e", 0, false)];
    let stores: [(&str, u8); 4] = [("b", 1), ("h", 2), ("w", 4), ("e", 0)];
    for nf in 1..=8u8 {
        let sg = seg_name(nf);
        for &(w, bytes, signed) in &loads {
            for (mode, letter) in [(Mode::Unit, ""), (Mode::Strided, "s"), (Mode::Indexed, "x")] {
                let name = if nf == 1 { format!("vl{letter}{w}.v") } else { format!("vl{letter}{sg}{w}.v") };
                t.push(row(Spec { d, dir: Dir::Load, mode, nf, width: bytes, signed, ff: false }, &name));
            }
            let name = format!("vl{sg}{w}ff.v");
            t.push(row(Spec { d, dir: Dir::Load, mode: Mode::Unit, nf, width: bytes, signed, ff: true }, &name));
        }
        for &(w, bytes) in &stores {
            for (mode, letter) in [(Mode::Unit, ""), (Mode::Strided, "s"), (Mode::Indexed, "x")] {
                let name = if nf == 1 { format!("vs{letter}{w}.v") } else { format!("vs{letter}{sg}{w}.v") };
                t.push(row(Spec { d, dir: Dir::Store, mode, nf, width: bytes, signed: false, ff: false }, &name));
            }
            if nf == 1 {
                // Unordered indexed store (mop 111).
                let mut r = row(Spec { d, dir: Dir::Store, mode: Mode::Indexed, nf, width: bytes, signed: true, ff: false }, &format!("vsux{w}.v"));
                r.bits |= 0b100 << 26;
                t.push(r);
            }
        }
    }
}

fn v1(t: &mut Vec<RowDef>) {
    let d = VDialect::V1;
    for nf in 1..=8u8 {
        let sg = seg_name(nf);
        for eew in [8u8, 16, 32, 64] {
            let sp = |dir, mode, ff| Spec { d, dir, mode, nf, width: eew, signed: false, ff };
            t.push(row(sp(Dir::Load, Mode::Unit, false), &format!("vl{sg}e{eew}.v")));
            t.push(row(sp(Dir::Store, Mode::Unit, false), &format!("vs{sg}e{eew}.v")));
            t.push(row(sp(Dir::Load, Mode::Unit, true), &format!("vl{sg}e{eew}ff.v")));
            t.push(row(sp(Dir::Load, Mode::Strided, false), &format!("vls{sg}e{eew}.v")));
            t.push(row(sp(Dir::Store, Mode::Strided, false), &format!("vss{sg}e{eew}.v")));
            for (ordered, o) in [(false, "u"), (true, "o")] {
                for dir in [Dir::Load, Dir::Store] {
                    let l = if dir == Dir::Load { "l" } else { "s" };
                    let mut r = row(sp(dir, Mode::Indexed, false), &format!("v{l}{o}x{sg}ei{eew}.v"));
                    if !ordered {
                        r.bits &= !(0b10 << 26);
                    }
                    t.push(r);
                }
            }
        }
    }
    t.push(row(Spec { d, dir: Dir::Load, mode: Mode::Mask, nf: 1, width: 8, signed: false, ff: false }, "vlm.v"));
    t.push(row(Spec { d, dir: Dir::Store, mode: Mode::Mask, nf: 1, width: 8, signed: false, ff: false }, "vsm.v"));
    for n in [1u8, 2, 4, 8] {
        for eew in [8u8, 16, 32, 64] {
            t.push(row(Spec { d, dir: Dir::Load, mode: Mode::Whole(n), nf: n, width: eew, signed: false, ff: false }, &format!("vl{n}re{eew}.v")));
        }
        t.push(row(Spec { d, dir: Dir::Store, mode: Mode::Whole(n), nf: n, width: 8, signed: false, ff: false }, &format!("vs{n}r.v")));
    }
}

fn row(sp: Spec, name: &str) -> RowDef {
    let d = sp.d;
    let opc = if sp.dir == Dir::Load { OPC_LOAD_FP } else { OPC_STORE_FP };
    // mop: bit 26-27 addressing (00 unit, 01 unordered-indexed (1.0), 10 strided, 11 indexed),
    // bit 28: XTheadVector sign-extending load / RVV 1.0 mew (0).
    let mop = match sp.mode {
        Mode::Unit | Mode::Mask | Mode::Whole(_) => 0b00,
        Mode::Strided => 0b10,
        Mode::Indexed => 0b11,
    };
    let sign = (d == VDialect::Thead && sp.signed && sp.dir == Dir::Load) as u32;
    let lumop = match sp.mode {
        Mode::Mask => 0b01011,
        Mode::Whole(_) => 0b01000,
        _ if sp.ff => 0b10000,
        _ => 0,
    };
    let nf_bits = (sp.nf as u32 - 1) << 29;
    let bits = nf_bits | (sign << 28) | (mop << 26) | (lumop << 20) | (width_code(d, sp.width) << 12) | opc;
    let role = if sp.dir == Dir::Load { Role::Def } else { Role::Use };
    let group = match (d, sp.mode) {
        (_, Mode::Mask) => VGroup::Mask,
        (_, Mode::Whole(n)) => VGroup::Whole(n),
        (VDialect::Thead, _) if sp.nf == 1 => VGroup::Lmul,
        (VDialect::Thead, _) => VGroup::Seg(sp.nf),
        (VDialect::V1, Mode::Indexed) if sp.nf == 1 => VGroup::Lmul,
        (VDialect::V1, Mode::Indexed) => VGroup::Seg(sp.nf),
        (VDialect::V1, _) => VGroup::Eew { nf: sp.nf, eew: sp.width },
    };
    let vd = vreg("vd", role, group, VD);
    let b = base(RS1);
    let (ops, mask, addr) = match sp.mode {
        Mode::Unit => (vec![vd, b, VM_OP], 0xfdf0_707f, Addr::VUnit { base: 1 }),
        Mode::Mask | Mode::Whole(_) => (vec![vd, b], 0xfff0_707f, Addr::VUnit { base: 1 }),
        Mode::Strided => (vec![vd, b, xs("rs2", RS2), VM_OP], 0xfc00_707f, Addr::VStrided { base: 1, stride: 2 }),
        Mode::Indexed => {
            let ig = match d {
                VDialect::Thead => VGroup::Lmul,
                VDialect::V1 => VGroup::Eew { nf: 1, eew: sp.width },
            };
            (vec![vd, b, vreg("vs2", Role::Use, ig, VS2), VM_OP], 0xfc00_707f, Addr::VIndexed { base: 1, index: 2 })
        }
    };
    let bits = if matches!(sp.mode, Mode::Mask | Mode::Whole(_)) { bits | (1 << 25) } else { bits };
    let mem_bytes = match d {
        VDialect::Thead => sp.width,
        VDialect::V1 if sp.mode == Mode::Indexed => 0,
        VDialect::V1 => sp.width / 8,
    };
    let class = if sp.dir == Dir::Load { Class::VLoad } else { Class::VStore };
    let mut r = RowDef::new(mn(d, name), bits, mask, dialect_ext(d))
        .ops(&ops)
        .class(class)
        .vector(d)
        .mem(sp.dir, mem_bytes, addr);
    if sp.dir == Dir::Load && ops.len() > 2 {
        r = r.rule(Rule::VdNotV0WhenMasked);
    }
    r.sem(move |h, bus, o| exec(h, bus, &sp, o))
}

fn exec(h: &mut Hart, bus: &mut dyn Bus, sp: &Spec, o: &[i64]) -> Result<(), Trap> {
    let vd = o[0];
    let base = h.x(o[1]);
    if let Mode::Whole(n) = sp.mode {
        h.vcheck(vd, n as usize, "whole-register")?;
        let bytes = n as usize * h.vlenb;
        let start = vd as usize * h.vlenb;
        for k in 0..bytes {
            let a = base.wrapping_add(k as u64);
            if sp.dir == Dir::Load {
                h.v[start + k] = bus.load(a, 1)? as u8;
            } else {
                bus.store(a, 1, h.v[start + k] as u64)?;
            }
        }
        h.vstart = 0;
        return Ok(());
    }
    let c = h.vconf(sp.d)?;
    if sp.mode == Mode::Mask {
        let n = c.vl.div_ceil(8);
        let start = vd as usize * h.vlenb;
        for k in 0..n {
            let a = base.wrapping_add(k as u64);
            if sp.dir == Dir::Load {
                h.v[start + k] = bus.load(a, 1)? as u8;
            } else {
                bus.store(a, 1, h.v[start + k] as u64)?;
            }
        }
        h.vstart = 0;
        return Ok(());
    }
    // Register element width, memory bytes per element, registers per field group.
    let (rw, mw, regs) = match sp.d {
        VDialect::Thead => {
            let mw = if sp.width == 0 { c.sew / 8 } else { sp.width as u32 };
            if mw * 8 > c.sew {
                return Err(Trap::Illegal(format!("{}-byte elements with SEW={}", mw, c.sew)));
            }
            (c.sew, mw, c.group_regs())
        }
        VDialect::V1 => {
            let eew = if sp.mode == Mode::Indexed { c.sew } else { sp.width as u32 };
            // EMUL = EEW/SEW * LMUL
            let num = eew * c.lmul_num;
            let den = c.sew * c.lmul_den;
            if num > 8 * den || num * 8 < den {
                return Err(Trap::Illegal(format!("EMUL out of range (EEW={eew}, SEW={})", c.sew)));
            }
            (eew, eew / 8, (num / den).max(1) as usize)
        }
    };
    let nf = sp.nf as usize;
    if nf * regs > 8 {
        return Err(Trap::Illegal(format!("NFIELDS*EMUL = {} > 8", nf * regs)));
    }
    h.vcheck(vd, nf * regs, "data")?;
    let vm = if o.len() > 2 { o[o.len() - 1] } else { 1 };
    let index = |h: &Hart, i: usize| -> u64 {
        let ix = o[2];
        match sp.d {
            // XTheadVector offsets are signed (sign-extended from SEW); RVV 1.0's unsigned.
            VDialect::Thead => sext(h.velem(ix, i, c.sew), c.sew) as u64,
            VDialect::V1 => h.velem(ix, i, sp.width as u32),
        }
    };
    let mut vals = vec![vec![None; c.vl]; nf];
    let mut new_vl = None;
    for i in h.vstart as usize..c.vl {
        if !h.active(vm, i, &c) {
            continue;
        }
        let elem_base = match sp.mode {
            Mode::Unit => base.wrapping_add((i * nf * mw as usize) as u64),
            Mode::Strided => base.wrapping_add((i as u64).wrapping_mul(h.x(o[2]))),
            Mode::Indexed => base.wrapping_add(index(h, i)),
            _ => unreachable!(),
        };
        for (k, field) in vals.iter_mut().enumerate() {
            let a = elem_base.wrapping_add((k * mw as usize) as u64);
            if sp.dir == Dir::Load {
                match bus.load(a, mw as u8) {
                    Ok(v) => {
                        field[i] = Some(if sp.signed { trunc(sext(v, 8 * mw) as u64, rw) } else { v });
                    }
                    Err(e) => {
                        if sp.ff && i > 0 {
                            new_vl = Some(i);
                            break;
                        }
                        return Err(e);
                    }
                }
            } else {
                let reg = vd + (k * regs) as i64;
                bus.store(a, mw as u8, h.velem(reg, i, rw))?;
            }
        }
        if new_vl.is_some() {
            break;
        }
    }
    if sp.dir == Dir::Load {
        let mut c2 = c;
        if let Some(n) = new_vl {
            h.vl = n as u64;
            c2.vl = n;
            for f in &mut vals {
                f.truncate(n);
            }
        }
        for (k, f) in vals.iter().enumerate() {
            h.write_group(vd + (k * regs) as i64, rw, &c2, f);
        }
    }
    h.vstart = 0;
    Ok(())
}
