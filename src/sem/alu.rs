//! The ALU ops of the IR ([`crate::ir::Op::Unary`], `Binary`, `IAdd3`, `Imad`, `Lea`, `Shf`,
//! `Lop3`, `SetP` and predicate logic) as pure value functions, in the conventions of
//! [`crate::sem`].
//!
//! # Conventions the IR leaves to the backend (strengthened, not ignored)
//!
//! * **Narrow integer types** (`u8`, `s16`, ...): an op computes modulo `2^bits` and its result
//!   is extended to the 32-bit register by the type's signedness (sign-extended for `s8`/`s16`,
//!   zero-extended otherwise), the same rule as narrow loads.
//! * **Shift amounts** of [`BinOp::Shl`]/[`BinOp::Shr`] are the whole unsigned 32-bit source
//!   register (one word also for 64-bit types, as validation guarantees), not truncated to the
//!   type's width: `>= bits` gives 0 / sign fill (PTX: "Shift amounts greater than the register
//!   width N are clamped to N").
//! * **Float types under integer-only ops** (bitwise ops, shifts, `MulHi`, `Popc`, `Clz`,
//!   `Brev`, `Not`) act on the raw bits as the unsigned integer of the same width.

use super::float::{self, FloatOp};
use super::{apply_modifier, int_value, low_mask, sign_extend, to_register};
use crate::ir::{BinOp, BoolOp, CmpOp, FloatFormat, ImadMode, Round, ShfInst, SrcMod, Ty, UnOp};

/// [`crate::ir::Op::Unary`]: `op(a)` in `ty`, in register form. `Popc` and `Clz` return a
/// 32-bit count (the type's width for `Clz(0)`).
pub fn unary(op: UnOp, ty: Ty, a: u64) -> u64 {
    let bits = ty.bits();
    let a = a & low_mask(bits);
    match op {
        UnOp::Not => to_register(ty, !a),
        UnOp::Neg => to_register(ty, apply_modifier(ty, SrcMod::Neg, a)),
        UnOp::Abs => to_register(ty, apply_modifier(ty, SrcMod::Abs, a)),
        UnOp::Popc => a.count_ones() as u64,
        UnOp::Clz => (a.leading_zeros() - (64 - bits)) as u64,
        UnOp::Brev => to_register(ty, a.reverse_bits() >> (64 - bits)),
        UnOp::Bfind | UnOp::BfindShift => match leading_one(ty, a) {
            None => 0xffff_ffff,
            Some(pos) if op == UnOp::Bfind => pos as u64,
            Some(pos) => (bits - 1 - pos) as u64,
        },
    }
}

/// The position of the most significant 1 of `a` (unsigned `ty`), or of the most significant
/// bit differing from the sign bit (signed `ty`); `None` when there is none.
fn leading_one(ty: Ty, a: u64) -> Option<u32> {
    let bits = ty.bits();
    let a = a & low_mask(bits);
    let a = if ty.is_signed_int() && a >> (bits - 1) & 1 == 1 {
        !a & low_mask(bits)
    } else {
        a
    };
    (a != 0).then(|| 63 - a.leading_zeros())
}

/// [`crate::ir::Op::SetP`] with a `chain`: the comparison of the high words `a`, `b` (in
/// `ty`) extended by the low words' result `chain`.
pub fn compare_chained(cmp: CmpOp, ty: Ty, a: u64, b: u64, chain: bool) -> bool {
    let equal = compare(CmpOp::Eq, ty, a, b);
    match cmp {
        CmpOp::Eq => equal && chain,
        CmpOp::Ne => !equal || chain,
        CmpOp::Lt | CmpOp::Le => compare(CmpOp::Lt, ty, a, b) || (equal && chain),
        CmpOp::Gt | CmpOp::Ge => compare(CmpOp::Gt, ty, a, b) || (equal && chain),
        // Validation admits only the six integer comparisons.
        CmpOp::Equ
        | CmpOp::Neu
        | CmpOp::Ltu
        | CmpOp::Leu
        | CmpOp::Gtu
        | CmpOp::Geu
        | CmpOp::Num
        | CmpOp::Nan => compare(cmp, ty, a, b),
    }
}

/// [`crate::ir::Op::Prmt`]: the byte permute of `b:a` by `sel` (general selector form).
pub fn prmt(a: u32, b: u32, sel: u32) -> u32 {
    let source = (u64::from(b) << 32) | u64::from(a);
    (0..4).fold(0u32, |acc, i| {
        let nibble = sel >> (4 * i) & 0xf;
        let byte = (source >> (8 * (nibble & 7))) as u8;
        let byte = if nibble & 8 != 0 {
            ((byte as i8) >> 7) as u8
        } else {
            byte
        };
        acc | u32::from(byte) << (8 * i)
    })
}

/// [`crate::ir::Op::Bfe`]: bit-field extract in `ty` (`U32`, `S32`, `U64`, `S64`), in
/// register form, as the PTX ISA specifies `bfe`.
pub fn bfe(ty: Ty, a: u64, pos: u32, len: u32) -> u64 {
    let bits = ty.bits();
    let (pos, len) = (pos & 0xff, len & 0xff);
    let signed = ty.is_signed_int();
    let a = a & low_mask(bits);
    // The sign bit of the field: the field's top bit, or `a`'s own top bit past its width.
    let sbit = if !signed || len == 0 {
        false
    } else {
        let top = (pos + len - 1).min(bits - 1);
        a >> top & 1 == 1
    };
    let field = (0..len.min(bits)).fold(0u64, |acc, i| {
        let bit = if pos + i < bits {
            a >> (pos + i) & 1 == 1
        } else {
            sbit
        };
        acc | u64::from(bit) << i
    });
    let fill = if sbit {
        low_mask(bits) & !low_mask(len.min(bits))
    } else {
        0
    };
    to_register(ty, field | fill)
}

