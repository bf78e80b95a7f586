//! Tests of the interpreter on kernels built directly in Rust.
//!
//! The atomic tests compare against a *model of the document's formulas* written out here
//! independently of [`crate::sem::atomic::rmw_value`] (`000_6d05a8552870c0ae.txt`, "Supported
//! Atomic Operations"), on edge values: 0, 1, max, the sign boundaries, and for INC/DEC
//! `Rb = 0`, `Rb = max`, `M > Rb`, `M == Rb`, `M == 0` (all pairs of the edge values).

use super::*;
use crate::exec::{GlobalMemory, SharedMemory, GLOBAL_BASE};
use crate::ir::{
    Address, AtomicInst, AtomicOp, BinOp, BoolOp, CmpOp, Dialect, Guard, ImadMode, Kernel,
    LaunchSpec, LinearAddress, MemAccess, MemOrder, Round, Scope, ShfInst, Span, SrcMod, UnOp,
};
use crate::valid::KernelInfo;

// ---------------------------------------------------------------------------------------------
// Building kernels and machines
// ---------------------------------------------------------------------------------------------

const NUM_REGS: u32 = 32;
const NUM_PREDS: u32 = 8;

fn inst(op: Op) -> Inst {
    Inst {
        op,
        guard: Guard::ALWAYS,
        span: Span::default(),
        text: String::new(),
        sched: Vec::new(),
    }
}

fn guarded(pred: u16, negate: bool, op: Op) -> Inst {
    Inst {
        guard: Guard {
            pred: Pred(pred),
            negate,
        },
        ..inst(op)
    }
}

fn kernel(insts: Vec<Inst>) -> Kernel {
    Kernel {
        name: "test".into(),
        dialect: Dialect::Sass,
        warp_size: 32,
        insts,
        labels: Vec::new(),
        num_regs: NUM_REGS,
        num_preds: NUM_PREDS,
        uniform: Default::default(),
        launch: LaunchSpec::default(),
        span: Span::default(),
    }
}

fn reg(n: u16) -> Operand {
    Operand::Reg(Reg(n))
}

fn src(n: u16) -> Src {
    Src::plain(reg(n))
}

fn imm(v: u64) -> Src {
    Src::plain(Operand::Imm(v))
}

fn rz() -> Src {
    Src::plain(Operand::Reg(Reg::RZ))
}

fn modified(n: u16, modifier: SrcMod) -> Src {
    Src {
        operand: reg(n),
        modifier,
    }
}

fn psrc(n: u16) -> PredSrc {
    PredSrc {
        pred: Pred(n),
        negate: false,
    }
}

/// `[Rn + offset]` with a 32-bit base (shared-memory form).
fn at32(base: u16, offset: i64) -> Address {
    Address::Linear(LinearAddress {
        base: Some(Reg(base)),
        base_bits: 32,
        offset,
    })
}

/// `[Rn.64 + offset]` (global form).
fn at64(base: u16, offset: i64) -> Address {
    Address::Linear(LinearAddress {
        base: Some(Reg(base)),
        base_bits: 64,
        offset,
    })
}

#[allow(clippy::too_many_arguments)]
fn atomic(
    space: Space,
    op: AtomicOp,
    ty: Ty,
    dst: Reg,
    addr: Address,
    b: Operand,
    c: Option<Operand>,
    spin: bool,
    ftz: bool,
) -> Op {
    Op::Atomic(Box::new(AtomicInst {
        access: MemAccess {
            space,
            ty,
            vector: 1,
            order: MemOrder::Relaxed,
            scope: if space == Space::Shared {
                Scope::Cta
            } else {
                Scope::Gpu
            },
            addr,
        },
        op,
        dst,
        src: b,
        src2: c,
        spin,
        ftz,
        performed: Pred::PT,
    }))
}

/// A kernel with its memory: one CTA's environment.
struct Machine {
    kernel: Kernel,
    info: KernelInfo,
    global: GlobalMemory,
    buffers: Vec<u64>,
    shared: SharedMemory,
    cbank: Vec<u8>,
    surfaces: Vec<crate::ir::surface::SurfaceHeader>,
    ntid: [u32; 3],
}

impl Machine {
    fn new(insts: Vec<Inst>) -> Machine {
        Machine::with_memory(insts, 1024, &[1024])
    }

    fn with_memory(insts: Vec<Inst>, shared_bytes: u32, global_sizes: &[u64]) -> Machine {
        let kernel = kernel(insts);
        // Interpreter tests include kernels validation rejects (the interpreter gives every
        // form one defined meaning); they need no control-flow facts.
        let info = KernelInfo::unchecked(&kernel, 0);
        let (global, buffers) = GlobalMemory::with_allocations(global_sizes);
        let mut cbank = vec![0u8; 0x180];
        for (i, value) in [32u32, 1, 1, 1, 1, 1].iter().enumerate() {
            cbank[4 * i..4 * i + 4].copy_from_slice(&value.to_le_bytes());
        }
        Machine {
            kernel,
            info,
            global,
            buffers,
            shared: SharedMemory::new(shared_bytes),
            cbank,
            surfaces: Vec::new(),
            ntid: [32, 1, 1],
        }
    }

    fn env(&self) -> CtaEnv<'_> {
        CtaEnv {
            kernel: &self.kernel,
            info: &self.info,
            global: &self.global,
            shared: &self.shared,
            cbank: &self.cbank,
            surfaces: &self.surfaces,
            ctaid: [3, 4, 5],
            ntid: self.ntid,
            nctaid: [6, 7, 8],
        }
    }

    fn warp(&self) -> WarpState {
        WarpState::new(self.kernel.num_regs, self.kernel.num_preds, 0, u32::MAX)
    }

    fn run(&self, warp: &mut WarpState, mask: u32) -> GroupExit {
        Interpreter::new().run_group(warp, &self.env(), 0, mask, None)
    }

    fn shared_u32(&self, addr: u64) -> u32 {
        self.shared.region().load(addr as usize, 4) as u32
    }

    fn set_shared_u32(&self, addr: u64, v: u32) {
        self.shared.region().store(addr as usize, 4, v as u64)
    }

    fn shared_u64(&self, addr: u64) -> u64 {
        self.shared.region().load(addr as usize, 8)
    }

    fn set_shared_u64(&self, addr: u64, v: u64) {
        self.shared.region().store(addr as usize, 8, v)
    }

    fn global_u32(&self, addr: u64) -> u32 {
        let mut b = [0u8; 4];
        self.global.read(addr, &mut b);
        u32::from_le_bytes(b)
    }

    fn set_global_u32(&self, addr: u64, v: u32) {
        self.global.write(addr, &v.to_le_bytes())
    }

    fn global_u64(&self, addr: u64) -> u64 {
        let mut b = [0u8; 8];
        self.global.read(addr, &mut b);
        u64::from_le_bytes(b)
    }

    fn set_global_u64(&self, addr: u64, v: u64) {
        self.global.write(addr, &v.to_le_bytes())
    }
}

fn set(warp: &mut WarpState, r: u16, lane: usize, v: u32) {
    warp.regs[r as usize * WARP_STRIDE + lane] = v;
}

fn set64(warp: &mut WarpState, r: u16, lane: usize, v: u64) {
    set(warp, r, lane, v as u32);
    set(warp, r + 1, lane, (v >> 32) as u32);
}

fn get(warp: &WarpState, r: u16, lane: usize) -> u32 {
    warp.regs[r as usize * WARP_STRIDE + lane]
}

fn get64(warp: &WarpState, r: u16, lane: usize) -> u64 {
    get(warp, r, lane) as u64 | (get(warp, r + 1, lane) as u64) << 32
}

fn pred(warp: &WarpState, p: u16, lane: usize) -> bool {
    warp.preds[p as usize] >> lane & 1 == 1
}

// ---------------------------------------------------------------------------------------------
// The document's formulas, written out independently
// ---------------------------------------------------------------------------------------------

/// `000_6d05a8552870c0ae.txt`, "Supported Atomic Operations", 32-bit: returns `(Rd, M')`.
fn doc_model_32(op: AtomicOp, signed: bool, m: u32, rb: u32, rc: u32) -> (u32, u32) {
    match op {
        // .ADD: Rd = M; M = M + Rb;
        AtomicOp::Add => (m, m.wrapping_add(rb)),
        // .MIN: Rd = M; M = min(M, Rb);   (.S32 signed, .U32 unsigned)
        AtomicOp::Min if signed => (m, (m as i32).min(rb as i32) as u32),
        AtomicOp::Min => (m, m.min(rb)),
        AtomicOp::Max if signed => (m, (m as i32).max(rb as i32) as u32),
        AtomicOp::Max => (m, m.max(rb)),
        // .INC: Rd = M; M = (M >= Rb) ? 0 : (M + 1);
        AtomicOp::Inc => (m, if m >= rb { 0 } else { m + 1 }),
        // .DEC: Rd = M; M = (M == 0 || M > Rb) ? Rb : M - 1;
        AtomicOp::Dec => (m, if m == 0 || m > rb { rb } else { m - 1 }),
        AtomicOp::And => (m, m & rb),
        AtomicOp::Or => (m, m | rb),
        AtomicOp::Xor => (m, m ^ rb),
        // .EXCH: Rd = M; M = Rb;
        AtomicOp::Exch => (m, rb),
        // .CAS: Rd = M; if (M == Rb) M = Rc;
        AtomicOp::Cas => (m, if m == rb { rc } else { m }),
        // .CAST: if (M == Rb) { M = Rc; Rd = 1; } else { Rd = 0 }
        AtomicOp::Cast => {
            if m == rb {
                (1, rc)
            } else {
                (0, m)
            }
        }
        AtomicOp::Sub | AtomicOp::PreDec | AtomicOp::FCmpWr => panic!("{op} is not in the table"),
    }
}

/// The same table for 64-bit operands (`.U64`, and `S64` MIN/MAX of `RED`/`ATOMG`).
fn doc_model_64(op: AtomicOp, signed: bool, m: u64, rb: u64, rc: u64) -> (u64, u64) {
    match op {
        AtomicOp::Add => (m, m.wrapping_add(rb)),
        AtomicOp::Min if signed => (m, (m as i64).min(rb as i64) as u64),
        AtomicOp::Min => (m, m.min(rb)),
        AtomicOp::Max if signed => (m, (m as i64).max(rb as i64) as u64),
        AtomicOp::Max => (m, m.max(rb)),
        AtomicOp::Inc => (m, if m >= rb { 0 } else { m + 1 }),
        AtomicOp::Dec => (m, if m == 0 || m > rb { rb } else { m - 1 }),
        AtomicOp::And => (m, m & rb),
        AtomicOp::Or => (m, m | rb),
        AtomicOp::Xor => (m, m ^ rb),
        AtomicOp::Exch => (m, rb),
        AtomicOp::Cas => (m, if m == rb { rc } else { m }),
        AtomicOp::Cast => {
            if m == rb {
                (1, rc)
            } else {
                (0, m)
            }
        }
        AtomicOp::Sub | AtomicOp::PreDec | AtomicOp::FCmpWr => panic!("{op} is not in the table"),
    }
}

const EDGES_32: [u32; 9] = [
    0,
    1,
    2,
    0x7fff_fffe,
    0x7fff_ffff,
    0x8000_0000,
    0x8000_0001,
    0xffff_fffe,
    0xffff_ffff,
];

const EDGES_64: [u64; 9] = [
    0,
    1,
    0xffff_ffff,
    0x1_0000_0000,
    0x7fff_ffff_ffff_ffff,
    0x8000_0000_0000_0000,
    0x8000_0000_0000_0001,
    0xffff_ffff_ffff_fffe,
    0xffff_ffff_ffff_ffff,
];

/// Every `(M, Rb)` pair of the edge values, with an `Rc` that differs from both.
fn cases<T: Copy>(edges: &[T], rc: impl Fn(T, T) -> T) -> Vec<(T, T, T)> {
    edges
        .iter()
        .flat_map(|&m| edges.iter().map(move |&b| (m, b)))
        .map(|(m, b)| (m, b, rc(m, b)))
        .collect()
}

/// Which memory a batch of lanes runs its atomic on.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    /// `ATOMS`: shared memory, `[R8 + 0]`.
    Shared,
    /// `ATOMG`: global memory, `[R8.64 + 0]`.
    Global,
    /// `RED`: global memory, no destination.
    Reduction,
}

/// Runs `op` in `ty` (32-bit) for every case, 32 lanes at a time, each lane on its own word,
/// and checks `Rd`, memory and the statistics against [`doc_model_32`].
fn check_32(target: Target, op: AtomicOp, ty: Ty) {
    let signed = ty == Ty::S32;
    let all = cases(&EDGES_32, |m, b| !(m ^ b) ^ 0x5a5a_5a5a);
    for batch in all.chunks(32) {
        let space = if target == Target::Shared {
            Space::Shared
        } else {
            Space::Global
        };
        let addr = if target == Target::Shared {
            at32(8, 0)
        } else {
            at64(8, 0)
        };
        let dst = if target == Target::Reduction {
            Reg::RZ
        } else {
            Reg(0)
        };
        let c = matches!(op, AtomicOp::Cas | AtomicOp::Cast).then_some(reg(5));
        let m = Machine::new(vec![inst(atomic(
            space,
            op,
            ty,
            dst,
            addr,
            reg(4),
            c,
            false,
            false,
        ))]);
        let mut warp = m.warp();
        let base = |lane: usize| match target {
            Target::Shared => 8 * lane as u64,
            Target::Global | Target::Reduction => m.buffers[0] + 8 * lane as u64,
        };
        for (lane, &(mem, b, c)) in batch.iter().enumerate() {
            set64(&mut warp, 8, lane, base(lane));
            set(&mut warp, 4, lane, b);
            set(&mut warp, 5, lane, c);
            set(&mut warp, 0, lane, 0xdead_beef);
            match target {
                Target::Shared => m.set_shared_u32(base(lane), mem),
                Target::Global | Target::Reduction => m.set_global_u32(base(lane), mem),
            }
        }
        let mask = if batch.len() == 32 {
            u32::MAX
        } else {
            (1 << batch.len()) - 1
        };
        assert_eq!(m.run(&mut warp, mask), GroupExit::Exited);
        let mut failures = 0;
        for (lane, &(mem, b, c)) in batch.iter().enumerate() {
            let (want_rd, want_m) = doc_model_32(op, signed, mem, b, c);
            let got_m = match target {
                Target::Shared => m.shared_u32(base(lane)),
                Target::Global | Target::Reduction => m.global_u32(base(lane)),
            };
            let what = format!("{op}.{ty} M={mem:#x} Rb={b:#x} Rc={c:#x}");
            assert_eq!(got_m, want_m, "memory after {what}");
            let want_rd = if target == Target::Reduction {
                0xdead_beef
            } else {
                want_rd
            };
            assert_eq!(get(&warp, 0, lane), want_rd, "Rd after {what}");
            failures += (matches!(op, AtomicOp::Cas | AtomicOp::Cast) && mem != b) as u64;
        }
        assert_eq!(warp.stats.atomics[op.index()], batch.len() as u64);
        assert_eq!(warp.stats.total_atomics(), batch.len() as u64);
        assert_eq!(warp.stats.cas_failures, failures);
        assert_eq!(
            warp.stats.warp_insts, 1,
            "one instruction then running off the end"
        );
    }
}

