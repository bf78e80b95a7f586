// The 64-bit atomicMin CAS loop exactly as 000_6d05a8552870c0ae.txt writes it:
//   uint64_t atomicMin(uint64_t *address, uint64_t val) {
//     uint64_t ret = *address;
//     while (val < ret) { uint64_t old = ret;
//       if ((ret = atomicCAS64(address, old, val)) == old) break; }
//     return ret; }
// 256 threads fold 256 seeded random u64 values into one shared word with ATOMS.CAS.64
// (Rb = R4 is Reg4-aligned, Rc = Rb + 2 = R6, per the document's register rule).
// The expected minimum is that of random(11)'s first 256 SplitMix64 values (docs/program-format.md).
.kernel min64
.grid 1
.block 256
.shared 8
.buffer vals u64[256] = random(11)
.buffer out u64[1] = 0
        S2R R0, SR_TID.X ;
        ISETP.NE.AND P0, PT, R0, RZ, PT ;
        MOV R10, 0xffffffff ;
        MOV R11, 0xffffffff ;
        @!P0 STS.64 [0x0], R10 ;                 // *address = UINT64_MAX
        BAR.SYNC 0x0 ;
        IMAD.WIDE.U32 R12, R0, 0x8, c[0x0][vals] ;
        LDG.E.64 R6, [R12.64] ;                  // val (R6:R7, the swap value)
        LDS.64 R2, [0x0] ;                       // ret = *address
loop:
        ISETP.LT.U32.AND P1, PT, R6, R2, PT ;    // val.lo < ret.lo
        ISETP.EQ.U32.AND P1, PT, R7, R3, P1 ;    // ... and val.hi == ret.hi
        ISETP.LT.U32.OR P1, PT, R7, R3, P1 ;     // ... or val.hi < ret.hi: val < ret
        @!P1 BRA done ;
        MOV R4, R2 ;                             // old = ret (R4:R5, the compare value)
        MOV R5, R3 ;
        ATOMS.CAS.64 R2, [0x0], R4, R6 ;         // ret = atomicCAS64(address, old, val)
        ISETP.NE.U32.AND P2, PT, R2, R4, PT ;
        ISETP.NE.U32.OR P2, PT, R3, R5, P2 ;     // ret != old: somebody else won, retry
        @P2 BRA loop ;
done:
        BAR.SYNC 0x0 ;
        @P0 EXIT ;
        LDS.64 R2, [0x0] ;
        MOV R14, c[0x0][out] ;
        MOV R15, c[0x0][out+0x4] ;
        STG.E.64 [R14.64], R2 ;
        EXIT ;
.expect out[0] == 8886624613077868
