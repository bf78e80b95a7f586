//! The C++ atomics ABI: C/C++/CUDA C++ atomic operations with a `memory_order` and a
//! `thread_scope`, mapped to the PTX instruction sequences of `001_e732919ae3db9bea.txt`, and
//! executed by generating a small PTX kernel and running it on an [`Engine`].
//!
//! # The mapping
//!
//! [`mapping`] returns the document's *recommended* sequence for every row of its tables, with
//! the scope `<scope>` of `thread_scope_block` / `_device` / `_system` being `.cta` / `.gpu` /
//! `.sys`:
//!
//! | operation | seq_cst | acq_rel | release | acquire | relaxed |
//! |---|---|---|---|---|---|
//! | `atomic_thread_fence` | `fence.sc` | `fence.acq_rel` | `fence.release` | `fence.acquire` | *(nothing)* |
//! | `atomic_load` | `fence.sc; ld.acquire` | — | — | `ld.acquire` | `ld.relaxed` |
//! | `atomic_store` | `fence.sc; st.relaxed` | — | `st.release` | — | `st.relaxed` |
//! | `atomic_<rmw op>` | `fence.sc; atom.acq_rel` † | `atom.acq_rel` | `atom.release` | `atom.acquire` | `atom.relaxed` |
//!
//! † The document recommends `fence.sc; atom.acquire` for a sequentially consistent RMW. A
//! formal analysis of the PTX memory model shows that an `atom.acquire` there does not continue
//! a C++ release sequence headed by an earlier release store of another thread; `atom.acq_rel`
//! does. The document allows it: "The memory order parameter is monotonic, and so it is valid
//! to strengthen any such parameter." So the seq_cst RMW is `fence.sc; atom.acq_rel`.
//!
//! "—": C++ forbids the combination (a load cannot be `release` or `acq_rel`, a store cannot be
//! `acquire` or `acq_rel`: [atomics.types.operations]); [`mapping`] returns
//! [`AbiError::InvalidOrder`]. A relaxed fence has no effect in C++ ([atomics.fences]: "a fence
//! with `memory_order_relaxed` has no effects") and maps to no instruction.
//!
//! # RMW operations and types
//!
//! `fetch_add fetch_sub fetch_and fetch_or fetch_xor fetch_min fetch_max exchange
//! compare_exchange` on `u32 s32 u64 s64` (and `fetch_add`/`exchange`/`compare_exchange` on
//! `f32 f64`), with the PTX op and type nvcc uses: `add.u32/.s32/.u64` (`s64` adds as `u64`,
//! the same bits), `add.f32/.f64`, `min/max.u32/.s32/.u64/.s64`, `and/or/xor/exch/cas.b32/.b64`.
//! PTX has no `sub`: `fetch_sub(v)` is `neg` then `atom.add` (two's complement, the same bits).
//! `compare_exchange` returns the old value (it succeeded when that equals `expected`); it has
//! one order here, the stronger of C++'s success and failure orders.
//!
//! # Execution
//!
//! [`execute`] writes a PTX kernel in which each of `threads` threads performs the operation on
//! one location through a generic address (as `cuda::atomic_ref` does when the space is not
//! known) and stores what it got back (the loaded or old value) to `out[tid]`, then runs it and
//! returns the final memory value and `out`. The kernel text is available through
//! [`kernel_source`] for inspection.

use crate::engine::{Engine, Error as EngineError, Overrides};
use crate::front::LaunchText;
use std::fmt;

/// C++ `memory_order` (without `consume`, which the ABI document does not map).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryOrder {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    SeqCst,
}

impl MemoryOrder {
    pub const ALL: [MemoryOrder; 5] = [
        MemoryOrder::Relaxed,
        MemoryOrder::Acquire,
        MemoryOrder::Release,
        MemoryOrder::AcqRel,
        MemoryOrder::SeqCst,
    ];

    /// The C++ spelling (`memory_order_seq_cst`).
    pub fn name(self) -> &'static str {
        match self {
            MemoryOrder::Relaxed => "memory_order_relaxed",
            MemoryOrder::Acquire => "memory_order_acquire",
            MemoryOrder::Release => "memory_order_release",
            MemoryOrder::AcqRel => "memory_order_acq_rel",
            MemoryOrder::SeqCst => "memory_order_seq_cst",
        }
    }
}

