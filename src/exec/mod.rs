//! The executor: memory, warp state, the backend interface, and the multi-threaded CTA
//! scheduler.
//!
//! # How a launch runs
//!
//! [`launch`] runs the grid's CTAs on a pool of host threads. Each worker keeps a few CTAs
//! *resident* and interleaves them, so CTAs that wait on each other (a spin lock between CTAs)
//! make progress even on one host thread; a worker whose CTAs all wait makes more resident, up
//! to what the emulated GPU holds at once. Spinning groups back off for random turns, so lanes,
//! warps or CTAs that wait on each other cannot be alternated into a livelock. A CTA is a set of warps; each warp is a resumable
//! state machine: a set of lane *groups* `(pc, mask)` (lanes that diverged run as separate
//! groups) and *joins* (reconvergence points, the immediate post-dominator of a divergent
//! branch, computed by [`crate::valid`]).
//!
//! The scheduler asks a backend ([`WarpRunner`]) to run one group of one warp from its `pc`
//! until something the scheduler must see ([`GroupExit`]): all lanes exited, a yield at a
//! backward branch, a divergent branch, a barrier, the group's reconvergence point, or a trap.
//! Backends never see groups or joins; the scheduler never sees instructions. This is the seam
//! between `exec` and the two backends (`interp`, `jit`). Warps that have not diverged
//! are handed over several at a time ([`WarpRunner::run_warps`]): the backend runs each one's
//! group in turn and returns at the first whose event is neither an exit nor an arrival at a
//! barrier, so a kernel in which nothing diverges costs one backend call per run of warps and
//! per barrier. Where the scheduler would run a divergent branch's fall-through lanes next
//! anyway, a backend may run them in the same call ([`WarpRunner::run_group_splitting`]),
//! so a lock handed from lane to lane of a warp costs one call per hand-over.
//!
//! # Register file layout (shared with the JIT's generated code)
//!
//! [`WarpState::regs`] is structure-of-arrays: register `r` of lane `l` is
//! `regs[r * WARP_STRIDE + l]`. [`WarpState::preds`] holds one lane mask per predicate register.

pub mod memory;
mod phases;
pub mod random;
mod scheduler;
mod trap;
mod warp;

pub use memory::{AllocError, GlobalMemory, SharedMemory, GLOBAL_BASE, SHARED_WINDOW_BYTES};
pub use phases::{run_phases_with, PhaseGroup, PhasesEnd, PhasesRun};
pub use scheduler::{
    launch, launch_counted, CtaRunner, FailedLaunch, LaunchConfig, LaunchError, LaunchStats,
    LIGHT_PHASES_PER_QUANTUM,
};
pub use trap::{StuckWarp, SurfaceTrap, Trap, TrapInfo, TrapReason, WatchdogKind, WatchdogReport};
pub use warp::WarpState;

use crate::ir::{AtomicOp, Kernel};
use crate::valid::KernelInfo;

/// Register-file stride: lanes per register row. Every warp uses 32 slots per register so that
/// generated code can use one constant stride whatever the warp size.
pub const WARP_STRIDE: usize = 32;

/// Why a backend returned control to the scheduler after running one group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupExit {
    /// Every lane of the group has executed `EXIT` (the backend also set them in
    /// [`WarpState::exited`]).
    Exited,
    /// The group took a backward branch (uniformly); it continues at `pc` with `mask`. Lanes
    /// that exited on the way are in [`WarpState::exited`] and not in `mask`.
    Yield { pc: u32, mask: u32 },
    /// A conditional branch split the group (see [`Split`]).
    Diverge(Split),
    /// The group reached the barrier instruction at `pc`: it resumes at `pc + 1` once the
    /// barrier releases.
    Barrier { pc: u32, mask: u32, id: u32 },
    /// The group reached its `stop_pc` (its reconvergence point) without executing it.
    Reconverge { mask: u32 },
    /// A lane faulted. Lanes before it in the faulting instruction completed their effects.
    Trap(TrapInfo),
}

