//! The reference interpreter: per lane, under the active mask, a plain `match` per instruction.
//! It is the oracle of differential tests, so clarity beats speed.
//!
//! [`Interpreter`] implements [`WarpRunner`]: [`run_group`] runs one group `(pc, mask)` of a
//! warp until an event the scheduler must see ([`GroupExit`]). The semantics of every op are
//! those documented in [`crate::ir`]; where the IR leaves a choice to the backend, the choice is
//! documented at the function that makes it.
//!
//! # The run loop
//!
//! At every instruction boundary, first `stop_pc` is checked (reaching it returns
//! [`GroupExit::Reconverge`] without executing it, also at the very start). Then the
//! instruction is fetched, counted in `warp.stats.warp_insts` (once per executed instruction,
//! even when no lane passes the guard), and run for the *executing lanes*: the group's mask
//! intersected with the lanes whose guard holds (`PT` always holds).
//!
//! * `Branch`: executing lanes go to the target, the others fall through. If the whole group
//!   goes one way it continues there, except that a uniformly *taken backward* branch (target
//!   `<=` pc) returns [`GroupExit::Yield`] so that other groups and warps can run (this is what
//!   makes spin loops terminate). A split returns [`GroupExit::Diverge`]. `uniform` (PTX
//!   `bra.uni`) is a promise the interpreter does not need: it evaluates the guard per lane,
//!   which is correct whether or not the promise holds.
//! * `Exit`: executing lanes are added to `warp.exited` and leave the group; an empty group
//!   returns [`GroupExit::Exited`].
//! * `Barrier`: if any lane of the group passes the guard, the *whole group* arrives (a
//!   guarded `BAR.SYNC` is taken as executed by the group; the hardware barrier counts warps,
//!   not lanes) and [`GroupExit::Barrier`] is returned; the scheduler resumes at `pc + 1`. If no
//!   lane passes the guard the barrier is skipped.
//! * Running past the last instruction (validation rejects kernels that can) is an implicit
//!   `EXIT` of the group.
//!
//! # Lanes, sources and traps
//!
//! Per lane, all sources are read before any destination is written. Lanes run in increasing
//! lane order; a faulting access in lane `k` returns [`GroupExit::Trap`] with lanes `< k`
//! having completed their effects and lanes `> k` untouched. Reading a constant-bank operand
//! outside the bank is a fault in [`Space::Const`] like any other access.
//!
//! # Registers
//!
//! `warp.regs[r * WARP_STRIDE + lane]` (structure of arrays); `RZ` reads 0 and discards
//! writes; a 64-bit value is the pair `(r, r+1)`, low word first; predicates are lane masks in
//! `warp.preds`, `PT` reads true and discards writes. Validation guarantees every register and
//! predicate index is below the kernel's `num_regs`/`num_preds`, for which the scheduler sizes
//! the [`WarpState`].
//!
//! # Modules
//!
//! What each op computes is [`crate::sem`], the semantics library the JIT's slow paths call
//! too; this module reads operands, applies it per lane and writes the results. [`atomic`]
//! executes atomics as host atomics, [`memory`] computes addresses and performs checks, loads,
//! stores and fences, and [`surface`] resolves surface addresses (the header pool of
//! [`CtaEnv::surfaces`]) before a load, store or atomic there.

#![deny(clippy::wildcard_enum_match_arm)]

pub mod atomic;
pub mod memory;
pub mod surface;

#[cfg(test)]
#[allow(clippy::wildcard_enum_match_arm)] // a test matches the variant it expects
pub(crate) mod tests;

use crate::exec::{
    CtaEnv, GroupExit, Split, SurfaceTrap, TrapInfo, TrapReason, WarpRunner, WarpState, WARP_STRIDE,
};
use crate::ir::{
    Inst, Op, Operand, Pred, PredMove, PredSrc, Reg, Space, SpecialReg, Src, Ty, VoteMode,
};
use crate::sem;

/// The reference interpreter backend.
#[derive(Debug, Clone, Copy, Default)]
pub struct Interpreter;

impl Interpreter {
    pub fn new() -> Interpreter {
        Interpreter
    }
}

