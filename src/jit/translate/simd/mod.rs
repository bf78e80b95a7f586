//! SIMD lanes: the 32-bit integer register work of a fused region, and its load or store (or
//! its two loads, `memory.rs`, or its 32-bit integer or `f32` atomic, `atomic.rs`), run four
//! lanes at a time as Cranelift `i32x4` code instead of one lane at a time.
//!
//! # Where it applies
//!
//! A fused region ([`super::fusion_regions`]) whose every instruction, apart from hoisted
//! warp-invariant writers, has a vector translation ([`vectorisable`]) runs *chunk-major*: a
//! loop over the warp's eight chunks of four lanes runs the whole region for a chunk, then
//! the next chunk. That is lane-major order four lanes at a time, indistinguishable from the
//! scalar region loop and from instruction-major order for the reason fusion is (register
//! instructions are pure work on one lane's registers and predicate bits, and the region's
//! memory access is performed by its lanes in lane order, `memory.rs`). Typical regions
//! are the address arithmetic and the load at a kernel's start and the comparison chains
//! before a branch or an exit.
//!
//! Regions that mix vectorisable instructions with others (a float op, an atomic other than
//! `atomic.rs`'s) stay scalar, and so do regions whose atomic's lanes are unlikely to name
//! adjacent words (`adjacent.rs`). Splitting regions into a vector run and a lane loop (tried
//! first) made `hist_shared` 1.7 × slower and `min64_cas` 12 % slower than vectorising whole
//! regions only, even with the vector run's stores made scalar and its loads removed, so the
//! cost is in the split itself, not in the vector accesses; `docs/performance.md` has the
//! figures.
//!
//! # How a chunk runs
//!
//! * Register `r` of lanes `4k..4k+4` are the 16 bytes at `regs + r * 128 + 16k` of the
//!   register file (the layout is structure-of-arrays), so a register read is one vector load
//!   and a write one vector store. Values written or read earlier in the chunk's pass are
//!   reused from a vector register cache; warp-invariant values hoisted before the region are
//!   splatted, and so are the special registers that are the same for every lane of a warp
//!   (`SR_CTAID.*`, the block and grid shapes, the warp's index and count), read from the
//!   context where an `S2R` of them is not a hoisted writer (its register is written per lane
//!   elsewhere, as NVIDIA's compilers reuse registers), and the constant ones (`SR_SWINHI`,
//!   the high word of a shared variable's generic address, and `SR_CGACTAID`). A unary op (`POPC`, `FLO`, ...) of a
//!   uniform register, an immediate or the constant bank is computed once from one lane's
//!   source and splatted: a uniform register holds one value in all 32 slots (its writes are
//!   broadcast, `ir::Uniform`), so every lane computes the same result. A `NOP` (`BSSY`,
//!   `YIELD`) is part of a region like any register instruction and does nothing.
//! * Only executing lanes change: every register write is a `bitselect` of the new value and
//!   the old under the chunk's lane mask (the region's mask, and the instruction's guard),
//!   built from the chunk's four mask bits. A chunk with no lane in the region's mask is
//!   skipped, so short warps (SIMD8 and SIMD16 vISA kernels) pay only for their lanes. An
//!   unguarded write that need not be stored (a temporary such as an address) skips the blend
//!   and the load of the old value: its vector is *loose*, right in the region's lanes only,
//!   which are the only lanes that read it; a later blend or store completes it first
//!   (`vwrite`, `vread_exact`).
//! * A group of all 32 lanes runs a second copy of the loop, built for the full mask
//!   ([`Translator::vector_loop`]; `translate/mod.rs`'s `VECTOR_MEMORY_LOOPS` limits the
//!   copies of regions with memory): no chunk is skipped, every unguarded write is a plain
//!   store of the new row, a loose value is exact, and the mask tests of the contiguous path
//!   fold to constants. It is most groups of CUDA kernels; `min64_cas` runs 14 % faster.
//!   There the values that are `v + lane * c` (`SR_TID.X`, `SR_LANEID` and wrapping integer
//!   arithmetic on them with invariant operands) are also tracked as a scalar and a stride
//!   (`affine.rs`), which lets a contiguous access continue its run with a scalar compare.
//! * Predicates are the region's lane masks, carried through the chunk loop. Inside a chunk's
//!   pass they are `i32x4` lane masks (`vpred`): a comparison is one vector compare (the high
//!   words of a 64-bit one, `ISETP.EX`, two, combined with the low words' mask), `.AND`,
//!   `.OR` and predicate logic are vector logic, a guard is a vector `and`, and a guarded
//!   predicate write a `bitselect`. At the end of the pass each predicate it wrote goes back
//!   to its mask once (`vflush_preds`: four bits with `vhigh_bits`, one `movmskps`, shifted to
//!   the chunk's place, replacing only the bits of the chunk's lanes of the region's mask).
//! * Operations are exactly the scalar ones lane by lane: wrapping 32-bit add, subtract and
//!   low multiply, bitwise logic, min/max, shifts by an immediate (with the IR's rule for
//!   amounts of 32 or more), integer comparisons, selects, and the 64-bit product and sum of
//!   `IMAD.WIDE`/`.HI` in two `i64x2` halves, the carries of `IADD3` and `LEA` (a count of
//!   the additions that wrapped, accumulated addend by addend), and 64-bit moves, wrapping
//!   adds and subtracts (the low words' carry or borrow, an all-ones compare mask, taken from
//!   the high words), logic and 32 → 64-bit widening on register pairs. Anything else
//!   (floats, division) stays scalar.
//! * Loads and stores: contiguous ones as 16-byte host accesses, loads from a warp-invariant
//!   address once per chunk, the rest lane by lane with the scalar code (`memory.rs`).
//! * 32-bit integer and `f32` atomics through global or generic addresses: four lanes on four
//!   adjacent words as one 16-byte compare-and-swap, the rest lane by lane with the scalar
//!   atomic (`atomic.rs`).
//!
//! `JitOptions::simd` turns it off (`ATOMJIT_SIMD=off`) to compare.

mod adjacent;
mod affine;
mod atomic;
mod memory;

pub(super) use adjacent::adjacent_atomics;
pub(super) use atomic::four_element_float;
pub(super) use memory::{preloadable, Run};

use super::{Translator, REG_ROW_BYTES};
use crate::ir::{
    BinOp, BoolOp, ImadMode, Inst, Kernel, Op, Operand, Pred, PredSrc, Reg, ShfInst, SpecialReg,
    Src, SrcMod, Ty,
};
use crate::jit::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64, I64X2, I8X16};
use cranelift_codegen::ir::{
    Block, BlockArg, ConstantData, Endianness, InstBuilder, MemFlagsData, Value,
};

/// Lanes per vector.
const WIDTH: i64 = 4;

/// Whether `inst` reads `SR_TID.X`.
fn reads_tid_x(inst: &Inst) -> bool {
    matches!(
        inst.op,
        Op::ReadSpecial {
            sr: SpecialReg::TidX,
            ..
        }
    )
}

