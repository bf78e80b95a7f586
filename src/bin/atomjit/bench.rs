//! `atomjit bench FILE`: each kernel launched repeatedly; median and minimum time, lanes/s and
//! atomics/s, with a progress bar once a kernel's run takes more than a second.

use atomjit::engine::{Backend, BenchOutcome, Config, Engine, ExitStatus, LaunchRequest, Purpose};
use clap::Args;
use std::time::Duration;

#[derive(Args)]
pub struct BenchArgs {
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
    #[arg(long, value_parser = crate::backend(), default_value = "jit")]
    backend: Backend,
    /// Watchdog limit in seconds for each launch (0: none).
    #[arg(long, default_value_t = 60.0, value_parser = crate::seconds)]
    timeout: f64,
}

pub fn bench(args: BenchArgs) -> ExitStatus {
    let mut config = Config::default();
    config
        .backend(args.backend)
        .timeout(crate::watchdog(args.timeout));
    if let Some(t) = args.threads {
        config.threads(t as usize);
    }
    let purpose = Purpose::Run(LaunchRequest {
        launch_file: args.launch.as_ref().map(Into::into),
        ..LaunchRequest::default()
    });
    let loaded = match crate::load(&Engine::new(&config), &args.file, &purpose) {
        Ok(loaded) => loaded,
        Err(status) => return status,
    };
    let module = &loaded.module;
    let kernels = module.selected_kernels(&args.kernels);
    let iterations = args.iterations as usize;
    for kernel in &kernels {
        let mut bar: Option<indicatif::ProgressBar> = None;
        let mut progress = |done: usize, elapsed: Duration| match &bar {
            Some(b) => b.set_position(done as u64),
            None if elapsed > Duration::from_secs(1) => {
                let b = indicatif::ProgressBar::new(iterations as u64);
                b.set_position(done as u64);
                bar = Some(b);
            }
            None => {}
        };
        let outcome = module.bench(kernel, iterations, args.backend, &mut progress);
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        let (backend, fallback) = module.effective_backend(kernel, args.backend);
        match outcome {
            Ok(BenchOutcome::Measured(m)) => outln!(
                "kernel {kernel}: {} launches on {} ({} host threads): median {:.3} ms, min {:.3} ms, {:.3e} lanes/s, {:.3e} atomics/s{}",
                m.launches,
                backend.name(),
                module.engine().config().threads,
                m.median_seconds * 1e3,
                m.min_seconds * 1e3,
                m.lanes_per_second(),
                m.atomics_per_second(),
                fallback.map(|why| format!("\n  note: {why}")).unwrap_or_default()
            ),
            Ok(BenchOutcome::Failed(report)) => {
                let failure = report.failure.as_ref().map(|f| f.to_string());
                if report.status() == ExitStatus::Ok {
                    // The trap its `.expect trap` asks for: correct, but nothing to measure.
                    err!(
                        "kernel {kernel}: trapped as its `.expect trap` says ({}); a launch that traps is not benchmarked",
                        failure.unwrap_or_default()
                    );
                    return ExitStatus::Usage;
                }
                outln!("kernel {kernel}: FAILED: {}", failure.unwrap_or_default());
                return report.status();
            }
            Err(e) => {
                err!("{}", loaded.sources.render(&e));
                return ExitStatus::Usage;
            }
        }
    }
    ExitStatus::Ok
}
