//! PTX as NVRTC 12.9 writes it (issue 10): the fixtures in `tests/fixtures/ptx/`, compiled from
//! the `.cu` files beside them for compute_80 and compute_90. Expected values come from the
//! CUDA source and the PTX ISA, computed here on the host. Every run is on both backends.

use super::*;
use atomjit::engine::{Error, Failure};
use std::path::PathBuf;

const BACKENDS: [Backend; 2] = [Backend::Interp, Backend::Jit];

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/tests/fixtures/ptx/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
}

fn run(file: &str, kernel: &str, backend: Backend) -> RunReport {
    let m = load_file(&engine(backend, 2, false), &fixture(file));
    let r = m.run(kernel, &Overrides::default()).unwrap();
    assert!(
        r.passed(),
        "{file} {kernel}: {:?} {:?}",
        r.failure,
        r.expectations
    );
    r
}

#[test]
fn module_variables_device_functions_and_constants() {
    for file in ["nvrtc_kernels_sm80.ptx", "nvrtc_kernels_sm90.ptx"] {
        for backend in BACKENDS {
            let r = run(file, "globals", backend);
            let table = [1, 2, 3, 4];
            let scale = [10, 100];
            let want: Vec<i32> = (0..32)
                .map(|t| 3 * t + table[t as usize & 3] + scale[t as usize & 1])
                .collect();
            assert_eq!(r.buffer("out").unwrap().as_i32().unwrap(), want);
            // `counter` (initialised to 5) is a buffer of its own, named after the variable.
            assert_eq!(r.buffer("counter").unwrap().as_u32().unwrap(), [37]);
            // libcu++'s hundreds of unused variables are not allocated.
            assert_eq!(
                r.buffers.len(),
                4,
                "{:?}",
                r.buffers.iter().map(|b| &b.name).collect::<Vec<_>>()
            );
        }
    }
}

/// The `warp` kernel's 16 words for lane `t` of a full warp, from the CUDA intrinsics'
/// definitions.
fn warp_expected(t: u32) -> [u32; 16] {
    let funnel =
        |lo: u32, hi: u32, s: u32| (((hi as u64) << 32 | lo as u64) << (s & 31) >> 32) as u32;
    let bfind = if t == 0 {
        u32::MAX
    } else {
        31 - t.leading_zeros()
    };
    let x = f32::from_bits(0x3f80_0800) as f64; // 1 + 2^-12: the fused result is exact in f32
    [
        u32::MAX,
        0xaaaa_aaaa,
        3,
        if t < 31 { t + 1 } else { t },
        if t >= 2 { t - 2 } else { t },
        t ^ 5,
        0xf << (4 * (t / 4)),
        0, // the full mask plus the predicate 1, wrapped
        496,
        15,
        2, // __all(t < 31) is false, __any(t == 3) is true
        (1u32 << t) - 1,
        funnel(t, 0x8000_0001, t),
        ((t >> 2) & 7) | bfind.wrapping_shl(8),
        0x4400_0000 | (t >> 8 & 0xff) | (t >> 16 & 0xff) << 8 | (t >> 24) << 16,
        ((x * x - 1.0) as f32).to_bits(),
    ]
}

#[test]
fn warp_intrinsics_shuffles_votes_matches_reductions_and_bit_ops() {
    assert_eq!(
        warp_expected(0)[15],
        0x3a00_0400,
        "2^-11 + 2^-24, not the unfused 2^-11"
    );
    for file in ["nvrtc_kernels_sm80.ptx", "nvrtc_kernels_sm90.ptx"] {
        for backend in BACKENDS {
            let r = run(file, "warp", backend);
            let out = r.buffer("out").unwrap().as_u32().unwrap();
            for t in 0..32u32 {
                let got = &out[t as usize * 16..][..16];
                assert_eq!(got, warp_expected(t), "{file}: lane {t}");
            }
        }
    }
}

