//! SASS mnemonics and modifiers, and their lowering to IR ops.
//!
//! Each mnemonic names its modifier *groups* (at most one modifier from each, in any order;
//! `.STRONG.GPU` counts as one modifier) and its operand forms. Op names map onto the IR's op
//! enums through their `from_name` (so `ATOMS.EXCH` is `AtomicOp::from_name("exch")`); a unit
//! test checks that every table entry has its IR op.

use super::super::lexer::{end_of, join, sub_span, SyntaxError, Token};
use super::super::program::number_word;
use super::operands::{
    any_predicate_word, imm_bits, is_pred, parse_operand, split_operands, want_address,
    want_half_src, want_pred_dst, want_pred_src, want_reg, want_src, ImmKind, Mods, Params, Parsed,
    RawOperand, SpecialName,
};
use crate::ir::{
    AtomicInst, AtomicOp, BinOp, BoolOp, CmpOp, Guard, HalfSel, ImadMode, MemAccess, MemOrder, Op,
    Operand, Pred, PredSrc, Reg, Round, Scalar, Scope, ShfInst, ShflMode, Space, Span, Src, SrcMod,
    Ty, UnOp, VoteMode,
};
use std::collections::HashMap;

mod surface;

/// What an instruction needs from its kernel to be lowered.
pub struct Ctx<'k> {
    pub params: &'k Params<'k>,
    /// Label name to instruction index.
    pub labels: &'k HashMap<String, u32>,
    /// cuobjdump address (from `/*0040*/` prefixes) to the instructions that carry it.
    pub addresses: &'k HashMap<u64, Vec<u32>>,
    pub num_insts: u32,
    pub source: &'k str,
    /// The index the instruction being lowered gets (`WARPSYNC` branches to itself).
    pub pc: u32,
}

/// A lowered instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Lowered {
    pub guard: Guard,
    pub op: Op,
    pub sched: Vec<String>,
}

/// The mnemonics this front-end accepts.
pub const MNEMONICS: &[&str] = &[
    "ATOMS",
    "ATOMG",
    "ATOM",
    "RED",
    "REDG",
    "SUATOM",
    "SURED",
    "SULD",
    "SUST",
    "MOV",
    "MOV32I",
    "UMOV",
    "R2UR",
    "S2R",
    "S2UR",
    "CS2R",
    "LDC",
    "ULDC",
    "IADD3",
    "UIADD3",
    "VIADD",
    "IMAD",
    "UIMAD",
    "LEA",
    "ULEA",
    "SHF",
    "USHF",
    "LOP3",
    "ULOP3",
    "PLOP3",
    "UPLOP3",
    "ISETP",
    "UISETP",
    "SEL",
    "USEL",
    "POPC",
    "UPOPC",
    "FLO",
    "UFLO",
    "PRMT",
    "UPRMT",
    "VOTE",
    "VOTEU",
    "SHFL",
    "REDUX",
    "LDS",
    "STS",
    "LDG",
    "STG",
    "LD",
    "ST",
    "FADD",
    "FMUL",
    "FFMA",
    "DADD",
    "DMUL",
    "DFMA",
    "FSETP",
    "DSETP",
    "IMNMX",
    "VIMNMX",
    "FMNMX",
    "FSEL",
    "MATCH",
    "QSPC",
    "F2FP",
    "BREV",
    "IABS",
    "UBREV",
    "HFMA2",
    "HADD2",
    "HMUL2",
    "I2F",
    "I2FP",
    "F2I",
    "BRA",
    "EXIT",
    "BAR",
    "MEMBAR",
    "ERRBAR",
    "CGAERRBAR",
    "CCTL",
    "BSSY",
    "BSYNC",
    "WARPSYNC",
    "YIELD",
    "NANOSLEEP",
    "BREAK",
    "NOP",
];

/// A modifier group: at most one of `choices` (upper case, without the dot).
struct Group {
    what: &'static str,
    choices: &'static [&'static str],
}

