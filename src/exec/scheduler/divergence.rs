//! Divergence within one warp: lane groups, joins, reconvergence and forward progress.
//!
//! # Model
//!
//! A warp is a set of **groups** and **joins**. A group is `(pc, mask, join stack, state)`:
//! lanes that execute together. A join is a pending reconvergence point: `(reconv pc, expected
//! lanes, arrived lanes)`. Initially a warp is one group at pc 0 holding every lane that exists,
//! with an empty stack. The union of the groups' masks is always exactly the warp's live lanes
//! (lanes a backend drops from a group are recorded as exited).
//!
//! The backend runs one group at a time ([`WarpRunner::run_group`]) with `stop_pc` = the
//! reconvergence pc of the join on top of the group's stack, and reports a [`GroupExit`]:
//!
//! * `Exited`: the group is removed. Exited lanes no longer count towards any join
//!   (a join needs `expected & live`), so the exit may complete joins.
//! * `Yield { pc, mask }`: the group continues at `pc` later; the warp's next group runs first.
//! * `Diverge`: the group splits into a fall-through group and a taken group, in that order
//!   (the fall-through group runs first). If the branch has a reconvergence point `r`
//!   ([`KernelInfo::reconverge`]), a new join `{r, expected: taken | fall}` is pushed on both
//!   children's stacks on top of the parent's; if it has none (the paths meet only at exit) the
//!   children inherit the parent's stack unchanged.
//! * `Reconverge { mask }`: the group reached the reconvergence pc of its top join and *parks*
//!   there (`arrived |= mask`; at most one parked group per join, later arrivals merge into it).
//!   When `arrived == expected & live` the join is complete: the parked group, now holding every
//!   live expected lane, continues at the reconvergence pc with the join popped. A group that is
//!   created at (or resumes at) its own reconvergence pc parks without calling the backend,
//!   which is exactly what the backend would report.
//! * `Barrier`: the group waits at the barrier (the CTA releases it, see `cta.rs`).
//!
//! # Forward progress (independent thread scheduling)
//!
//! This is the model of GPUs with independent thread scheduling (Volta and later): lanes
//! reconverge at the immediate post-dominator when that costs nothing, but a diverged path is
//! never blocked forever by a reconvergence point. Strictly waiting at a join deadlocks when
//! parked lanes hold something that the lanes still running wait for, e.g. a spin lock
//! contended by the lanes of one warp: the lane that wins the lock parks at the end of the
//! retry loop, while the losers spin on the lock it holds. So a join is **dissolved** — its
//! parked group resumes past the reconvergence point with the join popped, and every other group
//! drops the join from its stack at once (it will run the code after the reconvergence point
//! separately) — when:
//!
//! 1. a group belonging to it (its stack contains it) is *spinning*: it yields at the same pc
//!    with exactly the same registers and predicates in its lanes as at its previous yield. Its
//!    next iteration can only differ if memory changes, which may need the parked lanes (a spin
//!    lock's holder parked at the end of the retry loop, a flag the parked lanes would set);
//!    this hands a lock over within two iterations of the spinners;
//! 2. groups belonging to it have yielded more than [`YIELDS_BEFORE_RELEASE`] times since its
//!    last arrival: the lanes still on their way keep looping, maybe waiting for the parked ones
//!    (a spin loop whose registers change every iteration, e.g. one that counts attempts);
//! 3. a group belonging to it waits at a barrier while lanes are parked at it: a barrier needs
//!    every live lane of the CTA, so it could never release, and the join never complete;
//! 4. (decided by the CTA) no group of the CTA can run: every parked join is dissolved before
//!    a deadlock is declared.
//!
//! Dissolving never changes what a program computes, only how lanes are grouped: with
//! independent thread scheduling any interleaving of diverged lanes is allowed. Groups of one
//! warp that stand at the same pc with the same stack and are both runnable are merged at every
//! scheduling point, so lanes separated by a dissolution can run together again.
//!
//! # Spinning and backing off
//!
//! A group that yields is *watched*: the scheduler takes the fingerprint of its pc, lanes,
//! registers and predicates at two consecutive yields, and when they are equal the group is
//! **spinning** (one whole iteration of its loop changed nothing but, perhaps, memory). A
//! fingerprint costs a pass over the group's registers, so a new group is first probed after
//! [`FIRST_PROBE`] yields, and a group found working (the prints differ) is probed again after
//! [`MIN_PROBE_GAP`] yields, then after twice as many, up to [`MAX_PROBE_GAP`]: a short loop
//! is never probed, a loop that works pays for one probe pair every thousand iterations, and a
//! loop that starts out spinning is seen within a dozen. Every yield of a group that
//! belongs to a join with parked lanes is probed (rule 1 above needs it), and so is the first
//! yield after a divergent backward branch, against the registers the looping lanes had at the
//! branch: a spin lock's losers are seen spinning at their first retry, so the holder parked at
//! the end of the retry loop is released one round trip sooner. And when a join pushed by a
//! divergent backward branch is dissolved because a group spins *in that loop* (rule 1), the
//! warp remembers the branch as a **spin exit**: later divergences there (in this CTA and the
//! later CTAs its worker runs with the warp's allocation) push no join, so the next lane to win
//! the lock runs its critical section at once instead of
//! parking until its waiters have failed once more. Loops whose early leavers never had to be
//! released keep reconverging as before. A divergence does not end the warp's turn either (see
//! [`Warp::step`]): the winner runs its critical section in the turn in which it won.
//!
//! # A lock handed from lane to lane
//!
//! Nor does an arrival at a barrier end a turn while the warp has another runnable group: the
//! CTA takes the arrival at once (the barrier cannot release while those lanes are live and
//! have not arrived) and the turn goes on, up to [`EVENTS_PER_TURN`] group runs, provided it
//! has room for the next group's run and, should that run split, its fall-through side's (so
//! a turn does not end right after the losers of a lock split, leaving the winner holding the
//! lock for a whole round; a split at a turn's last run still can, as before). So the
//! lanes of a warp that take a lock one after the other, each running its critical section to
//! the barrier after it, hand it over within one turn: the losers' group splits at the retry
//! branch, the winner runs to the barrier, the losers go on.
//!
//! Where the turn would run a split's fall-through group next anyway, the backend may run it
//! in the same call ([`WarpRunner::run_group_splitting`]): when the warp has no join (no
//! group has a stop pc) and no other runnable group (nothing can merge with the new groups),
//! and the branch pushes no join (it has no reconvergence point, or it is a spin exit). The
//! split is then applied exactly as if the backend had returned it, and the run's event is the
//! fall-through group's. The JIT does this (one backend call per hand-over instead of two);
//! [`ScheduleCounters::splits`] counts it, and the schedule is the same either way. When that
//! fall-through group arrives at a barrier where a group of the warp already waits (the
//! lock's earlier winners), the split and the arrival are applied in one step
//! ([`Warp::hand_over`]): the taken lanes take the group's place and the arrived lanes join
//! the waiting group, leaving exactly what the two events applied one by one and settled
//! would, without making, inserting, merging and removing a group per hand-over.
//!
//! A spinning group **backs off**: it sits out a random number of its warp's turns, from 0 up
//! to `2^spins - 1` (capped at [`MAX_BACKOFF`]), where `spins` counts its spinning yields in a
//! row. Sitting out costs no call of the backend; the warp's other groups, the CTA's other
//! warps and the worker's other CTAs run meanwhile, so a lock holder gets the host thread
//! instead of its waiters. The random draw is what makes spinning *fair*: without it, two
//! groups that hand a value back and forth (AlloyForwardProgress's exchange tests: each spins
//! until it sees the value the other leaves) can be alternated strictly forever, each always
//! undoing the other, although any GPU lets one of them run twice in a row. With independent
//! random back-offs every finite pattern of turns has a positive probability, so such a program
//! terminates with probability 1 (in practice within a few turns). The draws come from the CTA's
//! own generator ([`ScheduleCounters::backoffs`]), seeded from [`SCHEDULE_SEED`] and the CTA's
//! index, so a deterministic run repeats them exactly. A group that does anything but yield (diverges, waits, reconverges, exits) or
//! yields working starts afresh.
//!
//! Every event is handled the same way on every run, and the order of groups is fixed (the
//! fall-through group before the taken group, round-robin from the group after the one that
//! last ran, skipping groups that sit out), so a warp's schedule is deterministic.

use super::super::{
    CtaEnv, GroupAt, GroupExit, PhaseGroup, RunnerCache, Split, TrapInfo, WarpRun, WarpRunner,
    WarpState, WARP_STRIDE,
};
use crate::exec::random::SplitMix64;
use crate::valid::KernelInfo;

/// How many yields by groups that belong to a join (since the last arrival there) the scheduler
/// allows before it dissolves a join that lanes are parked at. High enough that ordinary
/// divergent loops of a few dozen iterations still reconverge; low enough that a spin lock
/// between lanes of one warp hands over after a few hundred instructions.
pub const YIELDS_BEFORE_RELEASE: u32 = 64;

/// Yields of a new group before its first probe pair (see "Spinning and backing off" in the
/// module docs): a loop of a few iterations, the common short loop, is never probed, and a
/// spinner is seen after a dozen wasted iterations.
pub const FIRST_PROBE: u16 = 8;

/// Yields between the first two probe pairs of a group found working; the gap doubles after
/// every pair that finds it working.
pub const MIN_PROBE_GAP: u16 = 16;

/// The largest gap between two probe pairs of a working group: one fingerprint pair per 1024
/// iterations of a loop is well under 1% of its time even with many registers, and a loop that
/// starts spinning after working a long while is still seen within about a thousand yields.
pub const MAX_PROBE_GAP: u16 = 1024;

/// The most turns of its warp a spinning group sits out in one back-off (the draw is uniform in
/// `0..=min(2^spins - 1, MAX_BACKOFF)`). Long enough that the waiters of a lock leave its holder
/// most of the host thread (`spinlock`: 15 gave 3.5 ms, 63 gave 3.3 ms); short enough that a
/// waiter is back within microseconds of a release it could not see (a turn a group sits out
/// costs no backend call, some tens of nanoseconds).
pub const MAX_BACKOFF: u32 = 63;

/// The most events (group runs) in one turn of a warp, when groups split at divergent branches
/// or arrive at barriers while others can run (see [`Warp::step`] and "A lock handed from lane
/// to lane" in the module docs). 16 lets a warp hand a lock to eight of its lanes in a turn
/// (`spinlock`: 4 gave 3.80 ms, 16 gave 3.54, 64 3.5 with more spread); the other warps and
/// CTAs still get the host thread within a few microseconds.
pub const EVENTS_PER_TURN: u32 = 16;

/// Identifies a join within its warp (never reused during a CTA's life).
type JoinId = u64;

/// One entry of a group's join stack: the join and its reconvergence pc (kept here so that the
/// hot path needs no lookup to find `stop_pc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StackEntry {
    join: JoinId,
    reconv: u32,
}

