//! Bulk paths for the common expectations: one element type, one value, every element.
//!
//! [`Buffer::scan`] decodes each element into a [`Scalar`] and calls a closure that compares it
//! through the general `compare` (about 1–2 ns an element; a 4 GiB buffer takes seconds
//! outside any watchdog). Here the element type and the comparison are chosen once, before the
//! loop, so the loop is a typed compare over little-endian words that the compiler vectorises:
//! memory speed. Each function answers exactly what the general path answers (the same first
//! failing element, the same sum, the same extreme with the same sign of zero), or `None` when
//! it has no bulk form for the case and the caller takes the general path.
//!
//! Integer predicates are a value interval (`x CMP want` for a fixed `want` holds on one
//! interval of integers or outside it), clipped to the element type, so a value outside the
//! type (`u8 < 300`, `u32 == -1`) needs no special case. Float predicates follow `compare`:
//! IEEE comparisons, except that two NaNs are equal (so `== nan` can be expected).

use super::super::buffers::Buffer;
use crate::ir::{CmpOp, Scalar, Ty};

/// Elements checked between two looks at whether one failed: long enough for the vectorised
/// loop to run at memory speed, short enough that a failing block is found again quickly.
const BLOCK: usize = 4096;

/// The index (within `bytes`, in elements of `N` bytes) of the first element for which `pass`
/// is false.
fn first_failing<const N: usize>(bytes: &[u8], pass: impl Fn([u8; N]) -> bool) -> Option<usize> {
    let word = |c: &[u8]| -> [u8; N] { c.try_into().expect("chunks_exact") };
    for (b, block) in bytes.chunks(BLOCK * N).enumerate() {
        // No early exit inside a block: an OR of every failure vectorises, a search does not.
        let any_fails = block
            .chunks_exact(N)
            .fold(false, |acc, c| acc | !pass(word(c)));
        if any_fails {
            let k = block.chunks_exact(N).position(|c| !pass(word(c)));
            return Some(b * BLOCK + k.expect("the block has a failing element"));
        }
    }
    None
}

/// How many elements of `bytes` `pass`.
fn count_passing<const N: usize>(bytes: &[u8], pass: impl Fn([u8; N]) -> bool) -> u64 {
    bytes
        .chunks_exact(N)
        .map(|c| u64::from(pass(c.try_into().expect("chunks_exact"))))
        .sum()
}

/// `x CMP want` over the integers: true exactly for `lo <= x <= hi` (or outside it).
#[derive(Clone, Copy, Debug)]
struct Interval {
    lo: i128,
    hi: i128,
    inside: bool,
}

fn interval(cmp: CmpOp, want: i128) -> Option<Interval> {
    // Keep `want ± 1` exact (literals are far from these bounds; the general path takes them).
    let (below, above) = (want.checked_sub(1)?, want.checked_add(1)?);
    let (lo, hi, inside) = match cmp {
        CmpOp::Eq | CmpOp::Equ => (want, want, true),
        CmpOp::Ne | CmpOp::Neu => (want, want, false),
        CmpOp::Lt | CmpOp::Ltu => (i128::MIN, below, true),
        CmpOp::Le | CmpOp::Leu => (i128::MIN, want, true),
        CmpOp::Gt | CmpOp::Gtu => (above, i128::MAX, true),
        CmpOp::Ge | CmpOp::Geu => (want, i128::MAX, true),
        // Two integers are always ordered.
        CmpOp::Num => (i128::MIN, i128::MAX, true),
        CmpOp::Nan => (i128::MIN, i128::MAX, false),
    };
    Some(Interval { lo, hi, inside })
}

/// A float predicate, `x CMP want` under `compare`'s rules, with the NaN cases resolved.
#[derive(Clone, Copy, Debug)]
enum FloatPred {
    Eq(f64),
    Ne(f64),
    Lt(f64),
    Le(f64),
    Gt(f64),
    Ge(f64),
    IsNan,
    NotNan,
    Never,
}

