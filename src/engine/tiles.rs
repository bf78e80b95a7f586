//! Tile atomics on device memory: cuTile's bulk atomics ([`crate::tile`]) applied to arrays
//! that live in the engine's [`Device`](super::Device) memory, the same bytes kernels see, so a
//! kernel can fill an array, a tile atomic update it and another kernel read it
//! (`docs/embedding.md`, `examples/multi_kernel.rs`).

use super::{DeviceBuffer, Element, Engine, Error};
use crate::tile::{ArrayView, DType, Operand, Options, RmwOp, Tile, TileEngine};

/// A typed n-d array in device memory: a buffer, its dtype, its shape, and where element
/// `[i, j, …]` is: element `offset + i·strides[0] + j·strides[1] + …` of the buffer (strides in
/// elements, row-major by default, negative and zero strides allowed). Every element it can
/// reach lies inside the buffer (checked when it is made).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceArray {
    buffer: DeviceBuffer,
    dtype: DType,
    shape: Vec<u64>,
    strides: Vec<i64>,
    /// `strides` × the element size (checked not to overflow when the array was made).
    byte_strides: Vec<i64>,
    offset: u64,
}

impl DeviceArray {
    /// The row-major array of `shape` at the start of `buffer`.
    pub fn new(buffer: DeviceBuffer, dtype: DType, shape: &[u64]) -> Result<DeviceArray, Error> {
        let mut strides = vec![0i64; shape.len()];
        let mut step = 1i64;
        for (s, &d) in strides.iter_mut().zip(shape).rev() {
            *s = step;
            step = step.saturating_mul(i64::try_from(d.max(1)).unwrap_or(i64::MAX));
        }
        DeviceArray::strided(buffer, dtype, shape, &strides, 0)
    }

    /// A strided view of `buffer` (see the type's doc). Errors when a reachable element lies
    /// outside the buffer.
    pub fn strided(
        buffer: DeviceBuffer,
        dtype: DType,
        shape: &[u64],
        strides: &[i64],
        offset: u64,
    ) -> Result<DeviceArray, Error> {
        if shape.len() != strides.len() {
            return Err(Error::Launch(format!(
                "a device array of rank {} needs {} strides, not {}",
                shape.len(),
                shape.len(),
                strides.len()
            )));
        }
        // The lowest and highest byte reachable, relative to the buffer, in checked arithmetic
        // (a shape or stride near 2^64 must be an error, not a wrapped bound).
        let size = dtype.size() as i128;
        let too_far = || {
            Error::Launch(format!(
                "a {dtype} array of shape {shape:?}, strides {strides:?} and offset {offset} \
                 reaches outside its {}-byte buffer",
                buffer.bytes()
            ))
        };
        let first = i128::from(offset).checked_mul(size).ok_or_else(too_far)?;
        let empty = shape.contains(&0);
        let (mut lo, mut hi) = (first, first);
        let mut byte_strides = Vec::with_capacity(strides.len());
        for (&d, &s) in shape.iter().zip(strides) {
            let step = i128::from(s).checked_mul(size).ok_or_else(too_far)?;
            byte_strides.push(i64::try_from(step).map_err(|_| too_far())?);
            if d == 0 {
                continue;
            }
            let far = step.checked_mul(i128::from(d) - 1).ok_or_else(too_far)?;
            if far < 0 {
                lo = lo.checked_add(far).ok_or_else(too_far)?;
            } else {
                hi = hi.checked_add(far).ok_or_else(too_far)?;
            }
        }
        // Even an empty array's first element must be inside (or at the end of) its buffer, so
        // that its base address is a valid pointer.
        let end = i128::from(buffer.bytes());
        if first > end || (!empty && (lo < 0 || hi.checked_add(size).is_none_or(|h| h > end))) {
            return Err(too_far());
        }
        Ok(DeviceArray {
            buffer,
            dtype,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
            byte_strides,
            offset,
        })
    }

    pub fn buffer(&self) -> DeviceBuffer {
        self.buffer
    }
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    pub fn shape(&self) -> &[u64] {
        &self.shape
    }
    /// Strides in elements.
    pub fn strides(&self) -> &[i64] {
        &self.strides
    }
    /// The element of the buffer where `[0, 0, …]` is.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

impl Engine {
    /// The engine's tile-atomic compiler (its cache of compiled call shapes), for host arrays.
    pub fn tiles(&self) -> &TileEngine {
        &self.inner.tiles
    }

