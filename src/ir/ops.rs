//! Operation enums of the IR, each with its complete list (`ALL`) so that parser tables,
//! printing, the interpreter and the JIT coverage tests iterate the same list and a new variant
//! cannot be half-added.

op_enum! {
    /// Atomic read-modify-write operations. `M` is the memory value, `b` the operand (`Rb`),
    /// `c` the second operand (`Rc`), all in the instruction's type; the instruction returns the
    /// old `M` unless stated otherwise.
    pub enum AtomicOp {
        /// `M = M + b` (wrapping for integers; IEEE add rounded to nearest even for floats, per
        /// 16-bit half for `f16x2`/`bf16x2`).
        Add = "add",
        /// `M = M - b` (wrapping).
        Sub = "sub",
        /// `M = min(M, b)`, signed or unsigned by type, IEEE `minNum` for floats (a NaN operand
        /// yields the other operand).
        Min = "min",
        /// `M = max(M, b)`, as `Min`.
        Max = "max",
        /// `M = (M >= b) ? 0 : M + 1` (unsigned; `000_*`, `004_*`).
        Inc = "inc",
        /// `M = (M == 0 || M > b) ? b : M - 1` (unsigned; `000_*`, `004_*`).
        Dec = "dec",
        /// `M = M & b`.
        And = "and",
        /// `M = M | b`.
        Or = "or",
        /// `M = M ^ b`.
        Xor = "xor",
        /// `M = b`.
        Exch = "exch",
        /// `if (M == b) M = c`; returns old `M`.
        Cas = "cas",
        /// `if (M == b) { M = c; result = 1 } else { result = 0 }` (SASS `CAST`).
        Cast = "cast",
        /// Not produced by any front end, and rejected by validation: vISA's `predec` (store
        /// `M - 1`, return the new value) lowers to `Sub` of 1 followed by a decrement of the
        /// returned old value (`src/front/visa/lower/memory.rs`), which needs no op of its own.
        PreDec = "predec",
        /// vISA `fcmpwr`: `if (M == b) M = c` in float comparison (`+0 == -0`, NaN never equal).
        FCmpWr = "fcmpwr",
    }
}

op_enum! {
    /// Unary ALU ops for [`crate::ir::Op::Unary`].
    pub enum UnOp {
        /// Bitwise complement.
        Not = "not",
        /// Two's-complement negation (integers) or sign flip (floats).
        Neg = "neg",
        /// Absolute value (wrapping: `abs(INT_MIN) = INT_MIN`).
        Abs = "abs",
        /// Population count (result is a 32-bit count).
        Popc = "popc",
        /// Count leading zeros (result is a 32-bit count).
        Clz = "clz",
        /// Bit reverse.
        Brev = "brev",
        /// Find the leading one (SASS `FLO`, PTX `bfind`): the bit position of the most
        /// significant 1 (unsigned types) or of the most significant bit that differs from the
        /// sign bit (signed types), as a 32-bit value; `0xffffffff` when there is none.
        Bfind = "bfind",
        /// `FLO.SH` / `bfind.shiftamt`: `bits - 1 - Bfind`, the left shift that brings that bit
        /// to the top; `0xffffffff` when there is none.
        BfindShift = "bfind.shiftamt",
    }
}

op_enum! {
    /// Binary ALU ops for [`crate::ir::Op::Binary`]. Integer ops wrap modulo 2^bits.
    pub enum BinOp {
        /// `a + b` (wrapping; IEEE add rounded to nearest even for floats).
        Add = "add",
        /// `a - b` (wrapping; IEEE subtract for floats).
        Sub = "sub",
        /// Low half of the product.
        Mul = "mul",
        /// High half of the double-width product (signed if the type is signed).
        MulHi = "mulhi",
        /// Double-width product: the destination is twice the type's width (a pair for 32-bit).
        MulWide = "mulwide",
        /// Integer division, rounding toward zero. Division by zero yields all ones (unsigned) or
        /// -1 (signed) as on NVIDIA hardware; `INT_MIN / -1 = INT_MIN`. For `F32`/`F64`: IEEE
        /// division rounded to nearest even (PTX `div.rn`), with `ftz` as for every float op.
        Div = "div",
        /// Integer remainder with the sign of the dividend; `x % 0 = x`.
        Rem = "rem",
        /// Minimum (signed/unsigned by type; IEEE `minNum` for floats).
        Min = "min",
        /// Maximum (signed/unsigned by type; IEEE `maxNum` for floats).
        Max = "max",
        /// Bitwise and.
        And = "and",
        /// Bitwise or.
        Or = "or",
        /// Bitwise exclusive or.
        Xor = "xor",
        /// Left shift; shift amounts `>= bits` give 0.
        Shl = "shl",
        /// Right shift, arithmetic for signed types; amounts `>= bits` give 0 or the sign fill.
        Shr = "shr",
    }
}

op_enum! {
    /// Which halves of a packed pair a source of [`crate::ir::Op::Fma`] reads (the SASS operand
    /// selectors of `HADD2`/`HMUL2`/`HFMA2`: `R2.H0_H0`, `R2.H1_H1`). The selector rearranges
    /// the 32-bit value read; the source modifier then applies to each half (the two commute).
    pub enum HalfSel {
        /// The pair as read: high half in bits 31..16, low half in bits 15..0 (SASS prints no
        /// selector).
        H1H0 = "h1_h0",
        /// The low half in both halves: `(v & 0xffff) * 0x10001`.
        H0H0 = "h0_h0",
        /// The high half in both halves: `(v >> 16) * 0x10001`.
        H1H1 = "h1_h1",
    }
}

