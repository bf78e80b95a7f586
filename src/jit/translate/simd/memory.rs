//! SIMD lanes' memory access: the load or store of a vectorised region (`mod.rs`), for a chunk
//! of four lanes, and the contiguous test its atomic shares (`atomic.rs`).
//!
//! A fused region holds one memory access ([`super::fusion_regions`]), so running it
//! chunk-major performs the lanes' accesses in lane order, as the scalar region loop does; or
//! two loads, one of them through a warp-invariant address and loaded before the loop (below,
//! "Uniform address"), so the other's are in lane order again. Each
//! chunk takes one of three paths, and each path performs exactly the accesses (and the trap)
//! that the four lanes would perform one after the other:
//!
//! * **Contiguous** (a weak 32- or 64-bit access through a register address, every lane of
//!   the chunk executing): when the four lanes' addresses are `a, a + s, a + 2s, a + 3s` for
//!   the access size `s` (tested at run time on the address vectors, without a wrap of the low
//!   word), the first and the last lane's accesses both pass the scalar check (alignment and
//!   range) and their host pointers are `3s` apart (so a generic access does not straddle the
//!   shared window and the global arena), then every lane's access is in range and aligned,
//!   and one 16-byte host access (two for 64-bit lanes, with the words interleaved or
//!   separated by a shuffle) does the four. The elements are naturally aligned, so a host
//!   access split at a cache-line boundary never splits an element; only weak accesses take
//!   this path (a weak access promises no single-copy atomicity in the PTX model; relaxed
//!   ones go lane by lane). An atomic's chunks (`atomic.rs`) take the same test and runs with
//!   the host pointer 16-byte aligned as well (its `lock cmpxchg16b` needs it), after a first
//!   compare of lane 3's low word with lane 0's, which scattered addresses fail.
//!
//!   That test is some forty instructions, and in the common case (`a[blockIdx.x *
//!   blockDim.x + threadIdx.x]`) every chunk of the warp passes it. So the region's loop
//!   carries a [`Run`]: after a chunk passes, the address words the next chunk must have to
//!   continue it (each lane's plus `4s`), its host pointer, and how far the run may still
//!   grow (the bytes left in the window after lane 3's element, and before lane 3's low
//!   word would wrap). A chunk whose lanes all execute, whose address words equal the
//!   expected ones and with room for four more elements is the previous chunk's four
//!   elements moved by `4s`: inside the window, aligned, contiguous on the host. That costs
//!   a compare of the room, one vector test of the address words (`xor`, `or`, `ptest`) and
//!   the full-mask compare; any other chunk takes the full test, which starts a new run when
//!   it passes. In a whole-warp chunk whose address register is lane-affine with the access
//!   size as stride (`affine.rs`), the vector test is a scalar one: its lane 0 address
//!   against the run's (`Run::first`), so the address vectors are built only on the slow
//!   paths.
//! * **Uniform address** (a load whose address registers are warp-invariant,
//!   `valid/uniform.rs`): one scalar load for the chunk's lowest executing lane, its value
//!   given to every executing lane; when the load is unguarded, one scalar load for the
//!   region's lowest lane before the chunk loop serves every chunk ([`Translator::preload`]).
//!   Lane-order execution with no other thread's access between the lanes' loads gives the
//!   same result, and that interleaving is always possible; a fault is the lowest lane's, as
//!   in lane order. When the region holds another load, the preload runs before that one's
//!   lanes: loads change no memory, so this is again an interleaving of the threads, but a
//!   fault of the preload may come after one of the other load's in instruction order, so
//!   it returns `Event::Interpret` at the region's first pc instead of trapping, and the
//!   interpreter runs the group from there and reports the fault that comes first.
//! * **Lane by lane** otherwise (scattered addresses, a partial chunk, a failed test above):
//!   the scalar code of the access ([`Translator::load_lane`], [`Translator::store_lane`])
//!   for each of the four lanes in order, each under its own mask bit, reading its registers
//!   out of the chunk's vectors. A faulting lane traps with exactly the lanes before it done.

use super::super::invariant::address_invariant;
use super::super::{Lane, Translator, REG_ROW_BYTES};
use super::Chunk;
use crate::ir::{Address, Inst, LinearForm, MemAccess, MemOrder, Op, Operand, Reg, Space, Ty, Use};
use crate::jit::JitError;
use crate::valid::KernelInfo;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{
    Block, BlockArg, InstBuilder, InstructionData, Opcode, Value, ValueDef,
};
use cranelift_frontend::Variable;

