//! Per-warp state shared by the scheduler and the backends.

use super::{Stats, WARP_STRIDE};

/// The architectural state of one warp: registers, predicates, exited lanes and counters.
/// Groups and joins (divergence bookkeeping) belong to the scheduler, not to this struct.
#[derive(Debug, Clone)]
pub struct WarpState {
    /// Register file, structure of arrays: register `r` of lane `l` is
    /// `regs[r * WARP_STRIDE + l]`. Starts zeroed.
    pub regs: Vec<u32>,
    /// Predicate registers, one lane mask each (bit `l` = lane `l`). Starts all false.
    pub preds: Vec<u32>,
    /// Warp index within the CTA.
    pub warp_id: u32,
    /// Lanes that exist in this warp (thread index below the CTA size).
    pub lanes: u32,
    /// Lanes that have executed `EXIT`.
    pub exited: u32,
    /// Counters of this warp, summed into the launch's statistics at the end.
    pub stats: Stats,
}

impl WarpState {
    /// A fresh warp with `num_regs` registers and `num_preds` predicates; `lanes` is the mask of
    /// lanes that exist.
    pub fn new(num_regs: u32, num_preds: u32, warp_id: u32, lanes: u32) -> WarpState {
        WarpState {
            regs: vec![0; num_regs as usize * WARP_STRIDE],
            preds: vec![0; num_preds as usize],
            warp_id,
            lanes,
            exited: 0,
            stats: Stats::default(),
        }
    }

    /// Lanes that exist and have not exited.
    pub fn live(&self) -> u32 {
        self.lanes & !self.exited
    }

    /// Returns the warp to its launch state (registers and predicates zeroed, no lane exited,
    /// counters cleared) so the scheduler can reuse its allocation for the next CTA.
    pub fn reset(&mut self, warp_id: u32, lanes: u32) {
        zero(&mut self.regs);
        zero(&mut self.preds);
        self.warp_id = warp_id;
        self.lanes = lanes;
        self.exited = 0;
        self.stats = Stats::default();
    }

    /// The lane mask of warp `warp_id` of a CTA with `cta_threads` threads and `warp_size`
    /// lanes per warp (1..=32): full warps first, the last one partial.
    pub fn lane_mask(cta_threads: u32, warp_size: u32, warp_id: u32) -> u32 {
        let first = warp_id.saturating_mul(warp_size);
        let count = cta_threads.saturating_sub(first).min(warp_size).min(32);
        if count == 32 {
            u32::MAX
        } else {
            (1u32 << count) - 1
        }
    }
}

/// Zeroes a register file with plain scalar stores. `fill(0)` becomes a libc `memset` which,
/// on hosts with AVX-512, runs wide stores whose power-license transitions cost far more than
/// the store itself when it is called once per warp between scalar JIT code (measured: 28% of a
/// `counter` launch). Volatile writes keep the compiler from turning this loop back into memset.
fn zero(words: &mut [u32]) {
    // SAFETY: any bit pattern is a valid u32 and u64, so viewing the middle of the slice as
    // aligned u64 words is sound; `align_to_mut` guarantees alignment and bounds.
    let (head, middle, tail) = unsafe { words.align_to_mut::<u64>() };
    for w in head.iter_mut().chain(tail.iter_mut()) {
        // SAFETY: `w` is a valid, aligned, exclusive reference into the slice.
        unsafe { std::ptr::write_volatile(w, 0) };
    }
    for w in middle.iter_mut() {
        // SAFETY: as above, for the u64 view.
        unsafe { std::ptr::write_volatile(w, 0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_masks_cover_the_cta_with_a_partial_last_warp() {
        assert_eq!(WarpState::lane_mask(48, 32, 0), u32::MAX);
        assert_eq!(WarpState::lane_mask(48, 32, 1), 0xffff);
        assert_eq!(WarpState::lane_mask(48, 32, 2), 0);
        assert_eq!(WarpState::lane_mask(1, 32, 0), 1);
        assert_eq!(WarpState::lane_mask(20, 8, 2), 0xf);
    }

    #[test]
    fn reset_returns_to_the_launch_state() {
        let mut w = WarpState::new(2, 1, 0, u32::MAX);
        w.regs[5] = 7;
        w.preds[0] = 3;
        w.exited = 1;
        w.stats.warp_insts = 9;
        w.reset(3, 0xff);
        assert!(w.regs.iter().all(|&r| r == 0));
        assert_eq!(
            (w.preds[0], w.exited, w.warp_id, w.lanes, w.stats.warp_insts),
            (0, 0, 3, 0xff, 0)
        );
    }
}
