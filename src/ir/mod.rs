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
//!   A 128-bit value ([`Ty::B128`], and a 16-byte vector access) lives in a register *quad*
//!   `Rn..Rn+3`, word 0 lowest (SASS: `n` a multiple of 4).
//!   [`Reg::RZ`] reads as zero (as a pair or quad: zero in every word) and discards writes.
//! * Each lane has [`Kernel::num_preds`] one-bit predicate registers; [`Pred::PT`] is always true
//!   and discards writes.
//! * Memory is little-endian. Every access is naturally aligned (a vector access to its whole
//!   size; checked at run time: a misaligned address is a trap, checked *before* the range
//!   check, then an address outside the space's allocation is a trap). See [`Space`] for the
//!   address spaces and [`MemAccess`] for vector accesses.
//!
//! # Instruction execution
//!
//! An [`Inst`] runs for every *active* lane of the executing group whose [`Guard`] holds. Each
//! op reads all its sources before writing its destinations (so `IADD3 R0, R0, R0, RZ` doubles
//! R0). Warp-collective ops ([`Op::Vote`], atomics with `spin`) see exactly the lanes that
//! execute them. Atomic ops of one instruction are performed lane by lane in increasing lane
//! order; each lane's read-modify-write is one indivisible host atomic operation.

#![deny(clippy::wildcard_enum_match_arm)]
#![deny(missing_docs)]

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

mod access;
pub mod build;
mod layout;
pub mod limits;
mod ops;
pub mod print;
pub mod surface;
mod types;
mod uses;

pub use print::{print_inst, print_kernel, print_program};

pub use access::*;
pub use layout::{CbankField, CbankLayout, STACK_TOP};
pub use limits::{MAX_BLOCK_THREADS, MAX_GRID_X, MAX_GRID_YZ, SHARED_WINDOW_BYTES};
pub use ops::*;
pub use types::*;
pub use uses::*;

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
    /// The dialect it was written in (some validation rules are dialect-specific).
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
    /// The warp-wide (uniform) registers and predicates among the slots, see [`Uniform`].
    pub uniform: Uniform,
    /// Launch shape, memory and expectations declared by the program file.
    pub launch: LaunchSpec,
    /// Where the kernel starts (its `.kernel` line).
    pub span: Span,
}

/// Which register and predicate slots are warp-wide: SASS's uniform datapath (`UR0`–`UR62`,
/// `UP0`–`UP6`) has one value per warp, which every lane reads.
///
/// In the IR they are ordinary per-lane slots (front-ends place them after the per-lane
/// registers) with one extra rule: **a write is broadcast**. After an instruction executes,
/// each uniform register word and uniform predicate it wrote takes, in every lane of the warp
/// (executing, diverged or exited), the value that the lowest executing lane wrote. So a
/// uniform value written on one side of a divergent branch is seen by the whole warp, as on
/// the hardware, and an instruction whose inputs differ per lane (`R2UR` of a non-uniform
/// register) delivers its lowest executing lane's result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Uniform {
    /// The uniform register slots (empty when the kernel has none).
    pub regs: std::ops::Range<u16>,
    /// The uniform predicate slots (empty when the kernel has none).
    pub preds: std::ops::Range<u16>,
}

impl Uniform {
    /// Whether register slot `r` is warp-wide.
    pub fn has_reg(&self, r: Reg) -> bool {
        !r.is_rz() && self.regs.contains(&r.0)
    }
    /// Whether predicate slot `p` is warp-wide.
    pub fn has_pred(&self, p: Pred) -> bool {
        !p.is_pt() && self.preds.contains(&p.0)
    }
    /// Whether the kernel has any warp-wide slot.
    pub fn is_empty(&self) -> bool {
        self.regs.is_empty() && self.preds.is_empty()
    }
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
    /// Byte offset of the first byte.
    pub start: u32,
    /// Byte offset one past the last byte.
    pub end: u32,
    /// 1-based line of `start`.
    pub line: u32,
    /// 1-based column (in characters) of `start`.
    pub col: u32,
}

/// One instruction: an op, its guard, where it came from and the scheduling annotations that
/// came with it.
#[derive(Debug, Clone)]
pub struct Inst {
    /// What the instruction does (see [`Op`]).
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
    /// The guard predicate (`PT` for an unpredicated instruction).
    pub pred: Pred,
    /// `@!Pn`: execute where the predicate is false.
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
    /// `@PT`: the instruction executes in every active lane.
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
    /// True for [`Reg::RZ`].
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
    /// True for [`Pred::PT`].
    pub fn is_pt(self) -> bool {
        self == Pred::PT
    }
}

/// A predicate source, possibly negated (`!P0`, `!PT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PredSrc {
    /// The predicate read.
    pub pred: Pred,
    /// Read its complement.
    pub negate: bool,
}

