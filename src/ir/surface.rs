//! Surfaces: images in global memory addressed by coordinates (SASS `SUATOM`/`SURED`/`SULD`/
//! `SUST`, PTX `sured`/`suld`/`sust`), and where an access to one lands.
//!
//! A surface is a [`SurfaceShape`] (dimensionality, element size, extent, layers) stored in a
//! [`SurfaceLayout`] (pitch-linear rows, or NVIDIA's block-linear tiling) at a global address.
//! [`SurfaceShape::element`] turns a lane's coordinates into the element they name under a
//! [`Clamp`] mode, and [`SurfaceLayout::offset`] turns an element into a byte offset; both
//! backends call these two functions and nothing else decides where a surface access lands.
//!
//! # Coordinates (`004_16d4664d52412e92.txt`)
//!
//! | dim | Ra | Ra+1 | Ra+2 |
//! |---|---|---|---|
//! | `1D` | x: S32 | | |
//! | `1D_BUFFER` | x: S32 with `.NEAR`, else U32 | | |
//! | `1D_ARRAY` | x: S32 | layer: U16 | |
//! | `2D` | x: S32 | y: S32 | |
//! | `2D_ARRAY` | x: S32 | y: S32 | layer: U16 |
//! | `3D` | x: S32 | y: S32 | z: S32 |
//!
//! "The 1D_ARRAY and 2D_ARRAY array indices are treated as U16, meaning only the 16 LSBs of the
//! register value are used." With `.BA` "the x-coordinate is assumed to be in bytes, aligned on
//! a .sz boundary"; otherwise it counts elements "and is scaled by .sz in hardware".
//!
//! # Clamp modes
//!
//! The document names `.IGN`, `.NEAR` (the default) and `.TRAP` for "how to clamp out of bounds
//! addresses (too high or low)". atomjit applies them to every coordinate, the layer included:
//! `.NEAR` clamps each to `0..=extent-1` (a byte x to the first byte of the last element, so
//! the access stays on an element boundary); `.IGN` makes the whole access do nothing (an atomic
//! returns 0); `.TRAP` makes it a trap. A `.BA` byte x that is not a multiple of the element
//! size is a misaligned access whatever the clamp mode.
//!
//! # Block-linear layout
//!
//! NVIDIA's block-linear tiling (Tegra X1 TRM, "Block Linear" surface layout; the same GOB is
//! used by every GPU since Fermi) groups bytes into GOBs of 64 bytes × 8 rows = 512 bytes and
//! GOBs into blocks of one GOB wide, `2^log_height` GOBs high and `2^log_depth` GOBs deep. For
//! an element at byte column `xb = x * elem_bytes`, row `y`, slice `z`:
//!
//! ```text
//! gob_in_row   = xb / 64                               (GOBs across: ceil(width_bytes / 64))
//! block        = ((z >> log_depth) * blocks_high + (y / (8 << log_height))) * gobs_wide + gob_in_row
//! gob_in_block = (z & (2^log_depth - 1)) << log_height | (y / 8) & (2^log_height - 1)
//! in_gob       = (xb % 64 / 32) * 256 + (y % 8 / 2) * 64 + (xb % 32 / 16) * 32 + (y % 2) * 16 + xb % 16
//! offset       = block * 512 << (log_height + log_depth) + gob_in_block * 512 + in_gob
//! ```
//!
//! with `blocks_high = ceil(height / (8 << log_height))`. Within a GOB the bits of the offset
//! are, from bit 0: `xb[0..4]`, `y[0]`, `xb[4]`, `y[1..3]`, `xb[5]`. A layer of an array
//! surface occupies a whole number of blocks; layer `l` starts at `l * layer_bytes`.

use super::{Init, Ty};
use std::fmt;

/// The most bytes a surface may occupy (1 TiB), so that sizes and offsets fit `u64`.
pub const MAX_SURFACE_BYTES: u64 = 1 << 40;

/// Bytes in one page of a surface's memory, the unit `sparse` marks.
pub const SPARSE_PAGE_BYTES: u64 = 64 * 1024;

