//! PTX instructions and their lowering to IR ops.
//!
//! An instruction is `{@{!}p} opcode{.qualifier...} operands;`. Qualifiers are matched by
//! *group* (a memory order, a scope, a space, an operation, a type ...) in any order, at most
//! one per group; every qualifier must be consumed by the instruction's lowering, so an unknown
//! or misplaced one is an error, never dropped. Types are positional (`cvt.u64.u32`: the
//! destination type first).
//!
//! Each PTX instruction becomes one IR op, or a short sequence through the front-end's scratch
//! registers when the IR has no single op for it (`mad` on 16/64-bit types, `mul24`, `mad24`,
//! `cnot`, vector packing in `mov`). Every op of a sequence carries the instruction's guard,
//! span and text.
//!
//! What each instruction becomes is documented at its `lower_*` function; the qualifiers that
//! are accepted but change nothing on the host (cache operators, `.aligned`, `.uni`) say why
//! there.

use super::super::lexer::{sub_span, SyntaxError, Token};
use super::super::program::ByName;
use super::globals::{EntryGlobals, GlobalTable};
use super::operands::{Literal, Operand, SPECIAL_REGISTERS};
use super::regs::UNSUPPORTED_TYPES;
use super::regs::{register_type, type_name, EntryParam, Kind, RegFile, RegRef, SharedLayout};
use crate::ir::{
    Address, AtomicInst, AtomicOp, BinOp, BoolOp, CmpOp, Guard, ImadMode, LinearAddress, MemAccess,
    MemOrder, Op, Operand as IrOp, Pred, PredSrc, Reg, Round, Scope, ShfInst, ShflMode, Space,
    Span, SpecialReg, Src, Ty, UnOp, VoteMode, GENERIC_SHARED_BASE, PARAM_BASE,
};

mod bits;
mod surface;
pub mod warp;

/// The result of lowering one instruction: its ops, and for `bra` the label to resolve.
#[derive(Debug, Clone)]
pub struct Lowered {
    /// The ops, in order. An [`Op::WarpSplit`]'s `rejoin` counts from the first of them.
    pub ops: Vec<Op>,
    /// `bra LABEL`: the single op is a `Branch` whose target is filled in once every label of
    /// the entry is known.
    pub label: Option<(String, Span)>,
    /// Ops that do not take the instruction's guard and text: op index, its own guard, a note
    /// appended to its text (the membermask check of `.sync` instructions, see `warp`).
    pub overrides: Vec<(usize, Guard, &'static str)>,
}

impl Lowered {
    fn ops(ops: Vec<Op>) -> Result<Lowered, SyntaxError> {
        Ok(Lowered {
            ops,
            label: None,
            overrides: Vec::new(),
        })
    }
    fn one(op: Op) -> Result<Lowered, SyntaxError> {
        Lowered::ops(vec![op])
    }
}

/// What an instruction can refer to.
pub struct Lowerer<'k> {
    pub regs: &'k mut RegFile,
    pub shared: &'k SharedLayout,
    pub params: &'k ByName<'k, EntryParam>,
    /// The module's `.global`/`.const` variables, and those this entry uses.
    pub table: &'k GlobalTable,
    pub globals: &'k mut EntryGlobals,
    /// The `sm_XX` number of the module's `.target` (some instructions need a newer one).
    pub target: u32,
    /// The whole statement, for errors about it as a whole.
    pub span: Span,
}

/// The opcodes this front-end lowers.
pub const OPCODES: &[&str] = &[
    "mov",
    "ld",
    "st",
    "cvta",
    "add",
    "sub",
    "mul",
    "mad",
    "mul24",
    "mad24",
    "div",
    "rem",
    "min",
    "max",
    "abs",
    "neg",
    "and",
    "or",
    "xor",
    "not",
    "cnot",
    "shl",
    "shr",
    "popc",
    "clz",
    "brev",
    "lop3",
    "setp",
    "selp",
    "cvt",
    "bra",
    "bar",
    "barrier",
    "ret",
    "exit",
    "membar",
    "fence",
    "atom",
    "red",
    "nanosleep",
    "sured",
    "suld",
    "sust",
    "shf",
    "prmt",
    "bfe",
    "bfi",
    "bfind",
    "fma",
    "activemask",
    "vote",
    "shfl",
    "match",
    "redux",
    "call",
];

// ---------------------------------------------------------------------------------------------
// Qualifiers

/// The qualifiers of one mnemonic, each consumed at most once.
struct Quals {
    opcode: String,
    opcode_span: Span,
    items: Vec<(String, Span)>,
    used: Vec<bool>,
}

impl Quals {
    fn parse(tok: &Token) -> Result<Quals, SyntaxError> {
        let mut parts = Vec::new();
        let mut offset = 0;
        for part in tok.text.split('.') {
            let span = sub_span(tok.span, offset, offset + part.len());
            if part.is_empty() {
                return Err(SyntaxError::new(span, "empty qualifier")
                    .expected("a qualifier name after `.`"));
            }
            parts.push((part.to_string(), span));
            offset += part.len() + 1;
        }
        let (opcode, opcode_span) = parts.remove(0);
        let used = vec![false; parts.len()];
        Ok(Quals {
            opcode,
            opcode_span,
            items: parts,
            used,
        })
    }

    /// Consumes `.name` if present (an error if it is given twice).
    fn has(&mut self, name: &str) -> Result<bool, SyntaxError> {
        Ok(self.one_of(name, &[name])?.is_some())
    }

    /// Consumes the qualifier of a group: at most one of `choices`.
    fn one_of(
        &mut self,
        what: &str,
        choices: &[&str],
    ) -> Result<Option<(String, Span)>, SyntaxError> {
        let mut found: Option<(String, Span)> = None;
        for (i, (q, span)) in self.items.iter().enumerate() {
            if self.used[i] || !choices.contains(&q.as_str()) {
                continue;
            }
            if let Some((prev, _)) = &found {
                return Err(SyntaxError::new(
                    *span,
                    format!(
                        "`{}` takes one {what}: `.{prev}` and `.{q}` conflict",
                        self.opcode
                    ),
                )
                .expected(format!("one of {}", dotted(choices))));
            }
            found = Some((q.clone(), *span));
            self.used[i] = true;
        }
        Ok(found)
    }

    /// Consumes every type qualifier, in order.
    fn types(&mut self) -> Result<Vec<(Kind, Span)>, SyntaxError> {
        let mut out = Vec::new();
        for (i, (q, span)) in self.items.iter().enumerate() {
            if self.used[i] {
                continue;
            }
            if q == "pred" {
                out.push((Kind::Pred, *span));
            } else if let Some(ty) = register_type(q) {
                out.push((Kind::Value(ty), *span));
            } else if UNSUPPORTED_TYPES.contains(&q.as_str()) {
                return Err(SyntaxError::new(
                    *span,
                    format!("the type `.{q}` is not supported by atomjit"),
                )
                .expected(
                    "b8..b128, u8..u64, s8..s64, f16, bf16, f16x2, bf16x2, f32, f64 or pred",
                ));
            } else {
                continue;
            }
            self.used[i] = true;
        }
        Ok(out)
    }

    /// The single value type of the instruction, which must be one of `allowed`.
    fn one_type(&mut self, allowed: &[Ty]) -> Result<Ty, SyntaxError> {
        let tys = self.types()?;
        let names = || {
            allowed
                .iter()
                .map(|t| format!(".{}", type_name(*t)))
                .collect::<Vec<_>>()
                .join(" ")
        };
        match tys.as_slice() {
            [(Kind::Value(ty), span)] => {
                if allowed.contains(ty) {
                    Ok(*ty)
                } else {
                    Err(SyntaxError::new(
                        *span,
                        format!(
                            "`{}` does not take the type `.{}`",
                            self.opcode,
                            type_name(*ty)
                        ),
                    )
                    .expected(names()))
                }
            }
            [(Kind::Pred, span)] => Err(SyntaxError::new(
                *span,
                format!("`{}` does not take the type `.pred`", self.opcode),
            )
            .expected(names())),
            [] => Err(SyntaxError::new(
                self.opcode_span,
                format!("`{}` needs a type qualifier", self.opcode),
            )
            .expected(names())),
            [_, (_, span), ..] => Err(SyntaxError::new(
                *span,
                format!("`{}` takes one type qualifier", self.opcode),
            )),
        }
    }

    /// Fails on the first qualifier nobody consumed.
    fn finish(&self) -> Result<(), SyntaxError> {
        for (i, (q, span)) in self.items.iter().enumerate() {
            if !self.used[i] {
                return Err(SyntaxError::new(
                    *span,
                    format!("`.{q}` is not a valid qualifier of `{}` here", self.opcode),
                )
                .expected(format!("the qualifiers of `{}` (PTX ISA)", self.opcode)));
            }
        }
        Ok(())
    }

    /// An error about a qualifier that PTX defines but atomjit does not implement.
    fn unsupported(&self, span: Span, what: &str) -> SyntaxError {
        SyntaxError::new(span, format!("`{}`: {what}", self.opcode))
    }
}

fn dotted(choices: &[&str]) -> String {
    choices
        .iter()
        .map(|c| format!(".{c}"))
        .collect::<Vec<_>>()
        .join(" ")
}

const SCOPES: &[&str] = &["cta", "cluster", "gpu", "sys"];
const INTS: &[Ty] = &[Ty::U16, Ty::S16, Ty::U32, Ty::S32, Ty::U64, Ty::S64];
const BITS: &[Ty] = &[Ty::B16, Ty::B32, Ty::B64];

fn scope_of(name: &str) -> Scope {
    match name {
        "cta" => Scope::Cta,
        "cluster" => Scope::Cluster,
        "sys" => Scope::Sys,
        _ => Scope::Gpu,
    }
}

/// The IR rounding of a PTX rounding qualifier (`.rn`/`.rni` and anything else: nearest).
fn round_of(r: &str) -> Round {
    match r {
        "rz" | "rzi" => Round::Zero,
        "rm" | "rmi" => Round::Down,
        "rp" | "rpi" => Round::Up,
        _ => Round::Nearest,
    }
}

fn with(list: &[Ty], more: &[Ty]) -> Vec<Ty> {
    list.iter().chain(more).copied().collect()
}

// ---------------------------------------------------------------------------------------------
// Operands

fn count(q: &Quals, ops: &[Operand], n: usize, form: &str, end: Span) -> Result<(), SyntaxError> {
    if ops.len() == n {
        return Ok(());
    }
    let span = ops.get(n).map(|o| o.span()).unwrap_or(end);
    Err(SyntaxError::new(
        span,
        format!(
            "`{}` takes {n} operand{} ({form}), found {}",
            q.opcode,
            if n == 1 { "" } else { "s" },
            ops.len()
        ),
    )
    .expected(form.to_string()))
}

/// The IR special register of a PTX special register name.
fn special(name: &str) -> Option<SpecialReg> {
    Some(match name {
        "%tid.x" => SpecialReg::TidX,
        "%tid.y" => SpecialReg::TidY,
        "%tid.z" => SpecialReg::TidZ,
        "%ntid.x" => SpecialReg::NTidX,
        "%ntid.y" => SpecialReg::NTidY,
        "%ntid.z" => SpecialReg::NTidZ,
        "%ctaid.x" => SpecialReg::CtaIdX,
        "%ctaid.y" => SpecialReg::CtaIdY,
        "%ctaid.z" => SpecialReg::CtaIdZ,
        "%nctaid.x" => SpecialReg::NCtaIdX,
        "%nctaid.y" => SpecialReg::NCtaIdY,
        "%nctaid.z" => SpecialReg::NCtaIdZ,
        "%laneid" => SpecialReg::LaneId,
        "%warpid" => SpecialReg::WarpId,
        "%nwarpid" => SpecialReg::NWarpId,
        "%lanemask_eq" => SpecialReg::LanemaskEq,
        "%lanemask_lt" => SpecialReg::LanemaskLt,
        "%lanemask_le" => SpecialReg::LanemaskLe,
        "%lanemask_gt" => SpecialReg::LanemaskGt,
        "%lanemask_ge" => SpecialReg::LanemaskGe,
        _ => return None,
    })
}

/// Encodes a literal as the raw bits of an operand of type `ty` (PTX ISA "Constants"): an
/// integer must fit the type's width (negative values in two's complement); `0f`/`0d`
/// literals are raw bits for integer types of their width and converted for float types; a
/// decimal float only fits float types (rounded to nearest even).
pub fn literal_bits(lit: Literal, ty: Ty, span: Span) -> Result<u64, SyntaxError> {
    if ty == Ty::B128 {
        // ptxas takes `mov.b128 %q, 5`, but PTX literals are 64-bit and the ISA does not say
        // how one widens to 128 bits: atomjit takes .b128 values in registers only.
        return Err(SyntaxError::new(
            span,
            "a literal cannot be a .b128 operand in atomjit (PTX literals are 64-bit; build the value with `mov.b128 %q, {lo, hi}`)",
        )
        .expected("a .b128 register"));
    }
    let bits = ty.bits();
    let mask = u64::MAX >> (64 - bits);
    let err = |m: String| Err(SyntaxError::new(span, m));
    let float_value = |v: f64| -> Result<u64, SyntaxError> {
        Ok(match ty {
            Ty::F32 => (v as f32).to_bits() as u64,
            Ty::F64 => v.to_bits(),
            Ty::F16 => half::f16::from_f64(v).to_bits() as u64,
            Ty::BF16 => half::bf16::from_f64(v).to_bits() as u64,
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
            | Ty::B128
            | Ty::F16x2
            | Ty::BF16x2 => {
                return Err(SyntaxError::new(
                    span,
                    format!("a float literal cannot be a .{} operand", type_name(ty)),
                ))
            }
        })
    };
    match lit {
        Literal::Int { value, negative } => {
            if ty.is_float() && !matches!(ty, Ty::F16x2 | Ty::BF16x2) {
                let v = value as f64;
                return float_value(if negative { -v } else { v });
            }
            let limit = if bits == 64 { u64::MAX } else { mask };
            let ok = if negative {
                bits == 64 && value <= 1u64 << 63 || bits < 64 && value <= 1u64 << (bits - 1)
            } else {
                value <= limit
            };
            if !ok {
                return err(format!(
                    "the literal {}{value} does not fit a {bits}-bit .{} operand",
                    if negative { "-" } else { "" },
                    type_name(ty)
                ));
            }
            Ok(if negative {
                value.wrapping_neg() & mask
            } else {
                value
            })
        }
        Literal::F32Bits { bits: b, negative } => {
            let b = if negative { b ^ 0x8000_0000 } else { b };
            match ty {
                Ty::F64 => Ok((f32::from_bits(b) as f64).to_bits()),
                Ty::F32 | Ty::B32 | Ty::U32 | Ty::S32 => Ok(b as u64),
                Ty::U8
                | Ty::U16
                | Ty::U64
                | Ty::S8
                | Ty::S16
                | Ty::S64
                | Ty::B16
                | Ty::B64
                | Ty::F16
                | Ty::BF16
                | Ty::F16x2
                | Ty::BF16x2
                | Ty::B128 => float_value(f32::from_bits(b) as f64).or_else(|_| {
                    err(format!(
                        "a 0f literal cannot be a .{} operand",
                        type_name(ty)
                    ))
                }),
            }
        }
        Literal::F64Bits { bits: b, negative } => {
            let b = if negative { b ^ (1 << 63) } else { b };
            match ty {
                Ty::F64 | Ty::B64 | Ty::U64 | Ty::S64 => Ok(b),
                Ty::U8
                | Ty::U16
                | Ty::U32
                | Ty::S8
                | Ty::S16
                | Ty::S32
                | Ty::B16
                | Ty::B32
                | Ty::F16
                | Ty::BF16
                | Ty::F32
                | Ty::F16x2
                | Ty::BF16x2
                | Ty::B128 => float_value(f64::from_bits(b)).or_else(|_| {
                    err(format!(
                        "a 0d literal cannot be a .{} operand",
                        type_name(ty)
                    ))
                }),
            }
        }
        Literal::Float(v) => float_value(v),
    }
}

