//! Whether a region's atomics are worth running four lanes at a time (`atomic.rs`): a guess at
//! translation time of how the lanes' addresses spread.
//!
//! The 16-byte CAS path pays only when four lanes name four adjacent words. When they do not
//! (a histogram's bins), the vector region's lane-by-lane path is slower than the scalar
//! region loop (`hist_global` 9.3 → 9.8 ms, after making that path as lean as it goes): the
//! `lock` instructions leave little room to hide the chunk's tests and lane extractions behind.
//! So a region with an atomic is vector code only when its addresses may be adjacent, judged
//! from how the region computes them ([`adjacent_atomics`]). Nothing here decides what the
//! code does: the run-time test (`memory.rs`, with the alignment) still decides each chunk, so a
//! wrong guess costs time, never exactness.
//!
//! Each register written in the region, in order, gets a [`Spread`] from its operands': the
//! lane id and `SR_TID.X` are `lane * 1`; immediates, constant-bank words and warp-invariant
//! registers (`valid/uniform.rs`) are the same in every lane; products with and sums of those
//! keep a register lane-affine (`IMAD`, `IMAD.WIDE`, `IADD3`, `LEA`, add, sub, `SHF.L` and shift
//! left by an immediate, a move); anything else written in the region (a mask, a hash, a
//! guarded write) scatters it. A register the region does not write is unknown (the flush of
//! `hist_shared` takes its address from an earlier region, `counter`'s `seen[ticket]` from an
//! atomic's result), unless loads are all that write it anywhere in the kernel: a value read
//! from memory (a bin) scatters it.

use crate::ir::{BinOp, ImadMode, Inst, Op, Operand, Reg, ShfInst, SpecialReg, Src, SrcMod};
use crate::valid::KernelInfo;

/// How a register's value spreads over a warp's lanes, as far as the region shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Spread {
    /// The same in every lane: its value when it is an immediate.
    Uniform(Option<i64>),
    /// `v + lane * stride`, the stride when known.
    Affine(Option<i64>),
    /// Anything else computed in the region.
    Scattered,
    /// Not written in the region: unknown here.
    Outside,
}

impl Spread {
    /// The spread of `x + y`.
    fn add(self, other: Spread) -> Spread {
        use Spread::*;
        match (self, other) {
            (Scattered, _) | (_, Scattered) => Scattered,
            (Outside, _) | (_, Outside) => Outside,
            (Uniform(a), Uniform(b)) => Uniform(a.zip(b).map(|(a, b)| a.wrapping_add(b))),
            (Affine(s), Uniform(_)) | (Uniform(_), Affine(s)) => Affine(s),
            (Affine(s), Affine(t)) => Affine(s.zip(t).map(|(s, t)| s.wrapping_add(t))),
        }
    }

    /// The spread of `x * y`.
    fn mul(self, other: Spread) -> Spread {
        use Spread::*;
        match (self, other) {
            (Scattered, _) | (_, Scattered) => Scattered,
            (Outside, _) | (_, Outside) => Outside,
            (Uniform(a), Uniform(b)) => Uniform(a.zip(b).map(|(a, b)| a.wrapping_mul(b))),
            (Affine(s), Uniform(k)) | (Uniform(k), Affine(s)) => {
                Affine(s.zip(k).map(|(s, k)| s.wrapping_mul(k)))
            }
            (Affine(_), Affine(_)) => Scattered,
        }
    }
}

/// Whether every write of register `r` in the kernel is a load's result (and there is one): a
/// value read from memory, which the guess takes as scattered over the lanes. (An atomic's
/// result is not: the warp-aggregated tickets of `counter` are adjacent.)
fn loaded_only(insts: &[Inst], r: Reg) -> bool {
    let mut writes = insts.iter().filter(|i| i.op.writes_reg(r)).peekable();
    writes.peek().is_some() && writes.all(|i| matches!(i.op, Op::Load { .. }))
}

