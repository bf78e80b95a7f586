//! Subroutines: `CALL.REL.NOINC` into a device function and `RET.REL.NODEC` back, inlined.
//!
//! ptxas compiles a `__noinline__` device function into code after the caller's `EXIT` (or,
//! with separate compilation, into a section of its own) and calls it with a static return
//! address:
//!
//! ```text
//! /*0110*/  MOV R6, 0x130 ;
//! /*0120*/  CALL.REL.NOINC `($gen$_Z4bumpPj) ;     // cuobjdump: CALL.REL.NOINC 0x190
//! /*0130*/  BAR.SYNC.DEFER_BLOCKING 0x0 ;
//!   ...
//! $gen$_Z4bumpPj:
//!   ...
//! /*01d0*/  RET.REL.NODEC R6 `(gen) ;               // cuobjdump: RET.REL.NODEC R6 0x0
//! ```
//!
//! The IR has no indirect branches, so the front-end inlines: each `CALL` is replaced by a
//! copy of the callee's code, whose branches and labels stay inside the copy and whose `RET`s
//! become branches (with the `RET`'s guard) to the instruction after the call. The
//! `MOV Rn, ADDR` before the call stays (on the GPU it writes the same value). Inlining needs
//! the pattern to be static: the nearest earlier write of the `RET`'s register in the caller
//! must be `MOV Rn, ADDR` with `ADDR` the address after the `CALL` (when the listing gives
//! addresses); recursion (direct or not) is an error, as is a `RET` outside a subroutine.
//!
//! A function's code is cut into regions: the entry code from the start to the first
//! subroutine, and each subroutine from its label (a call target, or a `.type NAME,@function`
//! label) to the next one. A call's target is a label of the same function, an address of it
//! (cuobjdump), or another function of the listing (a non-entry section).

use super::super::lexer::{SyntaxError, Token};
use super::operands::predicate_word;
use super::unemulated::{form, mnemonic};
use super::{lower_one, ops, KernelDraft};
use crate::ir::{Guard, Inst, Op};
use std::collections::{BTreeSet, HashMap};

/// How deep calls may nest (each level is a copy of code).
const MAX_DEPTH: usize = 32;

/// A run of one function's instructions, `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Region {
    func: usize,
    start: u32,
    end: u32,
}

/// One instruction of the kernel being built.
enum Emit {
    /// Instruction `index` of the region's function, lowered with the region copy `copy`.
    Inst { copy: usize, index: u32 },
    /// A `RET`, as a branch to `target` (set once the copy is complete).
    Ret {
        func: usize,
        index: u32,
        target: u32,
    },
    /// An instruction that failed (the error is recorded); it lowers to nothing useful.
    Failed,
}

/// One copy of a region: where each of its instructions went.
struct Copy {
    region: Region,
    /// New pc of each instruction of the region, and of its end.
    new_pc: Vec<u32>,
}

struct Expander<'d, 's, 'a> {
    drafts: &'d [KernelDraft<'s, 'a>],
    /// Per function: the pcs where subroutines start.
    starts: Vec<BTreeSet<u32>>,
    out: Vec<Emit>,
    copies: Vec<Copy>,
    errors: Vec<(String, SyntaxError)>,
}

fn is_mnemonic(toks: &[Token], base: &str) -> bool {
    mnemonic(toks).is_some_and(|t| {
        t.text
            .split('.')
            .next()
            .is_some_and(|m| m.eq_ignore_ascii_case(base))
    })
}

/// The tokens after the mnemonic.
fn operands<'t, 'a>(toks: &'t [Token<'a>]) -> &'t [Token<'a>] {
    let m = mnemonic(toks).map(|m| m.span.start);
    let at = toks
        .iter()
        .position(|t| Some(t.span.start) == m)
        .map_or(toks.len(), |i| i + 1);
    &toks[at..]
}

/// The call target as written: a name in `` `(NAME) `` or bare, or an address.
enum Target<'a> {
    Name(&'a str),
    Address(u64),
}