impl PredSrc {
    /// `PT`: always true.
    pub const TRUE: PredSrc = PredSrc {
        pred: Pred::PT,
        negate: false,
    };
    /// `!PT`: always false.
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
    /// `c[bank][offset]`: a little-endian read of one of the kernel's constant banks. Bank 0 is
    /// the launch's (geometry, ABI words and parameters, see [`LaunchSpec`] and
    /// [`CbankLayout`]); any other bank is one of [`LaunchSpec::const_banks`], whose bytes the
    /// kernel's binary fixes ([`ConstBank`]). Validation guarantees that the bank exists, that
    /// `offset` is naturally aligned, and that the read lies inside the bank.
    Const {
        /// The bank: 0, or one of [`LaunchSpec::const_banks`].
        bank: u8,
        /// Byte offset in the bank.
        offset: u32,
    },
}

impl Operand {
    /// `RZ`: reads zero in every width.
    pub const ZERO: Operand = Operand::Reg(Reg::RZ);

    /// The operand `i` registers past this one, for element `i` of a vector access's data
    /// operand (whose elements lie in consecutive registers): `Reg(r.word(i))` (RZ stays RZ); an
    /// immediate or a constant-bank operand is itself (validation admits only registers in
    /// vector accesses).
    pub fn word(self, i: u16) -> Operand {
        match self {
            Operand::Reg(r) => Operand::Reg(r.word(i)),
            other @ (Operand::Imm(_) | Operand::Const { .. }) => other,
        }
    }
}

/// A source operand with a modifier. Modifiers apply in the op's type: `Neg` is two's-complement
/// negation for integers and sign flip for floats, `Not` is bitwise complement, `Abs` absolute
/// value (floats only), `NegAbs` is `-|x|`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Src {
    /// The operand read.
    pub operand: Operand,
    /// The modifier applied to its value.
    pub modifier: SrcMod,
}

impl Src {
    /// `operand` without modifier.
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

/// Source operand modifiers; see [`Src`] for what each means in the op's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SrcMod {
    /// The value as read.
    None,
    /// `-x`: two's-complement negation (integers), sign flip (floats, per element).
    Neg,
    /// `~x`: bitwise complement.
    Not,
    /// `|x|`: absolute value.
    Abs,
    /// `-|x|`.
    NegAbs,
}

