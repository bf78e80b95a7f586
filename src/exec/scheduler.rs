//! The multi-threaded CTA scheduler. (Being written: see issue 2.)

use super::{GlobalMemory, Stats, Trap, WarpRunner, WatchdogReport};
use crate::ir::Kernel;
use crate::valid::KernelInfo;
use std::time::Duration;

/// How to run a launch.
#[derive(Debug, Clone)]
pub struct LaunchConfig {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    /// Host worker threads (at least 1).
    pub threads: usize,
    /// One worker, fixed CTA and warp order: bit-identical results run to run.
    pub deterministic: bool,
    /// The watchdog ends the launch after this long.
    pub timeout: Option<Duration>,
}

/// What a finished launch reports.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LaunchStats {
    pub stats: Stats,
    pub wall: Duration,
    pub threads: usize,
    pub ctas: u64,
    pub lanes: u64,
}

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

/// Runs `kernel` over the grid of `config` with `runner` as the backend.
pub fn launch(
    kernel: &Kernel,
    info: &KernelInfo,
    runner: &dyn WarpRunner,
    global: &GlobalMemory,
    cbank: &[u8],
    config: &LaunchConfig,
) -> Result<LaunchStats, LaunchError> {
    let _ = (kernel, info, runner, global, cbank, config);
    Err(LaunchError::Config(
        "the scheduler is not written yet".into(),
    ))
}
