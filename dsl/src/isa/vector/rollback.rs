//! RVV 1.0 to XTheadVector as rvv-rollback does it: the translation the published D1
//! measurements ran under (camel-cdr's rvv-bench assembles its RVV 1.0 sources for the D1
//! through `thiredparty/rvv-rollback.S`, a list of assembler macros). The facts restated
//! here, not its code:
//!
//! - unit-stride, strided and indexed loads and stores of EEW 8/16/32 take the 0.7.1 name
//!   of that memory width (`vle8.v` → `vlb.v`, `vlse32.v` → `vlsw.v`, `vluxei16.v` and
//!   `vloxei16.v` → `vlxh.v`, `vsuxei8.v` → `vsuxb.v`, `vsoxei8.v` → `vsxb.v`); loads are the
//!   sign-extending ones (right only where EEW = SEW, which is how RVV 1.0 code that runs
//!   on a D1 uses them); segment loads likewise, except that strided segment loads become
//!   the zero-extending `vlsseg<n><w>u.v`; fault-only-first loads exist for nf = 1 only;
//! - narrowing `.w*` forms take the 0.7.1 `.v*` spelling; `vmandn`/`vmorn` →
//!   `vmandnot`/`vmornot`; `vcpop.m` → `vmpopc.m`; `vfirst.m` → `vmfirst.m`;
//! - `vsetvli` keeps SEW and LMUL and drops the tail/mask policy (XTheadVector zeroes the
//!   tail); fractional LMUL is refused;
//! - everything else keeps its mnemonic (the 0.7.1 assembler takes it as it is), which for
//!   `vmv.x.s` is 0.7.1's alias of `vext.x.v rd, vs2, x0`;
//! - what has no translation: e64 memory forms, segment fault-only-first, mask and
//!   whole-register loads and stores, whole-register moves, `vsetivli`, `vsetvl` (its
//!   vtype register is laid out differently), `vzext`/`vsext` (rollback's `vwaddu.vx`
//!   chains are right only under a narrow vtype), `vrgatherei16`, carry-less
//!   `vmadc`/`vmsbc`, and any mnemonic that has no XTheadVector row.
//!
//! [`Table::rollback`] gives the translation of a row, or why there is none.

use super::super::{Form, Kind, Row, Table, VDialect};

/// How the operands change in a translation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RollbackOps {
    /// The same operands.
    Same,
    /// Operand `k` is an RVV 1.0 vtype: convert it (see [`VDialect::rollback_vtype`]).
    Vtype(usize),
    /// Append `x0` (`vmv.x.s rd, vs2` = `vext.x.v rd, vs2, x0`).
    AppendX0,
}

