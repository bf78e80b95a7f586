//! PTX declarations: typed virtual registers (`.reg`), `.shared` variables and `.param` lists,
//! and how they map onto the IR.
//!
//! # Registers
//!
//! `.reg .TYPE name, name, ...;` declares registers; `.reg .TYPE %r<N>;` declares `%r0` through
//! `%r{N-1}`. Declarations are scoped to the `{ }` block they appear in. A register gets its
//! IR slot when an instruction first uses it, so declaring `%r<100000>` costs nothing:
//!
//! * 8-, 16- and 32-bit registers (`.b8` .. `.b32`, `.u*`, `.s*`, `.f16`, `.bf16`, `.f16x2`,
//!   `.bf16x2`, `.f32`) occupy one 32-bit slot (narrow values in its low bits);
//! * 64-bit registers (`.b64`, `.u64`, `.s64`, `.f64`) a pair of two consecutive slots, low
//!   word first;
//! * `.b128` registers (PTX ISA 8.3: the operands of `atom.cas.b128`/`atom.exch.b128`, built
//!   and taken apart with `mov.b128`) a quad of four consecutive slots, low word first. It is a
//!   register and instruction type only ([`register_type`]): no variable or parameter has it;
//! * `.pred` registers an IR predicate.
//!
//! Lowerings that need temporaries use *scratch* slots and predicates reserved for the
//! front-end; no user register ever shares a slot with them.

use super::super::lexer::SyntaxError;
use crate::ir::{Pred, Reg, Span, Ty};
use std::collections::HashMap;
use std::rc::Rc;

/// The type of a register or instruction operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Value(Ty),
    Pred,
}

/// The PTX type names and the IR type each denotes (`.b8` is an 8-bit unsigned value).
pub const TYPE_NAMES: &[(&str, Ty)] = &[
    ("u8", Ty::U8),
    ("b8", Ty::U8),
    ("s8", Ty::S8),
    ("b16", Ty::B16),
    ("u16", Ty::U16),
    ("s16", Ty::S16),
    ("b32", Ty::B32),
    ("u32", Ty::U32),
    ("s32", Ty::S32),
    ("b64", Ty::B64),
    ("u64", Ty::U64),
    ("s64", Ty::S64),
    ("f16", Ty::F16),
    ("f16x2", Ty::F16x2),
    ("bf16", Ty::BF16),
    ("bf16x2", Ty::BF16x2),
    ("f32", Ty::F32),
    ("f64", Ty::F64),
];

/// PTX types atomjit does not model (named so the error can say so).
pub const UNSUPPORTED_TYPES: &[&str] = &[
    "tf32", "e4m3", "e5m2", "e4m3x2", "e5m2x2", "e2m1x2", "e3m2x2", "e2m3x2", "ue8m0x2", "s2f6x2",
    "b4", "u4", "s4", "b1",
];

/// The IR type of a PTX type name (without the dot), if it is one atomjit models.
pub fn value_type(name: &str) -> Option<Ty> {
    TYPE_NAMES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The IR type of a register or instruction type name: [`value_type`]'s, and `b128` (a
/// register quad, which no variable or parameter has).
pub fn register_type(name: &str) -> Option<Ty> {
    if name == "b128" {
        Some(Ty::B128)
    } else {
        value_type(name)
    }
}

/// The PTX spelling of an IR type (the `.b8` alias reads as `u8`).
pub fn type_name(ty: Ty) -> &'static str {
    if ty == Ty::B128 {
        return "b128";
    }
    TYPE_NAMES
        .iter()
        .find(|(_, t)| *t == ty)
        .map(|(n, _)| *n)
        .unwrap_or("?")
}

/// What a declaration declares: registers, or a `.param` variable of a body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeclKind {
    Reg(Kind),
    /// A `.param` variable of `N` bytes declared in a body (call arguments and return values):
    /// it lives in `ceil(N / 4)` consecutive slots, byte `i` in bits `8 * (i % 4)` of slot
    /// `i / 4` (see `ops::lower_ld`).
    Param(u32),
}

