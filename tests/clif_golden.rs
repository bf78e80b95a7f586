//! Golden files of the JIT's Cranelift IR (`atomjit dump clif`) for a few programs of
//! `programs/sass/`: a change to the translator shows every function it touched.
//!
//! The expected text lives in `tests/golden/clif/<program>.clif`. After an intended change,
//! re-bless them with `ATOMJIT_BLESS=1 cargo test --test clif_golden`.

use atomjit::ir::Dialect;
use atomjit::{front, jit, valid};
use std::path::Path;

/// The programs whose CLIF is kept: a contended counter (native RMWs, barrier, partial exit),
/// the ring index (INC as a CAS loop), the CAST lock (spin loop, divergence) and the 64-bit
/// atomicMin CAS loop of the ATOMS document.
const PROGRAMS: &[&str] = &["counter", "ring_inc", "cast_lock", "min64_cas"];

fn clif_of(program: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let file = root.join("programs/sass").join(format!("{program}.s"));
    let source =
        std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let parsed = front::parse(&format!("{program}.s"), &source, Dialect::Sass)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut out = String::new();
    for kernel in &parsed.kernels {
        let info = valid::validate(kernel).unwrap_or_else(|e| panic!("{e}"));
        let text = jit::dump_clif(kernel, &info).unwrap_or_else(|e| panic!("{e}"));
        out.push_str(&format!("; kernel {}\n{text}\n", kernel.name));
    }
    out
}

#[test]
fn clif_matches_the_golden_files() {
    let bless = std::env::var_os("ATOMJIT_BLESS").is_some();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/clif");
    let mut stale = Vec::new();
    for program in PROGRAMS {
        let got = clif_of(program);
        let path = dir.join(format!("{program}.clif"));
        if bless {
            std::fs::create_dir_all(&dir).expect("create the golden directory");
            std::fs::write(&path, &got).expect("write the golden file");
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if want != got {
            let line = want
                .lines()
                .zip(got.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(want.lines().count().min(got.lines().count()));
            stale.push(format!(
                "{}: first difference at line {}:\n  golden: {}\n  now:    {}",
                path.display(),
                line + 1,
                want.lines().nth(line).unwrap_or("<end>"),
                got.lines().nth(line).unwrap_or("<end>")
            ));
        }
    }
    assert!(
        stale.is_empty(),
        "CLIF changed (re-bless with ATOMJIT_BLESS=1 if intended):\n{}",
        stale.join("\n")
    );
}

/// The dump is deterministic: the same kernel gives the same text twice.
#[test]
fn clif_dump_is_deterministic() {
    assert_eq!(clif_of("counter"), clif_of("counter"));
}

/// Cold compile time of every kernel of every program in `programs/` (a report, not a timed
/// test): run with `cargo test --release --test clif_golden -- --ignored --nocapture`.
#[test]
#[ignore]
fn compile_time_of_every_program() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("programs");
    for (sub, dialect) in [("sass", Dialect::Sass), ("ptx", Dialect::Ptx)] {
        let mut files: Vec<_> = std::fs::read_dir(root.join(sub))
            .expect("programs dir")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "s" || e == "ptx"))
            .collect();
        files.sort();
        for file in files {
            let source = std::fs::read_to_string(&file).expect("read program");
            let name = file.file_name().unwrap().to_string_lossy().to_string();
            let parsed = front::parse(&name, &source, dialect).expect("parses");
            let mut program_total = std::time::Duration::ZERO;
            for kernel in &parsed.kernels {
                let info = valid::validate(kernel).expect("valid");
                let _ = jit::compile(kernel, &info).expect("compiles");
                let mut best = std::time::Duration::MAX;
                for _ in 0..5 {
                    let start = std::time::Instant::now();
                    let compiled = jit::compile(kernel, &info).expect("compiles");
                    best = best.min(start.elapsed());
                    drop(compiled);
                }
                program_total += best;
                println!(
                    "{name:>20} {:>12} {:4} instructions: {best:?}",
                    kernel.name,
                    kernel.insts.len()
                );
            }
            println!("{name:>20} {:>12} program total: {program_total:?}", "");
        }
    }
}

/// Cranelift's pass timings for the largest program kernel (a report).
#[test]
#[ignore]
fn pass_times_of_the_largest_kernel() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let source = std::fs::read_to_string(root.join("programs/sass/atomics_edges.s")).expect("read");
    let parsed = front::parse("atomics_edges.s", &source, Dialect::Sass).expect("parses");
    let kernel = &parsed.kernels[0];
    let info = valid::validate(kernel).expect("valid");
    for _ in 0..3 {
        let _ = cranelift_codegen::timing::take_current();
        let start = std::time::Instant::now();
        let _ = jit::compile(kernel, &info).expect("compiles");
        println!(
            "total {:?}\n{}",
            start.elapsed(),
            cranelift_codegen::timing::take_current()
        );
    }
}
