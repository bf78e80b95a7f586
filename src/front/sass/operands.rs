//! SASS operands: registers, predicates, immediates, constant-bank references, memory
//! addresses, special registers and branch targets.
//!
//! * Registers `R0`..`R254`, `RZ` (`R255` is also RZ). Source registers may carry the
//!   `.reuse` suffix cuobjdump prints (an operand-reuse-cache hint: no effect on values, so it
//!   is accepted and dropped); address registers may carry `.64` (a register pair).
//! * Predicates `P0`..`P6`, `PT`, negated with `!`.
//! * Immediates: decimal, `0x` hex, negative, floats and `+INF`, `-INF`, `+QNAN`, `-QNAN`
//!   (float operands only; QNAN is the canonical NaN `0x7fffffff`, with the sign bit for
//!   `-QNAN`). In a float operand a hex immediate is the raw IEEE bits, a decimal one its value.
//! * `c[BANK][OFFSET]`, with `OFFSET` a number, a parameter name, or a name plus or minus a
//!   number (`c[0x0][data+0x4]`).
//! * Source modifiers: `-x` and `~x` (integer ops that allow them), `-x`, `|x|`, `-|x|` (float
//!   ops).
//! * Addresses `[Ra]`, `[Ra + imm]`, `[Ra - imm]`, `[imm]`, `[RZ + imm]`, `[R2.64 + imm]`.

use super::super::lexer::{join, Cursor, SyntaxError, TokKind, Token};
use super::super::program::{number, ByName, NumberLit};
use crate::ir::{Operand, ParamDecl, Pred, PredSrc, Reg, Scalar, Span, SpecialReg, Src, SrcMod};

/// The kernel's buffers and parameters by name, for `c[0x0][NAME]`.
pub type Params<'k> = ByName<'k, ParamDecl>;

/// One operand's tokens (between commas).
#[derive(Debug, Clone, Copy)]
pub struct RawOperand<'t, 'a> {
    pub toks: &'t [Token<'a>],
    pub span: Span,
}

/// Splits an instruction's operand tokens at top-level commas and collects the scheduling
/// annotations (`{&req_6}`, `{?sched}`, ...) that follow the operands, verbatim.
pub fn split_operands<'t, 'a>(
    toks: &'t [Token<'a>],
    source: &str,
) -> Result<(Vec<RawOperand<'t, 'a>>, Vec<String>), SyntaxError> {
    let sched_start = toks
        .iter()
        .position(|t| t.is_punct("{"))
        .unwrap_or(toks.len());
    let mut sched = Vec::new();
    let mut i = sched_start;
    while i < toks.len() {
        let open = toks[i];
        if !open.is_punct("{") {
            return Err(SyntaxError::new(
                open.span,
                format!(
                    "unexpected {} after a scheduling annotation",
                    open.describe()
                ),
            )
            .expected("another `{...}` annotation or `;`"));
        }
        let Some(close) = toks[i..]
            .iter()
            .position(|t| t.is_punct("}"))
            .map(|p| p + i)
        else {
            return Err(
                SyntaxError::new(open.span, "unclosed scheduling annotation").expected("`}`"),
            );
        };
        if close == i + 1 {
            return Err(SyntaxError::new(open.span, "empty scheduling annotation")
                .expected("`{&req_N}`, `{&rdN}`, `{&wrN}` or `{?...}`"));
        }
        sched.push(
            source
                .get(open.span.start as usize..toks[close].span.end as usize)
                .unwrap_or("")
                .to_string(),
        );
        i = close + 1;
    }
    let toks = &toks[..sched_start];
    let mut ops = Vec::new();
    if toks.is_empty() {
        return Ok((ops, sched));
    }
    let mut start = 0;
    let mut open: Vec<&Token> = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.is_punct("[") || t.is_punct("(") {
            open.push(t);
        } else if t.is_punct("]") || t.is_punct(")") {
            open.pop();
        } else if t.is_punct(",") && open.is_empty() {
            ops.push(raw(&toks[start..i], t.span)?);
            start = i + 1;
        }
    }
    if let Some(unclosed) = open.first() {
        let close = if unclosed.is_punct("[") { "`]`" } else { "`)`" };
        return Err(
            SyntaxError::new(unclosed.span, format!("unclosed `{}`", unclosed.text))
                .expected(close),
        );
    }
    let end_span = toks[toks.len() - 1].span;
    ops.push(raw(&toks[start..], end_span)?);
    Ok((ops, sched))
}

