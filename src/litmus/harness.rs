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
//! The previous runner's `delay` buffer (a per-CTA spin count the PTX program read and looped
//! on) is gone: the host delay does the same job without putting harness code in every test.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{LitmusTest, Location, Verdict};
use crate::engine::{buffers, Backend, Config, Engine, Error, Overrides, Prepared};
use crate::exec::random::SplitMix64;
use crate::exec::{GlobalMemory, LaunchError};
use crate::front::{self, LaunchText};
use crate::ir::{Dialect, Scalar, Ty};

/// Litmus threads (CTAs) a test may have: each needs a host thread.
pub const MAX_LITMUS_THREADS: u64 = 64;

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
    /// Independent copies of the test run side by side (at least 1).
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

/// Why a test could not be run to the end.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LitmusError {
    /// The PTX module or the launch directives do not parse or validate (positions are in the
    /// `.litmus` file).
    #[error("{0}")]
    Load(Error),
    /// The test does not fit the harness (a missing buffer, an index out of range, ...).
    #[error("{0}")]
    Setup(String),
    /// A CTA trapped, deadlocked or hit the watchdog.
    #[error("{0}")]
    Run(LaunchError),
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
    let program = front::parse_with_launch(file_name, &test.ptx, Dialect::Ptx, &launch)
        .map_err(|e| LitmusError::Load(Error::Parse(e)))?;
    engine.load_program(program).map_err(LitmusError::Load)
}

/// Runs `test` (read from `file_name`, which error messages name) as `options` says.
pub fn run(
    test: &LitmusTest,
    file_name: &str,
    options: &Options,
) -> Result<LitmusReport, LitmusError> {
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
    let instances = options.instances.max(1);
    let mut prepared = Vec::with_capacity(instances);
    for _ in 0..instances {
        prepared.push(
            module
                .prepare(&name, &Overrides::default(), Backend::Jit, false)
                .map_err(LitmusError::Load)?,
        );
    }
    let threads: u64 = prepared[0]
        .config()
        .grid
        .iter()
        .map(|&d| u64::from(d))
        .product();
    if !(1..=MAX_LITMUS_THREADS).contains(&threads) {
        return Err(LitmusError::Setup(format!(
            "{file_name}: the grid has {threads} CTAs; a litmus test has 1 to {MAX_LITMUS_THREADS} \
             (one host thread each)"
        )));
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
    let initial: Vec<(u64, Vec<u8>)> = buffers.into_iter().map(|b| (b.address, b.bytes)).collect();

    let start = Instant::now();
    let shared = Shared {
        deadline: options.time_limit.and_then(|t| start.checked_add(t)),
        claimed: AtomicU64::new(0),
        hits: AtomicU64::new(0),
        abort: AtomicBool::new(false),
        errors: Mutex::new(Vec::new()),
    };
    let histograms: Vec<HashMap<Vec<i128>, u64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = prepared
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let (shared, slots, initial) = (&shared, &slots, &initial);
                scope.spawn(move || {
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
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    // CTA runs catch their own panics; this would be a harness bug. Report it
                    // rather than return a short histogram.
                    shared.fail(LaunchError::Config(
                        "internal error: a litmus host thread panicked".into(),
                    ));
                    HashMap::new()
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
    let mut merged: BTreeMap<Vec<i128>, u64> = BTreeMap::new();
    for h in histograms {
        for (k, v) in h {
            *merged.entry(k).or_insert(0) += v;
        }
    }
    let satisfies = |values: &[i128]| {
        test.condition.eval(&|loc: &Location| {
            let i = test
                .observe
                .iter()
                .position(|o| o == loc)
                .expect("parse checked that the condition reads observed locations");
            values[i]
        })
    };
    let outcomes: Vec<Outcome> = merged
        .into_iter()
        .map(|(values, count)| Outcome {
            satisfies: satisfies(&values),
            values,
            count,
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
) -> HashMap<Vec<i128>, u64> {
    let barrier = SpinBarrier::new(threads);
    let stop = AtomicBool::new(false);
    let mut histogram: HashMap<Vec<i128>, u64> = HashMap::new();
    // Claims the next iteration for this instance, or says there is none left.
    let claim = || {
        let enough = options
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
        let hit = test.condition.eval(&|loc: &Location| {
            let i = test.observe.iter().position(|o| o == loc).unwrap_or(0);
            values[i]
        });
        if hit {
            shared.hits.fetch_add(1, Ordering::Relaxed);
        }
        match histogram.get_mut(values.as_slice()) {
            Some(n) => *n += 1,
            None => {
                histogram.insert(values.clone(), 1);
            }
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
            let spawned = std::thread::Builder::new()
                .name(format!("atomjit-litmus-{instance}-{t}"))
                .spawn_scoped(scope, move || worker(t, None));
            if let Err(e) = spawned {
                shared.fail(LaunchError::Config(format!(
                    "cannot start litmus host thread {t}: {e}"
                )));
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
