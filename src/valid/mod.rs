//! Validation: everything the reference documents call an encoding restriction or an error that
//! can be seen before running, plus the control-flow facts backends rely on.
//!
//! [`validate`] checks a kernel and returns its [`KernelInfo`], the proof that it passed: only
//! the validator constructs one, its fields are read-only, and it is bound to the kernel it was
//! computed for ([`KernelInfo::is_for`]). Backends take `(&Kernel, &KernelInfo)` and assume
//! everything listed below without checking it again (the JIT refuses a kernel whose info is
//! not its own, since its generated code relies on these facts for memory safety).
//! Every broken rule is reported (not just the first), in source order, as a
//! [`ValidationError`] whose `rule` quotes the sentence of the reference document it breaks,
//! prefixed by the document's file name. The rule texts live in [`rules`].
//!
//! # What a validated kernel guarantees
//!
//! * **Launch** (`launch.rs`): block dimensions at least 1 with at most 1024 threads, grid
//!   dimensions at least 1 with x below 2^31 and y, z at most 65535, shared size at most 16 MiB;
//!   the warp size fits the dialect; parameters lie naturally aligned and disjoint in constant
//!   bank 0 from the kernel's layout's parameter base on ([`crate::ir::CbankLayout`]).
//! * **Atomics** (`atomics.rs`): the op and size are in the `(dialect, space)` op×size table
//!   (`ATOMS` exactly per `000_6d05a8552870c0ae.txt`); `src2` is present exactly for CAS, CAST
//!   and FCMPWR; `spin` only on shared CAST; a vector atomic is one of the forms of
//!   `atomics::VECTOR_FORMS`, in the global space or at a generic address; a 128-bit atomic
//!   is `Exch` or `Cas`, on a host with a 16-byte compare-and-swap; in SASS, Rb and Rc are registers, the `ATOMS`
//!   Imm24 has zero low bits and fits `ImmU24`/`ImmS24`, and `ATOMS.CAS/.CAST` pair Rb/Rc as the
//!   document requires. `PreDec` is rejected: no front end produces it (vISA's predec is `Sub` 1 and a decrement).
//! * **Operands** (`operands.rs`): every register (each word of a pair) is below
//!   [`Kernel::num_regs`], every predicate below [`Kernel::num_preds`]; in SASS every 64-bit
//!   pair starts at an even register; constant reads are naturally aligned and inside their
//!   bank: bank 0 ([`cbank_bytes`]) or one of the kernel's others
//!   ([`crate::ir::LaunchSpec::const_banks`]); branch targets are instructions; ALU types, source modifiers,
//!   conversions and comparisons are legal; `LDS`/`STS` immediates fit 24 bits; no store or
//!   atomic to the constant bank; no generic addresses in SASS; shared-window bases in SASS are
//!   32-bit registers; barrier ids are 0..=15. Operand widths: a shift amount
//!   (`Binary` `Shl`/`Shr` `b`) is always one 32-bit word; `Popc`/`Clz` results are one word;
//!   `MulWide` is defined for integer types up to 32 bits. Loads and stores accept every
//!   [`crate::ir::Ty`] but `B128` (each is 1, 2, 4 or 8 bytes; a narrow store writes the low
//!   bits); a vector access has 1, 2, 4 or 8 elements of at most 16 bytes in all, and a vector
//!   store or atomic's data is in registers; in SASS every 128-bit quad starts at a multiple
//!   of 4. `B128` appears only in `Exch`/`Cas` atomics, whose operands are registers.
//! * **Surfaces** (`surfaces.rs`, `atomics.rs`): a surface address is in the global space and
//!   moves one scalar element (not `B128`); its coordinate register is not RZ and, in SASS,
//!   starts at a multiple of 2 (two coordinates) or 4 (three); a handle register is not RZ and
//!   an immediate handle is, in SASS, a 13-bit word index; `format_sign` (`.SD32`/`.SD64`)
//!   appears only on atomics of `U32`/`U64`. Surface atomics follow the `SUATOM` op×size table
//!   (`004_16d4664d52412e92.txt`); a CAS takes its swap value from the register vector after
//!   its compare value (in SASS, aligned to the vector's length); in SASS a sparse predicate
//!   with an immediate handle appears only on CAS.
//! * **Orders** (`orders.rs`): loads are weak, relaxed, acquire or volatile; stores weak,
//!   relaxed, release or volatile; atomics relaxed, acquire, release or acq_rel; fences
//!   acquire, release, acq_rel or sc (`001_e732919ae3db9bea.txt`).
//! * **Control** (`cfg.rs`): the kernel is not empty and no reachable path runs past the last
//!   instruction.
//!
//! Besides the control-flow facts, [`KernelInfo::written_before_read`] says which registers
//! can never be read before being written (`init.rs`), so their launch value need not be set,
//! [`KernelInfo::invariant`] which registers hold the same value in every lane of a warp
//! wherever they are read (`uniform.rs`), and [`KernelInfo::guard_lanes`] in which lanes of a
//! warp a guard can be true, for predicates that the lane index alone decides (`lanes.rs`).

