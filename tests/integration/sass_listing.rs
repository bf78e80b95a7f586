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
