//! SIMD lanes' atomics: a 32-bit integer or `f32` atomic of a vectorised region (`mod.rs`)
//! through a global or generic address, for a chunk of four lanes, as one 16-byte host
//! compare-and-swap when the lanes name four adjacent words.
//!
//! The pattern is everywhere a CUDA kernel flushes per-block partial results:
//! `atomicAdd(&out[threadIdx.x], local[threadIdx.x])` (`RED.E.ADD` on `hist + tid * 4`). Lane by
//! lane that is a `lock add` per lane (~2.2 ns on the 2-vCPU EPYC); one `lock cmpxchg16b` does
//! four lanes in ~4 ns.
//!
//! # How a chunk runs
//!
//! * **Four adjacent words** (every lane of the chunk executing; the lanes' addresses `a`,
//!   `a + 4`, `a + 8`, `a + 12`; the host pointer of `a` 16-byte aligned; both ends inside the
//!   global arena, or for a generic address inside one window, the arena or the CTA's shared
//!   window: `memory.rs`'s contiguous test with the alignment, or the run it starts):
//!   the 16 bytes are loaded (a guess), each lane's new word is computed from its old one with
//!   vector code ([`Translator::vector_rmw`], the per-lane formulas of `ir::AtomicOp` lane by
//!   lane), and `lock cmpxchg16b` swaps the four words in if none changed since the guess;
//!   otherwise the loop retries with the words the CAS found. Each lane's result is its old
//!   word.
//! * **Lane by lane** otherwise: the scalar atomic ([`Translator::atomic_lane`]) for each of
//!   the chunk's executing lanes in order, as the scalar region loop runs it; a faulting lane
//!   traps with exactly the lanes before it done and counted.
//!
//! # Why it is exact
//!
//! The four lanes' read-modify-writes are on four distinct words. Run lane by lane, each is
//! one atomic RMW of its word, and nothing in the lanes' program order separates them (a
//! region holds one memory access, so no access of these lanes comes between). An execution in
//! which no other thread accesses the four words between the first lane's RMW and the last's
//! is always possible, and the 16-byte CAS produces exactly that one: each word's old value is
//! the one its lane reads, its new value the one its lane writes, at one point of each word's
//! coherence order. Only the four words are written, so no byte any lane does not name is
//! touched (the 16 bytes are exactly the lanes' elements: a partial chunk never takes this
//! path). A lane whose op leaves its word unchanged (a `min` that loses, an `add` of 0)
//! rewrites the value it read, which its own RMW also does in the IR (only a failed compare of
//! CAS, CAST and FCMPWR writes nothing, and those ops are not taken). The orders: `lock
//! cmpxchg16b` is sequentially consistent, like every RMW the JIT emits (`memory.rs`'s table).
//! `docs/memory-model.md` ("Four lanes, one 16-byte compare-and-swap") has the argument in the
//! PTX model's terms.
//!
//! Which atomics: `u32`/`s32`/`b32` add, sub, and, or, xor, min, max, exch, inc and dec, and
//! `f32` add, min and max, through a global or generic register address, one element, not
//! `.SPIN`, on a host with `cmpxchg16b` ([`vectorisable_atomic`]); a region holding one is vector
//! code only when its addresses may be adjacent (`adjacent.rs`). A generic address in the shared
//! window takes the CAS as well: a locked instruction is at least as strong as the plain
//! read-modify-write the scalar path does on that CTA-private window. 64-bit lanes would be two
//! per CAS, which is no faster than two `lock` instructions.
//!
//! The `f32` ops are the scalar path's formula (`memory.rs`, `float_rmw`) lane by lane: the
//! host's `addps` rounds to nearest even exactly as its `addss` does (the host's MXCSR keeps
//! subnormals and the default rounding), then the NaN canonicalisation and the FTZ flushes as
//! integer vector code. FTZ follows the IR's rule (`ir::AtomicInst::ftz`): a global atomic's
//! every lane; a generic one's lanes in the global arena, which in a four-lane chunk are all
//! four or none (the contiguous test keeps a chunk inside one window), so lane 0's address
//! decides for the chunk. The CUDA flush `atomicAdd(&out[threadIdx.x], x)` on floats
//! (`RED.E.ADD.F32.FTZ.RN`) went from 12.6 to 9.9 ms on 2^22 lanes (`docs/performance.md`).

