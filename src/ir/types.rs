//! Value types and the launch description a program file declares.

use super::{CbankLayout, CmpOp, Span};
use std::fmt;

op_enum! {
    /// Value types of ops, memory accesses and buffers.
    ///
    /// `B*` types are untyped bits (unsigned for comparisons). `F16x2`/`BF16x2` are two 16-bit
    /// floats packed in one 32-bit word (low half = element 0). In registers, values narrower
    /// than 32 bits occupy the low bits of one register (loads zero- or sign-extend them).
    pub enum Ty {
        /// Unsigned 8-bit integer.
        U8 = "u8",
        /// Unsigned 16-bit integer.
        U16 = "u16",
        /// Unsigned 32-bit integer.
        U32 = "u32",
        /// Unsigned 64-bit integer.
        U64 = "u64",
        /// Signed (two's-complement) 8-bit integer.
        S8 = "s8",
        /// Signed 16-bit integer.
        S16 = "s16",
        /// Signed 32-bit integer.
        S32 = "s32",
        /// Signed 64-bit integer.
        S64 = "s64",
        /// 16 untyped bits.
        B16 = "b16",
        /// 32 untyped bits.
        B32 = "b32",
        /// 64 untyped bits.
        B64 = "b64",
        /// IEEE binary16.
        F16 = "f16",
        /// bfloat16 (8 exponent bits, 7 fraction bits).
        BF16 = "bf16",
        /// IEEE binary32.
        F32 = "f32",
        /// IEEE binary64.
        F64 = "f64",
        /// Two binary16 values in one 32-bit word.
        F16x2 = "f16x2",
        /// Two bfloat16 values in one 32-bit word.
        BF16x2 = "bf16x2",
        /// 128 untyped bits in a register *quad* (four consecutive registers, word 0 lowest).
        /// Only the 128-bit atomics take it (`Exch` and `Cas`: SASS `ATOMG.E.CAS.128`, PTX
        /// `atom.cas.b128`), each one indivisible 16-byte host atomic; validation rejects it
        /// everywhere else. A plain 128-bit load or store is a vector access of smaller
        /// elements ([`crate::ir::MemAccess::vector`]).
        B128 = "b128",
    }
}

impl Ty {
    /// Size in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            Ty::U8 | Ty::S8 => 1,
            Ty::U16 | Ty::S16 | Ty::B16 | Ty::F16 | Ty::BF16 => 2,
            Ty::U32 | Ty::S32 | Ty::B32 | Ty::F32 | Ty::F16x2 | Ty::BF16x2 => 4,
            Ty::U64 | Ty::S64 | Ty::B64 | Ty::F64 => 8,
            Ty::B128 => 16,
        }
    }
    /// Size in bits.
    pub fn bits(self) -> u32 {
        self.bytes() * 8
    }
    /// Number of 32-bit registers a value of this type occupies: 1 (32 bits or narrower), 2
    /// (a pair) or 4 (the quad of [`Ty::B128`]).
    pub fn regs(self) -> u16 {
        match self.bytes() {
            16 => 4,
            8 => 2,
            _ => 1,
        }
    }
    /// `S8`..`S64`.
    pub fn is_signed_int(self) -> bool {
        matches!(self, Ty::S8 | Ty::S16 | Ty::S32 | Ty::S64)
    }
    /// The float types, packed ones included.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64 | Ty::F16x2 | Ty::BF16x2
        )
    }
    /// Every type that is not a float (signed, unsigned and untyped bits).
    pub fn is_int(self) -> bool {
        !self.is_float()
    }
    /// Element types a buffer can be declared with.
    pub fn is_buffer_elem(self) -> bool {
        matches!(
            self,
            Ty::U8
                | Ty::U16
                | Ty::U32
                | Ty::U64
                | Ty::S8
                | Ty::S16
                | Ty::S32
                | Ty::S64
                | Ty::F16
                | Ty::F32
                | Ty::F64
        )
    }
}

/// A binary IEEE 754 interchange format: 1 sign bit, `exp_bits` exponent bits, `frac_bits`
/// stored fraction bits; a raw value is the low [`FloatFormat::bits`] bits of a `u64`. The IR
/// defines the formats and their encoding here; computing with them (rounding, conversion,
/// arithmetic) is `crate::sem::float`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FloatFormat {
    /// Width of the biased exponent field.
    pub exp_bits: u32,
    /// Width of the stored fraction field (the significand has one more, implicit, bit).
    pub frac_bits: u32,
}

