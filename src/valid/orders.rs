//! Memory orders of loads, stores, atomics and fences, per the PTX atomics ABI
//! (`001_e732919ae3db9bea.txt`).
//!
//! The ABI maps every C++ order onto `ld.{relaxed,acquire}`, `st.{relaxed,release}`,
//! `atom.{relaxed,acquire,release,acq_rel}` and `fence.{sc,acq_rel,release,acquire}`. A
//! sequentially consistent load, store or RMW is *two* instructions (`fence.sc` then the access),
//! so `SeqCst` is valid only on fences. `Weak` (non-atomic) and `Volatile` belong to plain loads
//! and stores. Scopes are all valid on every memory op (every scope is coherent on one host);
//! they are kept in the IR and reported, never dropped.

use super::{rules, Diagnostics};
use crate::ir::{Inst, MemOrder, Op};

/// Checks the order of `inst` if it is a memory op or a fence.
pub fn check(d: &mut Diagnostics, pc: u32, inst: &Inst) {
    match &inst.op {
        Op::Load { access, .. } => match access.order {
            MemOrder::Weak | MemOrder::Relaxed | MemOrder::Acquire | MemOrder::Volatile => {}
            MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst => d.error(
                pc,
                inst,
                format!(
                    "a load cannot be .{}: loads are weak, relaxed, acquire or volatile (a seq_cst load is fence.sc then ld.acquire)",
                    access.order.name()
                ),
                rules::LOAD_ORDER,
            ),
        },
        Op::Store { access, .. } => match access.order {
            MemOrder::Weak | MemOrder::Relaxed | MemOrder::Release | MemOrder::Volatile => {}
            MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst => d.error(
                pc,
                inst,
                format!(
                    "a store cannot be .{}: stores are weak, relaxed, release or volatile (a seq_cst store is fence.sc then st.relaxed)",
                    access.order.name()
                ),
                rules::STORE_ORDER,
            ),
        },
        Op::Atomic(a) => match a.access.order {
            MemOrder::Relaxed | MemOrder::Acquire | MemOrder::Release | MemOrder::AcqRel => {}
            MemOrder::SeqCst => d.error(
                pc,
                inst,
                "an atomic cannot be .sc: a seq_cst read-modify-write is fence.sc then atom.acquire"
                    .to_string(),
                rules::ATOMIC_ORDER_SEQ_CST,
            ),
            MemOrder::Weak => d.error(
                pc,
                inst,
                "an atomic cannot be weak (non-atomic); the weakest atomic order is relaxed"
                    .to_string(),
                rules::ATOMIC_ORDER_WEAK,
            ),
            MemOrder::Volatile => d.error(
                pc,
                inst,
                "volatile applies only to loads and stores, not to atomics".to_string(),
                rules::VOLATILE_LOAD_STORE,
            ),
        },
        Op::Fence { order, .. } => match order {
            MemOrder::Acquire | MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst => {}
            MemOrder::Weak | MemOrder::Relaxed | MemOrder::Volatile => d.error(
                pc,
                inst,
                format!("a fence cannot be .{}: fences are sc, acq_rel, release or acquire", order.name()),
                rules::FENCE_FORMS,
            ),
        },
        Op::Nop
        | Op::Mov { .. }
        | Op::ReadSpecial { .. }
        | Op::Unary { .. }
        | Op::Binary { .. }
        | Op::IAdd3 { .. }
        | Op::Imad { .. }
        | Op::Lea { .. }
        | Op::Shf(_)
        | Op::Lop3 { .. }
        | Op::SetP { .. }
        | Op::PredLogic { .. }
        | Op::PredMove(_)
        | Op::Select { .. }
        | Op::Convert { .. }
        | Op::Vote { .. }
        | Op::Barrier { .. }
        | Op::Branch { .. }
        | Op::Exit => {}
    }
}
