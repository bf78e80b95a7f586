//! Rare slow paths the generated code calls into: once per warp-instruction for conversions
//! and fused multiply-adds that have no exact native Cranelift instruction ([`slow_lanes`]),
//! and per lane (inside the generated CAS loop) for the new value of atomics on 16-bit and
//! packed-half float types ([`rmw_value`]).
//!
//! Cranelift's conversions are exact only in round-to-nearest (`fcvt_from_*`, `fdemote`) and it
//! has no `f16`/`bf16` arithmetic on x86-64 without extra CPU features. So the translator
//! compiles the common conversions inline (integer to float in round-to-nearest, float to
//! integer in every rounding mode, `f32 <-> f64` in round-to-nearest) and sends the rest
//! (directed rounding of inexact integer-to-float and `f64 -> f32` conversions, anything with
//! `f16`/`bf16`, same-type float conversions) here: one call that converts every executing lane.
//! Likewise `fma`: Cranelift's `fma` is the correctly rounded fused multiply-add in
//! round-to-nearest on `f32`/`f64`, which the translator uses inline; the directed roundings and
//! the 16-bit and packed-half types come here.
//!
//! They compute with the semantics library, the definitions the interpreter uses too:
//! [`crate::sem::convert::convert`] (every value converted exactly and rounded once, so there is
//! no double rounding in any mode), [`crate::sem::float::fma_ty`] and
//! [`crate::sem::atomic::rmw_value`]. What stays here is the
//! part only the JIT has: reading operands from the raw register file and constant bank of a
//! [`WarpCtx`], and the `extern "C"` entry points.

use super::warp_ctx::WarpCtx;
use crate::exec::WARP_STRIDE;
use crate::ir::{HalfSel, Operand, Reg, Round, Src, Ty};
use crate::sem;

/// A `Convert` instruction compiled as a slow-path call.
#[derive(Debug, Clone)]
pub struct SlowConvert {
    pub dst_ty: Ty,
    pub src_ty: Ty,
    pub round: Round,
    pub ftz: bool,
    pub dst: Reg,
    pub a: Src,
}

/// An `Fma` instruction compiled as a slow-path call (directed rounding, or a 16-bit or
/// packed-half type).
#[derive(Debug, Clone)]
pub struct SlowFma {
    pub ty: Ty,
    pub round: Round,
    pub ftz: bool,
    pub halves: [HalfSel; 3],
    pub dst: Reg,
    pub a: Src,
    pub b: Src,
    pub c: Src,
}

/// A `PackHalves` instruction compiled as a slow-path call (f32 to 16-bit formats).
#[derive(Debug, Clone)]
pub struct SlowPack {
    pub ty: Ty,
    pub dst: Reg,
    pub hi: Src,
    pub lo: Src,
}

/// A per-lane instruction compiled as a call of [`slow_lanes`].
#[derive(Debug, Clone)]
pub enum SlowOp {
    Convert(SlowConvert),
    Fma(SlowFma),
    Pack(SlowPack),
}

/// The side tables of one compiled kernel: what its generated code refers to by number at run
/// time. The slow-path instructions by index ([`slow_lanes`]), the trap sites by number (what a
/// fault there reports), and the sizes the slow paths need to view the register file and the
/// constant bank.
#[derive(Debug, Default)]
pub struct SideTables {
    /// The instructions compiled as slow-path calls, by the index the call passes.
    pub slow_ops: Vec<SlowOp>,
    /// Register slots per lane (the register file holds `num_regs * 32` words).
    pub num_regs: u32,
    /// Bytes of constant bank 0 the kernel reads (the caller guarantees the bank is this long).
    pub cbank_needed: u64,
    /// The kernel's other constant banks (`LaunchSpec::const_banks`), which slow-path operands
    /// may read.
    pub const_banks: Vec<crate::ir::ConstBank>,
    /// Every checked access of the kernel, indexed by the site number a fault reports.
    pub trap_sites: Vec<TrapSite>,
    /// The surface addresses of the kernel's surface accesses, by the index the generated
    /// code passes to [`surface_lane`], with each access's size.
    pub surface_sites: Vec<(crate::ir::surface::SurfaceAddress, u32)>,
}

/// A checked memory access: what a fault there reports besides lane and address.
#[derive(Debug, Clone, Copy)]
pub struct TrapSite {
    pub pc: u32,
    pub space: crate::ir::Space,
    /// Access size in bytes: a faulting address that is not a multiple of it was misaligned
    /// (alignment is checked first), any other was out of range.
    pub size: u32,
    /// At an atomic (not CAST.SPIN): its op and the atomics one lane performs (its elements).
    /// The fault block then leaves the executing lanes in `out_c`, and the lanes before the
    /// faulting one are counted as having performed it.
    pub atomic: Option<(crate::ir::AtomicOp, u32)>,
    /// A surface access's resolver reported the fault: the reason, surface and coordinates
    /// are in `WarpCtx::surface_fault` (not derived from the address).
    pub surface: bool,
}

