//! The single intermediate representation every dialect lowers to.
//!
//! This module is the semantic contract of atomjit: every type and variant says what it means,
//! bit for bit, and what the validator (`crate::valid`) guarantees about it before a backend sees
//! it. Backends (`crate::interp`, `crate::jit`) implement exactly what is written here.
//!
//! # Machine model
//!
//! * A **lane** is one GPU thread. A **warp** is [`Kernel::warp_size`] lanes (32 for the NVIDIA
//!   dialects). Lane masks are `u32`, bit `l` for lane `l`.
//! * Each lane has [`Kernel::num_regs`] 32-bit registers. A 64-bit value lives in a register
//!   *pair*: the low word in `Rn`, the high word in `Rn+1` (the SASS rule of
//!   `000_6d05a8552870c0ae.txt`: "64-bit values in register pairs, low word in the even register").
//!   [`Reg::RZ`] reads as zero (as a pair: zero in both words) and discards writes.
//! * Each lane has [`Kernel::num_preds`] one-bit predicate registers; [`Pred::PT`] is always true
//!   and discards writes.
//! * Memory is little-endian. Every access is naturally aligned (checked at run time: a
//!   misaligned address is a trap, checked *before* the range check, then an address outside the
//!   space's allocation is a trap). See [`Space`] for the address spaces.
//!
//! # Instruction execution
//!
//! An [`Inst`] runs for every *active* lane of the executing group whose [`Guard`] holds. Each
//! op reads all its sources before writing its destinations (so `IADD3 R0, R0, R0, RZ` doubles
//! R0). Warp-collective ops ([`Op::Vote`], atomics with `spin`) see exactly the lanes that
//! execute them. Atomic ops of one instruction are performed lane by lane in increasing lane
//! order; each lane's read-modify-write is one indivisible host atomic operation.

/// Defines a field-less enum with its `ALL` list, its `COUNT`, and its canonical name (used by
/// the IR printer, statistics and JSON output).
macro_rules! op_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$vmeta:meta])* $variant:ident = $text:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        $vis enum $name { $($(#[$vmeta])* $variant,)* }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];
            /// The number of variants.
            pub const COUNT: usize = $name::ALL.len();
            /// The canonical lower-case name.
            pub fn name(self) -> &'static str {
                match self { $($name::$variant => $text,)* }
            }
            /// The variant whose canonical name is `s`.
            pub fn from_name(s: &str) -> Option<$name> {
                match s { $($text => Some($name::$variant),)* _ => None }
            }
            /// Position in [`Self::ALL`].
            pub fn index(self) -> usize {
                self as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}

pub mod limits;
mod ops;
pub mod print;
mod types;

pub use print::{print_inst, print_kernel, print_program};

pub use limits::{MAX_BLOCK_THREADS, MAX_GRID_X, MAX_GRID_YZ, SHARED_WINDOW_BYTES};
pub use ops::*;
pub use types::*;

/// A parsed program: the kernels of one source file, with what is needed to run and check them.
#[derive(Debug, Clone)]
pub struct Program {
    /// The file name the program was read from (for diagnostics and traps).
    pub source_name: String,
    /// The whole source text; [`Span`]s index into it.
    pub source: String,
    /// Kernels in file order.
    pub kernels: Vec<Kernel>,
}

impl Program {
    /// The kernel called `name`, if any.
    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

/// Which assembly dialect a kernel was written in. Some validation rules are dialect-specific
/// (e.g. SASS register-pair alignment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Dialect {
    /// NVIDIA SASS (Volta–Ampere syntax, `000_*.txt`, `004_*.txt`).
    Sass,
    /// NVIDIA PTX (`001_*.txt`).
    Ptx,
    /// Intel vISA (`002_*.txt`).
    Visa,
}

/// One kernel: its instructions and its launch description.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// The kernel's name (`.kernel NAME`).
    pub name: String,
    pub dialect: Dialect,
    /// Lanes per warp: 32 for SASS and PTX; 8, 16 or 32 for vISA.
    pub warp_size: u32,
    /// Instructions; branch targets are indices into this vector. Execution starts at 0.
    pub insts: Vec<Inst>,
    /// Labels and the instruction index they name, for dumps and diagnostics.
    pub labels: Vec<(String, u32)>,
    /// 32-bit register slots per lane: one more than the highest register (or pair half) used.
    pub num_regs: u32,
    /// Predicate registers per lane: one more than the highest predicate used (`PT` excluded).
    pub num_preds: u32,
    /// Launch shape, memory and expectations declared by the program file.
    pub launch: LaunchSpec,
    /// Where the kernel starts (its `.kernel` line).
    pub span: Span,
}

impl Kernel {
    /// The label naming instruction `pc`, if any.
    pub fn label_at(&self, pc: u32) -> Option<&str> {
        self.labels
            .iter()
            .find(|(_, p)| *p == pc)
            .map(|(n, _)| n.as_str())
    }
}

/// A byte range of the source text, with the 1-based line and column of its start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
    pub line: u32,
    pub col: u32,
}

