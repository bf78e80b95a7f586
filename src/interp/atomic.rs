//! Atomic read-modify-writes: the pure value function [`rmw_value`] (the definition of every
//! [`AtomicOp`] for every type) and its execution as host atomics.
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

use super::alu::{int_value, low_mask, to_register};
use super::float::{self, FloatFormat, FloatOp};
use super::memory::{effective_address, locate};
use super::{for_lanes, read_operand, write_reg_words, LaneFault};
use crate::exec::memory::Region;
use crate::exec::{CtaEnv, WarpState};
use crate::ir::{AtomicInst, AtomicOp, Ty};
use std::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering::SeqCst};

/// The shared-memory bank of an address, for `.SPIN` grouping: `(address / 4) mod 32`.
pub fn spin_bank(address: u64) -> u32 {
    ((address / 4) % 32) as u32
}

/// The new memory value of one lane's atomic: `M' = op(M, b, c)` in type `ty`, and whether the
/// op stores (false only for a failed compare of `Cas`, `Cast`, `FCmpWr`). `old`, `b` and `c`
/// are the low `ty.bits()` bits of the values; the result is too.
///
/// The formulas are those of [`AtomicOp`] (quoting `000_6d05a8552870c0ae.txt`):
/// integers wrap; `Min`/`Max` compare signed for signed types and unsigned otherwise; `Inc`
/// and `Dec` are the unsigned formulas in the type's width; `Cas`/`Cast` compare the raw bits.
/// Float types (`f16`, `bf16`, `f32`, `f64`, packed per element): `Add`/`Sub`/`Min`/`Max` per
/// [`super::float`] with `ftz`; every other op acts on the raw bits. `FCmpWr` compares as the
/// float of the type (of the same width for integer types).
///
/// `PreDec`: NOTE: its formula is not fixed yet (the vISA issue must define it; validation
/// rejects it until then). The interpreter treats it as `Sub` with `b = 1` (`M = M - 1`,
/// wrapping, returning the old value) so that it never panics.
pub fn rmw_value(op: AtomicOp, ty: Ty, old: u64, b: u64, c: u64, ftz: bool) -> (u64, bool) {
    let mask = low_mask(ty.bits());
    let (old, b, c) = (old & mask, b & mask, c & mask);
    let float = |fop: FloatOp| float::float_op_ty(ty, fop, old, b, ftz);
    let new = match op {
        AtomicOp::Add => float(FloatOp::Add).unwrap_or(old.wrapping_add(b)),
        AtomicOp::Sub => float(FloatOp::Sub).unwrap_or(old.wrapping_sub(b)),
        AtomicOp::Min => float(FloatOp::Min).unwrap_or_else(|| int_pick(ty, old, b, false)),
        AtomicOp::Max => float(FloatOp::Max).unwrap_or_else(|| int_pick(ty, old, b, true)),
        AtomicOp::Inc => {
            if old >= b {
                0
            } else {
                old + 1
            }
        }
        AtomicOp::Dec => {
            if old == 0 || old > b {
                b
            } else {
                old - 1
            }
        }
        AtomicOp::And => old & b,
        AtomicOp::Or => old | b,
        AtomicOp::Xor => old ^ b,
        AtomicOp::Exch => b,
        AtomicOp::Cas | AtomicOp::Cast => {
            if old == b {
                c
            } else {
                return (old, false);
            }
        }
        AtomicOp::PreDec => old.wrapping_sub(1),
        AtomicOp::FCmpWr => {
            let (fmt, elements) =
                FloatFormat::of(ty).unwrap_or((FloatFormat::of_width(ty.bits()), 1));
            let all_equal = (0..elements).all(|i| {
                let shift = i * fmt.bits();
                let element = |v: u64| (v >> shift) & low_mask(fmt.bits());
                float::float_equal(fmt, element(old), element(b))
            });
            if all_equal {
                c
            } else {
                return (old, false);
            }
        }
    };
    (new & mask, true)
}

/// Integer min (`max == false`) or max by the signedness of `ty`.
fn int_pick(ty: Ty, old: u64, b: u64, max: bool) -> u64 {
    let old_first = int_value(ty, old) <= int_value(ty, b);
    if old_first != max {
        old
    } else {
        b
    }
}

/// What one lane's host RMW observed: the old memory value and whether it stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AtomicOutcome {
    pub old: u64,
    pub stored: bool,
}

/// The value the lane's destination receives: the old memory value, or for `Cast` 1 if it
/// stored and 0 otherwise (a 64-bit `Cast` puts 1/0 in the low word and 0 in the high word).
pub fn atomic_result(op: AtomicOp, outcome: AtomicOutcome) -> u64 {
    match op {
        AtomicOp::Cast => outcome.stored as u64,
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
        | AtomicOp::PreDec
        | AtomicOp::FCmpWr => outcome.old,
    }
}

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

/// [`crate::ir::Op::Atomic`] for the lanes of `exec` (see the module docs for lane order,
/// traps and `.SPIN`). Counts statistics in `warp.stats`.
pub fn execute_atomic(
    warp: &mut WarpState,
    env: &CtaEnv,
    exec: u32,
    inst: &AtomicInst,
) -> Result<(), LaneFault> {
    let words = inst.ty.regs();
    let mut claimed_banks = 0u32;
    for_lanes(exec, |lane| {
        let b = read_operand(warp, env, &inst.src, lane, words)?;
        let c = match &inst.src2 {
            Some(operand) => read_operand(warp, env, operand, lane, words)?,
            None => 0,
        };
        let address = effective_address(warp, &inst.addr, inst.space, lane);
        let (region, offset) = locate(env, inst.space, address, inst.ty.bytes())?;
        let result = if inst.spin && claimed_banks & (1 << spin_bank(address)) != 0 {
            warp.stats.spin_fast_fails += 1;
            0
        } else {
            claimed_banks |= 1 << spin_bank(address);
            let outcome = perform(region, offset, inst.op, inst.ty, b, c, inst.ftz);
            warp.stats.atomics[inst.op.index()] += 1;
            if matches!(inst.op, AtomicOp::Cas | AtomicOp::Cast) && !outcome.stored {
                warp.stats.cas_failures += 1;
            }
            to_register(inst.ty, atomic_result(inst.op, outcome))
        };
        write_reg_words(warp, inst.dst, lane, result as u128, words);
        Ok(())
    })
}
