//! Tests of the warp compiler: kernels built directly in Rust, run with
//! [`JitKernel::run_group`], checked against the formulas of the documents (`000_*` for ATOMS)
//! and the IR's definitions.

use super::*;
use crate::exec::{GlobalMemory, SharedMemory, Stats, GLOBAL_BASE};
use crate::ir::*;

const FULL: u32 = u32::MAX;

/// A kernel under construction.
struct KernelBuilder {
    insts: Vec<Inst>,
    joins: Vec<(u32, u32)>,
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
            uniform: Default::default(),
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
        let env = CtaEnv {
            kernel,
            info,
            global: &self.global,
            shared: &self.shared,
            cbank: &self.cbank,
            ctaid: [2, 0, 0],
            ntid: [64, 1, 1],
            nctaid: [4, 1, 1],
        };
        jit.run_group(warp, &env, pc, mask, stop)
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
    let table: &[(AtomicOp, &[Ty])] = &[
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
    for &(op, tys) in table {
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
            address: 0x1002
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
            ..
        })
    ));
    // The last word of the window is in range.
    set_reg(&mut warp, 1, 5, 124);
    let exit = world.run(&kernel, &info, &jit, &mut warp, 2, 1 << 5, None);
    assert_eq!(exit, GroupExit::Exited);
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
            let world = World::new(64, 0);
            let (exit, _) = run_kernel_masked(&b, &world, 1 << 3, |w| {
                set_reg(w, 2, 3, addr as u32);
                set_reg(w, 3, 3, (addr >> 32) as u32);
            });
            match reason {
                Some(reason) => assert_eq!(
                    exit,
                    GroupExit::Trap(TrapInfo {
                        reason,
                        pc: 0,
                        lane: 3,
                        space: Space::Global,
                        address: addr
                    }),
                    "kind {kind} address {addr:#x}"
                ),
                None => assert_eq!(exit, GroupExit::Exited),
            }
        }
    }
}

#[test]
fn an_empty_shared_window_traps_every_access() {
    let mut b = KernelBuilder::new();
    b.push(Op::Load {
        access: MemAccess {
            space: Space::Shared,
            ty: Ty::U8,
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
        b.lane_id(0).push(Op::SetP {
            cmp: CmpOp::Lt,
            ty: Ty::U32,
            combine: BoolOp::And,
            dst: p(0),
            dst2: Pred::PT,
            a: src(reg(0)),
            b: src(imm(limit as u64)),
            c: PredSrc::TRUE,
            chain: None,
        });
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
        GroupExit::Diverge {
            branch_pc: 2,
            taken_pc: 4,
            taken: 0xff,
            fall_pc: 3,
            fall: !0xff
        }
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
        .push(Op::SetP {
            cmp: CmpOp::Lt,
            ty: Ty::U32,
            combine: BoolOp::And,
            dst: p(0),
            dst2: Pred::PT,
            a: src(reg(0)),
            b: src(imm(4)),
            c: PredSrc::TRUE,
            chain: None,
        })
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
        for size in [1u32, 2, 4, 8] {
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
    let plan = translate::Plan::new(&kernel, &info, 3);
    assert_eq!(plan.starts, vec![0, 6, 11]);
    assert!(plan.resume[6] && plan.resume[11] && plan.resume[13]);
    assert_eq!(plan.range(1, kernel.insts.len()), 6..11);
    assert_eq!(plan.range(2, kernel.insts.len()), 11..14);
    // One chunk when the kernel fits.
    assert_eq!(translate::Plan::new(&kernel, &info, 1024).starts, vec![0]);
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
