//! Device memory: the global arena and per-CTA shared windows.
//!
//! Both are arrays of `AtomicU64` words, so every access a program makes, plain or atomic, is a
//! host atomic access of the right width (`AtomicU8`..`AtomicU64` viewed at a checked, naturally
//! aligned offset). Plain loads and stores use `Relaxed` order, which on x86-64 and AArch64 is an
//! ordinary `mov`/`ldr`/`str`: this costs nothing and keeps racy GPU programs free of Rust
//! undefined behaviour. Read-modify-writes use `SeqCst` host atomics (see `docs/memory-model.md`).
//!
//! Every address is checked before the host touches memory: natural alignment first, then range
//! (a misaligned access that is also out of range reports "misaligned address").

use super::TrapReason;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// Device address of the first byte of the global arena. Address 0 (a null pointer) and anything
/// below this are out of range.
pub const GLOBAL_BASE: u64 = 0x0000_7f00_0000_0000;
/// The shared-memory window every shared address must fall in (`000_6d05a8552870c0ae.txt`:
/// "The address must be within the 16 MB shared memory window").
pub const SHARED_WINDOW_BYTES: u32 = 16 << 20;
/// Alignment of each global allocation.
pub const ALLOC_ALIGN: u64 = 256;

/// Where a CTA's shared window appears in the PTX *generic* address space: the generic address
/// of shared offset `o` is `GENERIC_SHARED_BASE + o` (PTX `cvta.shared` adds this constant,
/// `cvta.to.shared` subtracts it). It lies below [`GLOBAL_BASE`], and the window of
/// [`SHARED_WINDOW_BYTES`] ends far below it, so the two windows never overlap. Global
/// addresses are their own generic addresses (`cvta.global` and `cvta.to.global` are the
/// identity). This is the one definition every front-end and backend uses
/// (`docs/memory-model.md`, "Generic addresses").
pub const GENERIC_SHARED_BASE: u64 = 0x0000_7e00_0000_0000;

/// The space and in-space address a generic address refers to: an address at or above
/// [`GLOBAL_BASE`] is that global address; an address inside
/// `GENERIC_SHARED_BASE .. GENERIC_SHARED_BASE + SHARED_WINDOW_BYTES` is the shared offset
/// `address - GENERIC_SHARED_BASE`; anything else is in neither window (`None`, an
/// out-of-range access).
pub fn resolve_generic(address: u64) -> Option<(crate::ir::Space, u64)> {
    if address >= GLOBAL_BASE {
        Some((crate::ir::Space::Global, address))
    } else if (GENERIC_SHARED_BASE..GENERIC_SHARED_BASE + SHARED_WINDOW_BYTES as u64)
        .contains(&address)
    {
        Some((crate::ir::Space::Shared, address - GENERIC_SHARED_BASE))
    } else {
        None
    }
}

/// A zero-initialised, 8-byte-aligned byte region accessed only through host atomics.
#[derive(Debug)]
pub struct Region {
    words: Box<[AtomicU64]>,
    len: u64,
}

impl Region {
    /// A zeroed region of `len` bytes.
    pub fn new(len: u64) -> Region {
        let words = (0..len.div_ceil(8)).map(|_| AtomicU64::new(0)).collect();
        Region { words, len }
    }

    /// Length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first byte, for generated code that indexes the region itself after its own checks.
    pub fn as_ptr(&self) -> *mut u8 {
        self.words.as_ptr() as *mut u8
    }

    /// Checks that `[offset, offset + size)` is naturally aligned (first) and inside the region.
    /// `size` is 1, 2, 4 or 8.
    #[inline]
    pub fn check(&self, offset: u64, size: u32) -> Result<usize, TrapReason> {
        if offset & (size as u64 - 1) != 0 {
            return Err(TrapReason::MisalignedAddress);
        }
        match offset.checked_add(size as u64) {
            Some(end) if end <= self.len => Ok(offset as usize),
            _ => Err(TrapReason::AddressOutOfRange),
        }
    }

    /// The 32-bit word at a checked offset (see [`Region::check`]).
    #[inline]
    pub fn atomic_u32(&self, offset: usize) -> &AtomicU32 {
        debug_assert!(offset % 4 == 0 && offset as u64 + 4 <= self.len);
        // SAFETY: `offset` was returned by `check(_, 4)`: 4-byte aligned and in bounds of the
        // allocation, which is 8-byte aligned and lives as long as `self`. Every access to this
        // memory goes through atomics, so mixed-size atomic views never race non-atomically.
        unsafe { AtomicU32::from_ptr(self.as_ptr().add(offset) as *mut u32) }
    }