/// The XTheadVector mnemonic (without `th.`) rvv-rollback turns an RVV 1.0 mnemonic into,
/// `Ok(None)` when it passes the mnemonic through, or why it has none.
fn rollback_name(m: &str) -> Result<Option<String>, String> {
    let body = m.strip_suffix(".v");
    let letter = |eew: &str| -> Result<&'static str, String> {
        match eew {
            "8" => Ok("b"),
            "16" => Ok("h"),
            "32" => Ok("w"),
            "64" => Err("e64 memory accesses have no rvv-rollback translation (and no D1 measurement)".into()),
            _ => Err(format!("`{m}`: unknown element width")),
        }
    };
    let seg = |s: &str| -> Option<(u8, String)> {
        // "seg<n>" prefix of the rest.
        let r = s.strip_prefix("seg")?;
        let n = r.chars().next()?.to_digit(10)? as u8;
        Some((n, r[1..].to_string()))
    };
    if let Some(b) = body {
        // Whole-register, mask.
        let digit_at = |k: usize| b.get(k..k + 1).is_some_and(|c| c.chars().all(|c| c.is_ascii_digit()));
        if b.starts_with("vl") && b.contains("re") && digit_at(2) || b == "vlm" || b == "vsm" {
            return Err(format!("`{m}` (mask or whole-register access) has no XTheadVector equivalent"));
        }
        if b.len() == 4 && b.starts_with("vs") && b.ends_with('r') && digit_at(2) {
            return Err(format!("`{m}` (whole-register store) has no XTheadVector equivalent"));
        }
        // Unit stride (optionally segment, ff): vl[seg<n>]e<eew>[ff], vs[seg<n>]e<eew>.
        for (dir, rest) in [("l", b.strip_prefix("vl")), ("s", b.strip_prefix("vs"))] {
            let Some(rest) = rest else { continue };
            let (nf, rest) = match seg(rest) {
                Some((n, r)) => (n, r),
                None => (1, rest.to_string()),
            };
            if let Some(e) = rest.strip_prefix('e') {
                let (eew, ff) = match e.strip_suffix("ff") {
                    Some(x) => (x, true),
                    None => (e, false),
                };
                if !eew.chars().all(|c| c.is_ascii_digit()) || eew.is_empty() {
                    break;
                }
                let w = letter(eew)?;
                if ff && nf > 1 {
                    return Err(format!("`{m}`: rvv-rollback has no segment fault-only-first translation"));
                }
                let sg = if nf > 1 { format!("seg{nf}") } else { String::new() };
                return Ok(Some(format!("v{dir}{sg}{w}{}.v", if ff { "ff" } else { "" })));
            }
            // Strided: vls[seg<n>]e<eew>, vss[seg<n>]e<eew>.
            if let Some(r2) = rest.strip_prefix('s') {
                let (nf, r3) = match seg(r2) {
                    Some((n, r)) => (n, r),
                    None => (1, r2.to_string()),
                };
                if let Some(eew) = r3.strip_prefix('e').filter(|e| !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())) {
                    let w = letter(eew)?;
                    return Ok(Some(match (dir, nf) {
                        (_, 1) => format!("v{dir}s{w}.v"),
                        // Strided segment loads become the zero-extending form.
                        ("l", n) => format!("vlsseg{n}{w}u.v"),
                        (_, n) => format!("vssseg{n}{w}.v"),
                    }));
                }
            }
            // Indexed: v{l,s}{u,o}x[seg<n>]ei<eew>.
            for ord in ['u', 'o'] {
                if let Some(r2) = rest.strip_prefix(ord).and_then(|r| r.strip_prefix('x')) {
                    let (nf, r3) = match seg(r2) {
                        Some((n, r)) => (n, r),
                        None => (1, r2.to_string()),
                    };
                    if let Some(eew) = r3.strip_prefix("ei").filter(|e| !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())) {
                        let w = letter(eew)?;
                        return Ok(Some(match (dir, nf, ord) {
                            ("l", 1, _) => format!("vlx{w}.v"),
                            ("s", 1, 'u') => format!("vsux{w}.v"),
                            ("s", 1, _) => format!("vsx{w}.v"),
                            (_, n, _) => format!("v{dir}xseg{n}{w}.v"),
                        }));
                    }
                }
            }
        }
    }
    // Narrowing shifts and clips: .wv/.wx/.wi -> .vv/.vx/.vi.
    for op in ["vnsrl", "vnsra", "vnclip", "vnclipu"] {
        if let Some(s) = m.strip_prefix(op).and_then(|r| r.strip_prefix(".w")) {
            return Ok(Some(format!("{op}.v{s}")));
        }
    }
    let fixed = match m {
        "vmandn.mm" => "vmandnot.mm",
        "vmorn.mm" => "vmornot.mm",
        "vcpop.m" => "vmpopc.m",
        "vfirst.m" => "vmfirst.m",
        "vmv.x.s" => "vext.x.v",
        "vsetivli" => return Err("`vsetivli` does not exist in XTheadVector (rvv-rollback has no translation)".into()),
        "vsetvl" => return Err("`vsetvl`: the vtype register is laid out differently in XTheadVector (rvv-rollback does not convert it)".into()),
        "vrgatherei16.vv" => return Err("`vrgatherei16.vv` has no XTheadVector equivalent".into()),
        _ if m.starts_with("vzext.") || m.starts_with("vsext.") => {
            return Err(format!("`{m}`: rvv-rollback's vwaddu.vx chain is right only under a narrow vtype; write the widening form"))
        }
        _ if m.starts_with("vmv") && m.ends_with("r.v") => return Err(format!("`{m}` (whole-register move) has no XTheadVector equivalent")),
        _ => return Ok(None),
    };
    Ok(Some(fixed.to_string()))
}

impl Table {
    /// The XTheadVector row rvv-rollback translates the RVV 1.0 row `f` to, and how its
    /// operands change; or why there is none.
    pub fn rollback(&self, f: Form) -> Result<(Form, RollbackOps), String> {
        let row = self.row(f);
        if row.vdialect != Some(VDialect::V1) || !row.ext.contains(crate::ext::Ext::V) {
            return Err(format!("`{}` is not an RVV 1.0 instruction", row.mnemonic));
        }
        let name = rollback_name(row.mnemonic)?.unwrap_or_else(|| row.mnemonic.to_string());
        let th = self
            .lookup(&format!("th.{name}"))
            .ok_or_else(|| format!("`{}` has no XTheadVector form (rvv-rollback has no translation)", row.mnemonic))?;
        let t = self.row(th);
        let ops = if row.vset.is_some() {
            let k = row.ops.iter().position(|o| o.kind == Kind::Vtype).ok_or_else(|| format!("`{}`: no vtype operand", row.mnemonic))?;
            RollbackOps::Vtype(k)
        } else if t.ops.len() == row.ops.len() + 1 && matches!(t.ops.last().map(|o| o.kind), Some(Kind::X)) {
            RollbackOps::AppendX0
        } else {
            RollbackOps::Same
        };
        // The same operand classes (register groups are sized by each dialect's own rule).
        let like = |x: Kind, y: Kind| {
            std::mem::discriminant(&x) == std::mem::discriminant(&y) || matches!((x, y), (Kind::Vtype, Kind::VtypeTh))
        };
        let same_kinds = |a: &Row, b: &Row, n: usize| a.ops.iter().zip(&b.ops).take(n).all(|(x, y)| like(x.kind, y.kind) && x.role == y.role);
        let n = row.ops.len();
        let shape_ok = match ops {
            RollbackOps::AppendX0 => same_kinds(row, t, n),
            _ => t.ops.len() == n && same_kinds(row, t, n),
        };
        if !shape_ok {
            return Err(format!("`{}` and `{}` take different operands (rvv-rollback passes it through; it would not assemble)", row.mnemonic, t.mnemonic));
        }
        Ok((th, ops))
    }
}

