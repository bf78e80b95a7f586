//! Address computation, address checks, plain loads and stores, and memory-order fences.
//!
//! Every access goes through [`locate`] (or [`read_const`] for the constant bank), which checks
//! natural alignment first and then range, before the host touches memory; a failure is a
//! [`Fault`] naming the space and the address. The interpreter then uses the
//! [`Region`] accessors, so every access is a host atomic access of
//! the right width.
//!
//! # Memory orders on the host
//!
//! Plain loads and stores are `Relaxed` host accesses whatever their order (on x86-64 and
//! AArch64 these are ordinary `mov`/`ldr`/`str`). The order is then provided by fences, which
//! keeps the interpreter correct on weakly ordered hosts too:
//!
//! | IR order | load | store | fence |
//! |---|---|---|---|
//! | `Weak`, `Relaxed`, `Volatile` | plain | plain | `fence(SeqCst)` (a fence must order something; strengthening is valid, `001_*`) |
//! | `Acquire` | plain, then `fence(Acquire)` | `fence(SeqCst)` before and after (not a store order; strengthened) | `fence(Acquire)` |
//! | `Release` | `fence(SeqCst)` before and after (not a load order; strengthened) | `fence(Release)`, then plain | `fence(Release)` |
//! | `AcqRel` | `fence(SeqCst)` before and after | `fence(SeqCst)` before and after | `fence(AcqRel)` |
//! | `SeqCst` | `fence(SeqCst)` before and after | `fence(SeqCst)` before and after | `fence(SeqCst)` |
//!
//! Atomic read-modify-writes are `SeqCst` host RMWs (see [`super::atomic`]), which strengthens
//! every order. Scopes (`cta`, `cluster`, `gpu`, `sys`) are all coherent on one host: each is
//! honoured by the host orders above, which hold between all host threads.
//!
//! # Addresses
//!
//! A lane's address is computed by the IR's address model ([`MemAccess::lane_address`]), and
//! a PTX generic address resolved by [`crate::ir::resolve`] (the global arena, the shared
//! window's generic image, or nothing: out of range). A fault on a generic access reports space
//! `generic` and the generic address.

use super::{read_operand, read_reg_words, write_reg_words, Fault, LaneFault};
use crate::exec::memory::Region;
use crate::exec::{CtaEnv, TrapReason, WarpState};
use crate::ir::{resolve, Address, MemAccess, MemOrder, Operand, Reg, Space};
use std::sync::atomic::{fence, Ordering};

/// Natural alignment of an access of `size` bytes (1, 2, 4, 8 or 16).
fn check_alignment(space: Space, address: u64, size: u32) -> Result<(), Fault> {
    if address & (size as u64 - 1) != 0 {
        Err(Fault {
            reason: TrapReason::MisalignedAddress,
            space,
            address,
            surface: None,
        })
    } else {
        Ok(())
    }
}

/// Checks an access of `size` bytes at `address` in `space` (alignment first, then range) and
/// returns the region and offset to access. The constant bank is not a writable region:
/// [`Space::Const`] always faults here (reads use [`read_const`]).
pub fn locate<'a>(
    env: &CtaEnv<'a>,
    space: Space,
    address: u64,
    size: u32,
) -> Result<(&'a Region, usize), Fault> {
    let fault = |reason| Fault {
        reason,
        space,
        address,
        surface: None,
    };
    match space {
        Space::Shared => env
            .shared
            .check(address, size)
            .map(|o| (env.shared.region(), o))
            .map_err(fault),
        Space::Global => env
            .global
            .check(address, size)
            .map(|o| (env.global.region(), o))
            .map_err(fault),
        Space::Generic => {
            check_alignment(space, address, size)?;
            match resolve(space, address) {
                Some((resolved, in_space)) => {
                    locate(env, resolved, in_space, size).map_err(|f| fault(f.reason))
                }
                None => Err(fault(TrapReason::AddressOutOfRange)),
            }
        }
        Space::Const => {
            check_alignment(space, address, size)?;
            Err(fault(TrapReason::AddressOutOfRange))
        }
    }
}

