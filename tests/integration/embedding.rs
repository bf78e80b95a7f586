//! The embedding API (issue 13, part 1): device memory that outlives launches, and launches
//! from code with arguments bound by each dialect's parameter list. The kernels are NVRTC's
//! and ptxas' output for `examples/kernels/embedding.cu`; expected values are computed here from
//! that source.

use atomjit::engine::{Arg, Backend, Config, Engine, Error, Failure, Module, Signature};
use std::path::Path;

fn kernels_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/kernels"))
}

fn engine(backend: Backend) -> Engine {
    Engine::new(
        Config::default()
            .backend(backend)
            .threads(2)
            .timeout(Some(std::time::Duration::from_secs(20))),
    )
}

fn load(engine: &Engine, file: &str) -> Module {
    let path = kernels_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    engine.load(file, &text).unwrap()
}

/// `fill_keys` of embedding.cu, in Rust.
fn key(i: u32, buckets: u32, seed: u32) -> u32 {
    let mut x = i.wrapping_mul(2654435761) ^ seed;
    x ^= x >> 15;
    x = x.wrapping_mul(0x2c1b3c6d);
    x ^= x >> 12;
    x % buckets
}

/// The kernel files every test runs: the PTX (bound by its `.param` list) and two SASS listings
/// (bound by layout).
const FILES: [&str; 3] = [
    "embedding.compute_80.ptx",
    "embedding.sm_80.cuobjdump.sass",
    "embedding.sm_90.cuobjdump.sass",
];

#[test]
fn kernels_share_device_memory_across_launches() {
    for backend in Backend::ALL {
        for file in FILES {
            let e = engine(backend);
            let m = load(&e, file);
            let (n, buckets, seed) = (1000u32, 37u32, 0x5eed);
            let keys = e.device().alloc(4 * u64::from(n)).unwrap();
            let stats = m
                .launch(
                    "fill_keys",
                    [8, 1, 1],
                    [128, 1, 1],
                    0,
                    &[
                        keys.into(),
                        Arg::scalar(n),
                        Arg::scalar(buckets),
                        Arg::scalar(seed),
                    ],
                )
                .unwrap_or_else(|err| panic!("{file} on {backend}: {err}"));
            assert!(stats.stats.warp_insts > 0, "{file}");
            let got = e.device().read::<u32>(keys).unwrap();
            let want: Vec<u32> = (0..n).map(|i| key(i, buckets, seed)).collect();
            assert_eq!(got, want, "{file} on {backend}");

            // A histogram filled on the host, weighed by a second kernel into a u64.
            let mut hist = vec![0u32; buckets as usize];
            for &k in &want {
                hist[k as usize] += 1;
            }
            let h = e.device().upload(&hist).unwrap();
            let total = e.device().upload(&[5u64]).unwrap();
            let stats = m
                .launch(
                    "weigh",
                    [1, 1, 1],
                    [64, 1, 1],
                    0,
                    &[h.into(), Arg::scalar(buckets), total.into()],
                )
                .unwrap();
            // One atomic add per bucket (37 of the 64 threads pass the bound).
            assert_eq!(stats.stats.total_atomics(), u64::from(buckets), "{file}");
            let weighed: u64 = hist
                .iter()
                .enumerate()
                .map(|(b, &c)| u64::from(c) * (b as u64 + 1))
                .sum();
            assert_eq!(e.device().read::<u64>(total).unwrap(), [5 + weighed]);
        }
    }
}

