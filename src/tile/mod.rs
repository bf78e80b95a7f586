//! cuTile's bulk tile atomics on host memory: `atomic_cas`, `atomic_xchg`, `atomic_add`,
//! `atomic_min`, `atomic_max`, `atomic_and`, `atomic_or` and `atomic_xor` of `cuda.tile`
//! (issue 13, part 2), with cuTile's argument order, defaults, enum names, per-op dtype tables
//! and implicit-cast rules. Every decision and its source is written down in `docs/tile.md`.
//!
//! The shape of the API: an [`ArrayView`] (a strided n-d array in host-addressable memory,
//! written only atomically) and read-only [`Operand`]s (loosely typed scalar constants, strided
//! [`TileView`]s or owned [`Tile`]s) go in; an owned [`Tile`] of the common index shape
//! holding every element's old value comes out. A [`TileEngine`] is reusable and `Send +
//! Sync`: it caches one Cranelift function per call shape (operation, dtype, array rank, index
//! dtypes and rank, which operand strides are zero) and splits large tiles across its host
//! threads.
//!
//! ```text
//! indices ──broadcast──> common shape S ──┐
//! expected/desired/update ──broadcast to S, implicit cast to array dtype──┐
//!                                          └─> per element: bounds check (index as u64),
//!                                              host atomic at base + Σ index·stride ─> Tile(S)
//! ```
//!
//! * `reference.rs` is the plain Rust definition (one CAS loop per element on
//!   `std::sync::atomic`); the compiled path (`compile.rs`) is tested against it.
//! * Orders and scopes are checked as cuTile checks them (`WEAK`, a missing scope and scopes
//!   cuTile does not have, such as `CLUSTER`, are errors) and then lowered as the PTX
//!   lowering does: every host atomic Cranelift emits is sequentially consistent, a valid
//!   strengthening of `RELAXED`, `ACQUIRE`, `RELEASE` and `ACQ_REL` at any scope.
//! * Out-of-bounds elements (checked per dimension on the index taken as `u64`, so negative
//!   indices are out of bounds) touch no memory; CAS returns its `expected` element, the other
//!   operations return zero (see `docs/tile.md`). With `check_bounds = false` an out-of-bounds
//!   index is an error reported before any memory is touched.

mod compile;
mod dtype;
pub mod reference;

#[cfg(test)]
mod tests;

pub use dtype::{DType, Element, ScalarValue};

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

/// `cuda.tile.MemoryOrder`. `Weak` exists in cuTile (for plain loads and stores) and is
/// refused by every atomic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryOrder {
    Weak,
    Relaxed,
    Acquire,
    Release,
    AcqRel,
}

impl fmt::Display for MemoryOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemoryOrder::Weak => "MemoryOrder.WEAK",
            MemoryOrder::Relaxed => "MemoryOrder.RELAXED",
            MemoryOrder::Acquire => "MemoryOrder.ACQUIRE",
            MemoryOrder::Release => "MemoryOrder.RELEASE",
            MemoryOrder::AcqRel => "MemoryOrder.ACQ_REL",
        })
    }
}

/// `cuda.tile.MemoryScope` (`BLOCK`, `DEVICE`, `SYS`; cuTile's `NONE` is `None` in
/// [`Options::memory_scope`]). `Cluster` is PTX's `.cluster`, which cuTile does not have: it is
/// here so that a caller translating PTX gets a clear refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryScope {
    Block,
    Device,
    System,
    Cluster,
}

impl fmt::Display for MemoryScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemoryScope::Block => "MemoryScope.BLOCK",
            MemoryScope::Device => "MemoryScope.DEVICE",
            MemoryScope::System => "MemoryScope.SYS",
            MemoryScope::Cluster => "MemoryScope.CLUSTER",
        })
    }
}

/// The read-modify-write operations (`atomic_xchg`, `atomic_add`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RmwOp {
    Xchg,
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

impl RmwOp {
    /// Every operation.
    pub const ALL: [RmwOp; 7] = [
        RmwOp::Xchg,
        RmwOp::Add,
        RmwOp::Min,
        RmwOp::Max,
        RmwOp::And,
        RmwOp::Or,
        RmwOp::Xor,
    ];

    /// cuTile's function name.
    pub fn name(self) -> &'static str {
        match self {
            RmwOp::Xchg => "atomic_xchg",
            RmwOp::Add => "atomic_add",
            RmwOp::Min => "atomic_min",
            RmwOp::Max => "atomic_max",
            RmwOp::And => "atomic_and",
            RmwOp::Or => "atomic_or",
            RmwOp::Xor => "atomic_xor",
        }
    }

    /// The array dtypes cuTile accepts (`_ATOMIC_RMW_SPECS` in cuTile's `_ir/ops.py`).
    pub fn dtypes(self) -> &'static [DType] {
        use DType::*;
        match self {
            RmwOp::Xchg => &[Int32, Int64, UInt32, UInt64, Float32, Float64],
            RmwOp::Add => &[
                Int32, Int64, UInt32, UInt64, Float32, Float64, Float16, BFloat16,
            ],
            RmwOp::Min | RmwOp::Max | RmwOp::And | RmwOp::Or | RmwOp::Xor => {
                &[Int32, Int64, UInt32, UInt64]
            }
        }
    }

    /// Bitwise operations require the update's dtype to equal the array's (no implicit cast).
    pub fn is_bitwise(self) -> bool {
        matches!(self, RmwOp::And | RmwOp::Or | RmwOp::Xor)
    }
}

