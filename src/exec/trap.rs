//! Runtime faults and watchdog reports.

use crate::ir::Space;
use std::fmt;

/// Why a lane faulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum TrapReason {
    /// The address is not a multiple of the access size (`000_6d05a8552870c0ae.txt`:
    /// "Misaligned addresses cause a misaligned address error").
    MisalignedAddress,
    /// The address is outside the space's allocated region ("An address outside an allocated
    /// memory region causes an address out-of-range error").
    AddressOutOfRange,
}

impl TrapReason {
    pub fn message(self) -> &'static str {
        match self {
            TrapReason::MisalignedAddress => "misaligned address",
            TrapReason::AddressOutOfRange => "address out of range",
        }
    }
}

impl fmt::Display for TrapReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

/// What a backend knows about a fault: which instruction, which lane, which access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TrapInfo {
    pub reason: TrapReason,
    /// Index of the faulting instruction.
    pub pc: u32,
    pub lane: u32,
    pub space: Space,
    pub address: u64,
}

/// A fault with everything needed to find it: kernel, instruction and source line, CTA, warp,
/// lane, space, address and reason.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Trap {
    pub reason: TrapReason,
    pub kernel: String,
    pub pc: u32,
    /// 1-based source line of the instruction.
    pub line: u32,
    /// The instruction's source text.
    pub inst: String,
    pub cta: [u32; 3],
    pub warp: u32,
    pub lane: u32,
    #[serde(serialize_with = "serialize_space")]
    pub space: Space,
    pub address: u64,
}

fn serialize_space<S: serde::Serializer>(space: &Space, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(space.name())
}

impl serde::Serialize for Space {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl fmt::Display for Trap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "trap: {} at {} address {:#x} in kernel `{}`, instruction {} (line {}: `{}`), CTA ({},{},{}), warp {}, lane {}",
            self.reason,
            self.space,
            self.address,
            self.kernel,
            self.pc,
            self.line,
            self.inst,
            self.cta[0],
            self.cta[1],
            self.cta[2],
            self.warp,
            self.lane
        )
    }
}

/// One warp that had not finished when the watchdog fired.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct StuckWarp {
    pub cta: [u32; 3],
    pub warp: u32,
    /// Where each of its groups stood: `(pc, lane mask, what it was doing)`.
    pub groups: Vec<(u32, u32, String)>,
    /// Source line and text of each group's instruction, parallel to `groups`.
    pub insts: Vec<(u32, String)>,
}

/// A launch the watchdog ended: a deadlock it proved, or the time limit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WatchdogReport {
    pub kernel: String,
    /// Whether the launch provably stopped making progress (every warp waiting), or only ran
    /// out of time (it may still have been progressing).
    pub kind: WatchdogKind,
    /// What the watchdog saw, in words (the deadlock, or how far the launch got).
    pub cause: String,
    pub stuck: Vec<StuckWarp>,
}

/// Why the watchdog ended a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WatchdogKind {
    /// A deadlock: nothing could ever run again.
    Deadlock,
    /// The time limit passed before the launch completed.
    TimeLimit,
}

impl fmt::Display for WatchdogReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "watchdog: kernel `{}` {}: {}",
            self.kernel,
            match self.kind {
                WatchdogKind::Deadlock => "stopped making progress",
                WatchdogKind::TimeLimit => "reached the time limit",
            },
            self.cause
        )?;
        for w in self.stuck.iter().take(16) {
            for ((pc, mask, what), (line, text)) in w.groups.iter().zip(&w.insts) {
                writeln!(
                    f,
                    "  CTA ({},{},{}) warp {} lanes {:#010x}: {} at instruction {} (line {}: `{}`)",
                    w.cta[0], w.cta[1], w.cta[2], w.warp, mask, what, pc, line, text
                )?;
            }
        }
        if self.stuck.len() > 16 {
            writeln!(f, "  ... and {} more warps", self.stuck.len() - 16)?;
        }
        Ok(())
    }
}
