//! Surfaces: images in global memory addressed by coordinates (SASS `SUATOM`/`SURED`/`SULD`/
//! `SUST`, PTX `sured`/`suld`/`sust`), and where an access to one lands.
//!
//! A surface is a [`SurfaceShape`] (dimensionality, element size, extent, layers) stored in a
//! [`SurfaceLayout`] (pitch-linear rows, or NVIDIA's block-linear tiling) at a global address.
//! [`SurfaceShape::element`] turns a lane's coordinates into the element they name under a
//! [`Clamp`] mode, and [`SurfaceLayout::offset`] turns an element into a byte offset.
//! [`resolve`] puts them together for one lane of an instruction: its [`SurfaceAddress`] (the
//! IR's `Address::Surface`), the handle word it read and the launch's header pool
//! ([`SurfaceHeader`]) give a global address, no access, or a [`SurfaceFault`]. Both backends
//! call [`resolve`] (the JIT from its slow path); the JIT's generated code computes only the
//! one answer [`resolve`] gives for an access inside a `.1D` or `.2D` surface that has a
//! [`FastSurface`] (`base + offset`), and calls [`resolve`] for everything else.
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
//! offset       = ((block * 512) << (log_height + log_depth)) + gob_in_block * 512 + in_gob
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
    /// Every division is by a power of two, written as a shift: this runs once per lane of
    /// every surface access, and the hardware divisions it had were most of
    /// `surf_hist2d`'s time.
    pub fn offset(&self, shape: &SurfaceShape, e: Element) -> u64 {
        let xb = u64::from(e.x) * u64::from(shape.elem_bytes);
        let (y, z) = (u64::from(e.y), u64::from(e.z));
        let layer = match e.layer {
            0 => 0,
            l => u64::from(l) * self.layer_bytes(shape),
        };
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
                // y / (8 × gobs_high), xb / 64.
                let block = ((z >> log_depth) * blocks_high + (y >> (3 + log_height))) * gobs_wide
                    + (xb >> 6);
                let gob_in_block = (z & (gobs_deep - 1)) << log_height | (y >> 3) & (gobs_high - 1);
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

/// Where a surface instruction finds its handle, the 32-bit word
/// `samplerPtr[31:20] | headerPtr[19:0]` (`004_16d4664d52412e92.txt`; "Surface instructions
/// ignore sample pointers", so only `headerPtr` counts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SurfaceHandle {
    /// `#tsPtrIdxU13`: the word at byte `offset` (4 times the word index) of constant bank
    /// `bank` ("This immediate index (word address) is used to fetch the packed header+sampler
    /// pointer entry from constant cache").
    Bank {
        /// The constant bank (nvdisasm prints it as the first of two immediates).
        bank: u8,
        /// Byte offset of the handle word in the bank.
        offset: u32,
    },
    /// `Rc` ("In true bindless mode, Rc register is used to pass the `samplerPtr[31:20] |
    /// headerPtr[19:0]`"), a vector or uniform register (`URc`); its 32 bits are the handle.
    Reg(super::Reg),
}

impl SurfaceHandle {
    /// The handle as the one-word source operand it is read from.
    pub fn operand(self) -> super::Operand {
        match self {
            SurfaceHandle::Bank { bank, offset } => super::Operand::Const { bank, offset },
            SurfaceHandle::Reg(r) => super::Operand::Reg(r),
        }
    }
}

/// A surface address ([`super::Address::Surface`]): the coordinates of one element of the
/// surface a handle names, as SASS `SUATOM`/`SURED`/`SULD`/`SUST` give them.
///
/// A lane reads the [`SurfaceDim::coords`] registers from `coords` (`Ra`, `Ra+1`, `Ra+2`, one
/// 32-bit word each; the module docs say how each is read) and the handle; [`resolve`] turns
/// them, with the launch's header pool, into a global address, into no access, or into a
/// fault. The access's space is [`super::Space::Global`] and its size must be the surface's
/// element size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SurfaceAddress {
    /// The first coordinate register (`Ra`; validation: not RZ, aligned for the count).
    pub coords: super::Reg,
    /// The dimensionality the instruction names (`.dim`); the surface's must be the same.
    pub dim: SurfaceDim,
    /// `.BA`: x is a byte offset, a multiple of the access size.
    pub byte_x: bool,
    /// What an out-of-bounds coordinate does.
    pub clamp: Clamp,
    /// Where the handle is.
    pub handle: SurfaceHandle,
    /// `.SD32`/`.SD64` (atomics only): the access's type (`U32` or `U64`) is signed when the
    /// surface's element type is (`s32`, `s64`), unsigned otherwise, resolved per lane from
    /// the surface's header ([`Resolved::At::signed`]).
    pub format_sign: bool,
    /// `Ps` (PT when absent): receives, in each executing lane, whether its access hit a page
    /// marked sparse ("Predicate returning sparse tile status. Indiate that the surface access
    /// is happening to a page marked as sparse (not valid)").
    pub sparse: super::Pred,
}

