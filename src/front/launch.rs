//! Launch directives given outside a program file: a sidecar file (`--launch FILE`, or
//! `NAME.launch` next to `NAME.ptx`) and command-line lines (`--buffer`, `--param`).
//!
//! A [`LaunchText`] is a list of sources, each in the directive syntax of program files
//! ([`crate::front::program`]), one directive per line:
//!
//! ```text
//! .kernel hist                     // optional: the directives below apply to `hist` only
//! .grid 16
//! .block 256
//! .shared 0                        // PTX: dynamic shared bytes; SASS: the window size
//! .buffer data u32[4096] = random(7, 0, 256)
//! .buffer hist u32[256] = 0
//! .param n u32 = 4096
//! .expect sum(hist) == 4096
//! ```
//!
//! Directives before any `.kernel` line apply to every kernel of the program. Sources apply in
//! order, so command-line lines come after the sidecar's.
//!
//! # How they apply
//!
//! * `.grid`, `.block` replace the kernel's shape (at most once per kernel across all sources).
//! * `.shared N`: for SASS the window size; for PTX the *dynamic* shared memory, added after the
//!   kernel's static `.shared` variables (CUDA's launch parameter).
//! * `.buffer` / `.param` are appended to the kernel's declarations. For **PTX** they *bind the
//!   entry's `.param` list in order*: there must be exactly one per parameter; a buffer binds to
//!   an 8-byte integer parameter (a `.u64` pointer) and a scalar must have its parameter's size.
//!   Names are the launch's own (expectations use them). For **SASS** they are appended after
//!   the file's own declarations (constant-bank offsets continue after them).
//! * `.expect` lines are appended and checked against all buffers.
//!
//! Lines given for one kernel bind that kernel only: a PTX entry with parameters that no
//! `.buffer`/`.param` line reaches is left **unbound** rather than refused. It keeps the launch
//! it was parsed with, [`crate::front::parse_with_launch`] returns why it cannot run (the error
//! a count mismatch would give, at the kernel), and the engine reports that error if it is run
//! ([`crate::engine::Module::unbound`]). Entries without parameters are trivially bound.
//!
//! Each line is parsed by [`crate::front::directive::parse`]; this module's policy is the
//! sections, the duplicate check across sources, the dynamic shared offset and the binding.

use super::directive::{self, Directive, Line, LAUNCH_DIRECTIVES};
use super::lexer::{lex_program, SyntaxError, Token};
use super::program::{assign_cbank_offsets, check_expect_in, check_shared, ByName};
use super::ptx::{EntryInfo, EntryParam};
use super::ParseError;
use crate::ir::{Kernel, ParamDecl, ParamKind, Program, Span, Ty, SHARED_WINDOW_BYTES};
use std::collections::{HashMap, HashSet};

/// One source of launch directives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSource {
    /// The file name (or `command line`), for errors.
    pub name: String,
    pub text: String,
}

/// Launch directives from outside the program file, applied in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchText {
    pub sources: Vec<LaunchSource>,
}

impl LaunchText {
    pub fn new() -> LaunchText {
        LaunchText::default()
    }

    /// Adds a source of directives (a sidecar's text, or command-line lines).
    pub fn push(&mut self, name: &str, text: &str) -> &mut Self {
        self.sources.push(LaunchSource {
            name: name.to_string(),
            text: text.to_string(),
        });
        self
    }

    /// The text of the source called `name` (to render an error that points into it).
    pub fn source_text(&self, name: &str) -> Option<&str> {
        self.sources
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.text.as_str())
    }

    /// True when there are no directives at all.
    pub fn is_empty(&self) -> bool {
        self.sources.iter().all(|s| s.text.trim().is_empty())
    }
}

/// One directive line of a source, with the `.kernel` section it is in.
struct SectionLine<'a> {
    source: usize,
    /// The `.kernel` section it is in (`None`: every kernel).
    kernel: Option<String>,
    line: Line<'a>,
}

/// The directives a launch file accepts, as an error lists them.
fn launch_file_directives() -> String {
    format!(".kernel {}", LAUNCH_DIRECTIVES.join(" "))
}

fn err(file: &str, span: Span, message: String) -> ParseError {
    ParseError {
        file: file.to_string(),
        span,
        message,
        expected: None,
    }
}

fn lift(file: &str, e: SyntaxError) -> ParseError {
    ParseError::from_syntax(file, e)
}

