//! Every program in `programs/` passes its own expectations on every backend, with several host
//! threads and deterministically, and deterministic runs are bit-identical.

use super::*;

#[test]
fn every_program_passes_its_expectations() {
    let files = program_files();
    assert!(
        files.len() >= 9,
        "programs/ holds the example programs, found {files:?}"
    );
    for backend in backends() {
        for threads in [1, 2, 4] {
            let engine = engine(backend, threads, false);
            for file in &files {
                let module = load_file(&engine, file);
                for kernel in module.kernel_names() {
                    let report = module.run(kernel, &Overrides::default()).unwrap();
                    // A program that shows a fault says so with `.expect trap REASON`.
                    assert!(
                        report.failure.is_none() || report.expected_trap,
                        "{}:{kernel} ({backend:?}, {threads} threads): {:?}",
                        file.display(),
                        report.failure
                    );
                    for e in &report.expectations {
                        assert!(e.passed, "{}:{kernel} ({backend:?}, {threads} threads): expect {} failed: expected {}, actual {}", file.display(), e.text, e.expected, e.actual);
                    }
                    assert!(
                        !report.expectations.is_empty(),
                        "{}:{kernel} checks something",
                        file.display()
                    );
                }
            }
        }
    }
}

#[test]
fn deterministic_runs_are_bit_identical() {
    for backend in backends() {
        let engine = engine(backend, 1, true);
        for file in program_files() {
            let module = load_file(&engine, &file);
            for kernel in module.kernel_names() {
                let a = module.run(kernel, &Overrides::default()).unwrap();
                let b = module.run(kernel, &Overrides::default()).unwrap();
                assert_eq!(a.buffers, b.buffers, "{}:{kernel}", file.display());
                assert_eq!(
                    a.launch.stats,
                    b.launch.stats,
                    "{}:{kernel}",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn shared_histogram_matches_a_host_histogram() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/sass/hist_shared.s"
    ))
    .unwrap();
    for backend in backends() {
        let module = load(&engine(backend, 2, false), "hist_shared.s", &source);
        let report = module.run("hist", &Overrides::default()).unwrap();
        let data = report.buffer("data").unwrap().as_u32().unwrap();
        let mut want = vec![0u32; 256];
        for v in data {
            want[v as usize] += 1;
        }
        assert_eq!(report.buffer("hist").unwrap().as_u32().unwrap(), want);
        // 16384 shared adds plus one global add per bin per CTA.
        let s = &report.launch.stats;
        assert_eq!(
            s.atomics[atomjit::ir::AtomicOp::Add.index()],
            16384 + 64 * 256
        );
    }
}

#[test]
fn racing_flushes_of_adjacent_words_add_up_exactly() {
    // `flush_words.s` with 1024 CTAs on four host threads: the workers' 16-byte CASes on the
    // same four words collide and retry (`jit/translate/simd/atomic.rs`); every word must end
    // at the sum, maximum and wrapped count of all CTAs' contributions.
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/sass/flush_words.s"
    ))
    .unwrap();
    let ctas: u32 = 1024;
    for backend in backends() {
        let module = load(&engine(backend, 4, false), "flush_words.s", &source);
        let overrides = Overrides {
            grid: Some([ctas, 1, 1]),
            ..Overrides::default()
        };
        for _ in 0..4 {
            let report = module.run("flush_words", &overrides).unwrap();
            assert!(report.failure.is_none(), "{:?}", report.failure);
            let words = |name: &str| report.buffer(name).unwrap().as_u32().unwrap();
            let sum = ctas * (ctas + 1) / 2;
            assert_eq!(words("sum"), vec![sum; 102], "{backend:?}");
            let mut odd = vec![sum; 103];
            odd[0] = 0;
            assert_eq!(words("odd"), odd, "{backend:?}");
            assert_eq!(words("top"), vec![ctas - 1 - 32; 102], "{backend:?}");
            assert_eq!(words("ring"), vec![ctas % 10; 102], "{backend:?}");
        }
    }
}

#[test]
fn exchange_chain_hands_every_token_over_once() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/sass/exch_handoff.s"
    ))
    .unwrap();
    for backend in backends() {
        let module = load(&engine(backend, 2, false), "exch_handoff.s", &source);
        let report = module.run("exch", &Overrides::default()).unwrap();
        let mut out = report.buffer("out").unwrap().as_u32().unwrap();
        out.sort();
        assert_eq!(out, (0..=256).collect::<Vec<u32>>());
    }
}

#[test]
fn cast_spin_counts_fast_fails_and_the_lock_holds() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/sass/cast_spin.s"
    ))
    .unwrap();
    for backend in backends() {
        let module = load(&engine(backend, 1, true), "cast_spin.s", &source);
        let report = module.run("cast_spin", &Overrides::default()).unwrap();
        assert!(report.passed());
        // All lanes of a warp target one bank: every attempt lets exactly one lane try, so
        // at least 31 lanes fast-fail on a warp's first attempt.
        assert!(
            report.launch.stats.spin_fast_fails >= 31,
            "{:?}",
            report.launch.stats
        );
    }
}