#[test]
fn float_scalars_and_pointer_arguments_bind_in_order() {
    for file in FILES {
        let e = engine(Backend::Jit);
        let m = load(&e, file);
        let x: Vec<f32> = (0..100).map(|i| i as f32 * 0.5).collect();
        let xb = e.device().upload(&x).unwrap();
        let bias = e.device().upload(&[0.25f32]).unwrap();
        m.launch(
            "scale",
            [1, 1, 1],
            [128, 1, 1],
            0,
            &[
                xb.into(),
                Arg::scalar(3.0f32),
                bias.into(),
                Arg::scalar(90u32),
            ],
        )
        .unwrap();
        let got = e.device().read::<f32>(xb).unwrap();
        for (i, (&g, &v)) in got.iter().zip(&x).enumerate() {
            // Only the first n = 90 change; fma or mul+add round alike for these values.
            let want = if i < 90 { v * 3.0 + 0.25 } else { v };
            assert_eq!(g, want, "{file}: x[{i}]");
        }
    }
}

#[test]
fn a_trap_is_reported_and_the_engine_stays_usable() {
    for backend in Backend::ALL {
        for file in FILES {
            let e = engine(backend);
            let m = load(&e, file);
            let p = e.device().upload(&[0u32; 4]).unwrap();
            // In range: p[3] = 9.
            m.launch(
                "poke",
                [1, 1, 1],
                [1, 1, 1],
                0,
                &[p.into(), Arg::scalar(3i64), Arg::scalar(9u32)],
            )
            .unwrap();
            // Far past the arena: every thread's store traps.
            let err = m
                .launch(
                    "poke",
                    [1, 1, 1],
                    [32, 1, 1],
                    0,
                    &[p.into(), Arg::scalar(1i64 << 40), Arg::scalar(1u32)],
                )
                .unwrap_err();
            match &err {
                Error::Failed {
                    kernel,
                    failure: Failure::Trap(t),
                    ..
                } => {
                    assert_eq!(kernel, "poke");
                    assert_eq!(t.reason.name(), "address_out_of_range", "{file}: {t}");
                }
                other => panic!("{file} on {backend}: {other}"),
            }
            // Negative offsets land below the arena: a trap too.
            let err = m
                .launch(
                    "poke",
                    [1, 1, 1],
                    [1, 1, 1],
                    0,
                    &[p.into(), Arg::scalar(-1i64), Arg::scalar(1u32)],
                )
                .unwrap_err();
            assert!(matches!(err, Error::Failed { .. }), "{err}");
            // Memory and engine are intact.
            assert_eq!(e.device().read::<u32>(p).unwrap(), [0, 0, 0, 9]);
            m.launch(
                "poke",
                [1, 1, 1],
                [1, 1, 1],
                0,
                &[p.into(), Arg::scalar(0i64), Arg::scalar(7u32)],
            )
            .unwrap();
            assert_eq!(e.device().read::<u32>(p).unwrap(), [7, 0, 0, 9]);
        }
    }
}

#[test]
fn signatures_follow_each_dialect() {
    let e = engine(Backend::Jit);
    let ptx = load(&e, "embedding.compute_80.ptx");
    let Signature::Params(ps) = ptx.signature("scale").unwrap() else {
        panic!("a PTX entry has a parameter list");
    };
    let shown: Vec<(String, String, u32)> = ps
        .iter()
        .map(|p| (p.name.clone(), p.ty.to_string(), p.cbank_offset))
        .collect();
    assert_eq!(
        shown,
        [
            ("scale_param_0".into(), "u64".into(), 0x160),
            ("scale_param_1".into(), "f32".into(), 0x168),
            ("scale_param_2".into(), "u64".into(), 0x170),
            ("scale_param_3".into(), "u32".into(), 0x178),
        ]
    );
    let sass = load(&e, "embedding.sm_90.cuobjdump.sass");
    assert!(
        matches!(
            sass.signature("weigh").unwrap(),
            Signature::Listing { base: 0x210, reads_to } if reads_to > 0x210
        ),
        "{}",
        sass.signature("weigh").unwrap()
    );
    // A SASS program file: its declarations, in order.
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/sass/hist_shared.s"
    ))
    .unwrap();
    let hist = e.load("hist_shared.s", &text).unwrap();
    assert_eq!(
        hist.signature("hist").unwrap().to_string(),
        "data (buffer), hist (buffer)"
    );
}

