//! `atomjit litmus FILE...`: race each test's CTAs many times; print the outcome histogram and
//! the verdict (or JSON).

use atomjit::engine::{to_json_text, Error, ExitStatus, Sources};
use atomjit::litmus::{self, LitmusError, Options, Verdict};
use clap::Args;
use std::time::Duration;

#[derive(Args)]
pub struct LitmusArgs {
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
    #[arg(long, value_name = "SECS", value_parser = crate::seconds)]
    time_limit: Option<f64>,
    /// Watchdog limit in seconds for one litmus thread in one iteration (0: none).
    #[arg(long, default_value_t = 10.0, value_parser = crate::seconds)]
    timeout: f64,
    /// Print the reports as JSON on stdout.
    #[arg(long)]
    json: bool,
}

pub fn litmus(args: LitmusArgs) -> ExitStatus {
    if args.iterations == 0 {
        errln!("error: --iterations must be at least 1");
        return ExitStatus::Usage;
    }
    if args.stop_after == Some(0) {
        // Zero hits are reached before the first iteration: nothing would run.
        errln!("error: --stop-after must be at least 1");
        return ExitStatus::Usage;
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
        timeout: crate::watchdog(args.timeout),
    };
    if let Err(m) = options.validate() {
        errln!("error: --threads: {m}");
        return ExitStatus::Usage;
    }
    let mut status = ExitStatus::Ok;
    // Every file's JSON, in order: its report, or its failure (`--json` leaves none out).
    let mut json: Vec<serde_json::Value> = Vec::new();
    let failed = |file: &str, status: ExitStatus, error: String| serde_json::json!({ "file": file, "exit_code": status.code(), "error": error });
    for file in &args.files {
        // Read as program files are (size cap, byte-order mark, UTF-8 and NUL checks).
        let text = match atomjit::engine::load::read_text_file(std::path::Path::new(file), "") {
            Ok(t) => t,
            Err(e) => {
                errln!("error: {e}");
                status = status.max(ExitStatus::Usage);
                json.push(failed(file, ExitStatus::Usage, e));
                continue;
            }
        };
        let test = match litmus::parse(file, &text) {
            Ok(t) => t,
            Err(e) => {
                // A header error may quote a token of any length: clipped like diagnostics.
                let e = atomjit::diag::clip(&e.to_string(), 1000);
                errln!("error: {e}");
                status = status.max(ExitStatus::Usage);
                json.push(failed(file, ExitStatus::Usage, e));
                continue;
            }
        };
        match litmus::run(&test, file, &options) {
            Ok(report) => {
                status = status.max(report.status());
                if !args.json {
                    print_report(file, &report);
                }
                json.push(serde_json::to_value(report.json(file)).expect("reports serialise"));
            }
            Err(e) => {
                json.push(failed(
                    file,
                    e.status(),
                    atomjit::diag::clip(&e.to_string(), 1000),
                ));
                match &e {
                    LitmusError::Load(
                        load @ (Error::Parse(_) | Error::Unbound(_) | Error::Validation { .. }),
                    ) => {
                        // Positions in the PTX module and the launch lines are the file's own.
                        let sources = Sources {
                            file: file.clone(),
                            source: text,
                            ..Sources::default()
                        };
                        err!("{}", sources.render(load));
                    }
                    LitmusError::Load(_) | LitmusError::Run(_) => errln!("error: {file}: {e}"),
                    LitmusError::Setup(m) => errln!("error: {m}"),
                }
                status = status.max(e.status());
            }
        }
    }
    if args.json {
        outln!("{}", to_json_text(&json));
    }
    status
}

fn print_report(file: &str, report: &litmus::LitmusReport) {
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
    outln!("  {}", report.summary());
}
