//! `atomjit._atomjit`: the extension module under the Python package `atomjit`
//! (`python/atomjit/`). It is deliberately thin: it owns the engine, device memory and loaded
//! modules, and moves bytes between numpy arrays and device buffers. Policy that reads better in
//! Python (telling paths from text, converting Python scalars by a kernel's parameter types,
//! staging numpy arrays for a launch, building report objects) lives in the package, which is
//! the documented API (`docs/python.md`).
//!
//! Errors are raised as the package's exception classes (`atomjit.errors`), which this module
//! imports when it raises one: a trap or watchdog report is passed as JSON to
//! `atomjit.errors._failure`, which builds the `TrapError`/`WatchdogError` with its attributes.

use atomjit::engine::args::FormalKind;
use atomjit::engine::{
    self, Arg, Backend, Config, DeviceBuffer, Failure, OverrideArgs, Signature, Sources,
};
use atomjit::exec::LaunchStats;
use atomjit::front::LaunchText;
use atomjit::ir::{AtomicOp, Ty};
use numpy::{PyReadonlyArray1, PyReadwriteArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

mod tile;

/// An exception of class `class` of `atomjit.errors`, made with `message`.
fn error(py: Python<'_>, class: &str, message: impl Into<String>) -> PyErr {
    let made = py
        .import("atomjit.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1((message.into(),)));
    match made {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// A launch's counters as JSON (what `atomjit.LaunchStats` is built from).
fn stats_json(s: &LaunchStats) -> serde_json::Value {
    let atomics: serde_json::Map<String, serde_json::Value> = AtomicOp::ALL
        .iter()
        .map(|op| (op.name().to_string(), s.stats.atomics[op.index()].into()))
        .collect();
    serde_json::json!({
        "wall_seconds": s.wall.as_secs_f64(),
        "host_threads": s.threads,
        "ctas": s.ctas,
        "lanes": s.lanes,
        "warp_instructions": s.stats.warp_insts,
        "atomics": atomics,
        "cas_failures": s.stats.cas_failures,
        "spin_fast_fails": s.stats.spin_fast_fails,
        "quanta": s.quanta,
        "yields": s.yields,
        "divergences": s.divergences,
        "reconvergences": s.reconvergences,
        "barrier_releases": s.barrier_releases,
    })
}

/// A trap or watchdog report as JSON, with what ran before the launch stopped.
fn failure_json(failure: &Failure, ran: &LaunchStats) -> serde_json::Value {
    let mut v = match failure {
        Failure::Trap(t) => {
            let mut v = serde_json::to_value(t).expect("traps serialise");
            v["failure"] = "trap".into();
            v["reason"] = t.reason.name().into();
            v["reason_text"] = t.reason.message().into();
            v
        }
        Failure::Watchdog(w) => {
            let mut v = serde_json::to_value(w).expect("watchdog reports serialise");
            v["failure"] = "watchdog".into();
            v
        }
    };
    v["message"] = failure.to_string().trim_end().into();
    v["stats"] = stats_json(ran);
    v
}

/// The exception object (not raised) for a failed launch: `atomjit.errors._failure(json)`.
fn failure_object<'py>(
    py: Python<'py>,
    failure: &Failure,
    ran: &LaunchStats,
) -> PyResult<Bound<'py, PyAny>> {
    let text = failure_json(failure, ran).to_string();
    py.import("atomjit.errors")?
        .getattr("_failure")?
        .call1((text,))
}

/// An engine error as the package's exception; `sources` renders parse and validation errors
/// against the text they point into.
fn engine_error(py: Python<'_>, e: engine::Error, sources: Option<&Sources>) -> PyErr {
    use engine::Error as E;
    let rendered = |e: &E| match sources {
        Some(s) => s.render(e).trim_end().to_string(),
        None => e.to_string(),
    };
    match &e {
        E::Parse(_) | E::Unbound(_) => error(py, "ParseError", rendered(&e)),
        E::Validation { .. } => error(py, "ValidationError", rendered(&e)),
        E::UnknownKernel(..) => error(py, "KernelNotFoundError", e.to_string()),
        E::Override(_) => error(py, "ArgumentError", e.to_string()),
        E::Compile { .. } => error(py, "CompileError", e.to_string()),
        E::Launch(_) => error(py, "LaunchError", e.to_string()),
        E::Argument(_) => error(py, "ArgumentError", e.to_string()),
        E::Device(_) => error(py, "DeviceError", e.to_string()),
        E::Tile(_) => error(py, "TileError", e.to_string()),
        E::Failed { failure, ran, .. } => match failure_object(py, failure, ran) {
            Ok(obj) => PyErr::from_value(obj),
            Err(err) => err,
        },
    }
}

/// The engine: settings, device memory, loading.
#[pyclass(module = "atomjit._atomjit", frozen)]
struct Engine {
    engine: engine::Engine,
}

#[pymethods]
impl Engine {
    /// `_Engine(backend, threads, deterministic, timeout)`: `threads` None for every core,
    /// `timeout` None or 0 for no watchdog limit (seconds otherwise).
    #[new]
    #[pyo3(signature = (backend, threads, deterministic, timeout))]
    fn new(
        backend: &str,
        threads: Option<usize>,
        deterministic: bool,
        timeout: Option<f64>,
    ) -> PyResult<Self> {
        let backend: Backend = backend.parse().map_err(PyValueError::new_err)?;
        let mut config = Config::default();
        config.backend(backend).deterministic(deterministic);
        if let Some(n) = threads {
            if !(1..=1024).contains(&n) {
                return Err(PyValueError::new_err(format!(
                    "threads must be 1 to 1024, not {n}"
                )));
            }
            config.threads(n);
        }
        let timeout = match timeout {
            None => None,
            Some(0.0) => None,
            Some(t) if (0.001..=1e9).contains(&t) => Some(Duration::from_secs_f64(t)),
            Some(t) => {
                return Err(PyValueError::new_err(format!(
                    "timeout must be 0.001 to 1e9 seconds (or 0 / None: no limit), not {t}"
                )))
            }
        };
        config.timeout(timeout);
        Ok(Engine {
            engine: engine::Engine::new(&config),
        })
    }

    /// The backend's name (`jit`, `interp`).
    #[getter]
    fn backend(&self) -> &'static str {
        self.engine.config().backend.name()
    }

    /// Host worker threads.
    #[getter]
    fn threads(&self) -> usize {
        self.engine.config().threads
    }

    #[getter]
    fn deterministic(&self) -> bool {
        self.engine.config().deterministic
    }

    /// The watchdog's limit in seconds, or None.
    #[getter]
    fn timeout(&self) -> Option<f64> {
        self.engine.config().timeout.map(|t| t.as_secs_f64())
    }

    /// Parses and validates `text` (dialect from `name`, or the text); `launch` is a list of
    /// `(source name, text)` launch sources, or None to load without a launch.
    #[pyo3(signature = (name, text, launch))]
    fn load(
        &self,
        py: Python<'_>,
        name: &str,
        text: &str,
        launch: Option<Vec<(String, String)>>,
    ) -> PyResult<Module> {
        let mut sources = Sources {
            file: name.to_string(),
            source: text.to_string(),
            launch: LaunchText::new(),
        };
        if let Some(launch) = &launch {
            for (source, text) in launch {
                sources.launch.push(source, text);
            }
        }
        let loaded = py.detach(|| match &launch {
            Some(_) => self.engine.load_with_launch(name, text, &sources.launch),
            None => self.engine.load(name, text),
        });
        let module = loaded.map_err(|e| engine_error(py, e, Some(&sources)))?;
        Ok(Module {
            module,
            name: name.to_string(),
            sources,
        })
    }

    /// A zeroed device buffer of `nbytes` bytes.
    fn alloc(&self, py: Python<'_>, nbytes: u64) -> PyResult<Buffer> {
        let buffer = self
            .engine
            .device()
            .alloc(nbytes)
            .map_err(|e| error(py, "DeviceError", e.to_string()))?;
        Ok(Buffer {
            engine: self.engine.clone(),
            buffer,
            freed: AtomicBool::new(false),
        })
    }

    /// The number of live device buffers.
    fn live_buffers(&self) -> usize {
        self.engine.device().buffers().len()
    }
}

/// One device allocation. Dropping the object frees it (unless `free` did already).
#[pyclass(module = "atomjit._atomjit", frozen)]
struct Buffer {
    engine: engine::Engine,
    buffer: DeviceBuffer,
    freed: AtomicBool,
}

impl Buffer {
    fn live(&self, py: Python<'_>) -> PyResult<DeviceBuffer> {
        if self.freed.load(Ordering::Acquire) {
            return Err(error(
                py,
                "DeviceError",
                format!("the device array at {:#x} was freed", self.buffer.address()),
            ));
        }
        Ok(self.buffer)
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if !self.freed.swap(true, Ordering::AcqRel) {
            // Already dead only if the engine lost it, which cannot happen: nothing to report.
            let _ = self.engine.device().free(self.buffer);
        }
    }
}

#[pymethods]
impl Buffer {
    /// The device address kernels see.
    #[getter]
    fn address(&self) -> u64 {
        self.buffer.address()
    }

    /// The length in bytes.
    #[getter]
    fn nbytes(&self) -> u64 {
        self.buffer.bytes()
    }

    /// True once freed.
    #[getter]
    fn freed(&self) -> bool {
        self.freed.load(Ordering::Acquire)
    }

    /// Frees the allocation; a second call raises `DeviceError`.
    fn free(&self, py: Python<'_>) -> PyResult<()> {
        let buffer = self.live(py)?;
        self.freed.store(true, Ordering::Release);
        self.engine
            .device()
            .free(buffer)
            .map_err(|e| error(py, "DeviceError", e.to_string()))
    }

    /// Copies `data` (a one-dimensional uint8 array: the bytes of a C-contiguous array) into
    /// the buffer from byte `offset`.
    fn write(&self, py: Python<'_>, data: PyReadonlyArray1<'_, u8>, offset: u64) -> PyResult<()> {
        let buffer = self.live(py)?;
        let bytes = data
            .as_slice()
            .map_err(|e| error(py, "ArgumentError", e.to_string()))?;
        self.engine
            .device()
            .write_bytes(buffer, offset, bytes)
            .map_err(|e| error(py, "DeviceError", e.to_string()))
    }

    /// Fills `out` (a one-dimensional uint8 array viewing a C-contiguous array's bytes) from the
    /// buffer's bytes from `offset` on.
    fn read(
        &self,
        py: Python<'_>,
        mut out: PyReadwriteArray1<'_, u8>,
        offset: u64,
    ) -> PyResult<()> {
        let buffer = self.live(py)?;
        let bytes = out
            .as_slice_mut()
            .map_err(|e| error(py, "ArgumentError", e.to_string()))?;
        self.engine
            .device()
            .read_bytes(buffer, offset, bytes)
            .map_err(|e| error(py, "DeviceError", e.to_string()))
    }
}

/// A loaded (parsed and validated) program.
#[pyclass(module = "atomjit._atomjit", frozen)]
struct Module {
    module: engine::Module,
    name: String,
    sources: Sources,
}

/// One launch argument as the package passes it: a device buffer, or `(type name, bits)`.
fn raw_arg(py: Python<'_>, ob: &Bound<'_, PyAny>) -> PyResult<Arg> {
    if let Ok(b) = ob.cast::<Buffer>() {
        return Ok(Arg::Buffer(b.get().live(py)?));
    }
    let (ty, bits): (String, u64) = ob.extract()?;
    let ty = Ty::from_name(&ty)
        .ok_or_else(|| error(py, "ArgumentError", format!("no scalar type `{ty}`")))?;
    Ok(Arg::Scalar { ty, bits })
}

/// A buffer after a program run: name, atomjit type, device address, bytes.
type BufferOut<'py> = (String, &'static str, u64, Bound<'py, PyBytes>);

#[pymethods]
impl Module {
    /// The name the program was loaded under.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    /// Kernel names in file order.
    #[getter]
    fn kernels(&self) -> Vec<String> {
        self.module
            .kernel_names()
            .into_iter()
            .map(String::from)
            .collect()
    }

    /// The program's dialect (`ptx`, `sass`, `visa`).
    #[getter]
    fn dialect(&self) -> String {
        self.module
            .program()
            .kernels
            .first()
            .map_or_else(String::new, |k| {
                match k.dialect {
                    atomjit::ir::Dialect::Ptx => "ptx",
                    atomjit::ir::Dialect::Sass => "sass",
                    atomjit::ir::Dialect::Visa => "visa",
                }
                .to_string()
            })
    }

    /// How kernel `kernel`'s arguments bind: `("params", text, [(name, type, offset, kind)])`
    /// with kind `buffer`, `scalar` or `buffer_or_scalar`; `("listing", text, base, reads_to)`;
    /// or `("unsupported", text)`.
    fn signature<'py>(&self, py: Python<'py>, kernel: &str) -> PyResult<Bound<'py, PyTuple>> {
        let sig = self
            .module
            .signature(kernel)
            .map_err(|e| engine_error(py, e, None))?;
        let text = sig.to_string();
        match sig {
            Signature::Params(ps) => {
                let params: Vec<(String, &'static str, u32, &'static str)> = ps
                    .into_iter()
                    .map(|p| {
                        let kind = match p.kind {
                            FormalKind::Buffer => "buffer",
                            FormalKind::Scalar => "scalar",
                            FormalKind::BufferOrScalar => "buffer_or_scalar",
                        };
                        (p.name, p.ty.name(), p.cbank_offset, kind)
                    })
                    .collect();
                ("params", text, params).into_pyobject(py)
            }
            Signature::Listing { base, reads_to } => {
                ("listing", text, base, reads_to).into_pyobject(py)
            }
            Signature::Payload => ("payload", text).into_pyobject(py),
            Signature::Unsupported(_) => ("unsupported", text).into_pyobject(py),
        }
    }

    /// Launches `kernel` on device memory; returns the statistics as JSON text or raises.
    fn launch(
        &self,
        py: Python<'_>,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        args: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<String> {
        atomjit::valid::check_launch(grid, block, shared)
            .map_err(|e| error(py, "ArgumentError", format!("kernel `{kernel}`: {e}")))?;
        let bound = args
            .iter()
            .map(|a| raw_arg(py, a))
            .collect::<PyResult<Vec<Arg>>>()?;
        let outcome = py.detach(|| self.module.launch(kernel, grid, block, shared, &bound));
        match outcome {
            Ok(stats) => Ok(stats_json(&stats).to_string()),
            Err(e) => Err(engine_error(py, e, None)),
        }
    }

    /// Runs `kernel` with its declared launch (a program file's buffers and expectations),
    /// changed by the overrides. Returns `(report JSON, [(buffer name, type, address, bytes)])`.
    #[pyo3(signature = (kernel, grid, block, shared, sets, expects))]
    #[allow(clippy::too_many_arguments)]
    fn run<'py>(
        &self,
        py: Python<'py>,
        kernel: &str,
        grid: Option<String>,
        block: Option<String>,
        shared: Option<u32>,
        sets: Vec<String>,
        expects: Vec<String>,
    ) -> PyResult<(String, Vec<BufferOut<'py>>)> {
        let args = OverrideArgs {
            grid,
            block,
            shared,
            sets,
            expects,
        };
        let overrides = self
            .module
            .overrides(kernel, &args)
            .map_err(|e| engine_error(py, e, Some(&self.sources)))?;
        let report = py
            .detach(|| self.module.run(kernel, &overrides))
            .map_err(|e| engine_error(py, e, Some(&self.sources)))?;
        let failure = match &report.failure {
            Some(f) => failure_json(f, &report.launch),
            None => serde_json::Value::Null,
        };
        let json = serde_json::json!({
            "kernel": report.kernel,
            "backend": report.backend.name(),
            "fallback": report.fallback,
            "grid": report.grid,
            "block": report.block,
            "shared_bytes": report.shared_bytes,
            "deterministic": report.deterministic,
            "stats": stats_json(&report.launch),
            "expectations": report.expectations,
            "failure": failure,
            "expected_trap": report.expected_trap,
            "passed": report.passed(),
        });
        let buffers = report
            .buffers
            .iter()
            .map(|b| {
                (
                    b.name.clone(),
                    b.elem.name(),
                    b.address,
                    PyBytes::new(py, &b.bytes),
                )
            })
            .collect();
        Ok((json.to_string(), buffers))
    }
}

/// Reads a program or launch file the way the command line does (at most 256 MiB of UTF-8,
/// a byte-order mark skipped); raises `OSError` otherwise.
#[pyfunction]
fn read_text(path: &str) -> PyResult<String> {
    engine::load::read_text_file(std::path::Path::new(path), "")
        .map_err(pyo3::exceptions::PyOSError::new_err)
}

/// The extension module.
#[pymodule]
fn _atomjit(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Engine>()?;
    m.add_class::<Module>()?;
    m.add_class::<Buffer>()?;
    m.add_function(wrap_pyfunction!(read_text, m)?)?;
    m.add_function(wrap_pyfunction!(tile::tile_atomic, m)?)?;
    m.add_function(wrap_pyfunction!(tile::tile_atomic_device, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
