// A surface access out of bounds under .TRAP traps (issue 11): thread t adds to pixel
// (t, 0) of an 8 x 1 surface, so lane 8 of warp 0 faults; the report names the surface (its
// header index, 0), the coordinates (8, 0) and the lane. Lanes 0..7 added first.
.kernel surf_trap
.grid 1
.block 32
.surface img 2d u32[8,1] = 0
        S2R R2, SR_TID.X ;
        MOV R3, RZ ;
        MOV R4, 0x1 ;
        SURED.D.2D.ADD.TRAP [R2], R4, 0x0, 0x58 ;
        EXIT ;
.expect trap surface_out_of_bounds
