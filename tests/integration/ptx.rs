//! PTX end to end: the programs' full results against host computations, launch binding from
//! the command line and sidecar files, and PTX traps (alignment, generic addresses).

use super::atomjit;
use super::*;
use atomjit::engine::Failure;
use atomjit::exec::{TrapReason, GLOBAL_BASE};
use atomjit::front::LaunchText;
use atomjit::ir::Space;
use atomjit::ir::GENERIC_SHARED_BASE;
use std::path::PathBuf;

fn ptx_program(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/programs/ptx/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
}

fn run_file(name: &str, backend: Backend, threads: usize) -> RunReport {
    let m = load_file(&engine(backend, threads, false), &ptx_program(name));
    let k = m.kernel_names()[0].to_string();
    let r = m.run(&k, &Overrides::default()).unwrap();
    assert!(r.passed(), "{name}: {:?} {:?}", r.failure, r.expectations);
    r
}

#[test]
fn shared_histogram_matches_a_host_histogram() {
    for backend in backends() {
        let r = run_file("hist_shared.ptx", backend, 2);
        let data = r.buffer("data").unwrap().as_u32().unwrap();
        let mut want = vec![0u32; 256];
        for v in &data {
            want[*v as usize] += 1;
        }
        assert_eq!(r.buffer("hist").unwrap().as_u32().unwrap(), want);
        // One shared add per element (the 17th CTA is past n), one global add per non-empty
        // bin per CTA.
        let nonempty: u64 = (0..16)
            .map(|cta| {
                let mut seen = [false; 256];
                for v in &data[cta * 256..(cta + 1) * 256] {
                    seen[*v as usize] = true;
                }
                seen.iter().filter(|&&s| s).count() as u64
            })
            .sum();
        assert_eq!(
            r.launch.stats.atomics[atomjit::ir::AtomicOp::Add.index()],
            4096 + nonempty
        );
    }
}

#[test]
fn message_passing_delivers_every_value() {
    for backend in backends() {
        for threads in [1, 2] {
            let r = run_file("message_passing.ptx", backend, threads);
            let out = r.buffer("out").unwrap().as_u32().unwrap();
            let want: Vec<u32> = (0..64).map(|t| 3 * t + 1).collect();
            assert_eq!(out, want);
        }
    }
}

#[test]
fn ticket_lock_serves_every_ticket_once() {
    for backend in backends() {
        for threads in [1, 2, 4] {
            let r = run_file("ticket_lock.ptx", backend, threads);
            let mut order = r.buffer("order").unwrap().as_u32().unwrap();
            order.sort();
            assert_eq!(order, (0..256).collect::<Vec<u32>>());
        }
    }
}

const HIST_LAUNCH: &str = ".grid 17\n.block 256\n.buffer data u32[4096] = random(7, 0, 256)\n.buffer hist u32[256] = 0\n.param n u32 = 4096\n.expect sum(hist) == 4096\n";

