// Bench workload: 2^22 lanes add 1 to pixel (bin & 15, bin >> 4), bin = (gid * 2654435761) mod
// 256, of a 16 x 16 block-linear surface (SURED.D.2D.ADD: coordinates in elements, clamped,
// laid out in GOBs). The multiplier is odd, so every pixel gets exactly 2^22 / 256 = 16384.
.kernel surf_hist2d
.grid 16384
.block 256
.surface hist 2d u32[16,16] blocklinear(2,1) = 0
        S2R R0, SR_TID.X ;
        S2R R1, SR_CTAID.X ;
        IMAD R0, R1, c[0x0][0x0], R0 ;           // gid
        IMAD R0, R0, 0x9e3779b1, RZ ;            // gid * 2654435761 (mod 2^32)
        LOP3.LUT R2, R0, 0xf, RZ, 0xc0, !PT ;    // x = bin & 15
        SHF.R.U32.HI R3, RZ, 0x4, R0 ;
        LOP3.LUT R3, R3, 0xf, RZ, 0xc0, !PT ;    // y = (bin >> 4) & 15
        MOV R4, 0x1 ;
        SURED.D.2D.ADD.STRONG.GPU [R2], R4, 0x0, 0x58 ;
        EXIT ;
.expect hist == 16384