impl HalfSel {
    /// Every source reads its pair as it is.
    pub const AS_READ: [HalfSel; 3] = [HalfSel::H1H0; 3];

    /// The 32-bit pair `v` rearranged by the selector.
    pub fn apply(self, v: u32) -> u32 {
        match self {
            HalfSel::H1H0 => v,
            HalfSel::H0H0 => (v & 0xffff) * 0x1_0001,
            HalfSel::H1H1 => (v >> 16) * 0x1_0001,
        }
    }
}

op_enum! {
    /// Comparisons for [`crate::ir::Op::SetP`]. Integer comparisons use the type's signedness.
    /// The `*u` forms are the float unordered comparisons (true if either input is NaN).
    pub enum CmpOp {
        /// `a == b` (ordered for floats: false if either is NaN).
        Eq = "eq",
        /// `a != b` (ordered for floats: false if either is NaN).
        Ne = "ne",
        /// `a < b`.
        Lt = "lt",
        /// `a <= b`.
        Le = "le",
        /// `a > b`.
        Gt = "gt",
        /// `a >= b`.
        Ge = "ge",
        /// `a == b` or unordered.
        Equ = "equ",
        /// `a != b` or unordered.
        Neu = "neu",
        /// `a < b` or unordered.
        Ltu = "ltu",
        /// `a <= b` or unordered.
        Leu = "leu",
        /// `a > b` or unordered.
        Gtu = "gtu",
        /// `a >= b` or unordered.
        Geu = "geu",
        /// Both inputs are numbers (floats only).
        Num = "num",
        /// Either input is NaN (floats only).
        Nan = "nan",
    }
}

op_enum! {
    /// Boolean combining ops for predicates.
    pub enum BoolOp {
        /// Both.
        And = "and",
        /// Either.
        Or = "or",
        /// Exactly one.
        Xor = "xor",
    }
}

op_enum! {
    /// Memory ordering of a memory operation or fence (the PTX memory-model orders of
    /// `001_e732919ae3db9bea.txt`).
    ///
    /// Host lowering on x86-64 (TSO), per `docs/memory-model.md`: weak/relaxed/acquire loads
    /// and weak/relaxed/release stores are plain moves (TSO already orders them; the compiler
    /// must still not reorder across acquire/release); every RMW is a locked instruction
    /// (sequentially consistent, which strengthens any order: allowed by the ABI document);
    /// `SeqCst` fences are `mfence`; acquire/release/acq_rel fences are compiler-only barriers.
    pub enum MemOrder {
        /// Non-atomic (PTX `.weak`, the default for `ld`/`st`; SASS `LDS`/`LDG` without
        /// `.STRONG`).
        Weak = "weak",
        /// `.relaxed` (SASS `.STRONG.<scope>`).
        Relaxed = "relaxed",
        /// `.acquire`: no later access of the thread moves before it.
        Acquire = "acquire",
        /// `.release`: no earlier access of the thread moves after it.
        Release = "release",
        /// `.acq_rel`: both acquire and release.
        AcqRel = "acq_rel",
        /// `.sc` (fences only; `MEMBAR` is `fence.sc`).
        SeqCst = "sc",
        /// PTX `.volatile`: treated as relaxed at system scope.
        Volatile = "volatile",
    }
}

op_enum! {
    /// Thread scope of a memory operation or fence. On one host every scope is coherent; scopes
    /// are validated, kept in the IR and reported, never silently dropped.
    pub enum Scope {
        /// The threads of one CTA.
        Cta = "cta",
        /// The threads of one cluster of CTAs.
        Cluster = "cluster",
        /// Every thread of the device.
        Gpu = "gpu",
        /// Every thread of the system (host included).
        Sys = "sys",
    }
}

op_enum! {
    /// Address spaces.
    pub enum Space {
        /// Grid-wide global memory: one arena; device addresses are
        /// [`crate::ir::GLOBAL_BASE`] `+ offset`.
        Global = "global",
        /// The CTA's shared-memory window: addresses are byte offsets from 0; the window is the
        /// launch's shared size (at most 16 MB, `000_6d05a8552870c0ae.txt`).
        Shared = "shared",
        /// Generic addresses (PTX, and SASS `LD`/`ST`/`ATOM`/`RED`), resolved at run time to
        /// global or shared: the shared window
        /// appears at [`crate::ir::GENERIC_SHARED_BASE`], global addresses are their own
        /// generic addresses ([`crate::ir::resolve`]).
        Generic = "generic",
        /// The constant bank (read only).
        Const = "const",
    }
}

op_enum! {
    /// How [`crate::ir::Op::Shfl`] computes the source lane.
    pub enum ShflMode {
        /// From lane `b` (within the segment).
        Idx = "idx",
        /// From `b` lanes below.
        Up = "up",
        /// From `b` lanes above.
        Down = "down",
        /// From lane `l ^ b`.
        Bfly = "bfly",
    }
}
