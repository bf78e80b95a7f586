// Per-thread words every CTA updates: the flush of per-block results that CUDA code writes as
// atomicAdd(&out[threadIdx.x], v). A warp's lanes name adjacent words, which the JIT's SIMD
// lanes update four at a time with one 16-byte compare-and-swap (src/jit/translate/simd/
// atomic.rs); `odd` is addressed one word further on, so no four lanes' words are 16-byte
// aligned there and each lane goes alone; the block's 102 threads leave its last warp a
// whole chunk and a partial one. 64 CTAs race on every word; with v = ctaid + 1:
//   sum[t]      RED.ADD v                              -> 1 + 2 + ... + 64 = 2080
//   odd[t + 1]  RED.ADD v                              -> 2080 (odd[0] untouched)
//   top[t]      ATOMG.MAX.S32 of ctaid - 32 from INT_MIN -> 31
//   ring[t]     ATOMG.INC bound 9, 64 times from 0     -> 64 mod 10 = 4
.kernel flush_words
.grid 64
.block 102
.buffer sum u32[102] = 0
.buffer odd u32[103] = 0
.buffer top u32[102] = 0x80000000
.buffer ring u32[102] = 0
        S2R R0, SR_TID.X ;
        S2R R1, SR_CTAID.X ;
        IADD3 R2, R1, 0x1, RZ ;                  // v = ctaid + 1
        IMAD.WIDE.U32 R4, R0, 0x4, c[0x0][sum] ;
        RED.E.ADD.STRONG.GPU [R4.64], R2 ;
        IMAD.WIDE.U32 R6, R0, 0x4, c[0x0][odd] ;
        RED.E.ADD.STRONG.GPU [R6.64+0x4], R2 ;
        IADD3 R3, R1, -0x20, RZ ;                // ctaid - 32
        IMAD.WIDE.U32 R8, R0, 0x4, c[0x0][top] ;
        ATOMG.E.MAX.S32.STRONG.GPU PT, RZ, [R8.64], R3 ;
        MOV R10, 0x9 ;
        IMAD.WIDE.U32 R12, R0, 0x4, c[0x0][ring] ;
        ATOMG.E.INC.STRONG.GPU PT, R14, [R12.64], R10 ;
        EXIT ;
.expect sum == 2080
.expect odd[0] == 0
.expect sum(odd) == 212160
.expect top == 31
.expect ring == 4