/// The array dtypes `atomic_cas` accepts (cuTile's `int_float_32_64_dtypes`).
pub const CAS_DTYPES: &[DType] = &[
    DType::Int32,
    DType::Int64,
    DType::UInt32,
    DType::UInt64,
    DType::Float32,
    DType::Float64,
];

/// The keyword arguments. `Default` is cuTile's: `check_bounds=True`,
/// `memory_order=MemoryOrder.ACQ_REL`, `memory_scope=MemoryScope.DEVICE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    pub check_bounds: bool,
    pub memory_order: MemoryOrder,
    /// `None` is cuTile's `MemoryScope.NONE`.
    pub memory_scope: Option<MemoryScope>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            check_bounds: true,
            memory_order: MemoryOrder::AcqRel,
            memory_scope: Some(MemoryScope::Device),
        }
    }
}

/// Why a call was refused. Messages name the operation, shapes and dtypes involved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TileError {
    #[error("{op}: for an array of rank {rank}, `indices` must be a tuple of length {rank}{hint}; got {got} index operand(s)", hint = if *rank == 1 { " (or a single tile)" } else { "" })]
    IndexCount {
        op: &'static str,
        rank: usize,
        got: usize,
    },
    #[error("{op}: index {dim} has non-integer data type {dtype}")]
    IndexDType {
        op: &'static str,
        dim: usize,
        dtype: String,
    },
    #[error("{op}: index shapes {shapes} are not broadcastable to a common shape")]
    IndexShapes { op: &'static str, shapes: String },
    #[error("{op}: {what} shape {shape} is not broadcastable to the index shape {target}")]
    NotBroadcastable {
        op: &'static str,
        what: &'static str,
        shape: String,
        target: String,
    },
    #[error("{op}: unsupported array dtype {dtype} (cuTile's {op} accepts {supported})")]
    UnsupportedDType {
        op: &'static str,
        dtype: DType,
        supported: String,
    },
    #[error("{what}: cannot implicitly cast {from} to {to}")]
    ImplicitCast {
        what: String,
        from: String,
        to: DType,
    },
    #[error("{op}: bitwise atomic read-modify-write operations require the update dtype ({update}) to exactly match the target dtype ({array})")]
    BitwiseDType {
        op: &'static str,
        update: DType,
        array: DType,
    },
    #[error("{what}: {value} is out of range of {}", dtype.map_or("any supported integer type".to_string(), |d| d.to_string()))]
    ScalarOutOfRange {
        what: String,
        value: String,
        dtype: Option<DType>,
    },
    #[error("{op}: invalid memory order {order}, expected one of MemoryOrder.RELAXED, MemoryOrder.ACQUIRE, MemoryOrder.RELEASE, MemoryOrder.ACQ_REL")]
    MemoryOrder {
        op: &'static str,
        order: MemoryOrder,
    },
    #[error("{op}: invalid memory scope {scope}, expected one of MemoryScope.BLOCK, MemoryScope.DEVICE, MemoryScope.SYS")]
    MemoryScope {
        op: &'static str,
        scope: MemoryScope,
    },
    #[error("{op}: {order} memory ordering requires a memory scope")]
    ScopeRequired {
        op: &'static str,
        order: MemoryOrder,
    },
    #[error("{op}: check_bounds=False but index {index} for dimension {dim} of result element {element} is out of bounds for array dimension of size {size} (nothing was written)")]
    OutOfBounds {
        op: &'static str,
        element: String,
        dim: usize,
        index: String,
        size: u64,
    },
    #[error("invalid view: {0}")]
    BadView(String),
    #[error("typed access to a tile of dtype {actual} as {requested}")]
    WrongDType { requested: DType, actual: DType },
    #[error("code generation failed: {0}")]
    Codegen(String),
}

