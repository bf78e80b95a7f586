//! Atomic read-modify-writes as values: [`rmw_value`], the definition of every [`AtomicOp`] for
//! every type (the new memory value from the old one and the operands), [`atomic_result`] (what
//! the destination register receives) and [`spin_bank`] (the `.SPIN` grouping). Performing them
//! on host memory, indivisibly and in lane order, is the backends' concern: `interp/atomic.rs`
//! and the JIT's host lowering, which calls [`rmw_value`] for the types without host arithmetic.

use super::float::{self, FloatOp};
use super::{int_value, low_mask};
use crate::ir::{AtomicOp, FloatFormat, Ty};

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
/// `PreDec` (rejected by validation; vISA's predec lowers to `Sub` of 1) is `M = M - 1`,
/// wrapping, so that no backend panics on it.
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
            let (fmt, elements) = ty
                .float_format()
                .unwrap_or((FloatFormat::of_width(ty.bits()), 1));
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
    /// The memory value the RMW read (the low `ty.bits()` bits).
    pub old: u64,
    /// Whether it wrote (false only for a failed compare of `Cas`, `Cast`, `FCmpWr`).
    pub stored: bool,
}

/// The value the lane's destination receives: the old memory value, or for `Cast` 1 if it
/// stored and 0 otherwise (a 64-bit `Cast` puts 1/0 in the low word and 0 in the high word).
pub fn atomic_result(op: AtomicOp, outcome: AtomicOutcome) -> u64 {
    if op.returns_stored_flag() {
        outcome.stored as u64
    } else {
        outcome.old
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fcmpwr_compares_as_floats() {
        let f = |x: f32| x.to_bits() as u64;
        // +0 == -0: stores.
        assert_eq!(
            rmw_value(AtomicOp::FCmpWr, Ty::F32, f(0.0), f(-0.0), f(7.0), false),
            (f(7.0), true)
        );
        // NaN never equal, not even to the same bits.
        let nan = 0x7fc0_0000;
        assert_eq!(
            rmw_value(AtomicOp::FCmpWr, Ty::F32, nan, nan, f(7.0), false),
            (nan, false)
        );
        assert_eq!(
            rmw_value(AtomicOp::FCmpWr, Ty::F32, f(1.0), f(1.0), f(2.0), false),
            (f(2.0), true)
        );
    }

    #[test]
    fn predec_is_documented_as_a_wrapping_decrement() {
        assert_eq!(
            rmw_value(AtomicOp::PreDec, Ty::U32, 0, 0, 0, false),
            (0xffff_ffff, true)
        );
        assert_eq!(
            rmw_value(AtomicOp::PreDec, Ty::U32, 5, 99, 0, false),
            (4, true)
        );
    }

    #[test]
    fn float_min_max_atomics_use_min_num() {
        let f = |x: f32| x.to_bits() as u64;
        let nan = 0x7fc0_0000;
        assert_eq!(
            rmw_value(AtomicOp::Min, Ty::F32, nan, f(1.0), 0, false),
            (f(1.0), true)
        );
        assert_eq!(
            rmw_value(AtomicOp::Max, Ty::F32, f(-1.0), f(-2.0), 0, false),
            (f(-1.0), true)
        );
        assert_eq!(
            rmw_value(AtomicOp::Min, Ty::F32, f(0.0), f(-0.0), 0, false),
            (f(-0.0), true)
        );
    }

    #[test]
    fn spin_bank_is_the_word_index_mod_32() {
        assert_eq!(spin_bank(0), 0);
        assert_eq!(spin_bank(4), 1);
        assert_eq!(spin_bank(7), 1);
        assert_eq!(spin_bank(128), 0);
        assert_eq!(spin_bank(124), 31);
    }

    #[test]
    fn cast_result_is_one_or_zero_and_cas_the_old_value() {
        let stored = AtomicOutcome {
            old: 42,
            stored: true,
        };
        let failed = AtomicOutcome {
            old: 42,
            stored: false,
        };
        assert_eq!(atomic_result(AtomicOp::Cast, stored), 1);
        assert_eq!(atomic_result(AtomicOp::Cast, failed), 0);
        assert_eq!(atomic_result(AtomicOp::Cas, failed), 42);
    }
}