impl WarpRunner for Interpreter {
    fn run_group(
        &self,
        warp: &mut WarpState,
        env: &CtaEnv,
        pc: u32,
        mask: u32,
        stop_pc: Option<u32>,
    ) -> GroupExit {
        run_group(warp, env, pc, mask, stop_pc)
    }
}

/// A faulting access: why, in which space, at which address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub reason: TrapReason,
    pub space: Space,
    pub address: u64,
    /// The surface and coordinates of a faulting surface access (`space` global, `address` 0).
    pub surface: Option<SurfaceTrap>,
}

/// A [`Fault`] in one lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneFault {
    pub lane: u32,
    pub fault: Fault,
}

/// What an instruction leaves the run loop to do next.
enum Flow {
    /// Continue at `pc` with the group `mask`.
    Continue { pc: u32, mask: u32 },
    /// Return to the scheduler.
    Leave(GroupExit),
}

/// Runs the lanes `mask` of `warp` from `pc` until a [`GroupExit`] (see the module docs).
pub fn run_group(
    warp: &mut WarpState,
    env: &CtaEnv,
    pc: u32,
    mask: u32,
    stop_pc: Option<u32>,
) -> GroupExit {
    let (mut pc, mut mask) = (pc, mask);
    loop {
        if stop_pc == Some(pc) {
            return GroupExit::Reconverge { mask };
        }
        if mask == 0 {
            // No lane left to run (the scheduler never passes an empty group).
            return GroupExit::Exited;
        }
        let Some(inst) = env.kernel.insts.get(pc as usize) else {
            warp.exited |= mask;
            return GroupExit::Exited;
        };
        warp.stats.warp_insts += 1;
        let exec = mask & guard_lanes(warp, inst);
        let result = step(warp, env, pc, inst, mask, exec);
        if exec != 0 && !env.kernel.uniform.is_empty() && result.is_ok() {
            broadcast_uniform(warp, &env.kernel.uniform, inst, exec);
        }
        match result {
            Ok(Flow::Continue {
                pc: next_pc,
                mask: next_mask,
            }) => {
                pc = next_pc;
                mask = next_mask;
            }
            Ok(Flow::Leave(exit)) => return exit,
            Err(LaneFault { lane, fault }) => {
                return GroupExit::Trap(TrapInfo {
                    reason: fault.reason,
                    pc,
                    lane,
                    space: fault.space,
                    address: fault.address,
                    surface: fault.surface,
                })
            }
        }
    }
}

/// Where a branch at `pc` sends the group `mask` when the lanes `taken` go to `target`: on as one
/// group, or split (the scheduler then runs both parts and joins them).
fn branch_flow(pc: u32, mask: u32, target: u32, taken: u32) -> Flow {
    let fall = mask & !taken;
    if fall == 0 {
        if target <= pc {
            Flow::Leave(GroupExit::Yield { pc: target, mask })
        } else {
            Flow::Continue { pc: target, mask }
        }
    } else if taken == 0 {
        Flow::Continue { pc: pc + 1, mask }
    } else {
        Flow::Leave(GroupExit::Diverge(Split {
            branch_pc: pc,
            taken_pc: target,
            taken,
            fall_pc: pc + 1,
            fall,
        }))
    }
}

/// The broadcast rule of [`crate::ir::Uniform`]: each uniform register word and predicate that
/// `inst` wrote takes the lowest executing lane's value in every lane of the warp.
fn broadcast_uniform(warp: &mut WarpState, uniform: &crate::ir::Uniform, inst: &Inst, exec: u32) {
    let from = exec.trailing_zeros() as usize;
    inst.op.for_each_use(|u| match u {
        crate::ir::Use::Dst { reg, words } => {
            for i in 0..words {
                let r = reg.word(i);
                if uniform.has_reg(r) {
                    let value = read_reg(warp, r, from);
                    for lane in 0..WARP_STRIDE {
                        write_reg(warp, r, lane, value);
                    }
                }
            }
        }
        crate::ir::Use::PredDst(p) if uniform.has_pred(p) => {
            let bits = &mut warp.preds[p.0 as usize];
            *bits = if *bits >> from & 1 == 1 { u32::MAX } else { 0 };
        }
        crate::ir::Use::PredDst(_) | crate::ir::Use::Src { .. } | crate::ir::Use::PredSrc(_) => {}
    });
}

