//! Operand rules: register and predicate ranges, SASS pairs, constant reads, types, spaces.

use super::*;
use atomjit::ir::{
    Address, AtomicOp, BinOp, CmpOp, LinearAddress, Op, Operand, Pred, PredSrc, Round, ShfInst,
    Space, Src, SrcMod, Ty, UnOp,
};
use atomjit::valid::rules;

#[test]
fn registers_must_be_below_num_regs() {
    let k = sass()
        .num_regs(5)
        .op(mov(Ty::U32, 4, reg(3)))
        .op(exit())
        .build();
    valid(&k);
    let k = sass()
        .num_regs(5)
        .op(mov(Ty::U32, 5, reg(3)))
        .op(exit())
        .build();
    assert_only(&errors(&k), 0, rules::REG_RANGE, "destination register R5");
    let k = sass()
        .num_regs(5)
        .op(mov(Ty::U32, 0, reg(7)))
        .op(exit())
        .build();
    assert_only(&errors(&k), 0, rules::REG_RANGE, "source register R7");
    // The high word of a pair counts: R4:R5 needs 6 registers.
    let k = sass()
        .num_regs(5)
        .op(mov(Ty::U64, 4, reg(RZ)))
        .op(exit())
        .build();
    assert_only(&errors(&k), 0, rules::REG_RANGE, "destination register R5");
    // RZ is not a register slot, not even as a pair.
    let k = sass()
        .num_regs(0)
        .op(mov(Ty::U64, RZ, reg(RZ)))
        .op(exit())
        .build();
    valid(&k);
    // Address bases count too.
    let k = sass()
        .num_regs(2)
        .op(load(Space::Global, Ty::U32, 0, wide(2, 0)))
        .op(exit())
        .build();
    assert_only(&errors(&k), 0, rules::REG_RANGE, "source register R3");
}

#[test]
fn predicates_must_be_below_num_preds() {
    let k = sass().num_preds(1).guarded(at(0), nop()).op(exit()).build();
    valid(&k);
    let k = sass().num_preds(1).guarded(at(1), nop()).op(exit()).build();
    assert_only(&errors(&k), 0, rules::PRED_RANGE, "predicate P1");
    let k = sass()
        .num_preds(1)
        .op(isetp(CmpOp::Eq, Ty::U32, 2, reg(0), imm(0)))
        .op(exit())
        .build();
    assert_only(&errors(&k), 0, rules::PRED_RANGE, "predicate P2");
    // PT needs no predicate register.
    let k = sass()
        .num_preds(0)
        .op(isetp(CmpOp::Eq, Ty::U32, Pred::PT.0, reg(0), imm(0)))
        .op(exit())
        .build();
    valid(&k);
}

#[test]
fn sass_pairs_start_at_even_registers() {
    // Mov of a 64-bit value.
    let errs = errors(&sass1(mov(Ty::U64, 3, reg(4))));
    assert_only(
        &errs,
        0,
        rules::SASS_PAIR_ALIGNED,
        "misaligned 64-bit destination pair R3",
    );
    let errs = errors(&sass1(mov(Ty::U64, 2, reg(5))));
    assert_only(
        &errs,
        0,
        rules::SASS_PAIR_ALIGNED,
        "misaligned 64-bit source pair R5",
    );
    valid(&sass1(mov(Ty::U64, 2, reg(4))));
    // IMAD.WIDE: dst and c are pairs, a and b are not.
    let errs = errors(&sass1(imad_wide(1, reg(3), reg(5), reg(6))));
    assert_only(
        &errs,
        0,
        rules::SASS_PAIR_ALIGNED,
        "misaligned 64-bit destination pair R1",
    );
    let errs = errors(&sass1(imad_wide(2, reg(3), reg(5), reg(7))));
    assert_only(
        &errs,
        0,
        rules::SASS_PAIR_ALIGNED,
        "misaligned 64-bit source pair R7",
    );
    valid(&sass1(imad_wide(2, reg(3), reg(5), reg(RZ))));
    // 64-bit loads and stores, and 64-bit address bases.
    let errs = errors(&sass1(load(Space::Shared, Ty::U64, 1, shared(4, 0))));
    assert_only(&errs, 0, rules::SASS_PAIR_ALIGNED, "destination pair R1");
    let errs = errors(&sass1(store(Space::Global, Ty::U64, reg(3), wide(4, 0))));
    assert_only(&errs, 0, rules::SASS_PAIR_ALIGNED, "source pair R3");
    let errs = errors(&sass1(load(Space::Global, Ty::U32, 0, wide(3, 0))));
    assert_only(&errs, 0, rules::SASS_PAIR_ALIGNED, "source pair R3");
    // 64-bit atomics: Rd.
    let errs = errors(&sass1(atoms(AtomicOp::Exch, Ty::U64, 1, shared(4, 0), 2)));
    assert_only(&errs, 0, rules::SASS_PAIR_ALIGNED, "destination pair R1");
    let errs = errors(&sass1(atoms(AtomicOp::Exch, Ty::U64, 0, shared(4, 0), 3)));
    assert_only(&errs, 0, rules::SASS_PAIR_ALIGNED, "source pair R3");
    valid(&sass1(atoms(AtomicOp::Exch, Ty::U64, RZ, shared(4, 0), 2)));
    // PTX registers are allocated by the front-end; pairs need no alignment there.
    let k = ptx().op(mov(Ty::U64, 3, reg(5))).op(exit()).build();
    valid(&k);
}