/// How a conditional branch split a group ([`GroupExit::Diverge`], or a branch a backend ran
/// past, [`WarpRunner::run_group_splitting`]): the branch at `branch_pc` sends the `taken`
/// lanes to `taken_pc` and the `fall` lanes to `fall_pc` (= `branch_pc + 1`). Both masks are
/// non-empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    pub branch_pc: u32,
    pub taken_pc: u32,
    pub taken: u32,
    pub fall_pc: u32,
    pub fall: u32,
}

/// Everything a backend needs to run warps of one CTA.
pub struct CtaEnv<'a> {
    pub kernel: &'a Kernel,
    pub info: &'a KernelInfo,
    pub global: &'a GlobalMemory,
    pub shared: &'a SharedMemory,
    /// Constant bank 0 (launch geometry and parameters, see [`crate::ir::LaunchSpec`]).
    pub cbank: &'a [u8],
    /// The launch's surface header pool, in declaration order (a handle's `headerPtr` indexes
    /// it; see [`crate::ir::surface::resolve`]).
    pub surfaces: &'a [crate::ir::surface::SurfaceHeader],
    pub ctaid: [u32; 3],
    pub ntid: [u32; 3],
    pub nctaid: [u32; 3],
}

/// A kernel prepared by a backend: runs one group of one warp at a time, or the groups of a run
/// of several warps of a CTA in one call ([`WarpRunner::run_warps`]).
pub trait WarpRunner: Send + Sync {
    /// Runs the lanes `mask` of `warp`, all at `pc`, until a [`GroupExit`] event. If `stop_pc`
    /// is `Some(p)`, the group stops *before* executing instruction `p` (returning
    /// [`GroupExit::Reconverge`]); the check applies at every instruction boundary, including
    /// the start (a group created at its own reconvergence point returns at once).
    fn run_group(
        &self,
        warp: &mut WarpState,
        env: &CtaEnv,
        pc: u32,
        mask: u32,
        stop_pc: Option<u32>,
    ) -> GroupExit;

    /// Prepares `cache` for running groups of the CTA `env` describes with
    /// [`WarpRunner::run_group_prepared`]. The scheduler keeps one slot per resident CTA and
    /// calls this at the start of every quantum of the CTA. A backend may keep there whatever
    /// it builds per CTA (the JIT keeps its call context) to save per-call setup. The slot may
    /// hold anything before (state from another CTA, launch or backend). The default does
    /// nothing.
    fn prepare_cta(&self, cache: &mut RunnerCache, env: &CtaEnv) {
        let _ = (cache, env);
    }

    /// [`WarpRunner::run_group`], with the state [`WarpRunner::prepare_cta`] left in `cache`;
    /// must behave exactly as `run_group`. The default ignores the slot.
    ///
    /// # Safety
    ///
    /// `cache` was last passed to `self.prepare_cta` with an environment equal to `env` (the
    /// same kernel, info and geometry, and the same shared window, global memory and constant
    /// bank, still alive, at the same addresses with the same lengths).
    unsafe fn run_group_prepared(
        &self,
        cache: &mut RunnerCache,
        warp: &mut WarpState,
        env: &CtaEnv,
        pc: u32,
        mask: u32,
        stop_pc: Option<u32>,
    ) -> GroupExit {
        let _ = cache;
        self.run_group(warp, env, pc, mask, stop_pc)
    }

    /// [`WarpRunner::run_group_prepared`] with no stop pc, allowed to run on past one
    /// divergent branch that pushes no join: a branch with no reconvergence point, or a
    /// backward branch in `spin_exits` (the warp's spin exits, see `scheduler/divergence.rs`),
    /// whose target is not the next instruction. At the first such branch that splits the
    /// group, the backend may, instead of returning [`GroupExit::Diverge`], record it and go on
    /// with the fall-through lanes alone from the next instruction; it then returns the
    /// [`Split`] and the event of the fall-through lanes' run. It must behave exactly as
    /// `run_group_prepared(.., pc, mask, None)` followed, when that returns the divergence, by
    /// `run_group_prepared(.., fall_pc, fall, None)`: the same effects, counters and events.
    /// At most one branch is run past per call.
    ///
    /// The scheduler calls it only where it would run the fall-through group next anyway (the
    /// warp has no join and no other runnable group, and its turn has room for two more
    /// events), so that a lock handed from lane to lane of a warp costs one call per hand-over
    /// instead of two. The default never runs past a branch.
    ///
    /// # Safety
    ///
    /// As for [`WarpRunner::run_group_prepared`].
    unsafe fn run_group_splitting(
        &self,
        cache: &mut RunnerCache,
        warp: &mut WarpState,
        env: &CtaEnv,
        pc: u32,
        mask: u32,
        spin_exits: &[u32],
    ) -> (Option<Split>, GroupExit) {
        let _ = spin_exits;
        // SAFETY: this function's contract is `run_group_prepared`'s.
        let exit = unsafe { self.run_group_prepared(cache, warp, env, pc, mask, None) };
        (None, exit)
    }

