//! Arithmetic, logic, compares and moves.
//!
//! Every channel computes in the instruction's *execution type*: a float type when the operands
//! are floats (all of one type, except `mov`, which converts), otherwise a 32- or 64-bit
//! integer, 64-bit when any operand (destination included) is 64-bit. Integer sources are
//! sign- or zero-extended by their own type to that width (`shr` reads its first source
//! zero-extended when it is as wide as the execution type: a logical shift of that type), and
//! the result is truncated to the destination's type. So `add` of a `w` and a `d` is the 32-bit
//! sum, `shl` of a `d` into a `q` shifts the sign-extended 64-bit value, and `mov (M1, 16)
//! V<2> X<1;1,0>` writes the low dwords of 64-bit elements. Shift amounts use their low 5 bits
//! (6 for a 64-bit execution type). Comparisons and `min`/`max` are signed when both integer
//! sources are signed and unsigned when both are unsigned; a mixed pair is accepted only when
//! one side is an immediate whose value means the same in both (0 to 2^31 − 1), and refused
//! otherwise. Float results round to nearest even and keep denormals (the mode IGC's
//! prologue `or %cr0 0x4c0` selects).

use super::grf::ChannelBytes;
use super::{err, GrfAccess, LResult, Lower, P_T0};
use crate::front::visa::ast::{
    self, CmpRel, ElemType, ExecSize, GeneralOperand, Inst, OperandKind,
};
use crate::ir::{self, BinOp, Guard, Op, Operand, Pred, PredSrc, Reg, Src, Ty, UnOp};

/// What a channel computes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ExecTy {
    /// Integers of 32 or 64 bits.
    Int(u32),
    /// A float type: `F16`, `F32` or `F64`.
    Float(Ty),
}

impl ExecTy {
    fn int_ty(self, signed: bool) -> Ty {
        match (self, signed) {
            (ExecTy::Int(64), true) => Ty::S64,
            (ExecTy::Int(64), false) => Ty::U64,
            (_, true) => Ty::S32,
            (_, false) => Ty::U32,
        }
    }
    fn words(self) -> u16 {
        match self {
            ExecTy::Int(64) | ExecTy::Float(Ty::F64) => 2,
            _ => 1,
        }
    }
}

/// The IR float type of a vISA float type.
fn float_ty(t: ElemType) -> Option<Ty> {
    match t {
        ElemType::F => Some(Ty::F32),
        ElemType::DF => Some(Ty::F64),
        ElemType::HF => Some(Ty::F16),
        _ => None,
    }
}

/// The raw (unsigned, same width) IR type of an element type.
pub(super) fn raw_ty(t: ElemType) -> Ty {
    match t.size() {
        1 => Ty::U8,
        2 => Ty::U16,
        8 => Ty::U64,
        _ => Ty::U32,
    }
}

/// The IR type a load of `t` extends with.
fn load_ty(t: ElemType, unsigned: bool) -> Ty {
    match (t.size(), t.is_signed_int() && !unsigned) {
        (1, true) => Ty::S8,
        (1, false) => Ty::U8,
        (2, true) => Ty::S16,
        (2, false) => Ty::U16,
        (8, _) => Ty::U64,
        (_, true) => Ty::S32,
        (_, false) => Ty::U32,
    }
}

/// The element type of a value operand.
pub(super) fn operand_type(op: &ast::Operand) -> Option<ElemType> {
    match &op.kind {
        OperandKind::General(g) => Some(g.ty),
        OperandKind::Imm(i) => Some(match i.ty {
            ElemType::V => ElemType::W,
            ElemType::UV => ElemType::UW,
            other => other,
        }),
        OperandKind::Raw(r) => Some(r.ty),
        OperandKind::Pred(_) => Some(ElemType::UD),
        _ => None,
    }
}

fn ir_mod(m: ast::SrcMod) -> ir::SrcMod {
    match m {
        ast::SrcMod::None => ir::SrcMod::None,
        ast::SrcMod::Neg => ir::SrcMod::Neg,
        ast::SrcMod::Abs => ir::SrcMod::Abs,
        ast::SrcMod::NegAbs => ir::SrcMod::NegAbs,
        ast::SrcMod::Not => ir::SrcMod::Not,
    }
}

