//! Which registers are live after each instruction: read again, on some path, before every
//! lane on that path overwrites them.
//!
//! The JIT uses it to skip register-file stores no later instruction can read (a value that
//! only feeds the next instructions of the same fused lane pass stays in a host register).
//!
//! # The analysis
//!
//! A backward dataflow over the control-flow graph of `cfg.rs` (a lane always follows one path
//! of it, so a per-path fact is a per-lane fact): `live_out(pc)` is the union of `live_in` over
//! the successors (the virtual exit has nothing live); `live_in(pc)` is the registers `pc`
//! reads, plus `live_out(pc)` minus the registers it writes *unguarded* (a guarded write leaves
//! the old value in lanes whose guard is false, so it kills nothing); every word of a 64-bit
//! source or destination counts; `RZ` is neither read nor written; an instruction that never
//! executes (`@!PT`) reads and writes nothing. Registers are never read across lanes, so no
//! other lane's path matters. After `EXIT` nothing is live: registers are not observable once a
//! lane has exited (a trap ends the launch, and reports no registers either).
//!
//! The least fixed point is found with a worklist over straight-line blocks (`blocks.rs`; any
//! order reaches the same one, since the facts only grow). Only each block's `live_out` is
//! kept; an instruction's is recomputed from its block's end when asked
//! ([`Liveness::live_after`]), so memory is blocks × registers, not instructions × registers.

use super::blocks::Blocks;
use super::cfg::ControlFlow;
use super::init::{words, RegSet};
use crate::ir::{Inst, Kernel, Operand};
use std::collections::VecDeque;

/// The registers live after each block, from which [`Liveness::live_after`] recomputes any
/// instruction's.
#[derive(Debug, Clone, Default)]
pub struct Liveness {
    blocks: Blocks,
    /// Per block: the registers live after its last instruction (bit sets, see [`RegSet`]).
    out: Vec<Vec<u64>>,
}

impl Liveness {
    /// The registers live after instruction `pc` of `kernel` (the kernel this was computed
    /// for), as bit sets: bit `r % 64` of word `r / 64`.
    pub fn live_after(&self, kernel: &Kernel, pc: usize) -> Vec<u64> {
        let Some(&b) = self.blocks.of.get(pc) else {
            return Vec::new();
        };
        let b = b as usize;
        let mut fact = RegSet(self.out[b].clone());
        for later in (pc + 1..self.blocks.ranges[b].end).rev() {
            step_back(&kernel.insts[later], &mut fact);
        }
        fact.0
    }
}

impl Liveness {
    /// Whether register `r` is live after instruction `pc` of `kernel`: scanning forward from
    /// `pc + 1`, a read comes before any unguarded write, or the scan reaches the block's end
    /// with `r` live there. Cost: the distance to the next read or write of `r` in the block,
    /// not the block's length (for a front-end asking about one register at a time).
    pub fn is_live_after(&self, kernel: &Kernel, pc: usize, r: usize) -> bool {
        let Some(&b) = self.blocks.of.get(pc) else {
            return false;
        };
        let b = b as usize;
        for inst in &kernel.insts[pc + 1..self.blocks.ranges[b].end] {
            if inst.guard.is_never() {
                continue;
            }
            let reads = inst.op.operand_uses().iter().any(|u| {
                if let Operand::Reg(reg) = u.operand {
                    words(reg, u.words).any(|w| w == r)
                } else {
                    false
                }
            });
            if reads {
                return true;
            }
            if inst.guard.is_always()
                && inst
                    .op
                    .dst_uses()
                    .into_iter()
                    .any(|(reg, w)| words(reg, w).any(|x| x == r))
            {
                return false;
            }
        }
        self.out[b]
            .get(r / 64)
            .is_some_and(|w| w >> (r % 64) & 1 != 0)
    }

    /// [`Liveness::live_after`] of every instruction of `range`, in order: one backward pass
    /// over each block the range touches (for a backend that asks about every instruction).
    pub fn live_after_range(
        &self,
        kernel: &Kernel,
        range: std::ops::Range<usize>,
    ) -> Vec<Vec<u64>> {
        let range = range.start.min(self.blocks.of.len())..range.end.min(self.blocks.of.len());
        let mut out = vec![Vec::new(); range.len()];
        let mut pc = range.end;
        while pc > range.start {
            let b = self.blocks.of[pc - 1] as usize;
            let block = &self.blocks.ranges[b];
            let mut fact = RegSet(self.out[b].clone());
            for at in (block.start..block.end).rev() {
                if range.contains(&at) {
                    out[at - range.start] = fact.0.clone();
                }
                if at <= range.start {
                    break;
                }
                step_back(&kernel.insts[at], &mut fact);
            }
            pc = block.start.max(range.start);
        }
        out
    }
}

/// `fact` (live after `inst`) becomes the registers live before it.
fn step_back(inst: &Inst, fact: &mut RegSet) {
    if inst.guard.is_never() {
        return;
    }
    if inst.guard.is_always() {
        for (reg, w) in inst.op.dst_uses() {
            for r in words(reg, w) {
                fact.remove(r);
            }
        }
    }
    for u in inst.op.operand_uses() {
        if let Operand::Reg(reg) = u.operand {
            for r in words(reg, u.words) {
                fact.insert(r);
            }
        }
    }
}

