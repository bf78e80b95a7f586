//! Runtime faults and watchdog reports.

use crate::ir::surface::SurfaceFault;
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
    /// A surface access out of bounds under `.TRAP` (`004_16d4664d52412e92.txt`: "The .clamp
    /// field specifies how to clamp out of bounds addresses").
    SurfaceOutOfBounds,
    /// A surface handle whose header index is at or past the launch's pool: "Any header
    /// pointer greater than one specified in SetTexHeaderPoolC.MaximumIndex will be regarded
    /// as an 'invalid' texture".
    InvalidSurface,
    /// A surface access whose dimensionality or size is not the surface's
    /// ([`crate::ir::surface::SurfaceFault::Mismatch`]).
    SurfaceMismatch,
}

impl TrapReason {
    /// Every reason.
    pub const ALL: &'static [TrapReason] = &[
        TrapReason::MisalignedAddress,
        TrapReason::AddressOutOfRange,
        TrapReason::SurfaceOutOfBounds,
        TrapReason::InvalidSurface,
        TrapReason::SurfaceMismatch,
    ];

    /// The reason's name in program files (`.expect trap surface_out_of_bounds`).
    pub fn name(self) -> &'static str {
        match self {
            TrapReason::MisalignedAddress => "misaligned_address",
            TrapReason::AddressOutOfRange => "address_out_of_range",
            TrapReason::SurfaceOutOfBounds => "surface_out_of_bounds",
            TrapReason::InvalidSurface => "invalid_surface",
            TrapReason::SurfaceMismatch => "surface_mismatch",
        }
    }

    /// The reason called `name` ([`TrapReason::name`]).
    pub fn from_name(name: &str) -> Option<TrapReason> {
        TrapReason::ALL.iter().copied().find(|r| r.name() == name)
    }

    pub fn message(self) -> &'static str {
        match self {
            TrapReason::MisalignedAddress => "misaligned address",
            TrapReason::AddressOutOfRange => "address out of range",
            TrapReason::SurfaceOutOfBounds => "surface coordinates out of bounds",
            TrapReason::InvalidSurface => "invalid surface (no such header in the launch's pool)",
            TrapReason::SurfaceMismatch => {
                "surface access does not match the surface (dimensionality or element size)"
            }
        }
    }

    /// The reason of a surface fault (a misaligned `.BA` x is a misaligned address).
    pub fn of_surface(fault: SurfaceFault) -> TrapReason {
        match fault {
            SurfaceFault::Invalid => TrapReason::InvalidSurface,
            SurfaceFault::Mismatch => TrapReason::SurfaceMismatch,
            SurfaceFault::OutOfBounds => TrapReason::SurfaceOutOfBounds,
            SurfaceFault::Misaligned => TrapReason::MisalignedAddress,
        }
    }
}

/// Where a faulting surface access pointed: the surface (its header index in the launch's
/// pool, in declaration order) and the lane's coordinate registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SurfaceTrap {
    /// The header index the handle named.
    pub index: u32,
    /// The coordinate registers as read (`Ra`, `Ra+1`, `Ra+2`); the first `count` count.
    pub coords: [u32; 3],
    /// How many coordinates the access has (1 to 3).
    pub count: u8,
}

impl SurfaceTrap {
    /// The coordinates the access has.
    pub fn coords(&self) -> &[u32] {
        &self.coords[..usize::from(self.count.min(3))]
    }
}

impl fmt::Display for SurfaceTrap {
    /// `surface 1, coordinates (-1, 4)` (each coordinate as the signed 32-bit value read).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let coords: Vec<String> = self
            .coords()
            .iter()
            .map(|&c| (c as i32).to_string())
            .collect();
        write!(
            f,
            "surface {}, coordinates ({})",
            self.index,
            coords.join(", ")
        )
    }
}

impl serde::Serialize for SurfaceTrap {
    /// `{"index": 1, "coords": [-1, 4]}`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let coords: Vec<i32> = self.coords().iter().map(|&c| c as i32).collect();
        let mut st = s.serialize_struct("SurfaceTrap", 2)?;
        st.serialize_field("index", &self.index)?;
        st.serialize_field("coords", &coords)?;
        st.end()
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
    /// A surface access's fault: which surface and coordinates (`space` is then global and
    /// `address` 0: a surface access that faults has no address).
    pub surface: Option<SurfaceTrap>,
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
    /// The surface and coordinates of a faulting surface access (see [`TrapInfo::surface`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub surface: Option<SurfaceTrap>,
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
        let place = match &self.surface {
            Some(s) => s.to_string(),
            None => format!("{} address {:#x}", self.space, self.address),
        };
        write!(
            f,
            "trap: {} at {place} in kernel `{}`, instruction {} (line {}: `{}`), CTA ({},{},{}), warp {}, lane {}",
            self.reason,
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
    /// At the time limit: some CTA still moved in its last round (ran a group that was not
    /// waiting, or finished), so the launch was progressing when it was stopped. False for a
    /// deadlock, and for a time limit at which every resident CTA was waiting.
    pub progressing: bool,
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
            match (self.kind, self.progressing) {
                (WatchdogKind::Deadlock, _) => "stopped making progress",
                (WatchdogKind::TimeLimit, true) => "reached the time limit while still progressing",
                (WatchdogKind::TimeLimit, false) => "reached the time limit without progress",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_surface_trap_names_the_surface_its_coordinates_and_the_lane() {
        let trap = Trap {
            reason: TrapReason::SurfaceOutOfBounds,
            kernel: "k".to_string(),
            pc: 3,
            line: 7,
            inst: "SURED.D.2D.ADD.TRAP [R4], R6, 0x0, 0x58".to_string(),
            cta: [1, 0, 0],
            warp: 0,
            lane: 5,
            space: Space::Global,
            address: 0,
            surface: Some(SurfaceTrap {
                index: 1,
                coords: [u32::MAX, 4, 0xdead],
                count: 2,
            }),
        };
        let text = trap.to_string();
        assert!(
            text.starts_with(
                "trap: surface coordinates out of bounds at surface 1, coordinates (-1, 4) in kernel `k`"
            ),
            "{text}"
        );
        assert!(text.ends_with("lane 5"), "{text}");
        let json = serde_json::to_value(&trap).unwrap();
        assert_eq!(
            json["surface"],
            serde_json::json!({"index": 1, "coords": [-1, 4]})
        );
        assert_eq!(json["reason"], "SurfaceOutOfBounds");
        // Other traps serialise as before, without a surface field.
        let plain = Trap {
            surface: None,
            ..trap
        };
        assert!(serde_json::to_value(&plain)
            .unwrap()
            .get("surface")
            .is_none());
    }
}
