// ATOMS.CAST.SPIN under contention (000_6d05a8552870c0ae.txt, ".SPIN Fast fail"): lanes are
// grouped by shared-memory bank; one lane per bank attempts its compare-and-store, the others
// return 0 at once. Here all lanes of a warp target the same lock word, so each attempt lets
// one lane try; the losers spin. The lock protects a non-atomic 64-bit counter update, and a
// second lock word in another bank (0x108, bank 2) is taken with the 64-bit form CAST.SPIN.64
// (Rb = R8 Reg4-aligned, Rc = R10 = Rb + 2).
.kernel cast_spin
.grid 2
.block 96
.shared 272                                      // [0x0] lock, [0x8] u64 counter, [0x108] u64 lock
.buffer count32 u64[2] = 0
.buffer count64 u32[2] = 0
        MOV R4, RZ ;                             // compare: unlocked
        MOV R5, 0x1 ;                            // store: locked
spin:
        ATOMS.CAST.SPIN R0, [0x0], R4, R5 ;
        ISETP.EQ.U32.AND P0, PT, R0, RZ, PT ;
        @P0 BRA spin ;
        LDS.64 R2, [0x8] ;                       // counter += 1 (64-bit, non-atomic)
        IADD3 R2, P1, R2, 0x1, RZ ;
        IADD3.X R3, R3, RZ, RZ, P1, !PT ;
        STS.64 [0x8], R2 ;
        ATOMS.EXCH RZ, [0x0], RZ ;               // unlock
        MOV R8, RZ ;                             // 64-bit lock at 0x108: compare 0
        MOV R9, RZ ;
        MOV R10, 0x1 ;                           // store 1
        MOV R11, RZ ;
spin64:
        ATOMS.CAST.SPIN.64 R12, [0x108], R8, R10 ;
        ISETP.EQ.U32.AND P2, PT, R12, RZ, PT ;
        @P2 BRA spin64 ;
        LDS R14, [0x10] ;                        // a 32-bit counter under the 64-bit lock
        IADD3 R14, R14, 0x1, RZ ;
        STS [0x10], R14 ;
        ATOMS.EXCH.64 RZ, [0x108], RZ ;          // unlock (RZ as a pair is 0)
        BAR.SYNC 0x0 ;
        S2R R6, SR_TID.X ;
        ISETP.NE.AND P3, PT, R6, RZ, PT ;
        @P3 EXIT ;
        S2R R7, SR_CTAID.X ;
        LDS.64 R2, [0x8] ;
        IMAD.WIDE.U32 R16, R7, 0x8, c[0x0][count32] ;
        STG.E.64 [R16.64], R2 ;
        LDS R14, [0x10] ;
        IMAD.WIDE.U32 R18, R7, 0x4, c[0x0][count64] ;
        STG.E [R18.64], R14 ;
        EXIT ;
.expect count32 == 96
.expect count64 == 96
