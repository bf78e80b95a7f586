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
//! 4. `d` strictly dominates every reachable instruction that reads `r`;
//! 5. no `SHFL` reads `r` across lanes (it may read a lane that has not executed `d`).
//!
//! # Why every lane reads the same value
//!
//! Take a lane that reads `r` at `u` (in its own slot: by 5, no lane reads `r` in another's).
//! By 4 it has executed `d` on its way to `u`; by 1 nothing
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
        // Rule 5: `SHFL` reads its source in other lanes, which may not have executed the
        // definition (inactive or diverged lanes): such a register is not invariant.
        if let Op::Shfl {
            a: Operand::Reg(r), ..
        } = inst.op
        {
            if let Some(v) = invariant.get_mut(usize::from(r.0)) {
                *v = false;
            }
        }
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

#[cfg(test)]
mod tests {
    use crate::front::parse;
    use crate::ir::Dialect;

    /// The invariant registers of the one kernel of SASS listing `body`.
    fn invariant_of(body: &str) -> Vec<bool> {
        let src = format!(".kernel k\n{body}");
        let k = parse("t.s", &src, Dialect::Sass)
            .unwrap_or_else(|e| panic!("{e:?}"))
            .kernels
            .remove(0);
        let flow = crate::valid::cfg::analyze(&k);
        super::invariant_registers(&k, &flow)
    }

    /// Asserts that exactly the registers of `yes` among `yes` and `no` are invariant.
    fn check(inv: &[bool], yes: &[u16], no: &[u16]) {
        for &r in yes {
            assert!(inv[usize::from(r)], "R{r} should be invariant: {inv:?}");
        }
        for &r in no {
            assert!(
                !inv[usize::from(r)],
                "R{r} should not be invariant: {inv:?}"
            );
        }
    }

    #[test]
    fn constants_immediates_and_uniform_special_registers_are_invariant_lane_ids_are_not() {
        let inv = invariant_of(
            "
        MOV R1, c[0x0][0x160] ;
        MOV R2, 0x7 ;
        S2R R3, SR_CTAID.X ;
        S2R R4, SR_TID.X ;
        S2R R5, SR_LANEID ;
        S2R R14, SR_LTMASK ;
        IMAD R6, R1, R2, R3 ;
        IADD3 R7, R4, 0x1, RZ ;
        IADD3 R8, R7, R1, RZ ;
        IMAD R9, R8, R2, RZ ;
        IMAD R15, R6, R5, RZ ;
        LDC.64 R10, c[0x0][0x168] ;
        IMAD.WIDE.U32 R12, R6, 0x4, R10 ;
        STG.E [R12.64], R9 ;
        STG.E [R12.64+0x4], R15 ;
        STG.E [R12.64+0x8], R14 ;
        EXIT ;",
        );
        // R6 from three invariant sources; R10:R11 both words of a 64-bit constant load;
        // R12:R13 a wide product of invariant registers.
        check(&inv, &[1, 2, 3, 6, 10, 11, 12, 13], &[4, 5, 14]);
        // R7 <- R4 (the thread index), R8 <- R7, R9 <- R8: the chain of three is not
        // invariant; neither is an invariant times a lane id (R15).
        check(&inv, &[], &[7, 8, 9, 15]);
        // A register nobody writes is not a candidate.
        check(&inv, &[], &[0]);
    }

    #[test]
    fn a_register_another_lane_reads_with_shfl_is_not_invariant() {
        // R1 would be invariant, but SHFL reads it in lane R3, which may not have executed its
        // definition; R2, read only in its own lane, stays invariant; R5 (from R1) goes too.
        let inv = invariant_of(
            "
        MOV R1, c[0x0][0x160] ;
        MOV R2, c[0x0][0x164] ;
        S2R R3, SR_LANEID ;
        SHFL.IDX PT, R4, R1, R3, 0x1f ;
        IADD3 R5, R1, 0x1, RZ ;
        IADD3 R6, R2, 0x1, RZ ;
        LDC.64 R8, c[0x0][0x168] ;
        STG.E [R8.64], R4 ;
        STG.E [R8.64+0x4], R5 ;
        STG.E [R8.64+0x8], R6 ;
        EXIT ;",
        );
        check(&inv, &[2, 6, 8, 9], &[1, 3, 4, 5]);
    }

