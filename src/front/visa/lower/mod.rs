//! vISA to IR: one vISA kernel becomes one IR kernel whose warps are the vISA threads.
//!
//! # The model
//!
//! * **A thread is a warp.** `.kernel_attr SimdSize=N` (8, 16 or 32) is the warp size; channel
//!   `c` of a thread is lane `c`. A CTA is an OpenCL work-group: its size must be a multiple of
//!   `N`, so every thread has all its channels (a partial last thread would need channels that
//!   exist but start disabled; refused with a clear error rather than run differently).
//! * **Variables live in memory** ([`grf`]): each thread's general variables are a byte file in
//!   the CTA's shared window, so regions that cross channels are plain loads and stores.
//!   Variables every access reaches one element per channel are per-lane IR registers instead
//!   ([`promote`]: the kernel is lowered twice, once to see every access), and stores to bytes
//!   no load reads are left out. Predicate variables are IR predicates (flag bit `n` is lane
//!   `n`'s predicate).
//! * **The execution mask is data, not IR divergence** ([`flow`]). Every lane runs every IR
//!   instruction of the kernel; a per-lane register says whether the channel is running
//!   (`resume == 0`), waiting at a join point (`resume == k`), or done (`resume == DONE`), and
//!   an IR predicate (`em`) mirrors "running". An instruction `(Mk[_NM], n)` executes in the
//!   lanes `4(k−1) ≤ lane < 4(k−1) + n` whose `em` is set (any `em` with `_NM`) and whose
//!   predicate holds: that is its IR guard. IR branches are therefore always uniform, and
//!   warp-collective IR ops (vote, reduce) see the whole thread, which `goto`'s "jump to the
//!   next point where some channel waits" and the `.any`/`.all` predicates need. Before the
//!   first `goto`, `ret` or join point in program order (and the first label a `goto` targets)
//!   every channel runs, so guards there leave `em` out, and a `ret` there ends the thread with
//!   one `EXIT`.
//! * **Arguments** arrive through the thread payload ([`payload`]): a prologue writes what
//!   IGC's OpenCL payload layout puts at each `.input`'s offset into the variable's bytes.
//!
//! The per-instruction lowering is in [`alu`] (arithmetic, logic, compares, moves) and
//! [`memory`] (`svm_*`, fences). What is not supported is refused with an error at the
//! instruction: indirect and address operands, `.sat`, subroutine calls, the other message
//! instructions.

// The lowering matches the operand forms and types an instruction takes and refuses every
// other with an error at the operand: a form added to the parser later is refused until a
// lowering takes it, which is the behaviour wanted, so the catch-all arms are deliberate.
#![allow(clippy::wildcard_enum_match_arm)]

mod alu;
mod flow;
mod grf;
mod memory;
mod payload;
mod promote;

use super::ast::{self, ExecSize, Inst, Kernel as AstKernel, LabelId, OperandKind, VarId};
use crate::front::lexer::SyntaxError;
use crate::ir::{
    self, Address, Guard, Inst as IrInst, MemAccess, MemOrder, Op, Operand, Pred, PredSrc, Reg,
    Scope, Space, Span, Ty,
};
use grf::{ChannelBytes, GrfLayout};
use promote::{Held, Lanes, Promotion, Touch, PAYLOAD_WRITES};
use std::collections::{BTreeMap, BTreeSet, HashMap};

type LResult<T> = Result<T, SyntaxError>;

fn err(span: Span, message: impl Into<String>) -> SyntaxError {
    SyntaxError::new(span, message)
}

/// The lane index (set by the prologue).
const R_LANE: Reg = Reg(0);
/// Per lane: 0 running, `k` waiting at join point `k`, [`flow::DONE`] finished.
const R_RESUME: Reg = Reg(1);
/// The byte offset of this thread's GRF file in the CTA's shared window.
const R_FILE: Reg = Reg(2);
/// The first of the per-stride base registers (`file + lane × stride`).
const R_STRIDES: u16 = 4;
/// How many distinct channel strides a kernel may use.
const MAX_STRIDES: u16 = 28;
/// The first scratch register of an instruction.
const R_TEMP: u16 = R_STRIDES + MAX_STRIDES;

/// Running channels.
const P_EM: Pred = Pred(0);
/// The guard of the instruction being lowered.
const P_GUARD: Pred = Pred(1);
/// Scratch predicates.
const P_T0: Pred = Pred(2);
const P_T1: Pred = Pred(3);
/// The first range predicate (`lane − offset < size`).
const P_RANGES: u16 = 4;
/// One for every execution mask a kernel can name: offsets 0, 4, … 28 for sizes 1, 2 and 4
/// (8 each), four of size 8, two of 16, one of 32 — 31 (block accesses and the payload use
/// some of these), so a valid kernel never runs out.
const MAX_RANGES: u16 = 32;
/// The first predicate of a vISA predicate variable.
const P_VARS: u16 = P_RANGES + MAX_RANGES;