/// Whether `inst`, a load of a vectorised region, can load once for the warp before the
/// region's loop ([`Translator::preload`]): an unguarded vector load through a warp-invariant
/// address. Its address registers are known before the loop: a warp-invariant register is
/// written once, by a definition that dominates every read, so it is either one of the
/// region's hoisted writers (run before the loop) or in the register file already, the same
/// in every lane's slot.
pub(in super::super) fn preloadable(info: &KernelInfo, inst: &Inst) -> bool {
    let Op::Load { access, .. } = &inst.op else {
        return false;
    };
    inst.guard.is_always() && vector_access(access) && uniform_address(info, access)
}

/// Whether a load of `access` takes the uniform-address path: its address registers are
/// warp-invariant (`valid/uniform.rs`).
fn uniform_address(info: &KernelInfo, access: &MemAccess) -> bool {
    address_invariant(info.invariant(), &access.addr)
}

/// Whether a load or store of `access` has a vector translation: a plain (weak or relaxed)
/// access through a linear or indexed address, of any type but `b128`.
pub(super) fn vector_access(access: &MemAccess) -> bool {
    matches!(access.order, MemOrder::Weak | MemOrder::Relaxed)
        && access.addr.surface().is_none()
        && access.ty != Ty::B128
}

/// A per-lane address the contiguous path can test: lane `l`'s address is
/// `(hi:lo + add64)` with `lo = base[l] + add32 mod 2^32` and `hi = base.word(1)[l]` for a
/// pair (0 otherwise): [`LinearForm`] without its constant case.
#[derive(Clone, Copy)]
pub(super) struct RegisterAddress {
    pub(super) base: Reg,
    pair: bool,
    add32: u32,
    add64: u64,
}

/// The run of contiguous chunks a region's access is in, carried from chunk to chunk of the
/// region's loop in Cranelift variables (see the module docs). When `room` is at least four
/// elements, a chunk whose lanes all execute with address words `lo` (and `hi` for a pair)
/// accesses the four elements at host pointer `host`, all inside the window and aligned.
#[derive(Clone, Copy)]
pub(in crate::jit::translate) struct Run {
    /// The low address words (after `add32`) of the chunk that would continue the run.
    lo: Variable,
    /// Their high words (a pair's).
    hi: Variable,
    /// The host pointer of that chunk's lane 0.
    host: Variable,
    /// That chunk's lane 0 address as its register holds it (an i64: the pair, or the
    /// zero-extended word after `add32`), for chunks with a lane-affine address
    /// (`affine.rs`).
    first: Variable,
    /// How many bytes the run may still grow by (negative: no run): no more than the bytes
    /// before lane 3's low word wraps, nor than the bytes the window holds after its element.
    room: Variable,
}

/// The outcome of [`Translator::contiguous_test`].
struct ContiguousTest {
    /// Non-zero (an i8) when the chunk may take the contiguous path.
    ok: Value,
    /// The host pointer of lane 0's access (meaningless unless `ok`).
    host: Value,
    /// The device address of lane 3's access.
    a3: Value,
}

/// The address of `access` when it may take the contiguous path (see the module docs): weak,
/// one 32- or 64-bit element or two 32-bit ones per lane, outside the constant bank, through a
/// register.
fn contiguous_form(access: &MemAccess) -> Option<RegisterAddress> {
    let sized = matches!(access.ty.bits(), 32 | 64) && matches!(access.bytes(), 4 | 8);
    if access.order != MemOrder::Weak || access.space == Space::Const || !sized {
        return None;
    }
    register_address(access)
}

/// The address of `access` as a [`RegisterAddress`], or `None` for an absolute address or one
/// that is not linear.
pub(super) fn register_address(access: &MemAccess) -> Option<RegisterAddress> {
    let Address::Linear(linear) = &access.addr else {
        return None;
    };
    let (base, pair, add32, add64) = match linear.form(access.space) {
        LinearForm::Absolute(_) => return None,
        LinearForm::Wrap32 { base, offset } => (base, false, offset, 0),
        LinearForm::Extend32 { base, offset } => (base, false, 0, offset),
        LinearForm::Pair64 { base, offset } => (base, true, 0, offset),
    };
    Some(RegisterAddress {
        base,
        pair,
        add32,
        add64,
    })
}