/// As [`check_32`] for 64-bit operands in register pairs (`Rb` = R4:R5, `Rc` = R6:R7,
/// `Rd` = R0:R1).
fn check_64(target: Target, op: AtomicOp, ty: Ty) {
    let signed = ty == Ty::S64;
    let all = cases(&EDGES_64, |m, b| !(m ^ b) ^ 0x5a5a_5a5a_a5a5_a5a5);
    for batch in all.chunks(32) {
        let space = if target == Target::Shared {
            Space::Shared
        } else {
            Space::Global
        };
        let addr = if target == Target::Shared {
            at32(8, 0)
        } else {
            at64(8, 0)
        };
        let dst = if target == Target::Reduction {
            Reg::RZ
        } else {
            Reg(0)
        };
        let c = matches!(op, AtomicOp::Cas | AtomicOp::Cast).then_some(reg(6));
        let m = Machine::new(vec![inst(atomic(
            space,
            op,
            ty,
            dst,
            addr,
            reg(4),
            c,
            false,
            false,
        ))]);
        let mut warp = m.warp();
        let base = |lane: usize| match target {
            Target::Shared => 8 * lane as u64,
            Target::Global | Target::Reduction => m.buffers[0] + 8 * lane as u64,
        };
        for (lane, &(mem, b, c)) in batch.iter().enumerate() {
            set64(&mut warp, 8, lane, base(lane));
            set64(&mut warp, 4, lane, b);
            set64(&mut warp, 6, lane, c);
            set64(&mut warp, 0, lane, 0xdead_beef_dead_beef);
            match target {
                Target::Shared => m.set_shared_u64(base(lane), mem),
                Target::Global | Target::Reduction => m.set_global_u64(base(lane), mem),
            }
        }
        let mask = if batch.len() == 32 {
            u32::MAX
        } else {
            (1 << batch.len()) - 1
        };
        assert_eq!(m.run(&mut warp, mask), GroupExit::Exited);
        for (lane, &(mem, b, c)) in batch.iter().enumerate() {
            let (want_rd, want_m) = doc_model_64(op, signed, mem, b, c);
            let got_m = match target {
                Target::Shared => m.shared_u64(base(lane)),
                Target::Global | Target::Reduction => m.global_u64(base(lane)),
            };
            let what = format!("{op}.{ty} M={mem:#x} Rb={b:#x} Rc={c:#x}");
            assert_eq!(got_m, want_m, "memory after {what}");
            let want_rd = if target == Target::Reduction {
                0xdead_beef_dead_beef
            } else {
                want_rd
            };
            assert_eq!(get64(&warp, 0, lane), want_rd, "Rd pair after {what}");
        }
        assert_eq!(warp.stats.atomics[op.index()], batch.len() as u64);
    }
}

// ---------------------------------------------------------------------------------------------
// ATOMS: exactly the op x size table of the document
// ---------------------------------------------------------------------------------------------

/// Every 32-bit `ATOMS` op of the document's table, with the types it takes (the JIT's tests
/// run the same table).
pub(crate) const ATOMS_OPS_32: &[(AtomicOp, &[Ty])] = &[
    (AtomicOp::Add, &[Ty::U32, Ty::S32]),
    (AtomicOp::Min, &[Ty::U32, Ty::S32]),
    (AtomicOp::Max, &[Ty::U32, Ty::S32]),
    (AtomicOp::Inc, &[Ty::U32]),
    (AtomicOp::Dec, &[Ty::U32]),
    (AtomicOp::And, &[Ty::U32, Ty::S32]),
    (AtomicOp::Or, &[Ty::U32, Ty::S32]),
    (AtomicOp::Xor, &[Ty::U32, Ty::S32]),
    (AtomicOp::Exch, &[Ty::U32, Ty::S32]),
    (AtomicOp::Cas, &[Ty::U32, Ty::S32]),
    (AtomicOp::Cast, &[Ty::U32, Ty::S32]),
];

#[test]
fn atoms_32_bit_ops_follow_the_document_table() {
    for &(op, types) in ATOMS_OPS_32 {
        for &ty in types {
            check_32(Target::Shared, op, ty);
        }
    }
}

#[test]
fn atoms_64_bit_ops_follow_the_document_table() {
    for op in [AtomicOp::Exch, AtomicOp::Cas, AtomicOp::Cast] {
        check_64(Target::Shared, op, Ty::U64);
    }
}

#[test]
fn signed_and_unsigned_min_max_differ_on_the_sign_boundary() {
    // A direct spot check of what the table-driven test covers: M = 0x80000000, Rb = 1.
    for (ty, op, want) in [
        (Ty::U32, AtomicOp::Min, 1),
        (Ty::S32, AtomicOp::Min, 0x8000_0000),
        (Ty::U32, AtomicOp::Max, 0x8000_0000),
        (Ty::S32, AtomicOp::Max, 1),
    ] {
        let m = Machine::new(vec![inst(atomic(
            Space::Shared,
            op,
            ty,
            Reg(0),
            Address::absolute(0x10),
            reg(4),
            None,
            false,
            false,
        ))]);
        let mut warp = m.warp();
        m.set_shared_u32(0x10, 0x8000_0000);
        set(&mut warp, 4, 0, 1);
        m.run(&mut warp, 1);
        assert_eq!(m.shared_u32(0x10), want, "{op}.{ty}");
        assert_eq!(get(&warp, 0, 0), 0x8000_0000);
    }
}

#[test]
fn inc_and_dec_wrap_exactly_at_the_bound() {
    // A ring index with INC: M counts 0, 1, 2, 3, 0, 1 ... for Rb = 3; DEC counts down and
    // wraps from 0 to Rb, and resets any M > Rb to Rb.
    let run = |op, start: u32, bound: u32, steps: usize| {
        let m = Machine::new(vec![inst(atomic(
            Space::Shared,
            op,
            Ty::U32,
            Reg(0),
            Address::absolute(0),
            reg(4),
            None,
            false,
            false,
        ))]);
        m.set_shared_u32(0, start);
        let mut seen = Vec::new();
        for _ in 0..steps {
            let mut warp = m.warp();
            set(&mut warp, 4, 0, bound);
            m.run(&mut warp, 1);
            seen.push(get(&warp, 0, 0));
        }
        seen.push(m.shared_u32(0));
        seen
    };
    assert_eq!(run(AtomicOp::Inc, 0, 3, 5), vec![0, 1, 2, 3, 0, 1]);
    assert_eq!(run(AtomicOp::Inc, 7, 3, 1), vec![7, 0], "M > Rb: 0");
    assert_eq!(
        run(AtomicOp::Inc, 5, 0, 1),
        vec![5, 0],
        "Rb = 0 always stores 0"
    );
    assert_eq!(
        run(AtomicOp::Inc, 0xffff_fffe, u32::MAX, 2),
        vec![0xffff_fffe, 0xffff_ffff, 0]
    );
    assert_eq!(run(AtomicOp::Dec, 2, 3, 4), vec![2, 1, 0, 3, 2]);
    assert_eq!(run(AtomicOp::Dec, 9, 3, 1), vec![9, 3], "M > Rb: Rb");
    assert_eq!(run(AtomicOp::Dec, 0, 0, 1), vec![0, 0], "Rb = 0: M = 0");
    assert_eq!(run(AtomicOp::Dec, 0, u32::MAX, 1), vec![0, u32::MAX]);
}

// ---------------------------------------------------------------------------------------------
// ATOMG and RED (global, 64-bit addresses)
// ---------------------------------------------------------------------------------------------

#[test]
fn atomg_integer_ops_follow_the_document_formulas() {
    for op in [
        AtomicOp::Add,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Exch,
        AtomicOp::Cas,
    ] {
        check_32(Target::Global, op, Ty::U32);
    }
    for op in [AtomicOp::Add, AtomicOp::Min, AtomicOp::Max] {
        check_32(Target::Global, op, Ty::S32);
    }
    for op in [
        AtomicOp::Add,
        AtomicOp::Exch,
        AtomicOp::Cas,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
    ] {
        check_64(Target::Global, op, Ty::U64);
    }
    for ty in [Ty::U64, Ty::S64] {
        check_64(Target::Global, AtomicOp::Min, ty);
        check_64(Target::Global, AtomicOp::Max, ty);
    }
}

#[test]
fn red_updates_memory_and_writes_no_register() {
    for op in [
        AtomicOp::Add,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Exch,
    ] {
        check_32(Target::Reduction, op, Ty::U32);
    }
    for op in [AtomicOp::Add, AtomicOp::Min, AtomicOp::Max] {
        check_32(Target::Reduction, op, Ty::S32);
    }
    check_64(Target::Reduction, AtomicOp::Add, Ty::U64);
    check_64(Target::Reduction, AtomicOp::Min, Ty::S64);
    check_64(Target::Reduction, AtomicOp::Max, Ty::S64);
    check_64(Target::Reduction, AtomicOp::Min, Ty::U64);
    check_64(Target::Reduction, AtomicOp::Max, Ty::U64);
}

/// IEEE single add with flush-to-zero of inputs and result, canonical NaN (the model of
/// `RED.E.ADD.F32.FTZ.RN`), written with native `f32` arithmetic.
fn model_add_f32_ftz(m: f32, b: f32) -> u32 {
    let flush = |x: f32| {
        if x.is_subnormal() {
            0.0f32.copysign(x)
        } else {
            x
        }
    };
    let r = flush(flush(m) + flush(b));
    if r.is_nan() {
        0x7fff_ffff
    } else {
        r.to_bits()
    }
}

#[test]
fn float_add_atomics_are_ieee_with_ftz() {
    let values = [
        0.0f32,
        -0.0,
        1.0,
        -1.0,
        0.1,
        f32::from_bits(1),
        -f32::from_bits(1),
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        3.0e-39,
    ];
    let pairs: Vec<(f32, f32)> = values
        .iter()
        .flat_map(|&a| values.iter().map(move |&b| (a, b)))
        .collect();
    for ftz in [true, false] {
        for batch in pairs.chunks(32) {
            let m = Machine::new(vec![inst(atomic(
                Space::Global,
                AtomicOp::Add,
                Ty::F32,
                Reg(0),
                at64(8, 0),
                reg(4),
                None,
                false,
                ftz,
            ))]);
            let mut warp = m.warp();
            for (lane, &(mem, b)) in batch.iter().enumerate() {
                set64(&mut warp, 8, lane, m.buffers[0] + 4 * lane as u64);
                set(&mut warp, 4, lane, b.to_bits());
                m.set_global_u32(m.buffers[0] + 4 * lane as u64, mem.to_bits());
            }
            let mask = if batch.len() == 32 {
                u32::MAX
            } else {
                (1 << batch.len()) - 1
            };
            m.run(&mut warp, mask);
            for (lane, &(mem, b)) in batch.iter().enumerate() {
                let want = if ftz {
                    model_add_f32_ftz(mem, b)
                } else {
                    let r = mem + b;
                    if r.is_nan() {
                        0x7fff_ffff
                    } else {
                        r.to_bits()
                    }
                };
                assert_eq!(
                    m.global_u32(m.buffers[0] + 4 * lane as u64),
                    want,
                    "{mem:e} + {b:e} ftz={ftz}"
                );
                assert_eq!(get(&warp, 0, lane), mem.to_bits(), "returns the old bits");
            }
        }
    }
}

#[test]
fn f64_add_atomic_is_ieee() {
    let values = [
        0.0f64,
        -0.0,
        1.0,
        0.1,
        1e308,
        f64::from_bits(1),
        f64::INFINITY,
        f64::NEG_INFINITY,
    ];
    let m = Machine::new(vec![inst(atomic(
        Space::Global,
        AtomicOp::Add,
        Ty::F64,
        Reg(0),
        at64(8, 0),
        reg(4),
        None,
        false,
        false,
    ))]);
    let pairs: Vec<(f64, f64)> = values
        .iter()
        .flat_map(|&a| values.iter().map(move |&b| (a, b)))
        .collect();
    for batch in pairs.chunks(32) {
        let mut warp = m.warp();
        for (lane, &(mem, b)) in batch.iter().enumerate() {
            set64(&mut warp, 8, lane, m.buffers[0] + 8 * lane as u64);
            set64(&mut warp, 4, lane, b.to_bits());
            m.set_global_u64(m.buffers[0] + 8 * lane as u64, mem.to_bits());
        }
        let mask = if batch.len() == 32 {
            u32::MAX
        } else {
            (1 << batch.len()) - 1
        };
        m.run(&mut warp, mask);
        for (lane, &(mem, b)) in batch.iter().enumerate() {
            let r = mem + b;
            let want = if r.is_nan() {
                0x7fff_ffff_ffff_ffff
            } else {
                r.to_bits()
            };
            assert_eq!(
                m.global_u64(m.buffers[0] + 8 * lane as u64),
                want,
                "{mem:e} + {b:e}"
            );
            assert_eq!(get64(&warp, 0, lane), mem.to_bits());
        }
    }
}

#[test]
fn f16x2_add_atomic_adds_each_half() {
    let m = Machine::new(vec![inst(atomic(
        Space::Global,
        AtomicOp::Add,
        Ty::F16x2,
        Reg(0),
        at64(8, 0),
        reg(4),
        None,
        false,
        false,
    ))]);
    let h = |x: f32| half::f16::from_f32(x).to_bits() as u32;
    let mut warp = m.warp();
    set64(&mut warp, 8, 0, m.buffers[0]);
    set(&mut warp, 4, 0, h(0.5) << 16 | h(1.0));
    m.set_global_u32(m.buffers[0], h(2.0) << 16 | h(65504.0));
    m.run(&mut warp, 1);
    // element 0: 65504 + 1 rounds back to 65504 (f16 spacing there is 32); element 1: 2.5.
    assert_eq!(m.global_u32(m.buffers[0]), h(2.5) << 16 | h(65504.0));
}

// ---------------------------------------------------------------------------------------------
// CAS, CAST and CAST.SPIN under contention within a warp
// ---------------------------------------------------------------------------------------------

