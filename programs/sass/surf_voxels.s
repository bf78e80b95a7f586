// Counting points into a 4 x 4 x 4 voxel grid with .IGN (issue 11): thread i of 512 (2 CTAs)
// has the point (x, y, z) = ((i & 7) - 2, ((i >> 3) & 7) - 2, i >> 6); points outside the
// grid (a coordinate below 0 or above 3) are dropped, and a dropped SUATOM returns 0. Each
// voxel receives exactly one point (x + 2, y + 2, z name a unique i), so every voxel ends at
// 1 and 64 of the 512 points count. Coordinates are in R4, R5, R6 (3 coordinates: R4n).
.kernel voxels
.grid 2
.block 256
.surface count 3d u32[4,4,4] blocklinear(1,2) = 0
.buffer seen u32[512] = 7
        S2R R0, SR_TID.X ;
        S2R R1, SR_CTAID.X ;
        IMAD R0, R1, c[0x0][0x0], R0 ;           // i
        LOP3.LUT R4, R0, 0x7, RZ, 0xc0, !PT ;
        IADD3 R4, R4, -0x2, RZ ;                 // x
        SHF.R.U32.HI R5, RZ, 0x3, R0 ;
        LOP3.LUT R5, R5, 0x7, RZ, 0xc0, !PT ;
        IADD3 R5, R5, -0x2, RZ ;                 // y
        SHF.R.U32.HI R6, RZ, 0x6, R0 ;           // z
        MOV R8, 0x1 ;
        SUATOM.D.3D.ADD.IGN R9, [R4], R8, 0x0, 0x58 ;
        IMAD.WIDE.U32 R10, R0, 0x4, c[0x0][seen] ;
        STG.E [R10.64], R9 ;                     // 0: the voxel was empty, or the point dropped
        EXIT ;
.expect count == 1
.expect sum(count) == 64
.expect seen == 0
