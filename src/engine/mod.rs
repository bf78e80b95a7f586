//! The embedding API: load a program, run its kernels, read memory and verdicts back.
//!
//! ```no_run
//! use atomjit::engine::{Config, Engine, Overrides};
//! let engine = Engine::new(Config::default().threads(4));
//! let module = engine.load("hist.s", &std::fs::read_to_string("programs/sass/hist_shared.s").unwrap()).unwrap();
//! let report = module.run("hist", &Overrides::default()).unwrap();
//! assert!(report.failure.is_none());
//! println!("{:?}", report.buffer("hist").unwrap().as_u32());
//! ```
//!
//! A PTX module takes its launch (grid, block, buffers bound to its `.param` list,
//! expectations) from outside the file:
//!
//! ```no_run
//! use atomjit::engine::{Config, Engine, Overrides};
//! use atomjit::front::LaunchText;
//! let engine = Engine::new(&Config::default());
//! let mut launch = LaunchText::new();
//! launch.push("command line", ".grid 4\n.buffer hist u32[256] = 0\n.expect sum(hist) == 1024");
//! let ptx = std::fs::read_to_string("programs/ptx/hist_shared.ptx").unwrap();
//! let module = engine.load_with_launch("hist_shared.ptx", &ptx, &launch).unwrap();
//! ```
//!
//! An [`Engine`] is cheap to clone (it is an `Arc`); its [`Config`] is set with chained calls.
//! A [`Module`] is a parsed and validated program; it compiles each kernel once, on first use,
//! and reuses the compiled code for every launch.
//!
//! The command line is a thin client of this module, which owns its policy:
//!
//! * [`load`]: a program *file* with its dialect and launch sidecar ([`Engine::load_file`]),
//!   and errors shown against the text they point into ([`Sources::render`]);
//! * [`overrides`]: `--grid`, `--block`, `--shared`, `--set`, `--expect` as text
//!   ([`Module::overrides`]);
//! * [`diff`]: the interpreter against the JIT ([`Module::diff_backends`]);
//! * [`bench`](mod@bench): the measured launch loop ([`Module::bench`]);
//! * [`status`]: outcomes as exit codes ([`ExitStatus`]), one mapping for every command;
//! * [`report`]: reports as JSON ([`RunReport::json`], [`to_json_text`]).

pub mod args;
pub mod bench;
pub mod buffers;
pub mod device;
pub mod diff;
pub mod expect;
pub mod load;
pub mod overrides;
pub mod report;
pub mod status;
pub mod tiles;

pub use args::{Arg, FormalParam, Signature};
pub use bench::{BenchOutcome, Measurement};
pub use buffers::{Buffer, Bytes, Placement};
pub use device::{Device, DeviceBuffer, DeviceError, Element};
pub use diff::{BackendDiff, Difference};
pub use expect::ExpectOutcome;
pub use load::{LaunchLine, LaunchRequest, LoadError, LoadedFile, Purpose, Sources};
pub use overrides::OverrideArgs;
pub use report::{to_json_text, JsonScalar, RunJson};
pub use status::ExitStatus;
pub use tiles::DeviceArray;

use crate::exec::{
    self, FailedLaunch, GlobalMemory, LaunchConfig, LaunchError, LaunchStats, WarpRunner,
};
use crate::front::{self, LaunchText, ParseError};
use crate::interp::Interpreter;
use crate::ir::surface::SurfaceHeader;
use crate::ir::{Dialect, Expect, Init, Kernel, ParamKind, Program, Scalar, Ty};
use crate::valid::{self, KernelInfo, ValidationErrors};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Which backend executes kernels. Written by its [`Backend::name`] (`jit`, `interp`), which
/// is also what [`str::parse`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Backend {
    /// Cranelift-compiled native code (the default).
    Jit,
    /// The reference interpreter.
    Interp,
}

impl Backend {
    /// Every backend, the default first.
    pub const ALL: [Backend; 2] = [Backend::Jit, Backend::Interp];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Jit => "jit",
            Backend::Interp => "interp",
        }
    }

    /// What the backend is, in one line (the command line's help).
    pub fn about(self) -> &'static str {
        match self {
            Backend::Jit => "Cranelift-compiled native code (the default)",
            Backend::Interp => "The reference interpreter",
        }
    }
}

impl std::str::FromStr for Backend {
    type Err = String;

    fn from_str(s: &str) -> Result<Backend, String> {
        Backend::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Backend::ALL.iter().map(|b| b.name()).collect();
                format!("unknown backend `{s}` (one of {})", names.join(", "))
            })
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The most instructions a kernel may have for the JIT to compile it; a larger one runs on the
/// interpreter, and its report says so ([`Module::effective_backend`]).
pub const JIT_MAX_INSTS: usize = 20_000;

/// The compile time the engine assumes per instruction when it decides whether the JIT's
/// compilation fits in a launch's time limit ([`jit_budget_fallback`]). Measured with a release
/// build on the 2-vCPU machine: 24 µs per instruction for straight-line integer code, 40 µs for
/// a mix of loads, stores and multiply-adds (19,000 instructions in 0.75 s, launch included);
/// rounded up so the estimate errs towards the interpreter. `docs/performance.md` has the
/// figures.
pub const JIT_COMPILE_COST_PER_INST: Duration = Duration::from_micros(50);

