//! The multi-threaded CTA scheduler: [`launch`] runs a kernel's grid on host threads.
//!
//! # Workers and resident CTAs
//!
//! A launch starts `threads` workers (capped at the number of CTAs; one in deterministic mode).
//! Workers take CTA linear indices from a shared atomic counter (x fastest, then y, then z) and
//! keep up to [`RESIDENT_CTAS_PER_WORKER`] CTAs *resident*. A worker round-robins its resident
//! CTAs: it runs one quantum of a CTA (every warp with a runnable group runs one group until its
//! next event, and while the CTA's warps have not diverged, up to [`LIGHT_PHASES_PER_QUANTUM`]
//! barrier phases; see `cta.rs`), then one quantum of the next CTA. So CTAs that wait on each
//! other, e.g. a spin lock between CTAs, make progress even on one host thread as long as they are
//! co-resident, as on a GPU. When every resident CTA of a worker has waited for two rounds
//! (spinning without changing a register, or blocked), the worker doubles its resident CTAs, up to
//! what the emulated GPU keeps resident at once (`residency.rs`: an H100's occupancy for the
//! kernel's block and shared memory sizes); CTAs that wait for a CTA that could not be resident
//! even then wait, as on a GPU, until the watchdog ends the launch. A finished CTA is replaced by
//! the next one from the counter; its allocations (registers, shared window, the backend's per-CTA
//! cache) are reused. The shared window is zeroed; of the registers only those the kernel may read
//! before writing them ([`crate::valid::KernelInfo::written_before_read`]) are zeroed, since no
//! program can observe the others; predicates are always zeroed.
//!
//! # The hot path
//!
//! Most kernels run every warp from pc 0 to `EXIT` in one group, and for them the per-warp host
//! work is kept small (measured on `counter`: about 240 host instructions per warp, the JIT's
//! call setup included, from about 810): the CTA environment is built once per quantum and the
//! backend prepares its per-CTA state once per quantum ([`crate::exec::WarpRunner::prepare_cta`];
//! the JIT builds its call context there, so a call only sets the per-warp fields); a *light*
//! warp's one group (every live lane, nothing diverged: every warp at launch, and every warp a
//! barrier releases in that shape) is kept apart from the group list, and a warp with one group
//! and no join skips the group search and the divergence bookkeeping (`divergence.rs`); the
//! live-lane count is recounted only when a barrier needs it; warp counters accumulate in the
//! reused warps and are summed once per worker; resident CTAs are boxed so that moving them is a
//! pointer copy; a launch with one worker takes CTAs from the counter with a plain read and
//! write instead of a locked add. Every other event takes the general path, with the same
//! results and order.
//!
//! **Several warps per call.** The CTA hands each run of consecutive light, runnable warps to
//! the backend in one call ([`crate::exec::WarpRunner::run_warps`], through an object-safe view
//! of the warps, [`crate::exec::WarpRun`]: their groups' pcs and masks in one slice, and each
//! warp's state): the backend runs their groups one after the other. A warp that exits needs
//! nothing from the CTA; a warp that arrives at a barrier is offered to the scheduler
//! (`WarpRun::pass`), which records the arrival (the warp stays light, waiting) and lets the
//! run go on. That is exact because a barrier releases only when every live lane of the CTA
//! waits at it, and every later warp of the run still has live lanes that have not run yet: no
//! release check could succeed before the run's last warp. Any other event ends the run; the
//! CTA applies it exactly as a single step would (`Warp::ran_light`, shared with `Warp::step`'s
//! light path), then checks the barriers, and goes on with the next warp. So in a kernel
//! without divergence a CTA costs one backend call per barrier phase, not one per warp and
//! phase. The backend sees the same calls in the same order, so results, counters, traps and
//! the deterministic schedule are those of one warp per call. The JIT downcasts its cache and
//! checks it once per run; per warp it sets the warp's fields of the call context, calls the
//! code and tests the event (`src/jit/mod.rs`); the interpreter keeps the trait's default, one
//! warp at a time ([`crate::exec::run_warps_each`]).
//!
//! **Fresh CTAs back to back** (`fresh.rs`). For a kernel without shared memory, a worker
//! admits CTAs only when they are the next to run (its round has passed every resident CTA,
//! which is when a CTA admitted earlier would have run) and hands them to the backend in one
//! call ([`crate::exec::WarpRunner::run_fresh_ctas`]): CTA after CTA, each warp's launch group
//! on one warp state recycled as a reset would, until a group ends with anything but an exit.
//! That CTA becomes resident: it takes over the stopped warp's state, counts the warps before it
//! as exited, and its next quantum (which runs at once) applies the event and goes on with the
//! warps after it. A CTA that finishes in its first quantum thus never costs a reset, a
//! quantum's bookkeeping or a place in the resident list, and the JIT changes only the CTA index
//! of its call context between CTAs. The backend sees the same calls in the same order as
//! without it, so results, counters, traps and the deterministic schedule are unchanged (a test
//! compares the two schedules call by call). [`LaunchStats::fresh_ctas`] counts these CTAs.
//!
//! Workers are scoped `std::thread`s, not a rayon pool: a resident CTA is a long-lived state
//! machine that must be interleaved with the other resident CTAs until it finishes, which a
//! work-stealing pool of run-to-completion tasks does not give.
//!
//! Divergence inside a warp (groups, joins, forward progress) is described in `divergence.rs`;
//! barriers and deadlock detection in `cta.rs`.
//!
//! # Ending a launch early
//!
//! Workers check a shared abort flag between quanta. A trap, a provable deadlock, a timeout or
//! a panic records the launch's error (the first one recorded wins; in deterministic mode there
//! is one worker, so it is the first in program order) and raises the flag. The watchdog is the
//! workers themselves: every [`QUANTA_PER_CLOCK_CHECK`] quanta a worker reads the clock, and
//! when `config.timeout` has passed it ends the launch with a [`WatchdogReport`] naming every
//! unfinished warp of every resident CTA: each group's pc, lane mask and state ("running", "at
//! barrier", "waiting to reconverge") with the instruction's line and text. A panic in a worker
//! (a backend bug) is caught and reported as [`LaunchError::Config`] "internal error: ...".
//!
//! # Determinism
//!
//! With `deterministic`, one worker runs the CTAs in linear order with the fixed warp and group
//! order of `cta.rs` and `divergence.rs`, so every run makes the same calls to the backend in
//! the same order, and results are bit-identical run to run.