use super::super::memory::Ftz;
use super::super::Translator;
use super::super::GLOBAL_BASE_I64;
use super::memory::register_address;
use super::Chunk;
use crate::ir::{AtomicInst, AtomicOp, Inst, Space, Ty};
use crate::jit::warp_ctx::off;
use crate::jit::JitError;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{F32X4, I128, I32, I32X4, I64};
use cranelift_codegen::ir::{BlockArg, Endianness, InstBuilder, MemFlagsData, Value};

/// Whether atomic `a` has a vector translation (see the module docs): a `u32`/`s32`/`b32`
/// add, sub, and, or, xor, min, max, exch, inc or dec, or an `f32` add, min or max, through a
/// global or generic register address, one element, not `.SPIN`, on a host with a 16-byte
/// compare-and-swap.
pub(in super::super) fn vectorisable_atomic(a: &AtomicInst) -> bool {
    // 64-bit lanes would be two per CAS; 8- and 16-bit ones share words; the packed halves and
    // `b128` have lowerings of their own.
    let op = if matches!(a.access.ty, Ty::U32 | Ty::S32 | Ty::B32) {
        matches!(
            a.op,
            AtomicOp::Add
                | AtomicOp::Sub
                | AtomicOp::And
                | AtomicOp::Or
                | AtomicOp::Xor
                | AtomicOp::Min
                | AtomicOp::Max
                | AtomicOp::Exch
                | AtomicOp::Inc
                | AtomicOp::Dec
        )
    } else {
        a.access.ty == Ty::F32 && matches!(a.op, AtomicOp::Add | AtomicOp::Min | AtomicOp::Max)
    };
    op && matches!(a.access.space, Space::Global | Space::Generic)
        && !a.spin
        && a.access.vector == 1
        && a.src2.is_none()
        && register_address(&a.access).is_some()
        && crate::exec::memory::has_cas128()
}

/// Whether one lane's atomic `a` runs its elements as one 16-byte CAS
/// ([`Translator::four_element_float_cas`]): four `f32` elements (add, min or max, no second
/// operand) on a host with a 16-byte compare-and-swap.
pub(in super::super) fn four_element_float(a: &AtomicInst) -> bool {
    a.access.ty == Ty::F32
        && a.access.vector == 4
        && matches!(a.op, AtomicOp::Add | AtomicOp::Min | AtomicOp::Max)
        && a.src2.is_none()
        && !a.spin
        && crate::exec::memory::has_cas128()
}

