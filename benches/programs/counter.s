// Bench workload 1: 2^22 lanes each add 1 to one global word.
.kernel counter
.grid 16384
.block 256
.buffer c u32[1] = 0
        MOV R2, c[0x0][c] ;
        MOV R3, c[0x0][c+0x4] ;
        MOV R4, 0x1 ;
        RED.E.ADD.STRONG.GPU [R2.64], R4 ;
        EXIT ;
.expect c[0] == 4194304