mod cta;
mod divergence;
mod fresh;
mod residency;
mod single;
#[cfg(test)]
mod tests;

use super::{
    GlobalMemory, Stats, StuckWarp, Trap, TrapInfo, WarpRunner, WarpState, WatchdogKind,
    WatchdogReport, SHARED_WINDOW_BYTES,
};
use crate::ir::surface::SurfaceHeader;
use crate::ir::{Kernel, LaunchSpec, MAX_BLOCK_THREADS};
use crate::valid::KernelInfo;
use cta::{Cta, Quantum};
use divergence::ScheduleCounters;
use fresh::FreshCtas;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub use cta::LIGHT_PHASES_PER_QUANTUM;
pub use single::CtaRunner;

/// CTAs a worker keeps resident and interleaves from the start. Four lets a handful of CTAs
/// that wait on each other progress on a single host thread, while keeping the per-worker
/// memory (register files and shared windows of resident CTAs) small; a worker whose resident
/// CTAs all wait takes more (see `residency.rs`).
pub const RESIDENT_CTAS_PER_WORKER: usize = 4;

/// Rounds (a quantum of each resident CTA) in which every resident CTA of a worker waited and
/// some group was seen spinning, with no round in between in which a CTA moved, before the
/// worker makes more CTAs resident.
pub const WAITING_ROUNDS_BEFORE_GROWTH: u32 = 2;

/// How many quanta a worker runs between two reads of the clock for the watchdog.
pub const QUANTA_PER_CLOCK_CHECK: u64 = 16;

/// How to run a launch.
#[derive(Debug, Clone)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    /// Host worker threads; 0 means one per available core. Capped at the number of CTAs.
    pub threads: usize,
    /// One worker, fixed CTA and warp order: bit-identical results run to run.
    pub deterministic: bool,
    /// The watchdog ends the launch after this long (`None`: no limit).
    pub timeout: Option<Duration>,
    /// How many barrier phases of a CTA whose warps all run without divergence one quantum
    /// runs at most ([`LIGHT_PHASES_PER_QUANTUM`] by default; see `cta.rs`). 0 turns that path
    /// off, so every quantum is one general round, to compare.
    pub light_phases: u32,
}