#[test]
fn constant_reads_are_bank0_aligned_and_inside() {
    // One buffer at 0x160..0x168 and a u32 scalar at 0x168..0x16c: the bank is 0x16c bytes.
    let kb = || sass().buffer("buf", Ty::U32, 16).scalar("n", Ty::U32, 5);
    for (op, ok) in [
        (mov(Ty::U32, 0, cbank(0x0)), true),
        (mov(Ty::U32, 0, cbank(0x14)), true),
        (mov(Ty::U32, 0, cbank(0x28)), true),
        (mov(Ty::U64, 0, cbank(0x160)), true),
        (mov(Ty::U32, 0, cbank(0x168)), true),
        (mov(Ty::U32, 0, cbank(0x16c)), false),
        (mov(Ty::U64, 0, cbank(0x168)), false),
    ] {
        let k = kb().op(op).op(exit()).build();
        if ok {
            valid(&k);
        } else {
            assert_only(
                &errors(&k),
                0,
                rules::CONST_OPERAND,
                "ends past the constant bank (0x16c bytes)",
            );
        }
    }
    let k = kb().op(mov(Ty::U32, 0, cbank(0x162))).op(exit()).build();
    assert_only(
        &errors(&k),
        0,
        rules::CONST_OPERAND,
        "4-byte read must be 4-byte aligned",
    );
    let k = kb().op(mov(Ty::U64, 0, cbank(0x164))).op(exit()).build();
    assert_only(
        &errors(&k),
        0,
        rules::CONST_OPERAND,
        "8-byte read must be 8-byte aligned",
    );
    let k = kb()
        .op(mov(Ty::U32, 0, Operand::Const { bank: 2, offset: 0 }))
        .op(exit())
        .build();
    assert_only(
        &errors(&k),
        0,
        rules::CONST_OPERAND,
        "the kernel has no constant bank 2",
    );
    // A kernel's other banks: reads inside, aligned, are valid; the bank's own size bounds them.
    let bank = |n: u8, len: usize| atomjit::ir::ConstBank {
        bank: n,
        bytes: vec![0; len],
    };
    let c2 = |offset: u32| Operand::Const { bank: 2, offset };
    for (op, problem) in [
        (mov(Ty::U32, 0, c2(0)), None),
        (mov(Ty::U32, 0, c2(8)), None),
        (mov(Ty::U64, 0, c2(0)), None),
        (
            mov(Ty::U32, 0, c2(12)),
            Some("c[0x2][0xc]: the 4-byte read ends past constant bank 2 (0xc bytes)"),
        ),
        (
            mov(Ty::U64, 0, c2(8)),
            Some("the 8-byte read ends past constant bank 2 (0xc bytes)"),
        ),
        (
            mov(Ty::U32, 0, c2(2)),
            Some("c[0x2][0x2]: a 4-byte read must be 4-byte aligned"),
        ),
        (
            mov(Ty::U32, 0, Operand::Const { bank: 3, offset: 0 }),
            Some("the kernel has no constant bank 3"),
        ),
    ] {
        let mut k = kb().op(op).op(exit()).build();
        k.launch.const_banks = vec![bank(2, 12)];
        match problem {
            None => {
                valid(&k);
            }
            Some(m) => assert_only(&errors(&k), 0, rules::CONST_OPERAND, m),
        }
    }
    // The banks are in increasing order, each once, and none is bank 0 (the launch's).
    for banks in [
        vec![bank(3, 4), bank(2, 4)],
        vec![bank(2, 4), bank(2, 4)],
        vec![bank(0, 4)],
    ] {
        let mut k = kb().op(exit()).build();
        k.launch.const_banks = banks;
        let e = errors(&k);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].rule, rules::CONST_OPERAND);
        assert!(
            e[0].message.contains("out of order, twice, or as bank 0"),
            "{e:?}"
        );
    }
    // Sources of any instruction are checked, e.g. the c of IMAD.WIDE (a 64-bit read).
    let k = kb()
        .op(imad_wide(2, reg(0), imm(4), cbank(0x164)))
        .op(exit())
        .build();
    assert_only(&errors(&k), 0, rules::CONST_OPERAND, "8-byte read");
}