/// Scratch registers replicated instructions may take for themselves ([`promote`]): a bound on
/// the registers a kernel's warps carry (128 bytes each per warp).
const REPLICATED_TEMPS: u16 = 512;

/// The instruction number ([`Touch::inst`]) of code that is not an instruction's (join code,
/// the end of the kernel): never replicable.
const NOT_AN_INST: u32 = PAYLOAD_WRITES - 1;

/// What the front end needs from the launch to lower a kernel.
pub struct LaunchInfo<'l> {
    /// The work-group size.
    pub block: [u32; 3],
    /// The kernel's parameters, bound from `.buffer`/`.param` lines, with their constant-bank
    /// offsets.
    pub params: &'l [ir::ParamDecl],
    /// `.payload OFFSET KIND` lines.
    pub payload: &'l [ir::PayloadDecl],
}

/// A lowered kernel: its instructions and what the launch must provide.
pub struct Lowered {
    pub insts: Vec<IrInst>,
    pub labels: Vec<(String, u32)>,
    pub warp_size: u32,
    /// The bytes of one thread's GRF file (shared memory per warp).
    pub file_bytes: u32,
}

/// One GRF access of a lowering: the bytes channel `c` touches, channel `c` being lane
/// `c + mask_offset`, read or written as a `vector` of `ty`.
#[derive(Debug, Clone, Copy)]
struct GrfAccess {
    bytes: ChannelBytes,
    mask_offset: u32,
    ty: Ty,
    vector: u8,
}

impl GrfAccess {
    /// One `ty` per channel.
    fn scalar(bytes: ChannelBytes, mask_offset: u32, ty: Ty) -> GrfAccess {
        GrfAccess {
            bytes,
            mask_offset,
            ty,
            vector: 1,
        }
    }
}

/// Where a GRF access goes.
enum Place {
    /// The register of a promoted variable.
    Register(Held),
    /// The GRF file.
    File(MemAccess),
    /// Nowhere: a store no load reads.
    Nowhere,
}

/// A branch target not known when the branch is emitted.
#[derive(Debug, Clone, Copy)]
enum Target {
    Label(LabelId),
    Join(u32),
    Body(usize),
}

/// The lowering state of one kernel.
struct Lower<'k> {
    k: &'k AstKernel,
    source: &'k str,
    simd: u32,
    layout: GrfLayout,
    /// The body (everything after the prologue); branch targets are fixed up at the end.
    body: Vec<IrInst>,
    fixups: Vec<(usize, Target)>,
    label_pos: HashMap<LabelId, usize>,
    join_pos: BTreeMap<u32, usize>,
    /// The join points ([`flow::Joins`]).
    joins: flow::Joins,
    /// Byte stride → the register holding `file + lane × stride`.
    strides: BTreeMap<u32, Reg>,
    /// `(offset, size)` → the predicate `offset ≤ lane < offset + size`.
    ranges: BTreeMap<(u32, u32), Pred>,
    /// vISA predicate variable → IR predicate.
    pred_vars: HashMap<VarId, Pred>,
    /// The next scratch register of the current instruction.
    next_temp: u16,
    /// The first scratch register (after the promoted variables').
    temp_base: u16,
    /// One past the highest scratch register an instruction that is not replicated took.
    temp_end: u16,
    /// The next scratch register of replicated instructions, which do not reuse one (so that
    /// the JIT sees their values as the same in every lane: see [`promote`]), up to
    /// `replicated_end`; past it they take the ordinary scratch registers.
    replicated_next: u16,
    replicated_end: u16,
    /// The instruction being lowered, as [`Touch::inst`] numbers them.
    inst_id: u32,
    /// The next payload write's number.
    next_payload_write: u32,
    /// The instructions found replicable so far ([`promote`]).
    replicable: BTreeSet<u32>,
    /// The instruction being lowered runs replicated: unguarded, every operand at channel 0's
    /// bytes, its scratch registers from `replicated_next`.
    replicating: bool,
    /// Some access went to the GRF file (else the kernel needs no shared memory).
    file_used: bool,
    /// Every GRF access lowered so far (for [`Promotion::decide`]).
    touches: Vec<Touch>,
    /// The variables that live in registers ([`promote`]).
    promotion: Promotion,
    /// The lanes each conjunction predicate written last may hold in (see
    /// [`Lower::guard_lanes`]).
    conj_lanes: HashMap<Pred, Lanes>,
    /// Every channel of the thread runs here: no code that can change the execution mask
    /// (`goto`, `ret`, join code) comes before this point in program order, and no `goto`
    /// targets a label before it, so the code so far is only reached by falling through from
    /// the entry, where every channel runs. Guards then leave the mask out ([`Lower::guard`]).
    em_whole: bool,
    /// The labels some `goto` targets.
    goto_targets: std::collections::HashSet<LabelId>,
    /// The span and text of the instruction being lowered.
    span: Span,
    text: String,
}

