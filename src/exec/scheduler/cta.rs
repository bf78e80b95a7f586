//! One resident CTA: its warps, its shared-memory window and its barriers.
//!
//! A CTA advances in *quanta*: in one quantum every warp that has a runnable group runs one
//! group until its next event (warps in index order), a *round*. While every unfinished warp of
//! the CTA runs light (one group of all its live lanes, see `divergence.rs`) the rounds are
//! *barrier phases*: each warp runs to its next barrier or its exit, and after the release the
//! quantum goes on with the next phase, up to
//! [`LaunchConfig::light_phases`](crate::exec::LaunchConfig::light_phases) rounds in all
//! ([`LIGHT_PHASES_PER_QUANTUM`] by default), in a tight loop that skips the general round's
//! bookkeeping ([`light_phases`]).
//!
//! Barriers are per thread, as on sm_70 and later: barrier `id` releases when every live lane of
//! the CTA waits at a barrier with that id (lanes parked at a join, running, or waiting at another
//! id have not arrived; exited lanes no longer count). Released groups continue after their barrier
//! instruction. The check runs after every event that adds an arrival or retires lanes, so a
//! barrier releases as soon as it can.
//!
//! When no group of the CTA can run, the CTA first dissolves every join lanes are parked at
//! (see `divergence.rs`); if nothing was parked, every live lane waits at a barrier that cannot
//! release: a provable deadlock, reported at once instead of waiting for the watchdog.

use super::divergence::{add_arrival, ScheduleCounters, Step, Warp};
use super::LaunchContext;
use crate::exec::{
    CtaEnv, GroupAt, GroupExit, PhaseGroup, PhasesEnd, RunnerCache, SharedMemory, Stats, StuckWarp,
    TrapInfo, WarpRunner, WarpState,
};

/// What one quantum of a CTA ended with.
#[derive(Debug)]
pub enum Quantum {
    /// The CTA has more to do.
    Running,
    /// The CTA has more to do, but nothing in it moved this quantum: every warp waits (at a
    /// barrier or a join), sits out a back-off, or ran a group that is spinning (see
    /// `divergence.rs`). Only memory written by someone else can change that. `spun`: some
    /// group ran and was seen spinning (it looked at memory and found nothing new).
    Waiting { spun: bool },
    /// Every lane exited.
    Finished,
    /// A lane of warp `warp` faulted.
    Trap { warp: u32, info: TrapInfo },
    /// Nothing can run and nothing can be released; the cause, in words.
    Deadlock(String),
    /// The backend broke its contract.
    Internal(String),
}

/// A CTA resident on a worker.
#[derive(Debug)]
pub struct Cta {
    /// Linear index (x fastest, then y, then z).
    pub linear: u64,
    /// `(x, y, z)` index in the grid.
    pub index: [u32; 3],
    shared: SharedMemory,
    warps: Vec<Warp>,
    /// Lanes of the CTA that have not exited, when `live_stale` is false. Counting exited lanes
    /// after every step costs a population count per warp; it is only needed when a barrier
    /// has arrivals, so a step that retires lanes only marks the count stale.
    live_lanes: u32,
    /// `live_lanes` must be recounted from the warps before use.
    live_stale: bool,
    /// Barriers with arrivals: `(id, lanes waiting)`.
    barriers: Vec<(u32, u32)>,
    /// The groups of a run of light warps (see `Warp::step_light_run`), kept to reuse the
    /// allocation.
    run_groups: Vec<GroupAt>,
    pub counters: ScheduleCounters,
    /// The backend's per-CTA state (see [`crate::exec::WarpRunner::prepare_cta`]).
    cache: RunnerCache,
    /// The CTA's first quantum began in a run of fresh CTAs (`fresh.rs`), which stopped at
    /// warp `.0` with the event `.1`: the next quantum applies it and goes on from there.
    resume: Option<(usize, GroupExit)>,
}

