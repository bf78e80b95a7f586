//! Reports as JSON: serde-derived views of what a run reports, and the one way they are
//! printed ([`to_json_text`]).

use super::{ExpectOutcome, Failure, RunReport};
use crate::ir::{AtomicOp, Scalar};
use serde::Serialize;
use std::collections::BTreeMap;

/// `atomjit run --json`: one kernel's report.
#[derive(Debug, Clone, Serialize)]
pub struct RunJson<'r> {
    pub kernel: &'r str,
    /// The name of the backend that ran the kernel (`jit`, `interp`).
    pub backend: &'static str,
    /// Why that is not the backend asked for, or null.
    pub fallback: Option<&'r str>,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared_bytes: u32,
    pub deterministic: bool,
    pub host_threads: usize,
    pub wall_seconds: f64,
    /// Lane atomics by op name, every op (zero included).
    pub atomics: BTreeMap<&'static str, u64>,
    pub cas_failures: u64,
    pub spin_fast_fails: u64,
    pub warp_instructions: u64,
    pub expectations: &'r [ExpectOutcome],
    /// `{"trap": ...}` or `{"watchdog": ...}`, or null.
    pub failure: Option<&'r Failure>,
    pub exit_code: u8,
    /// The buffers asked for, by name: their elements.
    pub buffers: BTreeMap<&'r str, Vec<JsonScalar>>,
}

/// A buffer element in JSON: integers that fit 64 signed bits as numbers, larger ones as
/// decimal strings (JSON readers lose precision beyond that), floats as numbers (non-finite
/// ones as null).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum JsonScalar {
    Int(i64),
    Text(String),
    Float(f64),
}

impl From<Scalar> for JsonScalar {
    fn from(v: Scalar) -> JsonScalar {
        match v {
            Scalar::Int(i) => {
                i64::try_from(i).map_or_else(|_| JsonScalar::Text(i.to_string()), JsonScalar::Int)
            }
            Scalar::Float(f) => JsonScalar::Float(f),
        }
    }
}

impl RunReport {
    /// The report as `run --json` prints it, with the contents of the buffers named in `dumps`
    /// (names the report does not have are left out).
    pub fn json(&self, dumps: &[String]) -> RunJson<'_> {
        let s = &self.launch.stats;
        RunJson {
            kernel: &self.kernel,
            backend: self.backend.name(),
            fallback: self.fallback.as_deref(),
            grid: self.grid,
            block: self.block,
            shared_bytes: self.shared_bytes,
            deterministic: self.deterministic,
            host_threads: self.launch.threads,
            wall_seconds: self.launch.wall.as_secs_f64(),
            atomics: AtomicOp::ALL
                .iter()
                .map(|op| (op.name(), s.atomics[op.index()]))
                .collect(),
            cas_failures: s.cas_failures,
            spin_fast_fails: s.spin_fast_fails,
            warp_instructions: s.warp_insts,
            expectations: &self.expectations,
            failure: self.failure.as_ref(),
            exit_code: self.status().code(),
            buffers: dumps
                .iter()
                .filter_map(|n| self.buffer(n))
                .map(|b| (b.name.as_str(), b.values().map(JsonScalar::from).collect()))
                .collect(),
        }
    }
}

/// `value` as pretty-printed JSON with every object's keys in sorted order (the reports'
/// order since the first `--json`).
pub fn to_json_text<T: Serialize + ?Sized>(value: &T) -> String {
    let value = serde_json::to_value(value).expect("reports serialise");
    serde_json::to_string_pretty(&value).expect("JSON values print")
}
