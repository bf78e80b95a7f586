//! The syntax tree of a vISA text, with every name resolved (see the module docs of
//! [`super`] for the data model: variables as byte ranges, regions, raw operands).
//!
//! A [`Module`] is one `.visaasm` text: its `.version` and its kernels. A [`Kernel`] owns its
//! variables (the predefined ones first, then the declared ones in declaration order, indexed
//! by [`VarId`]), its payload inputs, attributes, labels and statements. Operands refer to
//! variables by [`VarId`] and already carry the byte offsets the lowering needs: a general
//! operand knows its region origin both within its own variable and within the root storage
//! its alias chain ends in.

use crate::ir::Span;

/// The size of a GRF register (a region "row") in bytes on the platform IGC's corpus targets
/// (TGLLP, Gen12LP). vISA's `V(r,c)` counts rows of this size.
pub const GRF_BYTES: u32 = 32;

/// A whole `.visaasm` text.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    /// `.version MAJOR.MINOR`, if the text has one.
    pub version: Option<Version>,
    /// The kernels (and `.global_function` units) in text order.
    pub kernels: Vec<Kernel>,
}

/// `.version MAJOR.MINOR`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    pub major: u32,
    pub minor: u32,
    pub span: Span,
}

/// What started a unit: `.kernel NAME` or `.global_function NAME`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    Kernel,
    GlobalFunction,
}

/// One kernel (or global function): everything from its `.kernel` directive to the next.
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    pub kind: UnitKind,
    /// The name as written (a string literal's contents, or an identifier).
    pub name: String,
    /// The `.kernel` directive.
    pub span: Span,
    /// Every variable: the predefined general variables (`%null` is [`VarId::NULL`]), the
    /// predefined surfaces, then the declarations in text order.
    pub vars: Vec<Var>,
    /// `.input`, `.parameter` and `.implicit_*` payload declarations, in text order.
    pub inputs: Vec<Input>,
    /// `.kernel_attr` directives, in text order.
    pub attrs: Vec<Attr>,
    /// `.funcdecl "name"` directives (informational in IGC), in text order.
    pub funcdecls: Vec<String>,
    /// Every label: block labels (`name:`) and subroutine labels (`.function NAME`).
    pub labels: Vec<Label>,
    /// The body in text order.
    pub stmts: Vec<Stmt>,
}

impl Kernel {
    /// The variable `id`.
    pub fn var(&self, id: VarId) -> &Var {
        &self.vars[id.0 as usize]
    }
    /// The label `id`.
    pub fn label(&self, id: LabelId) -> &Label {
        &self.labels[id.0 as usize]
    }
    /// The instructions of the body, in order.
    pub fn insts(&self) -> impl Iterator<Item = &Inst> {
        self.stmts.iter().filter_map(|s| match s {
            Stmt::Inst(i) => Some(i),
            Stmt::Label(_) | Stmt::Function { .. } => None,
        })
    }
    /// The variables the text declared (not the predefined ones).
    pub fn declared_vars(&self) -> impl Iterator<Item = &Var> {
        self.vars.iter().filter(|v| v.span.is_some())
    }
    /// The variable named `name` in the kernel scope, if any (inner `{ }` scopes are not
    /// searched: their names are only visible inside them). `V0`..`V20` name the predefined
    /// general variables.
    pub fn find_var(&self, name: &str) -> Option<VarId> {
        let declared = self
            .vars
            .iter()
            .position(|v| v.name == name && v.scope == 0);
        let numbered = || {
            let n: u32 = name.strip_prefix('V')?.parse().ok()?;
            let v = self.vars.get(n as usize)?;
            let predefined = v.general().is_some_and(|g| g.predefined.is_some());
            (predefined && name == format!("V{n}")).then_some(n as usize)
        };
        declared.or_else(numbered).map(|i| VarId(i as u32))
    }
}

/// Index of a variable in [`Kernel::vars`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

impl VarId {
    /// `%null` (V0): the variable that stands for "no operand".
    pub const NULL: VarId = VarId(0);
}

