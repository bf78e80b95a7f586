//! The `atomjit` command line: a thin client of [`atomjit::engine`].
//!
//! Exit codes: 0 success, 1 an expectation failed, 2 usage/parse/validation error, 3 trap,
//! 4 watchdog (when kernels fail differently, the largest code wins). `litmus` uses 1 for a
//! forbidden outcome seen, with the same meaning for the others.

use atomjit::diag;
use atomjit::engine::{Backend, Config, Engine, Error, Failure, Module, Overrides, RunReport};
use atomjit::front::program as directives;
use atomjit::front::LaunchText;
use atomjit::ir::{AtomicOp, ParamKind};
use clap::{Args, Parser, Subcommand};
use std::process::ExitCode;
use std::time::Duration;

/// `println!` on standard output that never panics: a closed pipe ends the process quietly
/// (status 141, as a shell reports SIGPIPE), any other write error with a message (status 2).
macro_rules! outln {
    () => {
        write_stdout(format_args!("\n"))
    };
    ($($t:tt)*) => {
        write_stdout(format_args!("{}\n", format_args!($($t)*)))
    };
}

/// `print!` on standard output, with the error handling of [`outln!`].
macro_rules! out {
    ($($t:tt)*) => {
        write_stdout(format_args!($($t)*))
    };
}

fn write_stdout(args: std::fmt::Arguments) {
    use std::io::Write;
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(2);
    }
}

/// A number of seconds on the command line: 0, or finite from 1 ms to ~31 years (so it
/// converts to a nonzero `Duration`).
fn seconds(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number of seconds"))?;
    if !v.is_finite() || !(0.0..=1e9).contains(&v) {
        return Err(format!("`{s}`: expected seconds between 0 and 1e9"));
    }
    if v > 0.0 && v < 1e-3 {
        // It would round to a zero `Duration`, a watchdog that fires at once (0 means none).
        return Err(format!(
            "`{s}`: expected 0 (none) or at least 0.001 seconds"
        ));
    }
    Ok(v)
}

#[derive(Parser)]
#[command(
    name = "atomjit",
    version,
    about = "Run GPU shader programs built around atomic memory operations on the CPU"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the kernels of a program file and check its expectations.
    Run(RunArgs),
    /// Parse and validate a program file without running it.
    Check {
        /// The program file.
        file: String,
    },
    /// Print an intermediate form of a program.
    Dump {
        #[command(subcommand)]
        what: DumpWhat,
    },
    /// Run each kernel repeatedly and report median time, lanes/s and atomics/s.
    Bench(BenchArgs),
    /// Run litmus tests: histogram the outcomes of racing CTAs, fail on a forbidden one.
    Litmus(LitmusArgs),
}

#[derive(Args)]
struct LitmusArgs {
    /// The `.litmus` files.
    #[arg(required = true)]
    files: Vec<String>,
    /// Iterations per file.
    #[arg(long, default_value_t = 100_000)]
    iterations: u64,
    /// Independent copies of each test run side by side, each with one host thread per litmus
    /// thread (useful only with at least copies × litmus threads cores; 1 to 256).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Maximum random delay before each litmus thread, in `spin_loop` hints (~27 ns each here;
    /// at most 1,000,000).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    max_spins: u32,
    /// Seed of the random delays.
    #[arg(long, default_value_t = 0x5eed_1175_0000_0001)]
    seed: u64,
    /// Stop a file's run once its condition has been satisfied this many times.
    #[arg(long, value_name = "N")]
    stop_after: Option<u64>,
    /// Stop starting iterations of a file after this many seconds.
    #[arg(long, value_name = "SECS", value_parser = seconds)]
    time_limit: Option<f64>,
    /// Watchdog limit in seconds for one litmus thread in one iteration (0: none).
    #[arg(long, default_value_t = 10.0, value_parser = seconds)]
    timeout: f64,
    /// Print the reports as JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct BenchArgs {
    /// The program file (with its `.launch` sidecar, if any).
    file: String,
    /// A launch file (default: FILE's `.launch` sidecar if present).
    #[arg(long, value_name = "FILE")]
    launch: Option<String>,
    /// Benchmark only this kernel (repeatable; default: every kernel).
    #[arg(long = "kernel", short = 'k')]
    kernels: Vec<String>,
    /// Timed launches per kernel (1 to 1,000,000).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    iterations: u64,
    /// Host worker threads (default: all cores; 1 to 1024).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// Execution backend.
    #[arg(long, value_enum, default_value = "jit")]
    backend: Backend,
    /// Watchdog limit in seconds for each launch (0: none).
    #[arg(long, default_value_t = 60.0, value_parser = seconds)]
    timeout: f64,
}