fn float_pred(cmp: CmpOp, w: f64) -> FloatPred {
    use FloatPred::*;
    if w.is_nan() {
        // Against NaN only a NaN is ordered (equal); everything else is unordered.
        return match cmp {
            CmpOp::Eq | CmpOp::Equ | CmpOp::Le | CmpOp::Leu | CmpOp::Ge | CmpOp::Geu => IsNan,
            CmpOp::Num => IsNan,
            CmpOp::Ne | CmpOp::Neu | CmpOp::Nan => NotNan,
            CmpOp::Lt | CmpOp::Ltu | CmpOp::Gt | CmpOp::Gtu => Never,
        };
    }
    // `w` is a number: IEEE comparisons are `compare`'s (`-0 == 0`, NaN unordered).
    match cmp {
        CmpOp::Eq | CmpOp::Equ => Eq(w),
        CmpOp::Ne | CmpOp::Neu => Ne(w),
        CmpOp::Lt | CmpOp::Ltu => Lt(w),
        CmpOp::Le | CmpOp::Leu => Le(w),
        CmpOp::Gt | CmpOp::Gtu => Gt(w),
        CmpOp::Ge | CmpOp::Geu => Ge(w),
        CmpOp::Num => NotNan,
        CmpOp::Nan => IsNan,
    }
}

/// Runs `$body` with `$n` (element bytes) and `$dec` (bytes to the element's native value)
/// bound for the buffer's element type; `$int` for integers (with `$t` the native type),
/// `$float` for floats. `None` for element types without a bulk form.
macro_rules! by_elem {
    ($elem:expr, int |$n:ident, $t:ident, $dec:ident| $int:block, float |$fn:ident, $fdec:ident| $float:block) => {
        match $elem {
            Ty::U8 => by_elem!(@int u8, 1, $n, $t, $dec, $int),
            Ty::S8 => by_elem!(@int i8, 1, $n, $t, $dec, $int),
            Ty::U16 | Ty::B16 => by_elem!(@int u16, 2, $n, $t, $dec, $int),
            Ty::S16 => by_elem!(@int i16, 2, $n, $t, $dec, $int),
            // Packed pairs decode as their raw bits.
            Ty::U32 | Ty::B32 | Ty::F16x2 | Ty::BF16x2 => by_elem!(@int u32, 4, $n, $t, $dec, $int),
            Ty::S32 => by_elem!(@int i32, 4, $n, $t, $dec, $int),
            Ty::U64 | Ty::B64 => by_elem!(@int u64, 8, $n, $t, $dec, $int),
            Ty::S64 => by_elem!(@int i64, 8, $n, $t, $dec, $int),
            Ty::F16 => by_elem!(@float 2, $fn, $fdec, $float,
                |c: [u8; 2]| half::f16::from_bits(u16::from_le_bytes(c)).to_f64()),
            Ty::BF16 => by_elem!(@float 2, $fn, $fdec, $float,
                |c: [u8; 2]| half::bf16::from_bits(u16::from_le_bytes(c)).to_f64()),
            Ty::F32 => by_elem!(@float 4, $fn, $fdec, $float,
                |c: [u8; 4]| f32::from_le_bytes(c) as f64),
            Ty::F64 => by_elem!(@float 8, $fn, $fdec, $float, f64::from_le_bytes),
            Ty::B128 => None,
        }
    };
    (@int $ty:ty, $size:literal, $n:ident, $t:ident, $dec:ident, $body:block) => {{
        const $n: usize = $size;
        #[allow(dead_code)]
        type $t = $ty;
        let $dec = <$ty>::from_le_bytes;
        $body
    }};
    (@float $size:literal, $n:ident, $dec:ident, $body:block, $f:expr) => {{
        const $n: usize = $size;
        let $dec = $f;
        $body
    }};
}