    /// Runs the groups of a *run* of warps ([`WarpRun`]: consecutive warps of one CTA, each
    /// with one group of all its live lanes at its own pc, no stop pc), one after the other in
    /// index order. After a warp whose group exits it goes on with the next. After any other
    /// event it offers the event to the scheduler ([`WarpRun::pass`]): if the scheduler takes
    /// it (an arrival at a barrier), the run goes on; if not, the backend stops and returns the
    /// event. Returns how many warps ran (at least one, unless the run is empty) and the last
    /// one's event when the scheduler did not take it (`None`: every warp that ran exited or
    /// had its event taken). A backend may also stop after any warp whose event was taken or
    /// which exited: the scheduler then offers the rest again.
    ///
    /// The scheduler calls it for each run of consecutive warps of a CTA that are *light* (one
    /// group of all live lanes, nothing diverged: every warp at launch, and every warp a
    /// barrier releases in that shape) in a general round, so that the run pays a backend's
    /// per-call cost (for the JIT: the downcast of `cache` and its checks) once, instead of
    /// once per warp. (A CTA whose unfinished warps are all light runs its barrier phases
    /// warp by warp instead, in the scheduler's tighter loop: see `cta.rs`.)
    ///
    /// Must behave exactly as [`WarpRunner::run_group_prepared`] called for each warp in
    /// turn, which is what the default does ([`run_warps_each`]): the same effects in the same
    /// order, the same counters, the same events.
    ///
    /// # Safety
    ///
    /// As for [`WarpRunner::run_group_prepared`].
    unsafe fn run_warps(
        &self,
        cache: &mut RunnerCache,
        run: &mut dyn WarpRun<'_>,
        env: &CtaEnv,
    ) -> (usize, Option<GroupExit>) {
        // SAFETY: this function's contract is `run_group_prepared`'s.
        unsafe { run_warps_each(self, cache, run, env) }
    }

    /// Runs up to `limit` **barrier phases** of a CTA whose unfinished warps are all light and
    /// runnable ([`run_phases_with`] over the table `(states, groups)`, warp `i`'s state and
    /// group; see `phases.rs`). Must behave exactly as [`WarpRunner::run_group_prepared`]
    /// called for each group in that order, which is what the default does. The JIT calls its
    /// generated code directly for each group, with none of the per-call checks a group
    /// handed over alone needs.
    ///
    /// # Safety
    ///
    /// As for [`WarpRunner::run_group_prepared`].
    unsafe fn run_phases(
        &self,
        cache: &mut RunnerCache,
        env: &CtaEnv,
        (states, groups): (&mut [Option<&mut WarpState>], &mut [PhaseGroup]),
        limit: u32,
    ) -> PhasesRun {
        // SAFETY: this function's contract is `run_group_prepared`'s.
        unsafe { run_phases_each(self, cache, env, (states, groups), limit) }
    }

    /// Runs *fresh* CTAs one after the other ([`FreshRun`]: each CTA the run hands out, from
    /// its launch, with every warp's launch group), in one call: for each CTA, with `env`'s
    /// fields but its own `ctaid`, each warp's group in index order on the run's one state,
    /// recycled for that warp first ([`WarpState::recycle`] with the warp's index and lanes
    /// and the run's ranges). It stops at the first group that ends with anything but an exit,
    /// before asking for another CTA. Returns how many CTAs every warp of which exited, and
    /// the stop: the CTA's linear index, the warp, and its event (the state holds the warp's).
    /// The scheduler runs a worker's CTAs this way while each finishes in its first quantum
    /// (`scheduler/fresh.rs`).
    ///
    /// Must behave exactly as [`WarpRunner::prepare_cta`] for each CTA and
    /// [`WarpRunner::run_group_prepared`] for each warp in turn, which is what the default
    /// does. `cache` may hold anything before; it is the run's alone.
    fn run_fresh_ctas(
        &self,
        cache: &mut RunnerCache,
        run: &mut dyn FreshRun,
        env: &CtaEnv,
    ) -> (u64, Option<(u64, usize, GroupExit)>) {
        let first = run.next_cta();
        run_fresh_each(self, cache, run, env, first)
    }
}