/// How an operand's register width must relate to the instruction type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Width {
    /// Exactly the type's width.
    Exact,
    /// The type's width or a wider register of at most 32 bits (`ld`, `st`, `cvt`: "permit
    /// source and destination data operands to be wider than the instruction-type size"; the
    /// IR extends narrow values to the 32-bit slot by signedness, as PTX does).
    WiderTo32,
}

impl Lowerer<'_> {
    /// A value register operand: its slot and declared type.
    fn value_reg(&mut self, o: &Operand) -> Result<(Reg, Ty, Span), SyntaxError> {
        match o {
            Operand::Name {
                name,
                negate: false,
                span,
            } => match self.regs.lookup(name, *span)? {
                RegRef::Value { reg, ty } => Ok((reg, ty, *span)),
                RegRef::Pred(_) => Err(SyntaxError::new(
                    *span,
                    format!("`{name}` is a predicate, not a value register"),
                )
                .expected("a value register")),
                RegRef::Param { .. } => Err(SyntaxError::new(
                    *span,
                    format!("`{name}` is a .param variable: read it with ld.param"),
                )
                .expected("a value register")),
            },
            other @ (Operand::Name { .. }
            | Operand::Special { .. }
            | Operand::Literal { .. }
            | Operand::Address { .. }
            | Operand::Surface { .. }
            | Operand::Vector { .. }
            | Operand::PredPair { .. }
            | Operand::Sink { .. }) => Err(SyntaxError::new(
                other.span(),
                format!("expected a register, found {}", other.describe()),
            )
            .expected("a register")),
        }
    }

    fn check_width(
        &self,
        name_span: Span,
        reg_ty: Ty,
        ty: Ty,
        width: Width,
    ) -> Result<(), SyntaxError> {
        let ok = reg_ty.bits() == ty.bits()
            || width == Width::WiderTo32 && reg_ty.bits() > ty.bits() && reg_ty.bits() <= 32;
        if ok {
            Ok(())
        } else {
            Err(SyntaxError::new(
                name_span,
                format!(
                    "a .{} register ({} bits) cannot be a .{} operand ({} bits)",
                    type_name(reg_ty),
                    reg_ty.bits(),
                    type_name(ty),
                    ty.bits()
                ),
            )
            .expected(format!("a {}-bit register", ty.bits())))
        }
    }

    /// A `ld`/`st` data register of type `ty`, which PTX lets be wider than the type ("ld and
    /// st instructions permit source and destination data operands to be wider than the
    /// instruction-type size"): the register, and whether it is a 64-bit register for a type
    /// of 32 bits or less (a `ld` then extends into the high word, a `st` stores the low one).
    fn data_reg(&mut self, o: &Operand, ty: Ty) -> Result<(Reg, bool), SyntaxError> {
        if let Operand::Sink { .. } = o {
            return Ok((Reg::RZ, false));
        }
        let (reg, reg_ty, span) = self.value_reg(o)?;
        if reg_ty.bits() == 64 && ty.bits() <= 32 {
            return Ok((reg, true));
        }
        self.check_width(span, reg_ty, ty, Width::WiderTo32)?;
        Ok((reg, false))
    }

    /// A destination register of type `ty`; `_` discards the result.
    fn dst(&mut self, o: &Operand, ty: Ty, width: Width) -> Result<Reg, SyntaxError> {
        if let Operand::Sink { .. } = o {
            return Ok(Reg::RZ);
        }
        let (reg, reg_ty, span) = self.value_reg(o)?;
        self.check_width(span, reg_ty, ty, width)?;
        Ok(reg)
    }

    /// A source of type `ty`: a register or a literal.
    fn src(&mut self, o: &Operand, ty: Ty, width: Width) -> Result<IrOp, SyntaxError> {
        if let Operand::Literal { lit, span } = o {
            return Ok(IrOp::Imm(literal_bits(*lit, ty, *span)?));
        }
        if let Operand::Special { name, span } = o {
            return Err(SyntaxError::new(
                *span,
                format!("special register `{name}` can only be read by `mov` or `cvt`"),
            )
            .expected("a register or a literal"));
        }
        let (reg, reg_ty, span) = self.value_reg(o)?;
        self.check_width(span, reg_ty, ty, width)?;
        Ok(IrOp::Reg(reg))
    }

    fn src_plain(&mut self, o: &Operand, ty: Ty) -> Result<Src, SyntaxError> {
        Ok(Src::plain(self.src(o, ty, Width::Exact)?))
    }

    /// A predicate destination; `_` discards.
    fn pred_dst(&mut self, o: &Operand) -> Result<Pred, SyntaxError> {
        match o {
            Operand::Sink { .. } => Ok(Pred::PT),
            Operand::Name {
                name,
                negate: false,
                span,
            } => self.pred_name(name, *span),
            other @ (Operand::Name { .. }
            | Operand::Special { .. }
            | Operand::Literal { .. }
            | Operand::Address { .. }
            | Operand::Surface { .. }
            | Operand::Vector { .. }
            | Operand::PredPair { .. }) => Err(SyntaxError::new(
                other.span(),
                format!("expected a predicate register, found {}", other.describe()),
            )
            .expected("a predicate such as `%p1`")),
        }
    }

    fn pred_name(&mut self, name: &str, span: Span) -> Result<Pred, SyntaxError> {
        match self.regs.lookup(name, span)? {
            RegRef::Pred(p) => Ok(p),
            RegRef::Value { ty, .. } => Err(SyntaxError::new(
                span,
                format!("`{name}` is a .{} register, not a predicate", type_name(ty)),
            )
            .expected("a .pred register")),
            RegRef::Param { .. } => Err(SyntaxError::new(
                span,
                format!("`{name}` is a .param variable, not a predicate"),
            )
            .expected("a .pred register")),
        }
    }

    /// A predicate source: `%p`, `!%p`, or the literal 1 (true) / 0 (false).
    fn pred_src(&mut self, o: &Operand) -> Result<PredSrc, SyntaxError> {
        match o {
            Operand::Name { name, negate, span } => Ok(PredSrc {
                pred: self.pred_name(name, *span)?,
                negate: *negate,
            }),
            Operand::Literal {
                lit:
                    Literal::Int {
                        value: v @ (0 | 1),
                        negative: false,
                    },
                ..
            } => Ok(if *v == 1 {
                PredSrc::TRUE
            } else {
                PredSrc::FALSE
            }),
            other @ (Operand::Special { .. }
            | Operand::Literal { .. }
            | Operand::Address { .. }
            | Operand::Surface { .. }
            | Operand::Vector { .. }
            | Operand::PredPair { .. }
            | Operand::Sink { .. }) => Err(SyntaxError::new(
                other.span(),
                format!("expected a predicate, found {}", other.describe()),
            )
            .expected("`%p`, `!%p`, 0 or 1")),
        }
    }

    fn label(&self, o: &Operand) -> Result<(String, Span), SyntaxError> {
        match o {
            Operand::Name {
                name,
                negate: false,
                span,
            } if !self.regs.is_register(name) => Ok((name.clone(), *span)),
            other @ (Operand::Name { .. }
            | Operand::Special { .. }
            | Operand::Literal { .. }
            | Operand::Address { .. }
            | Operand::Surface { .. }
            | Operand::Vector { .. }
            | Operand::PredPair { .. }
            | Operand::Sink { .. }) => Err(SyntaxError::new(
                other.span(),
                format!("expected a label, found {}", other.describe()),
            )
            .expected("a label name")),
        }
    }

    fn scratch(&mut self) -> Result<Reg, SyntaxError> {
        self.regs.scratch(self.span)
    }

    /// The staging slots of vector accesses ([`super::regs::STAGING_SLOTS`]).
    fn staging(&mut self) -> Result<Reg, SyntaxError> {
        self.regs.staging(self.span)
    }

    /// The IR address of `[...]` for an access of `size` bytes in `space`, the IR space, and
    /// the ops that must run first (the address of a `.global`/`.const` variable, read from the
    /// constant bank into the scratch pair at words 2–3).
    fn address(
        &mut self,
        o: &Operand,
        space: MemSpace,
        size: u32,
    ) -> Result<(Space, Address, Vec<Op>), SyntaxError> {
        let Operand::Address { base, offset, span } = o else {
            return Err(SyntaxError::new(
                o.span(),
                format!("expected an address `[...]`, found {}", o.describe()),
            )
            .expected("`[reg]`, `[reg+imm]`, `[var]` or `[imm]`"));
        };
        let ir_space = space.ir();
        let Some((name, name_span)) = base else {
            return match space {
                MemSpace::Param => Err(SyntaxError::new(
                    *span,
                    "a parameter is read by name: `ld.param.TYPE d, [NAME+offset]`",
                )
                .expected("a parameter name")),
                MemSpace::Shared if *offset < 0 => Err(SyntaxError::new(
                    *span,
                    "an absolute shared address cannot be negative",
                )),
                MemSpace::Global | MemSpace::Shared | MemSpace::Generic | MemSpace::Const => {
                    Ok((ir_space, Address::absolute(*offset), Vec::new()))
                }
            };
        };
        if self.regs.is_param_var(name) {
            return Err(SyntaxError::new(
                *name_span,
                format!(
                    "`{name}` is a .param variable: it is read and written with ld.param/st.param"
                ),
            )
            .expected("`ld.param` or `st.param`"));
        }
        if self.regs.is_register(name) {
            let (reg, ty, rspan) = self.value_reg(&Operand::Name {
                name: name.clone(),
                negate: false,
                span: *name_span,
            })?;
            let base_bits = match (ty.bits(), space) {
                (64, MemSpace::Global | MemSpace::Shared | MemSpace::Generic | MemSpace::Const) => {
                    64
                }
                (32, MemSpace::Shared) => 32,
                (32, _) => {
                    return Err(SyntaxError::new(
                        rspan,
                        format!(
                        "`{name}` is a 32-bit register; {} addresses are 64-bit (.address_size 64)",
                        space.name()
                    ),
                    )
                    .expected("a 64-bit register"))
                }
                (_, MemSpace::Param) => {
                    return Err(SyntaxError::new(
                        rspan,
                        "a parameter is read by name: `ld.param.TYPE d, [NAME+offset]`",
                    )
                    .expected("a parameter name"))
                }
                (bits, _) => {
                    return Err(SyntaxError::new(
                        rspan,
                        format!("a {bits}-bit register cannot hold an address"),
                    )
                    .expected("a 64-bit (or, for shared memory, 32-bit) register"))
                }
            };
            return Ok((
                ir_space,
                Address::Linear(LinearAddress {
                    base: Some(reg),
                    base_bits,
                    offset: *offset,
                }),
                Vec::new(),
            ));
        }
        if let Some(var) = self.shared.get(name) {
            let at = var.offset as i64 + *offset;
            return match space {
                MemSpace::Shared => Ok((ir_space, Address::absolute(at), Vec::new())),
                MemSpace::Generic => Ok((
                    ir_space,
                    Address::absolute(GENERIC_SHARED_BASE as i64 + at),
                    Vec::new(),
                )),
                MemSpace::Global | MemSpace::Param | MemSpace::Const => Err(SyntaxError::new(
                    *name_span,
                    format!(
                        "`{name}` is a .shared variable, not in the {} space",
                        space.name()
                    ),
                )
                .expected("`.shared` or generic addressing")),
            };
        }
        if let Some(p) = self.params.get(name) {
            if space != MemSpace::Param {
                return Err(SyntaxError::new(
                    *name_span,
                    format!("`{name}` is a kernel parameter: read it with `ld.param`"),
                )
                .expected("`ld.param`"));
            }
            let end = *offset + size as i64;
            if *offset < 0 || end > p.ty.bytes() as i64 {
                return Err(SyntaxError::new(
                    *span,
                    format!(
                        "a {size}-byte read at offset {offset} is outside the .{} parameter `{name}` ({} bytes)",
                        type_name(p.ty),
                        p.ty.bytes()
                    ),
                ));
            }
            return Ok((
                ir_space,
                Address::absolute(PARAM_BASE as i64 + p.offset as i64 + *offset),
                Vec::new(),
            ));
        }
        if let Some(slot) = self.globals.address_slot(self.table, name, *name_span) {
            let (bank_offset, constant) = slot?;
            match (space, constant) {
                (MemSpace::Global | MemSpace::Generic, false)
                | (MemSpace::Const | MemSpace::Generic, true) => {}
                (MemSpace::Global, true)
                | (MemSpace::Const, false)
                | (MemSpace::Shared | MemSpace::Param, _) => {
                    return Err(SyntaxError::new(
                        *name_span,
                        format!(
                            "`{name}` is a {} variable, not in the {} space",
                            if constant { ".const" } else { ".global" },
                            space.name()
                        ),
                    ))
                }
            }
            let t = self.scratch()?.word(2);
            let mov = Op::Mov {
                ty: Ty::U64,
                dst: t,
                src: IrOp::Const {
                    bank: 0,
                    offset: bank_offset,
                },
            };
            return Ok((ir_space, Address::base64(t, *offset), vec![mov]));
        }
        Err(SyntaxError::new(
            *name_span,
            format!("`{name}` is not a register, a variable or a kernel parameter"),
        )
        .expected("a declared name"))
    }

    /// The address of module variable `name` as an operand (its constant-bank slot), if `name`
    /// is one.
    fn global_address(&mut self, name: &str, span: Span) -> Option<Result<IrOp, SyntaxError>> {
        let slot = self.globals.address_slot(self.table, name, span)?;
        Some(slot.map(|(offset, _)| IrOp::Const { bank: 0, offset }))
    }
}

/// The state spaces of memory instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemSpace {
    Global,
    Shared,
    Generic,
    Param,
    /// `.const` variables, which live in global memory (see `globals`).
    Const,
}

impl MemSpace {
    fn ir(self) -> Space {
        match self {
            MemSpace::Global | MemSpace::Const => Space::Global,
            MemSpace::Shared => Space::Shared,
            MemSpace::Generic => Space::Generic,
            MemSpace::Param => Space::Const,
        }
    }
    fn name(self) -> &'static str {
        match self {
            MemSpace::Global => ".global",
            MemSpace::Shared => ".shared",
            MemSpace::Generic => "generic",
            MemSpace::Param => ".param",
            MemSpace::Const => ".const",
        }
    }
}

