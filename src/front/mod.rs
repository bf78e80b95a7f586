//! Front-ends: one module per dialect, each turning source text into [`crate::ir::Program`]
//! with a span for every instruction. Nothing outside `front` knows a dialect's syntax.
//!
//! * [`lexer`]: tokens with spans, shared by every dialect.
//! * [`program`]: the dialect-neutral program-file parts (launch directives, buffers,
//!   parameters, expectations, numbers) and the string helpers the command line uses.
//! * [`sass`]: the SASS dialect (Volta–Ampere syntax).
//!
//! [`parse`] is the entry point; every bad input is a [`ParseError`], never a panic.

pub mod lexer;
pub mod program;
pub mod sass;

use crate::ir::{Dialect, Program, Span};
use std::fmt;

/// A syntax error: where, what was found, what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub file: String,
    pub span: Span,
    pub message: String,
    /// What would have been accepted here, if that can be said.
    pub expected: Option<String>,
}

impl std::error::Error for ParseError {}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.file, self.span.line, self.span.col, self.message
        )?;
        if let Some(e) = &self.expected {
            write!(f, " (expected {e})")?;
        }
        Ok(())
    }
}

/// The dialect a file name implies: `.ptx` is PTX, `.visa`/`.isa` is vISA, anything else SASS.
pub fn dialect_for(file_name: &str) -> Dialect {
    if file_name.ends_with(".ptx") {
        Dialect::Ptx
    } else if file_name.ends_with(".visa") || file_name.ends_with(".isa") {
        Dialect::Visa
    } else {
        Dialect::Sass
    }
}

impl ParseError {
    /// Attaches the file name to a syntax error.
    pub fn from_syntax(file_name: &str, e: lexer::SyntaxError) -> ParseError {
        ParseError {
            file: file_name.to_string(),
            span: e.span,
            message: e.message,
            expected: e.expected,
        }
    }
}

/// Parses a program file in `dialect`.
pub fn parse(file_name: &str, source: &str, dialect: Dialect) -> Result<Program, ParseError> {
    match dialect {
        Dialect::Sass => sass::parse_program(file_name, source)
            .map_err(|e| ParseError::from_syntax(file_name, e)),
        Dialect::Ptx | Dialect::Visa => Err(ParseError {
            file: file_name.to_string(),
            span: Span {
                start: 0,
                end: 0,
                line: 1,
                col: 1,
            },
            message: format!("the {dialect:?} dialect is not supported yet"),
            expected: Some(
                "a SASS program (any file name not ending in .ptx, .visa or .isa)".into(),
            ),
        }),
    }
}
