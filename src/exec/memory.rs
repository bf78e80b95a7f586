//! Device memory: the global arena and per-CTA shared windows.
//!
//! Both are arrays of 16-byte-aligned pairs of `AtomicU64` words, so every access a program
//! makes, plain or atomic, is a host atomic access of the right width (`AtomicU8`..`AtomicU64`
//! viewed at a checked, naturally aligned offset, and the 16-byte compare-and-swap of
//! [`Region::cas128`]). Plain loads and stores use `Relaxed` order, which on x86-64 and AArch64
//! is an ordinary `mov`/`ldr`/`str`: this costs nothing and keeps racy GPU programs free of Rust
//! undefined behaviour. Read-modify-writes use `SeqCst` host atomics (see
//! `docs/memory-model.md`).
//!
//! Every address is checked before the host touches memory: natural alignment first, then range
//! (a misaligned access that is also out of range reports "misaligned address"). A vector access
//! is checked as a whole (aligned to its full size) before any element is touched.
//!
//! After a launch's last run the arena is frozen ([`GlobalMemory::freeze`]): the buffers a run
//! reports view its bytes instead of copying them, so a launch needs host memory for its
//! buffers once, not twice.

use super::TrapReason;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// The address model (where the global arena and the generic shared window sit) is the IR's:
/// `src/ir/access.rs` ([`crate::ir::resolve`]); the shared window is a launch limit
/// ([`crate::ir::limits`]). Re-exported here for the memory's users.
pub use crate::ir::{GENERIC_SHARED_BASE, GLOBAL_BASE, SHARED_WINDOW_BYTES};
/// Alignment of each global allocation.
pub const ALLOC_ALIGN: u64 = 256;

/// A zero-initialised, 16-byte-aligned byte region accessed only through host atomics.
#[derive(Debug)]
pub struct Region {
    chunks: Box<[Chunk]>,
    len: u64,
}

/// Sixteen bytes of a [`Region`]: the unit of its allocation, aligned so that a checked
/// 16-byte offset is a valid operand of the host's 16-byte compare-and-swap.
#[derive(Debug, Default)]
#[repr(C, align(16))]
struct Chunk([AtomicU64; 2]);

/// Whether the host has a 16-byte compare-and-swap (x86-64 `cmpxchg16b`), which the 128-bit
/// atomics ([`crate::ir::Ty::B128`]) need: validation refuses them on a host without it.
pub fn has_cas128() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("cmpxchg16b")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Device memory the host could not provide.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AllocError {
    /// More than the host can provide: with whatever else the request allocates at the same
    /// time (the old arena while a growing one is filled, the copies of surfaces a run reads
    /// back), `needed` bytes, more than the memory available to this process (`MemAvailable`,
    /// or the cgroup's limit less its usage, whichever is smaller). Such a request could only
    /// end in the out-of-memory killer once the program touched it.
    #[error("cannot allocate {bytes} bytes of device memory: it needs {needed} bytes of host memory, and {available} bytes are available")]
    MoreThanAvailable {
        bytes: u64,
        needed: u64,
        available: u64,
    },
    /// The sizes add up to more than the device address space.
    #[error("cannot allocate device memory: the buffers add up to more than 2^64 bytes")]
    Overflow,
    /// The host allocator refused.
    #[error("cannot allocate {bytes} bytes of device memory: the host allocator refused")]
    Refused { bytes: u64 },
}

