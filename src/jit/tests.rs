//! Tests of the warp compiler: kernels built directly in Rust, run with
//! [`JitKernel::run_group`], checked against the formulas of the documents (`000_*` for ATOMS)
//! and the IR's definitions.

use super::*;
use crate::exec::{GlobalMemory, SharedMemory, Stats, GLOBAL_BASE};
use crate::interp::tests::ATOMS_OPS_32;
use crate::ir::*;

const FULL: u32 = u32::MAX;

/// A kernel under construction.
struct KernelBuilder {
    insts: Vec<Inst>,
    joins: Vec<(u32, u32)>,
    uniform: Uniform,
}

fn r(n: u16) -> Reg {
    Reg(n)
}

fn reg(n: u16) -> Operand {
    Operand::Reg(Reg(n))
}

fn imm(v: u64) -> Operand {
    Operand::Imm(v)
}

fn src(o: Operand) -> Src {
    Src::plain(o)
}

fn p(n: u16) -> Pred {
    Pred(n)
}

impl KernelBuilder {
    fn new() -> KernelBuilder {
        KernelBuilder {
            insts: Vec::new(),
            joins: Vec::new(),
            uniform: Uniform::default(),
        }
    }

    fn push(&mut self, op: Op) -> &mut Self {
        self.guarded(Guard::ALWAYS, op)
    }

    fn guarded(&mut self, guard: Guard, op: Op) -> &mut Self {
        let line = self.insts.len() as u32 + 1;
        self.insts.push(Inst {
            op,
            guard,
            span: Span {
                start: 0,
                end: 0,
                line,
                col: 1,
            },
            text: format!("inst{}", line - 1),
            sched: Vec::new(),
        });
        self
    }

    fn when(&mut self, pred: u16, negate: bool, op: Op) -> &mut Self {
        self.guarded(
            Guard {
                pred: Pred(pred),
                negate,
            },
            op,
        )
    }

    /// `dst = lane id`.
    fn lane_id(&mut self, dst: u16) -> &mut Self {
        self.push(Op::ReadSpecial {
            dst: r(dst),
            sr: SpecialReg::LaneId,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn atom(
        &mut self,
        space: Space,
        op: AtomicOp,
        ty: Ty,
        dst: Reg,
        addr: Address,
        b: Operand,
        c: Option<Operand>,
    ) -> &mut Self {
        self.push(Op::Atomic(Box::new(AtomicInst {
            access: MemAccess {
                space,
                ty,
                vector: 1,
                order: MemOrder::Relaxed,
                scope: Scope::Cta,
                addr,
            },
            op,
            dst,
            src: b,
            src2: c,
            spin: false,
            ftz: false,
            performed: Pred::PT,
        })))
    }

    fn join(&mut self, branch: u32, reconv: u32) -> &mut Self {
        self.joins.push((branch, reconv));
        self
    }

    fn exit(&mut self) -> &mut Self {
        self.push(Op::Exit)
    }

    /// The kernel and a kernel info for it, with the reconvergence points set by `join`. The
    /// tests drive the compiler directly, including on forms validation rejects (immediate
    /// operands of SASS atomics, generic addresses in SASS), so the info is not the validator's
    /// (`KernelInfo::unchecked`: every register live, so the tests can read every register the
    /// kernel wrote). Registers stay below the 32 of the register file. The constant bank is
    /// the test world's `0x180` bytes.
    fn build(&self) -> (Kernel, KernelInfo) {
        let kernel = self.kernel();
        let mut info = KernelInfo::unchecked(&kernel, 0x180);
        for &(b, j) in &self.joins {
            info.set_join(b, j);
        }
        (kernel, info)
    }

    /// The kernel.
    fn kernel(&self) -> Kernel {
        Kernel {
            name: "test".into(),
            dialect: Dialect::Sass,
            warp_size: 32,
            insts: self.insts.clone(),
            labels: Vec::new(),
            num_regs: 32,
            num_preds: 4,
            uniform: self.uniform.clone(),
            launch: LaunchSpec::default(),
            span: Span::default(),
        }
    }
}

fn shared_addr(base: u16, offset: i64) -> Address {
    Address::Linear(LinearAddress {
        base: Some(r(base)),
        base_bits: 32,
        offset,
    })
}

fn global_addr(base: u16, offset: i64) -> Address {
    Address::Linear(LinearAddress {
        base: Some(r(base)),
        base_bits: 64,
        offset,
    })
}

/// A CTA environment: a global arena of one allocation, a shared window, a constant bank.
struct World {
    global: GlobalMemory,
    shared: SharedMemory,
    cbank: Vec<u8>,
}

impl World {
    fn new(global_bytes: u64, shared_bytes: u32) -> World {
        let (global, _) = GlobalMemory::with_allocations(&[global_bytes]);
        let mut cbank = vec![0u8; 0x180];
        cbank[0..4].copy_from_slice(&64u32.to_le_bytes());
        cbank[0x160..0x168].copy_from_slice(&GLOBAL_BASE.to_le_bytes());
        World {
            global,
            shared: SharedMemory::new(shared_bytes),
            cbank,
        }
    }

    fn shared_u32(&self, offset: usize) -> u32 {
        self.shared.region().load(offset, 4) as u32
    }

    fn set_shared_u32(&self, offset: usize, v: u32) {
        self.shared.region().store(offset, 4, v as u64)
    }

    fn global_u32(&self, offset: usize) -> u32 {
        self.global.region().load(offset, 4) as u32
    }

    fn set_global(&self, offset: usize, size: u32, v: u64) {
        self.global.region().store(offset, size, v)
    }

    fn global_u64(&self, offset: usize) -> u64 {
        self.global.region().load(offset, 8)
    }

    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        kernel: &Kernel,
        info: &KernelInfo,
        jit: &JitKernel,
        warp: &mut WarpState,
        pc: u32,
        mask: u32,
        stop: Option<u32>,
    ) -> GroupExit {
        jit.run_group(warp, &self.env(kernel, info), pc, mask, stop)
    }

    /// The environment of the world's CTA: CTA 2 of four, of 64 threads.
    fn env<'w>(&'w self, kernel: &'w Kernel, info: &'w KernelInfo) -> CtaEnv<'w> {
        CtaEnv {
            kernel,
            info,
            global: &self.global,
            shared: &self.shared,
            cbank: &self.cbank,
            surfaces: &[],
            ctaid: [2, 0, 0],
            ntid: [64, 1, 1],
            nctaid: [4, 1, 1],
        }
    }
}

/// Compiles and runs `b` from pc 0 on a full warp (warp 0 of a 64-thread CTA) until its first
/// event; returns the event and the warp.
fn run_kernel(b: &KernelBuilder, world: &World) -> (GroupExit, WarpState) {
    run_kernel_masked(b, world, FULL, |_| {})
}

fn run_kernel_masked(
    b: &KernelBuilder,
    world: &World,
    mask: u32,
    init: impl FnOnce(&mut WarpState),
) -> (GroupExit, WarpState) {
    let (kernel, info) = b.build();
    let jit = compile(&kernel, &info).unwrap_or_else(|e| panic!("{e}"));
    let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
    init(&mut warp);
    let exit = world.run(&kernel, &info, &jit, &mut warp, 0, mask, None);
    (exit, warp)
}

/// The plan of `kernel` in chunks of `chunk_insts`, with the default options.
fn plan_of(kernel: &Kernel, info: &KernelInfo, chunk_insts: usize) -> translate::Plan {
    let options = JitOptions {
        chunk_insts,
        ..JitOptions::default()
    };
    translate::Plan::new(kernel, info, &options)
}

fn reg_of(w: &WarpState, r: u16, lane: usize) -> u32 {
    w.regs[r as usize * 32 + lane]
}

fn set_reg(w: &mut WarpState, r: u16, lane: usize, v: u32) {
    w.regs[r as usize * 32 + lane] = v;
}

// ---- ATOMS: every op and size against the document's formula --------------------------------

/// Model of `000_6d05a8552870c0ae.txt`'s table for 32-bit ops: (new M, Rd).
fn atoms_model32(op: AtomicOp, ty: Ty, m: u32, b: u32, c: u32) -> (u32, u32) {
    let signed = ty == Ty::S32;
    match op {
        AtomicOp::Add => (m.wrapping_add(b), m),
        AtomicOp::Sub => (m.wrapping_sub(b), m),
        AtomicOp::Min => (
            if signed {
                (m as i32).min(b as i32) as u32
            } else {
                m.min(b)
            },
            m,
        ),
        AtomicOp::Max => (
            if signed {
                (m as i32).max(b as i32) as u32
            } else {
                m.max(b)
            },
            m,
        ),
        AtomicOp::Inc => (if m >= b { 0 } else { m + 1 }, m),
        AtomicOp::Dec => (if m == 0 || m > b { b } else { m - 1 }, m),
        AtomicOp::And => (m & b, m),
        AtomicOp::Or => (m | b, m),
        AtomicOp::Xor => (m ^ b, m),
        AtomicOp::Exch => (b, m),
        AtomicOp::Cas => (if m == b { c } else { m }, m),
        AtomicOp::Cast => {
            if m == b {
                (c, 1)
            } else {
                (m, 0)
            }
        }
        other => panic!("not an ATOMS op: {other}"),
    }
}

const EDGES: [u32; 9] = [
    0,
    1,
    2,
    0x7fff_ffff,
    0x8000_0000,
    0x8000_0001,
    0xffff_fffe,
    0xffff_ffff,
    12345,
];

#[test]
fn atoms_32bit_ops_match_the_document_formulas_on_edge_values() {
    for &(op, tys) in ATOMS_OPS_32 {
        for &ty in tys {
            // Lane l works on its own word 4*l with M = EDGES[l % 9] and Rb = EDGES[(l / 9 + l) % 9],
            // so every pair of edge values meets in some lane over the runs below.
            for shift in 0..3 {
                let cas = matches!(op, AtomicOp::Cas | AtomicOp::Cast);
                let mut b = KernelBuilder::new();
                b.lane_id(0).push(Op::Binary {
                    op: BinOp::Shl,
                    ty: Ty::U32,
                    dst: r(1),
                    a: src(reg(0)),
                    b: src(imm(2)),
                    ftz: false,
                });
                b.atom(
                    Space::Shared,
                    op,
                    ty,
                    r(2),
                    shared_addr(1, 0),
                    reg(4),
                    if cas { Some(reg(5)) } else { None },
                );
                b.exit();
                let world = World::new(64, 128);
                let m_of = |l: usize| EDGES[l % 9];
                let b_of = |l: usize| EDGES[(l / 9 + l + shift) % 9];
                // For CAS, make half the lanes' compare value equal to M.
                let cmp_of = |l: usize| if cas && l % 2 == 0 { m_of(l) } else { b_of(l) };
                let c_of = |l: usize| 0xC0DE_0000 | l as u32;
                for l in 0..32 {
                    world.set_shared_u32(4 * l, m_of(l));
                }
                let (exit, w) = run_kernel_masked(&b, &world, FULL, |w| {
                    for l in 0..32 {
                        set_reg(w, 4, l, cmp_of(l));
                        set_reg(w, 5, l, c_of(l));
                    }
                });
                assert_eq!(exit, GroupExit::Exited);
                let mut failures = 0;
                for l in 0..32 {
                    let (new_m, rd) = atoms_model32(op, ty, m_of(l), cmp_of(l), c_of(l));
                    assert_eq!(world.shared_u32(4 * l), new_m, "{op}.{ty} lane {l}: M");
                    assert_eq!(reg_of(&w, 2, l), rd, "{op}.{ty} lane {l}: Rd");
                    if cas && m_of(l) != cmp_of(l) {
                        failures += 1;
                    }
                }
                assert_eq!(w.stats.atomics[op.index()], 32, "{op}.{ty} lane count");
                assert_eq!(w.stats.cas_failures, failures, "{op}.{ty} CAS failures");
                assert_eq!(w.stats.warp_insts, 4);
            }
        }
    }
}

/// A shared atomic on a warp-invariant address runs as one chain for the warp (`memory.rs`,
/// `private_chain`): the word's value carried from lane to lane in a register. Every lane's
/// result and the word's final value must be the document's formula applied lane after lane,
/// from each edge value, with CAS compare values that sometimes match the running value.
#[test]
fn atoms_on_one_word_apply_the_document_formulas_lane_after_lane() {
    for &(op, tys) in ATOMS_OPS_32 {
        for &ty in tys {
            for start in 0..EDGES.len() {
                let cas = matches!(op, AtomicOp::Cas | AtomicOp::Cast);
                let mut b = KernelBuilder::new();
                b.atom(
                    Space::Shared,
                    op,
                    ty,
                    r(2),
                    Address::absolute(8),
                    reg(4),
                    if cas { Some(reg(5)) } else { None },
                );
                b.exit();
                let (kernel, info) = b.build();
                let chained = match &kernel.insts[0].op {
                    Op::Atomic(a) => translate::chained(info.invariant(), a),
                    _ => false,
                };
                assert!(chained, "{op}.{ty} on an absolute address is a chain");
                // The model, lane after lane: each lane's operands, result and the word after it.
                let b_of = |l: usize| EDGES[(l + start + l / 9) % 9];
                let c_of = |l: usize| 0xC0DE_0000 | l as u32;
                let mut m = EDGES[start];
                let (mut cmps, mut results, mut failures) = (vec![], vec![], 0);
                for l in 0..32 {
                    // Every third lane's compare value is the running value: its CAS stores.
                    let cmp = if cas && l % 3 == 0 { m } else { b_of(l) };
                    let (new_m, rd) = atoms_model32(op, ty, m, cmp, c_of(l));
                    failures += u64::from(cas && m != cmp);
                    cmps.push(cmp);
                    results.push(rd);
                    m = new_m;
                }
                let world = World::new(64, 128);
                world.set_shared_u32(8, EDGES[start]);
                let (exit, w) = run_kernel_masked(&b, &world, FULL, |w| {
                    for (l, &cmp) in cmps.iter().enumerate() {
                        set_reg(w, 4, l, cmp);
                        set_reg(w, 5, l, c_of(l));
                    }
                });
                assert_eq!(exit, GroupExit::Exited);
                assert_eq!(
                    world.shared_u32(8),
                    m,
                    "{op}.{ty} from {:#x}: M",
                    EDGES[start]
                );
                for (l, &rd) in results.iter().enumerate() {
                    assert_eq!(
                        reg_of(&w, 2, l),
                        rd,
                        "{op}.{ty} from {:#x}: lane {l}",
                        EDGES[start]
                    );
                }
                assert_eq!(w.stats.atomics[op.index()], 32, "{op}.{ty} lane count");
                assert_eq!(w.stats.cas_failures, failures, "{op}.{ty} CAS failures");
            }
        }
    }
}

// ---- four lanes, one 16-byte CAS (`translate/simd/atomic.rs`) -----------------------------

/// The atomics the SIMD lanes run four at a time, with the types each runs on.
const QUAD_OPS: &[(AtomicOp, &[Ty])] = &[
    (AtomicOp::Add, &[Ty::U32, Ty::S32]),
    (AtomicOp::Sub, &[Ty::U32]),
    (AtomicOp::Min, &[Ty::U32, Ty::S32]),
    (AtomicOp::Max, &[Ty::U32, Ty::S32]),
    (AtomicOp::Inc, &[Ty::U32]),
    (AtomicOp::Dec, &[Ty::U32]),
    (AtomicOp::And, &[Ty::B32]),
    (AtomicOp::Or, &[Ty::U32]),
    (AtomicOp::Xor, &[Ty::U32]),
    (AtomicOp::Exch, &[Ty::S32]),
];

/// The Cranelift IR of `kernel` built with `options` (before compilation), every function's.
fn clif_with(kernel: &Kernel, info: &KernelInfo, options: &JitOptions) -> String {
    let isa = host_isa().unwrap();
    let mut tables = SideTables::default();
    let plan = translate::Plan::new(kernel, info, options);
    let funcs = build_functions(kernel, info, &isa, &mut tables, &plan).unwrap();
    funcs.iter().map(|f| f.display().to_string()).collect()
}

/// How many 16-byte CASes the code of `b` holds (with SIMD lanes on or off).
fn cas128_in(b: &KernelBuilder, simd: bool) -> usize {
    let (kernel, info) = b.build();
    let options = JitOptions {
        simd,
        ..JitOptions::default()
    };
    let text = clif_with(&kernel, &info, &options);
    // Cranelift prints `atomic_cas` without its type; the 16-byte CAS's operands are the only
    // vectors the translator bitcasts to i128.
    text.matches("bitcast.i128").count() / 2
}

/// `P0 = R9 != k`.
fn p0_unless_r9_is(k: u64) -> Op {
    Op::SetP {
        cmp: CmpOp::Ne,
        ty: Ty::U32,
        combine: BoolOp::And,
        dst: p(0),
        dst2: Pred::PT,
        a: src(reg(9)),
        b: src(imm(k)),
        c: PredSrc::TRUE,
        chain: None,
    }
}

/// Runs `b` from pc 0 on lanes `mask` of a warp prepared by `init` through the scheduler's
/// path (a context kept in a `RunnerCache`), and returns the exit, the warp, and how many
/// chunks of four lanes took the 16-byte CAS (`WarpCtx::wide_cas_chunks`).
fn run_counting_wide_cas(
    b: &KernelBuilder,
    world: &World,
    mask: u32,
    init: impl FnOnce(&mut WarpState),
) -> (GroupExit, WarpState, u64) {
    let (kernel, info) = b.build();
    let jit = compile(&kernel, &info).unwrap_or_else(|e| panic!("{e}"));
    let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
    init(&mut warp);
    let env = world.env(&kernel, &info);
    let mut cache = RunnerCache::default();
    jit.prepare_cta(&mut cache, &env);
    // SAFETY: `cache` was prepared for `env` just above, and `env`'s regions outlive the call.
    let exit = unsafe { jit.run_group_prepared(&mut cache, &mut warp, &env, 0, mask, None) };
    let chunks = cache
        .get_mut::<CachedCtx>()
        .expect("the JIT keeps its context in the cache")
        .ctx
        .wide_cas_chunks;
    (exit, warp, chunks)
}

#[test]
fn four_lane_atomics_apply_the_document_formulas_word_by_word() {
    // Lane l names word `first + l` of a window (global, or the shared window through a
    // generic address); words and operands run over the edge values so that across the
    // starts every (word, operand) pair of EDGES meets. Masks: all lanes; chunks full
    // (0x0f, 0x0f), empty (0x00) and partial (0xb, 0x3); words from an odd start, so no chunk
    // is 16-byte aligned. Every chunk whose four lanes run from an aligned word takes the
    // 16-byte CAS, and no other.
    use crate::ir::GENERIC_SHARED_BASE;
    let cases: [(u32, usize); 3] = [(FULL, 0), (0x0f3f_f0fb, 0), (FULL, 1)];
    for &(op, tys) in QUAD_OPS {
        for &ty in tys {
            for (space, shared, guarded) in [
                (Space::Global, false, false),
                (Space::Generic, false, false),
                (Space::Generic, true, false),
                (Space::Global, false, true),
            ] {
                // Guarded: by a predicate the region writes, false in lanes 3, 10, 17, 24 and 31
                // (chunks 1, 3 and 5 run whole).
                let mut b = KernelBuilder::new();
                if guarded {
                    b.push(p0_unless_r9_is(0));
                }
                b.atom(space, op, ty, r(2), global_addr(6, 0), reg(4), None);
                if guarded {
                    let atom = b.insts.pop().unwrap();
                    b.when(0, false, atom.op);
                }
                b.exit();
                assert!(cas128_in(&b, true) > 0, "{op}.{ty}: a 16-byte CAS");
                assert_eq!(
                    cas128_in(&b, false),
                    0,
                    "{op}.{ty}: none without SIMD lanes"
                );
                for (mask, first) in cases {
                    for start in 0..EDGES.len() {
                        let m_of = |l: usize| EDGES[(l + start) % 9];
                        let b_of = |l: usize| EDGES[(5 * l + start) % 9];
                        let world = World::new(256, 256);
                        let base = if shared {
                            GENERIC_SHARED_BASE
                        } else {
                            GLOBAL_BASE
                        };
                        for l in 0..33 {
                            let at = 4 * (first + l);
                            if shared {
                                world.set_shared_u32(at, m_of(l));
                            } else {
                                world.set_global(at, 4, u64::from(m_of(l)));
                            }
                        }
                        let runs =
                            |l: usize| l < 32 && mask & (1 << l) != 0 && (!guarded || l % 7 != 3);
                        let (exit, w, wide) = run_counting_wide_cas(&b, &world, mask, |w| {
                            for l in 0..32 {
                                let addr = base + 4 * (first + l) as u64;
                                set_reg(w, 6, l, addr as u32);
                                set_reg(w, 7, l, (addr >> 32) as u32);
                                set_reg(w, 4, l, b_of(l));
                                set_reg(w, 2, l, 0xdead_0000 | l as u32);
                                set_reg(w, 9, l, u32::from(l % 7 != 3));
                            }
                        });
                        assert_eq!(exit, GroupExit::Exited);
                        for l in 0..33 {
                            let at = 4 * (first + l);
                            let word = if shared {
                                world.shared_u32(at)
                            } else {
                                world.global_u32(at)
                            };
                            let runs = runs(l);
                            let (new, old) = atoms_model32(op, ty, m_of(l), b_of(l), 0);
                            let what = format!("{op}.{ty} mask {mask:#x} word {first}+{l}");
                            assert_eq!(word, if runs { new } else { m_of(l) }, "{what}");
                            if l < 32 {
                                let rd = if runs { old } else { 0xdead_0000 | l as u32 };
                                assert_eq!(reg_of(&w, 2, l), rd, "{what}: result");
                            }
                        }
                        let lanes = (0..32).filter(|&l| runs(l)).count();
                        assert_eq!(w.stats.atomics[op.index()], lanes as u64);
                        let whole = (0..8).filter(|q| (4 * q..4 * q + 4).all(runs)).count();
                        let want = if first % 4 == 0 { whole } else { 0 };
                        assert_eq!(wide, want as u64, "{op}.{ty} mask {mask:#x}: 16-byte CASes");
                    }
                }
            }
        }
    }
}

#[test]
fn a_fault_among_four_lane_atomics_leaves_exactly_the_lanes_before_it_done() {
    // 32 lanes add to adjacent words of a 128-byte window from word `first`, lanes guarded by
    // a predicate the region writes (lane 5 off); lane `bad` faults: its word is past the
    // window's end (in a run of 16-byte CASes from word 8, or with no aligned chunk from word
    // 10), or its address is two bytes off. Exactly the executing lanes before it have added,
    // and are counted; the whole aligned chunks before its chunk took the 16-byte CAS. In the
    // global arena through global and generic addresses and in the shared window through
    // generic ones, for a whole warp and for a warp without its last lane (the chunk loop's
    // general copy).
    use crate::ir::GENERIC_SHARED_BASE;
    let cases = [
        (8usize, 24usize, 0u64, TrapReason::AddressOutOfRange),
        (10, 22, 0, TrapReason::AddressOutOfRange),
        (0, 13, 2, TrapReason::MisalignedAddress),
        (0, 3, 1, TrapReason::MisalignedAddress),
    ];
    for (space, shared) in [
        (Space::Global, false),
        (Space::Generic, false),
        (Space::Generic, true),
    ] {
        for mask in [FULL, FULL >> 1] {
            for (first, bad, skew, reason) in cases {
                let mut b = KernelBuilder::new();
                b.push(p0_unless_r9_is(5));
                b.atom(
                    space,
                    AtomicOp::Add,
                    Ty::U32,
                    Reg::RZ,
                    global_addr(6, 0),
                    reg(4),
                    None,
                );
                let atom = b.insts.pop().unwrap();
                b.when(0, false, atom.op);
                b.exit();
                assert!(cas128_in(&b, true) > 0);
                let world = World::new(128, 128);
                let base = if shared {
                    GENERIC_SHARED_BASE
                } else {
                    GLOBAL_BASE
                };
                let (exit, w, wide) = run_counting_wide_cas(&b, &world, mask, |w| {
                    for l in 0..32 {
                        let mut addr = base + 4 * (first + l) as u64;
                        if l == bad {
                            addr += skew;
                        }
                        set_reg(w, 6, l, addr as u32);
                        set_reg(w, 7, l, (addr >> 32) as u32);
                        set_reg(w, 4, l, 100 + l as u32);
                        set_reg(w, 9, l, l as u32);
                    }
                });
                let address = base + 4 * (first + bad) as u64 + skew;
                let what = format!("{space:?} shared {shared} mask {mask:#x} from {first}");
                assert_eq!(
                    exit,
                    GroupExit::Trap(TrapInfo {
                        reason,
                        pc: 1,
                        lane: bad as u32,
                        space,
                        address,
                        surface: None,
                    }),
                    "{what}"
                );
                for l in 0..32 - first {
                    let done = l < bad && l != 5;
                    let want = if done { 100 + l as u32 } else { 0 };
                    let word = if shared {
                        world.shared_u32(4 * (first + l))
                    } else {
                        world.global_u32(4 * (first + l))
                    };
                    assert_eq!(word, want, "{what}: lane {l}");
                }
                let before = (0..bad).filter(|&l| l != 5).count() as u64;
                assert_eq!(w.stats.atomics[AtomicOp::Add.index()], before, "{what}");
                let whole = (0..bad / 4).filter(|&q| q != 1).count() as u64;
                let want = if first % 4 == 0 { whole } else { 0 };
                assert_eq!(wide, want, "{what}: 16-byte CASes");
            }
        }
    }
}

/// `f32` values at the edges of what a float add, min and max do: zeros of both signs,
/// subnormals (the smallest, the largest, a negative one), the smallest normals and one and a
/// half of the smallest (whose difference is subnormal), one, 2^-24 (half an ulp of one: a tie
/// that rounds to even), the largest finite values, infinities, a quiet and a signalling NaN.
const F32_EDGES: [u32; 16] = [
    0x0000_0000,
    0x8000_0000,
    0x0000_0001,
    0x8000_0001,
    0x007f_ffff,
    0x0080_0000,
    0x8080_0000,
    0x3f80_0000,
    0x00c0_0000,
    0x7f7f_ffff,
    0xff7f_ffff,
    0x7f80_0000,
    0xff80_0000,
    0x7fc0_0000,
    0x7f80_0001,
    0x3380_0000,
];

/// An `f32` atomic's new word from the IR's rules (`ir::AtomicOp`, `sem/float.rs`'s module
/// docs) with the host's own float add: subnormal inputs and results flushed to a zero of the
/// same sign when `ftz`; IEEE add rounded to nearest even; `minNum`/`maxNum` (a NaN operand
/// yields the other, `-0 < +0`); a NaN result is the canonical `0x7fffffff`.
fn f32_atomic_model(op: AtomicOp, m: u32, b: u32, ftz: bool) -> u32 {
    let flush = |x: u32| {
        if ftz && x & 0x7f80_0000 == 0 {
            x & 0x8000_0000
        } else {
            x
        }
    };
    let (m, b) = (flush(m), flush(b));
    let (fm, fb) = (f32::from_bits(m), f32::from_bits(b));
    let r = match op {
        AtomicOp::Add => (fm + fb).to_bits(),
        AtomicOp::Min | AtomicOp::Max => {
            let max = op == AtomicOp::Max;
            if fm.is_nan() {
                b
            } else if fb.is_nan() {
                m
            } else if fm == fb {
                // Equal values differ only in a zero's sign: -0 is the smaller.
                let m_neg = m >> 31 == 1;
                if m_neg != max {
                    m
                } else {
                    b
                }
            } else if (fm < fb) != max {
                m
            } else {
                b
            }
        }
        _ => unreachable!("not an f32 four-lane op"),
    };
    if f32::from_bits(r).is_nan() {
        0x7fff_ffff
    } else {
        flush(r)
    }
}

#[test]
fn four_lane_float_atomics_flush_round_and_canonicalise_word_by_word() {
    // The f32 add, min and max of the four-lane path, with and without FTZ, in the global
    // arena through global and generic addresses (flushed under FTZ), in the shared window
    // through generic ones (never flushed: `ir::AtomicInst::ftz`), and through generic ones
    // whose chunks alternate between the window and the arena (each chunk decides its own
    // flush). Lane l of run s takes
    // M = F32_EDGES[l % 16] and b = F32_EDGES[(2s + l / 16) % 16], so over the eight runs every
    // pair of edge values meets. All lanes, and a mask with partial and empty chunks.
    use crate::ir::GENERIC_SHARED_BASE;
    for op in [AtomicOp::Add, AtomicOp::Min, AtomicOp::Max] {
        for ftz in [true, false] {
            let never = |_: usize| false;
            let always = |_: usize| true;
            let even_chunks = |l: usize| l / 4 % 2 == 0;
            let windows: [(Space, &dyn Fn(usize) -> bool); 4] = [
                (Space::Global, &never),
                (Space::Generic, &never),
                (Space::Generic, &always),
                (Space::Generic, &even_chunks),
            ];
            for (space, shared) in windows {
                let mut b = KernelBuilder::new();
                b.atom(space, op, Ty::F32, r(2), global_addr(6, 0), reg(4), None);
                if let Some(Inst {
                    op: Op::Atomic(a), ..
                }) = b.insts.last_mut()
                {
                    a.ftz = ftz;
                }
                b.exit();
                assert!(cas128_in(&b, true) > 0, "{op}.f32: a 16-byte CAS");
                for mask in [FULL, 0x0f3f_f0fb] {
                    for run in 0..8 {
                        let m_of = |l: usize| F32_EDGES[l % 16];
                        let b_of = |l: usize| F32_EDGES[(2 * run + l / 16) % 16];
                        let world = World::new(256, 256);
                        for l in 0..32 {
                            if shared(l) {
                                world.set_shared_u32(4 * l, m_of(l));
                            } else {
                                world.set_global(4 * l, 4, u64::from(m_of(l)));
                            }
                        }
                        let (exit, w, wide) = run_counting_wide_cas(&b, &world, mask, |w| {
                            for l in 0..32 {
                                let base = if shared(l) {
                                    GENERIC_SHARED_BASE
                                } else {
                                    GLOBAL_BASE
                                };
                                let addr = base + 4 * l as u64;
                                set_reg(w, 6, l, addr as u32);
                                set_reg(w, 7, l, (addr >> 32) as u32);
                                set_reg(w, 4, l, b_of(l));
                                set_reg(w, 2, l, 0xdead_0000 | l as u32);
                            }
                        });
                        assert_eq!(exit, GroupExit::Exited);
                        let what = |l: usize| {
                            format!(
                                "{op}.f32 ftz {ftz} {space:?} lane {l} shared {} mask {mask:#x}: \
                                 M {:#010x} b {:#010x}",
                                shared(l),
                                m_of(l),
                                b_of(l)
                            )
                        };
                        for l in 0..32 {
                            let word = if shared(l) {
                                world.shared_u32(4 * l)
                            } else {
                                world.global_u32(4 * l)
                            };
                            let runs = mask & (1 << l) != 0;
                            let want = if runs {
                                f32_atomic_model(op, m_of(l), b_of(l), ftz && !shared(l))
                            } else {
                                m_of(l)
                            };
                            assert_eq!(word, want, "{}", what(l));
                            let rd = if runs {
                                m_of(l)
                            } else {
                                0xdead_0000 | l as u32
                            };
                            assert_eq!(reg_of(&w, 2, l), rd, "{}: result", what(l));
                        }
                        let whole = (0..8)
                            .filter(|q| (4 * q..4 * q + 4).all(|l| mask & (1 << l) != 0))
                            .count();
                        assert_eq!(wide, whole as u64, "{op}.f32 mask {mask:#x}: 16-byte CASes");
                    }
                }
            }
        }
    }
}

#[test]
fn four_element_float_atomics_take_one_cas_and_apply_the_formula_per_element() {
    // `red.global.add.v4.f32` / `ADD.F32x4.FTZ.RN` (and min and max, which the path takes
    // too): lane l updates the four floats at 16 * l, element e from M = F32_EDGES[(4l + e) %
    // 16] with b = F32_EDGES[(4l + e + run) % 16], so over the sixteen runs every pair of edge
    // values meets; with and without FTZ, through global and generic addresses (a generic
    // vector atomic lands in global memory, where FTZ applies), all lanes and a partial mask.
    for op in [AtomicOp::Add, AtomicOp::Min, AtomicOp::Max] {
        for ftz in [true, false] {
            for space in [Space::Global, Space::Generic] {
                let mut b = KernelBuilder::new();
                b.atom(space, op, Ty::F32, r(12), global_addr(16, 0), reg(4), None);
                if let Some(Inst {
                    op: Op::Atomic(a), ..
                }) = b.insts.last_mut()
                {
                    a.ftz = ftz;
                    a.access.vector = 4;
                }
                b.exit();
                assert!(cas128_in(&b, false) > 0, "{op}.v4.f32: a 16-byte CAS");
                for mask in [FULL, 0x0f3f_f0fb] {
                    for run in 0..16 {
                        let m_of = |l: usize, e: usize| F32_EDGES[(4 * l + e) % 16];
                        let b_of = |l: usize, e: usize| F32_EDGES[(4 * l + e + run) % 16];
                        let world = World::new(512, 16);
                        for l in 0..32 {
                            for e in 0..4 {
                                world.set_global(16 * l + 4 * e, 4, u64::from(m_of(l, e)));
                            }
                        }
                        let (exit, w, _) = run_counting_wide_cas(&b, &world, mask, |w| {
                            for l in 0..32 {
                                let addr = GLOBAL_BASE + 16 * l as u64;
                                set_reg(w, 16, l, addr as u32);
                                set_reg(w, 17, l, (addr >> 32) as u32);
                                for e in 0..4 {
                                    set_reg(w, 4 + e as u16, l, b_of(l, e));
                                    set_reg(w, 12 + e as u16, l, 0xdead_0000 | l as u32);
                                }
                            }
                        });
                        assert_eq!(exit, GroupExit::Exited);
                        for l in 0..32 {
                            let runs = mask & (1 << l) != 0;
                            for e in 0..4 {
                                let (m, bv) = (m_of(l, e), b_of(l, e));
                                let what = format!(
                                    "{op}.v4.f32 ftz {ftz} {space:?} mask {mask:#x} lane {l} \
                                     element {e}: M {m:#010x} b {bv:#010x}"
                                );
                                let want = if runs {
                                    f32_atomic_model(op, m, bv, ftz)
                                } else {
                                    m
                                };
                                assert_eq!(world.global_u32(16 * l + 4 * e), want, "{what}");
                                let rd = if runs { m } else { 0xdead_0000 | l as u32 };
                                assert_eq!(reg_of(&w, 12 + e as u16, l), rd, "{what}: result");
                            }
                        }
                        let lanes = (0..32).filter(|&l| mask & (1 << l) != 0).count();
                        assert_eq!(w.stats.atomics[op.index()], 4 * lanes as u64);
                    }
                }
            }
        }
    }
}

