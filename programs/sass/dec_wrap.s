// ATOMS.DEC wrap-around (000_6d05a8552870c0ae.txt: DEC: M = (M == 0 || M > Rb) ? Rb : M - 1).
// From M = 0 with Rb = 9 the returned values cycle 0, 9, 8, ..., 1 (period 10). 64 threads:
// 64 = 6 * 10 + 4, so the first four values of the cycle (0, 9, 8, 7) are returned seven times,
// the others six times, and M ends at 6.
// A second word starts above the bound (M = 100 > Rb = 5): the first DEC resets it to Rb.
.kernel dec
.grid 1
.block 64
.shared 8
.buffer seen u32[10] = 0
.buffer final u32[1] = 0
.buffer above u32[2] = 0
        S2R R0, SR_TID.X ;
        MOV R1, 0x9 ;
        ATOMS.DEC R2, [0x0], R1 ;                // R2 = value before my decrement
        IMAD.WIDE.U32 R4, R2, 0x4, c[0x0][seen] ;
        MOV R6, 0x1 ;
        RED.E.ADD.STRONG.GPU [R4.64], R6 ;       // seen[R2] += 1
        BAR.SYNC 0x0 ;
        ISETP.NE.AND P0, PT, R0, RZ, PT ;
        @P0 EXIT ;
        LDS R7, [0x0] ;
        MOV R8, c[0x0][final] ;
        MOV R9, c[0x0][final+0x4] ;
        STG.E [R8.64], R7 ;
        MOV R10, 0x64 ;                          // M = 100
        STS [0x4], R10 ;
        MOV R11, 0x5 ;                           // Rb = 5 < M
        ATOMS.DEC R12, [0x4], R11 ;              // returns 100, M = Rb = 5
        ATOMS.DEC R13, [0x4], R11 ;              // returns 5, M = 4
        MOV R14, c[0x0][above] ;
        MOV R15, c[0x0][above+0x4] ;
        STG.E [R14.64], R12 ;
        STG.E [R14.64+0x4], R13 ;
        EXIT ;
.expect seen == {7, 6, 6, 6, 6, 6, 6, 7, 7, 7}
.expect final[0] == 6
.expect above == {100, 5}