/// `values` as block arguments.
fn block_args(values: &[Value]) -> Vec<BlockArg> {
    values.iter().map(|&v| BlockArg::Value(v)).collect()
}

/// The register words `inst` reads (RZ left out).
fn read_words(inst: &Inst) -> Vec<Reg> {
    let mut regs = Vec::new();
    inst.op.for_each_use(|u| {
        if let Use::Src {
            operand: Operand::Reg(reg),
            words,
        } = u
        {
            regs.extend((0..words).map(|w| reg.word(w)).filter(|r| !r.is_rz()));
        }
    });
    regs.dedup();
    regs
}

impl<'a, 'f> Translator<'a, 'f> {
    /// A vectorisable load ([`vector_access`]) into `dst` for the chunk's lanes.
    pub(super) fn vector_load(
        &mut self,
        chunk: &Chunk,
        inst: &Inst,
        access: &MemAccess,
        dst: Reg,
    ) -> Result<(), JitError> {
        let bits = self.exec_bits(chunk, inst)?;
        let rows = if self.uniform_address(access) {
            self.uniform_load(chunk, inst, access, bits)?
        } else {
            self.chunk_load(chunk, inst, access, bits)?
        };
        let lanes = if inst.guard.is_always() {
            chunk.lanes
        } else {
            self.lane_vector(bits)
        };
        for (w, row) in (0..).zip(rows) {
            self.vwrite(chunk, dst.word(w), lanes, row);
        }
        Ok(())
    }

    /// Whether `inst` loads once for the warp before its region's loop ([`preloadable`]).
    pub(super) fn preloadable(&self, inst: &Inst) -> bool {
        preloadable(self.info, inst)
    }

    /// The words of a [`Self::preloadable`] load, loaded once for the region's lowest lane
    /// before the chunk loop. The region's lanes (`self.mask`, not empty) are the load's. When
    /// the region holds no other access, this is the chunks' loads with no other access
    /// between them, which lane order allows, and a fault is the lowest lane's, as in lane
    /// order (the region's register work before the load cannot fault, and a trapped launch
    /// does not expose registers). When it holds another load, the caller sets `deopt` and a
    /// fault returns `Event::Interpret` instead (see the module docs).
    pub(super) fn preload(
        &mut self,
        inst: &Inst,
        hoisted: &[(u16, Value)],
    ) -> Result<Vec<Value>, JitError> {
        let Op::Load { access, .. } = &inst.op else {
            return Err(self.internal("preload of an instruction that is not a load"));
        };
        let lane = self.lane_at(self.mask);
        // The hoisted writers' values; other address registers come from the lane's slots.
        self.reg_cache = hoisted
            .iter()
            .copied()
            .filter(|e| read_words(inst).iter().any(|r| r.0 == e.0))
            .collect();
        let elements = self.load_lane(&lane, access);
        self.reg_cache.clear();
        Ok(self.element_words(access.ty, &elements?))
    }

    /// The chunk's words of a load through a warp-invariant address: one scalar load for the
    /// lowest lane of `bits`, splatted (rows of zeros when no lane executes: nothing reads
    /// them), or the words loaded once for the warp before the loop ([`Self::preload`]).
    fn uniform_load(
        &mut self,
        chunk: &Chunk,
        inst: &Inst,
        access: &MemAccess,
        bits: Value,
    ) -> Result<Vec<Value>, JitError> {
        if let Some((_, rows)) = self.vpreload.clone().filter(|p| p.0 == self.pc) {
            return Ok(rows);
        }
        // The scalar code reads the address registers from the lowest lane's slots: hoisted
        // values come from their scalars, and a register this chunk's pass holds as a vector
        // is stored first (the vector is the file's row with this pass's writes blended in).
        let mut known = Vec::new();
        for r in read_words(inst) {
            if let Some(&(_, v)) = self.vhoisted.iter().find(|e| e.0 == r.0) {
                known.push((r.0, v));
            } else if let Some(&(_, v)) = self.vcache.iter().find(|e| e.0 == r.0) {
                if self.b.func.dfg.value_type(v) == I32X4 {
                    let v = self.vread_exact(chunk, r);
                    let flags = self.regs_unaligned();
                    self.b
                        .ins()
                        .store(flags, v, chunk.row, i32::from(r.0) * REG_ROW_BYTES);
                }
            }
        }
        let words = usize::from(access.words());
        let once = self.b.create_block();
        let join = self.join_block(words);
        let zeros = self.zero_rows(words);
        self.b
            .ins()
            .brif(bits, once, &[], join, &block_args(&zeros));

        self.b.switch_to_block(once);
        let in_warp = self.b.ins().ishl(bits, chunk.base);
        let lane = self.lane_at(in_warp);
        self.reg_cache = known;
        let elements = self.load_lane(&lane, access);
        self.reg_cache.clear();
        let words = self.element_words(access.ty, &elements?);
        let rows: Vec<Value> = words.into_iter().map(|w| self.vsplat(w)).collect();
        self.b.ins().jump(join, &block_args(&rows));
        self.b.switch_to_block(join);
        Ok(self.b.block_params(join).to_vec())
    }

