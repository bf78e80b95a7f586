//! The PTX front-end: PTX ISA 2.x–8.x text as nvcc writes it, lowered to the IR.
//!
//! # What a module may contain
//!
//! * `.version X.Y`, `.target sm_XX{, ...}`, `.address_size 64` (32-bit addressing is
//!   rejected: generic addresses are 64-bit, see `ir::GENERIC_SHARED_BASE`).
//! * `.visible .entry NAME( .param .TYPE NAME, ... ) { body }`: each entry is one IR kernel
//!   (dialect PTX, warp size 32). Parameters are scalars (`.u64` pointers, `.u32`, `.f32`,
//!   ...; `.ptr .space .align N` attributes are accepted as the hints they are); each lives in
//!   constant bank 0 at `PARAM_BASE` plus its naturally aligned offset in declaration order,
//!   and `ld.param` reads it there. By-value arrays (`.param .align 8 .b8 s[16]`) are rejected.
//! * `.maxnreg` and `.minnctapersm` (resource hints) are accepted; `.maxntid`, `.reqntid` and
//!   cluster directives constrain the launch and are rejected.
//! * `.shared {.align N} .TYPE name{[N]...};` at module scope or in an entry: static shared
//!   variables, laid out in declaration order (module scope first), each aligned, from offset
//!   0 of the CTA's shared window. `.extern .shared ... name[];` arrays all start after the
//!   static variables (CUDA's dynamic shared memory). A kernel's declared shared size is the
//!   end of its static variables; a launch's `.shared N` adds `N` dynamic bytes.
//! * In a body: `.reg` declarations (see `regs`), `{ }` blocks that scope them, labels
//!   `name:`, and instructions `{@{!}p} opcode.qualifiers operands;` (see `ops`).
//! * `{.visible|.weak|.common|.extern} .global/.const` variables with initialisers, `.align`
//!   and arrays: device memory the launch allocates and initialises, named after the variable
//!   (see `globals.rs`: hidden buffer parameters after the `.param` list, only those an entry
//!   uses, so libcu++'s hundreds of constants cost nothing).
//! * `.func` declarations and definitions, inlined at each `call` (see `calls.rs`); recursion
//!   and indirect calls are errors. `.param` variables in bodies (call arguments and return
//!   values) live in registers.
//! * `.file`, `.loc`, `.section` (debug information) and `.pragma` are skipped; they carry no
//!   semantics. `.local` variables and textures are rejected.
//!
//! Entries are lowered after the whole module is scanned (a function may be defined after its
//! callers). A kernel whose last instruction can fall through gets an implicit `exit` at its
//! closing brace (PTX entries end there).
//!
//! # An entry that cannot run
//!
//! A statement that does not lower (an unsupported instruction or qualifier, or a form ptxas
//! rejects) does not stop the module: lowering goes on to the end of the entry collecting
//! every such statement, and the entry becomes a placeholder with those errors
//! ([`EntryInfo::unsupported`]). The module's other entries run; running the placeholder is
//! the error `entry `NAME` cannot run: <construct>` at the first construct, and `atomjit
//! check` lists all of them with their locations. Malformed modules (unbalanced braces,
//! duplicate entries, bad module directives) are still one error.
//!
//! Launch shape, buffers and expectations do not live in PTX: they come from a sidecar or the
//! command line and are bound to the `.param` list by [`crate::front::launch`].

mod calls;
mod globals;
mod operands;
mod ops;
mod regs;
#[cfg(test)]
#[allow(clippy::wildcard_enum_match_arm)] // a test matches the variant it expects
mod tests;

pub use ops::{literal_bits, OPCODES};
pub use regs::{type_name, EntryParam};

use super::lexer::{end_of, join, lex, SyntaxError, TokKind, Token};
use super::program::{is_identifier, ByName};
use crate::ir::{Dialect, Guard, Inst, Kernel, LaunchSpec, Op, Program, Span, Ty, PARAM_BASE};
use globals::{EntryGlobals, GlobalTable};
use ops::Lowerer;
use regs::{register_type, value_type, Kind, RegFile, SharedLayout};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// What launch binding needs to know about one entry besides its IR kernel.
#[derive(Debug, Clone)]
pub struct EntryInfo {
    pub name: String,
    /// The `.param` list in order.
    pub params: Vec<EntryParam>,
    /// Bytes of static `.shared` variables.
    pub static_shared: u32,
    /// Where dynamic (`.extern`) shared memory starts, if the kernel declares any.
    pub dynamic_base: Option<u32>,
    /// Why the entry cannot run: every construct atomjit does not support (or that ptxas
    /// rejects), in source order. Empty for an entry that lowered. An entry with errors is
    /// kept in the program as a placeholder (its IR is a lone `exit`) so that the module's
    /// other entries still run; running it is an error that names the entry and the first
    /// construct, and `atomjit check` lists all of them.
    pub unsupported: Vec<SyntaxError>,
}

/// Parses a PTX module into a program (one kernel per `.entry`), without launch information.
/// An entry that cannot run makes this an error (its first unsupported construct); use
/// [`parse_module`] to keep the module's other entries.
pub fn parse_program(file_name: &str, source: &str) -> Result<Program, SyntaxError> {
    let (program, infos) = parse_module(file_name, source)?;
    if let Some(info) = infos.iter().find(|i| !i.unsupported.is_empty()) {
        let first = &info.unsupported[0];
        return Err(SyntaxError {
            message: format!("entry `{}` cannot run: {}", info.name, first.message),
            ..first.clone()
        });
    }
    Ok(program)
}

/// Parses a PTX module: the program and, per kernel, what launch binding needs.
pub fn parse_module(
    file_name: &str,
    source: &str,
) -> Result<(Program, Vec<EntryInfo>), SyntaxError> {
    let toks = prepare_tokens(lex(source)?, source);
    let mut p = Parser {
        toks,
        pos: 0,
        source,
        module_shared: Rc::new(SharedLayout::default()),
        module_shared_names: HashSet::new(),
        module_shared_overflow: None,
        kernels: Vec::new(),
        kernel_names: HashSet::new(),
        infos: Vec::new(),
        target: 0,
        globals: GlobalTable::default(),
        funcs: HashMap::new(),
        pending: Vec::new(),
        call_stack: Vec::new(),
        inline_count: 0,
    };
    p.module()?;
    for entry in std::mem::take(&mut p.pending) {
        p.lower_entry(entry)?;
    }
    if p.kernels.is_empty() {
        return Err(SyntaxError::new(
            Span {
                start: 0,
                end: 0,
                line: 1,
                col: 1,
            },
            "the module has no `.entry` (no kernel to run)",
        )
        .expected("`.visible .entry NAME(...) { ... }`"));
    }
    Ok((
        Program {
            source_name: file_name.to_string(),
            source: source.to_string(),
            kernels: p.kernels,
        },
        p.infos,
    ))
}

