//! Building kernels in code: a [`KernelBuilder`] and constructors for operands and ops, so that
//! programs can be made without source text (the tile-atomics API, tests, embedders) and
//! validated like parsed ones ([`crate::valid::validate`], or `Engine::load_program` for a whole
//! [`Program`]).
//!
//! ```
//! use atomjit::ir::build::*;
//! use atomjit::ir::{AtomicOp, Dialect, Ty};
//! // ATOMS.ADD R0, [R1+0x8], R2 ; EXIT
//! let kernel = KernelBuilder::new("add", Dialect::Sass)
//!     .op(atoms(AtomicOp::Add, Ty::U32, 0, shared(1, 8), 2))
//!     .op(exit())
//!     .build();
//! assert_eq!(kernel.num_regs, 3);
//! assert!(atomjit::valid::validate(&kernel).is_ok());
//! ```
//!
//! A program built in code loads, validates and runs like a parsed one:
//!
//! ```
//! use atomjit::engine::{Config, Engine, Overrides};
//! use atomjit::ir::build::*;
//! use atomjit::ir::{AtomicOp, Dialect, Program, Space, Ty, PARAM_BASE};
//! // Every lane adds 1 to the first word of buffer `c` (its address is at c[0x0][0x160]).
//! let kernel = KernelBuilder::new("count", Dialect::Sass)
//!     .buffer("c", Ty::U32, 1)
//!     .launch(|l| l.grid = [2, 1, 1])
//!     .op(mov(Ty::U64, 2, cbank(PARAM_BASE)))
//!     .op(mov(Ty::U32, 4, imm(1)))
//!     .op(atomic(Space::Global, AtomicOp::Add, Ty::U32, RZ, wide(2, 0), reg(4), None))
//!     .op(exit())
//!     .build();
//! let engine = Engine::new(&Config::default());
//! let module = engine.load_program(Program::from_kernels("count", vec![kernel])).unwrap();
//! let report = module.run("count", &Overrides::default()).unwrap();
//! assert_eq!(report.buffer("c").unwrap().as_u32().unwrap(), [64]);
//! ```
//!
//! Source text and spans are optional: an instruction's span is [`Span::default`] unless a
//! span function is set ([`KernelBuilder::spans`]), and its text (used by traps and watchdog
//! reports) is its IR form. `num_regs`/`num_preds` are one more than the highest register and
//! predicate used ([`crate::ir::register_counts`]) unless set explicitly.

use crate::ir::{
    register_counts, Address, AtomicInst, AtomicOp, BinOp, BoolOp, CmpOp, Dialect, Guard, ImadMode,
    Init, Inst, Kernel, LaunchSpec, MemAccess, MemOrder, Op, Operand, ParamDecl, ParamKind, Pred,
    PredSrc, Program, Reg, Scalar, Scope, Space, Span, SpecialReg, Src, Ty, UnOp, PARAM_BASE,
};

/// Builds one kernel instruction by instruction.
#[derive(Debug, Clone)]
pub struct KernelBuilder {
    kernel: Kernel,
    num_regs: Option<u32>,
    num_preds: Option<u32>,
    spans: Option<fn(u32) -> Span>,
}

impl KernelBuilder {
    /// An empty kernel called `name` in `dialect`, with 32-lane warps and the default launch
    /// ([`LaunchSpec::default`]).
    pub fn new(name: &str, dialect: Dialect) -> KernelBuilder {
        KernelBuilder {
            kernel: Kernel {
                name: name.to_string(),
                dialect,
                warp_size: 32,
                insts: Vec::new(),
                labels: Vec::new(),
                num_regs: 0,
                num_preds: 0,
                uniform: Default::default(),
                launch: LaunchSpec::default(),
                span: Span::default(),
            },
            num_regs: None,
            num_preds: None,
            spans: None,
        }
    }

    /// Gives instruction `pc` the span `f(pc)` (for kernels that come from a source of the
    /// caller's own, whose diagnostics should point into it). Applies to instructions added
    /// afterwards.
    pub fn spans(mut self, f: fn(u32) -> Span) -> KernelBuilder {
        self.spans = Some(f);
        self
    }

    /// The kernel's own span (where a diagnostic about the whole kernel points).
    pub fn kernel_span(mut self, span: Span) -> KernelBuilder {
        self.kernel.span = span;
        self
    }

    /// The index the next instruction will get.
    pub fn pc(&self) -> u32 {
        self.kernel.insts.len() as u32
    }

    /// Appends an unpredicated instruction.
    pub fn op(self, op: Op) -> KernelBuilder {
        self.guarded(Guard::ALWAYS, op)
    }

    /// Appends an instruction under `guard`.
    pub fn guarded(self, guard: Guard, op: Op) -> KernelBuilder {
        let span = self.spans.map_or(Span::default(), |f| f(self.pc()));
        self.inst(Inst {
            op,
            guard,
            span,
            text: String::new(),
            sched: Vec::new(),
        })
    }

    /// Appends a whole instruction (its span and text as given; an empty text becomes the
    /// instruction's IR form).
    pub fn inst(mut self, inst: Inst) -> KernelBuilder {
        self.kernel.insts.push(inst);
        self
    }

