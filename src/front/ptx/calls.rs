//! Device functions (`.func`) and `call`, which atomjit inlines.
//!
//! # Functions
//!
//! `{.visible|.weak|.extern} .func {(RETURN PARAMS)} NAME {(PARAMS)} {.noreturn} { body }`
//! defines a function; the same header ending in `;` declares one (`.extern .func` is
//! defined in another module, which atomjit does not link: calling it is an error). Return
//! values and parameters are `.param` variables (`.param .b32 x`, `.param .align 8 .b8
//! s[16]`); register parameters (`.reg`) are rejected.
//!
//! # Calls
//!
//! `call{.uni} (r, ...), NAME, (a, ...);` (the return list and the argument list are
//! optional) is inlined where it stands: the function's body is lowered in place, in a fresh
//! register scope, with each of its `.param` names standing for the caller's argument or
//! return variable (the caller's `.param` variables, which `st.param` fills before the call
//! and `ld.param` reads after it, as NVRTC writes calls). `ret` in the body branches to the
//! end of the inlined copy; its labels are its own (`NAME#N::label`). A guarded call
//! (`@p call ...`) branches around the copy where the guard is false.
//!
//! Recursion (a function that calls itself, directly or not) cannot be inlined and is an
//! error, as are indirect calls through a register (`call (r), %rd1, (a), proto;`) and calls
//! nested more than [`MAX_DEPTH`] deep. `.param` variables of a body live in registers: see
//! `ops::param_var_access`.

use super::super::lexer::{SyntaxError, Token};
use super::super::program::ByName;
use super::operands;
use super::regs::{value_type, EntryParam, RegRef, SharedLayout};
use super::{Body, Parser};
use crate::ir::{Guard, Inst, Op, Span};

/// How deep calls may nest.
pub const MAX_DEPTH: usize = 64;

/// Largest `.param` variable, in bytes.
const MAX_PARAM_BYTES: u32 = 4096;

/// A `.func` as the module scan records it.
#[derive(Debug, Clone)]
pub struct FuncDef {
    pub rets: Vec<(String, u32)>,
    pub params: Vec<(String, u32)>,
    /// The body's tokens: from after `{` to the index of the matching `}` (`None`: declared
    /// only).
    pub body: Option<(usize, usize)>,
    pub span: Span,
}

/// The function being inlined while a body is lowered.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    /// Prefix of its labels (empty in the entry itself).
    pub prefix: String,
    /// Where its `ret` branches.
    pub ret_label: Option<String>,
    /// Its name.
    pub function: Option<String>,
}

/// Reads `{.align N} .TYPE name{[N]}` (after `.param`): the name, its size in bytes, where.
pub fn param_var_decl<'t>(
    toks: &[Token<'t>],
    at: Span,
) -> Result<(&'t str, u32, Span), SyntaxError> {
    let mut i = 0;
    let mut ty = None;
    while let Some(t) = toks
        .get(i)
        .filter(|t| t.is_word() && t.text.starts_with('.'))
    {
        i += 1;
        if t.text == ".align" {
            i += 1;
        } else if let Some(v) = value_type(&t.text[1..]) {
            ty = Some(v);
        } else if t.text == ".ptr" || t.text == ".global" || t.text == ".shared" {
            // Pointer attributes (optimisation hints).
        } else {
            return Err(SyntaxError::new(
                t.span,
                format!("unexpected `{}` in a .param declaration", t.text),
            )
            .expected("`.param .b32 name` or `.param .align 8 .b8 name[16]`"));
        }
    }
    let Some(ty) = ty else {
        return Err(
            SyntaxError::new(at, "the .param variable has no type").expected("`.param .b32 name`")
        );
    };
    let Some(name) = toks.get(i).filter(|t| t.is_word()) else {
        return Err(SyntaxError::new(at, "the .param variable has no name"));
    };
    i += 1;
    let mut bytes = ty.bytes();
    while toks.get(i).is_some_and(|t| t.is_punct("[")) {
        let n = toks.get(i + 1).filter(|n| n.is_word());
        let close = toks.get(i + 2).filter(|c| c.is_punct("]"));
        let dim = match (n.map(|n| operands::number(n.text)), close) {
            (Some(Some(Ok(operands::Literal::Int { value, .. }))), Some(_)) => value,
            _ => {
                return Err(SyntaxError::new(
                    name.span,
                    "a .param array dimension is `[N]`",
                ))
            }
        };
        bytes = u32::try_from(dim)
            .ok()
            .and_then(|d| bytes.checked_mul(d))
            .filter(|b| *b <= MAX_PARAM_BYTES)
            .ok_or_else(|| {
                SyntaxError::new(
                    name.span,
                    format!("atomjit supports .param variables up to {MAX_PARAM_BYTES} bytes"),
                )
            })?;
        i += 3;
    }
    if let Some(t) = toks.get(i) {
        return Err(SyntaxError::new(
            t.span,
            format!("unexpected {} in a .param declaration", t.describe()),
        )
        .expected("`,`, `)` or `;`"));
    }
    Ok((name.text, bytes, name.span))
}

