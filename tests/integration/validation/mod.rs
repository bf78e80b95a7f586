//! The validator's conformance suite, through the public API (kernels built with
//! `atomjit::ir::build`, checked with `atomjit::valid::validate`). Every rule has a violating
//! kernel whose error is asserted and a passing counterpart. Expected values come from the reference documents (tables and sentences
//! transcribed here by hand), never from the validator's own output.

mod atomics;
mod cfg;
mod init;
mod launch;
mod live;
mod operands;
mod orders;
mod quotes;
mod robust;

use atomjit::ir::build::*;
use atomjit::ir::{Dialect, Kernel, Span};
use atomjit::valid::{validate, KernelInfo, ValidationError};

/// Instruction `pc` gets the span line `pc + 2`, column 5, bytes `100 * pc + 10 ..`, so tests
/// can check which instruction an error points at.
fn test_span(pc: u32) -> Span {
    Span {
        start: 100 * pc + 10,
        end: 100 * pc + 60,
        line: pc + 2,
        col: 5,
    }
}

/// A kernel named `test` in `dialect` with the spans of [`test_span`].
fn builder(dialect: Dialect) -> KernelBuilder {
    KernelBuilder::new("test", dialect)
        .spans(test_span)
        .kernel_span(Span {
            start: 0,
            end: 12,
            line: 1,
            col: 1,
        })
}

fn sass() -> KernelBuilder {
    builder(Dialect::Sass)
}

fn ptx() -> KernelBuilder {
    builder(Dialect::Ptx)
}

/// The errors of a kernel that must fail validation.
fn errors(k: &Kernel) -> Vec<ValidationError> {
    match validate(k) {
        Ok(_) => panic!("expected validation errors, the kernel passed"),
        Err(e) => e.0,
    }
}

/// The info of a kernel that must pass validation.
fn valid(k: &Kernel) -> KernelInfo {
    match validate(k) {
        Ok(info) => info,
        Err(e) => panic!("expected a valid kernel, got:\n{e}"),
    }
}

/// Asserts that `errs` holds exactly one error, at `pc`, for `rule`, mentioning `needle`.
#[track_caller]
fn assert_only(errs: &[ValidationError], pc: u32, rule: &str, needle: &str) {
    assert_eq!(errs.len(), 1, "expected one error, got {errs:#?}");
    assert_has(errs, pc, rule, needle);
}

/// Asserts that some error is at `pc`, for `rule`, and its message contains `needle`.
#[track_caller]
fn assert_has(errs: &[ValidationError], pc: u32, rule: &str, needle: &str) {
    assert!(
        errs.iter()
            .any(|e| e.pc == Some(pc) && e.rule == rule && e.message.contains(needle)),
        "no error at pc {pc} with rule {rule:?} and message containing {needle:?} in {errs:#?}"
    );
}

/// A one-instruction SASS kernel followed by EXIT.
fn sass1(op: atomjit::ir::Op) -> Kernel {
    sass().op(op).op(exit()).build()
}

#[test]
fn errors_carry_kernel_pc_and_span() {
    let k = sass1(atoms(
        atomjit::ir::AtomicOp::Add,
        atomjit::ir::Ty::U32,
        0,
        shared(1, 2),
        2,
    ));
    let e = &errors(&k)[0];
    assert_eq!(e.kernel, "test");
    assert_eq!(e.pc, Some(0));
    assert_eq!(e.span, k.insts[0].span);
    assert_eq!(e.span.line, 2);
    let shown = e.to_string();
    assert!(shown.starts_with("2:5: "), "{shown}");
    assert!(
        shown.contains("(rule: 000_6d05a8552870c0ae.txt: \"The low 2 bits"),
        "{shown}"
    );
}

#[test]
fn every_error_is_reported_in_source_order() {
    use atomjit::ir::{AtomicOp, MemOrder, Scope, Ty};
    let k = sass()
        .launch(|l| l.block = [2048, 1, 1])
        .op(atoms(AtomicOp::Inc, Ty::S32, 0, shared(1, 0), 2)) // 0: table
        .op(nop()) // 1: fine
        .op(atoms(AtomicOp::Add, Ty::U32, 0, shared(1, 0x1000002), 2)) // 2: range + low bits
        .op(fence(MemOrder::Relaxed, Scope::Gpu)) // 3: order
        .op(nop()) // 4: falls off the end
        .build();
    let errs = errors(&k);
    let pcs: Vec<Option<u32>> = errs.iter().map(|e| e.pc).collect();
    assert_eq!(
        pcs,
        vec![None, Some(0), Some(2), Some(2), Some(3), Some(4)],
        "{errs:#?}"
    );
    assert_eq!(errs[0].span, k.span);
    assert!(errs.windows(2).all(|w| w[0].span.start <= w[1].span.start));
}

#[test]
fn a_typical_kernel_passes() {
    use atomjit::ir::{AtomicOp, BinOp, CmpOp, MemOrder, Scope, Space, SpecialReg, Ty};
    // A shared histogram: zero, barrier, ATOMS.ADD per element, barrier, flush with RED.
    let k = sass()
        .buffer("data", Ty::U32, 1024)
        .buffer("hist", Ty::U32, 256)
        .launch(|l| l.shared_bytes = 1024)
        .op(mov(Ty::U32, 1, cbank(0x28)))
        .op(s2r(0, SpecialReg::TidX))
        .op(mov(Ty::U64, 2, cbank(0x160)))
        .op(imad_wide(2, reg(0), imm(4), reg(2)))
        .op(load(Space::Global, Ty::U32, 4, wide(2, 0)))
        .op(binary(BinOp::Shl, Ty::U32, 5, reg(4), imm(2)))
        .op(atoms(AtomicOp::Add, Ty::U32, RZ, shared(5, 0), 6))
        .op(bar(0))
        .op(isetp(CmpOp::Ge, Ty::U32, 0, reg(0), imm(256)))
        .guarded(at(0), exit())
        .op(load(Space::Shared, Ty::U32, 7, shared(5, 0)))
        .op(mov(Ty::U64, 8, cbank(0x168)))
        .op(imad_wide(8, reg(0), imm(4), reg(8)))
        .op(with_atomic(
            atomic(
                Space::Global,
                AtomicOp::Add,
                Ty::U32,
                RZ,
                wide(8, 0),
                reg(7),
                None,
            ),
            |a| a.access.scope = Scope::Gpu,
        ))
        .op(fence(MemOrder::SeqCst, Scope::Gpu))
        .op(exit())
        .build();
    let info = valid(&k);
    assert_eq!(info.cbank_bytes(), 0x170);
    assert_eq!(info.num_barriers(), 1);
    assert!(info.block_start()[8] && info.block_start()[10]);
}