/// What a group is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupState {
    /// Can run.
    Running,
    /// Waits at the barrier instruction at the group's pc for barrier `id`.
    AtBarrier { id: u32 },
    /// Parked at the join on top of its stack; its pc is that join's reconvergence pc.
    AtJoin,
}

impl GroupState {
    /// How watchdog reports describe the state.
    pub fn describe(self) -> &'static str {
        match self {
            GroupState::Running => "running",
            GroupState::AtBarrier { .. } => "at barrier",
            GroupState::AtJoin => "waiting to reconverge",
        }
    }
}

/// Lanes of one warp that execute together.
#[derive(Debug, Clone)]
struct Group {
    pc: u32,
    mask: u32,
    stack: Vec<StackEntry>,
    state: GroupState,
    /// Fingerprint of the group's pc, lanes, registers and predicates at its last yield (or at
    /// the backward branch that created it), when that yield was probed: the first half of a
    /// probe pair (see "Spinning and backing off" in the module docs).
    last_yield: Option<u64>,
    watch: SpinWatch,
}

/// How the scheduler watches a group for spinning, and its back-off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SpinWatch {
    /// Probed yields in a row at which the group was spinning (saturating).
    spins: u8,
    /// Turns of its warp the group still sits out.
    sleep: u8,
    /// Yields to let pass before the next probe pair (0: probe the next yield).
    countdown: u16,
    /// The current gap between probe pairs of a working group.
    gap: u16,
}

impl SpinWatch {
    const FRESH: SpinWatch = SpinWatch {
        spins: 0,
        sleep: 0,
        countdown: FIRST_PROBE,
        gap: MIN_PROBE_GAP,
    };
}

impl Group {
    fn new(pc: u32, mask: u32, stack: Vec<StackEntry>) -> Group {
        Group {
            pc,
            mask,
            stack,
            state: GroupState::Running,
            last_yield: None,
            watch: SpinWatch::FRESH,
        }
    }

    /// Runnable now: running and not sitting out a back-off.
    fn is_awake(&self) -> bool {
        self.state == GroupState::Running && self.watch.sleep == 0
    }

    /// Forgets what the spin watch saw: the group did something other than yield.
    fn rewatch(&mut self) {
        self.watch = SpinWatch::FRESH;
        self.last_yield = None;
    }

    fn top(&self) -> Option<StackEntry> {
        self.stack.last().copied()
    }

    fn belongs_to(&self, join: JoinId) -> bool {
        self.stack.iter().any(|e| e.join == join)
    }

    fn is_parked_at(&self, join: JoinId) -> bool {
        self.state == GroupState::AtJoin && self.top().map(|e| e.join) == Some(join)
    }
}

/// The one group of a *light* warp (see [`Warp::light`]): a group with an empty stack and a
/// fresh spin watch that holds every live lane of its warp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Light {
    pc: u32,
    mask: u32,
    /// `Some(id)`: the group waits at the barrier instruction at `pc` for barrier `id`;
    /// `None`: it can run.
    barrier: Option<u32>,
}

/// A pending reconvergence point (its pc is in the stack entries that refer to it).
#[derive(Debug, Clone)]
struct Join {
    id: JoinId,
    /// The lanes that diverged at the branch (exited lanes are masked out when checking).
    expected: u32,
    /// The lanes parked here.
    arrived: u32,
    /// Yields by groups belonging to this join since its last arrival.
    yields: u32,
    /// For a join pushed by a divergent backward branch: the loop, `(target, branch pc)`.
    looping: Option<(u32, u32)>,
}

/// Counters of scheduling events, summed into the launch's statistics, and the generator of
/// the CTA's back-offs (not a counter, and not summed: it rides along because every step
/// carries the counters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScheduleCounters {
    pub quanta: u64,
    pub yields: u64,
    pub divergences: u64,
    pub reconvergences: u64,
    pub dissolved_joins: u64,
    pub barrier_releases: u64,
    pub spins: u64,
    /// Divergent branches the backend ran past ([`WarpRunner::run_group_splitting`]); each
    /// is also counted in `divergences`.
    pub splits: u64,
    /// Draws the back-offs of the CTA's spinning groups (see "Spinning and backing off").
    pub backoffs: SplitMix64,
}

/// The seed of every CTA's back-off generator, mixed with the CTA's linear index: a CTA's
/// generator starts the same whichever worker runs it, and a deterministic run repeats every
/// draw.
pub const SCHEDULE_SEED: u64 = 0x6a09_e667_f3bc_c908;

impl ScheduleCounters {
    /// Zero counters and the back-off generator of CTA `linear`.
    pub fn for_cta(linear: u64) -> ScheduleCounters {
        ScheduleCounters {
            backoffs: SplitMix64::new(SCHEDULE_SEED ^ linear.wrapping_mul(0x9e37_79b9_7f4a_7c15)),
            ..ScheduleCounters::default()
        }
    }

    pub fn add(&mut self, o: &ScheduleCounters) {
        self.quanta += o.quanta;
        self.yields += o.yields;
        self.divergences += o.divergences;
        self.reconvergences += o.reconvergences;
        self.dissolved_joins += o.dissolved_joins;
        self.barrier_releases += o.barrier_releases;
        self.spins += o.spins;
        self.splits += o.splits;
    }
}

/// What running one group did, as far as the CTA is concerned.
#[derive(Debug)]
pub enum Step {
    /// The warp has no group that can run now (every group waits, or sits out a back-off).
    Idle,
    /// The group ran; nothing for the CTA to do besides noticing exited lanes.
    Progress,
    /// The group ran a loop iteration that changed nothing but memory, and backs off (see
    /// "Spinning and backing off" in the module docs).
    Spin,
    /// `lanes` lanes arrived at barrier `id`.
    Barrier { id: u32, lanes: u32 },
    /// A lane faulted.
    Trap(TrapInfo),
    /// The backend broke the [`WarpRunner`] contract.
    ContractViolation(String),
}

/// What [`Warp::run_group`] gave: the run's event, for the caller to apply, or the step of an
/// event it applied itself ([`Warp::hand_over`]).
enum Ran {
    Event(GroupExit),
    Applied(Step),
}

/// One warp of a resident CTA: its architectural state and its divergence bookkeeping.
#[derive(Debug)]
pub struct Warp {
    pub state: WarpState,
    groups: Vec<Group>,
    joins: Vec<Join>,
    next_join: JoinId,
    /// Index at which the search for the next group to run starts (round-robin).
    cursor: usize,
    /// The warp is *light*: it has exactly one group, holding every live lane, with an empty
    /// stack and a fresh spin watch (running, or waiting at a barrier, whose release watches it
    /// afresh anyway). That group is kept here, not in `groups` (`groups` and `joins` are
    /// empty), so that starting a warp, running a kernel without divergence to `EXIT` and
    /// taking it through barriers never touch the group list, and light warps run in batches
    /// ([`Warp::step_light_run`]). A warp starts light (its launch group: pc 0, every lane of
    /// `state.lanes`) and becomes light again when a barrier releases it in that shape. Any
    /// event but an exit or a barrier arrival moves the group into `groups`, where the general
    /// path handles it exactly as if it had always been there.
    light: Option<Light>,
    /// Backward branches whose lanes left a spin loop while the others spun on (see "Spinning
    /// and backing off" in the module docs): a divergence there pushes no join. Kept when the
    /// warp is reused for the worker's next CTA, which runs the same code.
    spin_exits: Vec<u32>,
}

impl Warp {
    /// A warp at its launch state: one group at pc 0 holding every lane of `state.lanes`.
    pub fn new(state: WarpState) -> Warp {
        let mut warp = Warp {
            state,
            groups: Vec::new(),
            joins: Vec::new(),
            next_join: 0,
            cursor: 0,
            light: None,
            spin_exits: Vec::new(),
        };
        warp.start();
        warp
    }

    /// Reuses the warp for another CTA (see [`WarpState::recycle`]: only the registers in
    /// `zero` are zeroed, the counters keep accumulating).
    #[inline]
    pub fn reset(&mut self, warp_id: u32, lanes: u32, zero: &[std::ops::Range<usize>]) {
        self.state.recycle(warp_id, lanes, zero);
        self.start();
    }

    #[inline]
    fn start(&mut self) {
        self.groups.clear();
        self.joins.clear();
        self.next_join = 0;
        self.cursor = 0;
        let mask = self.state.lanes;
        self.light = (mask != 0).then_some(Light {
            pc: 0,
            mask,
            barrier: None,
        });
    }

    /// The warp is light and its group can run (it goes in a batch, see
    /// [`Warp::step_light_run`]).
    #[inline(always)]
    pub fn runs_light(&self) -> bool {
        matches!(self.light, Some(Light { barrier: None, .. }))
    }

    /// A light or finished warp's place in a CTA's barrier phases (`crate::exec::phases`).
    #[inline(always)]
    pub fn phase_group(&self) -> PhaseGroup {
        debug_assert!(
            self.groups.is_empty(),
            "only a light or finished warp runs phases"
        );
        match self.light {
            Some(Light { pc, mask, barrier }) => PhaseGroup { pc, mask, barrier },
            None => PhaseGroup::FINISHED,
        }
    }

    /// Takes back a light or finished warp's place after barrier phases: light with that
    /// group, or finished (no lanes).
    #[inline(always)]
    pub fn set_phase_group(&mut self, group: PhaseGroup) {
        let PhaseGroup { pc, mask, barrier } = group;
        self.light = (mask != 0).then_some(Light { pc, mask, barrier });
    }

    /// The warp is light and waits at a barrier: its id and how many lanes wait.
    pub fn waiting_light(&self) -> Option<(u32, u32)> {
        let light = self.light?;
        Some((light.barrier?, light.mask.count_ones()))
    }

    /// Every lane has exited.
    pub fn is_finished(&self) -> bool {
        self.light.is_none() && self.groups.is_empty()
    }

    /// Some group can run.
    pub fn has_runnable(&self) -> bool {
        match self.light {
            Some(light) => light.barrier.is_none(),
            None => self.groups.iter().any(|g| g.state == GroupState::Running),
        }
    }

    /// Each group as `(pc, lane mask, state)`, for watchdog reports.
    pub fn describe(&self) -> Vec<(u32, u32, GroupState)> {
        if let Some(light) = self.light {
            let state = match light.barrier {
                Some(id) => GroupState::AtBarrier { id },
                None => GroupState::Running,
            };
            return vec![(light.pc, light.mask, state)];
        }
        self.groups
            .iter()
            .map(|g| (g.pc, g.mask, g.state))
            .collect()
    }