/// What the front-end knows about a kernel's parameters, for binding.
pub(crate) enum KernelParams<'e> {
    /// SASS: the file declares its own buffers and parameters; launch lines append.
    Declared,
    /// PTX: the entry's `.param` list, which launch lines bind in order.
    Entry(&'e EntryInfo),
}

/// Applies `launch` to every kernel of `program` (`file_name` names the program file, for
/// errors about a kernel as a whole). Returns, per kernel in program order, `Some(error)` for a
/// PTX entry left unbound: it has parameters and no `.buffer`/`.param` line reached it, so it
/// keeps the launch it was parsed with and cannot run (the error says why).
pub(crate) fn apply(
    program: &mut Program,
    file_name: &str,
    entries: Option<&[EntryInfo]>,
    launch: &LaunchText,
) -> Result<Vec<Option<ParseError>>, ParseError> {
    let lexed: Vec<Vec<Token>> = launch
        .sources
        .iter()
        .map(|s| lex_program(&s.text).map_err(|e| lift(&s.name, e)))
        .collect::<Result<_, _>>()?;
    let mut directives = Vec::new();
    for (i, toks) in lexed.iter().enumerate() {
        split_sections(i, &launch.sources[i], toks, &mut directives)?;
    }
    let kernel_names: HashSet<&str> = program.kernels.iter().map(|k| k.name.as_str()).collect();
    // Directive indices: those for every kernel, and those of each `.kernel NAME` section.
    let mut for_all: Vec<usize> = Vec::new();
    let mut by_kernel: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, d) in directives.iter().enumerate() {
        match &d.kernel {
            None => for_all.push(i),
            Some(k) => by_kernel.entry(k.as_str()).or_default().push(i),
        }
    }
    for d in &directives {
        if let Some(k) = &d.kernel {
            if !kernel_names.contains(k.as_str()) {
                let names: Vec<&str> = program.kernels.iter().map(|k| k.name.as_str()).collect();
                return Err(ParseError {
                    expected: Some(format!("one of {}", names.join(" "))),
                    ..err(
                        &launch.sources[d.source].name,
                        d.line.word.span,
                        format!("the program has no kernel `{k}`"),
                    )
                });
            }
        }
    }
    let mut unbound = Vec::with_capacity(program.kernels.len());
    for (index, kernel) in program.kernels.iter_mut().enumerate() {
        let params = match entries {
            Some(infos) => match infos.get(index) {
                Some(info) => KernelParams::Entry(info),
                None => KernelParams::Declared,
            },
            None => KernelParams::Declared,
        };
        // The directives for every kernel and this kernel's own, in their order.
        let own = by_kernel
            .get(kernel.name.as_str())
            .map_or(&[][..], Vec::as_slice);
        let mut mine: Vec<&SectionLine> = Vec::with_capacity(for_all.len() + own.len());
        let (mut a, mut b) = (0, 0);
        while a < for_all.len() || b < own.len() {
            let take_all = b == own.len() || (a < for_all.len() && for_all[a] < own[b]);
            if take_all {
                mine.push(&directives[for_all[a]]);
                a += 1;
            } else {
                mine.push(&directives[own[b]]);
                b += 1;
            }
        }
        if let KernelParams::Entry(info) = &params {
            if let Some(first) = info.unsupported.first() {
                unbound.push(Some(unsupported_entry(file_name, info, first)));
                continue;
            }
        }
        unbound.push(apply_to_kernel(kernel, file_name, &params, &mine, launch)?);
    }
    Ok(unbound)
}

/// The error of running a PTX entry that did not lower: it names the entry and the first
/// construct, at that construct.
pub(crate) fn unsupported_entry(
    file_name: &str,
    info: &EntryInfo,
    first: &super::lexer::SyntaxError,
) -> ParseError {
    let more = info.unsupported.len() - 1;
    ParseError {
        file: file_name.to_string(),
        span: first.span,
        message: format!(
            "entry `{}` cannot run: {}{}",
            info.name,
            first.message,
            if more == 0 {
                String::new()
            } else {
                format!(
                    " (and {more} more unsupported construct{}; `atomjit check` lists them)",
                    if more == 1 { "" } else { "s" }
                )
            }
        ),
        expected: first.expected.clone(),
    }
}

