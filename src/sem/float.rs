//! Bit-exact IEEE 754 arithmetic for the float types of the IR (`f16`, `bf16`, `f32`, `f64` and
//! the packed `f16x2`/`bf16x2`), as pure functions on raw bits.
//!
//! The formats are the IR's ([`FloatFormat`], [`Ty::float_format`]): what the encoding is
//! (fields, masks, NaN and subnormal classes) is defined beside [`Ty`]. What computing with it
//! means (exact decoding, rounding, arithmetic) is defined here, as a second inherent
//! `impl FloatFormat` block (Rust allows one in any module of the defining crate). Methods
//! rather than free functions because the format is the natural receiver and every caller
//! already holds one (`fmt.to_f64(bits)`, `fmt.from_f64(x, round)`); a reader finds the
//! encoding in `ir/types.rs` and the arithmetic here.
//!
//! # How results are computed
//!
//! * Every value of every format converts *exactly* to `f64` (via the `half` crate for the 16-bit
//!   formats). Add, subtract, multiply and divide are computed in `f64` and then rounded once to
//!   the destination format. For `f64` that is the native IEEE operation; for `f32`, `f16` and
//!   `bf16` the double rounding is innocuous because `f64` carries at least `2p + 2` significand
//!   bits of the target precision `p` (53 ≥ 2·24 + 2), the classical condition under which
//!   rounding to `f64` and then to the target gives the correctly rounded result for `+ - × ÷`.
//!   `Rem` (C `fmod`) is exact in `f64`.
//! * [`FloatFormat::round_exact`] rounds an exact value `±m·2^e` into a format under any
//!   [`Round`] mode. It is the single place that knows how to round, used by arithmetic, by
//!   integer→float and by float→float conversions.
//! * **NaN results are canonical**: every operation that produces a NaN produces the format's
//!   canonical NaN (sign 0, exponent and fraction all ones: `0x7fffffff` for `f32`, `0x7fff`
//!   for `f16`/`bf16`), as NVIDIA GPUs do. This also makes results independent of the host's
//!   own NaN propagation rules (x86 and AArch64 differ). Sign operations (`Neg`, `Abs`) are bit
//!   operations and keep payloads.
//! * **FTZ**: with `ftz`, subnormal inputs are replaced by a zero of the same sign before the
//!   operation and a subnormal result is replaced by a zero of the same sign after rounding.
//! * **min/max** follow IEEE 754-2008 `minNum`/`maxNum`: if exactly one input is NaN the result
//!   is the other input; if both are, the canonical NaN. `-0` is treated as less than `+0`
//!   (so `min(-0, +0) = -0`, `max(-0, +0) = +0`), which makes the result deterministic.

use crate::ir::{FloatFormat, HalfSel, Round, Ty};

/// Float binary operations of [`float_op`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FloatOp {
    Add,
    Sub,
    Mul,
    Div,
    /// C `fmod`: remainder with the sign of the dividend.
    Rem,
    Min,
    Max,
}

impl FloatFormat {
    /// The format whose values are `bits` wide (16 → `f16`, 32 → `f32`, 64 → `f64`); used to
    /// give a float meaning to integer-typed operands where an op compares as floats.
    pub fn of_width(bits: u32) -> FloatFormat {
        match bits {
            0..=16 => FloatFormat::F16,
            17..=32 => FloatFormat::F32,
            _ => FloatFormat::F64,
        }
    }

    /// [`FloatFormat::flush_subnormal`] if `ftz`, else `bits` unchanged.
    pub fn flush_if(self, ftz: bool, bits: u64) -> u64 {
        if ftz {
            self.flush_subnormal(bits)
        } else {
            bits
        }
    }

    /// The exact value of `bits` as an `f64` (every format here is a subset of `f64`).
    pub fn to_f64(self, bits: u64) -> f64 {
        match self {
            FloatFormat::F64 => f64::from_bits(bits),
            FloatFormat::F32 => f32::from_bits(bits as u32) as f64,
            FloatFormat::F16 => half::f16::from_bits(bits as u16).to_f64(),
            FloatFormat::BF16 => half::bf16::from_bits(bits as u16).to_f64(),
            _ => self.to_f64_generic(bits),
        }
    }