#![deny(clippy::wildcard_enum_match_arm)]

mod atomics;
mod blocks;
mod cfg;
mod init;
mod lanes;
mod launch;
mod live;
pub use live::Liveness;
mod operands;
mod orders;
pub mod rules;
mod surfaces;
mod uniform;

pub use atomics::{table, AtomicTable, Row, Size, TABLES};
pub use launch::{
    block_problems, check_launch, grid_problems, launch_problems, shared_problems, LaunchLimit,
    LaunchProblem,
};

use crate::ir::{Control, Dialect, Guard, Inst, Kernel, LaunchSpec, Op, Pred, Span};
use std::fmt;

/// The validator's proof: facts about a kernel that passed validation, which backends and the
/// scheduler may rely on. Only [`validate`] constructs one, and readers cannot change it; it
/// remembers which kernel it was computed for ([`KernelInfo::is_for`]), so a backend that
/// relies on it for memory safety (the JIT) can refuse a kernel it does not belong to.
///
/// Every per-instruction slice has one entry per instruction.
#[derive(Debug, Clone)]
pub struct KernelInfo {
    reconverge: Vec<Option<u32>>,
    is_join: Vec<bool>,
    block_start: Vec<bool>,
    backward_branch: Vec<bool>,
    reachable: Vec<bool>,
    post_dominator: Vec<Option<u32>>,
    cbank_bytes: u32,
    num_barriers: u32,
    written_before_read: Vec<bool>,
    invariant: Vec<bool>,
    lane_sets: Vec<Option<u32>>,
    liveness: live::Liveness,
    /// Every register is live everywhere (`KernelInfo::unchecked`).
    all_live: bool,
    fingerprint: u64,
}

impl KernelInfo {
    /// For each instruction: if it is a conditional branch, the instruction where lanes that
    /// diverge there reconverge (its immediate post-dominator), or `None` when the paths only
    /// meet at exit, or when one of its paths can never reach `EXIT` (an infinite loop: lanes
    /// there never arrive, so nobody waits for them). For an [`Op::WarpSplit`], its `rejoin`.
    pub fn reconverge(&self) -> &[Option<u32>] {
        &self.reconverge
    }

    /// For each instruction: true if it is the reconvergence point of some branch (backends
    /// need to compare against `stop_pc` only there).
    pub fn is_join(&self) -> &[bool] {
        &self.is_join
    }

    /// For each instruction: true if it starts a basic block (entry, branch target, the
    /// instruction after a branch, exit or barrier, or a reconvergence point).
    pub fn block_start(&self) -> &[bool] {
        &self.block_start
    }

    /// For each instruction: true if it is a branch that can jump backward (target <= pc; the
    /// guard is not `!PT`). The scheduler's yield points, so spinning code lets others run.
    pub fn backward_branch(&self) -> &[bool] {
        &self.backward_branch
    }

    /// For each instruction: true if some path from instruction 0 reaches it.
    pub fn reachable(&self) -> &[bool] {
        &self.reachable
    }