/// A variable: a name bound to storage of one kind.
#[derive(Debug, Clone, PartialEq)]
pub struct Var {
    /// The name operands use (`V0082`, `P1`, `%r0`; for a predefined general variable the
    /// `%` name; its `Vn` number is accepted as a second name).
    pub name: String,
    /// The `.decl` that declared it; `None` for a predefined variable.
    pub span: Option<Span>,
    /// The nesting depth of the `{ }` scope it was declared in (0: the kernel scope).
    pub scope: u32,
    pub kind: VarKind,
    /// `attrs={...}` of the declaration.
    pub attrs: Vec<Attr>,
}

impl Var {
    /// The general variable's facts, if it is one.
    pub fn general(&self) -> Option<&GeneralVar> {
        match &self.kind {
            VarKind::General(g) => Some(g),
            VarKind::Predicate { .. }
            | VarKind::Address { .. }
            | VarKind::Surface { .. }
            | VarKind::Sampler { .. } => None,
        }
    }
}

/// The storage class of a variable (`v_type=G/P/A/T/S`).
#[derive(Debug, Clone, PartialEq)]
pub enum VarKind {
    /// `v_type=G`: a byte range of the thread's GRF space.
    General(GeneralVar),
    /// `v_type=P`: `num_elts` one-bit channel flags (1, 2, 4, 8, 16 or 32).
    Predicate { num_elts: u32 },
    /// `v_type=A`: `num_elts` (1 to 16) 16-bit addresses into general variables.
    Address { num_elts: u32 },
    /// `v_type=T`: a surface handle. `predefined` is the slot T0..T5 of a predefined surface.
    Surface {
        num_elts: u32,
        v_name: Option<String>,
        predefined: Option<u32>,
    },
    /// `v_type=S`: a sampler handle.
    Sampler {
        num_elts: u32,
        v_name: Option<String>,
    },
}

/// A general variable: `num_elts` elements of `ty`, possibly an alias into another one.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneralVar {
    pub ty: ElemType,
    pub num_elts: u32,
    /// `align=` in bytes (`hword` is 32, `wordx32` 64, ...), if given.
    pub align: Option<u32>,
    /// `alias=<V, off>` as written: the variable named and the byte offset.
    pub alias: Option<(VarId, u32)>,
    /// The variable whose storage this one is: itself unless it is an alias, else the end of
    /// the alias chain.
    pub root: VarId,
    /// Where this variable starts in `root`, in bytes (the alias offsets of the chain added).
    pub root_offset: u32,
    /// For a predefined variable, which one.
    pub predefined: Option<Predefined>,
}

impl GeneralVar {
    /// `num_elts × sizeof(ty)`.
    pub fn byte_size(&self) -> u32 {
        self.num_elts * self.ty.size()
    }
}

/// The predefined general variables IGC's vISA 4.x reader binds (`%null` .. `%msg0`, also
/// reachable as `V0` .. `V20`, the numbering the dumps' comment block shows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Predefined {
    Null,
    ThreadX,
    ThreadY,
    GroupIdX,
    GroupIdY,
    GroupIdZ,
    Tsc,
    R0,
    Arg,
    Retval,
    Sp,
    Fp,
    HwId,
    Sr0,
    Cr0,
    Ce0,
    Dbg0,
    Color,
    ImplArgBufPtr,
    LocalIdBufPtr,
    Msg0,
}

/// The element types of vISA (`type=` of a declaration, the suffix of an immediate or an
/// indirect operand).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElemType {
    UD,
    D,
    UW,
    W,
    UB,
    B,
    UQ,
    Q,
    F,
    DF,
    HF,
    BF,
    Bool,
    /// Packed immediates: eight 4-bit signed integers, eight 4-bit unsigned integers, four
    /// 8-bit floats.
    V,
    UV,
    VF,
}

