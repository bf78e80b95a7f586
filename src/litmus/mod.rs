//! Litmus tests: run a small multi-CTA PTX program many times, with its CTAs racing on
//! different host threads, and histogram the outcomes.
//!
//! # File format
//!
//! A `.litmus` file has a header, then a line `.ptx`, then a PTX module with one entry:
//!
//! ```text
//! // comments and blank lines anywhere in the header
//! .observe out[0] out[1]                 // the outcome tuple: buffer elements read after a run
//! .forbidden out[0] == 1 && out[1] == 0  // or `.allowed COND`: see `cond.rs` for the syntax
//! .grid 2                                // launch directives, as in a `.launch` sidecar
//! .block 1
//! .buffer x u32[1] = 0
//! .buffer out u32[2] = 0
//! .ptx
//! ...PTX module; each litmus thread is one CTA of one thread, told apart by %ctaid.x...
//! ```
//!
//! The condition may only read observed locations (so every outcome tuple either satisfies it
//! or not), which must be integer buffer elements. A `.forbidden` condition that any iteration
//! satisfies is a failure; an `.allowed` one is reported (how often the weak outcome appeared).
//! Every line number in an error, including the PTX module's and the launch directives', is a
//! line of the `.litmus` file; a header error is a [`ParseError`] like any other syntax error.
//! The header is read as directive lines by the front-end's lexer
//! ([`crate::front::directive`]); the conditions have their own parser (`cond.rs`). A condition
//! may chain any number of comparisons; its parentheses nest at most [`MAX_NESTING`] deep.
//!
//! # Harness
//!
//! See [`harness`]: one persistent host thread per CTA, a spin barrier, a random spin delay,
//! then the CTA runs to completion on that host thread.

mod cond;
pub mod harness;

use crate::front::directive;
use crate::front::lexer::{end_of, lex, Token};
use crate::front::ParseError;
use crate::ir::Span;
use std::fmt;

pub use cond::{parse_cond, parse_location, Cond, CondError, MAX_NESTING};
pub use harness::{run, LitmusError, LitmusJson, LitmusReport, Options, Outcome};

/// Whether the condition's outcome is forbidden (a failure if seen) or merely reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Forbidden,
    Allowed,
}

/// One buffer element: `name[index]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Location {
    pub buffer: String,
    pub index: usize,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[{}]", self.buffer, self.index)
    }
}

/// A parsed litmus test.
#[derive(Debug, Clone)]
pub struct LitmusTest {
    /// The outcome tuple, in order.
    pub observe: Vec<Location>,
    /// 1-based line of the `.observe` directive.
    pub observe_line: usize,
    pub verdict: Verdict,
    pub condition: Cond,
    /// The launch directives, at their own line and column positions: the file's text with
    /// every other byte (except newlines) replaced by a space, so spans of launch parse errors
    /// are positions in the `.litmus` file.
    pub launch: String,
    /// The PTX module, at its own position in the file (everything before it blanked the same
    /// way).
    pub ptx: String,
}

/// `text` with every character outside the byte ranges `keep` that is not a newline replaced by
/// as many spaces as it has bytes, so byte offsets, lines and columns stay those of `text`.
fn blank_except(text: &str, keep: &[std::ops::Range<usize>]) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if c == '\n' || keep.iter().any(|r| r.contains(&i)) {
            out.push(c);
        } else {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        }
    }
    out
}

/// The tokens of the header: the file's tokens, or, if the file does not lex (an unterminated
/// block comment), those before the error, provided the header ends there (the PTX module's
/// own parse reports the error then, as it would any error in the module).
fn header_tokens<'a>(file_name: &str, text: &'a str) -> Result<Vec<Token<'a>>, ParseError> {
    match lex(text) {
        Ok(toks) => Ok(toks),
        Err(e) => {
            let before = lex(&text[..e.span.start as usize]).unwrap_or_default();
            if directive::lines(&before).iter().any(|l| l.is(".ptx")) {
                Ok(before)
            } else {
                Err(ParseError::from_syntax(file_name, e))
            }
        }
    }
}

