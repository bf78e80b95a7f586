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
use crate::ir::{Inst, MemOrder};

/// The order of a load.
pub fn check_load(d: &mut Diagnostics, pc: u32, inst: &Inst, order: MemOrder) {
    match order {
        MemOrder::Weak | MemOrder::Relaxed | MemOrder::Acquire | MemOrder::Volatile => {}
        MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst => d.error(
            pc,
            inst,
            format!(
                "a load cannot be .{}: loads are weak, relaxed, acquire or volatile (a seq_cst load is fence.sc then ld.acquire)",
                order.name()
            ),
            rules::LOAD_ORDER,
        ),
    }
}

/// The order of a store.
pub fn check_store(d: &mut Diagnostics, pc: u32, inst: &Inst, order: MemOrder) {
    match order {
        MemOrder::Weak | MemOrder::Relaxed | MemOrder::Release | MemOrder::Volatile => {}
        MemOrder::Acquire | MemOrder::AcqRel | MemOrder::SeqCst => d.error(
            pc,
            inst,
            format!(
                "a store cannot be .{}: stores are weak, relaxed, release or volatile (a seq_cst store is fence.sc then st.relaxed)",
                order.name()
            ),
            rules::STORE_ORDER,
        ),
    }
}

/// The order of an atomic read-modify-write.
pub fn check_atomic(d: &mut Diagnostics, pc: u32, inst: &Inst, order: MemOrder) {
    match order {
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
    }
}

/// The order of a fence.
pub fn check_fence(d: &mut Diagnostics, pc: u32, inst: &Inst, order: MemOrder) {
    match order {
        MemOrder::Acquire | MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst => {}
        MemOrder::Weak | MemOrder::Relaxed | MemOrder::Volatile => d.error(
            pc,
            inst,
            format!(
                "a fence cannot be .{}: fences are sc, acq_rel, release or acquire",
                order.name()
            ),
            rules::FENCE_FORMS,
        ),
    }
}