impl ElemType {
    /// The size of one element in bytes (a packed vector immediate is one dword).
    pub fn size(self) -> u32 {
        match self {
            ElemType::UB | ElemType::B | ElemType::Bool => 1,
            ElemType::UW | ElemType::W | ElemType::HF | ElemType::BF => 2,
            ElemType::UD
            | ElemType::D
            | ElemType::F
            | ElemType::V
            | ElemType::UV
            | ElemType::VF => 4,
            ElemType::UQ | ElemType::Q | ElemType::DF => 8,
        }
    }
    /// The name as vISA writes it (lower case).
    pub fn name(self) -> &'static str {
        match self {
            ElemType::UD => "ud",
            ElemType::D => "d",
            ElemType::UW => "uw",
            ElemType::W => "w",
            ElemType::UB => "ub",
            ElemType::B => "b",
            ElemType::UQ => "uq",
            ElemType::Q => "q",
            ElemType::F => "f",
            ElemType::DF => "df",
            ElemType::HF => "hf",
            ElemType::BF => "bf",
            ElemType::Bool => "bool",
            ElemType::V => "v",
            ElemType::UV => "uv",
            ElemType::VF => "vf",
        }
    }
    /// Is it a signed integer type?
    pub fn is_signed_int(self) -> bool {
        matches!(self, ElemType::D | ElemType::W | ElemType::B | ElemType::Q)
    }
    /// Is it a floating-point type?
    pub fn is_float(self) -> bool {
        matches!(
            self,
            ElemType::F | ElemType::DF | ElemType::HF | ElemType::BF
        )
    }
}

/// `.input`, `.parameter` or `.implicit_*`: where the payload puts a variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Input {
    pub kind: InputKind,
    /// The general, surface or sampler variable that receives the value.
    pub var: VarId,
    /// `offset=`: the byte offset in the thread's payload (0 when absent, and for
    /// `.parameter`).
    pub offset: u32,
    /// `size=`: bytes (the variable's size when absent).
    pub size: u32,
    pub span: Span,
}

/// Which payload directive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    /// `.input`: a kernel argument.
    Input,
    /// `.parameter`: a function parameter.
    Parameter,
    /// `.implicit_NAME` (`.implicit_LOCAL_ID`, `.implicit_UNDEFINED_3`...): the directive's
    /// name without the dot.
    Implicit(String),
}

/// `name`, `name=value` or `name="text"` (a `.kernel_attr` or one item of `attrs={...}`).
#[derive(Debug, Clone, PartialEq)]
pub struct Attr {
    pub name: String,
    pub value: AttrValue,
    pub span: Span,
}

/// The value of an attribute.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// No `=` (or nothing after it).
    None,
    Int(i64),
    Str(String),
}

/// Index of a label in [`Kernel::labels`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LabelId(pub u32);

/// A label.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    pub name: String,
    pub kind: LabelKind,
    /// Where it is defined (`name:`, or the `.function` directive).
    pub span: Span,
    /// Its own statement ([`Stmt::Label`] or [`Stmt::Function`]): an index in
    /// [`Kernel::stmts`]; the code it labels follows.
    pub stmt: usize,
}

/// vISA's two label kinds: only block labels are `goto`/`jmp` targets, only subroutine labels
/// are `call` targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelKind {
    Block,
    /// Defined by `.function NAME` (the `NAME:` line after it marks the same label).
    Subroutine,
}

/// One statement of a body.
#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// A block label (`name:`).
    Label(LabelId),
    /// `.function NAME`: the start of a subroutine (its label is `label`).
    Function {
        label: LabelId,
        span: Span,
    },
    Inst(Inst),
}

/// One instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Inst {
    /// From the predicate (or the mnemonic) to the end of the last operand.
    pub span: Span,
    /// `(P)`, `(!P)`, `(P.any)`...
    pub pred: Option<Predicate>,
    /// The mnemonic as written (`add`, `svm_atomic`, `SVM_ATOMIC`, `lsc_load`).
    pub mnemonic: String,
    pub mnemonic_span: Span,
    /// Every `.xxx` after the mnemonic, as written (`eq`, `add`, `64`, `sat`, `E`).
    pub modifiers: Vec<Modifier>,
    /// `.sat` is among the modifiers.
    pub sat: bool,
    /// `(Mk[_NM], N)`, `(NoMask, N)` or `(N)`; `None` for instructions without one (fences,
    /// `svm_block_ld`/`svm_block_st`, whose `(N)` is an oword count).
    pub exec: Option<ExecSize>,
    pub operands: Vec<Operand>,
    /// What the parser decoded beyond the generic shape.
    pub kind: InstKind,
}

