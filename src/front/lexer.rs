//! Tokens with spans, shared by the front-ends.
//!
//! The lexer knows nothing about instructions: it cuts text into [`Token`]s and drops comments.
//!
//! * A **word** is a run of ASCII letters, digits and `_ $ % .` (`ATOMS.CAS.U32`, `R2.64`,
//!   `SR_TID.X`, `.kernel`, `.L_x_0`, `0x10`, `1.5`, `%r1`). A word never contains `..` (so
//!   `0..16` is `0`, `..`, `16`), and a word that starts with a digit (and is not hex) may carry a
//!   signed exponent (`1e-3`).
//! * **Punctuation** is `==`, `!=`, `<=`, `>=`, `..` or any other single character.
//! * A **newline** token ends each line: program-file directives are line-oriented. A block
//!   comment spanning lines counts as one newline.
//! * Comments: `// ...` to the end of the line; `/* ... */` (possibly over several lines); and
//!   `# ...` to the end of the line when the `#` follows a `;` on the same line (the style of the
//!   ATOMS document's examples, `ATOMS.ADD.U32 R9, [0x10], R8; # absolute address`). A `#`
//!   anywhere else is an ordinary punctuation token, which parsers reject.
//! * A block comment holding nothing but hex digits (`/*0040*/`) is a cuobjdump **address
//!   prefix** and becomes an [`TokKind::Address`] token; every other block comment (such as the
//!   encoding comments `/* 0x000fe20000000f00 */`) is dropped.
//!
//! * With [`lex_program`] (program and launch files), a **list** of numbers after `=` on one
//!   line (`= {1, -2, 0x3, 1.5}`: only ASCII letters, digits, `_ . + -`, commas, spaces and
//!   tabs between the braces, at least one of them not blank) is one [`TokKind::List`] token
//!   from `{` to `}`, so that an initialiser of millions of values costs its text, not two
//!   tokens a value; its parser reads the values from the text ([`list_values`]). Any other
//!   list (over several lines, with a comment) is ordinary tokens.
//!
//! Spans carry byte offsets and 1-based line and column (columns count characters).

use crate::ir::Span;

/// What kind of token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    /// Letters, digits, `_ $ % .` (see the module docs).
    Word,
    /// `==`, `!=`, `<=`, `>=`, `..` or one other character.
    Punct,
    /// The end of a line.
    Newline,
    /// A cuobjdump address prefix `/*0040*/`; the token's text is the hex digits.
    Address,
    /// A list of numbers after `=` on one line, `{` to `}` (see the module docs).
    List,
}

/// One token: its kind, its text (a slice of the source) and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    pub kind: TokKind,
    pub text: &'a str,
    pub span: Span,
}

impl<'a> Token<'a> {
    pub fn is_punct(&self, p: &str) -> bool {
        self.kind == TokKind::Punct && self.text == p
    }
    pub fn is_word(&self) -> bool {
        self.kind == TokKind::Word
    }
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self.kind {
            TokKind::Newline => "end of line".to_string(),
            TokKind::Address => format!("address prefix `/*{}*/`", self.text),
            TokKind::List => "a list of numbers".to_string(),
            TokKind::Word | TokKind::Punct => format!("`{}`", self.text),
        }
    }
}

/// A syntax error before the file name is known: where, what, and what would be accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub span: Span,
    pub message: String,
    pub expected: Option<String>,
}

impl SyntaxError {
    pub fn new(span: Span, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            span,
            message: message.into(),
            expected: None,
        }
    }
    /// Adds what would have been accepted.
    pub fn expected(mut self, expected: impl Into<String>) -> SyntaxError {
        self.expected = Some(expected.into());
        self
    }
    /// A one-line rendering without a file name (`col 5: message (expected ...)`), for the
    /// string-level helpers of [`crate::front::program`] used on command-line flags.
    pub fn to_short_string(&self) -> String {
        let mut s = format!("column {}: {}", self.span.col, self.message);
        if let Some(e) = &self.expected {
            s.push_str(&format!(" (expected {e})"));
        }
        s
    }
}

/// Cuts `src` into tokens.
pub fn lex(src: &str) -> Result<Vec<Token<'_>>, SyntaxError> {
    lex_with(src, false)
}

