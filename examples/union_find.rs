//! Connected components with cuTile's `atomic_cas` on device memory (issue 13, "Proof"):
//! union-find over a seeded random graph, linking in bulk rounds.
//!
//! The parent array (`int32`, `parent[v] = v` at first) lives in the engine's device memory
//! (`Engine::upload_array`). Each round:
//!
//! 1. the roots of both endpoints of every pending edge are found by pointer jumping on a host
//!    copy of the parent array (`Engine::read_array`); edges whose endpoints already share a
//!    root are done;
//! 2. one bulk `atomic_cas(parent, hi, hi, lo)` links, for every remaining edge, the larger
//!    root `hi` under the smaller root `lo` if `hi` is still a root. Many edges name the same
//!    `hi` in one call: exactly one of them sees `old == hi` and links; the others see the
//!    winner's `lo` and retry next round;
//! 3. one bulk `atomic_min(parent, all vertices, roots)` compresses every path to its root
//!    (a root is never larger than a parent, since links always go from larger to smaller).
//!
//! Roots only ever point to smaller roots, so no cycle can form and every component ends up
//! rooted at its smallest vertex: after the last round `parent[v]` is the smallest vertex of
//! `v`'s component.
//!
//! `cargo run --example union_find`; `tests/integration/tile_examples.rs` runs it on 1 and 2
//! threads and checks the partition against a sequential union-find.

use atomjit::engine::{Config, Engine};
use atomjit::exec::random::SplitMix64;
use atomjit::tile::{Operand, Options, RmwOp};

/// The default graph: vertices, edges and the seed.
pub const VERTICES: u32 = 10_000;
pub const EDGES: usize = 30_000;
pub const SEED: u64 = 0x0c0ffee;

/// What the run left behind.
pub struct Outcome {
    /// The graph's edges (endpoints may be equal: self-loops are allowed).
    pub edges: Vec<(u32, u32)>,
    /// The compressed parent array: `parent[v]` is the root of `v`'s component.
    pub parent: Vec<i32>,
    /// Bulk linking rounds (one `atomic_cas` call each).
    pub rounds: usize,
    /// Edges tried per round (the length of each round's CAS tile).
    pub tried: Vec<usize>,
    /// Successful links (CAS results equal to the expected root).
    pub links: usize,
}

/// The root of `v` in a snapshot of the parent array.
fn find(parent: &[i32], mut v: i32) -> i32 {
    while parent[v as usize] != v {
        v = parent[v as usize];
    }
    v
}

/// Computes the components of a random graph of `vertices` and `edges` drawn from `seed`, with
/// the parent array in `engine`'s device memory.
pub fn run(
    engine: &Engine,
    vertices: u32,
    edges: usize,
    seed: u64,
) -> Result<Outcome, Box<dyn std::error::Error>> {
    assert!(vertices > 0 && vertices <= i32::MAX as u32);
    let mut rng = SplitMix64::new(seed);
    let graph: Vec<(u32, u32)> = (0..edges)
        .map(|_| {
            let a = rng.next_in(0, i128::from(vertices)) as u32;
            let b = rng.next_in(0, i128::from(vertices)) as u32;
            (a, b)
        })
        .collect();

    let all: Vec<i32> = (0..vertices as i32).collect();
    let parent = engine.upload_array(&all, &[u64::from(vertices)])?;
    let opts = Options::default();

    let mut pending: Vec<(i32, i32)> = graph.iter().map(|&(a, b)| (a as i32, b as i32)).collect();
    let (mut rounds, mut links, mut tried) = (0, 0, Vec::new());
    loop {
        // 1. Roots of both endpoints, on a host copy; drop edges already inside a component.
        let host: Vec<i32> = engine.read_array(&parent)?;
        let (mut hi, mut lo, mut edge) = (Vec::new(), Vec::new(), Vec::new());
        for &(a, b) in &pending {
            let (ra, rb) = (find(&host, a), find(&host, b));
            if ra != rb {
                hi.push(ra.max(rb));
                lo.push(ra.min(rb));
                edge.push((a, b));
            }
        }
        if hi.is_empty() {
            break;
        }
        rounds += 1;
        tried.push(hi.len());

        // 2. One bulk CAS: link each larger root under the smaller one if it is still a root.
        let old = engine
            .atomic_cas(
                &parent,
                &[Operand::vec1(&hi)],
                &Operand::vec1(&hi),
                &Operand::vec1(&lo),
                &opts,
            )?
            .to_vec::<i32>()?;
        pending.clear();
        for ((&o, &h), &e) in old.iter().zip(&hi).zip(&edge) {
            if o == h {
                links += 1;
            } else {
                pending.push(e);
            }
        }

        // 3. Compress: every vertex points at its root (a root is at most its parent).
        let host: Vec<i32> = engine.read_array(&parent)?;
        let roots: Vec<i32> = all.iter().map(|&v| find(&host, v)).collect();
        engine.atomic_rmw(
            RmwOp::Min,
            &parent,
            &[Operand::vec1(&all)],
            &Operand::vec1(&roots),
            &opts,
        )?;
    }

    let outcome = Outcome {
        edges: graph,
        parent: engine.read_array(&parent)?,
        rounds,
        tried,
        links,
    };
    engine.device().free(parent.buffer())?;
    Ok(outcome)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let engine = Engine::new(&Config::default());
    let out = run(&engine, VERTICES, EDGES, SEED)?;
    let components = out
        .parent
        .iter()
        .enumerate()
        .filter(|&(v, &p)| p == v as i32)
        .count();
    println!(
        "{VERTICES} vertices, {EDGES} edges: {components} components after {} CAS rounds \
         ({} links; edges tried per round {:?})",
        out.rounds, out.links, out.tried
    );
    Ok(())
}
