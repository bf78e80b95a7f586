// A spin lock built from ATOMS.CAST (compare and store: Rd = 1 if the store happened) around
// a non-atomic critical section (LDS / IADD3 / STS). Lanes of one warp, warps of one CTA and
// CTAs on different host threads all contend; a broken lock would lose increments.
// CAST.32 register rule: Rb even (R4 = 0, unlocked), Rc = Rb + 1 (R5 = 1, locked).
.kernel cast_lock
.grid 4
.block 128
.shared 8                                        // [0x0] lock, [0x4] counter
.buffer total u32[4] = 0
        MOV R4, RZ ;
        MOV R5, 0x1 ;
spin:
        ATOMS.CAST R0, [0x0], R4, R5 ;           // try: if lock == 0 { lock = 1; R0 = 1 }
        ISETP.EQ.U32.AND P0, PT, R0, RZ, PT ;
        @P0 BRA spin ;
        LDS R1, [0x4] ;                          // critical section
        IADD3 R1, R1, 0x1, RZ ;
        STS [0x4], R1 ;
        MEMBAR.CTA ;
        ATOMS.EXCH RZ, [0x0], RZ ;               // unlock
        BAR.SYNC 0x0 ;
        S2R R6, SR_TID.X ;
        ISETP.NE.AND P1, PT, R6, RZ, PT ;
        @P1 EXIT ;
        LDS R7, [0x4] ;
        S2R R8, SR_CTAID.X ;
        IMAD.WIDE.U32 R10, R8, 0x4, c[0x0][total] ;
        STG.E [R10.64], R7 ;
        EXIT ;
.expect total == 128