/// The lanes whose guard holds (all lanes for `@PT`, none for `@!PT`).
fn guard_lanes(warp: &WarpState, inst: &Inst) -> u32 {
    let lanes = pred_lanes(warp, inst.guard.pred);
    if inst.guard.negate {
        !lanes
    } else {
        lanes
    }
}

/// Executes one instruction for the lanes `exec` of the group `mask` at `pc`.
fn step(
    warp: &mut WarpState,
    env: &CtaEnv,
    pc: u32,
    inst: &Inst,
    mask: u32,
    exec: u32,
) -> Result<Flow, LaneFault> {
    let next = Flow::Continue { pc: pc + 1, mask };
    match &inst.op {
        Op::Nop => {}
        &Op::Mov { ty, dst, ref src } => for_lanes(exec, |lane| {
            let value = read_operand(warp, env, src, lane, ty.regs())?;
            write_reg_words(warp, dst, lane, value as u128, ty.regs());
            Ok(())
        })?,
        &Op::ReadSpecial { dst, sr } => for_lanes(exec, |lane| {
            let value = special_register(warp, env, sr, lane);
            write_reg(warp, dst, lane, value);
            Ok(())
        })?,
        &Op::Unary { op, ty, dst, ref a } => for_lanes(exec, |lane| {
            let a = read_src(warp, env, a, ty, lane)?;
            let words = op.result_words(ty);
            write_reg_words(warp, dst, lane, sem::alu::unary(op, ty, a) as u128, words);
            Ok(())
        })?,
        &Op::Binary {
            op,
            ty,
            dst,
            ref a,
            ref b,
            ftz,
        } => for_lanes(exec, |lane| {
            let a = read_src(warp, env, a, ty, lane)?;
            // A shift amount is one unsigned 32-bit word whatever the type (the IR contract,
            // `BinOp::b_is_shift_amount`; PTX: "b is always .u32"), read whole (see `sem`).
            let b = if op.b_is_shift_amount() {
                let raw = read_operand(warp, env, &b.operand, lane, 1)?;
                sem::apply_modifier(Ty::U32, b.modifier, raw)
            } else {
                read_src(warp, env, b, ty, lane)?
            };
            let result = sem::alu::binary(op, ty, a, b, ftz);
            write_reg_words(warp, dst, lane, result, op.result_words(ty));
            Ok(())
        })?,
        &Op::IAdd3 {
            dst,
            carry_out,
            ref a,
            ref b,
            ref c,
            carry_in,
        } => for_lanes(exec, |lane| {
            let term = |src: &Src| -> Result<u64, Fault> {
                let raw = read_operand(warp, env, &src.operand, lane, 1)? as u32;
                Ok(sem::alu::carry_term(raw, src.modifier))
            };
            let terms = [term(a)?, term(b)?, term(c)?];
            let carries = [
                read_pred_src(warp, carry_in[0], lane),
                read_pred_src(warp, carry_in[1], lane),
            ];
            let (sum, carry) = sem::alu::iadd3(terms, carries);
            write_reg(warp, dst, lane, sum);
            write_pred(warp, carry_out[0], lane, carry[0]);
            write_pred(warp, carry_out[1], lane, carry[1]);
            Ok(())
        })?,
        &Op::Imad {
            mode,
            signed,
            dst,
            ref a,
            ref b,
            ref c,
        } => for_lanes(exec, |lane| {
            let a = read_src(warp, env, a, Ty::U32, lane)? as u32;
            let b = read_src(warp, env, b, Ty::U32, lane)? as u32;
            let c_ty = if mode.addend_words() == 2 {
                Ty::U64
            } else {
                Ty::U32
            };
            let c = read_src(warp, env, c, c_ty, lane)?;
            let result = sem::alu::imad(mode, signed, a, b, c);
            write_reg_words(warp, dst, lane, result as u128, mode.dst_words());
            Ok(())
        })?,
        &Op::Lea {
            hi,
            sx32,
            dst,
            carry_out,
            ref a,
            ref b,
            ref c,
            shift,
            carry_in,
        } => for_lanes(exec, |lane| {
            let a = read_src(warp, env, a, Ty::U32, lane)? as u32;
            let b_term = sem::alu::carry_term(
                read_operand(warp, env, &b.operand, lane, 1)? as u32,
                b.modifier,
            );
            // `.SX32`: the high word is the sign extension of `a`.
            let c = if sx32 {
                ((a as i32) >> 31) as u32
            } else {
                read_src(warp, env, c, Ty::U32, lane)? as u32
            };
            let carry_in = read_pred_src(warp, carry_in, lane);
            let (result, carry) = sem::alu::lea(hi, a, b_term, c, shift, carry_in);
            write_reg(warp, dst, lane, result);
            write_pred(warp, carry_out, lane, carry);
            Ok(())
        })?,
        Op::Shf(shf) => for_lanes(exec, |lane| {
            let lo = read_src(warp, env, &shf.lo, Ty::U32, lane)? as u32;
            let amount = read_src(warp, env, &shf.shift, Ty::U32, lane)? as u32;
            let hi = read_src(warp, env, &shf.hi, Ty::U32, lane)? as u32;
            write_reg(warp, shf.dst, lane, sem::alu::shf(shf, lo, amount, hi));
            Ok(())
        })?,
        &Op::Lop3 {
            dst,
            pred_out,
            ref a,
            ref b,
            ref c,
            lut,
        } => for_lanes(exec, |lane| {
            let a = read_src(warp, env, a, Ty::U32, lane)? as u32;
            let b = read_src(warp, env, b, Ty::U32, lane)? as u32;
            let c = read_src(warp, env, c, Ty::U32, lane)? as u32;
            let result = sem::alu::lop3(a, b, c, lut);
            write_reg(warp, dst, lane, result);
            write_pred(warp, pred_out, lane, result != 0);
            Ok(())
        })?,
        &Op::SetP {
            cmp,
            ty,
            combine,
            dst,
            dst2,
            ref a,
            ref b,
            c,
            chain,
        } => for_lanes(exec, |lane| {
            let a = read_src(warp, env, a, ty, lane)?;
            let b = read_src(warp, env, b, ty, lane)?;
            let c = read_pred_src(warp, c, lane);
            let r = match chain {
                None => sem::alu::compare(cmp, ty, a, b),
                Some(low) => {
                    sem::alu::compare_chained(cmp, ty, a, b, read_pred_src(warp, low, lane))
                }
            };
            write_pred(warp, dst, lane, sem::alu::bool_op(combine, r, c));
            write_pred(warp, dst2, lane, sem::alu::bool_op(combine, !r, c));
            Ok(())
        })?,
        &Op::PredLogic { op, dst, a, b } => for_lanes(exec, |lane| {
            let value = sem::alu::bool_op(
                op,
                read_pred_src(warp, a, lane),
                read_pred_src(warp, b, lane),
            );
            write_pred(warp, dst, lane, value);
            Ok(())
        })?,
        Op::PredMove(PredMove::ToReg { dst, src }) => for_lanes(exec, |lane| {
            let value = read_pred_src(warp, *src, lane);
            write_reg(warp, *dst, lane, value as u32);
            Ok(())
        })?,
        Op::PredMove(PredMove::FromReg {
            dst,
            src,
            mask: bits,
        }) => for_lanes(exec, |lane| {
            let value = read_operand(warp, env, src, lane, 1)? as u32 & bits != 0;
            write_pred(warp, *dst, lane, value);
            Ok(())
        })?,
        &Op::Select {
            ty,
            dst,
            ref a,
            ref b,
            pred,
        } => for_lanes(exec, |lane| {
            let a = read_src(warp, env, a, ty, lane)?;
            let b = read_src(warp, env, b, ty, lane)?;
            let value = if read_pred_src(warp, pred, lane) {
                a
            } else {
                b
            };
            write_reg_words(
                warp,
                dst,
                lane,
                sem::to_register(ty, value) as u128,
                ty.regs(),
            );
            Ok(())
        })?,
        &Op::Convert {
            dst_ty,
            src_ty,
            round,
            ftz,
            dst,
            ref a,
        } => for_lanes(exec, |lane| {
            let a = read_src(warp, env, a, src_ty, lane)?;
            let value = sem::convert::convert(dst_ty, src_ty, round, ftz, a);
            write_reg_words(warp, dst, lane, value as u128, dst_ty.regs());
            Ok(())
        })?,
        &Op::Vote {
            mode,
            dst,
            dst_pred,
            src,
        } => vote(warp, exec, mode, dst, dst_pred, src),
        &Op::Shfl {
            mode,
            dst,
            dst_pred,
            ref a,
            ref b,
            ref c,
        } => {
            // Read every executing lane's value from its source lane first, then write: the
            // sources are the registers as they were before the instruction.
            let mut results = Vec::with_capacity(32);
            for_lanes(exec, |lane| {
                let b = read_src(warp, env, b, Ty::U32, lane)? as u32;
                let c = read_src(warp, env, c, Ty::U32, lane)? as u32;
                let (j, valid) = sem::warp::shfl_source(mode, lane as u32, b, c);
                let value = read_operand(warp, env, a, j as usize, 1)? as u32;
                results.push((lane, value, valid));
                Ok(())
            })?;
            for (lane, value, valid) in results {
                write_reg(warp, dst, lane, value);
                write_pred(warp, dst_pred, lane, valid);
            }
        }
        &Op::Redux {
            op,
            ty,
            dst,
            ref src,
        } => {
            let mut values = Vec::with_capacity(32);
            for_lanes(exec, |lane| {
                values.push(read_operand(warp, env, src, lane, 1)? as u32);
                Ok(())
            })?;
            let result = sem::warp::redux(op, ty, values.into_iter());
            for lane in lanes(exec) {
                write_reg(warp, dst, lane, result);
            }
        }
        &Op::Match {
            all,
            ty,
            dst,
            dst_pred,
            ref src,
        } => {
            let mut values = [0u64; 32];
            for_lanes(exec, |lane| {
                values[lane] = read_operand(warp, env, src, lane, ty.regs())?;
                Ok(())
            })?;
            for lane in lanes(exec) {
                let (mask, same) =
                    sem::warp::match_lanes(all, values[lane], exec, |l| values[l as usize]);
                write_reg(warp, dst, lane, mask);
                write_pred(warp, dst_pred, lane, same);
            }
        }
        &Op::Prmt {
            dst,
            ref a,
            ref b,
            ref sel,
        } => for_lanes(exec, |lane| {
            let a = read_src(warp, env, a, Ty::U32, lane)? as u32;
            let b = read_src(warp, env, b, Ty::U32, lane)? as u32;
            let sel = read_src(warp, env, sel, Ty::U32, lane)? as u32;
            write_reg(warp, dst, lane, sem::alu::prmt(a, b, sel));
            Ok(())
        })?,
        &Op::Bfe {
            ty,
            dst,
            ref a,
            ref pos,
            ref len,
        } => for_lanes(exec, |lane| {
            let a = read_src(warp, env, a, ty, lane)?;
            let pos = read_src(warp, env, pos, Ty::U32, lane)? as u32;
            let len = read_src(warp, env, len, Ty::U32, lane)? as u32;
            let value = sem::alu::bfe(ty, a, pos, len);
            write_reg_words(warp, dst, lane, value as u128, ty.regs());
            Ok(())
        })?,
        &Op::Bfi {
            ty,
            dst,
            ref insert,
            ref base,
            ref pos,
            ref len,
        } => for_lanes(exec, |lane| {
            let insert = read_src(warp, env, insert, ty, lane)?;
            let base = read_src(warp, env, base, ty, lane)?;
            let pos = read_src(warp, env, pos, Ty::U32, lane)? as u32;
            let len = read_src(warp, env, len, Ty::U32, lane)? as u32;
            let value = sem::alu::bfi(ty, insert, base, pos, len);
            write_reg_words(warp, dst, lane, value as u128, ty.regs());
            Ok(())
        })?,
        &Op::Fma {
            ty,
            dst,
            ref a,
            ref b,
            ref c,
            round,
            ftz,
            halves,
        } => for_lanes(exec, |lane| {
            let a = read_src(warp, env, a, ty, lane)?;
            let b = read_src(warp, env, b, ty, lane)?;
            let c = read_src(warp, env, c, ty, lane)?;
            // Validation guarantees a float type.
            let value = sem::float::fma_selected(ty, halves, [a, b, c], round, ftz).unwrap_or(0);
            write_reg_words(warp, dst, lane, value as u128, ty.regs());
            Ok(())
        })?,
        &Op::PackedMinMax {
            op,
            ty,
            dst,
            ref a,
            ref b,
        } => for_lanes(exec, |lane| {
            let a = read_src(warp, env, a, Ty::U32, lane)?;
            let b = read_src(warp, env, b, Ty::U32, lane)?;
            write_reg(
                warp,
                dst,
                lane,
                sem::alu::packed_min_max(op, ty, a, b) as u32,
            );
            Ok(())
        })?,
        &Op::PackHalves {
            ty,
            dst,
            ref hi,
            ref lo,
        } => for_lanes(exec, |lane| {
            let hi = read_src(warp, env, hi, Ty::F32, lane)?;
            let lo = read_src(warp, env, lo, Ty::F32, lane)?;
            write_reg(
                warp,
                dst,
                lane,
                sem::convert::pack_halves(ty, hi, lo) as u32,
            );
            Ok(())
        })?,
        Op::IsSpace { space, dst, addr } => for_lanes(exec, |lane| {
            let address = addr.effective(Space::Generic, |r, words| {
                read_reg_words(warp, r, lane, words)
            });
            let inside =
                crate::ir::resolve(Space::Generic, address).map(|(s, _)| s) == Some(*space);
            write_pred(warp, *dst, lane, inside);
            Ok(())
        })?,
        &Op::PredLut { dst, a, b, c, lut } => for_lanes(exec, |lane| {
            let (a, b, c) = (
                read_pred_src(warp, a, lane),
                read_pred_src(warp, b, lane),
                read_pred_src(warp, c, lane),
            );
            let values = lut.map(|table| sem::alu::lut3(table, a, b, c));
            write_pred(warp, dst[0], lane, values[0]);
            write_pred(warp, dst[1], lane, values[1]);
            Ok(())
        })?,
        // Scopes: every scope is coherent on one host (see `memory`).
        Op::Load { access, dst } => memory::execute_load(warp, env, exec, access, *dst)?,
        Op::Store { access, src } => memory::execute_store(warp, env, exec, access, src)?,
        Op::Atomic(atomic_inst) => atomic::execute_atomic(warp, env, exec, atomic_inst)?,
        &Op::Fence { order, scope: _ } => {
            if exec != 0 {
                memory::fence_for(order);
            }
        }
        &Op::Barrier { id } => {
            if exec != 0 {
                return Ok(Flow::Leave(GroupExit::Barrier { pc, mask, id }));
            }
        }
        Op::BranchConverged {
            target,
            mask: lanes_src,
            diverged,
        } => {
            if exec == 0 {
                return Ok(next);
            }
            let lowest = exec.trailing_zeros() as usize;
            let named =
                read_src(warp, env, lanes_src, Ty::U32, lowest).map_err(|fault| LaneFault {
                    lane: lowest as u32,
                    fault,
                })? as u32;
            // Live lanes: launched (a partial warp has fewer) and not exited. Lanes of the group
            // whose guard is false are still converged with it, as on the hardware.
            let live = warp.lanes & !warp.exited;
            let converged = named & live & !mask == 0;
            let taken = if converged != *diverged { exec } else { 0 };
            return Ok(branch_flow(pc, mask, *target, taken));
        }
        &Op::Branch { target, uniform: _ } => {
            return Ok(branch_flow(pc, mask, target, exec));
        }
        Op::WarpSplit {
            mask: lanes_src,
            rejoin: _,
            wait,
        } => {
            if exec == 0 {
                return Ok(next);
            }
            let mut named = [0u32; 32];
            for_lanes(exec, |lane| {
                named[lane] = read_src(warp, env, lanes_src, Ty::U32, lane)? as u32;
                Ok(())
            })?;
            let smallest = lanes(exec).map(|l| named[l]).min().unwrap_or(0);
            let group = lanes(exec)
                .filter(|&l| named[l] == smallest)
                .fold(0u32, |acc, l| acc | 1 << l);
            // As for BranchConverged: the group's guard-false lanes count as present.
            let live = warp.lanes & !warp.exited;
            let complete = !*wait || smallest & live & !mask == 0;
            let again = if !complete {
                mask
            } else if exec & !group == 0 {
                0
            } else {
                mask & !group
            };
            return Ok(branch_flow(pc, mask, pc, again));
        }
        Op::Exit => {
            warp.exited |= exec;
            let remaining = mask & !exec;
            return Ok(if remaining == 0 {
                Flow::Leave(GroupExit::Exited)
            } else {
                Flow::Continue {
                    pc: pc + 1,
                    mask: remaining,
                }
            });
        }
    }
    Ok(next)
}