    /// The chunk's words of a load through per-lane addresses: contiguous when it can be, else
    /// lane by lane.
    fn chunk_load(
        &mut self,
        chunk: &Chunk,
        inst: &Inst,
        access: &MemAccess,
        bits: Value,
    ) -> Result<Vec<Value>, JitError> {
        let words = usize::from(access.words());
        let join = self.join_block(words);
        // Every register vector either path reads, in the block that dominates both.
        let regs = self.lane_registers(chunk, inst);
        self.skip_idle_chunk(inst, bits, join, words);
        let slow = self.b.create_block();
        if let Some(form) = contiguous_form(access) {
            let host = self.contiguous_branch(chunk, access, form, bits, slow, false)?;
            let flags = self.flags.device;
            let a = self.b.ins().load(I32X4, flags, host, 0);
            let rows = if words == 1 {
                vec![a]
            } else {
                let b = self.b.ins().load(I32X4, flags, host, 16);
                vec![
                    self.vpick(a, b, [0, 2, 4, 6]),
                    self.vpick(a, b, [1, 3, 5, 7]),
                ]
            };
            self.b.ins().jump(join, &block_args(&rows));
        } else {
            self.b.ins().jump(slow, &[]);
        }

        self.b.switch_to_block(slow);
        let mut rows = self.zero_rows(words);
        for i in 0..4u8 {
            rows = self.for_lane(chunk, &regs, bits, i, &rows, |t, lane, rows| {
                let elements = t.load_lane(lane, access)?;
                let words = t.element_words(access.ty, &elements);
                Ok(rows
                    .iter()
                    .zip(words)
                    .map(|(&row, w)| t.b.ins().insertlane(row, w, i))
                    .collect())
            })?;
        }
        self.b.ins().jump(join, &block_args(&rows));
        self.b.switch_to_block(join);
        Ok(self.b.block_params(join).to_vec())
    }