fn target<'a>(ops: &[Token<'a>]) -> Option<Target<'a>> {
    let word = ops.iter().find(|t| t.is_word())?;
    let text = word.text;
    if let Some(hex) = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        return u64::from_str_radix(hex, 16).ok().map(Target::Address);
    }
    if text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse().ok().map(Target::Address);
    }
    Some(Target::Name(text))
}

impl<'d, 's, 'a> Expander<'d, 's, 'a> {
    fn new(drafts: &'d [KernelDraft<'s, 'a>]) -> Self {
        let mut starts: Vec<BTreeSet<u32>> = drafts.iter().map(|_| BTreeSet::new()).collect();
        for (f, d) in drafts.iter().enumerate() {
            for name in &d.function_labels {
                if let Some((_, pc, _)) = d.labels.iter().find(|(n, _, _)| n == name) {
                    starts[f].insert(*pc);
                }
            }
            for inst in &d.insts {
                if !is_mnemonic(inst.toks, "CALL") {
                    continue;
                }
                match target(operands(inst.toks)) {
                    Some(Target::Name(n)) => {
                        if let Some((_, pc, _)) = d.labels.iter().find(|(l, _, _)| l == n) {
                            starts[f].insert(*pc);
                        }
                    }
                    Some(Target::Address(a)) => {
                        if let Some(pc) = d.insts.iter().position(|i| i.address == Some(a)) {
                            starts[f].insert(pc as u32);
                        }
                    }
                    None => {}
                }
            }
        }
        Expander {
            drafts,
            starts,
            out: Vec::new(),
            copies: Vec::new(),
            errors: Vec::new(),
        }
    }

    fn region_from(&self, func: usize, start: u32) -> Region {
        let len = self.drafts[func].insts.len() as u32;
        let end = self.starts[func]
            .range(start + 1..)
            .next()
            .copied()
            .unwrap_or(len);
        Region { func, start, end }
    }

    fn entry_region(&self, func: usize) -> Region {
        let len = self.drafts[func].insts.len() as u32;
        let end = self.starts[func]
            .iter()
            .copied()
            .find(|&s| s > 0)
            .unwrap_or(len);
        Region {
            func,
            start: 0,
            end,
        }
    }

    fn fail(&mut self, toks: &[Token], e: SyntaxError) {
        self.errors.push((form(toks), e));
        self.out.push(Emit::Failed);
    }

    /// The region a call at instruction `index` of `func` enters.
    fn callee(&self, func: usize, toks: &[Token]) -> Result<Region, SyntaxError> {
        let here = mnemonic(toks).map_or(toks[0].span, |t| t.span);
        let d = &self.drafts[func];
        match target(operands(toks)) {
            Some(Target::Name(n)) => {
                if let Some((_, pc, _)) = d.labels.iter().find(|(l, _, _)| l == n) {
                    return Ok(self.region_from(func, *pc));
                }
                if let Some(f) = self.drafts.iter().position(|x| x.name == n) {
                    return Ok(self.entry_region(f));
                }
                Err(SyntaxError::new(here, format!("the call target `{n}` is not a label or function of the listing")))
            }
            Some(Target::Address(a)) => match d.insts.iter().position(|i| i.address == Some(a)) {
                Some(pc) => Ok(self.region_from(func, pc as u32)),
                None => Err(SyntaxError::new(here, format!("the call target {a:#x} is not the address of an instruction of this function"))),
            },
            None => Err(SyntaxError::new(here, "a call needs a target").expected("`(NAME)` or an address")),
        }
    }