/// [`crate::ir::Op::Bfi`]: bit-field insert in `ty` (`B32`, `B64`), in register form.
pub fn bfi(ty: Ty, insert: u64, base: u64, pos: u32, len: u32) -> u64 {
    let bits = ty.bits();
    let (pos, len) = (pos & 0xff, len & 0xff);
    let base = base & low_mask(bits);
    if len == 0 || pos >= bits {
        return to_register(ty, base);
    }
    let n = len.min(bits - pos);
    let field = low_mask(n) << pos;
    to_register(ty, (base & !field) | ((insert << pos) & field))
}

/// [`crate::ir::Op::PredLut`] and [`crate::ir::Op::Lop3`]'s table: `lut[(a<<2)|(b<<1)|c]`.
pub fn lut3(lut: u8, a: bool, b: bool, c: bool) -> bool {
    let index = (u8::from(a) << 2) | (u8::from(b) << 1) | u8::from(c);
    lut >> index & 1 == 1
}

/// [`crate::ir::Op::PackedMinMax`]: `op` on each 16-bit half of `a` and `b` (bits 15..0 with
/// 15..0, 31..16 with 31..16), each half compared as `ty` (`U16` or `S16`), packed into one
/// 32-bit word. Validation admits only `Min` and `Max`; any other op is computed per half the
/// same way ([`binary`] in `S16` for a signed `ty`, `U16` otherwise).
pub fn packed_min_max(op: BinOp, ty: Ty, a: u64, b: u64) -> u64 {
    let half_ty = if ty.is_signed_int() { Ty::S16 } else { Ty::U16 };
    let half = |shift: u32| {
        let r = binary_int(op, half_ty, (a >> shift) & 0xffff, (b >> shift) & 0xffff);
        (r as u64 & 0xffff) << shift
    };
    half(16) | half(0)
}

/// [`crate::ir::Op::Binary`]: `op(a, b)` in `ty`, in register form (`u128` because `MulWide` on
/// 64-bit types yields 128 bits; see [`BinOp::result_words`]).
pub fn binary(op: BinOp, ty: Ty, a: u64, b: u64, ftz: bool) -> u128 {
    match ty.float_format() {
        Some(_) => binary_float(op, ty, a, b, ftz),
        None => binary_int(op, ty, a, b),
    }
}

fn binary_int(op: BinOp, ty: Ty, a: u64, b: u64) -> u128 {
    let bits = ty.bits();
    let mask = low_mask(bits);
    let signed = ty.is_signed_int();
    let (ua, ub) = (a & mask, b & mask);
    let (sa, sb) = (int_value(ty, a), int_value(ty, b));
    let reg = |v: u64| to_register(ty, v) as u128;
    match op {
        BinOp::Add => reg(ua.wrapping_add(ub)),
        BinOp::Sub => reg(ua.wrapping_sub(ub)),
        BinOp::Mul => reg(ua.wrapping_mul(ub)),
        BinOp::MulHi => {
            // The exact double-width product (fits i128/u128 for 64-bit operands).
            let high = if signed {
                (sa * sb) >> bits
            } else {
                ((ua as u128 * ub as u128) >> bits) as i128
            };
            reg(high as u64)
        }
        BinOp::MulWide => {
            let wide_bits = 2 * bits;
            let product = if signed {
                (sa * sb) as u128
            } else {
                ua as u128 * ub as u128
            };
            let product = product & (u128::MAX >> (128 - wide_bits));
            if wide_bits < 32 {
                // 8-bit operands: a 16-bit result, extended to the register by signedness.
                let extended = if signed {
                    sign_extend(product as u64, wide_bits) as u32 as u64
                } else {
                    product as u64
                };
                extended as u128
            } else {
                product
            }
        }
        BinOp::Div => {
            if ub == 0 {
                // NVIDIA: all ones for unsigned, -1 for signed (the same bits).
                reg(mask)
            } else if signed {
                // `INT_MIN / -1` overflows back to INT_MIN: the low bits of the exact quotient.
                reg((sa / sb) as u64)
            } else {
                reg(ua / ub)
            }
        }
        BinOp::Rem => {
            if ub == 0 {
                reg(ua)
            } else if signed {
                // Sign of the dividend (Rust `%`); `INT_MIN % -1 = 0` exactly in i128.
                reg((sa % sb) as u64)
            } else {
                reg(ua % ub)
            }
        }
        BinOp::Min => reg(if signed {
            sa.min(sb) as u64
        } else {
            ua.min(ub)
        }),
        BinOp::Max => reg(if signed {
            sa.max(sb) as u64
        } else {
            ua.max(ub)
        }),
        BinOp::And => reg(ua & ub),
        BinOp::Or => reg(ua | ub),
        BinOp::Xor => reg(ua ^ ub),
        BinOp::Shl => reg(if b >= bits as u64 { 0 } else { ua << b }),
        BinOp::Shr => {
            if signed {
                // Amounts `>= bits` fill with the sign (`sa` is the sign-extended i128 value).
                reg((sa >> b.min(bits as u64)) as u64)
            } else if b >= bits as u64 {
                0
            } else {
                reg(ua >> b)
            }
        }
    }
}