    /// Decoding for formats other than the four named ones (none exist in the IR today; kept so
    /// that `to_f64` is total).
    fn to_f64_generic(self, bits: u64) -> f64 {
        let sign = if self.is_negative(bits) { -1.0 } else { 1.0 };
        let exp = self.exp_field(bits);
        let frac = (bits & self.frac_mask()) as f64;
        let bias = self.bias();
        if exp == self.exp_all_ones() {
            return if frac == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            };
        }
        let scale = |e: i32| 2f64.powi(e);
        if exp == 0 {
            sign * frac * scale(1 - bias - self.frac_bits as i32)
        } else {
            sign * (frac + scale(self.frac_bits as i32))
                * scale(exp as i32 - bias - self.frac_bits as i32)
        }
    }

    /// `x` rounded into this format by `round` (NaN becomes the canonical NaN).
    pub fn from_f64(self, x: f64, round: Round) -> u64 {
        if x.is_nan() {
            return self.canonical_nan();
        }
        let negative = x.is_sign_negative();
        let sign = if negative { self.sign_mask() } else { 0 };
        if x.is_infinite() {
            return sign | self.infinity();
        }
        if x == 0.0 {
            return sign;
        }
        let raw = x.to_bits();
        let exp_field = ((raw >> 52) & 0x7ff) as i32;
        let frac = raw & ((1 << 52) - 1);
        let (mantissa, exp2) = if exp_field == 0 {
            (frac, -1074)
        } else {
            (frac | (1 << 52), exp_field - 1075)
        };
        self.round_exact(negative, mantissa as u128, exp2, round)
    }

    /// The value `(-1)^negative · magnitude · 2^exp2`, rounded into this format by `round`
    /// (overflow gives infinity or the largest finite value as IEEE 754 prescribes for the mode).
    pub fn round_exact(self, negative: bool, magnitude: u128, exp2: i32, round: Round) -> u64 {
        let sign = if negative { self.sign_mask() } else { 0 };
        if magnitude == 0 {
            return sign;
        }
        let precision = self.frac_bits as i32 + 1;
        let bias = self.bias();
        let emin = 1 - bias;
        // Exponent of the most significant bit of the exact value.
        let msb = 127 - magnitude.leading_zeros() as i32;
        let value_exp = exp2 + msb;
        // Exponent of the unit in the last place of the result (fixed at the subnormal quantum
        // below the normal range).
        let quantum = (value_exp - (precision - 1)).max(emin - (precision - 1));
        let mut significand: u128 = if quantum <= exp2 {
            // Exactly representable at this quantum (the shift is below `precision`).
            magnitude << (exp2 - quantum)
        } else {
            let shift = (quantum - exp2) as u32;
            let (kept, rest, half) = if shift >= 128 {
                (0, magnitude, None)
            } else {
                let rest = magnitude & ((1u128 << shift) - 1);
                (magnitude >> shift, rest, Some(1u128 << (shift - 1)))
            };
            let round_up = match round {
                Round::Nearest => match half {
                    Some(half) => rest > half || (rest == half && kept & 1 == 1),
                    // Everything is below half of the smallest quantum.
                    None => false,
                },
                Round::Zero => false,
                Round::Down => negative && rest != 0,
                Round::Up => !negative && rest != 0,
            };
            kept + round_up as u128
        };
        let mut quantum = quantum;
        if significand == 1u128 << precision {
            significand >>= 1;
            quantum += 1;
        }
        if significand < 1u128 << (precision - 1) {
            // Subnormal (or zero after rounding): biased exponent 0.
            return sign | significand as u64;
        }
        let biased = quantum + (precision - 1) + bias;
        if biased >= self.exp_all_ones() as i32 {
            let to_infinity = match round {
                Round::Nearest => true,
                Round::Zero => false,
                Round::Down => negative,
                Round::Up => !negative,
            };
            return sign
                | if to_infinity {
                    self.infinity()
                } else {
                    self.max_finite()
                };
        }
        sign | (biased as u64) << self.frac_bits | (significand as u64 & self.frac_mask())
    }
}

/// `a op b` in format `fmt`, with IEEE round-to-nearest-even, canonical NaN results and
/// optional FTZ (see the module docs).
pub fn float_op(fmt: FloatFormat, op: FloatOp, a: u64, b: u64, ftz: bool) -> u64 {
    let (a, b) = (fmt.flush_if(ftz, a), fmt.flush_if(ftz, b));
    let result = match op {
        FloatOp::Min | FloatOp::Max => return min_max(fmt, op == FloatOp::Max, a, b),
        FloatOp::Add => fmt.to_f64(a) + fmt.to_f64(b),
        FloatOp::Sub => fmt.to_f64(a) - fmt.to_f64(b),
        FloatOp::Mul => fmt.to_f64(a) * fmt.to_f64(b),
        FloatOp::Div => fmt.to_f64(a) / fmt.to_f64(b),
        FloatOp::Rem => fmt.to_f64(a) % fmt.to_f64(b),
    };
    fmt.flush_if(ftz, fmt.from_f64(result, Round::Nearest))
}

/// IEEE `minNum`/`maxNum` with `-0 < +0` (inputs already flushed if FTZ applies).
fn min_max(fmt: FloatFormat, max: bool, a: u64, b: u64) -> u64 {
    match (fmt.is_nan(a), fmt.is_nan(b)) {
        (true, true) => return fmt.canonical_nan(),
        (true, false) => return b,
        (false, true) => return a,
        (false, false) => {}
    }
    let (x, y) = (fmt.to_f64(a), fmt.to_f64(b));
    let a_first = if x == y {
        // Equal values differ at most in the sign of zero: -0 orders before +0.
        fmt.is_negative(a)
    } else {
        x < y
    };
    if a_first != max {
        a
    } else {
        b
    }
}

/// [`float_op`] applied per element of a (possibly packed) float type; `None` for integer types.
pub fn float_op_ty(ty: Ty, op: FloatOp, a: u64, b: u64, ftz: bool) -> Option<u64> {
    let (fmt, elements) = ty.float_format()?;
    Some(per_element(fmt, elements, a, b, |x, y| {
        float_op(fmt, op, x, y, ftz)
    }))
}

