//! cuTile's data types, its implicit-cast rules, and exact conversions between element bit
//! patterns (see `docs/tile.md`, "Data types and implicit casts").

use super::TileError;
use std::fmt;

/// A cuTile element type (`cuda.tile.int32`, ...). `Display` prints cuTile's name. The
/// restricted floats (`tfloat32`, `float8_*`, `float4_*`) are not listed: no atomic accepts
/// them and cuTile never casts them implicitly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    BFloat16,
    Float32,
    Float64,
}

/// cuTile's numeric categories, ordered as its promotion rules order them
/// (`Bool -> Integral -> Float`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Category {
    Boolean,
    Integral,
    Float,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 13] = [
        DType::Bool,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::UInt8,
        DType::UInt16,
        DType::UInt32,
        DType::UInt64,
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
        DType::Float64,
    ];

    /// The IR type of the same size and meaning (a kernel argument's type); `bool` is a byte
    /// holding 0 or 1, as in C++.
    pub fn ir_ty(self) -> crate::ir::Ty {
        use crate::ir::Ty;
        match self {
            DType::Bool | DType::UInt8 => Ty::U8,
            DType::Int8 => Ty::S8,
            DType::Int16 => Ty::S16,
            DType::Int32 => Ty::S32,
            DType::Int64 => Ty::S64,
            DType::UInt16 => Ty::U16,
            DType::UInt32 => Ty::U32,
            DType::UInt64 => Ty::U64,
            DType::Float16 => Ty::F16,
            DType::BFloat16 => Ty::BF16,
            DType::Float32 => Ty::F32,
            DType::Float64 => Ty::F64,
        }
    }

    /// The element size in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::Bool | DType::Int8 | DType::UInt8 => 1,
            DType::Int16 | DType::UInt16 | DType::Float16 | DType::BFloat16 => 2,
            DType::Int32 | DType::UInt32 | DType::Float32 => 4,
            DType::Int64 | DType::UInt64 | DType::Float64 => 8,
        }
    }

    /// cuTile's name (`"int32"`, `"bfloat16"`, `"bool_"` is printed as `"bool"`).
    pub fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::UInt8 => "uint8",
            DType::UInt16 => "uint16",
            DType::UInt32 => "uint32",
            DType::UInt64 => "uint64",
            DType::Float16 => "float16",
            DType::BFloat16 => "bfloat16",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
        }
    }

    /// Integer dtypes (not `bool`: cuTile's `is_integral` excludes it).
    pub fn is_integer(self) -> bool {
        self.category() == Category::Integral
    }

    /// Signed integer dtypes.
    pub fn is_signed(self) -> bool {
        matches!(
            self,
            DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64
        )
    }

    /// Floating-point dtypes.
    pub fn is_float(self) -> bool {
        self.category() == Category::Float
    }

    pub(crate) fn category(self) -> Category {
        match self {
            DType::Bool => Category::Boolean,
            DType::Int8
            | DType::Int16
            | DType::Int32
            | DType::Int64
            | DType::UInt8
            | DType::UInt16
            | DType::UInt32
            | DType::UInt64 => Category::Integral,
            DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64 => Category::Float,
        }
    }

    fn bits(self) -> u32 {
        self.size() as u32 * 8
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// cuTile's `_DTypePromotionImpl.promote_dtypes` for two distinct non-restricted dtypes: the
/// common dtype, or `None` where its table says `ERR` (signed with unsigned, float16 with
/// bfloat16).
pub(crate) fn promote(a: DType, b: DType) -> Option<DType> {
    use Category::*;
    if a == b {
        return Some(a);
    }
    let (ca, cb) = (a.category(), b.category());
    if ca != cb {
        // Cross categories: the stronger category wins (Bool -> Integral -> Float).
        return Some(if ca > cb { a } else { b });
    }
    match ca {
        Boolean => Some(a),
        Integral => {
            if a.is_signed() != b.is_signed() {
                None
            } else {
                Some(if a.bits() >= b.bits() { a } else { b })
            }
        }
        Float => {
            let f16_bf16 = matches!(
                (a, b),
                (DType::Float16, DType::BFloat16) | (DType::BFloat16, DType::Float16)
            );
            if f16_bf16 {
                None
            } else {
                Some(if a.bits() >= b.bits() { a } else { b })
            }
        }
    }
}

/// A loosely typed scalar constant, as a Python literal is in cuTile (`1`, `-2.5`, `True`):
/// it has no dtype of its own and is cast to the array's dtype under cuTile's rules for
/// constants (`check_implicit_cast` on a `LooselyTypedScalar`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScalarValue {
    Bool(bool),
    /// A Python `int` (cuTile accepts constants in `[-2^63, 2^64)`).
    Int(i128),
    Float(f64),
}