#[test]
fn cas_lanes_on_one_address_are_serialised_in_lane_order() {
    // Lane l: CAS [0x20], Rb = l, Rc = l + 1. Starting from M = 0, lane 0 sees 0 and stores 1,
    // lane 1 then sees 1 and stores 2, ...: every lane succeeds only in increasing lane order.
    let m = Machine::new(vec![inst(atomic(
        Space::Shared,
        AtomicOp::Cas,
        Ty::U32,
        Reg(0),
        Address::absolute(0x20),
        reg(4),
        Some(reg(5)),
        false,
        false,
    ))]);
    let mut warp = m.warp();
    for lane in 0..32 {
        set(&mut warp, 4, lane, lane as u32);
        set(&mut warp, 5, lane, lane as u32 + 1);
    }
    m.run(&mut warp, u32::MAX);
    assert_eq!(m.shared_u32(0x20), 32);
    for lane in 0..32 {
        assert_eq!(
            get(&warp, 0, lane),
            lane as u32,
            "CAS returns the old value"
        );
    }
    assert_eq!(warp.stats.cas_failures, 0);
    assert_eq!(warp.stats.atomics[AtomicOp::Cas.index()], 32);
}

#[test]
fn cast_without_spin_lets_every_lane_attempt() {
    // All lanes: CAST [0x40], Rb = 0, Rc = 100 + lane on M = 0: lane 0 stores; the others
    // compare against 100 and fail (Rd = 0).
    let m = Machine::new(vec![inst(atomic(
        Space::Shared,
        AtomicOp::Cast,
        Ty::U32,
        Reg(0),
        Address::absolute(0x40),
        reg(4),
        Some(reg(5)),
        false,
        false,
    ))]);
    let mut warp = m.warp();
    for lane in 0..32 {
        set(&mut warp, 5, lane, 100 + lane as u32);
        set(&mut warp, 0, lane, 7);
    }
    m.run(&mut warp, u32::MAX);
    assert_eq!(m.shared_u32(0x40), 100);
    assert_eq!(get(&warp, 0, 0), 1);
    for lane in 1..32 {
        assert_eq!(get(&warp, 0, lane), 0);
    }
    assert_eq!(warp.stats.atomics[AtomicOp::Cast.index()], 32);
    assert_eq!(warp.stats.cas_failures, 31);
    assert_eq!(warp.stats.spin_fast_fails, 0);
}

/// `CAST.SPIN.U32 R0, [R8], R4, R5` with per-lane addresses; returns the machine and warp.
fn run_spin(
    addresses: &[(usize, u64)],
    memory: &[(u64, u32)],
    rb: u32,
    ty: Ty,
) -> (Machine, WarpState) {
    let m = Machine::new(vec![inst(atomic(
        Space::Shared,
        AtomicOp::Cast,
        ty,
        Reg(0),
        at32(8, 0),
        reg(4),
        Some(reg(6)),
        true,
        false,
    ))]);
    for &(addr, value) in memory {
        m.set_shared_u32(addr, value);
    }
    let mut warp = m.warp();
    let mut mask = 0;
    for &(lane, addr) in addresses {
        set(&mut warp, 8, lane, addr as u32);
        set64(&mut warp, 4, lane, rb as u64);
        set64(&mut warp, 6, lane, 1000 + lane as u64);
        set64(&mut warp, 0, lane, 0xdead_beef_dead_beef);
        mask |= 1 << lane;
    }
    assert_eq!(m.run(&mut warp, mask), GroupExit::Exited);
    (m, warp)
}

#[test]
fn cast_spin_same_bank_one_lane_attempts_the_rest_return_zero() {
    // Lanes 0..4 on one address: the lowest lane attempts (and succeeds); the others return
    // 0 without attempting, even though the word would not match anyway.
    let (m, warp) = run_spin(
        &[(0, 0x10), (1, 0x10), (2, 0x10), (3, 0x10)],
        &[(0x10, 5)],
        5,
        Ty::U32,
    );
    assert_eq!(m.shared_u32(0x10), 1000);
    assert_eq!(get(&warp, 0, 0), 1);
    for lane in 1..4 {
        assert_eq!(get(&warp, 0, lane), 0);
    }
    assert_eq!(warp.stats.spin_fast_fails, 3);
    assert_eq!(warp.stats.atomics[AtomicOp::Cast.index()], 1);
    assert_eq!(warp.stats.cas_failures, 0);
}

#[test]
fn cast_spin_groups_by_bank_not_by_address() {
    // 0x0 and 0x80 are different words in the same bank ((0x80 / 4) mod 32 = 0): lane 5 is the
    // bank's lowest lane and stores; lane 9 would have matched but fast-fails.
    let (m, warp) = run_spin(&[(5, 0x0), (9, 0x80)], &[(0x0, 5), (0x80, 5)], 5, Ty::U32);
    assert_eq!(m.shared_u32(0x0), 1005);
    assert_eq!(m.shared_u32(0x80), 5, "untouched");
    assert_eq!((get(&warp, 0, 5), get(&warp, 0, 9)), (1, 0));
    assert_eq!(warp.stats.spin_fast_fails, 1);
}

#[test]
fn cast_spin_on_different_banks_all_lanes_attempt() {
    let addresses: Vec<(usize, u64)> = (0..32).map(|l| (l, 4 * l as u64)).collect();
    let memory: Vec<(u64, u32)> = (0..32)
        .map(|l| (4 * l, if l % 2 == 0 { 5 } else { 6 }))
        .collect();
    let (m, warp) = run_spin(&addresses, &memory, 5, Ty::U32);
    for lane in 0..32 {
        let even = lane % 2 == 0;
        assert_eq!(get(&warp, 0, lane), even as u32, "lane {lane}");
        assert_eq!(
            m.shared_u32(4 * lane as u64),
            if even { 1000 + lane as u32 } else { 6 }
        );
    }
    assert_eq!(warp.stats.spin_fast_fails, 0);
    assert_eq!(warp.stats.atomics[AtomicOp::Cast.index()], 32);
    assert_eq!(warp.stats.cas_failures, 16);
}

#[test]
fn cast_spin_winner_may_fail_and_still_blocks_its_bank() {
    // The winner's compare fails: it returns 0 after attempting; the others fast-fail.
    let (m, warp) = run_spin(&[(2, 0x8), (3, 0x8)], &[(0x8, 1)], 5, Ty::U32);
    assert_eq!(m.shared_u32(0x8), 1);
    assert_eq!((get(&warp, 0, 2), get(&warp, 0, 3)), (0, 0));
    assert_eq!(warp.stats.cas_failures, 1);
    assert_eq!(warp.stats.spin_fast_fails, 1);
}

#[test]
fn cast_spin_picks_the_lowest_executing_lane() {
    // Lane 0 is not executing (guard false): lane 1 is the bank's lowest executing lane.
    let mut m = Machine::new(vec![]);
    m.kernel.insts = vec![guarded(
        0,
        false,
        atomic(
            Space::Shared,
            AtomicOp::Cast,
            Ty::U32,
            Reg(0),
            at32(8, 0),
            reg(4),
            Some(reg(5)),
            true,
            false,
        ),
    )];
    let mut warp = m.warp();
    warp.preds[0] = !1;
    for lane in 0..3 {
        set(&mut warp, 8, lane, 0x30);
        set(&mut warp, 5, lane, 50 + lane as u32);
        set(&mut warp, 0, lane, 9);
    }
    m.run(&mut warp, 0b111);
    assert_eq!(m.shared_u32(0x30), 51);
    assert_eq!(
        (get(&warp, 0, 0), get(&warp, 0, 1), get(&warp, 0, 2)),
        (9, 1, 0)
    );
    assert_eq!(warp.stats.spin_fast_fails, 1);
}

#[test]
fn cast_64_bit_writes_one_or_zero_in_the_low_word_and_zero_high() {
    let m = Machine::new(vec![inst(atomic(
        Space::Shared,
        AtomicOp::Cast,
        Ty::U64,
        Reg(0),
        at32(8, 0),
        reg(4),
        Some(reg(6)),
        false,
        false,
    ))]);
    let mut warp = m.warp();
    for (lane, addr) in [(0usize, 0u64), (1, 8)] {
        set(&mut warp, 8, lane, addr as u32);
        set64(&mut warp, 4, lane, 0x1_0000_0002);
        set64(&mut warp, 6, lane, 0xaaaa_bbbb_cccc_dddd);
        set64(&mut warp, 0, lane, u64::MAX);
    }
    m.set_shared_u64(0, 0x1_0000_0002);
    m.set_shared_u64(8, 0x2);
    m.run(&mut warp, 0b11);
    assert_eq!(get64(&warp, 0, 0), 1);
    assert_eq!(get64(&warp, 0, 1), 0);
    assert_eq!(m.shared_u64(0), 0xaaaa_bbbb_cccc_dddd);
    assert_eq!(m.shared_u64(8), 2);
}

#[test]
fn cas_with_rc_rz_stores_zero() {
    // `Rc = RZ` is allowed by the encoding rules: the swap value is zero.
    let m = Machine::new(vec![inst(atomic(
        Space::Shared,
        AtomicOp::Cas,
        Ty::U32,
        Reg(0),
        Address::absolute(0),
        reg(4),
        Some(Operand::Reg(Reg::RZ)),
        false,
        false,
    ))]);
    let mut warp = m.warp();
    set(&mut warp, 4, 0, 77);
    m.set_shared_u32(0, 77);
    m.run(&mut warp, 1);
    assert_eq!((m.shared_u32(0), get(&warp, 0, 0)), (0, 77));
}

// ---------------------------------------------------------------------------------------------
// Addressing forms
// ---------------------------------------------------------------------------------------------

#[test]
fn shared_addressing_forms_of_the_document() {
    // ATOMS.ADD R0, [R1 - 400], R9 ; ATOMS.ADD R2, [0x10], R8 ; ATOMS.ADD R3, [RZ + 0x20], R8 ;
    let ops = vec![
        inst(atomic(
            Space::Shared,
            AtomicOp::Add,
            Ty::S32,
            Reg(0),
            at32(1, -400),
            reg(9),
            None,
            false,
            false,
        )),
        inst(atomic(
            Space::Shared,
            AtomicOp::Add,
            Ty::U32,
            Reg(2),
            Address::absolute(0x10),
            reg(8),
            None,
            false,
            false,
        )),
        inst(atomic(
            Space::Shared,
            AtomicOp::Add,
            Ty::U32,
            Reg(3),
            Address::Linear(LinearAddress {
                base: Some(Reg::RZ),
                base_bits: 32,
                offset: 0x20,
            }),
            reg(8),
            None,
            false,
            false,
        )),
    ];
    let m = Machine::new(ops);
    let mut warp = m.warp();
    set(&mut warp, 1, 0, 400 + 0x40);
    set(&mut warp, 9, 0, 5);
    set(&mut warp, 8, 0, 3);
    m.run(&mut warp, 1);
    assert_eq!(m.shared_u32(0x40), 5);
    assert_eq!(m.shared_u32(0x10), 3);
    assert_eq!(m.shared_u32(0x20), 3);
}

#[test]
fn shared_address_wraps_in_32_bits() {
    // Ra + ImmS24 is a 32-bit addition: 0xffff_fff0 + 0x18 = 0x8.
    let m = Machine::new(vec![inst(atomic(
        Space::Shared,
        AtomicOp::Exch,
        Ty::U32,
        Reg(0),
        at32(1, 0x18),
        reg(4),
        None,
        false,
        false,
    ))]);
    let mut warp = m.warp();
    set(&mut warp, 1, 0, 0xffff_fff0);
    set(&mut warp, 4, 0, 99);
    assert_eq!(m.run(&mut warp, 1), GroupExit::Exited);
    assert_eq!(m.shared_u32(8), 99);
}

// ---------------------------------------------------------------------------------------------
// Traps
// ---------------------------------------------------------------------------------------------

fn trap(exit: GroupExit) -> TrapInfo {
    match exit {
        GroupExit::Trap(info) => info,
        other => panic!("expected a trap, got {other:?}"),
    }
}

#[test]
fn misaligned_shared_atomic_traps_at_the_first_faulting_lane_keeping_earlier_effects() {
    let m = Machine::new(vec![
        inst(Op::Nop),
        inst(Op::Mov {
            ty: Ty::U32,
            dst: Reg(10),
            src: Operand::Imm(1),
        }),
        inst(atomic(
            Space::Shared,
            AtomicOp::Add,
            Ty::U32,
            Reg(0),
            at32(8, 0),
            reg(4),
            None,
            false,
            false,
        )),
    ]);
    let mut warp = m.warp();
    for lane in 0..8 {
        set(&mut warp, 8, lane, 4 * lane as u32);
        set(&mut warp, 4, lane, 1);
        set(&mut warp, 0, lane, 0xdead);
        m.set_shared_u32(4 * lane as u64, 10 + lane as u32);
    }
    set(&mut warp, 8, 3, 0xe); // lane 3: misaligned
    set(&mut warp, 8, 5, 0x2); // lane 5: also misaligned, never reached
    let info = trap(m.run(&mut warp, 0xff));
    assert_eq!(
        info,
        TrapInfo {
            reason: TrapReason::MisalignedAddress,
            pc: 2,
            lane: 3,
            space: Space::Shared,
            address: 0xe,
            surface: None,
        }
    );
    for lane in 0..3 {
        assert_eq!(
            m.shared_u32(4 * lane as u64),
            11 + lane as u32,
            "lane {lane} completed"
        );
        assert_eq!(get(&warp, 0, lane), 10 + lane as u32);
    }
    for lane in 3..8 {
        assert_eq!(get(&warp, 0, lane), 0xdead, "lane {lane} did not run");
    }
    assert_eq!(m.shared_u32(16), 14, "lane 4 did not run");
    assert_eq!(warp.stats.atomics[AtomicOp::Add.index()], 3);
    assert_eq!(get(&warp, 10, 7), 1, "the instructions before completed");
}