/// One instruction: an op, its guard, where it came from and the scheduling annotations that
/// came with it.
#[derive(Debug, Clone)]
pub struct Inst {
    pub op: Op,
    /// `@Pn` / `@!Pn`: the lanes for which the guard is false do nothing (not even trap).
    pub guard: Guard,
    /// Where the instruction is in the source.
    pub span: Span,
    /// The instruction's source text without guard-independent decoration (address prefix,
    /// encoding comment, trailing `;`), for traps, watchdog reports and dumps.
    pub text: String,
    /// SASS scheduling annotations (`{&req_6}`, `{&rd0}`, `{&wr1}`, `{?sched}`), kept verbatim
    /// and printed back by the IR dump. They carry no semantics on the host: hardware uses them
    /// for dependency scoreboarding, which a sequential-per-lane host execution already honours.
    pub sched: Vec<String>,
}

/// An instruction guard: execute in lanes where `pred` (negated if `negate`) is true.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Guard {
    pub pred: Pred,
    pub negate: bool,
}

impl Guard {
    /// The guard of an unpredicated instruction (`@PT`).
    pub const ALWAYS: Guard = Guard {
        pred: Pred::PT,
        negate: false,
    };
    /// `@!PT`: the instruction never executes.
    pub fn is_never(&self) -> bool {
        self.pred == Pred::PT && self.negate
    }
    pub fn is_always(&self) -> bool {
        self.pred == Pred::PT && !self.negate
    }
}

/// A 32-bit register slot. `Reg(n)` is `Rn`; [`Reg::RZ`] is the zero register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg(pub u16);

impl Reg {
    /// The zero register: reads 0, writes are discarded. As a pair it reads 0 in both halves.
    pub const RZ: Reg = Reg(u16::MAX);
    pub fn is_rz(self) -> bool {
        self == Reg::RZ
    }
    /// The `i`-th 32-bit word of a multi-word value starting at this register (RZ stays RZ).
    pub fn word(self, i: u16) -> Reg {
        if self.is_rz() {
            self
        } else {
            Reg(self.0 + i)
        }
    }
}

/// A predicate register. `Pred(n)` is `Pn`; [`Pred::PT`] is always true.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Pred(pub u16);

impl Pred {
    /// The true predicate: reads true, writes are discarded.
    pub const PT: Pred = Pred(u16::MAX);
    pub fn is_pt(self) -> bool {
        self == Pred::PT
    }
}

/// A predicate source, possibly negated (`!P0`, `!PT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PredSrc {
    pub pred: Pred,
    pub negate: bool,
}

impl PredSrc {
    pub const TRUE: PredSrc = PredSrc {
        pred: Pred::PT,
        negate: false,
    };
    pub const FALSE: PredSrc = PredSrc {
        pred: Pred::PT,
        negate: true,
    };
}

/// A source operand. Its width is the width of the op's type: 32-bit ops read one word, 64-bit
/// ops read a register pair, an immediate's low 64 bits, or 8 bytes of the constant bank.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A register (the low register of a pair for 64-bit ops).
    Reg(Reg),
    /// An immediate, as raw bits (floats are stored as their IEEE bits; 32-bit ops use the low
    /// 32 bits).
    Imm(u64),
    /// `c[bank][offset]`: a little-endian read of the kernel's constant bank. Only bank 0 exists
    /// (kernel parameters, see [`LaunchSpec`]); validation guarantees `bank == 0`, natural
    /// alignment of `offset`, and that the read lies inside the bank.
    Const { bank: u8, offset: u32 },
}

