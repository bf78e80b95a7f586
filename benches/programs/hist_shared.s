// Bench workload 3: per-CTA shared histogram (ATOMS.ADD) of 2^22 values, flushed with one
// global atomic per bin.
.kernel hist_shared
.grid 16384
.block 256
.shared 1024
.buffer data u32[4194304] = random(7, 0, 256)
.buffer hist u32[256] = 0
        S2R R0, SR_TID.X ;
        S2R R1, SR_CTAID.X ;
        SHF.L.U32 R2, R0, 0x2, RZ ;
        STS [R2], RZ ;
        BAR.SYNC 0x0 ;
        IMAD R3, R1, c[0x0][0x0], R0 ;
        IMAD.WIDE.U32 R4, R3, 0x4, c[0x0][data] ;
        LDG.E R6, [R4.64] ;
        SHF.L.U32 R6, R6, 0x2, RZ ;
        MOV R7, 0x1 ;
        ATOMS.ADD RZ, [R6], R7 ;
        BAR.SYNC 0x0 ;
        LDS R8, [R2] ;
        IMAD.WIDE.U32 R10, R0, 0x4, c[0x0][hist] ;
        RED.E.ADD.STRONG.GPU [R10.64], R8 ;
        EXIT ;
.expect sum(hist) == 4194304