#[test]
fn launch_binds_parameters_in_order() {
    let source = std::fs::read_to_string(ptx_program("hist_shared.ptx")).unwrap();
    let e = engine(Backend::Interp, 2, false);
    let mut launch = LaunchText::new();
    launch.push("hist.launch", HIST_LAUNCH);
    let m = e
        .load_with_launch("hist_shared.ptx", &source, &launch)
        .unwrap();
    let (k, _) = m.kernel("_Z9histogramPKjPji").unwrap();
    let names: Vec<&str> = k.launch.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["data", "hist", "n"]);
    let offsets: Vec<u32> = k.launch.params.iter().map(|p| p.cbank_offset).collect();
    assert_eq!(
        offsets,
        [0x160, 0x168, 0x170],
        "the .param list's natural layout"
    );
    assert!(m
        .run("_Z9histogramPKjPji", &Overrides::default())
        .unwrap()
        .passed());

    // Wrong count, wrong kind, wrong size: errors that name the parameters.
    let bad = |text: &str| {
        let mut l = LaunchText::new();
        l.push("bad.launch", text);
        match e.load_with_launch("hist_shared.ptx", &source, &l) {
            Err(atomjit::engine::Error::Parse(p)) => p,
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("{text:?} should not bind"),
        }
    };
    let p = bad(".buffer data u32[4] = 0\n.buffer hist u32[256] = 0\n");
    assert_eq!(p.file, "bad.launch");
    assert!(p.message.contains("has 3 parameters (_Z9histogramPKjPji_param_0 .u64, _Z9histogramPKjPji_param_1 .u64, _Z9histogramPKjPji_param_2 .u32) but the launch binds 2 (data, hist)"), "{p}");
    let p = bad(".buffer data u32[4] = 0\n.buffer hist u32[256] = 0\n.buffer n u32[1] = 0\n");
    assert!(
        p.message
            .contains("buffer `n` binds to parameter _Z9histogramPKjPji_param_2 .u32"),
        "{p}"
    );
    assert_eq!(p.span.line, 3);
    let p = bad(".buffer data u32[4] = 0\n.buffer hist u32[256] = 0\n.param n u64 = 4\n");
    assert!(p.message.contains("scalar `n` (u64, 8 bytes) binds to parameter _Z9histogramPKjPji_param_2 .u32 (4 bytes)"), "{p}");
    let p = bad(
        ".param a u64 = 1\n.buffer hist u32[256] = 0\n.param n u32 = 4\n.expect sum(nope) == 1\n",
    );
    assert!(p.message.contains("unknown buffer `nope`"), "{p}");
    assert_eq!(p.span.line, 4);
    let p = bad(".kernel other\n.grid 2\n");
    assert!(p.message.contains("no kernel `other`"), "{p}");
    let p = bad(".grid 2\n.grid 3\n");
    assert!(p.message.contains("duplicate `.grid`"), "{p}");
    let p = bad(".shared 16777216\n");
    assert!(
        p.message
            .contains("static .shared variables take 1024 bytes"),
        "{p}"
    );
    // No launch at all: the parameters are unbound.
    let p = match e.load_with_launch("hist_shared.ptx", &source, &LaunchText::new()) {
        Err(atomjit::engine::Error::Parse(p)) => p,
        _ => panic!("an unbound kernel must not load for running"),
    };
    assert_eq!(p.file, "hist_shared.ptx");
    assert!(p.message.contains("but the launch binds 0"), "{p}");
    // Parsing without a launch (check, dump) is fine.
    assert!(e.load("hist_shared.ptx", &source).is_ok());
}

#[test]
fn dynamic_shared_memory_follows_the_static_variables() {
    let source = "
.version 8.0
.target sm_80
.address_size 64
.extern .shared .align 8 .b8 dyn[];
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<3>;
    .shared .align 4 .b8 fixed[12];
    mov.u32 %r1, dyn;
    mov.u32 %r2, %tid.x;
    st.shared.u32 [%r1], %r2;
    atom.shared.add.u32 %r3, [dyn+4], 1;
    ld.param.u64 %rd1, [out];
    st.global.u32 [%rd1], %r1;
    ret;
}
";
    let mut launch = LaunchText::new();
    launch.push(
        "k.launch",
        ".block 1\n.shared 8\n.buffer out u32[1] = 7\n.expect out[0] == 16\n",
    );
    let m = engine(Backend::Interp, 1, true)
        .load_with_launch("k.ptx", source, &launch)
        .unwrap();
    let (k, _) = m.kernel("k").unwrap();
    // 12 static bytes, dynamic memory aligned to 8: starts at 16, 8 bytes follow.
    assert_eq!(k.launch.shared_bytes, 24);
    let r = m.run("k", &Overrides::default()).unwrap();
    assert!(r.passed(), "{:?} {:?}", r.failure, r.expectations);
}

fn ptx_trap(body: &str, regs: &str, launch: &str) -> atomjit::exec::Trap {
    let source = format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{{\n{regs}\n{body}\n}}\n"
    );
    let mut l = LaunchText::new();
    l.push("k.launch", launch);
    let mut traps = backends().into_iter().map(|backend| {
        let m = engine(backend, 1, true)
            .load_with_launch("k.ptx", &source, &l)
            .unwrap_or_else(|e| panic!("{e}"));
        match m.run("k", &Overrides::default()).unwrap().failure {
            Some(Failure::Trap(t)) => *t,
            other => panic!("{backend:?}: expected a trap, got {other:?}"),
        }
    });
    let first = traps.next().expect("at least one backend");
    for other in traps {
        assert_eq!(first, other, "backends report the same trap");
    }
    first
}

