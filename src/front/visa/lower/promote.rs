//! Variables promoted from the GRF file to IR registers.
//!
//! Every general variable has bytes in its thread's GRF file ([`super::grf`]), which makes
//! every operand a shared-memory access: a kernel of register arithmetic becomes a chain of
//! loads and stores that the JIT can neither fuse nor vectorise. But most variables of real
//! kernels are accessed in one of two shapes that a register holds exactly:
//!
//! * **Per lane.** Channel `c` of every operand that touches the variable reads or writes
//!   exactly element `lane` of it (`GID(0,0)<1;1,0>` under `(M1, 16)`, the raw `ADDR.64` of an
//!   `svm_atomic (M3, 8)`, whose channel 0 is lane 8, the payload's 16-bit local ids). No lane
//!   ever sees another lane's element, so its storage may as well be a per-lane register: a
//!   load of it is a `mov` from the register, a store a `mov` into it, under the same guard.
//! * **Uniform.** Every access reads or writes one whole element that every lane of it names
//!   alike (`BASE(0,0)<0;1,0>`, a scalar IGC computes once per thread with `(M1_NM, 1)`), and
//!   every write comes from a *replicable* instruction: execution size 1, no predicate,
//!   certain to run in its one lane whenever the thread reaches it (`_NM`, or where every
//!   channel runs: before the first `goto`, `ret`, join point or label a `goto` targets),
//!   plain arithmetic whose sources are immediates or general operands (or a payload
//!   write of a value the same in every lane: a group id, a size, an argument). Such a variable
//!   gets one register per element in *every* lane, and each instruction that writes it is
//!   *replicated*: it runs unguarded in every lane, every operand at the bytes of channel 0.
//!
//! **The rules.** A root variable at file offset `O`, `S` bytes long, is promoted
//!
//! * per lane with element size `E` (1, 2, 4 or 8 bytes; 1 and 2 only through integer
//!   accesses) when every GRF access whose bytes overlap `O .. O + S`, through the variable or
//!   any alias of it, is *lane-aligned*: an `E`-byte access (not a vector access) whose
//!   executing lanes `l` each touch exactly the bytes `O + l × E .. O + (l + 1) × E`, all inside
//!   the variable;
//! * uniform with element size `E` (4 or 8 bytes, at most [`MAX_UNIFORM_ELEMENTS`] elements)
//!   when every such access is a scalar `E`-byte access of which every lane that may run it
//!   touches the same `E` bytes, at a multiple of `E` past `O`; every store among them comes
//!   from a replicable instruction all of whose stores are to uniform variables; and no such
//!   instruction reads a variable promoted per lane (a fixed point: a variable that fails
//!   takes the instructions writing it, and the uniform variables those write, with it).
//!   Uniform wins over per lane when a variable has both shapes (every access one lane's).
//!
//! Accesses are judged by the file bytes they touch, so aliases of other sizes, regions that
//! cross channels in other ways, the payload's sub-dword writes and block messages disqualify
//! the variables they overlap without knowing why.
//!
//! **Why it is exact.** A per-lane variable's element `l` is only ever touched by lane `l`, with
//! `E`-byte accesses at the same place, so lane `l`'s register holds exactly the bytes the file
//! would hold: a `mov` of `E × 8` bits copies the bits whatever the access's type; a 1- or
//! 2-byte element is held zero-extended (a store keeps the low bits, a load extends them as the
//! access's type says, as a narrow shared-memory load does). Both start at zero: the validator
//! zeroes registers a path may read before writing them, and a CTA's shared window starts
//! zeroed.
//!
//! A uniform variable's element register holds, in every lane, the bytes the file would hold.
//! In the file model the one write of an execution of a replicable instruction is made by its
//! lane from sources read at channel 0's bytes. Replicated, every lane computes the same
//! value: immediates are the same; a uniform variable's element is the same in every lane by
//! the invariant; a source left in the file is read at the same bytes of the same thread's
//! file by every lane within one IR instruction; and no source is a per-lane register. So
//! every lane writes what that lane would have written, and the instruction ran whenever the
//! file model's would have (it is certain to run in its lane). Every read names one whole
//! element, which is a `mov` from the register. The extra lanes' scratch registers are dead
//! after the instruction. Replicated, the instruction takes scratch registers no other
//! instruction uses (up to a bound, `REPLICATED_TEMPS`), so a value it computes in one step (a
//! copy, an operation, a widening) is written once, and the JIT's warp-invariance analysis
//! computes it once per warp; a value built in two steps (a 64-bit `mad`, a `mov` with a
//! source modifier) and a variable written twice are computed in every lane, alike.
//!
//! An instruction still reads all its sources before it writes a destination, and no other
//! lane's accesses can observe the order of a lane's own. When no access is left in the file
//! at all, the kernel needs no shared memory (`Lowered::file_bytes` is 0).
//!
//! The analysis needs every access, and the accesses are only known by lowering, so the kernel
//! is lowered twice: once recording every access ([`Touch`]) and which instructions are
//! replicable, once with the promoted variables ([`Promotion`]). A kernel is lowered
//! deterministically, so the second pass makes the same accesses (a replicated instruction's
//! at channel 0's bytes in every lane, the same bytes as its one lane's before).

