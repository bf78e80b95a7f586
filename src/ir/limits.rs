//! The machine model's launch limits: the largest grid, block and shared-memory window a launch
//! may ask for. They are defined here once; `valid::launch_problems` is the one check against
//! them (used by the front-ends for their located errors, by validation and by the engine for
//! overrides), and `exec` sizes shared windows by [`SHARED_WINDOW_BYTES`].

/// Threads per CTA at most (the product of the block dimensions): CUDA's limit for every
/// compute capability since 2.0, and the program-file format's `.block` limit (issue 2).
pub const MAX_BLOCK_THREADS: u32 = 1024;

/// Largest grid x dimension, 2^31-1: CUDA's launch limit for compute capability 3.0 and later.
pub const MAX_GRID_X: u32 = (1 << 31) - 1;

/// Largest grid y and z dimension: CUDA's launch limit for compute capability 3.0 and later.
pub const MAX_GRID_YZ: u32 = 65535;

/// Bytes of the shared-memory window every shared address must fall in, so the most shared
/// memory a CTA can have: `../shared/spec/000_6d05a8552870c0ae.txt` (ATOMS), "The address must
/// be within the 16 MB shared memory window".
pub const SHARED_WINDOW_BYTES: u32 = 16 << 20;