#[test]
fn inc_and_dec_wrap_exactly_as_documented() {
    // (M, Rb) -> INC: (M >= Rb) ? 0 : M+1 ; DEC: (M == 0 || M > Rb) ? Rb : M-1.
    let cases = [
        (0u32, 0u32),
        (5, 0),
        (0, u32::MAX),
        (u32::MAX, u32::MAX),
        (u32::MAX - 1, u32::MAX),
        (7, 7),
        (8, 7),
        (3, 7),
    ];
    for op in [AtomicOp::Inc, AtomicOp::Dec] {
        let mut b = KernelBuilder::new();
        b.lane_id(0).push(Op::Binary {
            op: BinOp::Shl,
            ty: Ty::U32,
            dst: r(1),
            a: src(reg(0)),
            b: src(imm(2)),
            ftz: false,
        });
        b.atom(
            Space::Shared,
            op,
            Ty::U32,
            r(2),
            shared_addr(1, 0),
            reg(4),
            None,
        )
        .exit();
        let world = World::new(64, 64);
        for (l, &(m, _)) in cases.iter().enumerate() {
            world.set_shared_u32(4 * l, m);
        }
        let (_, w) = run_kernel_masked(&b, &world, 0xff, |w| {
            for (l, &(_, rb)) in cases.iter().enumerate() {
                set_reg(w, 4, l, rb);
            }
        });
        for (l, &(m, rb)) in cases.iter().enumerate() {
            let expect = match op {
                AtomicOp::Inc => {
                    if m >= rb {
                        0
                    } else {
                        m + 1
                    }
                }
                _ => {
                    if m == 0 || m > rb {
                        rb
                    } else {
                        m - 1
                    }
                }
            };
            assert_eq!(world.shared_u32(4 * l), expect, "{op} M={m} Rb={rb}");
            assert_eq!(reg_of(&w, 2, l), m);
        }
    }
}

#[test]
fn lanes_of_one_instruction_are_serialised_in_lane_order() {
    // All 32 lanes EXCH their lane id into one word: lane l reads what lane l-1 wrote.
    let mut b = KernelBuilder::new();
    b.lane_id(0)
        .atom(
            Space::Shared,
            AtomicOp::Exch,
            Ty::U32,
            r(2),
            Address::absolute(8),
            reg(0),
            None,
        )
        .exit();
    let world = World::new(64, 64);
    world.set_shared_u32(8, 0xAAAA);
    let (_, w) = run_kernel(&b, &world);
    assert_eq!(reg_of(&w, 2, 0), 0xAAAA);
    for l in 1..32 {
        assert_eq!(reg_of(&w, 2, l), l as u32 - 1);
    }
    assert_eq!(world.shared_u32(8), 31);

    // ADD 1 from every lane returns 0..31 in lane order.
    let mut b = KernelBuilder::new();
    b.atom(
        Space::Shared,
        AtomicOp::Add,
        Ty::U32,
        r(2),
        Address::absolute(0),
        imm(1),
        None,
    )
    .exit();
    let world = World::new(64, 64);
    let (_, w) = run_kernel(&b, &world);
    for l in 0..32 {
        assert_eq!(reg_of(&w, 2, l), l as u32);
    }
    assert_eq!(world.shared_u32(0), 32);
}

#[test]
fn atoms_64bit_exch_cas_and_cast_use_register_pairs() {
    // EXCH.U64, CAS.U64 (success and failure), CAST.U64, low word in the even register.
    let mut b = KernelBuilder::new();
    b.atom(
        Space::Shared,
        AtomicOp::Exch,
        Ty::U64,
        r(2),
        Address::absolute(0),
        reg(4),
        None,
    )
    .atom(
        Space::Shared,
        AtomicOp::Cas,
        Ty::U64,
        r(6),
        Address::absolute(8),
        reg(8),
        Some(reg(10)),
    )
    .atom(
        Space::Shared,
        AtomicOp::Cast,
        Ty::U64,
        r(12),
        Address::absolute(16),
        reg(8),
        Some(reg(10)),
    )
    .exit();
    let world = World::new(64, 64);
    world.shared.region().store(0, 8, 0x1111_2222_3333_4444);
    world.shared.region().store(8, 8, 0x5555_6666_7777_8888);
    world.shared.region().store(16, 8, 0x9999_0000_0000_0001);
    let (_, w) = run_kernel_masked(&b, &world, 1, |w| {
        set_reg(w, 4, 0, 0xdead_beef);
        set_reg(w, 5, 0, 0x0123_4567);
        set_reg(w, 8, 0, 0x7777_8888);
        set_reg(w, 9, 0, 0x5555_6666);
        set_reg(w, 10, 0, 0xaaaa_bbbb);
        set_reg(w, 11, 0, 0xcccc_dddd);
    });
    assert_eq!(world.shared.region().load(0, 8), 0x0123_4567_dead_beef);
    assert_eq!(
        (reg_of(&w, 2, 0), reg_of(&w, 3, 0)),
        (0x3333_4444, 0x1111_2222)
    );
    assert_eq!(
        world.shared.region().load(8, 8),
        0xcccc_dddd_aaaa_bbbb,
        "CAS stored"
    );
    assert_eq!(
        (reg_of(&w, 6, 0), reg_of(&w, 7, 0)),
        (0x7777_8888, 0x5555_6666),
        "CAS returns old"
    );
    assert_eq!(
        world.shared.region().load(16, 8),
        0x9999_0000_0000_0001,
        "CAST compare failed"
    );
    assert_eq!(
        (reg_of(&w, 12, 0), reg_of(&w, 13, 0)),
        (0, 0),
        "CAST returns 0 as a pair"
    );
    assert_eq!(w.stats.cas_failures, 1);
}

#[test]
fn cast_spin_lets_the_lowest_lane_of_each_bank_attempt() {
    // Lanes 0..15 target word 0 (bank 0), lanes 16..31 target word 33 (bank 1): lane 0 and lane
    // 16 attempt (and succeed: compare value 0 = M), the others fast-fail with Rd = 0.
    let mut b = KernelBuilder::new();
    b.lane_id(0)
        .push(Op::Binary {
            op: BinOp::Shr,
            ty: Ty::U32,
            dst: r(1),
            a: src(reg(0)),
            b: src(imm(4)),
            ftz: false,
        })
        .push(Op::Imad {
            mode: ImadMode::Lo,
            signed: false,
            dst: r(1),
            a: src(reg(1)),
            b: src(imm(132)),
            c: src(imm(0)),
        })
        .push(Op::Atomic(Box::new(AtomicInst {
            access: MemAccess {
                space: Space::Shared,
                ty: Ty::U32,
                vector: 1,
                order: MemOrder::Relaxed,
                scope: Scope::Cta,
                addr: shared_addr(1, 0),
            },
            op: AtomicOp::Cast,
            dst: r(2),
            src: reg(4),
            src2: Some(reg(5)),
            spin: true,
            ftz: false,
            performed: Pred::PT,
        })))
        .exit();
    let world = World::new(64, 256);
    let (_, w) = run_kernel_masked(&b, &world, FULL, |w| {
        for l in 0..32 {
            set_reg(w, 4, l, 0);
            set_reg(w, 5, l, 100 + l as u32);
            set_reg(w, 2, l, 0xffff);
        }
    });
    assert_eq!(world.shared_u32(0), 100);
    assert_eq!(world.shared_u32(132), 116);
    for l in 0..32 {
        let expect = if l == 0 || l == 16 { 1 } else { 0 };
        assert_eq!(reg_of(&w, 2, l), expect, "lane {l}");
    }
    assert_eq!(w.stats.spin_fast_fails, 30);
    assert_eq!(w.stats.atomics[AtomicOp::Cast.index()], 2);
    assert_eq!(w.stats.cas_failures, 0);
}

#[test]
fn rz_destination_discards_and_rz_base_is_absolute() {
    let mut b = KernelBuilder::new();
    b.atom(
        Space::Shared,
        AtomicOp::Add,
        Ty::U32,
        Reg::RZ,
        Address::Linear(LinearAddress {
            base: Some(Reg::RZ),
            base_bits: 32,
            offset: 0x10,
        }),
        imm(5),
        None,
    )
    .exit();
    let world = World::new(64, 64);
    let (_, w) = run_kernel_masked(&b, &world, 0b11, |_| {});
    assert_eq!(world.shared_u32(0x10), 10);
    assert!(w.regs.iter().all(|&v| v == 0));
}

// ---- traps -------------------------------------------------------------------------------------

#[test]
fn misaligned_is_reported_before_out_of_range_and_earlier_lanes_keep_their_effects() {
    // Lane l adds at address 4*l except lane 5 (address 0x1002: misaligned and out of range).
    let mut b = KernelBuilder::new();
    b.lane_id(0)
        .push(Op::Binary {
            op: BinOp::Shl,
            ty: Ty::U32,
            dst: r(1),
            a: src(reg(0)),
            b: src(imm(2)),
            ftz: false,
        })
        .atom(
            Space::Shared,
            AtomicOp::Add,
            Ty::U32,
            r(2),
            shared_addr(1, 0),
            imm(1),
            None,
        )
        .exit()
        .join(0, 2);
    let world = World::new(64, 128);
    let (kernel, info) = b.build();
    let jit = compile(&kernel, &info).unwrap();
    let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
    // Run the first two instructions, then patch lane 5's address and run the atomic.
    let _ = world.run(&kernel, &info, &jit, &mut warp, 0, FULL, Some(2));
    set_reg(&mut warp, 1, 5, 0x1002);
    let exit = world.run(&kernel, &info, &jit, &mut warp, 2, FULL, None);
    assert_eq!(
        exit,
        GroupExit::Trap(TrapInfo {
            reason: TrapReason::MisalignedAddress,
            pc: 2,
            lane: 5,
            space: Space::Shared,
            address: 0x1002,
            surface: None,
        })
    );
    for l in 0..32 {
        assert_eq!(world.shared_u32(4 * l), u32::from(l < 5), "lane {l}");
    }
    assert_eq!(warp.stats.atomics[AtomicOp::Add.index()], 5);

    // Aligned but past the 128-byte window.
    set_reg(&mut warp, 1, 5, 128);
    let exit = world.run(&kernel, &info, &jit, &mut warp, 2, FULL, None);
    assert!(matches!(
        exit,
        GroupExit::Trap(TrapInfo {
            reason: TrapReason::AddressOutOfRange,
            lane: 5,
            address: 128,
            surface: None,
            ..
        })
    ));
    // The last word of the window is in range.
    set_reg(&mut warp, 1, 5, 124);
    let exit = world.run(&kernel, &info, &jit, &mut warp, 2, 1 << 5, None);
    assert_eq!(exit, GroupExit::Exited);
}

/// Runs `b` (its one access addressed by the pair R2:R3) with lane 3 alone at address `addr`
/// on a `World::new(64, shared)`, and checks the outcome: an exit, or a trap of lane 3 at pc 0
/// in `space` for `reason` at `addr`.
fn check_access_at(
    b: &KernelBuilder,
    shared: u32,
    addr: u64,
    space: Space,
    reason: Option<TrapReason>,
    label: &str,
) {
    let world = World::new(64, shared);
    let (exit, _) = run_kernel_masked(b, &world, 1 << 3, |w| {
        set_reg(w, 2, 3, addr as u32);
        set_reg(w, 3, 3, (addr >> 32) as u32);
    });
    let want = match reason {
        Some(reason) => GroupExit::Trap(TrapInfo {
            reason,
            pc: 0,
            lane: 3,
            space,
            address: addr,
            surface: None,
        }),
        None => GroupExit::Exited,
    };
    assert_eq!(exit, want, "{label} address {addr:#x}");
}

#[test]
fn global_accesses_are_checked_against_the_arena() {
    for (addr, reason) in [
        (GLOBAL_BASE - 4, Some(TrapReason::AddressOutOfRange)),
        (0, Some(TrapReason::AddressOutOfRange)),
        (GLOBAL_BASE + 64, Some(TrapReason::AddressOutOfRange)),
        (GLOBAL_BASE + 60, None),
        (GLOBAL_BASE + 62, Some(TrapReason::MisalignedAddress)),
        (u64::MAX - 3, Some(TrapReason::AddressOutOfRange)),
    ] {
        for kind in 0..3 {
            let mut b = KernelBuilder::new();
            match kind {
                0 => b.push(Op::Load {
                    access: MemAccess {
                        space: Space::Global,
                        ty: Ty::U32,
                        vector: 1,
                        order: MemOrder::Weak,
                        scope: Scope::Cta,
                        addr: global_addr(2, 0),
                    },
                    dst: r(4),
                }),
                1 => b.push(Op::Store {
                    access: MemAccess {
                        space: Space::Global,
                        ty: Ty::U32,
                        vector: 1,
                        order: MemOrder::Weak,
                        scope: Scope::Cta,
                        addr: global_addr(2, 0),
                    },
                    src: imm(9),
                }),
                _ => b.atom(
                    Space::Global,
                    AtomicOp::Add,
                    Ty::U32,
                    r(4),
                    global_addr(2, 0),
                    imm(1),
                    None,
                ),
            };
            b.exit();
            check_access_at(&b, 0, addr, Space::Global, reason, &format!("kind {kind}"));
        }
    }
}

#[test]
fn generic_accesses_are_checked_against_the_window_their_address_names() {
    use crate::ir::GENERIC_SHARED_BASE;
    // A 64-byte arena and a 64-byte shared window: the edges of both images in the generic
    // space, misaligned addresses in each, and the gaps below each base.
    let (g, s) = (GLOBAL_BASE, GENERIC_SHARED_BASE);
    let oob = Some(TrapReason::AddressOutOfRange);
    let cases = [
        (g + 60, None),
        (g + 64, oob),
        (g + 62, Some(TrapReason::MisalignedAddress)),
        (g - 4, oob),
        (s, None),
        (s + 60, None),
        (s + 64, oob),
        (s + 2, Some(TrapReason::MisalignedAddress)),
        (s - 4, oob),
        (0, oob),
        (u64::MAX - 3, oob),
    ];
    let access = |ty, vector| MemAccess {
        space: Space::Generic,
        ty,
        vector,
        order: MemOrder::Relaxed,
        scope: Scope::Gpu,
        addr: global_addr(2, 0),
    };
    // A vector atomic (8 bytes here) must name global memory: an aligned shared address is out
    // of range, a misaligned one misaligned (the reason follows from the address).
    let vector_cases = [
        (g + 56, None),
        (g + 64, oob),
        (g + 60, Some(TrapReason::MisalignedAddress)),
        (s + 8, oob),
        (s + 4, Some(TrapReason::MisalignedAddress)),
    ];
    let runs = cases
        .iter()
        .flat_map(|&case| (0..3).map(move |kind| (kind, case)))
        .chain(vector_cases.iter().map(|&case| (3, case)));
    for (kind, (addr, reason)) in runs {
        let mut b = KernelBuilder::new();
        match kind {
            0 => b.push(Op::Load {
                access: access(Ty::U32, 1),
                dst: r(4),
            }),
            1 => b.push(Op::Store {
                access: access(Ty::U32, 1),
                src: imm(9),
            }),
            2 => b.atom(
                Space::Generic,
                AtomicOp::Add,
                Ty::U32,
                r(4),
                global_addr(2, 0),
                imm(1),
                None,
            ),
            _ => b.push(Op::Atomic(Box::new(AtomicInst {
                access: access(Ty::F32, 2),
                op: AtomicOp::Add,
                dst: r(6),
                src: reg(4),
                src2: None,
                spin: false,
                ftz: false,
                performed: Pred::PT,
            }))),
        };
        b.exit();
        check_access_at(
            &b,
            64,
            addr,
            Space::Generic,
            reason,
            &format!("kind {kind}"),
        );
    }
}

#[test]
fn an_empty_shared_window_traps_every_access() {
    let mut b = KernelBuilder::new();
    b.push(Op::Load {
        access: MemAccess {
            space: Space::Shared,
            ty: Ty::U8,
            vector: 1,
            order: MemOrder::Weak,
            scope: Scope::Cta,
            addr: Address::absolute(0),
        },
        dst: r(4),
    })
    .exit();
    let world = World::new(8, 0);
    let (exit, _) = run_kernel(&b, &world);
    assert!(matches!(
        exit,
        GroupExit::Trap(TrapInfo {
            reason: TrapReason::AddressOutOfRange,
            lane: 0,
            ..
        })
    ));
}

// ---- global atomics ------------------------------------------------------------------------------

#[test]
fn global_float_add_ftz_and_f64_and_64bit_min_max() {
    let mut b = KernelBuilder::new();
    b.push(Op::Mov {
        ty: Ty::U64,
        dst: r(2),
        src: Operand::Const {
            bank: 0,
            offset: 0x160,
        },
    });
    b.push(Op::Atomic(Box::new(AtomicInst {
        access: MemAccess {
            space: Space::Global,
            ty: Ty::F32,
            vector: 1,
            order: MemOrder::Relaxed,
            scope: Scope::Gpu,
            addr: global_addr(2, 0),
        },
        op: AtomicOp::Add,
        dst: r(4),
        src: reg(6),
        src2: None,
        spin: false,
        ftz: true,
        performed: Pred::PT,
    })));
    b.atom(
        Space::Global,
        AtomicOp::Add,
        Ty::F64,
        r(8),
        global_addr(2, 8),
        reg(10),
        None,
    );
    b.atom(
        Space::Global,
        AtomicOp::Min,
        Ty::S64,
        r(12),
        global_addr(2, 16),
        reg(10),
        None,
    );
    b.atom(
        Space::Global,
        AtomicOp::Max,
        Ty::U64,
        r(14),
        global_addr(2, 24),
        reg(10),
        None,
    );
    b.exit();
    let world = World::new(64, 0);
    world.set_global(0, 4, 1.5f32.to_bits() as u64);
    world.set_global(8, 8, 0.25f64.to_bits());
    world.set_global(16, 8, 5);
    world.set_global(24, 8, 5);
    let sub = f32::from_bits(1); // a subnormal: flushed to zero by .FTZ
    let (_, w) = run_kernel_masked(&b, &world, 0b111, |w| {
        for l in 0..3 {
            set_reg(w, 6, l, [2.0f32, sub, -0.5][l].to_bits());
            let d = [1.0f64, -2.0, 0.5][l].to_bits();
            set_reg(w, 10, l, d as u32);
            set_reg(w, 11, l, (d >> 32) as u32);
        }
    });
    assert_eq!(
        f32::from_bits(world.global_u32(0)),
        3.0,
        "1.5 + 2 + ftz(sub) - 0.5"
    );
    assert_eq!(f32::from_bits(reg_of(&w, 4, 2)), 3.5);
    assert_eq!(f64::from_bits(world.global_u64(8)), 0.25 + 1.0 - 2.0 + 0.5);
    // S64 min of 5 with 1.0, -2.0, 0.5 as bit patterns: -2.0's pattern is negative.
    assert_eq!(world.global_u64(16) as i64, (-2.0f64).to_bits() as i64);
    assert_eq!(
        world.global_u64(24),
        (-2.0f64).to_bits(),
        "U64 max: the pattern with the top bit set"
    );
}

// ---- control flow --------------------------------------------------------------------------------

#[test]
fn divergent_branch_reports_both_sides_and_uniform_branches_do_not() {
    // 0: P0 = lane < 8 ; 1: @P0 BRA 3 ; 2: NOP ; 3: EXIT
    let setp = |b: &mut KernelBuilder, limit: u32| {
        b.lane_id(0).push(set_lt(p(0), 0, u64::from(limit)));
    };
    let mut b = KernelBuilder::new();
    setp(&mut b, 8);
    b.when(
        0,
        false,
        Op::Branch {
            target: 4,
            uniform: false,
        },
    )
    .push(Op::Nop)
    .exit()
    .join(2, 4);
    let world = World::new(8, 0);
    let (exit, w) = run_kernel(&b, &world);
    assert_eq!(
        exit,
        GroupExit::Diverge(Split {
            branch_pc: 2,
            taken_pc: 4,
            taken: 0xff,
            fall_pc: 3,
            fall: !0xff
        })
    );
    assert_eq!(w.preds[0], 0xff);
    assert_eq!(w.stats.warp_insts, 3);

    // All lanes take it: continues at 4 and exits. No lane takes it: falls through.
    for limit in [32, 0] {
        let mut b = KernelBuilder::new();
        setp(&mut b, limit);
        b.when(
            0,
            false,
            Op::Branch {
                target: 4,
                uniform: false,
            },
        )
        .push(Op::Nop)
        .exit();
        let (exit, w) = run_kernel(&b, &world);
        assert_eq!(exit, GroupExit::Exited);
        assert_eq!(w.stats.warp_insts, if limit == 32 { 4 } else { 5 });
        assert_eq!(w.exited, FULL);
    }
}

#[test]
fn backward_branch_yields_and_stop_pc_reconverges() {
    // 0: NOP ; 1: BRA 0  -> Yield{0}.
    let mut b = KernelBuilder::new();
    b.push(Op::Nop).push(Op::Branch {
        target: 0,
        uniform: true,
    });
    let world = World::new(8, 0);
    let (exit, _) = run_kernel_masked(&b, &world, 0xf0, |_| {});
    assert_eq!(exit, GroupExit::Yield { pc: 0, mask: 0xf0 });

    // Reconverge when reaching a join that is the stop pc, including at the start.
    let mut b = KernelBuilder::new();
    b.push(Op::Nop).push(Op::Nop).exit().join(0, 2);
    let (kernel, info) = b.build();
    let jit = compile(&kernel, &info).unwrap();
    let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
    assert_eq!(
        world.run(&kernel, &info, &jit, &mut warp, 0, 0x3, Some(2)),
        GroupExit::Reconverge { mask: 0x3 }
    );
    assert_eq!(warp.stats.warp_insts, 2);
    assert_eq!(
        world.run(&kernel, &info, &jit, &mut warp, 2, 0x3, Some(2)),
        GroupExit::Reconverge { mask: 0x3 }
    );
    assert_eq!(warp.stats.warp_insts, 2);
}

#[test]
fn partial_exit_keeps_running_the_rest_and_barrier_stops_the_group() {
    // 0: P0 = lane < 4 ; 1: @P0 EXIT ; 2: BAR.SYNC 3 ; 3: EXIT
    let mut b = KernelBuilder::new();
    b.lane_id(0)
        .push(set_lt(p(0), 0, 4))
        .when(0, false, Op::Exit)
        .push(Op::Barrier { id: 3 })
        .exit();
    let world = World::new(8, 0);
    let (exit, w) = run_kernel(&b, &world);
    assert_eq!(
        exit,
        GroupExit::Barrier {
            pc: 3,
            mask: !0xf,
            id: 3
        }
    );
    assert_eq!(w.exited, 0xf);
    // Every lane exits through the guarded EXIT: the group is done.
    let (exit, w) = run_kernel_masked(&b, &world, 0x3, |_| {});
    assert_eq!(exit, GroupExit::Exited);
    assert_eq!(w.exited, 0x3);
}

// ---- ALU -------------------------------------------------------------------------------------------

#[test]
fn iadd3_carries_and_imad_wide_and_lea() {
    let mut b = KernelBuilder::new();
    b.push(Op::IAdd3 {
        dst: r(3),
        carry_out: [p(0), p(1)],
        a: src(reg(0)),
        b: src(reg(1)),
        c: src(reg(2)),
        carry_in: [PredSrc::FALSE, PredSrc::FALSE],
    })
    .push(Op::Imad {
        mode: ImadMode::Wide,
        signed: true,
        dst: r(4),
        a: src(reg(0)),
        b: src(reg(1)),
        c: src(reg(6)),
    })
    .push(Op::Lea {
        sx32: false,
        hi: false,
        dst: r(8),
        carry_out: p(2),
        a: src(reg(0)),
        b: src(reg(1)),
        c: src(imm(0)),
        shift: 4,
        carry_in: PredSrc::FALSE,
    })
    .push(Op::Lea {
        sx32: false,
        hi: true,
        dst: r(9),
        carry_out: Pred::PT,
        a: src(reg(0)),
        b: src(reg(1)),
        c: src(reg(2)),
        shift: 4,
        carry_in: PredSrc {
            pred: p(2),
            negate: false,
        },
    })
    .exit();
    let world = World::new(8, 0);
    let vals = [
        (0xffff_ffffu32, 0xffff_ffffu32, 0xffff_ffffu32),
        (1, 2, 3),
        (0x8000_0000, 0x8000_0000, 0),
        (0xf000_0001, 0x1000_0000, 7),
    ];
    let (_, w) = run_kernel_masked(&b, &world, 0xf, |w| {
        for (l, &(a, bb, c)) in vals.iter().enumerate() {
            set_reg(w, 0, l, a);
            set_reg(w, 1, l, bb);
            set_reg(w, 2, l, c);
            set_reg(w, 6, l, 10);
            set_reg(w, 7, l, 0);
        }
    });
    for (l, &(a, bb, c)) in vals.iter().enumerate() {
        let sum = a as u64 + bb as u64 + c as u64;
        assert_eq!(reg_of(&w, 3, l), sum as u32);
        assert_eq!(
            (w.preds[0] >> l) & 1,
            ((sum >> 32) & 1) as u32,
            "carry 0, lane {l}"
        );
        assert_eq!(
            (w.preds[1] >> l) & 1,
            ((sum >> 33) & 1) as u32,
            "carry 1, lane {l}"
        );
        let wide = (a as i32 as i64)
            .wrapping_mul(bb as i32 as i64)
            .wrapping_add(10);
        assert_eq!(
            reg_of(&w, 4, l) as u64 | (reg_of(&w, 5, l) as u64) << 32,
            wide as u64
        );
        let lea = ((a << 4) as u64) + bb as u64;
        assert_eq!(reg_of(&w, 8, l), lea as u32);
        let carry = (lea >> 32) as u32;
        assert_eq!((w.preds[2] >> l) & 1, carry);
        let hi = ((((c as u64) << 32 | a as u64) << 4) >> 32) as u32;
        assert_eq!(reg_of(&w, 9, l), hi.wrapping_add(bb).wrapping_add(carry));
    }
}

#[test]
fn shf_lop3_popc_and_select() {
    let mut b = KernelBuilder::new();
    b.push(Op::Shf(ShfInst {
        left: false,
        wrap: false,
        high: false,
        ty: Ty::U32,
        dst: r(3),
        lo: src(reg(0)),
        shift: src(reg(2)),
        hi: src(reg(1)),
    }))
    .push(Op::Shf(ShfInst {
        left: true,
        wrap: false,
        high: true,
        ty: Ty::U32,
        dst: r(4),
        lo: src(reg(0)),
        shift: src(reg(2)),
        hi: src(reg(1)),
    }))
    .push(Op::Shf(ShfInst {
        left: false,
        wrap: false,
        high: true,
        ty: Ty::S32,
        dst: r(5),
        lo: src(reg(0)),
        shift: src(reg(2)),
        hi: src(reg(1)),
    }))
    .push(Op::Lop3 {
        dst: r(6),
        pred_out: p(0),
        a: src(reg(0)),
        b: src(reg(1)),
        c: src(reg(2)),
        lut: 0xF0 & 0xCC ^ 0xAA,
    })
    .push(Op::Unary {
        op: UnOp::Popc,
        ty: Ty::U32,
        dst: r(7),
        a: src(reg(0)),
    })
    .push(Op::Select {
        ty: Ty::U32,
        dst: r(8),
        a: src(reg(0)),
        b: src(reg(1)),
        pred: PredSrc {
            pred: p(0),
            negate: true,
        },
    })
    .exit();
    let world = World::new(8, 0);
    let vals = [
        (0x1234_5678u32, 0x8765_4321u32, 4u32),
        (0xffff_0000, 0x8000_0000, 31),
        (5, 6, 40),
        (0, 0, 0),
        (3, 0xf000_0000, 32),
    ];
    let (_, w) = run_kernel_masked(&b, &world, 0x1f, |w| {
        for (l, &(a, bb, c)) in vals.iter().enumerate() {
            set_reg(w, 0, l, a);
            set_reg(w, 1, l, bb);
            set_reg(w, 2, l, c);
        }
    });
    for (l, &(a, bb, c)) in vals.iter().enumerate() {
        let v = (bb as u64) << 32 | a as u64;
        let s = c.min(32);
        assert_eq!(reg_of(&w, 3, l), (v >> s) as u32, "SHF.R lane {l}");
        assert_eq!(
            reg_of(&w, 4, l),
            ((v << s) >> 32) as u32,
            "SHF.L.HI lane {l}"
        );
        assert_eq!(
            reg_of(&w, 5, l),
            ((v as i64 >> s) >> 32) as u32,
            "SHF.R.S32.HI lane {l}"
        );
        let lop = (a & bb) ^ c;
        assert_eq!(reg_of(&w, 6, l), lop);
        assert_eq!((w.preds[0] >> l) & 1, u32::from(lop != 0));
        assert_eq!(reg_of(&w, 7, l), a.count_ones());
        assert_eq!(reg_of(&w, 8, l), if lop != 0 { bb } else { a });
    }
}

#[test]
fn every_lop3_truth_table() {
    let (a, bb, c) = (0xF0F0_1234u32, 0xCCCC_5678u32, 0xAAAA_9ABCu32);
    for lut in 0..=255u8 {
        let mut b = KernelBuilder::new();
        b.push(Op::Lop3 {
            dst: r(3),
            pred_out: Pred::PT,
            a: src(reg(0)),
            b: src(reg(1)),
            c: src(reg(2)),
            lut,
        })
        .exit();
        let world = World::new(8, 0);
        let (_, w) = run_kernel_masked(&b, &world, 1, |w| {
            set_reg(w, 0, 0, a);
            set_reg(w, 1, 0, bb);
            set_reg(w, 2, 0, c);
        });
        let mut expect = 0u32;
        for bit in 0..32 {
            let idx = ((a >> bit) & 1) << 2 | ((bb >> bit) & 1) << 1 | ((c >> bit) & 1);
            expect |= (((lut as u32) >> idx) & 1) << bit;
        }
        assert_eq!(reg_of(&w, 3, 0), expect, "lut {lut:#x}");
    }
}

#[test]
fn integer_division_never_traps_the_host() {
    let mut b = KernelBuilder::new();
    b.push(Op::Binary {
        op: BinOp::Div,
        ty: Ty::S32,
        dst: r(2),
        a: src(reg(0)),
        b: src(reg(1)),
        ftz: false,
    })
    .push(Op::Binary {
        op: BinOp::Rem,
        ty: Ty::S32,
        dst: r(3),
        a: src(reg(0)),
        b: src(reg(1)),
        ftz: false,
    })
    .push(Op::Binary {
        op: BinOp::Div,
        ty: Ty::U32,
        dst: r(4),
        a: src(reg(0)),
        b: src(reg(1)),
        ftz: false,
    })
    .push(Op::Binary {
        op: BinOp::Rem,
        ty: Ty::U32,
        dst: r(5),
        a: src(reg(0)),
        b: src(reg(1)),
        ftz: false,
    })
    .exit();
    let world = World::new(8, 0);
    let vals = [(7i32, 0i32), (i32::MIN, -1), (-7, 2), (7, -2), (0, 0)];
    let (_, w) = run_kernel_masked(&b, &world, 0x1f, |w| {
        for (l, &(a, bb)) in vals.iter().enumerate() {
            set_reg(w, 0, l, a as u32);
            set_reg(w, 1, l, bb as u32);
        }
    });
    for (l, &(a, bb)) in vals.iter().enumerate() {
        let sdiv = if bb == 0 { -1 } else { a.wrapping_div(bb) };
        let srem = if bb == 0 { a } else { a.wrapping_rem(bb) };
        let (ua, ub) = (a as u32, bb as u32);
        assert_eq!(reg_of(&w, 2, l), sdiv as u32);
        assert_eq!(reg_of(&w, 3, l), srem as u32);
        assert_eq!(reg_of(&w, 4, l), ua.checked_div(ub).unwrap_or(u32::MAX));
        assert_eq!(reg_of(&w, 5, l), if ub == 0 { ua } else { ua % ub });
    }
}