/// Drops cuobjdump address tokens and joins `a::b` (qualifiers such as `.shared::cta`, which
/// the shared lexer splits at `:`) into one word.
fn prepare_tokens<'a>(toks: Vec<Token<'a>>, source: &'a str) -> Vec<Token<'a>> {
    let mut out: Vec<Token<'a>> = Vec::with_capacity(toks.len());
    let toks: Vec<Token<'a>> = toks
        .into_iter()
        .filter(|t| t.kind != TokKind::Address)
        .collect();
    let mut i = 0;
    while i < toks.len() {
        let mut t = toks[i];
        i += 1;
        while t.is_word()
            && toks
                .get(i)
                .is_some_and(|c| c.is_punct(":") && c.span.start == t.span.end)
            && toks
                .get(i + 1)
                .is_some_and(|c| c.is_punct(":") && c.span.start == t.span.end + 1)
            && toks
                .get(i + 2)
                .is_some_and(|w| w.is_word() && w.span.start == t.span.end + 2)
        {
            let w = toks[i + 2];
            let span = join(t.span, w.span);
            t = Token {
                kind: TokKind::Word,
                text: &source[span.start as usize..span.end as usize],
                span,
            };
            i += 3;
        }
        out.push(t);
    }
    out
}

/// A parsed `.shared` declaration (at module scope or in an entry body).
#[derive(Debug, Clone)]
struct SharedDecl {
    name: String,
    align: u32,
    size: u64,
    is_extern: bool,
    span: Span,
}

struct Parser<'a> {
    toks: Vec<Token<'a>>,
    pos: usize,
    source: &'a str,
    /// The module-scope `.shared` variables so far, laid out once for every later entry.
    module_shared: Rc<SharedLayout>,
    /// The names of every module-scope `.shared` declaration (the duplicate check).
    module_shared_names: HashSet<String>,
    /// The first module-scope variable that does not fit the window: an error for every later
    /// entry (whose window would start with it).
    module_shared_overflow: Option<SyntaxError>,
    kernels: Vec<Kernel>,
    /// The entry names seen so far (the duplicate check).
    kernel_names: HashSet<&'a str>,
    infos: Vec<EntryInfo>,
    /// The `sm_XX` number of `.target` (0 before it).
    target: u32,
    /// Module-scope `.global` and `.const` variables.
    globals: GlobalTable,
    /// `.func` declarations and definitions by name.
    funcs: HashMap<String, calls::FuncDef>,
    /// The entries, found by the module scan and lowered once the whole module is known.
    pending: Vec<PendingEntry>,
    /// The functions being inlined, outermost first (the recursion check).
    call_stack: Vec<String>,
    /// Calls inlined so far (each gets its own label namespace).
    inline_count: u32,
}

/// An entry found by the module scan, with what was declared before it.
struct PendingEntry {
    /// The `.entry` directive.
    at: Span,
    /// The index of its name token.
    name_pos: usize,
    module_shared: Rc<SharedLayout>,
    module_shared_overflow: Option<SyntaxError>,
    visible_globals: usize,
}

/// Directives that are accepted and skipped to the end of their line (debug information).
const LINE_DIRECTIVES: &[&str] = &[".file", ".loc"];

impl<'a> Parser<'a> {
    fn eof_span(&self) -> Span {
        self.toks.last().map(|t| end_of(t.span)).unwrap_or_default()
    }

    fn skip_newlines(&mut self) {
        while self
            .toks
            .get(self.pos)
            .is_some_and(|t| t.kind == TokKind::Newline)
        {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<Token<'a>> {
        self.skip_newlines();
        self.toks.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<Token<'a>> {
        let t = self.peek();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    fn error_expected(&mut self, what: &str) -> SyntaxError {
        match self.peek() {
            Some(t) => SyntaxError::new(t.span, format!("expected {what}, found {}", t.describe())),
            None => SyntaxError::new(
                self.eof_span(),
                format!("expected {what}, found the end of the file"),
            ),
        }
        .expected(what.to_string())
    }

    fn expect_punct(&mut self, p: &str) -> Result<Span, SyntaxError> {
        match self.peek() {
            Some(t) if t.is_punct(p) => {
                self.pos += 1;
                Ok(t.span)
            }
            _ => Err(self.error_expected(&format!("`{p}`"))),
        }
    }

    fn expect_word(&mut self, what: &str) -> Result<Token<'a>, SyntaxError> {
        match self.peek() {
            Some(t) if t.is_word() => {
                self.pos += 1;
                Ok(t)
            }
            _ => Err(self.error_expected(what)),
        }
    }

    /// Skips the rest of the current line (for line directives).
    fn skip_line(&mut self) {
        while let Some(t) = self.toks.get(self.pos) {
            self.pos += 1;
            if t.kind == TokKind::Newline {
                break;
            }
        }
    }

    /// The tokens of the current line after the directive (not consuming the newline).
    fn line_rest(&mut self) -> Vec<Token<'a>> {
        let mut out = Vec::new();
        while let Some(t) = self.toks.get(self.pos) {
            if t.kind == TokKind::Newline {
                break;
            }
            out.push(*t);
            self.pos += 1;
        }
        out
    }