/// [`lex`] for program and launch files: a list of numbers after `=` is one
/// [`TokKind::List`] token.
pub fn lex_program(src: &str) -> Result<Vec<Token<'_>>, SyntaxError> {
    lex_with(src, true)
}

/// The bytes a [`TokKind::List`] may hold between its braces.
fn is_list_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-' | b',' | b' ' | b'\t')
}

/// The tokens of a [`TokKind::List`]'s values, lexed `CHUNK` bytes (cut after a comma) at a
/// time so that no more than a chunk's tokens exist at once: `each` gets each chunk's tokens
/// (without the braces; spans in the file) in order and stops at its first error.
pub fn list_values<'a>(
    list: &Token<'a>,
    mut each: impl FnMut(&[Token<'a>]) -> Result<(), SyntaxError>,
) -> Result<(), SyntaxError> {
    const CHUNK: usize = 1 << 16;
    debug_assert_eq!(list.kind, TokKind::List);
    let inner = &list.text[1..list.text.len() - 1];
    let mut done = 0;
    while done < inner.len() {
        let mut end = (done + CHUNK).min(inner.len());
        if end < inner.len() {
            // Cut after a comma, so that no value is split.
            end = inner[end..].find(',').map_or(inner.len(), |k| end + k + 1);
        }
        let mut toks = lex(&inner[done..end])?;
        // The list is ASCII on one line: a byte offset is a column offset.
        let base = list.span.start + 1 + done as u32;
        let col = list.span.col + 1 + done as u32;
        for t in &mut toks {
            t.span = Span {
                start: t.span.start + base,
                end: t.span.end + base,
                line: list.span.line,
                col: t.span.col - 1 + col,
            };
        }
        each(&toks)?;
        done = end;
    }
    Ok(())
}

fn lex_with(src: &str, lists: bool) -> Result<Vec<Token<'_>>, SyntaxError> {
    if src.len() >= u32::MAX as usize {
        return Err(SyntaxError::new(
            Span::default(),
            "the source is larger than 4 GiB",
        ));
    }
    let mut lexer = Lexer {
        src,
        pos: 0,
        line: 1,
        col: 1,
        toks: Vec::new(),
        after_semicolon: false,
        lists,
    };
    lexer.run()?;
    Ok(lexer.toks)
}

struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    line: u32,
    col: u32,
    toks: Vec<Token<'a>>,
    /// The last token on this line is `;` (so a `#` starts a comment).
    after_semicolon: bool,
    /// Lists of numbers after `=` become [`TokKind::List`] tokens.
    lists: bool,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')
}

