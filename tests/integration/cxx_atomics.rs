//! Every row of the ABI document's tables (`001_e732919ae3db9bea.txt`), for every scope and RMW
//! op: the mapping text, the IR the PTX lowers to, and execution results checked against the
//! C++ semantics (values computed here by hand).

use atomjit::cxx_atomics::*;
use atomjit::engine::{Backend, Config, Engine};
use atomjit::ir::{AtomicOp, MemOrder, Op, Scope, Space};

/// The document's rows, transcribed by hand: API, order, recommended mapping.
const ROWS: &[(&str, MemoryOrder, &str)] = &[
    ("fence", MemoryOrder::SeqCst, "fence.sc.<scope>;"),
    (
        "load",
        MemoryOrder::SeqCst,
        "fence.sc.<scope>; ld.acquire.<scope>;",
    ),
    (
        "store",
        MemoryOrder::SeqCst,
        "fence.sc.<scope>; st.relaxed.<scope>;",
    ),
    (
        "rmw",
        MemoryOrder::SeqCst,
        "fence.sc.<scope>; atom.acquire.<scope>.<rmw op>;",
    ),
    ("fence", MemoryOrder::Release, "fence.release.<scope>;"),
    ("store", MemoryOrder::Release, "st.release.<scope>;"),
    (
        "rmw",
        MemoryOrder::Release,
        "atom.release.<scope>.<rmw op>;",
    ),
    ("fence", MemoryOrder::Acquire, "fence.acquire.<scope>;"),
    ("load", MemoryOrder::Acquire, "ld.acquire.<scope>;"),
    (
        "rmw",
        MemoryOrder::Acquire,
        "atom.acquire.<scope>.<rmw op>;",
    ),
    ("fence", MemoryOrder::AcqRel, "fence.acq_rel.<scope>;"),
    ("rmw", MemoryOrder::AcqRel, "atom.acq_rel.<scope>.<rmw op>;"),
    ("load", MemoryOrder::Relaxed, "ld.relaxed.<scope>;"),
    ("store", MemoryOrder::Relaxed, "st.relaxed.<scope>;"),
    (
        "rmw",
        MemoryOrder::Relaxed,
        "atom.relaxed.<scope>.<rmw op>;",
    ),
];

fn operations(api: &str) -> Vec<Operation> {
    match api {
        "fence" => vec![Operation::Fence],
        "load" => vec![Operation::Load],
        "store" => vec![Operation::Store],
        _ => RmwOp::ALL.iter().map(|&r| Operation::Rmw(r)).collect(),
    }
}

fn spec_text() -> Option<String> {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    [
        std::env::var_os("ATOMJIT_SPEC_DIR").map(std::path::PathBuf::from),
        Some(root.join("spec")),
        Some(root.join("../shared/spec")),
    ]
    .into_iter()
    .flatten()
    .map(|d| d.join("001_e732919ae3db9bea.txt"))
    .find(|p| p.is_file())
    .and_then(|p| std::fs::read_to_string(p).ok())
}

#[test]
fn the_transcribed_rows_are_the_documents() {
    let Some(doc) = spec_text() else {
        eprintln!("001_e732919ae3db9bea.txt not found; set ATOMJIT_SPEC_DIR to check the rows");
        return;
    };
    for (_, _, text) in ROWS {
        assert!(doc.contains(text), "the document has no mapping {text:?}");
    }
    assert!(doc.contains("it is valid to strengthen any such parameter"));
}

#[test]
fn every_row_maps_to_the_recommended_sequence() {
    let mut checked = 0;
    for &(api, order, text) in ROWS {
        for scope in ThreadScope::ALL {
            for op in operations(api) {
                let mut want = text.replace("<scope>", scope.ptx());
                if let Operation::Rmw(r) = op {
                    want = want.replace("<rmw op>", r.ptx());
                    if order == MemoryOrder::SeqCst {
                        // The one deliberate strengthening (module docs).
                        want = want.replace("atom.acquire", "atom.acq_rel");
                    }
                }
                let got = mapping_text(&mapping(op, order, scope).unwrap());
                assert_eq!(got, want, "{op:?} {} {}", order.name(), scope.name());
                checked += 1;
            }
        }
    }
    // 4 fences, 3 loads, 3 stores and 5 RMW rows of 9 ops, at 3 scopes.
    assert_eq!(checked, 3 * (4 + 3 + 3 + 5 * 9));
}