impl<'k> Lower<'k> {
    /// The GRF access of a general operand read or written as `ty`.
    fn general_access(&self, g: &GeneralOperand, exec: &ExecSize, ty: ir::Ty) -> GrfAccess {
        let bytes = ChannelBytes::of_general(&self.layout, g, exec.size);
        GrfAccess::scalar(bytes, exec.channel_offset(), ty)
    }

    /// Loads a source operand for the lanes of `guard`, as a value of `ty`'s width (an integer
    /// type: extended from its own type, zero-extended when `unsigned`; a float type: the raw
    /// bits, which must be of that float type).
    pub(super) fn load_source(
        &mut self,
        guard: Guard,
        op: &ast::Operand,
        exec: &ExecSize,
        ty: ExecTy,
        unsigned: bool,
    ) -> LResult<Src> {
        match &op.kind {
            OperandKind::General(g) => {
                if let ExecTy::Float(f) = ty {
                    if float_ty(g.ty) != Some(f) {
                        return Err(err(
                            op.span,
                            format!(
                                "a `{}` operand in a `{}` computation (mixed types need a `mov`)",
                                g.ty.name(),
                                f.name()
                            ),
                        ));
                    }
                }
                let words = ty.words();
                let dst = self.temp(words);
                let lty = match ty {
                    ExecTy::Float(_) => raw_ty(g.ty),
                    ExecTy::Int(_) => load_ty(g.ty, unsigned),
                };
                let access = self.general_access(g, exec, lty);
                self.grf_load(guard, access, dst)?;
                let mut value = dst;
                if ty == ExecTy::Int(64) && g.ty.size() < 8 {
                    let signed = g.ty.is_signed_int() && !unsigned;
                    // Replicated, into a register of its own, so that each is written once
                    // (the JIT then computes it once per warp).
                    if self.replicating {
                        value = self.temp(2);
                    }
                    self.emit(
                        guard,
                        Op::Convert {
                            dst_ty: if signed { Ty::S64 } else { Ty::U64 },
                            src_ty: if signed { Ty::S32 } else { Ty::U32 },
                            round: ir::Round::Nearest,
                            ftz: false,
                            dst: value,
                            a: Operand::Reg(dst).into(),
                        },
                    );
                }
                Ok(Src {
                    operand: Operand::Reg(value),
                    modifier: ir_mod(g.modifier),
                })
            }
            OperandKind::Imm(i) => {
                if matches!(i.ty, ElemType::V | ElemType::UV) {
                    return self.packed_vector(guard, i, exec);
                }
                if let ExecTy::Float(f) = ty {
                    if float_ty(i.ty) != Some(f) {
                        return Err(err(
                            op.span,
                            format!(
                                "a `{}` immediate in a `{}` computation",
                                i.ty.name(),
                                f.name()
                            ),
                        ));
                    }
                    return Ok(Operand::Imm(i.bits).into());
                }
                if i.ty.is_float() || i.ty == ElemType::VF {
                    return Err(err(op.span, "a float immediate in an integer computation"));
                }
                let bits = i.ty.size() * 8;
                let v = if i.ty.is_signed_int() && !unsigned && bits < 64 {
                    let shift = 64 - bits;
                    (((i.bits << shift) as i64) >> shift) as u64
                } else {
                    i.bits
                };
                let v = if ty == ExecTy::Int(32) {
                    v & 0xffff_ffff
                } else {
                    v
                };
                Ok(Operand::Imm(v).into())
            }
            OperandKind::Pred(p) => {
                let pred = self.pred_of(*p, op.span)?;
                let bits = self.channel_bits(pred, 0, self.simd);
                if ty == ExecTy::Int(64) {
                    let wide = self.temp(2);
                    self.emit(
                        guard,
                        Op::Convert {
                            dst_ty: Ty::U64,
                            src_ty: Ty::U32,
                            round: ir::Round::Nearest,
                            ftz: false,
                            dst: wide,
                            a: Operand::Reg(bits).into(),
                        },
                    );
                    return Ok(Operand::Reg(wide).into());
                }
                Ok(Operand::Reg(bits).into())
            }
            _ => Err(err(op.span, "expected a general operand or an immediate")),
        }
    }