/// The memory this process can still get, in bytes, if known: `MemAvailable` of
/// `/proc/meminfo`, or less when a cgroup limits the process (v2 `memory.max` less
/// `memory.current`, v1 `memory.limit_in_bytes` less `memory.usage_in_bytes`, the usage without
/// its inactive page cache). Only the cgroup mounted at `/sys/fs/cgroup` is read (the process's
/// own in a container).
pub fn available_memory() -> Option<u64> {
    let read =
        |path: &str| -> Option<u64> { std::fs::read_to_string(path).ok()?.trim().parse().ok() };
    let meminfo = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        });
    // A cgroup's usage counts its page cache, which the kernel reclaims before refusing
    // anyone: the inactive file pages are subtracted (as container tools do).
    let stat = |path: &str, key: &str| -> Option<u64> {
        let text = std::fs::read_to_string(path).ok()?;
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(key))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    let cgroup = [
        (
            "/sys/fs/cgroup/memory.max",
            "/sys/fs/cgroup/memory.current",
            "/sys/fs/cgroup/memory.stat",
            "inactive_file",
        ),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
            "/sys/fs/cgroup/memory/memory.stat",
            "total_inactive_file",
        ),
    ]
    .iter()
    .find_map(|(limit, usage, stats, inactive)| {
        let used = read(usage)
            .unwrap_or(0)
            .saturating_sub(stat(stats, inactive).unwrap_or(0));
        Some(read(limit)?.saturating_sub(used))
    });
    match (meminfo, cgroup) {
        (Some(m), Some(c)) => Some(m.min(c)),
        (m, c) => m.or(c),
    }
}
impl Region {
    /// A zeroed region of `len` bytes. Panics if the host cannot allocate it: for tests and
    /// small fixed sizes; device memory a program asks for goes through [`Region::try_new`].
    pub fn new(len: u64) -> Region {
        Region::try_new(len).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A zeroed region of `len` bytes, or why the host cannot provide it. The memory comes
    /// zeroed from the allocator (fresh pages cost nothing until the program touches them).
    pub fn try_new(len: u64) -> Result<Region, AllocError> {
        Region::guard(len, len)?;
        Region::try_zeroed(len)
    }

    /// Refuses `len` bytes of device memory when the host cannot hold `needed` bytes (the
    /// region and whatever else is allocated with it). Below 64 MiB the question is not asked
    /// (it reads `/proc` and the cgroup files each time).
    fn guard(len: u64, needed: u64) -> Result<(), AllocError> {
        if needed < 1 << 26 {
            return Ok(());
        }
        if let Some(available) = available_memory() {
            if needed > available {
                return Err(AllocError::MoreThanAvailable {
                    bytes: len,
                    needed,
                    available,
                });
            }
        }
        Ok(())
    }

    /// A zeroed region of `len` bytes, or [`AllocError::Refused`] when the host allocator
    /// refuses (no availability guard: for memory that is not read back, such as a CTA's
    /// shared window).
    pub fn try_zeroed(len: u64) -> Result<Region, AllocError> {
        let n =
            usize::try_from(len.div_ceil(16)).map_err(|_| AllocError::Refused { bytes: len })?;
        if n == 0 {
            return Ok(Region {
                chunks: Box::new([]),
                len,
            });
        }
        let layout = std::alloc::Layout::array::<Chunk>(n)
            .map_err(|_| AllocError::Refused { bytes: len })?;
        // SAFETY: `layout` has a nonzero size (n > 0) and `Chunk`'s alignment.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) } as *mut Chunk;
        if ptr.is_null() {
            return Err(AllocError::Refused { bytes: len });
        }
        // SAFETY: `ptr` is a fresh allocation from the global allocator with the layout of
        // `[Chunk; n]`, and all-zero bytes are a valid `Chunk` (two `AtomicU64` zeros); the box
        // takes ownership and frees it with the same layout.
        let chunks = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, n)) };
        Ok(Region { chunks, len })
    }

    /// Length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Bytes allocated: at least [`Region::len`]; the rest is room to grow into.
    pub fn capacity(&self) -> u64 {
        self.chunks.len() as u64 * 16
    }

    /// Makes the region `len` bytes long, growing its allocation when `len` is more than its
    /// capacity (to at least twice the old capacity, so that a run of growing allocations
    /// copies each byte a bounded number of times). The first `min(old, new)` bytes keep their
    /// values; bytes newly exposed hold what they last held (zero if never written), so a
    /// caller that hands them out zeroes them. Needs `&mut self`: no access is in flight.
    pub fn resize(&mut self, len: u64) -> Result<(), AllocError> {
        if len > self.capacity() {
            let capacity = len.max(self.capacity().saturating_mul(2));
            // The old allocation lives until its bytes are copied into the new one.
            Region::guard(len, len.saturating_add(self.capacity()))?;
            let mut grown = Region::try_zeroed(capacity).or_else(|_| Region::try_zeroed(len))?;
            for (to, from) in grown.chunks.iter_mut().zip(self.chunks.iter_mut()) {
                for (t, f) in to.0.iter_mut().zip(from.0.iter_mut()) {
                    *t.get_mut() = *f.get_mut();
                }
            }
            grown.len = len;
            *self = grown;
        } else {
            self.len = len;
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first byte (16-byte aligned), for generated code that indexes the region itself
    /// after its own checks.
    pub fn as_ptr(&self) -> *mut u8 {
        self.chunks.as_ptr() as *mut u8
    }

    /// Checks that `[offset, offset + size)` is naturally aligned (first) and inside the region.
    /// `size` is 1, 2, 4, 8 or 16 (a whole vector access).
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
        &self.chunks[offset / 16].0[offset / 8 % 2]
    }

    /// One indivisible 16-byte compare-and-swap at a checked 16-byte offset (`SeqCst`): if the
    /// 16 bytes (little-endian) equal `current`, they become `new`. Returns the value they
    /// held. A failed compare writes nothing observable (the host instruction stores the value
    /// it read back, atomically).
    ///
    /// On a host without a 16-byte compare-and-swap ([`has_cas128`] false, where validation
    /// refuses the 128-bit atomics, so only code that bypassed it gets here) the operation is
    /// serialised by a process-wide lock instead: indivisible with respect to other 128-bit
    /// atomics only.
    pub fn cas128(&self, offset: usize, current: u128, new: u128) -> u128 {
        debug_assert!(offset % 16 == 0 && offset as u64 + 16 <= self.len);
        let chunk = &self.chunks[offset / 16];
        #[cfg(target_arch = "x86_64")]
        if has_cas128() {
            // SAFETY: the feature is present (checked just above); the chunk is 16-byte
            // aligned, lives as long as `self`, and is only ever accessed through atomics.
            return unsafe { cmpxchg16b(chunk as *const Chunk as *mut u128, current, new) };
        }
        static FALLBACK: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _serialised = FALLBACK.lock().unwrap_or_else(|e| e.into_inner());
        let [lo, hi] = &chunk.0;
        let old =
            u128::from(lo.load(Ordering::SeqCst)) | u128::from(hi.load(Ordering::SeqCst)) << 64;
        if old == current {
            lo.store(new as u64, Ordering::SeqCst);
            hi.store((new >> 64) as u64, Ordering::SeqCst);
        }
        old
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

    /// Relaxed load of `size` bytes (1, 2, 4, 8: one element) at a checked offset,
    /// zero-extended.
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
            offset
                .checked_add(out.len() as u64)
                .is_some_and(|end| end <= self.len),
            "read_bytes out of range"
        );
        // Whole aligned words with one load each, the ragged ends byte by byte.
        let mut i = 0;
        while i < out.len() {
            let at = offset as usize + i;
            if at % 8 == 0 && out.len() - i >= 8 {
                let word = self.atomic_u64(at).load(Ordering::Relaxed);
                out[i..i + 8].copy_from_slice(&word.to_ne_bytes());
                i += 8;
            } else {
                out[i] = self.atomic_u8(at).load(Ordering::Relaxed);
                i += 1;
            }
        }
    }

    /// Writes `data` starting at `offset` (panics if out of range).
    pub fn write_bytes(&self, offset: u64, data: &[u8]) {
        assert!(
            offset
                .checked_add(data.len() as u64)
                .is_some_and(|end| end <= self.len),
            "write_bytes out of range"
        );
        let mut i = 0;
        while i < data.len() {
            let at = offset as usize + i;
            if at % 8 == 0 && data.len() - i >= 8 {
                let word = u64::from_ne_bytes(data[i..i + 8].try_into().expect("8 bytes"));
                self.atomic_u64(at).store(word, Ordering::Relaxed);
                i += 8;
            } else {
                self.atomic_u8(at).store(data[i], Ordering::Relaxed);
                i += 1;
            }
        }
    }

    /// Sets every byte to zero. Exclusive access makes these plain stores of zeroed chunks,
    /// which the compiler turns into one `memset` (relaxed atomic stores through `&self` stay
    /// one 8-byte store each: resetting a vISA CTA's 32 KiB register window that way was a
    /// tenth of `visa_hist`).
    pub fn clear(&mut self) {
        self.chunks.fill_with(Chunk::default);
    }
}