impl Cta {
    /// A fresh CTA with linear index `linear`, or why the host cannot hold its registers and
    /// shared window (a message for the launch's error).
    pub fn try_new(ctx: &LaunchContext, linear: u64) -> Result<Cta, String> {
        let warps = (0..ctx.warps_per_cta)
            .map(|w| {
                let lanes = WarpState::lane_mask(ctx.cta_threads, ctx.warp_size, w);
                WarpState::try_new(ctx.kernel.num_regs, ctx.kernel.num_preds, w, lanes)
                    .map(Warp::new)
                    .map_err(|bytes| ctx.refused(bytes, "warp registers"))
            })
            .collect::<Result<Vec<_>, String>>()?;
        let shared = SharedMemory::try_new(ctx.shared_bytes)
            .map_err(|_| ctx.refused(u64::from(ctx.shared_bytes), "shared memory"))?;
        Ok(Cta {
            linear,
            index: ctx.cta_index(linear),
            shared,
            warps,
            live_lanes: ctx.cta_threads,
            live_stale: false,
            barriers: Vec::new(),
            run_groups: Vec::new(),
            counters: ScheduleCounters::for_cta(linear),
            cache: RunnerCache::default(),
            resume: None,
        })
    }

    /// Reuses this CTA's allocations (registers, shared window) for CTA `linear`, in the state
    /// [`Cta::try_new`] would give as far as the program can observe: registers the kernel always
    /// writes before reading keep their old values, and the warps' counters accumulate (the
    /// worker sums them at its end).
    pub fn reset(&mut self, ctx: &LaunchContext, linear: u64) {
        self.linear = linear;
        self.index = ctx.cta_index(linear);
        if !self.shared.region().is_empty() {
            self.shared.clear();
        }
        for (w, warp) in self.warps.iter_mut().enumerate() {
            let w = w as u32;
            warp.reset(w, ctx.lane_masks[w as usize], &ctx.zero_ranges);
        }
        self.live_lanes = ctx.cta_threads;
        self.live_stale = false;
        self.barriers.clear();
        self.counters = ScheduleCounters::for_cta(linear);
        self.resume = None;
    }

    /// Takes over a fresh CTA whose first quantum a run of fresh CTAs began (`fresh.rs`): that
    /// run ran the groups of warps `0..=warp` in order, every one before `warp` exited, and
    /// warp `warp` stopped with `exit`, its state in `state` (swapped in: `state` gets this
    /// CTA's old allocation, recycled before its next use). The CTA was just reset for this
    /// index. Its next [`Cta::quantum`] applies `exit` and runs the rest of the first quantum,
    /// exactly as if the quantum had run those groups itself.
    pub fn adopt_fresh(&mut self, warp: usize, exit: GroupExit, state: &mut WarpState) {
        for earlier in &mut self.warps[..warp] {
            earlier.exited_light();
        }
        std::mem::swap(&mut self.warps[warp].state, state);
        self.live_stale = true;
        self.resume = Some((warp, exit));
    }

    /// The warps' counters, summed.
    pub fn stats(&self) -> Stats {
        let mut total = Stats::default();
        for warp in &self.warps {
            total.add(&warp.state.stats);
        }
        total
    }

    /// The warps' counters, summed, leaving them zero (for a CTA reused by a caller that wants
    /// each run's own counters).
    pub fn take_stats(&mut self) -> Stats {
        let total = self.stats();
        for warp in &mut self.warps {
            warp.state.stats = Stats::default();
        }
        total
    }