use super::super::ast::{Kernel, VarKind};
use super::grf::{ChannelBytes, GrfLayout};
use crate::ir::{Reg, Ty};
use std::collections::{BTreeMap, BTreeSet};

/// The most elements a uniform variable may have (each takes a register in every lane; `%r0`
/// has eight dwords).
pub(super) const MAX_UNIFORM_ELEMENTS: u32 = 16;

/// Lanes `first .. first + count`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Lanes {
    pub first: u32,
    pub count: u32,
}

/// One GRF access as the analysis sees it: the bytes each lane touches, and in which lanes it
/// may run (a superset, from its guard).
#[derive(Debug, Clone, Copy)]
pub(super) struct Touch {
    /// The bytes of channel `c`; lane `l` is channel `l − mask_offset`.
    pub bytes: ChannelBytes,
    pub mask_offset: u32,
    /// The lanes the access may run in.
    pub lanes: Lanes,
    /// Bytes per lane (a vector access counts all of its elements).
    pub size: u32,
    /// A scalar access (not a vector of elements).
    pub scalar: bool,
    /// A load (else a store).
    pub load: bool,
    /// The type accessed (of each element of a vector access).
    pub ty: Ty,
    /// The instruction that made the access: a statement index of the body, or a payload
    /// write's number from [`PAYLOAD_WRITES`].
    pub inst: u32,
}

/// The first instruction number of the payload's writes (after every statement index).
pub(super) const PAYLOAD_WRITES: u32 = 1 << 31;

impl Touch {
    /// The file bytes some lane of the access may touch, `lo .. hi` (empty for an access that
    /// runs in no lane; everything from `lo` on for a region a lane below the mask offset
    /// would compute, which no valid lowering makes).
    fn span(&self) -> (i64, i64) {
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for lane in self.lanes.first..self.lanes.first + self.lanes.count {
            let c = i64::from(lane) - i64::from(self.mask_offset);
            let at = match self.bytes {
                ChannelBytes::Linear { first, stride } => i64::from(first) + c * i64::from(stride),
                ChannelBytes::Region { first, .. } if c < 0 => {
                    return (i64::from(first).min(lo), i64::MAX);
                }
                ChannelBytes::Region {
                    first,
                    v,
                    w,
                    h,
                    elem,
                } => {
                    let c = c as u32;
                    let e = (c / w) * v + (c % w) * h;
                    i64::from(first) + i64::from(e) * i64::from(elem)
                }
            };
            lo = lo.min(at);
            hi = hi.max(at + i64::from(self.size));
        }
        (lo, hi)
    }

    /// Whether every lane `l` the access may run in touches exactly the `elem` bytes at
    /// `base + l × elem`.
    pub fn lane_aligned(&self, base: u32, elem: u32) -> bool {
        if !self.scalar || self.size != elem {
            return false;
        }
        let ChannelBytes::Linear { first, stride } = self.bytes else {
            return false;
        };
        let Lanes { first: lane, count } = self.lanes;
        let at = |l: u32| {
            i64::from(first) + (i64::from(l) - i64::from(self.mask_offset)) * i64::from(stride)
        };
        let want = |l: u32| i64::from(base) + i64::from(l) * i64::from(elem);
        match count {
            0 => true,
            1 => at(lane) == want(lane),
            _ => stride == elem && at(lane) == want(lane),
        }
    }
}

/// A promoted variable.
#[derive(Debug, Clone, Copy)]
struct Var {
    /// Its bytes in the file.
    bytes: u32,
    /// Its element size: 1, 2, 4 or 8 per lane; 4 or 8 uniform.
    elem: u32,
    /// Its register (the first of a pair for 8-byte elements); a uniform variable's element
    /// `k` is at `reg + k × elem / 4`.
    reg: Reg,
    uniform: bool,
}

/// Where a promoted variable's access goes: a register holding `elem` bytes (1- and 2-byte
/// elements zero-extended).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Held {
    pub elem: u32,
    pub reg: Reg,
}

/// What the analysis tracks of a root variable.
struct Root {
    bytes: u32,
    /// The element size of the per-lane shape so far, and whether it still holds.
    lane_elem: Option<u32>,
    per_lane: bool,
    /// The element size of the uniform shape so far, and whether it still holds.
    uniform_elem: Option<u32>,
    uniform: bool,
}

