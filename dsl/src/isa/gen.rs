//! Random operands for a row, biased toward edge values (x0, x31, v0, immediate limits), for
//! the cross-check against GNU as and the simulator's differential tests.

use super::*;
use rand::Rng;

/// Extra limits a caller puts on generated operands.
#[derive(Clone, Copy, Debug, Default)]
pub struct Limits {
    /// Largest magnitude of a PC-relative offset (0 = the row's own range).
    pub max_rel: i64,
}

fn pick_imm(rng: &mut impl Rng, s: ImmSpec) -> i64 {
    let a = s.align as i64;
    let v = match rng.random_range(0..8) {
        0 => s.min,
        1 => s.max,
        2 => 0,
        3 if s.min < 0 => -a,
        4 => a.min(s.max),
        _ => rng.random_range(s.min..=s.max),
    };
    let v = v.clamp(s.min, s.max);
    v - v.rem_euclid(a)
}

fn pick_reg(rng: &mut impl Rng) -> i64 {
    match rng.random_range(0..6) {
        0 => 0,
        1 => 31,
        _ => rng.random_range(0..32),
    }
}

/// One operand value of kind `k`.
pub fn random_operand(rng: &mut impl Rng, k: Kind, lim: Limits) -> i64 {
    match k {
        Kind::X | Kind::XMem | Kind::V(_) => pick_reg(rng),
        Kind::Imm(s) | Kind::MemOff(s) => pick_imm(rng, s),
        Kind::Rel(s) => {
            let s = if lim.max_rel > 0 { ImmSpec { min: s.min.max(-lim.max_rel), max: s.max.min(lim.max_rel), ..s } } else { s };
            let v = pick_imm(rng, s);
            v - v.rem_euclid(4)
        }
        Kind::Vm => rng.random_range(0..2),
        Kind::V0 => 0,
        Kind::VtypeTh => rng.random_range(0..4) | (rng.random_range(0..4) << 2) | (rng.random_range(0..4) << 5),
        Kind::Vtype => {
            let lmul = [0, 1, 2, 3, 5, 6, 7][rng.random_range(0..7)];
            lmul | (rng.random_range(0..4) << 3) | (rng.random_range(0..4) << 6)
        }
        Kind::Csr => {
            let n = hart::csr::NAMES;
            n[rng.random_range(0..n.len())].0 as i64
        }
        Kind::FenceSet => rng.random_range(1..16),
        Kind::Lit(v) => v,
    }
}

/// Operand values for `row` that pass its range checks and rules.
pub fn random_operands(row: &Row, rng: &mut impl Rng, lim: Limits) -> Vec<i64> {
    for _ in 0..1000 {
        let v: Vec<i64> = row.ops.iter().map(|o| random_operand(rng, o.kind, lim)).collect();
        if row.encode(&v).is_ok() {
            return v;
        }
    }
    panic!("no valid operands found for {}", row.mnemonic)
}