/// Whether `inst` (already a fusable per-lane instruction, `Fusion::Alu` or `Fusion::Memory`)
/// has a vector translation: 32-bit integer register work (64-bit only in `IMAD.WIDE`/`.HI`,
/// as the high words of a chained comparison, and in moves, wrapping add, subtract and logic
/// on pairs and 32 → 64-bit widening), a unary op of any integer type up to 32
/// bits whose source is the same in every lane of the group, a `NOP`, a plain load or store
/// ([`memory::vector_access`]), or a 32-bit integer or `f32` atomic through a global or
/// generic address ([`atomic::vectorisable_atomic`]); see the module docs. Its guard may be
/// anything.
pub(super) fn vectorisable(kernel: &Kernel, inst: &Inst) -> bool {
    let int32 = |ty: Ty| ty.is_int() && ty.bits() == 32;
    let plain = |s: &Src| s.modifier == SrcMod::None;
    match &inst.op {
        // A value that is the same in every lane of the group (a uniform register holds one
        // value in every slot, see `ir::Uniform`): computed once, splatted.
        Op::Unary { op, ty, a, .. } => {
            ty.is_int()
                && ty.regs() == 1
                && op.result_words(*ty) == 1
                && plain(a)
                && group_uniform(kernel, a.operand)
        }
        Op::Mov { ty, .. } => ty.regs() <= 2,
        // 64-bit wrapping arithmetic and logic, word by word with the carry or borrow between.
        Op::Binary { op, ty, a, b, .. } if ty.is_int() && ty.bits() == 64 => {
            matches!(
                op,
                BinOp::Add | BinOp::Sub | BinOp::And | BinOp::Or | BinOp::Xor
            ) && plain(a)
                && plain(b)
        }
        // Widening a 32-bit integer: the source's sign or zeros above it.
        Op::Convert {
            dst_ty, src_ty, a, ..
        } => dst_ty.is_int() && dst_ty.bits() == 64 && int32(*src_ty) && plain(a),
        Op::Binary { op, ty, b, .. } => {
            int32(*ty)
                && match op {
                    BinOp::Add
                    | BinOp::Sub
                    | BinOp::Mul
                    | BinOp::Min
                    | BinOp::Max
                    | BinOp::And
                    | BinOp::Or
                    | BinOp::Xor => true,
                    BinOp::Shl | BinOp::Shr => matches!(b.operand, Operand::Imm(_)) && plain(b),
                    BinOp::MulHi | BinOp::MulWide | BinOp::Div | BinOp::Rem => false,
                }
        }
        Op::IAdd3 { .. } | Op::Lea { .. } => true,
        // The 64-bit addend of `.HI` and `.WIDE` is read without a modifier.
        Op::Imad { mode, c, .. } => *mode == ImadMode::Lo || plain(c),
        Op::Lop3 { pred_out, .. } => pred_out.is_pt(),
        Op::SetP { cmp, ty, chain, .. } => {
            let signed = ty.is_signed_int();
            int32(*ty)
                && match chain {
                    None => super::alu::int_cc(*cmp, signed).is_some(),
                    Some(_) => super::alu::chained_cc(*cmp, signed).is_some(),
                }
        }
        Op::PredLogic { .. } => true,
        Op::Select { ty, a, b, .. } => int32(*ty) || (ty.bits() == 32 && plain(a) && plain(b)),
        Op::ReadSpecial { sr, .. } => {
            matches!(sr, SpecialReg::TidX | SpecialReg::LaneId)
                || super::alu::warp_uniform_special(*sr).is_some()
                || sr.constant_value().is_some()
        }
        Op::Shf(s) => matches!(s.shift.operand, Operand::Imm(_)) && plain(&s.shift),
        Op::Load { access, .. } | Op::Store { access, .. } => memory::vector_access(access),
        Op::Atomic(a) => atomic::vectorisable_atomic(a),
        Op::Nop => true,
        Op::PredMove(_)
        | Op::Vote { .. }
        | Op::Fence { .. }
        | Op::Barrier { .. }
        | Op::Branch { .. }
        | Op::Exit
        | Op::BranchConverged { .. }
        | Op::WarpSplit { .. }
        | Op::Shfl { .. }
        | Op::Redux { .. }
        | Op::Match { .. }
        | Op::Prmt { .. }
        | Op::Bfe { .. }
        | Op::Bfi { .. }
        | Op::Fma { .. }
        | Op::IsSpace { .. }
        | Op::PackHalves { .. }
        | Op::PackedMinMax { .. }
        | Op::PredLut { .. } => false,
    }
}

/// Whether every lane of a group reads the same value from `operand` whenever the group
/// executes an instruction: an immediate, the constant bank, `RZ`, or a uniform register
/// (whose writes are broadcast to all 32 slots, `ir::Uniform`).
fn group_uniform(kernel: &Kernel, operand: Operand) -> bool {
    match operand {
        Operand::Reg(r) => r.is_rz() || kernel.uniform.has_reg(r),
        Operand::Imm(_) | Operand::Const { .. } => true,
    }
}

/// One chunk of four lanes inside a vector region's loop.
#[derive(Clone, Copy)]
pub(super) struct Chunk {
    /// Address of register 0 of the chunk's first lane: `regs + 16k` (an i64).
    row: Value,
    /// The chunk's first lane, `4k` (an i32): the shift of its bits in a lane mask.
    base: Value,
    /// The chunk's lanes in the region's mask, as an `i32x4` of all-ones or zero lanes.
    lanes: Value,
    /// The same as four mask bits (an i32 in 1..16).
    bits: Value,
    /// The chunk belongs to a whole-warp pass ([`Translator::vector_loop`]): `lanes` and
    /// `bits` are the all-ones constants, so an unguarded write replaces the whole row.
    full: bool,
}

/// What both copies of a vector region's chunk loop are built from.
struct ChunkLoop<'p> {
    /// The instructions the loop runs (the region's, less the hoisted writers).
    pcs: &'p [usize],
    /// The region's predicates, carried through the loop.
    preds: &'p [Pred],
    /// Hoisted warp-invariant values (i32).
    hoisted_values: &'p [(u16, Value)],
    /// The same, splatted (`i32x4`) where the loop reads them.
    hoisted_rows: &'p [(u16, Value)],
    /// The instruction count at the region's entry.
    entry_insts: Value,
    region_start: usize,
    /// Where both copies end, with the predicates' masks.
    exit: Block,
}

