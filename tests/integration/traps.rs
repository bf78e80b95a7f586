//! Runtime faults: every trap the documents name, with every field of the report, on every
//! backend; the engine stays usable afterwards.

use super::*;
use atomjit::engine::Failure;
use atomjit::exec::{Trap, TrapReason, GLOBAL_BASE};
use atomjit::ir::Space;

fn trap_of(source: &str) -> (Trap, RunReport) {
    let mut last = None;
    for backend in backends() {
        let m = load(&engine(backend, 2, false), "trap.s", source);
        let name = m.kernel_names()[0].to_string();
        let report = m.run(&name, &Overrides::default()).unwrap();
        let trap = match &report.failure {
            Some(Failure::Trap(t)) => (**t).clone(),
            other => panic!("{backend:?}: expected a trap, got {other:?}"),
        };
        if let Some((prev, _)) = &last {
            assert_eq!(prev, &trap, "backends report the same trap");
        }
        last = Some((trap, report));
    }
    last.unwrap()
}

#[test]
fn misaligned_shared_atomic() {
    let (t, _) = trap_of(
        ".kernel k\n.block 1\n.shared 16\n  MOV R1, 0x2 ;\n  ATOMS.ADD RZ, [R1], R0 ;\n  EXIT ;\n",
    );
    assert_eq!(t.reason, TrapReason::MisalignedAddress);
    assert_eq!(
        (t.kernel.as_str(), t.pc, t.line, t.lane, t.warp, t.cta),
        ("k", 1, 5, 0, 0, [0, 0, 0])
    );
    assert_eq!((t.space, t.address), (Space::Shared, 2));
    assert!(t.inst.starts_with("ATOMS.ADD"), "{}", t.inst);
    assert!(t.to_string().contains("misaligned address"), "{t}");
}

#[test]
fn shared_atomic_past_the_cta_allocation() {
    let (t, _) =
        trap_of(".kernel k\n.block 1\n.shared 16\n  ATOMS.ADD RZ, [0x10], R0 ;\n  EXIT ;\n");
    assert_eq!(
        (t.reason, t.space, t.address),
        (TrapReason::AddressOutOfRange, Space::Shared, 0x10)
    );
    assert!(t.to_string().contains("address out of range"), "{t}");
}

#[test]
fn shared_atomic_outside_the_16mb_window() {
    let (t, _) = trap_of(".kernel k\n.block 1\n.shared 16\n  MOV R1, 0x1000000 ;\n  ATOMS.EXCH RZ, [R1], R0 ;\n  EXIT ;\n");
    assert_eq!(
        (t.reason, t.address),
        (TrapReason::AddressOutOfRange, 0x100_0000)
    );
}

#[test]
fn negative_offset_wraps_to_a_huge_shared_address() {
    // [Ra + ImmS24]: the 32-bit sum 0 + (-4) wraps to 0xfffffffc.
    let (t, _) =
        trap_of(".kernel k\n.block 1\n.shared 16\n  ATOMS.ADD RZ, [R1 - 0x4], R0 ;\n  EXIT ;\n");
    assert_eq!(
        (t.reason, t.address),
        (TrapReason::AddressOutOfRange, 0xffff_fffc)
    );
}

#[test]
fn misaligned_64_bit_atomic_is_checked_before_range() {
    let (t, _) =
        trap_of(".kernel k\n.block 1\n.shared 16\n  ATOMS.EXCH.64 RZ, [0x14], R2 ;\n  EXIT ;\n");
    assert_eq!((t.reason, t.address), (TrapReason::MisalignedAddress, 0x14));
}

#[test]
fn null_global_pointer() {
    let (t, _) =
        trap_of(".kernel k\n.block 1\n  ATOMG.E.ADD.STRONG.GPU PT, R4, [R2.64], R0 ;\n  EXIT ;\n");
    assert_eq!(
        (t.reason, t.space, t.address),
        (TrapReason::AddressOutOfRange, Space::Global, 0)
    );
}

