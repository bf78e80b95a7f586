//! The engine's own policy, through the embedding API as an embedder calls it: binding, and
//! (below) what the command line builds on (loading files, overrides, the backend diff, bench
//! measurement, exit statuses, JSON reports).

use atomjit::engine::*;
use atomjit::exec;
use atomjit::front::LaunchText;
use atomjit::ir::{Init, Scalar};

/// Two entries with parameters and one without (the integration tests use it too).
const THREE_ENTRIES: &str = include_str!("../fixtures/three_entries.ptx");

fn engine() -> Engine {
    let mut config = Config::default();
    config.backend(Backend::Interp).threads(1);
    Engine::new(&config)
}

fn launch(text: &str) -> LaunchText {
    let mut launch = LaunchText::new();
    launch.push("m.launch", text);
    launch
}

#[test]
fn launch_lines_for_one_entry_bind_that_entry_only() {
    let module = engine()
        .load_with_launch(
            "m.ptx",
            THREE_ENTRIES,
            &launch(".kernel store\n.block 1\n.buffer out u32[1] = 0\n.param value u32 = 7\n.expect out[0] == 7\n"),
        )
        .unwrap();
    assert!(module.unbound("store").unwrap().is_none());
    assert!(
        module.unbound("idle").unwrap().is_none(),
        "no parameters: trivially bound"
    );
    let why = module.unbound("count").unwrap().expect("count is unbound");
    assert_eq!((why.file.as_str(), why.span.line), ("m.ptx", 14));

    let report = module.run("store", &Overrides::default()).unwrap();
    assert!(report.passed(), "{report:?}");
    assert_eq!(report.buffer("out").unwrap().as_u32().unwrap(), [7]);
    assert!(module.run("idle", &Overrides::default()).unwrap().passed());
    match module.run("count", &Overrides::default()) {
        Err(Error::Unbound(p)) => assert!(
            p.message.contains(
                "kernel `count` has 3 parameters (counter .u64, unused .u64, n .u32) but the launch binds 0"
            ),
            "{p}"
        ),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("an unbound entry must not run"),
    }
    assert!(matches!(
        module.prepare("count", &Overrides::default(), Backend::Interp, true),
        Err(Error::Unbound(_))
    ));
}

