//! [`crate::ir::Op::Convert`]: the one definition of every conversion, used by the interpreter
//! for every conversion and by the JIT for those it cannot compile exactly inline (directed
//! rounding of inexact integer-to-float and `f64 -> f32` conversions, anything with
//! `f16`/`bf16`, same-type float conversions: `jit/slow.rs`).

use super::float;
use super::{int_value, low_mask, to_register};
use crate::ir::{Round, Ty};

/// [`crate::ir::Op::PackHalves`]: `hi` and `lo` (f32 bits) rounded to nearest even into the
/// halves of `ty` (`F16x2`, `BF16x2`), `hi` in the upper 16 bits.
pub fn pack_halves(ty: Ty, hi: u64, lo: u64) -> u64 {
    let half = if ty == Ty::BF16x2 { Ty::BF16 } else { Ty::F16 };
    let one = |x: u64| convert(half, Ty::F32, Round::Nearest, false, x) & 0xffff;
    one(hi) << 16 | one(lo)
}

/// [`crate::ir::Op::Convert`]: `a` (of `src_ty`, already modified) converted to `dst_ty`, in
/// register form.
///
/// * int → int: the source value (extended by the source signedness) truncated to the
///   destination width, then put in register form by the destination type.
/// * int → float and float → float: rounded by `round` ([`crate::ir::FloatFormat::round_exact`]); NaN
///   becomes the canonical NaN; `ftz` flushes a subnormal input and result.
/// * float → int: rounded by `round` to an integer, saturated, NaN → 0; `ftz` flushes a
///   subnormal input (which then converts to 0 either way unless `round` is directed).
/// * Packed `f16x2`/`bf16x2` (validation rejects them in conversions): element 0 is converted
///   and, for a packed destination, element 1 is zero.
pub fn convert(dst_ty: Ty, src_ty: Ty, round: Round, ftz: bool, a: u64) -> u64 {
    let bits = match (src_ty.float_format(), dst_ty.float_format()) {
        (None, None) => int_value(src_ty, a) as u64,
        (None, Some((dst_fmt, _))) => dst_fmt.flush_if(
            ftz,
            float::int_to_float(dst_fmt, int_value(src_ty, a), round),
        ),
        (Some((src_fmt, _)), None) => {
            let x = src_fmt.flush_if(ftz, a & low_mask(src_fmt.bits()));
            float::float_to_int(src_fmt, x, round, dst_ty.bits(), dst_ty.is_signed_int())
        }
        (Some((src_fmt, _)), Some((dst_fmt, _))) => {
            let x = src_fmt.flush_if(ftz, a & low_mask(src_fmt.bits()));
            dst_fmt.flush_if(ftz, dst_fmt.from_f64(src_fmt.to_f64(x), round))
        }
    };
    to_register(dst_ty, bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        let f = |x: f32| x.to_bits() as u64;
        assert_eq!(
            convert(
                Ty::F32,
                Ty::S32,
                Round::Nearest,
                false,
                (-3i32) as u32 as u64
            ),
            f(-3.0)
        );
        assert_eq!(
            convert(Ty::F32, Ty::U32, Round::Nearest, false, 0xffff_ffff),
            f(4294967296.0)
        );
        assert_eq!(
            convert(Ty::F32, Ty::U32, Round::Zero, false, 0xffff_ffff),
            f(4294967040.0)
        );
        assert_eq!(
            convert(Ty::S32, Ty::F32, Round::Nearest, false, f(-2.5)),
            (-2i32) as u32 as u64
        );
        assert_eq!(
            convert(Ty::S32, Ty::F32, Round::Zero, false, f(-2.7)),
            (-2i32) as u32 as u64
        );
        assert_eq!(
            convert(Ty::S32, Ty::F32, Round::Nearest, false, f(f32::NAN)),
            0
        );
        assert_eq!(convert(Ty::U32, Ty::F32, Round::Nearest, false, f(-1.0)), 0);
        assert_eq!(
            convert(Ty::S32, Ty::S8, Round::Nearest, false, 0x80),
            0xffff_ff80
        );
        assert_eq!(
            convert(Ty::U32, Ty::S8, Round::Nearest, false, 0x80),
            0xffff_ff80
        );
        assert_eq!(convert(Ty::U8, Ty::U32, Round::Nearest, false, 0x1ff), 0xff);
        assert_eq!(
            convert(Ty::S16, Ty::U32, Round::Nearest, false, 0x18000),
            0xffff_8000
        );
        assert_eq!(
            convert(Ty::U64, Ty::S32, Round::Nearest, false, 0xffff_ffff),
            u64::MAX
        );
        assert_eq!(
            convert(Ty::U64, Ty::U32, Round::Nearest, false, 0xffff_ffff),
            0xffff_ffff
        );
        assert_eq!(
            convert(Ty::F64, Ty::F32, Round::Nearest, false, f(0.1)),
            (0.1f32 as f64).to_bits()
        );
        assert_eq!(
            convert(Ty::F32, Ty::F64, Round::Nearest, false, 0.1f64.to_bits()),
            f(0.1)
        );
        assert_eq!(
            convert(Ty::F16, Ty::F32, Round::Nearest, false, f(1.0)),
            0x3c00
        );
        assert_eq!(
            convert(Ty::F32, Ty::F16, Round::Nearest, false, 0x3c00),
            f(1.0)
        );
        assert_eq!(
            convert(Ty::F32, Ty::F64, Round::Nearest, false, f64::NAN.to_bits()),
            0x7fff_ffff
        );
        // FTZ flushes a subnormal input.
        assert_eq!(convert(Ty::S32, Ty::F32, Round::Up, true, 1), 0);
        assert_eq!(convert(Ty::S32, Ty::F32, Round::Up, false, 1), 1);
    }

    fn f32_of(v: f32) -> u64 {
        v.to_bits() as u64
    }

    #[test]
    fn int_to_f32_matches_rust_round_to_nearest_and_brackets_it_in_directed_modes() {
        for &x in &[
            0i64,
            1,
            -1,
            16_777_217,
            -16_777_217,
            i64::MAX,
            i64::MIN,
            123_456_789_012,
            3,
            -7,
        ] {
            let rn = convert(Ty::F32, Ty::S64, Round::Nearest, false, x as u64);
            assert_eq!(rn, f32_of(x as f32), "RN of {x}");
            let down =
                f32::from_bits(convert(Ty::F32, Ty::S64, Round::Down, false, x as u64) as u32);
            let up = f32::from_bits(convert(Ty::F32, Ty::S64, Round::Up, false, x as u64) as u32);
            let zero =
                f32::from_bits(convert(Ty::F32, Ty::S64, Round::Zero, false, x as u64) as u32);
            assert!(
                (down as f64) <= x as f64 && (up as f64) >= x as f64,
                "{x}: {down} {up}"
            );
            assert!(zero.abs() as f64 <= (x as f64).abs());
        }
        // 2^24 + 1 is between 2^24 and 2^24 + 2.
        let x = 16_777_217u64;
        assert_eq!(
            convert(Ty::F32, Ty::U32, Round::Down, false, x),
            f32_of(16_777_216.0)
        );
        assert_eq!(
            convert(Ty::F32, Ty::U32, Round::Up, false, x),
            f32_of(16_777_218.0)
        );
        assert_eq!(
            convert(Ty::F32, Ty::U32, Round::Zero, false, x),
            f32_of(16_777_216.0)
        );
    }

    #[test]
    fn f64_to_f32_in_every_mode_and_overflow() {
        let third = 1.0f64 / 3.0;
        let rn = convert(Ty::F32, Ty::F64, Round::Nearest, false, third.to_bits());
        assert_eq!(rn, f32_of(third as f32));
        let down = convert(Ty::F32, Ty::F64, Round::Down, false, third.to_bits());
        let up = convert(Ty::F32, Ty::F64, Round::Up, false, third.to_bits());
        assert_eq!(up - down, 1, "adjacent floats bracket 1/3");
        assert_eq!(
            convert(Ty::F32, Ty::F64, Round::Nearest, false, 1e300f64.to_bits()),
            f32_of(f32::INFINITY)
        );
        assert_eq!(
            convert(Ty::F32, Ty::F64, Round::Zero, false, 1e300f64.to_bits()),
            f32_of(f32::MAX)
        );
        assert_eq!(
            convert(Ty::F32, Ty::F64, Round::Down, false, (-1e300f64).to_bits()),
            f32_of(f32::NEG_INFINITY)
        );
        // Subnormal result and FTZ.
        let tiny = 1e-40f64;
        assert_eq!(
            convert(Ty::F32, Ty::F64, Round::Nearest, false, tiny.to_bits()),
            f32_of(tiny as f32)
        );
        assert_eq!(
            convert(Ty::F32, Ty::F64, Round::Nearest, true, (-tiny).to_bits()),
            f32_of(-0.0)
        );
    }

    #[test]
    fn f16_round_trips_with_the_half_crate() {
        for &v in &[0.0f32, 1.0, -2.5, 65504.0, 65520.0, 1e-7, 6.1e-5, 3.25] {
            let bits = convert(Ty::F16, Ty::F32, Round::Nearest, false, f32_of(v));
            assert_eq!(bits as u16, half::f16::from_f32(v).to_bits(), "{v}");
            let back = convert(Ty::F32, Ty::F16, Round::Nearest, false, bits);
            assert_eq!(
                back,
                f32_of(half::f16::from_bits(bits as u16).to_f32()),
                "{v}"
            );
        }
        let bf = convert(Ty::BF16, Ty::F32, Round::Nearest, false, f32_of(3.25));
        assert_eq!(bf as u16, half::bf16::from_f32(3.25).to_bits());
    }

    #[test]
    fn float_to_int_saturates_and_maps_nan_to_zero() {
        assert_eq!(
            convert(Ty::S32, Ty::F32, Round::Zero, false, f32_of(-2.7)),
            (-2i32) as u32 as u64
        );
        assert_eq!(
            convert(Ty::S32, Ty::F32, Round::Down, false, f32_of(-2.2)),
            (-3i32) as u32 as u64
        );
        assert_eq!(convert(Ty::S32, Ty::F32, Round::Up, false, f32_of(2.2)), 3);
        assert_eq!(
            convert(Ty::S32, Ty::F32, Round::Nearest, false, f32_of(2.5)),
            2
        );
        assert_eq!(
            convert(Ty::S32, Ty::F32, Round::Nearest, false, f32_of(3.5)),
            4
        );
        assert_eq!(
            convert(Ty::S32, Ty::F32, Round::Nearest, false, f32_of(1e20)),
            i32::MAX as u64
        );
        assert_eq!(
            convert(Ty::U32, Ty::F32, Round::Nearest, false, f32_of(-5.0)),
            0
        );
        assert_eq!(
            convert(Ty::U32, Ty::F32, Round::Nearest, false, f32_of(f32::NAN)),
            0
        );
        assert_eq!(
            convert(Ty::S8, Ty::F32, Round::Nearest, false, f32_of(-300.0)),
            0xffff_ff80
        );
        assert_eq!(
            convert(Ty::U64, Ty::F64, Round::Nearest, false, 1e30f64.to_bits()),
            u64::MAX
        );
    }

    #[test]
    fn int_to_int_truncates_then_extends() {
        assert_eq!(convert(Ty::U8, Ty::S32, Round::Nearest, false, 0x1ff), 0xff);
        assert_eq!(
            convert(Ty::S8, Ty::U32, Round::Nearest, false, 0x80),
            0xffff_ff80
        );
        assert_eq!(
            convert(Ty::S64, Ty::S32, Round::Nearest, false, 0xffff_fffe),
            (-2i64) as u64
        );
        assert_eq!(
            convert(Ty::U64, Ty::U32, Round::Nearest, false, 0xffff_fffe),
            0xffff_fffe
        );
    }

    #[test]
    fn pack_halves_rounds_each_float_and_puts_the_first_high() {
        // 1.0 -> bf16 0x3f80, 0.5 -> 0x3f00; f16: 1.0 -> 0x3c00, 0.5 -> 0x3800.
        let (one, half) = (u64::from(1.0f32.to_bits()), u64::from(0.5f32.to_bits()));
        assert_eq!(pack_halves(Ty::BF16x2, one, half), 0x3f80_3f00);
        assert_eq!(pack_halves(Ty::F16x2, one, half), 0x3c00_3800);
        // Round to nearest even: 1 + 2^-8 + 2^-9 is above bf16's halfway point 1 + 2^-8.
        let x = u64::from((1.0f32 + 2f32.powi(-8) + 2f32.powi(-9)).to_bits());
        assert_eq!(pack_halves(Ty::BF16x2, x, 0) >> 16, 0x3f81);
    }
}
