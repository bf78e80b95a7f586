//! The semantics library: what every op of the IR computes, as pure value functions of one
//! lane, raw bits in and raw bits out. Nothing here touches a warp, a register file or memory,
//! so each definition is written once and called by everything that needs it: the reference
//! interpreter ([`crate::interp`]), the JIT's slow paths (`jit/slow.rs`: the conversions
//! Cranelift cannot do exactly, the new value of atomics on 16-bit floats) and the tests that
//! check the JIT's inline code against these definitions.
//!
//! # Conventions
//!
//! * **Operands** travel as `u64` holding the low `ty.bits()` bits of the op's type (a 64-bit
//!   value is the register pair `hi:lo`, low word in the low half); bits above them are ignored (the one exception, the
//!   shift amount of `Shl`/`Shr`, is documented in [`alu`]).
//!   Functions take their operands *already modified*: the caller applies the source modifier
//!   with [`apply_modifier`] (as a register read does), so modifiers are defined once, here.
//! * **Results** are returned in *register form* ([`to_register`]): types narrower than 32 bits
//!   extended to the 32-bit register by their signedness, 32- and 64-bit types as they are.
//!   Atomics are the exception: [`atomic::rmw_value`] returns the memory value (`ty.bits()`
//!   bits), and the caller puts the old value in register form.
//! * **Floats** are bit-exact IEEE 754 with canonical NaN results and optional FTZ ([`float`]).
//!   The formats themselves ([`crate::ir::FloatFormat`], [`crate::ir::Ty::float_format`], the
//!   encoding masks and classes) are facts of the IR; [`float`] adds the arithmetic.
//! * Forms validation rejects are still given one defined meaning each, documented where they
//!   are computed, so no backend panics on them and no two backends guess differently.
//!
//! # Modules
//!
//! [`alu`] the ALU ops, [`convert`] `Convert`, [`float`] rounding and IEEE arithmetic,
//! [`atomic`] the new memory value and the destination value of every atomic op. Executing an
//! atomic on host memory (host atomics, CAS loops, lane order, traps) is the backends' concern
//! (`interp/atomic.rs`, `jit/translate/memory.rs`).

#![deny(clippy::wildcard_enum_match_arm)]

pub mod alu;
pub mod atomic;
pub mod convert;
pub mod float;
pub mod warp;

use crate::ir::{SrcMod, Ty};

/// All ones in the low `bits` bits (`bits` in 1..=64).
#[inline]
pub fn low_mask(bits: u32) -> u64 {
    u64::MAX >> (64 - bits)
}

/// The low `bits` bits of `v` read as a two's-complement signed number.
#[inline]
pub fn sign_extend(v: u64, bits: u32) -> i64 {
    ((v << (64 - bits)) as i64) >> (64 - bits)
}

/// `v` (the low `ty.bits()` bits are the value) as the integer it denotes in `ty`: signed types
/// sign-extend, everything else (unsigned, bits, floats' raw bits) zero-extends.
#[inline]
pub fn int_value(ty: Ty, v: u64) -> i128 {
    if ty.is_signed_int() {
        sign_extend(v, ty.bits()) as i128
    } else {
        (v & low_mask(ty.bits())) as i128
    }
}

/// A result of type `ty` in register form: types narrower than 32 bits are extended to 32 bits
/// by their signedness, 32-bit types occupy 32 bits, 64-bit types 64 bits (a pair).
#[inline]
pub fn to_register(ty: Ty, v: u64) -> u64 {
    let bits = ty.bits();
    if bits < 32 {
        if ty.is_signed_int() {
            sign_extend(v, bits) as u32 as u64
        } else {
            v & low_mask(bits)
        }
    } else {
        v & low_mask(bits)
    }
}

/// Applies a source modifier in type `ty` (the IR's [`SrcMod`] rules): for integers `Neg` is
/// two's complement, `Not` complement, `Abs` wrapping absolute value and `NegAbs` its negation;
/// for floats `Neg`/`Abs`/`NegAbs` act on the sign bit of every element and `Not` complements
/// the bits. The result is the low `ty.bits()` bits.
#[inline]
pub fn apply_modifier(ty: Ty, modifier: SrcMod, v: u64) -> u64 {
    let bits = ty.bits();
    let mask = low_mask(bits);
    let v = v & mask;
    match ty.float_format() {
        Some((fmt, elements)) => {
            let signs =
                (0..elements).fold(0u64, |acc, i| acc | fmt.sign_mask() << (i * fmt.bits()));
            match modifier {
                SrcMod::None => v,
                SrcMod::Neg => v ^ signs,
                SrcMod::Not => !v & mask,
                SrcMod::Abs => v & !signs,
                SrcMod::NegAbs => v | signs,
            }
        }
        None => {
            let abs = || {
                if sign_extend(v, bits) < 0 {
                    v.wrapping_neg() & mask
                } else {
                    v
                }
            };
            match modifier {
                SrcMod::None => v,
                SrcMod::Neg => v.wrapping_neg() & mask,
                SrcMod::Not => !v & mask,
                SrcMod::Abs => abs(),
                SrcMod::NegAbs => abs().wrapping_neg() & mask,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modifiers() {
        assert_eq!(apply_modifier(Ty::U32, SrcMod::Neg, 1), 0xffff_ffff);
        assert_eq!(apply_modifier(Ty::U32, SrcMod::Not, 0), 0xffff_ffff);
        assert_eq!(apply_modifier(Ty::U64, SrcMod::Neg, 1), u64::MAX);
        assert_eq!(
            apply_modifier(Ty::S32, SrcMod::NegAbs, 5),
            (-5i32) as u32 as u64
        );
        assert_eq!(apply_modifier(Ty::F32, SrcMod::Neg, 0), 0x8000_0000);
        assert_eq!(
            apply_modifier(Ty::F32, SrcMod::NegAbs, 0x3f80_0000),
            0xbf80_0000
        );
        assert_eq!(
            apply_modifier(Ty::F16x2, SrcMod::Neg, 0x3c00_bc00),
            0xbc00_3c00
        );
        assert_eq!(
            apply_modifier(Ty::F64, SrcMod::Abs, (-2.0f64).to_bits()),
            2.0f64.to_bits()
        );
    }
}