/// The ops. Each variant's doc states its exact semantics for one lane.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Op {
    /// Does nothing.
    Nop,
    /// `dst = src`, moving `ty.bits()` bits (32 or 64; narrower types move 32 bits).
    Mov {
        /// The type whose width is moved.
        ty: Ty,
        /// The destination (a pair for 64-bit types).
        dst: Reg,
        /// The source.
        src: Operand,
    },
    /// `dst = special register` (32-bit). See [`SpecialReg`].
    ReadSpecial {
        /// The destination.
        dst: Reg,
        /// The special register read.
        sr: SpecialReg,
    },
    /// `dst = op(a)` in type `ty`. See [`UnOp`].
    Unary {
        /// The operation.
        op: UnOp,
        /// The type it computes in.
        ty: Ty,
        /// The destination ([`UnOp::result_words`] registers).
        dst: Reg,
        /// The operand.
        a: Src,
    },
    /// `dst = op(a, b)` in type `ty`. See [`BinOp`]. `ftz` flushes subnormal float inputs and
    /// results to sign-preserving zero (float types only). Float results are rounded to nearest
    /// even.
    Binary {
        /// The operation.
        op: BinOp,
        /// The type it computes in.
        ty: Ty,
        /// The destination ([`BinOp::result_words`] registers).
        dst: Reg,
        /// The first operand.
        a: Src,
        /// The second operand (one 32-bit word for a shift amount, [`BinOp::b_words`]).
        b: Src,
        /// Flush subnormal inputs and results (float types only).
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
        /// The 32-bit sum.
        dst: Reg,
        /// The carries out (bits 32 and 33 of the sum), or PT.
        carry_out: [Pred; 2],
        /// The first addend.
        a: Src,
        /// The second addend.
        b: Src,
        /// The third addend.
        c: Src,
        /// The carries in of `.X` (`!PT`: none).
        carry_in: [PredSrc; 2],
    },
    /// `IMAD` family: `dst = a * b + c`.
    /// * `Lo`: 32-bit result, the low 32 bits of the product plus `c` (sign does not matter).
    /// * `Hi`: bits 63..32 of the 64-bit product (sign-extended if `signed`) plus the 64-bit
    ///   pair `c`, mod 2^64: `hi32(a * b + c)`. ptxas relies on the pair: `IMAD.MOV.U32 R2,
    ///   RZ, RZ, RZ ; IMAD.HI R4, R3, M, R2` computes `mulhi(R3, M) + R3` with the addend
    ///   `R3:R2 = R3 << 32`.
    /// * `Wide`: 64-bit result in the pair `dst`: the 64-bit product of `a` and `b`
    ///   (sign-extended if `signed`, zero-extended otherwise) plus the 64-bit pair `c`.
    Imad {
        /// Which part of the product, and the result width.
        mode: ImadMode,
        /// Sign-extend the factors (`.HI`, `.WIDE`), rather than zero-extend them.
        signed: bool,
        /// The destination ([`ImadMode::dst_words`] registers).
        dst: Reg,
        /// The first factor.
        a: Src,
        /// The second factor.
        b: Src,
        /// The addend ([`ImadMode::addend_words`] registers).
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
        /// `LEA.HI`: the high word of the shifted 64-bit value.
        hi: bool,
        /// `LEA.HI.SX32`: the high word is the sign extension of `a`.
        sx32: bool,
        /// The 32-bit result.
        dst: Reg,
        /// The carry out of the addition, or PT.
        carry_out: Pred,
        /// The shifted operand (the low word with `hi`).
        a: Src,
        /// The addend.
        b: Src,
        /// The high word with `hi` (RZ otherwise).
        c: Src,
        /// The shift, 0..=31.
        shift: u8,
        /// The carry in of `.X` (`!PT`: none).
        carry_in: PredSrc,
    },
    /// SASS `SHF.L`/`SHF.R` funnel shift; see [`ShfInst`].
    Shf(ShfInst),
    /// SASS `LOP3.LUT`: each result bit is `lut[(a<<2)|(b<<1)|c]` of the corresponding bits of
    /// `a`, `b`, `c` (the 8-bit truth table as `0xF0 & 0xCC` style constants: `a = 0xF0`,
    /// `b = 0xCC`, `c = 0xAA`). If `pred_out` is not PT it receives `result != 0`.
    Lop3 {
        /// The 32-bit result.
        dst: Reg,
        /// Receives `result != 0`, unless PT.
        pred_out: Pred,
        /// The first input (`0xF0` in the table).
        a: Src,
        /// The second input (`0xCC`).
        b: Src,
        /// The third input (`0xAA`).
        c: Src,
        /// The truth table.
        lut: u8,
    },
    /// Compare and set predicates (`ISETP`, `FSETP`, PTX `setp`):
    /// `r = cmp(a, b)` in type `ty`; `dst = r <combine> c`; `dst2 = !r <combine> c`.
    /// With `chain` (SASS `ISETP.EX`, integer types only) `a` and `b` are the high words of a
    /// wider comparison whose low words gave `chain` (the same comparison, unsigned): `r` is
    /// `a == b && chain` for `Eq`, `a != b || chain` for `Ne`, and for the orderings
    /// `strict(a, b) || (a == b && chain)`, where `strict` is `<` for `Lt`/`Le` and `>` for
    /// `Gt`/`Ge`.
    /// Float comparisons follow IEEE: ordered comparisons are false when either input is NaN,
    /// the unordered forms (`CmpOp::*u`) are true.
    SetP {
        /// The comparison.
        cmp: CmpOp,
        /// The type it compares in.
        ty: Ty,
        /// How the result combines with `c`.
        combine: BoolOp,
        /// Receives `r <combine> c`.
        dst: Pred,
        /// Receives `!r <combine> c` (PT: discarded).
        dst2: Pred,
        /// The first operand.
        a: Src,
        /// The second operand.
        b: Src,
        /// The predicate combined with the result (`PT` for a plain compare with `And`).
        c: PredSrc,
        /// `ISETP.EX`: the low words' result of the same comparison.
        chain: Option<PredSrc>,
    },
    /// Predicate logic (`PLOP3`-like, PTX `and.pred` etc.): `dst = a <op> b`.
    PredLogic {
        /// The operation.
        op: BoolOp,
        /// The result.
        dst: Pred,
        /// The first operand.
        a: PredSrc,
        /// The second operand.
        b: PredSrc,
    },
    /// Move a predicate to a register or back: see [`PredMove`].
    PredMove(PredMove),
    /// `dst = pred ? a : b` moving `ty.bits()` bits.
    Select {
        /// The type whose width is moved.
        ty: Ty,
        /// The destination.
        dst: Reg,
        /// The value where `pred` is true.
        a: Src,
        /// The value where `pred` is false.
        b: Src,
        /// The selecting predicate.
        pred: PredSrc,
    },
    /// Type conversion `dst(dst_ty) = convert(a(src_ty))` (`I2F`, `F2I`, PTX `cvt`). Integer to
    /// integer conversions truncate or extend by the source signedness. Integer to float and float
    /// to float round by `round`. Float to integer rounds by `round` (the front-end sets it: SASS
    /// `F2I` defaults to round-to-nearest-even and `.TRUNC` selects toward zero, PTX requires an explicit `.rzi`/`.rni`/...), saturating to the
    /// destination range; NaN converts to 0.
    Convert {
        /// The type converted to.
        dst_ty: Ty,
        /// The type converted from.
        src_ty: Ty,
        /// The rounding of an inexact result.
        round: Round,
        /// Flush a subnormal float input and result.
        ftz: bool,
        /// The destination (`dst_ty.regs()` registers).
        dst: Reg,
        /// The source (`src_ty.regs()` registers), modifier applied in `src_ty`.
        a: Src,
    },
    /// Warp vote over the lanes executing this instruction: `dst` (unless RZ) receives the
    /// ballot (bit `l` set when lane `l` executes and its `src` is true); `dst_pred` receives
    /// `any`, `all` or `eq` (all equal) of `src` over those lanes.
    Vote {
        /// Which verdict `dst_pred` receives.
        mode: VoteMode,
        /// The ballot (RZ: discarded).
        dst: Reg,
        /// The verdict (PT: discarded).
        dst_pred: Pred,
        /// The predicate voted on.
        src: PredSrc,
    },
    /// Load `access.ty` from memory into `dst` (zero- or sign-extended to 32 bits for
    /// narrower types, a pair for 64-bit types); a vector access loads each element into its
    /// registers (element `i` from `dst + i * ty.regs()`). See [`MemAccess`] for the address,
    /// vectors and the order.
    Load {
        /// What is read, where, and in which order.
        access: MemAccess,
        /// The destination ([`MemAccess::words`] registers).
        dst: Reg,
    },
    /// Store the low `access.ty.bits()` bits of `src` to memory; a vector access stores each
    /// element from its registers (`src` is then a register: validation). See [`MemAccess`].
    Store {
        /// What is written, where, and in which order.
        access: MemAccess,
        /// The value stored ([`MemAccess::words`] registers).
        src: Operand,
    },
    /// An atomic read-modify-write. See [`AtomicInst`].
    Atomic(Box<AtomicInst>),
    /// A memory fence (`MEMBAR`, PTX `fence`/`membar`).
    Fence {
        /// The order the fence establishes (acquire, release, acq_rel or sc).
        order: MemOrder,
        /// The threads it orders with.
        scope: Scope,
    },
    /// CTA barrier (`BAR.SYNC id`, PTX `bar.sync`): each executing thread waits until every
    /// non-exited thread of the CTA has arrived at a barrier with this id.
    Barrier {
        /// The barrier, 0..=15.
        id: u32,
    },
    /// Branch to instruction `target` in lanes where the guard holds; the others fall through.
    /// `uniform` (PTX `bra.uni`, SASS `BRA.U`) promises the guard is the same in all executing
    /// lanes. It is kept for dumps; backends evaluate the guard per lane regardless, which gives
    /// the same result when the promise holds and well-defined divergence when it does not.
    Branch {
        /// The instruction index branched to.
        target: u32,
        /// The program's promise that the guard is warp-uniform (kept for dumps).
        uniform: bool,
    },
    /// The executing lanes finish.
    Exit,
    /// SASS `BRA.CONV` / `BRA.DIV`: a branch on whether the warp is converged with respect to
    /// `mask` (one word; its value in the lowest executing lane counts). The warp is converged
    /// when every live lane of `mask` (launched and not exited) is in the group at this
    /// instruction, whatever the guard of each. `BRA.CONV`
    /// (`diverged == false`) branches when it is, `BRA.DIV` when it is not; either way every
    /// executing lane goes the same way, so this branch never splits a group (lanes whose
    /// guard is false fall through as for [`Op::Branch`]). ptxas tests convergence before
    /// `__syncwarp` and the `*_sync` intrinsics, calling a software fallback when the lanes
    /// are not converged; SASS `WARPSYNC mask` is `BRA.DIV mask` to itself (the group waits
    /// there until the scheduler merges the lanes arriving).
    BranchConverged {
        /// The instruction index branched to.
        target: u32,
        /// The lanes that must be converged.
        mask: Src,
        /// `BRA.DIV`: branch when the lanes are *not* converged.
        diverged: bool,
    },
    /// Split the warp by a lane mask (SASS `WARPSYNC.EXCLUSIVE`, and PTX `.sync` instructions
    /// whose membermask is a register): lanes naming the same mask run as their own group
    /// from here to `rejoin`. Let `m` be the smallest value of `mask` (one word) among the
    /// executing lanes and `g` the executing lanes holding it. The group is *complete* when
    /// every live lane (launched, not exited) that `m` names is in the group at this
    /// instruction (whatever its guard, as for [`Op::BranchConverged`]), or when `wait` is
    /// false. Then, if every executing lane is in `g`, the whole group continues at the next
    /// instruction; otherwise the lanes of `g` continue and the group's other lanes (those
    /// whose guard is false included) execute this instruction again, so each distinct mask
    /// ends up running as one group and guard-false lanes continue with the last one. A group
    /// that is not complete executes the instruction again as a whole: it waits here for the
    /// missing lanes, as SASS `WARPSYNC` does (`wait`; PTX, which traps instead, does not
    /// wait). The groups rejoin at instruction `rejoin` (after this instruction): it is this
    /// op's reconvergence point, as the immediate post-dominator is a branch's (see
    /// [`crate::valid::KernelInfo::reconverge`]). The hardware splits a warp this way for
    /// cooperative-groups tiles: `WARPSYNC.EXCLUSIVE` followed by `REDUX` reduces each tile
    /// separately.
    WarpSplit {
        /// The lane mask each lane names.
        mask: Src,
        /// Where the groups rejoin (an instruction index after this one).
        rejoin: u32,
        /// Wait for the live lanes of the smallest mask that are not in the group.
        wait: bool,
    },
    /// Warp shuffle (SASS `SHFL`, PTX `shfl.sync`): each executing lane reads register `a` of
    /// a source lane `j` computed from its own lane id `l`, `b` and `c` exactly as the PTX ISA
    /// defines `shfl.sync`: with `segmask = c[12:8]`, `cval = c[4:0]`, `bval = b[4:0]`,
    /// `max = (l & segmask) | (cval & ~segmask)`, `min = l & segmask`:
    /// `Up`: `j = l - bval`, valid when `j >= max`; `Down`: `j = l + bval`, valid when
    /// `j <= max`; `Bfly`: `j = l ^ bval`, valid when `j <= max`; `Idx`:
    /// `j = min | (bval & ~segmask)`, valid when `j <= max` (all compared as signed integers).
    /// When not valid, `j = l`. `dst` receives lane `j`'s `a` as it was before the
    /// instruction, whether or not lane `j` executes it (PTX leaves reading a lane that does not
    /// execute undefined; atomjit defines it as that lane's current register); `dst_pred`
    /// receives whether `j` was valid.
    Shfl {
        /// How the source lane is computed.
        mode: ShflMode,
        /// The value read from lane `j`.
        dst: Reg,
        /// Whether `j` was in range (PT: discarded).
        dst_pred: Pred,
        /// The register read in lane `j` (one word).
        a: Operand,
        /// The lane index or delta (bits 4:0 used).
        b: Src,
        /// The clamp value in bits 4:0 and the segment mask in bits 12:8.
        c: Src,
    },
    /// Warp reduction over the executing lanes (SASS `REDUX`, PTX `redux.sync`): every executing
    /// lane receives `op` folded over `src` of all executing lanes. `op` is one of `Add`
    /// (wrapping), `Min`, `Max` (compared in `ty`, `U32` or `S32`), `And`, `Or`, `Xor`.
    Redux {
        /// The fold.
        op: BinOp,
        /// `U32` or `S32` (the signedness of `Min`/`Max`).
        ty: Ty,
        /// The result.
        dst: Reg,
        /// The value each lane contributes (one word).
        src: Operand,
    },
    /// Warp match over the executing lanes (SASS `MATCH`, PTX `match.sync`) on the `ty.bits()`
    /// bit value `src` (`B32` or `B64`). `any`: `dst` receives the mask of executing lanes whose
    /// value equals this lane's. `all`: `dst` receives the mask of executing lanes if all their
    /// values are equal, else 0, and `dst_pred` (unless PT) whether they are.
    Match {
        /// `match.all` rather than `match.any`.
        all: bool,
        /// `B32` or `B64`.
        ty: Ty,
        /// The lane mask.
        dst: Reg,
        /// `all`: whether every executing lane holds the same value (PT: discarded).
        dst_pred: Pred,
        /// The value compared.
        src: Operand,
    },
    /// Byte permute in the general selector form (SASS `PRMT`, PTX `prmt.b32` without a
    /// mode; the PTX modes `.f4e` ... `.rc16` are rejected by the front-ends): the eight source
    /// bytes are `b:a` (`a`'s low byte is byte 0, `b`'s high byte byte 7); result byte `i` is
    /// source byte `sel[4i+2 : 4i]`, or, when `sel[4i+3]` is set, that byte's top bit
    /// replicated over all eight bits. `sel[31:16]` is ignored.
    Prmt {
        /// The 32-bit result.
        dst: Reg,
        /// Bytes 0–3.
        a: Src,
        /// Bytes 4–7.
        b: Src,
        /// The selector.
        sel: Src,
    },
    /// Bit-field extract (PTX `bfe`), in `ty` (`U32`, `S32`, `U64`, `S64`): with
    /// `p = pos & 0xff`, `n = len & 0xff` and `w = ty.bits()`, bits `p .. p + n` of `a` (bits
    /// at or above `w` read as the sign bit for signed types, 0 otherwise) moved to bit 0; the
    /// result is sign-extended from its top bit for signed types when `n > 0`, and is 0
    /// (unsigned) or the sign fill of `a` (signed, when `p >= w`) as the PTX ISA specifies:
    /// `n == 0` gives 0.
    Bfe {
        /// The type.
        ty: Ty,
        /// The result (`ty.regs()` registers).
        dst: Reg,
        /// The value extracted from.
        a: Src,
        /// The start bit (one word, bits 7:0 used).
        pos: Src,
        /// The length (one word, bits 7:0 used).
        len: Src,
    },
    /// Bit-field insert (PTX `bfi`), in `ty` (`B32` or `B64`): `base` with bits
    /// `p .. min(p + n, w)` replaced by the low bits of `insert`, where `p = pos & 0xff`,
    /// `n = len & 0xff`, `w = ty.bits()`; `base` unchanged when `n == 0` or `p >= w`.
    Bfi {
        /// The type.
        ty: Ty,
        /// The result (`ty.regs()` registers).
        dst: Reg,
        /// The bits inserted.
        insert: Src,
        /// The value inserted into.
        base: Src,
        /// The start bit (one word, bits 7:0 used).
        pos: Src,
        /// The length (one word, bits 7:0 used).
        len: Src,
    },
    /// Fused multiply-add `dst = a * b + c` in the float type `ty` (`F16x2`, `BF16x2` per
    /// element, `F16`, `BF16`, `F32`, `F64`) with a single rounding by `round` (SASS
    /// `FFMA`/`DFMA`/`HFMA2`, PTX `fma.rn`/`mad.rn` on floats). `ftz` flushes subnormal inputs
    /// and result to sign-preserving zero (F32 only). `halves[i]` selects the halves source `i`
    /// (`a`, `b`, `c`) reads, before its modifier ([`HalfSel`], SASS `R2.H0_H0`); a selector
    /// other than [`HalfSel::H1H0`] is only valid on `F16x2` and `BF16x2`.
    Fma {
        /// The float type.
        ty: Ty,
        /// The result (`ty.regs()` registers).
        dst: Reg,
        /// The first factor.
        a: Src,
        /// The second factor.
        b: Src,
        /// The addend.
        c: Src,
        /// The rounding of the one rounding step.
        round: Round,
        /// Flush subnormal inputs and result (F32 only).
        ftz: bool,
        /// The halves each of `a`, `b`, `c` reads (packed types only).
        halves: [HalfSel; 3],
    },
    /// Whether a generic address lies in a space's window (SASS `QSPC.E.S`; the meaning of PTX
    /// `isspacep.shared`/`.global`, which the PTX front-end does not read yet): `dst` receives
    /// true where `addr`, evaluated as a generic
    /// address, resolves to `space` ([`resolve`]); `space` is [`Space::Shared`] or
    /// [`Space::Global`].
    IsSpace {
        /// The window asked about.
        space: Space,
        /// The result.
        dst: Pred,
        /// The generic address.
        addr: Address,
    },
    /// Two `f32` values rounded to nearest even into one packed pair (SASS
    /// `F2FP.{F16,BF16}.F32.PACK_AB`, PTX `cvt.rn.{f16x2,bf16x2}.f32 d, a, b`): `hi` into the
    /// upper 16 bits of `dst`, `lo` into the lower, each converted as [`Op::Convert`] from
    /// `F32` to the half format of `ty` (`F16x2` or `BF16x2`).
    PackHalves {
        /// `F16x2` or `BF16x2`.
        ty: Ty,
        /// The packed pair.
        dst: Reg,
        /// The value of the upper half (`f32`).
        hi: Src,
        /// The value of the lower half (`f32`).
        lo: Src,
    },
    /// Per-half integer minimum or maximum of two packed 16-bit pairs (SASS
    /// `VIMNMX.{U16x2,S16x2}`, PTX `min`/`max` on `.u16x2`/`.s16x2`): bits 15..0 of `dst` are
    /// `op` (`Min` or `Max`) of bits 15..0 of `a` and `b`, bits 31..16 of `dst` that of bits
    /// 31..16 of `a` and `b`, each half compared as `ty` (`U16` or `S16`). The sources take no
    /// modifier.
    PackedMinMax {
        /// `Min` or `Max`.
        op: BinOp,
        /// The type of each half: `U16` or `S16`.
        ty: Ty,
        /// The packed result.
        dst: Reg,
        /// The first pair.
        a: Src,
        /// The second pair.
        b: Src,
    },
    /// SASS `PLOP3.LUT`: `dst[i] = lut[i][(a<<2)|(b<<1)|c]` of the three predicate inputs
    /// (the truth-table convention of [`Op::Lop3`]: `a = 0xF0`, `b = 0xCC`, `c = 0xAA`).
    PredLut {
        /// The two results (PT: discarded).
        dst: [Pred; 2],
        /// The first input.
        a: PredSrc,
        /// The second input.
        b: PredSrc,
        /// The third input.
        c: PredSrc,
        /// The truth table of each result.
        lut: [u8; 2],
    },
}

