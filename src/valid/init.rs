//! Which registers a kernel can read before it has written them.
//!
//! A warp's registers start zeroed. Zeroing the whole register file every time the scheduler
//! reuses a warp for the next CTA costs `num_regs * 32` stores per warp, which for short kernels
//! is a large part of a warp's host overhead. A register that every lane writes before any
//! possible read on every path holds no launch value a program can observe, so it needs no
//! zeroing: this analysis finds those registers.
//!
//! # The analysis
//!
//! A forward "definitely written" dataflow over the control-flow graph of `cfg.rs` (the same
//! graph reconvergence uses; a lane always follows one path of it, so a per-path fact is a
//! per-lane fact):
//!
//! * at the entry nothing is written; the fact at an instruction is the intersection of the
//!   facts after its predecessors (a join keeps only what every incoming path wrote);
//! * an instruction reads its register sources (every word of a pair) *before* it writes: a
//!   source that is not definitely written at that instruction may be read while holding its
//!   launch value, so the register must start zeroed;
//! * an unguarded write (guard `PT`) makes its destination words definitely written afterwards;
//!   a guarded write (`@P`, `@!P`) does not, since lanes whose guard is false keep the old value;
//!   a 64-bit destination writes both words; `RZ` is neither read nor written;
//! * an instruction that never executes (`@!PT`) reads nothing;
//! * unreachable instructions start at "everything written" (the greatest fixpoint), so their
//!   reads count for nothing, which is right: no lane executes them.
//!
//! Predicates are not analysed: they are one word each and are always zeroed.

use super::blocks::Blocks;
use super::cfg::ControlFlow;
use crate::ir::{Kernel, Operand, Reg};
use std::collections::VecDeque;

/// A set of registers as a bit set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RegSet(pub(super) Vec<u64>);

impl RegSet {
    pub(super) fn empty(regs: usize) -> RegSet {
        RegSet(vec![0; regs.div_ceil(64)])
    }
    fn full(regs: usize) -> RegSet {
        let mut s = RegSet(vec![u64::MAX; regs.div_ceil(64)]);
        if regs % 64 != 0 {
            if let Some(last) = s.0.last_mut() {
                *last = (1u64 << (regs % 64)) - 1;
            }
        }
        s
    }
    pub(super) fn contains(&self, r: usize) -> bool {
        self.0.get(r / 64).is_some_and(|w| w & (1 << (r % 64)) != 0)
    }
    pub(super) fn insert(&mut self, r: usize) {
        if let Some(w) = self.0.get_mut(r / 64) {
            *w |= 1 << (r % 64);
        }
    }
    pub(super) fn remove(&mut self, r: usize) {
        if let Some(w) = self.0.get_mut(r / 64) {
            *w &= !(1 << (r % 64));
        }
    }
    fn intersect(&mut self, other: &RegSet) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a &= b;
        }
    }
}

/// The register words `reg` covers as `words` consecutive registers (none for `RZ`).
pub(super) fn words(reg: Reg, words: u16) -> impl Iterator<Item = usize> {
    (0..words)
        .map(move |i| reg.word(i))
        .filter(|r| !r.is_rz())
        .map(|r| usize::from(r.0))
}

/// `fact` (registers definitely written before `inst`) becomes the fact after it.
fn step_forward(inst: &crate::ir::Inst, fact: &mut RegSet) {
    if inst.guard.is_always() {
        for (reg, w) in inst.op.dst_uses() {
            for r in words(reg, w) {
                fact.insert(r);
            }
        }
    }
}