impl<'a, 'f> Translator<'a, 'f> {
    /// A vectorisable atomic ([`vectorisable_atomic`]) for the chunk's lanes: four adjacent
    /// words in one 16-byte CAS loop when it can be, else lane by lane (see the module docs).
    pub(super) fn vector_atomic(
        &mut self,
        chunk: &Chunk,
        inst: &Inst,
        a: &AtomicInst,
    ) -> Result<(), JitError> {
        // Only fusable atomics reach a vector region (`fusion_of`): no `.SPIN`, and no
        // `performed` predicate to write.
        debug_assert!(!a.spin && a.performed.is_pt());
        let form = register_address(&a.access)
            .ok_or_else(|| self.internal("a vector atomic without a register address"))?;
        let lowering = self.atomic_lowering(a)?;
        let bits = self.exec_bits(chunk, inst)?;
        let operand = self.voperand(chunk, a.src)?;
        // Every register vector either path reads, in the block that dominates both.
        let regs = self.lane_registers(chunk, inst);
        // The IR's FTZ rule (`ir::AtomicInst::ftz`): every lane of a global atomic; for a
        // generic one, the lanes whose address is in the global arena, which in the contiguous
        // path is all four or none, as lane 0's is (the scalar path's `Ftz`, one condition for
        // the chunk). Computed here, with the register vectors,
        // in the block that dominates every path.
        let ftz = match (a.ftz, a.access.space) {
            (false, _) => Ftz::Off,
            (true, Space::Generic) => {
                let a0 = self.chunk_lane0_address(chunk, form);
                Ftz::When(self.b.ins().icmp_imm_s(
                    IntCC::UnsignedGreaterThanOrEqual,
                    a0,
                    GLOBAL_BASE_I64,
                ))
            }
            (true, _) => Ftz::On,
        };
        let join = self.join_block(1);
        self.skip_idle_chunk(inst, bits, join, 1);
        let slow = self.b.create_block();
        let host = self.contiguous_branch(chunk, &a.access, form, bits, slow, true)?;
        // In range and aligned (the contiguous test).
        let old = self.cas16_loop(host, |t, old| t.vector_rmw(a, old, operand, ftz));
        let chunks = self
            .b
            .ins()
            .load(I64, self.flags.state, self.ctx, off::WIDE_CAS_CHUNKS);
        let chunks = self.b.ins().iadd_imm_s(chunks, 1);
        self.b
            .ins()
            .store(self.flags.state, chunks, self.ctx, off::WIDE_CAS_CHUNKS);
        self.b.ins().jump(join, &[BlockArg::Value(old)]);

        // Lane by lane: a faulting lane's trap counts the lanes of the atomic before it, from
        // the instruction's executing lanes with this chunk's taken from `bits` (the guard's
        // mask may not hold this pass's writes yet).
        self.b.switch_to_block(slow);
        let outside = self.exec_mask(inst.guard)?;
        let chunk_lanes = self.b.ins().iconst(I32, 15);
        let chunk_lanes = self.b.ins().ishl(chunk_lanes, chunk.base);
        let own = self.b.ins().ishl(bits, chunk.base);
        let exec = self.b.ins().bitselect(chunk_lanes, own, outside);
        self.atomic_exec = Some((a.op, exec, 1));
        let zeros = self.vconst([0; 4]);
        let lanes_done = (0..4u8).try_fold(zeros, |row, i| {
            let rows = self.for_lane(chunk, &regs, bits, i, &[row], |t, lane, rows| {
                let results = t.atomic_lane(lane, a, &lowering, I32)?;
                if a.dst.is_rz() {
                    // Unused: a `RED`'s host atomic returns nothing (`lock add`, not `xadd`).
                    return Ok(vec![rows[0]]);
                }
                let r = results
                    .first()
                    .copied()
                    .ok_or_else(|| t.internal("an atomic lane without a result"))?;
                Ok(vec![t.b.ins().insertlane(rows[0], r, i)])
            })?;
            Ok::<Value, JitError>(rows[0])
        });
        self.atomic_exec = None;
        let row = lanes_done?;
        self.b.ins().jump(join, &[BlockArg::Value(row)]);

        self.b.switch_to_block(join);
        let results = self.b.block_params(join)[0];
        let lanes = if inst.guard.is_always() {
            chunk.lanes
        } else {
            self.lane_vector(bits)
        };
        self.vwrite(chunk, a.dst, lanes, results);
        Ok(())
    }

