//! PTX operand syntax: registers, special registers, literals, addresses `[...]`, surface
//! coordinates `[surf, {x, y}]`, vectors `{...}`, predicate pairs `p|q`, negated predicates
//! `!p` and the bit bucket `_`.
//!
//! This module only cuts an operand into its parts ([`Operand`]); what a name denotes (a
//! register, a `.shared` variable, a kernel parameter, a label) and what width an operand must
//! have is decided by the instruction lowering in `ops`, which knows the instruction's types.
//!
//! # Literals (PTX ISA "Constants")
//!
//! * Integers: decimal `[1-9][0-9]*`, hex `0[xX][0-9a-fA-F]+`, octal `0[0-7]+`, binary
//!   `0[bB][01]+`, each with an optional `U` suffix; a leading `-` negates.
//! * Floats: `0[fF]` followed by exactly 8 hex digits is the raw bits of an `f32`, `0[dD]`
//!   followed by exactly 16 hex digits the raw bits of an `f64`; a decimal with a `.` or an
//!   exponent (`1.5`, `2e-3`) is a double-precision value.

use super::super::lexer::{join, SyntaxError, Token};
use crate::ir::Span;

/// A literal as written (before it is given the instruction's type).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Literal {
    /// An integer: its magnitude (`negative` is the leading `-`).
    Int { value: u64, negative: bool },
    /// `0fXXXXXXXX`: the raw bits of an `f32`.
    F32Bits { bits: u32, negative: bool },
    /// `0dXXXXXXXXXXXXXXXX`: the raw bits of an `f64`.
    F64Bits { bits: u64, negative: bool },
    /// A decimal float (a double-precision value, sign included).
    Float(f64),
}

/// One operand as written.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A name: a register (`%r1`, `%rd<3>`-declared names, or plain identifiers), a variable,
    /// a parameter or a label; resolved by the lowering. `negate` is a leading `!`.
    Name {
        name: String,
        negate: bool,
        span: Span,
    },
    /// A special register such as `%tid.x` (the full name, `%` included).
    Special { name: String, span: Span },
    /// A literal.
    Literal { lit: Literal, span: Span },
    /// `[base]`, `[base+imm]`, `[base+-imm]`, `[base-imm]`, `[imm]`: `base` is a register or a
    /// variable name.
    Address {
        base: Option<(String, Span)>,
        offset: i64,
        span: Span,
    },
    /// `[surf, b]`: the surface operand of `sured`/`suld`/`sust` (`surf` a `.u64` register
    /// holding a surface object, `b` the coordinates: a scalar or a vector `{x, y, ...}`).
    Surface {
        handle: (String, Span),
        coords: Box<Operand>,
        span: Span,
    },
    /// `{a, b, ...}`: registers or `_`.
    Vector { elems: Vec<Operand>, span: Span },
    /// `p|q`: the two predicate destinations of `setp`.
    PredPair {
        first: (String, Span),
        second: (String, Span),
        span: Span,
    },
    /// `_`: the bit bucket (a discarded result).
    Sink { span: Span },
}

impl Operand {
    pub fn span(&self) -> Span {
        match self {
            Operand::Name { span, .. }
            | Operand::Special { span, .. }
            | Operand::Literal { span, .. }
            | Operand::Address { span, .. }
            | Operand::Surface { span, .. }
            | Operand::Vector { span, .. }
            | Operand::PredPair { span, .. }
            | Operand::Sink { span } => *span,
        }
    }

    /// How the operand reads in an error message.
    pub fn describe(&self) -> &'static str {
        match self {
            Operand::Name { .. } => "a name",
            Operand::Special { .. } => "a special register",
            Operand::Literal { .. } => "a literal",
            Operand::Address { .. } => "an address `[...]`",
            Operand::Surface { .. } => "a surface operand `[surf, {x, ...}]`",
            Operand::Vector { .. } => "a vector `{...}`",
            Operand::PredPair { .. } => "a predicate pair `p|q`",
            Operand::Sink { .. } => "the bit bucket `_`",
        }
    }
}

/// The special registers atomjit provides (the PTX names with their component).
pub const SPECIAL_REGISTERS: &[&str] = &[
    "%tid.x",
    "%tid.y",
    "%tid.z",
    "%ntid.x",
    "%ntid.y",
    "%ntid.z",
    "%ctaid.x",
    "%ctaid.y",
    "%ctaid.z",
    "%nctaid.x",
    "%nctaid.y",
    "%nctaid.z",
    "%laneid",
    "%warpid",
    "%nwarpid",
    "%lanemask_eq",
    "%lanemask_lt",
    "%lanemask_le",
    "%lanemask_gt",
    "%lanemask_ge",
];

