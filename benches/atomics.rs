//! Atomic-throughput benchmarks: each workload of `benches/programs/` runs on the JIT and on the
//! interpreter, beside a hand-written native Rust baseline that does the same per-lane work with
//! `std::sync::atomic` on the same number of host threads, and, when PoCL can be loaded, beside
//! the same per-lane work as OpenCL C kernels run by PoCL (OpenCL on the CPU, LLVM-compiled;
//! see `pocl/mod.rs`). After criterion's own output, a table prints the medians and the ratios
//! measured in this run.
//!
//! Run: `cargo bench --bench atomics` (all), `cargo bench --bench atomics -- counter` (one).
//! Set `ATOMJIT_BENCH_THREADS=1,2` to choose the host-thread counts (default `1,2`), and
//! `ATOMJIT_POCL=DIR` to the directory `scripts/pocl.py fetch DIR` filled for the PoCL peer
//! (without it the system's OpenCL loader is tried; no PoCL: one note line, no PoCL column).

mod common;
mod pocl;
use common::{median, ms, ratio};
use std::cell::Cell;

use atomjit::engine::{Backend, Config, Engine, Module, Overrides};
use atomjit::exec::random::SplitMix64;
use atomjit::front::LaunchText;
use criterion::{BatchSize, Criterion};
use std::hint::black_box;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

const LANES: usize = 1 << 22;
const CTA: usize = 256;

/// Splits `n` items into `threads` contiguous chunks and runs `f(start, end)` on each, inline
/// when there is one thread (as the launch does not need to spawn for one worker either).
fn split(n: usize, threads: usize, f: impl Fn(usize, usize) + Sync) {
    if threads == 1 {
        return f(0, n);
    }
    std::thread::scope(|s| {
        for t in 0..threads {
            let f = &f;
            s.spawn(move || f(n * t / threads, n * (t + 1) / threads));
        }
    });
}

fn native_counter(threads: usize) {
    let c = AtomicU32::new(0);
    split(LANES, threads, |a, b| {
        for _ in a..b {
            c.fetch_add(1, Relaxed);
        }
    });
    assert_eq!(c.load(Relaxed), LANES as u32);
}

fn native_hist_global(threads: usize) {
    let hist: Vec<AtomicU32> = (0..256).map(|_| AtomicU32::new(0)).collect();
    split(LANES, threads, |a, b| {
        for gid in a..b {
            let bin = (gid as u32).wrapping_mul(2654435761) & 0xff;
            hist[bin as usize].fetch_add(1, Relaxed);
        }
    });
    black_box(&hist);
}

/// The CPU version of `surf_hist2d`: the same 2-D bins in a row-major array, as a CPU
/// programmer would keep an image (no coordinate clamping or GOB swizzle to do).
fn native_hist2d(threads: usize) {
    let hist: Vec<AtomicU32> = (0..256).map(|_| AtomicU32::new(0)).collect();
    split(LANES, threads, |a, b| {
        for gid in a..b {
            let bin = (gid as u32).wrapping_mul(2654435761);
            let (x, y) = (bin & 15, (bin >> 4) & 15);
            hist[(y * 16 + x) as usize].fetch_add(1, Relaxed);
        }
    });
    black_box(&hist);
}

fn random_u32(seed: u64, n: usize, lo: i128, hi: i128) -> Vec<u32> {
    let mut g = SplitMix64::new(seed);
    (0..n).map(|_| g.next_in(lo, hi) as u32).collect()
}

fn native_hist_shared(threads: usize, data: &[u32]) {
    let hist: Vec<AtomicU32> = (0..256).map(|_| AtomicU32::new(0)).collect();
    split(LANES / CTA, threads, |a, b| {
        let local: Vec<AtomicU32> = (0..256).map(|_| AtomicU32::new(0)).collect();
        for cta in a..b {
            local.iter().for_each(|l| l.store(0, Relaxed));
            for &v in &data[cta * CTA..(cta + 1) * CTA] {
                local[v as usize].fetch_add(1, Relaxed);
            }
            for (bin, l) in local.iter().enumerate() {
                hist[bin].fetch_add(l.load(Relaxed), Relaxed);
            }
        }
    });
    black_box(&hist);
}

/// `flush_f32`: each lane adds 1.0 to its thread's float, the CAS loop a CPU programmer writes
/// for an atomic float add (Rust has no `AtomicF32`).
fn native_flush_f32(threads: usize) {
    let out: Vec<AtomicU32> = (0..CTA).map(|_| AtomicU32::new(0)).collect();
    split(LANES, threads, |a, b| {
        for gid in a..b {
            let word = &out[gid % CTA];
            let mut old = word.load(Relaxed);
            loop {
                let new = (f32::from_bits(old) + 1.0).to_bits();
                match word.compare_exchange_weak(old, new, Relaxed, Relaxed) {
                    Ok(_) => break,
                    Err(now) => old = now,
                }
            }
        }
    });
    assert!(out
        .iter()
        .all(|w| f32::from_bits(w.load(Relaxed)) == (LANES / CTA) as f32));
}