/// [`Op::Vote`]: the ballot of `src` over the executing lanes, then `dst` and `dst_pred` in
/// each executing lane (all sources are read before any destination is written).
fn vote(warp: &mut WarpState, exec: u32, mode: VoteMode, dst: Reg, dst_pred: Pred, src: PredSrc) {
    let ballot = lanes(exec)
        .filter(|&lane| read_pred_src(warp, src, lane))
        .fold(0u32, |acc, lane| acc | 1 << lane);
    let verdict = match mode {
        VoteMode::Any => ballot != 0,
        VoteMode::All => ballot == exec,
        VoteMode::Eq => ballot == 0 || ballot == exec,
    };
    for lane in lanes(exec) {
        write_reg(warp, dst, lane, ballot);
        write_pred(warp, dst_pred, lane, verdict);
    }
}

/// The value of a special register for `lane`. The thread index is
/// `warp_id * warp_size + lane`, decomposed by the CTA shape with x fastest.
fn special_register(warp: &WarpState, env: &CtaEnv, sr: SpecialReg, lane: usize) -> u32 {
    let [nx, ny, nz] = env.ntid.map(|n| n.max(1) as u64);
    let thread = warp.warp_id as u64 * env.kernel.warp_size as u64 + lane as u64;
    let warp_size = env.kernel.warp_size.max(1) as u64;
    match sr {
        SpecialReg::TidX => (thread % nx) as u32,
        SpecialReg::TidY => (thread / nx % ny) as u32,
        SpecialReg::TidZ => (thread / (nx * ny)) as u32,
        SpecialReg::CtaIdX => env.ctaid[0],
        SpecialReg::CtaIdY => env.ctaid[1],
        SpecialReg::CtaIdZ => env.ctaid[2],
        SpecialReg::NTidX => env.ntid[0],
        SpecialReg::NTidY => env.ntid[1],
        SpecialReg::NTidZ => env.ntid[2],
        SpecialReg::NCtaIdX => env.nctaid[0],
        SpecialReg::NCtaIdY => env.nctaid[1],
        SpecialReg::NCtaIdZ => env.nctaid[2],
        SpecialReg::LaneId => lane as u32,
        SpecialReg::WarpId => warp.warp_id,
        SpecialReg::NWarpId => (nx * ny * nz).div_ceil(warp_size) as u32,
        SpecialReg::LanemaskEq => 1 << lane,
        SpecialReg::LanemaskLt => (1u32 << lane) - 1,
        SpecialReg::LanemaskLe => (((1u64 << lane) << 1) - 1) as u32,
        SpecialReg::LanemaskGt => !((((1u64 << lane) << 1) - 1) as u32),
        SpecialReg::LanemaskGe => !((1u32 << lane) - 1),
        SpecialReg::ClusterCtaRank | SpecialReg::SharedWindowHi => sr.constant_value().unwrap_or(0),
    }
}

