//! Surface accesses ([`crate::ir::Address::Surface`]): per lane, the element's address, then
//! the access in generated code at it. The address comes from the header's fast form
//! ([`FastSurface`], `Translator::fast_surface_address`) for an access inside a `.1D` or `.2D`
//! surface that has one; else from one call of the resolver through `WarpCtx::surface_lane`
//! (`slow::surface_lane`, which calls [`crate::ir::surface::resolve`], the interpreter's
//! resolver, so both backends land every access in the same place). The access is
//! checked and performed exactly as a global access of its type (the loads, stores and atomic
//! lowerings of `memory.rs`). An access that resolves to nothing does nothing: a store is
//! dropped, a load or an atomic writes 0; the address's `Ps` predicate collects the lanes that
//! hit a sparse page; an atomic counts only the lanes that performed it (also on the trap
//! path, which hands those lanes to the trap exit). `.SD32`/`.SD64` MIN/MAX branch on the
//! signedness the resolver read from the header (`WarpCtx::surface_signed`); for the other
//! ops the signedness changes no bit. Surface accesses are never fused (`fusion_of`).

use super::memory::Ftz;
use super::{arg, Flow, Translator, GLOBAL_BASE_I64};
use crate::ir::surface::{FastSurface, SurfaceAddress, SurfaceDim};
use crate::ir::{AtomicInst, AtomicOp, Guard, MemAccess, MemOrder, Operand, Reg, Space, Ty};
use crate::jit::warp_ctx::{off, surface_code};
use crate::jit::JitError;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{InstBuilder, SigRef, Type};

/// What a surface access does at its element.
#[derive(Clone, Copy)]
pub(super) enum SurfaceOp<'a> {
    /// `ld` into this register.
    Load(Reg),
    /// `st` of this operand.
    Store(Operand),
    /// An atomic read-modify-write.
    Atomic(&'a AtomicInst),
}

