//! Per-warp state shared by the scheduler and the backends.

use super::{Stats, WARP_STRIDE};

/// The architectural state of one warp: registers, predicates, exited lanes and counters.
/// Groups and joins (divergence bookkeeping) belong to the scheduler, not to this struct.
#[derive(Debug, Clone)]
pub struct WarpState {
    /// Register file, structure of arrays: register `r` of lane `l` is
    /// `regs[r * WARP_STRIDE + l]`. Starts zeroed; [`WarpState::recycle`] zeroes again only
    /// the registers a kernel may read before writing them.
    pub regs: Vec<u32>,
    /// Predicate registers, one lane mask each (bit `l` = lane `l`). Starts all false.
    pub preds: Vec<u32>,
    /// Warp index within the CTA.
    pub warp_id: u32,
    /// Lanes that exist in this warp (thread index below the CTA size).
    pub lanes: u32,
    /// Lanes that have executed `EXIT`.
    pub exited: u32,
    /// Counters of this warp, summed into the launch's statistics at the end. The scheduler
    /// reuses a warp for CTA after CTA ([`WarpState::recycle`]) and lets these accumulate over
    /// all of them, summing once when the worker finishes.
    pub stats: Stats,
}

impl WarpState {
    /// A fresh warp with `num_regs` registers and `num_preds` predicates; `lanes` is the mask of
    /// lanes that exist.
    pub fn new(num_regs: u32, num_preds: u32, warp_id: u32, lanes: u32) -> WarpState {
        WarpState::try_new(num_regs, num_preds, warp_id, lanes)
            .unwrap_or_else(|bytes| panic!("cannot allocate {bytes} bytes of warp registers"))
    }

    /// [`WarpState::new`], or the bytes the host allocator refused.
    pub fn try_new(
        num_regs: u32,
        num_preds: u32,
        warp_id: u32,
        lanes: u32,
    ) -> Result<WarpState, u64> {
        let n = num_regs as usize * WARP_STRIDE;
        let mut regs = Vec::new();
        regs.try_reserve_exact(n).map_err(|_| n as u64 * 4)?;
        regs.resize(n, 0);
        let mut preds = Vec::new();
        preds
            .try_reserve_exact(num_preds as usize)
            .map_err(|_| u64::from(num_preds) * 4)?;
        preds.resize(num_preds as usize, 0);
        Ok(WarpState {
            regs,
            preds,
            warp_id,
            lanes,
            exited: 0,
            stats: Stats::default(),
        })
    }

    /// Lanes that exist and have not exited.
    pub fn live(&self) -> u32 {
        self.lanes & !self.exited
    }

    /// Returns the warp to its launch state (registers and predicates zeroed, no lane exited,
    /// counters cleared) so the scheduler can reuse its allocation for the next CTA.
    pub fn reset(&mut self, warp_id: u32, lanes: u32) {
        zero_words(&mut self.regs);
        zero_words(&mut self.preds);
        self.warp_id = warp_id;
        self.lanes = lanes;
        self.exited = 0;
        self.stats = Stats::default();
    }

    /// Prepares the warp for the next CTA the way the scheduler needs it, more cheaply than
    /// [`WarpState::reset`]: zeroes only the register words in `zero` (ranges of indices into
    /// `regs`: the registers the kernel may read before writing them, see
    /// [`crate::valid::KernelInfo::written_before_read`]; the others can never be observed)
    /// and every predicate, clears the exited lanes, and keeps the counters accumulating.
    #[inline]
    pub fn recycle(&mut self, warp_id: u32, lanes: u32, zero: &[std::ops::Range<usize>]) {
        for range in zero {
            if let Some(words) = self.regs.get_mut(range.clone()) {
                zero_words(words);
            }
        }
        // A handful of words: plain stores (no memset to avoid, no alignment to find).
        for p in self.preds.iter_mut() {
            *p = 0;
        }
        self.warp_id = warp_id;
        self.lanes = lanes;
        self.exited = 0;
    }

    /// The ranges of register words (indices into [`WarpState::regs`]) that must be zeroed
    /// before a warp runs a kernel with `num_regs` registers again: the registers without a
    /// `true` in `written_before_read`, merged into runs.
    pub fn zero_ranges(num_regs: u32, written_before_read: &[bool]) -> Vec<std::ops::Range<usize>> {
        let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
        for r in 0..num_regs as usize {
            if written_before_read.get(r).copied().unwrap_or(false) {
                continue;
            }
            let words = r * WARP_STRIDE..(r + 1) * WARP_STRIDE;
            match ranges.last_mut() {
                Some(last) if last.end == words.start => last.end = words.end,
                _ => ranges.push(words),
            }
        }
        ranges
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
fn zero_words(words: &mut [u32]) {
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

    #[test]
    fn recycle_zeroes_only_the_given_ranges_and_keeps_the_counters() {
        let mut w = WarpState::new(3, 2, 0, u32::MAX);
        w.regs.iter_mut().for_each(|r| *r = 5);
        w.preds = vec![1, 2];
        w.exited = 7;
        w.stats.warp_insts = 9;
        let ranges = WarpState::zero_ranges(3, &[true, false, false]);
        assert_eq!(ranges, vec![32..96]);
        w.recycle(1, 0xf, &ranges);
        assert!(w.regs[..32].iter().all(|&r| r == 5));
        assert!(w.regs[32..].iter().all(|&r| r == 0));
        assert_eq!(
            (
                w.preds.clone(),
                w.exited,
                w.warp_id,
                w.lanes,
                w.stats.warp_insts
            ),
            (vec![0, 0], 0, 1, 0xf, 9)
        );
    }

    #[test]
    fn zero_ranges_merge_neighbours_and_default_to_every_register() {
        assert_eq!(WarpState::zero_ranges(3, &[]), vec![0..96]);
        assert_eq!(
            WarpState::zero_ranges(4, &[false, true, false, false]),
            vec![0..32, 64..128]
        );
        assert_eq!(WarpState::zero_ranges(2, &[true, true]), vec![]);
    }
}