/// Python's spelling of a shape: `()`, `(32,)`, `(4, 8)`.
pub(crate) fn fmt_shape<T: fmt::Display>(shape: &[T]) -> String {
    match shape {
        [] => "()".into(),
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The destination: a strided n-d array in host-addressable memory (a numpy array's buffer or
/// the engine's device memory). Strides are in bytes and may be zero or negative.
#[derive(Debug)]
pub struct ArrayView<'a> {
    ptr: *mut u8,
    dtype: DType,
    shape: Vec<u64>,
    strides: Vec<i64>,
    _life: PhantomData<&'a ()>,
}

// SAFETY: an `ArrayView` is only ever used to access its elements with host atomics (the
// contract of `from_raw`, and `from_mut_slice` borrows the memory exclusively), which are sound
// from any number of threads at once.
unsafe impl Send for ArrayView<'_> {}
// SAFETY: as for `Send`: shared use only performs atomic accesses.
unsafe impl Sync for ArrayView<'_> {}

impl<'a> ArrayView<'a> {
    /// A view of `shape` elements of `dtype` at `ptr`, element `[i, j, ...]` at
    /// `ptr + i*byte_strides[0] + j*byte_strides[1] + ...`. Checks that `ptr` and every stride
    /// are multiples of the element size and that no offset overflows.
    ///
    /// # Safety
    /// Every element addressable through `shape` and `byte_strides` must be valid, writable
    /// memory for `'a`, which others access only atomically (or not at all) while the view is
    /// in use.
    pub unsafe fn from_raw(
        ptr: *mut u8,
        dtype: DType,
        shape: &[u64],
        byte_strides: &[i64],
    ) -> Result<Self, TileError> {
        check_layout(
            "array",
            ptr as usize,
            dtype,
            shape.iter().map(|&d| d as u128),
            byte_strides.iter().map(|&s| s as i128),
            shape.len(),
            byte_strides.len(),
        )?;
        Ok(ArrayView {
            ptr,
            dtype,
            shape: shape.to_vec(),
            strides: byte_strides.to_vec(),
            _life: PhantomData,
        })
    }

    /// A C-order contiguous view of `data` with `shape` (whose product must be `data.len()`).
    pub fn from_mut_slice<T: Element>(data: &'a mut [T], shape: &[u64]) -> Result<Self, TileError> {
        let n: u128 = shape.iter().map(|&d| d as u128).product();
        if n != data.len() as u128 {
            return Err(TileError::BadView(format!(
                "array shape {} has {n} elements, the slice {}",
                fmt_shape(shape),
                data.len()
            )));
        }
        let strides = c_strides(shape.iter().map(|&d| d as usize), T::DTYPE.size());
        let strides: Vec<i64> = strides.iter().map(|&s| s as i64).collect();
        // SAFETY: the slice is borrowed mutably for 'a, so nobody else accesses it, and the
        // C-order strides of a shape whose product is its length address only its elements.
        unsafe { Self::from_raw(data.as_mut_ptr().cast(), T::DTYPE, shape, &strides) }
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }
    pub fn byte_strides(&self) -> &[i64] {
        &self.strides
    }
}

/// Checks a strided layout: lengths agree, pointer and strides aligned to the element size,
/// the largest offset representable.
fn check_layout(
    what: &str,
    ptr: usize,
    dtype: DType,
    shape: impl Iterator<Item = u128> + Clone,
    strides: impl Iterator<Item = i128> + Clone,
    shape_len: usize,
    strides_len: usize,
) -> Result<(), TileError> {
    let size = dtype.size();
    if shape_len != strides_len {
        return Err(TileError::BadView(format!(
            "{what} has {shape_len} dimensions but {strides_len} strides"
        )));
    }
    if ptr == 0 {
        return Err(TileError::BadView(format!("{what} pointer is null")));
    }
    if ptr % size != 0 {
        return Err(TileError::BadView(format!(
            "{what} pointer {ptr:#x} is not aligned to its {dtype} element size ({size} bytes)"
        )));
    }
    let mut extent: i128 = 0;
    for (d, (n, s)) in shape.zip(strides).enumerate() {
        if s % size as i128 != 0 {
            return Err(TileError::BadView(format!(
                "{what} stride {s} of dimension {d} is not a multiple of its {dtype} element size ({size} bytes)"
            )));
        }
        if n > 0 {
            extent += (n as i128 - 1).saturating_mul(s.abs());
            if extent > i64::MAX as i128 / 2 {
                return Err(TileError::BadView(format!(
                    "{what} spans more bytes than the address space"
                )));
            }
        }
    }
    Ok(())
}

fn c_strides(shape: impl DoubleEndedIterator<Item = usize>, size: usize) -> Vec<isize> {
    let mut strides: Vec<isize> = Vec::new();
    let mut s = size as isize;
    for d in shape.rev() {
        strides.push(s);
        s = s.saturating_mul(d.max(1) as isize);
    }
    strides.reverse();
    strides
}

/// A read-only strided n-d input (index or value tile); byte strides may be zero or negative.
#[derive(Debug, Clone)]
pub struct TileView<'a> {
    ptr: *const u8,
    dtype: DType,
    shape: Vec<usize>,
    strides: Vec<isize>,
    _life: PhantomData<&'a ()>,
}

// SAFETY: a `TileView` only reads memory that its contract says nobody writes while in use.
unsafe impl Send for TileView<'_> {}
// SAFETY: as for `Send`.
unsafe impl Sync for TileView<'_> {}

impl<'a> TileView<'a> {
    /// # Safety
    /// Every element addressable through `shape` and `byte_strides` must be valid for reads for
    /// `'a` and not written while the view is in use.
    pub unsafe fn from_raw(
        ptr: *const u8,
        dtype: DType,
        shape: &[usize],
        byte_strides: &[isize],
    ) -> Result<Self, TileError> {
        check_layout(
            "tile",
            ptr as usize,
            dtype,
            shape.iter().map(|&d| d as u128),
            byte_strides.iter().map(|&s| s as i128),
            shape.len(),
            byte_strides.len(),
        )?;
        Ok(TileView {
            ptr,
            dtype,
            shape: shape.to_vec(),
            strides: byte_strides.to_vec(),
            _life: PhantomData,
        })
    }

    /// A C-order contiguous view of `data` with `shape`.
    pub fn from_slice<T: Element>(data: &'a [T], shape: &[usize]) -> Result<Self, TileError> {
        let strides: Vec<isize> = c_strides(shape.iter().copied(), 1);
        Self::from_slice_strided(data, 0, shape, &strides)
    }

    /// A view of `data` whose element `[i, j, ...]` is `data[offset + i*strides[0] + ...]`
    /// (strides in elements, may be zero or negative); checked to stay inside `data`.
    pub fn from_slice_strided<T: Element>(
        data: &'a [T],
        offset: usize,
        shape: &[usize],
        strides: &[isize],
    ) -> Result<Self, TileError> {
        if shape.len() != strides.len() {
            return Err(TileError::BadView(format!(
                "tile has {} dimensions but {} strides",
                shape.len(),
                strides.len()
            )));
        }
        let (mut lo, mut hi) = (offset as i128, offset as i128);
        let mut empty = false;
        for (&n, &s) in shape.iter().zip(strides) {
            if n == 0 {
                empty = true;
            } else if s > 0 {
                hi += (n as i128 - 1) * s as i128;
            } else {
                lo += (n as i128 - 1) * s as i128;
            }
        }
        if !empty && (lo < 0 || hi >= data.len() as i128) {
            return Err(TileError::BadView(format!(
                "tile of shape {} with strides {:?} from offset {offset} leaves a slice of {} elements",
                fmt_shape(shape),
                strides,
                data.len()
            )));
        }
        let size = T::DTYPE.size() as isize;
        let bytes: Vec<isize> = strides.iter().map(|&s| s * size).collect();
        let base = if data.is_empty() {
            std::ptr::NonNull::<T>::dangling().as_ptr().cast_const()
        } else {
            data[offset.min(data.len() - 1)..].as_ptr()
        };
        // SAFETY: every addressable element was checked to lie inside `data`, borrowed shared
        // for 'a (so nobody writes it); an empty view addresses nothing.
        unsafe { Self::from_raw(base.cast(), T::DTYPE, shape, &bytes) }
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
}

/// An owned, C-order contiguous tile: the result of every operation (and usable as an input).
#[derive(Clone, PartialEq)]
pub struct Tile {
    dtype: DType,
    shape: Vec<usize>,
    /// The elements' native bytes, in 8-byte words so every element is aligned.
    words: Vec<u64>,
}

impl fmt::Debug for Tile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tile")
            .field("dtype", &self.dtype)
            .field("shape", &self.shape)
            .field("bits", &self.bits_vec())
            .finish()
    }
}