    /// A vectorisable store ([`vector_access`]) of `src` for the chunk's lanes: contiguous
    /// when it can be, else lane by lane (a store through a warp-invariant address too: its
    /// lanes write in lane order).
    pub(super) fn vector_store(
        &mut self,
        chunk: &Chunk,
        inst: &Inst,
        access: &MemAccess,
        src: Operand,
    ) -> Result<(), JitError> {
        let bits = self.exec_bits(chunk, inst)?;
        // The data as rows of words, element after element.
        let per = access.ty.regs();
        let mut rows = Vec::new();
        for e in 0..u16::from(access.vector) {
            match src.word(e * per) {
                Operand::Reg(r) => {
                    for w in 0..per {
                        rows.push(self.vread(chunk, r.word(w)));
                    }
                }
                op @ (Operand::Imm(_) | Operand::Const { .. }) => {
                    let v = self.uniform_operand(op, per)?;
                    for w in self.element_words(access.ty, &[v]) {
                        rows.push(self.vsplat(w));
                    }
                }
            }
        }
        let regs = self.lane_registers(chunk, inst);
        let done = self.b.create_block();
        self.skip_idle_chunk(inst, bits, done, 0);
        let slow = self.b.create_block();
        if let Some(form) = contiguous_form(access) {
            let host = self.contiguous_branch(chunk, access, form, bits, slow, false)?;
            let flags = self.flags.device;
            if let [lo, hi] = rows[..] {
                let a = self.vpick(lo, hi, [0, 4, 1, 5]);
                let b = self.vpick(lo, hi, [2, 6, 3, 7]);
                self.b.ins().store(flags, a, host, 0);
                self.b.ins().store(flags, b, host, 16);
            } else {
                self.b.ins().store(flags, rows[0], host, 0);
            }
            self.b.ins().jump(done, &[]);
        } else {
            self.b.ins().jump(slow, &[]);
        }

        self.b.switch_to_block(slow);
        for i in 0..4u8 {
            self.for_lane(chunk, &regs, bits, i, &[], |t, lane, _| {
                let words: Vec<Value> = rows
                    .iter()
                    .map(|&row| t.b.ins().extractlane(row, i))
                    .collect();
                let values: Vec<Value> = if per == 2 {
                    words.chunks(2).map(|p| t.concat(p[0], p[1])).collect()
                } else {
                    words
                };
                t.store_lane(lane, access, &values)?;
                Ok(Vec::new())
            })?;
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// Runs `body` for lane `i` of the chunk when its bit of `bits` is set, with the lane's
    /// value of every register of `regs` (`(register, chunk vector)`) in the scalar register
    /// cache, so the scalar code reads them from there. `carried` are the values the lanes
    /// thread through (`body` returns their new values); returns their values after the lane.
    pub(super) fn for_lane(
        &mut self,
        chunk: &Chunk,
        regs: &[(u16, Value)],
        bits: Value,
        i: u8,
        carried: &[Value],
        body: impl FnOnce(&mut Self, &Lane, &[Value]) -> Result<Vec<Value>, JitError>,
    ) -> Result<Vec<Value>, JitError> {
        let run = self.b.create_block();
        let next = self.join_block(carried.len());
        let bit = self.b.ins().band_imm_s(bits, 1 << i);
        self.b.ins().brif(bit, run, &[], next, &block_args(carried));

        self.b.switch_to_block(run);
        let index = self.b.ins().iadd_imm_s(chunk.base, i64::from(i));
        let row = self.b.ins().iadd_imm_s(chunk.row, 4 * i64::from(i));
        let lane = Lane { index, row };
        self.reg_cache = regs.iter().map(|&(r, v)| (r, self.vlane(v, i))).collect();
        let out = body(self, &lane, carried);
        self.reg_cache.clear();
        let out = out?;
        self.b.ins().jump(next, &block_args(&out));
        self.b.switch_to_block(next);
        Ok(self.b.block_params(next).to_vec())
    }

    /// Lane `i` of `v`: the scalar itself when `v` is a splat (a warp-invariant value), which
    /// saves the lane paths of an atomic (`atomic.rs`) a reload of the splat between two
    /// `lock` instructions.
    fn vlane(&mut self, v: Value, i: u8) -> Value {
        if let ValueDef::Result(inst, _) = self.b.func.dfg.value_def(v) {
            if let InstructionData::Unary {
                opcode: Opcode::Splat,
                arg,
            } = self.b.func.dfg.insts[inst]
            {
                return arg;
            }
        }
        self.b.ins().extractlane(v, i)
    }

    /// The chunk's vector of every register word `inst` reads.
    pub(super) fn lane_registers(&mut self, chunk: &Chunk, inst: &Inst) -> Vec<(u16, Value)> {
        read_words(inst)
            .into_iter()
            .map(|r| (r.0, self.vread(chunk, r)))
            .collect()
    }

    /// [`uniform_address`] for this kernel.
    fn uniform_address(&self, access: &MemAccess) -> bool {
        uniform_address(self.info, access)
    }

    /// Whether the region's memory access runs contiguously from chunk to chunk when its
    /// addresses allow ([`Run`]): a load through per-lane addresses or a store, through a
    /// register address [`contiguous_form`] accepts, or a vectorisable atomic (`atomic.rs`).
    pub(super) fn runs_contiguously(&self, inst: &Inst) -> bool {
        if let Op::Load { access, .. } = &inst.op {
            contiguous_form(access).is_some() && !self.uniform_address(access)
        } else if let Op::Store { access, .. } = &inst.op {
            contiguous_form(access).is_some()
        } else if let Op::Atomic(a) = &inst.op {
            super::atomic::vectorisable_atomic(a)
        } else {
            false
        }
    }

    /// A run with nothing in it yet, for a region's loop whose access
    /// [`Self::runs_contiguously`]; defined in the block before the loop.
    pub(super) fn start_run(&mut self) -> Run {
        let run = Run {
            lo: self.b.declare_var(I32X4),
            hi: self.b.declare_var(I32X4),
            host: self.b.declare_var(I64),
            first: self.b.declare_var(I64),
            room: self.b.declare_var(I64),
        };
        let zeros = self.vconst([0; 4]);
        let zero = self.b.ins().iconst(I64, 0);
        let none = self.b.ins().iconst(I64, -1);
        self.b.def_var(run.lo, zeros);
        self.b.def_var(run.hi, zeros);
        self.b.def_var(run.host, zero);
        self.b.def_var(run.first, zero);
        self.b.def_var(run.room, none);
        run
    }

    /// Branches to the contiguous path of the chunk's access (through `form`) when it may take
    /// it, else to `slow`; returns in the contiguous path's block with the host pointer of
    /// lane 0's access. A chunk that continues the region's [`Run`] needs a compare of the
    /// room, one vector test of its address words and the full-mask compare; any other takes
    /// the full test ([`Self::contiguous_test`]), which starts a new run. With `aligned16` (an
    /// atomic's 16-byte CAS) a run starts only at a chunk whose host pointer is 16-byte
    /// aligned, so every chunk that continues it is, and the full test comes after a compare
    /// of lane 3's low word with lane 0's.
    pub(super) fn contiguous_branch(
        &mut self,
        chunk: &Chunk,
        access: &MemAccess,
        form: RegisterAddress,
        bits: Value,
        slow: Block,
        aligned16: bool,
    ) -> Result<Value, JitError> {
        // The region's loop started a run: its access is this one ([`Self::runs_contiguously`]).
        let run = self
            .vrun
            .ok_or_else(|| self.internal("a contiguous access outside a run"))?;
        // The address vectors, in the block that dominates both tests.
        let mut lo = self.vread(chunk, form.base);
        if form.add32 != 0 {
            let k = self.b.ins().iconst(I32, i64::from(form.add32 as i32));
            let k = self.vsplat(k);
            lo = self.b.ins().iadd(lo, k);
        }
        let hi = form.pair.then(|| self.vread(chunk, form.base.word(1)));
        let fast = self.b.create_block();
        let host = self.b.append_block_param(fast, I64);
        let step = 4 * i64::from(access.bytes());
        let step32 = self.b.ins().iconst(I32, step);
        let steps = self.vsplat(step32);
        let try_run = self.b.create_block();
        let next = self.b.create_block();
        let test_block = self.b.create_block();
        let start = self.b.create_block();

        // The chunk continues the run: the run has room for it (tested first, so that
        // accesses that never run pay one compare), every lane executes, and its address
        // words are the ones the run expects.
        // A lane-affine address (`affine.rs`) carries the run as its lane 0 address, any
        // other as its address vectors (each copy of the loop only the one it tests).
        let affine = self.affine_address(form.base, form.pair, form.add32, access.bytes());
        let (run_host, run_room) = (self.b.use_var(run.host), self.b.use_var(run.room));
        let roomy = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, run_room, step);
        self.b.ins().brif(roomy, try_run, &[], test_block, &[]);

        self.b.switch_to_block(try_run);
        let full = self.b.ins().icmp_imm_s(IntCC::Equal, bits, 15);
        let ok = match affine {
            // Lanes `s` bytes apart: the chunk is the run's next one when its lane 0 is.
            Some((a0, valid)) => {
                let run_first = self.b.use_var(run.first);
                let same = self.b.ins().icmp(IntCC::Equal, a0, run_first);
                let ok = self.b.ins().band(full, same);
                self.b.ins().band(ok, valid)
            }
            None => {
                let run_lo = self.b.use_var(run.lo);
                let mut differ = self.b.ins().bxor(lo, run_lo);
                if let Some(hi) = hi {
                    let run_hi = self.b.use_var(run.hi);
                    let d = self.b.ins().bxor(hi, run_hi);
                    differ = self.b.ins().bor(differ, d);
                }
                let differ = self.b.ins().vany_true(differ);
                self.b.ins().band_not(full, differ)
            }
        };
        self.b.ins().brif(ok, next, &[], test_block, &[]);

        self.b.switch_to_block(next);
        if affine.is_some() {
            let run_first = self.b.use_var(run.first);
            let first_next = self.b.ins().iadd_imm_s(run_first, step);
            self.b.def_var(run.first, first_next);
        } else {
            let run_lo = self.b.use_var(run.lo);
            let lo_next = self.b.ins().iadd(run_lo, steps);
            self.b.def_var(run.lo, lo_next);
        }
        let host_next = self.b.ins().iadd_imm_s(run_host, step);
        let room_next = self.b.ins().iadd_imm_s(run_room, -step);
        self.b.def_var(run.host, host_next);
        self.b.def_var(run.room, room_next);
        self.b.ins().jump(fast, &[BlockArg::Value(run_host)]);

        // Otherwise the full test; when it passes, a run starts at this chunk. When it fails,
        // the run stays as it was: still exact for a later chunk with its addresses.
        self.b.switch_to_block(test_block);
        if aligned16 {
            // An atomic's scattered addresses (a histogram's bins) fail the test at a compare
            // of lane 3's low word with lane 0's, which is all they pay (`hist_global` 12.9 →
            // 10.0 ms). Not for loads and stores: there the extra compare before the full test
            // cost `min64_cas` 8 %.
            let full_test = self.b.create_block();
            let lo0 = self.b.ins().extractlane(lo, 0);
            let lo3 = self.b.ins().extractlane(lo, 3);
            let span = self.b.ins().isub(lo3, lo0);
            let step3 = 3 * i64::from(access.bytes());
            let spread = self.b.ins().icmp_imm_s(IntCC::Equal, span, step3);
            self.b.ins().brif(spread, full_test, &[], slow, &[]);
            self.b.switch_to_block(full_test);
        }
        let test = self.contiguous_test(access, form, lo, hi, bits, aligned16);
        self.b.ins().brif(test.ok, start, &[], slow, &[]);

        self.b.switch_to_block(start);
        let room = self.run_room(access, &test, lo);
        let host_next = self.b.ins().iadd_imm_s(test.host, step);
        if affine.is_some() {
            let lo0 = self.b.ins().extractlane(lo, 0);
            let first = match hi {
                Some(hi) => {
                    let hi0 = self.b.ins().extractlane(hi, 0);
                    self.concat(lo0, hi0)
                }
                None => self.b.ins().uextend(I64, lo0),
            };
            let first_next = self.b.ins().iadd_imm_s(first, step);
            self.b.def_var(run.first, first_next);
        } else {
            let lo_next = self.b.ins().iadd(lo, steps);
            self.b.def_var(run.lo, lo_next);
            if let Some(hi) = hi {
                self.b.def_var(run.hi, hi);
            }
        }
        self.b.def_var(run.host, host_next);
        self.b.def_var(run.room, room);
        self.b.ins().jump(fast, &[BlockArg::Value(test.host)]);
        self.b.switch_to_block(fast);
        Ok(host)
    }

    /// Lane 0's device address of an access through `form` in this chunk (as
    /// [`Self::contiguous_test`] computes it): in the contiguous path every lane of the chunk
    /// is in the same window as lane 0.
    pub(super) fn chunk_lane0_address(&mut self, chunk: &Chunk, form: RegisterAddress) -> Value {
        let lo = self.vread(chunk, form.base);
        let lo0 = self.b.ins().extractlane(lo, 0);
        let lo0 = self.b.ins().iadd_imm_s(lo0, i64::from(form.add32 as i32));
        let a0 = if form.pair {
            let hi = self.vread(chunk, form.base.word(1));
            let hi0 = self.b.ins().extractlane(hi, 0);
            self.concat(lo0, hi0)
        } else {
            self.b.ins().uextend(I64, lo0)
        };
        self.b.ins().iadd_imm_s(a0, form.add64 as i64)
    }

    /// The room of a run that starts at a chunk that passed `test` with low address words
    /// `lo` ([`Run::room`]): until lane 3's low word would wrap or its access leave the window.
    fn run_room(&mut self, access: &MemAccess, test: &ContiguousTest, lo: Value) -> Value {
        let s = access.bytes();
        let lo3 = self.b.ins().extractlane(lo, 3);
        let lo3 = self.b.ins().uextend(I64, lo3);
        let max = self.b.ins().iconst(I64, i64::from(u32::MAX));
        let lo_room = self.b.ins().isub(max, lo3);
        let window_room = self.pointer_room(access.space, test.a3, s);
        self.b.ins().umin(lo_room, window_room)
    }

    /// The full test of whether the chunk's access (through `form`, whose address words for
    /// the chunk are `lo`, after `add32`, and `hi`) may take the contiguous path (see the
    /// module docs); with `aligned16`, only from a 16-byte aligned host pointer.
    fn contiguous_test(
        &mut self,
        access: &MemAccess,
        form: RegisterAddress,
        lo: Value,
        hi: Option<Value>,
        bits: Value,
        aligned16: bool,
    ) -> ContiguousTest {
        let s = access.bytes();
        let offset = form.add64;
        // Lane i's low word is lane 0's plus i * s, with no carry out of it.
        let lo0 = self.b.ins().extractlane(lo, 0);
        let first = self.vsplat(lo0);
        let steps = self.vconst([0, s, 2 * s, 3 * s]);
        let want = self.b.ins().iadd(first, steps);
        let mut same = self.b.ins().icmp(IntCC::Equal, lo, want);
        let mut a0 = self.b.ins().uextend(I64, lo0);
        if let Some(hi) = hi {
            let hi0 = self.b.ins().extractlane(hi, 0);
            let his = self.vsplat(hi0);
            let eq = self.b.ins().icmp(IntCC::Equal, hi, his);
            same = self.b.ins().band(same, eq);
            a0 = self.concat(lo0, hi0);
        }
        let a0 = self.b.ins().iadd_imm_s(a0, offset as i64);
        let contiguous = self.b.ins().vall_true(same);
        // A low word that wraps inside the chunk with the high word unchanged is not contiguous.
        // Only an arena or window reaching across a 4 GiB boundary lets lanes 0 and 3 both pass
        // their checks then, so no test memory can reach this case; the compare keeps it exact.
        let last_lo = u32::MAX - 3 * s;
        let no_wrap =
            self.b
                .ins()
                .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, lo0, i64::from(last_lo));
        let full = self.b.ins().icmp_imm_s(IntCC::Equal, bits, 15);
        let a3 = self.b.ins().iadd_imm_s(a0, 3 * i64::from(s));
        let (host0, bad0) = self.pointer_test(access.space, a0, s, false);
        let (host3, bad3) = self.pointer_test(access.space, a3, s, false);
        let end = self.b.ins().iadd_imm_s(host0, 3 * i64::from(s));
        let adjacent = self.b.ins().icmp(IntCC::Equal, host3, end);
        let mut ok = self.b.ins().band(full, contiguous);
        for v in [no_wrap, adjacent] {
            ok = self.b.ins().band(ok, v);
        }
        if aligned16 {
            let low = self.b.ins().band_imm_s(host0, 15);
            let aligned = self.b.ins().icmp_imm_s(IntCC::Equal, low, 0);
            ok = self.b.ins().band(ok, aligned);
        }
        for bad in [bad0, bad3] {
            ok = self.b.ins().band_not(ok, bad);
        }
        ContiguousTest {
            ok,
            host: host0,
            a3,
        }
    }

