//! Differential property test: generated kernels run on the reference interpreter and on the
//! Cranelift JIT (through `exec::launch`, deterministic schedule) must agree on the whole global
//! memory image (every register of every thread is stored there at the end), on the trap, and
//! on the launch counters. The JIT runs each kernel twice: compiled as one function, and split
//! into chunks of 1–8 instructions (`jit::compile_chunked`), so that every control transfer is
//! also checked across functions.
//!
//! Kernels mix the ALU (IADD3 with carries, IMAD, LEA, SHF, LOP3, ISETP, SEL, shifts, division,
//! conversions, float arithmetic), predicates and votes, the ops of issue 10 (SHFL, REDUX,
//! MATCH, PRMT, BFE/BFI, FMA in every type and rounding, PLOP3, FLO, lane masks, warp splits
//! by tile masks), uniform
//! registers and predicates (half the kernels), forward branches (divergent), loops
//! with bounded (also per-lane) trip counts, LDS/STS and LDG/STG of every width, vector loads
//! and stores (`LDG.E.128`, `ld.v4`, narrow elements), every ATOMS/ATOMG/RED op and size of the
//! validator's tables (CAST.SPIN included), the vector atomics of sm_90 (`REDG.E.ADD.F32x4`,
//! `atom.v8.f16`) and the 128-bit `EXCH`/`CAS`, surface atomics, loads and stores (issue 11:
//! SASS kernels declare small surfaces in both layouts, accessed in every clamp mode, with
//! `.BA`, `.SD32`/`.SD64`, CAS vectors, sparse-status predicates and register handles), fences,
//! barriers and partial exits; a few accesses are left unmasked so that some kernels trap.
//! Every kernel's prologue writes warp-invariant registers once (the data buffer's address
//! from the constant bank, offsets and values from immediates); half the global atomics take
//! their address base (and some their operand) from them, so that `Aggregation::Proven`
//! aggregates them (`generated_kernels_cover_atomics_on_proven_invariant_addresses`).
//!
//! Each case is generated from one `u64` seed; a failure prints it (proptest reports the
//! failing input), and `ATOMJIT_DIFF_SEED=<seed>` reruns just that kernel.

use atomjit::exec::random::SplitMix64;
use atomjit::exec::{
    launch, GlobalMemory, LaunchConfig, LaunchError, LaunchStats, GLOBAL_BASE,
    LIGHT_PHASES_PER_QUANTUM,
};
use atomjit::interp::Interpreter;
use atomjit::ir::*;
use atomjit::jit::Aggregation;
use atomjit::{jit, valid};
use proptest::prelude::*;
use std::time::Duration;

const DATA_BYTES: u64 = 1024;
const SHARED_BYTES: u32 = 256;
/// Words stored per thread at the end: R8..R17, a predicate word, and the uniform registers
/// R24..R26 folded together.
const OUT_WORDS: u64 = 12;

struct Gen {
    rng: SplitMix64,
    insts: Vec<Inst>,
    /// Nesting depth of loops and branches (barriers only at depth 0).
    depth: u32,
    /// The PTX flavour (half the seeds): PTX atomic tables (16-bit and float atomics, shared
    /// and global, any CAS registers), unaligned register pairs, destinations that are also
    /// address registers, 2-D and 3-D blocks with `%tid.y/z`, and warp sizes 16 and 8 (as
    /// vISA kernels, without atomics).
    wide: bool,
    /// Lanes per warp.
    ws: u32,
    /// The kernel has uniform registers R24..R27 and uniform predicates P7, P8 (half the
    /// seeds): value registers and predicates are sometimes uniform ones, as sources,
    /// destinations and guards, so their broadcast is checked after every kind of op.
    uniform: bool,
}

/// Warp-invariant registers (`valid/uniform.rs`), written once in the prologue from the
/// constant bank and immediates and never again: R28:R29 = data (`c[0x0][PARAM_BASE]`),
/// R32 = an aligned offset, R30:R31 = data + R32, R33 = R32 * ntid.x + an immediate, and
/// R34:R35 a 64-bit immediate. Atomics take their address base (and now and then their
/// operand) from them, so that `Aggregation::Proven` aggregates them.
const INV_DATA: u16 = 28;
const INV_DATA_OFF: u16 = 30;
const INV_OFFSET: u16 = 32;
const INV_VALUE: u16 = 33;
const INV_PAIR: u16 = 34;
/// Registers per kernel: the invariant ones are the last.
const NUM_REGS: u32 = 36;

/// The uniform register and predicate slots of a kernel with `Gen::uniform`.
const UNIFORM_REGS: std::ops::Range<u16> = 24..28;
const UNIFORM_PREDS: std::ops::Range<u16> = 7..9;

/// The surfaces every SASS kernel declares after its two buffers (their handles at
/// `c[0x0][PARAM_BASE + 16 + 8 i]`): both layouts, every dimensionality with more than one
/// coordinate register, 4- and 8-byte elements, signed and unsigned, and a disabled one.
/// Extents are powers of two so that `value & (extent - 1)` is always in bounds.
fn surface_decls() -> Vec<surface::SurfaceDecl> {
    use surface::{SurfaceDecl, SurfaceDim, SurfaceLayout, SurfaceShape};
    let decl =
        |dim, elem: Ty, [width, height, depth, layers]: [u32; 4], layout, disabled| SurfaceDecl {
            shape: SurfaceShape {
                dim,
                elem_bytes: elem.bytes(),
                width,
                height,
                depth,
                layers,
            },
            elem,
            layout,
            disabled,
            sparse: Vec::new(),
            init: Init::Fill(Scalar::Int(0)),
        };
    let block = |log_height, log_depth| SurfaceLayout::BlockLinear {
        log_height,
        log_depth,
    };
    vec![
        decl(
            SurfaceDim::D2,
            Ty::U32,
            [8, 4, 1, 1],
            SurfaceLayout::Pitch { pitch: 48 },
            false,
        ),
        decl(SurfaceDim::D2, Ty::S32, [4, 8, 1, 1], block(1, 0), false),
        decl(SurfaceDim::D3, Ty::U64, [4, 2, 2, 1], block(0, 1), false),
        decl(
            SurfaceDim::D2Array,
            Ty::S64,
            [2, 4, 1, 4],
            SurfaceLayout::Pitch { pitch: 16 },
            false,
        ),
        decl(
            SurfaceDim::D1Array,
            Ty::U32,
            [16, 1, 1, 2],
            block(0, 0),
            false,
        ),
        decl(
            SurfaceDim::D1Buffer,
            Ty::U32,
            [16, 1, 1, 1],
            SurfaceLayout::Pitch { pitch: 64 },
            false,
        ),
        decl(
            SurfaceDim::D2,
            Ty::U32,
            [4, 4, 1, 1],
            SurfaceLayout::Pitch { pitch: 16 },
            true,
        ),
    ]
}

/// The extent of each coordinate register of `shape` (x, then y, z or the layer).
fn surface_extents(shape: &surface::SurfaceShape) -> Vec<u32> {
    use surface::SurfaceDim;
    match shape.dim {
        SurfaceDim::D1 | SurfaceDim::D1Buffer => vec![shape.width],
        SurfaceDim::D1Array => vec![shape.width, shape.layers],
        SurfaceDim::D2 => vec![shape.width, shape.height],
        SurfaceDim::D2Array => vec![shape.width, shape.height, shape.layers],
        SurfaceDim::D3 => vec![shape.width, shape.height, shape.depth],
    }
}

fn reg(n: u16) -> Operand {
    Operand::Reg(Reg(n))
}

fn src(o: Operand) -> Src {
    Src::plain(o)
}

