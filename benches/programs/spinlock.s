// Bench workload 6: a CAST spin lock around a short critical section, 256 CTAs of 128 threads.
.kernel spinlock
.grid 256
.block 128
.shared 8
.buffer total u32[1] = 0
        MOV R4, RZ ;
        MOV R5, 0x1 ;
spin:
        ATOMS.CAST R0, [0x0], R4, R5 ;
        ISETP.EQ.U32.AND P0, PT, R0, RZ, PT ;
        @P0 BRA spin ;
        LDS R1, [0x4] ;
        IADD3 R1, R1, 0x1, RZ ;
        STS [0x4], R1 ;
        ATOMS.EXCH RZ, [0x0], RZ ;
        BAR.SYNC 0x0 ;
        S2R R6, SR_TID.X ;
        ISETP.NE.AND P1, PT, R6, RZ, PT ;
        @P1 EXIT ;
        LDS R7, [0x4] ;
        MOV R8, c[0x0][total] ;
        MOV R9, c[0x0][total+0x4] ;
        RED.E.ADD.STRONG.GPU [R8.64], R7 ;
        EXIT ;
.expect total[0] == 32768
