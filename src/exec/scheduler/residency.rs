//! How many CTAs of a launch may be resident at once: the emulated GPU's occupancy.
//!
//! A worker starts with up to [`RESIDENT_CTAS_PER_WORKER`](super::RESIDENT_CTAS_PER_WORKER)
//! resident CTAs, which is all a grid of CTAs that never wait for each other needs. When every
//! resident CTA of a worker has been waiting for two rounds (each quantum of each of them ended
//! in [`Quantum::Waiting`](super::cta::Quantum::Waiting): its warps spin without changing a
//! register, wait at a barrier or a join, or sit out a back-off), the worker doubles the number
//! of CTAs it keeps resident, taking the extra places from a pool the workers share. The pool
//! holds what the emulated GPU keeps resident at once ([`resident_cap`]) less the workers'
//! starting places, so CTAs that wait for a later CTA (a flag raised by the last CTA, a
//! grid-wide barrier, a producer further along the grid) run as on the GPU, on any number of
//! host threads. Only when the pool is empty, or the grid has no CTA left to start, do waiting
//! CTAs stay waiting, until the watchdog ends the launch: on a GPU such a kernel would hang too.
//!
//! # The emulated GPU
//!
//! An NVIDIA H100 SXM5 (compute capability 9.0), the largest GPU of its generation: 132
//! streaming multiprocessors (the H100 whitepaper), each keeping at most 32 CTAs, 64 warps
//! (2048 threads) and 228 KB of shared memory resident, a CTA's shared memory being allocated
//! in 128-byte units with 1 KB more reserved by the system per CTA (the CUDA C++ Programming
//! Guide's table of technical specifications per compute capability and its occupancy rules).
//! So a kernel of `T` threads and `S` shared bytes per CTA has
//!
//! ```text
//! 132 × min(32, ⌊64 / ⌈T / 32⌉⌋, ⌊228 KB / (⌈S / 128⌉ × 128 + 1 KB)⌋)
//! ```
//!
//! CTAs resident, at least 132 (one per SM even for a CTA larger than an SM could hold): 4,224
//! one-warp CTAs, 264 CTAs of 1024 threads. The SM's 64K registers are left out on purpose: a
//! kernel that uses many registers only fits fewer CTAs, and atomjit cannot know how many
//! registers ptxas gives a PTX kernel, so leaving them out keeps the cap at least what the
//! GPU holds. Register files and shared windows are what a resident CTA costs the host (about
//! `4 × registers` bytes per thread, plus its shared memory); the cap is further bounded by
//! [`RESIDENT_BYTES_BUDGET`] of them, which a kernel of fewer than about 900 registers per
//! thread (32-bit slots) never reaches at the GPU's 270,336 resident threads.

use super::LaunchContext;
use crate::exec::WARP_STRIDE;

/// Streaming multiprocessors of the emulated GPU (H100 SXM5).
pub const GPU_SMS: usize = 132;
/// Resident CTAs per SM (compute capability 9.0).
pub const GPU_CTAS_PER_SM: usize = 32;
/// Resident warps per SM (compute capability 9.0: 2048 threads).
pub const GPU_WARPS_PER_SM: usize = 64;
/// Shared memory per SM in bytes (compute capability 9.0: 228 KB).
pub const GPU_SHARED_PER_SM: u64 = 228 * 1024;
/// Shared memory the system reserves per CTA (compute capability 8.0 and later).
pub const GPU_SHARED_RESERVED_PER_CTA: u64 = 1024;
/// Shared memory allocation unit per CTA.
pub const GPU_SHARED_UNIT: u64 = 128;

/// The host memory resident CTAs (register files and shared windows) of one launch may take
/// when workers add resident CTAs beyond their starting places.
pub const RESIDENT_BYTES_BUDGET: u64 = 1 << 30;

