//! Validation: everything the reference documents call an encoding restriction or an error that
//! can be seen before running, plus the control-flow facts backends rely on.
//!
//! [`validate`] checks a kernel and returns its [`KernelInfo`]; backends take
//! `(&Kernel, &KernelInfo)` and may assume everything listed under "guarantees" on each IR type.
//! (Being written: see issue 2.)

use crate::ir::{Kernel, Span};
use std::fmt;

/// Facts about a validated kernel that backends and the scheduler use.
#[derive(Debug, Clone, Default)]
pub struct KernelInfo {
    /// For each instruction: if it is a conditional branch, the instruction where lanes that
    /// diverge there reconverge (its immediate post-dominator), or `None` when the paths only
    /// meet at exit.
    pub reconverge: Vec<Option<u32>>,
    /// For each instruction: true if it is the reconvergence point of some branch (backends
    /// need to compare against `stop_pc` only there).
    pub is_join: Vec<bool>,
    /// For each instruction: true if it starts a basic block (entry, branch target, or the
    /// instruction after a branch, exit or barrier).
    pub block_start: Vec<bool>,
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    pub kernel: String,
    /// The offending instruction, if the rule is about one.
    pub pc: Option<u32>,
    pub span: Span,
    /// What is wrong, in the program's terms.
    pub message: String,
    /// The rule broken, quoted from the reference document, with the document's file name.
    pub rule: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {} (rule: {})",
            self.span.line, self.span.col, self.message, self.rule
        )
    }
}

/// Every rule a kernel broke, in source order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// Checks `kernel` and computes its [`KernelInfo`].
pub fn validate(kernel: &Kernel) -> Result<KernelInfo, ValidationErrors> {
    let n = kernel.insts.len();
    Ok(KernelInfo {
        reconverge: vec![None; n],
        is_join: vec![false; n],
        block_start: vec![false; n],
    })
}

/// Checks a launch shape (placeholder until the validator lands).
pub fn check_launch(grid: [u32; 3], block: [u32; 3], shared_bytes: u32) -> Result<(), String> {
    let _ = (grid, block, shared_bytes);
    Ok(())
}