/// Whether every atomic of the vector region `region` may see four lanes on four adjacent
/// elements (see the module docs): its address register is lane-affine with the element size
/// as stride, or not written in the region (unless only loads write it anywhere: a bin read
/// from data). An atomic through a warp-invariant or scattered
/// address, or one whose lanes step by another stride or one the region does not know, makes
/// the region scalar.
pub(in super::super) fn adjacent_atomics(
    insts: &[Inst],
    info: &KernelInfo,
    region: &std::ops::Range<usize>,
) -> bool {
    if !insts[region.clone()]
        .iter()
        .any(|inst| matches!(inst.op, Op::Atomic(_)))
    {
        return true;
    }
    let mut spreads: Vec<(Reg, Spread)> = Vec::new();
    let invariant = info.invariant();
    let of_reg = |spreads: &[(Reg, Spread)], r: Reg| -> Spread {
        if r.is_rz() {
            return Spread::Uniform(Some(0));
        }
        if let Some(&(_, s)) = spreads.iter().rev().find(|e| e.0 == r) {
            return s;
        }
        if invariant.get(usize::from(r.0)).copied().unwrap_or(false) {
            Spread::Uniform(None)
        } else if loaded_only(insts, r) {
            // Only ever loaded from memory (a bin read from data): most likely scattered.
            Spread::Scattered
        } else {
            Spread::Outside
        }
    };
    let of_operand = |spreads: &[(Reg, Spread)], o: Operand| -> Spread {
        match o {
            Operand::Reg(r) => of_reg(spreads, r),
            Operand::Imm(k) => Spread::Uniform(Some(k as i64)),
            Operand::Const { .. } => Spread::Uniform(None),
        }
    };
    let of_src = |spreads: &[(Reg, Spread)], s: &Src| -> Spread {
        let v = of_operand(spreads, s.operand);
        match (s.modifier, v) {
            (SrcMod::None, v) => v,
            (SrcMod::Neg, Spread::Affine(st)) => Spread::Affine(st.map(i64::wrapping_neg)),
            (_, Spread::Uniform(_)) => Spread::Uniform(None),
            (_, Spread::Outside) => Spread::Outside,
            _ => Spread::Scattered,
        }
    };
    for inst in &insts[region.clone()] {
        if let Op::Atomic(a) = &inst.op {
            let Some(base) = super::memory::register_address(&a.access).map(|f| f.base) else {
                return false;
            };
            // A stride the region scales by a value it does not know (`tid * pitch`) is most
            // likely not the element size.
            let adjacent = match of_reg(&spreads, base) {
                Spread::Outside => true,
                Spread::Affine(Some(s)) => s == i64::from(a.access.ty.bytes()),
                Spread::Affine(None) | Spread::Uniform(_) | Spread::Scattered => false,
            };
            if !adjacent {
                return false;
            }
        }
        let spread = if !inst.guard.is_always() {
            // Old values in some lanes, new ones in others.
            Spread::Scattered
        } else {
            match &inst.op {
                Op::ReadSpecial { sr, .. } => match sr {
                    SpecialReg::TidX | SpecialReg::LaneId => Spread::Affine(Some(1)),
                    SpecialReg::CtaIdX
                    | SpecialReg::CtaIdY
                    | SpecialReg::CtaIdZ
                    | SpecialReg::NTidX
                    | SpecialReg::NTidY
                    | SpecialReg::NTidZ
                    | SpecialReg::NCtaIdX
                    | SpecialReg::NCtaIdY
                    | SpecialReg::NCtaIdZ => Spread::Uniform(None),
                    SpecialReg::TidY
                    | SpecialReg::TidZ
                    | SpecialReg::WarpId
                    | SpecialReg::NWarpId
                    | SpecialReg::LanemaskEq
                    | SpecialReg::LanemaskLt
                    | SpecialReg::LanemaskLe
                    | SpecialReg::LanemaskGt
                    | SpecialReg::LanemaskGe => Spread::Scattered,
                    SpecialReg::ClusterCtaRank | SpecialReg::SharedWindowHi => {
                        Spread::Uniform(sr.constant_value().map(i64::from))
                    }
                },
                Op::Mov { src, .. } => of_operand(&spreads, *src),
                Op::Imad { mode, a, b, c, .. } if *mode != ImadMode::Hi => {
                    let ab = of_src(&spreads, a).mul(of_src(&spreads, b));
                    ab.add(of_src(&spreads, c))
                }
                Op::IAdd3 { a, b, c, .. } => of_src(&spreads, a)
                    .add(of_src(&spreads, b))
                    .add(of_src(&spreads, c)),
                Op::Lea {
                    hi: false,
                    a,
                    b,
                    shift,
                    ..
                } => {
                    let scale = Spread::Uniform(Some(1i64 << (shift & 63)));
                    of_src(&spreads, a).mul(scale).add(of_src(&spreads, b))
                }
                // The low word of `hi:lo << k`, for an immediate `k` below 32, is `lo << k`.
                Op::Shf(ShfInst {
                    left: true,
                    high: false,
                    lo,
                    shift,
                    ..
                }) => match of_src(&spreads, shift) {
                    Spread::Uniform(Some(k)) if (0..32).contains(&k) => {
                        of_src(&spreads, lo).mul(Spread::Uniform(Some(1 << k)))
                    }
                    Spread::Uniform(_)
                    | Spread::Affine(_)
                    | Spread::Scattered
                    | Spread::Outside => Spread::Scattered,
                },
                Op::Binary { op, a, b, .. } => {
                    let (a, b) = (of_src(&spreads, a), of_src(&spreads, b));
                    match op {
                        BinOp::Add => a.add(b),
                        BinOp::Sub => a.add(b.mul(Spread::Uniform(Some(-1)))),
                        BinOp::Mul => a.mul(b),
                        BinOp::Shl => match b {
                            Spread::Uniform(Some(k)) if (0..32).contains(&k) => {
                                a.mul(Spread::Uniform(Some(1 << k)))
                            }
                            Spread::Uniform(_)
                            | Spread::Affine(_)
                            | Spread::Scattered
                            | Spread::Outside => Spread::Scattered,
                        },
                        BinOp::MulHi
                        | BinOp::MulWide
                        | BinOp::Div
                        | BinOp::Rem
                        | BinOp::Min
                        | BinOp::Max
                        | BinOp::And
                        | BinOp::Or
                        | BinOp::Xor
                        | BinOp::Shr => Spread::Scattered,
                    }
                }
                Op::Imad { .. }
                | Op::Lea { .. }
                | Op::Nop
                | Op::Unary { .. }
                | Op::Shf(_)
                | Op::Lop3 { .. }
                | Op::SetP { .. }
                | Op::PredLogic { .. }
                | Op::PredMove(_)
                | Op::Select { .. }
                | Op::Convert { .. }
                | Op::Vote { .. }
                | Op::Load { .. }
                | Op::Store { .. }
                | Op::Atomic(_)
                | Op::Fence { .. }
                | Op::Barrier { .. }
                | Op::Branch { .. }
                | Op::Exit
                | Op::BranchConverged { .. }
                | Op::WarpSplit { .. }
                | Op::Shfl { .. }
                | Op::Redux { .. }
                | Op::Match { .. }
                | Op::Prmt { .. }
                | Op::Bfe { .. }
                | Op::Bfi { .. }
                | Op::Fma { .. }
                | Op::IsSpace { .. }
                | Op::PackHalves { .. }
                | Op::PackedMinMax { .. }
                | Op::PredLut { .. } => Spread::Scattered,
            }
        };
        for (reg, words) in inst.op.dst_uses() {
            spreads.extend((0..words).map(|w| (reg.word(w), spread)));
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::adjacent_atomics;

    /// Whether the atomic at the end of `body` (a SASS kernel body whose every instruction is
    /// one region) is judged worth the four-lane path.
    fn judged(body: &str) -> bool {
        judged_after("", body)
    }

    /// [`judged`] for `body` after the instructions of `prefix`, which are not in the region.
    fn judged_after(prefix: &str, body: &str) -> bool {
        let source = format!(
            ".kernel k\n.grid 2\n.block 64\n.buffer out u32[256] = 0\n{prefix}\n{body}\n        EXIT ;\n"
        );
        let program = crate::front::parse("k.s", &source, crate::ir::Dialect::Sass)
            .unwrap_or_else(|e| panic!("{e}"));
        let kernel = &program.kernels[0];
        let info = crate::valid::validate(kernel).unwrap_or_else(|e| panic!("{e}"));
        let start = prefix.lines().filter(|l| l.contains(';')).count();
        let n = kernel.insts.len() - 1;
        adjacent_atomics(&kernel.insts, &info, &(start..n))
    }

    #[test]
    fn lanes_stepping_by_the_element_size_may_be_adjacent() {
        // `out[threadIdx.x]`, `out[blockIdx.x * blockDim.x + threadIdx.x]`, and `LEA` forms.
        assert!(judged(
            "        S2R R0, SR_TID.X ;
        MOV R1, 0x1 ;
        IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][out] ;
        RED.E.ADD.STRONG.GPU [R2.64], R1 ;"
        ));
        assert!(judged(
            "        S2R R0, SR_TID.X ;
        S2R R3, SR_CTAID.X ;
        IMAD R0, R3, c[0x0][0x0], R0 ;
        MOV R1, 0x1 ;
        IMAD.WIDE.U32 R4, R0, 0x4, c[0x0][out] ;
        RED.E.ADD.STRONG.GPU [R4.64], R1 ;"
        ));
        assert!(judged(
            "        S2R R0, SR_TID.X ;
        SHF.L.U32 R2, R0, 0x2, RZ ;
        MOV R1, 0x1 ;
        IADD3 R4, P0, R2, c[0x0][out], RZ ;
        IADD3.X R5, RZ, c[0x0][out+0x4], RZ, P0, !PT ;
        RED.E.ADD.STRONG.GPU [R4.64], R1 ;"
        ));
        assert!(judged(
            "        S2R R0, SR_LANEID ;
        MOV R1, 0x1 ;
        LEA R4, P0, R0, c[0x0][out], 0x2 ;
        LEA.HI.X R5, R0, c[0x0][out+0x4], RZ, 0x2, P0 ;
        RED.E.ADD.STRONG.GPU [R4.64], R1 ;"
        ));
    }

    #[test]
    fn an_address_from_outside_the_region_is_left_to_the_run_time_test() {
        // `R0` is not written here: `hist_shared`'s flush, `counter`'s `seen[ticket]`.
        assert!(judged(
            "        MOV R1, 0x1 ;
        IMAD.WIDE.U32 R4, R0, 0x4, c[0x0][out] ;
        RED.E.ADD.STRONG.GPU [R4.64], R1 ;"
        ));
    }

    #[test]
    fn an_address_register_only_loads_write_is_taken_as_scattered() {
        // A bin read from data in an earlier region, then `out[bin]`: scattered.
        let load = "        S2R R0, SR_TID.X ;
        IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][out] ;
        LDG.E R6, [R2.64] ;";
        assert!(!judged_after(
            load,
            "        MOV R1, 0x1 ;
        IMAD.WIDE.U32 R4, R6, 0x4, c[0x0][out] ;
        RED.E.ADD.STRONG.GPU [R4.64], R1 ;"
        ));
        // The same register also computed from the thread index elsewhere: unknown again.
        assert!(judged_after(
            &("        S2R R6, SR_TID.X ;\n".to_owned() + load),
            "        MOV R1, 0x1 ;
        IMAD.WIDE.U32 R4, R6, 0x4, c[0x0][out] ;
        RED.E.ADD.STRONG.GPU [R4.64], R1 ;"
        ));
    }

    #[test]
    fn scattered_uniform_and_strided_addresses_stay_scalar() {
        // `hist_global`'s hashed bin.
        assert!(!judged(
            "        S2R R0, SR_TID.X ;
        IMAD R0, R0, 0x9e3779b1, RZ ;
        LOP3.LUT R0, R0, 0xff, RZ, 0xc0, !PT ;
        MOV R1, 0x1 ;
        IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][out] ;
        RED.E.ADD.STRONG.GPU [R2.64], R1 ;"
        ));
        // One word for the warp.
        assert!(!judged(
            "        S2R R0, SR_CTAID.X ;
        MOV R1, 0x1 ;
        IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][out] ;
        RED.E.ADD.STRONG.GPU [R2.64], R1 ;"
        ));
        // Every other word.
        assert!(!judged(
            "        S2R R0, SR_TID.X ;
        MOV R1, 0x1 ;
        IMAD.WIDE.U32 R2, R0, 0x8, c[0x0][out] ;
        RED.E.ADD.STRONG.GPU [R2.64], R1 ;"
        ));
        // A pitch the region does not know (`out[tid * pitch]`, here `blockDim.y`).
        assert!(!judged(
            "        S2R R0, SR_TID.X ;
        IMAD R0, R0, c[0x0][0x4], RZ ;
        MOV R1, 0x1 ;
        IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][out] ;
        RED.E.ADD.STRONG.GPU [R2.64], R1 ;"
        ));
        // A guarded write leaves the register partly old.
        assert!(!judged(
            "        S2R R0, SR_TID.X ;
        ISETP.GE.AND P0, PT, R0, 0x10, PT ;
        @P0 MOV R0, 0x3 ;
        MOV R1, 0x1 ;
        IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][out] ;
        RED.E.ADD.STRONG.GPU [R2.64], R1 ;"
        ));
    }
}
