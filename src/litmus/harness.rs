//! The litmus harness: makes the CTAs of a test race, iteration after iteration.
//!
//! A launch through the scheduler starts its host threads per launch, so two CTAs of a short
//! kernel almost never overlap in time and no reordering can be seen. The harness instead keeps
//! **one persistent host thread per CTA** (per litmus thread) for the whole run, each pinned to
//! its role: host thread `t` always runs CTA `t`. Each iteration:
//!
//! 1. all threads meet at a **spin barrier** (sense-reversing, on atomics: no OS sleep while
//!    the threads fit on the cores; see [`SpinBarrier`]);
//! 2. each thread spins until a common start time (the last thread to reach the barrier sets it
//!    1 µs ahead; leaving a barrier takes each thread a different time, the clock does not), then
//!    waits a **random delay** of its own, drawn per iteration: `c` calls of
//!    [`std::hint::spin_loop`] with `c` uniform in `0..R`, `R` drawn from `max_spins + 1`,
//!    half, a quarter, an eighth and a sixteenth of it (so small skews get most samples; a
//!    `pause` is about 27 ns on the AMD EPYC CI host), plus `f` turns of an empty counted loop
//!    with `f` uniform in `0..64` (a third of a nanosecond each) for the skews between two
//!    pauses; so the start skew between two threads takes values from a few ns to a few hundred
//!    ns (430 ns with the default `max_spins` of 16);
//! 3. each thread runs its CTA to completion on itself with the compiled JIT warp code
//!    ([`crate::exec::CtaRunner`], the scheduler's own per-CTA path: traps and deadlocks are
//!    errors as in any launch);
//! 4. all threads meet at the barrier again; thread 0 reads the observed locations, records
//!    the outcome, restores every buffer to its initial bytes and decides whether to go on,
//!    while the others already wait at the next iteration's barrier.
//!
//! With `instances > 1` several such groups of threads run side by side, each on its own copy
//! of the memory (a [`Prepared`] launch each), sharing the iteration budget; this only helps on
//! hosts with at least `instances × CTAs` cores.
//!
//! # Limits
//!
//! [`run`] checks its [`Options`] ([`Options::validate`]) before it allocates or spawns
//! anything, and the test's size once it has made its first copy, before the others; so
//! out-of-range values are errors ([`LitmusError::Setup`]), never an allocation failure or a
//! panic:
//!
//! * `instances` is 1 to [`MAX_INSTANCES`] (each copy costs a host thread per CTA and its own
//!   memory);
//! * a test has 1 to [`MAX_LITMUS_THREADS`] CTAs;
//! * a test's buffers total at most [`MAX_BUFFER_BYTES`] per copy (every buffer is restored
//!   after every iteration, and every copy has its own);
//! * a host thread that cannot be started (out of memory or of threads) is an error
//!   ([`LitmusError::Run`] with [`LaunchError::Config`]) that stops the threads already
//!   started.
//!
//! The other options do not size anything: `iterations` and `stop_after_hits` are only
//! compared with counters, `time_limit` and `timeout` saturate (a deadline past the clock's
//! range is no deadline), `max_spins` is widened to 64 bits before the `+ 1`.
//!
//! The previous runner's `delay` buffer (a per-CTA spin count the PTX program read and looped
//! on) is gone: the host delay does the same job without putting harness code in every test.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{LitmusTest, Location, Verdict};
use crate::engine::{buffers, Backend, Config, Engine, Error, ExitStatus, Overrides, Prepared};
use crate::exec::random::SplitMix64;
use crate::exec::{GlobalMemory, LaunchError};
use crate::front::LaunchText;
use crate::ir::{Dialect, Scalar, Ty};

/// Litmus threads (CTAs) a test may have: each needs a host thread.
pub const MAX_LITMUS_THREADS: u64 = 64;

/// Copies of a test that may run side by side ([`Options::instances`], the command line's
/// `--threads`): each needs its own memory and a host thread per CTA, so the worst case is
/// `MAX_INSTANCES * MAX_LITMUS_THREADS` host threads. More than the host has cores only slows
/// the run down.
pub const MAX_INSTANCES: usize = 256;

/// The most bytes a test's buffers may total (per copy; each copy has its own). A litmus test
/// needs a few words; every buffer is restored after every iteration.
pub const MAX_BUFFER_BYTES: u64 = 1 << 20;

/// Spins at a barrier before a waiting thread starts yielding its core, when every thread has a
/// core: far more than a barrier takes then (a few hundred ns), so only a descheduled thread
/// (a loaded machine) makes the others yield.
const SPINS_BEFORE_YIELD: u32 = 2_000;

/// The same when there are more threads than cores (IRIW's four on two cores): a waiting thread
/// that kept spinning would burn its time slice waiting for a thread that cannot run, so it
/// yields almost at once.
const SPINS_BEFORE_YIELD_OVERSUBSCRIBED: u32 = 16;

