//! Atomic rules: the ATOMS op×size table, operand shape, Imm24 and CAS/CAST registers.

use super::*;
use atomjit::ir::{Address, AtomicOp, Space, Ty};
use atomjit::valid::rules;

/// The "Supported Atomic Operations" table of `000_6d05a8552870c0ae.txt`, transcribed by hand.
const DOC_TABLE: &[(AtomicOp, &[Ty])] = &[
    (AtomicOp::Add, &[Ty::U32, Ty::S32]),
    (AtomicOp::Min, &[Ty::U32, Ty::S32]),
    (AtomicOp::Max, &[Ty::U32, Ty::S32]),
    (AtomicOp::Inc, &[Ty::U32]),
    (AtomicOp::Dec, &[Ty::U32]),
    (AtomicOp::And, &[Ty::U32, Ty::S32]),
    (AtomicOp::Or, &[Ty::U32, Ty::S32]),
    (AtomicOp::Xor, &[Ty::U32, Ty::S32]),
    (AtomicOp::Exch, &[Ty::U32, Ty::S32, Ty::U64]),
    (AtomicOp::Cas, &[Ty::U32, Ty::S32, Ty::U64]),
    (AtomicOp::Cast, &[Ty::U32, Ty::S32, Ty::U64]),
];

/// A register-correct ATOMS of `op` at `ty`: Rd = R0, [R1 + 0x10], Rb = R4 (Rc = R5, R6 or,
/// for a quad, R8).
fn atoms_form(op: AtomicOp, ty: Ty) -> atomjit::ir::Op {
    let three = matches!(op, AtomicOp::Cas | AtomicOp::Cast | AtomicOp::FCmpWr);
    let rc = match ty.regs() {
        4 => 8,
        2 => 6,
        _ => 5,
    };
    atomic(
        Space::Shared,
        op,
        ty,
        0,
        shared(1, 0x10),
        reg(4),
        three.then(|| reg(rc)),
    )
}

