//! Running one CTA of a launch on the calling thread: [`CtaRunner`].
//!
//! [`launch`](super::launch) owns its host threads and hands CTAs out from a counter, so the
//! caller cannot say *which* host thread runs *which* CTA, or *when*. Litmus tests need exactly
//! that: a persistent host thread per litmus thread that runs "its" CTA, iteration after
//! iteration, started at a moment the harness picks. A `CtaRunner` is the scheduler's per-CTA
//! path (the same [`Cta`] quanta, divergence handling, barriers, traps and deadlock detection
//! as a launch) without the workers: [`CtaRunner::run`] runs CTA `linear` to completion on the
//! current thread and reuses the CTA's allocations from one call to the next.
//!
//! The other CTAs of the grid are not run by it: CTAs that wait on each other need a runner per
//! CTA on different host threads (the caller's business), and the `abort` flag lets one of them
//! stop the others when it fails.

use super::cta::{Cta, Quantum};
use super::{check_config, LaunchConfig, LaunchContext, LaunchError, QUANTA_PER_CLOCK_CHECK};
use crate::exec::{GlobalMemory, Stats, WarpRunner, WatchdogKind, WatchdogReport};
use crate::ir::Kernel;
use crate::valid::KernelInfo;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Runs single CTAs of one prepared launch on the calling thread (see the module docs).
pub struct CtaRunner<'a> {
    ctx: LaunchContext<'a>,
    config: LaunchConfig,
    /// The CTA's allocations, kept between runs.
    cta: Option<Cta>,
}

impl<'a> CtaRunner<'a> {
    /// A runner for CTAs of the launch `config` of `kernel` (the same arguments as
    /// [`launch`](super::launch); `config.threads` and `config.deterministic` are ignored, the
    /// watchdog `config.timeout` applies to each [`CtaRunner::run`]). Fails like a launch on a
    /// shape no GPU accepts.
    pub fn new(
        kernel: &'a Kernel,
        info: &'a KernelInfo,
        runner: &'a dyn WarpRunner,
        global: &'a GlobalMemory,
        cbank: &'a [u8],
        surfaces: &'a [crate::ir::surface::SurfaceHeader],
        config: &LaunchConfig,
    ) -> Result<CtaRunner<'a>, LaunchError> {
        let shape = check_config(kernel, config)?;
        let ctx = LaunchContext::new(
            (kernel, info, runner),
            (global, cbank, surfaces),
            config,
            &shape,
            1,
            None,
        );
        Ok(CtaRunner {
            ctx,
            config: config.clone(),
            cta: None,
        })
    }

    /// CTAs in the grid (valid `linear` indices are below this).
    pub fn ctas(&self) -> u64 {
        self.ctx.ctas
    }

    /// Runs CTA `linear` (x fastest, then y, then z) to completion on this thread, with a fresh
    /// shared window and registers, and returns its counters. A trap, a deadlock inside the CTA
    /// or the watchdog is an error, as in a launch; so is `abort` becoming true (checked between
    /// quanta: another thread gave up), reported as [`LaunchError::Config`] "aborted". A panic
    /// of the backend is caught and reported as an internal error.
    pub fn run(&mut self, linear: u64, abort: &AtomicBool) -> Result<Stats, LaunchError> {
        if linear >= self.ctx.ctas {
            return Err(LaunchError::Config(format!(
                "CTA {linear} does not exist: the grid has {} CTAs",
                self.ctx.ctas
            )));
        }
        let deadline = self
            .config
            .timeout
            .and_then(|t| Instant::now().checked_add(t));
        let ctx = &self.ctx;
        let slot = &mut self.cta;
        let result = catch_unwind(AssertUnwindSafe(|| {
            let cta = match slot {
                Some(cta) => {
                    cta.reset(ctx, linear);
                    cta
                }
                None => slot.insert(Cta::try_new(ctx, linear).map_err(LaunchError::Config)?),
            };
            run_to_completion(ctx, cta, abort, deadline)
        }));
        match result {
            Ok(result) => result,
            Err(payload) => {
                // The CTA may be half-updated: build a fresh one next time.
                self.cta = None;
                let message = payload
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| payload.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".to_string());
                Err(LaunchError::Config(format!(
                    "internal error: running a CTA panicked: {message}"
                )))
            }
        }
    }
}

fn run_to_completion(
    ctx: &LaunchContext,
    cta: &mut Cta,
    abort: &AtomicBool,
    deadline: Option<Instant>,
) -> Result<Stats, LaunchError> {
    let mut quanta = 0u64;
    // The quantum at which the CTA last moved (for the watchdog's report).
    let mut moved_at = 0u64;
    loop {
        match cta.quantum(ctx) {
            Quantum::Running => moved_at = quanta,
            Quantum::Waiting { .. } => {}
            Quantum::Finished => return Ok(cta.take_stats()),
            Quantum::Trap { warp, info } => {
                return Err(LaunchError::Trap(Box::new(ctx.trap(cta.index, warp, info))))
            }
            Quantum::Deadlock(cause) => {
                return Err(LaunchError::Watchdog(Box::new(WatchdogReport {
                    kernel: ctx.kernel.name.clone(),
                    kind: WatchdogKind::Deadlock,
                    progressing: false,
                    cause,
                    stuck: cta.stuck_warps(ctx),
                })))
            }
            Quantum::Internal(message) => {
                let [x, y, z] = cta.index;
                return Err(LaunchError::Config(format!(
                    "internal error in kernel `{}`, CTA ({x},{y},{z}): {message}",
                    ctx.kernel.name
                )));
            }
        }
        quanta += 1;
        if abort.load(Ordering::Relaxed) {
            return Err(LaunchError::Config("aborted".to_string()));
        }
        if let Some(deadline) = deadline {
            if quanta % QUANTA_PER_CLOCK_CHECK == 0 && Instant::now() >= deadline {
                let [x, y, z] = cta.index;
                return Err(LaunchError::Watchdog(Box::new(WatchdogReport {
                    kernel: ctx.kernel.name.clone(),
                    kind: WatchdogKind::TimeLimit,
                    // Moved within the last clock period.
                    progressing: quanta - moved_at <= QUANTA_PER_CLOCK_CHECK,
                    cause: format!("CTA ({x},{y},{z}) did not finish in time"),
                    stuck: cta.stuck_warps(ctx),
                })));
            }
        }
    }
}
