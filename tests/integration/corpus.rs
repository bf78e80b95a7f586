//! The CUDA corpus (`corpus/*.cu`, compiled by `scripts/corpus.py` into `corpus/gen/`): every
//! kernel runs from its NVRTC PTX (compute_80 and compute_90) and from each SASS listing
//! (ptxas for sm_80, sm_86 and sm_90; `cuobjdump -sass` and `nvdisasm -c` text), and meets the
//! expectations its launch file derives from the CUDA source, on both backends. In
//! deterministic mode the JIT leaves exactly the interpreter's memory, and the PTX and sm_80
//! SASS runs of a kernel leave the same memory image.
//!
//! What atomjit cannot run yet is listed in [`KNOWN_GAPS`] with the reason its error gives: the
//! test checks that each listed kernel is still refused with that reason (so the list shrinks
//! when support lands) and that every other kernel passes.

use super::*;
use atomjit::front::LaunchText;

/// `(source suffix, kernel, what the refusal says)` for every kernel atomjit refuses today. A
/// source suffix `sm_80` covers both listing formats of that architecture.
const KNOWN_GAPS: &[(&str, &str, &str)] = &[
    // Empty: every kernel of the corpus runs from every source (issues 10 and 11).
];

const CORPUS: &[&str] = &[
    "atomic_functions",
    "atomic_ref",
    "locks",
    "message_passing",
    "patterns",
    "shared_memory",
    "surfaces",
    "warp_aggregation",
];

/// The compiled sources of one corpus file: the suffix (`compute_80`, `sm_86`, ...) and path.
fn sources(name: &str) -> Vec<(String, String)> {
    let gen = format!("{}/corpus/gen", env!("CARGO_MANIFEST_DIR"));
    let mut v = Vec::new();
    for arch in ["compute_80", "compute_90"] {
        v.push((arch.to_string(), format!("{gen}/{name}.{arch}.ptx")));
    }
    for arch in ["sm_80", "sm_86", "sm_90"] {
        for tool in ["cuobjdump", "nvdisasm"] {
            v.push((arch.to_string(), format!("{gen}/{name}.{arch}.{tool}.sass")));
        }
    }
    v
}

fn launch_of(name: &str) -> (LaunchText, Vec<String>) {
    let path = format!("{}/corpus/{name}.launch", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let kernels = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix(".kernel "))
        .map(|k| k.split_whitespace().next().unwrap_or("").to_string())
        .collect();
    let mut l = LaunchText::new();
    l.push(&path, &text);
    (l, kernels)
}

fn gap(suffix: &str, kernel: &str) -> Option<&'static str> {
    KNOWN_GAPS
        .iter()
        .find(|(s, k, _)| *s == suffix && *k == kernel)
        .map(|(_, _, why)| *why)
}

/// Runs every kernel of every compiled source of `name` on `backend`; returns the memory image
/// (every buffer's bytes) of each passing run by `(source path, kernel)`.
fn run_corpus_file(name: &str, backend: Backend) -> Vec<(String, String, Vec<Vec<u8>>)> {
    let (launch, kernels) = launch_of(name);
    let mut images = Vec::new();
    for (suffix, path) in sources(name) {
        let text = std::fs::read_to_string(&path).unwrap();
        let module = engine(backend, 1, true).load_with_launch(&path, &text, &launch);
        // When no kernel of a listing can run the engine refuses the whole file; each kernel's
        // own reason then comes from the front-end, or from the validator.
        let reason_of = |kernel: &str| -> String {
            let dialect = atomjit::front::dialect_for(&path);
            match atomjit::front::parse_with_launch(&path, &text, dialect, &launch) {
                Err(e) => e.to_string(),
                Ok(l) => {
                    let i = l.program.kernels.iter().position(|k| k.name == kernel);
                    let invalid = |i: usize| {
                        atomjit::valid::validate(&l.program.kernels[i])
                            .err()
                            .map(|e| e.to_string())
                    };
                    i.and_then(|i| {
                        l.cannot_run(&path, i)
                            .map(|e| e.to_string())
                            .or_else(|| invalid(i))
                    })
                    .unwrap_or_else(|| "no reason".to_string())
                }
            }
        };
        for kernel in &kernels {
            let outcome = match &module {
                Err(_) => Err(reason_of(kernel)),
                Ok(m) => match m.run(kernel, &Overrides::default()) {
                    Err(e) => Err(e.to_string()),
                    Ok(r) if r.passed() => Ok(r),
                    Ok(r) => Err(format!(
                        "ran but failed: {:?} {:?}",
                        r.failure.map(|f| f.to_string()),
                        r.expectations
                            .iter()
                            .filter(|e| !e.passed)
                            .collect::<Vec<_>>()
                    )),
                },
            };
            match (gap(&suffix, kernel), outcome) {
                (None, Ok(r)) => images.push((
                    path.clone(),
                    kernel.clone(),
                    r.buffers.iter().map(|b| b.bytes.to_vec()).collect(),
                )),
                (None, Err(e)) => panic!("{path} `{kernel}` on {backend}: {e}"),
                (Some(why), Ok(_)) => panic!(
                    "{path} `{kernel}` on {backend} now runs and passes: remove its KNOWN_GAPS entry ({why})"
                ),
                (Some(why), Err(e)) => {
                    assert!(e.contains(why), "{path} `{kernel}`: expected `{why}` in {e}")
                }
            }
        }
    }
    images
}

fn check_corpus_file(name: &str) {
    let images = run_corpus_file(name, Backend::Interp);
    // The JIT leaves exactly the interpreter's memory (both deterministic).
    let jit = run_corpus_file(name, Backend::Jit);
    assert_eq!(
        jit.len(),
        images.len(),
        "{name}: the backends ran different kernels"
    );
    for ((path, kernel, interp), (_, _, native)) in images.iter().zip(&jit) {
        assert_eq!(
            interp, native,
            "`{kernel}` from {path}: the JIT and the interpreter differ"
        );
    }
    // The PTX and the sm_80 listing of one kernel leave the same memory (deterministic mode:
    // the same CTA, warp and lane order; warp-aggregated atomics change how many atomics run,
    // not what memory holds when the kernel's result is order-independent, which the corpus
    // kernels' results are within one warp order).
    for (path, kernel, image) in images
        .iter()
        .filter(|(p, _, _)| p.ends_with("compute_80.ptx"))
    {
        let sass = images
            .iter()
            .find(|(p, k, _)| p.ends_with("sm_80.cuobjdump.sass") && k == kernel);
        if let Some((sass_path, _, sass_image)) = sass {
            assert_eq!(
                image, sass_image,
                "`{kernel}`: {path} and {sass_path} leave different memory"
            );
        }
    }
}

#[test]
fn atomic_functions() {
    check_corpus_file("atomic_functions");
}

#[test]
fn atomic_ref() {
    check_corpus_file("atomic_ref");
}

#[test]
fn locks() {
    check_corpus_file("locks");
}

#[test]
fn message_passing() {
    check_corpus_file("message_passing");
}

#[test]
fn patterns() {
    check_corpus_file("patterns");
}

#[test]
fn shared_memory() {
    check_corpus_file("shared_memory");
}

#[test]
fn surfaces() {
    check_corpus_file("surfaces");
}

#[test]
fn warp_aggregation() {
    check_corpus_file("warp_aggregation");
}

#[test]
fn the_corpus_list_is_complete() {
    let dir = format!("{}/corpus", env!("CARGO_MANIFEST_DIR"));
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "cu").then(|| p.file_stem().unwrap().to_string_lossy().into())
        })
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, CORPUS);
}