/// `SHF` funnel shifts of the 64-bit value `hi:lo` (`hi` the high word).
///
/// The shifted value is `(hi:lo) << s` with `left`, otherwise `(hi:lo) >> s` (arithmetic,
/// i.e. filling with bit 63, if `ty` is signed). The result is one 32-bit word of it: the high
/// word (bits 63..32) with `high` (`.HI`), otherwise the low word (bits 31..0). The amount `s`
/// is the `shift` operand, clamped to the type's width (32 or 64) unless `.W` (`wrap`) masks it
/// to 0..=31 or 0..=63; a shift by 64 gives 0 (the sign fill for an arithmetic right shift).
/// ptxas relies on the clamp: its 64-bit rotate `(x << n) + (x >> (64 - n))` with
/// `SHF.R.U64` is exact for `n = 0` only if the shift by 64 gives 0. So:
/// * `SHF.L.U32 Rd, Ra, 0x2, RZ` is `Ra << 2`; `SHF.L.W.U32.HI Rd, Rlo, s, Rhi` is the PTX
///   funnel shift `shf.l.wrap` (high word of `(Rhi:Rlo) << (s & 31)`);
/// * `SHF.R.U32.HI Rd, RZ, 0x1e, Ra` is `Ra >> 30`; `SHF.R.S32.HI Rd, RZ, 0x1f, Ra` is
///   `Ra >> 31` arithmetic (the sign mask);
/// * `SHF.L.U64.HI Rd, Rlo, s, Rhi` is the high word of the 64-bit `x << s`, `SHF.R.U64 Rd,
///   Rlo, s, Rhi` the low word of `x >> s` and `SHF.R.S64.HI` the high word of `x >> s`
///   arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShfInst {
    /// `.L` (left), else `.R`.
    pub left: bool,
    /// `.W`: the amount is masked to 0..=31 (0..=63 for 64-bit types) instead of clamped to the
    /// width.
    pub wrap: bool,
    /// `.HI`: the result is the high word of the shifted value, else the low word.
    pub high: bool,
    /// `U32`, `S32` (arithmetic right shift), `U64` or `S64`.
    pub ty: Ty,
    /// The 32-bit result.
    pub dst: Reg,
    /// The low word of the shifted value.
    pub lo: Src,
    /// The shift amount.
    pub shift: Src,
    /// The high word of the shifted value.
    pub hi: Src,
}

