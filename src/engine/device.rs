//! Device memory that lives in the engine across launches (`docs/embedding.md`).
//!
//! An [`Engine`](super::Engine) owns one [`Device`]: a global arena (the same
//! [`GlobalMemory`] a program file's launch gets) whose allocations outlive launches. Each
//! allocation is a [`DeviceBuffer`], a device address and a length: kernels of every dialect
//! see it at that address (a PTX pointer parameter, a SASS constant-bank word, a vISA SVM
//! pointer), and tile operations ([`crate::tile`]) work on the same bytes, so one array can be
//! filled by a kernel, updated by a tile atomic and read by a second kernel.
//!
//! Allocation is first fit in address order, each allocation aligned to [`ALLOC_ALIGN`] and
//! zeroed. The arena ends right after the highest live allocation, so a kernel's access past it
//! traps; an access to a freed allocation below the highest one is not detected (as on a GPU,
//! where freed memory stays mapped until it is reused). Host reads and writes of a freed buffer
//! are errors.
//!
//! Concurrency: a launch or a tile operation holds the arena shared (several may run at once;
//! every access is a host atomic); allocating and freeing hold it exclusively, because growing
//! the arena may move it in host memory (device addresses never move).

use crate::exec::memory::ALLOC_ALIGN;
use crate::exec::{GlobalMemory, GLOBAL_BASE};
use crate::tile::DType;
pub use crate::tile::Element;
use std::collections::BTreeMap;
use std::sync::{RwLock, RwLockReadGuard};

/// One allocation of device memory: its device address and length in bytes. A plain handle
/// (copyable); it is valid until [`Device::free`]. Each allocation of the process has its own
/// identity, so a freed handle stays dead when its address is reused, and a handle of another
/// engine's memory is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DeviceBuffer {
    address: u64,
    bytes: u64,
    id: u64,
}

/// The identity of the next allocation (process-wide, never reused).
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl DeviceBuffer {
    /// The device address kernels see (aligned to [`ALLOC_ALIGN`]).
    pub fn address(&self) -> u64 {
        self.address
    }

    /// The length in bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// What went wrong with device memory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeviceError {
    #[error("{0}")]
    Alloc(#[from] crate::exec::memory::AllocError),
    /// The buffer was freed (or never came from this engine).
    #[error(
        "no live device buffer at {address:#x} of {bytes} bytes (freed, or from another engine)"
    )]
    NotLive { address: u64, bytes: u64 },
    /// A host read or write reaches past the buffer.
    #[error("{what} of {len} bytes at byte {offset} of a {bytes}-byte device buffer reaches past its end")]
    OutOfRange {
        what: &'static str,
        offset: u64,
        len: u64,
        bytes: u64,
    },
    /// A typed access whose byte count is not a whole number of elements.
    #[error("a {bytes}-byte device buffer does not hold a whole number of {dtype} elements ({} bytes each)", dtype.size())]
    Ragged { bytes: u64, dtype: DType },
}

/// Device memory: the arena and its live allocations.
#[derive(Debug)]
pub struct Device {
    state: RwLock<State>,
}

#[derive(Debug)]
struct State {
    global: GlobalMemory,
    /// Live allocations: device address → (bytes reserved, identity).
    live: BTreeMap<u64, (u64, u64)>,
}

impl Default for Device {
    fn default() -> Self {
        Device::new()
    }
}

impl Device {
    /// Device memory without allocations.
    pub fn new() -> Device {
        Device {
            state: RwLock::new(State {
                global: GlobalMemory::empty(),
                live: BTreeMap::new(),
            }),
        }
    }