/// Applies `f` to each `fmt`-wide element of `a` and `b` (element 0 in the low bits).
pub fn per_element(
    fmt: FloatFormat,
    elements: u32,
    a: u64,
    b: u64,
    f: impl Fn(u64, u64) -> u64,
) -> u64 {
    let width = fmt.bits();
    let mask = fmt.value_mask();
    (0..elements).fold(0, |acc, i| {
        let shift = i * width;
        acc | (f((a >> shift) & mask, (b >> shift) & mask) & mask) << shift
    })
}

/// Fused multiply-add `a * b + c` in format `fmt`, computed exactly and rounded once by
/// `round` ([`crate::ir::Op::Fma`]). NaN inputs and invalid operations (`∞ · 0`, `∞ - ∞`)
/// give the canonical NaN; an exactly zero sum of nonzero terms is `+0` (`-0` when rounding
/// down), and `±0 + ±0` follows the IEEE sign rules. `ftz` flushes subnormal inputs and the
/// result.
pub fn fma(fmt: FloatFormat, a: u64, b: u64, c: u64, round: Round, ftz: bool) -> u64 {
    let (a, b, c) = (
        fmt.flush_if(ftz, a),
        fmt.flush_if(ftz, b),
        fmt.flush_if(ftz, c),
    );
    if fmt.is_nan(a) || fmt.is_nan(b) || fmt.is_nan(c) {
        return fmt.canonical_nan();
    }
    let inf = |x: u64| fmt.exp_field(x) == fmt.exp_all_ones();
    let zero = |x: u64| x & !fmt.sign_mask() & fmt.value_mask() == 0;
    let product_negative = fmt.is_negative(a) != fmt.is_negative(b);
    if (inf(a) && zero(b)) || (zero(a) && inf(b)) {
        return fmt.canonical_nan();
    }
    if inf(a) || inf(b) {
        if inf(c) && fmt.is_negative(c) != product_negative {
            return fmt.canonical_nan();
        }
        let sign = if product_negative { fmt.sign_mask() } else { 0 };
        return sign | fmt.infinity();
    }
    if inf(c) {
        return c;
    }
    let (_, ma, ea) = decode_finite(fmt, a);
    let (_, mb, eb) = decode_finite(fmt, b);
    let (c_negative, mc, ec) = decode_finite(fmt, c);
    let (mp, ep) = (ma * mb, ea + eb);
    let result = if mp == 0 && mc == 0 {
        let negative = if product_negative == c_negative {
            c_negative
        } else {
            round == Round::Down
        };
        if negative {
            fmt.sign_mask()
        } else {
            0
        }
    } else {
        let (negative, magnitude, exp2) =
            exact_sum((product_negative, mp, ep), (c_negative, mc, ec));
        if magnitude == 0 {
            if round == Round::Down {
                fmt.sign_mask()
            } else {
                0
            }
        } else {
            fmt.round_exact(negative, magnitude, exp2, round)
        }
    };
    fmt.flush_if(ftz, result)
}

/// [`fma`] applied per element of a (possibly packed) float type; `None` for integer types.
pub fn fma_ty(ty: Ty, a: u64, b: u64, c: u64, round: Round, ftz: bool) -> Option<u64> {
    let (fmt, elements) = ty.float_format()?;
    let width = fmt.bits();
    let mask = fmt.value_mask();
    Some((0..elements).fold(0, |acc, i| {
        let shift = i * width;
        let element = |x: u64| (x >> shift) & mask;
        acc | (fma(fmt, element(a), element(b), element(c), round, ftz) & mask) << shift
    }))
}

/// [`crate::ir::Op::Fma`] with its half selectors: each of `a`, `b`, `c` (32-bit pairs,
/// already modified) rearranged by its [`HalfSel`], then [`fma_ty`]. Selectors and modifiers
/// commute (a modifier acts alike on both halves), so the order of the two does not matter.
/// Validation admits selectors other than `H1H0` only on `F16x2`/`BF16x2`; on another type
/// such a selector rearranges the low 32 bits of the value.
pub fn fma_selected(
    ty: Ty,
    halves: [HalfSel; 3],
    [a, b, c]: [u64; 3],
    round: Round,
    ftz: bool,
) -> Option<u64> {
    let pick = |sel: HalfSel, v: u64| match sel {
        HalfSel::H1H0 => v,
        HalfSel::H0H0 | HalfSel::H1H1 => u64::from(sel.apply(v as u32)),
    };
    fma_ty(
        ty,
        pick(halves[0], a),
        pick(halves[1], b),
        pick(halves[2], c),
        round,
        ftz,
    )
}

/// A finite value of `fmt` as `(negative, magnitude, exp2)` with value
/// `(-1)^negative · magnitude · 2^exp2`, exactly.
fn decode_finite(fmt: FloatFormat, bits: u64) -> (bool, u128, i32) {
    let negative = fmt.is_negative(bits);
    let exp = fmt.exp_field(bits) as i32;
    let frac = u128::from(bits & fmt.frac_mask());
    let shift = fmt.bias() + fmt.frac_bits as i32;
    if exp == 0 {
        (negative, frac, 1 - shift)
    } else {
        (negative, frac | 1u128 << fmt.frac_bits, exp - shift)
    }
}

