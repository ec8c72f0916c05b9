//! Vector register groups under a configuration: which registers an operand names, and the
//! encodings that are reserved because a group is misaligned or overlaps another the wrong
//! way. The simulator's semantics (through the row builder) and the checks both ask.

use super::hart::VConf;
use super::{Class, Kind, Role, Row, VGroup};

/// A vector operand's registers and element width under a configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VSpan {
    pub first: u32,
    pub count: u32,
    /// Effective element width in bits (1 for masks, 0 for whole-register operands).
    pub eew: u32,
}

impl VSpan {
    fn overlaps(&self, o: &VSpan) -> bool {
        self.first < o.first + o.count && o.first < self.first + self.count
    }
}

/// The registers operand `i` of `row` names when it holds `reg`, under `c`.
pub fn vspan(row: &Row, i: usize, reg: i64, c: &VConf) -> Option<VSpan> {
    let Kind::V(g) = row.ops[i].kind else { return None };
    let lmul = c.group_regs() as u32;
    let widening_red = row.class == Class::VReduce && row.mnemonic.contains("vwred");
    let (count, eew) = match g {
        VGroup::Lmul => (lmul, c.sew),
        VGroup::Wide => ((2 * c.lmul_num / c.lmul_den).max(1), 2 * c.sew),
        VGroup::Mask => (1, 1),
        VGroup::Scalar => (1, if widening_red && i != 1 { 2 * c.sew } else { c.sew }),
        VGroup::Seg(nf) => (nf as u32 * lmul, c.sew),
        VGroup::Eew { nf, eew } => (nf as u32 * ((eew as u32 * c.lmul_num) / (c.sew * c.lmul_den)).max(1), eew as u32),
        VGroup::Whole(n) => (n as u32, 0),
        VGroup::EltGroup => (lmul, 32),
    };
    Some(VSpan { first: reg as u32, count, eew })
}

/// Register groups that are not aligned to their size or run past v31 (reserved in both
/// dialects): `Some(reason)`.
pub fn group_alignment_violation(row: &Row, ops: &[i64], c: &VConf) -> Option<String> {
    for (i, spec) in row.ops.iter().enumerate() {
        let Kind::V(g) = spec.kind else { continue };
        let s = vspan(row, i, ops[i], c)?;
        let unit = match g {
            VGroup::Seg(nf) | VGroup::Eew { nf, .. } => s.count / nf as u32,
            VGroup::Mask | VGroup::Scalar => 1,
            _ => s.count,
        };
        if unit > 8 || (g == VGroup::Wide && 2 * c.sew > 64) {
            return Some(format!("`{}` would need {} registers per group", spec.name, unit));
        }
        if s.first % unit.max(1) != 0 {
            return Some(format!("`{}` = v{} is not aligned to its group of {unit}", spec.name, s.first));
        }
        if s.first + s.count > 32 {
            return Some(format!("`{}` group v{}..v{} runs past v31", spec.name, s.first, s.first + s.count - 1));
        }
    }
    None
}

/// RVV 1.0 register-overlap rules (spec 5.2 and the per-instruction ones) for one
/// instruction: `Some(reason)` when the encoding is reserved under configuration `c`.
/// Whether the instruction's destination may overlap none of its vector sources (gathers,
/// slides up): the allocator keeps them apart.
pub fn destination_apart(row: &Row) -> bool {
    match row.class {
        Class::VGather => true,
        Class::VSlide => row.mnemonic.contains("vslideup") || row.mnemonic.contains("vslide1up"),
        _ => false,
    }
}

pub fn v1_overlap_violation(row: &Row, ops: &[i64], c: &VConf) -> Option<String> {
    let masked = row.vm_operand().is_some_and(|k| ops[k] == 0);
    let mut srcs = Vec::new();
    let mut dst = None;
    for (i, spec) in row.ops.iter().enumerate() {
        let Some(s) = vspan(row, i, ops[i], c) else { continue };
        match spec.role {
            Role::Use => srcs.push((i, s)),
            Role::UseDef => {
                srcs.push((i, s));
                dst = Some((i, s));
            }
            Role::Def => dst = Some((i, s)),
        }
    }
    let mask = VSpan { first: 0, count: 1, eew: 1 };
    if masked || row.ops.iter().any(|o| o.kind == Kind::V0) {
        for (i, s) in &srcs {
            if s.eew != 1 && s.overlaps(&mask) {
                return Some(format!("`{}` reads v0 as a vector source and as the mask", row.ops[*i].name));
            }
        }
    }
    for (a, (i, s)) in srcs.iter().enumerate() {
        for (j, t) in &srcs[a + 1..] {
            if s.eew != 0 && t.eew != 0 && s.eew != t.eew && s.overlaps(t) {
                return Some(format!("`{}` and `{}` overlap with different element widths", row.ops[*i].name, row.ops[*j].name));
            }
        }
    }
    let (di, d) = dst?;
    if masked && d.eew != 1 && d.overlaps(&mask) && row.class != Class::VReduce {
        return Some("masked instruction writes v0".into());
    }
    let no_overlap = destination_apart(row);
    for (i, s) in &srcs {
        if *i == di || !d.overlaps(s) || s.eew == 0 {
            continue;
        }
        if no_overlap {
            return Some(format!("destination overlaps `{}`", row.ops[*i].name));
        }
        if d.eew == s.eew {
            continue;
        }
        let ok = if d.eew < s.eew {
            // narrowing: overlap allowed in the lowest-numbered part of the source
            d.first == s.first
        } else {
            // widening: overlap allowed in the highest-numbered part of the destination,
            // source EMUL >= 1
            s.first + s.count == d.first + d.count && s.eew > 1
        };
        if !ok {
            return Some(format!("destination overlaps `{}` with a different element width", row.ops[*i].name));
        }
    }
    None
}