    /// The arena, held shared for as long as the guard lives (a launch, a tile operation).
    pub fn global(&self) -> GlobalGuard<'_> {
        GlobalGuard(self.state.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// A zeroed allocation of `bytes` bytes (at least one byte is reserved, so that every
    /// buffer has its own address).
    pub fn alloc(&self, bytes: u64) -> Result<DeviceBuffer, DeviceError> {
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        let size = bytes.max(1);
        // First fit: the lowest aligned gap between live allocations that holds `size`.
        let mut start = GLOBAL_BASE;
        for (&a, &(b, _)) in &state.live {
            if a.saturating_sub(start) >= size {
                break;
            }
            start = (a + b)
                .checked_next_multiple_of(ALLOC_ALIGN)
                .ok_or(crate::exec::memory::AllocError::Overflow)?;
        }
        start
            .checked_add(size)
            .ok_or(crate::exec::memory::AllocError::Overflow)?;
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        state.live.insert(start, (size, id));
        let list: Vec<(u64, u64)> = state.live.iter().map(|(&a, &(b, _))| (a, b)).collect();
        if let Err(e) = state.global.set_allocations(list) {
            state.live.remove(&start);
            return Err(e.into());
        }
        // The bytes may have belonged to a freed allocation.
        zero(&state.global, start, size);
        Ok(DeviceBuffer {
            address: start,
            bytes,
            id,
        })
    }

    /// Frees an allocation; its handle (and every copy of it) is dead afterwards.
    pub fn free(&self, buffer: DeviceBuffer) -> Result<(), DeviceError> {
        let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
        state.check_live(buffer)?;
        state.live.remove(&buffer.address);
        let list: Vec<(u64, u64)> = state.live.iter().map(|(&a, &(b, _))| (a, b)).collect();
        // Shrinking never allocates.
        state.global.set_allocations(list)?;
        Ok(())
    }

    /// The live allocations, in address order.
    pub fn buffers(&self) -> Vec<DeviceBuffer> {
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        state
            .live
            .iter()
            .map(|(&address, &(bytes, id))| DeviceBuffer { address, bytes, id })
            .collect()
    }

    /// Copies `data` into the buffer from byte `offset`.
    pub fn write_bytes(
        &self,
        buffer: DeviceBuffer,
        offset: u64,
        data: &[u8],
    ) -> Result<(), DeviceError> {
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        state.check_range(buffer, "a write", offset, data.len() as u64)?;
        state.global.write(buffer.address + offset, data);
        Ok(())
    }

    /// Copies `out.len()` bytes of the buffer from byte `offset` into `out`.
    pub fn read_bytes(
        &self,
        buffer: DeviceBuffer,
        offset: u64,
        out: &mut [u8],
    ) -> Result<(), DeviceError> {
        let state = self.state.read().unwrap_or_else(|e| e.into_inner());
        state.check_range(buffer, "a read", offset, out.len() as u64)?;
        state.global.read(buffer.address + offset, out);
        Ok(())
    }

    /// Writes `data` as the buffer's elements from element `first` on.
    pub fn write<T: Element>(
        &self,
        buffer: DeviceBuffer,
        first: u64,
        data: &[T],
    ) -> Result<(), DeviceError> {
        let size = T::DTYPE.size() as u32;
        let mut bytes = Vec::with_capacity(data.len() * size as usize);
        for v in data {
            bytes.extend_from_slice(&v.to_bits().to_le_bytes()[..size as usize]);
        }
        self.write_bytes(buffer, first.saturating_mul(u64::from(size)), &bytes)
    }

    /// Reads `out.len()` elements of the buffer from element `first` on.
    pub fn read_into<T: Element>(
        &self,
        buffer: DeviceBuffer,
        first: u64,
        out: &mut [T],
    ) -> Result<(), DeviceError> {
        let size = T::DTYPE.size();
        let mut bytes = vec![0u8; out.len() * size];
        self.read_bytes(buffer, first.saturating_mul(size as u64), &mut bytes)?;
        for (v, chunk) in out.iter_mut().zip(bytes.chunks_exact(size)) {
            let mut word = [0u8; 8];
            word[..size].copy_from_slice(chunk);
            *v = T::from_bits(u64::from_le_bytes(word));
        }
        Ok(())
    }

    /// Every element of the buffer (its length must be a whole number of elements).
    pub fn read<T: Element>(&self, buffer: DeviceBuffer) -> Result<Vec<T>, DeviceError> {
        let size = T::DTYPE.size() as u32;
        if buffer.bytes % u64::from(size) != 0 {
            return Err(DeviceError::Ragged {
                bytes: buffer.bytes,
                dtype: T::DTYPE,
            });
        }
        let n = usize::try_from(buffer.bytes / u64::from(size)).map_err(|_| {
            DeviceError::OutOfRange {
                what: "a read",
                offset: 0,
                len: buffer.bytes,
                bytes: buffer.bytes,
            }
        })?;
        let mut out = Vec::new();
        out.try_reserve_exact(n)
            .map_err(|_| crate::exec::memory::AllocError::Refused {
                bytes: buffer.bytes,
            })?;
        out.resize(n, T::from_bits(0));
        self.read_into(buffer, 0, &mut out)?;
        Ok(out)
    }
}

/// Arrays: device buffers filled from and read back into `ndarray` arrays, in logical
/// (C, row-major) order whatever the array's own strides.
impl Device {
    /// A new buffer holding `data`.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<DeviceBuffer, DeviceError> {
        let buffer = self.alloc(data.len() as u64 * T::DTYPE.size() as u64)?;
        self.write(buffer, 0, data)?;
        Ok(buffer)
    }

    /// A new buffer holding `array`'s elements in row-major order.
    pub fn upload_array<T: Element, S: ndarray::Data<Elem = T>, D: ndarray::Dimension>(
        &self,
        array: &ndarray::ArrayBase<S, D>,
    ) -> Result<DeviceBuffer, DeviceError> {
        let data: Vec<T> = array.iter().copied().collect();
        self.upload(&data)
    }