/// How long after the last thread reaches the start barrier every thread starts: enough for the
/// others to see the barrier open (a cache-line transfer, ~100-200 ns) and read the clock.
const START_LEAD_NS: u64 = 1_000;

/// How to run a test.
#[derive(Debug, Clone)]
pub struct Options {
    /// Iterations at most.
    pub iterations: u64,
    /// Stop as soon as this many iterations satisfied the condition (`None`: run them all).
    pub stop_after_hits: Option<u64>,
    /// Stop starting iterations after this much wall time (`None`: no limit). The report says
    /// how many iterations ran.
    pub time_limit: Option<Duration>,
    /// The coarse random delay before each CTA: `0..=max_spins` calls of `spin_loop`.
    pub max_spins: u32,
    /// Seed of the per-thread delay generators (SplitMix64).
    pub seed: u64,
    /// Independent copies of the test run side by side: 1 to [`MAX_INSTANCES`].
    pub instances: usize,
    /// Watchdog for one CTA's run in one iteration (`None`: none).
    pub timeout: Option<Duration>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            iterations: 100_000,
            stop_after_hits: None,
            time_limit: None,
            max_spins: 16,
            seed: 0x5eed_1175_0000_0001,
            instances: 1,
            timeout: Some(Duration::from_secs(10)),
        }
    }
}

impl Options {
    /// Checks that the options are in range (see the [module docs](self#limits)): the error
    /// says which value is wrong and what is accepted. [`run`] calls it first.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=MAX_INSTANCES).contains(&self.instances) {
            return Err(format!(
                "{} copies of the test cannot run side by side: the number of copies (instances, \
                 the command line's `--threads`) is 1 to {MAX_INSTANCES}",
                self.instances
            ));
        }
        Ok(())
    }
}

/// One distinct outcome: the observed values, how often, and whether they satisfy the
/// condition.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Outcome {
    pub values: Vec<i128>,
    pub count: u64,
    pub satisfies: bool,
}

/// What a run saw.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LitmusReport {
    /// The observed locations, in tuple order.
    pub observe: Vec<String>,
    pub verdict: Verdict,
    pub condition: String,
    /// Litmus threads (CTAs), each on its own host thread.
    pub threads: u64,
    pub instances: usize,
    pub iterations: u64,
    /// Iterations whose outcome satisfied the condition.
    pub condition_hits: u64,
    /// Every outcome seen, sorted by value.
    pub outcomes: Vec<Outcome>,
    pub wall_seconds: f64,
}

impl LitmusReport {
    /// [`ExitStatus::Failed`] if a forbidden outcome was seen, else [`ExitStatus::Ok`].
    pub fn status(&self) -> ExitStatus {
        if self.forbidden_seen() {
            ExitStatus::Failed
        } else {
            ExitStatus::Ok
        }
    }

    /// The verdict in words: `ok`, `forbidden outcome seen (N times)`, `ok (allowed outcome
    /// not seen)` or `allowed outcome seen N times`.
    pub fn summary(&self) -> String {
        match (self.verdict, self.condition_hits) {
            (Verdict::Forbidden, 0) => "ok".to_string(),
            (Verdict::Forbidden, n) => format!("forbidden outcome seen ({n} times)"),
            (Verdict::Allowed, 0) => "ok (allowed outcome not seen)".to_string(),
            (Verdict::Allowed, n) => format!("allowed outcome seen {n} times"),
        }
    }

    /// The report as `litmus --json` prints it for the file `file`.
    pub fn json<'r>(&'r self, file: &'r str) -> LitmusJson<'r> {
        LitmusJson {
            report: self,
            file,
            status: self.summary(),
            exit_code: self.status().code(),
        }
    }

    /// True if a forbidden outcome was ever seen.
    pub fn forbidden_seen(&self) -> bool {
        self.verdict == Verdict::Forbidden && self.condition_hits > 0
    }

    /// Outcome tuple -> count.
    pub fn histogram(&self) -> BTreeMap<Vec<i128>, u64> {
        self.outcomes
            .iter()
            .map(|o| (o.values.clone(), o.count))
            .collect()
    }
}

/// `atomjit litmus --json`: one file's report, its name, its verdict in words and its exit
/// code.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LitmusJson<'r> {
    #[serde(flatten)]
    pub report: &'r LitmusReport,
    pub file: &'r str,
    pub status: String,
    pub exit_code: u8,
}

/// Why a test could not be run to the end.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LitmusError {
    /// The PTX module or the launch directives do not parse or validate (positions are in the
    /// `.litmus` file).
    #[error("{0}")]
    Load(Error),
    /// The test does not fit the harness (a missing buffer, an index out of range, too many
    /// CTAs, buffers too large, ...) or the [`Options`] are out of range.
    #[error("{0}")]
    Setup(String),
    /// A CTA trapped, deadlocked or hit the watchdog.
    #[error("{0}")]
    Run(LaunchError),
}