/// The warps whose groups [`WarpRunner::run_warps`] runs: consecutive warps of one CTA, in
/// index order, each with one group of all its live lanes. An object-safe view, so that the
/// scheduler keeps its own warp type (the state of warp `i` lives inside the scheduler's
/// bookkeeping of it).
pub trait WarpRun<'a> {
    /// Each warp's group, in index order: the pc it starts at and its lanes (the warp's live
    /// lanes). A group has no stop pc. (Not borrowed from the run, so that a backend fetches
    /// it once and still takes the states one by one.)
    fn groups(&self) -> &'a [GroupAt];
    /// Warp `i`'s state (`i < self.groups().len()`).
    fn state(&mut self, i: usize) -> &mut WarpState;
    /// Warp `i`'s group stopped with `exit`, an event other than [`GroupExit::Exited`]: returns
    /// whether the scheduler took the event (it takes arrivals at a barrier), in which case the
    /// run may go on; otherwise the backend must stop and return `exit`.
    fn pass(&mut self, i: usize, exit: &GroupExit) -> bool;
}

/// The fresh CTAs of a [`WarpRunner::run_fresh_ctas`] call, as the scheduler hands them out.
pub trait FreshRun {
    /// The next CTA to run, as its linear index and `(x, y, z)` index, or `None`: the launch
    /// has no CTA left for this worker, or the run must end (an abort, the watchdog's clock).
    fn next_cta(&mut self) -> Option<(u64, [u32; 3])>;
    /// The warps of every CTA of the run.
    fn warps(&mut self) -> FreshWarps<'_>;
}

/// The warps of each CTA of a [`FreshRun`].
pub struct FreshWarps<'a> {
    /// Each warp's launch group, in index order: pc 0 and the warp's lanes.
    pub groups: &'a [GroupAt],
    /// The state every warp of the run uses in turn.
    pub state: &'a mut WarpState,
    /// The register words to zero when the state is recycled for the next warp
    /// ([`WarpState::recycle`]'s `zero`).
    pub zero: &'a [std::ops::Range<usize>],
}

/// Where a group of a [`WarpRun`] starts, and its lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupAt {
    pub pc: u32,
    pub mask: u32,
}

/// [`WarpRunner::run_warps`] one warp at a time: [`WarpRunner::run_group_prepared`] for each
/// warp's group until the scheduler does not take an event (the trait's default, and what a
/// backend falls back to when it cannot do better).
///
/// # Safety
///
/// As for [`WarpRunner::run_group_prepared`].
pub unsafe fn run_warps_each<R: WarpRunner + ?Sized>(
    runner: &R,
    cache: &mut RunnerCache,
    run: &mut dyn WarpRun<'_>,
    env: &CtaEnv,
) -> (usize, Option<GroupExit>) {
    let groups = run.groups();
    for (i, &GroupAt { pc, mask }) in groups.iter().enumerate() {
        // SAFETY: the caller's contract.
        let exit = unsafe { runner.run_group_prepared(cache, run.state(i), env, pc, mask, None) };
        if exit != GroupExit::Exited && !run.pass(i, &exit) {
            return (i + 1, Some(exit));
        }
    }
    (groups.len(), None)
}

/// [`WarpRunner::run_phases`] group by group through [`WarpRunner::run_group_prepared`] (the
/// trait's default, and what a backend falls back to).
///
/// # Safety
///
/// As for [`WarpRunner::run_group_prepared`].
pub unsafe fn run_phases_each<R: WarpRunner + ?Sized>(
    runner: &R,
    cache: &mut RunnerCache,
    env: &CtaEnv,
    (states, groups): (&mut [Option<&mut WarpState>], &mut [PhaseGroup]),
    limit: u32,
) -> PhasesRun {
    run_phases_with(states, groups, limit, |state, pc, mask| {
        // SAFETY: the caller's contract.
        unsafe { runner.run_group_prepared(cache, state, env, pc, mask, None) }
    })
}