/// The `size` bytes of a constant bank at `offset`, checked like every access (alignment,
/// then range).
fn const_bytes(cbank: &[u8], offset: u64, size: u32) -> Result<&[u8], Fault> {
    check_alignment(Space::Const, offset, size)?;
    let out_of_range = Fault {
        reason: TrapReason::AddressOutOfRange,
        space: Space::Const,
        address: offset,
        surface: None,
    };
    let start = usize::try_from(offset).map_err(|_| out_of_range)?;
    start
        .checked_add(size as usize)
        .and_then(|end| cbank.get(start..end))
        .ok_or(out_of_range)
}

/// A little-endian read of `size` bytes (at most 8) of a constant bank (`cbank`: bank 0, or
/// another of the kernel's banks) at `offset`, checked like every access (alignment, then range).
pub fn read_const(cbank: &[u8], offset: u64, size: u32) -> Result<u64, Fault> {
    let bytes = const_bytes(cbank, offset, size)?;
    Ok(bytes.iter().rev().fold(0u64, |acc, &b| acc << 8 | b as u64))
}

/// Loads the `vector` elements of `elem` bytes (each zero-extended) of an access of
/// `space` at `address`, after checking the whole access (see [`crate::ir::MemAccess`]).
pub fn load(
    env: &CtaEnv,
    space: Space,
    address: u64,
    elem: u32,
    vector: u8,
) -> Result<[u64; 8], Fault> {
    let mut out = [0u64; 8];
    let n = usize::from(vector);
    if space == Space::Const {
        let bytes = const_bytes(env.cbank, address, elem * u32::from(vector))?;
        for (v, chunk) in out.iter_mut().zip(bytes.chunks(elem as usize)).take(n) {
            *v = chunk.iter().rev().fold(0u64, |acc, &b| acc << 8 | b as u64);
        }
        return Ok(out);
    }
    let (region, offset) = locate(env, space, address, elem * u32::from(vector))?;
    for (i, v) in out.iter_mut().enumerate().take(n) {
        *v = region.load(offset + i * elem as usize, elem);
    }
    Ok(out)
}

/// Stores the low `elem` bytes of each of `values` (one per element of a vector access) to
/// `space` at `address`, after checking the whole access.
pub fn store(
    env: &CtaEnv,
    space: Space,
    address: u64,
    elem: u32,
    values: &[u64],
) -> Result<(), Fault> {
    let (region, offset) = locate(env, space, address, elem * values.len() as u32)?;
    for (i, &v) in values.iter().enumerate() {
        region.store(offset + i * elem as usize, elem, v);
    }
    Ok(())
}

/// The address `access` names for `lane` ([`MemAccess::lane_address`] on the lane's registers).
pub fn effective_address(warp: &WarpState, access: &MemAccess, lane: usize) -> u64 {
    access.lane_address(|reg, words| read_reg_words(warp, reg, lane, words))
}

/// The host fence of a [`crate::ir::Op::Fence`] (see the table in the module docs).
pub fn fence_for(order: MemOrder) {
    match order {
        MemOrder::Acquire => fence(Ordering::Acquire),
        MemOrder::Release => fence(Ordering::Release),
        MemOrder::AcqRel => fence(Ordering::AcqRel),
        MemOrder::SeqCst | MemOrder::Weak | MemOrder::Relaxed | MemOrder::Volatile => {
            fence(Ordering::SeqCst)
        }
    }
}