#[test]
fn cbank_size_is_the_abi_area_then_the_parameters() {
    use atomjit::valid::cbank_bytes;
    let k = sass().build();
    assert_eq!(cbank_bytes(&k.launch), atomjit::ir::PARAM_BASE);
    let k = sass()
        .scalar("a", Ty::U8, 1)
        .scalar("b", Ty::U64, 1)
        .build();
    // a at 0x160, b aligned up to 0x168, ends at 0x170.
    assert_eq!(k.launch.params[1].cbank_offset, 0x168);
    assert_eq!(cbank_bytes(&k.launch), 0x170);
}

#[test]
fn branch_targets_are_instructions() {
    let k = sass().op(bra(2)).op(exit()).build();
    assert_only(
        &errors(&k),
        0,
        rules::BRANCH_TARGET,
        "branch target 2 is past the last instruction (1)",
    );
    let k = sass().op(bra(1)).op(exit()).build();
    valid(&k);
}

#[test]
fn shf_types() {
    let shf = |ty| {
        Op::Shf(ShfInst {
            left: false,
            wrap: false,
            high: true,
            ty,
            dst: r(0),
            lo: s(reg(1)),
            shift: s(imm(3)),
            hi: s(reg(2)),
        })
    };
    for ty in [Ty::U32, Ty::S32, Ty::U64, Ty::S64] {
        valid(&sass1(shf(ty)));
    }
    for ty in [Ty::U16, Ty::B32, Ty::F32] {
        assert_only(
            &errors(&sass1(shf(ty))),
            0,
            rules::SHF_TYPES,
            "must be U32, S32, U64 or S64",
        );
    }
}

#[test]
fn binary_type_legality() {
    for op in [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Min,
        BinOp::Max,
    ] {
        for ty in [Ty::U32, Ty::S64, Ty::F32, Ty::F64] {
            valid(&sass1(binary(op, ty, 0, reg(2), reg(4))));
        }
        for ty in [Ty::F16, Ty::BF16, Ty::F16x2] {
            assert_only(
                &errors(&sass1(binary(op, ty, 0, reg(2), reg(4)))),
                0,
                rules::FLOAT_TYPES,
                "not defined on",
            );
        }
    }
    for op in [
        BinOp::Rem,
        BinOp::Shl,
        BinOp::Shr,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::MulHi,
    ] {
        valid(&sass1(binary(op, Ty::S32, 0, reg(2), reg(4))));
        assert_only(
            &errors(&sass1(binary(op, Ty::F32, 0, reg(2), reg(4)))),
            0,
            rules::INT_OPS,
            "not defined on F32",
        );
    }
    valid(&sass1(binary(BinOp::MulWide, Ty::U32, 0, reg(2), reg(4))));
    assert_only(
        &errors(&sass1(binary(BinOp::MulWide, Ty::U64, 0, reg(2), reg(4)))),
        0,
        rules::MUL_WIDE,
        "mulwide",
    );
    let ftz_int = Op::Binary {
        op: BinOp::Add,
        ty: Ty::U32,
        dst: r(0),
        a: s(reg(1)),
        b: s(reg(2)),
        ftz: true,
    };
    assert_only(
        &errors(&sass1(ftz_int)),
        0,
        rules::FTZ_FLOAT_ONLY,
        ".FTZ on the integer type U32",
    );
    let ftz_f32 = Op::Binary {
        op: BinOp::Mul,
        ty: Ty::F32,
        dst: r(0),
        a: s(reg(1)),
        b: s(reg(2)),
        ftz: true,
    };
    valid(&sass1(ftz_f32));
}