    /// Tokens up to the next `;` (consumed, not returned), newlines dropped. Braces inside
    /// the statement (vector operands `{a, b}`) must balance; a `}` that closes a block means
    /// the `;` is missing.
    fn until_semicolon(&mut self, start: Span) -> Result<Vec<Token<'a>>, SyntaxError> {
        let mut out = Vec::new();
        let mut depth = 0u32;
        loop {
            let Some(t) = self.toks.get(self.pos).copied() else {
                return Err(
                    SyntaxError::new(start, "statement without a closing `;`").expected("`;`")
                );
            };
            self.pos += 1;
            match t.kind {
                TokKind::Newline => {}
                _ if t.is_punct(";") && depth == 0 => return Ok(out),
                _ if t.is_punct("{") => {
                    depth += 1;
                    out.push(t);
                }
                _ if t.is_punct("}") && depth > 0 => {
                    depth -= 1;
                    out.push(t);
                }
                _ if t.is_punct("}") => {
                    return Err(SyntaxError::new(
                        t.span,
                        format!("unexpected `{}` inside a statement", t.text),
                    )
                    .expected("`;` to end the statement"))
                }
                TokKind::Word | TokKind::Punct | TokKind::Address | TokKind::List => out.push(t),
            }
        }
    }

    /// Skips a `.section NAME { ... }` block (DWARF debug sections).
    fn skip_section(&mut self, at: Span) -> Result<(), SyntaxError> {
        let mut depth = 0;
        while let Some(t) = self.toks.get(self.pos).copied() {
            self.pos += 1;
            if t.is_punct("{") {
                depth += 1;
            } else if t.is_punct("}") {
                depth -= 1;
                if depth == 0 {
                    return Ok(());
                }
            }
        }
        Err(SyntaxError::new(at, "unterminated `.section`").expected("`}`"))
    }

    fn module(&mut self) -> Result<(), SyntaxError> {
        let mut seen_version = false;
        while let Some(t) = self.peek() {
            if !t.is_word() {
                return Err(
                    SyntaxError::new(t.span, format!("unexpected {}", t.describe()))
                        .expected("a directive such as `.version`, `.target` or `.entry`"),
                );
            }
            match t.text {
                ".version" => {
                    self.pos += 1;
                    self.version(t.span)?;
                    seen_version = true;
                }
                ".target" => {
                    self.pos += 1;
                    self.target(t.span)?;
                }
                ".address_size" => {
                    self.pos += 1;
                    let n = self.expect_word("32 or 64")?;
                    match n.text {
                        "64" => {}
                        "32" => {
                            return Err(SyntaxError::new(
                                n.span,
                                "atomjit supports only 64-bit addressing (.address_size 64)",
                            )
                            .expected("64"))
                        }
                        _ => {
                            return Err(SyntaxError::new(n.span, "the address size is 32 or 64")
                                .expected("64"))
                        }
                    }
                }
                d if LINE_DIRECTIVES.contains(&d) => self.skip_line(),
                ".section" => {
                    self.pos += 1;
                    self.skip_section(t.span)?;
                }
                ".pragma" => {
                    self.pos += 1;
                    self.until_semicolon(t.span)?;
                }
                ".visible" | ".weak" | ".extern" | ".common" => {
                    self.pos += 1;
                    self.linked(t, false)?;
                }
                ".entry" => {
                    self.pos += 1;
                    self.scan_entry(t.span)?;
                }
                ".func" => {
                    self.pos += 1;
                    self.func(t.span, false)?;
                }
                ".shared" => {
                    self.pos += 1;
                    self.module_shared_decl(t.span, false)?;
                }
                ".global" | ".const" => {
                    self.pos += 1;
                    self.global_decl(t, false)?;
                }
                other => return Err(self.unsupported_module_directive(t, other)),
            }
            let _ = seen_version;
        }
        Ok(())
    }

    fn unsupported_module_directive(&self, t: Token, d: &str) -> SyntaxError {
        let why = match d {
            ".local" => "`.local` variables are not supported",
            ".tex" | ".texref" | ".surfref" | ".samplerref" => {
                "textures and surfaces are not supported in PTX"
            }
            _ => "",
        };
        if why.is_empty() {
            SyntaxError::new(t.span, format!("unexpected `{d}` at module scope"))
                .expected(".version .target .address_size .entry .func .global .const .shared")
        } else {
            SyntaxError::new(t.span, why.to_string())
        }
    }

    fn version(&mut self, at: Span) -> Result<(), SyntaxError> {
        let v = self.expect_word("a PTX ISA version such as 8.0")?;
        let ok = v
            .text
            .split_once('.')
            .and_then(|(a, b)| Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?)))
            .is_some_and(|(major, _)| (1..=9).contains(&major));
        if !ok {
            return Err(SyntaxError::new(
                join(at, v.span),
                format!(
                    "`.version {}` is not a PTX ISA version atomjit reads",
                    v.text
                ),
            )
            .expected("a version from 1.0 to 9.x, e.g. 8.0"));
        }
        Ok(())
    }

    fn target(&mut self, at: Span) -> Result<(), SyntaxError> {
        let rest = self.line_rest();
        if rest.is_empty() {
            return Err(SyntaxError::new(at, "`.target` needs a target").expected("sm_80"));
        }
        for t in rest.iter().filter(|t| !t.is_punct(",")) {
            let name = t.text;
            let known = name.starts_with("sm_")
                || name.starts_with("compute_")
                || matches!(name, "texmode_unified" | "texmode_independent" | "debug");
            if name == "map_f64_to_f32" {
                return Err(SyntaxError::new(
                    t.span,
                    "`map_f64_to_f32` changes the meaning of every .f64 instruction; not supported",
                ));
            }
            if !known || !t.is_word() {
                return Err(SyntaxError::new(t.span, format!("unknown target `{name}`"))
                    .expected("sm_XX, compute_XX, texmode_*, debug"));
            }
            if let Some(n) = name.strip_prefix("sm_").or(name.strip_prefix("compute_")) {
                let digits: String = n.chars().take_while(|c| c.is_ascii_digit()).collect();
                self.target = digits.parse().unwrap_or(self.target);
            }
        }
        Ok(())
    }

    /// A linkage directive: what follows decides. `external`: an `.extern` came before.
    fn linked(&mut self, link: Token<'a>, external: bool) -> Result<(), SyntaxError> {
        let external = external || link.text == ".extern";
        let Some(t) = self.next() else {
            return Err(self.error_expected("`.entry` or a declaration"));
        };
        match t.text {
            ".entry" if !external => self.scan_entry(t.span),
            ".func" => self.func(t.span, external),
            ".shared" => self.module_shared_decl(t.span, external),
            ".global" | ".const" => self.global_decl(t, external),
            ".visible" | ".weak" | ".extern" | ".common" => self.linked(t, external),
            other => Err(self.unsupported_module_directive(t, other)),
        }
    }

    /// `.global`/`.const` variable declarations at module scope (see [`globals`]).
    fn global_decl(&mut self, kw: Token<'a>, external: bool) -> Result<(), SyntaxError> {
        let toks = self.until_semicolon(kw.span)?;
        let var = globals::parse_decl(&toks, kw.span, kw.text == ".const", external)?;
        if self.module_shared_names.contains(&var.name) {
            return Err(SyntaxError::new(
                var.span,
                format!("`{}` is already declared as a .shared variable", var.name),
            ));
        }
        self.globals.add(var)
    }

    /// Records an `.entry` (its name, then everything through its body) to lower once the
    /// whole module is known (functions may be defined after the entries that call them).
    fn scan_entry(&mut self, at: Span) -> Result<(), SyntaxError> {
        let name_pos = self.pos;
        self.expect_word("the kernel name")?;
        loop {
            let Some(t) = self.next() else {
                return Err(self.error_expected("`{` (the kernel body)"));
            };
            if t.is_punct("{") {
                break;
            }
        }
        let open = self.toks[self.pos - 1].span;
        let close = self.matching_brace(open)?;
        self.pos = close + 1;
        self.pending.push(PendingEntry {
            at,
            name_pos,
            module_shared: Rc::clone(&self.module_shared),
            module_shared_overflow: self.module_shared_overflow.clone(),
            visible_globals: self.globals.len(),
        });
        Ok(())
    }

    /// Lowers a scanned entry; an entry that cannot be lowered becomes a placeholder with its
    /// errors (see [`EntryInfo::unsupported`]).
    fn lower_entry(&mut self, e: PendingEntry) -> Result<(), SyntaxError> {
        self.pos = e.name_pos;
        let name_tok = self.toks[e.name_pos];
        self.module_shared = e.module_shared;
        self.module_shared_overflow = e.module_shared_overflow;
        let before = self.kernels.len();
        match self.entry(e.at, e.visible_globals) {
            Ok(()) => Ok(()),
            Err(EntryError::Fatal(err)) => Err(err),
            Err(EntryError::Unsupported { errors, params }) => {
                self.kernels.truncate(before);
                self.infos.truncate(before);
                self.placeholder(name_tok, e.at, errors, params);
                Ok(())
            }
        }
    }

    /// The stand-in for an entry that cannot run.
    fn placeholder(
        &mut self,
        name_tok: Token<'a>,
        at: Span,
        mut errors: Vec<SyntaxError>,
        params: Vec<EntryParam>,
    ) {
        let mut seen = HashSet::new();
        errors.retain(|e| seen.insert((e.span.start, e.span.end, e.message.clone())));
        let span = join(at, name_tok.span);
        self.infos.push(EntryInfo {
            name: name_tok.text.to_string(),
            params,
            static_shared: 0,
            dynamic_base: None,
            unsupported: errors,
        });
        self.kernels.push(Kernel {
            name: name_tok.text.to_string(),
            dialect: Dialect::Ptx,
            warp_size: 32,
            insts: vec![Inst {
                op: Op::Exit,
                guard: Guard::ALWAYS,
                span,
                text: "// this entry cannot run: see the errors".to_string(),
                sched: Vec::new(),
            }],
            labels: Vec::new(),
            num_regs: 0,
            num_preds: 0,
            uniform: Default::default(),
            launch: LaunchSpec::default(),
            span,
        });
    }

    /// `.shared {.align N} .TYPE name{[N]...};` at module scope.
    fn module_shared_decl(&mut self, at: Span, is_extern: bool) -> Result<(), SyntaxError> {
        let toks = self.until_semicolon(at)?;
        let d = shared_decl(&toks, at, is_extern)?;
        if !self.module_shared_names.insert(d.name.clone()) {
            return Err(SyntaxError::new(
                d.span,
                format!("shared variable `{}` is already declared", d.name),
            ));
        }
        if self.module_shared_overflow.is_none() {
            // No entry holds the layout between entries, so this does not copy it.
            let layout = Rc::make_mut(&mut self.module_shared);
            if let Err(e) = layout.add(&d.name, d.align, d.size, d.is_extern, d.span) {
                self.module_shared_overflow = Some(e);
            }
        }
        Ok(())
    }

    /// `.entry NAME ( params ) directives { body }` (from its name token at `self.pos`).
    /// `visible_globals`: the module variables declared before it.
    fn entry(&mut self, at: Span, visible_globals: usize) -> Result<(), EntryError> {
        let name_tok = self.expect_word("the kernel name")?;
        let name = name_tok.text;
        if !(is_identifier(name) || name.starts_with(['$', '%'])) {
            return Err(EntryError::Fatal(SyntaxError::new(
                name_tok.span,
                format!("`{name}` is not a valid kernel name"),
            )));
        }
        if !self.kernel_names.insert(name) {
            return Err(EntryError::Fatal(SyntaxError::new(
                name_tok.span,
                format!("duplicate entry `{name}`"),
            )));
        }
        let params = if self.peek().is_some_and(|t| t.is_punct("(")) {
            self.pos += 1;
            self.params()
                .map_err(|e| EntryError::unsupported(e, Vec::new()))?
        } else {
            Vec::new()
        };
        let unsupported = |e: SyntaxError| EntryError::unsupported(e, params.clone());
        // Performance directives between the parameters and the body.
        loop {
            let Some(t) = self.peek() else {
                return Err(EntryError::Fatal(
                    self.error_expected("`{` (the kernel body)"),
                ));
            };
            if t.is_punct("{") {
                break;
            }
            self.pos += 1;
            match t.text {
                ".maxnreg" | ".minnctapersm" => {
                    // Resource hints for the hardware's register allocator and occupancy.
                    self.expect_word("a number")?;
                }
                ".pragma" => {
                    self.until_semicolon(t.span)?;
                }
                ".maxntid" | ".reqntid" | ".maxclusterrank" | ".reqnctapercluster"
                | ".explicitcluster" => {
                    return Err(unsupported(SyntaxError::new(
                        t.span,
                        format!(
                            "`{}` constrains the launch shape and is not supported; give the shape in the launch (.block/.grid)",
                            t.text
                        ),
                    )))
                }
                d if LINE_DIRECTIVES.contains(&d) => self.skip_line(),
                _ => {
                    return Err(unsupported(
                        SyntaxError::new(t.span, format!("unexpected {}", t.describe()))
                            .expected("`{` (the kernel body)"),
                    ))
                }
            }
        }
        let open = self.expect_punct("{")?;
        let body_start = self.pos;
        let body_end = self.matching_brace(open)?;

        // Pass 1: shared variables anywhere in the body, so that every instruction sees the
        // final layout (dynamic shared memory starts after all static variables).
        if let Some(e) = &self.module_shared_overflow {
            return Err(unsupported(e.clone()));
        }
        let mut shared = SharedLayout::over(Rc::clone(&self.module_shared));
        let mut i = body_start;
        while i < body_end {
            let t = self.toks[i];
            let is_extern = t.text == ".extern";
            let decl = if is_extern {
                self.toks
                    .get(i + 1..body_end)
                    .and_then(|r| r.iter().find(|t| t.kind != TokKind::Newline))
                    .is_some_and(|n| n.text == ".shared")
            } else {
                t.text == ".shared"
            };
            if decl && t.is_word() {
                let start = i;
                let mut j = i;
                while j < body_end && !self.toks[j].is_punct(";") {
                    j += 1;
                }
                let toks: Vec<Token> = self.toks[start..j]
                    .iter()
                    .filter(|t| t.kind != TokKind::Newline)
                    .copied()
                    .collect();
                let skip = if is_extern { 2 } else { 1 };
                let d = shared_decl(toks.get(skip..).unwrap_or(&[]), t.span, is_extern)
                    .map_err(unsupported)?;
                shared
                    .add(&d.name, d.align, d.size, d.is_extern, d.span)
                    .map_err(unsupported)?;
                i = j + 1;
            } else {
                i += 1;
            }
        }
        shared.finish_dynamic();

        // Pass 2: the statements.
        let params_end = params
            .iter()
            .map(|p| PARAM_BASE + p.offset + p.ty.bytes())
            .max()
            .unwrap_or(PARAM_BASE);
        let mut body = Body {
            regs: RegFile::new(),
            insts: Vec::new(),
            labels: Vec::new(),
            label_index: HashMap::new(),
            fixups: Vec::new(),
            errors: Vec::new(),
            globals: EntryGlobals::new(visible_globals, params_end),
            frame: calls::Frame::default(),
        };
        self.pos = body_start;
        let by_name = ByName::new(&params, |p| p.name.as_str());
        self.body(&mut body, &shared, &by_name, body_end);
        self.pos = body_end + 1;
        let close = self.toks[body_end].span;
        if !body.errors.is_empty() {
            return Err(EntryError::Unsupported {
                errors: std::mem::take(&mut body.errors),
                params,
            });
        }
        let params_copy = params.clone();
        self.finish_kernel(name, join(at, name_tok.span), close, body, params, shared)
            .map_err(|errors| EntryError::Unsupported {
                errors,
                params: params_copy,
            })
    }

    /// The index of the `}` matching the `{` just consumed.
    fn matching_brace(&self, open: Span) -> Result<usize, SyntaxError> {
        let mut depth = 1;
        for (i, t) in self.toks.iter().enumerate().skip(self.pos) {
            if t.is_punct("{") {
                depth += 1;
            } else if t.is_punct("}") {
                depth -= 1;
                if depth == 0 {
                    return Ok(i);
                }
            }
        }
        Err(SyntaxError::new(open, "the kernel body is not closed").expected("`}`"))
    }

    /// The `.param` list after `(`, through `)`.
    fn params(&mut self) -> Result<Vec<EntryParam>, SyntaxError> {
        let mut params: Vec<EntryParam> = Vec::new();
        let mut names: HashSet<&str> = HashSet::new();
        let mut offset: u32 = 0;
        if self.peek().is_some_and(|t| t.is_punct(")")) {
            self.pos += 1;
            return Ok(params);
        }
        loop {
            let kw = self.expect_word("`.param`")?;
            if kw.text != ".param" {
                return Err(SyntaxError::new(
                    kw.span,
                    format!("expected `.param`, found `{}`", kw.text),
                )
                .expected("`.param .TYPE NAME`"));
            }
            let mut ty = None;
            let mut align_given = false;
            let name = loop {
                let t = self.expect_word("a parameter type or name")?;
                match t.text {
                    ".align" => {
                        self.expect_word("an alignment")?;
                        align_given = true;
                    }
                    ".ptr" | ".global" | ".shared" | ".const" | ".local" => {
                        // `.ptr .space .align N`: pointer attributes, hints for the optimiser.
                    }
                    _ if t.text.starts_with('.') => {
                        let ty_name = &t.text[1..];
                        match value_type(ty_name) {
                            Some(v) if ty.is_none() => ty = Some((v, t.span)),
                            _ => {
                                return Err(SyntaxError::new(
                                    t.span,
                                    format!("unexpected `{}` in a parameter declaration", t.text),
                                )
                                .expected("`.param .TYPE NAME`"))
                            }
                        }
                    }
                    _ => break t,
                }
            };
            let Some((ty, ty_span)) = ty else {
                return Err(SyntaxError::new(name.span, "the parameter has no type")
                    .expected("`.param .u64 NAME`"));
            };
            let _ = align_given;
            if self.peek().is_some_and(|t| t.is_punct("[")) {
                return Err(SyntaxError::new(
                    name.span,
                    "by-value array parameters (structs) are not supported; pass scalars or pointers",
                ));
            }
            if !matches!(
                ty,
                Ty::U8
                    | Ty::S8
                    | Ty::B16
                    | Ty::U16
                    | Ty::S16
                    | Ty::B32
                    | Ty::U32
                    | Ty::S32
                    | Ty::B64
                    | Ty::U64
                    | Ty::S64
                    | Ty::F32
                    | Ty::F64
                    | Ty::F16
                    | Ty::BF16
            ) {
                return Err(SyntaxError::new(ty_span, "unsupported parameter type"));
            }
            if !names.insert(name.text) {
                return Err(SyntaxError::new(
                    name.span,
                    format!("duplicate parameter `{}`", name.text),
                ));
            }
            let size = ty.bytes();
            offset = offset.next_multiple_of(size);
            params.push(EntryParam {
                name: name.text.to_string(),
                ty,
                offset,
                span: join(kw.span, name.span),
            });
            offset += size;
            match self.next() {
                Some(t) if t.is_punct(",") => continue,
                Some(t) if t.is_punct(")") => return Ok(params),
                _ => {
                    self.pos = self.pos.saturating_sub(1);
                    return Err(self.error_expected("`,` or `)`"));
                }
            }
        }
    }

    /// The statements of a body from `self.pos` up to the token `end` (the closing `}`).
    fn body(
        &mut self,
        b: &mut Body,
        shared: &SharedLayout,
        params: &ByName<EntryParam>,
        end: usize,
    ) {
        while self.pos < end {
            let t = self.toks[self.pos];
            match t.kind {
                TokKind::Newline => {
                    self.pos += 1;
                    continue;
                }
                TokKind::Address => {
                    self.pos += 1;
                    continue;
                }
                TokKind::Word | TokKind::Punct | TokKind::List => {}
            }
            if t.is_punct("{") {
                self.pos += 1;
                b.regs.push_scope();
                continue;
            }
            if t.is_punct("}") {
                self.pos += 1;
                b.regs.pop_scope();
                continue;
            }
            if t.is_punct(";") {
                self.pos += 1;
                continue;
            }
            // A label.
            if t.is_word()
                && !t.text.starts_with('.')
                && self.toks.get(self.pos + 1).is_some_and(|c| c.is_punct(":"))
            {
                self.pos += 2;
                let label = format!("{}{}", b.frame.prefix, t.text);
                if let Some(&i) = b.label_index.get(&label) {
                    let prev = b.labels[i].2;
                    b.errors.push(SyntaxError::new(
                        t.span,
                        format!("duplicate label `{}` (first on line {})", t.text, prev.line),
                    ));
                    continue;
                }
                b.label_index.insert(label.clone(), b.labels.len());
                b.labels.push((label, b.insts.len() as u32, t.span));
                continue;
            }
            let start = self.pos;
            let result = if t.is_word() && t.text.starts_with('.') {
                self.pos += 1;
                self.body_directive(b, t)
            } else {
                self.instruction(b, shared, params)
            };
            if let Err(e) = result {
                b.errors.push(e);
                if self.pos <= start + 1 {
                    // Resynchronise at the end of the statement.
                    while self.pos < end && !self.toks[self.pos].is_punct(";") {
                        self.pos += 1;
                    }
                    self.pos = (self.pos + 1).min(end).max(start + 1);
                }
            }
        }
    }

    fn body_directive(&mut self, b: &mut Body, t: Token<'a>) -> Result<(), SyntaxError> {
        match t.text {
            ".reg" => {
                let toks = self.until_semicolon(t.span)?;
                reg_decl(&mut b.regs, &toks, t.span)
            }
            ".shared" if b.frame.function.is_some() => {
                self.until_semicolon(t.span)?;
                Err(SyntaxError::new(
                    t.span,
                    "`.shared` variables declared in a `.func` are not supported; declare them at module scope",
                ))
            }
            ".shared" => {
                // Laid out in pass 1.
                self.until_semicolon(t.span).map(|_| ())
            }
            ".extern" => {
                let toks = self.until_semicolon(t.span)?;
                if toks.first().is_some_and(|n| n.text == ".shared") {
                    Ok(())
                } else {
                    Err(SyntaxError::new(
                        t.span,
                        "only `.extern .shared` arrays are supported in a body",
                    ))
                }
            }
            d if LINE_DIRECTIVES.contains(&d) => {
                self.skip_line();
                Ok(())
            }
            ".pragma" => self.until_semicolon(t.span).map(|_| ()),
            ".local" => Err(SyntaxError::new(
                t.span,
                "`.local` variables are not supported",
            )),
            ".param" => {
                let toks = self.until_semicolon(t.span)?;
                let (name, bytes, span) = calls::param_var_decl(&toks, t.span)?;
                b.regs.declare_param(name, bytes, span)
            }
            ".global" | ".const" => Err(SyntaxError::new(
                t.span,
                format!(
                    "`{}` variables are not supported; pass the data as a parameter",
                    t.text
                ),
            )),
            other => Err(SyntaxError::new(
                t.span,
                format!("unexpected directive `{other}` in a kernel body"),
            )
            .expected("`.reg`, `.shared`, a label or an instruction")),
        }
    }

    /// One instruction statement: guard, opcode, operands, `;`.
    fn instruction(
        &mut self,
        b: &mut Body,
        shared: &SharedLayout,
        params: &ByName<EntryParam>,
    ) -> Result<(), SyntaxError> {
        let start = self.toks[self.pos].span;
        let toks = self.until_semicolon(start)?;
        let mut i = 0;
        let mut guard = Guard::ALWAYS;
        if toks.first().is_some_and(|t| t.is_punct("@")) {
            i = 1;
            let negate = toks.get(1).is_some_and(|t| t.is_punct("!"));
            if negate {
                i += 1;
            }
            let Some(p) = toks.get(i).filter(|t| t.is_word()) else {
                let at = toks.get(i).map(|t| t.span).unwrap_or(start);
                return Err(SyntaxError::new(at, "expected a predicate after `@`")
                    .expected("`@%p1` or `@!%p1`"));
            };
            let pred = match b.regs.lookup(p.text, p.span)? {
                regs::RegRef::Pred(pred) => pred,
                regs::RegRef::Value { .. } | regs::RegRef::Param { .. } => {
                    return Err(SyntaxError::new(
                        p.span,
                        format!("`{}` is not a predicate register", p.text),
                    )
                    .expected("a .pred register"))
                }
            };
            guard = Guard { pred, negate };
            i += 1;
        }
        let Some(mnemonic) = toks.get(i).filter(|t| t.is_word()) else {
            let at = toks.get(i).map(|t| t.span).unwrap_or(start);
            return Err(SyntaxError::new(at, "expected an instruction")
                .expected("an instruction, a label `name:` or a directive"));
        };
        let span = join(
            toks.first().map(|t| t.span).unwrap_or(start),
            toks.last().map(|t| t.span).unwrap_or(start),
        );
        let end = end_of(toks.last().map(|t| t.span).unwrap_or(start));
        let rest = &toks[i + 1..];
        if mnemonic.text == "call" || mnemonic.text.starts_with("call.") {
            return self.call(b, shared, params, mnemonic, rest, guard, span);
        }
        let opcode = mnemonic.text.split('.').next().unwrap_or("");
        if opcode == "suq" {
            // Its `[surf]` operand names a surface, not an address: refused before it is parsed.
            return Err(SyntaxError::new(
                mnemonic.span,
                "`suq` (surface queries) is not supported: a kernel gets a surface's size from its parameters",
            ));
        }
        let mut operands = Vec::new();
        if !rest.is_empty() {
            for part in operands::split_commas(rest) {
                operands.push(operands::parse_operand(part, end)?);
            }
        }
        let mut lw = Lowerer {
            regs: &mut b.regs,
            shared,
            params,
            table: &self.globals,
            globals: &mut b.globals,
            target: self.target,
            span,
        };
        let mut lowered = ops::lower(&mut lw, mnemonic, &operands, end)?;
        let text = self
            .source
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
            .to_string();
        // `ret` in an inlined function returns to its caller.
        let is_ret = mnemonic.text == "ret" || mnemonic.text.starts_with("ret.");
        if let (true, Some(ret)) = (is_ret, b.frame.ret_label.clone()) {
            lowered.ops = vec![Op::Branch {
                target: u32::MAX,
                uniform: false,
            }];
            lowered.label = Some((ret, span));
        } else if let Some((label, lspan)) = lowered.label.take() {
            lowered.label = Some((format!("{}{label}", b.frame.prefix), lspan));
        }
        if let Some((label, lspan)) = lowered.label {
            b.fixups.push((b.insts.len(), label, lspan));
        }
        let first = b.insts.len();
        for mut op in lowered.ops {
            // A split's rejoin point is lowered relative to the instruction's first op.
            if let Op::WarpSplit { rejoin, .. } = &mut op {
                *rejoin += first as u32;
            }
            b.insts.push(Inst {
                op,
                guard,
                span,
                text: text.clone(),
                sched: Vec::new(),
            });
        }
        for (k, g, note) in lowered.overrides {
            let inst = &mut b.insts[first + k];
            inst.guard = g;
            inst.text.push_str(note);
        }
        Ok(())
    }

    fn finish_kernel(
        &mut self,
        name: &str,
        span: Span,
        close: Span,
        mut b: Body,
        params: Vec<EntryParam>,
        shared: SharedLayout,
    ) -> Result<(), Vec<SyntaxError>> {
        let mut errors = Vec::new();
        for (index, label, lspan) in &b.fixups {
            let Some(target) = b.label_index.get(label.as_str()).map(|&i| b.labels[i].1) else {
                let shown = label.rsplit("::").next().unwrap_or(label);
                errors.push(
                    SyntaxError::new(*lspan, format!("unknown label `{shown}`"))
                        .expected("a label defined in this entry"),
                );
                continue;
            };
            if let Op::Branch { target: t, .. } = &mut b.insts[*index].op {
                *t = target;
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        // PTX entries end at their closing brace: an implicit `exit` there.
        let falls_through = match b.insts.last() {
            None => true,
            Some(last) => {
                !(last.guard.is_always() && matches!(last.op, Op::Exit | Op::Branch { .. }))
            }
        };
        let label_at_end = b
            .labels
            .iter()
            .any(|(_, pc, _)| *pc as usize == b.insts.len());
        if falls_through || label_at_end {
            b.insts.push(Inst {
                op: Op::Exit,
                guard: Guard::ALWAYS,
                span: close,
                text: "ret; // implicit at the end of the entry".to_string(),
                sched: Vec::new(),
            });
        }
        let (used_regs, used_preds) = crate::ir::register_counts(&b.insts);
        let launch = LaunchSpec {
            shared_bytes: shared
                .dynamic_base
                .unwrap_or(shared.static_end)
                .max(shared.static_end),
            params: b.globals.params(&self.globals),
            ..LaunchSpec::default()
        };
        self.infos.push(EntryInfo {
            name: name.to_string(),
            params,
            static_shared: shared.static_end,
            dynamic_base: shared.dynamic_base,
            unsupported: Vec::new(),
        });
        self.kernels.push(Kernel {
            name: name.to_string(),
            dialect: Dialect::Ptx,
            warp_size: 32,
            insts: b.insts,
            labels: b.labels.into_iter().map(|(n, pc, _)| (n, pc)).collect(),
            num_regs: used_regs.max(b.regs.num_slots()),
            num_preds: used_preds.max(b.regs.num_preds()),
            uniform: Default::default(),
            launch,
            span,
        });
        Ok(())
    }
}

/// Why an entry did not lower.
enum EntryError {
    /// The module itself is malformed (a duplicate entry, an unclosed body): no entry runs.
    Fatal(SyntaxError),
    /// The entry uses what atomjit does not support (or ptxas rejects): it alone cannot run.
    Unsupported {
        errors: Vec<SyntaxError>,
        params: Vec<EntryParam>,
    },
}

impl EntryError {
    fn unsupported(e: SyntaxError, params: Vec<EntryParam>) -> EntryError {
        EntryError::Unsupported {
            errors: vec![e],
            params,
        }
    }
}

impl From<SyntaxError> for EntryError {
    fn from(e: SyntaxError) -> EntryError {
        EntryError::Fatal(e)
    }
}

/// The statements of one entry body as they are lowered.
struct Body {
    regs: RegFile,
    insts: Vec<Inst>,
    /// Label name, instruction index, where it is defined.
    labels: Vec<(String, u32, Span)>,
    /// Label name to its index in `labels`.
    label_index: HashMap<String, usize>,
    /// Branches to patch: instruction index, label, where the label is used.
    fixups: Vec<(usize, String, Span)>,
    /// Every statement that did not lower, in order (the entry cannot run if there is one).
    errors: Vec<SyntaxError>,
    /// The module variables the entry uses.
    globals: EntryGlobals,
    /// The function being inlined, if any (label namespace and return label).
    frame: calls::Frame,
}

/// Reads `.TYPE name, name<N>, ...` after `.reg`.
fn reg_decl(regs: &mut RegFile, toks: &[Token], at: Span) -> Result<(), SyntaxError> {
    let mut i = 0;
    let mut kind = None;
    while let Some(t) = toks
        .get(i)
        .filter(|t| t.is_word() && t.text.starts_with('.'))
    {
        let name = &t.text[1..];
        if matches!(name, "v2" | "v4" | "v8") {
            return Err(SyntaxError::new(
                t.span,
                "vector registers are not supported",
            ));
        }
        let k = if name == "pred" {
            Kind::Pred
        } else if let Some(ty) = register_type(name) {
            Kind::Value(ty)
        } else {
            return Err(
                SyntaxError::new(t.span, format!("`{}` is not a register type", t.text)).expected(
                    ".pred .b8..b128 .u8..u64 .s8..s64 .f16 .f16x2 .bf16 .bf16x2 .f32 .f64",
                ),
            );
        };
        if kind.is_some() {
            return Err(SyntaxError::new(
                t.span,
                "a `.reg` declaration takes one type",
            ));
        }
        kind = Some(k);
        i += 1;
    }
    let Some(kind) = kind else {
        return Err(SyntaxError::new(at, "`.reg` needs a type").expected("`.reg .b32 %r<10>;`"));
    };
    let mut any = false;
    while i < toks.len() {
        let t = toks[i];
        if !t.is_word() || t.text.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
            return Err(
                SyntaxError::new(t.span, format!("`{}` is not a register name", t.text))
                    .expected("a name such as `%r` (with `<N>`) or `%r1`"),
            );
        }
        i += 1;
        let mut range = None;
        if toks.get(i).is_some_and(|c| c.is_punct("<")) {
            let n = toks.get(i + 1).filter(|n| n.is_word());
            let close = toks.get(i + 2).filter(|c| c.is_punct(">"));
            let (Some(n), Some(_)) = (n, close) else {
                return Err(
                    SyntaxError::new(t.span, "a register range is `name<N>`").expected("`%r<10>`")
                );
            };
            let count: u32 = n.text.parse().map_err(|_| {
                SyntaxError::new(n.span, format!("`{}` is not a register count", n.text))
            })?;
            range = Some(count);
            i += 3;
        }
        regs.declare(t.text, range, kind, t.span)?;
        any = true;
        match toks.get(i) {
            None => break,
            Some(c) if c.is_punct(",") => i += 1,
            Some(c) => {
                return Err(
                    SyntaxError::new(c.span, format!("unexpected {}", c.describe()))
                        .expected("`,` or `;`"),
                )
            }
        }
    }
    if !any {
        return Err(SyntaxError::new(at, "`.reg` declares no register").expected("a name"));
    }
    Ok(())
}

