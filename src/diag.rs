//! Rendering of parse and validation errors as source diagnostics (file:line:col, the line, a
//! caret under the offending text, what was expected, which rule was broken). Errors are plain
//! values everywhere else; rendering happens once, at the edge (the command line).

use crate::front::ParseError;
use crate::ir::Span;
use crate::valid::ValidationErrors;
use codespan_reporting::diagnostic::{Diagnostic, Label};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor::NoColor};

fn render(file: &str, source: &str, diags: &[Diagnostic<()>]) -> String {
    let files = SimpleFile::new(file, source);
    let mut out = NoColor::new(Vec::new());
    let config = term::Config::default();
    for d in diags {
        if term::emit(&mut out, &config, &files, d).is_err() {
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
        label = label.with_message(format!("expected {expected}"));
    }
    let d = Diagnostic::error()
        .with_message(format!(
            "{} (at {}:{}:{})",
            e.message, e.file, e.span.line, e.span.col
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
                    e.span.line, e.span.col, e.message
                ))
                .with_labels(vec![Label::primary((), range(e.span, source))])
                .with_notes(vec![format!("rule: {}", e.rule)])
        })
        .collect();
    render(file, source, &diags)
}