impl LitmusError {
    /// A trap or the watchdog for a failed run, [`ExitStatus::Usage`] for anything else.
    pub fn status(&self) -> ExitStatus {
        match self {
            LitmusError::Load(_) | LitmusError::Setup(_) => ExitStatus::Usage,
            LitmusError::Run(e) => ExitStatus::of_launch_error(e),
        }
    }
}

/// A sense-reversing spin barrier for `n` threads. Each thread keeps its own `sense`; the last
/// of the `n` to arrive resets the count and flips the shared sense, which releases the others.
/// The releasing store is `Release` and the waiting loads `Acquire`, so everything a thread did
/// before the barrier is visible to every thread after it.
pub struct SpinBarrier {
    n: usize,
    spins_before_yield: u32,
    count: AtomicUsize,
    sense: AtomicBool,
    /// The common start time the last arriver set (nanoseconds since `epoch`).
    start_at: AtomicU64,
    epoch: Instant,
}

impl SpinBarrier {
    pub fn new(n: usize) -> SpinBarrier {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        SpinBarrier {
            n,
            spins_before_yield: if n <= cores {
                SPINS_BEFORE_YIELD
            } else {
                SPINS_BEFORE_YIELD_OVERSUBSCRIBED
            },
            count: AtomicUsize::new(0),
            sense: AtomicBool::new(false),
            start_at: AtomicU64::new(0),
            epoch: Instant::now(),
        }
    }