impl<'a, 'f> Translator<'a, 'f> {
    /// Runs the instructions `pcs` of a fused region for every lane of the region's mask
    /// (`self.mask`, not empty), four lanes at a time; `preds` are the region's predicates,
    /// whose current masks are in `self.pred_cache` and stay there, updated.
    ///
    /// With `whole_warp_copy`, a group of all 32 lanes (nearly every group of a CUDA
    /// kernel) takes a copy of the chunk loop built for the full mask: no chunk is skipped,
    /// an unguarded register write is a plain store of the new row (no load of the old row,
    /// no blend), and the tests of a chunk's mask fold away. Other masks take the general
    /// loop. `entry`: the instruction count at the region's entry, and its first pc.
    pub(super) fn vector_loop(
        &mut self,
        pcs: &[usize],
        preds: &[Pred],
        hoisted_values: &[(u16, Value)],
        (entry_insts, region_start): (Value, usize),
        whole_warp_copy: bool,
    ) -> Result<(), JitError> {
        let mask = self.mask;
        let exit = self.b.create_block();
        for _ in preds {
            self.b.append_block_param(exit, I32);
        }
        // A load through a warp-invariant address whose address is known before the loop runs
        // once for the warp here, not once per chunk (`memory.rs`, `preload`).
        self.vpreload = None;
        if let Some(pc) = pcs
            .iter()
            .copied()
            .find(|&pc| self.preloadable(&self.kernel.insts[pc]))
        {
            self.pc = pc as u32;
            self.insts = self
                .b
                .ins()
                .iadd_imm_s(entry_insts, (pc - region_start + 1) as i64);
            // With another access in the region, a fault of the preload may not be the first
            // in instruction order: it sends the group to the interpreter instead.
            let other_access = pcs
                .iter()
                .any(|&other| other != pc && super::memory_access(&self.kernel.insts[other].op));
            self.deopt = other_access.then_some((region_start as u32, mask, entry_insts));
            let words = self.preload(&self.kernel.insts[pc], hoisted_values);
            self.deopt = None;
            let rows = words?.into_iter().map(|w| self.vsplat(w)).collect();
            self.vpreload = Some((pc as u32, rows));
        }
        // The hoisted values the loop reads, splatted once here rather than in every chunk.
        let mut hoisted_rows = hoisted_values.to_vec();
        for (r, v) in &mut hoisted_rows {
            if pcs
                .iter()
                .any(|&pc| self.kernel.insts[pc].op.reads_reg(Reg(*r)))
            {
                *v = self.vsplat(*v);
            }
        }
        self.vrun = pcs
            .iter()
            .any(|&pc| self.runs_contiguously(&self.kernel.insts[pc]))
            .then(|| self.start_run());
        let loop_ = ChunkLoop {
            pcs,
            preds,
            hoisted_values,
            hoisted_rows: &hoisted_rows,
            entry_insts,
            region_start,
            exit,
        };
        let mut result = Ok(());
        if whole_warp_copy {
            // Both copies start from the predicates' masks at the region's entry.
            let entry_preds = self.pred_cache.clone();
            let whole = self.b.create_block();
            let partial = self.b.create_block();
            let mut is_whole = self.b.ins().icmp_imm_s(IntCC::Equal, mask, -1);
            // `SR_TID.X` in the copy is the lane's linear index: the warp lies in the first row.
            if pcs.iter().any(|&pc| reads_tid_x(&self.kernel.insts[pc])) {
                let (_, _, in_row) = self.warp_tid_x_row();
                is_whole = self.b.ins().band(is_whole, in_row);
            }
            self.b.ins().brif(is_whole, whole, &[], partial, &[]);
            self.b.switch_to_block(whole);
            let all = self.b.ins().iconst(I32, -1);
            result = self.chunk_loop(&loop_, all, true);
            self.b.switch_to_block(partial);
            self.pred_cache = entry_preds;
        }
        let result = result.and_then(|()| self.chunk_loop(&loop_, mask, false));
        self.vcache.clear();
        self.vhoisted.clear();
        self.vaffine.clear();
        self.vaffine64.clear();
        self.vpreload = None;
        self.vrun = None;
        self.mask = mask;
        result?;

        self.b.switch_to_block(exit);
        let finals = self.b.block_params(exit).to_vec();
        self.set_preds(preds, &finals);
        Ok(())
    }