/// The slow-path entry of `Convert` and `Fma`: computes lanes `exec` of slow-path instruction
/// `index` (an index into `SideTables::slow_ops`), reading every source of a lane before
/// writing its destination, exactly as the interpreter does.
///
/// # Safety
/// `ctx` must be the live context of a call to the compiled kernel that owns the [`SideTables`]
/// `ctx.tables` points to: its register file holds `num_regs * 32` words and its constant bank at
/// least `cbank_needed` bytes (both ensured by `JitKernel::run_group`).
pub unsafe extern "C" fn slow_lanes(ctx: *mut WarpCtx, index: u32, exec: u32) {
    // SAFETY: per this function's contract, `ctx` is valid and exclusively ours for the call.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: `ctx.tables` points to the `SideTables` of the running kernel, alive for the call.
    let tables = unsafe { &*ctx.tables };
    let Some(op) = tables.slow_ops.get(index as usize) else {
        return;
    };
    let words = tables.num_regs as usize * WARP_STRIDE;
    // SAFETY: the register file has `num_regs * 32` words (checked by `run_group`); no other
    // reference to it exists while the generated code is suspended in this call.
    let regs = unsafe { std::slice::from_raw_parts_mut(ctx.regs, words) };
    // SAFETY: the constant bank has at least `cbank_needed` bytes (ensured by `run_group`).
    let cbank = unsafe { std::slice::from_raw_parts(ctx.cbank, tables.cbank_needed as usize) };
    let read = |regs: &[u32], s: &Src, ty: Ty, lane: usize| {
        let raw = read_operand(regs, cbank, &tables.const_banks, s.operand, ty.regs(), lane);
        sem::apply_modifier(ty, s.modifier, raw)
    };
    let mut rest = exec;
    while rest != 0 {
        let lane = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let (dst, dst_words, out) = match op {
            SlowOp::Convert(conv) => {
                let a = read(regs, &conv.a, conv.src_ty, lane);
                let out = sem::convert::convert(conv.dst_ty, conv.src_ty, conv.round, conv.ftz, a);
                (conv.dst, conv.dst_ty.regs(), out)
            }
            SlowOp::Fma(f) => {
                let (a, b, c) = (
                    read(regs, &f.a, f.ty, lane),
                    read(regs, &f.b, f.ty, lane),
                    read(regs, &f.c, f.ty, lane),
                );
                // Validation guarantees a float type (as in the interpreter).
                let out = sem::float::fma_selected(f.ty, f.halves, [a, b, c], f.round, f.ftz)
                    .unwrap_or(0);
                (f.dst, f.ty.regs(), out)
            }
            SlowOp::Pack(p) => {
                let (hi, lo) = (
                    read(regs, &p.hi, Ty::F32, lane),
                    read(regs, &p.lo, Ty::F32, lane),
                );
                (p.dst, 1, sem::convert::pack_halves(p.ty, hi, lo))
            }
        };
        if !dst.is_rz() {
            let r = dst.0 as usize;
            regs[r * WARP_STRIDE + lane] = out as u32;
            if dst_words == 2 {
                regs[(r + 1) * WARP_STRIDE + lane] = (out >> 32) as u32;
            }
        }
    }
}

/// The new memory value of one lane's atomic `AtomicOp::ALL[op]` on `Ty::ALL[ty]` (the low
/// `ty.bits()` bits of `old` and `b`), with `ftz != 0` flushing subnormals: exactly
/// [`crate::sem::atomic::rmw_value`], the definition the interpreter uses. The generated code calls
/// it inside its CAS loop for the 16-bit and packed-half float types, which have no host
/// arithmetic; the host CAS and every memory check stay in the generated code. An index out of
/// range (a compiler bug) leaves the memory value unchanged.
pub extern "C" fn rmw_value(op: u32, ty: u32, old: u64, b: u64, ftz: u32) -> u64 {
    match (
        crate::ir::AtomicOp::ALL.get(op as usize),
        Ty::ALL.get(ty as usize),
    ) {
        (Some(&op), Some(&ty)) => sem::atomic::rmw_value(op, ty, old, b, 0, ftz != 0).0,
        _ => old,
    }
}