/// The share of a launch's time limit ([`Config::timeout`]) that the JIT's compilation may be
/// estimated to take: the numerator and the denominator of one half.
pub const JIT_COMPILE_BUDGET_SHARE: (u32, u32) = (1, 2);

/// The estimated time to compile a kernel of `insts` instructions
/// (`insts` × [`JIT_COMPILE_COST_PER_INST`]).
pub fn jit_compile_estimate(insts: usize) -> Duration {
    JIT_COMPILE_COST_PER_INST.saturating_mul(u32::try_from(insts).unwrap_or(u32::MAX))
}

/// Why kernel `name` of `insts` instructions must not be compiled by the JIT under a time limit
/// of `timeout`, or `None` when it may: more than [`JIT_MAX_INSTS`] instructions, or an
/// estimated compile time ([`jit_compile_estimate`]) over [`JIT_COMPILE_BUDGET_SHARE`] of the
/// limit. Compilation cannot be interrupted, so the watchdog could not stop a long one; the
/// decision is an estimate from the instruction count, not a measurement, so the same kernel
/// and settings always get the same backend and the same report.
pub fn jit_budget_fallback(name: &str, insts: usize, timeout: Option<Duration>) -> Option<String> {
    if insts > JIT_MAX_INSTS {
        return Some(format!(
            "kernel `{name}` has {insts} instructions, more than the JIT compiles within its budget ({JIT_MAX_INSTS}): it ran on the interpreter"
        ));
    }
    let timeout = timeout?;
    let (num, den) = JIT_COMPILE_BUDGET_SHARE;
    let limit = timeout.saturating_mul(num) / den;
    let estimate = jit_compile_estimate(insts);
    (estimate > limit).then(|| {
        format!(
            "kernel `{name}` has {insts} instructions, estimated to take {:.3} s to compile \
             ({} µs each), more than the JIT's compile budget of {:.3} s ({num}/{den} of the \
             {:.3} s time limit): it ran on the interpreter",
            estimate.as_secs_f64(),
            JIT_COMPILE_COST_PER_INST.as_micros(),
            limit.as_secs_f64(),
            timeout.as_secs_f64(),
        )
    })
}

/// Engine settings. Defaults: JIT backend, all host cores, no determinism, 60 s watchdog.
#[derive(Debug, Clone)]
pub struct Config {
    pub backend: Backend,
    pub threads: usize,
    pub deterministic: bool,
    pub timeout: Option<Duration>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            backend: Backend::Jit,
            threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            deterministic: false,
            timeout: Some(Duration::from_secs(60)),
        }
    }
}

impl Config {
    pub fn backend(&mut self, backend: Backend) -> &mut Self {
        self.backend = backend;
        self
    }
    /// Host worker threads (at least 1).
    pub fn threads(&mut self, threads: usize) -> &mut Self {
        self.threads = threads.max(1);
        self
    }
    /// One thread, fixed order: bit-identical results run to run.
    pub fn deterministic(&mut self, on: bool) -> &mut Self {
        self.deterministic = on;
        self
    }
    /// The watchdog's limit for one launch (`None`: no limit).
    pub fn timeout(&mut self, timeout: Option<Duration>) -> &mut Self {
        self.timeout = timeout;
        self
    }
}

/// Everything that can go wrong before or around a launch (a launch's own failure — a trap or
/// the watchdog — is reported in [`RunReport::failure`] so the memory image is not lost).
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Parse(ParseError),
    /// The kernel is a PTX entry with parameters that its launch does not bind (the error is
    /// located at the kernel in the program file).
    #[error("{0}")]
    Unbound(ParseError),
    #[error("kernel `{kernel}` is invalid:\n{errors}")]
    Validation {
        kernel: String,
        errors: ValidationErrors,
    },
    #[error("no kernel named `{0}` (the program has: {1})")]
    UnknownKernel(String, String),
    #[error("{0}")]
    Override(String),
    #[error("compiling kernel `{kernel}` failed: {message}")]
    Compile { kernel: String, message: String },
    #[error("{0}")]
    Launch(String),
    /// A launch from code whose arguments do not fit the kernel's [`Signature`] (count, kind,
    /// size, a listing's reach, a vISA payload they leave undescribed).
    #[error("{0}")]
    Argument(String),
    /// A launch from code ([`Module::launch`]) trapped or met the watchdog; `ran` counts what
    /// ran before it stopped. Device memory holds whatever the kernel wrote.
    #[error("kernel `{kernel}`: {failure}")]
    Failed {
        kernel: String,
        failure: Failure,
        ran: Box<LaunchStats>,
    },
    /// Device memory ([`Engine::device`]).
    #[error("{0}")]
    Device(#[from] DeviceError),
    /// A tile atomic's arguments ([`Engine::atomic_cas`], [`Engine::atomic_rmw`]).
    #[error("{0}")]
    Tile(crate::tile::TileError),
}