/// Special registers PTX defines that atomjit does not provide (named in the error).
const OTHER_SPECIAL_REGISTERS: &[&str] = &[
    "%tid",
    "%ntid",
    "%ctaid",
    "%nctaid",
    "%smid",
    "%nsmid",
    "%gridid",
    "%clock",
    "%clock64",
    "%clock_hi",
    "%globaltimer",
    "%globaltimer_lo",
    "%globaltimer_hi",
    "%pm0",
    "%dynamic_smem_size",
    "%total_smem_size",
    "%aggr_smem_size",
    "%is_explicit_cluster",
    "%clusterid",
    "%nclusterid",
    "%cluster_ctaid",
    "%cluster_nctaid",
    "%cluster_ctarank",
    "%cluster_nctarank",
    "%reserved_smem_offset_begin",
];

fn is_special(name: &str) -> bool {
    SPECIAL_REGISTERS.contains(&name)
        || OTHER_SPECIAL_REGISTERS.contains(&name)
        || name.starts_with("%envreg")
        || name.starts_with("%pm")
        || name.starts_with("%clusterid.")
        || name.starts_with("%nclusterid.")
        || name.starts_with("%cluster_ctaid.")
        || name.starts_with("%cluster_nctaid.")
}

/// Parses a PTX number word (no sign). `None` if the word does not start with a digit.
pub fn number(text: &str) -> Option<Result<Literal, String>> {
    let first = text.chars().next()?;
    if !first.is_ascii_digit() {
        return None;
    }
    Some(number_inner(text))
}

fn hex_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit())
}

fn number_inner(text: &str) -> Result<Literal, String> {
    let too_large = || format!("the literal `{text}` does not fit 64 bits");
    let malformed = || format!("malformed literal `{text}`");
    let bytes = text.as_bytes();
    if bytes.len() >= 2 && bytes[0] == b'0' && matches!(bytes[1], b'f' | b'F') {
        let digits = &text[2..];
        if digits.len() != 8 || !hex_digits(digits) {
            return Err(format!(
                "`{text}`: a `0f` literal is exactly 8 hex digits (the bits of an f32)"
            ));
        }
        let bits = u32::from_str_radix(digits, 16).map_err(|_| malformed())?;
        return Ok(Literal::F32Bits {
            bits,
            negative: false,
        });
    }
    if bytes.len() >= 2 && bytes[0] == b'0' && matches!(bytes[1], b'd' | b'D') {
        let digits = &text[2..];
        if digits.len() != 16 || !hex_digits(digits) {
            return Err(format!(
                "`{text}`: a `0d` literal is exactly 16 hex digits (the bits of an f64)"
            ));
        }
        let bits = u64::from_str_radix(digits, 16).map_err(|_| malformed())?;
        return Ok(Literal::F64Bits {
            bits,
            negative: false,
        });
    }
    let int = |digits: &str, radix: u32| -> Result<Literal, String> {
        if digits.is_empty() {
            return Err(malformed());
        }
        let value = u64::from_str_radix(digits, radix).map_err(|e| {
            if matches!(e.kind(), std::num::IntErrorKind::PosOverflow) {
                too_large()
            } else {
                malformed()
            }
        })?;
        Ok(Literal::Int {
            value,
            negative: false,
        })
    };
    let body = text.strip_suffix('U').unwrap_or(text);
    if let Some(d) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        return int(d, 16);
    }
    if let Some(d) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
        return int(d, 2);
    }
    if body.bytes().all(|b| b.is_ascii_digit()) {
        if body.len() > 1 && body.starts_with('0') {
            return int(&body[1..], 8);
        }
        return int(body, 10);
    }
    // A decimal float: digits with a `.` and/or an exponent.
    if text.contains(['.', 'e', 'E']) {
        return match text.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(Literal::Float(v)),
            Ok(_) => Err(format!("the float literal `{text}` overflows f64")),
            Err(_) => Err(malformed()),
        };
    }
    Err(malformed())
}

impl Literal {
    /// The literal with its sign flipped (`-` in front of it).
    pub fn negated(self) -> Literal {
        match self {
            Literal::Int { value, negative } => Literal::Int {
                value,
                negative: !negative,
            },
            Literal::F32Bits { bits, negative } => Literal::F32Bits {
                bits,
                negative: !negative,
            },
            Literal::F64Bits { bits, negative } => Literal::F64Bits {
                bits,
                negative: !negative,
            },
            Literal::Float(v) => Literal::Float(-v),
        }
    }
}