/// The host's 16-byte compare-and-swap (`lock cmpxchg16b`), sequentially consistent (a locked
/// instruction), returning the value the 16 bytes held. Written in assembly: the standard
/// library's `cmpxchg16b` intrinsic becomes a call of `__atomic_compare_exchange_16` (which
/// the host C library does not provide) unless the whole crate is built for the feature.
///
/// # Safety
/// The host has `cmpxchg16b` ([`has_cas128`]); `ptr` is 16-byte aligned, valid for reads and
/// writes of 16 bytes, and accessed by other threads only through atomics.
#[cfg(target_arch = "x86_64")]
unsafe fn cmpxchg16b(ptr: *mut u128, current: u128, new: u128) -> u128 {
    let (mut lo, mut hi) = (current as u64, (current >> 64) as u64);
    // SAFETY: per this function's contract. `rbx` cannot be an operand, so the new low word
    // comes in `rsi` and is swapped into `rbx` around the instruction (and `rbx` restored);
    // `rdx:rax` is the expected value and receives the old one, `rcx:rbx` is the new value.
    // Every operand has a fixed register: with `in(reg)` the register allocator may give the
    // pointer `rbx` itself (it did in a release build), which the swap would destroy. The
    // instruction touches no stack.
    unsafe {
        std::arch::asm!(
            "xchg rsi, rbx",
            "lock cmpxchg16b xmmword ptr [rdi]",
            "mov rbx, rsi",
            in("rdi") ptr,
            inout("rsi") new as u64 => _,
            in("rcx") (new >> 64) as u64,
            inout("rax") lo,
            inout("rdx") hi,
            options(nostack),
        );
    }
    u128::from(lo) | u128::from(hi) << 64
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
    ///
    /// Panics if the host cannot provide the memory (for tests); programs' buffers go through
    /// [`GlobalMemory::try_with_allocations`].
    pub fn with_allocations(sizes: &[u64]) -> (GlobalMemory, Vec<u64>) {
        GlobalMemory::try_with_allocations(sizes).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`GlobalMemory::with_allocations`], or why the host cannot provide the memory.
    pub fn try_with_allocations(sizes: &[u64]) -> Result<(GlobalMemory, Vec<u64>), AllocError> {
        GlobalMemory::try_with_allocations_and(sizes, 0)
    }

    /// [`GlobalMemory::try_with_allocations`] for a launch that will also allocate `extra`
    /// bytes of host memory while the arena lives (the copies it reads back): the
    /// availability guard counts both.
    pub fn try_with_allocations_and(
        sizes: &[u64],
        extra: u64,
    ) -> Result<(GlobalMemory, Vec<u64>), AllocError> {
        let mut offsets = Vec::with_capacity(sizes.len());
        let mut end = 0u64;
        for &size in sizes {
            let start = end
                .checked_next_multiple_of(ALLOC_ALIGN)
                .ok_or(AllocError::Overflow)?;
            offsets.push(start);
            end = start.checked_add(size).ok_or(AllocError::Overflow)?;
        }
        // The arena's last address must stay below 2^64 too.
        end.checked_add(GLOBAL_BASE).ok_or(AllocError::Overflow)?;
        Region::guard(end, end.saturating_add(extra))?;
        let region = Region::try_zeroed(end)?;
        let allocations = offsets
            .iter()
            .zip(sizes)
            .map(|(&o, &s)| (GLOBAL_BASE + o, s))
            .collect();
        Ok((
            GlobalMemory {
                region,
                allocations,
            },
            offsets.iter().map(|o| GLOBAL_BASE + o).collect(),
        ))
    }

    /// The allocations as `(device address, size in bytes)`.
    pub fn allocations(&self) -> &[(u64, u64)] {
        &self.allocations
    }

    /// An arena without allocations, for device memory that outlives launches (the engine's
    /// [`crate::engine::Device`]): allocations come and go with
    /// [`GlobalMemory::set_allocations`].
    pub fn empty() -> GlobalMemory {
        GlobalMemory {
            region: Region::new(0),
            allocations: Vec::new(),
        }
    }

    /// Replaces the allocation list (`(device address, bytes)`, each inside the device address
    /// space from [`GLOBAL_BASE`]) and makes the arena end right after the highest of them, so
    /// that an access past the last live allocation traps. Growing may move the arena (device
    /// addresses stay); bytes of a new allocation are not cleared here.
    pub fn set_allocations(&mut self, allocations: Vec<(u64, u64)>) -> Result<(), AllocError> {
        let end = allocations
            .iter()
            .map(|&(a, b)| a.checked_add(b).ok_or(AllocError::Overflow))
            .try_fold(GLOBAL_BASE, |m, e| e.map(|e| m.max(e)))?;
        self.region.resize(end - GLOBAL_BASE)?;
        self.allocations = allocations;
        Ok(())
    }

    /// The arena.
    pub fn region(&self) -> &Region {
        &self.region
    }

    /// Ends the arena's life as device memory: what it holds becomes read-only bytes that
    /// buffers read back from a finished launch can share instead of copying
    /// ([`crate::engine::Buffer`]).
    pub fn freeze(self) -> FrozenMemory {
        FrozenMemory {
            region: self.region,
        }
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

    /// Stores the low `size` bytes (1, 2, 4 or 8) of `value` at `addr` (panics if `addr` is
    /// misaligned or outside the arena: a host-side bug, never a program's fault).
    pub fn write_element(&self, addr: u64, size: u32, value: u64) {
        let offset = addr
            .checked_sub(GLOBAL_BASE)
            .and_then(|o| self.region.check(o, size).ok())
            .unwrap_or_else(|| {
                panic!("write_element: {addr:#x} ({size} bytes) is not in the arena")
            });
        self.region.store(offset, size, value)
    }
}

/// Global memory no launch can reach any more ([`GlobalMemory::freeze`]): its bytes, read-only.
#[derive(Debug)]
pub struct FrozenMemory {
    region: Region,
}

impl FrozenMemory {
    /// The `len` bytes at device address `addr`; `None` if they are not all in the arena.
    pub fn bytes(&self, addr: u64, len: u64) -> Option<&[u8]> {
        let offset = addr.checked_sub(GLOBAL_BASE)?;
        if offset.checked_add(len)? > self.region.len {
            return None;
        }
        // SAFETY: the range is inside the region's allocation (checked above; `len` bytes of
        // the region are allocated and were zeroed when they were). The region is owned by
        // this value, which gives no access to it but these shared byte slices, and its atomic
        // words have the layout of plain integers: nothing writes the memory while a slice
        // lives, so reading it as plain bytes races with nothing.
        Some(unsafe {
            std::slice::from_raw_parts(self.region.as_ptr().add(offset as usize), len as usize)
        })
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
    /// Panics if the host cannot allocate it (tests); launches use [`SharedMemory::try_new`].
    pub fn new(bytes: u32) -> SharedMemory {
        SharedMemory::try_new(bytes).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A zeroed window of `bytes` bytes, or the host allocator's refusal.
    pub fn try_new(bytes: u32) -> Result<SharedMemory, AllocError> {
        Ok(SharedMemory {
            _one_thread: std::marker::PhantomData,
            region: Region::try_zeroed(u64::from(bytes))?,
        })
    }

    pub fn region(&self) -> &Region {
        &self.region
    }

    /// Zeroes the window (its owner resets it for another CTA).
    pub fn clear(&mut self) {
        self.region.clear();
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
    fn regions_are_sixteen_byte_aligned_and_checked_for_sixteen_byte_accesses() {
        let r = Region::new(40);
        assert_eq!(r.as_ptr() as usize % 16, 0);
        assert_eq!(r.check(16, 16), Ok(16));
        assert_eq!(r.check(8, 16), Err(TrapReason::MisalignedAddress));
        assert_eq!(r.check(32, 16), Err(TrapReason::AddressOutOfRange));
    }

    #[test]
    fn cas128_is_one_indivisible_sixteen_byte_compare_and_swap() {
        let r = Region::new(32);
        r.store(16, 8, 3);
        r.store(24, 8, 4);
        let both = |lo: u64, hi: u64| u128::from(lo) | u128::from(hi) << 64;
        // A miss in the high half changes nothing; a hit swaps both halves.
        assert_eq!(r.cas128(16, both(3, 5), both(7, 8)), both(3, 4));
        assert_eq!((r.load(16, 8), r.load(24, 8)), (3, 4));
        assert_eq!(r.cas128(16, both(3, 4), both(7, 8)), both(3, 4));
        assert_eq!((r.load(16, 8), r.load(24, 8)), (7, 8));
        assert_eq!(r.load(0, 8), 0, "the neighbouring chunk is untouched");
        // Four host threads each add 1 to both halves 5000 times through CAS loops: no update
        // is lost and the halves never tear (each CAS compares both).
        let r = Region::new(16);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..5000 {
                        let mut seen = r.cas128(0, 0, 0);
                        loop {
                            let (lo, hi) = (seen as u64, (seen >> 64) as u64);
                            assert_eq!(lo, hi, "torn value");
                            let next = both(lo + 1, hi + 1);
                            let got = r.cas128(0, seen, next);
                            if got == seen {
                                break;
                            }
                            seen = got;
                        }
                    }
                });
            }
        });
        assert_eq!((r.load(0, 8), r.load(8, 8)), (20_000, 20_000));
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

    #[test]
    fn memory_the_host_cannot_hold_is_an_error() {
        assert!(matches!(
            Region::try_new(u64::MAX),
            Err(AllocError::MoreThanAvailable { .. } | AllocError::Refused { .. })
        ));
        assert_eq!(
            GlobalMemory::try_with_allocations(&[u64::MAX - 8, 16]).err(),
            Some(AllocError::Overflow)
        );
        assert_eq!(
            GlobalMemory::try_with_allocations(&[u64::MAX - GLOBAL_BASE + 1]).err(),
            Some(AllocError::Overflow)
        );
        let empty = Region::try_new(0).expect("an empty region");
        assert!(empty.is_empty());
        let r = Region::try_new(12).expect("a small region");
        assert_eq!((r.len(), r.load(8, 4)), (12, 0), "zeroed");
    }

    #[test]
    fn byte_copies_match_byte_by_byte_at_every_offset_and_length() {
        let mut r = Region::new(40);
        let data: Vec<u8> = (1..=40).collect();
        for offset in 0..20u64 {
            for len in 0..=(40 - offset as usize).min(20) {
                r.clear();
                r.write_bytes(offset, &data[..len]);
                for i in 0..40u64 {
                    let want = if (offset..offset + len as u64).contains(&i) {
                        data[(i - offset) as usize]
                    } else {
                        0
                    };
                    assert_eq!(
                        r.load(i as usize, 1) as u8,
                        want,
                        "write {offset}+{len}, byte {i}"
                    );
                }
                let mut out = vec![0xee; len];
                r.read_bytes(offset, &mut out);
                assert_eq!(out, &data[..len], "read {offset}+{len}");
            }
        }
    }
}
