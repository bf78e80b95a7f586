//! Module-scope `.global` and `.const` variables: device memory the module itself declares.
//!
//! # What a declaration becomes
//!
//! `{.visible|.weak|.common} .global|.const {.align N} .TYPE name{[N]...} {= init};` is one
//! global-memory allocation of the launch, exactly like a `.buffer` line: its element type is
//! the declared type (`.b8` reads as `u8`, `.b16/.b32/.b64` as `u16/u32/u64`, `.f16x2` and
//! `.bf16x2` as their raw `u32` bits), its length the product of the array dimensions (an
//! unsized `name[]` takes the initialiser's length), and its initial value the initialiser (a
//! scalar, or a list in braces, nested braces flattened in order; elements past the list are
//! zero, and so is a variable without one). Allocations are 256-byte aligned, so any `.align`
//! up to 256 holds.
//!
//! An entry gets the variables that it (or a function it calls) names, and only those: the
//! hundreds of variables libcu++ declares for `<cuda/atomic>` cost nothing. Each used variable
//! is a *hidden buffer parameter*: its device address sits in constant bank 0 after the
//! entry's own `.param` list (8-byte aligned, in order of first use), and the name of the
//! variable is the buffer's name, so launch files, `.expect`, `--set` and `--dump` name it
//! (`.expect counter[0] == 37`). Every launch starts from the initialiser again (atomjit runs
//! each kernel with freshly initialised memory; CUDA keeps a module's globals across
//! launches).
//!
//! * `mov.u64 %rd, name;` and `cvta.global.u64 %rd, name;` read the address from the bank;
//!   `[name+off]` addresses of `ld`/`st`/`atom`/`red` go through a scratch register pair.
//! * `.const` variables live in global memory too: `ld.const` is a load from that address
//!   (PTX has no `st.const`, so nothing writes them). `cvta.const` is the identity, like
//!   `cvta.global`, and a generic access to the address reads the same memory.
//! * A variable initialised with addresses (`= generic(x)`, `= x`) and `.extern` declarations
//!   (defined in another module; atomjit runs one module) are accepted at module scope and
//!   an error in the entry that uses them.

use super::super::lexer::{SyntaxError, Token};
use super::operands::{self, Literal};
use super::ops::literal_bits;
use super::regs::value_type;
use crate::ir::{Init, ParamDecl, ParamKind, Scalar, Span, Ty};
use std::collections::HashMap;

/// Largest `.align` a variable may ask for (the allocator's alignment).
const MAX_ALIGN: u32 = 256;

/// One module-scope variable.
#[derive(Debug, Clone)]
pub struct GlobalVar {
    pub name: String,
    /// The buffer's element type.
    pub elem: Ty,
    /// Elements.
    pub len: u64,
    pub init: Init,
    /// Declared `.const` (read-only).
    pub constant: bool,
    pub span: Span,
    /// Why an entry cannot use it (an `.extern` declaration, an address initialiser).
    pub problem: Option<SyntaxError>,
}

/// The module's variables, in declaration order.
#[derive(Debug, Default)]
pub struct GlobalTable {
    vars: Vec<GlobalVar>,
    index: HashMap<String, usize>,
}

impl GlobalTable {
    /// Adds a declaration; a second declaration of a name replaces an `.extern` one.
    pub fn add(&mut self, var: GlobalVar) -> Result<(), SyntaxError> {
        if let Some(&i) = self.index.get(&var.name) {
            let prev = &self.vars[i];
            let prev_extern = prev
                .problem
                .as_ref()
                .is_some_and(|p| p.message.contains(".extern"));
            if !prev_extern {
                return Err(SyntaxError::new(
                    var.span,
                    format!(
                        "variable `{}` is already declared (line {})",
                        var.name, prev.span.line
                    ),
                ));
            }
            self.vars[i] = var;
            return Ok(());
        }
        self.index.insert(var.name.clone(), self.vars.len());
        self.vars.push(var);
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<(usize, &GlobalVar)> {
        self.index.get(name).map(|&i| (i, &self.vars[i]))
    }

    pub fn len(&self) -> usize {
        self.vars.len()
    }
}

/// The variables one entry uses, each with its address's place in constant bank 0.
#[derive(Debug)]
pub struct EntryGlobals {
    /// Declarations visible to the entry (those before it in the module).
    visible: usize,
    /// Used variables: table index and bank offset, in order of first use.
    used: Vec<(usize, u32)>,
    by_index: HashMap<usize, u32>,
    next: u32,
}

impl EntryGlobals {
    /// `params_end`: the end of the entry's `.param` list in the bank.
    pub fn new(visible: usize, params_end: u32) -> EntryGlobals {
        EntryGlobals {
            visible,
            used: Vec::new(),
            by_index: HashMap::new(),
            next: params_end.next_multiple_of(8),
        }
    }

