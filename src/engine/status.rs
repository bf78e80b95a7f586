//! How a run ends, as the command line's exit code: one mapping for `run`, `bench`, `--diff`
//! and `litmus`.

use super::{Failure, RunReport};
use crate::exec::LaunchError;

/// The outcome classes, ordered by severity: when kernels (or litmus files) end differently,
/// the largest wins (`a.max(b)`, and [`ExitStatus::code`] grows with it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum ExitStatus {
    /// Everything ran and held (exit code 0).
    #[default]
    Ok,
    /// An expectation failed, or a litmus test saw a forbidden outcome (1).
    Failed,
    /// A usage, parse or validation error, or anything else that kept a launch from starting
    /// or finishing normally (2).
    Usage,
    /// A launch trapped (3).
    Trap,
    /// The watchdog stopped a launch that made no progress (4).
    Watchdog,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Ok => 0,
            ExitStatus::Failed => 1,
            ExitStatus::Usage => 2,
            ExitStatus::Trap => 3,
            ExitStatus::Watchdog => 4,
        }
    }

    /// The status of a launch that did not complete ([`ExitStatus::Ok`] if it did).
    pub fn of_failure(failure: Option<&Failure>) -> ExitStatus {
        match failure {
            None => ExitStatus::Ok,
            Some(Failure::Trap(_)) => ExitStatus::Trap,
            Some(Failure::Watchdog(_)) => ExitStatus::Watchdog,
        }
    }

    /// The status of a launch error.
    pub fn of_launch_error(error: &LaunchError) -> ExitStatus {
        match error {
            LaunchError::Trap(_) => ExitStatus::Trap,
            LaunchError::Watchdog(_) => ExitStatus::Watchdog,
            LaunchError::Config(_) => ExitStatus::Usage,
        }
    }
}

impl RunReport {
    /// A trap or the watchdog if the launch did not complete (unless it trapped as its
    /// `.expect trap` line said), else [`ExitStatus::Failed`] if an expectation failed, else
    /// [`ExitStatus::Ok`].
    pub fn status(&self) -> ExitStatus {
        match &self.failure {
            // A trap `.expect trap` announced is the expected outcome.
            Some(_) if self.expected_trap => ExitStatus::Ok,
            Some(failure) => ExitStatus::of_failure(Some(failure)),
            None if self.expectations.iter().any(|e| !e.passed) => ExitStatus::Failed,
            None => ExitStatus::Ok,
        }
    }
}