impl ScalarValue {
    /// cuTile's `dtype_of_constant_scalar`: `bool`, `int32`/`int64`/`uint64` by range,
    /// `float32` (the default float type).
    pub fn default_dtype(self) -> Result<DType, TileError> {
        Ok(match self {
            ScalarValue::Bool(_) => DType::Bool,
            ScalarValue::Int(v) if (-(1i128 << 31)..(1i128 << 31)).contains(&v) => DType::Int32,
            ScalarValue::Int(v) if (-(1i128 << 63)..(1i128 << 63)).contains(&v) => DType::Int64,
            ScalarValue::Int(v) if (0..(1i128 << 64)).contains(&v) => DType::UInt64,
            ScalarValue::Int(v) => {
                return Err(TileError::ScalarOutOfRange {
                    what: "constant".into(),
                    value: v.to_string(),
                    dtype: None,
                })
            }
            ScalarValue::Float(_) => DType::Float32,
        })
    }

    fn num(self) -> Num {
        match self {
            ScalarValue::Bool(b) => Num::Int(b as i128),
            ScalarValue::Int(v) => Num::Int(v),
            ScalarValue::Float(f) => Num::Float(f),
        }
    }

    fn category(self) -> Category {
        match self {
            ScalarValue::Bool(_) => Category::Boolean,
            ScalarValue::Int(_) => Category::Integral,
            ScalarValue::Float(_) => Category::Float,
        }
    }
}

impl fmt::Display for ScalarValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScalarValue::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            ScalarValue::Int(v) => write!(f, "{v}"),
            ScalarValue::Float(v) => write!(f, "{v:?}"),
        }
    }
}

/// cuTile's `check_implicit_cast` for a constant: the constant's category may not be
/// stronger than the target's (no float constant into an integer array), and an integer
/// constant must lie in the target integer type's range. Returns the target's bit pattern.
pub(crate) fn cast_scalar(s: ScalarValue, to: DType, what: &str) -> Result<u64, TileError> {
    s.default_dtype()?;
    if s.category() > to.category() {
        return Err(TileError::ImplicitCast {
            what: what.into(),
            from: s.to_string(),
            to,
        });
    }
    if let (ScalarValue::Int(v), Category::Integral) = (s, to.category()) {
        let (lo, hi) = int_range(to);
        if v < lo || v > hi {
            return Err(TileError::ScalarOutOfRange {
                what: what.into(),
                value: v.to_string(),
                dtype: Some(to),
            });
        }
    }
    Ok(encode(s.num(), to))
}

/// Whether a tile of dtype `from` casts implicitly to `to` (cuTile's `_is_implicit_cast_ok`:
/// the promotion of the two is `to`).
pub(crate) fn tile_casts_to(from: DType, to: DType) -> bool {
    promote(from, to) == Some(to)
}

fn int_range(t: DType) -> (i128, i128) {
    let bits = t.bits();
    if t.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// An element's numeric value, exactly.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Num {
    Int(i128),
    Float(f64),
}