#[test]
fn lines_for_every_entry_must_bind_each_of_them() {
    // Lines outside any `.kernel` section reach every entry: `count` takes three, not two.
    let e = engine()
        .load_with_launch(
            "m.ptx",
            THREE_ENTRIES,
            &launch(".buffer out u32[1] = 0\n.param value u32 = 7\n"),
        )
        .err()
        .expect("count cannot take store's lines");
    match e {
        Error::Parse(p) => {
            assert_eq!((p.file.as_str(), p.span.line), ("m.launch", 2));
            assert!(p.message.contains("kernel `count` has 3 parameters"), "{p}");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_launch_that_binds_nothing_runnable_is_refused_but_inspection_loads() {
    let one = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry store(.param .u64 out)
{
    ret;
}
";
    match engine().load_with_launch("one.ptx", one, &launch(".grid 2\n")) {
        Err(Error::Parse(p)) => assert!(p.message.contains("but the launch binds 0"), "{p}"),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("nothing in this launch could run"),
    }
    // Without a launch (check, dump) the entry loads unbound.
    let module = engine().load("one.ptx", one).unwrap();
    assert!(module.unbound("store").unwrap().is_some());
    assert!(matches!(
        module.run("store", &Overrides::default()),
        Err(Error::Unbound(_))
    ));
    // With an entry that needs nothing, an empty launch loads the module.
    let module = engine()
        .load_with_launch("m.ptx", THREE_ENTRIES, &LaunchText::new())
        .unwrap();
    assert!(module.run("idle", &Overrides::default()).unwrap().passed());
}

// ---- What the command line builds on -------------------------------------------------------

/// A SASS program: `ring` (2 CTAs of 100 threads, 200 `INC` and 200 `ADD` atomics) with a
/// scalar parameter, and `trap`, which stores out of range.
const RING: &str = "
.kernel ring
.grid 2
.block 100
.shared 4
.buffer slots u32[32] = 0
.buffer wide u64[2] = 0xffffffffffffffff
.param n u16 = 3
        MOV R0, 0xf ;
        ATOMS.INC R1, [0x0], R0 ;
        S2R R2, SR_CTAID.X ;
        IMAD R3, R2, 0x10, R1 ;
        IMAD.WIDE.U32 R4, R3, 0x4, c[0x0][slots] ;
        MOV R6, 0x1 ;
        RED.E.ADD.STRONG.GPU [R4.64], R6 ;
        EXIT ;
.expect sum(slots) == 200
.kernel trap
.block 1
.shared 4
        ATOMS.ADD RZ, [0x4], R0 ;
        EXIT ;
";

fn ring() -> Module {
    engine().load("ring.s", RING).unwrap()
}

#[test]
fn exit_statuses_have_one_mapping_and_the_largest_wins() {
    let all = [
        ExitStatus::Ok,
        ExitStatus::Failed,
        ExitStatus::Usage,
        ExitStatus::Trap,
        ExitStatus::Watchdog,
    ];
    assert_eq!(all.map(ExitStatus::code), [0, 1, 2, 3, 4]);
    for a in all {
        for b in all {
            assert_eq!(a.max(b).code(), a.code().max(b.code()));
        }
    }
    let module = ring();
    let passed = module.run("ring", &Overrides::default()).unwrap();
    assert_eq!(passed.status(), ExitStatus::Ok);
    let failed = module
        .run(
            "ring",
            &module
                .overrides("ring", &args_expecting("sum(slots) == 1"))
                .unwrap(),
        )
        .unwrap();
    assert_eq!(failed.status(), ExitStatus::Failed);
    let trapped = module.run("trap", &Overrides::default()).unwrap();
    assert_eq!(trapped.status(), ExitStatus::Trap);
    assert_eq!(
        ExitStatus::of_launch_error(&exec::LaunchError::Config("x".into())),
        ExitStatus::Usage
    );
}

fn args_expecting(expect: &str) -> OverrideArgs {
    OverrideArgs {
        expects: vec![expect.to_string()],
        ..OverrideArgs::default()
    }
}

#[test]
fn a_kernel_selection_defaults_to_every_kernel_in_file_order() {
    let module = ring();
    assert_eq!(module.selected_kernels(&[]), ["ring", "trap"]);
    let some = vec!["trap".to_string(), "nope".to_string()];
    assert_eq!(module.selected_kernels(&some), some);
}

#[test]
fn backends_are_named_and_parsed() {
    for b in Backend::ALL {
        assert_eq!(b.name().parse::<Backend>(), Ok(b));
        assert_eq!(b.to_string(), b.name());
    }
    assert_eq!(
        "JIT".parse::<Backend>(),
        Err("unknown backend `JIT` (one of jit, interp)".to_string())
    );
}

#[test]
fn overrides_are_parsed_from_their_text() {
    let module = ring();
    let args = OverrideArgs {
        grid: Some("1".into()),
        block: Some("16, 2".into()),
        shared: Some(8),
        sets: vec!["slots = iota".into(), "n=7".into()],
        expects: vec!["slots[3] == 4".into()],
    };
    let o = module.overrides("ring", &args).unwrap();
    assert_eq!(
        (o.grid, o.block, o.shared_bytes),
        (Some([1, 1, 1]), Some([16, 2, 1]), Some(8))
    );
    assert_eq!(o.buffers, [("slots".to_string(), Init::Iota)]);
    assert_eq!(o.params, [("n".to_string(), Scalar::Int(7))]);
    assert_eq!(o.expects[0].text, "slots[3] == 4");

    let error = |args: OverrideArgs| module.overrides("ring", &args).unwrap_err().to_string();
    let set = |s: &str| OverrideArgs {
        sets: vec![s.to_string()],
        ..OverrideArgs::default()
    };
    assert_eq!(error(set("slots")), "--set slots: expected NAME=VALUE");
    assert_eq!(
        error(set("nope=1")),
        "--set nope=1: kernel `ring` has no buffer or parameter named `nope`"
    );
    assert!(error(set("n=70000")).starts_with("--set n=70000: 70000 does not fit u16"));
    assert!(error(set("slots=zeros")).contains("expected an initialiser"));
    // A buffer's initialiser is checked against its element type and length (slots is u32[32]).
    assert!(
        error(set("slots=-1")).starts_with("--set slots=-1: -1 does not fit u32"),
        "{}",
        error(set("slots=-1"))
    );
    let list: Vec<String> = (0..33).map(|i| i.to_string()).collect();
    let long = format!("slots={{{}}}", list.join(","));
    assert!(
        error(set(&long)).contains("33 values"),
        "{}",
        error(set(&long))
    );
    assert!(error(set("slots=random(1, 0, 5000000000)")).contains("does not fit u32"));
    let grid = OverrideArgs {
        grid: Some("0".into()),
        ..OverrideArgs::default()
    };
    assert!(error(grid).starts_with("--grid 0: "));
    assert!(error(args_expecting("sum(slots) ==")).starts_with("--expect sum(slots) ==: "));
    assert!(matches!(
        module.overrides("nope", &OverrideArgs::default()),
        Err(Error::UnknownKernel(..))
    ));
}

#[test]
fn the_backend_diff_reports_agreement_or_the_first_difference() {
    let module = ring();
    let ring_diff = module.diff_backends("ring", &Overrides::default()).unwrap();
    assert!(ring_diff.difference.is_none());
    assert_eq!(ring_diff.status(), ExitStatus::Ok);
    assert_eq!(
        ring_diff.shared_outcome(),
        "both completed, expectations passed"
    );
    // Both backends trap the same way: no difference, but the diff's status is the trap's.
    let trap_diff = module.diff_backends("trap", &Overrides::default()).unwrap();
    assert!(trap_diff.difference.is_none());
    assert_eq!(trap_diff.status(), ExitStatus::Trap);
    assert!(trap_diff.shared_outcome().starts_with("both failed: trap"));
    // A failed expectation is the diff's status too.
    let mut o = Overrides::default();
    o.expects
        .push(atomjit::front::program::parse_expect("slots[0] == 999").unwrap());
    let failed = module.diff_backends("ring", &o).unwrap();
    assert!(failed.difference.is_none());
    assert_eq!(failed.status(), ExitStatus::Failed);
    let trap = match module.run("trap", &Overrides::default()).unwrap().failure {
        Some(f) => f,
        None => panic!("trap must trap"),
    };
    let outcome = Difference::Outcome {
        interp: None,
        jit: Some(trap.clone()),
    };
    assert_eq!(
        outcome.to_string(),
        format!("outcome differs: interp completed, jit {trap}")
    );
    let buffer = Difference::Buffer {
        name: "slots".into(),
        index: 3,
        interp: Scalar::Int(7),
        jit: Scalar::Int(6),
    };
    assert_eq!(
        buffer.to_string(),
        "buffer `slots` differs first at element 3: interp 7, jit 6"
    );
    let stats = Difference::Statistics {
        interp: exec::Stats::default(),
        jit: exec::Stats {
            cas_failures: 1,
            ..exec::Stats::default()
        },
    };
    assert!(stats
        .to_string()
        .starts_with("statistics differ: interp Stats"));
    assert!(matches!(
        module.diff_backends("nope", &Overrides::default()),
        Err(Error::UnknownKernel(..))
    ));
}

#[test]
fn bench_measures_every_launch_on_restored_memory() {
    let module = ring();
    let mut seen = Vec::new();
    let outcome = module
        .bench("ring", 3, Backend::Interp, &mut |done, _| seen.push(done))
        .unwrap();
    assert_eq!(seen, [1, 2, 3]);
    let BenchOutcome::Measured(m) = outcome else {
        panic!("ring runs")
    };
    assert_eq!((m.launches, m.lanes, m.atomics), (3, 200, 400));
    assert!(m.min_seconds <= m.median_seconds && m.median_seconds > 0.0);
    assert_eq!(m.lanes_per_second(), 200.0 / m.median_seconds);
    assert_eq!(m.atomics_per_second(), 400.0 / m.median_seconds);

    // A failing launch stops the benchmark with its report.
    let mut calls = 0;
    match module.bench("trap", 5, Backend::Jit, &mut |_, _| calls += 1) {
        Ok(BenchOutcome::Failed(report)) => assert_eq!(report.status(), ExitStatus::Trap),
        other => panic!("{other:?}"),
    }
    assert_eq!(calls, 0);
}

#[test]
fn run_reports_serialise_with_the_json_field_names() {
    let module = ring();
    let report = module.run("ring", &Overrides::default()).unwrap();
    let text = to_json_text(&[report.json(&["wide".into(), "nope".into()])]);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let r = &v[0];
    let mut keys: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "atomics",
            "backend",
            "block",
            "buffers",
            "cas_failures",
            "deterministic",
            "exit_code",
            "expectations",
            "failure",
            "fallback",
            "grid",
            "host_threads",
            "kernel",
            "shared_bytes",
            "spin_fast_fails",
            "wall_seconds",
            "warp_instructions"
        ]
    );
    assert_eq!(r["kernel"], "ring");
    assert_eq!(r["backend"], "interp");
    assert_eq!(r["grid"], serde_json::json!([2, 1, 1]));
    assert_eq!(r["atomics"]["inc"], 200);
    assert_eq!(r["atomics"]["cas"], 0);
    assert_eq!(r["failure"], serde_json::Value::Null);
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["expectations"][0]["passed"], true);
    // u64 values past i64 are strings; names the report lacks are left out.
    assert_eq!(
        r["buffers"],
        serde_json::json!({"wide": ["18446744073709551615", "18446744073709551615"]})
    );
    // Keys print sorted, at every level.
    let at = |key: &str| text.find(&format!("\"{key}\"")).unwrap();
    assert!(at("atomics") < at("backend") && at("kernel") < at("wall_seconds"));

    let trapped = module.run("trap", &Overrides::default()).unwrap();
    let v = serde_json::to_value(trapped.json(&[])).unwrap();
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["failure"]["trap"]["reason"], "AddressOutOfRange");
    assert_eq!(
        serde_json::to_value(JsonScalar::from(Scalar::Float(f64::NAN))).unwrap(),
        serde_json::Value::Null
    );
}