/// Runs `access` (a plain load, `is_load`, or store of order `order`) between the host fences
/// that order needs: none for weak and relaxed accesses, an acquire fence after an acquire load,
/// a release fence before a release store, and sequentially consistent fences around the rest.
pub(super) fn fenced<T>(order: MemOrder, is_load: bool, access: impl FnOnce() -> T) -> T {
    let (before, after) = match order {
        MemOrder::Weak | MemOrder::Relaxed | MemOrder::Volatile => (None, None),
        MemOrder::Acquire if is_load => (None, Some(Ordering::Acquire)),
        MemOrder::Release if !is_load => (Some(Ordering::Release), None),
        MemOrder::Acquire | MemOrder::Release | MemOrder::AcqRel | MemOrder::SeqCst => {
            (Some(Ordering::SeqCst), Some(Ordering::SeqCst))
        }
    };
    if let Some(o) = before {
        fence(o);
    }
    let result = access();
    if let Some(o) = after {
        fence(o);
    }
    result
}

/// [`crate::ir::Op::Load`] for the lanes of `exec`, in increasing lane order. A vector access
/// is checked as a whole, then its elements are read in order and written to their registers.
pub fn execute_load(
    warp: &mut WarpState,
    env: &CtaEnv,
    exec: u32,
    access: &MemAccess,
    dst: Reg,
) -> Result<(), LaneFault> {
    if let Address::Surface(s) = &access.addr {
        return super::surface::execute_load(warp, env, exec, access, s, dst);
    }
    let ty = access.ty;
    fenced(access.order, true, || {
        super::for_lanes(exec, |lane| {
            let address = effective_address(warp, access, lane);
            let raw = load(env, access.space, address, ty.bytes(), access.vector)?;
            for (i, &v) in raw.iter().take(usize::from(access.vector)).enumerate() {
                write_reg_words(
                    warp,
                    dst.word(i as u16 * ty.regs()),
                    lane,
                    crate::sem::to_register(ty, v) as u128,
                    ty.regs(),
                );
            }
            Ok(())
        })
    })
}

/// [`crate::ir::Op::Store`] for the lanes of `exec`, in increasing lane order (a vector access:
/// every element read, the whole access checked, then the elements written in order).
pub fn execute_store(
    warp: &mut WarpState,
    env: &CtaEnv,
    exec: u32,
    access: &MemAccess,
    src: &Operand,
) -> Result<(), LaneFault> {
    if let Address::Surface(s) = &access.addr {
        return super::surface::execute_store(warp, env, exec, access, s, src);
    }
    let ty = access.ty;
    fenced(access.order, false, || {
        super::for_lanes(exec, |lane| {
            let mut values = [0u64; 8];
            let n = usize::from(access.vector);
            for (i, v) in values.iter_mut().enumerate().take(n) {
                *v = read_operand(warp, env, &src.word(i as u16 * ty.regs()), lane, ty.regs())?;
            }
            let address = effective_address(warp, access, lane);
            store(env, access.space, address, ty.bytes(), &values[..n])
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_reads_are_little_endian_and_checked() {
        let bank = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
        assert_eq!(read_const(&bank, 0, 4), Ok(0x0403_0201));
        assert_eq!(read_const(&bank, 8, 4), Ok(0x0c0b_0a09));
        assert_eq!(read_const(&bank, 0, 8), Ok(0x0807_0605_0403_0201));
        assert_eq!(read_const(&bank, 11, 1), Ok(12));
        let fault = |reason, address| {
            Err(Fault {
                reason,
                space: Space::Const,
                address,
                surface: None,
            })
        };
        assert_eq!(
            read_const(&bank, 2, 4),
            fault(TrapReason::MisalignedAddress, 2)
        );
        assert_eq!(
            read_const(&bank, 12, 4),
            fault(TrapReason::AddressOutOfRange, 12)
        );
        assert_eq!(
            read_const(&bank, 8, 8),
            fault(TrapReason::AddressOutOfRange, 8)
        );
        assert_eq!(
            read_const(&bank, u64::MAX - 7, 8),
            fault(TrapReason::AddressOutOfRange, u64::MAX - 7)
        );
    }
}
