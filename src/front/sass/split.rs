//! Where the groups of a `WARPSYNC.EXCLUSIVE` rejoin.
//!
//! `WARPSYNC.EXCLUSIVE Rmask` splits a warp into the groups of lanes naming the same mask
//! ([`Op::WarpSplit`]); ptxas emits it inside a convergence region, `BSSY Bn, after` …
//! `BSYNC Bn`, whose `BSYNC` is where the groups meet again:
//!
//! ```text
//! BSSY B0, 0x190
//! WARPSYNC.EXCLUSIVE R3        split by R3
//! REDUX.SUM.S32 UR4, R5        one tile's sum
//! MOV R3, UR4
//! BSYNC B0                     the tiles rejoin
//! ```
//!
//! or, on sm_80, inside a subroutine called from such a region (`CALL` … `RET`, which
//! `calls` inlines as a branch back to the `BSYNC` after the call). So the rejoin point is the
//! first `BSYNC` that control reaches from the split along its straight-line path (the next
//! instruction, or the target of an unconditional branch) and that does not close a `BSSY`
//! region opened on that path. A conditional branch, an exit or a
//! barrier on the way means the split is not in a region atomjit understands; that is an
//! error naming the instruction, never a guess.

use super::SyntaxError;
use crate::ir::{Inst, Op};

/// The rejoin point of a split before [`resolve`] has found it.
pub const UNRESOLVED: u32 = u32::MAX;

/// Fills in the rejoin point of every [`Op::WarpSplit`] of `insts` (a kernel with its calls
/// inlined). Returns an error for each split with no `BSYNC` on its straight-line path.
pub fn resolve(insts: &mut [Inst]) -> Vec<SyntaxError> {
    let mut errors = Vec::new();
    for pc in 0..insts.len() {
        if !matches!(
            insts[pc].op,
            Op::WarpSplit {
                rejoin: UNRESOLVED,
                ..
            }
        ) {
            continue;
        }
        match rejoin_of(insts, pc) {
            Ok(at) => {
                if let Op::WarpSplit { rejoin, .. } = &mut insts[pc].op {
                    *rejoin = at;
                }
            }
            Err(why) => errors.push(SyntaxError::new(
                insts[pc].span,
                format!("WARPSYNC.EXCLUSIVE: {why}, so atomjit cannot tell where its lane groups rejoin"),
            )
            .expected("WARPSYNC.EXCLUSIVE inside a BSSY/BSYNC region, as ptxas emits it")),
        }
    }
    errors
}

/// The first `BSYNC` on the straight-line path after the split at `from` that does not close
/// a `BSSY` region opened on that path.
fn rejoin_of(insts: &[Inst], from: usize) -> Result<u32, String> {
    let mut pc = from + 1;
    let mut opened: Vec<&str> = Vec::new();
    // Each instruction is visited at most once: a longer walk is a loop.
    for _ in 0..insts.len() {
        let Some(inst) = insts.get(pc) else {
            return Err("control runs past the last instruction".to_string());
        };
        match convergence_barrier(inst) {
            Some(("BSYNC", b)) => match opened.iter().rposition(|&o| o == b) {
                Some(i) => {
                    opened.remove(i);
                }
                None => return Ok(pc as u32),
            },
            Some(("BSSY", b)) => opened.push(b),
            _ => {}
        }
        let ends_block = inst.op.control().ends_block() && !inst.guard.is_never();
        if let (Op::Branch { target, .. }, true) = (&inst.op, inst.guard.is_always()) {
            pc = *target as usize;
        } else if ends_block {
            return Err(format!("`{}` comes before any BSYNC", inst.text.trim()));
        } else {
            pc += 1;
        }
    }
    Err("its straight-line path loops without reaching a BSYNC".to_string())
}

/// `("BSSY", "B1")` or `("BSYNC", "B1")` for an instruction written as `BSSY B1, ...` or
/// `BSYNC B1` (both lower to no-ops).
fn convergence_barrier(inst: &Inst) -> Option<(&'static str, &str)> {
    if !matches!(inst.op, Op::Nop) {
        return None;
    }
    let mut words = inst
        .text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty() && !w.starts_with('@'));
    let mnemonic = words.next()?;
    let barrier = words.next()?;
    ["BSSY", "BSYNC"]
        .into_iter()
        .find(|m| mnemonic == *m || mnemonic.starts_with(&format!("{m}.")))
        .map(|m| (m, barrier))
}
