//! Warp-collective ops (`SHFL`, `REDUX`, `MATCH`) and the broadcast of uniform registers.
//!
//! The collective ops read other lanes' registers, so they are never fused into a lane-major
//! region ([`super::Fusion::No`]) and each reads every source it needs before it writes any
//! destination: `REDUX` and `MATCH.ALL` fold in one lane loop and write in a second;
//! `MATCH.ANY` first copies the executing lanes' values into a stack buffer; `SHFL` reads lane
//! `j`'s register straight from the register file, through a stack buffer when its
//! destination is the register it reads (lane `j` may already have been written otherwise).
//!
//! Uniform registers and predicates ([`crate::ir::Uniform`]) are per-lane slots whose writes
//! are broadcast: after an instruction that writes one (known at translate time), the lowest
//! executing lane's value is copied to all 32 lanes' slots ([`Translator::broadcast_uniform`]).
//! Such an instruction is not fused (the copy writes other lanes' slots), its register stores
//! are never skipped as dead (`store_needed`: lanes on the other side of a divergent branch may
//! read the value even when no path of the writing lanes does), and a pure per-lane op whose
//! every destination is uniform computes only its lowest executing lane, the one whose result
//! the broadcast keeps.

use super::{Lane, Translator, REG_ROW_BYTES};
use crate::ir::{BinOp, Inst, Kernel, Op, Operand, Pred, Reg, ShflMode, Src, Ty, Use};
use crate::jit::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value};

/// The uniform register words and predicates an instruction writes.
#[derive(Debug, Default)]
pub(super) struct UniformWrites {
    pub regs: Vec<Reg>,
    pub preds: Vec<Pred>,
    /// Every register word and predicate the instruction writes (RZ and PT aside) is uniform.
    pub only_uniform: bool,
}

impl UniformWrites {
    pub fn of(kernel: &Kernel, inst: &Inst) -> UniformWrites {
        let mut w = UniformWrites {
            only_uniform: true,
            ..UniformWrites::default()
        };
        if kernel.uniform.is_empty() {
            return w;
        }
        let uniform = &kernel.uniform;
        inst.op.for_each_use(|u| match u {
            Use::Dst { reg, words } => {
                for i in 0..words {
                    let r = reg.word(i);
                    if uniform.has_reg(r) {
                        if !w.regs.contains(&r) {
                            w.regs.push(r);
                        }
                    } else if !r.is_rz() {
                        w.only_uniform = false;
                    }
                }
            }
            Use::PredDst(p) => {
                if uniform.has_pred(p) {
                    if !w.preds.contains(&p) {
                        w.preds.push(p);
                    }
                } else if !p.is_pt() {
                    w.only_uniform = false;
                }
            }
            Use::Src { .. } | Use::PredSrc(_) => {}
        });
        w
    }

    pub fn is_empty(&self) -> bool {
        self.regs.is_empty() && self.preds.is_empty()
    }
}

/// The registers some `SHFL` reads from other lanes: a write to one must always reach the
/// register file (another lane may read it even where the writing lane's own paths do not).
pub(super) fn cross_lane_reads(kernel: &Kernel) -> Vec<Reg> {
    let mut regs = Vec::new();
    for inst in &kernel.insts {
        if let Op::Shfl {
            a: Operand::Reg(r), ..
        } = inst.op
        {
            if !r.is_rz() && !regs.contains(&r) {
                regs.push(r);
            }
        }
    }
    regs
}

impl<'a, 'f> Translator<'a, 'f> {
    /// Memory flags for register-file accesses that may not be naturally aligned for their
    /// type (the vector stores of the broadcast): the `regs` region without `aligned`.
    pub(super) fn regs_unaligned(&self) -> MemFlagsData {
        MemFlagsData::new()
            .with_notrap()
            .with_alias_region(self.flags.regs.alias_region())
    }