    /// A new row-major device array holding `data` with `shape`.
    pub fn upload_array<T: Element>(
        &self,
        data: &[T],
        shape: &[u64],
    ) -> Result<DeviceArray, Error> {
        let n = shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .filter(|&n| n == data.len() as u64);
        if n.is_none() {
            return Err(Error::Launch(format!(
                "shape {shape:?} does not hold the {} elements given",
                data.len()
            )));
        }
        let buffer = self.device().upload(data)?;
        DeviceArray::new(buffer, T::DTYPE, shape)
    }

    /// A device array's elements in logical (row-major) order, whatever its strides.
    pub fn read_array<T: Element>(&self, array: &DeviceArray) -> Result<Vec<T>, Error> {
        if T::DTYPE != array.dtype {
            return Err(Error::Launch(format!(
                "the array holds {}, not {}",
                array.dtype,
                T::DTYPE
            )));
        }
        let refused = |bytes: u64| {
            Error::Device(crate::engine::DeviceError::Alloc(
                crate::exec::memory::AllocError::Refused { bytes },
            ))
        };
        let mut all = Vec::new();
        let whole = (array.buffer.bytes() / T::DTYPE.size() as u64) as usize;
        all.try_reserve_exact(whole)
            .map_err(|_| refused(array.buffer.bytes()))?;
        all.resize(whole, T::from_bits(0));
        self.device().read_into(array.buffer, 0, &mut all)?;
        let count = array
            .shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))
            .and_then(|n| usize::try_from(n).ok());
        let mut out = Vec::new();
        if count.is_none_or(|n| out.try_reserve_exact(n).is_err()) {
            return Err(refused(u64::MAX));
        }
        let mut index = vec![0u64; array.shape.len()];
        if array.shape.contains(&0) {
            return Ok(out);
        }
        loop {
            let at = array
                .shape
                .iter()
                .zip(&array.strides)
                .zip(&index)
                .fold(array.offset as i64, |a, ((_, &s), &i)| a + s * i as i64);
            out.push(all[at as usize]);
            // The next index, last dimension fastest.
            let mut d = array.shape.len();
            loop {
                if d == 0 {
                    return Ok(out);
                }
                d -= 1;
                index[d] += 1;
                if index[d] < array.shape[d] {
                    break;
                }
                index[d] = 0;
            }
        }
    }

    /// `cuda.tile.atomic_cas` on a device array (see [`TileEngine::atomic_cas`]).
    pub fn atomic_cas(
        &self,
        array: &DeviceArray,
        indices: &[Operand],
        expected: &Operand,
        desired: &Operand,
        opts: &Options,
    ) -> Result<Tile, Error> {
        self.with_view(array, |view| {
            self.tiles()
                .atomic_cas(view, indices, expected, desired, opts)
        })
    }

    /// `cuda.tile.atomic_xchg`, `atomic_add`, … on a device array (see
    /// [`TileEngine::atomic_rmw`]).
    pub fn atomic_rmw(
        &self,
        op: RmwOp,
        array: &DeviceArray,
        indices: &[Operand],
        update: &Operand,
        opts: &Options,
    ) -> Result<Tile, Error> {
        self.with_view(array, |view| {
            self.tiles().atomic_rmw(op, view, indices, update, opts)
        })
    }

    /// Runs `f` on a host view of `array`, with device memory held (so the arena cannot move
    /// while the view lives).
    fn with_view(
        &self,
        array: &DeviceArray,
        f: impl FnOnce(&ArrayView) -> Result<Tile, crate::tile::TileError>,
    ) -> Result<Tile, Error> {
        let memory = self.device().global();
        let (base, _) = memory.host_range(array.buffer)?;
        // SAFETY: `array` was checked (`DeviceArray::strided`, in checked arithmetic) to reach
        // only bytes inside its buffer, and to start at most at its end, with `byte_strides` the
        // strides it checked; `host_range` found the buffer live, so `base + offset·size` and
        // every element the view addresses lie inside the arena's allocation; the guard `memory` keeps the arena
        // from moving or being freed until the view is gone (it is dropped at the end of this
        // function, after `f`). Kernels and other tile operations access the same bytes only
        // through host atomics.
        let view = unsafe {
            let first = base.add((array.offset * array.dtype.size() as u64) as usize);
            ArrayView::from_raw(first, array.dtype, &array.shape, &array.byte_strides)
        }?;
        Ok(f(&view)?)
    }
}

impl From<crate::tile::TileError> for Error {
    fn from(e: crate::tile::TileError) -> Error {
        Error::Tile(e)
    }
}