/// An atomic read-modify-write on one memory location per lane.
///
/// For each executing lane in increasing lane order, atomically:
/// `old = M; M = op(M, src, src2); dst = result` where `result` is `old`, except for
/// [`AtomicOp::Cast`] which returns 1 if the store happened and 0 otherwise. The exact `op`
/// formulas are on [`AtomicOp`].
///
/// * [`Ty::B128`] (`Exch` and `Cas` only): `M`, `src`, `src2` and `dst` are 128-bit values in
///   register quads, and the read-modify-write is one indivisible 16-byte atomic (PTX
///   `atom.cas.b128`/`atom.exch.b128`, SASS `ATOMG.E.CAS.128`), compared bit for bit.
/// * A vector access ([`MemAccess::vector`] `n > 1`: PTX `atom.add.v4.f32`, SASS
///   `REDG.E.ADD.F32x2`) is, after the whole access's alignment and range check, `n`
///   independent atomics in element order, element `i` on the location `i * ty.bytes()` past
///   the address with the operand in `src + i * ty.regs()`, its result to
///   `dst + i * ty.regs()` ("the atomicity is guaranteed separately for each of the individual
///   scalar elements; the entire atom is not guaranteed to be atomic as a single access", PTX
///   ISA). Each element computes exactly as the scalar atomic of `ty` (an `f32` add rounds to
///   nearest even and flushes subnormals as `ftz` says). Validation allows vectors of `Add`
///   on `F32` and of `Add`, `Min`, `Max` on the 16-bit float types and their packed pairs, in
///   the global space or a generic address; a generic vector atomic whose address does not
///   resolve to global memory is out of range (a trap naming the generic address): "atom with
///   vector type may be used only with .global space and with generic addressing where the
///   address points to .global space". `src` is a register; there is no `src2`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AtomicInst {
    /// Where the read-modify-write lands, its type (the type of `M`, `b` and `c`), order and
    /// scope.
    pub access: MemAccess,
    /// The operation.
    pub op: AtomicOp,
    /// The destination ([`MemAccess::words`] registers: a pair for 64-bit types, a quad for
    /// `B128`); RZ for reductions (`RED`, PTX `red`) or when the result is discarded.
    pub dst: Reg,
    /// The operand `Rb` (the compare value for CAS/CAST).
    pub src: Operand,
    /// The swap value `Rc` for CAS/CAST (validation guarantees it is present exactly for those
    /// and for `FCmpWr`); for SASS up to sm_89 it is `Rb+1`/`Rb+2` or RZ (zero), on sm_90 any
    /// register.
    pub src2: Option<Operand>,
    /// `CAST.SPIN`: lanes are grouped by shared-memory bank (`(address / 4) mod 32`); in each
    /// group exactly one executing lane performs its compare-and-store (the lowest lane), the
    /// others return 0 without attempting (`000_6d05a8552870c0ae.txt`, ".SPIN Fast fail").
    /// Shared or generic space only (SASS `ATOM.E.CAST.SPIN`); for a generic address the bank
    /// is computed from the generic address, which gives the shared offset's bank because
    /// [`GENERIC_SHARED_BASE`] is a multiple of 128.
    pub spin: bool,
    /// Flush subnormal float inputs and results to sign-preserving zero (`.FTZ`; PTX
    /// `atom.add.f32`/`red.add.f32` without `.noftz`). For [`Space::Global`] and
    /// [`Space::Shared`] it applies to every lane. For [`Space::Generic`] it applies only to the
    /// lanes whose address resolves to global memory ([`resolve`]),
    /// the PTX rule: "The atom.add.f32 operation without .noftz, flushes subnormal inputs and
    /// results to sign-preserving zero on global memory but supports subnormal inputs and
    /// results and doesn't flush them to zero on shared memory."
    pub ftz: bool,
    /// SASS's predicate destination of `ATOM`/`ATOMG` (`ATOM.E.ADD.64 P0, RZ, [R6.64], R4`):
    /// unless PT, it receives true in every executing lane. The hardware sets it when the
    /// memory system performed the operation, and ptxas follows a false result with a
    /// fallback (a CAS loop in shared memory for a generic address in the shared window);
    /// atomjit performs every form atomically at every address, so the fallback is never
    /// needed and the predicate is always true.
    pub performed: Pred,
}

