//! The vISA parser: tokens to a [`Module`], every name resolved while reading (a variable must
//! be declared before its first use, as in GenX_IR; labels may be used before they are
//! defined and are resolved at the end of their kernel).
//!
//! The grammar is the one IGC's reader (`visa/CISA.y`) accepts, with the leniencies listed in
//! the module docs of [`super`]. Statements are line-oriented: each directive, label or
//! instruction ends at a newline.

use super::ast::*;
use super::lex::{lex, Kind, Tok};
use super::names::{self, Role, Signature};
use crate::front::lexer::{join, SyntaxError};
use crate::ir::Span;
use std::collections::HashMap;

/// Parses a whole vISA text.
pub fn parse(src: &str) -> Result<Module, SyntaxError> {
    let toks = lex(src)?;
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        prev: Span::default(),
        module: Module {
            version: None,
            kernels: Vec::new(),
        },
        k: None,
    };
    p.run()?;
    Ok(p.module)
}

type PResult<T> = Result<T, SyntaxError>;

fn err(span: Span, message: impl Into<String>) -> SyntaxError {
    SyntaxError::new(span, message)
}

/// The kernel being read.
struct KernelState {
    kernel: Kernel,
    /// Name scopes, innermost last: the kernel scope, then one per open `{`, with the span of
    /// its brace.
    scopes: Vec<(HashMap<String, VarId>, Span)>,
    labels: HashMap<String, LabelId>,
    /// Label operands to resolve at the end of the kernel: statement, operand, name, span and
    /// the kind the instruction needs.
    fixups: Vec<(usize, usize, String, Span, LabelKind)>,
    /// The label of a `.function` directive whose `NAME:` line may follow.
    pending_function: Option<LabelId>,
}

impl KernelState {
    fn new(kind: UnitKind, name: String, span: Span) -> KernelState {
        let mut scope = HashMap::new();
        let mut vars = Vec::new();
        for (i, p) in names::PREDEFINED.iter().enumerate() {
            let id = VarId(vars.len() as u32);
            scope.insert(p.name.to_string(), id);
            scope.insert(format!("V{i}"), id);
            vars.push(Var {
                name: p.name.to_string(),
                span: None,
                scope: 0,
                kind: VarKind::General(GeneralVar {
                    ty: p.ty,
                    num_elts: p.num_elts,
                    align: None,
                    alias: None,
                    root: id,
                    root_offset: 0,
                    predefined: Some(p.which),
                }),
                attrs: Vec::new(),
            });
        }
        for (slot, name) in names::PREDEFINED_SURFACES.iter().enumerate() {
            let id = VarId(vars.len() as u32);
            scope.insert(name.to_string(), id);
            vars.push(Var {
                name: name.to_string(),
                span: None,
                scope: 0,
                kind: VarKind::Surface {
                    num_elts: 1,
                    v_name: Some(name.to_string()),
                    predefined: Some(slot as u32),
                },
                attrs: Vec::new(),
            });
        }
        KernelState {
            kernel: Kernel {
                kind,
                name,
                span,
                vars,
                inputs: Vec::new(),
                attrs: Vec::new(),
                funcdecls: Vec::new(),
                labels: Vec::new(),
                stmts: Vec::new(),
            },
            scopes: vec![(scope, span)],
            labels: HashMap::new(),
            fixups: Vec::new(),
            pending_function: None,
        }
    }

    fn lookup(&self, name: &str) -> Option<VarId> {
        self.scopes
            .iter()
            .rev()
            .find_map(|(s, _)| s.get(name).copied())
    }
}

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Tok<'a>>,
    pos: usize,
    /// The span of the last token consumed.
    prev: Span,
    module: Module,
    k: Option<KernelState>,
}

/// How an operand is read: by the role an instruction's signature gives it, or generically.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    Role(Role),
    Generic,
}

impl<'a> Parser<'a> {
    // ------------------------------------------------------------------ token helpers

