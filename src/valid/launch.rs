//! Launch-shape rules: block and grid dimensions and the shared-memory size. They are checked
//! for the shape the program file declares ([`super::validate`]) and again for a shape given on
//! the command line ([`check_launch`]).

use super::rules;
use crate::exec::SHARED_WINDOW_BYTES;

/// Threads per CTA at most.
pub const MAX_BLOCK_THREADS: u64 = 1024;
/// Largest grid x dimension.
pub const MAX_GRID_X: u32 = (1 << 31) - 1;
/// Largest grid y and z dimension.
pub const MAX_GRID_YZ: u32 = 65535;

/// One broken launch rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchProblem {
    pub message: String,
    pub rule: &'static str,
}

/// Every launch rule `grid`, `block` and `shared_bytes` break, in the order grid, block, shared.
pub fn launch_problems(grid: [u32; 3], block: [u32; 3], shared_bytes: u32) -> Vec<LaunchProblem> {
    let mut v = Vec::new();
    let mut problem = |message: String, rule: &'static str| v.push(LaunchProblem { message, rule });
    let axes = ["x", "y", "z"];
    for (axis, &n) in axes.iter().zip(&grid) {
        if n == 0 {
            problem(
                format!("grid {axis} dimension is 0; every dimension must be at least 1"),
                rules::DIMS_POSITIVE,
            );
        }
    }
    if grid[0] > MAX_GRID_X {
        problem(
            format!("grid x dimension {} exceeds {MAX_GRID_X}", grid[0]),
            rules::GRID_LIMIT,
        );
    }
    for (axis, &n) in axes.iter().zip(&grid).skip(1) {
        if n > MAX_GRID_YZ {
            problem(
                format!("grid {axis} dimension {n} exceeds {MAX_GRID_YZ}"),
                rules::GRID_LIMIT,
            );
        }
    }
    for (axis, &n) in axes.iter().zip(&block) {
        if n == 0 {
            problem(
                format!("block {axis} dimension is 0; every dimension must be at least 1"),
                rules::DIMS_POSITIVE,
            );
        }
    }
    let threads: u128 = block.iter().map(|&n| u128::from(n)).product();
    if threads > u128::from(MAX_BLOCK_THREADS) {
        problem(
            format!(
                "block {}x{}x{} has {threads} threads; a CTA has at most {MAX_BLOCK_THREADS}",
                block[0], block[1], block[2]
            ),
            rules::BLOCK_LIMIT,
        );
    }
    if shared_bytes > SHARED_WINDOW_BYTES {
        problem(
            format!("shared size {shared_bytes} bytes exceeds the 16 MiB shared window ({SHARED_WINDOW_BYTES} bytes)"),
            rules::SHARED_WINDOW,
        );
    }
    v
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