impl Tile {
    /// The element type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The shape (C order).
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// A tile of zero bits, or an error when the host cannot provide its memory (a result's
    /// size comes from the caller's index shapes).
    pub fn try_zeros(dtype: DType, shape: &[usize]) -> Result<Tile, TileError> {
        let words = shape
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .and_then(|n| n.checked_mul(dtype.size()))
            .map(|b| b.div_ceil(8));
        let mut v = Vec::new();
        match words {
            Some(w) if v.try_reserve_exact(w).is_ok() => v.resize(w, 0),
            _ => {
                return Err(TileError::BadView(format!(
                    "a result tile of shape {} and dtype {dtype} does not fit in host memory",
                    fmt_shape(shape)
                )))
            }
        }
        Ok(Tile {
            dtype,
            shape: shape.to_vec(),
            words: v,
        })
    }

    /// A tile of zero bits.
    pub fn zeros(dtype: DType, shape: &[usize]) -> Tile {
        let n: usize = shape.iter().product();
        Tile {
            dtype,
            shape: shape.to_vec(),
            words: vec![0; (n * dtype.size()).div_ceil(8)],
        }
    }

    /// A tile holding `data` in C order.
    pub fn from_vec<T: Element>(shape: &[usize], data: Vec<T>) -> Result<Tile, TileError> {
        let n: usize = shape.iter().product();
        if n != data.len() {
            return Err(TileError::BadView(format!(
                "tile shape {} has {n} elements, the data {}",
                fmt_shape(shape),
                data.len()
            )));
        }
        let mut t = Tile::zeros(T::DTYPE, shape);
        for (i, v) in data.into_iter().enumerate() {
            t.set_bits(i, v.to_bits());
        }
        Ok(t)
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements' native bytes in C order.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `words` owns at least `len * size` initialised bytes; u8 has alignment 1.
        unsafe {
            std::slice::from_raw_parts(self.words.as_ptr().cast(), self.len() * self.dtype.size())
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let n = self.len() * self.dtype.size();
        // SAFETY: as for `bytes`, borrowed mutably.
        unsafe { std::slice::from_raw_parts_mut(self.words.as_mut_ptr().cast(), n) }
    }

    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.words.as_mut_ptr().cast()
    }

    /// Element `i` (C order)'s bit pattern, zero-extended.
    pub fn bits(&self, i: usize) -> u64 {
        let s = self.dtype.size();
        let mut b = [0u8; 8];
        b[..s].copy_from_slice(&self.bytes()[i * s..(i + 1) * s]);
        u64::from_le_bytes(if cfg!(target_endian = "little") {
            b
        } else {
            let mut r = [0u8; 8];
            r[8 - s..].copy_from_slice(&b[..s]);
            r
        })
    }

    fn set_bits(&mut self, i: usize, bits: u64) {
        let s = self.dtype.size();
        let b = bits.to_ne_bytes();
        let src = if cfg!(target_endian = "little") {
            &b[..s]
        } else {
            &b[8 - s..]
        };
        self.bytes_mut()[i * s..(i + 1) * s].copy_from_slice(src);
    }

    /// Every element's bit pattern.
    pub fn bits_vec(&self) -> Vec<u64> {
        (0..self.len()).map(|i| self.bits(i)).collect()
    }

