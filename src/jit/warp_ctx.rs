//! The warp-context ABI between the generated code and [`super::JitKernel::run_group`].
//!
//! Generated code is one function per kernel, or per chunk of a long kernel (all with this
//! signature; a chunk returns `Event::Continue` when control moves to another chunk):
//!
//! ```text
//! extern "C" fn(ctx: *mut WarpCtx, pc: u32, mask: u32, stop_pc: u32) -> u32
//! ```
//!
//! `stop_pc` is [`NO_STOP`] when the group has no reconvergence point. The function returns an
//! [`Event`] code; the event's payload is written into the `out_*` fields of the context. The
//! scheduler's path builds the context once per CTA (`JitKernel::prepare_cta`, kept in the
//! CTA's `RunnerCache`) and sets only the per-warp fields (`regs`, `preds`, `stats`,
//! `warp_id`, `exited`) and clears the `out_*` fields before each call; `run_group` builds one
//! on the stack for the call. Either way the generated code sees the same values.
//!
//! Fields the generated code only reads (pointers, lengths, launch geometry) come first (and
//! some later ones, added after every older field: the surface pool's pointers); the
//! generated code may load them once and keep them in registers. `exited` is read and written
//! (`EXIT` ORs lanes into it), the `out_*` fields are written just before returning.

use crate::exec::Stats;
use crate::ir::AtomicOp;
use std::mem::offset_of;

/// `stop_pc` value meaning "no reconvergence point".
pub const NO_STOP: u32 = u32::MAX;

/// The number of access sizes the `*_limit` tables hold: 1, 2, 4, 8 and 16 bytes (16: a
/// 128-bit access, whole vector accesses up to 16 bytes).
pub const LIMIT_SIZES: usize = 5;

/// Index of the access sizes 1, 2, 4, 8, 16 in the `*_limit` tables (`log2(size)`).
pub fn limit_index(size: u32) -> usize {
    match size {
        1 => 0,
        2 => 1,
        4 => 2,
        8 => 3,
        _ => 4,
    }
}

/// For a region of `len` bytes, the per-size limits of the one-compare check the generated code
/// makes: an access of `size = 2^k` bytes at offset `o` is valid exactly when
/// `o.rotate_right(k) < limit`. An aligned `o` rotates to `o >> k`, which is below
/// `limit = (len - size) / size + 1` exactly when `o + size <= len`; a misaligned `o` moves a
/// nonzero low bit to the top (at least `2^(64-k)`), far above any limit of a region shorter than
/// 2^56 bytes. A region smaller than `size` gets limit 0: every offset is out of range. The
/// reason of a fault (misaligned first, then out of range) follows from the address and size.
pub fn limits(len: u64) -> [u64; LIMIT_SIZES] {
    [0u32, 1, 2, 3, 4].map(|k| {
        let size = 1u64 << k;
        if len >= size {
            ((len - size) >> k) + 1
        } else {
            0
        }
    })
}

/// Whether an access of `size` bytes at offset `offset` passes the generated check against
/// [`limits`]`(len)` (the function the generated code computes, for tests).
#[cfg(test)]
pub fn passes_check(offset: u64, size: u32, len: u64) -> bool {
    let k = limit_index(size);
    offset.rotate_right(k as u32) < limits(len)[k]
}

