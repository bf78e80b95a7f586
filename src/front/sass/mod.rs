//! The SASS front-end (Volta–Ampere syntax, `000_6d05a8552870c0ae.txt` for ATOMS).
//!
//! A program file is a sequence of statements. A statement ends at `;` or at the end of the
//! line (SASS listings always write the `;`, but a missing one at the end of a line is
//! accepted). Statements are:
//!
//! * directives (`.kernel NAME`, and the launch directives of [`crate::front::program`]),
//!   which run to the end of the line;
//! * labels `name:` (also `.L_x_0:`), which may precede an instruction on the same line;
//! * instructions: `{@{!}Pg} MNEMONIC{.mod...} operands {annotations} ;`, optionally preceded
//!   by a cuobjdump address prefix `/*0040*/` (so `BRA 0x40` can resolve) and followed by an
//!   encoding comment `/* 0x... */` (ignored).
//!
//! `.kernel NAME` starts a kernel; the directives and instructions after it belong to it, and
//! an `.expect` may come after the code. If a file has instructions but no `.kernel`, it is one
//! kernel named `main`; if it has a `.kernel`, nothing but comments may precede the first one.
//!
//! A kernel is lowered once it is complete, so labels and parameter names may be used before
//! they are declared. Its `num_regs` is one more than the highest register slot any
//! instruction reads or writes (both words of 64-bit pairs count; RZ does not) and
//! `num_preds` one more than the highest predicate (PT does not count).

mod broken;
mod calls;
mod elf;
mod listing;
mod operands;
mod ops;
mod rcp_seed;
mod split;
#[cfg(test)]
#[allow(clippy::wildcard_enum_match_arm)] // a test matches the variant it expects
mod tests;
mod unemulated;

use super::directive::{is_launch_directive, LAUNCH_DIRECTIVES};
use super::lexer::{end_of, join, lex_program, SyntaxError, TokKind, Token};
use super::program::{is_identifier, LaunchBuilder};
use crate::ir::{Dialect, Inst, Kernel, Program, Span};
use std::collections::HashMap;

pub use broken::{Broken, FormCount};
pub use ops::MNEMONICS;
pub use unemulated::UNEMULATED;

/// One statement's tokens (without `;` and newline) and the address prefix before it. The
/// tokens are borrowed from the file's (a copy would double the memory of a file that is one
/// huge statement, such as a 10M-value initialiser list), unless an address prefix in the
/// middle of the statement had to be left out.
struct Statement<'t, 'a> {
    toks: std::borrow::Cow<'t, [Token<'a>]>,
    address: Option<u64>,
}

/// An instruction waiting for its kernel to be complete.
struct PendingInst<'s, 'a> {
    toks: &'s [Token<'a>],
    address: Option<u64>,
}

struct KernelDraft<'s, 'a> {
    name: String,
    span: Span,
    launch: LaunchBuilder,
    labels: Vec<(String, u32, Span)>,
    /// Label name to where it is defined (the duplicate check).
    label_at: HashMap<&'a str, Span>,
    insts: Vec<PendingInst<'s, 'a>>,
    /// Listings: whether the function is a kernel entry (a non-entry function is only a call
    /// target), and the labels that start a function of their own (`.type NAME,@function`).
    entry: bool,
    function_labels: Vec<String>,
    /// Listings: the constant banks the listing prints but whose bytes it does not fix (a
    /// relocation), with the reason a read of one is refused.
    unknown_banks: Vec<(u8, String)>,
}

impl KernelDraft<'_, '_> {
    fn new(name: String, span: Span) -> Self {
        KernelDraft {
            name,
            span,
            launch: LaunchBuilder::new(),
            labels: Vec::new(),
            label_at: HashMap::new(),
            insts: Vec::new(),
            entry: true,
            function_labels: Vec::new(),
            unknown_banks: Vec::new(),
        }
    }
}

/// The kernels read so far, and where each name was declared (the duplicate check).
struct Drafts<'s, 'a> {
    list: Vec<KernelDraft<'s, 'a>>,
    declared_at: HashMap<&'a str, Span>,
}

/// Parses a SASS program file.
pub fn parse_program(file_name: &str, source: &str) -> Result<Program, SyntaxError> {
    let parsed = parse_file(file_name, source)?;
    // A program file stops at its first error; a listing's broken entries are reported whole.
    if let Some(Some(broken)) = parsed.broken.into_iter().find(Option::is_some) {
        return Err(broken.first_error());
    }
    Ok(parsed.program)
}

