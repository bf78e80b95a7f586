//! Test helper: builds kernels directly as IR, so the validator (and other modules' unit tests)
//! can be tested without a parser.
//!
//! ```ignore
//! use crate::valid::build::*;
//! let k = KernelBuilder::sass()
//!     .op(atoms(AtomicOp::Add, Ty::U32, 0, shared(1, 8), 2))
//!     .op(exit())
//!     .build();
//! ```
//!
//! Instruction `pc` gets the span line `pc + 2`, column 5, bytes `100 * pc + 10 ..`, so tests can
//! check which instruction an error points at. `num_regs`/`num_preds` are one more than the
//! highest register/predicate used unless set explicitly.

use super::operands::{pred_uses, reg_uses};
use crate::ir::{
    Address, AtomicInst, AtomicOp, BinOp, BoolOp, CmpOp, Dialect, Guard, ImadMode, Init, Inst,
    Kernel, LaunchSpec, MemOrder, Op, Operand, ParamDecl, ParamKind, Pred, PredSrc, Reg, Scalar,
    Scope, Space, Span, SpecialReg, Src, Ty, UnOp, PARAM_BASE,
};

/// Builds one kernel instruction by instruction.
pub(crate) struct KernelBuilder {
    kernel: Kernel,
    num_regs: Option<u32>,
    num_preds: Option<u32>,
}

impl KernelBuilder {
    pub(crate) fn new(dialect: Dialect) -> KernelBuilder {
        KernelBuilder {
            kernel: Kernel {
                name: "test".to_string(),
                dialect,
                warp_size: 32,
                insts: Vec::new(),
                labels: Vec::new(),
                num_regs: 0,
                num_preds: 0,
                launch: LaunchSpec::default(),
                span: Span {
                    start: 0,
                    end: 12,
                    line: 1,
                    col: 1,
                },
            },
            num_regs: None,
            num_preds: None,
        }
    }

    pub(crate) fn sass() -> KernelBuilder {
        KernelBuilder::new(Dialect::Sass)
    }

    pub(crate) fn ptx() -> KernelBuilder {
        KernelBuilder::new(Dialect::Ptx)
    }

    /// The index the next instruction will get.
    pub(crate) fn pc(&self) -> u32 {
        self.kernel.insts.len() as u32
    }

    /// Appends an unpredicated instruction.
    pub(crate) fn op(self, op: Op) -> KernelBuilder {
        self.guarded(Guard::ALWAYS, op)
    }

    /// Appends an instruction under `guard`.
    pub(crate) fn guarded(mut self, guard: Guard, op: Op) -> KernelBuilder {
        let pc = self.pc();
        let span = Span {
            start: 100 * pc + 10,
            end: 100 * pc + 60,
            line: pc + 2,
            col: 5,
        };
        let text = format!("{op:?}");
        self.kernel.insts.push(Inst {
            op,
            guard,
            span,
            text,
            sched: Vec::new(),
        });
        self
    }

    /// Names the next instruction.
    pub(crate) fn label(mut self, name: &str) -> KernelBuilder {
        let pc = self.pc();
        self.kernel.labels.push((name.to_string(), pc));
        self
    }

    pub(crate) fn num_regs(mut self, n: u32) -> KernelBuilder {
        self.num_regs = Some(n);
        self
    }

    pub(crate) fn num_preds(mut self, n: u32) -> KernelBuilder {
        self.num_preds = Some(n);
        self
    }

    pub(crate) fn warp_size(mut self, n: u32) -> KernelBuilder {
        self.kernel.warp_size = n;
        self
    }

    pub(crate) fn launch(mut self, f: impl FnOnce(&mut LaunchSpec)) -> KernelBuilder {
        f(&mut self.kernel.launch);
        self
    }

    /// Declares a buffer parameter at the next naturally aligned constant-bank offset.
    pub(crate) fn buffer(mut self, name: &str, elem: Ty, len: u64) -> KernelBuilder {
        let kind = ParamKind::Buffer {
            elem,
            len,
            init: Init::Fill(Scalar::Int(0)),
        };
        self.push_param(name, kind);
        self
    }