    /// Waits until all `n` threads arrived. Returns false (without waiting further) if `abort`
    /// becomes true first: a thread that failed will never arrive.
    pub fn wait(&self, local_sense: &mut bool, abort: &AtomicBool) -> bool {
        *local_sense = !*local_sense;
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.count.store(0, Ordering::Relaxed);
            let now = self.epoch.elapsed().as_nanos() as u64;
            self.start_at.store(now + START_LEAD_NS, Ordering::Relaxed);
            self.sense.store(*local_sense, Ordering::Release);
            return true;
        }
        let mut spins = 0u32;
        while self.sense.load(Ordering::Acquire) != *local_sense {
            if abort.load(Ordering::Relaxed) {
                return false;
            }
            if spins < self.spins_before_yield {
                spins += 1;
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        true
    }
}

impl SpinBarrier {
    /// After [`SpinBarrier::wait`]: spins until the common start time the last thread to arrive
    /// set, `START_LEAD_NS` after it arrived. Threads that leave a barrier leave at different
    /// times (the last arriver at once, the others when they see the shared sense flip, a cache
    /// miss later); waiting for one clock time instead aligns them to the clock's resolution,
    /// so the random delays that follow spread the skew evenly around zero.
    pub fn wait_for_start(&self) {
        let start = self.start_at.load(Ordering::Relaxed);
        while (self.epoch.elapsed().as_nanos() as u64) < start {
            std::hint::spin_loop();
        }
    }
}

/// Waits `coarse` spin-loop hints and `fine` turns of an empty loop.
#[inline(never)]
fn delay(coarse: u32, fine: u32) {
    for _ in 0..coarse {
        std::hint::spin_loop();
    }
    for i in 0..fine {
        std::hint::black_box(i);
    }
}

/// How often one outcome was seen, and whether it satisfies the condition (evaluated once per
/// distinct outcome, not once per iteration: a condition may be long).
#[derive(Clone, Copy)]
struct Seen {
    count: u64,
    satisfies: bool,
}

/// Outcome tuple -> how often, as one copy of the test saw it.
type Histogram = HashMap<Vec<i128>, Seen>;

/// Whether the outcome `values` (in the order of `test.observe`) satisfies the condition.
fn satisfies(test: &LitmusTest, values: &[i128]) -> bool {
    test.condition.eval(&|loc: &Location| {
        // `run` checked that the condition reads observed locations only.
        test.observe
            .iter()
            .position(|o| o == loc)
            .map_or(0, |i| values[i])
    })
}

/// The error for a host thread that could not be started.
fn spawn_error(instance: usize, thread: usize, error: &std::io::Error) -> LaunchError {
    LaunchError::Config(format!(
        "cannot start the host thread for litmus thread {thread} of copy {instance}: {error}"
    ))
}

/// Where to read one observed location: device address and element type.
#[derive(Clone, Copy)]
struct Slot {
    address: u64,
    elem: Ty,
}

/// State every thread of every instance shares.
struct Shared {
    /// When to stop starting iterations (from [`Options::time_limit`]).
    deadline: Option<Instant>,
    /// Iterations handed out so far (claimed one at a time by each instance's thread 0).
    claimed: AtomicU64,
    hits: AtomicU64,
    abort: AtomicBool,
    errors: Mutex<Vec<LaunchError>>,
    /// The stack size of the host thread for (copy, litmus thread); `None`: the default. Only
    /// tests choose one (an impossible size, to see a thread fail to start).
    stack_size: StackSize,
}

/// See [`Shared::stack_size`].
type StackSize = fn(usize, usize) -> Option<usize>;

impl Shared {
    /// A builder for the host thread of litmus thread `thread` of copy `instance`.
    fn host_thread(&self, instance: usize, thread: usize) -> std::thread::Builder {
        let builder =
            std::thread::Builder::new().name(format!("atomjit-litmus-{instance}-{thread}"));
        match (self.stack_size)(instance, thread) {
            Some(bytes) => builder.stack_size(bytes),
            None => builder,
        }
    }
}

impl Shared {
    fn fail(&self, error: LaunchError) {
        // A thread that stopped because another one failed reports "aborted": not the cause.
        let aborted = matches!(&error, LaunchError::Config(m) if m == "aborted");
        if !aborted {
            self.errors
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(error);
        }
        self.abort.store(true, Ordering::Release);
    }
}

/// Loads the test's module: the PTX entry with the test's launch directives bound.
fn load(
    test: &LitmusTest,
    file_name: &str,
    engine: &Engine,
) -> Result<crate::engine::Module, LitmusError> {
    let mut launch = LaunchText::new();
    launch.push(file_name, &test.launch);
    engine
        .load_text(file_name, &test.ptx, Dialect::Ptx, Some(&launch))
        .map_err(LitmusError::Load)
}

/// Runs `test` (read from `file_name`, which error messages name) as `options` says.
pub fn run(
    test: &LitmusTest,
    file_name: &str,
    options: &Options,
) -> Result<LitmusReport, LitmusError> {
    run_with_stacks(test, file_name, options, |_, _| None)
}

/// [`run`], with the host threads' stack sizes chosen by `stack_size` (see
/// [`Shared::stack_size`]).
fn run_with_stacks(
    test: &LitmusTest,
    file_name: &str,
    options: &Options,
    stack_size: StackSize,
) -> Result<LitmusReport, LitmusError> {
    options
        .validate()
        .map_err(|m| LitmusError::Setup(format!("{file_name}: {m}")))?;
    // The harness looks each location up in the outcome tuple; a test built by hand (not by
    // `parse`) might read one that is not in it.
    if let Some(loc) = test
        .condition
        .locations()
        .into_iter()
        .find(|loc| !test.observe.contains(loc))
    {
        return Err(LitmusError::Setup(format!(
            "{file_name}:{}: the condition reads `{loc}`, which is not observed",
            test.observe_line
        )));
    }
    let mut config = Config::default();
    config
        .backend(Backend::Jit)
        .threads(1)
        .timeout(options.timeout);
    let engine = Engine::new(&config);
    let module = load(test, file_name, &engine)?;
    let names = module.kernel_names();
    if names.len() != 1 {
        return Err(LitmusError::Setup(format!(
            "{file_name}: the PTX module must have exactly one entry, it has {}",
            names.len()
        )));
    }
    let name = names[0].to_string();
    // The buffers' size from the declarations, before any memory is allocated or written.
    let (kernel, _) = module.kernel(&name).map_err(LitmusError::Load)?;
    let declared_bytes = kernel
        .launch
        .params
        .iter()
        .fold(0u64, |sum, p| match &p.kind {
            crate::ir::ParamKind::Buffer { elem, len, .. } => {
                sum.saturating_add(len.saturating_mul(u64::from(elem.bytes())))
            }
            crate::ir::ParamKind::Surface(s) => sum.saturating_add(s.bytes()),
            crate::ir::ParamKind::Scalar { .. } | crate::ir::ParamKind::SurfaceAddress { .. } => {
                sum
            }
        });
    if declared_bytes > MAX_BUFFER_BYTES {
        return Err(LitmusError::Setup(format!(
            "{file_name}: the buffers total {declared_bytes} bytes; a litmus test's buffers total \
             at most {MAX_BUFFER_BYTES} bytes (they are restored after every iteration)"
        )));
    }
    let instances = options.instances;
    let prepare = || {
        module
            .prepare(&name, &Overrides::default(), Backend::Jit, false)
            .map_err(LitmusError::Load)
    };
    // One copy first, to check its grid before making the others.
    let first = prepare()?;
    let threads: u64 = first.config().grid.iter().map(|&d| u64::from(d)).product();
    if !(1..=MAX_LITMUS_THREADS).contains(&threads) {
        return Err(LitmusError::Setup(format!(
            "{file_name}: the grid has {threads} CTAs; a litmus test has 1 to {MAX_LITMUS_THREADS} \
             (one host thread each)"
        )));
    }
    let mut prepared = Vec::with_capacity(instances);
    prepared.push(first);
    for _ in 1..instances {
        prepared.push(prepare()?);
    }
    // Where each observed location lives (the same offsets in every instance's memory).
    let buffers = prepared[0].buffers();
    let mut slots = Vec::with_capacity(test.observe.len());
    for loc in &test.observe {
        slots.push(
            slot_of(loc, &buffers).map_err(|m| {
                LitmusError::Setup(format!("{file_name}:{}: {m}", test.observe_line))
            })?,
        );
    }
    // The initial image of every buffer, restored after each iteration.
    let initial: Vec<(u64, Vec<u8>)> = buffers
        .into_iter()
        .map(|b| (b.address, b.bytes.into_vec()))
        .collect();

    let start = Instant::now();
    let shared = Shared {
        deadline: options.time_limit.and_then(|t| start.checked_add(t)),
        claimed: AtomicU64::new(0),
        hits: AtomicU64::new(0),
        abort: AtomicBool::new(false),
        errors: Mutex::new(Vec::new()),
        stack_size,
    };
    let histograms: Vec<Histogram> = std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(prepared.len());
        for (i, p) in prepared.iter().enumerate() {
            let (shared, slots, initial) = (&shared, &slots, &initial);
            let spawned = shared.host_thread(i, 0).spawn_scoped(scope, move || {
                run_instance(
                    test,
                    p,
                    threads as usize,
                    i as u64,
                    options,
                    slots,
                    initial,
                    shared,
                )
            });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    // Stops the copies already running; their threads see the abort flag.
                    shared.fail(spawn_error(i, 0, &e));
                    break;
                }
            }
        }
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    // CTA runs catch their own panics; this would be a harness bug. Report it
                    // rather than return a short histogram.
                    shared.fail(LaunchError::Config(
                        "internal error: a litmus host thread panicked".into(),
                    ));
                    Histogram::new()
                })
            })
            .collect()
    });
    let wall_seconds = start.elapsed().as_secs_f64();
    if let Some(error) = shared
        .errors
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .next()
    {
        return Err(LitmusError::Run(error));
    }
    let mut merged: BTreeMap<Vec<i128>, Seen> = BTreeMap::new();
    for h in histograms {
        for (values, seen) in h {
            merged
                .entry(values)
                .and_modify(|s| s.count += seen.count)
                .or_insert(seen);
        }
    }
    let outcomes: Vec<Outcome> = merged
        .into_iter()
        .map(|(values, seen)| Outcome {
            satisfies: seen.satisfies,
            values,
            count: seen.count,
        })
        .collect();
    Ok(LitmusReport {
        observe: test.observe.iter().map(|l| l.to_string()).collect(),
        verdict: test.verdict,
        condition: test.condition.to_string(),
        threads,
        instances,
        iterations: outcomes.iter().map(|o| o.count).sum(),
        condition_hits: outcomes
            .iter()
            .filter(|o| o.satisfies)
            .map(|o| o.count)
            .sum(),
        outcomes,
        wall_seconds,
    })
}

