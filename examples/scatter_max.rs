//! Scatter-max with conflicting indices, with cuTile's `atomic_max` on host arrays (issue 13,
//! "Proof"):
//!
//! * **1-D**: `atomic_max(out, idx, values)` with 100 000 signed `int32` values (negatives
//!   included) scattered into 80 slots through indices in `0..64`, so every touched slot takes
//!   about 1 500 conflicting updates and 16 slots are never touched;
//! * **2-D**: `atomic_max(out, (rows, cols), values)` into an `int64` array of shape (8, 12)
//!   with a row-index tile of shape (300, 1) (`int32`) and a column-index tile of shape
//!   (1, 200) (`int64`) that broadcast to the (300, 200) shape of the value tile, so each
//!   element `[m, n]` updates `out[rows[m], cols[n]]`.
//!
//! Each call returns every element's old value: the value its slot held just before that
//! element's atomic, so per slot the old values trace the running maximum of some order of the
//! updates. Arrays are plain `Vec`s seen through `ArrayView::from_mut_slice` and run by a
//! `TileEngine` (large tiles split across its threads, so conflicting updates race).
//!
//! `cargo run --example scatter_max`; `tests/integration/tile_examples.rs` runs it on 1 and 2
//! threads and checks the arrays against a sequential max and the old values against the
//! updates.

use atomjit::exec::random::SplitMix64;
use atomjit::tile::{ArrayView, Operand, Options, TileEngine};

/// The 1-D run: updates, slots in `out`, the index range (`idx < TOUCHED`).
pub const N: usize = 100_000;
pub const SLOTS: usize = 80;
pub const TOUCHED: usize = 64;
/// The 2-D run: `out` is `R × C`, the index tiles `M × 1` and `1 × NC`.
pub const R: usize = 8;
pub const C: usize = 12;
pub const M: usize = 300;
pub const NC: usize = 200;
pub const SEED: u64 = 0x5ca7;

/// The 1-D scatter: inputs, the array before and after, and the old values.
pub struct Scatter1 {
    pub init: Vec<i32>,
    pub idx: Vec<u16>,
    pub values: Vec<i32>,
    pub out: Vec<i32>,
    pub old: Vec<i32>,
}

/// The 2-D scatter (row-major `R × C` arrays, `M × NC` values and old values).
pub struct Scatter2 {
    pub init: Vec<i64>,
    pub rows: Vec<i32>,
    pub cols: Vec<i64>,
    pub values: Vec<i64>,
    pub out: Vec<i64>,
    pub old: Vec<i64>,
}

/// The project's SplitMix64 stream, with ranges of `i64`.
struct Rng(SplitMix64);

impl Rng {
    /// Uniform in `lo..hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        self.0.next_in(i128::from(lo), i128::from(hi)) as i64
    }
}

/// Runs both scatters with `tiles`.
pub fn run(
    tiles: &TileEngine,
    seed: u64,
) -> Result<(Scatter1, Scatter2), Box<dyn std::error::Error>> {
    let mut rng = Rng(SplitMix64::new(seed));
    let opts = Options::default();

    // 1-D: values across the whole int32 range (half negative) and a narrow band near zero.
    let init: Vec<i32> = (0..SLOTS)
        .map(|_| rng.range(-1_000_000, 1_000_000) as i32)
        .collect();
    let idx: Vec<u16> = (0..N)
        .map(|_| rng.range(0, TOUCHED as i64) as u16)
        .collect();
    let values: Vec<i32> = (0..N)
        .map(|i| {
            if i % 2 == 0 {
                rng.range(i64::from(i32::MIN), i64::from(i32::MAX) + 1) as i32
            } else {
                rng.range(-2_000_000, 1_000_000) as i32
            }
        })
        .collect();
    let mut out = init.clone();
    let old = {
        let view = ArrayView::from_mut_slice(&mut out, &[SLOTS as u64])?;
        tiles.atomic_max(
            &view,
            &[Operand::vec1(&idx)],
            &Operand::vec1(&values),
            &opts,
        )?
    };
    let one = Scatter1 {
        init,
        idx,
        values,
        out,
        old: old.to_vec()?,
    };

    // 2-D: broadcast index tiles (M, 1) and (1, NC); values mostly negative, near i64::MIN too.
    let init: Vec<i64> = (0..R * C).map(|_| rng.range(-1 << 40, 0)).collect();
    let rows: Vec<i32> = (0..M).map(|_| rng.range(0, R as i64) as i32).collect();
    let cols: Vec<i64> = (0..NC).map(|_| rng.range(0, C as i64)).collect();
    let values: Vec<i64> = (0..M * NC)
        .map(|i| match i % 3 {
            0 => rng.0.next() as i64,
            1 => rng.range(i64::MIN, i64::MIN + 1000),
            _ => rng.range(-1 << 41, 1 << 20),
        })
        .collect();
    let mut out = init.clone();
    let old = {
        let view = ArrayView::from_mut_slice(&mut out, &[R as u64, C as u64])?;
        tiles.atomic_max(
            &view,
            &[
                Operand::slice(&rows, &[M, 1])?,
                Operand::slice(&cols, &[1, NC])?,
            ],
            &Operand::slice(&values, &[M, NC])?,
            &opts,
        )?
    };
    assert_eq!(old.shape(), [M, NC]);
    let two = Scatter2 {
        init,
        rows,
        cols,
        values,
        out,
        old: old.to_vec()?,
    };
    Ok((one, two))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tiles = TileEngine::new(2);
    let (one, two) = run(&tiles, SEED)?;
    let raised = one
        .old
        .iter()
        .zip(&one.values)
        .filter(|(o, v)| v > o)
        .count();
    println!(
        "1-D: {N} updates into {SLOTS} slots, {raised} raised their slot; out[..4] = {:?}",
        &one.out[..4]
    );
    let raised = two
        .old
        .iter()
        .zip(&two.values)
        .filter(|(o, v)| v > o)
        .count();
    println!(
        "2-D: ({M}, 1) x (1, {NC}) indices into ({R}, {C}), {raised} of {} updates raised \
         their slot; out[0][..3] = {:?}",
        M * NC,
        &two.out[..3]
    );
    Ok(())
}