/// One `.xxx` modifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Modifier {
    pub text: String,
    pub span: Span,
}

/// What is known about an instruction beyond mnemonic, modifiers and operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InstKind {
    /// `svm_atomic.OP[.16|.32|.64]` (or the document's `SVM_ATOMIC.OP...`): operands are
    /// addresses, dst, src0, src1, all raw.
    SvmAtomic { op: AtomicOp, bits: u32 },
    /// `svm_gather.BLOCK_BYTES.NUM_BLOCKS`: operands addresses, dst (raw).
    SvmGather { block_bytes: u32, num_blocks: u32 },
    /// `svm_scatter.BLOCK_BYTES.NUM_BLOCKS`: operands addresses, src (raw).
    SvmScatter { block_bytes: u32, num_blocks: u32 },
    /// `svm_block_ld (OWORDS)`: operands address (a scalar `uq` source), dst (raw); reads
    /// `16 × owords` bytes whatever the execution mask. `unaligned`: the `.unaligned` modifier
    /// newer IGC prints (IGC 1.0.12504 prints none).
    SvmBlockLd { owords: u32, unaligned: bool },
    /// `svm_block_st (OWORDS)`: operands address, src (raw).
    SvmBlockSt { owords: u32, unaligned: bool },
    /// `cmp.REL`: operands dst (predicate or general), src0, src1.
    Cmp(CmpRel),
    /// `fence_global`, `fence_local`, `fence_sw`, with the option letters' bits (E = commit
    /// 0x1, I 0x2, S 0x4, C 0x8, R 0x10, L1 0x40, as IGC's lexer encodes them).
    Fence { scope: FenceScope, flags: u8 },
    /// Branches with a label operand: `goto`, `jmp`, `call`, `fccall`.
    Branch,
    /// An instruction with a known operand signature and no further decoding (`add`, `mov`,
    /// `ret`...).
    Plain,
    /// An instruction the parser has no signature for: mnemonic, modifiers and operands are
    /// parsed generically, for the lowering to refuse precisely.
    Unknown,
}

/// The memory scope of a `fence_*` instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FenceScope {
    Global,
    Local,
    Sw,
}

/// `cmp`'s relation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpRel {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

/// An `SVM_ATOMIC` operation. Op names are IGC's (`minsint`, `maxsint`) or the document's
/// (`imin`, `imax`, and `predec`, which IGC's text has no name for); both read the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    Add,
    Sub,
    Inc,
    Dec,
    /// Unsigned minimum.
    Min,
    /// Unsigned maximum.
    Max,
    Xchg,
    Cmpxchg,
    And,
    Or,
    Xor,
    /// Signed minimum (`imin`, IGC's `minsint`).
    IMin,
    /// Signed maximum (`imax`, IGC's `maxsint`).
    IMax,
    Predec,
    Fmax,
    Fmin,
    Fcmpwr,
    /// `fadd` and `fsub`: IGC's lexer knows them (for LSC-era atomics); the SVM_ATOMIC
    /// document does not list them.
    Fadd,
    Fsub,
}