    /// The register every `RET` of `region` returns through, if it has any `RET`.
    fn ret_register(&self, region: Region) -> Result<Option<&'a str>, SyntaxError> {
        let mut reg: Option<&'a str> = None;
        for inst in &self.drafts[region.func].insts[region.start as usize..region.end as usize] {
            if !is_mnemonic(inst.toks, "RET") {
                continue;
            }
            let Some(r) = operands(inst.toks).iter().find(|t| t.is_word()) else {
                continue;
            };
            match reg {
                Some(prev) if !prev.eq_ignore_ascii_case(r.text) => {
                    return Err(SyntaxError::new(r.span, format!("this `RET` returns through {} but another through {prev}: the return address is not static", r.text)));
                }
                _ => reg = Some(r.text),
            }
        }
        Ok(reg)
    }

    /// The register the caller sets the return address in, for a callee that returns through
    /// `reg`: `reg` itself, or the register the callee's last write of `reg` copies
    /// (`IMAD.MOV.U32 R2, RZ, RZ, R7 ; RET.REL.NODEC R2`, ptxas's `__match_any_sync`
    /// fallback) when the callee never writes that register.
    fn link_register(&self, region: Region, reg: &'a str) -> &'a str {
        let insts = &self.drafts[region.func].insts[region.start as usize..region.end as usize];
        let writes = |r: &str| {
            insts
                .iter()
                .filter(|i| !is_mnemonic(i.toks, "RET"))
                .filter(|i| {
                    operands(i.toks)
                        .first()
                        .is_some_and(|t| t.is_word() && t.text.eq_ignore_ascii_case(r))
                })
                .collect::<Vec<_>>()
        };
        // The last write before the `RET`s (ptxas's fallbacks are straight-line code).
        let to_reg = writes(reg);
        let Some(only) = to_reg.last() else {
            return reg;
        };
        let ops: Vec<_> = operands(only.toks).iter().filter(|t| t.is_word()).collect();
        let source = if is_mnemonic(only.toks, "MOV") && ops.len() == 2 {
            Some(ops[1])
        } else if is_mnemonic(only.toks, "IMAD")
            && ops.len() == 4
            && ops[1].text.eq_ignore_ascii_case("RZ")
            && ops[2].text.eq_ignore_ascii_case("RZ")
        {
            Some(ops[3])
        } else {
            None
        };
        let guarded = only.toks.first().is_some_and(|t| t.is_punct("@"));
        match source {
            Some(t) if !guarded && Self::untouched(insts, only, t.text) => t.text,
            Some(_) | None => reg,
        }
    }

    /// Whether no instruction of `insts` but `copy` names register `r` (`R7`) in any operand,
    /// nor names a register pair or wider group that covers it: then the callee cannot have
    /// changed it. Conservative on purpose: a name in any position counts as a possible write.
    fn untouched(insts: &[super::PendingInst], copy: &super::PendingInst, r: &str) -> bool {
        let number = |w: &str| -> Option<u32> {
            let upper = w.to_ascii_uppercase();
            let head = upper.split('.').next()?.strip_prefix('R')?.to_string();
            head.parse().ok()
        };
        let Some(n) = number(r) else {
            return false;
        };
        insts
            .iter()
            .filter(|i| !std::ptr::eq(*i, copy) && !is_mnemonic(i.toks, "RET"))
            .all(|i| {
                let wide = mnemonic(i.toks).map_or(0, |m| {
                    let m = m.text.to_ascii_uppercase();
                    if m.contains(".128") {
                        3
                    } else if m.contains(".64") || m.contains("WIDE") {
                        1
                    } else {
                        0
                    }
                });
                operands(i.toks).iter().filter(|t| t.is_word()).all(|t| {
                    let pair = t.text.to_ascii_uppercase().ends_with(".64");
                    let span = if pair { 1.max(wide) } else { wide };
                    number(t.text).is_none_or(|m| !(m..=m + span).contains(&n))
                })
            })
    }

    /// Checks the static return-address pattern before the call at `index` of `caller`.
    fn check_return_address(
        &self,
        caller: Region,
        index: u32,
        reg: &str,
    ) -> Result<(), SyntaxError> {
        let d = &self.drafts[caller.func];
        let call = &d.insts[index as usize];
        let here = mnemonic(call.toks).map_or(call.toks[0].span, |t| t.span);
        let after = d.insts.get(index as usize + 1).and_then(|i| i.address);
        for i in (caller.start..index).rev() {
            let toks = d.insts[i as usize].toks;
            let ops = operands(toks);
            let writes = ops
                .first()
                .is_some_and(|t| t.is_word() && t.text.eq_ignore_ascii_case(reg));
            if !writes {
                continue;
            }
            let value = ops.get(2).filter(|t| t.is_word()).and_then(|t| {
                match target(std::slice::from_ref(t)) {
                    Some(Target::Address(a)) => Some(a),
                    Some(Target::Name(_)) | None => None,
                }
            });
            let static_mov =
                (is_mnemonic(toks, "MOV") || is_mnemonic(toks, "MOV32I")) && value.is_some();
            return match (static_mov, value, after) {
                (true, Some(v), Some(a)) if v != a => Err(SyntaxError::new(here, format!("the return address {reg} = {v:#x} is not the instruction after the call ({a:#x})"))),
                (true, _, _) => Ok(()),
                (false, _, _) => Err(SyntaxError::new(here, format!("the return address in {reg} is not set by a `MOV {reg}, ADDR` before the call, so the call cannot be inlined"))),
            };
        }
        Err(SyntaxError::new(
            here,
            format!("no `MOV {reg}, ADDR` sets the return address before the call"),
        ))
    }

    /// Appends a copy of `region`; returns the indices of its `RET`s (their targets are the
    /// caller's to set).
    fn expand(&mut self, region: Region, stack: &mut Vec<Region>) -> Vec<usize> {
        let copy = self.copies.len();
        self.copies.push(Copy {
            region,
            new_pc: Vec::with_capacity((region.end - region.start + 1) as usize),
        });
        let mut rets = Vec::new();
        for index in region.start..region.end {
            let pc = self.out.len() as u32;
            self.copies[copy].new_pc.push(pc);
            let toks = self.drafts[region.func].insts[index as usize].toks;
            if is_mnemonic(toks, "RET") {
                if stack.is_empty() {
                    let at = mnemonic(toks).map_or(toks[0].span, |t| t.span);
                    self.fail(
                        toks,
                        SyntaxError::new(
                            at,
                            "`RET` outside a subroutine (the kernel's own code cannot return)",
                        ),
                    );
                } else {
                    rets.push(self.out.len());
                    self.out.push(Emit::Ret {
                        func: region.func,
                        index,
                        target: 0,
                    });
                }
                continue;
            }
            if !is_mnemonic(toks, "CALL") {
                self.out.push(Emit::Inst { copy, index });
                continue;
            }
            let callee = match self.callee(region.func, toks) {
                Ok(c) => c,
                Err(e) => {
                    self.fail(toks, e);
                    continue;
                }
            };
            let at = mnemonic(toks).map_or(toks[0].span, |t| t.span);
            if stack.contains(&callee) || callee == region {
                self.fail(
                    toks,
                    SyntaxError::new(
                        at,
                        "a recursive call: atomjit inlines subroutines and cannot inline recursion",
                    ),
                );
                continue;
            }
            if stack.len() >= MAX_DEPTH {
                self.fail(
                    toks,
                    SyntaxError::new(at, format!("calls nest deeper than {MAX_DEPTH}")),
                );
                continue;
            }
            if is_guarded(toks) {
                self.fail(
                    toks,
                    SyntaxError::new(at, "a predicated `CALL` cannot be inlined"),
                );
                continue;
            }
            let checked = self.ret_register(callee).and_then(|reg| {
                let link = reg.map(|r| self.link_register(callee, r));
                link.map_or(Ok(()), |r| self.check_return_address(region, index, r))
            });
            if let Err(e) = checked {
                self.fail(toks, e);
                continue;
            }
            stack.push(region);
            let callee_rets = self.expand(callee, stack);
            stack.pop();
            let back = self.out.len() as u32;
            for r in callee_rets {
                if let Emit::Ret { target, .. } = &mut self.out[r] {
                    *target = back;
                }
            }
        }
        let end = self.out.len() as u32;
        self.copies[copy].new_pc.push(end);
        rets
    }
}