impl VDialect {
    /// rvv-rollback's vtype: the same SEW and LMUL, tail and mask policy dropped
    /// (XTheadVector zeroes the tail, keeps masked-off elements); fractional LMUL refused.
    pub fn rollback_vtype(v1: i64) -> Result<i64, String> {
        let vlmul = v1 & 7;
        if vlmul >= 4 {
            return Err("fractional LMUL is not supported by XTheadVector (rvv-rollback refuses it too)".into());
        }
        let vsew = (v1 >> 3) & 7;
        if vsew > 3 || v1 >> 8 != 0 {
            return Err(format!("vtype {v1:#x} is not valid"));
        }
        Ok((vsew << 2) | vlmul)
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::table;
    use super::*;

    fn th_of(m: &str) -> Result<String, String> {
        let t = table();
        t.rollback(t.form(m)).map(|(f, _)| t.row(f).mnemonic.to_string())
    }

    #[test]
    fn the_rollback_table() {
        for (v1, th) in [
            ("vle8.v", "th.vlb.v"),
            ("vle16.v", "th.vlh.v"),
            ("vle32.v", "th.vlw.v"),
            ("vle32ff.v", "th.vlwff.v"),
            ("vse8.v", "th.vsb.v"),
            ("vlse16.v", "th.vlsh.v"),
            ("vsse32.v", "th.vssw.v"),
            ("vluxei8.v", "th.vlxb.v"),
            ("vloxei32.v", "th.vlxw.v"),
            ("vsuxei16.v", "th.vsuxh.v"),
            ("vsoxei16.v", "th.vsxh.v"),
            ("vlseg8e32.v", "th.vlseg8w.v"),
            ("vsseg2e8.v", "th.vsseg2b.v"),
            ("vlsseg8e32.v", "th.vlsseg8wu.v"),
            ("vssseg8e32.v", "th.vssseg8w.v"),
            ("vluxseg3ei16.v", "th.vlxseg3h.v"),
            ("vsoxseg4ei8.v", "th.vsxseg4b.v"),
            ("vnsrl.wi", "th.vnsrl.vi"),
            ("vnclipu.wv", "th.vnclipu.vv"),
            ("vmandn.mm", "th.vmandnot.mm"),
            ("vcpop.m", "th.vmpopc.m"),
            ("vfirst.m", "th.vmfirst.m"),
            ("vmv.x.s", "th.vext.x.v"),
            ("vadd.vv", "th.vadd.vv"),
            ("vid.v", "th.vid.v"),
            ("vsetvli", "th.vsetvli"),
            ("vmv.s.x", "th.vmv.s.x"),
        ] {
            assert_eq!(th_of(v1).as_deref(), Ok(th), "{v1}");
        }
        let t = table();
        assert_eq!(t.rollback(t.form("vmv.x.s")).unwrap().1, RollbackOps::AppendX0);
        assert_eq!(t.rollback(t.form("vsetvli")).unwrap().1, RollbackOps::Vtype(2));
        assert_eq!(t.rollback(t.form("vadd.vv")).unwrap().1, RollbackOps::Same);
    }

    #[test]
    fn what_rollback_refuses() {
        for m in ["vle64.v", "vlseg2e8ff.v", "vlm.v", "vl1re8.v", "vs2r.v", "vmv1r.v", "vsetivli", "vsetvl", "vzext.vf2", "vsext.vf4", "vrgatherei16.vv", "vsse64.v"] {
            let e = th_of(m).expect_err(m);
            assert!(!e.is_empty(), "{m}");
        }
        assert!(th_of("th.vadd.vv").is_err());
        assert!(th_of("add").is_err());
        assert_eq!(VDialect::rollback_vtype(VDialect::V1.vtype(32, 4).unwrap()), Ok(VDialect::Thead.vtype(32, 4).unwrap()));
        // Tail-undisturbed is dropped (as rvv-rollback does), fractional LMUL refused.
        assert_eq!(VDialect::rollback_vtype(VDialect::V1.vtype(8, 2).unwrap() & !0xc0), Ok(VDialect::Thead.vtype(8, 2).unwrap()));
        assert!(VDialect::rollback_vtype(0xc0 | 7).is_err());
    }
}
