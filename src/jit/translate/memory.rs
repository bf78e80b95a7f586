//! Memory families: loads, stores, atomics and fences.
//!
//! # Checks
//!
//! Every access is checked inline before the host touches memory, by one unsigned compare of
//! the region offset rotated right by log2(size) against the per-size limit of
//! [`crate::jit::warp_ctx::limits`]: an aligned offset rotates to `offset / size`, a misaligned one to
//! a value above every limit, so alignment and range cost one `ror` and one `cmp`, and no sum
//! can wrap. The reason a fault reports follows from the address and size in the order
//! `crate::exec::memory` documents (a misaligned address that is also out of range reports
//! "misaligned address"). A failed check branches to a cold block that jumps to the function's
//! trap exit with the lane, the trap site (pc, space, size) and the address; lanes before it in
//! the loop have completed their effects, as the IR requires.
//!
//! # Memory orders on x86-64 (TSO)
//!
//! | IR | generated code | why it is enough |
//! |---|---|---|
//! | weak / relaxed load, store | plain `load`/`store` (`mov`) | every aligned `mov` is single-copy atomic; TSO keeps loads ordered with loads and stores with stores |
//! | volatile load / store | plain `mov` + `sequence_point` after | relaxed at system scope; the compiler barrier stops Cranelift from merging or eliding it |
//! | acquire load | `mov`, then `sequence_point` | TSO never moves later accesses before a load; the sequence point stops the compiler from doing so |
//! | release store | `sequence_point`, then `mov` | TSO never moves earlier accesses after a store |
//! | acquire / release / acq_rel fence | `sequence_point` (no instruction) | TSO already gives these orders; the sequence point is Cranelift's compiler barrier: no side effect moves across it, and alias analysis forwards no load across it |
//! | sc fence | `fence` (`mfence`) | the one reordering TSO allows (a later load before an earlier store) is what `.sc` forbids |
//! | every RMW, any order | `atomic_rmw` / `atomic_cas` (`lock`-prefixed) | Cranelift's atomics are sequentially consistent: strengthening relaxed/acquire/release/acq_rel is always valid (the ABI document allows it) |
//!
//! Orders the validator rejects (a release load, an acquire store, `.sc` on an access) are
//! strengthened rather than dropped: an `.sc` access gets an `mfence` as the ABI's
//! `fence.sc; ld.acquire` / `fence.sc; st.relaxed` sequences do.
//!
//! AArch64, for reference (not generated here): relaxed `ldr`/`str`, acquire `ldar`, release
//! `stlr`, acquire fence `dmb ishld`, release/acq_rel fence `dmb ish`, sc fence `dmb ish`, RMWs
//! `ldaxr`/`stlxr` loops or LSE `ldaddal`/`casal`.
//!
//! # Atomic lowering
//!
//! Integer add/sub/and/or/xor/exch/min/max are `atomic_rmw`, CAS/CAST `atomic_cas` (16-, 32- and
//! 64-bit; a 2-byte atomic works on i16 memory and extends its result by the type's
//! signedness); INC, DEC and `f32`/`f64` add/min/max/fcmpwr are CAS loops computing the new
//! value inline; `f16`/`bf16`/`f16x2`/`bf16x2` add/min/max are CAS loops whose new value comes
//! from `WarpCtx::rmw_value` (`sem::atomic::rmw_value`, the one definition), so a packed-half add is one host CAS
//! on the whole 32-bit word with each half computed independently. `ftz` flushes as the IR
//! says: always on global and shared atomics, and on a generic address only when it is
//! `>= GLOBAL_BASE` (the lane's address resolves to global memory).
//!
//! In a vectorised region (`simd/`), a 32-bit integer or `f32` atomic through a global or generic
//! address whose four lanes of a chunk name four adjacent, 16-byte aligned words is one `lock
//! cmpxchg16b` loop for the four (`simd/atomic.rs`); other chunks run this module's per-lane
//! code ([`Translator::atomic_lane`]).
//!
//! # Shared memory: CTA-private, so plain read-modify-writes
//!
//! Atomics on the shared space (`ATOMS`, `atom.shared`) are a plain load, the new value, and a
//! plain store: no `lock` prefix and no CAS loop. This is exact because a CTA's shared window
//! is touched by one host thread only: the scheduler owns each resident CTA (and its
//! `SharedMemory`) in one worker's local list and runs its warps one call at a time, and a
//! warp function never returns in the middle of a lane's read-modify-write. No other host
//! thread can observe the window between the load and the store, so the sequence is atomic for
//! every observer that exists; it is also sequentially consistent, as a single thread's program
//! order is. Generic addresses keep the host atomics (they may resolve to global memory). The
//! locked instruction would cost ~20 cycles per lane for nothing (the `hist_shared` and
//! `ring_inc` benches).
//!
//! The same argument covers a whole instruction: no other host thread sees the window between
//! two lanes either. So a 32- or 64-bit single-element shared atomic, not `.SPIN`, whose
//! address is warp-invariant ([`chained`]: a lock word, a ring index, a CTA counter) is one *chain* for
//! the warp ([`Translator::private_chain`]): the address checked at the lowest executing
//! lane, the word loaded once, every lane's new value and result computed in lane order on the
//! running value in a host register, and the last value stored once. The per-lane loop carried
//! the word through memory, a store and a dependent load per lane (~5 cycles of store
//! forwarding each, the whole cost of a lock's losers failing their CAS one after the other).
//!
//! # Warp aggregation
//!
//! An integer (`u32`/`s32`/`b32`/`u64`/`s64`/`b64`) add, sub, and, or, xor, min or max on a
//! global or generic linear or indexed address with no swap operand, no `.SPIN` and one element
//! ([`aggregable`]) whose executing lanes all name one address is ONE host atomic for the warp:
//! the address is checked once (at the lowest lane, which is where the per-lane loop would trap
//! first, with the same address), the lanes' operands are combined in lane order (their sum
//! for add and sub, their and/or/xor/min/max otherwise, in the register width: wrapping as the
//! host atomic wraps), one host atomic applies the combination, and each lane's result is the
//! running value `old op b[lane0] op ... op b[lane-1]`, exactly what lane-order execution
//! returns. Which atomics are known to have one address is `JitOptions::warp_aggregation`
//! ([`aggregated`]): by default those whose address is warp-invariant (`valid/uniform.rs`;
//! [`Translator::uniform_atomic`], no test, and no lane loop when the operand is invariant
//! too); with `Aggregation::Runtime` every aggregable atomic also compares its lanes' addresses
//! at run time and falls back to the per-lane loop when they differ
//! ([`Translator::aggregated_atomic`]). Why no observer can tell the difference is argued in
//! `docs/memory-model.md` ("Warp-aggregated atomics"). Float adds are never aggregated (the
//! rounding of a combined sum differs), nor are exch, CAS, inc and dec.
//!
//! Scopes (cta, cluster, gpu, sys) need nothing: every host thread sees one coherent memory, so
//! each scope is honoured by the strongest one. They stay in the IR and in reports.

use super::invariant::{address_invariant, operand_invariant};
use super::{arg, Flow, Lane, Translator, GLOBAL_BASE_I64};
use crate::ir::{
    Address, AtomicInst, AtomicOp, Guard, LinearForm, MemAccess, MemOrder, Operand, Reg, Scope,
    Space, Ty, GENERIC_SHARED_BASE,
};
use crate::jit::warp_ctx::{self, off};
use crate::jit::Aggregation;
use crate::jit::JitError;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::types::{I128, I16, I32, I64};
use cranelift_codegen::ir::{AtomicRmwOp, InstBuilder, MemFlagsData, Type, Value};

// A generic address in the global arena is never inside the shared window's generic image,
// even offset by a whole window: `checked_generic_pointer` relies on it.
const _: () =
    assert!(crate::ir::GLOBAL_BASE - GENERIC_SHARED_BASE >= crate::ir::SHARED_WINDOW_BYTES as u64);

/// A region of device memory with a host base and per-size limits in the context.
#[derive(Clone, Copy)]
enum Window {
    Shared,
    Global,
    Cbank,
}

/// Where a device address falls ([`Translator::placement`]).
enum Placement {
    /// In this window, at this offset.
    One(Window, Value),
    /// A generic address: in the global arena at offset `global` when `is_global` (an i8; at
    /// or above GLOBAL_BASE), else in the shared window at offset `shared`.
    Generic {
        is_global: Value,
        global: Value,
        shared: Value,
    },
}