#[test]
fn out_of_range_shared_atomic_traps() {
    // The CTA's shared window is 1024 bytes: 1024 is outside; the 16 MB window bound too.
    for (address, reason) in [
        (1024u64, TrapReason::AddressOutOfRange),
        (1020 + 8, TrapReason::AddressOutOfRange),
        (0x0100_0000, TrapReason::AddressOutOfRange),
        (1026, TrapReason::MisalignedAddress),
    ] {
        let m = Machine::new(vec![inst(atomic(
            Space::Shared,
            AtomicOp::Inc,
            Ty::U32,
            Reg(0),
            Address::absolute(address as i64),
            reg(4),
            None,
            false,
            false,
        ))]);
        let mut warp = m.warp();
        let info = trap(m.run(&mut warp, 0b100));
        assert_eq!(
            info,
            TrapInfo {
                reason,
                pc: 0,
                lane: 2,
                space: Space::Shared,
                address,
                surface: None,
            }
        );
    }
    // The last word of the window is in range.
    let m = Machine::new(vec![inst(atomic(
        Space::Shared,
        AtomicOp::Inc,
        Ty::U32,
        Reg(0),
        Address::absolute(1020),
        reg(4),
        None,
        false,
        false,
    ))]);
    let mut warp = m.warp();
    set(&mut warp, 4, 0, 10);
    assert_eq!(m.run(&mut warp, 1), GroupExit::Exited);
    assert_eq!(m.shared_u32(1020), 1);
}

#[test]
fn sixty_four_bit_atomic_needs_eight_byte_alignment() {
    let m = Machine::new(vec![inst(atomic(
        Space::Shared,
        AtomicOp::Exch,
        Ty::U64,
        Reg(0),
        Address::absolute(4),
        reg(4),
        None,
        false,
        false,
    ))]);
    let mut warp = m.warp();
    let info = trap(m.run(&mut warp, 1));
    assert_eq!(
        (info.reason, info.address),
        (TrapReason::MisalignedAddress, 4)
    );
}

#[test]
fn global_atomic_traps_outside_the_allocations() {
    let m = Machine::new(vec![inst(atomic(
        Space::Global,
        AtomicOp::Add,
        Ty::U32,
        Reg(0),
        at64(8, 0),
        reg(4),
        None,
        false,
        false,
    ))]);
    for (address, reason) in [
        (0u64, TrapReason::AddressOutOfRange),
        (m.buffers[0] + 1024, TrapReason::AddressOutOfRange),
        (GLOBAL_BASE - 4, TrapReason::AddressOutOfRange),
        (m.buffers[0] + 2, TrapReason::MisalignedAddress),
    ] {
        let mut warp = m.warp();
        set64(&mut warp, 8, 0, m.buffers[0]);
        set64(&mut warp, 8, 1, address);
        let info = trap(m.run(&mut warp, 0b11));
        assert_eq!(
            info,
            TrapInfo {
                reason,
                pc: 0,
                lane: 1,
                space: Space::Global,
                address,
                surface: None,
            }
        );
    }
    assert_eq!(m.global_u32(m.buffers[0]), 0, "lane 0 added 0 four times");
}

#[test]
fn spin_trap_keeps_the_effects_of_lower_lanes() {
    // Lanes 0 and 1 share a bank; lane 2 faults. Lane 0 stored, lane 1 fast-failed, lane 3
    // never ran.
    let m = Machine::new(vec![inst(atomic(
        Space::Shared,
        AtomicOp::Cast,
        Ty::U32,
        Reg(0),
        at32(8, 0),
        reg(4),
        Some(reg(5)),
        true,
        false,
    ))]);
    let mut warp = m.warp();
    for (lane, addr) in [(0usize, 0u32), (1, 0), (2, 0x1_0000), (3, 4)] {
        set(&mut warp, 8, lane, addr);
        set(&mut warp, 5, lane, 40 + lane as u32);
        set(&mut warp, 0, lane, 0xdead);
    }
    let info = trap(m.run(&mut warp, 0b1111));
    assert_eq!((info.lane, info.reason), (2, TrapReason::AddressOutOfRange));
    assert_eq!(m.shared_u32(0), 40);
    assert_eq!(
        (get(&warp, 0, 0), get(&warp, 0, 1), get(&warp, 0, 3)),
        (1, 0, 0xdead)
    );
    assert_eq!(m.shared_u32(4), 0);
    assert_eq!(warp.stats.spin_fast_fails, 1);
    assert_eq!(warp.stats.atomics[AtomicOp::Cast.index()], 1);
}

#[test]
fn guard_false_lanes_never_trap() {
    let m = Machine::new(vec![guarded(
        1,
        true,
        atomic(
            Space::Shared,
            AtomicOp::Add,
            Ty::U32,
            Reg(0),
            Address::absolute(3),
            reg(4),
            None,
            false,
            false,
        ),
    )]);
    let mut warp = m.warp();
    warp.preds[1] = u32::MAX; // @!P1 with P1 true everywhere: nothing executes
    assert_eq!(m.run(&mut warp, u32::MAX), GroupExit::Exited);
    assert_eq!(
        warp.stats.warp_insts, 1,
        "counted even though no lane executed"
    );
    assert_eq!(warp.stats.total_atomics(), 0);
}

#[test]
fn constant_bank_reads_outside_the_bank_trap() {
    let m = Machine::new(vec![inst(Op::Mov {
        ty: Ty::U32,
        dst: Reg(0),
        src: Operand::Const {
            bank: 0,
            offset: 0x180,
        },
    })]);
    let mut warp = m.warp();
    let info = trap(m.run(&mut warp, 1));
    assert_eq!(
        info,
        TrapInfo {
            reason: TrapReason::AddressOutOfRange,
            pc: 0,
            lane: 0,
            space: Space::Const,
            address: 0x180,
            surface: None,
        }
    );
}

#[test]
fn loads_and_stores_trap_like_atomics() {
    let m = Machine::new(vec![
        inst(Op::Store {
            access: MemAccess {
                space: Space::Shared,
                ty: Ty::U16,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Cta,
                addr: at32(8, 0),
            },
            src: reg(4),
        }),
        inst(Op::Load {
            access: MemAccess {
                space: Space::Global,
                ty: Ty::U64,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Gpu,
                addr: at64(10, 0),
            },
            dst: Reg(0),
        }),
    ]);
    let mut warp = m.warp();
    set(&mut warp, 8, 0, 1);
    let info = trap(m.run(&mut warp, 1));
    assert_eq!(
        (info.reason, info.pc, info.space, info.address),
        (TrapReason::MisalignedAddress, 0, Space::Shared, 1)
    );
    let mut warp = m.warp();
    set64(&mut warp, 10, 0, m.buffers[0] + 1020);
    let info = trap(m.run(&mut warp, 1));
    assert_eq!(
        (info.reason, info.pc, info.space),
        (TrapReason::MisalignedAddress, 1, Space::Global)
    );
    let mut warp = m.warp();
    set64(&mut warp, 10, 0, m.buffers[0] + 1024);
    let info = trap(m.run(&mut warp, 1));
    assert_eq!(
        (info.reason, info.address),
        (TrapReason::AddressOutOfRange, m.buffers[0] + 1024)
    );
}

#[test]
fn stores_to_the_constant_bank_trap() {
    let m = Machine::new(vec![inst(Op::Store {
        access: MemAccess {
            space: Space::Const,
            ty: Ty::U32,
            vector: 1,
            order: MemOrder::Weak,
            scope: Scope::Cta,
            addr: Address::absolute(0x160),
        },
        src: reg(4),
    })]);
    let mut warp = m.warp();
    let info = trap(m.run(&mut warp, 1));
    assert_eq!(
        (info.reason, info.space),
        (TrapReason::AddressOutOfRange, Space::Const)
    );
}

// ---------------------------------------------------------------------------------------------
// Control flow: the GroupExit events
// ---------------------------------------------------------------------------------------------

fn setp_lane_lt(dst: u16, n: u32) -> Inst {
    inst(Op::SetP {
        cmp: CmpOp::Lt,
        ty: Ty::U32,
        combine: BoolOp::And,
        dst: Pred(dst),
        dst2: Pred::PT,
        a: src(20),
        b: imm(n as u64),
        c: PredSrc::TRUE,
        chain: None,
    })
}

fn lane_ids(warp: &mut WarpState) {
    for lane in 0..32 {
        set(warp, 20, lane, lane as u32);
    }
}

#[test]
fn divergent_branch_reports_both_sides() {
    let m = Machine::new(vec![
        setp_lane_lt(0, 16),
        guarded(
            0,
            false,
            Op::Branch {
                target: 4,
                uniform: false,
            },
        ),
        inst(Op::Nop),
        inst(Op::Exit),
        inst(Op::Exit),
    ]);
    let mut warp = m.warp();
    lane_ids(&mut warp);
    assert_eq!(
        m.run(&mut warp, u32::MAX),
        GroupExit::Diverge(Split {
            branch_pc: 1,
            taken_pc: 4,
            taken: 0xffff,
            fall_pc: 2,
            fall: 0xffff_0000
        })
    );
    // Only the lanes of the group count: with mask 0xff all are taken, the branch is forward.
    let mut warp = m.warp();
    lane_ids(&mut warp);
    assert_eq!(m.run(&mut warp, 0xff), GroupExit::Exited);
    assert_eq!(warp.stats.warp_insts, 3, "SETP, BRA, EXIT at 4");
    // With mask 0xff00_0000 none is taken: fall through to the EXIT at 3.
    let mut warp = m.warp();
    lane_ids(&mut warp);
    assert_eq!(m.run(&mut warp, 0xff00_0000), GroupExit::Exited);
    assert_eq!(warp.stats.warp_insts, 4);
}

#[test]
fn uniform_backward_branch_yields() {
    let m = Machine::new(vec![
        inst(Op::Nop),
        inst(Op::Binary {
            op: BinOp::Add,
            ty: Ty::U32,
            dst: Reg(1),
            a: src(1),
            b: imm(1),
            ftz: false,
        }),
        inst(Op::Branch {
            target: 1,
            uniform: false,
        }),
    ]);
    let mut warp = m.warp();
    assert_eq!(
        m.run(&mut warp, 0xf0),
        GroupExit::Yield { pc: 1, mask: 0xf0 }
    );
    assert_eq!(get(&warp, 1, 4), 1);
    assert_eq!(get(&warp, 1, 0), 0, "lane 0 is not in the group");
    let exit = Interpreter.run_group(&mut warp, &m.env(), 1, 0xf0, None);
    assert_eq!(exit, GroupExit::Yield { pc: 1, mask: 0xf0 });
    assert_eq!(get(&warp, 1, 4), 2);
    // A branch to itself is backward too.
    let m = Machine::new(vec![inst(Op::Branch {
        target: 0,
        uniform: true,
    })]);
    let mut warp = m.warp();
    assert_eq!(m.run(&mut warp, 1), GroupExit::Yield { pc: 0, mask: 1 });
}

#[test]
fn exit_removes_lanes_and_the_rest_continue() {
    let m = Machine::new(vec![
        setp_lane_lt(0, 8),
        guarded(0, false, Op::Exit),
        inst(Op::Mov {
            ty: Ty::U32,
            dst: Reg(2),
            src: Operand::Imm(7),
        }),
        inst(Op::Branch {
            target: 2,
            uniform: false,
        }),
    ]);
    let mut warp = m.warp();
    lane_ids(&mut warp);
    assert_eq!(
        m.run(&mut warp, 0xffff),
        GroupExit::Yield {
            pc: 2,
            mask: 0xff00
        }
    );
    assert_eq!(warp.exited, 0xff);
    assert_eq!((get(&warp, 2, 0), get(&warp, 2, 8)), (0, 7));
    assert_eq!(warp.live(), !0xff);
}

#[test]
fn exit_of_every_lane_reports_exited() {
    let m = Machine::new(vec![
        inst(Op::Exit),
        inst(Op::Mov {
            ty: Ty::U32,
            dst: Reg(2),
            src: Operand::Imm(7),
        }),
    ]);
    let mut warp = m.warp();
    assert_eq!(m.run(&mut warp, 0x3), GroupExit::Exited);
    assert_eq!(warp.exited, 0x3);
    assert_eq!(get(&warp, 2, 0), 0);
}

#[test]
fn running_past_the_end_is_an_implicit_exit() {
    let m = Machine::new(vec![inst(Op::Nop)]);
    let mut warp = m.warp();
    assert_eq!(m.run(&mut warp, 0x5), GroupExit::Exited);
    assert_eq!(warp.exited, 0x5);
}

#[test]
fn barrier_returns_to_the_scheduler_with_the_whole_group() {
    let m = Machine::new(vec![
        setp_lane_lt(0, 1),
        guarded(0, false, Op::Barrier { id: 3 }),
        guarded(0, true, Op::Barrier { id: 0 }),
        guarded(1, false, Op::Barrier { id: 5 }),
        inst(Op::Exit),
    ]);
    let mut warp = m.warp();
    lane_ids(&mut warp);
    // Lane 0 passes the guard: the whole group arrives.
    assert_eq!(
        m.run(&mut warp, 0b11),
        GroupExit::Barrier {
            pc: 1,
            mask: 0b11,
            id: 3
        }
    );
    // Resuming after it: lane 1 passes `@!P0`.
    assert_eq!(
        Interpreter.run_group(&mut warp, &m.env(), 2, 0b11, None),
        GroupExit::Barrier {
            pc: 2,
            mask: 0b11,
            id: 0
        }
    );
    // P1 is false everywhere: the barrier at 3 is skipped.
    assert_eq!(
        Interpreter.run_group(&mut warp, &m.env(), 3, 0b11, None),
        GroupExit::Exited
    );
}

#[test]
fn stop_pc_reconverges_before_executing_it() {
    let m = Machine::new(vec![
        inst(Op::Mov {
            ty: Ty::U32,
            dst: Reg(2),
            src: Operand::Imm(1),
        }),
        inst(Op::Mov {
            ty: Ty::U32,
            dst: Reg(3),
            src: Operand::Imm(1),
        }),
        inst(Op::Exit),
    ]);
    let mut warp = m.warp();
    assert_eq!(
        Interpreter.run_group(&mut warp, &m.env(), 0, 1, Some(1)),
        GroupExit::Reconverge { mask: 1 }
    );
    assert_eq!((get(&warp, 2, 0), get(&warp, 3, 0)), (1, 0));
    assert_eq!(warp.stats.warp_insts, 1);
    // At its own reconvergence point a group returns at once.
    assert_eq!(
        Interpreter.run_group(&mut warp, &m.env(), 1, 1, Some(1)),
        GroupExit::Reconverge { mask: 1 }
    );
    assert_eq!(warp.stats.warp_insts, 1);
}

// ---------------------------------------------------------------------------------------------
// Registers, predicates and ALU ops through the run loop
// ---------------------------------------------------------------------------------------------

