//! SASS's warp-convergence instructions and uniform registers on both backends, in the
//! situations ptxas's code meets: partial warps, diverged groups reaching `WARPSYNC`, uniform
//! registers numbered past R254.

use super::*;

/// Runs the only kernel of `source` on `backend` and returns buffer `out`.
fn out_of(source: &str, backend: Backend) -> Vec<u32> {
    let m = load(&engine(backend, 1, true), "convergence.s", source);
    let name = m.kernel_names()[0].to_string();
    let r = m.run(&name, &Overrides::default()).expect("launch runs");
    assert!(r.failure.is_none(), "{backend}: {:?}", r.failure);
    r.buffer("out").unwrap().as_u32().unwrap()
}

const STORE_R5: &str = "
        S2R R0, SR_LANEID ;
        IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][out] ;
        STG.E [R2.64], R5 ;
        EXIT ;";

#[test]
fn bra_div_in_a_converged_partial_warp_does_not_branch() {
    // 16 threads: the other 16 lanes of the warp were never launched, so `~URZ` (every lane)
    // is converged and BRA.DIV falls through; BRA.CONV branches.
    let src = format!(
        ".kernel k\n.block 16\n.buffer out u32[16] = 0
        MOV R5, 0x1 ;
        BRA.DIV ~URZ, `(.L_x_0) ;
        MOV R5, 0x2 ;
.L_x_0:
        BRA.CONV ~URZ, `(.L_x_1) ;
        MOV R5, 0x7 ;
.L_x_1:{STORE_R5}"
    );
    for b in backends() {
        assert_eq!(out_of(&src, b), vec![2; 16], "{b}");
    }
}

#[test]
fn bra_div_sees_a_diverged_group() {
    // Lanes 0..16 and 16..32 take different sides; each side tests convergence of the whole
    // warp: diverged, so BRA.DIV branches (R5 = 3 stays) on both sides.
    let src = format!(
        ".kernel k\n.block 32\n.buffer out u32[32] = 0
        S2R R0, SR_LANEID ;
        MOV R5, 0x3 ;
        ISETP.GE.U32.AND P0, PT, R0, 0x10, PT ;
        @P0 BRA `(.L_x_1) ;
        BRA.DIV ~URZ, `(.L_x_2) ;
        MOV R5, 0x9 ;
        BRA `(.L_x_2) ;
.L_x_1:
        BRA.DIV ~URZ, `(.L_x_2) ;
        MOV R5, 0x9 ;
.L_x_2:{STORE_R5}"
    );
    for b in backends() {
        assert_eq!(out_of(&src, b), vec![3; 32], "{b}");
    }
}

#[test]
fn warpsync_of_converged_lanes_falls_through() {
    // The two sides rejoin before the WARPSYNC: it passes at once and the shuffle sees every
    // lane's R4 = lane * 10. Lane l reads lane 31 - l: R5 = (31 - l) * 10.
    let src = format!(
        ".kernel k\n.block 32\n.buffer out u32[32] = 0
        S2R R0, SR_LANEID ;
        IMAD R4, R0, 0xa, RZ ;
        IADD3 R6, -R0, 0x1f, RZ ;
        ISETP.GE.U32.AND P0, PT, R0, 0x10, PT ;
        @P0 BRA `(.L_x_1) ;
        MOV R7, 0x1 ;
        BRA `(.L_x_2) ;
.L_x_1:
        MOV R7, 0x2 ;
.L_x_2:
        WARPSYNC 0xffffffff ;
        SHFL.IDX PT, R5, R4, R6, 0x1f ;{STORE_R5}"
    );
    let want: Vec<u32> = (0..32).map(|l| (31 - l) * 10).collect();
    for b in backends() {
        assert_eq!(out_of(&src, b), want, "{b}");
    }
}

#[test]
fn warpsync_that_the_other_lanes_never_reach_is_reported_not_run_wrong() {
    // Each half of the warp runs its own copy of `WARPSYNC ; SHFL` (as an inlined subroutine
    // called from both sides of a branch would be). The hardware rendezvouses the two
    // WARPSYNCs; atomjit's groups wait each at their own instruction, so the launch stops with
    // a watchdog report instead of shuffling from a group that has not set its registers.
    let src = format!(
        ".kernel k\n.block 32\n.buffer out u32[32] = 0
        S2R R0, SR_LANEID ;
        IMAD R4, R0, 0xa, RZ ;
        ISETP.GE.U32.AND P0, PT, R0, 0x10, PT ;
        @P0 BRA `(.L_x_1) ;
        WARPSYNC 0xffffffff ;
        SHFL.IDX PT, R5, R4, RZ, 0x1f ;
        BRA `(.L_x_2) ;
.L_x_1:
        WARPSYNC 0xffffffff ;
        SHFL.IDX PT, R5, R4, RZ, 0x1f ;
.L_x_2:{STORE_R5}"
    );
    for b in backends() {
        let mut c = Config::default();
        c.backend(b)
            .threads(1)
            .deterministic(true)
            .timeout(Some(std::time::Duration::from_millis(300)));
        let m = load(&Engine::new(&c), "convergence.s", &src);
        let r = m.run("k", &Overrides::default()).expect("launch runs");
        assert!(
            matches!(r.failure, Some(atomjit::engine::Failure::Watchdog(_))),
            "{b}: {:?}",
            r.failure
        );
    }
}

#[test]
fn uniform_registers_after_r254_are_broadcast() {
    // A kernel naming R254 puts UR0 at slot 256; a uniform value written by the lanes of one
    // side of a branch is seen by the other side's lanes.
    let src = format!(
        ".kernel k\n.block 32\n.buffer out u32[32] = 0
        MOV R254, RZ ;
        S2R R0, SR_LANEID ;
        UMOV UR4, 0x1 ;
        ISETP.GE.U32.AND P0, PT, R0, 0x10, PT ;
        @P0 BRA `(.L_x_1) ;
        UMOV UR4, 0x7 ;
.L_x_1:
        MOV R5, UR4 ;{STORE_R5}"
    );
    for b in backends() {
        let out = out_of(&src, b);
        // Lanes 0..16 wrote 7 before anyone read; the deterministic order runs the fall-through
        // side first, so lanes 16..32 read the broadcast 7 as well.
        assert_eq!(out, vec![7; 32], "{b}");
    }
}