fn p(n: u16) -> Pred {
    Pred(n)
}

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        self.rng.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }

    fn push(&mut self, op: Op) {
        self.push_guarded(Guard::ALWAYS, op);
    }

    fn push_guarded(&mut self, guard: Guard, op: Op) {
        let n = self.insts.len() as u32;
        self.insts.push(Inst {
            op,
            guard,
            span: Span {
                start: 0,
                end: 0,
                line: n + 1,
                col: 1,
            },
            text: format!("inst {n}"),
            sched: Vec::new(),
        });
    }

    /// A value register R8..R17, or now and then a uniform one or the scratch register R23.
    /// R23 and the uniform R27 are not stored at the end: their writes are often dead, except
    /// where other lanes read them (shuffles, uniform broadcasts).
    fn val(&mut self) -> Reg {
        if self.uniform && self.chance(20) {
            return Reg(UNIFORM_REGS.start + self.below(4) as u16);
        }
        if self.chance(5) {
            return Reg(23);
        }
        Reg(8 + self.below(10) as u16)
    }

    /// An even value pair R8, R10, .., R16 (or a uniform pair).
    fn pair(&mut self) -> Reg {
        if self.uniform && self.chance(15) {
            return Reg(UNIFORM_REGS.start + 2 * self.below(2) as u16);
        }
        if self.wide {
            // PTX has no pair alignment: R9:R10 overlaps R8:R9 and R10:R11.
            return Reg(8 + self.below(9) as u16);
        }
        Reg(8 + 2 * self.below(5) as u16)
    }

    /// P0–P2 and P4–P6 (P3 is the loop counter's), and the uniform P7, P8.
    fn value_pred(&mut self) -> Pred {
        if self.uniform && self.chance(20) {
            return p(UNIFORM_PREDS.start + self.below(2) as u16);
        }
        p(self.pick(&[0, 1, 2, 4, 5, 6]))
    }

    fn pred_src(&mut self) -> PredSrc {
        match self.below(5) {
            0 => PredSrc::TRUE,
            1 => PredSrc::FALSE,
            _ => PredSrc {
                pred: self.value_pred(),
                negate: self.chance(50),
            },
        }
    }

    fn interesting_imm(&mut self) -> u64 {
        match self.below(6) {
            0 => self.pick(&[
                0u64,
                1,
                2,
                31,
                32,
                33,
                0x7fff_ffff,
                0x8000_0000,
                0xffff_ffff,
                0xffff_fffe,
            ]),
            1 => self.below(64),
            2 => f32::to_bits(self.pick(&[
                0.0f32,
                -0.0,
                1.5,
                -2.25,
                1e-40,
                f32::INFINITY,
                f32::NAN,
                3e9,
            ])) as u64,
            _ => self.rng.next() & 0xffff_ffff,
        }
    }

    fn operand(&mut self) -> Operand {
        match self.below(8) {
            0 => Operand::Imm(self.interesting_imm()),
            1 => Operand::Reg(Reg::RZ),
            _ => Operand::Reg(self.val()),
        }
    }

    fn int_src(&mut self) -> Src {
        let modifier = match self.below(8) {
            0 => SrcMod::Neg,
            1 => SrcMod::Not,
            _ => SrcMod::None,
        };
        Src {
            operand: self.operand(),
            modifier,
        }
    }

    fn pair_src(&mut self) -> Src {
        let operand = if self.chance(15) {
            Operand::Imm(self.rng.next())
        } else {
            Operand::Reg(self.pair())
        };
        Src::plain(operand)
    }

    fn guard(&mut self) -> Guard {
        if self.chance(75) {
            Guard::ALWAYS
        } else if self.chance(8) {
            // `@!PT`: the instruction runs on no lane (but is still counted).
            Guard {
                pred: Pred::PT,
                negate: true,
            }
        } else {
            Guard {
                pred: self.value_pred(),
                negate: self.chance(50),
            }
        }
    }

    /// A bit-field position or length: the edges of 32 and 64 bits, values whose bits above
    /// 7:0 are ignored, or a register.
    fn field_src(&mut self) -> Src {
        if self.chance(25) {
            return Src::plain(Operand::Reg(self.val()));
        }
        Src::plain(Operand::Imm(self.pick(&[
            0u64, 1, 4, 7, 8, 16, 31, 32, 33, 40, 63, 64, 65, 255, 256, 0x108,
        ])))
    }

    /// A float operand of `ty`: a register (pair), or an immediate edge value, with a float
    /// modifier now and then.
    fn float_src(&mut self, ty: Ty) -> Src {
        let operand = if ty.regs() == 2 {
            self.pair_src().operand
        } else if self.chance(20) {
            Operand::Imm(self.interesting_imm())
        } else {
            Operand::Reg(self.val())
        };
        let modifier = if self.chance(30) {
            self.pick(&[SrcMod::Neg, SrcMod::Abs, SrcMod::NegAbs])
        } else {
            SrcMod::None
        };
        Src { operand, modifier }
    }

    /// The ops of issue 10: warp shuffles, reductions and matches (32-lane warps only),
    /// byte permutes, bit fields, fused multiply-adds, PLOP3 and the new special registers.
    fn new_alu_op(&mut self) -> Op {
        let collective = self.ws == 32;
        match self.below(9) {
            0 if collective => {
                let dst = self.val();
                Op::Shfl {
                    mode: self.pick(ShflMode::ALL),
                    dst,
                    dst_pred: if self.chance(50) {
                        self.value_pred()
                    } else {
                        Pred::PT
                    },
                    // In place now and then: lanes must read the values from before.
                    a: if self.chance(25) {
                        Operand::Reg(dst)
                    } else if self.chance(10) {
                        self.operand()
                    } else {
                        Operand::Reg(self.val())
                    },
                    b: if self.chance(30) {
                        self.int_src()
                    } else {
                        Src::plain(Operand::Imm(
                            self.pick(&[0u64, 1, 2, 3, 4, 8, 16, 17, 31, 33]),
                        ))
                    },
                    c: if self.chance(15) {
                        self.int_src()
                    } else {
                        Src::plain(Operand::Imm(self.pick(&[
                            0x1fu64, 0x181f, 0x1c1f, 0x101f, 0, 0x1800, 0x1000, 0x0f0f, 0x7,
                        ])))
                    },
                }
            }
            1 if collective => Op::Redux {
                op: self.pick(atomjit::sem::warp::REDUX_OPS),
                ty: self.pick(&[Ty::U32, Ty::S32, Ty::B32]),
                dst: self.val(),
                src: self.operand(),
            },
            2 if collective => {
                let ty = self.pick(&[Ty::B32, Ty::B64, Ty::U32, Ty::U64]);
                let (dst, src) = if ty.regs() == 2 {
                    (self.val(), Operand::Reg(self.pair()))
                } else {
                    (self.val(), self.operand())
                };
                // Few distinct values, so that lanes match: mask the source first.
                if let (Operand::Reg(r), true) = (src, self.chance(60)) {
                    let keep = self.pick(&[1u64, 3, 0x8000_0001]);
                    self.push(Op::Lop3 {
                        dst: r,
                        pred_out: Pred::PT,
                        a: Src::plain(Operand::Reg(r)),
                        b: Src::plain(Operand::Imm(keep)),
                        c: Src::plain(Operand::Reg(Reg::RZ)),
                        lut: 0xc0,
                    });
                }
                Op::Match {
                    all: self.chance(50),
                    ty,
                    dst,
                    dst_pred: if self.chance(60) {
                        self.value_pred()
                    } else {
                        Pred::PT
                    },
                    src,
                }
            }
            3 => Op::Prmt {
                dst: self.val(),
                a: self.int_src(),
                b: self.int_src(),
                sel: if self.chance(50) {
                    Src::plain(Operand::Imm(self.rng.next() & 0xffff))
                } else {
                    self.int_src()
                },
            },
            4 => {
                let ty = self.pick(&[Ty::U32, Ty::S32, Ty::U64, Ty::S64]);
                let (dst, a) = if ty.regs() == 2 {
                    (self.pair(), self.pair_src())
                } else {
                    (self.val(), self.int_src())
                };
                Op::Bfe {
                    ty,
                    dst,
                    a,
                    pos: self.field_src(),
                    len: self.field_src(),
                }
            }
            5 => {
                let ty = self.pick(&[Ty::B32, Ty::B64]);
                let (dst, insert, base) = if ty.regs() == 2 {
                    (self.pair(), self.pair_src(), self.pair_src())
                } else {
                    (self.val(), self.int_src(), self.int_src())
                };
                Op::Bfi {
                    ty,
                    dst,
                    insert,
                    base,
                    pos: self.field_src(),
                    len: self.field_src(),
                }
            }
            6 => {
                let ty = self.pick(&[
                    Ty::F32,
                    Ty::F32,
                    Ty::F64,
                    Ty::F16,
                    Ty::BF16,
                    Ty::F16x2,
                    Ty::BF16x2,
                ]);
                let round = if self.chance(50) {
                    Round::Nearest
                } else {
                    self.pick(&[Round::Zero, Round::Down, Round::Up])
                };
                Op::Fma {
                    ty,
                    dst: if ty.regs() == 2 {
                        self.pair()
                    } else {
                        self.val()
                    },
                    a: self.float_src(ty),
                    b: self.float_src(ty),
                    c: self.float_src(ty),
                    round,
                    ftz: ty == Ty::F32 && self.chance(40),
                    halves: if matches!(ty, Ty::F16x2 | Ty::BF16x2) && self.chance(40) {
                        [
                            self.pick(HalfSel::ALL),
                            self.pick(HalfSel::ALL),
                            self.pick(HalfSel::ALL),
                        ]
                    } else {
                        HalfSel::AS_READ
                    },
                }
            }
            7 => Op::PredLut {
                dst: [
                    self.value_pred(),
                    if self.chance(50) {
                        self.value_pred()
                    } else {
                        Pred::PT
                    },
                ],
                a: self.pred_src(),
                b: self.pred_src(),
                c: self.pred_src(),
                lut: [self.below(256) as u8, self.below(256) as u8],
            },
            _ => Op::ReadSpecial {
                dst: self.val(),
                sr: self.pick(&[
                    SpecialReg::LanemaskEq,
                    SpecialReg::LanemaskLt,
                    SpecialReg::LanemaskLe,
                    SpecialReg::LanemaskGt,
                    SpecialReg::LanemaskGe,
                    SpecialReg::ClusterCtaRank,
                    SpecialReg::SharedWindowHi,
                ]),
            },
        }
    }

    fn alu(&mut self) {
        let g = self.guard();
        if self.chance(25) {
            let op = self.new_alu_op();
            return self.push_guarded(g, op);
        }
        let op = match self.below(17) {
            0 => Op::IAdd3 {
                dst: self.val(),
                carry_out: [
                    if self.chance(50) {
                        self.value_pred()
                    } else {
                        Pred::PT
                    },
                    if self.chance(30) {
                        self.value_pred()
                    } else {
                        Pred::PT
                    },
                ],
                a: self.int_src(),
                b: self.int_src(),
                c: self.int_src(),
                carry_in: [self.pred_src(), PredSrc::FALSE],
            },
            1 => {
                let mode = self.pick(&[ImadMode::Lo, ImadMode::Hi, ImadMode::Wide]);
                // `Wide` writes a pair; `Wide` and `Hi` add a 64-bit pair.
                let dst = if mode == ImadMode::Wide {
                    self.pair()
                } else {
                    self.val()
                };
                let c = if mode.addend_words() == 2 {
                    self.pair_src()
                } else {
                    self.int_src()
                };
                Op::Imad {
                    mode,
                    signed: self.chance(50),
                    dst,
                    a: self.int_src(),
                    b: self.int_src(),
                    c,
                }
            }
            2 => {
                let hi = self.chance(50);
                Op::Lea {
                    hi,
                    sx32: hi && self.chance(30),
                    dst: self.val(),
                    carry_out: if self.chance(50) {
                        self.value_pred()
                    } else {
                        Pred::PT
                    },
                    a: Src::plain(self.operand()),
                    b: self.int_src(),
                    c: Src::plain(self.operand()),
                    shift: self.below(32) as u8,
                    carry_in: self.pred_src(),
                }
            }
            3 => Op::Shf(ShfInst {
                left: self.chance(50),
                wrap: self.chance(30),
                high: self.chance(50),
                ty: self.pick(&[Ty::U32, Ty::S32, Ty::U64, Ty::S64]),
                dst: self.val(),
                lo: Src::plain(self.operand()),
                shift: Src::plain(if self.chance(50) {
                    Operand::Imm(self.below(70))
                } else {
                    self.operand()
                }),
                hi: Src::plain(self.operand()),
            }),
            4 => Op::Lop3 {
                dst: self.val(),
                pred_out: if self.chance(30) {
                    self.value_pred()
                } else {
                    Pred::PT
                },
                a: Src::plain(self.operand()),
                b: Src::plain(self.operand()),
                c: Src::plain(self.operand()),
                lut: self.below(256) as u8,
            },
            5 | 6 => {
                let ty = self.pick(&[Ty::U32, Ty::S32, Ty::U64, Ty::S64, Ty::U16, Ty::S8, Ty::F32]);
                let (a, b) = if ty.regs() == 2 {
                    (self.pair_src(), self.pair_src())
                } else {
                    (self.int_src(), self.int_src())
                };
                let (a, b) = if ty.is_float() {
                    (Src::plain(a.operand), Src::plain(b.operand))
                } else {
                    (a, b)
                };
                let cmps: &[CmpOp] = if ty.is_float() {
                    CmpOp::ALL
                } else {
                    &[
                        CmpOp::Eq,
                        CmpOp::Ne,
                        CmpOp::Lt,
                        CmpOp::Le,
                        CmpOp::Gt,
                        CmpOp::Ge,
                    ]
                };
                Op::SetP {
                    cmp: self.pick(cmps),
                    ty,
                    combine: self.pick(BoolOp::ALL),
                    dst: self.value_pred(),
                    dst2: if self.chance(50) {
                        self.value_pred()
                    } else {
                        Pred::PT
                    },
                    a,
                    b,
                    c: self.pred_src(),
                    // SASS `ISETP.EX`: integer compares may chain a low-word result.
                    chain: (!ty.is_float() && self.chance(30)).then(|| self.pred_src()),
                }
            }
            7 | 8 => {
                let ty = self.pick(&[
                    Ty::U32,
                    Ty::S32,
                    Ty::U32,
                    Ty::S32,
                    Ty::U64,
                    Ty::S64,
                    Ty::U8,
                    Ty::S16,
                ]);
                let ops: &[BinOp] = BinOp::ALL;
                let op = self.pick(ops);
                let op = if op == BinOp::MulWide && ty.bits() > 32 {
                    BinOp::Mul
                } else {
                    op
                };
                let wide_dst = op == BinOp::MulWide && ty.bits() == 32;
                let dst = if ty.regs() == 2 || wide_dst {
                    self.pair()
                } else {
                    self.val()
                };
                let a = if ty.regs() == 2 {
                    self.pair_src()
                } else {
                    self.int_src()
                };
                let b = if ty.regs() == 2 && !matches!(op, BinOp::Shl | BinOp::Shr) {
                    self.pair_src()
                } else {
                    self.int_src()
                };
                let b = if matches!(op, BinOp::Shl | BinOp::Shr) && ty.regs() == 2 {
                    Src::plain(if self.chance(50) {
                        Operand::Imm(self.below(80))
                    } else {
                        Operand::Reg(self.pair())
                    })
                } else {
                    b
                };
                Op::Binary {
                    op,
                    ty,
                    dst,
                    a,
                    b,
                    ftz: false,
                }
            }
            9 => {
                let ty = self.pick(&[Ty::F32, Ty::F64]);
                let op = self.pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Min, BinOp::Max]);
                let (dst, a, b) = if ty == Ty::F64 {
                    (
                        self.pair(),
                        Src::plain(Operand::Reg(self.pair())),
                        Src::plain(Operand::Reg(self.pair())),
                    )
                } else {
                    let m = self.pick(&[SrcMod::None, SrcMod::Neg, SrcMod::Abs, SrcMod::NegAbs]);
                    (
                        self.val(),
                        Src {
                            operand: self.operand(),
                            modifier: m,
                        },
                        Src::plain(self.operand()),
                    )
                };
                Op::Binary {
                    op,
                    ty,
                    dst,
                    a,
                    b,
                    ftz: self.chance(50),
                }
            }
            10 => {
                let op = self.pick(UnOp::ALL);
                let ty = self.pick(&[Ty::U32, Ty::S32, Ty::U64, Ty::S16]);
                let (dst, a) = if ty.regs() == 2 {
                    (
                        if matches!(op, UnOp::Popc | UnOp::Clz) {
                            self.val()
                        } else {
                            self.pair()
                        },
                        self.pair_src(),
                    )
                } else {
                    (self.val(), self.int_src())
                };
                Op::Unary { op, ty, dst, a }
            }
            11 => Op::Select {
                ty: self.pick(&[Ty::U32, Ty::S8]),
                dst: self.val(),
                a: self.int_src(),
                b: self.int_src(),
                pred: self.pred_src(),
            },
            12 => {
                let (dst_ty, src_ty, round) = self.pick(&[
                    (Ty::F32, Ty::S32, Round::Nearest),
                    (Ty::F32, Ty::U32, Round::Zero),
                    (Ty::F32, Ty::S32, Round::Down),
                    (Ty::S32, Ty::F32, Round::Nearest),
                    (Ty::U32, Ty::F32, Round::Zero),
                    (Ty::S32, Ty::F32, Round::Up),
                    (Ty::S16, Ty::F32, Round::Down),
                    (Ty::F64, Ty::F32, Round::Nearest),
                    (Ty::F32, Ty::F64, Round::Nearest),
                    (Ty::F32, Ty::F64, Round::Up),
                    (Ty::F16, Ty::F32, Round::Nearest),
                    (Ty::F32, Ty::F16, Round::Nearest),
                    (Ty::U8, Ty::S32, Round::Nearest),
                    (Ty::S64, Ty::S16, Round::Nearest),
                    (Ty::F32, Ty::U64, Round::Nearest),
                    (Ty::F64, Ty::S64, Round::Zero),
                ]);
                let dst = if dst_ty.regs() == 2 {
                    self.pair()
                } else {
                    self.val()
                };
                let a = if src_ty.regs() == 2 {
                    self.pair_src()
                } else {
                    Src::plain(self.operand())
                };
                Op::Convert {
                    dst_ty,
                    src_ty,
                    round,
                    ftz: src_ty.is_float() && dst_ty.is_float() && self.chance(30),
                    dst,
                    a,
                }
            }
            13 => Op::PredLogic {
                op: self.pick(BoolOp::ALL),
                dst: self.value_pred(),
                a: self.pred_src(),
                b: self.pred_src(),
            },
            14 => {
                if self.chance(50) {
                    Op::PredMove(PredMove::ToReg {
                        dst: self.val(),
                        src: self.pred_src(),
                    })
                } else {
                    Op::PredMove(PredMove::FromReg {
                        dst: self.value_pred(),
                        src: self.operand(),
                        mask: 1 << self.below(32),
                    })
                }
            }
            15 => Op::Vote {
                mode: self.pick(&[VoteMode::Any, VoteMode::All, VoteMode::Eq]),
                dst: if self.chance(50) { self.val() } else { Reg::RZ },
                dst_pred: self.value_pred(),
                src: self.pred_src(),
            },
            16 if self.wide && self.chance(40) => Op::ReadSpecial {
                dst: self.val(),
                sr: self.pick(&[
                    SpecialReg::TidX,
                    SpecialReg::TidY,
                    SpecialReg::TidZ,
                    SpecialReg::LaneId,
                    SpecialReg::WarpId,
                    // The same for every lane of a warp (a splat in vector code).
                    SpecialReg::CtaIdX,
                    SpecialReg::CtaIdY,
                    SpecialReg::NTidX,
                    SpecialReg::NTidZ,
                    SpecialReg::NCtaIdX,
                    SpecialReg::NCtaIdZ,
                    SpecialReg::NWarpId,
                ]),
            },
            // SASS reads only the CTA index among them: `S2R SR_CTAID.*`.
            16 if !self.wide && self.chance(25) => Op::ReadSpecial {
                dst: self.val(),
                sr: self.pick(&[SpecialReg::CtaIdX, SpecialReg::CtaIdY, SpecialReg::CtaIdZ]),
            },
            // `BSSY`, `YIELD`: nothing, inside a region as anywhere else.
            16 if self.chance(25) => Op::Nop,
            _ if self.chance(10) => Op::PackHalves {
                ty: self.pick(&[Ty::F16x2, Ty::BF16x2]),
                dst: self.val(),
                hi: Src::plain(self.operand()),
                lo: Src::plain(self.operand()),
            },
            _ if self.chance(10) => Op::PackedMinMax {
                op: self.pick(&[BinOp::Min, BinOp::Max]),
                ty: self.pick(&[Ty::U16, Ty::S16]),
                dst: self.val(),
                a: Src::plain(self.operand()),
                b: Src::plain(self.operand()),
            },
            _ if self.chance(15) => Op::IsSpace {
                space: self.pick(&[Space::Shared, Space::Global]),
                dst: self.value_pred(),
                addr: Address::base64(self.pair(), self.below(64) as i64 - 32),
            },
            _ => {
                let ty = self.pick(&[Ty::U32, Ty::U64]);
                let dst = if ty == Ty::U64 {
                    self.pair()
                } else {
                    self.val()
                };
                Op::Mov {
                    ty,
                    dst,
                    src: Operand::Imm(self.rng.next()),
                }
            }
        };
        self.push_guarded(g, op);
    }

    /// R7 = value & mask (a shared offset), or unmasked now and then so that some kernels trap.
    fn shared_offset(&mut self, align: u64) -> Reg {
        let mask = if self.chance(2) {
            0x1ff
        } else {
            (SHARED_BYTES as u64 - 1) & !(align - 1)
        };
        let v = self.val();
        self.push(Op::Lop3 {
            dst: Reg(7),
            pred_out: Pred::PT,
            a: Src::plain(Operand::Reg(v)),
            b: Src::plain(Operand::Imm(mask)),
            c: Src::plain(Operand::Reg(Reg::RZ)),
            lut: 0xc0,
        });
        Reg(7)
    }

    /// R18:R19 = data + (value & mask): a global address in the data buffer.
    fn global_address(&mut self, align: u64) -> Reg {
        let mask = if self.chance(2) {
            0x7ff
        } else {
            (DATA_BYTES - 1) & !(align - 1)
        };
        let v = self.val();
        self.push(Op::Lop3 {
            dst: Reg(7),
            pred_out: Pred::PT,
            a: Src::plain(Operand::Reg(v)),
            b: Src::plain(Operand::Imm(mask)),
            c: Src::plain(Operand::Reg(Reg::RZ)),
            lut: 0xc0,
        });
        self.push(Op::Imad {
            mode: ImadMode::Wide,
            signed: false,
            dst: Reg(18),
            a: Src::plain(Operand::Reg(Reg(7))),
            b: Src::plain(Operand::Imm(1)),
            c: Src::plain(Operand::Reg(Reg(2))),
        });
        Reg(18)
    }

    /// R18:R19 = data + a constant offset: one global address for every lane, the pattern
    /// warp-aggregated atomics take (misaligned now and then, so that a shared address traps).
    fn uniform_global_address(&mut self, align: u64) -> Reg {
        let mut offset = self.below(DATA_BYTES) & !(align - 1);
        if self.chance(4) {
            offset |= 1;
        }
        self.push(Op::Mov {
            ty: Ty::U32,
            dst: Reg(7),
            src: Operand::Imm(offset),
        });
        self.push(Op::Imad {
            mode: ImadMode::Wide,
            signed: false,
            dst: Reg(18),
            a: Src::plain(Operand::Reg(Reg(7))),
            b: Src::plain(Operand::Imm(1)),
            c: Src::plain(Operand::Reg(Reg(2))),
        });
        Reg(18)
    }

    /// R18:R19 = data + offset + lane * `size`: the lanes' elements adjacent (the pattern of
    /// `out[threadIdx.x]`, which SIMD lanes run four at a time, `jit/translate/simd/`). The
    /// offset is a multiple of `size`, of 16 in half the cases (so that four lanes' 32-bit
    /// words make one aligned 16-byte block); now and then it runs past the buffer's end.
    fn lane_global_address(&mut self, size: u64) -> Reg {
        let mut offset = self.below(DATA_BYTES - 32 * size) & !(size - 1);
        if self.chance(50) {
            offset &= !15;
        } else if self.chance(5) {
            offset = DATA_BYTES - 8 * size;
        }
        self.push(Op::ReadSpecial {
            dst: Reg(7),
            sr: SpecialReg::LaneId,
        });
        self.push(Op::Imad {
            mode: ImadMode::Lo,
            signed: false,
            dst: Reg(7),
            a: Src::plain(Operand::Reg(Reg(7))),
            b: Src::plain(Operand::Imm(size)),
            c: Src::plain(Operand::Imm(offset)),
        });
        self.push(Op::Imad {
            mode: ImadMode::Wide,
            signed: false,
            dst: Reg(18),
            a: Src::plain(Operand::Reg(Reg(7))),
            b: Src::plain(Operand::Imm(1)),
            c: Src::plain(Operand::Reg(Reg(2))),
        });
        Reg(18)
    }

    /// `words` consecutive value registers from R8..R17 for a vector operand: in SASS aligned
    /// as a pair or quad (`LDG.E.128 R8`), in PTX anywhere (the front-end's slots).
    fn range(&mut self, words: u16) -> Reg {
        if self.wide {
            Reg(8 + self.below(u64::from(11 - words)) as u16)
        } else {
            let align = words.min(4);
            let starts = (10 - words) / align + 1;
            Reg(8 + align * self.below(u64::from(starts)) as u16)
        }
    }

    /// A load or store of 2, 4 or 8 elements (at most 16 bytes), aligned to its whole size
    /// (unmasked now and then, so that some trap).
    fn vector_memory(&mut self) {
        let (ty, vector) = if self.wide {
            self.pick(&[
                (Ty::U64, 2u8),
                (Ty::U32, 4),
                (Ty::U32, 2),
                (Ty::F32, 4),
                (Ty::S16, 4),
                (Ty::U16, 8),
                (Ty::S8, 4),
                (Ty::U8, 2),
            ])
        } else {
            // SASS `.128` (two u64 elements); the other shapes are PTX's.
            (Ty::U64, 2)
        };
        let bytes = u64::from(ty.bytes()) * u64::from(vector);
        let global = self.chance(50);
        let (space, addr) = if global {
            let base = self.global_address(bytes);
            (Space::Global, Address::base64(base, 0))
        } else {
            let base = self.shared_offset(bytes);
            (Space::Shared, Address::base32(base, 0))
        };
        let access = MemAccess {
            space,
            ty,
            vector,
            order: self.pick(&[MemOrder::Weak, MemOrder::Relaxed]),
            scope: self.pick(Scope::ALL),
            addr,
        };
        let data = self.range(ty.regs() * u16::from(vector));
        let g = self.guard();
        if self.chance(50) {
            self.push_guarded(g, Op::Load { access, dst: data });
        } else {
            self.push_guarded(
                g,
                Op::Store {
                    access,
                    src: Operand::Reg(data),
                },
            );
        }
    }

    /// A vector atomic of sm_90 (global, every element one atomic) or a 128-bit EXCH/CAS.
    fn wide_atomic(&mut self) {
        let b128 = atomjit::exec::memory::has_cas128() && self.chance(35);
        let (op, ty, vector, ftz) = if b128 {
            (
                self.pick(&[AtomicOp::Exch, AtomicOp::Cas]),
                Ty::B128,
                1u8,
                false,
            )
        } else {
            let halves: &[Ty] = if self.wide {
                &[Ty::F16, Ty::BF16, Ty::F16x2, Ty::BF16x2]
            } else {
                &[Ty::F16x2, Ty::BF16x2]
            };
            if self.chance(40) {
                (AtomicOp::Add, Ty::F32, self.pick(&[2u8, 4]), true)
            } else {
                let ty = self.pick(halves);
                let counts: &[u8] = if ty.bytes() == 2 { &[2, 4, 8] } else { &[2, 4] };
                let op = self.pick(&[AtomicOp::Add, AtomicOp::Min, AtomicOp::Max]);
                (op, ty, self.pick(counts), false)
            }
        };
        let bytes = u64::from(ty.bytes()) * u64::from(vector);
        let words = ty.regs() * u16::from(vector);
        // 128-bit atomics also in shared memory; vector atomics are global only.
        let global = !b128 || self.chance(60);
        let (space, addr) = if global {
            let base = self.global_address(bytes);
            (Space::Global, Address::base64(base, 0))
        } else {
            let base = self.shared_offset(bytes);
            (Space::Shared, Address::base32(base, 0))
        };
        let cas = op == AtomicOp::Cas;
        let src = self.range(words);
        let src2 = cas.then(|| Operand::Reg(self.range(words)));
        let dst = if !cas && self.chance(30) {
            Reg::RZ
        } else {
            self.range(words)
        };
        let g = self.guard();
        let inst = AtomicInst {
            access: MemAccess {
                space,
                ty,
                vector,
                order: self.pick(&[MemOrder::Relaxed, MemOrder::Release, MemOrder::AcqRel]),
                scope: self.pick(Scope::ALL),
                addr,
            },
            op,
            dst,
            src: Operand::Reg(src),
            src2,
            spin: false,
            ftz,
            performed: if !self.wide && self.chance(20) {
                self.value_pred()
            } else {
                Pred::PT
            },
        };
        self.push_guarded(g, Op::Atomic(Box::new(inst)));
    }

    fn memory(&mut self) {
        if self.chance(15) {
            return self.vector_memory();
        }
        let ty = self.pick(&[Ty::U32, Ty::U32, Ty::U8, Ty::S8, Ty::U16, Ty::S16, Ty::U64]);
        let global = self.chance(40);
        let order_load = self.pick(&[
            MemOrder::Weak,
            MemOrder::Relaxed,
            MemOrder::Acquire,
            MemOrder::Volatile,
        ]);
        let order_store = self.pick(&[
            MemOrder::Weak,
            MemOrder::Relaxed,
            MemOrder::Release,
            MemOrder::Volatile,
        ]);
        let scope = self.pick(Scope::ALL);
        let (space, addr) = if global {
            let base = self.global_address(u64::from(ty.bytes()));
            (
                Space::Global,
                Address::Linear(LinearAddress {
                    base: Some(base),
                    base_bits: 64,
                    offset: 0,
                }),
            )
        } else {
            let base = self.shared_offset(u64::from(ty.bytes()));
            (
                Space::Shared,
                Address::Linear(LinearAddress {
                    base: Some(base),
                    base_bits: 32,
                    offset: 0,
                }),
            )
        };
        let g = self.guard();
        if self.chance(50) {
            let dst = if ty.regs() == 2 {
                self.pair()
            } else if self.wide && !global && self.chance(30) {
                // The load overwrites its own address register.
                Reg(7)
            } else {
                self.val()
            };
            self.push_guarded(
                g,
                Op::Load {
                    access: MemAccess {
                        space,
                        ty,
                        vector: 1,
                        order: order_load,
                        scope,
                        addr,
                    },
                    dst,
                },
            );
        } else {
            let src = if ty.regs() == 2 {
                Operand::Reg(self.pair())
            } else {
                self.operand()
            };
            self.push_guarded(
                g,
                Op::Store {
                    access: MemAccess {
                        space,
                        ty,
                        vector: 1,
                        order: order_store,
                        scope,
                        addr,
                    },
                    src,
                },
            );
        }
    }

    /// A surface access (SASS only: `SUATOM`/`SURED`, `SULD`, `SUST`) on one of
    /// [`surface_decls`]: coordinates in R12.. (aligned for any count), in bounds or up to one
    /// past either edge (mostly in bounds under `.TRAP`, so that few kernels trap), x in bytes
    /// with `.BA` (misaligned now and then), the handle from the constant bank or from R6 (now
    /// and then a header past the pool, or the wrong surface for the access).
    fn surface(&mut self) {
        use surface::{Clamp, SurfaceAddress, SurfaceHandle};
        let decls = surface_decls();
        let index = self.below(decls.len() as u64) as usize;
        let decl = &decls[index];
        let clamp = self.pick(&[Clamp::Nearest, Clamp::Ignore, Clamp::Trap]);
        let byte_x = self.chance(50);
        let elem = decl.shape.elem_bytes;
        let inside = clamp != Clamp::Trap || self.chance(96);
        for (i, &extent) in surface_extents(&decl.shape).iter().enumerate() {
            let v = self.val();
            let mask = if inside { extent - 1 } else { 2 * extent - 1 };
            let r = Reg(12 + i as u16);
            self.push(Op::Lop3 {
                dst: r,
                pred_out: Pred::PT,
                a: src(Operand::Reg(v)),
                b: src(Operand::Imm(u64::from(mask))),
                c: src(Operand::Reg(Reg::RZ)),
                lut: 0xc0,
            });
            // Out of bounds: value - 1, so -1 occurs as well as the far edge.
            let low = if inside { 0 } else { u64::from(u32::MAX) };
            let scale = if i == 0 && byte_x { elem } else { 1 };
            // x in bytes, and a misaligned byte x now and then.
            let skew = if i == 0 && byte_x && self.chance(3) {
                2
            } else {
                0
            };
            self.push(Op::Imad {
                mode: ImadMode::Lo,
                signed: false,
                dst: r,
                a: src(Operand::Reg(r)),
                b: src(Operand::Imm(u64::from(scale))),
                c: src(Operand::Imm(
                    low.wrapping_mul(u64::from(scale)).wrapping_add(skew) & 0xffff_ffff,
                )),
            });
        }
        // The handle: usually this surface's word in the constant bank; else R6 holding it,
        // the handle of another surface (a mismatch unless it has the same shape), or a
        // header past the pool.
        let handle = if self.chance(75) {
            SurfaceHandle::Bank {
                bank: 0,
                offset: PARAM_BASE + 16 + 8 * index as u32,
            }
        } else {
            let header = match self.below(40) {
                0 => decls.len() as u64 + self.below(3),
                1 => self.below(decls.len() as u64),
                _ => index as u64,
            };
            // samplerPtr bits are ignored.
            let sampler = self.pick(&[0u64, 0xabc0_0000]);
            self.push(Op::Mov {
                ty: Ty::U32,
                dst: Reg(6),
                src: Operand::Imm(sampler | header),
            });
            SurfaceHandle::Reg(Reg(6))
        };
        let kind = self.below(10);
        // `.SD32`/`.SD64` on 4- and 8-byte elements alike.
        let wide = elem == 8;
        let mut addr = SurfaceAddress {
            coords: Reg(12),
            dim: decl.shape.dim,
            byte_x,
            clamp,
            handle,
            format_sign: false,
            sparse: Pred::PT,
        };
        let g = self.guard();
        if kind < 6 {
            // SUATOM/SURED: an op and size of the document's table, of the element's size.
            let (op, ty, format_sign, ftz) = if wide {
                let op = self.pick(&[
                    AtomicOp::Add,
                    AtomicOp::Min,
                    AtomicOp::Max,
                    AtomicOp::And,
                    AtomicOp::Or,
                    AtomicOp::Xor,
                    AtomicOp::Exch,
                    AtomicOp::Cas,
                ]);
                let sizes: &[(Ty, bool)] = match op {
                    AtomicOp::Min | AtomicOp::Max => {
                        &[(Ty::U64, false), (Ty::S64, false), (Ty::U64, true)]
                    }
                    _ => &[(Ty::U64, false)],
                };
                let (ty, sd) = self.pick(sizes);
                (op, ty, sd, false)
            } else {
                let op = self.pick(&[
                    AtomicOp::Add,
                    AtomicOp::Min,
                    AtomicOp::Max,
                    AtomicOp::Inc,
                    AtomicOp::Dec,
                    AtomicOp::And,
                    AtomicOp::Or,
                    AtomicOp::Xor,
                    AtomicOp::Exch,
                    AtomicOp::Cas,
                ]);
                let sizes: &[(Ty, bool, bool)] = match op {
                    AtomicOp::Add => &[
                        (Ty::U32, false, false),
                        (Ty::S32, false, false),
                        (Ty::U32, true, false),
                        (Ty::F32, false, true),
                        (Ty::F16x2, false, false),
                        (Ty::F16x2, false, true),
                    ],
                    AtomicOp::Min | AtomicOp::Max => &[
                        (Ty::U32, false, false),
                        (Ty::S32, false, false),
                        (Ty::U32, true, false),
                        (Ty::F16x2, false, false),
                    ],
                    AtomicOp::And | AtomicOp::Or | AtomicOp::Xor => &[
                        (Ty::U32, false, false),
                        (Ty::S32, false, false),
                        (Ty::U32, true, false),
                    ],
                    AtomicOp::Exch | AtomicOp::Cas => {
                        &[(Ty::U32, false, false), (Ty::S32, false, false)]
                    }
                    _ => &[(Ty::U32, false, false)],
                };
                let (ty, sd, ftz) = self.pick(sizes);
                (op, ty, sd, ftz)
            };
            addr.format_sign = format_sign;
            let words = ty.regs();
            let cas = op == AtomicOp::Cas;
            // The sparse status: with a register handle, or on CAS (the document's forms).
            let register = matches!(addr.handle, SurfaceHandle::Reg(_));
            if (register || cas) && self.chance(40) {
                addr.sparse = self.value_pred();
            }
            // Rb: a register (pair); CAS: compare and swap as one aligned vec2/vec4.
            let rb = if cas {
                self.range(2 * words)
            } else if wide {
                self.pair()
            } else {
                self.val()
            };
            let dst = if !cas && self.chance(35) {
                Reg::RZ
            } else if wide {
                self.pair()
            } else {
                self.val()
            };
            let inst = AtomicInst {
                access: MemAccess {
                    space: Space::Global,
                    ty,
                    vector: 1,
                    order: MemOrder::Relaxed,
                    scope: self.pick(&[Scope::Cta, Scope::Gpu, Scope::Sys]),
                    addr: Address::Surface(addr),
                },
                op,
                dst,
                src: Operand::Reg(rb),
                src2: cas.then(|| Operand::Reg(rb.word(words))),
                spin: false,
                ftz,
                performed: Pred::PT,
            };
            self.push_guarded(g, Op::Atomic(Box::new(inst)));
        } else {
            let ty = if wide {
                Ty::U64
            } else {
                self.pick(&[Ty::U32, Ty::S32, Ty::F32])
            };
            let access = MemAccess {
                space: Space::Global,
                ty,
                vector: 1,
                order: self.pick(&[MemOrder::Weak, MemOrder::Relaxed]),
                scope: self.pick(&[Scope::Cta, Scope::Gpu]),
                addr: Address::Surface(addr),
            };
            let data = if wide { self.pair() } else { self.val() };
            if kind < 8 {
                self.push_guarded(g, Op::Load { access, dst: data });
            } else {
                self.push_guarded(
                    g,
                    Op::Store {
                        access,
                        src: Operand::Reg(data),
                    },
                );
            }
        }
    }

    fn atomic(&mut self) {
        if !self.wide && self.chance(25) {
            return self.surface();
        }
        if self.ws != 32 {
            // Warp sizes other than 32 are vISA kernels, whose atomics come with that dialect.
            return self.memory();
        }
        if self.chance(15) {
            return self.wide_atomic();
        }
        let global = self.chance(if self.wide { 30 } else { 45 });
        // Global memory through a generic address now and then (SASS `ATOM`/`RED`, PTX
        // `atom` without a space).
        let space = if !global {
            Space::Shared
        } else if self.chance(30) {
            Space::Generic
        } else {
            Space::Global
        };
        let dialect = if self.wide {
            Dialect::Ptx
        } else {
            Dialect::Sass
        };
        let table = valid::table(dialect, space).expect("SASS and PTX have atomic tables");
        let row = table.rows[self.below(table.rows.len() as u64) as usize];
        let (op, size) = (
            row.op,
            row.sizes[self.below(row.sizes.len() as u64) as usize],
        );
        let ty = size.ty;
        let words = ty.regs();
        let cas = matches!(op, AtomicOp::Cas | AtomicOp::Cast);
        let invariant = global && self.chance(50);
        let (space, addr) = if invariant {
            // A warp-invariant base (plus an immediate offset): proved the same for every
            // lane, so aggregable ops take the whole-warp path with no run-time test.
            let align = u64::from(ty.bytes());
            let (base, room) = if self.chance(50) {
                (INV_DATA, DATA_BYTES)
            } else {
                (INV_DATA_OFF, DATA_BYTES / 2)
            };
            let mut offset = (self.below(room) & !(align - 1)) as i64;
            if self.chance(3) {
                offset |= 1;
            } else if self.chance(2) {
                // Before the arena: out of range.
                offset = -16 * align as i64;
            }
            (
                space,
                Address::Linear(LinearAddress {
                    base: Some(Reg(base)),
                    base_bits: 64,
                    offset,
                }),
            )
        } else if global {
            let align = u64::from(ty.bytes());
            // One address for every lane (the warp-aggregated pattern) in a third of them,
            // the lanes' elements adjacent in half the rest.
            let base = if self.chance(35) {
                self.uniform_global_address(align)
            } else if self.chance(50) {
                self.lane_global_address(align)
            } else {
                self.global_address(align)
            };
            (
                space,
                Address::Linear(LinearAddress {
                    base: Some(base),
                    base_bits: 64,
                    offset: 0,
                }),
            )
        } else if self.chance(10) {
            (
                Space::Shared,
                Address::absolute(self.below(SHARED_BYTES as u64 / 8) as i64 * 8),
            )
        } else {
            let base = self.shared_offset(u64::from(ty.bytes()));
            (
                Space::Shared,
                Address::Linear(LinearAddress {
                    base: Some(base),
                    base_bits: 32,
                    offset: 0,
                }),
            )
        };
        // ATOMS.CAS pairs Rb and Rc: R12/R13 (.32), R12:R13/R14:R15 (.64); PTX takes any.
        let (b, c) = if cas && self.wide {
            if words == 2 {
                (Operand::Reg(self.pair()), Some(Operand::Reg(self.pair())))
            } else {
                (Operand::Reg(self.val()), Some(Operand::Reg(self.val())))
            }
        } else if cas {
            if words == 2 {
                (reg(12), Some(reg(14)))
            } else {
                (reg(12), Some(reg(13)))
            }
        } else if invariant && self.chance(40) {
            // An invariant operand: with an invariant address, no lane loop at all.
            if words == 2 {
                (reg(INV_PAIR), None)
            } else {
                (reg(self.pick(&[INV_VALUE, INV_OFFSET])), None)
            }
        } else if words == 2 {
            (Operand::Reg(self.pair()), None)
        } else {
            (Operand::Reg(self.val()), None)
        };
        let red = global && !cas && self.chance(30);
        let dst = if red {
            Reg::RZ
        } else if self.wide && words == 1 && !global && self.chance(30) {
            // The atomic returns into its own address register.
            Reg(7)
        } else if words == 2 {
            self.pair()
        } else {
            self.val()
        };
        let g = self.guard();
        let order = self.pick(&[
            MemOrder::Relaxed,
            MemOrder::Acquire,
            MemOrder::Release,
            MemOrder::AcqRel,
        ]);
        let scope = self.pick(Scope::ALL);
        let spin = op == AtomicOp::Cast && !global && !self.wide && self.chance(50);
        let inst = AtomicInst {
            access: MemAccess {
                space,
                ty,
                vector: 1,
                order,
                scope,
                addr,
            },
            op,
            dst,
            src: b,
            src2: c,
            spin,
            ftz: size.ftz,
            // SASS `ATOM ... P0, ...`: the predicate says the operation was performed.
            performed: if self.chance(20) {
                self.value_pred()
            } else {
                Pred::PT
            },
        };
        self.push_guarded(g, Op::Atomic(Box::new(inst)));
    }

    /// `@P BRA over` a nested block, or an if/else.
    fn branch_over(&mut self, budget: u32) {
        let guard = Guard {
            pred: self.value_pred(),
            negate: self.chance(50),
        };
        let at = self.insts.len();
        self.push_guarded(
            guard,
            Op::Branch {
                target: 0,
                uniform: false,
            },
        );
        self.depth += 1;
        // A value handed from this side to the else side below through a register the kernel
        // never stores: R23 read by a shuffle, or the uniform R27 (the first instruction of
        // each side, so the hand-over happens whenever the branch splits the group).
        let handed = (self.ws == 32 && self.chance(70)).then(|| {
            let r = if self.uniform && self.chance(50) {
                Reg(27)
            } else {
                Reg(23)
            };
            let v = Reg(8 + self.below(10) as u16);
            let add = self.interesting_imm();
            self.push(Op::IAdd3 {
                dst: r,
                carry_out: [Pred::PT; 2],
                a: src(Operand::Reg(v)),
                b: src(Operand::Imm(add)),
                c: src(Operand::Reg(Reg::RZ)),
                carry_in: [PredSrc::FALSE; 2],
            });
            r
        });
        self.block(budget);
        // Now and then an else side: the two sides run one after the other, and a value one
        // side writes (a uniform register, a register shuffled across lanes) may be read on
        // the other side while the writing side's own paths never read it.
        let skip_else = self.chance(40).then(|| {
            self.push(Op::Branch {
                target: 0,
                uniform: false,
            });
            self.insts.len() - 1
        });
        let target = self.insts.len() as u32;
        if let Some(skip) = skip_else {
            let dst = Reg(8 + self.below(10) as u16);
            match handed {
                Some(r) if r == Reg(27) => self.push(Op::IAdd3 {
                    dst,
                    carry_out: [Pred::PT; 2],
                    a: src(Operand::Reg(dst)),
                    b: src(Operand::Reg(r)),
                    c: src(Operand::Reg(Reg::RZ)),
                    carry_in: [PredSrc::FALSE; 2],
                }),
                Some(r) => {
                    let lane = self.below(32);
                    self.push(Op::Shfl {
                        mode: ShflMode::Idx,
                        dst,
                        dst_pred: Pred::PT,
                        a: Operand::Reg(r),
                        b: src(Operand::Imm(lane)),
                        c: src(Operand::Imm(0x1f)),
                    })
                }
                None => {}
            }
            let b = 1 + self.below(3) as u32;
            self.block(b);
            let end = self.insts.len() as u32;
            self.insts[skip].op = Op::Branch {
                target: end,
                uniform: false,
            };
        }
        self.depth -= 1;
        // Now and then a SASS convergence test (`BRA.CONV`/`BRA.DIV`) instead: all executing
        // lanes go one way, decided by whether the lanes of a mask all execute it.
        self.insts[at].op = if self.chance(15) {
            let mask = if self.chance(50) {
                Src::plain(Operand::Imm(u64::from(u32::MAX)))
            } else {
                Src::plain(Operand::Reg(self.val()))
            };
            Op::BranchConverged {
                target,
                mask,
                diverged: self.chance(50),
            }
        } else {
            Op::Branch {
                target,
                uniform: false,
            }
        };
        // A join point needs an instruction to land on.
        self.push(Op::Nop);
        if let Some(r) = handed {
            // Overwritten after the join: on the writing side's own paths the handed value is
            // dead, so only the other side's read keeps its store.
            self.push(Op::Mov {
                ty: Ty::U32,
                dst: r,
                src: Operand::Imm(0),
            });
        }
    }

    /// A split by a lane mask (SASS `WARPSYNC.EXCLUSIVE`, PTX `.sync` with a register
    /// membermask) around a few ops, rejoining after them. The mask in R19 is a
    /// cooperative-groups tile of `t` lanes, `((1 << t) - 1) << (lane & -t)`, or 0 (no lane:
    /// one group). Only at depth 0, where every live lane is in the group, so no split waits.
    fn split_region(&mut self, budget: u32) {
        let mask = Reg(19);
        let t = self.pick(&[1u64, 2, 4, 8, 16, 32]);
        if self.chance(85) {
            self.push(Op::ReadSpecial {
                dst: mask,
                sr: SpecialReg::LaneId,
            });
            self.push(Op::Binary {
                op: BinOp::And,
                ty: Ty::U32,
                dst: mask,
                a: src(Operand::Reg(mask)),
                b: src(Operand::Imm(u64::from(!(t as u32 - 1)))),
                ftz: false,
            });
            self.push(Op::Binary {
                op: BinOp::Shl,
                ty: Ty::U32,
                dst: mask,
                a: src(Operand::Imm(u64::from(u32::MAX >> (32 - t)))),
                b: src(Operand::Reg(mask)),
                ftz: false,
            });
        } else {
            self.push(Op::Mov {
                ty: Ty::U32,
                dst: mask,
                src: Operand::Imm(0),
            });
        }
        let at = self.insts.len();
        self.push(Op::Nop);
        self.depth += 1;
        self.block(budget);
        self.depth -= 1;
        let rejoin = self.insts.len() as u32;
        self.push(Op::Nop);
        self.insts[at].op = Op::WarpSplit {
            mask: src(Operand::Reg(mask)),
            rejoin,
            wait: self.chance(50),
        };
        // Now and then guarded: guard-false lanes continue with the last group.
        if self.chance(25) {
            self.insts[at].guard = Guard {
                pred: self.value_pred(),
                negate: self.chance(50),
            };
        }
    }

    /// A loop with a trip count of 1..=4, uniform or per lane, counted in R20 + depth (and P3).
    fn counted_loop(&mut self, budget: u32) {
        // One counter register per nesting level, so inner loops leave outer counters alone.
        let counter = Reg(20 + self.depth as u16);
        if self.chance(50) {
            let n = 1 + self.below(3);
            self.push(Op::Mov {
                ty: Ty::U32,
                dst: counter,
                src: Operand::Imm(n),
            });
        } else {
            // (tid & 3) + 1.
            self.push(Op::Lop3 {
                dst: counter,
                pred_out: Pred::PT,
                a: src(reg(0)),
                b: src(Operand::Imm(3)),
                c: src(Operand::Reg(Reg::RZ)),
                lut: 0xc0,
            });
            self.push(Op::IAdd3 {
                dst: counter,
                carry_out: [Pred::PT; 2],
                a: src(Operand::Reg(counter)),
                b: src(Operand::Imm(1)),
                c: src(Operand::Reg(Reg::RZ)),
                carry_in: [PredSrc::FALSE; 2],
            });
        }
        let head = self.insts.len() as u32;
        self.depth += 1;
        self.block(budget);
        self.depth -= 1;
        self.push(Op::IAdd3 {
            dst: counter,
            carry_out: [Pred::PT; 2],
            a: src(Operand::Reg(counter)),
            b: src(Operand::Imm(0xffff_ffff)),
            c: src(Operand::Reg(Reg::RZ)),
            carry_in: [PredSrc::FALSE; 2],
        });
        self.push(Op::SetP {
            cmp: CmpOp::Ne,
            ty: Ty::U32,
            combine: BoolOp::And,
            dst: p(3),
            dst2: Pred::PT,
            a: src(Operand::Reg(counter)),
            b: src(Operand::Reg(Reg::RZ)),
            c: PredSrc::TRUE,
            chain: None,
        });
        self.push_guarded(
            Guard {
                pred: p(3),
                negate: false,
            },
            Op::Branch {
                target: head,
                uniform: false,
            },
        );
        self.push(Op::Nop);
    }

    fn block(&mut self, budget: u32) {
        for _ in 0..budget {
            match self.below(20) {
                0..=7 => self.alu(),
                8..=10 => self.memory(),
                11..=14 => self.atomic(),
                15 if self.depth < 2 => {
                    let b = 1 + self.below(4) as u32;
                    self.branch_over(b)
                }
                16 if self.depth < 2 => {
                    let b = 1 + self.below(4) as u32;
                    self.counted_loop(b)
                }
                17 if self.depth == 0 && self.ws == 32 && self.chance(30) => {
                    let b = 1 + self.below(4) as u32;
                    self.split_region(b)
                }
                17 if self.depth == 0 => self.push(Op::Barrier { id: 0 }),
                18 => {
                    let order = self.pick(&[
                        MemOrder::Acquire,
                        MemOrder::Release,
                        MemOrder::AcqRel,
                        MemOrder::SeqCst,
                    ]);
                    let scope = self.pick(Scope::ALL);
                    self.push(Op::Fence { order, scope })
                }
                19 if self.depth == 0 && self.chance(20) => {
                    let guard = Guard {
                        pred: self.value_pred(),
                        negate: self.chance(50),
                    };
                    self.push_guarded(guard, Op::Exit)
                }
                _ => self.alu(),
            }
        }
    }
}