/// Special registers readable with [`Op::ReadSpecial`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialReg {
    /// Thread index within the CTA, per dimension.
    TidX,
    /// Thread index, y.
    TidY,
    /// Thread index, z.
    TidZ,
    /// CTA index within the grid.
    CtaIdX,
    /// CTA index, y.
    CtaIdY,
    /// CTA index, z.
    CtaIdZ,
    /// CTA size (threads) per dimension.
    NTidX,
    /// CTA size, y.
    NTidY,
    /// CTA size, z.
    NTidZ,
    /// Grid size (CTAs) per dimension.
    NCtaIdX,
    /// Grid size, y.
    NCtaIdY,
    /// Grid size, z.
    NCtaIdZ,
    /// Lane index within the warp.
    LaneId,
    /// Warp index within the CTA.
    WarpId,
    /// Number of warps in the CTA.
    NWarpId,
    /// `SR_EQMASK` / `%lanemask_eq`: the bit of this lane.
    LanemaskEq,
    /// `SR_LTMASK` / `%lanemask_lt`: the bits of the lanes below this one.
    LanemaskLt,
    /// `SR_LEMASK` / `%lanemask_le`: this lane's bit and the bits below it.
    LanemaskLe,
    /// `SR_GTMASK` / `%lanemask_gt`: the bits of the lanes above this one.
    LanemaskGt,
    /// `SR_GEMASK` / `%lanemask_ge`: this lane's bit and the bits above it.
    LanemaskGe,
    /// `SR_CgaCtaId`: the CTA's rank in its cluster (cooperative grid array). atomjit launches
    /// clusters of one CTA, so this is 0.
    ClusterCtaRank,
    /// `SR_SWINHI`: the high 32 bits of the generic address of the CTA's shared window
    /// (`GENERIC_SHARED_BASE >> 32`; its low word is 0).
    SharedWindowHi,
}

