//! The dialect-neutral part of a program file: numbers, launch directives, buffers, parameters
//! and expectations. [`crate::front::directive`] parses directive lines with the readers here;
//! the SASS front-end applies them to a kernel with [`LaunchBuilder`], launch files with
//! [`crate::front::launch`]. The engine's overrides use the string helpers (`parse_*`,
//! `check_*`). Launch limits are [`crate::ir::limits`], checked by
//! [`crate::valid::launch_problems`]; `check_*` word its verdicts for errors at a directive.
//!
//! # Directives
//!
//! A directive is one line (an optional trailing `;` and comments are allowed), so an
//! initialiser or expectation list must fit on its line.
//!
//! | directive | meaning |
//! |---|---|
//! | `.grid X[,Y[,Z]]` | CTAs per dimension (default 1); each at least 1, X at most 2^31-1, Y and Z at most 65535 (the CUDA limits) |
//! | `.block X[,Y[,Z]]` | threads per CTA (default 32); each at least 1, product at most 1024 |
//! | `.shared BYTES` | shared memory per CTA (default 0), at most 16 MiB (the window of `000_6d05a8552870c0ae.txt`) |
//! | `.buffer NAME TY[LEN] = INIT` | a global buffer of `LEN >= 1` elements |
//! | `.param NAME TY = VALUE` | a scalar kernel parameter |
//! | `.surface NAME DIM TY[W{,H{,D}}] {layers N} {pitch{(BYTES)} \| blocklinear(H,D)} {disabled} {sparse P{,P}} = INIT` | a surface in global memory (`docs/surfaces.md`) |
//! | `.expect ...` | a check run after the launch |
//! | `.expect trap REASON` | the launch must trap for `REASON` (`exec::TrapReason::name`: `misaligned_address`, `address_out_of_range`, `surface_out_of_bounds`, `invalid_surface`, `surface_mismatch`); the buffer checks are then skipped |
//!
//! Element types: `u8 u16 u32 u64 s8 s16 s32 s64 f16 f32 f64`. Initialisers: a scalar fill
//! (`= 0`), a list (`= {1, 2, 3}`; shorter than the buffer: the rest is zero; longer: an error),
//! `iota` (element `i` is `i`), `random(SEED)` and `random(SEED, LO, HI)` (integers in
//! `[LO, HI)`; `LO < HI`, and `LO` and `HI - 1` must fit the element type), from the seeded
//! generator of [`crate::exec::random`].
//!
//! Numbers: decimal (`42`, `-7`), hex (`0x1f`, `-0x10`), floats (`1.5`, `-2e3`, `inf`, `-inf`,
//! `nan`). A value must fit its type exactly: integer types take integers in their range (so
//! `s32 = 0xffffffff` is an error, write `-1`), float types take any number whose conversion is
//! finite (or an explicit `inf`/`nan`).
//!
//! # Kernel parameters in constant bank 0 (Volta–Ampere)
//!
//! `c[0x0][0x0]`, `0x4`, `0x8` hold the block size x, y, z and `0xc`, `0x10`, `0x14` the grid
//! size x, y, z. Buffers (as 8-byte device addresses) and `.param` scalars follow from
//! `c[0x0][0x160]` ([`crate::ir::PARAM_BASE`]; a listing's architecture may move it, see
//! [`crate::ir::CbankLayout`]) on, in declaration order, each naturally aligned
//! ([`assign_cbank_offsets`]). Code may also name them: `c[0x0][NAME]`, `c[0x0][NAME+0x4]`.
//!
//! # Expectations
//!
//! `NAME[i] OP V`, `NAME[a..b] OP V` (every element `a <= i < b`), `NAME OP V` (every
//! element), `NAME == {..}` and `NAME[a..b] == {..}` (element by element; the list must have
//! exactly as many values as the buffer or range), `sum(NAME) OP V`, `min(NAME) OP V`,
//! `max(NAME) OP V`, `count(NAME, V) OP N`, with `OP` one of `== != < <= > >=`. Element
//! values (and `count`'s `V`) must fit the buffer's element type; `sum` is not range-checked
//! (a sum may exceed the type) and `count` compares with an integer.

use super::directive::{self, Directive, LAUNCH_DIRECTIVES};
use super::lexer::{end_of, join, lex, list_values, Cursor, SyntaxError, TokKind, Token};
use crate::ir::surface::{
    SurfaceDecl, SurfaceDim, SurfaceLayout, SurfaceShape, MAX_SURFACE_BYTES, SPARSE_PAGE_BYTES,
};
use crate::ir::{
    CbankLayout, CmpOp, Expect, ExpectLhs, ExpectRhs, Init, LaunchSpec, ParamDecl, Scalar, Span,
    Ty, MAX_BLOCK_THREADS, MAX_GRID_X, MAX_GRID_YZ, SHARED_WINDOW_BYTES,
};
use crate::valid::{self, LaunchLimit};
use std::collections::HashMap;

// ---------------------------------------------------------------------------------------------
// Name lookup

/// A slice of named items with a by-name index, so that resolving a name costs the same for
/// the first declaration as for the hundred-thousandth. The first item of a name wins, as a
/// front-to-back search would find it (front-ends reject duplicates anyway).
#[derive(Debug, Clone)]
pub struct ByName<'p, T> {
    items: &'p [T],
    index: HashMap<&'p str, usize>,
}

impl<'p, T> ByName<'p, T> {
    /// Indexes `items` by `name_of`.
    pub fn new(items: &'p [T], name_of: impl Fn(&'p T) -> &'p str) -> ByName<'p, T> {
        let mut index = HashMap::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            index.entry(name_of(item)).or_insert(i);
        }
        ByName { items, index }
    }

    /// The item called `name`, if any.
    pub fn get(&self, name: &str) -> Option<&'p T> {
        self.index.get(name).map(|&i| &self.items[i])
    }

    /// All items, in their original order.
    pub fn items(&self) -> &'p [T] {
        self.items
    }
}

impl<'p> ByName<'p, ParamDecl> {
    /// Indexes launch parameters (buffers and scalars) by name.
    pub fn params(params: &'p [ParamDecl]) -> ByName<'p, ParamDecl> {
        ByName::new(params, |p| p.name.as_str())
    }
}

// ---------------------------------------------------------------------------------------------
// Numbers

/// A number as written: its value and whether it was written in hex (SASS float operands take a
/// hex immediate as raw bits).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NumberLit {
    pub value: Scalar,
    pub hex: bool,
}

/// Reads one word as an unsigned number. `None` if the word does not look like a number at all;
/// `Some(Err)` if it does but is malformed or too large. Accepts decimal, `0x` hex, floats and
/// (case-insensitively) `inf`, `infinity`, `nan`, `qnan`.
pub fn number_word(text: &str) -> Option<Result<NumberLit, String>> {
    let lower = text.to_ascii_lowercase();
    match lower.as_str() {
        "inf" | "infinity" => {
            return Some(Ok(NumberLit {
                value: Scalar::Float(f64::INFINITY),
                hex: false,
            }))
        }
        "nan" | "qnan" => {
            return Some(Ok(NumberLit {
                value: Scalar::Float(f64::NAN),
                hex: false,
            }))
        }
        _ => {}
    }
    if let Some(digits) = lower.strip_prefix("0x") {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Some(Err(format!("malformed hex number `{text}`")));
        }
        return Some(match u128::from_str_radix(digits, 16) {
            Ok(v) if v <= i128::MAX as u128 => Ok(NumberLit {
                value: Scalar::Int(v as i128),
                hex: true,
            }),
            _ => Err(format!("number `{text}` is too large")),
        });
    }
    if !lower.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if lower.bytes().all(|b| b.is_ascii_digit()) {
        return Some(match lower.parse::<i128>() {
            Ok(v) => Ok(NumberLit {
                value: Scalar::Int(v),
                hex: false,
            }),
            Err(_) => Err(format!("number `{text}` is too large")),
        });
    }
    Some(match lower.parse::<f64>() {
        Ok(v) if v.is_infinite() => Err(format!("number `{text}` is too large for a 64-bit float")),
        Ok(v) => Ok(NumberLit {
            value: Scalar::Float(v),
            hex: false,
        }),
        Err(_) => Err(format!("malformed number `{text}`")),
    })
}

fn negate(v: Scalar) -> Scalar {
    match v {
        Scalar::Int(i) => Scalar::Int(-i),
        Scalar::Float(f) => Scalar::Float(-f),
    }
}

/// Reads an optionally signed number (`-0x10`, `+5`, `-inf`).
pub fn number(cur: &mut Cursor) -> Result<(NumberLit, Span), SyntaxError> {
    let sign = if let Some(s) = cur.eat_punct("-") {
        Some((true, s))
    } else {
        cur.eat_punct("+").map(|s| (false, s))
    };
    let Some(tok) = cur.peek().filter(|t| t.is_word()) else {
        return Err(cur.error_expected("a number"));
    };
    let lit = match number_word(tok.text) {
        None => return Err(cur.error_expected("a number")),
        Some(Err(msg)) => return Err(SyntaxError::new(tok.span, msg).expected("a number")),
        Some(Ok(lit)) => lit,
    };
    cur.next();
    let span = sign.map(|(_, s)| join(s, tok.span)).unwrap_or(tok.span);
    let value = if sign.is_some_and(|(neg, _)| neg) {
        negate(lit.value)
    } else {
        lit.value
    };
    Ok((
        NumberLit {
            value,
            hex: lit.hex,
        },
        span,
    ))
}