    /// Names the next instruction.
    pub fn label(mut self, name: &str) -> KernelBuilder {
        let pc = self.pc();
        self.kernel.labels.push((name.to_string(), pc));
        self
    }

    /// Sets the register count instead of computing it.
    pub fn num_regs(mut self, n: u32) -> KernelBuilder {
        self.num_regs = Some(n);
        self
    }

    /// Sets the predicate count instead of computing it.
    pub fn num_preds(mut self, n: u32) -> KernelBuilder {
        self.num_preds = Some(n);
        self
    }

    /// Lanes per warp.
    pub fn warp_size(mut self, n: u32) -> KernelBuilder {
        self.kernel.warp_size = n;
        self
    }

    /// Changes the launch description (grid, block, shared size, expectations).
    pub fn launch(mut self, f: impl FnOnce(&mut LaunchSpec)) -> KernelBuilder {
        f(&mut self.kernel.launch);
        self
    }

    /// Declares a zero-filled buffer parameter at the next naturally aligned constant-bank
    /// offset.
    pub fn buffer(mut self, name: &str, elem: Ty, len: u64) -> KernelBuilder {
        let kind = ParamKind::Buffer {
            elem,
            len,
            init: Init::Fill(Scalar::Int(0)),
        };
        self.push_param(name, kind);
        self
    }

    /// Declares a scalar parameter at the next naturally aligned constant-bank offset.
    pub fn scalar(mut self, name: &str, ty: Ty, value: i128) -> KernelBuilder {
        self.push_param(
            name,
            ParamKind::Scalar {
                ty,
                value: Scalar::Int(value),
            },
        );
        self
    }

    fn push_param(&mut self, name: &str, kind: ParamKind) {
        let end = self
            .kernel
            .launch
            .params
            .last()
            .map_or(PARAM_BASE, |p| p.cbank_offset + p.cbank_size());
        let mut decl = ParamDecl {
            name: name.to_string(),
            kind,
            cbank_offset: 0,
            span: Span::default(),
        };
        let size = decl.cbank_size();
        decl.cbank_offset = end.div_ceil(size) * size;
        self.kernel.launch.params.push(decl);
    }

    /// The kernel: register and predicate counts computed (unless set), every instruction
    /// without text given its IR form.
    pub fn build(mut self) -> Kernel {
        let (regs, preds) = register_counts(&self.kernel.insts);
        self.kernel.num_regs = self.num_regs.unwrap_or(regs);
        self.kernel.num_preds = self.num_preds.unwrap_or(preds);
        for i in 0..self.kernel.insts.len() {
            if self.kernel.insts[i].text.is_empty() {
                let text = crate::ir::print_inst(&self.kernel, &self.kernel.insts[i]);
                self.kernel.insts[i].text = text;
            }
        }
        self.kernel
    }
}

impl Program {
    /// A program of `kernels` built in code (no source text), named `name` in diagnostics.
    pub fn from_kernels(name: &str, kernels: Vec<Kernel>) -> Program {
        Program {
            source_name: name.to_string(),
            source: String::new(),
            kernels,
        }
    }
}

// ---- operands --------------------------------------------------------------------------------

/// Register `Rn` (`r(RZ)` is the zero register).
pub fn r(n: u16) -> Reg {
    Reg(n)
}

/// Register `Rn` as a source operand.
pub fn reg(n: u16) -> Operand {
    Operand::Reg(Reg(n))
}

/// An immediate (raw bits).
pub fn imm(v: u64) -> Operand {
    Operand::Imm(v)
}

/// `c[0x0][offset]`.
pub fn cbank(offset: u32) -> Operand {
    Operand::Const { bank: 0, offset }
}

/// A source without modifier.
pub fn s(o: Operand) -> Src {
    Src::plain(o)
}

/// `@Pn`.
pub fn at(p: u16) -> Guard {
    Guard {
        pred: Pred(p),
        negate: false,
    }
}

/// `@!Pn`.
pub fn at_not(p: u16) -> Guard {
    Guard {
        pred: Pred(p),
        negate: true,
    }
}

/// `@!PT`.
pub fn never() -> Guard {
    Guard {
        pred: Pred::PT,
        negate: true,
    }
}

/// `[Rbase + offset]` in a 32-bit shared window (`base` may be `Reg::RZ.0`).
pub fn shared(base: u16, offset: i64) -> Address {
    Address::base32(Reg(base), offset)
}

/// `[Rbase.64 + offset]`.
pub fn wide(base: u16, offset: i64) -> Address {
    Address::base64(Reg(base), offset)
}

// ---- instructions ----------------------------------------------------------------------------

/// `NOP`.
pub fn nop() -> Op {
    Op::Nop
}

/// `EXIT`.
pub fn exit() -> Op {
    Op::Exit
}

/// `BRA target` (not marked uniform).
pub fn bra(target: u32) -> Op {
    Op::Branch {
        target,
        uniform: false,
    }
}

/// `BAR.SYNC id`.
pub fn bar(id: u32) -> Op {
    Op::Barrier { id }
}

