//! `atomjit run FILE`: run kernels, print their reports (or JSON), check expectations; with
//! `--diff`, compare the interpreter and the JIT instead.

use atomjit::engine::{
    to_json_text, Backend, Config, Engine, ExitStatus, LaunchLine, LaunchRequest, OverrideArgs,
    Purpose, RunReport,
};
use atomjit::ir::AtomicOp;
use clap::Args;

#[derive(Args)]
pub struct RunArgs {
    /// The program file (`.ptx`: PTX; `.visaasm`, `.visa`, `.isa`: vISA; anything else: SASS). `FILE` with the extension
    /// `.launch`, if it exists, is read as its launch file.
    file: String,
    /// A launch file in program-file directive syntax (`.grid`, `.block`, `.shared`,
    /// `.buffer`, `.param`, `.expect`, `.kernel NAME` sections); default: FILE's `.launch`
    /// sidecar if present.
    #[arg(long, value_name = "FILE")]
    launch: Option<String>,
    /// A buffer `NAME TY[LEN] = INIT`, bound to the next `.param` of a PTX entry (a `.u64`
    /// pointer) or appended to a SASS kernel's declarations. Repeatable; with `--param`, in
    /// parameter order.
    #[arg(long = "buffer", value_name = "DECL", action = clap::ArgAction::Append)]
    buffers: Vec<String>,
    /// A scalar parameter `NAME TY = VALUE`, bound like `--buffer`. Repeatable.
    #[arg(long = "param", value_name = "DECL", action = clap::ArgAction::Append)]
    params: Vec<String>,
    /// `OFFSET KIND`: a vISA kernel's payload holds an implicit value (`num_groups`,
    /// `global_size`, `local_size`, `enqueued_local_size`, `global_id_offset`, `private_base`)
    /// at byte `OFFSET`, as a launch file's `.payload` line says. Repeatable.
    #[arg(long = "payload", value_name = "OFFSET KIND", action = clap::ArgAction::Append)]
    payloads: Vec<String>,
    /// The `--buffer`/`--param`/`--payload` lines in command-line order (filled from the raw
    /// arguments).
    #[arg(skip)]
    pub lines: Vec<LaunchLine>,
    /// Run only this kernel (repeatable; default: every kernel in file order).
    #[arg(long = "kernel", short = 'k')]
    kernels: Vec<String>,
    /// CTAs per grid dimension, `X[,Y[,Z]]` (overrides `.grid`).
    #[arg(long)]
    grid: Option<String>,
    /// Threads per CTA dimension, `X[,Y[,Z]]` (overrides `.block`).
    #[arg(long)]
    block: Option<String>,
    /// Shared-memory bytes per CTA (overrides `.shared`).
    #[arg(long)]
    shared: Option<u32>,
    /// Host worker threads (default: all cores; 1 to 1024).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// One host thread, fixed order: bit-identical results run to run.
    #[arg(long)]
    deterministic: bool,
    /// Execution backend.
    #[arg(long, value_parser = crate::backend(), default_value = "jit")]
    backend: Backend,
    /// Set a buffer's initial value or a scalar parameter: `NAME=INIT` (e.g. `data=random(9,0,16)`,
    /// `n=4096`). Repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    sets: Vec<String>,
    /// An extra expectation in `.expect` syntax (e.g. `sum(hist) == 4096`). Repeatable.
    #[arg(long = "expect", value_name = "EXPR")]
    expects: Vec<String>,
    /// Print a buffer's contents after the run (repeatable).
    #[arg(long = "dump", value_name = "NAME")]
    dumps: Vec<String>,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Watchdog limit in seconds for each launch (0: none).
    #[arg(long, default_value_t = 60.0, value_parser = crate::seconds)]
    timeout: f64,
    /// Run the interpreter and the JIT deterministically on copies of the memory and report the
    /// first difference in memory, statistics or traps.
    #[arg(long)]
    diff: bool,
}