    /// For each instruction: its immediate post-dominator, `None` when that is the kernel's
    /// exit or when no path from the instruction reaches an `EXIT` (an infinite loop).
    pub fn post_dominator(&self) -> &[Option<u32>] {
        &self.post_dominator
    }

    /// Bytes of constant bank 0 the kernel may read: every constant operand lies inside them
    /// (see [`cbank_bytes`]).
    pub fn cbank_bytes(&self) -> u32 {
        self.cbank_bytes
    }

    /// One more than the highest barrier id used (0 when the kernel has no barrier).
    pub fn num_barriers(&self) -> u32 {
        self.num_barriers
    }

    /// For each register (not instruction): true when every path writes it, unguarded, before
    /// any read, so its launch value (zero) can never be observed and the scheduler need not
    /// zero it when it reuses a warp's register file (see `init.rs`).
    pub fn written_before_read(&self) -> &[bool] {
        &self.written_before_read
    }

    /// For each register (not instruction): true when it is *warp-invariant* (`uniform.rs`):
    /// written by one unguarded pure instruction from immediates, the constant bank, uniform
    /// special registers and other invariant registers, which dominates every read. Wherever
    /// a lane reads it, every lane of the warp has the same value, so backends may compute it
    /// once per warp and write it to every lane's slot.
    pub fn invariant(&self) -> &[bool] {
        &self.invariant
    }

    /// The lanes of a warp in which an instruction guarded by `guard` executes, as far as its
    /// guard decides, when that is the same set wherever the instruction runs: every lane for
    /// `PT`, and for a *lane-constant* predicate (`lanes.rs`: written once, from the lane
    /// index and immediates, before every read) its lane set or, negated, the rest of the
    /// warp's lanes. `None` for any other predicate. Bit `l` is lane `l`.
    pub fn guard_lanes(&self, guard: Guard, warp_size: u32) -> Option<u32> {
        let lanes = if warp_size >= 32 {
            u32::MAX
        } else {
            (1u32 << warp_size) - 1
        };
        if guard.pred.is_pt() {
            return Some(if guard.negate { 0 } else { lanes });
        }
        let set = self.pred_lanes(guard.pred)?;
        Some(if guard.negate { !set & lanes } else { set })
    }

    /// The lane set of predicate `p` when it is lane-constant (`lanes.rs`): bit `l` is the
    /// value its one writer writes in lane `l`, and every lane reads there. `None` for any
    /// other predicate.
    pub fn pred_lanes(&self, p: Pred) -> Option<u32> {
        *self.lane_sets.get(usize::from(p.0))?
    }

    /// The registers live after instruction `pc` of `kernel` (the kernel this info is for;
    /// see `live.rs`), as bit sets: bit `r % 64` of word `r / 64`. Computed on demand from the
    /// facts kept per straight-line block. An info made by `KernelInfo::unchecked` has every
    /// register live everywhere.
    pub fn live_after(&self, kernel: &Kernel, pc: usize) -> Vec<u64> {
        if self.all_live {
            return vec![u64::MAX; (kernel.num_regs as usize).div_ceil(64)];
        }
        self.liveness.live_after(kernel, pc)
    }

    /// [`KernelInfo::live_after`] of every instruction of `range`, in order, in one pass.
    pub fn live_after_range(
        &self,
        kernel: &Kernel,
        range: std::ops::Range<usize>,
    ) -> Vec<Vec<u64>> {
        if self.all_live {
            let all = vec![u64::MAX; (kernel.num_regs as usize).div_ceil(64)];
            return vec![all; range.len()];
        }
        self.liveness.live_after_range(kernel, range)
    }

    /// Whether this is the proof for `kernel`: computed by [`validate`] for a kernel with the
    /// same instructions, register and predicate counts, dialect, warp size and constant banks.
    pub fn is_for(&self, kernel: &Kernel) -> bool {
        self.fingerprint == fingerprint(kernel)
    }
}