#[test]
fn sources_are_read_before_destinations_are_written() {
    // IADD3 R0, R0, R0, R0 triples; IMAD.WIDE.U32 R2, R2, R3, R2 uses the old pair.
    let m = Machine::new(vec![
        inst(Op::IAdd3 {
            dst: Reg(0),
            carry_out: [Pred::PT; 2],
            a: src(0),
            b: src(0),
            c: src(0),
            carry_in: [PredSrc::FALSE; 2],
        }),
        inst(Op::Imad {
            mode: ImadMode::Wide,
            signed: false,
            dst: Reg(2),
            a: src(2),
            b: src(3),
            c: src(2),
        }),
    ]);
    let mut warp = m.warp();
    set(&mut warp, 0, 0, 5);
    set(&mut warp, 2, 0, 0xffff_ffff);
    set(&mut warp, 3, 0, 2);
    m.run(&mut warp, 1);
    assert_eq!(get(&warp, 0, 0), 15);
    // 0xffffffff * 2 + (2:0xffffffff) = 0x1_ffff_fffe + 0x2_ffff_ffff.
    assert_eq!(get64(&warp, 2, 0), 0x1_ffff_fffe + 0x2_ffff_ffff);
}

#[test]
fn rz_and_pt_discard_writes() {
    let m = Machine::new(vec![
        inst(Op::Mov {
            ty: Ty::U32,
            dst: Reg::RZ,
            src: Operand::Imm(5),
        }),
        inst(Op::IAdd3 {
            dst: Reg(1),
            carry_out: [Pred::PT, Pred::PT],
            a: rz(),
            b: imm(3),
            c: rz(),
            carry_in: [PredSrc::FALSE; 2],
        }),
        inst(Op::PredLogic {
            op: BoolOp::And,
            dst: Pred::PT,
            a: PredSrc::FALSE,
            b: PredSrc::FALSE,
        }),
        guarded(
            u16::MAX,
            false,
            Op::Mov {
                ty: Ty::U32,
                dst: Reg(2),
                src: Operand::Imm(9),
            },
        ),
    ]);
    let mut warp = m.warp();
    m.run(&mut warp, 1);
    assert_eq!(get(&warp, 1, 0), 3, "RZ read as 0");
    assert_eq!(get(&warp, 2, 0), 9, "PT still true");
}

#[test]
fn iadd3_carry_chain_for_64_bit_add_and_subtract() {
    // IADD3 R4, P0, R0, R2, RZ ; IADD3.X R5, R1, R3, RZ, P0, !PT  (R5:R4 = R1:R0 + R3:R2)
    // IADD3 R6, P1, R0, -R2, RZ ; IADD3.X R7, R1, ~R3, RZ, P1, !PT (R7:R6 = R1:R0 - R3:R2)
    let add = |dst, cout: u16, a: Src, b: Src, cin: PredSrc| {
        inst(Op::IAdd3 {
            dst: Reg(dst),
            carry_out: [Pred(cout), Pred::PT],
            a,
            b,
            c: rz(),
            carry_in: [cin, PredSrc::FALSE],
        })
    };
    let m = Machine::new(vec![
        add(4, 0, src(0), src(2), PredSrc::FALSE),
        add(5, u16::MAX, src(1), src(3), psrc(0)),
        add(6, 1, src(0), modified(2, SrcMod::Neg), PredSrc::FALSE),
        add(7, u16::MAX, src(1), modified(3, SrcMod::Not), psrc(1)),
    ]);
    let pairs = [
        (0u64, 0u64),
        (0xffff_ffff, 1),
        (0x1_0000_0000, 1),
        (5, 0),
        (0, 5),
        (u64::MAX, u64::MAX),
        (0x8000_0000_0000_0000, 0x7fff_ffff_ffff_ffff),
    ];
    let mut warp = m.warp();
    for (lane, &(x, y)) in pairs.iter().enumerate() {
        set64(&mut warp, 0, lane, x);
        set64(&mut warp, 2, lane, y);
    }
    m.run(&mut warp, (1 << pairs.len()) - 1);
    for (lane, &(x, y)) in pairs.iter().enumerate() {
        assert_eq!(get64(&warp, 4, lane), x.wrapping_add(y), "{x:#x} + {y:#x}");
        assert_eq!(get64(&warp, 6, lane), x.wrapping_sub(y), "{x:#x} - {y:#x}");
        assert_eq!(
            pred(&warp, 0, lane),
            (x as u32 as u64 + y as u32 as u64) >> 32 == 1
        );
        assert_eq!(pred(&warp, 1, lane), x as u32 >= y as u32, "no borrow");
    }
}

#[test]
fn imad_wide_with_a_constant_bank_pair_addresses_an_array() {
    // IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x160]: &buffer[tid].
    let mut m = Machine::new(vec![inst(Op::Imad {
        mode: ImadMode::Wide,
        signed: false,
        dst: Reg(2),
        a: src(0),
        b: imm(4),
        c: Src::plain(Operand::Const {
            bank: 0,
            offset: 0x160,
        }),
    })]);
    m.cbank[0x160..0x168].copy_from_slice(&GLOBAL_BASE.to_le_bytes());
    let mut warp = m.warp();
    lane_ids(&mut warp);
    for lane in 0..32 {
        set(&mut warp, 0, lane, lane as u32);
    }
    m.run(&mut warp, u32::MAX);
    for lane in 0..32 {
        assert_eq!(get64(&warp, 2, lane), GLOBAL_BASE + 4 * lane as u64);
    }
}

#[test]
fn lea_lop3_shf_select_and_predicates() {
    let m = Machine::new(vec![
        // LEA R2, P0, R0, R1, 0x2
        inst(Op::Lea {
            hi: false,
            sx32: false,
            dst: Reg(2),
            carry_out: Pred(0),
            a: src(0),
            b: src(1),
            c: rz(),
            shift: 2,
            carry_in: PredSrc::FALSE,
        }),
        // LEA.HI.X R3, R0, R5, RZ, 0x2, P0
        inst(Op::Lea {
            hi: true,
            sx32: false,
            dst: Reg(3),
            carry_out: Pred::PT,
            a: src(0),
            b: src(5),
            c: rz(),
            shift: 2,
            carry_in: psrc(0),
        }),
        // LOP3.LUT P1, R4, R0, 0xff, RZ, 0xc0 (a & b), !PT
        inst(Op::Lop3 {
            dst: Reg(4),
            pred_out: Pred(1),
            a: src(0),
            b: imm(0xff),
            c: rz(),
            lut: 0xc0,
        }),
        // SHF.R.S32.HI R6, RZ, 0x1f, R0
        inst(Op::Shf(ShfInst {
            left: false,
            wrap: false,
            high: true,
            ty: Ty::S32,
            dst: Reg(6),
            lo: rz(),
            shift: imm(31),
            hi: src(0),
        })),
        // SEL R7, R0, R1, P1
        inst(Op::Select {
            ty: Ty::U32,
            dst: Reg(7),
            a: src(0),
            b: src(1),
            pred: psrc(1),
        }),
        // ISETP.GE.U32.OR P2, P3, R0, R1, P1 ... with dst2 = !r OR c
        inst(Op::SetP {
            cmp: CmpOp::Ge,
            ty: Ty::S32,
            combine: BoolOp::Or,
            dst: Pred(2),
            dst2: Pred(3),
            a: src(0),
            b: src(1),
            c: PredSrc {
                pred: Pred(1),
                negate: true,
            },
            chain: None,
        }),
        // P2R-like and R2P-like moves.
        inst(Op::PredMove(PredMove::ToReg {
            dst: Reg(8),
            src: psrc(2),
        })),
        inst(Op::PredMove(PredMove::FromReg {
            dst: Pred(4),
            src: reg(0),
            mask: 0x100,
        })),
        inst(Op::PredLogic {
            op: BoolOp::Xor,
            dst: Pred(5),
            a: psrc(1),
            b: psrc(4),
        }),
    ]);
    let mut warp = m.warp();
    let inputs = [
        (0x4000_0001u32, 0xffff_fff0u32),
        (0xc000_0100, 3),
        (0, 0),
        (0x8000_0000, 1),
    ];
    for (lane, &(a, b)) in inputs.iter().enumerate() {
        set(&mut warp, 0, lane, a);
        set(&mut warp, 1, lane, b);
        set(&mut warp, 5, lane, 0x10);
    }
    m.run(&mut warp, 0xf);
    for (lane, &(a, b)) in inputs.iter().enumerate() {
        let low = (a as u64) << 2;
        let sum = (low & 0xffff_ffff) + b as u64;
        assert_eq!(get(&warp, 2, lane), sum as u32);
        assert_eq!(pred(&warp, 0, lane), sum >> 32 == 1);
        assert_eq!(get(&warp, 3, lane), (a >> 30) + 0x10 + (sum >> 32) as u32);
        let and = a & 0xff;
        assert_eq!(get(&warp, 4, lane), and);
        assert_eq!(pred(&warp, 1, lane), and != 0);
        assert_eq!(get(&warp, 6, lane), ((a as i32) >> 31) as u32);
        assert_eq!(get(&warp, 7, lane), if and != 0 { a } else { b });
        let r = a as i32 >= b as i32;
        assert_eq!(pred(&warp, 2, lane), r || and == 0);
        assert_eq!(pred(&warp, 3, lane), !r || and == 0);
        assert_eq!(get(&warp, 8, lane), pred(&warp, 2, lane) as u32);
        assert_eq!(pred(&warp, 4, lane), a & 0x100 != 0);
        assert_eq!(pred(&warp, 5, lane), (and != 0) ^ (a & 0x100 != 0));
    }
}

#[test]
fn vote_any_all_eq_and_ballot_over_executing_lanes() {
    let vote = |mode, dst: u16, p: u16| Op::Vote {
        mode,
        dst: Reg(dst),
        dst_pred: Pred(p),
        src: psrc(0),
    };
    let m = Machine::new(vec![
        setp_lane_lt(0, 4),
        inst(vote(VoteMode::Any, 1, 1)),
        inst(vote(VoteMode::All, 2, 2)),
        inst(vote(VoteMode::Eq, 3, 3)),
        // Only lanes 0..4 execute (guard P0): all of them vote true.
        guarded(0, false, vote(VoteMode::All, 4, 4)),
        guarded(0, false, vote(VoteMode::Eq, 5, 5)),
    ]);
    let mut warp = m.warp();
    lane_ids(&mut warp);
    m.run(&mut warp, 0xff);
    for lane in 0..8 {
        assert_eq!(get(&warp, 1, lane), 0xf, "ballot");
        assert!(pred(&warp, 1, lane));
        assert!(!pred(&warp, 2, lane));
        assert!(!pred(&warp, 3, lane));
    }
    for lane in 0..4 {
        assert!(pred(&warp, 4, lane));
        assert!(pred(&warp, 5, lane));
        assert_eq!(get(&warp, 4, lane), 0xf);
    }
    for lane in 4..8 {
        assert!(!pred(&warp, 4, lane), "not executing: untouched");
        assert_eq!(get(&warp, 4, lane), 0);
    }
    assert_eq!(get(&warp, 1, 8), 0, "lane 8 is not in the group");
}

#[test]
fn special_registers_decompose_the_thread_index() {
    let specials = [
        SpecialReg::TidX,
        SpecialReg::TidY,
        SpecialReg::TidZ,
        SpecialReg::CtaIdX,
        SpecialReg::CtaIdY,
        SpecialReg::CtaIdZ,
        SpecialReg::NTidX,
        SpecialReg::NTidY,
        SpecialReg::NTidZ,
        SpecialReg::NCtaIdX,
        SpecialReg::NCtaIdY,
        SpecialReg::NCtaIdZ,
        SpecialReg::LaneId,
        SpecialReg::WarpId,
        SpecialReg::NWarpId,
    ];
    let insts = specials
        .iter()
        .enumerate()
        .map(|(i, &sr)| {
            inst(Op::ReadSpecial {
                dst: Reg(i as u16),
                sr,
            })
        })
        .collect();
    let mut m = Machine::new(insts);
    m.ntid = [6, 4, 3]; // 72 threads: 3 warps
    let mut warp = WarpState::new(NUM_REGS, NUM_PREDS, 1, u32::MAX);
    m.run(&mut warp, u32::MAX);
    for lane in 0..32 {
        let t = 32 + lane as u32;
        let want = [
            t % 6,
            t / 6 % 4,
            t / 24,
            3,
            4,
            5,
            6,
            4,
            3,
            6,
            7,
            8,
            lane as u32,
            1,
            3,
        ];
        for (i, &w) in want.iter().enumerate() {
            assert_eq!(
                get(&warp, i as u16, lane),
                w,
                "{:?} lane {lane}",
                specials[i]
            );
        }
    }
}

#[test]
fn loads_extend_and_stores_truncate_little_endian() {
    let load = |ty, dst| Op::Load {
        access: MemAccess {
            space: Space::Shared,
            ty,
            vector: 1,
            order: MemOrder::Weak,
            scope: Scope::Cta,
            addr: Address::absolute(0),
        },
        dst: Reg(dst),
    };
    let m = Machine::new(vec![
        inst(load(Ty::U8, 0)),
        inst(load(Ty::S8, 1)),
        inst(load(Ty::U16, 2)),
        inst(load(Ty::S16, 3)),
        inst(load(Ty::U32, 4)),
        inst(load(Ty::U64, 6)),
        inst(Op::Store {
            access: MemAccess {
                space: Space::Shared,
                ty: Ty::U8,
                vector: 1,
                order: MemOrder::Release,
                scope: Scope::Cta,
                addr: Address::absolute(16),
            },
            src: reg(10),
        }),
        inst(Op::Store {
            access: MemAccess {
                space: Space::Shared,
                ty: Ty::U64,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Cta,
                addr: Address::absolute(24),
            },
            src: reg(10),
        }),
        inst(Op::Load {
            access: MemAccess {
                space: Space::Shared,
                ty: Ty::U16,
                vector: 1,
                order: MemOrder::Acquire,
                scope: Scope::Cta,
                addr: Address::absolute(25),
            },
            dst: Reg(12),
        }),
    ]);
    m.shared
        .region()
        .write_bytes(0, &[0x81, 0x92, 0xa3, 0xb4, 0x05, 0x06, 0x07, 0x08]);
    let mut warp = m.warp();
    set64(&mut warp, 10, 0, 0x1122_3344_5566_7788);
    let info = trap(m.run(&mut warp, 1));
    assert_eq!(
        (info.pc, info.reason, info.address),
        (8, TrapReason::MisalignedAddress, 25)
    );
    assert_eq!(get(&warp, 0, 0), 0x81);
    assert_eq!(get(&warp, 1, 0), 0xffff_ff81);
    assert_eq!(get(&warp, 2, 0), 0x9281);
    assert_eq!(get(&warp, 3, 0), 0xffff_9281);
    assert_eq!(get(&warp, 4, 0), 0xb4a3_9281);
    assert_eq!(get64(&warp, 6, 0), 0x0807_0605_b4a3_9281);
    let mut bytes = [0u8; 16];
    m.shared.region().read_bytes(16, &mut bytes);
    assert_eq!(
        bytes,
        [0x88, 0, 0, 0, 0, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11]
    );
}