/// A register declaration: one name or a `<N>` range.
#[derive(Debug, Clone)]
struct Decl {
    kind: DeclKind,
    span: Span,
}

/// A resolved register variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegRef {
    Value {
        reg: Reg,
        ty: Ty,
    },
    Pred(Pred),
    /// A body's `.param` variable of `bytes` bytes, in slots from `reg`.
    Param {
        reg: Reg,
        bytes: u32,
    },
}

/// The names one `{ }` block declares (to take out of scope when it closes).
#[derive(Debug, Default)]
struct BlockScope {
    names: Vec<String>,
    ranges: Vec<String>,
}

/// A declaration visible from the current block: the depth of the block that declares it
/// and its index in `RegFile::decls`.
#[derive(Debug, Clone, Copy)]
struct Binding {
    depth: usize,
    decl: usize,
}

/// Largest number of 32-bit slots (one below `RZ`).
const MAX_SLOTS: u32 = u16::MAX as u32 - 1;
/// Largest number of predicates (one below `PT`).
const MAX_PREDS: u32 = u16::MAX as u32 - 1;
/// Scratch slots reserved for lowerings (at most four at a time: `mul24.hi` needs two sources
/// and a 64-bit product).
pub const SCRATCH_SLOTS: u16 = 4;
/// Staging slots reserved for vector accesses whose element registers are not consecutive
/// (`ld.v4`, `atom.v8.f16`): the IR takes a vector's elements in consecutive registers, so such
/// an access goes through these, with moves before or after. 16 covers the widest use: the 8
/// operand and 8 result slots of `atom.v8.f16`. Distinct from the scratch slots, which an
/// address may occupy at the same time.
pub const STAGING_SLOTS: u16 = 16;

/// The registers of one kernel: declarations by block, and the slots given out so far.
///
/// Names are resolved through one map per kind of declaration whose entries stack the
/// bindings of the enclosing blocks (innermost last), so a lookup does not walk the blocks:
/// deeply nested `{ }` cost nothing per use.
#[derive(Debug, Default)]
pub struct RegFile {
    decls: Vec<Decl>,
    /// The open blocks, outermost first; each lists what it declares.
    scopes: Vec<BlockScope>,
    /// Single names to their visible declarations, outermost first.
    names: HashMap<String, Vec<Binding>>,
    /// `%r<N>` ranges: prefix to their visible declarations and `N`, outermost first.
    ranges: HashMap<String, Vec<(Binding, u32)>>,
    /// `(declaration, element)` to its slot or predicate.
    assigned: HashMap<(usize, u32), RegRef>,
    next_slot: u32,
    next_pred: u32,
    scratch: Option<Reg>,
    scratch_pred: Option<Pred>,
    staging: Option<Reg>,
}

impl RegFile {
    pub fn new() -> RegFile {
        RegFile {
            scopes: vec![BlockScope::default()],
            ..RegFile::default()
        }
    }

    /// Enters a `{` block.
    pub fn push_scope(&mut self) {
        self.scopes.push(BlockScope::default());
    }

    /// Leaves a block (its declarations go out of scope).
    pub fn pop_scope(&mut self) {
        if self.scopes.len() <= 1 {
            return;
        }
        let Some(scope) = self.scopes.pop() else {
            return;
        };
        for name in scope.names {
            unbind(&mut self.names, name);
        }
        for prefix in scope.ranges {
            unbind(&mut self.ranges, prefix);
        }
    }

    /// Slots given out so far (the kernel's `num_regs` is at least this).
    pub fn num_slots(&self) -> u32 {
        self.next_slot
    }

    /// Predicates given out so far.
    pub fn num_preds(&self) -> u32 {
        self.next_pred
    }