impl AtomicOp {
    /// Every op.
    pub const ALL: [AtomicOp; 19] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::Xchg,
        AtomicOp::Cmpxchg,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::IMin,
        AtomicOp::IMax,
        AtomicOp::Predec,
        AtomicOp::Fmax,
        AtomicOp::Fmin,
        AtomicOp::Fcmpwr,
        AtomicOp::Fadd,
        AtomicOp::Fsub,
    ];

    /// IGC's name (`CISAAtomicOpNames`), if it has one.
    pub fn igc_name(self) -> Option<&'static str> {
        Some(match self {
            AtomicOp::Add => "add",
            AtomicOp::Sub => "sub",
            AtomicOp::Inc => "inc",
            AtomicOp::Dec => "dec",
            AtomicOp::Min => "min",
            AtomicOp::Max => "max",
            AtomicOp::Xchg => "xchg",
            AtomicOp::Cmpxchg => "cmpxchg",
            AtomicOp::And => "and",
            AtomicOp::Or => "or",
            AtomicOp::Xor => "xor",
            AtomicOp::IMin => "minsint",
            AtomicOp::IMax => "maxsint",
            AtomicOp::Fmax => "fmax",
            AtomicOp::Fmin => "fmin",
            AtomicOp::Fcmpwr => "fcmpwr",
            AtomicOp::Fadd => "fadd",
            AtomicOp::Fsub => "fsub",
            AtomicOp::Predec => return None,
        })
    }

    /// The SVM_ATOMIC document's name, if it lists the op.
    pub fn doc_name(self) -> Option<&'static str> {
        Some(match self {
            AtomicOp::IMin => "imin",
            AtomicOp::IMax => "imax",
            AtomicOp::Predec => "predec",
            AtomicOp::Fadd | AtomicOp::Fsub => return None,
            AtomicOp::Add
            | AtomicOp::Sub
            | AtomicOp::Inc
            | AtomicOp::Dec
            | AtomicOp::Min
            | AtomicOp::Max
            | AtomicOp::Xchg
            | AtomicOp::Cmpxchg
            | AtomicOp::And
            | AtomicOp::Or
            | AtomicOp::Xor
            | AtomicOp::Fmax
            | AtomicOp::Fmin
            | AtomicOp::Fcmpwr => return self.igc_name(),
        })
    }

    /// The op named `name` in either spelling (exact, lower case).
    pub fn from_name(name: &str) -> Option<AtomicOp> {
        AtomicOp::ALL
            .into_iter()
            .find(|op| op.igc_name() == Some(name) || op.doc_name() == Some(name))
    }
}

/// A predicate guard `([!]P[.any|.all])`.
#[derive(Debug, Clone, PartialEq)]
pub struct Predicate {
    pub var: VarId,
    /// `!`: the channel enables are the inverse of the flags (applied after `.any`/`.all`).
    pub negate: bool,
    pub ctrl: PredCtrl,
    pub span: Span,
}

/// How a predicate's flags combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PredCtrl {
    /// Channel `n` uses flag `n + mask offset`.
    Seq,
    /// Every channel gets "any of the exec-size flags is set".
    Any,
    /// Every channel gets "all of the exec-size flags are set".
    All,
}

/// The execution size and mask control `(Mk[_NM], N)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecSize {
    /// `k` of `Mk`: 1 to 8 (`NoMask` and `(N)` mean 1).
    pub mask_group: u32,
    /// `_NM` (or `NoMask`): the execution mask is ignored; the channel offset still applies.
    pub no_mask: bool,
    /// `N`: 1, 2, 4, 8, 16 or 32.
    pub size: u32,
    pub span: Span,
}

impl ExecSize {
    /// The first channel of the execution mask (and of predicates) the instruction uses:
    /// `4 × (k − 1)` for `Mk`.
    pub fn channel_offset(&self) -> u32 {
        4 * (self.mask_group - 1)
    }
}

/// One operand.
#[derive(Debug, Clone, PartialEq)]
pub struct Operand {
    pub span: Span,
    pub kind: OperandKind,
}

/// The operand forms of vISA text.
#[derive(Debug, Clone, PartialEq)]
pub enum OperandKind {
    /// `[mod]V(r,c)<v;w,h>` (source) or `V(r,c)<h>` (destination).
    General(GeneralOperand),
    /// `[mod]r[A(i),off]<region>:type`.
    Indirect(IndirectOperand),
    /// `V.off`: a contiguous byte range starting `off` bytes into `V` (`%null.0`: none).
    Raw(RawOperand),
    /// `value:type`.
    Imm(Immediate),
    /// A predicate variable named as an operand (`cmp`'s and `setp`'s destination, `mov`'s
    /// source, logic operations on predicates).
    Pred(VarId),
    /// `A(i)<w>`: elements `i..i+w` of an address variable.
    Addr { var: VarId, index: u32, width: u32 },
    /// `&V`, `&V[off]`, `&V+off`: the address of byte `offset` of `V` (a general or surface
    /// variable), with the alias chain folded (`root`, `root_offset`).
    AddrOf {
        var: VarId,
        offset: i64,
        root: VarId,
        root_offset: i64,
    },
    /// `T(i)` or `S(i)`: element `i` of a surface or sampler variable.
    State { var: VarId, index: u32 },
    /// A bare variable name (a surface or sampler operand of an instruction without a
    /// signature, `lifetime.start V`).
    Var(VarId),
    /// A label (branch target), resolved once the whole kernel is read.
    Label(LabelId),
    /// In an instruction without a signature, a run of tokens the parser has no form for
    /// (LSC address and data operands, sampler channel lists...): the source text.
    Other(String),
}