    /// Declares a scalar parameter at the next naturally aligned constant-bank offset.
    pub(crate) fn scalar(mut self, name: &str, ty: Ty, value: i128) -> KernelBuilder {
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

    pub(crate) fn build(mut self) -> Kernel {
        let mut regs = 0u32;
        let mut preds = 0u32;
        for inst in &self.kernel.insts {
            for u in reg_uses(&inst.op) {
                if !u.reg.is_rz() {
                    regs = regs.max(u32::from(u.reg.0) + u32::from(u.words));
                }
            }
            for p in pred_uses(inst) {
                if !p.is_pt() {
                    preds = preds.max(u32::from(p.0) + 1);
                }
            }
        }
        self.kernel.num_regs = self.num_regs.unwrap_or(regs);
        self.kernel.num_preds = self.num_preds.unwrap_or(preds);
        self.kernel
    }
}

// ---- operands --------------------------------------------------------------------------------

pub(crate) fn r(n: u16) -> Reg {
    Reg(n)
}

pub(crate) fn reg(n: u16) -> Operand {
    Operand::Reg(Reg(n))
}

pub(crate) fn imm(v: u64) -> Operand {
    Operand::Imm(v)
}

pub(crate) fn cbank(offset: u32) -> Operand {
    Operand::Const { bank: 0, offset }
}

pub(crate) fn s(o: Operand) -> Src {
    Src::plain(o)
}

/// `@Pn`.
pub(crate) fn at(p: u16) -> Guard {
    Guard {
        pred: Pred(p),
        negate: false,
    }
}

/// `@!Pn`.
pub(crate) fn at_not(p: u16) -> Guard {
    Guard {
        pred: Pred(p),
        negate: true,
    }
}

/// `@!PT`.
pub(crate) fn never() -> Guard {
    Guard {
        pred: Pred::PT,
        negate: true,
    }
}

/// `[Rbase + offset]` in a 32-bit shared window (`base` may be `Reg::RZ.0`).
pub(crate) fn shared(base: u16, offset: i64) -> Address {
    Address {
        base: Some(Reg(base)),
        base_bits: 32,
        offset,
    }
}

/// `[Rbase.64 + offset]`.
pub(crate) fn wide(base: u16, offset: i64) -> Address {
    Address {
        base: Some(Reg(base)),
        base_bits: 64,
        offset,
    }
}

// ---- instructions ----------------------------------------------------------------------------

pub(crate) fn nop() -> Op {
    Op::Nop
}

pub(crate) fn exit() -> Op {
    Op::Exit
}

pub(crate) fn bra(target: u32) -> Op {
    Op::Branch {
        target,
        uniform: false,
    }
}

pub(crate) fn bar(id: u32) -> Op {
    Op::Barrier { id }
}

pub(crate) fn mov(ty: Ty, dst: u16, src: Operand) -> Op {
    Op::Mov {
        ty,
        dst: Reg(dst),
        src,
    }
}

/// `ISETP.<cmp>.<ty>.AND Pdst, PT, a, b, PT`.
pub(crate) fn isetp(cmp: CmpOp, ty: Ty, dst: u16, a: Operand, b: Operand) -> Op {
    Op::SetP {
        cmp,
        ty,
        combine: BoolOp::And,
        dst: Pred(dst),
        dst2: Pred::PT,
        a: s(a),
        b: s(b),
        c: PredSrc::TRUE,
    }
}

pub(crate) fn iadd3(dst: u16, a: Operand, b: Operand, c: Operand) -> Op {
    Op::IAdd3 {
        dst: Reg(dst),
        carry_out: [Pred::PT, Pred::PT],
        a: s(a),
        b: s(b),
        c: s(c),
        carry_in: [PredSrc::FALSE, PredSrc::FALSE],
    }
}

pub(crate) fn imad_wide(dst: u16, a: Operand, b: Operand, c: Operand) -> Op {
    Op::Imad {
        mode: ImadMode::Wide,
        signed: false,
        dst: Reg(dst),
        a: s(a),
        b: s(b),
        c: s(c),
    }
}

pub(crate) fn load(space: Space, ty: Ty, dst: u16, addr: Address) -> Op {
    Op::Load {
        space,
        ty,
        order: MemOrder::Weak,
        scope: Scope::Cta,
        dst: Reg(dst),
        addr,
    }
}

pub(crate) fn store(space: Space, ty: Ty, src: Operand, addr: Address) -> Op {
    Op::Store {
        space,
        ty,
        order: MemOrder::Weak,
        scope: Scope::Cta,
        src,
        addr,
    }
}

pub(crate) fn fence(order: MemOrder, scope: Scope) -> Op {
    Op::Fence { order, scope }
}

/// A relaxed atomic with every field given.
pub(crate) fn atomic(
    space: Space,
    op: AtomicOp,
    ty: Ty,
    dst: u16,
    addr: Address,
    src: Operand,
    src2: Option<Operand>,
) -> Op {
    Op::Atomic(Box::new(AtomicInst {
        space,
        op,
        ty,
        order: MemOrder::Relaxed,
        scope: Scope::Cta,
        dst: Reg(dst),
        addr,
        src,
        src2,
        spin: false,
        ftz: false,
    }))
}

/// `ATOMS.<op>.<ty> Rdst, [addr], Rrb`.
pub(crate) fn atoms(op: AtomicOp, ty: Ty, dst: u16, addr: Address, rb: u16) -> Op {
    atomic(Space::Shared, op, ty, dst, addr, reg(rb), None)
}

/// `ATOMS.CAS/.CAST.<ty> Rdst, [addr], Rrb, Rrc`.
pub(crate) fn atoms_cas(op: AtomicOp, ty: Ty, dst: u16, addr: Address, rb: u16, rc: u16) -> Op {
    atomic(Space::Shared, op, ty, dst, addr, reg(rb), Some(reg(rc)))
}

/// Applies `f` to the atomic of `op` (to set `spin`, `ftz`, `order`, ...).
pub(crate) fn with_atomic(mut op: Op, f: impl FnOnce(&mut AtomicInst)) -> Op {
    if let Op::Atomic(a) = &mut op {
        f(a);
    }
    op
}

/// The index of `RZ`, for builder arguments that take register numbers.
pub(crate) const RZ: u16 = Reg::RZ.0;

/// `S2R Rdst, sr`.
pub(crate) fn s2r(dst: u16, sr: SpecialReg) -> Op {
    Op::ReadSpecial { dst: Reg(dst), sr }
}

/// `dst = op(a, b)` in `ty`, without modifiers or FTZ.
pub(crate) fn binary(op: BinOp, ty: Ty, dst: u16, a: Operand, b: Operand) -> Op {
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
pub(crate) fn unary(op: UnOp, ty: Ty, dst: u16, a: Operand) -> Op {
    Op::Unary {
        op,
        ty,
        dst: Reg(dst),
        a: s(a),
    }
}