    /// A packed `v`/`uv` immediate: channel `c` gets nibble `c % 8` (sign-extended for `v`).
    fn packed_vector(&mut self, guard: Guard, i: &ast::Immediate, exec: &ExecSize) -> LResult<Src> {
        let t = self.temp(1);
        // shift = ((lane − offset) & 7) × 4; value = (imm >> shift) & 0xf, then sign-extend.
        self.emit(
            guard,
            Op::Binary {
                op: BinOp::Sub,
                ty: Ty::U32,
                dst: t,
                a: Operand::Reg(super::R_LANE).into(),
                b: Operand::Imm(u64::from(exec.channel_offset())).into(),
                ftz: false,
            },
        );
        for (op, b) in [(BinOp::And, 7), (BinOp::Shl, 2)] {
            self.emit(guard, bin(op, Ty::U32, t, t, Operand::Imm(b)));
        }
        self.emit(
            guard,
            Op::Binary {
                op: BinOp::Shr,
                ty: Ty::U32,
                dst: t,
                a: Operand::Imm(i.bits & 0xffff_ffff).into(),
                b: Operand::Reg(t).into(),
                ftz: false,
            },
        );
        if i.ty == ElemType::V {
            self.emit(guard, bin(BinOp::Shl, Ty::U32, t, t, Operand::Imm(28)));
            self.emit(guard, bin(BinOp::Shr, Ty::S32, t, t, Operand::Imm(28)));
        } else {
            self.emit(guard, bin(BinOp::And, Ty::U32, t, t, Operand::Imm(0xf)));
        }
        Ok(Operand::Reg(t).into())
    }

    /// Stores `value` (of the execution width) into a general destination, truncated to its
    /// type.
    pub(super) fn store_dest(
        &mut self,
        guard: Guard,
        dst: &ast::Operand,
        exec: &ExecSize,
        value: Reg,
    ) -> LResult<()> {
        self.store_dest_at(guard, dst, exec, value, 0)
    }

    /// As [`Self::store_dest`], `extra` bytes past the destination's origin.
    pub(super) fn store_dest_at(
        &mut self,
        guard: Guard,
        dst: &ast::Operand,
        exec: &ExecSize,
        value: Reg,
        extra: u32,
    ) -> LResult<()> {
        let OperandKind::General(g) = &dst.kind else {
            return Err(err(dst.span, "expected a general destination"));
        };
        if g.var == ast::VarId::NULL {
            return Ok(());
        }
        let mut bytes = ChannelBytes::of_general(&self.layout, g, exec.size);
        if let ChannelBytes::Linear { first, .. } = &mut bytes {
            *first += extra;
        }
        let access = GrfAccess::scalar(bytes, exec.channel_offset(), raw_ty(g.ty));
        self.grf_store(guard, access, Operand::Reg(value))
    }

    /// The execution type of an instruction over `types` (destination and sources).
    fn exec_type(&self, inst: &Inst, types: &[ElemType]) -> LResult<ExecTy> {
        let floats: Vec<Ty> = types.iter().filter_map(|t| float_ty(*t)).collect();
        if let Some(&f) = floats.first() {
            if floats.len() != types.len() || floats.iter().any(|&g| g != f) {
                return Err(err(
                    inst.span,
                    "operands of different types in a float instruction (convert with `mov`)",
                ));
            }
            if f == Ty::F16 {
                return Err(err(
                    inst.span,
                    "half-precision arithmetic is not supported yet (`mov` of `hf` is)",
                ));
            }
            return Ok(ExecTy::Float(f));
        }
        if types
            .iter()
            .any(|t| matches!(t, ElemType::BF | ElemType::VF))
        {
            return Err(err(
                inst.span,
                "`bf` and `vf` operands are not supported yet",
            ));
        }
        Ok(ExecTy::Int(if types.iter().any(|t| t.size() == 8) {
            64
        } else {
            32
        }))
    }