/// The embedding API's root: settings and device memory (cheap to clone: an `Arc`).
pub struct Engine {
    inner: Arc<EngineInner>,
}

struct EngineInner {
    config: Config,
    device: Device,
    /// Compiled tile-atomic call shapes ([`Engine::tiles`]).
    tiles: crate::tile::TileEngine,
}

impl Clone for Engine {
    fn clone(&self) -> Self {
        Engine {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl Engine {
    pub fn new(config: &Config) -> Engine {
        Engine {
            inner: Arc::new(EngineInner {
                config: config.clone(),
                device: Device::new(),
                tiles: crate::tile::TileEngine::new(config.threads),
            }),
        }
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The backend `kernel` runs on when `backend` is asked for, and why it differs (see
    /// [`Module::effective_backend`]).
    fn backend_for(&self, kernel: &Kernel, backend: Backend) -> (Backend, Option<String>) {
        if backend == Backend::Jit {
            let n = kernel.insts.len();
            if let Some(why) = jit_budget_fallback(&kernel.name, n, self.inner.config.timeout) {
                return (Backend::Interp, Some(why));
            }
        }
        (backend, None)
    }

    /// The prepared form of a validated kernel for `backend` (already chosen by
    /// [`Engine::backend_for`]): compiled on the engine's threads, or the interpreter.
    fn make_runner(&self, kernel: &Kernel, info: &KernelInfo, backend: Backend) -> Compiled {
        match backend {
            Backend::Interp => Ok(Arc::new(Interpreter::new()) as Arc<dyn WarpRunner>),
            Backend::Jit => crate::jit::compile_on(kernel, info, self.inner.config.threads)
                .map(|k| Arc::new(k) as Arc<dyn WarpRunner>)
                .map_err(|e| e.to_string()),
        }
    }

    /// The engine's device memory: allocations that outlive launches, which
    /// [`Module::launch`] passes to kernels as [`Arg::Buffer`].
    pub fn device(&self) -> &Device {
        &self.inner.device
    }

    /// Parses (dialect from the file name, or its text, see [`front::dialect_of`]) and validates every
    /// kernel of `source`, for inspection: the PTX entries that have parameters stay unbound
    /// (see [`Module::unbound`]) and cannot run.
    pub fn load(&self, file_name: &str, source: &str) -> Result<Module, Error> {
        self.load_text(
            file_name,
            source,
            front::dialect_of(file_name, source),
            None,
        )
    }

    /// Like [`Engine::load`], with launch directives from outside the file (a sidecar file,
    /// command-line lines): see [`front::launch`]. For PTX they bind the `.param` list of each
    /// entry they reach (every parameter, in order); an entry no `.buffer`/`.param` line
    /// reaches stays unbound, unless no kernel at all would be bound: that is the error of the
    /// first one. For SASS they are appended to each kernel's declarations. A parse error in a
    /// launch source names that source ([`LaunchText::source_text`] gives its text for
    /// rendering).
    pub fn load_with_launch(
        &self,
        file_name: &str,
        source: &str,
        launch: &LaunchText,
    ) -> Result<Module, Error> {
        self.load_text(
            file_name,
            source,
            front::dialect_of(file_name, source),
            Some(launch),
        )
    }

    /// [`Engine::load`] (`launch` is `None`) or [`Engine::load_with_launch`] with the dialect
    /// given rather than implied by the file name (litmus files hold PTX).
    pub fn load_text(
        &self,
        file_name: &str,
        source: &str,
        dialect: Dialect,
        launch: Option<&LaunchText>,
    ) -> Result<Module, Error> {
        let launched = front::parse_with_launch(
            file_name,
            source,
            dialect,
            launch.unwrap_or(&LaunchText::new()),
        )
        .map_err(Error::Parse)?;
        // A launch is given to run the program: one that binds no kernel at all is refused.
        if launch.is_some() && launched.unbound.iter().all(Option::is_some) {
            if let Some(Some(first)) = launched.unbound.first() {
                return Err(Error::Parse(first.clone()));
            }
        }
        // A listing none of whose kernels can run is an error when it is loaded to run (the
        // first kernel's report); inspecting it (`check`) shows every report.
        if launch.is_some() && launched.broken.iter().all(Option::is_some) {
            if let Some(e) = launched.cannot_run(file_name, 0) {
                return Err(Error::Parse(e));
            }
        }
        let unbound = (0..launched.program.kernels.len())
            .map(|i| launched.cannot_run(file_name, i))
            .collect();
        let broken = launched.broken;
        let mut module = self.load_checked(launched.program, unbound, broken)?;
        module.unsupported = launched.unsupported;
        module.entry_params = launched.entry_params;
        Ok(module)
    }

    /// Validates an already parsed program (every kernel counts as bound).
    pub fn load_program(&self, program: Program) -> Result<Module, Error> {
        let unbound = vec![None; program.kernels.len()];
        let broken = vec![None; program.kernels.len()];
        self.load_checked(program, unbound, broken)
    }

    fn load_checked(
        &self,
        program: Program,
        unbound: Vec<Option<ParseError>>,
        broken: Vec<Option<front::sass::Broken>>,
    ) -> Result<Module, Error> {
        let mut infos = Vec::with_capacity(program.kernels.len());
        for kernel in &program.kernels {
            let info = valid::validate(kernel).map_err(|errors| Error::Validation {
                kernel: kernel.name.clone(),
                errors,
            })?;
            infos.push(info);
        }
        let compiled = program.kernels.iter().map(|_| OnceLock::new()).collect();
        Ok(Module {
            engine: self.clone(),
            program: Arc::new(program),
            infos,
            unsupported: Vec::new(),
            entry_params: Vec::new(),
            variants: Default::default(),
            unbound,
            broken,
            compiled,
        })
    }
}

type Compiled = Result<Arc<dyn WarpRunner>, String>;

/// A validated program and its compiled kernels.
pub struct Module {
    engine: Engine,
    program: Arc<Program>,
    infos: Vec<KernelInfo>,
    /// Per kernel: why it cannot run, for a PTX entry its launch left unbound
    /// ([`front::Launched::unbound`]). The binding is recorded here, beside the program, rather
    /// than in the IR: the kernel itself is valid, only this launch of it is incomplete.
    unbound: Vec<Option<ParseError>>,
    /// Per kernel: a listing's entry with instructions atomjit cannot lower (its `unbound`
    /// entry is then the error running it gives).
    broken: Vec<Option<front::sass::Broken>>,
    /// Per kernel (empty when not given): every construct that keeps a PTX entry from running
    /// ([`front::Launched::unsupported`]).
    unsupported: Vec<Vec<ParseError>>,
    /// Per kernel (empty when not given): a PTX entry's `.param` list, which
    /// [`Module::launch`] binds its arguments to ([`Module::signature`]).
    entry_params: Vec<Option<Vec<front::ptx::EntryParam>>>,
    compiled: Vec<OnceLock<Compiled>>,
    /// vISA kernels lowered for launches from code, per list of argument kinds
    /// ([`Module::launch`]).
    variants: std::sync::Mutex<std::collections::HashMap<args::VariantKey, Arc<args::VisaVariant>>>,
}

/// Changes to a kernel's declared launch, from the command line or a caller.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub shared_bytes: Option<u32>,
    /// New initialisers for named buffers.
    pub buffers: Vec<(String, Init)>,
    /// New values for named scalar parameters.
    pub params: Vec<(String, Scalar)>,
    /// Extra expectations, checked after the declared ones.
    pub expects: Vec<Expect>,
    /// `--expect 'trap REASON'`: the launch must trap for that reason (replaces the kernel's
    /// own `.expect trap`).
    pub expect_trap: Option<crate::ir::TrapExpect>,
}

/// What a launch did and left behind.
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunReport {
    pub kernel: String,
    /// The backend that ran the kernel.
    pub backend: Backend,
    /// Why that is not the backend asked for (a kernel too large for the JIT runs on the
    /// interpreter, see [`Module::effective_backend`]).
    pub fallback: Option<String>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    pub deterministic: bool,
    pub launch: LaunchStats,
    /// Every buffer after the launch (also after a trap: whatever the kernel wrote so far).
    pub buffers: Vec<Buffer>,
    /// Expectation verdicts (only that of `.expect trap` if the launch failed).
    pub expectations: Vec<ExpectOutcome>,
    /// A trap or watchdog report, if the launch did not complete.
    pub failure: Option<Failure>,
    /// The launch trapped as its `.expect trap REASON` line said it would.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub expected_trap: bool,
}

/// Why a launch did not complete. As JSON: `{"trap": ...}` or `{"watchdog": ...}`.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Failure {
    Trap(Box<exec::Trap>),
    Watchdog(Box<exec::WatchdogReport>),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Trap(t) => write!(f, "{t}"),
            Failure::Watchdog(w) => write!(f, "{w}"),
        }
    }
}

impl RunReport {
    pub fn buffer(&self, name: &str) -> Option<&Buffer> {
        self.buffers.iter().find(|b| b.name == name)
    }
    /// True when the launch completed, or trapped as `.expect trap` said, and every
    /// expectation held.
    pub fn passed(&self) -> bool {
        (self.failure.is_none() || self.expected_trap) && self.expectations.iter().all(|e| e.passed)
    }
}

impl Module {
    pub fn program(&self) -> &Program {
        &self.program
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Kernel names in file order.
    pub fn kernel_names(&self) -> Vec<&str> {
        self.program
            .kernels
            .iter()
            .map(|k| k.name.as_str())
            .collect()
    }

    /// The kernels `selection` names (as given, unchecked), or every kernel in file order if it
    /// names none: the command line's repeatable `--kernel`.
    pub fn selected_kernels(&self, selection: &[String]) -> Vec<String> {
        if selection.is_empty() {
            self.kernel_names().into_iter().map(String::from).collect()
        } else {
            selection.to_vec()
        }
    }

    fn index_of(&self, name: &str) -> Result<usize, Error> {
        self.program
            .kernels
            .iter()
            .position(|k| k.name == name)
            .ok_or_else(|| Error::UnknownKernel(name.to_string(), self.kernel_names().join(", ")))
    }

    /// The kernel called `name` and what validation proved about it.
    pub fn kernel(&self, name: &str) -> Result<(&Kernel, &KernelInfo), Error> {
        let i = self.index_of(name)?;
        Ok((&self.program.kernels[i], &self.infos[i]))
    }

    /// Why kernel `name` cannot run, if it is a PTX entry with parameters that its launch left
    /// unbound: the error [`Module::run`] and [`Module::prepare`] return for it.
    pub fn unbound(&self, name: &str) -> Result<Option<&ParseError>, Error> {
        Ok(self.unbound[self.index_of(name)?].as_ref())
    }

    /// Why kernel `name` of a listing cannot run: every instruction form atomjit could not
    /// lower, with counts (`atomjit check` prints it). Running it is an [`Error::Unbound`] with
    /// the same report.
    pub fn broken(&self, name: &str) -> Result<Option<&front::sass::Broken>, Error> {
        Ok(self.broken[self.index_of(name)?].as_ref())
    }

    /// Every construct that keeps kernel `name` from running, if it is a PTX entry atomjit
    /// could not lower (empty otherwise). Such an entry is also [`Module::unbound`], with the
    /// first of them as the reason; the module's other entries run.
    pub fn unsupported(&self, name: &str) -> Result<&[ParseError], Error> {
        let i = self.index_of(name)?;
        Ok(self.unsupported.get(i).map_or(&[][..], Vec::as_slice))
    }

    /// The backend's prepared form of kernel `name` (compiled once, then reused).
    pub fn runner(&self, name: &str) -> Result<Arc<dyn WarpRunner>, Error> {
        self.runner_for(self.index_of(name)?, self.engine.inner.config.backend)
    }

    /// The backend kernel `i` runs on when `backend` is asked for, and why it differs: a
    /// kernel of more than [`JIT_MAX_INSTS`] instructions, or one whose estimated compile time
    /// exceeds half the engine's time limit, runs on the interpreter
    /// ([`jit_budget_fallback`]): compilation cannot be interrupted and runs outside the
    /// watchdog, so it would stall the launch for longer than the limit allows.
    pub fn effective_backend(&self, name: &str, backend: Backend) -> (Backend, Option<String>) {
        let Ok(i) = self.index_of(name) else {
            return (backend, None);
        };
        self.engine.backend_for(&self.program.kernels[i], backend)
    }

    fn lock_variants(
        &self,
    ) -> std::sync::MutexGuard<
        '_,
        std::collections::HashMap<args::VariantKey, Arc<args::VisaVariant>>,
    > {
        self.variants.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn runner_for(&self, i: usize, backend: Backend) -> Result<Arc<dyn WarpRunner>, Error> {
        let name = &self.program.kernels[i].name;
        let backend = self.effective_backend(name, backend).0;
        let make = || {
            self.engine
                .make_runner(&self.program.kernels[i], &self.infos[i], backend)
        };
        // Only the configured backend is cached; others (differential runs) are built per call.
        let configured = self
            .effective_backend(name, self.engine.inner.config.backend)
            .0;
        let result = if backend == configured {
            self.compiled[i].get_or_init(make).clone()
        } else {
            make()
        };
        result.map_err(|message| Error::Compile {
            kernel: self.program.kernels[i].name.clone(),
            message,
        })
    }

    /// Runs kernel `name` with its declared launch, changed by `overrides`, on the engine's
    /// backend.
    pub fn run(&self, name: &str, overrides: &Overrides) -> Result<RunReport, Error> {
        self.run_with(
            name,
            overrides,
            self.engine.inner.config.backend,
            self.engine.inner.config.deterministic,
        )
    }

    /// Like [`Module::run`] with an explicit backend and determinism (used by differential runs).
    pub fn run_with(
        &self,
        name: &str,
        overrides: &Overrides,
        backend: Backend,
        deterministic: bool,
    ) -> Result<RunReport, Error> {
        let prepared = self.prepare(name, overrides, backend, deterministic)?;
        let outcome = prepared.launch();
        prepared.into_report(outcome)
    }

    /// Allocates and initialises a launch of kernel `name` without running it: the memory
    /// image, the constant bank and the backend's compiled kernel. [`Prepared::launch`] can then
    /// run it any number of times on the same memory (benchmarks measure exactly that).
    pub fn prepare(
        &self,
        name: &str,
        overrides: &Overrides,
        backend: Backend,
        deterministic: bool,
    ) -> Result<Prepared<'_>, Error> {
        let i = self.index_of(name)?;
        if let Some(e) = &self.unbound[i] {
            return Err(Error::Unbound(e.clone()));
        }
        let kernel = &self.program.kernels[i];
        let spec = &kernel.launch;
        let grid = overrides.grid.unwrap_or(spec.grid);
        let block = overrides.block.unwrap_or(spec.block);
        let mut shared_bytes = overrides.shared_bytes.unwrap_or(spec.shared_bytes);
        if kernel.dialect == crate::ir::Dialect::Visa {
            // A vISA kernel: each warp (thread) keeps its register file in the window (none
            // when every variable is in registers), and a thread has all its channels.
            let threads: u64 = block.iter().map(|&d| u64::from(d)).product();
            let warp = u64::from(kernel.warp_size);
            if threads % warp != 0 {
                return Err(Error::Override(format!(
                    "kernel `{}` is SIMD{warp}: its work-group size ({threads}) must be a \
                     multiple of {warp}, so that every thread has all its channels",
                    kernel.name
                )));
            }
            let window = u64::from(shared_bytes) + threads / warp * u64::from(spec.shared_per_warp);
            shared_bytes = u32::try_from(window).unwrap_or(u32::MAX);
        }
        valid::check_launch(grid, block, shared_bytes).map_err(Error::Override)?;
        let has = |name: &str, buffer: bool| {
            spec.params
                .iter()
                .any(|p| p.name == name && p.kind.elements().is_some() == buffer)
        };
        if let Some((name, _)) = overrides.buffers.iter().find(|(n, _)| !has(n, true)) {
            return Err(Error::Override(format!(
                "kernel `{}` has no buffer named `{name}`",
                kernel.name
            )));
        }
        if let Some((name, _)) = overrides.params.iter().find(|(n, _)| !has(n, false)) {
            return Err(Error::Override(format!(
                "kernel `{}` has no scalar parameter named `{name}`",
                kernel.name
            )));
        }

        // Global memory: one allocation per buffer and per surface (in its layout),
        // initialised.
        let mut buffers = Vec::new();
        for p in &spec.params {
            let (elem, len, init, placement) = match &p.kind {
                ParamKind::Buffer { elem, len, init } => (*elem, *len, init, Placement::Linear),
                ParamKind::Surface(d) => (
                    d.elem,
                    d.shape.elements(),
                    &d.init,
                    Placement::Surface {
                        shape: d.shape,
                        layout: d.layout,
                    },
                ),
                ParamKind::Scalar { .. } | ParamKind::SurfaceAddress { .. } => continue,
            };
            let init = overrides
                .buffers
                .iter()
                .rev()
                .find(|(n, _)| n == &p.name)
                .map_or(init, |(_, i)| i);
            buffers.push(BufferSlot {
                name: p.name.clone(),
                elem,
                len,
                init: init.clone(),
                placement,
                address: 0,
            });
        }
        let sizes: Vec<u64> = buffers
            .iter()
            .map(|b| b.placement.bytes(b.elem.bytes(), b.len))
            .collect();
        // A run's report views the linear buffers in the arena ([`Prepared::into_report`])
        // and copies only the surfaces (gathered into logical order): the guard counts those
        // copies with the arena.
        let copies: u64 = buffers
            .iter()
            .filter(|b| b.placement != Placement::Linear)
            .map(|b| b.len.saturating_mul(u64::from(b.elem.bytes())))
            .fold(0, u64::saturating_add);
        let (global, addresses) = GlobalMemory::try_with_allocations_and(&sizes, copies)
            .map_err(|e| Error::Launch(format!("kernel `{name}`: {e}")))?;
        for (b, &addr) in buffers.iter_mut().zip(&addresses) {
            b.address = addr;
        }

        // Constant bank 0: the architecture's ABI area (geometry, windows, sizes), then the
        // parameters at their declared offsets.
        let cbank_len = valid::cbank_bytes(spec);
        let mut cbank = vec![0u8; cbank_len as usize];
        let dynamic_shared = shared_bytes.saturating_sub(spec.static_shared);
        let abi = spec.layout.abi_area(block, grid, dynamic_shared);
        cbank[..abi.len()].copy_from_slice(&abi);
        let mut put = |off: usize, raw: u64, size: usize| {
            cbank[off..off + size].copy_from_slice(&raw.to_le_bytes()[..size])
        };
        // The device address of each surface, for `&SURFACE` parameters.
        let allocated = spec
            .params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Buffer { .. } | ParamKind::Surface(_)))
            .zip(addresses.iter());
        let surface_bases: Vec<(&str, u64)> = allocated
            .filter(|(p, _)| matches!(p.kind, ParamKind::Surface(_)))
            .map(|(p, a)| (p.name.as_str(), *a))
            .collect();
        let mut next_buffer = addresses.iter();
        // The header pool: every surface, in declaration order, at its allocation.
        let mut surfaces = Vec::new();
        for p in &spec.params {
            let (raw, size) = match &p.kind {
                ParamKind::Buffer { .. } => {
                    (*next_buffer.next().expect("one address per buffer"), 8)
                }
                // The handle: `samplerPtr[31:20] | headerPtr[19:0]` with the surface's index
                // in the header pool (docs/surfaces.md).
                ParamKind::Surface(d) => {
                    let base = *next_buffer.next().expect("one address per surface");
                    surfaces.push(SurfaceHeader::new(d, base));
                    ((surfaces.len() - 1) as u64, 8)
                }
                // Checked when the launch was parsed (`front::program::check_surface_addresses`).
                ParamKind::SurfaceAddress { surface } => (
                    surface_bases
                        .iter()
                        .find(|(n, _)| n == surface)
                        .map_or(0, |(_, a)| *a),
                    8,
                ),
                ParamKind::Scalar { ty, value } => {
                    let value = overrides
                        .params
                        .iter()
                        .rev()
                        .find(|(n, _)| n == &p.name)
                        .map_or(*value, |(_, v)| *v);
                    (buffers::encode(*ty, value), ty.bytes() as usize)
                }
            };
            put(p.cbank_offset as usize, raw, size);
        }