/// The per-call context of a compiled warp function. `#[repr(C)]`: the generated code reads and
/// writes its fields at the offsets given by `offset_of!`.
#[repr(C)]
#[derive(Debug)]
pub struct WarpCtx {
    /// `WarpState::regs`: register `r` of lane `l` at `regs[r * 32 + l]`.
    pub regs: *mut u32,
    /// `WarpState::preds`: one lane mask per predicate register.
    pub preds: *mut u32,
    /// First byte of the CTA's shared window.
    pub shared_base: *mut u8,
    /// [`limits`] of the shared window's length.
    pub shared_limit: [u64; LIMIT_SIZES],
    /// First byte of the global arena (device address `GLOBAL_BASE`).
    pub global_base: *mut u8,
    /// [`limits`] of the arena's length.
    pub global_limit: [u64; LIMIT_SIZES],
    /// Constant bank 0.
    pub cbank: *const u8,
    /// [`limits`] of the constant bank's length.
    pub cbank_limit: [u64; LIMIT_SIZES],
    /// The warp's counters.
    pub stats: *mut Stats,
    /// The kernel's side tables: slow conversions and trap sites (see `super::slow`).
    pub tables: *const super::slow::SideTables,
    /// [`super::slow::slow_lanes`] (slow conversions and fused multiply-adds), called through
    /// this field so that the generated code holds no host address (and its CLIF text is the
    /// same on every run).
    pub slow_lanes: unsafe extern "C" fn(*mut WarpCtx, u32, u32),
    pub ctaid: [u32; 3],
    /// CTA size per dimension, each at least 1 (the generated code divides by x and x*y).
    pub ntid: [u32; 3],
    pub nctaid: [u32; 3],
    pub warp_id: u32,
    /// Warps in the CTA.
    pub nwarps: u32,
    /// Lanes per warp of the kernel (thread index = warp_id * warp_size + lane).
    pub warp_size: u32,
    /// `WarpState::exited`, copied in and out around the call.
    pub exited: u32,
    /// Event payload words (see [`Event`]).
    pub out_a: u32,
    pub out_b: u32,
    pub out_c: u32,
    pub out_d: u32,
    /// Trap address.
    pub out_addr: u64,
    /// Instructions executed by the call, handed from a fault block to the trap exit.
    pub out_insts: u64,
    /// [`super::slow::rmw_value`]: the new memory value of an atomic on a 16-bit float or
    /// packed-half type (`f16`, `bf16`, `f16x2`, `bf16x2`), called per lane inside the generated
    /// CAS loop (these types have no host arithmetic). Called through this field so the code
    /// holds no host address. Last, so that adding it moved no other field.
    pub rmw_value: extern "C" fn(u32, u32, u64, u64, u32) -> u64,
    // The surface fields follow (issue 11), after every older field so that none moved.
    /// The launch's surface header pool (`CtaEnv::surfaces`): `surfaces_len` headers.
    pub surfaces: *const crate::ir::surface::SurfaceHeader,
    pub surfaces_len: usize,
    /// [`super::slow::surface_lane`]: resolves one lane's surface access (called per lane
    /// through this field, like `rmw_value`).
    pub surface_lane: unsafe extern "C" fn(*mut WarpCtx, u32, u32) -> u64,
    /// Written by `surface_lane` when it resolves to an element: 1 if the surface's elements
    /// are signed (`.SD32`/`.SD64`), else 0.
    pub surface_signed: u32,
    /// Written by `surface_lane` when the access faults: what the trap reports (read by
    /// `JitKernel::call` at a surface trap site; the generated code never touches it).
    pub surface_fault: Option<(crate::exec::TrapReason, crate::exec::SurfaceTrap)>,
    // Running past a divergent branch (`WarpRunner::run_group_splitting`), after every older
    // field.
    /// 1: the code may run past the next divergent branch that pushes no join, which it then
    /// records in `split_out`, clearing this. 0 on every other call.
    pub split_ok: u32,
    /// The warp's spin exits (backward branches whose divergence pushes no join although they
    /// have a reconvergence point), up to two; [`NO_STOP`] fills the rest.
    pub spin_exits: [u32; 2],
    /// The branch run past: its pc, its target, the taken lanes, the fall-through lanes.
    pub split_out: [u32; 4],
    /// Chunks of four lanes whose atomic ran as one 16-byte compare-and-swap
    /// (`translate/simd/atomic.rs`), added up over the context's calls: what tests read to
    /// know that path runs (the results are the same either way).
    pub wide_cas_chunks: u64,
    /// The fast forms of the pool's headers ([`crate::ir::surface::FastSurface`], one per
    /// header, `surfaces_len` of them), from which the generated code resolves an access
    /// inside a 1D or 2D surface without calling `surface_lane`. After every older field.
    pub surfaces_fast: *const crate::ir::surface::FastSurface,
}

/// What [`super::slow::surface_lane`] returns besides an element's device address (every
/// device address is at least `GLOBAL_BASE`, far above these codes).
pub mod surface_code {
    /// No access (`.IGN` out of bounds, a disabled surface).
    pub const SKIP: u64 = 0;
    /// No access: the element is on a sparse page.
    pub const SKIP_SPARSE: u64 = 1;
    /// A fault (recorded in `WarpCtx::surface_fault`).
    pub const FAULT: u64 = 2;
}

/// Event codes returned by the compiled function, with the payload each writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Event {
    /// Every lane of the group exited (`exited` updated).
    Exited = 0,
    /// `out_a` = resume pc, `out_b` = mask.
    Yield = 1,
    /// `out_a` = branch pc, `out_b` = taken pc, `out_c` = taken mask, `out_d` = fall mask.
    Diverge = 2,
    /// `out_a` = barrier pc, `out_b` = mask, `out_c` = barrier id.
    Barrier = 3,
    /// `out_b` = mask.
    Reconverge = 4,
    /// `out_a` = trap site (an index into `SideTables::trap_sites`: pc, space and access
    /// size), `out_b` = lane, `out_addr` = address. The reason follows from the address:
    /// misaligned for the access size, else out of range (alignment is checked first).
    Trap = 5,
    /// `pc` is not a resume point of the compiled function (see `translate::resume_points`);
    /// nothing ran.
    NotResumable = 6,
    /// Control left this function's chunk of the kernel (`translate::Plan`): `out_a` = the pc
    /// to continue at (the first instruction of another chunk), `out_b` = mask.
    Continue = 7,
    /// The group goes on, on the reference interpreter, from `out_a` with the lanes `out_b`:
    /// a load hoisted before a fused region's loop faulted, and only instruction order can
    /// say whether an access before it faults first (`translate/simd/memory.rs`, `preload`).
    /// Nothing the region does has taken effect (its hoisted writers of warp-invariant
    /// registers wrote what the interpreter writes again).
    Interpret = 8,
}