#[test]
fn files_load_with_their_sidecar_for_what_they_are_loaded_for() {
    let dir = crate::scratch_dir("load");
    let ptx = dir.join("m.ptx");
    std::fs::write(&ptx, THREE_ENTRIES).unwrap();
    let file = ptx.to_string_lossy().into_owned();
    let e = engine();

    // No sidecar: inspecting loads every entry unbound; running binds the lines for `store`.
    let loaded = e.load_file(&file, &Purpose::Inspect).unwrap();
    assert!(loaded.module.unbound("store").unwrap().is_some());
    assert!(loaded.sources.launch.is_empty());
    let request = LaunchRequest {
        lines: vec![
            LaunchLine::Buffer("out u32[1] = 0".into()),
            LaunchLine::Param("value u32 = 7".into()),
        ],
        kernels: vec!["store".into()],
        ..LaunchRequest::default()
    };
    assert_eq!(
        request.lines_text(),
        ".kernel store\n.buffer out u32[1] = 0\n.param value u32 = 7"
    );
    let loaded = e.load_file(&file, &Purpose::Run(request.clone())).unwrap();
    assert!(loaded.module.unbound("store").unwrap().is_none());
    assert_eq!(
        loaded.sources.text_of("command line"),
        Some(request.lines_text().as_str())
    );
    assert_eq!(loaded.sources.text_of(&file), Some(THREE_ENTRIES));

    // The sidecar is read for both purposes; its errors are shown against its own text.
    let sidecar = dir.join("m.launch");
    std::fs::write(&sidecar, ".kernel store\n.grid 2\n.grid 3\n").unwrap();
    for purpose in [Purpose::Inspect, Purpose::Run(LaunchRequest::default())] {
        let err = e
            .load_file(&file, &purpose)
            .err()
            .expect("a repeated .grid");
        let shown = err.render();
        assert!(
            shown.contains("duplicate `.grid` for kernel `store`"),
            "{shown}"
        );
        assert!(shown.contains("m.launch:3:1"), "{shown}");
        assert!(shown.contains(".grid 3\n"), "the line in {shown}");
        assert!(shown.contains('^'), "a caret in {shown}");
    }
    // An explicit launch file replaces the sidecar; one that cannot be read says so.
    let missing = LaunchRequest {
        launch_file: Some(dir.join("none.launch")),
        ..LaunchRequest::default()
    };
    let err = e.load_file(&file, &Purpose::Run(missing)).err().unwrap();
    assert!(matches!(err, LoadError::Read(_)));
    assert!(
        err.render().starts_with("error: cannot read launch file "),
        "{err}"
    );
    let err = e
        .load_file(&dir.join("none.ptx").to_string_lossy(), &Purpose::Inspect)
        .err()
        .unwrap();
    assert!(err.to_string().starts_with("cannot read "), "{err}");

    // Errors while running are shown the same way: an unbound entry at the kernel.
    std::fs::remove_file(&sidecar).unwrap();
    let loaded = e.load_file(&file, &Purpose::Run(request)).unwrap();
    let unbound = loaded
        .module
        .run("count", &Overrides::default())
        .err()
        .unwrap();
    let shown = loaded.sources.render(&unbound);
    assert!(shown.contains("kernel `count` has 3 parameters"), "{shown}");
    assert!(
        shown.contains(".visible .entry count("),
        "the line in {shown}"
    );
    assert_eq!(
        loaded
            .sources
            .render(&Error::Launch("out of memory".into())),
        "error: out of memory\n"
    );
}