/// CUDA `thread_scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThreadScope {
    /// `thread_scope_block`: PTX `.cta`.
    Block,
    /// `thread_scope_device`: PTX `.gpu`.
    Device,
    /// `thread_scope_system`: PTX `.sys`.
    System,
}

impl ThreadScope {
    pub const ALL: [ThreadScope; 3] =
        [ThreadScope::Block, ThreadScope::Device, ThreadScope::System];

    /// The PTX scope qualifier (without the dot).
    pub fn ptx(self) -> &'static str {
        match self {
            ThreadScope::Block => "cta",
            ThreadScope::Device => "gpu",
            ThreadScope::System => "sys",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ThreadScope::Block => "thread_scope_block",
            ThreadScope::Device => "thread_scope_device",
            ThreadScope::System => "thread_scope_system",
        }
    }
}

/// The read-modify-write operations of `std::atomic` / `cuda::atomic_ref`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RmwOp {
    FetchAdd,
    FetchSub,
    FetchAnd,
    FetchOr,
    FetchXor,
    FetchMin,
    FetchMax,
    Exchange,
    CompareExchange,
}

impl RmwOp {
    pub const ALL: [RmwOp; 9] = [
        RmwOp::FetchAdd,
        RmwOp::FetchSub,
        RmwOp::FetchAnd,
        RmwOp::FetchOr,
        RmwOp::FetchXor,
        RmwOp::FetchMin,
        RmwOp::FetchMax,
        RmwOp::Exchange,
        RmwOp::CompareExchange,
    ];

    /// The PTX `.op` (`fetch_sub` is an `add` of the negated operand).
    pub fn ptx(self) -> &'static str {
        match self {
            RmwOp::FetchAdd | RmwOp::FetchSub => "add",
            RmwOp::FetchAnd => "and",
            RmwOp::FetchOr => "or",
            RmwOp::FetchXor => "xor",
            RmwOp::FetchMin => "min",
            RmwOp::FetchMax => "max",
            RmwOp::Exchange => "exch",
            RmwOp::CompareExchange => "cas",
        }
    }
}

/// An atomic operation of the C++ API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    /// `atomic_thread_fence`.
    Fence,
    /// `atomic_load`.
    Load,
    /// `atomic_store`.
    Store,
    /// `atomic_<rmw op>`.
    Rmw(RmwOp),
}

/// The value type of an atomic object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueType {
    U32,
    S32,
    U64,
    S64,
    F32,
    F64,
}

impl ValueType {
    pub const ALL: [ValueType; 6] = [
        ValueType::U32,
        ValueType::S32,
        ValueType::U64,
        ValueType::S64,
        ValueType::F32,
        ValueType::F64,
    ];

    pub fn bits(self) -> u32 {
        match self {
            ValueType::U32 | ValueType::S32 | ValueType::F32 => 32,
            ValueType::U64 | ValueType::S64 | ValueType::F64 => 64,
        }
    }

    /// The program-file element type of a buffer holding such values.
    fn elem(self) -> &'static str {
        match self {
            ValueType::U32 => "u32",
            ValueType::S32 => "s32",
            ValueType::U64 => "u64",
            ValueType::S64 => "s64",
            ValueType::F32 => "u32",
            ValueType::F64 => "u64",
        }
    }
}

/// The `.sem` of one PTX instruction of a sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sem {
    Relaxed,
    Acquire,
    Release,
    AcqRel,
    Sc,
}

impl Sem {
    pub fn ptx(self) -> &'static str {
        match self {
            Sem::Relaxed => "relaxed",
            Sem::Acquire => "acquire",
            Sem::Release => "release",
            Sem::AcqRel => "acq_rel",
            Sem::Sc => "sc",
        }
    }
}

/// One instruction of a mapping, in the document's generic notation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    /// `fence.<sem>.<scope>;`
    Fence { sem: Sem, scope: ThreadScope },
    /// `ld.<sem>.<scope>;` (relaxed or acquire)
    Load { sem: Sem, scope: ThreadScope },
    /// `st.<sem>.<scope>;` (relaxed or release)
    Store { sem: Sem, scope: ThreadScope },
    /// `atom.<sem>.<scope>.<rmw op>;`
    Atom {
        sem: Sem,
        scope: ThreadScope,
        op: RmwOp,
    },
}

