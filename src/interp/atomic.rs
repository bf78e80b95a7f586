//! Atomic read-modify-writes executed as host atomics. What each op computes is
//! [`crate::sem::atomic`] ([`rmw_value`], [`atomic_result`], [`spin_bank`]); this module
//! performs it on device memory, indivisibly and in lane order.
//!
//! # Host execution
//!
//! Each lane's read-modify-write is one indivisible host atomic operation with `SeqCst` order
//! (every RMW is a locked instruction on x86-64; `SeqCst` strengthens every IR order and scope,
//! which `001_e732919ae3db9bea.txt` allows):
//!
//! | op, type | host operation |
//! |---|---|
//! | ADD, SUB (integers), AND, OR, XOR, EXCH (32/64-bit) | `fetch_add` / `fetch_sub` / `fetch_and` / `fetch_or` / `fetch_xor` / `swap` |
//! | MIN, MAX unsigned (32/64-bit) | `AtomicU32`/`AtomicU64` `fetch_min` / `fetch_max` |
//! | MIN, MAX signed (32/64-bit) | `AtomicI32`/`AtomicI64` `fetch_min` / `fetch_max` on the same word |
//! | CAS, CAST (32/64-bit) | `compare_exchange` |
//! | INC, DEC, float ADD/SUB/MIN/MAX, FCMPWR, PREDEC, any 8/16-bit op | CAS loop: load, compute [`rmw_value`], `compare_exchange`, retry on mismatch |
//! | CAS, EXCH on `b128` | [`Region::cas128`] (`lock cmpxchg16b`); EXCH as a loop of it |
//!
//! A vector atomic ([`crate::ir::MemAccess::vector`]) is one of these per element: each
//! element's read-modify-write is its own host atomic, performed in element order, exactly as
//! the scalar atomic of the element type (the PTX ISA: "the atomicity is guaranteed separately
//! for each of the individual scalar elements").
//!
//! A CAS loop whose computed result does not store (a failed FCMPWR compare) still confirms the
//! value it read with `compare_exchange(old, old)`, so that every lane is one host RMW.
//!
//! # Lanes, traps and `.SPIN`
//!
//! The lanes of an instruction are performed one by one in increasing lane order; for each lane
//! the operands and address are read, the address is checked (alignment, then range), and the
//! RMW is performed before the next lane starts. A fault in lane `k` therefore traps after lanes
//! `< k` completed every effect (memory and registers), as [`crate::exec::GroupExit::Trap`]
//! promises.
//!
//! With `.SPIN`, lanes are grouped by bank `(address / 4) mod 32`; the lowest executing lane of
//! each bank performs its compare-and-store and every other lane of that bank fast-fails
//! (result 0, memory untouched, counted in `spin_fast_fails`, not in `atomics`). Processing in
//! lane order makes "lowest lane of the bank" the first lane to claim it, so the same single
//! pass implements the grouping, and a trap at lane `k` leaves lanes `< k` exactly as a full
//! run would have (they claim the same banks). Validation allows `spin` only on `CAST`; on any
//! other op the interpreter applies the same grouping.

use super::memory::{effective_address, locate};
use super::{for_lanes, read_operand, write_pred, write_reg_words, LaneFault};
use crate::exec::memory::Region;
use crate::exec::{CtaEnv, TrapReason, WarpState};
use crate::ir::{resolve, AtomicInst, AtomicOp, Reg, Space, Ty};
use crate::sem::atomic::{atomic_result, rmw_value, spin_bank, AtomicOutcome};
use crate::sem::to_register;
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering::SeqCst};

/// Performs one lane's atomic `op` in type `ty` on the checked, naturally aligned location
/// `offset` of `region` as one host atomic operation (see the table in the module docs).
pub fn perform(
    region: &Region,
    offset: usize,
    op: AtomicOp,
    ty: Ty,
    b: u64,
    c: u64,
    ftz: bool,
) -> AtomicOutcome {
    let native = match ty.bytes() {
        4 => native_u32(region.atomic_u32(offset), op, ty, b as u32, c as u32),
        8 => native_u64(region.atomic_u64(offset), op, ty, b, c),
        _ => None,
    };
    native.unwrap_or_else(|| {
        cas_loop(region, offset, ty.bytes(), |old| {
            rmw_value(op, ty, old, b, c, ftz)
        })
    })
}

