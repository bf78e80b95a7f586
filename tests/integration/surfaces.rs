//! Surfaces (issue 11): declarations, their memory in the declared layout, and their contents
//! seen in logical order.

use super::*;

/// Loads `src` (a SASS program of one kernel `k`), prepares it and returns the prepared
/// launch's global memory bytes at `name`'s allocation together with the report of a run.
fn surface_bytes(src: &str, name: &str, bytes: usize) -> (Vec<u8>, RunReport) {
    let m = load(&engine(Backend::Interp, 1, true), "surfaces.s", src);
    let p = m
        .prepare("k", &Overrides::default(), Backend::Interp, true)
        .expect("prepares");
    let address = p
        .buffers()
        .into_iter()
        .find(|b| b.name == name)
        .expect("the surface is a buffer")
        .address;
    let mut raw = vec![0u8; bytes];
    p.global().read(address, &mut raw);
    let outcome = p.launch();
    let copied = p.finish(outcome.clone()).expect("runs");
    // The report of the launch's last run views the arena instead of copying it (surfaces
    // excepted): the same contents either way.
    let report = p.into_report(outcome).expect("runs");
    assert_eq!(report.buffers, copied.buffers);
    (raw, report)
}

/// The byte offset of (x, y) in one GOB, bit by bit from the Tegra X1 TRM's block-linear
/// order (xb0..3, y0, xb4, y1, y2, xb5): an independent model of `ir::surface`.
fn gob_offset(xb: usize, y: usize) -> usize {
    let bits = [
        (xb, 0),
        (xb, 1),
        (xb, 2),
        (xb, 3),
        (y, 0),
        (xb, 4),
        (y, 1),
        (y, 2),
        (xb, 5),
    ];
    bits.iter()
        .enumerate()
        .map(|(i, &(v, b))| ((v >> b) & 1) << i)
        .sum()
}

#[test]
fn a_block_linear_surface_lies_in_memory_gob_by_gob() {
    // Two GOBs across (128 x 8 bytes): element (x, y) of a u8 surface holds (y * 128 + x) % 256
    // (iota), at GOB x / 64, offset gob_offset(x % 64, y) in it.
    let src = ".kernel k\n.block 1\n.surface img 2d u8[128,8] blocklinear(1,1) = iota
.expect img[129] == 129\nEXIT ;";
    let (raw, report) = surface_bytes(src, "img", 1024);
    assert!(report.passed(), "{report:?}");
    for y in 0..8 {
        for x in 0..128 {
            let at = (x / 64) * 512 + gob_offset(x % 64, y);
            assert_eq!(raw[at], ((y * 128 + x) % 256) as u8, "({x},{y})");
        }
    }
}

#[test]
fn a_pitch_surface_has_rows_at_its_pitch_and_reads_back_in_logical_order() {
    // 3 x 2 elements of u32 with a 16-byte pitch: row 1 starts at byte 16.
    let src = ".kernel k\n.block 1\n.surface img 2d u32[3,2] pitch(16) = {1,2,3,4,5,6}
.expect img == {1,2,3,4,5,6}\nEXIT ;";
    let (raw, report) = surface_bytes(src, "img", 32);
    assert!(report.passed(), "{report:?}");
    let word = |at: usize| u32::from_le_bytes(raw[at..at + 4].try_into().unwrap());
    assert_eq!(
        [word(0), word(4), word(8), word(16), word(20), word(24)],
        [1, 2, 3, 4, 5, 6]
    );
    assert_eq!(word(12), 0);
}

