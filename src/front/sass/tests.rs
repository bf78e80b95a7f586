//! Tests of the SASS front-end: every instruction form (exact IR), every directive, every
//! parse-error class (with line and column), and no panics on arbitrary input.

use crate::front::{parse, ParseError};
use crate::ir::*;

fn program(src: &str) -> Program {
    match parse("t.s", src, Dialect::Sass) {
        Ok(p) => p,
        Err(e) => panic!("unexpected parse error: {e}\n{src}"),
    }
}

fn kernel(src: &str) -> Kernel {
    program(src).kernels.remove(0)
}

/// The single instruction of a one-line program.
fn inst(text: &str) -> Inst {
    let k = kernel(text);
    assert_eq!(k.insts.len(), 1, "{text}");
    k.insts.into_iter().next().unwrap()
}

fn op(text: &str) -> Op {
    inst(text).op
}

fn atomic(text: &str) -> AtomicInst {
    match op(text) {
        Op::Atomic(a) => *a,
        other => panic!("not an atomic: {other:?}"),
    }
}

fn err(src: &str) -> ParseError {
    match parse("t.s", src, Dialect::Sass) {
        Ok(_) => panic!("expected a parse error for:\n{src}"),
        Err(e) => e,
    }
}

/// Asserts an error at `line:col` whose message contains `text`.
fn err_at(src: &str, line: u32, col: u32, text: &str) -> ParseError {
    let e = err(src);
    assert_eq!(
        (e.span.line, e.span.col),
        (line, col),
        "wrong position for {e} in {src:?}"
    );
    assert!(
        e.message.contains(text),
        "message `{}` lacks `{text}`",
        e.message
    );
    e
}

fn r(n: u16) -> Reg {
    Reg(n)
}
fn reg(n: u16) -> Operand {
    Operand::Reg(Reg(n))
}
fn rs(n: u16) -> Src {
    Src::plain(reg(n))
}
fn imm(v: u64) -> Src {
    Src::plain(Operand::Imm(v))
}
fn rz() -> Src {
    Src::plain(Operand::ZERO)
}
fn shared(base: Option<Reg>, offset: i64) -> Address {
    Address::Linear(LinearAddress {
        base,
        base_bits: 32,
        offset,
    })
}
fn global(base: u16, offset: i64) -> Address {
    Address::Linear(LinearAddress {
        base: Some(Reg(base)),
        base_bits: 64,
        offset,
    })
}
fn p(n: u16) -> PredSrc {
    PredSrc {
        pred: Pred(n),
        negate: false,
    }
}
fn notp(n: u16) -> PredSrc {
    PredSrc {
        pred: Pred(n),
        negate: true,
    }
}

// ---------------------------------------------------------------------------------------------
// ATOMS

fn atoms(
    op: AtomicOp,
    ty: Ty,
    dst: Reg,
    addr: Address,
    src: u16,
    src2: Option<Operand>,
    spin: bool,
) -> AtomicInst {
    AtomicInst {
        access: MemAccess {
            space: Space::Shared,
            ty,
            vector: 1,
            order: MemOrder::Relaxed,
            scope: Scope::Cta,
            addr,
        },
        op,
        dst,
        src: reg(src),
        src2,
        spin,
        ftz: false,
        performed: Pred::PT,
    }
}