fn native_min64(threads: usize, vals: &[u64], target: &AtomicU64) {
    split(vals.len(), threads, |a, b| {
        for &val in &vals[a..b] {
            // The document's loop: ret = *address; while (val < ret) { old = ret; CAS ... }
            let mut ret = target.load(Relaxed);
            while val < ret {
                match target.compare_exchange(ret, val, Relaxed, Relaxed) {
                    Ok(_) => break,
                    Err(now) => ret = now,
                }
            }
        }
    });
}

fn native_ring_inc(threads: usize) {
    let finals: Vec<AtomicU32> = (0..LANES / CTA).map(|_| AtomicU32::new(0)).collect();
    split(LANES / CTA, threads, |a, b| {
        let idx = AtomicU32::new(0);
        let ring: Vec<AtomicU32> = (0..1024).map(|_| AtomicU32::new(0)).collect();
        for slot in &finals[a..b] {
            idx.store(0, Relaxed);
            for tid in 0..CTA as u32 {
                let old = idx
                    .fetch_update(Relaxed, Relaxed, |m| {
                        Some(if m >= 1023 { 0 } else { m + 1 })
                    })
                    .unwrap();
                ring[old as usize].store(tid, Relaxed);
            }
            slot.store(idx.load(Relaxed), Relaxed);
        }
        black_box(&ring);
    });
    black_box(&finals);
}

fn native_spinlock(threads: usize) {
    let total = AtomicU32::new(0);
    split(256, threads, |a, b| {
        let lock = AtomicU32::new(0);
        let counter = AtomicU32::new(0);
        for _ in a..b {
            counter.store(0, Relaxed);
            for _ in 0..128 {
                while lock.compare_exchange(0, 1, Relaxed, Relaxed).is_err() {}
                counter.store(counter.load(Relaxed) + 1, Relaxed);
                lock.swap(0, Relaxed);
            }
            total.fetch_add(counter.load(Relaxed), Relaxed);
        }
    });
    assert_eq!(total.load(Relaxed), 256 * 128);
}