/// One surface of a launch as its instructions see it: the header its handle's `headerPtr`
/// selects (the launch's surfaces in declaration order form the pool, `docs/surfaces.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceHeader {
    /// Device address of the surface's first byte (in the global arena).
    pub base: u64,
    /// Dimensionality, element size and extent.
    pub shape: SurfaceShape,
    /// How the elements lie in memory.
    pub layout: SurfaceLayout,
    /// The element format: its signedness decides `.SD32`/`.SD64`.
    pub elem: super::Ty,
    /// Every access does nothing.
    pub disabled: bool,
    /// The sparse [`SPARSE_PAGE_BYTES`] pages, ascending.
    pub sparse: Vec<u64>,
}

impl SurfaceHeader {
    /// The header of `decl` allocated at `base`.
    pub fn new(decl: &SurfaceDecl, base: u64) -> SurfaceHeader {
        SurfaceHeader {
            base,
            shape: decl.shape,
            layout: decl.layout,
            elem: decl.elem,
            disabled: decl.disabled,
            sparse: decl.sparse.clone(),
        }
    }
}

/// What generated code needs to resolve an access to a 1D or 2D surface itself, when the
/// access is inside the surface (`jit/translate/surface.rs`): the [`resolve`] of such an access
/// is `base + offset`, with the offset below. Anything else (another dimensionality, a
/// disabled surface, sparse pages, a coordinate outside, an extent that does not fit the fast
/// path's compares) goes to [`resolve`]. Built from a header by [`FastSurface::of`], whenever
/// the code's context is built for a launch's pool (headers do not change during a launch).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastSurface {
    /// Device address of the surface's first byte.
    pub base: u64,
    /// Byte groups of 64 across a row (block-linear).
    pub gobs_wide: u64,
    /// [`FastSurface::D1`] or [`FastSurface::D2`] when the fast path applies, else 0.
    pub dim: u32,
    /// Bytes per element.
    pub elem_bytes: u32,
    /// Elements across (below 2^31 when `dim` is not 0).
    pub width: u32,
    /// Rows (below 2^31 when `dim` is not 0).
    pub height: u32,
    /// 1: block-linear, with `log_height` and `log_depth`; 0: pitch-linear, `pitch` bytes a row.
    pub block_linear: u32,
    /// log2 of the block height in GOBs (block-linear).
    pub log_height: u32,
    /// log2 of the block depth in GOBs (block-linear).
    pub log_depth: u32,
    /// Bytes from one row to the next (pitch-linear).
    pub pitch: u32,
}

impl FastSurface {
    /// No fast form: every access takes the resolver's path.
    pub const NONE: FastSurface = FastSurface {
        base: 0,
        gobs_wide: 0,
        dim: 0,
        elem_bytes: 0,
        width: 0,
        height: 0,
        block_linear: 0,
        log_height: 0,
        log_depth: 0,
        pitch: 0,
    };

    /// `dim` of a `.1D` surface.
    pub const D1: u32 = 1;
    /// `dim` of a `.2D` surface.
    pub const D2: u32 = 2;