#[test]
fn orders_cpp_forbids_are_errors_and_a_relaxed_fence_is_nothing() {
    for order in [MemoryOrder::Release, MemoryOrder::AcqRel] {
        let e = mapping(Operation::Load, order, ThreadScope::Device).unwrap_err();
        assert!(e.to_string().contains("atomic_load cannot be"), "{e}");
    }
    for order in [MemoryOrder::Acquire, MemoryOrder::AcqRel] {
        let e = mapping(Operation::Store, order, ThreadScope::Block).unwrap_err();
        assert!(e.to_string().contains("atomic_store cannot be"), "{e}");
    }
    assert_eq!(
        mapping(Operation::Fence, MemoryOrder::Relaxed, ThreadScope::System).unwrap(),
        vec![]
    );
    let call = AtomicCall {
        op: Operation::Rmw(RmwOp::FetchMin),
        ty: ValueType::F32,
        order: MemoryOrder::Relaxed,
        scope: ThreadScope::Device,
    };
    assert!(matches!(instructions(&call), Err(AbiError::InvalidType(_))));
    let call = AtomicCall {
        op: Operation::Rmw(RmwOp::FetchSub),
        ty: ValueType::F64,
        ..call
    };
    assert!(matches!(instructions(&call), Err(AbiError::InvalidType(_))));
}

fn ir_scope(s: ThreadScope) -> Scope {
    match s {
        ThreadScope::Block => Scope::Cta,
        ThreadScope::Device => Scope::Gpu,
        ThreadScope::System => Scope::Sys,
    }
}

fn ir_order(s: Sem) -> MemOrder {
    match s {
        Sem::Relaxed => MemOrder::Relaxed,
        Sem::Acquire => MemOrder::Acquire,
        Sem::Release => MemOrder::Release,
        Sem::AcqRel => MemOrder::AcqRel,
        Sem::Sc => MemOrder::SeqCst,
    }
}

#[test]
fn every_row_lowers_to_ir_with_its_orders_and_scopes() {
    for &(api, order, _) in ROWS {
        for scope in ThreadScope::ALL {
            for op in operations(api) {
                let call = AtomicCall {
                    op,
                    ty: ValueType::U32,
                    order,
                    scope,
                };
                let src = kernel_source(&call).unwrap();
                let program = atomjit::front::parse("abi.ptx", &src, atomjit::ir::Dialect::Ptx)
                    .unwrap_or_else(|e| panic!("{e}\n{src}"));
                let kernel = &program.kernels[0];
                atomjit::valid::validate(kernel).unwrap_or_else(|e| panic!("{e}\n{src}"));
                // The memory-model ops of the kernel, in order.
                let got: Vec<(MemOrder, Scope)> = kernel
                    .insts
                    .iter()
                    .filter_map(|i| match &i.op {
                        Op::Fence { order, scope } => Some((*order, *scope)),
                        Op::Load { access, .. } | Op::Store { access, .. }
                            if access.space == Space::Generic =>
                        {
                            Some((access.order, access.scope))
                        }
                        Op::Atomic(a) => Some((a.access.order, a.access.scope)),
                        _ => None,
                    })
                    .collect();
                let want: Vec<(MemOrder, Scope)> = mapping(op, order, scope)
                    .unwrap()
                    .iter()
                    .map(|s| match *s {
                        Step::Fence { sem, scope }
                        | Step::Load { sem, scope }
                        | Step::Store { sem, scope }
                        | Step::Atom { sem, scope, .. } => (ir_order(sem), ir_scope(scope)),
                    })
                    .collect();
                assert_eq!(got, want, "{op:?} {}\n{src}", order.name());
                if let Operation::Rmw(r) = op {
                    let a = kernel
                        .insts
                        .iter()
                        .find_map(|i| match &i.op {
                            Op::Atomic(a) => Some(a),
                            _ => None,
                        })
                        .unwrap();
                    let want_op = match r {
                        RmwOp::FetchAdd | RmwOp::FetchSub => AtomicOp::Add,
                        RmwOp::FetchAnd => AtomicOp::And,
                        RmwOp::FetchOr => AtomicOp::Or,
                        RmwOp::FetchXor => AtomicOp::Xor,
                        RmwOp::FetchMin => AtomicOp::Min,
                        RmwOp::FetchMax => AtomicOp::Max,
                        RmwOp::Exchange => AtomicOp::Exch,
                        RmwOp::CompareExchange => AtomicOp::Cas,
                    };
                    assert_eq!((a.op, a.access.space), (want_op, Space::Generic));
                }
            }
        }
    }
}

