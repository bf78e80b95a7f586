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