impl Operand {
    pub const ZERO: Operand = Operand::Reg(Reg::RZ);
}

/// A source operand with a modifier. Modifiers apply in the op's type: `Neg` is two's-complement
/// negation for integers and sign flip for floats, `Not` is bitwise complement, `Abs` absolute
/// value (floats only), `NegAbs` is `-|x|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Src {
    pub operand: Operand,
    pub modifier: SrcMod,
}

impl Src {
    pub fn plain(operand: Operand) -> Src {
        Src {
            operand,
            modifier: SrcMod::None,
        }
    }
}

impl From<Operand> for Src {
    fn from(o: Operand) -> Src {
        Src::plain(o)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SrcMod {
    None,
    Neg,
    Not,
    Abs,
    NegAbs,
}

/// A memory address operand `[base + offset]`.
///
/// The effective address depends on the space and the base width:
/// * Shared (`ATOMS`, `LDS`, `STS` and PTX `.shared` with a 32-bit base): if `base` is `None`
///   or `RZ`, the address is `offset` zero-extended (the `[ImmU24]` form). Otherwise it is the
///   32-bit wrapping sum of the base register and `offset` sign-extended to 32 bits
///   (`[Ra + ImmS24]`), per `000_6d05a8552870c0ae.txt`.
/// * 64-bit bases (`[R2.64 + 0x10]`, PTX `%rd` registers): the 64-bit wrapping sum of the
///   register pair and `offset`.
/// * 32-bit bases in global space: the base is zero-extended to 64 bits, then `offset` added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Address {
    pub base: Option<Reg>,
    /// Width of the base register: 32 or 64.
    pub base_bits: u8,
    pub offset: i64,
}

impl Address {
    /// The absolute address `[imm]`.
    pub fn absolute(offset: i64) -> Address {
        Address {
            base: None,
            base_bits: 32,
            offset,
        }
    }

    /// True when the base is absent or RZ (the absolute `[ImmU24]` form).
    pub fn is_absolute(&self) -> bool {
        self.base.is_none_or(Reg::is_rz)
    }