/// Splits `toks` at top-level commas (commas inside `[]` and `{}` belong to their operand).
pub fn split_commas<'t, 'a>(toks: &'t [Token<'a>]) -> Vec<&'t [Token<'a>]> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, t) in toks.iter().enumerate() {
        if t.is_punct("[") || t.is_punct("{") {
            depth += 1;
        } else if t.is_punct("]") || t.is_punct("}") {
            depth -= 1;
        } else if t.is_punct(",") && depth == 0 {
            out.push(&toks[start..i]);
            start = i + 1;
        }
    }
    if start < toks.len() || !out.is_empty() {
        out.push(&toks[start..]);
    }
    out
}

fn span_of(toks: &[Token]) -> Span {
    match (toks.first(), toks.last()) {
        (Some(a), Some(b)) => join(a.span, b.span),
        _ => Span::default(),
    }
}

/// Parses one operand from its tokens. `fallback` is where an error about an empty operand
/// points.
pub fn parse_operand(toks: &[Token], fallback: Span) -> Result<Operand, SyntaxError> {
    let Some(first) = toks.first() else {
        return Err(SyntaxError::new(fallback, "empty operand").expected("an operand"));
    };
    let span = span_of(toks);
    if first.is_punct("[") {
        return parse_address(toks, span);
    }
    if first.is_punct("{") {
        let Some(last) = toks.last().filter(|t| t.is_punct("}")) else {
            return Err(SyntaxError::new(first.span, "unclosed `{`").expected("`}`"));
        };
        let _ = last;
        let inner = &toks[1..toks.len() - 1];
        let mut elems = Vec::new();
        for part in split_commas(inner) {
            let e = parse_operand(part, first.span)?;
            // A literal element is a source value (ptxas takes `st.v2.u32 [a], {1, %r2}` and
            // `red.add.v2.f32 [a], {0f3F800000, %f1}`); a destination refuses it.
            match e {
                Operand::Name { negate: false, .. }
                | Operand::Sink { .. }
                | Operand::Literal { .. } => elems.push(e),
                other @ (Operand::Name { .. }
                | Operand::Special { .. }
                | Operand::Address { .. }
                | Operand::Surface { .. }
                | Operand::Vector { .. }
                | Operand::PredPair { .. }) => {
                    return Err(SyntaxError::new(
                        other.span(),
                        format!("{} cannot be a vector element", other.describe()),
                    )
                    .expected("a register or `_`"))
                }
            }
        }
        if elems.is_empty() {
            return Err(SyntaxError::new(span, "empty vector").expected("registers"));
        }
        return Ok(Operand::Vector { elems, span });
    }
    if first.is_punct("-") {
        let rest = &toks[1..];
        let lit = single_literal(rest, span)?;
        return Ok(Operand::Literal {
            lit: lit.negated(),
            span,
        });
    }
    if first.is_punct("!") {
        let rest = &toks[1..];
        return match rest {
            [t] if t.is_word() && !t.text.starts_with(|c: char| c.is_ascii_digit()) => {
                Ok(Operand::Name {
                    name: t.text.to_string(),
                    negate: true,
                    span,
                })
            }
            _ => Err(
                SyntaxError::new(span, "`!` must precede a predicate register").expected("`!%p1`"),
            ),
        };
    }
    if toks.len() == 3 && toks[1].is_punct("|") && toks[0].is_word() && toks[2].is_word() {
        return Ok(Operand::PredPair {
            first: (toks[0].text.to_string(), toks[0].span),
            second: (toks[2].text.to_string(), toks[2].span),
            span,
        });
    }
    if toks.len() != 1 || !first.is_word() {
        let bad = toks.get(1).unwrap_or(first);
        return Err(SyntaxError::new(
            bad.span,
            format!("unexpected {} in an operand", bad.describe()),
        )
        .expected("a register, a literal, `[address]` or `{vector}`"));
    }
    let text = first.text;
    if text == "_" {
        return Ok(Operand::Sink { span });
    }
    if let Some(lit) = number(text) {
        return Ok(Operand::Literal {
            lit: lit.map_err(|m| SyntaxError::new(span, m))?,
            span,
        });
    }
    if is_special(text) {
        return Ok(Operand::Special {
            name: text.to_string(),
            span,
        });
    }
    Ok(Operand::Name {
        name: text.to_string(),
        negate: false,
        span,
    })
}