/// The kernel of `seed`, with its launch.
fn generate(seed: u64) -> (Kernel, [u32; 3], [u32; 3]) {
    let mut g = Gen {
        rng: SplitMix64::new(seed),
        insts: Vec::new(),
        depth: 0,
        wide: false,
        ws: 32,
        uniform: false,
    };
    g.wide = g.chance(50);
    let grid = [1 + g.below(2) as u32, 1, 1];
    let block = if g.wide {
        g.ws = g.pick(&[32u32, 32, 16, 8]);
        g.pick(&[
            [32u32, 1, 1],
            [64, 1, 1],
            [8, 4, 1],
            [16, 3, 1],
            [4, 2, 4],
            [40, 2, 1],
            [3, 5, 2],
        ])
    } else {
        [g.pick(&[32u32, 64, 48, 8]), 1, 1]
    };
    // Prologue: R0 = linear thread index in the CTA, R1 = ctaid, R2:R3 = data, R4:R5 = out,
    // values from R0.
    g.push(Op::ReadSpecial {
        dst: Reg(0),
        sr: SpecialReg::TidX,
    });
    if g.wide {
        // R0 = (tid.z * ntid.y + tid.y) * ntid.x + tid.x.
        g.push(Op::ReadSpecial {
            dst: Reg(21),
            sr: SpecialReg::TidZ,
        });
        g.push(Op::ReadSpecial {
            dst: Reg(1),
            sr: SpecialReg::TidY,
        });
        for (dst, a, ntid, c) in [(1u16, 21u16, CBANK_NTID + 4, 1u16), (0, 1, CBANK_NTID, 0)] {
            g.push(Op::Imad {
                mode: ImadMode::Lo,
                signed: false,
                dst: Reg(dst),
                a: src(reg(a)),
                b: src(Operand::Const {
                    bank: 0,
                    offset: ntid,
                }),
                c: src(reg(c)),
            });
        }
    }
    g.push(Op::ReadSpecial {
        dst: Reg(1),
        sr: SpecialReg::CtaIdX,
    });
    g.push(Op::Mov {
        ty: Ty::U64,
        dst: Reg(2),
        src: Operand::Const {
            bank: 0,
            offset: PARAM_BASE,
        },
    });
    g.push(Op::Mov {
        ty: Ty::U64,
        dst: Reg(4),
        src: Operand::Const {
            bank: 0,
            offset: PARAM_BASE + 8,
        },
    });
    // The invariant registers, from their own random stream (the rest of the kernel is
    // generated as before).
    let mut inv_rng = SplitMix64::new(seed ^ 0x1a7a_5eed_0f00_d00d);
    g.push(Op::Mov {
        ty: Ty::U64,
        dst: Reg(INV_DATA),
        src: Operand::Const {
            bank: 0,
            offset: PARAM_BASE,
        },
    });
    g.push(Op::Mov {
        ty: Ty::U32,
        dst: Reg(INV_OFFSET),
        src: Operand::Imm((inv_rng.next() % (DATA_BYTES / 2)) & !7),
    });
    g.push(Op::Imad {
        mode: ImadMode::Wide,
        signed: false,
        dst: Reg(INV_DATA_OFF),
        a: src(reg(INV_OFFSET)),
        b: src(Operand::Imm(1)),
        c: src(reg(INV_DATA)),
    });
    g.push(Op::Imad {
        mode: ImadMode::Lo,
        signed: false,
        dst: Reg(INV_VALUE),
        a: src(reg(INV_OFFSET)),
        b: src(Operand::Const {
            bank: 0,
            offset: CBANK_NTID,
        }),
        c: src(Operand::Imm(inv_rng.next() & 0xffff_ffff)),
    });
    g.push(Op::Mov {
        ty: Ty::U64,
        dst: Reg(INV_PAIR),
        src: Operand::Imm(inv_rng.next()),
    });
    for r in 8..18u16 {
        let mul = g.rng.next() & 0xffff_ffff | 1;
        let add = g.interesting_imm();
        g.push(Op::Imad {
            mode: ImadMode::Lo,
            signed: false,
            dst: Reg(r),
            a: src(reg(0)),
            b: src(Operand::Imm(mul)),
            c: src(Operand::Imm(add)),
        });
    }
    // Decided after the prologue so that its registers stay per-lane.
    g.uniform = g.chance(50);
    let budget = 6 + g.below(20) as u32;
    g.block(budget);
    // Epilogue: out[(ctaid * threads_per_cta + R0) * OUT_WORDS ..] = R8..R17, preds.
    let threads_per_cta = block[0] * block[1] * block[2];
    g.push(Op::Imad {
        mode: ImadMode::Lo,
        signed: false,
        dst: Reg(7),
        a: src(reg(1)),
        b: src(Operand::Imm(u64::from(threads_per_cta))),
        c: src(reg(0)),
    });
    g.push(Op::Imad {
        mode: ImadMode::Wide,
        signed: false,
        dst: Reg(18),
        a: src(reg(7)),
        b: src(Operand::Imm(OUT_WORDS * 4)),
        c: src(reg(4)),
    });
    for r in 8..18u16 {
        let addr = Address::Linear(LinearAddress {
            base: Some(Reg(18)),
            base_bits: 64,
            offset: i64::from(r - 8) * 4,
        });
        g.push(Op::Store {
            access: MemAccess {
                space: Space::Global,
                ty: Ty::U32,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Cta,
                addr,
            },
            src: reg(r),
        });
    }
    let preds: &[u16] = if g.uniform {
        &[0, 1, 2, 3, 7, 8]
    } else {
        &[0, 1, 2, 3]
    };
    for (i, &pr) in preds.iter().enumerate() {
        g.push(Op::PredMove(PredMove::ToReg {
            dst: Reg(7),
            src: PredSrc {
                pred: p(pr),
                negate: false,
            },
        }));
        g.push(Op::Shf(ShfInst {
            left: true,
            wrap: false,
            high: false,
            ty: Ty::U32,
            dst: Reg(7),
            lo: src(reg(7)),
            shift: src(Operand::Imm(i as u64)),
            hi: src(Operand::Reg(Reg::RZ)),
        }));
        g.push(Op::Lop3 {
            dst: Reg(22),
            pred_out: Pred::PT,
            a: src(reg(22)),
            b: src(reg(7)),
            c: src(Operand::Reg(Reg::RZ)),
            lut: if i == 0 { 0xcc } else { 0xfc },
        });
    }
    let _ = g.below(1);
    if g.uniform {
        // Word 11: the uniform registers R24..R26 folded together (R27 is scratch).
        g.push(Op::Lop3 {
            dst: Reg(7),
            pred_out: Pred::PT,
            a: src(reg(24)),
            b: src(reg(25)),
            c: src(reg(26)),
            lut: 0x96,
        });
        g.push(Op::Store {
            access: MemAccess {
                space: Space::Global,
                ty: Ty::U32,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Cta,
                addr: Address::Linear(LinearAddress {
                    base: Some(Reg(18)),
                    base_bits: 64,
                    offset: 44,
                }),
            },
            src: reg(7),
        });
    }
    g.push(Op::Store {
        access: MemAccess {
            space: Space::Global,
            ty: Ty::U32,
            vector: 1,
            order: MemOrder::Weak,
            scope: Scope::Cta,
            addr: Address::Linear(LinearAddress {
                base: Some(Reg(18)),
                base_bits: 64,
                offset: 40,
            }),
        },
        src: reg(22),
    });
    g.push(Op::Exit);
    // The SASS kernels declare the surfaces of `surface_decls` after their buffers.
    let surfaces: Vec<ParamDecl> = if g.wide {
        Vec::new()
    } else {
        surface_decls()
            .into_iter()
            .enumerate()
            .map(|(i, d)| ParamDecl {
                name: format!("surf{i}"),
                kind: ParamKind::Surface(Box::new(d)),
                cbank_offset: PARAM_BASE + 16 + 8 * i as u32,
                span: Span::default(),
            })
            .collect()
    };
    let launch = LaunchSpec {
        grid,
        block,
        shared_bytes: SHARED_BYTES,
        params: [
            vec![
                ParamDecl {
                    name: "data".into(),
                    kind: ParamKind::Buffer {
                        elem: Ty::U32,
                        len: DATA_BYTES / 4,
                        init: Init::Fill(Scalar::Int(0)),
                    },
                    cbank_offset: PARAM_BASE,
                    span: Span::default(),
                },
                ParamDecl {
                    name: "out".into(),
                    kind: ParamKind::Buffer {
                        elem: Ty::U32,
                        len: 1,
                        init: Init::Fill(Scalar::Int(0)),
                    },
                    cbank_offset: PARAM_BASE + 8,
                    span: Span::default(),
                },
            ],
            surfaces,
        ]
        .concat(),
        expects: Vec::new(),
        ..LaunchSpec::default()
    };
    let kernel = Kernel {
        name: format!("gen{seed:x}"),
        dialect: match (g.wide, g.ws) {
            (false, _) => Dialect::Sass,
            (true, 32) => Dialect::Ptx,
            (true, _) => Dialect::Visa,
        },
        warp_size: g.ws,
        insts: g.insts,
        labels: Vec::new(),
        num_regs: NUM_REGS,
        num_preds: if g.uniform { 9 } else { 7 },
        uniform: if g.uniform {
            Uniform {
                regs: UNIFORM_REGS,
                preds: UNIFORM_PREDS,
            }
        } else {
            Uniform::default()
        },
        launch,
        span: Span::default(),
    };
    (kernel, grid, block)
}