/// The lanes of `mask` in increasing order.
pub(crate) fn lanes(mask: u32) -> impl Iterator<Item = usize> {
    (0..32).filter(move |lane| mask >> lane & 1 == 1)
}

/// Runs `f` for each lane of `mask` in increasing order, stopping at the first fault.
pub(crate) fn for_lanes(
    mask: u32,
    mut f: impl FnMut(usize) -> Result<(), Fault>,
) -> Result<(), LaneFault> {
    for lane in lanes(mask) {
        f(lane).map_err(|fault| LaneFault {
            lane: lane as u32,
            fault,
        })?;
    }
    Ok(())
}

/// Register `reg` of `lane` (0 for `RZ`).
pub(crate) fn read_reg(warp: &WarpState, reg: Reg, lane: usize) -> u32 {
    if reg.is_rz() {
        0
    } else {
        warp.regs[reg.0 as usize * WARP_STRIDE + lane]
    }
}

/// One register (`words == 1`) or the pair starting at `reg` (`words == 2`, low word first).
pub(crate) fn read_reg_words(warp: &WarpState, reg: Reg, lane: usize, words: u16) -> u64 {
    (0..words.min(2)).fold(0u64, |acc, i| {
        acc | (read_reg(warp, reg.word(i), lane) as u64) << (32 * i)
    })
}