impl Ty {
    /// The element format of a float type and how many elements one value packs (2 for
    /// `f16x2`/`bf16x2`, element 0 in the low half), or `None` for integer and bit types.
    pub fn float_format(self) -> Option<(FloatFormat, u32)> {
        match self {
            Ty::F16 => Some((FloatFormat::F16, 1)),
            Ty::BF16 => Some((FloatFormat::BF16, 1)),
            Ty::F32 => Some((FloatFormat::F32, 1)),
            Ty::F64 => Some((FloatFormat::F64, 1)),
            Ty::F16x2 => Some((FloatFormat::F16, 2)),
            Ty::BF16x2 => Some((FloatFormat::BF16, 2)),
            Ty::U8
            | Ty::U16
            | Ty::U32
            | Ty::U64
            | Ty::S8
            | Ty::S16
            | Ty::S32
            | Ty::S64
            | Ty::B16
            | Ty::B32
            | Ty::B64
            | Ty::B128 => None,
        }
    }
}

impl FloatFormat {
    /// IEEE binary16 (`f16`).
    pub const F16: FloatFormat = FloatFormat {
        exp_bits: 5,
        frac_bits: 10,
    };
    /// bfloat16 (`bf16`): the exponent range of `f32` with 8 significand bits.
    pub const BF16: FloatFormat = FloatFormat {
        exp_bits: 8,
        frac_bits: 7,
    };
    /// IEEE binary32 (`f32`).
    pub const F32: FloatFormat = FloatFormat {
        exp_bits: 8,
        frac_bits: 23,
    };
    /// IEEE binary64 (`f64`).
    pub const F64: FloatFormat = FloatFormat {
        exp_bits: 11,
        frac_bits: 52,
    };

    /// Total width in bits.
    /// Size in bits.
    pub fn bits(self) -> u32 {
        1 + self.exp_bits + self.frac_bits
    }
    /// All ones in the low [`FloatFormat::bits`] bits.
    pub fn value_mask(self) -> u64 {
        u64::MAX >> (64 - self.bits())
    }
    /// The sign bit.
    pub fn sign_mask(self) -> u64 {
        1 << (self.exp_bits + self.frac_bits)
    }
    /// The fraction field.
    pub fn frac_mask(self) -> u64 {
        (1 << self.frac_bits) - 1
    }
    /// The exponent bias: a normal value is `1.frac · 2^(exp_field - bias)`.
    pub fn bias(self) -> i32 {
        (1 << (self.exp_bits - 1)) - 1
    }
    /// The exponent field value of infinities and NaNs (all ones).
    pub fn exp_all_ones(self) -> u64 {
        (1 << self.exp_bits) - 1
    }
    /// The biased exponent field of `bits`.
    pub fn exp_field(self, bits: u64) -> u64 {
        (bits >> self.frac_bits) & self.exp_all_ones()
    }
    /// Whether `bits` is a NaN (any sign and payload).
    pub fn is_nan(self, bits: u64) -> bool {
        self.exp_field(bits) == self.exp_all_ones() && bits & self.frac_mask() != 0
    }
    /// Whether `bits` is subnormal (exponent field 0, fraction not 0).
    pub fn is_subnormal(self, bits: u64) -> bool {
        self.exp_field(bits) == 0 && bits & self.frac_mask() != 0
    }
    /// Whether the sign bit of `bits` is set (also for `-0` and NaNs).
    pub fn is_negative(self, bits: u64) -> bool {
        bits & self.sign_mask() != 0
    }
    /// A subnormal value becomes a zero of the same sign; anything else is unchanged.
    pub fn flush_subnormal(self, bits: u64) -> u64 {
        if self.is_subnormal(bits) {
            bits & self.sign_mask()
        } else {
            bits
        }
    }
    /// The canonical NaN: sign 0, exponent and fraction all ones.
    pub fn canonical_nan(self) -> u64 {
        self.value_mask() & !self.sign_mask()
    }
    /// Positive infinity.
    pub fn infinity(self) -> u64 {
        self.exp_all_ones() << self.frac_bits
    }
    /// The largest finite positive value.
    pub fn max_finite(self) -> u64 {
        self.infinity() - 1
    }
}

