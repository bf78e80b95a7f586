// Bench workload 11: the float flush CUDA code writes as atomicAdd(&out[threadIdx.x], x):
// 2^22 lanes (16,384 CTAs of 256) each add 1.0 to their thread's word of 256 floats
// (RED.E.ADD.F32.FTZ.RN, four adjacent words to one 16-byte CAS on the JIT). Every word ends
// at 16384.0, exact in any order of the adds.
.kernel flush_f32
.grid 16384
.block 256
.buffer out f32[256] = 0
        S2R R0, SR_TID.X ;
        MOV R2, 0x3f800000 ;
        IMAD.WIDE.U32 R4, R0, 0x4, c[0x0][out] ;
        RED.E.ADD.F32.FTZ.RN.STRONG.GPU [R4.64], R2 ;
        EXIT ;
.expect out == 16384