/// A SASS file parsed: the program, and per kernel (in program order) what keeps it from
/// running, if anything (see [`Broken`]).
pub struct ParsedFile {
    pub program: Program,
    pub broken: Vec<Option<Broken>>,
}

/// Parses a SASS file: a program file, or a whole `cuobjdump [-elf] -sass` / `nvdisasm` listing
/// (`listing.rs`). In a listing, an entry with instructions atomjit cannot lower does not stop
/// the others: it gets a placeholder kernel (one `EXIT`) and a [`Broken`] report.
pub fn parse_file(file_name: &str, source: &str) -> Result<ParsedFile, SyntaxError> {
    // `cuobjdump -elf -sass`: the ELF dump before the SASS is not SASS text (`elf`).
    let (blanked, sections) = match elf::read(source)? {
        Some(dump) => (Some(dump.lexable), Some(dump.sections)),
        None => (None, None),
    };
    let lexed = blanked.as_deref().unwrap_or(source);
    let toks = lex_program(lexed)?;
    let statements = split_statements(&toks);
    if let Some(sections) = sections {
        return listing::parse(file_name, source, lexed, &statements, sections);
    }
    if listing::is_listing(&statements) {
        return listing::parse(file_name, source, source, &statements, Vec::new());
    }
    let has_kernel_directive = statements.iter().any(|s| {
        s.toks
            .first()
            .is_some_and(|t| t.is_word() && t.text.eq_ignore_ascii_case(".kernel"))
    });

    let mut drafts = Drafts {
        list: Vec::new(),
        declared_at: HashMap::new(),
    };
    for stmt in &statements {
        if let Some(hash) = stmt.toks.iter().find(|t| t.is_punct("#")) {
            return Err(SyntaxError::new(
                hash.span,
                "`#` starts a comment only after a statement's `;`",
            )
            .expected("`//` or `/* */` for comments"));
        }
        let mut toks: &[Token] = &stmt.toks;
        // Labels.
        while toks.len() >= 2 && toks[0].is_word() && toks[1].is_punct(":") {
            let label = toks[0];
            let draft = current(
                &mut drafts.list,
                has_kernel_directive,
                label.span,
                "a label",
            )?;
            if label.text.starts_with(|c: char| c.is_ascii_digit()) {
                return Err(SyntaxError::new(
                    label.span,
                    format!("`{}` is not a valid label name", label.text),
                )
                .expected("a name such as `loop` or `.L_x_0`"));
            }
            if let Some(prev) = draft.label_at.get(label.text) {
                return Err(SyntaxError::new(
                    label.span,
                    format!(
                        "duplicate label `{}` (first defined on line {})",
                        label.text, prev.line
                    ),
                )
                .expected("a new label name"));
            }
            let pc = draft.insts.len() as u32;
            draft.label_at.insert(label.text, label.span);
            draft.labels.push((label.text.to_string(), pc, label.span));
            toks = &toks[2..];
        }
        let Some(first) = toks.first() else { continue };
        if listing::is_terminator(toks) {
            // The `..........` that ends a pasted cuobjdump function.
            continue;
        }
        if first.is_word() && first.text.eq_ignore_ascii_case(".headerflags") {
            // A pasted cuobjdump header: its architecture decides the constant-bank layout.
            let layout = listing::headerflags_layout(toks)?;
            let draft = current(
                &mut drafts.list,
                has_kernel_directive,
                first.span,
                "`.headerflags`",
            )?;
            if let Some(layout) = layout {
                draft.launch.set_layout(layout);
            }
            continue;
        }
        if first.is_word() && first.text.starts_with('.') {
            directive(&mut drafts, has_kernel_directive, toks, source)?;
        } else {
            let draft = current(
                &mut drafts.list,
                has_kernel_directive,
                first.span,
                "an instruction",
            )?;
            draft.insts.push(PendingInst {
                toks,
                address: stmt.address,
            });
        }
    }
    let drafts = drafts.list;
    if drafts.is_empty() {
        let span = Span {
            start: 0,
            end: 0,
            line: 1,
            col: 1,
        };
        return Err(SyntaxError::new(
            span,
            "the file has no kernel: no `.kernel` and no instructions",
        )
        .expected("`.kernel NAME` or an instruction"));
    }
    let mut kernels = Vec::with_capacity(drafts.len());
    let mut broken = Vec::with_capacity(drafts.len());
    for index in 0..drafts.len() {
        let (kernel, errors) = finish_kernel(&drafts, index, source)?;
        // A program file stops at its first error (only a listing's kernels are reported
        // whole).
        if let Some(b) = errors {
            return Err(b.first_error());
        }
        broken.push(None);
        kernels.push(kernel);
    }
    Ok(ParsedFile {
        program: Program {
            source_name: file_name.to_string(),
            source: source.to_string(),
            kernels,
        },
        broken,
    })
}