#[test]
fn surface_declarations_are_checked() {
    let bad = [
        (".surface s 4d u32[4] = 0", "unknown surface dimension"),
        (".surface s 2d u32[4] = 0", "has 2 extent(s), not 1"),
        (".surface s 2d u32[4,0] = 0", "between 1 and"),
        (".surface s 2d u32[4,4] layers 2 = 0", "has no layers"),
        (".surface s 2d_array u32[4,4] = 0", "needs `layers N`"),
        (
            ".surface s 1d_array u32[4] layers 0 = 0",
            "between 1 and 65536",
        ),
        (
            ".surface s 2d u32[4,4] blocklinear(3,1) = 0",
            "1, 2, 4, 8, 16 or 32",
        ),
        (
            ".surface s 2d u32[4,4] pitch(8) = 0",
            "at least the row's 16 bytes",
        ),
        (
            ".surface s 2d u32[4,4] pitch(18) = 0",
            "multiple of the element size",
        ),
        (
            ".surface s 2d u32[4,4] sparse 1 = 0",
            "page 1 is past its end",
        ),
        (".surface s 2d u32[2,2] = {1,2,3,4,5}", "only 4 elements"),
        (".surface s 2d u32[4,4] pitch blocklinear(1,1) = 0", "twice"),
        (".surface s 2d u32[4,4] shiny = 0", "unexpected `shiny`"),
        (
            ".surface s 3d u8[2147483647,2147483647,2147483647] = 0",
            "more than 1099511627776 bytes",
        ),
        (
            ".surface s 2d_array u8[2147483647,2147483647] layers 65536 blocklinear(32,32) = 0",
            "more than 1099511627776 bytes",
        ),
    ];
    // A block-linear row may exceed 4 GiB (only a pitch is a 32-bit byte count).
    let wide = ".kernel k\n.surface s 1d u64[2147483647] blocklinear(1,1) = 0\nEXIT ;";
    atomjit::front::parse("s.s", wide, atomjit::ir::Dialect::Sass).expect("parses");
    for (decl, want) in bad {
        let src = format!(".kernel k\n{decl}\nEXIT ;");
        let e = atomjit::front::parse("s.s", &src, atomjit::ir::Dialect::Sass).expect_err(decl);
        assert!(e.to_string().contains(want), "{decl}: {e}");
    }
}

#[test]
fn a_surface_takes_an_initialiser_override_like_a_buffer() {
    let src = ".kernel k\n.block 1\n.surface img 2d u32[4,2] blocklinear(1,1) = 0\nEXIT ;";
    let m = load(&engine(Backend::Interp, 1, true), "surfaces.s", src);
    let o = Overrides {
        buffers: vec![("img".to_string(), atomjit::ir::Init::Iota)],
        ..Overrides::default()
    };
    let r = m.run("k", &o).expect("runs");
    let img = r.buffer("img").unwrap().as_u32().unwrap();
    assert_eq!(img, (0..8).collect::<Vec<u32>>());
}

/// Runs kernel `k` of `src` on `backend` (one thread, deterministic).
fn run_on(backend: Backend, src: &str) -> RunReport {
    let m = load(&engine(backend, 1, true), "surfaces.s", src);
    m.run("k", &Overrides::default()).expect("runs")
}

#[test]
fn suld_and_sust_move_elements_through_both_layouts() {
    // Copy a block-linear 2-D surface into a pitch one element by element (SULD, SUST), x in
    // bytes; thread t handles (t & 7, t >> 3) of an 8 x 4 surface of u16 (2-byte elements).
    let src = ".kernel k\n.block 32
.surface a 2d u16[8,4] blocklinear(2,1) = iota
.surface b 2d u16[8,4] pitch(32) = 0
        S2R R0, SR_TID.X ;
        LOP3.LUT R2, R0, 0x7, RZ, 0xc0, !PT ;
        IMAD.SHL.U32 R2, R2, 0x2, RZ ;
        SHF.R.U32.HI R3, RZ, 0x3, R0 ;
        SULD.D.BA.2D.U16.TRAP R4, [R2], 0x0, 0x58 ;
        IADD3 R4, R4, 0x100, RZ ;
        SUST.D.BA.2D.U16.TRAP [R2], R4, 0x0, 0x5a ;
        EXIT ;
.expect b[0] == 256
.expect b[31] == 287";
    for backend in backends() {
        let r = run_on(backend, src);
        assert!(r.passed(), "{backend:?}: {r:?}");
        let b = &r.buffer("b").unwrap().bytes;
        let b: Vec<u16> = b
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect();
        assert_eq!(b, (0..32).map(|i| 256 + i).collect::<Vec<u16>>());
    }
}