/// The sum of two exact terms `(negative, magnitude, exp2)` (magnitudes below 2^107), exact
/// except that bits far below the larger term's top may be folded into one sticky bit: the
/// larger term is normalised to its top bit at position 120 and the smaller aligned to it, so
/// at least 66 bits lie between the sticky bit and the rounding point of any format of up to
/// 53 bits of precision, which is enough for a single correct rounding (also under
/// cancellation: bits are only lost when the smaller term is below 2^-14 of the larger).
fn exact_sum(x: (bool, u128, i32), y: (bool, u128, i32)) -> (bool, u128, i32) {
    let top = |t: (bool, u128, i32)| {
        if t.1 == 0 {
            i32::MIN
        } else {
            t.2 + 128 - t.1.leading_zeros() as i32
        }
    };
    let (big, small) = if top(x) >= top(y) { (x, y) } else { (y, x) };
    let k = 121 - (128 - big.1.leading_zeros() as i32);
    let (big_m, e) = (big.1 << k, big.2 - k);
    let small_m = if small.1 == 0 {
        0
    } else if small.2 >= e {
        small.1 << (small.2 - e)
    } else {
        let shift = (e - small.2) as u32;
        if shift >= 128 {
            1
        } else {
            let kept = small.1 >> shift;
            kept | u128::from(kept << shift != small.1)
        }
    };
    if big.0 == small.0 {
        (big.0, big_m + small_m, e)
    } else {
        // |big| >= |small| by top bit; if equal tops the difference may change sign.
        if big_m >= small_m {
            (big.0, big_m - small_m, e)
        } else {
            (small.0, small_m - big_m, e)
        }
    }
}

/// IEEE equality of two values of format `fmt` (`+0 == -0`, NaN equals nothing).
pub fn float_equal(fmt: FloatFormat, a: u64, b: u64) -> bool {
    fmt.to_f64(a) == fmt.to_f64(b)
}

/// Float → integer: rounds by `round` to an integer, saturates to the range of a `dst_bits`-bit
/// integer (signed if `dst_signed`); NaN converts to 0. Returns the low `dst_bits` bits.
pub fn float_to_int(
    fmt: FloatFormat,
    bits: u64,
    round: Round,
    dst_bits: u32,
    dst_signed: bool,
) -> u64 {
    let x = fmt.to_f64(bits);
    if x.is_nan() {
        return 0;
    }
    let rounded = match round {
        Round::Nearest => x.round_ties_even(),
        Round::Zero => x.trunc(),
        Round::Down => x.floor(),
        Round::Up => x.ceil(),
    };
    let (lo, hi): (i128, i128) = if dst_signed {
        (-(1i128 << (dst_bits - 1)), (1i128 << (dst_bits - 1)) - 1)
    } else {
        (0, (1i128 << dst_bits) - 1)
    };
    // `lo` is a power of two (exact in f64); `hi as f64` may round up to the next power of two,
    // and anything at or above that is out of range, so these comparisons are exact.
    let value = if rounded <= lo as f64 {
        lo
    } else if rounded >= hi as f64 {
        hi
    } else {
        rounded as i128
    };
    (value as u64) & (u64::MAX >> (64 - dst_bits))
}

/// Integer → float: `value` rounded into `fmt` by `round`.
pub fn int_to_float(fmt: FloatFormat, value: i128, round: Round) -> u64 {
    fmt.round_exact(value < 0, value.unsigned_abs(), 0, round)
}

#[cfg(test)]
mod tests {
    use super::*;

    const F32: FloatFormat = FloatFormat::F32;

    fn f(x: f32) -> u64 {
        x.to_bits() as u64
    }

    #[test]
    fn f32_arithmetic_matches_native_ieee() {
        let values = [
            0.0f32,
            -0.0,
            1.0,
            -1.5,
            3.0e38,
            -3.4028235e38,
            1.0e-45,
            f32::MIN_POSITIVE,
            0.1,
            1.0 / 3.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            16777216.0,
            7.0e-39,
        ];
        for &x in &values {
            for &y in &values {
                let cases = [
                    (FloatOp::Add, x + y),
                    (FloatOp::Sub, x - y),
                    (FloatOp::Mul, x * y),
                    (FloatOp::Div, x / y),
                    (FloatOp::Rem, x % y),
                ];
                for (op, native) in cases {
                    let got = float_op(F32, op, f(x), f(y), false);
                    let want = if native.is_nan() {
                        0x7fff_ffff
                    } else {
                        f(native)
                    };
                    assert_eq!(got, want, "{op:?} {x:e} {y:e}");
                }
            }
        }
    }

    #[test]
    fn nan_results_are_canonical() {
        assert_eq!(
            float_op(F32, FloatOp::Sub, f(f32::INFINITY), f(f32::INFINITY), false),
            0x7fff_ffff
        );
        assert_eq!(
            float_op(F32, FloatOp::Add, 0xffc0_0001, f(1.0), false),
            0x7fff_ffff
        );
        assert_eq!(
            float_op(FloatFormat::F16, FloatOp::Mul, 0x7c00, 0x0000, false),
            0x7fff
        );
        assert_eq!(
            float_op(FloatFormat::F64, FloatOp::Div, 0, 0, false),
            0x7fff_ffff_ffff_ffff
        );
    }

