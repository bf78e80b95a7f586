// A ring-buffer index with ATOMS.INC wrap-around (000_6d05a8552870c0ae.txt:
// INC: M = (M >= Rb) ? 0 : (M + 1)). With Rb = 15 the index runs 0, 1, ..., 15, 0, ...
// so 100 increments per CTA visit slots 0-3 seven times and slots 4-15 six times
// (100 = 6 * 16 + 4), and leave the index at 100 mod 16 = 4.
.kernel ring
.grid 2
.block 100
.shared 4
.buffer slots u32[32] = 0
.buffer final u32[2] = 0
        MOV R0, 0xf ;                            // Rb = 15: ring of 16 slots
        ATOMS.INC R1, [0x0], R0 ;                // R1 = my slot
        S2R R2, SR_CTAID.X ;
        IMAD R3, R2, 0x10, R1 ;                  // slot index in this CTA's ring
        IMAD.WIDE.U32 R4, R3, 0x4, c[0x0][slots] ;
        MOV R6, 0x1 ;
        RED.E.ADD.STRONG.GPU [R4.64], R6 ;       // count visits
        BAR.SYNC 0x0 ;
        S2R R7, SR_TID.X ;
        ISETP.NE.AND P0, PT, R7, RZ, PT ;
        @P0 EXIT ;
        LDS R8, [0x0] ;
        IMAD.WIDE.U32 R10, R2, 0x4, c[0x0][final] ;
        STG.E [R10.64], R8 ;
        EXIT ;
.expect slots[0..4] == 7
.expect slots[4..16] == 6
.expect slots[16..20] == 7
.expect slots[20..32] == 6
.expect sum(slots) == 200
.expect final == 4
