//! Forward progress: spin locks between lanes of one warp, warps of one CTA and co-running CTAs
//! terminate; a launch that cannot finish ends with a watchdog report, never a hang; totals are
//! exact under several host threads.

use super::*;
use atomjit::engine::Failure;

/// A CAST spin lock inside one warp: 32 lanes contend for one lock word.
const WARP_LOCK: &str = "
.kernel k
.block 32
.shared 8
.buffer out u32[1] = 0
        MOV R4, RZ ;
        MOV R5, 0x1 ;
spin:
        ATOMS.CAST R0, [0x0], R4, R5 ;
        ISETP.EQ.U32.AND P0, PT, R0, RZ, PT ;
        @P0 BRA spin ;
        LDS R1, [0x4] ;
        IADD3 R1, R1, 0x1, RZ ;
        STS [0x4], R1 ;
        ATOMS.EXCH RZ, [0x0], RZ ;
        BAR.SYNC 0x0 ;
        LDS R1, [0x4] ;
        MOV R2, c[0x0][out] ;
        MOV R3, c[0x0][out+0x4] ;
        STG.E [R2.64], R1 ;
        EXIT ;
.expect out[0] == 32
";

#[test]
fn spin_lock_between_lanes_of_one_warp() {
    for deterministic in [true, false] {
        let r = run_src(WARP_LOCK, 1, deterministic);
        assert!(r.passed(), "{:?} {:?}", r.failure, r.expectations);
    }
}

/// Warp 1 waits for a flag that warp 0 sets after spinning a while itself.
const WARP_FLAG: &str = "
.kernel k
.block 64
.shared 8
.buffer out u32[1] = 0
        S2R R0, SR_TID.X ;
        ISETP.LT.U32.AND P0, PT, R0, 0x20, PT ;
        @P0 BRA producer ;
wait:
        LDS R1, [0x0] ;
        ISETP.EQ.AND P1, PT, R1, RZ, PT ;
        @P1 BRA wait ;
        MOV R2, c[0x0][out] ;
        MOV R3, c[0x0][out+0x4] ;
        MOV R4, 0x1 ;
        RED.E.ADD.STRONG.GPU [R2.64], R4 ;
        EXIT ;
producer:
        MOV R5, 0x1 ;
        ATOMS.EXCH RZ, [0x0], R5 ;
        EXIT ;
.expect out[0] == 32
";

#[test]
fn spin_between_warps_of_one_cta() {
    let r = run_src(WARP_FLAG, 1, true);
    assert!(r.passed(), "{:?} {:?}", r.failure, r.expectations);
}

/// CTA 0 spins until CTA 1 raises a flag in global memory; CTA 1 spins until CTA 0 has seen it.
const CTA_HANDSHAKE: &str = "
.kernel k
.grid 2
.block 1
.buffer flags u32[2] = 0
        S2R R0, SR_CTAID.X ;
        MOV R2, c[0x0][flags] ;
        MOV R3, c[0x0][flags+0x4] ;
        MOV R4, 0x1 ;
        ISETP.EQ.AND P0, PT, R0, RZ, PT ;
        @P0 BRA first ;
        ATOMG.E.EXCH.STRONG.GPU PT, RZ, [R2.64], R4 ;
again:
        LDG.E.STRONG.GPU R5, [R2.64+0x4] ;
        ISETP.EQ.AND P1, PT, R5, RZ, PT ;
        @P1 BRA again ;
        EXIT ;
first:
        LDG.E.STRONG.GPU R5, [R2.64] ;
        ISETP.EQ.AND P1, PT, R5, RZ, PT ;
        @P1 BRA first ;
        ATOMG.E.EXCH.STRONG.GPU PT, RZ, [R2.64+0x4], R4 ;
        EXIT ;
.expect flags == {1, 1}
";

#[test]
fn spin_between_co_running_ctas_even_on_one_host_thread() {
    for (threads, deterministic) in [(1, true), (1, false), (2, false)] {
        let r = run_src(CTA_HANDSHAKE, threads, deterministic);
        assert!(
            r.passed(),
            "{threads} threads: {:?} {:?}",
            r.failure,
            r.expectations
        );
    }
}