#[test]
fn mov_moves_32_or_64_bits_from_registers_immediates_and_constants() {
    let mut m = Machine::new(vec![
        inst(Op::Mov {
            ty: Ty::U64,
            dst: Reg(0),
            src: Operand::Imm(0x1234_5678_9abc_def0),
        }),
        inst(Op::Mov {
            ty: Ty::U32,
            dst: Reg(2),
            src: Operand::Imm(0x1234_5678_9abc_def0),
        }),
        inst(Op::Mov {
            ty: Ty::U32,
            dst: Reg(3),
            src: Operand::Const { bank: 0, offset: 0 },
        }),
        inst(Op::Mov {
            ty: Ty::U64,
            dst: Reg(4),
            src: Operand::Const {
                bank: 0,
                offset: 0x160,
            },
        }),
        inst(Op::Mov {
            ty: Ty::U64,
            dst: Reg(6),
            src: reg(0),
        }),
        inst(Op::Mov {
            ty: Ty::U32,
            dst: Reg(8),
            src: Operand::Const { bank: 1, offset: 0 },
        }),
    ]);
    m.cbank[0x160..0x168].copy_from_slice(&0xaabb_ccdd_eeff_0011u64.to_le_bytes());
    let mut warp = m.warp();
    let info = trap(m.run(&mut warp, 1));
    assert_eq!(
        (info.pc, info.space, info.reason),
        (5, Space::Const, TrapReason::AddressOutOfRange)
    );
    assert_eq!(get64(&warp, 0, 0), 0x1234_5678_9abc_def0);
    assert_eq!(get(&warp, 2, 0), 0x9abc_def0);
    assert_eq!(get(&warp, 3, 0), 32, "c[0x0][0x0] = block size x");
    assert_eq!(get64(&warp, 4, 0), 0xaabb_ccdd_eeff_0011);
    assert_eq!(get64(&warp, 6, 0), 0x1234_5678_9abc_def0);
}

#[test]
fn float_alu_and_conversions_through_the_run_loop() {
    let f = |x: f32| x.to_bits();
    let m = Machine::new(vec![
        // FADD R2, R0, -R1 ; FMUL.FTZ R3, R0, R1
        inst(Op::Binary {
            op: BinOp::Add,
            ty: Ty::F32,
            dst: Reg(2),
            a: src(0),
            b: modified(1, SrcMod::Neg),
            ftz: false,
        }),
        inst(Op::Binary {
            op: BinOp::Mul,
            ty: Ty::F32,
            dst: Reg(3),
            a: src(0),
            b: src(1),
            ftz: true,
        }),
        // F2I.TRUNC R4, R0 ; F2I R5, R0 (nearest even) ; I2F R6, R7
        inst(Op::Convert {
            dst_ty: Ty::S32,
            src_ty: Ty::F32,
            round: Round::Zero,
            ftz: false,
            dst: Reg(4),
            a: src(0),
        }),
        inst(Op::Convert {
            dst_ty: Ty::S32,
            src_ty: Ty::F32,
            round: Round::Nearest,
            ftz: false,
            dst: Reg(5),
            a: src(0),
        }),
        inst(Op::Convert {
            dst_ty: Ty::F32,
            src_ty: Ty::S32,
            round: Round::Nearest,
            ftz: false,
            dst: Reg(6),
            a: src(7),
        }),
        inst(Op::Unary {
            op: UnOp::Popc,
            ty: Ty::U64,
            dst: Reg(8),
            a: src(10),
        }),
        inst(Op::Binary {
            op: BinOp::MulWide,
            ty: Ty::S32,
            dst: Reg(12),
            a: src(7),
            b: src(7),
            ftz: false,
        }),
    ]);
    let mut warp = m.warp();
    let inputs = [
        (2.5f32, 0.5f32, -7i32),
        (-3.5, 1e-20, i32::MIN),
        (1e-30, 1e-10, 16_777_217),
    ];
    for (lane, &(a, b, i)) in inputs.iter().enumerate() {
        set(&mut warp, 0, lane, f(a));
        set(&mut warp, 1, lane, f(b));
        set(&mut warp, 7, lane, i as u32);
        set64(&mut warp, 10, lane, u64::MAX >> lane);
        set(&mut warp, 9, lane, 0x5555);
    }
    m.run(&mut warp, 0b111);
    for (lane, &(a, b, i)) in inputs.iter().enumerate() {
        assert_eq!(get(&warp, 2, lane), f(a - b));
        let product = a * b;
        let want = if product.is_subnormal() {
            f(0.0f32.copysign(product))
        } else {
            f(product)
        };
        assert_eq!(get(&warp, 3, lane), want);
        assert_eq!(get(&warp, 4, lane), a.trunc() as i32 as u32);
        assert_eq!(get(&warp, 5, lane), a.round_ties_even() as i32 as u32);
        assert_eq!(get(&warp, 6, lane), f(i as f32));
        assert_eq!(get(&warp, 8, lane), 64 - lane as u32);
        assert_eq!(get(&warp, 9, lane), 0x5555, "POPC writes one register");
        assert_eq!(get64(&warp, 12, lane), (i as i64 * i as i64) as u64);
    }
}

#[test]
fn warp_instruction_count_is_per_group_instruction() {
    let m = Machine::new(vec![
        inst(Op::Nop),
        guarded(0, false, Op::Nop),
        inst(Op::Exit),
    ]);
    let mut warp = m.warp();
    m.run(&mut warp, u32::MAX);
    assert_eq!(warp.stats.warp_insts, 3);
}

// ---------------------------------------------------------------------------------------------
// PTX semantics: FTZ by resolved space, one-word shift amounts, float division
// ---------------------------------------------------------------------------------------------

#[test]
fn generic_ftz_applies_only_where_the_address_resolves_to_global() {
    // PTX ISA, atom: "The atom.add.f32 operation without .noftz, flushes subnormal inputs and
    // results to sign-preserving zero on global memory but supports subnormal inputs and
    // results and doesn't flush them to zero on shared memory." One instruction, one generic
    // address per lane: lane 0 global, lane 1 shared.
    use crate::ir::GENERIC_SHARED_BASE;
    let m = Machine::new(vec![inst(atomic(
        Space::Generic,
        AtomicOp::Add,
        Ty::F32,
        Reg(0),
        at64(8, 0),
        reg(4),
        None,
        false,
        true,
    ))]);
    let mut warp = m.warp();
    set64(&mut warp, 8, 0, m.buffers[0] + 16);
    set64(&mut warp, 8, 1, GENERIC_SHARED_BASE + 16);
    for lane in 0..2 {
        set(&mut warp, 4, lane, 1); // the smallest subnormal
    }
    m.run(&mut warp, 0b11);
    assert_eq!(
        m.global_u32(m.buffers[0] + 16),
        0,
        "global: the input is flushed"
    );
    assert_eq!(m.shared_u32(16), 1, "shared: the subnormal is kept");
    let generic = |a: u64| AtomicInst {
        access: MemAccess {
            space: Space::Generic,
            ty: Ty::F32,
            vector: 1,
            order: MemOrder::Relaxed,
            scope: Scope::Gpu,
            addr: Address::absolute(a as i64),
        },
        op: AtomicOp::Add,
        dst: Reg(0),
        src: reg(0),
        src2: None,
        spin: false,
        ftz: true,
        performed: Pred::PT,
    };
    assert!(atomic::effective_ftz(&generic(GLOBAL_BASE), GLOBAL_BASE));
    assert!(!atomic::effective_ftz(
        &generic(GENERIC_SHARED_BASE),
        GENERIC_SHARED_BASE
    ));
    let mut shared = generic(0);
    shared.access.space = Space::Shared;
    assert!(
        atomic::effective_ftz(&shared, 0),
        "a non-generic space keeps `ftz` as given"
    );
}

#[test]
fn sixty_four_bit_shifts_read_a_one_word_amount() {
    // IR contract (valid, "Operand widths"): a shift amount is one 32-bit word. The register
    // after the amount holds garbage that must not be read.
    let m = Machine::new(vec![
        inst(Op::Binary {
            op: BinOp::Shl,
            ty: Ty::B64,
            dst: Reg(0),
            a: src(2),
            b: src(4),
            ftz: false,
        }),
        inst(Op::Binary {
            op: BinOp::Shr,
            ty: Ty::S64,
            dst: Reg(6),
            a: src(2),
            b: src(4),
            ftz: false,
        }),
    ]);
    let mut warp = m.warp();
    set64(&mut warp, 2, 0, 0x8000_0000_0000_0003);
    set(&mut warp, 4, 0, 4);
    set(&mut warp, 5, 0, 0xdead_beef);
    set64(&mut warp, 2, 1, 1);
    set(&mut warp, 4, 1, 64); // PTX: "Shift amounts greater than the register width N are clamped to N"
    set(&mut warp, 5, 1, 0);
    m.run(&mut warp, 0b11);
    assert_eq!(get64(&warp, 0, 0), 0x30);
    assert_eq!(get64(&warp, 6, 0), 0xf800_0000_0000_0000);
    assert_eq!(get64(&warp, 0, 1), 0);
    assert_eq!(get64(&warp, 6, 1), 0);
}

#[test]
fn float_division_is_ieee_round_to_nearest() {
    let div = |ty: Ty, ftz: bool| {
        Machine::new(vec![inst(Op::Binary {
            op: BinOp::Div,
            ty,
            dst: Reg(0),
            a: src(2),
            b: src(4),
            ftz,
        })])
    };
    let cases = [
        (1.0f32, 3.0f32),
        (-7.5, 2.0),
        (1.0, 0.0),
        (0.0, 0.0),
        (f32::MAX, 0.5),
        (f32::from_bits(1), 2.0),
    ];
    let m = div(Ty::F32, false);
    let mut warp = m.warp();
    for (lane, (a, b)) in cases.iter().enumerate() {
        set(&mut warp, 2, lane, a.to_bits());
        set(&mut warp, 4, lane, b.to_bits());
    }
    m.run(&mut warp, (1 << cases.len()) - 1);
    for (lane, (a, b)) in cases.iter().enumerate() {
        let r = a / b;
        let want = if r.is_nan() { 0x7fff_ffff } else { r.to_bits() };
        assert_eq!(get(&warp, 0, lane), want, "{a:e} / {b:e}");
    }
    // With ftz a subnormal quotient is flushed: 2^-126 / 4 = 2^-128 (subnormal) becomes +0.
    let m = div(Ty::F32, true);
    let mut warp = m.warp();
    set(&mut warp, 2, 0, 0x0080_0000); // 2^-126
    set(&mut warp, 4, 0, 4.0f32.to_bits());
    m.run(&mut warp, 1);
    assert_eq!(get(&warp, 0, 0), 0);
    let m = div(Ty::F64, false);
    let mut warp = m.warp();
    set64(&mut warp, 2, 0, 1.0f64.to_bits());
    set64(&mut warp, 4, 0, 3.0f64.to_bits());
    m.run(&mut warp, 1);
    assert_eq!(get64(&warp, 0, 0), (1.0f64 / 3.0).to_bits());
}

// ---------------------------------------------------------------------------------------------
// Vector accesses and 128-bit atomics
// ---------------------------------------------------------------------------------------------

/// A global access of `vector` elements of `ty` at `[R8.64 + offset]`.
fn vaccess(space: Space, ty: Ty, vector: u8, offset: i64) -> MemAccess {
    MemAccess {
        space,
        ty,
        vector,
        order: MemOrder::Weak,
        scope: Scope::Gpu,
        addr: at64(8, offset),
    }
}

fn vatomic(space: Space, op: AtomicOp, ty: Ty, vector: u8, dst: Reg, src: u16, ftz: bool) -> Op {
    Op::Atomic(Box::new(AtomicInst {
        access: MemAccess {
            order: MemOrder::Relaxed,
            ..vaccess(space, ty, vector, 0)
        },
        op,
        dst,
        src: reg(src),
        src2: None,
        spin: false,
        ftz,
        performed: Pred::PT,
    }))
}

#[test]
fn a_128_bit_load_and_store_move_a_register_quad() {
    // `LDG.E.128 R4, [R8.64]` then `STG.E.128 [R8.64+0x10], R4`: two 64-bit elements each.
    let m = Machine::new(vec![
        inst(Op::Load {
            access: vaccess(Space::Global, Ty::U64, 2, 0),
            dst: Reg(4),
        }),
        inst(Op::Store {
            access: vaccess(Space::Global, Ty::U64, 2, 16),
            src: reg(4),
        }),
    ]);
    let base = m.buffers[0];
    m.set_global_u64(base, 0x1111_2222_3333_4444);
    m.set_global_u64(base + 8, 0x5555_6666_7777_8888);
    let mut warp = m.warp();
    set64(&mut warp, 8, 0, base);
    assert!(matches!(m.run(&mut warp, 1), GroupExit::Exited));
    // Little-endian words: R4 holds the lowest.
    let words: Vec<u32> = (4..8).map(|r| get(&warp, r, 0)).collect();
    assert_eq!(words, [0x3333_4444, 0x1111_2222, 0x7777_8888, 0x5555_6666]);
    assert_eq!(m.global_u64(base + 16), 0x1111_2222_3333_4444);
    assert_eq!(m.global_u64(base + 24), 0x5555_6666_7777_8888);
}

#[test]
fn narrow_vector_elements_are_extended_each_into_its_register() {
    // `ld.global.v4.s8`: four bytes, each sign-extended into its own register.
    let m = Machine::new(vec![inst(Op::Load {
        access: vaccess(Space::Global, Ty::S8, 4, 0),
        dst: Reg(4),
    })]);
    let base = m.buffers[0];
    m.set_global_u32(base, 0x80_7f_ff_01);
    let mut warp = m.warp();
    set64(&mut warp, 8, 0, base);
    m.run(&mut warp, 1);
    let regs: Vec<u32> = (4..8).map(|r| get(&warp, r, 0)).collect();
    assert_eq!(regs, [1, 0xffff_ffff, 0x7f, 0xffff_ff80]);
}