    /// The effective address given the base register's value (ignored when absolute).
    /// `base_value` holds the zero-extended 32-bit register or the 64-bit pair.
    pub fn effective(&self, space: Space, base_value: u64) -> u64 {
        if self.is_absolute() {
            return match space {
                Space::Shared => self.offset as u64 & 0xffff_ffff,
                _ => self.offset as u64,
            };
        }
        if self.base_bits == 64 {
            base_value.wrapping_add(self.offset as u64)
        } else if space == Space::Shared {
            (base_value as u32).wrapping_add(self.offset as i32 as u32) as u64
        } else {
            (base_value & 0xffff_ffff).wrapping_add(self.offset as u64)
        }
    }
}

/// The ops. Each variant's doc states its exact semantics for one lane.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Does nothing.
    Nop,
    /// `dst = src`, moving `ty.bits()` bits (32 or 64; narrower types move 32 bits).
    Mov { ty: Ty, dst: Reg, src: Operand },
    /// `dst = special register` (32-bit). See [`SpecialReg`].
    ReadSpecial { dst: Reg, sr: SpecialReg },
    /// `dst = op(a)` in type `ty`. See [`UnOp`].
    Unary { op: UnOp, ty: Ty, dst: Reg, a: Src },
    /// `dst = op(a, b)` in type `ty`. See [`BinOp`]. `ftz` flushes subnormal float inputs and
    /// results to sign-preserving zero (float types only). Float results are rounded to nearest
    /// even.
    Binary {
        op: BinOp,
        ty: Ty,
        dst: Reg,
        a: Src,
        b: Src,
        ftz: bool,
    },
    /// SASS `IADD3`: `dst = a + b + c (+ carry_in)` modulo 2^32. If `carry_out[i]` is not PT,
    /// it receives carry number `i` of the three-input sum: the sum is computed in 34 bits and
    /// `carry_out[0]` gets bit 32, `carry_out[1]` bit 33. With `.X`, each `carry_in` predicate
    /// adds 1 when true (the two carry-in predicates of `IADD3.X`; `!PT` means no carry).
    /// Operand modifiers `-` (two's complement) and `~` (complement) apply before the sum.
    /// In the 34-bit sum a negated operand `-x` counts as `~x + 1` without wrapping (i.e.
    /// `2^32 - x`, which is `2^32` for `x = 0`), as the hardware forms a subtraction: so
    /// `IADD3 R0, P0, Ra, -Rb, RZ` sets `P0` exactly when `Ra >= Rb` unsigned (no borrow), and
    /// `IADD3 Rlo, P0, Alo, -Blo, RZ ; IADD3.X Rhi, Ahi, ~Bhi, RZ, P0, !PT` is a 64-bit subtract.
    IAdd3 {
        dst: Reg,
        carry_out: [Pred; 2],
        a: Src,
        b: Src,
        c: Src,
        carry_in: [PredSrc; 2],
    },
    /// `IMAD` family: `dst = a * b + c`.
    /// * `Lo`: 32-bit result, the low 32 bits of the product plus `c` (sign does not matter).
    /// * `Hi`: the high 32 bits of the 64-bit product (signed if `signed`) plus `c`, mod 2^32.
    /// * `Wide`: 64-bit result in the pair `dst`: the 64-bit product of `a` and `b`
    ///   (sign-extended if `signed`, zero-extended otherwise) plus the 64-bit pair `c`.
    Imad {
        mode: ImadMode,
        signed: bool,
        dst: Reg,
        a: Src,
        b: Src,
        c: Src,
    },
    /// SASS `LEA`: `dst = (a << shift) + b` (low 32 bits); `carry_out` (unless PT) receives the
    /// carry of that 32-bit addition.
    /// `LEA.HI`: `dst = hi32(((c:a) << shift)) + b + (carry_in ? 1 : 0)`, where `c:a` is the
    /// 64-bit value with `c` as the high word (with `.SX32`, `c` is the sign of `a`), i.e. the
    /// bits of the 64-bit value shifted out of the low word. `shift` is 0..=31.
    /// In both forms `carry_in` (`.X`; front-ends set `!PT` without it) adds 1 when true and
    /// `carry_out` (unless PT) receives bit 32 of the sum; a negated `b` enters the sum as
    /// `~b + 1` without wrapping, as in [`Op::IAdd3`].
    /// `sx32` (`LEA.HI.SX32`, only with `hi`): the high word is the sign extension of `a`
    /// (`a >> 31` arithmetic) instead of `c`; the front-end sets `c` to RZ.
    Lea {
        hi: bool,
        sx32: bool,
        dst: Reg,
        carry_out: Pred,
        a: Src,
        b: Src,
        c: Src,
        shift: u8,
        carry_in: PredSrc,
    },
    /// SASS `SHF.L`/`SHF.R` funnel shift; see [`ShfInst`].
    Shf(ShfInst),
    /// SASS `LOP3.LUT`: each result bit is `lut[(a<<2)|(b<<1)|c]` of the corresponding bits of
    /// `a`, `b`, `c` (the 8-bit truth table as `0xF0 & 0xCC` style constants: `a = 0xF0`,
    /// `b = 0xCC`, `c = 0xAA`). If `pred_out` is not PT it receives `result != 0`.
    Lop3 {
        dst: Reg,
        pred_out: Pred,
        a: Src,
        b: Src,
        c: Src,
        lut: u8,
    },
    /// Compare and set predicates (`ISETP`, `FSETP`, PTX `setp`):
    /// `r = cmp(a, b)` in type `ty`; `dst = r <combine> c`; `dst2 = !r <combine> c`.
    /// Float comparisons follow IEEE: ordered comparisons are false when either input is NaN,
    /// the unordered forms (`CmpOp::*u`) are true.
    SetP {
        cmp: CmpOp,
        ty: Ty,
        combine: BoolOp,
        dst: Pred,
        dst2: Pred,
        a: Src,
        b: Src,
        c: PredSrc,
    },
    /// Predicate logic (`PLOP3`-like, PTX `and.pred` etc.): `dst = a <op> b`.
    PredLogic {
        op: BoolOp,
        dst: Pred,
        a: PredSrc,
        b: PredSrc,
    },
    /// Move a predicate to a register or back: see [`PredMove`].
    PredMove(PredMove),
    /// `dst = pred ? a : b` moving `ty.bits()` bits.
    Select {
        ty: Ty,
        dst: Reg,
        a: Src,
        b: Src,
        pred: PredSrc,
    },
    /// Type conversion `dst(dst_ty) = convert(a(src_ty))` (`I2F`, `F2I`, PTX `cvt`). Integer to
    /// integer conversions truncate or extend by the source signedness. Integer to float and float
    /// to float round by `round`. Float to integer rounds by `round` (the front-end sets it: SASS
    /// `F2I` defaults to round-to-nearest-even and `.TRUNC` selects toward zero, PTX requires an explicit `.rzi`/`.rni`/...), saturating to the
    /// destination range; NaN converts to 0.
    Convert {
        dst_ty: Ty,
        src_ty: Ty,
        round: Round,
        ftz: bool,
        dst: Reg,
        a: Src,
    },
    /// Warp vote over the lanes executing this instruction: `dst` (unless RZ) receives the
    /// ballot (bit `l` set when lane `l` executes and its `src` is true); `dst_pred` receives
    /// `any`, `all` or `eq` (all equal) of `src` over those lanes.
    Vote {
        mode: VoteMode,
        dst: Reg,
        dst_pred: Pred,
        src: PredSrc,
    },
    /// Load `ty` from `space` at `addr` into `dst` (zero- or sign-extended to 32 bits for
    /// narrower types, a pair for 64-bit types). `order`/`scope` per [`MemOrder`].
    Load {
        space: Space,
        ty: Ty,
        order: MemOrder,
        scope: Scope,
        dst: Reg,
        addr: Address,
    },
    /// Store the low `ty.bits()` bits of `src` to `space` at `addr`.
    Store {
        space: Space,
        ty: Ty,
        order: MemOrder,
        scope: Scope,
        src: Operand,
        addr: Address,
    },
    /// An atomic read-modify-write. See [`AtomicInst`].
    Atomic(Box<AtomicInst>),
    /// A memory fence (`MEMBAR`, PTX `fence`/`membar`).
    Fence { order: MemOrder, scope: Scope },
    /// CTA barrier (`BAR.SYNC id`, PTX `bar.sync`): each executing thread waits until every
    /// non-exited thread of the CTA has arrived at a barrier with this id.
    Barrier { id: u32 },
    /// Branch to instruction `target` in lanes where the guard holds; the others fall through.
    /// `uniform` (PTX `bra.uni`, SASS `BRA.U`) promises the guard is the same in all executing
    /// lanes. It is kept for dumps; backends evaluate the guard per lane regardless, which gives
    /// the same result when the promise holds and well-defined divergence when it does not.
    Branch { target: u32, uniform: bool },
    /// The executing lanes finish.
    Exit,
}