/// The `--buffer` and `--param` values in the order they were given (a PTX entry's parameters
/// bind in that order).
pub fn ordered_lines(m: &clap::ArgMatches) -> Vec<LaunchLine> {
    type MakeLine = fn(String) -> LaunchLine;
    let mut lines: Vec<(usize, LaunchLine)> = Vec::new();
    let kinds: [(&str, MakeLine); 3] = [
        ("buffers", LaunchLine::Buffer),
        ("params", LaunchLine::Param),
        ("payloads", LaunchLine::Payload),
    ];
    for (id, line) in kinds {
        if let (Some(values), Some(indices)) = (m.get_many::<String>(id), m.indices_of(id)) {
            for (v, i) in values.zip(indices) {
                lines.push((i, line(v.clone())));
            }
        }
    }
    lines.sort_by_key(|(i, _)| *i);
    lines.into_iter().map(|(_, l)| l).collect()
}

pub fn run(args: RunArgs) -> ExitStatus {
    let mut config = Config::default();
    config
        .backend(args.backend)
        .deterministic(args.deterministic)
        .timeout(crate::watchdog(args.timeout));
    if let Some(t) = args.threads {
        if args.deterministic && t != 1 {
            errln!("error: --deterministic runs on one host thread; --threads {t} contradicts it");
            return ExitStatus::Usage;
        }
        config.threads(t as usize);
    }
    if args.deterministic {
        config.threads(1);
    }
    // A kernel named twice is run once (and gets the command line's launch lines once).
    let mut kernels_named: Vec<String> = Vec::new();
    for k in &args.kernels {
        if !kernels_named.contains(k) {
            kernels_named.push(k.clone());
        }
    }
    let purpose = Purpose::Run(LaunchRequest {
        launch_file: args.launch.as_ref().map(Into::into),
        lines: args.lines.clone(),
        kernels: kernels_named.clone(),
    });
    let loaded = match crate::load(&Engine::new(&config), &args.file, &purpose) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    let module = &loaded.module;
    let kernels = module.selected_kernels(&kernels_named);
    let overrides = OverrideArgs {
        grid: args.grid.clone(),
        block: args.block.clone(),
        shared: args.shared,
        sets: args.sets.clone(),
        expects: args.expects.clone(),
    };
    // Command-line expectations and dumps are checked before anything runs, as their file
    // forms are: each must name a buffer of some kernel run, and applies to those kernels.
    let kernel_refs: Vec<&str> = kernels.iter().map(String::as_str).collect();
    for e in &args.expects {
        if let Err(e) = module.expectation_kernels(&kernel_refs, e) {
            err!("{}", loaded.sources.render(&e));
            return ExitStatus::Usage;
        }
    }
    for name in &args.dumps {
        if !kernel_refs.iter().any(|k| module.has_buffer(k, name)) {
            errln!("error: --dump {name}: no kernel run has a buffer named `{name}`");
            return ExitStatus::Usage;
        }
    }
    let mut status = ExitStatus::Ok;
    if args.diff {
        let mut diffs = Vec::new();
        for kernel in &kernels {
            match module
                .overrides(kernel, &overrides)
                .and_then(|o| module.diff_backends(kernel, &o))
            {
                Ok(d) => {
                    status = status.max(d.status());
                    if !args.json {
                        print_diff(kernel, &d, &args.dumps);
                    }
                    diffs.push(d);
                }
                Err(e) => {
                    err!("{}", loaded.sources.render(&e));
                    status = status.max(ExitStatus::Usage);
                }
            }
        }
        if args.json {
            let json: Vec<_> = diffs.iter().map(|d| d.json(&args.dumps)).collect();
            outln!("{}", to_json_text(&json));
        }
        return status;
    }
    let mut reports = Vec::new();
    for kernel in &kernels {
        match module
            .overrides(kernel, &overrides)
            .and_then(|o| module.run(kernel, &o))
        {
            Ok(r) => {
                status = status.max(r.status());
                if !args.json {
                    print_report(&r, &args.dumps);
                }
                reports.push(r);
            }
            Err(e) => {
                err!("{}", loaded.sources.render(&e));
                status = status.max(ExitStatus::Usage);
            }
        }
    }
    if args.json {
        let json: Vec<_> = reports.iter().map(|r| r.json(&args.dumps)).collect();
        outln!("{}", to_json_text(&json));
    }
    status
}