/// Whether `op` on `ty` has a single host instruction (integer semantics).
fn is_native(op: AtomicOp, ty: Ty) -> bool {
    match op {
        AtomicOp::Add | AtomicOp::Sub | AtomicOp::Min | AtomicOp::Max => ty.is_int(),
        AtomicOp::And
        | AtomicOp::Or
        | AtomicOp::Xor
        | AtomicOp::Exch
        | AtomicOp::Cas
        | AtomicOp::Cast => true,
        AtomicOp::Inc | AtomicOp::Dec | AtomicOp::PreDec | AtomicOp::FCmpWr => false,
    }
}

/// Defines `native_u32`/`native_u64`: the single-instruction host atomics of one width.
macro_rules! native_width {
    ($name:ident, $unsigned:ty, $signed:ty, $word:ty, $sword:ty) => {
        fn $name(
            cell: &$unsigned,
            op: AtomicOp,
            ty: Ty,
            b: $word,
            c: $word,
        ) -> Option<AtomicOutcome> {
            if !is_native(op, ty) {
                return None;
            }
            let done = |old: $word| {
                Some(AtomicOutcome {
                    old: old as u64,
                    stored: true,
                })
            };
            // SAFETY: `cell` is a live, naturally aligned atomic of this width inside a `Region`
            // (obtained from a checked offset); the signed view has the same size and alignment,
            // and all accesses to the location are atomic, so the two views never race
            // non-atomically.
            let signed = || unsafe { <$signed>::from_ptr(cell.as_ptr() as *mut $sword) };
            match op {
                AtomicOp::Add => done(cell.fetch_add(b, SeqCst)),
                AtomicOp::Sub => done(cell.fetch_sub(b, SeqCst)),
                AtomicOp::And => done(cell.fetch_and(b, SeqCst)),
                AtomicOp::Or => done(cell.fetch_or(b, SeqCst)),
                AtomicOp::Xor => done(cell.fetch_xor(b, SeqCst)),
                AtomicOp::Exch => done(cell.swap(b, SeqCst)),
                AtomicOp::Min if ty.is_signed_int() => {
                    done(signed().fetch_min(b as $sword, SeqCst) as $word)
                }
                AtomicOp::Max if ty.is_signed_int() => {
                    done(signed().fetch_max(b as $sword, SeqCst) as $word)
                }
                AtomicOp::Min => done(cell.fetch_min(b, SeqCst)),
                AtomicOp::Max => done(cell.fetch_max(b, SeqCst)),
                AtomicOp::Cas | AtomicOp::Cast => match cell.compare_exchange(b, c, SeqCst, SeqCst)
                {
                    Ok(old) => Some(AtomicOutcome {
                        old: old as u64,
                        stored: true,
                    }),
                    Err(old) => Some(AtomicOutcome {
                        old: old as u64,
                        stored: false,
                    }),
                },
                AtomicOp::Inc | AtomicOp::Dec | AtomicOp::PreDec | AtomicOp::FCmpWr => None,
            }
        }
    };
}

native_width!(native_u32, AtomicU32, AtomicI32, u32, i32);
native_width!(native_u64, AtomicU64, AtomicI64, u64, i64);

/// A compare-and-swap loop on the `size`-byte location at `offset`: read, compute
/// `f(old) = (new, store)`, `compare_exchange(old, store ? new : old)`, retry if another thread
/// changed the location in between.
fn cas_loop(
    region: &Region,
    offset: usize,
    size: u32,
    f: impl Fn(u64) -> (u64, bool),
) -> AtomicOutcome {
    macro_rules! run {
        ($cell:expr, $word:ty) => {{
            let cell = $cell;
            let mut old = cell.load(SeqCst);
            loop {
                let (new, stored) = f(old as u64);
                let new = if stored { new as $word } else { old };
                match cell.compare_exchange_weak(old, new, SeqCst, SeqCst) {
                    Ok(_) => {
                        return AtomicOutcome {
                            old: old as u64,
                            stored,
                        }
                    }
                    Err(current) => old = current,
                }
            }
        }};
    }
    match size {
        1 => run!(region.atomic_u8(offset), u8),
        2 => run!(region.atomic_u16(offset), u16),
        4 => run!(region.atomic_u32(offset), u32),
        _ => run!(region.atomic_u64(offset), u64),
    }
}