    /// The bank offset holding the address of variable `name`, if `name` is a variable the
    /// entry can see; an error if it cannot be used.
    pub fn address_slot(
        &mut self,
        table: &GlobalTable,
        name: &str,
        span: Span,
    ) -> Option<Result<(u32, bool), SyntaxError>> {
        let (i, var) = table.get(name)?;
        if i >= self.visible {
            return Some(Err(SyntaxError::new(
                span,
                format!(
                    "`{name}` is declared after this entry (line {}); PTX declares before use",
                    var.span.line
                ),
            )));
        }
        if let Some(p) = &var.problem {
            return Some(Err(SyntaxError::new(
                span,
                format!("`{name}` cannot be used: {}", p.message),
            )));
        }
        let constant = var.constant;
        if let Some(&off) = self.by_index.get(&i) {
            return Some(Ok((off, constant)));
        }
        let off = self.next;
        self.next += 8;
        self.by_index.insert(i, off);
        self.used.push((i, off));
        Some(Ok((off, constant)))
    }

    /// The hidden buffer parameters of the used variables.
    pub fn params(&self, table: &GlobalTable) -> Vec<ParamDecl> {
        self.used
            .iter()
            .map(|&(i, off)| {
                let v = &table.vars[i];
                ParamDecl {
                    name: v.name.clone(),
                    kind: ParamKind::Buffer {
                        elem: v.elem,
                        len: v.len,
                        init: v.init.clone(),
                    },
                    cbank_offset: off,
                    span: v.span,
                }
            })
            .collect()
    }
}

/// The buffer element type of a declared type.
fn elem_of(ty: Ty) -> Ty {
    match ty {
        Ty::B16 => Ty::U16,
        Ty::B32 | Ty::F16x2 | Ty::BF16x2 => Ty::U32,
        Ty::B64 => Ty::U64,
        // `.b128` is a register type only (`regs::TYPE_NAMES` has it for `.reg`); a variable
        // of it is refused before its element type is asked for.
        Ty::B128 => Ty::U64,
        Ty::U8
        | Ty::U16
        | Ty::U32
        | Ty::U64
        | Ty::S8
        | Ty::S16
        | Ty::S32
        | Ty::S64
        | Ty::F16
        | Ty::BF16
        | Ty::F32
        | Ty::F64 => ty,
    }
}

/// Parses the tokens of a declaration after `.global`/`.const` (up to, not including, `;`).
/// `at` is the directive; `external`: declared `.extern`.
pub fn parse_decl(
    toks: &[Token],
    at: Span,
    constant: bool,
    external: bool,
) -> Result<GlobalVar, SyntaxError> {
    let space = if constant { ".const" } else { ".global" };
    let mut i = 0;
    let mut align = None;
    let mut ty = None;
    while let Some(t) = toks
        .get(i)
        .filter(|t| t.is_word() && t.text.starts_with('.'))
    {
        i += 1;
        if t.text == ".align" {
            let (a, n) = super::align_value(toks, i, t.span)?;
            if a > MAX_ALIGN {
                return Err(SyntaxError::new(
                    n.span,
                    format!("atomjit aligns variables to at most {MAX_ALIGN} bytes"),
                ));
            }
            align = Some(a);
            i += 1;
        } else if let Some(v) = value_type(&t.text[1..]) {
            if ty.replace(v).is_some() {
                return Err(SyntaxError::new(t.span, "a variable takes one type"));
            }
        } else if matches!(t.text, ".v2" | ".v4" | ".v8") {
            return Err(SyntaxError::new(
                t.span,
                format!("vector {space} variables are not supported; declare an array"),
            ));
        } else {
            return Err(SyntaxError::new(
                t.span,
                format!("unexpected `{}` in a {space} declaration", t.text),
            )
            .expected(format!("`{space} .align 4 .u32 name[4] = {{1, 2, 3, 4}};`")));
        }
    }
    let _ = align;
    let Some(ty) = ty else {
        return Err(
            SyntaxError::new(at, format!("the {space} variable has no type"))
                .expected(format!("`{space} .align 4 .u32 name;`")),
        );
    };
    let Some(name) = toks.get(i).filter(|t| t.is_word()) else {
        return Err(SyntaxError::new(
            at,
            format!("the {space} variable has no name"),
        ));
    };
    i += 1;
    let mut len: u64 = 1;
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
            Some(Ok(Literal::Int { value, .. })) if value > 0 => value,
            _ => {
                return Err(SyntaxError::new(
                    n.span,
                    format!("`{}` is not an array length", n.text),
                ))
            }
        };
        len = len
            .checked_mul(dim)
            .filter(|l| l.checked_mul(ty.bytes() as u64).is_some())
            .ok_or_else(|| SyntaxError::new(n.span, "the array size overflows 64 bits"))?;
        i += 3;
    }
    let mut problem = None;
    let mut values = Vec::new();
    if let Some(t) = toks.get(i) {
        if !t.is_punct("=") {
            return Err(SyntaxError::new(
                t.span,
                format!("unexpected {} in a declaration", t.describe()),
            )
            .expected("`=` or `;`"));
        }
        match initialiser(&toks[i + 1..], ty, t.span) {
            Ok(v) => values = v,
            Err(e) => problem = Some(e),
        }
    }
    if unsized_array {
        if values.is_empty() {
            return Err(SyntaxError::new(
                name.span,
                "an unsized array `name[]` needs an initialiser",
            ));
        }
        len = values.len() as u64;
    } else if values.len() as u64 > len {
        return Err(SyntaxError::new(
            name.span,
            format!(
                "the initialiser has {} elements for {len} (ptxas rejects it)",
                values.len()
            ),
        ));
    }
    if external {
        problem = Some(SyntaxError::new(
            name.span,
            "it is declared `.extern` (defined in another module); atomjit runs one module",
        ));
    }
    let elem = elem_of(ty);
    let init = if values.is_empty() {
        Init::Fill(Scalar::Int(0))
    } else {
        Init::List(
            values
                .into_iter()
                // A scalar float element by its format's exact value; integers and packed
                // pairs by their bits.
                .map(|bits| match elem.float_format() {
                    Some((fmt, 1)) => Scalar::Float(fmt.to_f64(bits)),
                    Some(_) | None => Scalar::Int(bits as i128),
                })
                .collect(),
        )
    };
    Ok(GlobalVar {
        name: name.text.to_string(),
        elem,
        len,
        init,
        constant,
        span: name.span,
        problem,
    })
}