/// A surface as a launch declares it (`.surface NAME DIM TY[W,H,D] ...`, see `docs/surfaces.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceDecl {
    /// Dimensionality, element size and extent.
    pub shape: SurfaceShape,
    /// The element format (its size is `shape.elem_bytes`; its signedness decides `.SD32`/`.SD64`).
    pub elem: Ty,
    /// How the elements are laid out in global memory.
    pub layout: SurfaceLayout,
    /// Every access does nothing (writes are dropped, reads and atomics return 0).
    pub disabled: bool,
    /// The [`SPARSE_PAGE_BYTES`] pages of the surface's memory marked sparse, ascending.
    pub sparse: Vec<u64>,
    /// The initial elements, in logical order (x fastest, then y, z, layer).
    pub init: Init,
}

impl SurfaceDecl {
    /// Bytes of global memory the surface occupies.
    pub fn bytes(&self) -> u64 {
        self.layout.total_bytes(&self.shape)
    }
}

/// A surface's dimensionality (SASS `.dim`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SurfaceDim {
    /// `.1D`: x.
    D1,
    /// `.1D_BUFFER`: x, unsigned unless the clamp mode is `.NEAR`.
    D1Buffer,
    /// `.1D_ARRAY`: x and a layer.
    D1Array,
    /// `.2D`: x and y.
    D2,
    /// `.2D_ARRAY`: x, y and a layer.
    D2Array,
    /// `.3D`: x, y and z.
    D3,
}

impl SurfaceDim {
    /// Every dimensionality, in the document's order.
    pub const ALL: &'static [SurfaceDim] = &[
        SurfaceDim::D1,
        SurfaceDim::D1Buffer,
        SurfaceDim::D1Array,
        SurfaceDim::D2,
        SurfaceDim::D2Array,
        SurfaceDim::D3,
    ];

    /// The SASS spelling without the dot (`2D_ARRAY`).
    pub fn sass_name(self) -> &'static str {
        match self {
            SurfaceDim::D1 => "1D",
            SurfaceDim::D1Buffer => "1D_BUFFER",
            SurfaceDim::D1Array => "1D_ARRAY",
            SurfaceDim::D2 => "2D",
            SurfaceDim::D2Array => "2D_ARRAY",
            SurfaceDim::D3 => "3D",
        }
    }

    /// The program-file spelling (`2d_array`).
    pub fn decl_name(self) -> &'static str {
        match self {
            SurfaceDim::D1 => "1d",
            SurfaceDim::D1Buffer => "1d_buffer",
            SurfaceDim::D1Array => "1d_array",
            SurfaceDim::D2 => "2d",
            SurfaceDim::D2Array => "2d_array",
            SurfaceDim::D3 => "3d",
        }
    }

    /// Coordinate registers an access reads (`Ra`, `Ra+1`, ...).
    pub fn coords(self) -> u16 {
        match self {
            SurfaceDim::D1 | SurfaceDim::D1Buffer => 1,
            SurfaceDim::D1Array | SurfaceDim::D2 => 2,
            SurfaceDim::D2Array | SurfaceDim::D3 => 3,
        }
    }

    /// Whether the last coordinate is an array layer.
    pub fn is_array(self) -> bool {
        matches!(self, SurfaceDim::D1Array | SurfaceDim::D2Array)
    }
}

impl fmt::Display for SurfaceDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.decl_name())
    }
}

/// What an out-of-bounds coordinate does (SASS `.clamp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Clamp {
    /// `.IGN`: the access has no effect (an atomic returns 0).
    Ignore,
    /// `.NEAR` (the default): the coordinate clamps to the nearest edge.
    Nearest,
    /// `.TRAP`: the access traps.
    Trap,
}

impl Clamp {
    /// The SASS spelling without the dot.
    pub fn sass_name(self) -> &'static str {
        match self {
            Clamp::Ignore => "IGN",
            Clamp::Nearest => "NEAR",
            Clamp::Trap => "TRAP",
        }
    }
}