    /// Declares `name` (a single register) or, with `range = Some(n)`, `name0 .. name{n-1}`.
    pub fn declare(
        &mut self,
        name: &str,
        range: Option<u32>,
        kind: Kind,
        span: Span,
    ) -> Result<(), SyntaxError> {
        self.declare_kind(name, range, DeclKind::Reg(kind), span)
            .map(|_| ())
    }

    /// Declares a `.param` variable of `bytes` bytes in the current block.
    pub fn declare_param(&mut self, name: &str, bytes: u32, span: Span) -> Result<(), SyntaxError> {
        self.declare_kind(name, None, DeclKind::Param(bytes), span)
            .map(|_| ())
    }

    /// Declares `name` in the current block as another name for `target` (an inlined
    /// function's parameters are its caller's argument variables).
    pub fn declare_alias(
        &mut self,
        name: &str,
        target: RegRef,
        span: Span,
    ) -> Result<(), SyntaxError> {
        let kind = match target {
            RegRef::Value { ty, .. } => DeclKind::Reg(Kind::Value(ty)),
            RegRef::Pred(_) => DeclKind::Reg(Kind::Pred),
            RegRef::Param { bytes, .. } => DeclKind::Param(bytes),
        };
        let decl = self.declare_kind(name, None, kind, span)?;
        self.assigned.insert((decl, 0), target);
        Ok(())
    }

    fn declare_kind(
        &mut self,
        name: &str,
        range: Option<u32>,
        kind: DeclKind,
        span: Span,
    ) -> Result<usize, SyntaxError> {
        let depth = self.scopes.len().wrapping_sub(1);
        let Some(scope) = self.scopes.last_mut() else {
            return Err(SyntaxError::new(
                span,
                "a register declared outside a kernel body",
            ));
        };
        let here = |b: &Binding| b.depth == depth;
        let clash = self
            .names
            .get(name)
            .and_then(|s| s.last())
            .filter(|b| here(b))
            .or_else(|| {
                self.ranges
                    .get(name)
                    .and_then(|s| s.last())
                    .map(|(b, _)| b)
                    .filter(|b| here(b))
            });
        if let Some(prev) = clash {
            return Err(SyntaxError::new(
                span,
                format!(
                    "register `{name}` is already declared in this block (line {})",
                    self.decls[prev.decl].span.line
                ),
            )
            .expected("a new register name"));
        }
        let binding = Binding {
            depth,
            decl: self.decls.len(),
        };
        self.decls.push(Decl { kind, span });
        match range {
            None => {
                scope.names.push(name.to_string());
                self.names
                    .entry(name.to_string())
                    .or_default()
                    .push(binding);
            }
            Some(n) => {
                scope.ranges.push(name.to_string());
                self.ranges
                    .entry(name.to_string())
                    .or_default()
                    .push((binding, n));
            }
        }
        Ok(binding.decl)
    }

    /// The declaration and element a register name denotes, innermost block first.
    fn find(&self, name: &str) -> Option<(usize, u32)> {
        let digits = name.len() - name.trim_end_matches(|c: char| c.is_ascii_digit()).len();
        let (prefix, index) = name.split_at(name.len() - digits);
        let index: Option<u32> = if digits > 0 && (index == "0" || !index.starts_with('0')) {
            index.parse().ok()
        } else {
            None
        };
        // The innermost single declaration of `name`, and the innermost range of `prefix`
        // that holds the index; the inner one wins, and in one block the single name.
        let single = self.names.get(name).and_then(|s| s.last());
        let range = index.and_then(|i| {
            self.ranges
                .get(prefix)?
                .iter()
                .rev()
                .find(|(_, n)| i < *n)
                .map(|(b, _)| (*b, i))
        });
        match (single, range) {
            (Some(s), Some((r, i))) if r.depth > s.depth => Some((r.decl, i)),
            (Some(s), _) => Some((s.decl, 0)),
            (None, Some((r, i))) => Some((r.decl, i)),
            (None, None) => None,
        }
    }

    /// True when `name` is a `.param` variable declared in a body (or an inlined function's
    /// parameter), in scope.
    pub fn is_param_var(&self, name: &str) -> bool {
        self.find(name)
            .is_some_and(|(d, _)| matches!(self.decls[d].kind, DeclKind::Param(_)))
    }