impl LaunchConfig {
    /// A launch of `grid` CTAs of `block` threads with `shared_bytes` of shared memory each, on
    /// every available core, not deterministic, without a timeout.
    pub fn new(grid: [u32; 3], block: [u32; 3], shared_bytes: u32) -> LaunchConfig {
        LaunchConfig {
            grid,
            block,
            shared_bytes,
            threads: 0,
            deterministic: false,
            timeout: None,
            light_phases: LIGHT_PHASES_PER_QUANTUM,
        }
    }

    /// The launch shape a program file declares (see [`LaunchConfig::new`] for the rest).
    pub fn from_spec(spec: &LaunchSpec) -> LaunchConfig {
        LaunchConfig::new(spec.grid, spec.block, spec.shared_bytes)
    }

    /// Sets the number of worker threads (0: one per core).
    pub fn threads(&mut self, threads: usize) -> &mut Self {
        self.threads = threads;
        self
    }

    /// Sets how many light barrier phases a quantum runs at most (0: none, see
    /// [`LaunchConfig::light_phases`]).
    pub fn light_phases(&mut self, phases: u32) -> &mut Self {
        self.light_phases = phases;
        self
    }

    /// Selects the deterministic schedule.
    pub fn deterministic(&mut self, deterministic: bool) -> &mut Self {
        self.deterministic = deterministic;
        self
    }

    /// Sets the watchdog timeout.
    pub fn timeout(&mut self, timeout: Option<Duration>) -> &mut Self {
        self.timeout = timeout;
        self
    }
}

/// What a finished launch reports.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LaunchStats {
    /// Every warp's counters, summed.
    pub stats: Stats,
    pub wall: Duration,
    /// Worker threads actually used.
    pub threads: usize,
    /// CTAs run.
    pub ctas: u64,
    /// Threads (lanes) launched: CTAs times threads per CTA.
    pub lanes: u64,
    /// Quanta run (one quantum: each runnable warp of a CTA runs one group once, and while no
    /// warp of it has diverged, up to [`LaunchConfig::light_phases`] barrier phases).
    pub quanta: u64,
    /// Groups that yielded at a backward branch.
    pub yields: u64,
    /// Divergent branches (a group split in two).
    pub divergences: u64,
    /// Joins completed: diverged lanes merged again at a reconvergence point.
    pub reconvergences: u64,
    /// Joins dissolved to guarantee forward progress (see `divergence.rs`).
    pub dissolved_joins: u64,
    /// Barrier releases.
    pub barrier_releases: u64,
    /// Yields at which a group was seen spinning (and backed off, see `divergence.rs`).
    pub spins: u64,
    /// Divergent branches the backend ran past instead of returning them
    /// (`WarpRunner::run_group_splitting`), also counted in `divergences`.
    pub splits: u64,
    /// CTAs whose first quantum ran back to back with other fresh CTAs, without the CTA being
    /// made resident first (`fresh.rs`; kernels without shared memory). Those that did not
    /// finish in it were made resident then.
    pub fresh_ctas: u64,
    /// The most CTAs the workers were allowed to keep resident at once: their starting places,
    /// plus what workers whose CTAs all waited took (see `residency.rs`).
    pub resident_limit: u64,
}

/// A launch that did not finish: why, and what ran before it stopped ([`launch_counted`]).
#[derive(Debug, Clone)]
pub struct FailedLaunch {
    pub error: LaunchError,
    /// The counters of every warp that ran (finished CTAs and those still resident), the
    /// CTAs that finished, and the time from the start of the launch until it stopped.
    pub ran: LaunchStats,
}

impl std::fmt::Display for FailedLaunch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for FailedLaunch {}

/// Why a launch did not finish.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LaunchError {
    #[error("{0}")]
    Trap(Box<Trap>),
    #[error("{0}")]
    Watchdog(Box<WatchdogReport>),
    #[error("invalid launch: {0}")]
    Config(String),
}

/// Everything about a launch that every worker reads.
pub(crate) struct LaunchContext<'a> {
    kernel: &'a Kernel,
    info: &'a KernelInfo,
    runner: &'a dyn WarpRunner,
    global: &'a GlobalMemory,
    cbank: &'a [u8],
    surfaces: &'a [SurfaceHeader],
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: u32,
    cta_threads: u32,
    warp_size: u32,
    warps_per_cta: u32,
    ctas: u64,
    resident_per_worker: usize,
    /// The most CTAs of the launch resident at once on all workers together (at least every
    /// worker's starting places).
    resident_cap: usize,
    deadline: Option<Instant>,
    /// [`LaunchConfig::light_phases`].
    light_phases: u32,
    /// Register words a reused warp must zero before its next CTA (see
    /// [`crate::valid::KernelInfo::written_before_read`]).
    zero_ranges: Vec<std::ops::Range<usize>>,
    /// The lanes of each warp of a CTA ([`WarpState::lane_mask`]).
    lane_masks: Vec<u32>,
}