#[test]
fn an_endless_loop_ends_with_a_watchdog_report() {
    let src = ".kernel k\n.block 32\nloop:\n  NOP ;\n  BRA loop ;\n  EXIT ;\n";
    let mut c = Config::default();
    c.backend(Backend::Interp)
        .threads(1)
        .timeout(Some(std::time::Duration::from_millis(300)));
    let m = load(&Engine::new(&c), "loop.s", src);
    let r = m.run("k", &Overrides::default()).unwrap();
    match r.failure {
        Some(Failure::Watchdog(w)) => {
            assert_eq!(w.kernel, "k");
            assert_eq!(w.stuck.len(), 1);
            let text = w.to_string();
            assert!(text.contains("warp 0"), "{text}");
            assert!(text.contains("NOP") || text.contains("BRA"), "{text}");
        }
        other => panic!("expected a watchdog report, got {other:?}"),
    }
}

#[test]
fn a_barrier_that_half_the_cta_never_reaches_ends_with_the_watchdog() {
    // Warp 1 waits for a flag that only warp 0 could set after the barrier it waits at.
    let src = "
.kernel k
.block 64
.shared 4
        S2R R0, SR_TID.X ;
        ISETP.LT.U32.AND P0, PT, R0, 0x20, PT ;
        @P0 BAR.SYNC 0x0 ;
        @P0 EXIT ;
spin:
        LDS R1, [0x0] ;
        ISETP.EQ.AND P1, PT, R1, RZ, PT ;
        @P1 BRA spin ;
        EXIT ;
";
    let mut c = Config::default();
    c.backend(Backend::Interp)
        .threads(1)
        .timeout(Some(std::time::Duration::from_millis(500)));
    let m = load(&Engine::new(&c), "dead.s", src);
    let r = m.run("k", &Overrides::default()).unwrap();
    assert!(
        matches!(r.failure, Some(Failure::Watchdog(_))),
        "{:?}",
        r.failure
    );
}

#[test]
fn totals_are_exact_with_several_host_threads() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/sass/counter.s"
    ))
    .unwrap();
    for backend in backends() {
        for threads in [2, 3, 8] {
            let m = load(&engine(backend, threads, false), "counter.s", &src);
            for _ in 0..3 {
                let r = m.run("counter", &Overrides::default()).unwrap();
                assert!(r.passed(), "{backend:?} {threads}: {:?}", r.expectations);
                assert_eq!(
                    r.launch.stats.atomics[atomjit::ir::AtomicOp::Add.index()],
                    3 * 8192
                );
            }
        }
    }
}

#[test]
fn warps_waiting_at_different_barriers_are_a_proven_deadlock() {
    // Warp 0 waits at barrier 0, warp 1 at barrier 1: neither can ever release. The scheduler
    // proves it (every warp waits) instead of waiting for the timeout.
    let src = "
.kernel k
.block 64
        S2R R0, SR_TID.X ;
        ISETP.LT.U32.AND P0, PT, R0, 0x20, PT ;
        @!P0 BRA other ;
        BAR.SYNC 0x0 ;
        EXIT ;
other:
        BAR.SYNC 0x1 ;
        EXIT ;
";
    let m = load(&engine(Backend::Interp, 1, true), "dead.s", src);
    let r = m.run("k", &Overrides::default()).unwrap();
    match r.failure {
        Some(Failure::Watchdog(w)) => {
            assert!(w.cause.contains("deadlock"), "{}", w.cause);
            assert_eq!(w.stuck.len(), 2, "{w}");
        }
        other => panic!("expected a deadlock report, got {other:?}"),
    }
}

// ---- issue 14: fair spinning and residency ---------------------------------------------------

/// Loads a program of `programs/ptx/` with its launch file on `backend`: two host threads, or
/// deterministically.
fn load_program(file: &str, backend: Backend, deterministic: bool) -> Module {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("programs/ptx")
        .join(file);
    load_file(&engine(backend, 2, deterministic), &path)
}