#[test]
fn validation_errors_are_shown_with_their_rule() {
    let dir = crate::scratch_dir("invalid");
    let path = dir.join("bad.s");
    std::fs::write(
        &path,
        ".kernel k\n.shared 16\n  ATOMS.ADD.U64 R0, [0x0], R2 ;\n  EXIT ;\n",
    )
    .unwrap();
    let err = engine()
        .load_file(
            &path.to_string_lossy(),
            &Purpose::Run(LaunchRequest::default()),
        )
        .err()
        .unwrap();
    let shown = err.render();
    assert!(shown.contains("invalid kernel `k`"), "{shown}");
    assert!(shown.contains("rule: "), "{shown}");
    assert!(shown.contains(":3:"), "{shown}");
}

#[test]
fn whole_buffer_integer_equality_compares_bytes_exactly() {
    // The fast path for `NAME == V` on integers: signed values, narrow types, the first
    // mismatch named; floats keep numeric equality (-0 == 0).
    let src = ".kernel k\n.block 1
.buffer a s16[5] = -1
.buffer b u8[4] = {7, 7, 9, 7}
.buffer c f32[3] = -0.0
.buffer d s64[2] = -5
.expect a == -1
.expect b == 7
.expect c == 0
.expect d == -5
EXIT ;";
    let r = engine()
        .load("eq.s", src)
        .unwrap()
        .run("k", &Overrides::default())
        .unwrap();
    let verdicts: Vec<(bool, &str)> = r
        .expectations
        .iter()
        .map(|e| (e.passed, e.actual.as_str()))
        .collect();
    assert_eq!(
        verdicts,
        [
            (true, "all 5 elements"),
            (false, "b[2] = 9"),
            (true, "all 3 elements"),
            (true, "all 2 elements")
        ]
    );
}

