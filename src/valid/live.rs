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
//! The least fixed point is found with a worklist (any order reaches the same one, since the
//! facts only grow).

use super::cfg::ControlFlow;
use super::init::{words, RegSet};
use crate::ir::{Kernel, Operand};
use std::collections::VecDeque;

/// For each instruction, the registers live after it, as bit sets (`u64` words, bit `r % 64` of
/// word `r / 64`).
pub fn live_out(kernel: &Kernel, flow: &ControlFlow) -> Vec<Vec<u64>> {
    let n = kernel.insts.len();
    let regs = kernel.num_regs as usize;
    let mut live_in: Vec<RegSet> = vec![RegSet::empty(regs); n];
    let out_of = |pc: usize, live_in: &[RegSet]| -> RegSet {
        let mut out = RegSet::empty(regs);
        for &s in flow.succ.get(pc).map(Vec::as_slice).unwrap_or(&[]) {
            if let Some(set) = live_in.get(s as usize) {
                for (a, b) in out.0.iter_mut().zip(&set.0) {
                    *a |= b;
                }
            }
        }
        out
    };
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (pc, succ) in flow.succ.iter().enumerate() {
        for &s in succ {
            if let Some(p) = preds.get_mut(s as usize) {
                p.push(pc);
            }
        }
    }
    // A worklist, first in reverse instruction order, until nothing changes (facts only grow):
    // a changed `live_in` requeues only the predecessors, so a long chain of backward branches
    // costs one visit per instruction per change instead of one pass over the kernel per link.
    let mut queued = vec![true; n];
    let mut work: VecDeque<usize> = (0..n).rev().collect();
    while let Some(pc) = work.pop_front() {
        queued[pc] = false;
        let inst = &kernel.insts[pc];
        let mut fact = out_of(pc, &live_in);
        if !inst.guard.is_never() {
            if inst.guard.is_always() {
                let mut killed = RegSet::empty(regs);
                for (reg, w) in inst.op.dst_uses() {
                    for r in words(reg, w) {
                        killed.insert(r);
                    }
                }
                for (a, k) in fact.0.iter_mut().zip(&killed.0) {
                    *a &= !k;
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
        if fact != live_in[pc] {
            live_in[pc] = fact;
            for &p in &preds[pc] {
                if !queued[p] {
                    queued[p] = true;
                    work.push_back(p);
                }
            }
        }
    }
    (0..n).map(|pc| out_of(pc, &live_in).0).collect()
}
