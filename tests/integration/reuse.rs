//! Reused warps: the scheduler reuses a finished CTA's warps for the next CTA and zeroes only
//! the registers a kernel may read before writing (`valid::init`). Every CTA must still see
//! zeroed registers wherever it can observe them, and the counters of reused warps must add up.

use super::*;

/// Each lane reads R1 (never written before: must read 0), then writes every register with
/// values that differ per CTA, so a stale value would show in the next CTA's R1 or in the
/// guarded path (R6 is written only by lanes with an odd thread index before it is read).
const REUSE: &str = "
.kernel k
.grid 64
.block 64
.buffer out u32[4096] = 0
.buffer odd u32[4096] = 0
        S2R R0, SR_TID.X ;
        S2R R7, SR_CTAID.X ;
        IMAD R8, R7, c[0x0][0x0], R0 ;           // gid
        IADD3 R1, R1, 0x1, RZ ;                  // R1 = launch value + 1
        MOV R2, c[0x0][out] ;
        MOV R3, c[0x0][out+0x4] ;
        IMAD.WIDE.U32 R2, R8, 0x4, R2 ;
        STG.E [R2.64], R1 ;
        LOP3.LUT R9, R0, 0x1, RZ, 0xc0, !PT ;
        ISETP.NE.AND P0, PT, R9, RZ, PT ;
        @P0 IADD3 R6, R7, 0x64, RZ ;             // only odd lanes write R6
        MOV R4, c[0x0][odd] ;
        MOV R5, c[0x0][odd+0x4] ;
        IMAD.WIDE.U32 R4, R8, 0x4, R4 ;
        STG.E [R4.64], R6 ;                      // even lanes store R6's launch value
        IADD3 R1, R7, 0x7, RZ ;                  // leave garbage for the next CTA
        MOV R6, 0x5 ;
        EXIT ;
.expect out == 1
.expect sum(odd) == 269312
";

#[test]
fn reused_warps_see_zeroed_registers_where_they_can_read_them() {
    // sum(odd) = sum over 64 CTAs of 32 odd lanes * (ctaid + 100) = 32 * (2016 + 6400); an even
    // lane that saw the 5 left by the previous CTA would add 5 per lane.
    for backend in backends() {
        for (threads, deterministic) in [(1, true), (1, false), (2, false)] {
            let m = load(&engine(backend, threads, deterministic), "reuse.s", REUSE);
            let r = m.run("k", &Overrides::default()).expect("launch runs");
            assert!(
                r.passed(),
                "{backend:?} threads {threads}: {:?} {:?}",
                r.failure,
                r.expectations
            );
            // Counters of warps reused over many CTAs add up: 64 CTAs * 2 warps * 18 insts.
            assert_eq!(r.launch.stats.warp_insts, 64 * 2 * 18, "{backend:?}");
            assert_eq!(r.launch.ctas, 64);
            // The kernel has no shared memory and no warp stops before its exit: every CTA ran
            // back to back with the others on one recycled warp state (`scheduler/fresh.rs`),
            // which must zero what a reset zeroes.
            assert_eq!(r.launch.fresh_ctas, 64, "{backend:?}");
        }
    }
}