fn raw<'t, 'a>(toks: &'t [Token<'a>], at: Span) -> Result<RawOperand<'t, 'a>, SyntaxError> {
    match (toks.first(), toks.last()) {
        (Some(a), Some(b)) => Ok(RawOperand {
            toks,
            span: join(a.span, b.span),
        }),
        _ => Err(SyntaxError::new(at, "missing operand").expected("an operand before `,`")),
    }
}

/// An immediate as written.
#[derive(Debug, Clone, Copy)]
pub struct Imm<'a> {
    pub lit: NumberLit,
    /// The number's word (without sign), for exact float conversion.
    pub text: &'a str,
    pub negative: bool,
}

/// A parsed operand, before the instruction says what it needs.
#[derive(Debug, Clone)]
pub enum Parsed<'a> {
    Reg {
        reg: Reg,
        pair: bool,
        modifier: SrcMod,
    },
    Pred(PredSrc),
    Imm(Imm<'a>),
    Const {
        bank: u8,
        offset: u32,
        modifier: SrcMod,
    },
    Mem {
        base: Option<(Reg, bool)>,
        offset: i64,
    },
    Special(SpecialName),
    /// A word that is nothing else (a label, or a typo).
    Name(&'a str),
}

/// A special register as written in `S2R`/`CS2R`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecialName {
    Sr(SpecialReg),
    /// `SRZ`: zero (`CS2R Rd, SRZ`).
    Zero,
}

impl Parsed<'_> {
    pub fn describe(&self) -> &'static str {
        match self {
            Parsed::Reg { .. } => "a register",
            Parsed::Pred(_) => "a predicate",
            Parsed::Imm(_) => "an immediate",
            Parsed::Const { .. } => "a constant-bank operand",
            Parsed::Mem { .. } => "a memory address",
            Parsed::Special(_) => "a special register",
            Parsed::Name(_) => "a name",
        }
    }
}

/// The special registers `S2R` reads, by their SASS names.
pub const SPECIAL_REGS: [(&str, SpecialReg); 7] = [
    ("SR_TID.X", SpecialReg::TidX),
    ("SR_TID.Y", SpecialReg::TidY),
    ("SR_TID.Z", SpecialReg::TidZ),
    ("SR_CTAID.X", SpecialReg::CtaIdX),
    ("SR_CTAID.Y", SpecialReg::CtaIdY),
    ("SR_CTAID.Z", SpecialReg::CtaIdZ),
    ("SR_LANEID", SpecialReg::LaneId),
];

