//! Why a listing's kernel cannot run: every instruction atomjit could not lower, grouped by
//! form (the mnemonic with its modifiers, `ATOMS.POPC.INC.32`), with a count and the first
//! place and message of each. `atomjit check` prints the whole report; running the kernel is
//! an error that names the entry and its forms.

use super::super::lexer::SyntaxError;
use crate::ir::Span;
use std::fmt;

/// One unsupported instruction form of a kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormCount {
    /// The mnemonic with its modifiers, as written (upper case).
    pub form: String,
    /// How many instructions of the kernel have this form and failed.
    pub count: usize,
    /// The first of them: where, and why.
    pub first: SyntaxError,
}

/// A kernel whose instructions did not all lower.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The kernel (entry) name.
    pub kernel: String,
    /// Where the kernel starts.
    pub span: Span,
    /// The failing forms, in order of first appearance.
    pub forms: Vec<FormCount>,
    /// Every error, in source order.
    pub errors: Vec<SyntaxError>,
}

impl Broken {
    /// Groups `errors` (each with the form of the instruction it is about) by form.
    pub fn new(kernel: &str, span: Span, errors: Vec<(String, SyntaxError)>) -> Broken {
        let mut forms: Vec<FormCount> = Vec::new();
        for (form, e) in &errors {
            match forms.iter_mut().find(|f| &f.form == form) {
                Some(f) => f.count += 1,
                None => forms.push(FormCount {
                    form: form.clone(),
                    count: 1,
                    first: e.clone(),
                }),
            }
        }
        Broken {
            kernel: kernel.to_string(),
            span,
            forms,
            errors: errors.into_iter().map(|(_, e)| e).collect(),
        }
    }

    /// The first error in source order (a program file reports only that one).
    pub fn first_error(&self) -> SyntaxError {
        self.errors
            .iter()
            .min_by_key(|e| e.span.start)
            .cloned()
            .unwrap_or_else(|| SyntaxError::new(self.span, self.summary()))
    }

    /// Instructions that failed, over all forms.
    pub fn instructions(&self) -> usize {
        self.forms.iter().map(|f| f.count).sum()
    }

    /// One line: the kernel, how many instructions and forms, and the forms with counts.
    pub fn summary(&self) -> String {
        let forms: Vec<String> = self
            .forms
            .iter()
            .map(|f| format!("{} ×{}", f.form, f.count))
            .collect();
        format!(
            "kernel `{}` cannot run: {} instruction{} in {} unsupported form{}: {}",
            self.kernel,
            self.instructions(),
            if self.instructions() == 1 { "" } else { "s" },
            self.forms.len(),
            if self.forms.len() == 1 { "" } else { "s" },
            forms.join(", ")
        )
    }
}

impl fmt::Display for Broken {
    /// The summary, then one line per form: count, form, first line:column and message.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.summary())?;
        for form in &self.forms {
            write!(
                f,
                "  {:>5}  {:<32} first at {}:{}: {}",
                form.count,
                form.form,
                form.first.span.line,
                form.first.span.col,
                form.first.message
            )?;
            if let Some(e) = &form.first.expected {
                write!(f, " (expected {e})")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}