/// Reads the state-space qualifier of `ld`/`st`/`atom`/`red` (`param_ok`: `ld`/`st`, which
/// also take `.param`; `.const` is for `ld` only).
fn mem_space(q: &mut Quals, param_ok: bool) -> Result<MemSpace, SyntaxError> {
    const ALL: &[&str] = &[
        "global",
        "shared",
        "shared::cta",
        "shared::cluster",
        "param",
        "param::entry",
        "param::func",
        "const",
        "local",
    ];
    let Some((s, span)) = q.one_of("state space", ALL)? else {
        return Ok(MemSpace::Generic);
    };
    match s.as_str() {
        "global" => Ok(MemSpace::Global),
        "shared" | "shared::cta" => Ok(MemSpace::Shared),
        "param" | "param::entry" | "param::func" if param_ok => Ok(MemSpace::Param),
        "shared::cluster" => Err(q.unsupported(
            span,
            ".shared::cluster (distributed shared memory of other CTAs) is not supported; a CTA's own shared memory is `.shared`",
        )),
        "const" if param_ok && q.opcode == "ld" => Ok(MemSpace::Const),
        "const" => Err(SyntaxError::new(
            span,
            format!("`{}` cannot access the .const space (it is read-only: only `ld.const`)", q.opcode),
        )),
        "local" => Err(q.unsupported(span, "the .local space is not supported")),
        _ => Err(q.unsupported(
            span,
            &format!(".{s} is not a state space of this instruction"),
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Dispatch

/// Lowers one instruction: `mnemonic` is the opcode word, `ops` the parsed operands, `end`
/// where errors about missing operands point.
pub fn lower(
    lw: &mut Lowerer,
    mnemonic: &Token,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    let mut q = Quals::parse(mnemonic)?;
    let out = match q.opcode.as_str() {
        "mov" => lower_mov(lw, &mut q, ops, end),
        "ld" => lower_ld(lw, &mut q, ops, end),
        "st" => lower_st(lw, &mut q, ops, end),
        "cvta" => lower_cvta(lw, &mut q, ops, end),
        "add" | "sub" => lower_add_sub(lw, &mut q, ops, end),
        "mul" => lower_mul(lw, &mut q, ops, end),
        "mad" => lower_mad(lw, &mut q, ops, end),
        "mul24" | "mad24" => lower_mul24(lw, &mut q, ops, end),
        "div" | "rem" => lower_div_rem(lw, &mut q, ops, end),
        "min" | "max" => lower_min_max(lw, &mut q, ops, end),
        "abs" | "neg" => lower_abs_neg(lw, &mut q, ops, end),
        "and" | "or" | "xor" | "not" | "cnot" => lower_logic(lw, &mut q, ops, end),
        "shl" | "shr" => lower_shift(lw, &mut q, ops, end),
        "popc" | "clz" | "brev" => lower_bits(lw, &mut q, ops, end),
        "lop3" => lower_lop3(lw, &mut q, ops, end),
        "setp" => lower_setp(lw, &mut q, ops, end),
        "selp" => lower_selp(lw, &mut q, ops, end),
        "cvt" => lower_cvt(lw, &mut q, ops, end),
        "bra" => lower_bra(lw, &mut q, ops, end),
        "bar" if q.items.iter().any(|(n, _)| n == "warp") => {
            warp::lower_bar_warp(lw, &mut q, ops, end)
        }
        "bar" | "barrier" => lower_bar(lw, &mut q, ops, end),
        "ret" | "exit" => lower_exit(&mut q, ops, end),
        "membar" => lower_membar(&mut q, ops, end),
        "fence" => lower_fence(&mut q, ops, end),
        "atom" | "red" => lower_atom(lw, &mut q, ops, end),
        "nanosleep" => lower_nanosleep(lw, &mut q, ops, end),
        "sured" => surface::lower_sured(lw, &mut q, ops, end),
        "suld" => surface::lower_suld(lw, &mut q, ops, end),
        "sust" => surface::lower_sust(lw, &mut q, ops, end),
        "shf" => bits::lower_shf(lw, &mut q, ops, end),
        "prmt" => bits::lower_prmt(lw, &mut q, ops, end),
        "bfe" => bits::lower_bfe(lw, &mut q, ops, end),
        "bfi" => bits::lower_bfi(lw, &mut q, ops, end),
        "bfind" => bits::lower_bfind(lw, &mut q, ops, end),
        "fma" => bits::lower_fma(lw, &mut q, ops, end),
        "activemask" => warp::lower_activemask(lw, &mut q, ops, end),
        "vote" => warp::lower_vote(lw, &mut q, ops, end),
        "shfl" => warp::lower_shfl(lw, &mut q, ops, end),
        "match" => warp::lower_match(lw, &mut q, ops, end),
        "redux" => warp::lower_redux(lw, &mut q, ops, end),
        other => Err(SyntaxError::new(
            q.opcode_span,
            format!("`{other}` is not a PTX instruction atomjit supports"),
        )
        .expected(format!("one of {}", OPCODES.join(" ")))),
    }?;
    q.finish()?;
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Data movement

/// `mov.type d, a`: a register, a literal, a special register (`ReadSpecial`), the address of
/// a `.shared` variable (its offset in the shared window), or a predicate. Vector forms pack and
/// unpack: `mov.b64 d, {lo, hi}` / `mov.b64 {lo, hi}, a` (two 32-bit moves) and
/// `mov.b32 d, {lo, hi}` / `mov.b32 {lo, hi}, a` (16-bit halves, by shifts and masks).
fn lower_mov(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 2, "d, a", end)?;
    let tys = q.types()?;
    let kind = match tys.as_slice() {
        [(k, _)] => *k,
        _ => {
            return Err(
                SyntaxError::new(q.opcode_span, "`mov` takes one type qualifier")
                    .expected(".pred .b16 .b32 .b64 .u16 .u32 .u64 .s16 .s32 .s64 .f16 .f32 .f64"),
            )
        }
    };
    let ty = match kind {
        Kind::Pred => {
            let dst = lw.pred_dst(&ops[0])?;
            // `mov.pred %p, -1` (NVRTC writes it): a literal is true when nonzero.
            let a = match &ops[1] {
                Operand::Literal { .. } => {
                    if lw.src(&ops[1], Ty::U32, Width::Exact)? == IrOp::Imm(0) {
                        PredSrc::FALSE
                    } else {
                        PredSrc::TRUE
                    }
                }
                Operand::Name { .. }
                | Operand::Special { .. }
                | Operand::Address { .. }
                | Operand::Surface { .. }
                | Operand::Vector { .. }
                | Operand::PredPair { .. }
                | Operand::Sink { .. } => lw.pred_src(&ops[1])?,
            };
            return Lowered::one(Op::PredLogic {
                op: BoolOp::And,
                dst,
                a,
                b: PredSrc::TRUE,
            });
        }
        Kind::Value(ty) => ty,
    };
    if matches!(ty, Ty::U8 | Ty::S8) {
        return Err(SyntaxError::new(q.opcode_span, "`mov` has no 8-bit types")
            .expected(".b16 .b32 .b64 ..."));
    }
    if ty == Ty::B128 {
        return mov_b128(lw, &ops[0], &ops[1]);
    }
    // Vector packing and unpacking.
    if let Operand::Vector { elems, span } = &ops[1] {
        return mov_pack(lw, ty, &ops[0], elems, *span);
    }
    if let Operand::Vector { elems, span } = &ops[0] {
        return mov_unpack(lw, ty, elems, &ops[1], *span);
    }
    if let Operand::Special { name, span } = &ops[1] {
        let Some(sr) = special(name) else {
            return Err(SyntaxError::new(
                *span,
                format!("the special register `{name}` is not supported by atomjit"),
            )
            .expected(format!("one of {}", SPECIAL_REGISTERS.join(" "))));
        };
        if ty.bits() != 32 {
            return Err(SyntaxError::new(
                q.opcode_span,
                format!("`{name}` is a 32-bit special register; use mov.u32"),
            )
            .expected(".u32 .s32 .b32"));
        }
        let dst = lw.dst(&ops[0], ty, Width::Exact)?;
        return Lowered::one(Op::ReadSpecial { dst, sr });
    }
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    if let Operand::Name { name, span, .. } = &ops[1] {
        if !lw.regs.is_register(name) {
            if let Some(addr) = lw.global_address(name, *span) {
                if !matches!(ty, Ty::U64 | Ty::B64 | Ty::S64) {
                    return Err(SyntaxError::new(
                        q.opcode_span,
                        "the address of a .global or .const variable is a 64-bit value (mov.u64)",
                    ));
                }
                return Lowered::one(Op::Mov {
                    ty,
                    dst,
                    src: addr?,
                });
            }
            let Some(var) = lw.shared.get(name) else {
                return Err(SyntaxError::new(
                    *span,
                    format!("`{name}` is not a register or a variable"),
                )
                .expected("a register, a literal or a variable"));
            };
            if !matches!(
                ty,
                Ty::U32 | Ty::U64 | Ty::B32 | Ty::B64 | Ty::S32 | Ty::S64
            ) {
                return Err(SyntaxError::new(
                    q.opcode_span,
                    "the address of a variable is a .u32 or .u64 value",
                ));
            }
            return Lowered::one(Op::Mov {
                ty,
                dst,
                src: IrOp::Imm(var.offset as u64),
            });
        }
    }
    let src = lw.src(&ops[1], ty, Width::Exact)?;
    Lowered::one(Op::Mov { ty, dst, src })
}

/// `mov.b128`: `d, {lo, hi}` (two .b64 halves) or `d, {w0, w1, w2, w3}` (four .b32 words,
/// `w0` lowest) packs a register quad, the mirrored forms unpack one, and `d, a` copies a quad;
/// each is two 64-bit or four 32-bit moves (distinct registers never share slots, so no move
/// overwrites a later source). A literal is refused ([`literal_bits`]).
fn mov_b128(lw: &mut Lowerer, d: &Operand, a: &Operand) -> Result<Lowered, SyntaxError> {
    let parts = |elems: &[Operand], span: Span| match elems.len() {
        2 => Ok((Ty::B64, 2u16)),
        4 => Ok((Ty::B32, 1u16)),
        n => Err(SyntaxError::new(
            span,
            format!("`mov.b128` packs two .b64 or four .b32 values, not {n}"),
        )
        .expected("`{lo, hi}` or `{w0, w1, w2, w3}`")),
    };
    let mut out = Vec::new();
    match (d, a) {
        (_, Operand::Vector { elems, span }) => {
            let (part, words) = parts(elems, *span)?;
            let dst = lw.dst(d, Ty::B128, Width::Exact)?;
            for (k, e) in elems.iter().enumerate() {
                let src = lw.src(e, part, Width::Exact)?;
                out.push(element_mov(words, dst.word(k as u16 * words), src));
            }
        }
        (Operand::Vector { elems, span }, _) => {
            let (part, words) = parts(elems, *span)?;
            let src = lw.src(a, Ty::B128, Width::Exact)?;
            let IrOp::Reg(src) = src else {
                return Err(
                    SyntaxError::new(a.span(), "`mov.b128` unpacks a .b128 register")
                        .expected("a .b128 register"),
                );
            };
            for (k, e) in elems.iter().enumerate() {
                let dst = lw.dst(e, part, Width::Exact)?;
                out.push(element_mov(
                    words,
                    dst,
                    IrOp::Reg(src.word(k as u16 * words)),
                ));
            }
        }
        _ => {
            let dst = lw.dst(d, Ty::B128, Width::Exact)?;
            let src = lw.src(a, Ty::B128, Width::Exact)?;
            let IrOp::Reg(src) = src else {
                return Err(
                    SyntaxError::new(a.span(), "`mov.b128` copies a .b128 register")
                        .expected("a .b128 register or `{lo, hi}`"),
                );
            };
            for k in [0, 2] {
                out.push(element_mov(2, dst.word(k), IrOp::Reg(src.word(k))));
            }
        }
    }
    Lowered::ops(out)
}

fn mov_pack(
    lw: &mut Lowerer,
    ty: Ty,
    d: &Operand,
    elems: &[Operand],
    span: Span,
) -> Result<Lowered, SyntaxError> {
    if elems.len() != 2 || !matches!(ty.bits(), 32 | 64) {
        return Err(SyntaxError::new(
            span,
            "atomjit packs two halves: `mov.b64 d, {lo, hi}` or `mov.b32 d, {lo, hi}`",
        ));
    }
    let half = if ty.bits() == 64 { Ty::B32 } else { Ty::B16 };
    let dst = lw.dst(d, ty, Width::Exact)?;
    let lo = lw.src(&elems[0], half, Width::Exact)?;
    let hi = lw.src(&elems[1], half, Width::Exact)?;
    if ty.bits() == 64 {
        // A source half may not alias the destination pair (different widths), so two moves.
        return Lowered::ops(vec![
            Op::Mov {
                ty: Ty::B32,
                dst: dst.word(0),
                src: lo,
            },
            Op::Mov {
                ty: Ty::B32,
                dst: dst.word(1),
                src: hi,
            },
        ]);
    }
    let t = lw.scratch()?;
    Lowered::ops(vec![
        Op::Binary {
            op: BinOp::And,
            ty: Ty::B32,
            dst: t,
            a: Src::plain(lo),
            b: Src::plain(IrOp::Imm(0xffff)),
            ftz: false,
        },
        Op::Binary {
            op: BinOp::Shl,
            ty: Ty::B32,
            dst: t.word(1),
            a: Src::plain(hi),
            b: Src::plain(IrOp::Imm(16)),
            ftz: false,
        },
        Op::Binary {
            op: BinOp::Or,
            ty: Ty::B32,
            dst,
            a: Src::plain(IrOp::Reg(t)),
            b: Src::plain(IrOp::Reg(t.word(1))),
            ftz: false,
        },
    ])
}

fn mov_unpack(
    lw: &mut Lowerer,
    ty: Ty,
    elems: &[Operand],
    a: &Operand,
    span: Span,
) -> Result<Lowered, SyntaxError> {
    if elems.len() != 2 || !matches!(ty.bits(), 32 | 64) {
        return Err(SyntaxError::new(
            span,
            "atomjit unpacks two halves: `mov.b64 {lo, hi}, a` or `mov.b32 {lo, hi}, a`",
        ));
    }
    let half = if ty.bits() == 64 { Ty::B32 } else { Ty::B16 };
    let src = lw.src(a, ty, Width::Exact)?;
    let lo = lw.dst(&elems[0], half, Width::Exact)?;
    let hi = lw.dst(&elems[1], half, Width::Exact)?;
    let word = |i: u16| match src {
        IrOp::Reg(r) => IrOp::Reg(r.word(i)),
        IrOp::Imm(v) => IrOp::Imm(if i == 0 { v & 0xffff_ffff } else { v >> 32 }),
        c @ IrOp::Const { .. } => c,
    };
    if ty.bits() == 64 {
        // The halves are 32-bit registers, distinct from the 64-bit source pair.
        return Lowered::ops(vec![
            Op::Mov {
                ty: Ty::B32,
                dst: lo,
                src: word(0),
            },
            Op::Mov {
                ty: Ty::B32,
                dst: hi,
                src: word(1),
            },
        ]);
    }
    Lowered::ops(vec![
        Op::Binary {
            op: BinOp::And,
            ty: Ty::B32,
            dst: lo,
            a: Src::plain(src),
            b: Src::plain(IrOp::Imm(0xffff)),
            ftz: false,
        },
        Op::Binary {
            op: BinOp::Shr,
            ty: Ty::B32,
            dst: hi,
            a: Src::plain(src),
            b: Src::plain(IrOp::Imm(16)),
            ftz: false,
        },
    ])
}

/// Reads the memory-order qualifiers of `ld` (`store == false`) or `st`: `.weak` (the
/// default), `.volatile`, `.relaxed.scope`, `.acquire.scope` (loads) / `.release.scope`
/// (stores). A scope is required with `.relaxed`/`.acquire`/`.release` and not allowed
/// otherwise.
fn access_order(
    q: &mut Quals,
    store: bool,
    space: MemSpace,
) -> Result<(MemOrder, Scope), SyntaxError> {
    let strong = if store { "release" } else { "acquire" };
    let wrong = if store { "acquire" } else { "release" };
    let sem = q.one_of(
        "memory order",
        &[
            "weak", "volatile", "relaxed", strong, wrong, "acq_rel", "sc", "mmio",
        ],
    )?;
    let scope = q.one_of("scope", SCOPES)?;
    let op = if store { "st" } else { "ld" };
    let order = match sem.as_ref().map(|(s, sp)| (s.as_str(), *sp)) {
        None | Some(("weak", _)) => MemOrder::Weak,
        Some(("volatile", _)) => MemOrder::Volatile,
        Some(("relaxed", _)) => MemOrder::Relaxed,
        Some(("acquire", _)) if !store => MemOrder::Acquire,
        Some(("release", _)) if store => MemOrder::Release,
        Some(("mmio", span)) => {
            return Err(q.unsupported(span, ".mmio (memory-mapped I/O) accesses are not supported"))
        }
        Some((s, span)) => {
            return Err(SyntaxError::new(
                span,
                format!(
                    "`{op}` cannot be .{s}: PTX {op} is .weak, .volatile, .relaxed or .{strong} (a seq_cst {} is `fence.sc` then `{op}.{}`)",
                    if store { "store" } else { "load" },
                    if store { "relaxed" } else { "acquire" }
                ),
            )
            .expected(format!(".weak .volatile .relaxed .{strong}")))
        }
    };
    let needs_scope = matches!(
        order,
        MemOrder::Relaxed | MemOrder::Acquire | MemOrder::Release
    );
    match (needs_scope, scope) {
        (true, Some((s, _))) => {
            if space == MemSpace::Param {
                return Err(SyntaxError::new(
                    q.opcode_span,
                    format!(
                        "`.{}` accesses exist only for .global, .shared and generic addresses",
                        order.name()
                    ),
                ));
            }
            Ok((order, scope_of(&s)))
        }
        (true, None) => Err(SyntaxError::new(
            q.opcode_span,
            format!("`{op}.{}` needs a scope", order.name()),
        )
        .expected(".cta .cluster .gpu .sys")),
        (false, Some((s, span))) => Err(SyntaxError::new(
            span,
            format!(
                "a .{} access takes no scope (.{s}); scopes go with .relaxed and .{strong}",
                order.name()
            ),
        )),
        (false, None) => {
            if order == MemOrder::Volatile && space == MemSpace::Param {
                return Err(SyntaxError::new(
                    q.opcode_span,
                    "`.volatile` accesses exist only for .global, .shared and generic addresses",
                ));
            }
            // `.volatile` is relaxed at system scope (the IR's `MemOrder::Volatile`); a weak
            // access has no scope in PTX, the IR records the space's own scope, which weak
            // accesses do not use.
            let scope = match (order, space) {
                (MemOrder::Volatile, _) => Scope::Sys,
                (_, MemSpace::Shared) => Scope::Cta,
                _ => Scope::Gpu,
            };
            Ok((order, scope))
        }
    }
}

/// Cache operators and eviction hints of `ld`/`st`. They are performance hints: the PTX memory
/// consistency model orders accesses only through `.sem`, `.scope`, fences and barriers, and the
/// host has a single coherent memory, so they are accepted and change nothing. `.nc` (read
/// through the non-coherent path) promises the data is not written during the kernel; a weak
/// load is a correct implementation. `.L2::cache_hint` needs a cache-policy operand and is
/// rejected; vector accesses (`.v2`/`.v4`/`.v8`) are rejected.
fn cache_hints(q: &mut Quals, store: bool, space: MemSpace) -> Result<(), SyntaxError> {
    let cops: &[&str] = if store {
        &["wb", "cg", "cs", "wt"]
    } else {
        &["ca", "cg", "cs", "lu", "cv"]
    };
    q.one_of("cache operator", cops)?;
    if !store {
        if let Some((_, span)) = q.one_of("non-coherent path", &["nc"])? {
            if space != MemSpace::Global {
                return Err(SyntaxError::new(span, "`.nc` exists only for ld.global")
                    .expected("ld.global.nc"));
            }
        }
    }
    for i in 0..q.items.len() {
        if q.used[i] {
            continue;
        }
        let (name, span) = q.items[i].clone();
        if name == "L2::cache_hint" {
            return Err(q.unsupported(
                span,
                ".L2::cache_hint (with a cache-policy operand) is not supported",
            ));
        }
        if name.starts_with("L1::") || name.starts_with("L2::") {
            q.used[i] = true;
        }
    }
    Ok(())
}

const LDST_TYPES: &[Ty] = &[
    Ty::U8,
    Ty::S8,
    Ty::B16,
    Ty::U16,
    Ty::S16,
    Ty::B32,
    Ty::U32,
    Ty::S32,
    Ty::B64,
    Ty::U64,
    Ty::S64,
    Ty::F16,
    Ty::BF16,
    Ty::F16x2,
    Ty::BF16x2,
    Ty::F32,
    Ty::F64,
];

/// A vector `ld`/`st` of more than 16 bytes is sm_100's 256-bit access, which ptxas refuses
/// for the targets atomjit reads ("Feature '256 bit wide load/store' requires .target sm_100
/// or higher").
fn check_vector_bytes(q: &Quals, ty: Ty, n: usize) -> Result<(), SyntaxError> {
    if ty.bytes() as usize * n > 16 {
        return Err(q.unsupported(
            q.opcode_span,
            &format!(
                "a {}-byte vector access (`.v{n}.{}`) is sm_100's 256-bit load/store (\"Feature '256 bit wide load/store' requires .target sm_100 or higher\")",
                ty.bytes() as usize * n,
                type_name(ty)
            ),
        ));
    }
    Ok(())
}

/// The `.v2`/`.v4` qualifier of `ld`/`st`: the number of elements (1 without one).
fn vector_width(q: &mut Quals) -> Result<usize, SyntaxError> {
    match q.one_of("vector width", &["v2", "v4", "v8"])? {
        None => Ok(1),
        Some((v, _)) if v == "v2" => Ok(2),
        Some((v, _)) if v == "v4" => Ok(4),
        Some((_, span)) => Err(q.unsupported(span, ".v8 accesses are not supported")),
    }
}

/// The element operands of a vector operand `{a, b, ...}` of `n` elements, or the one operand
/// of a scalar access.
fn elements<'o>(q: &Quals, o: &'o Operand, n: usize) -> Result<Vec<&'o Operand>, SyntaxError> {
    match (o, n) {
        (Operand::Vector { elems, span }, n) if n > 1 => {
            if elems.len() != n {
                return Err(SyntaxError::new(
                    *span,
                    format!(
                        "`{}.v{n}` takes a vector of {n} elements, found {}",
                        q.opcode,
                        elems.len()
                    ),
                ));
            }
            Ok(elems.iter().collect())
        }
        (Operand::Vector { span, .. }, _) => Err(SyntaxError::new(
            *span,
            format!("a vector operand needs `{}.v2` or `.v4`", q.opcode),
        )),
        (other, 1) => Ok(vec![other]),
        (other, n) => Err(SyntaxError::new(
            other.span(),
            format!("`{}.v{n}` takes a vector `{{a, b, ...}}`", q.opcode),
        )
        .expected(format!("a vector of {n} registers"))),
    }
}

/// The `.param` variable an address names (`[param0+4]`), if it does: its slots, size and
/// the byte offset.
fn param_var(lw: &mut Lowerer, o: &Operand) -> Result<Option<(Reg, u32, i64, Span)>, SyntaxError> {
    let Operand::Address {
        base: Some((name, name_span)),
        offset,
        span,
    } = o
    else {
        return Ok(None);
    };
    if !lw.regs.is_param_var(name) {
        return Ok(None);
    }
    match lw.regs.lookup(name, *name_span)? {
        RegRef::Param { reg, bytes } => Ok(Some((reg, bytes, *offset, *span))),
        RegRef::Value { .. } | RegRef::Pred(_) => Ok(None),
    }
}

/// One element access of a `.param` variable: `size` bytes at byte `at` of the variable in
/// slots from `reg`. Whole words move (`Mov`); a byte or a half-word of a slot is extracted
/// with `Bfe` (sign-extended for signed types) or inserted with `Bfi`.
fn param_var_access(
    ty: Ty,
    (reg, bytes, at, span): (Reg, u32, i64, Span),
    value: Result<Reg, IrOp>,
) -> Result<Op, SyntaxError> {
    let size = ty.bytes() as i64;
    if at < 0 || at + size > bytes as i64 {
        return Err(SyntaxError::new(
            span,
            format!(
                "a {size}-byte access at offset {at} is outside the {bytes}-byte .param variable"
            ),
        ));
    }
    let word = reg.word((at / 4) as u16);
    let within = (at % 4) as u32;
    if size >= 4 && within != 0 || size < 4 && at % size != 0 {
        return Err(SyntaxError::new(
            span,
            format!("a {size}-byte .param access at offset {at} is not naturally aligned"),
        ));
    }
    let pos = Src::plain(IrOp::Imm(8 * within as u64));
    let len = Src::plain(IrOp::Imm(8 * size as u64));
    Ok(match (value, size) {
        (Ok(dst), 8) => Op::Mov {
            ty: Ty::B64,
            dst,
            src: IrOp::Reg(word),
        },
        (Ok(dst), 4) => Op::Mov {
            ty: Ty::B32,
            dst,
            src: IrOp::Reg(word),
        },
        (Ok(dst), _) => Op::Bfe {
            ty: if ty.is_signed_int() { Ty::S32 } else { Ty::U32 },
            dst,
            a: Src::plain(IrOp::Reg(word)),
            pos,
            len,
        },
        (Err(src), 8) => Op::Mov {
            ty: Ty::B64,
            dst: word,
            src,
        },
        (Err(src), 4) => Op::Mov {
            ty: Ty::B32,
            dst: word,
            src,
        },
        (Err(src), _) => Op::Bfi {
            ty: Ty::B32,
            dst: word,
            insert: Src::plain(src),
            base: Src::plain(IrOp::Reg(word)),
            pos,
            len,
        },
    })
}

/// Whether `regs` are the element registers of an IR vector access of elements `words`
/// registers wide: register `k` is `regs[0] + k * words`, none of them RZ.
fn consecutive(regs: &[Reg], words: u16) -> bool {
    let Some(first) = regs.first() else {
        return false;
    };
    regs.iter().enumerate().all(|(k, r)| {
        !r.is_rz() && u32::from(r.0) == u32::from(first.0) + k as u32 * u32::from(words)
    })
}

/// The registers of `srcs` when every one is a register (no immediate or constant).
fn all_registers(srcs: &[IrOp]) -> Option<Vec<Reg>> {
    srcs.iter()
        .map(|s| match s {
            IrOp::Reg(r) => Some(*r),
            IrOp::Imm(_) | IrOp::Const { .. } => None,
        })
        .collect()
}

/// A move of one element of `words` registers (1 or 2).
fn element_mov(words: u16, dst: Reg, src: IrOp) -> Op {
    Op::Mov {
        ty: if words == 2 { Ty::B64 } else { Ty::B32 },
        dst,
        src,
    }
}

/// `ld{.sem.scope}{.space}{.hints}{.v2|.v4}.type d, [a]` → `Load`. `ld.param` reads the
/// kernel parameter from constant bank 0 (`Space::Const` at `PARAM_BASE` + the parameter's
/// offset), or a body's `.param` variable (call arguments and results: register moves, see
/// [`param_var_access`]). `ld.const` reads a `.const` variable (in global memory). A vector
/// access `{a, b, ...}` is one IR vector access ([`MemAccess::vector`]), aligned to its whole
/// size as the PTX ISA requires ("vector variables are aligned to a multiple of their overall
/// size"); when the element registers are not consecutive IR slots (or an element is `_` or a
/// 64-bit register of a narrower type) it loads into the staging slots and moves each element
/// to its register.
fn lower_ld(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    let space = mem_space(q, true)?;
    let (order, scope) = access_order(q, false, space)?;
    let n = vector_width(q)?;
    cache_hints(q, false, space)?;
    count(q, ops, 2, "d, [a]", end)?;
    let ty = q.one_type(LDST_TYPES)?;
    check_vector_bytes(q, ty, n)?;
    let elems = elements(q, &ops[0], n)?;
    if space == MemSpace::Param {
        if let Some(var) = param_var(lw, &ops[1])? {
            let mut out = Vec::new();
            for (k, e) in elems.iter().enumerate() {
                let dst = lw.dst(e, ty, Width::WiderTo32)?;
                let at = (var.0, var.1, var.2 + (k as i64) * ty.bytes() as i64, var.3);
                out.push(param_var_access(ty, at, Ok(dst))?);
            }
            return Lowered::ops(out);
        }
    }
    let mut dsts = Vec::new();
    let mut widened = Vec::new();
    for e in &elems {
        let (reg, wide) = lw.data_reg(e, ty)?;
        dsts.push(reg);
        widened.push(wide);
    }
    let (space, addr, mut out) = lw.address(&ops[1], space, ty.bytes() * n as u32)?;
    let access = MemAccess {
        space,
        ty,
        vector: n as u8,
        order,
        scope,
        addr,
    };
    // One op reads its address before it writes: an element may be the address register.
    let words = ty.regs();
    if n > 1 && (widened.iter().any(|w| *w) || !consecutive(&dsts, words)) {
        let t = lw.staging()?;
        out.push(Op::Load { access, dst: t });
        for (k, dst) in dsts.iter().enumerate() {
            if !dst.is_rz() {
                out.push(element_mov(
                    words,
                    *dst,
                    IrOp::Reg(t.word(k as u16 * words)),
                ));
            }
        }
    } else {
        out.push(Op::Load {
            access,
            dst: dsts[0],
        });
    }
    for (k, &dst) in dsts.iter().enumerate() {
        if widened[k] {
            // A 64-bit destination of a narrower load: the high word is the extension of the
            // (already extended) low word, by the type's signedness.
            out.push(if ty.is_signed_int() {
                Op::Binary {
                    op: BinOp::Shr,
                    ty: Ty::S32,
                    dst: dst.word(1),
                    a: Src::plain(IrOp::Reg(dst)),
                    b: Src::plain(IrOp::Imm(31)),
                    ftz: false,
                }
            } else {
                Op::Mov {
                    ty: Ty::U32,
                    dst: dst.word(1),
                    src: IrOp::Reg(Reg::RZ),
                }
            });
        }
    }
    Lowered::ops(out)
}

/// `st{.sem.scope}{.space}{.hints}{.v2|.v4}.type [a], b` → `Store` (`st.param` to a body's
/// `.param` variable is a register move). A vector store is one IR vector access, aligned to
/// its whole size; elements that are not consecutive IR slots (a literal, a 64-bit register
/// storing its low word) are first moved into the staging slots.
fn lower_st(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    let space = mem_space(q, true)?;
    let (order, scope) = access_order(q, true, space)?;
    let n = vector_width(q)?;
    cache_hints(q, true, space)?;
    count(q, ops, 2, "[a], b", end)?;
    let ty = q.one_type(LDST_TYPES)?;
    check_vector_bytes(q, ty, n)?;
    let elems = elements(q, &ops[1], n)?;
    let mut srcs = Vec::new();
    for e in &elems {
        // A 64-bit register stores its low word for a type of 32 bits or less.
        let src = match e {
            Operand::Name { .. } if space != MemSpace::Param => {
                let (reg, _) = lw.data_reg(e, ty)?;
                IrOp::Reg(reg)
            }
            Operand::Name { .. }
            | Operand::Special { .. }
            | Operand::Literal { .. }
            | Operand::Address { .. }
            | Operand::Surface { .. }
            | Operand::Vector { .. }
            | Operand::PredPair { .. }
            | Operand::Sink { .. } => lw.src(e, ty, Width::WiderTo32)?,
        };
        srcs.push(src);
    }
    if space == MemSpace::Param {
        let Some(var) = param_var(lw, &ops[0])? else {
            return Err(SyntaxError::new(
                ops[0].span(),
                "`st.param` writes a .param variable declared in the body (a call's argument) or a function's return value",
            )
            .expected("`st.param.b32 [param0+0], %r1;`"));
        };
        let mut out = Vec::new();
        for (k, src) in srcs.into_iter().enumerate() {
            let at = (var.0, var.1, var.2 + (k as i64) * ty.bytes() as i64, var.3);
            out.push(param_var_access(ty, at, Err(src))?);
        }
        return Lowered::ops(out);
    }
    let (space, addr, mut out) = lw.address(&ops[0], space, ty.bytes() * n as u32)?;
    let access = MemAccess {
        space,
        ty,
        vector: n as u8,
        order,
        scope,
        addr,
    };
    let words = ty.regs();
    let regs = all_registers(&srcs);
    let src = if n == 1 {
        srcs[0]
    } else if let Some(first) = regs.filter(|r| consecutive(r, words)).map(|r| r[0]) {
        IrOp::Reg(first)
    } else {
        let t = lw.staging()?;
        for (k, src) in srcs.into_iter().enumerate() {
            out.push(element_mov(words, t.word(k as u16 * words), src));
        }
        IrOp::Reg(t)
    };
    out.push(Op::Store { access, src });
    Lowered::ops(out)
}

/// `cvta{.to}.space.u64 d, a`: generic ↔ space addresses by the arithmetic of the generic
/// window ([`GENERIC_SHARED_BASE`]): `.global` is the identity, `cvta.shared` adds
/// the base, `cvta.to.shared` subtracts it. `a` may name a `.shared` variable. 32-bit forms
/// exist only with `.address_size 32`, which atomjit does not support.
fn lower_cvta(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 2, "d, a", end)?;
    let to = q.has("to")?;
    let space = q.one_of(
        "state space",
        &[
            "global",
            "shared",
            "shared::cta",
            "shared::cluster",
            "const",
            "local",
            "param",
        ],
    )?;
    let Some((space, space_span)) = space else {
        return Err(
            SyntaxError::new(q.opcode_span, "`cvta` needs a state space")
                .expected(".global or .shared"),
        );
    };
    let ty = q.one_type(&[Ty::U64, Ty::U32])?;
    if ty == Ty::U32 {
        return Err(q.unsupported(
            q.opcode_span,
            "32-bit generic addresses need .address_size 32, which atomjit does not support; use .u64",
        ));
    }
    let shared = match space.as_str() {
        "global" | "const" => false,
        "shared" | "shared::cta" => true,
        other => {
            return Err(q.unsupported(
                space_span,
                &format!("cvta for .{other} is not supported (only .global and .shared)"),
            ))
        }
    };
    let dst = lw.dst(&ops[0], Ty::U64, Width::Exact)?;
    if let Operand::Name { name, span, .. } = &ops[1] {
        if !lw.regs.is_register(name) && !to && matches!(space.as_str(), "global" | "const") {
            if let Some(addr) = lw.global_address(name, *span) {
                // Module variables live in global memory, whose addresses are their own
                // generic addresses.
                return Lowered::one(Op::Mov {
                    ty: Ty::U64,
                    dst,
                    src: addr?,
                });
            }
        }
        if !lw.regs.is_register(name) {
            let var =
                lw.shared
                    .get(name)
                    .filter(|_| shared && !to)
                    .ok_or_else(|| {
                        SyntaxError::new(
                    *span,
                    format!("`{name}` is not a register or (for cvta.shared) a .shared variable"),
                )
                    })?;
            return Lowered::one(Op::Mov {
                ty: Ty::U64,
                dst,
                src: IrOp::Imm(GENERIC_SHARED_BASE + var.offset as u64),
            });
        }
    }
    let a = lw.src(&ops[1], Ty::U64, Width::Exact)?;
    if !shared {
        return Lowered::one(Op::Mov {
            ty: Ty::U64,
            dst,
            src: a,
        });
    }
    Lowered::one(Op::Binary {
        op: if to { BinOp::Sub } else { BinOp::Add },
        ty: Ty::U64,
        dst,
        a: Src::plain(a),
        b: Src::plain(IrOp::Imm(GENERIC_SHARED_BASE)),
        ftz: false,
    })
}

// ---------------------------------------------------------------------------------------------
// Arithmetic

/// Float rounding and flush qualifiers of `add`/`sub`/`mul`/`div`: `.rn` is the IR's rounding
/// (and the default where PTX has one); `.rz`/`.rm`/`.rp` are rejected (the IR's float
/// arithmetic rounds to nearest even); `.ftz` only on `.f32`; `.sat` is rejected.
fn float_mods(q: &mut Quals, ty: Ty, rounding_required: bool) -> Result<bool, SyntaxError> {
    let rnd = q.one_of("rounding mode", &["rn", "rz", "rm", "rp"])?;
    let ftz = q.one_of("flush mode", &["ftz"])?;
    if let Some((_, span)) = q.one_of("saturation", &["sat"])? {
        return Err(q.unsupported(span, ".sat (clamping to [0, 1]) is not supported"));
    }
    if ty.is_int() {
        if let Some((r, span)) = rnd.or(ftz.clone()) {
            return Err(SyntaxError::new(
                span,
                format!("`.{r}` applies to float types only"),
            ));
        }
        return Ok(false);
    }
    match rnd {
        Some((r, span)) if r != "rn" => {
            return Err(q.unsupported(
                span,
                &format!(".{r}: only round-to-nearest-even (.rn) float arithmetic is supported"),
            ))
        }
        None if rounding_required => {
            return Err(SyntaxError::new(
                q.opcode_span,
                format!(
                    "`{}.{}` needs a rounding qualifier",
                    q.opcode,
                    type_name(ty)
                ),
            )
            .expected(".rn"))
        }
        _ => {}
    }
    if let Some((_, span)) = &ftz {
        if ty != Ty::F32 {
            return Err(SyntaxError::new(*span, "`.ftz` applies to .f32 only"));
        }
    }
    Ok(ftz.is_some())
}

fn reject_int_mods(q: &mut Quals) -> Result<(), SyntaxError> {
    if let Some((m, span)) = q.one_of("carry or saturation", &["cc", "sat"])? {
        return Err(q.unsupported(
            span,
            &format!(".{m} (carry flags / saturation) is not supported"),
        ));
    }
    Ok(())
}

fn binary(op: BinOp, ty: Ty, dst: Reg, a: Src, b: Src, ftz: bool) -> Op {
    Op::Binary {
        op,
        ty,
        dst,
        a,
        b,
        ftz,
    }
}

/// `add`/`sub.type d, a, b` → `Binary Add/Sub`.
fn lower_add_sub(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 3, "d, a, b", end)?;
    reject_int_mods(q)?;
    let ty = q.one_type(&with(INTS, &[Ty::F32, Ty::F64]))?;
    let ftz = float_mods(q, ty, false)?;
    let op = if q.opcode == "add" {
        BinOp::Add
    } else {
        BinOp::Sub
    };
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    let b = lw.src_plain(&ops[2], ty)?;
    Lowered::one(binary(op, ty, dst, a, b, ftz))
}

