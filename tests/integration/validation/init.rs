//! Registers read before written (`init.rs`): which registers must start zeroed.

use super::*;
use atomjit::ir::{BinOp, CmpOp, Reg, Space, Ty};

/// The registers that must be zeroed (may be read before written).
fn must_zero(k: &Kernel) -> Vec<usize> {
    let info = valid(k);
    assert_eq!(info.written_before_read().len(), k.num_regs as usize);
    info.written_before_read()
        .iter()
        .enumerate()
        .filter(|(_, &safe)| !safe)
        .map(|(r, _)| r)
        .collect()
}

#[test]
fn straight_line_writes_before_reads_need_no_zeroing() {
    let k = sass()
        .op(mov(Ty::U32, 2, cbank(0x0))) // 0
        .op(mov(Ty::U32, 3, cbank(0x4))) // 1
        .op(mov(Ty::U32, 4, imm(1))) // 2
        .op(store(Space::Global, Ty::U32, reg(4), wide(2, 0))) // 3: reads R2:R3 and R4
        .op(exit())
        .build();
    assert_eq!(must_zero(&k), Vec::<usize>::new());
}

#[test]
fn a_read_before_the_write_needs_zeroing_and_so_does_a_self_update() {
    let k = sass()
        .op(iadd3(0, reg(1), imm(1), reg(Reg::RZ.0))) // R1 read first
        .op(iadd3(2, reg(2), imm(1), reg(Reg::RZ.0))) // R2 = R2 + 1: reads before it writes
        .op(mov(Ty::U32, 1, reg(0))) // R1 written after its read: still must be zeroed
        .op(exit())
        .build();
    assert_eq!(must_zero(&k), vec![1, 2]);
}

#[test]
fn guarded_writes_do_not_count() {
    let k = sass()
        .op(isetp(CmpOp::Eq, Ty::U32, 0, reg(5), imm(0))) // R5 read: zero
        .guarded(at(0), mov(Ty::U32, 1, imm(7))) // @P0 R1 = 7
        .op(mov(Ty::U32, 2, reg(1))) // lanes with !P0 read the launch value of R1
        .op(exit())
        .build();
    assert_eq!(must_zero(&k), vec![1, 5]);
}

#[test]
fn a_never_executed_instruction_reads_nothing() {
    let k = sass()
        .guarded(never(), mov(Ty::U32, 0, reg(1)))
        .op(exit())
        .build();
    assert_eq!(must_zero(&k), Vec::<usize>::new());
}

#[test]
fn pairs_write_and_read_both_words() {
    // A 64-bit load writes R2 and R3; a 64-bit move reads R4 and R5, of which only R4 is written.
    let k = sass()
        .op(load(Space::Global, Ty::U64, 2, wide(6, 0))) // reads R6:R7 (never written)
        .op(mov(Ty::U32, 4, imm(0)))
        .op(mov(Ty::U64, 8, reg(4))) // reads R4:R5
        .op(mov(Ty::U64, 10, reg(2))) // reads R2:R3, both written
        .op(exit())
        .build();
    assert_eq!(must_zero(&k), vec![5, 6, 7]);
}

#[test]
fn a_wide_multiply_writes_a_pair() {
    let k = sass()
        .op(imad_wide(2, imm(3), imm(4), reg(Reg::RZ.0))) // R2:R3
        .op(mov(Ty::U32, 0, reg(3)))
        .op(exit())
        .build();
    assert_eq!(must_zero(&k), Vec::<usize>::new());
}

#[test]
fn branches_intersect_at_the_join() {
    let k = sass()
        .op(isetp(CmpOp::Eq, Ty::U32, 0, imm(0), imm(0))) // 0
        .guarded(at(0), bra(5)) // 1
        .op(mov(Ty::U32, 1, imm(1))) // 2: else writes R1 and R2
        .op(mov(Ty::U32, 2, imm(1))) // 3
        .op(bra(6)) // 4
        .op(mov(Ty::U32, 1, imm(2))) // 5: then writes R1 only
        .op(iadd3(3, reg(1), reg(2), reg(Reg::RZ.0))) // 6: join reads R1 and R2
        .op(exit())
        .build();
    assert_eq!(must_zero(&k), vec![2]);
}

#[test]
fn a_loop_carried_read_needs_zeroing_unless_written_before_the_loop() {
    // R0 is the counter, written before the loop; R1 accumulates without an initial write.
    let k = sass()
        .op(mov(Ty::U32, 0, imm(0))) // 0
        .op(iadd3(1, reg(1), reg(0), reg(Reg::RZ.0))) // 1: loop head, R1 += R0
        .op(iadd3(0, reg(0), imm(1), reg(Reg::RZ.0))) // 2
        .op(isetp(CmpOp::Lt, Ty::U32, 0, reg(0), imm(8))) // 3
        .guarded(at(0), bra(1)) // 4
        .op(store(Space::Global, Ty::U32, reg(1), wide(2, 0))) // 5: R2:R3 never written
        .op(exit())
        .build();
    assert_eq!(must_zero(&k), vec![1, 2, 3]);
}

#[test]
fn a_write_inside_the_loop_body_does_not_cover_the_first_iteration() {
    // The loop head reads R4, which only the loop body (after the read) writes.
    let k = sass()
        .op(mov(Ty::U32, 0, imm(0))) // 0
        .op(binary(BinOp::Add, Ty::U32, 5, reg(4), imm(1))) // 1: reads R4
        .op(mov(Ty::U32, 4, reg(5))) // 2
        .op(isetp(CmpOp::Lt, Ty::U32, 0, reg(4), imm(8))) // 3
        .guarded(at(0), bra(1)) // 4
        .op(exit())
        .build();
    assert_eq!(must_zero(&k), vec![4]);
}

#[test]
fn reads_in_unreachable_code_do_not_count() {
    let k = sass()
        .op(exit()) // 0
        .op(mov(Ty::U32, 0, reg(1))) // 1: unreachable
        .op(exit())
        .build();
    assert_eq!(must_zero(&k), Vec::<usize>::new());
}

#[test]
fn rz_is_never_zeroed_and_registers_never_used_need_nothing() {
    let k = sass()
        .op(iadd3(Reg::RZ.0, reg(Reg::RZ.0), imm(1), reg(Reg::RZ.0)))
        .op(exit())
        .num_regs(4)
        .build();
    assert_eq!(must_zero(&k), Vec::<usize>::new());
}

#[test]
fn writes_travel_down_a_long_chain_of_backward_branches() {
    // R1 is written on the only path to its read, R2 only under a guard on it.
    let k = super::live::backward_chain(3000);
    assert_eq!(must_zero(&k), vec![2]);
}