    /// The elements as `T`, which must be the tile's dtype.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>, TileError> {
        if T::DTYPE != self.dtype {
            return Err(TileError::WrongDType {
                requested: T::DTYPE,
                actual: self.dtype,
            });
        }
        if T::DTYPE == DType::Bool || std::mem::size_of::<T>() != self.dtype.size() {
            // A `bool` must be 0 or 1, so it goes through `from_bits`.
            return Ok((0..self.len())
                .map(|i| T::from_bits(self.bits(i)))
                .collect());
        }
        // One copy of the bytes (results of 2^20 elements are common: element by element
        // cost as much as the atomics themselves).
        let n = self.len();
        let mut out: Vec<T> = Vec::with_capacity(n);
        // SAFETY: `out` has room for `n` elements of `size_of::<T>() == dtype.size()` bytes,
        // exactly the `n * size` bytes of `self.bytes()` (in the host's byte order); every
        // non-bool `Element` (integers, floats, `half` floats) is valid for any bit pattern, so
        // the `n` elements are initialised values once copied.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.bytes().as_ptr(),
                out.as_mut_ptr().cast::<u8>(),
                n * self.dtype.size(),
            );
            out.set_len(n);
        }
        Ok(out)
    }

    /// A view of this tile.
    pub fn view(&self) -> TileView<'_> {
        let strides = c_strides(self.shape.iter().copied(), self.dtype.size());
        TileView {
            ptr: self.words.as_ptr().cast(),
            dtype: self.dtype,
            shape: self.shape.clone(),
            strides,
            _life: PhantomData,
        }
    }
}

/// A read-only input: a loosely typed scalar constant, a strided view, or an owned tile.
#[derive(Debug, Clone)]
pub enum Operand<'a> {
    Scalar(ScalarValue),
    View(TileView<'a>),
    Tile(Tile),
}

impl<'a> Operand<'a> {
    /// A Python `int` constant.
    pub fn int(v: i128) -> Operand<'static> {
        Operand::Scalar(ScalarValue::Int(v))
    }
    /// A Python `float` constant.
    pub fn float(v: f64) -> Operand<'static> {
        Operand::Scalar(ScalarValue::Float(v))
    }
    /// A C-order contiguous tile over `data`.
    pub fn slice<T: Element>(data: &'a [T], shape: &[usize]) -> Result<Operand<'a>, TileError> {
        Ok(Operand::View(TileView::from_slice(data, shape)?))
    }
    /// A 1-d tile over `data`.
    pub fn vec1<T: Element>(data: &'a [T]) -> Operand<'a> {
        Operand::View(TileView::from_slice(data, &[data.len()]).expect("a 1-d slice view is valid"))
    }
    /// A typed 0-d tile (a scalar with a dtype, unlike [`Operand::Scalar`]).
    pub fn typed<T: Element>(v: T) -> Operand<'static> {
        Operand::Tile(Tile::from_vec(&[], vec![v]).expect("one element"))
    }

    fn shape(&self) -> &[usize] {
        match self {
            Operand::Scalar(_) => &[],
            Operand::View(v) => &v.shape,
            Operand::Tile(t) => &t.shape,
        }
    }

    fn view(&self) -> Option<TileView<'_>> {
        match self {
            Operand::Scalar(_) => None,
            Operand::View(v) => Some(v.clone()),
            Operand::Tile(t) => Some(t.view()),
        }
    }
}

/// What one call does per element.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    Cas,
    Rmw(RmwOp),
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Cas => "atomic_cas",
            Kind::Rmw(op) => op.name(),
        }
    }
}

/// An input resolved for the loop: element at `ptr + Σ coord[d]·strides[d]` (byte strides over
/// the result's dimensions, zero where broadcast).
#[derive(Debug, Clone)]
pub(crate) struct Input {
    pub ptr: *const u8,
    pub dtype: DType,
    pub strides: Vec<i64>,
}

/// A validated call: everything the reference loop and the compiled loop need.
pub(crate) struct Prepared {
    pub kind: Kind,
    pub dtype: DType,
    pub base: *mut u8,
    pub array_shape: Vec<u64>,
    pub array_strides: Vec<i64>,
    /// The common index shape (the result's shape).
    pub shape: Vec<usize>,
    /// One per array dimension, in its own integer dtype.
    pub indices: Vec<Input>,
    /// CAS: expected, desired; RMW: update. Always in the array's dtype.
    pub values: Vec<Input>,
    /// Storage of converted values and scalar indices.
    _buffers: Vec<Vec<u64>>,
}

impl Prepared {
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }
}

/// Reads the element at `ptr` of `dtype` as zero-extended bits.
///
/// # Safety
/// `ptr` must be valid for an aligned read of `dtype.size()` bytes.
pub(crate) unsafe fn read_bits(ptr: *const u8, dtype: DType) -> u64 {
    // SAFETY: the caller's contract.
    unsafe {
        match dtype.size() {
            1 => ptr.read() as u64,
            2 => ptr.cast::<u16>().read() as u64,
            4 => ptr.cast::<u32>().read() as u64,
            _ => ptr.cast::<u64>().read(),
        }
    }
}

/// The broadcast strides of a view of `shape`/`strides` against the result shape `to`
/// (`None` if it does not broadcast to it, one way only).
fn broadcast_strides(shape: &[usize], strides: &[isize], to: &[usize]) -> Option<Vec<i64>> {
    if shape.len() > to.len() {
        return None;
    }
    let lead = to.len() - shape.len();
    let mut out = vec![0i64; to.len()];
    for (j, (&n, &s)) in shape.iter().zip(strides).enumerate() {
        let d = lead + j;
        if n == to[d] {
            out[d] = if n == 1 { 0 } else { s as i64 };
        } else if n != 1 {
            return None;
        }
    }
    Some(out)
}