/// `MOV Rdst, src` of `ty`'s width.
pub fn mov(ty: Ty, dst: u16, src: Operand) -> Op {
    Op::Mov {
        ty,
        dst: Reg(dst),
        src,
    }
}

/// `ISETP.<cmp>.<ty>.AND Pdst, PT, a, b, PT`.
pub fn isetp(cmp: CmpOp, ty: Ty, dst: u16, a: Operand, b: Operand) -> Op {
    Op::SetP {
        cmp,
        ty,
        combine: BoolOp::And,
        dst: Pred(dst),
        dst2: Pred::PT,
        a: s(a),
        b: s(b),
        c: PredSrc::TRUE,
        chain: None,
    }
}

/// `IADD3 Rdst, a, b, c` without carries.
pub fn iadd3(dst: u16, a: Operand, b: Operand, c: Operand) -> Op {
    Op::IAdd3 {
        dst: Reg(dst),
        carry_out: [Pred::PT, Pred::PT],
        a: s(a),
        b: s(b),
        c: s(c),
        carry_in: [PredSrc::FALSE, PredSrc::FALSE],
    }
}

/// `IMAD.WIDE.U32 Rdst, a, b, c` (`c` a pair).
pub fn imad_wide(dst: u16, a: Operand, b: Operand, c: Operand) -> Op {
    Op::Imad {
        mode: ImadMode::Wide,
        signed: false,
        dst: Reg(dst),
        a: s(a),
        b: s(b),
        c: s(c),
    }
}

/// A weak access of `ty` in `space` at `addr` (CTA scope).
pub fn weak(space: Space, ty: Ty, addr: Address) -> MemAccess {
    MemAccess {
        space,
        ty,
        vector: 1,
        order: MemOrder::Weak,
        scope: Scope::Cta,
        addr,
    }
}

/// A weak vector access of `vector` elements of `ty` in `space` at `addr` (CTA scope): see
/// [`MemAccess`] for the alignment and the registers.
pub fn weak_vector(space: Space, ty: Ty, vector: u8, addr: Address) -> MemAccess {
    MemAccess {
        vector,
        ..weak(space, ty, addr)
    }
}

/// A weak load.
pub fn load(space: Space, ty: Ty, dst: u16, addr: Address) -> Op {
    Op::Load {
        access: weak(space, ty, addr),
        dst: Reg(dst),
    }
}

/// A weak store.
pub fn store(space: Space, ty: Ty, src: Operand, addr: Address) -> Op {
    Op::Store {
        access: weak(space, ty, addr),
        src,
    }
}

/// A fence.
pub fn fence(order: MemOrder, scope: Scope) -> Op {
    Op::Fence { order, scope }
}

/// A relaxed atomic with every field given.
pub fn atomic(
    space: Space,
    op: AtomicOp,
    ty: Ty,
    dst: u16,
    addr: Address,
    src: Operand,
    src2: Option<Operand>,
) -> Op {
    Op::Atomic(Box::new(AtomicInst {
        access: MemAccess {
            space,
            ty,
            vector: 1,
            order: MemOrder::Relaxed,
            scope: Scope::Cta,
            addr,
        },
        op,
        dst: Reg(dst),
        src,
        src2,
        spin: false,
        ftz: false,
        performed: Pred::PT,
    }))
}

/// `ATOMS.<op>.<ty> Rdst, [addr], Rrb`.
pub fn atoms(op: AtomicOp, ty: Ty, dst: u16, addr: Address, rb: u16) -> Op {
    atomic(Space::Shared, op, ty, dst, addr, reg(rb), None)
}

/// `ATOMS.CAS/.CAST.<ty> Rdst, [addr], Rrb, Rrc`.
pub fn atoms_cas(op: AtomicOp, ty: Ty, dst: u16, addr: Address, rb: u16, rc: u16) -> Op {
    atomic(Space::Shared, op, ty, dst, addr, reg(rb), Some(reg(rc)))
}

/// Applies `f` to the atomic of `op` (to set `spin`, `ftz`, `order`, ...).
pub fn with_atomic(mut op: Op, f: impl FnOnce(&mut AtomicInst)) -> Op {
    if let Op::Atomic(a) = &mut op {
        f(a);
    }
    op
}

/// The index of `RZ`, for builder arguments that take register numbers.
pub const RZ: u16 = Reg::RZ.0;

/// `S2R Rdst, sr`.
pub fn s2r(dst: u16, sr: SpecialReg) -> Op {
    Op::ReadSpecial { dst: Reg(dst), sr }
}

/// `dst = op(a, b)` in `ty`, without modifiers or FTZ.
pub fn binary(op: BinOp, ty: Ty, dst: u16, a: Operand, b: Operand) -> Op {
    Op::Binary {
        op,
        ty,
        dst: Reg(dst),
        a: s(a),
        b: s(b),
        ftz: false,
    }
}

/// `dst = op(a)` in `ty`.
pub fn unary(op: UnOp, ty: Ty, dst: u16, a: Operand) -> Op {
    Op::Unary {
        op,
        ty,
        dst: Reg(dst),
        a: s(a),
    }
}