    /// The fast form of `h`: `dim` 0 unless every access inside it resolves to `base + offset`
    /// (not disabled, no sparse page, a height, depth and layer count of at least 1, a `.1D`
    /// or `.2D` surface whose width and height are below 2^31, so that an unsigned compare of
    /// a coordinate against them is the signed range test [`SurfaceShape::element`] makes; a
    /// zero width leaves no coordinate inside).
    pub fn of(h: &SurfaceHeader) -> FastSurface {
        let s = &h.shape;
        let dim = match s.dim {
            SurfaceDim::D1 => FastSurface::D1,
            SurfaceDim::D2 => FastSurface::D2,
            SurfaceDim::D1Buffer | SurfaceDim::D1Array | SurfaceDim::D2Array | SurfaceDim::D3 => 0,
        };
        let small = |v: u32| v < 1 << 31;
        let usable = !h.disabled
            && h.sparse.is_empty()
            && s.depth >= 1
            && s.layers >= 1
            && s.height >= 1
            && small(s.width)
            && small(s.height);
        let (block_linear, log_height, log_depth, pitch) = match h.layout {
            SurfaceLayout::Pitch { pitch } => (0, 0, 0, pitch),
            SurfaceLayout::BlockLinear {
                log_height,
                log_depth,
            } => (1, u32::from(log_height), u32::from(log_depth), 0),
        };
        FastSurface {
            base: h.base,
            gobs_wide: s.row_bytes().div_ceil(64),
            dim: if usable { dim } else { 0 },
            elem_bytes: s.elem_bytes,
            width: s.width,
            height: s.height,
            block_linear,
            log_height,
            log_depth,
            pitch,
        }
    }
}

/// The header index of a handle word: `headerPtr[19:0]`.
pub fn header_index(handle: u32) -> u32 {
    handle & 0xf_ffff
}

/// Why a surface access faults (each is a trap naming the surface, the coordinates and the
/// lane).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SurfaceFault {
    /// The header index is at or past the pool's size: "Any header pointer greater than one
    /// specified in SetTexHeaderPoolC.MaximumIndex will be regarded as an 'invalid' texture".
    Invalid,
    /// The instruction's dimensionality or access size is not the surface's (atomjit's rule:
    /// a `.D` access moves one element of the surface's format, and its coordinates are read
    /// as the surface's dimensionality reads them).
    Mismatch,
    /// Out of bounds under `.TRAP`.
    OutOfBounds,
    /// A `.BA` byte x that is not a multiple of the access size.
    Misaligned,
}

/// Where one lane's surface access lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolved {
    /// The access touches the element at this global address.
    At {
        /// Device address of the element.
        address: u64,
        /// Whether the surface's element type is signed (for `.SD32`/`.SD64`).
        signed: bool,
    },
    /// No access: stores are dropped, loads and atomics return 0. `sparse`: because the
    /// element lies on a sparse page (the `Ps` status); otherwise the surface is disabled or
    /// the coordinates are out of bounds under `.IGN`.
    Skip {
        /// The access hit a sparse page.
        sparse: bool,
    },
    /// A trap.
    Fault(SurfaceFault),
}

/// Resolves one lane's access of `bytes` bytes at `addr` with handle word `handle` and
/// coordinate registers `coords` (those past [`SurfaceDim::coords`] are ignored) against the
/// launch's header `pool`. The checks, in order:
///
/// 1. the header index ([`header_index`]) must be below `pool.len()`, else
///    [`SurfaceFault::Invalid`];
/// 2. a disabled surface skips the access ("If the surface being accessed is disabled, the
///    write will be silently dropped"), whatever the coordinates;
/// 3. the instruction's `dim` and `bytes` must be the surface's dimensionality and element
///    size, else [`SurfaceFault::Mismatch`];
/// 4. the coordinates under the clamp mode ([`SurfaceShape::element`]): misaligned `.BA` x,
///    out of bounds under `.TRAP` (faults) or `.IGN` (a skip), clamped under `.NEAR`;
/// 5. an element on a sparse page skips the access with `sparse` set.
pub fn resolve(
    pool: &[SurfaceHeader],
    handle: u32,
    coords: [u32; 3],
    addr: &SurfaceAddress,
    bytes: u32,
) -> Resolved {
    let Some(h) = pool.get(header_index(handle) as usize) else {
        return Resolved::Fault(SurfaceFault::Invalid);
    };
    if h.disabled {
        return Resolved::Skip { sparse: false };
    }
    if h.shape.dim != addr.dim || h.shape.elem_bytes != bytes {
        return Resolved::Fault(SurfaceFault::Mismatch);
    }
    // The coordinates the dimensionality reads, the others 0 (element by element: a copy of
    // a run of variable length is a `memcpy` call, a tenth of a surface access's time).
    let n = u32::from(addr.dim.coords());
    let used: [u32; 3] = std::array::from_fn(|i| if (i as u32) < n { coords[i] } else { 0 });
    let e = match h.shape.element(used, addr.byte_x, addr.clamp) {
        Landing::At(e) => e,
        Landing::Ignored => return Resolved::Skip { sparse: false },
        Landing::OutOfBounds => return Resolved::Fault(SurfaceFault::OutOfBounds),
        Landing::Misaligned => return Resolved::Fault(SurfaceFault::Misaligned),
    };
    let offset = h.layout.offset(&h.shape, e);
    if h.sparse
        .binary_search(&(offset / SPARSE_PAGE_BYTES))
        .is_ok()
    {
        return Resolved::Skip { sparse: true };
    }
    Resolved::At {
        address: h.base + offset,
        signed: h.elem.is_signed_int(),
    }
}