fn engine(backend: Backend) -> Engine {
    let mut c = Config::default();
    c.backend(backend).threads(2);
    Engine::new(&c)
}

/// C++ semantics of one `u32` operation, by hand: (new memory value, value returned).
fn cpp_u32(op: Operation, m: u32, v: u32, expected: u32) -> (u32, u32) {
    match op {
        Operation::Fence => (m, 0),
        Operation::Load => (m, m),
        Operation::Store => (v, 0),
        Operation::Rmw(r) => {
            let new = match r {
                RmwOp::FetchAdd => m.wrapping_add(v),
                RmwOp::FetchSub => m.wrapping_sub(v),
                RmwOp::FetchAnd => m & v,
                RmwOp::FetchOr => m | v,
                RmwOp::FetchXor => m ^ v,
                RmwOp::FetchMin => m.min(v),
                RmwOp::FetchMax => m.max(v),
                RmwOp::Exchange => v,
                RmwOp::CompareExchange => {
                    if m == expected {
                        v
                    } else {
                        m
                    }
                }
            };
            (new, m)
        }
    }
}

#[test]
fn every_row_executes_with_the_cpp_result() {
    // One thread per launch; every row and scope on the interpreter, every row at device scope
    // on the JIT.
    for backend in [Backend::Interp, Backend::Jit] {
        let e = engine(backend);
        for &(api, order, _) in ROWS {
            for scope in ThreadScope::ALL {
                if backend == Backend::Jit && scope != ThreadScope::Device {
                    continue;
                }
                for op in operations(api) {
                    for (m, v, expected) in [(0xf0f0u32, 0x0ff3u32, 0xf0f0u32), (10, 3, 11)] {
                        let call = AtomicCall {
                            op,
                            ty: ValueType::U32,
                            order,
                            scope,
                        };
                        let out = execute(
                            &e,
                            &call,
                            Inputs {
                                initial: m.into(),
                                operand: v.into(),
                                expected: expected.into(),
                                threads: 1,
                            },
                        )
                        .unwrap_or_else(|err| panic!("{op:?} {order:?}: {err}"));
                        let (mem, ret) = cpp_u32(op, m, v, expected);
                        assert_eq!(
                            (out.memory, out.results[0]),
                            (u64::from(mem), u64::from(ret)),
                            "{backend:?} {op:?} {} {} m={m:#x} v={v:#x}",
                            order.name(),
                            scope.name()
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn every_rmw_order_is_atomic_across_threads() {
    let e = engine(Backend::Interp);
    for order in MemoryOrder::ALL {
        let call = AtomicCall {
            op: Operation::Rmw(RmwOp::FetchAdd),
            ty: ValueType::U32,
            order,
            scope: ThreadScope::Device,
        };
        let out = execute(
            &e,
            &call,
            Inputs {
                initial: 0,
                operand: 1,
                expected: 0,
                threads: 256,
            },
        )
        .unwrap();
        assert_eq!(out.memory, 256, "{}", order.name());
        let mut olds = out.results.clone();
        olds.sort();
        assert_eq!(olds, (0..256).collect::<Vec<u64>>(), "every old value once");
    }
}

#[test]
fn other_value_types() {
    let e = engine(Backend::Interp);
    let run = |op, ty, initial: u64, operand: u64, expected: u64| {
        let call = AtomicCall {
            op,
            ty,
            order: MemoryOrder::SeqCst,
            scope: ThreadScope::System,
        };
        let out = execute(
            &e,
            &call,
            Inputs {
                initial,
                operand,
                expected,
                threads: 1,
            },
        )
        .unwrap();
        (out.memory, out.results[0])
    };
    let rmw = Operation::Rmw;
    // u64 add carries into the high word; u64 sub wraps below zero.
    assert_eq!(
        run(rmw(RmwOp::FetchAdd), ValueType::U64, 0xffff_ffff, 1, 0),
        (0x1_0000_0000, 0xffff_ffff)
    );
    assert_eq!(
        run(rmw(RmwOp::FetchSub), ValueType::U64, 0, 1, 0),
        (u64::MAX, 0)
    );
    // Signed min/max compare as signed: min(5, -1) = -1, max(-7, -9) = -7.
    assert_eq!(
        run(rmw(RmwOp::FetchMin), ValueType::S32, 5, 0xffff_ffff, 0),
        (0xffff_ffff, 5)
    );
    assert_eq!(
        run(
            rmw(RmwOp::FetchMax),
            ValueType::S64,
            (-7i64) as u64,
            (-9i64) as u64,
            0
        ),
        ((-7i64) as u64, (-7i64) as u64)
    );
    // Unsigned: max(5, 0xffffffff) = 0xffffffff.
    assert_eq!(
        run(rmw(RmwOp::FetchMax), ValueType::U32, 5, 0xffff_ffff, 0),
        (0xffff_ffff, 5)
    );
    // Float add: 1.5 + 2.25 = 3.75; f64 0.1 + 0.2 = 0.30000000000000004.
    assert_eq!(
        run(
            rmw(RmwOp::FetchAdd),
            ValueType::F32,
            0x3fc0_0000,
            0x4010_0000,
            0
        ),
        (0x4070_0000, 0x3fc0_0000)
    );
    assert_eq!(
        run(
            rmw(RmwOp::FetchAdd),
            ValueType::F64,
            0x3fb9_9999_9999_999a,
            0x3fc9_9999_9999_999a,
            0
        ),
        (0x3fd3_3333_3333_3334, 0x3fb9_9999_9999_999a)
    );
    // 64-bit compare-exchange: equal low words but different high words do not match.
    assert_eq!(
        run(
            rmw(RmwOp::CompareExchange),
            ValueType::U64,
            0x1_0000_0000,
            5,
            0
        ),
        (0x1_0000_0000, 0x1_0000_0000)
    );
    assert_eq!(
        run(rmw(RmwOp::CompareExchange), ValueType::S64, 42, 5, 42),
        (5, 42)
    );
    // A seq_cst store and load of a 64-bit value.
    assert_eq!(
        run(
            Operation::Store,
            ValueType::U64,
            0,
            0xdead_beef_0000_0001,
            0
        ),
        (0xdead_beef_0000_0001, 0)
    );
    assert_eq!(
        run(Operation::Load, ValueType::F64, 0x4000_0000_0000_0000, 0, 0),
        (0x4000_0000_0000_0000, 0x4000_0000_0000_0000)
    );
}

#[test]
fn the_generated_kernel_reads_like_nvcc_output() {
    let call = AtomicCall {
        op: Operation::Rmw(RmwOp::FetchSub),
        ty: ValueType::S32,
        order: MemoryOrder::SeqCst,
        scope: ThreadScope::Block,
    };
    assert_eq!(
        instructions(&call).unwrap(),
        [
            "fence.sc.cta;",
            "neg.s32 %v3, %v1;",
            "atom.acq_rel.cta.add.s32 %v0, [%rd1], %v3;"
        ]
    );
    let src = kernel_source(&call).unwrap();
    assert!(src.contains(".visible .entry abi_call("), "{src}");
}