/// Float `Binary` ops. Arithmetic is IEEE (see [`super::float`]); bitwise ops and shifts act on
/// the raw bits as unsigned integers; `MulHi` likewise (validation rejects it for floats).
/// `MulWide` (validation rejects it for floats) is the product rounded to nearest in the format
/// twice as wide: `f16`/`bf16` → `f32` (exact for `f16`), `f32` → `f64` (exact); for `f64` and
/// the packed types no wider format exists and the result is the same-width product with zero
/// upper words.
fn binary_float(op: BinOp, ty: Ty, a: u64, b: u64, ftz: bool) -> u128 {
    let float = |fop: FloatOp| float::float_op_ty(ty, fop, a, b, ftz).unwrap_or(0) as u128;
    match op {
        BinOp::Add => float(FloatOp::Add),
        BinOp::Sub => float(FloatOp::Sub),
        BinOp::Mul => float(FloatOp::Mul),
        BinOp::Div => float(FloatOp::Div),
        BinOp::Rem => float(FloatOp::Rem),
        BinOp::Min => float(FloatOp::Min),
        BinOp::Max => float(FloatOp::Max),
        BinOp::MulWide => match ty.float_format() {
            // Into the format twice as wide: f16/bf16 -> f32, f32 -> f64.
            Some((fmt, 1)) if fmt.bits() <= 32 => {
                let wide = FloatFormat::of_width(2 * fmt.bits());
                let product = fmt.to_f64(fmt.flush_if(ftz, a)) * fmt.to_f64(fmt.flush_if(ftz, b));
                wide.flush_if(ftz, wide.from_f64(product, Round::Nearest)) as u128
            }
            Some(_) | None => float(FloatOp::Mul),
        },
        BinOp::MulHi | BinOp::And | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr => {
            let unsigned_ty = if ty.bits() == 16 {
                Ty::U16
            } else if ty.bits() == 32 {
                Ty::U32
            } else {
                Ty::U64
            };
            binary_int(op, unsigned_ty, a, b)
        }
    }
}

/// The contribution of a 32-bit `IADD3`/`LEA` addend to the wide sum that produces carries.
///
/// A negated operand `-x` enters as `~x + 1` computed without wrapping (`2^32 - x`, which is
/// `2^32` for `x = 0`), the way the hardware forms a subtraction: so `IADD3 R0, P0, Ra, -Rb, RZ`
/// sets `P0` exactly when `Ra >= Rb` (no borrow), and the `IADD3 ... ; IADD3.X ..., ~Rb_hi, ...`
/// idiom computes a 64-bit difference. `Not` enters as `~x`; `Abs`/`NegAbs` (not SASS forms)
/// enter as the wrapping absolute value and as its negation in the same way.
#[inline]
pub fn carry_term(x: u32, modifier: SrcMod) -> u64 {
    let negate = |v: u32| (!v) as u64 + 1;
    let abs = (x as i32).unsigned_abs();
    match modifier {
        SrcMod::None => x as u64,
        SrcMod::Neg => negate(x),
        SrcMod::Not => (!x) as u64,
        SrcMod::Abs => abs as u64,
        SrcMod::NegAbs => negate(abs),
    }
}

/// SASS `IADD3`: the three addends as [`carry_term`]s plus the carry-ins, summed in 34 bits.
/// Returns the low 32 bits and `[bit 32, bit 33]` of the sum (the two carry-outs).
#[inline]
pub fn iadd3(terms: [u64; 3], carry_in: [bool; 2]) -> (u32, [bool; 2]) {
    let sum = terms.iter().sum::<u64>() + carry_in[0] as u64 + carry_in[1] as u64;
    (sum as u32, [sum >> 32 & 1 == 1, sum >> 33 & 1 == 1])
}

/// SASS `IMAD`: `a * b + c` (operands already modified). `Lo`/`Hi` return 32 bits; `Wide`
/// returns the 64-bit value. `c` is the 64-bit pair for `Wide` and `Hi`.
#[inline]
pub fn imad(mode: ImadMode, signed: bool, a: u32, b: u32, c: u64) -> u64 {
    let product: u64 = if signed {
        (a as i32 as i64).wrapping_mul(b as i32 as i64) as u64
    } else {
        a as u64 * b as u64
    };
    match mode {
        ImadMode::Lo => (product as u32).wrapping_add(c as u32) as u64,
        ImadMode::Hi => product.wrapping_add(c) >> 32,
        ImadMode::Wide => product.wrapping_add(c),
    }
}

/// SASS `LEA`. `a` is already modified; `b_term` is `b` as a [`carry_term`].
/// * `hi == false`: `(a << shift) + b + carry_in`, low 32 bits;
/// * `hi == true`: `hi32((c:a) << shift) + b + carry_in`.
///
/// Returns the 32-bit result and the carry (bit 32) of the addition. `shift` is 0..=31 after
/// validation; larger values shift the 64-bit `c:a` further (bits beyond 64 are lost).
#[inline]
pub fn lea(hi: bool, a: u32, b_term: u64, c: u32, shift: u8, carry_in: bool) -> (u32, bool) {
    let wide = ((c as u128) << 32 | a as u128)
        .checked_shl(shift as u32)
        .unwrap_or(0);
    let shifted = if hi { (wide >> 32) as u32 } else { wide as u32 };
    let sum = shifted as u64 + b_term + carry_in as u64;
    (sum as u32, sum >> 32 & 1 == 1)
}

/// SASS `SHF` funnel shift of the 64-bit value `hi:lo` (see [`ShfInst`]): 32-bit types clamp
/// the amount to 32 (`wrap`: mask it to 0..=31), 64-bit types mask it to 0..=63; `left`
/// shifts left, otherwise right (arithmetic for signed types); the result is the high word of
/// the shifted value if `high`, else the low word.
#[inline]
pub fn shf(inst: &ShfInst, lo: u32, shift: u32, hi: u32) -> u32 {
    let bits = inst.ty.bits().max(32);
    let amount = if inst.wrap {
        shift & (bits - 1)
    } else {
        shift.min(bits)
    };
    // In 128 bits a shift by 64 is defined: 0 (left, logical right) or the sign fill.
    let value = (hi as u64) << 32 | lo as u64;
    let shifted = if inst.left {
        ((value as u128) << amount) as u64
    } else if inst.ty.is_signed_int() {
        ((value as i64 as i128) >> amount) as u64
    } else {
        ((value as u128) >> amount) as u64
    };
    if inst.high {
        (shifted >> 32) as u32
    } else {
        shifted as u32
    }
}