#[test]
fn whole_access_alignment_is_checked_for_packed_and_64_bit_atomics() {
    let regs = ".reg .b32 %r<3>;\n.reg .b64 %rd<3>;";
    // f16x2 is one 4-byte access: an address that is only 2-aligned traps. (The f16x2 operand
    // is a register: ptxas rejects an immediate one, "Arguments mismatch for instruction 'atom'".)
    let t = ptx_trap(
        "ld.param.u64 %rd1, [p];\nmov.b32 %r2, 0x3c003c00;\natom.global.add.noftz.f16x2 %r1, [%rd1+2], %r2;\nret;",
        regs,
        ".block 1\n.buffer b u32[4] = 0\n",
    );
    assert_eq!(t.reason, TrapReason::MisalignedAddress);
    assert_eq!((t.space, t.address), (Space::Global, GLOBAL_BASE + 2));
    assert!(
        t.inst.starts_with("atom.global.add.noftz.f16x2"),
        "{}",
        t.inst
    );
    // 64-bit atomics need 8-byte alignment.
    let t = ptx_trap(
        "ld.param.u64 %rd1, [p];\natom.global.cas.b64 %rd2, [%rd1+4], 0, 1;\nret;",
        regs,
        ".block 1\n.buffer b u64[2] = 0\n",
    );
    assert_eq!(t.reason, TrapReason::MisalignedAddress);
    assert_eq!(t.address, GLOBAL_BASE + 4);
    // Alignment is checked before range, also for generic addresses.
    let t = ptx_trap(
        "mov.u64 %rd1, 6;\natom.add.u32 %r1, [%rd1], 1;\nret;",
        regs,
        ".block 1\n.buffer b u32[1] = 0\n",
    );
    assert_eq!(
        (t.reason, t.space, t.address),
        (TrapReason::MisalignedAddress, Space::Generic, 6)
    );
}

#[test]
fn generic_addresses_outside_both_windows_trap() {
    let regs = ".reg .b32 %r<3>;\n.reg .b64 %rd<3>;";
    let t = ptx_trap(
        "mov.u64 %rd1, 64;\nld.u32 %r1, [%rd1];\nret;",
        regs,
        ".block 1\n.buffer b u32[1] = 0\n",
    );
    assert_eq!(
        (t.reason, t.space, t.address),
        (TrapReason::AddressOutOfRange, Space::Generic, 64)
    );
    // A generic shared address past the CTA's window.
    let t = ptx_trap(
        "cvta.shared.u64 %rd1, 0;\nld.u32 %r1, [%rd1+16];\nret;",
        regs,
        ".block 1\n.buffer b u32[1] = 0\n",
    );
    let _ = GENERIC_SHARED_BASE;
    assert_eq!(t.reason, TrapReason::AddressOutOfRange);
    assert_eq!(t.space, Space::Generic);
}

// ---- the command line ----------------------------------------------------------------------