impl Root {
    /// Whether the per-lane shape admits `t` (which overlaps the root at `at`).
    fn lane_shape(&self, at: u32, t: &Touch) -> bool {
        let (lo, hi) = t.span();
        let fits = i64::from(at) <= lo && hi <= i64::from(at) + i64::from(self.bytes);
        let size_ok = match t.size {
            4 | 8 => true,
            1 | 2 => t.ty.is_int(),
            _ => false,
        };
        size_ok && fits && t.lane_aligned(at, t.size) && self.lane_elem.is_none_or(|e| e == t.size)
    }

    /// Whether the uniform shape admits `t` (which overlaps the root at `at`), given the
    /// replicable instructions.
    fn uniform_shape(&self, at: u32, t: &Touch, replicable: &BTreeSet<u32>) -> bool {
        let (lo, hi) = t.span();
        let size = t.size;
        t.scalar
            && matches!(size, 4 | 8)
            && self.bytes / size <= MAX_UNIFORM_ELEMENTS
            && hi - lo == i64::from(size)
            && i64::from(at) <= lo
            && hi <= i64::from(at) + i64::from(self.bytes)
            && (lo - i64::from(at)) % i64::from(size) == 0
            && self.uniform_elem.is_none_or(|e| e == size)
            && (t.load || (t.lanes.count == 1 && replicable.contains(&t.inst)))
    }
}

/// The promoted variables of a kernel, by the file offset of their root, the instructions
/// that are replicated, and the bytes its loads read.
#[derive(Debug, Clone, Default)]
pub(super) struct Promotion {
    vars: BTreeMap<u32, Var>,
    /// The instructions (as [`Touch::inst`] numbers them) that write uniform variables and run
    /// replicated in every lane.
    replicated: BTreeSet<u32>,
    /// One past the last register the promoted variables take.
    pub end: u16,
    /// The file bytes some load may read, `lo .. hi`, sorted and merged.
    read: Vec<(i64, i64)>,
    /// Made by [`Promotion::decide`] (the default promotes nothing and leaves every store).
    decided: bool,
}

