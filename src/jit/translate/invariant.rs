//! Warp-invariant registers in generated code ([`KernelInfo::invariant`], `valid/uniform.rs`:
//! wherever a lane reads one, every lane of the warp holds the same value).
//!
//! * **Computed once per warp.** An instruction whose every destination is invariant (an
//!   *invariant writer*: unguarded pure per-lane work from immediates, the constant bank,
//!   uniform special registers and invariant registers) runs for the lowest executing lane
//!   only, and its value is stored into all 32 slots of the register's row with eight 16-byte
//!   stores, when anything after it may read the register file ([`Translator::store_needed`]).
//!   Writing the slots of lanes that have not executed it is allowed by the analysis (no lane
//!   reads the register before executing its definition, which writes the same value).
//! * **Hoisted out of fused regions.** In a fused region the invariant writers run before the
//!   region's lane loop, and the loop reads their values from the register cache (the block
//!   before the loop dominates it). The loop is skipped when nothing else is left in it.
//! * **Atomics on an invariant address** are aggregated without a run-time address test
//!   (`memory.rs`, "Warp aggregation").
//!
//! [`KernelInfo::invariant`]: crate::valid::KernelInfo::invariant

use super::{fusion_of, Fusion, Translator, REG_ROW_BYTES};
use crate::ir::{Address, Inst, Kernel, Operand, Use};
use crate::jit::JitError;
use crate::valid::KernelInfo;
use cranelift_codegen::ir::types::I32X4;
use cranelift_codegen::ir::InstBuilder;

/// Whether register word `r` is invariant (RZ reads zero everywhere: it counts).
fn reg_invariant(invariant: &[bool], r: crate::ir::Reg) -> bool {
    r.is_rz() || invariant.get(usize::from(r.0)) == Some(&true)
}

/// Whether operand `op`, read as `words` words, is the same in every lane of the warp.
pub(super) fn operand_invariant(invariant: &[bool], op: Operand, words: u16) -> bool {
    match op {
        Operand::Reg(r) => (0..words).all(|w| reg_invariant(invariant, r.word(w))),
        Operand::Imm(_) | Operand::Const { .. } => true,
    }
}

/// Whether every register of a linear or indexed address is invariant (a surface address
/// never is: it is resolved per lane).
pub(super) fn address_invariant(invariant: &[bool], addr: &Address) -> bool {
    let words = |bits: u8| if bits == 64 { 2 } else { 1 };
    match addr {
        Address::Linear(l) => l
            .base
            .is_none_or(|b| operand_invariant(invariant, Operand::Reg(b), words(l.base_bits))),
        Address::Indexed(x) => {
            operand_invariant(invariant, Operand::Reg(x.base), words(x.base_bits))
                && operand_invariant(invariant, Operand::Reg(x.index), words(x.index_bits))
        }
        Address::Surface(_) => false,
    }
}

/// Whether `inst` is an invariant writer (see the module docs): unguarded, pure per-lane, no
/// predicate destination, at least one register destination and every one invariant, and no
/// uniform-register destination (those have their own broadcast, `warp.rs`).
pub(super) fn writes_only_invariant(kernel: &Kernel, invariant: &[bool], inst: &Inst) -> bool {
    if !inst.guard.is_always() || !inst.op.is_pure_per_lane() {
        return false;
    }
    let (mut any, mut all) = (false, true);
    inst.op.for_each_use(|u| match u {
        Use::Dst { reg, words } => {
            for w in 0..words {
                let r = reg.word(w);
                if !r.is_rz() {
                    any = true;
                    all &= reg_invariant(invariant, r) && !kernel.uniform.has_reg(r);
                }
            }
        }
        Use::PredDst(p) => all &= p.is_pt(),
        Use::Src { .. } | Use::PredSrc(_) => {}
    });
    any && all
}

/// Whether `inst` is an invariant writer of `kernel` that the translator computes inline (not
/// through a slow path, which writes the register file itself).
pub(super) fn invariant_writer(
    kernel: &Kernel,
    info: &KernelInfo,
    aggregate: crate::jit::Aggregation,
    inst: &Inst,
) -> bool {
    writes_only_invariant(kernel, info.invariant(), inst)
        && fusion_of(kernel, info, inst, aggregate) == Fusion::Alu
}

impl<'a, 'f> Translator<'a, 'f> {
    /// Whether `inst` is an invariant writer of this kernel that the translator computes
    /// inline (not through a slow path, which writes the register file itself).
    pub(super) fn is_invariant_writer(&self, inst: &Inst) -> bool {
        invariant_writer(self.kernel, self.info, self.aggregate, inst)
    }

    /// Runs invariant writer `pc` once, for the lowest lane of the current mask (which must
    /// not be empty), leaving its values in the register cache and storing each into every
    /// lane's slot when the register file may be read for it later.
    pub(super) fn emit_invariant(&mut self, pc: usize) -> Result<(), JitError> {
        let inst = &self.kernel.insts[pc];
        let lane = self.lane_at(self.mask);
        let fused = self.fused.replace(lane);
        self.pc = pc as u32;
        self.splatting = true;
        let flow = self.translate_inst(inst);
        self.splatting = false;
        self.fused = fused;
        flow?;
        let mut dsts = Vec::new();
        inst.op.for_each_use(|u| {
            if let Use::Dst { reg, words } = u {
                dsts.extend((0..words).map(|w| reg.word(w)).filter(|r| !r.is_rz()));
            }
        });
        for r in dsts {
            if !self.store_needed(r) {
                continue;
            }
            let Some(&(_, v)) = self.reg_cache.iter().find(|e| e.0 == r.0) else {
                return Err(self.internal("an invariant writer left no value in the cache"));
            };
            self.splat_reg(r, v);
        }
        Ok(())
    }

    /// Stores `v` into all 32 slots of register `r`'s row.
    pub(super) fn splat_reg(&mut self, r: crate::ir::Reg, v: cranelift_codegen::ir::Value) {
        let unaligned = self.regs_unaligned();
        let base = i32::from(r.0) * REG_ROW_BYTES;
        let v4 = self.b.ins().splat(I32X4, v);
        for k in 0..8 {
            self.b.ins().store(unaligned, v4, self.regs, base + 16 * k);
        }
    }
}