/// `SHF` funnel shifts of the 64-bit value `hi:lo` (`hi` the high word).
///
/// The shifted value is `(hi:lo) << s` with `left`, otherwise `(hi:lo) >> s` (arithmetic,
/// i.e. filling with bit 63, if `ty` is signed). The result is one 32-bit word of it: the high
/// word (bits 63..32) with `high` (`.HI`), otherwise the low word (bits 31..0). The amount `s`
/// is the `shift` operand: for 32-bit types clamped to 32 (SASS `SHF` clamps unless `.W`, i.e.
/// `wrap`, masks it to 0..=31); for 64-bit types masked to 0..=63. So:
/// * `SHF.L.U32 Rd, Ra, 0x2, RZ` is `Ra << 2`; `SHF.L.W.U32.HI Rd, Rlo, s, Rhi` is the PTX
///   funnel shift `shf.l.wrap` (high word of `(Rhi:Rlo) << (s & 31)`);
/// * `SHF.R.U32.HI Rd, RZ, 0x1e, Ra` is `Ra >> 30`; `SHF.R.S32.HI Rd, RZ, 0x1f, Ra` is
///   `Ra >> 31` arithmetic (the sign mask);
/// * `SHF.L.U64.HI Rd, Rlo, s, Rhi` is the high word of the 64-bit `x << s`, `SHF.R.U64 Rd,
///   Rlo, s, Rhi` the low word of `x >> s` and `SHF.R.S64.HI` the high word of `x >> s`
///   arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShfInst {
    pub left: bool,
    pub wrap: bool,
    pub high: bool,
    pub ty: Ty,
    pub dst: Reg,
    pub lo: Src,
    pub shift: Src,
    pub hi: Src,
}