    /// For a guarded access: goes on in a new block when some lane of the chunk executes it
    /// (`bits`), else jumps to `done` with `words` zero rows (no lane writes them). A guard
    /// that leaves whole chunks idle (one lane's store in a prologue) then costs one branch
    /// per chunk instead of the tests.
    pub(super) fn skip_idle_chunk(&mut self, inst: &Inst, bits: Value, done: Block, words: usize) {
        if inst.guard.is_always() {
            // The chunk has a lane of the region's mask, or the loop skipped it.
            return;
        }
        let go = self.b.create_block();
        let zeros = self.zero_rows(words);
        self.b.ins().brif(bits, go, &[], done, &block_args(&zeros));
        self.b.switch_to_block(go);
    }

    /// A block taking `words` `i32x4` parameters.
    pub(super) fn join_block(&mut self, words: usize) -> cranelift_codegen::ir::Block {
        let join = self.b.create_block();
        for _ in 0..words {
            self.b.append_block_param(join, I32X4);
        }
        join
    }

    /// `words` zero vectors.
    fn zero_rows(&mut self, words: usize) -> Vec<Value> {
        let z = self.vconst([0; 4]);
        vec![z; words]
    }

    /// Register values of a load's or store's elements (i32, or i64 for 64-bit types) as
    /// 32-bit words, low word first.
    fn element_words(&mut self, ty: Ty, elements: &[Value]) -> Vec<Value> {
        let mut words = Vec::new();
        for &v in elements {
            if ty.regs() == 2 {
                let lo = self.b.ins().ireduce(I32, v);
                let hi = self.b.ins().ushr_imm_s(v, 32);
                words.push(lo);
                words.push(self.b.ins().ireduce(I32, hi));
            } else {
                words.push(v);
            }
        }
        words
    }
}