        let runner = self.runner_for(i, backend)?;
        let (backend, fallback) = self.effective_backend(name, backend);
        let config = LaunchConfig {
            grid,
            block,
            shared_bytes,
            threads: self.engine.inner.config.threads,
            deterministic,
            timeout: self.engine.inner.config.timeout,
            light_phases: exec::LIGHT_PHASES_PER_QUANTUM,
        };
        let prepared = Prepared {
            module: self,
            index: i,
            backend,
            fallback,
            runner,
            global,
            cbank,
            surfaces,
            config,
            buffers,
            expects: spec
                .expects
                .iter()
                .chain(&overrides.expects)
                .cloned()
                .collect(),
            expect_trap: overrides
                .expect_trap
                .clone()
                .or_else(|| spec.expect_trap.clone()),
        };
        prepared.initialize_buffers(true);
        Ok(prepared)
    }
}

struct BufferSlot {
    name: String,
    elem: Ty,
    len: u64,
    init: Init,
    /// Where its elements sit in the allocation (a surface's layout).
    placement: Placement,
    address: u64,
}

/// A launch with its memory allocated and initialised, ready to run (see [`Module::prepare`]).
pub struct Prepared<'m> {
    module: &'m Module,
    index: usize,
    backend: Backend,
    /// Why `backend` is not the one asked for (see [`Module::effective_backend`]).
    fallback: Option<String>,
    runner: Arc<dyn WarpRunner>,
    global: GlobalMemory,
    cbank: Vec<u8>,
    /// The launch's surface header pool (`ir::surface::SurfaceHeader`), in declaration order.
    surfaces: Vec<SurfaceHeader>,
    config: LaunchConfig,
    buffers: Vec<BufferSlot>,
    expects: Vec<Expect>,
    expect_trap: Option<crate::ir::TrapExpect>,
}

