//! Integration tests: one binary, a module per area.

mod bad_input;
mod cli;
mod convergence;
mod corpus;
mod cxx_atomics;
mod embedding;
mod engine;
mod litmus;
mod nvrtc;
mod programs;
mod progress;
mod ptx;
mod reuse;
mod sass_listing;
mod surfaces;
mod tile;
mod tile_examples;
mod traps;
mod validation;
mod visa;

use atomjit::engine::{Backend, Config, Engine, Module, Overrides, RunReport};

/// Every program file under `programs/`.
pub fn program_files() -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/programs"
    ))];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("programs/ is readable") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("s" | "sass" | "ptx" | "visaasm")
            ) {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// An engine with the given backend, thread count and determinism, and a 20 s watchdog.
pub fn engine(backend: Backend, threads: usize, deterministic: bool) -> Engine {
    let mut c = Config::default();
    c.backend(backend)
        .threads(threads)
        .deterministic(deterministic)
        .timeout(Some(std::time::Duration::from_secs(20)));
    Engine::new(&c)
}

/// Loads source text, panicking with the rendered error if it does not load.
pub fn load(engine: &Engine, name: &str, source: &str) -> Module {
    match engine.load(name, source) {
        Ok(m) => m,
        Err(e) => panic!("{name} does not load: {e}"),
    }
}

/// Loads a program file with its `NAME.launch` sidecar, if there is one (PTX modules take their
/// launch from it).
pub fn load_file(engine: &Engine, path: &std::path::Path) -> Module {
    let source = std::fs::read_to_string(path).unwrap();
    let name = path.to_string_lossy();
    let sidecar = path.with_extension("launch");
    if sidecar.is_file() {
        let mut launch = atomjit::front::LaunchText::new();
        launch.push(
            &sidecar.to_string_lossy(),
            &std::fs::read_to_string(&sidecar).unwrap(),
        );
        match engine.load_with_launch(&name, &source, &launch) {
            Ok(m) => m,
            Err(e) => panic!("{name} with {} does not load: {e}", sidecar.display()),
        }
    } else {
        load(engine, &name, &source)
    }
}

/// Runs the only (or named) kernel of `source` with the interpreter.
pub fn run_src(source: &str, threads: usize, deterministic: bool) -> RunReport {
    let m = load(
        &engine(Backend::Interp, threads, deterministic),
        "test.s",
        source,
    );
    let name = m.kernel_names()[0].to_string();
    m.run(&name, &Overrides::default()).expect("launch runs")
}

/// The backends every behavioural test runs on.
pub fn backends() -> Vec<Backend> {
    vec![Backend::Interp, Backend::Jit]
}

/// Runs the `atomjit` binary with `args`: (exit code, stdout, stderr).
pub fn atomjit(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_atomjit"))
        .args(args)
        .output()
        .expect("atomjit runs");
    (
        out.status.code().expect("exited normally"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A new, empty directory for files a test writes, named after `tag`. Every test process
/// has its own directory under Cargo's scratch space for integration tests
/// (`target/tmp/atomjit-tests/<pid>`, not the system's temporary directory). The first call
/// empties it (an earlier process may have had the same id) and, on Linux, removes the
/// directories of processes that are gone, so runs do not pile files up.
pub fn scratch_dir(tag: &str) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    static ROOT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    let root = ROOT.get_or_init(|| {
        let all = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("atomjit-tests");
        if let Ok(entries) = std::fs::read_dir(&all) {
            for entry in entries.flatten() {
                let pid = entry.file_name();
                // A process's directory is its pid; one without a live process is stale.
                let gone = pid
                    .to_str()
                    .and_then(|p| p.parse::<u32>().ok())
                    .is_some_and(|p| {
                        cfg!(target_os = "linux")
                            && !std::path::Path::new(&format!("/proc/{p}")).exists()
                    });
                if gone {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let own = all.join(std::process::id().to_string());
        let _ = std::fs::remove_dir_all(&own);
        own
    });
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = root.join(format!("{n}-{tag}"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes `text` to a temporary file named `name` in a directory of its own (tests run in
/// parallel and reuse names; see [`scratch_dir`]) and returns its path.
pub fn temp_file(name: &str, text: &str) -> String {
    let path = scratch_dir("file").join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}
