//! Lane-affine values in whole-warp chunks: registers known to hold `v + j * c` in lane `j`
//! of the chunk, with `v` a scalar and `c` a constant, beside their vectors.
//!
//! In the whole-warp copy of a chunk loop ([`super::Translator::vector_loop`]) `SR_TID.X` is
//! the lane's linear index (the copy runs only when the warp lies in the block's first row)
//! and `SR_LANEID` the lane's index, so both are `v + j` for a scalar `v`. Wrapping 32-bit
//! `+`, `-`, `*` and `<<` keep that shape when the other operand is warp-invariant (and, for
//! `*` and `<<`, a constant, so that the stride stays a constant):
//! `(v + j c) k = v k + j (c k)` modulo 2^32 exactly. `IMAD.WIDE.U32` of such a value by a constant plus a warp-invariant
//! 64-bit addend is `a + j * c` in 64 bits as long as the 32-bit factor does not wrap inside
//! the chunk (`v <= 2^32 - 1 - 3c`), a condition carried as a run-time flag; the signed
//! `IMAD.WIDE` NVIDIA's compilers emit likewise while the factor does not pass `2^31 - 1`.
//! A register holding a constant counts as one (the `IMAD.MOV.U32 R3, RZ, RZ, 0x4` they
//! write before the multiply).
//!
//! The only reader is the contiguous path of a vector load or store (`memory.rs`): a chunk
//! whose address is lane-affine with the access size as stride continues the region's run
//! exactly when its lane 0 address is the one the run expects, a scalar compare instead of
//! building and comparing the address vectors. The vectors themselves are still written as
//! before; when only the slow paths read them, Cranelift computes them there.
//!
//! Forms live for one chunk's pass and only for unguarded instructions (a guarded write keeps
//! other lanes' old values); any write of a register drops its form ([`Translator::vwrite`]).

use super::super::Translator;
use super::Chunk;
use crate::ir::{ImadMode, Inst, Op, Operand, Reg, SpecialReg, Src, SrcMod};
use crate::jit::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{InstBuilder, InstructionData, Opcode, Value, ValueDef};

/// The lane-affine form of an instruction's result.
pub(super) enum Affine {
    /// Register `r` is `v + j * c` (mod 2^32), `v` an i32.
    Word(Reg, Value, u32),
    /// The pair at `r` is `a + j * c` (64 bits, `a` an i64) when `valid`; its low word is
    /// `low(a) + j * c` (mod 2^32) always.
    Pair(Reg, Value, u32, Value),
}

/// The largest stride of a 32-bit factor `IMAD.WIDE` takes as lane-affine: small enough that
/// `3c` cannot overflow the bound.
const MAX_WIDE_STRIDE: u32 = 1 << 16;

impl<'a, 'f> Translator<'a, 'f> {
    /// The lane-affine form `inst` gives its destination, computed from its sources' forms
    /// before it writes (it may overwrite a source); `None` outside whole-warp chunks, for a
    /// guarded instruction and for anything but the shapes of the module docs. The wildcard
    /// arms say "no form", the safe answer for any op or operand a later change adds.
    #[allow(clippy::wildcard_enum_match_arm)]
    pub(super) fn affine_result(
        &mut self,
        chunk: &Chunk,
        inst: &Inst,
    ) -> Result<Option<Affine>, JitError> {
        if !chunk.full || !inst.guard.is_always() {
            return Ok(None);
        }
        let int32 = |ty: crate::ir::Ty| ty.is_int() && ty.bits() == 32;
        Ok(match inst.op {
            Op::ReadSpecial { dst, sr } => {
                let lane0 = match sr {
                    SpecialReg::LaneId => chunk.base,
                    SpecialReg::TidX => {
                        let (first, _, _) = self.warp_tid_x_row();
                        self.b.ins().iadd(first, chunk.base)
                    }
                    _ => return Ok(None),
                };
                Some(Affine::Word(dst, lane0, 1))
            }
            Op::Mov { ty, dst, src } if ty.regs() == 1 => self
                .affine_operand(src)?
                .map(|(v, c)| Affine::Word(dst, v, c)),
            Op::Binary {
                op, ty, dst, a, b, ..
            } if int32(ty) => {
                use crate::ir::BinOp;
                let (Some(fa), Some(fb)) = (self.affine_src(&a)?, self.affine_src(&b)?) else {
                    return Ok(None);
                };
                let form = match op {
                    BinOp::Add => Some(self.affine_add(fa, fb)),
                    BinOp::Sub => {
                        let v = self.b.ins().isub(fa.0, fb.0);
                        Some((v, fa.1.wrapping_sub(fb.1)))
                    }
                    BinOp::Mul => self.affine_mul(fa, fb, &a, &b),
                    BinOp::Shl => match b.operand {
                        Operand::Imm(n) if n < 32 => {
                            let v = self.b.ins().ishl_imm_s(fa.0, n as i64);
                            Some((v, fa.1 << n))
                        }
                        _ => None,
                    },
                    _ => None,
                };
                form.map(|(v, c)| Affine::Word(dst, v, c))
            }
            Op::Imad {
                mode: ImadMode::Lo,
                dst,
                a,
                b,
                c,
                ..
            } => {
                let (Some(fa), Some(fb), Some(fc)) = (
                    self.affine_src(&a)?,
                    self.affine_src(&b)?,
                    self.affine_src(&c)?,
                ) else {
                    return Ok(None);
                };
                self.affine_mul(fa, fb, &a, &b)
                    .map(|p| self.affine_add(p, fc))
                    .map(|(v, c)| Affine::Word(dst, v, c))
            }
            Op::Imad {
                mode: ImadMode::Wide,
                signed,
                dst,
                a,
                b,
                c,
            } if c.modifier == SrcMod::None => self.affine_wide(dst, &a, &b, c.operand, signed)?,
            _ => None,
        })
    }

