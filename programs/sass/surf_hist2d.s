// A 2-D histogram in a block-linear surface (issue 11). Thread t of each of the 4 CTAs counts
// one point (x, y) = (t & 15, t >> 4) into hist(x, y) with SUATOM.D.2D.ADD, which returns the
// bin's count before the add: every bin is hit once per CTA, so it ends at 4 and the counts
// returned are 0, 1, 2, 3 (each 256 times), in whatever order the CTAs run.
// The surface's handle is the first parameter, c[0x0][0x160]: word 0x58 of bank 0.
.kernel hist2d
.grid 4
.block 256
.surface hist 2d u32[16,16] blocklinear(1,1) = 0
.buffer order u32[1024] = 0xffffffff
        S2R R0, SR_TID.X ;
        S2R R1, SR_CTAID.X ;
        LOP3.LUT R2, R0, 0xf, RZ, 0xc0, !PT ;    // x = t & 15
        SHF.R.U32.HI R3, RZ, 0x4, R0 ;           // y = t >> 4
        MOV R4, 0x1 ;
        SUATOM.D.2D.ADD.STRONG.GPU R5, [R2], R4, 0x0, 0x58 ; // R5 = hist(x, y)++
        IMAD R6, R1, c[0x0][0x0], R0 ;           // i = ctaid * ntid + t
        IMAD.WIDE.U32 R6, R6, 0x4, c[0x0][order] ;
        STG.E [R6.64], R5 ;                      // order[i] = the count before the add
        EXIT ;
.expect hist == 4
.expect sum(hist) == 1024
.expect count(order, 0) == 256
.expect count(order, 3) == 256
.expect max(order) == 3