    #[test]
    fn ftz_flushes_inputs_and_results_keeping_sign() {
        let tiny = 0x0000_0001u64; // smallest positive subnormal
        let neg_tiny = 0x8000_0001u64;
        assert_eq!(float_op(F32, FloatOp::Add, tiny, tiny, false), 2);
        assert_eq!(float_op(F32, FloatOp::Add, tiny, tiny, true), 0);
        assert_eq!(
            float_op(F32, FloatOp::Add, neg_tiny, neg_tiny, true),
            0x8000_0000
        );
        // 1.5 * 2^-126 * 0.5 = 0.75 * 2^-126: subnormal result flushed to +0.
        let min_normal = f(f32::MIN_POSITIVE);
        assert_eq!(float_op(F32, FloatOp::Mul, min_normal, f(0.5), true), 0);
        assert_eq!(
            float_op(F32, FloatOp::Mul, min_normal, f(-0.5), true),
            0x8000_0000
        );
        assert_eq!(
            float_op(F32, FloatOp::Mul, min_normal, f(0.5), false),
            0x0040_0000
        );
    }

    #[test]
    fn min_max_follow_min_num_with_ordered_zeros() {
        let nan = 0x7fc0_0000;
        assert_eq!(float_op(F32, FloatOp::Min, nan, f(2.0), false), f(2.0));
        assert_eq!(float_op(F32, FloatOp::Max, f(2.0), nan, false), f(2.0));
        assert_eq!(float_op(F32, FloatOp::Min, nan, nan, false), 0x7fff_ffff);
        assert_eq!(float_op(F32, FloatOp::Min, f(0.0), f(-0.0), false), f(-0.0));
        assert_eq!(float_op(F32, FloatOp::Max, f(-0.0), f(0.0), false), f(0.0));
        assert_eq!(float_op(F32, FloatOp::Min, f(-3.0), f(2.0), false), f(-3.0));
        assert_eq!(float_op(F32, FloatOp::Max, f(-3.0), f(2.0), false), f(2.0));
    }

    #[test]
    fn rounding_to_f16_and_bf16_matches_the_half_crate_for_nearest() {
        let mut x = 1.0e-9f64;
        while x < 1.0e6 {
            for v in [x, -x, x * 1.000_244_140_625, x * 1.000_488_281_25] {
                assert_eq!(
                    FloatFormat::F16.from_f64(v, Round::Nearest),
                    half::f16::from_f64(v).to_bits() as u64,
                    "{v:e}"
                );
                assert_eq!(
                    FloatFormat::BF16.from_f64(v, Round::Nearest),
                    half::bf16::from_f64(v).to_bits() as u64,
                    "{v:e}"
                );
                assert_eq!(
                    FloatFormat::F32.from_f64(v, Round::Nearest),
                    (v as f32).to_bits() as u64,
                    "{v:e}"
                );
            }
            x *= 1.37;
        }
        // f16 overflow threshold: 65520 rounds to infinity, 65519 to 65504.
        assert_eq!(FloatFormat::F16.from_f64(65520.0, Round::Nearest), 0x7c00);
        assert_eq!(FloatFormat::F16.from_f64(65519.0, Round::Nearest), 0x7bff);
    }

    #[test]
    fn directed_rounding() {
        // 1 + 2^-30 is between 1.0 and the next f32 1 + 2^-23.
        let x = 1.0 + 2f64.powi(-30);
        assert_eq!(F32.from_f64(x, Round::Nearest), f(1.0));
        assert_eq!(F32.from_f64(x, Round::Zero), f(1.0));
        assert_eq!(F32.from_f64(x, Round::Down), f(1.0));
        assert_eq!(F32.from_f64(x, Round::Up), f(1.0) + 1);
        assert_eq!(F32.from_f64(-x, Round::Down), f(-1.0) + 1);
        assert_eq!(F32.from_f64(-x, Round::Up), f(-1.0));
        // Overflow: toward zero gives the largest finite value.
        assert_eq!(F32.from_f64(1e39, Round::Zero), f(f32::MAX));
        assert_eq!(F32.from_f64(1e39, Round::Up), f(f32::INFINITY));
        assert_eq!(F32.from_f64(-1e39, Round::Up), f(f32::MIN));
        assert_eq!(F32.from_f64(-1e39, Round::Down), f(f32::NEG_INFINITY));
        // Underflow below the smallest subnormal.
        assert_eq!(F32.from_f64(1e-50, Round::Nearest), 0);
        assert_eq!(F32.from_f64(1e-50, Round::Up), 1);
        assert_eq!(F32.from_f64(-1e-50, Round::Down), 0x8000_0001);
    }

    #[test]
    fn int_to_float_rounds_by_mode() {
        // 2^24 + 1 is not representable in f32.
        let v = (1i128 << 24) + 1;
        assert_eq!(int_to_float(F32, v, Round::Nearest), f(16777216.0));
        assert_eq!(int_to_float(F32, v, Round::Up), f(16777218.0));
        assert_eq!(int_to_float(F32, -v, Round::Down), f(-16777218.0));
        assert_eq!(
            int_to_float(F32, u64::MAX as i128, Round::Nearest),
            f(u64::MAX as f32)
        );
        assert_eq!(
            int_to_float(F32, u64::MAX as i128, Round::Zero),
            f(1.8446743e19)
        );
        assert_eq!(
            int_to_float(FloatFormat::F64, i64::MIN as i128, Round::Nearest),
            (i64::MIN as f64).to_bits()
        );
        assert_eq!(
            int_to_float(FloatFormat::F16, 65519, Round::Nearest),
            0x7bff
        );
        assert_eq!(int_to_float(FloatFormat::F16, 70000, Round::Zero), 0x7bff);
        assert_eq!(int_to_float(F32, 0, Round::Down), 0);
    }

