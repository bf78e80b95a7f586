//! Lane-constant predicates: predicates whose value, wherever any lane reads it, is a fixed
//! function of the lane's index in its warp. The JIT uses their lane sets to prove that two
//! memory accesses of a region happen in the same order lane by lane as instruction by
//! instruction (`fusion_regions` in `jit/translate`): vISA's SIMD16 and SIMD32 messages are
//! split into 8-channel messages guarded by such predicates (`laneid - 8 < 8`), and the lanes
//! of one message all come before the next one's.
//!
//! # The rule
//!
//! A predicate `p` (a per-lane slot: not `PT`, not uniform) has the *lane set* `M` when
//!
//! 1. exactly one reachable instruction `d` writes it (`@!PT` instructions write nothing);
//! 2. `d` is an unguarded `SetP` without a chained low-word result, combined with `PT` or
//!    `!PT`, comparing in a 32-bit integer type, whose other destination (if any) is `PT`;
//! 3. each operand of `d` is a *lane expression*: an immediate, or a register (per-lane, not
//!    `RZ`) whose last write before the reader, walking back along straight-line code (each
//!    instruction the only predecessor of the next, and the next its only successor), is an
//!    unguarded `S2R laneid`, a one-word `Mov` of a lane expression, or a 32-bit integer
//!    `Binary` of lane expressions with a one-word result;
//! 4. `d` strictly dominates every reachable instruction that reads `p` (as its guard or as a
//!    predicate source).
//!
//! `M` has bit `l` set when `d`, evaluated for lane `l` (`laneid = l`) with the operations'
//! own semantics (`crate::sem`), yields true; lanes at or above the warp size are clear.
//!
//! # Why every read sees `M`
//!
//! A lane `l` that reads `p` at `u` executed `d` on its way there (4), and nothing else wrote
//! `p` since (1). By 2, `d` wrote the combination of its compare with a constant. By 3, each
//! register operand was last written, just before on the straight-line path into `d` (every
//! lane executing `d` executed those instructions in that order, and, being unguarded, each one
//! wrote its destination in every executing lane), by an instruction whose value for lane `l`
//! depends only on `l` and immediates; by induction, so does the compare. So lane `l` reads the
//! value the evaluation for `l` computed. Nothing about which lanes run together, or when, is
//! assumed.

use super::cfg::{ControlFlow, Dominators};
use crate::ir::{Kernel, Op, Operand, Pred, Reg, SpecialReg, Src, Ty, Use};
use crate::sem;

/// How far back [`Lanes::last_write`] looks for a register's last write, and how deep a lane
/// expression may nest: enough for a front end's index arithmetic before a compare. With each
/// writer evaluated once ([`Lanes::written`]), the analysis takes at most `MAX_WALK` steps per
/// operand of each compare and writer.
const MAX_WALK: usize = 64;
const MAX_DEPTH: u32 = 16;

/// A value in each lane of a warp (lanes at or above the warp size are unused).
type PerLane = [u64; 32];

/// Lane-constant predicates and their lane sets: entry `p` is `Some(M)` when predicate `Pp`
/// has lane set `M` (see the module docs).
pub fn lane_sets(kernel: &Kernel, flow: &ControlFlow) -> Vec<Option<u32>> {
    let preds = kernel.num_preds as usize;
    // The one writer of each predicate, or `None` (several, or none).
    let mut writer: Vec<(u32, Option<usize>)> = vec![(0, None); preds];
    for (pc, inst) in kernel.insts.iter().enumerate() {
        if !flow.reachable[pc] || inst.guard.is_never() {
            continue;
        }
        inst.op.for_each_use(|u| {
            if let Use::PredDst(p) = u {
                if let Some(w) = writer.get_mut(usize::from(p.0)) {
                    *w = (w.0 + 1, Some(pc));
                }
            }
        });
    }
    let lanes = Lanes::new(kernel, flow);
    let mut sets: Vec<Option<u32>> = writer
        .iter()
        .enumerate()
        .map(|(p, &(writes, pc))| match pc {
            Some(d) if writes == 1 && !kernel.uniform.has_pred(Pred(p as u16)) => {
                lanes.compare(d, Pred(p as u16))
            }
            _ => None,
        })
        .collect();
    if sets.iter().all(Option::is_none) {
        return sets;
    }
    // Rule 4.
    let dom = Dominators::of(flow);
    for (pc, inst) in kernel.insts.iter().enumerate() {
        if !flow.reachable[pc] {
            continue;
        }
        let mut reads = vec![inst.guard.pred];
        inst.op.for_each_use(|u| {
            if let Use::PredSrc(p) = u {
                reads.push(p);
            }
        });
        for p in reads {
            let Some(set) = sets.get_mut(usize::from(p.0)) else {
                continue;
            };
            if set.is_some() {
                let d = writer[usize::from(p.0)].1.expect("a lane set has a writer");
                if !dom.strictly_dominates(d, pc) {
                    *set = None;
                }
            }
        }
    }
    sets
}

