//! The vISA lexer: tokens with spans, cut the way IGC's own lexer (`visa/CISA.l`) cuts them.
//!
//! The shared lexer ([`crate::front::lexer`]) does not fit vISA text: it glues `.` into words
//! (`V0082.64`, `svm_atomic.add.64` would be single words), treats `//` inside a string literal
//! as a comment and knows no string literals at all. This one follows GenX_IR's reader:
//!
//! * **Identifiers**: a letter or `_` then letters, digits and `_` (`V0082`, `svm_atomic`,
//!   `M1_NM`); with a leading `%` they name a predefined variable (`%r0`, `%null`). `2GRF`,
//!   `32word` and `64word` (alignment names that start with a digit) are identifiers too.
//! * **Integers**: decimal `[0-9]+` or hexadecimal `0x[0-9a-fA-F]+` (at most 16 digits).
//! * **Floats**: `[0-9]+.[0-9]+`, optionally with an exponent `e±[0-9]+` (or `[0-9]+e±[0-9]+`),
//!   and only when a float type suffix `:f` or `:df` follows at once, as in IGC, so that
//!   `svm_gather.4.1` and `.version 4.1` stay integers separated by dots.
//! * **Strings**: `"..."` with C escapes; a newline or the end of the text inside one is an
//!   error.
//! * **Labels**: in the first column of a line, `[A-Za-z_$@?][A-Za-z0-9_$@?-]*:` (IGC's label pattern,
//!   which admits mangled names such as `??$f@M$07@@YAXH@Z:`) is one label token.
//! * **Punctuation**: any one of `( ) [ ] < > { } , ; : = ! ~ - + * / % & | ^ ? .`.
//! * **Newlines** end statements. Comments `//...` (so `/// $12` too) run to the end of the
//!   line; `/* ... */` comments are dropped whole, newlines inside included (IGC's behaviour).
//!   Spaces, tabs and carriage returns separate tokens.
//!
//! Any other character (a non-ASCII letter, `#`, a backquote) is an error at that character.
//! Spans carry byte offsets and 1-based line and column (columns count characters).

use crate::front::lexer::SyntaxError;
use crate::ir::Span;

/// What kind of token, with its value where it has one.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// An identifier, possibly `%`-prefixed (the text is the name).
    Ident,
    /// A label definition at the start of a line; the text includes the `:`.
    Label,
    /// An integer literal and its value.
    Int(u64),
    /// A float literal (only before `:f`/`:df`); the text is the literal.
    Float,
    /// A string literal, decoded.
    Str(String),
    /// One punctuation character (the text).
    Punct,
    /// The end of a line (and, once, of the text).
    Newline,
}

/// One token: kind, source text and where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Tok<'a> {
    pub kind: Kind,
    pub text: &'a str,
    pub span: Span,
}

impl Tok<'_> {
    pub fn is_punct(&self, p: &str) -> bool {
        self.kind == Kind::Punct && self.text == p
    }
    pub fn is_ident(&self) -> bool {
        self.kind == Kind::Ident
    }
    pub fn is_newline(&self) -> bool {
        self.kind == Kind::Newline
    }
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match &self.kind {
            Kind::Newline if self.text.is_empty() => "the end of the text".to_string(),
            Kind::Newline => "the end of the line".to_string(),
            Kind::Str(_) => "a string literal".to_string(),
            Kind::Ident | Kind::Label | Kind::Int(_) | Kind::Float | Kind::Punct => {
                format!("`{}`", self.text)
            }
        }
    }
}

const PUNCT: &str = "()[]<>{},;:=!~-+*/%&|^?.";

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}
fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}
fn is_label_start(c: u8) -> bool {
    is_ident_start(c) || matches!(c, b'$' | b'@' | b'?')
}
fn is_label_char(c: u8) -> bool {
    is_ident_char(c) || matches!(c, b'$' | b'@' | b'?' | b'-')
}