    #[test]
    fn float_to_int_saturates_and_maps_nan_to_zero() {
        assert_eq!(float_to_int(F32, f(2.5), Round::Nearest, 32, true), 2);
        assert_eq!(float_to_int(F32, f(3.5), Round::Nearest, 32, true), 4);
        assert_eq!(
            float_to_int(F32, f(-2.5), Round::Zero, 32, true),
            (-2i32) as u32 as u64
        );
        assert_eq!(
            float_to_int(F32, f(-2.5), Round::Down, 32, true),
            (-3i32) as u32 as u64
        );
        assert_eq!(float_to_int(F32, f(2.1), Round::Up, 32, true), 3);
        assert_eq!(
            float_to_int(F32, f(3e9), Round::Zero, 32, true),
            0x7fff_ffff
        );
        assert_eq!(
            float_to_int(F32, f(-3e9), Round::Zero, 32, true),
            0x8000_0000
        );
        assert_eq!(float_to_int(F32, f(-1.0), Round::Zero, 32, false), 0);
        assert_eq!(
            float_to_int(F32, f(5e9), Round::Zero, 32, false),
            0xffff_ffff
        );
        assert_eq!(float_to_int(F32, f(f32::NAN), Round::Zero, 32, true), 0);
        assert_eq!(
            float_to_int(F32, f(f32::INFINITY), Round::Zero, 64, false),
            u64::MAX
        );
        assert_eq!(
            float_to_int(F32, f(f32::NEG_INFINITY), Round::Zero, 64, true),
            i64::MIN as u64
        );
        assert_eq!(
            float_to_int(F32, f(1e19), Round::Zero, 64, true),
            i64::MAX as u64
        );
        assert_eq!(float_to_int(F32, f(300.0), Round::Zero, 8, false), 0xff);
        assert_eq!(float_to_int(F32, f(-300.0), Round::Zero, 8, true), 0x80);
    }

    #[test]
    fn packed_halves_are_independent() {
        // f16: 1.0 = 0x3c00, 2.0 = 0x4000, 3.0 = 0x4200, 0.5 = 0x3800.
        let a = 0x3c00_4000; // element 0 = 2.0, element 1 = 1.0
        let b = 0x3800_3c00; // element 0 = 1.0, element 1 = 0.5
        assert_eq!(
            float_op_ty(Ty::F16x2, FloatOp::Add, a, b, false),
            Some(0x3e00_4200)
        );
        assert_eq!(float_op_ty(Ty::U32, FloatOp::Add, a, b, false), None);
    }