impl fmt::Display for Step {
    /// The document's notation: `fence.sc.gpu;`, `ld.acquire.cta;`, `atom.acq_rel.sys.add;`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Step::Fence { sem, scope } => write!(f, "fence.{}.{};", sem.ptx(), scope.ptx()),
            Step::Load { sem, scope } => write!(f, "ld.{}.{};", sem.ptx(), scope.ptx()),
            Step::Store { sem, scope } => write!(f, "st.{}.{};", sem.ptx(), scope.ptx()),
            Step::Atom { sem, scope, op } => {
                write!(f, "atom.{}.{}.{};", sem.ptx(), scope.ptx(), op.ptx())
            }
        }
    }
}

/// Why an operation has no mapping or could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AbiError {
    /// C++ does not allow this order on this operation.
    #[error("{op} cannot be {order}: C++ allows {allowed}")]
    InvalidOrder {
        op: &'static str,
        order: &'static str,
        allowed: &'static str,
    },
    /// The value type has no such PTX operation.
    #[error("{0}")]
    InvalidType(String),
    /// The generated kernel did not load or run (a bug in this module, or a trap).
    #[error("running the generated kernel failed: {0}")]
    Run(String),
}

/// The PTX sequence the ABI document recommends for `op` with `order` at `scope` (see the
/// module docs; the sequentially consistent RMW is strengthened to `atom.acq_rel`).
pub fn mapping(
    op: Operation,
    order: MemoryOrder,
    scope: ThreadScope,
) -> Result<Vec<Step>, AbiError> {
    use MemoryOrder as O;
    let invalid = |name: &'static str, allowed: &'static str| {
        Err(AbiError::InvalidOrder {
            op: name,
            order: order.name(),
            allowed,
        })
    };
    let fence_sc = Step::Fence {
        sem: Sem::Sc,
        scope,
    };
    Ok(match op {
        Operation::Fence => match order {
            // [atomics.fences]: a relaxed fence has no effects.
            O::Relaxed => vec![],
            O::Acquire => vec![Step::Fence {
                sem: Sem::Acquire,
                scope,
            }],
            O::Release => vec![Step::Fence {
                sem: Sem::Release,
                scope,
            }],
            O::AcqRel => vec![Step::Fence {
                sem: Sem::AcqRel,
                scope,
            }],
            O::SeqCst => vec![fence_sc],
        },
        Operation::Load => match order {
            O::Relaxed => vec![Step::Load {
                sem: Sem::Relaxed,
                scope,
            }],
            O::Acquire => vec![Step::Load {
                sem: Sem::Acquire,
                scope,
            }],
            O::SeqCst => vec![
                fence_sc,
                Step::Load {
                    sem: Sem::Acquire,
                    scope,
                },
            ],
            O::Release | O::AcqRel => {
                return invalid("atomic_load", "relaxed, acquire (consume) and seq_cst")
            }
        },
        Operation::Store => match order {
            O::Relaxed => vec![Step::Store {
                sem: Sem::Relaxed,
                scope,
            }],
            O::Release => vec![Step::Store {
                sem: Sem::Release,
                scope,
            }],
            O::SeqCst => vec![
                fence_sc,
                Step::Store {
                    sem: Sem::Relaxed,
                    scope,
                },
            ],
            O::Acquire | O::AcqRel => {
                return invalid("atomic_store", "relaxed, release and seq_cst")
            }
        },
        Operation::Rmw(rmw) => {
            let atom = |sem| Step::Atom {
                sem,
                scope,
                op: rmw,
            };
            match order {
                O::Relaxed => vec![atom(Sem::Relaxed)],
                O::Acquire => vec![atom(Sem::Acquire)],
                O::Release => vec![atom(Sem::Release)],
                O::AcqRel => vec![atom(Sem::AcqRel)],
                // Strengthened from the recommended `atom.acquire` (module docs).
                O::SeqCst => vec![fence_sc, atom(Sem::AcqRel)],
            }
        }
    })
}

/// The mapping as the document writes it: `fence.sc.gpu; ld.acquire.gpu;`.
pub fn mapping_text(steps: &[Step]) -> String {
    steps
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// One atomic operation to execute.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AtomicCall {
    pub op: Operation,
    pub ty: ValueType,
    pub order: MemoryOrder,
    pub scope: ThreadScope,
}