fn is_guarded(toks: &[Token]) -> bool {
    toks.first().is_some_and(|t| t.is_punct("@"))
}

/// The guard of an instruction statement (for a `RET`, which becomes a branch).
fn guard_of(toks: &[Token]) -> Result<Guard, SyntaxError> {
    if !is_guarded(toks) {
        return Ok(Guard::ALWAYS);
    }
    let negate = toks.get(1).is_some_and(|t| t.is_punct("!"));
    let p = toks.get(if negate { 2 } else { 1 });
    match p.and_then(|p| predicate_word(p.text, p.span)) {
        Some(Ok(pred)) => Ok(Guard { pred, negate }),
        Some(Err(e)) => Err(e),
        None => Err(
            SyntaxError::new(toks[0].span, "expected a guard predicate after `@`")
                .expected("P0..P6 or PT"),
        ),
    }
}

/// A copy's labels and cuobjdump addresses at their new pcs.
type CopyMaps = (HashMap<String, u32>, HashMap<u64, Vec<u32>>);

/// A kernel's instructions and labels once its calls are inlined.
pub struct Lowered {
    pub insts: Vec<Inst>,
    /// The entry code's labels at their new pcs (labels inside inlined copies are not kept).
    pub labels: Vec<(String, u32)>,
    /// Every instruction that failed, with its form.
    pub errors: Vec<(String, SyntaxError)>,
}