/// The `N` of `.align N` at `toks[i]` (the `.align` token's span is `at`): a power of two,
/// with its token.
pub(super) fn align_value<'t, 'a>(
    toks: &'t [Token<'a>],
    i: usize,
    at: Span,
) -> Result<(u32, &'t Token<'a>), SyntaxError> {
    let n = toks
        .get(i)
        .filter(|n| n.is_word())
        .ok_or_else(|| SyntaxError::new(at, "`.align` needs a power of two").expected("4"))?;
    let a = n
        .text
        .parse()
        .ok()
        .filter(|a: &u32| a.is_power_of_two())
        .ok_or_else(|| SyntaxError::new(n.span, format!("`{}` is not a power of two", n.text)))?;
    Ok((a, n))
}

/// Reads `{.align N} .TYPE name{[N]...}` (after `.shared`).
fn shared_decl(toks: &[Token], at: Span, is_extern: bool) -> Result<SharedDecl, SyntaxError> {
    let mut i = 0;
    let mut align = None;
    let mut ty = None;
    while let Some(t) = toks
        .get(i)
        .filter(|t| t.is_word() && t.text.starts_with('.'))
    {
        i += 1;
        if t.text == ".align" {
            let (a, _) = align_value(toks, i, t.span)?;
            align = Some(a);
            i += 1;
        } else if t.text == ".shared" || t.text == ".shared::cta" {
            // `.extern .shared`: the keyword repeated by the caller's slice.
        } else if let Some(v) = value_type(&t.text[1..]) {
            ty = Some(v);
        } else if matches!(t.text, ".v2" | ".v4") {
            return Err(SyntaxError::new(
                t.span,
                "vector shared variables are not supported",
            ));
        } else {
            return Err(SyntaxError::new(
                t.span,
                format!("unexpected `{}` in a .shared declaration", t.text),
            )
            .expected("`.shared .align 4 .b8 name[1024];`"));
        }
    }
    let Some(ty) = ty else {
        return Err(SyntaxError::new(at, "the .shared variable has no type")
            .expected("`.shared .align 4 .b8 name[1024];`"));
    };
    let Some(name) = toks.get(i).filter(|t| t.is_word()) else {
        return Err(SyntaxError::new(at, "the .shared variable has no name"));
    };
    i += 1;
    let mut size = ty.bytes() as u64;
    let mut unsized_array = false;
    while toks.get(i).is_some_and(|t| t.is_punct("[")) {
        if toks.get(i + 1).is_some_and(|t| t.is_punct("]")) {
            unsized_array = true;
            i += 2;
            continue;
        }
        let n = toks.get(i + 1).filter(|n| n.is_word());
        let close = toks.get(i + 2).filter(|c| c.is_punct("]"));
        let (Some(n), Some(_)) = (n, close) else {
            return Err(SyntaxError::new(name.span, "an array dimension is `[N]`"));
        };
        let dim = match operands::number(n.text) {
            Some(Ok(operands::Literal::Int { value, .. })) => value,
            _ => {
                return Err(SyntaxError::new(
                    n.span,
                    format!("`{}` is not an array length", n.text),
                ))
            }
        };
        size = size
            .checked_mul(dim)
            .ok_or_else(|| SyntaxError::new(n.span, "the array size overflows 64 bits"))?;
        i += 3;
    }
    if let Some(t) = toks.get(i) {
        let what = if t.is_punct("=") {
            "shared variables cannot be initialised".to_string()
        } else {
            format!("unexpected {} in a .shared declaration", t.describe())
        };
        return Err(SyntaxError::new(t.span, what).expected("`;`"));
    }
    if unsized_array != is_extern {
        return Err(SyntaxError::new(
            name.span,
            if is_extern {
                "an `.extern .shared` variable is an unsized array `name[]`"
            } else {
                "an unsized array `name[]` must be `.extern .shared` (dynamic shared memory)"
            },
        ));
    }
    Ok(SharedDecl {
        name: name.text.to_string(),
        align: align.unwrap_or(ty.bytes()),
        size: if is_extern { 0 } else { size },
        is_extern,
        span: name.span,
    })
}