/// Cuts `src` into tokens. The last token is always a [`Kind::Newline`] with empty text (the
/// end of the text), so a parser never runs off the end.
pub fn lex(src: &str) -> Result<Vec<Tok<'_>>, SyntaxError> {
    if src.len() >= u32::MAX as usize {
        return Err(SyntaxError::new(
            Span::default(),
            "the source is larger than 4 GiB",
        ));
    }
    let mut lx = Lexer {
        src,
        bytes: src.as_bytes(),
        pos: 0,
        line: 1,
        col: 1,
        toks: Vec::new(),
    };
    lx.run()?;
    let end = Span {
        start: src.len() as u32,
        end: src.len() as u32,
        line: lx.line,
        col: lx.col,
    };
    lx.toks.push(Tok {
        kind: Kind::Newline,
        text: "",
        span: end,
    });
    Ok(lx.toks)
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    col: u32,
    toks: Vec<Tok<'a>>,
}

impl<'a> Lexer<'a> {
    fn peek(&self, k: usize) -> Option<u8> {
        self.bytes.get(self.pos + k).copied()
    }

    /// Advances over `n` bytes (a whole number of characters), keeping line and column.
    fn advance(&mut self, n: usize) {
        for c in self.src[self.pos..self.pos + n].chars() {
            if c == '\n' {
                self.line += 1;
                self.col = 1;
            } else {
                self.col += 1;
            }
        }
        self.pos += n;
    }

    fn here(&self) -> (usize, u32, u32) {
        (self.pos, self.line, self.col)
    }

    fn span_from(&self, (start, line, col): (usize, u32, u32)) -> Span {
        Span {
            start: start as u32,
            end: self.pos as u32,
            line,
            col,
        }
    }

    fn push(&mut self, kind: Kind, from: (usize, u32, u32)) {
        let span = self.span_from(from);
        let text = &self.src[from.0..self.pos];
        self.toks.push(Tok { kind, text, span });
    }

    /// An error at the `len` bytes starting here.
    fn error_here(&self, len: usize, message: impl Into<String>) -> SyntaxError {
        let len = len.min(self.src.len() - self.pos);
        SyntaxError::new(
            Span {
                start: self.pos as u32,
                end: (self.pos + len) as u32,
                line: self.line,
                col: self.col,
            },
            message,
        )
    }

    fn run(&mut self) -> Result<(), SyntaxError> {
        while let Some(c) = self.peek(0) {
            let from = self.here();
            match c {
                b'\n' => {
                    self.advance(1);
                    self.push(Kind::Newline, from);
                }
                b' ' | b'\t' | b'\r' => self.advance(1),
                b'/' if self.peek(1) == Some(b'/') => {
                    let n = self.src[self.pos..]
                        .find('\n')
                        .unwrap_or(self.src.len() - self.pos);
                    self.advance(n);
                }
                b'/' if self.peek(1) == Some(b'*') => {
                    let Some(close) = self.src[self.pos + 2..].find("*/") else {
                        return Err(self
                            .error_here(2, "unterminated block comment")
                            .expected("`*/`"));
                    };
                    self.advance(close + 4);
                }
                b'"' => self.string()?,
                b'%' if self.peek(1).is_some_and(is_ident_start) => {
                    self.advance(1);
                    self.ident_tail();
                    self.push(Kind::Ident, from);
                }
                _ if self.col == 1 && is_label_start(c) && self.label_len().is_some() => {
                    let n = self.label_len().unwrap_or(0);
                    self.advance(n);
                    self.push(Kind::Label, from);
                }
                _ if is_ident_start(c) => {
                    self.ident_tail();
                    self.push(Kind::Ident, from);
                }
                _ if c.is_ascii_digit() => self.number()?,
                _ if c.is_ascii() && PUNCT.as_bytes().contains(&c) => {
                    self.advance(1);
                    self.push(Kind::Punct, from);
                }
                _ => {
                    let ch = self.src[self.pos..].chars().next().unwrap_or('?');
                    let shown = if ch.is_control() || ch.is_whitespace() {
                        format!("{:?}", ch)
                    } else {
                        format!("`{ch}`")
                    };
                    return Err(
                        self.error_here(ch.len_utf8(), format!("unexpected character {shown}"))
                    );
                }
            }
        }
        Ok(())
    }

