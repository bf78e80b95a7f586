//! [`crate::ir::Op::Convert`]: the one definition of every conversion, used by the interpreter
//! for every conversion and by the JIT for those it cannot compile exactly inline (directed
//! rounding of inexact integer-to-float and `f64 -> f32` conversions, anything with
//! `f16`/`bf16`, same-type float conversions: `jit/slow.rs`).

use super::float;
use super::{int_value, low_mask, to_register};
use crate::ir::{Round, Ty};

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
}