    /// Whether an integer comparison or min/max of `a` and `b` is signed.
    fn signedness(&self, inst: &Inst, a: &ast::Operand, b: &ast::Operand) -> LResult<bool> {
        let side = |o: &ast::Operand| -> (bool, bool) {
            // (signed, an immediate meaning the same either way)
            let t = operand_type(o).unwrap_or(ElemType::UD);
            let neutral = match &o.kind {
                OperandKind::Imm(i) => {
                    let bits = t.size() * 8;
                    let v = if t.is_signed_int() && bits < 64 {
                        let shift = 64 - bits;
                        ((i.bits << shift) as i64) >> shift
                    } else {
                        i.bits as i64
                    };
                    (0..=i64::from(i32::MAX)).contains(&v)
                }
                _ => false,
            };
            (t.is_signed_int(), neutral)
        };
        let (sa, na) = side(a);
        let (sb, nb) = side(b);
        if sa == sb {
            Ok(sa)
        } else if na {
            Ok(sb)
        } else if nb {
            Ok(sa)
        } else {
            Err(err(
                inst.span,
                "an ordered comparison of a signed and an unsigned operand: make both the same \
                 type (vISA leaves the mixed case to the hardware's conversion rules)",
            ))
        }
    }

    /// The instructions with a plain operand signature.
    pub(super) fn lower_plain(&mut self, _si: usize, inst: &Inst) -> LResult<()> {
        let m = inst.mnemonic.as_str();
        match m {
            "ret" => self.lower_ret(inst),
            "nop" => Ok(()),
            "mov" => self.lower_mov(inst),
            "add" | "mul" | "mulh" | "and" | "or" | "xor" | "min" | "max" => {
                self.lower_binary(inst)
            }
            "shl" | "shr" | "asr" => self.lower_shift(inst),
            "not" | "cbit" => self.lower_unary(inst),
            "mad" => self.lower_mad(inst),
            "madw" => self.lower_madw(inst),
            "addc" => self.lower_addc(inst),
            "sel" => self.lower_sel(inst),
            "setp" => self.lower_setp(inst),
            _ => Err(err(
                inst.mnemonic_span,
                format!("`{m}` is not supported yet"),
            )),
        }
    }