/// The `.lo`/`.hi`/`.wide` mode of integer `mul`/`mad`.
fn int_mode(q: &mut Quals, ty: Ty) -> Result<Option<(String, Span)>, SyntaxError> {
    let mode = q.one_of("result mode", &["lo", "hi", "wide"])?;
    match (&mode, ty.is_int()) {
        (None, true) => Err(SyntaxError::new(
            q.opcode_span,
            format!("integer `{}` needs .lo, .hi or .wide", q.opcode),
        )
        .expected(".lo .hi .wide")),
        (Some((m, span)), false) => Err(SyntaxError::new(
            *span,
            format!("`.{m}` applies to integer types only"),
        )),
        (Some((m, span)), true) if m == "wide" && ty.bits() == 64 => Err(SyntaxError::new(
            *span,
            ".wide exists only for 16- and 32-bit types (the result is twice as wide)",
        )),
        _ => Ok(mode),
    }
}

/// Twice as wide a type (for `.wide` results).
fn wide_of(ty: Ty) -> Ty {
    match ty {
        Ty::U16 => Ty::U32,
        Ty::S16 => Ty::S32,
        Ty::S32 => Ty::S64,
        Ty::U8
        | Ty::U32
        | Ty::U64
        | Ty::S8
        | Ty::S64
        | Ty::B16
        | Ty::B32
        | Ty::B64
        | Ty::F16
        | Ty::BF16
        | Ty::F32
        | Ty::F64
        | Ty::F16x2
        | Ty::BF16x2
        | Ty::B128 => Ty::U64,
    }
}