fn single_literal(toks: &[Token], span: Span) -> Result<Literal, SyntaxError> {
    match toks {
        [t] if t.is_word() => match number(t.text) {
            Some(r) => r.map_err(|m| SyntaxError::new(t.span, m)),
            None => Err(
                SyntaxError::new(t.span, format!("`{}` is not a literal", t.text))
                    .expected("a number after `-`"),
            ),
        },
        _ => Err(SyntaxError::new(span, "expected a number after `-`").expected("a number")),
    }
}

/// `[base]`, `[base+off]`, `[base+-off]`, `[base-off]`, `[off]`.
fn parse_address(toks: &[Token], span: Span) -> Result<Operand, SyntaxError> {
    let Some(close) = toks.last().filter(|t| t.is_punct("]")) else {
        return Err(SyntaxError::new(toks[0].span, "unclosed `[`").expected("`]`"));
    };
    let _ = close;
    let inner = &toks[1..toks.len() - 1];
    if let [handle, coords] = split_commas(inner).as_slice() {
        return parse_surface(handle, coords, span);
    }
    let bad = |t: &Token| {
        SyntaxError::new(t.span, format!("unexpected {} in an address", t.describe()))
            .expected("`[reg]`, `[reg+imm]`, `[var+imm]` or `[imm]`")
    };
    let Some(first) = inner.first() else {
        return Err(SyntaxError::new(span, "empty address").expected("`[reg]` or `[var]`"));
    };
    // Leading literal: `[imm]` or `[-imm]`.
    let mut i;
    let mut base = None;
    let mut offset: i64 = 0;
    let lit_at = |i: usize, negative: bool| -> Result<i64, SyntaxError> {
        let t = inner.get(i).ok_or_else(|| {
            SyntaxError::new(span, "expected an offset after the sign").expected("an integer")
        })?;
        match number(t.text).filter(|_| t.is_word()) {
            Some(Ok(Literal::Int { value, .. })) => {
                let v = i64::try_from(value).map_err(|_| {
                    SyntaxError::new(t.span, "the address offset does not fit 64 bits")
                })?;
                Ok(if negative { -v } else { v })
            }
            Some(Ok(_)) => Err(SyntaxError::new(t.span, "an address offset is an integer")),
            Some(Err(m)) => Err(SyntaxError::new(t.span, m)),
            None => Err(bad(t)),
        }
    };
    if first.is_punct("-") {
        offset = lit_at(1, true)?;
        i = 2;
    } else if first.is_word() && number(first.text).is_some() {
        offset = lit_at(0, false)?;
        i = 1;
    } else if first.is_word() {
        base = Some((first.text.to_string(), first.span));
        i = 1;
        if let Some(sign) = inner.get(1) {
            let negative = if sign.is_punct("+") {
                if inner.get(2).is_some_and(|t| t.is_punct("-")) {
                    i = 3;
                    true
                } else {
                    i = 2;
                    false
                }
            } else if sign.is_punct("-") {
                i = 2;
                true
            } else {
                return Err(bad(sign));
            };
            offset = lit_at(i, negative)?;
            i += 1;
        }
    } else {
        return Err(bad(first));
    }
    if let Some(t) = inner.get(i) {
        return Err(bad(t));
    }
    Ok(Operand::Address { base, offset, span })
}

