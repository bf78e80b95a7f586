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
}
