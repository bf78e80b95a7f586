//! Memory orders, per the PTX atomics ABI (`001_e732919ae3db9bea.txt`).

use super::*;
use atomjit::ir::{AtomicOp, MemOrder, Op, Scope, Space, Ty};
use atomjit::valid::rules;

/// The orders the ABI document uses for each kind of instruction: `ld.relaxed`/`ld.acquire`
/// (plus weak and volatile plain loads), `st.relaxed`/`st.release` (plus weak and volatile),
/// `atom.relaxed/.acquire/.release/.acq_rel`, `fence.sc/.acq_rel/.release/.acquire`.
const LOAD_OK: &[MemOrder] = &[
    MemOrder::Weak,
    MemOrder::Relaxed,
    MemOrder::Acquire,
    MemOrder::Volatile,
];
const STORE_OK: &[MemOrder] = &[
    MemOrder::Weak,
    MemOrder::Relaxed,
    MemOrder::Release,
    MemOrder::Volatile,
];
const ATOMIC_OK: &[MemOrder] = &[
    MemOrder::Relaxed,
    MemOrder::Acquire,
    MemOrder::Release,
    MemOrder::AcqRel,
];
const FENCE_OK: &[MemOrder] = &[
    MemOrder::SeqCst,
    MemOrder::AcqRel,
    MemOrder::Release,
    MemOrder::Acquire,
];

fn set_order(op: Op, order: MemOrder) -> Op {
    match op {
        Op::Load { mut access, dst } => {
            access.order = order;
            Op::Load { access, dst }
        }
        Op::Store { mut access, src } => {
            access.order = order;
            Op::Store { access, src }
        }
        Op::Fence { scope, .. } => Op::Fence { order, scope },
        other => with_atomic(other, |a| a.access.order = order),
    }
}

#[test]
fn every_order_of_every_memory_op() {
    let kinds: [(Op, &[MemOrder], &str); 4] = [
        (
            load(Space::Global, Ty::U32, 0, wide(2, 0)),
            LOAD_OK,
            rules::LOAD_ORDER,
        ),
        (
            store(Space::Global, Ty::U32, reg(0), wide(2, 0)),
            STORE_OK,
            rules::STORE_ORDER,
        ),
        (
            atoms(AtomicOp::Add, Ty::U32, 0, shared(1, 0), 4),
            ATOMIC_OK,
            "",
        ),
        (
            fence(MemOrder::SeqCst, Scope::Gpu),
            FENCE_OK,
            rules::FENCE_FORMS,
        ),
    ];
    for (op, ok, rule) in kinds {
        for &order in MemOrder::ALL {
            let k = sass1(set_order(op.clone(), order));
            if ok.contains(&order) {
                valid(&k);
                continue;
            }
            let rule = match (rule, order) {
                ("", MemOrder::SeqCst) => rules::ATOMIC_ORDER_SEQ_CST,
                ("", MemOrder::Weak) => rules::ATOMIC_ORDER_WEAK,
                ("", _) => rules::VOLATILE_LOAD_STORE,
                (r, _) => r,
            };
            assert_only(&errors(&k), 0, rule, "");
        }
    }
}

#[test]
fn seq_cst_messages_name_the_fence_sc_mapping() {
    let k = sass1(set_order(
        atoms(AtomicOp::Add, Ty::U32, 0, shared(1, 0), 4),
        MemOrder::SeqCst,
    ));
    assert_only(
        &errors(&k),
        0,
        rules::ATOMIC_ORDER_SEQ_CST,
        "fence.sc then atom.acquire",
    );
    let k = sass1(set_order(
        load(Space::Global, Ty::U32, 0, wide(2, 0)),
        MemOrder::SeqCst,
    ));
    assert_only(
        &errors(&k),
        0,
        rules::LOAD_ORDER,
        "fence.sc then ld.acquire",
    );
    let k = sass1(set_order(
        store(Space::Global, Ty::U32, reg(0), wide(2, 0)),
        MemOrder::SeqCst,
    ));
    assert_only(
        &errors(&k),
        0,
        rules::STORE_ORDER,
        "fence.sc then st.relaxed",
    );
    let k = sass1(fence(MemOrder::Relaxed, Scope::Cta));
    assert_only(
        &errors(&k),
        0,
        rules::FENCE_FORMS,
        "a fence cannot be .relaxed",
    );
}

#[test]
fn every_scope_is_valid() {
    for &scope in Scope::ALL {
        valid(&sass1(fence(MemOrder::AcqRel, scope)));
        valid(&sass1(with_atomic(
            atoms(AtomicOp::Add, Ty::U32, 0, shared(1, 0), 4),
            |a| a.access.scope = scope,
        )));
    }
}