/// Cuts tokens into statements at `;` and newlines; an address prefix at the start of a
/// statement is kept, anywhere else it is an ordinary comment.
fn split_statements<'t, 'a>(toks: &'t [Token<'a>]) -> Vec<Statement<'t, 'a>> {
    use std::borrow::Cow;
    let mut out = Vec::new();
    // The current statement is `toks[begin..]` up to the token at hand, or `copy` once an
    // address prefix inside it was left out.
    let mut begin = 0;
    let mut copy: Option<Vec<Token<'a>>> = None;
    let mut address = None;
    for (i, t) in toks.iter().enumerate() {
        let end_of_statement = match t.kind {
            TokKind::Newline => Some(false),
            TokKind::Punct if t.text == ";" => Some(true),
            TokKind::Address => {
                if i == begin {
                    address = u64::from_str_radix(t.text, 16).ok();
                    begin = i + 1;
                } else {
                    copy.get_or_insert_with(|| toks[begin..i].to_vec());
                }
                None
            }
            TokKind::Word | TokKind::Punct | TokKind::List => {
                if let Some(copy) = &mut copy {
                    copy.push(*t);
                }
                None
            }
        };
        if let Some(semicolon) = end_of_statement {
            // A newline ends a statement that has tokens; `;` ends even an empty one.
            if semicolon || i > begin {
                let toks = match copy.take() {
                    Some(copy) => Cow::Owned(copy),
                    None => Cow::Borrowed(&toks[begin..i]),
                };
                out.push(Statement { toks, address });
            }
            copy = None;
            begin = i + 1;
            address = None;
        }
    }
    if begin < toks.len() {
        let toks = match copy.take() {
            Some(copy) => Cow::Owned(copy),
            None => Cow::Borrowed(&toks[begin..]),
        };
        out.push(Statement { toks, address });
    }
    out
}

/// The kernel that statements currently go to, starting the implicit `main` when the file has
/// no `.kernel` at all.
fn current<'d, 's, 'a>(
    drafts: &'d mut Vec<KernelDraft<'s, 'a>>,
    has_kernel_directive: bool,
    at: Span,
    what: &str,
) -> Result<&'d mut KernelDraft<'s, 'a>, SyntaxError> {
    if drafts.is_empty() {
        if has_kernel_directive {
            return Err(SyntaxError::new(at, format!("{what} before the first `.kernel`"))
                .expected("`.kernel NAME` first (or no `.kernel` at all for a single kernel named `main`)"));
        }
        drafts.push(KernelDraft::new("main".to_string(), at));
    }
    let n = drafts.len();
    Ok(&mut drafts[n - 1])
}

fn directive<'s, 'a>(
    drafts: &mut Drafts<'s, 'a>,
    has_kernel_directive: bool,
    toks: &'s [Token<'a>],
    source: &str,
) -> Result<(), SyntaxError> {
    let d = toks[0];
    if d.text.eq_ignore_ascii_case(".kernel") {
        let Some(name) = toks.get(1) else {
            return Err(SyntaxError::new(end_of(d.span), "`.kernel` needs a name")
                .expected("a kernel name"));
        };
        if !name.is_word() || !(is_identifier(name.text) || name.text.starts_with('$')) {
            return Err(SyntaxError::new(
                name.span,
                format!("`{}` is not a valid kernel name", name.text),
            )
            .expected("a name (letters, digits, `_`)"));
        }
        if let Some(extra) = toks.get(2) {
            return Err(SyntaxError::new(
                extra.span,
                format!("unexpected {} after the kernel name", extra.describe()),
            )
            .expected("end of line"));
        }
        if let Some(prev) = drafts.declared_at.get(name.text) {
            return Err(SyntaxError::new(
                name.span,
                format!(
                    "duplicate kernel `{}` (first declared on line {})",
                    name.text, prev.line
                ),
            )
            .expected("a new kernel name"));
        }
        let span = join(d.span, name.span);
        drafts.declared_at.insert(name.text, span);
        drafts
            .list
            .push(KernelDraft::new(name.text.to_string(), span));
        return Ok(());
    }
    if !is_launch_directive(d.text) {
        return Err(
            SyntaxError::new(d.span, format!("unknown directive `{}`", d.text))
                .expected(format!("one of .kernel {}", LAUNCH_DIRECTIVES.join(" "))),
        );
    }
    let draft = current(
        &mut drafts.list,
        has_kernel_directive,
        d.span,
        &format!("`{}`", d.text),
    )?;
    draft.launch.apply(&d, &toks[1..], source)
}

