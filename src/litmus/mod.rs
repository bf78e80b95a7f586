//! Litmus tests: run a small multi-CTA PTX program many times and histogram its outcomes.
//!
//! A `.litmus` file has a header, then a line `.ptx`, then a PTX module with one entry:
//!
//! ```text
//! .observe out[0] out[1]                 // the outcome tuple: buffer elements read after a run
//! .forbidden out[0] == 1 && out[1] == 0  // or `.allowed ...`: a conjunction of `elem == value`
//! .grid 2                                // launch directives, as in a `.launch` sidecar
//! .block 1
//! .buffer x u32[1] = 0
//! .buffer delay u32[2] = 0               // optional: per-CTA spin count, randomised per run
//! .buffer out u32[2] = 0
//! .ptx
//! ...PTX module; each litmus thread is one CTA of one thread, told apart by %ctaid.x...
//! ```
//!
//! Lines starting with `//` and blank lines in the header are ignored. Each iteration the runner
//! restores every buffer ([`Prepared::reset`]), writes fresh pseudo-random values (0..256) into
//! a buffer named `delay` if there is one (the program spins that many times to perturb its
//! timing), launches, and records the observed tuple.

use std::collections::BTreeMap;

use crate::engine::{Backend, Config, Engine, Overrides};
use crate::front::LaunchText;

/// Whether the condition's outcome is forbidden (a failure if seen) or merely reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Forbidden,
    Allowed,
}

/// One buffer element: `name[index]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub buffer: String,
    pub index: usize,
}

/// A parsed litmus test.
#[derive(Debug, Clone)]
pub struct LitmusTest {
    pub observe: Vec<Location>,
    pub verdict: Verdict,
    /// Conjunction of `location == value`.
    pub condition: Vec<(Location, i128)>,
    pub launch: String,
    pub ptx: String,
}

/// The result of running a test.
#[derive(Debug, Clone)]
pub struct LitmusReport {
    /// Observed tuple -> number of iterations that produced it.
    pub histogram: BTreeMap<Vec<i128>, u64>,
    /// How many iterations satisfied the condition.
    pub condition_hits: u64,
    pub verdict: Verdict,
}

impl LitmusReport {
    /// True if a forbidden outcome was ever seen.
    pub fn forbidden_seen(&self) -> bool {
        self.verdict == Verdict::Forbidden && self.condition_hits > 0
    }
}

fn parse_location(text: &str) -> Result<Location, String> {
    let text = text.trim();
    let (name, rest) = text
        .split_once('[')
        .ok_or_else(|| format!("expected NAME[INDEX], found `{text}`"))?;
    let index = rest
        .strip_suffix(']')
        .and_then(|i| i.trim().parse::<usize>().ok())
        .ok_or_else(|| format!("bad index in `{text}`"))?;
    if name.trim().is_empty() {
        return Err(format!("missing buffer name in `{text}`"));
    }
    Ok(Location {
        buffer: name.trim().to_string(),
        index,
    })
}

/// Parses the text of a `.litmus` file.
pub fn parse(text: &str) -> Result<LitmusTest, String> {
    let mut observe = Vec::new();
    let mut verdict = None;
    let mut launch = String::new();
    let mut lines = text.lines();
    let mut saw_ptx = false;
    for line in lines.by_ref() {
        let t = line.trim();
        if t.is_empty() || t.starts_with("//") {
            continue;
        }
        if t == ".ptx" {
            saw_ptx = true;
            break;
        }
        if let Some(rest) = t.strip_prefix(".observe") {
            for loc in rest.split_whitespace() {
                observe.push(parse_location(loc)?);
            }
        } else if let Some(rest) = t.strip_prefix(".forbidden") {
            verdict = Some((Verdict::Forbidden, rest.to_string()));
        } else if let Some(rest) = t.strip_prefix(".allowed") {
            verdict = Some((Verdict::Allowed, rest.to_string()));
        } else {
            launch.push_str(line);
            launch.push('\n');
        }
    }
    if !saw_ptx {
        return Err("missing `.ptx` line before the PTX module".into());
    }
    if observe.is_empty() {
        return Err("missing `.observe` line".into());
    }
    let (verdict, cond) = verdict.ok_or("missing `.forbidden` or `.allowed` line")?;
    let mut condition = Vec::new();
    for term in cond.split("&&") {
        let (loc, value) = term
            .split_once("==")
            .ok_or_else(|| format!("expected `LOC == VALUE`, found `{}`", term.trim()))?;
        let value = value
            .trim()
            .parse::<i128>()
            .map_err(|_| format!("bad value in `{}`", term.trim()))?;
        condition.push((parse_location(loc)?, value));
    }
    let ptx: String = lines.map(|l| format!("{l}\n")).collect();
    Ok(LitmusTest {
        observe,
        verdict,
        condition,
        launch,
        ptx,
    })
}

/// Runs `test` `iterations` times on the JIT with `threads` host threads (at least 2).
pub fn run(test: &LitmusTest, iterations: u64, threads: usize) -> Result<LitmusReport, String> {
    let mut config = Config::default();
    config.backend(Backend::Jit).threads(threads.max(2));
    let engine = Engine::new(&config);
    let mut launch = LaunchText::new();
    launch.push("litmus.launch", &test.launch);
    let module = engine
        .load_with_launch("litmus.ptx", &test.ptx, &launch)
        .map_err(|e| e.to_string())?;
    let names = module.kernel_names();
    if names.len() != 1 {
        return Err(format!("expected one entry, found {}", names.len()));
    }
    let name = names[0].to_string();
    let prepared = module
        .prepare(&name, &Overrides::default(), Backend::Jit, false)
        .map_err(|e| e.to_string())?;
    let delay = prepared
        .buffers()
        .into_iter()
        .find(|b| b.name == "delay")
        .map(|b| (b.address, b.len()));
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut report = LitmusReport {
        histogram: BTreeMap::new(),
        condition_hits: 0,
        verdict: test.verdict,
    };
    for _ in 0..iterations {
        prepared.reset();
        if let Some((address, len)) = delay {
            let mut bytes = Vec::with_capacity(len * 4);
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                bytes.extend_from_slice(&((seed % 256) as u32).to_le_bytes());
            }
            prepared.global().write(address, &bytes);
        }
        prepared.launch().map_err(|e| e.to_string())?;
        let buffers = prepared.buffers();
        let read = |loc: &Location| -> Result<i128, String> {
            let buffer = buffers
                .iter()
                .find(|b| b.name == loc.buffer)
                .ok_or_else(|| format!("no buffer `{}`", loc.buffer))?;
            match buffer.get(loc.index) {
                Some(crate::ir::Scalar::Int(v)) => Ok(v),
                Some(crate::ir::Scalar::Float(_)) => {
                    Err(format!("buffer `{}` is not an integer buffer", loc.buffer))
                }
                None => Err(format!("`{}[{}]` is out of range", loc.buffer, loc.index)),
            }
        };
        let tuple = test
            .observe
            .iter()
            .map(read)
            .collect::<Result<Vec<_>, _>>()?;
        let mut hit = true;
        for (loc, value) in &test.condition {
            hit &= read(loc)? == *value;
        }
        if hit {
            report.condition_hits += 1;
        }
        *report.histogram.entry(tuple).or_insert(0) += 1;
    }
    Ok(report)
}
