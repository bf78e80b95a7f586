//! Directive lines, the one parser of the launch directives (`.grid`, `.block`, `.shared`,
//! `.buffer`, `.surface`, `.param`, `.expect`; syntax in [`crate::front::program`]).
//!
//! Three kinds of text hold directives: SASS program files (the SASS front-end cuts them into
//! statements), launch files and command-line launch lines ([`crate::front::launch`]), and
//! litmus headers ([`crate::litmus`], whose `.observe`, `.forbidden`, `.allowed` and `.ptx` are
//! its own). Launch files and litmus headers are cut into [`Line`]s here; every launch
//! directive, wherever it comes from, becomes a [`Directive`] through [`parse`]. What a
//! directive *does* is the applier's policy: a SASS kernel takes `.shared` as its window and
//! refuses a repeated `.grid`; a launch for a PTX entry adds the entry's static shared
//! variables to `.shared` and binds `.buffer`/`.param` lines to the entry's parameters.

use super::lexer::{end_of, join, Cursor, SyntaxError, TokKind, Token};
use super::program::{
    buffer_decl, check_block, check_grid, dims, expect, param_decl, surface_decl, unsigned,
    ExpectSpans,
};
use crate::ir::{Expect, ParamDecl, ParamKind, Span};

/// The launch directives, as written.
pub const LAUNCH_DIRECTIVES: [&str; 9] = [
    ".grid",
    ".block",
    ".shared",
    ".static_shared",
    ".buffer",
    ".surface",
    ".param",
    ".expect",
    ".payload",
];

/// True if `word` (case-insensitive) is one of [`LAUNCH_DIRECTIVES`].
pub fn is_launch_directive(word: &str) -> bool {
    LAUNCH_DIRECTIVES
        .iter()
        .any(|d| d.eq_ignore_ascii_case(word))
}

/// One launch directive, parsed and checked as far as it can be on its own.
#[derive(Debug, Clone)]
pub enum Directive {
    /// `.grid X[,Y[,Z]]`, within the grid limits; `span` covers the dimensions.
    Grid { dims: [u32; 3], span: Span },
    /// `.block X[,Y[,Z]]`, within the block limit; `span` covers the dimensions.
    Block { dims: [u32; 3], span: Span },
    /// `.shared BYTES`, not yet checked against the window: a PTX launch adds the entry's
    /// static variables first. `span` covers the number.
    Shared { bytes: u64, span: Span },
    /// `.static_shared BYTES`: the kernel's static shared variables (what a SASS listing does
    /// not say; a PTX entry's own `.shared` declarations must agree). `span` covers the number.
    StaticShared { bytes: u64, span: Span },
    /// `.buffer NAME TY[LEN] = INIT`, `.surface NAME ...` or `.param NAME TY = VALUE`: the declaration (its span is
    /// the whole directive, its constant-bank offset not yet assigned) and where its name is.
    Decl { decl: ParamDecl, name_span: Span },
    /// `.expect ...`, with the spans of its parts for the check against the buffers.
    Expect { expect: Expect, spans: ExpectSpans },
    /// `.expect trap REASON`: the launch must trap for `REASON`.
    ExpectTrap(crate::ir::TrapExpect),
    /// `.payload OFFSET KIND` (vISA): the thread payload holds `KIND` at byte `OFFSET`.
    Payload(crate::ir::PayloadDecl),
}