/// `--diff`: agreement with what both runs did, or the first difference; then each failed
/// expectation and the dumps (of both runs when they differ).
fn print_diff(kernel: &str, d: &atomjit::engine::BackendDiff, dumps: &[String]) {
    match &d.difference {
        None if d.inconclusive() => outln!("kernel {kernel}: {}", d.shared_outcome()),
        None => outln!(
            "kernel {kernel}: interp and jit agree (memory, statistics, traps): {}",
            d.shared_outcome()
        ),
        Some(diff) => outln!("kernel {kernel}: DIFFERENCE: {diff}"),
    }
    if let Some(why) = &d.jit.fallback {
        outln!("  note: {why} (so both runs used it)");
    }
    for r in [&d.interp, &d.jit] {
        for e in r.expectations.iter().filter(|e| !e.passed) {
            outln!(
                "  {}: expect {}: FAILED (expected {}, actual {})",
                r.backend,
                e.text,
                e.expected,
                e.actual
            );
        }
    }
    let runs: &[&RunReport] = if d.difference.is_some() {
        &[&d.interp, &d.jit]
    } else {
        &[&d.interp]
    };
    for r in runs {
        print_dumps(r, dumps, d.difference.is_some());
    }
}

fn print_report(r: &RunReport, dumps: &[String]) {
    // Validated launches have at most 2^31 x 2^16 x 2^16 CTAs of 1024 threads: u128 holds it.
    let threads: u128 = r.block.iter().map(|&d| d as u128).product::<u128>()
        * r.grid.iter().map(|&d| d as u128).product::<u128>();
    outln!(
        "kernel {}: grid {}x{}x{}, block {}x{}x{}, shared {} B, {} threads, backend {}, {} host thread{}{}",
        r.kernel,
        r.grid[0],
        r.grid[1],
        r.grid[2],
        r.block[0],
        r.block[1],
        r.block[2],
        r.shared_bytes,
        threads,
        r.backend.name(),
        r.launch.threads,
        if r.launch.threads == 1 { "" } else { "s" },
        if r.deterministic { " (deterministic)" } else { "" }
    );
    if let Some(why) = &r.fallback {
        outln!("  note: {why}");
    }
    if let (Some(f), false) = (&r.failure, r.expected_trap) {
        // A watchdog report ends with its list of warps' lines.
        outln!("  FAILED: {}", f.to_string().trim_end());
        let (l, s) = (&r.launch, &r.launch.stats);
        outln!(
            "  before it stopped: {} CTAs finished, {} warp instructions, {} atomics, {:.3} ms",
            l.ctas,
            s.warp_insts,
            s.total_atomics(),
            l.wall.as_secs_f64() * 1e3
        );
        // `.expect trap` with another trap (or the watchdog): its verdict.
        for e in &r.expectations {
            outln!(
                "  expect {}: FAILED (expected {}, actual {})",
                e.text,
                e.expected,
                e.actual
            );
        }
    } else if r.expected_trap {
        for e in &r.expectations {
            outln!("  expect {}: ok (actual {})", e.text, e.actual);
        }
    } else {
        outln!("  wall time: {:.3} ms", r.launch.wall.as_secs_f64() * 1e3);
        let s = &r.launch.stats;
        let by_op: Vec<String> = AtomicOp::ALL
            .iter()
            .filter(|op| s.atomics[op.index()] > 0)
            .map(|op| format!("{} {}", op.name(), s.atomics[op.index()]))
            .collect();
        outln!(
            "  atomics: {} ({}), CAS failures: {}, SPIN fast-fails: {}",
            s.total_atomics(),
            if by_op.is_empty() {
                "none".to_string()
            } else {
                by_op.join(", ")
            },
            s.cas_failures,
            s.spin_fast_fails
        );
        for e in &r.expectations {
            let verdict = if e.passed { "ok" } else { "FAILED" };
            outln!(
                "  expect {}: {verdict} (expected {}, actual {})",
                e.text,
                e.expected,
                e.actual
            );
        }
    }
    print_dumps(r, dumps, false);
}

/// The `--dump` buffers of a run, prefixed by its backend when `by_backend`.
fn print_dumps(r: &RunReport, dumps: &[String], by_backend: bool) {
    for name in dumps {
        if let Some(b) = r.buffer(name) {
            let values: Vec<String> = b.values().map(|v| v.to_string()).collect();
            let who = if by_backend {
                format!("{}: ", r.backend)
            } else {
                String::new()
            };
            outln!(
                "  {who}{} {}[{}] = {{{}}}",
                b.name,
                b.elem,
                b.len(),
                values.join(", ")
            );
        }
    }
}
