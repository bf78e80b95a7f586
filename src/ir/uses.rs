//! What each op reads and writes, and how it passes control on: the per-op facts every
//! front-end, the validator and both backends rely on, defined once.
//!
//! [`Op::for_each_use`] is the single description of an op's operands: every source operand
//! with the number of 32-bit words the op reads from it, every destination register with the
//! number of words it writes, every predicate read and written. Everything else here (register
//! counts, the source and destination lists, which registers an instruction touches) is a fold
//! over it, so a new op or operand is described in one place. [`Op::control`] says how an op
//! passes control on (which ops end a basic block).
//!
//! Widths follow the IR's operand rules ([`crate::ir::Operand`]): an operand of a 64-bit type
//! is a register pair (2 words); a shift amount is one word whatever the type; `Popc`/`Clz`
//! produce one word; `MulWide` produces twice its type's width ([`BinOp::result_words`]).

use super::{AtomicOp, BinOp, CmpOp, ImadMode, UnOp};
use super::{Inst, Op, Operand, Pred, PredMove, Reg, Ty};

/// One operand an op reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// A source operand (a register or pair, an immediate, a constant-bank read) read as
    /// `words` 32-bit words. Address base registers are sources.
    Src {
        /// The operand.
        operand: Operand,
        /// 32-bit words read.
        words: u16,
    },
    /// A destination register written as `words` consecutive 32-bit words.
    Dst {
        /// The first register (the low word of a pair).
        reg: Reg,
        /// Consecutive registers written.
        words: u16,
    },
    /// A predicate the op reads (the instruction's guard is not part of the op).
    PredSrc(Pred),
    /// A predicate the op writes.
    PredDst(Pred),
}

/// Whether an operand is read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Written by the op.
    Dst,
    /// Read by the op.
    Src,
}

/// A source operand with the number of 32-bit words the op reads from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperandUse {
    /// The operand.
    pub operand: Operand,
    /// Words read: 1, or 2 for a 64-bit value.
    pub words: u16,
}

/// A register an op reads or writes, with its width in 32-bit words (2 for a pair).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegUse {
    /// The first register (the low word of a pair); may be [`Reg::RZ`].
    pub reg: Reg,
    /// Consecutive registers from `reg`.
    pub words: u16,
    /// Read or written.
    pub role: Role,
}

/// How an op passes control on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// The executing lanes continue at the next instruction.
    Next,
    /// [`Op::Branch`]: the executing lanes go to `target`, the others fall through.
    Branch {
        /// The branch target (an instruction index).
        target: u32,
    },
    /// [`Op::Barrier`]: the group waits, then continues at the next instruction.
    Barrier,
    /// [`Op::Exit`]: the executing lanes finish.
    Exit,
}

impl Control {
    /// True for the ops after which a new basic block starts (branches, barriers, exits): the
    /// scheduler may have to run other lanes or warps before the next instruction.
    pub fn ends_block(self) -> bool {
        match self {
            Control::Next => false,
            Control::Branch { .. } | Control::Barrier | Control::Exit => true,
        }
    }
}

impl BinOp {
    /// 32-bit registers the result of `op` in `ty` fills: twice the type's width for `MulWide`
    /// (one register for 8- and 16-bit types, two for 32-bit, four for 64-bit), otherwise the
    /// type's register count.
    pub fn result_words(self, ty: Ty) -> u16 {
        match self {
            BinOp::MulWide => (2 * ty.bits()).div_ceil(32) as u16,
            BinOp::Add
            | BinOp::Sub
            | BinOp::Mul
            | BinOp::MulHi
            | BinOp::Div
            | BinOp::Rem
            | BinOp::Min
            | BinOp::Max
            | BinOp::And
            | BinOp::Or
            | BinOp::Xor
            | BinOp::Shl
            | BinOp::Shr => ty.regs(),
        }
    }