/// `mul.mode.type d, a, b` → `Binary Mul` (`.lo`), `MulHi` (`.hi`), `MulWide` (`.wide`, a
/// double-width destination); floats `mul{.rn}{.ftz}.f32/.f64` → `Binary Mul`.
fn lower_mul(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 3, "d, a, b", end)?;
    reject_int_mods(q)?;
    let ty = q.one_type(&with(INTS, &[Ty::F32, Ty::F64]))?;
    let mode = int_mode(q, ty)?;
    let ftz = float_mods(q, ty, false)?;
    let (op, dst_ty) = match mode.as_ref().map(|(m, _)| m.as_str()) {
        Some("hi") => (BinOp::MulHi, ty),
        Some("wide") => (BinOp::MulWide, wide_of(ty)),
        _ => (BinOp::Mul, ty),
    };
    let dst = lw.dst(&ops[0], dst_ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    let b = lw.src_plain(&ops[2], ty)?;
    Lowered::one(binary(op, ty, dst, a, b, ftz))
}

/// `mad.mode.type d, a, b, c`. 32-bit types → `Imad` (`.lo`, `.hi`, `.wide`); 16- and 64-bit
/// types → the product into a scratch register, then `Add` of `c` (wrapping, exactly the
/// `mad` formula `d = (a*b).mode + c`). Float `mad`/`fma` is rejected: the IR has no fused
/// multiply-add, and a separate multiply and add would round twice.
fn lower_mad(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 4, "d, a, b, c", end)?;
    reject_int_mods(q)?;
    if q.items
        .iter()
        .any(|(n, _)| matches!(n.as_str(), "f32" | "f64" | "rn" | "rz" | "rm" | "rp"))
    {
        // `mad.rnd.f32`/`.f64` is `fma.rnd` (PTX ISA: "mad.f32 computes the product of a and
        // b to infinite precision and then adds c ... identical to fma.rnd.f32").
        return bits::lower_fma(lw, q, ops, end);
    }
    let ty = q.one_type(INTS)?;
    let mode = int_mode(q, ty)?.map(|(m, _)| m).unwrap_or_default();
    let (imad_mode, mul_op, res_ty) = match mode.as_str() {
        "hi" => (ImadMode::Hi, BinOp::MulHi, ty),
        "wide" => (ImadMode::Wide, BinOp::MulWide, wide_of(ty)),
        _ => (ImadMode::Lo, BinOp::Mul, ty),
    };
    let dst = lw.dst(&ops[0], res_ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    let b = lw.src_plain(&ops[2], ty)?;
    let c = lw.src_plain(&ops[3], res_ty)?;
    // `mad.hi` adds a 32-bit `c` to the high half; `ImadMode::Hi` adds a 64-bit pair to the
    // whole product (SASS `IMAD.HI`), so `.hi` takes the two-op path.
    if ty.bits() == 32 && imad_mode != ImadMode::Hi {
        return Lowered::one(Op::Imad {
            mode: imad_mode,
            signed: ty.is_signed_int(),
            dst,
            a,
            b,
            c,
        });
    }
    let t = lw.scratch()?;
    Lowered::ops(vec![
        binary(mul_op, ty, t, a, b, false),
        binary(BinOp::Add, res_ty, dst, Src::plain(IrOp::Reg(t)), c, false),
    ])
}

/// `mul24`/`mad24.{lo,hi}.{u32,s32}`: the operands' low 24 bits (sign-extended for `.s32`)
/// are multiplied into a 48-bit product; `.lo` keeps bits 31..0, `.hi` bits 47..16; `mad24`
/// adds `c`. Lowered through scratch registers: the two extended operands, then `Mul` (`.lo`)
/// or `MulWide` and a 64-bit shift right by 16 (`.hi`).
fn lower_mul24(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    let mad = q.opcode == "mad24";
    count(
        q,
        ops,
        if mad { 4 } else { 3 },
        if mad { "d, a, b, c" } else { "d, a, b" },
        end,
    )?;
    reject_int_mods(q)?;
    let ty = q.one_type(&[Ty::U32, Ty::S32])?;
    let mode = q.one_of("result mode", &["lo", "hi"])?;
    let Some((mode, _)) = mode else {
        return Err(
            SyntaxError::new(q.opcode_span, format!("`{}` needs .lo or .hi", q.opcode))
                .expected(".lo .hi"),
        );
    };
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    let b = lw.src_plain(&ops[2], ty)?;
    let c = if mad {
        Some(lw.src_plain(&ops[3], ty)?)
    } else {
        None
    };
    let t = lw.scratch()?;
    let (ta, tb, prod) = (t, t.word(1), t.word(2));
    let mut out = Vec::new();
    for (x, slot) in [(a, ta), (b, tb)] {
        if ty == Ty::S32 {
            out.push(binary(
                BinOp::Shl,
                Ty::B32,
                slot,
                x,
                Src::plain(IrOp::Imm(8)),
                false,
            ));
            out.push(binary(
                BinOp::Shr,
                Ty::S32,
                slot,
                Src::plain(IrOp::Reg(slot)),
                Src::plain(IrOp::Imm(8)),
                false,
            ));
        } else {
            out.push(binary(
                BinOp::And,
                Ty::B32,
                slot,
                x,
                Src::plain(IrOp::Imm(0x00ff_ffff)),
                false,
            ));
        }
    }
    let (ra, rb) = (Src::plain(IrOp::Reg(ta)), Src::plain(IrOp::Reg(tb)));
    let result_to = |d: Reg| if c.is_some() { prod } else { d };
    if mode == "lo" {
        out.push(binary(BinOp::Mul, ty, result_to(dst), ra, rb, false));
    } else {
        let wide = if ty == Ty::S32 { Ty::S64 } else { Ty::U64 };
        out.push(binary(BinOp::MulWide, ty, prod, ra, rb, false));
        out.push(binary(
            BinOp::Shr,
            wide,
            prod,
            Src::plain(IrOp::Reg(prod)),
            Src::plain(IrOp::Imm(16)),
            false,
        ));
        if c.is_none() {
            out.push(Op::Mov {
                ty: Ty::B32,
                dst,
                src: IrOp::Reg(prod),
            });
        }
    }
    if let Some(c) = c {
        out.push(binary(
            BinOp::Add,
            ty,
            dst,
            Src::plain(IrOp::Reg(prod)),
            c,
            false,
        ));
    }
    Lowered::ops(out)
}