/// For each register of `kernel`: true when no lane can read it before writing it (its launch
/// value is never observed, so it needs no zeroing), false when some path may read it first.
/// Facts are kept per straight-line block (`blocks.rs`) and replayed inside each block.
pub fn written_before_read(kernel: &Kernel, flow: &ControlFlow) -> Vec<bool> {
    let n = kernel.insts.len();
    let regs = kernel.num_regs as usize;
    if n == 0 {
        return vec![true; regs];
    }
    let blocks = Blocks::new(n, flow);
    let count = blocks.ranges.len();
    // `written[b]`: registers definitely written on every path reaching block `b`'s start.
    let mut written: Vec<RegSet> = vec![RegSet::full(regs); count];
    written[0] = RegSet::empty(regs);
    let after = |b: usize, before: &RegSet| -> RegSet {
        let mut out = before.clone();
        for pc in blocks.ranges[b].clone() {
            step_forward(&kernel.insts[pc], &mut out);
        }
        out
    };
    // A worklist of blocks, first in order, until nothing changes (facts only shrink): a
    // changed fact requeues only the successors. Block 0 also has the entry as a predecessor,
    // whose fact is empty.
    let mut queued = vec![true; count];
    let mut work: VecDeque<usize> = (0..count).collect();
    while let Some(b) = work.pop_front() {
        queued[b] = false;
        let mut fact = if b == 0 {
            RegSet::empty(regs)
        } else {
            RegSet::full(regs)
        };
        for &p in &blocks.preds[b] {
            fact.intersect(&after(p, &written[p]));
        }
        if fact != written[b] {
            written[b] = fact;
            for &s in &blocks.succ[b] {
                if !queued[s] {
                    queued[s] = true;
                    work.push_back(s);
                }
            }
        }
    }
    let mut safe = vec![true; regs];
    for (b, range) in blocks.ranges.iter().enumerate() {
        let mut fact = written[b].clone();
        for pc in range.clone() {
            let inst = &kernel.insts[pc];
            let runs = !inst.guard.is_never() && flow.reachable.get(pc).copied().unwrap_or(false);
            if runs {
                for u in inst.op.operand_uses() {
                    if let Operand::Reg(reg) = u.operand {
                        for r in words(reg, u.words) {
                            if !fact.contains(r) {
                                if let Some(s) = safe.get_mut(r) {
                                    *s = false;
                                }
                            }
                        }
                    }
                }
            }
            step_forward(inst, &mut fact);
        }
    }
    safe
}

#[cfg(test)]
mod naive {
    //! The module docs' definition computed one set per instruction, iterated to a fixed
    //! point: the block-level analysis must agree with it on every program.

    use super::{words, RegSet};
    use crate::ir::{Kernel, Operand};

    fn written_before_read_naive(kernel: &Kernel, flow: &super::ControlFlow) -> Vec<bool> {
        let n = kernel.insts.len();
        let regs = kernel.num_regs as usize;
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (pc, succ) in flow.succ.iter().enumerate() {
            for &s in succ {
                if (s as usize) < n {
                    preds[s as usize].push(pc);
                }
            }
        }
        let after = |pc: usize, before: &RegSet| {
            let mut out = before.clone();
            let inst = &kernel.insts[pc];
            if inst.guard.is_always() {
                for (reg, w) in inst.op.dst_uses() {
                    for r in words(reg, w) {
                        out.insert(r);
                    }
                }
            }
            out
        };
        let mut written = vec![RegSet::full(regs); n];
        loop {
            let mut changed = false;
            for pc in 0..n {
                let mut fact = if pc == 0 {
                    RegSet::empty(regs)
                } else {
                    RegSet::full(regs)
                };
                for &p in &preds[pc] {
                    fact.intersect(&after(p, &written[p]));
                }
                if fact != written[pc] {
                    written[pc] = fact;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut safe = vec![true; regs];
        for (pc, inst) in kernel.insts.iter().enumerate() {
            if inst.guard.is_never() || !flow.reachable[pc] {
                continue;
            }
            for u in inst.op.operand_uses() {
                if let Operand::Reg(reg) = u.operand {
                    for r in words(reg, u.words) {
                        if !written[pc].contains(r) {
                            safe[r] = false;
                        }
                    }
                }
            }
        }
        safe
    }

    #[test]
    fn block_dataflow_matches_the_per_instruction_definition_on_every_sass_program() {
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
                assert_eq!(
                    super::written_before_read(k, &flow),
                    written_before_read_naive(k, &flow),
                    "{name} `{}`",
                    k.name
                );
                checked += 1;
            }
        }
        assert!(checked >= 10, "only {checked} kernels");
    }
}