fn special_names() -> String {
    SPECIAL_REGS
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Reads a register word (`R5`, `RZ`, `R2.64`, `R3.reuse`); `None` if the word is not a
/// register at all. The flag says whether `.64` was written.
pub fn register_word(text: &str, span: Span) -> Option<Result<(Reg, bool), SyntaxError>> {
    let upper = text.to_ascii_uppercase();
    let (base, suffix) = match upper.split_once('.') {
        Some((b, s)) => (b, Some(s)),
        None => (upper.as_str(), None),
    };
    let reg = if base == "RZ" {
        Reg::RZ
    } else {
        let digits = base.strip_prefix('R')?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        match digits.parse::<u32>() {
            Ok(255) => Reg::RZ,
            Ok(n) if n < 255 => Reg(n as u16),
            _ => {
                return Some(Err(SyntaxError::new(
                    span,
                    format!("register `{text}` does not exist"),
                )
                .expected("R0..R254 or RZ")))
            }
        }
    };
    match suffix {
        None | Some("REUSE") => Some(Ok((reg, false))),
        Some("64") => Some(Ok((reg, true))),
        Some(other) => Some(Err(SyntaxError::new(
            span,
            format!("unknown register suffix `.{other}`"),
        )
        .expected("`.64` (address pairs) or `.reuse`"))),
    }
}

/// Reads a predicate word (`P3`, `PT`); `None` if the word is not a predicate.
pub fn predicate_word(text: &str, span: Span) -> Option<Result<Pred, SyntaxError>> {
    let upper = text.to_ascii_uppercase();
    if upper == "PT" {
        return Some(Ok(Pred::PT));
    }
    let digits = upper.strip_prefix('P')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    match digits.parse::<u32>() {
        Ok(n) if n <= 6 => Some(Ok(Pred(n as u16))),
        _ => Some(Err(SyntaxError::new(
            span,
            format!("predicate `{text}` does not exist"),
        )
        .expected("P0..P6 or PT"))),
    }
}

fn is_uniform(upper: &str) -> bool {
    let base = upper.split('.').next().unwrap_or("");
    let rest = base.strip_prefix("UR").or_else(|| base.strip_prefix("UP"));
    rest.is_some_and(|r| {
        r == "Z" || r == "T" || (!r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Parses one operand. `params` resolves `c[0x0][NAME]`.
pub fn parse_operand<'a>(
    op: &RawOperand<'_, 'a>,
    params: &Params,
) -> Result<Parsed<'a>, SyntaxError> {
    let mut cur = Cursor::over(op.toks, op.span);
    let parsed = operand(&mut cur, params)?;
    cur.expect_end("the operand")?;
    Ok(parsed)
}

fn operand<'a>(cur: &mut Cursor<'_, 'a>, params: &Params) -> Result<Parsed<'a>, SyntaxError> {
    let Some(first) = cur.peek() else {
        return Err(cur.error_expected("an operand"));
    };
    if first.is_punct("[") {
        return address(cur);
    }
    if first.is_punct("!") {
        cur.next();
        let tok = cur.expect_word("a predicate")?;
        return match predicate_word(tok.text, tok.span) {
            Some(p) => Ok(Parsed::Pred(PredSrc {
                pred: p?,
                negate: true,
            })),
            None => Err(SyntaxError::new(
                tok.span,
                format!("expected a predicate after `!`, found `{}`", tok.text),
            )
            .expected("P0..P6 or PT")),
        };
    }
    if first.is_punct("`") {
        cur.next();
        cur.expect_punct("(")?;
        let tok = cur.expect_word("a label")?;
        cur.expect_punct(")")?;
        return Ok(Parsed::Name(tok.text));
    }
    // Signs: a negative number, or a negated / complemented / absolute register.
    let modifier = if first.is_punct("-") || first.is_punct("+") {
        let next = cur.peek_at(1);
        let is_number = next
            .is_some_and(|t| t.is_word() && super::super::program::number_word(t.text).is_some());
        if is_number {
            return immediate(cur);
        }
        if first.is_punct("+") {
            return Err(
                SyntaxError::new(first.span, "`+` only precedes a number").expected("a number")
            );
        }
        cur.next();
        if cur.eat_punct("|").is_some() {
            SrcMod::NegAbs
        } else {
            SrcMod::Neg
        }
    } else if first.is_punct("~") {
        cur.next();
        SrcMod::Not
    } else if first.is_punct("|") {
        cur.next();
        SrcMod::Abs
    } else {
        SrcMod::None
    };
    let Some(tok) = cur.peek().filter(|t| t.kind == TokKind::Word) else {
        return Err(cur.error_expected("an operand"));
    };
    let upper = tok.text.to_ascii_uppercase();
    let value = if upper == "C" && cur.peek_at(1).is_some_and(|t| t.is_punct("[")) {
        cur.next();
        let (bank, offset) = const_ref(cur, params)?;
        Parsed::Const {
            bank,
            offset,
            modifier,
        }
    } else if let Some(r) = register_word(tok.text, tok.span) {
        cur.next();
        let (reg, pair) = r?;
        Parsed::Reg {
            reg,
            pair,
            modifier,
        }
    } else if super::super::program::number_word(tok.text).is_some() {
        if modifier != SrcMod::None {
            return Err(SyntaxError::new(
                tok.span,
                "operand modifiers apply to registers and c[][] operands",
            )
            .expected("a register or c[..][..]"));
        }
        return immediate(cur);
    } else if modifier != SrcMod::None {
        return Err(cur.error_expected("a register or c[..][..] after the modifier"));
    } else if let Some(p) = predicate_word(tok.text, tok.span) {
        cur.next();
        Parsed::Pred(PredSrc {
            pred: p?,
            negate: false,
        })
    } else if upper == "SRZ" {
        cur.next();
        Parsed::Special(SpecialName::Zero)
    } else if upper.starts_with("SR_") {
        let Some((_, sr)) = SPECIAL_REGS.iter().find(|(n, _)| *n == upper) else {
            return Err(SyntaxError::new(
                tok.span,
                format!("unknown special register `{}`", tok.text),
            )
            .expected(format!("one of {}", special_names())));
        };
        cur.next();
        Parsed::Special(SpecialName::Sr(*sr))
    } else if is_uniform(&upper) {
        return Err(SyntaxError::new(
            tok.span,
            format!("uniform registers (`{}`) are not supported", tok.text),
        )
        .expected("a register R0..R254, RZ, or a c[0x0][..] operand"));
    } else {
        cur.next();
        Parsed::Name(tok.text)
    };
    if matches!(modifier, SrcMod::Abs | SrcMod::NegAbs) {
        cur.expect_punct("|")?;
    }
    Ok(value)
}

fn immediate<'a>(cur: &mut Cursor<'_, 'a>) -> Result<Parsed<'a>, SyntaxError> {
    let negative = cur.is_punct("-");
    let signed = negative || cur.is_punct("+");
    let text = cur
        .peek_at(usize::from(signed))
        .map(|t| t.text)
        .unwrap_or("");
    let (lit, _) = number(cur)?;
    Ok(Parsed::Imm(Imm {
        lit,
        text,
        negative,
    }))
}

/// `c[BANK][OFFSET]` after the `c`.
fn const_ref(cur: &mut Cursor, params: &Params) -> Result<(u8, u32), SyntaxError> {
    cur.expect_punct("[")?;
    let (bank, bank_span) = number(cur)?;
    let bank = match bank.value {
        Scalar::Int(b) if (0..=255).contains(&b) => b as u8,
        Scalar::Int(_) | Scalar::Float(_) => {
            return Err(
                SyntaxError::new(bank_span, "a constant bank number is 0..255")
                    .expected("c[0x0][..]"),
            )
        }
    };
    cur.expect_punct("]")?;
    cur.expect_punct("[")?;
    let mut offset: i128;
    let mut span;
    if let Some(tok) = cur
        .peek()
        .filter(|t| t.is_word() && super::super::program::number_word(t.text).is_none())
    {
        cur.next();
        let Some(p) = params.get(tok.text) else {
            let names: Vec<&str> = params.items().iter().map(|p| p.name.as_str()).collect();
            let expected = if names.is_empty() {
                "a byte offset (no buffers or parameters are declared)".to_string()
            } else {
                format!("a byte offset or one of {}", names.join(" "))
            };
            return Err(
                SyntaxError::new(tok.span, format!("unknown parameter `{}`", tok.text))
                    .expected(expected),
            );
        };
        if bank != 0 {
            return Err(
                SyntaxError::new(bank_span, "parameters live in constant bank 0")
                    .expected("c[0x0][..]"),
            );
        }
        offset = p.cbank_offset as i128;
        span = tok.span;
    } else {
        let (lit, s) = number(cur)?;
        let Scalar::Int(v) = lit.value else {
            return Err(SyntaxError::new(s, "a constant-bank offset is an integer"));
        };
        offset = v;
        span = s;
    }
    while cur.is_punct("+") || cur.is_punct("-") {
        let minus = cur.is_punct("-");
        cur.next();
        let (lit, s) = number(cur)?;
        let Scalar::Int(v) = lit.value else {
            return Err(SyntaxError::new(s, "a constant-bank offset is an integer"));
        };
        offset = if minus {
            offset.saturating_sub(v)
        } else {
            offset.saturating_add(v)
        };
        span = join(span, s);
    }
    cur.expect_punct("]")?;
    let offset = u32::try_from(offset).map_err(|_| {
        SyntaxError::new(
            span,
            format!("constant-bank offset {offset} is out of range"),
        )
        .expected("0..2^32-1")
    })?;
    Ok((bank, offset))
}

/// `[Ra]`, `[Ra + imm]`, `[Ra - imm]`, `[imm]`, `[R2.64 + imm]`.
fn address<'a>(cur: &mut Cursor<'_, 'a>) -> Result<Parsed<'a>, SyntaxError> {
    let open = cur.expect_punct("[")?;
    let mut base = None;
    if let Some(tok) = cur.peek().filter(|t| t.is_word()) {
        if let Some(r) = register_word(tok.text, tok.span) {
            cur.next();
            base = Some(r?);
        } else if is_uniform(&tok.text.to_ascii_uppercase()) {
            return Err(SyntaxError::new(
                tok.span,
                format!("uniform registers (`{}`) are not supported", tok.text),
            )
            .expected("a register R0..R254 or RZ"));
        } else if super::super::program::number_word(tok.text).is_none() {
            return Err(SyntaxError::new(
                tok.span,
                format!("expected a register or an offset, found `{}`", tok.text),
            )
            .expected("`[Ra + offset]` or `[offset]`"));
        }
    }
    let mut offset: i128 = 0;
    if base.is_none() {
        if cur.is_punct("]") {
            return Err(
                SyntaxError::new(open, "empty address").expected("`[Ra + offset]` or `[offset]`")
            );
        }
        offset = int_offset(cur)?;
    } else if cur.is_punct("+") || cur.is_punct("-") {
        let minus = cur.is_punct("-");
        cur.next();
        let v = int_offset(cur)?;
        offset = if minus { -v } else { v };
    }
    if !cur.is_punct("]") {
        return Err(cur.error_expected("`+ offset`, `- offset` or `]`"));
    }
    let close = cur.expect_punct("]")?;
    let offset = i64::try_from(offset).map_err(|_| {
        SyntaxError::new(join(open, close), "the address offset does not fit 64 bits")
    })?;
    Ok(Parsed::Mem { base, offset })
}

fn int_offset(cur: &mut Cursor) -> Result<i128, SyntaxError> {
    if let Some(tok) = cur.peek().filter(|t| t.is_word()) {
        if register_word(tok.text, tok.span).is_some() || is_uniform(&tok.text.to_ascii_uppercase())
        {
            return Err(
                SyntaxError::new(tok.span, "an address has at most one register")
                    .expected("an immediate offset"),
            );
        }
    }
    let (lit, span) = number(cur)?;
    match lit.value {
        Scalar::Int(v) => Ok(v),
        Scalar::Float(_) => {
            Err(SyntaxError::new(span, "an address offset is an integer")
                .expected("an integer offset"))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What instructions ask for

/// Which source modifiers an operand position accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mods {
    /// None.
    Plain,
    /// `-x` (two's complement) and `~x` (complement): `IADD3`, `LEA`.
    IntNegNot,
    /// `-x` only: `IMAD`.
    IntNeg,
    /// `~x` only: `POPC`.
    Not,
    /// `-x`, `|x|`, `-|x|`: float ops.
    FloatNegAbs,
}

/// How an immediate is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImmKind {
    /// A 32-bit integer: `-2^31..2^32-1`, stored as its low 32 bits.
    Int32,
    /// A 64-bit integer operand (e.g. the addend pair of `IMAD.WIDE`): sign-extended.
    Int64,
    /// A 32-bit float: decimal values are rounded to f32 (correctly, from the text), hex
    /// immediates are the raw bits.
    F32,
}

fn kind_error(op: &RawOperand, parsed: &Parsed, what: &str) -> SyntaxError {
    SyntaxError::new(
        op.span,
        format!("expected {what}, found {}", parsed.describe()),
    )
    .expected(what.to_string())
}

/// The immediate's value as `kind`.
pub fn imm_bits(imm: &Imm, kind: ImmKind, span: Span) -> Result<u64, SyntaxError> {
    match (kind, imm.lit.value) {
        (ImmKind::Int32, Scalar::Int(v)) => {
            if (-(1i128 << 31)..=u32::MAX as i128).contains(&v) {
                Ok(v as u32 as u64)
            } else {
                Err(
                    SyntaxError::new(span, format!("immediate {v} does not fit 32 bits"))
                        .expected("a value in -2147483648..=4294967295"),
                )
            }
        }
        (ImmKind::Int64, Scalar::Int(v)) => {
            if (i64::MIN as i128..=u64::MAX as i128).contains(&v) {
                Ok(v as u64)
            } else {
                Err(SyntaxError::new(
                    span,
                    format!("immediate {v} does not fit 64 bits"),
                ))
            }
        }
        (ImmKind::Int32 | ImmKind::Int64, Scalar::Float(_)) => Err(SyntaxError::new(
            span,
            "a float immediate in an integer operand",
        )
        .expected("an integer immediate")),
        (ImmKind::F32, Scalar::Int(v)) if imm.lit.hex => {
            if (0..=u32::MAX as i128).contains(&v) {
                Ok(v as u64)
            } else {
                Err(
                    SyntaxError::new(span, "a hex float immediate is the raw 32-bit pattern")
                        .expected("0x0..=0xffffffff (or a decimal value such as -2.5)"),
                )
            }
        }
        (ImmKind::F32, value) => {
            let lower = imm.text.to_ascii_lowercase();
            let magnitude: f32 = match lower.as_str() {
                "inf" | "infinity" => f32::INFINITY,
                // The canonical NaN NVIDIA hardware produces.
                "nan" | "qnan" => f32::from_bits(0x7fff_ffff),
                _ => match value {
                    Scalar::Int(v) => v.unsigned_abs() as f32,
                    Scalar::Float(_) => lower.parse::<f32>().map_err(|_| {
                        SyntaxError::new(span, format!("malformed float immediate `{}`", imm.text))
                    })?,
                },
            };
            if magnitude.is_infinite() && !matches!(lower.as_str(), "inf" | "infinity") {
                return Err(SyntaxError::new(
                    span,
                    format!("`{}` is too large for a 32-bit float", imm.text),
                )
                .expected("a value below 3.4028235e38, or +INF"));
            }
            let bits = magnitude.to_bits() | if imm.negative { 0x8000_0000 } else { 0 };
            Ok(bits as u64)
        }
    }
}

/// A plain register (no modifier, no `.64`).
pub fn want_reg(op: &RawOperand, params: &Params, what: &str) -> Result<Reg, SyntaxError> {
    match parse_operand(op, params)? {
        Parsed::Reg {
            reg,
            pair: false,
            modifier: SrcMod::None,
        } => Ok(reg),
        Parsed::Reg { pair: true, .. } => Err(SyntaxError::new(
            op.span,
            "`.64` is only written on address registers",
        )
        .expected(what.to_string())),
        Parsed::Reg { .. } => Err(SyntaxError::new(
            op.span,
            format!("{what} takes no operand modifier"),
        )
        .expected(what.to_string())),
        other @ (Parsed::Pred(_)
        | Parsed::Imm(_)
        | Parsed::Const { .. }
        | Parsed::Mem { .. }
        | Parsed::Special(_)
        | Parsed::Name(_)) => Err(kind_error(op, &other, what)),
    }
}

/// A predicate destination (no `!`).
pub fn want_pred_dst(op: &RawOperand, params: &Params, what: &str) -> Result<Pred, SyntaxError> {
    match parse_operand(op, params)? {
        Parsed::Pred(PredSrc {
            pred,
            negate: false,
        }) => Ok(pred),
        Parsed::Pred(_) => Err(
            SyntaxError::new(op.span, format!("{what} cannot be negated"))
                .expected(what.to_string()),
        ),
        other @ (Parsed::Reg { .. }
        | Parsed::Imm(_)
        | Parsed::Const { .. }
        | Parsed::Mem { .. }
        | Parsed::Special(_)
        | Parsed::Name(_)) => Err(kind_error(op, &other, what)),
    }
}

/// A predicate source (`P0`, `!P1`, `PT`, `!PT`).
pub fn want_pred_src(op: &RawOperand, params: &Params, what: &str) -> Result<PredSrc, SyntaxError> {
    match parse_operand(op, params)? {
        Parsed::Pred(p) => Ok(p),
        other @ (Parsed::Reg { .. }
        | Parsed::Imm(_)
        | Parsed::Const { .. }
        | Parsed::Mem { .. }
        | Parsed::Special(_)
        | Parsed::Name(_)) => Err(kind_error(op, &other, what)),
    }
}

/// True if the operand is a (possibly negated) predicate.
pub fn is_pred(op: &RawOperand) -> bool {
    let mut toks = op.toks.iter();
    let mut first = toks.next();
    if first.is_some_and(|t| t.is_punct("!")) {
        first = toks.next();
    }
    op.toks.len() <= 2
        && first.is_some_and(|t| t.is_word() && predicate_word(t.text, t.span).is_some())
}

/// A source: register, immediate or `c[][]`, with the modifiers `mods` allows.
pub fn want_src(
    op: &RawOperand,
    params: &Params,
    kind: ImmKind,
    mods: Mods,
    what: &str,
) -> Result<Src, SyntaxError> {
    let parsed = parse_operand(op, params)?;
    let (operand, modifier) = match parsed {
        Parsed::Reg { pair: true, .. } => {
            return Err(
                SyntaxError::new(op.span, "`.64` is only written on address registers")
                    .expected(what.to_string()),
            )
        }
        Parsed::Reg { reg, modifier, .. } => (Operand::Reg(reg), modifier),
        Parsed::Const {
            bank,
            offset,
            modifier,
        } => (Operand::Const { bank, offset }, modifier),
        Parsed::Imm(imm) => (Operand::Imm(imm_bits(&imm, kind, op.span)?), SrcMod::None),
        other @ (Parsed::Pred(_) | Parsed::Mem { .. } | Parsed::Special(_) | Parsed::Name(_)) => {
            return Err(kind_error(op, &other, what))
        }
    };
    let allowed = match mods {
        Mods::Plain => modifier == SrcMod::None,
        Mods::IntNegNot => matches!(modifier, SrcMod::None | SrcMod::Neg | SrcMod::Not),
        Mods::IntNeg => matches!(modifier, SrcMod::None | SrcMod::Neg),
        Mods::Not => matches!(modifier, SrcMod::None | SrcMod::Not),
        Mods::FloatNegAbs => matches!(
            modifier,
            SrcMod::None | SrcMod::Neg | SrcMod::Abs | SrcMod::NegAbs
        ),
    };
    if !allowed {
        let accepted = match mods {
            Mods::Plain => "no modifier",
            Mods::IntNegNot => "`-x` or `~x`",
            Mods::IntNeg => "`-x`",
            Mods::Not => "`~x`",
            Mods::FloatNegAbs => "`-x`, `|x|` or `-|x|`",
        };
        return Err(SyntaxError::new(
            op.span,
            format!("this operand modifier is not allowed on {what}"),
        )
        .expected(accepted.to_string()));
    }
    Ok(Src { operand, modifier })
}

/// A memory address. `pair_base`: the base is a 64-bit register pair even without `.64`
/// (`.E` addressing); `allow_pair`: `.64` may be written.
pub fn want_address(
    op: &RawOperand,
    params: &Params,
    pair_base: bool,
    allow_pair: bool,
) -> Result<crate::ir::Address, SyntaxError> {
    match parse_operand(op, params)? {
        Parsed::Mem { base, offset } => {
            let (base, bits) = match base {
                None => (None, if pair_base { 64 } else { 32 }),
                Some((_, true)) if !allow_pair => {
                    return Err(SyntaxError::new(
                        op.span,
                        "this address takes a 32-bit register; remove `.64`",
                    )
                    .expected("`[Ra + offset]`"))
                }
                Some((reg, pair)) => (Some(reg), if pair || pair_base { 64 } else { 32 }),
            };
            Ok(crate::ir::Address::Linear(crate::ir::LinearAddress {
                base,
                base_bits: bits,
                offset,
            }))
        }
        other @ (Parsed::Reg { .. }
        | Parsed::Pred(_)
        | Parsed::Imm(_)
        | Parsed::Const { .. }
        | Parsed::Special(_)
        | Parsed::Name(_)) => Err(kind_error(op, &other, "a memory address `[...]`")),
    }
}