    /// The 64-bit word at a checked offset.
    #[inline]
    pub fn atomic_u64(&self, offset: usize) -> &AtomicU64 {
        debug_assert!(offset % 8 == 0 && offset as u64 + 8 <= self.len);
        &self.words[offset / 8]
    }

    /// The 16-bit half-word at a checked offset.
    #[inline]
    pub fn atomic_u16(&self, offset: usize) -> &AtomicU16 {
        debug_assert!(offset % 2 == 0 && offset as u64 + 2 <= self.len);
        // SAFETY: as in `atomic_u32`, for a 2-byte-aligned in-bounds offset.
        unsafe { AtomicU16::from_ptr(self.as_ptr().add(offset) as *mut u16) }
    }

    /// The byte at a checked offset.
    #[inline]
    pub fn atomic_u8(&self, offset: usize) -> &AtomicU8 {
        debug_assert!((offset as u64) < self.len);
        // SAFETY: as in `atomic_u32`, for an in-bounds offset.
        unsafe { AtomicU8::from_ptr(self.as_ptr().add(offset)) }
    }

    /// Relaxed load of `size` bytes (1, 2, 4, 8) at a checked offset, zero-extended.
    #[inline]
    pub fn load(&self, offset: usize, size: u32) -> u64 {
        match size {
            1 => self.atomic_u8(offset).load(Ordering::Relaxed) as u64,
            2 => self.atomic_u16(offset).load(Ordering::Relaxed) as u64,
            4 => self.atomic_u32(offset).load(Ordering::Relaxed) as u64,
            _ => self.atomic_u64(offset).load(Ordering::Relaxed),
        }
    }

    /// Relaxed store of the low `size` bytes of `value` at a checked offset.
    #[inline]
    pub fn store(&self, offset: usize, size: u32, value: u64) {
        match size {
            1 => self.atomic_u8(offset).store(value as u8, Ordering::Relaxed),
            2 => self
                .atomic_u16(offset)
                .store(value as u16, Ordering::Relaxed),
            4 => self
                .atomic_u32(offset)
                .store(value as u32, Ordering::Relaxed),
            _ => self.atomic_u64(offset).store(value, Ordering::Relaxed),
        }
    }

    /// Copies `out.len()` bytes starting at `offset` (unchecked for alignment; panics if out
    /// of range, so callers check against [`Region::len`]).
    pub fn read_bytes(&self, offset: u64, out: &mut [u8]) {
        assert!(
            offset + out.len() as u64 <= self.len,
            "read_bytes out of range"
        );
        for (i, b) in out.iter_mut().enumerate() {
            *b = self.atomic_u8(offset as usize + i).load(Ordering::Relaxed);
        }
    }

    /// Writes `data` starting at `offset` (panics if out of range).
    pub fn write_bytes(&self, offset: u64, data: &[u8]) {
        assert!(
            offset + data.len() as u64 <= self.len,
            "write_bytes out of range"
        );
        for (i, b) in data.iter().enumerate() {
            self.atomic_u8(offset as usize + i)
                .store(*b, Ordering::Relaxed);
        }
    }

    /// Sets every byte to zero.
    pub fn clear(&self) {
        for w in self.words.iter() {
            w.store(0, Ordering::Relaxed);
        }
    }
}

/// Global memory: one arena holding every buffer of a launch. Device address `a` is arena
/// offset `a - GLOBAL_BASE`. The arena ends right after the last allocation, so an access past
/// the last buffer traps; gaps between allocations (padding to [`ALLOC_ALIGN`]) are inside the
/// arena and do not.
#[derive(Debug)]
pub struct GlobalMemory {
    region: Region,
    allocations: Vec<(u64, u64)>,
}

impl GlobalMemory {
    /// An arena holding one zeroed allocation per entry of `sizes` (bytes); returns the device
    /// address of each.
    pub fn with_allocations(sizes: &[u64]) -> (GlobalMemory, Vec<u64>) {
        let mut offsets = Vec::with_capacity(sizes.len());
        let mut end = 0u64;
        for &size in sizes {
            let start = end.next_multiple_of(ALLOC_ALIGN);
            offsets.push(start);
            end = start + size;
        }
        let region = Region::new(end);
        let allocations = offsets
            .iter()
            .zip(sizes)
            .map(|(&o, &s)| (GLOBAL_BASE + o, s))
            .collect();
        (
            GlobalMemory {
                region,
                allocations,
            },
            offsets.iter().map(|o| GLOBAL_BASE + o).collect(),
        )
    }

