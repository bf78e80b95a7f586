// A depth-buffer splat with SURED.MIN.U32 (issue 11): 256 points, thread t's at
// (x, y) = ((t & 15) - 4, t >> 4) on an 8 x 8 pitch surface, with depth
// ((t * 0x9e37) >> 8) & 0xfff. Each pixel keeps the smallest depth that lands on it; points
// outside the image clamp onto its nearest edge pixel (.NEAR, the default: no clamp modifier).
// x is a byte offset (.BA): 4 * x. The expected image was computed in Python from this
// definition.
.kernel depth_min
.grid 1
.block 256
.surface zbuf 2d u32[8,8] pitch(64) = 0xffffffff
        S2R R0, SR_TID.X ;
        LOP3.LUT R2, R0, 0xf, RZ, 0xc0, !PT ;
        IADD3 R2, R2, -0x4, RZ ;                 // x = (t & 15) - 4
        IMAD.SHL.U32 R2, R2, 0x4, RZ ;           // in bytes
        SHF.R.U32.HI R3, RZ, 0x4, R0 ;           // y = t >> 4
        IMAD R4, R0, 0x9e37, RZ ;
        SHF.R.U32.HI R4, RZ, 0x8, R4 ;
        LOP3.LUT R4, R4, 0xfff, RZ, 0xc0, !PT ;  // depth
        SURED.D.BA.2D.MIN.STRONG.GPU [R2], R4, 0x0, 0x58 ;
        EXIT ;
.expect zbuf == {0, 791, 949, 1107, 1265, 1423, 1582, 1740, 2531, 3322, 3480, 3638, 3797, 3955, 17, 175, 966, 1757, 1916, 2074, 2232, 2390, 2549, 2707, 35, 193, 351, 509, 668, 826, 984, 1142, 1933, 2724, 2883, 3041, 3199, 3357, 3515, 52, 369, 1160, 1318, 1476, 1634, 1793, 1951, 2109, 2900, 3691, 3849, 4008, 70, 228, 386, 544, 87, 562, 123, 281, 439, 0, 158, 105}