/// A source modifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SrcMod {
    None,
    /// `(-)`
    Neg,
    /// `(abs)`
    Abs,
    /// `(-abs)`
    NegAbs,
    /// `(~)` (logic operations only)
    Not,
}

/// A region: how channels map to elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// `<v;w,h>`: channel `c` reads element `(c / w) × v + (c % w) × h` past the origin.
    Src { v: u32, w: u32, h: u32 },
    /// `<h>`: channel `c` is element `c × h` past the origin.
    Dst { h: u32 },
    /// `<w,h>` (indirect operands only): multi-address; row `i` starts at address element
    /// `i`, channel `c` is element `(c % w) × h` of row `c / w`.
    VxH { w: u32, h: u32 },
}

impl Region {
    /// The element index (past the origin) channel `c` reads or writes. For [`Region::VxH`]
    /// this is the offset within the channel's row only.
    pub fn element(&self, c: u32) -> u32 {
        match *self {
            Region::Src { v, w, h } => (c / w) * v + (c % w) * h,
            Region::Dst { h } => c * h,
            Region::VxH { w, h } => (c % w) * h,
        }
    }
}

/// `[mod]V(r,c)<region>` with its bytes resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneralOperand {
    pub var: VarId,
    /// The declared element type of `var` (the operand's type).
    pub ty: ElemType,
    pub modifier: SrcMod,
    /// `(r,c)` as written ((0,0) when omitted, as in `V<1>`).
    pub row: u32,
    pub col: u32,
    pub region: Region,
    /// The region origin in bytes within `var`: `r × GRF_BYTES + c × sizeof(ty)`.
    pub offset: u32,
    /// `var`'s alias root, and the origin's byte offset within it.
    pub root: VarId,
    pub root_offset: u32,
}

impl GeneralOperand {
    /// The byte offset within `root` of channel `c`: the origin plus
    /// [`Region::element`]`(c) × sizeof(ty)`.
    pub fn channel_byte(&self, c: u32) -> u32 {
        self.root_offset + self.region.element(c) * self.ty.size()
    }
}

/// `[mod]r[A(index), offset]<region>:ty`.
#[derive(Debug, Clone, PartialEq)]
pub struct IndirectOperand {
    /// The address variable and the element of it that holds the address.
    pub addr: VarId,
    pub addr_index: u32,
    /// The byte offset added to the address (-512 to 511).
    pub offset: i32,
    pub region: Region,
    pub ty: ElemType,
    pub modifier: SrcMod,
}

/// `V.off`: bytes of `V` from `offset` on.
#[derive(Debug, Clone, PartialEq)]
pub struct RawOperand {
    /// [`VarId::NULL`] for `%null.0`.
    pub var: VarId,
    /// Bytes into `var`.
    pub offset: u32,
    /// `var`'s declared element type.
    pub ty: ElemType,
    /// `var`'s alias root, and `offset` as a byte offset within it.
    pub root: VarId,
    pub root_offset: u32,
}

impl RawOperand {
    /// Is it `%null.0` (no operand)?
    pub fn is_null(&self) -> bool {
        self.var == VarId::NULL
    }
}

/// A typed immediate `value:ty`, as the bits of one element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Immediate {
    pub ty: ElemType,
    /// The value's bits, in the low `8 × sizeof(ty)` bits (negative integers two's
    /// complement, floats IEEE; `1.5:f` is `0x3fc00000`, `0x3f800000:f` is 1.0).
    pub bits: u64,
}
