//! Rendering of parse and validation errors as source diagnostics (file:line:col, the line, a
//! caret under the offending text, what was expected, which rule was broken). Errors are plain
//! values everywhere else; rendering happens once, at the edge (the command line).

use crate::front::ParseError;
use crate::ir::Span;
use crate::valid::ValidationErrors;
use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor::NoColor};

/// The most bytes of a source line a diagnostic shows, and of its message: a program's line
/// can be megabytes long, and echoing it (or a token of it) would flood the terminal.
const MAX_SHOWN: usize = 240;

fn render(file: &str, source: &str, diags: &[Diagnostic<()>]) -> String {
    let mut out = NoColor::new(Vec::new());
    let config = term::Config::default();
    for d in diags {
        let mut d = d.clone();
        // A label on a long line is shown on an excerpt of that line, at the same line number
        // (the message says the real column).
        let excerpt = d
            .labels
            .first()
            .and_then(|l| excerpt(source, l.range.clone()));
        let emitted = match &excerpt {
            Some((text, range, from_col)) => {
                d.labels[0].range = range.clone();
                d.labels.truncate(1);
                let name = format!("{file} (an excerpt from column {from_col})");
                term::emit(&mut out, &config, &SimpleFile::new(name, text.as_str()), &d)
            }
            None => term::emit(&mut out, &config, &SimpleFile::new(file, source), &d),
        };
        if emitted.is_err() {
            // The span did not fit the source (it cannot, short of a front-end bug): fall back
            // to the message alone rather than lose the error.
            return diags
                .iter()
                .map(|d| format!("error: {}\n", d.message))
                .collect();
        }
    }
    String::from_utf8_lossy(&out.into_inner()).into_owned()
}

/// `text` cut to at most about `max` bytes (on a character boundary), marked with `…`.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// For a label whose line is longer than [`MAX_SHOWN`]: a stand-in source holding as many empty
/// lines as come before it (so the line number is right) and a window of the line around the
/// label, the label's range in it, and the (byte) column the window starts at; `None` for a
/// short line.
fn excerpt(
    source: &str,
    range: std::ops::Range<usize>,
) -> Option<(String, std::ops::Range<usize>, usize)> {
    let mut start = range.start.min(source.len());
    while !source.is_char_boundary(start) {
        start -= 1;
    }
    let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = source[start..]
        .find('\n')
        .map_or(source.len(), |i| start + i);
    if line_end - line_start <= MAX_SHOWN {
        return None;
    }
    let floor = |mut i: usize| {
        while !source.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let from = floor(start.saturating_sub(MAX_SHOWN / 3).max(line_start));
    let to = floor((from + MAX_SHOWN).min(line_end));
    let newlines = source[..line_start].bytes().filter(|&b| b == b'\n').count();
    let mut text = "\n".repeat(newlines);
    if from > line_start {
        text.push('…');
    }
    let label_start = text.len() + (start - from);
    text.push_str(&source[from..to]);
    if to < line_end {
        text.push('…');
    }
    let end = range.end.clamp(start, to);
    // The column (in characters, as messages count) of the excerpt's first character: the
    // `…` that marks a cut takes the column before the text it precedes.
    let from_col = source[line_start..from].chars().count() + usize::from(from == line_start);
    Some((text, label_start..label_start + (end - start), from_col))
}

/// The byte range of a span, clamped to the source so rendering never fails.
fn range(span: Span, source: &str) -> std::ops::Range<usize> {
    let start = (span.start as usize).min(source.len());
    let end = (span.end as usize).clamp(start, source.len());
    start..end
}

/// A parse error as a diagnostic with the offending line and a caret.
pub fn render_parse_error(source: &str, e: &ParseError) -> String {
    let mut label = Label::primary((), range(e.span, source));
    if let Some(expected) = &e.expected {
        label = label.with_message(format!("expected {}", clip(expected, 4 * MAX_SHOWN)));
    }
    let d = Diagnostic::error()
        .with_message(format!(
            "{} (at {}:{}:{})",
            clip(&e.message, MAX_SHOWN),
            e.file,
            e.span.line,
            e.span.col
        ))
        .with_labels(vec![label]);
    render(&e.file, source, &[d])
}

/// Every broken validation rule as a diagnostic, with the rule quoted as a note.
pub fn render_validation_errors(
    file: &str,
    source: &str,
    kernel: &str,
    errors: &ValidationErrors,
) -> String {
    let diags: Vec<_> = errors
        .0
        .iter()
        .map(|e| {
            Diagnostic::error()
                .with_message(format!(
                    "invalid kernel `{kernel}` at {file}:{}:{}: {}",
                    e.span.line,
                    e.span.col,
                    clip(&e.message, MAX_SHOWN)
                ))
                .with_labels(vec![Label::primary((), range(e.span, source))])
                .with_notes(vec![format!("rule: {}", e.rule)])
        })
        .collect();
    render(file, source, &diags)
}