/// The liveness of `kernel`'s registers (see the module docs).
pub fn liveness(kernel: &Kernel, flow: &ControlFlow) -> Liveness {
    let n = kernel.insts.len();
    let regs = kernel.num_regs as usize;
    let blocks = Blocks::new(n, flow);
    let count = blocks.ranges.len();
    let mut live_in: Vec<RegSet> = vec![RegSet::empty(regs); count];
    let out_of = |b: usize, live_in: &[RegSet]| -> RegSet {
        let mut out = RegSet::empty(regs);
        for &s in &blocks.succ[b] {
            for (a, x) in out.0.iter_mut().zip(&live_in[s].0) {
                *a |= x;
            }
        }
        out
    };
    // A worklist of blocks, first in reverse order, until nothing changes (facts only grow): a
    // changed `live_in` requeues only the predecessors.
    let mut queued = vec![true; count];
    let mut work: VecDeque<usize> = (0..count).rev().collect();
    while let Some(b) = work.pop_front() {
        queued[b] = false;
        let mut fact = out_of(b, &live_in);
        for pc in blocks.ranges[b].clone().rev() {
            step_back(&kernel.insts[pc], &mut fact);
        }
        if fact != live_in[b] {
            live_in[b] = fact;
            for &p in &blocks.preds[b] {
                if !queued[p] {
                    queued[p] = true;
                    work.push_back(p);
                }
            }
        }
    }
    let out = (0..count).map(|b| out_of(b, &live_in).0).collect();
    Liveness { blocks, out }
}

#[cfg(test)]
mod tests {
    use crate::front::parse;
    use crate::ir::Dialect;

    #[test]
    fn one_register_queries_agree_with_the_whole_sets() {
        // Branches, a loop, guarded writes, a pair: every (instruction, register) query of
        // `is_live_after` against the bit of `live_after`.
        let src = ".kernel k
        S2R R0, SR_TID.X ;
        MOV R1, 0x3 ;
        ISETP.GE.U32.AND P0, PT, R0, 0x10, PT ;
        @P0 BRA `(.L_x_1) ;
        IADD3 R2, R0, R1, RZ ;
        @P0 MOV R3, R2 ;
.L_x_1:
        IADD3 R1, R1, -0x1, RZ ;
        ISETP.NE.AND P1, PT, R1, RZ, PT ;
        @P1 BRA `(.L_x_1) ;
        IMAD.WIDE.U32 R4, R0, 0x4, R2 ;
        MOV R6, R3 ;
        STG.E [R4.64], R6 ;
        EXIT ;";
        let k = parse("t.s", src, Dialect::Sass).unwrap().kernels.remove(0);
        let flow = crate::valid::cfg::analyze(&k);
        let live = super::liveness(&k, &flow);
        for pc in 0..k.insts.len() {
            let all = live.live_after(&k, pc);
            for r in 0..k.num_regs as usize {
                let bit = all.get(r / 64).is_some_and(|w| w >> (r % 64) & 1 != 0);
                assert_eq!(live.is_live_after(&k, pc, r), bit, "pc {pc} R{r}");
            }
        }
    }
}

#[cfg(test)]
mod naive {
    //! The module docs' definition computed the plain way, one set per instruction, iterated
    //! to a fixed point: the block-level analysis must agree with it on every program.

    use super::super::init::RegSet;
    use crate::ir::Kernel;

    fn live_in_naive(kernel: &Kernel, succ: &[Vec<u32>]) -> Vec<RegSet> {
        let n = kernel.insts.len();
        let regs = kernel.num_regs as usize;
        let mut live_in = vec![RegSet::empty(regs); n];
        loop {
            let mut changed = false;
            for pc in (0..n).rev() {
                // One instruction at a time, with the same transfer function: what is compared
                // is the block-level propagation.
                let mut fact = live_out_naive(&live_in, succ, pc, regs);
                super::step_back(&kernel.insts[pc], &mut fact);
                if fact != live_in[pc] {
                    live_in[pc] = fact;
                    changed = true;
                }
            }
            if !changed {
                return live_in;
            }
        }
    }

    fn live_out_naive(live_in: &[RegSet], succ: &[Vec<u32>], pc: usize, regs: usize) -> RegSet {
        let mut out = RegSet::empty(regs);
        for &s in &succ[pc] {
            if let Some(set) = live_in.get(s as usize) {
                for (a, b) in out.0.iter_mut().zip(&set.0) {
                    *a |= b;
                }
            }
        }
        out
    }

    #[test]
    fn block_liveness_matches_the_per_instruction_definition_on_every_sass_program() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/programs/sass");
        let mut checked = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.to_string_lossy().to_string();
            let Ok(program) = crate::front::parse(&name, &text, crate::ir::Dialect::Sass) else {
                continue;
            };
            for k in &program.kernels {
                let flow = crate::valid::cfg::analyze(k);
                let live = super::liveness(k, &flow);
                let live_in = live_in_naive(k, &flow.succ);
                let regs = k.num_regs as usize;
                for pc in 0..k.insts.len() {
                    let want = live_out_naive(&live_in, &flow.succ, pc, regs).0;
                    assert_eq!(live.live_after(k, pc), want, "{name} `{}` pc {pc}", k.name);
                }
                checked += 1;
            }
        }
        assert!(checked >= 10, "only {checked} kernels");
    }
}
