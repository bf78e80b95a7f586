// Bench workload 2: 2^22 lanes add 1 to bin (gid * 2654435761) mod 256 of a global histogram.
.kernel hist_global
.grid 16384
.block 256
.buffer hist u32[256] = 0
        S2R R0, SR_TID.X ;
        S2R R1, SR_CTAID.X ;
        IMAD R0, R1, c[0x0][0x0], R0 ;           // gid
        IMAD R0, R0, 0x9e3779b1, RZ ;            // gid * 2654435761 (mod 2^32)
        LOP3.LUT R0, R0, 0xff, RZ, 0xc0, !PT ;   // mod 256
        IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][hist] ;
        MOV R4, 0x1 ;
        RED.E.ADD.STRONG.GPU [R2.64], R4 ;
        EXIT ;
.expect sum(hist) == 4194304