#[test]
fn unary_type_legality() {
    for op in [UnOp::Not, UnOp::Popc, UnOp::Clz, UnOp::Brev] {
        valid(&sass1(unary(op, Ty::U32, 0, reg(2))));
        assert_only(
            &errors(&sass1(unary(op, Ty::F32, 0, reg(2)))),
            0,
            rules::INT_OPS,
            "not defined on F32",
        );
    }
    for op in [UnOp::Neg, UnOp::Abs] {
        valid(&sass1(unary(op, Ty::F64, 0, reg(2))));
        valid(&sass1(unary(op, Ty::S32, 0, reg(2))));
        assert_only(
            &errors(&sass1(unary(op, Ty::F16, 0, reg(2)))),
            0,
            rules::FLOAT_TYPES,
            "not defined on F16",
        );
    }
    // POPC of a 64-bit value reads a pair but writes one register.
    valid(&sass1(unary(UnOp::Popc, Ty::U64, 1, reg(2))));
}

#[test]
fn source_modifiers_match_the_type() {
    let with = |m| Src {
        operand: reg(2),
        modifier: m,
    };
    let fadd = |m| Op::Binary {
        op: BinOp::Add,
        ty: Ty::F32,
        dst: r(0),
        a: with(m),
        b: s(reg(3)),
        ftz: false,
    };
    for m in [SrcMod::None, SrcMod::Neg, SrcMod::Abs, SrcMod::NegAbs] {
        valid(&sass1(fadd(m)));
    }
    assert_only(
        &errors(&sass1(fadd(SrcMod::Not))),
        0,
        rules::SRC_MODIFIERS,
        "Not is invalid on a F32",
    );
    let iadd = |m| Op::IAdd3 {
        dst: r(0),
        carry_out: [Pred::PT, Pred::PT],
        a: with(m),
        b: s(reg(3)),
        c: s(imm(1)),
        carry_in: [PredSrc::FALSE, PredSrc::FALSE],
    };
    for m in [SrcMod::None, SrcMod::Neg, SrcMod::Not] {
        valid(&sass1(iadd(m)));
    }
    assert_only(
        &errors(&sass1(iadd(SrcMod::Abs))),
        0,
        rules::SRC_MODIFIERS,
        "Abs is invalid on a U32",
    );
}

#[test]
fn conversions() {
    let cvt = |dst_ty, src_ty, round| Op::Convert {
        dst_ty,
        src_ty,
        round,
        ftz: false,
        dst: r(0),
        a: s(reg(2)),
    };
    valid(&sass1(cvt(Ty::F32, Ty::S32, Round::Nearest))); // I2F
    valid(&sass1(cvt(Ty::S32, Ty::F32, Round::Zero))); // F2I.TRUNC
    valid(&sass1(cvt(Ty::F64, Ty::F16, Round::Nearest)));
    valid(&sass1(cvt(Ty::S64, Ty::U8, Round::Nearest)));
    assert_only(
        &errors(&sass1(cvt(Ty::F32, Ty::F16x2, Round::Nearest))),
        0,
        rules::CONVERT,
        "no conversion from F16X2 to F32",
    );
    assert_only(
        &errors(&sass1(cvt(Ty::BF16x2, Ty::F32, Round::Nearest))),
        0,
        rules::CONVERT,
        "no conversion",
    );
    assert_only(
        &errors(&sass1(cvt(Ty::U16, Ty::S32, Round::Zero))),
        0,
        rules::CONVERT,
        "takes no rounding mode",
    );
    let ftz = Op::Convert {
        dst_ty: Ty::U32,
        src_ty: Ty::S32,
        round: Round::Nearest,
        ftz: true,
        dst: r(0),
        a: s(reg(2)),
    };
    assert_only(
        &errors(&sass1(ftz)),
        0,
        rules::FTZ_FLOAT_ONLY,
        ".FTZ on an integer conversion",
    );
}

#[test]
fn comparisons() {
    valid(&sass1(isetp(CmpOp::Lt, Ty::S32, 0, reg(1), imm(0))));
    valid(&sass1(isetp(CmpOp::Nan, Ty::F32, 0, reg(1), reg(2))));
    valid(&sass1(isetp(CmpOp::Geu, Ty::F64, 0, reg(2), reg(4))));
    for cmp in [CmpOp::Equ, CmpOp::Num, CmpOp::Nan, CmpOp::Ltu] {
        assert_only(
            &errors(&sass1(isetp(cmp, Ty::U32, 0, reg(1), imm(0)))),
            0,
            rules::FLOAT_COMPARE,
            "only for floats",
        );
    }
    assert_only(
        &errors(&sass1(isetp(CmpOp::Eq, Ty::F16x2, 0, reg(1), imm(0)))),
        0,
        rules::FLOAT_TYPES,
        "comparison in F16X2",
    );
}

