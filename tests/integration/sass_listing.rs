//! Whole SASS listings from NVIDIA's tools (`tests/fixtures/listing/`, made by the commands in
//! its README): parsed in every format, launched like PTX modules, the constant bank laid out
//! per architecture, and kernels atomjit cannot run reported whole without stopping the others.

use super::*;
use atomjit::front::LaunchText;
use atomjit::ir::{CbankLayout, Dialect};

fn fixture(name: &str) -> String {
    format!(
        "{}/tests/fixtures/listing/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn read(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

/// The listing `name` parsed with `launch` applied (the front-end alone: the sm_80/sm_90
/// fixtures' kernels cannot all run yet, and an engine refuses to load a listing to run when
/// none can).
fn with_launch(
    name: &str,
    launch: &str,
) -> Result<atomjit::ir::Program, atomjit::front::ParseError> {
    let mut l = LaunchText::new();
    l.push("test.launch", launch);
    atomjit::front::parse_with_launch(&fixture(name), &read(name), Dialect::Sass, &l)
        .map(|launched| launched.program)
}

const RUN_LAUNCH: &str =
    ".kernel calls\n.block 32\n.buffer out u32[32] = 0\n.param v u32 = 5\n.expect out == 17\n";

#[test]
fn every_format_and_architecture_parses_into_its_entries() {
    for arch in [80, 86, 90] {
        let mut files = vec![
            format!("listing_sm{arch}.cuobjdump.sass"),
            format!("listing_sm{arch}.nvdisasm-c.sass"),
        ];
        if arch == 90 {
            files.push("listing_sm90.nvdisasm.sass".into());
        }
        for f in files {
            let m = load(&engine(Backend::Interp, 1, true), &fixture(&f), &read(&f));
            let mut names = m.kernel_names();
            names.sort();
            // listing.cu's three `extern "C" __global__` functions; `bump` is not an entry.
            assert_eq!(names, ["calls", "hist16", "sum_ids"], "{f}");
            for k in &m.program().kernels {
                let want = if arch == 90 { 0x210 } else { 0x160 };
                assert_eq!(k.launch.layout.param_base(), want, "{f} {}", k.name);
                assert_eq!(k.launch.layout.sm(), arch, "{f}");
            }
        }
    }
}

#[test]
fn plain_nvdisasm_gives_the_static_shared_size_with_the_reserved_kilobyte() {
    let f = "listing_sm90.nvdisasm.sass";
    let m = load(&engine(Backend::Interp, 1, true), &fixture(f), &read(f));
    let (k, _) = m.kernel("hist16").unwrap();
    // `__shared__ unsigned h[16]` (64 bytes) after sm_90's reserved 1 KiB.
    assert_eq!(k.launch.static_shared, 1024 + 64);
    assert_eq!(k.launch.shared_bytes, 1024 + 64);
    assert_eq!(k.launch.dynamic_shared(), 0);
    // A launch that says otherwise is refused.
    let e = with_launch(f, ".kernel hist16\n.static_shared 128\n")
        .err()
        .unwrap();
    assert!(
        e.to_string().contains("64 bytes of static shared memory"),
        "{e}"
    );
    let p = with_launch(
        f,
        ".kernel hist16\n.static_shared 64\n.shared 32\n.buffer data u32[16] = 0\n.buffer hist u32[16] = 0\n",
    )
    .unwrap();
    let k = p.kernel("hist16").unwrap();
    assert_eq!(
        (k.launch.shared_bytes, k.launch.dynamic_shared()),
        (1024 + 64 + 32, 32)
    );
}

#[test]
fn a_listing_runs_with_its_subroutine_inlined_in_both_formats_and_backends() {
    for f in ["run_sm75.cuobjdump.sass", "run_sm75.nvdisasm-c.sass"] {
        for backend in Backend::ALL {
            let mut l = LaunchText::new();
            l.push("run.launch", RUN_LAUNCH);
            let m = engine(backend, 2, false)
                .load_with_launch(&fixture(f), &read(f), &l)
                .unwrap();
            let r = m.run("calls", &Overrides::default()).unwrap();
            assert!(
                r.passed(),
                "{f} {backend}: {:?} {:?}",
                r.failure,
                r.expectations
            );
            // Two atomic adds per thread, one per call of `bump`.
            assert_eq!(r.launch.stats.total_atomics(), 64, "{f}");
        }
    }
}

#[test]
fn the_cli_runs_a_listing_kernel_and_refuses_the_broken_one_by_name() {
    let dir = temp_file("run_sm75.cuobjdump.sass", &read("run_sm75.cuobjdump.sass"));
    let launch = std::path::Path::new(&dir).with_extension("launch");
    std::fs::write(&launch, RUN_LAUNCH).unwrap();
    let (code, out, err) = atomjit(&["run", &dir, "--kernel", "calls"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("expect out == 17: ok"), "{out}");
    // Lines on the command line bind the parameters in order, like a PTX entry's.
    let (code, out, err) = atomjit(&[
        "run",
        &dir,
        "--kernel",
        "calls",
        "--launch",
        "/dev/null",
        "--block",
        "8",
        "--buffer",
        "o u32[8] = 1",
        "--param",
        "v u32 = 0",
        "--expect",
        "o == 3",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    // `shared_count` (thread 0 adds the shared count of 32 arrivals to out[0]) runs too.
    let (code, out, err) = atomjit(&[
        "run",
        &dir,
        "--kernel",
        "shared_count",
        "--launch",
        "/dev/null",
        "--block",
        "32",
        "--shared",
        "4",
        "--buffer",
        "out u32[1] = 0",
        "--expect",
        "out[0] == 32",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    // A kernel with a form atomjit cannot run is refused by name, with the form.
    let text = read("run_sm75.cuobjdump.sass").replacen("LDS.U R0, [RZ]", "MUFU.RCP R0, R1", 1);
    let broken = temp_file("broken_sm75.cuobjdump.sass", &text);
    let (code, _, err) = atomjit(&["run", &broken, "--kernel", "shared_count"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("kernel `shared_count` cannot run"), "{err}");
    assert!(err.contains("MUFU.RCP"), "{err}");
}

#[test]
fn check_reports_every_unsupported_form_with_counts() {
    // The sm_80 listing with two forms atomjit does not run put into two kernels: `MUFU`
    // (undocumented approximations) twice in `calls`, a 128-bit load once in `sum_ids`.
    let text = read("listing_sm80.nvdisasm-c.sass");
    let mut edited = String::new();
    let mut injected = (0, 0);
    let mut function = "";
    for line in text.lines() {
        if let Some(name) = line
            .strip_prefix(".text.")
            .and_then(|l| l.strip_suffix(':'))
        {
            function = name;
        }
        if line.contains("S2R ") && function == "calls" && injected.0 < 2 {
            edited.push_str(&line.replace("S2R", "MUFU.RCP").replace("SR_TID.X", "R0"));
            injected.0 += 1;
        } else if line.contains("S2R ") && function == "sum_ids" && injected.1 < 1 {
            // A 256-bit load (sm_100), which atomjit does not read.
            edited.push_str("        /*0000*/                   LDG.E.256 R4, [R2.64] ;");
            injected.1 += 1;
        } else {
            edited.push_str(line);
        }
        edited.push('\n');
    }
    assert!(injected.0 >= 1 && injected.1 == 1, "{injected:?}");
    let f = temp_file("listing_sm80_broken.nvdisasm-c.sass", &edited);
    let (code, out, err) = atomjit(&["check", &f]);
    assert_eq!(code, 2, "{out}{err}");
    // Every broken kernel is reported, not only the first; the good one still checks.
    let calls = out.lines().find(|l| l.contains("kernel `calls`")).unwrap();
    assert!(calls.contains("cannot run"), "{out}");
    assert!(
        calls.contains(&format!("MUFU.RCP ×{}", injected.0)),
        "{calls}"
    );
    let sum = out
        .lines()
        .find(|l| l.contains("kernel `sum_ids`"))
        .unwrap();
    assert!(sum.contains("LDG.E.256 ×1"), "{sum}");
    assert!(out.contains("kernel `hist16`: "), "{out}");
    assert!(!out.contains("kernel `hist16` cannot run"), "{out}");
}

#[test]
fn parameters_bind_from_the_architectures_base() {
    let p = with_launch(
        "listing_sm90.cuobjdump.sass",
        ".kernel hist16\n.buffer data u32[64] = 0\n.buffer hist u32[16] = 0\n",
    )
    .unwrap();
    let k = p.kernel("hist16").unwrap();
    let offsets: Vec<u32> = k.launch.params.iter().map(|p| p.cbank_offset).collect();
    assert_eq!(offsets, [0x210, 0x218]);
    assert_eq!(k.launch.layout, CbankLayout::SM90);
    // Too few parameters for what the code reads: `calls` reads `v` at c[0x0][0x168].
    let e = with_launch(
        "run_sm75.cuobjdump.sass",
        ".kernel calls\n.buffer out u32[8] = 0\n",
    )
    .err()
    .unwrap();
    assert!(
        e.to_string().contains("binds parameters up to 0x168 only"),
        "{e}"
    );
}

#[test]
fn a_cuobjdump_function_pasted_after_program_file_directives_runs() {
    let listing = read("run_sm75.cuobjdump.sass");
    // The `calls` function as cuobjdump prints it, from its `.headerflags` line through `..........`.
    let start = listing.find("Function : calls").unwrap();
    let body = &listing[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    let end = body.find("..........").unwrap() + "..........".len();
    let src = format!(
        ".kernel calls\n.block 32\n.buffer out u32[32] = 0\n.param v u32 = 5\n.expect out == 17\n{}\n",
        &body[..end]
    );
    for backend in Backend::ALL {
        let m = load(&engine(backend, 1, true), "paste.s", &src);
        let r = m.run("calls", &Overrides::default()).unwrap();
        assert!(
            r.passed(),
            "{backend}: {:?} {:?}",
            r.failure,
            r.expectations
        );
    }
}

// ---- constant banks other than 0 ---------------------------------------------------------

/// An nvdisasm (without `-c`) listing of kernel `k` (sm_80): `bank2` as `.nv.constant2.k`, a
/// module bank 3 holding `0xaabbccdd`, and code that stores what it reads from them to `out`.
fn banks_listing(read64: &str) -> String {
    format!(
        "\t.headerflags\t@\"EF_CUDA_64BIT_ADDRESS EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)\"
\t.elftype\t@\"ET_EXEC\"
\t.section\t.nv.constant3,\"a\",@progbits
\t.align\t4
.nv.constant3:
        /*0000*/ \t.word\t0xaabbccdd
\t.section\t.nv.constant2.k,\"a\",@progbits
\t.align\t4
.nv.constant2.k:
        /*0000*/ \t.byte\t0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11
\t.section\t.nv.constant0.k,\"a\",@progbits
\t.align\t4
.nv.constant0.k:
\t.zero\t360
\t.section\t.text.k,\"ax\",@progbits
\t.other\tk,@\"STO_CUDA_ENTRY STV_DEFAULT\"
k:
.text.k:
        /*0000*/                   IMAD.MOV.U32 R2, RZ, RZ, c[0x0][0x160] ;
        /*0010*/                   IMAD.MOV.U32 R3, RZ, RZ, c[0x0][0x164] ;
        /*0020*/                   LDC R0, c[0x2][0x4] ;
        /*0030*/                   STG.E [R2.64], R0 ;
        /*0040*/                   LDC.64 R4, {read64} ;
        /*0050*/                   STG.E.64 [R2.64+0x8], R4 ;
        /*0060*/                   IMAD R6, RZ, RZ, c[0x3][0x0] ;
        /*0070*/                   STG.E [R2.64+0x10], R6 ;
        /*0080*/                   I2F.U32.RP R7, c[0x2][0x4] ;
        /*0090*/                   STG.E [R2.64+0x14], R7 ;
        /*00a0*/                   EXIT ;
"
    )
}

#[test]
fn constant_banks_of_a_listing_read_the_same_on_both_backends() {
    let mut launch = LaunchText::new();
    launch.push("k.launch", ".kernel k\n.block 1\n.buffer out u32[6] = 0\n");
    let text = banks_listing("c[0x2][0x8]");
    for backend in Backend::ALL {
        let m = engine(backend, 1, true)
            .load_with_launch("banks.sass", &text, &launch)
            .unwrap();
        let r = m.run("k", &Overrides::default()).unwrap();
        assert!(r.failure.is_none(), "{backend}: {:?}", r.failure);
        let out: Vec<u32> = r.buffers[0]
            .bytes
            .chunks(4)
            .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
            .collect();
        // Little-endian reads of the printed bytes: bank 2 word 1 (01 00 00 01), its 64-bit
        // value at 8 (88 77 .. 11), the module bank's word, and 0x01000001 = 2^24 + 1 rounded
        // up to f32 (2^24 + 2, a one-bit significand step: 0x4b800001; the JIT's slow path).
        assert_eq!(
            out,
            [
                0x0100_0001,
                0,
                0x5566_7788,
                0x1122_3344,
                0xaabb_ccdd,
                16_777_218f32.to_bits()
            ],
            "{backend}"
        );
        assert_eq!(16_777_218f32.to_bits(), 0x4b80_0001);
    }
    // A read past the bank's 16 bytes is refused when the kernel loads, as for bank 0.
    let e = engine(Backend::Interp, 1, true)
        .load_with_launch("banks.sass", &banks_listing("c[0x2][0xc]"), &launch)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("8-byte read must be 8-byte aligned"), "{e}");
    let e = engine(Backend::Interp, 1, true)
        .load_with_launch("banks.sass", &banks_listing("c[0x2][0x10]"), &launch)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("c[0x2][0x10]: the 8-byte read ends past constant bank 2 (0x10 bytes)"),
        "{e}"
    );
}

#[test]
fn both_full_formats_of_the_corpus_give_shared_counters_its_bank_2() {
    // `IMAD R4, R5, R9, c[0x2][0x0]` adds the shared offset of `slot`, which ptxas places
    // after `counter` and `tickets` (two 4-byte words): `.nv.constant2.shared_counters` is
    // that offset as an 8-byte word, `0x00000008 0x00000000` (cuobjdump -elf) or
    // `.byte 0x08, 0x00, ...` (nvdisasm).
    for arch in ["sm_80", "sm_86"] {
        for tool in ["cuobjdump", "nvdisasm"] {
            let path = format!(
                "{}/corpus/gen/shared_memory.{arch}.{tool}.sass",
                env!("CARGO_MANIFEST_DIR")
            );
            let text = std::fs::read_to_string(&path).unwrap();
            let p = atomjit::front::parse(&path, &text, Dialect::Sass);
            // `shared_every_function` cannot run yet: take the kernels from the front-end.
            let parsed = match p {
                Ok(p) => p,
                Err(_) => {
                    let l = atomjit::front::parse_with_launch(
                        &path,
                        &text,
                        Dialect::Sass,
                        &LaunchText::new(),
                    )
                    .unwrap();
                    l.program
                }
            };
            let k = parsed.kernel("shared_counters").unwrap();
            assert_eq!(
                k.launch.const_banks,
                [atomjit::ir::ConstBank {
                    bank: 2,
                    bytes: vec![8, 0, 0, 0, 0, 0, 0, 0]
                }],
                "{path}"
            );
        }
    }
}

// ---- MUFU.RCP as the seed of an integer division ------------------------------------------

/// The six listings of `udiv.cu` (see the fixtures' README).
fn udiv_listings() -> Vec<String> {
    let mut v = Vec::new();
    for arch in [80, 86, 90] {
        for tool in ["cuobjdump", "nvdisasm-c"] {
            v.push(format!("udiv_sm{arch}.{tool}.sass"));
        }
    }
    v
}

/// Divisors and dividends at the edges of 32-bit division, with pseudo-random others
/// (SplitMix64, so that the values are the same on every machine).
fn division_operands(edges: &[u32], count: usize, seed: u64) -> Vec<u32> {
    let mut state = seed;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut v = edges.to_vec();
    while v.len() < count {
        let x = next();
        // Divisors of every size: shift a random word right by 0 to 31 bits.
        v.push((x as u32) >> ((x >> 32) % 32));
    }
    v
}

const DIVISORS: &[u32] = &[
    0,
    1,
    2,
    3,
    7,
    10,
    255,
    0xffff,
    0x10000,
    0x7fff_ffff,
    0x8000_0000,
    0x8000_0001,
    0xffff_fffe,
    0xffff_ffff,
];
const DIVIDENDS: &[u32] = &[
    0,
    1,
    2,
    3,
    6,
    7,
    8,
    9,
    0xffff,
    0x10000,
    0x7fff_fffe,
    0x7fff_ffff,
    0x8000_0000,
    0x8000_0001,
    0xffff_fffe,
    0xffff_ffff,
];

fn list<T: std::fmt::Display>(v: &[T]) -> String {
    let items: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("{{{}}}", items.join(", "))
}

fn words(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

#[test]
fn integer_division_by_a_runtime_divisor_is_exact_on_both_backends() {
    // Every (dividend, divisor) pair: 32 x 32 threads.
    let divisors = division_operands(DIVISORS, 32, 1);
    let dividends = division_operands(DIVIDENDS, 32, 2);
    let (mut n, mut d) = (Vec::new(), Vec::new());
    for &y in &divisors {
        for &x in &dividends {
            n.push(x);
            d.push(y);
        }
    }
    let count = n.len();
    // Rust's division; by zero, what the listings compute: `@!P LOP3.LUT q, RZ, d, RZ, 0x33`
    // (and `SEL r, ~d, r, !P` for the remainder) replace both results with `~0`.
    let expect = |f: fn(u32, u32) -> u32| -> Vec<u32> {
        n.iter()
            .zip(&d)
            .map(|(&x, &y)| if y == 0 { u32::MAX } else { f(x, y) })
            .collect()
    };
    let (q, r) = (expect(|x, y| x / y), expect(|x, y| x % y));
    // Signed: the same pairs read as i32; `INT_MIN / -1` wraps to INT_MIN (remainder 0), as
    // the listing's unsigned quotient of |n| = 2^31 by 1 with the sign of n ^ d (positive).
    let signed = |f: fn(i32, i32) -> i32| -> Vec<u32> {
        n.iter()
            .zip(&d)
            .map(|(&x, &y)| {
                if y == 0 {
                    u32::MAX
                } else {
                    f(x as i32, y as i32) as u32
                }
            })
            .collect()
    };
    let (sq, sr) = (signed(i32::wrapping_div), signed(i32::wrapping_rem));
    let launch = format!(
        ".kernel udiv_reg\n.grid 4\n.block 256\n.buffer n u32[{count}] = {n}\n.buffer d u32[{count}] = {d}\n.buffer q u32[{count}] = 0\n.buffer r u32[{count}] = 0\n\
         .kernel sdiv_reg\n.grid 4\n.block 256\n.buffer n s32[{count}] = {sn}\n.buffer d s32[{count}] = {sd}\n.buffer q s32[{count}] = 0\n.buffer r s32[{count}] = 0\n\
         .kernel udiv_param\n.grid 1\n.block 32\n.buffer n u32[32] = {n32}\n.buffer q u32[32] = 0\n.buffer r u32[32] = 0\n.param d u32 = 1\n",
        n = list(&n),
        d = list(&d),
        sn = list(&n.iter().map(|&x| x as i32).collect::<Vec<_>>()),
        sd = list(&d.iter().map(|&x| x as i32).collect::<Vec<_>>()),
        n32 = list(&dividends),
    );
    let mut l = LaunchText::new();
    l.push("udiv.launch", &launch);
    for f in udiv_listings() {
        for backend in Backend::ALL {
            let m = engine(backend, 2, false)
                .load_with_launch(&fixture(&f), &read(&f), &l)
                .unwrap_or_else(|e| panic!("{f}: {e}"));
            for (kernel, want_q, want_r) in [("udiv_reg", &q, &r), ("sdiv_reg", &sq, &sr)] {
                let run = m.run(kernel, &Overrides::default()).unwrap();
                assert!(
                    run.failure.is_none(),
                    "{f} {kernel} {backend}: {:?}",
                    run.failure
                );
                let (got_q, got_r) = (words(&run.buffers[2].bytes), words(&run.buffers[3].bytes));
                for i in 0..count {
                    assert_eq!(
                        (got_q[i], got_r[i]),
                        (want_q[i], want_r[i]),
                        "{f} {kernel} {backend}: {:#x} / {:#x}",
                        n[i],
                        d[i]
                    );
                }
            }
            // The divisor as a parameter (c[0x0][0x178] on sm_80/86, a uniform register on
            // sm_90).
            for &y in &divisors {
                let o = Overrides {
                    params: vec![("d".to_string(), atomjit::ir::Scalar::Int(i128::from(y)))],
                    ..Overrides::default()
                };
                let run = m.run("udiv_param", &o).unwrap();
                assert!(
                    run.failure.is_none(),
                    "{f} udiv_param {backend}: {:?}",
                    run.failure
                );
                let (got_q, got_r) = (words(&run.buffers[1].bytes), words(&run.buffers[2].bytes));
                for (i, &x) in dividends.iter().enumerate() {
                    // By zero: `~d` for both (the listing's `SEL`s), as in `udiv_reg`.
                    let want = (
                        x.checked_div(y).unwrap_or(u32::MAX),
                        x.checked_rem(y).unwrap_or(u32::MAX),
                    );
                    assert_eq!(
                        (got_q[i], got_r[i]),
                        want,
                        "{f} udiv_param {backend}: {x:#x} / {y:#x}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_seed_is_refused_once_its_reciprocal_is_used_otherwise() {
    // udiv_reg of the sm_80 listing with the reciprocal also multiplied into the quotient:
    // the result would depend on the hardware's approximation.
    let text = read("udiv_sm80.nvdisasm-c.sass");
    let start = text.find(".text.udiv_reg:").unwrap();
    let first = start
        + text[start..]
            .find("IADD3 R8, R10, 0xffffffe, RZ ;")
            .unwrap();
    let mut edited = text.clone();
    edited.replace_range(
        first..first + "IADD3 R8, R10, 0xffffffe, RZ ;".len(),
        "FMUL R8, R10, R10 ;",
    );
    let f = temp_file("udiv_fmul.nvdisasm-c.sass", &edited);
    let (code, out, err) = atomjit(&["check", &f]);
    assert_eq!(code, 2, "{out}{err}");
    let line = out
        .lines()
        .find(|l| l.contains("kernel `udiv_reg`"))
        .unwrap();
    assert!(line.contains("cannot run"), "{out}");
    assert!(line.contains("MUFU.RCP ×1"), "{out}");
    assert!(
        out.contains("only as the seed of ptxas's integer division"),
        "{out}"
    );
    assert!(out.contains("goes to `FMUL R8, R10, R10`"), "{out}");
    // The other kernels still run.
    assert!(out.contains("kernel `sdiv_reg`: "), "{out}");
    assert!(!out.contains("kernel `sdiv_reg` cannot run"), "{out}");
}

#[test]
fn eviction_priorities_on_global_and_surface_accesses_change_nothing() {
    // ptxas writes PTX's `.cs` ("evict first") as `.EF` (`suld.b.1d.cs` ->
    // `SULD.D.BA.1D.EF.STRONG.SM.TRAP`): a cache replacement hint, accepted and ignored.
    let src = ".kernel k\n.block 1\n.buffer b u32[1] = 7\n.surface s 1d u32[2] = {3, 0}\n\
               MOV R2, c[0x0][b] ;\nMOV R3, c[0x0][b+0x4] ;\nLDG.E.EF R5, [R2.64] ;\n\
               IADD3 R5, R5, 0x1, RZ ;\nSTG.E.EL [R2.64], R5 ;\nMOV R8, RZ ;\nMOV R9, 0x4 ;\n\
               SULD.D.BA.1D.EF.STRONG.SM.TRAP R6, [R8], 0x0, 0x5a ;\n\
               SUST.D.BA.1D.LU.STRONG.SM.TRAP [R9], R6, 0x0, 0x5a ;\n\
               RED.E.ADD.NA.STRONG.GPU [R2.64], R6 ;\nEXIT ;\n\
               .expect b == {11}\n.expect s == {3, 3}";
    for backend in [Backend::Interp, Backend::Jit] {
        let e = engine(backend, 1, true);
        let m = load(&e, "ef.s", src);
        let r = m.run("k", &Overrides::default()).expect("runs");
        assert!(r.passed(), "{backend:?}: {:?}", r.expectations);
    }
    // Shared memory has no cache to evict from.
    let lds = ".kernel k\n.block 1\nLDS.EF R6, [RZ] ;\nEXIT ;";
    let e = atomjit::front::parse("lds.s", lds, Dialect::Sass).expect_err("LDS.EF");
    assert!(
        e.to_string().contains("unknown modifier `.EF` for LDS"),
        "{e}"
    );
}