#[test]
fn cuda_atomic_functions_and_atomic_ref_orders_and_scopes() {
    for file in ["nvrtc_kernels_sm80.ptx", "nvrtc_kernels_sm90.ptx"] {
        for backend in BACKENDS {
            // The launch file's expectations are the CUDA source's results for one warp.
            let r = run(file, "atomics", backend);
            assert_eq!(r.buffer("ull").unwrap().as_u64().unwrap(), [1, 3]);
        }
    }
    // What the orders and scopes lower to.
    let src = std::fs::read_to_string(fixture("nvrtc_kernels_sm80.ptx")).unwrap();
    let p = atomjit::front::parse("k.ptx", &src, atomjit::ir::Dialect::Ptx).unwrap();
    let k = p.kernel("atomics").unwrap();
    let dump: Vec<String> = k
        .insts
        .iter()
        .map(|i| atomjit::ir::print_inst(k, i))
        .collect();
    let dump = dump.join("\n");
    for want in ["acq_rel.gpu", "release.sys", "acquire.sys", "fence.sc.cta"] {
        assert!(dump.contains(want), "no {want} in\n{dump}");
    }
}

#[test]
fn an_entry_that_cannot_run_leaves_the_others_running() {
    let m = load_file(
        &engine(Backend::Interp, 2, false),
        &fixture("nvrtc_unsupported.ptx"),
    );
    let r = m.run("good", &Overrides::default()).unwrap();
    assert_eq!(
        r.buffer("out").unwrap().as_u32().unwrap(),
        (0..32).map(|t| 2 * t).collect::<Vec<u32>>()
    );
    // `fact` is a loop after NVVM; the entry calls it once per thread.
    let r = m.run("recursive", &Overrides::default()).unwrap();
    let fact = |n: u32| (1..=n.max(1)).fold(1i32, |a, b| a.wrapping_mul(b as i32));
    assert_eq!(
        r.buffer("out").unwrap().as_u32().unwrap(),
        (0..32).map(|t| fact(t) as u32).collect::<Vec<u32>>()
    );
    // The bad entry names itself and its first construct; `unsupported` lists both.
    let e = m.run("bad", &Overrides::default()).unwrap_err();
    let Error::Unbound(e) = e else { panic!("{e}") };
    assert!(
        e.message
            .starts_with("entry `bad` cannot run: `prmt`: .f4e: atomjit does not implement"),
        "{e}"
    );
    assert!(e.message.contains("and 1 more"), "{e}");
    let all = m.unsupported("bad").unwrap();
    assert_eq!(all.len(), 2);
    assert!(
        all[1].message.contains("`trap` is not a PTX instruction"),
        "{:?}",
        all[1]
    );
    assert!(m.unsupported("good").unwrap().is_empty());
    // The command line: `check` lists both constructs and fails; `run -k good` runs.
    let path = fixture("nvrtc_unsupported.ptx");
    let path = path.to_str().unwrap();
    let (code, out, err) = atomjit(&["check", path]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.contains("kernel `bad`: cannot run: 2 unsupported constructs"),
        "{out}"
    );
    assert!(err.contains(".f4e") && err.contains("`trap`"), "{err}");
    let (code, out, err) = atomjit(&[
        "run",
        path,
        "-k",
        "good",
        "--backend",
        "interp",
        "--expect",
        "out[5] == 10",
    ]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn a_shuffle_whose_membermask_names_lanes_that_do_not_execute_it_traps() {
    let m = load_file(
        &engine(Backend::Interp, 1, true),
        &fixture("nvrtc_unsupported.ptx"),
    );
    let r = m.run("diverged", &Overrides::default()).unwrap();
    let Some(Failure::Trap(t)) = &r.failure else {
        panic!("{:?}", r.failure)
    };
    let text = t.to_string();
    assert!(
        text.contains("shfl.sync.idx.b32") && text.contains("membermask check"),
        "{text}"
    );
}