/// Cuts one source into directive lines, tracking `.kernel` sections.
fn split_sections<'a>(
    source: usize,
    src: &LaunchSource,
    toks: &[Token<'a>],
    out: &mut Vec<SectionLine<'a>>,
) -> Result<(), ParseError> {
    let mut section: Option<String> = None;
    for line in directive::lines(toks) {
        if !line.is_directive() {
            return Err(ParseError {
                expected: Some(format!("a directive: {}", launch_file_directives())),
                ..err(
                    &src.name,
                    line.word.span,
                    format!(
                        "expected a launch directive, found {}",
                        line.word.describe()
                    ),
                )
            });
        }
        if line.is(".kernel") {
            match line.args.as_slice() {
                [name] if name.is_word() => section = Some(name.text.to_string()),
                _ => {
                    return Err(err(
                        &src.name,
                        line.word.span,
                        "`.kernel` takes one kernel name".into(),
                    ))
                }
            }
            continue;
        }
        out.push(SectionLine {
            source,
            kernel: section.clone(),
            line,
        });
    }
    Ok(())
}

/// Applies the directives for one kernel; `Some(error)`: a PTX entry left unbound (see
/// [`apply`]).
fn apply_to_kernel(
    kernel: &mut Kernel,
    file_name: &str,
    params: &KernelParams,
    directives: &[&SectionLine],
    launch: &LaunchText,
) -> Result<Option<ParseError>, ParseError> {
    let mut spec = kernel.launch.clone();
    let mut seen: [Option<Span>; 5] = [None; 5];
    // `.shared` and `.static_shared`: the bytes, the source's name and the number's span.
    let mut dynamic: Option<(u64, &str, Span)> = None;
    let mut static_decl: Option<(u64, &str, Span)> = None;
    let mut added: Vec<(ParamDecl, usize)> = Vec::new();
    // Every parameter name so far: the kernel's own and the launch's.
    let mut names: HashSet<String> = spec.params.iter().map(|p| p.name.clone()).collect();
    let mut expects = Vec::new();
    let mut last_param_at: Option<(usize, Span)> = None;
    for d in directives {
        let file = &launch.sources[d.source].name;
        let text = &launch.sources[d.source].text;
        let word = &d.line.word;
        let parsed = directive::parse(word, &d.line.args, text)
            .map_err(|e| lift(file, e))?
            .ok_or_else(|| ParseError {
                expected: Some(launch_file_directives()),
                ..err(
                    file,
                    word.span,
                    format!("unknown launch directive `{}`", word.text),
                )
            })?;
        let slot = match &parsed {
            Directive::Grid { .. } => Some(0),
            Directive::Block { .. } => Some(1),
            Directive::Shared { .. } => Some(2),
            Directive::StaticShared { .. } => Some(3),
            Directive::Decl { .. } | Directive::Expect { .. } | Directive::Payload(_) => None,
            Directive::ExpectTrap(_) => Some(4),
        };
        if let Some(i) = slot {
            if let Some(prev) = seen[i].replace(word.span) {
                return Err(err(
                    file,
                    word.span,
                    format!(
                        "duplicate `{}` for kernel `{}` (already given on line {})",
                        word.text, kernel.name, prev.line
                    ),
                ));
            }
        }
        match parsed {
            Directive::Grid { dims, .. } => spec.grid = dims,
            Directive::Block { dims, .. } => spec.block = dims,
            Directive::Shared { bytes, span } => dynamic = Some((bytes, file, span)),
            Directive::StaticShared { bytes, span } => static_decl = Some((bytes, file, span)),
            Directive::Decl { decl, name_span } => {
                check_new_name(&mut names, &decl.name, name_span, file)?;
                last_param_at = Some((d.source, decl.span));
                added.push((decl, d.source));
            }
            Directive::Expect { expect, .. } => expects.push((expect, d.source)),
            Directive::ExpectTrap(t) => spec.expect_trap = Some(t),
            Directive::Payload(p) => {
                if kernel.dialect != crate::ir::Dialect::Visa {
                    return Err(err(
                        file,
                        word.span,
                        "`.payload` describes a vISA thread payload; this kernel is not vISA"
                            .into(),
                    ));
                }
                spec.payload.push(p);
            }
        }
    }

    apply_shared(&mut spec, kernel, params, dynamic, static_decl)?;
    match params {
        KernelParams::Declared => {
            let none_added = added.is_empty();
            spec.params.extend(added.into_iter().map(|(p, _)| p));
            assign_cbank_offsets(&mut spec.params, spec.layout.param_base());
            // A listing's code says how far its parameters reach.
            let reads = u64::from(spec.cbank_reads);
            let end = spec.params_end();
            if reads > end {
                let base = spec.layout.param_base();
                let message = format!(
                    "kernel `{}` reads constant bank 0 up to {reads:#x} ({} bytes of parameters from c[0x0][{base:#x}] on, for {}) but the launch binds parameters up to {end:#x} only",
                    kernel.name,
                    reads - u64::from(base),
                    spec.layout
                );
                let e = ParseError {
                    expected: Some(
                        "a --buffer (a pointer) or --param line per parameter, in order".into(),
                    ),
                    ..match last_param_at {
                        Some((s, span)) if !none_added => {
                            err(&launch.sources[s].name, span, message)
                        }
                        _ => err(file_name, kernel.span, message),
                    }
                };
                if none_added {
                    return Ok(Some(e));
                }
                return Err(e);
            }
        }
        KernelParams::Entry(info) if added.is_empty() && !info.params.is_empty() => {
            return Ok(Some(count_mismatch(
                kernel,
                info,
                &added,
                file_name,
                kernel.span,
            )));
        }
        KernelParams::Entry(info) => {
            let at = last_param_at.map(|(s, span)| (launch.sources[s].name.as_str(), span));
            // The parser's parameters are the module variables the entry uses (hidden buffers
            // after the `.param` list, see `ptx::globals`); they stay after the bound ones.
            let globals = std::mem::take(&mut spec.params);
            spec.params = bind(kernel, file_name, info, added, at, launch)?;
            spec.params.extend(globals);
        }
    }
    let by_name = ByName::params(&spec.params);
    for (e, source) in &expects {
        check_expect_in(e, &by_name).map_err(|m| err(&launch.sources[*source].name, e.span, m))?;
    }
    spec.expects.extend(expects.into_iter().map(|(e, _)| e));
    kernel.launch = spec;
    Ok(None)
}