impl Promotion {
    /// Decides which variables of `kernel` to promote from every access a lowering made
    /// (`touches`) and the instructions it found replicable, and gives them registers from
    /// `first_reg`.
    pub fn decide(
        kernel: &Kernel,
        layout: &GrfLayout,
        touches: &[Touch],
        replicable: &BTreeSet<u32>,
        first_reg: u16,
    ) -> Promotion {
        let mut roots: BTreeMap<u32, Root> = BTreeMap::new();
        for (i, v) in kernel.vars.iter().enumerate() {
            if let VarKind::General(g) = &v.kind {
                if g.root.0 as usize == i && g.byte_size() > 0 {
                    let at = layout.root_offset(g.root);
                    roots.insert(
                        at,
                        Root {
                            bytes: g.byte_size(),
                            lane_elem: None,
                            per_lane: true,
                            uniform_elem: None,
                            uniform: true,
                        },
                    );
                }
            }
        }
        // The roots each access overlaps, by access.
        let mut overlaps: Vec<Vec<u32>> = Vec::with_capacity(touches.len());
        for t in touches {
            let mut hit = Vec::new();
            let (lo, hi) = t.span();
            if lo < hi {
                // The variable holding `lo`, then every one starting before `hi`.
                let start = roots
                    .range(..=lo.clamp(0, i64::from(u32::MAX)) as u32)
                    .next_back()
                    .map_or(0, |(&at, _)| at);
                let upper = hi.clamp(0, i64::from(u32::MAX)) as u32;
                for (&at, root) in roots.range_mut(start..upper) {
                    if i64::from(at) + i64::from(root.bytes) <= lo {
                        continue;
                    }
                    hit.push(at);
                    if root.per_lane && root.lane_shape(at, t) {
                        root.lane_elem = Some(t.size);
                    } else {
                        root.per_lane = false;
                    }
                    if root.uniform && root.uniform_shape(at, t, replicable) {
                        root.uniform_elem = Some(t.size);
                    } else {
                        root.uniform = false;
                    }
                }
            }
            overlaps.push(hit);
        }
        for root in roots.values_mut() {
            root.per_lane &= root.lane_elem.is_some();
            root.uniform &= root.uniform_elem.is_some();
        }
        // The uniform fixed point: an instruction that stores into a uniform variable must
        // store only into uniform ones and read no per-lane one; else what it stores into is
        // not uniform.
        let mut by_inst: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, t) in touches.iter().enumerate() {
            by_inst.entry(t.inst).or_default().push(i);
        }
        loop {
            let mut fall: Vec<u32> = Vec::new();
            for accesses in by_inst.values() {
                let stores_uniform = accesses
                    .iter()
                    .any(|&i| !touches[i].load && overlaps[i].iter().any(|at| roots[at].uniform));
                if !stores_uniform {
                    continue;
                }
                let ok = accesses.iter().all(|&i| {
                    overlaps[i].iter().all(|at| {
                        let root = &roots[at];
                        if touches[i].load {
                            root.uniform || !root.per_lane
                        } else {
                            root.uniform
                        }
                    })
                });
                if !ok {
                    fall.extend(
                        accesses
                            .iter()
                            .filter(|&&i| !touches[i].load)
                            .flat_map(|&i| overlaps[i].iter().copied()),
                    );
                }
            }
            let mut changed = false;
            for at in fall {
                if let Some(root) = roots.get_mut(&at) {
                    changed |= root.uniform;
                    root.uniform = false;
                }
            }
            if !changed {
                break;
            }
        }
        let replicated: BTreeSet<u32> = by_inst
            .iter()
            .filter(|(_, accesses)| {
                accesses
                    .iter()
                    .any(|&i| !touches[i].load && overlaps[i].iter().any(|at| roots[at].uniform))
            })
            .map(|(&inst, _)| inst)
            .collect();
        // Registers: per-lane pairs first, each on an even register, then the words, then the
        // narrow ones; then the uniform variables, element by element.
        let mut next = first_reg;
        let mut vars = BTreeMap::new();
        let mut place = |next: &mut u16, at: u32, bytes: u32, elem: u32, uniform: bool| {
            if elem == 8 && *next % 2 == 1 {
                *next += 1;
            }
            vars.insert(
                at,
                Var {
                    bytes,
                    elem,
                    reg: Reg(*next),
                    uniform,
                },
            );
            let regs = elem.div_ceil(4) as u16;
            *next += if uniform {
                regs * (bytes / elem) as u16
            } else {
                regs
            };
        };
        for want in [8, 4, 2, 1] {
            for (&at, root) in &roots {
                if root.per_lane && !root.uniform && root.lane_elem == Some(want) {
                    place(&mut next, at, root.bytes, want, false);
                }
            }
        }
        for want in [8, 4] {
            for (&at, root) in &roots {
                if root.uniform && root.uniform_elem == Some(want) {
                    place(&mut next, at, root.bytes, want, true);
                }
            }
        }
        let mut spans: Vec<(i64, i64)> = touches
            .iter()
            .filter(|t| t.load)
            .map(Touch::span)
            .filter(|(lo, hi)| lo < hi)
            .collect();
        spans.sort_unstable();
        let mut read: Vec<(i64, i64)> = Vec::with_capacity(spans.len());
        for (lo, hi) in spans {
            match read.last_mut() {
                Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
                _ => read.push((lo, hi)),
            }
        }
        Promotion {
            vars,
            replicated,
            end: next,
            read,
            decided: true,
        }
    }

    /// Whether instruction `inst` (as [`Touch::inst`] numbers it) runs replicated: unguarded
    /// in every lane, every operand at channel 0's bytes.
    pub fn replicated(&self, inst: u32) -> bool {
        self.replicated.contains(&inst)
    }

    /// Whether a store writes only bytes no load of the kernel reads (the GRF file is the
    /// thread's own, and nothing else reads the shared window of a vISA launch, so such a store
    /// can be left out).
    pub fn dead_store(&self, t: &Touch) -> bool {
        let (lo, hi) = t.span();
        if !self.decided || t.load || lo >= hi {
            return false;
        }
        // The first read span ending after `lo` must start at or after `hi`.
        let i = self.read.partition_point(|&(_, end)| end <= lo);
        self.read.get(i).is_none_or(|&(start, _)| start >= hi)
    }

    /// The register of the promoted variable an access touches, if it touches one: the
    /// analysis saw every access, so such an access is lane-aligned to a per-lane variable, or
    /// one whole element of a uniform one.
    pub fn register(&self, t: &Touch) -> Option<Held> {
        let (lo, hi) = t.span();
        if lo >= hi || lo > i64::from(u32::MAX) {
            return None;
        }
        let (&at, var) = self.vars.range(..=lo as u32).next_back()?;
        let inside = hi <= i64::from(at) + i64::from(var.bytes);
        if !inside {
            return None;
        }
        let elem = var.elem;
        if var.uniform {
            let k = (lo - i64::from(at)) / i64::from(elem);
            let whole = hi - lo == i64::from(elem) && (lo - i64::from(at)) % i64::from(elem) == 0;
            return whole.then(|| Held {
                elem,
                reg: Reg(var.reg.0 + (k as u32 * elem / 4) as u16),
            });
        }
        t.lane_aligned(at, elem)
            .then_some(Held { elem, reg: var.reg })
    }
}