/// GOBs across, blocks high and blocks deep of a block-linear layer.
fn block_counts(shape: &SurfaceShape, log_height: u8, log_depth: u8) -> (u64, u64, u64) {
    // Ceilings of divisions by powers of two, as shifts (the extents are `u32`: no overflow).
    let ceil_shift = |v: u64, k: u8| (v + (1 << k) - 1) >> k;
    let gobs_wide = ceil_shift(shape.row_bytes(), 6);
    let blocks_high = ceil_shift(u64::from(shape.height), 3 + log_height);
    let blocks_deep = ceil_shift(u64::from(shape.depth), log_depth);
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

    fn header(
        dim: SurfaceDim,
        elem: crate::ir::Ty,
        extent: [u32; 4],
        layout: SurfaceLayout,
    ) -> SurfaceHeader {
        SurfaceHeader {
            base: 0x7f00_0000_1000,
            shape: shape(
                dim,
                elem.bytes(),
                extent[0],
                extent[1],
                extent[2],
                extent[3],
            ),
            layout,
            elem,
            disabled: false,
            sparse: Vec::new(),
        }
    }

    fn access(dim: SurfaceDim, byte_x: bool, clamp: Clamp) -> SurfaceAddress {
        SurfaceAddress {
            coords: crate::ir::Reg(4),
            dim,
            byte_x,
            clamp,
            handle: SurfaceHandle::Bank {
                bank: 0,
                offset: 0x160,
            },
            format_sign: false,
            sparse: crate::ir::Pred::PT,
        }
    }

    const PITCH: SurfaceLayout = SurfaceLayout::Pitch { pitch: 64 };

    #[test]
    fn the_handle_names_a_header_by_its_low_20_bits_and_past_the_pool_is_invalid() {
        use crate::ir::Ty;
        let pool = vec![
            header(SurfaceDim::D1, Ty::U32, [16, 1, 1, 1], PITCH),
            header(SurfaceDim::D2, Ty::S32, [4, 4, 1, 1], PITCH),
        ];
        let a2 = access(SurfaceDim::D2, false, Clamp::Trap);
        // samplerPtr (bits 31:20) is ignored: 0xabc0_0001 is header 1.
        assert_eq!(
            resolve(&pool, 0xabc0_0001, [3, 2, 0], &a2, 4),
            Resolved::At {
                address: 0x7f00_0000_1000 + 2 * 64 + 3 * 4,
                signed: true
            }
        );
        assert_eq!(
            resolve(&pool, 2, [0, 0, 0], &a2, 4),
            Resolved::Fault(SurfaceFault::Invalid)
        );
        // Bit 20 is samplerPtr's: 0x10_0000 is header 0 (1-D, so the 2-D access mismatches).
        assert_eq!(
            resolve(&pool, 0x10_0000, [0, 0, 0], &a2, 4),
            Resolved::Fault(SurfaceFault::Mismatch)
        );
    }

    #[test]
    fn a_mismatched_dimensionality_or_size_faults_and_a_disabled_surface_skips_everything() {
        use crate::ir::Ty;
        let mut pool = vec![header(SurfaceDim::D2, Ty::U32, [4, 4, 1, 1], PITCH)];
        let a2 = access(SurfaceDim::D2, false, Clamp::Trap);
        let a1 = access(SurfaceDim::D1, false, Clamp::Trap);
        assert_eq!(
            resolve(&pool, 0, [0, 0, 0], &a1, 4),
            Resolved::Fault(SurfaceFault::Mismatch)
        );
        assert_eq!(
            resolve(&pool, 0, [0, 0, 0], &a2, 8),
            Resolved::Fault(SurfaceFault::Mismatch)
        );
        pool[0].disabled = true;
        // Disabled: no access, whatever the coordinates, size or dimensionality.
        assert_eq!(
            resolve(&pool, 0, [99, 99, 0], &a2, 4),
            Resolved::Skip { sparse: false }
        );
        assert_eq!(
            resolve(&pool, 0, [0, 0, 0], &a1, 8),
            Resolved::Skip { sparse: false }
        );
        // An invalid handle still faults.
        assert_eq!(
            resolve(&pool, 1, [0, 0, 0], &a2, 4),
            Resolved::Fault(SurfaceFault::Invalid)
        );
    }

    #[test]
    fn clamp_modes_drop_trap_or_clamp_and_a_byte_x_must_be_aligned() {
        use crate::ir::Ty;
        let pool = vec![header(SurfaceDim::D2, Ty::U32, [8, 4, 1, 1], PITCH)];
        let base = pool[0].base;
        let r = |x: i32, y: i32, byte_x, clamp| {
            resolve(
                &pool,
                0,
                [x as u32, y as u32, 0],
                &access(SurfaceDim::D2, byte_x, clamp),
                4,
            )
        };
        let at = |x: u64, y: u64| Resolved::At {
            address: base + y * 64 + x * 4,
            signed: false,
        };
        assert_eq!(
            r(8, 0, false, Clamp::Ignore),
            Resolved::Skip { sparse: false }
        );
        assert_eq!(
            r(-1, 0, false, Clamp::Trap),
            Resolved::Fault(SurfaceFault::OutOfBounds)
        );
        assert_eq!(r(8, -3, false, Clamp::Nearest), at(7, 0));
        assert_eq!(r(28, 3, true, Clamp::Trap), at(7, 3));
        assert_eq!(
            r(30, 3, true, Clamp::Ignore),
            Resolved::Fault(SurfaceFault::Misaligned)
        );
        assert_eq!(
            r(32, 3, true, Clamp::Ignore),
            Resolved::Skip { sparse: false }
        );
    }

    #[test]
    fn unused_coordinate_registers_are_ignored() {
        use crate::ir::Ty;
        let pool = vec![header(SurfaceDim::D1, Ty::U64, [16, 1, 1, 1], PITCH)];
        let a = access(SurfaceDim::D1, true, Clamp::Trap);
        assert_eq!(
            resolve(&pool, 0, [40, 0xdead, 0xbeef], &a, 8),
            Resolved::At {
                address: pool[0].base + 40,
                signed: false
            }
        );
    }

    #[test]
    fn block_linear_and_layered_surfaces_land_where_the_layout_puts_the_element() {
        use crate::ir::Ty;
        // 2D array of u32, 20 x 12, 3 layers, blocks of 2 GOBs high: 80 bytes wide = 2 GOBs
        // across, 12 rows = 1 block high (16 rows); a layer is 2 blocks of 1024 bytes.
        let layout = SurfaceLayout::BlockLinear {
            log_height: 1,
            log_depth: 0,
        };
        let pool = vec![header(SurfaceDim::D2Array, Ty::U32, [20, 12, 1, 3], layout)];
        let a = access(SurfaceDim::D2Array, false, Clamp::Trap);
        let (x, y, layer) = (17u64, 9u64, 2u64);
        let xb = x * 4;
        // Independent: layer, block (x / 64 bytes), GOB within the block (y / 8), the GOB's bits.
        let want = layer * 2048 + (xb / 64) * 1024 + (y / 8) * 512 + gob_bits(xb % 64, y % 8);
        assert_eq!(
            resolve(&pool, 0, [17, 9, 0x7_0002], &a, 4),
            Resolved::At {
                address: pool[0].base + want,
                signed: false
            }
        );
    }

    #[test]
    fn an_element_on_a_sparse_page_is_skipped_and_says_so() {
        use crate::ir::Ty;
        // 128 x 256 u32 at a 512-byte pitch: 128 rows per 64 KiB page; page 1 is sparse.
        let mut h = header(
            SurfaceDim::D2,
            Ty::S32,
            [128, 256, 1, 1],
            SurfaceLayout::Pitch { pitch: 512 },
        );
        h.sparse = vec![1];
        let pool = vec![h];
        let a = access(SurfaceDim::D2, false, Clamp::Trap);
        assert_eq!(
            resolve(&pool, 0, [5, 127, 0], &a, 4),
            Resolved::At {
                address: pool[0].base + 127 * 512 + 20,
                signed: true
            }
        );
        assert_eq!(
            resolve(&pool, 0, [5, 128, 0], &a, 4),
            Resolved::Skip { sparse: true }
        );
    }
}
