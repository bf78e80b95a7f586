// Bench workload 5: ATOMS.INC with wrap on a shared ring index (ring of 1024), 2^22 lanes; each
// lane writes its id into the slot it got.
.kernel ring_inc
.grid 16384
.block 256
.shared 4100
.buffer final u32[16384] = 0
        S2R R0, SR_TID.X ;
        MOV R1, 0x3ff ;
        ATOMS.INC R2, [0x0], R1 ;
        LEA R3, R2, 0x4, 0x2 ;                   // slot address = 4 + idx * 4
        STS [R3], R0 ;
        BAR.SYNC 0x0 ;
        ISETP.NE.AND P0, PT, R0, RZ, PT ;
        @P0 EXIT ;
        LDS R4, [0x0] ;
        S2R R5, SR_CTAID.X ;
        IMAD.WIDE.U32 R6, R5, 0x4, c[0x0][final] ;
        STG.E [R6.64], R4 ;
        EXIT ;
.expect final == 256
