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
        // The lowest and highest element reachable, relative to `offset` (an empty array
        // reaches nothing).
        let (mut lo, mut hi) = (0i128, 0i128);
        let empty = shape.contains(&0);
        for (&d, &s) in shape.iter().zip(strides) {
            let far = i128::from(s) * (i128::from(d) - 1).max(0);
            if far < 0 {
                lo += far;
            } else {
                hi += far;
            }
        }
        let size = dtype.size() as i128;
        let first = i128::from(offset) + lo;
        let last = i128::from(offset) + hi;
        if !empty && (first < 0 || (last + 1) * size > i128::from(buffer.bytes())) {
            return Err(Error::Launch(format!(
                "a {dtype} array of shape {shape:?}, strides {strides:?} and offset {offset} \
                 reaches elements {first}..={last}, outside its {}-byte buffer",
                buffer.bytes()
            )));
        }
        Ok(DeviceArray {
            buffer,
            dtype,
            shape: shape.to_vec(),
            strides: strides.to_vec(),
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
        let mut all =
            vec![T::from_bits(0); (array.buffer.bytes() / T::DTYPE.size() as u64) as usize];
        self.device().read_into(array.buffer, 0, &mut all)?;
        let mut out = Vec::new();
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
        let size = array.dtype.size() as i64;
        let byte_strides: Vec<i64> = array.strides.iter().map(|&s| s * size).collect();
        // SAFETY: `array` was checked (`DeviceArray::strided`) to reach only elements inside its
        // buffer, which `host_range` found live, so `base + offset·size` and every element the
        // view addresses lie inside the arena's allocation; the guard `memory` keeps the arena
        // from moving or being freed until the view is gone (it is dropped at the end of this
        // function, after `f`). Kernels and other tile operations access the same bytes only
        // through host atomics.
        let view = unsafe {
            let first = base.add((array.offset * array.dtype.size() as u64) as usize);
            ArrayView::from_raw(first, array.dtype, &array.shape, &byte_strides)
        }?;
        Ok(f(&view)?)
    }
}

impl From<crate::tile::TileError> for Error {
    fn from(e: crate::tile::TileError) -> Error {
        Error::Tile(e)
    }
}