/// Everything a program file declares about running and checking one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchSpec {
    /// CTAs per grid dimension (`.grid X[,Y[,Z]]`), default 1,1,1.
    pub grid: [u32; 3],
    /// Threads per CTA dimension (`.block X[,Y[,Z]]`), default 32,1,1; product at most 1024.
    pub block: [u32; 3],
    /// Shared-memory bytes per CTA (`.shared N`), default 0; at most 16 MiB: the whole window,
    /// reserved, static and dynamic parts together.
    pub shared_bytes: u32,
    /// The bytes of the window before the dynamic shared memory: the architecture's reserved
    /// bytes and the kernel's static variables (a PTX entry's `.shared` variables, a listing's
    /// `.static_shared`). `shared_bytes - static_shared` is `%dynamic_smem_size`; 0 for SASS
    /// program files, whose `.shared` is the window.
    pub static_shared: u32,
    /// The constant-bank layout of the architecture the kernel was compiled for.
    pub layout: CbankLayout,
    /// The code is a compiler's listing whose header named `layout`'s architecture, so its
    /// instructions follow that architecture's encoding; false for hand-written SASS, which
    /// follows the documents' encoding rules (the `ATOMS.CAS` register pairing).
    pub compiled: bool,
    /// Where the kernel's own reads of constant bank 0 end (0: not recorded). A listing
    /// declares no parameters, so its code says how far they reach: the launch must bind
    /// parameters up to here, and the bank is at least this long.
    pub cbank_reads: u32,
    /// Buffers and scalar parameters in declaration order; they occupy the constant bank from
    /// the layout's [`CbankLayout::param_base`] on, naturally aligned (a buffer is its 8-byte
    /// device address).
    pub params: Vec<ParamDecl>,
    /// The kernel's constant banks other than 0, whose bytes its binary fixes (see
    /// [`ConstBank`]): in increasing bank order, each bank at most once, never bank 0. Empty
    /// except for a SASS listing that prints them (`cuobjdump -elf -sass`, full `nvdisasm`).
    pub const_banks: Vec<ConstBank>,
    /// `.expect` lines, checked after the launch in order.
    pub expects: Vec<Expect>,
    /// `.expect trap REASON`: the launch must trap, for this reason (a program that shows a
    /// fault is reported; its buffer expectations are not checked, since it stopped midway).
    pub expect_trap: Option<TrapExpect>,
    /// `.payload OFFSET KIND` (vISA kernels only): the implicit values of the thread payload
    /// after the arguments, which the kernel text alone does not name (see
    /// `docs/visa-payload.md`).
    pub payload: Vec<PayloadDecl>,
    /// Shared-memory bytes each warp's code needs after the window's `shared_bytes` (a vISA
    /// thread's register file, see `docs/visa.md`): a launch of `W` warps per CTA gets a
    /// window of `shared_bytes + W × shared_per_warp`, and its CTA size must be a whole number
    /// of warps. 0 for the NVIDIA dialects, and for a vISA kernel whose variables are all in
    /// registers.
    pub shared_per_warp: u32,
}

/// `.payload OFFSET KIND`: a vISA kernel's payload holds `kind` at byte `offset` (three `u32`,
/// x, y, z; a `u64` for [`PayloadKind::PrivateBase`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PayloadDecl {
    /// The byte offset in the thread payload.
    pub offset: u32,
    /// What is there.
    pub kind: PayloadKind,
    /// Where the line is.
    pub span: Span,
}

op_enum! {
    /// The implicit values IGC's OpenCL payload may hold after the arguments.
    pub enum PayloadKind {
        /// The number of work-groups (`get_num_groups`).
        NumGroups = "num_groups",
        /// The number of work-items (`get_global_size`).
        GlobalSize = "global_size",
        /// The work-group size (`get_local_size`).
        LocalSize = "local_size",
        /// The work-group size of a uniform launch (`get_enqueued_local_size`).
        EnqueuedLocalSize = "enqueued_local_size",
        /// The global id offset (`get_global_offset`): zero in atomjit's launches.
        GlobalIdOffset = "global_id_offset",
        /// The 64-bit base address of the work-items' private memory (IGC passes it even when
        /// a kernel needs 0 bytes of it). atomjit gives vISA kernels no private memory: the
        /// address is 0, outside every space, so an access through it traps.
        PrivateBase = "private_base",
    }
}