/// The run modes issue 14 asks for: every backend, on two host threads and deterministically.
fn modes() -> Vec<(Backend, bool)> {
    backends()
        .into_iter()
        .flat_map(|b| [(b, false), (b, true)])
        .collect()
}

/// Runs `kernel` of `module` with a launch shape and parameters, and asserts it completed.
fn run_ok(module: &Module, kernel: &str, overrides: &Overrides, what: &str) -> RunReport {
    let r = module.run(kernel, overrides).expect("launch runs");
    assert!(r.failure.is_none(), "{what}: {:?}", r.failure);
    assert!(r.passed(), "{what}: {:?}", r.expectations);
    r
}

fn word(r: &RunReport, buffer: &str) -> Vec<u32> {
    r.buffer(buffer).unwrap().as_u32().unwrap()
}

/// AlloyForwardProgress's two-thread tests 0 and 1 (`programs/ptx/exch_pair.ptx`): two threads
/// hand a word back and forth with `atom.exch`, each spinning until it sees the value the other
/// leaves. A strict alternation of the two spinners never ends; GPUs end them. Every placement:
/// two lanes of a warp (either one first), two warps of a CTA, two one-thread CTAs, and two
/// threads of different warps of different CTAs of a larger grid.
#[test]
fn exchange_pairs_terminate_in_every_placement() {
    let placements: &[(&str, u32, u32, u32, u32)] = &[
        // (placement, grid, block, t0, t1)
        ("lanes 0 and 1 of a warp", 1, 32, 0, 1),
        ("lanes 1 and 0 of a warp", 1, 32, 1, 0),
        ("lanes 3 and 29 of a warp", 1, 32, 3, 29),
        ("warps 0 and 1 of a CTA", 1, 64, 0, 32),
        ("warps 1 and 0 of a CTA", 1, 64, 32, 0),
        ("warps 0 and 3 of a CTA", 1, 128, 7, 100),
        ("CTAs 0 and 1", 2, 1, 0, 1),
        ("CTAs 1 and 0", 2, 1, 1, 0),
        ("CTAs 0 and 3 of 4", 4, 64, 5, 200),
        ("CTAs 3 and 0 of 4", 4, 64, 200, 5),
    ];
    for (backend, deterministic) in modes() {
        let module = load_program("exch_pair.ptx", backend, deterministic);
        for test in ["exch_pair_test0", "exch_pair_test1"] {
            for &(placement, grid, block, t0, t1) in placements {
                let overrides = Overrides {
                    grid: Some([grid, 1, 1]),
                    block: Some([block, 1, 1]),
                    params: vec![
                        ("t0".to_string(), atomjit::ir::Scalar::Int(t0.into())),
                        ("t1".to_string(), atomjit::ir::Scalar::Int(t1.into())),
                    ],
                    ..Overrides::default()
                };
                let what =
                    format!("{test}, {placement}, {backend:?}, deterministic {deterministic}");
                let r = run_ok(&module, test, &overrides, &what);
                assert_eq!(word(&r, "done"), [2], "{what}");
                assert!(word(&r, "x")[0] <= 1, "{what}");
            }
        }
    }
}

/// Deterministic runs of the exchange pairs repeat exactly: the back-offs come from a generator
/// with a fixed seed.
#[test]
fn exchange_pairs_repeat_exactly_when_deterministic() {
    for backend in backends() {
        let module = load_program("exch_pair.ptx", backend, true);
        let overrides = Overrides {
            block: Some([64, 1, 1]),
            params: vec![("t1".to_string(), atomjit::ir::Scalar::Int(32))],
            ..Overrides::default()
        };
        let a = run_ok(&module, "exch_pair_test1", &overrides, "first");
        let b = run_ok(&module, "exch_pair_test1", &overrides, "second");
        assert_eq!(a.launch.stats, b.launch.stats, "{backend:?}");
        assert_eq!(
            (a.launch.quanta, a.launch.spins),
            (b.launch.quanta, b.launch.spins)
        );
        assert!(a.launch.spins > 0, "{backend:?}: {:?}", a.launch);
    }
}