#[test]
fn a_signed_suld_sign_extends_and_a_dropped_load_reads_zero() {
    // s8 elements: -3 sign-extends to 0xfffffffd; x = 4 is past the 4-wide row (.IGN): 0.
    let src = ".kernel k\n.block 2
.surface a 1d s8[4] = {-3, 1, 2, 3}
.buffer out u32[2] = 7
        S2R R0, SR_TID.X ;
        IMAD.SHL.U32 R2, R0, 0x4, RZ ;
        SULD.D.1D.S8.IGN R4, [R2], 0x0, 0x58 ;
        IMAD.WIDE.U32 R6, R0, 0x4, c[0x0][out] ;
        STG.E [R6.64], R4 ;
        EXIT ;
.expect out == {4294967293, 0}";
    for backend in backends() {
        assert!(run_on(backend, src).passed(), "{backend:?}");
    }
}

#[test]
fn sparse_pages_set_ps_and_disabled_surfaces_do_nothing() {
    // 128 x 256 u32 (pitch 512): rows 128.. are page 1, declared sparse. Thread t adds 1 at
    // (0, 120 + 4t): threads 2.. land on the sparse page: no add, Ps set, Rd 0. The second
    // surface is disabled: its SUATOM returns 0 and writes nothing.
    let src = ".kernel k\n.block 8
.surface big 2d u32[128,256] pitch(512) sparse 1 = 5
.surface off 1d u32[4] disabled = 9
.buffer out u32[8] = 0
.buffer ps u32[8] = 0
        S2R R0, SR_TID.X ;
        MOV R4, RZ ;
        IMAD R5, R0, 0x4, 0x78 ;
        MOV R8, 0x1 ;
        MOV R12, 0x0 ;
        SUATOM.D.2D.ADD.TRAP P1, R9, [R4], R8, R12 ;
        MOV R13, 0x1 ;
        SUATOM.D.1D.EXCH.TRAP R10, [R4], R8, R13 ;
        IADD3 R9, R9, R10, RZ ;
        SEL R11, RZ, 0x1, !P1 ;
        IMAD.WIDE.U32 R6, R0, 0x4, c[0x0][out] ;
        STG.E [R6.64], R9 ;
        IMAD.WIDE.U32 R6, R0, 0x4, c[0x0][ps] ;
        STG.E [R6.64], R11 ;
        EXIT ;
.expect out == {5, 5, 0, 0, 0, 0, 0, 0}
.expect ps == {0, 0, 1, 1, 1, 1, 1, 1}
.expect off == 9";
    for backend in backends() {
        let r = run_on(backend, src);
        assert!(r.passed(), "{backend:?}: {:?}", r.expectations);
        // Rows 120 and 124 gained 1; the sparse rows are untouched.
        let big = r.buffer("big").unwrap().as_u32().unwrap();
        assert_eq!((big[120 * 128], big[124 * 128], big[128 * 128]), (6, 6, 5));
        assert_eq!(
            r.launch.stats.atomics[atomjit::ir::AtomicOp::Add.index()],
            2
        );
    }
}

#[test]
fn surface_traps_name_the_surface_coordinates_and_lane_on_both_backends() {
    // An invalid handle from a register (header 3 of a pool of 1), a misaligned byte x, and a
    // mismatched access size: each a trap with its reason.
    let cases = [
        (
            "MOV R12, 0x3 ;\n SUATOM.D.2D.ADD.TRAP R9, [R4], R8, R12 ;",
            "InvalidSurface",
            3,
        ),
        (
            "MOV R4, 0x6 ;\n SURED.D.BA.2D.ADD.IGN [R4], R8, 0x0, 0x58 ;",
            "MisalignedAddress",
            0,
        ),
        (
            "SURED.D.2D.ADD.U64.NEAR [R4], R8, 0x0, 0x58 ;",
            "SurfaceMismatch",
            0,
        ),
    ];
    for (code, reason, index) in cases {
        let src = format!(
            ".kernel k\n.block 4\n.surface s 2d u32[4,4] = 0
        S2R R4, SR_TID.X ;
        MOV R5, RZ ;
        MOV R8, 0x1 ;
        MOV R9, RZ ;
        {code}
        EXIT ;"
        );
        for backend in backends() {
            let r = run_on(backend, &src);
            let Some(atomjit::engine::Failure::Trap(t)) = &r.failure else {
                panic!("{code} on {backend:?}: {:?}", r.failure)
            };
            assert_eq!(format!("{:?}", t.reason), reason, "{code}");
            assert_eq!(t.lane, 0);
            let s = t.surface.expect("names the surface");
            assert_eq!(s.index, index);
            let json = serde_json::to_value(r.json(&[])).unwrap();
            assert_eq!(
                json["failure"]["trap"]["surface"]["index"],
                serde_json::json!(index),
                "{json}"
            );
        }
    }
}