#[derive(Subcommand)]
enum DumpWhat {
    /// The IR every dialect lowers to.
    Ir {
        /// The program file.
        file: String,
    },
    /// The Cranelift IR the JIT generates for each kernel.
    Clif {
        /// The program file.
        file: String,
    },
    /// The host machine code of each kernel (Cranelift's disassembly after optimisation and
    /// register allocation).
    Asm {
        /// The program file.
        file: String,
    },
}

#[derive(Args)]
struct RunArgs {
    /// The program file (`.ptx`: PTX; anything else: SASS). `FILE` with the extension
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
    /// The `--buffer`/`--param` lines in command-line order (filled from the raw arguments).
    #[arg(skip)]
    binds: Vec<String>,
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
    #[arg(long, value_enum, default_value = "jit")]
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
    #[arg(long, default_value_t = 60.0, value_parser = seconds)]
    timeout: f64,
    /// Run the interpreter and the JIT deterministically on copies of the memory and report the
    /// first difference in memory, statistics or traps.
    #[arg(long)]
    diff: bool,
}

/// `--buffer` and `--param` values as directive lines, in the order they were given (a PTX
/// entry's parameters bind in that order).
fn ordered_binds(m: &clap::ArgMatches) -> Vec<String> {
    let mut lines: Vec<(usize, String)> = Vec::new();
    for (id, directive) in [("buffers", ".buffer"), ("params", ".param")] {
        if let (Some(values), Some(indices)) = (m.get_many::<String>(id), m.indices_of(id)) {
            for (v, i) in values.zip(indices) {
                lines.push((i, format!("{directive} {v}")));
            }
        }
    }
    lines.sort_by_key(|(i, _)| *i);
    lines.into_iter().map(|(_, l)| l).collect()
}

fn main() -> ExitCode {
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let mut cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    if let (Command::Run(args), Some(("run", sub))) = (&mut cli.command, matches.subcommand()) {
        args.binds = ordered_binds(sub);
    }
    let code = match cli.command {
        Command::Run(args) => run(args),
        Command::Check { file } => check(&file),
        Command::Dump {
            what: DumpWhat::Ir { file },
        } => dump_ir(&file),
        Command::Dump {
            what: DumpWhat::Clif { file },
        } => dump_code(&file, atomjit::jit::dump_clif),
        Command::Dump {
            what: DumpWhat::Asm { file },
        } => dump_code(&file, atomjit::jit::dump_asm),
        Command::Bench(args) => bench(args),
        Command::Litmus(args) => litmus(args),
    };
    ExitCode::from(code)
}

/// The sidecar launch file of a program: the same path with the extension `.launch`.
fn sidecar_of(file: &str) -> Option<std::path::PathBuf> {
    let path = std::path::Path::new(file).with_extension("launch");
    (path != std::path::Path::new(file) && path.is_file()).then_some(path)
}

/// How a program gets its launch directives.
enum LaunchMode {
    /// `check` and `dump`: the sidecar if there is one, else none (PTX parameters may stay
    /// unbound).
    IfSidecar,
    /// `run` and `bench`: a PTX module is always bound (from the sidecar or `--launch`, then
    /// command-line lines); a SASS file takes extra lines if any are given.
    Bind {
        launch_file: Option<String>,
        lines: Vec<String>,
    },
}

/// Reads and loads a program, printing diagnostics on failure (exit code 2).
fn load(engine: &Engine, file: &str, mode: LaunchMode) -> Result<Module, u8> {
    let source = std::fs::read_to_string(file).map_err(|e| {
        eprintln!("error: cannot read {file}: {e}");
        2
    })?;
    let mut launch = LaunchText::new();
    let (launch_file, lines, always) = match mode {
        LaunchMode::IfSidecar => (None, Vec::new(), false),
        LaunchMode::Bind { launch_file, lines } => (launch_file, lines, true),
    };
    let sidecar = launch_file
        .map(std::path::PathBuf::from)
        .or_else(|| sidecar_of(file));
    if let Some(path) = &sidecar {
        let name = path.to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).map_err(|e| {
            eprintln!("error: cannot read launch file {name}: {e}");
            2
        })?;
        launch.push(&name, &text);
    }
    if !lines.is_empty() {
        launch.push("command line", &lines.join("\n"));
    }
    let is_ptx = atomjit::front::dialect_for(file) == atomjit::ir::Dialect::Ptx;
    let result = if (always && is_ptx) || !launch.is_empty() {
        engine.load_with_launch(file, &source, &launch)
    } else {
        engine.load(file, &source)
    };
    result.map_err(|e| {
        match &e {
            Error::Parse(p) => {
                let text = if p.file == file {
                    Some(source.as_str())
                } else {
                    launch.source_text(&p.file)
                };
                match text {
                    Some(text) => eprint!("{}", diag::render_parse_error(text, p)),
                    None => eprintln!("error: {p}"),
                }
            }
            Error::Validation { kernel, errors } => eprint!(
                "{}",
                diag::render_validation_errors(file, &source, kernel, errors)
            ),
            other => eprintln!("error: {other}"),
        }
        2
    })
}