    fn ident_tail(&mut self) {
        let n = self.bytes[self.pos..]
            .iter()
            .take_while(|&&b| is_ident_char(b))
            .count();
        self.advance(n);
    }

    /// The length of a label definition (`name:`) starting here, if one does.
    fn label_len(&self) -> Option<usize> {
        let rest = &self.bytes[self.pos..];
        let n = rest.iter().take_while(|&&b| is_label_char(b)).count();
        // `name::` is not a label; neither is a `:` that starts a type suffix (`x:ud`) — but a
        // type suffix cannot start a line, so only the double colon needs excluding.
        (n > 0 && rest.get(n) == Some(&b':') && rest.get(n + 1) != Some(&b':')).then_some(n + 1)
    }

    fn number(&mut self) -> Result<(), SyntaxError> {
        let from = self.here();
        let rest = &self.bytes[self.pos..];
        // Alignment keywords that start with a digit.
        let word = rest.iter().take_while(|&&b| is_ident_char(b)).count();
        if matches!(
            &self.src[self.pos..self.pos + word],
            "2GRF" | "32word" | "64word"
        ) {
            self.advance(word);
            self.push(Kind::Ident, from);
            return Ok(());
        }
        if rest.len() > 2 && rest[0] == b'0' && (rest[1] == b'x' || rest[1] == b'X') {
            let digits = rest[2..]
                .iter()
                .take_while(|b| b.is_ascii_hexdigit())
                .count();
            if digits == 0 {
                return Err(self.error_here(2, "a hexadecimal literal needs digits after `0x`"));
            }
            if digits > 16 {
                return Err(self.error_here(2 + digits, "hexadecimal literal longer than 64 bits"));
            }
            let value = u64::from_str_radix(&self.src[self.pos + 2..self.pos + 2 + digits], 16)
                .map_err(|_| self.error_here(2 + digits, "malformed hexadecimal literal"))?;
            self.advance(2 + digits);
            self.push(Kind::Int(value), from);
            return Ok(());
        }
        let int_len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        if let Some(len) = float_len(rest, int_len) {
            self.advance(len);
            self.push(Kind::Float, from);
            return Ok(());
        }
        let text = &self.src[self.pos..self.pos + int_len];
        let value = text
            .parse::<u64>()
            .map_err(|_| self.error_here(int_len, "integer literal larger than 64 bits"))?;
        self.advance(int_len);
        self.push(Kind::Int(value), from);
        Ok(())
    }

    /// An error at byte `at` (on the current line, at or after the current position), `len`
    /// bytes long.
    fn error_at(&self, at: usize, len: usize, message: impl Into<String>) -> SyntaxError {
        let col = self.col + self.src[self.pos..at].chars().count() as u32;
        let end = (at + len).min(self.src.len());
        SyntaxError::new(
            Span {
                start: at as u32,
                end: end as u32,
                line: self.line,
                col,
            },
            message,
        )
    }

    fn string(&mut self) -> Result<(), SyntaxError> {
        let from = self.here();
        let mut value = String::new();
        let mut i = self.pos + 1;
        loop {
            let Some(c) = self.src[i..].chars().next() else {
                return Err(self
                    .error_here(1, "unterminated string literal")
                    .expected("`\"`"));
            };
            match c {
                '"' => {
                    i += 1;
                    break;
                }
                '\n' => {
                    return Err(self
                        .error_at(i, 1, "newline in a string literal")
                        .expected("`\"`"))
                }
                '\\' => {
                    let Some(e) = self.src[i + 1..].chars().next() else {
                        return Err(self.error_here(1, "unterminated string literal"));
                    };
                    let decoded = match e {
                        'a' => '\u{7}',
                        'b' => '\u{8}',
                        'e' => '\u{1b}',
                        'f' => '\u{c}',
                        'n' => '\n',
                        'r' => '\r',
                        't' => '\t',
                        'v' => '\u{b}',
                        '\'' | '"' | '?' | '\\' => e,
                        _ => {
                            return Err(self.error_at(
                                i,
                                1 + e.len_utf8(),
                                format!("illegal escape sequence `\\{e}` in a string"),
                            ))
                        }
                    };
                    value.push(decoded);
                    i += 1 + e.len_utf8();
                }
                _ => {
                    value.push(c);
                    i += c.len_utf8();
                }
            }
        }
        self.advance(i - self.pos);
        self.push(Kind::Str(value), from);
        Ok(())
    }
}