/// `.expect trap REASON`: the launch is expected to trap for `reason`, one of the trap
/// reasons' names (`surface_out_of_bounds`, `misaligned_address`, ...: `exec::TrapReason::name`).
#[derive(Debug, Clone, PartialEq)]
pub struct TrapExpect {
    /// The reason's name.
    pub reason: String,
    /// The line's text after `.expect`, for reports.
    pub text: String,
    /// Where the line is.
    pub span: Span,
}

impl Default for LaunchSpec {
    fn default() -> Self {
        LaunchSpec {
            grid: [1, 1, 1],
            block: [32, 1, 1],
            shared_bytes: 0,
            static_shared: 0,
            layout: CbankLayout::default(),
            compiled: false,
            cbank_reads: 0,
            params: Vec::new(),
            const_banks: Vec::new(),
            expects: Vec::new(),
            expect_trap: None,
            payload: Vec::new(),
            shared_per_warp: 0,
        }
    }
}

impl LaunchSpec {
    /// Where the parameters end: past the last one, or the parameter base if there are none.
    pub fn params_end(&self) -> u64 {
        self.params
            .iter()
            .map(|p| u64::from(p.cbank_offset) + u64::from(p.cbank_size()))
            .max()
            .unwrap_or(0)
            .max(u64::from(self.layout.param_base()))
    }

    /// `%dynamic_smem_size`: the window after the reserved and static parts.
    pub fn dynamic_shared(&self) -> u32 {
        self.shared_bytes.saturating_sub(self.static_shared)
    }

    /// The kernel's constant bank `bank` (1 and up), if its binary gives one.
    pub fn const_bank(&self, bank: u8) -> Option<&ConstBank> {
        self.const_banks.iter().find(|b| b.bank == bank)
    }
}

/// A constant bank other than 0, with the contents ptxas fixed when it compiled the kernel
/// (the `.nv.constantN.KERNEL` and `.nv.constantN` sections of the cubin): bank 2 holds what the
/// compiler generates for a kernel (the shared-memory offsets of its `__shared__` variables,
/// literals an instruction cannot encode, jump tables), bank 3 the module's `__constant__`
/// variables with their initial values. Unlike bank 0, which the launch fills (geometry, ABI
/// words, parameters), nothing at run time changes these bytes: `c[bank][offset]` reads them
/// as they are, little-endian, and validation keeps every read inside them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ConstBank {
    /// The bank number (1 to 255).
    pub bank: u8,
    /// The bank's bytes from offset 0; its size is the section's.
    pub bytes: Vec<u8>,
}

impl ConstBank {
    /// The little-endian value of `words` 32-bit words (1 or 2) at byte `offset`, or `None`
    /// when the read does not lie inside the bank.
    pub fn read(&self, offset: u32, words: u16) -> Option<u64> {
        let start = offset as usize;
        let bytes = self
            .bytes
            .get(start..start.checked_add(4 * usize::from(words))?)?;
        Some(
            bytes
                .iter()
                .rev()
                .fold(0u64, |acc, &b| acc << 8 | u64::from(b)),
        )
    }
}

/// Offset in constant bank 0 of the first kernel parameter in the default (sm_70–sm_89) layout,
/// [`CbankLayout::SM80`]; a kernel's own is `launch.layout.param_base()`.
pub const PARAM_BASE: u32 = 0x160;
/// Constant bank offset of the block size x, y, z (every layout).
pub const CBANK_NTID: u32 = 0x0;
/// Constant bank offset of the grid size x, y, z.
pub const CBANK_NCTAID: u32 = 0xc;

/// A buffer or scalar kernel parameter, with its constant-bank offset.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamDecl {
    /// The name (`c[0x0][NAME]` in SASS, the launch's name for a PTX parameter).
    pub name: String,
    /// A buffer or a scalar.
    pub kind: ParamKind,
    /// Byte offset in constant bank 0 (assigned by the front-end in declaration order).
    pub cbank_offset: u32,
    /// Where it is declared.
    pub span: Span,
}