/// Why a kernel did not lower.
pub struct Refusal {
    pub error: SyntaxError,
    /// The launch, not the kernel, is at fault (its shape or what it binds): the kernel stays
    /// in the program and running it reports the error.
    pub launch: bool,
}

impl From<SyntaxError> for Refusal {
    fn from(error: SyntaxError) -> Refusal {
        Refusal {
            error,
            launch: false,
        }
    }
}

/// Lowers kernel `k` of a parsed text for a launch, with the variables that can be promoted to
/// registers ([`promote`]) in registers.
pub fn lower_kernel(k: &AstKernel, source: &str, launch: &LaunchInfo) -> Result<Lowered, Refusal> {
    lower_kernel_with(k, source, launch, true)
}

/// [`lower_kernel`], promoting variables to registers only when `promote` (off, every
/// variable lives in the GRF file: the model the promotion must be indistinguishable from).
pub fn lower_kernel_with(
    k: &AstKernel,
    source: &str,
    launch: &LaunchInfo,
    promote: bool,
) -> Result<Lowered, Refusal> {
    let simd = simd_size(k)?;
    let threads: u32 = launch.block.iter().product();
    if threads % simd != 0 {
        return Err(Refusal {
            launch: true,
            error: err(
                k.span,
                format!(
                "kernel `{}` is SIMD{simd}: its work-group size ({threads}) must be a multiple of \
                 {simd}, so that every thread has all its channels (a partial thread is not \
                 supported)",
                k.name
            ),
            ),
        });
    }
    let layout = GrfLayout::new(k);
    // `replicated_base`: the first scratch register of replicated instructions, above every
    // other instruction's.
    let lower = |promotion: Promotion,
                 replicated_base: Option<u16>|
     -> Result<(Lower, Vec<IrInst>), Refusal> {
        let temp_base = promotion.end.max(R_TEMP);
        let mut l = Lower {
            k,
            source,
            simd,
            layout: layout.clone(),
            body: Vec::new(),
            fixups: Vec::new(),
            label_pos: HashMap::new(),
            join_pos: BTreeMap::new(),
            joins: flow::Joins::find(k)?,
            strides: BTreeMap::new(),
            ranges: BTreeMap::new(),
            pred_vars: HashMap::new(),
            next_temp: temp_base,
            temp_base,
            temp_end: temp_base,
            replicated_next: replicated_base.unwrap_or(temp_base),
            replicated_end: replicated_base
                .unwrap_or(temp_base)
                .saturating_add(REPLICATED_TEMPS),
            inst_id: 0,
            next_payload_write: PAYLOAD_WRITES,
            replicable: BTreeSet::new(),
            replicating: false,
            file_used: false,
            touches: Vec::new(),
            promotion,
            conj_lanes: HashMap::new(),
            em_whole: true,
            goto_targets: flow::goto_targets(k),
            span: k.span,
            text: String::new(),
        };
        l.assign_predicates()?;
        l.lower_body()?;
        let prologue = l.prologue(launch).map_err(|error| Refusal {
            error,
            launch: true,
        })?;
        Ok((l, prologue))
    };
    let mut lowered = lower(Promotion::default(), None)?;
    if promote {
        // Lowered once to see every access; again with the variables that can be registers.
        let first = &lowered.0;
        let promotion = Promotion::decide(k, &layout, &first.touches, &first.replicable, R_TEMP);
        // Replicated instructions take scratch registers above the others'. The second pass
        // takes no more of those than the first (a promoted access needs no address
        // registers), but if it did, a third pass with its figure places them right.
        let mut span = first.temp_end - first.temp_base;
        loop {
            let base = promotion.end.max(R_TEMP).saturating_add(span);
            let next = lower(promotion.clone(), Some(base))?;
            let used = next.0.temp_end - next.0.temp_base;
            lowered = next;
            if used <= span {
                break;
            }
            span = used;
        }
    }
    let (l, prologue) = lowered;
    Ok(l.finish(prologue)?)
}

/// `.kernel_attr SimdSize=N`.
fn simd_size(k: &AstKernel) -> LResult<u32> {
    let attr = k
        .attrs
        .iter()
        .rev()
        .find(|a| a.name.eq_ignore_ascii_case("SimdSize"));
    match attr.map(|a| &a.value) {
        Some(ast::AttrValue::Int(n @ (8 | 16 | 32))) => Ok(*n as u32),
        Some(_) => Err(err(
            attr.map_or(k.span, |a| a.span),
            "`SimdSize` must be 8, 16 or 32",
        )),
        None => Err(SyntaxError {
            expected: Some("`.kernel_attr SimdSize=8` (or 16, 32)".into()),
            ..err(
                k.span,
                format!(
                    "kernel `{}` does not say its SIMD width: atomjit needs \
                     `.kernel_attr SimdSize=N` to know how many channels a thread has",
                    k.name
                ),
            )
        }),
    }
}