impl<'a> LaunchContext<'a> {
    /// The context of a launch of `kernel` with `config`, whose shape `check_config` accepted.
    fn new(
        (kernel, info, runner): (&'a Kernel, &'a KernelInfo, &'a dyn WarpRunner),
        (global, cbank, surfaces): (&'a GlobalMemory, &'a [u8], &'a [SurfaceHeader]),
        config: &LaunchConfig,
        shape: &Shape,
        resident_per_worker: usize,
        deadline: Option<Instant>,
    ) -> LaunchContext<'a> {
        LaunchContext {
            kernel,
            info,
            runner,
            global,
            cbank,
            surfaces,
            grid: config.grid,
            block: config.block,
            shared_bytes: config.shared_bytes,
            cta_threads: shape.cta_threads,
            warp_size: kernel.warp_size,
            warps_per_cta: shape.cta_threads.div_ceil(kernel.warp_size),
            ctas: shape.ctas,
            resident_per_worker,
            resident_cap: resident_per_worker,
            deadline,
            light_phases: config.light_phases,
            zero_ranges: WarpState::zero_ranges(kernel.num_regs, info.written_before_read()),
            lane_masks: (0..shape.cta_threads.div_ceil(kernel.warp_size))
                .map(|w| WarpState::lane_mask(shape.cta_threads, kernel.warp_size, w))
                .collect(),
        }
    }

    /// The `(x, y, z)` grid index of CTA `linear` (x fastest).
    fn cta_index(&self, linear: u64) -> [u32; 3] {
        let [gx, gy, _] = self.grid.map(u64::from);
        [
            (linear % gx) as u32,
            ((linear / gx) % gy) as u32,
            (linear / (gx * gy)) as u32,
        ]
    }

    /// The launch error's message when the host refuses `bytes` of `what` for a CTA.
    fn refused(&self, bytes: u64, what: &str) -> String {
        format!(
            "kernel `{}`: cannot allocate {bytes} bytes of {what} for a CTA: the host allocator refused",
            self.kernel.name
        )
    }

    /// Source line and text of instruction `pc` (line 0 and a note if there is none).
    fn inst_line_and_text(&self, pc: u32) -> (u32, String) {
        match self.kernel.insts.get(pc as usize) {
            Some(inst) => (inst.span.line, inst.text.clone()),
            None => (0, format!("<no instruction {pc}>")),
        }
    }

    fn trap(&self, cta: [u32; 3], warp: u32, info: TrapInfo) -> Trap {
        let (line, inst) = self.inst_line_and_text(info.pc);
        Trap {
            reason: info.reason,
            kernel: self.kernel.name.clone(),
            pc: info.pc,
            line,
            inst,
            cta,
            warp,
            lane: info.lane,
            space: info.space,
            address: info.address,
            surface: info.surface,
        }
    }
}

/// Why the launch is ending early.
enum Failure {
    Error(LaunchError),
    /// The watchdog timeout passed; the report is assembled from every worker's CTAs.
    Timeout,
}

/// State the workers share.
struct Shared {
    next_cta: AtomicU64,
    /// The launch has one worker: nobody else takes CTAs from `next_cta`.
    one_worker: bool,
    /// Resident places beyond the workers' starting ones still free (see `residency.rs`).
    spare_places: AtomicUsize,
    /// Resident places workers took from `spare_places`.
    taken_places: AtomicUsize,
    abort: AtomicBool,
    failure: Mutex<Option<Failure>>,
    /// Unfinished warps of the CTAs resident when the launch was aborted, with CTA linear index.
    stuck: Mutex<Vec<(u64, StuckWarp)>>,
}

impl Shared {
    /// Records `failure` unless one is recorded already, and stops every worker.
    fn fail(&self, failure: Failure) {
        let mut slot = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(failure);
        }
        self.abort.store(true, Ordering::Release);
    }

