// Float accumulation with SUATOM.ADD.F32.FTZ.RN (issue 11). 256 threads each add 0.25 to pixel
// (t & 3, (t >> 2) & 3) of a 4 x 4 f32 surface: 16 adds per pixel, exact, so every pixel
// ends at 4.0 whatever the order. Every thread also adds the subnormal 1e-40 (0x000116c2) to
// tiny(0): .FTZ flushes subnormal inputs, so it stays +0 (without the flush it would grow).
.kernel accum_f32
.grid 1
.block 256
.surface acc 2d f32[4,4] blocklinear(1,1) = 0
.surface tiny 1d f32[2] = 0
        S2R R0, SR_TID.X ;
        LOP3.LUT R2, R0, 0x3, RZ, 0xc0, !PT ;    // x
        SHF.R.U32.HI R3, RZ, 0x2, R0 ;
        LOP3.LUT R3, R3, 0x3, RZ, 0xc0, !PT ;    // y
        MOV R4, 0x3e800000 ;                     // 0.25
        SURED.D.2D.ADD.F32.FTZ.RN [R2], R4, 0x0, 0x58 ;
        MOV R6, RZ ;
        MOV R7, 0x116c2 ;                        // 1e-40, subnormal
        SUATOM.D.1D.ADD.F32.FTZ.RN.TRAP R8, [R6], R7, 0x0, 0x5a ;
        EXIT ;
.expect acc == 4.0
.expect sum(acc) == 64.0
.expect tiny == 0
