//! Front-ends: one module per dialect, each turning source text into [`crate::ir::Program`]
//! with a span for every instruction. Nothing outside `front` knows a dialect's syntax.
//!
//! * [`lexer`]: tokens with spans, shared by every dialect.
//! * [`directive`]: the one parser of launch directive lines (`.grid` ... `.expect`), for
//!   program files, launch files and litmus headers.
//! * [`program`]: the dialect-neutral program-file parts (buffers, parameters, expectations,
//!   numbers, the SASS kernel's launch builder) and the string helpers the engine's overrides
//!   use.
//! * [`sass`]: the SASS dialect (Volta–Hopper syntax): program files and whole
//!   `cuobjdump -sass` / `nvdisasm` listings.
//! * [`ptx`]: the PTX dialect (PTX ISA 2.x–8.x as nvcc writes it).
//! * [`launch`]: launch directives from outside the program file (a sidecar file, the command
//!   line), bound to a PTX entry's `.param` list or appended to a SASS kernel's declarations.
//!
//! [`parse`] and [`parse_with_launch`] are the entry points; every bad input is a
//! [`ParseError`], never a panic.

#![deny(clippy::wildcard_enum_match_arm)]

pub mod directive;
pub mod launch;
pub mod lexer;
pub mod program;
pub mod ptx;
pub mod sass;
pub mod visa;

pub use launch::LaunchText;

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
    dialect_by_extension(file_name).unwrap_or(Dialect::Sass)
}

/// The dialect a file name's extension names (case-insensitive): `.ptx` is PTX, `.visa` and
/// `.isa` vISA, `.s` and `.sass` SASS; `None` for any other name.
pub fn dialect_by_extension(file_name: &str) -> Option<Dialect> {
    let ext = std::path::Path::new(file_name)
        .extension()?
        .to_str()?
        .to_ascii_lowercase();
    match ext.as_str() {
        "ptx" => Some(Dialect::Ptx),
        "visa" | "visaasm" | "isa" => Some(Dialect::Visa),
        "s" | "sass" => Some(Dialect::Sass),
        _ => None,
    }
}