/// The first element of `range` for which `element CMP want` is false (`Some(None)`: none is),
/// or `None` when this case has no bulk form.
pub(super) fn first_failing_scalar(
    buf: &Buffer,
    range: std::ops::Range<usize>,
    cmp: CmpOp,
    want: Scalar,
) -> Option<Option<usize>> {
    let size = buf.elem.bytes() as usize;
    let bytes = &buf.bytes[range.start * size..range.end * size];
    let found = by_elem!(
        buf.elem,
        int | N,
        T,
        dec | {
            let Scalar::Int(w) = want else { return None };
            let iv = interval(cmp, w)?;
            let (lo, hi) = (iv.lo.max(T::MIN.into()), iv.hi.min(T::MAX.into()));
            if lo > hi {
                // No element value is inside: all pass (outside) or the first fails.
                return Some((iv.inside && !bytes.is_empty()).then_some(range.start));
            }
            let (lo, hi) = (lo as T, hi as T);
            if lo == hi {
                // Equality: compare raw words.
                let raw = lo.to_le_bytes();
                if iv.inside {
                    first_failing::<N>(bytes, |c| c == raw)
                } else {
                    first_failing::<N>(bytes, |c| c != raw)
                }
            } else if iv.inside {
                first_failing::<N>(bytes, |c| (lo..=hi).contains(&dec(c)))
            } else {
                first_failing::<N>(bytes, |c| !(lo..=hi).contains(&dec(c)))
            }
        },
        float | N,
        dec | {
            let w = match want {
                Scalar::Float(f) => f,
                Scalar::Int(i) => i as f64,
            };
            match float_pred(cmp, w) {
                FloatPred::Eq(w) => first_failing::<N>(bytes, |c| dec(c) == w),
                FloatPred::Ne(w) => first_failing::<N>(bytes, |c| dec(c) != w),
                FloatPred::Lt(w) => first_failing::<N>(bytes, |c| dec(c) < w),
                FloatPred::Le(w) => first_failing::<N>(bytes, |c| dec(c) <= w),
                FloatPred::Gt(w) => first_failing::<N>(bytes, |c| dec(c) > w),
                FloatPred::Ge(w) => first_failing::<N>(bytes, |c| dec(c) >= w),
                FloatPred::IsNan => first_failing::<N>(bytes, |c| dec(c).is_nan()),
                FloatPred::NotNan => first_failing::<N>(bytes, |c| !dec(c).is_nan()),
                FloatPred::Never => (!bytes.is_empty()).then_some(0),
            }
        }
    );
    Some(found.map(|k| range.start + k))
}

/// How many elements `compare` finds equal to `value`, or `None` without a bulk form.
pub(super) fn count_equal(buf: &Buffer, value: Scalar) -> Option<u64> {
    let bytes = &buf.bytes[..buf.len() * buf.elem.bytes() as usize];
    by_elem!(
        buf.elem,
        int | N,
        T,
        _dec | {
            let Scalar::Int(w) = value else { return None };
            let Ok(w) = T::try_from(w) else {
                return Some(0);
            };
            let raw = w.to_le_bytes();
            Some(count_passing::<N>(bytes, |c| c == raw))
        },
        float | N,
        dec | {
            let w = match value {
                Scalar::Float(f) => f,
                Scalar::Int(i) => i as f64,
            };
            Some(if w.is_nan() {
                count_passing::<N>(bytes, |c| dec(c).is_nan())
            } else {
                count_passing::<N>(bytes, |c| dec(c) == w)
            })
        }
    )
}

/// The buffer's sum as the general path computes it (integers exactly, floats added in f64 in
/// element order), or `None` without a bulk form.
pub(super) fn sum(buf: &Buffer) -> Option<Scalar> {
    let bytes = &buf.bytes[..buf.len() * buf.elem.bytes() as usize];
    by_elem!(
        buf.elem,
        int | N,
        T,
        dec | {
            let mut total = 0i128;
            if N <= 4 {
                // 4096 elements of at most 32 bits cannot overflow an i64 (and the narrowing
                // cast is exact for them; 64-bit types take the other branch).
                for block in bytes.chunks(BLOCK * N) {
                    let part: i64 = block
                        .chunks_exact(N)
                        .map(|c| i128::from(dec(c.try_into().expect("chunks_exact"))) as i64)
                        .sum();
                    total += i128::from(part);
                }
            } else {
                for c in bytes.chunks_exact(N) {
                    total += i128::from(dec(c.try_into().expect("chunks_exact")));
                }
            }
            Some(Scalar::Int(total))
        },
        float | N,
        dec | {
            let mut total = 0.0;
            for c in bytes.chunks_exact(N) {
                total += dec(c.try_into().expect("chunks_exact"));
            }
            Some(Scalar::Float(total))
        }
    )
}