impl<'a> Lexer<'a> {
    fn rest(&self) -> &'a str {
        &self.src[self.pos..]
    }

    fn span_to(&self, start: usize, line: u32, col: u32) -> Span {
        Span {
            start: start as u32,
            end: self.pos as u32,
            line,
            col,
        }
    }

    /// Advances over `n` bytes (a whole number of characters), keeping line and column.
    fn advance(&mut self, n: usize) {
        let text = &self.src[self.pos..self.pos + n];
        for c in text.chars() {
            if c == '\n' {
                self.line += 1;
                self.col = 1;
            } else {
                self.col += 1;
            }
        }
        self.pos += n;
    }

    fn push(
        &mut self,
        kind: TokKind,
        start: usize,
        text_range: (usize, usize),
        line: u32,
        col: u32,
    ) {
        let span = self.span_to(start, line, col);
        let text = &self.src[text_range.0..text_range.1];
        self.after_semicolon = kind == TokKind::Punct && text == ";";
        self.toks.push(Token { kind, text, span });
    }

    fn skip_to_end_of_line(&mut self) {
        let n = self.rest().find('\n').unwrap_or(self.rest().len());
        self.advance(n);
    }

    fn run(&mut self) -> Result<(), SyntaxError> {
        while let Some(c) = self.rest().chars().next() {
            let (start, line, col) = (self.pos, self.line, self.col);
            let rest = self.rest();
            if c == '\n' {
                self.advance(1);
                self.toks.push(Token {
                    kind: TokKind::Newline,
                    text: "\n",
                    span: Span {
                        start: start as u32,
                        end: start as u32 + 1,
                        line,
                        col,
                    },
                });
                self.after_semicolon = false;
            } else if c.is_whitespace() {
                self.advance(c.len_utf8());
            } else if rest.starts_with("//") || (c == '#' && self.after_semicolon) {
                self.skip_to_end_of_line();
            } else if rest.starts_with("/*") {
                self.block_comment(start, line, col)?;
            } else if rest.starts_with("..") {
                self.advance(2);
                self.push(TokKind::Punct, start, (start, start + 2), line, col);
            } else if let Some(n) = self.list_length(c, rest) {
                self.advance(n);
                self.push(TokKind::List, start, (start, start + n), line, col);
            } else if is_word_char(c) {
                let n = word_length(rest);
                self.advance(n);
                self.push(TokKind::Word, start, (start, start + n), line, col);
            } else {
                let n = if ["==", "!=", "<=", ">="].iter().any(|p| rest.starts_with(p)) {
                    2
                } else {
                    c.len_utf8()
                };
                self.advance(n);
                self.push(TokKind::Punct, start, (start, start + n), line, col);
            }
        }
        Ok(())
    }

    /// The length of a [`TokKind::List`] starting at `rest` (which starts with `c`), if one
    /// does.
    fn list_length(&self, c: char, rest: &str) -> Option<usize> {
        if !self.lists || c != '{' || !self.toks.last().is_some_and(|t| t.is_punct("=")) {
            return None;
        }
        let inner = rest[1..].bytes().position(|b| !is_list_byte(b))?;
        let body = &rest.as_bytes()[1..1 + inner];
        (rest.as_bytes().get(1 + inner) == Some(&b'}')
            && body.iter().any(|&b| b != b' ' && b != b'\t'))
        .then_some(inner + 2)
    }

    fn block_comment(&mut self, start: usize, line: u32, col: u32) -> Result<(), SyntaxError> {
        let Some(close) = self.rest()[2..].find("*/") else {
            let span = Span {
                start: start as u32,
                end: start as u32 + 2,
                line,
                col,
            };
            return Err(SyntaxError::new(span, "unterminated block comment").expected("`*/`"));
        };
        let body_start = start + 2;
        let body = &self.src[body_start..body_start + close];
        self.advance(close + 4);
        let trimmed = body.trim();
        if body.contains('\n') {
            self.toks.push(Token {
                kind: TokKind::Newline,
                text: "\n",
                span: Span {
                    start: self.pos as u32 - 2,
                    end: self.pos as u32,
                    line: self.line,
                    col: self.col - 2,
                },
            });
            self.after_semicolon = false;
        } else if !trimmed.is_empty()
            && trimmed.len() <= 16
            && trimmed.bytes().all(|b| b.is_ascii_hexdigit())
        {
            let offset = body_start + (body.len() - body.trim_start().len());
            self.push(
                TokKind::Address,
                start,
                (offset, offset + trimmed.len()),
                line,
                col,
            );
        }
        Ok(())
    }
}

/// Length in bytes of the word at the start of `s`.
fn word_length(s: &str) -> usize {
    let bytes = s.as_bytes();
    let numeric = bytes[0].is_ascii_digit() && !(s.starts_with("0x") || s.starts_with("0X"));
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'.' && bytes.get(i + 1) == Some(&b'.') {
            break;
        }
        let exponent_sign = numeric
            && (b == b'+' || b == b'-')
            && i > 0
            && matches!(bytes[i - 1], b'e' | b'E')
            && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        if (b as char).is_ascii() && is_word_char(b as char) || exponent_sign {
            i += 1;
        } else {
            break;
        }
    }
    i.max(1)
}

/// A position in a token slice, with the helpers every parser needs.
#[derive(Debug, Clone)]
pub struct Cursor<'t, 'a> {
    toks: &'t [Token<'a>],
    pos: usize,
    /// Where "end of input" errors point: just after the last token (or the given span).
    end: Span,
}

