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

/// Asserts that the only kernel `k` of `src` hangs on both backends and the watchdog says so.
fn assert_watchdog_reports_a_hang(src: &str) {
    for b in backends() {
        let mut c = Config::default();
        c.backend(b)
            .threads(1)
            .deterministic(true)
            .timeout(Some(std::time::Duration::from_millis(300)));
        let m = load(&Engine::new(&c), "convergence.s", src);
        let r = m.run("k", &Overrides::default()).expect("launch runs");
        assert!(
            matches!(r.failure, Some(atomjit::engine::Failure::Watchdog(_))),
            "{b}: {:?}",
            r.failure
        );
    }
}

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
    assert_watchdog_reports_a_hang(&src);
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

/// A kernel of `block` threads: each lane computes its split mask into R3 with `mask_code`,
/// then `WARPSYNC.EXCLUSIVE R3` and `REDUX.SUM` of the lane ids in a `BSSY`/`BSYNC` region
/// (ptxas's sm_90 form). After the region a whole-group `REDUX.SUM` of the lane ids again.
/// Lane l stores `tile sum + (group sum << 16)`.
fn split_kernel(block: u32, before: &str, mask_code: &str) -> String {
    format!(
        ".kernel k\n.block {block}\n.buffer out u32[{block}] = 0
        S2R R0, SR_LANEID ;
        {before}
        {mask_code}
        BSSY B0, `(.L_x_9) ;
        WARPSYNC.EXCLUSIVE R3 ;
        NOP ;
        REDUX.SUM.S32 UR4, R0 ;
        IMAD.U32 R5, RZ, RZ, UR4 ;
        BSYNC B0 ;
.L_x_9:
        REDUX.SUM.S32 UR5, R0 ;
        MOV R6, UR5 ;
        IMAD.SHL.U32 R6, R6, 0x10000, RZ ;
        IADD3 R5, R5, R6, RZ ;{STORE_R5}"
    )
}

#[test]
fn warpsync_exclusive_reduces_each_group_of_lanes_naming_one_mask() {
    // Interleaved groups: even lanes name 0x55555555, odd lanes 0xaaaaaaaa. Sums of lane ids:
    // even 0+2+..+30 = 240, odd 1+3+..+31 = 256; the whole warp 496 after the rejoin.
    let interleaved = "LOP3.LUT R4, R0, 0x1, RZ, 0xc0, !PT ;
        ISETP.NE.U32.AND P0, PT, R4, RZ, PT ;
        SEL R3, 0xaaaaaaaa, 0x55555555, P0 ;";
    let src = split_kernel(32, "", interleaved);
    let want: Vec<u32> = (0..32)
        .map(|l| if l % 2 == 0 { 240 } else { 256 } + (496 << 16))
        .collect();
    for b in backends() {
        assert_eq!(out_of(&src, b), want, "{b}");
    }
    // Tiles of 4 (cooperative groups' `0xf << (lane & ~3)`): tile t sums 16t + 6.
    let tiles = "LOP3.LUT R4, R0, 0xfffffffc, RZ, 0xc0, !PT ;
        IMAD.MOV.U32 R3, RZ, RZ, 0xf ;
        SHF.L.U32 R3, R3, R4, RZ ;";
    let src = split_kernel(32, "", tiles);
    let want: Vec<u32> = (0..32).map(|l| 16 * (l / 4) + 6 + (496 << 16)).collect();
    for b in backends() {
        assert_eq!(out_of(&src, b), want, "{b}");
    }
}

#[test]
fn warpsync_exclusive_counts_only_live_lanes_of_a_mask() {
    // 24 threads in tiles of 16: the upper tile's mask 0xffff0000 names lanes 24..31, which
    // were never launched, so its 8 lanes reduce at once: 16+..+23 = 156; 0+..+15 = 120.
    let tiles16 = "LOP3.LUT R4, R0, 0xfffffff0, RZ, 0xc0, !PT ;
        IMAD.MOV.U32 R3, RZ, RZ, 0xffff ;
        SHF.L.U32 R3, R3, R4, RZ ;";
    let src = split_kernel(24, "", tiles16);
    let whole = (0..24).sum::<u32>() << 16;
    let want: Vec<u32> = (0..24)
        .map(|l| if l < 16 { 120 } else { 156 } + whole)
        .collect();
    for b in backends() {
        assert_eq!(out_of(&src, b), want, "{b}");
    }
    // Lanes 16..31 exit first; the rest name the whole warp, whose live lanes are all there.
    let exit_upper = "ISETP.GE.U32.AND P1, PT, R0, 0x10, PT ;
        @P1 EXIT ;";
    let src = split_kernel(32, exit_upper, "MOV R3, 0xffffffff ;");
    let want: Vec<u32> = (0..32)
        .map(|l| if l < 16 { 120 + (120 << 16) } else { 0 })
        .collect();
    for b in backends() {
        assert_eq!(out_of(&src, b), want, "{b}");
    }
}

#[test]
fn warpsync_exclusive_waits_for_live_lanes_of_its_mask() {
    // Lanes 16..31 spin until lane 0 sets a flag after its reduction; lanes 0..15 name the
    // whole warp, so they wait at the split for lanes that never come. The hardware would
    // wait forever too: atomjit reports the hang instead of reducing over half the warp.
    let spin = "ISETP.GE.U32.AND P1, PT, R0, 0x10, PT ;
        @!P1 BRA `(.L_x_8) ;
.L_x_7:
        LDG.E.STRONG.GPU R7, [R8.64] ;
        ISETP.EQ.U32.AND P2, PT, R7, RZ, PT ;
        @P2 BRA `(.L_x_7) ;
        EXIT ;
.L_x_8:";
    let before = format!("IMAD.WIDE.U32 R8, RZ, 0x4, c[0x0][out] ;\n        {spin}");
    let src = split_kernel(32, &before, "MOV R3, 0xffffffff ;");
    assert_watchdog_reports_a_hang(&src);
}

#[test]
fn guard_false_lanes_of_a_split_continue_with_the_last_group() {
    // Tiles of 16 (R3 = 0xffff << (tid & 16)); lane 20 does not execute the split (P1 false).
    // It counts as present for every tile and goes on with the last group, its own tile here:
    // the tiles reduce 0+..+15 = 120 and 16+..+31 = 376.
    let src = format!(
        ".kernel k\n.block 32\n.buffer out u32[32] = 0
        S2R R0, SR_LANEID ;
        ISETP.NE.U32.AND P1, PT, R0, 0x14, PT ;
        LOP3.LUT R4, R0, 0x10, RZ, 0xc0, !PT ;
        MOV R7, 0xffff ;
        SHF.L.U32 R3, R7, R4, RZ ;
        BSSY B0, `(.L_x_9) ;
   @P1  WARPSYNC.EXCLUSIVE R3 ;
        REDUX.SUM UR4, R0 ;
        MOV R5, UR4 ;
        BSYNC B0 ;
.L_x_9:{STORE_R5}"
    );
    let want: Vec<u32> = (0..32).map(|l| if l < 16 { 120 } else { 376 }).collect();
    for b in backends() {
        assert_eq!(out_of(&src, b), want, "{b}");
    }
}

#[test]
fn a_ptx_register_membermask_naming_absent_lanes_traps_like_an_immediate_one() {
    // Lanes 16..31 skip the shuffle; the others name the whole warp in a register. PTX splits
    // by the register but does not wait: the membermask check traps, as for `-1` written out.
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n
.visible .entry k(.param .u64 out)
{
    .reg .pred p;
    .reg .b32 r<4>;
    mov.u32 r1, %tid.x;
    mov.u32 r2, -1;
    setp.lt.u32 p, r1, 16;
    @!p bra SKIP;
    shfl.sync.idx.b32 r3, r1, 0, 31, r2;
SKIP:
    ret;
}
";
    let mut launch = atomjit::front::LaunchText::new();
    launch.push("k.launch", ".block 32\n.buffer out u32[32] = 0\n");
    for b in backends() {
        let m = engine(b, 1, true)
            .load_with_launch("k.ptx", ptx, &launch)
            .expect("loads");
        let r = m.run("k", &Overrides::default()).expect("launch runs");
        match r.failure {
            Some(atomjit::engine::Failure::Trap(t)) => {
                assert!(t.inst.contains("membermask check"), "{b}: {t}")
            }
            other => panic!("{b}: {other:?}"),
        }
    }
}
