//! Benchmark measurement: a kernel launched repeatedly on one prepared memory image, the
//! buffers restored before every launch (untimed), each launch's wall time recorded.

use super::{Backend, Error, Module, Overrides, RunReport};
use std::time::{Duration, Instant};

/// What the launches of a benchmark measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Timed launches.
    pub launches: usize,
    /// The median and the shortest launch, in seconds.
    pub median_seconds: f64,
    pub min_seconds: f64,
    /// Lanes (threads) per launch: grid size times block size.
    pub lanes: u128,
    /// Atomic lane operations of one launch (the last).
    pub atomics: u64,
}

impl Measurement {
    /// Lanes per second at the median launch time.
    pub fn lanes_per_second(&self) -> f64 {
        self.lanes as f64 / self.median_seconds
    }

    /// Atomic lane operations per second at the median launch time.
    pub fn atomics_per_second(&self) -> f64 {
        self.atomics as f64 / self.median_seconds
    }
}

/// How a benchmark ended.
#[derive(Debug, Clone)]
pub enum BenchOutcome {
    /// Every launch completed.
    Measured(Measurement),
    /// A launch trapped or hit the watchdog: its report (with [`RunReport::failure`]).
    Failed(Box<RunReport>),
}

impl Module {
    /// Launches `kernel` (its declared launch) `iterations` times (at least once) on `backend`,
    /// restoring the buffers before each launch outside the timed part. After each completed
    /// launch, `progress` gets the number done and the time since the first began (a caller
    /// can show progress once a run takes long). Stops at the first launch that fails.
    pub fn bench(
        &self,
        kernel: &str,
        iterations: usize,
        backend: Backend,
        progress: &mut dyn FnMut(usize, Duration),
    ) -> Result<BenchOutcome, Error> {
        let iterations = iterations.max(1);
        let prepared = self.prepare(kernel, &Overrides::default(), backend, false)?;
        let config = prepared.config();
        // Validated launches have at most ~2^73 lanes: u128 holds them.
        let lanes: u128 = config
            .grid
            .iter()
            .chain(&config.block)
            .map(|&d| d as u128)
            .product();
        let started = Instant::now();
        let mut times = Vec::with_capacity(iterations);
        let mut atomics = 0;
        for done in 1..=iterations {
            prepared.reset();
            match prepared.launch() {
                Ok(stats) => {
                    times.push(stats.wall.as_secs_f64());
                    atomics = stats.stats.total_atomics();
                }
                Err(e) => return Ok(BenchOutcome::Failed(Box::new(prepared.finish(Err(e))?))),
            }
            progress(done, started.elapsed());
        }
        times.sort_by(f64::total_cmp);
        Ok(BenchOutcome::Measured(Measurement {
            launches: iterations,
            median_seconds: times[times.len() / 2],
            min_seconds: times[0],
            lanes,
            atomics,
        }))
    }
}