    fn next_cta(&self, ctas: u64) -> Option<u64> {
        if self.abort.load(Ordering::Relaxed) {
            return None;
        }
        let linear = if self.one_worker {
            // A plain read and write: a locked add costs more than the rest of a CTA of a small
            // kernel's turn at the counter, and only this thread writes it.
            let linear = self.next_cta.load(Ordering::Relaxed);
            self.next_cta
                .store(linear.wrapping_add(1), Ordering::Relaxed);
            linear
        } else {
            self.next_cta.fetch_add(1, Ordering::Relaxed)
        };
        (linear < ctas).then_some(linear)
    }

    /// Takes up to `wanted` spare resident places for a worker whose CTAs all wait; none when
    /// no CTA is left to start (the places would stay empty, and another worker may need them).
    fn take_places(&self, wanted: usize, ctas: u64) -> usize {
        if self.next_cta.load(Ordering::Relaxed) >= ctas {
            return 0;
        }
        let taken = self
            .spare_places
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |spare| {
                (spare > 0).then(|| spare - spare.min(wanted))
            })
            .map_or(0, |spare| spare.min(wanted));
        self.taken_places.fetch_add(taken, Ordering::Relaxed);
        taken
    }
}

/// What one worker did.
#[derive(Default)]
struct WorkerTotals {
    stats: Stats,
    counters: ScheduleCounters,
    ctas: u64,
    /// CTAs whose first quantum ran in a run of fresh CTAs.
    fresh: u64,
    /// The worker stopped early with a CTA that had moved (ran a group that was not waiting,
    /// or finished) in its last round: the launch was still progressing.
    moving: bool,
}

/// Runs `kernel` over the grid of `config` with `runner` as the backend.
///
/// `cbank` is constant bank 0 as the backend reads it (launch geometry and parameters), and
/// `surfaces` the launch's surface header pool (empty without surfaces). Global
/// memory is shared by every CTA; each CTA gets its own zeroed shared window of
/// `config.shared_bytes`. Returns the summed statistics, or the first trap, watchdog report or
/// configuration error ([`launch_counted`] also gives what ran before a failure).
pub fn launch(
    kernel: &Kernel,
    info: &KernelInfo,
    runner: &dyn WarpRunner,
    global: &GlobalMemory,
    cbank: &[u8],
    surfaces: &[SurfaceHeader],
    config: &LaunchConfig,
) -> Result<LaunchStats, LaunchError> {
    launch_counted((kernel, info, runner), (global, cbank, surfaces), config).map_err(|f| f.error)
}

/// [`launch`], with what ran before a failure: the counters of every warp that ran, the CTAs
/// that finished and the time until the launch stopped, so a report after a trap or the
/// watchdog tells how much work was done.
pub fn launch_counted(
    program: (&Kernel, &KernelInfo, &dyn WarpRunner),
    memory: (&GlobalMemory, &[u8], &[SurfaceHeader]),
    config: &LaunchConfig,
) -> Result<LaunchStats, Box<FailedLaunch>> {
    launch_with_cap(program, memory, config, None)
}