/// What [`execute`] runs: the initial value of the atomic object, the operand (`store` value,
/// RMW operand, or `desired` for compare-exchange), `expected` for compare-exchange, and how many
/// threads (in one CTA) perform the operation. Values are raw bits of the type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Inputs {
    pub initial: u64,
    pub operand: u64,
    pub expected: u64,
    pub threads: u32,
}

/// What an execution left: the object's final value and what each thread got back (the loaded
/// value, or the RMW's old value; 0 for stores and fences). Raw bits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub memory: u64,
    pub results: Vec<u64>,
}

/// The PTX type qualifier of an operation on `ty`.
fn ptx_type(op: Operation, ty: ValueType) -> Result<&'static str, AbiError> {
    use ValueType as V;
    let bad = |what: &str| {
        Err(AbiError::InvalidType(format!(
            "{what} is not defined on {ty:?} (PTX ISA Table 41)"
        )))
    };
    let bits = |t: ValueType| if t.bits() == 64 { "b64" } else { "b32" };
    Ok(match op {
        Operation::Fence => "",
        Operation::Load | Operation::Store => match ty {
            V::U32 => "u32",
            V::S32 => "s32",
            V::U64 => "u64",
            V::S64 => "s64",
            V::F32 => "f32",
            V::F64 => "f64",
        },
        Operation::Rmw(r) => match (r, ty) {
            (RmwOp::FetchAdd | RmwOp::FetchSub, V::U32) => "u32",
            (RmwOp::FetchAdd | RmwOp::FetchSub, V::S32) => "s32",
            // PTX has no add.s64; a two's-complement add is the same bits as u64.
            (RmwOp::FetchAdd | RmwOp::FetchSub, V::U64 | V::S64) => "u64",
            (RmwOp::FetchAdd, V::F32) => "f32",
            (RmwOp::FetchAdd, V::F64) => "f64",
            (RmwOp::FetchSub, V::F32 | V::F64) => {
                return bad("fetch_sub (there is no float atomic sub)")
            }
            (RmwOp::FetchMin | RmwOp::FetchMax, V::U32) => "u32",
            (RmwOp::FetchMin | RmwOp::FetchMax, V::S32) => "s32",
            (RmwOp::FetchMin | RmwOp::FetchMax, V::U64) => "u64",
            (RmwOp::FetchMin | RmwOp::FetchMax, V::S64) => "s64",
            (RmwOp::FetchMin | RmwOp::FetchMax, V::F32 | V::F64) => {
                return bad("fetch_min/fetch_max on floats")
            }
            (RmwOp::FetchAnd | RmwOp::FetchOr | RmwOp::FetchXor, V::F32 | V::F64) => {
                return bad("a bitwise fetch op on floats")
            }
            (RmwOp::FetchAnd | RmwOp::FetchOr | RmwOp::FetchXor, t) => bits(t),
            (RmwOp::Exchange | RmwOp::CompareExchange, t) => bits(t),
        },
    })
}

/// The PTX lines of one call: address in `%rd1`, operand in `%v1`, expected in `%v2`, result
/// in `%v0` (registers of the value's width); `fetch_sub` negates into `%v3` first.
pub fn instructions(call: &AtomicCall) -> Result<Vec<String>, AbiError> {
    let steps = mapping(call.op, call.order, call.scope)?;
    let ty = ptx_type(call.op, call.ty)?;
    let mut out = Vec::new();
    for step in steps {
        let line = match step {
            Step::Fence { sem, scope } => format!("fence.{}.{};", sem.ptx(), scope.ptx()),
            Step::Load { sem, scope } => {
                format!("ld.{}.{}.{ty} %v0, [%rd1];", sem.ptx(), scope.ptx())
            }
            Step::Store { sem, scope } => {
                format!("st.{}.{}.{ty} [%rd1], %v1;", sem.ptx(), scope.ptx())
            }
            Step::Atom { sem, scope, op } => {
                let head = format!("atom.{}.{}.{}.{ty}", sem.ptx(), scope.ptx(), op.ptx());
                match op {
                    RmwOp::CompareExchange => format!("{head} %v0, [%rd1], %v2, %v1;"),
                    RmwOp::FetchSub => {
                        let neg = if call.ty.bits() == 64 { "s64" } else { "s32" };
                        out.push(format!("neg.{neg} %v3, %v1;"));
                        format!("{head} %v0, [%rd1], %v3;")
                    }
                    _ => format!("{head} %v0, [%rd1], %v1;"),
                }
            }
        };
        out.push(line);
    }
    Ok(out)
}