    /// Overwrites the buffer's first elements with `array`'s, in row-major order.
    pub fn write_array<T: Element, S: ndarray::Data<Elem = T>, D: ndarray::Dimension>(
        &self,
        buffer: DeviceBuffer,
        array: &ndarray::ArrayBase<S, D>,
    ) -> Result<(), DeviceError> {
        let data: Vec<T> = array.iter().copied().collect();
        self.write(buffer, 0, &data)
    }

    /// The buffer's first elements as a row-major array of `shape`.
    pub fn read_array<T: Element>(
        &self,
        buffer: DeviceBuffer,
        shape: &[usize],
    ) -> Result<ndarray::ArrayD<T>, DeviceError> {
        let n = shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
        let len = n
            .and_then(|n| n.checked_mul(T::DTYPE.size()))
            .map_or(u64::MAX, |b| b as u64);
        if len > buffer.bytes || n.is_none() {
            return Err(DeviceError::OutOfRange {
                what: "a read",
                offset: 0,
                len,
                bytes: buffer.bytes,
            });
        }
        let n = n.unwrap_or(0);
        let mut data = Vec::new();
        data.try_reserve_exact(n)
            .map_err(|_| crate::exec::memory::AllocError::Refused { bytes: len })?;
        data.resize(n, T::from_bits(0));
        self.read_into(buffer, 0, &mut data)?;
        Ok(ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(shape), data)
            .expect("the length is the shape's product"))
    }
}

impl State {
    fn check_live(&self, buffer: DeviceBuffer) -> Result<(), DeviceError> {
        match self.live.get(&buffer.address) {
            Some(&(bytes, id)) if bytes == buffer.bytes.max(1) && id == buffer.id => Ok(()),
            _ => Err(DeviceError::NotLive {
                address: buffer.address,
                bytes: buffer.bytes,
            }),
        }
    }

    fn check_range(
        &self,
        buffer: DeviceBuffer,
        what: &'static str,
        offset: u64,
        len: u64,
    ) -> Result<(), DeviceError> {
        self.check_live(buffer)?;
        if offset.checked_add(len).is_none_or(|end| end > buffer.bytes) {
            return Err(DeviceError::OutOfRange {
                what,
                offset,
                len,
                bytes: buffer.bytes,
            });
        }
        Ok(())
    }
}

/// Zeroes `[address, address + bytes)` of the arena, a megabyte at a time.
fn zero(global: &GlobalMemory, address: u64, bytes: u64) {
    const STEP: u64 = 1 << 20;
    let zeros = vec![0u8; STEP.min(bytes) as usize];
    let mut done = 0;
    while done < bytes {
        let n = STEP.min(bytes - done);
        global.write(address + done, &zeros[..n as usize]);
        done += n;
    }
}

/// The arena held shared (see [`Device::global`]): launches and tile operations run while it
/// lives; allocating and freeing wait for it.
pub struct GlobalGuard<'d>(RwLockReadGuard<'d, State>);