    /// The 16-byte CAS loop at `host` (checked: in range and 16-byte aligned): loads the four
    /// words as a guess, computes their new words with `new_of`, and swaps them in when none
    /// changed since, else retries with the words the CAS found. Returns the four old words
    /// (in the block after the loop).
    fn cas16_loop(&mut self, host: Value, new_of: impl Fn(&mut Self, Value) -> Value) -> Value {
        let guess = self.b.ins().load(I32X4, self.flags.device, host, 0);
        let head = self.join_block(1);
        self.b.ins().jump(head, &[BlockArg::Value(guess)]);

        self.b.switch_to_block(head);
        let old = self.b.block_params(head)[0];
        let new = new_of(self, old);
        let le = MemFlagsData::new().with_endianness(Endianness::Little);
        let old_bits = self.b.ins().bitcast(I128, le, old);
        let new_bits = self.b.ins().bitcast(I128, le, new);
        // Checked by the caller: `trusted`, as the scalar atomics.
        let flags = MemFlagsData::trusted().with_alias_region(self.flags.device.alias_region());
        let seen_bits = self.b.ins().atomic_cas(flags, host, old_bits, new_bits);
        let swapped = self.b.ins().icmp(IntCC::Equal, seen_bits, old_bits);
        let seen = self.b.ins().bitcast(I32X4, le, seen_bits);
        let done = self.b.create_block();
        self.b
            .ins()
            .brif(swapped, done, &[], head, &[BlockArg::Value(seen)]);
        self.b.switch_to_block(done);
        old
    }

    /// One lane's four-element `f32` atomic (`red.global.add.v4.f32`, SASS `ADD.F32x4.FTZ.RN`;
    /// [`four_element_float`]) at `ptr` (checked: in range and aligned to its 16 bytes, so
    /// the host pointer is 16-byte aligned too: regions are) with operands `bs`, as one 16-byte
    /// CAS loop with the four elements' formulas in vector code, instead of one CAS loop an
    /// element. PTX guarantees atomicity "separately for each of the individual scalar
    /// elements"; doing the four at once is the execution in which no other thread comes
    /// between them, as for four lanes (`docs/memory-model.md`). Returns the four old words.
    pub(in super::super) fn four_element_float_cas(
        &mut self,
        a: &AtomicInst,
        ptr: Value,
        bs: &[Value],
        ftz: Ftz,
    ) -> Vec<Value> {
        let mut operand = self.vconst([0; 4]);
        for (i, &b) in bs.iter().enumerate() {
            operand = self.b.ins().insertlane(operand, b, i as u8);
        }
        let old = self.cas16_loop(ptr, |t, old| t.vector_float_rmw(a.op, old, operand, ftz));
        (0..4).map(|i| self.b.ins().extractlane(old, i)).collect()
    }

