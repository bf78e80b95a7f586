//! The backend diff: a kernel run on the interpreter and on the JIT, deterministically, each on
//! its own memory, and the first difference between the two runs.

use super::{Backend, Error, Failure, Module, Overrides};
use crate::exec::Stats;
use crate::ir::Scalar;
use std::fmt;

/// The first way two runs of a kernel differ, checked in this order.
#[derive(Debug, Clone)]
pub enum Difference {
    /// One run trapped or hit the watchdog and the other did not, or they failed differently.
    Outcome {
        interp: Option<Failure>,
        jit: Option<Failure>,
    },
    /// A buffer element differs (the first one, in buffer order).
    Buffer {
        name: String,
        index: usize,
        interp: Scalar,
        jit: Scalar,
    },
    /// Both runs completed with the same memory but different counters.
    Statistics { interp: Stats, jit: Stats },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let outcome = |failure: &Option<Failure>| {
            failure
                .as_ref()
                .map_or_else(|| "completed".to_string(), Failure::to_string)
        };
        match self {
            Difference::Outcome { interp, jit } => write!(
                f,
                "outcome differs: interp {}, jit {}",
                outcome(interp),
                outcome(jit)
            ),
            Difference::Buffer {
                name,
                index,
                interp,
                jit,
            } => write!(
                f,
                "buffer `{name}` differs first at element {index}: interp {interp}, jit {jit}"
            ),
            Difference::Statistics { interp, jit } => {
                write!(f, "statistics differ: interp {interp:?}, jit {jit:?}")
            }
        }
    }
}

impl Module {
    /// Runs `kernel` with `overrides` on the interpreter and on the JIT, each deterministically
    /// on fresh memory, and returns the first difference in outcome (trap or watchdog), memory
    /// or statistics (`None`: they agree). Statistics are compared only for completed runs.
    pub fn diff_backends(
        &self,
        kernel: &str,
        overrides: &Overrides,
    ) -> Result<Option<Difference>, Error> {
        let interp = self.run_with(kernel, overrides, Backend::Interp, true)?;
        let jit = self.run_with(kernel, overrides, Backend::Jit, true)?;
        let describe = |failure: &Option<Failure>| failure.as_ref().map(Failure::to_string);
        if describe(&interp.failure) != describe(&jit.failure) {
            return Ok(Some(Difference::Outcome {
                interp: interp.failure,
                jit: jit.failure,
            }));
        }
        for (x, y) in interp.buffers.iter().zip(&jit.buffers) {
            if let Some(index) = (0..x.len()).find(|&i| x.get(i) != y.get(i)) {
                return Ok(Some(Difference::Buffer {
                    name: x.name.clone(),
                    index,
                    interp: x.get(index).expect("in range"),
                    jit: y.get(index).expect("in range"),
                }));
            }
        }
        if interp.failure.is_none() && interp.launch.stats != jit.launch.stats {
            return Ok(Some(Difference::Statistics {
                interp: interp.launch.stats,
                jit: jit.launch.stats,
            }));
        }
        Ok(None)
    }
}
