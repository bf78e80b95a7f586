//! ALU families: moves, special registers, integer and float arithmetic, the SASS integer
//! instructions (`IADD3`, `IMAD`, `LEA`, `SHF`, `LOP3`), selects, conversions and predicate
//! ops. Each runs a lane loop over the executing lanes; predicate results are accumulated as
//! lane masks and written once after the loop.

use super::{Lane, Translator};
use crate::ir::{
    BinOp, BoolOp, CmpOp, HalfSel, ImadMode, Operand, Pred, PredMove, PredSrc, Reg, Round, ShfInst,
    SpecialReg, Src, Ty, UnOp, VoteMode,
};
use crate::jit::slow::{SlowConvert, SlowOp};
use crate::jit::warp_ctx::off;
use crate::jit::JitError;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32, F64, I32, I64};
use cranelift_codegen::ir::{BlockArg, InstBuilder, MemFlagsData, Type, Value};

/// How a conversion is compiled.
enum ConvertPath {
    /// Integer to integer: truncate or extend.
    IntToInt,
    /// Integer to F32/F64, exact in round-to-nearest (or exact whatever the mode).
    IntToFloat,
    /// F32/F64 to any integer, in any rounding mode.
    FloatToInt,
    /// F32 to F64 (exact).
    Promote,
    /// F64 to F32 in round-to-nearest.
    Demote,
    /// Everything else: a call to `slow::slow_lanes` per warp-instruction.
    Slow,
}

fn convert_path(dst: Ty, src: Ty, round: Round) -> ConvertPath {
    let native_float = |t: Ty| matches!(t, Ty::F32 | Ty::F64);
    match (dst.is_int(), src.is_int()) {
        (true, true) => ConvertPath::IntToInt,
        (false, true) if native_float(dst) => {
            // Cranelift's int-to-float conversions round to nearest; a 32-bit integer fits an
            // f64 exactly, so there the mode does not matter.
            if round == Round::Nearest || (dst == Ty::F64 && src.bits() <= 32) {
                ConvertPath::IntToFloat
            } else {
                ConvertPath::Slow
            }
        }
        (true, false) if native_float(src) => ConvertPath::FloatToInt,
        (false, false) if src == Ty::F32 && dst == Ty::F64 => ConvertPath::Promote,
        (false, false) if src == Ty::F64 && dst == Ty::F32 && round == Round::Nearest => {
            ConvertPath::Demote
        }
        _ => ConvertPath::Slow,
    }
}

/// Whether a conversion goes through the per-warp slow-path call (not fusable).
pub(super) fn is_slow_convert(dst: Ty, src: Ty, round: Round) -> bool {
    matches!(convert_path(dst, src, round), ConvertPath::Slow)
}

fn float_type(ty: Ty) -> Type {
    if ty.bits() == 64 {
        F64
    } else {
        F32
    }
}