    /// Runs the next runnable group (round-robin) until its next event and applies the event;
    /// when the event is a divergent branch, runs on with the next group (the fall-through
    /// side), and after an arrival at a barrier with the next runnable group, up to
    /// [`EVENTS_PER_TURN`] events (not after a light warp's run, which stays as small as it
    /// can be). Arrivals other than the turn's last event are added to `barriers`, the CTA's
    /// list; the last is the step's. `cache` must have been prepared for `env` with
    /// [`WarpRunner::prepare_cta`].
    ///
    /// Fast paths: a light warp runs its one group (every live lane, no stop) directly, and a
    /// warp that has one runnable group and no join needs no search for the next group; when
    /// the group exits, nothing is left to do but record the exited lanes. The resulting state
    /// is exactly the one the general path gives.
    #[inline]
    pub fn step(
        &mut self,
        runner: &dyn WarpRunner,
        cache: &mut RunnerCache,
        env: &CtaEnv,
        counters: &mut ScheduleCounters,
        barriers: &mut Vec<(u32, u32)>,
    ) -> Step {
        match self.light {
            Some(light @ Light { barrier: None, .. }) => {
                let exit = self.run_light(light, runner, cache, env);
                self.ran_light(light, exit, (runner, cache, env), counters, barriers)
            }
            // Its only group waits at a barrier: nothing can run.
            Some(_) => Step::Idle,
            None => self.step_general(runner, cache, env, counters, barriers),
        }
    }

    /// Steps the run of light, runnable warps at the start of `warps` (the first must be one)
    /// with one backend call ([`WarpRunner::run_warps`]): their groups run one after the other,
    /// the scheduler taking exits and barrier arrivals as they come (arrivals are added to
    /// `barriers`, the CTA's list), until a warp's event is anything else. Every warp ends
    /// exactly as [`Warp::step`] would have left it, and the backend sees the same calls in the
    /// same order. `cache` must have been prepared for `env` ([`Warp::step`]'s contract).
    ///
    /// Taking arrivals inside the run is exact because no barrier can release before the run's
    /// last warp has run: every later warp of the run has live lanes that have not arrived.
    #[inline]
    pub fn step_light_run(
        warps: &mut [Warp],
        (barriers, groups): (&mut Vec<(u32, u32)>, &mut Vec<GroupAt>),
        runner: &dyn WarpRunner,
        cache: &mut RunnerCache,
        env: &CtaEnv,
        counters: &mut ScheduleCounters,
    ) -> LightRunEnd {
        groups.clear();
        groups.reserve(warps.len());
        for warp in warps.iter() {
            match warp.light {
                Some(Light {
                    pc,
                    mask,
                    barrier: None,
                }) => groups.push(GroupAt { pc, mask }),
                _ => break,
            }
        }
        let light = groups.len();
        let mut run = LightRun {
            warps: &mut warps[..light],
            groups,
            barriers,
            arrived: false,
            retired: false,
        };
        // SAFETY: `Warp::step`'s contract: the caller prepared `cache` for `env`.
        let (ran, exit) = unsafe { runner.run_warps(cache, &mut run, env) };
        let LightRun {
            warps,
            barriers,
            arrived,
            mut retired,
            ..
        } = run;
        if ran == 0 || ran > light {
            return LightRunEnd {
                ran: 1,
                last: Some(Step::ContractViolation(format!(
                    "backend reported running {ran} groups of a run of {light} warps"
                ))),
                arrived,
                retired,
            };
        }
        let taken = ran - usize::from(exit.is_some());
        // The warps whose events were taken and are still runnable exited.
        for warp in &mut warps[..taken] {
            retired |= warp.exited_light();
        }
        let last = exit.map(|exit| {
            let (step, last_retired) =
                warps[ran - 1].end_light_run(exit, (runner, &mut *cache, env), counters, barriers);
            retired |= last_retired;
            step
        });
        LightRunEnd {
            ran,
            last,
            arrived,
            retired,
        }
    }

    /// Runs the light group `light` (every live lane, no stop pc) on a backend whose `cache`
    /// was prepared for `env`.
    #[inline(always)]
    fn run_light(
        &mut self,
        light: Light,
        runner: &dyn WarpRunner,
        cache: &mut RunnerCache,
        env: &CtaEnv,
    ) -> GroupExit {
        run_prepared(
            runner,
            cache,
            &mut self.state,
            env,
            light.pc,
            light.mask,
            None,
        )
    }

    /// Takes the event `exit` of the light group `light` where a light warp takes it itself:
    /// an exit (the warp is finished), or an arrival at a barrier with some of the group's
    /// lanes ([`Warp::arrive_light`]). Any other event is returned untaken, the warp as it was.
    #[inline(always)]
    fn take_light(&mut self, light: Light, exit: GroupExit) -> PhaseRun {
        match exit {
            GroupExit::Exited => {
                self.light = None;
                self.state.exited |= light.mask;
                PhaseRun::Exited
            }
            GroupExit::Barrier { pc, mask, id } if mask & light.mask != 0 => {
                let lanes = self.arrive_light(light, pc, mask, id);
                PhaseRun::Arrived { id, lanes }
            }
            exit => PhaseRun::Other(exit),
        }
    }

    /// A light, runnable warp whose group exited in a run that did not report it (the backend
    /// reports only the events the scheduler must see): every lane of the group exited. Returns
    /// whether it was such a warp (a warp waiting at a barrier is left as it is).
    #[inline(always)]
    pub fn exited_light(&mut self) -> bool {
        match self.light {
            Some(light) if light.barrier.is_none() => {
                self.state.exited |= light.mask;
                self.light = None;
                true
            }
            _ => false,
        }
    }

    /// The last warp of a run of light warps ended its group with `exit`, which the run did not
    /// take: applies it as [`Warp::ran_light`] does. Returns the step and whether lanes
    /// retired. `cache` was prepared for `env` ([`Warp::step`]'s contract).
    #[inline(always)]
    pub fn end_light_run(
        &mut self,
        exit: GroupExit,
        (runner, cache, env): (&dyn WarpRunner, &mut RunnerCache, &CtaEnv),
        counters: &mut ScheduleCounters,
        barriers: &mut Vec<(u32, u32)>,
    ) -> (Step, bool) {
        let light = self.light.expect("a warp of a light run is light");
        let step = self.ran_light(light, exit, (runner, cache, env), counters, barriers);
        // Against the lanes the group ran with: the backend itself marks lanes that exited on
        // the way (a yield's or a divergence's mask leaves them out).
        let retired = self.state.live() != light.mask;
        (step, retired)
    }

    /// Applies the event a light warp's group `light` ran to, as the general path would: a
    /// divergence runs on with the fall-through group in the same turn ([`Warp::run_on`], as
    /// `step_general` does for a warp's only group), except after the launch group's first run
    /// (pc 0: a released warp resumes after its barrier), which stays as small as it can be.
    /// `cache` was prepared for `env` ([`Warp::step`]'s contract).
    #[inline(always)]
    fn ran_light(
        &mut self,
        light: Light,
        exit: GroupExit,
        (runner, cache, env): (&dyn WarpRunner, &mut RunnerCache, &CtaEnv),
        counters: &mut ScheduleCounters,
        barriers: &mut Vec<(u32, u32)>,
    ) -> Step {
        match self.take_light(light, exit) {
            PhaseRun::Exited => Step::Progress,
            PhaseRun::Arrived { id, lanes, .. } => Step::Barrier {
                id,
                lanes: lanes.count_ones(),
            },
            PhaseRun::Other(exit) => {
                // The group materialises, as the general path would have had it.
                self.light = None;
                self.groups
                    .push(Group::new(light.pc, light.mask, Vec::new()));
                self.cursor = 1;
                let diverged = matches!(exit, GroupExit::Diverge(_));
                let step = self.apply_and_settle(0, exit, env.info, counters);
                if diverged && light.pc != 0 {
                    return self.run_on(runner, cache, env, counters, barriers, 1);
                }
                step
            }
        }
    }

    /// The light group `light` arrived at barrier `id` at `pc` with the lanes `mask` (some of
    /// them: the others exited; `mask & light.mask` is not empty): it waits there, still light.
    /// Returns the lanes that arrived. (What [`Warp::apply`] does for a group that reports
    /// [`GroupExit::Barrier`].)
    #[inline(always)]
    fn arrive_light(&mut self, light: Light, pc: u32, mask: u32, id: u32) -> u32 {
        let kept = mask & light.mask;
        self.state.exited |= light.mask & !kept;
        self.light = Some(Light {
            pc,
            mask: kept,
            barrier: Some(id),
        });
        kept
    }

    /// [`Warp::step`] for a warp that is not light (kept out of line so that the light path,
    /// inlined into the CTA's loop, stays small).
    ///
    /// A group that splits at a divergent branch does not end the warp's turn: the warp runs on
    /// with the next group (the fall-through side), up to [`EVENTS_PER_TURN`] events. A spin
    /// lock's winner thus runs its critical section in the turn in which it won, instead of a
    /// quantum later.
    #[inline(never)]
    fn step_general(
        &mut self,
        runner: &dyn WarpRunner,
        cache: &mut RunnerCache,
        env: &CtaEnv,
        counters: &mut ScheduleCounters,
        barriers: &mut Vec<(u32, u32)>,
    ) -> Step {
        match self.groups.as_slice() {
            [only] if self.joins.is_empty() && only.is_awake() => {
                let mut events = 0;
                let next = match self.run_group(runner, cache, env, counters, 0, &mut events) {
                    Ran::Event(GroupExit::Exited) if events == 0 => {
                        let mask = self.groups[0].mask;
                        self.state.exited |= mask;
                        // The only group: `pop` drops one group inline where `clear` calls the
                        // slice's drop loop.
                        self.groups.pop();
                        self.cursor = 0;
                        return Step::Progress;
                    }
                    Ran::Event(exit) => {
                        self.cursor = 1;
                        self.take_event(0, exit, env.info, counters, barriers, &mut events)
                    }
                    // (Not with one group: no group waits at a barrier for the winner.)
                    Ran::Applied(step) => self.go_on(step, false, barriers, &mut events),
                };
                match next {
                    Ok(_) => self.run_on(runner, cache, env, counters, barriers, events),
                    Err(step) => step,
                }
            }
            _ => self.run_on(runner, cache, env, counters, barriers, 0),
        }
    }

    /// The general path of a turn, after `events` group runs in it (each a divergent branch or,
    /// with another group runnable, an arrival at a barrier):
    /// the sitting-out groups' turn passes (at the start of the turn), and groups run while
    /// they split or arrive at a barrier with another group runnable (that arrival goes to
    /// `barriers` at once), up to [`EVENTS_PER_TURN`] runs.
    #[inline(never)]
    fn run_on(
        &mut self,
        runner: &dyn WarpRunner,
        cache: &mut RunnerCache,
        env: &CtaEnv,
        counters: &mut ScheduleCounters,
        barriers: &mut Vec<(u32, u32)>,
        mut events: u32,
    ) -> Step {
        let mut next = self.next_runnable();
        if events == 0 {
            // This turn passes for every group sitting out a back-off.
            for group in &mut self.groups {
                group.watch.sleep = group.watch.sleep.saturating_sub(1);
            }
        }
        loop {
            let Some(index) = next else {
                return if events == 0 {
                    Step::Idle
                } else {
                    Step::Progress
                };
            };
            let taken = match self.run_group(runner, cache, env, counters, index, &mut events) {
                Ran::Event(exit) => {
                    self.cursor = index + 1;
                    self.take_event(index, exit, env.info, counters, barriers, &mut events)
                }
                Ran::Applied(step) => self.go_on(step, false, barriers, &mut events),
            };
            match taken {
                Ok(runnable) => next = runnable,
                Err(step) => return step,
            }
        }
    }