/// The first least (`Less`) or greatest (`Greater`) element under `compare`, or `Some(None)` for
/// an empty buffer, or `None` without a bulk form.
pub(super) fn extreme(buf: &Buffer, want: std::cmp::Ordering) -> Option<Option<Scalar>> {
    let bytes = &buf.bytes[..buf.len() * buf.elem.bytes() as usize];
    let least = want == std::cmp::Ordering::Less;
    by_elem!(
        buf.elem,
        int | N,
        T,
        dec | {
            let values = bytes
                .chunks_exact(N)
                .map(|c| dec(c.try_into().expect("chunks_exact")));
            // Equal integers are the same value: which one is kept does not show.
            let best: Option<T> = if least { values.min() } else { values.max() };
            Some(best.map(|v| Scalar::Int(v.into())))
        },
        float | N,
        dec | {
            // `compare(v, best) == want`: a NaN neither replaces nor is replaced (a leading NaN
            // stays), and of equal values (`-0`, `0`) the first stays: IEEE `<` and `>`.
            let mut values = bytes
                .chunks_exact(N)
                .map(|c| dec(c.try_into().expect("chunks_exact")));
            let Some(mut best) = values.next() else {
                return Some(None);
            };
            for v in values {
                if (least && v < best) || (!least && v > best) {
                    best = v;
                }
            }
            Some(Some(Scalar::Float(best)))
        }
    )
}

#[cfg(test)]
mod tests {
    //! Every bulk path against the general one on random buffers.