/// Reads an optionally signed number as a [`Scalar`].
pub fn scalar(cur: &mut Cursor) -> Result<(Scalar, Span), SyntaxError> {
    number(cur).map(|(lit, span)| (lit.value, span))
}

/// Reads a non-negative integer that fits `u64`; `what` names it in errors.
pub fn unsigned(cur: &mut Cursor, what: &str) -> Result<(u64, Span), SyntaxError> {
    let (v, span) = scalar(cur)?;
    match v {
        Scalar::Int(i) if (0..=u64::MAX as i128).contains(&i) => Ok((i as u64, span)),
        Scalar::Int(_) => Err(SyntaxError::new(
            span,
            format!("{what} must be between 0 and 2^64-1"),
        )),
        Scalar::Float(_) => {
            Err(SyntaxError::new(span, format!("{what} must be an integer")).expected("an integer"))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Values and types

/// The inclusive integer range of an integer type (`B*` types count as unsigned).
fn int_range(ty: Ty) -> Option<(i128, i128)> {
    let unsigned = |bits: u32| Some((0, (1i128 << bits) - 1));
    let signed = |bits: u32| Some((-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1));
    match ty {
        Ty::U8 => unsigned(8),
        Ty::U16 | Ty::B16 => unsigned(16),
        Ty::U32 | Ty::B32 => unsigned(32),
        Ty::U64 | Ty::B64 => unsigned(64),
        Ty::S8 => signed(8),
        Ty::S16 => signed(16),
        Ty::S32 => signed(32),
        Ty::S64 => signed(64),
        // No program-file value has 128 bits (`Ty::is_buffer_elem`).
        Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64 | Ty::F16x2 | Ty::BF16x2 | Ty::B128 => None,
    }
}

/// True when the finite `v` stays finite when rounded to the float type `ty`.
fn float_finite_in(ty: Ty, v: f64) -> Result<bool, String> {
    match ty {
        Ty::F16 => Ok(half::f16::from_f64(v).is_finite()),
        Ty::BF16 => Ok(half::bf16::from_f64(v).is_finite()),
        Ty::F32 => Ok((v as f32).is_finite()),
        Ty::F64 => Ok(true),
        Ty::F16x2 | Ty::BF16x2 => Err(format!("{ty} is a packed pair, not a scalar type")),
        Ty::B128 => Err(format!("{ty} is not a program-file value type")),
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
        | Ty::B64 => Ok(true),
    }
}

/// Checks that `v` fits type `ty` exactly: an integer type takes integers in its range (no
/// floats); a float type takes any number whose conversion is finite, or an explicit inf/NaN.
pub fn check_value_fits(ty: Ty, v: Scalar) -> Result<(), String> {
    match (int_range(ty), v) {
        (Some((lo, hi)), Scalar::Int(i)) => {
            if (lo..=hi).contains(&i) {
                Ok(())
            } else {
                Err(format!("{i} does not fit {ty} (range {lo}..={hi})"))
            }
        }
        (Some(_), Scalar::Float(f)) => Err(format!("{f:?} is not an integer; {ty} takes integers")),
        (None, Scalar::Int(i)) => {
            if float_finite_in(ty, i as f64)? {
                Ok(())
            } else {
                Err(format!("{i} is too large for {ty}"))
            }
        }
        (None, Scalar::Float(f)) => {
            if !f.is_finite() || float_finite_in(ty, f)? {
                Ok(())
            } else {
                Err(format!("{f:?} is too large for {ty}"))
            }
        }
    }
}

/// The element types a buffer or parameter can have, as written in program files.
pub fn buffer_elem_names() -> String {
    Ty::ALL
        .iter()
        .filter(|t| t.is_buffer_elem())
        .map(|t| t.name())
        .collect::<Vec<_>>()
        .join(" ")
}

fn elem_type(cur: &mut Cursor) -> Result<(Ty, Span), SyntaxError> {
    let expected = format!("an element type (one of {})", buffer_elem_names());
    let tok = cur.expect_word(&expected)?;
    match Ty::from_name(&tok.text.to_ascii_lowercase()).filter(|t| t.is_buffer_elem()) {
        Some(ty) => Ok((ty, tok.span)),
        None => Err(
            SyntaxError::new(tok.span, format!("unknown element type `{}`", tok.text))
                .expected(expected),
        ),
    }
}

/// True for `[A-Za-z_][A-Za-z0-9_]*`.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Reads a name (`[A-Za-z_][A-Za-z0-9_]*`).
pub fn name(cur: &mut Cursor, what: &str) -> Result<(String, Span), SyntaxError> {
    let tok = cur.expect_word(what)?;
    if is_identifier(tok.text) {
        Ok((tok.text.to_string(), tok.span))
    } else {
        Err(
            SyntaxError::new(tok.span, format!("`{}` is not a valid name", tok.text)).expected(
                format!("{what} (letters, digits and `_`, not starting with a digit)"),
            ),
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Launch shape

/// Reads `X[,Y[,Z]]`: each dimension at least 1; missing ones are 1.
pub fn dims(cur: &mut Cursor) -> Result<([u32; 3], Span), SyntaxError> {
    let mut out = [1u32; 3];
    let start = cur.here();
    let mut last = start;
    for (i, slot) in out.iter_mut().enumerate() {
        if i > 0 && cur.eat_punct(",").is_none() {
            break;
        }
        let (v, span) = unsigned(cur, "a dimension")?;
        if v == 0 {
            return Err(
                SyntaxError::new(span, "a dimension cannot be zero").expected("a positive integer")
            );
        }
        *slot =
            u32::try_from(v).map_err(|_| SyntaxError::new(span, "a dimension must fit 32 bits"))?;
        last = span;
    }
    Ok((out, join(start, last)))
}

/// Checks a block shape against the block limit ([`crate::valid::block_problems`]), worded for
/// an error at the shape.
pub fn check_block(block: [u32; 3]) -> Result<(), String> {
    let Some(problem) = valid::block_problems(block).into_iter().next() else {
        return Ok(());
    };
    Err(match problem.limit {
        LaunchLimit::BlockThreads { threads, .. } => format!(
            "a block of {}x{}x{} = {threads} threads exceeds {MAX_BLOCK_THREADS}",
            block[0], block[1], block[2]
        ),
        LaunchLimit::BlockZero { .. }
        | LaunchLimit::GridZero { .. }
        | LaunchLimit::GridX { .. }
        | LaunchLimit::GridYZ { .. }
        | LaunchLimit::SharedWindow { .. } => problem.message,
    })
}

/// Checks a grid shape against the CUDA limits ([`crate::valid::grid_problems`]), worded for an
/// error at the shape.
pub fn check_grid(grid: [u32; 3]) -> Result<(), String> {
    let Some(problem) = valid::grid_problems(grid).into_iter().next() else {
        return Ok(());
    };
    Err(match problem.limit {
        LaunchLimit::GridX { x } => format!("grid x = {x} exceeds {MAX_GRID_X}"),
        LaunchLimit::GridYZ { .. } => format!(
            "grid y and z must be at most {MAX_GRID_YZ} (got {}, {})",
            grid[1], grid[2]
        ),
        LaunchLimit::GridZero { .. }
        | LaunchLimit::BlockZero { .. }
        | LaunchLimit::BlockThreads { .. }
        | LaunchLimit::SharedWindow { .. } => problem.message,
    })
}

/// Checks a shared-memory size against the window ([`crate::valid::shared_problems`]), worded
/// for an error at the size; the size as a `u32` if it fits.
pub fn check_shared(bytes: u64) -> Result<u32, String> {
    match valid::shared_problems(bytes) {
        None => Ok(bytes as u32),
        Some(_) => Err(format!(
            "{bytes} bytes of shared memory exceed the 16 MiB window ({SHARED_WINDOW_BYTES})"
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Initialisers, buffers, parameters

/// Where the parts of an initialiser are, for errors.
#[derive(Debug, Clone, Default)]
pub struct InitSpans {
    /// The fill value, the list values in order, or (for random) the seed, LO and HI.
    pub values: Vec<Span>,
    pub whole: Span,
}

/// Which part of an initialiser an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum InitPart {
    Whole,
    Value(usize),
}

/// Reads an initialiser: a scalar, `{a, b, ...}`, `iota`, `random(SEED)` or
/// `random(SEED, LO, HI)`.
pub fn init(cur: &mut Cursor) -> Result<(Init, InitSpans), SyntaxError> {
    let start = cur.here();
    if let Some(open) = cur.eat_punct("{") {
        let (values, spans, close) = scalar_list(cur, open)?;
        return Ok((
            Init::List(values),
            InitSpans {
                values: spans,
                whole: join(open, close),
            },
        ));
    }
    if let Some(tok) = cur.peek().filter(|t| t.is_word()) {
        let lower = tok.text.to_ascii_lowercase();
        if lower == "iota" {
            cur.next();
            return Ok((
                Init::Iota,
                InitSpans {
                    values: vec![],
                    whole: tok.span,
                },
            ));
        }
        if lower == "random" {
            cur.next();
            cur.expect_punct("(")?;
            let (seed, seed_span) = unsigned(cur, "the seed")?;
            let mut spans = vec![seed_span];
            let mut range = None;
            if cur.eat_punct(",").is_some() {
                let (lo, lo_span) = integer(cur, "LO")?;
                cur.expect_punct(",")?;
                let (hi, hi_span) = integer(cur, "HI")?;
                spans.extend([lo_span, hi_span]);
                range = Some((lo, hi));
            }
            let close = cur.expect_punct(")")?;
            return Ok((
                Init::Random { seed, range },
                InitSpans {
                    values: spans,
                    whole: join(tok.span, close),
                },
            ));
        }
    }
    match scalar(cur) {
        Ok((v, span)) => Ok((
            Init::Fill(v),
            InitSpans {
                values: vec![span],
                whole: span,
            },
        )),
        Err(_) => Err(SyntaxError::new(
            start,
            format!("expected an initialiser, found {}", cur.found()),
        )
        .expected("a number, `{..}`, `iota`, `random(SEED)` or `random(SEED, LO, HI)`")),
    }
}

fn integer(cur: &mut Cursor, what: &str) -> Result<(i128, Span), SyntaxError> {
    match scalar(cur)? {
        (Scalar::Int(i), span) => Ok((i, span)),
        (Scalar::Float(_), span) => {
            Err(SyntaxError::new(span, format!("{what} must be an integer")))
        }
    }
}

/// Reads `a, b, c }` after an opening `{`; returns the values, their spans and the `}` span.
fn scalar_list(
    cur: &mut Cursor,
    open: Span,
) -> Result<(Vec<Scalar>, Vec<Span>, Span), SyntaxError> {
    let (mut values, mut spans) = (Vec::new(), Vec::new());
    loop {
        if let Some(close) = cur.eat_punct("}") {
            return Ok((values, spans, close));
        }
        if cur.at_end() {
            return Err(SyntaxError::new(open, "unclosed `{`").expected("`}`"));
        }
        let (v, span) = scalar(cur)?;
        values.push(v);
        spans.push(span);
        if cur.at_end() {
            return Err(SyntaxError::new(open, "unclosed `{`").expected("`}`"));
        }
        if cur.eat_punct(",").is_none() && !cur.is_punct("}") {
            return Err(cur.error_expected("`,` or `}`"));
        }
    }
}

fn check_init_parts(elem: Ty, len: u64, init: &Init) -> Result<(), (InitPart, String)> {
    match init {
        Init::Fill(v) => check_value_fits(elem, *v).map_err(|m| (InitPart::Value(0), m)),
        Init::List(values) => {
            if values.len() as u64 > len {
                return Err((
                    InitPart::Whole,
                    format!(
                        "the list has {} values but the buffer has only {len} elements",
                        values.len()
                    ),
                ));
            }
            for (i, v) in values.iter().enumerate() {
                check_value_fits(elem, *v).map_err(|m| (InitPart::Value(i), m))?;
            }
            Ok(())
        }
        Init::Encoded(bytes) => {
            let size = elem.bytes() as usize;
            if bytes.len() % size != 0 {
                return Err((
                    InitPart::Whole,
                    format!(
                        "the list's {} bytes are not a whole number of {elem} values",
                        bytes.len()
                    ),
                ));
            }
            let values = (bytes.len() / size) as u64;
            if values > len {
                return Err((
                    InitPart::Whole,
                    format!("the list has {values} values but the buffer has only {len} elements"),
                ));
            }
            Ok(())
        }
        Init::Iota => Ok(()),
        Init::Random { range: None, .. } => Ok(()),
        Init::Random {
            range: Some((lo, hi)),
            ..
        } => {
            if lo >= hi {
                return Err((
                    InitPart::Value(1),
                    format!("random range is empty: LO ({lo}) must be less than HI ({hi})"),
                ));
            }
            check_value_fits(elem, Scalar::Int(*lo)).map_err(|m| (InitPart::Value(1), m))?;
            check_value_fits(elem, Scalar::Int(hi - 1))
                .map_err(|m| (InitPart::Value(2), format!("the largest value HI-1: {m}")))
        }
    }
}

/// Reads the initialiser of a buffer (or surface) of `len` elements of `elem`, checks it and
/// returns it with its span. A list becomes [`Init::Encoded`]; one lexed as a
/// [`TokKind::List`] token is converted value by value from its text, so that a list of
/// millions of values needs their bytes in the element type and one chunk of tokens, not a
/// token, a [`Scalar`] and a span each.
fn typed_init(cur: &mut Cursor, elem: Ty, len: u64) -> Result<(Init, Span), SyntaxError> {
    let size = elem.bytes() as usize;
    if let Some(list) = cur.peek().filter(|t| t.kind == TokKind::List) {
        cur.next();
        // Room for the values (one more than the commas, at most the buffer's length).
        let estimate = list.text.bytes().filter(|&b| b == b',').count() as u64 + 1;
        let mut bytes = Vec::new();
        usize::try_from(estimate.min(len))
            .ok()
            .and_then(|n| n.checked_mul(size))
            .and_then(|n| bytes.try_reserve_exact(n).ok())
            .ok_or_else(|| SyntaxError::new(list.span, "cannot allocate the list's values"))?;
        let (mut count, mut after_value) = (0u64, false);
        list_values(list, |toks| {
            let mut cur = Cursor::over(toks, end_of(list.span));
            while !cur.at_end() {
                if after_value {
                    if cur.eat_punct(",").is_none() {
                        return Err(cur.error_expected("`,` or `}`"));
                    }
                    after_value = false;
                    continue;
                }
                let (v, span) = scalar(&mut cur)?;
                check_value_fits(elem, v).map_err(|m| SyntaxError::new(span, m))?;
                count += 1;
                if count <= len {
                    bytes.extend_from_slice(&v.to_bits(elem).to_le_bytes()[..size]);
                }
                after_value = true;
            }
            Ok(())
        })?;
        if count > len {
            return Err(SyntaxError::new(
                list.span,
                format!("the list has {count} values but the buffer has only {len} elements"),
            ));
        }
        return Ok((Init::Encoded(bytes), list.span));
    }
    let (init, spans) = init(cur)?;
    check_init_spanned(elem, len, &init, &spans)?;
    let init = match init {
        Init::List(values) => Init::Encoded(
            values
                .iter()
                .flat_map(|v| v.to_bits(elem).to_le_bytes().into_iter().take(size))
                .collect(),
        ),
        other @ (Init::Fill(_) | Init::Encoded(_) | Init::Iota | Init::Random { .. }) => other,
    };
    Ok((init, spans.whole))
}

/// Checks an initialiser against a buffer's element type and length.
pub fn check_init(elem: Ty, len: u64, init: &Init) -> Result<(), String> {
    if !elem.is_buffer_elem() {
        return Err(format!(
            "{elem} is not a buffer element type ({})",
            buffer_elem_names()
        ));
    }
    check_init_parts(elem, len, init).map_err(|(_, m)| m)
}

/// [`check_init_parts`], with the error at the part of the initialiser it is about.
fn check_init_spanned(
    elem: Ty,
    len: u64,
    init: &Init,
    spans: &InitSpans,
) -> Result<(), SyntaxError> {
    check_init_parts(elem, len, init).map_err(|(part, msg)| {
        let span = match part {
            InitPart::Whole => spans.whole,
            InitPart::Value(i) => spans.values.get(i).copied().unwrap_or(spans.whole),
        };
        SyntaxError::new(span, msg)
    })
}

/// A parsed `.buffer` declaration with spans.
#[derive(Debug, Clone)]
pub struct BufferDecl {
    pub name: String,
    pub elem: Ty,
    pub len: u64,
    pub init: Init,
    pub name_span: Span,
    pub span: Span,
}

/// Reads `NAME TY[LEN] = INIT` and checks it.
pub fn buffer_decl(cur: &mut Cursor) -> Result<BufferDecl, SyntaxError> {
    let start = cur.here();
    let (name, name_span) = name(cur, "a buffer name")?;
    let (elem, _) = elem_type(cur)?;
    cur.expect_punct("[")?;
    let (len, len_span) = unsigned(cur, "the buffer length")?;
    if len == 0 {
        return Err(
            SyntaxError::new(len_span, "a buffer needs at least one element")
                .expected("a positive length"),
        );
    }
    if len.checked_mul(elem.bytes() as u64).is_none() {
        return Err(SyntaxError::new(
            len_span,
            "the buffer's size in bytes does not fit 64 bits",
        ));
    }
    cur.expect_punct("]")?;
    cur.expect_punct("=")?;
    let (init, whole) = typed_init(cur, elem, len)?;
    Ok(BufferDecl {
        name,
        elem,
        len,
        init,
        name_span,
        span: join(start, whole),
    })
}

/// A parsed `.surface` declaration with spans.
#[derive(Debug, Clone)]
pub struct SurfaceDeclSpanned {
    pub name: String,
    pub decl: SurfaceDecl,
    pub name_span: Span,
    pub span: Span,
}

/// The largest coordinate extent: coordinates are S32.
const MAX_SURFACE_EXTENT: u64 = i32::MAX as u64;
/// The most array layers: a layer index is the 16 low bits of its register.
const MAX_SURFACE_LAYERS: u64 = 1 << 16;

/// Reads `NAME DIM TY[W{,H{,D}}] {layers N} {pitch{(BYTES)} | blocklinear(H,D)} {disabled}
/// {sparse P{,P}} = INIT` and checks it (see `docs/surfaces.md`).
pub fn surface_decl(cur: &mut Cursor) -> Result<SurfaceDeclSpanned, SyntaxError> {
    let start = cur.here();
    let (name, name_span) = name(cur, "a surface name")?;
    let dims: Vec<&str> = SurfaceDim::ALL.iter().map(|d| d.decl_name()).collect();
    let dim_tok = cur.expect_word("a surface dimension")?;
    let Some(dim) = SurfaceDim::ALL
        .iter()
        .copied()
        .find(|d| d.decl_name().eq_ignore_ascii_case(dim_tok.text))
    else {
        return Err(SyntaxError::new(
            dim_tok.span,
            format!("unknown surface dimension `{}`", dim_tok.text),
        )
        .expected(format!("one of {}", dims.join(" "))));
    };
    let (elem, elem_span) = elem_type(cur)?;
    if !matches!(elem.bytes(), 1 | 2 | 4 | 8 | 16) {
        return Err(SyntaxError::new(
            elem_span,
            format!("{elem} is not a surface element type"),
        ));
    }
    let open = cur.expect_punct("[")?;
    let axes = match dim {
        SurfaceDim::D1 | SurfaceDim::D1Buffer | SurfaceDim::D1Array => 1,
        SurfaceDim::D2 | SurfaceDim::D2Array => 2,
        SurfaceDim::D3 => 3,
    };
    let mut extent = [1u32; 3];
    let mut given = 0;
    let close = loop {
        let (v, span) = unsigned(cur, "a surface extent")?;
        if v == 0 || v > MAX_SURFACE_EXTENT {
            return Err(SyntaxError::new(
                span,
                format!("a surface extent must be between 1 and {MAX_SURFACE_EXTENT}"),
            ));
        }
        if given < 3 {
            extent[given] = v as u32;
        }
        given += 1;
        if let Some(close) = cur.eat_punct("]") {
            break close;
        }
        cur.expect_punct(",")?;
    };
    if given != axes {
        return Err(SyntaxError::new(
            join(open, close),
            format!("a {dim} surface has {axes} extent(s), not {given}"),
        )
        .expected(format!(
            "{axes} extent(s): W{}",
            [",H", ",H,D"][..axes - 1].concat()
        )));
    }
    let mut shape = SurfaceShape {
        dim,
        elem_bytes: elem.bytes(),
        width: extent[0],
        height: extent[1],
        depth: extent[2],
        layers: 1,
    };
    let mut layout = None;
    let mut disabled = false;
    let mut sparse: Vec<(u64, Span)> = Vec::new();
    let mut layers_seen = false;
    while cur.eat_punct("=").is_none() {
        let word =
            cur.expect_word("`layers`, `pitch`, `blocklinear`, `disabled`, `sparse` or `= INIT`")?;
        match word.text.to_ascii_lowercase().as_str() {
            "layers" if !layers_seen => {
                let (n, span) = unsigned(cur, "the layer count")?;
                if !dim.is_array() {
                    return Err(SyntaxError::new(
                        word.span,
                        format!("a {dim} surface has no layers"),
                    )
                    .expected("1d_array or 2d_array"));
                }
                if n == 0 || n > MAX_SURFACE_LAYERS {
                    return Err(SyntaxError::new(
                        span,
                        format!("the layer count must be between 1 and {MAX_SURFACE_LAYERS}"),
                    ));
                }
                shape.layers = n as u32;
                layers_seen = true;
            }
            "pitch" if layout.is_none() => {
                let row = shape.row_bytes();
                let pitch = if cur.eat_punct("(").is_some() {
                    let (b, span) = unsigned(cur, "the pitch in bytes")?;
                    cur.expect_punct(")")?;
                    if b < row || b % u64::from(shape.elem_bytes) != 0 || b > u64::from(u32::MAX) {
                        return Err(SyntaxError::new(
                            span,
                            format!(
                                "the pitch must be a multiple of the element size ({}) of at least the row's {row} bytes",
                                shape.elem_bytes
                            ),
                        ));
                    }
                    b
                } else {
                    row
                };
                let pitch = u32::try_from(pitch).map_err(|_| {
                    SyntaxError::new(word.span, "a row of this surface exceeds 4 GiB")
                })?;
                layout = Some(SurfaceLayout::Pitch { pitch });
            }
            "blocklinear" if layout.is_none() => {
                cur.expect_punct("(")?;
                let mut logs = [0u8; 2];
                for (i, log) in logs.iter_mut().enumerate() {
                    if i > 0 {
                        cur.expect_punct(",")?;
                    }
                    let what = ["the block height in GOBs", "the block depth in GOBs"][i];
                    let (v, span) = unsigned(cur, what)?;
                    if !(v.is_power_of_two() && v <= 32) {
                        return Err(SyntaxError::new(
                            span,
                            format!("{what} must be 1, 2, 4, 8, 16 or 32"),
                        ));
                    }
                    *log = v.trailing_zeros() as u8;
                }
                cur.expect_punct(")")?;
                layout = Some(SurfaceLayout::BlockLinear {
                    log_height: logs[0],
                    log_depth: logs[1],
                });
            }
            "disabled" if !disabled => disabled = true,
            "sparse" if sparse.is_empty() => loop {
                let (page, span) = unsigned(cur, "a sparse page index")?;
                sparse.push((page, span));
                if cur.eat_punct(",").is_none() {
                    break;
                }
            },
            other => {
                let repeated =
                    ["layers", "pitch", "blocklinear", "disabled", "sparse"].contains(&other);
                return Err(SyntaxError::new(
                    word.span,
                    if repeated {
                        format!("`{}` is given twice (or with another layout)", word.text)
                    } else {
                        format!("unexpected `{}` in a surface declaration", word.text)
                    },
                )
                .expected("`layers`, `pitch`, `blocklinear`, `disabled`, `sparse` or `= INIT`"));
            }
        }
    }
    if dim.is_array() && !layers_seen {
        return Err(SyntaxError::new(
            join(open, close),
            format!("a {dim} surface needs `layers N`"),
        )
        .expected("layers N after the extent"));
    }
    let layout = match layout {
        Some(layout) => layout,
        None => SurfaceLayout::Pitch {
            pitch: u32::try_from(shape.row_bytes()).map_err(|_| {
                SyntaxError::new(join(open, close), "a row of this surface exceeds 4 GiB")
            })?,
        },
    };
    if layout.exact_total_bytes(&shape) > u128::from(MAX_SURFACE_BYTES) {
        return Err(SyntaxError::new(
            join(open, close),
            format!(
                "the surface would occupy more than {MAX_SURFACE_BYTES} bytes (1 TiB) in its layout"
            ),
        ));
    }
    let pages = layout.total_bytes(&shape).div_ceil(SPARSE_PAGE_BYTES);
    let mut sparse_pages = Vec::with_capacity(sparse.len());
    for (page, span) in sparse {
        if page >= pages {
            return Err(SyntaxError::new(
                span,
                format!("the surface has {pages} page(s) of 64 KiB; page {page} is past its end"),
            ));
        }
        sparse_pages.push(page);
    }
    sparse_pages.sort_unstable();
    sparse_pages.dedup();
    let (init, whole) = typed_init(cur, elem, shape.elements())?;
    Ok(SurfaceDeclSpanned {
        name,
        decl: SurfaceDecl {
            shape,
            elem,
            layout,
            disabled,
            sparse: sparse_pages,
            init,
        },
        name_span,
        span: join(start, whole),
    })
}

/// A parsed `.param` declaration with spans.
#[derive(Debug, Clone)]
pub struct ScalarParamDecl {
    pub name: String,
    pub ty: Ty,
    pub value: Scalar,
    /// `= &SURFACE` instead of a number: the surface's name (`value` is 0).
    pub address_of: Option<String>,
    pub name_span: Span,
    pub span: Span,
}

/// Reads `NAME TY = VALUE` and checks that the value fits.
pub fn param_decl(cur: &mut Cursor) -> Result<ScalarParamDecl, SyntaxError> {
    let start = cur.here();
    let (name, name_span) = name(cur, "a parameter name")?;
    let (ty, ty_span) = elem_type(cur)?;
    cur.expect_punct("=")?;
    if let Some(amp) = cur.eat_punct("&") {
        let (surface, span) = self::name(cur, "a surface name after `&`")?;
        if ty != Ty::U64 {
            return Err(SyntaxError::new(
                ty_span,
                format!("`&{surface}` is a 64-bit device address: declare `{name}` as u64"),
            )
            .expected("u64"));
        }
        let _ = amp;
        return Ok(ScalarParamDecl {
            name,
            ty,
            value: Scalar::Int(0),
            address_of: Some(surface),
            name_span,
            span: join(start, span),
        });
    }
    let (value, span) = scalar(cur)?;
    check_value_fits(ty, value).map_err(|m| SyntaxError::new(span, m))?;
    Ok(ScalarParamDecl {
        name,
        ty,
        value,
        address_of: None,
        name_span,
        span: join(start, span),
    })
}

/// Checks that every `&SURFACE` parameter names a surface of the same kernel.
pub fn check_surface_addresses(params: &[ParamDecl]) -> Result<(), SyntaxError> {
    for p in params {
        if let crate::ir::ParamKind::SurfaceAddress { surface } = &p.kind {
            let found = params
                .iter()
                .find(|q| &q.name == surface)
                .map(|q| matches!(q.kind, crate::ir::ParamKind::Surface(_)));
            match found {
                Some(true) => {}
                Some(false) => {
                    return Err(SyntaxError::new(
                        p.span,
                        format!("`&{surface}`: `{surface}` is not a surface"),
                    )
                    .expected("the name of a `.surface` of this kernel"))
                }
                None => {
                    return Err(SyntaxError::new(
                        p.span,
                        format!("`&{surface}`: the kernel declares no surface `{surface}`"),
                    )
                    .expected("the name of a `.surface` of this kernel"))
                }
            }
        }
    }
    Ok(())
}

/// Gives each parameter its constant-bank offset: from `base` (the kernel layout's
/// [`crate::ir::CbankLayout::param_base`]) on, in order, each aligned to its size (a buffer is
/// an 8-byte device address, a scalar its type's size).
pub fn assign_cbank_offsets(params: &mut [ParamDecl], base: u32) {
    let mut next = u64::from(base);
    for p in params.iter_mut() {
        let size = p.cbank_size().max(1) as u64;
        let offset = next.div_ceil(size) * size;
        // More than 4 GiB of parameters cannot come from a source file under 4 GiB; saturate
        // rather than wrap all the same.
        p.cbank_offset = u32::try_from(offset).unwrap_or(u32::MAX);
        next = offset + size;
    }
}

// ---------------------------------------------------------------------------------------------
// Expectations

/// Where the parts of an expectation are, for errors found once the buffers are known.
#[derive(Debug, Clone, Default)]
pub struct ExpectSpans {
    pub buffer: Span,
    /// `[i]` or `[a..b]`: the index, or the start and end.
    pub index: Option<Span>,
    pub end: Option<Span>,
    /// `count(NAME, V)`: the span of `V`.
    pub count_value: Option<Span>,
    pub op: Span,
    /// The right-hand value, or each value of a list.
    pub rhs: Vec<Span>,
    /// The whole right-hand side (the list with its braces).
    pub rhs_whole: Span,
}

impl ExpectSpans {
    fn all(span: Span) -> ExpectSpans {
        ExpectSpans {
            buffer: span,
            index: Some(span),
            end: Some(span),
            count_value: Some(span),
            op: span,
            rhs: vec![],
            rhs_whole: span,
        }
    }
}

const CMP_OPS: [(&str, CmpOp); 6] = [
    ("==", CmpOp::Eq),
    ("!=", CmpOp::Ne),
    ("<=", CmpOp::Le),
    (">=", CmpOp::Ge),
    ("<", CmpOp::Lt),
    (">", CmpOp::Gt),
];

/// The program-file spelling of a comparison (`==` etc.), for the ones expectations use.
pub fn cmp_symbol(cmp: CmpOp) -> Option<&'static str> {
    CMP_OPS.iter().find(|(_, c)| *c == cmp).map(|(s, _)| *s)
}

/// Reads an expectation (the text after `.expect`). `text` is kept as the report text and
/// `span` as its span.
pub fn expect(
    cur: &mut Cursor,
    text: &str,
    span: Span,
) -> Result<(Expect, ExpectSpans), SyntaxError> {
    let mut spans = ExpectSpans::default();
    let first = cur.expect_word("a buffer name or one of sum( min( max( count(")?;
    let func = first.text.to_ascii_lowercase();
    let lhs = if cur.is_punct("(") && matches!(func.as_str(), "sum" | "min" | "max" | "count") {
        cur.next();
        let (buffer, bspan) = name(cur, "a buffer name")?;
        spans.buffer = bspan;
        let lhs = match func.as_str() {
            "sum" => ExpectLhs::Sum { buffer },
            "min" => ExpectLhs::Min { buffer },
            "max" => ExpectLhs::Max { buffer },
            _ => {
                cur.expect_punct(",")?;
                let (value, vspan) = scalar(cur)?;
                spans.count_value = Some(vspan);
                ExpectLhs::Count { buffer, value }
            }
        };
        cur.expect_punct(")")?;
        lhs
    } else {
        if !is_identifier(first.text) {
            return Err(SyntaxError::new(
                first.span,
                format!("`{}` is not a valid buffer name", first.text),
            )
            .expected("a buffer name or one of sum( min( max( count("));
        }
        let buffer = first.text.to_string();
        spans.buffer = first.span;
        if cur.eat_punct("[").is_some() {
            let (start, sspan) = unsigned(cur, "an index")?;
            spans.index = Some(sspan);
            let lhs = if cur.eat_punct("..").is_some() {
                let (end, espan) = unsigned(cur, "the range end")?;
                spans.end = Some(espan);
                if end <= start {
                    return Err(SyntaxError::new(
                        join(sspan, espan),
                        format!("the range {start}..{end} is empty"),
                    )
                    .expected("a range a..b with a < b"));
                }
                ExpectLhs::Range { buffer, start, end }
            } else {
                ExpectLhs::Element {
                    buffer,
                    index: start,
                }
            };
            cur.expect_punct("]")?;
            lhs
        } else {
            ExpectLhs::Whole { buffer }
        }
    };
    let op_tok = cur.peek();
    let Some((_, cmp)) = op_tok.and_then(|t| CMP_OPS.iter().find(|(s, _)| t.is_punct(s))) else {
        return Err(cur.error_expected("a comparison (one of == != < <= > >=)"));
    };
    spans.op = cur.here();
    cur.next();
    let rhs = if let Some(open) = cur.eat_punct("{") {
        if *cmp != CmpOp::Eq {
            return Err(
                SyntaxError::new(spans.op, "a list can only be compared with `==`")
                    .expected("`==`"),
            );
        }
        if matches!(
            lhs,
            ExpectLhs::Element { .. }
                | ExpectLhs::Sum { .. }
                | ExpectLhs::Min { .. }
                | ExpectLhs::Max { .. }
                | ExpectLhs::Count { .. }
        ) {
            return Err(SyntaxError::new(
                open,
                "a list compares a whole buffer or a range, not a single value",
            )
            .expected("a number"));
        }
        let (values, vspans, close) = scalar_list(cur, open)?;
        spans.rhs = vspans;
        spans.rhs_whole = join(open, close);
        ExpectRhs::List(values)
    } else {
        let (v, vspan) = scalar(cur)?;
        spans.rhs = vec![vspan];
        spans.rhs_whole = vspan;
        ExpectRhs::Scalar(v)
    };
    cur.expect_end("the expectation")?;
    Ok((
        Expect {
            lhs,
            cmp: *cmp,
            rhs,
            text: text.trim().to_string(),
            span,
        },
        spans,
    ))
}

/// Checks an expectation against the declared parameters: the buffer exists, indices are
/// inside it, lists have the right length, and values fit the element type.
fn check_expect_spanned(
    e: &Expect,
    spans: &ExpectSpans,
    params: &ByName<ParamDecl>,
) -> Result<(), SyntaxError> {
    let buffer = e.lhs.buffer();
    let Some(decl) = params.get(buffer) else {
        let known: Vec<&str> = params
            .items()
            .iter()
            .filter(|p| p.kind.elements().is_some())
            .map(|p| p.name.as_str())
            .collect();
        let expected = if known.is_empty() {
            "a declared buffer (there are none)".to_string()
        } else {
            format!("one of {}", known.join(" "))
        };
        return Err(
            SyntaxError::new(spans.buffer, format!("unknown buffer `{buffer}`")).expected(expected),
        );
    };
    let Some((elem, len)) = decl.kind.elements() else {
        return Err(SyntaxError::new(
            spans.buffer,
            format!("`{buffer}` is a scalar parameter, not a buffer"),
        )
        .expected("a buffer name"));
    };
    let value_at = |i: usize| spans.rhs.get(i).copied().unwrap_or(e.span);
    let fits =
        |v: Scalar, span: Span| check_value_fits(elem, v).map_err(|m| SyntaxError::new(span, m));
    let mut expected_list_len = len;
    match &e.lhs {
        ExpectLhs::Element { index, .. } => {
            if *index >= len {
                return Err(SyntaxError::new(
                    spans.index.unwrap_or(e.span),
                    format!("index {index} is outside `{buffer}` ({len} elements)"),
                )
                .expected(format!("an index below {len}")));
            }
        }
        ExpectLhs::Range { start, end, .. } => {
            if *end > len {
                return Err(SyntaxError::new(
                    spans.end.unwrap_or(e.span),
                    format!("range end {end} is outside `{buffer}` ({len} elements)"),
                )
                .expected(format!("an end of at most {len}")));
            }
            expected_list_len = end - start;
        }
        ExpectLhs::Count { value, .. } => {
            fits(*value, spans.count_value.unwrap_or(e.span))?;
        }
        ExpectLhs::Whole { .. }
        | ExpectLhs::Sum { .. }
        | ExpectLhs::Min { .. }
        | ExpectLhs::Max { .. } => {}
    }
    match (&e.lhs, &e.rhs) {
        (ExpectLhs::Sum { .. }, _) => Ok(()),
        (ExpectLhs::Count { .. }, ExpectRhs::Scalar(v)) => match v {
            Scalar::Int(_) => Ok(()),
            Scalar::Float(_) => {
                Err(SyntaxError::new(value_at(0), "a count is an integer").expected("an integer"))
            }
        },
        (_, ExpectRhs::Scalar(v)) => fits(*v, value_at(0)),
        (_, ExpectRhs::List(values)) => {
            if values.len() as u64 != expected_list_len {
                return Err(SyntaxError::new(
                    spans.rhs_whole,
                    format!(
                        "the list has {} values but {expected_list_len} elements are compared",
                        values.len()
                    ),
                ));
            }
            for (i, v) in values.iter().enumerate() {
                fits(*v, value_at(i))?;
            }
            Ok(())
        }
    }
}

/// Checks an expectation against declared parameters (see [`LaunchBuilder::finish`]).
pub fn check_expect(e: &Expect, params: &[ParamDecl]) -> Result<(), String> {
    check_expect_in(e, &ByName::params(params))
}

/// [`check_expect`] against parameters already indexed by name (for checking many
/// expectations against the same parameters).
pub fn check_expect_in(e: &Expect, params: &ByName<ParamDecl>) -> Result<(), String> {
    check_expect_spanned(e, &ExpectSpans::all(e.span), params).map_err(|err| err.message)
}

// ---------------------------------------------------------------------------------------------
// The launch builder

/// Collects one kernel's launch directives and checks them: the policy of a program file (a
/// repeated `.grid`, `.block` or `.shared` is an error, `.shared` is the whole window, every
/// name is new).
#[derive(Debug, Clone, Default)]
pub struct LaunchBuilder {
    spec: LaunchSpec,
    grid_at: Option<Span>,
    block_at: Option<Span>,
    shared_at: Option<Span>,
    /// `.shared` (the bytes after the static ones) and `.static_shared`, with where their
    /// numbers are; the window is computed by [`LaunchBuilder::finish`].
    dynamic: Option<(u64, Span)>,
    static_shared: Option<(u64, Span)>,
    static_at: Option<Span>,
    expect_spans: Vec<ExpectSpans>,
    /// `spec.params` by name, for the duplicate check.
    param_index: HashMap<String, usize>,
}

impl LaunchBuilder {
    pub fn new() -> LaunchBuilder {
        LaunchBuilder::default()
    }

    /// Sets the constant-bank layout of the architecture a compiler's listing names (its
    /// `code for sm_XX` line or `.headerflags`): parameters start at its parameter base, its
    /// reserved shared bytes come first in the window, and the kernel is marked
    /// [`LaunchSpec::compiled`] (its encoding is that architecture's: no `ATOMS.CAS` pairing).
    pub fn set_layout(&mut self, layout: CbankLayout) {
        self.spec.layout = layout;
        self.spec.compiled = true;
    }

    /// A listing's `.nv.shared.NAME` size: the reserved and static shared bytes together.
    pub fn set_listing_shared(&mut self, bytes: u64, span: Span) -> Result<(), SyntaxError> {
        let reserved = u64::from(self.spec.layout.reserved_shared());
        let Some(own) = bytes.checked_sub(reserved) else {
            return Err(SyntaxError::new(
                span,
                format!(
                    "{bytes} bytes of shared memory are fewer than the {reserved} bytes {} reserves",
                    self.spec.layout
                ),
            ));
        };
        self.static_shared = Some((own, span));
        Ok(())
    }

    /// A listing's constant banks other than 0 (`crate::ir::LaunchSpec::const_banks`), in
    /// increasing bank order.
    pub fn set_const_banks(&mut self, banks: Vec<crate::ir::ConstBank>) {
        self.spec.const_banks = banks;
    }

    /// Applies one directive. `directive` is its word (`.grid`), `args` the tokens after it up
    /// to the end of the statement, `source` the whole source text (an expectation keeps its
    /// text for reports).
    pub fn apply(
        &mut self,
        directive: &Token,
        args: &[Token],
        source: &str,
    ) -> Result<(), SyntaxError> {
        let Some(parsed) = directive::parse(directive, args, source)? else {
            return Err(SyntaxError::new(
                directive.span,
                format!("unknown directive `{}`", directive.text),
            )
            .expected(format!("one of {}", LAUNCH_DIRECTIVES.join(" "))));
        };
        let once = |at: &mut Option<Span>| match at.replace(directive.span) {
            Some(prev) => Err(SyntaxError::new(
                directive.span,
                format!(
                    "duplicate `{}` (already given on line {})",
                    directive.text, prev.line
                ),
            )),
            None => Ok(()),
        };
        match parsed {
            Directive::Grid { dims, .. } => {
                once(&mut self.grid_at)?;
                self.spec.grid = dims;
            }
            Directive::Block { dims, .. } => {
                once(&mut self.block_at)?;
                self.spec.block = dims;
            }
            Directive::Shared { bytes, span } => {
                once(&mut self.shared_at)?;
                check_shared(bytes).map_err(|m| SyntaxError::new(span, m))?;
                self.dynamic = Some((bytes, span));
            }
            Directive::StaticShared { bytes, span } => {
                once(&mut self.static_at)?;
                check_shared(bytes).map_err(|m| SyntaxError::new(span, m))?;
                self.static_shared = Some((bytes, span));
            }
            Directive::Decl { decl, name_span } => {
                self.check_new_name(&decl.name, name_span)?;
                self.param_index
                    .insert(decl.name.clone(), self.spec.params.len());
                self.spec.params.push(decl);
            }
            Directive::Expect { expect, spans } => {
                self.spec.expects.push(expect);
                self.expect_spans.push(spans);
            }
            Directive::ExpectTrap(t) => {
                if let Some(prev) = &self.spec.expect_trap {
                    return Err(SyntaxError::new(
                        t.span,
                        format!(
                            "the kernel already expects a trap (line {})",
                            prev.span.line
                        ),
                    )
                    .expected("one `.expect trap` per kernel"));
                }
                self.spec.expect_trap = Some(t);
            }
            Directive::Payload(p) => {
                return Err(SyntaxError::new(
                    p.span,
                    "`.payload` describes a vISA thread payload; it belongs in a vISA kernel's \
                     launch file",
                ));
            }
        }
        Ok(())
    }

    fn check_new_name(&self, name: &str, span: Span) -> Result<(), SyntaxError> {
        match self.param_index.get(name).map(|&i| &self.spec.params[i]) {
            Some(prev) => Err(SyntaxError::new(
                span,
                format!("`{name}` is already declared on line {}", prev.span.line),
            )
            .expected("a new name")),
            None => Ok(()),
        }
    }

    /// Assigns constant-bank offsets and checks every expectation against the buffers.
    ///
    /// The shared window is the layout's reserved bytes, then `.static_shared`, then `.shared`
    /// (for a program file without `.static_shared`, `.shared` is the window).
    pub fn finish(self) -> Result<LaunchSpec, SyntaxError> {
        let mut spec = self.spec;
        let reserved = u64::from(spec.layout.reserved_shared());
        let (static_bytes, static_span) = self.static_shared.unwrap_or((0, Span::default()));
        let (dynamic, dynamic_span) = self.dynamic.unwrap_or((0, static_span));
        let static_total = reserved + static_bytes;
        let window = static_total + dynamic;
        spec.shared_bytes = check_shared(window).map_err(|m| {
            SyntaxError::new(
                if self.dynamic.is_some() {
                    dynamic_span
                } else {
                    static_span
                },
                if window == dynamic {
                    m
                } else {
                    format!("{m} (with {static_total} reserved and static bytes before it)")
                },
            )
        })?;
        spec.static_shared = static_total as u32;
        check_surface_addresses(&spec.params)?;
        assign_cbank_offsets(&mut spec.params, spec.layout.param_base());
        let params = ByName::params(&spec.params);
        for (e, spans) in spec.expects.iter().zip(&self.expect_spans) {
            check_expect_spanned(e, spans, &params)?;
        }
        Ok(spec)
    }
}

// ---------------------------------------------------------------------------------------------
// String-level helpers (command-line flags, sidecar files)

fn with_tokens<T>(
    text: &str,
    f: impl FnOnce(&mut Cursor) -> Result<T, SyntaxError>,
) -> Result<T, String> {
    let toks = lex(text).map_err(|e| e.to_short_string())?;
    let toks: Vec<Token> = toks
        .into_iter()
        .filter(|t| t.kind != TokKind::Newline)
        .collect();
    let mut cur = Cursor::over(
        &toks,
        Span {
            start: 0,
            end: 0,
            line: 1,
            col: 1,
        },
    );
    let v = f(&mut cur).map_err(|e| e.to_short_string())?;
    cur.expect_end("the value")
        .map_err(|e| e.to_short_string())?;
    Ok(v)
}

/// Parses a number (`42`, `-0x10`, `1.5`, `-2e3`, `inf`, `nan`).
pub fn parse_scalar(text: &str) -> Result<Scalar, String> {
    with_tokens(text, |c| scalar(c).map(|(v, _)| v))
}

/// Parses an initialiser (`0`, `{1, 2}`, `iota`, `random(7)`, `random(7, 0, 256)`), without
/// checking it against a type (see [`check_init`]).
pub fn parse_init(text: &str) -> Result<Init, String> {
    with_tokens(text, |c| init(c).map(|(i, _)| i))
}

/// `trap REASON` (the text after `.expect` when it expects a trap), if that is what `text` is.
pub fn parse_expect_trap(text: &str) -> Option<Result<crate::ir::TrapExpect, String>> {
    let toks = match lex(text) {
        Ok(t) => t,
        Err(_) => return None,
    };
    let toks: Vec<Token> = toks
        .into_iter()
        .filter(|t| t.kind != TokKind::Newline)
        .collect();
    super::directive::trap_expect(&toks, text.trim(), Span::default())
        .map(|r| r.map_err(|e| e.to_short_string()))
}

/// Parses an expectation (the text after `.expect`); its span is the default span. Check it
/// against the buffers with [`check_expect`].
pub fn parse_expect(text: &str) -> Result<Expect, String> {
    with_tokens(text, |c| expect(c, text, Span::default()).map(|(e, _)| e))
}

/// Parses and checks `NAME TY[LEN] = INIT`.
pub fn parse_buffer_decl(text: &str) -> Result<(String, Ty, u64, Init), String> {
    with_tokens(text, |c| {
        buffer_decl(c).map(|b| (b.name, b.elem, b.len, b.init))
    })
}

/// Parses and checks `NAME TY = VALUE`.
pub fn parse_param_decl(text: &str) -> Result<(String, Ty, Scalar), String> {
    with_tokens(text, |c| {
        let p = param_decl(c)?;
        match p.address_of {
            Some(surface) => Err(SyntaxError::new(
                p.span,
                format!("`&{surface}` binds a surface's address in a launch or program file, not on the command line"),
            )),
            None => Ok((p.name, p.ty, p.value)),
        }
    })
}

/// Parses `X[,Y[,Z]]` (each at least 1; missing dimensions are 1). Check block shapes with
/// [`check_block`] and grids with [`check_grid`].
pub fn parse_dims(text: &str) -> Result<[u32; 3], String> {
    with_tokens(text, |c| dims(c).map(|(d, _)| d))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::ParamKind;

    /// `.buffer` declarations through the program lexer (lists as one token) and through
    /// plain tokens (`=` then `{`, as a list over two lines is): the same encoded bytes.
    #[test]
    fn a_list_token_and_plain_tokens_encode_the_same_bytes() {
        let decl = |text: &str, lists: bool| {
            let toks = if lists {
                crate::front::lexer::lex_program(text)
            } else {
                lex(text)
            }
            .unwrap();
            let toks: Vec<Token> = toks
                .into_iter()
                .filter(|t| t.kind != TokKind::Newline)
                .collect();
            buffer_decl(&mut Cursor::over(&toks, Span::default())).map(|d| d.init)
        };
        for (elem, list) in [
            ("u8", "{1, 255, 0x10,}"),
            ("s16", "{-32768, 7, -1}"),
            ("u32", "{4294967295, 0, +3}"),
            ("s64", "{-9223372036854775808, 9223372036854775807}"),
            ("f16", "{1.5, -2, inf, nan}"),
            ("f32", "{1e-3, -0.0, 16777217}"),
            ("f64", "{0.1, -1, 1e300}"),
        ] {
            let text = format!("b {elem}[5] = {list}");
            let token = decl(&text, true).unwrap();
            assert!(matches!(token, Init::Encoded(_)), "{text}");
            assert_eq!(token, decl(&text, false).unwrap(), "{text}");
        }
        let e = decl("b u8[2] = {1, 256}", true).unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.span.col),
            ("256 does not fit u8 (range 0..=255)", 15)
        );
        let e = decl("b u8[2] = {1, 2, 3}", true).unwrap_err();
        assert_eq!(
            e.message,
            "the list has 3 values but the buffer has only 2 elements"
        );
        for bad in [
            "b u8[2] = {1 2}",
            "b u8[2] = {,}",
            "b u8[2] = {1,,2}",
            "b u8[2] = {x}",
        ] {
            assert!(decl(bad, true).is_err(), "{bad}");
            assert!(decl(bad, false).is_err(), "{bad}");
        }
    }

    fn buffer(name: &str, elem: Ty, len: u64) -> ParamDecl {
        ParamDecl {
            name: name.into(),
            kind: ParamKind::Buffer {
                elem,
                len,
                init: Init::Fill(Scalar::Int(0)),
            },
            cbank_offset: 0,
            span: Span::default(),
        }
    }
    fn scalar_param(name: &str, ty: Ty) -> ParamDecl {
        ParamDecl {
            name: name.into(),
            kind: ParamKind::Scalar {
                ty,
                value: Scalar::Int(0),
            },
            cbank_offset: 0,
            span: Span::default(),
        }
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_scalar("42"), Ok(Scalar::Int(42)));
        assert_eq!(parse_scalar("-7"), Ok(Scalar::Int(-7)));
        assert_eq!(parse_scalar("0x1F"), Ok(Scalar::Int(31)));
        assert_eq!(parse_scalar("-0x10"), Ok(Scalar::Int(-16)));
        assert_eq!(parse_scalar("+5"), Ok(Scalar::Int(5)));
        assert_eq!(parse_scalar("1.5"), Ok(Scalar::Float(1.5)));
        assert_eq!(parse_scalar("-2e3"), Ok(Scalar::Float(-2000.0)));
        assert_eq!(parse_scalar("1e-3"), Ok(Scalar::Float(0.001)));
        assert_eq!(parse_scalar("inf"), Ok(Scalar::Float(f64::INFINITY)));
        assert_eq!(parse_scalar("-inf"), Ok(Scalar::Float(f64::NEG_INFINITY)));
        assert!(matches!(parse_scalar("nan"), Ok(Scalar::Float(f)) if f.is_nan()));
        assert_eq!(
            parse_scalar("0xffffffffffffffff"),
            Ok(Scalar::Int(u64::MAX as i128))
        );
        assert!(parse_scalar("0x").unwrap_err().contains("malformed"));
        assert!(parse_scalar("1e").unwrap_err().contains("malformed"));
        assert!(parse_scalar("1e400").unwrap_err().contains("too large"));
        assert!(parse_scalar("99999999999999999999999999999999999999999")
            .unwrap_err()
            .contains("too large"));
        assert!(parse_scalar("abc")
            .unwrap_err()
            .contains("expected a number"));
        assert!(parse_scalar("1 2").unwrap_err().contains("unexpected `2`"));
    }

    #[test]
    fn value_fits() {
        assert!(check_value_fits(Ty::U8, Scalar::Int(255)).is_ok());
        assert!(check_value_fits(Ty::U8, Scalar::Int(256)).is_err());
        assert!(check_value_fits(Ty::U32, Scalar::Int(-1)).is_err());
        assert!(check_value_fits(Ty::S8, Scalar::Int(-128)).is_ok());
        assert!(check_value_fits(Ty::S8, Scalar::Int(128)).is_err());
        assert!(check_value_fits(Ty::S32, Scalar::Int(0xffff_ffff)).is_err());
        assert!(check_value_fits(Ty::U64, Scalar::Int(u64::MAX as i128)).is_ok());
        assert!(check_value_fits(Ty::U64, Scalar::Int(u64::MAX as i128 + 1)).is_err());
        assert!(check_value_fits(Ty::S64, Scalar::Int(i64::MIN as i128)).is_ok());
        assert!(check_value_fits(Ty::U32, Scalar::Float(1.0)).is_err());
        assert!(check_value_fits(Ty::F16, Scalar::Int(65504)).is_ok());
        assert!(check_value_fits(Ty::F16, Scalar::Int(70000)).is_err());
        assert!(check_value_fits(Ty::F32, Scalar::Float(1e39)).is_err());
        assert!(check_value_fits(Ty::F32, Scalar::Float(f64::INFINITY)).is_ok());
        assert!(check_value_fits(Ty::F64, Scalar::Float(1e300)).is_ok());
        assert!(check_value_fits(Ty::F16x2, Scalar::Int(1)).is_err());
    }

    #[test]
    fn initialisers() {
        assert_eq!(parse_init("0"), Ok(Init::Fill(Scalar::Int(0))));
        assert_eq!(parse_init("-1.5"), Ok(Init::Fill(Scalar::Float(-1.5))));
        assert_eq!(
            parse_init("{1, 2, 3}"),
            Ok(Init::List(vec![
                Scalar::Int(1),
                Scalar::Int(2),
                Scalar::Int(3)
            ]))
        );
        assert_eq!(
            parse_init("{1, 2,}"),
            Ok(Init::List(vec![Scalar::Int(1), Scalar::Int(2)]))
        );
        assert_eq!(parse_init("{}"), Ok(Init::List(vec![])));
        assert_eq!(parse_init("iota"), Ok(Init::Iota));
        assert_eq!(
            parse_init("random(7)"),
            Ok(Init::Random {
                seed: 7,
                range: None
            })
        );
        assert_eq!(
            parse_init("random(7, 0, 256)"),
            Ok(Init::Random {
                seed: 7,
                range: Some((0, 256))
            })
        );
        assert_eq!(
            parse_init("random(1, -5, 5)"),
            Ok(Init::Random {
                seed: 1,
                range: Some((-5, 5))
            })
        );
        assert!(parse_init("random(-1)").is_err());
        assert!(parse_init("random(1, 2)").is_err());
        assert!(parse_init("{1 2}").unwrap_err().contains("`,` or `}`"));
        assert!(parse_init("{1, 2").unwrap_err().contains("unclosed"));
        assert!(parse_init("zeros")
            .unwrap_err()
            .contains("expected an initialiser"));
    }

    #[test]
    fn buffer_declarations() {
        assert_eq!(
            parse_buffer_decl("hist u32[256] = 0"),
            Ok(("hist".into(), Ty::U32, 256, Init::Fill(Scalar::Int(0))))
        );
        assert_eq!(
            parse_buffer_decl("d u8[4] = random(7, 0, 256)"),
            Ok((
                "d".into(),
                Ty::U8,
                4,
                Init::Random {
                    seed: 7,
                    range: Some((0, 256))
                }
            ))
        );
        assert!(parse_buffer_decl("d u8[4] = random(7, 0, 257)")
            .unwrap_err()
            .contains("HI-1"));
        assert!(parse_buffer_decl("d u8[4] = random(7, 5, 5)")
            .unwrap_err()
            .contains("empty"));
        assert!(parse_buffer_decl("d s8[4] = random(7, -129, 0)")
            .unwrap_err()
            .contains("does not fit"));
        assert!(parse_buffer_decl("d u32[2] = {1, 2, 3}")
            .unwrap_err()
            .contains("only 2 elements"));
        assert!(parse_buffer_decl("d u8[2] = {1, 300}")
            .unwrap_err()
            .contains("300 does not fit u8"));
        assert!(parse_buffer_decl("d u8[2] = 256")
            .unwrap_err()
            .contains("does not fit"));
        assert!(parse_buffer_decl("d u8[0] = 0")
            .unwrap_err()
            .contains("at least one element"));
        assert!(parse_buffer_decl("d b32[2] = 0")
            .unwrap_err()
            .contains("unknown element type"));
        assert!(parse_buffer_decl("2d u8[2] = 0")
            .unwrap_err()
            .contains("not a valid name"));
        assert!(parse_buffer_decl("d u64[0xffffffffffffffff] = 0")
            .unwrap_err()
            .contains("bytes"));
        assert_eq!(
            parse_buffer_decl("f f32[2] = iota").map(|d| d.1),
            Ok(Ty::F32)
        );
    }

    #[test]
    fn param_declarations() {
        assert_eq!(
            parse_param_decl("n u32 = 4096"),
            Ok(("n".into(), Ty::U32, Scalar::Int(4096)))
        );
        assert_eq!(
            parse_param_decl("x f32 = -2.5"),
            Ok(("x".into(), Ty::F32, Scalar::Float(-2.5)))
        );
        assert!(parse_param_decl("n u16 = 65536").is_err());
        assert!(parse_param_decl("n u32").is_err());
    }

    #[test]
    fn dims_and_limits() {
        assert_eq!(parse_dims("64"), Ok([64, 1, 1]));
        assert_eq!(parse_dims("8,8"), Ok([8, 8, 1]));
        assert_eq!(parse_dims("4, 4, 4"), Ok([4, 4, 4]));
        assert!(parse_dims("4,0").unwrap_err().contains("zero"));
        assert!(parse_dims("1,2,3,4").is_err());
        assert!(parse_dims("0x100000000").is_err());
        assert!(check_block([32, 32, 1]).is_ok());
        assert!(check_block([32, 33, 1]).unwrap_err().contains("1056"));
        assert!(check_grid([1 << 31, 1, 1]).is_err());
        assert!(check_grid([1, 65536, 1]).is_err());
        assert!(check_grid([65535, 65535, 65535]).is_ok());
        assert_eq!(check_shared(16777216), Ok(16777216));
        assert!(check_shared(16777217).is_err());
    }

    #[test]
    fn cbank_offsets_are_naturally_aligned_in_order() {
        let mut params = vec![
            scalar_param("a", Ty::U8),
            buffer("b", Ty::U8, 1),
            scalar_param("c", Ty::U16),
            scalar_param("d", Ty::U32),
            scalar_param("e", Ty::U8),
            scalar_param("f", Ty::F64),
        ];
        assign_cbank_offsets(&mut params, crate::ir::PARAM_BASE);
        let offsets: Vec<u32> = params.iter().map(|p| p.cbank_offset).collect();
        assert_eq!(offsets, [0x160, 0x168, 0x170, 0x174, 0x178, 0x180]);
    }

    #[test]
    fn expectations() {
        let e = parse_expect("hist[3] == 7").unwrap();
        assert_eq!(
            e.lhs,
            ExpectLhs::Element {
                buffer: "hist".into(),
                index: 3
            }
        );
        assert_eq!(
            (e.cmp, e.rhs),
            (CmpOp::Eq, ExpectRhs::Scalar(Scalar::Int(7)))
        );
        assert_eq!(e.text, "hist[3] == 7");
        let e = parse_expect("a[0..16] >= -1").unwrap();
        assert_eq!(
            e.lhs,
            ExpectLhs::Range {
                buffer: "a".into(),
                start: 0,
                end: 16
            }
        );
        assert_eq!(
            (e.cmp, e.rhs),
            (CmpOp::Ge, ExpectRhs::Scalar(Scalar::Int(-1)))
        );
        let e = parse_expect("a == {1, 2}").unwrap();
        assert_eq!(e.lhs, ExpectLhs::Whole { buffer: "a".into() });
        assert_eq!(e.rhs, ExpectRhs::List(vec![Scalar::Int(1), Scalar::Int(2)]));
        assert_eq!(parse_expect("a != 0").unwrap().cmp, CmpOp::Ne);
        assert_eq!(
            parse_expect("sum(h) < 5").unwrap().lhs,
            ExpectLhs::Sum { buffer: "h".into() }
        );
        assert_eq!(
            parse_expect("min(h) <= 5").unwrap().lhs,
            ExpectLhs::Min { buffer: "h".into() }
        );
        assert_eq!(
            parse_expect("max(h) > 5").unwrap().lhs,
            ExpectLhs::Max { buffer: "h".into() }
        );
        let e = parse_expect("count(h, 3) == 2").unwrap();
        assert_eq!(
            e.lhs,
            ExpectLhs::Count {
                buffer: "h".into(),
                value: Scalar::Int(3)
            }
        );
        // A buffer may be called `sum`.
        assert_eq!(
            parse_expect("sum == 1").unwrap().lhs,
            ExpectLhs::Whole {
                buffer: "sum".into()
            }
        );
        assert!(parse_expect("a < {1}")
            .unwrap_err()
            .contains("only be compared with `==`"));
        assert!(parse_expect("a[1] == {1}")
            .unwrap_err()
            .contains("not a single value"));
        assert!(parse_expect("a[4..4] == 1").unwrap_err().contains("empty"));
        assert!(parse_expect("a = 1").unwrap_err().contains("comparison"));
        assert!(parse_expect("a == 1 2").unwrap_err().contains("unexpected"));
    }

    #[test]
    fn expectation_checks() {
        let params = vec![buffer("a", Ty::U8, 4), scalar_param("n", Ty::U32)];
        let check = |t: &str| check_expect(&parse_expect(t).unwrap(), &params);
        assert!(check("a[3] == 1").is_ok());
        assert!(check("a[4] == 1").unwrap_err().contains("outside"));
        assert!(check("a[0..5] == 1").unwrap_err().contains("outside"));
        assert!(check("a[1..3] == {1, 2}").is_ok());
        assert!(check("a[1..3] == {1}")
            .unwrap_err()
            .contains("2 elements are compared"));
        assert!(check("a == {1, 2, 3, 4}").is_ok());
        assert!(check("a == {1, 2, 3}").is_err());
        assert!(check("a == 256").unwrap_err().contains("does not fit"));
        assert!(check("sum(a) == 100000").is_ok());
        assert!(check("count(a, 300) == 1")
            .unwrap_err()
            .contains("does not fit"));
        assert!(check("count(a, 3) == 1.5").unwrap_err().contains("integer"));
        assert!(check("b == 1").unwrap_err().contains("unknown buffer `b`"));
        assert!(check("n == 1").unwrap_err().contains("scalar parameter"));
    }
}