impl GlobalGuard<'_> {
    /// The arena.
    pub fn memory(&self) -> &GlobalMemory {
        &self.0.global
    }

    /// The first byte of a live buffer in host memory and its length, for code that works on
    /// it in place (tile operations). The pointer stays valid while the guard lives.
    pub fn host_range(&self, buffer: DeviceBuffer) -> Result<(*mut u8, u64), DeviceError> {
        self.0.check_live(buffer)?;
        let offset = (buffer.address - GLOBAL_BASE) as usize;
        // SAFETY: the buffer is live, so `[offset, offset + bytes)` lies inside the arena
        // (`set_allocations` made the region end at or after every live allocation); the
        // arena's base pointer is valid for its whole length.
        let ptr = unsafe { self.0.global.region().as_ptr().add(offset) };
        Ok((ptr, buffer.bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allocations_are_aligned_zeroed_and_reused_first_fit() {
        let d = Device::new();
        let a = d.alloc(10).unwrap();
        let b = d.alloc(300).unwrap();
        assert_eq!(a.address(), GLOBAL_BASE);
        assert_eq!(b.address(), GLOBAL_BASE + ALLOC_ALIGN);
        d.write(a, 0, &[7u8; 10]).unwrap();
        d.free(a).unwrap();
        // The gap below `b` is reused, and comes back zeroed.
        let c = d.alloc(4).unwrap();
        assert_eq!(c.address(), GLOBAL_BASE);
        assert_eq!(d.read::<u8>(c).unwrap(), vec![0; 4]);
        // Too big for the gap: after `b`.
        let e = d.alloc(ALLOC_ALIGN + 1).unwrap();
        assert_eq!(e.address(), GLOBAL_BASE + 3 * ALLOC_ALIGN);
    }

    #[test]
    fn the_arena_grows_without_moving_device_addresses_or_losing_data() {
        let d = Device::new();
        let a = d.alloc(4 * 1000).unwrap();
        let data: Vec<u32> = (0..1000).collect();
        d.write(a, 0, &data).unwrap();
        let mut more = Vec::new();
        for i in 0..20u64 {
            let b = d.alloc(1 << (i % 16)).unwrap();
            d.write(b, 0, &[i as u8]).unwrap();
            more.push((b, i as u8));
        }
        assert_eq!(d.read::<u32>(a).unwrap(), data);
        for (b, v) in more {
            assert_eq!(d.read::<u8>(b).unwrap()[0], v);
        }
    }

    #[test]
    fn the_arena_ends_after_the_highest_live_allocation() {
        let d = Device::new();
        let a = d.alloc(16).unwrap();
        let b = d.alloc(16).unwrap();
        assert!(d.global().memory().check(b.address(), 4).is_ok());
        d.free(b).unwrap();
        assert!(d.global().memory().check(b.address(), 4).is_err());
        assert!(d.global().memory().check(a.address() + 12, 4).is_ok());
        assert!(d.global().memory().check(a.address() + 16, 4).is_err());
    }

    #[test]
    fn dead_and_out_of_range_accesses_are_errors() {
        let d = Device::new();
        let a = d.alloc(8).unwrap();
        let e = d.write(a, 1, &[0u32, 0]).unwrap_err();
        assert!(
            matches!(
                e,
                DeviceError::OutOfRange {
                    offset: 4,
                    len: 8,
                    bytes: 8,
                    ..
                }
            ),
            "{e}"
        );
        assert!(d.read::<u32>(a).is_ok());
        let e = d.read::<u32>(DeviceBuffer { bytes: 12, ..a }).unwrap_err();
        assert!(matches!(e, DeviceError::NotLive { .. }), "{e}");
        d.free(a).unwrap();
        assert!(matches!(d.free(a), Err(DeviceError::NotLive { .. })));
        assert!(matches!(d.read::<u8>(a), Err(DeviceError::NotLive { .. })));
        let b = d.alloc(12).unwrap();
        assert!(matches!(
            d.read::<u64>(b),
            Err(DeviceError::Ragged { bytes: 12, .. })
        ));
    }

    #[test]
    fn a_freed_handle_stays_dead_when_its_address_is_reused() {
        let d = Device::new();
        let a = d.alloc(16).unwrap();
        d.free(a).unwrap();
        let b = d.alloc(16).unwrap();
        assert_eq!(a.address(), b.address());
        assert!(matches!(d.read::<u8>(a), Err(DeviceError::NotLive { .. })));
        assert!(d.read::<u8>(b).is_ok());
        // Another device's handle at the same address and size.
        let other = Device::new().alloc(16).unwrap();
        assert_eq!(other.address(), b.address());
        assert!(matches!(
            d.read::<u8>(other),
            Err(DeviceError::NotLive { .. })
        ));
        // Impossible array reads are errors, not aborts.
        assert!(d.read_array::<u64>(b, &[1 << 61]).is_err());
        assert!(d.read_array::<u8>(b, &[1 << 40]).is_err());
    }

    #[test]
    fn arrays_go_in_and_come_back_in_row_major_order() {
        let d = Device::new();
        let a = ndarray::Array2::from_shape_fn((3, 4), |(i, j)| (10 * i + j) as i32);
        // A transposed view uploads in its own logical order.
        let t = d.upload_array(&a.t()).unwrap();
        let back = d.read_array::<i32>(t, &[4, 3]).unwrap();
        assert_eq!(back, a.t().into_dyn());
        assert_eq!(d.read::<i32>(t).unwrap()[..4], [0, 10, 20, 1]);
        let e = d.read_array::<i32>(t, &[5, 3]).unwrap_err();
        assert!(
            matches!(
                e,
                DeviceError::OutOfRange {
                    len: 60,
                    bytes: 48,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn elements_round_trip_with_sign_and_float_bits() {
        let d = Device::new();
        let a = d.alloc(64).unwrap();
        d.write(a, 0, &[-1i16, 2, -3]).unwrap();
        assert_eq!(d.read::<i16>(a).unwrap()[..3], [-1, 2, -3]);
        assert_eq!(d.read::<u16>(a).unwrap()[0], 0xffff);
        let nan = f32::from_bits(0x7fc0_0123);
        d.write(a, 0, &[nan, -0.0f32]).unwrap();
        let back = d.read::<f32>(a).unwrap();
        assert_eq!(back[0].to_bits(), 0x7fc0_0123);
        assert_eq!(back[1].to_bits(), 0x8000_0000);
    }
}