#[test]
fn a_sass_program_file_runs_on_device_buffers() {
    let e = engine(Backend::Jit);
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/sass/hist_shared.s"
    ))
    .unwrap();
    let m = e.load("hist_shared.s", &text).unwrap();
    let data: Vec<u32> = (0..16384u32).map(|i| (i * 7 + i / 3) % 256).collect();
    let d = e.device().upload(&data).unwrap();
    let h = e.device().alloc(4 * 256).unwrap();
    // Its declared `.shared 1024` is the window: no dynamic bytes needed.
    m.launch("hist", [64, 1, 1], [256, 1, 1], 0, &[d.into(), h.into()])
        .unwrap();
    let mut want = vec![0u32; 256];
    for v in data {
        want[v as usize] += 1;
    }
    assert_eq!(e.device().read::<u32>(h).unwrap(), want);
}

#[test]
fn arguments_that_do_not_fit_are_errors() {
    let e = engine(Backend::Jit);
    let m = load(&e, "embedding.compute_80.ptx");
    let b = e.device().alloc(16).unwrap();
    let msg = |r: Result<_, Error>| r.map(|_| ()).unwrap_err().to_string();
    let grid = [1, 1, 1];
    let block = [32, 1, 1];
    // Count.
    let m1 = msg(m.launch("weigh", grid, block, 0, &[b.into()]));
    assert!(
        m1.contains("it takes 3 arguments") && m1.contains("passes 1"),
        "{m1}"
    );
    // A buffer for a 32-bit parameter; a scalar of the wrong size.
    let m2 = msg(m.launch("weigh", grid, block, 0, &[b.into(), b.into(), b.into()]));
    assert!(
        m2.contains("`weigh_param_1` (u32) takes a 4-byte scalar, not a buffer"),
        "{m2}"
    );
    let m3 = msg(m.launch(
        "weigh",
        grid,
        block,
        0,
        &[b.into(), Arg::scalar(1u64), b.into()],
    ));
    assert!(
        m3.contains("takes a 4-byte scalar, not a u64 scalar"),
        "{m3}"
    );
    // A freed buffer.
    let gone = e.device().alloc(8).unwrap();
    e.device().free(gone).unwrap();
    let m4 = msg(m.launch(
        "weigh",
        grid,
        block,
        0,
        &[gone.into(), Arg::scalar(1u32), b.into()],
    ));
    assert!(m4.contains("no live device buffer"), "{m4}");
    // An impossible launch shape; an unknown kernel.
    let m5 = msg(m.launch(
        "weigh",
        grid,
        [2048, 1, 1],
        0,
        &[b.into(), Arg::scalar(1u32), b.into()],
    ));
    assert!(m5.contains("1024"), "{m5}");
    // A scalar wider than 64 bits; a block too large to lower a vISA kernel for.
    let wide = Arg::Scalar {
        ty: atomjit::ir::Ty::B128,
        bits: 0,
    };
    let m9 = msg(m.launch("weigh", grid, block, 0, &[b.into(), wide, b.into()]));
    assert!(m9.contains("wider than the 64 bits"), "{m9}");
    let m6 = msg(m.launch("nope", grid, block, 0, &[]));
    assert!(m6.contains("no kernel named `nope`"), "{m6}");
    // A listing's arguments must reach as far as its code reads.
    let sass = load(&e, "embedding.sm_80.cuobjdump.sass");
    let m7 = msg(sass.launch("weigh", grid, block, 0, &[b.into()]));
    assert!(m7.contains("its code reads its parameters up to"), "{m7}");
    // Nothing above touched the buffer or broke the engine.
    assert_eq!(e.device().read::<u32>(b).unwrap(), [0; 4]);
}