#[test]
fn conversions_fast_and_slow_paths_agree_with_the_exact_definition() {
    let cases: &[(Ty, Ty, Round)] = &[
        (Ty::F32, Ty::S32, Round::Nearest),
        (Ty::F32, Ty::U32, Round::Zero),
        (Ty::F32, Ty::S64, Round::Up),
        (Ty::S32, Ty::F32, Round::Nearest),
        (Ty::S32, Ty::F32, Round::Zero),
        (Ty::U32, Ty::F32, Round::Down),
        (Ty::S8, Ty::F32, Round::Up),
        (Ty::F64, Ty::F32, Round::Nearest),
        (Ty::F32, Ty::F64, Round::Nearest),
        (Ty::F32, Ty::F64, Round::Down),
        (Ty::F16, Ty::F32, Round::Nearest),
        (Ty::S16, Ty::U32, Round::Nearest),
    ];
    let inputs: [u64; 8] = [
        0,
        1,
        16_777_217,
        (-5i64) as u64,
        2.5f32.to_bits() as u64,
        (-1e10f32).to_bits() as u64,
        (1.0f64 / 3.0).to_bits(),
        f32::NAN.to_bits() as u64,
    ];
    for &(dst_ty, src_ty, round) in cases {
        let mut b = KernelBuilder::new();
        b.push(Op::Convert {
            dst_ty,
            src_ty,
            round,
            ftz: false,
            dst: r(4),
            a: src(reg(0)),
        })
        .exit();
        let world = World::new(8, 0);
        let (_, w) = run_kernel_masked(&b, &world, 0xff, |w| {
            for (l, &v) in inputs.iter().enumerate() {
                set_reg(w, 0, l, v as u32);
                set_reg(w, 1, l, (v >> 32) as u32);
            }
        });
        for (l, &v) in inputs.iter().enumerate() {
            let src_bits = if src_ty.regs() == 2 {
                v
            } else {
                v & 0xffff_ffff
            };
            let expect = crate::sem::convert::convert(dst_ty, src_ty, round, false, src_bits);
            let got = if dst_ty.regs() == 2 {
                reg_of(&w, 4, l) as u64 | (reg_of(&w, 5, l) as u64) << 32
            } else {
                reg_of(&w, 4, l) as u64
            };
            assert_eq!(got, expect, "{src_ty}->{dst_ty} {round:?} of {v:#x}");
        }
    }
}

#[test]
fn special_registers_and_vote() {
    let mut b = KernelBuilder::new();
    b.push(Op::ReadSpecial {
        dst: r(0),
        sr: SpecialReg::TidX,
    })
    .push(Op::ReadSpecial {
        dst: r(1),
        sr: SpecialReg::CtaIdX,
    })
    .push(Op::ReadSpecial {
        dst: r(2),
        sr: SpecialReg::NWarpId,
    })
    .push(Op::SetP {
        cmp: CmpOp::Ge,
        ty: Ty::U32,
        combine: BoolOp::And,
        dst: p(0),
        dst2: p(1),
        a: src(reg(0)),
        b: src(imm(40)),
        c: PredSrc::TRUE,
        chain: None,
    })
    .push(Op::Vote {
        mode: VoteMode::Any,
        dst: r(3),
        dst_pred: p(2),
        src: PredSrc {
            pred: p(0),
            negate: false,
        },
    })
    .push(Op::Vote {
        mode: VoteMode::All,
        dst: Reg::RZ,
        dst_pred: p(3),
        src: PredSrc {
            pred: p(0),
            negate: false,
        },
    })
    .exit();
    let (kernel, info) = b.build();
    let jit = compile(&kernel, &info).unwrap();
    let world = World::new(8, 0);
    let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 1, FULL);
    world.run(&kernel, &info, &jit, &mut warp, 0, FULL, None);
    for l in 0..32 {
        assert_eq!(reg_of(&warp, 0, l), 32 + l as u32);
        assert_eq!(reg_of(&warp, 1, l), 2);
        assert_eq!(reg_of(&warp, 2, l), 2);
        assert_eq!(reg_of(&warp, 3, l), 0xffff_ff00);
    }
    assert_eq!(warp.preds[0], 0xffff_ff00);
    assert_eq!(warp.preds[1], 0x0000_00ff);
    assert_eq!(warp.preds[2], FULL);
    assert_eq!(warp.preds[3], 0);
}

#[test]
fn narrow_loads_extend_and_stores_truncate() {
    let mut b = KernelBuilder::new();
    b.push(Op::Store {
        access: MemAccess {
            space: Space::Shared,
            ty: Ty::U32,
            vector: 1,
            order: MemOrder::Weak,
            scope: Scope::Cta,
            addr: Address::absolute(0),
        },
        src: imm(0x8081_f2f3),
    });
    for (i, ty) in [Ty::U8, Ty::S8, Ty::U16, Ty::S16].into_iter().enumerate() {
        b.push(Op::Load {
            access: MemAccess {
                space: Space::Shared,
                ty,
                vector: 1,
                order: MemOrder::Acquire,
                scope: Scope::Cta,
                addr: Address::absolute(2),
            },
            dst: r(i as u16),
        });
    }
    b.push(Op::Store {
        access: MemAccess {
            space: Space::Shared,
            ty: Ty::U8,
            vector: 1,
            order: MemOrder::Release,
            scope: Scope::Cta,
            addr: Address::absolute(5),
        },
        src: imm(0x1ff),
    })
    .push(Op::Store {
        access: MemAccess {
            space: Space::Shared,
            ty: Ty::U64,
            vector: 1,
            order: MemOrder::Relaxed,
            scope: Scope::Cta,
            addr: Address::absolute(8),
        },
        src: imm(0x0102_0304_0506_0708),
    })
    .push(Op::Load {
        access: MemAccess {
            space: Space::Shared,
            ty: Ty::U64,
            vector: 1,
            order: MemOrder::Volatile,
            scope: Scope::Sys,
            addr: Address::absolute(8),
        },
        dst: r(6),
    })
    .push(Op::Fence {
        order: MemOrder::SeqCst,
        scope: Scope::Gpu,
    })
    .push(Op::Fence {
        order: MemOrder::AcqRel,
        scope: Scope::Cta,
    })
    .exit();
    let world = World::new(8, 16);
    let (exit, w) = run_kernel_masked(&b, &world, 1, |_| {});
    assert_eq!(exit, GroupExit::Exited);
    assert_eq!(reg_of(&w, 0, 0), 0x81);
    assert_eq!(reg_of(&w, 1, 0), 0xffff_ff81);
    assert_eq!(reg_of(&w, 2, 0), 0x8081);
    assert_eq!(reg_of(&w, 3, 0), 0xffff_8081);
    assert_eq!(world.shared.region().load(4, 4), 0x0000_ff00);
    assert_eq!(
        (reg_of(&w, 6, 0), reg_of(&w, 7, 0)),
        (0x0506_0708, 0x0102_0304)
    );
}

#[test]
fn dump_clif_prints_the_function() {
    let mut b = KernelBuilder::new();
    b.atom(
        Space::Shared,
        AtomicOp::Inc,
        Ty::U32,
        r(2),
        Address::absolute(0),
        imm(7),
        None,
    )
    .exit();
    let (kernel, info) = b.build();
    let text = dump_clif(&kernel, &info).unwrap();
    assert!(text.contains("function"), "{text}");
    assert!(text.contains("br_table"), "{text}");
    // The shared window is CTA-private: a plain load and store, no host atomic.
    assert!(
        !text.contains("atomic_"),
        "shared INC is a plain RMW: {text}"
    );

    let mut b = KernelBuilder::new();
    b.atom(
        Space::Global,
        AtomicOp::Inc,
        Ty::U32,
        r(2),
        global_addr(4, 0),
        imm(7),
        None,
    )
    .exit();
    let (kernel, info) = b.build();
    let text = dump_clif(&kernel, &info).unwrap();
    assert!(
        text.contains("atomic_cas"),
        "global INC is a CAS loop: {text}"
    );
}

/// The compiler assumes what validation proved, so an invalid kernel cannot reach it: it has
/// no proof (validation rejects it), and another kernel's proof is refused.
#[test]
fn invalid_kernels_are_errors_not_crashes() {
    let mut b = KernelBuilder::new();
    b.push(Op::Mov {
        ty: Ty::U32,
        dst: r(500),
        src: imm(1),
    })
    .exit();
    let errors = crate::valid::validate(&b.kernel()).unwrap_err();
    assert_eq!(errors.0[0].pc, Some(0));
    let mut b = KernelBuilder::new();
    b.push(Op::Branch {
        target: 99,
        uniform: false,
    })
    .exit();
    assert!(crate::valid::validate(&b.kernel()).is_err());
    let mut b = KernelBuilder::new();
    b.atom(
        Space::Shared,
        AtomicOp::PreDec,
        Ty::U32,
        r(2),
        Address::absolute(0),
        imm(7),
        None,
    )
    .exit();
    let kernel = b.kernel();
    assert!(crate::valid::validate(&kernel).is_err());

    // A valid kernel's proof does not admit another kernel.
    let mut b = KernelBuilder::new();
    b.push(Op::Nop).exit();
    let (_, info) = b.build();
    assert!(matches!(
        compile(&kernel, &info),
        Err(JitError::NotValidated { .. })
    ));
    assert!(matches!(
        dump_clif(&kernel, &info),
        Err(JitError::NotValidated { .. })
    ));
}

#[test]
fn counters_accumulate_across_calls() {
    let mut b = KernelBuilder::new();
    b.atom(
        Space::Shared,
        AtomicOp::Add,
        Ty::U32,
        r(2),
        Address::absolute(0),
        imm(1),
        None,
    )
    .exit();
    let (kernel, info) = b.build();
    let jit = compile(&kernel, &info).unwrap();
    let world = World::new(8, 8);
    let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
    warp.stats = Stats {
        warp_insts: 10,
        ..Stats::default()
    };
    world.run(&kernel, &info, &jit, &mut warp, 0, 0xff, None);
    assert_eq!(warp.stats.warp_insts, 12);
    assert_eq!(warp.stats.atomics[AtomicOp::Add.index()], 8);
}

/// A straight-line kernel shaped like `programs/sass/atomics_edges.s`: per case a MOV, STS,
/// MOV, ATOMS, LDS and two STG.
fn edges_like_kernel(cases: usize) -> KernelBuilder {
    let ops = [
        AtomicOp::Add,
        AtomicOp::Min,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::Exch,
        AtomicOp::Cas,
        AtomicOp::Cast,
    ];
    let mut b = KernelBuilder::new();
    b.push(Op::Mov {
        ty: Ty::U64,
        dst: r(20),
        src: Operand::Const {
            bank: 0,
            offset: 0x160,
        },
    });
    for i in 0..cases {
        let op = ops[i % ops.len()];
        let cas = matches!(op, AtomicOp::Cas | AtomicOp::Cast);
        b.push(Op::Mov {
            ty: Ty::U32,
            dst: r(2),
            src: imm(i as u64),
        })
        .push(Op::Store {
            access: MemAccess {
                space: Space::Shared,
                ty: Ty::U32,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Cta,
                addr: Address::absolute(8),
            },
            src: reg(2),
        })
        .push(Op::Mov {
            ty: Ty::U32,
            dst: r(8),
            src: imm(7),
        })
        .atom(
            Space::Shared,
            op,
            Ty::U32,
            r(4),
            shared_addr(30, -8),
            reg(8),
            if cas { Some(reg(9)) } else { None },
        )
        .push(Op::Load {
            access: MemAccess {
                space: Space::Shared,
                ty: Ty::U32,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Cta,
                addr: Address::absolute(8),
            },
            dst: r(6),
        })
        .push(Op::Store {
            access: MemAccess {
                space: Space::Global,
                ty: Ty::U32,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Cta,
                addr: global_addr(20, 8 * i as i64),
            },
            src: reg(4),
        })
        .push(Op::Store {
            access: MemAccess {
                space: Space::Global,
                ty: Ty::U32,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Cta,
                addr: global_addr(20, 8 * i as i64 + 4),
            },
            src: reg(6),
        });
    }
    b.exit();
    b
}

/// Cold compile times (run with `cargo test --lib compile_time -- --ignored --nocapture`).
#[test]
#[ignore]
fn compile_time_report() {
    for cases in [1usize, 8, 64] {
        let (kernel, info) = edges_like_kernel(cases).build();
        let _ = compile(&kernel, &info).unwrap();
        let mut best = std::time::Duration::MAX;
        for _ in 0..5 {
            let t = std::time::Instant::now();
            let k = compile(&kernel, &info).unwrap();
            best = best.min(t.elapsed());
            drop(k);
        }
        println!("{} instructions: {:?}", kernel.insts.len(), best);
        let _ = cranelift_codegen::timing::take_current();
        let _ = compile(&kernel, &info).unwrap();
        println!("{}", cranelift_codegen::timing::take_current());
    }
}

#[test]
fn a_long_straight_line_kernel_runs() {
    let b = edges_like_kernel(16);
    let world = World::new(16 * 8, 16);
    let (exit, w) = run_kernel_masked(&b, &world, 1, |w| set_reg(w, 30, 0, 16));
    assert_eq!(exit, GroupExit::Exited);
    assert_eq!(w.stats.warp_insts, 16 * 7 + 2);
    // Case 0 is ADD: M = 0 + 7, Rd = 0.
    assert_eq!((world.global_u32(0), world.global_u32(4)), (0, 7));
    // Case 2 is INC with M = 2, Rb = 7: M = 3.
    assert_eq!((world.global_u32(16), world.global_u32(20)), (2, 3));
}

#[test]
#[ignore]
fn print_clif_of_edges_kernel() {
    let (kernel, info) = edges_like_kernel(1).build();
    println!("{}", dump_clif(&kernel, &info).unwrap());
}

// ---- PTX semantics: one-word shift amounts, float division, generic FTZ, 16-bit atomics ----

#[test]
fn sixty_four_bit_shift_amounts_are_one_word() {
    // IR contract: a shift amount is one 32-bit word; R5 (after the amount R4) is garbage.
    let mut b = KernelBuilder::new();
    b.push(Op::Binary {
        op: BinOp::Shl,
        ty: Ty::B64,
        dst: r(0),
        a: src(reg(2)),
        b: src(reg(4)),
        ftz: false,
    })
    .push(Op::Binary {
        op: BinOp::Shr,
        ty: Ty::S64,
        dst: r(6),
        a: src(reg(2)),
        b: src(reg(4)),
        ftz: false,
    })
    .exit();
    let world = World::new(64, 0);
    let (_, w) = run_kernel_masked(&b, &world, 0b11, |w| {
        // lane 0: x = 0x8000_0000_0000_0003, amount 4; lane 1: x = 1, amount 64 (clamped).
        set_reg(w, 2, 0, 3);
        set_reg(w, 3, 0, 0x8000_0000);
        set_reg(w, 4, 0, 4);
        set_reg(w, 5, 0, 0xdead_beef);
        set_reg(w, 2, 1, 1);
        set_reg(w, 4, 1, 64);
    });
    let pair = |r: u16, lane: usize| {
        u64::from(reg_of(&w, r, lane)) | u64::from(reg_of(&w, r + 1, lane)) << 32
    };
    assert_eq!(pair(0, 0), 0x30);
    assert_eq!(pair(6, 0), 0xf800_0000_0000_0000);
    assert_eq!((pair(0, 1), pair(6, 1)), (0, 0));
}

#[test]
fn float_division_matches_ieee() {
    let mut b = KernelBuilder::new();
    b.push(Op::Binary {
        op: BinOp::Div,
        ty: Ty::F32,
        dst: r(0),
        a: src(reg(1)),
        b: src(reg(2)),
        ftz: false,
    })
    .exit();
    let cases = [
        (1.0f32, 3.0f32),
        (-7.5, 2.0),
        (1.0, 0.0),
        (0.0, 0.0),
        (f32::from_bits(1), 2.0),
    ];
    let world = World::new(64, 0);
    let (_, w) = run_kernel_masked(&b, &world, (1 << cases.len()) - 1, |w| {
        for (lane, (x, y)) in cases.iter().enumerate() {
            set_reg(w, 1, lane, x.to_bits());
            set_reg(w, 2, lane, y.to_bits());
        }
    });
    for (lane, (x, y)) in cases.iter().enumerate() {
        let q = x / y;
        let want = if q.is_nan() { 0x7fff_ffff } else { q.to_bits() };
        assert_eq!(reg_of(&w, 0, lane), want, "{x:e} / {y:e}");
    }
}

#[test]
fn generic_float_add_flushes_only_on_global_addresses() {
    use crate::ir::GENERIC_SHARED_BASE;
    let mut b = KernelBuilder::new();
    b.push(Op::Atomic(Box::new(AtomicInst {
        access: MemAccess {
            space: Space::Generic,
            ty: Ty::F32,
            vector: 1,
            order: MemOrder::Relaxed,
            scope: Scope::Gpu,
            addr: global_addr(2, 0),
        },
        op: AtomicOp::Add,
        dst: r(0),
        src: reg(4),
        src2: None,
        spin: false,
        ftz: true,
        performed: Pred::PT,
    })))
    .exit();
    let world = World::new(64, 64);
    let (exit, _) = run_kernel_masked(&b, &world, 0b11, |w| {
        let (g, s) = (GLOBAL_BASE + 8, GENERIC_SHARED_BASE + 8);
        for (lane, a) in [(0, g), (1, s)] {
            set_reg(w, 2, lane, a as u32);
            set_reg(w, 3, lane, (a >> 32) as u32);
            set_reg(w, 4, lane, 1); // the smallest subnormal
        }
    });
    assert_eq!(exit, GroupExit::Exited);
    assert_eq!(world.global_u32(8), 0, "global: flushed");
    assert_eq!(world.shared_u32(8), 1, "shared: kept");
}

