// Packed half-precision adds with SUATOM.ADD.F16x2.RN (issue 11): each half is its own f16
// add, rounded to nearest even. 256 threads add the pair (lo 1.0, hi 0.5) = 0x38003c00 to
// pixel (t & 3, t >> 2 & 3) of a 4 x 4 surface of packed pairs: 16 adds per pixel give
// (16.0, 8.0) = 0x48004c00 = 1207979008. Thread 0 also adds (0.5, 65504.0) = 0x7bff3800 to
// `edge`, which holds (1.0, 65504.0) = 0x7bff3c00: the low half becomes 1.5 (0x3e00) while
// the high half overflows to +inf (0x7c00) alone: 0x7c003e00 = 2080390656.
.kernel half2
.grid 1
.block 256
.surface img 2d u32[4,4] = 0
.surface edge 1d u32[1] = 0x7bff3c00
        S2R R0, SR_TID.X ;
        LOP3.LUT R2, R0, 0x3, RZ, 0xc0, !PT ;
        SHF.R.U32.HI R3, RZ, 0x2, R0 ;
        LOP3.LUT R3, R3, 0x3, RZ, 0xc0, !PT ;
        MOV R4, 0x38003c00 ;
        SURED.D.2D.ADD.F16x2.RN.TRAP [R2], R4, 0x0, 0x58 ;
        ISETP.NE.AND P0, PT, R0, RZ, PT ;
        @P0 EXIT ;
        MOV R6, RZ ;
        MOV R7, 0x7bff3800 ;
        SURED.D.1D.ADD.F16x2.RN.TRAP [R6], R7, 0x0, 0x5a ;
        EXIT ;
.expect img == 1207979008
.expect edge == 2080390656