impl<'k> Lower<'k> {
    fn assign_predicates(&mut self) -> LResult<()> {
        let mut next = P_VARS;
        for (i, v) in self.k.vars.iter().enumerate() {
            if let ast::VarKind::Predicate { .. } = v.kind {
                self.pred_vars.insert(VarId(i as u32), Pred(next));
                next = next.checked_add(1).ok_or_else(|| {
                    err(
                        v.span.unwrap_or(self.k.span),
                        "too many predicate variables",
                    )
                })?;
            }
        }
        Ok(())
    }

    fn lower_body(&mut self) -> LResult<()> {
        let k = self.k;
        for (si, stmt) in k.stmts.iter().enumerate() {
            match stmt {
                ast::Stmt::Label(id) | ast::Stmt::Function { label: id, .. } => {
                    self.label_pos.insert(*id, self.body.len());
                    if self.goto_targets.contains(id) {
                        self.em_whole = false;
                    }
                    if let Some(j) = self.joins.at_label(*id) {
                        self.inst_id = NOT_AN_INST;
                        self.span = k.label(*id).span;
                        self.text = format!("{}:", k.label(*id).name);
                        self.join_code(j);
                    }
                }
                ast::Stmt::Inst(inst) => {
                    self.span = inst.span;
                    self.text = self.source_text(inst.span);
                    self.next_temp = self.temp_base;
                    self.inst_id = si as u32;
                    if self.replicable_inst(inst) {
                        self.replicable.insert(self.inst_id);
                    }
                    self.replicating = self.promotion.replicated(self.inst_id);
                    let lowered = self.lower_inst(si, inst);
                    self.replicating = false;
                    lowered?;
                }
            }
        }
        // Running off the end: as `ret`.
        self.inst_id = NOT_AN_INST;
        self.span = Span::default();
        self.text = "(end of kernel)".into();
        self.finish_channels();
        Ok(())
    }