#[test]
fn expect_trap_fails_when_the_launch_does_not_trap_or_traps_otherwise() {
    let body = "S2R R2, SR_TID.X ;\n MOV R3, RZ ;\n MOV R4, 0x1 ;
        SURED.D.2D.ADD.TRAP [R2], R4, 0x0, 0x58 ;\n EXIT ;";
    // 4 threads on an 8-wide surface: no trap.
    let quiet = format!(
        ".kernel k\n.block 4\n.surface s 2d u32[8,1] = 0\n{body}\n.expect trap surface_out_of_bounds"
    );
    // 32 threads: a trap, but not the one expected.
    let other = format!(
        ".kernel k\n.block 32\n.surface s 2d u32[8,1] = 0\n{body}\n.expect trap invalid_surface"
    );
    for backend in backends() {
        let r = run_on(backend, &quiet);
        assert!(!r.passed() && r.failure.is_none());
        assert_eq!(r.status(), atomjit::engine::ExitStatus::Failed);
        assert!(r.expectations[0].actual.contains("without a trap"));
        let r = run_on(backend, &other);
        assert!(!r.passed() && !r.expected_trap);
        assert_eq!(r.status(), atomjit::engine::ExitStatus::Trap);
    }
    // An unknown reason is a parse error at the reason.
    let bad = ".kernel k\n.block 1\n.expect trap out_of_luck\nEXIT ;";
    let e = atomjit::front::parse("s.s", bad, atomjit::ir::Dialect::Sass).unwrap_err();
    assert!(
        e.to_string().contains("`out_of_luck` is not a trap reason"),
        "{e}"
    );
    assert_eq!((e.span.line, e.span.col), (3, 14));
}