/// How many CTAs of this launch the emulated GPU keeps resident at once, bounded by
/// [`RESIDENT_BYTES_BUDGET`] (see the module docs).
pub fn resident_cap(ctx: &LaunchContext) -> usize {
    let bytes = cta_bytes(
        ctx.warps_per_cta,
        ctx.kernel.num_regs,
        ctx.kernel.num_preds,
        ctx.shared_bytes,
    );
    let by_budget = (RESIDENT_BYTES_BUDGET / bytes) as usize;
    gpu_resident_ctas(ctx.cta_threads, ctx.shared_bytes).min(by_budget.max(1))
}

/// How many CTAs of `cta_threads` threads with `shared_bytes` of shared memory each the
/// emulated GPU keeps resident at once (the formula of the module docs).
pub fn gpu_resident_ctas(cta_threads: u32, shared_bytes: u32) -> usize {
    let gpu_warps = cta_threads.div_ceil(32).max(1) as usize;
    let shared_per_cta = u64::from(shared_bytes).div_ceil(GPU_SHARED_UNIT) * GPU_SHARED_UNIT
        + GPU_SHARED_RESERVED_PER_CTA;
    let by_shared = (GPU_SHARED_PER_SM / shared_per_cta) as usize;
    let per_sm = GPU_CTAS_PER_SM
        .min(GPU_WARPS_PER_SM / gpu_warps)
        .min(by_shared)
        .max(1);
    GPU_SMS * per_sm
}

/// What one resident CTA costs the host: its warps' register files and predicates, its shared
/// window, and a little bookkeeping.
pub fn cta_bytes(warps: u32, num_regs: u32, num_preds: u32, shared_bytes: u32) -> u64 {
    let per_warp = u64::from(num_regs) * WARP_STRIDE as u64 * 4 + u64::from(num_preds) * 4 + 256;
    u64::from(warps) * per_warp + u64::from(shared_bytes) + 512
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gpu_holds_what_an_h100_holds() {
        // 32 CTAs per SM bound small CTAs, 64 warps per SM larger ones.
        assert_eq!(gpu_resident_ctas(1, 0), 132 * 32);
        assert_eq!(gpu_resident_ctas(64, 0), 132 * 32);
        assert_eq!(gpu_resident_ctas(128, 0), 132 * 16);
        assert_eq!(gpu_resident_ctas(96, 0), 132 * 21);
        assert_eq!(gpu_resident_ctas(1024, 0), 132 * 2);
        // Shared memory: 48 KB + 1 KB reserved fits 4 times in 228 KB; 100 KB twice.
        assert_eq!(gpu_resident_ctas(32, 48 * 1024), 132 * 4);
        assert_eq!(gpu_resident_ctas(32, 100 * 1024), 132 * 2);
        // 7 KB rounds to 7 KB + 1 KB: 28 CTAs; 7 KB + 1 byte rounds up a 128-byte unit.
        assert_eq!(gpu_resident_ctas(32, 7 * 1024), 132 * 28);
        assert_eq!(gpu_resident_ctas(32, 7 * 1024 + 1), 132 * 28);
        assert_eq!(gpu_resident_ctas(32, 227 * 1024), 132);
        // More than an SM holds (no GPU launches it): still one per SM.
        assert_eq!(gpu_resident_ctas(32, 1 << 20), 132);
    }

    #[test]
    fn the_host_budget_bounds_ctas_with_huge_register_files() {
        // 32 registers, one warp: 4 KB of registers, far inside the budget for 4224 CTAs.
        let small = cta_bytes(1, 32, 2, 0);
        assert_eq!(small, 32 * 32 * 4 + 8 + 256 + 512);
        assert!(small * 4224 < RESIDENT_BYTES_BUDGET);
        // 60,000 PTX registers per thread, 32 warps: 245 MB per CTA, 4 of them fit.
        let huge = cta_bytes(32, 60_000, 1, 0);
        assert_eq!(RESIDENT_BYTES_BUDGET / huge, 4);
    }
}