/// Runs `kernel` on `runner` from fresh memory seeded by `seed`; returns the outcome and the
/// whole global memory image.
fn run(
    kernel: &Kernel,
    info: &valid::KernelInfo,
    runner: &dyn atomjit::exec::WarpRunner,
    grid: [u32; 3],
    block: [u32; 3],
    seed: u64,
) -> (Result<LaunchStats, LaunchError>, Vec<u8>) {
    run_with_phases(
        kernel,
        info,
        runner,
        (grid, block),
        seed,
        LIGHT_PHASES_PER_QUANTUM,
    )
}

/// `run`, with at most `light_phases` barrier phases a quantum (`LaunchConfig::light_phases`;
/// 0: every round is a general one).
fn run_with_phases(
    kernel: &Kernel,
    info: &valid::KernelInfo,
    runner: &dyn atomjit::exec::WarpRunner,
    (grid, block): ([u32; 3], [u32; 3]),
    seed: u64,
    light_phases: u32,
) -> (Result<LaunchStats, LaunchError>, Vec<u8>) {
    let threads = u64::from(grid[0] * block[0] * block[1] * block[2]);
    let out_bytes = threads * OUT_WORDS * 4;
    // The surfaces the kernel declares, after the two buffers, filled with random bytes.
    let decls: Vec<&surface::SurfaceDecl> = kernel
        .launch
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Surface(d) => Some(&**d),
            ParamKind::Buffer { .. }
            | ParamKind::Scalar { .. }
            | ParamKind::SurfaceAddress { .. } => None,
        })
        .collect();
    let mut sizes = vec![DATA_BYTES, out_bytes];
    sizes.extend(decls.iter().map(|d| d.bytes()));
    let (global, addrs) = GlobalMemory::with_allocations(&sizes);
    let mut fill = SplitMix64::new(seed ^ 0x5f5f);
    for (d, &base) in decls.iter().zip(&addrs[2..]) {
        for i in 0..d.bytes().div_ceil(8) {
            // Small values now and then, so that INC/DEC/CAS and the signed comparisons hit
            // their interesting cases.
            let v = fill.next();
            let v = if i % 3 == 0 { v % 8 } else { v };
            let n = (d.bytes() - 8 * i).min(8) as usize;
            global.write(base + 8 * i, &v.to_le_bytes()[..n]);
        }
    }
    let headers: Vec<surface::SurfaceHeader> = decls
        .iter()
        .zip(&addrs[2..])
        .map(|(d, &base)| surface::SurfaceHeader::new(d, base))
        .collect();
    let mut init = SplitMix64::new(seed ^ 0xdada);
    for i in 0..DATA_BYTES / 8 {
        let v = init.next();
        // Keep some words small so INC/DEC/CAS hit their interesting cases.
        let v = if i % 3 == 0 { v % 8 } else { v };
        global.write(addrs[0] + i * 8, &v.to_le_bytes());
    }
    let mut cbank = vec![0u8; valid::cbank_bytes(&kernel.launch) as usize];
    for (i, v) in block.iter().chain(grid.iter()).enumerate() {
        cbank[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
    }
    cbank[PARAM_BASE as usize..PARAM_BASE as usize + 8].copy_from_slice(&addrs[0].to_le_bytes());
    cbank[PARAM_BASE as usize + 8..PARAM_BASE as usize + 16]
        .copy_from_slice(&addrs[1].to_le_bytes());
    // Each surface's handle: its index in the pool.
    for i in 0..headers.len() {
        let at = PARAM_BASE as usize + 16 + 8 * i;
        cbank[at..at + 8].copy_from_slice(&(i as u64).to_le_bytes());
    }
    let config = LaunchConfig {
        grid,
        block,
        shared_bytes: SHARED_BYTES,
        threads: 1,
        deterministic: true,
        timeout: Some(Duration::from_secs(5)),
        light_phases,
    };
    let result = launch(kernel, info, runner, &global, &cbank, &headers, &config);
    let mut image = vec![0u8; global.region().len() as usize];
    global.read(GLOBAL_BASE, &mut image);
    (result, image)
}