/// The command-line launch lines of `run`: `--buffer` and `--param` in order, for the
/// selected kernels (`.kernel NAME` sections) or for every kernel.
fn launch_lines(args: &RunArgs) -> Vec<String> {
    if args.binds.is_empty() || args.kernels.is_empty() {
        return args.binds.clone();
    }
    let mut out = Vec::new();
    for k in &args.kernels {
        out.push(format!(".kernel {k}"));
        out.extend(args.binds.iter().cloned());
    }
    out
}

fn check(file: &str) -> u8 {
    match load(
        &Engine::new(&Config::default()),
        file,
        LaunchMode::IfSidecar,
    ) {
        Ok(module) => {
            for k in &module.program().kernels {
                outln!(
                    "{file}: kernel `{}`: {} instructions, ok",
                    k.name,
                    k.insts.len()
                );
            }
            0
        }
        Err(code) => code,
    }
}

fn dump_ir(file: &str) -> u8 {
    match load(
        &Engine::new(&Config::default()),
        file,
        LaunchMode::IfSidecar,
    ) {
        Ok(module) => {
            out!("{}", atomjit::ir::print_program(module.program()));
            0
        }
        Err(code) => code,
    }
}

type DumpFn =
    fn(&atomjit::ir::Kernel, &atomjit::valid::KernelInfo) -> Result<String, atomjit::jit::JitError>;

fn dump_code(file: &str, dump: DumpFn) -> u8 {
    let module = match load(
        &Engine::new(&Config::default()),
        file,
        LaunchMode::IfSidecar,
    ) {
        Ok(m) => m,
        Err(code) => return code,
    };
    for name in module.kernel_names() {
        let (kernel, info) = module.kernel(name).expect("listed kernel");
        match dump(kernel, info) {
            Ok(text) => outln!("; kernel {name}\n{text}"),
            Err(e) => {
                eprintln!("error: kernel `{name}`: {e}");
                return 2;
            }
        }
    }
    0
}

fn bench(args: BenchArgs) -> u8 {
    let mut config = Config::default();
    config
        .backend(args.backend)
        .timeout((args.timeout > 0.0).then(|| Duration::from_secs_f64(args.timeout)));
    if let Some(t) = args.threads {
        config.threads(t as usize);
    }
    let mode = LaunchMode::Bind {
        launch_file: args.launch.clone(),
        lines: Vec::new(),
    };
    let module = match load(&Engine::new(&config), &args.file, mode) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let kernels: Vec<String> = if args.kernels.is_empty() {
        module
            .kernel_names()
            .into_iter()
            .map(String::from)
            .collect()
    } else {
        args.kernels.clone()
    };
    let iterations = args.iterations.max(1) as usize;
    for kernel in &kernels {
        let prepared = match module.prepare(kernel, &Overrides::default(), args.backend, false) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("error: {e}");
                return 2;
            }
        };
        let cfg = prepared.config();
        // Validated launches have at most ~2^73 lanes: u128 holds them.
        let lanes: u128 = cfg
            .grid
            .iter()
            .chain(&cfg.block)
            .map(|&d| d as u128)
            .product();
        let started = std::time::Instant::now();
        let mut bar: Option<indicatif::ProgressBar> = None;
        let mut times = Vec::with_capacity(iterations);
        let mut atomics = 0;
        for i in 0..iterations {
            prepared.reset();
            match prepared.launch() {
                Ok(stats) => {
                    times.push(stats.wall.as_secs_f64());
                    atomics = stats.stats.total_atomics();
                }
                Err(e) => {
                    let report = prepared.finish(Err(e));
                    match report {
                        Ok(r) => {
                            outln!(
                                "kernel {kernel}: FAILED: {}",
                                r.failure
                                    .as_ref()
                                    .map(|f| f.to_string())
                                    .unwrap_or_default()
                            );
                            return exit_code_of_failure(&r.failure);
                        }
                        Err(e) => {
                            eprintln!("error: {e}");
                            return 2;
                        }
                    }
                }
            }
            // A progress bar once the run has taken more than a second.
            if bar.is_none() && started.elapsed().as_secs_f64() > 1.0 {
                let b = indicatif::ProgressBar::new(iterations as u64);
                b.set_position(i as u64 + 1);
                bar = Some(b);
            } else if let Some(b) = &bar {
                b.set_position(i as u64 + 1);
            }
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        outln!(
            "kernel {kernel}: {} launches on {} ({} host threads): median {:.3} ms, min {:.3} ms, {:.3e} lanes/s, {:.3e} atomics/s",
            iterations,
            args.backend.name(),
            module.engine().config().threads,
            median * 1e3,
            times[0] * 1e3,
            lanes as f64 / median,
            atomics as f64 / median
        );
    }
    0
}

