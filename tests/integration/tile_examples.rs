//! The tile-atomic examples of issue 13 ("Proof"): `examples/union_find.rs` (device memory),
//! `examples/hash_set.rs` and `examples/scatter_max.rs` (host arrays), each run on 1 and 2
//! threads and checked against sequential algorithms written here.

use atomjit::engine::{Config, Engine};
use atomjit::tile::TileEngine;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Debug;

#[allow(dead_code)]
#[path = "../../examples/union_find.rs"]
mod union_find;

#[allow(dead_code)]
#[path = "../../examples/hash_set.rs"]
mod hash_set;

#[allow(dead_code)]
#[path = "../../examples/scatter_max.rs"]
mod scatter_max;

fn engine(threads: usize) -> Engine {
    let mut c = Config::default();
    c.threads(threads);
    Engine::new(&c)
}

/// A host tile engine that splits calls of more than `threads × 256` elements, so conflicting
/// updates run on different threads at once.
fn tiles(threads: usize) -> TileEngine {
    TileEngine::new(threads).with_parallel_threshold(256)
}

/// Sequential union-find (union by size, path halving); each vertex's label is the smallest
/// vertex of its component.
fn smallest_in_component(vertices: usize, edges: &[(u32, u32)]) -> Vec<i32> {
    let mut parent: Vec<usize> = (0..vertices).collect();
    let mut size = vec![1usize; vertices];
    fn find(parent: &mut [usize], mut v: usize) -> usize {
        while parent[v] != v {
            parent[v] = parent[parent[v]];
            v = parent[v];
        }
        v
    }
    for &(a, b) in edges {
        let (mut ra, mut rb) = (find(&mut parent, a as usize), find(&mut parent, b as usize));
        if ra != rb {
            if size[ra] < size[rb] {
                std::mem::swap(&mut ra, &mut rb);
            }
            parent[rb] = ra;
            size[ra] += size[rb];
        }
    }
    let mut smallest = vec![usize::MAX; vertices];
    for v in 0..vertices {
        let r = find(&mut parent, v);
        smallest[r] = smallest[r].min(v);
    }
    (0..vertices)
        .map(|v| smallest[find(&mut parent, v)] as i32)
        .collect()
}

fn check_union_find(threads: usize, vertices: u32, edges: usize, seed: u64) -> usize {
    let e = engine(threads);
    let out = union_find::run(&e, vertices, edges, seed).unwrap();
    assert_eq!(out.edges.len(), edges);
    assert!(out.edges.iter().all(|&(a, b)| a < vertices && b < vertices));
    let label = smallest_in_component(vertices as usize, &out.edges);
    let components = label
        .iter()
        .enumerate()
        .filter(|&(v, &l)| l == v as i32)
        .count();
    // A non-trivial graph: neither one component nor all singletons.
    assert!(
        components > 1 && components < vertices as usize,
        "{components}"
    );
    // The same partition, every vertex pointing straight at its component's smallest vertex.
    assert_eq!(out.parent, label, "threads {threads}");
    // One successful link per merge; the first round tries every edge that is not a self-loop.
    assert_eq!(out.links, vertices as usize - components);
    assert_eq!(out.rounds, out.tried.len());
    assert!(
        out.rounds >= 2,
        "some links conflict and retry: {:?}",
        out.tried
    );
    assert_eq!(
        out.tried[0],
        out.edges.iter().filter(|&&(a, b)| a != b).count()
    );
    assert!(out.tried.windows(2).all(|w| w[1] < w[0]), "{:?}", out.tried);
    assert!(e.device().buffers().is_empty());
    out.rounds
}

#[test]
fn union_find_example_matches_sequential_union_find() {
    for threads in [1, 2] {
        check_union_find(
            threads,
            union_find::VERTICES,
            union_find::EDGES,
            union_find::SEED,
        );
    }
}

/// Rounds of more than 2 × 32768 edges split across the engine's two threads (the default
/// parallel threshold), so CAS calls naming the same root race on different threads.
#[test]
fn union_find_example_with_split_rounds() {
    check_union_find(2, 50_000, 150_000, 7);
}