fn check_seed(seed: u64) -> Result<(), TestCaseError> {
    let (kernel, grid, block) = generate(seed);
    let info = match valid::validate(&kernel) {
        Ok(info) => info,
        Err(e) => {
            return Err(TestCaseError::fail(format!(
                "seed {seed:#x}: generated kernel is invalid: {e}"
            )))
        }
    };
    // Barrier phases in a tight loop (the default) for most seeds; every fourth runs general
    // rounds only, so that both scheduler paths compare the backends.
    let light_phases = if seed % 4 == 3 {
        0
    } else {
        LIGHT_PHASES_PER_QUANTUM
    };
    let shape = (grid, block);
    let (want, want_mem) = run_with_phases(
        &kernel,
        &info,
        &Interpreter::new(),
        shape,
        seed,
        light_phases,
    );
    // The kernel as one function, and split into chunks of a few instructions so that every
    // kind of control transfer also crosses functions (`Continue`).
    // The chunked kernel is also compiled on three threads (`compile_chunked_on`): the code
    // generated in parallel must behave as the sequential code does.
    // Warp aggregation is compiled in every setting: off, proven addresses only (the
    // default), and with the run-time address test, whole and chunked.
    let small = [1, 2, 3, 5, 8][seed as usize % 5];
    // SIMD lanes and running past divergent branches are on in all but the first setting.
    for (chunk_insts, threads, warp_aggregation, simd) in [
        (usize::MAX, 1, Aggregation::Off, false),
        (usize::MAX, 1, Aggregation::Proven, true),
        (small, 1, Aggregation::Runtime, true),
        (small, 3, Aggregation::Proven, true),
    ] {
        let options = jit::JitOptions {
            chunk_insts,
            threads,
            warp_aggregation,
            simd,
            splits: simd,
        };
        let jit_kernel = jit::compile_with(&kernel, &info, options)
            .map_err(|e| TestCaseError::fail(format!("seed {seed:#x}: {e}")))?;
        let (got, got_mem) =
            run_with_phases(&kernel, &info, &jit_kernel, shape, seed, light_phases);
        let mode = format!(
            "chunks of {chunk_insts} on {threads} compile thread(s), warp aggregation {warp_aggregation:?}, SIMD lanes and splits {simd}, light phases {light_phases}"
        );
        compare(seed, &mode, &kernel, &want, &want_mem, &got, &got_mem)?;
    }
    Ok(())
}