fn exit_code_of_failure(f: &Option<Failure>) -> u8 {
    match f {
        Some(Failure::Trap(_)) => 3,
        Some(Failure::Watchdog(_)) => 4,
        None => 0,
    }
}

/// Runs `kernel` on the interpreter and the JIT, deterministically, and describes the first
/// difference (None when they agree).
fn diff_backends(module: &Module, kernel: &str, o: &Overrides) -> Result<Option<String>, String> {
    let a = module
        .run_with(kernel, o, Backend::Interp, true)
        .map_err(|e| e.to_string())?;
    let b = module
        .run_with(kernel, o, Backend::Jit, true)
        .map_err(|e| e.to_string())?;
    let fail = |r: &RunReport| r.failure.as_ref().map(|f| f.to_string());
    if fail(&a) != fail(&b) {
        return Ok(Some(format!(
            "outcome differs: interp {}, jit {}",
            fail(&a).unwrap_or_else(|| "completed".into()),
            fail(&b).unwrap_or_else(|| "completed".into())
        )));
    }
    for (x, y) in a.buffers.iter().zip(&b.buffers) {
        if let Some(i) = (0..x.len()).find(|&i| x.get(i) != y.get(i)) {
            return Ok(Some(format!(
                "buffer `{}` differs first at element {i}: interp {}, jit {}",
                x.name,
                x.get(i).expect("in range"),
                y.get(i).expect("in range")
            )));
        }
    }
    if a.failure.is_none() && a.launch.stats != b.launch.stats {
        return Ok(Some(format!(
            "statistics differ: interp {:?}, jit {:?}",
            a.launch.stats, b.launch.stats
        )));
    }
    Ok(None)
}

fn parse_dims(text: &Option<String>, what: &str) -> Result<Option<[u32; 3]>, String> {
    text.as_deref()
        .map(|t| directives::parse_dims(t).map_err(|e| format!("--{what} {t}: {e}")))
        .transpose()
}

/// Builds the overrides of one kernel from the command line.
fn overrides_for(module: &Module, kernel: &str, args: &RunArgs) -> Result<Overrides, String> {
    let mut o = Overrides {
        grid: parse_dims(&args.grid, "grid")?,
        block: parse_dims(&args.block, "block")?,
        shared_bytes: args.shared,
        ..Overrides::default()
    };
    let (k, _) = module.kernel(kernel).map_err(|e| e.to_string())?;
    for set in &args.sets {
        let (name, value) = set
            .split_once('=')
            .ok_or_else(|| format!("--set {set}: expected NAME=VALUE"))?;
        let (name, value) = (name.trim(), value.trim());
        match k
            .launch
            .params
            .iter()
            .find(|p| p.name == name)
            .map(|p| &p.kind)
        {
            Some(ParamKind::Buffer { .. }) => o.buffers.push((
                name.to_string(),
                directives::parse_init(value).map_err(|e| format!("--set {set}: {e}"))?,
            )),
            Some(ParamKind::Scalar { ty, .. }) => {
                let v = directives::parse_scalar(value).map_err(|e| format!("--set {set}: {e}"))?;
                directives::check_value_fits(*ty, v).map_err(|e| format!("--set {set}: {e}"))?;
                o.params.push((name.to_string(), v));
            }
            None => {
                return Err(format!(
                    "--set {set}: kernel `{kernel}` has no buffer or parameter named `{name}`"
                ))
            }
        }
    }
    for e in &args.expects {
        o.expects
            .push(directives::parse_expect(e).map_err(|msg| format!("--expect {e}: {msg}"))?);
    }
    Ok(o)
}