/// One lane's 128-bit atomic ([`Ty::B128`]: `Exch` or `Cas`, validation guarantees) on the
/// checked 16-byte location `offset`: one [`Region::cas128`] for `Cas`; for `Exch` a loop of
/// them (read the current value with a compare-and-swap that cannot change it, then swap it
/// for `b`, retrying if another thread changed it in between).
pub fn perform128(region: &Region, offset: usize, op: AtomicOp, b: u128, c: u128) -> (u128, bool) {
    match op {
        AtomicOp::Cas | AtomicOp::Cast => {
            let old = region.cas128(offset, b, c);
            (old, old == b)
        }
        AtomicOp::Exch
        | AtomicOp::Add
        | AtomicOp::Sub
        | AtomicOp::Min
        | AtomicOp::Max
        | AtomicOp::Inc
        | AtomicOp::Dec
        | AtomicOp::And
        | AtomicOp::Or
        | AtomicOp::Xor
        | AtomicOp::PreDec
        | AtomicOp::FCmpWr => {
            // Validation admits only `Exch` besides the compares; any other op exchanges too
            // (never reached).
            let mut old = region.cas128(offset, 0, 0);
            loop {
                let seen = region.cas128(offset, old, b);
                if seen == old {
                    return (old, true);
                }
                old = seen;
            }
        }
    }
}

/// A register quad (RZ: zero) of `lane`.
fn read_quad(warp: &WarpState, reg: Reg, lane: usize) -> u128 {
    (0..4).fold(0u128, |acc, i| {
        acc | u128::from(super::read_reg(warp, reg.word(i), lane)) << (32 * i)
    })
}

/// Whether one lane's atomic flushes subnormals: [`AtomicInst::ftz`], except that on a
/// [`Space::Generic`] address it applies only when the address resolves to global memory (the
/// PTX rule for `atom.add.f32`: it "flushes subnormal inputs and results to sign-preserving zero
/// on global memory but supports subnormal inputs and results and doesn't flush them to zero on
/// shared memory").
pub fn effective_ftz(inst: &AtomicInst, address: u64) -> bool {
    match inst.access.space {
        Space::Generic => {
            inst.ftz && matches!(resolve(Space::Generic, address), Some((Space::Global, _)))
        }
        Space::Global | Space::Shared | Space::Const => inst.ftz,
    }
}

/// Where a vector atomic lands: as [`locate`], except that a generic address must resolve to
/// global memory (`ir::AtomicInst`: a vector atomic elsewhere is out of range; alignment is
/// still reported first).
fn locate_vector<'a>(
    env: &CtaEnv<'a>,
    space: Space,
    address: u64,
    size: u32,
) -> Result<(&'a Region, usize), super::Fault> {
    if space == Space::Generic && address % u64::from(size) == 0 {
        let global = matches!(resolve(space, address), Some((Space::Global, _)));
        if !global {
            return Err(super::Fault {
                reason: TrapReason::AddressOutOfRange,
                space,
                address,
                surface: None,
            });
        }
    }
    locate(env, space, address, size)
}