/// Lowers function `index` of `drafts` with its calls inlined.
pub fn lower_kernel(
    drafts: &[KernelDraft],
    index: usize,
    params: &super::operands::Params,
    source: &str,
) -> Lowered {
    let mut x = Expander::new(drafts);
    let entry = x.entry_region(index);
    x.expand(entry, &mut Vec::new());
    let num_insts = x.out.len() as u32;
    // Per copy: its labels and addresses at their new pcs.
    let maps: Vec<CopyMaps> = x
        .copies
        .iter()
        .map(|c| {
            let d = &drafts[c.region.func];
            let inside = |pc: u32| (c.region.start..=c.region.end).contains(&pc);
            let labels = d
                .labels
                .iter()
                .filter(|(_, pc, _)| inside(*pc))
                .map(|(n, pc, _)| (n.clone(), c.new_pc[(pc - c.region.start) as usize]))
                .collect();
            let mut addresses: HashMap<u64, Vec<u32>> = HashMap::new();
            for pc in c.region.start..c.region.end {
                if let Some(a) = d.insts[pc as usize].address {
                    addresses
                        .entry(a)
                        .or_default()
                        .push(c.new_pc[(pc - c.region.start) as usize]);
                }
            }
            (labels, addresses)
        })
        .collect();
    let mut insts = Vec::with_capacity(x.out.len());
    let mut errors = x.errors;
    for emit in &x.out {
        let placeholder = |span| Inst {
            op: Op::Nop,
            guard: Guard::ALWAYS,
            span,
            text: String::new(),
            sched: Vec::new(),
        };
        match emit {
            Emit::Failed => insts.push(placeholder(drafts[index].span)),
            Emit::Ret {
                func,
                index,
                target,
            } => {
                let toks = drafts[*func].insts[*index as usize].toks;
                let span = super::join(toks[0].span, toks[toks.len() - 1].span);
                match guard_of(toks) {
                    Ok(guard) => insts.push(Inst {
                        op: Op::Branch {
                            target: *target,
                            uniform: false,
                        },
                        guard,
                        span,
                        text: source
                            .get(span.start as usize..span.end as usize)
                            .unwrap_or("")
                            .to_string(),
                        sched: Vec::new(),
                    }),
                    Err(e) => {
                        errors.push((form(toks), e));
                        insts.push(placeholder(span));
                    }
                }
            }
            Emit::Inst { copy, index } => {
                let c = &x.copies[*copy];
                let toks = drafts[c.region.func].insts[*index as usize].toks;
                let (labels, addresses) = &maps[*copy];
                let ctx = ops::Ctx {
                    params,
                    labels,
                    addresses,
                    num_insts,
                    source,
                    pc: insts.len() as u32,
                };
                match lower_one(toks, &ctx, source) {
                    Ok(inst) => insts.push(inst),
                    Err(e) => {
                        errors.push((form(toks), e));
                        insts.push(placeholder(toks[0].span));
                    }
                }
            }
        }
    }
    errors.sort_by_key(|(_, e)| e.span.start);
    let labels = maps
        .first()
        .map(|(l, _)| {
            let mut v: Vec<(String, u32)> = drafts[index]
                .labels
                .iter()
                .filter_map(|(n, _, _)| l.get(n).map(|&pc| (n.clone(), pc)))
                .collect();
            v.sort_by_key(|(_, pc)| *pc);
            v
        })
        .unwrap_or_default();
    Lowered {
        insts,
        labels,
        errors,
    }
}