/// [`launch`], with the most CTAs resident at once set to `cap` instead of the emulated GPU's
/// (tests use a small GPU).
fn launch_with_cap(
    (kernel, info, runner): (&Kernel, &KernelInfo, &dyn WarpRunner),
    (global, cbank, surfaces): (&GlobalMemory, &[u8], &[SurfaceHeader]),
    config: &LaunchConfig,
    cap: Option<usize>,
) -> Result<LaunchStats, Box<FailedLaunch>> {
    let start = Instant::now();
    let shape = check_config(kernel, config).map_err(|error| {
        Box::new(FailedLaunch {
            error,
            ran: LaunchStats::default(),
        })
    })?;
    let threads = if config.deterministic {
        1
    } else {
        let wanted = match config.threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        wanted
            .min(usize::try_from(shape.ctas).unwrap_or(usize::MAX))
            .max(1)
    };
    let resident =
        (shape.ctas.div_ceil(threads as u64) as usize).clamp(1, RESIDENT_CTAS_PER_WORKER);
    let deadline = config.timeout.and_then(|t| start.checked_add(t));
    let mut ctx = LaunchContext::new(
        (kernel, info, runner),
        (global, cbank, surfaces),
        config,
        &shape,
        resident,
        deadline,
    );
    let starting = threads * resident;
    ctx.resident_cap = cap
        .unwrap_or_else(|| residency::resident_cap(&ctx))
        .max(starting);
    let shared = Shared {
        next_cta: AtomicU64::new(0),
        one_worker: threads == 1,
        spare_places: AtomicUsize::new(ctx.resident_cap - starting),
        taken_places: AtomicUsize::new(0),
        abort: AtomicBool::new(false),
        failure: Mutex::new(None),
        stuck: Mutex::new(Vec::new()),
    };

    let (totals, threads_used) = if threads == 1 {
        (vec![run_worker_guarded(&ctx, &shared)], 1)
    } else {
        std::thread::scope(|scope| {
            let (ctx, shared) = (&ctx, &shared);
            let mut handles = Vec::with_capacity(threads - 1);
            for i in 1..threads {
                let spawned = std::thread::Builder::new()
                    .name(format!("atomjit-worker-{i}"))
                    .spawn_scoped(scope, move || run_worker_guarded(ctx, shared));
                match spawned {
                    Ok(handle) => handles.push(handle),
                    // The host refused another thread: run with the workers we have.
                    Err(_) => break,
                }
            }
            let used = handles.len() + 1;
            let mut totals = vec![run_worker_guarded(ctx, shared)];
            for handle in handles {
                // Workers catch their own panics, so joining cannot fail; be safe anyway.
                totals.push(handle.join().unwrap_or_default());
            }
            (totals, used)
        })
    };

    let resident_limit = starting + shared.taken_places.load(Ordering::Relaxed);
    let mut stats = Stats::default();
    let mut counters = ScheduleCounters::default();
    let (mut ctas, mut fresh_ctas) = (0, 0);
    for t in &totals {
        stats.add(&t.stats);
        counters.add(&t.counters);
        ctas += t.ctas;
        fresh_ctas += t.fresh;
    }
    let ran = LaunchStats {
        stats,
        wall: start.elapsed(),
        threads: threads_used,
        ctas,
        lanes: ctas * u64::from(shape.cta_threads),
        quanta: counters.quanta,
        yields: counters.yields,
        divergences: counters.divergences,
        reconvergences: counters.reconvergences,
        dissolved_joins: counters.dissolved_joins,
        barrier_releases: counters.barrier_releases,
        spins: counters.spins,
        splits: counters.splits,
        fresh_ctas,
        resident_limit: resident_limit as u64,
    };
    let failed = |error| {
        Err(Box::new(FailedLaunch {
            error,
            ran: ran.clone(),
        }))
    };
    let failure = shared
        .failure
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    match failure {
        Some(Failure::Error(error)) => return failed(error),
        Some(Failure::Timeout) => {
            let mut stuck = shared.stuck.into_inner().unwrap_or_else(|e| e.into_inner());
            stuck.sort_by_key(|(linear, warp)| (*linear, warp.warp));
            let timeout = config.timeout.unwrap_or_default();
            let mut resident: Vec<u64> = stuck.iter().map(|(linear, _)| *linear).collect();
            resident.dedup();
            let room = if resident_limit >= ctx.resident_cap {
                format!(
                    "the most the emulated GPU keeps resident for this kernel is {}",
                    ctx.resident_cap
                )
            } else {
                format!("{resident_limit} were allowed")
            };
            let progressing = totals.iter().any(|t| t.moving);
            let how = if progressing {
                "CTAs were still running"
            } else {
                "every resident CTA was waiting (spinning on memory or blocked) in its last round"
            };
            return failed(LaunchError::Watchdog(Box::new(WatchdogReport {
                kernel: kernel.name.clone(),
                kind: WatchdogKind::TimeLimit,
                progressing,
                cause: format!(
                    "no completion after {}s ({ctas} of {} CTAs finished, {} resident: {room}; {how})",
                    timeout.as_secs_f64(),
                    shape.ctas,
                    resident.len(),
                ),
                stuck: stuck.into_iter().map(|(_, warp)| warp).collect(),
            })));
        }
        None => {}
    }
    if ctas != shape.ctas {
        return failed(LaunchError::Config(format!(
            "internal error: {ctas} of {} CTAs finished although no worker failed",
            shape.ctas
        )));
    }
    Ok(ran)
}

/// The checked launch shape.
struct Shape {
    ctas: u64,
    cta_threads: u32,
}

