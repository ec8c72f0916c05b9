//! The per-function report printed by `kgen check` and written at the top of each emitted
//! function: registers used, frame, callee-saved set, values live at once.

use crate::ir::{Item, Opnd, Reg};
use crate::analysis::liveness;
use crate::module::Lowered;
use crate::text::XNAMES;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub name: String,
    pub instructions: usize,
    pub xregs: Vec<u8>,
    pub vregs: Vec<u8>,
    pub frame_size: u32,
    pub saved: Vec<u8>,
    /// Most integer / vector registers holding live values at one point.
    pub max_live_x: usize,
    pub max_live_v: usize,
    /// Declared leaks the constant-time lint saw: (kind, instructions, reason).
    pub declared: Vec<(String, usize, String)>,
    /// What the allocator spilled.
    pub spills: crate::ir::Spills,
    /// The classes the constant-time check covered on this target.
    pub constant_time: String,
}

/// What the constant-time check covers on `t`: branches and addresses everywhere, the
/// multiplier's latency where it depends on the data, divisions everywhere (no target has
/// a divider of constant time).
pub fn constant_time_classes(t: &crate::target::Target) -> String {
    let mut c = vec!["branches", "addresses"];
    if t.multiplier == crate::target::Multiplier::C906 {
        c.push("multiplies");
    }
    c.push("divisions");
    format!("constant time ({})", c.join(", "))
}

impl Report {
    pub fn of(l: &Lowered) -> Report {
        let f = &l.func;
        let mut x = [false; 32];
        let mut v = [false; 32];
        for it in &f.items {
            if let Item::Inst(i) = it {
                for o in &i.ops {
                    match o {
                        Opnd::Reg(Reg::X(n)) => x[*n as usize] = true,
                        Opnd::Reg(Reg::V(n)) => v[*n as usize] = true,
                        _ => {}
                    }
                }
            }
        }
        let (_, live_out) = liveness(f);
        let max_live_x = live_out.iter().map(|b| b.iter().filter(|&k| (1..32).contains(&k) && k != 2).count()).max().unwrap_or(0);
        let max_live_v = live_out.iter().map(|b| b.iter().filter(|&k| (32..64).contains(&k)).count()).max().unwrap_or(0);
        Report {
            name: f.name.clone(),
            instructions: f.inst_count(),
            xregs: (0..32u8).filter(|&r| x[r as usize] && r != 0).collect(),
            vregs: (0..32u8).filter(|&r| v[r as usize]).collect(),
            frame_size: l.frame.size + l.frame.host,
            saved: l.frame.saved.iter().map(|(r, _)| *r).collect(),
            max_live_x,
            max_live_v,
            declared: f
                .leaks
                .iter()
                .map(|d| {
                    let n = l.findings.iter().filter(|x| x.declared && x.check.leak() == Some(d.kind)).count();
                    (format!("{:?}", d.kind), n, d.reason.clone())
                })
                .collect(),
            spills: l.frame.spills.clone(),
            constant_time: constant_time_classes(&f.target),
        }
    }

    /// The report as comment lines (without comment markers).
    pub fn lines(&self) -> Vec<String> {
        let names = |rs: &[u8]| rs.iter().map(|&r| XNAMES[r as usize]).collect::<Vec<_>>().join(" ");
        let mut out = vec![
            format!("{}: {} instructions, frame {} bytes", self.name, self.instructions, self.frame_size),
            format!("  integer registers: {}", names(&self.xregs)),
        ];
        if !self.vregs.is_empty() {
            out.push(format!("  vector registers: {}", self.vregs.iter().map(|v| format!("v{v}")).collect::<Vec<_>>().join(" ")));
        }
        out.push(format!("  callee-saved saved/restored: {}", if self.saved.is_empty() { "none".into() } else { names(&self.saved) }));
        out.push(format!("  most live values at once: {} integer, {} vector registers", self.max_live_x, self.max_live_v));
        let sp = &self.spills;
        if sp.values.is_empty() && sp.remade.is_empty() {
            out.push("  spills: none".into());
        } else {
            let mut parts = Vec::new();
            if !sp.values.is_empty() {
                parts.push(format!("{} values ({}), {} stores, {} reloads", sp.values.len(), sp.values.join(", "), sp.stores, sp.reloads));
            }
            if !sp.remade.is_empty() {
                parts.push(format!("{} values remade where read ({}), {} instructions", sp.remade.len(), sp.remade.join(", "), sp.remakes));
            }
            out.push(format!("  spills: {}, modeled cost {} cycles per pass (loops counted 8 times per level)", parts.join("; "), sp.cost));
        }
        out.push("  checked: callee-saved and ra restored, sp restored and aligned, reserved registers untouched,".into());
        out.push("    no read before write, stack accesses in the frame, vtype set, vector groups aligned,".into());
        out.push(format!("    no secret left in registers or stack, no store through a read-only pointer, {}", self.constant_time));
        for (kind, n, reason) in &self.declared {
            out.push(format!("  declared leak {kind} ({n} instructions): {reason}"));
        }
        out
    }
}