    /// True when `name` is a declared register in scope.
    pub fn is_register(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// The register `name`, giving it a slot (or predicate) on first use.
    pub fn lookup(&mut self, name: &str, span: Span) -> Result<RegRef, SyntaxError> {
        let Some(key) = self.find(name) else {
            return Err(
                SyntaxError::new(span, format!("`{name}` is not a declared register"))
                    .expected("a register declared with `.reg`"),
            );
        };
        if let Some(r) = self.assigned.get(&key) {
            return Ok(*r);
        }
        let r = match self.decls[key.0].kind {
            DeclKind::Reg(Kind::Pred) => RegRef::Pred(self.new_pred(span)?),
            DeclKind::Reg(Kind::Value(ty)) => RegRef::Value {
                reg: self.new_slots(ty.regs(), span)?,
                ty,
            },
            DeclKind::Param(bytes) => RegRef::Param {
                reg: self.new_slots(bytes.div_ceil(4).max(1) as u16, span)?,
                bytes,
            },
        };
        self.assigned.insert(key, r);
        Ok(r)
    }

    fn new_slots(&mut self, words: u16, span: Span) -> Result<Reg, SyntaxError> {
        let first = self.next_slot;
        if first + words as u32 > MAX_SLOTS {
            return Err(SyntaxError::new(
                span,
                format!("the kernel uses more than {MAX_SLOTS} 32-bit register slots"),
            ));
        }
        self.next_slot += words as u32;
        Ok(Reg(first as u16))
    }

    fn new_pred(&mut self, span: Span) -> Result<Pred, SyntaxError> {
        if self.next_pred >= MAX_PREDS {
            return Err(SyntaxError::new(
                span,
                format!("the kernel uses more than {MAX_PREDS} predicates"),
            ));
        }
        self.next_pred += 1;
        Ok(Pred((self.next_pred - 1) as u16))
    }

    /// The first of [`SCRATCH_SLOTS`] consecutive scratch slots (reserved on first use).
    pub fn scratch(&mut self, span: Span) -> Result<Reg, SyntaxError> {
        if let Some(r) = self.scratch {
            return Ok(r);
        }
        let r = self.new_slots(SCRATCH_SLOTS, span)?;
        self.scratch = Some(r);
        Ok(r)
    }

    /// The first of [`STAGING_SLOTS`] consecutive staging slots (reserved on first use).
    pub fn staging(&mut self, span: Span) -> Result<Reg, SyntaxError> {
        if let Some(r) = self.staging {
            return Ok(r);
        }
        let r = self.new_slots(STAGING_SLOTS, span)?;
        self.staging = Some(r);
        Ok(r)
    }

    /// The scratch predicate (reserved on first use).
    pub fn scratch_pred(&mut self, span: Span) -> Result<Pred, SyntaxError> {
        if let Some(p) = self.scratch_pred {
            return Ok(p);
        }
        let p = self.new_pred(span)?;
        self.scratch_pred = Some(p);
        Ok(p)
    }
}

/// Takes the innermost binding of `name` out of scope.
fn unbind<B>(map: &mut HashMap<String, Vec<B>>, name: String) {
    if let Some(stack) = map.get_mut(&name) {
        stack.pop();
        if stack.is_empty() {
            map.remove(&name);
        }
    }
}

/// A `.shared` variable placed in the CTA's shared window.
#[derive(Debug, Clone, Copy)]
pub struct SharedVar {
    /// Byte offset in the shared window.
    pub offset: u32,
}

/// One variable of a [`SharedLayout`]: its offset if static, or an `.extern` array (which
/// starts at the dynamic base).
#[derive(Debug, Clone, Copy)]
enum Placed {
    Static(u32),
    Extern,
}

/// The shared variables of a kernel (module-scope ones first) and the window they need.
///
/// The module-scope variables are laid out once, in a layout of their own that every entry's
/// layout refers to (`over`), so a module with many variables and many entries does not place
/// every variable again for every entry.
#[derive(Debug, Clone, Default)]
pub struct SharedLayout {
    /// The module-scope variables, which come first (for an entry's layout).
    module: Option<Rc<SharedLayout>>,
    /// This layout's own variables, in declaration order.
    vars: Vec<Placed>,
    /// Variable name to its index in `vars`.
    index: HashMap<String, usize>,
    /// End of the static variables (the smallest window that holds them).
    pub static_end: u32,
    /// Where `.extern .shared` arrays start (all of them alias, as in CUDA), if any.
    pub dynamic_base: Option<u32>,
    /// The largest alignment any `.extern` array asks for.
    dynamic_align: u32,
    /// Whether any `.extern` array is declared (here or in the module).
    has_extern: bool,
}

impl SharedLayout {
    /// An entry's layout: the module-scope variables of `module`, then the entry's own.
    pub fn over(module: Rc<SharedLayout>) -> SharedLayout {
        SharedLayout {
            static_end: module.static_end,
            dynamic_align: module.dynamic_align,
            has_extern: module.has_extern,
            module: Some(module),
            ..SharedLayout::default()
        }
    }