/// Applies `.shared` (the dynamic bytes) and `.static_shared` (the kernel's static variables)
/// to `spec`. The window is the layout's reserved bytes, the static bytes, then the dynamic
/// bytes. For a PTX entry the static bytes are its `.shared` variables, which a
/// `.static_shared` line must match; for SASS a `.static_shared` line gives them (a listing
/// that states its `.nv.shared` size must agree), and a `.shared` line alone keeps the
/// kernel's static part.
fn apply_shared(
    spec: &mut crate::ir::LaunchSpec,
    kernel: &Kernel,
    params: &KernelParams,
    dynamic: Option<(u64, &str, Span)>,
    static_decl: Option<(u64, &str, Span)>,
) -> Result<(), ParseError> {
    if dynamic.is_none() && static_decl.is_none() {
        return Ok(());
    }
    let reserved = u64::from(spec.layout.reserved_shared());
    let old_static = u64::from(spec.static_shared);
    let old_dynamic = u64::from(spec.dynamic_shared());
    let static_total = match (params, static_decl) {
        (KernelParams::Entry(info), Some((bytes, file, span))) => {
            // ptxas may pad the static variables (their section can be a little larger than
            // atomjit's own layout of the declarations), so the launch may give more; less
            // would leave a declared variable outside the window.
            if bytes < u64::from(info.static_shared) {
                return Err(ParseError {
                    expected: Some(format!(".static_shared {}", info.static_shared)),
                    ..err(
                        file,
                        span,
                        format!(
                            "kernel `{}` declares {} bytes of static .shared variables, more than {bytes}",
                            kernel.name, info.static_shared
                        ),
                    )
                });
            }
            u64::from(info.dynamic_base.unwrap_or(info.static_shared))
        }
        (KernelParams::Entry(info), None) => {
            u64::from(info.dynamic_base.unwrap_or(info.static_shared))
        }
        (KernelParams::Declared, Some((bytes, file, span))) => {
            let total = reserved.saturating_add(bytes);
            if old_static > reserved && total != old_static {
                return Err(ParseError {
                    expected: Some(format!(".static_shared {}", old_static - reserved)),
                    ..err(
                        file,
                        span,
                        format!(
                            "kernel `{}` has {} bytes of static shared memory (its listing says so), not {bytes}",
                            kernel.name,
                            old_static - reserved
                        ),
                    )
                });
            }
            total
        }
        (KernelParams::Declared, None) => old_static,
    };
    let (dynamic_bytes, at) = match (dynamic, static_decl) {
        (Some((bytes, file, span)), _) => (bytes, Some((file, span))),
        (None, Some((_, file, span))) => (old_dynamic, Some((file, span))),
        (None, None) => (old_dynamic, None),
    };
    let total = static_total.saturating_add(dynamic_bytes);
    let (file, span) = at.unwrap_or(("", kernel.span));
    spec.shared_bytes = check_shared(total).map_err(|m| {
        err(
            file,
            span,
            match (static_total, params) {
                (0, _) => m,
                (_, KernelParams::Entry(_)) => format!(
                    "{m} (the kernel's static .shared variables take {static_total} bytes before the dynamic memory; at most {SHARED_WINDOW_BYTES})"
                ),
                (_, KernelParams::Declared) => format!(
                    "{m} (the kernel's reserved and static shared memory take {static_total} bytes before the dynamic memory; at most {SHARED_WINDOW_BYTES})"
                ),
            },
        )
    })?;
    spec.static_shared = static_total as u32;
    Ok(())
}