#[test]
fn global_access_past_the_last_buffer() {
    let (t, _) = trap_of(
        ".kernel k\n.block 1\n.buffer b u32[4] = 0\n  MOV R2, c[0x0][b] ;\n  MOV R3, c[0x0][b+0x4] ;\n  REDG.E.ADD.STRONG.GPU [R2.64+0x10], R0 ;\n  EXIT ;\n",
    );
    assert_eq!(
        (t.reason, t.space, t.address, t.pc),
        (
            TrapReason::AddressOutOfRange,
            Space::Global,
            GLOBAL_BASE + 16,
            2
        )
    );
    // `RED` addresses the generic space: the same fault names it.
    let (t, _) = trap_of(
        ".kernel k\n.block 1\n.buffer b u32[4] = 0\n  MOV R2, c[0x0][b] ;\n  MOV R3, c[0x0][b+0x4] ;\n  RED.E.ADD.STRONG.GPU [R2.64+0x10], R0 ;\n  EXIT ;\n",
    );
    assert_eq!(
        (t.reason, t.space, t.address),
        (
            TrapReason::AddressOutOfRange,
            Space::Generic,
            GLOBAL_BASE + 16
        )
    );
}

#[test]
fn faulting_lane_is_named_and_earlier_lanes_completed() {
    // Lane 5 of the only warp uses a misaligned address; lanes 0-4 add 1 to c[0] first.
    let (t, report) = trap_of(
        ".kernel k\n.block 32\n.buffer c u32[1] = 0\n  S2R R0, SR_LANEID ;\n  MOV R2, c[0x0][c] ;\n  MOV R3, c[0x0][c+0x4] ;\n  ISETP.EQ.AND P0, PT, R0, 0x5, PT ;\n  @P0 MOV R2, 0x2 ;\n  MOV R4, 0x1 ;\n  ATOMG.E.ADD.STRONG.GPU PT, RZ, [R2.64], R4 ;\n  EXIT ;\n",
    );
    assert_eq!(
        (t.reason, t.lane, t.pc, t.line),
        (TrapReason::MisalignedAddress, 5, 6, 10)
    );
    assert_eq!(
        report.buffer("c").unwrap().as_u32().unwrap(),
        vec![5],
        "lanes 0-4 completed, 6-31 did not run"
    );
}

#[test]
fn trap_names_cta_and_warp() {
    // Only thread 40 of CTA (3,0,0) faults: warp 1, lane 8.
    let (t, _) = trap_of(
        ".kernel k\n.grid 4\n.block 64\n.shared 8\n  S2R R0, SR_TID.X ;\n  S2R R1, SR_CTAID.X ;\n  ISETP.EQ.AND P0, PT, R0, 0x28, PT ;\n  ISETP.EQ.AND P0, PT, R1, 0x3, P0 ;\n  @P0 MOV R2, 0x40 ;\n  ATOMS.ADD RZ, [R2], R0 ;\n  EXIT ;\n",
    );
    assert_eq!((t.cta, t.warp, t.lane, t.address), ([3, 0, 0], 1, 8, 0x40));
}

#[test]
fn engine_stays_usable_after_a_trap() {
    let e = engine(Backend::Interp, 2, false);
    let bad = load(
        &e,
        "bad.s",
        ".kernel k\n.block 1\n.shared 4\n  ATOMS.ADD RZ, [0x4], R0 ;\n  EXIT ;\n",
    );
    assert!(matches!(
        bad.run("k", &Overrides::default()).unwrap().failure,
        Some(Failure::Trap(_))
    ));
    let good = load(&e, "good.s", ".kernel k\n.block 64\n.buffer c u32[1] = 0\n  MOV R2, c[0x0][c] ;\n  MOV R3, c[0x0][c+0x4] ;\n  MOV R4, 0x1 ;\n  RED.E.ADD.STRONG.GPU [R2.64], R4 ;\n  EXIT ;\n.expect c[0] == 64\n");
    assert!(good.run("k", &Overrides::default()).unwrap().passed());
    assert!(matches!(
        bad.run("k", &Overrides::default()).unwrap().failure,
        Some(Failure::Trap(_))
    ));
}