pub(super) fn int_cc(cmp: CmpOp, signed: bool) -> Option<IntCC> {
    Some(match (cmp, signed) {
        (CmpOp::Eq, _) => IntCC::Equal,
        (CmpOp::Ne, _) => IntCC::NotEqual,
        (CmpOp::Lt, true) => IntCC::SignedLessThan,
        (CmpOp::Le, true) => IntCC::SignedLessThanOrEqual,
        (CmpOp::Gt, true) => IntCC::SignedGreaterThan,
        (CmpOp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
        (CmpOp::Lt, false) => IntCC::UnsignedLessThan,
        (CmpOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
        (CmpOp::Gt, false) => IntCC::UnsignedGreaterThan,
        (CmpOp::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
        (
            CmpOp::Equ
            | CmpOp::Neu
            | CmpOp::Ltu
            | CmpOp::Leu
            | CmpOp::Gtu
            | CmpOp::Geu
            | CmpOp::Num
            | CmpOp::Nan,
            _,
        ) => return None,
    })
}

/// IEEE comparisons: the plain forms are ordered (false on NaN), the `*u` forms unordered.
fn float_cc(cmp: CmpOp) -> FloatCC {
    match cmp {
        CmpOp::Eq => FloatCC::Equal,
        CmpOp::Ne => FloatCC::OrderedNotEqual,
        CmpOp::Lt => FloatCC::LessThan,
        CmpOp::Le => FloatCC::LessThanOrEqual,
        CmpOp::Gt => FloatCC::GreaterThan,
        CmpOp::Ge => FloatCC::GreaterThanOrEqual,
        CmpOp::Equ => FloatCC::UnorderedOrEqual,
        CmpOp::Neu => FloatCC::NotEqual,
        CmpOp::Ltu => FloatCC::UnorderedOrLessThan,
        CmpOp::Leu => FloatCC::UnorderedOrLessThanOrEqual,
        CmpOp::Gtu => FloatCC::UnorderedOrGreaterThan,
        CmpOp::Geu => FloatCC::UnorderedOrGreaterThanOrEqual,
        CmpOp::Num => FloatCC::Ordered,
        CmpOp::Nan => FloatCC::Unordered,
    }
}

impl<'a, 'f> Translator<'a, 'f> {
    /// `MOV`: copy `ty.regs()` words per lane.
    pub(super) fn translate_mov(
        &mut self,
        exec: Value,
        ty: Ty,
        dst: Reg,
        src: Operand,
    ) -> Result<(), JitError> {
        let words = ty.regs();
        self.lane_loop(exec, &[], |t, lane, _| {
            let v = t.read_operand(lane, src, words)?;
            t.write_reg(lane, dst, words, v);
            Ok(vec![])
        })?;
        Ok(())
    }

    /// `SEL`/`selp`: `dst = pred ? a : b` per lane.
    pub(super) fn translate_select(
        &mut self,
        exec: Value,
        ty: Ty,
        dst: Reg,
        [a, b]: [Src; 2],
        pred: PredSrc,
    ) -> Result<(), JitError> {
        let words = ty.regs();
        let pm = self.pred_mask(pred)?;
        self.lane_loop(exec, &[], |t, lane, _| {
            let va = t.read_src(lane, &a, ty)?;
            let vb = t.read_src(lane, &b, ty)?;
            let bit = t.lane_bit_of(pm, lane);
            let v = t.b.ins().select(bit, va, vb);
            let v = t.narrow(v, ty);
            t.write_reg(lane, dst, words, v);
            Ok(vec![])
        })?;
        Ok(())
    }

    /// `P2R`-like `PredMove::ToReg` and `R2P`-like `PredMove::FromReg`.
    pub(super) fn translate_pred_move(&mut self, exec: Value, m: PredMove) -> Result<(), JitError> {
        match m {
            PredMove::ToReg { dst, src } => {
                let pm = self.pred_mask(src)?;
                self.lane_loop(exec, &[], |t, lane, _| {
                    let bit = t.lane_bit_of(pm, lane);
                    t.write_reg32(lane, dst, bit);
                    Ok(vec![])
                })?;
            }
            PredMove::FromReg { dst, src, mask } => {
                let zero = self.iconst(I32, 0);
                let bits = self.lane_loop(exec, &[zero], |t, lane, acc| {
                    let v = t.read_operand(lane, src, 1)?;
                    let m = t.b.ins().band_imm_s(v, mask as i64);
                    let nz = t.is_nonzero(m);
                    let bit = t.bool_to_lane_bit(nz, lane);
                    Ok(vec![t.b.ins().bor(acc[0], bit)])
                })?;
                self.write_pred(dst, exec, bits[0])?;
            }
        }
        Ok(())
    }

    /// `ISETP`/`FSETP`/`setp`: `dst = cmp(a, b) combine c`, `dst2 = !cmp(a, b) combine c`.
    #[allow(clippy::too_many_arguments)]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn translate_setp(
        &mut self,
        exec: Value,
        cmp: CmpOp,
        ty: Ty,
        combine: BoolOp,
        [dst, dst2]: [Pred; 2],
        [a, b]: [Src; 2],
        c: PredSrc,
        chain: Option<PredSrc>,
    ) -> Result<(), JitError> {
        if let Some(low) = chain {
            return self.translate_setp_chained(
                exec,
                cmp,
                ty,
                combine,
                [dst, dst2],
                [a, b],
                c,
                low,
            );
        }
        let cc = if ty.is_float() {
            None
        } else {
            Some(int_cc(cmp, ty.is_signed_int()).ok_or_else(|| {
                self.internal(format!(
                    "comparison {} on integer type {} (validation admits it on floats only)",
                    cmp.name(),
                    ty.name()
                ))
            })?)
        };
        let cm = self.pred_mask(c)?;
        let zero = self.iconst(I32, 0);
        let r = self.lane_loop(exec, &[zero], |t, lane, acc| {
            let va = t.read_src(lane, &a, ty)?;
            let vb = t.read_src(lane, &b, ty)?;
            let res = match cc {
                Some(cc) => {
                    let va = t.narrow(va, ty);
                    let vb = t.narrow(vb, ty);
                    t.b.ins().icmp(cc, va, vb)
                }
                None => {
                    let fa = t.as_float(va, ty);
                    let fb = t.as_float(vb, ty);
                    t.b.ins().fcmp(float_cc(cmp), fa, fb)
                }
            };
            let bit = t.bool_to_lane_bit(res, lane);
            Ok(vec![t.b.ins().bor(acc[0], bit)])
        })?;
        let rm = r[0];
        let not_rm = self.b.ins().bnot(rm);
        let d1 = self.bool_op(combine, rm, cm);
        let d2 = self.bool_op(combine, not_rm, cm);
        self.write_pred(dst, exec, d1)?;
        self.write_pred(dst2, exec, d2)?;
        Ok(())
    }

    /// `ISETP.EX`: the chained comparison of [`crate::sem::alu::compare_chained`], computed as
    /// lane masks: the strict (or equality) comparison and the equality of the high words, then
    /// combined with the low words' result.
    #[allow(clippy::too_many_arguments)]
    fn translate_setp_chained(
        &mut self,
        exec: Value,
        cmp: CmpOp,
        ty: Ty,
        combine: BoolOp,
        [dst, dst2]: [Pred; 2],
        [a, b]: [Src; 2],
        c: PredSrc,
        low: PredSrc,
    ) -> Result<(), JitError> {
        let cc = chained_cc(cmp, ty.is_signed_int())
            .ok_or_else(|| self.internal("chained comparison without an integer condition"))?;
        let zero = self.iconst(I32, 0);
        let masks = self.lane_loop(exec, &[zero, zero], |t, lane, acc| {
            let va = t.read_src(lane, &a, ty)?;
            let vb = t.read_src(lane, &b, ty)?;
            let va = t.narrow(va, ty);
            let vb = t.narrow(vb, ty);
            let main = t.b.ins().icmp(cc, va, vb);
            let equal = t.b.ins().icmp(IntCC::Equal, va, vb);
            let main = t.bool_to_lane_bit(main, lane);
            let equal = t.bool_to_lane_bit(equal, lane);
            Ok(vec![
                t.b.ins().bor(acc[0], main),
                t.b.ins().bor(acc[1], equal),
            ])
        })?;
        let (main, equal) = (masks[0], masks[1]);
        let chain = self.pred_mask(low)?;
        let rm = self.chained_result(cmp, main, equal, chain);
        let cm = self.pred_mask(c)?;
        let not_rm = self.b.ins().bnot(rm);
        let d1 = self.bool_op(combine, rm, cm);
        let d2 = self.bool_op(combine, not_rm, cm);
        self.write_pred(dst, exec, d1)?;
        self.write_pred(dst2, exec, d2)?;
        Ok(())
    }

    /// The result of a chained comparison `cmp` (see [`crate::ir::Op::SetP`]) from the high
    /// words' comparison `main` ([`chained_cc`]), their equality `equal` and the low words'
    /// result `chain`, all masks of the same shape (a warp's lane bits, or a chunk's vector
    /// lanes).
    pub(super) fn chained_result(
        &mut self,
        cmp: CmpOp,
        main: Value,
        equal: Value,
        chain: Value,
    ) -> Value {
        match cmp {
            CmpOp::Eq => self.b.ins().band(main, chain),
            CmpOp::Ne => self.b.ins().bor(main, chain),
            CmpOp::Lt
            | CmpOp::Le
            | CmpOp::Gt
            | CmpOp::Ge
            | CmpOp::Equ
            | CmpOp::Neu
            | CmpOp::Ltu
            | CmpOp::Leu
            | CmpOp::Gtu
            | CmpOp::Geu
            | CmpOp::Num
            | CmpOp::Nan => {
                let tie = self.b.ins().band(equal, chain);
                self.b.ins().bor(main, tie)
            }
        }
    }

    /// Predicate logic: `dst = a op b`.
    pub(super) fn translate_pred_logic(
        &mut self,
        exec: Value,
        op: BoolOp,
        dst: Pred,
        [a, b]: [PredSrc; 2],
    ) -> Result<(), JitError> {
        let am = self.pred_mask(a)?;
        let bm = self.pred_mask(b)?;
        let r = self.bool_op(op, am, bm);
        self.write_pred(dst, exec, r)
    }

    /// `VOTE`: the ballot of `src` over the executing lanes into `dst`, and `any`/`all`/`eq`
    /// into `dst_pred`.
    pub(super) fn translate_vote(
        &mut self,
        exec: Value,
        mode: VoteMode,
        dst: Reg,
        dst_pred: Pred,
        src: PredSrc,
    ) -> Result<(), JitError> {
        let sm = self.pred_mask(src)?;
        let ballot = self.b.ins().band(exec, sm);
        if self.kernel.uniform.has_reg(dst) {
            // Every executing lane writes the same ballot, and the broadcast after a uniform
            // write copies the lowest executing lane's value into all 32 slots: the same as
            // writing the ballot into all 32 now, when any lane executes (`VOTEU`).
            let any = self.b.create_block();
            let done = self.b.create_block();
            self.b.ins().brif(exec, any, &[], done, &[]);
            self.b.switch_to_block(any);
            self.splat_reg(dst, ballot);
            self.b.ins().jump(done, &[]);
            self.b.switch_to_block(done);
        } else if !dst.is_rz() {
            self.lane_loop(exec, &[], |t, lane, _| {
                t.write_reg32(lane, dst, ballot);
                Ok(vec![])
            })?;
        }
        let value = match mode {
            VoteMode::Any => self.is_nonzero(ballot),
            VoteMode::All => self.b.ins().icmp(IntCC::Equal, ballot, exec),
            VoteMode::Eq => {
                let none = self.b.ins().icmp_imm_s(IntCC::Equal, ballot, 0);
                let all = self.b.ins().icmp(IntCC::Equal, ballot, exec);
                self.b.ins().bor(none, all)
            }
        };
        let zero = self.iconst(I32, 0);
        let bits = self.b.ins().select(value, exec, zero);
        self.write_pred(dst_pred, exec, bits)
    }

    pub(super) fn bool_op(&mut self, op: BoolOp, a: Value, b: Value) -> Value {
        match op {
            BoolOp::And => self.b.ins().band(a, b),
            BoolOp::Or => self.b.ins().bor(a, b),
            BoolOp::Xor => self.b.ins().bxor(a, b),
        }
    }

    /// Narrow integer inputs zero-extended (for bit-counting ops).
    fn zero_narrow(&mut self, v: Value, ty: Ty) -> Value {
        let bits = ty.bits();
        if bits >= 32 {
            v
        } else {
            self.b.ins().band_imm_s(v, (1i64 << bits) - 1)
        }
    }

    fn as_float(&mut self, v: Value, ty: Ty) -> Value {
        self.b.ins().bitcast(float_type(ty), MemFlagsData::new(), v)
    }

    /// The bits of a float arithmetic result, with any NaN replaced by the format's canonical
    /// NaN (sign 0, exponent and fraction all ones), as NVIDIA GPUs and the reference
    /// interpreter produce; this also makes results independent of x86's NaN propagation.
    pub(super) fn float_result_bits(&mut self, f: Value) -> Value {
        let is_nan = self.b.ins().fcmp(FloatCC::Unordered, f, f);
        let bits = self.float_bits(f);
        let canonical = if self.b.func.dfg.value_type(f) == F64 {
            self.iconst(I64, 0x7fff_ffff_ffff_ffff)
        } else {
            self.iconst(I32, 0x7fff_ffff)
        };
        self.b.ins().select(is_nan, canonical, bits)
    }

    fn float_bits(&mut self, v: Value) -> Value {
        let ty = if self.b.func.dfg.value_type(v) == F64 {
            I64
        } else {
            I32
        };
        self.b.ins().bitcast(ty, MemFlagsData::new(), v)
    }

    /// Flush-to-zero on raw float bits: a subnormal (exponent field zero) becomes a zero of the
    /// same sign.
    pub(super) fn flush_subnormal(&mut self, bits: Value, ty: Ty) -> Value {
        let (exp_mask, sign): (i64, i64) = if ty.bits() == 64 {
            (0x7ff0_0000_0000_0000, i64::MIN)
        } else {
            (0x7f80_0000, 0x8000_0000)
        };
        let e = self.b.ins().band_imm_s(bits, exp_mask);
        let is_sub = self.b.ins().icmp_imm_s(IntCC::Equal, e, 0);
        let signed_zero = self.b.ins().band_imm_s(bits, sign);
        self.b.ins().select(is_sub, signed_zero, bits)
    }

    /// IEEE `minNum`/`maxNum` on floats: a NaN operand yields the other operand; otherwise
    /// Cranelift's `fmin`/`fmax` (which order `-0 < +0`). Both NaN gives a NaN, which callers
    /// canonicalise with [`Self::float_result_bits`].
    pub(super) fn float_min_max(&mut self, max: bool, a: Value, b: Value) -> Value {
        let r = if max {
            self.b.ins().fmax(a, b)
        } else {
            self.b.ins().fmin(a, b)
        };
        let a_nan = self.b.ins().fcmp(FloatCC::Unordered, a, a);
        let b_nan = self.b.ins().fcmp(FloatCC::Unordered, b, b);
        let r = self.b.ins().select(b_nan, a, r);
        self.b.ins().select(a_nan, b, r)
    }

    pub(super) fn translate_read_special(
        &mut self,
        exec: cranelift_codegen::ir::Value,
        dst: Reg,
        sr: SpecialReg,
    ) -> Result<(), JitError> {
        let cst = self.flags.state_const;
        let ctx = self.ctx;
        // Context loads are movable: Cranelift hoists them out of the lane loop.
        let load = move |t: &mut Self, offset: i32| t.b.ins().load(I32, cst, ctx, offset);
        self.lane_loop(exec, &[], |t, lane, _| {
            // Thread index within the CTA: warp_id * warp_size + lane, split into x, y, z.
            // `ntid` fields are at least 1 (ensured by `run_group`): no division by zero.
            let linear = |t: &mut Self| {
                let warp_id = load(t, off::WARP_ID);
                let warp_size = load(t, off::WARP_SIZE);
                let first = t.b.ins().imul(warp_id, warp_size);
                t.b.ins().iadd(first, lane.index)
            };
            // This lane's bit, the bits below it, and both (`(eq << 1) - 1`, all ones for
            // lane 31 where the shift wraps to 0).
            let lane_masks = |t: &mut Self| {
                let one = t.iconst(I32, 1);
                let eq = t.b.ins().ishl(one, lane.index);
                let lt = t.b.ins().iadd_imm_s(eq, -1);
                let eq2 = t.b.ins().ishl_imm_s(eq, 1);
                let le = t.b.ins().iadd_imm_s(eq2, -1);
                [eq, lt, le]
            };
            let v = match sr {
                SpecialReg::LanemaskEq => lane_masks(t)[0],
                SpecialReg::LanemaskLt => lane_masks(t)[1],
                SpecialReg::LanemaskLe => lane_masks(t)[2],
                SpecialReg::LanemaskGt => {
                    let le = lane_masks(t)[2];
                    t.b.ins().bnot(le)
                }
                SpecialReg::LanemaskGe => {
                    let lt = lane_masks(t)[1];
                    t.b.ins().bnot(lt)
                }
                SpecialReg::ClusterCtaRank | SpecialReg::SharedWindowHi => {
                    let c = sr
                        .constant_value()
                        .ok_or_else(|| t.internal("a constant special register without a value"))?;
                    t.iconst(I32, i64::from(c))
                }
                SpecialReg::TidX => {
                    // `linear % ntid.x`; below `ntid.x` (every lane of the common 1-D block)
                    // that is `linear` itself: skip the division. (Testing the lane's own index
                    // keeps one value fewer live in the lane loop than testing the warp's last.)
                    let (first, ntx, _) = t.warp_tid_x_row();
                    let l = t.b.ins().iadd(first, lane.index);
                    let in_row = t.b.ins().icmp(IntCC::UnsignedLessThan, l, ntx);
                    let slow = t.b.create_block();
                    t.b.set_cold_block(slow);
                    let join = t.b.create_block();
                    t.b.append_block_param(join, I32);
                    t.b.ins()
                        .brif(in_row, join, &[BlockArg::Value(l)], slow, &[]);
                    t.b.switch_to_block(slow);
                    let r = t.b.ins().urem(l, ntx);
                    t.b.ins().jump(join, &[BlockArg::Value(r)]);
                    t.b.switch_to_block(join);
                    t.b.block_params(join)[0]
                }
                SpecialReg::TidY => {
                    let l = linear(t);
                    let ntx = load(t, off::NTID);
                    let nty = load(t, off::NTID + 4);
                    let q = t.b.ins().udiv(l, ntx);
                    t.b.ins().urem(q, nty)
                }
                SpecialReg::TidZ => {
                    let l = linear(t);
                    let ntx = load(t, off::NTID);
                    let nty = load(t, off::NTID + 4);
                    let plane = t.b.ins().imul(ntx, nty);
                    t.b.ins().udiv(l, plane)
                }
                SpecialReg::LaneId => lane.index,
                SpecialReg::CtaIdX
                | SpecialReg::CtaIdY
                | SpecialReg::CtaIdZ
                | SpecialReg::NTidX
                | SpecialReg::NTidY
                | SpecialReg::NTidZ
                | SpecialReg::NCtaIdX
                | SpecialReg::NCtaIdY
                | SpecialReg::NCtaIdZ
                | SpecialReg::WarpId
                | SpecialReg::NWarpId => {
                    let offset = warp_uniform_special(sr).ok_or_else(|| {
                        t.internal("a warp-uniform special register without a field")
                    })?;
                    load(t, offset)
                }
            };
            t.write_reg32(lane, dst, v);
            Ok(vec![])
        })?;
        Ok(())
    }

    pub(super) fn translate_unary(
        &mut self,
        exec: Value,
        op: UnOp,
        ty: Ty,
        dst: Reg,
        a: Src,
    ) -> Result<(), JitError> {
        let dst_words = op.result_words(ty);
        debug_assert!(
            !ty.is_float() || matches!(op, UnOp::Neg | UnOp::Abs),
            "validation admits only NEG and ABS on floats"
        );
        self.lane_loop(exec, &[], |t, lane, _| {
            let v = t.read_src(lane, &a, ty)?;
            let r = t.unary_value(op, ty, v);
            t.write_reg(lane, dst, dst_words, r);
            Ok(vec![])
        })?;
        Ok(())
    }

    /// Unary op `op` of type `ty` on one lane's source value `v` (as `read_src` reads it): the
    /// result word.
    pub(super) fn unary_value(&mut self, op: UnOp, ty: Ty, v: Value) -> Value {
        let bits = ty.bits();
        let vt = self.b.func.dfg.value_type(v);
        let width = if vt == I64 { 64 } else { 32 };
        match op {
            UnOp::Not => {
                let r = self.b.ins().bnot(v);
                self.narrow(r, ty)
            }
            UnOp::Neg if ty.is_float() => self.apply_modifier(v, crate::ir::SrcMod::Neg, ty),
            UnOp::Neg => {
                let v = self.narrow(v, ty);
                let r = self.b.ins().ineg(v);
                self.narrow(r, ty)
            }
            UnOp::Abs if ty.is_float() => self.apply_modifier(v, crate::ir::SrcMod::Abs, ty),
            UnOp::Abs => {
                let v = self.narrow(v, ty);
                let r = self.b.ins().iabs(v);
                self.narrow(r, ty)
            }
            UnOp::Bfind | UnOp::BfindShift => {
                // The bits to search: the value itself (unsigned), or its bits that
                // differ from the sign bit (signed: complemented when negative), in the
                // register's width with the bits above the type's width zero.
                let v = self.narrow(v, ty);
                let y = if ty.is_signed_int() {
                    let sign = self.b.ins().sshr_imm_s(v, i64::from(width) - 1);
                    self.b.ins().bxor(v, sign)
                } else {
                    v
                };
                let lz = self.b.ins().clz(y);
                let lz = if vt == I64 {
                    self.b.ins().ireduce(I32, lz)
                } else {
                    lz
                };
                let r = if op == UnOp::Bfind {
                    // width - 1 - lz
                    let top = self.iconst(I32, i64::from(width) - 1);
                    self.b.ins().isub(top, lz)
                } else {
                    // bits - 1 - position = lz - (width - bits)
                    self.b
                        .ins()
                        .iadd_imm_s(lz, -(i64::from(width) - i64::from(bits.min(width))))
                };
                let none = self.b.ins().icmp_imm_s(IntCC::Equal, y, 0);
                let all_ones = self.iconst(I32, -1);
                self.b.ins().select(none, all_ones, r)
            }
            UnOp::Popc => {
                let v = self.zero_narrow(v, ty);
                let r = self.b.ins().popcnt(v);
                if vt == I64 {
                    self.b.ins().ireduce(I32, r)
                } else {
                    r
                }
            }
            UnOp::Clz => {
                let v = self.zero_narrow(v, ty);
                let r = self.b.ins().clz(v);
                let r = if vt == I64 {
                    self.b.ins().ireduce(I32, r)
                } else {
                    r
                };
                // Leading zeros within `bits`, not within the 32-bit register.
                self.b
                    .ins()
                    .iadd_imm_s(r, -(i64::from(width) - i64::from(bits.min(width))))
            }
            UnOp::Brev => {
                let r = self.b.ins().bitrev(v);
                let r = if bits < width {
                    self.b.ins().ushr_imm_s(r, i64::from(width - bits))
                } else {
                    r
                };
                self.narrow(r, ty)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn translate_binary(
        &mut self,
        exec: Value,
        op: BinOp,
        ty: Ty,
        dst: Reg,
        a: Src,
        b: Src,
        ftz: bool,
    ) -> Result<(), JitError> {
        debug_assert!(
            op != BinOp::MulWide || (ty.is_int() && ty.bits() <= 32),
            "validation admits MulWide on integers up to 32 bits"
        );
        let dst_words = op.result_words(ty);
        if ty.is_float() {
            debug_assert!(
                matches!(ty, Ty::F32 | Ty::F64),
                "validation admits float arithmetic in F32 and F64 only"
            );
            #[derive(Clone, Copy)]
            enum FloatBin {
                Add,
                Sub,
                Mul,
                Div,
                Min,
                Max,
            }
            let fop = match op {
                BinOp::Add => FloatBin::Add,
                BinOp::Sub => FloatBin::Sub,
                BinOp::Mul => FloatBin::Mul,
                // IEEE division rounded to nearest even (PTX `div.rn`): `fdiv`.
                BinOp::Div => FloatBin::Div,
                BinOp::Min => FloatBin::Min,
                BinOp::Max => FloatBin::Max,
                BinOp::MulHi
                | BinOp::MulWide
                | BinOp::Rem
                | BinOp::And
                | BinOp::Or
                | BinOp::Xor
                | BinOp::Shl
                | BinOp::Shr => {
                    return Err(self.internal(format!("{} on float type {}", op.name(), ty.name())))
                }
            };
            self.lane_loop(exec, &[], |t, lane, _| {
                let mut va = t.read_src(lane, &a, ty)?;
                let mut vb = t.read_src(lane, &b, ty)?;
                if ftz {
                    va = t.flush_subnormal(va, ty);
                    vb = t.flush_subnormal(vb, ty);
                }
                let fa = t.as_float(va, ty);
                let fb = t.as_float(vb, ty);
                let r = match fop {
                    FloatBin::Add => t.b.ins().fadd(fa, fb),
                    FloatBin::Sub => t.b.ins().fsub(fa, fb),
                    FloatBin::Mul => t.b.ins().fmul(fa, fb),
                    FloatBin::Div => t.b.ins().fdiv(fa, fb),
                    FloatBin::Max => t.float_min_max(true, fa, fb),
                    FloatBin::Min => t.float_min_max(false, fa, fb),
                };
                let mut r = t.float_result_bits(r);
                if ftz {
                    r = t.flush_subnormal(r, ty);
                }
                t.write_reg(lane, dst, dst_words, r);
                Ok(vec![])
            })?;
            return Ok(());
        }
        let signed = ty.is_signed_int();
        let bits = ty.bits();
        self.lane_loop(exec, &[], |t, lane, _| {
            let va = t.read_src(lane, &a, ty)?;
            let va = t.narrow(va, ty);
            let shift = matches!(op, BinOp::Shl | BinOp::Shr);
            let vt = t.b.func.dfg.value_type(va);
            // A shift amount is one whole unsigned 32-bit word, also for 64-bit types (the IR
            // contract; PTX: "b is always .u32"), widened to the shifted value's type.
            let vb = if shift {
                let amount = t.read_src(lane, &b, Ty::U32)?;
                if vt == I64 {
                    t.b.ins().uextend(I64, amount)
                } else {
                    amount
                }
            } else {
                let v = t.read_src(lane, &b, ty)?;
                t.narrow(v, ty)
            };
            let r = match op {
                BinOp::Add => t.b.ins().iadd(va, vb),
                BinOp::Sub => t.b.ins().isub(va, vb),
                BinOp::Mul => t.b.ins().imul(va, vb),
                BinOp::MulHi => {
                    if bits >= 32 {
                        if signed {
                            t.b.ins().smulhi(va, vb)
                        } else {
                            t.b.ins().umulhi(va, vb)
                        }
                    } else {
                        // Narrow inputs are extended in 32 bits; their product fits.
                        let p = t.b.ins().imul(va, vb);
                        if signed {
                            t.b.ins().sshr_imm_s(p, i64::from(bits))
                        } else {
                            t.b.ins().ushr_imm_s(p, i64::from(bits))
                        }
                    }
                }
                BinOp::MulWide => {
                    if bits >= 32 {
                        let (xa, xb) = if signed {
                            (t.b.ins().sextend(I64, va), t.b.ins().sextend(I64, vb))
                        } else {
                            (t.b.ins().uextend(I64, va), t.b.ins().uextend(I64, vb))
                        };
                        t.b.ins().imul(xa, xb)
                    } else {
                        let p = t.b.ins().imul(va, vb);
                        let wide = if signed {
                            if bits == 8 {
                                Ty::S16
                            } else {
                                Ty::S32
                            }
                        } else if bits == 8 {
                            Ty::U16
                        } else {
                            Ty::U32
                        };
                        t.narrow(p, wide)
                    }
                }
                BinOp::Div | BinOp::Rem => t.int_div_rem(op == BinOp::Div, signed, va, vb, vt),
                BinOp::Min => {
                    if signed {
                        t.b.ins().smin(va, vb)
                    } else {
                        t.b.ins().umin(va, vb)
                    }
                }
                BinOp::Max => {
                    if signed {
                        t.b.ins().smax(va, vb)
                    } else {
                        t.b.ins().umax(va, vb)
                    }
                }
                BinOp::And => t.b.ins().band(va, vb),
                BinOp::Or => t.b.ins().bor(va, vb),
                BinOp::Xor => t.b.ins().bxor(va, vb),
                BinOp::Shl | BinOp::Shr => {
                    // Amounts of `bits` or more shift everything out (or fill with the sign).
                    let amount = vb;
                    let big = t.b.ins().icmp_imm_s(
                        IntCC::UnsignedGreaterThanOrEqual,
                        amount,
                        i64::from(bits),
                    );
                    if op == BinOp::Shl {
                        let s = t.b.ins().ishl(va, amount);
                        let zero = t.iconst(vt, 0);
                        t.b.ins().select(big, zero, s)
                    } else if signed {
                        let max = t.iconst(vt, i64::from(bits) - 1);
                        let amt = t.b.ins().select(big, max, amount);
                        t.b.ins().sshr(va, amt)
                    } else {
                        let s = t.b.ins().ushr(va, amount);
                        let zero = t.iconst(vt, 0);
                        t.b.ins().select(big, zero, s)
                    }
                }
            };
            let r = if op == BinOp::MulWide {
                r
            } else {
                t.narrow(r, ty)
            };
            t.write_reg(lane, dst, dst_words, r);
            Ok(vec![])
        })?;
        Ok(())
    }

    /// Integer division and remainder without host traps: `x / 0` is all ones (unsigned) or -1
    /// (signed), `x % 0 = x`, `MIN / -1 = MIN`, `MIN % -1 = 0`.
    fn int_div_rem(&mut self, div: bool, signed: bool, a: Value, b: Value, vt: Type) -> Value {
        let zero = self.iconst(vt, 0);
        let one = self.iconst(vt, 1);
        let b_zero = self.b.ins().icmp_imm_s(IntCC::Equal, b, 0);
        if signed {
            // Make the divisor safe: 0 -> 1, and -1 -> 1 (negate the result instead), so that
            // `sdiv`/`srem` can neither divide by zero nor overflow.
            let minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, b, -1);
            let unsafe_b = self.b.ins().bor(b_zero, minus_one);
            let safe_b = self.b.ins().select(unsafe_b, one, b);
            if div {
                let q = self.b.ins().sdiv(a, safe_b);
                let neg_a = self.b.ins().ineg(a);
                let q = self.b.ins().select(minus_one, neg_a, q);
                let all_ones = self.iconst(vt, -1);
                self.b.ins().select(b_zero, all_ones, q)
            } else {
                let r = self.b.ins().srem(a, safe_b);
                let r = self.b.ins().select(minus_one, zero, r);
                self.b.ins().select(b_zero, a, r)
            }
        } else {
            let safe_b = self.b.ins().select(b_zero, one, b);
            if div {
                let q = self.b.ins().udiv(a, safe_b);
                let all_ones = self.iconst(vt, -1);
                self.b.ins().select(b_zero, all_ones, q)
            } else {
                let r = self.b.ins().urem(a, safe_b);
                self.b.ins().select(b_zero, a, r)
            }
        }
    }

    /// Evaluates a predicate source for one lane as an i64 0/1 (carry inputs).
    fn carry_bit(&mut self, mask: Value, lane: &Lane) -> Value {
        let bit = self.lane_bit_of(mask, lane);
        self.b.ins().uextend(I64, bit)
    }

    pub(super) fn translate_iadd3(
        &mut self,
        exec: Value,
        dst: Reg,
        carry_out: [Pred; 2],
        srcs: [Src; 3],
        carry_in: [PredSrc; 2],
    ) -> Result<(), JitError> {
        let cin0 = self.pred_mask(carry_in[0])?;
        let cin1 = self.pred_mask(carry_in[1])?;
        let zero = self.iconst(I32, 0);
        // Carry accumulators only when a carry is written: without them the instruction is
        // plain per-lane work and can be fused (see `fusion_regions`).
        let carried = if carry_out.iter().all(|p| p.is_pt()) {
            vec![]
        } else {
            vec![zero, zero]
        };
        let outs = self.lane_loop(exec, &carried, |t, lane, acc| {
            let mut sum = t.iconst(I64, 0);
            for s in &srcs {
                let v = t.carry_term(lane, s)?;
                sum = t.b.ins().iadd(sum, v);
            }
            for m in [cin0, cin1] {
                let c = t.carry_bit(m, lane);
                sum = t.b.ins().iadd(sum, c);
            }
            let r = t.b.ins().ireduce(I32, sum);
            t.write_reg32(lane, dst, r);
            // Carry bits 32 and 33 of the 34-bit sum.
            let mut out = Vec::with_capacity(2);
            for (i, &a) in acc.iter().enumerate() {
                let c = t.b.ins().ushr_imm_s(sum, 32 + i as i64);
                let c = t.b.ins().ireduce(I32, c);
                let c = t.b.ins().band_imm_s(c, 1);
                let c = t.b.ins().ishl(c, lane.index);
                out.push(t.b.ins().bor(a, c));
            }
            Ok(out)
        })?;
        if !outs.is_empty() {
            self.write_pred(carry_out[0], exec, outs[0])?;
            self.write_pred(carry_out[1], exec, outs[1])?;
        }
        Ok(())
    }

    pub(super) fn translate_imad(
        &mut self,
        exec: Value,
        mode: ImadMode,
        signed: bool,
        dst: Reg,
        srcs: [Src; 3],
    ) -> Result<(), JitError> {
        let words = mode.dst_words();
        let [a, b, c] = srcs;
        self.lane_loop(exec, &[], |t, lane, _| {
            let va = t.read_src(lane, &a, Ty::U32)?;
            let vb = t.read_src(lane, &b, Ty::U32)?;
            let r = match mode {
                ImadMode::Lo => {
                    let vc = t.read_src(lane, &c, Ty::U32)?;
                    let p = t.b.ins().imul(va, vb);
                    t.b.ins().iadd(p, vc)
                }
                ImadMode::Hi => {
                    // hi32(a * b + c) with the 64-bit pair `c`.
                    let vc = t.read_src(lane, &c, Ty::U64)?;
                    let (xa, xb) = if signed {
                        (t.b.ins().sextend(I64, va), t.b.ins().sextend(I64, vb))
                    } else {
                        (t.b.ins().uextend(I64, va), t.b.ins().uextend(I64, vb))
                    };
                    let p = t.b.ins().imul(xa, xb);
                    let sum = t.b.ins().iadd(p, vc);
                    let high = t.b.ins().ushr_imm_s(sum, 32);
                    t.b.ins().ireduce(I32, high)
                }
                ImadMode::Wide => {
                    // `c` is a 64-bit pair; its modifier applies to the 64-bit value.
                    let vc = t.read_src(lane, &c, Ty::U64)?;
                    let (xa, xb) = if signed {
                        (t.b.ins().sextend(I64, va), t.b.ins().sextend(I64, vb))
                    } else {
                        (t.b.ins().uextend(I64, va), t.b.ins().uextend(I64, vb))
                    };
                    let p = t.b.ins().imul(xa, xb);
                    t.b.ins().iadd(p, vc)
                }
            };
            t.write_reg(lane, dst, words, r);
            Ok(vec![])
        })?;
        Ok(())
    }

    /// A 32-bit `IADD3`/`LEA` addend as it enters the wide sum that produces the carries (an
    /// i64): a negated operand `-x` counts as `~x + 1` without wrapping (`2^32` for `x = 0`), as
    /// the hardware forms a subtraction (IR docs of `Op::IAdd3`); `~x` as the complement;
    /// `Abs`/`NegAbs` (not SASS forms) as the wrapping absolute value and its negation in the
    /// same way.
    fn carry_term(&mut self, lane: &Lane, src: &Src) -> Result<Value, JitError> {
        let x = self.read_operand(lane, src.operand, 1)?;
        let negate = |t: &mut Self, v: Value| {
            let n = t.b.ins().bnot(v);
            let n = t.b.ins().uextend(I64, n);
            t.b.ins().iadd_imm_s(n, 1)
        };
        Ok(match src.modifier {
            crate::ir::SrcMod::None => self.b.ins().uextend(I64, x),
            crate::ir::SrcMod::Neg => negate(self, x),
            crate::ir::SrcMod::Not => {
                let n = self.b.ins().bnot(x);
                self.b.ins().uextend(I64, n)
            }
            crate::ir::SrcMod::Abs => {
                let a = self.b.ins().iabs(x);
                self.b.ins().uextend(I64, a)
            }
            crate::ir::SrcMod::NegAbs => {
                let a = self.b.ins().iabs(x);
                negate(self, a)
            }
        })
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn translate_lea(
        &mut self,
        exec: Value,
        hi: bool,
        sx32: bool,
        dst: Reg,
        carry_out: Pred,
        srcs: [Src; 3],
        shift: u8,
        carry_in: PredSrc,
    ) -> Result<(), JitError> {
        debug_assert!(shift <= 31, "validation bounds the LEA shift to 0..=31");
        let cin = self.pred_mask(carry_in)?;
        let [a, b, c] = srcs;
        let zero = self.iconst(I32, 0);
        let carried = if carry_out.is_pt() {
            vec![]
        } else {
            vec![zero]
        };
        let outs = self.lane_loop(exec, &carried, |t, lane, acc| {
            let va = t.read_src(lane, &a, Ty::U32)?;
            let b_term = t.carry_term(lane, &b)?;
            // `.SX32`: the high word is the sign extension of `a`.
            let vc = if sx32 {
                t.b.ins().sshr_imm_s(va, 31)
            } else {
                t.read_src(lane, &c, Ty::U32)?
            };
            // (c:a) << shift: the low word for LEA, the high word for LEA.HI.
            let wide = t.concat(va, vc);
            let wide = t.b.ins().ishl_imm_s(wide, i64::from(shift));
            let wide = if hi {
                t.b.ins().ushr_imm_s(wide, 32)
            } else {
                wide
            };
            let shifted = t.b.ins().band_imm_s(wide, 0xffff_ffff);
            let ci = t.carry_bit(cin, lane);
            let sum = t.b.ins().iadd(shifted, b_term);
            let sum = t.b.ins().iadd(sum, ci);
            let r = t.b.ins().ireduce(I32, sum);
            t.write_reg32(lane, dst, r);
            if acc.is_empty() {
                return Ok(vec![]);
            }
            let carry = t.b.ins().ushr_imm_s(sum, 32);
            let carry = t.b.ins().ireduce(I32, carry);
            let carry = t.b.ins().band_imm_s(carry, 1);
            let carry = t.b.ins().ishl(carry, lane.index);
            Ok(vec![t.b.ins().bor(acc[0], carry)])
        })?;
        if let Some(&bits) = outs.first() {
            self.write_pred(carry_out, exec, bits)?;
        }
        Ok(())
    }

    pub(super) fn translate_shf(&mut self, exec: Value, s: ShfInst) -> Result<(), JitError> {
        debug_assert!(
            matches!(s.ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64),
            "validation admits SHF on U32, S32, U64 and S64"
        );
        let wide = s.ty.bits() == 64;
        self.lane_loop(exec, &[], |t, lane, _| {
            let lo = t.read_src(lane, &s.lo, Ty::U32)?;
            let amount = t.read_src(lane, &s.shift, Ty::U32)?;
            let hi = t.read_src(lane, &s.hi, Ty::U32)?;
            let v = t.concat(lo, hi);
            // Clamped to the width unless `.W` masks it (IR docs of `ShfInst`). A 64-bit shift
            // by 64 is computed as by 63 for the sign fill, and selected to 0 otherwise
            // (Cranelift's 64-bit shifts take the amount mod 64).
            let (amount, by_64) = if wide && s.wrap {
                (t.b.ins().band_imm_s(amount, 63), None)
            } else if wide {
                let is_64 =
                    t.b.ins()
                        .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, amount, 64);
                let limit = t.iconst(I32, 63);
                (t.b.ins().umin(amount, limit), Some(is_64))
            } else if s.wrap {
                (t.b.ins().band_imm_s(amount, 31), None)
            } else {
                let limit = t.iconst(I32, 32);
                (t.b.ins().umin(amount, limit), None)
            };
            let amount = t.b.ins().uextend(I64, amount);
            let r = if s.left {
                t.b.ins().ishl(v, amount)
            } else if s.ty.is_signed_int() {
                t.b.ins().sshr(v, amount)
            } else {
                t.b.ins().ushr(v, amount)
            };
            let r = match by_64 {
                Some(is_64) if s.left || !s.ty.is_signed_int() => {
                    let zero = t.iconst(I64, 0);
                    t.b.ins().select(is_64, zero, r)
                }
                Some(_) | None => r,
            };
            // `.HI` selects bits 63..32 of the shifted value, otherwise bits 31..0.
            let r = if s.high {
                t.b.ins().ushr_imm_s(r, 32)
            } else {
                r
            };
            let r = t.b.ins().ireduce(I32, r);
            t.write_reg32(lane, s.dst, r);
            Ok(vec![])
        })?;
        Ok(())
    }

    /// For `SR_TID.X`: the warp's first linear thread index `warp_id * warp_size`, `ntid.x`,
    /// and whether the whole warp lies in the block's first row (`first + warp_size - 1 <
    /// ntid.x`, the common 1-D block), where a lane's `TID.X` is its linear index itself.
    pub(super) fn warp_tid_x_row(&mut self) -> (Value, Value, Value) {
        let cst = self.flags.state_const;
        let ctx = self.ctx;
        let warp_id = self.b.ins().load(I32, cst, ctx, off::WARP_ID);
        let warp_size = self.b.ins().load(I32, cst, ctx, off::WARP_SIZE);
        let ntx = self.b.ins().load(I32, cst, ctx, off::NTID);
        let first = self.b.ins().imul(warp_id, warp_size);
        let end = self.b.ins().iadd(first, warp_size);
        let last = self.b.ins().iadd_imm_s(end, -1);
        let in_row = self.b.ins().icmp(IntCC::UnsignedLessThan, last, ntx);
        (first, ntx, in_row)
    }

    /// `LOP3.LUT` as a 3-level multiplexer on the truth table: bit `i` of `lut` is the result
    /// for `(a<<2)|(b<<1)|c == i`.
    pub(super) fn lop3_value(&mut self, lut: u8, a: Value, b: Value, c: Value) -> Value {
        // Works on i32 values and on `i32x4` lanes (`simd/`) alike.
        let table = |t: &mut Self, two: u8| -> Value {
            // f(c) for the two entries (c=0 -> bit 0, c=1 -> bit 1).
            match two & 3 {
                0 => t.const_like(c, 0),
                1 => t.b.ins().bnot(c),
                2 => c,
                _ => t.const_like(c, -1),
            }
        };
        let by_b = |t: &mut Self, four: u8| -> Value {
            let f0 = table(t, four);
            let f1 = table(t, four >> 2);
            if four & 3 == (four >> 2) & 3 {
                f0
            } else {
                t.select_bits(b, f1, f0)
            }
        };
        let g0 = by_b(self, lut & 0xf);
        let g1 = by_b(self, lut >> 4);
        if lut & 0xf == lut >> 4 {
            g0
        } else {
            self.select_bits(a, g1, g0)
        }
    }

    /// `(m & x) | (!m & y)`, with the forms where `x` or `y` is all zeros or all ones reduced
    /// to one instruction (Cranelift lowers `bitselect` to three and does not fold them).
    fn select_bits(&mut self, m: Value, x: Value, y: Value) -> Value {
        match (self.const_of(x), self.const_of(y)) {
            (_, Some(0)) => self.b.ins().band(m, x),
            (Some(0), _) => self.b.ins().band_not(y, m),
            (Some(c), _) if c as u32 == u32::MAX => self.b.ins().bor(m, y),
            (_, Some(c)) if c as u32 == u32::MAX => self.b.ins().bor_not(x, m),
            _ => self.b.ins().bitselect(m, x, y),
        }
    }

    /// The value of `v` if it is an `iconst`, or the lane value of a `splat` of one.
    fn const_of(&self, v: Value) -> Option<i64> {
        use cranelift_codegen::ir::{InstructionData, Opcode};
        let inst = self.b.func.dfg.value_def(v).inst()?;
        let data = self.b.func.dfg.insts[inst];
        if let InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            imm,
        } = data
        {
            return Some(imm.bits());
        }
        if let InstructionData::Unary {
            opcode: Opcode::Splat,
            arg,
        } = data
        {
            return self.const_of(arg);
        }
        None
    }

    /// The constant `v` (an i32 bit pattern) of the type of `like`: an i32, or an `i32x4`
    /// with `v` in every lane.
    fn const_like(&mut self, like: Value, v: i64) -> Value {
        let c = self.iconst(I32, v);
        let ty = self.b.func.dfg.value_type(like);
        if ty.is_vector() {
            self.b.ins().splat(ty, c)
        } else {
            c
        }
    }

    pub(super) fn translate_lop3(
        &mut self,
        exec: Value,
        dst: Reg,
        pred_out: Pred,
        srcs: [Src; 3],
        lut: u8,
    ) -> Result<(), JitError> {
        let [a, b, c] = srcs;
        let zero = self.iconst(I32, 0);
        let carried = if pred_out.is_pt() { vec![] } else { vec![zero] };
        let outs = self.lane_loop(exec, &carried, |t, lane, acc| {
            let va = t.read_src(lane, &a, Ty::U32)?;
            let vb = t.read_src(lane, &b, Ty::U32)?;
            let vc = t.read_src(lane, &c, Ty::U32)?;
            let r = t.lop3_value(lut, va, vb, vc);
            t.write_reg32(lane, dst, r);
            if acc.is_empty() {
                return Ok(vec![]);
            }
            let nz = t.is_nonzero(r);
            let bit = t.bool_to_lane_bit(nz, lane);
            Ok(vec![t.b.ins().bor(acc[0], bit)])
        })?;
        if let Some(&bits) = outs.first() {
            self.write_pred(pred_out, exec, bits)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn translate_convert(
        &mut self,
        exec: Value,
        dst_ty: Ty,
        src_ty: Ty,
        round: Round,
        ftz: bool,
        dst: Reg,
        a: Src,
    ) -> Result<(), JitError> {
        let words = dst_ty.regs();
        match convert_path(dst_ty, src_ty, round) {
            ConvertPath::Slow => {
                self.call_slow(
                    SlowOp::Convert(SlowConvert {
                        dst_ty,
                        src_ty,
                        round,
                        ftz,
                        dst,
                        a,
                    }),
                    exec,
                );
                return Ok(());
            }
            path @ (ConvertPath::IntToInt
            | ConvertPath::IntToFloat
            | ConvertPath::FloatToInt
            | ConvertPath::Promote
            | ConvertPath::Demote) => {
                self.lane_loop(exec, &[], |t, lane, _| {
                    let v = t.read_src(lane, &a, src_ty)?;
                    let r = t.convert_value(&path, dst_ty, src_ty, round, ftz, v);
                    t.write_reg(lane, dst, words, r);
                    Ok(vec![])
                })?;
            }
        }
        Ok(())
    }

    fn convert_value(
        &mut self,
        path: &ConvertPath,
        dst_ty: Ty,
        src_ty: Ty,
        round: Round,
        ftz: bool,
        v: Value,
    ) -> Value {
        match path {
            ConvertPath::IntToInt => {
                let v = self.narrow(v, src_ty);
                let vt = self.b.func.dfg.value_type(v);
                if dst_ty.regs() == 2 {
                    if vt == I64 {
                        v
                    } else if src_ty.is_signed_int() {
                        self.b.ins().sextend(I64, v)
                    } else {
                        self.b.ins().uextend(I64, v)
                    }
                } else {
                    let v = if vt == I64 {
                        self.b.ins().ireduce(I32, v)
                    } else {
                        v
                    };
                    self.narrow(v, dst_ty)
                }
            }
            ConvertPath::IntToFloat => {
                let v = self.narrow(v, src_ty);
                let ft = float_type(dst_ty);
                let f = if src_ty.is_signed_int() {
                    self.b.ins().fcvt_from_sint(ft, v)
                } else {
                    self.b.ins().fcvt_from_uint(ft, v)
                };
                self.float_bits(f)
            }
            ConvertPath::FloatToInt => {
                let v = if ftz {
                    self.flush_subnormal(v, src_ty)
                } else {
                    v
                };
                let f = self.as_float(v, src_ty);
                let f = match round {
                    Round::Nearest => self.b.ins().nearest(f),
                    Round::Zero => self.b.ins().trunc(f),
                    Round::Down => self.b.ins().floor(f),
                    Round::Up => self.b.ins().ceil(f),
                };
                let signed = dst_ty.is_signed_int();
                let bits = dst_ty.bits();
                let it = if bits == 64 { I64 } else { I32 };
                // Saturating conversions: NaN gives 0, out-of-range values the nearest bound.
                let r = if signed {
                    self.b.ins().fcvt_to_sint_sat(it, f)
                } else {
                    self.b.ins().fcvt_to_uint_sat(it, f)
                };
                if bits >= 32 {
                    r
                } else if signed {
                    let max = self.iconst(I32, (1i64 << (bits - 1)) - 1);
                    let min = self.iconst(I32, -(1i64 << (bits - 1)));
                    let r = self.b.ins().smin(r, max);
                    self.b.ins().smax(r, min)
                } else {
                    let max = self.iconst(I32, (1i64 << bits) - 1);
                    self.b.ins().umin(r, max)
                }
            }
            ConvertPath::Promote => {
                let v = if ftz {
                    self.flush_subnormal(v, Ty::F32)
                } else {
                    v
                };
                let f = self.as_float(v, Ty::F32);
                let d = self.b.ins().fpromote(F64, f);
                self.float_result_bits(d)
            }
            ConvertPath::Demote => {
                let v = if ftz {
                    self.flush_subnormal(v, Ty::F64)
                } else {
                    v
                };
                let f = self.as_float(v, Ty::F64);
                let d = self.b.ins().fdemote(F32, f);
                let r = self.float_result_bits(d);
                if ftz {
                    self.flush_subnormal(r, Ty::F32)
                } else {
                    r
                }
            }
            ConvertPath::Slow => v,
        }
    }
}

/// Whether an `Fma` goes through the per-warp slow-path call (not fusable): Cranelift's `fma`
/// is the correctly rounded fused multiply-add in round-to-nearest on `f32`/`f64` only.
pub(super) fn is_slow_fma(ty: Ty, round: Round, halves: [HalfSel; 3]) -> bool {
    !(matches!(ty, Ty::F32 | Ty::F64) && round == Round::Nearest && halves == HalfSel::AS_READ)
}

impl<'a, 'f> Translator<'a, 'f> {
    /// `PRMT` (general selector form, [`crate::sem::alu::prmt`]): result byte `i` is byte
    /// `sel[4i+2:4i]` of `b:a`, or its top bit replicated when `sel[4i+3]` is set. A constant
    /// selector picks the bytes at compile time.
    pub(super) fn translate_prmt(
        &mut self,
        exec: Value,
        dst: Reg,
        [a, b, sel]: [Src; 3],
    ) -> Result<(), JitError> {
        self.lane_loop(exec, &[], |t, lane, _| {
            let va = t.read_src(lane, &a, Ty::U32)?;
            let vb = t.read_src(lane, &b, Ty::U32)?;
            let vs = t.read_src(lane, &sel, Ty::U32)?;
            let source = t.concat(va, vb);
            let constant = t.const_of(vs);
            let mut acc = t.iconst(I32, 0);
            for i in 0..4i64 {
                let byte = match constant {
                    Some(c) => {
                        let nibble = (c >> (4 * i)) & 0xf;
                        let shifted = t.b.ins().ushr_imm_s(source, 8 * (nibble & 7));
                        let byte = t.b.ins().ireduce(I32, shifted);
                        if nibble & 8 != 0 {
                            // The byte's bit 7 at bit 31, then spread over the word.
                            let top = t.b.ins().ishl_imm_s(byte, 24);
                            let fill = t.b.ins().sshr_imm_s(top, 31);
                            t.b.ins().band_imm_s(fill, 0xff)
                        } else {
                            t.b.ins().band_imm_s(byte, 0xff)
                        }
                    }
                    None => {
                        let nibble = t.b.ins().ushr_imm_s(vs, 4 * i);
                        let index = t.b.ins().band_imm_s(nibble, 7);
                        let amount = t.b.ins().ishl_imm_s(index, 3);
                        let amount = t.b.ins().uextend(I64, amount);
                        let shifted = t.b.ins().ushr(source, amount);
                        let byte = t.b.ins().ireduce(I32, shifted);
                        let plain = t.b.ins().band_imm_s(byte, 0xff);
                        let top = t.b.ins().ishl_imm_s(byte, 24);
                        let fill = t.b.ins().sshr_imm_s(top, 31);
                        let fill = t.b.ins().band_imm_s(fill, 0xff);
                        let replicate = t.b.ins().band_imm_s(nibble, 8);
                        t.b.ins().select(replicate, fill, plain)
                    }
                };
                let placed = if i == 0 {
                    byte
                } else {
                    t.b.ins().ishl_imm_s(byte, 8 * i)
                };
                acc = t.b.ins().bor(acc, placed);
            }
            t.write_reg32(lane, dst, acc);
            Ok(vec![])
        })?;
        Ok(())
    }

    /// An i32 shift amount (`< bits`) as the shifted value's type.
    fn amount_for(&mut self, amount: Value, wide: bool) -> Value {
        if wide {
            self.b.ins().uextend(I64, amount)
        } else {
            amount
        }
    }

    /// `(1 << n) - 1` in the value type (`n` an i32), all ones when `n >= bits`.
    fn low_ones(&mut self, n: Value, bits: u32) -> Value {
        let wide = bits == 64;
        let it = if wide { I64 } else { I32 };
        let one = self.iconst(it, 1);
        let amount = self.amount_for(n, wide);
        let p = self.b.ins().ishl(one, amount);
        let m = self.b.ins().iadd_imm_s(p, -1);
        let all = self.iconst(it, -1);
        let big = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, n, i64::from(bits));
        self.b.ins().select(big, all, m)
    }

    /// `BFE` ([`crate::sem::alu::bfe`]): with `p = pos & 0xff`, `n = len & 0xff` and `w` the
    /// type's width: unsigned, `(a >> p) & ((1 << n) - 1)` (0 when `p >= w`, all bits when
    /// `n >= w`); signed, `a >>s min(p, w - 1)` sign-extended from bit `min(n, w) - 1` (the
    /// bits past the top read as the sign), 0 when `n == 0`.
    pub(super) fn translate_bfe(
        &mut self,
        exec: Value,
        ty: Ty,
        dst: Reg,
        a: Src,
        [pos, len]: [Src; 2],
    ) -> Result<(), JitError> {
        let bits = ty.bits();
        let wide = bits == 64;
        let it = if wide { I64 } else { I32 };
        self.lane_loop(exec, &[], |t, lane, _| {
            let va = t.read_src(lane, &a, ty)?;
            let p = t.read_src(lane, &pos, Ty::U32)?;
            let p = t.b.ins().band_imm_s(p, 0xff);
            let n = t.read_src(lane, &len, Ty::U32)?;
            let n = t.b.ins().band_imm_s(n, 0xff);
            let zero = t.iconst(it, 0);
            let r = if ty.is_signed_int() {
                let top = t.iconst(I32, i64::from(bits) - 1);
                let p = t.b.ins().umin(p, top);
                let p = t.amount_for(p, wide);
                let shifted = t.b.ins().sshr(va, p);
                let width = t.iconst(I32, i64::from(bits));
                let n1 = t.b.ins().umin(n, width);
                // k = w - min(n, w) is below w when n > 0.
                let k = t.b.ins().isub(width, n1);
                let k = t.amount_for(k, wide);
                let up = t.b.ins().ishl(shifted, k);
                let r = t.b.ins().sshr(up, k);
                let empty = t.b.ins().icmp_imm_s(IntCC::Equal, n, 0);
                t.b.ins().select(empty, zero, r)
            } else {
                let amount = t.amount_for(p, wide);
                let shifted = t.b.ins().ushr(va, amount);
                let inside =
                    t.b.ins()
                        .icmp_imm_s(IntCC::UnsignedLessThan, p, i64::from(bits));
                let shifted = t.b.ins().select(inside, shifted, zero);
                let m = t.low_ones(n, bits);
                t.b.ins().band(shifted, m)
            };
            t.write_reg(lane, dst, ty.regs(), r);
            Ok(vec![])
        })?;
        Ok(())
    }

    /// `BFI` ([`crate::sem::alu::bfi`]): `base` with bits `p .. min(p + n, w)` replaced by the
    /// low bits of `insert`; `base` when `n == 0` or `p >= w`.
    pub(super) fn translate_bfi(
        &mut self,
        exec: Value,
        ty: Ty,
        dst: Reg,
        [insert, base]: [Src; 2],
        [pos, len]: [Src; 2],
    ) -> Result<(), JitError> {
        let bits = ty.bits();
        let wide = bits == 64;
        self.lane_loop(exec, &[], |t, lane, _| {
            let vi = t.read_src(lane, &insert, ty)?;
            let vb = t.read_src(lane, &base, ty)?;
            let p = t.read_src(lane, &pos, Ty::U32)?;
            let p = t.b.ins().band_imm_s(p, 0xff);
            let n = t.read_src(lane, &len, Ty::U32)?;
            let n = t.b.ins().band_imm_s(n, 0xff);
            // With p < w: the field is min(n, w - p) bits from p.
            let width = t.iconst(I32, i64::from(bits));
            let room = t.b.ins().isub(width, p);
            let n1 = t.b.ins().umin(n, room);
            let ones = t.low_ones(n1, bits);
            let amount = t.amount_for(p, wide);
            let field = t.b.ins().ishl(ones, amount);
            let moved = t.b.ins().ishl(vi, amount);
            let moved = t.b.ins().band(moved, field);
            let kept = t.b.ins().band_not(vb, field);
            let r = t.b.ins().bor(kept, moved);
            let empty = t.b.ins().icmp_imm_s(IntCC::Equal, n, 0);
            let past =
                t.b.ins()
                    .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, p, i64::from(bits));
            let unchanged = t.b.ins().bor(empty, past);
            let r = t.b.ins().select(unchanged, vb, r);
            t.write_reg(lane, dst, ty.regs(), r);
            Ok(vec![])
        })?;
        Ok(())
    }

    /// `FMA`: Cranelift's `fma` (one rounding, to nearest even) on `f32`/`f64` in
    /// round-to-nearest, with NaNs canonicalised and `ftz` flushing inputs and result as for
    /// `Binary`; every other type and rounding, and half selectors, through the slow path
    /// ([`crate::sem::float::fma_selected`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn translate_fma(
        &mut self,
        exec: Value,
        ty: Ty,
        dst: Reg,
        [a, b, c]: [Src; 3],
        round: Round,
        ftz: bool,
        halves: [HalfSel; 3],
    ) -> Result<(), JitError> {
        if is_slow_fma(ty, round, halves) {
            self.call_slow(
                SlowOp::Fma(crate::jit::slow::SlowFma {
                    ty,
                    round,
                    ftz,
                    halves,
                    dst,
                    a,
                    b,
                    c,
                }),
                exec,
            );
            return Ok(());
        }
        self.lane_loop(exec, &[], |t, lane, _| {
            let mut v = [t.read_src(lane, &a, ty)?, t.read_src(lane, &b, ty)?, {
                t.read_src(lane, &c, ty)?
            }];
            if ftz {
                v = v.map(|x| t.flush_subnormal(x, ty));
            }
            let [fa, fb, fc] = v.map(|x| t.as_float(x, ty));
            let r = t.b.ins().fma(fa, fb, fc);
            let mut r = t.float_result_bits(r);
            if ftz {
                r = t.flush_subnormal(r, ty);
            }
            t.write_reg(lane, dst, ty.regs(), r);
            Ok(vec![])
        })?;
        Ok(())
    }

    /// `VIMNMX.{U16x2,S16x2}` ([`crate::sem::alu::packed_min_max`]): each 16-bit half of the
    /// two words extended to 32 bits by the signedness of `ty`, compared, and the two results
    /// packed again.
    pub(super) fn translate_packed_min_max(
        &mut self,
        exec: Value,
        op: BinOp,
        ty: Ty,
        dst: Reg,
        [a, b]: [Src; 2],
    ) -> Result<(), JitError> {
        let max = match op {
            BinOp::Min => false,
            BinOp::Max => true,
            BinOp::Add
            | BinOp::Sub
            | BinOp::Mul
            | BinOp::MulHi
            | BinOp::MulWide
            | BinOp::Div
            | BinOp::Rem
            | BinOp::And
            | BinOp::Or
            | BinOp::Xor
            | BinOp::Shl
            | BinOp::Shr => {
                return Err(self.internal(format!("packed {} (validation admits min and max)", op)))
            }
        };
        let signed = ty.is_signed_int();
        self.lane_loop(exec, &[], |t, lane, _| {
            let va = t.read_src(lane, &a, Ty::U32)?;
            let vb = t.read_src(lane, &b, Ty::U32)?;
            // Each half as a 32-bit integer of its signedness: the high half by a shift right,
            // the low half moved to the top first.
            let halves = |t: &mut Self, v: Value| {
                let low_top = t.b.ins().ishl_imm_u(v, 16);
                if signed {
                    (
                        t.b.ins().sshr_imm_u(v, 16),
                        t.b.ins().sshr_imm_u(low_top, 16),
                    )
                } else {
                    (
                        t.b.ins().ushr_imm_u(v, 16),
                        t.b.ins().ushr_imm_u(low_top, 16),
                    )
                }
            };
            let (ah, al) = halves(t, va);
            let (bh, bl) = halves(t, vb);
            let pick = |t: &mut Self, x: Value, y: Value| match (max, signed) {
                (false, false) => t.b.ins().umin(x, y),
                (false, true) => t.b.ins().smin(x, y),
                (true, false) => t.b.ins().umax(x, y),
                (true, true) => t.b.ins().smax(x, y),
            };
            let hi = pick(t, ah, bh);
            let lo = pick(t, al, bl);
            let hi = t.b.ins().ishl_imm_u(hi, 16);
            let lo = t.b.ins().band_imm_s(lo, 0xffff);
            let r = t.b.ins().bor(hi, lo);
            t.write_reg(lane, dst, 1, r);
            Ok(vec![])
        })?;
        Ok(())
    }

    /// `PLOP3.LUT`: both truth tables applied to the lane masks of the three inputs (bitwise,
    /// so every lane at once), both results computed before either is written.
    pub(super) fn translate_pred_lut(
        &mut self,
        exec: Value,
        dst: [Pred; 2],
        [a, b, c]: [PredSrc; 3],
        lut: [u8; 2],
    ) -> Result<(), JitError> {
        let am = self.pred_mask(a)?;
        let bm = self.pred_mask(b)?;
        let cm = self.pred_mask(c)?;
        let r0 = self.lop3_value(lut[0], am, bm, cm);
        let r1 = self.lop3_value(lut[1], am, bm, cm);
        self.write_pred(dst[0], exec, r0)?;
        self.write_pred(dst[1], exec, r1)
    }
}

/// The context field ([`off`]) that holds special register `sr` when it is the same for every
/// lane of a warp (the CTA's index and shape, the grid's shape, the warp's index and count);
/// `None` for the registers without a field: those that differ from lane to lane, and the two
/// constants ([`SpecialReg::constant_value`]), which the translation writes as immediates.
pub(super) fn warp_uniform_special(sr: SpecialReg) -> Option<i32> {
    Some(match sr {
        SpecialReg::CtaIdX => off::CTAID,
        SpecialReg::CtaIdY => off::CTAID + 4,
        SpecialReg::CtaIdZ => off::CTAID + 8,
        SpecialReg::NTidX => off::NTID,
        SpecialReg::NTidY => off::NTID + 4,
        SpecialReg::NTidZ => off::NTID + 8,
        SpecialReg::NCtaIdX => off::NCTAID,
        SpecialReg::NCtaIdY => off::NCTAID + 4,
        SpecialReg::NCtaIdZ => off::NCTAID + 8,
        SpecialReg::WarpId => off::WARP_ID,
        SpecialReg::NWarpId => off::NWARPS,
        SpecialReg::TidX
        | SpecialReg::TidY
        | SpecialReg::TidZ
        | SpecialReg::LaneId
        | SpecialReg::LanemaskEq
        | SpecialReg::LanemaskLt
        | SpecialReg::LanemaskLe
        | SpecialReg::LanemaskGt
        | SpecialReg::LanemaskGe
        | SpecialReg::ClusterCtaRank
        | SpecialReg::SharedWindowHi => return None,
    })
}

/// The condition of the high words' comparison in a chained comparison `cmp` (`ISETP.EX`):
/// the strict ordering for the orderings (a tie is decided by the low words), equality or
/// inequality as it is; `None` for a float-only comparison.
pub(super) fn chained_cc(cmp: CmpOp, signed: bool) -> Option<IntCC> {
    let strict = if cmp == CmpOp::Le {
        CmpOp::Lt
    } else if cmp == CmpOp::Ge {
        CmpOp::Gt
    } else {
        cmp
    };
    int_cc(strict, signed)
}