    fn peek(&self) -> &Tok<'a> {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }
    fn peek_at(&self, k: usize) -> &Tok<'a> {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)]
    }
    fn bump(&mut self) -> Tok<'a> {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        self.prev = t.span;
        t
    }
    fn at_eof(&self) -> bool {
        let t = self.peek();
        t.is_newline() && t.text.is_empty()
    }
    /// Is the current token glued to the previous one (no blank between)?
    fn glued(&self) -> bool {
        self.pos > 0 && self.toks[self.pos - 1].span.end == self.peek().span.start
    }
    /// An error at the current token.
    fn unexpected(&self, expected: &str) -> SyntaxError {
        let t = self.peek();
        err(t.span, format!("unexpected {}", t.describe())).expected(expected)
    }
    fn expect_punct(&mut self, p: &str, expected: &str) -> PResult<Span> {
        if self.peek().is_punct(p) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(expected))
        }
    }
    fn expect_ident(&mut self, expected: &str) -> PResult<Tok<'a>> {
        if self.peek().is_ident() {
            Ok(self.bump())
        } else {
            Err(self.unexpected(expected))
        }
    }
    fn span_from(&self, start: Span) -> Span {
        join(start, self.prev)
    }
    fn kernel(&self) -> &KernelState {
        self.k.as_ref().expect("a kernel is open")
    }
    fn kernel_mut(&mut self) -> &mut KernelState {
        self.k.as_mut().expect("a kernel is open")
    }

    // ------------------------------------------------------------------ statements

    fn run(&mut self) -> PResult<()> {
        loop {
            while self.peek().is_newline() && !self.at_eof() {
                self.bump();
            }
            if self.at_eof() {
                break;
            }
            self.statement()?;
            if !self.peek().is_newline() {
                return Err(self.unexpected("the end of the line"));
            }
        }
        self.finish_kernel()
    }

    fn statement(&mut self) -> PResult<()> {
        let t = self.peek().clone();
        if t.is_punct(".") && self.peek_at(1).is_ident() && self.peek_at(1).span.start == t.span.end
        {
            return self.directive();
        }
        let in_kernel = self.k.is_some();
        let needs_kernel = |what: &str| {
            err(t.span, format!("{what} outside a kernel"))
                .expected("a `.kernel` directive before it")
        };
        if t.kind == Kind::Label {
            if !in_kernel {
                return Err(needs_kernel("a label"));
            }
            self.bump();
            let name = &t.text[..t.text.len() - 1];
            return self.define_label(name, t.span);
        }
        if t.is_ident() && self.peek_at(1).is_punct(":") && self.peek_at(1).span.start == t.span.end
        {
            // An indented label: IGC only reads labels in the first column; accept it.
            if !in_kernel {
                return Err(needs_kernel("a label"));
            }
            self.bump();
            self.bump();
            return self.define_label(t.text, join(t.span, self.prev));
        }
        if t.is_punct("{") {
            if !in_kernel {
                return Err(needs_kernel("a scope"));
            }
            self.bump();
            self.kernel_mut().scopes.push((HashMap::new(), t.span));
            return Ok(());
        }
        if t.is_punct("}") {
            self.bump();
            if self.k.as_ref().is_some_and(|k| k.scopes.len() > 1) {
                self.kernel_mut().scopes.pop();
                return Ok(());
            }
            return Err(err(t.span, "`}` without a matching `{`"));
        }
        if !in_kernel {
            return Err(needs_kernel("an instruction"));
        }
        self.kernel_mut().pending_function = None;
        self.instruction()
    }

    fn define_label(&mut self, name: &str, span: Span) -> PResult<()> {
        let k = self.kernel_mut();
        if let Some(id) = k.pending_function.take() {
            if k.kernel.label(id).name == name {
                // `.function NAME` then `NAME:`: the same subroutine label.
                return Ok(());
            }
        }
        if let Some(&old) = k.labels.get(name) {
            let line = k.kernel.label(old).span.line;
            return Err(err(
                span,
                format!("label `{name}` is already defined (line {line})"),
            ));
        }
        let id = LabelId(k.kernel.labels.len() as u32);
        let stmt = k.kernel.stmts.len();
        k.kernel.labels.push(Label {
            name: name.to_string(),
            kind: LabelKind::Block,
            span,
            stmt,
        });
        k.labels.insert(name.to_string(), id);
        k.kernel.stmts.push(Stmt::Label(id));
        Ok(())
    }

    fn finish_kernel(&mut self) -> PResult<()> {
        let Some(mut k) = self.k.take() else {
            return Ok(());
        };
        if k.scopes.len() > 1 {
            let (_, brace) = k.scopes.last().expect("a scope");
            return Err(err(*brace, "unclosed `{`").expected("a matching `}`"));
        }
        for (stmt, op, name, span, want) in std::mem::take(&mut k.fixups) {
            let Some(&id) = k.labels.get(&name) else {
                return Err(err(span, format!("undefined label `{name}`")));
            };
            let label = k.kernel.label(id);
            if label.kind != want {
                let msg = match want {
                    LabelKind::Block => format!(
                        "`{name}` is a subroutine label (`.function`); only block labels are \
                         branch targets"
                    ),
                    LabelKind::Subroutine => format!(
                        "`{name}` is a block label; a call needs a subroutine (`.function`)"
                    ),
                };
                return Err(err(span, msg));
            }
            if let Some(Stmt::Inst(inst)) = k.kernel.stmts.get_mut(stmt) {
                inst.operands[op].kind = OperandKind::Label(id);
            }
        }
        self.module.kernels.push(k.kernel);
        Ok(())
    }

    // ------------------------------------------------------------------ directives

    fn directive(&mut self) -> PResult<()> {
        let dot = self.bump();
        let name_tok = self.bump();
        let span = join(dot.span, name_tok.span);
        let name = name_tok.text;
        if name != "version" && name != "kernel" && name != "global_function" && self.k.is_none() {
            return Err(err(span, format!("`.{name}` outside a kernel"))
                .expected("a `.kernel` directive before it"));
        }
        match name {
            "version" => self.dir_version(span),
            "kernel" => self.dir_kernel(span, UnitKind::Kernel),
            "global_function" => self.dir_kernel(span, UnitKind::GlobalFunction),
            "decl" => self.dir_decl(span),
            "input" => self.dir_input(span, InputKind::Input),
            "parameter" => self.dir_input(span, InputKind::Parameter),
            _ if name.starts_with("implicit") => {
                self.dir_input(span, InputKind::Implicit(name.to_string()))
            }
            "kernel_attr" => {
                let attr = self.attr(span)?;
                self.kernel_mut().kernel.attrs.push(attr);
                Ok(())
            }
            "function" => self.dir_function(span),
            "funcdecl" => {
                let (name, _) = self.ident_or_string("a function name")?;
                self.kernel_mut().kernel.funcdecls.push(name);
                Ok(())
            }
            // Debug information: `.file "name"` and `.loc LINE` carry no semantics.
            "file" => match self.bump().kind {
                Kind::Str(_) => Ok(()),
                Kind::Ident
                | Kind::Label
                | Kind::Int(_)
                | Kind::Float
                | Kind::Punct
                | Kind::Newline => Err(err(self.prev, "`.file` takes a string literal")),
            },
            "loc" => match self.bump().kind {
                Kind::Int(_) => Ok(()),
                Kind::Str(_)
                | Kind::Ident
                | Kind::Label
                | Kind::Float
                | Kind::Punct
                | Kind::Newline => Err(err(self.prev, "`.loc` takes a line number")),
            },
            _ => Err(err(span, format!("unknown directive `.{name}`")).expected(
                "`.version`, `.kernel`, `.decl`, `.input`, `.parameter`, `.implicit_*`, \
                 `.kernel_attr`, `.function`, `.global_function`, `.funcdecl`",
            )),
        }
    }

    fn dir_version(&mut self, span: Span) -> PResult<()> {
        if self.k.is_some() {
            return Err(err(span, "`.version` inside a kernel")
                .expected("`.version` before the first `.kernel`"));
        }
        if let Some(v) = &self.module.version {
            return Err(err(
                span,
                format!("a second `.version` (the first is on line {})", v.span.line),
            ));
        }
        let major = self.small_int("the major version")?;
        self.expect_punct(".", "`.` between the major and minor version")?;
        let minor = self.small_int("the minor version")?;
        self.module.version = Some(Version {
            major,
            minor,
            span: self.span_from(span),
        });
        Ok(())
    }

    /// A decimal literal of at most 255 (a version number).
    fn small_int(&mut self, what: &str) -> PResult<u32> {
        match self.peek().kind {
            Kind::Int(v) if v <= 255 => {
                self.bump();
                Ok(v as u32)
            }
            Kind::Int(_) => Err(err(self.peek().span, format!("{what} must be at most 255"))),
            Kind::Ident
            | Kind::Label
            | Kind::Float
            | Kind::Str(_)
            | Kind::Punct
            | Kind::Newline => Err(self.unexpected(what)),
        }
    }

    fn ident_or_string(&mut self, what: &str) -> PResult<(String, Span)> {
        let t = self.peek().clone();
        match t.kind {
            Kind::Str(s) => {
                self.bump();
                Ok((s, t.span))
            }
            Kind::Ident => {
                self.bump();
                Ok((t.text.to_string(), t.span))
            }
            Kind::Label | Kind::Int(_) | Kind::Float | Kind::Punct | Kind::Newline => {
                Err(self.unexpected(what))
            }
        }
    }

    fn dir_kernel(&mut self, span: Span, kind: UnitKind) -> PResult<()> {
        self.finish_kernel()?;
        let (name, _) = self.ident_or_string("the kernel's name")?;
        if let Some(k) = self.module.kernels.iter().find(|k| k.name == name) {
            return Err(err(
                self.prev,
                format!("`{name}` is already defined (line {})", k.span.line),
            ));
        }
        self.k = Some(KernelState::new(kind, name, self.span_from(span)));
        Ok(())
    }

    fn dir_function(&mut self, span: Span) -> PResult<()> {
        let (name, name_span) = self.ident_or_string("the function's name")?;
        let span = join(span, name_span);
        let k = self.kernel_mut();
        if let Some(&old) = k.labels.get(&name) {
            let line = k.kernel.label(old).span.line;
            return Err(err(
                name_span,
                format!("label `{name}` is already defined (line {line})"),
            ));
        }
        let id = LabelId(k.kernel.labels.len() as u32);
        let stmt = k.kernel.stmts.len();
        k.kernel.labels.push(Label {
            name: name.clone(),
            kind: LabelKind::Subroutine,
            span,
            stmt,
        });
        k.labels.insert(name, id);
        k.kernel.stmts.push(Stmt::Function { label: id, span });
        k.pending_function = Some(id);
        Ok(())
    }

    /// `NAME`, `NAME=`, `NAME=INT` or `NAME="text"`.
    fn attr(&mut self, start: Span) -> PResult<Attr> {
        let name = self.expect_ident("an attribute name")?;
        let mut value = AttrValue::None;
        if self.peek().is_punct("=") {
            self.bump();
            let t = self.peek().clone();
            value = match t.kind {
                Kind::Str(s) => {
                    self.bump();
                    AttrValue::Str(s)
                }
                Kind::Newline => AttrValue::None,
                Kind::Punct if t.text == "," || t.text == "}" => AttrValue::None,
                Kind::Ident | Kind::Label | Kind::Int(_) | Kind::Float | Kind::Punct => {
                    let (v, vspan) = self.expr()?;
                    AttrValue::Int(i64::try_from(v).map_err(|_| {
                        err(
                            vspan,
                            "attribute value out of range (a 64-bit signed integer)",
                        )
                    })?)
                }
            };
        }
        Ok(Attr {
            name: name.text.to_string(),
            value,
            span: join(start, self.prev),
        })
    }

    /// `attrs={a, b=1, c="x"}`.
    fn attr_list(&mut self) -> PResult<Vec<Attr>> {
        self.expect_punct("{", "`{` opening the attribute list")?;
        let mut out = Vec::new();
        loop {
            let start = self.peek().span;
            out.push(self.attr(start)?);
            if self.peek().is_punct(",") {
                self.bump();
                continue;
            }
            self.expect_punct("}", "`,` or `}` in the attribute list")?;
            return Ok(out);
        }
    }

    fn dir_decl(&mut self, start: Span) -> PResult<()> {
        let name_tok = self.expect_ident("the declared variable's name")?;
        if name_tok.text.starts_with('%') {
            return Err(err(
                name_tok.span,
                format!(
                    "`{}`: `%` names are predefined variables; a declaration cannot use one",
                    name_tok.text
                ),
            ));
        }
        let name = name_tok.text.to_string();
        // Every `key=value`, in any order, each at most once.
        let mut v_type: Option<char> = None;
        let mut ty: Option<(ElemType, Span)> = None;
        let mut num_elts: Option<(i128, Span)> = None;
        let mut align: Option<(u32, Span)> = None;
        let mut alias: Option<(VarId, u32, Span, Span)> = None;
        let mut v_name: Option<(String, Span)> = None;
        let mut attrs: Option<(Vec<Attr>, Span)> = None;
        let mut seen: Vec<&str> = Vec::new();
        while !self.peek().is_newline() {
            let key =
                self.expect_ident("a declaration attribute (`v_type=`, `type=`, `num_elts=`...)")?;
            let key_span = key.span;
            if seen.contains(&key.text) {
                return Err(err(key_span, format!("`{}=` given twice", key.text)));
            }
            self.expect_punct("=", &format!("`=` after `{}`", key.text))?;
            match key.text {
                "v_type" => {
                    let t = self.expect_ident("a variable class `G`, `P`, `A`, `S` or `T`")?;
                    let c = match t.text {
                        "G" => 'G',
                        "P" => 'P',
                        "A" => 'A',
                        "S" => 'S',
                        "T" => 'T',
                        other => {
                            return Err(err(t.span, format!("unknown variable class `{other}`"))
                                .expected("`G`, `P`, `A`, `S` or `T`"))
                        }
                    };
                    v_type = Some(c);
                }
                "type" => {
                    let t = self.expect_ident("an element type")?;
                    let Some(e) = names::type_by_name(t.text) else {
                        return Err(err(t.span, format!("unknown type `{}`", t.text))
                            .expected(names::DECL_TYPES));
                    };
                    ty = Some((e, t.span));
                }
                "num_elts" => num_elts = Some(self.expr()?),
                "align" => align = Some(self.align()?),
                "alias" => {
                    let open = self.expect_punct("<", "`<` opening `alias=<V, offset>`")?;
                    let target = self.expect_ident("the aliased variable")?;
                    let Some(id) = self.kernel().lookup(target.text) else {
                        return Err(err(
                            target.span,
                            format!("alias of an unknown variable `{}`", target.text),
                        ));
                    };
                    self.expect_punct(",", "`,` then the alias offset")?;
                    let (off, off_span) = self.expr()?;
                    self.expect_punct(">", "`>` closing `alias=<V, offset>`")?;
                    let off = u32::try_from(off).map_err(|_| {
                        err(off_span, "an alias offset is a byte count from 0 to 2^32-1")
                    })?;
                    alias = Some((id, off, target.span, join(open, self.prev)));
                }
                "v_name" => {
                    let t = self.expect_ident("a name")?;
                    v_name = Some((t.text.to_string(), t.span));
                }
                "attrs" => {
                    let s = self.peek().span;
                    attrs = Some((self.attr_list()?, join(s, self.prev)));
                }
                other => return Err(err(
                    key_span,
                    format!("unknown declaration attribute `{other}=`"),
                )
                .expected(
                    "`v_type=`, `type=`, `num_elts=`, `align=`, `alias=`, `v_name=` or `attrs=`",
                )),
            }
            seen.push(key.text);
        }
        let decl_span = join(start, self.prev);
        let Some(class) = v_type else {
            return Err(err(decl_span, format!("`.decl {name}` has no `v_type=`"))
                .expected("`v_type=G`, `P`, `A`, `S` or `T`"));
        };
        let Some((n, n_span)) = num_elts else {
            return Err(err(decl_span, format!("`.decl {name}` has no `num_elts=`")));
        };
        let class_name = match class {
            'G' => "a general",
            'P' => "a predicate",
            'A' => "an address",
            'S' => "a sampler",
            _ => "a surface",
        };
        let refuse = |what: &str, span: Span| {
            Err(err(
                span,
                format!("`{what}=` is not allowed for {class_name} variable"),
            ))
        };
        if class != 'G' {
            if let Some((_, s)) = ty {
                return refuse("type", s);
            }
            if let Some((_, s)) = align {
                return refuse("align", s);
            }
            if let Some((_, _, _, s)) = alias {
                return refuse("alias", s);
            }
        }
        if matches!(class, 'G' | 'P' | 'A') {
            if let Some((_, s)) = &v_name {
                return refuse("v_name", *s);
            }
        }
        let (lo, hi, what) = match class {
            'G' => (1, 4096, "1 to 4096"),
            'P' => (1, 32, "1, 2, 4, 8, 16 or 32"),
            'A' => (1, 16, "1 to 16"),
            _ => (1, 4096, "1 to 4096"),
        };
        if n < lo || n > hi || (class == 'P' && !(n as u32).is_power_of_two()) {
            return Err(err(
                n_span,
                format!("num_elts={n} is out of range for {class_name} variable ({what})"),
            ));
        }
        let n = n as u32;
        let kind = match class {
            'G' => {
                let Some((ty, ty_span)) = ty else {
                    return Err(err(decl_span, format!("`.decl {name}` has no `type=`"))
                        .expected(names::DECL_TYPES));
                };
                if matches!(
                    ty,
                    ElemType::Bool | ElemType::V | ElemType::UV | ElemType::VF
                ) {
                    return Err(err(
                        ty_span,
                        format!("a general variable cannot have type `{}`", ty.name()),
                    )
                    .expected(names::DECL_TYPES));
                }
                let size = n * ty.size();
                let me = VarId(self.kernel().kernel.vars.len() as u32);
                let (root, root_offset, alias) = match alias {
                    None => (me, 0, None),
                    Some((target, off, target_span, _)) => {
                        let k = &self.kernel().kernel;
                        let tv = k.var(target);
                        let Some(tg) = tv.general() else {
                            return Err(err(target_span, format!("`{}` is not a general variable; only general variables can be aliased", tv.name)));
                        };
                        let tsize = tg.byte_size();
                        if u64::from(off) + u64::from(size) > u64::from(tsize) {
                            return Err(err(
                                target_span,
                                format!(
                                    "alias past the end of `{}`: {size} bytes at offset {off} of a {tsize}-byte variable",
                                    tv.name
                                ),
                            ));
                        }
                        (tg.root, tg.root_offset + off, Some((target, off)))
                    }
                };
                VarKind::General(GeneralVar {
                    ty,
                    num_elts: n,
                    align: align.map(|a| a.0),
                    alias,
                    root,
                    root_offset,
                    predefined: None,
                })
            }
            'P' => VarKind::Predicate { num_elts: n },
            'A' => VarKind::Address { num_elts: n },
            'S' => VarKind::Sampler {
                num_elts: n,
                v_name: v_name.map(|v| v.0),
            },
            _ => VarKind::Surface {
                num_elts: n,
                v_name: v_name.map(|v| v.0),
                predefined: None,
            },
        };
        self.declare(
            name,
            name_tok.span,
            decl_span,
            kind,
            attrs.map(|a| a.0).unwrap_or_default(),
        )
    }

    fn declare(
        &mut self,
        name: String,
        name_span: Span,
        span: Span,
        kind: VarKind,
        attrs: Vec<Attr>,
    ) -> PResult<()> {
        let k = self.kernel_mut();
        let depth = k.scopes.len() as u32 - 1;
        let (scope, _) = k.scopes.last_mut().expect("the kernel scope");
        if let Some(&old) = scope.get(&name) {
            let v = &k.kernel.vars[old.0 as usize];
            let msg = match v.span {
                Some(s) => format!("`{name}` is already declared (line {})", s.line),
                None => format!("`{name}` is a predefined variable (`{}`)", v.name),
            };
            return Err(err(name_span, msg));
        }
        let id = VarId(k.kernel.vars.len() as u32);
        scope.insert(name.clone(), id);
        k.kernel.vars.push(Var {
            name,
            span: Some(span),
            scope: depth,
            kind,
            attrs,
        });
        Ok(())
    }

    /// `align=`: a name (`dword`, `hword`, `GRF`, `wordx32`...) or a byte count.
    fn align(&mut self) -> PResult<(u32, Span)> {
        let t = self.peek().clone();
        if t.is_ident() {
            self.bump();
            return match names::align_bytes(t.text) {
                Some(b) => Ok((b, t.span)),
                None => Err(err(t.span, format!("unknown alignment `{}`", t.text)).expected(
                    "byte, word, dword, qword, oword, GRF, GRFx2, hword, wordx32, wordx64 or a byte count",
                )),
            };
        }
        let (v, span) = self.expr()?;
        match u32::try_from(v) {
            Ok(b) if b.is_power_of_two() && b <= 128 => Ok((b, span)),
            Ok(_) | Err(_) => Err(err(span, format!("invalid alignment {v}"))
                .expected("1, 2, 4, 8, 16, 32, 64 or 128 bytes")),
        }
    }

    /// `.input V offset=N size=N`, `.parameter V size=N`, `.implicit_X V offset=N size=N`.
    fn dir_input(&mut self, start: Span, kind: InputKind) -> PResult<()> {
        let name = self.expect_ident("the input variable")?;
        let Some(id) = self.kernel().lookup(name.text) else {
            return Err(err(name.span, format!("unknown variable `{}`", name.text)));
        };
        let default_size = match &self.kernel().kernel.var(id).kind {
            VarKind::General(g) => g.byte_size(),
            VarKind::Surface { num_elts, .. } | VarKind::Sampler { num_elts, .. } => 4 * num_elts,
            VarKind::Predicate { .. } | VarKind::Address { .. } => {
                return Err(err(
                    name.span,
                    format!(
                        "`{}` cannot be an input: inputs are general, surface or sampler variables",
                        name.text
                    ),
                ))
            }
        };
        let mut offset = None;
        let mut size = None;
        while !self.peek().is_newline() {
            let key = self.expect_ident("`offset=`, `size=` or `attrs=`")?;
            self.expect_punct("=", &format!("`=` after `{}`", key.text))?;
            let slot = match key.text {
                "offset" if kind != InputKind::Parameter => &mut offset,
                "size" => &mut size,
                "attrs" => {
                    self.attr_list()?;
                    continue;
                }
                other => {
                    return Err(err(key.span, format!("unknown input attribute `{other}=`"))
                        .expected(if kind == InputKind::Parameter {
                            "`size=`"
                        } else {
                            "`offset=` or `size=`"
                        }))
                }
            };
            if slot.is_some() {
                return Err(err(key.span, format!("`{}=` given twice", key.text)));
            }
            let (v, span) = self.expr()?;
            let v = u32::try_from(v)
                .ok()
                .filter(|&v| v <= 0xffff)
                .ok_or_else(|| err(span, format!("{} must be from 0 to 65535 bytes", key.text)))?;
            *slot = Some(v);
        }
        let span = join(start, self.prev);
        self.kernel_mut().kernel.inputs.push(Input {
            kind,
            var: id,
            offset: offset.unwrap_or(0),
            size: size.unwrap_or(default_size),
            span,
        });
        Ok(())
    }

    // ------------------------------------------------------------------ integer expressions

    /// An integer expression: literals, `( )`, unary `- ~ !`, `* / %`, `+ -`, and
    /// `%sizeof V` / `%sizeof(V)` (the byte size of a general variable; `GRF` is a register).
    /// Values are kept within ±2^64.
    fn expr(&mut self) -> PResult<(i128, Span)> {
        let start = self.peek().span;
        let v = self.expr_add()?;
        Ok((v, join(start, self.prev)))
    }

    fn check_range(&self, v: Option<i128>, start: Span) -> PResult<i128> {
        const LIMIT: i128 = 1 << 64;
        match v {
            Some(v) if (-LIMIT..LIMIT).contains(&v) => Ok(v),
            Some(_) | None => Err(err(
                join(start, self.prev),
                "integer value out of range (more than 64 bits)",
            )),
        }
    }

    fn expr_add(&mut self) -> PResult<i128> {
        let start = self.peek().span;
        let mut v = self.expr_mul()?;
        loop {
            let t = self.peek();
            let add = if t.is_punct("+") {
                true
            } else if t.is_punct("-") {
                false
            } else {
                return Ok(v);
            };
            self.bump();
            let r = self.expr_mul()?;
            v = self.check_range(
                if add {
                    v.checked_add(r)
                } else {
                    v.checked_sub(r)
                },
                start,
            )?;
        }
    }

    fn expr_mul(&mut self) -> PResult<i128> {
        let start = self.peek().span;
        let mut v = self.expr_unary()?;
        loop {
            let op = if self.peek().is_punct("*") {
                '*'
            } else if self.peek().is_punct("/") {
                '/'
            } else if self.peek().is_punct("%") {
                '%'
            } else {
                return Ok(v);
            };
            self.bump();
            let rs = self.peek().span;
            let r = self.expr_unary()?;
            if op != '*' && r == 0 {
                return Err(err(join(rs, self.prev), "division by zero"));
            }
            v = self.check_range(
                match op {
                    '*' => v.checked_mul(r),
                    '/' => v.checked_div(r),
                    _ => v.checked_rem(r),
                },
                start,
            )?;
        }
    }

    fn expr_unary(&mut self) -> PResult<i128> {
        let start = self.peek().span;
        if self.peek().is_punct("-") {
            self.bump();
            let v = self.expr_unary()?;
            return self.check_range(v.checked_neg(), start);
        }
        if self.peek().is_punct("~") {
            self.bump();
            let v = self.expr_unary()?;
            return self.check_range(Some(!v), start);
        }
        if self.peek().is_punct("!") {
            self.bump();
            let v = self.expr_unary()?;
            return Ok(i128::from(v == 0));
        }
        self.expr_primary()
    }

    fn expr_primary(&mut self) -> PResult<i128> {
        let t = self.peek().clone();
        match t.kind {
            Kind::Int(v) => {
                self.bump();
                Ok(i128::from(v))
            }
            Kind::Punct if t.text == "(" => {
                self.bump();
                let v = self.expr_add()?;
                self.expect_punct(")", "`)` closing the expression")?;
                Ok(v)
            }
            Kind::Ident if t.text == "%sizeof" => {
                self.bump();
                let paren = self.peek().is_punct("(");
                if paren {
                    self.bump();
                }
                let name = self.expect_ident("a variable name or `GRF` after `%sizeof`")?;
                if paren {
                    self.expect_punct(")", "`)` closing `%sizeof(`")?;
                }
                let size = match self.kernel().lookup(name.text) {
                    Some(id) => match &self.kernel().kernel.var(id).kind {
                        VarKind::General(g) => g.byte_size(),
                        VarKind::Predicate { .. }
                        | VarKind::Address { .. }
                        | VarKind::Surface { .. }
                        | VarKind::Sampler { .. } => {
                            return Err(err(
                                name.span,
                                format!("`%sizeof {}`: not a general variable", name.text),
                            ))
                        }
                    },
                    None if name.text == "GRF" => GRF_BYTES,
                    None => {
                        return Err(err(name.span, format!("unknown variable `{}`", name.text)))
                    }
                };
                Ok(i128::from(size))
            }
            Kind::Ident
            | Kind::Label
            | Kind::Float
            | Kind::Str(_)
            | Kind::Punct
            | Kind::Newline => Err(self.unexpected("an integer")),
        }
    }

    /// An expression that must fit in `0..=max`.
    fn expr_u32(&mut self, what: &str, max: u32) -> PResult<(u32, Span)> {
        let (v, span) = self.expr()?;
        match u32::try_from(v) {
            Ok(v) if v <= max => Ok((v, span)),
            Ok(_) | Err(_) => Err(err(
                span,
                format!("{what} must be from 0 to {max} (it is {v})"),
            )),
        }
    }

    // ------------------------------------------------------------------ instructions

    fn instruction(&mut self) -> PResult<()> {
        let start = self.peek().span;
        let pred = if self.peek().is_punct("(") {
            Some(self.predicate()?)
        } else {
            None
        };
        let mn = self.expect_ident("an instruction mnemonic")?;
        let mut modifiers = Vec::new();
        while self.peek().is_punct(".") {
            let dot = self.bump();
            let t = self.peek().clone();
            match t.kind {
                Kind::Ident | Kind::Int(_) => {
                    self.bump();
                    modifiers.push(Modifier {
                        text: t.text.to_string(),
                        span: join(dot.span, t.span),
                    });
                }
                Kind::Label | Kind::Float | Kind::Str(_) | Kind::Punct | Kind::Newline => {
                    return Err(self.unexpected("a modifier name after `.`"))
                }
            }
        }
        let sig = names::signature(mn.text);
        let sat = modifiers.iter().any(|m| m.text == "sat");
        let kind = self.decode(mn.text, mn.span, &modifiers, sig.as_ref())?;
        if let (Some(p), Some(sig)) = (&pred, &sig) {
            if !sig.pred {
                return Err(err(p.span, format!("`{}` cannot be predicated", mn.text)));
            }
        }
        let mut kind = kind;
        if let InstKind::SvmBlockLd { unaligned, .. } | InstKind::SvmBlockSt { unaligned, .. } =
            kind
        {
            // `svm_block_ld (N)`: the parentheses hold a count of owords, not an execution size.
            let owords = self.oword_count()?;
            kind = if mn.text == "svm_block_ld" {
                InstKind::SvmBlockLd { owords, unaligned }
            } else {
                InstKind::SvmBlockSt { owords, unaligned }
            };
        }
        let exec = if self.at_exec_size() {
            Some(self.exec_size()?)
        } else {
            None
        };
        if let Some(sig) = &sig {
            match (&exec, sig.exec) {
                (None, true) => return Err(self.unexpected("an execution size such as `(M1, 16)`")),
                (Some(e), false) => {
                    return Err(err(
                        e.span,
                        format!("`{}` takes no execution size", mn.text),
                    ))
                }
                (Some(_), true) | (None, false) => {}
            }
        }
        let mut operands = Vec::new();
        let exec_size = match kind {
            // A block access's address is one scalar.
            InstKind::SvmBlockLd { .. } | InstKind::SvmBlockSt { .. } => Some(1),
            InstKind::SvmAtomic { .. }
            | InstKind::SvmGather { .. }
            | InstKind::SvmScatter { .. }
            | InstKind::Cmp(_)
            | InstKind::Fence { .. }
            | InstKind::Branch
            | InstKind::Plain
            | InstKind::Unknown => exec.map(|e| e.size),
        };
        loop {
            let index = operands.len();
            let want = match &sig {
                Some(sig) => match sig.operands.get(index) {
                    Some(&r) => Want::Role(r),
                    None => {
                        if !self.peek().is_newline() {
                            return Err(err(
                                self.peek().span,
                                format!(
                                    "too many operands: `{}` takes {}",
                                    mn.text,
                                    sig.operands.len()
                                ),
                            )
                            .expected("the end of the line"));
                        }
                        break;
                    }
                },
                None => {
                    if self.peek().is_newline() {
                        break;
                    }
                    Want::Generic
                }
            };
            if self.peek().is_newline() {
                return Err(self.unexpected(&names::role_expectation(match want {
                    Want::Role(r) => r,
                    Want::Generic => Role::Src,
                })));
            }
            let stmt = self.kernel().kernel.stmts.len();
            operands.push(self.operand(want, exec_size, stmt, index)?);
        }
        let span = join(start, self.prev);
        self.kernel_mut().kernel.stmts.push(Stmt::Inst(Inst {
            span,
            pred,
            mnemonic: mn.text.to_string(),
            mnemonic_span: mn.span,
            modifiers,
            sat,
            exec,
            operands,
            kind,
        }));
        Ok(())
    }

    /// What the modifiers say, checked against what the mnemonic accepts.
    fn decode(
        &self,
        mnemonic: &str,
        mn_span: Span,
        mods: &[Modifier],
        sig: Option<&Signature>,
    ) -> PResult<InstKind> {
        let Some(sig) = sig else {
            return Ok(InstKind::Unknown);
        };
        let mods_span = |from: usize| {
            mods[from..]
                .iter()
                .map(|m| m.span)
                .reduce(join)
                .unwrap_or(mn_span)
        };
        match sig.class {
            names::Class::SvmAtomic => {
                let Some(op_mod) = mods.first() else {
                    return Err(err(
                        mn_span,
                        format!("`{mnemonic}` needs an operation (`{mnemonic}.add`)"),
                    )
                    .expected(names::ATOMIC_OPS));
                };
                // The document's upper-case spelling takes its op names in either case.
                let name = if mnemonic == "SVM_ATOMIC" {
                    op_mod.text.to_ascii_lowercase()
                } else {
                    op_mod.text.clone()
                };
                let Some(op) = AtomicOp::from_name(&name) else {
                    return Err(err(
                        op_mod.span,
                        format!("unknown atomic operation `{}`", op_mod.text),
                    )
                    .expected(names::ATOMIC_OPS));
                };
                let bits = match mods.get(1) {
                    None => 32,
                    Some(m) => match m.text.as_str() {
                        "16" => 16,
                        "32" => 32,
                        "64" => 64,
                        _ => {
                            return Err(err(m.span, format!("unknown atomic width `{}`", m.text))
                                .expected("`.16`, `.32` or `.64`"))
                        }
                    },
                };
                if mods.len() > 2 {
                    return Err(err(
                        mods_span(2),
                        "an atomic takes an operation and a width, nothing more",
                    ));
                }
                Ok(InstKind::SvmAtomic { op, bits })
            }
            names::Class::SvmGatherScatter => {
                let num = |i: usize, allowed: &[u32], what: &str| -> PResult<u32> {
                    let Some(m) = mods.get(i) else {
                        return Err(err(mods_span(0), format!("`{mnemonic}` needs a block size and a block count (`{mnemonic}.4.1`)")));
                    };
                    match m.text.parse::<u32>() {
                        Ok(v) if allowed.contains(&v) => Ok(v),
                        Ok(_) | Err(_) => Err(err(m.span, format!("invalid {what} `{}`", m.text))
                            .expected(
                                allowed
                                    .iter()
                                    .map(|v| v.to_string())
                                    .collect::<Vec<_>>()
                                    .join(", "),
                            )),
                    }
                };
                let block_bytes = num(0, &[1, 4, 8], "block size")?;
                let num_blocks = num(1, &[1, 2, 4, 8], "block count")?;
                if mods.len() > 2 {
                    return Err(err(
                        mods_span(2),
                        format!("`{mnemonic}` takes a block size and a block count, nothing more"),
                    ));
                }
                Ok(if mnemonic == "svm_gather" {
                    InstKind::SvmGather {
                        block_bytes,
                        num_blocks,
                    }
                } else {
                    InstKind::SvmScatter {
                        block_bytes,
                        num_blocks,
                    }
                })
            }
            names::Class::Cmp => {
                let Some(m) = mods.first() else {
                    return Err(err(mn_span, "`cmp` needs a relation (`cmp.eq`)")
                        .expected("eq, ne, gt, ge, lt or le"));
                };
                let rel = match m.text.as_str() {
                    "eq" | "EQ" => CmpRel::Eq,
                    "ne" | "NE" => CmpRel::Ne,
                    "gt" | "GT" => CmpRel::Gt,
                    "ge" | "GE" => CmpRel::Ge,
                    "lt" | "LT" => CmpRel::Lt,
                    "le" | "LE" => CmpRel::Le,
                    _ => {
                        return Err(err(m.span, format!("unknown comparison `{}`", m.text))
                            .expected("eq, ne, gt, ge, lt or le"))
                    }
                };
                if mods.len() > 1 {
                    return Err(err(mods_span(1), "`cmp` takes one relation, nothing more"));
                }
                Ok(InstKind::Cmp(rel))
            }
            names::Class::Fence(scope) => {
                let mut flags = 0u8;
                if let Some(m) = mods.first() {
                    if scope == FenceScope::Sw {
                        return Err(err(m.span, "`fence_sw` takes no options"));
                    }
                    flags = names::fence_flags(&m.text).ok_or_else(|| {
                        err(m.span, format!("invalid fence options `{}`", m.text))
                            .expected("letters E, I, S, C, R then L1, in that order (`.E`, `.EL1`)")
                    })?;
                }
                if mods.len() > 1 {
                    return Err(err(
                        mods_span(1),
                        "a fence takes one option group, nothing more",
                    ));
                }
                Ok(InstKind::Fence { scope, flags })
            }
            names::Class::SvmBlock => {
                let mut unaligned = false;
                if let Some(m) = mods.first() {
                    unaligned = match m.text.as_str() {
                        "aligned" => false,
                        "unaligned" => true,
                        _ => {
                            return Err(err(m.span, format!("unknown modifier `.{}`", m.text))
                                .expected("`.aligned` or `.unaligned`, or none"))
                        }
                    };
                }
                if mods.len() > 1 {
                    return Err(err(
                        mods_span(1),
                        format!("`{mnemonic}` takes one modifier at most"),
                    ));
                }
                // The oword count is read after the modifiers.
                Ok(if mnemonic == "svm_block_ld" {
                    InstKind::SvmBlockLd {
                        owords: 0,
                        unaligned,
                    }
                } else {
                    InstKind::SvmBlockSt {
                        owords: 0,
                        unaligned,
                    }
                })
            }
            names::Class::Branch | names::Class::Plain => {
                for m in mods {
                    if !(sig.sat && m.text == "sat") {
                        let allowed = if sig.sat { " (only `.sat`)" } else { "" };
                        return Err(err(
                            m.span,
                            format!("`{mnemonic}` takes no modifier `.{}`{allowed}", m.text),
                        ));
                    }
                }
                if mods.len() > 1 {
                    return Err(err(mods_span(1), "`.sat` given twice"));
                }
                Ok(if sig.class == names::Class::Branch {
                    InstKind::Branch
                } else {
                    InstKind::Plain
                })
            }
        }
    }

    /// `([!]P[.any|.all])`.
    fn predicate(&mut self) -> PResult<Predicate> {
        let open = self.bump().span;
        let negate = self.peek().is_punct("!");
        if negate {
            self.bump();
        }
        let name = self.expect_ident("a predicate variable")?;
        let Some(id) = self.kernel().lookup(name.text) else {
            return Err(err(
                name.span,
                format!("unknown predicate variable `{}`", name.text),
            ));
        };
        if !matches!(self.kernel().kernel.var(id).kind, VarKind::Predicate { .. }) {
            return Err(err(
                name.span,
                format!("`{}` is not a predicate variable", name.text),
            ));
        }
        let mut ctrl = PredCtrl::Seq;
        if self.peek().is_punct(".") {
            self.bump();
            let c = self.expect_ident("`any` or `all`")?;
            ctrl = match c.text {
                "any" => PredCtrl::Any,
                "all" => PredCtrl::All,
                other => {
                    return Err(err(c.span, format!("unknown predicate control `.{other}`"))
                        .expected("`.any` or `.all`"))
                }
            };
        }
        self.expect_punct(")", "`)` closing the predicate")?;
        Ok(Predicate {
            var: id,
            negate,
            ctrl,
            span: join(open, self.prev),
        })
    }

    /// `(N)`: the oword count of a block access (1, 2, 4 or 8).
    fn oword_count(&mut self) -> PResult<u32> {
        self.expect_punct("(", "`(` and the number of owords (1, 2, 4 or 8)")?;
        let t = self.peek().clone();
        let n = match t.kind {
            Kind::Int(v) if matches!(v, 1 | 2 | 4 | 8) => v as u32,
            Kind::Int(v) => {
                return Err(err(t.span, format!("invalid oword count {v}")).expected("1, 2, 4 or 8"))
            }
            Kind::Ident
            | Kind::Label
            | Kind::Float
            | Kind::Str(_)
            | Kind::Punct
            | Kind::Newline => return Err(self.unexpected("the number of owords (1, 2, 4 or 8)")),
        };
        self.bump();
        self.expect_punct(")", "`)` closing the oword count")?;
        Ok(n)
    }

    /// Is an execution size next: `(N)` (not an immediate `(N):t`) or `(NAME, ...`?
    fn at_exec_size(&self) -> bool {
        if !self.peek().is_punct("(") {
            return false;
        }
        let a = self.peek_at(1);
        let b = self.peek_at(2);
        match a.kind {
            Kind::Int(_) => b.is_punct(")") && !self.peek_at(3).is_punct(":"),
            Kind::Ident => b.is_punct(","),
            Kind::Label | Kind::Float | Kind::Str(_) | Kind::Punct | Kind::Newline => false,
        }
    }

    fn exec_size(&mut self) -> PResult<ExecSize> {
        let open = self.bump().span;
        let (mut mask_group, mut no_mask) = (1, false);
        if self.peek().is_ident() {
            let m = self.bump();
            (mask_group, no_mask) = names::emask(m.text).ok_or_else(|| {
                err(m.span, format!("unknown execution mask `{}`", m.text))
                    .expected("M1 .. M8, M1_NM .. M8_NM or NoMask")
            })?;
            self.expect_punct(",", "`,` then the execution size")?;
        }
        let t = self.peek().clone();
        let size = match t.kind {
            Kind::Int(v) if matches!(v, 1 | 2 | 4 | 8 | 16 | 32) => v as u32,
            Kind::Int(v) => {
                return Err(err(t.span, format!("invalid execution size {v}"))
                    .expected("1, 2, 4, 8, 16 or 32"))
            }
            Kind::Ident
            | Kind::Label
            | Kind::Float
            | Kind::Str(_)
            | Kind::Punct
            | Kind::Newline => {
                return Err(self.unexpected("an execution size (1, 2, 4, 8, 16 or 32)"))
            }
        };
        self.bump();
        self.expect_punct(")", "`)` closing the execution size")?;
        Ok(ExecSize {
            mask_group,
            no_mask,
            size,
            span: join(open, self.prev),
        })
    }

    // ------------------------------------------------------------------ operands

    fn operand(
        &mut self,
        want: Want,
        exec: Option<u32>,
        stmt: usize,
        index: usize,
    ) -> PResult<Operand> {
        let start = self.pos;
        let start_span = self.peek().span;
        if let Want::Role(Role::Label(kind)) = want {
            // Resolved when the kernel ends (labels may come later); a placeholder until then.
            let (name, span) = self.ident_or_string("a label")?;
            self.kernel_mut()
                .fixups
                .push((stmt, index, name, span, kind));
            return Ok(Operand {
                span,
                kind: OperandKind::Label(LabelId(u32::MAX)),
            });
        }
        if want == Want::Generic {
            let t = self.peek();
            if t.is_ident() && self.kernel().lookup(t.text).is_none() && self.variable_shaped() {
                return Err(err(t.span, format!("unknown variable `{}`", t.text)));
            }
        }
        let parsed = self.operand_form(want, exec);
        if want == Want::Generic {
            let clean = match &parsed {
                Ok(_) => self.peek().is_newline() || !self.glued(),
                Err(_) => false,
            };
            if !clean {
                self.pos = start;
                return self.other_operand();
            }
        }
        let kind = parsed?;
        let span = join(start_span, self.prev);
        if let Want::Role(role) = want {
            self.check_role(role, &kind, span)?;
        }
        Ok(Operand { span, kind })
    }

    /// Does the operand at the current token look like a general or raw operand, `NAME(..)<`
    /// or `NAME.N` (then a blank)? In an instruction without a signature, such an operand
    /// naming an unknown variable is an error rather than text.
    fn variable_shaped(&self) -> bool {
        let next = self.peek_at(1);
        if next.is_punct(".") {
            let n = self.peek_at(2);
            let after = self.peek_at(3);
            return matches!(n.kind, Kind::Int(_))
                && (after.is_newline() || after.span.start != n.span.end);
        }
        if !next.is_punct("(") {
            return false;
        }
        let mut depth = 0usize;
        for k in 1.. {
            let t = self.peek_at(k);
            if t.is_newline() {
                return false;
            }
            if t.is_punct("(") {
                depth += 1;
            } else if t.is_punct(")") {
                depth -= 1;
                if depth == 0 {
                    return self.peek_at(k + 1).is_punct("<");
                }
            }
        }
        false
    }

    /// An operand of an instruction without a signature that fits no known form: the tokens
    /// up to the next blank outside brackets, which must balance.
    fn other_operand(&mut self) -> PResult<Operand> {
        let start = self.peek().span;
        let mut stack: Vec<(&'static str, Span)> = Vec::new();
        let mut first = true;
        loop {
            let t = self.peek().clone();
            if t.is_newline() {
                if let Some((close, open)) = stack.last() {
                    return Err(err(*open, "unbalanced bracket")
                        .expected(format!("`{close}` before the end of the line")));
                }
                break;
            }
            if !first && stack.is_empty() && !self.glued() {
                break;
            }
            for (open, close) in [("(", ")"), ("[", "]"), ("{", "}")] {
                if t.is_punct(open) {
                    stack.push((close, t.span));
                } else if t.is_punct(close) {
                    match stack.pop() {
                        Some((want, _)) if want == close => {}
                        Some((want, _)) => {
                            return Err(err(t.span, format!("`{close}` closes the wrong bracket"))
                                .expected(format!("`{want}`")))
                        }
                        None => {
                            return Err(err(
                                t.span,
                                format!("`{close}` without a matching `{open}`"),
                            ))
                        }
                    }
                }
            }
            self.bump();
            first = false;
        }
        let span = join(start, self.prev);
        Ok(Operand {
            span,
            kind: OperandKind::Other(self.src[span.start as usize..span.end as usize].to_string()),
        })
    }

    fn check_role(&self, role: Role, kind: &OperandKind, span: Span) -> PResult<()> {
        let bad =
            |msg: &str| Err(err(span, msg.to_string()).expected(names::role_expectation(role)));
        match (role, kind) {
            (Role::Dst, OperandKind::General(g)) => match g.region {
                Region::Dst { .. } => Ok(()),
                Region::Src { .. } | Region::VxH { .. } => {
                    bad("a destination region is `<h>`, not `<v;w,h>`")
                }
            },
            (Role::Dst, OperandKind::Indirect(i)) => match i.region {
                Region::Dst { .. } => Ok(()),
                Region::Src { .. } | Region::VxH { .. } => {
                    bad("an indirect destination's region is `<h>`")
                }
            },
            (Role::Dst, OperandKind::Pred(_) | OperandKind::Addr { .. }) => Ok(()),
            (Role::Dst, OperandKind::Imm(_)) => bad("an immediate cannot be a destination"),
            (Role::Src, OperandKind::General(g)) => match g.region {
                Region::Src { .. } => Ok(()),
                Region::Dst { .. } | Region::VxH { .. } => bad("a source region is `<v;w,h>`"),
            },
            (
                Role::Src,
                OperandKind::Indirect(_)
                | OperandKind::Imm(_)
                | OperandKind::Pred(_)
                | OperandKind::Addr { .. }
                | OperandKind::AddrOf { .. },
            ) => Ok(()),
            (Role::Raw, OperandKind::Raw(_)) => Ok(()),
            (Role::Dst | Role::Src, OperandKind::Raw(_)) => {
                bad("a raw operand `V.off` where a vector operand is needed")
            }
            (Role::Raw, _) => bad("expected a raw operand `V.off` (or `%null.0`)"),
            (Role::Dst | Role::Src, _) => bad("this operand form does not fit here"),
            (Role::Label(_), _) => bad("expected a label"),
        }
    }

    /// Reads one operand by its form.
    fn operand_form(&mut self, want: Want, exec: Option<u32>) -> PResult<OperandKind> {
        let t = self.peek().clone();
        if t.is_punct("(") {
            if let Some(m) = self.src_modifier() {
                return self.modified_operand(m, exec);
            }
            return self.immediate();
        }
        if t.is_punct("-") || t.is_punct("~") || t.is_punct("!") {
            return self.immediate();
        }
        match t.kind {
            Kind::Int(_) | Kind::Float => return self.immediate(),
            Kind::Str(_) if want == Want::Generic => {
                self.bump();
                return Ok(OperandKind::Other(t.text.to_string()));
            }
            Kind::Ident | Kind::Label | Kind::Str(_) | Kind::Punct | Kind::Newline => {}
        }
        if t.is_punct("&") {
            return self.addr_of();
        }
        if t.is_ident()
            && t.text == "r"
            && self.peek_at(1).is_punct("[")
            && self.peek_at(1).span.start == t.span.end
        {
            return self.indirect(SrcMod::None);
        }
        if t.is_ident() && t.text == "%sizeof" {
            return self.immediate();
        }
        if t.is_ident() {
            return self.named(want, exec);
        }
        Err(self.unexpected("an operand"))
    }

    /// `(-)`, `(abs)`, `(-abs)` or `(~)` at the current position, consumed if present.
    fn src_modifier(&mut self) -> Option<SrcMod> {
        let texts: Vec<&str> = (1..4).map(|k| self.peek_at(k).text).collect();
        let (m, len) = match texts.as_slice() {
            ["-", ")", _] => (SrcMod::Neg, 3),
            ["abs", ")", _] => (SrcMod::Abs, 3),
            ["-", "abs", ")"] => (SrcMod::NegAbs, 4),
            ["~", ")", _] => (SrcMod::Not, 3),
            _ => return None,
        };
        for _ in 0..len {
            self.bump();
        }
        Some(m)
    }

    fn modified_operand(&mut self, m: SrcMod, exec: Option<u32>) -> PResult<OperandKind> {
        let t = self.peek().clone();
        if t.is_ident() && t.text == "r" && self.peek_at(1).is_punct("[") {
            return self.indirect(m);
        }
        let name = self.expect_ident("a variable after the source modifier")?;
        let Some(id) = self.kernel().lookup(name.text) else {
            return Err(err(name.span, format!("unknown variable `{}`", name.text)));
        };
        if self.kernel().kernel.var(id).general().is_none() {
            return Err(err(
                name.span,
                format!(
                    "`{}`: a source modifier applies to a general variable",
                    name.text
                ),
            ));
        }
        if !self.peek().is_punct("(") && !self.peek().is_punct("<") {
            return Err(self.unexpected(&format!("`(row,col)` and a region after `{}`", name.text)));
        }
        self.general(id, name.span, m, exec)
    }

    /// An operand that starts with a name.
    fn named(&mut self, want: Want, exec: Option<u32>) -> PResult<OperandKind> {
        let name = self.bump();
        let Some(id) = self.kernel().lookup(name.text) else {
            return Err(err(name.span, format!("unknown variable `{}`", name.text)));
        };
        let var = self.kernel().kernel.var(id).clone();
        match &var.kind {
            VarKind::General(g) => {
                if self.peek().is_punct(".") {
                    return self.raw(id, g, name.span);
                }
                if self.peek().is_punct("(") || self.peek().is_punct("<") {
                    return self.general(id, name.span, SrcMod::None, exec);
                }
                if want == Want::Generic {
                    return Ok(OperandKind::Var(id));
                }
                Err(self.unexpected(&format!(
                    "`(row,col)` and a region, or `.offset`, after `{}`",
                    name.text
                )))
            }
            VarKind::Predicate { .. } => Ok(OperandKind::Pred(id)),
            VarKind::Address { num_elts } => {
                self.expect_punct(
                    "(",
                    &format!("`(index)` after the address variable `{}`", name.text),
                )?;
                let (index, ispan) = self.expr_u32("an address element", u32::MAX)?;
                if index >= *num_elts {
                    return Err(err(
                        ispan,
                        format!("element {index} of `{}`, which has {num_elts}", name.text),
                    ));
                }
                self.expect_punct(")", "`)`")?;
                self.expect_punct("<", "`<width>` after an address operand")?;
                let (width, wspan) = self.expr_u32("an address operand's width", 16)?;
                if !matches!(width, 1 | 2 | 4 | 8 | 16) {
                    return Err(err(wspan, format!("invalid address operand width {width}"))
                        .expected("1, 2, 4, 8 or 16"));
                }
                self.expect_punct(">", "`>`")?;
                Ok(OperandKind::Addr {
                    var: id,
                    index,
                    width,
                })
            }
            VarKind::Surface { num_elts, .. } | VarKind::Sampler { num_elts, .. } => {
                if self.peek().is_punct("(")
                    && matches!(self.peek_at(1).kind, Kind::Int(_))
                    && self.peek_at(2).is_punct(")")
                {
                    self.bump();
                    let (index, ispan) = self.expr_u32("a state element", u32::MAX)?;
                    if index >= *num_elts {
                        return Err(err(
                            ispan,
                            format!("element {index} of `{}`, which has {num_elts}", name.text),
                        ));
                    }
                    self.bump();
                    return Ok(OperandKind::State { var: id, index });
                }
                Ok(OperandKind::Var(id))
            }
        }
    }

    /// `V.off` or `V.(expr)` (the `V` consumed).
    fn raw(&mut self, id: VarId, g: &GeneralVar, name_span: Span) -> PResult<OperandKind> {
        self.bump();
        let (offset, ospan) = if self.peek().is_punct("(") {
            self.bump();
            let r = self.expr_u32("a raw operand's offset", 0x10000)?;
            self.expect_punct(")", "`)`")?;
            r
        } else {
            match self.peek().kind {
                Kind::Int(v) => {
                    let t = self.bump();
                    (u32::try_from(v).unwrap_or(u32::MAX), t.span)
                }
                Kind::Ident
                | Kind::Label
                | Kind::Float
                | Kind::Str(_)
                | Kind::Punct
                | Kind::Newline => return Err(self.unexpected("the raw operand's byte offset")),
            }
        };
        let size = g.byte_size();
        if id == VarId::NULL {
            if offset != 0 {
                return Err(err(ospan, "`%null` must have 0 as offset"));
            }
        } else if offset >= size {
            let name = &self.kernel().kernel.var(id).name;
            return Err(err(
                join(name_span, ospan),
                format!("raw operand offset {offset} is past the end of `{name}` ({size} bytes)"),
            ));
        }
        Ok(OperandKind::Raw(RawOperand {
            var: id,
            offset,
            ty: g.ty,
            root: g.root,
            root_offset: g.root_offset + offset,
        }))
    }

    /// `(r,c)<region>` or `<region>` after a general variable `id`.
    fn general(
        &mut self,
        id: VarId,
        name_span: Span,
        modifier: SrcMod,
        exec: Option<u32>,
    ) -> PResult<OperandKind> {
        let (row, col) = if self.peek().is_punct("(") {
            self.bump();
            let (r, _) = self.expr_u32("a row offset", 0xffff)?;
            self.expect_punct(",", "`,` then the column offset")?;
            let (c, _) = self.expr_u32("a column offset", 0xffff)?;
            self.expect_punct(")", "`)` closing `(row,col)`")?;
            (r, c)
        } else {
            (0, 0)
        };
        let region = self.region(false)?;
        let var = self.kernel().kernel.var(id);
        let g = var.general().expect("a general variable");
        let elem = g.ty.size();
        let size = g.byte_size();
        let offset = u64::from(row) * u64::from(GRF_BYTES) + u64::from(col) * u64::from(elem);
        let whole = join(name_span, self.prev);
        if offset >= u64::from(size) {
            return Err(err(
                whole,
                format!(
                    "`{}({row},{col})` is past the end of `{}` ({size} bytes)",
                    var.name, var.name
                ),
            ));
        }
        if let Some(n) = exec.filter(|_| id != VarId::NULL) {
            let last = (0..n).map(|c| region.element(c)).max().unwrap_or(0);
            let end = offset + (u64::from(last) + 1) * u64::from(elem);
            if end > u64::from(size) {
                return Err(err(
                    whole,
                    format!(
                        "the region reaches byte {end} of `{}`, which has {size} bytes (execution size {n})",
                        var.name
                    ),
                ));
            }
        }
        let offset = offset as u32;
        Ok(OperandKind::General(GeneralOperand {
            var: id,
            ty: g.ty,
            modifier,
            row,
            col,
            region,
            offset,
            root: g.root,
            root_offset: g.root_offset + offset,
        }))
    }

    /// `<h>`, `<v;w,h>` or (when `indirect`) `<w,h>`, with the values vISA allows.
    fn region(&mut self, indirect: bool) -> PResult<Region> {
        let open = self.expect_punct("<", "a region such as `<1;1,0>` or `<1>`")?;
        let (a, aspan) = self.expr()?;
        let check = |v: i128, span: Span, allowed: &[i128], what: &str| -> PResult<u32> {
            if allowed.contains(&v) {
                Ok(v as u32)
            } else {
                let list = allowed
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                Err(err(span, format!("invalid {what} {v}")).expected(list))
            }
        };
        const V: &[i128] = &[0, 1, 2, 4, 8, 16, 32];
        const W: &[i128] = &[1, 2, 4, 8, 16];
        const H: &[i128] = &[0, 1, 2, 4];
        let region = if self.peek().is_punct(";") {
            self.bump();
            let (w, wspan) = self.expr()?;
            self.expect_punct(",", "`,` then the horizontal stride")?;
            let (h, hspan) = self.expr()?;
            Region::Src {
                v: check(a, aspan, V, "vertical stride")?,
                w: check(w, wspan, W, "region width")?,
                h: check(h, hspan, H, "horizontal stride")?,
            }
        } else if self.peek().is_punct(",") {
            self.bump();
            let (h, hspan) = self.expr()?;
            if !indirect {
                if self.peek().is_punct(">") {
                    self.bump();
                }
                return Err(err(
                    join(open, self.prev),
                    "a `<width,stride>` region is for indirect operands only",
                )
                .expected("`<v;w,h>` or `<h>`"));
            }
            Region::VxH {
                w: check(a, aspan, W, "region width")?,
                h: check(h, hspan, H, "horizontal stride")?,
            }
        } else {
            Region::Dst {
                h: check(a, aspan, &[1, 2, 4], "destination horizontal stride")?,
            }
        };
        self.expect_punct(">", "`>` closing the region")?;
        Ok(region)
    }

    /// `r[A(i)[, off]]<region>:type` (the modifier, if any, already read).
    fn indirect(&mut self, modifier: SrcMod) -> PResult<OperandKind> {
        self.bump();
        self.bump();
        let name = self.expect_ident("an address variable")?;
        let Some(id) = self.kernel().lookup(name.text) else {
            return Err(err(name.span, format!("unknown variable `{}`", name.text)));
        };
        let VarKind::Address { num_elts } = self.kernel().kernel.var(id).kind else {
            return Err(err(
                name.span,
                format!("`{}` is not an address variable", name.text),
            ));
        };
        self.expect_punct("(", "`(index)` after the address variable")?;
        let (addr_index, ispan) = self.expr_u32("an address element", u32::MAX)?;
        if addr_index >= num_elts {
            return Err(err(
                ispan,
                format!(
                    "element {addr_index} of `{}`, which has {num_elts}",
                    name.text
                ),
            ));
        }
        self.expect_punct(")", "`)`")?;
        let mut offset = 0;
        if self.peek().is_punct(",") {
            self.bump();
            let (v, span) = self.expr()?;
            offset = i32::try_from(v)
                .ok()
                .filter(|v| (-512..=511).contains(v))
                .ok_or_else(|| {
                    err(
                        span,
                        format!("indirect offset {v} is out of range (-512 to 511)"),
                    )
                })?;
        }
        self.expect_punct("]", "`]` closing the indirect operand")?;
        let region = self.region(true)?;
        let ty = self.type_suffix()?;
        if matches!(
            ty,
            ElemType::V | ElemType::UV | ElemType::VF | ElemType::Bool
        ) {
            return Err(err(
                self.prev,
                format!("an indirect operand cannot have type `{}`", ty.name()),
            ));
        }
        Ok(OperandKind::Indirect(IndirectOperand {
            addr: id,
            addr_index,
            offset,
            region,
            ty,
            modifier,
        }))
    }

    /// `:type` glued together (the `:` may follow a blank, the type may not).
    fn type_suffix(&mut self) -> PResult<ElemType> {
        self.expect_punct(":", "`:` and a type")?;
        if !self.peek().is_ident() || !self.glued() {
            return Err(self.unexpected("a type right after `:` (`:ud`, `:f`...)"));
        }
        let t = self.bump();
        names::type_by_name(t.text).ok_or_else(|| {
            err(t.span, format!("unknown type `{}`", t.text)).expected(names::IMM_TYPES)
        })
    }

    /// `&V`, `&V[off]`, `&V+off`, `&V-off`.
    fn addr_of(&mut self) -> PResult<OperandKind> {
        self.bump();
        let name = self.expect_ident("a variable after `&`")?;
        let Some(id) = self.kernel().lookup(name.text) else {
            return Err(err(name.span, format!("unknown variable `{}`", name.text)));
        };
        let var = self.kernel().kernel.var(id);
        let (root, base, size) = match &var.kind {
            VarKind::General(g) => (g.root, g.root_offset, g.byte_size()),
            VarKind::Surface { num_elts, .. } => (id, 0, 4 * num_elts),
            VarKind::Predicate { .. } | VarKind::Address { .. } | VarKind::Sampler { .. } => {
                return Err(err(
                    name.span,
                    format!(
                        "`{}`: only general and surface variables have an address",
                        name.text
                    ),
                ))
            }
        };
        let mut offset: i128 = 0;
        let mut ospan = name.span;
        if self.peek().is_punct("[") {
            self.bump();
            (offset, ospan) = self.expr()?;
            self.expect_punct("]", "`]`")?;
        } else if (self.peek().is_punct("+") || self.peek().is_punct("-")) && self.glued() {
            let neg = self.bump().text == "-";
            let t = self.peek().clone();
            let Kind::Int(v) = t.kind else {
                return Err(self.unexpected("a byte offset"));
            };
            self.bump();
            offset = if neg { -i128::from(v) } else { i128::from(v) };
            ospan = t.span;
        }
        if offset < 0 || offset >= i128::from(size) {
            return Err(err(
                ospan,
                format!(
                    "address offset {offset} is outside `{}` ({size} bytes)",
                    name.text
                ),
            ));
        }
        Ok(OperandKind::AddrOf {
            var: id,
            offset: offset as i64,
            root,
            root_offset: i64::from(base) + offset as i64,
        })
    }

    /// A typed immediate: `INTEXP:itype`, `[-]DEC.DEC:f`, `[-]0xBITS:f|df|hf`, `[-]DEC:f`
    /// (bits, as IGC reads it: `1:f` is the smallest subnormal).
    fn immediate(&mut self) -> PResult<OperandKind> {
        let start = self.peek().span;
        // A float literal, possibly negated.
        let neg_float = self.peek().is_punct("-") && self.peek_at(1).kind == Kind::Float;
        if neg_float || self.peek().kind == Kind::Float {
            if neg_float {
                self.bump();
            }
            let lit = self.bump();
            let ty = self.type_suffix()?;
            // IGC converts with atof and narrows to float: parse as f64, then round.
            let v: f64 = lit
                .text
                .parse()
                .map_err(|_| err(lit.span, "malformed float literal"))?;
            let v = if neg_float { -v } else { v };
            // The lexer only makes float literals before `:f` and `:df`.
            let bits = if ty == ElemType::DF {
                v.to_bits()
            } else {
                u64::from((v as f32).to_bits())
            };
            return Ok(OperandKind::Imm(Immediate { ty, bits }));
        }
        // `[-]LITERAL:fty` reads the literal as bits.
        let neg_lit = self.peek().is_punct("-") && matches!(self.peek_at(1).kind, Kind::Int(_));
        let lit_at = usize::from(neg_lit);
        if let Kind::Int(raw) = self.peek_at(lit_at).kind {
            if self.peek_at(lit_at + 1).is_punct(":") {
                let ty_tok = self.peek_at(lit_at + 2);
                if let Some(ty @ (ElemType::F | ElemType::DF | ElemType::HF)) =
                    names::type_by_name(ty_tok.text)
                {
                    for _ in 0..lit_at + 1 {
                        self.bump();
                    }
                    self.type_suffix()?;
                    let width = ty.size() * 8;
                    if width < 64 && raw >> width != 0 {
                        return Err(err(
                            join(start, self.prev),
                            format!(
                                "0x{raw:x} does not fit in the {width} bits of `{}`",
                                ty.name()
                            ),
                        ));
                    }
                    let sign = 1u64 << (width - 1);
                    let bits = if neg_lit { raw ^ sign } else { raw };
                    return Ok(OperandKind::Imm(Immediate { ty, bits }));
                }
            }
        }
        let value = self.expr_unary()?;
        let ty = self.type_suffix()?;
        let span = join(start, self.prev);
        if ty == ElemType::BF {
            return Err(err(span, "vISA has no `bf` immediates").expected(names::IMM_TYPES));
        }
        if ty.is_float() {
            return Err(err(span, format!("a `{}` immediate is a float literal or the hexadecimal bits, not an expression", ty.name())));
        }
        if ty == ElemType::Bool {
            return Err(err(span, "an immediate cannot have type `bool`"));
        }
        let width = ty.size() * 8;
        // IGC prints an immediate narrower than a dword as the 32-bit value it holds, sign-
        // or zero-extended (`0xffffffc0:w` is -64): such a value is accepted if it is the
        // extension of its low bits.
        let fits = |v: i128, w: u32| (-(1i128 << (w - 1))..(1i128 << w)).contains(&v);
        let ok = if width < 32 {
            let v32 = if (1i128 << 31..1i128 << 32).contains(&value) {
                value - (1i128 << 32)
            } else {
                value
            };
            fits(value, width) || fits(v32, width) && v32 < 0
        } else {
            fits(value, width)
        };
        if !ok {
            return Err(err(
                span,
                format!("{value} does not fit in `{}` ({width} bits)", ty.name()),
            ));
        }
        let bits = (value as u128 as u64) & (u64::MAX >> (64 - width));
        Ok(OperandKind::Imm(Immediate { ty, bits }))
    }
}