    /// Applies the event `exit` of group `index`, the turn's next run, and decides whether
    /// the turn goes on: `Ok` with the next runnable group (`None`: nothing can run, the turn
    /// ends having moved), or `Err` with the step that ends it.
    ///
    /// A turn goes on after a divergent branch, and after an arrival at a barrier when another
    /// group can run and the turn has room for that group's run and, should it split, its
    /// fall-through side's (a lock's winner is not left holding the lock for a whole round by
    /// a turn that ends right after the losers split). The arrival cannot release the barrier
    /// while a group of this warp can still run (its lanes are live and have not arrived), so
    /// the CTA takes it at once, in `barriers`.
    fn take_event(
        &mut self,
        index: usize,
        exit: GroupExit,
        info: &KernelInfo,
        counters: &mut ScheduleCounters,
        barriers: &mut Vec<(u32, u32)>,
        events: &mut u32,
    ) -> Result<Option<usize>, Step> {
        let diverged = matches!(exit, GroupExit::Diverge(_));
        let step = self.apply_and_settle(index, exit, info, counters);
        self.go_on(step, diverged, barriers, events)
    }

    /// [`Warp::take_event`] after the event was applied, with its `step` (`diverged`: it was
    /// a divergent branch).
    fn go_on(
        &mut self,
        step: Step,
        diverged: bool,
        barriers: &mut Vec<(u32, u32)>,
        events: &mut u32,
    ) -> Result<Option<usize>, Step> {
        *events += 1;
        if *events < EVENTS_PER_TURN {
            if diverged {
                return Ok(self.next_runnable());
            }
            if let (Step::Barrier { id, lanes }, true) = (&step, *events + 2 <= EVENTS_PER_TURN) {
                if let Some(next) = self.next_runnable() {
                    add_arrival(barriers, *id, *lanes);
                    return Ok(Some(next));
                }
            }
        }
        Err(settled_turn(step, *events))
    }

    /// Runs group `index` until its next event and returns it. Where the turn would run the
    /// fall-through group of a divergent branch next anyway, the backend may run on past the
    /// branch ([`WarpRunner::run_group_splitting`]): the split is then applied here, exactly
    /// as if the backend had returned it (one of the turn's `events`), and the event returned
    /// is the fall-through group's, which is group `index` again.
    ///
    /// "Anyway" is: the warp has no join (so no group has a stop pc, a split pushes a join only
    /// at a branch the backend knows to avoid, and settling after the split can only merge
    /// groups), no other group can run (so nothing merges with the fall-through group, and it
    /// is the next to run: it is new, and the cursor is at it), and the turn has room for the
    /// split and the fall-through group's run.
    ///
    /// A fall-through group that arrives at a barrier where a group of the warp waits is a
    /// lock's hand-over, applied in one step where [`Warp::hand_over`] can
    /// ([`Ran::Applied`]); every other event is returned for the caller to apply.
    #[inline(always)]
    fn run_group(
        &mut self,
        runner: &dyn WarpRunner,
        cache: &mut RunnerCache,
        env: &CtaEnv,
        counters: &mut ScheduleCounters,
        index: usize,
        events: &mut u32,
    ) -> Ran {
        let group = &self.groups[index];
        let (pc, mask, stop_pc) = (group.pc, group.mask, group.top().map(|e| e.reconv));
        let alone = || {
            self.groups
                .iter()
                .enumerate()
                .all(|(i, g)| i == index || g.state != GroupState::Running)
        };
        if !(self.joins.is_empty() && *events + 2 <= EVENTS_PER_TURN && alone()) {
            return Ran::Event(run_prepared(
                runner,
                cache,
                &mut self.state,
                env,
                pc,
                mask,
                stop_pc,
            ));
        }
        // SAFETY: `Warp::step`'s contract: its caller prepared `cache` for `env`.
        let (split, exit) = unsafe {
            runner.run_group_splitting(cache, &mut self.state, env, pc, mask, &self.spin_exits)
        };
        if let Some(split) = split {
            if let GroupExit::Barrier {
                pc: at,
                mask: arrived,
                id,
            } = exit
            {
                if let Some(step) =
                    self.hand_over(index, split, (at, arrived, id), env.info, counters)
                {
                    counters.splits += 1;
                    *events += 1;
                    return Ran::Applied(step);
                }
            }
            self.cursor = index + 1;
            // Settling after it could only merge groups, and none can merge: the two new
            // groups are the only runnable ones and stand at different pcs (the backend does
            // not run past a branch to the next instruction), and the waiting groups were
            // settled before.
            self.apply(index, GroupExit::Diverge(split), env.info, counters);
            counters.splits += 1;
            *events += 1;
            debug_assert!(
                self.groups.get(index).is_some_and(|g| g.pc == split.fall_pc
                    && g.mask == split.fall
                    && g.is_awake()
                    && self.cursor == index),
                "the fall-through group of a split is not the next to run"
            );
        }
        Ran::Event(exit)
    }

    /// A lock's hand-over in one step: group `index` split at `split` (which pushes no join:
    /// the backend ran past it) and its fall-through lanes ran on to barrier `id` at `pc` with
    /// the lanes `mask`, where a group of this warp already waits. Leaves exactly what
    /// applying the split, then the arrival, and settling leave (`apply`, `settle`): the taken
    /// lanes are a new group in `index`'s place (or the place after it), the arrived lanes
    /// join the waiting group, which is watched afresh as a merge does, and the cursor is at
    /// the taken group. Returns the arrival's step; `None`, having changed nothing, where the
    /// result would be another: no group waits there (the first arrival of a warp's lanes, the
    /// common refusal), a side without lanes, a join, a runnable group the taken lanes would
    /// merge with, or a waiting group after `index + 1` (the merge would move the groups
    /// between). From `run_group`, whose warp has no join and no other runnable group, the
    /// join and runnable-group refusals cannot happen; they keep the function exact on its
    /// own (its property test draws such warps too). Saves `spinlock` the new groups'
    /// insertion, removal and merge scan of every hand-over.
    #[inline(always)]
    fn hand_over(
        &mut self,
        index: usize,
        split: Split,
        (pc, mask, id): (u32, u32, u32),
        info: &KernelInfo,
        counters: &mut ScheduleCounters,
    ) -> Option<Step> {
        let ran = self.groups[index].mask;
        let taken = split.taken & ran;
        let fall = split.fall & ran & !taken;
        let arrived = mask & fall;
        let backward = split.taken_pc <= split.branch_pc;
        let pushes_join = self
            .join_point(info, split.branch_pc, split.taken_pc)
            .is_some();
        if taken == 0 || arrived == 0 || pushes_join || !self.joins.is_empty() {
            return None;
        }
        // Without joins every stack is empty: groups merge where pc and state agree.
        let mut waiting = None;
        for (i, group) in self.groups.iter().enumerate() {
            if i == index {
                continue;
            }
            if group.pc == pc && group.state == (GroupState::AtBarrier { id }) {
                if waiting.is_some() {
                    return None;
                }
                waiting = Some(i);
            } else if group.pc == split.taken_pc && group.state == GroupState::Running {
                return None;
            }
        }
        let w = waiting.filter(|&w| w < index || w == index + 1)?;
        let spins = self.groups[index].watch.spins;
        let mut losers = Group::new(split.taken_pc, taken, Vec::new());
        if backward && spins > 0 {
            // As `apply` continues a spinning group's watch in the lanes that loop on.
            losers.watch.spins = spins;
            losers.watch.countdown = 0;
        }
        // Lanes on neither side exited at the branch; fall-through lanes that did not arrive
        // exited on the way.
        self.state.exited |= ran & !(taken | fall) | fall & !arrived;
        counters.divergences += 1;
        let joined = &mut self.groups[w];
        joined.mask |= arrived;
        joined.rewatch();
        if w < index {
            self.groups[index] = losers;
            self.cursor = index;
        } else {
            self.groups.swap(index, w);
            self.groups[w] = losers;
            self.cursor = w;
        }
        Some(Step::Barrier {
            id,
            lanes: arrived.count_ones(),
        })
    }

    #[inline(never)]
    fn apply_and_settle(
        &mut self,
        index: usize,
        exit: GroupExit,
        info: &KernelInfo,
        counters: &mut ScheduleCounters,
    ) -> Step {
        let step = self.apply(index, exit, info, counters);
        self.settle(counters);
        step
    }

    /// The next group that can run now, round-robin from the cursor.
    fn next_runnable(&self) -> Option<usize> {
        let start = self.cursor.min(self.groups.len());
        let (before, after) = self.groups.split_at(start);
        after
            .iter()
            .position(Group::is_awake)
            .map(|i| start + i)
            .or_else(|| before.iter().position(Group::is_awake))
    }