    /// Whether the second source is a shift amount: one unsigned 32-bit word whatever the type
    /// (PTX: "b is always .u32").
    pub fn b_is_shift_amount(self) -> bool {
        match self {
            BinOp::Shl | BinOp::Shr => true,
            BinOp::Add
            | BinOp::Sub
            | BinOp::Mul
            | BinOp::MulHi
            | BinOp::MulWide
            | BinOp::Div
            | BinOp::Rem
            | BinOp::Min
            | BinOp::Max
            | BinOp::And
            | BinOp::Or
            | BinOp::Xor => false,
        }
    }

    /// 32-bit words read from the second source: one for a shift amount, else the type's.
    pub fn b_words(self, ty: Ty) -> u16 {
        if self.b_is_shift_amount() {
            1
        } else {
            ty.regs()
        }
    }
}

impl UnOp {
    /// 32-bit registers the result fills: one for the counts `Popc` and `Clz`, else the type's.
    pub fn result_words(self, ty: Ty) -> u16 {
        match self {
            UnOp::Popc | UnOp::Clz => 1,
            UnOp::Not | UnOp::Neg | UnOp::Abs | UnOp::Brev => ty.regs(),
        }
    }
}

impl ImadMode {
    /// 32-bit words of the destination and of the addend `c`: a pair for `Wide`, else one.
    pub fn words(self) -> u16 {
        match self {
            ImadMode::Wide => 2,
            ImadMode::Lo | ImadMode::Hi => 1,
        }
    }
}

impl CmpOp {
    /// Whether the comparison exists only for floats: the unordered forms and `Num`/`Nan`.
    pub fn is_float_only(self) -> bool {
        match self {
            CmpOp::Eq | CmpOp::Ne | CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => false,
            CmpOp::Equ
            | CmpOp::Neu
            | CmpOp::Ltu
            | CmpOp::Leu
            | CmpOp::Gtu
            | CmpOp::Geu
            | CmpOp::Num
            | CmpOp::Nan => true,
        }
    }
}

impl AtomicOp {
    /// Whether the op reads a second operand `c` (the swap value of CAS, CAST and FCMPWR).
    pub fn has_swap_operand(self) -> bool {
        match self {
            AtomicOp::Cas | AtomicOp::Cast | AtomicOp::FCmpWr => true,
            AtomicOp::Add
            | AtomicOp::Sub
            | AtomicOp::Min
            | AtomicOp::Max
            | AtomicOp::Inc
            | AtomicOp::Dec
            | AtomicOp::And
            | AtomicOp::Or
            | AtomicOp::Xor
            | AtomicOp::Exch
            | AtomicOp::PreDec => false,
        }
    }

    /// Whether the op returns a flag (1 if it stored, 0 if not) instead of the old value:
    /// SASS `CAST`.
    pub fn returns_stored_flag(self) -> bool {
        match self {
            AtomicOp::Cast => true,
            AtomicOp::Add
            | AtomicOp::Sub
            | AtomicOp::Min
            | AtomicOp::Max
            | AtomicOp::Inc
            | AtomicOp::Dec
            | AtomicOp::And
            | AtomicOp::Or
            | AtomicOp::Xor
            | AtomicOp::Exch
            | AtomicOp::Cas
            | AtomicOp::PreDec
            | AtomicOp::FCmpWr => false,
        }
    }
}