#[test]
fn sixteen_bit_and_packed_half_atomics_follow_the_interpreter_definition() {
    // f16 1.0 + 0.5, bf16 1.0 + 2.0, f16x2 (1.0, 2.0) + (0.5, 2^-24), b16 cas hit and miss.
    let mut b = KernelBuilder::new();
    let g = |off| global_addr(2, off);
    b.atom(
        Space::Global,
        AtomicOp::Add,
        Ty::F16,
        r(10),
        g(0),
        imm(0x3800),
        None,
    )
    .atom(
        Space::Global,
        AtomicOp::Add,
        Ty::BF16,
        r(11),
        g(2),
        imm(0x4000),
        None,
    )
    .atom(
        Space::Global,
        AtomicOp::Add,
        Ty::F16x2,
        r(12),
        g(4),
        imm(0x0001_3800),
        None,
    )
    .atom(
        Space::Global,
        AtomicOp::Cas,
        Ty::B16,
        r(13),
        g(8),
        imm(0x1234),
        Some(imm(0xbeef)),
    )
    .atom(
        Space::Global,
        AtomicOp::Cas,
        Ty::B16,
        r(14),
        g(10),
        imm(0x5554),
        Some(imm(0)),
    )
    .exit();
    let world = World::new(64, 0);
    world.set_global(0, 2, 0x3c00);
    world.set_global(2, 2, 0x3f80);
    world.set_global(4, 4, 0x4000_3c00);
    world.set_global(8, 2, 0x1234);
    world.set_global(10, 2, 0x5555);
    let (exit, w) = run_kernel_masked(&b, &world, 1, |w| {
        set_reg(w, 2, 0, GLOBAL_BASE as u32);
        set_reg(w, 3, 0, (GLOBAL_BASE >> 32) as u32);
    });
    assert_eq!(exit, GroupExit::Exited);
    let half = |off: usize| world.global.region().load(off, 2);
    assert_eq!(
        (half(0), half(2), world.global_u32(4), half(8), half(10)),
        (0x3e00, 0x4040, 0x4000_3e00, 0xbeef, 0x5555)
    );
    let olds: Vec<u32> = (10..15).map(|r| reg_of(&w, r, 0)).collect();
    assert_eq!(olds, [0x3c00, 0x3f80, 0x4000_3c00, 0x1234, 0x5555]);
    // Misaligned f16x2 (2-byte aligned, 4-byte access) traps.
    let mut b = KernelBuilder::new();
    b.atom(
        Space::Global,
        AtomicOp::Add,
        Ty::F16x2,
        r(0),
        global_addr(2, 2),
        imm(0),
        None,
    )
    .exit();
    let (exit, _) = run_kernel_masked(&b, &world, 1, |w| {
        set_reg(w, 2, 0, GLOBAL_BASE as u32);
        set_reg(w, 3, 0, (GLOBAL_BASE >> 32) as u32);
    });
    match exit {
        GroupExit::Trap(t) => assert_eq!(
            (t.reason, t.address),
            (TrapReason::MisalignedAddress, GLOBAL_BASE + 2)
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_rotated_compare_accepts_exactly_the_aligned_in_range_accesses() {
    let lens = (0..48u64).chain([1 << 20, (1 << 20) + 3, (1 << 40) - 1, 1 << 47]);
    for len in lens {
        for size in [1u32, 2, 4, 8, 16] {
            let offsets = (0..64u64).chain([
                len.wrapping_sub(9),
                len.wrapping_sub(8),
                len.wrapping_sub(size.into()),
                len.wrapping_sub(1),
                len,
                u64::MAX,
                u64::MAX - 7,
                1 << 63,
                (1 << 63) + u64::from(size),
            ]);
            for offset in offsets {
                let want = offset % u64::from(size) == 0
                    && offset
                        .checked_add(size.into())
                        .is_some_and(|end| end <= len);
                assert_eq!(
                    warp_ctx::passes_check(offset, size, len),
                    want,
                    "offset {offset:#x}, size {size}, len {len:#x}"
                );
            }
        }
    }
}

#[test]
fn long_kernels_split_into_chunks_at_resume_points() {
    // 0..=9: NOP ×10 (straight line), 10: BRA 13, 11–12: NOP, 13: EXIT.
    let mut b = KernelBuilder::new();
    for _ in 0..10 {
        b.push(Op::Nop);
    }
    b.push(Op::Branch {
        target: 13,
        uniform: true,
    })
    .push(Op::Nop)
    .push(Op::Nop)
    .exit();
    let (kernel, info) = b.build();
    // Chunks of 3: the straight line has no resume point, so one is forced after twice the
    // chunk size (6); then 11 (after the branch) and 13 (its target) are resume points at
    // least 3 instructions on.
    let plan = plan_of(&kernel, &info, 3);
    assert_eq!(plan.starts, vec![0, 6, 11]);
    assert!(plan.resume[6] && plan.resume[11] && plan.resume[13]);
    assert_eq!(plan.range(1, kernel.insts.len()), 6..11);
    assert_eq!(plan.range(2, kernel.insts.len()), 11..14);
    // One chunk when the kernel fits.
    assert_eq!(plan_of(&kernel, &info, 1024).starts, vec![0]);
    // Run in chunks of 1: every instruction boundary crosses functions, and the group still
    // runs to its exit in one `run_group` call with every instruction counted once.
    let jit = compile_chunked(&kernel, &info, 1).unwrap();
    let world = World::new(8, 0);
    let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
    assert_eq!(
        world.run(&kernel, &info, &jit, &mut warp, 0, FULL, None),
        GroupExit::Exited
    );
    assert_eq!(warp.stats.warp_insts, 12, "10 NOPs, the branch, the exit");
}

#[test]
fn chunks_compiled_on_several_threads_get_the_sequential_code_and_results() {
    // 40 additions (some with a carry, so the chunks differ), then a branch and an exit, in
    // chunks of 4: about a dozen functions for three threads to share.
    let mut b = KernelBuilder::new();
    for i in 0..40u16 {
        b.push(Op::IAdd3 {
            dst: r(i % 5),
            carry_out: [p(i % 2), Pred::PT],
            a: src(reg((i + 1) % 5)),
            b: src(imm(u64::from(i) * 7 + 1)),
            c: src(reg((i + 3) % 5)),
            carry_in: [PredSrc::FALSE, PredSrc::FALSE],
        });
    }
    b.exit();
    let (kernel, info) = b.build();
    let isa = host_isa().unwrap();
    let plan = plan_of(&kernel, &info, 4);
    assert!(plan.starts.len() > 3, "{:?}", plan.starts);
    let code = |threads| {
        let mut tables = SideTables::default();
        let funcs = build_functions(&kernel, &info, &isa, &mut tables, &plan).unwrap();
        let funcs = funcs
            .into_iter()
            .enumerate()
            .map(|(i, f)| (f, cranelift_module::FuncId::from_u32(i as u32)))
            .collect();
        codegen_all(&isa, funcs, &kernel.name, threads)
            .unwrap()
            .into_iter()
            .map(|c| (c.alignment, c.bytes))
            .collect::<Vec<_>>()
    };
    let sequential = code(1);
    assert_eq!(sequential.len(), plan.starts.len());
    assert_eq!(code(3), sequential, "the same bytes, in chunk order");
    // And the compiled kernels run alike.
    let world = World::new(8, 0);
    let mut warps = Vec::new();
    for threads in [1, 3] {
        let jit = compile_chunked_on(&kernel, &info, 4, threads).unwrap();
        let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
        for lane in 0..32 {
            warp.regs[lane] = lane as u32 * 0x0100_0001;
        }
        assert_eq!(
            world.run(&kernel, &info, &jit, &mut warp, 0, FULL, None),
            GroupExit::Exited
        );
        warps.push((warp.regs.clone(), warp.preds.clone(), warp.stats.warp_insts));
    }
    assert_eq!(warps[0], warps[1]);
    assert_eq!(warps[0].2, 41);
}

// ---- issue 10: warp-collective ops, bit fields, fma, plop3, lane masks, uniform registers ----

impl World {
    /// Runs a whole warp of `kernel` on `runner` from pc 0 with lanes `mask` until every group
    /// exits, following divergence as the deterministic scheduler does (the fall-through side
    /// first, each side up to the branch's reconvergence point, then the lanes that did not
    /// exit continue there together) and backward branches (`Yield`).
    #[allow(clippy::too_many_arguments)]
    fn run_warp(
        &self,
        kernel: &Kernel,
        info: &KernelInfo,
        runner: &dyn WarpRunner,
        warp: &mut WarpState,
        pc: u32,
        mask: u32,
        stop: Option<u32>,
    ) -> GroupExit {
        let env = CtaEnv {
            kernel,
            info,
            global: &self.global,
            shared: &self.shared,
            cbank: &self.cbank,
            surfaces: &[],
            ctaid: [2, 0, 0],
            ntid: [64, 1, 1],
            nctaid: [4, 1, 1],
        };
        let (mut pc, mut mask) = (pc, mask);
        loop {
            match runner.run_group(warp, &env, pc, mask, stop) {
                GroupExit::Diverge(Split {
                    branch_pc,
                    taken_pc,
                    taken,
                    fall_pc,
                    fall,
                }) => {
                    let join = info.reconverge()[branch_pc as usize];
                    for (side_pc, side) in [(fall_pc, fall), (taken_pc, taken)] {
                        match self.run_warp(kernel, info, runner, warp, side_pc, side, join) {
                            GroupExit::Reconverge { .. } | GroupExit::Exited => {}
                            other => {
                                panic!("a side of the branch at {branch_pc} ended with {other:?}")
                            }
                        }
                    }
                    let Some(j) = join else {
                        return GroupExit::Exited;
                    };
                    (pc, mask) = (j, (fall | taken) & !warp.exited);
                    if mask == 0 {
                        return GroupExit::Exited;
                    }
                }
                GroupExit::Yield { pc: p, mask: m } => (pc, mask) = (p, m),
                other => return other,
            }
        }
    }
}

/// Runs `b` to the end on a full-or-partial warp (`mask`) with the JIT and with the reference
/// interpreter from the same initial warp (`init`), asserts that both end in the same state
/// (registers, predicates, exited lanes, instruction count), and returns it.
fn run_both(b: &KernelBuilder, mask: u32, init: impl Fn(&mut WarpState)) -> WarpState {
    let (kernel, info) = b.build();
    let jit = compile(&kernel, &info).unwrap_or_else(|e| panic!("{e}"));
    let interp = crate::interp::Interpreter::new();
    let mut warps = Vec::new();
    for runner in [&jit as &dyn WarpRunner, &interp] {
        let world = World::new(8, 0);
        let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
        init(&mut warp);
        let exit = world.run_warp(&kernel, &info, runner, &mut warp, 0, mask, None);
        assert_eq!(exit, GroupExit::Exited);
        warps.push(warp);
    }
    let (jit_warp, interp_warp) = (&warps[0], &warps[1]);
    for reg in 0..kernel.num_regs as u16 {
        for lane in 0..32 {
            assert_eq!(
                reg_of(jit_warp, reg, lane),
                reg_of(interp_warp, reg, lane),
                "R{reg} of lane {lane}: jit vs interpreter"
            );
        }
    }
    assert_eq!(
        jit_warp.preds, interp_warp.preds,
        "predicates: jit vs interpreter"
    );
    assert_eq!(jit_warp.exited, interp_warp.exited);
    assert_eq!(jit_warp.stats, interp_warp.stats);
    warps.swap_remove(0)
}

fn shfl(mode: ShflMode, dst: u16, dst_pred: Pred, a: u16, b: Operand, c: u64) -> Op {
    Op::Shfl {
        mode,
        dst: r(dst),
        dst_pred,
        a: reg(a),
        b: src(b),
        c: src(imm(c)),
    }
}

#[test]
fn shfl_follows_the_ptx_source_lane_rule_with_segments_and_clamps() {
    // R1 = 1000 + lane, R20 = 3 * lane (a per-lane source index).
    let init = |w: &mut WarpState| {
        for l in 0..32 {
            set_reg(w, 1, l, 1000 + l as u32);
            set_reg(w, 20, l, 3 * l as u32);
        }
    };
    // (mode, b, c) of each SHFL, written to R2.., validity to P0..P3 for the first four.
    let cases: [(ShflMode, Operand, u64); 10] = [
        (ShflMode::Idx, imm(17), 0x1f),
        (ShflMode::Up, imm(1), 0),
        (ShflMode::Down, imm(2), 0x181f),
        (ShflMode::Bfly, imm(4), 0x101f),
        (ShflMode::Up, imm(2), 0x1800),
        (ShflMode::Idx, reg(20), 0x181f),
        (ShflMode::Idx, imm(40), 0x1f),
        (ShflMode::Down, imm(1), 0),
        (ShflMode::Down, imm(3), 0x1f),
        (ShflMode::Bfly, reg(20), 0x1f),
    ];
    let mut b = KernelBuilder::new();
    for (i, &(mode, bv, c)) in cases.iter().enumerate() {
        let pred = if i < 4 { p(i as u16) } else { Pred::PT };
        b.push(shfl(mode, 2 + i as u16, pred, 1, bv, c));
    }
    // The destination is the source: every lane reads its partner's value from before.
    b.push(shfl(ShflMode::Bfly, 1, Pred::PT, 1, imm(1), 0x1f));
    b.exit();
    for mask in [FULL, 0x0000_ffff, 0x8000_0001, 0x00f0_0f00] {
        let w = run_both(&b, mask, init);
        for (i, &(mode, bv, c)) in cases.iter().enumerate() {
            for lane in 0..32u32 {
                let got = reg_of(&w, 2 + i as u16, lane as usize);
                if mask >> lane & 1 == 0 {
                    assert_eq!(got, 0, "case {i}: lane {lane} does not execute");
                    continue;
                }
                let bval = match bv {
                    Operand::Imm(v) => v as u32,
                    _ => 3 * lane,
                };
                let (j, valid) = crate::sem::warp::shfl_source(mode, lane, bval, c as u32);
                // Lane j's register whether or not lane j executes.
                assert_eq!(got, 1000 + j, "case {i} ({mode:?}), lane {lane}");
                if i < 4 {
                    assert_eq!(w.preds[i] >> lane & 1 == 1, valid, "case {i}, lane {lane}");
                }
            }
            if i < 4 {
                assert_eq!(
                    w.preds[i] & !mask,
                    0,
                    "case {i}: only executing lanes get a bit"
                );
            }
        }
        for lane in 0..32usize {
            let want = if mask >> lane & 1 == 1 {
                1000 + (lane as u32 ^ 1)
            } else {
                1000 + lane as u32
            };
            assert_eq!(reg_of(&w, 1, lane), want, "in-place shuffle, lane {lane}");
        }
    }
    // Spot values straight from the PTX pseudo-code, full warp.
    let w = run_both(&b, FULL, init);
    assert_eq!(reg_of(&w, 2, 5), 1017); // idx 17
    assert_eq!(reg_of(&w, 3, 0), 1000); // up 1: lane 0 is out of range, keeps its own
    assert_eq!(w.preds[1] & 1, 0);
    assert_eq!(reg_of(&w, 3, 9), 1008);
    assert_eq!(reg_of(&w, 4, 13), 1015); // down 2, width 8: 13 -> 15 inside segment 8..16
    assert_eq!(reg_of(&w, 4, 14), 1014); // 14 -> 16 leaves the segment
    assert_eq!(w.preds[2] >> 14 & 1, 0);
    assert_eq!(reg_of(&w, 5, 3), 1007); // bfly 4 within 16
    assert_eq!(reg_of(&w, 6, 8), 1008); // up 2, width 8: lane 8 -> 6 is below its segment
    assert_eq!(reg_of(&w, 6, 10), 1008);
    assert_eq!(reg_of(&w, 8, 5), 1008); // idx 40 = idx 8
    assert_eq!(reg_of(&w, 9, 0), 1000); // down 1 with clamp 0: nothing is in range
    assert_eq!(reg_of(&w, 9, 1), 1001);
    assert_eq!(reg_of(&w, 10, 28), 1031);
    assert_eq!(reg_of(&w, 10, 29), 1029); // down 3 past lane 31
}

#[test]
fn redux_folds_the_executing_lanes_with_signedness() {
    let value = |l: u32| -> u32 {
        match l % 5 {
            0 => (-5i32 - l as i32) as u32,
            1 => 0x8000_0000 | l,
            2 => 7 + l,
            3 => 0x7fff_fff0 + l,
            _ => l * 0x0101_0101,
        }
    };
    let init = |w: &mut WarpState| {
        for l in 0..32 {
            set_reg(w, 1, l, value(l as u32));
        }
    };
    let ops: [(BinOp, Ty); 9] = [
        (BinOp::Add, Ty::U32),
        (BinOp::Min, Ty::S32),
        (BinOp::Min, Ty::U32),
        (BinOp::Max, Ty::S32),
        (BinOp::Max, Ty::U32),
        (BinOp::And, Ty::B32),
        (BinOp::Or, Ty::B32),
        (BinOp::Xor, Ty::B32),
        (BinOp::Max, Ty::B32),
    ];
    let mut b = KernelBuilder::new();
    for (i, &(op, ty)) in ops.iter().enumerate() {
        b.push(Op::Redux {
            op,
            ty,
            dst: r(2 + i as u16),
            src: reg(1),
        });
    }
    // In place: every lane still contributes its own value from before.
    b.push(Op::Redux {
        op: BinOp::Add,
        ty: Ty::U32,
        dst: r(1),
        src: reg(1),
    });
    b.exit();
    for mask in [FULL, 0x8000_0013, 0x0000_0002, 0x0f0f_0000] {
        let w = run_both(&b, mask, init);
        let lanes: Vec<u32> = (0..32).filter(|l| mask >> l & 1 == 1).collect();
        let vals = lanes.iter().map(|&l| value(l));
        let sum = vals.clone().fold(0u32, u32::wrapping_add);
        let want = [
            sum,
            vals.clone().map(|v| v as i32).min().unwrap() as u32,
            vals.clone().min().unwrap(),
            vals.clone().map(|v| v as i32).max().unwrap() as u32,
            vals.clone().max().unwrap(),
            vals.clone().fold(u32::MAX, |a, v| a & v),
            vals.clone().fold(0, |a, v| a | v),
            vals.clone().fold(0, |a, v| a ^ v),
            vals.clone().max().unwrap(),
        ];
        for lane in 0..32u32 {
            let on = mask >> lane & 1 == 1;
            for (i, &w_i) in want.iter().enumerate() {
                let got = reg_of(&w, 2 + i as u16, lane as usize);
                assert_eq!(
                    got,
                    if on { w_i } else { 0 },
                    "op {i}, mask {mask:#x}, lane {lane}"
                );
            }
            let own = value(lane);
            assert_eq!(reg_of(&w, 1, lane as usize), if on { sum } else { own });
        }
    }
}

#[test]
fn match_any_and_all_compare_whole_64_bit_values() {
    // R2:R3 = (lane % 4) | (lane / 16) << 32: equal low words, different high words.
    let init = |w: &mut WarpState| {
        for l in 0..32 {
            set_reg(w, 2, l, l as u32 % 4);
            set_reg(w, 3, l, l as u32 / 16);
        }
    };
    let mut b = KernelBuilder::new();
    for (i, (all, ty)) in [
        (false, Ty::B64),
        (true, Ty::B64),
        (false, Ty::B32),
        (true, Ty::U32),
    ]
    .into_iter()
    .enumerate()
    {
        b.push(Op::Match {
            all,
            ty,
            dst: r(4 + i as u16),
            dst_pred: p(i as u16),
            src: reg(2),
        });
    }
    // In place (32-bit): the mask replaces the value it compared.
    b.push(Op::Match {
        all: false,
        ty: Ty::B32,
        dst: r(2),
        dst_pred: Pred::PT,
        src: reg(2),
    });
    b.exit();
    for mask in [FULL, 0x0001_0001, 0x0000_0111, 0x1111_1111, 0x8000_0000] {
        let w = run_both(&b, mask, init);
        let key64 = |l: u32| (l % 4, l / 16);
        let on = |l: u32| mask >> l & 1 == 1;
        let group = |same: &dyn Fn(u32) -> bool| {
            (0..32)
                .filter(|&l| on(l) && same(l))
                .fold(0u32, |m, l| m | 1 << l)
        };
        let all64 = (0..32)
            .filter(|&l| on(l))
            .all(|l| key64(l) == key64(mask.trailing_zeros()));
        let all32 = (0..32)
            .filter(|&l| on(l))
            .all(|l| l % 4 == mask.trailing_zeros() % 4);
        for lane in 0..32u32 {
            let l = lane as usize;
            if !on(lane) {
                for i in 0..4 {
                    assert_eq!(reg_of(&w, 4 + i, l), 0);
                }
                continue;
            }
            let any64 = group(&|o| key64(o) == key64(lane));
            let any32 = group(&|o| o % 4 == lane % 4);
            assert_eq!(
                reg_of(&w, 4, l),
                any64,
                "any.b64 mask {mask:#x} lane {lane}"
            );
            assert_eq!(reg_of(&w, 5, l), if all64 { mask } else { 0 }, "all.b64");
            assert_eq!(reg_of(&w, 6, l), any32, "any.b32");
            assert_eq!(reg_of(&w, 7, l), if all32 { mask } else { 0 }, "all.b32");
            assert_eq!(reg_of(&w, 2, l), any32, "in-place any.b32");
            assert_eq!(w.preds[0] >> lane & 1, 1, "any sets its predicate");
            assert_eq!(w.preds[1] >> lane & 1 == 1, all64);
            assert_eq!(w.preds[3] >> lane & 1 == 1, all32);
        }
    }
    // Lanes 0 and 16: same low word, different high word.
    let w = run_both(&b, 0x0001_0001, init);
    assert_eq!(reg_of(&w, 4, 0), 0x1);
    assert_eq!(reg_of(&w, 5, 0), 0);
    assert_eq!(w.preds[1] & 1, 0);
    assert_eq!(reg_of(&w, 6, 16), 0x0001_0001);
    assert_eq!(reg_of(&w, 7, 16), 0x0001_0001);
}

/// Per-lane cases for a one-instruction test: sets `regs[i]` of lane `l` to `cases[l][i]`.
fn set_cases<const N: usize>(w: &mut WarpState, regs: [u16; N], cases: &[[u32; N]]) {
    for (l, case) in cases.iter().enumerate().take(32) {
        for (i, &rg) in regs.iter().enumerate() {
            set_reg(w, rg, l, case[i]);
        }
    }
}

#[test]
fn prmt_with_constant_and_register_selectors() {
    // Lane l: a = R1, b = R2, sel = R3.
    let mut cases: Vec<[u32; 3]> = vec![
        [0x0302_0100, 0x0706_0504, 0x7531],
        [0x0302_0100, 0x0706_0504, 0x3210],
        [0x0302_0100, 0x0706_0504, 0x4444],
        [0x0000_0080, 0, 0x8880],
        [0x0000_007f, 0, 0x0008],
        [0x0302_0100, 0x0706_0504, 0xffff_3210],
        [0x80ff_7f01, 0xfe00_8081, 0xfedc],
        [0x80ff_7f01, 0xfe00_8081, 0xba98],
    ];
    let mut rng = crate::exec::random::SplitMix64::new(10);
    while cases.len() < 32 {
        let v = rng.next();
        cases.push([v as u32, (v >> 32) as u32, rng.next() as u32]);
    }
    let mut b = KernelBuilder::new();
    b.push(Op::Prmt {
        dst: r(4),
        a: src(reg(1)),
        b: src(reg(2)),
        sel: src(reg(3)),
    });
    // Constant selectors (compiled byte by byte), one per instruction.
    let constants = [0x7531u64, 0x8880, 0x0008, 0xba98, 0x4f3c];
    for (i, &c) in constants.iter().enumerate() {
        b.push(Op::Prmt {
            dst: r(5 + i as u16),
            a: src(reg(1)),
            b: src(reg(2)),
            sel: src(imm(c)),
        });
    }
    b.exit();
    let w = run_both(&b, FULL, |w| set_cases(w, [1, 2, 3], &cases));
    for (l, &[a, bv, sel]) in cases.iter().enumerate() {
        assert_eq!(
            reg_of(&w, 4, l),
            crate::sem::alu::prmt(a, bv, sel),
            "lane {l}"
        );
        for (i, &c) in constants.iter().enumerate() {
            let got = reg_of(&w, 5 + i as u16, l);
            assert_eq!(
                got,
                crate::sem::alu::prmt(a, bv, c as u32),
                "lane {l}, sel {c:#x}"
            );
        }
    }
    // The PTX ISA's examples: bytes {b, a} = {7..4, 3..0}; bit 3 replicates the sign.
    assert_eq!(reg_of(&w, 4, 0), 0x0705_0301);
    assert_eq!(reg_of(&w, 4, 2), 0x0404_0404);
    assert_eq!(reg_of(&w, 4, 3), 0xffff_ff80);
    assert_eq!(reg_of(&w, 4, 4), 0x7f7f_7f00);
    assert_eq!(reg_of(&w, 4, 5), 0x0302_0100);
    // 0x80ff7f01 / 0xfe008081 with sel 0xfedc: bytes 4, 5, 6, 7 (0x81, 0x80, 0x00, 0xfe)
    // sign-replicated.
    assert_eq!(reg_of(&w, 4, 6), 0xff00_ffff);
}

/// Bit-field positions and lengths worth testing: 0, the width's edges, past the width, and
/// values whose bits above 7:0 must be ignored.
const FIELD_EDGES: [u32; 14] = [0, 1, 7, 8, 31, 32, 33, 40, 63, 64, 65, 255, 256, 0x108];

#[test]
fn bfe_and_bfi_past_the_width_and_with_len_zero() {
    let values: [u64; 4] = [
        0xabcd_1234_8765_f00d,
        0x8000_0000_8000_0000,
        0x7fff_ffff_ffff_ffff,
        0x0000_0000_f000_0000,
    ];
    let mut rng = crate::exec::random::SplitMix64::new(77);
    for round in 0..8 {
        // Lane l: a = R0:R1, insert = R2:R3, pos = R4, len = R5.
        let cases: Vec<[u32; 6]> = (0..32)
            .map(|l| {
                let a = values[(l + round) % 4] ^ if round > 3 { rng.next() } else { 0 };
                let ins = rng.next();
                let pos = FIELD_EDGES[(l + 3 * round) % FIELD_EDGES.len()];
                let len = FIELD_EDGES[(l / 2 + round) % FIELD_EDGES.len()];
                [
                    a as u32,
                    (a >> 32) as u32,
                    ins as u32,
                    (ins >> 32) as u32,
                    pos,
                    len,
                ]
            })
            .collect();
        let mut b = KernelBuilder::new();
        let tys = [Ty::U32, Ty::S32, Ty::U64, Ty::S64];
        for (i, &ty) in tys.iter().enumerate() {
            b.push(Op::Bfe {
                ty,
                dst: r(6 + 2 * i as u16),
                a: src(reg(0)),
                pos: src(reg(4)),
                len: src(reg(5)),
            });
        }
        for (i, &ty) in [Ty::B32, Ty::B64].iter().enumerate() {
            b.push(Op::Bfi {
                ty,
                dst: r(14 + 2 * i as u16),
                insert: src(reg(2)),
                base: src(reg(0)),
                pos: src(reg(4)),
                len: src(reg(5)),
            });
        }
        b.exit();
        let w = run_both(&b, FULL, |w| set_cases(w, [0, 1, 2, 3, 4, 5], &cases));
        let pair = |rg: u16, l: usize| {
            u64::from(reg_of(&w, rg, l)) | u64::from(reg_of(&w, rg + 1, l)) << 32
        };
        for (l, c) in cases.iter().enumerate() {
            let a = u64::from(c[0]) | u64::from(c[1]) << 32;
            let ins = u64::from(c[2]) | u64::from(c[3]) << 32;
            let (pos, len) = (c[4], c[5]);
            for (i, &ty) in tys.iter().enumerate() {
                let want = crate::sem::alu::bfe(ty, a, pos, len);
                let got = if ty.regs() == 2 {
                    pair(6 + 2 * i as u16, l)
                } else {
                    u64::from(reg_of(&w, 6 + 2 * i as u16, l))
                };
                assert_eq!(got, want, "bfe.{} a={a:#x} pos={pos} len={len}", ty.name());
            }
            let want = crate::sem::alu::bfi(Ty::B32, ins, a, pos, len);
            assert_eq!(
                u64::from(reg_of(&w, 14, l)),
                want,
                "bfi.b32 pos={pos} len={len}"
            );
            let want = crate::sem::alu::bfi(Ty::B64, ins, a, pos, len);
            assert_eq!(pair(16, l), want, "bfi.b64 pos={pos} len={len}");
        }
    }
    // Values straight from the PTX definitions.
    let mut b = KernelBuilder::new();
    let bfe = |ty: Ty, dst: u16, a: u64, pos: u64, len: u64| Op::Bfe {
        ty,
        dst: r(dst),
        a: src(imm(a)),
        pos: src(imm(pos)),
        len: src(imm(len)),
    };
    let bfi = |ty: Ty, dst: u16, ins: u64, base: u64, pos: u64, len: u64| Op::Bfi {
        ty,
        dst: r(dst),
        insert: src(imm(ins)),
        base: src(imm(base)),
        pos: src(imm(pos)),
        len: src(imm(len)),
    };
    b.push(bfe(Ty::U32, 0, 0xabcd_1234, 8, 8))
        .push(bfe(Ty::S32, 1, 0xabcd_8234, 12, 4))
        .push(bfe(Ty::U32, 2, 0xabcd_1234, 8, 0))
        .push(bfe(Ty::U32, 3, 0xf000_0000, 28, 8))
        .push(bfe(Ty::S32, 4, 0xf000_0000, 28, 8))
        .push(bfe(Ty::S32, 5, 0x8000_0000, 40, 4))
        .push(bfe(Ty::S32, 6, 0x8000_0000, 40, 0))
        .push(bfe(Ty::S64, 8, 0x8000_0000_0000_0000, 63, 1))
        .push(bfi(Ty::B32, 10, 0xff, 0x1234_5678, 28, 8))
        .push(bfi(Ty::B32, 11, 0xff, 0x1234_5678, 32, 8))
        .push(bfi(Ty::B32, 12, 0xff, 0x1234_5678, 4, 0))
        .push(bfi(Ty::B64, 14, 0xf, 0, 60, 8))
        .push(bfi(Ty::B32, 16, 0xffff_ffff, 0, 0, 32))
        .exit();
    let w = run_both(&b, 0x1, |_| {});
    let got: Vec<u32> = [0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 14, 15, 16]
        .iter()
        .map(|&rg| reg_of(&w, rg, 0))
        .collect();
    assert_eq!(
        got,
        [
            0x12,
            0xffff_fff8,
            0,
            0xf,
            0xffff_ffff,
            0xffff_ffff,
            0,
            0xffff_ffff,
            0xffff_ffff,
            0xf234_5678,
            0x1234_5678,
            0x1234_5678,
            0,
            0xf000_0000,
            0xffff_ffff
        ]
    );
}

#[test]
fn bfind_on_zero_and_negative_values() {
    let values: [u64; 16] = [
        0,
        1,
        2,
        0x8000_0000,
        0xffff_ffff,
        0xffff_fff0,
        0x7fff_ffff,
        0x0001_0000,
        0xffff_ffff_ffff_ffff,
        0x8000_0000_0000_0000,
        0x0000_0001_0000_0000,
        0xffff_fffe_0000_0000,
        0x0000_8000,
        0x0000_ff80,
        0x0000_007f,
        0x1234_5678_9abc_def0,
    ];
    let tys = [Ty::U32, Ty::S32, Ty::U64, Ty::S64, Ty::S16, Ty::U8];
    let mut b = KernelBuilder::new();
    for (i, &ty) in tys.iter().enumerate() {
        for (j, op) in [UnOp::Bfind, UnOp::BfindShift].into_iter().enumerate() {
            b.push(Op::Unary {
                op,
                ty,
                dst: r(2 + 2 * i as u16 + j as u16),
                a: src(reg(0)),
            });
        }
    }
    // A modifier applies first: bfind(-(1)) = bfind(0xffffffff).
    b.push(Op::Unary {
        op: UnOp::Bfind,
        ty: Ty::U32,
        dst: r(20),
        a: Src {
            operand: reg(0),
            modifier: SrcMod::Neg,
        },
    });
    b.exit();
    let w = run_both(&b, 0xffff, |w| {
        for (l, &v) in values.iter().enumerate() {
            set_reg(w, 0, l, v as u32);
            set_reg(w, 1, l, (v >> 32) as u32);
        }
    });
    for (l, &v) in values.iter().enumerate() {
        for (i, &ty) in tys.iter().enumerate() {
            for (j, op) in [UnOp::Bfind, UnOp::BfindShift].into_iter().enumerate() {
                let want = crate::sem::alu::unary(op, ty, v) as u32;
                let got = reg_of(&w, 2 + 2 * i as u16 + j as u16, l);
                assert_eq!(got, want, "{}.{} of {v:#x}", op.name(), ty.name());
            }
        }
    }
    // By the definition: no one bit (unsigned 0, signed 0 and -1) gives 0xffffffff.
    let at = |rg: u16, l: usize| reg_of(&w, rg, l);
    assert_eq!((at(2, 0), at(3, 0)), (0xffff_ffff, 0xffff_ffff)); // u32 0
    assert_eq!((at(4, 4), at(5, 4)), (0xffff_ffff, 0xffff_ffff)); // s32 -1
    assert_eq!((at(2, 3), at(3, 3)), (31, 0)); // u32 0x80000000
    assert_eq!(at(4, 3), 30); // s32 0x80000000: the top bit that differs from the sign
    assert_eq!(at(4, 5), 3); // s32 0xfffffff0
    assert_eq!((at(2, 1), at(3, 1)), (0, 31)); // u32 1
    assert_eq!((at(6, 10), at(7, 10)), (32, 31)); // u64 2^32
    assert_eq!(at(8, 9), 62); // s64 i64::MIN
    assert_eq!(at(10, 12), 14); // s16 0x8000 = -32768
    assert_eq!(at(20, 1), 31); // -(1)
}

/// Float bit patterns for FMA operands in format `bits` (16, 32 or 64): zeros, subnormals,
/// normals near 1, the extremes, infinities and NaNs.
fn fma_edges(bits: u32) -> Vec<u64> {
    match bits {
        16 => vec![
            0, 0x8000, 1, 0x8001, 0x03ff, 0x0400, 0x3c00, 0x3c01, 0xbc00, 0x7bff, 0xfbff, 0x7c00,
            0xfc00, 0x7e00, 0x3555, 0x0200,
        ],
        32 => vec![
            0,
            0x8000_0000,
            1,
            0x8000_0001,
            0x007f_ffff,
            0x0080_0000,
            0x3f80_0000,
            0x3f80_0001,
            0xbf80_0000,
            0x7f7f_ffff,
            0xff7f_ffff,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x3eaa_aaab,
            0x3400_0000,
            0x0040_0000,
        ],
        _ => vec![
            0,
            0x8000_0000_0000_0000,
            1,
            0x8000_0000_0000_0001,
            0x000f_ffff_ffff_ffff,
            0x0010_0000_0000_0000,
            0x3ff0_0000_0000_0000,
            0x3ff0_0000_0000_0001,
            0xbff0_0000_0000_0000,
            0x7fef_ffff_ffff_ffff,
            0xffef_ffff_ffff_ffff,
            0x7ff0_0000_0000_0000,
            0xfff0_0000_0000_0000,
            0x7ff8_0000_0000_0001,
            0x3fd5_5555_5555_5555,
            0x3ca0_0000_0000_0000,
        ],
    }
}

#[test]
fn fma_in_every_rounding_mode_and_type() {
    let rounds = [Round::Nearest, Round::Zero, Round::Down, Round::Up];
    let mut rng = crate::exec::random::SplitMix64::new(2024);
    let types = [Ty::F32, Ty::F64, Ty::F16, Ty::BF16, Ty::F16x2, Ty::BF16x2];
    for ty in types {
        let (fmt, elements) = ty.float_format().unwrap();
        let edges = fma_edges(if ty == Ty::BF16 || ty == Ty::BF16x2 {
            32
        } else {
            fmt.bits()
        });
        // bf16 edges: the top halves of the f32 ones.
        let edges: Vec<u64> = if matches!(ty, Ty::BF16 | Ty::BF16x2) {
            edges.iter().map(|e| e >> 16).collect()
        } else {
            edges
        };
        let element = |rng: &mut crate::exec::random::SplitMix64| {
            if rng.next() % 3 == 0 {
                rng.next() & fmt.value_mask()
            } else {
                edges[(rng.next() % edges.len() as u64) as usize]
            }
        };
        let value = |rng: &mut crate::exec::random::SplitMix64| {
            (0..elements).fold(0u64, |acc, i| acc | element(rng) << (i * fmt.bits()))
        };
        for round in rounds {
            for ftz in [false, true] {
                if ftz && ty != Ty::F32 {
                    continue;
                }
                let mut b = KernelBuilder::new();
                // a = R0(:R1), b = R2(:R3), c = R4(:R5), also with modifiers on a and c.
                b.push(Op::Fma {
                    ty,
                    dst: r(6),
                    a: src(reg(0)),
                    b: src(reg(2)),
                    c: src(reg(4)),
                    round,
                    ftz,
                    halves: HalfSel::AS_READ,
                })
                .push(Op::Fma {
                    ty,
                    dst: r(8),
                    a: Src {
                        operand: reg(0),
                        modifier: SrcMod::Neg,
                    },
                    b: src(reg(2)),
                    c: Src {
                        operand: reg(4),
                        modifier: SrcMod::Abs,
                    },
                    round,
                    ftz,
                    halves: HalfSel::AS_READ,
                });
                let packed = elements == 2;
                if packed {
                    // Half selectors (SASS `-R0.H0_H0, R2.H1_H1, R4.H0_H0`).
                    b.push(Op::Fma {
                        ty,
                        dst: r(10),
                        a: Src {
                            operand: reg(0),
                            modifier: SrcMod::Neg,
                        },
                        b: src(reg(2)),
                        c: src(reg(4)),
                        round,
                        ftz,
                        halves: [HalfSel::H0H0, HalfSel::H1H1, HalfSel::H0H0],
                    });
                }
                // In place: the destination is an operand.
                b.push(Op::Fma {
                    ty,
                    dst: r(0),
                    a: src(reg(0)),
                    b: src(reg(2)),
                    c: src(reg(0)),
                    round,
                    ftz,
                    halves: HalfSel::AS_READ,
                })
                .exit();
                for batch in 0..6 {
                    let cases: Vec<[u64; 3]> = (0..32)
                        .map(|l| {
                            if batch == 0 {
                                // Every edge against every edge, for a while.
                                let e = |i: usize| edges[i % edges.len()];
                                let e = |i| {
                                    (0..elements).fold(0, |acc, k| {
                                        acc | e(i + k as usize) << (k * fmt.bits())
                                    })
                                };
                                [e(l), e(l / 4 + 3), e(l * 7 + 1)]
                            } else {
                                [value(&mut rng), value(&mut rng), value(&mut rng)]
                            }
                        })
                        .collect();
                    let w = run_both(&b, FULL, |w| {
                        for (l, c) in cases.iter().enumerate() {
                            for (i, &v) in c.iter().enumerate() {
                                set_reg(w, 2 * i as u16, l, v as u32);
                                set_reg(w, 2 * i as u16 + 1, l, (v >> 32) as u32);
                            }
                        }
                    });
                    let words = ty.regs();
                    let get = |rg: u16, l: usize| {
                        let lo = u64::from(reg_of(&w, rg, l));
                        if words == 2 {
                            lo | u64::from(reg_of(&w, rg + 1, l)) << 32
                        } else {
                            lo
                        }
                    };
                    let mask = if words == 2 { u64::MAX } else { 0xffff_ffff };
                    for (l, &[a, bv, c]) in cases.iter().enumerate() {
                        let (a, bv, c) = (a & mask, bv & mask, c & mask);
                        let want = crate::sem::float::fma_ty(ty, a, bv, c, round, ftz).unwrap();
                        let what = format!("fma.{:?}.{} {a:#x} {bv:#x} {c:#x}", round, ty.name());
                        assert_eq!(get(6, l), want, "{what}");
                        let na = crate::sem::apply_modifier(ty, SrcMod::Neg, a);
                        let ac = crate::sem::apply_modifier(ty, SrcMod::Abs, c);
                        let want = crate::sem::float::fma_ty(ty, na, bv, ac, round, ftz).unwrap();
                        assert_eq!(get(8, l), want, "-a, |c|: {what}");
                        let want = crate::sem::float::fma_ty(ty, a, bv, a, round, ftz).unwrap();
                        assert_eq!(get(0, l), want, "in place: {what}");
                        if packed {
                            // Each selected half replicated by hand.
                            let (lo, hi) = (|v: u64| v & 0xffff, |v: u64| v >> 16 & 0xffff);
                            let both = |h: u64| h << 16 | h;
                            let sa = both(lo(na));
                            let want = crate::sem::float::fma_ty(
                                ty,
                                sa,
                                both(hi(bv)),
                                both(lo(c)),
                                round,
                                ftz,
                            )
                            .unwrap();
                            assert_eq!(get(10, l), want, "-a.h0_h0, b.h1_h1, c.h0_h0: {what}");
                        }
                        // An oracle independent of `sem`: the host's fused multiply-add.
                        if round == Round::Nearest && !ftz && ty == Ty::F32 {
                            let host = f32::from_bits(a as u32)
                                .mul_add(f32::from_bits(bv as u32), f32::from_bits(c as u32));
                            let host = if host.is_nan() {
                                0x7fff_ffff
                            } else {
                                host.to_bits()
                            };
                            assert_eq!(get(6, l), u64::from(host), "host: {what}");
                        }
                        if round == Round::Nearest && ty == Ty::F64 {
                            let host =
                                f64::from_bits(a).mul_add(f64::from_bits(bv), f64::from_bits(c));
                            let host = if host.is_nan() {
                                0x7fff_ffff_ffff_ffff
                            } else {
                                host.to_bits()
                            };
                            assert_eq!(get(6, l), host, "host: {what}");
                        }
                    }
                }
            }
        }
    }
    // Spot values: f32 ftz flushes a subnormal input (-min_sub * 2 + -0 = -0), and without
    // ftz keeps it; inf * 0 is the canonical NaN.
    let mut b = KernelBuilder::new();
    let fma = |dst: u16, a: u64, bv: u64, c: u64, ftz: bool| Op::Fma {
        ty: Ty::F32,
        dst: r(dst),
        a: src(imm(a)),
        b: src(imm(bv)),
        c: src(imm(c)),
        round: Round::Nearest,
        ftz,
        halves: HalfSel::AS_READ,
    };
    b.push(fma(0, 0x8000_0001, 0x4000_0000, 0x8000_0000, true))
        .push(fma(1, 0x8000_0001, 0x4000_0000, 0x8000_0000, false))
        .push(fma(2, 0x7f80_0000, 0, 0x3f80_0000, false))
        .push(fma(3, 0x3f80_0000, 0x3f80_0000, 0xbf80_0000, false))
        .exit();
    let w = run_both(&b, 1, |_| {});
    assert_eq!(
        [0, 1, 2, 3].map(|rg| reg_of(&w, rg, 0)),
        [0x8000_0000, 0x8000_0002, 0x7fff_ffff, 0]
    );
}

#[test]
fn plop3_applies_both_truth_tables_to_every_input_combination() {
    // P0, P1, P2 take all eight combinations across lanes 0..8 (repeated).
    let init = |w: &mut WarpState| {
        w.preds[0] = 0xf0f0_f0f0; // a: bit 2 of lane % 8
        w.preds[1] = 0xcccc_cccc; // b: bit 1
        w.preds[2] = 0xaaaa_aaaa; // c: bit 0
        w.preds[3] = 0x1234_5678;
    };
    for chunk in 0..16u32 {
        let mut b = KernelBuilder::new();
        for i in 0..16u32 {
            let lut = (chunk * 16 + i) as u8;
            b.push(Op::PredLut {
                dst: [p(3), Pred::PT],
                a: PredSrc {
                    pred: p(0),
                    negate: false,
                },
                b: PredSrc {
                    pred: p(1),
                    negate: false,
                },
                c: PredSrc {
                    pred: p(2),
                    negate: false,
                },
                lut: [lut, !lut],
            })
            .push(Op::PredMove(PredMove::ToReg {
                dst: r(2 * i as u16),
                src: PredSrc {
                    pred: p(3),
                    negate: false,
                },
            }));
        }
        b.exit();
        let w = run_both(&b, 0x00ff_00ff, init);
        for i in 0..16u32 {
            let lut = (chunk * 16 + i) as u8;
            for lane in 0..32usize {
                let want = if (0x00ff_00ffu32 >> lane) & 1 == 1 {
                    u32::from(crate::sem::alu::lut3(
                        lut,
                        lane & 4 != 0,
                        lane & 2 != 0,
                        lane & 1 != 0,
                    ))
                } else {
                    0
                };
                assert_eq!(
                    reg_of(&w, 2 * i as u16, lane),
                    want,
                    "lut {lut:#x} lane {lane}"
                );
            }
        }
    }
    // Negated inputs, PT, the second output, and outputs that are inputs (read before written).
    let ps = |pred: u16, negate: bool| PredSrc {
        pred: p(pred),
        negate,
    };
    let mut b = KernelBuilder::new();
    b.push(Op::PredLut {
        dst: [p(0), p(1)],
        a: ps(1, true),
        b: ps(0, false),
        c: PredSrc::TRUE,
        lut: [0xf0 & 0xcc, 0xf0 ^ 0xcc],
    })
    .exit();
    let w = run_both(&b, FULL, init);
    let (a, bb) = (!0xcccc_ccccu32, 0xf0f0_f0f0u32);
    assert_eq!(w.preds[0], a & bb);
    assert_eq!(w.preds[1], a ^ bb);
}

#[test]
fn lane_masks_for_every_lane() {
    let mut b = KernelBuilder::new();
    for (i, sr) in [
        SpecialReg::LanemaskEq,
        SpecialReg::LanemaskLt,
        SpecialReg::LanemaskLe,
        SpecialReg::LanemaskGt,
        SpecialReg::LanemaskGe,
        SpecialReg::ClusterCtaRank,
        SpecialReg::SharedWindowHi,
    ]
    .into_iter()
    .enumerate()
    {
        b.push(Op::ReadSpecial {
            dst: r(i as u16),
            sr,
        });
    }
    b.exit();
    let w = run_both(&b, FULL, |_| {});
    for l in 0..32usize {
        let bit = 1u64 << l;
        let want = [
            bit,
            bit - 1,
            (bit << 1) - 1,
            !((bit << 1) - 1),
            !(bit - 1),
            0,
            GENERIC_SHARED_BASE >> 32,
        ]
        .map(|v| v as u32);
        assert_eq!(
            [0, 1, 2, 3, 4, 5, 6].map(|rg| reg_of(&w, rg, l)),
            want,
            "lane {l}"
        );
    }
    assert_eq!(
        [0, 1, 2, 3, 4].map(|rg| reg_of(&w, rg, 0)),
        [1, 0, 1, !1, FULL]
    );
    assert_eq!(
        [0, 1, 2, 3, 4].map(|rg| reg_of(&w, rg, 31)),
        [1 << 31, !(1 << 31), FULL, 0, 1 << 31]
    );
}

/// A kernel with uniform registers R20..R24 and uniform predicate P3.
fn uniform_builder() -> KernelBuilder {
    let mut b = KernelBuilder::new();
    b.uniform = Uniform {
        regs: 20..24,
        preds: 3..4,
    };
    b
}

fn iadd(dst: u16, a: Operand, add: u64) -> Op {
    Op::IAdd3 {
        dst: r(dst),
        carry_out: [Pred::PT; 2],
        a: src(a),
        b: src(imm(add)),
        c: src(Operand::ZERO),
        carry_in: [PredSrc::FALSE; 2],
    }
}

/// `dst = a op b` on 32-bit unsigned integers.
fn bin_u32(op: BinOp, dst: u16, a: Operand, b: Operand) -> Op {
    Op::Binary {
        op,
        ty: Ty::U32,
        dst: r(dst),
        a: src(a),
        b: src(b),
        ftz: false,
    }
}

fn set_lt(dst: Pred, a: u16, limit: u64) -> Op {
    set_cmp(CmpOp::Lt, dst, a, limit)
}

/// `dst = R[a] == value` (unsigned).
fn set_eq(dst: Pred, a: u16, value: u64) -> Op {
    set_cmp(CmpOp::Eq, dst, a, value)
}

/// `dst = R[a] cmp value` (unsigned 32-bit).
fn set_cmp(cmp: CmpOp, dst: Pred, a: u16, value: u64) -> Op {
    Op::SetP {
        cmp,
        ty: Ty::U32,
        combine: BoolOp::And,
        dst,
        dst2: Pred::PT,
        a: src(reg(a)),
        b: src(imm(value)),
        c: PredSrc::TRUE,
        chain: None,
    }
}

#[test]
fn a_uniform_write_on_one_side_of_a_branch_is_seen_by_the_other_side() {
    // 0: R0 = lane ; 1: P0 = R0 < 16 ; 2: @P0 BRA 6
    // 3: UR20 = R0 + 100 (lanes 16..: lowest 16) ; 4: UP3 = R0 < 17 (lane 16: true)
    // 5: BRA 8
    // 6: UR21 = R0 + 200 (lanes 0..15: lowest 0) ; 7: UP3... not written here
    // 8: (join) R1 = UR20 ; R2 = UR21 ; R3 = UP3 ; EXIT
    let mut b = uniform_builder();
    b.lane_id(0)
        .push(set_lt(p(0), 0, 16))
        .when(
            0,
            false,
            Op::Branch {
                target: 6,
                uniform: false,
            },
        )
        .push(iadd(20, reg(0), 100))
        .push(set_lt(p(3), 0, 17))
        .push(Op::Branch {
            target: 8,
            uniform: false,
        })
        .push(iadd(21, reg(0), 200))
        .push(Op::Nop)
        .push(iadd(1, reg(20), 0))
        .push(iadd(2, reg(21), 0))
        .push(Op::PredMove(PredMove::ToReg {
            dst: r(3),
            src: PredSrc {
                pred: p(3),
                negate: false,
            },
        }))
        .exit()
        .join(2, 8);
    for mask in [FULL, 0x00ff_ff00, 0xfffe_0001] {
        let w = run_both(&b, mask, |_| {});
        let low = |m: u32| m.trailing_zeros();
        let (hi, lo) = (mask & 0xffff_0000, mask & 0xffff);
        for l in 0..32usize {
            if mask >> l & 1 == 0 {
                continue;
            }
            assert_eq!(
                reg_of(&w, 1, l),
                low(hi) + 100,
                "lane {l} sees the other side's UR20"
            );
            assert_eq!(
                reg_of(&w, 2, l),
                low(lo) + 200,
                "lane {l} sees the other side's UR21"
            );
            assert_eq!(reg_of(&w, 3, l), u32::from(low(hi) < 17), "lane {l}: UP3");
        }
        // Every lane's slot holds the value, including lanes outside the group.
        for l in 0..32usize {
            assert_eq!(reg_of(&w, 20, l), low(hi) + 100);
            assert_eq!(reg_of(&w, 21, l), low(lo) + 200);
        }
        assert_eq!(w.preds[3], if low(hi) < 17 { FULL } else { 0 });
    }
}

#[test]
fn uniform_writes_broadcast_the_lowest_executing_lane() {
    let mut b = uniform_builder();
    b.lane_id(0)
        .push(set_lt(p(0), 0, 8))
        // Guarded: the lowest lane where P0 is false.
        .when(0, true, iadd(20, reg(0), 1000))
        // A pair, both words uniform: lane-dependent, the lowest executing lane wins.
        .push(Op::Imad {
            mode: ImadMode::Wide,
            signed: false,
            dst: r(22),
            a: src(reg(0)),
            b: src(imm(0x1_0001)),
            c: src(imm(0x7fff_ffff)),
        })
        // A uniform and a per-lane destination: the per-lane predicate keeps every lane's bit.
        .push(Op::Lop3 {
            dst: r(21),
            pred_out: p(1),
            a: src(reg(0)),
            b: src(imm(1)),
            c: src(Operand::ZERO),
            lut: 0xc0,
        })
        // A guard the instruction rewrites: the broadcast uses the lanes that executed.
        .when(3, true, set_lt(p(3), 0, 4))
        // A shuffle into a uniform register.
        .push(shfl(ShflMode::Down, 23, Pred::PT, 0, imm(3), 0x1f))
        // Nothing executes: nothing is broadcast (the per-lane values stay).
        .when(
            2,
            false,
            Op::PredLut {
                dst: [p(3), Pred::PT],
                a: PredSrc::FALSE,
                b: PredSrc::FALSE,
                c: PredSrc::FALSE,
                lut: [0, 0],
            },
        )
        .exit();
    let init = |w: &mut WarpState| {
        for l in 0..32 {
            set_reg(w, 20, l, 7 + l as u32);
        }
    };
    for mask in [FULL, 0xffff_fff0, 0x0000_0f00, 0x8000_0000] {
        let w = run_both(&b, mask, init);
        let low = mask.trailing_zeros();
        let low_off = (mask & !0xff).trailing_zeros();
        let wide = u64::from(low) * 0x1_0001 + 0x7fff_ffff;
        for l in 0..32usize {
            let want20 = if low_off < 32 {
                low_off + 1000
            } else {
                7 + l as u32
            };
            assert_eq!(reg_of(&w, 20, l), want20, "mask {mask:#x} lane {l}");
            assert_eq!(reg_of(&w, 22, l), wide as u32);
            let j = if low + 3 <= 31 { low + 3 } else { low };
            let lane_id_of_j = if mask >> j & 1 == 1 { j } else { 0 };
            assert_eq!(reg_of(&w, 23, l), lane_id_of_j, "UR23 = R0 of lane {j}");
            assert_eq!(reg_of(&w, 21, l), low & 1);
        }
        assert_eq!(w.preds[1], mask & 0xaaaa_aaaa, "P1 is per-lane");
        assert_eq!(w.preds[3], if low < 4 { FULL } else { 0 });
    }
}

/// `b`'s kernel with the validator's own info (liveness included, so dead stores are
/// skipped as in real kernels).
fn validated(b: &KernelBuilder) -> (Kernel, KernelInfo) {
    let kernel = b.kernel();
    let info = crate::valid::validate(&kernel).unwrap_or_else(|e| panic!("{e}"));
    (kernel, info)
}

/// Runs a validated kernel on both backends (full warp) and returns both warps.
fn run_validated_both(b: &KernelBuilder) -> [WarpState; 2] {
    let (kernel, info) = validated(b);
    let jit = compile(&kernel, &info).unwrap_or_else(|e| panic!("{e}"));
    let interp = crate::interp::Interpreter::new();
    [&jit as &dyn WarpRunner, &interp].map(|runner| {
        let world = World::new(8, 4);
        let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
        let exit = world.run_warp(&kernel, &info, runner, &mut warp, 0, FULL, None);
        assert_eq!(exit, GroupExit::Exited);
        warp
    })
}

/// An if/else on `lane < 16` whose else side (lanes 16..31, run first) executes `write` and
/// whose then side (lanes 0..15) executes `read`; after the join, `R5` and `UR20` are
/// overwritten, so on the writing side's own paths the value `write` produced is dead.
/// `read` writes R1, which the kernel stores (to shared offset 0) at the end.
fn if_else_kernel(b: &mut KernelBuilder, write: Op, read: Op) {
    b.lane_id(0)
        .push(set_lt(p(0), 0, 16))
        .when(
            0,
            false,
            Op::Branch {
                target: 5,
                uniform: false,
            },
        )
        .push(write)
        .push(Op::Branch {
            target: 7,
            uniform: false,
        })
        .push(read)
        .push(Op::Nop)
        .push(iadd(5, Operand::ZERO, 0))
        .push(iadd(20, Operand::ZERO, 0))
        // R1 is read after the join, so its stores are kept and the test can look at it.
        .push(Op::Store {
            access: MemAccess {
                space: Space::Shared,
                ty: Ty::U32,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Cta,
                addr: Address::absolute(0),
            },
            src: reg(1),
        })
        .exit();
}

#[test]
fn values_other_lanes_read_are_stored_even_where_the_writers_never_read_them() {
    // A uniform register written on the else side is read on the then side.
    let mut b = uniform_builder();
    if_else_kernel(&mut b, iadd(20, reg(0), 100), iadd(1, reg(20), 0));
    for (w, backend) in run_validated_both(&b).iter().zip(["jit", "interpreter"]) {
        for l in 0..16 {
            assert_eq!(
                reg_of(w, 1, l),
                116,
                "{backend}: lane {l} reads the broadcast UR20"
            );
        }
    }
    // A register the then side shuffles in from lane 20, which wrote it on the else side.
    let mut b = KernelBuilder::new();
    if_else_kernel(
        &mut b,
        iadd(5, reg(0), 100),
        shfl(ShflMode::Idx, 1, Pred::PT, 5, imm(20), 0x1f),
    );
    for (w, backend) in run_validated_both(&b).iter().zip(["jit", "interpreter"]) {
        for l in 0..16 {
            assert_eq!(
                reg_of(w, 1, l),
                120,
                "{backend}: lane {l} reads lane 20's R5"
            );
        }
    }
}

#[test]
fn packed_min_max_compares_each_half_by_its_signedness() {
    // Halves at the edges of both readings: 0, 1, 0x7fff (the largest s16), 0x8000 (the
    // smallest s16, 32768 unsigned), 0xffff (-1 signed, the largest u16).
    let edges = [0u32, 1, 0x7fff, 0x8000, 0xffff];
    let cases: Vec<(u32, u32)> = (0..32)
        .map(|l| {
            let e = |i: usize| edges[i % edges.len()];
            (e(l) << 16 | e(l / 5), e(l / 3) << 16 | e(l + 2))
        })
        .collect();
    let mut b = KernelBuilder::new();
    let mut dst = 2;
    for op in [BinOp::Min, BinOp::Max] {
        for ty in [Ty::U16, Ty::S16] {
            b.push(Op::PackedMinMax {
                op,
                ty,
                dst: r(dst),
                a: src(reg(0)),
                b: src(reg(1)),
            });
            dst += 1;
        }
    }
    // In place, and with an immediate.
    b.push(Op::PackedMinMax {
        op: BinOp::Max,
        ty: Ty::S16,
        dst: r(0),
        a: src(reg(0)),
        b: src(imm(0x0000_8000)),
    })
    .exit();
    let w = run_both(&b, FULL, |w| {
        for (l, &(a, bv)) in cases.iter().enumerate() {
            set_reg(w, 0, l, a);
            set_reg(w, 1, l, bv);
        }
    });
    for (l, &(a, bv)) in cases.iter().enumerate() {
        // The model: each half on its own, as u16 or i16.
        let halves = |f: &dyn Fn(u16, u16) -> u16, x: u32, y: u32| {
            u32::from(f((x >> 16) as u16, (y >> 16) as u16)) << 16
                | u32::from(f(x as u16, y as u16))
        };
        let smin = |x: u16, y: u16| (x as i16).min(y as i16) as u16;
        let smax = |x: u16, y: u16| (x as i16).max(y as i16) as u16;
        let umin = |x: u16, y: u16| x.min(y);
        let umax = |x: u16, y: u16| x.max(y);
        let what = format!("{a:#010x} {bv:#010x}");
        assert_eq!(reg_of(&w, 2, l), halves(&umin, a, bv), "min.u16x2 {what}");
        assert_eq!(reg_of(&w, 3, l), halves(&smin, a, bv), "min.s16x2 {what}");
        assert_eq!(reg_of(&w, 4, l), halves(&umax, a, bv), "max.u16x2 {what}");
        assert_eq!(reg_of(&w, 5, l), halves(&smax, a, bv), "max.s16x2 {what}");
        assert_eq!(
            reg_of(&w, 0, l),
            halves(&smax, a, 0x8000),
            "in place {what}"
        );
    }
}

// ---- vector accesses and 128-bit atomics ---------------------------------------------------------

/// `[R2.64 + offset]` access of `vector` elements of `ty` in `space` (a shared access takes the
/// 32-bit base R2).
fn vaccess(space: Space, ty: Ty, vector: u8, offset: i64) -> MemAccess {
    MemAccess {
        space,
        ty,
        vector,
        order: MemOrder::Relaxed,
        scope: Scope::Gpu,
        addr: if space == Space::Shared {
            shared_addr(2, offset)
        } else {
            global_addr(2, offset)
        },
    }
}

fn vatom(access: MemAccess, op: AtomicOp, dst: Reg, src: u16, src2: Option<u16>, ftz: bool) -> Op {
    Op::Atomic(Box::new(AtomicInst {
        access,
        op,
        dst,
        src: reg(src),
        src2: src2.map(reg),
        spin: false,
        ftz,
        performed: Pred::PT,
    }))
}

/// Sets R2:R3 of every lane to the global arena's first byte plus `16 * lane`.
fn lane_quads(w: &mut WarpState) {
    for l in 0..32 {
        let a = GLOBAL_BASE + 16 * l as u64;
        set_reg(w, 2, l, a as u32);
        set_reg(w, 3, l, (a >> 32) as u32);
    }
}

#[test]
fn a_128_bit_load_and_store_move_register_quads() {
    let mut b = KernelBuilder::new();
    b.push(Op::Load {
        access: vaccess(Space::Global, Ty::U64, 2, 0),
        dst: r(8),
    });
    // The quad back, 512 bytes further, and as four u32 elements from another quad.
    b.push(Op::Store {
        access: vaccess(Space::Global, Ty::U64, 2, 512),
        src: reg(8),
    });
    b.push(Op::Load {
        access: vaccess(Space::Global, Ty::U32, 4, 0),
        dst: r(12),
    });
    b.exit();
    let world = World::new(1024, 0);
    for l in 0..32usize {
        world.set_global(16 * l, 8, 0x1111_0000_0000_0000 | l as u64);
        world.set_global(16 * l + 8, 8, 0x2222_0000_0000_0000 | l as u64);
    }
    let (exit, w) = run_kernel_masked(&b, &world, FULL, lane_quads);
    assert!(matches!(exit, GroupExit::Exited), "{exit:?}");
    for l in 0..32usize {
        let want = [l as u32, 0x1111_0000, l as u32, 0x2222_0000];
        let got: Vec<u32> = (8..12).map(|r| reg_of(&w, r, l)).collect();
        assert_eq!(got, want, "lane {l}");
        let got: Vec<u32> = (12..16).map(|r| reg_of(&w, r, l)).collect();
        assert_eq!(got, want, "lane {l} (u32 elements)");
        assert_eq!(
            world.global_u64(512 + 16 * l),
            0x1111_0000_0000_0000 | l as u64
        );
        assert_eq!(
            world.global_u64(520 + 16 * l),
            0x2222_0000_0000_0000 | l as u64
        );
    }
}

#[test]
fn a_vector_access_traps_on_its_whole_alignment_and_range() {
    // Lane 3's address is 8-byte aligned only: misaligned for 16 bytes; lanes 0..3 stored.
    let mut b = KernelBuilder::new();
    b.push(Op::Store {
        access: vaccess(Space::Global, Ty::U64, 2, 0),
        src: reg(8),
    });
    b.exit();
    let world = World::new(1024, 0);
    let (exit, _) = run_kernel_masked(&b, &world, 0xff, |w| {
        lane_quads(w);
        set_reg(w, 2, 3, GLOBAL_BASE as u32 + 56);
        for l in 0..8 {
            set_reg(w, 8, l, 0xa0 + l as u32);
        }
    });
    match exit {
        GroupExit::Trap(t) => assert_eq!(
            (t.reason, t.lane, t.address),
            (TrapReason::MisalignedAddress, 3, GLOBAL_BASE + 56)
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(world.global_u32(32), 0xa2, "lane 2 stored");
    assert_eq!(world.global_u32(48), 0, "lane 3 stored nothing");
    assert_eq!(world.global_u32(56), 0);
    // A quad whose first half is the arena's last 8 bytes is out of range as a whole.
    let world = World::new(1032, 0);
    let (exit, _) = run_kernel_masked(&b, &world, 1, |w| {
        set_reg(w, 2, 0, GLOBAL_BASE as u32 + 1024);
        set_reg(w, 3, 0, (GLOBAL_BASE >> 32) as u32);
        set_reg(w, 8, 0, 7);
    });
    match exit {
        GroupExit::Trap(t) => assert_eq!(t.reason, TrapReason::AddressOutOfRange),
        other => panic!("{other:?}"),
    }
    assert_eq!(world.global_u64(1024), 0);
}

#[test]
fn vector_f32_adds_are_one_ftz_rounded_atomic_per_element() {
    let mut b = KernelBuilder::new();
    b.push(vatom(
        vaccess(Space::Global, Ty::F32, 4, 0),
        AtomicOp::Add,
        r(12),
        8,
        None,
        true,
    ));
    b.exit();
    let world = World::new(1024, 0);
    let sub = f32::from_bits(1);
    let mem = [1.0f32, 1.0, sub, -0.0];
    let add = [
        f32::from_bits(0x3380_0000),
        f32::from_bits(0x3440_0000),
        1.0,
        sub,
    ];
    for (e, m) in mem.iter().enumerate() {
        world.set_global(4 * e, 4, m.to_bits().into());
    }
    // Every lane adds to the same quad: lane order, element by element.
    let (exit, w) = run_kernel_masked(&b, &world, 0b11, |w| {
        for l in 0..2 {
            set_reg(w, 2, l, GLOBAL_BASE as u32);
            set_reg(w, 3, l, (GLOBAL_BASE >> 32) as u32);
            for (e, a) in add.iter().enumerate() {
                set_reg(w, 8 + e as u16, l, a.to_bits());
            }
        }
    });
    assert!(matches!(exit, GroupExit::Exited));
    // 1 + 2^-24 ties to 1 (twice); 1 + 3 * 2^-24 rounds to 1 + 2^-22, then once more to
    // 1 + 2^-21; ftz(2^-149) + 1 = 1, then 2; -0 + ftz(2^-149) = +0, twice.
    let got: Vec<u32> = (0..4).map(|e| world.global_u32(4 * e)).collect();
    assert_eq!(got, [0x3f80_0000, 0x3f80_0004, 0x4000_0000, 0]);
    // Lane 1 saw lane 0's results.
    let old: Vec<u32> = (12..16).map(|r| reg_of(&w, r, 1)).collect();
    assert_eq!(old, [0x3f80_0000, 0x3f80_0002, 0x3f80_0000, 0]);
    assert_eq!(w.stats.atomics[AtomicOp::Add.index()], 8, "one per element");
}

#[test]
fn a_trapping_vector_atomic_counts_the_elements_of_the_lanes_before() {
    let mut b = KernelBuilder::new();
    b.push(vatom(
        vaccess(Space::Global, Ty::F32, 2, 0),
        AtomicOp::Add,
        Reg::RZ,
        8,
        None,
        true,
    ));
    b.exit();
    let world = World::new(1024, 0);
    let (exit, w) = run_kernel_masked(&b, &world, 0xf, |w| {
        lane_quads(w);
        set_reg(w, 2, 2, GLOBAL_BASE as u32 + 4);
        for l in 0..4 {
            set_reg(w, 8, l, 1.0f32.to_bits());
            set_reg(w, 9, l, 2.0f32.to_bits());
        }
    });
    assert!(matches!(exit, GroupExit::Trap(t) if t.lane == 2));
    assert_eq!(
        w.stats.atomics[AtomicOp::Add.index()],
        4,
        "lanes 0 and 1, two each"
    );
    assert_eq!(world.global_u32(20), 2.0f32.to_bits());
}

#[test]
fn a_generic_vector_atomic_in_the_shared_window_is_out_of_range() {
    let mut access = vaccess(Space::Generic, Ty::F32, 2, 0);
    access.space = Space::Generic;
    let mut b = KernelBuilder::new();
    b.push(vatom(access, AtomicOp::Add, Reg::RZ, 8, None, true));
    b.exit();
    let world = World::new(64, 64);
    let shared = GENERIC_SHARED_BASE + 8;
    let (exit, _) = run_kernel_masked(&b, &world, 1, |w| {
        set_reg(w, 2, 0, shared as u32);
        set_reg(w, 3, 0, (shared >> 32) as u32);
        set_reg(w, 8, 0, 1.0f32.to_bits());
    });
    match exit {
        GroupExit::Trap(t) => assert_eq!(
            (t.reason, t.space, t.address),
            (TrapReason::AddressOutOfRange, Space::Generic, shared)
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(world.shared_u32(8), 0);
}

#[test]
fn packed_half_vector_atomics_add_min_and_max_each_half() {
    let h = |x: f32| u32::from(half::f16::from_f32(x).to_bits());
    let pair = |lo: f32, hi: f32| h(lo) | h(hi) << 16;
    let mut b = KernelBuilder::new();
    for (i, op) in [AtomicOp::Add, AtomicOp::Min, AtomicOp::Max]
        .into_iter()
        .enumerate()
    {
        b.push(vatom(
            vaccess(Space::Global, Ty::F16x2, 2, 8 * i as i64),
            op,
            r(12 + 2 * i as u16),
            8,
            None,
            false,
        ));
    }
    b.exit();
    let world = World::new(64, 0);
    for i in 0..3 {
        world.set_global(8 * i, 4, pair(1.0, -2.0).into());
        world.set_global(8 * i + 4, 4, pair(0.5, 3.0).into());
    }
    let (_, w) = run_kernel_masked(&b, &world, 1, |w| {
        set_reg(w, 2, 0, GLOBAL_BASE as u32);
        set_reg(w, 3, 0, (GLOBAL_BASE >> 32) as u32);
        set_reg(w, 8, 0, pair(2.0, 1.0));
        set_reg(w, 9, 0, pair(-0.5, 4.0));
    });
    assert_eq!(world.global_u32(0), pair(3.0, -1.0));
    assert_eq!(world.global_u32(4), pair(0.0, 7.0));
    assert_eq!(world.global_u32(8), pair(1.0, -2.0));
    assert_eq!(world.global_u32(12), pair(-0.5, 3.0));
    assert_eq!(world.global_u32(16), pair(2.0, 1.0));
    assert_eq!(world.global_u32(20), pair(0.5, 4.0));
    assert_eq!(
        (reg_of(&w, 12, 0), reg_of(&w, 13, 0)),
        (pair(1.0, -2.0), pair(0.5, 3.0))
    );
}

#[test]
fn atomics_of_128_bits_swap_and_compare_whole_quads() {
    if !crate::exec::memory::has_cas128() {
        return;
    }
    let q = |lo: u64, hi: u64| [lo as u32, (lo >> 32) as u32, hi as u32, (hi >> 32) as u32];
    for space in [Space::Global, Space::Shared, Space::Generic] {
        let mut b = KernelBuilder::new();
        // CAS at +0 (hits in lane 0, misses in lane 1 on the high half), EXCH at +64.
        b.push(vatom(
            vaccess(space, Ty::B128, 1, 0),
            AtomicOp::Cas,
            r(16),
            8,
            Some(12),
            false,
        ));
        b.push(vatom(
            vaccess(space, Ty::B128, 1, 64),
            AtomicOp::Exch,
            r(20),
            12,
            None,
            false,
        ));
        b.exit();
        let world = World::new(256, 256);
        let base = match space {
            Space::Shared => 0,
            Space::Generic => GENERIC_SHARED_BASE,
            Space::Global | Space::Const => GLOBAL_BASE,
        };
        let set = |off: usize, v: u64| match space {
            Space::Global => world.set_global(off, 8, v),
            _ => world.shared.region().store(off, 8, v),
        };
        let get = |off: usize| match space {
            Space::Global => world.global_u64(off),
            _ => world.shared.region().load(off, 8),
        };
        set(0, 3);
        set(8, 4);
        set(16, 3);
        set(24, 5);
        set(64, 0xaa);
        set(72, 0xbb);
        set(80, 0xcc);
        set(88, 0xdd);
        let (exit, w) = run_kernel_masked(&b, &world, 0b11, |w| {
            for l in 0..2 {
                let a = base + 16 * l as u64;
                set_reg(w, 2, l, a as u32);
                set_reg(w, 3, l, (a >> 32) as u32);
                for (i, v) in q(3, 4).into_iter().enumerate() {
                    set_reg(w, 8 + i as u16, l, v);
                }
                for (i, v) in q(5 + l as u64, 6).into_iter().enumerate() {
                    set_reg(w, 12 + i as u16, l, v);
                }
            }
        });
        assert!(matches!(exit, GroupExit::Exited), "{space:?}: {exit:?}");
        assert_eq!(
            (get(0), get(8), get(16), get(24)),
            (5, 6, 3, 5),
            "{space:?}"
        );
        let old =
            |l: usize, r0: u16| -> Vec<u32> { (r0..r0 + 4).map(|r| reg_of(&w, r, l)).collect() };
        assert_eq!(old(0, 16), q(3, 4), "{space:?}");
        assert_eq!(old(1, 16), q(3, 5), "{space:?}");
        assert_eq!(w.stats.cas_failures, 1, "{space:?}");
        // Lane 0 exchanged first at +64, then lane 1 at +80.
        assert_eq!((get(64), get(72)), (5, 6), "{space:?}");
        assert_eq!((get(80), get(88)), (6, 6), "{space:?}");
        assert_eq!(old(0, 20), q(0xaa, 0xbb), "{space:?}");
        assert_eq!(old(1, 20), q(0xcc, 0xdd), "{space:?}");
    }
}

// ---- Surfaces: the JIT against the interpreter and the document -----------------------------

mod surfaces {
    use super::*;
    use crate::ir::surface::{
        Clamp, SurfaceAddress, SurfaceDim, SurfaceHandle, SurfaceHeader, SurfaceLayout,
        SurfaceShape,
    };

    /// Global memory holding `headers`' surfaces (bases filled in), a constant bank with their
    /// handles 0, 1, ... at `c[0x0][0x160 + 8i]`.
    struct SurfWorld {
        global: GlobalMemory,
        shared: SharedMemory,
        cbank: Vec<u8>,
        surfaces: Vec<SurfaceHeader>,
    }

    impl SurfWorld {
        fn new(mut headers: Vec<SurfaceHeader>, init: &[(usize, u64, u32, u64)]) -> SurfWorld {
            let sizes: Vec<u64> = headers
                .iter()
                .map(|h| h.layout.total_bytes(&h.shape))
                .collect();
            let (global, bases) = GlobalMemory::with_allocations(&sizes);
            let mut cbank = vec![0u8; 0x180];
            // Handle word 3 names header 7 unless a fourth header takes it.
            cbank[0x178..0x17c].copy_from_slice(&7u32.to_le_bytes());
            for (i, h) in headers.iter_mut().enumerate() {
                h.base = bases[i];
                cbank[0x160 + 8 * i..0x164 + 8 * i].copy_from_slice(&(i as u32).to_le_bytes());
            }
            for &(s, offset, size, v) in init {
                let at = headers[s].base + offset;
                global.write(at, &v.to_le_bytes()[..size as usize]);
            }
            SurfWorld {
                global,
                shared: SharedMemory::new(0),
                cbank,
                surfaces: headers,
            }
        }

        fn memory(&self) -> Vec<u8> {
            let mut v = vec![0u8; self.global.region().len() as usize];
            self.global.read(GLOBAL_BASE, &mut v);
            v
        }

        /// Runs `kernel` on `runner` for `mask` from a warp `init` prepares.
        fn run(
            &self,
            kernel: &Kernel,
            info: &KernelInfo,
            runner: &dyn WarpRunner,
            mask: u32,
            init: &dyn Fn(&mut WarpState),
        ) -> (GroupExit, WarpState) {
            let env = CtaEnv {
                kernel,
                info,
                global: &self.global,
                shared: &self.shared,
                cbank: &self.cbank,
                surfaces: &self.surfaces,
                ctaid: [0, 0, 0],
                ntid: [32, 1, 1],
                nctaid: [1, 1, 1],
            };
            let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
            init(&mut warp);
            let exit = runner.run_group(&mut warp, &env, 0, mask, None);
            (exit, warp)
        }
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

    fn surf(dim: SurfaceDim, clamp: Clamp, byte_x: bool, surface: u32) -> SurfaceAddress {
        SurfaceAddress {
            coords: r(4),
            dim,
            byte_x,
            clamp,
            handle: SurfaceHandle::Bank {
                bank: 0,
                offset: 0x160 + 8 * surface,
            },
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

    fn suatom(op: AtomicOp, ty: Ty, s: SurfaceAddress, ftz: bool) -> Op {
        Op::Atomic(Box::new(AtomicInst {
            access: access(ty, s),
            op,
            dst: r(10),
            src: reg(8),
            src2: (op == AtomicOp::Cas).then_some(Operand::Reg(r(8).word(ty.regs()))),
            spin: false,
            ftz,
            performed: Pred::PT,
        }))
    }

    /// Runs `b` on both backends from identical worlds; asserts they agree on the event, every
    /// register, predicate and counter, and all of memory; returns the JIT's outcome.
    fn agree(
        b: &KernelBuilder,
        headers: &[SurfaceHeader],
        init_mem: &[(usize, u64, u32, u64)],
        mask: u32,
        init: &dyn Fn(&mut WarpState),
    ) -> (GroupExit, WarpState, SurfWorld) {
        let (kernel, info) = b.build();
        let jit = compile(&kernel, &info).unwrap_or_else(|e| panic!("{e}"));
        let wi = SurfWorld::new(headers.to_vec(), init_mem);
        let (ei, warp_i) = wi.run(
            &kernel,
            &info,
            &crate::interp::Interpreter::new(),
            mask,
            init,
        );
        let wj = SurfWorld::new(headers.to_vec(), init_mem);
        let (ej, warp_j) = wj.run(&kernel, &info, &jit, mask, init);
        assert_eq!(ej, ei, "the event");
        assert_eq!(warp_j.regs, warp_i.regs, "the registers");
        assert_eq!(warp_j.preds, warp_i.preds, "the predicates");
        assert_eq!(warp_j.stats, warp_i.stats, "the counters");
        assert_eq!(wj.memory(), wi.memory(), "memory");
        (ej, warp_j, wj)
    }

    /// Lane `l` reads (x, y) = (l % 8 - 1, l / 8) and offers `l * 7 - 40` (mixed signs).
    fn lanes_2d(w: &mut WarpState) {
        for l in 0..32 {
            set_reg(w, 4, l, ((l % 8) as u32).wrapping_sub(1));
            set_reg(w, 5, l, (l / 8) as u32);
            set_reg(w, 8, l, (l as u32).wrapping_mul(7).wrapping_sub(40));
            set_reg(w, 9, l, 0x1234 + l as u32);
        }
    }

    /// The generated code resolves an access inside a `.1D` or `.2D` surface itself
    /// (`FastSurface`): on pitch-linear and block-linear surfaces of several block heights
    /// and depths, extents that are not whole GOBs or blocks, 4- and 8-byte elements, lanes
    /// inside and outside (negative and past the edge, which the resolver clamps), and a
    /// disabled surface, a surface with a sparse page, a `.2D_ARRAY` surface (no fast form) and
    /// an access of the other element size (a mismatch the resolver reports), every lane's old
    /// value, the memory, the counters and the trap equal the interpreter's.
    #[test]
    fn accesses_inside_1d_and_2d_surfaces_resolve_in_generated_code_as_the_resolver_does() {
        let layouts = [
            SurfaceLayout::Pitch { pitch: 328 },
            SurfaceLayout::BlockLinear {
                log_height: 0,
                log_depth: 0,
            },
            SurfaceLayout::BlockLinear {
                log_height: 1,
                log_depth: 0,
            },
            SurfaceLayout::BlockLinear {
                log_height: 2,
                log_depth: 3,
            },
            SurfaceLayout::BlockLinear {
                log_height: 0,
                log_depth: 2,
            },
        ];
        // (dim, extent): 41 elements across (not a whole GOB at 4 or 8 bytes), 37 rows.
        let shapes = [
            (SurfaceDim::D2, [41, 37, 1, 1]),
            (SurfaceDim::D1, [41, 1, 1, 1]),
            (SurfaceDim::D2Array, [41, 37, 1, 2]),
        ];
        for layout in layouts {
            for (dim, extent) in shapes {
                for elem in [Ty::U32, Ty::U64] {
                    for variant in 0..4 {
                        let mut h = header(dim, elem, extent, layout);
                        match variant {
                            1 => h.disabled = true,
                            2 => h.sparse = vec![0],
                            _ => {}
                        }
                        let n = h.shape.elements();
                        let init: Vec<(usize, u64, u32, u64)> = (0..n)
                            .map(|i| {
                                let e = crate::ir::surface::Element {
                                    x: (i % 41) as u32,
                                    y: (i / 41 % 37) as u32,
                                    z: 0,
                                    layer: (i / (41 * 37)) as u32,
                                };
                                (0, layout.offset(&h.shape, e), elem.bytes(), 0x100 + i)
                            })
                            .collect();
                        for round in 0..3u32 {
                            let lanes = move |w: &mut WarpState| {
                                for l in 0..32u32 {
                                    let x = (l * 13 + round * 7) % 47;
                                    let y = (l * 5 + round * 11) % 41;
                                    // x in -2..45, y in -1..40: a few outside each way.
                                    set_reg(w, 4, l as usize, x.wrapping_sub(2));
                                    set_reg(w, 5, l as usize, y.wrapping_sub(1));
                                    set_reg(w, 6, l as usize, round);
                                    set_reg(w, 8, l as usize, 1 + l);
                                    set_reg(w, 9, l as usize, 0);
                                }
                            };
                            let mut b = KernelBuilder::new();
                            let ty = match (variant, elem) {
                                (3, Ty::U32) => Ty::U64,
                                (3, _) => Ty::U32,
                                _ => elem,
                            };
                            b.push(suatom(
                                AtomicOp::Add,
                                ty,
                                surf(dim, Clamp::Nearest, false, 0),
                                false,
                            ));
                            b.exit();
                            agree(&b, std::slice::from_ref(&h), &init, FULL, &lanes);
                        }
                    }
                }
            }
        }
        // A handle from the constant bank past the pool (no surface at all, and one surface
        // with the handle naming a second): an invalid-surface trap on both backends, and
        // no read outside the fast forms (their loads may be hoisted above any test). And a
        // `.2D_ARRAY` header accessed as `.2D`: no fast form, the resolver's mismatch.
        let h = header(SurfaceDim::D2, Ty::U32, [41, 37, 1, 1], layouts[1]);
        let array = header(SurfaceDim::D2Array, Ty::U32, [41, 37, 1, 2], layouts[1]);
        let lanes = |w: &mut WarpState| {
            for l in 0..32 {
                set_reg(w, 4, l, l as u32);
                set_reg(w, 5, l, 1);
                set_reg(w, 8, l, 1);
            }
        };
        for (pool, surface, reason) in [
            (vec![], 0, TrapReason::InvalidSurface),
            (vec![h], 1, TrapReason::InvalidSurface),
            (vec![array], 0, TrapReason::SurfaceMismatch),
        ] {
            let mut b = KernelBuilder::new();
            let mut s = surf(SurfaceDim::D2, Clamp::Nearest, false, 0);
            // Handle word 0x160 holds header 0; word 0x178 names header 7 (`SurfWorld::new`).
            s.handle = SurfaceHandle::Bank {
                bank: 0,
                offset: if surface < pool.len() { 0x160 } else { 0x178 },
            };
            b.push(suatom(AtomicOp::Add, Ty::U32, s, false));
            b.exit();
            let (exit, _, _) = agree(&b, &pool, &[], FULL, &lanes);
            let GroupExit::Trap(t) = exit else {
                panic!("{pool:?}: {exit:?}")
            };
            assert_eq!((t.reason, t.lane), (reason, 0), "{pool:?}");
        }
    }

    #[test]
    fn every_op_and_clamp_mode_matches_the_interpreter_on_both_layouts() {
        let layouts = [
            SurfaceLayout::Pitch { pitch: 40 },
            SurfaceLayout::BlockLinear {
                log_height: 0,
                log_depth: 0,
            },
        ];
        let ops: &[(AtomicOp, Ty)] = &[
            (AtomicOp::Add, Ty::U32),
            (AtomicOp::Min, Ty::S32),
            (AtomicOp::Max, Ty::U32),
            (AtomicOp::Inc, Ty::U32),
            (AtomicOp::Dec, Ty::U32),
            (AtomicOp::And, Ty::U32),
            (AtomicOp::Or, Ty::S32),
            (AtomicOp::Xor, Ty::U32),
            (AtomicOp::Exch, Ty::U32),
            (AtomicOp::Cas, Ty::U32),
        ];
        for layout in layouts {
            let h = header(SurfaceDim::D2, Ty::U32, [8, 3, 1, 1], layout);
            let init: Vec<(usize, u64, u32, u64)> = (0..3u64 * 8)
                .map(|i| {
                    let e = crate::ir::surface::Element {
                        x: (i % 8) as u32,
                        y: (i / 8) as u32,
                        z: 0,
                        layer: 0,
                    };
                    (0, layout.offset(&h.shape, e), 4, 0x40 + i * 3)
                })
                .collect();
            for &(op, ty) in ops {
                for clamp in [Clamp::Nearest, Clamp::Ignore, Clamp::Trap] {
                    let mut b = KernelBuilder::new();
                    b.push(suatom(op, ty, surf(SurfaceDim::D2, clamp, false, 0), false));
                    b.exit();
                    let (exit, w, _) = agree(&b, std::slice::from_ref(&h), &init, FULL, &lanes_2d);
                    if clamp == Clamp::Trap {
                        // Lane 0 reads x = -1: the first lane traps, naming its coordinates.
                        let GroupExit::Trap(t) = exit else {
                            panic!("{op} {clamp:?}: {exit:?}")
                        };
                        assert_eq!((t.reason, t.lane), (TrapReason::SurfaceOutOfBounds, 0));
                        let st = t.surface.unwrap();
                        assert_eq!((st.index, st.coords()), (0, &[u32::MAX, 0][..]));
                    } else if clamp == Clamp::Ignore {
                        // x = -1 (lanes 0, 8, 16, 24) and y = 3 (lanes 24..) are dropped.
                        assert_eq!(reg_of(&w, 10, 0), 0);
                        assert_eq!(w.stats.atomics[op.index()], 32 - 4 - 7, "{op}");
                    }
                }
            }
        }
    }

    #[test]
    fn loads_stores_and_float_atomics_match_the_interpreter() {
        let h = header(
            SurfaceDim::D2,
            Ty::U32,
            [8, 4, 1, 1],
            SurfaceLayout::BlockLinear {
                log_height: 1,
                log_depth: 0,
            },
        );
        let f = |v: f32| u64::from(v.to_bits());
        let init = [(0, 0, 4, f(1.5)), (0, 4, 4, 0x0000_0001), (0, 16, 4, 7)];
        let float_lanes = |w: &mut WarpState| {
            for l in 0..32 {
                set_reg(w, 4, l, (l % 8) as u32);
                set_reg(w, 5, l, (l / 8) as u32);
                set_reg(
                    w,
                    8,
                    l,
                    if l % 3 == 0 {
                        1
                    } else {
                        0x3f40_0000 + l as u32
                    },
                );
            }
        };
        for (op, ty, ftz) in [
            (AtomicOp::Add, Ty::F32, true),
            (AtomicOp::Add, Ty::F16x2, false),
            (AtomicOp::Add, Ty::F16x2, true),
            (AtomicOp::Min, Ty::F16x2, false),
            (AtomicOp::Max, Ty::F16x2, true),
        ] {
            let mut b = KernelBuilder::new();
            b.push(suatom(
                op,
                ty,
                surf(SurfaceDim::D2, Clamp::Trap, false, 0),
                ftz,
            ));
            b.exit();
            let (exit, _, _) = agree(&b, std::slice::from_ref(&h), &init, FULL, &float_lanes);
            assert_eq!(exit, GroupExit::Exited, "{op} {ty}");
        }
        // A load of every element (NEAR clamps the out-of-bounds lanes), then a store of
        // lane + 1000 (IGN drops lanes past the edge), as SULD and SUST do.
        let mut b = KernelBuilder::new();
        b.push(Op::Load {
            access: access(Ty::U32, surf(SurfaceDim::D2, Clamp::Nearest, false, 0)),
            dst: r(12),
        });
        b.push(Op::Store {
            access: access(Ty::U32, surf(SurfaceDim::D2, Clamp::Ignore, false, 0)),
            src: reg(9),
        });
        b.exit();
        let (exit, w, world) = agree(&b, std::slice::from_ref(&h), &init, FULL, &lanes_2d);
        assert_eq!(exit, GroupExit::Exited);
        // Lane 1 read (0, 0) = 1.5's bits; lane 0 read x = -1 clamped to (0, 0) too.
        assert_eq!(reg_of(&w, 12, 0), 1.5f32.to_bits());
        assert_eq!(reg_of(&w, 12, 1), 1.5f32.to_bits());
        // Lane 2 stored at (1, 0); lane 0's x = -1 was dropped.
        let at = |x: u32, y: u32| {
            let e = crate::ir::surface::Element {
                x,
                y,
                z: 0,
                layer: 0,
            };
            world.surfaces[0].base + world.surfaces[0].layout.offset(&h.shape, e)
        };
        let mut word = [0u8; 4];
        world.global.read(at(1, 0), &mut word);
        assert_eq!(u32::from_le_bytes(word), 0x1234 + 2);
    }

    #[test]
    fn sd32_and_sd64_take_their_signedness_from_the_surface() {
        for (elem, ty) in [
            (Ty::S32, Ty::U32),
            (Ty::U32, Ty::U32),
            (Ty::S64, Ty::U64),
            (Ty::U64, Ty::U64),
        ] {
            for op in [AtomicOp::Min, AtomicOp::Max, AtomicOp::Add] {
                let mut s = surf(SurfaceDim::D2, Clamp::Ignore, false, 0);
                s.format_sign = true;
                let h = header(
                    SurfaceDim::D2,
                    elem,
                    [8, 4, 1, 1],
                    SurfaceLayout::Pitch {
                        pitch: 8 * elem.bytes(),
                    },
                );
                let mut b = KernelBuilder::new();
                b.push(suatom(op, ty, s, false));
                b.exit();
                let init = [(0, 0, elem.bytes(), 5)];
                let lanes = |w: &mut WarpState| {
                    for l in 0..32 {
                        set_reg(w, 4, l, 0);
                        set_reg(w, 5, l, 0);
                        // -1 - l: negative signed, huge unsigned.
                        set_reg(w, 8, l, !(l as u32));
                        set_reg(w, 9, l, u32::MAX);
                    }
                };
                let (_, _, world) = agree(&b, &[h], &init, FULL, &lanes);
                let mut m = [0u8; 8];
                world
                    .global
                    .read(world.surfaces[0].base, &mut m[..elem.bytes() as usize]);
                let m = u64::from_le_bytes(m);
                let signed = elem.is_signed_int();
                // The document's MIN/MAX in the lane order, signed or unsigned by the format.
                let want = match (op, signed, ty.bits()) {
                    (AtomicOp::Min, true, _) => (-32i64) as u64,
                    (AtomicOp::Min, false, _) => 5,
                    (AtomicOp::Max, true, _) => 5,
                    (AtomicOp::Max, false, 32) => u64::from(u32::MAX),
                    (AtomicOp::Max, false, _) => u64::MAX,
                    _ => {
                        // ADD: 5 + sum of (2^64 - 1 - l), the same bits either way.
                        (0..32u64).fold(5u64, |acc, l| acc.wrapping_add(!l))
                    }
                };
                let mask = if ty.bits() == 32 {
                    0xffff_ffff
                } else {
                    u64::MAX
                };
                assert_eq!(m & mask, want & mask, "{op} on {elem}");
            }
        }
    }

    #[test]
    fn sparse_disabled_invalid_and_mismatched_surfaces_match_the_interpreter() {
        let mut sparse = header(
            SurfaceDim::D2,
            Ty::U32,
            [128, 256, 1, 1],
            SurfaceLayout::Pitch { pitch: 512 },
        );
        sparse.sparse = vec![1];
        let mut disabled = header(
            SurfaceDim::D2,
            Ty::U32,
            [4, 4, 1, 1],
            SurfaceLayout::Pitch { pitch: 16 },
        );
        disabled.disabled = true;
        let headers = [sparse, disabled];
        let mut s = surf(SurfaceDim::D2, Clamp::Trap, false, 0);
        s.sparse = p(2);
        let mut b = KernelBuilder::new();
        b.push(suatom(AtomicOp::Add, Ty::U32, s, false));
        b.push(suatom(
            AtomicOp::Add,
            Ty::U32,
            surf(SurfaceDim::D2, Clamp::Trap, false, 1),
            false,
        ));
        b.exit();
        let lanes = |w: &mut WarpState| {
            for l in 0..32 {
                set_reg(w, 4, l, l as u32);
                set_reg(w, 5, l, 120 + l as u32 / 2); // rows 128.. (lanes 16..) are sparse
                set_reg(w, 8, l, 1);
            }
        };
        let (exit, w, _) = agree(&b, &headers, &[], FULL, &lanes);
        assert_eq!(exit, GroupExit::Exited);
        assert_eq!(w.preds[2], 0xffff_0000, "Ps: the lanes on the sparse page");
        assert_eq!(w.stats.atomics[AtomicOp::Add.index()], 16);
        // An invalid handle (a register naming header 5) and a 64-bit access of a 32-bit
        // surface trap with their reasons, after the lanes before them.
        for (handle, ty, reason) in [
            (
                SurfaceHandle::Reg(r(6)),
                Ty::U32,
                TrapReason::InvalidSurface,
            ),
            (
                SurfaceHandle::Bank {
                    bank: 0,
                    offset: 0x160,
                },
                Ty::U64,
                TrapReason::SurfaceMismatch,
            ),
        ] {
            let mut s = surf(SurfaceDim::D2, Clamp::Trap, false, 0);
            s.handle = handle;
            let mut b = KernelBuilder::new();
            b.push(suatom(AtomicOp::Add, ty, s, false));
            b.exit();
            let lanes = |w: &mut WarpState| {
                lanes(w);
                for l in 0..32 {
                    set_reg(w, 6, l, if l < 3 { 0 } else { 5 });
                }
            };
            let (exit, w, _) = agree(&b, &headers, &[], FULL, &lanes);
            let GroupExit::Trap(t) = exit else {
                panic!("{exit:?}")
            };
            assert_eq!(t.reason, reason);
            if reason == TrapReason::InvalidSurface {
                assert_eq!((t.lane, t.surface.map(|s| s.index)), (3, Some(5)));
                assert_eq!(w.stats.atomics[AtomicOp::Add.index()], 3);
            }
        }
    }
}

// ---- warp-aggregated atomics --------------------------------------------------------------

/// `kernel` compiled with warp aggregation `aggregation` (other options default).
fn compile_aggregating(kernel: &Kernel, info: &KernelInfo, aggregation: Aggregation) -> JitKernel {
    let options = JitOptions {
        warp_aggregation: aggregation,
        ..JitOptions::default()
    };
    compile_with(kernel, info, options).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `kernel` with `runner` on lanes `mask` of a warp prepared by `init`, over 64 bytes of
/// global memory holding `mem`: the exit, the warp and the memory afterwards.
fn run_on_memory(
    kernel: &Kernel,
    info: &KernelInfo,
    runner: &dyn WarpRunner,
    mask: u32,
    mem: &[u64; 8],
    init: &impl Fn(&mut WarpState),
) -> (GroupExit, WarpState, Vec<u64>) {
    let world = World::new(64, 0);
    for (i, &v) in mem.iter().enumerate() {
        world.set_global(8 * i, 8, v);
    }
    let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
    init(&mut warp);
    let exit = world.run_warp(kernel, info, runner, &mut warp, 0, mask, None);
    let memory: Vec<u64> = (0..8).map(|i| world.global_u64(8 * i)).collect();
    (exit, warp, memory)
}

/// Runs `b` on lanes `mask` with the JIT with and without warp aggregation and with the
/// interpreter, from the same warp (`init`) and global memory (64 bytes, `mem`), and asserts
/// the three agree on the exit (a trap's lane and address included), every register, the
/// predicates, the counters and every byte of memory. Returns the JIT's exit, warp and memory.
fn run_three_ways(
    b: &KernelBuilder,
    mask: u32,
    mem: &[u64; 8],
    init: impl Fn(&mut WarpState),
) -> (GroupExit, WarpState, Vec<u64>) {
    let (kernel, info) = b.build();
    let agg = compile_aggregating(&kernel, &info, Aggregation::Runtime);
    let plain = compile_aggregating(&kernel, &info, Aggregation::Off);
    let interp = crate::interp::Interpreter::new();
    let mut outs: Vec<_> = [&agg as &dyn WarpRunner, &plain, &interp]
        .into_iter()
        .map(|runner| run_on_memory(&kernel, &info, runner, mask, mem, &init))
        .collect();
    let names = ["aggregated jit", "per-lane jit", "interpreter"];
    for (i, (exit, warp, memory)) in outs.iter().enumerate().skip(1) {
        let (exit0, warp0, memory0) = &outs[0];
        let who = names[i];
        assert_eq!(exit0, exit, "exit: {} vs {who}", names[0]);
        assert_eq!(warp0.regs, warp.regs, "registers: {} vs {who}", names[0]);
        assert_eq!(warp0.preds, warp.preds, "predicates: {} vs {who}", names[0]);
        assert_eq!(warp0.stats, warp.stats, "counters: {} vs {who}", names[0]);
        assert_eq!(memory0, memory, "memory: {} vs {who}", names[0]);
    }
    outs.swap_remove(0)
}

/// Lane `l`'s operand: large, mixed-sign values so that sums wrap in 32 and 64 bits and every
/// bit op and signed/unsigned min/max has work to do.
fn agg_operand(l: usize) -> u64 {
    let l = l as u64;
    (0x9e37_79b9_7f4a_7c15u64.wrapping_mul(l + 1)) ^ (l << 59)
}

#[test]
fn warp_aggregated_atomics_match_per_lane_execution_and_the_interpreter() {
    let ops = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Min,
        AtomicOp::Max,
    ];
    let start: [u64; 8] = [
        0xffff_ffff_ffff_fff0,
        0x8000_0000_7fff_fff8,
        0x0123_4567_89ab_cdef,
        0,
        u64::MAX,
        0x7fff_ffff_ffff_ffff,
        0x8000_0000_0000_0000,
        0x5555_5555_aaaa_aaaa,
    ];
    // Address patterns (word index of each lane): one word for all, one word except the
    // highest lane, three words, and one word per lane pair.
    let patterns: [fn(usize) -> usize; 4] = [
        |_| 1,
        |l| if l == 31 { 2 } else { 1 },
        |l| l % 3,
        |l| l / 2 % 8,
    ];
    let masks = [FULL, 0x8000_0001, 0x00f0_0f00, 1 << 7, 0x5555_5555];
    for op in ops {
        for ty in [Ty::U32, Ty::S32, Ty::U64, Ty::S64] {
            let words = ty.regs();
            for (dst, operand) in [(r(6), reg(4)), (Reg::RZ, reg(4)), (r(4), reg(4))] {
                for (pi, pattern) in patterns.iter().enumerate() {
                    for &mask in &masks {
                        let mut b = KernelBuilder::new();
                        b.atom(Space::Global, op, ty, dst, global_addr(2, 0), operand, None);
                        b.exit();
                        let (exit, w, _) = run_three_ways(&b, mask, &start, |w| {
                            for l in 0..32 {
                                let addr = GLOBAL_BASE + 8 * pattern(l) as u64;
                                set_reg(w, 2, l, addr as u32);
                                set_reg(w, 3, l, (addr >> 32) as u32);
                                let v = agg_operand(l);
                                set_reg(w, 4, l, v as u32);
                                if words == 2 {
                                    set_reg(w, 5, l, (v >> 32) as u32);
                                }
                            }
                        });
                        assert_eq!(exit, GroupExit::Exited, "{op}.{ty} pattern {pi}");
                        assert_eq!(w.stats.atomics[op.index()], u64::from(mask.count_ones()));
                    }
                }
            }
        }
    }
}

#[test]
fn warp_aggregated_atomics_trap_at_the_lowest_lane_on_a_shared_bad_address() {
    for (ty, offset, reason) in [
        (Ty::U32, 2, TrapReason::MisalignedAddress),
        (Ty::U64, 4, TrapReason::MisalignedAddress),
        (Ty::U64, 64, TrapReason::AddressOutOfRange),
        (Ty::S32, 66, TrapReason::MisalignedAddress),
    ] {
        for (mask, lowest) in [(FULL, 0), (0xf0f0_0000, 20)] {
            let mut b = KernelBuilder::new();
            b.atom(
                Space::Global,
                AtomicOp::Add,
                ty,
                r(6),
                global_addr(2, 0),
                reg(4),
                None,
            );
            b.exit();
            let addr = GLOBAL_BASE + offset;
            let (exit, w, memory) = run_three_ways(&b, mask, &[7; 8], |w| {
                for l in 0..32 {
                    set_reg(w, 2, l, addr as u32);
                    set_reg(w, 3, l, (addr >> 32) as u32);
                    set_reg(w, 4, l, 1);
                }
            });
            assert_eq!(
                exit,
                GroupExit::Trap(TrapInfo {
                    reason,
                    pc: 0,
                    lane: lowest,
                    space: Space::Global,
                    address: addr,
                    surface: None,
                })
            );
            assert_eq!(memory, [7; 8]);
            assert_eq!(w.stats.atomics[AtomicOp::Add.index()], 0);
        }
    }
}

#[test]
fn warp_aggregation_gives_each_lane_its_lane_order_prefix() {
    // A full warp adds lane + 1 to one u32 word holding 0xffff_fff0: lane l gets
    // 0xffff_fff0 + l(l+1)/2 (wrapping), the word ends at 0xffff_fff0 + 528.
    let mut b = KernelBuilder::new();
    b.atom(
        Space::Global,
        AtomicOp::Add,
        Ty::U32,
        r(6),
        global_addr(2, 0),
        reg(4),
        None,
    );
    b.exit();
    let (exit, w, memory) = run_three_ways(&b, FULL, &[0xffff_fff0; 8], |w| {
        for l in 0..32 {
            set_reg(w, 2, l, GLOBAL_BASE as u32);
            set_reg(w, 3, l, (GLOBAL_BASE >> 32) as u32);
            set_reg(w, 4, l, l as u32 + 1);
        }
    });
    assert_eq!(exit, GroupExit::Exited);
    for l in 0..32u32 {
        assert_eq!(
            reg_of(&w, 6, l as usize),
            0xffff_fff0u32.wrapping_add(l * (l + 1) / 2)
        );
    }
    assert_eq!(memory[0] as u32, 0xffff_fff0u32.wrapping_add(528));
    assert_eq!(memory[0] >> 32, 0);
    // The aggregated path is there (one more host atomic in the code), and only when asked
    // (without SIMD lanes, whose vector atomic has a lane path in each of its two loops).
    let (kernel, info) = b.build();
    let rmws = |warp_aggregation| {
        let options = JitOptions {
            warp_aggregation,
            simd: false,
            ..JitOptions::default()
        };
        clif_with(&kernel, &info, &options)
            .matches("atomic_rmw")
            .count()
    };
    assert_eq!((rmws(Aggregation::Runtime), rmws(Aggregation::Off)), (2, 1));
}

// ---- atomics on warp-invariant addresses ------------------------------------------------

/// The ops an atomic on an invariant address aggregates.
const AGG_OPS: [AtomicOp; 7] = [
    AtomicOp::Add,
    AtomicOp::Sub,
    AtomicOp::And,
    AtomicOp::Or,
    AtomicOp::Xor,
    AtomicOp::Min,
    AtomicOp::Max,
];

/// `b`'s kernel with an info whose invariant registers are the analysis' own
/// (`valid/uniform.rs`), everything else as in [`KernelBuilder::build`].
fn build_proven(b: &KernelBuilder) -> (Kernel, KernelInfo) {
    let (kernel, mut info) = b.build();
    info.prove_invariant(&kernel);
    (kernel, info)
}

/// `MOV.64 R2, c[0x0][0x160]`: the test world's global arena base, a warp-invariant pair.
fn mov_arena_base(b: &mut KernelBuilder, dst: u16) -> &mut KernelBuilder {
    b.push(Op::Mov {
        ty: Ty::U64,
        dst: r(dst),
        src: Operand::Const {
            bank: 0,
            offset: 0x160,
        },
    })
}

/// Runs `kernel` on each of `masks` with the JIT built with [`Aggregation::Proven`] and
/// [`Aggregation::Off`] and with the interpreter, from the same warp (`init`) and global
/// memory (64 bytes, `mem`), and asserts the three agree on the exit (a trap's lane and
/// address included), every register, the predicates, the counters and every byte of memory.
/// Returns, per mask, the proven JIT's exit, warp and memory.
fn run_proven_three_ways(
    kernel: &Kernel,
    info: &KernelInfo,
    masks: &[u32],
    mem: &[u64; 8],
    init: impl Fn(&mut WarpState),
) -> Vec<(GroupExit, WarpState, Vec<u64>)> {
    let proven = compile_aggregating(kernel, info, Aggregation::Proven);
    let plain = compile_aggregating(kernel, info, Aggregation::Off);
    let interp = crate::interp::Interpreter::new();
    let names = ["proven jit", "per-lane jit", "interpreter"];
    masks
        .iter()
        .map(|&mask| {
            let mut outs: Vec<_> = [&proven as &dyn WarpRunner, &plain, &interp]
                .into_iter()
                .map(|runner| run_on_memory(kernel, info, runner, mask, mem, &init))
                .collect();
            for (i, (exit, warp, memory)) in outs.iter().enumerate().skip(1) {
                let (exit0, warp0, memory0) = &outs[0];
                let who = names[i];
                let at = format!("{} vs {who}, mask {mask:#x}", names[0]);
                assert_eq!(exit0, exit, "exit: {at}");
                // An invariant writer may also store its value into the slots of lanes
                // outside the group (`jit/translate/invariant.rs`): those slots are not
                // compared; every other slot is.
                // After a trap the registers are not compared: a fused region that traps
                // stops with later lanes' earlier instructions not run (a trapped launch
                // exposes no registers).
                let trapped = matches!(exit0, GroupExit::Trap(_));
                for (i, (a, b)) in warp0.regs.iter().zip(&warp.regs).enumerate() {
                    let (rg, lane) = (i / 32, i % 32);
                    if !trapped && (mask >> lane & 1 == 1 || !info.invariant()[rg]) {
                        assert_eq!(a, b, "R{rg} of lane {lane}: {at}");
                    }
                }
                if !trapped {
                    assert_eq!(warp0.preds, warp.preds, "predicates: {at}");
                }
                assert_eq!(warp0.stats, warp.stats, "counters: {at}");
                assert_eq!(memory0, memory, "memory: {at}");
            }
            outs.swap_remove(0)
        })
        .collect()
}

/// `R2:R3 = arena base ; R8(:R9) = inv ; R0 = lane ; P0 = R0 < limit ;
/// @P0 ATOM.op.ty dst, [R2.64 + offset], operand ; EXIT` (unguarded when `limit` is 32).
fn invariant_atomic_kernel(
    op: AtomicOp,
    ty: Ty,
    dst: Reg,
    offset: i64,
    operand: Operand,
    inv: u64,
    limit: u64,
) -> KernelBuilder {
    let mut b = KernelBuilder::new();
    mov_arena_base(&mut b, 2)
        .push(Op::Mov {
            ty: if ty.regs() == 2 { Ty::U64 } else { Ty::U32 },
            dst: r(8),
            src: imm(inv),
        })
        .lane_id(0)
        .push(set_lt(p(0), 0, limit));
    let atom = Op::Atomic(Box::new(AtomicInst {
        access: MemAccess {
            space: Space::Global,
            ty,
            vector: 1,
            order: MemOrder::Relaxed,
            scope: Scope::Gpu,
            addr: global_addr(2, offset),
        },
        op,
        dst,
        src: operand,
        src2: None,
        spin: false,
        ftz: false,
        performed: Pred::PT,
    }));
    if limit >= 32 {
        b.push(atom);
    } else {
        b.when(0, false, atom);
    }
    b.exit();
    b
}

/// Per-lane operands in R4(:R5): [`agg_operand`].
fn per_lane_operands(w: &mut WarpState) {
    for l in 0..32 {
        let v = agg_operand(l);
        set_reg(w, 4, l, v as u32);
        set_reg(w, 5, l, (v >> 32) as u32);
    }
}

#[test]
fn atomics_on_an_invariant_address_match_per_lane_execution_and_the_interpreter() {
    let start: [u64; 8] = [
        0x0123_4567_89ab_cdef,
        0xffff_ffff_ffff_fff0,
        0x8000_0000_7fff_fff8,
        0,
        u64::MAX,
        0x7fff_ffff_ffff_ffff,
        0x8000_0000_0000_0000,
        0x5555_5555_aaaa_aaaa,
    ];
    // Popcounts 32, 10, 3, 1, 2: even and odd lane counts (xor's parity), one lane, and
    // lanes 0b1011 in several bytes.
    let masks = [FULL, 0xb00b_100b, 0b1011, 1 << 13, 0x8000_0001];
    let mut kernels = 0;
    for op in AGG_OPS {
        for ty in [Ty::U32, Ty::S32, Ty::U64, Ty::S64] {
            let words = ty.regs();
            // An invariant (MOV'd) operand with the sign bit set, so sums wrap and signed
            // and unsigned min/max disagree.
            let inv = 0xfedc_ba98_8765_4321u64.rotate_left(op.index() as u32 * 5);
            for operand in [reg(4), reg(8), imm(inv)] {
                for dst in [r(6), Reg::RZ] {
                    for limit in [32, 11] {
                        let b = invariant_atomic_kernel(op, ty, dst, 8, operand, inv, limit);
                        let (kernel, info) = build_proven(&b);
                        let inv_regs = info.invariant();
                        assert!(inv_regs[2] && inv_regs[3], "the address is invariant");
                        assert!(inv_regs[8] && (words == 1 || inv_regs[9]));
                        assert!(!inv_regs[4] && !inv_regs[0], "lane values are not");
                        let outs = run_proven_three_ways(&kernel, &info, &masks, &start, |w| {
                            per_lane_operands(w);
                            // A destination a result is not written to keeps this.
                            for l in 0..32 {
                                set_reg(w, 6, l, 0xdead_0000 + l as u32);
                                set_reg(w, 7, l, 0xbeef_0000 + l as u32);
                            }
                        });
                        for ((exit, w, memory), &mask) in outs.iter().zip(&masks) {
                            let exec = if limit < 32 {
                                mask & ((1 << limit) - 1)
                            } else {
                                mask
                            };
                            let at = format!("{op}.{ty} {operand:?} -> {dst:?} mask {mask:#x}");
                            assert_eq!(*exit, GroupExit::Exited, "{at}");
                            assert_eq!(
                                w.stats.atomics[op.index()],
                                u64::from(exec.count_ones()),
                                "{at}"
                            );
                            if exec == 0 {
                                assert_eq!(*memory, start, "{at}: nothing executes");
                            }
                        }
                        kernels += 1;
                    }
                }
            }
        }
    }
    assert_eq!(kernels, 7 * 4 * 3 * 2 * 2);
}

#[test]
fn invariant_operand_atomics_compute_the_documented_combinations() {
    // One word at offset 8, an invariant operand: add k·b (wrapping), xor b or 0 by the
    // parity of k, signed min/max with negative values; each lane gets its lane-order prefix.
    let run = |op: AtomicOp, ty: Ty, inv: u64, word: u64, mask: u32| {
        let b = invariant_atomic_kernel(op, ty, r(6), 8, reg(8), inv, 32);
        let (kernel, info) = build_proven(&b);
        let mut mem = [0x1111_1111_1111_1111; 8];
        mem[1] = word;
        let (exit, w, memory) = run_proven_three_ways(&kernel, &info, &[mask], &mem, |_| {})
            .pop()
            .unwrap();
        assert_eq!(exit, GroupExit::Exited);
        assert_eq!(memory[0], mem[0]);
        assert_eq!(memory[2..], mem[2..]);
        (w, memory[1])
    };
    let result = |w: &WarpState, l: usize, words: u16| {
        let lo = u64::from(reg_of(w, 6, l));
        if words == 2 {
            lo | u64::from(reg_of(w, 7, l)) << 32
        } else {
            lo
        }
    };
    // add near u32::MAX: 32 lanes add 0x7fff_ffff to 0xffff_fff0.
    let (w, m) = run(AtomicOp::Add, Ty::U32, 0x7fff_ffff, 0xffff_fff0, FULL);
    for l in 0..32u32 {
        let want = 0xffff_fff0u32.wrapping_add(l.wrapping_mul(0x7fff_ffff));
        assert_eq!(reg_of(&w, 6, l as usize), want, "lane {l}");
    }
    assert_eq!(
        m as u32,
        0xffff_fff0u32.wrapping_add(32u32.wrapping_mul(0x7fff_ffff))
    );
    assert_eq!(m >> 32, 0, "a 32-bit add does not carry into the next word");
    // sub of 3 on 64 bits, lanes 0b1011 (three lanes), wrapping below zero.
    let (w, m) = run(AtomicOp::Sub, Ty::U64, 3, 4, 0b1011);
    assert_eq!([0, 1, 3].map(|l| result(&w, l, 2)), [4, 1, u64::MAX - 1]);
    assert_eq!(m, u64::MAX - 4);
    // xor: an even number of lanes leaves the word, an odd number flips it once; every
    // lane sees the alternation.
    for (mask, flips) in [
        (FULL, false),
        (0x8000_0001, false),
        (0b1011, true),
        (1 << 9, true),
    ] {
        let (w, m) = run(AtomicOp::Xor, Ty::U32, 0xf0f0_0f0f, 0x1234_5678, mask);
        let want = if flips {
            0x1234_5678 ^ 0xf0f0_0f0f
        } else {
            0x1234_5678
        };
        assert_eq!(m, want, "mask {mask:#x}");
        for (i, l) in (0..32).filter(|l| mask >> l & 1 == 1).enumerate() {
            let seen = if i % 2 == 1 {
                0x1234_5678 ^ 0xf0f0_0f0f
            } else {
                0x1234_5678
            };
            assert_eq!(u64::from(reg_of(&w, 6, l)), seen, "mask {mask:#x} lane {l}");
        }
    }
    // Signed min with a negative operand: the first lane sees the old (positive) value,
    // the rest the operand; the unsigned min of the same bits keeps the old value.
    let neg = (-5i32) as u32 as u64;
    let (w, m) = run(AtomicOp::Min, Ty::S32, neg, 7, FULL);
    assert_eq!((result(&w, 0, 1), result(&w, 31, 1), m), (7, neg, neg));
    let (_, m) = run(AtomicOp::Min, Ty::U32, neg, 7, FULL);
    assert_eq!(m, 7);
    // Signed max of -9 on a word holding -20 (64 bits): -9; unsigned max keeps -9's bits too
    // but signed max of -30 keeps -20.
    let m20 = (-20i64) as u64;
    let (w, m) = run(AtomicOp::Max, Ty::S64, (-9i64) as u64, m20, 0x0f00_0000);
    assert_eq!(m, (-9i64) as u64);
    assert_eq!(
        (result(&w, 24, 2), result(&w, 25, 2)),
        (m20, (-9i64) as u64)
    );
    let (_, m) = run(AtomicOp::Max, Ty::S64, (-30i64) as u64, m20, FULL);
    assert_eq!(m, m20);
    let (_, m) = run(AtomicOp::Max, Ty::U64, (-30i64) as u64, m20, FULL);
    assert_eq!(m, m20, "as unsigned, -20 is the larger");
    let (_, m) = run(AtomicOp::Max, Ty::U64, 5, m20, FULL);
    assert_eq!(m, m20);
    // and / or with an invariant operand apply it once.
    let (w, m) = run(
        AtomicOp::And,
        Ty::U64,
        0xff00_ff00_ff00_ff00,
        u64::MAX,
        FULL,
    );
    assert_eq!((result(&w, 0, 2), result(&w, 1, 2)), (u64::MAX, m));
    assert_eq!(m, 0xff00_ff00_ff00_ff00);
    let (_, m) = run(AtomicOp::Or, Ty::S32, 0x8000_0001, 0x10, 0b110);
    assert_eq!(m, 0x8000_0011);
}

#[test]
fn atomics_on_a_bad_invariant_address_trap_at_the_lowest_executing_lane() {
    // (type, offset from the arena base, reason); the arena is 64 bytes.
    let cases = [
        (Ty::U32, 2, TrapReason::MisalignedAddress),
        (Ty::S32, 66, TrapReason::MisalignedAddress),
        (Ty::U64, 4, TrapReason::MisalignedAddress),
        (Ty::S64, 64, TrapReason::AddressOutOfRange),
        (Ty::U32, 64, TrapReason::AddressOutOfRange),
        (Ty::U64, -8, TrapReason::AddressOutOfRange),
    ];
    for (ty, offset, reason) in cases {
        for op in [AtomicOp::Add, AtomicOp::Xor, AtomicOp::Min] {
            for operand in [reg(4), reg(8)] {
                for (limit, mask, lowest) in [
                    (32, FULL, 0),
                    (32, 0xf0f0_0000, 20),
                    (11, 0xffff_f0f0, 4),
                    (11, 1 << 10, 10),
                ] {
                    let b = invariant_atomic_kernel(op, ty, r(6), offset, operand, 1, limit);
                    let (kernel, info) = build_proven(&b);
                    let (exit, w, memory) =
                        run_proven_three_ways(&kernel, &info, &[mask], &[7; 8], per_lane_operands)
                            .pop()
                            .unwrap();
                    let at = format!("{op}.{ty} at {offset} {operand:?} mask {mask:#x}");
                    assert_eq!(
                        exit,
                        GroupExit::Trap(TrapInfo {
                            reason,
                            pc: 4,
                            lane: lowest,
                            space: Space::Global,
                            address: GLOBAL_BASE.wrapping_add_signed(offset),
                            surface: None,
                        }),
                        "{at}"
                    );
                    assert_eq!(memory, [7; 8], "{at}: no memory change");
                    assert_eq!(w.stats.atomics[op.index()], 0, "{at}");
                    for l in 0..32 {
                        assert_eq!(reg_of(&w, 6, l), 0, "{at}: no result written");
                    }
                }
            }
        }
    }
}

/// The blocks of CLIF function text `text`, each with the blocks it branches to.
fn clif_blocks(text: &str) -> Vec<(String, Vec<String>, String)> {
    let mut blocks: Vec<(String, Vec<String>, String)> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("block") && t.ends_with(':') {
            let name = t.split(['(', ':']).next().unwrap().to_string();
            blocks.push((name, Vec::new(), String::new()));
        } else if let Some(b) = blocks.last_mut() {
            b.2.push_str(t);
            b.2.push('\n');
            // `brif v1, ...`, `brif.i32 v1, ...`, `jump`, `br_table`.
            let opcode = t.split([' ', '.']).next().unwrap_or("");
            if ["jump", "brif", "br_table"].contains(&opcode) {
                for word in t.split(|c: char| !c.is_ascii_alphanumeric()) {
                    if word.starts_with("block") {
                        b.1.push(word.to_string());
                    }
                }
            }
        }
    }
    blocks
}

/// The blocks of `blocks` reachable from the entry block (the translator leaves some
/// unreachable blocks, e.g. the empty lane loop of a fused region all of whose instructions
/// were hoisted; Cranelift removes them).
fn reachable_blocks(
    blocks: &[(String, Vec<String>, String)],
) -> Vec<(String, Vec<String>, String)> {
    let mut seen = std::collections::BTreeSet::new();
    let mut work = vec![blocks[0].0.clone()];
    while let Some(b) = work.pop() {
        if seen.insert(b.clone()) {
            if let Some(blk) = blocks.iter().find(|x| x.0 == b) {
                work.extend(blk.1.iter().cloned());
            }
        }
    }
    blocks
        .iter()
        .filter(|b| seen.contains(&b.0))
        .cloned()
        .collect()
}

/// Whether block `from` of `blocks` can reach itself again (it is in a loop).
fn in_loop(blocks: &[(String, Vec<String>, String)], from: &str) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    let mut work: Vec<&str> = blocks
        .iter()
        .find(|b| b.0 == from)
        .map(|b| b.1.iter().map(String::as_str).collect())
        .unwrap_or_default();
    while let Some(b) = work.pop() {
        if b == from {
            return true;
        }
        if seen.insert(b) {
            if let Some(blk) = blocks.iter().find(|x| x.0 == b) {
                work.extend(blk.1.iter().map(String::as_str));
            }
        }
    }
    false
}

#[test]
fn an_invariant_address_atomic_is_one_host_atomic_outside_any_loop() {
    // (operand, destination): with an invariant operand and the result discarded, the
    // function has no loop at all; otherwise the lanes are looped over before (combining)
    // or after (results), but the one host atomic is in no loop.
    for (operand, dst, loop_free) in [
        (reg(8), Reg::RZ, true),
        (imm(3), Reg::RZ, true),
        (reg(8), r(6), false),
        (reg(4), Reg::RZ, false),
        (reg(4), r(6), false),
    ] {
        for ty in [Ty::U32, Ty::S64] {
            // MOV.64 R2, c[0x0][0x160] ; MOV R8, 3 ; ATOM.ADD ; EXIT: no per-lane work but
            // the atomic's.
            let mut b = invariant_atomic_kernel(AtomicOp::Add, ty, dst, 8, operand, 3, 32);
            b.insts.drain(2..4);
            let (kernel, info) = build_proven(&b);
            assert!(matches!(kernel.insts[2].op, Op::Atomic(_)));
            let clif = |warp_aggregation| {
                let options = JitOptions {
                    warp_aggregation,
                    ..JitOptions::default()
                };
                clif_with(&kernel, &info, &options)
            };
            let at = format!("{ty} {operand:?} -> {dst:?}");
            let proven = clif(Aggregation::Proven);
            assert_eq!(proven.matches("atomic_rmw").count(), 1, "{at}\n{proven}");
            let blocks = reachable_blocks(&clif_blocks(&proven));
            let atomic_block = blocks
                .iter()
                .find(|b| b.2.contains("atomic_rmw"))
                .map(|b| b.0.clone())
                .unwrap();
            assert!(
                !in_loop(&blocks, &atomic_block),
                "{at}: in a loop\n{proven}"
            );
            let looping: Vec<_> = blocks
                .iter()
                .filter(|b| in_loop(&blocks, &b.0))
                .map(|b| b.0.as_str())
                .collect();
            assert_eq!(
                looping.is_empty(),
                loop_free,
                "{at}: {looping:?} in loops\n{proven}"
            );
            // Off: the per-lane loop performs the atomic once per lane.
            let off = clif(Aggregation::Off);
            let blocks = reachable_blocks(&clif_blocks(&off));
            let atomic_block = blocks
                .iter()
                .find(|b| b.2.contains("atomic_rmw"))
                .map(|b| b.0.clone())
                .unwrap();
            assert!(in_loop(&blocks, &atomic_block), "{at}: off\n{off}");
        }
    }
}

#[test]
fn hoisted_invariant_values_reach_later_instructions_and_other_groups() {
    // 0: R0 = lane ; 1: R1 = R0 * 3 + 1 ; 2: R10:R11 = arena base (invariant) ;
    // 3: R12 = R10 + 0x20 (invariant) ; 4: R13 = R1 + R12 — one fused region, 2 and 3
    // hoisted before its lane loop.
    // 5: P0 = R0 < 16 ; 6: @P0 BRA 9 (join 11)
    // 7: RED.ADD [R10.64 + 8], R12 (not fused: reads R10..R12 from the register file) ; 8: BRA 11
    // 9: ATOM.ADD R14, [R10.64 + 16], R1 ; 10: NOP
    // 11: R15 = R12 + R13 ; 12: R16 = R11 + R15 ; EXIT
    let mut b = KernelBuilder::new();
    b.lane_id(0).push(Op::Imad {
        mode: ImadMode::Lo,
        signed: false,
        dst: r(1),
        a: src(reg(0)),
        b: src(imm(3)),
        c: src(imm(1)),
    });
    mov_arena_base(&mut b, 10)
        .push(iadd(12, reg(10), 0x20))
        .push(Op::IAdd3 {
            dst: r(13),
            carry_out: [Pred::PT; 2],
            a: src(reg(1)),
            b: src(reg(12)),
            c: src(Operand::ZERO),
            carry_in: [PredSrc::FALSE; 2],
        })
        .push(set_lt(p(0), 0, 16))
        .when(
            0,
            false,
            Op::Branch {
                target: 9,
                uniform: false,
            },
        )
        .atom(
            Space::Global,
            AtomicOp::Add,
            Ty::U32,
            Reg::RZ,
            global_addr(10, 8),
            reg(12),
            None,
        )
        .push(Op::Branch {
            target: 11,
            uniform: false,
        })
        .atom(
            Space::Global,
            AtomicOp::Add,
            Ty::U32,
            r(14),
            global_addr(10, 16),
            reg(1),
            None,
        )
        .push(Op::Nop)
        .push(Op::IAdd3 {
            dst: r(15),
            carry_out: [Pred::PT; 2],
            a: src(reg(12)),
            b: src(reg(13)),
            c: src(Operand::ZERO),
            carry_in: [PredSrc::FALSE; 2],
        })
        .push(Op::IAdd3 {
            dst: r(16),
            carry_out: [Pred::PT; 2],
            a: src(reg(11)),
            b: src(reg(15)),
            c: src(Operand::ZERO),
            carry_in: [PredSrc::FALSE; 2],
        })
        .exit()
        .join(6, 11);
    let (kernel, info) = build_proven(&b);
    let inv = info.invariant();
    assert!(
        inv[10] && inv[11] && inv[12],
        "the hoisted writers are invariant"
    );
    assert!(!inv[1] && !inv[13] && !inv[14] && !inv[15]);
    let base = GLOBAL_BASE as u32;
    // The whole warp at once, and as two groups that run from the start one after the other
    // (the second finds the first's splat stores in its slots and recomputes them).
    for groups in [
        vec![FULL],
        vec![0x0000_ff0f, 0xffff_00f0],
        vec![0x8000_0001],
    ] {
        for chunk_insts in [usize::MAX, 1, 2, 3, 5] {
            let opts = JitOptions {
                chunk_insts,
                warp_aggregation: Aggregation::Proven,
                ..JitOptions::default()
            };
            let jit = compile_with(&kernel, &info, opts).unwrap_or_else(|e| panic!("{e}"));
            let interp = crate::interp::Interpreter::new();
            let outs: Vec<(WarpState, Vec<u64>)> = [&jit as &dyn WarpRunner, &interp]
                .map(|runner| {
                    let world = World::new(64, 0);
                    let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
                    for &mask in &groups {
                        let exit = world.run_warp(&kernel, &info, runner, &mut warp, 0, mask, None);
                        assert_eq!(exit, GroupExit::Exited);
                    }
                    let memory = (0..8).map(|i| world.global_u64(8 * i)).collect();
                    (warp, memory)
                })
                .into_iter()
                .collect();
            let all = groups.iter().fold(0, |a, m| a | m);
            let at = format!("groups {groups:x?}, chunks of {chunk_insts}");
            let (w, memory) = &outs[0];
            for rg in 0..32u16 {
                for l in (0..32).filter(|l| all >> l & 1 == 1) {
                    assert_eq!(
                        reg_of(w, rg, l),
                        reg_of(&outs[1].0, rg, l),
                        "R{rg} lane {l}: {at}"
                    );
                }
            }
            assert_eq!(*memory, outs[1].1, "{at}");
            assert_eq!(w.stats, outs[1].0.stats, "{at}");
            // The values themselves: every lane read the invariant registers right.
            for l in (0..32).filter(|l| all >> l & 1 == 1) {
                let r13 = (3 * l as u32 + 1).wrapping_add(base + 0x20);
                assert_eq!(reg_of(w, 12, l), base + 0x20, "{at}");
                assert_eq!(reg_of(w, 15, l), r13.wrapping_add(base + 0x20), "{at}");
                assert_eq!(
                    reg_of(w, 16, l),
                    reg_of(w, 15, l).wrapping_add((GLOBAL_BASE >> 32) as u32),
                    "{at}"
                );
            }
            let high = (all & 0xffff_0000).count_ones();
            assert_eq!(memory[1] as u32, high.wrapping_mul(base + 0x20), "{at}");
            let low_sum: u32 = (0..16)
                .filter(|l| all >> l & 1 == 1)
                .map(|l| 3 * l + 1)
                .sum();
            assert_eq!(memory[2] as u32, low_sum, "{at}");
        }
    }
}

// ---- SIMD lanes --------------------------------------------------------------------------

/// A random vectorisable instruction (`translate::simd::vectorisable`) over R0..R7 and
/// P0..P3, with edge immediates, constant-bank reads, source modifiers and guards.
fn random_vector_inst(rng: &mut impl FnMut() -> u64) -> (Guard, Op) {
    let pick = |rng: &mut dyn FnMut() -> u64, n: u64| (rng() % n) as usize;
    let edges = [
        0u64,
        1,
        31,
        32,
        33,
        0x7fff_ffff,
        0x8000_0000,
        0xffff_ffff,
        0x9e37_79b1,
    ];
    let operand = |rng: &mut dyn FnMut() -> u64| match pick(rng, 8) {
        0 => imm(edges[pick(rng, edges.len() as u64)]),
        1 => Operand::Const { bank: 0, offset: 0 },
        2 => Operand::Reg(Reg::RZ),
        _ => reg(pick(rng, 8) as u16),
    };
    let modifiers = [
        SrcMod::None,
        SrcMod::Not,
        SrcMod::Neg,
        SrcMod::Abs,
        SrcMod::NegAbs,
    ];
    let source = |rng: &mut dyn FnMut() -> u64| Src {
        operand: operand(rng),
        modifier: if rng() % 3 == 0 {
            modifiers[pick(rng, 5)]
        } else {
            SrcMod::None
        },
    };
    let pred = |rng: &mut dyn FnMut() -> u64| match pick(rng, 6) {
        0 => Pred::PT,
        n => p((n % 4) as u16),
    };
    let pred_src = |rng: &mut dyn FnMut() -> u64| PredSrc {
        pred: pred(rng),
        negate: rng() % 2 == 0,
    };
    let dst = |rng: &mut dyn FnMut() -> u64| r(pick(rng, 8) as u16);
    let int32 = [Ty::U32, Ty::S32];
    let bools = [BoolOp::And, BoolOp::Or, BoolOp::Xor];
    let op = match pick(rng, 12) {
        // 64-bit moves, wrapping arithmetic and logic on pairs (R0..R7: a pair starts at
        // R0..R6), and 32-bit integers widened.
        10 => {
            let pair_operand = |rng: &mut dyn FnMut() -> u64| match pick(rng, 5) {
                0 => imm(rng()),
                1 => imm([0u64, u64::MAX, 0xffff_ffff, 0x1_0000_0000][pick(rng, 4)]),
                2 => Operand::Const { bank: 0, offset: 0 },
                _ => reg(pick(rng, 7) as u16),
            };
            let pair_dst = |rng: &mut dyn FnMut() -> u64| r(pick(rng, 7) as u16);
            match pick(rng, 3) {
                0 => Op::Mov {
                    ty: [Ty::U64, Ty::B64][pick(rng, 2)],
                    dst: pair_dst(rng),
                    src: pair_operand(rng),
                },
                1 => {
                    let ops = [BinOp::Add, BinOp::Sub, BinOp::And, BinOp::Or, BinOp::Xor];
                    Op::Binary {
                        op: ops[pick(rng, ops.len() as u64)],
                        ty: [Ty::U64, Ty::S64][pick(rng, 2)],
                        dst: pair_dst(rng),
                        a: src(pair_operand(rng)),
                        b: src(pair_operand(rng)),
                        ftz: false,
                    }
                }
                _ => Op::Convert {
                    dst_ty: [Ty::U64, Ty::S64][pick(rng, 2)],
                    src_ty: [Ty::U32, Ty::S32][pick(rng, 2)],
                    round: Round::Nearest,
                    ftz: false,
                    dst: pair_dst(rng),
                    a: src(operand(rng)),
                },
            }
        }
        0 => Op::Mov {
            ty: Ty::U32,
            dst: dst(rng),
            src: operand(rng),
        },
        1 | 2 => {
            let ops = [
                BinOp::Add,
                BinOp::Sub,
                BinOp::Mul,
                BinOp::Min,
                BinOp::Max,
                BinOp::And,
                BinOp::Or,
                BinOp::Xor,
                BinOp::Shl,
                BinOp::Shr,
            ];
            let op = ops[pick(rng, ops.len() as u64)];
            let b = if matches!(op, BinOp::Shl | BinOp::Shr) {
                src(imm(rng() % 40))
            } else {
                source(rng)
            };
            Op::Binary {
                op,
                ty: int32[pick(rng, 2)],
                dst: dst(rng),
                a: source(rng),
                b,
                ftz: false,
            }
        }
        3 if rng() % 2 == 0 => {
            // `.SX32` only with `.HI`, with `c` RZ (as the front-ends build it).
            let hi = rng() % 2 == 0;
            let sx32 = hi && rng() % 2 == 0;
            Op::Lea {
                hi,
                sx32,
                dst: dst(rng),
                carry_out: pred(rng),
                a: source(rng),
                b: source(rng),
                c: if hi && !sx32 {
                    source(rng)
                } else {
                    src(Operand::Reg(Reg::RZ))
                },
                shift: [0, 1, 2, 3, 4, 16, 31][pick(rng, 7)],
                carry_in: pred_src(rng),
            }
        }
        3 => Op::IAdd3 {
            dst: dst(rng),
            // Carries out (both may name one predicate: the second write wins).
            carry_out: [pred(rng), pred(rng)],
            a: source(rng),
            b: source(rng),
            c: source(rng),
            carry_in: [pred_src(rng), pred_src(rng)],
        },
        4 => {
            // `.WIDE` and `.HI` read a 64-bit addend (a register pair, or a 64-bit immediate
            // or constant) without a modifier; `.WIDE` writes a pair.
            let mode = [ImadMode::Lo, ImadMode::Wide, ImadMode::Hi][pick(rng, 3)];
            let c = match mode {
                ImadMode::Lo => source(rng),
                ImadMode::Wide | ImadMode::Hi => src(match pick(rng, 4) {
                    0 => imm(rng()),
                    1 => Operand::Const { bank: 0, offset: 0 },
                    _ => reg(pick(rng, 7) as u16),
                }),
            };
            let d = match mode {
                ImadMode::Wide => r(pick(rng, 7) as u16),
                ImadMode::Lo | ImadMode::Hi => dst(rng),
            };
            Op::Imad {
                mode,
                signed: rng() % 2 == 0,
                dst: d,
                a: source(rng),
                b: source(rng),
                c,
            }
        }
        5 => Op::Lop3 {
            dst: dst(rng),
            pred_out: Pred::PT,
            a: source(rng),
            b: source(rng),
            c: source(rng),
            lut: rng() as u8,
        },
        6 | 7 => {
            let cmps = [
                CmpOp::Eq,
                CmpOp::Ne,
                CmpOp::Lt,
                CmpOp::Le,
                CmpOp::Gt,
                CmpOp::Ge,
            ];
            Op::SetP {
                cmp: cmps[pick(rng, 6)],
                ty: int32[pick(rng, 2)],
                combine: bools[pick(rng, 3)],
                dst: pred(rng),
                dst2: pred(rng),
                a: source(rng),
                b: source(rng),
                c: pred_src(rng),
                chain: None,
            }
        }
        8 => Op::PredLogic {
            op: bools[pick(rng, 3)],
            dst: pred(rng),
            a: pred_src(rng),
            b: pred_src(rng),
        },
        9 => Op::Select {
            ty: int32[pick(rng, 2)],
            dst: dst(rng),
            a: source(rng),
            b: source(rng),
            pred: pred_src(rng),
        },
        _ if rng() % 3 == 0 => Op::ReadSpecial {
            dst: dst(rng),
            sr: if rng() % 2 == 0 {
                SpecialReg::TidX
            } else {
                SpecialReg::LaneId
            },
        },
        _ => Op::Shf(ShfInst {
            left: rng() % 2 == 0,
            wrap: rng() % 2 == 0,
            high: rng() % 2 == 0,
            ty: [Ty::U32, Ty::S32, Ty::U64, Ty::S64][pick(rng, 4)],
            dst: dst(rng),
            lo: source(rng),
            shift: src(imm([0, 1, 5, 31, 32, 33, 40, 63, 64, 70][pick(rng, 10)])),
            hi: source(rng),
        }),
    };
    let guard = match pick(rng, 3) {
        0 => Guard {
            pred: p(pick(rng, 4) as u16),
            negate: rng() % 2 == 0,
        },
        _ => Guard::ALWAYS,
    };
    (guard, op)
}

/// A load through a warp-invariant address runs once for the warp before its region's chunk
/// loop (`simd/memory.rs`, `preload`): with its address from the region's own hoisted `MOV`s
/// and, in a second region, from the register file; in range and out of it, on full, partial
/// and sparse masks. SIMD, scalar code and the interpreter agree on the exit (a trap names the
/// lowest executing lane and the first load), memory and the counters, and every executing lane
/// (only those) gets the value: each adds what it loaded to memory.
#[test]
fn loads_through_an_invariant_address_run_once_per_warp() {
    let options = |simd: bool| JitOptions {
        simd,
        ..JitOptions::default()
    };
    for addr in [GLOBAL_BASE + 16, GLOBAL_BASE + 64, GLOBAL_BASE + 12, 8] {
        for mask in [FULL, 0x0000_ff00, 0x8000_0001] {
            let mut b = KernelBuilder::new();
            let load = |dst: u16| Op::Load {
                access: MemAccess {
                    space: Space::Global,
                    ty: Ty::U64,
                    vector: 1,
                    order: MemOrder::Weak,
                    scope: Scope::Cta,
                    addr: global_addr(2, 0),
                },
                dst: r(dst),
            };
            b.push(Op::Mov {
                ty: Ty::U32,
                dst: r(2),
                src: imm(addr & 0xffff_ffff),
            });
            b.push(Op::Mov {
                ty: Ty::U32,
                dst: r(3),
                src: imm(addr >> 32),
            });
            b.push(load(4));
            b.push(load(6));
            // Every executing lane adds the low word of its first load and the high word of
            // its second to the words at +8 and +12 (the loads' values are otherwise dead).
            for (dst_reg, offset) in [(4, 8), (7, 12)] {
                let access = MemAccess {
                    space: Space::Global,
                    ty: Ty::U32,
                    vector: 1,
                    order: MemOrder::Relaxed,
                    scope: Scope::Gpu,
                    addr: global_addr(2, offset),
                };
                b.push(vatom(access, AtomicOp::Add, Reg::RZ, dst_reg, None, false));
            }
            b.exit();
            // Validated: the uniformity analysis proves R2 and R3 warp-invariant.
            let (kernel, info) = validated(&b);
            assert!(info.invariant()[2] && info.invariant()[3], "{addr:#x}");
            let simd = compile_with(&kernel, &info, options(true)).unwrap();
            let scalar = compile_with(&kernel, &info, options(false)).unwrap();
            let interp = crate::interp::Interpreter::new();
            let mem = [1, 2, 0x1111_2222_3333_4444, 4, 5, 6, 7, 8];
            let runs: Vec<_> = [&simd as &dyn WarpRunner, &scalar, &interp]
                .into_iter()
                .map(|runner| run_on_memory(&kernel, &info, runner, mask, &mem, &|_| {}))
                .collect();
            let what = format!("address {addr:#x}, mask {mask:#x}");
            // (Registers are dead at the exit of a validated kernel: the JIT does not store
            // them, so the loads are seen through the atomics.)
            for run in &runs[1..] {
                assert_eq!(runs[0].0, run.0, "exit: {what}");
                assert_eq!(runs[0].2, run.2, "memory: {what}");
                assert_eq!(runs[0].1.stats, run.1.stats, "counters: {what}");
            }
            let lowest = mask.trailing_zeros();
            match addr {
                a if a == GLOBAL_BASE + 16 => {
                    assert_eq!(runs[0].0, GroupExit::Exited, "{what}");
                    let n = u64::from(mask.count_ones());
                    let lo = (4 + n * 0x3333_4444) & 0xffff_ffff;
                    let hi = (n * 0x1111_2222) & 0xffff_ffff;
                    assert_eq!(runs[0].2[3], lo | hi << 32, "{what}");
                }
                _ => {
                    let GroupExit::Trap(trap) = &runs[0].0 else {
                        panic!("no trap: {what}");
                    };
                    assert_eq!(
                        (trap.pc, trap.lane, trap.address),
                        (2, lowest, addr),
                        "{what}"
                    );
                }
            }
        }
    }
}

/// Random regions of vectorisable instructions run with SIMD lanes, without, and on the
/// interpreter, from random registers and predicates, on full, partial, sparse and short
/// masks: every register, predicate and counter must agree. The regions must really take the
/// vector path (their CLIF has `i32x4` arithmetic).
#[test]
fn vectorised_regions_match_the_scalar_code_and_the_interpreter() {
    let mut rng = splitmix(0x5eed_0001_u64);
    // FULL takes the whole-warp copy of the chunk loop; the others, one lane short of it
    // too, the general one.
    let masks = [
        FULL,
        0x7fff_ffff,
        0x0000_ff0f,
        0x8000_0001,
        0xaaaa_aaaa,
        0x0000_00f0,
        0x0000_ffff,
    ];
    let options = |simd: bool| JitOptions {
        simd,
        ..JitOptions::default()
    };
    let cases = 1000;
    let mut vectorised = 0;
    for case in 0..cases {
        let mut b = KernelBuilder::new();
        let len = 1 + (rng() % 8) as usize;
        for _ in 0..len {
            let (guard, op) = random_vector_inst(&mut rng);
            b.guarded(guard, op);
        }
        b.exit();
        let (kernel, info) = b.build();
        // The chunk loop builds its lane masks from an `i32x4` constant; the scalar code never
        // does (only invariant registers are splatted, and without constants).
        let clif = dump_clif_with(&kernel, &info, options(true)).unwrap();
        vectorised += usize::from(clif.contains("vconst.i32x4"));
        let scalar_clif = dump_clif_with(&kernel, &info, options(false)).unwrap();
        assert!(!scalar_clif.contains("vconst.i32x4"), "case {case}");
        let simd = compile_with(&kernel, &info, options(true)).unwrap();
        let scalar = compile_with(&kernel, &info, options(false)).unwrap();
        let interp = crate::interp::Interpreter::new();
        let regs: Vec<u32> = (0..8 * 32).map(|_| rng() as u32).collect();
        let preds: Vec<u32> = (0..4).map(|_| rng() as u32).collect();
        let mask = masks[case % masks.len()];
        let init = |w: &mut WarpState| {
            for (i, &v) in regs.iter().enumerate() {
                w.regs[i] = v;
            }
            w.preds[..4].copy_from_slice(&preds);
        };
        let runs: Vec<(GroupExit, WarpState, Vec<u64>)> =
            [&simd as &dyn WarpRunner, &scalar, &interp]
                .into_iter()
                .map(|runner| run_on_memory(&kernel, &info, runner, mask, &[0; 8], &init))
                .collect();
        for (name, run) in ["scalar jit", "interpreter"].iter().zip(&runs[1..]) {
            let what = format!("case {case}, mask {mask:#x}, SIMD jit vs {name}\n{clif}");
            assert_eq!(runs[0].0, run.0, "exit: {what}");
            assert_eq!(runs[0].1.regs, run.1.regs, "registers: {what}");
            assert_eq!(runs[0].1.preds, run.1.preds, "predicates: {what}");
            assert_eq!(runs[0].1.stats, run.1.stats, "counters: {what}");
        }
    }
    // Regions of nothing but warp-invariant writers have no lane loop to vectorise.
    assert!(
        vectorised * 10 >= cases * 8,
        "{vectorised} of {cases} regions vectorised"
    );
}

/// `SR_TID.X` in a vectorised region when the warp does not lie in the block's first row (a
/// block of 5 × 13 threads, warp 1): the vector code's per-lane remainder path, against the
/// scalar code and the interpreter, and against `(32 + lane) % 5` itself; with a partial
/// mask and with the whole warp (which must not take the whole-warp copy of the loop, where
/// `SR_TID.X` is the linear index).
#[test]
fn vectorised_tid_x_divides_when_the_warp_spans_rows() {
    let mut b = KernelBuilder::new();
    b.push(Op::ReadSpecial {
        dst: r(0),
        sr: SpecialReg::TidX,
    })
    .push(Op::Binary {
        op: BinOp::Add,
        ty: Ty::U32,
        dst: r(1),
        a: src(reg(0)),
        b: src(imm(100)),
        ftz: false,
    })
    .exit();
    let (kernel, info) = b.build();
    let options = |simd: bool| JitOptions {
        simd,
        ..JitOptions::default()
    };
    let simd = compile_with(&kernel, &info, options(true)).unwrap();
    let scalar = compile_with(&kernel, &info, options(false)).unwrap();
    let interp = crate::interp::Interpreter::new();
    let world = World::new(8, 0);
    let env = CtaEnv {
        kernel: &kernel,
        info: &info,
        global: &world.global,
        shared: &world.shared,
        cbank: &world.cbank,
        surfaces: &[],
        ctaid: [0, 0, 0],
        ntid: [5, 13, 1],
        nctaid: [1, 1, 1],
    };
    for mask in [0xffff_fff0, FULL] {
        let mut warps = Vec::new();
        for runner in [&simd as &dyn WarpRunner, &scalar, &interp] {
            let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 1, FULL);
            assert_eq!(
                runner.run_group(&mut warp, &env, 0, mask, None),
                GroupExit::Exited
            );
            warps.push(warp);
        }
        for lane in 0..32 {
            let want = if mask >> lane & 1 == 1 {
                (32 + lane as u32) % 5
            } else {
                0
            };
            assert_eq!(
                reg_of(&warps[0], 0, lane),
                want,
                "mask {mask:#x}, lane {lane}"
            );
            assert_eq!(reg_of(&warps[0], 1, lane), want + 100 * (mask >> lane & 1));
        }
        assert_eq!(warps[0].regs, warps[1].regs, "SIMD vs scalar");
        assert_eq!(warps[0].regs, warps[2].regs, "SIMD vs interpreter");
    }
}

/// A SplitMix64 generator seeded with `seed`: the random cases of the SIMD tests.
fn splitmix(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The one load or store of a vectorised region (`translate/simd/memory.rs`): random regions
/// computing per-lane addresses with vector `S2R`/`IMAD`/`IMAD.WIDE` (contiguous, reversed,
/// strided, repeated and warp-invariant addresses, aligned or not, running off the end of
/// memory), in the global, shared and generic spaces, of every size and vector width, weak
/// and relaxed, guarded or not, under full and partial masks. The SIMD JIT must agree with
/// the scalar JIT and the interpreter on the exit (a trap's lane, address and reason), every
/// register and predicate, the counters and every byte of global and shared memory; most
/// cases must really run vector code, and the contiguous path must really be taken.
#[test]
fn vectorised_memory_accesses_match_the_scalar_code_and_the_interpreter() {
    let mut rng = splitmix(0x5eed_0002_u64);
    const BYTES: u64 = 512;
    let masks = [
        FULL,
        FULL,
        FULL,
        0x0000_ff0f,
        0xffff_fff7,
        0x8000_0001,
        0x0000_00f0,
    ];
    let types = [
        (Ty::U32, 1),
        (Ty::U32, 1),
        (Ty::U64, 1),
        (Ty::U64, 1),
        (Ty::B32, 2),
        (Ty::F32, 1),
        (Ty::U8, 1),
        (Ty::S16, 1),
        (Ty::U32, 4),
    ];
    let options = |simd: bool| JitOptions {
        simd,
        ..JitOptions::default()
    };
    let cases = 400;
    let (mut vectorised, mut contiguous_runs, mut traps) = (0, 0, 0);
    for case in 0..cases {
        let (ty, vector) = types[(rng() % types.len() as u64) as usize];
        let size = ty.bytes() * u32::from(vector);
        let space = [Space::Global, Space::Global, Space::Shared, Space::Generic][case % 4];
        let store = rng() % 2 == 0;
        let order = if rng() % 5 == 0 {
            MemOrder::Relaxed
        } else {
            MemOrder::Weak
        };
        // Lane l's address: start + l * stride (in bytes), or one invariant address.
        let start = [0u64, 0, 4, 8, 64, 256, 384, 2, 1, 500][(rng() % 10) as usize];
        let s = i64::from(size);
        let stride = [s, s, s, -s, 2 * s, 0, 3 * s][(rng() % 7) as usize];
        let first = if stride < 0 {
            start + 31 * size as u64
        } else {
            start
        };
        let invariant = rng() % 6 == 0;
        let base = match space {
            Space::Global => GLOBAL_BASE + first,
            Space::Shared => first,
            Space::Generic | Space::Const => crate::ir::GENERIC_SHARED_BASE + first,
        };
        let mut b = KernelBuilder::new();
        b.lane_id(0);
        // Sometimes a gap of `gap` elements after every chunk of four lanes: the chunks are
        // contiguous, but no chunk continues the one before (`Run`). Lane l's index is then
        // `l + (l / 4) * gap`.
        let gap = [0u64, 0, 0, 1, 2][(rng() % 5) as usize];
        let index = if gap == 0 {
            reg(0)
        } else {
            b.push(bin_u32(BinOp::Shr, 1, reg(0), imm(2)));
            b.push(Op::Imad {
                mode: ImadMode::Lo,
                signed: false,
                dst: r(1),
                a: src(reg(1)),
                b: src(imm(gap)),
                c: src(reg(0)),
            });
            reg(1)
        };
        let wide = space != Space::Shared;
        if invariant {
            b.push(Op::Mov {
                ty: Ty::U32,
                dst: r(2),
                src: imm(base & 0xffff_ffff),
            });
            if wide {
                b.push(Op::Mov {
                    ty: Ty::U32,
                    dst: r(3),
                    src: imm(base >> 32),
                });
            }
        } else if wide {
            b.push(Op::Imad {
                mode: ImadMode::Wide,
                signed: true,
                dst: r(2),
                a: src(index),
                b: src(imm(stride as u64 & 0xffff_ffff)),
                c: src(imm(base)),
            });
        } else {
            b.push(Op::Imad {
                mode: ImadMode::Lo,
                signed: false,
                dst: r(2),
                a: src(index),
                b: src(imm(stride as u64 & 0xffff_ffff)),
                c: src(imm(base)),
            });
        }
        let offset = [0i64, 0, 4, -4][(rng() % 4) as usize] * i64::from(size.min(8));
        let addr = if wide {
            global_addr(2, offset)
        } else {
            shared_addr(2, offset)
        };
        let access = MemAccess {
            space,
            ty,
            vector,
            order,
            scope: Scope::Gpu,
            addr,
        };
        let guard = if rng() % 4 == 0 {
            Guard {
                pred: Pred(0),
                negate: rng() % 2 == 0,
            }
        } else {
            Guard::ALWAYS
        };
        // Sometimes the region itself writes the guard first (`P0 = lane < k`), so the
        // access's lanes come from the chunk's predicate vector, not from the mask.
        let guard_written = !guard.is_always() && rng() % 2 == 0;
        if guard_written {
            b.push(set_lt(p(0), 0, rng() % 33));
        }
        if store {
            b.guarded(
                guard,
                Op::Store {
                    access,
                    src: reg(8),
                },
            );
        } else {
            b.guarded(guard, Op::Load { access, dst: r(8) });
        }
        // Something after the access that reads what a load wrote.
        b.push(Op::Binary {
            op: BinOp::Add,
            ty: Ty::U32,
            dst: r(12),
            a: src(reg(8)),
            b: src(reg(9)),
            ftz: false,
        });
        b.exit();
        let (kernel, info) = b.build();
        let clif = dump_clif_with(&kernel, &info, options(true)).unwrap();
        vectorised += usize::from(clif.contains("i32x4"));
        contiguous_runs += usize::from(clif.contains("vall_true"));
        let simd = compile_with(&kernel, &info, options(true)).unwrap();
        let scalar = compile_with(&kernel, &info, options(false)).unwrap();
        let interp = crate::interp::Interpreter::new();
        let regs: Vec<u32> = (0..16 * 32).map(|_| rng() as u32).collect();
        let pred0 = rng() as u32;
        let global: Vec<u64> = (0..BYTES / 8).map(|_| rng()).collect();
        let shared: Vec<u32> = (0..BYTES / 4).map(|_| rng() as u32).collect();
        let mask = masks[case % masks.len()];
        let run = |runner: &dyn WarpRunner| {
            let world = World::new(BYTES, BYTES as u32);
            for (i, &v) in global.iter().enumerate() {
                world.set_global(8 * i, 8, v);
            }
            for (i, &v) in shared.iter().enumerate() {
                world.set_shared_u32(4 * i, v);
            }
            let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
            warp.regs[..regs.len()].copy_from_slice(&regs);
            warp.preds[0] = pred0;
            let exit = world.run_warp(&kernel, &info, runner, &mut warp, 0, mask, None);
            let g: Vec<u64> = (0..BYTES as usize / 8)
                .map(|i| world.global_u64(8 * i))
                .collect();
            let s: Vec<u32> = (0..BYTES as usize / 4)
                .map(|i| world.shared_u32(4 * i))
                .collect();
            (exit, warp, g, s)
        };
        let runs = [run(&simd), run(&scalar), run(&interp)];
        for (name, other) in ["scalar jit", "interpreter"].iter().zip(&runs[1..]) {
            let what = format!(
                "case {case}: {space:?} {ty:?}x{vector} {order:?} store {store}, start {start}, \
                 stride {stride}, gap {gap}, offset {offset}, invariant {invariant}, \
                 guard {guard:?} (written {guard_written}), mask {mask:#x}: SIMD jit vs \
                 {name}\n{clif}"
            );
            assert_eq!(runs[0].0, other.0, "exit: {what}");
            // A trapped launch exposes memory, not registers: lane-major, chunk-major and
            // instruction-major orders leave different register work done before the fault.
            if !matches!(runs[0].0, GroupExit::Trap(_)) {
                assert_eq!(runs[0].1.regs, other.1.regs, "registers: {what}");
                assert_eq!(runs[0].1.preds, other.1.preds, "predicates: {what}");
            } else {
                traps += 1;
            }
            assert_eq!(runs[0].1.stats, other.1.stats, "counters: {what}");
            assert_eq!(runs[0].2, other.2, "global memory: {what}");
            assert_eq!(runs[0].3, other.3, "shared memory: {what}");
        }
    }
    assert!(
        vectorised * 10 >= cases * 9,
        "{vectorised} of {cases} regions vectorised"
    );
    assert!(
        contiguous_runs * 3 >= cases,
        "{contiguous_runs} of {cases} accesses have a contiguous path"
    );
    // Both directions are exercised: faults (each against two backends) and clean runs.
    assert!(
        traps >= 40 && traps <= 2 * cases - 40,
        "{traps} trapped runs"
    );
}

/// A vectorised region's unguarded write that is not stored skips the blend with the
/// register's old value, so its vector holds the new value in lanes outside the region's mask
/// too. A later write of the same register that is stored must still leave those lanes' slots
/// untouched: `R5 = R7 + 1` (loose), `R5 += 2` (stored: a guarded rewrite follows),
/// `@P0 R5 += 4` (stored: read after), `R6 = R5 + 1`; and a guarded write blends: `@!P0
/// R7 = lane + 100` keeps `R7 = lane + 9` where `P0` (`lane < 13`) is set. On partial masks,
/// every register of every lane outside the mask keeps its value on both backends, and the
/// lanes inside get the values the program computes.
#[test]
fn a_loose_vector_value_never_reaches_the_slots_of_lanes_outside_the_region() {
    let add = |dst: u16, a: Operand, k: u64| bin_u32(BinOp::Add, dst, a, imm(k));
    let mut b = KernelBuilder::new();
    b.lane_id(0).push(set_lt(p(0), 0, 13));
    b.push(add(7, reg(0), 9))
        .when(0, true, add(7, reg(0), 100))
        .push(add(5, reg(7), 1))
        .push(add(5, reg(5), 2))
        .when(0, false, add(5, reg(5), 4))
        .push(add(6, reg(5), 1));
    b.exit();
    let (kernel, info) = validated(&b);
    let clif = dump_clif_with(&kernel, &info, JitOptions::default()).unwrap();
    assert!(clif.contains("i32x4"), "the region is vector code\n{clif}");
    let jit = compile(&kernel, &info).unwrap();
    let interp = crate::interp::Interpreter::new();
    let mut rng = splitmix(0x5eed_0003);
    let regs: Vec<u32> = (0..kernel.num_regs * 32).map(|_| rng() as u32).collect();
    let init = |w: &mut WarpState| w.regs[..regs.len()].copy_from_slice(&regs);
    for mask in [
        0x0000_ff0f,
        0x8000_0001,
        0xaaaa_aaaa,
        0x0000_00f0,
        0xffff_fff7,
    ] {
        let runs = [&jit as &dyn WarpRunner, &interp]
            .map(|runner| run_on_memory(&kernel, &info, runner, mask, &[0; 8], &init));
        for (name, (exit, warp, _)) in ["jit", "interpreter"].iter().zip(&runs) {
            assert_eq!(*exit, GroupExit::Exited, "{name}, mask {mask:#x}");
            for (i, (&got, &was)) in warp.regs.iter().zip(&regs).enumerate() {
                let lane = i % 32;
                if mask >> lane & 1 == 0 {
                    assert_eq!(
                        got,
                        was,
                        "{name}, mask {mask:#x}: R{} of lane {lane}",
                        i / 32
                    );
                }
            }
        }
        // The lanes inside: R5 is stored (the guarded rewrite and its reader need it).
        for lane in (0..32).filter(|l| mask >> l & 1 != 0) {
            let want = lane + 3 + if lane < 13 { 9 + 4 } else { 100 };
            for (name, (_, warp, _)) in ["jit", "interpreter"].iter().zip(&runs) {
                assert_eq!(
                    warp.regs[5 * 32 + lane as usize],
                    want,
                    "{name}, lane {lane}"
                );
            }
        }
    }
}

#[test]
fn only_the_first_regions_with_memory_of_a_function_are_vector_code() {
    // Twelve stores, each its own region: while VECTOR_MEMORY_LOOPS leaves room, a region
    // gets both copies of the vector loop (whole warps and other masks, one contiguity test
    // each, `vall_true`), the rest the scalar lane loop.
    let mut b = KernelBuilder::new();
    for i in 0..12 {
        b.push(crate::ir::build::store(
            Space::Global,
            Ty::U32,
            reg(0),
            global_addr(4, 4 * i),
        ));
    }
    b.exit();
    let (kernel, info) = b.build();
    let text = dump_clif(&kernel, &info).unwrap();
    let loops = super::translate::VECTOR_MEMORY_LOOPS as usize;
    assert_eq!(text.matches("vall_true").count(), loops, "{text}");
    // Each of them tests its mask for a whole warp once (`icmp eq mask, -1`).
    let whole_warp_tests = text
        .lines()
        .filter(|l| l.contains("icmp.i32 eq") && l.ends_with(" = -1"))
        .count();
    assert_eq!(whole_warp_tests, loops / 2, "{text}");
}

// ---- regions with two loads, and peeled loop heads ---------------------------------------

/// A weak 64-bit global load of `dst` through the register pair `base` (plus `offset`).
fn load_u64(dst: u16, base: u16, offset: i64) -> Op {
    Op::Load {
        access: MemAccess {
            space: Space::Global,
            ty: Ty::U64,
            vector: 1,
            order: MemOrder::Weak,
            scope: Scope::Cta,
            addr: global_addr(base, offset),
        },
        dst: r(dst),
    }
}

/// A relaxed 32-bit `ATOM.ADD` of register `src` to the arena word at `offset` (the arena's
/// base is in `R10:R11`).
fn add_to_arena(src_reg: u16, offset: i64) -> Op {
    let access = MemAccess {
        space: Space::Global,
        ty: Ty::U32,
        vector: 1,
        order: MemOrder::Relaxed,
        scope: Scope::Gpu,
        addr: global_addr(10, offset),
    };
    vatom(access, AtomicOp::Add, Reg::RZ, src_reg, None, false)
}

/// A per-lane load and, after it, a load through a warp-invariant address share one vector
/// region, the second loaded once before the chunk loop (`simd/memory.rs`, `preload`). Each
/// lane loads the arena's u64 `lane & 3` (lane `bad` 64 bytes further: out of the 64-byte
/// arena) and the u64 at `uaddr`, and adds the low word of the first and the high word of the
/// second to the words at 48 and 56. When both loads fault, instruction order says the per-lane
/// load's lowest faulting lane traps, not the invariant load that ran first: the preload's
/// fault hands the group to the interpreter. With an instruction that has no vector
/// translation in the region, the JIT splits it at the second load. SIMD, scalar code and the
/// interpreter agree on the exit, memory and counters, and they match the program.
#[test]
fn a_per_lane_load_and_an_invariant_load_share_a_region_and_trap_in_instruction_order() {
    let options = |simd: bool| JitOptions {
        simd,
        ..JitOptions::default()
    };
    let cases = [GLOBAL_BASE + 32, GLOBAL_BASE + 64, GLOBAL_BASE + 36]
        .into_iter()
        .flat_map(|u| [None, Some(9u32), Some(0), Some(31)].map(|bad| (u, bad)));
    for ((uaddr, bad), vector) in cases.flat_map(|c| [(c, true), (c, false)]) {
        {
            let mut b = KernelBuilder::new();
            b.lane_id(0);
            mov_arena_base(&mut b, 10);
            if !vector {
                // A high multiply has no vector translation: the region is scalar code, which
                // runs the two loads as two regions.
                b.push(bin_u32(BinOp::MulHi, 12, reg(0), reg(0)));
            }
            b.push(bin_u32(BinOp::And, 1, reg(0), imm(3)));
            b.push(Op::Imad {
                mode: ImadMode::Wide,
                signed: false,
                dst: r(8),
                a: src(reg(1)),
                b: src(imm(8)),
                c: src(reg(10)),
            });
            if let Some(lane) = bad {
                b.push(set_eq(p(1), 0, u64::from(lane)));
                b.when(1, false, bin_u32(BinOp::Add, 8, reg(8), imm(64)));
            }
            let per_lane = b.insts.len() as u32;
            b.push(load_u64(4, 8, 0));
            for (dst, half) in [(2, uaddr & 0xffff_ffff), (3, uaddr >> 32)] {
                b.push(Op::Mov {
                    ty: Ty::U32,
                    dst: r(dst),
                    src: imm(half),
                });
            }
            let invariant = b.insts.len() as u32;
            b.push(load_u64(6, 2, 0));
            b.push(add_to_arena(4, 48)).push(add_to_arena(7, 56));
            b.exit();
            let (kernel, info) = build_proven(&b);
            assert!(info.invariant()[2] && info.invariant()[3]);
            // One region holds both loads, and it is vector code.
            let plan = plan_of(&kernel, &info, translate::CHUNK_INSTS);
            assert!(
                plan.regions
                    .iter()
                    .any(|g| g.contains(&(per_lane as usize)) && g.contains(&(invariant as usize))),
                "{:?}",
                plan.regions
            );
            if vector {
                let clif = dump_clif_with(&kernel, &info, options(true)).unwrap();
                assert!(clif.contains("i32x4"), "{clif}");
            }
            let simd = compile_with(&kernel, &info, options(true)).unwrap();
            let scalar = compile_with(&kernel, &info, options(false)).unwrap();
            let interp = crate::interp::Interpreter::new();
            let mem = [
                0x1111_0001_0000_0010,
                0x2222_0002_0000_0200,
                0x3333_0003_0000_3000,
                0x4444_0004_0004_0000,
                0x0005_0000_dead_beef,
                0x0006_0000_0000_0000,
                0x0000_0007_0000_0000,
                0x0000_0008_0000_0000,
            ];
            for mask in [FULL, 0x0000_ff00, 0x8000_0001, 0xaaaa_aaaa] {
                let runs: Vec<_> = [&simd as &dyn WarpRunner, &scalar, &interp]
                    .into_iter()
                    .map(|runner| run_on_memory(&kernel, &info, runner, mask, &mem, &|_| {}))
                    .collect();
                let what =
                    format!("uaddr {uaddr:#x}, bad lane {bad:?}, mask {mask:#x}, vector {vector}");
                for (name, run) in ["scalar", "interpreter"].iter().zip(&runs[1..]) {
                    assert_eq!(runs[0].0, run.0, "exit, simd / {name}: {what}");
                    assert_eq!(runs[0].2, run.2, "memory, simd / {name}: {what}");
                    assert_eq!(
                        runs[0].1.stats, run.1.stats,
                        "counters, simd / {name}: {what}"
                    );
                }
                let bad_lane = bad.filter(|&l| mask >> l & 1 != 0);
                match (bad_lane, uaddr == GLOBAL_BASE + 32) {
                    (Some(l), _) => {
                        let GroupExit::Trap(trap) = &runs[0].0 else {
                            panic!("no trap: {what}");
                        };
                        let address = GLOBAL_BASE + 8 * u64::from(l & 3) + 64;
                        assert_eq!((trap.pc, trap.lane, trap.address), (per_lane, l, address));
                    }
                    (None, false) => {
                        let GroupExit::Trap(trap) = &runs[0].0 else {
                            panic!("no trap: {what}");
                        };
                        let lowest = mask.trailing_zeros();
                        assert_eq!(
                            (trap.pc, trap.lane, trap.address),
                            (invariant, lowest, uaddr)
                        );
                    }
                    (None, true) => {
                        assert_eq!(runs[0].0, GroupExit::Exited, "{what}");
                        let lanes = (0..32).filter(|l| mask >> l & 1 != 0);
                        let sum: u64 = lanes.map(|l| mem[l & 3] & 0xffff_ffff).sum();
                        let n = u64::from(mask.count_ones());
                        let lo48 = (mem[6] + sum) & 0xffff_ffff;
                        let lo56 = (mem[7] + n * (mem[4] >> 32)) & 0xffff_ffff;
                        assert_eq!(runs[0].2[6] & 0xffff_ffff, lo48, "{what}");
                        assert_eq!(runs[0].2[7] & 0xffff_ffff, lo56, "{what}");
                        assert_eq!(runs[0].2[6] >> 32, mem[6] >> 32, "{what}");
                    }
                }
            }
        }
    }
}

/// A loop head reached by falling through is peeled into the region before it: the kernel's
/// first region runs `0..6` (the set-up and the loop head's first pass) and the head `3..6`
/// is translated again for the back edge. Each lane sums `lane + 1 ..= 7` (one pass, `lane +
/// 1`, from lane 7 on: a do-while) and stores the sum to the arena word of its lane; on full,
/// partial and sparse masks, SIMD and scalar code and the interpreter store exactly that.
#[test]
fn a_loop_head_reached_by_falling_through_runs_in_the_region_before_it() {
    let options = |simd: bool| JitOptions {
        simd,
        ..JitOptions::default()
    };
    let mut b = KernelBuilder::new();
    b.lane_id(0)
        .push(Op::Mov {
            ty: Ty::U32,
            dst: r(2),
            src: imm(0),
        })
        .push(bin_u32(BinOp::Add, 1, reg(0), imm(1)))
        // loop (3): R2 += R1; R1 += 1; while R1 < 8.
        .push(bin_u32(BinOp::Add, 2, reg(2), reg(1)))
        .push(bin_u32(BinOp::Add, 1, reg(1), imm(1)))
        .push(set_lt(p(0), 1, 8))
        .when(
            0,
            false,
            Op::Branch {
                target: 3,
                uniform: false,
            },
        );
    mov_arena_base(&mut b, 10);
    b.push(Op::Imad {
        mode: ImadMode::Wide,
        signed: false,
        dst: r(4),
        a: src(reg(0)),
        b: src(imm(4)),
        c: src(reg(10)),
    })
    .push(crate::ir::build::store(
        Space::Global,
        Ty::U32,
        reg(2),
        global_addr(4, 0),
    ))
    .exit()
    .join(6, 7);
    let (kernel, info) = b.build();
    let plan = plan_of(&kernel, &info, translate::CHUNK_INSTS);
    assert!(
        plan.regions.contains(&(0..6)) && plan.regions.contains(&(3..6)),
        "{:?}",
        plan.regions
    );
    assert!(plan.resume[6], "both copies continue at the branch");
    // The same regions, scalar, without SIMD lanes.
    let scalar_plan = translate::Plan::new(&kernel, &info, &options(false));
    assert_eq!(plan.regions, scalar_plan.regions);
    let simd = compile_with(&kernel, &info, options(true)).unwrap();
    let scalar = compile_with(&kernel, &info, options(false)).unwrap();
    let interp = crate::interp::Interpreter::new();
    for mask in [FULL, 0x0000_ff0f, 0x8000_0001, 0xaaaa_aaaa, 0x0000_0080] {
        for (name, runner) in [
            ("simd", &simd as &dyn WarpRunner),
            ("scalar", &scalar),
            ("interpreter", &interp),
        ] {
            let world = World::new(128, 0);
            let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
            let exit = world.run_warp(&kernel, &info, runner, &mut warp, 0, mask, None);
            assert_eq!(exit, GroupExit::Exited, "{name}, mask {mask:#x}");
            for lane in 0..32u64 {
                let want = match lane {
                    _ if mask >> lane & 1 == 0 => 0,
                    0..7 => 28 - lane * (lane + 1) / 2,
                    _ => lane + 1,
                };
                assert_eq!(
                    world.global_u32(4 * lane as usize),
                    want as u32,
                    "{name}, mask {mask:#x}, lane {lane}"
                );
            }
        }
    }
}

/// A region that ends at a reconvergence point is not merged with the one after it, although
/// the instructions fall through: the group of the branch's fall-through side, whose stop pc
/// the join is, must return there. `0: R0 = lane; 1: P0 = R0 < 16; 2: @P0 BRA 5; 3: R1 = R0 +
/// 1; 4: R1 += 2; 5 (join): R2 = R0 + 3; 6: R2 += 4; 7: EXIT`.
#[test]
fn a_region_before_a_join_stops_there_for_the_group_that_reconverges() {
    let add = |dst: u16, a: u16, k: u64| bin_u32(BinOp::Add, dst, reg(a), imm(k));
    let mut b = KernelBuilder::new();
    b.lane_id(0)
        .push(set_lt(p(0), 0, 16))
        .when(
            0,
            false,
            Op::Branch {
                target: 5,
                uniform: false,
            },
        )
        .push(add(1, 0, 1))
        .push(add(1, 1, 2))
        .push(add(2, 0, 3))
        .push(add(2, 2, 4))
        .exit()
        .join(2, 5);
    let (kernel, info) = b.build();
    let plan = plan_of(&kernel, &info, translate::CHUNK_INSTS);
    assert!(plan.regions.contains(&(3..5)), "{:?}", plan.regions);
    let world = World::new(8, 0);
    let jit = compile(&kernel, &info).unwrap();
    let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
    // The fall-through side: lanes 16.. at pc 3, stopping at the join.
    let exit = world.run(&kernel, &info, &jit, &mut warp, 3, 0xffff_0000, Some(5));
    assert_eq!(exit, GroupExit::Reconverge { mask: 0xffff_0000 });
    assert_eq!(warp.stats.warp_insts, 2);
    for lane in 0..32 {
        assert_eq!(
            reg_of(&warp, 2, lane),
            0,
            "lane {lane}: R2 is written after the join"
        );
    }
    // And the whole kernel as the interpreter runs it, on full and partial masks.
    for mask in [FULL, 0x0001_ffff, 0xffff_0000] {
        let warp = run_both(&b, mask, |_| {});
        for lane in (0..32).filter(|l| mask >> l & 1 != 0) {
            assert_eq!(reg_of(&warp, 2, lane), lane as u32 + 7);
        }
    }
}

// ---- lane-affine addresses in whole-warp chunks ------------------------------------------

/// Lane-affine addresses (`translate/simd/affine.rs`): a whole warp's 64-bit loads through
/// `IMAD.WIDE.U32 R2, R1, 8, c` where `R1` is `SR_LANEID + k`, so that chunk 0's lanes load
/// the arena's first four words and start a run, and chunk 1's lane 0 address is the one the
/// run expects. Chunk 1 must still take the run only when its lanes really are contiguous:
/// not when `R1` wraps inside the chunk (`k = 2^32 - 6`: lane 6's factor is 0, far from the
/// arena), not when a guarded write left one lane's `R1` out of the pattern, not when an
/// unrecognised write replaced the affine value (these two with `k = 256`, far from a wrap),
/// and not when the signed `IMAD.WIDE` NVIDIA's compilers emit (by a register holding 8)
/// sees its factor pass `2^31 - 1` inside the chunk. Each case faults at exactly one lane, as
/// the interpreter does, with the chunks before it loaded.
#[test]
fn a_lane_affine_address_continues_a_run_only_where_its_lanes_are_contiguous() {
    let lane_id = Op::ReadSpecial {
        dst: r(0),
        sr: SpecialReg::LaneId,
    };
    let add = |dst: u16, a: Operand, b: Operand| bin_u32(BinOp::Add, dst, a, b);
    let wide = |c: u64| Op::Imad {
        mode: ImadMode::Wide,
        signed: false,
        dst: r(2),
        a: src(reg(1)),
        b: src(imm(8)),
        c: src(imm(c)),
    };
    // Lane `j`'s factor is `j + k`; `c` puts factor `k` at the arena's first word.
    let k: u64 = 0xffff_fffa;
    let c = GLOBAL_BASE.wrapping_sub(8 * k);
    // The other cases keep far from the wrap.
    let k2: u64 = 0x100;
    let c2 = GLOBAL_BASE.wrapping_sub(8 * k2);
    // As NVIDIA's compilers write it: the factor in a register set by `IMAD.MOV.U32`, and a
    // signed `IMAD.WIDE`, whose lane 6 factor passes 2^31 - 1 (sign-extended, far below).
    let ks: u64 = 0x7fff_fffa;
    let cs = GLOBAL_BASE.wrapping_sub(8 * ks);
    let signed_wide = Op::Imad {
        mode: ImadMode::Wide,
        signed: true,
        dst: r(2),
        a: src(reg(1)),
        b: src(reg(3)),
        c: src(imm(cs)),
    };
    let set_r3_to_8 = Op::Imad {
        mode: ImadMode::Lo,
        signed: false,
        dst: r(3),
        a: src(reg(Reg::RZ.0)),
        b: src(reg(Reg::RZ.0)),
        c: src(imm(8)),
    };
    let always = Guard::ALWAYS;
    let at_p0 = Guard {
        pred: p(0),
        negate: false,
    };
    // Each case: the instructions between `S2R R0, SR_LANEID` and the load through R2:R3,
    // and the lane that faults.
    let cases = [
        (
            "wraps",
            vec![(always, add(1, reg(0), imm(k))), (always, wide(c))],
            6,
        ),
        // Lane 5 keeps its old R1 (0): its address is `c2`, far below the arena.
        (
            "guarded",
            vec![(at_p0, add(1, reg(0), imm(k2))), (always, wide(c2))],
            5,
        ),
        // `R1 ^= R9` with R9 zero but in lane 5.
        (
            "rewritten",
            vec![
                (always, add(1, reg(0), imm(k2))),
                (always, bin_u32(BinOp::Xor, 1, reg(1), reg(9))),
                (always, wide(c2)),
            ],
            5,
        ),
        (
            "signed",
            vec![
                (always, add(1, reg(0), imm(ks))),
                (always, set_r3_to_8),
                (always, signed_wide),
            ],
            6,
        ),
    ];
    let mem: [u64; 8] = std::array::from_fn(|i| 0x1111_0000_0000 * (i as u64 + 1) + 7);
    let init = |w: &mut WarpState| {
        w.preds[0] = !(1 << 5);
        set_reg(w, 9, 5, 0x40);
    };
    for (name, middle, lane) in cases {
        let mut b = KernelBuilder::new();
        b.push(lane_id.clone());
        for (guard, op) in middle.iter().cloned() {
            b.guarded(guard, op);
        }
        let load_pc = b.insts.len() as u32;
        b.push(load_u64(4, 2, 0)).exit();
        let (kernel, info) = b.build();
        let jit = compile(&kernel, &info).unwrap();
        let interp = crate::interp::Interpreter::new();
        let runs: Vec<_> = [&jit as &dyn WarpRunner, &interp]
            .into_iter()
            .map(|runner| run_on_memory(&kernel, &info, runner, FULL, &mem, &init))
            .collect();
        let GroupExit::Trap(info) = &runs[0].0 else {
            panic!("{name}: {:?}", runs[0].0);
        };
        assert_eq!(
            (info.lane, info.reason, info.pc),
            (lane, TrapReason::AddressOutOfRange, load_pc),
            "{name}"
        );
        assert_eq!(runs[0].0, runs[1].0, "{name}: jit vs interpreter");
        // The region runs four lanes at a time: the chunks before the fault's loaded theirs.
        for (l, &want) in mem.iter().enumerate().take(lane as usize & !3) {
            let got =
                u64::from(reg_of(&runs[0].1, 4, l)) | u64::from(reg_of(&runs[0].1, 5, l)) << 32;
            assert_eq!(got, want, "{name}: lane {l}");
        }
    }
}

/// `0: R0 = lane; 1: P0 = R0 < 16; 2: R1 = R0 << 2; 3: P1 = R0 == fault; 4: @P1 R1 = 128`
/// (past a 128-byte window), then two shared atomics at `[R1]`: 5, under `first`, adding 1;
/// 6, under `second`, adding 10; then `EXIT`.
fn two_messages(first: Guard, second: Guard, fault: u64) -> KernelBuilder {
    let mut b = KernelBuilder::new();
    let atom = |add: u64| {
        Op::Atomic(Box::new(AtomicInst {
            access: MemAccess {
                space: Space::Shared,
                ty: Ty::U32,
                vector: 1,
                order: MemOrder::Relaxed,
                scope: Scope::Cta,
                addr: shared_addr(1, 0),
            },
            op: AtomicOp::Add,
            dst: Reg::RZ,
            src: imm(add),
            src2: None,
            spin: false,
            ftz: false,
            performed: Pred::PT,
        }))
    };
    b.lane_id(0)
        .push(set_lt(p(0), 0, 16))
        .push(bin_u32(BinOp::Shl, 1, reg(0), imm(2)))
        .push(set_eq(p(1), 0, fault))
        .when(
            1,
            false,
            Op::Mov {
                ty: Ty::U32,
                dst: r(1),
                src: imm(128),
            },
        )
        .guarded(first, atom(1))
        .guarded(second, atom(10))
        .exit();
    b
}

#[test]
fn accesses_in_lane_order_share_a_region_and_a_fault_finds_the_earlier_ones_done() {
    // A guard no lane set is known for (P2 = R5 < 16, R5 written nowhere) orders nothing.
    let p2 = Guard {
        pred: p(2),
        negate: false,
    };
    let mut b = two_messages(p2, Guard::ALWAYS, 99);
    b.insts.insert(0, b.insts[1].clone());
    b.insts[0].op = set_lt(p(2), 5, 16);
    let (kernel, mut info) = b.build();
    info.prove_invariant(&kernel);
    assert_eq!(info.guard_lanes(p2, 32), None);
    let plan = translate::Plan::new(&kernel, &info, &JitOptions::default());
    assert!(
        !plan
            .regions
            .iter()
            .any(|r| r.contains(&6) && r.contains(&7)),
        "{:?}",
        plan.regions
    );

    let p0 = Guard {
        pred: p(0),
        negate: false,
    };
    let not_p0 = Guard {
        pred: p(0),
        negate: true,
    };
    // Lanes 0-15, then lanes 16-31: one region; the other way round: the two accesses in
    // regions of their own.
    for (first, second, fused) in [(p0, not_p0, true), (not_p0, p0, false)] {
        // Whole runs, then lane 20's or lane 3's address past the window.
        for fault in [None, Some(20usize), Some(3)] {
            let b = two_messages(first, second, fault.map_or(99, |f| f as u64));
            let (kernel, mut info) = b.build();
            info.prove_invariant(&kernel);
            let plan = translate::Plan::new(&kernel, &info, &JitOptions::default());
            let together = plan
                .regions
                .iter()
                .any(|r| r.contains(&5) && r.contains(&6));
            assert_eq!(
                together, fused,
                "{first:?} then {second:?}: {:?}",
                plan.regions
            );
            let jit = compile_with(&kernel, &info, JitOptions::default()).unwrap();
            let interp = crate::interp::Interpreter::new();
            // A partial group leaves the other lanes' predicate bits (the lane-constant P0 is
            // written for the region's lanes before its loop) and memory words alone.
            let partial = [0x0ff0_f00f, 0x0000_ffff, 0xffff_0000];
            for &mask in &partial {
                let mut outcomes = Vec::new();
                for runner in [&jit as &dyn WarpRunner, &interp] {
                    let world = World::new(8, 128);
                    let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
                    warp.preds[0] = 0xa5a5_5a5a;
                    let exit = world.run_warp(&kernel, &info, runner, &mut warp, 0, mask, None);
                    let words: Vec<u32> = (0..32).map(|l| world.shared_u32(4 * l)).collect();
                    outcomes.push((exit, words, warp.stats.clone(), warp.preds.clone()));
                }
                // (A trapped launch exposes no registers or predicates, and a fused region's
                // predicates are stored after its loop.)
                if fault.is_some() {
                    for o in &mut outcomes {
                        o.3.clear();
                    }
                } else {
                    assert_eq!(outcomes[0].3[0], (0xa5a5_5a5a & !mask) | (0xffff & mask));
                }
                assert_eq!(outcomes[0], outcomes[1], "mask {mask:#x}, fault {fault:?}");
            }
            let mut outcomes = Vec::new();
            for runner in [&jit as &dyn WarpRunner, &interp] {
                let world = World::new(8, 128);
                let mut warp = WarpState::new(kernel.num_regs, kernel.num_preds, 0, FULL);
                let exit = world.run_warp(&kernel, &info, runner, &mut warp, 0, FULL, None);
                let words: Vec<u32> = (0..32).map(|l| world.shared_u32(4 * l)).collect();
                outcomes.push((exit, words, warp.stats.clone(), warp.preds.clone()));
            }
            let case = format!("{first:?} then {second:?}, fault {fault:?}");
            if fault.is_some() {
                for o in &mut outcomes {
                    o.3.clear();
                }
            } else {
                assert_eq!(outcomes[0].3[0], 0xffff, "{case}");
            }
            assert_eq!(outcomes[0], outcomes[1], "{case}");
            let (exit, words, stats, _) = &outcomes[0];
            // What the document says, instruction by instruction.
            let first_lanes = |l: usize| (l < 16) != first.negate;
            let done = |l: usize| match fault {
                None => true,
                // The fault in the first message: its lanes before the faulting one.
                Some(f) if first_lanes(f) => first_lanes(l) && l < f,
                // In the second: all of the first, and the second's lanes before it.
                Some(f) => first_lanes(l) || l < f,
            };
            for (l, &w) in words.iter().enumerate() {
                let add = if first_lanes(l) { 1 } else { 10 };
                assert_eq!(w, if done(l) { add } else { 0 }, "lane {l}, {case}");
            }
            let performed = (0..32).filter(|&l| done(l)).count() as u64;
            assert_eq!(stats.atomics[AtomicOp::Add.index()], performed, "{case}");
            match fault {
                None => assert_eq!(*exit, GroupExit::Exited),
                Some(lane) => {
                    let pc = if first_lanes(lane) { 5 } else { 6 };
                    assert!(
                        matches!(exit, GroupExit::Trap(t) if t.pc == pc && t.lane == lane as u32),
                        "{exit:?}, {case}"
                    )
                }
            }
        }
    }
}