/// Parses the launch directive `word` followed by `args` (the rest of its line). `source` is
/// the text the tokens point into (an expectation keeps its own text for reports). `None` if
/// `word` is not a launch directive: the caller says what it accepts instead.
pub fn parse(word: &Token, args: &[Token], source: &str) -> Result<Option<Directive>, SyntaxError> {
    let mut cur = Cursor::over(args, end_of(word.span));
    let stmt_span = args
        .last()
        .map(|t| join(word.span, t.span))
        .unwrap_or(word.span);
    let directive = match word.text.to_ascii_lowercase().as_str() {
        ".grid" => {
            let (dims, span) = dims(&mut cur)?;
            check_grid(dims).map_err(|m| SyntaxError::new(span, m))?;
            Directive::Grid { dims, span }
        }
        ".block" => {
            let (dims, span) = dims(&mut cur)?;
            check_block(dims)
                .map_err(|m| SyntaxError::new(span, m).expected("at most 1024 threads per CTA"))?;
            Directive::Block { dims, span }
        }
        ".shared" => {
            let (bytes, span) = unsigned(&mut cur, "the shared-memory size")?;
            Directive::Shared { bytes, span }
        }
        ".static_shared" => {
            let (bytes, span) = unsigned(&mut cur, "the static shared-memory size")?;
            Directive::StaticShared { bytes, span }
        }
        ".buffer" => {
            let b = buffer_decl(&mut cur)?;
            Directive::Decl {
                decl: ParamDecl {
                    name: b.name,
                    kind: ParamKind::Buffer {
                        elem: b.elem,
                        len: b.len,
                        init: b.init,
                    },
                    cbank_offset: 0,
                    span: stmt_span,
                },
                name_span: b.name_span,
            }
        }
        ".surface" => {
            let d = surface_decl(&mut cur)?;
            Directive::Decl {
                decl: ParamDecl {
                    name: d.name,
                    kind: ParamKind::Surface(Box::new(d.decl)),
                    cbank_offset: 0,
                    span: stmt_span,
                },
                name_span: d.name_span,
            }
        }
        ".param" => {
            let p = param_decl(&mut cur)?;
            Directive::Decl {
                decl: ParamDecl {
                    name: p.name,
                    kind: match p.address_of {
                        Some(surface) => ParamKind::SurfaceAddress { surface },
                        None => ParamKind::Scalar {
                            ty: p.ty,
                            value: p.value,
                        },
                    },
                    cbank_offset: 0,
                    span: stmt_span,
                },
                name_span: p.name_span,
            }
        }
        ".expect" => {
            let text = match (args.first(), args.last()) {
                (Some(a), Some(b)) => source
                    .get(a.span.start as usize..b.span.end as usize)
                    .unwrap_or(""),
                _ => "",
            };
            if let Some(t) = trap_expect(args, text, stmt_span) {
                cur.next();
                cur.next();
                Directive::ExpectTrap(t?)
            } else {
                let (expect, spans) = expect(&mut cur, text, stmt_span)?;
                Directive::Expect { expect, spans }
            }
        }
        ".payload" => {
            let (offset, span) = unsigned(&mut cur, "the payload byte offset")?;
            let offset = u32::try_from(offset)
                .map_err(|_| SyntaxError::new(span, "the payload offset is too large"))?;
            let kinds = crate::ir::PayloadKind::ALL
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", ");
            let Some(kind_tok) = cur.next() else {
                return Err(
                    SyntaxError::new(stmt_span, "`.payload` needs a kind").expected(kinds.clone())
                );
            };
            let kind = crate::ir::PayloadKind::from_name(kind_tok.text).ok_or_else(|| {
                SyntaxError::new(
                    kind_tok.span,
                    format!("unknown payload kind `{}`", kind_tok.text),
                )
                .expected(kinds)
            })?;
            Directive::Payload(crate::ir::PayloadDecl {
                offset,
                kind,
                span: stmt_span,
            })
        }
        _ => return Ok(None),
    };
    cur.expect_end(&format!("`{}`", word.text))?;
    Ok(Some(directive))
}

/// `.expect trap REASON`'s arguments (`args`, the text `text` they span), if that is what they
/// are: a buffer called `trap` is compared instead (`.expect trap == 1`).
pub fn trap_expect(
    args: &[Token],
    text: &str,
    span: crate::ir::Span,
) -> Option<Result<crate::ir::TrapExpect, SyntaxError>> {
    let trap = args.len() == 2
        && args[0].is_word()
        && args[0].text.eq_ignore_ascii_case("trap")
        && args[1].is_word();
    if !trap {
        return None;
    }
    let word = &args[1];
    let reason = word.text.to_ascii_lowercase();
    if crate::exec::TrapReason::from_name(&reason).is_none() {
        let names: Vec<&str> = crate::exec::TrapReason::ALL
            .iter()
            .map(|r| r.name())
            .collect();
        return Some(Err(SyntaxError::new(
            word.span,
            format!("`{}` is not a trap reason", word.text),
        )
        .expected(format!("one of {}", names.join(" ")))));
    }
    Some(Ok(crate::ir::TrapExpect {
        reason,
        text: text.to_string(),
        span,
    }))
}

/// One non-empty line of a directive source: its first token (a directive word such as
/// `.grid`, if the line is well formed) and the tokens after it, without a trailing `;`.
#[derive(Debug, Clone)]
pub struct Line<'a> {
    pub word: Token<'a>,
    pub args: Vec<Token<'a>>,
    /// The end of the line (a newline, or a block comment running over lines); `None` at the
    /// end of the source.
    pub end: Option<Span>,
}

impl Line<'_> {
    /// True if the line starts with a word beginning with `.` (a directive, known or not).
    pub fn is_directive(&self) -> bool {
        self.word.is_word() && self.word.text.starts_with('.')
    }

    /// True if the line's word is `directive` (case-insensitive).
    pub fn is(&self, directive: &str) -> bool {
        self.word.is_word() && self.word.text.eq_ignore_ascii_case(directive)
    }

    /// Where the line's text is: from its word to its last token.
    pub fn span(&self) -> Span {
        self.args
            .last()
            .map_or(self.word.span, |t| join(self.word.span, t.span))
    }

    /// The text after the word, from just after it to the end of the last token, and where
    /// that text starts (for parsers that read text rather than tokens).
    pub fn rest<'s>(&self, source: &'s str) -> (&'s str, Span) {
        let start = end_of(self.word.span);
        let end = self.args.last().map_or(start.end, |t| t.span.end);
        let text = source.get(start.start as usize..end as usize).unwrap_or("");
        (text, start)
    }
}