#[test]
fn atoms_document_examples() {
    let src = "ATOMS.ADD.S32 R0, [R1 - 400], R9;\n\
               ATOMS.MIN.U32 R0, [R4 + 8], R2;\n\
               ATOMS.ADD.U32 R9, [0x10], R8; # absolute 24-bit address\n\
               ATOMS.CAS.U64 R0, [R4 + 8], R4, R6; # R4 is Reg4 aligned, Rc=Rb+2\n\
               ATOMS.CAST.SPIN.U32 R0, [R4 + 0x18], R4, R6; # R4 is Reg4 aligned, Rc=Rb+2\n";
    let k = kernel(src);
    let got: Vec<AtomicInst> = k
        .insts
        .iter()
        .map(|i| match &i.op {
            Op::Atomic(a) => (**a).clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        got,
        vec![
            atoms(
                AtomicOp::Add,
                Ty::S32,
                r(0),
                shared(Some(r(1)), -400),
                9,
                None,
                false
            ),
            atoms(
                AtomicOp::Min,
                Ty::U32,
                r(0),
                shared(Some(r(4)), 8),
                2,
                None,
                false
            ),
            atoms(
                AtomicOp::Add,
                Ty::U32,
                r(9),
                shared(None, 0x10),
                8,
                None,
                false
            ),
            atoms(
                AtomicOp::Cas,
                Ty::U64,
                r(0),
                shared(Some(r(4)), 8),
                4,
                Some(reg(6)),
                false
            ),
            atoms(
                AtomicOp::Cast,
                Ty::U32,
                r(0),
                shared(Some(r(4)), 0x18),
                4,
                Some(reg(6)),
                true
            ),
        ]
    );
    assert_eq!(k.name, "main");
    assert_eq!(k.insts[2].text, "ATOMS.ADD.U32 R9, [0x10], R8");
    assert_eq!((k.insts[1].span.line, k.insts[1].span.col), (2, 1));
}

#[test]
fn atoms_every_op_and_size() {
    let ops = [
        ("ADD", AtomicOp::Add),
        ("MIN", AtomicOp::Min),
        ("MAX", AtomicOp::Max),
        ("INC", AtomicOp::Inc),
        ("DEC", AtomicOp::Dec),
        ("AND", AtomicOp::And),
        ("OR", AtomicOp::Or),
        ("XOR", AtomicOp::Xor),
        ("EXCH", AtomicOp::Exch),
        ("CAS", AtomicOp::Cas),
        ("CAST", AtomicOp::Cast),
        ("CAST.SPIN", AtomicOp::Cast),
    ];
    let sizes = [
        ("", Ty::U32),
        (".U32", Ty::U32),
        (".S32", Ty::S32),
        (".U64", Ty::U64),
        (".32", Ty::U32),
        (".64", Ty::U64),
    ];
    for (name, want_op) in ops {
        for (sz, want_ty) in sizes {
            let compare = matches!(want_op, AtomicOp::Cas | AtomicOp::Cast);
            let text = if compare {
                format!("ATOMS.{name}{sz} R2, [R8+0x4], R4, R5")
            } else {
                format!("ATOMS.{name}{sz} R2, [R8+0x4], R4")
            };
            let a = atomic(&text);
            let src2 = compare.then_some(reg(5));
            // Op × size legality is validation's job: every combination parses.
            assert_eq!(
                a,
                atoms(
                    want_op,
                    want_ty,
                    r(2),
                    shared(Some(r(8)), 4),
                    4,
                    src2,
                    name.ends_with("SPIN")
                ),
                "{text}"
            );
        }
    }
}

#[test]
fn atoms_address_forms() {
    let addr = |text: &str| atomic(&format!("ATOMS.ADD R0, {text}, R1")).access.addr;
    assert_eq!(addr("[R1]"), shared(Some(r(1)), 0));
    assert_eq!(addr("[R1 + 0x10]"), shared(Some(r(1)), 16));
    assert_eq!(addr("[R1+-4]"), shared(Some(r(1)), -4));
    assert_eq!(addr("[R1 - 0x8]"), shared(Some(r(1)), -8));
    assert_eq!(addr("[RZ + 0x10]"), shared(Some(Reg::RZ), 16));
    assert_eq!(addr("[R255+0x10]"), shared(Some(Reg::RZ), 16));
    assert_eq!(addr("[0xfffffc]"), shared(None, 0xfffffc));
    // Range and alignment are validation errors, so the parser keeps the exact immediate.
    assert_eq!(addr("[R1 + 0x1000001]"), shared(Some(r(1)), 0x1000001));
    assert_eq!(addr("[-4]"), shared(None, -4));
}

#[test]
fn atoms_rz_operands_and_case() {
    let a = atomic("ATOMS.CAS.64 RZ, [R3], R8, RZ");
    assert_eq!(
        a,
        atoms(
            AtomicOp::Cas,
            Ty::U64,
            Reg::RZ,
            shared(Some(r(3)), 0),
            8,
            Some(Operand::ZERO),
            false
        )
    );
    let a = atomic("atoms.exch.u32 r1, [r2], r3");
    assert_eq!(
        a,
        atoms(
            AtomicOp::Exch,
            Ty::U32,
            r(1),
            shared(Some(r(2)), 0),
            3,
            None,
            false
        )
    );
}

#[test]
fn atoms_errors() {
    err_at(
        "ATOMS.ADD.SPIN R0, [R1], R2",
        1,
        11,
        ".SPIN is only valid with .CAST",
    );
    let e = err_at("ATOMS.ADD R0, [R1], R2, R3", 1, 25, "takes no Rc");
    assert!(e.message.contains("assemble Rc as RZ"));
    err_at("ATOMS.CAS R0, [R1], R2", 1, 23, "too few operands");
    let e = err_at("ATOMS.SUB R0, [R1], R2", 1, 7, "unknown modifier `.SUB`");
    assert!(e
        .expected
        .unwrap()
        .contains(".ADD .MIN .MAX .INC .DEC .AND .OR .XOR .EXCH .CAS .CAST"));
    let e = err_at(
        "ATOMS.ADD.S64 R0, [R1], R2",
        1,
        11,
        "unknown modifier `.S64`",
    );
    assert!(e.expected.unwrap().contains(".U32 .S32 .U64 .32 .64"));
    err_at(
        "ATOMS.ADD.U32.S32 R0, [R1], R2",
        1,
        15,
        "conflicts with `.U32`",
    );
    err_at("ATOMS R0, [R1], R2", 1, 1, "needs an operation");
    err_at("ATOMS.ADD R0, [R2.64], R1", 1, 15, "remove `.64`");
    err_at(
        "ATOMS.ADD R0, [R1], 0x1",
        1,
        21,
        "expected Rb (a register), found an immediate",
    );
    err_at(
        "ATOMS.ADD R300, [R1], R2",
        1,
        11,
        "register `R300` does not exist",
    );
    err_at(
        "ATOMS.ADD R0, [R1 + R2], R3",
        1,
        21,
        "the second register of an address is a uniform register",
    );
    err_at("ATOMS.ADD R0, [], R3", 1, 15, "empty address");
    err_at("ATOMS.ADD R0, [R1, R3", 1, 15, "unclosed `[`");
    err_at("ATOMS.ADD R0, [R1 R3], R2", 1, 19, "expected `+ offset`");
    err_at("ATOMS.ADD R0, [UR64], R3", 1, 16, "does not exist");
    err_at(
        "ATOMS.ADD -R0, [R1], R3",
        1,
        11,
        "takes no operand modifier",
    );
    err_at(
        "ATOMS.ADD R0, [R1 + 1.5], R3",
        1,
        21,
        "an address offset is an integer",
    );
    err_at(
        "ATOMS.ADD R0, [R1 + 0x10000000000000000], R3",
        1,
        15,
        "does not fit 64 bits",
    );
    err_at("ATOMS.ADD. R0, [R1], R3", 1, 10, "empty modifier");
    err_at("ATOMS.ADD R0, , R3", 1, 15, "missing operand");
}

#[test]
fn guards_and_scheduling_annotations() {
    let i = inst("@!P0 ATOMS.ADD R0, [R1], R2 {&req_6} {&rd0}{&wr1} {?sched} ;");
    assert_eq!(
        i.guard,
        Guard {
            pred: Pred(0),
            negate: true
        }
    );
    assert_eq!(i.sched, ["{&req_6}", "{&rd0}", "{&wr1}", "{?sched}"]);
    assert_eq!(
        i.text,
        "@!P0 ATOMS.ADD R0, [R1], R2 {&req_6} {&rd0}{&wr1} {?sched}"
    );
    assert_eq!(
        inst("@P6 EXIT").guard,
        Guard {
            pred: Pred(6),
            negate: false
        }
    );
    assert_eq!(inst("@PT EXIT").guard, Guard::ALWAYS);
    assert!(inst("@!PT EXIT").guard.is_never());
    err_at("@P7 EXIT", 1, 2, "predicate `P7` does not exist");
    err_at("@R0 EXIT", 1, 2, "not a predicate");
    err_at("@ EXIT", 1, 3, "`EXIT` is not a predicate");
    err_at("@! ;", 1, 3, "expected a guard predicate");
    err_at("@P0", 1, 4, "expected an instruction after the guard");
    err_at("EXIT {&req_6} R0", 1, 15, "after a scheduling annotation");
    err_at("EXIT {&req_6", 1, 6, "unclosed scheduling annotation");
    err_at("EXIT {}", 1, 6, "empty scheduling annotation");
}

// ---------------------------------------------------------------------------------------------
// Global atomics

#[allow(clippy::too_many_arguments)]
fn gatom(
    op: AtomicOp,
    ty: Ty,
    scope: Scope,
    dst: Reg,
    addr: Address,
    src: u16,
    src2: Option<Operand>,
    ftz: bool,
) -> AtomicInst {
    AtomicInst {
        access: MemAccess {
            space: Space::Global,
            ty,
            vector: 1,
            order: MemOrder::Relaxed,
            scope,
            addr,
        },
        op,
        dst,
        src: reg(src),
        src2,
        spin: false,
        ftz,
        performed: Pred::PT,
    }
}

/// `a` in the generic space (SASS `ATOM`/`RED`).
fn generic(mut a: AtomicInst) -> AtomicInst {
    a.access.space = Space::Generic;
    a
}

#[test]
fn atomg_forms() {
    assert_eq!(
        atomic("ATOMG.E.ADD.STRONG.GPU PT, R0, [R2.64+0x10], R5 ;"),
        gatom(
            AtomicOp::Add,
            Ty::U32,
            Scope::Gpu,
            r(0),
            global(2, 16),
            5,
            None,
            false
        )
    );
    assert_eq!(
        atomic("ATOMG.E.CAS.STRONG.GPU PT, R0, [R2.64], R4, R5"),
        gatom(
            AtomicOp::Cas,
            Ty::U32,
            Scope::Gpu,
            r(0),
            global(2, 0),
            4,
            Some(reg(5)),
            false
        )
    );
    assert_eq!(
        atomic("ATOMG.E.CAS.64.STRONG.SYS PT, R4, [R2.64], R4, R6"),
        gatom(
            AtomicOp::Cas,
            Ty::U64,
            Scope::Sys,
            r(4),
            global(2, 0),
            4,
            Some(reg(6)),
            false
        )
    );
    assert_eq!(
        atomic("ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R0, [R2.64], R5"),
        gatom(
            AtomicOp::Add,
            Ty::F32,
            Scope::Gpu,
            r(0),
            global(2, 0),
            5,
            None,
            true
        )
    );
    assert_eq!(
        atomic("ATOMG.E.ADD.F64.RN.STRONG.CTA PT, R0, [R2.64], R4"),
        gatom(
            AtomicOp::Add,
            Ty::F64,
            Scope::Cta,
            r(0),
            global(2, 0),
            4,
            None,
            false
        )
    );
    assert_eq!(
        atomic("ATOMG.E.MIN.S64.STRONG.GPU PT, R0, [R2.64], R4")
            .access
            .ty,
        Ty::S64
    );
    assert_eq!(
        atomic("ATOMG.E.MAX.S32.STRONG.GPU PT, R0, [R2.64], R4")
            .access
            .ty,
        Ty::S32
    );
    assert_eq!(
        atomic("ATOMG.E.EXCH.U64.STRONG.GPU PT, R0, [R2.64], R4")
            .access
            .ty,
        Ty::U64
    );
    // Without .STRONG: relaxed at GPU scope. Without the leading PT: accepted.
    assert_eq!(
        atomic("ATOMG.E.INC R0, [R2.64-0x4], R4"),
        gatom(
            AtomicOp::Inc,
            Ty::U32,
            Scope::Gpu,
            r(0),
            global(2, -4),
            4,
            None,
            false
        )
    );
    // `.E` makes the base a pair even when `.64` is not written (sm_70 listings).
    assert_eq!(
        atomic("ATOMG.E.DEC.STRONG.GPU PT, R0, [R2], R4")
            .access
            .addr,
        global(2, 0)
    );
    // Without `.E`, a 32-bit base.
    assert_eq!(
        atomic("ATOMG.XOR PT, R0, [R2], R4").access.addr,
        Address::Linear(LinearAddress {
            base: Some(r(2)),
            base_bits: 32,
            offset: 0
        })
    );
    // ATOM addresses the generic space (ATOMG the global one).
    assert_eq!(
        atomic("ATOM.E.AND.STRONG.GPU PT, RZ, [R2.64], R4"),
        generic(gatom(
            AtomicOp::And,
            Ty::U32,
            Scope::Gpu,
            Reg::RZ,
            global(2, 0),
            4,
            None,
            false
        ))
    );
    assert_eq!(
        atomic("ATOMG.E.OR.STRONG.GPU PT, R0, [R2.64], R4").op,
        AtomicOp::Or
    );
}

#[test]
fn red_forms() {
    assert_eq!(
        atomic("RED.E.ADD.STRONG.GPU [R4.64], R11 ;"),
        generic(gatom(
            AtomicOp::Add,
            Ty::U32,
            Scope::Gpu,
            Reg::RZ,
            global(4, 0),
            11,
            None,
            false
        ))
    );
    assert_eq!(
        atomic("RED.E.ADD.F32.FTZ.RN.STRONG.GPU [R2.64], R5"),
        generic(gatom(
            AtomicOp::Add,
            Ty::F32,
            Scope::Gpu,
            Reg::RZ,
            global(2, 0),
            5,
            None,
            true
        ))
    );
    // REDG is the global-space reduction sm_90 prints.
    assert_eq!(
        atomic("REDG.E.ADD.STRONG.GPU desc[UR4][R2.64], R9"),
        gatom(
            AtomicOp::Add,
            Ty::U32,
            Scope::Gpu,
            Reg::RZ,
            global(2, 0),
            9,
            None,
            false
        )
    );
    assert_eq!(
        atomic("RED.E.MAX.S32.STRONG.SYS [R2.64+0x8], R5")
            .access
            .scope,
        Scope::Sys
    );
    assert_eq!(
        atomic("RED.E.EXCH.64.STRONG.GPU [R2.64], R4").access.ty,
        Ty::U64
    );
}

#[test]
fn global_atomic_errors() {
    err_at(
        "ATOMG.E.ADD.STRONG.GPU !P0, R0, [R2.64], R5",
        1,
        24,
        "cannot be negated",
    );
    err_at(
        "ATOMG.E.ADD.U32.FTZ PT, R0, [R2.64], R5",
        1,
        17,
        ".FTZ applies to .F32 only",
    );
    err_at(
        "ATOMG.E.ADD.U32.RN PT, R0, [R2.64], R5",
        1,
        17,
        ".RN applies to the float types only",
    );
    err_at(
        "ATOMG.E.ADD.F32.RZ PT, R0, [R2.64], R5",
        1,
        17,
        "round to nearest even only",
    );
    err_at(
        "ATOMG.E.CAST PT, R0, [R2.64], R5, R6",
        1,
        9,
        "unknown modifier `.CAST`",
    );
    err_at(
        "ATOMG.E.ADD.STRONG.XYZ PT, R0, [R2.64], R5",
        1,
        13,
        "unknown modifier `.STRONG.XYZ`",
    );
    err_at(
        "ATOMG.E.ADD PT, R0, [R2.64], R5, R6",
        1,
        34,
        "too many operands",
    );
    err_at("ATOMG.E.CAS PT, R0, [R2.64], R5", 1, 32, "too few operands");
    err_at("RED.E.CAS.STRONG.GPU [R2.64], R5", 1, 7, "RED has no .CAS");
    err_at("RED.E.ADD [R2.64], R5, R6", 1, 24, "too many operands");
    err_at("ATOMG.E PT, R0, [R2.64], R5", 1, 1, "needs an operation");
}

// ---------------------------------------------------------------------------------------------
// Companion instructions

const PARAMS: &str = ".buffer data u32[4] = 0\n.buffer out u64[2] = 0\n.param n u32 = 7\n";

/// The instructions of `PARAMS` followed by `text`.
fn op_with_params(text: &str) -> Op {
    kernel(&format!("{PARAMS}{text}\n")).insts.remove(0).op
}

#[test]
fn mov_forms() {
    assert_eq!(
        op("MOV R0, R1"),
        Op::Mov {
            ty: Ty::U32,
            dst: r(0),
            src: reg(1)
        }
    );
    assert_eq!(
        op("MOV R0, 0x1"),
        Op::Mov {
            ty: Ty::U32,
            dst: r(0),
            src: Operand::Imm(1)
        }
    );
    assert_eq!(
        op("MOV R0, -1"),
        Op::Mov {
            ty: Ty::U32,
            dst: r(0),
            src: Operand::Imm(0xffff_ffff)
        }
    );
    assert_eq!(
        op("MOV R1, c[0x0][0x28]"),
        Op::Mov {
            ty: Ty::U32,
            dst: r(1),
            src: Operand::Const {
                bank: 0,
                offset: 0x28
            }
        }
    );
    assert_eq!(
        op("MOV R0, R1, 0xf"),
        Op::Mov {
            ty: Ty::U32,
            dst: r(0),
            src: reg(1)
        }
    );
    assert_eq!(
        op("MOV32I R0, 0x3f800000"),
        Op::Mov {
            ty: Ty::U32,
            dst: r(0),
            src: Operand::Imm(0x3f80_0000)
        }
    );
    // Named constant-bank operands: data at 0x160, out at 0x168, n at 0x170.
    let cst = |offset| Op::Mov {
        ty: Ty::U32,
        dst: r(0),
        src: Operand::Const { bank: 0, offset },
    };
    assert_eq!(op_with_params("MOV R0, c[0x0][data]"), cst(0x160));
    assert_eq!(op_with_params("MOV R0, c[0x0][data+0x4]"), cst(0x164));
    assert_eq!(op_with_params("MOV R0, c[0x0][out + 4]"), cst(0x16c));
    assert_eq!(op_with_params("MOV R0, c[0x0][n]"), cst(0x170));
    assert_eq!(op_with_params("MOV R0, c[0x0][0x160]"), cst(0x160));
    err_at("MOV R0, R1, 0x3", 1, 13, "partial MOV lane masks");
    err_at("MOV R0, 0x100000000", 1, 9, "does not fit 32 bits");
    err_at("MOV R0, 1.5", 1, 9, "float immediate in an integer operand");
    err_at("MOV R0, c[0x0][nope]", 1, 16, "unknown parameter `nope`");
    let e = err_at(
        &format!("{PARAMS}MOV R0, c[0x0][nope]"),
        4,
        16,
        "unknown parameter",
    );
    assert!(e.expected.unwrap().contains("data out n"));
    err_at(
        &format!("{PARAMS}MOV R0, c[0x1][data]"),
        4,
        11,
        "constant bank 1 is not in the listing",
    );
    err_at("MOV R0, c[0x100][0x0]", 1, 11, "0..255");
    err_at("MOV R0, c[0x0][-4]", 1, 16, "out of range");
    let huge = "0x7fffffffffffffffffffffffffffffff";
    err_at(
        &format!("MOV R0, c[0x0][{huge}+{huge}+{huge}]"),
        1,
        16,
        "out of range",
    );
    err_at("MOV R0", 1, 7, "too few operands");
    err_at("MOV.U32 R0, R1", 1, 5, "unknown modifier `.U32` for MOV");
    err_at("MOV R0, foo", 1, 9, "expected the source, found a name");
}

#[test]
fn special_registers() {
    let names = [
        ("SR_TID.X", SpecialReg::TidX),
        ("SR_TID.Y", SpecialReg::TidY),
        ("SR_TID.Z", SpecialReg::TidZ),
        ("SR_CTAID.X", SpecialReg::CtaIdX),
        ("SR_CTAID.Y", SpecialReg::CtaIdY),
        ("SR_CTAID.Z", SpecialReg::CtaIdZ),
        ("SR_LANEID", SpecialReg::LaneId),
    ];
    for (name, sr) in names {
        assert_eq!(
            op(&format!("S2R R3, {name}")),
            Op::ReadSpecial { dst: r(3), sr }
        );
    }
    err_at("S2R R0, SR_CLOCKLO", 1, 9, "unknown special register");
    err_at("S2R R0, R1", 1, 9, "expected a special register");
    assert_eq!(
        op("CS2R R4, SRZ"),
        Op::Mov {
            ty: Ty::U64,
            dst: r(4),
            src: Operand::ZERO
        }
    );
    assert_eq!(
        op("CS2R.32 R4, SRZ"),
        Op::Mov {
            ty: Ty::U32,
            dst: r(4),
            src: Operand::ZERO
        }
    );
    err_at("CS2R R4, SR_TID.X", 1, 10, "CS2R supports only SRZ");
}

#[test]
fn iadd3_forms() {
    let none = [PredSrc::FALSE; 2];
    assert_eq!(
        op("IADD3 R0, R1, R2, RZ"),
        Op::IAdd3 {
            dst: r(0),
            carry_out: [Pred::PT; 2],
            a: rs(1),
            b: rs(2),
            c: rz(),
            carry_in: none
        }
    );
    assert_eq!(
        op("IADD3 R0, P0, R1, R2, RZ"),
        Op::IAdd3 {
            dst: r(0),
            carry_out: [Pred(0), Pred::PT],
            a: rs(1),
            b: rs(2),
            c: rz(),
            carry_in: none
        }
    );
    assert_eq!(
        op("IADD3 R0, P0, P1, R1, R2, R3"),
        Op::IAdd3 {
            dst: r(0),
            carry_out: [Pred(0), Pred(1)],
            a: rs(1),
            b: rs(2),
            c: rs(3),
            carry_in: none
        }
    );
    assert_eq!(
        op("IADD3.X R5, R2, R5, RZ, P0, !PT"),
        Op::IAdd3 {
            dst: r(5),
            carry_out: [Pred::PT; 2],
            a: rs(2),
            b: rs(5),
            c: rz(),
            carry_in: [p(0), PredSrc::FALSE]
        }
    );
    assert_eq!(
        op("IADD3.X R5, P2, R2, R5, RZ, P0, !P1"),
        Op::IAdd3 {
            dst: r(5),
            carry_out: [Pred(2), Pred::PT],
            a: rs(2),
            b: rs(5),
            c: rz(),
            carry_in: [p(0), notp(1)]
        }
    );
    assert_eq!(
        op("IADD3 R0, -R1, ~R2, -0x1"),
        Op::IAdd3 {
            dst: r(0),
            carry_out: [Pred::PT; 2],
            a: Src {
                operand: reg(1),
                modifier: SrcMod::Neg
            },
            b: Src {
                operand: reg(2),
                modifier: SrcMod::Not
            },
            c: imm(0xffff_ffff),
            carry_in: none
        }
    );
    assert!(matches!(
        op("IADD3 R0, R1, c[0x0][0x0], RZ"),
        Op::IAdd3 {
            b: Src {
                operand: Operand::Const { bank: 0, offset: 0 },
                ..
            },
            ..
        }
    ));
    err_at(
        "IADD3 R0, R1, R2, RZ, P0",
        1,
        23,
        "carry-in predicates only with .X",
    );
    err_at(
        "IADD3.X R0, R1, R2, RZ",
        1,
        23,
        "needs a carry-in predicate",
    );
    err_at(
        "IADD3 R0, P0, P1, P2, R1, R2, R3",
        1,
        19,
        "expected Ra, found a predicate",
    );
    err_at("IADD3 R0, R1, |R2|, RZ", 1, 15, "not allowed on Rb");
    err_at("IADD3 R0, R1, R2", 1, 17, "too few operands");
}

#[test]
fn imad_forms() {
    let imad = |mode, signed, a, b, c| Op::Imad {
        mode,
        signed,
        dst: r(0),
        a,
        b,
        c,
    };
    assert_eq!(
        op("IMAD R0, R1, R2, R3"),
        imad(ImadMode::Lo, true, rs(1), rs(2), rs(3))
    );
    assert_eq!(
        op("IMAD.U32 R0, R1, R2, R3"),
        imad(ImadMode::Lo, false, rs(1), rs(2), rs(3))
    );
    assert_eq!(
        op("IMAD.HI R0, R1, R2, RZ"),
        imad(ImadMode::Hi, true, rs(1), rs(2), rz())
    );
    assert_eq!(
        op("IMAD.HI.U32 R0, R1, R2, RZ"),
        imad(ImadMode::Hi, false, rs(1), rs(2), rz())
    );
    assert_eq!(
        op("IMAD.WIDE R0, R1, 0x4, R2"),
        imad(ImadMode::Wide, true, rs(1), imm(4), rs(2))
    );
    assert_eq!(
        op("IMAD.WIDE.U32 R0, R1, R2, -0x1"),
        imad(ImadMode::Wide, false, rs(1), rs(2), imm(u64::MAX))
    );
    assert_eq!(
        op("IMAD.MOV.U32 R0, RZ, RZ, c[0x0][0x28]"),
        imad(
            ImadMode::Lo,
            false,
            rz(),
            rz(),
            Src::plain(Operand::Const {
                bank: 0,
                offset: 0x28
            })
        )
    );
    assert_eq!(
        op("IMAD.SHL.U32 R0, R0, 0x4, RZ"),
        imad(ImadMode::Lo, false, rs(0), imm(4), rz())
    );
    assert_eq!(
        op("IMAD.IADD R0, R1, 0x1, R2"),
        imad(ImadMode::Lo, true, rs(1), imm(1), rs(2))
    );
    assert_eq!(
        op("IMAD.MOV R0, RZ, RZ, -R3"),
        imad(
            ImadMode::Lo,
            true,
            rz(),
            rz(),
            Src {
                operand: reg(3),
                modifier: SrcMod::Neg
            }
        )
    );
    // IMAD.X with a zero product is the high word of a 64-bit add: `Rc + Pp`.
    assert_eq!(
        op("IMAD.X R13, RZ, RZ, R3, P0"),
        Op::IAdd3 {
            dst: r(13),
            carry_out: [Pred::PT, Pred::PT],
            a: rz(),
            b: rs(3),
            c: rz(),
            carry_in: [p(0), PredSrc::FALSE],
        }
    );
    assert_eq!(
        op("IMAD.X R11, R3, 0x1, R9, P0"),
        Op::IAdd3 {
            dst: r(11),
            carry_out: [Pred::PT, Pred::PT],
            a: rs(3),
            b: rs(9),
            c: rz(),
            carry_in: [p(0), PredSrc::FALSE],
        }
    );
    err_at("IMAD.X R0, R1, R2, R3, P0", 1, 12, "product other than");
    err_at("IMAD.X R0, R1, R2, R3", 1, 22, "too few operands");
    err_at(
        "IMAD.WIDE.HI R0, R1, R2, R3",
        1,
        11,
        "conflicts with `.WIDE`",
    );
    err_at("IMAD R0, R1, ~R2, R3", 1, 14, "not allowed");
}

#[test]
fn lea_forms() {
    assert_eq!(
        op("LEA R2, P0, R0, c[0x0][0x160], 0x2"),
        Op::Lea {
            hi: false,
            sx32: false,
            dst: r(2),
            carry_out: Pred(0),
            a: rs(0),
            b: Src::plain(Operand::Const {
                bank: 0,
                offset: 0x160
            }),
            c: rz(),
            shift: 2,
            carry_in: PredSrc::FALSE
        }
    );
    assert_eq!(
        op("LEA.HI.X R3, R0, c[0x0][0x164], R1, 0x2, P0"),
        Op::Lea {
            hi: true,
            sx32: false,
            dst: r(3),
            carry_out: Pred::PT,
            a: rs(0),
            b: Src::plain(Operand::Const {
                bank: 0,
                offset: 0x164
            }),
            c: rs(1),
            shift: 2,
            carry_in: p(0)
        }
    );
    assert_eq!(
        op("LEA.HI.X.SX32 R3, R0, c[0x0][0x164], 0x1, P0"),
        Op::Lea {
            hi: true,
            sx32: true,
            dst: r(3),
            carry_out: Pred::PT,
            a: rs(0),
            b: Src::plain(Operand::Const {
                bank: 0,
                offset: 0x164
            }),
            c: rz(),
            shift: 1,
            carry_in: p(0)
        }
    );
    assert_eq!(
        op("LEA.HI R0, R1, R2, RZ, 0x1e"),
        Op::Lea {
            hi: true,
            sx32: false,
            dst: r(0),
            carry_out: Pred::PT,
            a: rs(1),
            b: rs(2),
            c: rz(),
            shift: 30,
            carry_in: PredSrc::FALSE
        }
    );
    assert_eq!(
        op("LEA R0, R1, R2, 0x3"),
        Op::Lea {
            hi: false,
            sx32: false,
            dst: r(0),
            carry_out: Pred::PT,
            a: rs(1),
            b: rs(2),
            c: rz(),
            shift: 3,
            carry_in: PredSrc::FALSE
        }
    );
    err_at("LEA R0, R1, R2, 0x20", 1, 17, "the shift must be 0..=31");
    err_at(
        "LEA R0, R1, R2, R3",
        1,
        17,
        "expected the shift (an immediate)",
    );
    err_at(
        "LEA.SX32 R0, R1, R2, 0x1",
        1,
        5,
        ".SX32 is only valid with .HI",
    );
    err_at(
        "LEA.X R0, R1, R2, 0x1, P0",
        1,
        5,
        ".X is only valid with .HI",
    );
    err_at("LEA.HI.X R0, R1, R2, R3, 0x1", 1, 29, "too few operands");
}

#[test]
fn shf_forms() {
    let shf = |left, wrap, high, ty, lo, shift, hi| {
        Op::Shf(ShfInst {
            left,
            wrap,
            high,
            ty,
            dst: r(0),
            lo,
            shift,
            hi,
        })
    };
    // SASS SHF.L without .HI is the plain left shift: the low word (IR `high` is `.HI`).
    assert_eq!(
        op("SHF.L.U32 R0, R1, 0x2, RZ"),
        shf(true, false, false, Ty::U32, rs(1), imm(2), rz())
    );
    assert_eq!(
        op("SHF.L.U64.HI R0, R1, 0x3, R5"),
        shf(true, false, true, Ty::U64, rs(1), imm(3), rs(5))
    );
    assert_eq!(
        op("SHF.R.U32.HI R0, RZ, 0x1e, R2"),
        shf(false, false, true, Ty::U32, rz(), imm(30), rs(2))
    );
    assert_eq!(
        op("SHF.R.S32.HI R0, RZ, 0x1f, R2"),
        shf(false, false, true, Ty::S32, rz(), imm(31), rs(2))
    );
    assert_eq!(
        op("SHF.R.U64 R0, R1, 0x2, R2"),
        shf(false, false, false, Ty::U64, rs(1), imm(2), rs(2))
    );
    assert_eq!(
        op("SHF.R.S64 R0, R1, R3, R2"),
        shf(false, false, false, Ty::S64, rs(1), rs(3), rs(2))
    );
    assert_eq!(
        op("SHF.L.W.U32.HI R0, R1, R3, R1"),
        shf(true, true, true, Ty::U32, rs(1), rs(3), rs(1))
    );
    err_at("SHF.U32 R0, R1, 0x2, RZ", 1, 1, "needs an direction");
    err_at("SHF.L R0, R1, 0x2, RZ", 1, 1, "needs an type");
    err_at("SHF.L.R.U32 R0, R1, 0x2, RZ", 1, 7, "conflicts with `.L`");
}

#[test]
fn lop3_forms() {
    assert_eq!(
        op("LOP3.LUT R0, R1, 0xff, RZ, 0xc0, !PT"),
        Op::Lop3 {
            dst: r(0),
            pred_out: Pred::PT,
            a: rs(1),
            b: imm(0xff),
            c: rz(),
            lut: 0xc0
        }
    );
    assert_eq!(
        op("LOP3.LUT P0, RZ, R4, 0x3, RZ, 0xc0, !PT"),
        Op::Lop3 {
            dst: Reg::RZ,
            pred_out: Pred(0),
            a: rs(4),
            b: imm(3),
            c: rz(),
            lut: 0xc0
        }
    );
    assert_eq!(
        op("LOP3.LUT R0, R1, R2, R3, 0x96, PT"),
        Op::Lop3 {
            dst: r(0),
            pred_out: Pred::PT,
            a: rs(1),
            b: rs(2),
            c: rs(3),
            lut: 0x96
        }
    );
    assert_eq!(
        op("LOP3.LUT R0, R1, R2, R3, 0xfe"),
        Op::Lop3 {
            dst: r(0),
            pred_out: Pred::PT,
            a: rs(1),
            b: rs(2),
            c: rs(3),
            lut: 0xfe
        }
    );
    err_at(
        "LOP3.LUT P0, R0, R1, R2, R3, 0xc0, PT",
        1,
        36,
        "must be !PT",
    );
    err_at("LOP3.LUT R0, R1, R2, R3, 0xc0, P1", 1, 32, "must be !PT");
    err_at("LOP3.LUT R0, R1, R2, R3, 0x100, !PT", 1, 26, "0..=255");
    err_at(
        "LOP3 R0, R1, R2, R3, 0x1, !PT",
        1,
        1,
        "needs an lookup-table",
    );
}

#[test]
fn isetp_forms() {
    assert_eq!(
        op("ISETP.GE.U32.AND P0, PT, R0, R1, PT"),
        Op::SetP {
            cmp: CmpOp::Ge,
            ty: Ty::U32,
            combine: BoolOp::And,
            dst: Pred(0),
            dst2: Pred::PT,
            a: rs(0),
            b: rs(1),
            c: PredSrc::TRUE,
            chain: None,
        }
    );
    let cmps = [
        ("EQ", CmpOp::Eq),
        ("NE", CmpOp::Ne),
        ("LT", CmpOp::Lt),
        ("LE", CmpOp::Le),
        ("GT", CmpOp::Gt),
        ("GE", CmpOp::Ge),
    ];
    let combines = [
        ("AND", BoolOp::And),
        ("OR", BoolOp::Or),
        ("XOR", BoolOp::Xor),
    ];
    for (cname, cmp) in cmps {
        for (bname, combine) in combines {
            for (sname, ty) in [("", Ty::S32), (".S32", Ty::S32), (".U32", Ty::U32)] {
                let text = format!("ISETP.{cname}{sname}.{bname} P1, P2, R3, 0x200, !P4");
                assert_eq!(
                    op(&text),
                    Op::SetP {
                        cmp,
                        ty,
                        combine,
                        dst: Pred(1),
                        dst2: Pred(2),
                        a: rs(3),
                        b: imm(0x200),
                        c: notp(4),
                        chain: None,
                    },
                    "{text}"
                );
            }
        }
    }
    assert!(matches!(
        op("ISETP.NE P0, PT, R0, RZ, PT"),
        Op::SetP {
            combine: BoolOp::And,
            ..
        }
    ));
    err_at("ISETP.AND P0, PT, R0, RZ, PT", 1, 1, "needs an comparison");
    // `.EX` chains the low words' result (the last operand) into a 64-bit comparison.
    assert_eq!(
        op("ISETP.GT.U32.AND.EX P0, PT, R9, R5, PT, P1"),
        Op::SetP {
            cmp: CmpOp::Gt,
            ty: Ty::U32,
            combine: BoolOp::And,
            dst: Pred(0),
            dst2: Pred::PT,
            a: rs(9),
            b: rs(5),
            c: PredSrc::TRUE,
            chain: Some(p(1)),
        }
    );
    err_at(
        "ISETP.NE.EX.AND P0, PT, R0, RZ, PT",
        1,
        35,
        "too few operands",
    );
    err_at(
        "ISETP.NE.AND !P0, PT, R0, RZ, PT",
        1,
        14,
        "cannot be negated",
    );
    err_at("ISETP.NE.AND P0, PT, R0, RZ", 1, 28, "too few operands");
}

#[test]
fn sel_popc_vote() {
    assert_eq!(
        op("SEL R0, R1, 0x5, !P2"),
        Op::Select {
            ty: Ty::U32,
            dst: r(0),
            a: rs(1),
            b: imm(5),
            pred: notp(2)
        }
    );
    assert_eq!(
        op("POPC R0, R1"),
        Op::Unary {
            op: UnOp::Popc,
            ty: Ty::U32,
            dst: r(0),
            a: rs(1)
        }
    );
    assert_eq!(
        op("POPC R0, ~R1"),
        Op::Unary {
            op: UnOp::Popc,
            ty: Ty::U32,
            dst: r(0),
            a: Src {
                operand: reg(1),
                modifier: SrcMod::Not
            }
        }
    );
    assert_eq!(
        op("VOTE.ANY R0, PT, P0"),
        Op::Vote {
            mode: VoteMode::Any,
            dst: r(0),
            dst_pred: Pred::PT,
            src: p(0)
        }
    );
    assert_eq!(
        op("VOTE.ALL R1, P1, !P0"),
        Op::Vote {
            mode: VoteMode::All,
            dst: r(1),
            dst_pred: Pred(1),
            src: notp(0)
        }
    );
    assert_eq!(
        op("VOTE.EQ P0, P1"),
        Op::Vote {
            mode: VoteMode::Eq,
            dst: Reg::RZ,
            dst_pred: Pred(0),
            src: p(1)
        }
    );
    err_at("VOTE R0, PT, P0", 1, 1, "needs an mode");
    err_at(
        "VOTE.ANY R0, R1, P0",
        1,
        14,
        "expected Pu (a predicate), found a register",
    );
    err_at("SEL R0, R1, R2", 1, 15, "too few operands");
}

#[test]
fn shared_loads_and_stores() {
    let lds = |ty, order, scope, addr| Op::Load {
        access: MemAccess {
            space: Space::Shared,
            ty,
            vector: 1,
            order,
            scope,
            addr,
        },
        dst: r(0),
    };
    assert_eq!(
        op("LDS R0, [R1]"),
        lds(Ty::U32, MemOrder::Weak, Scope::Cta, shared(Some(r(1)), 0))
    );
    for (m, ty) in [
        (".U8", Ty::U8),
        (".S8", Ty::S8),
        (".U16", Ty::U16),
        (".S16", Ty::S16),
        (".32", Ty::U32),
        (".64", Ty::U64),
    ] {
        assert_eq!(
            op(&format!("LDS{m} R0, [R1+0x4]")),
            lds(ty, MemOrder::Weak, Scope::Cta, shared(Some(r(1)), 4))
        );
    }
    assert_eq!(
        op("LDS.STRONG.GPU R0, [0x40]"),
        lds(Ty::U32, MemOrder::Relaxed, Scope::Gpu, shared(None, 0x40))
    );
    assert_eq!(
        op("STS.64 [R1-0x8], R2"),
        Op::Store {
            access: MemAccess {
                space: Space::Shared,
                ty: Ty::U64,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Cta,
                addr: shared(Some(r(1)), -8)
            },
            src: reg(2)
        }
    );
    // Stores have no signedness.
    assert!(matches!(
        op("STS.S8 [R1], R2"),
        Op::Store {
            access: MemAccess { ty: Ty::U8, .. },
            ..
        }
    ));
    assert!(matches!(
        op("STS.STRONG.CTA [R1], RZ"),
        Op::Store {
            access: MemAccess {
                order: MemOrder::Relaxed,
                scope: Scope::Cta,
                ..
            },
            ..
        }
    ));
    err_at("LDS.256 R0, [R1]", 1, 5, "unknown modifier `.256`");
    err_at("LDS.E R0, [R1]", 1, 5, "unknown modifier `.E`");
    err_at("LDS R0, [R2.64]", 1, 9, "remove `.64`");
    err_at(
        "STS [R1], 0x1",
        1,
        11,
        "expected Rb (a register), found an immediate",
    );
}

#[test]
fn global_loads_and_stores() {
    let ldg = |ty, order, scope, addr| Op::Load {
        access: MemAccess {
            space: Space::Global,
            ty,
            vector: 1,
            order,
            scope,
            addr,
        },
        dst: r(0),
    };
    assert_eq!(
        op("LDG.E R0, [R2.64]"),
        ldg(Ty::U32, MemOrder::Weak, Scope::Gpu, global(2, 0))
    );
    assert_eq!(
        op("LDG.E.64 R0, [R2.64+0x8]"),
        ldg(Ty::U64, MemOrder::Weak, Scope::Gpu, global(2, 8))
    );
    assert_eq!(
        op("LDG.E.U8 R0, [R2.64]"),
        ldg(Ty::U8, MemOrder::Weak, Scope::Gpu, global(2, 0))
    );
    assert_eq!(
        op("LDG.E.S16.STRONG.SYS R0, [R2.64]"),
        ldg(Ty::S16, MemOrder::Relaxed, Scope::Sys, global(2, 0))
    );
    assert_eq!(
        op("LDG.E.STRONG.GPU R0, [R2.64]"),
        ldg(Ty::U32, MemOrder::Relaxed, Scope::Gpu, global(2, 0))
    );
    assert_eq!(
        op("LDG.E.CONSTANT R0, [R2.64]"),
        ldg(Ty::U32, MemOrder::Weak, Scope::Gpu, global(2, 0))
    );
    assert_eq!(
        op("STG.E [R2.64+0x4], R5"),
        Op::Store {
            access: MemAccess {
                space: Space::Global,
                ty: Ty::U32,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Gpu,
                addr: global(2, 4)
            },
            src: reg(5)
        }
    );
    assert_eq!(
        op("STG.E.64.STRONG.GPU [R2.64], R4"),
        Op::Store {
            access: MemAccess {
                space: Space::Global,
                ty: Ty::U64,
                vector: 1,
                order: MemOrder::Relaxed,
                scope: Scope::Gpu,
                addr: global(2, 0)
            },
            src: reg(4)
        }
    );
    err_at(
        "LDG.E.CONSTANT.STRONG.GPU R0, [R2.64]",
        1,
        7,
        "cannot be .STRONG",
    );
    err_at(
        "STG.E.CONSTANT [R2.64], R0",
        1,
        7,
        "unknown modifier `.CONSTANT`",
    );
    err_at("LDG.E R0, R2", 1, 11, "expected a memory address");
}

#[test]
fn float_ops() {
    let fadd = |a, b, ftz| Op::Binary {
        op: BinOp::Add,
        ty: Ty::F32,
        dst: r(0),
        a,
        b,
        ftz,
    };
    assert_eq!(
        op("FADD R0, R1, -R2"),
        fadd(
            rs(1),
            Src {
                operand: reg(2),
                modifier: SrcMod::Neg
            },
            false
        )
    );
    assert_eq!(
        op("FADD.FTZ R0, R1, 1"),
        fadd(rs(1), imm(0x3f80_0000), true)
    );
    assert_eq!(
        op("FADD.RN R0, |R1|, -|R2|"),
        fadd(
            Src {
                operand: reg(1),
                modifier: SrcMod::Abs
            },
            Src {
                operand: reg(2),
                modifier: SrcMod::NegAbs
            },
            false
        )
    );
    assert_eq!(
        op("FADD R0, R1, 0x3fc00000"),
        fadd(rs(1), imm(0x3fc0_0000), false)
    );
    let fmul = |b: u64| Op::Binary {
        op: BinOp::Mul,
        ty: Ty::F32,
        dst: r(0),
        a: rs(1),
        b: imm(b),
        ftz: false,
    };
    assert_eq!(op("FMUL R0, R1, 0.5"), fmul(0.5f32.to_bits() as u64));
    assert_eq!(op("FMUL R0, R1, -2.5"), fmul((-2.5f32).to_bits() as u64));
    assert_eq!(op("FMUL R0, R1, 1e-3"), fmul(1e-3f32.to_bits() as u64));
    assert_eq!(op("FMUL R0, R1, +INF"), fmul(0x7f80_0000));
    assert_eq!(op("FMUL R0, R1, -INF"), fmul(0xff80_0000));
    assert_eq!(op("FMUL R0, R1, +QNAN"), fmul(0x7fff_ffff));
    assert_eq!(op("FMUL R0, R1, -QNAN"), fmul(0xffff_ffff));
    assert_eq!(op("FMUL R0, R1, -0"), fmul(0x8000_0000));
    // Correct rounding from the decimal text (0.1 is not exactly representable).
    assert_eq!(op("FMUL R0, R1, 0.1"), fmul(0.1f32.to_bits() as u64));
    err_at("FADD.RZ R0, R1, R2", 1, 6, "only round-to-nearest-even");
    err_at("FMUL.SAT R0, R1, R2", 1, 6, ".SAT is not supported");
    err_at("FMUL R0, R1, 1e39", 1, 14, "too large for a 32-bit float");
    err_at(
        "FMUL R0, R1, 1000000000000000000000000000000000000000",
        1,
        14,
        "too large",
    );
    assert_eq!(
        op("FMUL R0, R1, 3.4028235e38"),
        fmul(f32::MAX.to_bits() as u64)
    );
    err_at("FADD R0, R1, ~R2", 1, 14, "not allowed");
    err_at("FADD R0, R1, -0x3f800000", 1, 14, "raw 32-bit pattern");
}

#[test]
fn conversions() {
    let i2f = |src_ty, round| Op::Convert {
        dst_ty: Ty::F32,
        src_ty,
        round,
        ftz: false,
        dst: r(4),
        a: rs(0),
    };
    assert_eq!(op("I2F R4, R0"), i2f(Ty::S32, Round::Nearest));
    assert_eq!(op("I2F.U32.RP R4, R0"), i2f(Ty::U32, Round::Up));
    assert_eq!(op("I2F.F32.S32.RZ R4, R0"), i2f(Ty::S32, Round::Zero));
    assert_eq!(op("I2F.RM R4, R0"), i2f(Ty::S32, Round::Down));
    let f2i = |dst_ty, round, ftz| Op::Convert {
        dst_ty,
        src_ty: Ty::F32,
        round,
        ftz,
        dst: r(5),
        a: rs(4),
    };
    assert_eq!(op("F2I R5, R4"), f2i(Ty::S32, Round::Nearest, false));
    assert_eq!(
        op("F2I.FTZ.U32.TRUNC.NTZ R5, R4"),
        f2i(Ty::U32, Round::Zero, true)
    );
    assert_eq!(op("F2I.TRUNC.NTZ R5, R4"), f2i(Ty::S32, Round::Zero, false));
    assert_eq!(
        op("F2I.S32.F32.FLOOR R5, R4"),
        f2i(Ty::S32, Round::Down, false)
    );
    assert_eq!(op("F2I.U32.CEIL R5, R4"), f2i(Ty::U32, Round::Up, false));
    assert_eq!(
        op("I2F.F64.U32 R4, R0"),
        Op::Convert {
            dst_ty: Ty::F64,
            src_ty: Ty::U32,
            round: Round::Nearest,
            ftz: false,
            dst: r(4),
            a: rs(0),
        }
    );
    err_at("I2F.F16 R4, R0", 1, 5, "unknown modifier `.F16`");
    err_at("F2I.RN R5, R4", 1, 5, "unknown modifier `.RN`");
    err_at("I2F R4, 1.5", 1, 9, "float immediate in an integer operand");
}

#[test]
fn control_and_barriers() {
    assert_eq!(op("EXIT"), Op::Exit);
    assert_eq!(op("NOP"), Op::Nop);
    assert_eq!(op("ERRBAR"), Op::Nop);
    assert_eq!(op("CCTL.IVALL"), Op::Nop);
    assert_eq!(op("BAR.SYNC 0x0"), Op::Barrier { id: 0 });
    assert_eq!(op("BAR.SYNC.DEFER_BLOCKING 0x0"), Op::Barrier { id: 0 });
    assert_eq!(op("BAR.SYNC"), Op::Barrier { id: 0 });
    assert_eq!(op("BAR.SYNC 3"), Op::Barrier { id: 3 });
    for (text, scope) in [
        ("MEMBAR.CTA", Scope::Cta),
        ("MEMBAR.GPU", Scope::Gpu),
        ("MEMBAR.SYS", Scope::Sys),
        ("MEMBAR.GL", Scope::Gpu),
        ("MEMBAR.SC.GPU", Scope::Gpu),
        ("MEMBAR.ALL.CTA", Scope::Cta),
        ("MEMBAR.SC.SYS", Scope::Sys),
    ] {
        assert_eq!(
            op(text),
            Op::Fence {
                order: MemOrder::SeqCst,
                scope
            },
            "{text}"
        );
    }
    err_at("EXIT R0", 1, 6, "too many operands");
    err_at("EXIT.KEEPREFCOUNT", 1, 6, "unknown modifier");
    err_at("BAR.SYNC 16", 1, 10, "0..=15");
    err_at(
        "BAR.SYNC R0",
        1,
        10,
        "expected the barrier id (an immediate)",
    );
    err_at("BAR.ARV 0x0", 1, 5, "unknown modifier `.ARV`");
    err_at("MEMBAR", 1, 1, "needs an scope");
    err_at("CCTL R0", 1, 1, "needs an operation");
    err_at("FOO R0", 1, 1, "unknown instruction `FOO`");
    let e = err("ATOMX R0");
    assert!(e.expected.unwrap().contains("ATOMS ATOMG ATOM RED"));
}

#[test]
fn branches_and_labels() {
    let src = "\
loop:   S2R R0, SR_LANEID ;
        @P0 BRA loop ;
        BRA.U `(.L_x_0) ;
.L_x_0:
        BRA done
done:   EXIT ;
";
    let k = kernel(src);
    assert_eq!(
        k.labels,
        vec![
            ("loop".to_string(), 0),
            (".L_x_0".to_string(), 3),
            ("done".to_string(), 4)
        ]
    );
    assert_eq!(
        k.insts[1].op,
        Op::Branch {
            target: 0,
            uniform: false
        }
    );
    assert_eq!(
        k.insts[1].guard,
        Guard {
            pred: Pred(0),
            negate: false
        }
    );
    assert_eq!(
        k.insts[2].op,
        Op::Branch {
            target: 3,
            uniform: true
        }
    );
    assert_eq!(
        k.insts[3].op,
        Op::Branch {
            target: 4,
            uniform: false
        }
    );
    // A label may be used before it is defined, and named like a register.
    let k = kernel("BRA R1\nR1: EXIT");
    assert_eq!(
        k.insts[0].op,
        Op::Branch {
            target: 1,
            uniform: false
        }
    );
    err_at("BRA nowhere\nEXIT", 1, 5, "undefined label `nowhere`");
    err_at(
        "a: EXIT\na: EXIT",
        2,
        1,
        "duplicate label `a` (first defined on line 1)",
    );
    err_at("BRA end\nEXIT\nend:", 1, 5, "at the end of the kernel");
    err_at("0x10: EXIT", 1, 1, "not a valid label name");
    err_at("BRA", 1, 4, "too few operands");
    err_at("BRA.DIV x\nx: EXIT", 1, 10, "too few operands");
    err_at(
        "BRA.SOMETIMES x\nx: EXIT",
        1,
        5,
        "unknown modifier `.SOMETIMES`",
    );
    err_at("BRA [R1]\nEXIT", 1, 5, "expected a branch target");
}

#[test]
fn cuobjdump_listing_pastes_in() {
    let src = "\
        /*0000*/                   IMAD.MOV.U32 R1, RZ, RZ, c[0x0][0x28] ;      /* 0x00000a00ff017624 */
                                                                                /* 0x000fc400078e00ff */
        /*0010*/                   S2R R0, SR_TID.X ;                           /* 0x0000000000007919 */
                                                                                /* 0x000e220000002100 */
        /*0020*/                   ISETP.NE.AND P0, PT, R0, RZ, PT ;            /* 0x000000ff0000720c */
        /*0030*/              @!P0 BRA 0x50 ;                                   /* 0x0000001000008947 */
        /*0040*/                   EXIT ;                                       /* 0x000000000000794d */
        /*0050*/                   ATOMS.ADD RZ, [RZ], R0 ;                     /* 0x00000000ff00738c */
        /*0060*/                   EXIT ;
        /*0070*/                   BRA 0x70;
        /*0080*/                   NOP;
";
    let k = kernel(src);
    assert_eq!(k.insts.len(), 9);
    assert_eq!(
        k.insts[3].op,
        Op::Branch {
            target: 5,
            uniform: false
        }
    );
    assert_eq!(
        k.insts[7].op,
        Op::Branch {
            target: 7,
            uniform: false
        }
    );
    assert_eq!(k.insts[3].text, "@!P0 BRA 0x50");
    assert_eq!((k.insts[3].span.line, k.insts[3].span.col), (6, 31));
    err_at(
        "/*0000*/ BRA 0x40 ;\n/*0010*/ EXIT ;",
        1,
        14,
        "no instruction has address 0x40",
    );
    err_at(
        "/*0010*/ BRA 0x10 ;\n/*0010*/ EXIT ;",
        1,
        14,
        "given to several instructions",
    );
}

#[test]
fn statements_comments_and_semicolons() {
    // Several statements per line, a missing `;` at the end of a line, block comments.
    let k = kernel("NOP; NOP ; /* a\n comment */ NOP\n// only a comment\nEXIT");
    assert_eq!(
        k.insts.iter().map(|i| i.op.clone()).collect::<Vec<_>>(),
        vec![Op::Nop, Op::Nop, Op::Nop, Op::Exit]
    );
    err_at("# comment\nEXIT", 1, 1, "`#` starts a comment only after");
    err_at("NOP # comment", 1, 5, "`#` starts a comment only after");
    err_at("NOP /* open", 1, 5, "unterminated block comment");
    err_at("EXIT ; ;\n   ) ", 2, 4, "unexpected `)`");
}

// ---------------------------------------------------------------------------------------------
// Program files

const HIST: &str = "\
.kernel hist             // starts a kernel; directives below apply to it
.grid 64                 // CTAs: X[,Y[,Z]]
.block 256               // threads per CTA
.shared 1024
.buffer data u32[16384] = random(7, 0, 256)
.buffer hist u32[256] = 0
.param n u32 = 16384     // a scalar kernel parameter
    S2R R0, SR_TID.X ;
    LDG.E R2, [R4.64] ;
    ATOMS.ADD RZ, [R2], R0 ;
    EXIT ;
.expect sum(hist) == 16384
";

#[test]
fn program_file_directives() {
    let p = program(HIST);
    assert_eq!(p.source_name, "t.s");
    assert_eq!(p.source, HIST);
    let k = &p.kernels[0];
    assert_eq!(k.name, "hist");
    assert_eq!((k.dialect, k.warp_size), (Dialect::Sass, 32));
    assert_eq!((k.span.line, k.span.col), (1, 1));
    let l = &k.launch;
    assert_eq!(
        (l.grid, l.block, l.shared_bytes),
        ([64, 1, 1], [256, 1, 1], 1024)
    );
    let summary: Vec<(&str, u32)> = l
        .params
        .iter()
        .map(|p| (p.name.as_str(), p.cbank_offset))
        .collect();
    assert_eq!(summary, [("data", 0x160), ("hist", 0x168), ("n", 0x170)]);
    assert_eq!(
        l.params[0].kind,
        ParamKind::Buffer {
            elem: Ty::U32,
            len: 16384,
            init: Init::Random {
                seed: 7,
                range: Some((0, 256))
            }
        }
    );
    assert_eq!(
        l.params[2].kind,
        ParamKind::Scalar {
            ty: Ty::U32,
            value: Scalar::Int(16384)
        }
    );
    assert_eq!(l.params[1].span.line, 6);
    assert_eq!(l.expects.len(), 1);
    assert_eq!(
        l.expects[0].lhs,
        ExpectLhs::Sum {
            buffer: "hist".into()
        }
    );
    assert_eq!(l.expects[0].text, "sum(hist) == 16384");
    assert_eq!(l.expects[0].span.line, 12);
    // R4.64 is a pair: R4, R5 → 6 register slots; no predicates.
    assert_eq!((k.num_regs, k.num_preds), (6, 0));
}

#[test]
fn defaults_and_multiple_kernels() {
    let p = program(".kernel a\nEXIT\n.kernel b\n.block 8,8\n.grid 2,3,4\n@P3 EXIT\n");
    assert_eq!(p.kernels.len(), 2);
    assert_eq!(p.kernels[0].launch, LaunchSpec::default());
    assert_eq!(p.kernels[0].launch.block, [32, 1, 1]);
    assert_eq!(
        (p.kernels[1].launch.block, p.kernels[1].launch.grid),
        ([8, 8, 1], [2, 3, 4])
    );
    assert_eq!((p.kernels[1].num_regs, p.kernels[1].num_preds), (0, 4));
    assert_eq!(p.kernels[1].span.line, 3);
    // Expectations may use buffers declared later and come after the code.
    let k = kernel(".expect out[1] == 5\nEXIT\n.buffer out u32[2] = {0, 5}\n.expect out == {0, 5}");
    assert_eq!(k.name, "main");
    assert_eq!(k.launch.expects.len(), 2);
}

/// Thousands of labels, kernels and buffers: each name resolves to its own definition and a
/// repeated name is reported against its first definition (names are looked up by hash, not by
/// a search through every earlier one).
#[test]
fn many_labels_kernels_and_buffers() {
    const N: usize = 3000;
    // Labels: `BRA l{i}` jumps over one instruction to `l{i}:`.
    let mut src = String::new();
    for i in 0..N {
        src += &format!("BRA l{i} ;\nNOP ;\nl{i}:\n");
    }
    src += "EXIT ;\n";
    let k = kernel(&src);
    assert_eq!(k.labels.len(), N);
    assert_eq!(k.labels[N - 1], (format!("l{}", N - 1), 2 * N as u32));
    for i in [0, 1, N / 2, N - 1] {
        let want = Op::Branch {
            target: 2 * i as u32 + 2,
            uniform: false,
        };
        assert_eq!(k.insts[2 * i].op, want, "BRA l{i}");
    }
    let dup = format!("{src}l{}:\nEXIT ;\n", N / 2);
    let line = 3 * N as u32 + 2;
    let first = 3 * (N / 2) as u32 + 3;
    err_at(
        &dup,
        line,
        1,
        &format!(
            "duplicate label `l{}` (first defined on line {first})",
            N / 2
        ),
    );

    // Kernels.
    let mut src = String::new();
    for i in 0..N {
        src += &format!(".kernel k{i}\nEXIT ;\n");
    }
    let p = program(&src);
    assert_eq!(p.kernels.len(), N);
    assert_eq!(p.kernels[N - 1].name, format!("k{}", N - 1));
    let dup = format!("{src}.kernel k{}\nEXIT ;\n", N / 2);
    err_at(
        &dup,
        2 * N as u32 + 1,
        9,
        &format!(
            "duplicate kernel `k{}` (first declared on line {})",
            N / 2,
            2 * (N / 2) + 1
        ),
    );

    // Buffers, each named by an instruction and an expectation.
    let mut decls = String::new();
    let mut code = String::new();
    let mut expects = String::new();
    for i in 0..N {
        decls += &format!(".buffer b{i} u32[1] = 0\n");
        code += &format!("MOV R0, c[0x0][b{i}] ;\n");
        expects += &format!(".expect b{i}[0] == 0\n");
    }
    let k = kernel(&format!("{decls}{code}EXIT ;\n{expects}"));
    assert_eq!(k.launch.params.len(), N);
    assert_eq!(k.launch.expects.len(), N);
    for i in [0, 1, N / 2, N - 1] {
        let offset = 0x160 + 8 * i as u32;
        assert_eq!(k.launch.params[i].cbank_offset, offset);
        let want = Op::Mov {
            ty: Ty::U32,
            dst: r(0),
            src: Operand::Const { bank: 0, offset },
        };
        assert_eq!(k.insts[i].op, want, "c[0x0][b{i}]");
    }
    err_at(
        &format!("{decls}.param b{} u32 = 1\nEXIT ;\n", N / 2),
        N as u32 + 1,
        8,
        &format!("`b{}` is already declared on line {}", N / 2, N / 2 + 1),
    );
    let e = err_at(
        &format!("{decls}EXIT ;\n.expect nope[0] == 0\n"),
        N as u32 + 2,
        9,
        "unknown buffer `nope`",
    );
    assert!(e.expected.unwrap().starts_with("one of b0 b1 b2 "));
}

#[test]
fn register_counts_include_pairs() {
    assert_eq!(kernel("ATOMS.CAS.64 R0, [R9], R4, R6").num_regs, 10);
    assert_eq!(kernel("ATOMS.CAS.64 R0, [R2], R4, R6").num_regs, 8);
    assert_eq!(kernel("ATOMG.E.ADD.64 PT, R10, [R2.64], R4").num_regs, 12);
    assert_eq!(kernel("IMAD.WIDE R2, R0, 0x4, R8").num_regs, 10);
    assert_eq!(kernel("MOV R0, RZ\nATOMS.ADD RZ, [RZ], RZ").num_regs, 1);
    assert_eq!(kernel("CS2R R6, SRZ").num_regs, 8);
    assert_eq!(kernel("ISETP.NE.AND P2, P5, R0, RZ, !P1").num_preds, 6);
    assert_eq!(kernel("R254: MOV R254, RZ").num_regs, 255);
}

#[test]
fn program_file_errors() {
    err_at(
        ".kernel a\nEXIT\n.kernel a\nEXIT",
        3,
        9,
        "duplicate kernel `a` (first declared on line 1)",
    );
    err_at(
        "EXIT\n.kernel a\nEXIT",
        1,
        1,
        "an instruction before the first `.kernel`",
    );
    err_at(
        ".grid 2\n.kernel a\nEXIT",
        1,
        1,
        "`.grid` before the first `.kernel`",
    );
    err_at(
        ".kernel a\n.grid 2\n",
        1,
        1,
        "kernel `a` has no instructions",
    );
    err_at("// nothing\n", 1, 1, "the file has no kernel");
    err_at("", 1, 1, "the file has no kernel");
    err_at(".kernel\nEXIT", 1, 8, "`.kernel` needs a name");
    err_at(".kernel 9x\nEXIT", 1, 9, "not a valid kernel name");
    err_at(".kernel a b\nEXIT", 1, 11, "unexpected `b`");
    let e = err_at(".kernal a\nEXIT", 1, 1, "unknown directive `.kernal`");
    assert_eq!(
        e.expected.as_deref(),
        Some(
            "one of .kernel .grid .block .shared .static_shared .buffer .surface .param .expect \
             .payload"
        )
    );
    err_at(
        ".grid 2\n.grid 3\nEXIT",
        2,
        1,
        "duplicate `.grid` (already given on line 1)",
    );
    err_at(".block 1025\nEXIT", 1, 8, "1025 threads exceeds 1024");
    err_at(".block 32,32,2\nEXIT", 1, 8, "2048 threads");
    err_at(".block 32, 0\nEXIT", 1, 12, "cannot be zero");
    err_at(
        ".block 4294967295, 4294967295, 4294967295\nEXIT",
        1,
        8,
        "exceeds 1024",
    );
    err_at(".grid 0\nEXIT", 1, 7, "cannot be zero");
    err_at(".grid 1, 70000\nEXIT", 1, 7, "at most 65535");
    err_at(".shared 16777217\nEXIT", 1, 9, "exceed the 16 MiB window");
    assert_eq!(
        kernel(".shared 16777216\nEXIT").launch.shared_bytes,
        16777216
    );
    err_at(".shared -1\nEXIT", 1, 9, "between 0 and 2^64-1");
    err_at(
        ".buffer a u32[4] = 0\n.buffer a u32[4] = 0\nEXIT",
        2,
        9,
        "`a` is already declared on line 1",
    );
    err_at(
        ".buffer a u32[4] = 0\n.param a u32 = 0\nEXIT",
        2,
        8,
        "already declared",
    );
    err_at(
        ".buffer a u8[4] = {1, 2, 256}\nEXIT",
        1,
        26,
        "256 does not fit u8",
    );
    err_at(
        ".buffer a u8[2] = {1, 2, 3}\nEXIT",
        1,
        19,
        "only 2 elements",
    );
    err_at(".buffer a u8[2] = random(1, 0, 300)\nEXIT", 1, 32, "HI-1");
    err_at(
        ".buffer a u8[2] = random(1, 5, 2)\nEXIT",
        1,
        29,
        "must be less than HI",
    );
    err_at(
        ".buffer a q32[2] = 0\nEXIT",
        1,
        11,
        "unknown element type `q32`",
    );
    err_at(".param x s8 = 200\nEXIT", 1, 15, "200 does not fit s8");
    err_at(".param x f16 = 1e6\nEXIT", 1, 16, "too large for f16");
    err_at(
        ".buffer a u32[4] = 0 extra\nEXIT",
        1,
        22,
        "unexpected `extra`",
    );
    err_at(".expect nope[0] == 1\nEXIT", 1, 9, "unknown buffer `nope`");
    err_at(
        ".buffer a u32[4] = 0\n.expect a[4] == 1\nEXIT",
        2,
        11,
        "index 4 is outside `a` (4 elements)",
    );
    err_at(
        ".buffer a u32[4] = 0\n.expect a[2..5] == 1\nEXIT",
        2,
        14,
        "range end 5 is outside",
    );
    err_at(
        ".buffer a u32[4] = 0\n.expect a[0] == -1\nEXIT",
        2,
        17,
        "-1 does not fit u32",
    );
    err_at(
        ".buffer a u32[4] = 0\n.expect a == {1, 2}\nEXIT",
        2,
        14,
        "the list has 2 values but 4 elements are compared",
    );
    err_at(
        ".param n u32 = 1\n.expect n == 1\nEXIT",
        2,
        9,
        "scalar parameter, not a buffer",
    );
    err_at(
        ".buffer a u32[4] = 0\n.expect max(a) >= 1.5\nEXIT",
        2,
        19,
        "not an integer",
    );
    err_at(".expect a[1] => 1\nEXIT", 1, 14, "expected a comparison");
}

#[test]
fn other_dialects_are_reported() {
    // PTX and vISA have their own front-ends (`front::ptx`, `front::visa`): a vISA file is
    // read by the vISA parser, which wants a `.version` first.
    let e = parse("k.visa", "ret;", Dialect::Visa).unwrap_err();
    assert!(!e.message.contains("not supported"), "{e}");
    assert_eq!(e.file, "k.visa");
    assert_eq!(crate::front::dialect_for("a.ptx"), Dialect::Ptx);
    assert_eq!(crate::front::dialect_for("a.s"), Dialect::Sass);
}

#[test]
fn parse_error_display_names_file_line_col() {
    let e = err(".block 2000\nEXIT");
    assert_eq!(e.to_string(), "t.s:1:8: a block of 2000x1x1 = 2000 threads exceeds 1024 (expected at most 1024 threads per CTA)");
}

// ---------------------------------------------------------------------------------------------
// No panics on any input

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    const PIECES: &[&str] = &[
        "ATOMS",
        ".ADD",
        ".CAS",
        ".CAST",
        ".SPIN",
        ".U64",
        ".64",
        "ATOMG",
        ".E",
        ".STRONG",
        ".GPU",
        "RED",
        "IADD3",
        ".X",
        "IMAD",
        ".WIDE",
        "LEA",
        ".HI",
        ".SX32",
        "SHF",
        ".L",
        ".R",
        "LOP3",
        ".LUT",
        "ISETP",
        ".GE",
        ".AND",
        "VOTE",
        ".ANY",
        "LDS",
        "STG",
        "FADD",
        "F2I",
        "BRA",
        "EXIT",
        "BAR",
        ".SYNC",
        "MEMBAR",
        "S2R",
        "SR_TID.X",
        "R0",
        "R2.64",
        "RZ",
        "R255",
        "R999",
        "P0",
        "PT",
        "!PT",
        "@",
        "!",
        "[",
        "]",
        "+",
        "-",
        "~",
        "|",
        ",",
        ";",
        ":",
        "{",
        "}",
        "&",
        "?",
        "`",
        "(",
        ")",
        "0x10",
        "-400",
        "1.5",
        "+INF",
        "c",
        "[0x0]",
        "[0x160]",
        "[data]",
        ".kernel",
        ".grid",
        ".block",
        ".shared",
        ".buffer",
        ".param",
        ".expect",
        "data",
        "u32",
        "[4]",
        "=",
        "==",
        "..",
        "{1, 2}",
        "iota",
        "random(1, 0, 9)",
        "sum(data)",
        "count(data, 1)",
        "\n",
        " ",
        "/*0040*/",
        "/* x */",
        "//",
        "#",
        "L:",
        "L",
        "\u{e9}",
        "99999999999999999999999999999999999999999",
        "1e",
        "0x",
        "4294967295",
        "0xffffffffffffffff",
        "0x7fffffffffffffffffffffffffffffff",
        "-0x80000000",
        "2e38",
        "1e400",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        #[test]
        fn arbitrary_text_never_panics(s in "\\PC{0,200}") {
            let _ = parse("f.s", &s, Dialect::Sass);
        }

        #[test]
        fn token_soup_never_panics(parts in proptest::collection::vec(0..PIECES.len(), 0..40)) {
            let text: String = parts.iter().map(|&i| PIECES[i]).collect::<Vec<_>>().join(" ");
            let _ = parse("f.s", &text, Dialect::Sass);
            let glued: String = parts.iter().map(|&i| PIECES[i]).collect();
            let _ = parse("f.s", &glued, Dialect::Sass);
        }

        #[test]
        fn string_helpers_never_panic(s in "\\PC{0,60}") {
            let _ = crate::front::program::parse_scalar(&s);
            let _ = crate::front::program::parse_init(&s);
            let _ = crate::front::program::parse_expect(&s);
            let _ = crate::front::program::parse_buffer_decl(&s);
            let _ = crate::front::program::parse_param_decl(&s);
            let _ = crate::front::program::parse_dims(&s);
        }
    }
}

