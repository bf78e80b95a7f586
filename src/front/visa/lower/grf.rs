//! Where a vISA thread's general variables live, and the address each channel's element has.
//!
//! Every root variable (a general variable that is not an alias, predefined ones included)
//! gets a byte range in the thread's *GRF file*; aliases are views of their root's bytes
//! ([`super::super::ast::GeneralVar::root`]). A CTA's vISA threads are its warps, and warp `w`'s
//! file is the shared-memory bytes `w × file_bytes ..` of the CTA's window, so a channel reads
//! and writes any element of its thread's variables with plain shared-memory loads and stores:
//! regions that cross channels (`<0;1,0>` broadcasts, the `<4;1,0>` reductions IGC emits,
//! `<2>` halves of 64-bit values) need no special case. The lowering reads every source of an
//! instruction before it writes a destination, and the IR runs an instruction for all lanes
//! before the next one, so a vISA instruction sees its sources as they were before it (the
//! SIMD semantics) even when a destination overlaps a source of another channel.
//!
//! A variable at least a GRF long starts on a GRF (32 bytes); a shorter one is aligned to its
//! size rounded up to a power of two, so it never straddles a GRF (the vISA rule) and every
//! element access is naturally aligned.

use super::super::ast::{GeneralOperand, Kernel, Region, VarId, VarKind, GRF_BYTES};

/// The layout of one thread's GRF file.
#[derive(Debug, Clone)]
pub(super) struct GrfLayout {
    /// Per variable id: the byte offset of its root in the file (`None` for variables that are
    /// not general).
    offsets: Vec<Option<u32>>,
    /// The file's size in bytes (a multiple of 32).
    pub file_bytes: u32,
}

impl GrfLayout {
    /// Places every root variable of `kernel`, in declaration order.
    pub fn new(kernel: &Kernel) -> GrfLayout {
        let mut offsets = vec![None; kernel.vars.len()];
        let mut next: u32 = 0;
        for (i, v) in kernel.vars.iter().enumerate() {
            let VarKind::General(g) = &v.kind else {
                continue;
            };
            if g.root.0 as usize != i {
                continue;
            }
            let size = g.byte_size().max(1);
            let align = if size >= GRF_BYTES {
                GRF_BYTES
            } else {
                size.next_power_of_two().max(g.ty.size())
            };
            let at = next.div_ceil(align) * align;
            offsets[i] = Some(at);
            next = at + size;
        }
        for (i, v) in kernel.vars.iter().enumerate() {
            if let VarKind::General(g) = &v.kind {
                if g.root.0 as usize != i {
                    offsets[i] = offsets[g.root.0 as usize];
                }
            }
        }
        GrfLayout {
            offsets,
            file_bytes: next.div_ceil(GRF_BYTES).max(1) * GRF_BYTES,
        }
    }

    /// The file offset of the root storage of `var` (for an alias: of its root).
    pub fn root_offset(&self, var: VarId) -> u32 {
        self.offsets[var.0 as usize].expect("a general variable has a place in the GRF file")
    }
}

/// How a lane finds the bytes of its channel in an operand: `file_offset + channel × stride`
/// where `channel = lane − mask_offset`, or, for regions that are not linear in the channel,
/// the general region formula computed per lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChannelBytes {
    /// Channel `c`'s element starts at `first + c × stride` bytes of the file.
    Linear { first: u32, stride: u32 },
    /// A 2-D region `<v;w,h>` whose channels do not step evenly (`<16;8,1>`): element
    /// `(c / w) × v + (c % w) × h` past `first`, of `elem` bytes.
    Region {
        first: u32,
        v: u32,
        w: u32,
        h: u32,
        elem: u32,
    },
}

impl ChannelBytes {
    /// The bytes of a regioned general operand for `exec_size` channels.
    pub fn of_general(layout: &GrfLayout, op: &GeneralOperand, exec_size: u32) -> ChannelBytes {
        let first = layout.root_offset(op.root) + op.root_offset;
        let elem = op.ty.size();
        let e0 = op.region.element(0);
        let stride_elems = if exec_size > 1 {
            op.region.element(1) - e0
        } else {
            0
        };
        let linear = (0..exec_size).all(|c| op.region.element(c) == e0 + c * stride_elems);
        match (linear, op.region) {
            (true, _) => ChannelBytes::Linear {
                first: first + e0 * elem,
                stride: stride_elems * elem,
            },
            (false, Region::Src { v, w, h }) => ChannelBytes::Region {
                first,
                v,
                w,
                h,
                elem,
            },
            // A destination `<h>` is linear; VxH regions belong to indirect operands, which
            // the lowering refuses before it gets here.
            (false, Region::Dst { h }) => ChannelBytes::Linear {
                first,
                stride: h * elem,
            },
            (false, Region::VxH { .. }) => ChannelBytes::Linear { first, stride: 0 },
        }
    }

    /// The first byte of channel 0's element.
    pub fn channel0(&self) -> u32 {
        match *self {
            ChannelBytes::Linear { first, .. } | ChannelBytes::Region { first, .. } => first,
        }
    }

    /// The bytes of a raw operand whose channels take `elem_bytes` each, starting `offset`
    /// bytes into `root`'s storage.
    pub fn of_raw(layout: &GrfLayout, root: VarId, offset: u32, elem_bytes: u32) -> ChannelBytes {
        ChannelBytes::Linear {
            first: layout.root_offset(root) + offset,
            stride: elem_bytes,
        }
    }
}