#[test]
fn a_visa_kernel_binds_buffers_and_scalars_through_its_payload() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs/visa/hist8.visaasm"
    ))
    .unwrap();
    for backend in Backend::ALL {
        let e = engine(backend);
        let m = e.load("hist8.visaasm", &text).unwrap();
        let name = m.kernel_names()[0].to_string();
        assert_eq!(m.signature(&name).unwrap(), Signature::Payload);
        // hist8 (programs/visa/model.py): hits[v & mask] += 1, total[v & mask] += v.
        let data: Vec<u32> = (0..128u32).map(|i| (i * 37 + 11) % 1000).collect();
        let d = e.device().upload(&data).unwrap();
        let hits = e.device().alloc(64).unwrap();
        let total = e.device().alloc(64).unwrap();
        let args = [d.into(), hits.into(), total.into(), Arg::scalar(15u32)];
        for round in 1..=2u32 {
            m.launch(&name, [4, 1, 1], [32, 1, 1], 0, &args).unwrap();
            let (mut h, mut t) = (vec![0u32; 16], vec![0u32; 16]);
            for &v in &data {
                h[(v & 15) as usize] += round;
                t[(v & 15) as usize] += round * v;
            }
            assert_eq!(e.device().read::<u32>(hits).unwrap(), h, "{backend}");
            assert_eq!(e.device().read::<u32>(total).unwrap(), t, "{backend}");
        }
        // A work-group that is not whole SIMD8 threads; arguments that leave the payload's
        // `.input MASK` undescribed.
        let err = m
            .launch(&name, [1, 1, 1], [65536, 65536, 1], 0, &args)
            .unwrap_err();
        assert!(err.to_string().contains("1024"), "{err}");
        let err = m
            .launch(&name, [1, 1, 1], [32, 1, 1], 64, &args)
            .unwrap_err();
        assert!(err.to_string().contains("shared local memory"), "{err}");
        let err = m
            .launch(&name, [1, 1, 1], [12, 1, 1], 0, &args)
            .unwrap_err();
        assert!(err.to_string().contains("multiple of 8"), "{err}");
        let err = m
            .launch(&name, [1, 1, 1], [8, 1, 1], 0, &args[..3])
            .unwrap_err();
        assert!(
            err.to_string().contains("cannot take these arguments"),
            "{err}"
        );
    }
}

#[allow(dead_code)]
#[path = "../../examples/multi_kernel.rs"]
mod multi_kernel;

#[test]
fn the_multi_kernel_example_adds_up() {
    for backend in Backend::ALL {
        let e = engine(backend);
        let out = multi_kernel::run(&e).unwrap();
        let (n, buckets) = (multi_kernel::N, multi_kernel::BUCKETS);
        let keys: Vec<u32> = (0..n)
            .map(|i| key(i, buckets, multi_kernel::SEED))
            .collect();
        assert_eq!(out.keys, keys);
        let mut hist = vec![0u32; buckets as usize];
        for &k in &keys {
            hist[k as usize] += 1;
        }
        assert_eq!(out.hist, hist, "{backend}");
        let total: u64 = hist
            .iter()
            .enumerate()
            .map(|(b, &c)| u64::from(c) * (b as u64 + 1))
            .sum();
        assert_eq!(out.total, total, "{backend}");
        // Every key's old value: per bucket, exactly 0 .. count-1 (none lost, none repeated).
        let old = out.old.to_vec::<u32>().unwrap();
        let mut seen: Vec<Vec<u32>> = vec![Vec::new(); buckets as usize];
        for (&k, &o) in keys.iter().zip(&old) {
            seen[k as usize].push(o);
        }
        for (b, mut s) in seen.into_iter().enumerate() {
            s.sort_unstable();
            assert!(s.iter().copied().eq(0..hist[b]), "bucket {b}");
        }
        // Everything was freed.
        assert!(e.device().buffers().is_empty());
    }
}

