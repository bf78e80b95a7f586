// Float flushes to adjacent words: atomicAdd(&out[threadIdx.x], v) on floats, which the JIT
// runs four lanes to one 16-byte compare-and-swap with the four float adds in vector code
// (src/jit/translate/simd/atomic.rs). Thread t first stores M = vals[t % 16] to its word, then
// adds b = vals[t / 16], so every pair of sixteen edge values meets: zeros of both signs,
// subnormals, the smallest normals and 1.5 times the smallest (their difference is subnormal),
// one, the largest finite values, infinities, NaNs. Three kernels, one for each way in (a
// function builds vector code for its first few memory regions only, translate/mod.rs's
// VECTOR_MEMORY_LOOPS), with the same sixteen values:
//   flush_global   ATOMG.E.ADD.F32.FTZ.RN on global memory: subnormal inputs and results
//                  flush to sign-preserving zero (PTX ISA, atom: "flushes subnormal inputs and
//                  results to sign-preserving zero on global memory")
//   flush_generic  RED.E.ADD.F32.FTZ.RN through a generic address in global memory: the same
//   flush_shared   that RED through a generic address in the CTA's shared window (S2R
//                  SR_SWINHI, as ptxas writes cvta.shared, into a register used again, so
//                  that the S2R is part of the vector region), copied out: no flush ("supports
//                  subnormal inputs and results and doesn't flush them to zero on shared
//                  memory")
// A NaN result is the canonical 0x7fffffff. tests/integration/programs.rs compares every word
// of the JIT's with the interpreter's; the lines below check a few against the rules:
// 1 + 1 = 2 (thread 0x77); the smallest subnormal plus itself: flushed to 0 on global memory,
// 2^-148 (0x2) in the shared window (thread 0x22); -0 + -0 = -0 everywhere (thread 0x11).
.kernel flush_global
.grid 1
.block 256
.buffer vals u32[16] = {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x80800000, 0x3f800000, 0x00c00000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0x00400000}
.buffer out u32[256] = 0
        S2R R0, SR_TID.X ;
        LOP3.LUT R1, R0, 0xf, RZ, 0xc0, !PT ;   // t % 16
        SHF.R.U32.HI R2, RZ, 0x4, R0 ;          // t / 16
        IMAD.WIDE.U32 R4, R1, 0x4, c[0x0][vals] ;
        LDG.E R6, [R4.64] ;                      // M
        IMAD.WIDE.U32 R4, R2, 0x4, c[0x0][vals] ;
        LDG.E R7, [R4.64] ;                      // b
        IMAD.WIDE.U32 R8, R0, 0x4, c[0x0][out] ;
        STG.E [R8.64], R6 ;
        IMAD.WIDE.U32 R8, R0, 0x4, c[0x0][out] ;
        ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, RZ, [R8.64], R7 ;
        EXIT ;
.expect out[119] == 0x40000000
.expect out[34] == 0
.expect out[17] == 0x80000000

.kernel flush_generic
.grid 1
.block 256
.buffer vals u32[16] = {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x80800000, 0x3f800000, 0x00c00000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0x00400000}
.buffer out u32[256] = 0
        S2R R0, SR_TID.X ;
        LOP3.LUT R1, R0, 0xf, RZ, 0xc0, !PT ;   // t % 16
        SHF.R.U32.HI R2, RZ, 0x4, R0 ;          // t / 16
        IMAD.WIDE.U32 R4, R1, 0x4, c[0x0][vals] ;
        LDG.E R6, [R4.64] ;                      // M
        IMAD.WIDE.U32 R4, R2, 0x4, c[0x0][vals] ;
        LDG.E R7, [R4.64] ;                      // b
        IMAD.WIDE.U32 R8, R0, 0x4, c[0x0][out] ;
        STG.E [R8.64], R6 ;
        IMAD.WIDE.U32 R8, R0, 0x4, c[0x0][out] ;
        RED.E.ADD.F32.FTZ.RN.STRONG.GPU [R8.64], R7 ;
        EXIT ;
.expect out[119] == 0x40000000
.expect out[34] == 0
.expect out[17] == 0x80000000

.kernel flush_shared
.grid 1
.block 256
.shared 1024
.buffer vals u32[16] = {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x80800000, 0x3f800000, 0x00c00000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0x00400000}
.buffer out u32[256] = 0
        S2R R0, SR_TID.X ;
        LOP3.LUT R1, R0, 0xf, RZ, 0xc0, !PT ;   // t % 16
        SHF.R.U32.HI R2, RZ, 0x4, R0 ;          // t / 16
        IMAD.WIDE.U32 R4, R1, 0x4, c[0x0][vals] ;
        LDG.E R6, [R4.64] ;                      // M
        IMAD.WIDE.U32 R4, R2, 0x4, c[0x0][vals] ;
        LDG.E R7, [R4.64] ;                      // b
        IMAD.SHL.U32 R10, R0, 0x4, RZ ;
        STS [R10], R6 ;
        S2R R11, SR_SWINHI ;
        IMAD.SHL.U32 R10, R0, 0x4, RZ ;
        RED.E.ADD.F32.FTZ.RN.STRONG.GPU [R10.64], R7 ;
        LDS R11, [R10] ;                         // R11 reused: the S2R runs in the region
        IMAD.WIDE.U32 R8, R0, 0x4, c[0x0][out] ;
        STG.E [R8.64], R11 ;
        EXIT ;
.expect out[119] == 0x40000000
.expect out[34] == 2
.expect out[17] == 0x80000000