impl<'t, 'a> Cursor<'t, 'a> {
    /// A cursor over `toks`; `end` is where errors about a missing token point when the slice
    /// is exhausted (normally the end of the statement).
    pub fn new(toks: &'t [Token<'a>], end: Span) -> Cursor<'t, 'a> {
        Cursor { toks, pos: 0, end }
    }

    /// A cursor whose end span is just after the last token (or `fallback` if empty).
    pub fn over(toks: &'t [Token<'a>], fallback: Span) -> Cursor<'t, 'a> {
        let end = toks.last().map(|t| end_of(t.span)).unwrap_or(fallback);
        Cursor::new(toks, end)
    }

    pub fn peek(&self) -> Option<&'t Token<'a>> {
        self.toks.get(self.pos)
    }
    pub fn peek_at(&self, n: usize) -> Option<&'t Token<'a>> {
        self.toks.get(self.pos + n)
    }
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<&'t Token<'a>> {
        let t = self.toks.get(self.pos);
        if t.is_some() {
            self.pos += 1;
        }
        t
    }
    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }
    /// The tokens not yet consumed.
    pub fn remaining(&self) -> &'t [Token<'a>] {
        &self.toks[self.pos.min(self.toks.len())..]
    }
    /// The span of the next token, or the end span.
    pub fn here(&self) -> Span {
        self.peek().map(|t| t.span).unwrap_or(self.end)
    }
    /// Describes the next token for an error message.
    pub fn found(&self) -> String {
        self.peek()
            .map(|t| t.describe())
            .unwrap_or_else(|| "end of line".to_string())
    }
    /// An error at the next token: "expected X, found Y".
    pub fn error_expected(&self, what: &str) -> SyntaxError {
        SyntaxError::new(
            self.here(),
            format!("expected {what}, found {}", self.found()),
        )
        .expected(what.to_string())
    }
    pub fn is_punct(&self, p: &str) -> bool {
        self.peek().is_some_and(|t| t.is_punct(p))
    }
    /// Consumes `p` if it is next.
    pub fn eat_punct(&mut self, p: &str) -> Option<Span> {
        if self.is_punct(p) {
            self.next().map(|t| t.span)
        } else {
            None
        }
    }
    pub fn expect_punct(&mut self, p: &str) -> Result<Span, SyntaxError> {
        self.eat_punct(p)
            .ok_or_else(|| self.error_expected(&format!("`{p}`")))
    }
    /// Consumes a word; `what` describes it for the error.
    pub fn expect_word(&mut self, what: &str) -> Result<&'t Token<'a>, SyntaxError> {
        match self.peek() {
            Some(t) if t.is_word() => {
                self.pos += 1;
                Ok(t)
            }
            _ => Err(self.error_expected(what)),
        }
    }
    /// Fails unless every token has been consumed.
    pub fn expect_end(&self, what_came_before: &str) -> Result<(), SyntaxError> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(SyntaxError::new(
                t.span,
                format!("unexpected {} after {what_came_before}", t.describe()),
            )
            .expected("end of statement")),
        }
    }
}

/// An empty span just after `s`.
pub fn end_of(s: Span) -> Span {
    Span {
        start: s.end,
        end: s.end,
        line: s.line,
        col: s.col + (s.end - s.start),
    }
}

/// The span covering `a` through `b` (both on the line of `a` for line/col purposes).
pub fn join(a: Span, b: Span) -> Span {
    Span {
        start: a.start.min(b.start),
        end: a.end.max(b.end),
        line: a.line,
        col: a.col,
    }
}