/// Lowers function `index` of `drafts` into a kernel, with the subroutines it calls inlined
/// ([`calls`]). An error in the kernel's launch directives is an error of the file; errors in
/// instructions are collected: the kernel is then a placeholder and the [`Broken`] report says
/// why.
fn finish_kernel(
    drafts: &[KernelDraft],
    index: usize,
    source: &str,
) -> Result<(Kernel, Option<Broken>), SyntaxError> {
    let draft = &drafts[index];
    if draft.insts.is_empty() {
        return Err(SyntaxError::new(
            draft.span,
            format!("kernel `{}` has no instructions", draft.name),
        )
        .expected("at least one instruction (e.g. `EXIT ;`)"));
    }
    let launch = draft.launch.clone().finish()?;
    // Uniform registers go after every vector register and predicate any function of the
    // file names (inlined subroutines included).
    let uniform = operands::UniformBase::after(
        drafts
            .iter()
            .flat_map(|d| d.insts.iter())
            .flat_map(|i| i.toks.iter())
            .filter(|t| t.is_word())
            .map(|t| t.text),
    );
    let params = operands::Params::new(&launch.params, uniform)
        .with_banks(&launch.const_banks, &draft.unknown_banks);
    let mut lowered = calls::lower_kernel(drafts, index, &params, source);
    for e in split::resolve(&mut lowered.insts) {
        lowered.errors.push(("WARPSYNC.EXCLUSIVE".to_string(), e));
        lowered.errors.sort_by_key(|(_, e)| e.span.start);
    }
    if !lowered.errors.is_empty() {
        return Ok(broken_kernel(draft, launch, lowered.errors));
    }
    let insts = lowered.insts;
    let labels = lowered.labels;
    let (num_regs, num_preds) = crate::ir::register_counts(&insts);
    // The uniform file exists if any instruction names a uniform register or predicate.
    let uses_uniform = num_regs > u32::from(uniform.reg) || num_preds > u32::from(uniform.pred);
    let kernel = Kernel {
        name: draft.name.clone(),
        dialect: Dialect::Sass,
        warp_size: 32,
        insts,
        labels,
        num_regs,
        num_preds,
        uniform: if uses_uniform {
            uniform.ranges()
        } else {
            Default::default()
        },
        launch,
        span: draft.span,
    };
    // `MUFU.RCP` is exact only as the seed of ptxas's integer division.
    let errors = rcp_seed::check(&kernel);
    if !errors.is_empty() {
        return Ok(broken_kernel(draft, kernel.launch, errors));
    }
    Ok((kernel, None))
}

/// The placeholder of a kernel whose instructions did not all lower (one `EXIT`), and the
/// report of why.
fn broken_kernel(
    draft: &KernelDraft,
    launch: crate::ir::LaunchSpec,
    errors: Vec<(String, SyntaxError)>,
) -> (Kernel, Option<Broken>) {
    let broken = Broken::new(&draft.name, draft.span, errors);
    let exit = Inst {
        op: crate::ir::Op::Exit,
        guard: crate::ir::Guard::ALWAYS,
        span: draft.span,
        text: "EXIT".to_string(),
        sched: Vec::new(),
    };
    let kernel = Kernel {
        name: draft.name.clone(),
        dialect: Dialect::Sass,
        warp_size: 32,
        insts: vec![exit],
        labels: Vec::new(),
        num_regs: 0,
        num_preds: 0,
        uniform: Default::default(),
        launch,
        span: draft.span,
    };
    (kernel, Some(broken))
}

/// One instruction of a kernel as lowered: the op, or why it could not be.
fn lower_one(toks: &[Token], ctx: &ops::Ctx, source: &str) -> Result<Inst, SyntaxError> {
    if let Some(feature) = unemulated::check(toks) {
        return Err(feature);
    }
    let lowered = ops::lower(toks, ctx)?;
    let span = join(toks[0].span, toks[toks.len() - 1].span);
    let text = source
        .get(span.start as usize..span.end as usize)
        .unwrap_or("")
        .to_string();
    Ok(Inst {
        op: lowered.op,
        guard: lowered.guard,
        span,
        text,
        sched: lowered.sched,
    })
}