impl Window {
    /// The context offsets of the window's host base and of its limit table.
    fn fields(self) -> (i32, i32) {
        match self {
            Window::Shared => (off::SHARED_BASE, off::SHARED_LIMIT),
            Window::Global => (off::GLOBAL_BASE, off::GLOBAL_LIMIT),
            Window::Cbank => (off::CBANK, off::CBANK_LIMIT),
        }
    }
}

/// Which native read-modify-write (if any) an atomic op lowers to.
pub(super) enum AtomicLowering {
    /// `atomic_rmw` with this op.
    Rmw(AtomicRmwOp),
    /// `atomic_cas`: CAS (returns old) or CAST (returns 1/0).
    Cas { store_flag: bool },
    /// A CAS loop computing the new value from the old one.
    Loop(LoopOp),
}

#[derive(Clone, Copy)]
pub(super) enum LoopOp {
    Inc,
    Dec,
    FloatAdd,
    FloatMin,
    FloatMax,
    FloatCmpWrite,
    /// `FloatCmpWrite` on `f16` bits, compared with integer arithmetic (no host half floats).
    HalfCmpWrite,
    /// `f16`/`bf16`/`f16x2`/`bf16x2` add, min, max: the new value comes from
    /// `WarpCtx::rmw_value` (`sem::atomic::rmw_value`; no host arithmetic for these types).
    Call,
}

/// The host read-modify-write of `a`'s warp-aggregated path under `aggregation`, or `None`
/// when `a` runs lane by lane: [`aggregable`] ops, with a warp-invariant address
/// ([`Aggregation::Proven`]) or any address ([`Aggregation::Runtime`]).
pub(super) fn aggregated(
    invariant: &[bool],
    a: &AtomicInst,
    aggregation: Aggregation,
) -> Option<AtomicRmwOp> {
    let op = aggregable(a)?;
    match aggregation {
        Aggregation::Off => None,
        Aggregation::Proven => address_invariant(invariant, &a.access.addr).then_some(op),
        Aggregation::Runtime => Some(op),
    }
}

/// Whether atomic `a` runs as one chain on a shared word for the whole warp
/// ([`Translator::private_chain`]): a 32- or 64-bit single-element atomic on the shared space,
/// not `.SPIN` (which claims banks lane by lane), whose address is warp-invariant. Such an
/// atomic is a whole-warp step, never fused.
pub(in crate::jit) fn chained(invariant: &[bool], a: &AtomicInst) -> bool {
    a.access.space == Space::Shared
        && !a.spin
        && a.access.vector == 1
        && matches!(a.access.ty.bytes(), 4 | 8)
        && address_invariant(invariant, &a.access.addr)
}

/// The host read-modify-write that one warp-aggregated atomic performs for `a` (see "Warp
/// aggregation" in the module docs), or `None` when `a` always runs lane by lane. The ops are
/// those whose per-lane lowering is that same `atomic_rmw` ([`Translator::atomic_lowering`])
/// and which are associative in the register width, so that `((m op b0) op b1) ... =
/// m op (b0 op b1 ...)`: add (and sub, as `m - (b0 + b1 ...)`), and, or, xor, min, max.
pub(super) fn aggregable(a: &AtomicInst) -> Option<AtomicRmwOp> {
    if a.spin
        || a.access.vector != 1
        || !matches!(a.access.space, Space::Global | Space::Generic)
        || a.src2.is_some()
        || !matches!(a.access.addr, Address::Linear(_) | Address::Indexed(_))
    {
        return None;
    }
    let signed = match a.access.ty {
        Ty::U32 | Ty::B32 | Ty::U64 | Ty::B64 => false,
        Ty::S32 | Ty::S64 => true,
        Ty::U8
        | Ty::U16
        | Ty::S8
        | Ty::S16
        | Ty::B16
        | Ty::F16
        | Ty::BF16
        | Ty::F32
        | Ty::F64
        | Ty::F16x2
        | Ty::BF16x2
        | Ty::B128 => return None,
    };
    Some(match a.op {
        AtomicOp::Add => AtomicRmwOp::Add,
        AtomicOp::Sub => AtomicRmwOp::Sub,
        AtomicOp::And => AtomicRmwOp::And,
        AtomicOp::Or => AtomicRmwOp::Or,
        AtomicOp::Xor => AtomicRmwOp::Xor,
        AtomicOp::Min if signed => AtomicRmwOp::Smin,
        AtomicOp::Min => AtomicRmwOp::Umin,
        AtomicOp::Max if signed => AtomicRmwOp::Smax,
        AtomicOp::Max => AtomicRmwOp::Umax,
        AtomicOp::Inc
        | AtomicOp::Dec
        | AtomicOp::Exch
        | AtomicOp::Cas
        | AtomicOp::Cast
        | AtomicOp::PreDec
        | AtomicOp::FCmpWr => return None,
    })
}

/// Whether a float atomic flushes subnormals (`AtomicInst::ftz`): never, always, or — for a
/// generic address — on the lanes whose address is global (the i8 condition).
#[derive(Clone, Copy)]
pub(super) enum Ftz {
    Off,
    On,
    When(Value),
}

/// The operands of one lane's atomic ([`Translator::atomic_operands`]).
struct LaneAtomic {
    /// The device address (i64).
    addr: Value,
    /// Its host pointer, checked.
    ptr: Value,
    /// Each element's source.
    bs: Vec<Value>,
    /// The swap operand (CAS, CAST, FCMPWR).
    c2: Option<Value>,
    ftz: Ftz,
}

impl<'a, 'f> Translator<'a, 'f> {
    /// The address `access` names for one lane, as an i64: the IR's [`LinearForm`] of the
    /// address in its space, as generated code.
    fn lane_address(&mut self, lane: &Lane, access: &MemAccess) -> Result<Value, JitError> {
        let addr = match &access.addr {
            Address::Linear(addr) => addr,
            Address::Indexed(x) => return Ok(self.indexed_address(lane, access.space, x)),
            // Resolved per lane by `surface.rs`, never as an address.
            Address::Surface(_) => {
                return Err(self.internal("a surface address has no linear form"))
            }
        };
        Ok(match addr.form(access.space) {
            LinearForm::Absolute(a) => self.iconst(I64, a as i64),
            LinearForm::Wrap32 { base, offset } => {
                let v = self.read_reg32(lane, base);
                let s = self.b.ins().iadd_imm_s(v, i64::from(offset as i32));
                self.b.ins().uextend(I64, s)
            }
            LinearForm::Extend32 { base, offset } => {
                let v = self.read_reg32(lane, base);
                let v = self.b.ins().uextend(I64, v);
                self.b.ins().iadd_imm_s(v, offset as i64)
            }
            LinearForm::Pair64 { base, offset } => {
                let v = self.read_reg64(lane, base);
                self.b.ins().iadd_imm_s(v, offset as i64)
            }
        })
    }