/// Rejects launches no GPU would accept, with a message saying which limit is broken.
fn check_config(kernel: &Kernel, config: &LaunchConfig) -> Result<Shape, LaunchError> {
    let err = |msg: String| Err(LaunchError::Config(msg));
    if config.grid.contains(&0) {
        let [x, y, z] = config.grid;
        return err(format!(
            "grid ({x},{y},{z}) has a zero dimension; every dimension must be at least 1"
        ));
    }
    if config.block.contains(&0) {
        let [x, y, z] = config.block;
        return err(format!(
            "block ({x},{y},{z}) has a zero dimension; every dimension must be at least 1"
        ));
    }
    let cta_threads = config
        .block
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)));
    let cta_threads = match cta_threads {
        Some(n) if n <= u64::from(MAX_BLOCK_THREADS) => n as u32,
        _ => {
            let [x, y, z] = config.block;
            return err(format!(
                "block ({x},{y},{z}) has {} threads; a CTA has at most {MAX_BLOCK_THREADS}",
                u128::from(x) * u128::from(y) * u128::from(z)
            ));
        }
    };
    let Some(ctas) = config
        .grid
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(u64::from(d)))
    else {
        let [x, y, z] = config.grid;
        return err(format!(
            "grid ({x},{y},{z}) has more CTAs than a 64-bit count holds"
        ));
    };
    if config.shared_bytes > SHARED_WINDOW_BYTES {
        return err(format!(
            "{} bytes of shared memory per CTA exceed the {SHARED_WINDOW_BYTES}-byte (16 MB) shared window",
            config.shared_bytes
        ));
    }
    if !(1..=32).contains(&kernel.warp_size) {
        return err(format!(
            "kernel `{}` has warp size {}; it must be 1 to 32",
            kernel.name, kernel.warp_size
        ));
    }
    if kernel.insts.is_empty() {
        return err(format!("kernel `{}` has no instructions", kernel.name));
    }
    Ok(Shape { ctas, cta_threads })
}

/// Runs a worker, turning a panic into an error of the launch.
fn run_worker_guarded(ctx: &LaunchContext, shared: &Shared) -> WorkerTotals {
    match catch_unwind(AssertUnwindSafe(|| run_worker(ctx, shared))) {
        Ok(totals) => totals,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            shared.fail(Failure::Error(LaunchError::Config(format!(
                "internal error: a scheduler worker panicked: {message}"
            ))));
            WorkerTotals::default()
        }
    }
}