/// What a [`KernelInfo`] is bound to: a hash of everything validation checked that a backend
/// relies on (a guard against pairing a proof with another kernel, not against adversaries).
fn fingerprint(kernel: &Kernel) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (
        kernel.dialect,
        kernel.warp_size,
        kernel.num_regs,
        kernel.num_preds,
    )
        .hash(&mut h);
    cbank_bytes(&kernel.launch).hash(&mut h);
    kernel.launch.const_banks.hash(&mut h);
    kernel.insts.len().hash(&mut h);
    for inst in &kernel.insts {
        (&inst.op, inst.guard).hash(&mut h);
    }
    h.finish()
}

/// Kernel infos for unit tests of the scheduler and the backends on kernels that validation
/// would reject (scripted, deliberately invalid or with reconvergence points placed by hand).
#[cfg(test)]
impl KernelInfo {
    /// An info for `kernel` with no reconvergence points, block starts or barriers, a
    /// constant bank of `cbank_bytes`, and every register live everywhere and zeroed.
    pub(crate) fn unchecked(kernel: &Kernel, cbank_bytes: u32) -> KernelInfo {
        let n = kernel.insts.len();
        KernelInfo {
            reconverge: vec![None; n],
            is_join: vec![false; n],
            block_start: vec![false; n],
            backward_branch: vec![false; n],
            reachable: vec![true; n],
            post_dominator: vec![None; n],
            cbank_bytes,
            num_barriers: 0,
            written_before_read: vec![false; kernel.num_regs as usize],
            invariant: vec![false; kernel.num_regs as usize],
            lane_sets: vec![None; kernel.num_preds as usize],
            liveness: live::Liveness::default(),
            all_live: true,
            fingerprint: fingerprint(kernel),
        }
    }

    /// Sets the invariant registers to what the analysis (`uniform.rs`) proves for `kernel`,
    /// so that backend tests of forms validation rejects still see real invariance facts.
    pub(crate) fn prove_invariant(&mut self, kernel: &Kernel) {
        let flow = cfg::analyze(kernel);
        self.invariant = uniform::invariant_registers(kernel, &flow);
        self.lane_sets = lanes::lane_sets(kernel, &flow);
    }

    /// Makes `reconv` the reconvergence point of the branch at `branch`.
    pub(crate) fn set_join(&mut self, branch: u32, reconv: u32) {
        self.reconverge[branch as usize] = Some(reconv);
        self.is_join[reconv as usize] = true;
    }
}

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    pub kernel: String,
    /// The offending instruction, if the rule is about one.
    pub pc: Option<u32>,
    pub span: Span,
    /// What is wrong, in the program's terms.
    pub message: String,
    /// The rule broken, quoted from the reference document, with the document's file name.
    pub rule: String,
}

impl fmt::Display for ValidationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {} (rule: {})",
            self.span.line, self.span.col, self.message, self.rule
        )
    }
}

/// Every rule a kernel broke, in source order.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ValidationErrors(pub Vec<ValidationError>);

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

/// Collects the errors of one kernel.
pub(crate) struct Diagnostics {
    kernel: String,
    errors: Vec<ValidationError>,
}

impl Diagnostics {
    fn new(kernel: &str) -> Diagnostics {
        Diagnostics {
            kernel: kernel.to_string(),
            errors: Vec::new(),
        }
    }

    /// An error about instruction `pc`.
    pub(crate) fn error(&mut self, pc: u32, inst: &Inst, message: String, rule: &str) {
        self.errors.push(ValidationError {
            kernel: self.kernel.clone(),
            pc: Some(pc),
            span: inst.span,
            message,
            rule: rule.to_string(),
        });
    }

    /// An error about the kernel or one of its declarations.
    pub(crate) fn kernel_error(&mut self, span: Span, message: String, rule: &str) {
        self.errors.push(ValidationError {
            kernel: self.kernel.clone(),
            pc: None,
            span,
            message,
            rule: rule.to_string(),
        });
    }
}

/// An offset for messages: `0x10`, `-0x190`.
pub(crate) fn fmt_offset(off: i64) -> String {
    if off < 0 {
        format!("-{:#x}", off.unsigned_abs())
    } else {
        format!("{off:#x}")
    }
}