impl<'a> Parser<'a> {
    /// `.func ...` at module scope (after the keyword): records the declaration or definition.
    pub(super) fn func(&mut self, _at: Span, external: bool) -> Result<(), SyntaxError> {
        let rets = if self.peek().is_some_and(|t| t.is_punct("(")) {
            self.pos += 1;
            self.param_list()?
        } else {
            Vec::new()
        };
        let name = self.expect_word("the function name")?;
        let params = if self.peek().is_some_and(|t| t.is_punct("(")) {
            self.pos += 1;
            self.param_list()?
        } else {
            Vec::new()
        };
        let body = loop {
            let Some(t) = self.next() else {
                return Err(self.error_expected("`{` (the function body) or `;`"));
            };
            match t.text {
                ";" => break None,
                "{" => {
                    let close = self.matching_brace(t.span)?;
                    let start = self.pos;
                    self.pos = close + 1;
                    break Some((start, close));
                }
                ".noreturn" | ".attribute" => {}
                ".maxnreg" => {
                    self.expect_word("a number")?;
                }
                ".pragma" => {
                    self.until_semicolon(t.span)?;
                }
                d if super::LINE_DIRECTIVES.contains(&d) => self.skip_line(),
                _ if t.is_punct("(") || t.is_punct(")") => {}
                _ => {
                    return Err(
                        SyntaxError::new(t.span, format!("unexpected {}", t.describe()))
                            .expected("`{` (the function body) or `;`"),
                    )
                }
            }
        };
        if external && body.is_some() {
            return Err(SyntaxError::new(
                name.span,
                "an `.extern .func` is a declaration; it has no body",
            ));
        }
        let def = FuncDef {
            rets,
            params,
            body,
            span: name.span,
        };
        match self.funcs.get(name.text) {
            Some(prev) if prev.body.is_some() && def.body.is_some() => {
                return Err(SyntaxError::new(
                    name.span,
                    format!(
                        "function `{}` is already defined (line {})",
                        name.text, prev.span.line
                    ),
                ))
            }
            Some(prev) if prev.body.is_some() => {}
            Some(_) | None => {
                self.funcs.insert(name.text.to_string(), def);
            }
        }
        Ok(())
    }

    /// `.param ... name, ...)` of a function header (after `(`, through `)`).
    fn param_list(&mut self) -> Result<Vec<(String, u32)>, SyntaxError> {
        let mut out = Vec::new();
        let mut cur: Vec<Token<'a>> = Vec::new();
        loop {
            let Some(t) = self.next() else {
                return Err(self.error_expected("`)`"));
            };
            if t.is_punct(",") || t.is_punct(")") {
                if let Some(kw) = cur.first().copied() {
                    if kw.text != ".param" {
                        return Err(SyntaxError::new(
                            kw.span,
                            format!(
                                "`{}` function parameters are not supported; NVRTC declares them `.param`",
                                kw.text
                            ),
                        )
                        .expected("`.param .TYPE name`"));
                    }
                    let (name, bytes, _) = param_var_decl(&cur[1..], kw.span)?;
                    out.push((name.to_string(), bytes));
                }
                cur.clear();
                if t.is_punct(")") {
                    return Ok(out);
                }
                continue;
            }
            cur.push(t);
        }
    }