    /// `IMAD.WIDE[.U32] dst, a, b, c` with `a` lane-affine, `b` a constant (an immediate,
    /// or a register holding one, as NVIDIA's compilers write `IMAD.MOV.U32 R3, RZ, RZ, 0x4`
    /// before it) and `c` a warp-invariant 64-bit addend (an immediate, a constant-bank word
    /// pair or a hoisted pair). The factors are extended by sign when `signed`.
    fn affine_wide(
        &mut self,
        dst: Reg,
        a: &Src,
        b: &Src,
        c: Operand,
        signed: bool,
    ) -> Result<Option<Affine>, JitError> {
        let (Some((v, stride)), Some(k)) = (self.affine_src(a)?, self.constant_src(b)) else {
            return Ok(None);
        };
        if stride > MAX_WIDE_STRIDE {
            return Ok(None);
        }
        let addend = match c {
            Operand::Imm(_) | Operand::Const { .. } => self.uniform_operand(c, 2)?,
            Operand::Reg(r) if r.is_rz() => self.b.ins().iconst(I64, 0),
            Operand::Reg(r) => {
                let word = |t: &Self, r: Reg| {
                    t.vaffine
                        .iter()
                        .find(|e| e.0 == r.0 && e.2 == 0)
                        .map(|e| e.1)
                };
                let (Some(lo), Some(hi)) = (word(self, r), word(self, r.word(1))) else {
                    return Ok(None);
                };
                self.concat(lo, hi)
            }
        };
        // The pair's stride, when it is positive and fits a word (else no access uses it).
        let factor = if signed {
            i64::from(k as i32)
        } else {
            i64::from(k)
        };
        let Ok(step) = u32::try_from(i64::from(stride) * factor) else {
            return Ok(None);
        };
        let wide = if signed {
            self.b.ins().sextend(I64, v)
        } else {
            self.b.ins().uextend(I64, v)
        };
        let product = self.b.ins().imul_imm_s(wide, factor);
        let a0 = self.b.ins().iadd(product, addend);
        // Lane 3's factor `v + 3 * stride` must not wrap, as the factor's extension sees it.
        let valid = if signed {
            let bound = i32::MAX as u32 - 3 * stride;
            self.b
                .ins()
                .icmp_imm_s(IntCC::SignedLessThanOrEqual, v, i64::from(bound as i32))
        } else {
            let bound = u32::MAX - 3 * stride;
            self.b
                .ins()
                .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, v, i64::from(bound))
        };
        Ok(Some(Affine::Pair(dst, a0, step, valid)))
    }

    /// Records `form` for its destination (after the instruction's writes dropped the old).
    pub(super) fn note_affine(&mut self, form: Affine) {
        match form {
            Affine::Word(r, v, c) => {
                if !r.is_rz() {
                    self.vaffine.push((r.0, v, c));
                }
            }
            Affine::Pair(r, a, c, valid) => {
                let low = self.b.ins().ireduce(I32, a);
                self.vaffine.push((r.0, low, c));
                self.vaffine64.push((r.0, a, c, valid));
            }
        }
    }

    /// Drops every form register `r` is part of (it is being written).
    pub(super) fn forget_affine(&mut self, r: Reg) {
        self.vaffine.retain(|e| e.0 != r.0);
        self.vaffine64
            .retain(|e| e.0 != r.0 && u32::from(e.0) + 1 != u32::from(r.0));
    }

    /// The lane-0 address and its validity flag of an access through register `base` (a pair
    /// when `pair`, plus `add32` on the low word) whose lanes are `size` bytes apart: `None`
    /// unless `base` holds a lane-affine value of stride `size`.
    pub(super) fn affine_address(
        &mut self,
        base: Reg,
        pair: bool,
        add32: u32,
        size: u32,
    ) -> Option<(Value, Value)> {
        if pair {
            // A carry from `add32` into the high word is not a shape this tracks.
            let &(_, a, c, valid) = self.vaffine64.iter().find(|e| e.0 == base.0)?;
            (add32 == 0 && c == size).then_some((a, valid))
        } else {
            let &(_, v, c) = self.vaffine.iter().find(|e| e.0 == base.0)?;
            if c != size {
                return None;
            }
            let v = self.b.ins().iadd_imm_s(v, i64::from(add32 as i32));
            let a = self.b.ins().uextend(I64, v);
            let valid = self.b.ins().iconst(cranelift_codegen::ir::types::I8, 1);
            Some((a, valid))
        }
    }

    /// The form of source `s`: a register's recorded form, or a warp-invariant operand
    /// (`c = 0`); `None` with a modifier.
    fn affine_src(&mut self, s: &Src) -> Result<Option<(Value, u32)>, JitError> {
        if s.modifier != SrcMod::None {
            return Ok(None);
        }
        self.affine_operand(s.operand)
    }

    fn affine_operand(&mut self, op: Operand) -> Result<Option<(Value, u32)>, JitError> {
        Ok(match op {
            Operand::Reg(r) if r.is_rz() => Some((self.b.ins().iconst(I32, 0), 0)),
            Operand::Reg(r) => self.vaffine.iter().find(|e| e.0 == r.0).map(|e| (e.1, e.2)),
            Operand::Imm(_) | Operand::Const { .. } => Some((self.uniform_operand(op, 1)?, 0)),
        })
    }

    fn affine_add(&mut self, (va, ca): (Value, u32), (vb, cb): (Value, u32)) -> (Value, u32) {
        let v = match (self.known_constant(va), self.known_constant(vb)) {
            (Some(x), Some(y)) => self.b.ins().iconst(I32, i64::from(x.wrapping_add(y))),
            _ => self.b.ins().iadd(va, vb),
        };
        (v, ca.wrapping_add(cb))
    }

    /// `a * b` when the product keeps a constant stride: both invariant, or one of them a
    /// constant.
    fn affine_mul(
        &mut self,
        (va, ca): (Value, u32),
        (vb, cb): (Value, u32),
        a: &Src,
        b: &Src,
    ) -> Option<(Value, u32)> {
        let v = match (self.known_constant(va), self.known_constant(vb)) {
            (Some(x), Some(y)) => self.b.ins().iconst(I32, i64::from(x.wrapping_mul(y))),
            _ => self.b.ins().imul(va, vb),
        };
        match (ca, cb) {
            (0, 0) => Some((v, 0)),
            (_, 0) => self.constant_src(b).map(|k| (v, ca.wrapping_mul(k))),
            (0, _) => self.constant_src(a).map(|k| (v, cb.wrapping_mul(k))),
            _ => None,
        }
    }

    /// The 32-bit value of source `s` when the translator knows it: an immediate, or a
    /// register whose form is a constant (`IMAD.MOV.U32 R3, RZ, RZ, 0x4`; sums and products
    /// of constants are folded as they are recorded).
    fn constant_src(&self, s: &Src) -> Option<u32> {
        if s.modifier != SrcMod::None {
            return None;
        }
        match s.operand {
            Operand::Imm(v) => Some(v as u32),
            Operand::Reg(r) if r.is_rz() => Some(0),
            Operand::Reg(r) => {
                let &(_, v, c) = self.vaffine.iter().find(|e| e.0 == r.0)?;
                if c == 0 {
                    self.known_constant(v)
                } else {
                    None
                }
            }
            Operand::Const { .. } => None,
        }
    }

    /// The value of `v` when it is an `iconst`.
    fn known_constant(&self, v: Value) -> Option<u32> {
        let ValueDef::Result(inst, _) = self.b.func.dfg.value_def(v) else {
            return None;
        };
        if let InstructionData::UnaryImm {
            opcode: Opcode::Iconst,
            imm,
        } = self.b.func.dfg.insts[inst]
        {
            Some(imm.bits() as u32)
        } else {
            None
        }
    }
}