impl ParamKind {
    /// The element type and element count of a buffer or a surface (its elements in logical
    /// order, as `.expect` and dumps see them); `None` for a scalar.
    pub fn elements(&self) -> Option<(Ty, u64)> {
        match self {
            ParamKind::Buffer { elem, len, .. } => Some((*elem, *len)),
            ParamKind::Surface(s) => Some((s.elem, s.shape.elements())),
            ParamKind::Scalar { .. } | ParamKind::SurfaceAddress { .. } => None,
        }
    }
}

impl ParamDecl {
    /// Bytes the parameter occupies in the constant bank (8 for a buffer address).
    pub fn cbank_size(&self) -> u32 {
        match &self.kind {
            ParamKind::Buffer { .. } | ParamKind::Surface(_) | ParamKind::SurfaceAddress { .. } => {
                8
            }
            ParamKind::Scalar { ty, .. } => ty.bytes(),
        }
    }
}

/// What a kernel parameter is.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamKind {
    /// `.buffer NAME TY[LEN] = INIT`: a global-memory allocation of `len` elements.
    Buffer {
        /// The element type.
        elem: Ty,
        /// Elements (at least 1).
        len: u64,
        /// The initial contents.
        init: Init,
    },
    /// `.surface NAME DIM TY[W,H,D] ...`: a surface in global memory, passed as its 8-byte
    /// handle (its index in the launch's header pool, see [`crate::ir::surface`]).
    Surface(Box<super::surface::SurfaceDecl>),
    /// `.param NAME u64 = &SURFACE`: the device address of the first byte of the kernel's
    /// surface `SURFACE` (its memory in its layout), for a kernel that reads a surface as plain
    /// memory.
    SurfaceAddress {
        /// The surface's name (a `.surface` of the same kernel).
        surface: String,
    },
    /// `.param NAME TY = VALUE`.
    Scalar {
        /// The parameter's type.
        ty: Ty,
        /// Its value.
        value: Scalar,
    },
}

/// A literal number from a program file. Integers keep full range; they are converted to the
/// element type with a range check by the front-end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// An integer (written without a fraction or exponent).
    Int(i128),
    /// A float (`1.5`, `-2e3`, `inf`, `nan`).
    Float(f64),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Int(v) => write!(f, "{v}"),
            Scalar::Float(v) => write!(f, "{v:?}"),
        }
    }
}

impl Scalar {
    /// The value as an element of type `elem`: its little-endian bits in the low
    /// `elem.bytes()` bytes. Integers wrap to the element width (the front-end has already
    /// range-checked literal values); floats round to nearest even.
    #[inline]
    pub fn to_bits(self, elem: Ty) -> u64 {
        let mask = match elem.bytes() {
            n @ 1..=7 => (1u64 << (n * 8)) - 1,
            _ => u64::MAX,
        };
        match (elem.is_float(), self) {
            (false, Scalar::Int(i)) => i as u64 & mask,
            (false, Scalar::Float(f)) => (f as i128) as u64 & mask,
            (true, v) => {
                let f = match v {
                    Scalar::Int(i) => i as f64,
                    Scalar::Float(f) => f,
                };
                match elem {
                    Ty::F16 => half::f16::from_f64(f).to_bits() as u64,
                    Ty::BF16 => half::bf16::from_f64(f).to_bits() as u64,
                    Ty::F32 => (f as f32).to_bits() as u64,
                    // F64; the other types are not floats (packed pairs are not a value).
                    Ty::F64
                    | Ty::F16x2
                    | Ty::BF16x2
                    | Ty::U8
                    | Ty::U16
                    | Ty::U32
                    | Ty::U64
                    | Ty::S8
                    | Ty::S16
                    | Ty::S32
                    | Ty::S64
                    | Ty::B16
                    | Ty::B32
                    | Ty::B64
                    | Ty::B128 => f.to_bits(),
                }
            }
        }
    }