#[test]
fn atoms_accepts_exactly_the_document_table() {
    for &op in AtomicOp::ALL {
        for &ty in Ty::ALL {
            for ftz in [false, true] {
                let k = sass1(with_atomic(atoms_form(op, ty), |a| a.ftz = ftz));
                let row = DOC_TABLE.iter().find(|(o, _)| *o == op);
                // Besides the document's table, sm_90's `ATOMS.EXCH.128` and `ATOMS.CAS.128`
                // (ptxas 12.9), on a host that can perform them.
                let wide = ty == Ty::B128;
                let legal = !ftz
                    && if wide {
                        matches!(op, AtomicOp::Exch | AtomicOp::Cas)
                            && atomjit::exec::memory::has_cas128()
                    } else {
                        row.is_some_and(|(_, tys)| tys.contains(&ty))
                    };
                match validate(&k) {
                    Ok(_) => assert!(
                        legal,
                        "ATOMS.{op}.{ty} ftz={ftz} passed but is not in the table"
                    ),
                    Err(e) => {
                        assert!(
                            !legal,
                            "ATOMS.{op}.{ty} ftz={ftz} is in the table but failed: {e}"
                        );
                        let e = &e.0;
                        let expected_rule = match (op, row) {
                            _ if wide && !atomjit::exec::memory::has_cas128() => rules::HOST_CAS128,
                            _ if wide => rules::B128_ATOMICS_ONLY,
                            (AtomicOp::PreDec, _) => rules::PREDEC_PENDING,
                            (_, None) => rules::ATOMS_OPS,
                            (_, Some(_)) => {
                                atomjit::valid::table(atomjit::ir::Dialect::Sass, Space::Shared)
                                    .unwrap()
                                    .row(op)
                                    .unwrap()
                                    .rule
                            }
                        };
                        assert!(
                            e.iter().any(|x| x.pc == Some(0) && x.rule == expected_rule),
                            "ATOMS.{op}.{ty}: {e:#?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn table_errors_quote_their_row() {
    let cases: &[(AtomicOp, Ty, &str, &str)] = &[
        (
            AtomicOp::Add,
            Ty::U64,
            ".ADD .U32 .S32 Rd = M; M = M + Rb;",
            "ATOMS.ADD.U64",
        ),
        (
            AtomicOp::Inc,
            Ty::S32,
            ".INC .U32 Rd = M; M = (M >= Rb) ? 0 : (M + 1);",
            "ATOMS.INC.S32",
        ),
        (
            AtomicOp::Min,
            Ty::U64,
            ".MIN .U32 .S32 Rd = M; M = min(M, Rb);",
            "ATOMS.MIN.U64",
        ),
        (
            AtomicOp::Dec,
            Ty::U64,
            ".DEC .U32 Rd = M; M = (M == 0 || M > Rb)? Rb : M - 1;",
            "ATOMS.DEC.U64",
        ),
        (
            AtomicOp::Max,
            Ty::S64,
            ".MAX .U32 .S32 Rd = M; M = max(M, Rb);",
            "ATOMS.MAX.S64",
        ),
        (
            AtomicOp::Add,
            Ty::F32,
            ".ADD .U32 .S32 Rd = M; M = M + Rb;",
            "ATOMS.ADD.F32",
        ),
        (
            AtomicOp::Exch,
            Ty::U16,
            ".EXCH .U32 .S32 .U64 Rd = M; M = Rb;",
            "ATOMS.EXCH.U16",
        ),
    ];
    for &(op, ty, row, form) in cases {
        let errs = errors(&sass1(atoms_form(op, ty)));
        let rule = format!("000_6d05a8552870c0ae.txt: \"{row}\"");
        assert_only(&errs, 0, &rule, form);
    }
    // SUB is not an ATOMS operation at all.
    let errs = errors(&sass1(atoms_form(AtomicOp::Sub, Ty::U32)));
    assert_only(&errs, 0, rules::ATOMS_OPS, "ATOMS has no .SUB");
}

#[test]
fn visa_only_ops_are_rejected_in_sass() {
    let errs = errors(&sass1(atoms_form(AtomicOp::FCmpWr, Ty::F32)));
    assert_only(&errs, 0, rules::ATOMS_OPS, ".FCMPWR");
    let errs = errors(&sass1(atoms_form(AtomicOp::PreDec, Ty::U32)));
    assert_only(&errs, 0, rules::PREDEC_PENDING, "pre-decrement");
}

#[test]
fn dialects_without_a_table_reject_atomics() {
    // vISA has SVM (global) atomics only: no shared-memory table.
    let k = builder(atomjit::ir::Dialect::Visa)
        .op(atomic(
            Space::Shared,
            AtomicOp::Add,
            Ty::U32,
            0,
            shared(2, 0),
            reg(4),
            None,
        ))
        .op(exit())
        .build();
    assert_only(&errors(&k), 0, rules::NO_TABLE, "no atomic op×size table");
}

#[test]
fn visa_svm_table() {
    let visa = |op: AtomicOp, ty: Ty| {
        builder(atomjit::ir::Dialect::Visa)
            .op(atomic(Space::Global, op, ty, 0, wide(2, 0), reg(4), None))
            .op(exit())
            .build()
    };
    // The front end lowers inc/dec to add/sub of 1: the IR's bounded Inc is not an SVM op.
    assert_only(
        &errors(&visa(AtomicOp::Inc, Ty::U32)),
        0,
        rules::VISA_SVM_OPS,
        "svm_atomic has no .INC",
    );
    let valid = |k: &atomjit::ir::Kernel| atomjit::valid::validate(k).is_ok();
    for ty in [Ty::U16, Ty::U32, Ty::U64] {
        assert!(valid(&visa(AtomicOp::Add, ty)), "add {ty}");
    }
    // Float min at 16 bits is in the table; float add is not (fadd is a later platform's).
    assert!(valid(&visa(AtomicOp::Min, Ty::F16)));
    assert!(!errors(&visa(AtomicOp::Add, Ty::F32)).is_empty());
}

#[test]
fn src2_is_present_exactly_for_cas_and_cast() {
    let k = sass1(atomic(
        Space::Shared,
        AtomicOp::Cas,
        Ty::U32,
        0,
        shared(1, 0),
        reg(4),
        None,
    ));
    assert_only(&errors(&k), 0, rules::SRC2_SHAPE, "needs a second operand");
    let k = sass1(atomic(
        Space::Shared,
        AtomicOp::Cast,
        Ty::U32,
        0,
        shared(1, 0),
        reg(4),
        None,
    ));
    assert_only(&errors(&k), 0, rules::SRC2_SHAPE, "needs a second operand");
    let k = sass1(atomic(
        Space::Shared,
        AtomicOp::Add,
        Ty::U32,
        0,
        shared(1, 0),
        reg(4),
        Some(reg(5)),
    ));
    assert_only(
        &errors(&k),
        0,
        rules::ATOMS_RC_ONLY_CAS,
        "takes no second operand",
    );
    valid(&sass1(atoms_cas(
        AtomicOp::Cas,
        Ty::U32,
        0,
        shared(1, 0),
        4,
        5,
    )));
}

#[test]
fn spin_only_with_cast() {
    let spin = |op| with_atomic(op, |a| a.spin = true);
    valid(&sass1(spin(atoms_cas(
        AtomicOp::Cast,
        Ty::U32,
        0,
        shared(1, 0x18),
        4,
        5,
    ))));
    valid(&sass1(spin(atoms_cas(
        AtomicOp::Cast,
        Ty::U64,
        0,
        shared(1, 0x18),
        4,
        6,
    ))));
    let errs = errors(&sass1(spin(atoms_cas(
        AtomicOp::Cas,
        Ty::U32,
        0,
        shared(1, 0),
        4,
        5,
    ))));
    assert_only(&errs, 0, rules::ATOMS_SPIN, ".SPIN is only valid on CAST");
    let errs = errors(&sass1(spin(atoms(
        AtomicOp::Add,
        Ty::U32,
        0,
        shared(1, 0),
        4,
    ))));
    assert_only(&errs, 0, rules::ATOMS_SPIN, ".SPIN is only valid on CAST");
}

#[test]
fn immediate_low_two_bits_must_be_zero() {
    for off in [1, 2, 3, 0x12, -1, -2, -0x192] {
        let errs = errors(&sass1(atoms(AtomicOp::Add, Ty::U32, 0, shared(1, off), 4)));
        assert_only(&errs, 0, rules::ATOMS_IMM_LOW_BITS, "non-zero low 2 bits");
        let errs = errors(&sass1(atoms(
            AtomicOp::Add,
            Ty::U32,
            0,
            Address::absolute(off.abs()),
            4,
        )));
        assert_only(&errs, 0, rules::ATOMS_IMM_LOW_BITS, "non-zero low 2 bits");
    }
    // The document's own examples: [R1 - 400], [R4 + 8], [0x10], [R4 + 0x18].
    for addr in [
        shared(1, -400),
        shared(4, 8),
        Address::absolute(0x10),
        shared(4, 0x18),
    ] {
        valid(&sass1(atoms(AtomicOp::Add, Ty::S32, 0, addr, 9)));
    }
}

#[test]
fn absolute_immediate_is_imm_u24() {
    for off in [0, 4, 0x10, 0xff_fffc] {
        valid(&sass1(atoms(
            AtomicOp::Add,
            Ty::U32,
            0,
            Address::absolute(off),
            4,
        )));
        // RZ as the base is the absolute form too.
        valid(&sass1(atoms(AtomicOp::Add, Ty::U32, 0, shared(RZ, off), 4)));
    }
    for off in [0x100_0000, 0x7fff_fffc, -4, -0x80_0000] {
        let errs = errors(&sass1(atoms(
            AtomicOp::Add,
            Ty::U32,
            0,
            Address::absolute(off),
            4,
        )));
        assert_only(&errs, 0, rules::ATOMS_IMM_U24, "24-bit unsigned immediate");
        let errs = errors(&sass1(atoms(AtomicOp::Add, Ty::U32, 0, shared(RZ, off), 4)));
        assert_only(&errs, 0, rules::ATOMS_IMM_U24, "24-bit unsigned immediate");
    }
}

#[test]
fn register_immediate_is_imm_s24() {
    for off in [-0x80_0000, -4, 0, 0x7f_fffc] {
        valid(&sass1(atoms(AtomicOp::Add, Ty::U32, 0, shared(1, off), 4)));
    }
    for off in [0x80_0000, -0x80_0004, 0xff_fffc, 0x1_0000_0000] {
        let errs = errors(&sass1(atoms(AtomicOp::Add, Ty::U32, 0, shared(1, off), 4)));
        assert_only(&errs, 0, rules::ATOMS_IMM_S24, "24-bit signed immediate");
    }
}

#[test]
fn lds_sts_check_the_imm24_range_but_not_the_low_bits() {
    let lds = |addr| load(Space::Shared, Ty::U8, 0, addr);
    let sts = |addr| store(Space::Shared, Ty::U16, reg(0), addr);
    for addr in [
        shared(1, 1),
        shared(1, -0x80_0000),
        Address::absolute(0xff_ffff),
        shared(1, 0x7f_fffe),
    ] {
        valid(&sass1(lds(addr)));
        valid(&sass1(sts(addr)));
    }
    let errs = errors(&sass1(lds(Address::absolute(0x100_0000))));
    assert_only(&errs, 0, rules::LDS_STS_IMM_U24, "24-bit unsigned");
    let errs = errors(&sass1(sts(shared(1, 0x80_0000))));
    assert_only(&errs, 0, rules::LDS_STS_IMM_S24, "24-bit signed");
    // Global loads have no Imm24 rule.
    valid(&sass1(load(
        Space::Global,
        Ty::U32,
        0,
        wide(2, 0x1234_5672),
    )));
}

#[test]
fn spin_groups_lanes_only_on_shared_or_generic_addresses() {
    // `.SPIN` groups lanes by shared-memory bank: ATOMS and the generic ATOM.E.CAST.SPIN have
    // one, a global address does not.
    let cast = |space| {
        let mut op = atoms_cas(AtomicOp::Cast, Ty::U32, 0, wide(2, 0), 4, 5);
        if let atomjit::ir::Op::Atomic(a) = &mut op {
            a.spin = true;
            a.access.space = space;
        }
        op
    };
    valid(&sass1(cast(Space::Generic)));
    let errs = errors(&sass1(cast(Space::Global)));
    assert!(
        errs.iter().any(|e| e.rule == rules::SPIN_SHARED),
        "{errs:?}"
    );
}

#[test]
fn compiler_listings_free_the_cas_register_pairing() {
    // ptxas 12.9 writes `ATOMS.CAS R26, [R8], R27, R26` (sm_90) and `ATOMS.CAS R8, [0xb0],
    // R13, R12` (sm_80): Rb odd, Rc below it. The document's pairing binds hand-written SASS,
    // where the same registers are invalid.
    let cas = || atoms_cas(AtomicOp::Cas, Ty::U32, 26, shared(8, 0), 27, 26);
    for layout in [
        atomjit::ir::CbankLayout::SM80,
        atomjit::ir::CbankLayout::SM90,
    ] {
        let listing = sass()
            .launch(|l| {
                l.layout = layout;
                l.compiled = true;
            })
            .op(cas())
            .op(exit())
            .build();
        valid(&listing);
    }
    let errs = errors(&sass1(cas()));
    assert!(
        errs.iter()
            .any(|e| e.message.contains("must be a multiple of 2")),
        "{errs:?}"
    );
}

#[test]
fn cas32_register_rules() {
    for op in [AtomicOp::Cas, AtomicOp::Cast] {
        valid(&sass1(atoms_cas(op, Ty::U32, 0, shared(1, 0), 4, 5)));
        valid(&sass1(atoms_cas(op, Ty::S32, 0, shared(1, 0), 2, RZ)));
        // Rb odd.
        let errs = errors(&sass1(atoms_cas(op, Ty::U32, 0, shared(1, 0), 3, 4)));
        assert_only(
            &errs,
            0,
            rules::ATOMS_CAS_REGS,
            "Rb is R3, but must be a multiple of 2",
        );
        // Rb = RZ.
        let errs = errors(&sass1(atoms_cas(op, Ty::U32, 0, shared(1, 0), RZ, 5)));
        assert_only(&errs, 0, rules::ATOMS_CAS_REGS, "Rb cannot be RZ");
        // Rc not Rb+1.
        let errs = errors(&sass1(atoms_cas(op, Ty::U32, 0, shared(1, 0), 4, 6)));
        assert_only(
            &errs,
            0,
            rules::ATOMS_CAS_REGS,
            "Rc is R6, but must be R5 (Rb+1) or RZ",
        );
    }
}

#[test]
fn cas64_register_rules() {
    for op in [AtomicOp::Cas, AtomicOp::Cast] {
        // The document's example: ATOMS.CAS.U64 R0, [R4 + 8], R4, R6.
        valid(&sass1(atoms_cas(op, Ty::U64, 0, shared(4, 8), 4, 6)));
        valid(&sass1(atoms_cas(op, Ty::U64, 0, shared(4, 8), 8, RZ)));
        // Rb even but not R4n.
        let errs = errors(&sass1(atoms_cas(op, Ty::U64, 0, shared(1, 0), 2, 4)));
        assert_only(
            &errs,
            0,
            rules::ATOMS_CAS_REGS,
            "Rb is R2, but must be a multiple of 4",
        );
        let errs = errors(&sass1(atoms_cas(op, Ty::U64, 0, shared(1, 0), RZ, 6)));
        assert_only(&errs, 0, rules::ATOMS_CAS_REGS, "Rb cannot be RZ");
        // Rc = Rb+1 is the .32 rule, not the .64 one (and R5 is an odd pair).
        let errs = errors(&sass1(atoms_cas(op, Ty::U64, 0, shared(1, 0), 4, 5)));
        assert_eq!(errs.len(), 2, "{errs:#?}");
        assert_has(
            &errs,
            0,
            rules::ATOMS_CAS_REGS,
            "Rc is R5, but must be R6 (Rb+2) or RZ",
        );
        assert_has(
            &errs,
            0,
            rules::SASS_PAIR_ALIGNED,
            "misaligned 64-bit source pair R5",
        );
    }
}

/// The document's last example, `ATOMS.CAST.SPIN.U32 R0, [R4 + 0x18], R4, R6;` commented
/// "Rc=Rb+2", contradicts its own rule for `.32` ("Rc must be Rb+1 or RZ"). The rule is
/// normative, so the example is rejected.
#[test]
fn the_documents_cast_spin_u32_example_breaks_its_own_rule() {
    let op = with_atomic(
        atoms_cas(AtomicOp::Cast, Ty::U32, 0, shared(4, 0x18), 4, 6),
        |a| a.spin = true,
    );
    assert_only(
        &errors(&sass1(op)),
        0,
        rules::ATOMS_CAS_REGS,
        "must be R5 (Rb+1)",
    );
}

#[test]
fn sass_atomic_operands_are_registers() {
    let k = sass1(atomic(
        Space::Shared,
        AtomicOp::Add,
        Ty::U32,
        0,
        shared(1, 0),
        imm(1),
        None,
    ));
    assert_only(
        &errors(&k),
        0,
        rules::ATOMS_RB_REGISTER,
        "Rb must be a register",
    );
    let k = sass1(atomic(
        Space::Shared,
        AtomicOp::Cas,
        Ty::U32,
        0,
        shared(1, 0),
        reg(4),
        Some(imm(1)),
    ));
    assert_only(
        &errors(&k),
        0,
        rules::ATOMS_RB_REGISTER,
        "Rc must be a register",
    );
    let k = sass1(atomic(
        Space::Global,
        AtomicOp::Add,
        Ty::U32,
        0,
        wide(2, 0),
        cbank(0x28),
        None,
    ));
    assert_only(
        &errors(&k),
        0,
        rules::ATOMG_REGISTERS,
        "Rb must be a register",
    );
}

#[test]
fn atomg_table_and_registers() {
    let g = |op, ty, rb, rc: Option<u16>| {
        atomic(
            Space::Global,
            op,
            ty,
            0,
            wide(2, 0x10),
            reg(rb),
            rc.map(reg),
        )
    };
    // Issue 2's list: ADD U32 S32 U64 F32.FTZ.RN F64.RN, MIN/MAX U32 S32 U64 S64.
    valid(&sass1(g(AtomicOp::Add, Ty::U64, 4, None)));
    valid(&sass1(with_atomic(
        g(AtomicOp::Add, Ty::F32, 4, None),
        |a| a.ftz = true,
    )));
    valid(&sass1(g(AtomicOp::Add, Ty::F64, 4, None)));
    valid(&sass1(g(AtomicOp::Max, Ty::S64, 4, None)));
    let errs = errors(&sass1(g(AtomicOp::Add, Ty::F32, 4, None)));
    assert_only(&errs, 0, rules::ATOMG_ROW_ADD, "ATOMG.ADD.F32.RN");
    let errs = errors(&sass1(g(AtomicOp::Inc, Ty::U64, 4, None)));
    assert_only(&errs, 0, rules::ATOMG_ROW_INC, "ATOMG.INC.U64");
    let errs = errors(&sass1(g(AtomicOp::Cast, Ty::U32, 4, Some(5))));
    assert_only(&errs, 0, rules::ATOMG_OPS, "ATOMG has no .CAST");
    // ATOMG.CAS: compare and swap registers are independent; only 64-bit pairs are aligned.
    valid(&sass1(g(AtomicOp::Cas, Ty::U32, 5, Some(9))));
    valid(&sass1(g(AtomicOp::Cas, Ty::U64, 6, Some(10))));
    let errs = errors(&sass1(g(AtomicOp::Cas, Ty::U64, 5, Some(10))));
    assert_only(
        &errs,
        0,
        rules::SASS_PAIR_ALIGNED,
        "misaligned 64-bit source pair R5",
    );
    // No Imm24 rule on global addresses.
    valid(&sass1(atomic(
        Space::Global,
        AtomicOp::Add,
        Ty::U32,
        0,
        wide(2, 0x1_0000_0002),
        reg(4),
        None,
    )));
}

#[test]
fn atomics_need_a_writable_explicit_space() {
    let k = sass1(atomic(
        Space::Const,
        AtomicOp::Add,
        Ty::U32,
        0,
        Address::absolute(0x160),
        reg(4),
        None,
    ));
    let errs = errors(&k);
    assert_has(&errs, 0, rules::CONST_READ_ONLY, "read only");
    // SASS `ATOM`/`RED` on generic addresses take the `ATOMG` rows: 64-bit AND is not one.
    valid(&sass1(atomic(
        Space::Generic,
        AtomicOp::Add,
        Ty::U32,
        0,
        wide(2, 0),
        reg(4),
        None,
    )));
}

/// PTX ISA Table 41 ("Atom Scalar Type Operations"), transcribed by hand: which `(op, type)`
/// pairs exist, and whether the `f32` add flushes (`ftz`) in each space.
fn ptx_table_41(op: AtomicOp, ty: Ty, ftz: bool, space: Space) -> bool {
    use AtomicOp::*;
    use Ty::*;
    if ftz {
        // Only `atom.add.f32` without `.noftz` flushes, and only on global memory (generic
        // addresses flush when they resolve to global memory).
        return op == Add && ty == F32 && space != Space::Shared;
    }
    match ty {
        U32 => matches!(op, Add | Inc | Dec | Min | Max),
        S32 | U64 => matches!(op, Add | Min | Max),
        S64 => matches!(op, Min | Max),
        F32 | F64 | F16 | F16x2 | BF16 | BF16x2 => op == Add,
        B16 => op == Cas,
        B32 | B64 => matches!(op, And | Or | Xor | Exch | Cas),
        // PTX ISA 8.3: `atom.exch.b128`, `atom.cas.b128` (on a host that can perform them).
        B128 => matches!(op, Exch | Cas) && atomjit::exec::memory::has_cas128(),
        U8 | U16 | S8 | S16 => false,
    }
}

#[test]
fn ptx_op_type_tables_are_table_41() {
    for space in [Space::Global, Space::Shared, Space::Generic] {
        for &op in AtomicOp::ALL {
            if op == AtomicOp::PreDec {
                continue;
            }
            for &ty in Ty::ALL {
                for ftz in [false, true] {
                    let three = matches!(op, AtomicOp::Cas | AtomicOp::Cast | AtomicOp::FCmpWr);
                    let mut inst =
                        atomic(space, op, ty, 0, wide(2, 0), reg(4), three.then(|| reg(6)));
                    inst = with_atomic(inst, |a| a.ftz = ftz);
                    let k = ptx().op(inst).op(exit()).build();
                    let legal = ptx_table_41(op, ty, ftz, space);
                    match atomjit::valid::validate(&k) {
                        Ok(_) => assert!(legal, "{space:?} {op:?} {ty:?} ftz={ftz} passed"),
                        Err(e) => {
                            assert!(!legal, "{space:?} {op:?} {ty:?} ftz={ftz}: {e}");
                            assert!(e.0.iter().all(|e| e.rule.starts_with("PTX ISA")), "{e}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn ptx_table_messages_use_ptx_spelling() {
    let k = ptx()
        .op(atomic(
            Space::Shared,
            AtomicOp::Inc,
            Ty::U64,
            0,
            wide(2, 0),
            reg(4),
            None,
        ))
        .op(exit())
        .build();
    assert_only(
        &errors(&k),
        0,
        rules::PTX_ROW_INC_DEC,
        "atom.shared.inc.u64 is not in the op×size table: atom.shared.inc supports only .u32",
    );
    let k = ptx()
        .op(with_atomic(
            atomic(
                Space::Shared,
                AtomicOp::Add,
                Ty::F32,
                0,
                wide(2, 0),
                reg(4),
                None,
            ),
            |a| a.ftz = true,
        ))
        .op(exit())
        .build();
    assert_only(&errors(&k), 0, rules::PTX_ROW_ADD_SHARED, ".f32 (ftz)");
}