/// The bytes of constant bank 0 a kernel may read: the whole ABI area below its layout's
/// parameter base ([`crate::ir::CbankLayout`]: the launch geometry, the windows, the stack
/// pointer, the descriptor; the words no field names read as zero), then the parameters'
/// extent (at least [`LaunchSpec::cbank_reads`]).
pub fn cbank_bytes(launch: &LaunchSpec) -> u32 {
    let end = launch.params_end().max(u64::from(launch.cbank_reads));
    u32::try_from(end).unwrap_or(u32::MAX)
}

/// The control flow and register liveness of a kernel that need not be valid (both analyses
/// are total): per instruction, its successors (the instruction count stands for the exit),
/// and the liveness ([`live::Liveness::live_after`] gives the registers live after an
/// instruction, as [`KernelInfo::live_after`] does). For front-end checks that need dataflow
/// before validation (`front::sass::rcp_seed`).
pub(crate) fn flow_and_liveness(kernel: &Kernel) -> (Vec<Vec<u32>>, live::Liveness) {
    let flow = cfg::analyze(kernel);
    let live = live::liveness(kernel, &flow);
    (flow.succ, live)
}

/// Checks `kernel` and computes its [`KernelInfo`].
pub fn validate(kernel: &Kernel) -> Result<KernelInfo, ValidationErrors> {
    let mut d = Diagnostics::new(&kernel.name);
    check_kernel(&mut d, kernel);
    if u32::try_from(kernel.insts.len()).is_err() {
        d.kernel_error(
            kernel.span,
            format!(
                "{} instructions do not fit 32-bit program counters",
                kernel.insts.len()
            ),
            rules::EMPTY_KERNEL,
        );
        return Err(ValidationErrors(d.errors));
    }

    let cbank = cbank_bytes(&kernel.launch);
    let flow = cfg::analyze(kernel);
    for (index, inst) in kernel.insts.iter().enumerate() {
        let pc = index as u32;
        operands::check_registers(&mut d, kernel, pc, inst);
        operands::check_const_operands(&mut d, &kernel.launch, cbank, pc, inst);
        operands::check_op(&mut d, kernel, pc, inst);
        if let Op::Atomic(a) = &inst.op {
            atomics::check(&mut d, kernel, pc, inst, a);
        }
        if flow.falls_off[index] && flow.reachable[index] {
            d.error(
                pc,
                inst,
                "control reaches the end of the kernel without EXIT".to_string(),
                rules::FALL_OFF_END,
            );
        }
    }
    if !d.errors.is_empty() {
        return Err(ValidationErrors(d.errors));
    }
    Ok(kernel_info(kernel, &flow, cbank))
}

/// Kernel-level rules: warp size, launch shape, parameter layout, non-empty body.
fn check_kernel(d: &mut Diagnostics, kernel: &Kernel) {
    let warp_ok = match kernel.dialect {
        Dialect::Sass | Dialect::Ptx => kernel.warp_size == 32,
        Dialect::Visa => matches!(kernel.warp_size, 8 | 16 | 32),
    };
    if !warp_ok {
        d.kernel_error(
            kernel.span,
            format!(
                "warp size {} is invalid for {:?}",
                kernel.warp_size, kernel.dialect
            ),
            rules::WARP_SIZE,
        );
    }
    let l = &kernel.launch;
    for p in launch_problems(l.grid, l.block, l.shared_bytes) {
        d.kernel_error(kernel.span, p.message, p.rule);
    }
    check_params(d, l);
    // The other constant banks: increasing bank numbers (so each at most once), none is bank 0.
    let mut prev = 0u8;
    for b in &l.const_banks {
        if b.bank <= prev {
            d.kernel_error(
                kernel.span,
                format!(
                    "constant bank {} is listed out of order, twice, or as bank 0 (the launch's)",
                    b.bank
                ),
                rules::CONST_OPERAND,
            );
        }
        prev = prev.max(b.bank);
    }
    if kernel.insts.is_empty() {
        d.kernel_error(
            kernel.span,
            "the kernel has no instructions (it must end with EXIT)".to_string(),
            rules::FALL_OFF_END,
        );
    }
}