impl Op {
    /// Calls `f` for every operand the op reads or writes, in this order for each kind:
    /// sources in operand order (address bases after the value operands), destinations, and
    /// predicates in operand order. `RZ` and `PT` are reported like any other register.
    pub fn for_each_use(&self, mut f: impl FnMut(Use)) {
        let src = |operand: Operand, words: u16| Use::Src { operand, words };
        match self {
            Op::Nop | Op::Fence { .. } | Op::Barrier { .. } | Op::Branch { .. } | Op::Exit => {}
            Op::Mov { ty, dst, src: s } => {
                f(src(*s, ty.regs()));
                f(Use::Dst {
                    reg: *dst,
                    words: ty.regs(),
                });
            }
            Op::ReadSpecial { dst, .. } => f(Use::Dst {
                reg: *dst,
                words: 1,
            }),
            Op::Unary { op, ty, dst, a } => {
                f(src(a.operand, ty.regs()));
                f(Use::Dst {
                    reg: *dst,
                    words: op.result_words(*ty),
                });
            }
            Op::Binary {
                op, ty, dst, a, b, ..
            } => {
                f(src(a.operand, ty.regs()));
                f(src(b.operand, op.b_words(*ty)));
                f(Use::Dst {
                    reg: *dst,
                    words: op.result_words(*ty),
                });
            }
            Op::IAdd3 {
                dst,
                carry_out,
                a,
                b,
                c,
                carry_in,
            } => {
                for s in [a, b, c] {
                    f(src(s.operand, 1));
                }
                f(Use::Dst {
                    reg: *dst,
                    words: 1,
                });
                for p in carry_out {
                    f(Use::PredDst(*p));
                }
                for p in carry_in {
                    f(Use::PredSrc(p.pred));
                }
            }
            Op::Imad {
                mode, dst, a, b, c, ..
            } => {
                f(src(a.operand, 1));
                f(src(b.operand, 1));
                f(src(c.operand, mode.words()));
                f(Use::Dst {
                    reg: *dst,
                    words: mode.words(),
                });
            }
            Op::Lea {
                dst,
                carry_out,
                a,
                b,
                c,
                carry_in,
                ..
            } => {
                for s in [a, b, c] {
                    f(src(s.operand, 1));
                }
                f(Use::Dst {
                    reg: *dst,
                    words: 1,
                });
                f(Use::PredDst(*carry_out));
                f(Use::PredSrc(carry_in.pred));
            }
            Op::Shf(s) => {
                for x in [&s.lo, &s.shift, &s.hi] {
                    f(src(x.operand, 1));
                }
                f(Use::Dst {
                    reg: s.dst,
                    words: 1,
                });
            }
            Op::Lop3 {
                dst,
                pred_out,
                a,
                b,
                c,
                ..
            } => {
                for s in [a, b, c] {
                    f(src(s.operand, 1));
                }
                f(Use::Dst {
                    reg: *dst,
                    words: 1,
                });
                f(Use::PredDst(*pred_out));
            }
            Op::SetP {
                ty,
                dst,
                dst2,
                a,
                b,
                c,
                ..
            } => {
                f(src(a.operand, ty.regs()));
                f(src(b.operand, ty.regs()));
                f(Use::PredDst(*dst));
                f(Use::PredDst(*dst2));
                f(Use::PredSrc(c.pred));
            }
            Op::PredLogic { dst, a, b, .. } => {
                f(Use::PredDst(*dst));
                f(Use::PredSrc(a.pred));
                f(Use::PredSrc(b.pred));
            }
            Op::PredMove(PredMove::ToReg { dst, src: p }) => {
                f(Use::Dst {
                    reg: *dst,
                    words: 1,
                });
                f(Use::PredSrc(p.pred));
            }
            Op::PredMove(PredMove::FromReg { dst, src: s, .. }) => {
                f(src(*s, 1));
                f(Use::PredDst(*dst));
            }
            Op::Select {
                ty,
                dst,
                a,
                b,
                pred,
            } => {
                f(src(a.operand, ty.regs()));
                f(src(b.operand, ty.regs()));
                f(Use::Dst {
                    reg: *dst,
                    words: ty.regs(),
                });
                f(Use::PredSrc(pred.pred));
            }
            Op::Convert {
                dst_ty,
                src_ty,
                dst,
                a,
                ..
            } => {
                f(src(a.operand, src_ty.regs()));
                f(Use::Dst {
                    reg: *dst,
                    words: dst_ty.regs(),
                });
            }
            Op::Vote {
                dst, dst_pred, src, ..
            } => {
                f(Use::Dst {
                    reg: *dst,
                    words: 1,
                });
                f(Use::PredDst(*dst_pred));
                f(Use::PredSrc(src.pred));
            }
            Op::Load { access, dst } => {
                access.addr.for_each_source(&mut f);
                f(Use::Dst {
                    reg: *dst,
                    words: access.ty.regs(),
                });
            }
            Op::Store { access, src: s } => {
                f(src(*s, access.ty.regs()));
                access.addr.for_each_source(&mut f);
            }
            Op::Atomic(a) => {
                let words = a.access.ty.regs();
                f(src(a.src, words));
                if let Some(c) = a.src2 {
                    f(src(c, words));
                }
                a.access.addr.for_each_source(&mut f);
                f(Use::Dst { reg: a.dst, words });
            }
        }
    }