/// SASS `LOP3.LUT`: each result bit is `lut[(a << 2) | (b << 1) | c]` of the operand bits.
#[inline]
pub fn lop3(a: u32, b: u32, c: u32, lut: u8) -> u32 {
    (0..8u32).filter(|i| lut >> i & 1 == 1).fold(0, |acc, i| {
        let pick = |bit: u32, v: u32| if i & bit != 0 { v } else { !v };
        acc | (pick(4, a) & pick(2, b) & pick(1, c))
    })
}

/// `cmp(a, b)` in type `ty`. Integers compare by the type's signedness; the unordered forms
/// equal the ordered ones for integers, `Num` is true and `Nan` false. Floats follow IEEE: the
/// ordered forms are false and the unordered forms true when an input is NaN; `+0 == -0`.
/// Packed float types (which validation rejects here) compare true when both elements do.
pub fn compare(cmp: CmpOp, ty: Ty, a: u64, b: u64) -> bool {
    match ty.float_format() {
        Some((fmt, elements)) => (0..elements).all(|i| {
            let shift = i * fmt.bits();
            let element = |v: u64| fmt.to_f64((v >> shift) & low_mask(fmt.bits()));
            compare_f64(cmp, element(a), element(b))
        }),
        None => {
            let (x, y) = (int_value(ty, a), int_value(ty, b));
            match cmp {
                CmpOp::Eq | CmpOp::Equ => x == y,
                CmpOp::Ne | CmpOp::Neu => x != y,
                CmpOp::Lt | CmpOp::Ltu => x < y,
                CmpOp::Le | CmpOp::Leu => x <= y,
                CmpOp::Gt | CmpOp::Gtu => x > y,
                CmpOp::Ge | CmpOp::Geu => x >= y,
                CmpOp::Num => true,
                CmpOp::Nan => false,
            }
        }
    }
}

fn compare_f64(cmp: CmpOp, x: f64, y: f64) -> bool {
    let unordered = x.is_nan() || y.is_nan();
    match cmp {
        CmpOp::Eq => x == y,
        // Ordered not-equal: false on NaN (Rust's `!=` would be true).
        CmpOp::Ne => !unordered && x != y,
        CmpOp::Lt => x < y,
        CmpOp::Le => x <= y,
        CmpOp::Gt => x > y,
        CmpOp::Ge => x >= y,
        CmpOp::Equ => unordered || x == y,
        CmpOp::Neu => x != y,
        CmpOp::Ltu => unordered || x < y,
        CmpOp::Leu => unordered || x <= y,
        CmpOp::Gtu => unordered || x > y,
        CmpOp::Geu => unordered || x >= y,
        CmpOp::Num => !unordered,
        CmpOp::Nan => unordered,
    }
}