impl Event {
    pub fn from_code(code: u32) -> Option<Event> {
        Some(match code {
            0 => Event::Exited,
            1 => Event::Yield,
            2 => Event::Diverge,
            3 => Event::Barrier,
            4 => Event::Reconverge,
            5 => Event::Trap,
            6 => Event::NotResumable,
            7 => Event::Continue,
            8 => Event::Interpret,
            _ => return None,
        })
    }
}

/// Field offsets used by the translator.
pub mod off {
    use super::*;
    pub const REGS: i32 = offset_of!(WarpCtx, regs) as i32;
    pub const PREDS: i32 = offset_of!(WarpCtx, preds) as i32;
    pub const SHARED_BASE: i32 = offset_of!(WarpCtx, shared_base) as i32;
    pub const SHARED_LIMIT: i32 = offset_of!(WarpCtx, shared_limit) as i32;
    pub const GLOBAL_BASE: i32 = offset_of!(WarpCtx, global_base) as i32;
    pub const GLOBAL_LIMIT: i32 = offset_of!(WarpCtx, global_limit) as i32;
    pub const CBANK: i32 = offset_of!(WarpCtx, cbank) as i32;
    pub const CBANK_LIMIT: i32 = offset_of!(WarpCtx, cbank_limit) as i32;
    pub const STATS: i32 = offset_of!(WarpCtx, stats) as i32;
    pub const SLOW_LANES: i32 = offset_of!(WarpCtx, slow_lanes) as i32;
    pub const CTAID: i32 = offset_of!(WarpCtx, ctaid) as i32;
    pub const NTID: i32 = offset_of!(WarpCtx, ntid) as i32;
    pub const NCTAID: i32 = offset_of!(WarpCtx, nctaid) as i32;
    pub const WARP_ID: i32 = offset_of!(WarpCtx, warp_id) as i32;
    pub const NWARPS: i32 = offset_of!(WarpCtx, nwarps) as i32;
    pub const WARP_SIZE: i32 = offset_of!(WarpCtx, warp_size) as i32;
    pub const EXITED: i32 = offset_of!(WarpCtx, exited) as i32;
    pub const OUT_A: i32 = offset_of!(WarpCtx, out_a) as i32;
    pub const OUT_B: i32 = offset_of!(WarpCtx, out_b) as i32;
    pub const OUT_C: i32 = offset_of!(WarpCtx, out_c) as i32;
    pub const OUT_D: i32 = offset_of!(WarpCtx, out_d) as i32;
    pub const OUT_ADDR: i32 = offset_of!(WarpCtx, out_addr) as i32;
    pub const OUT_INSTS: i32 = offset_of!(WarpCtx, out_insts) as i32;
    pub const RMW_VALUE: i32 = offset_of!(WarpCtx, rmw_value) as i32;
    pub const SURFACE_LANE: i32 = offset_of!(WarpCtx, surface_lane) as i32;
    pub const SURFACE_SIGNED: i32 = offset_of!(WarpCtx, surface_signed) as i32;
    pub const SPLIT_OK: i32 = offset_of!(WarpCtx, split_ok) as i32;
    pub const SPIN_EXITS: i32 = offset_of!(WarpCtx, spin_exits) as i32;
    pub const SPLIT_OUT: i32 = offset_of!(WarpCtx, split_out) as i32;
    pub const WIDE_CAS_CHUNKS: i32 = offset_of!(WarpCtx, wide_cas_chunks) as i32;
    pub const SURFACES_FAST: i32 = offset_of!(WarpCtx, surfaces_fast) as i32;
    pub const SURFACES_LEN: i32 = offset_of!(WarpCtx, surfaces_len) as i32;

    /// Offset in [`Stats`] of the counter of atomic op `op`.
    pub fn stat_atomic(op: AtomicOp) -> i32 {
        (offset_of!(Stats, atomics) + 8 * op.index()) as i32
    }
    pub const STAT_CAS_FAILURES: i32 = offset_of!(Stats, cas_failures) as i32;
    pub const STAT_SPIN_FAST_FAILS: i32 = offset_of!(Stats, spin_fast_fails) as i32;
    pub const STAT_WARP_INSTS: i32 = offset_of!(Stats, warp_insts) as i32;
}