/// The extent of a surface, in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SurfaceShape {
    /// The dimensionality.
    pub dim: SurfaceDim,
    /// Bytes per element (1, 2, 4, 8 or 16).
    pub elem_bytes: u32,
    /// Elements per row (x).
    pub width: u32,
    /// Rows (y); 1 for 1-D surfaces.
    pub height: u32,
    /// Slices (z); 1 unless 3-D.
    pub depth: u32,
    /// Array layers; 1 unless an array.
    pub layers: u32,
}

/// The element an access names: column, row, slice and layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Element {
    /// Column, in elements.
    pub x: u32,
    /// Row.
    pub y: u32,
    /// Slice.
    pub z: u32,
    /// Array layer.
    pub layer: u32,
}

/// Where a lane's coordinates land.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Landing {
    /// This element (after `.NEAR` clamping).
    At(Element),
    /// Out of bounds under `.IGN`: no access.
    Ignored,
    /// Out of bounds under `.TRAP`.
    OutOfBounds,
    /// A `.BA` byte x that is not a multiple of the element size.
    Misaligned,
}

impl SurfaceShape {
    /// The element `coords` (the registers `Ra..`, as many as [`SurfaceDim::coords`]) name,
    /// with `byte_x` for `.BA`.
    pub fn element(&self, coords: [u32; 3], byte_x: bool, clamp: Clamp) -> Landing {
        let x = coords[0];
        if byte_x && x % self.elem_bytes != 0 {
            return Landing::Misaligned;
        }
        // x as a signed or unsigned value, in elements (a byte x is exact after the check).
        let unsigned_x = self.dim == SurfaceDim::D1Buffer && clamp != Clamp::Nearest;
        let x_value: i64 = if unsigned_x {
            i64::from(x)
        } else {
            i64::from(x as i32)
        };
        let x_elems = if byte_x {
            x_value.div_euclid(i64::from(self.elem_bytes))
        } else {
            x_value
        };
        let signed = |v: u32| i64::from(v as i32);
        let (y, z, layer) = match self.dim {
            SurfaceDim::D1 | SurfaceDim::D1Buffer => (0, 0, 0),
            SurfaceDim::D1Array => (0, 0, i64::from(coords[1] & 0xffff)),
            SurfaceDim::D2 => (signed(coords[1]), 0, 0),
            SurfaceDim::D2Array => (signed(coords[1]), 0, i64::from(coords[2] & 0xffff)),
            SurfaceDim::D3 => (signed(coords[1]), signed(coords[2]), 0),
        };
        let wanted = [
            (x_elems, self.width),
            (y, self.height),
            (z, self.depth),
            (layer, self.layers),
        ];
        let inside = wanted
            .iter()
            .all(|&(v, extent)| (0..i64::from(extent)).contains(&v));
        let clamped = |(v, extent): (i64, u32)| v.clamp(0, i64::from(extent.max(1)) - 1) as u32;
        if !inside {
            match clamp {
                Clamp::Ignore => return Landing::Ignored,
                Clamp::Trap => return Landing::OutOfBounds,
                Clamp::Nearest => {}
            }
        }
        Landing::At(Element {
            x: clamped(wanted[0]),
            y: clamped(wanted[1]),
            z: clamped(wanted[2]),
            layer: clamped(wanted[3]),
        })
    }

    /// Elements in the surface.
    pub fn elements(&self) -> u64 {
        [self.width, self.height, self.depth, self.layers]
            .iter()
            .fold(1u64, |n, &e| n.saturating_mul(u64::from(e)))
    }

    /// Bytes of one row of elements.
    pub fn row_bytes(&self) -> u64 {
        u64::from(self.width) * u64::from(self.elem_bytes)
    }
}

/// How a surface's elements are laid out in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SurfaceLayout {
    /// Rows of `pitch` bytes (at least the row's bytes), slices of `height` rows, layers of
    /// `depth` slices.
    Pitch {
        /// Bytes from one row to the next.
        pitch: u32,
    },
    /// NVIDIA's block-linear tiling (see the module docs): blocks of `2^log_height` GOBs high
    /// and `2^log_depth` GOBs deep.
    BlockLinear {
        /// log2 of the block height in GOBs (0..=5).
        log_height: u8,
        /// log2 of the block depth in GOBs (0..=5).
        log_depth: u8,
    },
}