    /// [`crate::ir::Op::IsSpace`]: each executing lane's generic address tested against the
    /// window of `space` (the arithmetic of [`crate::ir::resolve`]).
    pub(super) fn translate_is_space(
        &mut self,
        exec: Value,
        space: Space,
        dst: crate::ir::Pred,
        addr: &Address,
    ) -> Result<(), JitError> {
        let access = MemAccess {
            space: Space::Generic,
            ty: crate::ir::Ty::U32,
            vector: 1,
            order: crate::ir::MemOrder::Weak,
            scope: crate::ir::Scope::Cta,
            addr: *addr,
        };
        let zero = self.iconst(I32, 0);
        let mask = self.lane_loop(exec, &[zero], |t, lane, acc| {
            let a = t.lane_address(lane, &access)?;
            let inside = match space {
                Space::Shared => {
                    let offset =
                        t.b.ins()
                            .iadd_imm_s(a, -(crate::ir::GENERIC_SHARED_BASE as i64));
                    t.b.ins().icmp_imm_u(
                        IntCC::UnsignedLessThan,
                        offset,
                        i64::from(crate::ir::SHARED_WINDOW_BYTES),
                    )
                }
                Space::Global | Space::Generic | Space::Const => {
                    t.b.ins()
                        .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, a, GLOBAL_BASE_I64)
                }
            };
            let bit = t.bool_to_lane_bit(inside, lane);
            Ok(vec![t.b.ins().bor(acc[0], bit)])
        })?;
        self.write_pred(dst, exec, mask[0])
    }

    /// [`crate::ir::IndexedAddress::eval`] in generated code.
    fn indexed_address(
        &mut self,
        lane: &Lane,
        space: Space,
        x: &crate::ir::IndexedAddress,
    ) -> Value {
        let word = |t: &mut Self, r: crate::ir::Reg, bits: u8| {
            if bits == 64 {
                t.read_reg64(lane, r)
            } else {
                let v = t.read_reg32(lane, r);
                t.b.ins().uextend(I64, v)
            }
        };
        let base = word(self, x.base, x.base_bits);
        let index = word(self, x.index, x.index_bits);
        let scaled = self.b.ins().ishl_imm_s(base, i64::from(x.scale));
        let sum = self.b.ins().iadd(scaled, index);
        let sum = self.b.ins().iadd_imm_s(sum, x.offset);
        if space == Space::Shared {
            let low = self.b.ins().ireduce(I32, sum);
            self.b.ins().uextend(I64, low)
        } else {
            sum
        }
    }

    /// Checks an access of `size` bytes at device address `addr` in `space` (alignment, then
    /// range) and returns the host pointer. On failure the lane traps.
    pub(super) fn checked_pointer(
        &mut self,
        lane: &Lane,
        space: Space,
        addr: Value,
        size: u32,
    ) -> Result<Value, JitError> {
        self.checked_pointer_in(lane, space, addr, size, false)
    }

    /// [`Self::checked_pointer`]; with `global_only` a generic address must resolve to global
    /// memory (a vector atomic's, `ir::AtomicInst`): one in the shared window is out of range.
    fn checked_pointer_in(
        &mut self,
        lane: &Lane,
        space: Space,
        addr: Value,
        size: u32,
        global_only: bool,
    ) -> Result<Value, JitError> {
        if space == Space::Generic {
            return Ok(self.checked_generic_pointer(lane, addr, size, global_only));
        }
        let (host, bad) = self.pointer_test(space, addr, size, global_only);
        let fault = self.b.create_block();
        let ok = self.b.create_block();
        self.b.set_cold_block(fault);
        self.b.ins().brif(bad, fault, &[], ok, &[]);
        self.b.switch_to_block(fault);
        self.jump_trap(lane.index, space, size, addr);
        self.b.switch_to_block(ok);
        Ok(host)
    }

    /// [`Self::checked_pointer_in`] for a generic address, global first: one compare accepts
    /// an aligned address inside the global arena (an address below `GLOBAL_BASE` wraps to a
    /// huge offset and fails it), and only the rest goes to an out-of-line block that tries
    /// the shared window and else traps. The same outcomes as [`Self::pointer_test`]'s
    /// branch-free select, which keeps both windows' bases and limits live in every lane loop
    /// with a generic access (register pressure that spilled `hist_global`'s `RED` loop to
    /// the stack, so every lane reloaded them after its `lock`).
    fn checked_generic_pointer(
        &mut self,
        lane: &Lane,
        addr: Value,
        size: u32,
        global_only: bool,
    ) -> Value {
        let done = self.b.create_block();
        let host = self.b.append_block_param(done, I64);
        let not_global = self.b.create_block();
        self.b.set_cold_block(not_global);
        let g_off = self.b.ins().iadd_imm_s(addr, -GLOBAL_BASE_I64);
        let (g_ptr, g_bad) = self.window_test(Window::Global, self.flags.state_const, g_off, size);
        self.b
            .ins()
            .brif(g_bad, not_global, &[], done, &[arg(g_ptr)]);

        // Not an aligned global address: a shared one, or a fault (a vector atomic's address
        // may not be shared).
        self.b.switch_to_block(not_global);
        let fault = self.b.create_block();
        self.b.set_cold_block(fault);
        if global_only {
            self.b.ins().jump(fault, &[]);
        } else {
            // An address at or above GLOBAL_BASE (which failed the global test) is at least
            // `GLOBAL_BASE - GENERIC_SHARED_BASE` past the shared image, far beyond any shared
            // limit (asserted beside this file's imports), so this one test also rejects it.
            let s_off = self.b.ins().iadd_imm_s(addr, -(GENERIC_SHARED_BASE as i64));
            let (s_ptr, s_bad) =
                self.window_test(Window::Shared, self.flags.state_cold, s_off, size);
            self.b.ins().brif(s_bad, fault, &[], done, &[arg(s_ptr)]);
        }
        self.b.switch_to_block(fault);
        self.jump_trap(lane.index, Space::Generic, size, addr);
        self.b.switch_to_block(done);
        host
    }

    /// The check of [`Self::checked_pointer_in`] without the branch: the host pointer of an
    /// access of `size` bytes at device address `addr` in `space`, and whether the access
    /// faults (an i8, non-zero when it does; the pointer is then meaningless).
    pub(super) fn pointer_test(
        &mut self,
        space: Space,
        addr: Value,
        size: u32,
        global_only: bool,
    ) -> (Value, Value) {
        let cst = self.flags.state_const;
        match self.placement(space, addr) {
            Placement::One(window, offset) => self.window_test(window, cst, offset, size),
            Placement::Generic {
                is_global,
                global,
                shared,
            } => {
                let (g_ptr, g_bad) = self.window_test(Window::Global, cst, global, size);
                let (s_ptr, s_bad) = self.window_test(Window::Shared, cst, shared, size);
                let s_bad = if global_only {
                    // Every address outside the global arena faults; a misaligned one reports
                    // "misaligned" (the reason follows from the address), as in the interpreter.
                    self.b.ins().iconst(cranelift_codegen::ir::types::I8, 1)
                } else {
                    s_bad
                };
                let bad = self.b.ins().select(is_global, g_bad, s_bad);
                (self.b.ins().select(is_global, g_ptr, s_ptr), bad)
            }
        }
    }

    /// The window a device address `addr` of `space` falls in, and its offset there.
    fn placement(&mut self, space: Space, addr: Value) -> Placement {
        match space {
            Space::Shared => Placement::One(Window::Shared, addr),
            Space::Const => Placement::One(Window::Cbank, addr),
            Space::Global => {
                let offset = self.b.ins().iadd_imm_s(addr, -GLOBAL_BASE_I64);
                Placement::One(Window::Global, offset)
            }
            Space::Generic => {
                // A generic address at or above GLOBAL_BASE is global; one inside the shared
                // window's generic image is shared; anything else is out of range. Faults
                // name the generic space and the generic address, as the interpreter does.
                // Both bases are multiples of 8, so either offset is aligned as the address is.
                let is_global = self.b.ins().icmp_imm_s(
                    IntCC::UnsignedGreaterThanOrEqual,
                    addr,
                    GLOBAL_BASE_I64,
                );
                let global = self.b.ins().iadd_imm_s(addr, -GLOBAL_BASE_I64);
                let shared = self.b.ins().iadd_imm_s(addr, -(GENERIC_SHARED_BASE as i64));
                Placement::Generic {
                    is_global,
                    global,
                    shared,
                }
            }
        }
    }

    /// The host pointer of an access of `size` bytes at byte `offset` of `window`, and whether
    /// it faults (an i8). One compare checks alignment and range together
    /// (`warp_ctx::limits`): the offset rotated right by log2(size) is below the window's
    /// limit for that size exactly when it is aligned and in range. `flags` are those of the
    /// two context loads (`state_cold` on a rarely taken path).
    fn window_test(
        &mut self,
        window: Window,
        flags: MemFlagsData,
        offset: Value,
        size: u32,
    ) -> (Value, Value) {
        let (base_off, limit_off) = window.fields();
        let k = warp_ctx::limit_index(size);
        let host_base = self.b.ins().load(I64, flags, self.ctx, base_off);
        let limit = self
            .b
            .ins()
            .load(I64, flags, self.ctx, limit_off + 8 * k as i32);
        let rotated = if k == 0 {
            offset
        } else {
            self.b.ins().rotr_imm_u(offset, k as i64)
        };
        let bad = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, rotated, limit);
        (self.b.ins().iadd(host_base, offset), bad)
    }

    /// For an access of `size` bytes at device address `addr` in `space` that passes
    /// [`Self::pointer_test`]: how many bytes its window holds after it, from the same limits
    /// (`warp_ctx::limits`: the last valid offset is `(limit - 1) * size`). A run of
    /// contiguous accesses may grow by that much without leaving the window
    /// (`simd/memory.rs`).
    pub(super) fn pointer_room(&mut self, space: Space, addr: Value, size: u32) -> Value {
        match self.placement(space, addr) {
            Placement::One(window, offset) => self.window_room(window, offset, size),
            Placement::Generic {
                is_global,
                global,
                shared,
            } => {
                let g_room = self.window_room(Window::Global, global, size);
                let s_room = self.window_room(Window::Shared, shared, size);
                self.b.ins().select(is_global, g_room, s_room)
            }
        }
    }

    /// [`Self::pointer_room`] at byte `offset` of `window`: `limit * size - size - offset`.
    fn window_room(&mut self, window: Window, offset: Value, size: u32) -> Value {
        let k = warp_ctx::limit_index(size);
        let limit = self.b.ins().load(
            I64,
            self.flags.state_const,
            self.ctx,
            window.fields().1 + 8 * k as i32,
        );
        let bytes = self.b.ins().ishl_imm_s(limit, k as i64);
        let end = self.b.ins().iadd_imm_s(bytes, -i64::from(size));
        self.b.ins().isub(end, offset)
    }

    fn device_flags(&self, space: Space) -> MemFlagsData {
        if space == Space::Const {
            self.flags.cbank
        } else {
            self.flags.device
        }
    }

    /// `ld`: every scope is coherent on one host (module docs), so `access.scope` needs nothing.
    pub(super) fn translate_load(
        &mut self,
        g: Guard,
        access: &'a MemAccess,
        dst: Reg,
    ) -> Result<Flow, JitError> {
        let (ty, order) = (access.ty, access.order);
        if g.is_never() {
            return Ok(Flow::Next(self.mask));
        }
        let words = ty.regs();
        if order == MemOrder::SeqCst {
            // The ABI's seq_cst load is `fence.sc; ld.acquire`.
            self.b.ins().fence();
        }
        let exec = self.exec_mask(g)?;
        self.lane_loop(exec, &[], |t, lane, _| {
            let values = t.load_lane(lane, access)?;
            for (i, v) in (0..).zip(values) {
                t.write_reg(lane, dst.word(i * words), words, v);
            }
            Ok(vec![])
        })?;
        match order {
            MemOrder::Weak | MemOrder::Relaxed => {}
            // Acquire (and anything stronger): no later access may be moved above the load.
            // Volatile: never merged or elided.
            MemOrder::Volatile
            | MemOrder::Acquire
            | MemOrder::Release
            | MemOrder::AcqRel
            | MemOrder::SeqCst => {
                self.b.ins().sequence_point();
            }
        }
        Ok(Flow::Next(self.mask))
    }

    /// One lane's load of `access`: its address, checked (the lane traps if it fails), then
    /// one host load per element, each extended to its register value (an i32, or an i64 for
    /// 64-bit types). A vector access is checked once, as a whole.
    pub(super) fn load_lane(
        &mut self,
        lane: &Lane,
        access: &MemAccess,
    ) -> Result<Vec<Value>, JitError> {
        let a = self.lane_address(lane, access)?;
        let p = self.checked_pointer(lane, access.space, a, access.bytes())?;
        let flags = self.device_flags(access.space);
        let elem = access.ty.bytes() as i32;
        (0..i32::from(access.vector))
            .map(|i| self.load_element(access.ty, flags, p, i * elem))
            .collect()
    }

    /// One lane's store of `access` of the element values `values` (register values, as
    /// [`Self::load_lane`] gives them): its address, checked as a whole, then one host store
    /// per element.
    pub(super) fn store_lane(
        &mut self,
        lane: &Lane,
        access: &MemAccess,
        values: &[Value],
    ) -> Result<(), JitError> {
        let a = self.lane_address(lane, access)?;
        let p = self.checked_pointer(lane, access.space, a, access.bytes())?;
        let flags = self.device_flags(access.space);
        let elem = access.ty.bytes();
        for (i, &v) in (0..).zip(values) {
            self.store_element(elem, flags, v, p, i * elem as i32);
        }
        Ok(())
    }

    /// One element of `ty` loaded from `p + at`, extended to its register value (an i32, or an
    /// i64 for 64-bit types).
    pub(super) fn load_element(
        &mut self,
        ty: Ty,
        flags: MemFlagsData,
        p: Value,
        at: i32,
    ) -> Result<Value, JitError> {
        Ok(match ty {
            Ty::U8 => self.b.ins().uload8(I32, flags, p, at),
            Ty::S8 => self.b.ins().sload8(I32, flags, p, at),
            Ty::U16 | Ty::B16 | Ty::F16 | Ty::BF16 => self.b.ins().uload16(I32, flags, p, at),
            Ty::S16 => self.b.ins().sload16(I32, flags, p, at),
            Ty::U32 | Ty::S32 | Ty::B32 | Ty::F32 | Ty::F16x2 | Ty::BF16x2 => {
                self.b.ins().load(I32, flags, p, at)
            }
            Ty::U64 | Ty::S64 | Ty::B64 | Ty::F64 => self.b.ins().load(I64, flags, p, at),
            Ty::B128 => {
                return Err(self.unsupported("a b128 load (validation admits b128 in atomics only)"))
            }
        })
    }

    /// The low `elem` bytes of `v` stored at `p + at`.
    pub(super) fn store_element(
        &mut self,
        elem: u32,
        flags: MemFlagsData,
        v: Value,
        p: Value,
        at: i32,
    ) {
        match elem {
            1 => self.b.ins().istore8(flags, v, p, at),
            2 => self.b.ins().istore16(flags, v, p, at),
            _ => self.b.ins().store(flags, v, p, at),
        };
    }

    /// `st`: as [`Self::translate_load`] for the scope.
    pub(super) fn translate_store(
        &mut self,
        g: Guard,
        access: &'a MemAccess,
        src: Operand,
    ) -> Result<Flow, JitError> {
        let (space, ty, order) = (access.space, access.ty, access.order);
        if g.is_never() {
            return Ok(Flow::Next(self.mask));
        }
        debug_assert!(
            space != Space::Const,
            "validation rejects stores to the constant bank"
        );
        let words = ty.regs();
        match order {
            MemOrder::Weak | MemOrder::Relaxed => {}
            // Release (and stronger): no earlier access may be moved below the store.
            MemOrder::Volatile
            | MemOrder::Acquire
            | MemOrder::Release
            | MemOrder::AcqRel
            | MemOrder::SeqCst => {
                self.b.ins().sequence_point();
            }
        }
        let exec = self.exec_mask(g)?;
        if ty == Ty::B128 {
            return Err(self.unsupported("a b128 store (validation admits b128 in atomics only)"));
        }
        let n = u16::from(access.vector);
        self.lane_loop(exec, &[], |t, lane, _| {
            let mut values = Vec::with_capacity(usize::from(n));
            for i in 0..n {
                values.push(t.read_operand(lane, src.word(i * words), words)?);
            }
            t.store_lane(lane, access, &values)?;
            Ok(vec![])
        })?;
        match order {
            MemOrder::Weak | MemOrder::Relaxed | MemOrder::Release => {}
            MemOrder::Volatile | MemOrder::Acquire | MemOrder::AcqRel => {
                self.b.ins().sequence_point();
            }
            // An sc store is `st; mfence` on x86-64.
            MemOrder::SeqCst => {
                self.b.ins().fence();
            }
        }
        Ok(Flow::Next(self.mask))
    }

    /// `MEMBAR` / `fence`: see the order table in the module docs.
    pub(super) fn translate_fence(
        &mut self,
        g: Guard,
        order: MemOrder,
        _scope: Scope,
    ) -> Result<Flow, JitError> {
        if g.is_never() {
            return Ok(Flow::Next(self.mask));
        }
        // A guarded fence is executed whenever any lane executes it; fencing when no lane does
        // is also harmless (only stronger), so the guard is not evaluated.
        match order {
            MemOrder::SeqCst => {
                self.b.ins().fence();
            }
            MemOrder::Acquire | MemOrder::Release | MemOrder::AcqRel => {
                self.b.ins().sequence_point();
            }
            // Not valid fence orders (rejected by validation); a compiler barrier is at least as
            // strong as any of them.
            MemOrder::Weak | MemOrder::Relaxed | MemOrder::Volatile => {
                self.b.ins().sequence_point();
            }
        }
        Ok(Flow::Next(self.mask))
    }

    pub(super) fn atomic_lowering(&self, a: &AtomicInst) -> Result<AtomicLowering, JitError> {
        let int = matches!(
            a.access.ty,
            Ty::U16 | Ty::S16 | Ty::B16 | Ty::U32 | Ty::S32 | Ty::B32 | Ty::U64 | Ty::S64 | Ty::B64
        );
        let float = matches!(a.access.ty, Ty::F32 | Ty::F64);
        // 16-bit floats and packed halves: arithmetic through `rmw_value`, bit ops natively.
        let half = matches!(a.access.ty, Ty::F16 | Ty::BF16 | Ty::F16x2 | Ty::BF16x2);
        let signed = a.access.ty.is_signed_int();
        let bad = || self.unsupported(format!("atomic {} on {}", a.op.name(), a.access.ty.name()));
        if a.access.ty == Ty::B128 {
            // One `lock cmpxchg16b` (a loop of it for the exchange): Cranelift lowers the i128
            // atomics so when the ISA has `has_cmpxchg16b`, which `cranelift_native` sets
            // exactly when the host has it, as `has_cas128` asks.
            if !crate::exec::memory::has_cas128() {
                return Err(self.unsupported(
                    "128-bit atomics need a host 16-byte compare-and-swap (x86-64 cmpxchg16b)",
                ));
            }
            return match a.op {
                AtomicOp::Exch => Ok(AtomicLowering::Rmw(AtomicRmwOp::Xchg)),
                AtomicOp::Cas => Ok(AtomicLowering::Cas { store_flag: false }),
                AtomicOp::Add
                | AtomicOp::Sub
                | AtomicOp::Min
                | AtomicOp::Max
                | AtomicOp::Inc
                | AtomicOp::Dec
                | AtomicOp::And
                | AtomicOp::Or
                | AtomicOp::Xor
                | AtomicOp::Cast
                | AtomicOp::PreDec
                | AtomicOp::FCmpWr => Err(bad()),
            };
        }
        Ok(match a.op {
            AtomicOp::Add if int => AtomicLowering::Rmw(AtomicRmwOp::Add),
            AtomicOp::Add if float => AtomicLowering::Loop(LoopOp::FloatAdd),
            AtomicOp::Add | AtomicOp::Min | AtomicOp::Max if half => {
                AtomicLowering::Loop(LoopOp::Call)
            }
            AtomicOp::Sub if int => AtomicLowering::Rmw(AtomicRmwOp::Sub),
            AtomicOp::Min if int => AtomicLowering::Rmw(if signed {
                AtomicRmwOp::Smin
            } else {
                AtomicRmwOp::Umin
            }),
            AtomicOp::Min if float => AtomicLowering::Loop(LoopOp::FloatMin),
            AtomicOp::Max if int => AtomicLowering::Rmw(if signed {
                AtomicRmwOp::Smax
            } else {
                AtomicRmwOp::Umax
            }),
            AtomicOp::Max if float => AtomicLowering::Loop(LoopOp::FloatMax),
            AtomicOp::Inc if int => AtomicLowering::Loop(LoopOp::Inc),
            AtomicOp::Dec if int => AtomicLowering::Loop(LoopOp::Dec),
            AtomicOp::And if int => AtomicLowering::Rmw(AtomicRmwOp::And),
            AtomicOp::Or if int => AtomicLowering::Rmw(AtomicRmwOp::Or),
            AtomicOp::Xor if int => AtomicLowering::Rmw(AtomicRmwOp::Xor),
            AtomicOp::Exch if int || float || half => AtomicLowering::Rmw(AtomicRmwOp::Xchg),
            AtomicOp::Cas if int || float || half => AtomicLowering::Cas { store_flag: false },
            AtomicOp::Cast if int || float || half => AtomicLowering::Cas { store_flag: true },
            AtomicOp::FCmpWr if float => AtomicLowering::Loop(LoopOp::FloatCmpWrite),
            AtomicOp::FCmpWr if a.access.ty == Ty::F16 => {
                AtomicLowering::Loop(LoopOp::HalfCmpWrite)
            }
            AtomicOp::PreDec => {
                return Err(
                    self.unsupported("vISA predec (its formula is fixed with the vISA dialect)")
                )
            }
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
            | AtomicOp::Cast
            | AtomicOp::FCmpWr => return Err(bad()),
        })
    }

    /// `ATOMS`/`ATOMG`/`RED`: per executing lane in lane order, check the address, perform one
    /// host atomic read-modify-write, write the result. `CAST.SPIN` groups lanes by bank in
    /// generated code: a loop-carried mask of claimed banks; the first (lowest) executing lane of
    /// each bank attempts, later lanes of that bank return 0 without touching memory.
    pub(super) fn translate_atomic(
        &mut self,
        g: Guard,
        a: &'a AtomicInst,
    ) -> Result<Flow, JitError> {
        // Orders: every lowering below is a `lock`-prefixed instruction, sequentially
        // consistent, which is at least as strong as any order `a.order` names. Scopes: one
        // coherent host memory (module docs).
        if g.is_never() {
            return Ok(Flow::Next(self.mask));
        }
        debug_assert!(
            a.access.space != Space::Const,
            "validation rejects atomics on the constant bank"
        );
        let lowering = self.atomic_lowering(a)?;
        let words = a.access.ty.regs();
        let src2 = a.src2;
        debug_assert_eq!(
            src2.is_some(),
            a.op.has_swap_operand(),
            "validation: a swap operand exactly for CAS, CAST and FCMPWR"
        );
        let spin = a.spin;
        debug_assert!(
            !spin || a.op == AtomicOp::Cast,
            "validation admits .SPIN on CAST only"
        );
        let exec = self.exec_mask(g)?;
        // Counted once per warp-instruction, after the lanes (a fused region counts after its
        // loop); a trapping lane's fault path hands the executing lanes to the trap exit, which
        // counts the lanes before it (`JitKernel::run_group`); a CAST.SPIN lane counts only
        // when it attempts.
        // A vector atomic counts one atomic per element.
        let n = u16::from(a.access.vector);
        if spin && n > 1 {
            return Err(self.unsupported(".SPIN on a vector atomic (validation rejects it)"));
        }
        if !spin {
            self.atomic_exec = Some((a.op, exec, u32::from(n)));
        }
        let it: Type = match words {
            4 => I128,
            2 => I64,
            _ => I32,
        };
        let invariant = self.info.invariant();
        if self.fused.is_none() && chained(invariant, a) {
            return self.once_for_the_warp(a, exec, |t, first, addr| {
                t.private_chain(a, &lowering, exec, it, first, addr)
            });
        }
        // Warp aggregation: with an invariant address the whole-warp path alone; otherwise
        // the whole-warp path or on to the per-lane loop below in the block it leaves open,
        // both ending at `agg_join`.
        let agg_join = match aggregated(invariant, a, self.aggregate) {
            Some(op) if self.fused.is_none() => {
                if address_invariant(invariant, &a.access.addr) {
                    return self.once_for_the_warp(a, exec, |t, first, addr| {
                        t.uniform_atomic(a, op, exec, it, first, addr)
                    });
                }
                Some(self.aggregated_atomic(a, op, exec, it)?)
            }
            _ => None,
        };
        let zero = self.iconst(I32, 0);
        let carried: Vec<Value> = if spin { vec![zero] } else { vec![] };
        let result = self.lane_loop(exec, &carried, |t, lane, c| {
            if !spin {
                let results = t.atomic_lane(lane, a, &lowering, it)?;
                for (i, r) in (0..n).zip(results) {
                    t.write_reg(lane, a.dst.word(i * words), words, r);
                }
                return Ok(vec![]);
            }
            let LaneAtomic {
                addr,
                ptr,
                bs,
                c2,
                ftz,
            } = t.atomic_operands(lane, a)?;
            let b = bs[0];
            // CAST.SPIN: bank = (address / 4) mod 32.
            let claimed = c[0];
            let word = t.b.ins().ushr_imm_s(addr, 2);
            let word = t.b.ins().ireduce(I32, word);
            let bank = t.b.ins().band_imm_s(word, 31);
            let one = t.iconst(I32, 1);
            let bit = t.b.ins().ishl(one, bank);
            let taken = t.b.ins().band(claimed, bit);
            let fail_blk = t.b.create_block();
            let try_blk = t.b.create_block();
            let join = t.b.create_block();
            t.b.append_block_param(join, it);
            t.b.append_block_param(join, I32);
            t.b.ins().brif(taken, fail_blk, &[], try_blk, &[]);

            t.b.switch_to_block(fail_blk);
            t.stat_incr(off::STAT_SPIN_FAST_FAILS);
            let zero = t.iconst(it, 0);
            t.b.ins().jump(join, &[arg(zero), arg(claimed)]);

            t.b.switch_to_block(try_blk);
            let now_claimed = t.b.ins().bor(claimed, bit);
            t.stat_incr(off::stat_atomic(a.op));
            let r = t.perform_atomic(a, &lowering, it, ptr, b, c2, ftz);
            t.b.ins().jump(join, &[arg(r), arg(now_claimed)]);

            t.b.switch_to_block(join);
            let p = t.b.block_params(join).to_vec();
            t.write_reg(lane, a.dst, words, p[0]);
            Ok(vec![p[1]])
        });
        self.atomic_exec = None;
        result?;
        if let Some(join) = agg_join {
            self.b.ins().jump(join, &[]);
            self.b.switch_to_block(join);
        }
        if !spin && self.fused.is_none() {
            self.count_atomics(a.op, exec, n);
        }
        if !a.performed.is_pt() {
            // `ir::AtomicInst::performed`: always true in the executing lanes.
            self.write_pred(a.performed, exec, exec)?;
        }
        Ok(Flow::Next(self.mask))
    }

    /// The operands of one lane's atomic `a` (see [`LaneAtomic`]): its address checked (a
    /// fault traps here, with the lanes before it done), then its sources read.
    fn atomic_operands(&mut self, lane: &Lane, a: &AtomicInst) -> Result<LaneAtomic, JitError> {
        let n = u16::from(a.access.vector);
        let words = a.access.ty.regs();
        // `ir::AtomicInst`: a generic vector atomic must land in global memory.
        let global_only = n > 1 && a.access.space == Space::Generic;
        let addr = self.lane_address(lane, &a.access)?;
        let ptr =
            self.checked_pointer_in(lane, a.access.space, addr, a.access.bytes(), global_only)?;
        let mut bs = Vec::with_capacity(usize::from(n));
        for i in 0..n {
            bs.push(self.read_operand(lane, a.src.word(i * words), words)?);
        }
        let c2 = match a.src2 {
            Some(s) => Some(self.read_operand(lane, s, words)?),
            None => None,
        };
        let ftz = if !a.ftz {
            Ftz::Off
        } else if a.access.space == Space::Generic {
            // The IR's generic FTZ rule: flush only where the address resolves to global
            // memory (the checked address is in exactly one of the two windows).
            Ftz::When(self.b.ins().icmp_imm_s(
                IntCC::UnsignedGreaterThanOrEqual,
                addr,
                GLOBAL_BASE_I64,
            ))
        } else {
            Ftz::On
        };
        Ok(LaneAtomic {
            addr,
            ptr,
            bs,
            c2,
            ftz,
        })
    }

    /// One lane's atomic `a` (not `.SPIN`): element by element in order, each its own host
    /// atomic (`lowering`, in the register type `it`). Returns the results, one per element,
    /// for the caller to write once every element is done (a destination may be a later
    /// operand).
    pub(super) fn atomic_lane(
        &mut self,
        lane: &Lane,
        a: &AtomicInst,
        lowering: &AtomicLowering,
        it: Type,
    ) -> Result<Vec<Value>, JitError> {
        let elem = a.access.ty.bytes();
        let LaneAtomic {
            ptr, bs, c2, ftz, ..
        } = self.atomic_operands(lane, a)?;
        if super::simd::four_element_float(a) {
            // Four `f32` elements in one 16-byte CAS (`simd/atomic.rs`).
            return Ok(self.four_element_float_cas(a, ptr, &bs, ftz));
        }
        let mut results = Vec::with_capacity(bs.len());
        for (i, &b) in bs.iter().enumerate() {
            let p = if i == 0 {
                ptr
            } else {
                self.b.ins().iadd_imm_s(ptr, (i as u32 * elem) as i64)
            };
            results.push(self.perform_atomic(a, lowering, it, p, b, c2, ftz));
        }
        Ok(results)
    }

    /// The warp-aggregated path of atomic `a` (host op `op`, register type `it`; see "Warp
    /// aggregation" in the module docs). Emits: with at least two executing lanes, one pass
    /// over them that compares each address with the lowest lane's and combines the operands;
    /// if all are equal, the address check at the lowest lane, one host atomic, and (unless
    /// the result is discarded) a second pass writing each lane its running value; then a jump
    /// to the returned join block. Leaves the builder in the block where the per-lane loop
    /// must run (fewer than two lanes, or different addresses), which must also end by
    /// jumping to the join block.
    fn aggregated_atomic(
        &mut self,
        a: &'a AtomicInst,
        op: AtomicRmwOp,
        exec: Value,
        it: Type,
    ) -> Result<cranelift_codegen::ir::Block, JitError> {
        let words = a.access.ty.regs();
        let join = self.b.create_block();
        let per_lane = self.b.create_block();
        let check = self.b.create_block();
        let whole = self.b.create_block();
        let rest = self.b.ins().iadd_imm_s(exec, -1);
        let two_or_more = self.b.ins().band(exec, rest);
        self.b.ins().brif(two_or_more, check, &[], per_lane, &[]);

        self.b.switch_to_block(check);
        let first = self.lane_at(exec);
        let addr0 = self.lane_address(&first, &a.access)?;
        let yes = self.b.ins().iconst(cranelift_codegen::ir::types::I8, 1);
        let identity = self.aggregation_identity(op, it);
        let combined = self.lane_loop(exec, &[yes, identity], |t, lane, c| {
            let addr = t.lane_address(lane, &a.access)?;
            let eq = t.b.ins().icmp(IntCC::Equal, addr, addr0);
            let same = t.b.ins().band(c[0], eq);
            let b = t.read_operand(lane, a.src, words)?;
            // Sub combines by adding: m - b0 - b1 ... = m - (b0 + b1 ...) (mod 2^n).
            let acc_op = if op == AtomicRmwOp::Sub {
                AtomicRmwOp::Add
            } else {
                op
            };
            let acc = t.rmw_new_value(acc_op, c[1], b);
            Ok(vec![same, acc])
        })?;
        self.b.ins().brif(combined[0], whole, &[], per_lane, &[]);

        self.b.switch_to_block(whole);
        // Every lane's address is `addr0`: the per-lane loop would trap at the lowest lane,
        // with this address, before any lane's effect; so does this check.
        let ptr =
            self.checked_pointer_in(&first, a.access.space, addr0, a.access.bytes(), false)?;
        let flags = MemFlagsData::trusted().with_alias_region(self.flags.device.alias_region());
        let old = self.b.ins().atomic_rmw(it, flags, op, ptr, combined[1]);
        self.lane_results(a, op, exec, old)?;
        self.b.ins().jump(join, &[]);

        self.b.switch_to_block(per_lane);
        Ok(join)
    }

    /// The frame of a whole-warp atomic (not fused, not `.SPIN`): emits `body` with the lowest
    /// executing lane and its address of `a`, run only when some lane executes; then counts the
    /// executing lanes and sets `a`'s `performed` predicate in them, as the per-lane path does
    /// after its loop.
    fn once_for_the_warp(
        &mut self,
        a: &'a AtomicInst,
        exec: Value,
        body: impl FnOnce(&mut Self, &Lane, Value) -> Result<(), JitError>,
    ) -> Result<Flow, JitError> {
        let run = self.b.create_block();
        let join = self.b.create_block();
        self.b.ins().brif(exec, run, &[], join, &[]);
        self.b.switch_to_block(run);
        let first = self.lane_at(exec);
        let addr = self.lane_address(&first, &a.access)?;
        let result = body(self, &first, addr);
        self.atomic_exec = None;
        result?;
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
        self.count_atomics(a.op, exec, u16::from(a.access.vector));
        if !a.performed.is_pt() {
            // `ir::AtomicInst::performed`: always true in the executing lanes.
            self.write_pred(a.performed, exec, exec)?;
        }
        Ok(Flow::Next(self.mask))
    }

    /// The warp-aggregated path of atomic `a` (host op `op`, register type `it`) whose address
    /// is warp-invariant: every executing lane names the lowest one's address, known without a
    /// test. Runs inside [`Self::once_for_the_warp`] (`first` is the lowest executing lane,
    /// `addr` its address): the address is checked at the lowest lane (where the per-lane loop
    /// would trap first, with the same address), the lanes' operands are combined in lane
    /// order (with an invariant operand `b` and `k` executing lanes, without a loop: `k·b` for
    /// add and sub, `b` for and, or, min and max, `b` or 0 by the parity of `k` for xor), one
    /// host atomic applies the combination, and unless the result is discarded each lane gets
    /// its running value in lane order.
    fn uniform_atomic(
        &mut self,
        a: &'a AtomicInst,
        op: AtomicRmwOp,
        exec: Value,
        it: Type,
        first: &Lane,
        addr: Value,
    ) -> Result<(), JitError> {
        let words = a.access.ty.regs();
        let combined = if operand_invariant(self.info.invariant(), a.src, words) {
            let b = self.read_operand(first, a.src, words)?;
            let k = self.b.ins().popcnt(exec);
            let k = if it == I64 {
                self.b.ins().uextend(I64, k)
            } else {
                k
            };
            match op {
                AtomicRmwOp::Add | AtomicRmwOp::Sub => self.b.ins().imul(b, k),
                AtomicRmwOp::Xor => {
                    let odd = self.b.ins().band_imm_s(k, 1);
                    let zero = self.iconst(it, 0);
                    self.b.ins().select(odd, b, zero)
                }
                AtomicRmwOp::And
                | AtomicRmwOp::Or
                | AtomicRmwOp::Umin
                | AtomicRmwOp::Umax
                | AtomicRmwOp::Smin
                | AtomicRmwOp::Smax => b,
                AtomicRmwOp::Nand | AtomicRmwOp::Xchg => {
                    return Err(self.internal("a non-associative op took the aggregated path"))
                }
            }
        } else {
            let identity = self.aggregation_identity(op, it);
            // Sub combines by adding: m - b0 - b1 ... = m - (b0 + b1 ...) (mod 2^n).
            let acc_op = if op == AtomicRmwOp::Sub {
                AtomicRmwOp::Add
            } else {
                op
            };
            self.lane_loop(exec, &[identity], |t, lane, c| {
                let b = t.read_operand(lane, a.src, words)?;
                Ok(vec![t.rmw_new_value(acc_op, c[0], b)])
            })?[0]
        };
        let ptr = self.checked_pointer_in(first, a.access.space, addr, a.access.bytes(), false)?;
        let flags = MemFlagsData::trusted().with_alias_region(self.flags.device.alias_region());
        let old = self.b.ins().atomic_rmw(it, flags, op, ptr, combined);
        self.lane_results(a, op, exec, old)
    }

    /// After a warp-aggregated atomic returned `old`: each executing lane's result in lane
    /// order, `old op b[lane0] op ... op b[lane-1]`, written to the destination (nothing when
    /// the result is discarded).
    fn lane_results(
        &mut self,
        a: &'a AtomicInst,
        op: AtomicRmwOp,
        exec: Value,
        old: Value,
    ) -> Result<(), JitError> {
        if a.dst.is_rz() {
            return Ok(());
        }
        let words = a.access.ty.regs();
        self.lane_loop(exec, &[old], |t, lane, c| {
            // The operand is read before the lane's destination is written, as the per-lane
            // path does (the destination may be the operand register).
            let b = t.read_operand(lane, a.src, words)?;
            t.write_reg(lane, a.dst, words, c[0]);
            Ok(vec![t.rmw_new_value(op, c[0], b)])
        })?;
        Ok(())
    }

    /// The value `x` with `x op b = b` for every `b`: where a combination of lanes starts.
    fn aggregation_identity(&mut self, op: AtomicRmwOp, it: Type) -> Value {
        let identity = match op {
            AtomicRmwOp::And | AtomicRmwOp::Umin => -1,
            AtomicRmwOp::Smin if it == I32 => i64::from(i32::MAX),
            AtomicRmwOp::Smin => i64::MAX,
            AtomicRmwOp::Smax if it == I32 => i64::from(i32::MIN),
            AtomicRmwOp::Smax => i64::MIN,
            AtomicRmwOp::Add
            | AtomicRmwOp::Sub
            | AtomicRmwOp::Nand
            | AtomicRmwOp::Or
            | AtomicRmwOp::Xor
            | AtomicRmwOp::Xchg
            | AtomicRmwOp::Umax => 0,
        };
        self.iconst(it, identity)
    }

    /// `old op b`: the new memory value of host read-modify-write `op`.
    fn rmw_new_value(&mut self, op: AtomicRmwOp, old: Value, b: Value) -> Value {
        match op {
            AtomicRmwOp::Add => self.b.ins().iadd(old, b),
            AtomicRmwOp::Sub => self.b.ins().isub(old, b),
            AtomicRmwOp::And => self.b.ins().band(old, b),
            AtomicRmwOp::Nand => {
                let and = self.b.ins().band(old, b);
                self.b.ins().bnot(and)
            }
            AtomicRmwOp::Or => self.b.ins().bor(old, b),
            AtomicRmwOp::Xor => self.b.ins().bxor(old, b),
            AtomicRmwOp::Xchg => b,
            AtomicRmwOp::Umin => self.b.ins().umin(old, b),
            AtomicRmwOp::Umax => self.b.ins().umax(old, b),
            AtomicRmwOp::Smin => self.b.ins().smin(old, b),
            AtomicRmwOp::Smax => self.b.ins().smax(old, b),
        }
    }

    /// One lane's read-modify-write at a checked pointer; returns the value for `dst`. `it`
    /// is the register type (i32 or i64); a 2-byte type is performed on i16 memory and its
    /// result extended to the register by the type's signedness.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn perform_atomic(
        &mut self,
        a: &AtomicInst,
        lowering: &AtomicLowering,
        it: Type,
        ptr: Value,
        b: Value,
        c: Option<Value>,
        ftz: Ftz,
    ) -> Value {
        if a.access.ty.bytes() == 2 {
            let b16 = self.b.ins().ireduce(I16, b);
            let c16 = c.map(|c| self.b.ins().ireduce(I16, c));
            let r = self.perform_atomic_in(a, lowering, I16, ptr, b16, c16, ftz);
            return if a.access.ty.is_signed_int() {
                self.b.ins().sextend(it, r)
            } else {
                self.b.ins().uextend(it, r)
            };
        }
        self.perform_atomic_in(a, lowering, it, ptr, b, c, ftz)
    }

    /// [`Self::perform_atomic`] with operands already in the memory type `it`.
    #[allow(clippy::too_many_arguments)]
    fn perform_atomic_in(
        &mut self,
        a: &AtomicInst,
        lowering: &AtomicLowering,
        it: Type,
        ptr: Value,
        b: Value,
        c: Option<Value>,
        ftz: Ftz,
    ) -> Value {
        if a.access.space == Space::Shared {
            return self.private_rmw(a, lowering, it, ptr, b, c, ftz);
        }
        // Atomics are aligned (checked) and cannot fault (range checked); `trusted` flags.
        let flags = MemFlagsData::trusted().with_alias_region(self.flags.device.alias_region());
        match lowering {
            AtomicLowering::Rmw(op) => self.b.ins().atomic_rmw(it, flags, *op, ptr, b),
            AtomicLowering::Cas { store_flag } => {
                let new = c.unwrap_or(b);
                let old = self.b.ins().atomic_cas(flags, ptr, b, new);
                let failed = self.b.ins().icmp(IntCC::NotEqual, old, b);
                let failed = self.b.ins().uextend(I64, failed);
                self.stat_add(off::STAT_CAS_FAILURES, failed);
                if *store_flag {
                    let stored = self.b.ins().icmp(IntCC::Equal, old, b);
                    self.b.ins().uextend(it, stored)
                } else {
                    old
                }
            }
            AtomicLowering::Loop(op) => self.cas_loop(a, *op, it, flags, ptr, b, c, ftz),
        }
    }

    /// A read-modify-write on CTA-private memory (the shared window): a plain load, the new
    /// value computed exactly as the atomic lowering would, and a plain store. See "Shared
    /// memory" in the module docs for why no host atomic is needed.
    #[allow(clippy::too_many_arguments)]
    fn private_rmw(
        &mut self,
        a: &AtomicInst,
        lowering: &AtomicLowering,
        it: Type,
        ptr: Value,
        b: Value,
        c: Option<Value>,
        ftz: Ftz,
    ) -> Value {
        let flags = self.flags.device;
        let old = self.b.ins().load(it, flags, ptr, 0);
        let (new, result, failed) = self.private_new_value(a, lowering, it, old, b, c, ftz);
        if let Some(failed) = failed {
            self.stat_add(off::STAT_CAS_FAILURES, failed);
        }
        // A failed compare stores the old value back: nobody else can see the window.
        self.b.ins().store(flags, new, ptr, 0);
        result
    }

    /// The new memory value and the result of read-modify-write `a` (lowered as `lowering`,
    /// in the memory type `it`) on the shared-window value `old`, and for a CAS whether the
    /// compare failed (an `I64` 0 or 1, to count in `Stats::cas_failures`).
    #[allow(clippy::too_many_arguments)]
    fn private_new_value(
        &mut self,
        a: &AtomicInst,
        lowering: &AtomicLowering,
        it: Type,
        old: Value,
        b: Value,
        c: Option<Value>,
        ftz: Ftz,
    ) -> (Value, Value, Option<Value>) {
        match lowering {
            AtomicLowering::Rmw(op) => (self.rmw_new_value(*op, old, b), old, None),
            AtomicLowering::Cas { store_flag } => {
                let swap = c.unwrap_or(b);
                let stored = self.b.ins().icmp(IntCC::Equal, old, b);
                let failed = self.b.ins().icmp(IntCC::NotEqual, old, b);
                let failed = self.b.ins().uextend(I64, failed);
                let new = self.b.ins().select(stored, swap, old);
                let result = if *store_flag {
                    self.b.ins().uextend(it, stored)
                } else {
                    old
                };
                (new, result, Some(failed))
            }
            AtomicLowering::Loop(op) => (self.loop_new_value(a, *op, old, b, c, ftz), old, None),
        }
    }

    /// Atomic `a` on one word of the shared window for the whole warp ([`chained`]; see
    /// "Shared memory" in the module docs): the address checked once, at the lowest executing
    /// lane (where the per-lane loop would trap first, with the same address, before any lane
    /// had an effect); the word loaded once; each lane's read-modify-write computed in lane
    /// order on the running value, its result written to its destination; the last value
    /// stored once. Exactly the per-lane loop's effects, with the word in a host register
    /// between lanes instead of in memory (a lock handed from lane to lane of a warp no
    /// longer waits on a store and a load per lane). Runs inside [`Self::once_for_the_warp`]
    /// (`first` is the lowest executing lane, `addr` its address).
    fn private_chain(
        &mut self,
        a: &'a AtomicInst,
        lowering: &AtomicLowering,
        exec: Value,
        it: Type,
        first: &Lane,
        addr: Value,
    ) -> Result<(), JitError> {
        let words = a.access.ty.regs();
        let ptr = self.checked_pointer_in(first, Space::Shared, addr, a.access.bytes(), false)?;
        let flags = self.flags.device;
        let old = self.b.ins().load(it, flags, ptr, 0);
        let ftz = if a.ftz { Ftz::On } else { Ftz::Off };
        let no_failures = self.iconst(I64, 0);
        let last = self.lane_loop(exec, &[old, no_failures], |t, lane, c| {
            let b = t.read_operand(lane, a.src, words)?;
            let c2 = match a.src2 {
                Some(s) => Some(t.read_operand(lane, s, words)?),
                None => None,
            };
            let (new, result, failed) = t.private_new_value(a, lowering, it, c[0], b, c2, ftz);
            t.write_reg(lane, a.dst, words, result);
            let failures = match failed {
                Some(failed) => t.b.ins().iadd(c[1], failed),
                None => c[1],
            };
            Ok(vec![new, failures])
        })?;
        self.b.ins().store(flags, last[0], ptr, 0);
        if matches!(lowering, AtomicLowering::Cas { .. }) {
            self.stat_add(off::STAT_CAS_FAILURES, last[1]);
        }
        Ok(())
    }

    /// `old = load; loop { new = f(old); actual = cas(old, new); if actual == old break;
    /// old = actual }`, returning `old`. The first load is a plain aligned load (only a guess:
    /// the CAS decides).
    #[allow(clippy::too_many_arguments)]
    fn cas_loop(
        &mut self,
        a: &AtomicInst,
        op: LoopOp,
        it: Type,
        flags: MemFlagsData,
        ptr: Value,
        b: Value,
        c: Option<Value>,
        ftz: Ftz,
    ) -> Value {
        let first = self.b.ins().load(it, self.flags.device, ptr, 0);
        let head = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(head, it);
        self.b.append_block_param(done, it);
        self.b.ins().jump(head, &[arg(first)]);
        self.b.switch_to_block(head);
        let old = self.b.block_params(head)[0];
        let new = self.loop_new_value(a, op, old, b, c, ftz);
        let actual = self.b.ins().atomic_cas(flags, ptr, old, new);
        let same = self.b.ins().icmp(IntCC::Equal, actual, old);
        self.b
            .ins()
            .brif(same, done, &[arg(old)], head, &[arg(actual)]);
        self.b.switch_to_block(done);
        self.b.block_params(done)[0]
    }

    /// The new memory value of a CAS-loop op, exactly as the documents define it.
    fn loop_new_value(
        &mut self,
        a: &AtomicInst,
        op: LoopOp,
        old: Value,
        b: Value,
        c: Option<Value>,
        ftz: Ftz,
    ) -> Value {
        let ty = a.access.ty;
        match op {
            LoopOp::Inc => {
                // M = (M >= b) ? 0 : M + 1 (unsigned).
                let ge = self.b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, old, b);
                let inc = self.b.ins().iadd_imm_s(old, 1);
                let zero = self.iconst(self.b.func.dfg.value_type(old), 0);
                self.b.ins().select(ge, zero, inc)
            }
            LoopOp::Dec => {
                // M = (M == 0 || M > b) ? b : M - 1 (unsigned).
                let is_zero = self.b.ins().icmp_imm_s(IntCC::Equal, old, 0);
                let above = self.b.ins().icmp(IntCC::UnsignedGreaterThan, old, b);
                let reset = self.b.ins().bor(is_zero, above);
                let dec = self.b.ins().iadd_imm_s(old, -1);
                self.b.ins().select(reset, b, dec)
            }
            LoopOp::FloatAdd => self.float_rmw(ftz, old, b, ty, |t, m, v| t.b.ins().fadd(m, v)),
            LoopOp::FloatMin => {
                self.float_rmw(ftz, old, b, ty, |t, m, v| t.float_min_max(false, m, v))
            }
            LoopOp::FloatMax => {
                self.float_rmw(ftz, old, b, ty, |t, m, v| t.float_min_max(true, m, v))
            }
            LoopOp::Call => {
                let vt = self.b.func.dfg.value_type(old);
                let old64 = self.b.ins().uextend(I64, old);
                let b64 = self.b.ins().uextend(I64, b);
                let op_code = self.iconst(I32, a.op.index() as i64);
                let ty_code = self.iconst(I32, a.access.ty.index() as i64);
                let ftz_code = match ftz {
                    Ftz::Off => self.iconst(I32, 0),
                    Ftz::On => self.iconst(I32, 1),
                    Ftz::When(cond) => self.b.ins().uextend(I32, cond),
                };
                let sig = self.rmw_sig();
                let f = self
                    .b
                    .ins()
                    .load(I64, self.flags.state_const, self.ctx, off::RMW_VALUE);
                let call =
                    self.b
                        .ins()
                        .call_indirect(sig, f, &[op_code, ty_code, old64, b64, ftz_code]);
                let r = self.b.inst_results(call)[0];
                self.b.ins().ireduce(vt, r)
            }
            LoopOp::HalfCmpWrite => {
                // if (M == b) M = c as f16 values: equal bits that are not a NaN, or two zeros
                // of any sign.
                let mag = |t: &mut Self, v: Value| t.b.ins().band_imm_u(v, 0x7fff);
                let same = self.b.ins().icmp(IntCC::Equal, old, b);
                let m_old = mag(self, old);
                let not_nan =
                    self.b
                        .ins()
                        .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, m_old, 0x7c00);
                let equal_numbers = self.b.ins().band(same, not_nan);
                let either = self.b.ins().bor(old, b);
                let m_either = mag(self, either);
                let zeros = self.b.ins().icmp_imm_u(IntCC::Equal, m_either, 0);
                let eq = self.b.ins().bor(equal_numbers, zeros);
                let new = c.unwrap_or(b);
                self.b.ins().select(eq, new, old)
            }
            LoopOp::FloatCmpWrite => {
                // if (M == b) M = c, in float comparison (+0 == -0, NaN never equal).
                let fm = self.bits_as_float(old, ty);
                let fv = self.bits_as_float(b, ty);
                let eq = self.b.ins().fcmp(FloatCC::Equal, fm, fv);
                let new = c.unwrap_or(b);
                self.b.ins().select(eq, new, old)
            }
        }
    }

    /// The new value of a float add/min/max: `f(M, b)` on the values as floats of `ty`, with
    /// subnormal inputs and the result flushed as `ftz` says.
    fn float_rmw(
        &mut self,
        ftz: Ftz,
        old: Value,
        b: Value,
        ty: Ty,
        f: impl FnOnce(&mut Self, Value, Value) -> Value,
    ) -> Value {
        let m = self.apply_ftz(ftz, old, ty);
        let v = self.apply_ftz(ftz, b, ty);
        let fm = self.bits_as_float(m, ty);
        let fv = self.bits_as_float(v, ty);
        let r = f(self, fm, fv);
        let r = self.float_result_bits(r);
        self.apply_ftz(ftz, r, ty)
    }

    /// Flushes a subnormal `v` of float type `ty` as `ftz` says.
    fn apply_ftz(&mut self, ftz: Ftz, v: Value, ty: Ty) -> Value {
        match ftz {
            Ftz::Off => v,
            Ftz::On => self.flush_subnormal(v, ty),
            Ftz::When(cond) => {
                let flushed = self.flush_subnormal(v, ty);
                self.b.ins().select(cond, flushed, v)
            }
        }
    }

    fn bits_as_float(&mut self, v: Value, ty: Ty) -> Value {
        let ft = if ty.bits() == 64 {
            cranelift_codegen::ir::types::F64
        } else {
            cranelift_codegen::ir::types::F32
        };
        self.b.ins().bitcast(ft, MemFlagsData::new(), v)
    }
}