fn run(args: RunArgs) -> u8 {
    let mut config = Config::default();
    config
        .backend(args.backend)
        .deterministic(args.deterministic)
        .timeout((args.timeout > 0.0).then(|| Duration::from_secs_f64(args.timeout)));
    if let Some(t) = args.threads {
        config.threads(t as usize);
    }
    if args.deterministic {
        config.threads(1);
    }
    let engine = Engine::new(&config);
    let mode = LaunchMode::Bind {
        launch_file: args.launch.clone(),
        lines: launch_lines(&args),
    };
    let module = match load(&engine, &args.file, mode) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let kernels: Vec<String> = if args.kernels.is_empty() {
        module
            .kernel_names()
            .into_iter()
            .map(String::from)
            .collect()
    } else {
        args.kernels.clone()
    };
    let mut reports = Vec::new();
    let mut code = 0u8;
    if args.diff {
        for kernel in &kernels {
            match overrides_for(&module, kernel, &args)
                .and_then(|o| diff_backends(&module, kernel, &o))
            {
                Ok(None) => {
                    outln!("kernel {kernel}: interp and jit agree (memory, statistics, traps)")
                }
                Ok(Some(d)) => {
                    outln!("kernel {kernel}: DIFFERENCE: {d}");
                    code = code.max(1);
                }
                Err(msg) => {
                    eprintln!("error: {msg}");
                    code = code.max(2);
                }
            }
        }
        return code;
    }
    for kernel in &kernels {
        let report = overrides_for(&module, kernel, &args)
            .and_then(|o| module.run(kernel, &o).map_err(|e| e.to_string()));
        match report {
            Ok(r) => {
                for name in &args.dumps {
                    if r.buffer(name).is_none() {
                        eprintln!(
                            "error: --dump {name}: kernel `{kernel}` has no buffer named `{name}`"
                        );
                        code = code.max(2);
                    }
                }
                code = code.max(exit_code(&r));
                if !args.json {
                    print_report(&r, &args.dumps);
                }
                reports.push(r);
            }
            Err(msg) => {
                eprintln!("error: {msg}");
                code = code.max(2);
            }
        }
    }
    if args.json {
        let json: Vec<_> = reports
            .iter()
            .map(|r| report_json(r, &args.dumps))
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&json).expect("reports serialise")
        );
    }
    code
}