/// `div.type` / `rem.type` for integers → `Binary Div/Rem`; `div.rn{.ftz}.f32` and
/// `div.rn.f64` → `Binary Div` (IEEE division rounded to nearest even). `div.approx`/`div.full`
/// are approximations with documented error bounds, not one exact result: rejected.
fn lower_div_rem(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 3, "d, a, b", end)?;
    let div = q.opcode == "div";
    let allowed = if div {
        with(INTS, &[Ty::F32, Ty::F64])
    } else {
        INTS.to_vec()
    };
    if let Some((m, span)) = q.one_of("approximation", &["approx", "full"])? {
        return Err(q.unsupported(
            span,
            &format!(".{m} division is approximate; only exact div.rn is supported"),
        ));
    }
    let ty = q.one_type(&allowed)?;
    let ftz = float_mods(q, ty, true)?;
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    let b = lw.src_plain(&ops[2], ty)?;
    Lowered::one(binary(
        if div { BinOp::Div } else { BinOp::Rem },
        ty,
        dst,
        a,
        b,
        ftz,
    ))
}

/// `min`/`max.type d, a, b` → `Binary Min/Max` (signed or unsigned by type; floats are IEEE
/// `minNum`/`maxNum`, PTX's rule that a NaN operand yields the other operand). `.NaN`,
/// `.xorsign.abs` and `.relu` are rejected.
fn lower_min_max(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 3, "d, a, b", end)?;
    if let Some((m, span)) = q.one_of("variant", &["NaN", "xorsign", "abs", "relu"])? {
        return Err(q.unsupported(span, &format!(".{m} is not supported")));
    }
    let ty = q.one_type(&with(INTS, &[Ty::F32, Ty::F64]))?;
    let ftz = q.has("ftz")?;
    if ftz && ty != Ty::F32 {
        return Err(SyntaxError::new(
            q.opcode_span,
            "`.ftz` applies to .f32 only",
        ));
    }
    let op = if q.opcode == "min" {
        BinOp::Min
    } else {
        BinOp::Max
    };
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    let b = lw.src_plain(&ops[2], ty)?;
    Lowered::one(binary(op, ty, dst, a, b, ftz))
}

/// `abs`/`neg.type d, a` → `Unary Abs/Neg` (signed integers wrap; floats act on the sign bit).
fn lower_abs_neg(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 2, "d, a", end)?;
    if let Some((_, span)) = q.one_of("flush mode", &["ftz"])? {
        return Err(q.unsupported(span, ".ftz on abs/neg is not supported"));
    }
    let ty = q.one_type(&[Ty::S16, Ty::S32, Ty::S64, Ty::F32, Ty::F64])?;
    let op = if q.opcode == "abs" {
        UnOp::Abs
    } else {
        UnOp::Neg
    };
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    Lowered::one(Op::Unary { op, ty, dst, a })
}

/// `and`/`or`/`xor`/`not`/`cnot`: on `.pred` → `PredLogic`; on bit types → `Binary`/`Unary
/// Not`; `cnot` (`d = a == 0 ? 1 : 0`) → `SetP` into the scratch predicate and `Select`.
fn lower_logic(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    let unary = matches!(q.opcode.as_str(), "not" | "cnot");
    count(
        q,
        ops,
        if unary { 2 } else { 3 },
        if unary { "d, a" } else { "d, a, b" },
        end,
    )?;
    let tys = q.types()?;
    let kind = match tys.as_slice() {
        [(k, _)] => *k,
        _ => {
            return Err(
                SyntaxError::new(q.opcode_span, format!("`{}` takes one type", q.opcode))
                    .expected(".pred .b16 .b32 .b64"),
            )
        }
    };
    let bool_op = match q.opcode.as_str() {
        "and" => BoolOp::And,
        "or" => BoolOp::Or,
        _ => BoolOp::Xor,
    };
    let ty = match kind {
        Kind::Value(ty) => ty,
        Kind::Pred => return lower_pred_logic(lw, q, ops, bool_op, unary),
    };
    if !BITS.contains(&ty) {
        return Err(SyntaxError::new(
            q.opcode_span,
            format!("`{}` takes a bit type, not .{}", q.opcode, type_name(ty)),
        )
        .expected(".pred .b16 .b32 .b64"));
    }
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    match q.opcode.as_str() {
        "not" => Lowered::one(Op::Unary {
            op: UnOp::Not,
            ty,
            dst,
            a,
        }),
        "cnot" => {
            let p = lw.regs.scratch_pred(lw.span)?;
            Lowered::ops(vec![
                Op::SetP {
                    cmp: CmpOp::Eq,
                    ty,
                    combine: BoolOp::And,
                    dst: p,
                    dst2: Pred::PT,
                    a,
                    b: Src::plain(IrOp::Imm(0)),
                    c: PredSrc::TRUE,
                    chain: None,
                },
                Op::Select {
                    ty,
                    dst,
                    a: Src::plain(IrOp::Imm(1)),
                    b: Src::plain(IrOp::Imm(0)),
                    pred: PredSrc {
                        pred: p,
                        negate: false,
                    },
                },
            ])
        }
        _ => {
            let b = lw.src_plain(&ops[2], ty)?;
            let op = match bool_op {
                BoolOp::And => BinOp::And,
                BoolOp::Or => BinOp::Or,
                BoolOp::Xor => BinOp::Xor,
            };
            Lowered::one(binary(op, ty, dst, a, b, false))
        }
    }
}

/// `and`/`or`/`xor`/`not.pred` → `PredLogic` (`not p` is `!p and true`).
fn lower_pred_logic(
    lw: &mut Lowerer,
    q: &Quals,
    ops: &[Operand],
    bool_op: BoolOp,
    unary: bool,
) -> Result<Lowered, SyntaxError> {
    if q.opcode == "cnot" {
        return Err(
            SyntaxError::new(q.opcode_span, "`cnot` has no .pred form").expected(".b16 .b32 .b64")
        );
    }
    let dst = lw.pred_dst(&ops[0])?;
    let a = lw.pred_src(&ops[1])?;
    if unary {
        return Lowered::one(Op::PredLogic {
            op: BoolOp::And,
            dst,
            a: PredSrc {
                negate: !a.negate,
                ..a
            },
            b: PredSrc::TRUE,
        });
    }
    let b = lw.pred_src(&ops[2])?;
    Lowered::one(Op::PredLogic {
        op: bool_op,
        dst,
        a,
        b,
    })
}

/// `shl.bN` / `shr.{b,u,s}N d, a, b` → `Binary Shl/Shr` (`shr.s*` is arithmetic). `b` is a
/// `.u32` amount; amounts of the register width or more give 0 (or the sign), PTX's clamping.
fn lower_shift(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 3, "d, a, b", end)?;
    let ty = if q.opcode == "shl" {
        q.one_type(BITS)?
    } else {
        q.one_type(&with(BITS, INTS))?
    };
    let op = if q.opcode == "shl" {
        BinOp::Shl
    } else {
        BinOp::Shr
    };
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    let b = lw.src_plain(&ops[2], Ty::U32)?;
    Lowered::one(binary(op, ty, dst, a, b, false))
}

/// `popc`/`clz.b32/.b64 d, a` (a 32-bit count) and `brev.b32/.b64` → `Unary`.
fn lower_bits(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 2, "d, a", end)?;
    let ty = q.one_type(&[Ty::B32, Ty::B64])?;
    let (op, dst_ty) = match q.opcode.as_str() {
        "popc" => (UnOp::Popc, Ty::U32),
        "clz" => (UnOp::Clz, Ty::U32),
        _ => (UnOp::Brev, ty),
    };
    let dst = lw.dst(&ops[0], dst_ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    Lowered::one(Op::Unary { op, ty, dst, a })
}

/// `lop3.b32 d, a, b, c, immLut` → `Lop3`.
fn lower_lop3(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 5, "d, a, b, c, immLut", end)?;
    q.one_type(&[Ty::B32])?;
    let dst = lw.dst(&ops[0], Ty::B32, Width::Exact)?;
    let a = lw.src_plain(&ops[1], Ty::B32)?;
    let b = lw.src_plain(&ops[2], Ty::B32)?;
    let c = lw.src_plain(&ops[3], Ty::B32)?;
    let lut = match &ops[4] {
        Operand::Literal {
            lit:
                Literal::Int {
                    value,
                    negative: false,
                },
            ..
        } if *value <= 0xff => *value as u8,
        other @ (Operand::Name { .. }
        | Operand::Special { .. }
        | Operand::Literal { .. }
        | Operand::Address { .. }
        | Operand::Surface { .. }
        | Operand::Vector { .. }
        | Operand::PredPair { .. }
        | Operand::Sink { .. }) => {
            return Err(
                SyntaxError::new(other.span(), "immLut is an 8-bit literal").expected("0x00..0xff")
            )
        }
    };
    Lowered::one(Op::Lop3 {
        dst,
        pred_out: Pred::PT,
        a,
        b,
        c,
        lut,
    })
}

/// `setp.cmp{.bool}.type p[|q], a, b{, {!}c}` → `SetP`: `p = cmp(a, b) bool c` and
/// `q = !cmp(a, b) bool c` (without `.bool`, `p = cmp`, `q = !cmp`). Bit types compare only
/// `.eq`/`.ne`; `.lo .ls .hi .hs` are the unsigned comparisons; the unordered forms and
/// `.num`/`.nan` exist only for floats. `.ftz` comparisons are rejected.
fn lower_setp(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    const CMPS: &[&str] = &[
        "eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs", "equ", "neu", "ltu", "leu",
        "gtu", "geu", "num", "nan",
    ];
    let Some((cmp_name, cmp_span)) = q.one_of("comparison", CMPS)? else {
        return Err(
            SyntaxError::new(q.opcode_span, "`setp` needs a comparison").expected(dotted(CMPS))
        );
    };
    let bool_op = q.one_of("boolean operation", &["and", "or", "xor"])?;
    if let Some((_, span)) = q.one_of("flush mode", &["ftz"])? {
        return Err(q.unsupported(span, ".ftz comparisons are not supported"));
    }
    let ty = q.one_type(&with(&with(BITS, INTS), &[Ty::F32, Ty::F64]))?;
    let n = if bool_op.is_some() { 4 } else { 3 };
    count(
        q,
        ops,
        n,
        if n == 4 {
            "p[|q], a, b, {!}c"
        } else {
            "p[|q], a, b"
        },
        end,
    )?;
    let cmp = match cmp_name.as_str() {
        "eq" => CmpOp::Eq,
        "ne" => CmpOp::Ne,
        "lt" | "lo" => CmpOp::Lt,
        "le" | "ls" => CmpOp::Le,
        "gt" | "hi" => CmpOp::Gt,
        "ge" | "hs" => CmpOp::Ge,
        "equ" => CmpOp::Equ,
        "neu" => CmpOp::Neu,
        "ltu" => CmpOp::Ltu,
        "leu" => CmpOp::Leu,
        "gtu" => CmpOp::Gtu,
        "geu" => CmpOp::Geu,
        "num" => CmpOp::Num,
        _ => CmpOp::Nan,
    };
    let bad = |what: &str| {
        Err(SyntaxError::new(
            cmp_span,
            format!(
                "`.{cmp_name}` is not a comparison for {what} (.{})",
                type_name(ty)
            ),
        ))
    };
    let unsigned_only = matches!(cmp_name.as_str(), "lo" | "ls" | "hi" | "hs");
    let float_only = cmp.is_float_only();
    if BITS.contains(&ty) && !matches!(cmp, CmpOp::Eq | CmpOp::Ne) {
        return bad("bit types, which compare only .eq and .ne");
    }
    if float_only && !ty.is_float() {
        return bad("integers");
    }
    if unsigned_only && !matches!(ty, Ty::U16 | Ty::U32 | Ty::U64) {
        return bad("this type (.lo .ls .hi .hs are unsigned)");
    }
    let (dst, dst2) = match &ops[0] {
        Operand::PredPair { first, second, .. } => (
            lw.pred_name(&first.0, first.1)?,
            lw.pred_name(&second.0, second.1)?,
        ),
        other @ (Operand::Name { .. }
        | Operand::Special { .. }
        | Operand::Literal { .. }
        | Operand::Address { .. }
        | Operand::Surface { .. }
        | Operand::Vector { .. }
        | Operand::Sink { .. }) => (lw.pred_dst(other)?, Pred::PT),
    };
    let a = lw.src_plain(&ops[1], ty)?;
    let b = lw.src_plain(&ops[2], ty)?;
    let (combine, c) = match bool_op {
        None => (BoolOp::And, PredSrc::TRUE),
        Some((b, _)) => (
            match b.as_str() {
                "and" => BoolOp::And,
                "or" => BoolOp::Or,
                _ => BoolOp::Xor,
            },
            lw.pred_src(&ops[3])?,
        ),
    };
    Lowered::one(Op::SetP {
        cmp,
        ty,
        combine,
        dst,
        dst2,
        a,
        b,
        c,
        chain: None,
    })
}

/// `selp.type d, a, b, c` → `Select` (`d = c ? a : b`).
fn lower_selp(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 4, "d, a, b, c", end)?;
    let ty = q.one_type(&with(&with(BITS, INTS), &[Ty::F32, Ty::F64]))?;
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    let b = lw.src_plain(&ops[2], ty)?;
    let pred = lw.pred_src(&ops[3])?;
    Lowered::one(Op::Select {
        ty,
        dst,
        a,
        b,
        pred,
    })
}