    /// The element of type `elem` whose little-endian bits are the low `elem.bytes()` bytes of
    /// `raw` (integers exactly, floats as f64, packed pairs as their raw bits).
    pub fn from_bits(elem: Ty, raw: u64) -> Scalar {
        match elem {
            Ty::U8 => Scalar::Int(raw as u8 as i128),
            Ty::U16 | Ty::B16 => Scalar::Int(raw as u16 as i128),
            Ty::U32 | Ty::B32 => Scalar::Int(raw as u32 as i128),
            Ty::U64 | Ty::B64 => Scalar::Int(raw as i128),
            Ty::S8 => Scalar::Int(raw as i8 as i128),
            Ty::S16 => Scalar::Int(raw as i16 as i128),
            Ty::S32 => Scalar::Int(raw as i32 as i128),
            Ty::S64 => Scalar::Int(raw as i64 as i128),
            Ty::F16 => Scalar::Float(half::f16::from_bits(raw as u16).to_f64()),
            Ty::BF16 => Scalar::Float(half::bf16::from_bits(raw as u16).to_f64()),
            Ty::F32 => Scalar::Float(f32::from_bits(raw as u32) as f64),
            Ty::F64 => Scalar::Float(f64::from_bits(raw)),
            // Packed pairs decode as their raw bits: expectations compare them bitwise.
            Ty::F16x2 | Ty::BF16x2 => Scalar::Int(raw as u32 as i128),
            // Not a buffer element type (`Ty::is_buffer_elem`); its low 64 bits, never reached.
            Ty::B128 => Scalar::Int(raw as i128),
        }
    }
}

/// A buffer initialiser.
#[derive(Debug, Clone, PartialEq)]
pub enum Init {
    /// Every element is this value (`= 0`).
    Fill(Scalar),
    /// The elements in order (`= {1, 2, 3}`); the rest are zero. Longer lists are an error.
    List(Vec<Scalar>),
    /// A list already in the buffer's element type: the elements' little-endian bytes in
    /// order (a `.buffer` or `.surface` declaration's `{..}`, converted and checked when it is
    /// parsed, so that a list of millions of values takes their bytes and no more); the rest
    /// are zero.
    Encoded(Vec<u8>),
    /// Element `i` is `i` (converted to the element type, wrapping for narrow integers).
    Iota,
    /// Seeded pseudo-random values (`random(SEED)` or `random(SEED, LO, HI)`), from
    /// [`crate::exec::random`] so they are the same on every machine.
    Random {
        /// The generator's seed.
        seed: u64,
        /// Integers in `[LO, HI)`, or `None` for the generator's raw values.
        range: Option<(i128, i128)>,
    },
}

/// One `.expect` line.
#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    /// What is checked.
    pub lhs: ExpectLhs,
    /// The comparison (`Eq` .. `Ge`).
    pub cmp: CmpOp,
    /// What it is compared with.
    pub rhs: ExpectRhs,
    /// The line's text after `.expect`, for reports.
    pub text: String,
    /// Where the line is.
    pub span: Span,
}

/// The left side of an expectation.
#[derive(Debug, Clone, PartialEq)]
pub enum ExpectLhs {
    /// `NAME[i]`
    Element {
        /// The buffer.
        buffer: String,
        /// The element index.
        index: u64,
    },
    /// `NAME[a..b]`: every element with `a <= i < b` must satisfy the comparison.
    Range {
        /// The buffer.
        buffer: String,
        /// The first element checked.
        start: u64,
        /// One past the last element checked.
        end: u64,
    },
    /// `NAME`: the whole buffer (with `== {..}` only, or every element against a scalar).
    Whole {
        /// The buffer.
        buffer: String,
    },
    /// `sum(NAME)` (integers summed exactly in 128 bits; floats in f64).
    Sum {
        /// The buffer.
        buffer: String,
    },
    /// `min(NAME)`.
    Min {
        /// The buffer.
        buffer: String,
    },
    /// `max(NAME)`.
    Max {
        /// The buffer.
        buffer: String,
    },
    /// `count(NAME, V)`: how many elements equal `V`.
    Count {
        /// The buffer.
        buffer: String,
        /// The value counted.
        value: Scalar,
    },
}

impl ExpectLhs {
    /// The buffer the expectation reads.
    pub fn buffer(&self) -> &str {
        match self {
            ExpectLhs::Element { buffer, .. }
            | ExpectLhs::Range { buffer, .. }
            | ExpectLhs::Whole { buffer }
            | ExpectLhs::Sum { buffer }
            | ExpectLhs::Min { buffer }
            | ExpectLhs::Max { buffer }
            | ExpectLhs::Count { buffer, .. } => buffer,
        }
    }
}

/// The right side of an expectation.
#[derive(Debug, Clone, PartialEq)]
pub enum ExpectRhs {
    /// One value.
    Scalar(Scalar),
    /// `{a, b, c}`: the whole buffer (or range) element by element; with `==` only.
    List(Vec<Scalar>),
}