/// The value of an element of dtype `t` stored as `bits` (low bits of the word).
pub(crate) fn decode(t: DType, bits: u64) -> Num {
    match t {
        DType::Bool => Num::Int((bits & 0xff != 0) as i128),
        DType::Int8 => Num::Int(bits as u8 as i8 as i128),
        DType::Int16 => Num::Int(bits as u16 as i16 as i128),
        DType::Int32 => Num::Int(bits as u32 as i32 as i128),
        DType::Int64 => Num::Int(bits as i64 as i128),
        DType::UInt8 => Num::Int(bits as u8 as i128),
        DType::UInt16 => Num::Int(bits as u16 as i128),
        DType::UInt32 => Num::Int(bits as u32 as i128),
        DType::UInt64 => Num::Int(bits as i128),
        DType::Float16 => Num::Float(half::f16::from_bits(bits as u16).to_f64()),
        DType::BFloat16 => Num::Float(half::bf16::from_bits(bits as u16).to_f64()),
        DType::Float32 => Num::Float(f32::from_bits(bits as u32) as f64),
        DType::Float64 => Num::Float(f64::from_bits(bits)),
    }
}

/// `n` as dtype `t`, rounded to nearest-even where `t` is a float (exactly once, also from a
/// wide integer), wrapped where `t` is an integer (callers check ranges first).
pub(crate) fn encode(n: Num, t: DType) -> u64 {
    let f = match n {
        Num::Int(v) => match t {
            DType::Bool => return (v != 0) as u64,
            _ if t.is_integer() => return (v as u64) & mask(t),
            DType::Float16 => int_to_f64_rounded(v, 11),
            DType::BFloat16 => int_to_f64_rounded(v, 8),
            DType::Float32 => int_to_f64_rounded(v, 24),
            _ => int_to_f64_rounded(v, 53),
        },
        Num::Float(f) => {
            if !t.is_float() {
                // Only reachable for a float constant into a bool/int, which cast rules refuse.
                return (f as i128 as u64) & mask(t);
            }
            f
        }
    };
    match t {
        DType::Float16 => half::f16::from_f64(f).to_bits() as u64,
        DType::BFloat16 => half::bf16::from_f64(f).to_bits() as u64,
        DType::Float32 => (f as f32).to_bits() as u64,
        _ => f.to_bits(),
    }
}

fn mask(t: DType) -> u64 {
    if t.bits() == 64 {
        u64::MAX
    } else {
        (1u64 << t.bits()) - 1
    }
}

/// `v` rounded (nearest-even) to `p` significant bits, as an f64 holding that value exactly
/// (so the final conversion to a `p`-bit float type rounds only once, or overflows).
fn int_to_f64_rounded(v: i128, p: u32) -> f64 {
    let neg = v < 0;
    let mag = v.unsigned_abs();
    let len = 128 - mag.leading_zeros();
    let rounded = if len <= p {
        mag
    } else {
        let shift = len - p;
        let q = mag >> shift;
        let rem = mag & ((1u128 << shift) - 1);
        let half = 1u128 << (shift - 1);
        let q = if rem > half || (rem == half && q & 1 == 1) {
            q + 1
        } else {
            q
        };
        q << shift
    };
    // `rounded` has at most p+1 <= 54 significant bits only when q overflowed to 2^p, which is
    // a power of two: exact in f64 either way.
    let f = rounded as f64;
    if neg {
        -f
    } else {
        f
    }
}

/// A Rust element type with a cuTile dtype: typed access to tiles and slices, to the engine's
/// device memory (`engine::Device`), and the type of a kernel's scalar argument
/// (`engine::Arg::scalar`, through [`DType::ir_ty`]).
///
/// # Safety
/// Views and tiles rely on an implementation being plain data of its dtype: `size_of::<Self>()
/// == Self::DTYPE.size()`, alignment at most that size, and (except for `bool`, which is
/// always converted through [`Element::from_bits`]) every bit pattern of that size a valid
/// value. The implementations here are the built-in integers, floats and `half` floats.
pub unsafe trait Element: Copy + Send + Sync + 'static {
    /// Its dtype (and so its size).
    const DTYPE: DType;
    /// The value's bits, little-endian, zero-extended to 64.
    fn to_bits(self) -> u64;
    /// The value of the low [`DType::size`] bytes of `bits`.
    fn from_bits(bits: u64) -> Self;
}