/// Parses the text of a `.litmus` file; `file_name` names it in errors. The header is read as
/// directive lines ([`crate::front::directive`]): `.observe`, `.forbidden`, `.allowed` and `.ptx`
/// are the test's own, every other line is a launch directive, parsed with the PTX module.
pub fn parse(file_name: &str, text: &str) -> Result<LitmusTest, ParseError> {
    let toks = header_tokens(file_name, text)?;
    let err = |span: Span, message: String| ParseError {
        file: file_name.to_string(),
        span,
        message,
        expected: None,
    };
    // A span `len` bytes long, `offset` bytes into the text that starts at `at` (header text
    // is ASCII where these point, so bytes are columns).
    let within = |at: Span, offset: usize, len: usize| Span {
        start: at.start + offset as u32,
        end: at.start + (offset + len) as u32,
        line: at.line,
        col: at.col + offset as u32,
    };
    let mut observe: Option<(Span, Vec<Location>)> = None;
    let mut verdict: Option<(Span, Verdict, Cond)> = None;
    let mut launch_ranges = Vec::new();
    let mut ptx_start = None;
    for line in directive::lines(&toks) {
        let word = line.word.span;
        if line.is(".ptx") {
            if !line.args.is_empty() {
                return Err(err(
                    end_of(word),
                    "`.ptx` stands alone on its line; the module starts on the next line".into(),
                ));
            }
            ptx_start = Some(line.end.map_or(text.len(), |end| end.end as usize));
            break;
        }
        if line.is(".observe") {
            if let Some((first, _)) = &observe {
                return Err(err(
                    word,
                    format!(
                        "a second `.observe` line (the first is on line {})",
                        first.line
                    ),
                ));
            }
            let (rest, at) = line.rest(text);
            let mut locs: Vec<Location> = Vec::new();
            let mut offset = 0;
            for piece in rest.split_inclusive(char::is_whitespace) {
                let lead = piece.len() - piece.trim_start().len();
                let item = piece.trim();
                if !item.is_empty() {
                    let loc = parse_location(item)
                        .map_err(|e| err(within(at, offset + lead + e.offset, 0), e.message))?;
                    if locs.contains(&loc) {
                        return Err(err(
                            within(at, offset + lead, item.len()),
                            format!("`{loc}` is observed twice"),
                        ));
                    }
                    locs.push(loc);
                }
                offset += piece.len();
            }
            if locs.is_empty() {
                return Err(err(
                    at,
                    "`.observe` needs at least one location `NAME[INDEX]`".into(),
                ));
            }
            observe = Some((word, locs));
        } else if line.is(".forbidden") || line.is(".allowed") {
            if let Some((first, _, _)) = &verdict {
                return Err(err(
                    word,
                    format!(
                        "a second condition (the first is on line {}); a test has one \
                         `.forbidden` or `.allowed` line",
                        first.line
                    ),
                ));
            }
            let (rest, at) = line.rest(text);
            let cond = parse_cond(rest).map_err(|e| err(within(at, e.offset, 0), e.message))?;
            let kind = if line.is(".forbidden") {
                Verdict::Forbidden
            } else {
                Verdict::Allowed
            };
            verdict = Some((word, kind, cond));
        } else {
            let span = line.span();
            launch_ranges.push(span.start as usize..span.end as usize);
        }
    }
    let line_count = text.lines().count().max(1);
    let at_end = |message: &str| {
        let end = Span {
            start: text.len() as u32,
            end: text.len() as u32,
            line: line_count as u32,
            col: 1,
        };
        err(end, message.into())
    };
    let Some(ptx_start) = ptx_start else {
        return Err(at_end(
            "missing `.ptx` line: the header ends with `.ptx`, followed by the PTX module",
        ));
    };
    let Some((observe_at, observe)) = observe else {
        return Err(at_end("missing `.observe` line before `.ptx`"));
    };
    let Some((cond_at, verdict, condition)) = verdict else {
        return Err(at_end(
            "missing `.forbidden` or `.allowed` condition line before `.ptx`",
        ));
    };
    for loc in condition.locations() {
        if !observe.contains(loc) {
            return Err(err(
                cond_at,
                format!(
                    "the condition reads `{loc}`, which is not in the `.observe` list (line {})",
                    observe_at.line
                ),
            ));
        }
    }
    Ok(LitmusTest {
        observe,
        observe_line: observe_at.line as usize,
        verdict,
        condition,
        launch: blank_except(text, &launch_ranges),
        ptx: blank_except(text, std::slice::from_ref(&(ptx_start..text.len()))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = ".observe out[0] out[1]\n.forbidden out[0] == 1 && out[1] == 0\n.grid 2\n";

    #[test]
    fn parses_header_and_keeps_positions() {
        let text =
            format!("// comment\n{HEADER}.buffer out u32[2] = 0 // trailing\n.ptx\n.version 8.0\n");
        let t = parse("t.litmus", &text).unwrap();
        assert_eq!(t.observe.len(), 2);
        assert_eq!(t.observe_line, 2);
        assert_eq!(t.verdict, Verdict::Forbidden);
        assert_eq!(t.condition.to_string(), "out[0] == 1 && out[1] == 0");
        assert_eq!(t.launch.len(), text.len());
        assert_eq!(t.ptx.len(), text.len());
        assert_eq!(t.launch.lines().nth(3).unwrap().trim(), ".grid 2");
        assert_eq!(t.ptx.lines().nth(6).unwrap(), ".version 8.0");
        assert!(t.ptx.lines().take(6).all(|l| l.trim().is_empty()));
        assert!(!t.launch.contains(".observe") && !t.launch.contains(".version"));
    }

    #[test]
    fn every_header_error_has_its_line() {
        let cases: &[(&str, u32, u32, &str)] = &[
            (
                ".observe out[0]\n.allowed out[0] == 1\n",
                2,
                1,
                "missing `.ptx`",
            ),
            (".allowed out[0] == 1\n.ptx\n", 2, 1, "missing `.observe`"),
            (
                ".observe out[0]\n.ptx\n",
                2,
                1,
                "missing `.forbidden` or `.allowed`",
            ),
            (".observe\n", 1, 9, "at least one location"),
            (".observe out[x]\n", 1, 14, "expected an element index"),
            (".observe out[0] out[0]\n", 1, 17, "observed twice"),
            (
                ".observe a\n.observe b\n",
                2,
                1,
                "a second `.observe` line (the first is on line 1)",
            ),
            (
                ".observe a\n.allowed a == 1\n  .forbidden a == 2\n",
                3,
                3,
                "a second condition",
            ),
            (
                ".observe a\n.forbidden a < 1\n",
                2,
                14,
                "unsupported comparison `<`",
            ),
            (".observe a\n.forbidden (a == 1\n", 2, 19, "expected `)`"),
            (
                ".observe a\n.forbidden b == 1\n.ptx\n",
                2,
                1,
                "reads `b[0]`, which is not in the `.observe` list (line 1)",
            ),
            (
                ".observe a\n.allowed a == 1\n.ptx extra\n",
                3,
                5,
                "stands alone",
            ),
        ];
        for &(text, line, col, needle) in cases {
            let e = parse("t.litmus", text).expect_err(text);
            assert!(e.message.contains(needle), "{text:?}: {e}");
            assert_eq!((e.span.line, e.span.col), (line, col), "{text:?}: {e}");
        }
    }

    #[test]
    fn huge_conditions_are_parsed_or_refused_without_overflowing_the_stack() {
        // 10,000 nested parentheses: an error at the first `(` past the limit.
        let depth = 10_000;
        let text = format!(
            ".observe a\n.allowed {}a == 1{}\n.ptx\n",
            "(".repeat(depth),
            ")".repeat(depth)
        );
        let e = parse("t.litmus", &text).unwrap_err();
        assert_eq!(
            (e.span.line, e.span.col as usize),
            (2, 10 + MAX_NESTING),
            "{e}"
        );
        assert!(e.message.contains("nested too deep"), "{e}");
        // 100,000 comparisons in a chain (1.5 MB on one line) parse, and every location in
        // them is checked against `.observe`.
        let chain = vec!["a == 1"; 100_000].join(" && ");
        let t = parse("t.litmus", &format!(".observe a\n.allowed {chain}\n.ptx\n")).unwrap();
        assert_eq!(t.condition.locations().len(), 100_000);
        let e = parse(
            "t.litmus",
            &format!(".observe a\n.allowed {chain} || b == 2\n.ptx\n"),
        )
        .unwrap_err();
        assert!(e.message.contains("reads `b[0]`"), "{e}");
    }

    #[test]
    fn blanking_keeps_byte_offsets_with_multibyte_text() {
        let text = "// é\n.observe a\n.allowed a == 1\n.ptx\nx\n";
        let t = parse("t.litmus", text).unwrap();
        assert_eq!(t.ptx.len(), text.len());
        assert!(t.ptx.ends_with("\nx\n"));
    }
}
