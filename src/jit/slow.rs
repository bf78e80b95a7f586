//! Rare slow paths the generated code calls into: once per warp-instruction for conversions
//! that have no exact native Cranelift instruction, and per lane (inside the generated CAS
//! loop) for the new value of atomics on 16-bit and packed-half float types ([`rmw_value`]).
//!
//! Cranelift's conversions are exact only in round-to-nearest (`fcvt_from_*`, `fdemote`) and it
//! has no `f16`/`bf16` arithmetic on x86-64 without extra CPU features. So the translator
//! compiles the common conversions inline (integer to float in round-to-nearest, float to
//! integer in every rounding mode, `f32 <-> f64` in round-to-nearest) and sends the rest
//! (directed rounding of inexact integer-to-float and `f64 -> f32` conversions, anything with
//! `f16`/`bf16`, same-type float conversions) here: one call that converts every executing lane.
//!
//! [`convert_bits`] is the exact definition used here: every source value is turned into an
//! exact `sign * mantissa * 2^exponent` and rounded once to the destination format, so there is
//! no double rounding in any mode.

use super::abi::WarpCtx;
use crate::exec::WARP_STRIDE;
use crate::ir::{Operand, Reg, Round, Src, SrcMod, Ty};

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

/// Everything slow-path calls need that is fixed at compile time.
#[derive(Debug, Default)]
pub struct SlowPaths {
    pub converts: Vec<SlowConvert>,
    /// Register slots per lane (the register file holds `num_regs * 32` words).
    pub num_regs: u32,
    /// Bytes of constant bank the kernel reads (the caller guarantees the bank is this long).
    pub cbank_needed: u64,
    /// Every checked access of the kernel, indexed by the site number a fault reports.
    pub trap_sites: Vec<TrapSite>,
}

/// A checked memory access: what a fault there reports besides lane and address.
#[derive(Debug, Clone, Copy)]
pub struct TrapSite {
    pub pc: u32,
    pub space: crate::ir::Space,
    /// Access size in bytes: a faulting address that is not a multiple of it was misaligned
    /// (alignment is checked first), any other was out of range.
    pub size: u32,
    /// At an atomic (not CAST.SPIN): its op. The fault block then leaves the executing lanes
    /// in `out_c`, and the lanes before the faulting one are counted as having performed it.
    pub atomic: Option<crate::ir::AtomicOp>,
}