/// Records a new parameter name; an error if `names` already has it.
fn check_new_name(
    names: &mut HashSet<String>,
    name: &str,
    span: Span,
    file: &str,
) -> Result<(), ParseError> {
    if !names.insert(name.to_string()) {
        return Err(ParseError {
            expected: Some("a new name".into()),
            ..err(file, span, format!("`{name}` is already declared"))
        });
    }
    Ok(())
}

fn describe_param(p: &EntryParam) -> String {
    format!("{} .{}", p.name, super::ptx::type_name(p.ty))
}

/// The parameters of a PTX entry, listed for an error.
fn param_list(info: &EntryInfo) -> String {
    if info.params.is_empty() {
        "no parameters".to_string()
    } else {
        info.params
            .iter()
            .map(describe_param)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The error for a launch that binds `added` to an entry whose parameter list has another
/// length (also the reason an entry without any binding line cannot run), at `file`/`span`.
fn count_mismatch(
    kernel: &Kernel,
    info: &EntryInfo,
    added: &[(ParamDecl, usize)],
    file: &str,
    span: Span,
) -> ParseError {
    let bound: Vec<&str> = added.iter().map(|(p, _)| p.name.as_str()).collect();
    ParseError {
        expected: Some(format!(
            "one --buffer (for a pointer) or --param (for a scalar) per parameter, in order: {}",
            param_list(info)
        )),
        ..err(
            file,
            span,
            format!(
                "kernel `{}` has {} parameter{} ({}) but the launch binds {}{}",
                kernel.name,
                info.params.len(),
                if info.params.len() == 1 { "" } else { "s" },
                param_list(info),
                added.len(),
                if bound.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", bound.join(", "))
                }
            ),
        )
    }
}

/// Binds the launch's buffers and scalars to the PTX entry's `.param` list, in order.
fn bind(
    kernel: &Kernel,
    file_name: &str,
    info: &EntryInfo,
    added: Vec<(ParamDecl, usize)>,
    at: Option<(&str, Span)>,
    launch: &LaunchText,
) -> Result<Vec<ParamDecl>, ParseError> {
    if added.len() != info.params.len() {
        let (file, span) = at.unwrap_or((file_name, kernel.span));
        return Err(count_mismatch(kernel, info, &added, file, span));
    }
    let mut out: Vec<ParamDecl> = Vec::with_capacity(added.len());
    for ((decl, source), param) in added.into_iter().zip(&info.params) {
        let file = &launch.sources[source].name;
        let mismatch = match &decl.kind {
            ParamKind::Buffer { .. } | ParamKind::Surface(_) | ParamKind::SurfaceAddress { .. } => {
                let pointer = matches!(param.ty, Ty::U64 | Ty::S64 | Ty::B64);
                let (what, value) = match decl.kind {
                    ParamKind::Surface(_) => ("surface", "a 64-bit surface handle"),
                    ParamKind::SurfaceAddress { .. } => {
                        ("surface address", "a 64-bit device address")
                    }
                    ParamKind::Buffer { .. } | ParamKind::Scalar { .. } => {
                        ("buffer", "a 64-bit device address")
                    }
                };
                (!pointer).then(|| {
                    format!(
                        "{what} `{}` binds to parameter {} (a {what} is {value}; the parameter must be .u64)",
                        decl.name,
                        describe_param(param)
                    )
                })
            }
            ParamKind::Scalar { ty, .. } => (ty.bytes() != param.ty.bytes()).then(|| {
                format!(
                    "scalar `{}` ({ty}, {} bytes) binds to parameter {} ({} bytes): the sizes must match",
                    decl.name,
                    ty.bytes(),
                    describe_param(param),
                    param.ty.bytes()
                )
            }),
        };
        if let Some(m) = mismatch {
            return Err(err(file, decl.span, m));
        }
        out.push(decl);
    }
    super::program::check_surface_addresses(&out).map_err(|e| {
        let (file, _) = at.unwrap_or((file_name, kernel.span));
        err(file, e.span, e.message)
    })?;
    let base = kernel.launch.layout.param_base();
    assign_cbank_offsets(&mut out, base);
    for (decl, param) in out.iter().zip(&info.params) {
        let want = base + param.offset;
        if decl.cbank_offset != want {
            return Err(err(
                file_name,
                param.span,
                format!(
                    "parameter {} is at c[0x0][{want:#x}] but `{}` was laid out at {:#x} (a front-end bug)",
                    describe_param(param),
                    decl.name,
                    decl.cbank_offset
                ),
            ));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::{parse_with_launch, ParseError};
    use super::LaunchText;
    use crate::ir::{Dialect, Program};

    fn sass(src: &str, sources: &[(&str, &str)]) -> Result<Program, ParseError> {
        let mut launch = LaunchText::new();
        for (name, text) in sources {
            launch.push(name, text);
        }
        parse_with_launch("t.s", src, Dialect::Sass, &launch).map(|l| l.program)
    }

    fn params(p: &Program, kernel: usize) -> Vec<(&str, u32)> {
        let params = &p.kernels[kernel].launch.params;
        params
            .iter()
            .map(|d| (d.name.as_str(), d.cbank_offset))
            .collect()
    }

    #[test]
    fn directives_apply_in_source_order_to_their_kernels() {
        let src = ".kernel k\n.buffer a u32[1] = 0\nEXIT ;\n.kernel j\nEXIT ;\n";
        let sidecar = ".grid 2\n.kernel k\n.buffer b u32[1] = 0\n.kernel j\n.block 64\n";
        let cli = ".buffer c u32[1] = 0\n.kernel k\n.buffer d u32[1] = 0\n.expect d[0] == 0\n";
        let p = sass(src, &[("t.launch", sidecar), ("command line", cli)]).unwrap();
        assert_eq!(
            params(&p, 0),
            [("a", 0x160), ("b", 0x168), ("c", 0x170), ("d", 0x178)]
        );
        assert_eq!(params(&p, 1), [("c", 0x160)]);
        assert_eq!(p.kernels[0].launch.grid, [2, 1, 1]);
        assert_eq!(p.kernels[1].launch.grid, [2, 1, 1]);
        assert_eq!(p.kernels[1].launch.block, [64, 1, 1]);
        assert_eq!(p.kernels[0].launch.expects.len(), 1);

        // A repeated name is an error where it is repeated, also across sources.
        let e = sass(
            src,
            &[
                ("t.launch", sidecar),
                ("command line", ".buffer b u32[1] = 0"),
            ],
        )
        .unwrap_err();
        assert_eq!((e.file.as_str(), e.span.line), ("command line", 1));
        assert!(e.message.contains("`b` is already declared"), "{e:?}");
        let e = sass(
            src,
            &[(
                "t.launch",
                ".kernel j\n.grid 3\n.kernel k\n.grid 4\n.kernel j\n.grid 5\n",
            )],
        )
        .unwrap_err();
        assert_eq!(e.span.line, 6);
        assert!(
            e.message
                .contains("duplicate `.grid` for kernel `j` (already given on line 2)"),
            "{e:?}"
        );
        let e = sass(src, &[("t.launch", ".kernel nope\n.grid 3\n")]).unwrap_err();
        assert!(
            e.message.contains("the program has no kernel `nope`"),
            "{e:?}"
        );
        assert_eq!(e.expected.as_deref(), Some("one of k j"));
    }

    #[test]
    fn many_kernels_each_get_their_own_section() {
        const N: usize = 2000;
        let mut src = String::new();
        let mut launch = String::from(".block 64\n");
        for i in 0..N {
            src += &format!(".kernel k{i}\nEXIT ;\n");
            launch += &format!(".kernel k{i}\n.buffer b{i} u32[1] = 0\n.expect b{i}[0] == 0\n");
        }
        let p = sass(&src, &[("t.launch", &launch)]).unwrap();
        for i in [0, 1, N / 2, N - 1] {
            let k = &p.kernels[i];
            assert_eq!(k.launch.block, [64, 1, 1]);
            assert_eq!(params(&p, i), [(format!("b{i}").as_str(), 0x160)]);
            assert_eq!(k.launch.expects.len(), 1);
        }
    }
}