#[test]
fn memory_spaces() {
    // The constant bank is read only.
    valid(&sass1(load(
        Space::Const,
        Ty::U32,
        0,
        Address::absolute(0x10),
    )));
    let errs = errors(&sass1(store(
        Space::Const,
        Ty::U32,
        reg(0),
        Address::absolute(0x10),
    )));
    assert_only(&errs, 0, rules::CONST_READ_ONLY, "read only");
    // Generic addresses exist in SASS too (`LD`/`ST` on sm_70 and later).
    valid(&sass1(load(Space::Generic, Ty::U32, 0, wide(2, 0))));
    valid(&sass1(store(Space::Generic, Ty::U32, reg(0), wide(2, 0))));
    valid(
        &ptx()
            .op(load(Space::Generic, Ty::U32, 0, wide(2, 0)))
            .op(exit())
            .build(),
    );
    // A SASS shared-window base is a 32-bit register.
    let errs = errors(&sass1(load(Space::Shared, Ty::U32, 0, wide(2, 0))));
    assert_only(&errs, 0, rules::SHARED_BASE_32, "not the pair R2.64");
    let errs = errors(&sass1(atoms(AtomicOp::Add, Ty::U32, 0, wide(2, 0), 4)));
    assert_only(&errs, 0, rules::SHARED_BASE_32, "not the pair R2.64");
    // Base widths are 32 or 64.
    let odd = Address::Linear(LinearAddress {
        base: Some(r(2)),
        base_bits: 16,
        offset: 0,
    });
    let errs = errors(&sass1(load(Space::Global, Ty::U32, 0, odd)));
    assert_only(&errs, 0, rules::ADDRESS_BASE_BITS, "base width 16");
}

#[test]
fn barrier_ids_and_lea_shift() {
    valid(&sass1(bar(15)));
    assert_only(
        &errors(&sass1(bar(16))),
        0,
        rules::BARRIER_IDS,
        "barrier id 16",
    );
    let lea = |shift| Op::Lea {
        hi: false,
        sx32: false,
        dst: r(0),
        carry_out: Pred::PT,
        a: s(reg(1)),
        b: s(reg(2)),
        c: s(reg(RZ)),
        shift,
        carry_in: PredSrc::FALSE,
    };
    valid(&sass1(lea(31)));
    assert_only(
        &errors(&sass1(lea(32))),
        0,
        rules::LEA_SHIFT,
        "LEA shift 32",
    );
}

#[test]
fn half_selectors_only_on_packed_half_fma() {
    use atomjit::ir::HalfSel;
    let fma = |ty: Ty, halves: [HalfSel; 3]| Op::Fma {
        ty,
        dst: atomjit::ir::Reg(4),
        a: Src::plain(reg(0)),
        b: Src::plain(reg(1)),
        c: Src::plain(reg(2)),
        round: Round::Nearest,
        ftz: false,
        halves,
    };
    let selected = [HalfSel::H0H0, HalfSel::H1H0, HalfSel::H1H1];
    for ty in [Ty::F16x2, Ty::BF16x2] {
        valid(&sass1(fma(ty, selected)));
    }
    for ty in [Ty::F32, Ty::F16, Ty::BF16] {
        valid(&sass1(fma(ty, HalfSel::AS_READ)));
        let errs = errors(&sass1(fma(ty, selected)));
        assert_only(&errs, 0, rules::FMA_HALVES, "half selector .h0_h0");
    }
}

#[test]
fn packed_min_max_is_min_or_max_on_16_bit_halves_without_modifiers() {
    let op = |op: BinOp, ty: Ty, modifier: SrcMod| Op::PackedMinMax {
        op,
        ty,
        dst: atomjit::ir::Reg(4),
        a: Src {
            operand: reg(0),
            modifier,
        },
        b: Src::plain(Operand::Imm(0x8000_7fff)),
    };
    for o in [BinOp::Min, BinOp::Max] {
        for ty in [Ty::U16, Ty::S16] {
            valid(&sass1(op(o, ty, SrcMod::None)));
        }
    }
    let errs = errors(&sass1(op(BinOp::Add, Ty::U16, SrcMod::None)));
    assert_only(&errs, 0, rules::PACKED_MIN_MAX, "add on packed U16 pairs");
    let errs = errors(&sass1(op(BinOp::Min, Ty::U32, SrcMod::None)));
    assert_only(&errs, 0, rules::PACKED_MIN_MAX, "min on packed U32 pairs");
    for m in [SrcMod::Neg, SrcMod::Not, SrcMod::Abs] {
        let errs = errors(&sass1(op(BinOp::Max, Ty::S16, m)));
        assert_only(&errs, 0, rules::PACKED_MIN_MAX_MODIFIERS, "packed min/max");
    }
}