/// [`crate::ir::Op::Atomic`] for the lanes of `exec` (see the module docs for lane order,
/// traps and `.SPIN`). Counts statistics in `warp.stats`: one atomic per element performed.
pub fn execute_atomic(
    warp: &mut WarpState,
    env: &CtaEnv,
    exec: u32,
    inst: &AtomicInst,
) -> Result<(), LaneFault> {
    if let crate::ir::Address::Surface(s) = &inst.access.addr {
        return super::surface::execute_atomic(warp, env, exec, inst, s);
    }
    let ty = inst.access.ty;
    if ty == Ty::B128 {
        return execute_atomic128(warp, env, exec, inst);
    }
    if inst.access.is_vector() {
        return execute_vector_atomic(warp, env, exec, inst);
    }
    let words = ty.regs();
    let mut claimed_banks = 0u32;
    for_lanes(exec, |lane| {
        let b = read_operand(warp, env, &inst.src, lane, words)?;
        let c = match &inst.src2 {
            Some(operand) => read_operand(warp, env, operand, lane, words)?,
            None => 0,
        };
        let address = effective_address(warp, &inst.access, lane);
        let (region, offset) = locate(env, inst.access.space, address, ty.bytes())?;
        let result = if inst.spin && claimed_banks & (1 << spin_bank(address)) != 0 {
            warp.stats.spin_fast_fails += 1;
            0
        } else {
            claimed_banks |= 1 << spin_bank(address);
            let ftz = effective_ftz(inst, address);
            let outcome = perform(region, offset, inst.op, ty, b, c, ftz);
            warp.stats.atomics[inst.op.index()] += 1;
            if matches!(inst.op, AtomicOp::Cas | AtomicOp::Cast) && !outcome.stored {
                warp.stats.cas_failures += 1;
            }
            to_register(ty, atomic_result(inst.op, outcome))
        };
        write_reg_words(warp, inst.dst, lane, result as u128, words);
        // `AtomicInst::performed`: atomjit performs every form at every address.
        write_pred(warp, inst.performed, lane, true);
        Ok(())
    })
}

/// A vector atomic: per lane, every element operand read, the whole access checked, then one
/// host atomic per element in element order, then the results written.
fn execute_vector_atomic(
    warp: &mut WarpState,
    env: &CtaEnv,
    exec: u32,
    inst: &AtomicInst,
) -> Result<(), LaneFault> {
    let ty = inst.access.ty;
    let (regs, elem, n) = (ty.regs(), ty.bytes(), usize::from(inst.access.vector));
    for_lanes(exec, |lane| {
        let mut b = [0u64; 8];
        for (i, v) in b.iter_mut().enumerate().take(n) {
            *v = read_operand(warp, env, &inst.src.word(i as u16 * regs), lane, regs)?;
        }
        let address = effective_address(warp, &inst.access, lane);
        let (region, offset) = locate_vector(env, inst.access.space, address, inst.access.bytes())?;
        let ftz = effective_ftz(inst, address);
        let mut results = [0u64; 8];
        for (i, r) in results.iter_mut().enumerate().take(n) {
            let at = offset + i * elem as usize;
            let outcome = perform(region, at, inst.op, ty, b[i], 0, ftz);
            warp.stats.atomics[inst.op.index()] += 1;
            *r = to_register(ty, atomic_result(inst.op, outcome));
        }
        for (i, &r) in results.iter().enumerate().take(n) {
            write_reg_words(warp, inst.dst.word(i as u16 * regs), lane, r as u128, regs);
        }
        write_pred(warp, inst.performed, lane, true);
        Ok(())
    })
}