#[test]
fn overrides_change_shape_and_data() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/sass/hist_shared.s"
    ))
    .unwrap();
    let module = load(&engine(Backend::Interp, 2, false), "hist_shared.s", &source);
    let o = Overrides {
        grid: Some([8, 1, 1]),
        buffers: vec![(
            "data".into(),
            atomjit::ir::Init::Fill(atomjit::ir::Scalar::Int(3)),
        )],
        ..Overrides::default()
    };
    let report = module.run("hist", &o).unwrap();
    let hist = report.buffer("hist").unwrap().as_u32().unwrap();
    assert_eq!(hist[3], 8 * 256);
    assert_eq!(hist.iter().sum::<u32>(), 8 * 256);
    // The declared `sum(hist) == 16384` no longer holds with 8 CTAs.
    assert!(!report.passed());
}

#[test]
fn the_surface_trap_program_traps_at_the_first_lane_out_of_bounds() {
    let source = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/sass/surf_trap.s"
    ))
    .unwrap();
    for backend in backends() {
        let module = load(&engine(backend, 1, true), "surf_trap.s", &source);
        let report = module.run("surf_trap", &Overrides::default()).unwrap();
        assert!(report.passed() && report.expected_trap, "{backend:?}");
        let Some(atomjit::engine::Failure::Trap(t)) = &report.failure else {
            panic!("{backend:?}: {:?}", report.failure)
        };
        // Thread t adds at (t, 0) of an 8-wide surface: lane 8 is the first outside.
        assert_eq!((t.lane, t.warp, t.line), (8, 0, 11));
        let s = t.surface.expect("a surface trap");
        assert_eq!((s.index, s.coords()), (0, &[8, 0][..]));
        // Lanes 0..7 added before the trap.
        assert_eq!(report.buffer("img").unwrap().as_u32().unwrap(), vec![1; 8]);
    }
}

#[test]
fn the_visa_scatter_add_histogram_matches_a_host_histogram() {
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/visa/hist8.visaasm"
    ));
    for backend in backends() {
        let report = load_file(&engine(backend, 2, false), path)
            .run("hist8", &Overrides::default())
            .unwrap();
        let data = report.buffer("data").unwrap().as_u32().unwrap();
        let (mut hits, mut total) = (vec![0u32; 16], vec![0u32; 16]);
        for v in data {
            hits[(v & 15) as usize] += 1;
            total[(v & 15) as usize] += v;
        }
        assert_eq!(report.buffer("hits").unwrap().as_u32().unwrap(), hits);
        assert_eq!(report.buffer("total").unwrap().as_u32().unwrap(), total);
        // 128 work-items, two svm_atomic.add each: nothing aggregated, nothing lost.
        let s = &report.launch.stats;
        assert_eq!(s.atomics[atomjit::ir::AtomicOp::Add.index()], 256);
    }
}

#[test]
fn the_predec_stack_hands_out_every_slot_once() {
    // predec returns the new value, so the 64 pops take the slots 63..0, one each; the plain
    // dec beside it returns the old values 64..1 (programs/visa/predec_stack.visaasm).
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/visa/predec_stack.visaasm"
    ));
    for backend in backends() {
        for threads in [1, 2] {
            let report = load_file(&engine(backend, threads, false), path)
                .run("predec_stack", &Overrides::default())
                .unwrap();
            let mut popped = report.buffer("popped").unwrap().as_u32().unwrap();
            popped.sort();
            assert_eq!(popped, (0..64).collect::<Vec<u32>>(), "{backend:?}");
            let mut dec_old = report.buffer("dec_old").unwrap().as_u32().unwrap();
            dec_old.sort();
            assert_eq!(dec_old, (1..=64).collect::<Vec<u32>>(), "{backend:?}");
        }
    }
}

#[test]
fn float_flushes_to_adjacent_words_match_between_backends_word_for_word() {
    // `flush_f32.s`: every pair of sixteen edge values, added on global memory, through a
    // generic address in global memory and through one in the shared window. The JIT runs
    // these four lanes to a 16-byte CAS with vector float adds (`jit/translate/simd/atomic.rs`),
    // which it must build for all three; the interpreter runs them word by word with its
    // soft-float (`sem/float.rs`). Every word must agree; global memory flushes subnormal
    // results, which the shared window keeps.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/programs/sass/flush_f32.s");
    let source = std::fs::read_to_string(path).unwrap();
    let program = atomjit::front::parse(path, &source, atomjit::ir::Dialect::Sass).unwrap();
    for kernel in &program.kernels {
        let info = atomjit::valid::validate(kernel).unwrap();
        let clif = atomjit::jit::dump_clif(kernel, &info).unwrap();
        // Three per four-lane float add (the two operands and the sum), in each of the
        // whole-warp and general copies of the region's loop.
        assert_eq!(
            clif.matches("bitcast.f32x4").count(),
            6,
            "{}: the four-lane float path",
            kernel.name
        );
    }
    let words = |backend, kernel: &str| {
        let module = load(&engine(backend, 1, false), "flush_f32.s", &source);
        let report = module.run(kernel, &Overrides::default()).unwrap();
        assert!(report.failure.is_none(), "{kernel}: {:?}", report.failure);
        report.buffer("out").unwrap().as_u32().unwrap()
    };
    let mut outs = Vec::new();
    for kernel in ["flush_global", "flush_generic", "flush_shared"] {
        let want = words(Backend::Interp, kernel);
        assert_eq!(words(Backend::Jit, kernel), want, "{kernel}");
        outs.push(want);
    }
    assert_eq!(outs[0], outs[1], "global and generic-global flush alike");
    let subnormal = |x: &u32| x & 0x7f80_0000 == 0 && x & 0x007f_ffff != 0;
    assert!(!outs[0].iter().any(subnormal), "global memory flushes them");
    assert!(
        outs[2].iter().any(subnormal),
        "the shared window keeps them"
    );
}