    /// Runs one quantum: each warp with a runnable group runs one group until its next event,
    /// and while the CTA's warps are light after that, its next barrier phases (see the
    /// module docs), up to [`LaunchConfig::light_phases`] rounds in all.
    ///
    /// [`LaunchConfig::light_phases`]: crate::exec::LaunchConfig::light_phases
    pub fn quantum(&mut self, ctx: &LaunchContext) -> Quantum {
        let Cta {
            index,
            shared,
            warps,
            live_lanes,
            live_stale,
            barriers,
            run_groups,
            counters,
            cache,
            resume,
            ..
        } = self;
        counters.quanta += 1;
        let env = CtaEnv {
            kernel: ctx.kernel,
            info: ctx.info,
            global: ctx.global,
            shared,
            cbank: ctx.cbank,
            surfaces: ctx.surfaces,
            ctaid: *index,
            ntid: ctx.block,
            nctaid: ctx.grid,
        };
        // Every step below runs groups with this `env`, as `Warp::step` requires.
        ctx.runner.prepare_cta(cache, &env);
        let (mut waiting, mut spun) = (true, false);
        let mut resume = resume.take();
        // Rounds of the quantum: in each, every warp with a runnable group runs one group. The
        // first is a general one unless the CTA is light; after it, light barrier phases only.
        let mut rounds = 0;
        loop {
            let mut w = 0;
            if resume.is_none() && barriers.is_empty() && rounds < ctx.light_phases {
                let phases = light_phases(
                    warps,
                    (barriers, live_stale),
                    (ctx.runner, cache, &env),
                    (counters, ctx.light_phases - rounds),
                );
                match phases {
                    Phases::NotLight if rounds == 0 => {}
                    Phases::NotLight => break,
                    Phases::Ran => {
                        waiting = false;
                        break;
                    }
                    Phases::Stopped { warp, exit, ran } => {
                        // The rest of the round, from the warp whose event was not taken, as a
                        // run of fresh CTAs leaves it (the warps before it exited or arrived,
                        // which is progress, as are the whole rounds before).
                        rounds += ran;
                        if ran > 0 {
                            waiting = false;
                        }
                        resume = Some((warp, exit));
                    }
                }
            } else if rounds > 0 {
                break;
            }
            while w < warps.len() {
                let (step, retired, run_arrived) = if let Some((stopped, exit)) = resume.take() {
                    // The rest of a round that a run of fresh CTAs (`adopt_fresh`) or a light
                    // phase began: the warps before `stopped` exited or arrived there (or had
                    // finished), which is progress, as in a light run of more than one warp.
                    w = stopped;
                    if stopped > 0 {
                        waiting = false;
                    }
                    let runner = (ctx.runner, &mut *cache, &env);
                    let (step, retired) = warps[w].end_light_run(exit, runner, counters, barriers);
                    (step, retired || stopped > 0, false)
                } else if warps[w].runs_light() {
                    // A run of light warps in one backend call, which takes their exits and
                    // barrier arrivals as they come (see `Warp::step_light_run`).
                    let run = Warp::step_light_run(
                        &mut warps[w..],
                        (barriers, run_groups),
                        ctx.runner,
                        cache,
                        &env,
                        counters,
                    );
                    w += run.ran - 1;
                    match run.last {
                        Some(step) => {
                            if run.ran > 1 {
                                waiting = false;
                            }
                            (step, run.retired, run.arrived)
                        }
                        // Every warp of the run exited or arrived: progress.
                        None => (Step::Progress, run.retired, run.arrived),
                    }
                } else {
                    let warp = &mut warps[w];
                    let live_before = warp.state.live();
                    let step = warp.step(ctx.runner, cache, &env, counters, barriers);
                    (step, warp.state.live() != live_before, false)
                };
                *live_stale |= retired;
                let arrived = run_arrived
                    | match step {
                        Step::Idle => false,
                        Step::Spin => {
                            spun = true;
                            false
                        }
                        Step::Progress => {
                            waiting = false;
                            false
                        }
                        Step::Barrier { id, lanes } => {
                            waiting = false;
                            add_arrival(barriers, id, lanes);
                            true
                        }
                        Step::Trap(info) => {
                            return Quantum::Trap {
                                warp: w as u32,
                                info,
                            }
                        }
                        Step::ContractViolation(message) => return Quantum::Internal(message),
                    };
                if (arrived || retired) && !barriers.is_empty() {
                    if *live_stale {
                        *live_lanes = count_live(warps);
                        *live_stale = false;
                    }
                    release_barriers(barriers, *live_lanes, warps, counters);
                }
                w += 1;
            }
            rounds += 1;
            if rounds >= ctx.light_phases {
                break;
            }
        }
        if self.warps.iter().all(Warp::is_finished) {
            return Quantum::Finished;
        }
        if self.warps.iter().any(Warp::has_runnable) {
            return if waiting {
                Quantum::Waiting { spun }
            } else {
                Quantum::Running
            };
        }
        let mut dissolved = false;
        for warp in &mut self.warps {
            dissolved |= warp.dissolve_parked_joins(&mut self.counters);
        }
        if dissolved {
            Quantum::Running
        } else {
            if self.live_stale {
                self.live_lanes = count_live(&self.warps);
                self.live_stale = false;
            }
            Quantum::Deadlock(self.deadlock_cause())
        }
    }

