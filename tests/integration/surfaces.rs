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
    let report = p.finish(p.launch()).expect("runs");
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