/// The surface entry: resolves lane `lane`'s access of surface site `site` (an index into
/// `SideTables::surface_sites`) with [`crate::ir::surface::resolve`], the resolver the
/// interpreter calls, against the launch's header pool. Returns the element's device address
/// (the generated code then checks and performs the access there, with
/// `WarpCtx::surface_signed` set), or a [`super::warp_ctx::surface_code`]: no access, no
/// access on a sparse page, or a fault (recorded in `WarpCtx::surface_fault`).
///
/// # Safety
/// As [`slow_lanes`]; `ctx.surfaces` points to `ctx.surfaces_len` live headers (the CTA
/// environment's pool, `JitKernel::build_ctx`; the generated code reads `ctx.surfaces_fast`,
/// `surfaces_len + 1` live fast forms of them), and `lane` is below 32.
pub unsafe extern "C" fn surface_lane(ctx: *mut WarpCtx, site: u32, lane: u32) -> u64 {
    use super::warp_ctx::surface_code;
    use crate::exec::{SurfaceTrap, TrapReason};
    use crate::ir::surface::{header_index, resolve, Resolved};
    // SAFETY: per this function's contract, `ctx` is valid and exclusively ours for the call.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: `ctx.tables` points to the `SideTables` of the running kernel, alive for the call.
    let tables = unsafe { &*ctx.tables };
    let words = tables.num_regs as usize * WARP_STRIDE;
    // SAFETY: as in `slow_lanes`: the register file has `num_regs * 32` words and is only
    // read here.
    let regs = unsafe { std::slice::from_raw_parts(ctx.regs, words) };
    // SAFETY: the constant bank has at least `cbank_needed` bytes (ensured by `run_group`).
    let cbank = unsafe { std::slice::from_raw_parts(ctx.cbank, tables.cbank_needed as usize) };
    let pool = if ctx.surfaces_len == 0 {
        &[][..]
    } else {
        // SAFETY: per this function's contract, `surfaces` points to `surfaces_len` live
        // headers, which nothing writes during the launch.
        unsafe { std::slice::from_raw_parts(ctx.surfaces, ctx.surfaces_len) }
    };
    let lane = (lane as usize).min(WARP_STRIDE - 1);
    let Some(&(addr, bytes)) = tables.surface_sites.get(site as usize) else {
        // Not a site the translator registered (a compiler bug): a fault, never an access.
        ctx.surface_fault = Some((
            TrapReason::SurfaceMismatch,
            SurfaceTrap {
                index: u32::MAX,
                coords: [0; 3],
                count: 0,
            },
        ));
        return surface_code::FAULT;
    };
    let mut coords = [0u32; 3];
    for (i, c) in coords
        .iter_mut()
        .enumerate()
        .take(usize::from(addr.dim.coords()))
    {
        let r = addr.coords.word(i as u16);
        *c = read_operand(regs, cbank, &tables.const_banks, Operand::Reg(r), 1, lane) as u32;
    }
    let handle = read_operand(
        regs,
        cbank,
        &tables.const_banks,
        addr.handle.operand(),
        1,
        lane,
    ) as u32;
    match resolve(pool, handle, coords, &addr, bytes) {
        Resolved::At { address, signed } => {
            ctx.surface_signed = u32::from(signed);
            address
        }
        Resolved::Skip { sparse: false } => surface_code::SKIP,
        Resolved::Skip { sparse: true } => surface_code::SKIP_SPARSE,
        Resolved::Fault(f) => {
            ctx.surface_fault = Some((
                TrapReason::of_surface(f),
                SurfaceTrap {
                    index: header_index(handle),
                    coords,
                    count: addr.dim.coords() as u8,
                },
            ));
            surface_code::FAULT
        }
    }
}

/// Operand `op` of `words` words in `lane`. Validation keeps every constant-bank read inside its
/// bank; a read outside (a translator bug) gives 0 rather than touching other memory.
fn read_operand(
    regs: &[u32],
    cbank: &[u8],
    banks: &[crate::ir::ConstBank],
    op: Operand,
    words: u16,
    lane: usize,
) -> u64 {
    match op {
        Operand::Reg(r) if r.is_rz() => 0,
        Operand::Reg(r) => {
            let lo = regs[r.0 as usize * WARP_STRIDE + lane] as u64;
            if words == 2 {
                lo | (regs[(r.0 as usize + 1) * WARP_STRIDE + lane] as u64) << 32
            } else {
                lo
            }
        }
        Operand::Imm(v) => {
            if words == 2 {
                v
            } else {
                v & 0xffff_ffff
            }
        }
        Operand::Const { bank, offset } if bank != 0 => banks
            .iter()
            .find(|b| b.bank == bank)
            .and_then(|b| b.read(offset, words))
            .unwrap_or(0),
        Operand::Const { offset, .. } => {
            let n = words as usize * 4;
            let start = offset as usize;
            let mut buf = [0u8; 8];
            if let Some(bytes) = cbank.get(start..start + n) {
                buf[..n].copy_from_slice(bytes);
            }
            u64::from_le_bytes(buf)
        }
    }
}
