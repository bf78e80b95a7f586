// Bench workload 4: the 64-bit atomicMin CAS loop of 000_6d05a8552870c0ae.txt, 2^20 lanes, one
// global target (ATOMG.E.CAS.64). The minimum of random(11)'s first 2^20 values is 5426678664970.
.kernel min64_cas
.grid 4096
.block 256
.buffer vals u64[1048576] = random(11)
.buffer out u64[1] = 0xffffffffffffffff
        S2R R0, SR_TID.X ;
        S2R R1, SR_CTAID.X ;
        IMAD R0, R1, c[0x0][0x0], R0 ;
        IMAD.WIDE.U32 R12, R0, 0x8, c[0x0][vals] ;
        LDG.E.64 R6, [R12.64] ;                  // val
        MOV R14, c[0x0][out] ;
        MOV R15, c[0x0][out+0x4] ;
        LDG.E.64 R2, [R14.64] ;                  // ret = *address
loop:
        ISETP.LT.U32.AND P1, PT, R6, R2, PT ;
        ISETP.EQ.U32.AND P1, PT, R7, R3, P1 ;
        ISETP.LT.U32.OR P1, PT, R7, R3, P1 ;     // val < ret
        @!P1 EXIT ;
        MOV R4, R2 ;
        MOV R5, R3 ;                             // old = ret
        ATOMG.E.CAS.64.STRONG.GPU PT, R2, [R14.64], R4, R6 ;
        ISETP.NE.U32.AND P2, PT, R2, R4, PT ;
        ISETP.NE.U32.OR P2, PT, R3, R5, P2 ;
        @P2 BRA loop ;
        EXIT ;
.expect out[0] == 5426678664970