fn slot_of(loc: &Location, buffers: &[buffers::Buffer]) -> Result<Slot, String> {
    let Some(b) = buffers.iter().find(|b| b.name == loc.buffer) else {
        let names: Vec<&str> = buffers.iter().map(|b| b.name.as_str()).collect();
        return Err(format!(
            "`{loc}`: there is no buffer `{}` (the buffers are: {})",
            loc.buffer,
            names.join(", ")
        ));
    };
    if b.elem.is_float() {
        return Err(format!(
            "`{loc}`: buffer `{}` holds {}, but observed values must be integers",
            b.name,
            b.elem.name()
        ));
    }
    if loc.index >= b.len() {
        return Err(format!(
            "`{loc}` is out of range: buffer `{}` has {} elements",
            b.name,
            b.len()
        ));
    }
    Ok(Slot {
        address: b.address + (loc.index as u64) * u64::from(b.elem.bytes()),
        elem: b.elem,
    })
}

fn read_slot(global: &GlobalMemory, slot: Slot) -> i128 {
    let mut raw = [0u8; 8];
    global.read(slot.address, &mut raw[..slot.elem.bytes() as usize]);
    match buffers::decode(slot.elem, u64::from_le_bytes(raw)) {
        Scalar::Int(v) => v,
        // `slot_of` admits integer buffers only.
        Scalar::Float(f) => f as i128,
    }
}