/// Writes register `reg` of `lane` (discarded for `RZ`).
pub(crate) fn write_reg(warp: &mut WarpState, reg: Reg, lane: usize, value: u32) {
    if !reg.is_rz() {
        warp.regs[reg.0 as usize * WARP_STRIDE + lane] = value;
    }
}

/// Writes the low `32 * words` bits of `value` to `words` consecutive registers from `reg`.
pub(crate) fn write_reg_words(
    warp: &mut WarpState,
    reg: Reg,
    lane: usize,
    value: u128,
    words: u16,
) {
    for i in 0..words {
        write_reg(warp, reg.word(i), lane, (value >> (32 * i)) as u32);
    }
}

/// The lane mask of predicate `pred` (all ones for `PT`).
fn pred_lanes(warp: &WarpState, pred: Pred) -> u32 {
    if pred.is_pt() {
        u32::MAX
    } else {
        warp.preds[pred.0 as usize]
    }
}

/// A predicate source for `lane`.
pub(crate) fn read_pred_src(warp: &WarpState, src: PredSrc, lane: usize) -> bool {
    (pred_lanes(warp, src.pred) >> lane & 1 == 1) != src.negate
}

/// Sets predicate `pred` of `lane` (discarded for `PT`).
pub(crate) fn write_pred(warp: &mut WarpState, pred: Pred, lane: usize, value: bool) {
    if !pred.is_pt() {
        let bits = &mut warp.preds[pred.0 as usize];
        *bits = (*bits & !(1 << lane)) | (value as u32) << lane;
    }
}

