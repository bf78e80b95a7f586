// Claiming cells of one layer of a 2-D array surface with SUATOM.CAS (issue 11). Thread t of
// 64 tries to swap 0 for t + 1 in cell (x, y) = ((t >> 2) & 3, t >> 4) of layer 1; the
// compare and swap values are the vec2 R8 (compare), R9 (swap). The four threads of a cell
// are consecutive lanes of one warp, which perform their atomics in lane order, so the lowest
// (t % 4 == 0) wins and stores t + 1 = 4 * cell + 1; the others see it and fail. The layer
// register holds 0x10001: only its low 16 bits count, so it names layer 1; layers 0 and 2
// stay 0. Each thread records whether it won (the old value was 0).
.kernel cas_layer
.grid 1
.block 64
.surface cells 2d_array u32[4,4] layers 3 = 0
.buffer won u32[64] = 9
        S2R R0, SR_TID.X ;
        SHF.R.U32.HI R4, RZ, 0x2, R0 ;
        LOP3.LUT R4, R4, 0x3, RZ, 0xc0, !PT ;    // x
        SHF.R.U32.HI R5, RZ, 0x4, R0 ;           // y
        MOV R6, 0x10001 ;                        // layer 1 (the low 16 bits)
        MOV R8, RZ ;                             // compare: 0
        IADD3 R9, R0, 0x1, RZ ;                  // swap: t + 1
        SUATOM.D.2D_ARRAY.CAS.STRONG.GPU R10, [R4], R8, 0x0, 0x58 ;
        ISETP.EQ.AND P0, PT, R10, RZ, PT ;
        SEL R11, RZ, 0x1, !P0 ;                  // won: old == 0
        IMAD.WIDE.U32 R12, R0, 0x4, c[0x0][won] ;
        STG.E [R12.64], R11 ;
        EXIT ;
.expect cells == {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
.expect count(won, 1) == 16
.expect sum(won) == 16