impl<'a, 'f> Translator<'a, 'f> {
    /// A load, store or atomic at surface address `s` (see the module docs).
    pub(super) fn translate_surface(
        &mut self,
        g: Guard,
        access: &'a MemAccess,
        s: &SurfaceAddress,
        op: SurfaceOp<'a>,
    ) -> Result<Flow, JitError> {
        if g.is_never() {
            return Ok(Flow::Next(self.mask));
        }
        let ty = access.ty;
        let (words, bytes) = (ty.regs(), ty.bytes());
        if access.is_vector() || ty == Ty::B128 {
            return Err(
                self.unsupported("a vector or 128-bit surface access (validation rejects it)")
            );
        }
        let is_load = matches!(op, SurfaceOp::Load(_));
        let atomic = match op {
            SurfaceOp::Atomic(a) => Some(a),
            SurfaceOp::Load(_) | SurfaceOp::Store(_) => None,
        };
        if atomic.is_none() {
            self.order_fences(access.order, is_load, true);
        }
        // The lowerings of an atomic (and, for `.SD32`/`.SD64` MIN/MAX, of its signed twin).
        let lowerings = match atomic {
            Some(a) => {
                let plain = self.atomic_lowering(a)?;
                let signed = if s.format_sign && matches!(a.op, AtomicOp::Min | AtomicOp::Max) {
                    let mut twin = a.clone();
                    twin.access.ty = if words == 2 { Ty::S64 } else { Ty::S32 };
                    Some(self.atomic_lowering(&twin)?)
                } else {
                    None
                };
                Some((plain, signed))
            }
            None => None,
        };
        // The fast path: a `.1D` or `.2D` access with element coordinates whose result needs no
        // signedness from the header (`FastSurface`).
        let fast = match (s.dim, s.byte_x, &lowerings) {
            (_, true, _) | (_, _, Some((_, Some(_)))) => None,
            (SurfaceDim::D1, false, _) => Some(FastSurface::D1),
            (SurfaceDim::D2, false, _) => Some(FastSurface::D2),
            _ => None,
        };
        let exec = self.exec_mask(g)?;
        let site = self.tables.surface_sites.len() as i64;
        self.tables.surface_sites.push((*s, bytes));
        let it: Type = if words == 2 { I64 } else { I32 };
        let device = self.flags.device;
        let zero = self.iconst(I32, 0);
        let out = self.lane_loop(exec, &[zero, zero], |t, lane, c| {
            let (sparse_acc, performed_acc) = (c[0], c[1]);
            if let Some(a) = atomic {
                // The trap paths below hand the lanes that performed so far to the trap exit.
                t.atomic_exec = Some((a.op, performed_acc, 1));
            }
            // The lane's operands first, as every store and atomic reads them.
            let (b, c2) = match op {
                SurfaceOp::Store(src) => (Some(t.read_operand(lane, src, words)?), None),
                SurfaceOp::Atomic(a) => {
                    let b = t.read_operand(lane, a.src, words)?;
                    let c2 = match a.src2 {
                        Some(o) => Some(t.read_operand(lane, o, words)?),
                        None => None,
                    };
                    (Some(b), c2)
                }
                SurfaceOp::Load(_) => (None, None),
            };
            // The element's address from the header's fast form when it has one and the
            // access is inside (`fast`), else what the resolver returns.
            let slow = t.b.create_block();
            let resolved_r = t.b.create_block();
            t.b.append_block_param(resolved_r, I64);
            if let Some(fast_dim) = fast {
                let address = t.fast_surface_address(lane, s, fast_dim, bytes, slow)?;
                t.b.ins().jump(resolved_r, &[arg(address)]);
            } else {
                t.b.ins().jump(slow, &[]);
            }
            t.b.switch_to_block(slow);
            let sig = t.surface_sig();
            let f =
                t.b.ins()
                    .load(I64, t.flags.state_const, t.ctx, off::SURFACE_LANE);
            let site_v = t.iconst(I32, site);
            let call =
                t.b.ins()
                    .call_indirect(sig, f, &[t.ctx, site_v, lane.index]);
            let called = t.b.inst_results(call)[0];
            t.b.ins().jump(resolved_r, &[arg(called)]);
            t.b.switch_to_block(resolved_r);
            let r = t.b.block_params(resolved_r)[0];
            // A fault: the resolver recorded what the trap reports.
            let fault = t.b.create_block();
            let resolved = t.b.create_block();
            t.b.set_cold_block(fault);
            let is_fault =
                t.b.ins()
                    .icmp_imm_s(IntCC::Equal, r, surface_code::FAULT as i64);
            t.b.ins().brif(is_fault, fault, &[], resolved, &[]);
            t.b.switch_to_block(fault);
            t.surface_trap = true;
            let no_address = t.iconst(I64, 0);
            t.jump_trap(lane.index, Space::Global, bytes, no_address);
            t.surface_trap = false;
            t.b.switch_to_block(resolved);
            let at_element =
                t.b.ins()
                    .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, r, GLOBAL_BASE_I64);
            let access_blk = t.b.create_block();
            let skip_blk = t.b.create_block();
            let join = t.b.create_block();
            t.b.append_block_param(join, it);
            t.b.append_block_param(join, I32);
            t.b.append_block_param(join, I32);
            t.b.ins().brif(at_element, access_blk, &[], skip_blk, &[]);

            // No access: 0 for the destination, the sparse status.
            t.b.switch_to_block(skip_blk);
            let sparse =
                t.b.ins()
                    .icmp_imm_s(IntCC::Equal, r, surface_code::SKIP_SPARSE as i64);
            let sparse_bit = t.bool_to_lane_bit(sparse, lane);
            let nothing = t.iconst(it, 0);
            let none = t.iconst(I32, 0);
            t.b.ins()
                .jump(join, &[arg(nothing), arg(sparse_bit), arg(none)]);

            // The element: checked as a global access of its size, then the access.
            t.b.switch_to_block(access_blk);
            let ptr = t.checked_pointer(lane, Space::Global, r, bytes)?;
            let none = t.iconst(I32, 0);
            let (value, performed_bit) = match op {
                SurfaceOp::Load(_) => (t.load_element(ty, device, ptr, 0)?, none),
                SurfaceOp::Store(_) => {
                    let v = b.ok_or_else(|| t.internal("a surface store without its value"))?;
                    t.store_element(bytes, device, v, ptr, 0);
                    (t.iconst(it, 0), none)
                }
                SurfaceOp::Atomic(a) => {
                    let b = b.ok_or_else(|| t.internal("a surface atomic without Rb"))?;
                    let (plain, signed) = lowerings
                        .as_ref()
                        .ok_or_else(|| t.internal("a surface atomic without its lowering"))?;
                    let ftz = if a.ftz { Ftz::On } else { Ftz::Off };
                    let result = match signed {
                        None => t.perform_atomic(a, plain, it, ptr, b, c2, ftz),
                        Some(signed) => {
                            let flag =
                                t.b.ins()
                                    .load(I32, t.flags.state, t.ctx, off::SURFACE_SIGNED);
                            let s_blk = t.b.create_block();
                            let u_blk = t.b.create_block();
                            let done = t.b.create_block();
                            t.b.append_block_param(done, it);
                            t.b.ins().brif(flag, s_blk, &[], u_blk, &[]);
                            t.b.switch_to_block(s_blk);
                            let rs = t.perform_atomic(a, signed, it, ptr, b, c2, ftz);
                            t.b.ins().jump(done, &[arg(rs)]);
                            t.b.switch_to_block(u_blk);
                            let ru = t.perform_atomic(a, plain, it, ptr, b, c2, ftz);
                            t.b.ins().jump(done, &[arg(ru)]);
                            t.b.switch_to_block(done);
                            t.b.block_params(done)[0]
                        }
                    };
                    let one = t.iconst(I32, 1);
                    (result, t.b.ins().ishl(one, lane.index))
                }
            };
            t.b.ins()
                .jump(join, &[arg(value), arg(none), arg(performed_bit)]);

            t.b.switch_to_block(join);
            let p = t.b.block_params(join).to_vec();
            match op {
                SurfaceOp::Load(dst) => t.write_reg(lane, dst, words, p[0]),
                SurfaceOp::Atomic(a) => t.write_reg(lane, a.dst, words, p[0]),
                SurfaceOp::Store(_) => {}
            }
            let sparse_acc = t.b.ins().bor(sparse_acc, p[1]);
            let performed_acc = t.b.ins().bor(performed_acc, p[2]);
            Ok(vec![sparse_acc, performed_acc])
        });
        self.atomic_exec = None;
        let out = out?;
        if !s.sparse.is_pt() {
            self.write_pred(s.sparse, exec, out[0])?;
        }
        match atomic {
            Some(a) => {
                self.count_atomics(a.op, out[1], 1);
                if !a.performed.is_pt() {
                    // `ir::AtomicInst::performed`: always true in the executing lanes.
                    self.write_pred(a.performed, exec, exec)?;
                }
            }
            None => self.order_fences(access.order, is_load, false),
        }
        Ok(Flow::Next(self.mask))
    }

    /// The fences (or compiler barriers) of a plain load or store of `order`, before or after
    /// the access, exactly as `translate_load` and `translate_store` place them.
    fn order_fences(&mut self, order: MemOrder, is_load: bool, before: bool) {
        use MemOrder::{AcqRel, Acquire, Relaxed, Release, SeqCst, Volatile, Weak};
        let (point, fence) = match (is_load, before, order) {
            (_, _, Weak | Relaxed) => (false, false),
            // The ABI's seq_cst load is `fence.sc; ld.acquire`.
            (true, true, SeqCst) => (false, true),
            (true, true, Volatile | Acquire | Release | AcqRel) => (false, false),
            // Acquire (and anything stronger): no later access moves above the load.
            (true, false, Volatile | Acquire | Release | AcqRel | SeqCst) => (true, false),
            // Release (and stronger): no earlier access moves below the store.
            (false, true, Volatile | Acquire | Release | AcqRel | SeqCst) => (true, false),
            (false, false, Release) => (false, false),
            (false, false, Volatile | Acquire | AcqRel) => (true, false),
            // An sc store is `st; mfence`.
            (false, false, SeqCst) => (false, true),
        };
        if fence {
            self.b.ins().fence();
        } else if point {
            self.b.ins().sequence_point();
        }
    }

    /// The device address of the lane's element of a `.1D` or `.2D` (`dim`) access of `bytes`
    /// per element at `s`, from the fast form of the header its handle selects
    /// ([`FastSurface`]): what [`crate::ir::surface::resolve`] returns for it, `base +
    /// SurfaceLayout::offset` (pitch: `y × pitch + x × bytes`; block-linear: the block, the GOB
    /// in it and the byte in the GOB, with `z` and the layer 0). Branches to `slow` when the
    /// header has no fast form of this dimensionality and element size (a handle past the
    /// pool reads the `FastSurface::NONE` after it: the fast forms are movable loads, which
    /// Cranelift may hoist above any test, so the index is clamped, never branched on), or a
    /// coordinate is outside (an unsigned compare against extents below 2^31: a negative
    /// coordinate is outside too).
    fn fast_surface_address(
        &mut self,
        lane: &super::Lane,
        s: &SurfaceAddress,
        dim: u32,
        bytes: u32,
        slow: cranelift_codegen::ir::Block,
    ) -> Result<cranelift_codegen::ir::Value, JitError> {
        use std::mem::{offset_of, size_of};
        let field = |f: usize| f as i32;
        let handle = self.read_operand(lane, s.handle.operand(), 1)?;
        let index = self.b.ins().band_imm_s(handle, 0xf_ffff);
        let index = self.b.ins().uextend(I64, index);
        let len = self
            .b
            .ins()
            .load(I64, self.flags.state_const, self.ctx, off::SURFACES_LEN);
        let index = self.b.ins().umin(index, len);
        let pool = self
            .b
            .ins()
            .load(I64, self.flags.state_const, self.ctx, off::SURFACES_FAST);
        let at = self
            .b
            .ins()
            .imul_imm_s(index, size_of::<FastSurface>() as i64);
        let d = self.b.ins().iadd(pool, at);
        // The headers do not change during the launch.
        let ro = self.flags.state_const;
        let load32 = |t: &mut Self, f: usize| t.b.ins().load(I32, ro, d, field(f));
        let d_dim = load32(self, offset_of!(FastSurface, dim));
        let d_bytes = load32(self, offset_of!(FastSurface, elem_bytes));
        let width = load32(self, offset_of!(FastSurface, width));
        let height = load32(self, offset_of!(FastSurface, height));
        let x = self.read_operand(lane, Operand::Reg(s.coords), 1)?;
        let y = if dim == FastSurface::D2 {
            self.read_operand(lane, Operand::Reg(s.coords.word(1)), 1)?
        } else {
            self.iconst(I32, 0)
        };
        let same_dim = self.b.ins().icmp_imm_s(IntCC::Equal, d_dim, i64::from(dim));
        let same_bytes = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, d_bytes, i64::from(bytes));
        let x_in = self.b.ins().icmp(IntCC::UnsignedLessThan, x, width);
        let y_in = self.b.ins().icmp(IntCC::UnsignedLessThan, y, height);
        let ok = self.b.ins().band(same_dim, same_bytes);
        let inside = self.b.ins().band(x_in, y_in);
        let ok = self.b.ins().band(ok, inside);
        let compute = self.b.create_block();
        self.b.ins().brif(ok, compute, &[], slow, &[]);
        self.b.switch_to_block(compute);
        let base = self
            .b
            .ins()
            .load(I64, ro, d, field(offset_of!(FastSurface, base)));
        let x = self.b.ins().uextend(I64, x);
        let y = self.b.ins().uextend(I64, y);
        let xb = self.b.ins().imul_imm_s(x, i64::from(bytes));
        let block_linear = load32(self, offset_of!(FastSurface, block_linear));
        let (bl, pitch_blk, done) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.append_block_param(done, I64);
        self.b.ins().brif(block_linear, bl, &[], pitch_blk, &[]);
        // Pitch: y × pitch + x × bytes.
        self.b.switch_to_block(pitch_blk);
        let pitch = load32(self, offset_of!(FastSurface, pitch));
        let pitch = self.b.ins().uextend(I64, pitch);
        let row = self.b.ins().imul(y, pitch);
        let offset = self.b.ins().iadd(row, xb);
        self.b.ins().jump(done, &[arg(offset)]);
        // Block-linear (`SurfaceLayout::offset` with z and the layer 0).
        self.b.switch_to_block(bl);
        let lh = load32(self, offset_of!(FastSurface, log_height));
        let lh = self.b.ins().uextend(I64, lh);
        let ld = load32(self, offset_of!(FastSurface, log_depth));
        let ld = self.b.ins().uextend(I64, ld);
        let gobs_wide = self
            .b
            .ins()
            .load(I64, ro, d, field(offset_of!(FastSurface, gobs_wide)));
        // block = (y >> (3 + lh)) × gobs_wide + xb / 64.
        let lh3 = self.b.ins().iadd_imm_s(lh, 3);
        let block_row = self.b.ins().ushr(y, lh3);
        let block = self.b.ins().imul(block_row, gobs_wide);
        let gob_x = self.b.ins().ushr_imm_s(xb, 6);
        let block = self.b.ins().iadd(block, gob_x);
        // gob_in_block = (y >> 3) & (2^lh − 1).
        let one = self.iconst(I64, 1);
        let gobs_high = self.b.ins().ishl(one, lh);
        let gob_mask = self.b.ins().iadd_imm_s(gobs_high, -1);
        let gob_row = self.b.ins().ushr_imm_s(y, 3);
        let gob_in_block = self.b.ins().band(gob_row, gob_mask);
        // in_gob = (xb % 64 / 32) × 256 + (y % 8 / 2) × 64 + (xb % 32 / 16) × 32
        //          + (y % 2) × 16 + xb % 16.
        let bits = |t: &mut Self, v, shift: i64, mask: i64, to: i64| {
            let v = t.b.ins().ushr_imm_s(v, shift);
            let v = t.b.ins().band_imm_s(v, mask);
            t.b.ins().ishl_imm_s(v, to)
        };
        let terms = [
            bits(self, xb, 5, 1, 8),
            bits(self, y, 1, 3, 6),
            bits(self, xb, 4, 1, 5),
            bits(self, y, 0, 1, 4),
            bits(self, xb, 0, 15, 0),
        ];
        let in_gob = terms
            .into_iter()
            .reduce(|a, b| self.b.ins().iadd(a, b))
            .ok_or_else(|| self.internal("an empty sum"))?;
        // (block × 512) << (lh + ld) + gob_in_block × 512 + in_gob.
        let shift = self.b.ins().iadd(lh, ld);
        let shift = self.b.ins().iadd_imm_s(shift, 9);
        let blocks = self.b.ins().ishl(block, shift);
        let gobs = self.b.ins().ishl_imm_s(gob_in_block, 9);
        let offset = self.b.ins().iadd(blocks, gobs);
        let offset = self.b.ins().iadd(offset, in_gob);
        self.b.ins().jump(done, &[arg(offset)]);
        self.b.switch_to_block(done);
        let offset = self.b.block_params(done)[0];
        Ok(self.b.ins().iadd(base, offset))
    }

    /// The signature `(ctx: i64, site: i32, lane: i32) -> i64` of `WarpCtx::surface_lane`.
    fn surface_sig(&mut self) -> SigRef {
        if let Some(s) = self.surface_sig {
            return s;
        }
        let call_conv = self.b.func.signature.call_conv;
        let mut sig = cranelift_codegen::ir::Signature::new(call_conv);
        for t in [I64, I32, I32] {
            sig.params.push(cranelift_codegen::ir::AbiParam::new(t));
        }
        sig.returns.push(cranelift_codegen::ir::AbiParam::new(I64));
        let s = self.b.import_signature(sig);
        self.surface_sig = Some(s);
        s
    }
}