    /// Applies the backend's report about group `index`, which ran with its current mask.
    fn apply(
        &mut self,
        index: usize,
        exit: GroupExit,
        info: &KernelInfo,
        counters: &mut ScheduleCounters,
    ) -> Step {
        let ran = self.groups[index].mask;
        match exit {
            GroupExit::Exited => {
                self.state.exited |= ran;
                self.remove_group(index);
                Step::Progress
            }
            GroupExit::Yield { pc, mask } => {
                counters.yields += 1;
                if !self.keep_lanes(index, mask) {
                    return Step::Progress;
                }
                let group = &mut self.groups[index];
                group.pc = pc;
                let waited_for = group
                    .stack
                    .iter()
                    .any(|e| self.joins.iter().any(|j| j.id == e.join && j.arrived != 0));
                let spinning = watch_yield(group, &self.state, waited_for, &mut counters.backoffs);
                counters.spins += u64::from(spinning);
                let mut expired = Vec::new();
                for entry in &group.stack {
                    if let Some(join) = self.joins.iter_mut().find(|j| j.id == entry.join) {
                        join.yields = join.yields.saturating_add(1);
                        if join.arrived != 0 && (spinning || join.yields > YIELDS_BEFORE_RELEASE) {
                            expired.push(join.id);
                            match join.looping {
                                Some((head, branch))
                                    if spinning
                                        && (head..=branch).contains(&pc)
                                        && !self.spin_exits.contains(&branch) =>
                                {
                                    self.spin_exits.push(branch)
                                }
                                _ => {}
                            }
                        }
                    }
                }
                for id in expired {
                    self.dissolve(id, counters);
                }
                if spinning {
                    Step::Spin
                } else {
                    Step::Progress
                }
            }
            GroupExit::Diverge(Split {
                branch_pc,
                taken_pc,
                taken,
                fall_pc,
                fall,
            }) => {
                let taken = taken & ran;
                let fall = fall & ran & !taken;
                self.state.exited |= ran & !(taken | fall);
                match (taken != 0, fall != 0) {
                    (false, false) => self.remove_group(index),
                    (true, false) => {
                        let group = &mut self.groups[index];
                        (group.pc, group.mask) = (taken_pc, taken);
                    }
                    (false, true) => {
                        let group = &mut self.groups[index];
                        (group.pc, group.mask) = (fall_pc, fall);
                    }
                    (true, true) => {
                        counters.divergences += 1;
                        let mut stack = self.groups[index].stack.clone();
                        let backward = taken_pc <= branch_pc;
                        if let Some(reconv) = self.join_point(info, branch_pc, taken_pc) {
                            let id = self.next_join;
                            self.next_join += 1;
                            self.joins.push(Join {
                                id,
                                expected: taken | fall,
                                arrived: 0,
                                yields: 0,
                                looping: backward.then_some((taken_pc, branch_pc)),
                            });
                            stack.push(StackEntry { join: id, reconv });
                        }
                        let pushed = stack.len() > self.groups[index].stack.len();
                        let spins = self.groups[index].watch.spins;
                        let mut taken_group = Group::new(taken_pc, taken, stack.clone());
                        if backward && spins > 0 {
                            // The lanes that loop on continue the group's spinning loop: they
                            // are presumed to spin on until a probe says not.
                            taken_group.watch.spins = spins;
                            taken_group.watch.countdown = 0;
                        }
                        if backward && pushed {
                            // The looping lanes of a divergent backward branch, while the
                            // others wait for them at the loop's exit: their first yield is
                            // compared with their registers now (it is probed: they belong to
                            // a join with parked lanes), so a spin lock's losers are seen
                            // spinning at their first retry.
                            taken_group.last_yield =
                                Some(fingerprint(&self.state, taken_pc, taken));
                        }
                        self.groups[index] = Group::new(fall_pc, fall, stack);
                        self.groups.insert(index + 1, taken_group);
                        // The fall-through group runs next.
                        self.cursor = index;
                    }
                }
                Step::Progress
            }
            GroupExit::Barrier { pc, mask, id } => {
                if !self.keep_lanes(index, mask) {
                    return Step::Progress;
                }
                let group = &mut self.groups[index];
                group.pc = pc;
                // (Its spin watch starts afresh when the barrier releases it.)
                group.state = GroupState::AtBarrier { id };
                Step::Barrier {
                    id,
                    lanes: group.mask.count_ones(),
                }
            }
            GroupExit::Reconverge { mask } => {
                let Some(top) = self.groups[index].top() else {
                    return Step::ContractViolation(format!(
                        "backend reported Reconverge for warp {} lanes {:#010x} at instruction {}, which had no \
                         reconvergence point",
                        self.state.warp_id, ran, self.groups[index].pc
                    ));
                };
                if self.keep_lanes(index, mask) {
                    // Running at its stop pc: `settle` parks it.
                    self.groups[index].pc = top.reconv;
                    self.groups[index].rewatch();
                }
                Step::Progress
            }
            GroupExit::Trap(trap) => Step::Trap(trap),
        }
    }

    /// The reconvergence pc at which a divergence of the branch at `branch_pc` (to
    /// `taken_pc`) pushes a join, or `None` where it pushes none: the branch has no
    /// reconvergence point, or it is a backward branch the warp knows as a spin exit.
    fn join_point(&self, info: &KernelInfo, branch_pc: u32, taken_pc: u32) -> Option<u32> {
        let reconv = info.reconverge().get(branch_pc as usize).copied().flatten();
        reconv.filter(|_| !(taken_pc <= branch_pc && self.spin_exits.contains(&branch_pc)))
    }

    /// Restricts group `index` to `mask` (lanes the backend dropped have exited). Returns false
    /// (and removes the group) if no lane is left.
    fn keep_lanes(&mut self, index: usize, mask: u32) -> bool {
        let ran = self.groups[index].mask;
        let kept = mask & ran;
        self.state.exited |= ran & !kept;
        if kept == 0 {
            self.remove_group(index);
            false
        } else {
            self.groups[index].mask = kept;
            true
        }
    }

    fn remove_group(&mut self, index: usize) {
        self.groups.remove(index);
        if self.cursor > index {
            self.cursor -= 1;
        }
    }

    /// Releases the groups waiting at barrier `id`: they continue after the barrier instruction.
    pub fn release_barrier(&mut self, id: u32, counters: &mut ScheduleCounters) {
        if let Some(light) = &mut self.light {
            if light.barrier == Some(id) {
                light.barrier = None;
                light.pc = light.pc.wrapping_add(1);
            }
            return;
        }
        for group in &mut self.groups {
            if group.state == (GroupState::AtBarrier { id }) {
                group.state = GroupState::Running;
                group.pc = group.pc.wrapping_add(1);
                group.rewatch();
            }
        }
        self.settle(counters);
        // One group of every live lane with no join, just released (so watched afresh): the
        // warp is light again, and its next turns go in batches.
        if let [only] = self.groups.as_slice() {
            if self.joins.is_empty()
                && only.stack.is_empty()
                && only.state == GroupState::Running
                && only.watch == SpinWatch::FRESH
                && only.last_yield.is_none()
                && only.mask == self.state.live()
            {
                self.light = Some(Light {
                    pc: only.pc,
                    mask: only.mask,
                    barrier: None,
                });
                self.groups.clear();
            }
        }
    }

    /// Dissolves every join that lanes are parked at (the CTA found nothing runnable). Returns
    /// whether any was dissolved.
    pub fn dissolve_parked_joins(&mut self, counters: &mut ScheduleCounters) -> bool {
        let parked: Vec<JoinId> = self
            .joins
            .iter()
            .filter(|j| j.arrived != 0)
            .map(|j| j.id)
            .collect();
        for &id in &parked {
            self.dissolve(id, counters);
        }
        self.settle(counters);
        !parked.is_empty()
    }

    /// Removes join `id`: its parked group continues at the reconvergence pc without it, and
    /// every other group drops it from its stack.
    fn dissolve(&mut self, id: JoinId, counters: &mut ScheduleCounters) {
        let Some(position) = self.joins.iter().position(|j| j.id == id) else {
            return;
        };
        self.joins.remove(position);
        counters.dissolved_joins += 1;
        for group in &mut self.groups {
            if group.is_parked_at(id) {
                group.state = GroupState::Running;
            }
            group.stack.retain(|e| e.join != id);
        }
    }

    /// Applies every consequence of the last change until nothing changes: groups at their
    /// reconvergence pc park, complete joins release, joins blocked by a barrier dissolve, and
    /// runnable groups that stand together merge.
    fn settle(&mut self, counters: &mut ScheduleCounters) {
        if self.joins.is_empty() {
            // Without joins every stack is empty: nothing parks, completes or dissolves, and
            // only merging is left to do.
            if self.groups.len() > 1 {
                while self.merge_one() {}
            }
            return;
        }
        while self.park_one()
            || self.finish_one_join(counters)
            || self.dissolve_one_blocked(counters)
            || self.merge_one()
        {}
    }

    /// Parks one runnable group standing at its top join's reconvergence pc.
    fn park_one(&mut self) -> bool {
        let Some(index) = self.groups.iter().position(|g| {
            g.state == GroupState::Running && g.top().is_some_and(|e| e.reconv == g.pc)
        }) else {
            return false;
        };
        let (mask, top) = (self.groups[index].mask, self.groups[index].top());
        let Some(join_id) = top.map(|e| e.join) else {
            return false;
        };
        match self.joins.iter_mut().find(|j| j.id == join_id) {
            Some(join) => {
                join.arrived |= mask;
                join.yields = 0;
            }
            None => {
                // A stack entry without its join cannot happen (dissolving and completing remove
                // both); drop it rather than park forever.
                self.groups[index].stack.pop();
                return true;
            }
        }
        if let Some(parked) = self.groups.iter().position(|g| g.is_parked_at(join_id)) {
            self.groups[parked].mask |= mask;
            self.remove_group(index);
        } else {
            self.groups[index].state = GroupState::AtJoin;
        }
        true
    }

    /// Completes (or discards, when all its lanes exited) one join.
    fn finish_one_join(&mut self, counters: &mut ScheduleCounters) -> bool {
        let live = self.state.live();
        let Some(position) = self.joins.iter().position(|j| {
            let needed = j.expected & live;
            needed == 0 || j.arrived & needed == needed
        }) else {
            return false;
        };
        let join = self.joins.remove(position);
        if join.arrived != 0 {
            counters.reconvergences += 1;
        }
        for group in &mut self.groups {
            if group.is_parked_at(join.id) {
                group.state = GroupState::Running;
            }
            group.stack.retain(|e| e.join != join.id);
        }
        true
    }

    /// Dissolves one join that lanes are parked at while a group belonging to it waits at a
    /// barrier (rule 3 of the module docs).
    fn dissolve_one_blocked(&mut self, counters: &mut ScheduleCounters) -> bool {
        let blocked = self.joins.iter().find(|j| {
            j.arrived != 0
                && self
                    .groups
                    .iter()
                    .any(|g| matches!(g.state, GroupState::AtBarrier { .. }) && g.belongs_to(j.id))
        });
        match blocked.map(|j| j.id) {
            Some(id) => {
                self.dissolve(id, counters);
                true
            }
            None => false,
        }
    }

    /// Merges two runnable groups, or two groups waiting at the same barrier, at the same pc
    /// with the same join stack. (Lanes that take a lock one after the other reach the barrier
    /// after it one at a time; merged, they stay one group, so the warp's bookkeeping does not
    /// grow with every lock hand-over.) Merged runnable groups are watched afresh, and sit out
    /// the shorter of their back-offs.
    #[inline]
    fn merge_one(&mut self) -> bool {
        for i in 0..self.groups.len() {
            if self.groups[i].state == GroupState::AtJoin {
                continue;
            }
            for j in i + 1..self.groups.len() {
                let (a, b) = (&self.groups[i], &self.groups[j]);
                if a.pc == b.pc && a.state == b.state && a.stack == b.stack {
                    let (sleep, other) = (a.watch.sleep.min(b.watch.sleep), b.mask);
                    self.groups[i].mask |= other;
                    self.groups[i].rewatch();
                    self.groups[i].watch.sleep = sleep;
                    self.remove_group(j);
                    return true;
                }
            }
        }
        false
    }
}

/// Watches a group that just yielded at its (updated) pc: probes it when its turn comes (every
/// yield when `waited_for`, see rule 1 of the module docs), and when it is spinning draws its
/// back-off from `rng`. Returns whether it is spinning.
fn watch_yield(
    group: &mut Group,
    state: &WarpState,
    waited_for: bool,
    rng: &mut SplitMix64,
) -> bool {
    let watch = &mut group.watch;
    if !waited_for && watch.countdown > 0 {
        watch.countdown -= 1;
        group.last_yield = None;
        return false;
    }
    let print = fingerprint(state, group.pc, group.mask);
    let spinning = match group.last_yield.replace(print) {
        Some(before) if before == print => true,
        Some(_) => {
            // A pair found the group working: probe again after a longer gap.
            if !waited_for {
                watch.countdown = watch.gap;
                watch.gap = watch.gap.saturating_mul(2).min(MAX_PROBE_GAP);
                group.last_yield = None;
            }
            false
        }
        // The first half of a pair: the next yield is probed too. A group that continues a
        // spinning group's loop (see `Warp::apply`, `Diverge`) is presumed to spin on.
        None => watch.spins > 0,
    };
    if spinning {
        watch.spins = watch.spins.saturating_add(1);
        let most = ((1u32 << watch.spins.min(8)) - 1).min(MAX_BACKOFF);
        watch.sleep = (rng.next() % u64::from(most + 1)) as u8;
    } else {
        watch.spins = 0;
    }
    spinning
}