    /// A stack buffer of `bytes` bytes and its address.
    fn stack_buffer(&mut self, bytes: u32) -> Value {
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            bytes,
            3,
        ));
        self.b.ins().stack_addr(I64, slot, 0)
    }

    /// `base + lane * size` for an i32 lane index.
    fn lane_slot(&mut self, base: Value, lane: Value, size: i64) -> Value {
        let l = self.b.ins().uextend(I64, lane);
        let off = self.b.ins().imul_imm_s(l, size);
        self.b.ins().iadd(base, off)
    }

    /// The PTX `shfl.sync` source lane of `lane` and whether it is in range, as
    /// [`crate::sem::warp::shfl_source`] computes it: `(j, valid)`, `j = lane` when not valid.
    fn shfl_source(&mut self, mode: ShflMode, lane: Value, b: Value, c: Value) -> (Value, Value) {
        let bval = self.b.ins().band_imm_s(b, 31);
        let cval = self.b.ins().band_imm_s(c, 31);
        let seg = self.b.ins().ushr_imm_s(c, 8);
        let seg = self.b.ins().band_imm_s(seg, 31);
        let min_lane = self.b.ins().band(lane, seg);
        let clamp = self.b.ins().band_not(cval, seg);
        let max_lane = self.b.ins().bor(min_lane, clamp);
        let j = match mode {
            ShflMode::Up => self.b.ins().isub(lane, bval),
            ShflMode::Down => self.b.ins().iadd(lane, bval),
            ShflMode::Bfly => self.b.ins().bxor(lane, bval),
            ShflMode::Idx => {
                let within = self.b.ins().band_not(bval, seg);
                self.b.ins().bor(min_lane, within)
            }
        };
        let cc = if mode == ShflMode::Up {
            IntCC::SignedGreaterThanOrEqual
        } else {
            IntCC::SignedLessThanOrEqual
        };
        let valid = self.b.ins().icmp(cc, j, max_lane);
        (self.b.ins().select(valid, j, lane), valid)
    }

    /// `SHFL`: `dst` = register `a` of the source lane as it was before the instruction,
    /// `dst_pred` = whether the source lane was in range.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn translate_shfl(
        &mut self,
        exec: Value,
        mode: ShflMode,
        dst: Reg,
        dst_pred: Pred,
        a: Operand,
        b: Src,
        c: Src,
    ) -> Result<(), JitError> {
        // Writing `dst` lane by lane would change what a later lane reads when `dst` is `a`:
        // the values then go through a buffer first.
        let buffer = match a {
            Operand::Reg(r) if r == dst && !r.is_rz() => Some(self.stack_buffer(128)),
            Operand::Reg(_) | Operand::Imm(_) | Operand::Const { .. } => None,
        };
        let zero = self.iconst(I32, 0);
        let valid = self.lane_loop(exec, &[zero], |t, lane, acc| {
            let vb = t.read_src(lane, &b, Ty::U32)?;
            let vc = t.read_src(lane, &c, Ty::U32)?;
            let (j, valid) = t.shfl_source(mode, lane.index, vb, vc);
            let value = match a {
                Operand::Reg(r) if !r.is_rz() => {
                    // Lane `j`'s row of the register file (`j` is in 0..32).
                    let row = t.lane_slot(t.regs, j, 4);
                    t.b.ins()
                        .load(I32, t.flags.regs, row, i32::from(r.0) * REG_ROW_BYTES)
                }
                // RZ, immediates and constants read the same in every lane.
                Operand::Reg(_) | Operand::Imm(_) | Operand::Const { .. } => {
                    t.read_operand(lane, a, 1)?
                }
            };
            match buffer {
                Some(buf) => {
                    let at = t.lane_slot(buf, lane.index, 4);
                    t.b.ins().store(MemFlagsData::trusted(), value, at, 0);
                }
                None => t.write_reg32(lane, dst, value),
            }
            let bit = t.bool_to_lane_bit(valid, lane);
            Ok(vec![t.b.ins().bor(acc[0], bit)])
        })?;
        if let Some(buf) = buffer {
            self.lane_loop(exec, &[], |t, lane, _| {
                let at = t.lane_slot(buf, lane.index, 4);
                let v = t.b.ins().load(I32, MemFlagsData::trusted(), at, 0);
                t.write_reg32(lane, dst, v);
                Ok(vec![])
            })?;
        }
        self.write_pred(dst_pred, exec, valid[0])
    }

    /// `REDUX`: every executing lane receives `op` folded over `src` of the executing lanes
    /// (one loop folds, a second writes).
    pub(super) fn translate_redux(
        &mut self,
        exec: Value,
        op: BinOp,
        ty: Ty,
        dst: Reg,
        src: Operand,
    ) -> Result<(), JitError> {
        let signed = ty.is_signed_int();
        // The fold's identity, as `sem::warp::redux` starts it (never observed: a lane that
        // executes contributes a value).
        let identity = match op {
            BinOp::Min if signed => i64::from(i32::MAX),
            BinOp::Max if signed => i64::from(i32::MIN),
            BinOp::Min | BinOp::And => -1,
            BinOp::Add | BinOp::Max | BinOp::Or | BinOp::Xor => 0,
            BinOp::Sub
            | BinOp::Mul
            | BinOp::MulHi
            | BinOp::MulWide
            | BinOp::Div
            | BinOp::Rem
            | BinOp::Shl
            | BinOp::Shr => {
                return Err(self.internal(format!(
                    "redux.{} (validation admits add, min, max, and, or, xor)",
                    op.name()
                )))
            }
        };
        let init = self.iconst(I32, identity);
        let folded = self.lane_loop(exec, &[init], |t, lane, acc| {
            let v = t.read_operand(lane, src, 1)?;
            let acc = acc[0];
            let r = match op {
                BinOp::Min if signed => t.b.ins().smin(acc, v),
                BinOp::Max if signed => t.b.ins().smax(acc, v),
                BinOp::Min => t.b.ins().umin(acc, v),
                BinOp::Max => t.b.ins().umax(acc, v),
                BinOp::And => t.b.ins().band(acc, v),
                BinOp::Or => t.b.ins().bor(acc, v),
                BinOp::Xor => t.b.ins().bxor(acc, v),
                // `Add`; the others were rejected above.
                BinOp::Add
                | BinOp::Sub
                | BinOp::Mul
                | BinOp::MulHi
                | BinOp::MulWide
                | BinOp::Div
                | BinOp::Rem
                | BinOp::Shl
                | BinOp::Shr => t.b.ins().iadd(acc, v),
            };
            Ok(vec![r])
        })?;
        let result = folded[0];
        self.lane_loop(exec, &[], |t, lane, _| {
            t.write_reg32(lane, dst, result);
            Ok(vec![])
        })?;
        Ok(())
    }

    /// `MATCH.ANY` / `MATCH.ALL` on the `ty.bits()`-bit value `src` of the executing lanes.
    pub(super) fn translate_match(
        &mut self,
        exec: Value,
        all: bool,
        ty: Ty,
        dst: Reg,
        dst_pred: Pred,
        src: Operand,
    ) -> Result<(), JitError> {
        let words = ty.regs();
        let widen = move |t: &mut Self, v: Value| {
            if words == 2 {
                v
            } else {
                t.b.ins().uextend(I64, v)
            }
        };
        if all {
            // Every executing lane's value against the lowest executing lane's.
            let one = self.iconst(I32, 1);
            let same = self.lane_loop(exec, &[one], |t, lane, acc| {
                let first: Lane = t.lane_at(exec);
                let v0 = t.read_operand(&first, src, words)?;
                let v = t.read_operand(lane, src, words)?;
                let eq = t.b.ins().icmp(IntCC::Equal, v, v0);
                let eq = t.b.ins().uextend(I32, eq);
                Ok(vec![t.b.ins().band(acc[0], eq)])
            })?;
            let every = self.is_nonzero(same[0]);
            let zero = self.iconst(I32, 0);
            let result = self.b.ins().select(every, exec, zero);
            self.lane_loop(exec, &[], |t, lane, _| {
                t.write_reg32(lane, dst, result);
                Ok(vec![])
            })?;
            return self.write_pred(dst_pred, exec, result);
        }
        // ANY: the executing lanes' values into a buffer, then each lane's mask of equal
        // values (an inner loop over the executing lanes).
        let buf = self.stack_buffer(256);
        self.lane_loop(exec, &[], |t, lane, _| {
            let v = t.read_operand(lane, src, words)?;
            let v = widen(t, v);
            let at = t.lane_slot(buf, lane.index, 8);
            t.b.ins().store(MemFlagsData::trusted(), v, at, 0);
            Ok(vec![])
        })?;
        self.lane_loop(exec, &[], |t, lane, _| {
            let at = t.lane_slot(buf, lane.index, 8);
            let own = t.b.ins().load(I64, MemFlagsData::trusted(), at, 0);
            let zero = t.iconst(I32, 0);
            let mask = t.lane_loop(exec, &[zero], |t, other, acc| {
                let at = t.lane_slot(buf, other.index, 8);
                let v = t.b.ins().load(I64, MemFlagsData::trusted(), at, 0);
                let eq = t.b.ins().icmp(IntCC::Equal, v, own);
                let bit = t.bool_to_lane_bit(eq, other);
                Ok(vec![t.b.ins().bor(acc[0], bit)])
            })?;
            t.write_reg32(lane, dst, mask[0]);
            Ok(vec![])
        })?;
        // `any` sets `dst_pred` in every executing lane.
        let ones = self.iconst(I32, -1);
        self.write_pred(dst_pred, exec, ones)
    }

    /// The broadcast rule of [`crate::ir::Uniform`] after an instruction that executed for
    /// lanes `exec` (the mask before the instruction): each uniform register word and
    /// predicate it wrote takes the lowest executing lane's value in all 32 lanes. Nothing
    /// happens when no lane executed.
    pub(super) fn broadcast_uniform(&mut self, w: &UniformWrites, exec: Value) {
        let copy = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().brif(exec, copy, &[], cont, &[]);
        self.b.switch_to_block(copy);
        let from = self.b.ins().ctz(exec);
        if !w.regs.is_empty() {
            let row = self.lane_slot(self.regs, from, 4);
            for &r in &w.regs {
                let base = i32::from(r.0) * REG_ROW_BYTES;
                let v = self.b.ins().load(I32, self.flags.regs, row, base);
                self.splat_reg(r, v);
            }
        }
        for &p in &w.preds {
            let offset = i32::from(p.0) * 4;
            let bits = self.b.ins().load(I32, self.flags.state, self.preds, offset);
            let bit = self.b.ins().ushr(bits, from);
            let bit = self.b.ins().band_imm_s(bit, 1);
            let all = self.b.ins().ineg(bit);
            self.b
                .ins()
                .store(self.flags.state, all, self.preds, offset);
        }
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
    }
}
