// An EXCH hand-off chain: each of 256 threads swaps its own token (tid + 1) into one shared
// slot with ATOMS.EXCH and receives the previous holder's token. Exactly one thread receives
// the initial 0; every other token is received exactly once, except the last one swapped in,
// which stays in the slot and is written to out[256]. So out holds 0, 1, ..., 256 in some
// order: sum 256 * 257 / 2 = 32896, one zero, maximum 256.
.kernel exch
.grid 1
.block 256
.shared 4
.buffer out u32[257] = 0
        S2R R0, SR_TID.X ;
        IADD3 R1, R0, 0x1, RZ ;                  // my token
        ATOMS.EXCH R2, [0x0], R1 ;               // hand mine in, take the previous one
        IMAD.WIDE.U32 R4, R0, 0x4, c[0x0][out] ;
        STG.E [R4.64], R2 ;
        BAR.SYNC 0x0 ;
        ISETP.NE.AND P0, PT, R0, RZ, PT ;
        @P0 EXIT ;
        LDS R6, [0x0] ;                          // the token still in the slot
        MOV R8, c[0x0][out] ;
        MOV R9, c[0x0][out+0x4] ;
        STG.E [R8.64+0x400], R6 ;                // out[256]
        EXIT ;
.expect sum(out) == 32896
.expect count(out, 0) == 1
.expect max(out) == 256