    /// One copy of a vector region's chunk loop, for the lanes of `mask` (the all-ones
    /// constant when `full`), from the current block to `l.exit`.
    fn chunk_loop(&mut self, l: &ChunkLoop, mask: Value, full: bool) -> Result<(), JitError> {
        let preds = l.preds;
        let head = self.b.create_block();
        let body = self.b.create_block();
        let latch = self.b.create_block();
        self.b.append_block_param(head, I64);
        for blk in [head, latch] {
            for _ in preds {
                self.b.append_block_param(blk, I32);
            }
        }
        let current = |t: &Self| -> Result<Vec<BlockArg>, JitError> {
            Ok(t.carried_preds(preds)?
                .into_iter()
                .map(BlockArg::Value)
                .collect())
        };
        let zero = self.b.ins().iconst(I64, 0);
        let mut args = vec![BlockArg::Value(zero)];
        args.extend(current(self)?);
        self.b.ins().jump(head, &args);

        // head(offset, preds): skip a chunk without a lane of the mask.
        self.b.switch_to_block(head);
        let params = self.b.block_params(head).to_vec();
        let offset = params[0];
        self.set_preds(preds, &params[1..]);
        let off32 = self.b.ins().ireduce(I32, offset);
        let base = self.b.ins().ushr_imm_s(off32, 2);
        let (bits, lanes) = if full {
            self.b.ins().jump(body, &[]);
            self.b.switch_to_block(body);
            (self.b.ins().iconst(I32, 15), self.vconst([u32::MAX; 4]))
        } else {
            let bits = self.chunk_bits(mask, base);
            let skip = current(self)?;
            self.b.ins().brif(bits, body, &[], latch, &skip);
            self.b.switch_to_block(body);
            (bits, self.lane_vector(bits))
        };
        let row = self.b.ins().iadd(self.regs, offset);
        let chunk = Chunk {
            row,
            base,
            lanes,
            bits,
            full,
        };
        self.vcache.clear();
        self.vloose.clear();
        self.vpreds.clear();
        self.vcache.extend_from_slice(l.hoisted_rows);
        self.vhoisted = l.hoisted_values.to_vec();
        self.vaffine.clear();
        self.vaffine64.clear();
        if full {
            // A warp-invariant value is `v + j * 0`.
            self.vaffine
                .extend(l.hoisted_values.iter().map(|&(r, v)| (r, v, 0)));
        }
        l.pcs.iter().try_for_each(|&pc| {
            self.pc = pc as u32;
            self.insts = self
                .b
                .ins()
                .iadd_imm_s(l.entry_insts, (pc - l.region_start + 1) as i64);
            self.mask = mask;
            self.vector_inst(&chunk, &self.kernel.insts[pc])
        })?;
        self.vflush_preds(&chunk)?;
        let out = current(self)?;
        self.b.ins().jump(latch, &out);

        // latch(preds): next chunk.
        self.b.switch_to_block(latch);
        let params = self.b.block_params(latch).to_vec();
        let next = self.b.ins().iadd_imm_s(offset, 16);
        let more = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedLessThan, next, 16 * 8);
        let mut again = vec![BlockArg::Value(next)];
        again.extend(params.iter().map(|&v| BlockArg::Value(v)));
        let done: Vec<BlockArg> = params.iter().map(|&v| BlockArg::Value(v)).collect();
        self.b.ins().brif(more, head, &again, l.exit, &done);
        Ok(())
    }

    /// Makes `values` the current masks of `preds` in the predicate cache.
    fn set_preds(&mut self, preds: &[Pred], values: &[Value]) {
        self.pred_cache = preds
            .iter()
            .map(|p| p.0)
            .zip(values.iter().copied())
            .collect();
    }

    /// The chunk's four bits of lane mask `m` (an i32 in 0..16).
    fn chunk_bits(&mut self, m: Value, base: Value) -> Value {
        let s = self.b.ins().ushr(m, base);
        self.b.ins().band_imm_s(s, 15)
    }

    /// Four mask bits as an `i32x4` of all-ones (bit set) or zero lanes.
    fn lane_vector(&mut self, bits: Value) -> Value {
        let v = self.b.ins().splat(I32X4, bits);
        let weights = self.vconst([1, 2, 4, 8]);
        let picked = self.b.ins().band(v, weights);
        let zero = self.vconst([0; 4]);
        self.b.ins().icmp(IntCC::NotEqual, picked, zero)
    }

    /// The lanes of `chunk` where lane mask `m` is set, as an `i32x4` mask.
    fn mask_vector(&mut self, chunk: &Chunk, m: Value) -> Value {
        let bits = self.chunk_bits(m, chunk.base);
        self.lane_vector(bits)
    }

    /// An `i32x4` constant.
    fn vconst(&mut self, lanes: [u32; 4]) -> Value {
        let bytes: Vec<u8> = lanes.iter().flat_map(|l| l.to_le_bytes()).collect();
        let handle = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(I32X4, handle)
    }

    /// `splat(v)` for an i32 `v`.
    fn vsplat(&mut self, v: Value) -> Value {
        self.b.ins().splat(I32X4, v)
    }

    /// The lane indices of the chunk: `4k + [0, 1, 2, 3]`.
    fn lane_indices(&mut self, chunk: &Chunk) -> Value {
        let iota = self.vconst([0, 1, 2, 3]);
        let base = self.vsplat(chunk.base);
        self.b.ins().iadd(iota, base)
    }

    /// The executing lanes of the current instruction in the chunk (its guard and the mask):
    /// `chunk.lanes` itself when it is unguarded.
    fn exec_vector(&mut self, chunk: &Chunk, inst: &Inst) -> Value {
        if inst.guard.is_always() {
            return chunk.lanes;
        }
        let guard = self.vpred(
            chunk,
            PredSrc {
                pred: inst.guard.pred,
                negate: inst.guard.negate,
            },
        );
        if chunk.full {
            return guard;
        }
        self.b.ins().band(chunk.lanes, guard)
    }

    /// [`Self::exec_vector`] as four mask bits (an i32 in 0..16): from the guard's vector when
    /// the chunk's pass wrote it, else from its mask with scalar code.
    pub(super) fn exec_bits(&mut self, chunk: &Chunk, inst: &Inst) -> Result<Value, JitError> {
        if inst.guard.is_always() {
            return Ok(chunk.bits);
        }
        if self.vpreds.iter().any(|e| e.0 == inst.guard.pred.0 && e.2) {
            let exec = self.exec_vector(chunk, inst);
            return Ok(self.b.ins().vhigh_bits(I32, exec));
        }
        let exec = self.exec_mask(inst.guard)?;
        Ok(self.chunk_bits(exec, chunk.base))
    }

    // ---- registers -----------------------------------------------------------------------

    /// Register `r` of the chunk's four lanes.
    fn vread(&mut self, chunk: &Chunk, r: Reg) -> Value {
        if r.is_rz() {
            return self.vconst([0; 4]);
        }
        if let Some(&(_, v)) = self.vcache.iter().find(|e| e.0 == r.0) {
            if self.b.func.dfg.value_type(v) == I32X4 {
                return v;
            }
            // A hoisted warp-invariant value.
            let v = self.vsplat(v);
            self.vcache_put(r, v);
            return v;
        }
        let flags = self.regs_unaligned();
        let v = self
            .b
            .ins()
            .load(I32X4, flags, chunk.row, i32::from(r.0) * REG_ROW_BYTES);
        self.vcache_put(r, v);
        v
    }

    fn vcache_put(&mut self, r: Reg, v: Value) {
        self.vcache.retain(|e| e.0 != r.0);
        self.vloose.retain(|&e| e != r.0);
        self.vcache.push((r.0, v));
    }

    /// Register `r` of the chunk's four lanes, exact in every lane: a loose value (see
    /// [`Self::vwrite`]) completed with the register file's values outside the chunk's lanes
    /// (nothing in this pass stored `r` there since the loose write, so they are the lanes'
    /// own).
    pub(super) fn vread_exact(&mut self, chunk: &Chunk, r: Reg) -> Value {
        let v = self.vread(chunk, r);
        // In a whole-warp chunk every lane is the region's: a loose value is exact.
        if chunk.full || !self.vloose.contains(&r.0) {
            return v;
        }
        let flags = self.regs_unaligned();
        let row = self
            .b
            .ins()
            .load(I32X4, flags, chunk.row, i32::from(r.0) * REG_ROW_BYTES);
        self.b.ins().bitselect(chunk.lanes, v, row)
    }

    /// Writes `v` to register `r` in the lanes of `exec` (an `i32x4` mask); the others keep
    /// their value. Stored only when something after the region may read it.
    ///
    /// An unguarded write that is not stored skips the blend: its value is *loose*, exact in
    /// the chunk's lanes of the region's mask only. Nothing reads the other lanes: later
    /// instructions of the region execute in the region's lanes only, and the value never
    /// reaches the register file unless completed first ([`Self::vread_exact`], which a
    /// later blend or store uses).
    fn vwrite(&mut self, chunk: &Chunk, r: Reg, exec: Value, v: Value) {
        if r.is_rz() {
            return;
        }
        self.forget_affine(r);
        // A value live after the region is stored even when a later write of the region
        // rewrites it: left loose, the rewrite would reload and blend the row again, which
        // made `hist_shared` 3 % slower (2026-11-25).
        let store = self.store_needed_in(r, false);
        if !store && self.kernel.insts[self.pc as usize].guard.is_always() {
            self.vcache_put(r, v);
            self.vloose.push(r.0);
            return;
        }
        let new = if chunk.full && exec == chunk.lanes {
            // Every lane of the chunk writes: the old row is not needed.
            v
        } else {
            let old = self.vread_exact(chunk, r);
            self.b.ins().bitselect(exec, v, old)
        };
        if store {
            let flags = self.regs_unaligned();
            let at = i32::from(r.0) * REG_ROW_BYTES;
            self.b.ins().store(flags, new, chunk.row, at);
        }
        self.vcache_put(r, new);
    }

    /// Operand `op` (one word) for the chunk's lanes.
    fn voperand(&mut self, chunk: &Chunk, op: Operand) -> Result<Value, JitError> {
        Ok(match op {
            Operand::Reg(r) => self.vread(chunk, r),
            // The scalar reads (immediate, constant bank) are the same for every lane.
            Operand::Imm(_) | Operand::Const { .. } => {
                let v = self.uniform_operand(op, 1)?;
                self.vsplat(v)
            }
        })
    }

    /// Word `w` (0 low, 1 high) of a 64-bit operand for the chunk's lanes.
    fn voperand_word(&mut self, chunk: &Chunk, op: Operand, w: u16) -> Result<Value, JitError> {
        match op {
            Operand::Reg(r) => Ok(self.vread(chunk, r.word(w))),
            Operand::Imm(v) => {
                let word = self.b.ins().iconst(I32, i64::from((v >> (32 * w)) as u32));
                Ok(self.vsplat(word))
            }
            // The bank is little-endian: the high word is the next four bytes.
            Operand::Const { bank, offset } => self.voperand(
                chunk,
                Operand::Const {
                    bank,
                    offset: offset + 4 * u32::from(w),
                },
            ),
        }
    }

    /// Source `s` read as a 32-bit integer, with its modifier (`Not`: complement, `Neg`:
    /// two's complement, `Abs`: wrapping absolute value, `NegAbs`: its negation), as the
    /// scalar `read_src` does for 32-bit integer types.
    fn vsrc(&mut self, chunk: &Chunk, s: &Src) -> Result<Value, JitError> {
        let v = self.voperand(chunk, s.operand)?;
        Ok(self.apply_modifier(v, s.modifier, Ty::U32))
    }

    // ---- predicates ----------------------------------------------------------------------

    /// Predicate source `src` for the chunk's lanes, as an `i32x4` of all-ones lanes where it
    /// is true. A predicate the chunk's pass has not read or written yet comes from its mask;
    /// after that from the chunk's predicate vectors (`self.vpreds`), which hold its value in
    /// the region's lanes (the only lanes that read it).
    fn vpred(&mut self, chunk: &Chunk, src: PredSrc) -> Value {
        let v = if src.pred.is_pt() {
            self.vconst([u32::MAX; 4])
        } else if let Some(&(_, v, _)) = self.vpreds.iter().find(|e| e.0 == src.pred.0) {
            v
        } else {
            let m = self.load_pred(src.pred);
            let v = self.mask_vector(chunk, m);
            self.vpreds.push((src.pred.0, v, false));
            v
        };
        if src.negate {
            self.b.ins().bnot(v)
        } else {
            v
        }
    }

    /// `p = v` (an `i32x4` lane mask) in the chunk's lanes of `exec`; writes to PT vanish.
    /// An unguarded write (`exec` is `chunk.lanes`) replaces the vector: only the region's
    /// lanes read it, and only their bits go back to the mask ([`Self::vflush_preds`]).
    fn vset_pred(&mut self, chunk: &Chunk, p: Pred, exec: Value, v: Value) {
        if p.is_pt() {
            return;
        }
        let new = if exec == chunk.lanes {
            v
        } else {
            let old = self.vpred(
                chunk,
                PredSrc {
                    pred: p,
                    negate: false,
                },
            );
            self.b.ins().bitselect(exec, v, old)
        };
        self.vpreds.retain(|e| e.0 != p.0);
        self.vpreds.push((p.0, new, true));
    }

    /// Writes the predicates the chunk's pass wrote back to the region's masks (in
    /// `self.pred_cache`): the chunk's lanes of the region's mask take their bits, the
    /// others keep theirs. Once per chunk and predicate, not once per write.
    fn vflush_preds(&mut self, chunk: &Chunk) -> Result<(), JitError> {
        let written: Vec<(u16, Value)> = self
            .vpreds
            .iter()
            .filter(|e| e.2)
            .map(|e| (e.0, e.1))
            .collect();
        if written.is_empty() {
            return Ok(());
        }
        let own = self.b.ins().ishl(chunk.bits, chunk.base);
        for (p, v) in written {
            let four = self.b.ins().vhigh_bits(I32, v);
            let bits = self.b.ins().ishl(four, chunk.base);
            let old = self.load_pred(Pred(p));
            let new = self.b.ins().bitselect(own, bits, old);
            match self.pred_cache.iter_mut().find(|e| e.0 == p) {
                Some(e) => e.1 = new,
                None => {
                    return Err(self.internal("a vector predicate write outside the region's set"))
                }
            }
        }
        self.vpreds.clear();
        Ok(())
    }

    /// Carry-in `cin` of `IADD3.X` as an `i32x4` of all-ones lanes where it is set, or `None`
    /// when it is never set (`!PT`).
    fn vcarry_in(&mut self, chunk: &Chunk, cin: PredSrc) -> Result<Option<Value>, JitError> {
        if cin.pred.is_pt() && cin.negate {
            return Ok(None);
        }
        Ok(Some(self.vpred(chunk, cin)))
    }

    /// Source `s` as addends of a sum with carries (the scalar `carry_term`): its 33-bit term
    /// is its 32-bit value, `~x + 1` when negated (so a negated zero carries), added as `~x`
    /// and then one.
    fn vcarry_addends(
        &mut self,
        chunk: &Chunk,
        s: &Src,
        addends: &mut Vec<Value>,
    ) -> Result<(), JitError> {
        let x = self.voperand(chunk, s.operand)?;
        let (w, plus_one) = match s.modifier {
            SrcMod::None => (x, false),
            SrcMod::Not => (self.b.ins().bnot(x), false),
            SrcMod::Neg => (self.b.ins().bnot(x), true),
            SrcMod::Abs => (self.b.ins().iabs(x), false),
            SrcMod::NegAbs => {
                let a = self.b.ins().iabs(x);
                (self.b.ins().bnot(a), true)
            }
        };
        addends.push(w);
        if plus_one {
            let one = self.vconst([1; 4]);
            addends.push(one);
        }
        Ok(())
    }

    /// Carry-in `cin` as an addend (1 in the lanes where it is set), if it can be set.
    fn vcarry_in_addend(
        &mut self,
        chunk: &Chunk,
        cin: PredSrc,
        addends: &mut Vec<Value>,
    ) -> Result<(), JitError> {
        if let Some(ones) = self.vcarry_in(chunk, cin)? {
            let bit = self.vconst([1; 4]);
            addends.push(self.b.ins().band(ones, bit));
        }
        Ok(())
    }

    /// The sum of 32-bit `addends` as the scalar code's wide sum: its low word, and its bits
    /// from 32 up (a count of the additions that wrapped, accumulated addend by addend: an
    /// addition wrapped when the new low word is below the old).
    fn vsum_with_carries(&mut self, addends: Vec<Value>) -> (Value, Value) {
        let mut sum = self.vconst([0; 4]);
        let mut wraps = self.vconst([0; 4]);
        for w in addends {
            let next = self.b.ins().iadd(sum, w);
            // All-ones where the addition wrapped: subtracting counts one.
            let wrapped = self.b.ins().icmp(IntCC::UnsignedLessThan, next, sum);
            wraps = self.b.ins().isub(wraps, wrapped);
            sum = next;
        }
        (sum, wraps)
    }

    /// Writes bit `bit` of the carries `wraps` (bit 32 + `bit` of the sum) to `p` in the lanes
    /// of `exec` (the executing lanes' vector, taken before any of the instruction's predicate
    /// writes: a carry may overwrite its own guard).
    fn vwrite_carry(&mut self, chunk: &Chunk, p: Pred, exec: Value, (wraps, bit): (Value, u32)) {
        if p.is_pt() {
            return;
        }
        let zero = self.vconst([0; 4]);
        let mask = self.vconst([1 << bit; 4]);
        let set = self.b.ins().band(wraps, mask);
        let set = self.b.ins().icmp(IntCC::NotEqual, set, zero);
        self.vset_pred(chunk, p, exec, set);
    }

    /// `IADD3` with carries out, four lanes at a time: exactly the scalar 34-bit sum
    /// (`translate_iadd3`) of the operands' terms and the carries in.
    fn viadd3_carry(&mut self, chunk: &Chunk, inst: &Inst, exec: Value) -> Result<(), JitError> {
        let &Op::IAdd3 {
            dst,
            carry_out,
            a,
            b,
            c,
            carry_in,
        } = &inst.op
        else {
            return Err(self.internal("viadd3_carry on another op"));
        };
        let mut addends = Vec::with_capacity(8);
        for s in &[a, b, c] {
            self.vcarry_addends(chunk, s, &mut addends)?;
        }
        for cin in carry_in {
            self.vcarry_in_addend(chunk, cin, &mut addends)?;
        }
        let (sum, wraps) = self.vsum_with_carries(addends);
        self.vwrite(chunk, dst, exec, sum);
        for (bit, p) in (0..).zip(carry_out) {
            self.vwrite_carry(chunk, p, exec, (wraps, bit));
        }
        Ok(())
    }

    /// `LEA` and `LEA.HI`, four lanes at a time, exactly as `translate_lea`: the low word (or,
    /// with `hi`, the high word) of `(c:a) << shift`, plus `b`'s term and the carry in; the
    /// carry out is bit 32 of that sum.
    fn vlea(&mut self, chunk: &Chunk, inst: &Inst, exec: Value) -> Result<(), JitError> {
        let &Op::Lea {
            hi,
            sx32,
            dst,
            carry_out,
            a,
            b,
            c,
            shift,
            carry_in,
        } = &inst.op
        else {
            return Err(self.internal("vlea on another op"));
        };
        let shift = u32::from(shift);
        let va = self.vsrc(chunk, &a)?;
        let shifted = if hi {
            // `.SX32`: the high word is the sign extension of `a`.
            let vc = if sx32 {
                self.b.ins().sshr_imm_s(va, 31)
            } else {
                self.vsrc(chunk, &c)?
            };
            // hi32((c:a) << shift): the bits of `a` shifted out land in the high word (none
            // for a shift of 0: `vshift` makes a shift by 32 zero).
            let high = self.vshift(true, false, vc, shift);
            let out = self.vshift(false, false, va, 32 - shift);
            self.b.ins().bor(high, out)
        } else {
            self.vshift(true, false, va, shift)
        };
        let mut addends = vec![shifted];
        self.vcarry_addends(chunk, &b, &mut addends)?;
        self.vcarry_in_addend(chunk, carry_in, &mut addends)?;
        let (sum, wraps) = self.vsum_with_carries(addends);
        self.vwrite(chunk, dst, exec, sum);
        self.vwrite_carry(chunk, carry_out, exec, (wraps, 0));
        Ok(())
    }

    // ---- instructions --------------------------------------------------------------------

    /// One vectorisable instruction ([`vectorisable`]) for the chunk's lanes, and the
    /// lane-affine form of its result (`affine.rs`).
    fn vector_inst(&mut self, chunk: &Chunk, inst: &Inst) -> Result<(), JitError> {
        if inst.guard.is_never() {
            return Ok(());
        }
        let exec = self.exec_vector(chunk, inst);
        // The lane-affine form of the result, from the sources' before the write.
        let affine = self.affine_result(chunk, inst)?;
        self.vector_op(chunk, inst, exec)?;
        if let Some(affine) = affine {
            self.note_affine(affine);
        }
        Ok(())
    }

    /// The vector translation of `inst`, executing in the lanes of `exec`. Only vectorisable
    /// instructions come here, and `vectorisable` is the one exhaustive list of ops: the last
    /// arm is a wildcard.
    #[allow(clippy::wildcard_enum_match_arm)]
    fn vector_op(&mut self, chunk: &Chunk, inst: &Inst, exec: Value) -> Result<(), JitError> {
        match &inst.op {
            Op::Nop => {}
            &Op::Unary { op, ty, dst, a } => {
                // Its source is the same in every lane (`vectorisable`): one lane's result,
                // splatted.
                let row = self.vsrc(chunk, &a)?;
                let word = self.b.ins().extractlane(row, 0);
                let v = self.narrow(word, ty);
                let r = self.unary_value(op, ty, v);
                let r = self.vsplat(r);
                self.vwrite(chunk, dst, exec, r);
            }
            &Op::Mov { ty, dst, src } if ty.regs() == 2 => {
                let lo = self.voperand_word(chunk, src, 0)?;
                let hi = self.voperand_word(chunk, src, 1)?;
                self.vwrite(chunk, dst, exec, lo);
                self.vwrite(chunk, dst.word(1), exec, hi);
            }
            &Op::Mov { dst, src, .. } => {
                let v = self.voperand(chunk, src)?;
                self.vwrite(chunk, dst, exec, v);
            }
            &Op::Convert { src_ty, dst, a, .. } => {
                // Int to int: the source extended by its own signedness (`sem::convert`).
                let lo = self.voperand(chunk, a.operand)?;
                let hi = if src_ty.is_signed_int() {
                    self.b.ins().sshr_imm_s(lo, 31)
                } else {
                    self.vconst([0; 4])
                };
                self.vwrite(chunk, dst, exec, lo);
                self.vwrite(chunk, dst.word(1), exec, hi);
            }
            &Op::Binary {
                op, ty, dst, a, b, ..
            } if ty.bits() == 64 => {
                let [a_lo, a_hi, b_lo, b_hi] = [(a, 0), (a, 1), (b, 0), (b, 1)]
                    .map(|(s, w)| self.voperand_word(chunk, s.operand, w));
                let (a_lo, a_hi, b_lo, b_hi) = (a_lo?, a_hi?, b_lo?, b_hi?);
                let (lo, hi) = match op {
                    BinOp::Add => {
                        let lo = self.b.ins().iadd(a_lo, b_lo);
                        // All-ones lanes where the low words wrapped: subtracting adds one.
                        let carry = self.b.ins().icmp(IntCC::UnsignedLessThan, lo, a_lo);
                        let hi = self.b.ins().iadd(a_hi, b_hi);
                        (lo, self.b.ins().isub(hi, carry))
                    }
                    BinOp::Sub => {
                        let lo = self.b.ins().isub(a_lo, b_lo);
                        let borrow = self.b.ins().icmp(IntCC::UnsignedLessThan, a_lo, b_lo);
                        let hi = self.b.ins().isub(a_hi, b_hi);
                        (lo, self.b.ins().iadd(hi, borrow))
                    }
                    BinOp::And => (self.b.ins().band(a_lo, b_lo), self.b.ins().band(a_hi, b_hi)),
                    BinOp::Or => (self.b.ins().bor(a_lo, b_lo), self.b.ins().bor(a_hi, b_hi)),
                    BinOp::Xor => (self.b.ins().bxor(a_lo, b_lo), self.b.ins().bxor(a_hi, b_hi)),
                    _ => return Err(self.internal("a 64-bit binary op without a vector form")),
                };
                self.vwrite(chunk, dst, exec, lo);
                self.vwrite(chunk, dst.word(1), exec, hi);
            }
            &Op::Binary {
                op, ty, dst, a, b, ..
            } => {
                let va = self.vsrc(chunk, &a)?;
                let signed = ty.is_signed_int();
                let shift_by = |t: &Self| match b.operand {
                    Operand::Imm(amount) => Ok(amount as u32),
                    Operand::Reg(_) | Operand::Const { .. } => {
                        Err(t.internal("a vector shift by a register"))
                    }
                };
                let r = match op {
                    BinOp::Shl => {
                        let n = shift_by(self)?;
                        self.vshift(true, signed, va, n)
                    }
                    BinOp::Shr => {
                        let n = shift_by(self)?;
                        self.vshift(false, signed, va, n)
                    }
                    BinOp::MulHi | BinOp::MulWide | BinOp::Div | BinOp::Rem => {
                        return Err(self.internal("a binary op without a vector form"))
                    }
                    BinOp::Add
                    | BinOp::Sub
                    | BinOp::Mul
                    | BinOp::Min
                    | BinOp::Max
                    | BinOp::And
                    | BinOp::Or
                    | BinOp::Xor => {
                        let vb = self.vsrc(chunk, &b)?;
                        match op {
                            BinOp::Add => self.b.ins().iadd(va, vb),
                            BinOp::Sub => self.b.ins().isub(va, vb),
                            BinOp::Mul => self.b.ins().imul(va, vb),
                            BinOp::Min if signed => self.b.ins().smin(va, vb),
                            BinOp::Min => self.b.ins().umin(va, vb),
                            BinOp::Max if signed => self.b.ins().smax(va, vb),
                            BinOp::Max => self.b.ins().umax(va, vb),
                            BinOp::And => self.b.ins().band(va, vb),
                            BinOp::Or => self.b.ins().bor(va, vb),
                            BinOp::Xor => self.b.ins().bxor(va, vb),
                            BinOp::MulHi
                            | BinOp::MulWide
                            | BinOp::Div
                            | BinOp::Rem
                            | BinOp::Shl
                            | BinOp::Shr => {
                                return Err(self.internal("a binary op without a vector form"))
                            }
                        }
                    }
                };
                self.vwrite(chunk, dst, exec, r);
            }
            &Op::IAdd3 {
                dst,
                carry_out,
                a,
                b,
                c,
                carry_in,
            } => {
                if carry_out.iter().all(|p| p.is_pt()) {
                    // Modulo 2^32, a negated addend `~x + 1` is `-x`: the carry-free sum.
                    let mut sum = self.vsrc(chunk, &a)?;
                    for s in [b, c] {
                        let v = self.vsrc(chunk, &s)?;
                        sum = self.b.ins().iadd(sum, v);
                    }
                    for cin in carry_in {
                        if let Some(ones) = self.vcarry_in(chunk, cin)? {
                            // All-ones lanes where the carry is set: subtracting adds one.
                            sum = self.b.ins().isub(sum, ones);
                        }
                    }
                    self.vwrite(chunk, dst, exec, sum);
                } else {
                    self.viadd3_carry(chunk, inst, exec)?;
                }
            }
            Op::Lea { .. } => self.vlea(chunk, inst, exec)?,
            &Op::Imad {
                mode: ImadMode::Lo,
                dst,
                a,
                b,
                c,
                ..
            } => {
                let va = self.vsrc(chunk, &a)?;
                let vb = self.vsrc(chunk, &b)?;
                let vc = self.vsrc(chunk, &c)?;
                let p = self.b.ins().imul(va, vb);
                let r = self.b.ins().iadd(p, vc);
                self.vwrite(chunk, dst, exec, r);
            }
            &Op::Imad {
                mode,
                signed,
                dst,
                a,
                b,
                c,
            } => {
                let [lo, hi] = self.vimad_wide(chunk, signed, &a, &b, c.operand)?;
                if mode == ImadMode::Wide {
                    self.vwrite(chunk, dst, exec, lo);
                    self.vwrite(chunk, dst.word(1), exec, hi);
                } else {
                    self.vwrite(chunk, dst, exec, hi);
                }
            }
            Op::Load { access, dst } => self.vector_load(chunk, inst, access, *dst)?,
            Op::Store { access, src } => self.vector_store(chunk, inst, access, *src)?,
            Op::Atomic(a) => self.vector_atomic(chunk, inst, a)?,
            &Op::Lop3 {
                dst, a, b, c, lut, ..
            } => {
                let va = self.vsrc(chunk, &a)?;
                let vb = self.vsrc(chunk, &b)?;
                let vc = self.vsrc(chunk, &c)?;
                let r = self.lop3_value(lut, va, vb, vc);
                self.vwrite(chunk, dst, exec, r);
            }
            &Op::SetP {
                cmp,
                ty,
                combine,
                dst,
                dst2,
                a,
                b,
                c,
                chain,
            } => {
                let signed = ty.is_signed_int();
                let va = self.vsrc(chunk, &a)?;
                let vb = self.vsrc(chunk, &b)?;
                let res = match chain {
                    None => {
                        let cc = super::alu::int_cc(cmp, signed).ok_or_else(|| {
                            self.internal("a vector comparison without a condition")
                        })?;
                        self.b.ins().icmp(cc, va, vb)
                    }
                    // The high words of a wider comparison (`ISETP.EX`), as the scalar
                    // translation combines them, lane for lane.
                    Some(low) => {
                        let cc = super::alu::chained_cc(cmp, signed).ok_or_else(|| {
                            self.internal("a chained comparison without a condition")
                        })?;
                        let main = self.b.ins().icmp(cc, va, vb);
                        let equal = self.b.ins().icmp(IntCC::Equal, va, vb);
                        let low = self.vpred(chunk, low);
                        self.chained_result(cmp, main, equal, low)
                    }
                };
                // `.AND PT`, the plain comparison, needs no logic.
                let plain = combine == BoolOp::And && c == PredSrc::TRUE;
                let cv = (!plain).then(|| self.vpred(chunk, c));
                if !dst.is_pt() {
                    let d1 = cv.map_or(res, |cv| self.bool_op(combine, res, cv));
                    self.vset_pred(chunk, dst, exec, d1);
                }
                if !dst2.is_pt() {
                    let not_res = self.b.ins().bnot(res);
                    let d2 = cv.map_or(not_res, |cv| self.bool_op(combine, not_res, cv));
                    self.vset_pred(chunk, dst2, exec, d2);
                }
            }
            &Op::PredLogic { op, dst, a, b } => {
                let av = self.vpred(chunk, a);
                let bv = self.vpred(chunk, b);
                let r = self.bool_op(op, av, bv);
                self.vset_pred(chunk, dst, exec, r);
            }
            &Op::Select {
                dst, a, b, pred, ..
            } => {
                let va = self.vsrc(chunk, &a)?;
                let vb = self.vsrc(chunk, &b)?;
                let pv = self.vpred(chunk, pred);
                let r = self.b.ins().bitselect(pv, va, vb);
                self.vwrite(chunk, dst, exec, r);
            }
            &Op::ReadSpecial { dst, sr } => {
                let v = self.vspecial(chunk, sr)?;
                self.vwrite(chunk, dst, exec, v);
            }
            Op::Shf(s) => {
                let v = self.vshf(chunk, s)?;
                self.vwrite(chunk, s.dst, exec, v);
            }
            _ => return Err(self.internal("an instruction without a vector form")),
        }
        Ok(())
    }

    /// The 64-bit `a * b + c` of `IMAD.WIDE` and `IMAD.HI` for the chunk's lanes, as its low
    /// and high words: the factors extended to 64 bits (by sign when `signed`), multiplied and
    /// added in two `i64x2` halves, the addend `c` a register pair or a uniform 64-bit value.
    fn vimad_wide(
        &mut self,
        chunk: &Chunk,
        signed: bool,
        a: &Src,
        b: &Src,
        c: Operand,
    ) -> Result<[Value; 2], JitError> {
        let va = self.vsrc(chunk, a)?;
        let vb = self.vsrc(chunk, b)?;
        let widen = |t: &mut Self, v: Value, high: bool| match (signed, high) {
            (false, false) => t.b.ins().uwiden_low(v),
            (false, true) => t.b.ins().uwiden_high(v),
            (true, false) => t.b.ins().swiden_low(v),
            (true, true) => t.b.ins().swiden_high(v),
        };
        let (c01, c23) = match c {
            Operand::Reg(r) => {
                let lo = self.vread(chunk, r);
                let hi = self.vread(chunk, r.word(1));
                let c01 = self.vpick(lo, hi, [0, 4, 1, 5]);
                let c23 = self.vpick(lo, hi, [2, 6, 3, 7]);
                (self.as_i64x2(c01), self.as_i64x2(c23))
            }
            Operand::Imm(_) | Operand::Const { .. } => {
                let v = self.uniform_operand(c, 2)?;
                let v = self.b.ins().splat(I64X2, v);
                (v, v)
            }
        };
        // Lanes 0 and 1, then lanes 2 and 3.
        let a01 = widen(self, va, false);
        let b01 = widen(self, vb, false);
        let a23 = widen(self, va, true);
        let b23 = widen(self, vb, true);
        let p01 = self.b.ins().imul(a01, b01);
        let p23 = self.b.ins().imul(a23, b23);
        let s01 = self.b.ins().iadd(p01, c01);
        let s23 = self.b.ins().iadd(p23, c23);
        let lo = self.vpick(s01, s23, [0, 2, 4, 6]);
        let hi = self.vpick(s01, s23, [1, 3, 5, 7]);
        Ok([lo, hi])
    }

    /// The 32-bit words `idx` (each 0..8) of the eight words of `a` then `b` (any 128-bit
    /// vectors, in little-endian lane order), as an `i32x4`.
    fn vpick(&mut self, a: Value, b: Value, idx: [u8; 4]) -> Value {
        let le = MemFlagsData::new().with_endianness(Endianness::Little);
        let bytes_of = |t: &mut Self, v: Value| {
            if t.b.func.dfg.value_type(v) == I8X16 {
                v
            } else {
                t.b.ins().bitcast(I8X16, le, v)
            }
        };
        let a = bytes_of(self, a);
        let b = bytes_of(self, b);
        let lanes: Vec<u8> = idx
            .iter()
            .flat_map(|&w| (0..4).map(move |k| w * 4 + k))
            .collect();
        let mask = self.b.func.dfg.immediates.push(ConstantData::from(lanes));
        let picked = self.b.ins().shuffle(a, b, mask);
        self.b.ins().bitcast(I32X4, le, picked)
    }

    /// An `i32x4` viewed as an `i64x2` (word pairs, low word first).
    fn as_i64x2(&mut self, v: Value) -> Value {
        let le = MemFlagsData::new().with_endianness(Endianness::Little);
        self.b.ins().bitcast(I64X2, le, v)
    }

    /// `v << amount` or `v >> amount` by an immediate: amounts of 32 or more give 0, or the
    /// sign fill for an arithmetic right shift (`BinOp::Shl`, `BinOp::Shr`).
    fn vshift(&mut self, left: bool, signed: bool, v: Value, amount: u32) -> Value {
        match (left, signed) {
            (true, _) | (false, false) if amount >= 32 => self.vconst([0; 4]),
            (true, _) => self.b.ins().ishl_imm_s(v, i64::from(amount)),
            (false, false) => self.b.ins().ushr_imm_s(v, i64::from(amount)),
            (false, true) => self.b.ins().sshr_imm_s(v, i64::from(amount.min(31))),
        }
    }

    /// `SHF` by an immediate amount: the low or high word of the 64-bit `hi:lo` shifted, with
    /// the amount clamped (or masked by `.W`) as the scalar translation does.
    fn vshf(&mut self, chunk: &Chunk, s: &ShfInst) -> Result<Value, JitError> {
        let Operand::Imm(raw) = s.shift.operand else {
            return Err(self.internal("a vector SHF by a register"));
        };
        let raw = raw as u32;
        let wide = s.ty.bits() == 64;
        let signed = !s.left && s.ty.is_signed_int();
        let amount = match (wide, s.wrap) {
            (true, true) => raw & 63,
            (true, false) if raw >= 64 && !signed => {
                // Everything shifted out.
                return Ok(self.vconst([0; 4]));
            }
            (true, false) => raw.min(63),
            (false, true) => raw & 31,
            (false, false) => raw.min(32),
        };
        let lo = self.vsrc(chunk, &s.lo)?;
        let hi = self.vsrc(chunk, &s.hi)?;
        let n = i64::from(amount);
        let shl = |t: &mut Self, v: Value, by: i64| t.b.ins().ishl_imm_s(v, by);
        let ushr = |t: &mut Self, v: Value, by: i64| t.b.ins().ushr_imm_s(v, by);
        // The word of `hi:lo` shifted by `n` (0..=63) that `.HI` selects or not.
        Ok(match (s.left, s.high) {
            _ if n == 0 => {
                if s.high {
                    hi
                } else {
                    lo
                }
            }
            (true, false) if n >= 32 => self.vconst([0; 4]),
            (true, false) => shl(self, lo, n),
            (true, true) if n >= 32 => shl(self, lo, n - 32),
            (true, true) => {
                let h = shl(self, hi, n);
                let l = ushr(self, lo, 32 - n);
                self.b.ins().bor(h, l)
            }
            (false, false) if n >= 32 => {
                if signed {
                    self.b.ins().sshr_imm_s(hi, (n - 32).min(31))
                } else {
                    ushr(self, hi, n - 32)
                }
            }
            (false, false) => {
                let l = ushr(self, lo, n);
                let h = shl(self, hi, 32 - n);
                self.b.ins().bor(l, h)
            }
            (false, true) if signed => self.b.ins().sshr_imm_s(hi, n.min(31)),
            (false, true) if n >= 32 => self.vconst([0; 4]),
            (false, true) => ushr(self, hi, n),
        })
    }

    /// `SR_TID.X`, `SR_LANEID` and the warp-uniform special registers for the chunk's lanes.
    fn vspecial(&mut self, chunk: &Chunk, sr: SpecialReg) -> Result<Value, JitError> {
        if let Some(offset) = super::alu::warp_uniform_special(sr) {
            // The same for every lane of the warp: the context's field, splatted (the scalar
            // translation loads the same field for each lane).
            let v = self
                .b
                .ins()
                .load(I32, self.flags.state_const, self.ctx, offset);
            return Ok(self.vsplat(v));
        }
        if let Some(c) = sr.constant_value() {
            // `SR_SWINHI` (ptxas's generic address of a shared variable) and the cluster rank.
            return Ok(self.vconst([c; 4]));
        }
        let lanes = self.lane_indices(chunk);
        match sr {
            SpecialReg::LaneId => Ok(lanes),
            SpecialReg::TidX => {
                // `(warp_id * warp_size + lane) % ntid.x`, without the division when the whole
                // warp lies in the first row (as the scalar translation does).
                let (first, ntx, in_row) = self.warp_tid_x_row();
                let firsts = self.vsplat(first);
                let linear = self.b.ins().iadd(firsts, lanes);
                if chunk.full {
                    // The whole-warp copy runs only when the warp lies in the first row.
                    return Ok(linear);
                }
                let slow = self.b.create_block();
                let join = self.b.create_block();
                self.b.append_block_param(join, I32X4);
                self.b
                    .ins()
                    .brif(in_row, join, &[BlockArg::Value(linear)], slow, &[]);
                self.b.switch_to_block(slow);
                self.b.set_cold_block(slow);
                // `ntid.x` is at least 1 (ensured by `run_group`): no division by zero.
                let mut v = linear;
                for i in 0..WIDTH as u8 {
                    let l = self.b.ins().extractlane(linear, i);
                    let r = self.b.ins().urem(l, ntx);
                    v = self.b.ins().insertlane(v, r, i);
                }
                self.b.ins().jump(join, &[BlockArg::Value(v)]);
                self.b.switch_to_block(join);
                Ok(self.b.block_params(join)[0])
            }
            SpecialReg::TidY
            | SpecialReg::TidZ
            | SpecialReg::CtaIdX
            | SpecialReg::CtaIdY
            | SpecialReg::CtaIdZ
            | SpecialReg::NTidX
            | SpecialReg::NTidY
            | SpecialReg::NTidZ
            | SpecialReg::NCtaIdX
            | SpecialReg::NCtaIdY
            | SpecialReg::NCtaIdZ
            | SpecialReg::WarpId
            | SpecialReg::NWarpId
            | SpecialReg::LanemaskEq
            | SpecialReg::LanemaskLt
            | SpecialReg::LanemaskLe
            | SpecialReg::LanemaskGt
            | SpecialReg::LanemaskGe
            | SpecialReg::ClusterCtaRank
            | SpecialReg::SharedWindowHi => {
                Err(self.internal("a special register without a vector form"))
            }
        }
    }
}