macro_rules! int_element {
    ($t:ty, $d:ident, $u:ty) => {
        // SAFETY: a built-in number of exactly its dtype's size; every bit pattern is valid.
        unsafe impl Element for $t {
            const DTYPE: DType = DType::$d;
            fn to_bits(self) -> u64 {
                self as $u as u64
            }
            fn from_bits(bits: u64) -> Self {
                bits as $u as $t
            }
        }
    };
}
int_element!(i8, Int8, u8);
int_element!(i16, Int16, u16);
int_element!(i32, Int32, u32);
int_element!(i64, Int64, u64);
int_element!(u8, UInt8, u8);
int_element!(u16, UInt16, u16);
int_element!(u32, UInt32, u32);
int_element!(u64, UInt64, u64);

// SAFETY: one byte, its dtype's size; tiles convert bools only through `from_bits`, which
// makes 0 or 1.
unsafe impl Element for bool {
    const DTYPE: DType = DType::Bool;
    fn to_bits(self) -> u64 {
        self as u64
    }
    fn from_bits(bits: u64) -> Self {
        bits & 0xff != 0
    }
}
// SAFETY: a built-in number of exactly its dtype's size; every bit pattern is valid.
unsafe impl Element for f32 {
    const DTYPE: DType = DType::Float32;
    fn to_bits(self) -> u64 {
        f32::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
}
// SAFETY: a built-in number of exactly its dtype's size; every bit pattern is valid.
unsafe impl Element for f64 {
    const DTYPE: DType = DType::Float64;
    fn to_bits(self) -> u64 {
        f64::to_bits(self)
    }
    fn from_bits(bits: u64) -> Self {
        f64::from_bits(bits)
    }
}
// SAFETY: a built-in number of exactly its dtype's size; every bit pattern is valid.
unsafe impl Element for half::f16 {
    const DTYPE: DType = DType::Float16;
    fn to_bits(self) -> u64 {
        half::f16::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        half::f16::from_bits(bits as u16)
    }
}
// SAFETY: a built-in number of exactly its dtype's size; every bit pattern is valid.
unsafe impl Element for half::bf16 {
    const DTYPE: DType = DType::BFloat16;
    fn to_bits(self) -> u64 {
        half::bf16::to_bits(self) as u64
    }
    fn from_bits(bits: u64) -> Self {
        half::bf16::from_bits(bits as u16)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promotion_table_matches_cutile() {
        use DType::*;
        // Rows of cuTile's `_common_dtype_table` that the implicit-cast rule reads.
        assert_eq!(promote(Int32, Int64), Some(Int64));
        assert_eq!(promote(Int32, UInt32), None);
        assert_eq!(promote(UInt32, Int64), None);
        assert_eq!(promote(Int64, Float32), Some(Float32));
        assert_eq!(promote(UInt64, Float16), Some(Float16));
        assert_eq!(promote(Float16, BFloat16), None);
        assert_eq!(promote(BFloat16, Float32), Some(Float32));
        assert_eq!(promote(Bool, UInt8), Some(UInt8));
        assert_eq!(promote(Float64, Float32), Some(Float64));
        assert!(tile_casts_to(Int32, Float32));
        assert!(!tile_casts_to(Float64, Float32));
        assert!(!tile_casts_to(Int64, Int32));
    }

    #[test]
    fn int_to_float_rounds_once() {
        // 2^24 + 1 is a tie in float32: to even (2^24); 2^24 + 3 rounds up.
        assert_eq!(
            encode(Num::Int((1 << 24) + 1), DType::Float32),
            16777216f32.to_bits() as u64
        );
        assert_eq!(
            encode(Num::Int((1 << 24) + 3), DType::Float32),
            16777220f32.to_bits() as u64
        );
        // bfloat16 has 8 significant bits: 257 is a tie -> 256, 259 -> 260.
        assert_eq!(
            encode(Num::Int(257), DType::BFloat16),
            half::bf16::from_f32(256.0).to_bits() as u64
        );
        assert_eq!(
            encode(Num::Int(259), DType::BFloat16),
            half::bf16::from_f32(260.0).to_bits() as u64
        );
        assert_eq!(
            encode(Num::Int(-70000), DType::Float16),
            half::f16::NEG_INFINITY.to_bits() as u64
        );
        assert_eq!(
            encode(Num::Int(u64::MAX as i128), DType::Float64),
            18446744073709551616f64.to_bits()
        );
    }
}