impl SpecialReg {
    /// The value of a register that is the same constant in every launch: the CTA's rank in
    /// its cluster (atomjit launches clusters of one CTA) and the high word of the shared
    /// window's generic address ([`GENERIC_SHARED_BASE`]); `None` for every other register.
    pub fn constant_value(self) -> Option<u32> {
        match self {
            SpecialReg::ClusterCtaRank => Some(0),
            SpecialReg::SharedWindowHi => Some((GENERIC_SHARED_BASE >> 32) as u32),
            SpecialReg::TidX
            | SpecialReg::TidY
            | SpecialReg::TidZ
            | SpecialReg::LaneId
            | SpecialReg::CtaIdX
            | SpecialReg::CtaIdY
            | SpecialReg::CtaIdZ
            | SpecialReg::NTidX
            | SpecialReg::NTidY
            | SpecialReg::NTidZ
            | SpecialReg::NCtaIdX
            | SpecialReg::NCtaIdY
            | SpecialReg::NCtaIdZ
            | SpecialReg::WarpId
            | SpecialReg::NWarpId
            | SpecialReg::LanemaskEq
            | SpecialReg::LanemaskLt
            | SpecialReg::LanemaskLe
            | SpecialReg::LanemaskGt
            | SpecialReg::LanemaskGe => None,
        }
    }