    /// `call{.uni} {(rets),} NAME{, (args)}` (the tokens after the mnemonic): inlines `NAME`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn call(
        &mut self,
        b: &mut Body,
        shared: &SharedLayout,
        params: &ByName<EntryParam>,
        mnemonic: &Token,
        rest: &[Token],
        guard: Guard,
        span: Span,
    ) -> Result<(), SyntaxError> {
        for q in mnemonic.text.split('.').skip(1) {
            if q != "uni" {
                return Err(SyntaxError::new(
                    mnemonic.span,
                    format!("`.{q}` is not a qualifier of `call` atomjit supports"),
                )
                .expected("call or call.uni"));
            }
        }
        // The operand lists.
        let mut i = 0;
        let list = |i: &mut usize| -> Result<Vec<(String, Span)>, SyntaxError> {
            let mut out = Vec::new();
            *i += 1;
            loop {
                let Some(t) = rest.get(*i) else {
                    return Err(SyntaxError::new(span, "unclosed `(` in a call").expected("`)`"));
                };
                *i += 1;
                if t.is_punct(")") {
                    return Ok(out);
                }
                if t.is_punct(",") {
                    continue;
                }
                if !t.is_word() {
                    return Err(SyntaxError::new(
                        t.span,
                        format!("unexpected {} in a call's operand list", t.describe()),
                    )
                    .expected("a .param variable"));
                }
                out.push((t.text.to_string(), t.span));
            }
        };
        let rets = if rest.first().is_some_and(|t| t.is_punct("(")) {
            let r = list(&mut i)?;
            if !rest.get(i).is_some_and(|t| t.is_punct(",")) {
                return Err(SyntaxError::new(span, "expected `,` after the return list")
                    .expected("`call (r), f, (a);`"));
            }
            i += 1;
            r
        } else {
            Vec::new()
        };
        let Some(fname) = rest.get(i).filter(|t| t.is_word()) else {
            return Err(SyntaxError::new(span, "a call names the function it calls")
                .expected("`call (r), f, (a);`"));
        };
        i += 1;
        let args = if rest.get(i).is_some_and(|t| t.is_punct(",")) {
            i += 1;
            if !rest.get(i).is_some_and(|t| t.is_punct("(")) {
                return Err(SyntaxError::new(
                    span,
                    "expected the argument list `(a, ...)`",
                ));
            }
            list(&mut i)?
        } else {
            Vec::new()
        };
        if let Some(t) = rest.get(i) {
            return Err(SyntaxError::new(
                t.span,
                "indirect calls (through a register, with a prototype) are not supported",
            ));
        }
        if b.regs.is_register(fname.text) {
            return Err(SyntaxError::new(
                fname.span,
                "indirect calls (through a register) are not supported",
            ));
        }
        let Some(def) = self.funcs.get(fname.text).cloned() else {
            return Err(SyntaxError::new(
                fname.span,
                format!("`{}` is not a function declared in this module", fname.text),
            ));
        };
        let Some((body_start, body_end)) = def.body else {
            return Err(SyntaxError::new(
                fname.span,
                format!(
                    "`{}` is declared but not defined in this module (atomjit runs one module, it does not link)",
                    fname.text
                ),
            ));
        };
        if self.call_stack.iter().any(|f| f == fname.text) {
            return Err(SyntaxError::new(
                fname.span,
                format!(
                    "`{}` is called recursively; atomjit inlines device functions and cannot inline recursion",
                    fname.text
                ),
            ));
        }
        if self.call_stack.len() >= MAX_DEPTH {
            return Err(SyntaxError::new(
                fname.span,
                format!("calls nest more than {MAX_DEPTH} deep"),
            ));
        }
        for (what, actual, formal) in [
            ("return values", &rets, &def.rets),
            ("arguments", &args, &def.params),
        ] {
            if actual.len() != formal.len() {
                return Err(SyntaxError::new(
                    span,
                    format!(
                        "`{}` takes {} {what}, the call passes {}",
                        fname.text,
                        formal.len(),
                        actual.len()
                    ),
                ));
            }
        }
        // Resolve the actual variables before the callee's scope opens.
        let mut aliases = Vec::new();
        for ((name, nspan), (formal, bytes)) in rets
            .iter()
            .zip(&def.rets)
            .chain(args.iter().zip(&def.params))
        {
            if !b.regs.is_param_var(name) {
                return Err(SyntaxError::new(
                    *nspan,
                    format!("`{name}` is not a .param variable; call operands are .param variables (`.param .b32 {name};` before the call)"),
                ));
            }
            let r = b.regs.lookup(name, *nspan)?;
            if let RegRef::Param { bytes: have, .. } = r {
                if have < *bytes {
                    return Err(SyntaxError::new(
                        *nspan,
                        format!(
                            "`{name}` has {have} bytes; `{}` needs {bytes} for `{formal}`",
                            fname.text
                        ),
                    ));
                }
            }
            aliases.push((formal.clone(), r));
        }
        self.inline_count += 1;
        let prefix = format!("{}#{}::", fname.text, self.inline_count);
        let ret_label = format!("{prefix}$ret");
        if !guard.is_always() {
            // Where the guard is false, branch around the inlined body.
            b.fixups.push((b.insts.len(), ret_label.clone(), span));
            b.insts.push(Inst {
                op: Op::Branch {
                    target: u32::MAX,
                    uniform: false,
                },
                guard: Guard {
                    pred: guard.pred,
                    negate: !guard.negate,
                },
                span,
                text: format!(
                    "{}  // around the inlined call",
                    self.source
                        .get(span.start as usize..span.end as usize)
                        .unwrap_or("")
                ),
                sched: Vec::new(),
            });
        }
        b.regs.push_scope();
        for (formal, r) in aliases {
            b.regs.declare_alias(&formal, r, def.span)?;
        }
        let saved_frame = std::mem::replace(
            &mut b.frame,
            Frame {
                prefix,
                ret_label: Some(ret_label.clone()),
                function: Some(fname.text.to_string()),
            },
        );
        let saved_pos = self.pos;
        self.call_stack.push(fname.text.to_string());
        self.pos = body_start;
        self.body(b, shared, params, body_end);
        self.call_stack.pop();
        self.pos = saved_pos;
        b.frame = saved_frame;
        b.regs.pop_scope();
        b.label_index.insert(ret_label.clone(), b.labels.len());
        b.labels.push((ret_label, b.insts.len() as u32, span));
        Ok(())
    }
}