/// The slow-path entry of `Convert`: converts lanes `exec` of slow conversion `index`.
///
/// # Safety
/// `ctx` must be the live context of a call to the compiled kernel that owns the [`SlowPaths`]
/// `ctx.slow` points to: its register file holds `num_regs * 32` words and its constant bank at
/// least `cbank_needed` bytes (both ensured by `JitKernel::run_group`).
pub unsafe extern "C" fn convert_lanes(ctx: *mut WarpCtx, index: u32, exec: u32) {
    // SAFETY: per this function's contract, `ctx` is valid and exclusively ours for the call.
    let ctx = unsafe { &mut *ctx };
    // SAFETY: `ctx.slow` points to the `SlowPaths` of the running kernel, alive for the call.
    let slow = unsafe { &*ctx.slow };
    let Some(conv) = slow.converts.get(index as usize) else {
        return;
    };
    let words = slow.num_regs as usize * WARP_STRIDE;
    // SAFETY: the register file has `num_regs * 32` words (checked by `run_group`); no other
    // reference to it exists while the generated code is suspended in this call.
    let regs = unsafe { std::slice::from_raw_parts_mut(ctx.regs, words) };
    // SAFETY: the constant bank has at least `cbank_needed` bytes (ensured by `run_group`).
    let cbank = unsafe { std::slice::from_raw_parts(ctx.cbank, slow.cbank_needed as usize) };
    let src_words = conv.src_ty.regs();
    let mut rest = exec;
    while rest != 0 {
        let lane = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        let raw = read_operand(regs, cbank, conv.a.operand, src_words, lane);
        let bits = apply_modifier(raw, conv.a.modifier, conv.src_ty);
        let out = convert_bits(conv.dst_ty, conv.src_ty, conv.round, conv.ftz, bits);
        if !conv.dst.is_rz() {
            let r = conv.dst.0 as usize;
            regs[r * WARP_STRIDE + lane] = out as u32;
            if conv.dst_ty.regs() == 2 {
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
        (Some(&op), Some(&ty)) => crate::sem::atomic::rmw_value(op, ty, old, b, 0, ftz != 0).0,
        _ => old,
    }
}

fn read_operand(regs: &[u32], cbank: &[u8], op: Operand, words: u16, lane: usize) -> u64 {
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

/// Sign-bit position of a float type's encoding.
fn sign_bit(ty: Ty) -> u32 {
    ty.bits() - 1
}

/// Applies a source modifier in type `ty` to raw register bits (the low `ty.bits()` bits
/// matter; the result keeps bits above them as they were for integers).
pub fn apply_modifier(bits: u64, modifier: SrcMod, ty: Ty) -> u64 {
    let width_mask = if ty.bits() >= 64 {
        u64::MAX
    } else {
        (1u64 << ty.bits().max(32)) - 1
    };
    match modifier {
        SrcMod::None => bits,
        SrcMod::Not => !bits & width_mask,
        SrcMod::Neg if ty.is_float() => bits ^ (1 << sign_bit(ty)),
        SrcMod::Neg => bits.wrapping_neg() & width_mask,
        SrcMod::Abs => bits & !(1 << sign_bit(ty)),
        SrcMod::NegAbs => bits | (1 << sign_bit(ty)),
    }
}

/// Exponent and fraction widths of a float format.
fn format(ty: Ty) -> (u32, u32) {
    match ty {
        Ty::F16 => (5, 10),
        Ty::BF16 => (8, 7),
        Ty::F32 => (8, 23),
        Ty::F64 => (11, 52),
        // Packed and integer types never reach the float paths (callers check `is_float` and
        // validation rejects packed conversions); give them the widest format.
        Ty::F16x2
        | Ty::BF16x2
        | Ty::U8
        | Ty::U16
        | Ty::U32
        | Ty::U64
        | Ty::S8
        | Ty::S16
        | Ty::S32
        | Ty::S64
        | Ty::B16
        | Ty::B32
        | Ty::B64 => (11, 52),
    }
}

/// An exact value: `(-1)^negative * mantissa * 2^exponent`, or a special.
enum Exact {
    Finite {
        negative: bool,
        mantissa: u128,
        exponent: i32,
    },
    Inf {
        negative: bool,
    },
    /// A NaN (converts to the canonical NaN, or to 0 for integers).
    Nan,
}

fn decode_float(bits: u64, ty: Ty, ftz: bool) -> Exact {
    let (eb, mb) = format(ty);
    let negative = (bits >> (eb + mb)) & 1 == 1;
    let exp_field = (bits >> mb) & ((1 << eb) - 1);
    let frac = bits & ((1u64 << mb) - 1);
    let bias = (1i32 << (eb - 1)) - 1;
    if exp_field == (1 << eb) - 1 {
        if frac == 0 {
            Exact::Inf { negative }
        } else {
            Exact::Nan
        }
    } else if exp_field == 0 {
        if ftz {
            return Exact::Finite {
                negative,
                mantissa: 0,
                exponent: 0,
            };
        }
        Exact::Finite {
            negative,
            mantissa: frac as u128,
            exponent: 1 - bias - mb as i32,
        }
    } else {
        Exact::Finite {
            negative,
            mantissa: (frac | 1 << mb) as u128,
            exponent: exp_field as i32 - bias - mb as i32,
        }
    }
}

fn decode_int(bits: u64, ty: Ty) -> Exact {
    let b = ty.bits();
    let v: i128 = if ty.is_signed_int() {
        let shift = 64 - b;
        (((bits << shift) as i64) >> shift) as i128
    } else if b >= 64 {
        bits as i128
    } else {
        (bits & ((1u64 << b) - 1)) as i128
    };
    Exact::Finite {
        negative: v < 0,
        mantissa: v.unsigned_abs(),
        exponent: 0,
    }
}

/// Whether rounding the magnitude away from zero is required, given the dropped remainder
/// compared with one half (`Ordering`) and the kept value's lowest bit.
fn round_up(
    round: Round,
    negative: bool,
    inexact: bool,
    vs_half: std::cmp::Ordering,
    odd: bool,
) -> bool {
    use std::cmp::Ordering::*;
    if !inexact {
        return false;
    }
    match round {
        Round::Nearest => vs_half == Greater || (vs_half == Equal && odd),
        Round::Zero => false,
        Round::Up => !negative,
        Round::Down => negative,
    }
}

/// `mantissa * 2^-shift` split into the integer part, whether anything was dropped, and how
/// the dropped part compares with one half.
fn shift_right(mantissa: u128, shift: u32) -> (u128, bool, std::cmp::Ordering) {
    if shift == 0 {
        return (mantissa, false, std::cmp::Ordering::Less);
    }
    if shift > 128 {
        return (0, mantissa != 0, std::cmp::Ordering::Less);
    }
    let kept = if shift == 128 { 0 } else { mantissa >> shift };
    let rem = if shift == 128 {
        mantissa
    } else {
        mantissa & ((1u128 << shift) - 1)
    };
    let half = 1u128 << (shift - 1);
    (kept, rem != 0, rem.cmp(&half))
}

fn encode_float(value: Exact, ty: Ty, round: Round, ftz: bool) -> u64 {
    let (eb, mb) = format(ty);
    let sign = |neg: bool| (neg as u64) << (eb + mb);
    let exp_all = (1u64 << eb) - 1;
    let inf = |neg: bool| sign(neg) | exp_all << mb;
    let max_finite = |neg: bool| sign(neg) | (exp_all - 1) << mb | ((1u64 << mb) - 1);
    match value {
        Exact::Inf { negative } => inf(negative),
        // Every NaN result is the canonical NaN (sign 0, exponent and fraction all ones), as
        // NVIDIA GPUs and the reference interpreter produce.
        Exact::Nan => exp_all << mb | ((1u64 << mb) - 1),
        Exact::Finite {
            negative,
            mantissa,
            exponent,
        } => {
            if mantissa == 0 {
                return sign(negative);
            }
            let bias = (1i32 << (eb - 1)) - 1;
            let emin = 1 - bias;
            let top = 127 - mantissa.leading_zeros() as i32; // bit index of the leading one
            let e_val = exponent + top;
            let mut q_exp = e_val.max(emin) - mb as i32;
            let shift = exponent - q_exp;
            let mut n = if shift >= 0 {
                mantissa << shift
            } else {
                let (kept, inexact, vs_half) = shift_right(mantissa, (-shift) as u32);
                if round_up(round, negative, inexact, vs_half, kept & 1 == 1) {
                    kept + 1
                } else {
                    kept
                }
            };
            if n == 1u128 << (mb + 1) {
                n >>= 1;
                q_exp += 1;
            }
            let biased = if n >> mb == 0 {
                0
            } else {
                (q_exp + mb as i32 + bias) as u64
            };
            if biased >= exp_all {
                let to_inf = match round {
                    Round::Nearest => true,
                    Round::Zero => false,
                    Round::Up => !negative,
                    Round::Down => negative,
                };
                return if to_inf {
                    inf(negative)
                } else {
                    max_finite(negative)
                };
            }
            if biased == 0 && ftz {
                return sign(negative);
            }
            sign(negative) | biased << mb | (n as u64 & ((1u64 << mb) - 1))
        }
    }
}

/// Float-to-integer: rounds by `round`, saturates to `ty`'s range; NaN converts to 0.
fn float_to_int(value: Exact, ty: Ty, round: Round) -> u64 {
    let (min, max): (i128, i128) = if ty.is_signed_int() {
        (-(1i128 << (ty.bits() - 1)), (1i128 << (ty.bits() - 1)) - 1)
    } else {
        (0, (1i128 << ty.bits()) - 1)
    };
    let v: i128 = match value {
        Exact::Nan => 0,
        Exact::Inf { negative } => {
            if negative {
                min
            } else {
                max
            }
        }
        Exact::Finite {
            negative,
            mantissa,
            exponent,
        } => {
            let magnitude = if exponent >= 0 {
                let bits = 128 - mantissa.leading_zeros() as i32;
                if bits + exponent > 100 {
                    1u128 << 100
                } else {
                    mantissa << exponent
                }
            } else {
                let (kept, inexact, vs_half) = shift_right(mantissa, (-exponent) as u32);
                if round_up(round, negative, inexact, vs_half, kept & 1 == 1) {
                    kept + 1
                } else {
                    kept
                }
            };
            let magnitude = magnitude.min(1u128 << 100) as i128;
            if negative {
                -magnitude
            } else {
                magnitude
            }
        }
    };
    encode_int(v.clamp(min, max), ty)
}

/// An integer value in `ty`, as register bits: truncated to `ty.bits()`, then extended to the
/// register width (32 bits, or 64 for 64-bit types) by `ty`'s signedness.
fn encode_int(v: i128, ty: Ty) -> u64 {
    let b = ty.bits();
    let truncated = if b >= 64 {
        v as u64
    } else {
        (v as u64) & ((1u64 << b) - 1)
    };
    if b >= 32 {
        return truncated;
    }
    let extended = if ty.is_signed_int() {
        let shift = 64 - b;
        (((truncated << shift) as i64) >> shift) as u64
    } else {
        truncated
    };
    extended & 0xffff_ffff
}

/// The exact `Convert` semantics of the IR on raw register bits (source modifier already
/// applied): integer to integer truncates or extends by the source signedness; integer or float
/// to float rounds once by `round`; float to integer rounds by `round` and saturates, NaN to 0;
/// `ftz` flushes subnormal float inputs and results to sign-preserving zero. Float results
/// narrower than 32 bits are zero-extended in the register; integer results narrower than 32
/// bits are extended by the destination's signedness.
pub fn convert_bits(dst_ty: Ty, src_ty: Ty, round: Round, ftz: bool, bits: u64) -> u64 {
    let value = if src_ty.is_float() {
        decode_float(bits, src_ty, ftz)
    } else {
        decode_int(bits, src_ty)
    };
    if dst_ty.is_float() {
        encode_float(value, dst_ty, round, ftz)
    } else if src_ty.is_float() {
        float_to_int(value, dst_ty, round)
    } else {
        let Exact::Finite {
            negative, mantissa, ..
        } = value
        else {
            return 0;
        };
        let v = if negative {
            -(mantissa as i128)
        } else {
            mantissa as i128
        };
        encode_int(v, dst_ty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let rn = convert_bits(Ty::F32, Ty::S64, Round::Nearest, false, x as u64);
            assert_eq!(rn, f32_of(x as f32), "RN of {x}");
            let down =
                f32::from_bits(convert_bits(Ty::F32, Ty::S64, Round::Down, false, x as u64) as u32);
            let up =
                f32::from_bits(convert_bits(Ty::F32, Ty::S64, Round::Up, false, x as u64) as u32);
            let zero =
                f32::from_bits(convert_bits(Ty::F32, Ty::S64, Round::Zero, false, x as u64) as u32);
            assert!(
                (down as f64) <= x as f64 && (up as f64) >= x as f64,
                "{x}: {down} {up}"
            );
            assert!(zero.abs() as f64 <= (x as f64).abs());
        }
        // 2^24 + 1 is between 2^24 and 2^24 + 2.
        let x = 16_777_217u64;
        assert_eq!(
            convert_bits(Ty::F32, Ty::U32, Round::Down, false, x),
            f32_of(16_777_216.0)
        );
        assert_eq!(
            convert_bits(Ty::F32, Ty::U32, Round::Up, false, x),
            f32_of(16_777_218.0)
        );
        assert_eq!(
            convert_bits(Ty::F32, Ty::U32, Round::Zero, false, x),
            f32_of(16_777_216.0)
        );
    }

    #[test]
    fn f64_to_f32_in_every_mode_and_overflow() {
        let third = 1.0f64 / 3.0;
        let rn = convert_bits(Ty::F32, Ty::F64, Round::Nearest, false, third.to_bits());
        assert_eq!(rn, f32_of(third as f32));
        let down = convert_bits(Ty::F32, Ty::F64, Round::Down, false, third.to_bits());
        let up = convert_bits(Ty::F32, Ty::F64, Round::Up, false, third.to_bits());
        assert_eq!(up - down, 1, "adjacent floats bracket 1/3");
        assert_eq!(
            convert_bits(Ty::F32, Ty::F64, Round::Nearest, false, 1e300f64.to_bits()),
            f32_of(f32::INFINITY)
        );
        assert_eq!(
            convert_bits(Ty::F32, Ty::F64, Round::Zero, false, 1e300f64.to_bits()),
            f32_of(f32::MAX)
        );
        assert_eq!(
            convert_bits(Ty::F32, Ty::F64, Round::Down, false, (-1e300f64).to_bits()),
            f32_of(f32::NEG_INFINITY)
        );
        // Subnormal result and FTZ.
        let tiny = 1e-40f64;
        assert_eq!(
            convert_bits(Ty::F32, Ty::F64, Round::Nearest, false, tiny.to_bits()),
            f32_of(tiny as f32)
        );
        assert_eq!(
            convert_bits(Ty::F32, Ty::F64, Round::Nearest, true, (-tiny).to_bits()),
            f32_of(-0.0)
        );
    }

    #[test]
    fn f16_round_trips_with_the_half_crate() {
        for &v in &[0.0f32, 1.0, -2.5, 65504.0, 65520.0, 1e-7, 6.1e-5, 3.25] {
            let bits = convert_bits(Ty::F16, Ty::F32, Round::Nearest, false, f32_of(v));
            assert_eq!(bits as u16, half::f16::from_f32(v).to_bits(), "{v}");
            let back = convert_bits(Ty::F32, Ty::F16, Round::Nearest, false, bits);
            assert_eq!(
                back,
                f32_of(half::f16::from_bits(bits as u16).to_f32()),
                "{v}"
            );
        }
        let bf = convert_bits(Ty::BF16, Ty::F32, Round::Nearest, false, f32_of(3.25));
        assert_eq!(bf as u16, half::bf16::from_f32(3.25).to_bits());
    }

    #[test]
    fn float_to_int_saturates_and_maps_nan_to_zero() {
        assert_eq!(
            convert_bits(Ty::S32, Ty::F32, Round::Zero, false, f32_of(-2.7)),
            (-2i32) as u32 as u64
        );
        assert_eq!(
            convert_bits(Ty::S32, Ty::F32, Round::Down, false, f32_of(-2.2)),
            (-3i32) as u32 as u64
        );
        assert_eq!(
            convert_bits(Ty::S32, Ty::F32, Round::Up, false, f32_of(2.2)),
            3
        );
        assert_eq!(
            convert_bits(Ty::S32, Ty::F32, Round::Nearest, false, f32_of(2.5)),
            2
        );
        assert_eq!(
            convert_bits(Ty::S32, Ty::F32, Round::Nearest, false, f32_of(3.5)),
            4
        );
        assert_eq!(
            convert_bits(Ty::S32, Ty::F32, Round::Nearest, false, f32_of(1e20)),
            i32::MAX as u64
        );
        assert_eq!(
            convert_bits(Ty::U32, Ty::F32, Round::Nearest, false, f32_of(-5.0)),
            0
        );
        assert_eq!(
            convert_bits(Ty::U32, Ty::F32, Round::Nearest, false, f32_of(f32::NAN)),
            0
        );
        assert_eq!(
            convert_bits(Ty::S8, Ty::F32, Round::Nearest, false, f32_of(-300.0)),
            0xffff_ff80
        );
        assert_eq!(
            convert_bits(Ty::U64, Ty::F64, Round::Nearest, false, 1e30f64.to_bits()),
            u64::MAX
        );
    }

    #[test]
    fn int_to_int_truncates_then_extends() {
        assert_eq!(
            convert_bits(Ty::U8, Ty::S32, Round::Nearest, false, 0x1ff),
            0xff
        );
        assert_eq!(
            convert_bits(Ty::S8, Ty::U32, Round::Nearest, false, 0x80),
            0xffff_ff80
        );
        assert_eq!(
            convert_bits(Ty::S64, Ty::S32, Round::Nearest, false, 0xffff_fffe),
            (-2i64) as u64
        );
        assert_eq!(
            convert_bits(Ty::U64, Ty::U32, Round::Nearest, false, 0xffff_fffe),
            0xffff_fffe
        );
    }
}