#[test]
fn a_vector_access_must_be_aligned_to_its_whole_size() {
    // 8-byte aligned is not enough for 16 bytes: a trap before any element is touched.
    for (ty, vector) in [(Ty::U64, 2u8), (Ty::U32, 4)] {
        let m = Machine::new(vec![inst(Op::Store {
            access: vaccess(Space::Global, ty, vector, 8),
            src: reg(4),
        })]);
        let base = m.buffers[0];
        let mut warp = m.warp();
        set64(&mut warp, 8, 0, base);
        set(&mut warp, 4, 0, 0xaaaa_aaaa);
        let info = trap(m.run(&mut warp, 1));
        assert_eq!(
            (info.reason, info.space, info.address),
            (TrapReason::MisalignedAddress, Space::Global, base + 8)
        );
        assert_eq!(m.global_u64(base + 8), 0, "no element was stored");
    }
    // An 8-byte vector of two u32 needs 8-byte alignment.
    let m = Machine::new(vec![inst(Op::Load {
        access: vaccess(Space::Global, Ty::U32, 2, 4),
        dst: Reg(4),
    })]);
    let mut warp = m.warp();
    set64(&mut warp, 8, 0, m.buffers[0]);
    assert_eq!(
        trap(m.run(&mut warp, 1)).reason,
        TrapReason::MisalignedAddress
    );
}

#[test]
fn a_vector_access_past_the_end_traps_before_its_first_element() {
    // The last 16 bytes of the arena start at 1024 - 16; one quad further is out of range
    // although its first element would be inside.
    let m = Machine::with_memory(
        vec![inst(Op::Store {
            access: vaccess(Space::Global, Ty::U64, 2, 0),
            src: reg(4),
        })],
        64,
        &[1032],
    );
    let base = m.buffers[0];
    let mut warp = m.warp();
    set64(&mut warp, 8, 0, base + 1024);
    set64(&mut warp, 4, 0, 0x0123_4567_89ab_cdef);
    let info = trap(m.run(&mut warp, 1));
    assert_eq!(
        (info.reason, info.address),
        (TrapReason::AddressOutOfRange, base + 1024)
    );
    assert_eq!(
        m.global_u64(base + 1024),
        0,
        "the in-range first element is untouched"
    );
}

#[test]
fn vector_f32_add_is_one_rounded_ftz_add_per_element() {
    // `REDG.E.ADD.F32x4.FTZ.RN` / `atom.global.add.v4.f32`: each element is the scalar
    // `atom.add.f32` (round to nearest even, subnormal inputs and results flushed), returning
    // the old value.
    let tiny = f32::from_bits(1);
    let cases: [(f32, f32); 8] = [
        (1.0, 2.0),
        // 1 + 2^-24 is a tie: even (1.0) wins; 1 + 3 * 2^-24 rounds up to 1 + 2^-22.
        (1.0, f32::from_bits(0x3380_0000)),
        (1.0, f32::from_bits(0x3440_0000)),
        (tiny, 1.0),
        (-0.0, tiny),
        (f32::MAX, f32::MAX),
        (f32::INFINITY, f32::NEG_INFINITY),
        (0.1, 0.2),
    ];
    let m = Machine::new(vec![inst(vatomic(
        Space::Global,
        AtomicOp::Add,
        Ty::F32,
        4,
        Reg(12),
        4,
        true,
    ))]);
    let base = m.buffers[0];
    let mut warp = m.warp();
    for lane in 0..2usize {
        set64(&mut warp, 8, lane, base + 16 * lane as u64);
        for e in 0..4 {
            let (mem, b) = cases[4 * lane + e];
            m.set_global_u32(base + 16 * lane as u64 + 4 * e as u64, mem.to_bits());
            set(&mut warp, 4 + e as u16, lane, b.to_bits());
        }
    }
    assert!(matches!(m.run(&mut warp, 0b11), GroupExit::Exited));
    for lane in 0..2usize {
        for e in 0..4 {
            let (mem, b) = cases[4 * lane + e];
            let at = base + 16 * lane as u64 + 4 * e as u64;
            assert_eq!(
                m.global_u32(at),
                model_add_f32_ftz(mem, b),
                "lane {lane} element {e}: {mem:e} + {b:e}"
            );
            assert_eq!(get(&warp, 12 + e as u16, lane), mem.to_bits(), "old value");
        }
    }
    assert_eq!(m.global_u32(base), 3.0f32.to_bits());
    assert_eq!(m.global_u32(base + 4), 1.0f32.to_bits(), "ties to even");
    assert_eq!(
        m.global_u32(base + 8),
        f32::from_bits(0x3f80_0002).to_bits()
    );
    // One atomic per element.
    assert_eq!(warp.stats.atomics[AtomicOp::Add.index()], 8);
}

#[test]
fn lanes_adding_one_vector_add_each_element_independently() {
    // 32 lanes `red.v2.f32` the same pair: every element sums 32 additions.
    let m = Machine::new(vec![inst(vatomic(
        Space::Global,
        AtomicOp::Add,
        Ty::F32,
        2,
        Reg::RZ,
        4,
        true,
    ))]);
    let base = m.buffers[0];
    let mut warp = m.warp();
    for lane in 0..32 {
        set64(&mut warp, 8, lane, base);
        set(&mut warp, 4, lane, 0.5f32.to_bits());
        set(&mut warp, 5, lane, (lane as f32).to_bits());
    }
    m.run(&mut warp, u32::MAX);
    assert_eq!(f32::from_bits(m.global_u32(base)), 16.0);
    assert_eq!(f32::from_bits(m.global_u32(base + 4)), 496.0);
}

#[test]
fn vector_half_atomics_compute_each_half_as_the_scalar_atomic() {
    // `atom.global.min.noftz.v2.f16`: two 16-bit elements, each in its own register; `minNum`
    // (a NaN loses) without flushing.
    let h = |x: f32| u32::from(half::f16::from_f32(x).to_bits());
    let m = Machine::new(vec![inst(vatomic(
        Space::Global,
        AtomicOp::Min,
        Ty::F16,
        2,
        Reg(12),
        4,
        false,
    ))]);
    let base = m.buffers[0];
    let nan = 0x7e00;
    m.set_global_u32(base, h(3.0) | nan << 16);
    let mut warp = m.warp();
    set64(&mut warp, 8, 0, base);
    set(&mut warp, 4, 0, h(-1.5));
    set(&mut warp, 5, 0, h(2.0));
    m.run(&mut warp, 1);
    assert_eq!(m.global_u32(base), h(-1.5) | h(2.0) << 16);
    assert_eq!((get(&warp, 12, 0), get(&warp, 13, 0)), (h(3.0), nan));
    // SASS `.F16x4`: two packed pairs, each half added independently.
    let m = Machine::new(vec![inst(vatomic(
        Space::Global,
        AtomicOp::Add,
        Ty::F16x2,
        2,
        Reg(12),
        4,
        false,
    ))]);
    let base = m.buffers[0];
    m.set_global_u32(base, h(1.0) | h(2.0) << 16);
    m.set_global_u32(base + 4, h(-4.0) | h(0.25) << 16);
    let mut warp = m.warp();
    set64(&mut warp, 8, 0, base);
    set(&mut warp, 4, 0, h(0.5) | h(0.5) << 16);
    set(&mut warp, 5, 0, h(4.0) | h(-0.25) << 16);
    m.run(&mut warp, 1);
    assert_eq!(m.global_u32(base), h(1.5) | h(2.5) << 16);
    assert_eq!(m.global_u32(base + 4), h(0.0) | h(0.0) << 16);
    assert_eq!(warp.stats.atomics[AtomicOp::Add.index()], 2);
}

#[test]
fn a_generic_vector_atomic_must_land_in_global_memory() {
    // "atom with vector type may be used only with .global space and with generic addressing
    // where the address points to .global space": a shared-window address is out of range.
    let m = Machine::new(vec![inst(vatomic(
        Space::Generic,
        AtomicOp::Add,
        Ty::F32,
        2,
        Reg::RZ,
        4,
        true,
    ))]);
    let mut warp = m.warp();
    let shared = crate::ir::GENERIC_SHARED_BASE + 8;
    set64(&mut warp, 8, 0, m.buffers[0]);
    set64(&mut warp, 8, 1, shared);
    set(&mut warp, 4, 0, 1.0f32.to_bits());
    set(&mut warp, 4, 1, 1.0f32.to_bits());
    let info = trap(m.run(&mut warp, 0b11));
    assert_eq!(
        (info.reason, info.lane, info.space, info.address),
        (TrapReason::AddressOutOfRange, 1, Space::Generic, shared)
    );
    assert_eq!(
        m.global_u32(m.buffers[0]),
        1.0f32.to_bits(),
        "lane 0 completed"
    );
    assert_eq!(m.shared_u32(8), 0, "shared memory untouched");
    // A misaligned generic address reports misalignment first, wherever it points.
    let mut warp = m.warp();
    set64(&mut warp, 8, 0, shared + 4);
    assert_eq!(
        trap(m.run(&mut warp, 1)).reason,
        TrapReason::MisalignedAddress
    );
}

/// A 128-bit atomic at `[R8.64]` (global) or `[R8]` (shared) with the quads R4 (and R12).
fn atomic128(space: Space, op: AtomicOp, dst: Reg) -> Op {
    let addr = if space == Space::Shared {
        at32(8, 0)
    } else {
        at64(8, 0)
    };
    Op::Atomic(Box::new(AtomicInst {
        access: MemAccess {
            space,
            ty: Ty::B128,
            vector: 1,
            order: MemOrder::Relaxed,
            scope: Scope::Gpu,
            addr,
        },
        op,
        dst,
        src: reg(4),
        src2: (op == AtomicOp::Cas).then(|| reg(12)),
        spin: false,
        ftz: false,
        performed: Pred::PT,
    }))
}

fn set128(warp: &mut WarpState, r: u16, lane: usize, v: u128) {
    set64(warp, r, lane, v as u64);
    set64(warp, r + 2, lane, (v >> 64) as u64);
}

fn get128(warp: &WarpState, r: u16, lane: usize) -> u128 {
    u128::from(get64(warp, r, lane)) | u128::from(get64(warp, r + 2, lane)) << 64
}

#[test]
fn a_128_bit_cas_compares_and_swaps_all_sixteen_bytes() {
    // `atom.cas.b128`: `d = *a; *a = (*a == b) ? c : *a`, one atomic on 128 bits.
    let m = Machine::new(vec![inst(atomic128(Space::Global, AtomicOp::Cas, Reg(16)))]);
    let base = m.buffers[0];
    let lo_hi = |lo: u64, hi: u64| u128::from(lo) | u128::from(hi) << 64;
    // Lane 0 hits; lane 1's compare value differs only in the high half: it misses.
    m.set_global_u64(base, 3);
    m.set_global_u64(base + 8, 4);
    m.set_global_u64(base + 16, 3);
    m.set_global_u64(base + 24, 5);
    let mut warp = m.warp();
    for lane in 0..2 {
        set64(&mut warp, 8, lane, base + 16 * lane as u64);
        set128(&mut warp, 4, lane, lo_hi(3, 4));
        set128(&mut warp, 12, lane, lo_hi(5, 6));
    }
    m.run(&mut warp, 0b11);
    assert_eq!((m.global_u64(base), m.global_u64(base + 8)), (5, 6));
    assert_eq!((m.global_u64(base + 16), m.global_u64(base + 24)), (3, 5));
    assert_eq!(get128(&warp, 16, 0), lo_hi(3, 4));
    assert_eq!(get128(&warp, 16, 1), lo_hi(3, 5));
    assert_eq!(warp.stats.atomics[AtomicOp::Cas.index()], 2);
    assert_eq!(warp.stats.cas_failures, 1);
}

#[test]
fn a_128_bit_exchange_returns_the_old_quad() {
    for space in [Space::Global, Space::Shared] {
        let m = Machine::new(vec![inst(atomic128(space, AtomicOp::Exch, Reg(16)))]);
        let addr = match space {
            Space::Shared => 32,
            _ => m.buffers[0] + 32,
        };
        let initial = 0x0f0e_0d0c_0b0a_0908_0706_0504_0302_0100u128;
        let new = 0xffee_ddcc_bbaa_9988_7766_5544_3322_1100u128;
        match space {
            Space::Shared => {
                m.set_shared_u64(32, initial as u64);
                m.set_shared_u64(40, (initial >> 64) as u64);
            }
            _ => {
                m.set_global_u64(addr, initial as u64);
                m.set_global_u64(addr + 8, (initial >> 64) as u64);
            }
        }
        let mut warp = m.warp();
        set64(&mut warp, 8, 0, addr);
        set128(&mut warp, 4, 0, new);
        m.run(&mut warp, 1);
        let now = match space {
            Space::Shared => u128::from(m.shared_u64(32)) | u128::from(m.shared_u64(40)) << 64,
            _ => u128::from(m.global_u64(addr)) | u128::from(m.global_u64(addr + 8)) << 64,
        };
        assert_eq!(now, new, "{space:?}");
        assert_eq!(get128(&warp, 16, 0), initial, "{space:?}");
    }
}

#[test]
fn a_128_bit_atomic_needs_sixteen_byte_alignment() {
    let m = Machine::new(vec![inst(atomic128(
        Space::Global,
        AtomicOp::Exch,
        Reg(16),
    ))]);
    let mut warp = m.warp();
    set64(&mut warp, 8, 0, m.buffers[0] + 8);
    set128(&mut warp, 16, 0, 7);
    let info = trap(m.run(&mut warp, 1));
    assert_eq!(
        (info.reason, info.address),
        (TrapReason::MisalignedAddress, m.buffers[0] + 8)
    );
    assert_eq!(get128(&warp, 16, 0), 7, "the destination is untouched");
    assert_eq!(warp.stats.atomics[AtomicOp::Exch.index()], 0);
}

// ---------------------------------------------------------------------------------------------
// Surfaces (004_16d4664d52412e92.txt)
// ---------------------------------------------------------------------------------------------

mod surfaces {
    use super::*;
    use crate::ir::surface::{
        Clamp, SurfaceAddress, SurfaceDim, SurfaceHandle, SurfaceHeader, SurfaceLayout,
        SurfaceShape,
    };

    /// The handle word of surface 0 is at c[0x0][0x160], of surface 1 at 0x168.
    fn bank(index: u16) -> SurfaceHandle {
        SurfaceHandle::Bank {
            bank: 0,
            offset: 0x160 + 8 * u32::from(index),
        }
    }

    fn surf(dim: SurfaceDim, clamp: Clamp, byte_x: bool, handle: SurfaceHandle) -> SurfaceAddress {
        SurfaceAddress {
            coords: Reg(4),
            dim,
            byte_x,
            clamp,
            handle,
            format_sign: false,
            sparse: Pred::PT,
        }
    }

    fn access(ty: Ty, s: SurfaceAddress) -> MemAccess {
        MemAccess {
            space: Space::Global,
            ty,
            vector: 1,
            order: MemOrder::Relaxed,
            scope: Scope::Gpu,
            addr: Address::Surface(s),
        }
    }

