//! Kernels and tile atomics on one array in device memory (`docs/embedding.md`):
//!
//! 1. the PTX kernel `fill_keys` (NVRTC's output for `examples/kernels/embedding.cu`) writes
//!    100 000 pseudo-random bucket numbers into a device buffer;
//! 2. a cuTile `atomic_add` counts them into a histogram array in device memory (every key is
//!    an index; duplicate indices each take effect), returning each element's old value;
//! 3. the kernel `weigh` reads the histogram and adds up `count × (bucket + 1)` into a `u64`.
//!
//! `cargo run --example multi_kernel`; `tests/integration/embedding.rs` runs it and checks the
//! numbers against the CUDA source.

use atomjit::engine::{Arg, Config, Engine};
use atomjit::tile::{Operand, Options, RmwOp, Tile, TileView};

/// Keys, buckets and the seed of the run.
pub const N: u32 = 100_000;
pub const BUCKETS: u32 = 1000;
pub const SEED: u32 = 0x5eed;

/// What the run left behind.
pub struct Outcome {
    /// The keys `fill_keys` wrote.
    pub keys: Vec<u32>,
    /// The histogram after the tile atomic.
    pub hist: Vec<u32>,
    /// The old value `atomic_add` returned for each key.
    pub old: Tile,
    /// What `weigh` added up.
    pub total: u64,
}

/// Runs the three steps on `engine`'s device memory.
pub fn run(engine: &Engine) -> Result<Outcome, Box<dyn std::error::Error>> {
    let ptx = include_str!("kernels/embedding.compute_80.ptx");
    let module = engine.load("embedding.compute_80.ptx", ptx)?;
    let device = engine.device();

    // 1. A kernel fills a buffer.
    let keys = device.alloc(4 * u64::from(N))?;
    let args = [
        keys.into(),
        Arg::scalar(N),
        Arg::scalar(BUCKETS),
        Arg::scalar(SEED),
    ];
    module.launch("fill_keys", [N.div_ceil(256), 1, 1], [256, 1, 1], 0, &args)?;

    // 2. A tile atomic updates a device array at those indices.
    let hist = engine.upload_array(&vec![0u32; BUCKETS as usize], &[u64::from(BUCKETS)])?;
    let host_keys: Vec<u32> = device.read(keys)?;
    let indices = TileView::from_slice(&host_keys, &[N as usize])?;
    let old = engine.atomic_rmw(
        RmwOp::Add,
        &hist,
        &[Operand::View(indices)],
        &Operand::int(1),
        &Options::default(),
    )?;

    // 3. A second kernel reads it.
    let total = device.upload(&[0u64])?;
    let args = [hist.buffer().into(), Arg::scalar(BUCKETS), total.into()];
    module.launch(
        "weigh",
        [BUCKETS.div_ceil(256), 1, 1],
        [256, 1, 1],
        0,
        &args,
    )?;

    let outcome = Outcome {
        keys: host_keys,
        hist: engine.read_array(&hist)?,
        old,
        total: device.read::<u64>(total)?[0],
    };
    device.free(keys)?;
    device.free(hist.buffer())?;
    device.free(total)?;
    Ok(outcome)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let engine = Engine::new(&Config::default());
    let out = run(&engine)?;
    let busiest = (0..BUCKETS as usize)
        .max_by_key(|&b| out.hist[b])
        .unwrap_or(0);
    println!(
        "{N} keys into {BUCKETS} buckets: the busiest is bucket {busiest} ({} keys); \
         weighed total {}",
        out.hist[busiest], out.total
    );
    Ok(())
}