/// A CAS spin lock around a plain increment (`programs/ptx/mutex.ptx`), taken by every thread
/// of 8 CTAs of 96: the count is exact and every thread held the lock exactly once, with the
/// critical section after the retry loop (lanes of a warp must run independently) and inside it.
#[test]
fn a_mutex_taken_by_every_thread_of_the_grid_counts_exactly() {
    for (backend, deterministic) in modes() {
        let module = load_program("mutex.ptx", backend, deterministic);
        for kernel in ["mutex_spin", "mutex_flag"] {
            for (grid, block) in [(8, 96), (1, 32), (32, 1), (3, 256)] {
                let threads = grid * block;
                let overrides = Overrides {
                    grid: Some([grid, 1, 1]),
                    block: Some([block, 1, 1]),
                    expects: vec![],
                    ..Overrides::default()
                };
                let what =
                    format!("{kernel} {grid}x{block}, {backend:?}, deterministic {deterministic}");
                // The launch file's expectations are for 8 x 96; check the counts here.
                let r = module.run(kernel, &overrides).expect("launch runs");
                assert!(r.failure.is_none(), "{what}: {:?}", r.failure);
                assert_eq!(word(&r, "lock"), [0], "{what}");
                assert_eq!(word(&r, "counter"), [threads], "{what}");
                let mut order = word(&r, "order");
                order.truncate(threads as usize);
                order.sort_unstable();
                assert_eq!(order, (0..threads).collect::<Vec<_>>(), "{what}");
            }
        }
    }
}

/// 64 one-thread CTAs, 63 of which spin until the last one raises a flag
/// (`programs/ptx/flag_grid.ptx`): the launch ends only if all 64 are resident at once, far more
/// than a worker starts with; a GPU holds them all.
#[test]
fn a_grid_waiting_for_its_last_cta_terminates() {
    for (backend, deterministic) in modes() {
        let module = load_program("flag_grid.ptx", backend, deterministic);
        let what = format!("{backend:?}, deterministic {deterministic}");
        let r = run_ok(&module, "flag_grid", &Overrides::default(), &what);
        assert_eq!(word(&r, "done"), [64], "{what}");
        assert_eq!(word(&r, "flag"), [1], "{what}");
        assert!(r.launch.resident_limit >= 64, "{what}: {:?}", r.launch);
    }
}

/// The same with the most CTAs of 32 threads an H100 holds at once (132 SMs x 32), and, one
/// CTA more, a grid whose last CTA could never be resident with the others: that one is a
/// deadlock the watchdog reports, naming the limit.
#[test]
fn a_grid_the_gpu_holds_at_once_terminates_and_one_more_cta_is_a_deadlock() {
    let module = load_program("flag_grid.ptx", Backend::Jit, true);
    let overrides = |grid: u32| Overrides {
        grid: Some([grid, 1, 1]),
        block: Some([32, 1, 1]),
        ..Overrides::default()
    };
    let r = module.run("flag_grid", &overrides(4224)).unwrap();
    assert!(r.failure.is_none(), "{:?}", r.failure);
    assert_eq!(word(&r, "done"), [4224]);

    let mut c = Config::default();
    c.backend(Backend::Jit)
        .threads(2)
        .timeout(Some(std::time::Duration::from_secs(2)));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("programs/ptx/flag_grid.ptx");
    let module = load_file(&Engine::new(&c), &path);
    let r = module.run("flag_grid", &overrides(4225)).unwrap();
    match r.failure {
        Some(Failure::Watchdog(w)) => {
            assert!(
                w.cause.contains(
                    "4224 resident: the most the emulated GPU keeps resident for this kernel is 4224"
                ),
                "{}",
                w.cause
            );
            assert_eq!(w.stuck.len(), 4224);
        }
        other => panic!("expected a watchdog report, got {other:?}"),
    }
}