/// The interpreter's outcome and memory image against the JIT's.
fn compare(
    seed: u64,
    mode: &str,
    kernel: &Kernel,
    want: &Result<LaunchStats, LaunchError>,
    want_mem: &[u8],
    got: &Result<LaunchStats, LaunchError>,
    got_mem: &[u8],
) -> Result<(), TestCaseError> {
    // The same schedule too: a backend's shortcuts (runs of warps, fresh CTAs, running past a
    // divergent branch) must leave the scheduler's decisions exactly as they were.
    let schedule = |s: &LaunchStats| {
        (
            s.quanta,
            s.yields,
            s.divergences,
            s.reconvergences,
            s.dissolved_joins,
            s.barrier_releases,
            s.spins,
        )
    };
    let describe = |r: &Result<LaunchStats, LaunchError>| match r {
        Ok(s) => format!("ok {:?}, schedule {:?}", s.stats, schedule(s)),
        Err(e) => format!("{e}"),
    };
    let same_outcome = match (want, got) {
        (Ok(a), Ok(b)) => a.stats == b.stats && schedule(a) == schedule(b),
        (Err(LaunchError::Trap(a)), Err(LaunchError::Trap(b))) => a == b,
        _ => false,
    };
    if !same_outcome {
        return Err(TestCaseError::fail(format!(
            "seed {seed:#x}, {mode}: outcomes differ\n interp: {}\n jit:    {}\n{}",
            describe(want),
            describe(got),
            dump(kernel)
        )));
    }
    if let Some(i) = (0..want_mem.len()).find(|&i| want_mem[i] != got_mem[i]) {
        let word = i / 4 * 4;
        let w = |m: &[u8]| u32::from_le_bytes(m[word..word + 4].try_into().unwrap());
        return Err(TestCaseError::fail(format!(
            "seed {seed:#x}, {mode}: memory differs first at arena offset {word:#x} (out word {}): interp {:#010x}, jit {:#010x}\n{}",
            (word as i64 - DATA_BYTES.next_multiple_of(256) as i64) / 4,
            w(want_mem),
            w(got_mem),
            dump(kernel)
        )));
    }
    Ok(())
}

fn dump(kernel: &Kernel) -> String {
    kernel
        .insts
        .iter()
        .enumerate()
        .map(|(i, inst)| format!("  {i:3}: {:?} {:?}\n", inst.guard, inst.op))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn interpreter_and_jit_agree(seed in any::<u64>()) {
        if let Ok(only) = std::env::var("ATOMJIT_DIFF_SEED") {
            let only = u64::from_str_radix(only.trim_start_matches("0x"), 16).expect("ATOMJIT_DIFF_SEED is hex");
            check_seed(only)?;
        } else {
            check_seed(seed)?;
        }
    }
}