/// Bytes in a GOB (64 bytes × 8 rows).
pub const GOB_BYTES: u64 = 512;

impl SurfaceLayout {
    /// Bytes one array layer occupies (layer `l` starts at `l * layer_bytes`).
    pub fn layer_bytes(&self, shape: &SurfaceShape) -> u64 {
        match *self {
            SurfaceLayout::Pitch { pitch } => {
                u64::from(pitch) * u64::from(shape.height) * u64::from(shape.depth)
            }
            SurfaceLayout::BlockLinear {
                log_height,
                log_depth,
            } => {
                let (gobs_wide, blocks_high, blocks_deep) =
                    block_counts(shape, log_height, log_depth);
                gobs_wide * blocks_high * blocks_deep * (GOB_BYTES << (log_height + log_depth))
            }
        }
    }

    /// Bytes the whole surface occupies. The front-end admits only surfaces of at most
    /// [`MAX_SURFACE_BYTES`] ([`SurfaceLayout::exact_total_bytes`]), so this and every offset
    /// fit `u64` with room to spare.
    pub fn total_bytes(&self, shape: &SurfaceShape) -> u64 {
        self.layer_bytes(shape) * u64::from(shape.layers)
    }

    /// [`SurfaceLayout::total_bytes`] computed without overflow, for any extent.
    pub fn exact_total_bytes(&self, shape: &SurfaceShape) -> u128 {
        let (w, h, d, layers) = (
            u128::from(shape.width),
            u128::from(shape.height),
            u128::from(shape.depth),
            u128::from(shape.layers),
        );
        match *self {
            SurfaceLayout::Pitch { pitch } => u128::from(pitch) * h * d * layers,
            SurfaceLayout::BlockLinear {
                log_height,
                log_depth,
            } => {
                let gobs_wide = (w * u128::from(shape.elem_bytes)).div_ceil(64);
                let blocks_high = h.div_ceil(8 << log_height);
                let blocks_deep = d.div_ceil(1 << log_depth);
                gobs_wide
                    * blocks_high
                    * blocks_deep
                    * (u128::from(GOB_BYTES) << (log_height + log_depth))
                    * layers
            }
        }
    }

    /// The byte offset of element `e` from the surface's start.
    pub fn offset(&self, shape: &SurfaceShape, e: Element) -> u64 {
        let xb = u64::from(e.x) * u64::from(shape.elem_bytes);
        let (y, z) = (u64::from(e.y), u64::from(e.z));
        let layer = u64::from(e.layer) * self.layer_bytes(shape);
        match *self {
            SurfaceLayout::Pitch { pitch } => {
                layer + (z * u64::from(shape.height) + y) * u64::from(pitch) + xb
            }
            SurfaceLayout::BlockLinear {
                log_height,
                log_depth,
            } => {
                let (gobs_wide, blocks_high, _) = block_counts(shape, log_height, log_depth);
                let gobs_high = 1u64 << log_height;
                let gobs_deep = 1u64 << log_depth;
                let block =
                    ((z >> log_depth) * blocks_high + y / (8 * gobs_high)) * gobs_wide + xb / 64;
                let gob_in_block = (z & (gobs_deep - 1)) << log_height | (y / 8) & (gobs_high - 1);
                let in_gob = (xb % 64 / 32) * 256
                    + (y % 8 / 2) * 64
                    + (xb % 32 / 16) * 32
                    + (y % 2) * 16
                    + xb % 16;
                layer
                    + ((block * GOB_BYTES) << (log_height + log_depth))
                    + gob_in_block * GOB_BYTES
                    + in_gob
            }
        }
    }
}

