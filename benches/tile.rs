//! Bulk tile atomics (`atomjit::tile`, issue 13 part 2): `atomic_cas` and `atomic_add` on tiles
//! of 2^20 `int32` elements with uncontended (permuted) `int32` indices, on the engine's
//! compiled path, beside a plain Rust loop that does the same updates with `std::sync::atomic`
//! (old values into a fresh result vector, indices bounds-checked by slice indexing) on the
//! same number of host threads. After criterion's own output, a table prints the medians and
//! the ratios measured in this run.
//!
//! Run: `cargo bench --bench tile`. Set `ATOMJIT_BENCH_THREADS=1,2` to choose the thread
//! counts (default `1,2`).

mod common;
use common::{median, ms, ratio};

use atomjit::tile::{ArrayView, Operand, Options, TileEngine};
use criterion::Criterion;
use std::hint::black_box;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::time::Duration;

const N: usize = 1 << 20;

/// A permutation of `0..N` (odd multiplier modulo a power of two).
fn permuted() -> Vec<i32> {
    (0..N as u32)
        .map(|i| (i.wrapping_mul(2654435761) & (N as u32 - 1)) as i32)
        .collect()
}

/// Runs `f(start, end, out_chunk)` over `threads` contiguous chunks of `0..N`.
fn split(threads: usize, out: &mut [u32], f: impl Fn(usize, &mut [u32]) + Sync) {
    if threads == 1 {
        return f(0, out);
    }
    let per = N.div_ceil(threads);
    std::thread::scope(|s| {
        for (t, chunk) in out.chunks_mut(per).enumerate() {
            let f = &f;
            s.spawn(move || f(t * per, chunk));
        }
    });
}

fn native_add(threads: usize, arr: &[AtomicU32], idx: &[i32], upd: &[i32]) -> Vec<u32> {
    let mut out = vec![0u32; N];
    split(threads, &mut out, |start, chunk| {
        for (k, o) in chunk.iter_mut().enumerate() {
            let i = start + k;
            *o = arr[idx[i] as usize].fetch_add(upd[i] as u32, Relaxed);
        }
    });
    out
}

fn native_cas(
    threads: usize,
    arr: &[AtomicU32],
    idx: &[i32],
    exp: &[i32],
    des: &[i32],
) -> Vec<u32> {
    let mut out = vec![0u32; N];
    split(threads, &mut out, |start, chunk| {
        for (k, o) in chunk.iter_mut().enumerate() {
            let i = start + k;
            *o = match arr[idx[i] as usize].compare_exchange(
                exp[i] as u32,
                des[i] as u32,
                Relaxed,
                Relaxed,
            ) {
                Ok(v) | Err(v) => v,
            };
        }
    });
    out
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let threads: Vec<usize> = std::env::var("ATOMJIT_BENCH_THREADS")
        .unwrap_or_else(|_| "1,2".into())
        .split(',')
        .filter_map(|t| t.trim().parse().ok())
        .collect();
    let idx = permuted();
    let upd: Vec<i32> = (0..N as i32).map(|i| i & 7).collect();
    let exp: Vec<i32> = (0..N as i32).map(|i| i & 1).collect();
    let des: Vec<i32> = (0..N as i32).map(|i| (i & 3) >> 1).collect();
    let atomics: Vec<AtomicU32> = (0..N).map(|_| AtomicU32::new(0)).collect();
    let mut array = vec![0i32; N];
    let opts = Options::default();
    let mut groups = Vec::new();
    for &t in &threads {
        let engine = TileEngine::new(t);
        let group = format!("add/t{t}");
        {
            let a = ArrayView::from_mut_slice(&mut array, &[N as u64]).unwrap();
            let (i, u) = (Operand::vec1(&idx), Operand::vec1(&upd));
            let mut g = c.benchmark_group(&group);
            g.bench_function("native", |b| {
                b.iter(|| black_box(native_add(t, &atomics, &idx, &upd)))
            });
            g.bench_function("tile", |b| {
                b.iter(|| {
                    black_box(
                        engine
                            .atomic_add(&a, std::slice::from_ref(&i), &u, &opts)
                            .unwrap(),
                    )
                })
            });
        }
        groups.push(group);
        let group = format!("cas/t{t}");
        {
            let a = ArrayView::from_mut_slice(&mut array, &[N as u64]).unwrap();
            let (i, e, d) = (
                Operand::vec1(&idx),
                Operand::vec1(&exp),
                Operand::vec1(&des),
            );
            let mut g = c.benchmark_group(&group);
            g.bench_function("native", |b| {
                b.iter(|| black_box(native_cas(t, &atomics, &idx, &exp, &des)))
            });
            g.bench_function("tile", |b| {
                b.iter(|| {
                    black_box(
                        engine
                            .atomic_cas(&a, std::slice::from_ref(&i), &e, &d, &opts)
                            .unwrap(),
                    )
                })
            });
        }
        groups.push(group);
    }
    c.final_summary();
    print_ratios(&groups);
}

/// Reads the medians criterion just wrote and prints them with the ratios to native.
fn print_ratios(groups: &[String]) {
    println!(
        "\n{:<10} {:>12} {:>12} {:>10} {:>14}",
        "workload", "native ms", "tile ms", "tile/nat", "tile t1/tN"
    );
    for g in groups {
        let (n, t) = (median(g, "native"), median(g, "tile"));
        let one = g.split('/').next().map(|w| format!("{w}/t1"));
        let t1 = one.and_then(|o| median(&o, "tile"));
        println!(
            "{:<10} {:>12} {:>12} {:>10} {:>14}",
            g,
            ms(n),
            ms(t),
            ratio(t, n),
            ratio(t1, t)
        );
    }
}