/// `cvt{.rnd}{.ftz}.dtype.atype d, a` → `Convert`. Integer ↔ integer takes no rounding;
/// float → integer needs `.rni .rzi .rmi .rpi`; integer → float and narrowing float → float
/// need `.rn .rz .rm .rp`; widening float → float is exact and takes none. `.ftz` needs an
/// `.f32` side. `.sat`, `.relu`, `.satfinite` and same-type float rounding are rejected. A
/// special register source is read into a scratch register first.
fn lower_cvt(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    if ops.len() == 3 {
        return lower_cvt_pack(lw, q, ops);
    }
    count(q, ops, 2, "d, a", end)?;
    let rnd = q.one_of(
        "rounding mode",
        &[
            "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi", "rna", "rs",
        ],
    )?;
    let ftz = q.one_of("flush mode", &["ftz"])?;
    if let Some((m, span)) = q.one_of("saturation", &["sat", "relu", "satfinite"])? {
        return Err(q.unsupported(span, &format!(".{m} conversions are not supported")));
    }
    let tys = q.types()?;
    let (dst_ty, src_ty) = match tys.as_slice() {
        [(Kind::Value(d), _), (Kind::Value(s), _)] => (*d, *s),
        _ => {
            return Err(SyntaxError::new(
                q.opcode_span,
                "`cvt` takes a destination and a source type",
            )
            .expected("cvt.dtype.atype, e.g. cvt.u64.u32"))
        }
    };
    let cvt_types = [
        Ty::U8,
        Ty::U16,
        Ty::U32,
        Ty::U64,
        Ty::S8,
        Ty::S16,
        Ty::S32,
        Ty::S64,
        Ty::F16,
        Ty::BF16,
        Ty::F32,
        Ty::F64,
    ];
    for t in [dst_ty, src_ty] {
        if !cvt_types.contains(&t) {
            return Err(SyntaxError::new(
                q.opcode_span,
                format!("`cvt` does not convert .{}", type_name(t)),
            )
            .expected(".u8..u64 .s8..s64 .f16 .bf16 .f32 .f64"));
        }
    }
    let int_rnd = ["rni", "rzi", "rmi", "rpi"];
    let float_rnd = ["rn", "rz", "rm", "rp"];
    let rnd_name = rnd.as_ref().map(|(r, _)| r.as_str());
    let here = rnd.as_ref().map(|(_, s)| *s).unwrap_or(q.opcode_span);
    let need = |set: &[&str], what: &str| -> Result<Round, SyntaxError> {
        match rnd_name {
            Some(r) if set.contains(&r) => Ok(round_of(r)),
            Some(r) => Err(
                SyntaxError::new(here, format!("`.{r}` is not the rounding of {what}"))
                    .expected(dotted(set)),
            ),
            None => Err(SyntaxError::new(
                q.opcode_span,
                format!("{what} needs a rounding qualifier"),
            )
            .expected(dotted(set))),
        }
    };
    let none = |what: &str| -> Result<Round, SyntaxError> {
        match rnd_name {
            None => Ok(Round::Nearest),
            Some(r) => Err(SyntaxError::new(
                here,
                format!("{what} takes no rounding qualifier (.{r})"),
            )),
        }
    };
    let round = match (dst_ty.is_float(), src_ty.is_float()) {
        (false, false) => none("an integer to integer conversion")?,
        (false, true) => need(&int_rnd, "a float to integer conversion")?,
        (true, false) => need(&float_rnd, "an integer to float conversion")?,
        (true, true) => {
            if dst_ty == src_ty {
                return Err(q.unsupported(
                    here,
                    "rounding a float to an integral value of the same type is not supported",
                ));
            } else if dst_ty.bits() < src_ty.bits() || (dst_ty.bits() == src_ty.bits()) {
                need(&float_rnd, "a narrowing float conversion")?
            } else {
                none("a widening float conversion (exact)")?
            }
        }
    };
    if let Some((_, span)) = &ftz {
        if dst_ty != Ty::F32 && src_ty != Ty::F32 {
            return Err(SyntaxError::new(
                *span,
                "`.ftz` needs an .f32 source or destination",
            ));
        }
    }
    let dst = lw.dst(&ops[0], dst_ty, Width::WiderTo32)?;
    let mut pre = Vec::new();
    let a = if let Operand::Special { name, span } = &ops[1] {
        let sr = special(name).ok_or_else(|| {
            SyntaxError::new(
                *span,
                format!("the special register `{name}` is not supported"),
            )
        })?;
        if src_ty.bits() != 32 {
            return Err(SyntaxError::new(
                *span,
                "special registers are 32-bit (.u32)",
            ));
        }
        let t = lw.scratch()?;
        pre.push(Op::ReadSpecial { dst: t, sr });
        IrOp::Reg(t)
    } else {
        lw.src(&ops[1], src_ty, Width::WiderTo32)?
    };
    pre.push(Op::Convert {
        dst_ty,
        src_ty,
        round,
        ftz: ftz.is_some(),
        dst,
        a: Src::plain(a),
    });
    Lowered::ops(pre)
}

/// `cvt.rn{.relu}.f16x2.f32 d, a, b` and `cvt.rn.bf16x2.f32`: `a` and `b` rounded to nearest
/// even, `a`'s half in the upper 16 bits of `d` and `b`'s in the lower (PTX ISA `cvt`). Two
/// `Convert`s into the scratch slots, then `Bfi` packs them. `.relu` and `.satfinite` are
/// rejected by the caller's qualifier check.
fn lower_cvt_pack(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
) -> Result<Lowered, SyntaxError> {
    let Some((r, rspan)) = q.one_of("rounding mode", &["rn", "rz", "rm", "rp", "rna", "rs"])?
    else {
        return Err(
            SyntaxError::new(q.opcode_span, "`cvt` to a packed pair needs .rn").expected(".rn"),
        );
    };
    if r != "rn" {
        return Err(q.unsupported(
            rspan,
            &format!(".{r}: packed conversions are supported with .rn only"),
        ));
    }
    let tys = q.types()?;
    let half = match tys.as_slice() {
        [(Kind::Value(Ty::F16x2), _), (Kind::Value(Ty::F32), _)] => Ty::F16,
        [(Kind::Value(Ty::BF16x2), _), (Kind::Value(Ty::F32), _)] => Ty::BF16,
        _ => return Err(SyntaxError::new(
            q.opcode_span,
            "a three-operand `cvt` packs two .f32 values: cvt.rn.f16x2.f32 or cvt.rn.bf16x2.f32",
        )
        .expected("cvt.rn.f16x2.f32 d, a, b")),
    };
    let pair = if half == Ty::F16 {
        Ty::F16x2
    } else {
        Ty::BF16x2
    };
    let dst = lw.dst(&ops[0], pair, Width::Exact)?;
    let a = lw.src_plain(&ops[1], Ty::F32)?;
    let b = lw.src_plain(&ops[2], Ty::F32)?;
    let t = lw.scratch()?;
    let cvt = |dst: Reg, a: Src| Op::Convert {
        dst_ty: half,
        src_ty: Ty::F32,
        round: Round::Nearest,
        ftz: false,
        dst,
        a,
    };
    Lowered::ops(vec![
        cvt(t, a),
        cvt(t.word(1), b),
        Op::Bfi {
            ty: Ty::B32,
            dst,
            insert: Src::plain(IrOp::Reg(t)),
            base: Src::plain(IrOp::Reg(t.word(1))),
            pos: Src::plain(IrOp::Imm(16)),
            len: Src::plain(IrOp::Imm(16)),
        },
    ])
}

// ---------------------------------------------------------------------------------------------
// Control and synchronisation

/// `bra{.uni} LABEL` → `Branch` (`.uni` is the IR's `uniform` promise).
fn lower_bra(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 1, "a label", end)?;
    let uniform = q.has("uni")?;
    let label = lw.label(&ops[0])?;
    Ok(Lowered {
        ops: vec![Op::Branch {
            target: u32::MAX,
            uniform,
        }],
        label: Some(label),
        overrides: Vec::new(),
    })
}

/// `bar{.cta}.sync a`, `barrier{.cta}.sync{.aligned} a` → `Barrier { id: a }` with `a` a
/// literal 0..15. `.aligned` promises that every thread executes the same barrier; the IR
/// barrier is correct without the promise. Thread counts, register barrier ids, `.arrive`,
/// `.red` and `bar.warp.sync` are rejected.
fn lower_bar(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    let _ = lw;
    q.has("cta")?;
    if let Some((m, span)) = q.one_of("barrier kind", &["arrive", "red", "warp", "cluster"])? {
        return Err(q.unsupported(span, &format!("`{}.{m}` is not supported", q.opcode)));
    }
    if q.has("sync")? {
        if q.opcode == "barrier" {
            q.has("aligned")?;
        }
    } else {
        return Err(
            SyntaxError::new(q.opcode_span, format!("`{}` needs .sync", q.opcode))
                .expected(format!("{}.sync", q.opcode)),
        );
    }
    if ops.len() == 2 {
        return Err(q.unsupported(
            ops[1].span(),
            "a barrier thread count is not supported (all threads of the CTA take part)",
        ));
    }
    count(q, ops, 1, "a barrier number", end)?;
    match &ops[0] {
        Operand::Literal {
            lit: Literal::Int {
                value,
                negative: false,
            },
            ..
        } if *value <= 15 => Lowered::one(Op::Barrier { id: *value as u32 }),
        other @ Operand::Name { .. } | other @ Operand::Special { .. } | other @ Operand::Literal { .. } | other @ Operand::Address { .. } | other @ Operand::Surface { .. } | other @ Operand::Vector { .. } | other @ Operand::PredPair { .. } | other @ Operand::Sink { .. } => Err(SyntaxError::new(
            other.span(),
            "the barrier number must be a literal 0..15 (\"Each CTA instance has sixteen barriers numbered 0..15\")",
        )
        .expected("0..15")),
    }
}

/// `ret{.uni}` and `exit` → `Exit` (a kernel entry returns by finishing its threads).
fn lower_exit(q: &mut Quals, ops: &[Operand], end: Span) -> Result<Lowered, SyntaxError> {
    count(q, ops, 0, "no operands", end)?;
    if q.opcode == "ret" {
        q.has("uni")?;
    }
    Lowered::one(Op::Exit)
}

/// `membar.{cta,gl,sys}` → `Fence { SeqCst }` at scope cta/gpu/sys: "On sm_70 and higher
/// membar is a synonym for fence.sc, and the membar levels cta, gl and sys are synonymous with
/// the fence scopes cta, gpu and sys respectively."
fn lower_membar(q: &mut Quals, ops: &[Operand], end: Span) -> Result<Lowered, SyntaxError> {
    count(q, ops, 0, "no operands", end)?;
    if let Some((_, span)) = q.one_of("proxy", &["proxy"])? {
        return Err(q.unsupported(span, "proxy fences are not supported"));
    }
    let Some((level, _)) = q.one_of("level", &["cta", "gl", "sys"])? else {
        return Err(
            SyntaxError::new(q.opcode_span, "`membar` needs a level").expected(".cta .gl .sys")
        );
    };
    let scope = match level.as_str() {
        "cta" => Scope::Cta,
        "sys" => Scope::Sys,
        _ => Scope::Gpu,
    };
    Lowered::one(Op::Fence {
        order: MemOrder::SeqCst,
        scope,
    })
}

/// `fence{.sem}.scope` → `Fence`; `.sem` is `.sc`, `.acq_rel` (the default), `.acquire` or
/// `.release`. Proxy, `.op_restrict` and `.sync_restrict` fences are rejected.
fn lower_fence(q: &mut Quals, ops: &[Operand], end: Span) -> Result<Lowered, SyntaxError> {
    count(q, ops, 0, "no operands", end)?;
    for (i, (name, span)) in q.items.iter().enumerate() {
        if !q.used[i]
            && (name == "proxy"
                || name == "mbarrier_init"
                || name.starts_with("sync_restrict")
                || name.contains("::"))
        {
            return Err(q.unsupported(
                *span,
                &format!(".{name}: proxy and restricted fences are not supported"),
            ));
        }
    }
    let sem = q.one_of("semantics", &["sc", "acq_rel", "acquire", "release"])?;
    let order = match sem.as_ref().map(|(s, _)| s.as_str()) {
        Some("sc") => MemOrder::SeqCst,
        Some("acquire") => MemOrder::Acquire,
        Some("release") => MemOrder::Release,
        _ => MemOrder::AcqRel,
    };
    let Some((scope, _)) = q.one_of("scope", SCOPES)? else {
        return Err(SyntaxError::new(q.opcode_span, "`fence` needs a scope")
            .expected(".cta .cluster .gpu .sys"));
    };
    Lowered::one(Op::Fence {
        order,
        scope: scope_of(&scope),
    })
}

/// `nanosleep.u32 t` → `Nop`: the PTX ISA guarantees only that the sleep lasts between 0 and
/// `2*t` nanoseconds, and 0 is in that interval. (Spinning code still lets others run: the
/// scheduler yields at every backward branch.)
fn lower_nanosleep(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 1, "t", end)?;
    q.one_type(&[Ty::U32])?;
    // The operand is still checked (a register or a literal of .u32).
    lw.src(&ops[0], Ty::U32, Width::Exact)?;
    Lowered::one(Op::Nop)
}

// ---------------------------------------------------------------------------------------------
// Atomics

/// Types whose `add` requires `.noftz`.
const HALF_TYPES: &[Ty] = &[Ty::F16, Ty::F16x2, Ty::BF16, Ty::BF16x2];