/// GOBs across, blocks high and blocks deep of a block-linear layer.
fn block_counts(shape: &SurfaceShape, log_height: u8, log_depth: u8) -> (u64, u64, u64) {
    let gobs_wide = shape.row_bytes().div_ceil(64);
    let blocks_high = u64::from(shape.height).div_ceil(8 << log_height);
    let blocks_deep = u64::from(shape.depth).div_ceil(1 << log_depth);
    (gobs_wide, blocks_high, blocks_deep)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(
        dim: SurfaceDim,
        elem_bytes: u32,
        w: u32,
        h: u32,
        d: u32,
        layers: u32,
    ) -> SurfaceShape {
        SurfaceShape {
            dim,
            elem_bytes,
            width: w,
            height: h,
            depth: d,
            layers,
        }
    }

    /// An independent model of the GOB: the offset's bits taken one by one from the byte
    /// column and the row, in the order the module docs list (xb0..3, y0, xb4, y1, y2, xb5).
    fn gob_bits(xb: u64, y: u64) -> u64 {
        let bit = |v: u64, i: u32| (v >> i) & 1;
        let sources = [
            (xb, 0),
            (xb, 1),
            (xb, 2),
            (xb, 3),
            (y, 0),
            (xb, 4),
            (y, 1),
            (y, 2),
            (xb, 5),
        ];
        sources
            .iter()
            .enumerate()
            .map(|(i, &(v, b))| bit(v, b) << i)
            .sum()
    }

    #[test]
    fn a_gob_is_a_permutation_of_its_512_bytes_in_the_documented_bit_order() {
        let s = shape(SurfaceDim::D2, 1, 64, 8, 1, 1);
        let l = SurfaceLayout::BlockLinear {
            log_height: 0,
            log_depth: 0,
        };
        let mut seen = [false; 512];
        for y in 0..8 {
            for x in 0..64 {
                let o = l.offset(
                    &s,
                    Element {
                        x,
                        y,
                        z: 0,
                        layer: 0,
                    },
                );
                assert_eq!(o, gob_bits(x.into(), y.into()), "({x},{y})");
                assert!(!seen[o as usize]);
                seen[o as usize] = true;
            }
        }
        // The first 16 bytes of rows 0 and 1 are the first 32 bytes of the GOB.
        let at = |x, y| {
            l.offset(
                &s,
                Element {
                    x,
                    y,
                    z: 0,
                    layer: 0,
                },
            )
        };
        assert_eq!(
            (at(15, 0), at(0, 1), at(16, 0), at(32, 0)),
            (15, 16, 32, 256)
        );
    }

    #[test]
    fn block_linear_blocks_stack_gobs_in_y_then_z_and_blocks_run_along_x() {
        // 4-byte elements, 40 wide (160 bytes: 3 GOBs across), 20 high, 3 deep, blocks of
        // 2 GOBs high and 2 deep: blocks_high = ceil(20 / 16) = 2, blocks_deep = 2.
        let s = shape(SurfaceDim::D3, 4, 40, 20, 3, 1);
        let l = SurfaceLayout::BlockLinear {
            log_height: 1,
            log_depth: 1,
        };
        let block = 4 * GOB_BYTES;
        for (x, y, z) in [
            (0u32, 0u32, 0u32),
            (17, 9, 1),
            (39, 19, 2),
            (16, 15, 0),
            (5, 16, 1),
        ] {
            let xb = u64::from(x) * 4;
            let (y64, z64) = (u64::from(y), u64::from(z));
            // Independent: which block, which GOB of it, where in the GOB.
            let blk = ((z64 / 2) * 2 + y64 / 16) * 3 + xb / 64;
            let gob = (z64 % 2) * 2 + (y64 / 8) % 2;
            let want = blk * block + gob * GOB_BYTES + gob_bits(xb % 64, y64 % 8);
            assert_eq!(
                l.offset(&s, Element { x, y, z, layer: 0 }),
                want,
                "({x},{y},{z})"
            );
        }
        assert_eq!(l.total_bytes(&s), 3 * 2 * 2 * block);
    }

    #[test]
    fn every_element_of_a_block_linear_surface_has_its_own_bytes() {
        for (log_height, log_depth) in [(0, 0), (1, 0), (2, 1), (4, 2)] {
            let s = shape(SurfaceDim::D2Array, 8, 13, 21, 5, 2);
            let s = SurfaceShape {
                dim: SurfaceDim::D3,
                ..s
            };
            let l = SurfaceLayout::BlockLinear {
                log_height,
                log_depth,
            };
            let mut seen = std::collections::HashSet::new();
            for layer in 0..2 {
                for z in 0..5 {
                    for y in 0..21 {
                        for x in 0..13 {
                            let o = l.offset(&s, Element { x, y, z, layer });
                            assert_eq!(o % 8, 0);
                            assert!(o + 8 <= l.total_bytes(&s));
                            assert!(seen.insert(o), "overlap at ({x},{y},{z},{layer})");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn pitch_rows_follow_each_other_at_the_pitch() {
        let s = shape(SurfaceDim::D2Array, 4, 10, 3, 1, 2);
        let l = SurfaceLayout::Pitch { pitch: 64 };
        assert_eq!(
            l.offset(
                &s,
                Element {
                    x: 3,
                    y: 2,
                    z: 0,
                    layer: 1
                }
            ),
            192 + 128 + 12
        );
        assert_eq!(l.total_bytes(&s), 384);
    }

    #[test]
    fn coordinates_clamp_ignore_or_trap_per_the_clamp_mode() {
        let s = shape(SurfaceDim::D2, 4, 8, 4, 1, 1);
        let at = |x, y| {
            Landing::At(Element {
                x,
                y,
                z: 0,
                layer: 0,
            })
        };
        assert_eq!(s.element([3, 2, 0], false, Clamp::Trap), at(3, 2));
        // x = -1 and y = 4 are out of bounds.
        assert_eq!(s.element([u32::MAX, 2, 0], false, Clamp::Nearest), at(0, 2));
        assert_eq!(s.element([3, 4, 0], false, Clamp::Nearest), at(3, 3));
        assert_eq!(s.element([3, 4, 0], false, Clamp::Ignore), Landing::Ignored);
        assert_eq!(
            s.element([u32::MAX, 0, 0], false, Clamp::Trap),
            Landing::OutOfBounds
        );
        // A byte x: aligned or misaligned, and clamped onto the last element's first byte.
        assert_eq!(s.element([12, 0, 0], true, Clamp::Trap), at(3, 0));
        assert_eq!(
            s.element([13, 0, 0], true, Clamp::Nearest),
            Landing::Misaligned
        );
        assert_eq!(s.element([400, 0, 0], true, Clamp::Nearest), at(7, 0));
        assert_eq!(
            s.element([(-4i32) as u32, 0, 0], true, Clamp::Ignore),
            Landing::Ignored
        );
    }

    #[test]
    fn array_layers_use_the_low_16_bits_and_buffers_are_unsigned_unless_near() {
        let s = shape(SurfaceDim::D1Array, 4, 8, 1, 1, 3);
        let at = |x, layer| {
            Landing::At(Element {
                x,
                y: 0,
                z: 0,
                layer,
            })
        };
        assert_eq!(s.element([1, 0x1_0002, 0], false, Clamp::Trap), at(1, 2));
        assert_eq!(
            s.element([1, 3, 0], false, Clamp::Trap),
            Landing::OutOfBounds
        );
        assert_eq!(s.element([1, 0xffff, 0], false, Clamp::Nearest), at(1, 2));
        let b = shape(SurfaceDim::D1Buffer, 4, 8, 1, 1, 1);
        // 0xffffffff: -1 when signed (NEAR clamps to 0), 4294967295 otherwise (clamped high
        // would be 7, but only NEAR clamps: IGN drops it).
        let at1 = |x| {
            Landing::At(Element {
                x,
                y: 0,
                z: 0,
                layer: 0,
            })
        };
        assert_eq!(b.element([u32::MAX, 0, 0], false, Clamp::Nearest), at1(0));
        assert_eq!(
            b.element([u32::MAX, 0, 0], false, Clamp::Ignore),
            Landing::Ignored
        );
        let d1 = shape(SurfaceDim::D1, 4, 8, 1, 1, 1);
        assert_eq!(
            d1.element([0x8000_0000, 0, 0], false, Clamp::Nearest),
            at1(0)
        );
    }
}
