// Shared-memory histogram of 16384 bytes-valued words into 256 bins.
// Each CTA zeroes 256 shared bins, counts its 256 elements into them with ATOMS.ADD, then
// flushes every bin to the global histogram with one RED (global atomic add) per bin.
.kernel hist
.grid 64
.block 256
.shared 1024
.buffer data u32[16384] = random(7, 0, 256)
.buffer hist u32[256] = 0
        S2R R0, SR_TID.X ;                       // tid
        S2R R1, SR_CTAID.X ;                     // CTA index
        SHF.L.U32 R2, R0, 0x2, RZ ;              // R2 = tid * 4: this thread's bin
        STS [R2], RZ ;                           // zero the bin
        BAR.SYNC 0x0 ;
        IMAD R3, R1, c[0x0][0x0], R0 ;           // i = ctaid * ntid + tid
        IMAD.WIDE.U32 R4, R3, 0x4, c[0x0][data] ; // R4:R5 = &data[i]
        LDG.E R6, [R4.64] ;                      // v = data[i]
        SHF.L.U32 R6, R6, 0x2, RZ ;              // bin offset = v * 4
        MOV R7, 0x1 ;
        ATOMS.ADD RZ, [R6], R7 ;                 // shared bin += 1
        BAR.SYNC 0x0 ;
        LDS R8, [R2] ;                           // this CTA's count for bin tid
        IMAD.WIDE.U32 R10, R0, 0x4, c[0x0][hist] ; // &hist[tid]
        RED.E.ADD.STRONG.GPU [R10.64], R8 ;      // hist[tid] += count
        EXIT ;
.expect sum(hist) == 16384
.expect max(hist) < 16384