    fn suatom(op: AtomicOp, ty: Ty, s: SurfaceAddress, cas: bool, ftz: bool) -> Op {
        let words = ty.regs();
        Op::Atomic(Box::new(AtomicInst {
            access: access(ty, s),
            op,
            dst: Reg(10),
            src: reg(8),
            src2: cas.then_some(Operand::Reg(Reg(8).word(words))),
            spin: false,
            ftz,
            performed: Pred::PT,
        }))
    }

    /// A machine whose global memory holds the surfaces `headers` (their bases are filled in),
    /// each at its own allocation, with the handles 0, 1, ... in the constant bank.
    fn machine(insts: Vec<Inst>, mut headers: Vec<SurfaceHeader>) -> Machine {
        let sizes: Vec<u64> = headers
            .iter()
            .map(|h| h.layout.total_bytes(&h.shape))
            .collect();
        let mut m = Machine::with_memory(insts, 0, &sizes);
        for (i, h) in headers.iter_mut().enumerate() {
            h.base = m.buffers[i];
            m.cbank[0x160 + 8 * i..0x164 + 8 * i].copy_from_slice(&(i as u32).to_le_bytes());
        }
        m.surfaces = headers;
        m
    }

    fn header(dim: SurfaceDim, elem: Ty, extent: [u32; 4], layout: SurfaceLayout) -> SurfaceHeader {
        SurfaceHeader {
            base: 0,
            shape: SurfaceShape {
                dim,
                elem_bytes: elem.bytes(),
                width: extent[0],
                height: extent[1],
                depth: extent[2],
                layers: extent[3],
            },
            layout,
            elem,
            disabled: false,
            sparse: Vec::new(),
        }
    }

    /// A 2-D `elem` surface of 8 x 4 elements in rows of 64 bytes.
    fn img(elem: Ty) -> SurfaceHeader {
        header(
            SurfaceDim::D2,
            elem,
            [8, 4, 1, 1],
            SurfaceLayout::Pitch { pitch: 64 },
        )
    }

    /// Byte offset of (x, y) in [`img`], independently of the layout code.
    fn at(m: &Machine, x: u64, y: u64, size: u64) -> u64 {
        m.surfaces[0].base + y * 64 + x * size
    }

    #[test]
    fn suatom_add_returns_each_lanes_prior_value_in_lane_order() {
        let s = surf(SurfaceDim::D2, Clamp::Trap, false, bank(0));
        let m = machine(
            vec![inst(suatom(AtomicOp::Add, Ty::U32, s, false, false))],
            vec![img(Ty::U32)],
        );
        m.set_global_u32(at(&m, 3, 2, 4), 100);
        let mut w = m.warp();
        for lane in 0..4 {
            // Lanes 0..3 all add lane + 1 to (3, 2).
            set(&mut w, 4, lane, 3);
            set(&mut w, 5, lane, 2);
            set(&mut w, 8, lane, lane as u32 + 1);
        }
        assert_eq!(m.run(&mut w, 0b1111), GroupExit::Exited);
        // "Rd = M; M = M + Rb;" in lane order: 100, 101, 103, 106; memory 110.
        let old: Vec<u32> = (0..4).map(|l| get(&w, 10, l)).collect();
        assert_eq!(old, [100, 101, 103, 106]);
        assert_eq!(m.global_u32(at(&m, 3, 2, 4)), 110);
        assert_eq!(w.stats.atomics[AtomicOp::Add.index()], 4);
    }

    #[test]
    fn ign_out_of_bounds_does_nothing_and_returns_zero() {
        let s = surf(SurfaceDim::D2, Clamp::Ignore, true, bank(0));
        let m = machine(
            vec![inst(suatom(AtomicOp::Exch, Ty::U32, s, false, false))],
            vec![img(Ty::U32)],
        );
        let mut w = m.warp();
        // Lane 0: byte x 32 = element 8, past the 8-wide row; lane 1: (7, 3).
        for (lane, (x, y)) in [(32u32, 0u32), (28, 3)].into_iter().enumerate() {
            set(&mut w, 4, lane, x);
            set(&mut w, 5, lane, y);
            set(&mut w, 8, lane, 0xabcd);
            set(&mut w, 10, lane, 0x5555);
        }
        m.set_global_u32(at(&m, 7, 3, 4), 9);
        assert_eq!(m.run(&mut w, 0b11), GroupExit::Exited);
        assert_eq!((get(&w, 10, 0), get(&w, 10, 1)), (0, 9));
        assert_eq!(m.global_u32(at(&m, 7, 3, 4)), 0xabcd);
        assert_eq!(
            w.stats.atomics[AtomicOp::Exch.index()],
            1,
            "the dropped lane performed nothing"
        );
    }

    #[test]
    fn trap_out_of_bounds_names_surface_coordinates_and_lane_after_earlier_lanes() {
        let s = surf(SurfaceDim::D2, Clamp::Trap, false, bank(1));
        let m = machine(
            vec![inst(suatom(AtomicOp::Add, Ty::U32, s, false, false))],
            vec![img(Ty::U32), img(Ty::U32)],
        );
        let mut w = m.warp();
        for (lane, (x, y)) in [(1i32, 1i32), (2, -1), (3, 3)].into_iter().enumerate() {
            set(&mut w, 4, lane, x as u32);
            set(&mut w, 5, lane, y as u32);
            set(&mut w, 8, lane, 5);
        }
        let info = trap(m.run(&mut w, 0b111));
        assert_eq!(info.reason, TrapReason::SurfaceOutOfBounds);
        assert_eq!(info.lane, 1);
        let st = info.surface.expect("a surface trap");
        assert_eq!((st.index, st.coords()), (1, &[2, (-1i32) as u32][..]));
        // Lane 0 added to surface 1's (1, 1); lane 2 never ran.
        let base1 = m.surfaces[1].base;
        assert_eq!(m.global_u32(base1 + 64 + 4), 5);
        assert_eq!(m.global_u32(base1 + 3 * 64 + 12), 0);
    }

    #[test]
    fn an_invalid_handle_and_a_mismatched_access_trap() {
        // The handle from a register: header 2 of a pool of 1 is invalid.
        let s = surf(
            SurfaceDim::D2,
            Clamp::Trap,
            false,
            SurfaceHandle::Reg(Reg(12)),
        );
        let m = machine(
            vec![inst(Op::Load {
                access: access(Ty::U32, s),
                dst: Reg(10),
            })],
            vec![img(Ty::U32)],
        );
        let mut w = m.warp();
        set(&mut w, 12, 0, 0xfff0_0000); // samplerPtr only: header 0.
        set(&mut w, 12, 1, 2);
        let info = trap(m.run(&mut w, 0b11));
        assert_eq!((info.reason, info.lane), (TrapReason::InvalidSurface, 1));
        assert_eq!(info.surface.map(|s| s.index), Some(2));
        // A 64-bit access of a 32-bit surface.
        let s = surf(SurfaceDim::D2, Clamp::Trap, false, bank(0));
        let m = machine(
            vec![inst(Op::Load {
                access: access(Ty::U64, s),
                dst: Reg(10),
            })],
            vec![img(Ty::U32)],
        );
        let info = trap(m.run(&mut m.warp(), 1));
        assert_eq!(info.reason, TrapReason::SurfaceMismatch);
    }

    #[test]
    fn misaligned_byte_x_is_a_misaligned_address_trap() {
        let s = surf(SurfaceDim::D2, Clamp::Nearest, true, bank(0));
        let m = machine(
            vec![inst(Op::Store {
                access: access(Ty::U32, s),
                src: reg(8),
            })],
            vec![img(Ty::U32)],
        );
        let mut w = m.warp();
        set(&mut w, 4, 0, 6);
        let info = trap(m.run(&mut w, 1));
        assert_eq!(info.reason, TrapReason::MisalignedAddress);
        assert_eq!(info.surface.map(|s| s.coords), Some([6, 0, 0]));
    }

    #[test]
    fn sd32_min_max_compare_signed_only_on_a_signed_surface() {
        for (elem, want) in [(Ty::S32, 5u32), (Ty::U32, (-3i32) as u32)] {
            let mut s = surf(SurfaceDim::D2, Clamp::Trap, false, bank(0));
            s.format_sign = true;
            let m = machine(
                vec![inst(suatom(AtomicOp::Max, Ty::U32, s, false, false))],
                vec![img(elem)],
            );
            m.set_global_u32(at(&m, 0, 0, 4), (-3i32) as u32);
            let mut w = m.warp();
            set(&mut w, 8, 0, 5);
            assert_eq!(m.run(&mut w, 1), GroupExit::Exited);
            // Signed: max(-3, 5) = 5; unsigned: max(0xfffffffd, 5) = 0xfffffffd.
            assert_eq!(m.global_u32(at(&m, 0, 0, 4)), want, "{elem}");
            assert_eq!(get(&w, 10, 0), (-3i32) as u32);
        }
    }

    #[test]
    fn sd64_min_compares_signed_on_an_s64_surface() {
        let mut s = surf(SurfaceDim::D2, Clamp::Trap, false, bank(0));
        s.format_sign = true;
        let m = machine(
            vec![inst(suatom(AtomicOp::Min, Ty::U64, s, false, false))],
            vec![img(Ty::S64)],
        );
        m.set_global_u64(at(&m, 1, 1, 8), 7);
        let mut w = m.warp();
        set(&mut w, 4, 0, 1);
        set(&mut w, 5, 0, 1);
        set64(&mut w, 8, 0, (-2i64) as u64);
        assert_eq!(m.run(&mut w, 1), GroupExit::Exited);
        assert_eq!(m.global_u64(at(&m, 1, 1, 8)), (-2i64) as u64);
        assert_eq!(get64(&w, 10, 0), 7);
    }

    #[test]
    fn cas_takes_compare_and_swap_from_consecutive_registers() {
        let s = surf(SurfaceDim::D2, Clamp::Trap, false, bank(0));
        let m = machine(
            vec![inst(suatom(AtomicOp::Cas, Ty::U32, s, true, false))],
            vec![img(Ty::U32)],
        );
        m.set_global_u32(at(&m, 2, 0, 4), 4);
        let mut w = m.warp();
        for lane in 0..2 {
            set(&mut w, 4, lane, 2);
            set(&mut w, 8, lane, 4); // compare
            set(&mut w, 9, lane, 40 + lane as u32); // swap
        }
        assert_eq!(m.run(&mut w, 0b11), GroupExit::Exited);
        // "if (M == Rb) M = Rb+1": lane 0 swaps in 40, lane 1 sees 40 and fails.
        assert_eq!(m.global_u32(at(&m, 2, 0, 4)), 40);
        assert_eq!((get(&w, 10, 0), get(&w, 10, 1)), (4, 40));
        assert_eq!(w.stats.cas_failures, 1);
    }

    #[test]
    fn f32_add_flushes_subnormals_and_f16x2_adds_per_half() {
        let s = surf(SurfaceDim::D2, Clamp::Trap, false, bank(0));
        let m = machine(
            vec![inst(suatom(AtomicOp::Add, Ty::F32, s, false, true))],
            vec![img(Ty::F32)],
        );
        let f = |v: f32| v.to_bits();
        m.set_global_u32(at(&m, 0, 0, 4), f(1.5));
        m.set_global_u32(at(&m, 1, 0, 4), f(1e-39)); // subnormal: flushed to +0
        let mut w = m.warp();
        set(&mut w, 4, 0, 0);
        set(&mut w, 8, 0, f(2.25));
        set(&mut w, 4, 1, 1);
        set(&mut w, 8, 1, f(-0.0));
        assert_eq!(m.run(&mut w, 0b11), GroupExit::Exited);
        assert_eq!(m.global_u32(at(&m, 0, 0, 4)), f(3.75));
        // FTZ: 1e-39 + -0 is +0 + -0 = +0.
        assert_eq!(m.global_u32(at(&m, 1, 0, 4)), f(0.0));

        let m = machine(
            vec![inst(suatom(AtomicOp::Add, Ty::F16x2, s, false, false))],
            vec![img(Ty::U32)],
        );
        let h = |lo: f32, hi: f32| {
            u32::from(half::f16::from_f32(lo).to_bits())
                | u32::from(half::f16::from_f32(hi).to_bits()) << 16
        };
        m.set_global_u32(at(&m, 0, 0, 4), h(1.0, -2.0));
        let mut w = m.warp();
        set(&mut w, 8, 0, h(0.5, 65504.0));
        assert_eq!(m.run(&mut w, 1), GroupExit::Exited);
        // Per half: 1 + 0.5 = 1.5; -2 + 65504 = 65502 rounds to nearest even in f16: 65504.
        assert_eq!(m.global_u32(at(&m, 0, 0, 4)), h(1.5, 65504.0));
    }

    #[test]
    fn sparse_pages_and_disabled_surfaces_skip_the_access() {
        // 128 x 256 u32 at a 512-byte pitch: rows 128.. are on page 1, marked sparse.
        let mut sparse = header(
            SurfaceDim::D2,
            Ty::U32,
            [128, 256, 1, 1],
            SurfaceLayout::Pitch { pitch: 512 },
        );
        sparse.sparse = vec![1];
        let mut disabled = img(Ty::U32);
        disabled.disabled = true;
        let mut load = surf(SurfaceDim::D2, Clamp::Trap, false, bank(0));
        load.sparse = Pred(2);
        let store = surf(SurfaceDim::D2, Clamp::Trap, false, bank(1));
        let m = machine(
            vec![
                inst(Op::Load {
                    access: access(Ty::U32, load),
                    dst: Reg(10),
                }),
                inst(Op::Store {
                    access: access(Ty::U32, store),
                    src: reg(8),
                }),
            ],
            vec![sparse, disabled],
        );
        let base = m.surfaces[0].base;
        m.set_global_u32(base + 127 * 512, 11);
        m.set_global_u32(base + 128 * 512, 22);
        let mut w = m.warp();
        set(&mut w, 5, 0, 127);
        set(&mut w, 5, 1, 128);
        for lane in 0..2 {
            set(&mut w, 10, lane, 0x77);
            set(&mut w, 8, lane, 0x99);
        }
        w.preds[2] = 0b10 ^ 0b11; // the opposite of the expected bits
        assert_eq!(m.run(&mut w, 0b11), GroupExit::Exited);
        assert_eq!((get(&w, 10, 0), get(&w, 10, 1)), (11, 0));
        assert_eq!((pred(&w, 2, 0), pred(&w, 2, 1)), (false, true));
        // The disabled surface was not written (and its out-of-bounds rows did not trap).
        let base1 = m.surfaces[1].base;
        assert!((0..64).all(|i| m.global_u32(base1 + 4 * i) == 0));
    }
}