/// The sub-span of a word token covering bytes `from..to` of its text (words are ASCII, so
/// byte and character columns agree).
pub fn sub_span(s: Span, from: usize, to: usize) -> Span {
    Span {
        start: s.start + from as u32,
        end: s.start + to as u32,
        line: s.line,
        col: s.col + from as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_numbers_after_equals_is_one_token_and_nothing_else_is() {
        let list = |src: &str| -> Vec<(TokKind, String)> {
            lex_program(src)
                .unwrap()
                .into_iter()
                .map(|t| (t.kind, t.text.to_string()))
                .collect()
        };
        let toks = list(".buffer a u32[3] = {1, -2, 0x3, 1.5e-3}\nX");
        assert!(
            toks.contains(&(TokKind::List, "{1, -2, 0x3, 1.5e-3}".into())),
            "{toks:?}"
        );
        // Not after `=`, empty, over two lines, with a comment or a register: ordinary tokens.
        for src in [
            "== {1, 2}",
            "= {}",
            "= { }",
            "= {1,\n2}",
            "= {1, /* c */ 2}",
            "= {%r1, 2}",
        ] {
            assert!(list(src).iter().all(|(k, _)| *k != TokKind::List), "{src}");
        }
        // `lex` (PTX) never makes one.
        assert!(lex("= {1, 2}")
            .unwrap()
            .iter()
            .all(|t| t.kind != TokKind::List));
    }

    #[test]
    fn list_values_come_in_chunks_with_spans_in_the_file() {
        // A list longer than a chunk: every value arrives once, in order, at its column.
        let values: Vec<String> = (0..40_000).map(|i| format!("{}", i * 7)).collect();
        let src = format!("x = {{{}}}", values.join(", "));
        let toks = lex_program(&src).unwrap();
        let list = toks.iter().find(|t| t.kind == TokKind::List).unwrap();
        let (mut seen, mut chunks) = (Vec::new(), 0);
        list_values(list, |chunk| {
            chunks += 1;
            for t in chunk.iter().filter(|t| t.is_word()) {
                assert_eq!(&src[t.span.start as usize..t.span.end as usize], t.text);
                assert_eq!(t.span.col as usize, t.span.start as usize + 1);
                assert_eq!(t.span.line, 1);
                seen.push(t.text.to_string());
            }
            Ok(())
        })
        .unwrap();
        assert!(chunks > 1, "{chunks} chunk(s)");
        assert_eq!(seen, values);
    }

    fn kinds(src: &str) -> Vec<(TokKind, &str)> {
        lex(src)
            .unwrap()
            .into_iter()
            .map(|t| (t.kind, t.text))
            .collect()
    }

    #[test]
    fn words_punctuation_and_spans() {
        let toks = lex("ATOMS.ADD.S32 R0, [R1 - 400], R9;").unwrap();
        let texts: Vec<&str> = toks.iter().map(|t| t.text).collect();
        assert_eq!(
            texts,
            [
                "ATOMS.ADD.S32",
                "R0",
                ",",
                "[",
                "R1",
                "-",
                "400",
                "]",
                ",",
                "R9",
                ";"
            ]
        );
        assert_eq!(
            toks[1].span,
            Span {
                start: 14,
                end: 16,
                line: 1,
                col: 15
            }
        );
    }

    #[test]
    fn numbers_ranges_and_exponents() {
        use TokKind::*;
        assert_eq!(
            kinds("a[0..16]"),
            [
                (Word, "a"),
                (Punct, "["),
                (Word, "0"),
                (Punct, ".."),
                (Word, "16"),
                (Punct, "]")
            ]
        );
        assert_eq!(
            kinds("1e-3 -2e+3 0x1e-1"),
            [
                (Word, "1e-3"),
                (Punct, "-"),
                (Word, "2e+3"),
                (Word, "0x1e"),
                (Punct, "-"),
                (Word, "1")
            ]
        );
        assert_eq!(
            kinds("x == y != z <= w >= v"),
            [
                (Word, "x"),
                (Punct, "=="),
                (Word, "y"),
                (Punct, "!="),
                (Word, "z"),
                (Punct, "<="),
                (Word, "w"),
                (Punct, ">="),
                (Word, "v")
            ]
        );
    }

    #[test]
    fn comments_and_address_prefixes() {
        use TokKind::*;
        let src = "/*0040*/ NOP ; /* 0x000fe20000000f00 */\n// line\nEXIT; # done\n# not a comment";
        assert_eq!(
            kinds(src),
            [
                (Address, "0040"),
                (Word, "NOP"),
                (Punct, ";"),
                (Newline, "\n"),
                (Newline, "\n"),
                (Word, "EXIT"),
                (Punct, ";"),
                (Newline, "\n"),
                (Punct, "#"),
                (Word, "not"),
                (Word, "a"),
                (Word, "comment")
            ]
        );
        // A block comment over two lines counts as one line end; positions stay right after it.
        let toks = lex("A /* x\n y */ B").unwrap();
        assert_eq!(toks[1].kind, Newline);
        assert_eq!((toks[2].span.line, toks[2].span.col), (2, 7));
    }

    #[test]
    fn unterminated_comment_is_an_error() {
        let e = lex("NOP\n  /* oops").unwrap_err();
        assert_eq!((e.span.line, e.span.col), (2, 3));
        assert!(e.message.contains("unterminated"));
    }

    #[test]
    fn columns_count_characters() {
        let toks = lex("é x").unwrap();
        assert_eq!(toks[1].span.col, 3);
        assert_eq!(toks[0].kind, TokKind::Punct);
    }
}
