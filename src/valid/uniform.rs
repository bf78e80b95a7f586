//! Warp-invariant registers: registers whose value, wherever any lane can read it, is the same
//! in every lane of the warp. Backends compute such a value once per warp instead of once per
//! lane, and an atomic whose address is invariant updates one word for the whole warp.
//!
//! # The rule
//!
//! A register word `r` is *invariant* when
//!
//! 1. exactly one reachable instruction `d` writes it (`@!PT` instructions write nothing);
//! 2. `d` is unguarded, pure per-lane work ([`crate::ir::Op::is_pure_per_lane`]) that writes no
//!    predicate and reads none;
//! 3. every source of `d` is an immediate, a constant-bank read, a special register that is the
//!    same in every lane of a warp ([`crate::ir::SpecialReg::is_warp_uniform`]: CTA and grid
//!    geometry and indices, the warp's index, the shared window), or an invariant register;
//! 4. `d` strictly dominates every reachable instruction that reads `r`.
//!
//! # Why every lane reads the same value
//!
//! Take a lane that reads `r` at `u`. By 4 it has executed `d` on its way to `u`; by 1 nothing
//! else wrote `r` since. By 2 and 3, `d` computed a pure function of values that are the same
//! in every lane and at every execution: immediates, the constant bank (nothing writes it
//! during a launch), uniform special registers, and invariant registers, whose own definitions
//! strictly dominate `d` (their reads at `d` are covered by 4), so by induction on the
//! dominator tree they too read the same everywhere. So every execution of `d`, by any lane of
//! the warp, at any time, writes the same value, and that is what every read sees.
//!
//! This holds however the scheduler groups lanes: it does not assume lanes reconverge, so it
//! survives dissolved joins and groups merged with different histories (independent thread
//! scheduling). It does not claim more: a loop counter that a uniform loop increments is
//! written twice (its initialisation and its increment) and is not invariant, because lanes
//! that diverged before the loop may run it at different times and the scheduler may put lanes
//! with different counts in one group. Neither does a load from a uniform address give an
//! invariant value (another thread may write between two lanes' loads).
//!
//! Backends may also write the value into the slots of lanes that have not executed `d` yet:
//! by 4 no such lane reads `r` before it executes `d` itself, which writes the same value.
//!
//! The analysis is linear in the kernel: one pass collects definitions, one pass checks every
//! read against the dominator tree in constant time, and a worklist removes registers whose
//! definition reads a register that turned out not to be invariant.

use super::cfg::{ControlFlow, Dominators};
use crate::ir::{Kernel, Op, Operand, Use};

/// The definition of each register word: none yet, exactly one instruction, or several.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Def {
    None,
    One(u32),
    Many,
}

/// For each register word of `kernel`: whether it is invariant (see the module docs).
pub fn invariant_registers(kernel: &Kernel, flow: &ControlFlow) -> Vec<bool> {
    let regs = kernel.num_regs as usize;
    let mut def = vec![Def::None; regs];
    for (pc, inst) in kernel.insts.iter().enumerate() {
        if !flow.reachable[pc] || inst.guard.is_never() {
            continue;
        }
        inst.op.for_each_use(|u| {
            if let Use::Dst { reg, words } = u {
                for w in 0..words {
                    let r = reg.word(w);
                    if let Some(d) = def.get_mut(usize::from(r.0)) {
                        *d = match *d {
                            Def::None => Def::One(pc as u32),
                            Def::One(_) | Def::Many => Def::Many,
                        };
                    }
                }
            }
        });
    }

    // Rules 1 and 2, and the immediate and special-register part of 3.
    let candidate_def = |pc: usize| {
        let inst = &kernel.insts[pc];
        if !inst.guard.is_always() || !inst.op.is_pure_per_lane() {
            return false;
        }
        if let Op::ReadSpecial { sr, .. } = inst.op {
            return sr.is_warp_uniform();
        }
        let mut ok = true;
        inst.op.for_each_use(|u| match u {
            Use::PredSrc(p) | Use::PredDst(p) => ok &= p.is_pt(),
            Use::Src { .. } | Use::Dst { .. } => {}
        });
        ok
    };
    let mut invariant: Vec<bool> = def
        .iter()
        .map(|d| matches!(*d, Def::One(pc) if candidate_def(pc as usize)))
        .collect();

    // Rule 4: every read is strictly dominated by the definition. Also record, for the
    // worklist, which invariant candidates each register's definition feeds.
    let dom = Dominators::of(flow);
    let mut readers: Vec<Vec<u16>> = vec![Vec::new(); regs];
    for (pc, inst) in kernel.insts.iter().enumerate() {
        if !flow.reachable[pc] || inst.guard.is_never() {
            continue;
        }
        let defines: Vec<u16> = {
            let mut v = Vec::new();
            inst.op.for_each_use(|u| {
                if let Use::Dst { reg, words } = u {
                    v.extend((0..words).map(|w| reg.word(w).0));
                }
            });
            v
        };
        inst.op.for_each_use(|u| {
            let Use::Src {
                operand: Operand::Reg(base),
                words,
            } = u
            else {
                return;
            };
            for w in 0..words {
                let r = base.word(w);
                let Some(&d) = def.get(usize::from(r.0)) else {
                    continue;
                };
                if let Def::One(d) = d {
                    if !dom.strictly_dominates(d as usize, pc) {
                        invariant[usize::from(r.0)] = false;
                    }
                }
                for &out in &defines {
                    if invariant.get(usize::from(out)) == Some(&true) {
                        readers[usize::from(r.0)].push(out);
                    }
                }
            }
        });
    }

    // Rest of rule 3: a definition that reads a non-invariant register is not invariant (a
    // register nobody writes reads zero everywhere, but is not a candidate: conservative).
    let mut work: Vec<usize> = (0..regs).filter(|&r| !invariant[r]).collect();
    while let Some(r) = work.pop() {
        for &out in &readers[r] {
            let out = usize::from(out);
            if invariant[out] {
                invariant[out] = false;
                work.push(out);
            }
        }
    }
    invariant
}