    fn source_text(&self, span: Span) -> String {
        self.source
            .get(span.start as usize..span.end as usize)
            .unwrap_or("")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn lower_inst(&mut self, si: usize, inst: &Inst) -> LResult<()> {
        if inst.sat {
            return Err(err(
                inst.mnemonic_span,
                "`.sat` (saturation) is not supported yet",
            ));
        }
        for op in &inst.operands {
            match &op.kind {
                OperandKind::Indirect(_)
                | OperandKind::Addr { .. }
                | OperandKind::AddrOf { .. } => {
                    return Err(err(
                        op.span,
                        "indirect and address operands are not supported yet",
                    ))
                }
                OperandKind::General(_)
                | OperandKind::Raw(_)
                | OperandKind::Imm(_)
                | OperandKind::Pred(_)
                | OperandKind::State { .. }
                | OperandKind::Var(_)
                | OperandKind::Label(_)
                | OperandKind::Other(_) => {}
            }
        }
        if let Some(e) = &inst.exec {
            self.check_exec(e)?;
        }
        self.check_cr0_write(inst)?;
        match inst.kind {
            ast::InstKind::SvmAtomic { op, bits } => self.lower_svm_atomic(inst, op, bits),
            ast::InstKind::SvmGather {
                block_bytes,
                num_blocks,
            } => self.lower_svm_gather_scatter(inst, block_bytes, num_blocks, false),
            ast::InstKind::SvmScatter {
                block_bytes,
                num_blocks,
            } => self.lower_svm_gather_scatter(inst, block_bytes, num_blocks, true),
            ast::InstKind::SvmBlockLd { owords, unaligned } => {
                self.lower_svm_block(inst, owords, unaligned, false)
            }
            ast::InstKind::SvmBlockSt { owords, unaligned } => {
                self.lower_svm_block(inst, owords, unaligned, true)
            }
            ast::InstKind::Fence { scope, flags } => self.lower_fence(scope, flags),
            ast::InstKind::Branch => self.lower_branch(si, inst),
            ast::InstKind::Cmp(rel) => self.lower_cmp(inst, rel),
            ast::InstKind::Plain => self.lower_plain(si, inst),
            ast::InstKind::Unknown => Err(err(
                inst.mnemonic_span,
                format!("`{}` is not supported yet", inst.mnemonic),
            )),
        }
    }

    /// Writes to `%cr0` (control register 0) may only set its "retain denormals" bits (6, 7
    /// and 10: double, single and half precision), as IGC's prologue `or %cr0 %cr0 0x4c0` does:
    /// atomjit computes with round-to-nearest-even and denormals kept, so any other write (a
    /// rounding mode, a flush mode) would be ignored, and is refused instead.
    fn check_cr0_write(&self, inst: &Inst) -> LResult<()> {
        let writes_cr0 = |o: &ast::Operand| match &o.kind {
            OperandKind::General(g) => self
                .k
                .var(g.root)
                .general()
                .is_some_and(|v| v.predefined == Some(ast::Predefined::Cr0)),
            _ => false,
        };
        let Some(dst) = inst.operands.first().filter(|o| writes_cr0(o)) else {
            return Ok(());
        };
        const RETAIN_DENORMALS: u64 = 0x4c0;
        let allowed = inst.mnemonic == "or"
            && inst.pred.is_none()
            && matches!(inst.operands.as_slice(), [_, a, b]
                if writes_cr0(a)
                && matches!(&b.kind, OperandKind::Imm(i) if i.bits & !RETAIN_DENORMALS == 0));
        if allowed {
            Ok(())
        } else {
            Err(err(
                dst.span,
                "atomjit computes with round-to-nearest-even and denormals kept: `%cr0` may only \
                 be written by `or %cr0 %cr0 IMM` setting the retain-denormals bits (0x4c0)",
            ))
        }
    }

    /// The document's rules on `(Mk, n)`: the channels must exist and the offset be aligned to
    /// the size.
    fn check_exec(&self, e: &ExecSize) -> LResult<()> {
        let off = e.channel_offset();
        if off + e.size > self.simd {
            return Err(err(
                e.span,
                format!(
                    "channels {off}..{} do not exist in a SIMD{} thread",
                    off + e.size - 1,
                    self.simd
                ),
            ));
        }
        if e.size >= 4 && off % e.size != 0 {
            return Err(err(
                e.span,
                format!(
                    "mask M{} (channel offset {off}) is not aligned to the execution size {}",
                    e.mask_group, e.size
                ),
            ));
        }
        Ok(())
    }

    /// The instruction's execution size (instructions without one run at 1).
    fn exec_of(&self, inst: &Inst) -> ExecSize {
        inst.exec.unwrap_or(ExecSize {
            mask_group: 1,
            no_mask: true,
            size: 1,
            span: inst.span,
        })
    }

    // -----------------------------------------------------------------------------------------
    // Emitting

    fn emit(&mut self, guard: Guard, op: Op) {
        self.body.push(IrInst {
            op,
            guard,
            span: self.span,
            text: self.text.clone(),
            sched: Vec::new(),
        });
    }

    fn emit_always(&mut self, op: Op) {
        self.emit(Guard::ALWAYS, op);
    }

    /// A branch to a target fixed up at the end.
    fn emit_branch(&mut self, guard: Guard, target: Target) {
        self.fixups.push((self.body.len(), target));
        self.emit(
            guard,
            Op::Branch {
                target: 0,
                uniform: true,
            },
        );
    }

    /// `words` consecutive scratch registers (a pair starts even).
    fn temp(&mut self, words: u16) -> Reg {
        // A replicated instruction takes registers of its own while the pool lasts; past it,
        // ordinary scratch registers (still exact: its other lanes' scratch values are never
        // observed; the JIT then computes those values per lane).
        let pooled = self.replicating
            && self
                .replicated_next
                .checked_add(words + 1)
                .is_some_and(|end| end <= self.replicated_end);
        let next = if pooled {
            &mut self.replicated_next
        } else {
            &mut self.next_temp
        };
        if words > 1 && *next % 2 == 1 {
            *next += 1;
        }
        let r = Reg(*next);
        *next += words;
        if !pooled {
            self.temp_end = self.temp_end.max(self.next_temp);
        }
        r
    }

    /// Whether `inst` may run replicated if what it writes is uniform ([`promote`]): execution
    /// size 1, no predicate, certain to run in its lane when reached (`_NM`, or every channel
    /// runs here), plain arithmetic without modifiers, a general destination, and sources that
    /// are general operands or immediates other than packed vectors (whose value depends on
    /// the channel).
    fn replicable_inst(&self, inst: &Inst) -> bool {
        const ARITHMETIC: &[&str] = &[
            "mov", "add", "mul", "mulh", "and", "or", "xor", "min", "max", "shl", "shr", "asr",
            "not", "cbit", "mad",
        ];
        let Some(exec) = inst.exec else {
            return false;
        };
        let general = |o: &ast::Operand| matches!(&o.kind, OperandKind::General(g) if g.var != ast::VarId::NULL);
        exec.size == 1
            && inst.pred.is_none()
            && (exec.no_mask || self.em_whole)
            && inst.kind == ast::InstKind::Plain
            && inst.modifiers.is_empty()
            && !inst.sat
            && ARITHMETIC.contains(&inst.mnemonic.as_str())
            && inst.operands.first().is_some_and(general)
            && inst.operands[1..].iter().all(|o| {
                general(o)
                    || matches!(&o.kind, OperandKind::Imm(i)
                        if !matches!(i.ty, ast::ElemType::V | ast::ElemType::UV | ast::ElemType::VF))
            })
    }

    /// The register holding `file + lane × stride`.
    fn stride_base(&mut self, stride: u32) -> LResult<Reg> {
        let n = self.strides.len() as u16;
        if let Some(r) = self.strides.get(&stride) {
            return Ok(*r);
        }
        if n >= MAX_STRIDES {
            return Err(err(
                self.span,
                "too many distinct region strides in one kernel",
            ));
        }
        let r = Reg(R_STRIDES + n);
        self.strides.insert(stride, r);
        Ok(r)
    }

    /// The predicate `offset ≤ lane < offset + size` (`PT` for every lane of the thread).
    fn range_pred(&mut self, offset: u32, size: u32) -> LResult<Pred> {
        if offset == 0 && size >= self.simd {
            return Ok(Pred::PT);
        }
        let n = self.ranges.len() as u16;
        if let Some(p) = self.ranges.get(&(offset, size)) {
            return Ok(*p);
        }
        if n >= MAX_RANGES {
            return Err(err(
                self.span,
                "too many distinct execution masks in one kernel",
            ));
        }
        let p = Pred(P_RANGES + n);
        self.ranges.insert((offset, size), p);
        Ok(p)
    }

    /// The address of a lane's channel bytes: `file + first + (lane − offset) × stride`.
    fn channel_address(&mut self, bytes: ChannelBytes, mask_offset: u32) -> LResult<Address> {
        match bytes {
            ChannelBytes::Linear { first, stride: 0 } => {
                Ok(Address::base32(R_FILE, i64::from(first)))
            }
            ChannelBytes::Linear { first, stride } => {
                let base = self.stride_base(stride)?;
                Ok(Address::base32(
                    base,
                    i64::from(first) - i64::from(mask_offset) * i64::from(stride),
                ))
            }
            ChannelBytes::Region {
                first,
                v,
                w,
                h,
                elem,
            } => {
                // c = lane − offset; e = (c / w) × v + (c % w) × h; file + first + e × elem.
                let c = self.temp(1);
                let row = self.temp(1);
                let col = self.temp(1);
                self.emit_always(Op::Binary {
                    op: ir::BinOp::Sub,
                    ty: Ty::U32,
                    dst: c,
                    a: Operand::Reg(R_LANE).into(),
                    b: Operand::Imm(u64::from(mask_offset)).into(),
                    ftz: false,
                });
                self.emit_always(Op::Binary {
                    op: ir::BinOp::Shr,
                    ty: Ty::U32,
                    dst: row,
                    a: Operand::Reg(c).into(),
                    b: Operand::Imm(u64::from(w.trailing_zeros())).into(),
                    ftz: false,
                });
                self.emit_always(Op::Binary {
                    op: ir::BinOp::And,
                    ty: Ty::U32,
                    dst: col,
                    a: Operand::Reg(c).into(),
                    b: Operand::Imm(u64::from(w - 1)).into(),
                    ftz: false,
                });
                // e × elem = row × (v × elem) + col × (h × elem), plus the file base.
                self.emit_always(imad(row, row, u64::from(v * elem), Operand::Reg(R_FILE)));
                self.emit_always(imad(c, col, u64::from(h * elem), Operand::Reg(row)));
                Ok(Address::base32(c, i64::from(first)))
            }
        }
    }

    /// A GRF access of `ty` at `addr`.
    fn grf_access(ty: Ty, addr: Address) -> MemAccess {
        MemAccess {
            space: Space::Shared,
            ty,
            vector: 1,
            order: MemOrder::Weak,
            scope: Scope::Cta,
            addr,
        }
    }

    /// Loads `access` into `dst` in the lanes of `guard`: from the GRF file, or, for a promoted
    /// variable, from its register. `dst` is a scratch register of the instruction.
    fn grf_load(&mut self, guard: Guard, access: GrfAccess, dst: Reg) -> LResult<()> {
        let op = match self.grf_place(guard, access, true)? {
            Place::Register(Held { elem, reg }) => {
                // A copy between registers has no effect outside its scratch destination, and
                // the other lanes' scratch values are never observed (every effect of the
                // instruction is under its guard), so it runs unguarded: the JIT then sees
                // the scratch register's old value as dead.
                let guard = Guard::ALWAYS;
                self.emit(
                    guard,
                    Op::Mov {
                        ty: if elem == 8 { Ty::U64 } else { Ty::U32 },
                        dst,
                        src: Operand::Reg(reg),
                    },
                );
                if elem < 4 && access.ty.is_signed_int() {
                    // The register holds the element zero-extended; a signed load extends
                    // its sign, as a narrow shared-memory load would.
                    let shift = Operand::Imm(u64::from(32 - 8 * elem));
                    self.emit(guard, alu::bin(ir::BinOp::Shl, Ty::U32, dst, dst, shift));
                    self.emit(guard, alu::bin(ir::BinOp::Shr, Ty::S32, dst, dst, shift));
                }
                return Ok(());
            }
            Place::File(access) => Op::Load { access, dst },
            Place::Nowhere => return Ok(()),
        };
        self.emit(guard, op);
        Ok(())
    }

    /// Stores `src` by `access` in the lanes of `guard` (into the GRF file, or a promoted
    /// variable's register).
    fn grf_store(&mut self, guard: Guard, access: GrfAccess, src: Operand) -> LResult<()> {
        let op = match self.grf_place(guard, access, false)? {
            Place::Register(Held { elem, reg }) if elem < 4 => {
                // A narrow element is held zero-extended: the store keeps its low bits.
                let mask = (1u64 << (8 * elem)) - 1;
                match src {
                    Operand::Imm(v) => Op::Mov {
                        ty: Ty::U32,
                        dst: reg,
                        src: Operand::Imm(v & mask),
                    },
                    _ => Op::Binary {
                        op: ir::BinOp::And,
                        ty: Ty::U32,
                        dst: reg,
                        a: src.into(),
                        b: Operand::Imm(mask).into(),
                        ftz: false,
                    },
                }
            }
            Place::Register(Held { elem, reg }) => Op::Mov {
                ty: if elem == 8 { Ty::U64 } else { Ty::U32 },
                dst: reg,
                src,
            },
            Place::File(access) => Op::Store { access, src },
            Place::Nowhere => return Ok(()),
        };
        self.emit(guard, op);
        Ok(())
    }

    /// Where a load (`load`) or store under `guard` goes; records it for
    /// [`Promotion::decide`].
    fn grf_place(&mut self, guard: Guard, a: GrfAccess, load: bool) -> LResult<Place> {
        // A replicated instruction reads and writes channel 0's bytes in every lane.
        let a = if self.replicating {
            GrfAccess {
                bytes: ChannelBytes::Linear {
                    first: a.bytes.channel0(),
                    stride: 0,
                },
                mask_offset: 0,
                ..a
            }
        } else {
            a
        };
        let touch = Touch {
            bytes: a.bytes,
            mask_offset: a.mask_offset,
            lanes: self.guard_lanes(guard),
            size: a.ty.bytes() * u32::from(a.vector),
            scalar: a.vector == 1,
            load,
            ty: a.ty,
            inst: self.inst_id,
        };
        self.touches.push(touch);
        if self.promotion.dead_store(&touch) {
            return Ok(Place::Nowhere);
        }
        if let Some(held) = self.promotion.register(&touch) {
            return Ok(Place::Register(held));
        }
        self.file_used = true;
        let addr = self.channel_address(a.bytes, a.mask_offset)?;
        Ok(Place::File(MemAccess {
            vector: a.vector,
            ..Self::grf_access(a.ty, addr)
        }))
    }

    /// A superset of the lanes `guard` can hold in: a channel range's lanes, a conjunction's
    /// range term's, else every lane of the thread.
    fn guard_lanes(&self, guard: Guard) -> Lanes {
        let all = Lanes {
            first: 0,
            count: self.simd,
        };
        if guard.negate {
            return all;
        }
        if let Some(lanes) = self.conj_lanes.get(&guard.pred) {
            return *lanes;
        }
        self.range_lanes(guard.pred).unwrap_or(all)
    }

    /// The lanes of a channel range predicate.
    fn range_lanes(&self, pred: Pred) -> Option<Lanes> {
        self.ranges
            .iter()
            .find(|(_, &p)| p == pred)
            .map(|(&(first, count), _)| Lanes { first, count })
    }

    /// The IR predicate of a vISA predicate variable.
    fn pred_of(&self, var: VarId, span: Span) -> LResult<Pred> {
        self.pred_vars
            .get(&var)
            .copied()
            .ok_or_else(|| err(span, "not a predicate variable"))
    }

    // -----------------------------------------------------------------------------------------
    // Guards

    /// The guard of an instruction: its channel range, the execution mask (unless `_NM`) and,
    /// when `with_pred`, its predicate.
    fn guard(&mut self, inst: &Inst, with_pred: bool) -> LResult<Guard> {
        if self.replicating {
            // Every lane computes what the one lane would (see `promote`).
            return Ok(Guard::ALWAYS);
        }
        let exec = self.exec_of(inst);
        let mut terms: Vec<PredSrc> = Vec::new();
        if !(exec.size == self.simd && exec.channel_offset() == 0) {
            let r = self.range_pred(exec.channel_offset(), exec.size)?;
            terms.push(PredSrc {
                pred: r,
                negate: false,
            });
        }
        if !exec.no_mask && !self.em_whole {
            terms.push(PredSrc {
                pred: P_EM,
                negate: false,
            });
        }
        if with_pred {
            if let Some(p) = &inst.pred {
                terms.push(self.predicate_source(p, &exec)?);
            }
        }
        Ok(self.conjunction(&terms, P_GUARD))
    }

    /// `a ∧ b ∧ ...` as a guard, computed into `into` when it takes more than one term.
    fn conjunction(&mut self, terms: &[PredSrc], into: Pred) -> Guard {
        match terms {
            [] => Guard::ALWAYS,
            [one] => Guard {
                pred: one.pred,
                negate: one.negate,
            },
            [first, rest @ ..] => {
                // The conjunction holds only where its range terms do.
                let lanes = terms
                    .iter()
                    .filter(|t| !t.negate)
                    .find_map(|t| self.range_lanes(t.pred))
                    .unwrap_or(Lanes {
                        first: 0,
                        count: self.simd,
                    });
                self.conj_lanes.insert(into, lanes);
                let mut acc = *first;
                for t in rest {
                    self.emit_always(Op::PredLogic {
                        op: ir::BoolOp::And,
                        dst: into,
                        a: acc,
                        b: *t,
                    });
                    acc = PredSrc {
                        pred: into,
                        negate: false,
                    };
                }
                Guard {
                    pred: into,
                    negate: false,
                }
            }
        }
    }

    /// The per-lane value of `(P)`, `(!P)`, `(P.any)`, `(P.all)` under `exec`.
    fn predicate_source(&mut self, p: &ast::Predicate, exec: &ExecSize) -> LResult<PredSrc> {
        let pred = self.pred_of(p.var, p.span)?;
        match p.ctrl {
            ast::PredCtrl::Seq => Ok(PredSrc {
                pred,
                negate: p.negate,
            }),
            ast::PredCtrl::Any | ast::PredCtrl::All => {
                let bits = self.channel_bits(pred, exec.channel_offset(), exec.size);
                self.emit_always(Op::SetP {
                    cmp: if p.ctrl == ast::PredCtrl::Any {
                        ir::CmpOp::Ne
                    } else {
                        ir::CmpOp::Eq
                    },
                    ty: Ty::U32,
                    combine: ir::BoolOp::And,
                    dst: P_T1,
                    dst2: Pred::PT,
                    a: Operand::Reg(bits).into(),
                    b: Operand::Imm(if p.ctrl == ast::PredCtrl::Any {
                        0
                    } else {
                        lane_mask(exec.channel_offset(), exec.size)
                    })
                    .into(),
                    c: PredSrc::TRUE,
                    chain: None,
                });
                Ok(PredSrc {
                    pred: P_T1,
                    negate: p.negate,
                })
            }
        }
    }

    /// A register holding the flag bits `offset .. offset + size` of `pred` (in place: bit `n`
    /// is lane `n`), the same in every lane.
    fn channel_bits(&mut self, pred: Pred, offset: u32, size: u32) -> Reg {
        let r = self.temp(1);
        self.emit_always(Op::Vote {
            mode: ir::VoteMode::Any,
            dst: r,
            dst_pred: Pred::PT,
            src: PredSrc {
                pred,
                negate: false,
            },
        });
        self.emit_always(Op::Binary {
            op: ir::BinOp::And,
            ty: Ty::U32,
            dst: r,
            a: Operand::Reg(r).into(),
            b: Operand::Imm(lane_mask(offset, size)).into(),
            ftz: false,
        });
        r
    }

    // -----------------------------------------------------------------------------------------
    // Assembly

    fn finish(self, prologue: Vec<IrInst>) -> LResult<Lowered> {
        let shift = prologue.len();
        let mut insts = prologue;
        let mut body = self.body;
        for (at, target) in &self.fixups {
            let pos = match *target {
                Target::Label(l) => *self.label_pos.get(&l).ok_or_else(|| {
                    err(
                        self.k.span,
                        format!("label `{}` is not placed", self.k.label(l).name),
                    )
                })?,
                Target::Join(j) => self.join_pos[&j],
                Target::Body(p) => p,
            };
            if let Op::Branch { target, .. } = &mut body[*at].op {
                *target = (pos + shift) as u32;
            }
        }
        insts.append(&mut body);
        let mut labels: Vec<(String, u32)> = self
            .label_pos
            .iter()
            .map(|(l, p)| (self.k.label(*l).name.clone(), (p + shift) as u32))
            .collect();
        labels.sort_by_key(|(_, p)| *p);
        Ok(Lowered {
            insts,
            labels,
            warp_size: self.simd,
            // No access left in the file: no shared memory at all.
            file_bytes: if self.file_used {
                self.layout.file_bytes
            } else {
                0
            },
        })
    }
}

/// `dst = (a CMP imm)` compared as `u32`.
fn setp_u32(cmp: ir::CmpOp, dst: Pred, a: Reg, imm: u64) -> Op {
    Op::SetP {
        cmp,
        ty: Ty::U32,
        combine: ir::BoolOp::And,
        dst,
        dst2: Pred::PT,
        a: Operand::Reg(a).into(),
        b: Operand::Imm(imm).into(),
        c: PredSrc::TRUE,
        chain: None,
    }
}

/// `dst = a × b + c` (low 32 bits).
fn imad(dst: Reg, a: Reg, b: u64, c: Operand) -> Op {
    Op::Imad {
        mode: ir::ImadMode::Lo,
        signed: false,
        dst,
        a: Operand::Reg(a).into(),
        b: Operand::Imm(b).into(),
        c: c.into(),
    }
}

/// Bits `offset .. offset + size` set.
fn lane_mask(offset: u32, size: u32) -> u64 {
    let ones = if size >= 32 {
        u32::MAX
    } else {
        (1u32 << size) - 1
    };
    u64::from(ones << offset)
}
