// Signed versus unsigned ATOMS.MIN / ATOMS.MAX. Thread t contributes v = t - 16, so threads
// 0-15 contribute negative values (0xfffffff0..0xffffffff as unsigned) and 16-31 contribute 0..15.
//   MIN.S32 from 0          -> -16 (0xfffffff0)
//   MIN.U32 from 0xffffffff -> 0
//   MAX.S32 from INT_MIN    -> 15
//   MAX.U32 from 0          -> 0xffffffff (thread 15's -1)
.kernel minmax
.grid 1
.block 32
.shared 16
.buffer res u32[4] = 0
        S2R R0, SR_TID.X ;
        ISETP.NE.AND P0, PT, R0, RZ, PT ;
        MOV R1, 0xffffffff ;
        MOV R2, 0x80000000 ;
        @!P0 STS [0x0], RZ ;
        @!P0 STS [0x4], R1 ;
        @!P0 STS [0x8], R2 ;
        @!P0 STS [0xc], RZ ;
        BAR.SYNC 0x0 ;
        IADD3 R3, R0, -0x10, RZ ;                // v = tid - 16
        ATOMS.MIN.S32 RZ, [0x0], R3 ;
        ATOMS.MIN.U32 RZ, [0x4], R3 ;
        ATOMS.MAX.S32 RZ, [0x8], R3 ;
        ATOMS.MAX RZ, [0xc], R3 ;                // .U32 is the default size
        BAR.SYNC 0x0 ;
        @P0 EXIT ;
        MOV R4, c[0x0][res] ;
        MOV R5, c[0x0][res+0x4] ;
        LDS R6, [0x0] ;
        STG.E [R4.64], R6 ;
        LDS R6, [0x4] ;
        STG.E [R4.64+0x4], R6 ;
        LDS R6, [0x8] ;
        STG.E [R4.64+0x8], R6 ;
        LDS R6, [0xc] ;
        STG.E [R4.64+0xc], R6 ;
        EXIT ;
.expect res == {4294967280, 0, 15, 4294967295}