/// The generator is worth its cases: over a fixed set of seeds most kernels finish, some trap,
/// and every atomic op of the tables, CAS failures and SPIN fast-fails all occur.
#[test]
fn generated_kernels_cover_traps_and_every_atomic_op() {
    let mut finished = 0;
    let mut trapped = 0;
    let mut total = atomjit::exec::Stats::default();
    for seed in 0..150u64 {
        let (kernel, grid, block) = generate(seed);
        let info = valid::validate(&kernel).expect("generated kernels are valid");
        let compiled = jit::compile(&kernel, &info).expect("generated kernels compile");
        match run(&kernel, &info, &compiled, grid, block, seed).0 {
            Ok(stats) => {
                finished += 1;
                total.add(&stats.stats);
            }
            Err(LaunchError::Trap(t)) => {
                if std::env::var_os("ATOMJIT_DIFF_VERBOSE").is_some() {
                    eprintln!("seed {seed}: {t}");
                }
                trapped += 1
            }
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    assert!(finished >= 100, "{finished} of 150 finished");
    let splits = (0..150u64)
        .filter(|&seed| {
            let insts = generate(seed).0.insts;
            insts.iter().any(|i| matches!(i.op, Op::WarpSplit { .. }))
        })
        .count();
    assert!(splits >= 5, "only {splits} of 150 kernels split a warp");
    assert!(trapped >= 3, "only {trapped} of 150 trapped");
    for op in [
        AtomicOp::Add,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Exch,
        AtomicOp::Cas,
        AtomicOp::Cast,
    ] {
        assert!(total.atomics[op.index()] > 0, "{op} never ran");
    }
    assert!(
        total.cas_failures > 0 && total.spin_fast_fails > 0,
        "{total:?}"
    );
}

/// Whether `insts[i]` is a global atomic whose address is the same for every lane: the
/// `uniform_global_address` pattern (a constant offset moved into R7, added to R2:R3), or
/// an invariant base register plus an immediate.
fn same_address_atomic(insts: &[Inst], i: usize) -> Option<(AtomicOp, Ty)> {
    let Op::Atomic(a) = &insts[i].op else {
        return None;
    };
    let uniform_offset = i >= 2
        && matches!(
            insts[i - 2].op,
            Op::Mov {
                dst: Reg(7),
                src: Operand::Imm(_),
                ..
            }
        );
    // Or a warp-invariant base register (`INV_DATA`, `INV_DATA_OFF`).
    let invariant_base = matches!(
        a.access.addr,
        Address::Linear(LinearAddress { base: Some(Reg(b)), .. }) if b == INV_DATA || b == INV_DATA_OFF
    );
    (a.access.space == Space::Global && (uniform_offset || invariant_base))
        .then_some((a.op, a.access.ty))
}

/// Same-address (warp-aggregated) atomics are generated: over a fixed set of seeds every op
/// occurs with one address for all lanes, and add, min, max and CAS in both 32 and 64 bits
/// (the tables admit the 64-bit bit operations on global memory in fewer forms).
#[test]
fn generated_kernels_cover_same_address_atomics_of_every_op_and_size() {
    let mut seen = std::collections::BTreeSet::new();
    let mut kernels = 0;
    for seed in 0..400u64 {
        let insts = generate(seed).0.insts;
        let found: Vec<_> = (0..insts.len())
            .filter_map(|i| same_address_atomic(&insts, i))
            .collect();
        kernels += usize::from(!found.is_empty());
        seen.extend(found.iter().map(|&(op, ty)| (op.index(), ty.bits())));
    }
    assert!(
        kernels >= 40,
        "only {kernels} of 400 kernels have a same-address atomic"
    );
    for op in [
        AtomicOp::Add,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::Exch,
        AtomicOp::Cas,
    ] {
        assert!(
            seen.iter().any(|&(o, _)| o == op.index()),
            "no same-address {op}: {seen:?}"
        );
    }
    for op in [AtomicOp::Add, AtomicOp::Min, AtomicOp::Max, AtomicOp::Cas] {
        for bits in [32, 64] {
            assert!(
                seen.contains(&(op.index(), bits)),
                "no same-address {op} of {bits} bits: {seen:?}"
            );
        }
    }
}

/// Whether `inst` is an atomic that `Aggregation::Proven` aggregates in `kernel`: an integer
/// add/sub/and/or/xor/min/max on a global or generic address whose registers the validator
/// proves warp-invariant; with whether its operand is invariant too.
fn proven_aggregated(invariant: &[bool], inst: &Inst) -> Option<(AtomicOp, Ty, bool)> {
    let Op::Atomic(a) = &inst.op else {
        return None;
    };
    let op_ok = matches!(
        a.op,
        AtomicOp::Add
            | AtomicOp::Sub
            | AtomicOp::And
            | AtomicOp::Or
            | AtomicOp::Xor
            | AtomicOp::Min
            | AtomicOp::Max
    );
    let ty_ok = matches!(
        a.access.ty,
        Ty::U32 | Ty::S32 | Ty::B32 | Ty::U64 | Ty::S64 | Ty::B64
    );
    let words = a.access.ty.regs();
    let inv = |r: Reg, n: u16| (0..n).all(|w| invariant[usize::from(r.word(w).0)]);
    let Address::Linear(LinearAddress {
        base: Some(base),
        base_bits: 64,
        ..
    }) = a.access.addr
    else {
        return None;
    };
    let shape_ok = !a.spin && a.access.vector == 1 && a.src2.is_none();
    let space_ok = matches!(a.access.space, Space::Global | Space::Generic);
    let operand_inv = match a.src {
        Operand::Reg(r) => inv(r, words),
        Operand::Imm(_) | Operand::Const { .. } => true,
    };
    (op_ok && ty_ok && shape_ok && space_ok && inv(base, 2)).then_some((
        a.op,
        a.access.ty,
        operand_inv,
    ))
}

/// The proven aggregation fires in generated kernels: over a fixed set of seeds, a good share
/// of kernels have an atomic whose address the validator proves warp-invariant and whose op
/// aggregates, every aggregable op occurs, add/min/max in both sizes, and with invariant
/// operands as well as per-lane ones; and non-aggregable ops (CAS, exchange) occur on
/// invariant addresses too (they stay per lane).
#[test]
fn generated_kernels_cover_atomics_on_proven_invariant_addresses() {
    let mut kernels = 0;
    let mut seen = std::collections::BTreeSet::new();
    let mut operands = [0usize; 2];
    let mut other_ops = std::collections::BTreeSet::new();
    let n = 400u64;
    for seed in 0..n {
        let kernel = generate(seed).0;
        let info = valid::validate(&kernel).expect("generated kernels are valid");
        let inv = info.invariant();
        assert!(
            [
                INV_DATA,
                INV_DATA + 1,
                INV_DATA_OFF,
                INV_DATA_OFF + 1,
                INV_VALUE,
                INV_PAIR
            ]
            .iter()
            .all(|&r| inv[usize::from(r)]),
            "seed {seed}: the prologue's registers are invariant"
        );
        assert!(!inv[0] && !inv[8], "seed {seed}: lane values are not");
        let found: Vec<_> = kernel
            .insts
            .iter()
            .filter_map(|i| proven_aggregated(inv, i))
            .collect();
        kernels += usize::from(!found.is_empty());
        for &(op, ty, operand_inv) in &found {
            seen.insert((op.index(), ty.bits()));
            operands[usize::from(operand_inv)] += 1;
        }
        for i in &kernel.insts {
            if let Op::Atomic(a) = &i.op {
                if let Address::Linear(LinearAddress { base: Some(b), .. }) = a.access.addr {
                    if inv[usize::from(b.0)] && matches!(a.op, AtomicOp::Cas | AtomicOp::Exch) {
                        other_ops.insert(a.op.index());
                    }
                }
            }
        }
    }
    assert!(
        kernels * 8 >= n as usize,
        "only {kernels} of {n} kernels have a proven-aggregated atomic"
    );
    for op in [
        AtomicOp::Add,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
    ] {
        assert!(
            seen.iter().any(|&(o, _)| o == op.index()),
            "no proven-aggregated {op}: {seen:?}"
        );
    }
    for op in [AtomicOp::Add, AtomicOp::Min, AtomicOp::Max] {
        for bits in [32, 64] {
            assert!(
                seen.contains(&(op.index(), bits)),
                "no proven-aggregated {op} of {bits} bits: {seen:?}"
            );
        }
    }
    assert!(
        operands[0] >= 20 && operands[1] >= 20,
        "per-lane / invariant operands: {operands:?}"
    );
    assert_eq!(other_ops.len(), 2, "CAS and EXCH on invariant addresses");
}

/// The wide forms are generated: vector loads and stores, vector atomics of each element type,
/// and (on a host with a 16-byte compare-and-swap) the 128-bit exchange and compare-and-swap.
#[test]
fn generated_kernels_cover_vector_accesses_and_128_bit_atomics() {
    let mut vector_loads = 0;
    let mut vector_stores = 0;
    let mut vector_atomics = std::collections::BTreeSet::new();
    let mut b128 = std::collections::BTreeSet::new();
    for seed in 0..300u64 {
        let (kernel, _, _) = generate(seed);
        for inst in &kernel.insts {
            match &inst.op {
                Op::Load { access, .. } if access.is_vector() => vector_loads += 1,
                Op::Store { access, .. } if access.is_vector() => vector_stores += 1,
                Op::Atomic(a) if a.access.is_vector() => {
                    vector_atomics.insert((a.access.ty.name(), a.access.vector));
                }
                Op::Atomic(a) if a.access.ty == Ty::B128 => {
                    b128.insert((a.op.name(), a.access.space.name()));
                }
                _ => {}
            }
        }
    }
    assert!(vector_loads > 10 && vector_stores > 10);
    for shape in [("f32", 2), ("f32", 4), ("f16", 8), ("bf16x2", 4)] {
        assert!(
            vector_atomics.contains(&shape),
            "{shape:?}: {vector_atomics:?}"
        );
    }
    if atomjit::exec::memory::has_cas128() {
        assert_eq!(b128.len(), 4, "{b128:?}");
    }
}

/// Surface accesses are generated: atomics, loads and stores, in both layouts and every clamp
/// mode, with every handle form; some kernels trap on a surface, and the traps agree.
#[test]
fn generated_kernels_cover_surfaces() {
    use surface::{Clamp, SurfaceHandle, SurfaceLayout};
    let decls = surface_decls();
    let mut seen = std::collections::BTreeSet::new();
    let mut surface_traps = std::collections::BTreeSet::new();
    for seed in 0..200u64 {
        let (kernel, grid, block) = generate(seed);
        for inst in &kernel.insts {
            let (kind, access) = match &inst.op {
                Op::Atomic(a) => ("atomic", &a.access),
                Op::Load { access, .. } => ("load", access),
                Op::Store { access, .. } => ("store", access),
                _ => continue,
            };
            let Some(s) = access.addr.surface() else {
                continue;
            };
            seen.insert(format!("{kind} {:?}", s.clamp));
            if let SurfaceHandle::Bank { offset, .. } = s.handle {
                let layout = decls[((offset - PARAM_BASE - 16) / 8) as usize].layout;
                let name = match layout {
                    SurfaceLayout::Pitch { .. } => "pitch",
                    SurfaceLayout::BlockLinear { .. } => "blocklinear",
                };
                seen.insert(format!("{kind} {name}"));
            } else {
                seen.insert("register handle".to_string());
            }
            if s.format_sign {
                seen.insert("sd".to_string());
            }
            if !s.sparse.is_pt() {
                seen.insert("sparse predicate".to_string());
            }
        }
        if kernel.insts.iter().any(|i| match &i.op {
            Op::Atomic(a) => a.access.addr.surface().is_some(),
            _ => false,
        }) {
            let info = valid::validate(&kernel).expect("generated kernels are valid");
            if let (Err(LaunchError::Trap(t)), _) =
                run(&kernel, &info, &Interpreter::new(), grid, block, seed)
            {
                if t.surface.is_some() {
                    surface_traps.insert(format!("{:?}", t.reason));
                }
            }
        }
    }
    for kind in ["atomic", "load", "store"] {
        for what in ["pitch", "blocklinear"] {
            assert!(
                seen.contains(&format!("{kind} {what}")),
                "{kind} {what}: {seen:?}"
            );
        }
        for clamp in [Clamp::Nearest, Clamp::Ignore, Clamp::Trap] {
            assert!(
                seen.contains(&format!("{kind} {clamp:?}")),
                "{kind} {clamp:?}: {seen:?}"
            );
        }
    }
    for what in ["register handle", "sd", "sparse predicate"] {
        assert!(seen.contains(what), "{what}: {seen:?}");
    }
    assert!(
        surface_traps.contains("SurfaceOutOfBounds"),
        "{surface_traps:?}"
    );
}

/// Every lane takes a CAST lock in turn (once the retry branch is a spin exit, the winner's
/// critical section and barrier arrival run past it); a quarter of the lanes take it again
/// inside an `if` (a join is pending: nothing may run past a branch there); an if/else
/// (its branch pushes a join); a branch with no reconvergence point (the paths meet only at
/// their exits) splits every warp; and the lanes that took it, alone in their warp once the
/// others exited, reach another if/else. Running past divergent branches must leave the schedule,
/// the counters and memory exactly as the interpreter and the JIT without it have them, and
/// must actually happen.
const SPLITTING: &str = "
.kernel k
.buffer data u32[1] = 0
.buffer out u32[1] = 0
        MOV R4, RZ ;
        MOV R5, 0x1 ;
spin:
        ATOMS.CAST R0, [0x0], R4, R5 ;
        ISETP.EQ.U32.AND P0, PT, R0, RZ, PT ;
        @P0 BRA spin ;
        LDS R1, [0x4] ;
        IADD3 R1, R1, 0x1, RZ ;
        STS [0x4], R1 ;
        ATOMS.EXCH RZ, [0x0], RZ ;
        BAR.SYNC 0x0 ;
        S2R R6, SR_TID.X ;
        LOP3.LUT R7, R6, 0x3, RZ, 0xc0, !PT ;
        ISETP.NE.AND P1, PT, R7, RZ, PT ;
        @P1 BRA skip ;
again:
        ATOMS.CAST R0, [0x0], R4, R5 ;
        ISETP.EQ.U32.AND P0, PT, R0, RZ, PT ;
        @P0 BRA again ;
        LDS R1, [0x10] ;
        IADD3 R1, R1, R6, RZ ;
        STS [0x10], R1 ;
        ATOMS.EXCH RZ, [0x0], RZ ;
skip:
        BAR.SYNC 0x0 ;
        MOV R2, c[0x0][0x168] ;
        MOV R3, c[0x0][0x16c] ;
        IMAD.WIDE.U32 R2, R6, 0x4, R2 ;
        LOP3.LUT R12, R6, 0x1, RZ, 0xc0, !PT ;
        ISETP.NE.AND P2, PT, R12, RZ, PT ;
        @P2 BRA big ;
        IADD3 R10, R6, 0x5, RZ ;
        BRA joined ;
big:
        IADD3 R10, R6, 0x9, RZ ;
joined:
        @P1 BRA odd ;
        ATOMS.ADD R8, [0x8], R10 ;
        STG.E [R2.64], R8 ;
        EXIT ;
odd:
        LOP3.LUT R13, R6, 0x2, RZ, 0xc0, !PT ;
        ISETP.NE.AND P3, PT, R13, RZ, PT ;
        @P3 BRA odd_big ;
        IADD3 R10, R10, 0x3, RZ ;
        BRA odd_joined ;
odd_big:
        IADD3 R10, R10, 0x7, RZ ;
odd_joined:
        ATOMS.INC R8, [0xc], R10 ;
        LDS R9, [0x4] ;
        IADD3 R8, R8, R9, RZ ;
        LDS R9, [0x10] ;
        IADD3 R8, R8, R9, RZ ;
        STG.E [R2.64], R8 ;
        EXIT ;
";

#[test]
fn running_past_divergent_branches_keeps_the_schedule_exactly() {
    let program =
        atomjit::front::parse("splitting.s", SPLITTING, Dialect::Sass).expect("the program parses");
    let kernel = &program.kernels[0];
    let info = valid::validate(kernel).expect("the program is valid");
    for (grid, block) in [([3, 1, 1], [128, 1, 1]), ([2, 1, 1], [96, 1, 1])] {
        let (want, want_mem) = run(kernel, &info, &Interpreter::new(), grid, block, 7);
        let stats = want.as_ref().expect("the interpreter runs it");
        assert_eq!(stats.splits, 0, "the interpreter never runs past a branch");
        for splits in [false, true] {
            let options = jit::JitOptions {
                splits,
                ..jit::JitOptions::default()
            };
            let jit_kernel = jit::compile_with(kernel, &info, options).expect("it compiles");
            let (got, got_mem) = run(kernel, &info, &jit_kernel, grid, block, 7);
            let mode = format!("block {block:?}, splits {splits}");
            compare(7, &mode, kernel, &want, &want_mem, &got, &got_mem)
                .unwrap_or_else(|e| panic!("{e}"));
            let ran_past = got.as_ref().map(|s| s.splits).unwrap_or_default();
            if splits {
                // Nearly every hand-over of the lock (one per lane after the first of each
                // warp) and every split at the `odd` branch.
                let lanes = u64::from(grid[0] * block[0]);
                assert!(
                    ran_past >= lanes / 2,
                    "{mode}: {ran_past} splits of {lanes} lanes"
                );
            } else {
                assert_eq!(ran_past, 0, "{mode}");
            }
        }
    }
}

/// Whether the JIT compiles `kernel` with four-lane vector code somewhere (`simd/`).
fn has_vector_code(kernel: &Kernel, info: &valid::KernelInfo) -> bool {
    jit::dump_clif(kernel, info)
        .expect("it compiles")
        .contains("i32x4")
}

/// Runs the SASS program `source` (one kernel writing one word of `out` per thread) on the
/// interpreter and the JIT in each of `shapes` (1-D grids and blocks): checks the interpreter's
/// word of every thread against `expected(cta, tid)`, what the source says it computes, then
/// the JIT's outcome and memory against the interpreter's. With `vector`, the JIT must build
/// vector code for it (what the test is about).
fn check_sass_words(
    name: &str,
    source: &str,
    vector: bool,
    shapes: &[([u32; 3], [u32; 3])],
    seed: u64,
    expected: impl Fn(u32, u32) -> u32,
) {
    let program = atomjit::front::parse(name, source, Dialect::Sass).expect("the program parses");
    let kernel = &program.kernels[0];
    let info = valid::validate(kernel).expect("the program is valid");
    if vector {
        assert!(has_vector_code(kernel, &info), "{name}: no vector code");
    }
    let jit_kernel = jit::compile(kernel, &info).expect("it compiles");
    let out = DATA_BYTES.next_multiple_of(256) as usize;
    for &(grid, block) in shapes {
        let (want, want_mem) = run(kernel, &info, &Interpreter::new(), grid, block, seed);
        want.as_ref().expect("the interpreter runs it");
        for cta in 0..grid[0] {
            for tid in 0..block[0] {
                let at = out + 4 * (cta * block[0] + tid) as usize;
                let word = u32::from_le_bytes(want_mem[at..at + 4].try_into().unwrap());
                assert_eq!(
                    word,
                    expected(cta, tid),
                    "{name}, block {block:?}: cta {cta} thread {tid}"
                );
            }
        }
        let (got, got_mem) = run(kernel, &info, &jit_kernel, grid, block, seed);
        let mode = format!("{name}, block {block:?}");
        compare(seed, &mode, kernel, &want, &want_mem, &got, &got_mem)
            .unwrap_or_else(|e| panic!("{e}"));
    }
}

/// A global index made from `SR_CTAID.X` as NVIDIA's compilers write it (`IMAD R4, R3,
/// c[0x0][0x0], R0`), with the CTA index's register written per lane later, so that its `S2R`
/// is not a hoisted invariant writer but an instruction of a vector region (a splat of the
/// context's field), and a `NOP` inside the next region. Several CTAs, whole and partial
/// warps.
const CTA_INDEX: &str = "
.kernel k
.buffer data u32[1] = 0
.buffer out u32[1] = 0
        S2R R0, SR_TID.X ;
        S2R R3, SR_CTAID.X ;
        IMAD R4, R3, c[0x0][0x0], R0 ;
        IMAD.WIDE R10, R4, 0x4, c[0x0][0x168] ;
        IADD3 R7, R3, 0x100, R0 ;
        STG.E [R10.64], R7 ;
        IMAD.SHL.U32 R3, R0, 0x4, RZ ;
        NOP ;
        IMAD.WIDE R10, R4, 0x4, c[0x0][0x168] ;
        LDG.E R8, [R10.64] ;
        IADD3 R8, R8, R3, RZ ;
        STG.E [R10.64], R8 ;
        EXIT ;
";

#[test]
fn the_cta_index_in_vector_code_is_the_same_for_every_lane() {
    // What the source says: thread `g = ctaid * ntid + tid` writes `ctaid + 0x100 + tid`, then
    // adds `tid * 4`, at word `g` of `out`.
    check_sass_words(
        "cta_index.s",
        CTA_INDEX,
        true,
        &[([5, 1, 1], [128, 1, 1]), ([3, 1, 1], [40, 1, 1])],
        3,
        |cta, tid| cta + 0x100 + tid + tid * 4,
    );
}

/// 64-bit comparisons as ptxas writes them: `ISETP` on the low words, then `ISETP.EX` on the
/// high words with the low words' result as its chain, for every ordering, unsigned and signed,
/// in a region that runs as vector code. The high words tie in a quarter of the lanes, where
/// the chain decides.
const WIDE_COMPARE: &str = "
.kernel k
.buffer data u32[1] = 0
.buffer out u32[1] = 0
        S2R R0, SR_TID.X ;
        LOP3.LUT R2, R0, 0x3, RZ, 0xc0, !PT ;
        SHF.R.U32.HI R3, RZ, 0x2, R0 ;
        LOP3.LUT R3, R3, 0x3, RZ, 0xc0, !PT ;
        IADD3 R3, R3, -0x1, RZ ;
        MOV R4, 0x2 ;
        MOV R5, 0x1 ;
        MOV R10, RZ ;
        ISETP.LT.U32.AND P0, PT, R2, R4, PT ;
        ISETP.LT.U32.AND.EX P1, PT, R3, R5, PT, P0 ;
        SEL R7, RZ, 0x1, !P1 ;
        LOP3.LUT R10, R10, R7, RZ, 0xfc, !PT ;
        ISETP.LE.U32.AND P0, PT, R2, R4, PT ;
        ISETP.LE.U32.AND.EX P1, PT, R3, R5, PT, P0 ;
        SEL R7, RZ, 0x2, !P1 ;
        LOP3.LUT R10, R10, R7, RZ, 0xfc, !PT ;
        ISETP.GT.U32.AND P0, PT, R2, R4, PT ;
        ISETP.GT.U32.AND.EX P1, PT, R3, R5, PT, P0 ;
        SEL R7, RZ, 0x4, !P1 ;
        LOP3.LUT R10, R10, R7, RZ, 0xfc, !PT ;
        ISETP.GE.U32.AND P0, PT, R2, R4, PT ;
        ISETP.GE.U32.AND.EX P1, PT, R3, R5, PT, P0 ;
        SEL R7, RZ, 0x8, !P1 ;
        LOP3.LUT R10, R10, R7, RZ, 0xfc, !PT ;
        ISETP.EQ.U32.AND P0, PT, R2, R4, PT ;
        ISETP.EQ.U32.AND.EX P1, PT, R3, R5, PT, P0 ;
        SEL R7, RZ, 0x10, !P1 ;
        LOP3.LUT R10, R10, R7, RZ, 0xfc, !PT ;
        ISETP.NE.U32.AND P0, PT, R2, R4, PT ;
        ISETP.NE.U32.AND.EX P1, PT, R3, R5, PT, P0 ;
        SEL R7, RZ, 0x20, !P1 ;
        LOP3.LUT R10, R10, R7, RZ, 0xfc, !PT ;
        ISETP.LT.U32.AND P0, PT, R2, R4, PT ;
        ISETP.LT.AND.EX P1, PT, R3, R5, PT, P0 ;
        SEL R7, RZ, 0x40, !P1 ;
        LOP3.LUT R10, R10, R7, RZ, 0xfc, !PT ;
        ISETP.GE.U32.AND P0, PT, R2, R4, PT ;
        ISETP.GE.AND.EX P1, PT, R3, R5, PT, P0 ;
        SEL R7, RZ, 0x80, !P1 ;
        LOP3.LUT R10, R10, R7, RZ, 0xfc, !PT ;
        ISETP.LT.U32.AND P0, PT, R2, R4, PT ;
        ISETP.NE.AND P2, PT, R2, RZ, PT ;
        ISETP.GE.U32.OR.EX P3, P4, R3, R5, P2, !P0 ;
        SEL R7, RZ, 0x100, !P3 ;
        LOP3.LUT R10, R10, R7, RZ, 0xfc, !PT ;
        SEL R7, RZ, 0x200, !P4 ;
        LOP3.LUT R10, R10, R7, RZ, 0xfc, !PT ;
        IMAD.WIDE.U32 R12, R0, 0x4, c[0x0][0x168] ;
        STG.E [R12.64], R10 ;
        EXIT ;
";

#[test]
fn wide_comparisons_in_vector_code_follow_the_chain_on_a_tie() {
    let b = (1i64 << 32) | 2;
    // Two whole warps, and a warp and a partial one (the chunk loop for any mask).
    check_sass_words(
        "wide_compare.s",
        WIDE_COMPARE,
        true,
        &[([1, 1, 1], [64, 1, 1]), ([1, 1, 1], [40, 1, 1])],
        5,
        |_, tid| {
            // a = (hi, lo) with lo = tid & 3 and hi = ((tid >> 2) & 3) - 1.
            let (lo, hi) = (i64::from(tid & 3), i64::from((tid >> 2) & 3) - 1);
            let a = (hi << 32) | lo;
            let (ua, ub) = (a as u64, b as u64);
            // The last two: `a >= b` chained on the low words' `!(lo < b.lo)`, that is on
            // `lo >= b.lo` (the same 64-bit `>=`), or'ed with `lo != 0`; and its second
            // destination, the 64-bit `a < b` or'ed with `lo != 0`.
            let bits = [
                ua < ub,
                ua <= ub,
                ua > ub,
                ua >= ub,
                ua == ub,
                ua != ub,
                a < b,
                a >= b,
                ua >= ub || lo != 0,
                ua < ub || lo != 0,
            ];
            bits.iter()
                .enumerate()
                .fold(0u32, |m, (i, &on)| m | (u32::from(on) << i))
        },
    );
}

/// `VOTEU.ANY` into a uniform register: under a guard no lane passes (the register keeps its
/// value), and in a warp where every lane passes and one where none does.
const UNIFORM_VOTE: &str = "
.kernel k
.buffer data u32[1] = 0
.buffer out u32[1] = 0
        S2R R0, SR_TID.X ;
        UMOV UR4, 0x7 ;
        ISETP.GE.AND P0, PT, R0, 0x100, PT ;
        ISETP.LT.AND P1, PT, R0, 0x20, PT ;
        @P0 VOTEU.ANY UR4, UPT, PT ;
        MOV R5, UR4 ;
        @P1 VOTEU.ANY UR5, UPT, P1 ;
        MOV R6, UR5 ;
        IADD3 R7, R5, R6, RZ ;
        IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x168] ;
        STG.E [R2.64], R7 ;
        EXIT ;
";

#[test]
fn a_uniform_vote_writes_its_ballot_only_when_a_lane_executes() {
    // UR4 keeps 7; warp 0's UR5 is its ballot (every lane), warp 1's keeps its zero.
    check_sass_words(
        "uniform_vote.s",
        UNIFORM_VOTE,
        false,
        &[([1, 1, 1], [64, 1, 1])],
        9,
        |_, tid| {
            if tid < 32 {
                7u32.wrapping_add(u32::MAX)
            } else {
                7
            }
        },
    );
}

/// How many seeds the chain coverage looks at: absolute shared atomics of one op are rare
/// (600 seeds have missed one), and generating a kernel is cheap.
const CHAIN_SEEDS: u64 = 2000;

/// The generator covers what the JIT runs as one chain on a shared word for the whole warp
/// (`translate/memory.rs`, `private_chain`): 32- and 64-bit single-element atomics on an
/// absolute (so warp-invariant) shared address, of every op the SASS shared table has, so that
/// `check_seed` compares each with the interpreter's lane-by-lane execution.
#[test]
fn generated_kernels_cover_whole_warp_chains_on_a_shared_word() {
    let mut seen = std::collections::BTreeSet::new();
    for seed in 0..CHAIN_SEEDS {
        let kernel = generate(seed).0;
        for inst in &kernel.insts {
            if let Op::Atomic(a) = &inst.op {
                let absolute = matches!(
                    a.access.addr,
                    Address::Linear(LinearAddress { base: None, .. })
                );
                if a.access.space == Space::Shared
                    && absolute
                    && !a.spin
                    && a.access.vector == 1
                    && matches!(a.access.ty.bytes(), 4 | 8)
                {
                    seen.insert((format!("{:?}", a.op), a.access.ty.bytes()));
                }
            }
        }
    }
    let table = valid::table(Dialect::Sass, Space::Shared).expect("SASS has a shared table");
    for row in table.rows {
        assert!(
            seen.iter().any(|(op, _)| *op == format!("{:?}", row.op)),
            "no chained {:?} in {CHAIN_SEEDS} seeds: {seen:?}",
            row.op
        );
    }
    assert!(
        seen.iter().any(|&(_, bytes)| bytes == 8),
        "no 64-bit chain: {seen:?}"
    );
}

/// The generator covers what SIMD lanes run four lanes to one 16-byte CAS
/// (`jit/translate/simd/atomic.rs`): 32-bit integer atomics of every op that path takes and
/// the `f32` add (PTX and SASS have no `f32` min or max atomic; `src/jit/tests.rs` covers
/// those, which vISA's `fmin`/`fmax` reach), on
/// global memory through global and generic addresses, whose lanes name adjacent words
/// (`Gen::lane_global_address`), from 16-byte aligned offsets and from others, so that
/// `check_seed` compares both the CAS path and the lane-by-lane one with the interpreter.
#[test]
fn generated_kernels_cover_four_lane_atomics_on_adjacent_words() {
    let mut seen = std::collections::BTreeSet::new();
    let (mut built, mut built_f32) = (0, 0);
    for seed in 0..600u64 {
        let kernel = generate(seed).0;
        let insts = &kernel.insts;
        let (mut candidate, mut f32_candidate) = (false, false);
        for (i, inst) in insts.iter().enumerate() {
            let Op::Atomic(a) = &inst.op else { continue };
            let word32 = matches!(a.access.ty, Ty::U32 | Ty::S32 | Ty::B32 | Ty::F32);
            let Address::Linear(LinearAddress {
                base: Some(Reg(18)),
                ..
            }) = a.access.addr
            else {
                continue;
            };
            if !word32 || a.access.vector != 1 || a.spin {
                continue;
            }
            // The last write of R18 before the atomic, and the two instructions before it:
            // the lane-indexed address.
            let Some(w) = insts[..i].iter().rposition(|x| x.op.writes_reg(Reg(18))) else {
                continue;
            };
            let offset = match (&insts[w.saturating_sub(2)..=w], w >= 2) {
                (
                    [Inst {
                        op:
                            Op::ReadSpecial {
                                sr: SpecialReg::LaneId,
                                dst: Reg(7),
                            },
                        ..
                    }, Inst {
                        op:
                            Op::Imad {
                                mode: ImadMode::Lo,
                                dst: Reg(7),
                                c:
                                    Src {
                                        operand: Operand::Imm(offset),
                                        ..
                                    },
                                ..
                            },
                        ..
                    }, Inst {
                        op:
                            Op::Imad {
                                mode: ImadMode::Wide,
                                ..
                            },
                        ..
                    }],
                    true,
                ) => *offset,
                _ => continue,
            };
            seen.insert((
                format!(
                    "{:?}{}",
                    a.op,
                    if a.access.ty == Ty::F32 { ".f32" } else { "" }
                ),
                format!("{:?}", a.access.space),
                offset % 16 == 0,
            ));
            candidate = true;
            f32_candidate |= a.access.ty == Ty::F32;
        }
        // The JIT builds the CAS path for it (Cranelift prints the 16-byte CAS's operands as
        // the only i128 bitcasts).
        if candidate {
            let info = valid::validate(&kernel).expect("generated kernels validate");
            let clif = jit::dump_clif(&kernel, &info).expect("generated kernels compile");
            built += usize::from(clif.contains("bitcast.i128"));
            // The four-lane float formula bitcasts its operands to `f32x4`.
            built_f32 += usize::from(f32_candidate && clif.contains("bitcast.f32x4"));
        }
    }
    assert!(
        built >= 10,
        "only {built} kernels build the 16-byte CAS path"
    );
    for op in [
        AtomicOp::Add,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Exch,
    ] {
        assert!(
            seen.iter().any(|(o, _, _)| *o == format!("{op:?}")),
            "no four-lane {op:?} in 600 seeds: {seen:?}"
        );
    }
    for space in ["Global", "Generic"] {
        for aligned in [false, true] {
            assert!(
                seen.iter().any(|(_, s, a)| s == space && *a == aligned),
                "no {space} four-lane atomic with aligned = {aligned}: {seen:?}"
            );
        }
    }
    assert!(
        seen.iter().any(|(o, _, _)| o == "Add.f32") && built_f32 > 0,
        "no four-lane f32 add built in 600 seeds: {seen:?}"
    );
}