/// What a light warp's group did, as the warp takes it itself ([`Warp::take_light`], for a
/// light warp's step; a CTA's barrier phases take the same events in `crate::exec::phases`).
#[derive(Debug)]
enum PhaseRun {
    /// Every lane of the group exited (taken: the warp is finished).
    Exited,
    /// The group arrived at barrier `id` with the lanes `lanes` (taken, as
    /// [`Warp::arrive_light`] takes it: the warp waits there, light, with those lanes; the
    /// caller keeps the CTA's count of arrivals).
    Arrived { id: u32, lanes: u32 },
    /// Any other event, not taken.
    Other(GroupExit),
}

/// What [`Warp::step_light_run`] did.
#[derive(Debug)]
pub struct LightRunEnd {
    /// How many warps ran (at least one).
    pub ran: usize,
    /// The last warp's step, when the batch did not take its event (`None`: every warp that
    /// ran exited or arrived at a barrier).
    pub last: Option<Step>,
    /// Some warp of the run arrived at a barrier inside the batch (its arrival is in the CTA's
    /// list; an arrival in `last` is not).
    pub arrived: bool,
    /// Some warp of the run retired lanes.
    pub retired: bool,
}

/// A run of light warps as a backend's batch sees them (see [`Warp::step_light_run`]).
struct LightRun<'a> {
    warps: &'a mut [Warp],
    /// The warps' groups (so that the backend fetches them in one call, not one per warp).
    groups: &'a [GroupAt],
    /// The CTA's barriers with arrivals, `(id, lanes waiting)`.
    barriers: &'a mut Vec<(u32, u32)>,
    arrived: bool,
    retired: bool,
}

impl<'a> WarpRun<'a> for LightRun<'a> {
    fn groups(&self) -> &'a [GroupAt] {
        self.groups
    }

    fn state(&mut self, i: usize) -> &mut WarpState {
        &mut self.warps[i].state
    }

    fn pass(&mut self, i: usize, exit: &GroupExit) -> bool {
        let warp = &mut self.warps[i];
        match (exit, warp.light) {
            (&GroupExit::Barrier { pc, mask, id }, Some(light)) if mask & light.mask != 0 => {
                let lanes = warp.arrive_light(light, pc, mask, id).count_ones();
                self.retired |= mask & light.mask != light.mask;
                self.arrived = true;
                add_arrival(self.barriers, id, lanes);
                true
            }
            _ => false,
        }
    }
}

/// Adds `lanes` arrivals at barrier `id` to a CTA's list of barriers with arrivals.
pub fn add_arrival(barriers: &mut Vec<(u32, u32)>, id: u32, lanes: u32) {
    match barriers.iter_mut().find(|(b, _)| *b == id) {
        Some((_, waiting)) => *waiting += lanes,
        None => barriers.push((id, lanes)),
    }
}

/// What a turn of `events` group runs reports, given its last run's step: a turn in which a
/// group split moved, whatever its last group did.
fn settled_turn(step: Step, events: u32) -> Step {
    match step {
        Step::Spin | Step::Idle if events > 1 => Step::Progress,
        step => step,
    }
}

/// Runs a group on a backend whose `cache` was prepared for `env`.
#[inline(always)]
fn run_prepared(
    runner: &dyn WarpRunner,
    cache: &mut RunnerCache,
    state: &mut WarpState,
    env: &CtaEnv,
    pc: u32,
    mask: u32,
    stop_pc: Option<u32>,
) -> GroupExit {
    // SAFETY: `Warp::step`'s contract: its caller prepared `cache` for `env`.
    unsafe { runner.run_group_prepared(cache, state, env, pc, mask, stop_pc) }
}

/// A fingerprint of everything that decides what the lanes `mask` of a warp do next, apart from
/// memory: the pc, the mask, and those lanes' registers and predicates. A collision can only
/// make the scheduler take a working group for a spinning one (dissolve a join early, back off,
/// make more CTAs resident), all of which are always allowed.
///
/// Each lane folds its own registers, row after row, as `acc = (acc + value) * 3 mod 2^32`:
/// one independent accumulator per lane, so the loop runs as vector adds and shifts over the
/// register file even on SSE2 (a serial hash of every word cost ~5 cycles a word, half a
/// microsecond for a warp of ten registers: more than the backend call it watches). The step is
/// a bijection of the value for a given accumulator, so a change of one register of one lane
/// always changes that lane's accumulator. The accumulators of the group's lanes are summed
/// with an odd 64-bit key each (a change of one accumulator by less than 2^32 always changes
/// the sum), and mixed with the pc, the mask and the predicates.
fn fingerprint(state: &WarpState, pc: u32, mask: u32) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, v: u64| (h.rotate_left(5) ^ v).wrapping_mul(K);
    let mut acc = [0u32; WARP_STRIDE];
    for row in state.regs.chunks_exact(WARP_STRIDE) {
        for (a, &value) in acc.iter_mut().zip(row) {
            let sum = a.wrapping_add(value);
            *a = sum.wrapping_add(sum << 1);
        }
    }
    // The group's lanes, each with its own odd key: independent multiplies, not a chain.
    let mut lanes = 0u64;
    for (lane, (&a, &key)) in acc.iter().zip(&LANE_KEYS).enumerate() {
        let keep = 0u32.wrapping_sub(mask >> lane & 1);
        lanes = lanes.wrapping_add(u64::from(a & keep).wrapping_mul(key));
    }
    let mut h = mix(mix(0, (u64::from(pc) << 32) | u64::from(mask)), lanes);
    for &pred in &state.preds {
        h = mix(h, u64::from(pred & mask));
    }
    h
}