    /// Each lane's new word of atomic `a` from its old word in `old` and its operand in `b`:
    /// the formulas of `ir::AtomicOp` (`sem::atomic::rmw_value`) in 32 bits, lane by lane;
    /// for `f32`, the scalar path's (`memory.rs`, `float_rmw`) with `ftz`.
    fn vector_rmw(&mut self, a: &AtomicInst, old: Value, b: Value, ftz: Ftz) -> Value {
        if a.access.ty == Ty::F32 {
            return self.vector_float_rmw(a.op, old, b, ftz);
        }
        let signed = a.access.ty.is_signed_int();
        match a.op {
            AtomicOp::Add => self.b.ins().iadd(old, b),
            AtomicOp::Sub => self.b.ins().isub(old, b),
            AtomicOp::And => self.b.ins().band(old, b),
            AtomicOp::Or => self.b.ins().bor(old, b),
            AtomicOp::Xor => self.b.ins().bxor(old, b),
            AtomicOp::Min if signed => self.b.ins().smin(old, b),
            AtomicOp::Min => self.b.ins().umin(old, b),
            AtomicOp::Max if signed => self.b.ins().smax(old, b),
            AtomicOp::Max => self.b.ins().umax(old, b),
            AtomicOp::Exch => b,
            AtomicOp::Inc => {
                // M = (M >= b) ? 0 : M + 1 (unsigned).
                let wrap = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, old, b);
                let one = self.vconst([1; 4]);
                let inc = self.b.ins().iadd(old, one);
                self.b.ins().band_not(inc, wrap)
            }
            AtomicOp::Dec => {
                // M = (M == 0 || M > b) ? b : M - 1 (unsigned).
                let zero = self.vconst([0; 4]);
                let is_zero = self.b.ins().icmp(IntCC::Equal, old, zero);
                let above = self.b.ins().icmp(IntCC::UnsignedGreaterThan, old, b);
                let reset = self.b.ins().bor(is_zero, above);
                let one = self.vconst([1; 4]);
                let dec = self.b.ins().isub(old, one);
                self.b.ins().bitselect(reset, b, dec)
            }
            // Not vectorisable (`vectorisable_atomic`): their scalar lowering, never reached.
            AtomicOp::Cas | AtomicOp::Cast | AtomicOp::PreDec | AtomicOp::FCmpWr => old,
        }
    }

    /// The new words of an `f32` add, min or max for four lanes, lane by lane the scalar
    /// path's formula (`memory.rs`, `float_rmw`): subnormal inputs flushed as `ftz` says, the
    /// operation on the host's floats (SSE `addps` rounds to nearest even like the scalar
    /// `addss`; MXCSR keeps subnormals), a NaN result made the canonical `0x7fffffff`, and
    /// the result flushed as `ftz` says.
    fn vector_float_rmw(&mut self, op: AtomicOp, old: Value, b: Value, ftz: Ftz) -> Value {
        let le = MemFlagsData::new().with_endianness(Endianness::Little);
        let m = self.vector_ftz(ftz, old);
        let v = self.vector_ftz(ftz, b);
        let fm = self.b.ins().bitcast(F32X4, le, m);
        let fv = self.b.ins().bitcast(F32X4, le, v);
        let r = match op {
            AtomicOp::Add => {
                let r = self.b.ins().fadd(fm, fv);
                self.b.ins().bitcast(I32X4, le, r)
            }
            AtomicOp::Min | AtomicOp::Max => {
                // `alu.rs`'s `float_min_max`: a NaN operand yields the other operand.
                let r = if op == AtomicOp::Max {
                    self.b.ins().fmax(fm, fv)
                } else {
                    self.b.ins().fmin(fm, fv)
                };
                let r = self.b.ins().bitcast(I32X4, le, r);
                let m_nan = self.b.ins().fcmp(FloatCC::Unordered, fm, fm);
                let v_nan = self.b.ins().fcmp(FloatCC::Unordered, fv, fv);
                let r = self.b.ins().bitselect(v_nan, m, r);
                self.b.ins().bitselect(m_nan, v, r)
            }
            // Not vectorisable for f32 (`vectorisable_atomic`): never reached.
            AtomicOp::Sub
            | AtomicOp::Inc
            | AtomicOp::Dec
            | AtomicOp::And
            | AtomicOp::Or
            | AtomicOp::Xor
            | AtomicOp::Exch
            | AtomicOp::Cas
            | AtomicOp::Cast
            | AtomicOp::PreDec
            | AtomicOp::FCmpWr => m,
        };
        let fr = self.b.ins().bitcast(F32X4, le, r);
        let nan = self.b.ins().fcmp(FloatCC::Unordered, fr, fr);
        let canonical = self.vconst([0x7fff_ffff; 4]);
        let r = self.b.ins().bitselect(nan, canonical, r);
        self.vector_ftz(ftz, r)
    }

    /// `v`'s lanes with subnormals flushed to sign-preserving zero as `ftz` says
    /// (`alu.rs`'s `flush_subnormal`, lane by lane).
    fn vector_ftz(&mut self, ftz: Ftz, v: Value) -> Value {
        let flush = |t: &mut Self| {
            let exponent = t.vconst([0x7f80_0000; 4]);
            let sign = t.vconst([0x8000_0000; 4]);
            let zero = t.vconst([0; 4]);
            let e = t.b.ins().band(v, exponent);
            let subnormal = t.b.ins().icmp(IntCC::Equal, e, zero);
            let signed_zero = t.b.ins().band(v, sign);
            t.b.ins().bitselect(subnormal, signed_zero, v)
        };
        match ftz {
            Ftz::Off => v,
            Ftz::On => flush(self),
            Ftz::When(global) => {
                let flushed = flush(self);
                self.b.ins().select(global, flushed, v)
            }
        }
    }
}
