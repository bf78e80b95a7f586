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
    /// [`Op::BranchConverged`]: the executing lanes all go to `target` or all fall through,
    /// decided at run time; lanes whose guard is false fall through.
    UniformBranch {
        /// The branch target (an instruction index).
        target: u32,
    },
    /// [`Op::WarpSplit`]: some executing lanes continue at the next instruction, the others
    /// execute the instruction again; they rejoin at `rejoin`.
    Split {
        /// The reconvergence point of the split (an instruction index).
        rejoin: u32,
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
            Control::Branch { .. }
            | Control::UniformBranch { .. }
            | Control::Split { .. }
            | Control::Barrier
            | Control::Exit => true,
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
            UnOp::Popc | UnOp::Clz | UnOp::Bfind | UnOp::BfindShift => 1,
            UnOp::Not | UnOp::Neg | UnOp::Abs | UnOp::Brev => ty.regs(),
        }
    }
}

impl ImadMode {
    /// 32-bit words of the destination: a pair for `Wide`, else one.
    pub fn dst_words(self) -> u16 {
        match self {
            ImadMode::Wide => 2,
            ImadMode::Lo | ImadMode::Hi => 1,
        }
    }
    /// 32-bit words of the addend `c`: a pair for `Wide` and `Hi`, one for `Lo`.
    pub fn addend_words(self) -> u16 {
        match self {
            ImadMode::Wide | ImadMode::Hi => 2,
            ImadMode::Lo => 1,
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
            Op::BranchConverged { mask, .. } | Op::WarpSplit { mask, .. } => {
                f(src(mask.operand, 1))
            }
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
                f(src(c.operand, mode.addend_words()));
                f(Use::Dst {
                    reg: *dst,
                    words: mode.dst_words(),
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
                chain,
                ..
            } => {
                f(src(a.operand, ty.regs()));
                f(src(b.operand, ty.regs()));
                f(Use::PredDst(*dst));
                f(Use::PredDst(*dst2));
                f(Use::PredSrc(c.pred));
                if let Some(low) = chain {
                    f(Use::PredSrc(low.pred));
                }
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
            Op::Shfl {
                dst,
                dst_pred,
                a,
                b,
                c,
                ..
            } => {
                f(src(*a, 1));
                f(src(b.operand, 1));
                f(src(c.operand, 1));
                f(Use::Dst {
                    reg: *dst,
                    words: 1,
                });
                f(Use::PredDst(*dst_pred));
            }
            Op::Redux { dst, src: s, .. } => {
                f(src(*s, 1));
                f(Use::Dst {
                    reg: *dst,
                    words: 1,
                });
            }
            Op::Match {
                ty,
                dst,
                dst_pred,
                src: s,
                ..
            } => {
                f(src(*s, ty.regs()));
                f(Use::Dst {
                    reg: *dst,
                    words: 1,
                });
                f(Use::PredDst(*dst_pred));
            }
            Op::Prmt { dst, a, b, sel } => {
                f(src(a.operand, 1));
                f(src(b.operand, 1));
                f(src(sel.operand, 1));
                f(Use::Dst {
                    reg: *dst,
                    words: 1,
                });
            }
            Op::Bfe {
                ty,
                dst,
                a,
                pos,
                len,
            } => {
                f(src(a.operand, ty.regs()));
                f(src(pos.operand, 1));
                f(src(len.operand, 1));
                f(Use::Dst {
                    reg: *dst,
                    words: ty.regs(),
                });
            }
            Op::Bfi {
                ty,
                dst,
                insert,
                base,
                pos,
                len,
            } => {
                f(src(insert.operand, ty.regs()));
                f(src(base.operand, ty.regs()));
                f(src(pos.operand, 1));
                f(src(len.operand, 1));
                f(Use::Dst {
                    reg: *dst,
                    words: ty.regs(),
                });
            }
            Op::Fma {
                ty, dst, a, b, c, ..
            } => {
                f(src(a.operand, ty.regs()));
                f(src(b.operand, ty.regs()));
                f(src(c.operand, ty.regs()));
                f(Use::Dst {
                    reg: *dst,
                    words: ty.regs(),
                });
            }
            Op::PackedMinMax { dst, a, b, .. } => {
                f(src(a.operand, 1));
                f(src(b.operand, 1));
                f(Use::Dst {
                    reg: *dst,
                    words: 1,
                });
            }
            Op::PackHalves { dst, hi, lo, .. } => {
                f(src(hi.operand, 1));
                f(src(lo.operand, 1));
                f(Use::Dst {
                    reg: *dst,
                    words: 1,
                });
            }
            Op::IsSpace { dst, addr, .. } => {
                addr.for_each_source(&mut f);
                f(Use::PredDst(*dst));
            }
            Op::PredLut { dst, a, b, c, .. } => {
                f(Use::PredSrc(a.pred));
                f(Use::PredSrc(b.pred));
                f(Use::PredSrc(c.pred));
                f(Use::PredDst(dst[0]));
                f(Use::PredDst(dst[1]));
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
                    words: access.words(),
                });
                if let Some(p) = access.addr.status_pred() {
                    f(Use::PredDst(p));
                }
            }
            Op::Store { access, src: s } => {
                f(src(*s, access.words()));
                access.addr.for_each_source(&mut f);
                if let Some(p) = access.addr.status_pred() {
                    f(Use::PredDst(p));
                }
            }
            Op::Atomic(a) => {
                let words = a.access.words();
                f(src(a.src, words));
                if let Some(c) = a.src2 {
                    f(src(c, words));
                }
                a.access.addr.for_each_source(&mut f);
                f(Use::Dst { reg: a.dst, words });
                f(Use::PredDst(a.performed));
                if let Some(p) = a.access.addr.status_pred() {
                    f(Use::PredDst(p));
                }
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

    /// Whether `op` is pure per-lane work: each executing lane's results depend only on its own
    /// registers and predicates, and it has no effect but its destinations. For such an op whose
    /// destinations are all uniform, computing the lowest executing lane alone is exact.
    pub fn is_pure_per_lane(&self) -> bool {
        match self {
            Op::Mov { .. }
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
            | Op::Prmt { .. }
            | Op::Bfe { .. }
            | Op::Bfi { .. }
            | Op::Fma { .. }
            | Op::PredLut { .. }
            | Op::IsSpace { .. }
            | Op::PackHalves { .. }
            | Op::PackedMinMax { .. } => true,
            Op::Nop
            | Op::Vote { .. }
            | Op::Shfl { .. }
            | Op::Redux { .. }
            | Op::Match { .. }
            | Op::Load { .. }
            | Op::Store { .. }
            | Op::Atomic(_)
            | Op::Fence { .. }
            | Op::Barrier { .. }
            | Op::Branch { .. }
            | Op::BranchConverged { .. }
            | Op::WarpSplit { .. }
            | Op::Exit => false,
        }
    }

    /// How the op passes control on.
    pub fn control(&self) -> Control {
        match self {
            Op::Branch { target, .. } => Control::Branch { target: *target },
            Op::BranchConverged { target, .. } => Control::UniformBranch { target: *target },
            Op::WarpSplit { rejoin, .. } => Control::Split { rejoin: *rejoin },
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
            | Op::Fence { .. }
            | Op::Shfl { .. }
            | Op::Redux { .. }
            | Op::Match { .. }
            | Op::Prmt { .. }
            | Op::Bfe { .. }
            | Op::Bfi { .. }
            | Op::Fma { .. }
            | Op::PredLut { .. }
            | Op::IsSpace { .. }
            | Op::PackHalves { .. }
            | Op::PackedMinMax { .. } => Control::Next,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::build::*;
    use crate::ir::{Guard, Space, Src, SrcMod, Ty};

    #[test]
    fn result_widths_follow_the_types() {
        // MulWide: twice the type's width, in whole registers (BinOp::MulWide's doc).
        let wide = |ty| BinOp::MulWide.result_words(ty);
        assert_eq!(
            [wide(Ty::U8), wide(Ty::S16), wide(Ty::U32), wide(Ty::S64)],
            [1, 1, 2, 4]
        );
        assert_eq!(BinOp::Add.result_words(Ty::U64), 2);
        assert_eq!(BinOp::Mul.result_words(Ty::U16), 1);
        // A shift amount is one word whatever the type.
        assert!(BinOp::Shl.b_is_shift_amount() && BinOp::Shr.b_is_shift_amount());
        assert_eq!(BinOp::Shl.b_words(Ty::U64), 1);
        assert_eq!(BinOp::Add.b_words(Ty::U64), 2);
        // Counts are one word; the others have the type's width.
        assert_eq!(UnOp::Popc.result_words(Ty::U64), 1);
        assert_eq!(UnOp::Clz.result_words(Ty::U64), 1);
        assert_eq!(UnOp::Brev.result_words(Ty::U64), 2);
        assert_eq!(
            (ImadMode::Wide.dst_words(), ImadMode::Lo.dst_words()),
            (2, 1)
        );
        assert_eq!(
            (ImadMode::Hi.dst_words(), ImadMode::Hi.addend_words()),
            (1, 2)
        );
    }

    #[test]
    fn atomic_shapes() {
        let swap: Vec<AtomicOp> = AtomicOp::ALL
            .iter()
            .copied()
            .filter(|op| op.has_swap_operand())
            .collect();
        assert_eq!(swap, [AtomicOp::Cas, AtomicOp::Cast, AtomicOp::FCmpWr]);
        let flag: Vec<AtomicOp> = AtomicOp::ALL
            .iter()
            .copied()
            .filter(|op| op.returns_stored_flag())
            .collect();
        assert_eq!(flag, [AtomicOp::Cast]);
    }

    #[test]
    fn uses_list_sources_then_destinations_with_their_widths() {
        // ATOMS.CAS.64 R0, [R9+0x8], R4, R6: value operands, then the base, then the pair dst.
        let cas = atomic(
            Space::Shared,
            AtomicOp::Cas,
            Ty::U64,
            0,
            shared(9, 8),
            reg(4),
            Some(reg(6)),
        );
        let srcs: Vec<(Operand, u16)> = cas
            .operand_uses()
            .iter()
            .map(|u| (u.operand, u.words))
            .collect();
        assert_eq!(srcs, [(reg(4), 2), (reg(6), 2), (reg(9), 1)]);
        assert_eq!(cas.dst_uses(), [(r(0), 2)]);
        assert!(cas.reads_reg(r(5)) && cas.reads_reg(r(9)) && !cas.reads_reg(r(8)));
        assert!(cas.writes_reg(r(1)) && !cas.writes_reg(r(2)));
        // A 64-bit base reads the pair.
        let ld = load(Space::Global, Ty::U32, 3, wide(10, 0));
        assert_eq!(ld.operand_uses()[0].words, 2);
        assert_eq!(ld.dst_uses(), [(r(3), 1)]);
    }

    #[test]
    fn predicates_include_the_guard_and_register_counts_skip_rz_and_pt() {
        let setp = Inst {
            op: Op::SetP {
                cmp: CmpOp::Lt,
                ty: Ty::U32,
                combine: crate::ir::BoolOp::And,
                dst: Pred(2),
                dst2: Pred::PT,
                a: s(reg(0)),
                b: Src {
                    operand: reg(7),
                    modifier: SrcMod::None,
                },
                c: crate::ir::PredSrc::TRUE,
                chain: None,
            },
            guard: Guard {
                pred: Pred(5),
                negate: true,
            },
            span: crate::ir::Span::default(),
            text: String::new(),
            sched: Vec::new(),
        };
        assert_eq!(setp.pred_uses(), [Pred(5), Pred(2), Pred::PT, Pred::PT]);
        let mov_rz = Inst {
            op: mov(Ty::U64, Reg::RZ.0, reg(Reg::RZ.0)),
            ..setp.clone()
        };
        assert_eq!(register_counts(std::slice::from_ref(&setp)), (8, 6));
        assert_eq!(register_counts(&[mov_rz]), (0, 6));
    }

    #[test]
    fn control() {
        assert_eq!(bra(4).control(), Control::Branch { target: 4 });
        assert!(bar(0).control().ends_block() && exit().control().ends_block());
        assert!(!nop().control().ends_block());
        assert!(CmpOp::Nan.is_float_only() && !CmpOp::Le.is_float_only());
    }
}
