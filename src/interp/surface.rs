//! Surface accesses ([`crate::ir::Address::Surface`]): per lane, the coordinates and the handle
//! are read, [`crate::ir::surface::resolve`] finds the element against the launch's header
//! pool ([`CtaEnv::surfaces`]), and the access is performed there exactly as a global access of
//! its type (loads, stores and atomics: see `memory` and `atomic`). An access that resolves to
//! nothing does nothing: a store is dropped, a load and an atomic return 0 (and an atomic is not
//! counted: it performed nothing). The address's `Ps` predicate receives, per executing lane,
//! whether its access hit a sparse page. A fault is a trap naming the surface's header index and
//! the lane's coordinates.

use super::memory::{fenced, locate};
use super::{read_operand, read_reg, write_pred, write_reg_words, Fault, LaneFault, SurfaceTrap};
use crate::exec::memory::Region;
use crate::exec::{CtaEnv, TrapReason, WarpState};
use crate::ir::surface::{header_index, resolve, Resolved, SurfaceAddress};
use crate::ir::{AtomicInst, AtomicOp, MemAccess, Operand, Reg, Space, Ty};
use crate::sem::atomic::atomic_result;
use crate::sem::to_register;

/// Where one lane's surface access of `bytes` bytes lands: the global region, the offset in it
/// and whether the surface's elements are signed; `None` when the access does nothing. Writes
/// the lane's sparse status to `s.sparse` unless the access faults.
pub fn locate_surface<'a>(
    warp: &mut WarpState,
    env: &CtaEnv<'a>,
    s: &SurfaceAddress,
    bytes: u32,
    lane: usize,
) -> Result<Option<(&'a Region, usize, bool)>, Fault> {
    let mut coords = [0u32; 3];
    for (i, c) in coords
        .iter_mut()
        .enumerate()
        .take(usize::from(s.dim.coords()))
    {
        *c = read_reg(warp, s.coords.word(i as u16), lane);
    }
    let handle = read_operand(warp, env, &s.handle.operand(), lane, 1)? as u32;
    match resolve(env.surfaces, handle, coords, s, bytes) {
        Resolved::At { address, signed } => {
            let (region, offset) = locate(env, Space::Global, address, bytes)?;
            write_pred(warp, s.sparse, lane, false);
            Ok(Some((region, offset, signed)))
        }
        Resolved::Skip { sparse } => {
            write_pred(warp, s.sparse, lane, sparse);
            Ok(None)
        }
        Resolved::Fault(f) => Err(Fault {
            reason: TrapReason::of_surface(f),
            space: Space::Global,
            address: 0,
            surface: Some(SurfaceTrap {
                index: header_index(handle),
                coords,
                count: s.dim.coords() as u8,
            }),
        }),
    }
}

/// [`crate::ir::Op::Load`] at a surface address, for the lanes of `exec` in lane order.
pub fn execute_load(
    warp: &mut WarpState,
    env: &CtaEnv,
    exec: u32,
    access: &MemAccess,
    s: &SurfaceAddress,
    dst: Reg,
) -> Result<(), LaneFault> {
    let ty = access.ty;
    fenced(access.order, true, || {
        super::for_lanes(exec, |lane| {
            let raw = match locate_surface(warp, env, s, ty.bytes(), lane)? {
                Some((region, offset, _)) => region.load(offset, ty.bytes()),
                None => 0,
            };
            write_reg_words(warp, dst, lane, to_register(ty, raw) as u128, ty.regs());
            Ok(())
        })
    })
}

/// [`crate::ir::Op::Store`] at a surface address, for the lanes of `exec` in lane order (the
/// value is read before the address is resolved, as for every store).
pub fn execute_store(
    warp: &mut WarpState,
    env: &CtaEnv,
    exec: u32,
    access: &MemAccess,
    s: &SurfaceAddress,
    src: &Operand,
) -> Result<(), LaneFault> {
    let ty = access.ty;
    fenced(access.order, false, || {
        super::for_lanes(exec, |lane| {
            let value = read_operand(warp, env, src, lane, ty.regs())?;
            if let Some((region, offset, _)) = locate_surface(warp, env, s, ty.bytes(), lane)? {
                region.store(offset, ty.bytes(), value);
            }
            Ok(())
        })
    })
}

/// The type a lane's atomic computes in: `ty`, or with `.SD32`/`.SD64`
/// ([`SurfaceAddress::format_sign`]) its signed or unsigned twin by the surface's format.
pub fn lane_type(ty: Ty, s: &SurfaceAddress, signed: bool) -> Ty {
    if !s.format_sign {
        return ty;
    }
    match (ty.bits(), signed) {
        (64, true) => Ty::S64,
        (64, false) => Ty::U64,
        (_, true) => Ty::S32,
        (_, false) => Ty::U32,
    }
}

/// [`crate::ir::Op::Atomic`] at a surface address (one element per lane; validation), for the
/// lanes of `exec` in lane order. Counts the atomics performed in `warp.stats`.
pub fn execute_atomic(
    warp: &mut WarpState,
    env: &CtaEnv,
    exec: u32,
    inst: &AtomicInst,
    s: &SurfaceAddress,
) -> Result<(), LaneFault> {
    let ty = inst.access.ty;
    let words = ty.regs();
    super::for_lanes(exec, |lane| {
        let b = read_operand(warp, env, &inst.src, lane, words)?;
        let c = match &inst.src2 {
            Some(operand) => read_operand(warp, env, operand, lane, words)?,
            None => 0,
        };
        let result = match locate_surface(warp, env, s, ty.bytes(), lane)? {
            Some((region, offset, signed)) => {
                let lane_ty = lane_type(ty, s, signed);
                let outcome =
                    super::atomic::perform(region, offset, inst.op, lane_ty, b, c, inst.ftz);
                warp.stats.atomics[inst.op.index()] += 1;
                if matches!(inst.op, AtomicOp::Cas | AtomicOp::Cast) && !outcome.stored {
                    warp.stats.cas_failures += 1;
                }
                to_register(lane_ty, atomic_result(inst.op, outcome))
            }
            None => 0,
        };
        write_reg_words(warp, inst.dst, lane, result as u128, words);
        write_pred(warp, inst.performed, lane, true);
        Ok(())
    })
}