    pub(super) fn operands<'i, const N: usize>(
        &self,
        inst: &'i Inst,
    ) -> LResult<[&'i ast::Operand; N]> {
        let v: Vec<&'i ast::Operand> = inst.operands.iter().collect();
        v.try_into()
            .map_err(|_| err(inst.span, format!("`{}` takes {N} operands", inst.mnemonic)))
    }

    fn types_of(&self, ops: &[&ast::Operand]) -> LResult<Vec<ElemType>> {
        ops.iter()
            .map(|o| {
                operand_type(o)
                    .ok_or_else(|| err(o.span, "expected a general operand or an immediate"))
            })
            .collect()
    }

    fn lower_mov(&mut self, inst: &Inst) -> LResult<()> {
        let [dst, src] = self.operands::<2>(inst)?;
        let exec = self.exec_of(inst);
        let g = self.guard(inst, true)?;
        let td = operand_type(dst).ok_or_else(|| err(dst.span, "expected a destination"))?;
        let ts = operand_type(src).ok_or_else(|| err(src.span, "expected a source"))?;
        if let OperandKind::Pred(_) = dst.kind {
            return Err(err(dst.span, "`mov` into a predicate is not supported yet"));
        }
        match (float_ty(td), float_ty(ts)) {
            (Some(fd), Some(fs)) if fd == fs => {
                // A float copy moves the bits.
                if let OperandKind::General(gs) = &src.kind {
                    if gs.modifier != ast::SrcMod::None {
                        return Err(err(
                            src.span,
                            "a source modifier on a float `mov` is not supported yet",
                        ));
                    }
                }
                let v = self.load_source(g, src, &exec, ExecTy::Float(fd), false)?;
                let out = match v.operand {
                    Operand::Reg(r) => r,
                    imm => {
                        let out = self.temp(ExecTy::Float(fd).words());
                        self.emit(
                            g,
                            Op::Mov {
                                ty: if fd == Ty::F64 { Ty::U64 } else { Ty::U32 },
                                dst: out,
                                src: imm,
                            },
                        );
                        out
                    }
                };
                self.store_dest(g, dst, &exec, out)
            }
            (Some(fd), Some(fs)) => {
                let v = self.load_source(g, src, &exec, ExecTy::Float(fs), false)?;
                let out = self.temp(ExecTy::Float(fd).words());
                self.emit(
                    g,
                    Op::Convert {
                        dst_ty: fd,
                        src_ty: fs,
                        round: ir::Round::Nearest,
                        ftz: false,
                        dst: out,
                        a: v,
                    },
                );
                self.store_dest(g, dst, &exec, out)
            }
            (Some(fd), None) => {
                let wide = ts.size() == 8;
                let it = ExecTy::Int(if wide { 64 } else { 32 });
                let v = self.load_source(g, src, &exec, it, false)?;
                let out = self.temp(ExecTy::Float(fd).words());
                self.emit(
                    g,
                    Op::Convert {
                        dst_ty: fd,
                        src_ty: it.int_ty(ts.is_signed_int()),
                        round: ir::Round::Nearest,
                        ftz: false,
                        dst: out,
                        a: v,
                    },
                );
                self.store_dest(g, dst, &exec, out)
            }
            (None, Some(fs)) => {
                if td.size() < 4 {
                    return Err(err(
                        inst.span,
                        "a float to 8- or 16-bit integer `mov` is not supported yet",
                    ));
                }
                let v = self.load_source(g, src, &exec, ExecTy::Float(fs), false)?;
                let it = ExecTy::Int(if td.size() == 8 { 64 } else { 32 });
                let out = self.temp(it.words());
                self.emit(
                    g,
                    Op::Convert {
                        dst_ty: it.int_ty(td.is_signed_int()),
                        src_ty: fs,
                        round: ir::Round::Zero,
                        ftz: false,
                        dst: out,
                        a: v,
                    },
                );
                self.store_dest(g, dst, &exec, out)
            }
            (None, None) => {
                let ty = self.exec_type(inst, &[td, ts])?;
                let v = self.load_source(g, src, &exec, ty, false)?;
                let out = match v {
                    Src {
                        operand: Operand::Reg(r),
                        modifier: ir::SrcMod::None,
                    } => r,
                    other => {
                        let out = self.temp(ty.words());
                        self.emit(
                            g,
                            Op::Mov {
                                ty: ty.int_ty(false),
                                dst: out,
                                src: other.operand,
                            },
                        );
                        if other.modifier != ir::SrcMod::None {
                            self.emit(
                                g,
                                Op::Unary {
                                    op: match other.modifier {
                                        ir::SrcMod::Not => UnOp::Not,
                                        ir::SrcMod::Abs => UnOp::Abs,
                                        _ => UnOp::Neg,
                                    },
                                    ty: ty.int_ty(true),
                                    dst: out,
                                    a: Operand::Reg(out).into(),
                                },
                            );
                            if other.modifier == ir::SrcMod::NegAbs {
                                return Err(err(inst.span, "`(-abs)` on an integer `mov`"));
                            }
                        }
                        out
                    }
                };
                self.store_dest(g, dst, &exec, out)
            }
        }
    }

    fn lower_binary(&mut self, inst: &Inst) -> LResult<()> {
        let [dst, a, b] = self.operands::<3>(inst)?;
        let exec = self.exec_of(inst);
        let ty = self.exec_type(inst, &self.types_of(&[dst, a, b])?)?;
        let op = match inst.mnemonic.as_str() {
            "add" => BinOp::Add,
            "mul" => BinOp::Mul,
            // The high 32 bits of the 64-bit product.
            "mulh" => BinOp::MulHi,
            "and" => BinOp::And,
            "or" => BinOp::Or,
            "xor" => BinOp::Xor,
            "min" => BinOp::Min,
            _ => BinOp::Max,
        };
        if op == BinOp::MulHi && ty != ExecTy::Int(32) {
            return Err(err(inst.span, "`mulh` takes 32-bit integer operands"));
        }
        let signed = match (op, ty) {
            (BinOp::Min | BinOp::Max | BinOp::MulHi, ExecTy::Int(_)) => {
                self.signedness(inst, a, b)?
            }
            _ => false,
        };
        let ir_ty = match ty {
            ExecTy::Float(f) => {
                if matches!(
                    op,
                    BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Min | BinOp::Max
                ) {
                    return Err(err(
                        inst.span,
                        format!("float `{}` is not supported yet", inst.mnemonic),
                    ));
                }
                f
            }
            ExecTy::Int(_) => ty.int_ty(signed),
        };
        let g = self.guard(inst, true)?;
        let va = self.load_source(g, a, &exec, ty, false)?;
        let vb = self.load_source(g, b, &exec, ty, false)?;
        let out = self.temp(ty.words());
        self.emit(
            g,
            Op::Binary {
                op,
                ty: ir_ty,
                dst: out,
                a: va,
                b: vb,
                ftz: false,
            },
        );
        self.store_dest(g, dst, &exec, out)
    }

    fn lower_shift(&mut self, inst: &Inst) -> LResult<()> {
        let [dst, a, b] = self.operands::<3>(inst)?;
        let exec = self.exec_of(inst);
        let ty = self.exec_type(inst, &self.types_of(&[dst, a, b])?)?;
        let ExecTy::Int(bits) = ty else {
            return Err(err(inst.span, "shifts take integer operands"));
        };
        let g = self.guard(inst, true)?;
        let m = inst.mnemonic.as_str();
        let a_ty = operand_type(a).unwrap_or(ElemType::UD);
        // shr is logical: a source as wide as the execution type is read unsigned.
        let unsigned = m == "shr" && a_ty.size() * 8 >= bits;
        let va = self.load_source(g, a, &exec, ty, unsigned)?;
        let amount_mask = u64::from(bits - 1);
        let vb = match &b.kind {
            OperandKind::Imm(i) => Operand::Imm(i.bits & amount_mask).into(),
            _ => {
                let v = self.load_source(g, b, &exec, ExecTy::Int(32), true)?;
                let t = self.temp(1);
                self.emit(
                    g,
                    Op::Binary {
                        op: BinOp::And,
                        ty: Ty::U32,
                        dst: t,
                        a: v,
                        b: Operand::Imm(amount_mask).into(),
                        ftz: false,
                    },
                );
                Operand::Reg(t).into()
            }
        };
        let (op, signed) = match m {
            "shl" => (BinOp::Shl, false),
            "shr" => (BinOp::Shr, false),
            _ => (BinOp::Shr, true),
        };
        let out = self.temp(ty.words());
        self.emit(
            g,
            Op::Binary {
                op,
                ty: ty.int_ty(signed),
                dst: out,
                a: va,
                b: vb,
                ftz: false,
            },
        );
        self.store_dest(g, dst, &exec, out)
    }

    fn lower_unary(&mut self, inst: &Inst) -> LResult<()> {
        let [dst, a] = self.operands::<2>(inst)?;
        let exec = self.exec_of(inst);
        let ty = self.exec_type(inst, &self.types_of(&[dst, a])?)?;
        let ExecTy::Int(bits) = ty else {
            return Err(err(
                inst.span,
                format!("`{}` takes integer operands", inst.mnemonic),
            ));
        };
        let g = self.guard(inst, true)?;
        let cbit = inst.mnemonic == "cbit";
        if cbit && bits == 64 {
            return Err(err(inst.span, "64-bit `cbit` is not supported yet"));
        }
        let va = self.load_source(g, a, &exec, ty, cbit)?;
        let out = self.temp(ty.words());
        self.emit(
            g,
            Op::Unary {
                op: if cbit { UnOp::Popc } else { UnOp::Not },
                ty: ty.int_ty(false),
                dst: out,
                a: va,
            },
        );
        self.store_dest(g, dst, &exec, out)
    }

    fn lower_mad(&mut self, inst: &Inst) -> LResult<()> {
        let [dst, a, b, c] = self.operands::<4>(inst)?;
        let exec = self.exec_of(inst);
        let ty = self.exec_type(inst, &self.types_of(&[dst, a, b, c])?)?;
        let g = self.guard(inst, true)?;
        let va = self.load_source(g, a, &exec, ty, false)?;
        let vb = self.load_source(g, b, &exec, ty, false)?;
        let vc = self.load_source(g, c, &exec, ty, false)?;
        let out = self.temp(ty.words());
        match ty {
            ExecTy::Int(32) => self.emit(
                g,
                Op::Imad {
                    mode: ir::ImadMode::Lo,
                    signed: false,
                    dst: out,
                    a: va,
                    b: vb,
                    c: vc,
                },
            ),
            ExecTy::Int(_) => {
                self.emit(
                    g,
                    Op::Binary {
                        op: BinOp::Mul,
                        ty: Ty::U64,
                        dst: out,
                        a: va,
                        b: vb,
                        ftz: false,
                    },
                );
                self.emit(
                    g,
                    Op::Binary {
                        op: BinOp::Add,
                        ty: Ty::U64,
                        dst: out,
                        a: Operand::Reg(out).into(),
                        b: vc,
                        ftz: false,
                    },
                );
            }
            ExecTy::Float(_) => {
                return Err(err(inst.span, "float `mad` is not supported yet"));
            }
        }
        self.store_dest(g, dst, &exec, out)
    }

    /// `madw`: the 64-bit `a × b + c`; the low dwords go to the destination, the high dwords
    /// to the GRF-aligned block after them (`documentation/visa/instructions/MADW.md`).
    fn lower_madw(&mut self, inst: &Inst) -> LResult<()> {
        let [dst, a, b, c] = self.operands::<4>(inst)?;
        let exec = self.exec_of(inst);
        let types = self.types_of(&[dst, a, b, c])?;
        if types.iter().any(|t| t.size() != 4 || t.is_float()) {
            return Err(err(inst.span, "`madw` takes 32-bit integer operands"));
        }
        let signed = types[1..].iter().all(|t| t.is_signed_int());
        let g = self.guard(inst, true)?;
        let va = self.load_source(g, a, &exec, ExecTy::Int(32), false)?;
        let vb = self.load_source(g, b, &exec, ExecTy::Int(32), false)?;
        let vc = self.load_source(g, c, &exec, ExecTy::Int(64), !signed)?;
        let out = self.temp(2);
        self.emit(
            g,
            Op::Imad {
                mode: ir::ImadMode::Wide,
                signed,
                dst: out,
                a: va,
                b: vb,
                c: vc,
            },
        );
        let hi_offset = (exec.size * 4).div_ceil(ast::GRF_BYTES) * ast::GRF_BYTES;
        self.store_dest(g, dst, &exec, out)?;
        self.store_dest_at(g, dst, &exec, out.word(1), hi_offset)
    }

    /// `addc dst carry a b`: the low 32 bits of `a + b` and its carry (0 or 1).
    fn lower_addc(&mut self, inst: &Inst) -> LResult<()> {
        let [dst, carry, a, b] = self.operands::<4>(inst)?;
        let exec = self.exec_of(inst);
        let types = self.types_of(&[dst, carry, a, b])?;
        if types.iter().any(|t| *t != ElemType::UD) {
            return Err(err(inst.span, "`addc` takes `ud` operands"));
        }
        let g = self.guard(inst, true)?;
        let va = self.load_source(g, a, &exec, ExecTy::Int(64), true)?;
        let vb = self.load_source(g, b, &exec, ExecTy::Int(64), true)?;
        let out = self.temp(2);
        self.emit(
            g,
            Op::Binary {
                op: BinOp::Add,
                ty: Ty::U64,
                dst: out,
                a: va,
                b: vb,
                ftz: false,
            },
        );
        self.store_dest(g, dst, &exec, out)?;
        self.store_dest(g, carry, &exec, out.word(1))
    }

    /// `(P) sel dst a b`: `P ? a : b` per channel; the predicate selects, it does not disable.
    fn lower_sel(&mut self, inst: &Inst) -> LResult<()> {
        let [dst, a, b] = self.operands::<3>(inst)?;
        let exec = self.exec_of(inst);
        let ty = self.exec_type(inst, &self.types_of(&[dst, a, b])?)?;
        let Some(p) = &inst.pred else {
            return Err(err(
                inst.span,
                "`sel` needs a predicate (or a condition modifier, which is not supported yet)",
            ));
        };
        let pred = self.predicate_source(p, &exec)?;
        let g = self.guard(inst, false)?;
        let va = self.load_source(g, a, &exec, ty, false)?;
        let vb = self.load_source(g, b, &exec, ty, false)?;
        let out = self.temp(ty.words());
        let mty = match ty {
            ExecTy::Float(f) => f,
            ExecTy::Int(_) => ty.int_ty(false),
        };
        self.emit(
            g,
            Op::Select {
                ty: mty,
                dst: out,
                a: va,
                b: vb,
                pred,
            },
        );
        self.store_dest(g, dst, &exec, out)
    }

    /// `setp (Mk, n) P src`: flag `offset + c` gets bit `c` of the (scalar) source.
    fn lower_setp(&mut self, inst: &Inst) -> LResult<()> {
        let [dst, src] = self.operands::<2>(inst)?;
        let exec = self.exec_of(inst);
        let OperandKind::Pred(pv) = dst.kind else {
            return Err(err(dst.span, "`setp` writes a predicate"));
        };
        let pred = self.pred_of(pv, dst.span)?;
        if let OperandKind::General(g) = &src.kind {
            if g.region.element(1) != g.region.element(0) {
                return Err(err(
                    src.span,
                    "`setp` from a per-channel source is not supported yet (a scalar or an \
                     immediate is)",
                ));
            }
        }
        let g = self.guard(inst, false)?;
        let v = self.load_source(g, src, &exec, ExecTy::Int(32), true)?;
        let t = self.temp(1);
        self.emit(
            g,
            bin(
                BinOp::Sub,
                Ty::U32,
                t,
                super::R_LANE,
                Operand::Imm(u64::from(exec.channel_offset())),
            ),
        );
        self.emit(
            g,
            Op::Binary {
                op: BinOp::Shr,
                ty: Ty::U32,
                dst: t,
                a: v,
                b: Operand::Reg(t).into(),
                ftz: false,
            },
        );
        self.emit(g, bin(BinOp::And, Ty::U32, t, t, Operand::Imm(1)));
        self.emit(g, super::setp_u32(ir::CmpOp::Ne, pred, t, 0));
        Ok(())
    }

    /// `cmp.REL (Mk, n) dst a b`: into a predicate (the enabled channels' flags) or a general
    /// variable (all ones or zero).
    pub(super) fn lower_cmp(&mut self, inst: &Inst, rel: CmpRel) -> LResult<()> {
        let [dst, a, b] = self.operands::<3>(inst)?;
        if inst.pred.is_some() {
            return Err(err(inst.span, "`cmp` cannot be predicated"));
        }
        let exec = self.exec_of(inst);
        let ty = self.exec_type(inst, &self.types_of(&[a, b])?)?;
        let float = matches!(ty, ExecTy::Float(_));
        let cmp = match (rel, float) {
            (CmpRel::Eq, _) => ir::CmpOp::Eq,
            // IEEE: NaN is unequal to everything.
            (CmpRel::Ne, true) => ir::CmpOp::Neu,
            (CmpRel::Ne, false) => ir::CmpOp::Ne,
            (CmpRel::Gt, _) => ir::CmpOp::Gt,
            (CmpRel::Ge, _) => ir::CmpOp::Ge,
            (CmpRel::Lt, _) => ir::CmpOp::Lt,
            (CmpRel::Le, _) => ir::CmpOp::Le,
        };
        let cty = match ty {
            ExecTy::Float(f) => f,
            ExecTy::Int(_) => {
                let ordered = !matches!(rel, CmpRel::Eq | CmpRel::Ne);
                ty.int_ty(ordered && self.signedness(inst, a, b)?)
            }
        };
        let g = self.guard(inst, false)?;
        let va = self.load_source(g, a, &exec, ty, false)?;
        let vb = self.load_source(g, b, &exec, ty, false)?;
        let target = match dst.kind {
            OperandKind::Pred(pv) => self.pred_of(pv, dst.span)?,
            _ => P_T0,
        };
        self.emit(
            g,
            Op::SetP {
                cmp,
                ty: cty,
                combine: ir::BoolOp::And,
                dst: target,
                dst2: Pred::PT,
                a: va,
                b: vb,
                c: PredSrc::TRUE,
                chain: None,
            },
        );
        if target == P_T0 {
            let td = operand_type(dst).unwrap_or(ElemType::UD);
            let out = self.temp(2);
            self.emit(
                g,
                Op::Select {
                    ty: if td.size() == 8 { Ty::U64 } else { Ty::U32 },
                    dst: out,
                    a: Operand::Imm(u64::MAX).into(),
                    b: Operand::Imm(0).into(),
                    pred: PredSrc {
                        pred: P_T0,
                        negate: false,
                    },
                },
            );
            self.store_dest(g, dst, &exec, out)?;
        }
        Ok(())
    }
}

/// `dst = a op b` on registers and an operand.
pub(super) fn bin(op: BinOp, ty: Ty, dst: Reg, a: Reg, b: Operand) -> Op {
    Op::Binary {
        op,
        ty,
        dst,
        a: Operand::Reg(a).into(),
        b: b.into(),
        ftz: false,
    }
}