/// A boolean combining op.
#[inline]
pub fn bool_op(op: BoolOp, x: bool, y: bool) -> bool {
    match op {
        BoolOp::And => x && y,
        BoolOp::Or => x || y,
        BoolOp::Xor => x ^ y,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Operand, Reg, Src};

    #[test]
    fn packed_min_max_compares_each_half_by_its_signedness() {
        // Low halves 0x0001 vs 0xffff (1 vs 65535 unsigned, 1 vs -1 signed); high halves
        // 0x8000 vs 0x7fff (32768 vs 32767 unsigned, -32768 vs 32767 signed).
        let (a, b) = (0x8000_0001, 0x7fff_ffff);
        assert_eq!(packed_min_max(BinOp::Min, Ty::U16, a, b), 0x7fff_0001);
        assert_eq!(packed_min_max(BinOp::Max, Ty::U16, a, b), 0x8000_ffff);
        assert_eq!(packed_min_max(BinOp::Min, Ty::S16, a, b), 0x8000_ffff);
        assert_eq!(packed_min_max(BinOp::Max, Ty::S16, a, b), 0x7fff_0001);
        // No carry or borrow between the halves, equal halves, the extremes of each type.
        assert_eq!(
            packed_min_max(BinOp::Min, Ty::U16, 0xffff_0000, 0x0000_ffff),
            0
        );
        assert_eq!(
            packed_min_max(BinOp::Max, Ty::U16, 0xffff_0000, 0x0000_ffff),
            0xffff_ffff
        );
        assert_eq!(
            packed_min_max(BinOp::Min, Ty::S16, 0x1234_5678, 0x1234_5678),
            0x1234_5678
        );
        assert_eq!(
            packed_min_max(BinOp::Min, Ty::S16, 0x7fff_8000, 0x8000_7fff),
            0x8000_8000
        );
        assert_eq!(
            packed_min_max(BinOp::Max, Ty::S16, 0x7fff_8000, 0x8000_7fff),
            0x7fff_7fff
        );
        // Bits above 32 are not read.
        assert_eq!(
            packed_min_max(BinOp::Max, Ty::U16, 0xdead_0000_0001_0002, 0x0000_0002_0001),
            0x0002_0002
        );
    }

    #[test]
    fn iadd3_carries_are_bits_32_and_33_of_the_sum() {
        let max = u32::MAX as u64;
        assert_eq!(iadd3([max, 1, 0], [false, false]), (0, [true, false]));
        // 3 * (2^32 - 1) + 2 = 0x2_ffff_ffff.
        assert_eq!(
            iadd3([max, max, max], [true, true]),
            (0xffff_ffff, [false, true])
        );
        assert_eq!(iadd3([1, 2, 3], [false, false]), (6, [false, false]));
        assert_eq!(iadd3([max, max, 2], [false, false]), (0, [false, true]));
    }

    #[test]
    fn iadd3_subtraction_sets_the_no_borrow_carry() {
        // IADD3 R0, P0, Ra, -Rb, RZ: P0 = (Ra >= Rb) as unsigned.
        for (a, b) in [
            (5u32, 3u32),
            (3, 5),
            (5, 5),
            (0, 0),
            (7, 0),
            (0, 1),
            (u32::MAX, u32::MAX),
        ] {
            let (r, c) = iadd3([a as u64, carry_term(b, SrcMod::Neg), 0], [false, false]);
            assert_eq!(r, a.wrapping_sub(b));
            assert_eq!(c[0], a >= b, "{a} - {b}");
        }
        // 64-bit subtraction via IADD3 / IADD3.X with ~hi.
        for (x, y) in [
            (0x1_0000_0000u64, 1u64),
            (5, 0),
            (0, 5),
            (0x1234_5678_9abc_def0, 0x1234_5678_9abc_def0),
        ] {
            let (lo, c) = iadd3(
                [x as u32 as u64, carry_term(y as u32, SrcMod::Neg), 0],
                [false, false],
            );
            let (hi, _) = iadd3(
                [(x >> 32), carry_term((y >> 32) as u32, SrcMod::Not), 0],
                [c[0], false],
            );
            assert_eq!((hi as u64) << 32 | lo as u64, x.wrapping_sub(y));
        }
    }

    #[test]
    fn imad_modes() {
        assert_eq!(imad(ImadMode::Lo, false, 0xffff_ffff, 2, 5), 3);
        // `Hi` adds the 64-bit pair `c` to the whole product, then takes the high word.
        assert_eq!(imad(ImadMode::Hi, false, 0xffff_ffff, 2, 5 << 32), 6);
        assert_eq!(
            imad(ImadMode::Hi, true, 0xffff_ffff, 2, 5 << 32),
            4,
            "-1 * 2 = -2: high word is -1, + 5"
        );
        // The low half of `c` carries into the high word: 0xffff_fffe + 2 overflows.
        assert_eq!(imad(ImadMode::Hi, false, 0xffff_ffff, 2, 2), 2);
        // The division-by-7 step ptxas emits: mulhi(x, 0x92492493) + x with c = x:0.
        let x = 700u32;
        let q = imad(ImadMode::Hi, true, x, 0x9249_2493, u64::from(x) << 32) as u32;
        assert_eq!(((q as i32 >> 2) + (q >> 31) as i32) as u32, 100);
        assert_eq!(
            imad(ImadMode::Wide, false, 0xffff_ffff, 0xffff_ffff, 1),
            0xffff_fffe_0000_0002
        );
        assert_eq!(
            imad(ImadMode::Wide, true, 0xffff_ffff, 4, 0x100),
            (-4i64 + 0x100) as u64
        );
        assert_eq!(
            imad(ImadMode::Wide, true, 0x8000_0000, 0x8000_0000, 0),
            1 << 62
        );
        assert_eq!(
            imad(ImadMode::Wide, false, 4, 4, u64::MAX),
            15,
            "64-bit wrap of the addend"
        );
    }

    #[test]
    fn lea_low_and_high() {
        // LEA R2, P0, R0, R4, 0x2: R2 = (R0 << 2) + R4, carry.
        assert_eq!(lea(false, 3, 100, 0, 2, false), (112, false));
        assert_eq!(
            lea(false, 0x4000_0000, 0xffff_ffff, 0, 2, false),
            (0xffff_ffff, false)
        );
        assert_eq!(lea(false, 0x4000_0001, 0xffff_ffff, 0, 2, false), (3, true));
        // LEA.HI.X R3, R0, R5, RZ(c), 0x2, P0: hi32(c:a << 2) + b + carry.
        assert_eq!(lea(true, 0xc000_0000, 10, 0, 2, true), (14, false));
        assert_eq!(lea(true, 0x8000_0000, 0, 0x1, 1, false), (3, false));
        assert_eq!(lea(true, 0, 0xffff_ffff, 0, 0, true), (0, true));
        // Out-of-contract shift amounts never panic: everything is shifted out.
        assert_eq!(
            lea(true, 0xffff_ffff, 5, 0xffff_ffff, 200, false),
            (5, false)
        );
        assert_eq!(lea(true, 0, 0, 1, 33, false), (0, false));
    }

    fn shf_inst(left: bool, wrap: bool, high: bool, ty: Ty) -> ShfInst {
        let z = Src::plain(Operand::Reg(Reg::RZ));
        ShfInst {
            left,
            wrap,
            high,
            ty,
            dst: Reg(0),
            lo: z,
            shift: z,
            hi: z,
        }
    }

    #[test]
    fn shf_matches_the_sass_idioms() {
        // SHF.L.U32 R0, R1, 0x2, RZ -> R1 << 2.
        assert_eq!(
            shf(&shf_inst(true, false, false, Ty::U32), 0x8000_0003, 2, 0),
            0xc
        );
        // SHF.R.U32.HI R1, RZ, 0x1e, R0 -> R0 >> 30.
        assert_eq!(
            shf(&shf_inst(false, false, true, Ty::U32), 0, 30, 0xc000_0000),
            3
        );
        // SHF.R.S32.HI R1, RZ, 0x1f, R0 -> R0 >> 31 arithmetic.
        assert_eq!(
            shf(&shf_inst(false, false, true, Ty::S32), 0, 31, 0x8000_0000),
            0xffff_ffff
        );
        assert_eq!(
            shf(&shf_inst(false, false, true, Ty::S32), 0, 31, 0x7fff_ffff),
            0
        );
        // SHF.L.U64.HI R3, R2, 0x2, R3: high word of (R3:R2) << 2.
        assert_eq!(
            shf(&shf_inst(true, false, true, Ty::U64), 0xc000_0000, 2, 1),
            7
        );
        // SHF.R.U64 R2, R2, 0x4, R3: low word of (R3:R2) >> 4.
        assert_eq!(
            shf(
                &shf_inst(false, false, false, Ty::U64),
                0x1234_5678,
                4,
                0xab
            ),
            0xb123_4567
        );
        // Funnel shift left (shf.l.clamp): SHF.L.U32.HI high word of (hi:lo) << s.
        assert_eq!(
            shf(&shf_inst(true, false, true, Ty::U32), 0x8000_0000, 1, 0x1),
            3
        );
        // Clamp to 32 vs wrap to 0..31 for 32-bit types.
        assert_eq!(shf(&shf_inst(true, false, false, Ty::U32), 1, 33, 0), 0);
        assert_eq!(shf(&shf_inst(true, false, true, Ty::U32), 1, 40, 0), 1);
        assert_eq!(shf(&shf_inst(true, true, false, Ty::U32), 1, 33, 0), 2);
        // 64-bit types clamp to 64 (0, or the sign fill), or mask to 0..63 with `.W`.
        assert_eq!(shf(&shf_inst(true, false, true, Ty::U64), 1, 64 + 33, 0), 0);
        assert_eq!(shf(&shf_inst(true, true, true, Ty::U64), 1, 64 + 33, 0), 2);
        assert_eq!(
            shf(&shf_inst(false, false, false, Ty::U64), 0, 64, 0xffff_ffff),
            0
        );
        assert_eq!(
            shf(&shf_inst(false, false, true, Ty::S64), 0, 100, 0x8000_0000),
            0xffff_ffff
        );
        // ptxas's rotate idiom (x << n) + (x >> (64 - n)) for n = 0, x = ~1: the right shift by
        // 64 must contribute nothing.
        let x: u64 = !1;
        let (lo, hi) = (x as u32, (x >> 32) as u32);
        let right_lo = shf(&shf_inst(false, false, false, Ty::U64), lo, 64, hi);
        let left_lo = shf(&shf_inst(true, false, false, Ty::U32), lo, 0, 0);
        assert_eq!(right_lo.wrapping_add(left_lo), lo);
    }

    #[test]
    fn lop3_truth_tables() {
        let (a, b, c) = (0xF0F0_F0F0u32, 0xCCCC_CCCCu32, 0xAAAA_AAAAu32);
        assert_eq!(lop3(a, b, c, 0xF0), a);
        assert_eq!(lop3(a, b, c, 0xCC), b);
        assert_eq!(lop3(a, b, c, 0xAA), c);
        assert_eq!(
            lop3(0x1234_5678, 0x0ff0_0ff0, 0, 0xF0 & 0xCC),
            0x1234_5678 & 0x0ff0_0ff0
        );
        assert_eq!(
            lop3(0x1234_5678, 0x0ff0_0ff0, 0x3, 0xF0 ^ 0xCC ^ 0xAA),
            0x1234_5678 ^ 0x0ff0_0ff0 ^ 3
        );
        assert_eq!(lop3(0x1234_5678, 0, 0, !0xF0u8), !0x1234_5678);
        assert_eq!(lop3(1, 2, 3, 0), 0);
        assert_eq!(lop3(1, 2, 3, 0xff), u32::MAX);
    }

    #[test]
    fn binary_integer_edges() {
        let u = |op, a: u64, b: u64| binary(op, Ty::U32, a, b, false) as u64;
        let s = |op, a: i32, b: i32| {
            binary(op, Ty::S32, a as u32 as u64, b as u32 as u64, false) as u32 as i32
        };
        assert_eq!(u(BinOp::Add, 0xffff_ffff, 1), 0);
        assert_eq!(u(BinOp::Sub, 0, 1), 0xffff_ffff);
        assert_eq!(u(BinOp::Div, 7, 0), 0xffff_ffff);
        assert_eq!(s(BinOp::Div, 7, 0), -1);
        assert_eq!(s(BinOp::Div, i32::MIN, -1), i32::MIN);
        assert_eq!(s(BinOp::Div, -7, 2), -3);
        assert_eq!(s(BinOp::Rem, -7, 2), -1);
        assert_eq!(s(BinOp::Rem, 7, -2), 1);
        assert_eq!(s(BinOp::Rem, i32::MIN, -1), 0);
        assert_eq!(u(BinOp::Rem, 7, 0), 7);
        assert_eq!(s(BinOp::Rem, -7, 0), -7);
        assert_eq!(s(BinOp::Min, -1, 1), -1);
        assert_eq!(u(BinOp::Min, 0xffff_ffff, 1), 1);
        assert_eq!(s(BinOp::Max, i32::MIN, i32::MAX), i32::MAX);
        assert_eq!(u(BinOp::MulHi, 0xffff_ffff, 0xffff_ffff), 0xffff_fffe);
        assert_eq!(s(BinOp::MulHi, -1, -1), 0);
        assert_eq!(s(BinOp::MulHi, i32::MIN, 2), -1);
        assert_eq!(
            binary(BinOp::MulWide, Ty::U32, 0xffff_ffff, 0xffff_ffff, false),
            0xffff_fffe_0000_0001
        );
        assert_eq!(
            binary(BinOp::MulWide, Ty::S32, 0xffff_ffff, 2, false),
            (-2i64) as u64 as u128
        );
        assert_eq!(
            binary(BinOp::MulWide, Ty::U64, u64::MAX, u64::MAX, false),
            u64::MAX as u128 * u64::MAX as u128
        );
        assert_eq!(BinOp::MulWide.result_words(Ty::U32), 2);
        assert_eq!(BinOp::MulWide.result_words(Ty::U16), 1);
        assert_eq!(u(BinOp::Shl, 1, 31), 0x8000_0000);
        assert_eq!(u(BinOp::Shl, 1, 32), 0);
        assert_eq!(u(BinOp::Shl, 1, 0x1_0000_0000 >> 1), 0);
        assert_eq!(u(BinOp::Shr, 0x8000_0000, 31), 1);
        assert_eq!(u(BinOp::Shr, 0x8000_0000, 32), 0);
        assert_eq!(s(BinOp::Shr, i32::MIN, 31), -1);
        assert_eq!(s(BinOp::Shr, i32::MIN, 100), -1);
        assert_eq!(s(BinOp::Shr, i32::MAX, 100), 0);
        assert_eq!(binary(BinOp::Shl, Ty::U64, 1, 63, false), 1 << 63);
        assert_eq!(
            binary(BinOp::Shr, Ty::S64, 1 << 63, 64, false),
            u64::MAX as u128
        );
    }

    #[test]
    fn narrow_results_extend_by_signedness() {
        assert_eq!(binary(BinOp::Add, Ty::U8, 0xff, 1, false), 0);
        assert_eq!(binary(BinOp::Add, Ty::S8, 0x7f, 1, false), 0xffff_ff80);
        assert_eq!(binary(BinOp::Sub, Ty::U16, 0, 1, false), 0xffff);
        assert_eq!(binary(BinOp::Sub, Ty::S16, 0, 1, false), 0xffff_ffff);
        assert_eq!(
            binary(BinOp::MulWide, Ty::S8, 0x80, 0x7f, false),
            (-128i32 * 127) as u32 as u128
        );
        assert_eq!(to_register(Ty::S8, 0x1_80), 0xffff_ff80);
    }

    #[test]
    fn unary_ops() {
        assert_eq!(unary(UnOp::Not, Ty::U32, 0), 0xffff_ffff);
        assert_eq!(unary(UnOp::Neg, Ty::S32, 1), 0xffff_ffff);
        assert_eq!(
            unary(UnOp::Abs, Ty::S32, 0x8000_0000),
            0x8000_0000,
            "abs(INT_MIN) wraps"
        );
        assert_eq!(unary(UnOp::Abs, Ty::S32, (-5i32) as u32 as u64), 5);
        assert_eq!(
            unary(UnOp::Neg, Ty::F32, 1.0f32.to_bits() as u64),
            (-1.0f32).to_bits() as u64
        );
        assert_eq!(unary(UnOp::Abs, Ty::F32, (-0.0f32).to_bits() as u64), 0);
        assert_eq!(unary(UnOp::Popc, Ty::U32, 0xf0f0_0001), 9);
        assert_eq!(unary(UnOp::Popc, Ty::U64, u64::MAX), 64);
        assert_eq!(unary(UnOp::Clz, Ty::U32, 0), 32);
        assert_eq!(unary(UnOp::Clz, Ty::U32, 1), 31);
        assert_eq!(unary(UnOp::Clz, Ty::U64, 1), 63);
        assert_eq!(unary(UnOp::Clz, Ty::U32, 0x8000_0000), 0);
        assert_eq!(unary(UnOp::Brev, Ty::U32, 1), 0x8000_0000);
        assert_eq!(unary(UnOp::Brev, Ty::U64, 1), 1 << 63);
        assert_eq!(unary(UnOp::Brev, Ty::U32, 0x0000_00f1), 0x8f00_0000);
    }

    #[test]
    fn float_mul_wide_rounds_into_the_wider_format() {
        let f32_bits = |x: f32| x.to_bits() as u64;
        // f32 x f32 is exact in f64.
        let (x, y) = (1.0f32 + f32::EPSILON, 3.0f32 + 2.0 * f32::EPSILON);
        let want = (x as f64 * y as f64).to_bits() as u128;
        assert_eq!(
            binary(BinOp::MulWide, Ty::F32, f32_bits(x), f32_bits(y), false),
            want
        );
        // f16 x f16 into f32: 65504 * 65504 overflows f16 but not f32.
        let h = half::f16::from_f32(65504.0).to_bits() as u64;
        assert_eq!(
            binary(BinOp::MulWide, Ty::F16, h, h, false),
            f32_bits(65504.0 * 65504.0) as u128
        );
        assert_eq!(BinOp::MulWide.result_words(Ty::F16), 1);
    }

    #[test]
    fn comparisons() {
        let f = |x: f32| x.to_bits() as u64;
        let nan = f(f32::NAN);
        assert!(compare(CmpOp::Lt, Ty::S32, (-1i32) as u32 as u64, 0));
        assert!(!compare(CmpOp::Lt, Ty::U32, (-1i32) as u32 as u64, 0));
        assert!(compare(CmpOp::Ge, Ty::U64, 1 << 63, 1));
        assert!(!compare(CmpOp::Ge, Ty::S64, 1 << 63, 1));
        assert!(compare(CmpOp::Num, Ty::U32, 0, 0));
        assert!(!compare(CmpOp::Nan, Ty::U32, 0, 0));
        assert!(compare(CmpOp::Eq, Ty::F32, f(0.0), f(-0.0)));
        for cmp in [
            CmpOp::Eq,
            CmpOp::Ne,
            CmpOp::Lt,
            CmpOp::Le,
            CmpOp::Gt,
            CmpOp::Ge,
            CmpOp::Num,
        ] {
            assert!(
                !compare(cmp, Ty::F32, nan, f(1.0)),
                "{cmp} ordered with NaN is false"
            );
        }
        for cmp in [
            CmpOp::Equ,
            CmpOp::Neu,
            CmpOp::Ltu,
            CmpOp::Leu,
            CmpOp::Gtu,
            CmpOp::Geu,
            CmpOp::Nan,
        ] {
            assert!(
                compare(cmp, Ty::F32, f(1.0), nan),
                "{cmp} unordered with NaN is true"
            );
        }
        assert!(compare(CmpOp::Ltu, Ty::F32, f(1.0), f(2.0)));
        assert!(!compare(CmpOp::Gtu, Ty::F32, f(1.0), f(2.0)));
        assert!(compare(
            CmpOp::Ne,
            Ty::F64,
            1.0f64.to_bits(),
            2.0f64.to_bits()
        ));
    }

    #[test]
    fn bfind_finds_the_leading_one() {
        assert_eq!(unary(UnOp::Bfind, Ty::U32, 0), 0xffff_ffff);
        assert_eq!(unary(UnOp::BfindShift, Ty::U32, 0), 0xffff_ffff);
        assert_eq!(unary(UnOp::Bfind, Ty::U32, 1), 0);
        assert_eq!(unary(UnOp::Bfind, Ty::U32, 0x8000_0000), 31);
        assert_eq!(unary(UnOp::BfindShift, Ty::U32, 0x8000_0000), 0);
        assert_eq!(unary(UnOp::BfindShift, Ty::U32, 1), 31);
        // Signed: the most significant bit that differs from the sign.
        assert_eq!(unary(UnOp::Bfind, Ty::S32, 0xffff_ffff), 0xffff_ffff);
        assert_eq!(unary(UnOp::Bfind, Ty::S32, 0xffff_fff0), 3);
        assert_eq!(unary(UnOp::Bfind, Ty::S64, 1 << 40), 40);
        assert_eq!(unary(UnOp::BfindShift, Ty::U64, 1 << 40), 23);
    }

    #[test]
    fn prmt_selects_and_sign_replicates_bytes() {
        // The byte numbering example: {b, a} = {0x07060504, 0x03020100}.
        assert_eq!(prmt(0x0302_0100, 0x0706_0504, 0x7531), 0x0705_0301);
        assert_eq!(prmt(0x0302_0100, 0x0706_0504, 0x3210), 0x0302_0100);
        assert_eq!(prmt(0x0302_0100, 0x0706_0504, 0x4444), 0x0404_0404);
        // Bit 3 of a nibble replicates the selected byte's sign bit.
        assert_eq!(prmt(0x0000_0080, 0, 0x8880), 0xffff_ff80);
        assert_eq!(prmt(0x0000_007f, 0, 0x0008), 0x7f7f_7f00);
        // The upper half of the selector is ignored.
        assert_eq!(prmt(0x0302_0100, 0x0706_0504, 0xffff_3210), 0x0302_0100);
    }

    #[test]
    fn bfe_and_bfi_follow_the_ptx_pseudo_code() {
        assert_eq!(bfe(Ty::U32, 0xabcd_1234, 8, 8), 0x12);
        assert_eq!(bfe(Ty::S32, 0xabcd_1234, 8, 8), 0x12);
        assert_eq!(bfe(Ty::S32, 0xabcd_8234, 12, 4), 0xffff_fff8);
        assert_eq!(bfe(Ty::U32, 0xabcd_1234, 8, 0), 0);
        // Past the top: unsigned fills with 0, signed with the top bit of `a`.
        assert_eq!(bfe(Ty::U32, 0xf000_0000, 28, 8), 0xf);
        assert_eq!(bfe(Ty::S32, 0xf000_0000, 28, 8), 0xffff_ffff);
        assert_eq!(bfe(Ty::S32, 0x8000_0000, 40, 4), 0xffff_ffff);
        // Only bits 7:0 of pos and len count.
        assert_eq!(bfe(Ty::U32, 0xabcd_1234, 0x108, 0x208), 0x12);
        assert_eq!(bfe(Ty::U64, 0xff00_0000_0000, 40, 8), 0xff);
        assert_eq!(bfi(Ty::B32, 0xff, 0x1234_5678, 8, 4), 0x1234_5f78);
        assert_eq!(bfi(Ty::B32, 0xff, 0x1234_5678, 28, 8), 0xf234_5678);
        assert_eq!(bfi(Ty::B32, 0xff, 0x1234_5678, 32, 8), 0x1234_5678);
        assert_eq!(bfi(Ty::B32, 0xff, 0x1234_5678, 4, 0), 0x1234_5678);
        assert_eq!(bfi(Ty::B64, 0xf, 0, 60, 8), 0xf000_0000_0000_0000);
    }

    #[test]
    fn chained_comparisons_compare_wide_values() {
        // Every 64-bit pair from a small set: the chained high-word comparison of the low
        // words' result must equal the 64-bit comparison (unsigned, then signed highs).
        let values: [u64; 6] = [
            0,
            1,
            0xffff_ffff,
            0x1_0000_0000,
            0x8000_0000_0000_0000,
            u64::MAX,
        ];
        for &x in &values {
            for &y in &values {
                for cmp in [
                    CmpOp::Eq,
                    CmpOp::Ne,
                    CmpOp::Lt,
                    CmpOp::Le,
                    CmpOp::Gt,
                    CmpOp::Ge,
                ] {
                    let low = compare(cmp, Ty::U32, x & 0xffff_ffff, y & 0xffff_ffff);
                    let (hx, hy) = (x >> 32, y >> 32);
                    assert_eq!(
                        compare_chained(cmp, Ty::U32, hx, hy, low),
                        compare(cmp, Ty::U64, x, y),
                        "{cmp:?} {x:#x} {y:#x} unsigned"
                    );
                    assert_eq!(
                        compare_chained(cmp, Ty::S32, hx, hy, low),
                        compare(cmp, Ty::S64, x, y),
                        "{cmp:?} {x:#x} {y:#x} signed"
                    );
                }
            }
        }
    }
}