/// cuTile's `broadcast_shapes2`.
fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i < a.len() { a[a.len() - 1 - i] } else { 1 };
        let db = if i < b.len() { b[b.len() - 1 - i] } else { 1 };
        if da != db && da != 1 && db != 1 {
            return None;
        }
        out[n - 1 - i] = if da == 1 { db } else { da };
    }
    Some(out)
}

fn check_order_scope(op: &'static str, opts: &Options) -> Result<(), TileError> {
    if opts.memory_order == MemoryOrder::Weak {
        return Err(TileError::MemoryOrder {
            op,
            order: opts.memory_order,
        });
    }
    match opts.memory_scope {
        Some(MemoryScope::Cluster) => Err(TileError::MemoryScope {
            op,
            scope: MemoryScope::Cluster,
        }),
        None => Err(TileError::ScopeRequired {
            op,
            order: opts.memory_order,
        }),
        Some(MemoryScope::Block | MemoryScope::Device | MemoryScope::System) => Ok(()),
    }
}

/// Validates a call in cuTile's order (indices, array dtype, value shapes and casts, order and
/// scope) and resolves every input for the loop.
pub(crate) fn prepare(
    kind: Kind,
    array: &ArrayView,
    indices: &[Operand],
    values: &[(&'static str, &Operand)],
) -> Result<Prepared, TileError> {
    let op = kind.name();
    let rank = array.shape.len();
    if indices.len() != rank {
        return Err(TileError::IndexCount {
            op,
            rank,
            got: indices.len(),
        });
    }
    let mut buffers: Vec<Vec<u64>> = Vec::new();
    // Index dtypes: integer tiles, or integer constants (typed by cuTile's default rule).
    for (dim, ind) in indices.iter().enumerate() {
        let (dtype, name) = match ind {
            Operand::Scalar(s) => (s.default_dtype()?, s.to_string()),
            Operand::View(v) => (v.dtype, v.dtype.to_string()),
            Operand::Tile(t) => (t.dtype, t.dtype.to_string()),
        };
        if !dtype.is_integer() {
            let shown = match ind {
                Operand::Scalar(_) => format!("{dtype} (constant {name})"),
                Operand::View(_) | Operand::Tile(_) => name,
            };
            return Err(TileError::IndexDType {
                op,
                dim,
                dtype: shown,
            });
        }
    }
    let mut shape: Vec<usize> = Vec::new();
    for ind in indices {
        shape = broadcast_shapes(&shape, ind.shape()).ok_or_else(|| TileError::IndexShapes {
            op,
            shapes: indices
                .iter()
                .map(|i| fmt_shape(i.shape()))
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    }
    let elements = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|n| n.checked_mul(8).is_some_and(|b| b <= isize::MAX as usize));
    if elements.is_none() {
        return Err(TileError::BadView(format!(
            "{op}: the result of index shape {} does not fit in memory",
            fmt_shape(&shape)
        )));
    }
    let mut index_inputs = Vec::with_capacity(rank);
    for ind in indices {
        match ind {
            Operand::Scalar(s) => {
                let dtype = s.default_dtype()?;
                let bits = dtype::cast_scalar(*s, dtype, "index")?;
                let buf = vec![bits];
                index_inputs.push(Input {
                    ptr: buf.as_ptr().cast(),
                    dtype,
                    strides: vec![0; shape.len()],
                });
                buffers.push(buf);
            }
            Operand::View(_) | Operand::Tile(_) => {
                let v = ind.view().expect("a tile operand has a view");
                let strides = broadcast_strides(&v.shape, &v.strides, &shape)
                    .expect("index shapes broadcast to their common shape");
                index_inputs.push(Input {
                    ptr: v.ptr,
                    dtype: v.dtype,
                    strides,
                });
            }
        }
    }
    let dtype = array.dtype;
    let supported = match kind {
        Kind::Cas => CAS_DTYPES,
        Kind::Rmw(op) => op.dtypes(),
    };
    if !supported.contains(&dtype) {
        return Err(TileError::UnsupportedDType {
            op,
            dtype,
            supported: supported
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    let mut value_inputs = Vec::with_capacity(values.len());
    for &(what, val) in values {
        if broadcast_strides(val.shape(), &vec![0; val.shape().len()], &shape).is_none() {
            return Err(TileError::NotBroadcastable {
                op,
                what,
                shape: fmt_shape(val.shape()),
                target: fmt_shape(&shape),
            });
        }
        let context = match kind {
            Kind::Cas => "Stored value is incompatible with array's dtype".to_string(),
            Kind::Rmw(_) => "Update is incompatible with the target dtype".to_string(),
        };
        let bitwise = matches!(kind, Kind::Rmw(r) if r.is_bitwise());
        match val {
            Operand::Scalar(s) => {
                if bitwise && s.default_dtype()? != dtype {
                    return Err(TileError::BitwiseDType {
                        op,
                        update: s.default_dtype()?,
                        array: dtype,
                    });
                }
                let bits = dtype::cast_scalar(*s, dtype, &context)?;
                let buf = vec![bits];
                value_inputs.push(Input {
                    ptr: buf.as_ptr().cast(),
                    dtype,
                    strides: vec![0; shape.len()],
                });
                buffers.push(buf);
            }
            Operand::View(_) | Operand::Tile(_) => {
                let v = val.view().expect("a tile operand has a view");
                if bitwise && v.dtype != dtype {
                    return Err(TileError::BitwiseDType {
                        op,
                        update: v.dtype,
                        array: dtype,
                    });
                }
                if v.dtype == dtype {
                    let strides =
                        broadcast_strides(&v.shape, &v.strides, &shape).expect("checked above");
                    value_inputs.push(Input {
                        ptr: v.ptr,
                        dtype,
                        strides,
                    });
                } else {
                    if !dtype::tile_casts_to(v.dtype, dtype) {
                        return Err(TileError::ImplicitCast {
                            what: format!("{op}: {context}"),
                            from: v.dtype.to_string(),
                            to: dtype,
                        });
                    }
                    let (buf, strides) = convert_view(&v, dtype);
                    let strides =
                        broadcast_strides(&v.shape, &strides, &shape).expect("checked above");
                    value_inputs.push(Input {
                        ptr: buf.as_ptr().cast(),
                        dtype,
                        strides,
                    });
                    buffers.push(buf);
                }
            }
        }
    }
    Ok(Prepared {
        kind,
        dtype,
        base: array.ptr,
        array_shape: array.shape.clone(),
        array_strides: array.strides.clone(),
        shape,
        indices: index_inputs,
        values: value_inputs,
        _buffers: buffers,
    })
}

/// Converts every element of `v` to `to` (exact cuTile casts: widening, int to float rounded
/// once), into a C-order buffer; returns it with its byte strides.
fn convert_view(v: &TileView, to: DType) -> (Vec<u64>, Vec<isize>) {
    let n: usize = v.shape.iter().product();
    let mut t = Tile::zeros(to, &v.shape);
    for_each_coord(&v.shape, |i, coord| {
        let off: isize = coord
            .iter()
            .zip(&v.strides)
            .map(|(&c, &s)| c as isize * s)
            .sum();
        // SAFETY: the view's contract makes every element at such an offset readable.
        let bits = unsafe { read_bits(v.ptr.offset(off), v.dtype) };
        t.set_bits(i, dtype::encode(dtype::decode(v.dtype, bits), to));
    });
    debug_assert_eq!(t.len(), n);
    let strides = c_strides(v.shape.iter().copied(), to.size());
    (t.words, strides)
}

/// Calls `f(flat, coord)` for every coordinate of `shape` in C order.
pub(crate) fn for_each_coord(shape: &[usize], mut f: impl FnMut(usize, &[usize])) {
    let n: usize = shape.iter().product();
    let mut coord = vec![0usize; shape.len()];
    for i in 0..n {
        f(i, &coord);
        for d in (0..shape.len()).rev() {
            coord[d] += 1;
            if coord[d] < shape[d] {
                break;
            }
            coord[d] = 0;
        }
    }
}

/// The index values of result element `coord` (as u64), for bounds checks.
fn index_at(input: &Input, coord: &[usize]) -> u64 {
    let off: i64 = coord
        .iter()
        .zip(&input.strides)
        .map(|(&c, &s)| c as i64 * s)
        .sum();
    // SAFETY: inputs come from views (their contract) or from owned buffers of one element
    // with zero strides.
    let bits = unsafe { read_bits(input.ptr.offset(off as isize), input.dtype) };
    index_as_u64(input.dtype, bits)
}

/// cuTile's `astype(ind, uint64)`: sign-extends signed indices (so negatives are huge).
pub(crate) fn index_as_u64(dtype: DType, bits: u64) -> u64 {
    match dtype {
        DType::Int8 => bits as u8 as i8 as i64 as u64,
        DType::Int16 => bits as u16 as i16 as i64 as u64,
        DType::Int32 => bits as u32 as i32 as i64 as u64,
        _ => bits,
    }
}

/// With `check_bounds = false`: the first out-of-bounds element (C order), as an error,
/// before any memory is touched.
fn validate_bounds(p: &Prepared) -> Result<(), TileError> {
    let mut err = None;
    for_each_coord(&p.shape, |_, coord| {
        if err.is_some() {
            return;
        }
        for (dim, input) in p.indices.iter().enumerate() {
            let idx = index_at(input, coord);
            if idx >= p.array_shape[dim] {
                let shown = if input.dtype.is_signed() {
                    (idx as i64).to_string()
                } else {
                    idx.to_string()
                };
                err = Some(TileError::OutOfBounds {
                    op: p.kind.name(),
                    element: fmt_shape(coord),
                    dim,
                    index: shown,
                    size: p.array_shape[dim],
                });
                return;
            }
        }
    });
    err.map_or(Ok(()), Err)
}

fn check_call(p: &Prepared, opts: &Options) -> Result<(), TileError> {
    check_order_scope(p.kind.name(), opts)?;
    if !opts.check_bounds {
        validate_bounds(p)?;
    }
    Ok(())
}

/// The default number of result elements per thread below which a call stays on the calling
/// thread (spawning costs more than a few thousand atomics).
pub const DEFAULT_PARALLEL_THRESHOLD: usize = 1 << 15;

/// Runs bulk tile atomics: holds the cache of compiled call shapes and the host thread count.
pub struct TileEngine {
    threads: usize,
    parallel_threshold: usize,
    cache: Mutex<HashMap<compile::Key, Arc<compile::Compiled>>>,
}

impl fmt::Debug for TileEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TileEngine")
            .field("threads", &self.threads)
            .field("compiled", &self.compiled_shapes())
            .finish()
    }
}

impl TileEngine {
    /// An engine that splits large tiles across `threads` host threads (at least 1).
    pub fn new(threads: usize) -> TileEngine {
        TileEngine {
            threads: threads.max(1),
            parallel_threshold: DEFAULT_PARALLEL_THRESHOLD,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// Sets how many result elements each thread must get before a call is split.
    pub fn with_parallel_threshold(mut self, elements_per_thread: usize) -> TileEngine {
        self.parallel_threshold = elements_per_thread.max(1);
        self
    }

    pub fn threads(&self) -> usize {
        self.threads
    }

    /// How many call shapes have been compiled so far.
    pub fn compiled_shapes(&self) -> usize {
        self.cache.lock().map(|c| c.len()).unwrap_or(0)
    }

    /// `cuda.tile.atomic_cas(array, indices, expected, desired, check_bounds, memory_order,
    /// memory_scope)`: the old value of every element (its `expected` element where the
    /// index is out of bounds).
    pub fn atomic_cas(
        &self,
        array: &ArrayView,
        indices: &[Operand],
        expected: &Operand,
        desired: &Operand,
        opts: &Options,
    ) -> Result<Tile, TileError> {
        self.run(&prepare_cas(array, indices, expected, desired, opts)?)
    }

    /// `cuda.tile.atomic_<op>(array, indices, update, ...)`: the old value of every element
    /// (zero where the index is out of bounds).
    pub fn atomic_rmw(
        &self,
        op: RmwOp,
        array: &ArrayView,
        indices: &[Operand],
        update: &Operand,
        opts: &Options,
    ) -> Result<Tile, TileError> {
        self.run(&prepare_rmw(op, array, indices, update, opts)?)
    }

    fn run(&self, p: &Prepared) -> Result<Tile, TileError> {
        let mut out = Tile::try_zeros(p.dtype, &p.shape)?;
        let n = p.len();
        if n == 0 {
            return Ok(out);
        }
        let key = compile::Key::of(p);
        let compiled = {
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            match cache.get(&key) {
                Some(c) => c.clone(),
                None => {
                    let c = Arc::new(compile::Compiled::new(&key)?);
                    cache.insert(key.clone(), c.clone());
                    c
                }
            }
        };
        let params = compile::pack_params(p, out.as_mut_ptr());
        let threads = self.threads.min(n / self.parallel_threshold).max(1);
        if threads == 1 {
            // SAFETY: `params` describes `p` (validated inputs, in-bounds stores guarded by the
            // code's bounds checks) and `out`, which holds `n` elements.
            unsafe { compiled.call(&params, 0, n as u64) };
        } else {
            std::thread::scope(|s| {
                for t in 0..threads {
                    let (params, compiled) = (&params, &compiled);
                    let (a, b) = (n * t / threads, n * (t + 1) / threads);
                    s.spawn(move || {
                        // SAFETY: as above; the threads write disjoint ranges of `out`.
                        unsafe { compiled.call(params, a as u64, b as u64) }
                    });
                }
            });
        }
        Ok(out)
    }
}

/// A CAS call checked as cuTile checks it (shapes, dtypes, casts, then order and scope), for
/// the engine and the reference alike.
fn prepare_cas<'a>(
    array: &ArrayView,
    indices: &[Operand<'a>],
    expected: &Operand<'a>,
    desired: &Operand<'a>,
    opts: &Options,
) -> Result<Prepared, TileError> {
    let p = prepare(
        Kind::Cas,
        array,
        indices,
        &[("Expected value", expected), ("Desired value", desired)],
    )?;
    check_call(&p, opts)?;
    Ok(p)
}

/// [`prepare_cas`] for an RMW op.
fn prepare_rmw<'a>(
    op: RmwOp,
    array: &ArrayView,
    indices: &[Operand<'a>],
    update: &Operand<'a>,
    opts: &Options,
) -> Result<Prepared, TileError> {
    let p = prepare(Kind::Rmw(op), array, indices, &[("Update", update)])?;
    check_call(&p, opts)?;
    Ok(p)
}

/// `cuda.tile.atomic_xchg`, `atomic_add`, …: [`TileEngine::atomic_rmw`] with the op named.
macro_rules! rmw_wrappers {
    ($($name:ident => $op:ident),* $(,)?) => {
        impl TileEngine {
            $(
                #[doc = concat!("`cuda.tile.", stringify!($name), "`: [`TileEngine::atomic_rmw`] with [`RmwOp::", stringify!($op), "`].")]
                pub fn $name(
                    &self,
                    array: &ArrayView,
                    indices: &[Operand],
                    update: &Operand,
                    opts: &Options,
                ) -> Result<Tile, TileError> {
                    self.atomic_rmw(RmwOp::$op, array, indices, update, opts)
                }
            )*
        }
    };
}

rmw_wrappers!(
    atomic_xchg => Xchg,
    atomic_add => Add,
    atomic_min => Min,
    atomic_max => Max,
    atomic_and => And,
    atomic_or => Or,
    atomic_xor => Xor,
);