/// The length of a float literal starting at `rest[0]` (a digit; `int_len` digits long), if it
/// is one: digits with a fraction and/or a signed exponent, followed at once by `:f`, `:df`
/// (either case) and no further identifier character.
fn float_len(rest: &[u8], int_len: usize) -> Option<usize> {
    let mut n = int_len;
    let mut float_shape = false;
    if rest.get(n) == Some(&b'.') && rest.get(n + 1).is_some_and(|b| b.is_ascii_digit()) {
        n += 1 + rest[n + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        float_shape = true;
    }
    if matches!(rest.get(n), Some(b'e' | b'E'))
        && matches!(rest.get(n + 1), Some(b'+' | b'-'))
        && rest.get(n + 2).is_some_and(|b| b.is_ascii_digit())
    {
        n += 2 + rest[n + 2..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        float_shape = true;
    }
    if !float_shape || rest.get(n) != Some(&b':') {
        return None;
    }
    let suffix = rest[n + 1..]
        .iter()
        .take_while(|&&b| is_ident_char(b))
        .count();
    let ty = &rest[n + 1..n + 1 + suffix];
    matches!(ty, b"f" | b"F" | b"df" | b"DF").then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(Kind, String)> {
        lex(src)
            .unwrap()
            .into_iter()
            .map(|t| (t.kind, t.text.to_string()))
            .collect()
    }

    #[test]
    fn raw_operands_and_modifiers_split_at_dots() {
        let toks: Vec<String> = kinds("svm_atomic.add.64 V0082.64 %null.0")
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        assert_eq!(
            toks,
            [
                "svm_atomic",
                ".",
                "add",
                ".",
                "64",
                "V0082",
                ".",
                "64",
                "%null",
                ".",
                "0",
                ""
            ]
        );
    }

    #[test]
    fn floats_need_a_float_suffix() {
        let k = kinds("1.5:f 4.1 2e+3:df 7:f");
        assert_eq!(k[0], (Kind::Float, "1.5".into()));
        assert_eq!(k[3], (Kind::Int(4), "4".into()));
        assert_eq!(k[6], (Kind::Float, "2e+3".into()));
        assert_eq!(k[9], (Kind::Int(7), "7".into()));
    }

    #[test]
    fn labels_only_at_line_start() {
        let k = kinds("_main_0:\n  x: y\n??$f@M@@Z:");
        assert_eq!(k[0], (Kind::Label, "_main_0:".into()));
        assert_eq!(k[2], (Kind::Ident, "x".into()));
        assert_eq!(k[3], (Kind::Punct, ":".into()));
        assert_eq!(k[6], (Kind::Label, "??$f@M@@Z:".into()));
    }

    #[test]
    fn strings_comments_and_errors() {
        let k = kinds(".kernel \"a//b\\\"c\" // x\n/* a\nb */ y");
        assert_eq!(k[2].0, Kind::Str("a//b\"c".into()));
        assert_eq!(k[3].0, Kind::Newline);
        assert_eq!(k[4], (Kind::Ident, "y".into()));
        let e = lex("mov\n  \"abc\n").unwrap_err();
        assert_eq!((e.span.line, e.span.col), (2, 7));
        assert!(e.message.contains("newline in a string"), "{}", e.message);
        let e = lex("a # b").unwrap_err();
        assert_eq!((e.span.col, e.span.end - e.span.start), (3, 1));
        let e = lex("0x12345678123456789").unwrap_err();
        assert!(e.message.contains("longer than 64 bits"));
        let e = lex("x /* y").unwrap_err();
        assert_eq!(e.span.col, 3);
        let e = lex("\"a\\qb\"").unwrap_err();
        assert_eq!((e.span.col, e.span.start, e.span.end), (3, 2, 4));
    }
}