/// A 32-bit integer type.
fn word_int(ty: Ty) -> bool {
    ty.is_int() && ty.bits() == 32
}

/// The evaluation of lane expressions in one kernel.
struct Lanes<'a> {
    kernel: &'a Kernel,
    /// For each instruction `pc > 0`: control reaches it only from `pc - 1`, and `pc - 1`
    /// passes control only to it.
    straight: Vec<bool>,
    /// Lanes of the kernel's warps (at most 32).
    width: usize,
    /// What each instruction already evaluated writes ([`Lanes::written`]): every writer is
    /// evaluated once, however many expressions read it.
    memo: std::cell::RefCell<std::collections::HashMap<usize, Option<PerLane>>>,
    /// Evaluations made (what the memo bounds by the kernel's length).
    evaluations: std::cell::Cell<usize>,
}

impl<'a> Lanes<'a> {
    fn new(kernel: &'a Kernel, flow: &ControlFlow) -> Lanes<'a> {
        let n = kernel.insts.len();
        let mut into = vec![0u32; n];
        for succ in &flow.succ {
            for &s in succ {
                if let Some(c) = into.get_mut(s as usize) {
                    *c += 1;
                }
            }
        }
        let straight = (0..n)
            .map(|pc| pc > 0 && into[pc] == 1 && flow.succ[pc - 1] == [pc as u32])
            .collect();
        Lanes {
            kernel,
            straight,
            width: kernel.warp_size.min(32) as usize,
            memo: Default::default(),
            evaluations: Default::default(),
        }
    }

    /// Rule 2 for the writer `d` of `p`, and the lane set its evaluation gives.
    fn compare(&self, d: usize, p: Pred) -> Option<u32> {
        let inst = &self.kernel.insts[d];
        let Op::SetP {
            cmp,
            ty,
            combine,
            dst,
            dst2,
            ref a,
            ref b,
            c,
            chain: None,
        } = inst.op
        else {
            return None;
        };
        if !inst.guard.is_always() || !word_int(ty) || !c.pred.is_pt() || dst != p || !dst2.is_pt()
        {
            return None;
        }
        let c = !c.negate;
        let a = self.source(d, a, ty, 0)?;
        let b = self.source(d, b, ty, 0)?;
        let mut set = 0;
        for lane in 0..self.width {
            let r = sem::alu::compare(cmp, ty, a[lane], b[lane]);
            if sem::alu::bool_op(combine, r, c) {
                set |= 1 << lane;
            }
        }
        Some(set)
    }

    /// Rule 3: the value of source `src` of instruction `reader`, read as `ty`, in each lane.
    fn source(&self, reader: usize, src: &Src, ty: Ty, depth: u32) -> Option<PerLane> {
        let raw = self.operand(reader, &src.operand, depth)?;
        Some(raw.map(|v| sem::apply_modifier(ty, src.modifier, v)))
    }

    /// The one-word value of `operand` read by instruction `reader`, in each lane, when it is
    /// a lane expression.
    fn operand(&self, reader: usize, operand: &Operand, depth: u32) -> Option<PerLane> {
        match *operand {
            Operand::Imm(bits) => Some([bits & 0xffff_ffff; 32]),
            Operand::Reg(r) if !r.is_rz() && !self.kernel.uniform.has_reg(r) => {
                let w = self.last_write(reader, r)?;
                self.written(w, depth + 1)
            }
            Operand::Reg(_) | Operand::Const { .. } => None,
        }
    }

    /// What instruction `w` (the last writer of its one-word destination) writes, in each lane,
    /// when it is an unguarded lane expression.
    fn written(&self, w: usize, depth: u32) -> Option<PerLane> {
        if let Some(&known) = self.memo.borrow().get(&w) {
            return known;
        }
        // (A writer met too deep is taken as no lane expression, and remembered so: never a
        // wrong value, at worst a lane set not found.)
        let value = self.evaluate(w, depth);
        self.memo.borrow_mut().insert(w, value);
        value
    }

    /// [`Lanes::written`], without the memo.
    fn evaluate(&self, w: usize, depth: u32) -> Option<PerLane> {
        self.evaluations.set(self.evaluations.get() + 1);
        let inst = &self.kernel.insts[w];
        if !inst.guard.is_always() || depth > MAX_DEPTH {
            return None;
        }
        if let Op::ReadSpecial {
            sr: SpecialReg::LaneId,
            ..
        } = inst.op
        {
            return Some(std::array::from_fn(|lane| lane as u64));
        }
        if let Op::Mov { ty, ref src, .. } = inst.op {
            return (ty.regs() == 1).then(|| self.operand(w, src, depth))?;
        }
        let Op::Binary {
            op,
            ty,
            ref a,
            ref b,
            ftz,
            ..
        } = inst.op
        else {
            return None;
        };
        if !word_int(ty) || op.result_words(ty) != 1 {
            return None;
        }
        let a = self.source(w, a, ty, depth)?;
        // A shift amount is one unsigned word whatever the type (as the interpreter reads it).
        let b_ty = if op.b_is_shift_amount() { Ty::U32 } else { ty };
        let b = self.source(w, b, b_ty, depth)?;
        Some(std::array::from_fn(|lane| {
            sem::alu::binary(op, ty, a[lane], b[lane], ftz) as u64 & 0xffff_ffff
        }))
    }

    /// The last instruction before `reader` that writes register `r`, walking back along
    /// straight-line code, when that instruction writes `r` as its only, one-word
    /// destination.
    fn last_write(&self, reader: usize, r: Reg) -> Option<usize> {
        let mut pc = reader;
        for _ in 0..MAX_WALK {
            if !self.straight[pc] {
                return None;
            }
            pc -= 1;
            let (mut writes, mut only) = (false, true);
            self.kernel.insts[pc].op.for_each_use(|u| match u {
                Use::Dst { reg, words } => {
                    if (0..words).any(|i| reg.word(i) == r) {
                        writes = true;
                        only &= words == 1;
                    } else {
                        only = false;
                    }
                }
                Use::PredDst(_) => only = false,
                Use::Src { .. } | Use::PredSrc(_) => {}
            });
            if writes {
                return only.then_some(pc);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::front::parse;
    use crate::ir::{Dialect, Kernel, Op, Operand};

    /// The kernel of a PTX entry whose body is `body` (registers `%r<16>`, `%p<8>`, a shared
    /// array `sm`), validated.
    fn kernel_of(body: &str) -> (Kernel, crate::valid::KernelInfo) {
        let src = format!(
            ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k()\n{{\n\t.reg .pred %p<8>;\n\t.reg .b32 %r<16>;\n\t.shared .align 4 .b8 sm[256];\n{body}\n}}\n"
        );
        let k = parse("t.ptx", &src, Dialect::Ptx)
            .unwrap_or_else(|e| panic!("{e:?}"))
            .kernels
            .remove(0);
        let info = crate::valid::validate(&k).unwrap_or_else(|e| panic!("{e:?}"));
        (k, info)
    }

    /// The lanes of a warp of `warp_size` that each atomic of `body` may execute in, by its
    /// guard, in order.
    fn atomic_lanes(body: &str, warp_size: u32) -> Vec<Option<u32>> {
        let (k, info) = kernel_of(body);
        k.insts
            .iter()
            .filter(|i| matches!(i.op, Op::Atomic(_)))
            .map(|i| info.guard_lanes(i.guard, warp_size))
            .collect()
    }

    const ATOMS: &str = "\t@%p1 atom.shared.add.u32 %r9, [sm], 1;\n\t@!%p1 atom.shared.add.u32 %r9, [sm], 1;\n\tatom.shared.add.u32 %r9, [sm], 1;";

    #[test]
    fn a_compare_of_the_lane_index_gives_its_lanes_and_the_complement() {
        // laneid - 8 < 8 (unsigned): lanes 8 to 15, as vISA's second 8-channel message.
        let body = format!(
            "\tmov.u32 %r1, %laneid;\n\tsub.u32 %r2, %r1, 8;\n\tsetp.lt.u32 %p1, %r2, 8;\n{ATOMS}"
        );
        assert_eq!(
            atomic_lanes(&body, 32),
            [Some(0xff00), Some(0xffff_00ff), Some(u32::MAX)]
        );
        // Narrow warps: the complement stays inside the warp.
        assert_eq!(
            atomic_lanes(&body, 16),
            [Some(0xff00), Some(0x00ff), Some(0xffff)]
        );
        // Shifts, masks, signed compares and combining with !PT (`or` with false).
        let body = format!(
            "\tmov.u32 %r1, %laneid;\n\tshl.b32 %r2, %r1, 3;\n\tand.b32 %r3, %r2, 24;\n\tsetp.eq.s32 %p1, %r3, 16;\n{ATOMS}"
        );
        // (lane << 3) & 24 == 16: lanes with bits 1..0 == 2.
        assert_eq!(atomic_lanes(&body, 32)[0], Some(0x4444_4444));
    }

    #[test]
    fn the_last_write_before_the_compare_counts() {
        // %r1 is the lane index, then 3 in every lane: 3 < 8 everywhere.
        let body = format!(
            "\tmov.u32 %r1, %laneid;\n\tmov.u32 %r1, 3;\n\tsetp.lt.u32 %p1, %r1, 8;\n{ATOMS}"
        );
        assert_eq!(atomic_lanes(&body, 32)[0], Some(u32::MAX));
        // Written again after the compare: the compare still read the lane index.
        let body = format!(
            "\tmov.u32 %r1, %laneid;\n\tsetp.lt.u32 %p1, %r1, 4;\n\tmov.u32 %r1, 9;\n{ATOMS}"
        );
        assert_eq!(atomic_lanes(&body, 32)[0], Some(0xf));
    }

    #[test]
    fn anything_but_the_lane_index_and_immediates_has_no_lane_set() {
        let cases = [
            // The thread index: not a function of the lane alone.
            "\tmov.u32 %r1, %tid.x;\n\tsetp.lt.u32 %p1, %r1, 8;",
            // A guarded write in the chain.
            "\tmov.u32 %r1, %laneid;\n\tsetp.eq.u32 %p2, %r1, 0;\n\t@%p2 mov.u32 %r1, 9;\n\tsetp.lt.u32 %p1, %r1, 8;",
            // A load.
            "\tld.shared.u32 %r1, [sm];\n\tsetp.lt.u32 %p1, %r1, 8;",
            // The predicate written twice.
            "\tmov.u32 %r1, %laneid;\n\tsetp.lt.u32 %p1, %r1, 8;\n\tsetp.lt.u32 %p1, %r1, 4;",
            // The chain's write before a branch target: another path reaches the compare.
            "\tmov.u32 %r1, %laneid;\n\tsetp.eq.u32 %p2, %r1, 0;\n\t@%p2 bra L;\n\tmov.u32 %r1, 5;\nL:\n\tsetp.lt.u32 %p1, %r1, 8;",
            // Combined with another predicate.
            "\tmov.u32 %r1, %laneid;\n\tsetp.eq.u32 %p2, %r1, 0;\n\tsetp.lt.and.u32 %p1, %r1, 8, %p2;",
        ];
        for case in cases {
            let body = format!("{case}\n{ATOMS}");
            let lanes = atomic_lanes(&body, 32);
            assert_eq!(lanes[..2], [None, None], "{case}");
            assert_eq!(lanes[2], Some(u32::MAX), "{case}");
        }
    }

    #[test]
    fn shared_subexpressions_are_evaluated_once() {
        // Fifteen doublings feed thirty compares: each writer is evaluated once (without the
        // memo, a compare would walk its operand's 2^15 paths).
        let mut body = String::from("\tmov.u32 %r1, %laneid;\n");
        for _ in 0..15 {
            body.push_str("\tadd.u32 %r1, %r1, %r1;\n");
        }
        for i in 0..30 {
            body.push_str(&format!("\tsetp.eq.u32 %p1, %r1, {};\n", i << 15));
        }
        let (k, _) = kernel_of(&body);
        let flow = crate::valid::cfg::analyze(&k);
        let lanes = super::Lanes::new(&k, &flow);
        for (pc, inst) in k.insts.iter().enumerate() {
            if let Op::SetP { dst, b, .. } = &inst.op {
                let Operand::Imm(v) = b.operand else {
                    panic!("{:?}", inst.op)
                };
                // lane << 15 == i << 15: lane i.
                assert_eq!(lanes.compare(pc, *dst), Some(1 << (v >> 15)), "pc {pc}");
            }
        }
        assert!(lanes.evaluations.get() <= 16, "{}", lanes.evaluations.get());
    }

    #[test]
    fn a_read_the_compare_does_not_dominate_has_no_lane_set() {
        // The loop reads %p1 at its head, which the entry reaches before the compare (whose
        // own operands are a lane expression).
        let body = "\tmov.u32 %r5, 0;\nL:\n\t@%p1 atom.shared.add.u32 %r9, [sm], 1;\n\tmov.u32 %r1, %laneid;\n\tsetp.lt.u32 %p1, %r1, 8;\n\tadd.u32 %r5, %r5, 1;\n\tsetp.lt.u32 %p3, %r5, 2;\n\t@%p3 bra L;";
        assert_eq!(atomic_lanes(body, 32), [None]);
    }
}