fn load(threads: usize, file: &str) -> Module {
    let mut config = Config::default();
    config.threads(threads).timeout(None);
    let path = format!("{}/benches/programs/{file}", env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(&path).expect("bench program");
    let engine = Engine::new(&config);
    // A listing compiled by ptxas is launched by the launch file beside its `.cu`; vISA text
    // cannot hold launch directives, so a `.visaasm` is launched by the `.launch` beside it.
    let sidecar = file
        .strip_suffix(".sm_80.cuobjdump.sass")
        .or_else(|| file.strip_suffix(".visaasm"));
    let loaded = match sidecar {
        Some(stem) => {
            let launch_path = format!(
                "{}/benches/programs/{stem}.launch",
                env!("CARGO_MANIFEST_DIR")
            );
            let mut launch = LaunchText::new();
            launch.push(
                &launch_path,
                &std::fs::read_to_string(&launch_path).expect("bench launch file"),
            );
            engine.load_with_launch(&path, &source, &launch)
        }
        None => engine.load(&path, &source),
    };
    loaded.unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The workloads: (name, program file, kernel, buffer reset before every iteration if any).
/// The `cuda_*` ones are ptxas's sm_80 SASS of `benches/programs/cuda/bench.cu` (which
/// aggregates the counter's adds per warp; the native baselines do the same work the plain
/// way a CPU programmer would). `visa_hist` is `hist_global` as a SIMD16 Intel vISA kernel
/// (`svm_atomic.add` in two 8-channel messages), so it shares `hist_global`'s baseline.
const WORKLOADS: &[(&str, &str, &str, Option<&str>)] = &[
    ("counter", "counter.s", "counter", None),
    ("hist_global", "hist_global.s", "hist_global", None),
    ("hist_shared", "hist_shared.s", "hist_shared", None),
    ("min64_cas", "min64_cas.s", "min64_cas", Some("out")),
    ("ring_inc", "ring_inc.s", "ring_inc", None),
    ("spinlock", "spinlock.s", "spinlock", None),
    ("surf_hist2d", "surf_hist2d.s", "surf_hist2d", None),
    ("visa_hist", "visa_hist.visaasm", "visa_hist", None),
    (
        "cuda_counter",
        "cuda/bench.sm_80.cuobjdump.sass",
        "cuda_counter",
        None,
    ),
    (
        "cuda_hist_shared",
        "cuda/bench.sm_80.cuobjdump.sass",
        "cuda_hist_shared",
        None,
    ),
    ("flush_f32", "flush_f32.s", "flush_f32", None),
];

fn bench_backend(
    c: &mut Criterion,
    group: &str,
    module: &Module,
    kernel: &str,
    backend: Backend,
    reset: Option<&str>,
) {
    let prepared = module
        .prepare(kernel, &Overrides::default(), backend, false)
        .unwrap();
    // The first launch must pass the program's own expectations: the benchmark measures
    // correct work only.
    let report = prepared.finish(prepared.launch()).unwrap();
    assert!(
        report.passed(),
        "{group} {backend:?}: {:?} {:?}",
        report.failure,
        report.expectations
    );
    c.benchmark_group(group)
        .bench_function(backend.name(), |b| match reset {
            Some(name) => b.iter_batched(
                || assert!(prepared.reset_buffer(name)),
                |()| prepared.launch().unwrap(),
                BatchSize::PerIteration,
            ),
            None => b.iter(|| prepared.launch().unwrap()),
        });
}

/// The PoCL peer of workload `name` on `device`, if it has one: its first launch must leave the
/// result the program expects (checked before any timing), then criterion times enqueue + finish
/// (buffers are made outside; min64_cas's target is reset outside the timing). Returns whether
/// criterion ran it (a filter may skip it), so the table shows only medians of this run.
fn bench_pocl(
    c: &mut Criterion,
    group: &str,
    device: &pocl::Device,
    name: &str,
    data: &[u32],
    vals: &[u64],
) -> bool {
    let Some(peer) = device.peer(name, data, vals) else {
        return false;
    };
    let peer = peer.unwrap_or_else(|e| panic!("{group} pocl: {e}"));
    let ran = Cell::new(false);
    c.benchmark_group(group).bench_function("pocl", |b| {
        if !ran.replace(true) {
            peer.launch()
                .and_then(|()| peer.verify())
                .unwrap_or_else(|e| panic!("{group} pocl: {e}"));
        }
        if peer.resets() {
            b.iter_batched(
                || peer.reset().unwrap(),
                |()| peer.launch().unwrap(),
                BatchSize::PerIteration,
            )
        } else {
            b.iter(|| peer.launch().unwrap())
        }
    });
    ran.get()
}

fn main() {
    let mut c = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    let threads: Vec<usize> = std::env::var("ATOMJIT_BENCH_THREADS")
        .unwrap_or_else(|_| "1,2".into())
        .split(',')
        .filter_map(|t| t.trim().parse().ok())
        .collect();
    let data = random_u32(7, LANES, 0, 256);
    let mut vals = SplitMix64::new(11);
    let vals: Vec<u64> = (0..1 << 20).map(|_| vals.next()).collect();
    let min_target = AtomicU64::new(u64::MAX);
    let pocl = match pocl::Pocl::open(threads.iter().copied().max().unwrap_or(1)) {
        Ok(p) => Some(p),
        Err(e) => {
            println!("PoCL peer skipped: {e}");
            None
        }
    };
    let mut groups = Vec::new();
    let mut pocl_ran = Vec::new();
    for &t in &threads {
        let device = pocl.as_ref().and_then(|p| match p.device(t) {
            Ok(d) => Some(d),
            Err(e) => {
                println!("PoCL peer skipped on {t} thread(s): {e}");
                None
            }
        });
        for &(name, file, kernel, reset) in WORKLOADS {
            let group = format!("{name}/t{t}");
            let module = load(t, file);
            c.benchmark_group(&group)
                .bench_function("native", |b| match name {
                    "counter" | "cuda_counter" => b.iter(|| native_counter(t)),
                    "hist_global" | "visa_hist" => b.iter(|| native_hist_global(t)),
                    "hist_shared" | "cuda_hist_shared" => b.iter(|| native_hist_shared(t, &data)),
                    "min64_cas" => b.iter_batched(
                        || min_target.store(u64::MAX, Relaxed),
                        |()| native_min64(t, &vals, &min_target),
                        BatchSize::PerIteration,
                    ),
                    "ring_inc" => b.iter(|| native_ring_inc(t)),
                    "surf_hist2d" => b.iter(|| native_hist2d(t)),
                    "flush_f32" => b.iter(|| native_flush_f32(t)),
                    _ => b.iter(|| native_spinlock(t)),
                });
            for backend in [Backend::Jit, Backend::Interp] {
                bench_backend(&mut c, &group, &module, kernel, backend, reset);
            }
            if let Some(d) = &device {
                if bench_pocl(&mut c, &group, d, name, &data, &vals) {
                    pocl_ran.push(group.clone());
                }
            }
            groups.push(group);
        }
    }
    c.final_summary();
    print_ratios(&groups, &pocl_ran);
    if let Some(p) = &pocl {
        println!("pocl: {}", p.version);
    }
}

/// Reads the medians criterion just wrote and prints them with the ratios to native, and to
/// PoCL for the groups whose PoCL peer ran in this process (`pocl`).
fn print_ratios(groups: &[String], pocl: &[String]) {
    println!(
        "\n{:<18} {:>12} {:>12} {:>12} {:>12} {:>10} {:>10} {:>10}",
        "workload",
        "native ms",
        "jit ms",
        "interp ms",
        "pocl ms",
        "jit/nat",
        "interp/jit",
        "jit/pocl"
    );
    for g in groups {
        let (n, j, i) = (median(g, "native"), median(g, "jit"), median(g, "interp"));
        let p = pocl.contains(g).then(|| median(g, "pocl")).flatten();
        println!(
            "{:<18} {:>12} {:>12} {:>12} {:>12} {:>10} {:>10} {:>10}",
            g,
            ms(n),
            ms(j),
            ms(i),
            ms(p),
            ratio(j, n),
            ratio(i, j),
            ratio(j, p)
        );
    }
}
