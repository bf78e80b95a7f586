//! Variables promoted from the GRF file to per-lane IR registers.
//!
//! Every general variable has bytes in its thread's GRF file ([`super::grf`]), which makes
//! every operand a shared-memory access: a kernel of register arithmetic becomes a chain of
//! loads and stores that the JIT can neither fuse nor vectorise. But most variables of real
//! kernels are only ever accessed *one element per channel*: channel `c` of every operand that
//! touches the variable reads or writes exactly element `lane` of it (`GID(0,0)<1;1,0>` under
//! `(M1, 16)`, the raw `ADDR.64` of an `svm_atomic (M3, 8)`, whose channel 0 is lane 8). No lane
//! ever sees another lane's element of such a variable, so its storage may as well be a
//! per-lane register: a load of it is a `mov` from the register, a store a `mov` into it,
//! under the same guard.
//!
//! **The rule.** A root variable at file offset `O`, `S` bytes long, is promoted with element
//! size `E` (4 or 8 bytes) when every GRF access whose bytes overlap `O .. O + S`, through the
//! variable or any alias of it, is *lane-aligned*: an `E`-byte access (not a vector access)
//! whose executing lanes `l` each touch exactly the bytes `O + l × E .. O + (l + 1) × E`, all
//! inside the variable. Accesses are judged by the file bytes they touch, so aliases of other
//! types, regions that cross channels (`<0;1,0>` broadcasts, `<2>` halves of 64-bit values),
//! the payload's writes and block messages disqualify the variables they overlap without
//! knowing why. Sub-dword variables stay in memory (a register would need the loads' sign or
//! zero extension and the stores' truncation modelled).
//!
//! **Why it is exact.** A promoted variable's element `l` is only ever touched by lane `l`, with
//! `E`-byte accesses at the same place, so lane `l`'s register holds exactly the bytes the file
//! would hold (a `mov` of `E × 8` bits copies the bits whatever the access's type; both start
//! at zero: the validator zeroes registers a path may read before writing them, and a CTA's
//! shared window starts zeroed). An instruction still reads all its sources before it writes a
//! destination, and no other lane's accesses can observe the order of a lane's own.
//!
//! The analysis needs every access, and the accesses are only known by lowering, so the kernel
//! is lowered twice: once recording every access ([`Touch`]), once with the promoted variables
//! ([`Promotion`]). A kernel is lowered deterministically, so the second pass makes the same
//! accesses.

use super::super::ast::{Kernel, VarKind};
use super::grf::{ChannelBytes, GrfLayout};
use crate::ir::Reg;
use std::collections::BTreeMap;

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
}

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
    /// Its element size, 4 or 8.
    elem: u32,
    /// Its register (the first of a pair for 8-byte elements).
    reg: Reg,
}

/// The promoted variables of a kernel, by the file offset of their root, and the bytes its
/// loads read.
#[derive(Debug, Clone, Default)]
pub(super) struct Promotion {
    vars: BTreeMap<u32, Var>,
    /// One past the last register the promoted variables take.
    pub end: u16,
    /// The file bytes some load may read, `lo .. hi`, sorted and merged.
    read: Vec<(i64, i64)>,
    /// Made by [`Promotion::decide`] (the default promotes nothing and leaves every store).
    decided: bool,
}

impl Promotion {
    /// Decides which variables of `kernel` to promote from every access a lowering made
    /// (`touches`), and gives them registers from `first_reg`.
    pub fn decide(
        kernel: &Kernel,
        layout: &GrfLayout,
        touches: &[Touch],
        first_reg: u16,
    ) -> Promotion {
        // Root variables by file offset: (bytes, element size so far, still promotable).
        let mut roots: BTreeMap<u32, (u32, Option<u32>, bool)> = BTreeMap::new();
        for (i, v) in kernel.vars.iter().enumerate() {
            if let VarKind::General(g) = &v.kind {
                if g.root.0 as usize == i && g.byte_size() > 0 {
                    let at = layout.root_offset(g.root);
                    roots.insert(at, (g.byte_size(), None, true));
                }
            }
        }
        for t in touches {
            let (lo, hi) = t.span();
            if lo >= hi {
                continue;
            }
            // The variable holding `lo`, then every one starting before `hi`.
            let start = roots
                .range(..=lo.clamp(0, i64::from(u32::MAX)) as u32)
                .next_back()
                .map_or(0, |(&at, _)| at);
            let upper = hi.clamp(0, i64::from(u32::MAX)) as u32;
            for (&at, (bytes, elem, ok)) in roots.range_mut(start..upper) {
                if i64::from(at) + i64::from(*bytes) <= lo || !*ok {
                    continue;
                }
                let fits = i64::from(at) <= lo && hi <= i64::from(at) + i64::from(*bytes);
                let aligned = matches!(t.size, 4 | 8)
                    && fits
                    && t.lane_aligned(at, t.size)
                    && elem.is_none_or(|e| e == t.size);
                if aligned {
                    *elem = Some(t.size);
                } else {
                    *ok = false;
                }
            }
        }
        // Pairs first, each on an even register, then the words.
        let mut next = first_reg;
        let mut vars = BTreeMap::new();
        for want in [8, 4] {
            for (&at, &(bytes, elem, ok)) in &roots {
                if ok && elem == Some(want) {
                    if want == 8 && next % 2 == 1 {
                        next += 1;
                    }
                    let reg = Reg(next);
                    vars.insert(
                        at,
                        Var {
                            bytes,
                            elem: want,
                            reg,
                        },
                    );
                    next += (want / 4) as u16;
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
            end: next,
            read,
            decided: true,
        }
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

    /// The element size and register of the promoted variable an access touches, if it
    /// touches one: the analysis saw every access, so such an access is lane-aligned to it.
    pub fn register(&self, t: &Touch) -> Option<(u32, Reg)> {
        let (lo, hi) = t.span();
        if lo >= hi || lo > i64::from(u32::MAX) {
            return None;
        }
        let (&at, var) = self.vars.range(..=lo as u32).next_back()?;
        let inside = hi <= i64::from(at) + i64::from(var.bytes);
        (inside && t.lane_aligned(at, var.elem)).then_some((var.elem, var.reg))
    }
}
