//! Control flow: reconvergence points (immediate post-dominators), block starts, backward
//! branches, reachability, and the end-of-kernel rule.

use super::*;
use atomjit::ir::{AtomicOp, CmpOp, Ty};
use atomjit::valid::rules;

/// The set of instruction indices where `v` is true.
fn set(v: &[bool]) -> Vec<usize> {
    v.iter()
        .enumerate()
        .filter(|(_, &b)| b)
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn if_else_diamond() {
    let k = sass()
        .op(isetp(CmpOp::Eq, Ty::U32, 0, reg(0), imm(0))) // 0
        .guarded(at(0), bra(4)) // 1
        .op(mov(Ty::U32, 1, imm(1))) // 2: else
        .op(bra(5)) // 3
        .op(mov(Ty::U32, 1, imm(2))) // 4: then
        .op(exit()) // 5: join
        .build();
    let info = valid(&k);
    assert_eq!(
        info.reconverge(),
        vec![None, Some(5), None, None, None, None]
    );
    assert_eq!(set(info.is_join()), vec![5]);
    assert_eq!(set(info.block_start()), vec![0, 2, 4, 5]);
    assert_eq!(set(info.backward_branch()), Vec::<usize>::new());
    assert!(info.reachable().iter().all(|&r| r));
    assert_eq!(
        info.post_dominator(),
        vec![Some(1), Some(5), Some(3), Some(5), Some(5), None]
    );
}

#[test]
fn if_without_else() {
    let k = sass()
        .guarded(at_not(0), bra(2)) // 0
        .op(nop()) // 1
        .op(exit()) // 2
        .build();
    let info = valid(&k);
    assert_eq!(info.reconverge(), vec![Some(2), None, None]);
    assert_eq!(set(info.block_start()), vec![0, 1, 2]);
}

#[test]
fn nested_ifs() {
    let k = sass()
        .guarded(at(0), bra(6)) // 0: outer
        .op(nop()) // 1
        .guarded(at(1), bra(4)) // 2: inner
        .op(nop()) // 3
        .op(nop()) // 4: inner join
        .op(nop()) // 5
        .op(exit()) // 6: outer join
        .build();
    let info = valid(&k);
    assert_eq!(info.reconverge()[0], Some(6));
    assert_eq!(info.reconverge()[2], Some(4));
    assert_eq!(set(info.is_join()), vec![4, 6]);
    assert_eq!(set(info.block_start()), vec![0, 1, 3, 4, 6]);
}

#[test]
fn loop_with_data_dependent_exit() {
    let k = sass()
        .op(mov(Ty::U32, 0, imm(0))) // 0
        .op(iadd3(0, reg(0), imm(1), reg(RZ))) // 1: loop head
        .op(isetp(CmpOp::Lt, Ty::U32, 0, reg(0), reg(1))) // 2
        .guarded(at(0), bra(1)) // 3: back edge
        .op(exit()) // 4
        .build();
    let info = valid(&k);
    assert_eq!(info.reconverge()[3], Some(4));
    assert_eq!(set(info.backward_branch()), vec![3]);
    assert_eq!(set(info.block_start()), vec![0, 1, 4]);
    assert_eq!(set(info.is_join()), vec![4]);
}

#[test]
fn loop_with_break() {
    let k = sass()
        .op(nop()) // 0
        .guarded(at(0), bra(4)) // 1: break
        .op(nop()) // 2
        .op(bra(1)) // 3: continue
        .op(exit()) // 4
        .build();
    let info = valid(&k);
    assert_eq!(info.reconverge()[1], Some(4));
    assert_eq!(
        info.reconverge()[3],
        None,
        "an unconditional branch does not diverge"
    );
    assert_eq!(set(info.backward_branch()), vec![3]);
}

#[test]
fn spin_loop() {
    // loop: ATOMS.CAST R0, [R1], R4, R5; ISETP.EQ P0, R0, 0; @P0 BRA loop; EXIT
    let k = sass()
        .label("loop")
        .op(atoms_cas(AtomicOp::Cast, Ty::U32, 0, shared(1, 0), 4, 5)) // 0
        .op(isetp(CmpOp::Eq, Ty::U32, 0, reg(0), imm(0))) // 1
        .guarded(at(0), bra(0)) // 2
        .op(exit()) // 3
        .build();
    let info = valid(&k);
    assert_eq!(info.reconverge(), vec![None, None, Some(3), None]);
    assert_eq!(set(info.backward_branch()), vec![2]);
    assert_eq!(set(info.block_start()), vec![0, 3]);
}

#[test]
fn self_loop_branch() {
    // @P0 BRA self: a one-instruction spin.
    let k = sass().guarded(at(0), bra(0)).op(exit()).build();
    let info = valid(&k);
    assert_eq!(info.reconverge()[0], Some(1));
    assert!(info.backward_branch()[0]);
}

#[test]
fn early_exits() {
    let k = sass()
        .guarded(at(0), exit()) // 0: some lanes leave
        .guarded(at(1), bra(3)) // 1
        .op(nop()) // 2
        .op(exit()) // 3
        .build();
    let info = valid(&k);
    assert_eq!(
        info.reconverge(),
        vec![None, Some(3), None, None],
        "a guarded EXIT is not a branch"
    );
    // Lanes at 0 either exit or go on to 1: only the exit post-dominates it.
    assert_eq!(info.post_dominator()[0], None);
    assert_eq!(info.post_dominator()[1], Some(3));
    assert_eq!(set(info.block_start()), vec![0, 1, 2, 3]);
}

#[test]
fn paths_that_meet_only_at_exit() {
    let k = sass()
        .guarded(at(0), bra(3)) // 0
        .op(nop()) // 1
        .op(exit()) // 2
        .op(nop()) // 3
        .op(exit()) // 4
        .build();
    let info = valid(&k);
    assert_eq!(info.reconverge()[0], None);
    assert_eq!(info.post_dominator()[0], None);
    assert!(!info.is_join().iter().any(|&j| j));
}

#[test]
fn infinite_loop() {
    let k = sass()
        .guarded(at(0), bra(2)) // 0
        .op(exit()) // 1
        .op(nop()) // 2: loops forever
        .op(bra(2)) // 3
        .build();
    let info = valid(&k);
    // Lanes in the loop never reach a join, so the branch gets none.
    assert_eq!(info.reconverge()[0], None);
    assert_eq!(info.post_dominator()[2], None);
    assert_eq!(info.post_dominator()[3], None);
    assert_eq!(info.post_dominator()[0], Some(1));
    assert_eq!(set(info.backward_branch()), vec![3]);
    // A kernel that is nothing but a loop is valid too (the watchdog ends it at run time).
    let k = sass().op(nop()).op(bra(0)).build();
    let info = valid(&k);
    assert_eq!(info.post_dominator(), vec![None, None]);
}

#[test]
fn never_taken_branch() {
    let k = sass()
        .guarded(never(), bra(2)) // 0: @!PT BRA never branches
        .op(exit()) // 1
        .op(exit()) // 2: unreachable
        .build();
    let info = valid(&k);
    assert_eq!(info.reconverge()[0], None);
    assert!(!info.backward_branch()[0]);
    assert_eq!(info.reachable(), vec![true, true, false]);
    assert_eq!(set(info.block_start()), vec![0, 1, 2]);
}

#[test]
fn barriers_end_blocks() {
    let k = sass().op(nop()).op(bar(3)).op(nop()).op(exit()).build();
    let info = valid(&k);
    assert_eq!(set(info.block_start()), vec![0, 2]);
    assert_eq!(info.num_barriers(), 4);
}

#[test]
fn falling_off_the_end_is_an_error() {
    let no_exit = "control reaches the end of the kernel without EXIT";
    let k = sass().op(nop()).build();
    assert_only(&errors(&k), 0, rules::FALL_OFF_END, no_exit);
    // A guarded EXIT falls through for the other lanes.
    let k = sass().op(nop()).guarded(at(0), exit()).build();
    assert_only(&errors(&k), 1, rules::FALL_OFF_END, no_exit);
    // So does a guarded BRA, and an EXIT that never executes.
    let k = sass().op(nop()).guarded(at_not(0), bra(0)).build();
    assert_only(&errors(&k), 1, rules::FALL_OFF_END, no_exit);
    let k = sass().op(nop()).guarded(never(), exit()).build();
    assert_only(&errors(&k), 1, rules::FALL_OFF_END, no_exit);
    // Unguarded EXIT and BRA end the kernel; dead code after them cannot fall off.
    valid(&sass().op(nop()).op(exit()).build());
    valid(&sass().op(exit()).op(nop()).build());
    valid(&sass().op(bra(2)).op(nop()).op(exit()).op(nop()).build());
}

#[test]
fn an_empty_kernel_is_an_error() {
    let k = sass().build();
    let errs = errors(&k);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].pc, None);
    assert_eq!(errs[0].span, k.span);
    assert_eq!(errs[0].rule, rules::FALL_OFF_END);
    assert!(errs[0].message.contains("no instructions"));
}

#[test]
fn bad_branch_targets_do_not_break_the_analysis() {
    let k = sass().guarded(at(0), bra(99)).op(bra(1000)).build();
    let errs = errors(&k);
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(errs.iter().all(|e| e.rule == rules::BRANCH_TARGET));
}

/// A long chain of diamonds: the analysis is iterative (no recursion depth limit) and fast.
#[test]
fn large_kernels() {
    let mut b = sass();
    let diamonds = 20_000u32;
    for i in 0..diamonds {
        let base = i * 4;
        b = b
            .guarded(at(0), bra(base + 3))
            .op(nop())
            .op(nop())
            .op(nop());
    }
    let k = b.op(exit()).build();
    let info = valid(&k);
    for i in 0..diamonds as usize {
        assert_eq!(info.reconverge()[i * 4], Some(i as u32 * 4 + 3));
    }
}
