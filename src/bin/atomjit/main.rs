//! The `atomjit` command line: argument parsing and printing, one file per subcommand, over
//! [`atomjit::engine`], which owns the policy (loading files with their launch, overrides, the
//! backend diff, bench measurement, exit codes, JSON reports).
//!
//! Exit codes ([`atomjit::engine::ExitStatus`]): 0 success, 1 an expectation failed (`litmus`:
//! a forbidden outcome seen), 2 usage/parse/validation error, 3 trap, 4 watchdog; when kernels
//! (or litmus files) fail differently, the largest code wins.

#[macro_use]
mod output;
mod bench;
mod check;
mod dump;
mod litmus;
mod run;

use atomjit::engine::{Backend, Engine, ExitStatus, LoadedFile, Purpose};
use clap::{Parser, Subcommand};
use std::process::ExitCode;
use std::time::Duration;

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

/// Loads `file` for `purpose`; if it does not load, shows why on standard error.
fn load(engine: &Engine, file: &str, purpose: &Purpose) -> Result<LoadedFile, ExitStatus> {
    let dialect = DIALECT.get().copied().flatten();
    engine.load_file_as(file, purpose, dialect).map_err(|e| {
        err!("{}", e.render());
        ExitStatus::Usage
    })
}

/// A watchdog limit from [`seconds`]: 0 is none.
fn watchdog(seconds: f64) -> Option<Duration> {
    (seconds > 0.0).then(|| Duration::from_secs_f64(seconds))
}

/// `--backend`: one of the backends' names.
fn backend() -> impl clap::builder::TypedValueParser<Value = Backend> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(Backend::ALL.map(|b| PossibleValue::new(b.name()).help(b.about())))
        .map(|name| name.parse::<Backend>().expect("a listed backend name"))
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
    /// The program's dialect, whatever its name says (default: from the extension, else from
    /// the text: PTX when it starts with `.version`).
    #[arg(long, global = true, value_parser = ["sass", "ptx", "visa"])]
    dialect: Option<String>,
}

/// The dialect `--dialect` forces, if given (set once, before any file is loaded).
static DIALECT: std::sync::OnceLock<Option<atomjit::ir::Dialect>> = std::sync::OnceLock::new();

// Parsed once per process: the size of the largest variant costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand)]
enum Command {
    /// Run the kernels of a program file and check its expectations.
    Run(run::RunArgs),
    /// Parse and validate a program file without running it.
    Check {
        /// The program file.
        file: String,
    },
    /// Print an intermediate form of a program.
    Dump {
        #[command(subcommand)]
        what: dump::DumpWhat,
    },
    /// Run each kernel repeatedly and report median time, lanes/s and atomics/s.
    Bench(bench::BenchArgs),
    /// Run litmus tests: histogram the outcomes of racing CTAs, fail on a forbidden one.
    Litmus(litmus::LitmusArgs),
}

fn main() -> ExitCode {
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let mut cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    if let (Command::Run(args), Some(("run", sub))) = (&mut cli.command, matches.subcommand()) {
        args.lines = run::ordered_lines(sub);
    }
    let dialect = cli.dialect.as_deref().map(|d| match d {
        "ptx" => atomjit::ir::Dialect::Ptx,
        "visa" => atomjit::ir::Dialect::Visa,
        _ => atomjit::ir::Dialect::Sass,
    });
    if dialect.is_some() && matches!(cli.command, Command::Litmus(_)) {
        errln!("error: --dialect does not apply to litmus tests (their module is PTX)");
        return ExitCode::from(ExitStatus::Usage.code());
    }
    let _ = DIALECT.set(dialect);
    let status = match cli.command {
        Command::Run(args) => run::run(args),
        Command::Check { file } => check::check(&file),
        Command::Dump { what } => dump::dump(what),
        Command::Bench(args) => bench::bench(args),
        Command::Litmus(args) => litmus::litmus(args),
    };
    ExitCode::from(status.code())
}