    /// The allocations as `(device address, size in bytes)`.
    pub fn allocations(&self) -> &[(u64, u64)] {
        &self.allocations
    }

    /// The arena.
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// Checks a device address for an access of `size` bytes and returns its arena offset.
    #[inline]
    pub fn check(&self, addr: u64, size: u32) -> Result<usize, TrapReason> {
        if addr & (size as u64 - 1) != 0 {
            return Err(TrapReason::MisalignedAddress);
        }
        self.region.check(addr.wrapping_sub(GLOBAL_BASE), size)
    }

    /// Copies bytes out of device memory at `addr` (panics if outside the arena).
    pub fn read(&self, addr: u64, out: &mut [u8]) {
        self.region.read_bytes(addr - GLOBAL_BASE, out)
    }

    /// Copies bytes into device memory at `addr` (panics if outside the arena).
    pub fn write(&self, addr: u64, data: &[u8]) {
        self.region.write_bytes(addr - GLOBAL_BASE, data)
    }
}

/// One CTA's shared-memory window: addresses are byte offsets `0..len`.
///
/// The window is private to the host thread that runs its CTA, and the type enforces it: it is
/// `Send` (a CTA may be created on one thread and run on another) but not `Sync`, so no two
/// threads can hold references to it at once. The JIT relies on this: its shared-memory atomics
/// are plain read-modify-writes (`docs/memory-model.md`, "Shared-memory atomics are
/// CTA-private"). A future feature that lets other CTAs reach a window (distributed shared
/// memory of a cluster) must give those accesses host atomics instead.
///
/// ```compile_fail
/// fn shared_between_threads<T: Sync>() {}
/// shared_between_threads::<atomjit::exec::SharedMemory>();
/// ```
#[derive(Debug)]
pub struct SharedMemory {
    region: Region,
    _one_thread: std::marker::PhantomData<std::cell::Cell<()>>,
}

impl SharedMemory {
    /// A zeroed window of `bytes` bytes (at most [`SHARED_WINDOW_BYTES`]; the launch checks).
    pub fn new(bytes: u32) -> SharedMemory {
        SharedMemory {
            _one_thread: std::marker::PhantomData,
            region: Region::new(bytes as u64),
        }
    }

    pub fn region(&self) -> &Region {
        &self.region
    }

    /// Checks a shared address for an access of `size` bytes: alignment first, then the window
    /// and the CTA's allocated size.
    #[inline]
    pub fn check(&self, addr: u64, size: u32) -> Result<usize, TrapReason> {
        self.region.check(addr, size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alignment_is_checked_before_range() {
        let r = Region::new(16);
        assert_eq!(r.check(0, 4), Ok(0));
        assert_eq!(r.check(12, 4), Ok(12));
        assert_eq!(r.check(16, 4), Err(TrapReason::AddressOutOfRange));
        assert_eq!(r.check(2, 4), Err(TrapReason::MisalignedAddress));
        assert_eq!(r.check(18, 4), Err(TrapReason::MisalignedAddress));
        assert_eq!(r.check(u64::MAX - 3, 4), Err(TrapReason::AddressOutOfRange));
        assert_eq!(r.check(8, 8), Ok(8));
        assert_eq!(r.check(4, 8), Err(TrapReason::MisalignedAddress));
    }

    #[test]
    fn global_addresses_are_offset_from_base() {
        let (g, addrs) = GlobalMemory::with_allocations(&[12, 4]);
        assert_eq!(addrs, vec![GLOBAL_BASE, GLOBAL_BASE + 256]);
        assert_eq!(g.check(GLOBAL_BASE + 256, 4), Ok(256));
        assert_eq!(
            g.check(GLOBAL_BASE + 260, 4),
            Err(TrapReason::AddressOutOfRange)
        );
        assert_eq!(g.check(0, 4), Err(TrapReason::AddressOutOfRange));
        g.write(GLOBAL_BASE + 4, &[1, 2, 3, 4]);
        assert_eq!(g.region().load(4, 4), 0x0403_0201, "little-endian");
    }
}