/// A PTX module whose entry `abi_call` performs `call` in every thread: parameters `mem` (the
/// atomic object), `out` (one result per thread), `operand`, `expected` (raw bits, `.u64`).
pub fn kernel_source(call: &AtomicCall) -> Result<String, AbiError> {
    let lines = instructions(call)?;
    let wide = call.ty.bits() == 64;
    let (vreg, vty) = if wide {
        (".b64", "u64")
    } else {
        (".b32", "u32")
    };
    let mut s = String::new();
    s.push_str("// Generated by atomjit::cxx_atomics: one C++ atomic operation per thread.\n");
    s.push_str(".version 8.0\n.target sm_90\n.address_size 64\n\n");
    s.push_str(".visible .entry abi_call(\n\t.param .u64 mem,\n\t.param .u64 out,\n\t.param .u64 operand,\n\t.param .u64 expected\n)\n{\n");
    s.push_str("\t.reg .b32 %r<3>;\n\t.reg .b64 %rd<6>;\n");
    s.push_str(&format!("\t.reg {vreg} %v<4>;\n"));
    s.push_str("\tld.param.u64 %rd1, [mem];\n\tld.param.u64 %rd2, [out];\n");
    if wide {
        s.push_str("\tld.param.u64 %v1, [operand];\n\tld.param.u64 %v2, [expected];\n");
    } else {
        s.push_str("\tld.param.u32 %v1, [operand];\n\tld.param.u32 %v2, [expected];\n");
    }
    s.push_str(&format!("\tmov.{vty} %v0, 0;\n"));
    for l in &lines {
        s.push('\t');
        s.push_str(l);
        s.push('\n');
    }
    s.push_str("\tmov.u32 %r1, %tid.x;\n");
    s.push_str(&format!(
        "\tmul.wide.u32 %rd3, %r1, {};\n\tadd.s64 %rd4, %rd2, %rd3;\n",
        if wide { 8 } else { 4 }
    ));
    s.push_str(&format!("\tst.global.{vty} [%rd4], %v0;\n\tret;\n}}\n"));
    Ok(s)
}

/// Runs `call` as described in the module docs on `engine` and returns what it left.
pub fn execute(engine: &Engine, call: &AtomicCall, inputs: Inputs) -> Result<Outcome, AbiError> {
    let source = kernel_source(call)?;
    let elem = call.ty.elem();
    let threads = inputs.threads.clamp(1, 1024);
    let mask = if call.ty.bits() == 64 {
        u64::MAX
    } else {
        u64::from(u32::MAX)
    };
    let text = |v: u64| {
        let v = v & mask;
        if elem.starts_with('s') {
            // Signed buffers take their value, not their bits.
            if call.ty.bits() == 64 {
                (v as i64).to_string()
            } else {
                (v as u32 as i32).to_string()
            }
        } else {
            v.to_string()
        }
    };
    let launch_text = format!(
        ".block {threads}\n.buffer mem {elem}[1] = {}\n.buffer out {elem}[{threads}] = 0\n.param operand u64 = {}\n.param expected u64 = {}\n",
        text(inputs.initial),
        inputs.operand & mask,
        inputs.expected & mask
    );
    let mut launch = LaunchText::new();
    launch.push("abi.launch", &launch_text);
    let module = engine
        .load_with_launch("abi_call.ptx", &source, &launch)
        .map_err(|e: EngineError| AbiError::Run(format!("{e}\n{source}")))?;
    let report = module
        .run("abi_call", &Overrides::default())
        .map_err(|e| AbiError::Run(e.to_string()))?;
    if let Some(f) = &report.failure {
        return Err(AbiError::Run(f.to_string()));
    }
    let bits = |name: &str| -> Result<Vec<u64>, AbiError> {
        let b = report
            .buffer(name)
            .ok_or_else(|| AbiError::Run(format!("no buffer `{name}`")))?;
        let size = b.elem.bytes() as usize;
        Ok(b.bytes
            .chunks(size)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..size].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect())
    };
    let memory = bits("mem")?.first().copied().unwrap_or(0);
    Ok(Outcome {
        memory,
        results: bits("out")?,
    })
}