/// Cuts a lexed directive source into its non-empty lines. Address prefixes (`/*0040*/`) are
/// dropped, as is a `;` ending a line.
pub fn lines<'a>(toks: &[Token<'a>]) -> Vec<Line<'a>> {
    let mut out = Vec::new();
    let mut line: Vec<Token<'a>> = Vec::new();
    let mut finish = |line: &mut Vec<Token<'a>>, end: Option<Span>| {
        if line.last().is_some_and(|t| t.is_punct(";")) {
            line.pop();
        }
        let mut toks = std::mem::take(line).into_iter();
        if let Some(word) = toks.next() {
            out.push(Line {
                word,
                args: toks.collect(),
                end,
            });
        }
    };
    for t in toks {
        match t.kind {
            TokKind::Newline => finish(&mut line, Some(t.span)),
            TokKind::Address => {}
            TokKind::Word | TokKind::Punct | TokKind::List => line.push(*t),
        }
    }
    finish(&mut line, None);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::lexer::lex;
    use crate::ir::Ty;

    fn parse_line(text: &str) -> Result<Option<Directive>, SyntaxError> {
        let toks = lex(text).unwrap();
        let line = &lines(&toks)[0];
        parse(&line.word, &line.args, text)
    }

    #[test]
    fn each_directive_becomes_a_typed_value() {
        match parse_line(".grid 4, 2").unwrap() {
            Some(Directive::Grid { dims, span }) => {
                assert_eq!(dims, [4, 2, 1]);
                assert_eq!((span.col, span.end), (7, 10));
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_line(".BLOCK 64 ;").unwrap(),
            Some(Directive::Block {
                dims: [64, 1, 1],
                ..
            })
        ));
        // `.shared` is checked by the applier (a PTX launch adds the static variables first).
        assert!(matches!(
            parse_line(".shared 99999999999").unwrap(),
            Some(Directive::Shared {
                bytes: 99999999999,
                ..
            })
        ));
        match parse_line(".buffer hist u32[256] = 0").unwrap() {
            Some(Directive::Decl { decl, name_span }) => {
                assert_eq!(decl.name, "hist");
                assert!(matches!(
                    decl.kind,
                    ParamKind::Buffer {
                        elem: Ty::U32,
                        len: 256,
                        ..
                    }
                ));
                assert_eq!((decl.span.col, decl.span.end), (1, 25));
                assert_eq!(name_span.col, 9);
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_line(".param n u16 = 7").unwrap(),
            Some(Directive::Decl {
                decl: ParamDecl {
                    kind: ParamKind::Scalar { ty: Ty::U16, .. },
                    ..
                },
                ..
            })
        ));
        match parse_line(".expect sum(hist) == 4 // checked").unwrap() {
            Some(Directive::Expect { expect, .. }) => assert_eq!(expect.text, "sum(hist) == 4"),
            other => panic!("{other:?}"),
        }
        assert!(parse_line(".observe a[0]").unwrap().is_none());
    }

    #[test]
    fn errors_point_at_the_offending_token() {
        let e = parse_line(".block 2000").unwrap_err();
        assert_eq!(e.span.col, 8);
        assert!(e.message.contains("2000 threads exceeds 1024"), "{e:?}");
        let e = parse_line(".grid 1, 70000").unwrap_err();
        assert!(e.message.contains("at most 65535"), "{e:?}");
        let e = parse_line(".grid 2 3").unwrap_err();
        assert_eq!(e.span.col, 9);
        assert!(e.message.contains("unexpected `3` after `.grid`"), "{e:?}");
    }

    #[test]
    fn lines_drop_blank_lines_addresses_and_a_final_semicolon() {
        let text = "\n.grid 2 ;\n/*0010*/ .block 4 /* a\n b */\n  x y\n.shared 0";
        let toks = lex(text).unwrap();
        let lines = lines(&toks);
        let words: Vec<(&str, usize)> = lines.iter().map(|l| (l.word.text, l.args.len())).collect();
        assert_eq!(
            words,
            [(".grid", 1), (".block", 1), ("x", 1), (".shared", 1)]
        );
        assert!(lines[0].is(".GRID") && lines[0].is_directive());
        assert!(!lines[2].is_directive());
        assert_eq!(lines[2].span().col, 3);
        let (rest, at) = lines[2].rest(text);
        assert_eq!((rest, at.col), (" y", 4));
        // A line ends at its newline, or after a block comment that runs over lines.
        assert_eq!(
            lines[0].end.map(|s| s.end as usize),
            text.find(" ;\n").map(|i| i + 3)
        );
        assert_eq!(
            lines[1].end.map(|s| s.end as usize),
            text.rfind("*/").map(|i| i + 2)
        );
        assert_eq!(lines[3].end, None);
    }
}