/// `atom{.sem}{.scope}{.space}.op{.noftz}.type d, [a], b{, c}` and
/// `red{.sem}{.scope}{.space}.op{.noftz}.type [a], b` → `Atomic` (`red` and `atom` with the bit
/// bucket `_` have `dst = RZ`).
///
/// * Defaults (PTX ISA): no `.sem` is `.relaxed`, no `.scope` is `.gpu`, no space is generic
///   addressing. `atom` takes `.relaxed .acquire .release .acq_rel`, `red` only `.relaxed
///   .release`; there is no `.sc` atomic (a sequentially consistent RMW is `fence.sc` then
///   `atom`, `001_e732919ae3db9bea.txt`).
/// * `.noftz` exists only for `add` on `.f16 .f16x2 .bf16 .bf16x2`, where it is required.
///   (The PTX ISA also lists `atom.add.noftz.f32`, but ptxas 12.9 rejects it: "Illegal modifier
///   '.noftz' for instruction 'atom'", so atomjit does too.) `atom.add.f32` flushes subnormals
///   on global memory and not on shared memory: the IR's `ftz` is set for `.global` and generic
///   addresses (where it applies only to addresses that resolve to global memory) and clear
///   for `.shared`.
/// * What else ptxas refuses is refused with its message: an immediate operand of the
///   half-precision adds, 16-bit atomics other than `cas.b16`, `.bf16`/`.bf16x2` adds below
///   `.target sm_90`.
/// * The op×type table (PTX ISA Table 41/42) is checked by the validator.
/// * `.b128` (PTX ISA 8.3, sm_90): `atom.exch.b128` and `atom.cas.b128` on `.b128` registers,
///   one 16-byte atomic each (`ir::Ty::B128`).
/// * Vector atomics (PTX ISA 8.1, sm_90): `atom`/`red` `.v2`/`.v4` `.add.f32` and `.v2`/`.v4`/
///   `.v8` `.f16`/`.bf16`, `.v2`/`.v4` `.f16x2`/`.bf16x2` with `.add`/`.min`/`.max.noftz`, on
///   `.global` or a generic address, lower to one IR vector atomic: each element is its own
///   atomic, computing as the scalar atomic of its type ("the atomicity is guaranteed
///   separately for each of the individual scalar elements"); the `.f32` add flushes
///   subnormals, as `atom.add.f32` does on global memory (ptxas writes it `ATOMG.E.ADD.F32x2.
///   FTZ.RN`). Elements whose registers are not consecutive IR slots (or literals of the f32
///   add, which ptxas accepts) go through the staging slots. What ptxas refuses is refused
///   with its message: `.shared`, `.noftz` on the f32 add, `min`/`max` of f32, other types or
///   ops, literals of the half types (ptxas crashes on them), and targets below sm_90.
fn lower_atom(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    let red = q.opcode == "red";
    let sems: &[&str] = &[
        "relaxed", "acquire", "release", "acq_rel", "sc", "weak", "volatile",
    ];
    let order = match q.one_of("memory order", sems)? {
        None => MemOrder::Relaxed,
        Some((s, span)) => match s.as_str() {
            "relaxed" => MemOrder::Relaxed,
            "release" => MemOrder::Release,
            "acquire" | "acq_rel" if !red => {
                if s == "acquire" {
                    MemOrder::Acquire
                } else {
                    MemOrder::AcqRel
                }
            }
            "sc" => {
                return Err(SyntaxError::new(
                    span,
                    format!("there is no `{}.sc`: a sequentially consistent read-modify-write is `fence.sc` followed by `atom` (001_e732919ae3db9bea.txt)", q.opcode),
                )
                .expected(if red { ".relaxed .release" } else { ".relaxed .acquire .release .acq_rel" }))
            }
            _ => {
                return Err(SyntaxError::new(
                    span,
                    format!("`{}` cannot be .{s}", q.opcode),
                )
                .expected(if red { ".relaxed .release" } else { ".relaxed .acquire .release .acq_rel" }))
            }
        },
    };
    let scope = q
        .one_of("scope", SCOPES)?
        .map(|(s, _)| scope_of(&s))
        .unwrap_or(Scope::Gpu);
    let space = mem_space(q, false)?;
    let op_names: &[&str] = if red {
        &[
            "and", "or", "xor", "add", "inc", "dec", "min", "max", "cas", "exch",
        ]
    } else {
        &[
            "and", "or", "xor", "cas", "exch", "add", "inc", "dec", "min", "max",
        ]
    };
    let Some((op_name, op_span)) = q.one_of("operation", op_names)? else {
        return Err(
            SyntaxError::new(q.opcode_span, format!("`{}` needs an operation", q.opcode))
                .expected(dotted(op_names)),
        );
    };
    if red && matches!(op_name.as_str(), "cas" | "exch") {
        return Err(SyntaxError::new(
            op_span,
            format!("`red` has no .{op_name} (it returns nothing); use `atom`"),
        )
        .expected(".and .or .xor .add .inc .dec .min .max"));
    }
    let op = AtomicOp::from_name(&op_name).unwrap_or(AtomicOp::Add);
    let noftz = q.one_of("flush mode", &["noftz"])?;
    let vector = match q.one_of("vector width", &["v2", "v4", "v8"])? {
        None => 1u8,
        Some((v, _)) => match v.as_str() {
            "v2" => 2,
            "v4" => 4,
            _ => 8,
        },
    };
    for i in 0..q.items.len() {
        let (name, span) = q.items[i].clone();
        if q.used[i] {
            continue;
        }
        if name == "L2::cache_hint" {
            return Err(q.unsupported(
                span,
                ".L2::cache_hint (with a cache-policy operand) is not supported",
            ));
        }
    }
    let ty = q.one_type(&[
        Ty::B16,
        Ty::B32,
        Ty::B64,
        Ty::U32,
        Ty::S32,
        Ty::U64,
        Ty::S64,
        Ty::F16,
        Ty::F16x2,
        Ty::BF16,
        Ty::BF16x2,
        Ty::F32,
        Ty::F64,
        Ty::B128,
    ])?;
    if vector > 1 {
        return lower_vector_atom(
            lw,
            q,
            ops,
            end,
            (order, scope, space),
            (op, &op_name),
            ty,
            vector,
            noftz,
        );
    }
    if ty == Ty::B128 {
        if !matches!(op, AtomicOp::Exch | AtomicOp::Cas) {
            return Err(SyntaxError::new(
                op_span,
                format!(
                    "ptxas rejects `{}.{op_name}.b128` (\"Operation .{op_name} requires .u32 or .s32 or .u64 ... type\"): the 128-bit atomics are exch and cas",
                    q.opcode
                ),
            )
            .expected(".exch.b128 or .cas.b128"));
        }
        if lw.target < 90 {
            return Err(SyntaxError::new(
                q.opcode_span,
                format!(
                    "ptxas rejects `atom.{op_name}.b128` below sm_90 (\"requires .target sm_90 or higher\"); this module targets sm_{}",
                    lw.target
                ),
            ));
        }
    }
    let half = HALF_TYPES.contains(&ty);
    match &noftz {
        Some((_, span)) if op == AtomicOp::Add && ty == Ty::F32 => {
            return Err(SyntaxError::new(
                *span,
                format!(
                    "ptxas rejects `.noftz` on `{}.add.f32` (\"Illegal modifier '.noftz' for instruction '{}'\"); `.noftz` is for the .f16 .f16x2 .bf16 .bf16x2 adds",
                    q.opcode, q.opcode
                ),
            )
            .expected(format!("`{}.add.f32` without .noftz", q.opcode)))
        }
        Some((_, span)) if !(op == AtomicOp::Add && half) => {
            return Err(SyntaxError::new(
                *span,
                format!(
                    "`.noftz` exists only for add on .f16 .f16x2 .bf16 .bf16x2, not {}.{}",
                    op_name,
                    type_name(ty)
                ),
            ))
        }
        None if op == AtomicOp::Add && half => {
            return Err(SyntaxError::new(
                q.opcode_span,
                format!(
                    "`{}.add.{}` requires .noftz (\"atom.add.f16, atom.add.f16x2, atom.add.bf16 and atom.add.bf16x2 operations require the .noftz qualifier\")",
                    q.opcode,
                    type_name(ty)
                ),
            )
            .expected(".noftz"))
        }
        _ => {}
    }
    let ftz = op == AtomicOp::Add && ty == Ty::F32 && noftz.is_none() && space != MemSpace::Shared;
    let cas = op == AtomicOp::Cas;
    let (dst, addr_op, b_op, c_op) = if red {
        count(q, ops, 2, "[a], b", end)?;
        (Reg::RZ, &ops[0], &ops[1], None)
    } else if cas {
        count(q, ops, 4, "d, [a], b, c", end)?;
        (
            lw.dst(&ops[0], ty, Width::Exact)?,
            &ops[1],
            &ops[2],
            Some(&ops[3]),
        )
    } else {
        count(q, ops, 3, "d, [a], b", end)?;
        (lw.dst(&ops[0], ty, Width::Exact)?, &ops[1], &ops[2], None)
    };
    if half {
        if let Some(o) = [Some(b_op), c_op]
            .into_iter()
            .flatten()
            .find(|o| matches!(o, Operand::Literal { .. }))
        {
            return Err(SyntaxError::new(
                o.span(),
                format!(
                    "ptxas rejects an immediate operand of `{}.{op_name}.{}` (\"Arguments mismatch for instruction '{}'\"): the value must be in a register",
                    q.opcode,
                    type_name(ty),
                    q.opcode
                ),
            )
            .expected("a register"));
        }
    }
    if ty == Ty::B16 && op != AtomicOp::Cas {
        return Err(SyntaxError::new(
            q.opcode_span,
            format!(
                "ptxas rejects `{}.{op_name}.b16` (\"Arguments mismatch\"): the only 16-bit integer atomic is cas.b16",
                q.opcode
            ),
        ));
    }
    if matches!(ty, Ty::BF16 | Ty::BF16x2) && lw.target < 90 {
        return Err(SyntaxError::new(
            q.opcode_span,
            format!(
                "ptxas rejects `{}.add.noftz.{}` below sm_90 (\"requires .target sm_90 or higher\"); this module targets sm_{}",
                q.opcode,
                type_name(ty),
                lw.target
            ),
        ));
    }
    let (space, addr, mut out) = lw.address(addr_op, space, ty.bytes())?;
    let src = lw.src(b_op, ty, Width::Exact)?;
    let src2 = match c_op {
        Some(c) => Some(lw.src(c, ty, Width::Exact)?),
        None => None,
    };
    out.push(Op::Atomic(Box::new(AtomicInst {
        access: MemAccess {
            space,
            ty,
            vector: 1,
            order,
            scope,
            addr,
        },
        op,
        dst,
        src,
        src2,
        spin: false,
        ftz,
        performed: Pred::PT,
    })));
    Lowered::ops(out)
}

/// The vector forms of `atom`/`red` (see [`lower_atom`]): `order`, `scope` and `space` as
/// parsed, `op` with its name, the element type and count, and the `.noftz` qualifier.
#[allow(clippy::too_many_arguments)]
fn lower_vector_atom(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
    (order, scope, space): (MemOrder, Scope, MemSpace),
    (op, op_name): (AtomicOp, &str),
    ty: Ty,
    n: u8,
    noftz: Option<(String, Span)>,
) -> Result<Lowered, SyntaxError> {
    let feature = format!("{} instruction with vector types", q.opcode);
    if lw.target < 90 {
        return Err(SyntaxError::new(
            q.opcode_span,
            format!(
                "ptxas rejects vector atomics below sm_90 (\"Feature '{feature}' requires .target sm_90 or higher\"); this module targets sm_{}",
                lw.target
            ),
        ));
    }
    if space == MemSpace::Shared {
        return Err(SyntaxError::new(
            q.opcode_span,
            format!(
                "ptxas rejects a vector atomic on .shared (\"State space incorrect for feature '{feature}'\"): \"{} with vector type may be used only with .global space and with generic addressing where the address points to .global space\"",
                q.opcode
            ),
        )
        .expected(".global or a generic address"));
    }
    let half = HALF_TYPES.contains(&ty);
    let add_min_max = matches!(op, AtomicOp::Add | AtomicOp::Min | AtomicOp::Max);
    let counts: Option<&[u8]> = match ty {
        Ty::F32 => (op == AtomicOp::Add).then_some(&[2, 4]),
        Ty::F16 | Ty::BF16 => add_min_max.then_some(&[2, 4, 8]),
        Ty::F16x2 | Ty::BF16x2 => add_min_max.then_some(&[2, 4]),
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
        | Ty::F64
        | Ty::B128 => None,
    };
    let counts = match counts {
        Some(c) => c,
        None => {
            return Err(SyntaxError::new(
                q.opcode_span,
                format!(
                    "ptxas rejects `{}.{op_name}.v{n}.{}` (\"Unexpected instruction types specified for '{feature}'\"): the vector atomics are add on .f32 and add, min, max on .f16 .bf16 .f16x2 .bf16x2",
                    q.opcode,
                    type_name(ty)
                ),
            )
            .expected(".add.v2.f32 .add.v4.f32 .add.noftz.v8.f16 ..."))
        }
    };
    if !counts.contains(&n) {
        return Err(SyntaxError::new(
            q.opcode_span,
            format!(
                "ptxas rejects `.v{n}` with `.{}` (\"Vector type too large, exceeds 128 bit limit\"): {} takes {}",
                type_name(ty),
                type_name(ty),
                counts
                    .iter()
                    .map(|c| format!(".v{c}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
        ));
    }
    match (&noftz, half) {
        (Some((_, span)), false) => {
            return Err(SyntaxError::new(
                *span,
                format!(
                    "ptxas rejects `.noftz` on `{}.add.v{n}.f32` (\"Illegal modifier '.noftz' for instruction '{}'\"); it flushes subnormals as `{}.add.f32` on global memory does",
                    q.opcode, q.opcode, q.opcode
                ),
            ))
        }
        (None, true) => {
            return Err(SyntaxError::new(
                q.opcode_span,
                format!(
                    "ptxas rejects `{}.{op_name}.v{n}.{}` without .noftz (\"'.noftz' modifier required for instruction '{}' with type '.{}'\")",
                    q.opcode,
                    type_name(ty),
                    q.opcode,
                    type_name(ty)
                ),
            )
            .expected(".noftz"))
        }
        _ => {}
    }
    let red = q.opcode == "red";
    let form = if red {
        "[a], {b, ...}"
    } else {
        "{d, ...}, [a], {b, ...}"
    };
    count(q, ops, if red { 2 } else { 3 }, form, end)?;
    let (d_op, addr_op, b_op) = if red {
        (None, &ops[0], &ops[1])
    } else {
        (Some(&ops[0]), &ops[1], &ops[2])
    };
    let n_elems = usize::from(n);
    let words = ty.regs();
    let b_elems = elements(q, b_op, n_elems)?;
    let mut srcs = Vec::with_capacity(n_elems);
    for e in b_elems {
        if half && matches!(e, Operand::Literal { .. }) {
            return Err(SyntaxError::new(
                e.span(),
                format!(
                    "a literal element of `{}.{op_name}.v{n}.{}`: the value must be in a register (ptxas fails on it)",
                    q.opcode,
                    type_name(ty)
                ),
            )
            .expected("a register"));
        }
        srcs.push(lw.src(e, ty, Width::Exact)?);
    }
    // The destination: every element, or `_` for all of them.
    let mut dsts = Vec::with_capacity(n_elems);
    match d_op {
        None | Some(Operand::Sink { .. }) => {}
        Some(d) => {
            for e in elements(q, d, n_elems)? {
                dsts.push(lw.dst(e, ty, Width::Exact)?);
            }
        }
    }
    let (space, addr, mut out) = lw.address(addr_op, space, ty.bytes() * u32::from(n))?;
    let regs = all_registers(&srcs);
    // The staging slots: the operands in the first `n * words`, the results after them.
    let direct_src = regs.filter(|r| consecutive(r, words)).map(|r| r[0]);
    let staged_dst = !dsts.is_empty() && !consecutive(&dsts, words);
    let stage = if direct_src.is_none() || staged_dst {
        lw.staging()?
    } else {
        Reg::RZ
    };
    let src = match direct_src {
        Some(r) => IrOp::Reg(r),
        None => {
            for (k, s) in srcs.into_iter().enumerate() {
                out.push(element_mov(words, stage.word(k as u16 * words), s));
            }
            IrOp::Reg(stage)
        }
    };
    let dst = if dsts.is_empty() {
        Reg::RZ
    } else if staged_dst {
        stage.word(u16::from(n) * words)
    } else {
        dsts[0]
    };
    out.push(Op::Atomic(Box::new(AtomicInst {
        access: MemAccess {
            space,
            ty,
            vector: n,
            order,
            scope,
            addr,
        },
        op,
        dst,
        src,
        src2: None,
        spin: false,
        ftz: ty == Ty::F32,
        performed: Pred::PT,
    })));
    if staged_dst {
        for (k, d) in dsts.into_iter().enumerate() {
            if !d.is_rz() {
                out.push(element_mov(words, d, IrOp::Reg(dst.word(k as u16 * words))));
            }
        }
    }
    Lowered::ops(out)
}
