//! No input makes the validator panic: kernels of random instructions with extreme fields
//! (registers next to RZ, targets past the end, offsets at the i64 limits, any bank, zero
//! register counts) either validate or return errors.

use super::*;
use atomjit::ir::{
    Address, AtomicInst, AtomicOp, BinOp, BoolOp, CmpOp, Dialect, Guard, ImadMode, LinearAddress,
    MemAccess, MemOrder, Op, Operand, Pred, PredMove, PredSrc, Reg, Round, Scope, ShfInst, Space,
    SpecialReg, Src, SrcMod, Ty, UnOp, VoteMode,
};

/// xorshift64*: a tiny deterministic generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
    fn reg(&mut self) -> Reg {
        Reg(self.pick(&[0, 1, 2, 3, 4, 7, 254, u16::MAX - 1, u16::MAX]))
    }
    fn pred(&mut self) -> Pred {
        Pred(self.pick(&[0, 1, 6, 7, u16::MAX - 1, u16::MAX]))
    }
    fn pred_src(&mut self) -> PredSrc {
        PredSrc {
            pred: self.pred(),
            negate: self.below(2) == 0,
        }
    }
    fn ty(&mut self) -> Ty {
        self.pick(Ty::ALL)
    }
    fn order(&mut self) -> MemOrder {
        self.pick(MemOrder::ALL)
    }
    fn scope(&mut self) -> Scope {
        self.pick(Scope::ALL)
    }
    fn space(&mut self) -> Space {
        self.pick(Space::ALL)
    }
    fn operand(&mut self) -> Operand {
        match self.below(3) {
            0 => Operand::Reg(self.reg()),
            1 => Operand::Imm(self.pick(&[0, 1, u64::MAX, 1 << 63])),
            _ => Operand::Const {
                bank: self.pick(&[0, 1, 255]),
                offset: self.pick(&[0, 3, 0x28, 0x160, 0x164, u32::MAX - 3, u32::MAX]),
            },
        }
    }
    fn src(&mut self) -> Src {
        let modifier = self.pick(&[
            SrcMod::None,
            SrcMod::Neg,
            SrcMod::Not,
            SrcMod::Abs,
            SrcMod::NegAbs,
        ]);
        Src {
            operand: self.operand(),
            modifier,
        }
    }
    fn addr(&mut self) -> Address {
        Address::Linear(LinearAddress {
            base: if self.below(3) == 0 {
                None
            } else {
                Some(self.reg())
            },
            base_bits: self.pick(&[0, 16, 32, 64, 255]),
            offset: self.pick(&[0, 3, -4, 0xff_fffc, 0x100_0000, i64::MIN, i64::MAX]),
        })
    }
    fn op(&mut self) -> Op {
        match self.below(24) {
            0 => Op::Nop,
            1 => Op::Mov {
                ty: self.ty(),
                dst: self.reg(),
                src: self.operand(),
            },
            2 => Op::ReadSpecial {
                dst: self.reg(),
                sr: SpecialReg::LaneId,
            },
            3 => Op::Unary {
                op: self.pick(UnOp::ALL),
                ty: self.ty(),
                dst: self.reg(),
                a: self.src(),
            },
            4 => Op::Binary {
                op: self.pick(BinOp::ALL),
                ty: self.ty(),
                dst: self.reg(),
                a: self.src(),
                b: self.src(),
                ftz: self.below(2) == 0,
            },
            5 => Op::IAdd3 {
                dst: self.reg(),
                carry_out: [self.pred(), self.pred()],
                a: self.src(),
                b: self.src(),
                c: self.src(),
                carry_in: [self.pred_src(), self.pred_src()],
            },
            6 => Op::Imad {
                mode: self.pick(&[ImadMode::Lo, ImadMode::Hi, ImadMode::Wide]),
                signed: self.below(2) == 0,
                dst: self.reg(),
                a: self.src(),
                b: self.src(),
                c: self.src(),
            },
            7 => Op::Lea {
                hi: self.below(2) == 0,
                sx32: false,
                dst: self.reg(),
                carry_out: self.pred(),
                a: self.src(),
                b: self.src(),
                c: self.src(),
                shift: self.pick(&[0, 31, 32, 255]),
                carry_in: self.pred_src(),
            },
            8 => Op::Shf(ShfInst {
                left: self.below(2) == 0,
                wrap: self.below(2) == 0,
                high: self.below(2) == 0,
                ty: self.ty(),
                dst: self.reg(),
                lo: self.src(),
                shift: self.src(),
                hi: self.src(),
            }),
            9 => Op::Lop3 {
                dst: self.reg(),
                pred_out: self.pred(),
                a: self.src(),
                b: self.src(),
                c: self.src(),
                lut: 0xe8,
            },
            10 => Op::SetP {
                cmp: self.pick(CmpOp::ALL),
                ty: self.ty(),
                combine: self.pick(BoolOp::ALL),
                dst: self.pred(),
                dst2: self.pred(),
                a: self.src(),
                b: self.src(),
                c: self.pred_src(),
                chain: None,
            },
            11 => Op::PredLogic {
                op: self.pick(BoolOp::ALL),
                dst: self.pred(),
                a: self.pred_src(),
                b: self.pred_src(),
            },
            12 => Op::PredMove(PredMove::ToReg {
                dst: self.reg(),
                src: self.pred_src(),
            }),
            13 => Op::PredMove(PredMove::FromReg {
                dst: self.pred(),
                src: self.operand(),
                mask: 1,
            }),
            14 => Op::Select {
                ty: self.ty(),
                dst: self.reg(),
                a: self.src(),
                b: self.src(),
                pred: self.pred_src(),
            },
            15 => Op::Convert {
                dst_ty: self.ty(),
                src_ty: self.ty(),
                round: self.pick(&[Round::Nearest, Round::Zero, Round::Down, Round::Up]),
                ftz: self.below(2) == 0,
                dst: self.reg(),
                a: self.src(),
            },
            16 => Op::Vote {
                mode: self.pick(&[VoteMode::Any, VoteMode::All, VoteMode::Eq]),
                dst: self.reg(),
                dst_pred: self.pred(),
                src: self.pred_src(),
            },
            17 => Op::Load {
                access: MemAccess {
                    space: self.space(),
                    ty: self.ty(),
                    vector: 1,
                    order: self.order(),
                    scope: self.scope(),
                    addr: self.addr(),
                },
                dst: self.reg(),
            },
            18 => Op::Store {
                access: MemAccess {
                    space: self.space(),
                    ty: self.ty(),
                    vector: 1,
                    order: self.order(),
                    scope: self.scope(),
                    addr: self.addr(),
                },
                src: self.operand(),
            },
            19 => Op::Atomic(Box::new(AtomicInst {
                access: MemAccess {
                    space: self.space(),
                    ty: self.ty(),
                    vector: 1,
                    order: self.order(),
                    scope: self.scope(),
                    addr: self.addr(),
                },
                op: self.pick(AtomicOp::ALL),
                dst: self.reg(),
                src: self.operand(),
                src2: if self.below(2) == 0 {
                    None
                } else {
                    Some(self.operand())
                },
                spin: self.below(2) == 0,
                ftz: self.below(2) == 0,
                performed: Pred::PT,
            })),
            20 => Op::Fence {
                order: self.order(),
                scope: self.scope(),
            },
            21 => Op::Barrier {
                id: self.pick(&[0, 15, 16, u32::MAX]),
            },
            22 => Op::Branch {
                target: self.pick(&[0, 1, 5, 40, u32::MAX]),
                uniform: false,
            },
            _ => Op::Exit,
        }
    }
}

#[test]
fn random_kernels_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut passed = 0;
    for _ in 0..3000 {
        let dialect = rng.pick(&[Dialect::Sass, Dialect::Ptx, Dialect::Visa]);
        let mut b = builder(dialect)
            .warp_size(rng.pick(&[0, 8, 32, 64]))
            .launch(|l| {
                l.grid = [1, 1, 1];
                l.block = [32, 1, 1];
            });
        if rng.below(4) == 0 {
            b = b.num_regs(rng.pick(&[0, 3, u32::MAX]));
        }
        if rng.below(4) == 0 {
            b = b.num_preds(rng.pick(&[0, 1, u32::MAX]));
        }
        let len = rng.below(12);
        for _ in 0..len {
            let guard = Guard {
                pred: rng.pred(),
                negate: rng.below(2) == 0,
            };
            b = b.guarded(guard, rng.op());
        }
        let k = b.build();
        match validate(&k) {
            Ok(info) => {
                passed += 1;
                assert_eq!(info.reconverge().len(), k.insts.len());
            }
            Err(e) => assert!(!e.0.is_empty()),
        }
    }
    // The generator should produce some valid kernels too (mostly short ones ending in EXIT).
    assert!(passed > 0);
}
