//! Fresh CTAs back to back: a worker runs the CTAs whose turn has come without making them
//! resident, as long as each one finishes in its first quantum.
//!
//! Nearly every CTA of a kernel without barriers runs each warp from pc 0 to `EXIT` in one
//! group. For such a CTA the resident machinery (resetting a [`Cta`](super::cta::Cta)'s warps,
//! the quantum's bookkeeping of light warps, the resident list) costs more host time than a
//! small kernel's warps themselves. A [`FreshCtas`] runs them instead with one warp state,
//! recycled before each warp exactly as a reset does, and one empty shared window: per CTA the
//! backend's context is prepared once and its warps run in one
//! [`run_warps`](crate::exec::WarpRunner::run_warps) call, every warp's group at pc 0 with all
//! its lanes.
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
    CtaEnv, GroupAt, GroupExit, RunnerCache, SharedMemory, WarpRun, WarpState,
};
use std::ops::Range;
use std::time::Instant;

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
    /// The launch's deadline passed (checked every [`QUANTA_PER_CLOCK_CHECK`] CTAs).
    pub timed_out: bool,
    /// The backend broke the contract of `run_warps`: what it did.
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
            Err(bytes) => {
                return Some(Err(format!(
                    "kernel `{}`: cannot allocate {bytes} bytes of warp registers for a CTA: \
                     the host allocator refused",
                    ctx.kernel.name
                )))
            }
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
        let mut batch = Batch {
            finished: 0,
            stop: None,
            timed_out: false,
            broken: None,
        };
        while let Some(linear) = shared.next_cta(ctx.ctas) {
            let env = CtaEnv {
                kernel: ctx.kernel,
                info: ctx.info,
                global: ctx.global,
                shared: &self.shared,
                cbank: ctx.cbank,
                surfaces: ctx.surfaces,
                ctaid: ctx.cta_index(linear),
                ntid: ctx.block,
                nctaid: ctx.grid,
            };
            ctx.runner.prepare_cta(&mut self.cache, &env);
            let mut run = OneState {
                groups: &self.groups,
                state: &mut self.state,
                zero: &ctx.zero_ranges,
                current: None,
            };
            // SAFETY: `run_warps`' contract is `run_group_prepared`'s: `prepare_cta` just saw
            // this `env`.
            let (ran, exit) = unsafe { ctx.runner.run_warps(&mut self.cache, &mut run, &env) };
            let warps = self.groups.len();
            match exit {
                None if ran == warps => batch.finished += 1,
                Some(exit) if (1..=warps).contains(&ran) => {
                    batch.stop = Some((linear, ran - 1, exit));
                    return batch;
                }
                _ => {
                    batch.broken = Some(format!(
                        "backend reported running {ran} groups of a run of {warps} warps \
                         (ending with {exit:?})"
                    ));
                    return batch;
                }
            }
            if batch.finished % QUANTA_PER_CLOCK_CHECK == 0
                && ctx.deadline.is_some_and(|d| Instant::now() >= d)
            {
                batch.timed_out = true;
                return batch;
            }
        }
        batch
    }
}

/// The warps of a fresh CTA as `run_warps` sees them: one state, recycled for each warp as
/// [`Cta::reset`](super::cta::Cta::reset) recycles a warp's own.
struct OneState<'a> {
    groups: &'a [GroupAt],
    state: &'a mut WarpState,
    zero: &'a [Range<usize>],
    /// The warp the state was last recycled for.
    current: Option<usize>,
}

impl<'a> WarpRun<'a> for OneState<'a> {
    fn groups(&self) -> &'a [GroupAt] {
        self.groups
    }

    fn state(&mut self, i: usize) -> &mut WarpState {
        if self.current != Some(i) {
            self.state.recycle(i as u32, self.groups[i].mask, self.zero);
            self.current = Some(i);
        }
        self.state
    }

    fn pass(&mut self, _: usize, _: &GroupExit) -> bool {
        // Every event but an exit ends the run (the CTA becomes resident to take it).
        false
    }
}