#[test]
fn tile_atomics_work_on_strided_device_arrays() {
    use atomjit::engine::DeviceArray;
    use atomjit::tile::{DType, Operand, Options, RmwOp, TileView};
    let e = engine(Backend::Jit);
    // A 4×6 int32 array; its transpose as a strided view (shape 6×4, strides 1, 6).
    let data: Vec<i32> = (0..24).collect();
    let a = e.upload_array(&data, &[4, 6]).unwrap();
    let t = DeviceArray::strided(a.buffer(), DType::Int32, &[6, 4], &[1, 6], 0).unwrap();
    // t[5, 1] is a[1, 5] = 11; CAS it 11 -> 100, and t[0, 3] (a[3, 0] = 18) with a wrong
    // expectation.
    let i0 = [5i64, 0];
    let i1 = [1i64, 3];
    let idx = [
        Operand::View(TileView::from_slice(&i0, &[2]).unwrap()),
        Operand::View(TileView::from_slice(&i1, &[2]).unwrap()),
    ];
    let expected = [11i32, 0];
    let old = e
        .atomic_cas(
            &t,
            &idx,
            &Operand::View(TileView::from_slice(&expected, &[2]).unwrap()),
            &Operand::int(100),
            &Options::default(),
        )
        .unwrap();
    assert_eq!(old.to_vec::<i32>().unwrap(), [11, 18]);
    let mut want = data.clone();
    want[11] = 100;
    assert_eq!(e.read_array::<i32>(&a).unwrap(), want);
    // Reading the transpose goes in its own logical order.
    let tt = e.read_array::<i32>(&t).unwrap();
    assert_eq!(tt[..4], [0, 6, 12, 18]);
    // An out-of-bounds index (check_bounds) does nothing; a reversed view (negative stride).
    let r = DeviceArray::strided(a.buffer(), DType::Int32, &[24], &[-1], 23).unwrap();
    let idx = [Operand::View(
        TileView::from_slice(&[0i64, 24, -1], &[3]).unwrap(),
    )];
    let old = e
        .atomic_rmw(RmwOp::Add, &r, &idx, &Operand::int(5), &Options::default())
        .unwrap();
    assert_eq!(old.to_vec::<i32>().unwrap(), [23, 0, 0]);
    want[23] += 5;
    assert_eq!(e.read_array::<i32>(&a).unwrap(), want);
    // Shapes and strides whose reach overflows are errors, not wrapped bounds (a 4-byte buffer
    // viewed with huge strides); an empty array's offset must still be inside its buffer.
    let small = e.device().alloc(4).unwrap();
    let huge = [u64::MAX, u64::MAX, u64::MAX, u64::MAX - 991, 1000];
    let strides = [1i64 << 62, 1 << 62, 1 << 62, 1 << 62, (1 << 62) - 1];
    assert!(DeviceArray::strided(small, DType::Float32, &huge, &strides, 0).is_err());
    assert!(DeviceArray::strided(small, DType::Float32, &[0], &[1], 1 << 40).is_err());
    assert!(DeviceArray::strided(small, DType::Float32, &[0], &[1], u64::MAX).is_err());
    assert!(DeviceArray::strided(small, DType::Float32, &[0], &[1], 1).is_ok());
    // Views that reach outside their buffer, wrong dtypes and freed buffers are errors.
    assert!(DeviceArray::strided(a.buffer(), DType::Int32, &[24], &[-1], 22).is_err());
    assert!(DeviceArray::strided(a.buffer(), DType::Int32, &[5, 6], &[6, 1], 0).is_err());
    assert!(DeviceArray::strided(a.buffer(), DType::Int64, &[13], &[1], 0).is_err());
    assert!(e.read_array::<u32>(&a).is_err());
    e.device().free(a.buffer()).unwrap();
    let err = e
        .atomic_rmw(RmwOp::Add, &r, &idx, &Operand::int(5), &Options::default())
        .unwrap_err();
    assert!(err.to_string().contains("no live device buffer"), "{err}");
}