impl Prepared<'_> {
    /// Runs the kernel once on the current memory image. A launch that fails says why and what
    /// ran before it stopped ([`FailedLaunch`]).
    pub fn launch(&self) -> Result<LaunchStats, Box<FailedLaunch>> {
        let kernel = &self.module.program.kernels[self.index];
        let info = &self.module.infos[self.index];
        exec::launch_counted(
            (kernel, info, self.runner.as_ref()),
            (&self.global, &self.cbank, &self.surfaces),
            &self.config,
        )
    }

    /// A runner of single CTAs of this launch on the calling thread, with the compiled kernel
    /// and this memory image (see [`exec::CtaRunner`]; litmus tests run each CTA on a host
    /// thread of their own). Each thread that runs CTAs needs its own runner.
    pub fn cta_runner(&self) -> Result<exec::CtaRunner<'_>, LaunchError> {
        let kernel = &self.module.program.kernels[self.index];
        let info = &self.module.infos[self.index];
        exec::CtaRunner::new(
            kernel,
            info,
            self.runner.as_ref(),
            &self.global,
            &self.cbank,
            &self.surfaces,
            &self.config,
        )
    }

    /// Restores every buffer to its initial value.
    pub fn reset(&self) {
        self.initialize_buffers(false);
    }

    /// Writes every buffer's initial value; `fresh`: the memory is still all zero.
    fn initialize_buffers(&self, fresh: bool) {
        for b in &self.buffers {
            self.initialize(b, fresh);
        }
    }

    /// Writes one buffer's initial value.
    fn initialize(&self, b: &BufferSlot, fresh: bool) {
        buffers::initialize(
            &self.global,
            b.address,
            &b.placement,
            b.elem,
            b.len,
            &b.init,
            fresh,
        );
    }

    /// Restores one buffer to its initial value (false if there is no such buffer).
    pub fn reset_buffer(&self, name: &str) -> bool {
        let Some(b) = self.buffers.iter().find(|b| b.name == name) else {
            return false;
        };
        self.initialize(b, false);
        true
    }

    /// The launch configuration (grid, block, shared bytes, threads).
    pub fn config(&self) -> &LaunchConfig {
        &self.config
    }

    /// The global memory image.
    pub fn global(&self) -> &GlobalMemory {
        &self.global
    }

    /// Every buffer's current contents. Panics if the host cannot hold a copy; see
    /// [`Prepared::try_buffers`].
    pub fn buffers(&self) -> Vec<Buffer> {
        self.try_buffers().unwrap_or_else(|e| panic!("{e}"))
    }

    /// Every buffer's current contents, or why the host cannot hold a copy of them.
    pub fn try_buffers(&self) -> Result<Vec<Buffer>, Error> {
        self.buffers
            .iter()
            .map(|b| copy_out(b, |at, out| self.global.read(at, out)))
            .collect()
    }

    /// Turns a launch outcome into a report: buffers copied back, expectations checked. A
    /// failed launch reports the counters and time of what ran before it stopped. The launch
    /// can run again; [`Prepared::into_report`] makes the same report without the copies.
    pub fn finish(
        &self,
        outcome: Result<LaunchStats, Box<FailedLaunch>>,
    ) -> Result<RunReport, Error> {
        let buffers = self.try_buffers()?;
        self.report(buffers, outcome)
    }

    /// [`Prepared::finish`] for the launch's last run: the device memory is frozen and the
    /// report's buffers view it (a surface, whose elements are not in logical order, is still
    /// copied), so the host holds the buffers once rather than twice.
    pub fn into_report(
        mut self,
        outcome: Result<LaunchStats, Box<FailedLaunch>>,
    ) -> Result<RunReport, Error> {
        let memory = Arc::new(std::mem::replace(&mut self.global, GlobalMemory::empty()).freeze());
        let buffers = self
            .buffers
            .iter()
            .map(|b| match b.placement {
                Placement::Linear => {
                    let len = b.len * u64::from(b.elem.bytes());
                    let bytes = Bytes::view(memory.clone(), b.address, len)
                        .expect("a buffer is inside the arena");
                    Ok(Buffer {
                        name: b.name.clone(),
                        elem: b.elem,
                        address: b.address,
                        bytes,
                    })
                }
                Placement::Surface { .. } => copy_out(b, |at, out| {
                    let len = out.len() as u64;
                    out.copy_from_slice(memory.bytes(at, len).expect("in the arena"))
                }),
            })
            .collect::<Result<Vec<_>, Error>>()?;
        self.report(buffers, outcome)
    }

    /// The report of a launch outcome with its buffers' contents.
    fn report(
        &self,
        buffers: Vec<Buffer>,
        outcome: Result<LaunchStats, Box<FailedLaunch>>,
    ) -> Result<RunReport, Error> {
        let (launch, failure) = match outcome {
            Ok(stats) => (stats, None),
            Err(failed) => {
                let FailedLaunch { error, ran } = *failed;
                match error {
                    LaunchError::Trap(t) => (ran, Some(Failure::Trap(t))),
                    LaunchError::Watchdog(w) => (ran, Some(Failure::Watchdog(w))),
                    LaunchError::Config(msg) => return Err(Error::Launch(msg)),
                }
            }
        };
        let mut expectations: Vec<ExpectOutcome> = if failure.is_none() {
            self.expects
                .iter()
                .map(|e| expect::evaluate(e, &buffers))
                .collect()
        } else {
            Vec::new()
        };
        // `.expect trap REASON`: the launch must have trapped for that reason.
        let mut expected_trap = false;
        if let Some(t) = &self.expect_trap {
            let (passed, actual) = match &failure {
                Some(Failure::Trap(trap)) => (trap.reason.name() == t.reason, trap.to_string()),
                Some(Failure::Watchdog(w)) => (false, w.to_string()),
                None => (false, "the launch completed without a trap".to_string()),
            };
            expected_trap = passed;
            expectations.push(ExpectOutcome {
                text: t.text.clone(),
                line: t.span.line,
                passed,
                expected: format!("a trap: {}", t.reason),
                actual,
            });
        }
        Ok(RunReport {
            kernel: self.module.program.kernels[self.index].name.clone(),
            backend: self.backend,
            fallback: self.fallback.clone(),
            grid: self.config.grid,
            block: self.config.block,
            shared_bytes: self.config.shared_bytes,
            deterministic: self.config.deterministic,
            launch,
            buffers,
            expectations,
            failure,
            expected_trap,
        })
    }
}

/// A copy of one buffer's contents (a surface's elements gathered into logical order), read
/// from device memory by `read(address, out)`.
fn copy_out(b: &BufferSlot, read: impl Fn(u64, &mut [u8])) -> Result<Buffer, Error> {
    let len = b.len * u64::from(b.elem.bytes());
    let mut bytes = Vec::new();
    usize::try_from(len)
        .ok()
        .and_then(|n| bytes.try_reserve_exact(n).ok().map(|()| n))
        .map(|n| bytes.resize(n, 0))
        .ok_or_else(|| {
            Error::Launch(format!(
                "cannot copy buffer `{}` ({len} bytes) back from device memory: the host allocator refused",
                b.name
            ))
        })?;
    match b.placement {
        Placement::Linear => read(b.address, &mut bytes),
        Placement::Surface { .. } => {
            let size = b.elem.bytes();
            for (i, chunk) in bytes.chunks_exact_mut(size as usize).enumerate() {
                read(b.address + b.placement.offset(size, i as u64), chunk);
            }
        }
    }
    Ok(Buffer {
        name: b.name.clone(),
        elem: b.elem,
        address: b.address,
        bytes: bytes.into(),
    })
}