/// A generated kernel of about `insts` instructions: every lane of 64 runs a chain of
/// add / load / multiply-add / store on its own word of `out`, so the result depends on every
/// instruction and on the lane.
pub(crate) fn generated_kernel(insts: usize) -> String {
    let mut src = String::from(
        ".kernel gen\n.block 64\n.buffer out u32[64] = 0\nS2R R1, SR_TID.X ;\n\
         IMAD.WIDE.U32 R2, R1, 0x4, c[0x0][out] ;\nMOV R0, 0x1 ;\n",
    );
    for _ in 0..insts / 4 {
        src.push_str(
            "IADD3 R0, R0, R1, RZ ;\nLDG.E R4, [R2.64] ;\nIMAD R5, R4, 0x3, R0 ;\n\
             STG.E [R2.64], R5 ;\n",
        );
    }
    src.push_str("EXIT ;\n");
    src
}

fn run_generated(src: &str, timeout: Option<std::time::Duration>) -> RunReport {
    let mut config = Config::default();
    config.backend(Backend::Jit).threads(2).timeout(timeout);
    let module = Engine::new(&config).load("gen.s", src).unwrap();
    module.run("gen", &Overrides::default()).unwrap()
}

#[test]
fn a_kernel_whose_compile_estimate_exceeds_half_the_time_limit_runs_on_the_interpreter() {
    let src = generated_kernel(3000);
    let insts = 3000 + 4;
    // 3,004 instructions are estimated at 3,004 × 50 µs = 0.150 s, over half of 0.05 s.
    let short = run_generated(&src, Some(std::time::Duration::from_millis(50)));
    assert_eq!(short.backend, Backend::Interp);
    let why = short.fallback.as_deref().expect("the report says why");
    assert!(why.contains(&format!("{insts} instructions")), "{why}");
    assert!(why.contains("0.150 s to compile"), "{why}");
    assert!(why.contains("compile budget of 0.025 s"), "{why}");
    assert!(short.failure.is_none(), "{:?}", short.failure);
    // With a long limit (or none) the same kernel is compiled, and the results are the same.
    for timeout in [Some(std::time::Duration::from_secs(60)), None] {
        let long = run_generated(&src, timeout);
        assert_eq!(long.backend, Backend::Jit);
        assert_eq!(long.fallback, None);
        assert_eq!(long.buffer("out"), short.buffer("out"));
        assert_eq!(long.launch.stats.warp_insts, short.launch.stats.warp_insts);
    }
    let out: Vec<Scalar> = short.buffer("out").unwrap().values().collect();
    assert_ne!(out[0], out[1], "lanes compute different values");
}

#[test]
fn the_compile_budget_is_an_estimate_from_the_instruction_count() {
    use std::time::Duration;
    assert_eq!(jit_compile_estimate(1000), JIT_COMPILE_COST_PER_INST * 1000);
    // Exactly at the budget compiles; one instruction more does not.
    let at = Duration::from_secs(1); // half is 0.5 s = 10,000 × 50 µs
    let n = (at / 2).as_micros() as usize / JIT_COMPILE_COST_PER_INST.as_micros() as usize;
    assert_eq!(jit_budget_fallback("k", n, Some(at)), None);
    assert!(jit_budget_fallback("k", n + 1, Some(at)).is_some());
    // No limit: only the instruction cap applies.
    assert_eq!(jit_budget_fallback("k", JIT_MAX_INSTS, None), None);
    let why = jit_budget_fallback("k", JIT_MAX_INSTS + 1, None).unwrap();
    assert!(
        why.contains("more than the JIT compiles within its budget"),
        "{why}"
    );
    // Same inputs, same answer (no measurement involved).
    let t = Some(Duration::from_millis(70));
    assert_eq!(
        jit_budget_fallback("k", 2000, t),
        jit_budget_fallback("k", 2000, t)
    );
}