    /// Whether every lane of a warp reads the same value, at any time during a launch: the
    /// CTA's and grid's geometry, the CTA's index and rank, the warp's index, the shared
    /// window. Thread and lane indices and lane masks differ per lane.
    pub fn is_warp_uniform(self) -> bool {
        match self {
            SpecialReg::CtaIdX
            | SpecialReg::CtaIdY
            | SpecialReg::CtaIdZ
            | SpecialReg::NTidX
            | SpecialReg::NTidY
            | SpecialReg::NTidZ
            | SpecialReg::NCtaIdX
            | SpecialReg::NCtaIdY
            | SpecialReg::NCtaIdZ
            | SpecialReg::WarpId
            | SpecialReg::NWarpId
            | SpecialReg::ClusterCtaRank
            | SpecialReg::SharedWindowHi => true,
            SpecialReg::TidX
            | SpecialReg::TidY
            | SpecialReg::TidZ
            | SpecialReg::LaneId
            | SpecialReg::LanemaskEq
            | SpecialReg::LanemaskLt
            | SpecialReg::LanemaskLe
            | SpecialReg::LanemaskGt
            | SpecialReg::LanemaskGe => false,
        }
    }
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
    /// The low 32 bits of the product, plus `c`.
    Lo,
    /// The high 32 bits of the 64-bit product plus the 64-bit `c`.
    Hi,
    /// The 64-bit product plus the 64-bit `c`.
    Wide,
}

/// Warp vote modes; see [`Op::Vote`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VoteMode {
    /// True if `src` holds in any executing lane.
    Any,
    /// True if `src` holds in every executing lane.
    All,
    /// True if `src` is the same in every executing lane.
    Eq,
}

/// Moving predicates into registers and back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PredMove {
    /// `dst = src ? 1 : 0` (PTX `selp`-free form, `P2R` of one predicate).
    ToReg {
        /// The register receiving 0 or 1.
        dst: Reg,
        /// The predicate read.
        src: PredSrc,
    },
    /// `dst = (src & mask) != 0` (PTX `setp.ne` shortcut, `R2P` of one bit).
    FromReg {
        /// The predicate written.
        dst: Pred,
        /// The register read.
        src: Operand,
        /// The bits tested.
        mask: u32,
    },
}