/// The dialect of a program: its extension's ([`dialect_by_extension`]), or else, for a name
/// that does not say (`/dev/stdin`, `kernel.txt`), PTX when the text's first directive is
/// `.version` (every PTX module starts so) and SASS otherwise.
pub fn dialect_of(file_name: &str, text: &str) -> Dialect {
    dialect_by_extension(file_name).unwrap_or_else(|| {
        let first = text
            .lines()
            .map(|l| l.split("//").next().unwrap_or("").trim())
            .find(|l| !l.is_empty());
        if first.is_some_and(|l| l.starts_with(".version")) {
            // vISA texts start with `.version` too; they declare variables with `.decl` and
            // name their kernel in quotes.
            let visa = text.lines().any(|l| {
                let l = l.trim_start();
                l.starts_with(".decl ") || l.starts_with(".kernel \"")
            });
            if visa {
                Dialect::Visa
            } else {
                Dialect::Ptx
            }
        } else {
            Dialect::Sass
        }
    })
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

/// Parses a program file in `dialect`. PTX kernels get no launch here (their `.param` lists
/// stay unbound); use [`parse_with_launch`] to run them.
pub fn parse(file_name: &str, source: &str, dialect: Dialect) -> Result<Program, ParseError> {
    match dialect {
        Dialect::Sass => sass::parse_program(file_name, source)
            .map_err(|e| ParseError::from_syntax(file_name, e)),
        Dialect::Ptx => {
            ptx::parse_program(file_name, source).map_err(|e| ParseError::from_syntax(file_name, e))
        }
        Dialect::Visa => Ok(visa::parse_with_launch(file_name, source, &LaunchText::new())?.0),
    }
}

/// A program with launch directives from outside its file applied (see [`parse_with_launch`]).
#[derive(Debug, Clone)]
pub struct Launched {
    pub program: Program,
    /// Per kernel, in program order: `Some(error)` for a PTX entry the launch left *unbound*
    /// (it has parameters and no `.buffer`/`.param` line reached it). It keeps the launch it
    /// was parsed with, and running it is an error; `error` says why, at the kernel in the
    /// program file. `None` for every bound kernel (entries without parameters are trivially
    /// bound; SASS kernels always are).
    pub unbound: Vec<Option<ParseError>>,
    /// Per kernel, in program order: `Some(report)` for a listing's entry with instructions
    /// atomjit cannot lower (every failing form, counted). It is a placeholder kernel (one
    /// `EXIT`) that must not run; the listing's other kernels can.
    pub broken: Vec<Option<sass::Broken>>,
    /// Per kernel, in program order: every construct that keeps a PTX entry from running
    /// (empty for the entries that lowered; see [`ptx::EntryInfo::unsupported`]). Such an
    /// entry is also unbound, with the first of them as the reason.
    pub unsupported: Vec<Vec<ParseError>>,
    /// Per kernel, in program order: a PTX entry's `.param` list (what a launch from code
    /// binds its arguments to, `engine::Signature`); `None` for the other dialects.
    pub entry_params: Vec<Option<Vec<ptx::EntryParam>>>,
}

impl Launched {
    /// Why kernel `index` cannot run, as an error at the kernel: its broken report or its
    /// unbound launch.
    pub fn cannot_run(&self, file_name: &str, index: usize) -> Option<ParseError> {
        if let Some(Some(b)) = self.broken.get(index) {
            let first = b.first_error();
            return Some(ParseError {
                file: file_name.to_string(),
                span: first.span,
                message: b.to_string().trim_end().to_string(),
                expected: None,
            });
        }
        // A PTX entry that cannot run is also unbound, with the message naming it.
        self.unbound.get(index).cloned().flatten()
    }
}

/// A vISA text parsed and launched as [`parse_with_launch`] does, but with every general
/// variable kept in its thread's GRF file: none is promoted to per-lane registers (see
/// `docs/visa.md`, "Performance"). That is the model the promotion must be indistinguishable
/// from, so differential tests run both.
#[doc(hidden)]
pub fn parse_visa_unpromoted(
    file_name: &str,
    source: &str,
    launch: &LaunchText,
) -> Result<Program, ParseError> {
    Ok(visa::parse_with_launch_promoting(file_name, source, launch, false)?.0)
}

/// Parses a program file and applies launch directives from outside it (see [`launch`]): for
/// PTX, the lines that reach an entry (those for every kernel and its own `.kernel` section)
/// bind its `.param` list, exactly one per parameter; an entry no line reaches stays unbound.
/// For SASS they are appended to each kernel's declarations. Errors in a launch source name
/// that source's file.
pub fn parse_with_launch(
    file_name: &str,
    source: &str,
    dialect: Dialect,
    launch: &LaunchText,
) -> Result<Launched, ParseError> {
    let mut broken = Vec::new();
    let (mut program, entries) = match dialect {
        Dialect::Sass => {
            let parsed = sass::parse_file(file_name, source)
                .map_err(|e| ParseError::from_syntax(file_name, e))?;
            broken = parsed.broken;
            (parsed.program, None)
        }
        Dialect::Ptx => {
            let (program, entries) = ptx::parse_module(file_name, source)
                .map_err(|e| ParseError::from_syntax(file_name, e))?;
            (program, Some(entries))
        }
        Dialect::Visa => {
            let (program, unbound) = visa::parse_with_launch(file_name, source, launch)?;
            let n = program.kernels.len();
            return Ok(Launched {
                program,
                unbound,
                broken: vec![None; n],
                unsupported: vec![Vec::new(); n],
                entry_params: vec![None; n],
            });
        }
    };
    let unbound = launch::apply(&mut program, file_name, entries.as_deref(), launch)?;
    broken.resize(program.kernels.len(), None);
    let unsupported = program
        .kernels
        .iter()
        .enumerate()
        .map(|(i, _)| {
            entries
                .as_ref()
                .and_then(|e| e.get(i))
                .map(|info| {
                    info.unsupported
                        .iter()
                        .map(|e| ParseError::from_syntax(file_name, e.clone()))
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let entry_params = (0..program.kernels.len())
        .map(|i| {
            entries
                .as_ref()
                .and_then(|e| e.get(i))
                .map(|info| info.params.clone())
        })
        .collect();
    Ok(Launched {
        program,
        unbound,
        broken,
        unsupported,
        entry_params,
    })
}