    /// Every source operand (registers, immediates, constant-bank reads) with its width,
    /// address bases included, in operand order.
    pub fn operand_uses(&self) -> Vec<OperandUse> {
        let mut v = Vec::new();
        self.for_each_use(|u| {
            if let Use::Src { operand, words } = u {
                v.push(OperandUse { operand, words });
            }
        });
        v
    }

    /// Every destination register with its width.
    pub fn dst_uses(&self) -> Vec<(Reg, u16)> {
        let mut v = Vec::new();
        self.for_each_use(|u| {
            if let Use::Dst { reg, words } = u {
                v.push((reg, words));
            }
        });
        v
    }

    /// Every register the op reads or writes: destinations first, then source registers.
    pub fn reg_uses(&self) -> Vec<RegUse> {
        let mut v: Vec<RegUse> = self
            .dst_uses()
            .into_iter()
            .map(|(reg, words)| RegUse {
                reg,
                words,
                role: Role::Dst,
            })
            .collect();
        for u in self.operand_uses() {
            if let Operand::Reg(reg) = u.operand {
                v.push(RegUse {
                    reg,
                    words: u.words,
                    role: Role::Src,
                });
            }
        }
        v
    }

    /// Whether the op reads any word of register `r`.
    pub fn reads_reg(&self, r: Reg) -> bool {
        let mut found = false;
        self.for_each_use(|u| {
            if let Use::Src {
                operand: Operand::Reg(base),
                words,
            } = u
            {
                found |= (0..words).any(|w| base.word(w) == r);
            }
        });
        found
    }

    /// Whether the op writes any word of register `r`.
    pub fn writes_reg(&self, r: Reg) -> bool {
        let mut found = false;
        self.for_each_use(|u| {
            if let Use::Dst { reg, words } = u {
                found |= (0..words).any(|w| reg.word(w) == r);
            }
        });
        found
    }

    /// How the op passes control on.
    pub fn control(&self) -> Control {
        match self {
            Op::Branch { target, .. } => Control::Branch { target: *target },
            Op::Barrier { .. } => Control::Barrier,
            Op::Exit => Control::Exit,
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
            | Op::Load { .. }
            | Op::Store { .. }
            | Op::Atomic(_)
            | Op::Fence { .. } => Control::Next,
        }
    }
}

impl Inst {
    /// Every predicate the instruction reads or writes: its guard first, then the op's in
    /// operand order (`PT` included).
    pub fn pred_uses(&self) -> Vec<Pred> {
        let mut v = vec![self.guard.pred];
        self.op.for_each_use(|u| match u {
            Use::PredSrc(p) | Use::PredDst(p) => v.push(p),
            Use::Src { .. } | Use::Dst { .. } => {}
        });
        v
    }
}

/// `(num_regs, num_preds)` for a kernel of `insts`: one more than the highest register slot
/// any instruction reads or writes (both words of a pair count; `RZ` does not) and one more
/// than the highest predicate (guards included; `PT` does not count).
pub fn register_counts(insts: &[Inst]) -> (u32, u32) {
    let (mut regs, mut preds) = (0u32, 0u32);
    let mut pred = |p: Pred| {
        if !p.is_pt() {
            preds = preds.max(u32::from(p.0) + 1);
        }
    };
    for inst in insts {
        pred(inst.guard.pred);
        inst.op.for_each_use(|u| match u {
            Use::Src {
                operand: Operand::Reg(reg),
                words,
            }
            | Use::Dst { reg, words } => {
                if !reg.is_rz() {
                    regs = regs.max(u32::from(reg.0) + u32::from(words));
                }
            }
            Use::Src { .. } => {}
            Use::PredSrc(p) | Use::PredDst(p) => pred(p),
        });
    }
    (regs, preds)
}