/// An atomic read-modify-write on one memory location per lane.
///
/// For each executing lane in increasing lane order, atomically:
/// `old = M; M = op(M, src, src2); dst = result` where `result` is `old`, except for
/// [`AtomicOp::Cast`] which returns 1 if the store happened and 0 otherwise. The exact `op`
/// formulas are on [`AtomicOp`].
#[derive(Debug, Clone, PartialEq)]
pub struct AtomicInst {
    pub space: Space,
    pub op: AtomicOp,
    pub ty: Ty,
    pub order: MemOrder,
    pub scope: Scope,
    /// The destination (a pair for 64-bit types); RZ for reductions (`RED`, PTX `red`) or when
    /// the result is discarded.
    pub dst: Reg,
    pub addr: Address,
    /// The operand `Rb` (the compare value for CAS/CAST).
    pub src: Operand,
    /// The swap value `Rc` for CAS/CAST (validation guarantees it is present exactly for those
    /// and for `FCmpWr`); for SASS it is `Rb+1`/`Rb+2` or RZ (zero).
    pub src2: Option<Operand>,
    /// `CAST.SPIN`: lanes are grouped by shared-memory bank (`(address / 4) mod 32`); in each
    /// group exactly one executing lane performs its compare-and-store (the lowest lane), the
    /// others return 0 without attempting (`000_6d05a8552870c0ae.txt`, ".SPIN Fast fail").
    pub spin: bool,
    /// Flush subnormal float inputs and results to sign-preserving zero (`.FTZ`; PTX
    /// `atom.add.f32`/`red.add.f32` without `.noftz`). For [`Space::Global`] and
    /// [`Space::Shared`] it applies to every lane. For [`Space::Generic`] it applies only to the
    /// lanes whose address resolves to global memory (`crate::exec::memory::resolve_generic`),
    /// the PTX rule: "The atom.add.f32 operation without .noftz, flushes subnormal inputs and
    /// results to sign-preserving zero on global memory but supports subnormal inputs and
    /// results and doesn't flush them to zero on shared memory."
    pub ftz: bool,
}

/// Special registers readable with [`Op::ReadSpecial`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialReg {
    /// Thread index within the CTA, per dimension.
    TidX,
    TidY,
    TidZ,
    /// CTA index within the grid.
    CtaIdX,
    CtaIdY,
    CtaIdZ,
    /// CTA size (threads) per dimension.
    NTidX,
    NTidY,
    NTidZ,
    /// Grid size (CTAs) per dimension.
    NCtaIdX,
    NCtaIdY,
    NCtaIdZ,
    /// Lane index within the warp.
    LaneId,
    /// Warp index within the CTA.
    WarpId,
    /// Number of warps in the CTA.
    NWarpId,
}

/// Float rounding, integer-conversion rounding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Round {
    /// Round to nearest, ties to even (`.RN`, the default).
    Nearest,
    /// Round toward zero (`.RZ`, `.TRUNC`).
    Zero,
    /// Round toward minus infinity (`.RM`, `.FLOOR`).
    Down,
    /// Round toward plus infinity (`.RP`, `.CEIL`).
    Up,
}

/// `IMAD` result modes; see [`Op::Imad`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ImadMode {
    Lo,
    Hi,
    Wide,
}

/// Warp vote modes; see [`Op::Vote`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VoteMode {
    Any,
    All,
    Eq,
}

/// Moving predicates into registers and back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PredMove {
    /// `dst = src ? 1 : 0` (PTX `selp`-free form, `P2R` of one predicate).
    ToReg { dst: Reg, src: PredSrc },
    /// `dst = (src & mask) != 0` (PTX `setp.ne` shortcut, `R2P` of one bit).
    FromReg { dst: Pred, src: Operand, mask: u32 },
}