/// A copy of a PTX program without its sidecar.
fn bare_copy(name: &str) -> String {
    let path = crate::scratch_dir("bare").join(name);
    std::fs::copy(ptx_program(name), &path).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn cli_binds_buffers_and_params_in_order() {
    let file = bare_copy("hist_shared.ptx");
    let (code, out, err) = atomjit(&[
        "run",
        &file,
        "--kernel",
        "_Z9histogramPKjPji",
        "--grid",
        "16",
        "--block",
        "256",
        "--buffer",
        "data u32[4096] = random(3, 0, 256)",
        "--buffer",
        "hist u32[256] = 0",
        "--param",
        "n u32 = 4096",
        "--expect",
        "sum(hist) == 4096",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("kernel _Z9histogramPKjPji: grid 16x1x1, block 256x1x1, shared 1024 B"),
        "{out}"
    );
    assert!(out.contains("expect sum(hist) == 4096: ok"), "{out}");

    // Without the kernel's parameters: a usage error naming them.
    let (code, _, err) = atomjit(&["run", &file]);
    assert_eq!(code, 2);
    assert!(err.contains("but the launch binds 0"), "{err}");
    assert!(err.contains("_Z9histogramPKjPji_param_2 .u32"), "{err}");

    // A scalar of the wrong size is shown on the command line's own text.
    let (code, _, err) = atomjit(&[
        "run",
        &file,
        "--buffer",
        "data u32[4] = 0",
        "--buffer",
        "hist u32[256] = 0",
        "--param",
        "n u16 = 4",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("command line"), "{err}");
    assert!(err.contains("sizes must match"), "{err}");
    assert!(err.contains(".param n u16 = 4"), "{err}");

    // The same lines from a launch file.
    let launch = format!("{file}.alt");
    std::fs::write(&launch, HIST_LAUNCH).unwrap();
    let (code, out, err) = atomjit(&["run", &file, "--launch", &launch]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("grid 17x1x1"), "{out}");

    // check and dump work without a launch.
    let (code, out, _) = atomjit(&["check", &file]);
    assert_eq!(code, 0);
    assert!(out.contains("kernel `_Z9histogramPKjPji`"), "{out}");
}

#[test]
fn cli_picks_up_the_sidecar_and_renders_its_errors() {
    let (code, out, err) = atomjit(&[
        "run",
        &ptx_program("counter_red.ptx").to_string_lossy(),
        "--deterministic",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("expect weighted[0] == 8787503087616: ok"),
        "{out}"
    );

    let file = bare_copy("counter_red.ptx");
    let sidecar = std::path::Path::new(&file).with_extension("launch");
    std::fs::write(
        &sidecar,
        ".grid 2\n.buffer hits u32[1] = 0\n.buffer w u64[1] = 0\n.expect hits[5] == 1\n",
    )
    .unwrap();
    let (code, _, err) = atomjit(&["run", &file]);
    assert_eq!(code, 2);
    assert!(err.contains("index 5 is outside `hits`"), "{err}");
    assert!(err.contains("counter_red.launch:4"), "{err}");
}

#[test]
fn sass_files_take_launch_lines_too() {
    let file = format!("{}/programs/sass/counter.s", env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) = atomjit(&[
        "run",
        &file,
        "--buffer",
        "extra u32[8] = 5",
        "--expect",
        "sum(extra) == 40",
        "--dump",
        "extra",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("extra u32[8] = {5, 5, 5, 5, 5, 5, 5, 5}"),
        "{out}"
    );
}

#[test]
fn cli_lines_for_one_kernel_bind_that_kernel_only() {
    let module = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/three_entries.ptx"
    );
    let file = super::temp_file("three.ptx", &std::fs::read_to_string(module).unwrap());
    let store = [
        "--block",
        "1",
        "--buffer",
        "out u32[1] = 0",
        "--param",
        "value u32 = 7",
        "--expect",
        "out[0] == 7",
    ];
    let mut args = vec!["run", &file, "--kernel", "store"];
    args.extend(store);
    let (code, out, err) = atomjit(&args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("kernel store: grid 1x1x1"), "{out}");
    assert!(out.contains("expect out[0] == 7: ok"), "{out}");
    assert!(!out.contains("kernel count"), "{out}");

    // Running every kernel: `store` and `idle` run, the unbound `count` is an error that names
    // its parameters.
    let sidecar = std::path::Path::new(&file).with_extension("launch");
    std::fs::write(
        &sidecar,
        ".kernel store\n.block 1\n.buffer out u32[1] = 0\n.param value u32 = 7\n.expect out[0] == 7\n",
    )
    .unwrap();
    let (code, out, err) = atomjit(&["run", &file]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.contains("expect out[0] == 7: ok"), "{out}");
    assert!(out.contains("kernel idle: grid 1x1x1"), "{out}");
    assert!(
        err.contains("kernel `count` has 3 parameters (counter .u64, unused .u64, n .u32) but the launch binds 0"),
        "{err}"
    );
    assert!(!err.contains("kernel `store` has"), "{err}");
}

#[test]
fn vector_atomics_perform_every_element_as_its_own_atomic() {
    for backend in backends() {
        let r = run_file("vector_atomics.ptx", backend, 2);
        // `olds` is f32 pairs: the old values each lane's `atom.add.v2.f32` returned. Each
        // element is an independent atomic, so across the 512 threads the first elements are
        // exactly 0..511 and the second exactly 0, 2, .., 1022, each once (though two host
        // threads may pair them differently).
        let olds: Vec<f32> = r
            .buffer("olds")
            .unwrap()
            .values()
            .map(|v| match v {
                atomjit::ir::Scalar::Float(f) => f as f32,
                atomjit::ir::Scalar::Int(i) => panic!("an integer {i} in an f32 buffer"),
            })
            .collect();
        let mut x: Vec<u32> = olds.iter().step_by(2).map(|v| *v as u32).collect();
        let mut y: Vec<u32> = olds.iter().skip(1).step_by(2).map(|v| *v as u32).collect();
        x.sort_unstable();
        y.sort_unstable();
        assert_eq!(x, (0..512).collect::<Vec<_>>(), "{backend:?}");
        assert_eq!(
            y,
            (0..512).map(|i| 2 * i).collect::<Vec<_>>(),
            "{backend:?}"
        );
        // One atomic per element: 4 + 2 + 8 per thread.
        assert_eq!(
            r.launch.stats.atomics[atomjit::ir::AtomicOp::Add.index()],
            512 * 14
        );
    }
}