/// An odd 64-bit key per lane for [`fingerprint`] (odd multiples of the 64-bit golden ratio).
const LANE_KEYS: [u64; WARP_STRIDE] = {
    let mut keys = [0u64; WARP_STRIDE];
    let mut lane = 0;
    while lane < WARP_STRIDE {
        keys[lane] = 0x9e37_79b9_7f4a_7c15u64.wrapping_mul(2 * lane as u64 + 1) | 1;
        lane += 1;
    }
    keys
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{GlobalMemory, SharedMemory, Split};
    use crate::ir::{Dialect, Guard, Inst, Kernel, LaunchSpec, Op, Span};
    use std::collections::VecDeque;
    use std::sync::Mutex;

    /// A backend that returns a fixed sequence of events and records what it was asked to run.
    struct Scripted {
        events: Mutex<VecDeque<GroupExit>>,
        asked: Mutex<Asked>,
        /// Runs past a split where `run_group_splitting` may (the next scripted event is then
        /// the fall-through group's), as the JIT does.
        splits: bool,
    }

    impl WarpRunner for Scripted {
        fn run_group(
            &self,
            _: &mut WarpState,
            _: &CtaEnv,
            pc: u32,
            mask: u32,
            stop: Option<u32>,
        ) -> GroupExit {
            self.asked.lock().unwrap().push((pc, mask, stop));
            self.events
                .lock()
                .unwrap()
                .pop_front()
                .expect("script too short")
        }

        unsafe fn run_group_splitting(
            &self,
            _: &mut RunnerCache,
            warp: &mut WarpState,
            env: &CtaEnv,
            pc: u32,
            mask: u32,
            spin_exits: &[u32],
        ) -> (Option<Split>, GroupExit) {
            let exit = self.run_group(warp, env, pc, mask, None);
            match exit {
                GroupExit::Diverge(split)
                    if self.splits && may_run_past(env, &split, spin_exits) =>
                {
                    let fall = self.run_group(warp, env, split.fall_pc, split.fall, None);
                    (Some(split), fall)
                }
                exit => (None, exit),
            }
        }
    }

    /// Where a backend may run past `split` (as the JIT does, see
    /// [`WarpRunner::run_group_splitting`]): its target is not the next instruction, and it
    /// pushes no join.
    fn may_run_past(env: &CtaEnv, split: &Split, spin_exits: &[u32]) -> bool {
        split.taken_pc != split.fall_pc
            && (env.info.reconverge()[split.branch_pc as usize].is_none()
                || (split.taken_pc <= split.branch_pc && spin_exits.contains(&split.branch_pc)))
    }

    const LOW16: u32 = 0x0000_ffff;
    const HIGH16: u32 = 0xffff_0000;

    /// What one step of [`with_warp`]'s warp did: its step, its groups after it, and the
    /// arrivals at barriers the turn handed to the CTA itself.
    type TestStep = (Step, Vec<(u32, u32, GroupState)>, Vec<(u32, u32)>);

    /// The groups a scripted runner was asked to run, `(pc, mask, stop pc)`, in order.
    type Asked = Vec<(u32, u32, Option<u32>)>;

    fn with_warp(events: Vec<GroupExit>, test: impl FnOnce(&mut dyn FnMut() -> TestStep)) {
        with_runner(false, events, test);
    }

    /// Eight `NOP`s (in the [`KernelInfo`]s the tests make, branch 0 reconverges at 5).
    fn nop_kernel() -> Kernel {
        Kernel {
            name: "k".into(),
            dialect: Dialect::Sass,
            warp_size: 32,
            insts: vec![
                Inst {
                    op: Op::Nop,
                    guard: Guard::ALWAYS,
                    span: Span::default(),
                    text: String::new(),
                    sched: vec![]
                };
                8
            ],
            labels: vec![],
            num_regs: 2,
            num_preds: 1,
            uniform: Default::default(),
            launch: LaunchSpec::default(),
            span: Span::default(),
        }
    }

    /// Runs `f` with the environment of a CTA of one warp of [`nop_kernel`], whose branch 0
    /// reconverges at 5.
    fn with_env<R>(f: impl FnOnce(&CtaEnv) -> R) -> R {
        let kernel = nop_kernel();
        let mut info = KernelInfo::unchecked(&kernel, 0);
        info.set_join(0, 5);
        let (global, _) = GlobalMemory::with_allocations(&[4]);
        let shared = SharedMemory::new(0);
        let env = CtaEnv {
            kernel: &kernel,
            info: &info,
            global: &global,
            shared: &shared,
            cbank: &[],
            surfaces: &[],
            ctaid: [0; 3],
            ntid: [32, 1, 1],
            nctaid: [1; 3],
        };
        f(&env)
    }

    /// [`with_warp`] with a runner that runs past splits (`splits`) or not; returns the groups
    /// the runner was asked to run, `(pc, mask, stop pc)`, in order.
    fn with_runner(
        splits: bool,
        events: Vec<GroupExit>,
        test: impl FnOnce(&mut dyn FnMut() -> TestStep),
    ) -> Asked {
        with_env(|env| {
            let runner = Scripted {
                events: Mutex::new(events.into()),
                asked: Mutex::new(Vec::new()),
                splits,
            };
            let mut warp = Warp::new(WarpState::new(2, 1, 0, u32::MAX));
            let mut counters = ScheduleCounters::default();
            let mut barriers = Vec::new();
            let mut cache = RunnerCache::default();
            runner.prepare_cta(&mut cache, env);
            let mut step = || {
                let step = warp.step(&runner, &mut cache, env, &mut counters, &mut barriers);
                // The arrivals the turn handed to the CTA itself (the last one is the step's).
                (step, warp.describe(), std::mem::take(&mut barriers))
            };
            test(&mut step);
            runner.asked.into_inner().unwrap()
        })
    }

    /// A split the backend runs past leaves every step exactly as returning it would, also
    /// when the warp's only group splits and its fall-through side arrives at a barrier (the
    /// turn goes on with the taken side either way).
    #[test]
    fn running_past_a_split_gives_the_steps_of_returning_it() {
        let script = [
            // The launch group yields: a general group alone, with no join.
            GroupExit::Yield {
                pc: 2,
                mask: u32::MAX,
            },
            // A backward branch with no reconvergence point splits it.
            GroupExit::Diverge(Split {
                branch_pc: 3,
                taken_pc: 2,
                taken: HIGH16,
                fall_pc: 4,
                fall: LOW16,
            }),
            GroupExit::Barrier {
                pc: 6,
                mask: LOW16,
                id: 0,
            },
            GroupExit::Exited,
            // A group of both halves, split again, both sides exiting.
            GroupExit::Diverge(Split {
                branch_pc: 3,
                taken_pc: 2,
                taken: HIGH16,
                fall_pc: 4,
                fall: LOW16,
            }),
            GroupExit::Exited,
            GroupExit::Exited,
        ];
        let first = &script[..4];
        assert_eq!(trace(true, first), trace(false, first));
        // The taken half exits in the turn of the split, after the arrival.
        assert_eq!(
            trace(false, first).0[1],
            format!(
                "Progress {:?} {:?}",
                vec![(6, LOW16, GroupState::AtBarrier { id: 0 })],
                vec![(0, 16)]
            )
        );
        let again = [&script[..1], &script[4..]].concat();
        assert_eq!(trace(true, &again), trace(false, &again));
    }

    /// Everything the scheduler keeps about a warp's groups, for comparing two warps.
    fn bookkeeping(warp: &Warp) -> String {
        format!(
            "{:?} cursor {} exited {:#x}",
            warp.groups, warp.cursor, warp.state.exited
        )
    }

    /// [`Warp::hand_over`] leaves exactly what applying the split, then the arrival, and
    /// settling leave (in the order `run_group` and `run_on` do it), or declines having
    /// changed nothing: random settled warps of up to five groups (running, sleeping, or at one
    /// of two barriers at three pcs, with random spin watches and probes), any running one the
    /// one that splits, random splits at a branch with and without a reconvergence point (a
    /// spin exit or not) and random arrivals. (The step-level wiring around it, in `run_group`
    /// and `go_on`, is held by the random-steps test below.)
    #[test]
    fn a_hand_over_in_one_step_is_the_split_then_the_arrival() {
        let kernel = nop_kernel();
        let mut info = KernelInfo::unchecked(&kernel, 0);
        info.set_join(0, 5);
        let mut rng = SplitMix64::new(7);
        let (mut fused, mut before, mut after) = (0, 0, 0);
        for _ in 0..20_000 {
            let mut warp = Warp::new(WarpState::new(2, 1, 0, u32::MAX));
            warp.light = None;
            let mut lanes = u32::MAX;
            for _ in 0..rng.next_in(2, 6) {
                let mask = lanes & rng.next() as u32;
                lanes &= !mask;
                if mask == 0 {
                    continue;
                }
                let mut group = Group::new(rng.next_in(1, 4) as u32, mask, Vec::new());
                match rng.next_in(0, 4) {
                    0 => group.watch.sleep = 1,
                    1 | 2 => {
                        group.state = GroupState::AtBarrier {
                            id: rng.next_in(0, 2) as u32,
                        }
                    }
                    _ => {}
                }
                // Watches in every state a group can carry: a waiting group keeps the watch
                // and the probe it had when it arrived.
                group.watch.spins = rng.next_in(0, 3) as u8;
                group.watch.countdown = rng.next_in(0, 3) as u16;
                group.watch.gap = rng.next_in(1, 5) as u16;
                group.last_yield = (rng.next() & 1 == 0).then(|| rng.next());
                warp.groups.push(group);
            }
            warp.state.exited = lanes;
            warp.settle(&mut ScheduleCounters::default());
            let running: Vec<usize> = (0..warp.groups.len())
                .filter(|&i| warp.groups[i].state == GroupState::Running)
                .collect();
            if running.is_empty() {
                continue;
            }
            let index = running[rng.next_in(0, running.len() as i128) as usize];
            let branch_pc = if rng.next() & 1 == 0 { 0 } else { 3 };
            if rng.next() & 1 == 0 {
                warp.spin_exits.push(branch_pc);
            }
            let split = Split {
                branch_pc,
                taken_pc: rng.next_in(0, 4) as u32,
                taken: rng.next() as u32,
                fall_pc: branch_pc + 1,
                fall: rng.next() as u32,
            };
            let arrival = (
                rng.next_in(1, 4) as u32,
                rng.next() as u32 | rng.next() as u32,
                rng.next_in(0, 2) as u32,
            );
            let (pc, mask, id) = arrival;
            let ran = warp.groups[index].mask;
            if split.fall & ran & !split.taken == 0 {
                // No fall-through group to arrive anywhere: the split alone is applied.
                let unchanged = bookkeeping(&warp);
                let mut counters = ScheduleCounters::default();
                assert!(warp
                    .hand_over(index, split, arrival, &info, &mut counters)
                    .is_none());
                assert_eq!(bookkeeping(&warp), unchanged);
                continue;
            }
            let mut expected = ScheduleCounters::default();
            let mut reference = Warp::new(warp.state.clone());
            (reference.groups, reference.light, reference.spin_exits) =
                (warp.groups.clone(), None, warp.spin_exits.clone());
            reference.cursor = index + 1;
            reference.apply(index, GroupExit::Diverge(split), &info, &mut expected);
            reference.cursor = index + 1;
            let step = reference.apply_and_settle(
                index,
                GroupExit::Barrier { pc, mask, id },
                &info,
                &mut expected,
            );

            let unchanged = bookkeeping(&warp);
            let mut counters = ScheduleCounters::default();
            match warp.hand_over(index, split, arrival, &info, &mut counters) {
                Some(got) => {
                    fused += 1;
                    let waiting = reference
                        .groups
                        .iter()
                        .position(|g| g.state == GroupState::AtBarrier { id } && g.pc == pc);
                    if waiting.is_some_and(|w| w < index) {
                        before += 1;
                    } else {
                        after += 1;
                    }
                    assert_eq!(format!("{got:?}"), format!("{step:?}"));
                    assert_eq!(bookkeeping(&warp), bookkeeping(&reference));
                    assert_eq!(format!("{counters:?}"), format!("{expected:?}"));
                }
                None => assert_eq!(bookkeeping(&warp), unchanged),
            }
        }
        // Both places of the waiting group, often enough to matter.
        assert!(
            before > 200 && after > 200,
            "{before} before, {after} after, of {fused}"
        );
    }

    /// A lock handed from lane to lane, each winner arriving at the barrier where the ones
    /// before it wait: the hand-overs taken in one step ([`Warp::hand_over`]) count as the two
    /// runs each is, so every turn ends after the same groups as when the backend returns
    /// each split, and the steps, groups and arrivals are the same.
    #[test]
    fn hand_overs_in_one_step_end_each_turn_where_returned_splits_do() {
        let mut script = vec![GroupExit::Yield {
            pc: 2,
            mask: u32::MAX,
        }];
        for lane in 0..31 {
            script.push(GroupExit::Diverge(Split {
                branch_pc: 3,
                taken_pc: 2,
                taken: u32::MAX << (lane + 1),
                fall_pc: 4,
                fall: 1 << lane,
            }));
            script.push(GroupExit::Barrier {
                pc: 6,
                mask: 1 << lane,
                id: 0,
            });
        }
        let (steps, asked) = trace(true, &script);
        assert_eq!((steps.clone(), asked), trace(false, &script));
        // The launch group's yield, then eight hand-overs (16 runs) a turn.
        let waiting = |lanes: u32| (6, (1u32 << lanes) - 1, GroupState::AtBarrier { id: 0 });
        assert!(
            steps[1].contains(&format!("{:?}", waiting(8))),
            "{}",
            steps[1]
        );
        assert!(
            steps[2].contains(&format!("{:?}", waiting(16))),
            "{}",
            steps[2]
        );
    }

    /// Four steps of a warp on the script, with a runner that runs past splits or not: what
    /// each step reported, and the groups the runner was asked to run.
    fn trace(splits: bool, script: &[GroupExit]) -> (Vec<String>, Asked) {
        let mut steps = Vec::new();
        let asked = with_runner(splits, script.to_vec(), |step| {
            for _ in 0..4 {
                let (result, groups, arrivals) = step();
                steps.push(format!("{result:?} {groups:?} {arrivals:?}"));
            }
        });
        (steps, asked)
    }

    /// The scheduler lets a backend run past a split only where the fall-through group is the
    /// next to run, with no stop pc, as it stands: not while a join is pending (the group would
    /// run to its reconvergence point), not while another group of the warp can run (the
    /// fall-through side may merge with it).
    #[test]
    fn a_split_is_run_past_only_where_its_fall_through_side_runs_next_as_it_stands() {
        let split = |taken, fall| {
            GroupExit::Diverge(Split {
                branch_pc: 3,
                taken_pc: 6,
                taken,
                fall_pc: 4,
                fall,
            })
        };
        // A join is pending (branch 0 reconverges at 5, where the taken half parks at once)
        // when the other half splits at branch 3, which has no reconvergence point.
        let pending = [
            GroupExit::Diverge(Split {
                branch_pc: 0,
                taken_pc: 5,
                taken: HIGH16,
                fall_pc: 1,
                fall: LOW16,
            }),
            split(0x0000_00ff, 0x0000_ff00),
            GroupExit::Reconverge { mask: 0x0000_ff00 },
            GroupExit::Reconverge { mask: 0x0000_00ff },
            GroupExit::Exited,
        ];
        let (steps, asked) = trace(false, &pending);
        assert!(asked.contains(&(1, LOW16, Some(5))), "{asked:?}");
        assert_eq!(trace(true, &pending), (steps, asked));
        // The lanes split at branch 3 into halves at 6 and 4; the high half moves to 4; then
        // the low half splits again, its fall-through side landing where the high half stands:
        // they merge and run as one group.
        let beside = [
            GroupExit::Yield {
                pc: 2,
                mask: u32::MAX,
            },
            split(HIGH16, LOW16),
            GroupExit::Yield { pc: 2, mask: LOW16 },
            GroupExit::Yield {
                pc: 4,
                mask: HIGH16,
            },
            split(0x0000_00ff, 0x0000_ff00),
            GroupExit::Exited,
            GroupExit::Exited,
        ];
        let (steps, asked) = trace(false, &beside);
        assert!(asked.contains(&(4, 0xffff_ff00, None)), "{asked:?}");
        assert_eq!(trace(true, &beside), (steps, asked));
    }

    #[test]
    fn a_fresh_warp_reports_its_launch_group_until_it_runs() {
        let warp = Warp::new(WarpState::new(2, 1, 0, 0xff));
        assert_eq!(warp.describe(), vec![(0, 0xff, GroupState::Running)]);
        assert!(!warp.is_finished() && warp.has_runnable());
        let empty = Warp::new(WarpState::new(2, 1, 1, 0));
        assert!(empty.is_finished() && !empty.has_runnable());
        assert_eq!(empty.describe(), vec![]);
    }

    #[test]
    fn the_launch_group_materialises_on_any_event_but_exit() {
        let events = vec![GroupExit::Yield { pc: 3, mask: LOW16 }, GroupExit::Exited];
        with_warp(events, |step| {
            // The launch group ran at pc 0 with every lane; the high lanes exited on the way.
            let (result, groups, _) = step();
            assert!(matches!(result, Step::Progress));
            assert_eq!(groups, vec![(3, LOW16, GroupState::Running)]);
            let (_, groups, _) = step();
            assert_eq!(groups, vec![]);
            let (result, _, _) = step();
            assert!(matches!(result, Step::Idle));
        });
    }

    #[test]
    fn a_spinning_group_dissolves_the_join_its_siblings_are_parked_at() {
        let diverge = GroupExit::Diverge(Split {
            branch_pc: 0,
            taken_pc: 5,
            taken: LOW16,
            fall_pc: 1,
            fall: HIGH16,
        });
        let spin = GroupExit::Yield {
            pc: 1,
            mask: HIGH16,
        };
        with_warp(
            vec![diverge, spin.clone(), spin, GroupExit::Exited],
            |step| {
                // The taken lanes start at the reconvergence point and park there at once.
                let (_, groups, _) = step();
                assert_eq!(
                    groups,
                    vec![
                        (1, HIGH16, GroupState::Running),
                        (5, LOW16, GroupState::AtJoin)
                    ]
                );
                assert_eq!(GroupState::AtJoin.describe(), "waiting to reconverge");
                // The first yield records the spinners' state; the second finds it unchanged.
                let (_, groups, _) = step();
                assert_eq!(groups[1], (5, LOW16, GroupState::AtJoin));
                let (_, groups, _) = step();
                assert_eq!(
                    groups,
                    vec![
                        (1, HIGH16, GroupState::Running),
                        (5, LOW16, GroupState::Running)
                    ]
                );
                // The released lanes run on past the reconvergence point without a stop.
                let (step_result, groups, _) = step();
                assert!(matches!(step_result, Step::Progress));
                assert_eq!(groups, vec![(1, HIGH16, GroupState::Running)]);
            },
        );
    }

    #[test]
    fn a_group_at_a_barrier_dissolves_the_join_its_siblings_are_parked_at() {
        let diverge = GroupExit::Diverge(Split {
            branch_pc: 0,
            taken_pc: 5,
            taken: LOW16,
            fall_pc: 1,
            fall: HIGH16,
        });
        let barrier = GroupExit::Barrier {
            pc: 2,
            mask: HIGH16,
            id: 3,
        };
        // The released siblings run in the same turn, after the CTA took the arrival.
        let yielded = GroupExit::Yield { pc: 5, mask: LOW16 };
        with_warp(vec![diverge, barrier, yielded], |step| {
            step();
            let (result, groups, arrivals) = step();
            assert!(matches!(result, Step::Progress), "{result:?}");
            assert_eq!(arrivals, vec![(3, 16)]);
            assert_eq!(
                groups,
                vec![
                    (2, HIGH16, GroupState::AtBarrier { id: 3 }),
                    (5, LOW16, GroupState::Running)
                ]
            );
        });
    }

    #[test]
    fn lanes_dropped_by_the_backend_count_as_exited() {
        let diverge = GroupExit::Diverge(Split {
            branch_pc: 0,
            taken_pc: 5,
            taken: 0xf,
            fall_pc: 1,
            fall: 0xf0,
        });
        with_warp(
            vec![diverge, GroupExit::Reconverge { mask: 0x70 }],
            |step| {
                let (_, groups, _) = step();
                // Lanes 8..31 were in neither side: they exited.
                assert_eq!(
                    groups,
                    vec![(1, 0xf0, GroupState::Running), (5, 0xf, GroupState::AtJoin)]
                );
                // Lane 7 exited on the way to the join; the join completes with lanes 0..6.
                let (_, groups, _) = step();
                assert_eq!(groups, vec![(5, 0x7f, GroupState::Running)]);
            },
        );
    }

    /// A runner whose events come from a seeded generator, resolved against the lanes it is
    /// asked to run (so that running past a split asks for exactly the fall-through group's
    /// lanes), and which runs past splits where allowed when `splits`.
    struct Random {
        rng: Mutex<SplitMix64>,
        splits: bool,
        /// Splits run past, and those whose fall-through side arrived at a barrier.
        ran_past: Mutex<(u64, u32)>,
    }

    impl Random {
        fn event(&self, mask: u32, stop: Option<u32>) -> GroupExit {
            let mut rng = self.rng.lock().unwrap();
            let most = |r: &mut SplitMix64| {
                if r.next() % 4 == 0 {
                    r.next() as u32
                } else {
                    u32::MAX
                }
            };
            match rng.next_in(0, 10) {
                0 => GroupExit::Exited,
                1 | 2 => GroupExit::Yield {
                    pc: rng.next_in(0, 8) as u32,
                    mask: mask & most(&mut rng),
                },
                3 if stop.is_some() => GroupExit::Reconverge {
                    mask: mask & most(&mut rng),
                },
                3..=5 => {
                    let pc = 6 + rng.next_in(0, 2) as u32;
                    let id = rng.next_in(0, 2) as u32;
                    GroupExit::Barrier {
                        pc,
                        mask: mask & most(&mut rng),
                        id,
                    }
                }
                _ => {
                    let branch_pc = if rng.next() % 2 == 0 { 0 } else { 3 };
                    let taken = mask & rng.next() as u32;
                    GroupExit::Diverge(Split {
                        branch_pc,
                        taken_pc: rng.next_in(0, 8) as u32,
                        taken,
                        fall_pc: branch_pc + 1,
                        fall: mask & !taken & most(&mut rng),
                    })
                }
            }
        }
    }

    impl WarpRunner for Random {
        fn run_group(
            &self,
            _: &mut WarpState,
            _: &CtaEnv,
            _: u32,
            mask: u32,
            stop: Option<u32>,
        ) -> GroupExit {
            self.event(mask, stop)
        }

        unsafe fn run_group_splitting(
            &self,
            _: &mut RunnerCache,
            warp: &mut WarpState,
            env: &CtaEnv,
            pc: u32,
            mask: u32,
            spin_exits: &[u32],
        ) -> (Option<Split>, GroupExit) {
            let exit = self.run_group(warp, env, pc, mask, None);
            match exit {
                GroupExit::Diverge(split)
                    if self.splits
                        && split.taken != 0
                        && split.fall != 0
                        && may_run_past(env, &split, spin_exits) =>
                {
                    let fall = self.run_group(warp, env, split.fall_pc, split.fall, None);
                    let mut ran_past = self.ran_past.lock().unwrap();
                    ran_past.0 += 1;
                    ran_past.1 += u32::from(matches!(fall, GroupExit::Barrier { .. }));
                    (Some(split), fall)
                }
                exit => (None, exit),
            }
        }
    }

    /// Up to 60 steps of a warp on the [`Random`] runner of `seed`, running past splits or
    /// not: everything the scheduler keeps after each step (the counters without `splits`),
    /// and how many of the runs past a split arrived at a barrier. Releases every barrier and
    /// dissolves parked joins when nothing can run.
    fn random_trace(seed: u64, splits: bool) -> (Vec<String>, u32) {
        with_env(|env| {
            let runner = Random {
                rng: Mutex::new(SplitMix64::new(seed)),
                splits,
                ran_past: Mutex::new((0, 0)),
            };
            let mut warp = Warp::new(WarpState::new(2, 1, 0, u32::MAX));
            if seed % 3 == 0 {
                warp.spin_exits.push(0);
            }
            let mut counters = ScheduleCounters::for_cta(seed);
            let mut barriers = Vec::new();
            let mut cache = RunnerCache::default();
            runner.prepare_cta(&mut cache, env);
            let mut out = Vec::new();
            for _ in 0..60 {
                let step = warp.step(&runner, &mut cache, env, &mut counters, &mut barriers);
                let mut c = counters;
                c.splits = 0;
                out.push(format!(
                    "{step:?} {:?} {:?} cursor {} exited {:#x} joins {:?} next_join {} spin_exits {:?} light {:?} {:?}",
                    std::mem::take(&mut barriers),
                    warp.groups,
                    warp.cursor,
                    warp.state.exited,
                    warp.joins,
                    warp.next_join,
                    warp.spin_exits,
                    warp.light,
                    c,
                ));
                if warp.is_finished() {
                    break;
                }
                if !warp.has_runnable() {
                    warp.release_barrier(0, &mut counters);
                    warp.release_barrier(1, &mut counters);
                    warp.dissolve_parked_joins(&mut counters);
                }
            }
            let (ran_past, at_barriers) = *runner.ran_past.lock().unwrap();
            assert_eq!(counters.splits, ran_past, "seed {seed}: splits counted");
            (out, at_barriers)
        })
    }

    /// Whole steps on random events (yields, exits, reconvergences, arrivals at two barriers,
    /// splits at a branch with and without a reconvergence point, some of them spin exits):
    /// running past splits (and so taking hand-overs in one step, [`Warp::hand_over`]) leaves
    /// every step, the arrivals it hands the CTA, the groups, cursor, joins and counters as
    /// returning the splits does, and counts every split run past.
    #[test]
    fn running_past_splits_leaves_every_step_of_random_warps_as_returning_them() {
        let mut hand_overs = 0;
        for seed in 0..20_000u64 {
            let (a, h) = random_trace(seed, true);
            let (b, _) = random_trace(seed, false);
            hand_overs += h;
            if a != b {
                let i = a
                    .iter()
                    .zip(&b)
                    .position(|(x, y)| x != y)
                    .unwrap_or(a.len().min(b.len()));
                panic!(
                    "seed {seed} differs at step {i}:\n split: {}\n plain: {}\n before: {:?}",
                    a.get(i).map_or("-", |s| s),
                    b.get(i).map_or("-", |s| s),
                    i.checked_sub(1).map(|j| &a[j])
                );
            }
        }
        // Runs past a split that ended at a barrier: where hand-overs can be taken in one step.
        assert!(
            hand_overs > 1000,
            "{hand_overs} runs past a split ended at a barrier"
        );
    }
}