/// The raw bits of each element of an initialiser (`5`, `{1, 2}`, `{{1, 2}, {3, 4}}`).
fn initialiser(toks: &[Token], ty: Ty, at: Span) -> Result<Vec<u64>, SyntaxError> {
    if toks.is_empty() {
        return Err(SyntaxError::new(at, "`=` needs an initialiser"));
    }
    let mut out = Vec::new();
    let mut start = 0;
    let flush = |part: &[Token], out: &mut Vec<u64>| -> Result<(), SyntaxError> {
        if part.is_empty() {
            return Ok(());
        }
        let end = part[part.len() - 1].span;
        match operands::parse_operand(part, end)? {
            operands::Operand::Literal { lit, span } => {
                out.push(literal_bits(lit, ty, span)?);
                Ok(())
            }
            other @ (operands::Operand::Name { .. }
            | operands::Operand::Special { .. }
            | operands::Operand::Address { .. }
            | operands::Operand::Surface { .. }
            | operands::Operand::Vector { .. }
            | operands::Operand::PredPair { .. }
            | operands::Operand::Sink { .. }) => Err(SyntaxError::new(
                other.span(),
                "address initialisers (`generic(var)`, `var`) are not supported",
            )),
        }
    };
    for (k, t) in toks.iter().enumerate() {
        if t.is_punct("{") || t.is_punct("}") || t.is_punct(",") {
            flush(&toks[start..k], &mut out)?;
            start = k + 1;
        }
    }
    flush(&toks[start..], &mut out)?;
    Ok(out)
}