/// [`WarpRunner::run_fresh_ctas`] CTA by CTA and warp by warp: `prepare_cta`, then
/// [`WarpRunner::run_group_prepared`] for each warp, starting with the CTA `first` (already
/// handed out by `run`, or `None`). The trait's default, and what a backend falls back to.
pub fn run_fresh_each<R: WarpRunner + ?Sized>(
    runner: &R,
    cache: &mut RunnerCache,
    run: &mut dyn FreshRun,
    env: &CtaEnv,
    first: Option<(u64, [u32; 3])>,
) -> (u64, Option<(u64, usize, GroupExit)>) {
    let mut finished = 0;
    let mut next = first;
    while let Some((linear, ctaid)) = next {
        let env = CtaEnv { ctaid, ..*env };
        runner.prepare_cta(cache, &env);
        let FreshWarps {
            groups,
            state,
            zero,
        } = run.warps();
        for (w, &GroupAt { pc, mask }) in groups.iter().enumerate() {
            state.recycle(w as u32, mask, zero);
            // SAFETY: `prepare_cta` just saw this `env`.
            let exit = unsafe { runner.run_group_prepared(cache, state, &env, pc, mask, None) };
            if exit != GroupExit::Exited {
                return (finished, Some((linear, w, exit)));
            }
        }
        finished += 1;
        next = run.next_cta();
    }
    (finished, None)
}

/// A slot in which a backend keeps state between calls (see [`WarpRunner::prepare_cta`]):
/// any one value, found again by its type.
#[derive(Default)]
pub struct RunnerCache(Option<(std::any::TypeId, Box<dyn std::any::Any>)>);

impl RunnerCache {
    /// The value held, if it is a `T` (one comparison with a constant: this is on the path of
    /// every group a backend runs).
    pub fn get_mut<T: std::any::Any>(&mut self) -> Option<&mut T> {
        match &mut self.0 {
            Some((id, value)) if *id == std::any::TypeId::of::<T>() => {
                let value: *mut dyn std::any::Any = value.as_mut();
                // SAFETY: `id` was recorded from the value's own type when it was stored (see
                // `set`), so the box holds a `T`; the reference borrows `self`, which owns it.
                Some(unsafe { &mut *value.cast::<T>() })
            }
            _ => None,
        }
    }

    /// Replaces the value held by `value` and returns it.
    pub fn set<T: std::any::Any>(&mut self, value: T) -> &mut T {
        let mut boxed = Box::new(value);
        let ptr: *mut T = &mut *boxed;
        self.0 = Some((std::any::TypeId::of::<T>(), boxed));
        // SAFETY: `ptr` points into the box just moved into `self.0` (moving a box does not
        // move its contents); the reference borrows `self`, which owns it.
        unsafe { &mut *ptr }
    }
}

impl std::fmt::Debug for RunnerCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "RunnerCache(..)"
        } else {
            "RunnerCache(empty)"
        })
    }
}

/// Counters a launch reports. Kept per warp while running and summed at the end.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
#[repr(C)]
pub struct Stats {
    /// Lane atomic operations executed, indexed by [`AtomicOp::index`].
    pub atomics: [u64; AtomicOp::COUNT],
    /// CAS / CAST lanes whose comparison failed (no store).
    pub cas_failures: u64,
    /// `CAST.SPIN` lanes that fast-failed (did not attempt, returned 0).
    pub spin_fast_fails: u64,
    /// Warp-instructions executed (one per instruction per group, whatever the lane count).
    pub warp_insts: u64,
}

impl Stats {
    pub fn add(&mut self, other: &Stats) {
        for (a, b) in self.atomics.iter_mut().zip(other.atomics.iter()) {
            *a += b;
        }
        self.cas_failures += other.cas_failures;
        self.spin_fast_fails += other.spin_fast_fails;
        self.warp_insts += other.warp_insts;
    }
    pub fn total_atomics(&self) -> u64 {
        self.atomics.iter().sum()
    }
}