    fn deadlock_cause(&self) -> String {
        let [x, y, z] = self.index;
        let waits: Vec<String> = self
            .barriers
            .iter()
            .map(|(id, waiting)| format!("{waiting} at barrier {id}"))
            .collect();
        format!(
            "deadlock: every live thread of CTA ({x},{y},{z}) waits at a barrier that can never release \
             ({} of {} live threads)",
            waits.join(", "),
            self.live_lanes
        )
    }

    /// Every unfinished warp with where each of its groups stands.
    pub fn stuck_warps(&self, ctx: &LaunchContext) -> Vec<StuckWarp> {
        self.warps
            .iter()
            .filter(|w| !w.is_finished())
            .map(|warp| {
                let groups = warp.describe();
                StuckWarp {
                    cta: self.index,
                    warp: warp.state.warp_id,
                    insts: groups
                        .iter()
                        .map(|&(pc, _, _)| ctx.inst_line_and_text(pc))
                        .collect(),
                    groups: groups
                        .into_iter()
                        .map(|(pc, mask, state)| (pc, mask, state.describe().to_string()))
                        .collect(),
                }
            })
            .collect()
    }
}

/// How many barrier phases of a CTA one quantum runs at most by default (`light_phases` in
/// `cta.rs`): enough for the usual kernel's few barriers to take one quantum, few enough that a
/// loop around a barrier (waiting for another CTA, say) lets the worker's other CTAs run often.
pub const LIGHT_PHASES_PER_QUANTUM: u32 = 8;

/// What [`light_phases`] did.
enum Phases {
    /// Some unfinished warp was not light and runnable, or none was unfinished: nothing ran.
    NotLight,
    /// Whole phases ran: every warp that ran exited or arrived at a barrier, and after the
    /// last phase either a barrier did not release, or the CTA finished, or the limit was met.
    Ran,
    /// Warp `warp`'s event `exit` was not taken (it is still light and runnable, for
    /// [`Warp::end_light_run`]): the warps before it exited or arrived in this phase, or had
    /// finished before it, after `ran` whole phases.
    Stopped {
        warp: usize,
        exit: GroupExit,
        ran: u32,
    },
}

/// Runs a CTA's **barrier phases** while every unfinished warp is light and runnable and no
/// barrier has arrivals: each warp's group in index order until it exits or arrives at a
/// barrier, then the release, then the next phase, up to `limit` phases (what is left of the
/// quantum's [`LaunchConfig::light_phases`](crate::exec::LaunchConfig::light_phases) rounds).
///
/// The warps go to the backend as a table ([`WarpRunner::run_phases`]; why a phase is exactly
/// a general round of a quantum is in `crate::exec::phases`), and come back light (running or
/// waiting) or finished. The CTA's count of live lanes may be left stale, and marked so, where
/// a general round would have recounted it (every reader recounts a stale count). The
/// arrivals' lane counts, which the CTA's list of barriers keeps, are needed only when the
/// phases end other than by a release (arrivals at two ids, or an event not taken), and are
/// then added from the waiting warps. Going on into the next phase within the quantum is what
/// the following quantum would do, minus its setup, and the worker's other CTAs simply run
/// later (any interleaving of CTAs is a valid schedule). Both backends go through here, so the
/// schedule is the same for each. What it saves is the bookkeeping of a quantum and of a run of
/// light warps for every warp and every phase, and, in the JIT, every check of a group handed
/// over alone: a kernel like `hist_shared` (two barriers, eight warps) runs each CTA in one
/// quantum, one backend call for its three phases.
fn light_phases(
    warps: &mut [Warp],
    (barriers, live_stale): (&mut Vec<(u32, u32)>, &mut bool),
    (runner, cache, env): (&dyn WarpRunner, &mut RunnerCache, &CtaEnv),
    (counters, limit): (&mut ScheduleCounters, u32),
) -> Phases {
    if !warps.iter().all(|w| w.runs_light() || w.is_finished())
        || !warps.iter().any(Warp::runs_light)
    {
        return Phases::NotLight;
    }
    let run = with_phase_table(warps, |states, groups| {
        // SAFETY: `Cta::quantum` prepared `cache` for `env` (`Warp::step`'s contract).
        unsafe { runner.run_phases(cache, env, (states, groups), limit) }
    });
    counters.barrier_releases += u64::from(run.releases);
    if run.retired {
        *live_stale = true;
    }
    match run.end {
        PhasesEnd::Ran => {
            // Warps still waiting (the last phase's arrivals were at two ids) go to the CTA's
            // list, where the general path finds them and reports the deadlock; after a
            // release, or when every warp exited, none waits.
            add_arrivals(barriers, warps);
            Phases::Ran
        }
        PhasesEnd::Stopped { warp, exit, ran } => {
            add_arrivals(barriers, &warps[..warp]);
            Phases::Stopped { warp, exit, ran }
        }
    }
}