/// One instance: `threads` host threads (this one is thread 0) on `prepared`'s memory.
#[allow(clippy::too_many_arguments)]
fn run_instance(
    test: &LitmusTest,
    prepared: &Prepared,
    threads: usize,
    instance: u64,
    options: &Options,
    slots: &[Slot],
    initial: &[(u64, Vec<u8>)],
    shared: &Shared,
) -> Histogram {
    let barrier = SpinBarrier::new(threads);
    let stop = AtomicBool::new(false);
    let mut histogram = Histogram::new();
    // Claims the next iteration for this instance, or says there is none left (also when
    // another copy failed: with one CTA no barrier wait would notice).
    let claim = || {
        let enough = shared.abort.load(Ordering::Relaxed)
            || options
                .stop_after_hits
                .is_some_and(|n| shared.hits.load(Ordering::Relaxed) >= n)
            || shared.deadline.is_some_and(|d| Instant::now() >= d);
        !enough && shared.claimed.fetch_add(1, Ordering::Relaxed) < options.iterations
    };
    let worker = |t: usize, mut bookkeeping: Option<&mut dyn FnMut()>| {
        let mut runner = match prepared.cta_runner() {
            Ok(r) => r,
            Err(e) => {
                shared.fail(e);
                return;
            }
        };
        let mut rng = SplitMix64::new(
            options.seed ^ (instance << 32) ^ (t as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
        let spins = u64::from(options.max_spins) + 1;
        let mut sense = false;
        loop {
            if !barrier.wait(&mut sense, &shared.abort) || stop.load(Ordering::Relaxed) {
                break;
            }
            barrier.wait_for_start();
            let r = rng.next();
            // The range itself is drawn first (max_spins, /2, /4, /8 or /16), so that small
            // skews, where the interesting races are, get most of the samples.
            let range = spins >> ((r >> 40) % 5);
            delay((r % range.max(1)) as u32, ((r >> 32) % 64) as u32);
            if let Err(e) = runner.run(t as u64, &shared.abort) {
                shared.fail(e);
                break;
            }
            if !barrier.wait(&mut sense, &shared.abort) {
                break;
            }
            if let Some(f) = bookkeeping.as_mut() {
                f();
            }
        }
    };
    let mut values = vec![0i128; slots.len()];
    let mut after_iteration = || {
        for (v, &slot) in values.iter_mut().zip(slots) {
            *v = read_slot(prepared.global(), slot);
        }
        let hit = match histogram.get_mut(values.as_slice()) {
            Some(seen) => {
                seen.count += 1;
                seen.satisfies
            }
            None => {
                let hit = satisfies(test, &values);
                histogram.insert(
                    values.clone(),
                    Seen {
                        count: 1,
                        satisfies: hit,
                    },
                );
                hit
            }
        };
        if hit {
            shared.hits.fetch_add(1, Ordering::Relaxed);
        }
        for (address, bytes) in initial {
            prepared.global().write(*address, bytes);
        }
        if !claim() {
            stop.store(true, Ordering::Relaxed);
        }
    };
    if !claim() {
        stop.store(true, Ordering::Relaxed);
    }
    std::thread::scope(|scope| {
        for t in 1..threads {
            let worker = &worker;
            let spawned = shared
                .host_thread(instance as usize, t)
                .spawn_scoped(scope, move || worker(t, None));
            if let Err(e) = spawned {
                // The threads already started see the abort flag at the barrier.
                shared.fail(spawn_error(instance as usize, t, &e));
                return;
            }
        }
        worker(0, Some(&mut after_iteration));
    });
    histogram
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::litmus::parse;

    /// The harness spins: unit tests that run it take turns.
    static HARNESS: Mutex<()> = Mutex::new(());

    #[test]
    fn verdicts_have_a_status_a_summary_and_json() {
        let report = |verdict, condition_hits| LitmusReport {
            observe: vec!["out[0]".into()],
            verdict,
            condition: "out[0] == 1".into(),
            threads: 2,
            instances: 1,
            iterations: 10,
            condition_hits,
            outcomes: vec![Outcome {
                values: vec![1],
                count: 10,
                satisfies: true,
            }],
            wall_seconds: 0.5,
        };
        let cases = [
            (Verdict::Forbidden, 0, "ok", ExitStatus::Ok),
            (
                Verdict::Forbidden,
                3,
                "forbidden outcome seen (3 times)",
                ExitStatus::Failed,
            ),
            (
                Verdict::Allowed,
                0,
                "ok (allowed outcome not seen)",
                ExitStatus::Ok,
            ),
            (
                Verdict::Allowed,
                4,
                "allowed outcome seen 4 times",
                ExitStatus::Ok,
            ),
        ];
        for (verdict, hits, summary, status) in cases {
            let r = report(verdict, hits);
            assert_eq!((r.summary().as_str(), r.status()), (summary, status));
        }
        let r = report(Verdict::Forbidden, 3);
        let v = serde_json::to_value(r.json("t.litmus")).unwrap();
        assert_eq!(v["file"], "t.litmus");
        assert_eq!(v["status"], "forbidden outcome seen (3 times)");
        assert_eq!(v["exit_code"], 1);
        assert_eq!(v["verdict"], "forbidden");
        assert_eq!(v["condition_hits"], 3);
        assert_eq!(v["outcomes"][0]["values"], serde_json::json!([1]));
        assert_eq!(LitmusError::Setup("x".into()).status(), ExitStatus::Usage);
    }

    /// A test with `ctas` CTAs, each storing 1 to `out[ctaid]`, observing `out[0]`, with
    /// `.allowed condition` and an unused buffer `pad` of `pad_bytes` bytes.
    fn test_with(ctas: u32, condition: &str, pad_bytes: u64) -> LitmusTest {
        let text = format!(
            ".observe out[0]\n.allowed {condition}\n.grid {ctas}\n.block 1\n\
             .buffer out u32[{ctas}] = 0\n.buffer pad u8[{pad_bytes}] = 0\n.ptx\n\
             .version 8.0\n.target sm_80\n.address_size 64\n\
             .visible .entry t(.param .u64 p_out, .param .u64 p_pad)\n{{\n\
             \t.reg .b32 %r<4>;\n\t.reg .b64 %rd<4>;\n\
             \tld.param.u64 %rd1, [p_out];\n\tmov.u32 %r1, %ctaid.x;\n\
             \tmul.wide.u32 %rd2, %r1, 4;\n\tadd.s64 %rd3, %rd1, %rd2;\n\
             \tmov.u32 %r2, 1;\n\tst.relaxed.gpu.global.u32 [%rd3], %r2;\n\tret;\n}}\n"
        );
        parse("t.litmus", &text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    fn setup_error(result: Result<LitmusReport, LitmusError>) -> String {
        match result {
            Err(LitmusError::Setup(m)) => m,
            other => panic!("expected a setup error, got {other:?}"),
        }
    }

    #[test]
    fn the_number_of_copies_is_checked_before_anything_is_allocated() {
        assert_eq!(Options::default().validate(), Ok(()));
        let test = test_with(2, "out[0] == 1", 1);
        // 2^32 copies once tried to allocate a terabyte; usize::MAX would overflow.
        for instances in [0, MAX_INSTANCES + 1, 5000, 1 << 32, usize::MAX] {
            let options = Options {
                instances,
                ..Options::default()
            };
            let message = options.validate().unwrap_err();
            assert!(
                message.starts_with(&format!("{instances} copies of the test"))
                    && message.contains(&format!("1 to {MAX_INSTANCES}"))
                    && message.contains("`--threads`"),
                "{message}"
            );
            let m = setup_error(run(&test, "f.litmus", &options));
            assert_eq!(m, format!("f.litmus: {message}"));
        }
        let options = Options {
            instances: MAX_INSTANCES,
            ..Options::default()
        };
        assert_eq!(options.validate(), Ok(()));
    }

    #[test]
    fn the_largest_number_of_copies_runs() {
        let _turn = HARNESS.lock().unwrap_or_else(|e| e.into_inner());
        let test = test_with(1, "out[0] == 1", 1);
        let report = run(
            &test,
            "f.litmus",
            &Options {
                iterations: 2 * MAX_INSTANCES as u64,
                instances: MAX_INSTANCES,
                ..Options::default()
            },
        )
        .unwrap();
        assert_eq!(report.instances, MAX_INSTANCES);
        assert_eq!(report.iterations, 2 * MAX_INSTANCES as u64);
        assert_eq!(report.condition_hits, report.iterations);
    }

    #[test]
    fn buffers_larger_than_the_limit_are_an_error() {
        let _turn = HARNESS.lock().unwrap_or_else(|e| e.into_inner());
        // `out` takes 4 bytes: a pad of MAX_BUFFER_BYTES - 4 fits, one byte more does not.
        let fits = test_with(1, "out[0] == 1", MAX_BUFFER_BYTES - 4);
        let report = run(
            &fits,
            "f.litmus",
            &Options {
                iterations: 3,
                ..Options::default()
            },
        )
        .unwrap();
        assert_eq!(report.iterations, 3);
        let big = test_with(1, "out[0] == 1", MAX_BUFFER_BYTES - 3);
        let m = setup_error(run(&big, "f.litmus", &Options::default()));
        assert_eq!(
            m,
            format!(
                "f.litmus: the buffers total {} bytes; a litmus test's buffers total at most \
                 {MAX_BUFFER_BYTES} bytes (they are restored after every iteration)",
                MAX_BUFFER_BYTES + 1
            )
        );
        // Too large to allocate at all: the engine's error or the harness's, never an abort.
        let huge = test_with(1, "out[0] == 1", 1 << 40);
        match run(&huge, "f.litmus", &Options::default()) {
            Err(LitmusError::Setup(m)) => assert!(m.contains("the buffers total"), "{m}"),
            Err(LitmusError::Load(e)) => assert!(e.to_string().contains("allocate"), "{e}"),
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn a_condition_on_an_unobserved_location_is_an_error_not_a_panic() {
        let mut test = test_with(2, "out[0] == 1", 1);
        // `parse` refuses this; a test built by hand may have it.
        test.condition = crate::litmus::parse_cond("out[0] == 1 && out[1] == 1").unwrap();
        let m = setup_error(run(&test, "f.litmus", &Options::default()));
        assert_eq!(
            m,
            "f.litmus:1: the condition reads `out[1]`, which is not observed"
        );
    }

    #[test]
    fn a_100000_term_condition_runs() {
        let _turn = HARNESS.lock().unwrap_or_else(|e| e.into_inner());
        let hit = vec!["out[0] == 1"; 100_000].join(" && ");
        let miss = format!("{hit} && out[0] != 1");
        for (condition, hits) in [(hit, 500), (miss, 0)] {
            let report = run(
                &test_with(2, &condition, 1),
                "f.litmus",
                &Options {
                    iterations: 500,
                    ..Options::default()
                },
            )
            .unwrap();
            assert_eq!(report.iterations, 500);
            assert_eq!(report.condition_hits, hits);
            assert_eq!(report.condition.len(), condition.len());
        }
    }

    /// Runs `test` with the host thread of (copy, litmus thread) `fail` given a stack no
    /// machine has, so it cannot start; every other thread starts normally.
    fn run_failing_to_spawn(
        test: &LitmusTest,
        options: &Options,
        fail: (usize, usize),
    ) -> Result<LitmusReport, LitmusError> {
        // `StackSize` is a plain `fn`: pass `fail` through a static the spawned threads see.
        static FAILING: Mutex<(usize, usize)> = Mutex::new((usize::MAX, usize::MAX));
        *FAILING.lock().unwrap() = fail;
        run_with_stacks(test, "f.litmus", options, |instance, thread| {
            (*FAILING.lock().unwrap() == (instance, thread)).then_some(1 << 50)
        })
    }

    #[test]
    fn a_host_thread_that_cannot_start_is_an_error_and_stops_the_others() {
        let _turn = HARNESS.lock().unwrap_or_else(|e| e.into_inner());
        // Iterations for hours: only the failure can end these runs soon (the time limit only
        // keeps a broken harness from hanging the test).
        let options = Options {
            iterations: u64::MAX,
            instances: 3,
            time_limit: Some(Duration::from_secs(60)),
            ..Options::default()
        };
        for (ctas, fail) in [
            (1, (0, 0)),
            (1, (2, 0)),
            (2, (0, 1)),
            (2, (2, 1)),
            (2, (1, 0)),
        ] {
            let test = test_with(ctas, "out[0] == 1", 1);
            let start = Instant::now();
            let result = run_failing_to_spawn(&test, &options, fail);
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{ctas} CTAs, {fail:?}: the other threads went on after the failure"
            );
            match result {
                Err(LitmusError::Run(LaunchError::Config(m))) => assert!(
                    m.starts_with(&format!(
                        "cannot start the host thread for litmus thread {} of copy {}: ",
                        fail.1, fail.0
                    )),
                    "{m}"
                ),
                other => panic!("{ctas} CTAs, {fail:?}: expected a spawn error, got {other:?}"),
            }
        }
    }

    #[test]
    fn barrier_separates_rounds() {
        // Every thread adds to a counter each round; after each barrier every thread must see
        // exactly n additions per finished round.
        let n = 3;
        let barrier = SpinBarrier::new(n);
        let abort = AtomicBool::new(false);
        let counter = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..n {
                s.spawn(|| {
                    let mut sense = false;
                    for round in 1..=200u64 {
                        counter.fetch_add(1, Ordering::Relaxed);
                        assert!(barrier.wait(&mut sense, &abort));
                        assert_eq!(counter.load(Ordering::Relaxed), round * n as u64);
                        assert!(barrier.wait(&mut sense, &abort));
                    }
                });
            }
        });
        assert_eq!(counter.load(Ordering::Relaxed), 600);
    }

    #[test]
    fn abort_releases_a_waiter_whose_partner_never_comes() {
        let barrier = SpinBarrier::new(2);
        let abort = AtomicBool::new(false);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let mut sense = false;
                barrier.wait(&mut sense, &abort)
            });
            std::thread::sleep(Duration::from_millis(20));
            abort.store(true, Ordering::Release);
            assert!(!waiter.join().unwrap());
        });
    }

    #[test]
    fn start_time_is_after_the_last_arrival() {
        let barrier = SpinBarrier::new(1);
        let mut sense = false;
        assert!(barrier.wait(&mut sense, &AtomicBool::new(false)));
        let before = barrier.epoch.elapsed().as_nanos() as u64;
        barrier.wait_for_start();
        let after = barrier.epoch.elapsed().as_nanos() as u64;
        assert!(after >= barrier.start_at.load(Ordering::Relaxed));
        assert!(barrier.start_at.load(Ordering::Relaxed) <= before + START_LEAD_NS);
    }
}