    use super::super::{compare, count_slow, extreme_slow, holds, sum_slow};
    use super::*;
    use std::cmp::Ordering;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    const CMPS: [CmpOp; 14] = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
        CmpOp::Equ,
        CmpOp::Neu,
        CmpOp::Ltu,
        CmpOp::Leu,
        CmpOp::Gtu,
        CmpOp::Geu,
        CmpOp::Num,
        CmpOp::Nan,
    ];

    /// Values worth comparing against in `elem`: extremes, zeros of both signs, NaN, values
    /// just outside the type, and a few random ones decoded from the buffer's own bits.
    fn wants(elem: Ty, rng: &mut Rng) -> Vec<Scalar> {
        let mut w = vec![
            Scalar::Int(0),
            Scalar::Int(1),
            Scalar::Int(-1),
            Scalar::Int(7),
            Scalar::Int(255),
            Scalar::Int(256),
            Scalar::Int(-129),
            Scalar::Int(i64::MIN as i128),
            Scalar::Int(u64::MAX as i128),
            Scalar::Int(u64::MAX as i128 + 1),
            Scalar::Float(0.0),
            Scalar::Float(-0.0),
            Scalar::Float(f64::NAN),
            Scalar::Float(1.5),
            Scalar::Float(f64::INFINITY),
            Scalar::Float(f64::NEG_INFINITY),
        ];
        for _ in 0..4 {
            w.push(super::super::super::buffers::decode(elem, rng.next()));
        }
        w
    }

    /// A buffer mostly of one repeated element (so whole blocks pass), with special and random
    /// elements sprinkled in, some past the first block.
    fn buffer(elem: Ty, rng: &mut Rng) -> Buffer {
        let size = elem.bytes() as usize;
        let len = [0, 1, 5, BLOCK - 1, BLOCK + 3, 3 * BLOCK + 17][rng.below(6) as usize];
        let fill = rng.next();
        let specials: [u64; 6] = match elem {
            Ty::F16 => [0x7e00, 0x8000, 0, 0x7c00, 0xfc00, 0x0001],
            Ty::BF16 => [0x7fc0, 0x8000, 0, 0x7f80, 0xff80, 0x0001],
            Ty::F32 => [0x7fc0_0000, 0x8000_0000, 0, 0x7f80_0000, 0xff80_0000, 1],
            Ty::F64 => [
                f64::NAN.to_bits(),
                (-0.0f64).to_bits(),
                0,
                f64::INFINITY.to_bits(),
                f64::NEG_INFINITY.to_bits(),
                1,
            ],
            _ => [0, u64::MAX, 1, 7, 0x80, 0x8000_0000],
        };
        let mut bytes = Vec::with_capacity(len * size);
        let sprinkle = rng.below(4);
        for _ in 0..len {
            let raw = match rng.below(64) {
                0 if sprinkle > 0 => specials[rng.below(6) as usize],
                1 if sprinkle > 1 => rng.next(),
                _ => fill,
            };
            bytes.extend_from_slice(&raw.to_le_bytes()[..size]);
        }
        Buffer {
            name: "b".into(),
            elem,
            address: 0,
            bytes: bytes.into(),
        }
    }

    /// Debug text tells NaN from NaN-free and `-0` from `0`, which `==` does not.
    fn same<T: std::fmt::Debug>(a: T, b: T) -> bool {
        format!("{a:?}") == format!("{b:?}")
    }

    #[test]
    fn bulk_paths_answer_what_the_general_path_answers() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for &elem in Ty::ALL.iter().filter(|t| t.is_buffer_elem()) {
            for _ in 0..24 {
                let buf = buffer(elem, &mut rng);
                let len = buf.len();
                let ctx = format!("{elem} len {len}");
                for want in wants(elem, &mut rng) {
                    let a = rng.below(len as u64 + 1) as usize;
                    let b = a + rng.below((len - a) as u64 + 1) as usize;
                    for range in [0..len, a..b] {
                        for cmp in CMPS {
                            let slow = buf.scan(range.clone(), |_, g| holds(cmp, g, want));
                            if let Some(fast) = first_failing_scalar(&buf, range.clone(), cmp, want)
                            {
                                assert_eq!(fast, slow, "{ctx} {range:?} {cmp:?} {want:?}");
                            }
                        }
                    }
                    if let Some(n) = count_equal(&buf, want) {
                        assert_eq!(n, count_slow(&buf, want), "{ctx} count {want:?}");
                    }
                }
                if let Some(s) = sum(&buf) {
                    assert!(same(Some(s), sum_slow(&buf)), "{ctx} sum");
                }
                for ord in [Ordering::Less, Ordering::Greater] {
                    if let Some(e) = extreme(&buf, ord) {
                        assert!(same(e, extreme_slow(&buf, ord)), "{ctx} {ord:?}");
                    }
                }
            }
            // Every element type but b128 has a bulk form.
            let buf = buffer(elem, &mut rng);
            assert!(sum(&buf).is_some(), "{elem}");
        }
    }

    #[test]
    fn nan_and_signed_zero_follow_compare() {
        // -0 == 0; NaN == NaN only for `compare`; the first of equal extremes stays.
        let floats = [0.0f32, -0.0, f32::NAN, 2.0, -0.0];
        let buf = Buffer {
            name: "f".into(),
            elem: Ty::F32,
            address: 0,
            bytes: floats
                .iter()
                .flat_map(|f| f.to_le_bytes())
                .collect::<Vec<u8>>()
                .into(),
        };
        let zero = Scalar::Float(0.0);
        let fail = |cmp, w| first_failing_scalar(&buf, 0..5, cmp, w).unwrap();
        assert_eq!(fail(CmpOp::Eq, zero), Some(2));
        assert_eq!(fail(CmpOp::Eq, Scalar::Float(-0.0)), Some(2));
        assert_eq!(fail(CmpOp::Eq, Scalar::Float(f64::NAN)), Some(0));
        assert_eq!(fail(CmpOp::Ne, Scalar::Float(f64::NAN)), Some(2));
        assert_eq!(fail(CmpOp::Le, Scalar::Float(f64::NAN)), Some(0));
        assert_eq!(fail(CmpOp::Lt, Scalar::Float(f64::NAN)), Some(0));
        assert_eq!(fail(CmpOp::Num, zero), Some(2));
        assert_eq!(fail(CmpOp::Ne, Scalar::Int(2)), Some(3));
        assert_eq!(count_equal(&buf, zero), Some(3));
        assert_eq!(count_equal(&buf, Scalar::Float(f64::NAN)), Some(1));
        assert!(same(extreme(&buf, Ordering::Less), Some(Some(zero))));
        let neg_first = Buffer {
            bytes: [-0.0f32, 0.0]
                .iter()
                .flat_map(|f| f.to_le_bytes())
                .collect::<Vec<u8>>()
                .into(),
            ..buf.clone()
        };
        let min = extreme(&neg_first, Ordering::Less).unwrap();
        assert!(same(min, Some(Scalar::Float(-0.0))));
        assert_eq!(compare(Scalar::Float(-0.0), zero), Some(Ordering::Equal));
    }
}
