//! Fresh CTAs back to back: a worker runs the CTAs whose turn has come without making them
//! resident, as long as each one finishes in its first quantum.
//!
//! Nearly every CTA of a kernel without barriers runs each warp from pc 0 to `EXIT` in one
//! group. For such a CTA the resident machinery (resetting a [`Cta`](super::cta::Cta)'s warps,
//! the quantum's bookkeeping of light warps, the resident list) costs more host time than a
//! small kernel's warps themselves. A [`FreshCtas`] runs them instead with one warp state,
//! recycled before each warp exactly as a reset does, and one empty shared window, handing CTA
//! after CTA from the launch's counter to the backend in one
//! [`run_fresh_ctas`](crate::exec::WarpRunner::run_fresh_ctas) call, every warp's group at pc 0
//! with all its lanes (the JIT prepares its call context once per call and changes only the
//! CTA index in it).
//!
//! The first warp whose group ends with anything but an exit (a barrier, a yield, a divergence,
//! a trap) ends the run: the CTA becomes resident, takes over the stopped warp's state, counts
//! the warps before it as exited and applies the event in its next quantum
//! ([`Cta::adopt_fresh`](super::cta::Cta::adopt_fresh)), which goes on with the warps after
//! it. So the backend sees the same calls in the same order as if each of these CTAs had been
//! admitted, reset and run a quantum at its turn, and results, traps, counters and the
//! deterministic schedule are unchanged. The worker runs fresh CTAs only when they are next in
//! its round (see `run_worker`) and only for kernels without shared memory (a resident CTA's
//! window would have to take over the run's contents).

use super::{LaunchContext, Shared, QUANTA_PER_CLOCK_CHECK};
use crate::exec::{
    CtaEnv, FreshRun, FreshWarps, GroupAt, GroupExit, RunnerCache, SharedMemory, WarpState,
};
use std::time::Instant;

/// How many fresh CTAs a run hands out between two reads of the clock for the watchdog. A
/// fresh CTA's first quantum is one group per warp, as short as a quantum gets: a read every
/// [`QUANTA_PER_CLOCK_CHECK`] of them cost `counter` 1.5 %.
const CTAS_PER_CLOCK_CHECK: u64 = 4 * QUANTA_PER_CLOCK_CHECK;

/// A worker's means to run fresh CTAs back to back (see the module docs).
pub(super) struct FreshCtas {
    /// The state every warp of the run uses in turn (its counters accumulate, as a reused
    /// warp's do: the worker sums them at its end).
    pub state: WarpState,
    cache: RunnerCache,
    /// An empty window (the kernel has no shared memory).
    shared: SharedMemory,
    /// Each warp's group at launch: pc 0, the warp's lanes.
    groups: Vec<GroupAt>,
}

/// How a call of [`FreshCtas::run`] ended.
pub(super) struct Batch {
    /// CTAs that finished in their first quantum.
    pub finished: u64,
    /// The CTA that did not: its linear index, the warp that stopped, and its event.
    pub stop: Option<(u64, usize, GroupExit)>,
    /// The launch's deadline passed (checked every [`CTAS_PER_CLOCK_CHECK`] CTAs).
    pub timed_out: bool,
    /// The backend broke the contract of `run_fresh_ctas`: what it did.
    pub broken: Option<String>,
}

impl FreshCtas {
    /// The means for a launch whose kernel has no shared memory, or `None` (the kernel has
    /// some); `Err` when the host cannot hold a warp's registers.
    pub fn for_launch(ctx: &LaunchContext) -> Option<Result<FreshCtas, String>> {
        if ctx.shared_bytes != 0 {
            return None;
        }
        let state = match WarpState::try_new(ctx.kernel.num_regs, ctx.kernel.num_preds, 0, 0) {
            Ok(state) => state,
            Err(bytes) => return Some(Err(ctx.refused(bytes, "warp registers"))),
        };
        let shared = match SharedMemory::try_new(0) {
            Ok(shared) => shared,
            Err(_) => return Some(Err("cannot create an empty shared window".to_string())),
        };
        let groups = ctx
            .lane_masks
            .iter()
            .map(|&mask| GroupAt { pc: 0, mask })
            .collect();
        Some(Ok(FreshCtas {
            state,
            cache: RunnerCache::default(),
            shared,
            groups,
        }))
    }

    /// Takes CTAs from the launch's counter and runs each one's first quantum until one does
    /// not finish in it, the counter runs out (or the launch is aborted), or the deadline
    /// passes.
    pub fn run(&mut self, ctx: &LaunchContext, shared: &Shared) -> Batch {
        let env = CtaEnv {
            kernel: ctx.kernel,
            info: ctx.info,
            global: ctx.global,
            shared: &self.shared,
            cbank: ctx.cbank,
            surfaces: ctx.surfaces,
            ctaid: [0; 3],
            ntid: ctx.block,
            nctaid: ctx.grid,
        };
        let mut run = Handout {
            ctx,
            shared,
            groups: &self.groups,
            state: &mut self.state,
            last: None,
            handed: 0,
            timed_out: false,
        };
        let (finished, stop) = ctx.runner.run_fresh_ctas(&mut self.cache, &mut run, &env);
        let mut batch = Batch {
            finished,
            stop: None,
            timed_out: run.timed_out,
            broken: None,
        };
        let handed = run.handed;
        match stop {
            Some((linear, warp, exit))
                if warp < self.groups.len()
                    && handed == finished + 1
                    && exit != GroupExit::Exited =>
            {
                batch.stop = Some((linear, warp, exit))
            }
            None if handed == finished => {}
            stop => {
                batch.broken = Some(format!(
                    "backend reported {finished} finished fresh CTAs of {handed} and the stop \
                     {stop:?} ({} warps a CTA)",
                    self.groups.len()
                ))
            }
        }
        batch
    }
}

/// The fresh CTAs of one [`FreshCtas::run`] as the backend sees them: CTAs from the launch's
/// counter, their `(x, y, z)` index stepped from the last one's when they are consecutive.
struct Handout<'a, 'c> {
    ctx: &'a LaunchContext<'c>,
    shared: &'a Shared,
    groups: &'a [GroupAt],
    state: &'a mut WarpState,
    /// The last CTA handed out and its index.
    last: Option<(u64, [u32; 3])>,
    /// CTAs handed out.
    handed: u64,
    timed_out: bool,
}

impl FreshRun for Handout<'_, '_> {
    fn next_cta(&mut self) -> Option<(u64, [u32; 3])> {
        if self.handed > 0
            && self.handed % CTAS_PER_CLOCK_CHECK == 0
            && self.ctx.deadline.is_some_and(|d| Instant::now() >= d)
        {
            self.timed_out = true;
            return None;
        }
        let linear = self.shared.next_cta(self.ctx.ctas)?;
        let index = match self.last {
            // The next x, or the start of the next row or slice (two divisions saved).
            Some((last, [x, y, z])) if linear == last + 1 => {
                let [gx, gy, _] = self.ctx.grid;
                if x + 1 < gx {
                    [x + 1, y, z]
                } else if y + 1 < gy {
                    [0, y + 1, z]
                } else {
                    [0, 0, z + 1]
                }
            }
            _ => self.ctx.cta_index(linear),
        };
        self.last = Some((linear, index));
        self.handed += 1;
        Some((linear, index))
    }

    fn warps(&mut self) -> FreshWarps<'_> {
        FreshWarps {
            groups: self.groups,
            state: self.state,
            zero: &self.ctx.zero_ranges,
        }
    }
}