// ---- what ptxas 12.9 prints for sm_80 and sm_90 (issue 10) -----------------------------------

/// A kernel whose text names R0..R9 and P0..P1 (so `UR0` is slot 10 and `UP0` predicate 2)
/// followed by `line`; returns the kernel.
fn with_uniform(line: &str) -> Kernel {
    kernel(&format!(
        "MOV R9, RZ ;\nISETP.EQ.AND P1, PT, R0, RZ, PT ;\n{line} ;\nEXIT ;"
    ))
}

#[test]
fn uniform_registers_follow_the_vector_files() {
    let k = with_uniform("UIADD3 UR4, UR5, 0x1, URZ");
    assert_eq!(k.uniform.regs.start, 10);
    assert_eq!(k.uniform.preds.start, 2);
    assert_eq!(
        k.insts[2].op,
        Op::IAdd3 {
            dst: r(14),
            carry_out: [Pred::PT, Pred::PT],
            a: rs(15),
            b: imm(1),
            c: rz(),
            carry_in: [PredSrc::FALSE, PredSrc::FALSE],
        }
    );
    assert!(k.uniform.has_reg(r(14)) && !k.uniform.has_reg(r(9)));
    // A uniform predicate as a destination and as a guard.
    let k = kernel("ISETP.EQ.AND P0, PT, R3, RZ, PT ;\nUISETP.NE.AND UP0, UPT, UR6, URZ, UPT ;\n@UP0 EXIT ;\nEXIT ;");
    let up0 = Pred(k.uniform.preds.start);
    match &k.insts[1].op {
        Op::SetP { dst, dst2, c, .. } => {
            assert_eq!((*dst, *dst2, *c), (up0, Pred::PT, PredSrc::TRUE));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(k.insts[2].guard.pred, up0);
    // A kernel that names R254 still gets its uniform file (slots from 256 on).
    let k = kernel("MOV R254, RZ ;\nUMOV UR4, 0x7 ;\nEXIT ;");
    assert_eq!(k.uniform.regs.start, 256);
    assert!(k.uniform.has_reg(r(260)));
    // A kernel without uniform registers has no uniform file.
    assert!(kernel("MOV R0, RZ ;\nEXIT ;").uniform.is_empty());
    err_at("UMOV UR64, 0x1\nEXIT", 1, 6, "does not exist");
    // A uniform register as an address base is its slot.
    let k = with_uniform("ATOMS.ADD R0, [UR4+0x8], R3");
    match &k.insts[2].op {
        Op::Atomic(a) => assert_eq!(a.access.addr, shared(Some(r(14)), 8)),
        other => panic!("{other:?}"),
    }
}

#[test]
fn constant_bank_loads_and_uniform_moves() {
    let k = with_uniform("ULDC.64 UR4, c[0x0][0x118]");
    assert_eq!(
        k.insts[2].op,
        Op::Mov {
            ty: Ty::U64,
            dst: r(14),
            src: Operand::Const {
                bank: 0,
                offset: 0x118
            }
        }
    );
    assert_eq!(
        op("LDC R4, c[0x0][RZ]"),
        Op::Mov {
            ty: Ty::U32,
            dst: r(4),
            src: Operand::Const { bank: 0, offset: 0 }
        }
    );
    assert_eq!(
        op("LDC.64 R2, c[0x0][0x210]"),
        Op::Mov {
            ty: Ty::U64,
            dst: r(2),
            src: Operand::Const {
                bank: 0,
                offset: 0x210
            }
        }
    );
    err_at("LDC R4, c[0x0][R2]", 1, 16, "register-indexed");
    err_at("LDC R4, R2", 1, 9, "reads the constant bank");
    let k = with_uniform("S2UR UR5, SR_CgaCtaId");
    assert_eq!(
        k.insts[2].op,
        Op::ReadSpecial {
            dst: r(15),
            sr: SpecialReg::ClusterCtaRank
        }
    );
    assert_eq!(
        op("S2R R0, SR_LTMASK"),
        Op::ReadSpecial {
            dst: r(0),
            sr: SpecialReg::LanemaskLt
        }
    );
    // R2UR / MOV between the files are moves.
    let k = with_uniform("R2UR UR4, R2");
    assert_eq!(
        k.insts[2].op,
        Op::Mov {
            ty: Ty::U32,
            dst: r(14),
            src: reg(2)
        }
    );
}

#[test]
fn addresses_with_scale_uniform_index_and_descriptor() {
    let k = with_uniform("ATOMS.POPC.INC.32 RZ, [R2.X4+URZ]");
    match &k.insts[2].op {
        Op::Atomic(a) => {
            assert_eq!(a.op, AtomicOp::Add);
            assert_eq!(a.src, Operand::Imm(1));
            assert_eq!(a.dst, Reg::RZ);
            assert_eq!(
                a.access.addr,
                Address::Indexed(IndexedAddress {
                    base: r(2),
                    base_bits: 32,
                    scale: 2,
                    index: Reg::RZ,
                    index_bits: 32,
                    offset: 0,
                })
            );
        }
        other => panic!("{other:?}"),
    }
    // `[R6+URZ]` is the plain base form.
    let k = with_uniform("LDS R9, [R6+URZ]");
    match &k.insts[2].op {
        Op::Load { access, .. } => assert_eq!(access.addr, shared(Some(r(6)), 0)),
        other => panic!("{other:?}"),
    }
    let k = with_uniform("LDS R9, [R0+UR4+0x10]");
    match &k.insts[2].op {
        Op::Load { access, .. } => assert_eq!(
            access.addr,
            Address::Indexed(IndexedAddress {
                base: r(0),
                base_bits: 32,
                scale: 0,
                index: r(14),
                index_bits: 32,
                offset: 0x10,
            })
        ),
        other => panic!("{other:?}"),
    }
    // A memory descriptor does not change the address.
    match op("LDG.E R2, desc[UR6][R2.64+0x80]") {
        Op::Load { access, .. } => assert_eq!(access.addr, global(2, 0x80)),
        other => panic!("{other:?}"),
    }
    err_at("LDG.E R2, desc[R6][R2.64]", 1, 16, "uniform register");
    // Multi-byte characters in an address word are an error, not a panic.
    for text in [
        "LDS R0, [é.X4]",
        "LDS R0, [Rä]",
        "LDS R0, [.X4]",
        "LDS R0, [R1+éé]",
    ] {
        let _ = err(text);
    }
    // A uniform addend beside a 64-bit base has no confirmed meaning: refused.
    let e = err("UMOV UR4, 0x1 ;\nLDG.E R2, [R4.64+UR4] ;\nEXIT ;");
    assert!(e.message.contains("64-bit base"), "{e}");
    err_at(
        "ATOMS.POPC.INC.32 R3, [R2]",
        1,
        19,
        "with a result register is not supported",
    );
    // The generic loads of sm_80 (`LD.E`) and their strong forms.
    match op("LD.E.64.STRONG.SYS R14, [R6.64+0x10]") {
        Op::Load { access, dst } => {
            assert_eq!(dst, r(14));
            assert_eq!(access.space, Space::Generic);
            assert_eq!(access.ty, Ty::U64);
            assert_eq!(
                (access.order, access.scope),
                (MemOrder::Relaxed, Scope::Sys)
            );
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        atomic("ATOMG.E.CAS.STRONG.SM PT, R3, [R2], R6, R7")
            .access
            .scope,
        Scope::Cta
    );
}

#[test]
fn warp_bit_and_half_ops() {
    assert_eq!(
        op("SHFL.IDX PT, R3, R2, R5, 0x1f"),
        Op::Shfl {
            mode: ShflMode::Idx,
            dst: r(3),
            dst_pred: Pred::PT,
            a: reg(2),
            b: rs(5),
            c: imm(0x1f),
        }
    );
    assert_eq!(
        op("SHFL.BFLY P0, R3, R2, 0x1, 0x1f").clone(),
        Op::Shfl {
            mode: ShflMode::Bfly,
            dst: r(3),
            dst_pred: Pred(0),
            a: reg(2),
            b: imm(1),
            c: imm(0x1f),
        }
    );
    let k = with_uniform("REDUX.SUM UR5, R0");
    assert_eq!(
        k.insts[2].op,
        Op::Redux {
            op: BinOp::Add,
            ty: Ty::U32,
            dst: r(15),
            src: reg(0)
        }
    );
    let k = with_uniform("REDUX.MIN.S32 UR5, R0");
    assert!(matches!(
        k.insts[2].op,
        Op::Redux {
            op: BinOp::Min,
            ty: Ty::S32,
            ..
        }
    ));
    let k = with_uniform("REDUX UR5, R0");
    assert!(matches!(k.insts[2].op, Op::Redux { op: BinOp::And, .. }));
    let k = with_uniform("UFLO.U32 UR5, UR4");
    assert_eq!(
        k.insts[2].op,
        Op::Unary {
            op: UnOp::Bfind,
            ty: Ty::U32,
            dst: r(15),
            a: rs(14)
        }
    );
    assert!(matches!(
        op("FLO.U32.SH R0, ~R1"),
        Op::Unary {
            op: UnOp::BfindShift,
            ..
        }
    ));
    // Without a type FLO is signed (cuobjdump prints PTX's `bfind.s32` as `FLO`).
    assert!(matches!(
        op("FLO R9, R2"),
        Op::Unary {
            op: UnOp::Bfind,
            ty: Ty::S32,
            ..
        }
    ));
    assert_eq!(
        op("PRMT R0, R1, 0x7531, R2"),
        Op::Prmt {
            dst: r(0),
            a: rs(1),
            sel: imm(0x7531),
            b: rs(2)
        }
    );
    assert_eq!(
        op("VIADD R7, R7, 0x1"),
        Op::IAdd3 {
            dst: r(7),
            carry_out: [Pred::PT, Pred::PT],
            a: rs(7),
            b: imm(1),
            c: rz(),
            carry_in: [PredSrc::FALSE, PredSrc::FALSE],
        }
    );
    // HFMA2.MMA as a move: -0 * 0 + (0, 2^-24) = 0x0000_0001 (first immediate is the high half).
    assert_eq!(
        op("HFMA2.MMA R7, -RZ, RZ, 0, 5.9604644775390625e-08"),
        Op::Fma {
            ty: Ty::F16x2,
            dst: r(7),
            a: Src {
                operand: Operand::ZERO,
                modifier: SrcMod::Neg
            },
            b: rz(),
            c: imm(1),
            round: Round::Nearest,
            ftz: false,
            halves: HalfSel::AS_READ,
        }
    );
    assert!(matches!(
        op("HADD2.BF16_V2 R0, R1, R2"),
        Op::Fma { ty: Ty::BF16x2, .. }
    ));
    assert_eq!(
        op("PLOP3.LUT P0, PT, P1, P2, PT, 0x80, 0x8"),
        Op::PredLut {
            dst: [Pred(0), Pred::PT],
            a: p(1),
            b: p(2),
            c: PredSrc::TRUE,
            lut: [0x80, 0x8],
        }
    );
    // Convergence barriers and scheduling hints are no-ops; WARPSYNC waits at itself.
    for text in ["BSSY B0, `(.L_x_3)", "BSYNC B0", "YIELD"] {
        assert_eq!(op(text), Op::Nop, "{text}");
    }
    let k = kernel("NOP ;\nWARPSYNC 0xffff ;\nWARPSYNC.ALL ;\nEXIT ;");
    assert_eq!(
        k.insts[1].op,
        Op::BranchConverged {
            target: 1,
            mask: imm(0xffff),
            diverged: true
        }
    );
    assert_eq!(
        k.insts[2].op,
        Op::BranchConverged {
            target: 2,
            mask: imm(0xffff_ffff),
            diverged: true
        }
    );
    // A form whose meaning is not known is refused; the no-ops take exactly their operands.
    err_at("WARPSYNC.COLLECTIVE R5", 1, 10, "unknown modifier");
    err_at("BSYNC.ALL B0", 1, 7, "unknown modifier");
    err_at("BSYNC B0, B1", 1, 11, "too many operands");
    err_at("NANOSLEEP.SYNCS 0x40", 1, 11, "unknown modifier");
}

#[test]
fn float_compare_min_max_and_match_forms() {
    assert_eq!(
        op("DADD R10, R8, 0.25"),
        Op::Binary {
            op: BinOp::Add,
            ty: Ty::F64,
            dst: r(10),
            a: rs(8),
            b: imm(0.25f64.to_bits()),
            ftz: false,
        }
    );
    assert_eq!(
        op("DFMA R4, R2, -R6, 1"),
        Op::Fma {
            ty: Ty::F64,
            dst: r(4),
            a: rs(2),
            b: Src {
                operand: reg(6),
                modifier: SrcMod::Neg
            },
            c: imm(1.0f64.to_bits()),
            round: Round::Nearest,
            ftz: false,
            halves: HalfSel::AS_READ,
        }
    );
    assert!(matches!(
        op("FFMA.FTZ R0, R1, 2, R3"),
        Op::Fma {
            ty: Ty::F32,
            ftz: true,
            ..
        }
    ));
    assert_eq!(
        op("FSETP.GEU.AND P0, PT, R2, 0.5, PT"),
        Op::SetP {
            cmp: CmpOp::Geu,
            ty: Ty::F32,
            combine: BoolOp::And,
            dst: Pred(0),
            dst2: Pred::PT,
            a: rs(2),
            b: imm(u64::from(0.5f32.to_bits())),
            c: PredSrc::TRUE,
            chain: None,
        }
    );
    assert!(matches!(
        op("IMNMX.U32 R11, R11, R14, PT"),
        Op::Binary {
            op: BinOp::Min,
            ty: Ty::U32,
            ..
        }
    ));
    assert!(matches!(
        op("IMNMX R4, R11, R4, !PT"),
        Op::Binary {
            op: BinOp::Max,
            ty: Ty::S32,
            ..
        }
    ));
    err_at("IMNMX R4, R11, R4, P0", 1, 20, "selected per lane");
    assert_eq!(
        op("MATCH.ALL P4, R9, R3"),
        Op::Match {
            all: true,
            ty: Ty::B32,
            dst: r(9),
            dst_pred: Pred(4),
            src: reg(3)
        }
    );
    assert!(matches!(
        op("MATCH.ANY.U64 R5, R8"),
        Op::Match {
            all: false,
            ty: Ty::B64,
            ..
        }
    ));
    // The predicate destination of ATOM is the "performed" flag.
    let a = atomic("ATOM.E.ADD.64.STRONG.GPU P0, RZ, [R6.64], R4");
    assert_eq!((a.performed, a.access.space), (Pred(0), Space::Generic));
    assert_eq!(
        atomic("ATOMG.E.ADD.STRONG.GPU PT, R0, [R2.64], R5").performed,
        Pred::PT
    );
    assert_eq!(
        atomic("ATOM.E.ADD.F16x2.RN.STRONG.GPU PT, RZ, [R2.64], R5")
            .access
            .ty,
        Ty::F16x2
    );
    err_at("MUFU.RCP R0, R1", 1, 1, "hardware approximations");
    for text in ["NANOSLEEP 0x40", "NANOSLEEP R0", "BREAK B1"] {
        assert_eq!(op(text), Op::Nop, "{text}");
    }
}

#[test]
fn query_space() {
    assert_eq!(
        op("QSPC.E.S P0, RZ, [R4+0x8]"),
        Op::IsSpace {
            space: Space::Shared,
            dst: Pred(0),
            addr: global(4, 8),
        }
    );
    // Distributed shared memory: clusters of one CTA have none.
    assert_eq!(
        op("QSPC.E.D P0, RZ, [R6]"),
        Op::PredLogic {
            op: BoolOp::And,
            dst: Pred(0),
            a: PredSrc::FALSE,
            b: PredSrc::FALSE,
        }
    );
    err_at("QSPC.E.S P0, R3, [R4]", 1, 14, "result register");
    err_at("QSPC.E P0, RZ, [R4]", 1, 1, "needs an address-space");
}

#[test]
fn convergence_branches() {
    let k = kernel("BRA.CONV ~URZ, `(.L_x_1) ;\nNOP ;\n.L_x_1:\nEXIT ;");
    assert_eq!(
        k.insts[0].op,
        Op::BranchConverged {
            target: 2,
            mask: Src {
                operand: Operand::ZERO,
                modifier: SrcMod::Not
            },
            diverged: false,
        }
    );
    let k = kernel("UMOV UR6, 0xffff ;\n@!P1 BRA.DIV UR6, `(.L_x_1) ;\nNOP ;\n.L_x_1:\nEXIT ;");
    match &k.insts[1].op {
        Op::BranchConverged { diverged, .. } => assert!(*diverged),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        k.insts[1].guard,
        Guard {
            pred: Pred(1),
            negate: true
        }
    );
    err_at(
        "BRA.CONV `(.L_x_1) ;\n.L_x_1:\nEXIT ;",
        1,
        19,
        "too few operands",
    );
}

#[test]
fn generic_cast_spin_vimnmx_and_fsel() {
    let a = atomic("ATOM.E.CAST.SPIN PT, R11, [R8], R10, R11");
    assert_eq!(
        (a.op, a.spin, a.access.space, a.src2),
        (AtomicOp::Cast, true, Space::Generic, Some(reg(11)))
    );
    err_at(
        "ATOM.E.ADD.SPIN PT, R11, [R8], R10",
        1,
        12,
        ".SPIN is only valid with .CAST",
    );
    err_at(
        "ATOMG.E.CAST PT, R11, [R8], R10, R11",
        1,
        9,
        "unknown modifier `.CAST`",
    );
    assert!(matches!(
        op("VIMNMX R6, R4.reuse, R3.reuse, !PT"),
        Op::Binary {
            op: BinOp::Max,
            ty: Ty::S32,
            ..
        }
    ));
    assert_eq!(
        op("FSEL R7, -R3, R6, P0"),
        Op::Select {
            ty: Ty::F32,
            dst: r(7),
            a: Src {
                operand: reg(3),
                modifier: SrcMod::Neg
            },
            b: rs(6),
            pred: p(0),
        }
    );
}

#[test]
fn warpsync_exclusive_splits_until_the_bsync_of_its_region() {
    // sm_90: the split and the BSYNC in one region.
    let k = kernel(
        "BSSY B0, `(.L_x_1) ;\nWARPSYNC.EXCLUSIVE R5 ;\nNOP ;\nREDUX.SUM.S32 UR4, R2 ;\n\
         IMAD.U32 R9, RZ, RZ, UR4 ;\nBSYNC B0 ;\n.L_x_1:\nEXIT ;",
    );
    assert_eq!(
        k.insts[1].op,
        Op::WarpSplit {
            mask: Src::plain(Operand::Reg(Reg(5))),
            rejoin: 5,
            wait: true,
        }
    );
    // sm_80: the split in a called subroutine; its RET returns to the BSYNC after the call.
    let k = kernel(
        "/*0000*/ BSSY B0, 0x40 ;\n/*0010*/ MOV R6, 0x30 ;\n/*0020*/ CALL.REL.NOINC 0x50 ;\n\
         /*0030*/ BSYNC B0 ;\n/*0040*/ EXIT ;\n/*0050*/ WARPSYNC.EXCLUSIVE R3 ;\n\
         /*0060*/ REDUX.SUM.S32 UR4, R5 ;\n/*0070*/ RET.REL.NODEC R6 0x0 ;\n",
    );
    let (split, rejoin) = k
        .insts
        .iter()
        .enumerate()
        .find_map(|(pc, i)| match i.op {
            Op::WarpSplit { rejoin, .. } => Some((pc, rejoin)),
            _ => None,
        })
        .expect("a split");
    assert!(rejoin as usize > split);
    assert!(
        k.insts[rejoin as usize].text.starts_with("BSYNC"),
        "{:?}",
        k.insts[rejoin as usize]
    );
    // A region opened after the split is closed before the split's own BSYNC.
    let k = kernel(
        "BSSY B0, `(.L_x_1) ;\nWARPSYNC.EXCLUSIVE R5 ;\nBSSY B1, `(.L_x_2) ;\nNOP ;\n\
         BSYNC B1 ;\n.L_x_2:\nREDUX.SUM.S32 UR4, R2 ;\nBSYNC B0 ;\n.L_x_1:\nEXIT ;",
    );
    assert!(
        matches!(k.insts[1].op, Op::WarpSplit { rejoin: 6, .. }),
        "{:?}",
        k.insts[1]
    );
    // No BSYNC on the straight-line path: the rejoin point is unknown, an error.
    err_at("WARPSYNC.EXCLUSIVE R5 ;\nEXIT ;", 1, 1, "EXIT");
    err_at(
        "WARPSYNC.EXCLUSIVE R5 ;\n@P0 BRA `(.L_x_1) ;\nBSYNC B0 ;\n.L_x_1:\nEXIT ;",
        1,
        1,
        "before any BSYNC",
    );
    err_at("WARPSYNC.EXCLUSIVE R5 ;", 1, 1, "past the last instruction");
    err_at(
        "BSSY B0, `(.L_x_1) ;\nWARPSYNC.EXCLUSIVE ;\nBSYNC B0 ;\n.L_x_1:\nEXIT ;",
        2,
        19,
        "too few operands",
    );
}

#[test]
fn r2ur_with_a_predicate_tests_uniformity_and_moves_nothing() {
    assert_eq!(
        op("R2UR P0, URZ, R3"),
        Op::Match {
            all: true,
            ty: Ty::B32,
            dst: Reg::RZ,
            dst_pred: Pred(0),
            src: Operand::Reg(Reg(3)),
        }
    );
    err_at("R2UR P0, UR4, R3", 1, 10, "URZ");
    err_at("R2UR P0, RZ, R3", 1, 10, "URZ");
    err_at("R2UR R0, URZ, R3", 1, 6, "predicate");
}

#[test]
fn a_return_address_copied_in_the_callee_is_followed_only_when_nothing_else_touches_it() {
    // ptxas's fallbacks: the caller sets R7, the callee copies it into its RET register.
    let body = |extra: &str| {
        format!(
            "/*0000*/ MOV R7, 0x20 ;\n/*0010*/ CALL.REL.NOINC 0x30 ;\n/*0020*/ EXIT ;\n\
             /*0030*/ {extra}\n/*0040*/ IMAD.MOV.U32 R2, RZ, RZ, R7 ;\n\
             /*0050*/ RET.REL.NODEC R2 0x0 ;\n"
        )
    };
    let k = kernel(&body("NOP ;"));
    // The inlined RET branches to the instruction after the call (the EXIT).
    assert!(k.insts.iter().any(|i| matches!(i.op, Op::Exit)));
    // A callee that may write R7 itself (here as SHFL's destination, the second operand) or
    // its pair partner cannot be inlined on that evidence.
    for extra in [
        "SHFL.IDX PT, R7, R1, RZ, 0x1f ;",
        "IMAD.WIDE.U32 R6, R1, 0x4, RZ ;",
        "LDG.E.64 R6, [R2.64] ;",
    ] {
        let e = err(&body(extra));
        assert!(e.message.contains("return address"), "{extra}: {e}");
    }
}

#[test]
fn every_listed_mnemonic_is_known_to_the_dispatcher() {
    // The list the "unknown instruction" error offers holds only names the dispatcher lowers:
    // for each, a bare statement fails for its operands or modifiers, never as unknown.
    for m in crate::front::sass::MNEMONICS {
        if let Err(e) = parse("t.s", &format!("{m}\nEXIT"), Dialect::Sass) {
            assert!(!e.message.contains("unknown instruction"), "{m}: {e}");
        }
    }
}

#[test]
fn every_mnemonic_takes_short_and_odd_operand_lists_without_panicking() {
    let lists = [
        "",
        "R0",
        "PT",
        "R0, R1",
        "P0, R1",
        "PT, R0, [R2]",
        "R0, [R2], R3",
        "[R2.64], R3",
        "P0, PT, R1, R2",
        "R0, R1, 0x1, R2, P0",
        "UR4, c[0x0][0x0]",
        "R0, -RZ, RZ, 0, 1",
        "P0, R0, R1, R2, 0x1f, 0x1f, 0x1f",
        "R0, R1.H0_H0, -|R2|.reuse.H1_H1, 1",
        "R0, 1, 1, R1.H1_H1, 2",
        "R0, R1.H0_H0, PT",
    ];
    for m in crate::front::sass::MNEMONICS {
        for mods in ["", ".U32", ".64", ".E", ".X", ".BF16_V2", ".U16x2"] {
            for ops in lists {
                // An error or a kernel: either is fine, a panic is not.
                let _ = parse("t.s", &format!("{m}{mods} {ops}\nEXIT"), Dialect::Sass);
            }
        }
    }
}

#[test]
fn f2fp_packs_two_floats() {
    assert_eq!(
        op("F2FP.BF16.F32.PACK_AB R0, R3, 0.5"),
        Op::PackHalves {
            ty: Ty::BF16x2,
            dst: r(0),
            hi: rs(3),
            lo: imm(u64::from(0.5f32.to_bits())),
        }
    );
    assert!(matches!(
        op("F2FP.BF16.PACK_AB R0, R3, R4"),
        Op::PackHalves { ty: Ty::BF16x2, .. }
    ));
    err_at("F2FP.BF16.F32 R0, R3, R4", 1, 1, "needs an packing");
}

/// An HFMA2-family op with its selectors, for the tests below.
fn half_fma(ty: Ty, dst: u16, a: Src, b: Src, c: Src, halves: [HalfSel; 3]) -> Op {
    Op::Fma {
        ty,
        dst: r(dst),
        a,
        b,
        c,
        round: Round::Nearest,
        ftz: false,
        halves,
    }
}

fn modified(n: u16, modifier: SrcMod) -> Src {
    Src {
        operand: reg(n),
        modifier,
    }
}

// ---------------------------------------------------------------------------------------------
// 128-bit accesses and sm_90's wide atomics

/// Validation errors of a one-line SASS kernel (empty when it validates).
fn validation_messages(text: &str) -> Vec<String> {
    match crate::valid::validate(&kernel(&format!("{text}\nEXIT"))) {
        Ok(_) => Vec::new(),
        Err(e) => e.0.iter().map(|e| e.message.clone()).collect(),
    }
}

#[test]
fn half_selectors_on_half_precision_sources() {
    use HalfSel::{H0H0, H1H0, H1H1};
    // ptxas's atomicAdd on one __nv_bfloat16 (sm_80): R6.lo * R8.hi + (1.0, 1.0) in each half.
    assert_eq!(
        op("HFMA2.BF16_V2 R12, R6.H0_H0, R8.H1_H1, 1, 1"),
        half_fma(
            Ty::BF16x2,
            12,
            rs(6),
            rs(8),
            imm(0x3f80_3f80),
            [H0H0, H1H1, H1H0]
        )
    );
    // The immediate pair in the middle, as ptxas writes `HFMA2.BF16_V2 R5, R0, 1, 1, R4`.
    assert_eq!(
        op("HFMA2.BF16_V2 R5, R0, 1, 1, R4"),
        half_fma(
            Ty::BF16x2,
            5,
            rs(0),
            imm(0x3f80_3f80),
            rs(4),
            HalfSel::AS_READ
        )
    );
    // `.reuse` before the selector (cuobjdump's order) or after it, a negated selected addend.
    let want = half_fma(
        Ty::F16x2,
        5,
        rs(3),
        rs(2),
        modified(5, SrcMod::Neg),
        [H0H0, H0H0, H1H1],
    );
    assert_eq!(
        op("HFMA2 R5, R3.reuse.H0_H0, R2.H0_H0.reuse, -R5.H1_H1"),
        want
    );
    assert_eq!(op("HFMA2 R5, R3.h0_h0, R2.H0_H0, -R5.reuse.h1_h1"), want);
    // After an absolute value the suffixes follow the bars; inside them they are read too.
    let abs = half_fma(
        Ty::F16x2,
        0,
        modified(1, SrcMod::NegAbs),
        modified(2, SrcMod::Abs),
        rz(),
        [H1H1, H0H0, H1H0],
    );
    assert_eq!(op("HFMA2 R0, -|R1|.reuse.H1_H1, |R2|.H0_H0, RZ"), abs);
    assert_eq!(op("HFMA2 R0, -|R1.H1_H1|, |R2.reuse.H0_H0|, RZ"), abs);
    // HADD2 is a * 1 + b and HMUL2 a * b + (-0): each selector stays with its operand.
    assert_eq!(
        op("HADD2 R0, -R1.H1_H1, R2.H0_H0"),
        half_fma(
            Ty::F16x2,
            0,
            modified(1, SrcMod::Neg),
            imm(0x3c00_3c00),
            rs(2),
            [H1H1, H1H0, H0H0]
        )
    );
    assert_eq!(
        op("HMUL2.BF16_V2 R0, R1.H0_H0, R2.H1_H1"),
        half_fma(
            Ty::BF16x2,
            0,
            rs(1),
            rs(2),
            imm(0x8000_8000),
            [H0H0, H1H1, H1H0]
        )
    );
    // HADD2 with an immediate pair (high half first), as ptxas writes it.
    assert_eq!(
        op("HADD2 R6, R5, -0.25, 1"),
        half_fma(
            Ty::F16x2,
            6,
            rs(5),
            imm(0x3c00_3c00),
            imm(0xb400_3c00),
            HalfSel::AS_READ
        )
    );
    // A uniform register takes a selector too (`UR8.H0_H0`).
    let k = with_uniform("HFMA2 R1, R2.H1_H1, UR8.H0_H0, R3");
    assert_eq!(
        k.insts[2].op,
        half_fma(Ty::F16x2, 1, rs(2), rs(18), rs(3), [H1H1, H0H0, H1H0])
    );
    // The IR printer writes the selectors after their operands.
    let k = kernel("HFMA2.BF16_V2 R12, -R6.H0_H0, |R8|.H1_H1, 1, 1 ;\nEXIT ;");
    let text = crate::ir::print_kernel(&k);
    assert!(
        text.contains("fma.rn.bf16x2 R12, -R6.h0_h0, |R8|.h1_h1, 0x3f803f80"),
        "{text}"
    );
}

#[test]
fn malformed_or_misplaced_half_selectors_are_errors() {
    // Not a selector, an unsupported one, two selectors, a repeated suffix.
    err_at(
        "HFMA2 R0, R1.H0_H1, R2, R3",
        1,
        11,
        "unknown register suffix `.H0_H1`",
    );
    err_at(
        "HFMA2 R0, R1.H1_H0, R2, R3",
        1,
        11,
        "unknown register suffix `.H1_H0`",
    );
    err_at("HFMA2 R0, R1.F32, R2, R3", 1, 11, "`.F32` operand selector");
    err_at(
        "HFMA2 R0, R1.H0_H0.H1_H1, R2, R3",
        1,
        11,
        "one half selector",
    );
    err_at(
        "HFMA2 R0, R1.reuse.reuse, R2, R3",
        1,
        11,
        "`.REUSE` written twice",
    );
    err_at(
        "HFMA2 R0, R1.H0_H0., R2, R3",
        1,
        11,
        "unknown register suffix `.`",
    );
    err_at(
        "HFMA2 R0, -|R1|.H2_H2, R2, R3",
        1,
        13,
        "unknown register suffix `.H2_H2`",
    );
    // A pair, an integer modifier.
    err_at("HFMA2 R0, R2.64, R2, R3", 1, 11, "`.64` is only written");
    err_at(
        "HFMA2 R0, ~R1.H0_H0, R2, R3",
        1,
        11,
        "modifier is not allowed",
    );
    // A selector where no half pair is read: destinations, other ops, addresses, c[][].
    err_at("HFMA2 R0.H0_H0, R1, R2, R3", 1, 7, "half selector");
    err_at(
        "IADD3 R0, R1.H0_H0, R2, RZ",
        1,
        11,
        "only to the sources of HADD2",
    );
    err_at(
        "FFMA R0, R1, R2.H1_H1, R3",
        1,
        14,
        "only to the sources of HADD2",
    );
    err_at(
        "VIMNMX.U16x2 R0, R1.H1_H1, R2, PT",
        1,
        18,
        "only to the sources of HADD2",
    );
    err_at("LDG.E R0, [R2.H0_H0]", 1, 12, "an address register");
    err_at(
        "LDC R0, c[0x0][RZ.H0_H0]",
        1,
        16,
        "takes no `.64` or half selector",
    );
    err_at("HADD2 R0, R1, c[0x0][0x160].H0_H0", 1, 28, "unexpected");
    // Immediates come in pairs; the source count is the op's.
    err_at("HADD2 R0, R1, 1", 1, 15, "pair of numbers");
    err_at("HFMA2 R0, R1, 1, 2, 3", 1, 21, "pair of numbers");
    err_at("HADD2 R0, R1.H0_H0", 1, 19, "takes 2 sources");
    err_at("HFMA2 R0, R1, R2.H1_H1, R3, R4", 1, 31, "takes 3 sources");
    // Forms whose semantics atomjit does not implement are named.
    err_at("HADD2.F32 R0, -RZ, R1.H0_H0", 1, 7, "not supported");
    err_at("HFMA2.FTZ R0, R1, R2, R3", 1, 7, "not supported");
}

#[test]
fn suffixes_follow_the_bars_of_an_absolute_value() {
    // cuobjdump prints `FADD.FTZ R4, |R2|.reuse, -RZ`.
    assert_eq!(
        op("FADD R4, |R2|.reuse, -RZ"),
        Op::Binary {
            op: BinOp::Add,
            ty: Ty::F32,
            dst: r(4),
            a: modified(2, SrcMod::Abs),
            b: Src {
                operand: Operand::ZERO,
                modifier: SrcMod::Neg
            },
            ftz: false,
        }
    );
    assert!(matches!(
        op("FSETP.GT.AND P0, PT, -|R2|.reuse, 0.5, PT"),
        Op::SetP { a, .. } if a == modified(2, SrcMod::NegAbs)
    ));
    err_at(
        "FADD R4, |R2|.bogus, -RZ",
        1,
        11,
        "unknown register suffix `.BOGUS`",
    );
}

#[test]
fn iabs_is_the_wrapping_absolute_value() {
    assert_eq!(
        op("IABS R13, R6"),
        Op::Unary {
            op: UnOp::Abs,
            ty: Ty::S32,
            dst: r(13),
            a: rs(6),
        }
    );
    err_at("IABS.U32 R1, R2", 1, 6, "unknown modifier");
}

// ---- constant banks other than 0 ---------------------------------------------------------

/// An nvdisasm (without `-c`) listing of kernel `k`, whose code is `code`, with `sections`
/// (data sections) before it.
fn nvdisasm_listing(sections: &str, code: &str) -> String {
    format!(
        "\t.headerflags\t@\"EF_CUDA_64BIT_ADDRESS EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)\"\n\
         \t.elftype\t@\"ET_EXEC\"\n\
         {sections}\
         \t.section\t.nv.constant0.k,\"a\",@progbits\n\
         \t.align\t4\n\
         .nv.constant0.k:\n\
         \t.zero\t368\n\
         \t.section\t.text.k,\"ax\",@progbits\n\
         \t.other\tk,@\"STO_CUDA_ENTRY STV_DEFAULT\"\n\
         k:\n\
         .text.k:\n\
         {code}\
         \x20       /*0070*/                   EXIT ;\n"
    )
}

const BANK2: &str = "\t.section\t.nv.constant2.k,\"a\",@progbits\n\
    \t.sectionflags\t@\"\"\n\
    \t.align\t4\n\
    .nv.constant2.k:\n\
    \x20       /*0000*/ \t.byte\t0x08, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01\n\
    \x20       /*0008*/ \t.word\t0x11223344\n";

#[test]
fn a_listing_gives_its_kernels_constant_banks() {
    let p = program(&nvdisasm_listing(
        BANK2,
        "        /*0000*/                   IMAD R4, R5, R9, c[0x2][0x0] ;\n",
    ));
    let k = &p.kernels[0];
    // The bytes as printed; bank 0 (`.zero 368`) is the launch's, not the listing's.
    assert_eq!(
        k.launch.const_banks,
        [ConstBank {
            bank: 2,
            bytes: vec![8, 0, 0, 0, 1, 0, 0, 1, 0x44, 0x33, 0x22, 0x11],
        }]
    );
    match &k.insts[0].op {
        Op::Imad { c, .. } => assert_eq!(c.operand, Operand::Const { bank: 2, offset: 0 }),
        other => panic!("{other:?}"),
    }
    // A module bank (`.nv.constant3`, `__constant__` variables) belongs to every kernel; the
    // kernel's own bank of the same number would take its place.
    let module = "\t.section\t.nv.constant3,\"a\",@progbits\n\
                  \t.align\t4\n\
                  .nv.constant3:\n\
                  \t.type\tctab,@object\n\
                  ctab:\n\
                  \x20       /*0000*/ \t.byte\t0x01, 0x00, 0x00, 0x00\n\
                  \t.zero\t4\n";
    let p = program(&nvdisasm_listing(
        &format!("{module}{BANK2}"),
        "        /*0000*/                   LDC R4, c[0x3][0x4] ;\n",
    ));
    let banks: Vec<(u8, usize)> = p.kernels[0]
        .launch
        .const_banks
        .iter()
        .map(|b| (b.bank, b.bytes.len()))
        .collect();
    assert_eq!(banks, [(2, 12), (3, 8)]);
}

#[test]
fn a_cuobjdump_elf_listing_gives_the_same_banks() {
    let src = "\n64bit elf: type=2, abi=7, sm=80, toolkit=129, flags = 0x500550\n\
        Sections:\n\
        Index Offset   Size ES Align        Type    Flags Link     Info Name\n\
        \x20   c    c08      c  0  4        PROGBITS       42    0       10 .nv.constant2.k\n\
        \n\
        .nv.constant2.k\n\
        0x00000008 0x01000001 0x11223344 \n\
        \n\
        .nv.info.k\n\
        \t<0x1>\n\
        \tAttribute:\tEIATTR_CUDA_API_VERSION\n\
        \tValue:\t0x81 \n\
        \n\
        \tcode for sm_80\n\
        \t\tFunction : k\n\
        \t.headerflags\t@\"EF_CUDA_64BIT_ADDRESS EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)\"\n\
        \x20       /*0000*/                   IMAD R4, R5, R9, c[0x2][0x0] ;\n\
        \x20       /*0010*/                   EXIT ;\n\
        \t\t..........\n";
    let p = program(src);
    assert_eq!(
        p.kernels[0].launch.const_banks,
        [ConstBank {
            bank: 2,
            bytes: vec![8, 0, 0, 0, 1, 0, 0, 1, 0x44, 0x33, 0x22, 0x11],
        }]
    );
    // Errors after the dump keep their lines.
    let bad = src.replace(
        "IMAD R4, R5, R9, c[0x2][0x0]",
        "IMAD R4, R5, R9, c[0x5][0x0]",
    );
    let line = bad.lines().position(|l| l.contains("c[0x5]")).unwrap();
    let col = bad.lines().nth(line).unwrap().find("0x5]").unwrap();
    err_at(
        &bad,
        line as u32 + 1,
        col as u32 + 1,
        "constant bank 5 is not in the listing",
    );
}

#[test]
fn a_bank_the_listing_does_not_carry_is_refused_with_how_to_print_it() {
    let code = "        /*0000*/                   IMAD R4, R5, R9, c[0x2][0x0] ;\n";
    let e = err(&nvdisasm_listing("", code));
    assert!(
        e.message.contains("constant bank 2 is not in the listing"),
        "{e}"
    );
    assert!(e.message.contains("`cuobjdump -elf -sass`"), "{e}");
    assert!(e.message.contains("`nvdisasm` without `-c`"), "{e}");
    // A program file has only bank 0.
    err_at(
        "IMAD R4, R5, R9, c[0x2][0x0]",
        1,
        20,
        "a program file has only bank 0",
    );
    // A bank whose bytes the driver fills in (the address of a `__device__` variable).
    let reloc = "\t.section\t.nv.constant4,\"a\",@progbits\n\
                 \t.align\t8\n\
                 .nv.constant4:\n\
                 \x20       /*0000*/ \t.dword\tgvar\n";
    let e = err(&nvdisasm_listing(
        reloc,
        "        /*0000*/                   IADD3 R4, P0, R4, c[0x4][0x0], RZ ;\n",
    ));
    assert!(e.message.contains("constant bank 4 cannot be read"), "{e}");
    assert!(e.message.contains("`.dword gvar`"), "{e}");
}

// ---- MUFU.RCP as the seed of an integer division -----------------------------------------

/// ptxas's unsigned division of R0 by R1 (`udiv_reg` of tests/fixtures/listing/udiv.cu,
/// sm_80), quotient in R13.
const UDIV: &str = "I2F.U32.RP R10, R1 ;
IMAD.MOV R13, RZ, RZ, -R1 ;
ISETP.NE.U32.AND P2, PT, R1, RZ, PT ;
MUFU.RCP R10, R10 ;
IADD3 R8, R10, 0xffffffe, RZ ;
F2I.FTZ.U32.TRUNC.NTZ R9, R8 ;
HFMA2.MMA R8, -RZ, RZ, 0, 0 ;
IMAD R13, R13, R9, RZ ;
IMAD.HI.U32 R9, R9, R13, R8 ;
IMAD.HI.U32 R13, R9, R0, RZ ;
IMAD.MOV R9, RZ, RZ, -R13 ;
IMAD R6, R1, R9, R0 ;
ISETP.GE.U32.AND P0, PT, R6, R1, PT ;
@P0 IADD3 R6, -R1, R6, RZ ;
@P0 IADD3 R13, R13, 0x1, RZ ;
ISETP.GE.U32.AND P1, PT, R6, R1, PT ;
@P1 IADD3 R13, R13, 0x1, RZ ;
@!P2 LOP3.LUT R13, RZ, R1, RZ, 0x33, !PT ;
EXIT ;
";

#[test]
fn mufu_rcp_seeding_a_division_is_the_correctly_rounded_reciprocal() {
    let k = kernel(UDIV);
    assert_eq!(
        k.insts[3].op,
        Op::Binary {
            op: BinOp::Div,
            ty: Ty::F32,
            dst: r(10),
            a: imm(u64::from(1.0f32.to_bits())),
            b: rs(10),
            ftz: false,
        }
    );
    // The forms of the corpus: sm_90's VIADD, the signed division's I2F.RP of |d|, a
    // barrier and a WARPSYNC (a branch to itself) between I2F and MUFU (grid_barrier), the
    // divisor from the constant bank or a uniform register, one guard over all four.
    for text in [
        UDIV.replace("IADD3 R8, R10, 0xffffffe, RZ", "VIADD R8, R10, 0xffffffe"),
        UDIV.replace("I2F.U32.RP R10, R1", "IABS R10, R1 ;\nI2F.RP R10, R10"),
        UDIV.replace(
            "IMAD.MOV R13, RZ, RZ, -R1 ;",
            "IMAD.MOV R13, RZ, RZ, -R1 ;\nWARPSYNC 0xffffffff ;\nBAR.SYNC.DEFER_BLOCKING 0x0 ;",
        ),
        UDIV.replace("I2F.U32.RP R10, R1", "I2F.U32.RP R10, c[0x0][0x0]"),
        UDIV.replace("I2F.U32.RP R10, R1", "I2F.U32.RP R10, UR4"),
        UDIV.replace("I2F.U32.RP", "@P3 I2F.U32.RP")
            .replace("MUFU.RCP", "@P3 MUFU.RCP")
            .replace("IADD3 R8, R10", "@P3 IADD3 R8, R10")
            .replace("F2I.FTZ", "@P3 F2I.FTZ"),
    ] {
        kernel(&text);
    }
}

/// Asserts that `text` is refused at the `MUFU` (line `line`) for the division-seed rule,
/// with `why` in the message.
fn refused_seed(text: &str, line: u32, why: &str) {
    let e = err_at(text, line, 1, "hardware approximations");
    assert!(
        e.message
            .contains("only as the seed of ptxas's integer division"),
        "{e}"
    );
    assert!(
        e.message.contains(why),
        "message `{}` lacks `{why}`",
        e.message
    );
}

#[test]
fn vimnmx_on_packed_16_bit_pairs() {
    assert_eq!(
        op("VIMNMX.U16x2 R7, R10, R12, PT"),
        Op::PackedMinMax {
            op: BinOp::Min,
            ty: Ty::U16,
            dst: r(7),
            a: rs(10),
            b: rs(12),
        }
    );
    assert_eq!(
        op("VIMNMX.S16x2 R7, R8.reuse, R12, !PT"),
        Op::PackedMinMax {
            op: BinOp::Max,
            ty: Ty::S16,
            dst: r(7),
            a: rs(8),
            b: rs(12),
        }
    );
    // The 32-bit forms stay Binary; `.U32` is unsigned.
    assert!(matches!(
        op("VIMNMX.U32 R7, R8, R12, PT"),
        Op::Binary {
            op: BinOp::Min,
            ty: Ty::U32,
            ..
        }
    ));
    // A per-lane predicate, a modifier, two types, IMNMX (no packed form).
    err_at("VIMNMX.U16x2 R7, R8, R12, P0", 1, 27, "selected per lane");
    err_at(
        "VIMNMX.S16x2 R7, -R8, R12, PT",
        1,
        18,
        "modifier is not allowed",
    );
    err_at("VIMNMX.U16x2.S16x2 R7, R8, R12, PT", 1, 14, "");
    err_at("IMNMX.U16x2 R7, R8, R12, PT", 1, 7, "unknown modifier");
    err_at("VIMNMX.U16x2 R7, R8, R12", 1, 25, "too few operands");
}

#[test]
fn mufu_is_refused_outside_the_division_seed() {
    // Other functions, and other forms of RCP, are refused as they are lowered.
    for text in [
        "MUFU.SQRT R0, R1",
        "MUFU.EX2 R5, R4",
        "MUFU.RSQ R4, R3",
        "MUFU.RCP64H R7, R3",
        "MUFU.RCP R0, 2",
        "MUFU.RCP R0, -R1",
        "MUFU.RCP.FTZ R0, R1",
        "MUFU.RCP R0, R1, R2",
    ] {
        let e = err_at(&format!("{text}\nEXIT"), 1, 1, "hardware approximations");
        assert!(
            e.message.contains("MUFU.RCP` only as the seed"),
            "{text}: {e}"
        );
    }
    // ptxas's f32 division: the reciprocal refined by FFMAs, not a seed.
    refused_seed(
        "MUFU.RCP R9, R2 ;\nFFMA R8, -R2, R9, 1 ;\nFFMA R8, R9, R8, R9 ;\nEXIT",
        1,
        "no `I2F.U32.RP R2` or `I2F.RP R2` writes its source",
    );
    // The reciprocal feeding a multiplication.
    refused_seed(
        "I2F.U32.RP R5, R0 ;\nMUFU.RCP R5, R5 ;\nFMUL R2, R5, R5 ;\nEXIT",
        2,
        "goes to `FMUL R2, R5, R5`, not to `IADD3 ..., R5, 0xffffffe, RZ`",
    );
    let u = |from: &str, to: &str| {
        assert!(UDIV.contains(from), "{from}");
        UDIV.replace(from, to)
    };
    // The source rounded to nearest, not up.
    refused_seed(
        &u("I2F.U32.RP R10, R1", "I2F.U32 R10, R1"),
        4,
        "comes from `I2F.U32 R10, R1`",
    );
    // Another bias, another conversion.
    refused_seed(
        &u("0xffffffe", "0x1"),
        4,
        "goes to `IADD3 R8, R10, 0x1, RZ`",
    );
    refused_seed(
        &u("F2I.FTZ.U32.TRUNC.NTZ", "F2I.FTZ.S32.TRUNC.NTZ"),
        4,
        "goes to `F2I.FTZ.S32.TRUNC.NTZ R9, R8`, not to `F2I.FTZ.U32.TRUNC.NTZ`",
    );
    refused_seed(
        &u("F2I.FTZ.U32.TRUNC.NTZ", "F2I.U32.TRUNC.NTZ"),
        4,
        "not to `F2I.FTZ.U32.TRUNC.NTZ`",
    );
    // The reciprocal, or the biased value, read again later.
    refused_seed(
        &u("IMAD R6, R1, R9, R0", "IMAD R6, R1, R10, R0"),
        4,
        "its result R10 is read again after `IADD3 R8, R10, 0xffffffe, RZ`",
    );
    refused_seed(
        &u("HFMA2.MMA R8, -RZ, RZ, 0, 0", "IADD3 R8, R8, 0x1, RZ"),
        4,
        "the biased value R8 is read again",
    );
    // A branch into the sequence, or out of it.
    refused_seed(
        &u("MUFU.RCP R10, R10 ;", "back:\nMUFU.RCP R10, R10 ;")
            .replace("EXIT ;", "@P0 BRA back ;\nEXIT ;"),
        5,
        "writes its source in the straight-line code before it",
    );
    refused_seed(
        &u("MUFU.RCP R10, R10 ;", "MUFU.RCP R10, R10 ;\n@P0 BRA out ;")
            .replace("EXIT ;", "out: EXIT ;"),
        4,
        "is not used by an `IADD3 ..., R10, 0xffffffe, RZ` in the straight-line code",
    );
    // Guards: not the same on all four, or changed in between.
    refused_seed(
        &u("MUFU.RCP", "@P3 MUFU.RCP"),
        4,
        "`I2F.U32.RP R10, R1` and the `MUFU.RCP` have different guards",
    );
    refused_seed(
        &UDIV
            .replace("I2F.U32.RP", "@P2 I2F.U32.RP")
            .replace("MUFU.RCP", "@P2 MUFU.RCP")
            .replace("IADD3 R8, R10", "@P2 IADD3 R8, R10")
            .replace("F2I.FTZ", "@P2 F2I.FTZ"),
        4,
        "`ISETP.NE.U32.AND P2, PT, R1, RZ, PT` changes the guard",
    );
}

#[test]
fn loads_and_stores_of_128_bits_are_vectors_of_two_u64() {
    let access = |space, addr| MemAccess {
        space,
        ty: Ty::U64,
        vector: 2,
        order: MemOrder::Weak,
        scope: if space == Space::Shared {
            Scope::Cta
        } else {
            Scope::Gpu
        },
        addr,
    };
    assert_eq!(
        op("LDG.E.128 R16, [R4.64]"),
        Op::Load {
            access: access(Space::Global, global(4, 0)),
            dst: r(16)
        }
    );
    assert_eq!(
        op("STG.E.128 [R6.64+0x10], R20"),
        Op::Store {
            access: access(Space::Global, global(6, 0x10)),
            src: reg(20)
        }
    );
    assert_eq!(
        op("LDS.128 R8, [R1+0x20]"),
        Op::Load {
            access: access(Space::Shared, shared(Some(r(1)), 0x20)),
            dst: r(8)
        }
    );
    assert!(matches!(
        op("ST.E.128 [R2.64], R12"),
        Op::Store {
            access: MemAccess {
                space: Space::Generic,
                vector: 2,
                ..
            },
            ..
        }
    ));
    assert!(matches!(
        op("LDG.E.128.STRONG.GPU R16, [R4.64]"),
        Op::Load {
            access: MemAccess {
                order: MemOrder::Relaxed,
                vector: 2,
                ..
            },
            ..
        }
    ));
    // The data is a register quad: Rd/Rb a multiple of 4 (ptxas's `LDG.E.128 R16`).
    assert!(validation_messages("LDG.E.128 R16, [R4.64]").is_empty());
    let m = validation_messages("LDG.E.128 R6, [R4.64]");
    assert!(
        m.iter()
            .any(|m| m.contains("misaligned 128-bit destination quad R6")),
        "{m:?}"
    );
    let m = validation_messages("STS.128 [R1], R10");
    assert!(
        m.iter()
            .any(|m| m.contains("misaligned 128-bit source quad R10")),
        "{m:?}"
    );
    err_at("LDG.E.128.64 R16, [R4.64]", 1, 11, "conflicts with `.128`");
}

#[test]
fn sm90_vector_atomics_are_vectors_of_elements() {
    let vatom = |op, ty, vector, dst: Reg, src: u16, ftz| AtomicInst {
        access: MemAccess {
            space: Space::Global,
            ty,
            vector,
            order: MemOrder::Relaxed,
            scope: Scope::Gpu,
            addr: global(8, 0),
        },
        op,
        dst,
        src: reg(src),
        src2: None,
        spin: false,
        ftz,
        performed: Pred::PT,
    };
    // What ptxas 12.9 writes for `atomicAdd(float2 *, float2)` on sm_90.
    assert_eq!(
        atomic("REDG.E.ADD.F32x2.FTZ.RN.STRONG.GPU [R8.64], R14"),
        vatom(AtomicOp::Add, Ty::F32, 2, Reg::RZ, 14, true)
    );
    let mut a = vatom(AtomicOp::Add, Ty::F32, 4, r(16), 28, true);
    a.performed = Pred::PT;
    assert_eq!(
        atomic("ATOMG.E.ADD.F32x4.FTZ.RN.STRONG.GPU PT, R16, [R8.64], R28"),
        a
    );
    // `.F16x8` is four packed pairs, `.BF16x4` two.
    assert_eq!(
        atomic("ATOMG.E.ADD.F16x8.RN.STRONG.GPU PT, R4, [R8.64], R4"),
        vatom(AtomicOp::Add, Ty::F16x2, 4, r(4), 4, false)
    );
    assert_eq!(
        atomic("REDG.E.MIN.BF16x4.RN.STRONG.GPU [R8.64], R20"),
        vatom(AtomicOp::Min, Ty::BF16x2, 2, Reg::RZ, 20, false)
    );
    // The generic forms (ptxas's `red.add.v2.f32` through a generic pointer).
    assert_eq!(
        atomic("ATOM.E.ADD.F32x2.FTZ.RN.STRONG.GPU PT, RZ, [R8.64], R28")
            .access
            .space,
        Space::Generic
    );
    // sm_90's scalar min/max of a packed pair (`atom.max.noftz.v2.bf16`).
    assert_eq!(
        atomic("ATOMG.E.MAX.BF16x2.RN.STRONG.GPU PT, R0, [R8.64], R5"),
        vatom(AtomicOp::Max, Ty::BF16x2, 1, r(0), 5, false)
    );
    for ok in [
        "REDG.E.ADD.F32x2.FTZ.RN.STRONG.GPU [R8.64], R14",
        "ATOMG.E.ADD.F32x4.FTZ.RN.STRONG.GPU PT, R16, [R8.64], R28",
        "ATOMG.E.MAX.BF16x8.RN.STRONG.GPU PT, R16, [R8.64], R28",
        "ATOMG.E.MAX.BF16x2.RN.STRONG.GPU PT, R0, [R8.64], R5",
    ] {
        assert!(validation_messages(ok).is_empty(), "{ok}");
    }
    // Not vector atomics: an f32 add that does not flush, a min of f32 pairs.
    for (bad, want) in [
        (
            "REDG.E.ADD.F32x2.RN.STRONG.GPU [R8.64], R14",
            "add.v2.f32 is not a vector atomic",
        ),
        (
            "REDG.E.MIN.F32x2.FTZ.RN.STRONG.GPU [R8.64], R14",
            "min.v2.f32 (ftz) is not a vector atomic",
        ),
        (
            "ATOMG.E.ADD.F32x4.FTZ.RN.STRONG.GPU PT, R18, [R8.64], R28",
            "misaligned 128-bit destination quad R18",
        ),
        (
            "REDG.E.ADD.F32x2.FTZ.RN.STRONG.GPU [R8.64], R15",
            "misaligned 64-bit source pair R15",
        ),
    ] {
        let m = validation_messages(bad);
        assert!(m.iter().any(|m| m.contains(want)), "{bad}: {m:?}");
    }
    err_at(
        "ATOMS.ADD.F32x2 R0, [R1], R4",
        1,
        11,
        "unknown modifier `.F32X2`",
    );
}

#[test]
fn sm90_atomics_of_128_bits() {
    let a = atomic("ATOMG.E.EXCH.128.STRONG.GPU PT, R4, [R4.64], R20");
    assert_eq!(
        (a.op, a.access.ty, a.access.vector, a.dst, a.src, a.src2),
        (AtomicOp::Exch, Ty::B128, 1, r(4), reg(20), None)
    );
    // ptxas writes the 64-bit base of `.E` without `.64` here: `[R18]`.
    let a = atomic("ATOMG.E.CAS.128.STRONG.GPU PT, R20, [R18], R8, R12");
    assert_eq!(
        (a.op, a.access.ty, a.dst, a.src, a.src2),
        (AtomicOp::Cas, Ty::B128, r(20), reg(8), Some(reg(12)))
    );
    assert_eq!(a.access.addr, global(18, 0));
    let a = atomic("ATOMS.CAS.128 R8, [R3], R8, R12");
    assert_eq!(
        (a.access.space, a.access.ty, a.src2),
        (Space::Shared, Ty::B128, Some(reg(12)))
    );
    assert_eq!(atomic("ATOMS.EXCH.128 R4, [R3], R0").access.ty, Ty::B128);
    assert_eq!(
        atomic("ATOM.E.CAS.128.STRONG.GPU PT, R4, [R2], R8, R12")
            .access
            .space,
        Space::Generic
    );
    if crate::exec::memory::has_cas128() {
        for ok in [
            "ATOMG.E.CAS.128.STRONG.GPU PT, R20, [R18], R8, R12",
            "ATOMS.EXCH.128 R4, [R3], R0",
        ] {
            assert!(validation_messages(ok).is_empty(), "{ok}");
        }
    }
    for (bad, want) in [
        (
            "ATOMG.E.ADD.128.STRONG.GPU PT, R4, [R2.64], R8",
            "the 128-bit atomics are .exch and .cas only",
        ),
        (
            "ATOMG.E.CAS.128.STRONG.GPU PT, R20, [R18], R10, R12",
            "misaligned 128-bit source quad R10",
        ),
        (
            "ATOMS.CAS.128 R6, [R3], R8, R12",
            "misaligned 128-bit destination quad R6",
        ),
    ] {
        let m = validation_messages(bad);
        assert!(m.iter().any(|m| m.contains(want)), "{bad}: {m:?}");
    }
    err_at(
        "ATOMG.E.CAS.128.RN PT, R20, [R18], R8, R12",
        1,
        17,
        ".RN applies to the float types only",
    );
}

// ---------------------------------------------------------------------------------------------
// Surface instructions (004_16d4664d52412e92.txt)

mod surfaces {
    use super::*;
    use crate::ir::surface::{Clamp, SurfaceAddress, SurfaceDim, SurfaceHandle};

    fn surface(a: &Address) -> SurfaceAddress {
        match a {
            Address::Surface(s) => *s,
            other => panic!("not a surface address: {other:?}"),
        }
    }

    fn bank(word: u32) -> SurfaceHandle {
        SurfaceHandle::Bank {
            bank: 0,
            offset: 4 * word,
        }
    }

    /// The surface address `dim`, `.BA`, `clamp` at `[coords]` with `handle`, neither
    /// format-signed nor with a sparse predicate.
    fn addr(
        coords: u16,
        dim: SurfaceDim,
        byte_x: bool,
        clamp: Clamp,
        handle: SurfaceHandle,
    ) -> SurfaceAddress {
        SurfaceAddress {
            coords: Reg(coords),
            dim,
            byte_x,
            clamp,
            handle,
            format_sign: false,
            sparse: Pred::PT,
        }
    }

    /// The validation errors of a one-instruction kernel (`EXIT` appended), as
    /// `(line, col, message, rule)`.
    fn invalid(line: &str) -> Vec<(u32, u32, String, String)> {
        // Two surfaces: handles at c[0x0][0x160] (word 0x58) and 0x168 (word 0x5a).
        let decls = ".surface s 2d u32[4,4] = 0\n.surface t 2d u32[4,4] = 0\n";
        let k = kernel(&format!("{decls}{line}\nEXIT ;"));
        match crate::valid::validate(&k) {
            Ok(_) => Vec::new(),
            Err(e) => {
                e.0.into_iter()
                    .map(|e| (e.span.line, e.span.col, e.message, e.rule))
                    .collect()
            }
        }
    }

    #[test]
    fn the_documents_examples() {
        // "SUATOM.D.2D.ADD.IGN R10, [R2], R4, R1; // Coordinates in R2 and R3. SamplePtr and
        // headerPtr in R1."
        let a = atomic("SUATOM.D.2D.ADD.IGN R10, [R2], R4, R1 ;");
        assert_eq!(
            surface(&a.access.addr),
            addr(
                2,
                SurfaceDim::D2,
                false,
                Clamp::Ignore,
                SurfaceHandle::Reg(r(1))
            )
        );
        assert_eq!(
            (a.op, a.access.ty, a.dst, a.src, a.src2),
            (AtomicOp::Add, Ty::U32, r(10), reg(4), None)
        );
        assert_eq!(
            (a.access.space, a.access.order, a.access.scope, a.ftz),
            (Space::Global, MemOrder::Relaxed, Scope::Gpu, false)
        );
        // "SUATOM.D.BA.1D.U64.TRAP R2, [R3], R4, 0x100; // Surface header pointer is fetched
        // from c[state_controlled_bank][0x400] // Adds value found in vec2 (R4,R5)."
        let a = atomic("SUATOM.D.BA.1D.U64.TRAP R2, [R3], R4, 0x100 ;");
        assert_eq!(
            surface(&a.access.addr),
            addr(3, SurfaceDim::D1, true, Clamp::Trap, bank(0x100))
        );
        // No operation written: the comment says it adds.
        assert_eq!(
            (a.op, a.access.ty, a.dst, a.src),
            (AtomicOp::Add, Ty::U64, r(2), reg(4))
        );
        assert!(invalid("SUATOM.D.BA.1D.U64.TRAP R2, [R3], R4, 0x5a ;").is_empty());
    }

    #[test]
    fn the_forms_the_tools_print() {
        let a = atomic("SURED.D.BA.2D.ADD.STRONG.SYS.TRAP [R6], R8, 0x0, 0x5a ;");
        assert_eq!(
            surface(&a.access.addr),
            addr(6, SurfaceDim::D2, true, Clamp::Trap, bank(0x5a))
        );
        assert_eq!(
            (a.op, a.dst, a.src, a.access.scope, a.access.order),
            (
                AtomicOp::Add,
                Reg::RZ,
                reg(8),
                Scope::Sys,
                MemOrder::Relaxed
            )
        );
        let a = atomic("SURED.D.2D.MIN.SD32.STRONG.SYS.IGN [R4], R9, 0x0, 0x58 ;");
        let s = surface(&a.access.addr);
        assert!(s.format_sign && !s.byte_x);
        assert_eq!(
            (a.op, a.access.ty, s.clamp),
            (AtomicOp::Min, Ty::U32, Clamp::Ignore)
        );
        // No clamp printed: `.NEAR`, the default.
        let a = atomic("SURED.D.BA.2D.MIN.STRONG.SYS [R8], R6, 0x0, 0x60 ;");
        assert_eq!(surface(&a.access.addr).clamp, Clamp::Nearest);
        let a = atomic("SURED.D.BA.3D.ADD.U64.STRONG.SYS.IGN [R4], R10, 0x0, 0x5e ;");
        assert_eq!(surface(&a.access.addr).dim, SurfaceDim::D3);
        assert_eq!(a.access.ty, Ty::U64);
        match op("SULD.D.BA.2D.STRONG.SM.TRAP R9, [R6], 0x0, 0x58 ;") {
            Op::Load { access, dst } => {
                assert_eq!(dst, r(9));
                assert_eq!(
                    (access.ty, access.order, access.scope, access.space),
                    (Ty::U32, MemOrder::Relaxed, Scope::Cta, Space::Global)
                );
                assert_eq!(
                    surface(&access.addr),
                    addr(6, SurfaceDim::D2, true, Clamp::Trap, bank(0x58))
                );
            }
            other => panic!("{other:?}"),
        }
        match op("SUST.D.BA.2D.STRONG.SM.IGN [R6], R0, 0x0, 0x58 ;") {
            Op::Store { access, src } => {
                assert_eq!(src, reg(0));
                assert_eq!(
                    surface(&access.addr),
                    addr(6, SurfaceDim::D2, true, Clamp::Ignore, bank(0x58))
                );
            }
            other => panic!("{other:?}"),
        }
        // Without `.STRONG` a raw load is weak, as LDG's.
        match op("SULD.D.1D_BUFFER.S8 R1, [R0], 0x0, 0x58 ;") {
            Op::Load { access, .. } => {
                assert_eq!((access.ty, access.order), (Ty::S8, MemOrder::Weak));
                assert_eq!(surface(&access.addr).dim, SurfaceDim::D1Buffer);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sm_90_passes_the_handle_in_a_uniform_register() {
        let k = kernel("SURED.D.BA.2D.ADD.STRONG.SYS.TRAP [R8], R2, UR4, 0x0 ;\nEXIT ;");
        let Op::Atomic(a) = &k.insts[0].op else {
            panic!()
        };
        let SurfaceHandle::Reg(h) = surface(&a.access.addr).handle else {
            panic!("a register handle")
        };
        assert!(k.uniform.has_reg(h), "UR4 is a uniform slot");
        assert!(crate::valid::validate(&k).is_ok());
        // A register handle may be followed by 0x0 only.
        err_at(
            "SURED.D.BA.2D.ADD.TRAP [R8], R2, UR4, 0x1 ;",
            1,
            39,
            "must be 0..=0x0",
        );
    }

    #[test]
    fn cas_reads_compare_and_swap_from_one_register_vector() {
        let a = atomic("SUATOM.D.2D.CAS R4, [R2], R8, 0x0, 0x58 ;");
        assert_eq!((a.src, a.src2), (reg(8), Some(reg(9))));
        let a = atomic("SUATOM.D.2D.CAS.U64 R4, [R2], R8, R12 ;");
        assert_eq!((a.src, a.src2), (reg(8), Some(reg(10))));
        assert!(invalid("SUATOM.D.2D.CAS.U64 R4, [R2], R8, R12 ;").is_empty());
        // vec2 from an odd register, vec4 from one that is not a multiple of 4.
        for (line, want) in [
            ("SUATOM.D.2D.CAS R4, [R2], R7, R12 ;", "vec2 from R7"),
            ("SUATOM.D.2D.CAS.U64 R4, [R2], R6, R12 ;", "vec4 from R6"),
        ] {
            let e = invalid(line);
            assert_eq!(e.len(), 1, "{line}: {e:?}");
            assert!(e[0].2.contains(want), "{e:?}");
            assert!(e[0].3.contains("vec2 (for .sz 32) or vec4 (for .sz 64)"));
            assert_eq!((e[0].0, e[0].1), (3, 1), "the instruction's line");
        }
    }

    #[test]
    fn the_sparse_predicate_comes_first_and_immediate_handles_take_it_only_on_cas() {
        let a = atomic("SUATOM.D.2D.ADD P1, R4, [R2], R8, R12 ;");
        assert_eq!(surface(&a.access.addr).sparse, Pred(1));
        assert_eq!(a.dst, r(4));
        let a = atomic("SUATOM.D.2D.CAS P0, R4, [R2], R8, 0x0, 0x58 ;");
        assert_eq!(surface(&a.access.addr).sparse, Pred(0));
        err_at(
            "SUATOM.D.2D.ADD P0, R4, [R2], R8, 0x58 ;",
            1,
            17,
            "exists only for .CAS",
        );
        // PT: no status wanted, with a register handle and with nvdisasm's two immediates.
        let a = atomic("SUATOM.D.2D.ADD PT, R4, [R2], R8, R12 ;");
        assert_eq!(surface(&a.access.addr).sparse, Pred::PT);
        let a = atomic("SUATOM.D.BA.2D.ADD.STRONG.GPU PT, R5, [R2], R4, 0x0, 0x58 ;");
        assert_eq!(surface(&a.access.addr).sparse, Pred::PT);
        assert_eq!(a.dst, r(5));
    }

    #[test]
    fn float_sizes_and_their_flush_modifiers() {
        let a = atomic("SUATOM.D.2D.ADD.F32.FTZ.RN R4, [R2], R8, 0x58 ;");
        assert_eq!((a.access.ty, a.ftz), (Ty::F32, true));
        let a = atomic("SUATOM.D.2D.ADD.F16x2.RN R4, [R2], R8, 0x58 ;");
        assert_eq!((a.access.ty, a.ftz), (Ty::F16x2, false));
        let a = atomic("SUATOM.D.2D.ADD.F16x2.FTZ.RN R4, [R2], R8, 0x58 ;");
        assert_eq!((a.access.ty, a.ftz), (Ty::F16x2, true));
        err_at(
            "SUATOM.D.2D.ADD.U32.FTZ R4, [R2], R8, 0x58 ;",
            1,
            21,
            ".FTZ applies to .F32 and .F16x2 only",
        );
        err_at(
            "SUATOM.D.2D.ADD.F32.FTZ.RZ R4, [R2], R8, 0x58 ;",
            1,
            25,
            "round to nearest even only",
        );
        err_at(
            "SUATOM.D.2D.ADD.S32.RN R4, [R2], R8, 0x58 ;",
            1,
            21,
            ".RN applies to the float sizes only",
        );
    }

    /// The document's op×size table, transcribed: which `.op.sz` validate.
    #[test]
    fn the_op_size_table_is_exactly_the_documents() {
        let sizes = [
            "U32",
            "S32",
            "SD32",
            "U64",
            "S64",
            "SD64",
            "F32.FTZ.RN",
            "F32.RN",
            "F16x2.RN",
            "F16x2.FTZ.RN",
        ];
        // `.ADD .U32 .S32 .SD32 .U64 .F32.FTZ.RN .F16x2.RN` ... `.CAS .U32 .S32 .U64`, and the
        // `.F16x2.FTZ.RN` spelling of the `.sz` list wherever F16x2 is allowed.
        let table: &[(&str, &[&str])] = &[
            (
                "ADD",
                &[
                    "U32",
                    "S32",
                    "SD32",
                    "U64",
                    "F32.FTZ.RN",
                    "F16x2.RN",
                    "F16x2.FTZ.RN",
                ],
            ),
            (
                "MIN",
                &[
                    "U32",
                    "S32",
                    "SD32",
                    "U64",
                    "S64",
                    "SD64",
                    "F16x2.RN",
                    "F16x2.FTZ.RN",
                ],
            ),
            (
                "MAX",
                &[
                    "U32",
                    "S32",
                    "SD32",
                    "U64",
                    "S64",
                    "SD64",
                    "F16x2.RN",
                    "F16x2.FTZ.RN",
                ],
            ),
            ("INC", &["U32"]),
            ("DEC", &["U32"]),
            ("AND", &["U32", "S32", "SD32", "U64"]),
            ("OR", &["U32", "S32", "SD32", "U64"]),
            ("XOR", &["U32", "S32", "SD32", "U64"]),
            ("EXCH", &["U32", "S32", "U64"]),
            ("CAS", &["U32", "S32", "U64"]),
        ];
        for (op_name, legal) in table {
            for sz in sizes {
                let line = format!("SUATOM.D.2D.{op_name}.{sz} R4, [R2], R8, 0x58 ;");
                let errors = invalid(&line);
                if legal.contains(&sz) {
                    assert!(errors.is_empty(), "{line}: {errors:?}");
                } else {
                    assert_eq!(errors.len(), 1, "{line}: {errors:?}");
                    let (_, _, message, rule) = &errors[0];
                    assert!(message.contains("op×size"), "{line}: {message}");
                    assert!(rule.contains(&format!(".{op_name} .U32")), "{line}: {rule}");
                }
            }
        }
        // No SUATOM has SUB, and SURED has no CAS.
        err_at(
            "SUATOM.D.2D.SUB R4, [R2], R8, 0x58 ;",
            1,
            13,
            "unknown modifier `.SUB`",
        );
        err_at(
            "SURED.D.2D.CAS [R2], R8, 0x58 ;",
            1,
            12,
            "SURED has no .CAS",
        );
    }

    #[test]
    fn register_rules_are_validated_with_the_documents_words() {
        let rz = invalid("SUATOM.D.1D.ADD R4, [RZ], R8, 0x58 ;");
        assert_eq!(rz.len(), 1, "{rz:?}");
        assert!(rz[0].2.contains("Ra cannot be RZ"));
        assert!(rz[0].3.contains("Note: Ra/Rc cannot be RZ register."));
        // A SURED names itself in the op×size error (its table is SUATOM's).
        let inc = invalid("SURED.D.2D.INC.S32 [R2], R4, 0x58 ;");
        assert!(
            inc[0].2.contains(
                "SURED.INC.S32 is not in the op×size table: SURED.INC supports only .U32"
            ),
            "{inc:?}"
        );
        let rc = invalid("SUATOM.D.1D.ADD R4, [R3], R8, RZ ;");
        assert_eq!(rc.len(), 1, "{rc:?}");
        assert!(rc[0].2.contains("Rc cannot be RZ"));
        // Two coordinates from an even register, three from a multiple of 4.
        for (line, ok) in [
            ("SURED.D.2D.ADD [R3], R8, 0x58 ;", false),
            ("SURED.D.1D_ARRAY.ADD [R6], R8, 0x58 ;", true),
            ("SURED.D.3D.ADD [R6], R8, 0x58 ;", false),
            ("SURED.D.2D_ARRAY.ADD [R12], R8, 0x58 ;", true),
            ("SURED.D.1D.ADD [R7], R8, 0x58 ;", true),
        ] {
            let e = invalid(line);
            assert_eq!(e.is_empty(), ok, "{line}: {e:?}");
            if !ok {
                assert!(e[0].3.contains("Ra must follow register alignment rules"));
            }
        }
    }

    #[test]
    fn syntax_errors_point_at_what_is_wrong() {
        err_at(
            "SUATOM.P.2D.ADD R4, [R2], R8, 0x58 ;",
            1,
            8,
            "formatted surface accesses (.P) are not supported",
        );
        err_at(
            "SUATOM.D.ADD R4, [R2], R8, 0x58 ;",
            1,
            1,
            "needs an dimensionality",
        );
        err_at("SUATOM.2D.ADD R4, [R2], R8, 0x58 ;", 1, 1, "needs an mode");
        err_at(
            "SURED.D.2D.ADD [UR4], R8, 0x58 ;",
            1,
            17,
            "not the uniform `UR4`",
        );
        err_at(
            "SURED.D.2D.ADD [R2], R8, 0x0, R5 ;",
            1,
            31,
            "after the constant bank comes the handle's word index",
        );
        err_at(
            "SURED.D.2D.ADD [R2], R8, R1, R2 ;",
            1,
            30,
            "only 0x0 may follow a handle register",
        );
        err_at(
            "SUATOM.D.2D.ADD R4, [R2+0x4], R8, 0x58 ;",
            1,
            21,
            "first coordinate register alone",
        );
        err_at(
            "SUATOM.D.2D.ADD R4, R2, R8, 0x58 ;",
            1,
            21,
            "expected the coordinates [Ra]",
        );
        err_at(
            "SUATOM.D.2D.ADD R4, [R2], R8, 0x2000 ;",
            1,
            31,
            "word index must be 0..=0x1fff",
        );
        err_at(
            "SUATOM.D.2D.ADD R4, [R2], R8, 0x100, 0x58 ;",
            1,
            31,
            "constant bank must be 0..=0xff",
        );
        err_at("SUATOM.D.2D.ADD R4, [R2], R8 ;", 1, 29, "too few operands");
        err_at(
            "SURED.D.2D.ADD [R2], R8, 0x0, 0x58, 0x1 ;",
            1,
            37,
            "too many operands",
        );
        err_at(
            "SULD.D.2D.128 R4, [R2], 0x58 ;",
            1,
            11,
            "no surface element type is 16 bytes",
        );
        err_at(
            "SUST.D.2D.IGN.TRAP [R2], R4, 0x58 ;",
            1,
            15,
            "conflicts with `.IGN`",
        );
    }
}
