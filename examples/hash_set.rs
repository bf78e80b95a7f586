//! A lock-free hash-set insert with cuTile's `atomic_cas` on a host array (issue 13, "Proof"):
//! open addressing with linear probing, many keys with duplicates inserted in bulk rounds.
//!
//! The table is a plain `Vec<i64>` of `2^bits` slots holding [`EMPTY`], seen by the tile
//! atomics through `ArrayView::from_mut_slice` and run by a `TileEngine` (no device memory).
//! Every key starts at its home slot ([`home`]). Each round, one bulk
//! `atomic_cas(table, slots, EMPTY, keys)` over every pending key; per key:
//!
//! * old value `EMPTY`: this key claimed the slot (**inserted**);
//! * old value equal to the key: the key is already there (**present**), put by an earlier
//!   round or by a duplicate in the same call: of several equal keys reaching an empty slot in
//!   one call exactly one sees `EMPTY`;
//! * anything else: the slot holds another key; move to the next slot (wrapping) and retry next
//!   round.
//!
//! A slot never becomes empty again, and a key moves past a slot only when the slot holds a
//! different key, so every key ends up once in the table, reachable from its home slot without
//! crossing an empty slot.
//!
//! `cargo run --example hash_set`; `tests/integration/tile_examples.rs` runs it on 1 and 2
//! threads and checks the table against the distinct keys.

use atomjit::exec::random::SplitMix64;
use atomjit::tile::{ArrayView, Operand, Options, TileEngine};

/// The empty-slot sentinel (keys are non-negative).
pub const EMPTY: i64 = -1;

/// The default run: keys inserted, how many distinct values they are drawn from, the table size
/// (`2^BITS` slots) and the seed.
pub const KEYS: usize = 20_000;
pub const POOL: usize = 8_000;
pub const BITS: u32 = 14;
pub const SEED: u64 = 0x5e7;

/// How an insert ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Insert {
    /// This key claimed an empty slot.
    Inserted,
    /// An equal key was already in the slot.
    Present,
}

/// What the run left behind.
pub struct Outcome {
    /// The keys, in insertion-call order (with duplicates).
    pub keys: Vec<i64>,
    /// The table after the inserts.
    pub table: Vec<i64>,
    /// How each key's insert ended, and in which slot.
    pub result: Vec<(Insert, u32)>,
    /// Bulk CAS rounds.
    pub rounds: usize,
    /// Keys tried per round (the length of each round's CAS tile).
    pub tried: Vec<usize>,
}

/// A key's home slot in a table of `2^bits` slots (Fibonacci hashing: the top bits of
/// `key · 2^64/φ`).
pub fn home(key: i64, bits: u32) -> u32 {
    ((key as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - bits)) as u32
}

/// Inserts `keys` keys drawn (with repetition) from `pool` random non-negative values into an
/// empty table of `2^bits` slots, with `tiles` running the bulk CAS.
pub fn run(
    tiles: &TileEngine,
    keys: usize,
    pool: usize,
    bits: u32,
    seed: u64,
) -> Result<Outcome, Box<dyn std::error::Error>> {
    assert!((1..=30).contains(&bits));
    let size = 1usize << bits;
    if pool >= size {
        return Err(format!("{pool} distinct keys cannot fit in {size} slots").into());
    }
    let mut rng = SplitMix64::new(seed);
    let values: Vec<i64> = (0..pool).map(|_| (rng.next() >> 1) as i64).collect();
    let keys: Vec<i64> = (0..keys)
        .map(|_| values[(rng.next() % pool as u64) as usize])
        .collect();

    let mut table = vec![EMPTY; size];
    let mut result = vec![(Insert::Present, 0u32); keys.len()];
    let (mut rounds, mut tried) = (0, Vec::new());
    {
        let view = ArrayView::from_mut_slice(&mut table, &[size as u64])?;
        let opts = Options::default();
        let mask = size as i32 - 1;
        // Pending keys: (key number, its current slot).
        let mut pending: Vec<(usize, i32)> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (i, home(k, bits) as i32))
            .collect();
        while !pending.is_empty() {
            // Each round moves every unfinished key one slot on; a key that found no place in
            // `size` rounds means the table is full (it is not: `pool < size`).
            if rounds == size {
                return Err("the table is full".into());
            }
            rounds += 1;
            tried.push(pending.len());
            let slots: Vec<i32> = pending.iter().map(|&(_, s)| s).collect();
            let want: Vec<i64> = pending.iter().map(|&(i, _)| keys[i]).collect();
            let old = tiles
                .atomic_cas(
                    &view,
                    &[Operand::vec1(&slots)],
                    &Operand::int(EMPTY.into()),
                    &Operand::vec1(&want),
                    &opts,
                )?
                .to_vec::<i64>()?;
            let mut next = Vec::new();
            for ((&(i, slot), &o), &k) in pending.iter().zip(&old).zip(&want) {
                if o == EMPTY {
                    result[i] = (Insert::Inserted, slot as u32);
                } else if o == k {
                    result[i] = (Insert::Present, slot as u32);
                } else {
                    next.push((i, (slot + 1) & mask));
                }
            }
            pending = next;
        }
    }
    Ok(Outcome {
        keys,
        table,
        result,
        rounds,
        tried,
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let tiles = TileEngine::new(2);
    let out = run(&tiles, KEYS, POOL, BITS, SEED)?;
    let inserted = out
        .result
        .iter()
        .filter(|r| r.0 == Insert::Inserted)
        .count();
    let used = out.table.iter().filter(|&&k| k != EMPTY).count();
    println!(
        "{KEYS} keys ({inserted} inserted, {} already present) into {} slots ({used} used) \
         in {} CAS rounds; keys tried per round {:?}",
        KEYS - inserted,
        out.table.len(),
        out.rounds,
        out.tried
    );
    Ok(())
}
