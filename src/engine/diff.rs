//! The backend diff: a kernel run on the interpreter and on the JIT, deterministically, each on
//! its own memory, and the first difference between the two runs.

use super::{Backend, Error, Failure, Module, Overrides, RunReport};
use crate::exec::Stats;
use crate::ir::Scalar;
use std::fmt;

/// The first way two runs of a kernel differ, checked in this order.
#[derive(Debug, Clone)]
pub enum Difference {
    /// One run trapped or hit the watchdog and the other did not, or they failed differently.
    Outcome {
        interp: Option<Failure>,
        jit: Option<Failure>,
    },
    /// A buffer element differs (the first one, in buffer order).
    Buffer {
        name: String,
        index: usize,
        interp: Scalar,
        jit: Scalar,
    },
    /// Both runs completed with the same memory but different counters.
    Statistics { interp: Stats, jit: Stats },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let outcome = |failure: &Option<Failure>| {
            failure
                .as_ref()
                .map_or_else(|| "completed".to_string(), Failure::to_string)
        };
        match self {
            Difference::Outcome { interp, jit } => write!(
                f,
                "outcome differs: interp {}, jit {}",
                outcome(interp),
                outcome(jit)
            ),
            Difference::Buffer {
                name,
                index,
                interp,
                jit,
            } => write!(
                f,
                "buffer `{name}` differs first at element {index}: interp {interp}, jit {jit}"
            ),
            Difference::Statistics { interp, jit } => {
                write!(f, "statistics differ: interp {interp:?}, jit {jit:?}")
            }
        }
    }
}

/// Both runs of a backend diff and the first difference between them.
#[derive(Debug)]
pub struct BackendDiff {
    /// The interpreter's run (deterministic, fresh memory).
    pub interp: RunReport,
    /// The JIT's run (deterministic, fresh memory).
    pub jit: RunReport,
    /// The first difference, or `None` when they agree.
    pub difference: Option<Difference>,
}

/// `atomjit run --diff --json`: one kernel's diff, with both runs' reports.
#[derive(Debug, serde::Serialize)]
pub struct DiffJson<'r> {
    pub kernel: &'r str,
    pub agree: bool,
    /// The first difference, in words (`null` when they agree).
    pub difference: Option<String>,
    /// What both runs did when they agree (see [`BackendDiff::shared_outcome`]).
    pub outcome: Option<String>,
    pub interp: super::report::RunJson<'r>,
    pub jit: super::report::RunJson<'r>,
}

impl BackendDiff {
    /// The JSON of this diff, with `dumps` in both reports.
    pub fn json<'r>(&'r self, dumps: &[String]) -> DiffJson<'r> {
        DiffJson {
            kernel: &self.interp.kernel,
            agree: self.difference.is_none(),
            difference: self.difference.as_ref().map(ToString::to_string),
            outcome: self.difference.is_none().then(|| self.shared_outcome()),
            interp: self.interp.json(dumps),
            jit: self.jit.json(dumps),
        }
    }

    /// Whether a run reached the time limit, so the runs were not compared.
    pub fn inconclusive(&self) -> bool {
        timed_out(&self.interp) || timed_out(&self.jit)
    }

    /// The exit status of the diff: the runs' own (a trap, the watchdog, a failed
    /// expectation), or [`super::ExitStatus::Failed`] for a difference if that is larger.
    pub fn status(&self) -> super::ExitStatus {
        let own = self.interp.status().max(self.jit.status());
        if self.difference.is_some() {
            own.max(super::ExitStatus::Failed)
        } else {
            own
        }
    }

    /// The outcome both runs share when they agree: what `--diff` reports besides "agree".
    pub fn shared_outcome(&self) -> String {
        if timed_out(&self.interp) || timed_out(&self.jit) {
            let what = |r: &RunReport| match &r.failure {
                Some(Failure::Watchdog(_)) if timed_out(r) => "reached the time limit",
                Some(_) => "failed",
                None => "completed",
            };
            return format!(
                "inconclusive: interp {}, jit {} (a run the time limit stopped is not compared)",
                what(&self.interp),
                what(&self.jit)
            );
        }
        match &self.interp.failure {
            None if self.interp.expectations.iter().all(|e| e.passed) => {
                "both completed, expectations passed".to_string()
            }
            None => "both completed, an expectation failed".to_string(),
            Some(Failure::Watchdog(_)) => "both deadlocked".to_string(),
            Some(f) => format!("both failed: {f}"),
        }
    }
}

impl Module {
    /// Runs `kernel` with `overrides` on the interpreter and on the JIT, each deterministically
    /// on fresh memory, and returns both runs with the first difference in outcome (trap or
    /// watchdog), memory or statistics. When either run reached the time limit the diff is
    /// inconclusive ([`BackendDiff::inconclusive`]: that run was still going, so nothing is
    /// compared); statistics are compared only for completed runs.
    pub fn diff_backends(&self, kernel: &str, overrides: &Overrides) -> Result<BackendDiff, Error> {
        let interp = self.run_with(kernel, overrides, Backend::Interp, true)?;
        let jit = self.run_with(kernel, overrides, Backend::Jit, true)?;
        let difference = first_difference(&interp, &jit);
        Ok(BackendDiff {
            interp,
            jit,
            difference,
        })
    }
}

fn first_difference(interp: &RunReport, jit: &RunReport) -> Option<Difference> {
    // A run the time limit stopped was still going: it says nothing about what the kernel
    // computes (the interpreter is much slower than the JIT, so often only it stops). Two
    // proved deadlocks are compared like any outcome.
    if timed_out(interp) || timed_out(jit) {
        return None;
    }
    let describe = |failure: &Option<Failure>| failure.as_ref().map(Failure::to_string);
    if describe(&interp.failure) != describe(&jit.failure) {
        return Some(Difference::Outcome {
            interp: interp.failure.clone(),
            jit: jit.failure.clone(),
        });
    }
    for (x, y) in interp.buffers.iter().zip(&jit.buffers) {
        if let Some(index) = (0..x.len()).find(|&i| x.get(i) != y.get(i)) {
            return Some(Difference::Buffer {
                name: x.name.clone(),
                index,
                interp: x.get(index).expect("in range"),
                jit: y.get(index).expect("in range"),
            });
        }
    }
    if interp.failure.is_none() && interp.launch.stats != jit.launch.stats {
        return Some(Difference::Statistics {
            interp: interp.launch.stats.clone(),
            jit: jit.launch.stats.clone(),
        });
    }
    None
}

/// Whether the watchdog stopped `r` at its time limit (not a proved deadlock).
fn timed_out(r: &RunReport) -> bool {
    matches!(&r.failure, Some(Failure::Watchdog(w)) if w.kind == crate::exec::WatchdogKind::TimeLimit)
}
