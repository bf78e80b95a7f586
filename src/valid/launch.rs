//! Launch-shape rules: grid and block dimensions and the shared-memory size, against the limits
//! of [`crate::ir::limits`]. This is the one check of a launch shape: validation runs it on the
//! declared shape ([`super::validate`]), the engine on a shape changed by overrides
//! ([`check_launch`]), and the front-ends on each `.grid`, `.block` and `.shared` directive
//! ([`grid_problems`], [`block_problems`], [`shared_problems`]), which they word as errors at
//! the directive's value (the [`LaunchLimit`] says what is broken).

use super::rules;
use crate::ir::{MAX_BLOCK_THREADS, MAX_GRID_X, MAX_GRID_YZ, SHARED_WINDOW_BYTES};

/// Which launch limit a shape breaks, with the values that break it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchLimit {
    /// A grid dimension (`axis` 0, 1, 2 for x, y, z) is 0.
    GridZero { axis: usize },
    /// The grid's x dimension is above [`MAX_GRID_X`].
    GridX { x: u32 },
    /// The grid's y or z dimension (`axis` 1 or 2) is above [`MAX_GRID_YZ`].
    GridYZ { axis: usize, n: u32 },
    /// A block dimension is 0.
    BlockZero { axis: usize },
    /// The block has more than [`MAX_BLOCK_THREADS`] threads.
    BlockThreads { block: [u32; 3], threads: u128 },
    /// The shared-memory size is larger than the window, [`SHARED_WINDOW_BYTES`].
    SharedWindow { bytes: u64 },
}

/// One broken launch rule: the limit, its message and the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchProblem {
    pub message: String,
    pub rule: &'static str,
    pub limit: LaunchLimit,
}

const AXES: [&str; 3] = ["x", "y", "z"];

impl LaunchProblem {
    fn new(limit: LaunchLimit) -> LaunchProblem {
        let (message, rule) = match limit {
            LaunchLimit::GridZero { axis } => (
                format!(
                    "grid {} dimension is 0; every dimension must be at least 1",
                    AXES[axis]
                ),
                rules::DIMS_POSITIVE,
            ),
            LaunchLimit::GridX { x } => (
                format!("grid x dimension {x} exceeds {MAX_GRID_X}"),
                rules::GRID_LIMIT,
            ),
            LaunchLimit::GridYZ { axis, n } => (
                format!("grid {} dimension {n} exceeds {MAX_GRID_YZ}", AXES[axis]),
                rules::GRID_LIMIT,
            ),
            LaunchLimit::BlockZero { axis } => (
                format!(
                    "block {} dimension is 0; every dimension must be at least 1",
                    AXES[axis]
                ),
                rules::DIMS_POSITIVE,
            ),
            LaunchLimit::BlockThreads { block, threads } => (
                format!(
                    "block {}x{}x{} has {threads} threads; a CTA has at most {MAX_BLOCK_THREADS}",
                    block[0], block[1], block[2]
                ),
                rules::BLOCK_LIMIT,
            ),
            LaunchLimit::SharedWindow { bytes } => (
                format!("shared size {bytes} bytes exceeds the 16 MiB shared window ({SHARED_WINDOW_BYTES} bytes)"),
                rules::SHARED_WINDOW,
            ),
        };
        LaunchProblem {
            message,
            rule,
            limit,
        }
    }
}

/// Every rule a grid shape breaks: zero dimensions, then the x limit, then the y and z limit.
pub fn grid_problems(grid: [u32; 3]) -> Vec<LaunchProblem> {
    let zero = (0..3)
        .filter(|&axis| grid[axis] == 0)
        .map(|axis| LaunchLimit::GridZero { axis });
    let x = (grid[0] > MAX_GRID_X).then_some(LaunchLimit::GridX { x: grid[0] });
    let yz = (1..3)
        .filter(|&axis| grid[axis] > MAX_GRID_YZ)
        .map(|axis| LaunchLimit::GridYZ {
            axis,
            n: grid[axis],
        });
    zero.chain(x).chain(yz).map(LaunchProblem::new).collect()
}

/// Every rule a block shape breaks: zero dimensions, then the thread count.
pub fn block_problems(block: [u32; 3]) -> Vec<LaunchProblem> {
    let zero = (0..3)
        .filter(|&axis| block[axis] == 0)
        .map(|axis| LaunchLimit::BlockZero { axis });
    let threads: u128 = block.iter().map(|&n| u128::from(n)).product();
    let too_many = (threads > u128::from(MAX_BLOCK_THREADS))
        .then_some(LaunchLimit::BlockThreads { block, threads });
    zero.chain(too_many).map(LaunchProblem::new).collect()
}

/// The rule a shared-memory size breaks, if any (a `u64`: a front-end checks a static size plus
/// a dynamic one before it knows the sum fits 32 bits).
pub fn shared_problems(bytes: u64) -> Option<LaunchProblem> {
    (bytes > u64::from(SHARED_WINDOW_BYTES))
        .then(|| LaunchProblem::new(LaunchLimit::SharedWindow { bytes }))
}

/// Every launch rule `grid`, `block` and `shared_bytes` break, in the order grid, block, shared.
pub fn launch_problems(grid: [u32; 3], block: [u32; 3], shared_bytes: u32) -> Vec<LaunchProblem> {
    let mut problems = grid_problems(grid);
    problems.extend(block_problems(block));
    problems.extend(shared_problems(u64::from(shared_bytes)));
    problems
}

/// Checks a launch shape (for shapes given on the command line). The error lists every broken
/// rule, separated by `"; "`, each followed by the rule it breaks.
pub fn check_launch(grid: [u32; 3], block: [u32; 3], shared_bytes: u32) -> Result<(), String> {
    let problems = launch_problems(grid, block, shared_bytes);
    if problems.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = problems
        .iter()
        .map(|p| format!("{} (rule: {})", p.message, p.rule))
        .collect();
    Err(parts.join("; "))
}