/// How many warps a CTA's phase table holds on the stack; a CTA of more warps (a kernel whose
/// warps are narrower than 32 lanes) builds its table on the heap.
#[cfg(not(test))]
const STACK_PHASE_WARPS: usize = 32;
/// Three in the unit tests, whose CTAs of three and four warps then take both paths.
#[cfg(test)]
const STACK_PHASE_WARPS: usize = 3;

/// Runs `f` on the phase table of `warps` (each warp's state and its [`PhaseGroup`]), then
/// gives each warp back its group.
#[inline(always)]
fn with_phase_table<R>(
    warps: &mut [Warp],
    f: impl FnOnce(&mut [Option<&mut WarpState>], &mut [PhaseGroup]) -> R,
) -> R {
    let n = warps.len();
    let mut stack = [PhaseGroup::FINISHED; STACK_PHASE_WARPS];
    let mut heap = Vec::new();
    let groups = if n <= STACK_PHASE_WARPS {
        &mut stack[..n]
    } else {
        heap.resize(n, PhaseGroup::FINISHED);
        &mut heap[..]
    };
    for (group, warp) in groups.iter_mut().zip(warps.iter()) {
        *group = warp.phase_group();
    }
    let result = {
        let mut states = warps.iter_mut().map(|w| Some(&mut w.state));
        if n <= STACK_PHASE_WARPS {
            let mut table: [Option<&mut WarpState>; STACK_PHASE_WARPS] =
                std::array::from_fn(|_| states.next().flatten());
            f(&mut table[..n], groups)
        } else {
            f(&mut states.collect::<Vec<_>>(), groups)
        }
    };
    for (warp, &group) in warps.iter_mut().zip(groups.iter()) {
        warp.set_phase_group(group);
    }
    result
}

/// Adds the arrivals of the warps waiting at a barrier to a CTA's list of barriers with
/// arrivals (which held none of theirs).
fn add_arrivals(barriers: &mut Vec<(u32, u32)>, warps: &[Warp]) {
    for warp in warps {
        if let Some((id, lanes)) = warp.waiting_light() {
            add_arrival(barriers, id, lanes);
        }
    }
}

/// The lanes of `warps` that have not exited.
fn count_live(warps: &[Warp]) -> u32 {
    warps.iter().map(|w| w.state.live().count_ones()).sum()
}

/// Releases every barrier of a CTA at which all `live_lanes` live lanes wait.
fn release_barriers(
    barriers: &mut Vec<(u32, u32)>,
    live_lanes: u32,
    warps: &mut [Warp],
    counters: &mut ScheduleCounters,
) {
    let mut i = 0;
    while i < barriers.len() {
        let (id, waiting) = barriers[i];
        if waiting >= live_lanes {
            barriers.remove(i);
            counters.barrier_releases += 1;
            for warp in warps.iter_mut() {
                warp.release_barrier(id, counters);
            }
        } else {
            i += 1;
        }
    }
}