/// A source operand of `words` 32-bit words (1 or 2): a register or pair, an immediate (its
/// low 32 bits for one word), or a little-endian constant-bank read of 4 or 8 bytes.
pub(crate) fn read_operand(
    warp: &WarpState,
    env: &CtaEnv,
    operand: &Operand,
    lane: usize,
    words: u16,
) -> Result<u64, Fault> {
    match *operand {
        Operand::Reg(reg) => Ok(read_reg_words(warp, reg, lane, words)),
        Operand::Imm(bits) => Ok(if words >= 2 { bits } else { bits & 0xffff_ffff }),
        Operand::Const { bank, offset } => {
            let size = if words >= 2 { 8 } else { 4 };
            if bank == 0 {
                return memory::read_const(env.cbank, offset as u64, size);
            }
            // The kernel's other banks are fixed bytes of the kernel (validation keeps every
            // read inside one that exists); a bank it does not have reads as out of range.
            match env.kernel.launch.const_bank(bank) {
                Some(b) => memory::read_const(&b.bytes, offset as u64, size),
                None => Err(Fault {
                    reason: TrapReason::AddressOutOfRange,
                    space: Space::Const,
                    address: offset as u64,
                    surface: None,
                }),
            }
        }
    }
}

/// A source operand read in type `ty` with its modifier applied (the low `ty.bits()` bits).
pub(crate) fn read_src(
    warp: &WarpState,
    env: &CtaEnv,
    src: &Src,
    ty: Ty,
    lane: usize,
) -> Result<u64, Fault> {
    let raw = read_operand(warp, env, &src.operand, lane, ty.regs())?;
    Ok(sem::apply_modifier(ty, src.modifier, raw))
}