    #[test]
    fn second_writes_loops_guards_and_predicate_readers_are_not_invariant() {
        let inv = invariant_of(
            "
        MOV R1, 0x1 ;
        MOV R2, 0x5 ;
        MOV R3, 0x9 ;
        ISETP.GE.U32.AND P0, PT, R3, 0x3, PT ;
        @P0 MOV R4, 0x2 ;
        MOV R1, 0x1 ;
.L_x_0:
        IADD3 R2, R2, -0x1, RZ ;
        ISETP.NE.AND P1, PT, R2, RZ, PT ;
        @P1 BRA `(.L_x_0) ;
        IADD3 R5, R1, R3, RZ ;
        IADD3 R6, R3, 0x1, RZ ;
        SEL R7, R3, R6, P0 ;
        IADD3.X R8, R3, R6, RZ, P0, !PT ;
        LOP3.LUT P2, R9, R3, 0x1, RZ, 0xc0, !PT ;
        IADD3 R10, R6, R3, RZ ;
        IADD3 R11, R4, 0x1, RZ ;
        EXIT ;",
        );
        // R3, R6 and R10 (from R3 and R6) are; R1 (written twice, with the same value), R2
        // (the loop counter), R4 (guarded), R5 (reads R1), R7 (SEL reads P0), R8 (the carry
        // in), R9 (LOP3 writes P2) and R11 (reads the guarded R4) are not.
        check(&inv, &[3, 6, 10], &[1, 2, 4, 5, 7, 8, 9, 11]);
    }

    #[test]
    fn a_definition_must_strictly_dominate_every_read() {
        let inv = invariant_of(
            "
        S2R R0, SR_TID.X ;
        ISETP.GE.U32.AND P0, PT, R0, 0x10, PT ;
        @P0 BRA `(.L_x_1) ;
        MOV R1, 0x5 ;
        MOV R2, 0x6 ;
        IADD3 R3, R2, 0x1, RZ ;
.L_x_1:
        MOV R4, 0x7 ;
        IADD3 R5, R1, R4, RZ ;
        IADD3 R6, R7, 0x1, RZ ;
        MOV R7, 0x3 ;
        IADD3 R8, R8, 0x1, RZ ;
        IADD3 R9, R4, R7, RZ ;
        EXIT ;",
        );
        // R2 and R3 are written on one side and read only there; R4 after the join.
        check(&inv, &[2, 3, 4], &[0]);
        // R1 is written on one side and read after the join (lanes of the other side read
        // zero), and R5 reads it; R6 reads R7 at pc 8, before R7's definition at pc 9, so R7
        // is not invariant and neither is R9, which reads it after its definition; R8 reads
        // itself.
        check(&inv, &[], &[1, 5, 6, 7, 8, 9]);
    }

    #[test]
    fn unreachable_and_never_executed_writes_do_not_count() {
        let inv = invariant_of(
            "
        MOV R1, 0x5 ;
        MOV R4, 0x1 ;
        BRA `(.L_x_2) ;
        MOV R1, 0x6 ;
.L_x_2:
        @!PT MOV R2, 0x1 ;
        MOV R2, 0x3 ;
        IADD3 R3, R1, R2, RZ ;
        MOV R4, 0x1 ;
        IADD3 R5, R4, R3, RZ ;
        EXIT ;",
        );
        // The second write of R1 is unreachable, the first of R2 never executes: both count
        // once. R4 is written twice on the path.
        check(&inv, &[1, 2, 3], &[4, 5]);
    }
}