const fn group(what: &'static str, choices: &'static [&'static str]) -> Group {
    Group { what, choices }
}

/// The chosen modifier of each group, with its span.
type Chosen = Vec<Option<(&'static str, Span)>>;

const ATOMS_OPS: &[&str] = &[
    "ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS", "CAST",
];
const ATOMS_SIZES: &[&str] = &["U32", "S32", "U64", "32", "64", "128"];
const ATOMG_OPS: &[&str] = &[
    "ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS",
];
/// Generic `ATOM` also has `CAST` (compare-and-store, with `.SPIN`).
const ATOM_OPS: &[&str] = &[
    "ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS", "CAST",
];
const RED_OPS: &[&str] = &[
    "ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH",
];
const GLOBAL_ATOMIC_TYPES: &[&str] = &[
    "U32", "S32", "U64", "S64", "32", "64", "128", "F32", "F64", "F16X2", "BF16X2", "F32X2",
    "F32X4", "F16X4", "F16X8", "BF16X4", "BF16X8",
];
const ROUNDINGS: &[&str] = &["RN", "RZ", "RM", "RP"];
const STRONG: &[&str] = &["STRONG.CTA", "STRONG.SM", "STRONG.GPU", "STRONG.SYS"];
/// Cache eviction priorities on global and surface accesses (ptxas writes `.EF` for PTX's
/// `.cs`, "evict first"): they choose which cache line is replaced first and change no value,
/// so atomjit accepts and ignores them.
const EVICTION: &[&str] = &["EF", "EL", "LU", "EU", "NA"];
const LOAD_SIZES: &[&str] = &["U8", "S8", "U16", "S16", "32", "U32", "64", "128"];
const ISETP_CMPS: &[&str] = &["EQ", "NE", "LT", "LE", "GT", "GE"];
const BOOL_OPS: &[&str] = &["AND", "OR", "XOR"];

/// The IR atomic op of a SASS op name (`EXCH` is `AtomicOp::Exch`).
fn atomic_op(name: &str) -> AtomicOp {
    // The tables above only hold names of the IR enum (checked by a unit test); fall back to a
    // harmless value rather than panic.
    AtomicOp::from_name(&name.to_ascii_lowercase()).unwrap_or(AtomicOp::Add)
}

fn scope_of(strong: &str) -> Scope {
    match strong {
        // `.STRONG.SM` is what ptxas prints for CTA scope (a CTA runs on one SM).
        "STRONG.CTA" | "STRONG.SM" => Scope::Cta,
        "STRONG.SYS" => Scope::Sys,
        _ => Scope::Gpu,
    }
}

fn round_of(name: &str) -> Round {
    match name {
        "RZ" | "TRUNC" => Round::Zero,
        "RM" | "FLOOR" => Round::Down,
        "RP" | "CEIL" => Round::Up,
        _ => Round::Nearest,
    }
}

/// Lowers one instruction statement (guard, mnemonic, operands, annotations; no `;`).
pub fn lower(toks: &[Token], ctx: &Ctx) -> Result<Lowered, SyntaxError> {
    let mut i = 0;
    let mut guard = Guard::ALWAYS;
    if toks.first().is_some_and(|t| t.is_punct("@")) {
        i = 1;
        let negate = toks.get(1).is_some_and(|t| t.is_punct("!"));
        if negate {
            i += 1;
        }
        let Some(p) = toks.get(i).filter(|t| t.is_word()) else {
            let span = toks
                .get(i)
                .map(|t| t.span)
                .unwrap_or(end_of(toks[i - 1].span));
            return Err(
                SyntaxError::new(span, "expected a guard predicate after `@`")
                    .expected("P0..P6 or PT"),
            );
        };
        let pred = match any_predicate_word(p.text, p.span, ctx.params) {
            Some(r) => r?,
            None => {
                return Err(
                    SyntaxError::new(p.span, format!("`{}` is not a predicate", p.text))
                        .expected("P0..P6 or PT"),
                )
            }
        };
        guard = Guard { pred, negate };
        i += 1;
    }
    let Some(mnemonic) = toks.get(i) else {
        let span = toks.last().map(|t| end_of(t.span)).unwrap_or_default();
        return Err(
            SyntaxError::new(span, "expected an instruction after the guard")
                .expected("an instruction"),
        );
    };
    if !mnemonic.is_word() {
        return Err(
            SyntaxError::new(mnemonic.span, format!("unexpected {}", mnemonic.describe()))
                .expected("an instruction, a label `name:` or a directive"),
        );
    }
    let (operands, sched) = split_operands(&toks[i + 1..], ctx.source)?;
    let last = toks.last().map(|t| t.span).unwrap_or(mnemonic.span);
    let mut p = InstParser::new(mnemonic, operands, end_of(last), ctx)?;
    let op = p.dispatch()?;
    Ok(Lowered { guard, op, sched })
}

struct InstParser<'t, 'a, 'k> {
    ctx: &'k Ctx<'k>,
    /// The mnemonic word as written (`ATOMS.ADD.S32`).
    full: &'a str,
    opcode: String,
    opcode_span: Span,
    mnemonic_span: Span,
    mods: Vec<(String, Span)>,
    ops: Vec<RawOperand<'t, 'a>>,
    /// Where "missing operand" errors point.
    end: Span,
}

impl<'t, 'a, 'k> InstParser<'t, 'a, 'k> {
    fn new(
        mnemonic: &Token<'a>,
        ops: Vec<RawOperand<'t, 'a>>,
        end: Span,
        ctx: &'k Ctx<'k>,
    ) -> Result<Self, SyntaxError> {
        let text = mnemonic.text;
        let mut parts: Vec<(String, Span)> = Vec::new();
        let mut offset = 0;
        for part in text.split('.') {
            let span = sub_span(mnemonic.span, offset, offset + part.len());
            if part.is_empty() {
                return Err(SyntaxError::new(
                    sub_span(mnemonic.span, offset.saturating_sub(1), offset + 1),
                    "empty modifier",
                )
                .expected("a modifier name after `.`"));
            }
            parts.push((part.to_ascii_uppercase(), span));
            offset += part.len() + 1;
        }
        let (opcode, opcode_span) = parts.remove(0);
        // `.STRONG.GPU` is one modifier.
        let mut mods: Vec<(String, Span)> = Vec::new();
        let mut iter = parts.into_iter().peekable();
        while let Some((m, span)) = iter.next() {
            if m == "STRONG" {
                if let Some((next, nspan)) = iter.next() {
                    mods.push((format!("STRONG.{next}"), join(span, nspan)));
                    continue;
                }
            }
            mods.push((m, span));
        }
        Ok(InstParser {
            ctx,
            full: text,
            opcode,
            opcode_span,
            mnemonic_span: mnemonic.span,
            mods,
            ops,
            end,
        })
    }

    fn dispatch(&mut self) -> Result<Op, SyntaxError> {
        match self.opcode.as_str() {
            "ATOMS" => self.atoms(),
            "ATOMG" | "ATOM" => self.global_atomic(false),
            "RED" | "REDG" => self.global_atomic(true),
            "SUATOM" => self.suatom(false),
            "SURED" => self.suatom(true),
            "SULD" => self.surface_load_store(true),
            "SUST" => self.surface_load_store(false),
            "R2UR" if self.ops.len() == 3 => self.r2ur_test(),
            "MOV" | "MOV32I" | "UMOV" | "R2UR" => self.mov(),
            "S2R" | "S2UR" => self.s2r(),
            "LDC" | "ULDC" => self.ldc(),
            "VIADD" => self.viadd(),
            "FLO" | "UFLO" => self.flo(),
            "PRMT" | "UPRMT" => self.prmt(),
            "SHFL" => self.shfl(),
            "REDUX" => self.redux(),
            "HFMA2" | "HADD2" | "HMUL2" => self.half2(),
            "PLOP3" | "UPLOP3" => self.plop3(),
            // Convergence barriers and scheduling hints. atomjit's scheduler reconverges a
            // diverged warp at the immediate post-dominator of the branch (docs/execution-model.md),
            // which is where ptxas places the `BSYNC` of a `BSSY` region; `YIELD` only lets
            // other warps run (the scheduler already interleaves warps at backward branches).
            // They change no value, so they lower to no-ops. `WARPSYNC` waits for its lanes
            // (see `warpsync`).
            "BSSY" | "BSYNC" | "YIELD" => {
                self.classify(&[])?;
                match self.opcode.as_str() {
                    "BSSY" => self.count(2, 2, "Bn, target")?,
                    "BSYNC" => self.count(1, 1, "Bn")?,
                    _ => self.count(0, 0, "no operands")?,
                }
                Ok(Op::Nop)
            }
            "WARPSYNC" => {
                let m = self.classify(&[group("mask form", &["ALL", "EXCLUSIVE"])])?;
                if let Some(("EXCLUSIVE", _)) = m[0] {
                    // `WARPSYNC.EXCLUSIVE Rmask` splits the warp into the groups of lanes that
                    // name the same mask (cooperative-groups tiles), so the collective ops up to
                    // the `BSYNC` closing the enclosing `BSSY` region see one tile at a time.
                    // The rejoin point is found once the kernel's calls are inlined (`split`).
                    self.count(1, 1, "the lane mask")?;
                    return Ok(Op::WarpSplit {
                        mask: self.src(0, ImmKind::Int32, Mods::Plain, "the lane mask")?,
                        rejoin: super::split::UNRESOLVED,
                        wait: true,
                    });
                }
                self.warpsync(m[0].is_some())
            }
            // The cluster error barrier: with clusters of one CTA there is nothing to wait for.
            "CGAERRBAR" => self.no_operands(Op::Nop),
            "CS2R" => self.cs2r(),
            // The uniform datapath's ops compute exactly as their vector twins; their registers
            // are uniform slots (`ir::Uniform`), which the backends broadcast.
            "IADD3" | "UIADD3" => self.iadd3(),
            "IMAD" | "UIMAD" => self.imad(),
            "LEA" | "ULEA" => self.lea(),
            "SHF" | "USHF" => self.shf(),
            "LOP3" | "ULOP3" => self.lop3(),
            "ISETP" | "UISETP" => self.isetp(),
            "SEL" | "USEL" => self.sel(),
            "POPC" | "UPOPC" => self.popc(),
            "VOTE" | "VOTEU" => self.vote(),
            "LDS" | "LDG" | "LD" => self.load(),
            "STS" | "STG" | "ST" => self.store(),
            "FADD" | "FMUL" | "FFMA" | "DADD" | "DMUL" | "DFMA" => self.float_binary(),
            "FSETP" | "DSETP" => self.float_setp(),
            "IMNMX" | "VIMNMX" | "FMNMX" => self.min_max(),
            "MATCH" => self.match_op(),
            "F2FP" => self.f2fp(),
            "QSPC" => self.qspc(),
            // `IABS Rd, Ra`: the 32-bit absolute value, wrapping (`|INT_MIN|` is `INT_MIN`,
            // 0x80000000 read unsigned), as ptxas's signed division uses it.
            "IABS" => {
                self.classify(&[])?;
                self.count(2, 2, "Rd, Ra")?;
                Ok(Op::Unary {
                    op: UnOp::Abs,
                    ty: Ty::S32,
                    dst: self.reg(0, "Rd (a register)")?,
                    a: self.src(1, ImmKind::Int32, Mods::Plain, "Ra")?,
                })
            }
            "BREV" | "UBREV" => {
                self.classify(&[])?;
                self.count(2, 2, "Rd, Ra")?;
                Ok(Op::Unary {
                    op: UnOp::Brev,
                    ty: Ty::U32,
                    dst: self.reg(0, "Rd (a register)")?,
                    a: self.src(1, ImmKind::Int32, Mods::Plain, "Ra")?,
                })
            }
            "FSEL" => {
                self.classify(&[])?;
                self.count(4, 4, "Rd, Ra, Rb, Pp")?;
                Ok(Op::Select {
                    ty: Ty::F32,
                    dst: self.reg(0, "Rd (a register)")?,
                    a: self.src(1, ImmKind::F32, Mods::FloatNegAbs, "Ra")?,
                    b: self.src(2, ImmKind::F32, Mods::FloatNegAbs, "Rb")?,
                    pred: self.pred_src(3, "Pp (a predicate)")?,
                })
            }
            // `NANOSLEEP` suspends the thread for about the given time, a hint with no effect on
            // values; `BREAK Bn` takes the executing lanes out of convergence barrier `Bn` so a
            // later `BSYNC Bn` does not wait for them, and `BSYNC` is a no-op here (above).
            "NANOSLEEP" | "BREAK" => {
                self.classify(&[])?;
                self.count(
                    1,
                    1,
                    if self.opcode == "BREAK" {
                        "Bn"
                    } else {
                        "the time"
                    },
                )?;
                Ok(Op::Nop)
            }
            // `I2FP` is sm_86+'s integer-to-float on the FMA pipe: the same conversion.
            "I2F" | "I2FP" => self.i2f(),
            "MUFU" => self.mufu(),
            "F2I" => self.f2i(),
            "BRA" => self.bra(),
            "EXIT" => self.no_operands(Op::Exit),
            "BAR" => self.bar(),
            "MEMBAR" => self.membar(),
            // NOP, and the two companions cuobjdump prints around `MEMBAR` for
            // `__threadfence()`: ERRBAR (wait for outstanding memory errors to be reported)
            // and CCTL.IVALL (invalidate the L1 cache). On the host every access is checked
            // synchronously and memory is coherent, so both have no effect: they are NOPs.
            "NOP" | "ERRBAR" => self.no_operands(Op::Nop),
            "CCTL" => {
                let m = self.classify(&[group("operation", &["IVALL"])])?;
                self.required(&m, 0, "operation")?;
                self.count(0, 0, "no operands")?;
                Ok(Op::Nop)
            }
            _ => Err(SyntaxError::new(
                self.opcode_span,
                format!("unknown instruction `{}`", self.opcode),
            )
            .expected(format!("one of {}", MNEMONICS.join(" ")))),
        }
    }

    // -----------------------------------------------------------------------------------------
    // helpers

    fn params(&self) -> &'k Params<'k> {
        self.ctx.params
    }

    /// Assigns each modifier to its group; unknown or conflicting modifiers are errors.
    fn classify(&self, groups: &[Group]) -> Result<Chosen, SyntaxError> {
        let mut chosen: Chosen = vec![None; groups.len()];
        for (m, span) in &self.mods {
            let found = groups
                .iter()
                .enumerate()
                .find_map(|(gi, g)| g.choices.iter().find(|c| **c == m).map(|c| (gi, *c)));
            let Some((gi, choice)) = found else {
                let expected = if groups.is_empty() {
                    format!("no modifiers on {}", self.opcode)
                } else {
                    let lists: Vec<String> = groups
                        .iter()
                        .map(|g| {
                            g.choices
                                .iter()
                                .map(|c| format!(".{c}"))
                                .collect::<Vec<_>>()
                                .join(" ")
                        })
                        .collect();
                    format!("one of {}", lists.join(" "))
                };
                return Err(SyntaxError::new(
                    *span,
                    format!("unknown modifier `.{m}` for {}", self.opcode),
                )
                .expected(expected));
            };
            if let Some((prev, _)) = chosen[gi] {
                return Err(SyntaxError::new(
                    *span,
                    format!(
                        "`.{m}` conflicts with `.{prev}`: both set the {}",
                        groups[gi].what
                    ),
                )
                .expected(format!("one {} modifier", groups[gi].what)));
            }
            chosen[gi] = Some((choice, *span));
        }
        Ok(chosen)
    }

    fn required(
        &self,
        chosen: &Chosen,
        gi: usize,
        what: &str,
    ) -> Result<&'static str, SyntaxError> {
        chosen[gi].map(|(c, _)| c).ok_or_else(|| {
            SyntaxError::new(
                self.mnemonic_span,
                format!("`{}` needs an {what} modifier", self.full),
            )
            .expected(format!("an {what} modifier"))
        })
    }

    fn modifier_error(
        &self,
        chosen: &Chosen,
        gi: usize,
        message: &str,
        expected: &str,
    ) -> SyntaxError {
        let span = chosen[gi].map(|(_, s)| s).unwrap_or(self.mnemonic_span);
        SyntaxError::new(span, message.to_string()).expected(expected.to_string())
    }

    /// Checks the operand count.
    fn count(&self, min: usize, max: usize, form: &str) -> Result<(), SyntaxError> {
        let n = self.ops.len();
        if n > max {
            let extra = self.ops[max].span;
            return Err(
                SyntaxError::new(extra, format!("too many operands for `{}`", self.full))
                    .expected(form.to_string()),
            );
        }
        if n < min {
            return Err(SyntaxError::new(
                self.end,
                format!("too few operands for `{}` ({n} given)", self.full),
            )
            .expected(form.to_string()));
        }
        Ok(())
    }

    /// Operand `i`, or a "missing operand" error (a handler that reads before it counts).
    fn operand(&self, i: usize, what: &str) -> Result<&RawOperand<'t, 'a>, SyntaxError> {
        self.ops.get(i).ok_or_else(|| {
            SyntaxError::new(self.end, format!("`{}` is missing {what}", self.full))
                .expected(what.to_string())
        })
    }
    fn reg(&self, i: usize, what: &str) -> Result<Reg, SyntaxError> {
        want_reg(self.operand(i, what)?, self.params(), what)
    }
    fn src(&self, i: usize, kind: ImmKind, mods: Mods, what: &str) -> Result<Src, SyntaxError> {
        want_src(self.operand(i, what)?, self.params(), kind, mods, what)
    }
    fn pred_dst(&self, i: usize, what: &str) -> Result<Pred, SyntaxError> {
        want_pred_dst(self.operand(i, what)?, self.params(), what)
    }
    fn pred_src(&self, i: usize, what: &str) -> Result<PredSrc, SyntaxError> {
        want_pred_src(self.operand(i, what)?, self.params(), what)
    }
    /// An unsigned immediate in `0..=max`.
    fn small_imm(&self, i: usize, max: u32, what: &str) -> Result<u32, SyntaxError> {
        let op = &self.ops[i];
        match parse_operand(op, self.params())? {
            Parsed::Imm(imm) => match imm.lit.value {
                Scalar::Int(v) if (0..=max as i128).contains(&v) => Ok(v as u32),
                Scalar::Int(_) | Scalar::Float(_) => Err(SyntaxError::new(
                    op.span,
                    format!("{what} must be 0..={max}"),
                )
                .expected(format!("0..={max}"))),
            },
            other @ (Parsed::Reg { .. }
            | Parsed::Pred(_)
            | Parsed::Const { .. }
            | Parsed::Mem { .. }
            | Parsed::Special(_)
            | Parsed::Name(_)) => Err(SyntaxError::new(
                op.span,
                format!("expected {what} (an immediate), found {}", other.describe()),
            )
            .expected("an immediate")),
        }
    }

    fn no_operands(&self, op: Op) -> Result<Op, SyntaxError> {
        self.classify(&[])?;
        self.count(0, 0, "no operands")?;
        Ok(op)
    }

    // -----------------------------------------------------------------------------------------
    // atomics

    /// `ATOMS.POPC.INC.32 RZ, [address]`: what ptxas emits for `atomicAdd(&shared, 1)` whose
    /// result is unused. The executing lanes that name one address add their count to it (the
    /// population count of their mask, hence the name), which leaves memory exactly as every
    /// lane adding 1 does; that is how it lowers. The form that returns values (`Rd` not
    /// `RZ`) is not documented and is rejected.
    fn atoms_popc_inc(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("population count", &["POPC"]),
            group("operation", &["INC"]),
            group("size", &["32", "U32"]),
        ])?;
        self.required(&m, 1, "operation (.INC)")?;
        self.count(2, 2, "RZ, [Ra + ImmS24]")?;
        let dst = self.reg(0, "RZ")?;
        if !dst.is_rz() {
            return Err(SyntaxError::new(
                self.ops[0].span,
                "ATOMS.POPC.INC with a result register is not supported",
            )
            .expected("RZ"));
        }
        let addr = want_address(&self.ops[1], self.params(), false, false)?;
        Ok(Op::Atomic(Box::new(AtomicInst {
            access: MemAccess {
                space: Space::Shared,
                ty: Ty::U32,
                vector: 1,
                order: MemOrder::Relaxed,
                scope: Scope::Cta,
                addr,
            },
            op: AtomicOp::Add,
            dst,
            src: Operand::Imm(1),
            src2: None,
            spin: false,
            ftz: false,
            performed: Pred::PT,
        })))
    }

    /// `ATOMS.op{.sz} Rd, [Ra + ImmS24], Rb` and `ATOMS.CAS/.CAST{.SPIN}{.sz} Rd, [..], Rb, Rc`
    /// (`000_6d05a8552870c0ae.txt`). ATOMS has no memory-order modifiers: the document only
    /// promises atomicity ("without intervening accesses to that memory location by other
    /// threads"), which is `relaxed`; shared memory is visible to the CTA only, so its scope is
    /// `cta`. Encoding restrictions (immediate alignment and range, op×size, register pairs)
    /// are checked by validation, so the exact immediate and registers are kept here.
    fn atoms(&self) -> Result<Op, SyntaxError> {
        if self.mods.iter().any(|(m, _)| m == "POPC") {
            return self.atoms_popc_inc();
        }
        let m = self.classify(&[
            group("operation", ATOMS_OPS),
            group("fast-fail option", &["SPIN"]),
            group("size", ATOMS_SIZES),
        ])?;
        let op = atomic_op(self.required(
            &m,
            0,
            "operation (one of .ADD .MIN .MAX .INC .DEC .AND .OR .XOR .EXCH .CAS .CAST)",
        )?);
        let spin = m[1].is_some();
        if spin && op != AtomicOp::Cast {
            return Err(self.modifier_error(
                &m,
                1,
                ".SPIN is only valid with .CAST",
                "ATOMS.CAST.SPIN",
            ));
        }
        // `.128` (sm_90's `ATOMS.CAS.128`, `ATOMS.EXCH.128`): a 128-bit atomic on register
        // quads (`ir::Ty::B128`; validation admits EXCH and CAS).
        let ty = match m[2].map(|(c, _)| c) {
            Some("S32") => Ty::S32,
            Some("U64" | "64") => Ty::U64,
            Some("128") => Ty::B128,
            _ => Ty::U32,
        };
        let compare = matches!(op, AtomicOp::Cas | AtomicOp::Cast);
        let form = if compare {
            "Rd, [Ra + ImmS24], Rb, Rc"
        } else {
            "Rd, [Ra + ImmS24], Rb"
        };
        if !compare && self.ops.len() == 4 {
            return Err(SyntaxError::new(
                self.ops[3].span,
                format!("`{}` takes no Rc operand: only .CAS and .CAST do (other operations assemble Rc as RZ)", self.full),
            )
            .expected(form));
        }
        let n = if compare { 4 } else { 3 };
        self.count(n, n, form)?;
        let dst = self.reg(0, "Rd (a register)")?;
        let addr = want_address(&self.ops[1], self.params(), false, false)?;
        let src = Operand::Reg(self.reg(2, "Rb (a register)")?);
        let src2 = if compare {
            Some(Operand::Reg(self.reg(3, "Rc (a register)")?))
        } else {
            None
        };
        Ok(Op::Atomic(Box::new(AtomicInst {
            access: MemAccess {
                space: Space::Shared,
                ty,
                vector: 1,
                order: MemOrder::Relaxed,
                scope: Scope::Cta,
                addr,
            },
            op,
            dst,
            src,
            src2,
            spin,
            ftz: false,
            performed: Pred::PT,
        })))
    }

    /// `ATOMG.E.op{.type}{.FTZ}{.RN}{.STRONG.scope} PT, Rd, [Ra.64 + imm], Rb{, Rc}`,
    /// `RED.E.op... [Ra.64 + imm], Rb`, and the generic `ATOM.E...`/`RED.E...` (the generic
    /// space: an address in the shared window reaches shared memory).
    ///
    /// `.STRONG.GPU/.SYS/.CTA` is a relaxed atomic at that scope; without `.STRONG` the
    /// atomic is relaxed at GPU scope (what cuobjdump prints for `atomicAdd`). `.E` selects
    /// 64-bit addressing: the base is a register pair whether or not `.64` is written; without
    /// `.E` the base is 32 bits (zero-extended) unless written `Ra.64`.
    ///
    /// sm_90's wide forms: `.128` (`EXCH`, `CAS`) is one 128-bit atomic on register quads
    /// (`ir::Ty::B128`); the vector forms are independent atomics per element
    /// (`ir::MemAccess::vector`): `.F32x2`/`.F32x4` (with `.FTZ.RN`) are 2 or 4 `f32` adds,
    /// `.F16x4`/`.F16x8` (and `BF16`) are 2 or 4 packed pairs (`F16x2` elements), each pair one
    /// 32-bit atomic as `.F16x2` is.
    fn global_atomic(&self, reduction: bool) -> Result<Op, SyntaxError> {
        if let Some((_, span)) = self.mods.iter().find(|(m, _)| reduction && m == "CAS") {
            return Err(SyntaxError::new(
                *span,
                "RED has no .CAS (a reduction returns nothing); use ATOMG.E.CAS",
            )
            .expected("one of .ADD .MIN .MAX .INC .DEC .AND .OR .XOR .EXCH"));
        }
        let generic = self.opcode == "ATOM";
        let ops = if reduction {
            RED_OPS
        } else if generic {
            ATOM_OPS
        } else {
            ATOMG_OPS
        };
        let m = self.classify(&[
            group("addressing", &["E"]),
            group("operation", ops),
            group("type", GLOBAL_ATOMIC_TYPES),
            group("flush-to-zero", &["FTZ"]),
            group("rounding", ROUNDINGS),
            group("strength", STRONG),
            group("fast-fail option", if generic { &["SPIN"] } else { &[] }),
            group("eviction priority", EVICTION),
        ])?;
        // `ATOM.E.CAST.SPIN` (a generic address, in practice one in shared memory): the
        // `ATOMS.CAST.SPIN` semantics, lanes grouped by bank (`ir::AtomicInst::spin`).
        let spin = m[6].is_some();
        if spin && m[1].map(|(c, _)| c) != Some("CAST") {
            return Err(self.modifier_error(
                &m,
                6,
                ".SPIN is only valid with .CAST",
                "ATOM.E.CAST.SPIN",
            ));
        }
        let op_names = if reduction {
            ".ADD .MIN .MAX .INC .DEC .AND .OR .XOR .EXCH"
        } else {
            ".ADD .MIN .MAX .INC .DEC .AND .OR .XOR .EXCH .CAS"
        };
        let op = match m[1] {
            Some((c, _)) => atomic_op(c),
            None => {
                self.required(&m, 1, &format!("operation (one of {op_names})"))?;
                AtomicOp::Add
            }
        };
        let (ty, vector) = match m[2].map(|(c, _)| c) {
            None | Some("U32" | "32") => (Ty::U32, 1),
            Some("S32") => (Ty::S32, 1),
            Some("U64" | "64") => (Ty::U64, 1),
            Some("S64") => (Ty::S64, 1),
            Some("128") => (Ty::B128, 1),
            Some("F32") => (Ty::F32, 1),
            Some("F32X2") => (Ty::F32, 2),
            Some("F32X4") => (Ty::F32, 4),
            Some("F16X2") => (Ty::F16x2, 1),
            Some("F16X4") => (Ty::F16x2, 2),
            Some("F16X8") => (Ty::F16x2, 4),
            Some("BF16X2") => (Ty::BF16x2, 1),
            Some("BF16X4") => (Ty::BF16x2, 2),
            Some("BF16X8") => (Ty::BF16x2, 4),
            Some(_) => (Ty::F64, 1),
        };
        let ftz = m[3].is_some();
        if ftz && ty != Ty::F32 {
            return Err(self.modifier_error(&m, 3, ".FTZ applies to .F32 only", ".F32.FTZ"));
        }
        match m[4].map(|(c, _)| c) {
            Some("RN") if !ty.is_float() => {
                return Err(self.modifier_error(
                    &m,
                    4,
                    ".RN applies to the float types only",
                    ".F32.RN, .F64.RN, .F16x2.RN, .BF16x2.RN or their vectors",
                ))
            }
            Some("RN") | None => {}
            Some(_) => {
                return Err(self.modifier_error(
                    &m,
                    4,
                    "atomic float operations round to nearest even only",
                    ".RN",
                ))
            }
        }
        let scope = m[5].map(|(c, _)| scope_of(c)).unwrap_or(Scope::Gpu);
        let wide_address = m[0].is_some();
        let compare = matches!(op, AtomicOp::Cas | AtomicOp::Cast);
        let mut performed = Pred::PT;
        let (dst, rest) = if reduction {
            self.count(2, 2, "[Ra.64 + offset], Rb")?;
            (Reg::RZ, 0)
        } else {
            // The predicate destination (`ir::AtomicInst::performed`): always true here.
            let has_pred = self.ops.first().is_some_and(is_pred);
            if has_pred {
                performed = self.pred_dst(0, "Pp (the performed predicate)")?;
            }
            let first = usize::from(has_pred);
            let form = if compare {
                "PT, Rd, [Ra.64 + offset], Rb, Rc"
            } else {
                "PT, Rd, [Ra.64 + offset], Rb"
            };
            let n = first + if compare { 4 } else { 3 };
            self.count(n, n, form)?;
            (self.reg(first, "Rd (a register)")?, first + 1)
        };
        let addr = want_address(&self.ops[rest], self.params(), wide_address, true)?;
        let src = Operand::Reg(self.reg(rest + 1, "Rb (a register)")?);
        let src2 = if compare {
            Some(Operand::Reg(self.reg(rest + 2, "Rc (a register)")?))
        } else {
            None
        };
        // `ATOM`/`RED` address the generic space (a pointer into the shared window works);
        // `ATOMG`/`REDG` the global space.
        let space = if matches!(self.opcode.as_str(), "ATOM" | "RED") {
            Space::Generic
        } else {
            Space::Global
        };
        Ok(Op::Atomic(Box::new(AtomicInst {
            access: MemAccess {
                space,
                ty,
                vector,
                order: MemOrder::Relaxed,
                scope,
                addr,
            },
            op,
            dst,
            src,
            src2,
            spin,
            ftz,
            performed,
        })))
    }

    // -----------------------------------------------------------------------------------------
    // moves and special registers

    /// `MOV Rd, Ra | imm | c[..][..]{, 0xf}`. The optional lane mask must be `0xf` (all
    /// bytes), the only form compilers emit; others are rejected.
    fn mov(&self) -> Result<Op, SyntaxError> {
        self.classify(&[])?;
        self.count(2, 3, "Rd, source{, 0xf}")?;
        let dst = self.reg(0, "Rd (a register)")?;
        let src = self
            .src(1, ImmKind::Int32, Mods::Plain, "the source")?
            .operand;
        if self.ops.len() == 3 && self.small_imm(2, 0xf, "the lane mask")? != 0xf {
            return Err(SyntaxError::new(
                self.ops[2].span,
                "partial MOV lane masks are not supported",
            )
            .expected("0xf"));
        }
        Ok(Op::Mov {
            ty: Ty::U32,
            dst,
            src,
        })
    }

    /// `R2UR Pp, URZ, Ra`: the predicate form of `R2UR` whose uniform result is discarded.
    /// NVIDIA does not document `R2UR`'s predicate destination. atomjit defines `Pp` as true
    /// when `Ra` holds the same value in every executing lane (so the move would lose
    /// nothing): [`Op::Match`] `.ALL` with the mask discarded. ptxas emits this form before
    /// `BRA.CONV` to choose between an inline and a called copy of the same
    /// `WARPSYNC.EXCLUSIVE` sequence, where either value of `Pp` computes the same result. A
    /// form that also moves a value (`R2UR Pp, URn, Ra`) is refused: its predicate would
    /// decide whether the moved value is used, and that meaning is not documented.
    fn r2ur_test(&self) -> Result<Op, SyntaxError> {
        self.classify(&[])?;
        let dst_pred = self.pred_dst(0, "Pp (a predicate)")?;
        let dst = self.operand(1, "URZ")?;
        if dst.toks.len() != 1 || dst.toks[0].text != "URZ" {
            return Err(SyntaxError::new(
                dst.span,
                "R2UR with a predicate destination is supported only with URZ as its register destination (NVIDIA does not document the predicate of a value-moving R2UR)",
            )
            .expected("URZ"));
        }
        Ok(Op::Match {
            all: true,
            ty: Ty::B32,
            dst: Reg::RZ,
            dst_pred,
            src: Operand::Reg(self.reg(2, "Ra (a register)")?),
        })
    }

    /// `S2R Rd, SR_TID.X` (and `.Y .Z`, `SR_CTAID.*`, `SR_LANEID`).
    fn s2r(&self) -> Result<Op, SyntaxError> {
        self.classify(&[])?;
        self.count(2, 2, "Rd, SR_...")?;
        let dst = self.reg(0, "Rd (a register)")?;
        match parse_operand(&self.ops[1], self.params())? {
            Parsed::Special(SpecialName::Sr(sr)) => Ok(Op::ReadSpecial { dst, sr }),
            other @ (Parsed::Reg { .. }
            | Parsed::Pred(_)
            | Parsed::Imm(_)
            | Parsed::Const { .. }
            | Parsed::Mem { .. }
            | Parsed::Special(_)
            | Parsed::Name(_)) => Err(SyntaxError::new(
                self.ops[1].span,
                format!("expected a special register, found {}", other.describe()),
            )
            .expected(
                "one of SR_TID.X SR_TID.Y SR_TID.Z SR_CTAID.X SR_CTAID.Y SR_CTAID.Z SR_LANEID",
            )),
        }
    }

    /// `CS2R Rd, SRZ`: zero the register pair `Rd`, `Rd+1`.
    fn cs2r(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[group("size", &["32"])])?;
        self.count(2, 2, "Rd, SRZ")?;
        let dst = self.reg(0, "Rd (a register)")?;
        match parse_operand(&self.ops[1], self.params())? {
            Parsed::Special(SpecialName::Zero) => {
                let ty = if m[0].is_some() { Ty::U32 } else { Ty::U64 };
                Ok(Op::Mov {
                    ty,
                    dst,
                    src: Operand::ZERO,
                })
            }
            other @ (Parsed::Reg { .. }
            | Parsed::Pred(_)
            | Parsed::Imm(_)
            | Parsed::Const { .. }
            | Parsed::Mem { .. }
            | Parsed::Special(_)
            | Parsed::Name(_)) => Err(SyntaxError::new(
                self.ops[1].span,
                format!("CS2R supports only SRZ, found {}", other.describe()),
            )
            .expected("SRZ")),
        }
    }

    // -----------------------------------------------------------------------------------------
    // integer arithmetic

    /// `IADD3{.X} Rd, {Pu, {Pv,}} Ra, Rb, Rc{, Pp{, Pq}}`: leading predicates are carry-outs;
    /// with `.X` one or two trailing predicates are carry-ins (a missing one is `!PT`).
    fn iadd3(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[group("extended (carry-in)", &["X"])])?;
        let extended = m[0].is_some();
        let form = if extended {
            "Rd, {Pu, {Pv,}} Ra, Rb, Rc, Pp{, Pq}"
        } else {
            "Rd, {Pu, {Pv,}} Ra, Rb, Rc"
        };
        self.count(4, 8, form)?;
        let dst = self.reg(0, "Rd (a register)")?;
        let mut i = 1;
        let mut carry_out = [Pred::PT; 2];
        for slot in &mut carry_out {
            if i < self.ops.len() && is_pred(&self.ops[i]) {
                *slot = self.pred_dst(i, "a carry-out predicate")?;
                i += 1;
            }
        }
        if self.ops.len() < i + 3 {
            return Err(SyntaxError::new(
                self.end,
                format!("too few operands for `{}`", self.full),
            )
            .expected(form));
        }
        let a = self.src(i, ImmKind::Int32, Mods::IntNegNot, "Ra")?;
        let b = self.src(i + 1, ImmKind::Int32, Mods::IntNegNot, "Rb")?;
        let c = self.src(i + 2, ImmKind::Int32, Mods::IntNegNot, "Rc")?;
        i += 3;
        let mut carry_in = [PredSrc::FALSE; 2];
        if extended {
            if i >= self.ops.len() {
                return Err(
                    SyntaxError::new(self.end, "IADD3.X needs a carry-in predicate").expected(form),
                );
            }
            for slot in &mut carry_in {
                if i < self.ops.len() {
                    *slot = self.pred_src(i, "a carry-in predicate")?;
                    i += 1;
                }
            }
        }
        if i < self.ops.len() {
            let message = if extended {
                "too many operands for `IADD3.X`"
            } else {
                "IADD3 takes carry-in predicates only with .X"
            };
            return Err(SyntaxError::new(self.ops[i].span, message).expected(form));
        }
        Ok(Op::IAdd3 {
            dst,
            carry_out,
            a,
            b,
            c,
            carry_in,
        })
    }

    /// `IMAD{.WIDE|.HI}{.U32} Rd, Ra, Rb, Rc` and the aliases `IMAD.MOV{.U32}`,
    /// `IMAD.SHL{.U32}`, `IMAD.IADD`, which are the plain multiply-add of their operands
    /// (`IMAD.SHL.U32 R0, R0, 0x4, RZ` is `R0 * 4`). Signed unless `.U32` (which only matters
    /// for `.HI` and `.WIDE`).
    fn imad(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("mode", &["WIDE", "HI", "MOV", "SHL", "IADD"]),
            group("signedness", &["U32", "S32"]),
            group("extended (carry-in)", &["X"]),
        ])?;
        if m[2].is_some() {
            return self.imad_x(&m);
        }
        let mode = match m[0].map(|(c, _)| c) {
            Some("WIDE") => ImadMode::Wide,
            Some("HI") => ImadMode::Hi,
            _ => ImadMode::Lo,
        };
        let signed = m[1].map(|(c, _)| c) != Some("U32");
        self.count(4, 4, "Rd, Ra, Rb, Rc")?;
        let dst = self.reg(0, "Rd (a register)")?;
        let a = self.src(1, ImmKind::Int32, Mods::IntNeg, "Ra")?;
        let b = self.src(2, ImmKind::Int32, Mods::IntNeg, "Rb")?;
        let c_kind = if mode != ImadMode::Lo {
            ImmKind::Int64
        } else {
            ImmKind::Int32
        };
        let c = self.src(3, c_kind, Mods::IntNeg, "Rc")?;
        // `IMAD.HI` adds the 64-bit register pair `Rc` (see `ir::Op::Imad`); ptxas writes a
        // register there, and what an immediate or constant means in that place is not known.
        if mode == ImadMode::Hi && !matches!(c.operand, Operand::Reg(_)) {
            return Err(SyntaxError::new(
                self.ops[3].span,
                "IMAD.HI adds a 64-bit register pair; an immediate or constant addend is not supported",
            )
            .expected("a register (the low word of the pair) or RZ"));
        }
        Ok(Op::Imad {
            mode,
            signed,
            dst,
            a,
            b,
            c,
        })
    }

    /// `IMAD.X Rd, Ra, Rb, Rc, Pp`: `Ra * Rb + Rc + Pp`. ptxas uses it with a zero factor
    /// (`IMAD.X R13, RZ, RZ, c[0x0][0x16c], P0`) as the high word of a 64-bit addition, which
    /// is `IADD3.X`; a nonzero product with carry-in is not supported.
    fn imad_x(&self, m: &Chosen) -> Result<Op, SyntaxError> {
        if m[0].is_some() {
            return Err(self.modifier_error(m, 0, "IMAD.X takes no mode", "IMAD.X"));
        }
        self.count(5, 5, "Rd, Ra, Rb, Rc, Pp")?;
        let dst = self.reg(0, "Rd (a register)")?;
        let a = self.src(1, ImmKind::Int32, Mods::IntNeg, "Ra")?;
        let b = self.src(2, ImmKind::Int32, Mods::IntNeg, "Rb")?;
        let zero = |s: &Src| matches!(s.operand, Operand::Imm(0)) || s.operand == Operand::ZERO;
        let one = |s: &Src| s.operand == Operand::Imm(1) && s.modifier == SrcMod::None;
        // `Ra * 1` (`IMAD.X R11, R3, 0x1, R9, P0`) is `Ra`; a zero factor drops the product.
        let product = if zero(&a) || zero(&b) {
            Src::plain(Operand::ZERO)
        } else if one(&b) {
            a
        } else if one(&a) {
            b
        } else {
            return Err(SyntaxError::new(
                self.ops[1].span,
                "IMAD.X with a product other than `Ra * 1` or zero is not supported",
            )
            .expected("IMAD.X Rd, RZ, RZ, Rc, Pp or IMAD.X Rd, Ra, 0x1, Rc, Pp"));
        };
        Ok(Op::IAdd3 {
            dst,
            carry_out: [Pred::PT, Pred::PT],
            a: product,
            b: self.src(3, ImmKind::Int32, Mods::IntNegNot, "Rc")?,
            c: Src::plain(Operand::ZERO),
            carry_in: [self.pred_src(4, "Pp (a predicate)")?, PredSrc::FALSE],
        })
    }

    /// `LEA Rd, {Pu,} Ra, Rb, shift`, `LEA.HI{.X} Rd, {Pu,} Ra, Rb, Rc, shift{, Pp}`,
    /// `LEA.HI{.X}.SX32 Rd, {Pu,} Ra, Rb, shift{, Pp}`.
    fn lea(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("high half", &["HI"]),
            group("extended (carry-in)", &["X"]),
            group("sign extension", &["SX32"]),
        ])?;
        let (hi, x, sx32) = (m[0].is_some(), m[1].is_some(), m[2].is_some());
        if sx32 && !hi {
            return Err(self.modifier_error(&m, 2, ".SX32 is only valid with .HI", "LEA.HI.SX32"));
        }
        if x && !hi {
            return Err(self.modifier_error(&m, 1, ".X is only valid with .HI", "LEA.HI.X"));
        }
        let has_c = hi && !sx32;
        let form = match (has_c, x) {
            (false, false) => "Rd, {Pu,} Ra, Rb, shift",
            (false, true) => "Rd, {Pu,} Ra, Rb, shift, Pp",
            (true, false) => "Rd, {Pu,} Ra, Rb, Rc, shift",
            (true, true) => "Rd, {Pu,} Ra, Rb, Rc, shift, Pp",
        };
        let has_carry_out = self.ops.get(1).is_some_and(is_pred);
        let n = 4 + usize::from(has_carry_out) + usize::from(has_c) + usize::from(x);
        self.count(n, n, form)?;
        let dst = self.reg(0, "Rd (a register)")?;
        let mut i = 1;
        let carry_out = if has_carry_out {
            i += 1;
            self.pred_dst(1, "the carry-out predicate")?
        } else {
            Pred::PT
        };
        let a = self.src(i, ImmKind::Int32, Mods::IntNegNot, "Ra")?;
        let b = self.src(i + 1, ImmKind::Int32, Mods::IntNegNot, "Rb")?;
        i += 2;
        let c = if has_c {
            i += 1;
            self.src(i - 1, ImmKind::Int32, Mods::IntNegNot, "Rc")?
        } else {
            Src::plain(Operand::ZERO)
        };
        let shift = self.small_imm(i, 31, "the shift")? as u8;
        let carry_in = if x {
            self.pred_src(i + 1, "the carry-in predicate")?
        } else {
            PredSrc::FALSE
        };
        Ok(Op::Lea {
            hi,
            sx32,
            dst,
            carry_out,
            a,
            b,
            c,
            shift,
            carry_in,
        })
    }

    /// `SHF.L|R{.W}.U32|S32|U64|S64{.HI} Rd, Ra(lo), shift, Rc(hi)`. SASS `.HI` selects the
    /// high word of the shifted 64-bit value; the IR's `high` flag selects the word other than
    /// the direction's default (see [`ShfInst`]), hence the mapping below.
    fn shf(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("direction", &["L", "R"]),
            group("wrap", &["W"]),
            group("type", &["U32", "S32", "U64", "S64"]),
            group("high word", &["HI"]),
        ])?;
        let left = self.required(&m, 0, "direction (.L or .R)")? == "L";
        let ty = match self.required(&m, 2, "type (.U32 .S32 .U64 or .S64)")? {
            "S32" => Ty::S32,
            "U64" => Ty::U64,
            "S64" => Ty::S64,
            _ => Ty::U32,
        };
        let sass_hi = m[3].is_some();
        self.count(4, 4, "Rd, Ra, shift, Rc")?;
        Ok(Op::Shf(ShfInst {
            left,
            wrap: m[1].is_some(),
            // IR `high` is SASS `.HI` in both directions (see `ShfInst`).
            high: sass_hi,
            ty,
            dst: self.reg(0, "Rd (a register)")?,
            lo: self.src(1, ImmKind::Int32, Mods::Plain, "Ra")?,
            shift: self.src(2, ImmKind::Int32, Mods::Plain, "the shift")?,
            hi: self.src(3, ImmKind::Int32, Mods::Plain, "Rc")?,
        }))
    }

    /// `LOP3.LUT {Pu,} Rd, Ra, Rb, Rc, lut{, !PT}`. The trailing predicate is an input of the
    /// predicate output; only `!PT` is supported when there is a predicate output (with none,
    /// `PT` and `!PT` both have no effect).
    fn lop3(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[group("lookup table", &["LUT"])])?;
        self.required(&m, 0, "lookup-table (.LUT)")?;
        let has_pred_out = self.ops.first().is_some_and(is_pred);
        let first = usize::from(has_pred_out);
        let form = "{Pu,} Rd, Ra, Rb, Rc, lut, !PT";
        self.count(first + 5, first + 6, form)?;
        let pred_out = if has_pred_out {
            self.pred_dst(0, "the predicate output")?
        } else {
            Pred::PT
        };
        let dst = self.reg(first, "Rd (a register)")?;
        let a = self.src(first + 1, ImmKind::Int32, Mods::Plain, "Ra")?;
        let b = self.src(first + 2, ImmKind::Int32, Mods::Plain, "Rb")?;
        let c = self.src(first + 3, ImmKind::Int32, Mods::Plain, "Rc")?;
        let lut = self.small_imm(first + 4, 0xff, "the lookup table")? as u8;
        if self.ops.len() == first + 6 {
            let p = self.pred_src(first + 5, "the predicate input")?;
            if !p.pred.is_pt() || (has_pred_out && !p.negate) {
                return Err(SyntaxError::new(
                    self.ops[first + 5].span,
                    "LOP3's predicate input must be !PT",
                )
                .expected("!PT"));
            }
        }
        Ok(Op::Lop3 {
            dst,
            pred_out,
            a,
            b,
            c,
            lut,
        })
    }

    /// `ISETP.cmp{.U32}{.AND|.OR|.XOR} Pu, Pv, Ra, Rb, Pp` (signed by default; `.AND` if no
    /// combining op is written).
    fn isetp(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("comparison", ISETP_CMPS),
            group("signedness", &["U32", "S32"]),
            group("combining operation", BOOL_OPS),
            group("extended (64-bit chain)", &["EX"]),
        ])?;
        // `.EX` chains the comparison of the low words (the last predicate operand) into a
        // comparison of wider values: `ir::Op::SetP`'s `chain`.
        let extended = m[3].is_some();
        let cmp_name = self.required(&m, 0, "comparison (one of .EQ .NE .LT .LE .GT .GE)")?;
        let cmp = CmpOp::from_name(&cmp_name.to_ascii_lowercase()).unwrap_or(CmpOp::Eq);
        let ty = if m[1].map(|(c, _)| c) == Some("U32") {
            Ty::U32
        } else {
            Ty::S32
        };
        let combine = m[2]
            .and_then(|(c, _)| BoolOp::from_name(&c.to_ascii_lowercase()))
            .unwrap_or(BoolOp::And);
        if extended {
            self.count(6, 6, "Pu, Pv, Ra, Rb, Pp, Pchain")?;
        } else {
            self.count(5, 5, "Pu, Pv, Ra, Rb, Pp")?;
        }
        let chain = if extended {
            Some(self.pred_src(5, "Pchain (a predicate)")?)
        } else {
            None
        };
        Ok(Op::SetP {
            cmp,
            ty,
            combine,
            dst: self.pred_dst(0, "Pu (a predicate)")?,
            dst2: self.pred_dst(1, "Pv (a predicate)")?,
            a: self.src(2, ImmKind::Int32, Mods::Plain, "Ra")?,
            b: self.src(3, ImmKind::Int32, Mods::Plain, "Rb")?,
            c: self.pred_src(4, "Pp (a predicate)")?,
            chain,
        })
    }

    /// `SEL Rd, Ra, Rb, Pp`: `Rd = Pp ? Ra : Rb`.
    fn sel(&self) -> Result<Op, SyntaxError> {
        self.classify(&[])?;
        self.count(4, 4, "Rd, Ra, Rb, Pp")?;
        Ok(Op::Select {
            ty: Ty::U32,
            dst: self.reg(0, "Rd (a register)")?,
            a: self.src(1, ImmKind::Int32, Mods::Plain, "Ra")?,
            b: self.src(2, ImmKind::Int32, Mods::Plain, "Rb")?,
            pred: self.pred_src(3, "Pp (a predicate)")?,
        })
    }

    /// `POPC Rd, Ra` (`~Ra` allowed).
    fn popc(&self) -> Result<Op, SyntaxError> {
        self.classify(&[])?;
        self.count(2, 2, "Rd, Ra")?;
        Ok(Op::Unary {
            op: UnOp::Popc,
            ty: Ty::U32,
            dst: self.reg(0, "Rd (a register)")?,
            a: self.src(1, ImmKind::Int32, Mods::Not, "Ra")?,
        })
    }

    /// `VOTE.ANY|ALL|EQ Rd, Pu, Pp` (ballot into Rd, the vote into Pu) or `VOTE.* Pu, Pp`.
    fn vote(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[group("mode", &["ANY", "ALL", "EQ"])])?;
        let mode = match self.required(&m, 0, "mode (.ANY .ALL or .EQ)")? {
            "ALL" => VoteMode::All,
            "EQ" => VoteMode::Eq,
            _ => VoteMode::Any,
        };
        self.count(2, 3, "{Rd,} Pu, Pp")?;
        let first = self.ops.len() - 2;
        let dst = if first == 1 {
            self.reg(0, "Rd (a register)")?
        } else {
            Reg::RZ
        };
        Ok(Op::Vote {
            mode,
            dst,
            dst_pred: self.pred_dst(first, "Pu (a predicate)")?,
            src: self.pred_src(first + 1, "Pp (a predicate)")?,
        })
    }

    // -----------------------------------------------------------------------------------------
    // memory

    /// Modifiers of `LDS`/`STS`/`LDG`/`STG`: size, `.STRONG.scope`, `.E`, `.CONSTANT`.
    /// Without `.STRONG` an access is weak (non-atomic) with the space's natural scope (CTA for
    /// shared, GPU for global); `.STRONG.*` is relaxed at that scope. `LDG.E.CONSTANT` reads
    /// through the read-only cache: a weak load. Returns the element type and count, the
    /// order, the scope and whether `.E` was given.
    ///
    /// `.128` moves 16 bytes between memory and a register quad (`Rd` a multiple of 4, the
    /// address 16-byte aligned: validation and the run-time check). It is a vector access of
    /// two 64-bit elements ([`MemAccess::vector`]): each half is one single-copy atomic host
    /// access, which is what the PTX memory model promises for a vector access (a set of
    /// scalar accesses) and no less than the 32-bit elements ptxas makes it of (`ld.v4.u32`).
    fn memory_mods(
        &self,
        global: bool,
        load: bool,
    ) -> Result<(Ty, u8, MemOrder, Scope, bool), SyntaxError> {
        let consts: &'static [&'static str] = if global && load { &["CONSTANT"] } else { &[] };
        let e: &'static [&'static str] = if global { &["E"] } else { &[] };
        // `LDS.U`: the address is the same in every lane (a broadcast read), a hint about the
        // access pattern that changes no value. `.SYS` on a global load is `.STRONG.SYS`'s
        // older spelling in sm_75 listings (`LDG.E.SYS`).
        let uniform: &'static [&'static str] = if load && !global { &["U"] } else { &[] };
        let sys: &'static [&'static str] = if global { &["SYS"] } else { &[] };
        let m = self.classify(&[
            group("size", LOAD_SIZES),
            group("strength", STRONG),
            group("addressing", e),
            group("cache path", consts),
            group("uniform address", uniform),
            group("system scope", sys),
            group("eviction priority", if global { EVICTION } else { &[] }),
        ])?;
        if m[5].is_some() && m[1].is_some() {
            return Err(self.modifier_error(
                &m,
                5,
                ".SYS and .STRONG.* both give a scope",
                "one of them",
            ));
        }
        let mut ty = match m[0].map(|(c, _)| c) {
            Some("U8") => Ty::U8,
            Some("S8") => Ty::S8,
            Some("U16") => Ty::U16,
            Some("S16") => Ty::S16,
            Some("64" | "128") => Ty::U64,
            _ => Ty::U32,
        };
        let vector = if m[0].map(|(c, _)| c) == Some("128") {
            2
        } else {
            1
        };
        if !load {
            // A store writes the low bits; signedness has no meaning.
            ty = match ty {
                Ty::S8 => Ty::U8,
                Ty::S16 => Ty::U16,
                other @ (Ty::U8
                | Ty::U16
                | Ty::U32
                | Ty::U64
                | Ty::S32
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
                | Ty::B128) => other,
            };
        }
        if m[1].is_some() && m[3].is_some() {
            return Err(self.modifier_error(
                &m,
                3,
                ".CONSTANT is a weak load; it cannot be .STRONG",
                "one of them",
            ));
        }
        let (order, scope) = match (m[1], m[5]) {
            (Some((c, _)), _) => (MemOrder::Relaxed, scope_of(c)),
            (None, Some(_)) => (MemOrder::Relaxed, Scope::Sys),
            (None, None) => (MemOrder::Weak, if global { Scope::Gpu } else { Scope::Cta }),
        };
        Ok((ty, vector, order, scope, m[2].is_some()))
    }

    /// `LDS{.sz} Rd, [Ra + imm]`, `LDG.E{.sz}{.STRONG.scope|.CONSTANT} Rd, [Ra.64 + imm]`
    /// (`.sz` up to `.128`, see [`Self::memory_mods`]).
    fn load(&self) -> Result<Op, SyntaxError> {
        let global = self.opcode != "LDS";
        let (ty, vector, order, scope, wide) = self.memory_mods(global, true)?;
        self.count(
            2,
            2,
            if global {
                "Rd, [Ra.64 + offset]"
            } else {
                "Rd, [Ra + offset]"
            },
        )?;
        let dst = self.reg(0, "Rd (a register)")?;
        let addr = want_address(&self.ops[1], self.params(), wide, global)?;
        let space = match self.opcode.as_str() {
            "LDS" => Space::Shared,
            "LD" => Space::Generic,
            _ => Space::Global,
        };
        Ok(Op::Load {
            access: MemAccess {
                space,
                ty,
                vector,
                order,
                scope,
                addr,
            },
            dst,
        })
    }

    /// `STS{.sz} [Ra + imm], Rb`, `STG.E{.sz}{.STRONG.scope} [Ra.64 + imm], Rb` (`.sz` up to
    /// `.128`).
    fn store(&self) -> Result<Op, SyntaxError> {
        let global = self.opcode != "STS";
        let (ty, vector, order, scope, wide) = self.memory_mods(global, false)?;
        self.count(
            2,
            2,
            if global {
                "[Ra.64 + offset], Rb"
            } else {
                "[Ra + offset], Rb"
            },
        )?;
        let addr = want_address(&self.ops[0], self.params(), wide, global)?;
        let src = Operand::Reg(self.reg(1, "Rb (a register)")?);
        let space = match self.opcode.as_str() {
            "STS" => Space::Shared,
            "ST" => Space::Generic,
            _ => Space::Global,
        };
        Ok(Op::Store {
            access: MemAccess {
                space,
                ty,
                vector,
                order,
                scope,
                addr,
            },
            src,
        })
    }

    // -----------------------------------------------------------------------------------------
    // constants, uniform helpers, bit and warp ops

    /// `LDC{.64} Rd, c[bank][offset]` and `ULDC{.64} URd, c[bank][offset]`: a constant-bank
    /// read into a register (or pair). `c[0x0][RZ]` is offset 0.
    fn ldc(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[group("size", &["64", "32", "U32"])])?;
        self.count(2, 2, "Rd, c[bank][offset]")?;
        let ty = if m[0].map(|(c, _)| c) == Some("64") {
            Ty::U64
        } else {
            Ty::U32
        };
        let dst = self.reg(0, "Rd (a register)")?;
        let src = self.src(1, ImmKind::Int32, Mods::Plain, "c[bank][offset]")?;
        if !matches!(src.operand, Operand::Const { .. }) {
            return Err(SyntaxError::new(
                self.ops[1].span,
                format!("{} reads the constant bank", self.opcode),
            )
            .expected("c[0x0][offset]"));
        }
        Ok(Op::Mov {
            ty,
            dst,
            src: src.operand,
        })
    }

    /// `VIADD Rd, Ra, Rb|imm|c[][]|URb`: the 32-bit wrapping sum.
    fn viadd(&self) -> Result<Op, SyntaxError> {
        self.classify(&[])?;
        self.count(3, 3, "Rd, Ra, Rb")?;
        Ok(Op::IAdd3 {
            dst: self.reg(0, "Rd (a register)")?,
            carry_out: [Pred::PT, Pred::PT],
            a: self.src(1, ImmKind::Int32, Mods::IntNegNot, "Ra")?,
            b: self.src(2, ImmKind::Int32, Mods::IntNegNot, "Rb")?,
            c: Src::plain(Operand::ZERO),
            carry_in: [PredSrc::FALSE, PredSrc::FALSE],
        })
    }

    /// `FLO{.U32|.S32}{.SH} Rd, Ra` (and `UFLO`): the position of the leading one (`.U32`) or
    /// of the leading bit differing from the sign (signed, the default), `0xffffffff` if none;
    /// `.SH` gives the shift that brings it to bit 31. `~Ra` is allowed.
    fn flo(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("signedness", &["U32", "S32"]),
            group("shift amount", &["SH"]),
        ])?;
        self.count(2, 2, "Rd, Ra")?;
        // Signed unless `.U32`, as for ISETP and IMNMX (cuobjdump prints `bfind.s32` as `FLO`).
        let ty = if m[0].map(|(c, _)| c) == Some("U32") {
            Ty::U32
        } else {
            Ty::S32
        };
        Ok(Op::Unary {
            op: if m[1].is_some() {
                UnOp::BfindShift
            } else {
                UnOp::Bfind
            },
            ty,
            dst: self.reg(0, "Rd (a register)")?,
            a: self.src(1, ImmKind::Int32, Mods::Not, "Ra")?,
        })
    }

    /// `PRMT Rd, Ra, selector, Rb`: the general byte permute (`ir::Op::Prmt`). The mode
    /// modifiers (`.F4E`, `.B4E`, `.RC8`, `.ECL`, `.ECR`, `.RC16`) are not implemented.
    fn prmt(&self) -> Result<Op, SyntaxError> {
        self.classify(&[])?;
        self.count(4, 4, "Rd, Ra, selector, Rb")?;
        Ok(Op::Prmt {
            dst: self.reg(0, "Rd (a register)")?,
            a: self.src(1, ImmKind::Int32, Mods::Plain, "Ra")?,
            sel: self.src(2, ImmKind::Int32, Mods::Plain, "the selector")?,
            b: self.src(3, ImmKind::Int32, Mods::Plain, "Rb")?,
        })
    }

    /// `SHFL.IDX|UP|DOWN|BFLY Pd, Rd, Ra, b, c` (`ir::Op::Shfl`; `c` packs the clamp and the
    /// segment mask exactly as PTX `shfl.sync`'s `c`).
    fn shfl(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[group("mode", &["IDX", "UP", "DOWN", "BFLY"])])?;
        let mode = match self.required(&m, 0, "mode (.IDX .UP .DOWN or .BFLY)")? {
            "UP" => ShflMode::Up,
            "DOWN" => ShflMode::Down,
            "BFLY" => ShflMode::Bfly,
            _ => ShflMode::Idx,
        };
        self.count(5, 5, "Pd, Rd, Ra, b, c")?;
        Ok(Op::Shfl {
            mode,
            dst_pred: self.pred_dst(0, "Pd (a predicate)")?,
            dst: self.reg(1, "Rd (a register)")?,
            a: Operand::Reg(self.reg(2, "Ra (a register)")?),
            b: self.src(3, ImmKind::Int32, Mods::Plain, "b")?,
            c: self.src(4, ImmKind::Int32, Mods::Plain, "c")?,
        })
    }

    /// `REDUX{.SUM|.MIN|.MAX|.AND|.OR|.XOR}{.S32} URd, Ra`: the warp reduction over the
    /// executing lanes (`ir::Op::Redux`); without an operation it is `.AND`, unsigned unless
    /// `.S32`.
    fn redux(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("operation", &["SUM", "MIN", "MAX", "AND", "OR", "XOR"]),
            group("signedness", &["S32", "U32"]),
        ])?;
        self.count(2, 2, "URd, Ra")?;
        let op = match m[0].map(|(c, _)| c) {
            Some("SUM") => BinOp::Add,
            Some("MIN") => BinOp::Min,
            Some("MAX") => BinOp::Max,
            Some("OR") => BinOp::Or,
            Some("XOR") => BinOp::Xor,
            _ => BinOp::And,
        };
        let ty = if m[1].map(|(c, _)| c) == Some("S32") {
            Ty::S32
        } else {
            Ty::U32
        };
        Ok(Op::Redux {
            op,
            ty,
            dst: self.reg(0, "URd (a register)")?,
            src: Operand::Reg(self.reg(1, "Ra (a register)")?),
        })
    }

    /// `HFMA2{.MMA}{.BF16_V2} Rd, Ra, Rb, Rc` / `HADD2 Rd, Ra, Rb` / `HMUL2 Rd, Ra, Rb` on
    /// packed half pairs (`.MMA` only selects the execution unit), each half rounded once to
    /// nearest even. An immediate pair is written as two numbers, high half first
    /// (`HFMA2.MMA R7, -RZ, RZ, 0, 5.96e-08` makes `R7 = 0x00000001`). A register source may
    /// carry a half selector (`R6.H0_H0`, `R8.H1_H1`: `ir::HalfSel`) and the float modifiers
    /// `-x`, `|x|`, `-|x|`.
    fn half2(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("unit", &["MMA"]),
            group("format", &["BF16_V2", "F32"]),
            group("flush-to-zero", &["FTZ"]),
            group("rounding", &["RN"]),
        ])?;
        if m[1].is_some_and(|(c, _)| c == "F32") || m[2].is_some() {
            return Err(self.modifier_error(
                &m,
                if m[2].is_some() { 2 } else { 1 },
                "this half-precision form is not supported",
                "HFMA2/HADD2/HMUL2 on .F16 or .BF16_V2 pairs",
            ));
        }
        let ty = if m[1].is_some() {
            Ty::BF16x2
        } else {
            Ty::F16x2
        };
        let fmt = if ty == Ty::BF16x2 {
            crate::ir::FloatFormat::BF16
        } else {
            crate::ir::FloatFormat::F16
        };
        // Operands: registers or c[][] (with their selectors), or an immediate pair written
        // as two numbers.
        let mut srcs: Vec<(Src, HalfSel)> = Vec::new();
        let mut i = 1;
        while i < self.ops.len() {
            let what = ["Ra", "Rb", "Rc", "a source"]
                .get(srcs.len())
                .copied()
                .unwrap_or("a source");
            if let Parsed::Imm(hi) = parse_operand(&self.ops[i], self.params())? {
                let mut lo = None;
                if let Some(next) = self.ops.get(i + 1) {
                    if let Parsed::Imm(imm) = parse_operand(next, self.params())? {
                        lo = Some((imm, next.span));
                    }
                }
                let Some((lo, lo_span)) = lo else {
                    return Err(SyntaxError::new(
                        self.ops[i].span,
                        "a half-precision immediate is a pair of numbers, high half first",
                    )
                    .expected("two immediates (`1, 1`), a register or c[..][..]"));
                };
                let half = |imm: &super::operands::Imm, span| -> Result<u64, SyntaxError> {
                    let bits = imm_bits(imm, ImmKind::F32, span)?;
                    let x = f64::from(f32::from_bits(bits as u32));
                    Ok(fmt.from_f64(x, Round::Nearest))
                };
                let packed = half(&hi, self.ops[i].span)? << 16 | half(&lo, lo_span)?;
                srcs.push((Src::plain(Operand::Imm(packed)), HalfSel::H1H0));
                i += 2;
                continue;
            }
            srcs.push(want_half_src(&self.ops[i], self.params(), what)?);
            i += 1;
        }
        let dst = self.reg(0, "Rd (a register)")?;
        let want = if self.opcode == "HFMA2" { 3 } else { 2 };
        if srcs.len() != want {
            return Err(SyntaxError::new(
                self.end,
                format!("`{}` takes {want} sources", self.full),
            )
            .expected(if want == 3 {
                "Rd, Ra, Rb, Rc"
            } else {
                "Rd, Ra, Rb"
            }));
        }
        // `a + b` is `a * 1 + b`, `a * b` is `a * b + (-0)`: one rounding either way.
        let one = (
            Src::plain(Operand::Imm(fmt.from_f64(1.0, Round::Nearest) * 0x1_0001)),
            HalfSel::H1H0,
        );
        let neg_zero = (
            Src::plain(Operand::Imm(fmt.sign_mask() * 0x1_0001)),
            HalfSel::H1H0,
        );
        let (a, b, c) = match self.opcode.as_str() {
            "HADD2" => (srcs[0], one, srcs[1]),
            "HMUL2" => (srcs[0], srcs[1], neg_zero),
            _ => (srcs[0], srcs[1], srcs[2]),
        };
        Ok(Op::Fma {
            ty,
            dst,
            a: a.0,
            b: b.0,
            c: c.0,
            round: Round::Nearest,
            ftz: false,
            halves: [a.1, b.1, c.1],
        })
    }

    /// `PLOP3.LUT Pu, Pv, Pa, Pb, Pc, lut, lut2` (`ir::Op::PredLut`).
    fn plop3(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[group("truth table", &["LUT"])])?;
        self.required(&m, 0, "truth table (.LUT)")?;
        self.count(7, 7, "Pu, Pv, Pa, Pb, Pc, lut, lut2")?;
        Ok(Op::PredLut {
            dst: [
                self.pred_dst(0, "Pu (a predicate)")?,
                self.pred_dst(1, "Pv (a predicate)")?,
            ],
            a: self.pred_src(2, "Pa (a predicate)")?,
            b: self.pred_src(3, "Pb (a predicate)")?,
            c: self.pred_src(4, "Pc (a predicate)")?,
            lut: [
                self.small_imm(5, 0xff, "the truth table")? as u8,
                self.small_imm(6, 0xff, "the second truth table")? as u8,
            ],
        })
    }

    // -----------------------------------------------------------------------------------------
    // floating point

    /// `FADD{.FTZ}{.RN} Rd, Ra, Rb`, `FMUL...`. Only round-to-nearest exists in the IR's
    /// float ops, so `.RZ .RM .RP` are rejected, as is `.SAT`.
    fn float_binary(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("flush-to-zero", &["FTZ"]),
            group("rounding", ROUNDINGS),
            group("saturation", &["SAT"]),
        ])?;
        if m[1].is_some_and(|(c, _)| c != "RN") {
            return Err(self.modifier_error(
                &m,
                1,
                "only round-to-nearest-even (.RN) is supported",
                ".RN",
            ));
        }
        if m[2].is_some() {
            return Err(self.modifier_error(&m, 2, ".SAT is not supported", "no .SAT"));
        }
        let double = self.opcode.starts_with('D');
        let (ty, kind) = if double {
            (Ty::F64, ImmKind::F64)
        } else {
            (Ty::F32, ImmKind::F32)
        };
        if double && m[0].is_some() {
            return Err(self.modifier_error(
                &m,
                0,
                ".FTZ applies to FADD/FMUL/FFMA only",
                "no .FTZ",
            ));
        }
        let ftz = m[0].is_some();
        if matches!(self.opcode.as_str(), "FFMA" | "DFMA") {
            self.count(4, 4, "Rd, Ra, Rb, Rc")?;
            return Ok(Op::Fma {
                ty,
                dst: self.reg(0, "Rd (a register)")?,
                a: self.src(1, kind, Mods::FloatNegAbs, "Ra")?,
                b: self.src(2, kind, Mods::FloatNegAbs, "Rb")?,
                c: self.src(3, kind, Mods::FloatNegAbs, "Rc")?,
                round: Round::Nearest,
                ftz,
                halves: HalfSel::AS_READ,
            });
        }
        let op = if matches!(self.opcode.as_str(), "FADD" | "DADD") {
            BinOp::Add
        } else {
            BinOp::Mul
        };
        self.count(3, 3, "Rd, Ra, Rb")?;
        Ok(Op::Binary {
            op,
            ty,
            dst: self.reg(0, "Rd (a register)")?,
            a: self.src(1, kind, Mods::FloatNegAbs, "Ra")?,
            b: self.src(2, kind, Mods::FloatNegAbs, "Rb")?,
            ftz,
        })
    }

    /// `FSETP.cmp.bool{.FTZ} Pu, Pv, Ra, Rb, Pp` and `DSETP...`: IEEE comparisons (the
    /// `...U` forms are true for unordered inputs, `NUM`/`NAN` test for NaNs).
    fn float_setp(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group(
                "comparison",
                &[
                    "EQ", "NE", "LT", "LE", "GT", "GE", "EQU", "NEU", "LTU", "LEU", "GTU", "GEU",
                    "NUM", "NAN",
                ],
            ),
            group("combining operation", BOOL_OPS),
            group("flush-to-zero", &["FTZ"]),
        ])?;
        let cmp_name = self.required(&m, 0, "comparison")?;
        let cmp = CmpOp::from_name(&cmp_name.to_ascii_lowercase()).unwrap_or(CmpOp::Eq);
        let combine = m[1]
            .and_then(|(c, _)| BoolOp::from_name(&c.to_ascii_lowercase()))
            .unwrap_or(BoolOp::And);
        if m[2].is_some() {
            return Err(self.modifier_error(&m, 2, "FSETP.FTZ is not supported", "no .FTZ"));
        }
        let (ty, kind) = if self.opcode == "DSETP" {
            (Ty::F64, ImmKind::F64)
        } else {
            (Ty::F32, ImmKind::F32)
        };
        self.count(5, 5, "Pu, Pv, Ra, Rb, Pp")?;
        Ok(Op::SetP {
            cmp,
            ty,
            combine,
            dst: self.pred_dst(0, "Pu (a predicate)")?,
            dst2: self.pred_dst(1, "Pv (a predicate)")?,
            a: self.src(2, kind, Mods::FloatNegAbs, "Ra")?,
            b: self.src(3, kind, Mods::FloatNegAbs, "Rb")?,
            c: self.pred_src(4, "Pp (a predicate)")?,
            chain: None,
        })
    }

    /// `IMNMX{.U32} Rd, Ra, Rb, Pp`, `VIMNMX{.U32}` (sm_90's name) and `FMNMX Rd, Ra, Rb, Pp`:
    /// the minimum where `Pp` holds, the maximum where it does not (`PT` is min, `!PT` max).
    /// `VIMNMX.{U16x2,S16x2}` does the same in each 16-bit half (`ir::Op::PackedMinMax`).
    fn min_max(&self) -> Result<Op, SyntaxError> {
        let float = self.opcode == "FMNMX";
        let types: &[&str] = match self.opcode.as_str() {
            "FMNMX" => &[],
            "VIMNMX" => &["U32", "S32", "U16X2", "S16X2"],
            _ => &["U32", "S32"],
        };
        let m = self.classify(&[
            group("signedness", types),
            group("flush-to-zero", if float { &["FTZ"] } else { &[] }),
        ])?;
        if m[1].is_some() {
            return Err(self.modifier_error(&m, 1, "FMNMX.FTZ is not supported", "no .FTZ"));
        }
        self.count(4, 4, "Rd, Ra, Rb, Pp")?;
        let packed = match m[0].map(|(c, _)| c) {
            Some("U16X2") => Some(Ty::U16),
            Some("S16X2") => Some(Ty::S16),
            _ => None,
        };
        let (ty, kind, mods) = if float {
            (Ty::F32, ImmKind::F32, Mods::FloatNegAbs)
        } else if m[0].map(|(c, _)| c) == Some("U32") {
            (Ty::U32, ImmKind::Int32, Mods::Plain)
        } else {
            (Ty::S32, ImmKind::Int32, Mods::Plain)
        };
        let op = match self.pred_src(3, "Pp (PT for min, !PT for max)")? {
            PredSrc::TRUE => BinOp::Min,
            PredSrc::FALSE => BinOp::Max,
            _ => {
                return Err(SyntaxError::new(
                    self.ops[3].span,
                    "a min/max selected per lane by a predicate is not supported",
                )
                .expected("PT (min) or !PT (max)"))
            }
        };
        if let Some(ty) = packed {
            return Ok(Op::PackedMinMax {
                op,
                ty,
                dst: self.reg(0, "Rd (a register)")?,
                a: self.src(1, ImmKind::Int32, Mods::Plain, "Ra")?,
                b: self.src(2, ImmKind::Int32, Mods::Plain, "Rb")?,
            });
        }
        Ok(Op::Binary {
            op,
            ty,
            dst: self.reg(0, "Rd (a register)")?,
            a: self.src(1, kind, mods, "Ra")?,
            b: self.src(2, kind, mods, "Rb")?,
            ftz: false,
        })
    }

    /// `QSPC.E.S Pd, RZ, [Ra.64 + imm]`: whether the generic address lies in the CTA's shared
    /// window (`ir::Op::IsSpace`). `QSPC.E.D` asks about distributed shared memory (another
    /// CTA's shared memory in the cluster); atomjit runs clusters of one CTA, so no address is
    /// in it and the answer is false. `.G` (global) is the global window.
    fn qspc(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("addressing", &["E"]),
            group("space", &["S", "D", "G"]),
        ])?;
        let which = self.required(&m, 1, "address-space (.S, .D or .G)")?;
        self.count(3, 3, "Pd, RZ, [Ra + offset]")?;
        let dst = self.pred_dst(0, "Pd (a predicate)")?;
        if !self.reg(1, "RZ")?.is_rz() {
            return Err(SyntaxError::new(
                self.ops[1].span,
                "QSPC with a result register is not supported",
            )
            .expected("RZ"));
        }
        let addr = want_address(&self.ops[2], self.params(), m[0].is_some(), true)?;
        Ok(match which {
            "D" => Op::PredLogic {
                op: BoolOp::And,
                dst,
                a: PredSrc::FALSE,
                b: PredSrc::FALSE,
            },
            "G" => Op::IsSpace {
                space: Space::Global,
                dst,
                addr,
            },
            _ => Op::IsSpace {
                space: Space::Shared,
                dst,
                addr,
            },
        })
    }

    /// `F2FP.{BF16,F16}{.F32}.PACK_AB Rd, Ra, Rb`: `Ra` and `Rb` (f32) rounded to nearest
    /// even and packed, `Ra`'s half in the upper 16 bits (`ir::Op::PackHalves`; what ptxas
    /// makes of PTX's `cvt.rn.bf16x2.f32 d, a, b`, whose `a` goes to the upper half).
    fn f2fp(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("format", &["BF16", "F16"]),
            group("source type", &["F32"]),
            group("packing", &["PACK_AB"]),
        ])?;
        let format = self.required(&m, 0, "format (.BF16 or .F16)")?;
        self.required(&m, 2, "packing (.PACK_AB)")?;
        self.count(3, 3, "Rd, Ra, Rb")?;
        Ok(Op::PackHalves {
            ty: if format == "BF16" {
                Ty::BF16x2
            } else {
                Ty::F16x2
            },
            dst: self.reg(0, "Rd (a register)")?,
            hi: self.src(1, ImmKind::F32, Mods::FloatNegAbs, "Ra")?,
            lo: self.src(2, ImmKind::F32, Mods::FloatNegAbs, "Rb")?,
        })
    }

    /// `MATCH.ANY{.U64} Rd, Ra` and `MATCH.ALL{.U64} Pp, Rd, Ra` (`ir::Op::Match`).
    fn match_op(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("mode", &["ANY", "ALL"]),
            group("size", &["U32", "U64", "32", "64"]),
        ])?;
        let all = self.required(&m, 0, "mode (.ANY or .ALL)")? == "ALL";
        let ty = if matches!(m[1].map(|(c, _)| c), Some("U64" | "64")) {
            Ty::B64
        } else {
            Ty::B32
        };
        let first = if all {
            self.count(3, 3, "Pp, Rd, Ra")?;
            1
        } else {
            self.count(2, 2, "Rd, Ra")?;
            0
        };
        Ok(Op::Match {
            all,
            ty,
            dst: self.reg(first, "Rd (a register)")?,
            dst_pred: if all {
                self.pred_dst(0, "Pp (a predicate)")?
            } else {
                Pred::PT
            },
            src: Operand::Reg(self.reg(first + 1, "Ra (a register)")?),
        })
    }

    /// `I2F{.F32}{.U32|.S32}{.RN|.RZ|.RM|.RP} Rd, Ra`: integer (signed by default) to f32.
    fn i2f(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("result type", &["F32", "F64"]),
            group("source type", &["U32", "S32"]),
            group("rounding", ROUNDINGS),
        ])?;
        let dst_ty = if m[0].map(|(c, _)| c) == Some("F64") {
            Ty::F64
        } else {
            Ty::F32
        };
        let src_ty = if m[1].map(|(c, _)| c) == Some("U32") {
            Ty::U32
        } else {
            Ty::S32
        };
        let round = m[2].map(|(c, _)| round_of(c)).unwrap_or(Round::Nearest);
        self.count(2, 2, "Rd, Ra")?;
        Ok(Op::Convert {
            dst_ty,
            src_ty,
            round,
            ftz: false,
            dst: self.reg(0, "Rd (a register)")?,
            a: self.src(1, ImmKind::Int32, Mods::Plain, "Ra")?,
        })
    }

    /// `MUFU.RCP Rd, Rs`, lowered to the correctly rounded f32 reciprocal `Rd = 1.0 / Rs`
    /// (an f32 division, round to nearest even): exact where ptxas uses it as the seed of an
    /// integer division, which `super::rcp_seed` checks on the whole kernel (this is the only
    /// SASS instruction lowered to an f32 division). Every other `MUFU` is refused.
    fn mufu(&self) -> Result<Op, SyntaxError> {
        let refused = || super::rcp_seed::refusal(self.mnemonic_span, None);
        if !matches!(self.mods.as_slice(), [(m, _)] if m == "RCP") || self.ops.len() != 2 {
            return Err(refused());
        }
        let dst = self.reg(0, "Rd (a register)").ok();
        let b = self
            .src(1, ImmKind::F32, Mods::FloatNegAbs, "Rs (a register)")
            .ok();
        match (dst, b) {
            (Some(dst), Some(b))
                if !dst.is_rz()
                    && b.modifier == SrcMod::None
                    && matches!(b.operand, Operand::Reg(r) if !r.is_rz()) =>
            {
                Ok(Op::Binary {
                    op: BinOp::Div,
                    ty: Ty::F32,
                    dst,
                    a: Src::plain(Operand::Imm(u64::from(1.0f32.to_bits()))),
                    b,
                    ftz: false,
                })
            }
            _ => Err(refused()),
        }
    }

    /// `F2I{.FTZ}{.U32|.S32}{.F32}{.TRUNC|.FLOOR|.CEIL}{.NTZ} Rd, Ra`: f32 to integer (signed
    /// by default), rounding to nearest even unless `.TRUNC` (toward zero), `.FLOOR` or
    /// `.CEIL`, saturating. `.NTZ` (NaN to zero) is accepted: the IR's conversion already
    /// turns NaN into 0.
    fn f2i(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("flush-to-zero", &["FTZ"]),
            group("result type", &["U32", "S32"]),
            group("source type", &["F32"]),
            group("rounding", &["TRUNC", "FLOOR", "CEIL"]),
            group("NaN-to-zero", &["NTZ"]),
        ])?;
        let dst_ty = if m[1].map(|(c, _)| c) == Some("U32") {
            Ty::U32
        } else {
            Ty::S32
        };
        let round = m[3].map(|(c, _)| round_of(c)).unwrap_or(Round::Nearest);
        self.count(2, 2, "Rd, Ra")?;
        Ok(Op::Convert {
            dst_ty,
            src_ty: Ty::F32,
            round,
            ftz: m[0].is_some(),
            dst: self.reg(0, "Rd (a register)")?,
            a: self.src(1, ImmKind::F32, Mods::FloatNegAbs, "Ra")?,
        })
    }

    // -----------------------------------------------------------------------------------------
    // control

    /// `BRA{.U} label`, `` BRA `(.L_x_0) ``, `BRA 0x40` (a cuobjdump address).
    fn bra(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("uniform", &["U"]),
            group("convergence test", &["CONV", "DIV"]),
        ])?;
        if let Some((test, _)) = m[1] {
            // `BRA.CONV mask, target` / `BRA.DIV mask, target` (`ir::Op::BranchConverged`).
            self.count(2, 2, "mask, a label or an address")?;
            let mask = self.src(0, ImmKind::Int32, Mods::Not, "the lane mask")?;
            let target = self.branch_target(1)?;
            return Ok(Op::BranchConverged {
                target,
                mask,
                diverged: test == "DIV",
            });
        }
        self.count(1, 1, "a label or an address")?;
        let target = self.branch_target(0)?;
        Ok(Op::Branch {
            target,
            uniform: m[0].is_some(),
        })
    }

    /// `WARPSYNC mask` / `WARPSYNC.ALL`: the executing lanes wait until every live lane of the
    /// mask executes it. Lowered as a convergence branch to itself (`BRA.DIV mask, here`): a
    /// group that is not converged yields there until the scheduler merges it with the
    /// other groups arriving at the same instruction (or they exit); lanes that never come
    /// leave it spinning, which the watchdog reports.
    fn warpsync(&self, all: bool) -> Result<Op, SyntaxError> {
        let mask = if all {
            self.count(0, 0, "no operands")?;
            Src::plain(Operand::Imm(u64::from(u32::MAX)))
        } else {
            self.count(1, 1, "the lane mask")?;
            self.src(0, ImmKind::Int32, Mods::Not, "the lane mask")?
        };
        Ok(Op::BranchConverged {
            target: self.ctx.pc,
            mask,
            diverged: true,
        })
    }

    /// Operand `i` as a branch target: a label, `` `(label) ``, or a cuobjdump address.
    fn branch_target(&self, i: usize) -> Result<u32, SyntaxError> {
        let op = &self.ops[i];
        let target = match op.toks {
            [word] if word.is_word() && number_word(word.text).is_some() => {
                let lit = match parse_operand(op, self.params())? {
                    Parsed::Imm(imm) => imm_bits(&imm, ImmKind::Int64, op.span)?,
                    other @ (Parsed::Reg { .. }
                    | Parsed::Pred(_)
                    | Parsed::Const { .. }
                    | Parsed::Mem { .. }
                    | Parsed::Special(_)
                    | Parsed::Name(_)) => {
                        return Err(SyntaxError::new(
                            op.span,
                            format!("expected a branch target, found {}", other.describe()),
                        ))
                    }
                };
                self.address_target(lit, op.span)?
            }
            [word] if word.is_word() => self.label_target(word.text, op.span)?,
            _ => match parse_operand(op, self.params())? {
                Parsed::Name(name) => self.label_target(name, op.span)?,
                other @ (Parsed::Reg { .. }
                | Parsed::Pred(_)
                | Parsed::Imm(_)
                | Parsed::Const { .. }
                | Parsed::Mem { .. }
                | Parsed::Special(_)) => {
                    return Err(SyntaxError::new(
                        op.span,
                        format!("expected a branch target, found {}", other.describe()),
                    )
                    .expected("a label, `(label)` in backquotes, or an address"))
                }
            },
        };
        Ok(target)
    }

    fn label_target(&self, name: &str, span: Span) -> Result<u32, SyntaxError> {
        match self.ctx.labels.get(name) {
            Some(&pc) if pc < self.ctx.num_insts => Ok(pc),
            Some(_) => Err(SyntaxError::new(
                span,
                format!("label `{name}` is at the end of the kernel: no instruction follows it"),
            )
            .expected("a label placed before an instruction")),
            None => {
                let mut names: Vec<&str> = self.ctx.labels.keys().map(String::as_str).collect();
                names.sort_unstable();
                let expected = if names.is_empty() {
                    "a label (none are defined)".to_string()
                } else {
                    format!("one of {}", names.join(" "))
                };
                Err(SyntaxError::new(span, format!("undefined label `{name}`")).expected(expected))
            }
        }
    }

    fn address_target(&self, address: u64, span: Span) -> Result<u32, SyntaxError> {
        match self.ctx.addresses.get(&address).map(Vec::as_slice) {
            Some([pc]) => Ok(*pc),
            Some(_) => Err(SyntaxError::new(
                span,
                format!("address {address:#x} is given to several instructions"),
            )
            .expected("a unique /*address*/ prefix")),
            None => Err(
                SyntaxError::new(span, format!("no instruction has address {address:#x}"))
                    .expected("an address written as a `/*xxxx*/` prefix, or a label"),
            ),
        }
    }

    /// `BAR.SYNC{.DEFER_BLOCKING} {id}` (id 0 if omitted). `.DEFER_BLOCKING` is how sm_80
    /// cuobjdump prints `__syncthreads()`; its deferral is a hardware scheduling detail with
    /// the same semantics.
    fn bar(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("operation", &["SYNC"]),
            group("blocking", &["DEFER_BLOCKING"]),
        ])?;
        self.required(&m, 0, "operation (.SYNC)")?;
        self.count(0, 1, "{barrier id}")?;
        let id = if self.ops.is_empty() {
            0
        } else {
            self.small_imm(0, 15, "the barrier id")?
        };
        Ok(Op::Barrier { id })
    }

    /// `MEMBAR{.SC|.ALL}.CTA|.GPU|.SYS` (`.GL` is the older name of `.GPU`). In the PTX memory
    /// model MEMBAR is `fence.sc` (`membar.{cta,gl,sys}` is a synonym of `fence.sc`), so every
    /// form is a sequentially consistent fence at its scope.
    fn membar(&self) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("semantics", &["SC", "ALL"]),
            group("scope", &["CTA", "GPU", "GL", "SYS"]),
        ])?;
        let scope = match self.required(&m, 1, "scope (.CTA .GPU or .SYS)")? {
            "CTA" => Scope::Cta,
            "SYS" => Scope::Sys,
            _ => Scope::Gpu,
        };
        self.count(0, 0, "no operands")?;
        Ok(Op::Fence {
            order: MemOrder::SeqCst,
            scope,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_tables_name_ir_ops() {
        for name in ATOMS_OPS.iter().chain(ATOMG_OPS).chain(RED_OPS) {
            assert!(
                AtomicOp::from_name(&name.to_ascii_lowercase()).is_some(),
                "{name}"
            );
        }
        for name in ISETP_CMPS {
            assert!(
                CmpOp::from_name(&name.to_ascii_lowercase()).is_some(),
                "{name}"
            );
        }
        for name in BOOL_OPS {
            assert!(
                BoolOp::from_name(&name.to_ascii_lowercase()).is_some(),
                "{name}"
            );
        }
    }
}