/// `[surf, b]`: `surf` a name (a register; `.surfref` variables are refused by the lowering),
/// `b` a register or a vector of registers and literals.
fn parse_surface(handle: &[Token], coords: &[Token], span: Span) -> Result<Operand, SyntaxError> {
    let handle = match handle {
        [t] if t.is_word() && number(t.text).is_none() && !is_special(t.text) => {
            (t.text.to_string(), t.span)
        }
        _ => {
            return Err(SyntaxError::new(
                if handle.is_empty() {
                    span
                } else {
                    span_of(handle)
                },
                "the surface of `[surf, coordinates]` must be a .u64 register",
            )
            .expected("`[%rd1, {%r1, %r2}]`"))
        }
    };
    let coords = parse_operand(coords, span)?;
    match coords {
        // ptxas: a literal coordinate must be in braces (`[s, {4}]`; `[s, 4]` is a syntax error).
        Operand::Name { negate: false, .. } | Operand::Vector { .. } => Ok(Operand::Surface {
            handle,
            coords: Box::new(coords),
            span,
        }),
        other @ (Operand::Name { .. }
        | Operand::Special { .. }
        | Operand::Literal { .. }
        | Operand::Address { .. }
        | Operand::Surface { .. }
        | Operand::PredPair { .. }
        | Operand::Sink { .. }) => Err(SyntaxError::new(
            other.span(),
            format!(
                "{} cannot be the coordinates of a surface operand",
                other.describe()
            ),
        )
        .expected("a register or a vector `{x, y}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::lexer::lex;

    fn op(text: &str) -> Result<Operand, SyntaxError> {
        let toks = lex(text).unwrap();
        parse_operand(&toks, Span::default())
    }

    #[test]
    fn literals_in_every_radix() {
        let int = |v| Literal::Int {
            value: v,
            negative: false,
        };
        assert_eq!(number("42"), Some(Ok(int(42))));
        assert_eq!(number("0"), Some(Ok(int(0))));
        assert_eq!(number("0x1F"), Some(Ok(int(31))));
        assert_eq!(number("0xffffffffU"), Some(Ok(int(0xffff_ffff))));
        assert_eq!(number("010"), Some(Ok(int(8))), "a leading 0 is octal");
        assert_eq!(number("0b101"), Some(Ok(int(5))));
        assert_eq!(
            number("0f3F800000"),
            Some(Ok(Literal::F32Bits {
                bits: 0x3f80_0000,
                negative: false
            }))
        );
        assert_eq!(
            number("0d3FF0000000000000"),
            Some(Ok(Literal::F64Bits {
                bits: 0x3ff0_0000_0000_0000,
                negative: false
            }))
        );
        assert_eq!(number("1.5"), Some(Ok(Literal::Float(1.5))));
        assert_eq!(number("2e-3"), Some(Ok(Literal::Float(0.002))));
        assert!(number("0f3F80").unwrap().is_err());
        assert!(number("09").unwrap().is_err(), "9 is not an octal digit");
        assert!(number("0x").unwrap().is_err());
        assert!(number("99999999999999999999").unwrap().is_err());
        assert_eq!(number("abc"), None);
    }

    #[test]
    fn operand_forms() {
        assert!(
            matches!(op("%r1"), Ok(Operand::Name { ref name, negate: false, .. }) if name == "%r1")
        );
        assert!(
            matches!(op("!%p2"), Ok(Operand::Name { ref name, negate: true, .. }) if name == "%p2")
        );
        assert!(matches!(op("%tid.x"), Ok(Operand::Special { .. })));
        assert!(matches!(op("%clock"), Ok(Operand::Special { .. })));
        assert!(matches!(
            op("-1"),
            Ok(Operand::Literal {
                lit: Literal::Int {
                    value: 1,
                    negative: true
                },
                ..
            })
        ));
        assert!(matches!(op("_"), Ok(Operand::Sink { .. })));
        assert!(
            matches!(op("%p1|%p2"), Ok(Operand::PredPair { ref first, ref second, .. }) if first.0 == "%p1" && second.0 == "%p2")
        );
        let addr = |t: &str| match op(t) {
            Ok(Operand::Address { base, offset, .. }) => (base.map(|b| b.0), offset),
            other => panic!("{t}: {other:?}"),
        };
        assert_eq!(addr("[%rd1]"), (Some("%rd1".into()), 0));
        assert_eq!(addr("[%rd1+4]"), (Some("%rd1".into()), 4));
        assert_eq!(addr("[%rd1+-4]"), (Some("%rd1".into()), -4));
        assert_eq!(addr("[%rd1-8]"), (Some("%rd1".into()), -8));
        assert_eq!(addr("[smem+0x10]"), (Some("smem".into()), 16));
        assert_eq!(addr("[64]"), (None, 64));
        assert!(op("[%rd1+%rd2]").is_err());
        assert!(op("[%rd1 4]").is_err());
        assert!(op("[]").is_err());
        assert!(op("[%rd1").is_err());
        match op("{%r1, _}") {
            Ok(Operand::Vector { elems, .. }) => assert_eq!(elems.len(), 2),
            other => panic!("{other:?}"),
        }
        // Literal elements are source values (`st.v2.u32 [a], {1, %r2}`, which ptxas takes).
        match op("{1, %r2}") {
            Ok(Operand::Vector { elems, .. }) => {
                assert!(matches!(elems[0], Operand::Literal { .. }))
            }
            other => panic!("{other:?}"),
        }
        assert!(op("{[%rd1], %r2}").is_err());
        assert!(op("{%tid.x, %r2}").is_err());
        assert!(op("{!%p1, %r2}").is_err());
        assert!(op("%r1 %r2").is_err());
    }

    #[test]
    fn commas_inside_brackets_do_not_split() {
        let toks = lex("{%r1, %r2}, [%rd1+4], 5").unwrap();
        let parts = split_commas(&toks);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0].len(), 5);
    }
}