    /// A small deterministic generator (splitmix64) for the property tests.
    fn bits_stream(seed: u64) -> impl FnMut() -> u64 {
        let mut state = seed;
        move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    #[test]
    fn fma_matches_the_host_fused_multiply_add() {
        // Rust's `mul_add` is IEEE fusedMultiplyAdd (one rounding, to nearest even): an oracle
        // independent of `round_exact`.
        let mut next = bits_stream(7);
        for _ in 0..20_000 {
            let (a, b, c) = (next(), next(), next());
            let want = f64::from_bits(a).mul_add(f64::from_bits(b), f64::from_bits(c));
            let got = fma(FloatFormat::F64, a, b, c, Round::Nearest, false);
            if want.is_nan() {
                assert_eq!(got, FloatFormat::F64.canonical_nan());
            } else {
                assert_eq!(got, want.to_bits(), "{a:#x} * {b:#x} + {c:#x}");
            }
            // f32 with exponents near each other, where cancellation and sticky bits matter.
            let (a, b) = (
                (a as u32) & 0x8fff_ffff | 0x3000_0000,
                (b as u32) & 0x8fff_ffff | 0x3000_0000,
            );
            let c = (c as u32) & 0x8fff_ffff | 0x2000_0000;
            let want = f32::from_bits(a).mul_add(f32::from_bits(b), f32::from_bits(c));
            let got = fma(
                FloatFormat::F32,
                a.into(),
                b.into(),
                c.into(),
                Round::Nearest,
                false,
            );
            assert_eq!(got, u64::from(want.to_bits()), "{a:#x} * {b:#x} + {c:#x}");
        }
    }

    #[test]
    fn fma_rounds_once_in_every_mode() {
        let f16 = FloatFormat::F16;
        let (one, tiny) = (0x3c00, 0x0001); // 1.0 and 2^-24
        let neg_tiny = 0x8001;
        // 1 + 2^-24: below half an ulp (2^-11) of 1.
        assert_eq!(fma(f16, one, one, tiny, Round::Nearest, false), 0x3c00);
        assert_eq!(fma(f16, one, one, tiny, Round::Up, false), 0x3c01);
        assert_eq!(fma(f16, one, one, tiny, Round::Zero, false), 0x3c00);
        // 1 - 2^-24: toward zero and down it is the largest f16 below 1 (1 - 2^-11).
        assert_eq!(fma(f16, one, one, neg_tiny, Round::Zero, false), 0x3bff);
        assert_eq!(fma(f16, one, one, neg_tiny, Round::Down, false), 0x3bff);
        assert_eq!(fma(f16, one, one, neg_tiny, Round::Nearest, false), 0x3c00);
        // 1.5 * 1.5 + 0 = 2.25 exactly.
        assert_eq!(fma(f16, 0x3e00, 0x3e00, 0, Round::Nearest, false), 0x4080);
        // Signed zeros: +0 + -0 is +0, except rounding down; -0 + -0 is -0.
        assert_eq!(fma(f16, 0, one, 0x8000, Round::Nearest, false), 0);
        assert_eq!(fma(f16, 0, one, 0x8000, Round::Down, false), 0x8000);
        assert_eq!(fma(f16, 0x8000, one, 0x8000, Round::Nearest, false), 0x8000);
        // x - x is +0 (-0 rounding down).
        assert_eq!(fma(f16, one, one, 0xbc00, Round::Nearest, false), 0);
        assert_eq!(fma(f16, one, one, 0xbc00, Round::Down, false), 0x8000);
        // Invalid operations.
        assert_eq!(
            fma(f16, 0x7c00, 0, one, Round::Nearest, false),
            f16.canonical_nan()
        );
        assert_eq!(
            fma(f16, 0x7c00, one, 0xfc00, Round::Nearest, false),
            f16.canonical_nan()
        );
        assert_eq!(fma(f16, 0x7c00, 0xbc00, one, Round::Nearest, false), 0xfc00);
        // f32 FTZ: a subnormal input counts as a zero of its sign (-0 * 2 + -0 = -0).
        let f32 = FloatFormat::F32;
        let got = fma(
            f32,
            0x8000_0001,
            0x4000_0000,
            0x8000_0000,
            Round::Nearest,
            true,
        );
        assert_eq!(got, 0x8000_0000);
        let got = fma(
            f32,
            0x8000_0001,
            0x4000_0000,
            0x8000_0000,
            Round::Nearest,
            false,
        );
        assert_eq!(got, 0x8000_0002);
        // Packed: each half separately (1.5*1.5+0 and 1*1+1).
        assert_eq!(
            fma_ty(
                Ty::F16x2,
                0x3c00_3e00,
                0x3c00_3e00,
                0x3c00_0000,
                Round::Nearest,
                false
            ),
            Some(0x4000_4080)
        );
    }

    /// `fma_selected` on one packed type with round-to-nearest-even and no flushing.
    fn sel_fma(ty: Ty, halves: [HalfSel; 3], a: u64, b: u64, c: u64) -> u64 {
        fma_selected(ty, halves, [a, b, c], Round::Nearest, false).unwrap()
    }

    #[test]
    fn half_selectors_replicate_one_half_of_each_source() {
        use HalfSel::{H0H0, H1H0, H1H1};
        assert_eq!(H0H0.apply(0x1234_5678), 0x5678_5678);
        assert_eq!(H1H1.apply(0x1234_5678), 0x1234_1234);
        assert_eq!(H1H0.apply(0x1234_5678), 0x1234_5678);
        // a = (3, 1), b = (2, 0.5), c = (1, 1), high half first.
        // bf16: 1 = 0x3f80, 3 = 0x4040, 2 = 0x4000, 0.5 = 0x3f00, 2.5 = 0x4020.
        let (a, b, c) = (0x4040_3f80, 0x4000_3f00, 0x3f80_3f80);
        assert_eq!(
            sel_fma(Ty::BF16x2, [H0H0, H1H1, H1H0], a, b, c),
            0x4040_4040
        ); // 1*2+1
        assert_eq!(
            sel_fma(Ty::BF16x2, [H1H1, H0H0, H1H0], a, b, c),
            0x4020_4020
        ); // 3*.5+1
        assert_eq!(sel_fma(Ty::BF16x2, HalfSel::AS_READ, a, b, c), 0x40e0_3fc0); // (7, 1.5)
                                                                                 // f16: 1 = 0x3c00, 3 = 0x4200, 2 = 0x4000, 0.5 = 0x3800, 2.5 = 0x4100.
        let (a, b, c) = (0x4200_3c00, 0x4000_3800, 0x3c00_3c00);
        assert_eq!(sel_fma(Ty::F16x2, [H0H0, H1H1, H1H0], a, b, c), 0x4200_4200);
        assert_eq!(sel_fma(Ty::F16x2, [H1H1, H0H0, H1H0], a, b, c), 0x4100_4100);
        // The addend's selector: c.h1_h1 = 2, c.h0_h0 = 0.5 with a = b = (1, 1).
        let (one, c) = (0x3c00_3c00, 0x4000_3800);
        assert_eq!(
            sel_fma(Ty::F16x2, [H1H0, H1H0, H1H1], one, one, c),
            0x4200_4200
        );
        assert_eq!(
            sel_fma(Ty::F16x2, [H1H0, H1H0, H0H0], one, one, c),
            0x3e00_3e00
        );
    }

    #[test]
    fn selectors_commute_with_the_float_modifiers() {
        use crate::ir::SrcMod;
        let values = [
            0u64,
            0x8000_0000,
            0x0000_8000,
            0x7fff_fc00,
            0x3c00_bc00,
            0x1234_fedc,
        ];
        for ty in [Ty::F16x2, Ty::BF16x2] {
            for v in values {
                for sel in HalfSel::ALL {
                    for m in [SrcMod::None, SrcMod::Neg, SrcMod::Abs, SrcMod::NegAbs] {
                        let before =
                            u64::from(sel.apply(super::super::apply_modifier(ty, m, v) as u32));
                        let after =
                            super::super::apply_modifier(ty, m, u64::from(sel.apply(v as u32)));
                        assert_eq!(before, after, "{ty} {sel} {m:?} {v:#x}");
                    }
                }
            }
        }
    }

    #[test]
    fn selected_half_fma_rounds_once_to_nearest_even() {
        use HalfSel::{H0H0, H1H0, H1H1};
        // bf16 (8 significant bits): (1 + 2^-4)^2 - 1.125 = 2^-8 exactly when fused; rounding
        // the product first would give 1.125 (1.125 + 2^-8 is a tie, 1.125 has an even
        // significand) and a zero result. 1 + 2^-4 = 0x3f88, 1.125 = 0x3f90, 2^-8 = 0x3b80.
        let a = 0x3f88_0000; // high half
        let b = 0x0000_3f88; // low half
        assert_eq!(
            sel_fma(Ty::BF16x2, [H1H1, H0H0, H1H0], a, b, 0xbf90_bf90),
            0x3b80_3b80
        );
        // Ties to even: 1 + 2^-8 (halfway between 1 and 1 + 2^-7) rounds down to 1 (0x3f80);
        // 1 + 3 * 2^-8 (halfway between 1 + 2^-7 and 1 + 2^-6) rounds up to 0x3f82.
        // 2^-8 = 0x3b80, 3 * 2^-8 = 0x3c40; a.h0_h0 = 1, b = (1, 1).
        let c = 0x3c40_3b80;
        assert_eq!(
            sel_fma(Ty::BF16x2, [H0H0, H1H0, H1H0], 0xdead_3f80, 0x3f80_3f80, c),
            0x3f82_3f80
        );
        // The same bits are different numbers in f16 and bf16: 0x7bff is f16's largest
        // finite value (65504), whose double overflows to +inf (0x7c00); in bf16 it is
        // 2^120 * (2 - 2^-7), whose double 0x7c7f is finite.
        let (big, two) = (0x7bff_0000, 0x4000_4000);
        assert_eq!(
            sel_fma(Ty::F16x2, [H1H1, H1H0, H1H0], big, two, 0),
            0x7c00_7c00
        );
        assert_eq!(
            sel_fma(Ty::BF16x2, [H1H1, H1H0, H1H0], big, two, 0),
            0x7c7f_7c7f
        );
        // Subnormals are kept (no flushing): the smallest subnormal 0x0001 (2^-24 in f16,
        // 2^-133 in bf16) times 1.5 is a tie between 1 and 2 units, rounding to even (2);
        // times 0.5 a tie between 0 and 1, rounding to +0.
        let tiny = 0x0000_0001;
        assert_eq!(
            sel_fma(Ty::F16x2, [H0H0, H1H0, H1H0], tiny, 0x3e00_3e00, 0),
            0x0002_0002
        );
        assert_eq!(
            sel_fma(Ty::BF16x2, [H0H0, H1H0, H1H0], tiny, 0x3fc0_3fc0, 0),
            0x0002_0002
        );
        assert_eq!(
            sel_fma(Ty::F16x2, [H0H0, H1H0, H1H0], tiny, 0x3800_3800, 0),
            0
        );
        assert_eq!(
            sel_fma(Ty::BF16x2, [H0H0, H1H0, H1H0], tiny, 0x3f00_3f00, 0),
            0
        );
        // Signed zeros: -0 * 1 + -0 = -0, +0 * 1 + -0 = +0 (round to nearest).
        let zeros = 0x0000_8000; // (+0, -0)
        let (one, neg_zero) = (0x3c00_3c00, 0x8000_8000);
        assert_eq!(
            sel_fma(Ty::F16x2, [H0H0, H1H0, H1H0], zeros, one, neg_zero),
            0x8000_8000
        );
        assert_eq!(
            sel_fma(Ty::F16x2, [H1H1, H1H0, H1H0], zeros, one, neg_zero),
            0
        );
        // NaNs and invalid operations give the canonical NaN 0x7fff: a NaN selected from the
        // other half, inf * 0, inf - inf; a NaN in the unselected half is not read.
        let (inf, nan) = (0x7c00u64, 0x7e01u64);
        assert_eq!(
            sel_fma(Ty::F16x2, [H1H1, H1H0, H1H0], nan << 16, one, 0),
            0x7fff_7fff
        );
        assert_eq!(sel_fma(Ty::F16x2, [H0H0, H1H0, H1H0], nan << 16, one, 0), 0);
        assert_eq!(
            sel_fma(Ty::F16x2, [H0H0, H1H0, H1H0], inf, 0, 0),
            0x7fff_7fff
        );
        let minus_inf = 0xfc00_fc00;
        assert_eq!(
            sel_fma(Ty::F16x2, [H0H0, H1H0, H1H0], inf, one, minus_inf),
            0x7fff_7fff
        );
        // bf16 infinity (0x7f80) times 2 stays infinite.
        assert_eq!(
            sel_fma(Ty::BF16x2, [H1H1, H1H0, H1H0], 0x7f80_0000, two, 0),
            0x7f80_7f80
        );
    }
}