fn exit_code(r: &RunReport) -> u8 {
    match &r.failure {
        Some(Failure::Trap(_)) => 3,
        Some(Failure::Watchdog(_)) => 4,
        None if r.expectations.iter().any(|e| !e.passed) => 1,
        None => 0,
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
    if let Some(f) = &r.failure {
        outln!("  FAILED: {f}");
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
    for name in dumps {
        if let Some(b) = r.buffer(name) {
            let values: Vec<String> = b.values().map(|v| v.to_string()).collect();
            outln!(
                "  {} {}[{}] = {{{}}}",
                b.name,
                b.elem,
                b.len(),
                values.join(", ")
            );
        }
    }
}

fn report_json(r: &RunReport, dumps: &[String]) -> serde_json::Value {
    let s = &r.launch.stats;
    let atomics: serde_json::Map<String, serde_json::Value> = AtomicOp::ALL
        .iter()
        .map(|op| (op.name().to_string(), s.atomics[op.index()].into()))
        .collect();
    let dumped: serde_json::Map<String, serde_json::Value> = dumps
        .iter()
        .filter_map(|n| r.buffer(n))
        .map(|b| {
            let values: Vec<serde_json::Value> = b
                .values()
                .map(|v| match v {
                    atomjit::ir::Scalar::Int(i) => i64::try_from(i)
                        .map(Into::into)
                        .unwrap_or_else(|_| i.to_string().into()),
                    atomjit::ir::Scalar::Float(f) => f.into(),
                })
                .collect();
            (b.name.clone(), values.into())
        })
        .collect();
    serde_json::json!({
        "kernel": r.kernel,
        "backend": r.backend.name(),
        "grid": r.grid,
        "block": r.block,
        "shared_bytes": r.shared_bytes,
        "deterministic": r.deterministic,
        "host_threads": r.launch.threads,
        "wall_seconds": r.launch.wall.as_secs_f64(),
        "atomics": atomics,
        "cas_failures": s.cas_failures,
        "spin_fast_fails": s.spin_fast_fails,
        "warp_instructions": s.warp_insts,
        "expectations": r.expectations,
        "failure": r.failure.as_ref().map(|f| match f {
            Failure::Trap(t) => serde_json::json!({"trap": t}),
            Failure::Watchdog(w) => serde_json::json!({"watchdog": w}),
        }),
        "exit_code": exit_code(r),
        "buffers": dumped,
    })
}

/// `atomjit litmus`: runs each file and prints its histogram and verdict.
fn litmus(args: LitmusArgs) -> u8 {
    use atomjit::litmus::{self, LitmusError, Options, Verdict};
    if args.iterations == 0 {
        eprintln!("error: --iterations must be at least 1");
        return 2;
    }
    let options = Options {
        iterations: args.iterations,
        stop_after_hits: args.stop_after,
        time_limit: args
            .time_limit
            .filter(|t| *t > 0.0 && t.is_finite())
            .map(Duration::from_secs_f64),
        max_spins: args.max_spins,
        seed: args.seed,
        instances: args.threads,
        timeout: (args.timeout > 0.0).then(|| Duration::from_secs_f64(args.timeout)),
    };
    if let Err(m) = options.validate() {
        eprintln!("error: --threads: {m}");
        return 2;
    }
    let mut code = 0u8;
    let mut json = Vec::new();
    for file in &args.files {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot read {file}: {e}");
                code = code.max(2);
                continue;
            }
        };
        let test = match litmus::parse(file, &text) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: {e}");
                code = code.max(2);
                continue;
            }
        };
        let report = match litmus::run(&test, file, &options) {
            Ok(r) => r,
            Err(e) => {
                let c = match &e {
                    LitmusError::Load(Error::Parse(p)) => {
                        eprint!("{}", diag::render_parse_error(&text, p));
                        2
                    }
                    LitmusError::Load(Error::Validation { kernel, errors }) => {
                        eprint!(
                            "{}",
                            diag::render_validation_errors(file, &text, kernel, errors)
                        );
                        2
                    }
                    LitmusError::Load(other) => {
                        eprintln!("error: {file}: {other}");
                        2
                    }
                    LitmusError::Setup(m) => {
                        eprintln!("error: {m}");
                        2
                    }
                    LitmusError::Run(run) => {
                        eprintln!("error: {file}: {run}");
                        match run {
                            atomjit::exec::LaunchError::Trap(_) => 3,
                            atomjit::exec::LaunchError::Watchdog(_) => 4,
                            atomjit::exec::LaunchError::Config(_) => 2,
                        }
                    }
                };
                code = code.max(c);
                continue;
            }
        };
        let (status, file_code) = match (report.verdict, report.condition_hits) {
            (Verdict::Forbidden, 0) => ("ok".to_string(), 0),
            (Verdict::Forbidden, n) => (format!("forbidden outcome seen ({n} times)"), 1),
            (Verdict::Allowed, 0) => ("ok (allowed outcome not seen)".to_string(), 0),
            (Verdict::Allowed, n) => (format!("allowed outcome seen {n} times"), 0),
        };
        code = code.max(file_code);
        if args.json {
            let mut v = serde_json::to_value(&report).expect("reports serialise");
            v["file"] = serde_json::json!(file);
            v["status"] = serde_json::json!(status);
            v["exit_code"] = serde_json::json!(file_code);
            json.push(v);
            continue;
        }
        outln!(
            "{file}: {} iterations, {} litmus threads on {} host threads, {:.2} s",
            report.iterations,
            report.threads,
            report.threads * report.instances as u64,
            report.wall_seconds
        );
        let verdict = match report.verdict {
            Verdict::Forbidden => "forbidden",
            Verdict::Allowed => "allowed",
        };
        outln!(
            "  {verdict}: {}   (* marks outcomes that satisfy it)",
            report.condition
        );
        let tuples: Vec<String> = report
            .outcomes
            .iter()
            .map(|o| {
                let v: Vec<String> = o.values.iter().map(|v| v.to_string()).collect();
                v.join(",")
            })
            .collect();
        let width = tuples
            .iter()
            .map(String::len)
            .chain([report.observe.join(",").len()])
            .max()
            .unwrap_or(0);
        outln!("  {:<width$}  count", report.observe.join(","));
        for (o, t) in report.outcomes.iter().zip(&tuples) {
            let mark = if o.satisfies { " *" } else { "" };
            outln!("  {t:<width$}  {}{mark}", o.count);
        }
        outln!("  {status}");
    }
    if args.json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json).expect("reports serialise")
        );
    }
    code
}