#[test]
fn hash_set_example_holds_each_distinct_key_once() {
    use hash_set::{Insert, EMPTY};
    for threads in [1, 2] {
        let (keys, pool, bits) = (hash_set::KEYS, hash_set::POOL, hash_set::BITS);
        let out = hash_set::run(&tiles(threads), keys, pool, bits, hash_set::SEED).unwrap();
        assert_eq!(out.keys.len(), keys);
        assert_eq!(out.table.len(), 1 << bits);
        let distinct: BTreeSet<i64> = out.keys.iter().copied().collect();
        assert!(
            distinct.len() < keys && distinct.len() > pool / 2,
            "{}",
            distinct.len()
        );
        // Exactly the distinct keys, each once.
        let mut held: Vec<i64> = out.table.iter().copied().filter(|&k| k != EMPTY).collect();
        held.sort_unstable();
        assert!(held.iter().copied().eq(distinct.iter().copied()));
        // Each reachable from its home slot by probing without crossing an empty slot.
        let mask = (1usize << bits) - 1;
        for (slot, &k) in out.table.iter().enumerate() {
            if k == EMPTY {
                continue;
            }
            let mut s = hash_set::home(k, bits) as usize;
            while s != slot {
                assert_ne!(
                    out.table[s], EMPTY,
                    "key {k} at {slot} behind empty slot {s}"
                );
                s = (s + 1) & mask;
            }
        }
        // One "inserted" per distinct key (of duplicates in one call exactly one wins), and each
        // insert's reported slot holds its key.
        let mut inserted: BTreeMap<i64, usize> = BTreeMap::new();
        for (&k, &(how, slot)) in out.keys.iter().zip(&out.result) {
            assert_eq!(out.table[slot as usize], k);
            if how == Insert::Inserted {
                *inserted.entry(k).or_default() += 1;
            }
        }
        assert_eq!(inserted.len(), distinct.len(), "threads {threads}");
        assert!(inserted.values().all(|&n| n == 1));
        assert_eq!(out.rounds, out.tried.len());
        assert_eq!(out.tried[0], keys);
        assert!(out.rounds >= 2, "some keys probe: {:?}", out.tried);
    }
}

/// Checks one slot's history under atomic max: the old values must trace the running maximum
/// of some order of the updates, starting at `init` and ending at `last`. Grouped by old value
/// (ascending), the first group saw `init`, each group holds at most one update that raised the
/// slot, and that update's value is what the next group saw.
fn check_max_history<T: Ord + Copy + Debug>(init: T, last: T, updates: &[(T, T)], slot: usize) {
    let mut ops = updates.to_vec(); // (value, old)
    ops.sort_by_key(|&(v, o)| (o, v > o));
    let mut cur = init;
    let mut i = 0;
    while i < ops.len() {
        let o = ops[i].1;
        assert_eq!(
            o, cur,
            "slot {slot}: old value {o:?} was never the slot's value"
        );
        let j = i + ops[i..].iter().take_while(|u| u.1 == o).count();
        let raised: Vec<T> = ops[i..j].iter().map(|u| u.0).filter(|&v| v > o).collect();
        assert!(
            raised.len() <= 1,
            "slot {slot}: {raised:?} all raised {o:?}"
        );
        if let Some(&v) = raised.first() {
            cur = v;
        }
        i = j;
    }
    assert_eq!(cur, last, "slot {slot}");
}

#[test]
fn scatter_max_example_matches_sequential_max() {
    for threads in [1, 2] {
        let (one, two) = scatter_max::run(&tiles(threads), scatter_max::SEED).unwrap();

        // 1-D.
        assert_eq!(one.old.len(), one.values.len());
        assert!(one.values.iter().any(|&v| v < 0));
        let mut want = one.init.clone();
        let mut per_slot = vec![Vec::new(); want.len()];
        for ((&i, &v), &o) in one.idx.iter().zip(&one.values).zip(&one.old) {
            want[i as usize] = want[i as usize].max(v);
            per_slot[i as usize].push((v, o));
        }
        assert_eq!(one.out, want, "threads {threads}");
        assert!(per_slot[scatter_max::TOUCHED..]
            .iter()
            .all(|u| u.is_empty()));
        for (s, updates) in per_slot.iter().enumerate() {
            check_max_history(one.init[s], one.out[s], updates, s);
        }

        // 2-D: element [m, n] updates out[rows[m], cols[n]].
        let (c, nc) = (scatter_max::C, scatter_max::NC);
        assert_eq!(two.old.len(), two.values.len());
        assert_eq!(two.values.len(), two.rows.len() * nc);
        let mut want = two.init.clone();
        let mut per_slot = vec![Vec::new(); want.len()];
        for (m, &r) in two.rows.iter().enumerate() {
            for (n, &col) in two.cols.iter().enumerate() {
                let (slot, e) = (r as usize * c + col as usize, m * nc + n);
                want[slot] = want[slot].max(two.values[e]);
                per_slot[slot].push((two.values[e], two.old[e]));
            }
        }
        assert_eq!(two.out, want, "threads {threads}");
        assert!(per_slot.iter().all(|u| u.len() > 100));
        for (s, updates) in per_slot.iter().enumerate() {
            check_max_history(two.init[s], two.out[s], updates, s);
        }
    }
}

/// The checker itself refuses histories no atomic max can produce.
#[test]
fn max_history_checker_rejects_impossible_old_values() {
    check_max_history(0, 5, &[(3, 0), (5, 3), (1, 5)], 0);
    for bad in [
        vec![(3, 0), (5, 0)],         // two updates raised the same value
        vec![(3, 0), (5, 4)],         // 4 was never the slot's value
        vec![(3, 0), (1, 0), (5, 0)], // 5 and 3 both raised 0
    ] {
        let r = std::panic::catch_unwind(|| check_max_history(0, 5, &bad, 0));
        assert!(r.is_err(), "{bad:?}");
    }
}