/// A 128-bit atomic ([`Ty::B128`]): per lane, the quads read, the 16-byte access checked, one
/// [`perform128`], the old value written to the destination quad.
fn execute_atomic128(
    warp: &mut WarpState,
    env: &CtaEnv,
    exec: u32,
    inst: &AtomicInst,
) -> Result<(), LaneFault> {
    // Validation: 128-bit operands are registers (an immediate would be its 64 bits).
    let quad = |warp: &WarpState, op: &crate::ir::Operand, lane| match *op {
        crate::ir::Operand::Reg(r) => read_quad(warp, r, lane),
        crate::ir::Operand::Imm(v) => u128::from(v),
        crate::ir::Operand::Const { .. } => 0,
    };
    for_lanes(exec, |lane| {
        let b = quad(warp, &inst.src, lane);
        let c = inst.src2.as_ref().map_or(0, |o| quad(warp, o, lane));
        let address = effective_address(warp, &inst.access, lane);
        let (region, offset) = locate(env, inst.access.space, address, 16)?;
        let (old, stored) = perform128(region, offset, inst.op, b, c);
        warp.stats.atomics[inst.op.index()] += 1;
        if matches!(inst.op, AtomicOp::Cas | AtomicOp::Cast) && !stored {
            warp.stats.cas_failures += 1;
        }
        let result = if inst.op.returns_stored_flag() {
            u128::from(stored)
        } else {
            old
        };
        write_reg_words(warp, inst.dst, lane, result, 4);
        write_pred(warp, inst.performed, lane, true);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    #[test]
    fn host_threads_get_exact_totals() {
        // Four host threads hammer one word with each op; every lane RMW must be indivisible.
        let region = Region::new(64);
        let per_thread = 20_000u64;
        thread::scope(|s| {
            for t in 0..4u64 {
                let region = &region;
                s.spawn(move || {
                    for i in 0..per_thread {
                        perform(region, 0, AtomicOp::Add, Ty::U32, 1, 0, false);
                        perform(region, 8, AtomicOp::Add, Ty::U64, 3, 0, false);
                        // INC with a bound that never wraps counts exactly.
                        perform(
                            region,
                            16,
                            AtomicOp::Inc,
                            Ty::U32,
                            u32::MAX as u64,
                            0,
                            false,
                        );
                        // Float add of small integers is exact in f32: the CAS loop must not lose
                        // updates.
                        perform(
                            region,
                            20,
                            AtomicOp::Add,
                            Ty::F32,
                            1.0f32.to_bits() as u64,
                            0,
                            true,
                        );
                        perform(
                            region,
                            24,
                            AtomicOp::Max,
                            Ty::S32,
                            t * per_thread + i,
                            0,
                            false,
                        );
                        perform(region, 28, AtomicOp::Add, Ty::U16, 1, 0, false);
                    }
                });
            }
        });
        let n = 4 * per_thread;
        assert_eq!(region.load(0, 4), n);
        assert_eq!(region.load(8, 8), 3 * n);
        assert_eq!(region.load(16, 4), n);
        assert_eq!(f32::from_bits(region.load(20, 4) as u32), n as f32);
        assert_eq!(region.load(24, 4), n - 1);
        assert_eq!(region.load(28, 2), n % 65536);
    }

    #[test]
    fn cas_loop_paths_for_narrow_types_match_their_formulas() {
        let region = Region::new(16);
        region.store(0, 2, 0xfffe);
        let o = perform(&region, 0, AtomicOp::Add, Ty::U16, 3, 0, false);
        assert_eq!(
            (o.old, region.load(0, 2)),
            (0xfffe, 1),
            "16-bit add wraps in 16 bits"
        );
        assert_eq!(
            region.load(2, 2),
            0,
            "the neighbouring half-word is untouched"
        );
        region.store(4, 2, 0x8000);
        perform(&region, 4, AtomicOp::Min, Ty::S16, 5, 0, false);
        assert_eq!(region.load(4, 2), 0x8000, "signed 16-bit min keeps -32768");
        perform(&region, 4, AtomicOp::Min, Ty::U16, 5, 0, false);
        assert_eq!(region.load(4, 2), 5);
        region.store(8, 1, 0xff);
        perform(&region, 8, AtomicOp::Inc, Ty::U8, 0xff, 0, false);
        assert_eq!(region.load(8, 1), 0);
    }

    #[test]
    fn fcmpwr_through_the_host_cas_loop_compares_as_floats() {
        let f = |x: f32| x.to_bits() as u64;
        let region = Region::new(8);
        region.store(0, 4, f(-0.0));
        let o = perform(&region, 0, AtomicOp::FCmpWr, Ty::F32, f(0.0), f(3.0), false);
        assert_eq!(
            (o, region.load(0, 4)),
            (
                AtomicOutcome {
                    old: f(-0.0),
                    stored: true
                },
                f(3.0)
            )
        );
        let o = perform(&region, 0, AtomicOp::FCmpWr, Ty::F32, f(1.0), f(4.0), false);
        assert_eq!(
            (o, region.load(0, 4)),
            (
                AtomicOutcome {
                    old: f(3.0),
                    stored: false
                },
                f(3.0)
            )
        );
    }
}