/// One worker: keeps up to `ctx.resident_per_worker` CTAs resident (more when they all wait,
/// see `residency.rs`) and runs them a quantum at a time, round-robin, until the grid is done
/// or the launch is aborted.
///
/// CTAs are boxed so that moving them between the resident and spare lists moves a pointer,
/// and a finished CTA's warps keep their counters: they accumulate over every CTA the
/// allocation runs and are summed once, when the worker ends.
fn run_worker(ctx: &LaunchContext, shared: &Shared) -> WorkerTotals {
    let mut totals = WorkerTotals::default();
    let mut limit = ctx.resident_per_worker;
    let mut resident: Vec<Box<Cta>> = Vec::with_capacity(limit);
    let mut spare: Vec<Box<Cta>> = Vec::new();
    let mut turn = 0;
    let mut quanta = 0u64;
    // In the current round: how many quanta ended waiting, whether a CTA finished, whether some
    // group looked at memory and found nothing new; and how many rounds in a row every CTA
    // waited with a spinner among them (rounds in which every waiting group sat out a back-off
    // tell nothing either way). A quantum that moves costs nothing here.
    let (mut waited, mut finished, mut spun) = (0usize, false, false);
    let mut waiting_rounds = 0u32;
    // Whether a CTA moved in the last complete round (for the watchdog's report).
    let mut moved_last_round = false;
    let mut fresh = match FreshCtas::for_launch(ctx) {
        Some(Err(message)) => {
            shared.fail(Failure::Error(LaunchError::Config(message)));
            return totals;
        }
        fresh => fresh.and_then(Result::ok),
    };
    loop {
        if shared.abort.load(Ordering::Acquire) {
            break;
        }
        while resident.len() < limit {
            // With fresh runs (`fresh.rs`), CTAs are admitted when they are the next to run
            // (`turn` is past every resident CTA), which is when a CTA admitted earlier would
            // have run: they run back to back while each finishes in its first quantum, and
            // the first that does not becomes resident and runs the rest of that quantum next.
            let stopped = match fresh.as_mut() {
                Some(_) if turn != resident.len() => break,
                Some(fresh) => {
                    let batch = fresh.run(ctx, shared);
                    totals.ctas += batch.finished;
                    totals.fresh += batch.finished + u64::from(batch.stop.is_some());
                    totals.counters.quanta += batch.finished;
                    finished |= batch.finished > 0;
                    quanta += batch.finished;
                    if let Some(message) = batch.broken {
                        shared.fail(Failure::Error(LaunchError::Config(format!(
                            "internal error in kernel `{}`: {message}",
                            ctx.kernel.name
                        ))));
                        break;
                    }
                    if batch.timed_out {
                        // CTAs finished in the run until the deadline: still progressing.
                        totals.moving = true;
                        shared.fail(Failure::Timeout);
                        break;
                    }
                    match batch.stop {
                        Some(stop) => Some(stop),
                        // The counter ran out.
                        None => break,
                    }
                }
                _ => None,
            };
            let linear = match stopped {
                Some((linear, _, _)) => linear,
                None => match shared.next_cta(ctx.ctas) {
                    Some(linear) => linear,
                    None => break,
                },
            };
            let mut cta = match spare.pop() {
                Some(mut cta) => {
                    cta.reset(ctx, linear);
                    cta
                }
                None => match Cta::try_new(ctx, linear) {
                    Ok(cta) => Box::new(cta),
                    Err(message) => {
                        shared.fail(Failure::Error(LaunchError::Config(message)));
                        break;
                    }
                },
            };
            if let (Some((_, warp, exit)), Some(fresh)) = (stopped, fresh.as_mut()) {
                cta.adopt_fresh(warp, exit, &mut fresh.state);
            }
            resident.push(cta);
        }
        if resident.is_empty() {
            break;
        }
        if turn >= resident.len() {
            turn = 0;
            moved_last_round = finished || waited < resident.len();
            if moved_last_round {
                waiting_rounds = 0;
            } else if spun {
                waiting_rounds += 1;
            }
            (waited, finished, spun) = (0, false, false);
            if waiting_rounds >= WAITING_ROUNDS_BEFORE_GROWTH {
                // Every resident CTA waits: make more resident, as the GPU would have.
                waiting_rounds = 0;
                limit += shared.take_places(limit, ctx.ctas);
                if resident.len() < limit {
                    continue;
                }
            }
        }
        let cta = &mut resident[turn];
        match cta.quantum(ctx) {
            Quantum::Running => turn += 1,
            Quantum::Waiting { spun: spinning } => {
                waited += 1;
                spun |= spinning;
                turn += 1;
            }
            Quantum::Finished => {
                finished = true;
                let cta = resident.remove(turn);
                totals.counters.add(&cta.counters);
                totals.ctas += 1;
                spare.push(cta);
            }
            Quantum::Trap { warp, info } => {
                let trap = ctx.trap(cta.index, warp, info);
                shared.fail(Failure::Error(LaunchError::Trap(Box::new(trap))));
                break;
            }
            Quantum::Deadlock(cause) => {
                let report = WatchdogReport {
                    kernel: ctx.kernel.name.clone(),
                    kind: WatchdogKind::Deadlock,
                    progressing: false,
                    cause,
                    stuck: cta.stuck_warps(ctx),
                };
                shared.fail(Failure::Error(LaunchError::Watchdog(Box::new(report))));
                break;
            }
            Quantum::Internal(message) => {
                let [x, y, z] = cta.index;
                shared.fail(Failure::Error(LaunchError::Config(format!(
                    "internal error in kernel `{}`, CTA ({x},{y},{z}): {message}",
                    ctx.kernel.name
                ))));
                break;
            }
        }
        quanta += 1;
        if let Some(deadline) = ctx.deadline {
            if quanta % QUANTA_PER_CLOCK_CHECK == 0 && Instant::now() >= deadline {
                shared.fail(Failure::Timeout);
                break;
            }
        }
    }
    if shared.abort.load(Ordering::Acquire) && !resident.is_empty() {
        // In the round under way, `turn - waited` quanta moved (finished CTAs left it).
        totals.moving = moved_last_round || finished || turn > waited;
        let mut stuck = shared.stuck.lock().unwrap_or_else(|e| e.into_inner());
        for cta in &resident {
            stuck.extend(cta.stuck_warps(ctx).into_iter().map(|w| (cta.linear, w)));
        }
    }
    // Counters of finished CTAs stay in their (reused) warps; a launch that stopped early also
    // reports the work of the CTAs still resident (a reused CTA's warps hold both).
    for cta in spare.iter().chain(&resident) {
        totals.stats.add(&cta.stats());
    }
    if let Some(fresh) = &fresh {
        totals.stats.add(&fresh.state.stats);
    }
    for cta in &resident {
        totals.counters.add(&cta.counters);
    }
    totals
}
