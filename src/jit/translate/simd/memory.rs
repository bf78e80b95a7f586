//! SIMD lanes' memory access: the one load or store of a vectorised region (`mod.rs`), for
//! a chunk of four lanes.
//!
//! A fused region holds at most one memory access ([`super::fusion_regions`]), so running it
//! chunk-major performs the lanes' accesses in lane order, as the scalar region loop does. Each
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
//!   ones go lane by lane).
//! * **Uniform address** (a load whose address registers are warp-invariant,
//!   `valid/uniform.rs`): one scalar load for the chunk's lowest executing lane, its value
//!   given to every executing lane; when the load is unguarded, one scalar load for the
//!   region's lowest lane before the chunk loop serves every chunk ([`Translator::preload`]).
//!   Lane-order execution with no other thread's access between the lanes' loads gives the
//!   same result, and that interleaving is always possible; a fault is the lowest lane's, as
//!   in lane order.
//! * **Lane by lane** otherwise (scattered addresses, a partial chunk, a failed test above):
//!   the scalar code of the access ([`Translator::load_lane`], [`Translator::store_lane`])
//!   for each of the four lanes in order, each under its own mask bit, reading its registers
//!   out of the chunk's vectors. A faulting lane traps with exactly the lanes before it done.

use super::super::invariant::address_invariant;
use super::super::{Lane, Translator, REG_ROW_BYTES};
use super::Chunk;
use crate::ir::{Address, Inst, LinearForm, MemAccess, MemOrder, Op, Operand, Reg, Space, Ty, Use};
use crate::jit::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I32X4, I64};
use cranelift_codegen::ir::{BlockArg, InstBuilder, Value};

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
struct RegisterAddress {
    base: Reg,
    pair: bool,
    add32: u32,
    add64: u64,
}

/// The address of `access` when it may take the contiguous path (see the module docs): weak,
/// one 32- or 64-bit element or two 32-bit ones per lane, outside the constant bank, through a
/// register.
fn contiguous_form(access: &MemAccess) -> Option<RegisterAddress> {
    let sized = matches!(access.ty.bits(), 32 | 64) && matches!(access.bytes(), 4 | 8);
    if access.order != MemOrder::Weak || access.space == Space::Const || !sized {
        return None;
    }
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
        let exec = self.exec_mask(inst.guard)?;
        let bits = self.chunk_bits(exec, chunk.base);
        let rows = if address_invariant(self.info.invariant(), &access.addr) {
            self.uniform_load(chunk, inst, access, bits)?
        } else {
            self.chunk_load(chunk, inst, access, bits)?
        };
        let lanes = self.lane_vector(bits);
        for (w, row) in (0..).zip(rows) {
            self.vwrite(chunk, dst.word(w), lanes, row);
        }
        Ok(())
    }

    /// Whether `inst`, a load of a vectorised region, can load once for the warp before the
    /// region's loop ([`Self::preload`]): an unguarded vector load through a warp-invariant
    /// address. Its address registers are known before the loop: a warp-invariant register is
    /// written once, by a definition that dominates every read, so it is either one of the
    /// region's hoisted writers (run before the loop) or in the register file already, the
    /// same in every lane's slot.
    pub(super) fn preloadable(&self, inst: &Inst) -> bool {
        let Op::Load { access, .. } = &inst.op else {
            return false;
        };
        inst.guard.is_always()
            && vector_access(access)
            && address_invariant(self.info.invariant(), &access.addr)
    }

    /// The words of a [`Self::preloadable`] load, loaded once for the region's lowest lane
    /// before the chunk loop. The region's lanes (`self.mask`, not empty) are the load's, and
    /// the region holds no other access, so this is the chunks' loads with no other access
    /// between them, which lane order allows; a fault is the lowest lane's, as in lane order
    /// (the region's register work before the load cannot fault, and a trapped launch does
    /// not expose registers).
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
        if let Some((_, words)) = self.vpreload.clone().filter(|p| p.0 == self.pc) {
            return Ok(words.into_iter().map(|w| self.vsplat(w)).collect());
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
        let slow = self.b.create_block();
        if let Some(form) = contiguous_form(access) {
            let (ok, host) = self.contiguous_test(chunk, access, form, bits);
            let fast = self.b.create_block();
            self.b.ins().brif(ok, fast, &[], slow, &[]);
            self.b.switch_to_block(fast);
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
        let exec = self.exec_mask(inst.guard)?;
        let bits = self.chunk_bits(exec, chunk.base);
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
        let slow = self.b.create_block();
        if let Some(form) = contiguous_form(access) {
            let (ok, host) = self.contiguous_test(chunk, access, form, bits);
            let fast = self.b.create_block();
            self.b.ins().brif(ok, fast, &[], slow, &[]);
            self.b.switch_to_block(fast);
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
    fn for_lane(
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
        self.reg_cache = regs
            .iter()
            .map(|&(r, v)| (r, self.b.ins().extractlane(v, i)))
            .collect();
        let out = body(self, &lane, carried);
        self.reg_cache.clear();
        let out = out?;
        self.b.ins().jump(next, &block_args(&out));
        self.b.switch_to_block(next);
        Ok(self.b.block_params(next).to_vec())
    }

    /// The chunk's vector of every register word `inst` reads.
    fn lane_registers(&mut self, chunk: &Chunk, inst: &Inst) -> Vec<(u16, Value)> {
        read_words(inst)
            .into_iter()
            .map(|r| (r.0, self.vread(chunk, r)))
            .collect()
    }

    /// Whether the chunk's access of `access` (through `form`) may take the contiguous
    /// path (an i8, non-zero when it may; see the module docs), and the host pointer of lane
    /// 0's access.
    fn contiguous_test(
        &mut self,
        chunk: &Chunk,
        access: &MemAccess,
        form: RegisterAddress,
        bits: Value,
    ) -> (Value, Value) {
        let s = access.bytes();
        let mut lo = self.vread(chunk, form.base);
        if form.add32 != 0 {
            let k = self.b.ins().iconst(I32, i64::from(form.add32 as i32));
            let k = self.vsplat(k);
            lo = self.b.ins().iadd(lo, k);
        }
        let hi = form.pair.then(|| self.vread(chunk, form.base.word(1)));
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
        let no_wrap = self.b.ins().icmp_imm_u(
            IntCC::UnsignedLessThanOrEqual,
            lo0,
            i64::from(u32::MAX - 3 * s),
        );
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
        for bad in [bad0, bad3] {
            ok = self.b.ins().band_not(ok, bad);
        }
        (ok, host0)
    }

    /// A block taking `words` `i32x4` parameters.
    fn join_block(&mut self, words: usize) -> cranelift_codegen::ir::Block {
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