/// Parameters sit in constant bank 0 from the layout's parameter base on, naturally aligned,
/// without overlap (the front-end assigns the offsets; a violation is a front-end bug).
fn check_params(d: &mut Diagnostics, launch: &LaunchSpec) {
    const RULE: &str = "issue 2 (program files): \"buffers and `.param` scalars from `c[0x0][0x160]` on, in declaration order, naturally aligned (a buffer is its 64-bit device address)\"; issue 10: the base follows the architecture (`c[0x0][0x210]` on sm_90)";
    let mut prev_end: u64 = u64::from(launch.layout.param_base());
    for p in &launch.params {
        let size = p.cbank_size();
        let start = u64::from(p.cbank_offset);
        if start < prev_end {
            d.kernel_error(
                p.span,
                format!(
                    "parameter {} at c[0x0][{:#x}] overlaps the geometry or an earlier parameter (must be at {:#x} or later)",
                    p.name, p.cbank_offset, prev_end
                ),
                RULE,
            );
        }
        if p.cbank_offset % size != 0 {
            d.kernel_error(
                p.span,
                format!(
                    "parameter {} at c[0x0][{:#x}] is not {size}-byte aligned",
                    p.name, p.cbank_offset
                ),
                RULE,
            );
        }
        prev_end = prev_end.max(start + u64::from(size));
    }
}

/// The control-flow facts of a kernel that passed validation.
fn kernel_info(kernel: &Kernel, flow: &cfg::ControlFlow, cbank: u32) -> KernelInfo {
    let n = kernel.insts.len();
    let exit = n as u32;
    let post_dominator: Vec<Option<u32>> = flow
        .ipdom
        .iter()
        .map(|d| d.filter(|&p| p != exit))
        .collect();
    let mut info = KernelInfo {
        reconverge: vec![None; n],
        is_join: vec![false; n],
        block_start: vec![false; n],
        backward_branch: vec![false; n],
        reachable: flow.reachable.clone(),
        post_dominator: post_dominator.clone(),
        cbank_bytes: cbank,
        num_barriers: 0,
        written_before_read: init::written_before_read(kernel, flow),
        invariant: uniform::invariant_registers(kernel, flow),
        lane_sets: lanes::lane_sets(kernel, flow),
        liveness: live::liveness(kernel, flow),
        all_live: false,
        fingerprint: fingerprint(kernel),
    };
    if n > 0 {
        info.block_start[0] = true;
    }
    for (pc, inst) in kernel.insts.iter().enumerate() {
        let control = inst.op.control();
        match control {
            // A uniform branch splits a group only by its guard, like a plain branch.
            Control::Branch { target } | Control::UniformBranch { target } => {
                if !inst.guard.is_never() {
                    info.block_start[target as usize] = true;
                    info.backward_branch[pc] = target as usize <= pc;
                }
                if !inst.guard.is_always() && !inst.guard.is_never() {
                    // Lanes that enter a path which never reaches EXIT never arrive at a join:
                    // waiting for them would only stall the other lanes, so such a branch gets
                    // no reconvergence point.
                    let all_paths_exit = flow.succ[pc]
                        .iter()
                        .all(|&s| s == exit || flow.ipdom[s as usize].is_some());
                    if all_paths_exit {
                        info.reconverge[pc] = post_dominator[pc];
                    }
                }
            }
            // A split is a branch to itself whose reconvergence point the op names.
            Control::Split { rejoin } => {
                if !inst.guard.is_never() {
                    info.block_start[pc] = true;
                    info.backward_branch[pc] = true;
                    info.reconverge[pc] = Some(rejoin);
                }
            }
            Control::Barrier => {
                if let Op::Barrier { id } = inst.op {
                    info.num_barriers = info.num_barriers.max(id + 1);
                }
            }
            Control::Next | Control::Exit => {}
        }
        let ends_block = control.ends_block();
        if ends_block && pc + 1 < n {
            info.block_start[pc + 1] = true;
        }
    }
    for join in info.reconverge.clone().into_iter().flatten() {
        info.is_join[join as usize] = true;
        info.block_start[join as usize] = true;
    }
    info
}
