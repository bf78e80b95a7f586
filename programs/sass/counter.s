// A contended counter: 8192 threads each take a ticket from one global word with ATOMG.ADD
// (which returns the old value) and mark their ticket as seen. Every ticket 0..8191 must be
// handed out exactly once. A per-CTA shared counter (ATOMS.ADD) is checked as well.
.kernel counter
.grid 32
.block 256
.shared 4
.buffer count u32[1] = 0
.buffer seen u32[8192] = 0
.buffer per_cta u32[32] = 0
        MOV R0, 0x1 ;
        ATOMS.ADD RZ, [0x0], R0 ;                // CTA-local count
        MOV R2, c[0x0][count] ;
        MOV R3, c[0x0][count+0x4] ;              // R2:R3 = &count
        ATOMG.E.ADD.STRONG.GPU PT, R4, [R2.64], R0 ; // ticket = count++
        IMAD.WIDE.U32 R6, R4, 0x4, c[0x0][seen] ;
        RED.E.ADD.STRONG.GPU [R6.64], R0 ;       // seen[ticket] += 1
        BAR.SYNC 0x0 ;
        S2R R8, SR_TID.X ;
        ISETP.NE.AND P0, PT, R8, RZ, PT ;
        @P0 EXIT ;
        LDS R9, [0x0] ;
        S2R R10, SR_CTAID.X ;
        IMAD.WIDE.U32 R12, R10, 0x4, c[0x0][per_cta] ;
        STG.E [R12.64], R9 ;
        EXIT ;
.expect count[0] == 8192
.expect seen == 1
.expect per_cta == 256