    /// Places a variable of `size` bytes aligned to `align`; `extern` arrays (dynamic shared
    /// memory) start after every static variable.
    pub fn add(
        &mut self,
        name: &str,
        align: u32,
        size: u64,
        is_extern: bool,
        span: Span,
    ) -> Result<(), SyntaxError> {
        if self.has(name) {
            return Err(SyntaxError::new(
                span,
                format!("shared variable `{name}` is already declared"),
            )
            .expected("a new name"));
        }
        let align = align.max(1);
        let placed = if is_extern {
            // Every extern array starts where the dynamic memory starts; a later static
            // variable would move it, so the base is computed in `finish_dynamic`.
            self.dynamic_align = self.dynamic_align.max(align);
            self.has_extern = true;
            Placed::Extern
        } else {
            let start = (self.static_end as u64).next_multiple_of(align as u64);
            let end = start.saturating_add(size);
            if end > u64::from(crate::ir::SHARED_WINDOW_BYTES) {
                return Err(SyntaxError::new(
                    span,
                    format!(
                        "shared variable `{name}` ends at byte {end}, past the 16 MiB shared window"
                    ),
                ));
            }
            self.static_end = end as u32;
            Placed::Static(start as u32)
        };
        self.index.insert(name.to_string(), self.vars.len());
        self.vars.push(placed);
        Ok(())
    }

    /// Places the `.extern` arrays after the last static variable (call once all are known).
    pub fn finish_dynamic(&mut self) {
        if self.has_extern {
            self.dynamic_base = Some(self.static_end.next_multiple_of(self.dynamic_align.max(1)));
        }
    }

    /// True when `name` is declared here or in the module.
    fn has(&self, name: &str) -> bool {
        self.index.contains_key(name) || self.module.as_ref().is_some_and(|m| m.has(name))
    }

    /// Where `name` is, for the code of this layout's kernel.
    pub fn get(&self, name: &str) -> Option<SharedVar> {
        let placed = match self.index.get(name) {
            Some(&i) => self.vars[i],
            None => {
                let module = self.module.as_ref()?;
                module.vars[*module.index.get(name)?]
            }
        };
        let offset = match placed {
            Placed::Static(offset) => offset,
            Placed::Extern => self.dynamic_base.unwrap_or(0),
        };
        Some(SharedVar { offset })
    }
}

/// One entry of a kernel's `.param` list.
#[derive(Debug, Clone, PartialEq)]
pub struct EntryParam {
    pub name: String,
    pub ty: Ty,
    /// Byte offset in the parameter area (naturally aligned, in declaration order); the
    /// parameter lives at `c[0x0][PARAM_BASE + offset]`.
    pub offset: u32,
    pub span: Span,
}