#[test]
fn the_cli_reports_an_expected_trap_as_a_pass() {
    let path = format!("{}/programs/sass/surf_trap.s", env!("CARGO_MANIFEST_DIR"));
    for backend in ["interp", "jit"] {
        let (code, out, _) = atomjit(&["run", "--backend", backend, &path]);
        assert_eq!(code, 0, "{out}");
        assert!(
            out.contains("expect trap surface_out_of_bounds: ok"),
            "{out}"
        );
        assert!(out.contains("at surface 0, coordinates (8, 0)"), "{out}");
    }
    // The command line's form: the same trap passes, another reason fails with the trap's
    // code, and a launch that does not trap fails its expectation.
    let (code, out, _) = atomjit(&["run", &path, "--expect", "trap surface_out_of_bounds"]);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = atomjit(&["run", &path, "--expect", "trap misaligned_address"]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("expect trap misaligned_address: FAILED"),
        "{out}"
    );
    let hist = format!("{}/programs/sass/surf_hist2d.s", env!("CARGO_MANIFEST_DIR"));
    let (code, out, _) = atomjit(&["run", &hist, "--expect", "trap invalid_surface"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the launch completed without a trap"), "{out}");
    let (code, _, err) = atomjit(&["run", &path, "--expect", "trap bogus"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`bogus` is not a trap reason"), "{err}");
    // A launch that traps has nothing to measure, even when the trap is the expected one.
    let (code, _, err) = atomjit(&["bench", &path]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("a launch that traps is not benchmarked"),
        "{err}"
    );
}

#[test]
fn suatom_ops_follow_the_spec_table_at_their_edges() {
    // One thread, each op of `004_16d4664d52412e92.txt` at the edges of its row:
    // INC  "M = (M >= Rb)? 0 : (M + 1)"       Rb = 5: 5 -> 0, 4 -> 5
    // DEC  "M = (M == 0 || M > Rb)? Rb : M - 1" Rb = 5: 0 -> 5, 9 -> 5, 3 -> 2
    // ADD.F32.FTZ.RN flushes a subnormal M (bits 1) and a subnormal Rb (bits 0x00400000): the
    //   smallest normal M (0x00800000) stays as it is (0x00c00000 had Rb not been flushed)
    // MAX.SD32 is signed on an s32 surface (max(-1, 1) = 1), unsigned on a u32 one
    // CAS "if (M == Rb) M = Rb+1" with the compare in R24 and the swap in R25
    // Each old value (Rd) is stored to `old` in order.
    let src = ".kernel k\n.block 1
.surface inc 1d u32[2] = {5, 4}
.surface dec 1d u32[3] = {0, 9, 3}
.surface f 1d u32[2] = {1, 0x00800000}
.surface s 1d s32[1] = -1
.surface u 1d u32[1] = 0xffffffff
.surface cas 1d u32[2] = {7, 7}
.buffer old u32[12] = 0x55
        MOV R2, RZ ;
        MOV R3, 0x1 ;
        MOV R4, 0x2 ;
        MOV R20, 0x5 ;
        MOV R21, RZ ;
        MOV R22, 0x400000 ;
        MOV R23, 0x1 ;
        MOV R24, 0x7 ;
        MOV R25, 0x9 ;
        MOV R26, 0x8 ;
        MOV R27, 0x9 ;
        MOV R30, c[0x0][old] ;
        MOV R31, c[0x0][old+0x4] ;
        SUATOM.D.1D.INC R10, [R2], R20, 0x0, 0x58 ;
        STG.E [R30.64], R10 ;
        SUATOM.D.1D.INC R10, [R3], R20, 0x0, 0x58 ;
        STG.E [R30.64+0x4], R10 ;
        SUATOM.D.1D.DEC R10, [R2], R20, 0x0, 0x5a ;
        STG.E [R30.64+0x8], R10 ;
        SUATOM.D.1D.DEC R10, [R3], R20, 0x0, 0x5a ;
        STG.E [R30.64+0xc], R10 ;
        SUATOM.D.1D.DEC R10, [R4], R20, 0x0, 0x5a ;
        STG.E [R30.64+0x10], R10 ;
        SUATOM.D.1D.ADD.F32.FTZ.RN R10, [R2], R21, 0x0, 0x5c ;
        STG.E [R30.64+0x14], R10 ;
        SUATOM.D.1D.ADD.F32.FTZ.RN R10, [R3], R22, 0x0, 0x5c ;
        STG.E [R30.64+0x18], R10 ;
        SUATOM.D.1D.MAX.SD32 R10, [R2], R23, 0x0, 0x5e ;
        STG.E [R30.64+0x1c], R10 ;
        SUATOM.D.1D.MAX.SD32 R10, [R2], R23, 0x0, 0x60 ;
        STG.E [R30.64+0x20], R10 ;
        SUATOM.D.1D.CAS R10, [R2], R24, 0x0, 0x62 ;
        STG.E [R30.64+0x24], R10 ;
        SUATOM.D.1D.CAS R10, [R3], R26, 0x0, 0x62 ;
        STG.E [R30.64+0x28], R10 ;
        EXIT ;
.expect inc == {0, 5}
.expect dec == {5, 5, 2}
.expect f == {0, 0x00800000}
.expect s == {1}
.expect u == {0xffffffff}
.expect cas == {9, 7}
.expect old == {5, 4, 0, 9, 3, 1, 0x00800000, 0xffffffff, 0xffffffff, 7, 7, 0x55}";
    for backend in backends() {
        let r = run_on(backend, src);
        assert!(r.passed(), "{backend:?}: {:?}", r.expectations);
    }
}

#[test]
fn a_surface_address_parameter_is_the_surfaces_first_byte() {
    // Thread 0 stores through the address (plain memory) into element (1, 0) of a pitch
    // surface, byte 4; the surface sees it at (1, 0).
    let src = ".kernel k\n.block 1\n.surface img 2d u32[4,2] = 0\n.param base u64 = &img\n\
               MOV R0, 0x2a ;\nIMAD.WIDE.U32 R2, RZ, 0x4, c[0x0][base] ;\n\
               STG.E [R2.64+0x4], R0 ;\nEXIT ;";
    for backend in [Backend::Interp, Backend::Jit] {
        let r = run_on(backend, src);
        let img = r.buffer("img").unwrap().as_u32().unwrap();
        assert_eq!(img, vec![0, 42, 0, 0, 0, 0, 0, 0], "{backend:?}");
    }
}

#[test]
fn surface_address_parameters_are_checked() {
    let bad = [
        (
            ".param base u64 = &nothing\n.surface img 1d u32[4] = 0",
            "the kernel declares no surface `nothing`",
        ),
        (
            ".buffer b u32[4] = 0\n.param base u64 = &b",
            "`b` is not a surface",
        ),
        (
            ".surface img 1d u32[4] = 0\n.param base u32 = &img",
            "declare `base` as u64",
        ),
        (
            ".surface img 1d u32[4] = 0\n.param base u64 = &",
            "a surface name",
        ),
    ];
    for (decls, want) in bad {
        let src = format!(".kernel k\n{decls}\nEXIT ;");
        let e = atomjit::front::parse("s.s", &src, atomjit::ir::Dialect::Sass).expect_err(decls);
        assert!(e.to_string().contains(want), "{decls}: {e}");
    }
    // Declared after the parameter is fine: the check sees the whole kernel.
    let later = ".kernel k\n.param base u64 = &img\n.surface img 1d u32[4] = 0\nEXIT ;";
    atomjit::front::parse("s.s", later, atomjit::ir::Dialect::Sass).expect("parses");
    // The command line cannot set it, nor bind one.
    let m = load(
        &engine(Backend::Interp, 1, true),
        "s.s",
        ".kernel k\n.surface img 1d u32[4] = 0\n.param base u64 = &img\nEXIT ;",
    );
    let args = atomjit::engine::OverrideArgs {
        sets: vec!["base=0".to_string()],
        ..Default::default()
    };
    let e = m
        .overrides("k", &args)
        .expect_err("an address is not settable");
    assert!(e.to_string().contains("address of surface `img`"), "{e}");
    let e = atomjit::front::program::parse_param_decl("base u64 = &img").expect_err("CLI");
    assert!(e.contains("not on the command line"), "{e}");
}

#[test]
fn a_ptx_launch_binds_a_surface_address_to_a_u64_parameter_only() {
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n\
               .visible .entry k(.param .u64 s, .param .u32 n)\n{\n\tret;\n}\n";
    let mut launch = atomjit::front::LaunchText::new();
    launch.push(
        "k.launch",
        ".kernel k\n.surface img 1d u32[4] = 0\n.param base u64 = &img\n",
    );
    let e = engine(Backend::Interp, 1, true)
        .load_with_launch("k.ptx", ptx, &launch)
        .err()
        .expect("a u64 address cannot bind to a .u32 parameter");
    assert!(
        e.to_string()
            .contains("surface address `base` binds to parameter n .u32"),
        "{e}"
    );
}

#[test]
fn ptx_surface_data_may_be_immediates_packed_into_one_element() {
    // ptxas 12.9 assembles both lines (immediate data, a literal coordinate in braces).
    let ptx = ".version 8.1\n.target sm_80\n.address_size 64\n\
               .visible .entry k(.param .u64 s)\n{\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<2>;\n\
               \tld.param.u64 %rd1, [s];\n\tmov.u32 %r1, %tid.x;\n\tshl.b32 %r2, %r1, 2;\n\
               \tsured.b.max.1d.u32.trap [%rd1, {%r2}], 7;\n\
               \tsust.b.1d.v2.b16.trap [%rd1, {4}], {%r1, 0xffff};\n\tret;\n}\n";
    let mut launch = atomjit::front::LaunchText::new();
    launch.push(
        "k.launch",
        ".kernel k\n.block 1\n.surface s 1d u32[2] = 5\n.expect s == {7, 0xffff0000}\n",
    );
    for backend in [Backend::Interp, Backend::Jit] {
        let m = engine(backend, 1, true)
            .load_with_launch("k.ptx", ptx, &launch)
            .unwrap_or_else(|e| panic!("{e}"));
        let r = m.run("k", &Overrides::default()).expect("runs");
        assert!(r.passed(), "{backend:?}: {:?}", r.expectations);
    }
}
