//! Scheduler tests with a scripted backend: each pc of a mock program is a small action (run a
//! closure per lane, branch on a per-lane condition, wait at a barrier, trap, exit). The mock
//! follows the [`WarpRunner`] contract exactly as a real backend must: it yields at a uniform
//! backward branch, reports divergent branches, stops before `stop_pc`, and records every call
//! and every executed instruction so tests can assert the schedule.

use super::divergence::YIELDS_BEFORE_RELEASE;
use super::*;
use crate::exec::{CtaEnv, GroupExit, Split, TrapReason, WarpState};
use crate::ir::{Dialect, Guard, Inst, Op, Space, Span};
use std::sync::atomic::AtomicU32;

const FULL: u32 = u32::MAX;
const LOW16: u32 = 0x0000_ffff;
const HIGH16: u32 = 0xffff_0000;

type LaneFn = Box<dyn Fn(&mut WarpState, &CtaEnv, u32) + Send + Sync>;
type CondFn = Box<dyn Fn(&WarpState, &CtaEnv, u32) -> bool + Send + Sync>;

enum MockOp {
    Nop,
    Exit,
    /// Runs the closure for every lane of the group, in increasing lane order.
    Lane(LaneFn),
    /// Branches to `target` in the lanes where `cond` holds.
    Branch {
        target: u32,
        cond: CondFn,
    },
    Bar(u32),
    /// The lanes where the condition holds exit and the others go on (a group that loses
    /// lanes without diverging, as a guarded `EXIT` does); the group exits when none is left.
    ExitLanes(CondFn),
    /// Traps in `lane` if it is in the group, in CTA `cta`, warp `warp`.
    Trap {
        cta: [u32; 3],
        warp: u32,
        lane: u32,
    },
    /// Returns `Reconverge` whatever `stop_pc` is (a broken backend).
    BogusReconverge,
    /// Panics (a backend bug).
    Panic,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Call {
    cta: [u32; 3],
    warp: u32,
    pc: u32,
    mask: u32,
    stop: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Executed {
    cta: [u32; 3],
    warp: u32,
    pc: u32,
    mask: u32,
}

struct Mock {
    ops: Vec<MockOp>,
    calls: Mutex<Vec<Call>>,
    executed: Mutex<Vec<Executed>>,
}

impl Mock {
    fn new(ops: Vec<MockOp>) -> Mock {
        Mock {
            ops,
            calls: Mutex::new(Vec::new()),
            executed: Mutex::new(Vec::new()),
        }
    }

    fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    fn executed_at(&self, pc: u32) -> Vec<Executed> {
        self.executed
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.pc == pc)
            .cloned()
            .collect()
    }
}

fn lanes_of(mask: u32) -> impl Iterator<Item = u32> {
    (0..32).filter(move |l| mask & (1 << l) != 0)
}

impl WarpRunner for Mock {
    fn run_group(
        &self,
        warp: &mut WarpState,
        env: &CtaEnv,
        mut pc: u32,
        mut mask: u32,
        stop_pc: Option<u32>,
    ) -> GroupExit {
        self.calls.lock().unwrap().push(Call {
            cta: env.ctaid,
            warp: warp.warp_id,
            pc,
            mask,
            stop: stop_pc,
        });
        loop {
            if stop_pc == Some(pc) {
                return GroupExit::Reconverge { mask };
            }
            self.executed.lock().unwrap().push(Executed {
                cta: env.ctaid,
                warp: warp.warp_id,
                pc,
                mask,
            });
            warp.stats.warp_insts += 1;
            match &self.ops[pc as usize] {
                MockOp::Nop => pc += 1,
                MockOp::Exit => {
                    warp.exited |= mask;
                    return GroupExit::Exited;
                }
                MockOp::Lane(f) => {
                    for lane in lanes_of(mask) {
                        f(warp, env, lane);
                    }
                    pc += 1;
                }
                MockOp::Branch { target, cond } => {
                    let taken = lanes_of(mask)
                        .filter(|&l| cond(warp, env, l))
                        .fold(0, |m, l| m | 1 << l);
                    if taken == mask {
                        if *target <= pc {
                            return GroupExit::Yield { pc: *target, mask };
                        }
                        pc = *target;
                    } else if taken == 0 {
                        pc += 1;
                    } else {
                        return GroupExit::Diverge(Split {
                            branch_pc: pc,
                            taken_pc: *target,
                            taken,
                            fall_pc: pc + 1,
                            fall: mask & !taken,
                        });
                    }
                }
                MockOp::Bar(id) => return GroupExit::Barrier { pc, mask, id: *id },
                MockOp::ExitLanes(cond) => {
                    let gone = lanes_of(mask)
                        .filter(|&l| cond(warp, env, l))
                        .fold(0, |m, l| m | 1 << l);
                    warp.exited |= gone;
                    mask &= !gone;
                    if mask == 0 {
                        return GroupExit::Exited;
                    }
                    pc += 1;
                }
                MockOp::Trap { cta, warp: w, lane } => {
                    if env.ctaid == *cta && warp.warp_id == *w && mask & (1 << lane) != 0 {
                        return GroupExit::Trap(TrapInfo {
                            reason: TrapReason::AddressOutOfRange,
                            pc,
                            lane: *lane,
                            space: Space::Shared,
                            address: 0x1234,
                            surface: None,
                        });
                    }
                    pc += 1;
                }
                MockOp::BogusReconverge => return GroupExit::Reconverge { mask },
                MockOp::Panic => panic!("mock backend bug"),
            }
        }
    }
}

// ---- building blocks -------------------------------------------------------------------------

/// A kernel of `n` placeholder instructions; instruction `pc` is on line `10 + pc` with text
/// `op{pc}` (the mock's actions are what runs).
fn kernel(n: usize) -> Kernel {
    let insts = (0..n)
        .map(|pc| Inst {
            op: if pc + 1 == n { Op::Exit } else { Op::Nop },
            guard: Guard::ALWAYS,
            span: Span {
                start: 0,
                end: 0,
                line: 10 + pc as u32,
                col: 5,
            },
            text: format!("op{pc}"),
            sched: Vec::new(),
        })
        .collect();
    Kernel {
        name: "mock".into(),
        dialect: Dialect::Sass,
        warp_size: 32,
        insts,
        labels: Vec::new(),
        num_regs: 4,
        num_preds: 1,
        uniform: Default::default(),
        launch: LaunchSpec::default(),
        span: Span::default(),
    }
}

/// Kernel info for `n` instructions where each `(branch, reconv)` pair is a branch's
/// reconvergence point.
fn info(n: usize, joins: &[(u32, u32)]) -> KernelInfo {
    let mut info = KernelInfo::unchecked(&kernel(n), 0);
    for &(branch, reconv) in joins {
        info.set_join(branch, reconv);
    }
    info
}

fn config(grid: u32, block: u32) -> LaunchConfig {
    let mut c = LaunchConfig::new([grid, 1, 1], [block, 1, 1], 256);
    c.threads(1).timeout(Some(Duration::from_secs(20)));
    c
}

fn global_words(n: u64) -> GlobalMemory {
    GlobalMemory::with_allocations(&[n * 4]).0
}

fn gword<'a>(env: &'a CtaEnv, i: u32) -> &'a AtomicU32 {
    env.global.region().atomic_u32(i as usize * 4)
}

fn sword<'a>(env: &'a CtaEnv, i: u32) -> &'a AtomicU32 {
    env.shared.region().atomic_u32(i as usize * 4)
}

fn read_global(g: &GlobalMemory, i: u64) -> u32 {
    g.region().load(i as usize * 4, 4) as u32
}

fn reg(warp: &WarpState, r: usize, lane: u32) -> u32 {
    warp.regs[r * 32 + lane as usize]
}

fn set_reg(warp: &mut WarpState, r: usize, lane: u32, v: u32) {
    warp.regs[r * 32 + lane as usize] = v;
}

fn tid(warp: &WarpState, lane: u32) -> u32 {
    warp.warp_id * 32 + lane
}

fn lane(f: impl Fn(&mut WarpState, &CtaEnv, u32) + Send + Sync + 'static) -> MockOp {
    MockOp::Lane(Box::new(f))
}

fn branch(
    target: u32,
    cond: impl Fn(&WarpState, &CtaEnv, u32) -> bool + Send + Sync + 'static,
) -> MockOp {
    MockOp::Branch {
        target,
        cond: Box::new(cond),
    }
}

fn count_global(i: u32) -> MockOp {
    lane(move |_, env, _| {
        gword(env, i).fetch_add(1, Ordering::Relaxed);
    })
}

fn run(
    mock: &Mock,
    info: &KernelInfo,
    global: &GlobalMemory,
    config: &LaunchConfig,
) -> Result<LaunchStats, LaunchError> {
    let kernel = kernel(mock.ops.len());
    launch(&kernel, info, mock, global, &[], &[], config)
}

fn watchdog(result: Result<LaunchStats, LaunchError>) -> WatchdogReport {
    match result {
        Err(LaunchError::Watchdog(report)) => *report,
        other => panic!("expected a watchdog report, got {other:?}"),
    }
}

// ---- lanes, warps, CTAs ----------------------------------------------------------------------

#[test]
fn every_lane_of_every_cta_runs_once_and_exits() {
    // 48 threads per CTA: a full warp and a partial one of 16 lanes.
    let mock = Mock::new(vec![
        lane(|w, env, l| {
            let slot = 1 + env.ctaid[0] * 48 + tid(w, l);
            gword(env, slot).fetch_add(1, Ordering::Relaxed);
        }),
        MockOp::Exit,
    ]);
    let global = global_words(1 + 3 * 48);
    let mut cfg = config(3, 48);
    cfg.threads(2);
    let stats = run(&mock, &info(2, &[]), &global, &cfg).unwrap();
    for slot in 1..=3 * 48 {
        assert_eq!(read_global(&global, slot), 1, "thread slot {slot}");
    }
    assert_eq!((stats.ctas, stats.lanes, stats.threads), (3, 144, 2));
    // Two instructions per warp, two warps per CTA.
    assert_eq!(stats.stats.warp_insts, 12);
    let partial: Vec<Call> = mock.calls().into_iter().filter(|c| c.warp == 1).collect();
    assert!(
        partial.iter().all(|c| c.mask == LOW16),
        "the last warp holds lanes 32..47 only"
    );
}

#[test]
fn grid_indices_run_x_fastest_in_linear_order_when_deterministic() {
    let mock = Mock::new(vec![MockOp::Exit]);
    let global = global_words(1);
    let mut cfg = config(1, 32);
    cfg.grid = [2, 3, 2];
    cfg.deterministic(true).threads(4);
    let stats = run(&mock, &info(1, &[]), &global, &cfg).unwrap();
    assert_eq!((stats.ctas, stats.threads), (12, 1));
    let order: Vec<[u32; 3]> = mock.calls().into_iter().map(|c| c.cta).collect();
    let expected: Vec<[u32; 3]> = (0..2)
        .flat_map(|z| (0..3).flat_map(move |y| (0..2).map(move |x| [x, y, z])))
        .collect();
    assert_eq!(order, expected);
}

// ---- divergence ------------------------------------------------------------------------------

#[test]
fn diverged_lanes_reconverge_and_run_the_join_once_with_the_union_mask() {
    let mock = Mock::new(vec![
        branch(3, |_, _, l| l < 16), // 0: lanes 0..15 jump to the join
        MockOp::Nop,                 // 1: lanes 16..31
        MockOp::Nop,                 // 2
        MockOp::Nop,                 // 3: join
        MockOp::Exit,                // 4
    ]);
    let stats = run(&mock, &info(5, &[(0, 3)]), &global_words(1), &config(1, 32)).unwrap();
    assert_eq!(
        mock.calls(),
        vec![
            Call {
                cta: [0; 3],
                warp: 0,
                pc: 0,
                mask: FULL,
                stop: None
            },
            // The taken group starts at the join and parks without running; the fall-through
            // group runs up to the join.
            Call {
                cta: [0; 3],
                warp: 0,
                pc: 1,
                mask: HIGH16,
                stop: Some(3)
            },
            Call {
                cta: [0; 3],
                warp: 0,
                pc: 3,
                mask: FULL,
                stop: None
            },
        ]
    );
    assert_eq!(
        mock.executed_at(3),
        vec![Executed {
            cta: [0; 3],
            warp: 0,
            pc: 3,
            mask: FULL
        }]
    );
    assert_eq!(
        (
            stats.divergences,
            stats.reconvergences,
            stats.dissolved_joins
        ),
        (1, 1, 0)
    );
}

#[test]
fn both_sides_of_an_if_else_run_fall_through_first_then_merge() {
    let odd = 0xaaaa_aaaa;
    let mock = Mock::new(vec![
        branch(3, |_, _, l| l % 2 == 1), // 0
        MockOp::Nop,                     // 1: else side (even lanes)
        branch(5, |_, _, _| true),       // 2: jump over the then side
        MockOp::Nop,                     // 3: then side (odd lanes)
        MockOp::Nop,                     // 4
        MockOp::Nop,                     // 5: join
        MockOp::Exit,                    // 6
    ]);
    run(&mock, &info(7, &[(0, 5)]), &global_words(1), &config(1, 32)).unwrap();
    let calls: Vec<(u32, u32, Option<u32>)> = mock
        .calls()
        .iter()
        .map(|c| (c.pc, c.mask, c.stop))
        .collect();
    assert_eq!(
        calls,
        vec![
            (0, FULL, None),
            (1, !odd, Some(5)),
            (3, odd, Some(5)),
            (5, FULL, None)
        ]
    );
}

#[test]
fn nested_divergence_reconverges_inner_then_outer() {
    let mock = Mock::new(vec![
        branch(6, |_, _, l| l >= 16), // 0: outer
        branch(4, |_, _, l| l >= 8),  // 1: inner (lanes 0..15)
        MockOp::Nop,                  // 2: lanes 0..7
        MockOp::Nop,                  // 3
        MockOp::Nop,                  // 4: inner join
        MockOp::Nop,                  // 5
        MockOp::Nop,                  // 6: outer join
        MockOp::Exit,                 // 7
    ]);
    let stats = run(
        &mock,
        &info(8, &[(0, 6), (1, 4)]),
        &global_words(1),
        &config(1, 32),
    )
    .unwrap();
    let at = |pc| {
        mock.executed_at(pc)
            .iter()
            .map(|e| e.mask)
            .collect::<Vec<_>>()
    };
    assert_eq!(at(2), vec![0xff]);
    assert_eq!(at(4), vec![LOW16]);
    assert_eq!(at(6), vec![FULL]);
    assert_eq!((stats.divergences, stats.reconvergences), (2, 2));
}

#[test]
fn branches_without_a_reconvergence_point_run_apart_to_exit() {
    let mock = Mock::new(vec![
        branch(3, |_, _, l| l < 16), // 0: paths only meet at exit
        count_global(0),             // 1
        MockOp::Exit,                // 2
        count_global(1),             // 3
        MockOp::Exit,                // 4
    ]);
    let global = global_words(2);
    let stats = run(&mock, &info(5, &[]), &global, &config(1, 32)).unwrap();
    assert_eq!((read_global(&global, 0), read_global(&global, 1)), (16, 16));
    assert_eq!((stats.divergences, stats.reconvergences), (1, 0));
}

#[test]
fn exited_lanes_no_longer_hold_back_a_join() {
    let mock = Mock::new(vec![
        branch(4, |_, _, l| l >= 16), // 0: outer split, join at 4
        branch(3, |_, _, l| l < 4),   // 1: lanes 0..3 leave to exit (no reconvergence point)
        branch(4, |_, _, _| true),    // 2: lanes 4..15 jump to the join
        MockOp::Exit,                 // 3
        MockOp::Nop,                  // 4: join
        MockOp::Exit,                 // 5
    ]);
    let stats = run(&mock, &info(6, &[(0, 4)]), &global_words(1), &config(1, 32)).unwrap();
    assert_eq!(
        mock.executed_at(4)
            .iter()
            .map(|e| e.mask)
            .collect::<Vec<_>>(),
        vec![!0xf]
    );
    assert_eq!(stats.reconvergences, 1);
}

#[test]
fn lanes_that_meet_again_at_a_loop_head_are_merged() {
    // Lanes 0..15 take a short path and lanes 16..31 a longer one to the same backward branch.
    // The branch has no reconvergence point, so only the merge of runnable groups standing at
    // the same pc with the same stack brings them back together at the loop head.
    let mock = Mock::new(vec![
        lane(|w, _, l| set_reg(w, 0, l, reg(w, 0, l) + 1)), // 0: loop head
        branch(3, |_, _, l| l < 16),                        // 1
        MockOp::Nop,                                        // 2: long path
        branch(0, |w, _, l| reg(w, 0, l) < 3),              // 3: back edge
        MockOp::Exit,                                       // 4
    ]);
    run(&mock, &info(5, &[]), &global_words(1), &config(1, 32)).unwrap();
    let head: Vec<u32> = mock.executed_at(0).iter().map(|e| e.mask).collect();
    assert_eq!(
        head,
        vec![FULL, FULL, FULL],
        "the two paths merge again at the loop head"
    );
}

// ---- forward progress ------------------------------------------------------------------------

/// Where a test's spin lock lives.
#[derive(Clone, Copy)]
enum LockWord {
    /// Shared word 0: one lock per CTA.
    Shared,
    /// Global word `i`: one lock for the grid.
    Global(u32),
}

impl LockWord {
    fn word<'a>(self, env: &'a CtaEnv) -> &'a AtomicU32 {
        match self {
            LockWord::Shared => sword(env, 0),
            LockWord::Global(i) => gword(env, i),
        }
    }
}

/// A spin lock around a non-atomic increment of global word 0: lane order decides who wins; a
/// lost update would show as a count below the number of threads.
fn spin_lock_program(lock: LockWord) -> (Vec<MockOp>, KernelInfo) {
    spin_lock_program_counting(lock, false)
}

/// [`spin_lock_program`]; with `count_attempts` each lane also counts its attempts in R2, so
/// its registers change every iteration.
fn spin_lock_program_counting(lock: LockWord, count_attempts: bool) -> (Vec<MockOp>, KernelInfo) {
    let ops = vec![
        // 0: try to take the lock
        lane(move |w, env, l| {
            if count_attempts {
                set_reg(w, 2, l, reg(w, 2, l) + 1);
            }
            let won = lock
                .word(env)
                .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok();
            set_reg(w, 0, l, won as u32);
        }),
        // 1: retry while the lock was not taken
        branch(0, |w, _, l| reg(w, 0, l) == 0),
        // 2, 3: non-atomic critical section
        lane(|w, env, l| set_reg(w, 1, l, gword(env, 0).load(Ordering::Relaxed))),
        lane(|w, env, l| gword(env, 0).store(reg(w, 1, l) + 1, Ordering::Relaxed)),
        // 4: release
        lane(move |_, env, _| lock.word(env).store(0, Ordering::Release)),
        MockOp::Exit,
    ];
    (ops, info(6, &[(1, 2)]))
}

#[test]
fn a_spin_lock_contended_by_the_lanes_of_one_warp_terminates() {
    let (ops, info) = spin_lock_program(LockWord::Shared);
    let mock = Mock::new(ops);
    let global = global_words(1);
    let stats = run(&mock, &info, &global, &config(1, 32)).unwrap();
    assert_eq!(
        read_global(&global, 0),
        32,
        "every lane entered the critical section alone"
    );
    // The first holder parks at the end of the retry loop and is released when its waiters
    // are seen spinning; the warp then knows the branch as a spin exit, and the 30 holders
    // after it run their critical section without parking.
    assert_eq!(
        (stats.divergences, stats.dissolved_joins),
        (31, 1),
        "{stats:?}"
    );
    // A group that splits does not end its warp's turn: each winner runs its critical section
    // in the quantum in which it won (one quantum per hand-over, a few more for the first).
    assert!(stats.quanta <= 36, "{stats:?}");
}

#[test]
fn a_spin_loop_whose_registers_change_releases_the_holder_after_the_yield_limit() {
    let (ops, info) = spin_lock_program_counting(LockWord::Shared, true);
    let mock = Mock::new(ops);
    let global = global_words(1);
    let stats = run(&mock, &info, &global, &config(1, 32)).unwrap();
    assert_eq!(read_global(&global, 0), 32);
    // The spinners never repeat their state, so each holder waits for the yield limit.
    assert!(stats.dissolved_joins >= 31, "{stats:?}");
    assert!(
        stats.yields > 31 * u64::from(YIELDS_BEFORE_RELEASE),
        "{stats:?}"
    );
}

#[test]
fn a_loop_that_makes_progress_keeps_its_early_leavers_parked_until_it_ends() {
    let mock = Mock::new(vec![
        lane(|w, _, l| set_reg(w, 0, l, reg(w, 0, l) + 1)), // 0
        branch(0, |w, _, l| reg(w, 0, l) < if l < 16 { 3 } else { 40 }), // 1
        MockOp::Nop,                                        // 2: after the loop
        MockOp::Exit,                                       // 3
    ]);
    let stats = run(&mock, &info(4, &[(1, 2)]), &global_words(1), &config(1, 32)).unwrap();
    assert_eq!(
        mock.executed_at(2)
            .iter()
            .map(|e| e.mask)
            .collect::<Vec<_>>(),
        vec![FULL]
    );
    assert_eq!((stats.reconvergences, stats.dissolved_joins), (1, 0));
}

#[test]
fn a_spin_lock_contended_by_warps_and_lanes_of_one_cta_terminates() {
    let (ops, info) = spin_lock_program(LockWord::Shared);
    let mock = Mock::new(ops);
    let global = global_words(1);
    run(&mock, &info, &global, &config(1, 96)).unwrap();
    assert_eq!(read_global(&global, 0), 96);
}

#[test]
fn a_warp_spinning_on_shared_memory_waits_for_another_warp() {
    let mock = Mock::new(vec![
        branch(4, |w, _, _| w.warp_id == 1), // 0
        branch(1, |_, env, _| sword(env, 0).load(Ordering::Acquire) != 1), // 1: spin
        count_global(0),                     // 2
        MockOp::Exit,                        // 3
        lane(|w, _, l| set_reg(w, 0, l, reg(w, 0, l) + 1)), // 4: warp 1 works a while
        branch(4, |w, _, l| reg(w, 0, l) < 100), // 5
        lane(|_, env, _| sword(env, 0).store(1, Ordering::Release)), // 6: then sets the flag
        MockOp::Exit,                        // 7
    ]);
    let global = global_words(1);
    let stats = run(&mock, &info(8, &[]), &global, &config(1, 64)).unwrap();
    assert_eq!(read_global(&global, 0), 32);
    assert!(stats.yields > 100);
}

fn inter_cta_flag_program(setter: u32) -> Vec<MockOp> {
    vec![
        branch(4, move |_, env, _| env.ctaid[0] == setter), // 0
        branch(1, |_, env, _| gword(env, 1).load(Ordering::Acquire) != 1), // 1: spin on the flag
        count_global(0),                                    // 2
        MockOp::Exit,                                       // 3
        lane(|w, _, l| set_reg(w, 0, l, reg(w, 0, l) + 1)), // 4: the setter works a while
        branch(4, |w, _, l| reg(w, 0, l) < 100),            // 5
        lane(|_, env, _| gword(env, 1).store(1, Ordering::Release)), // 6: then sets the flag
        MockOp::Exit,                                       // 7
    ]
}

#[test]
fn ctas_spinning_on_each_other_terminate_on_one_host_thread() {
    for deterministic in [false, true] {
        let mock = Mock::new(inter_cta_flag_program(3));
        let global = global_words(2);
        let mut cfg = config(4, 32);
        cfg.deterministic(deterministic);
        let stats = run(&mock, &info(8, &[]), &global, &cfg).unwrap();
        assert_eq!(read_global(&global, 0), 3 * 32);
        assert_eq!(stats.threads, 1);
    }
}

#[test]
fn ctas_waiting_for_a_later_cta_make_more_ctas_resident() {
    // One worker starts with CTAs 0..3; they spin until CTA 39 raises the flag. Each time
    // every resident CTA waits, the worker doubles its resident CTAs: 4, 8, 16, 32, 64.
    for (threads, deterministic) in [(1, true), (1, false), (2, false)] {
        let mock = Mock::new(inter_cta_flag_program(39));
        let global = global_words(2);
        let mut cfg = config(40, 32);
        cfg.threads(threads).deterministic(deterministic);
        let stats = run(&mock, &info(8, &[]), &global, &cfg).unwrap();
        assert_eq!(read_global(&global, 0), 39 * 32, "{threads} threads");
        assert!(stats.resident_limit >= 40, "{threads} threads: {stats:?}");
        assert!(stats.spins > 0, "{stats:?}");
    }
}

#[test]
fn ctas_that_do_not_wait_keep_four_resident_per_worker() {
    // Loops that work (their registers change) and a barrier: nothing waits on memory.
    let mock = Mock::new(vec![
        lane(|w, _, l| set_reg(w, 0, l, reg(w, 0, l) + 1)), // 0
        branch(0, |w, _, l| reg(w, 0, l) < 300),            // 1
        MockOp::Bar(0),                                     // 2
        count_global(0),                                    // 3
        MockOp::Exit,                                       // 4
    ]);
    let global = global_words(1);
    let mut cfg = config(64, 96);
    cfg.threads(2);
    let stats = run(&mock, &info(5, &[]), &global, &cfg).unwrap();
    assert_eq!(read_global(&global, 0), 64 * 96);
    assert_eq!(stats.resident_limit, 2 * RESIDENT_CTAS_PER_WORKER as u64);
    assert_eq!(stats.spins, 0);
}

#[test]
fn ctas_waiting_for_a_flag_nobody_raises_end_with_the_watchdog() {
    // Every CTA becomes resident and spins: a true deadlock, which the time limit ends.
    let mock = Mock::new(inter_cta_flag_program(99));
    let mut cfg = config(6, 32);
    cfg.timeout(Some(Duration::from_millis(200)));
    let report = watchdog(run(&mock, &info(8, &[]), &global_words(2), &cfg));
    assert!(
        report.cause.starts_with("no completion after 0.2s"),
        "{}",
        report.cause
    );
    assert!(
        report.cause.contains("0 of 6 CTAs finished, 6 resident"),
        "{}",
        report.cause
    );
    // Nothing moved: the report says so rather than "still progressing".
    assert!(!report.progressing);
    assert!(
        report.cause.ends_with(
            "every resident CTA was waiting (spinning on memory or blocked) in its last round)"
        ),
        "{}",
        report.cause
    );
    let ctas: Vec<[u32; 3]> = report.stuck.iter().map(|w| w.cta).collect();
    assert_eq!(ctas, (0..6).map(|x| [x, 0, 0]).collect::<Vec<_>>());
    assert_eq!(
        report.stuck[0].groups,
        vec![(1, FULL, "running".to_string())]
    );
}

#[test]
fn ctas_waiting_for_a_cta_the_gpu_could_not_hold_end_with_the_watchdog() {
    // A GPU that holds 12 of these CTAs at once: CTA 12 is never resident while 0..11 spin.
    let kernel = kernel(8);
    let info = info(8, &[]);
    for threads in [1, 2] {
        let mock = Mock::new(inter_cta_flag_program(12));
        let mut cfg = config(13, 32);
        cfg.threads(threads)
            .timeout(Some(Duration::from_millis(200)));
        let global = global_words(2);
        let result = launch_with_cap((&kernel, &info, &mock), (&global, &[], &[]), &cfg, Some(12));
        let report = watchdog(result.map_err(|f| f.error));
        assert!(!report.progressing, "{threads} threads: {}", report.cause);
        assert!(
            report.cause.contains(
                "12 resident: the most the emulated GPU keeps resident for this kernel is 12"
            ),
            "{threads} threads: {}",
            report.cause
        );
        let mut ctas: Vec<u32> = report.stuck.iter().map(|w| w.cta[0]).collect();
        ctas.dedup();
        assert_eq!(ctas, (0..12).collect::<Vec<_>>(), "{threads} threads");
        // One more place, and the same grid terminates.
        let mock = Mock::new(inter_cta_flag_program(12));
        let global = global_words(2);
        cfg.timeout(Some(Duration::from_secs(20)));
        launch_with_cap((&kernel, &info, &mock), (&global, &[], &[]), &cfg, Some(13)).unwrap();
        assert_eq!(read_global(&global, 0), 12 * 32, "{threads} threads");
    }
}

/// AlloyForwardProgress's two-thread test 1 between lane 0 of warp 0 and lane 0 of warp 1 (the
/// other lanes exit): warp 0 exchanges 1 into global word 1 while it gets 0 back, warp 1
/// exchanges 0 while it gets 1. Run strictly in turn they undo each other forever.
fn exchange_pair_program() -> Vec<MockOp> {
    vec![
        branch(8, |_, _, l| l != 0),         // 0
        branch(5, |w, _, _| w.warp_id == 1), // 1
        lane(|w, env, l| set_reg(w, 0, l, gword(env, 1).swap(1, Ordering::AcqRel))), // 2
        branch(2, |w, _, l| reg(w, 0, l) == 0), // 3: warp 0 spins while it gets 0
        branch(7, |_, _, _| true),           // 4
        lane(|w, env, l| set_reg(w, 0, l, gword(env, 1).swap(0, Ordering::AcqRel))), // 5
        branch(5, |w, _, l| reg(w, 0, l) == 1), // 6: warp 1 spins while it gets 1
        count_global(0),                     // 7
        MockOp::Exit,                        // 8
    ]
}

#[test]
fn spinners_that_undo_each_other_in_strict_turns_terminate() {
    // Random back-offs let one of the two run twice in a row, which ends both loops.
    for deterministic in [true, false] {
        let mock = Mock::new(exchange_pair_program());
        let global = global_words(2);
        let mut cfg = config(1, 64);
        cfg.deterministic(deterministic);
        let stats = run(&mock, &info(9, &[]), &global, &cfg).unwrap();
        assert_eq!(read_global(&global, 0), 2, "both got out");
        assert!(stats.spins > 0, "{stats:?}");
    }
}

#[test]
fn a_loop_that_changes_its_registers_is_never_taken_for_a_spinner() {
    let mock = Mock::new(vec![
        lane(|w, _, l| set_reg(w, 0, l, reg(w, 0, l) + 1)), // 0
        branch(0, |w, _, l| reg(w, 0, l) < 5000),           // 1
        MockOp::Exit,                                       // 2
    ]);
    let stats = run(&mock, &info(3, &[]), &global_words(1), &config(2, 64)).unwrap();
    assert_eq!(stats.yields, 2 * 2 * 4999);
    assert_eq!(stats.spins, 0);
}

// ---- barriers --------------------------------------------------------------------------------

#[test]
fn a_barrier_holds_every_warp_until_all_threads_arrive() {
    let mock = Mock::new(vec![
        branch(3, |w, _, _| w.warp_id == 0), // 0: warp 1 works a while first
        lane(|w, _, l| set_reg(w, 0, l, reg(w, 0, l) + 1)), // 1
        branch(1, |w, _, l| reg(w, 0, l) < 50), // 2
        lane(|w, env, l| sword(env, tid(w, l)).store(tid(w, l) + 1, Ordering::Relaxed)), // 3
        MockOp::Bar(0),                      // 4
        lane(|w, env, l| {
            let other = sword(env, (tid(w, l) + 32) % 64).load(Ordering::Relaxed);
            gword(env, 0).fetch_add(other, Ordering::Relaxed);
        }), // 5: read what the other warp wrote before the barrier
        MockOp::Exit,                        // 6
    ]);
    let global = global_words(1);
    let stats = run(&mock, &info(7, &[]), &global, &config(2, 64)).unwrap();
    assert_eq!(read_global(&global, 0), 2 * (1..=64).sum::<u32>());
    assert_eq!(stats.barrier_releases, 2);
}

#[test]
fn exited_threads_no_longer_hold_back_a_barrier() {
    let mock = Mock::new(vec![
        branch(4, |w, _, _| w.warp_id == 1), // 0: warp 1 exits at once
        MockOp::Bar(0),                      // 1
        count_global(0),                     // 2
        MockOp::Exit,                        // 3
        MockOp::Exit,                        // 4
    ]);
    let global = global_words(1);
    let stats = run(&mock, &info(5, &[]), &global, &config(1, 64)).unwrap();
    assert_eq!(read_global(&global, 0), 32);
    assert_eq!(stats.barrier_releases, 1);
}

#[test]
fn a_barrier_inside_a_divergent_branch_releases_once_the_other_lanes_exit() {
    let mock = Mock::new(vec![
        branch(3, |_, _, l| l >= 16), // 0: lanes 16..31 skip the barrier
        MockOp::Bar(0),               // 1
        count_global(0),              // 2
        count_global(1),              // 3: join
        MockOp::Exit,                 // 4
    ]);
    let global = global_words(2);
    let stats = run(&mock, &info(5, &[(0, 3)]), &global, &config(1, 32)).unwrap();
    assert_eq!((read_global(&global, 0), read_global(&global, 1)), (16, 32));
    // The lanes parked at the join could never reach the barrier: the join was dissolved.
    assert_eq!((stats.dissolved_joins, stats.barrier_releases), (1, 1));
}

#[test]
fn lanes_of_one_warp_meet_at_different_barrier_instructions_with_the_same_id() {
    let mock = Mock::new(vec![
        branch(4, |_, _, l| l >= 16), // 0
        MockOp::Bar(0),               // 1
        count_global(0),              // 2
        MockOp::Exit,                 // 3
        MockOp::Bar(0),               // 4
        count_global(0),              // 5
        MockOp::Exit,                 // 6
    ]);
    let global = global_words(1);
    let stats = run(&mock, &info(7, &[]), &global, &config(1, 32)).unwrap();
    assert_eq!(read_global(&global, 0), 32);
    assert_eq!(stats.barrier_releases, 1);
}

#[test]
fn warps_waiting_at_different_barriers_are_a_deadlock() {
    let mock = Mock::new(vec![
        branch(3, |w, _, _| w.warp_id == 1), // 0
        MockOp::Bar(0),                      // 1
        MockOp::Exit,                        // 2
        MockOp::Bar(1),                      // 3
        MockOp::Exit,                        // 4
    ]);
    let report = watchdog(run(&mock, &info(5, &[]), &global_words(1), &config(1, 64)));
    assert!(report.cause.starts_with("deadlock: "), "{}", report.cause);
    assert!(
        report.cause.contains("32 at barrier 0") && report.cause.contains("32 at barrier 1"),
        "{}",
        report.cause
    );
    assert_eq!(report.kernel, "mock");
    assert_eq!(report.stuck.len(), 2);
    assert_eq!(
        report.stuck[0].groups,
        vec![(1, FULL, "at barrier".to_string())]
    );
    assert_eq!(report.stuck[0].insts, vec![(11, "op1".to_string())]);
    assert_eq!(
        report.stuck[1].groups,
        vec![(3, FULL, "at barrier".to_string())]
    );
    assert_eq!(report.stuck[1].insts, vec![(13, "op3".to_string())]);
}

#[test]
fn lanes_of_one_warp_at_different_barriers_are_a_deadlock() {
    let mock = Mock::new(vec![
        branch(3, |_, _, l| l >= 16), // 0
        MockOp::Bar(0),               // 1
        branch(5, |_, _, _| true),    // 2
        MockOp::Bar(1),               // 3
        MockOp::Nop,                  // 4
        MockOp::Exit,                 // 5: join
    ]);
    let report = watchdog(run(
        &mock,
        &info(6, &[(0, 5)]),
        &global_words(1),
        &config(1, 32),
    ));
    assert!(report.cause.starts_with("deadlock: "), "{}", report.cause);
    assert_eq!(
        report.stuck[0].groups,
        vec![
            (1, LOW16, "at barrier".to_string()),
            (3, HIGH16, "at barrier".to_string())
        ]
    );
}

// ---- traps, watchdog, internal errors --------------------------------------------------------

#[test]
fn a_failed_launch_counts_what_ran_before_it_stopped() {
    // CTAs 0-2 finish (4 instructions each); CTA 3 traps at its third instruction.
    let mock = Mock::new(vec![
        count_global(0),
        MockOp::Nop,
        MockOp::Trap {
            cta: [3, 0, 0],
            warp: 0,
            lane: 0,
        },
        MockOp::Exit,
    ]);
    let kernel = kernel(mock.ops.len());
    let mut cfg = config(4, 32);
    cfg.deterministic(true);
    let global = global_words(1);
    let failed = launch_counted((&kernel, &info(5, &[]), &mock), (&global, &[], &[]), &cfg)
        .expect_err("CTA 3 traps");
    assert!(matches!(failed.error, LaunchError::Trap(_)), "{failed}");
    let ran = &failed.ran;
    assert_eq!((ran.ctas, ran.lanes, ran.threads), (3, 96, 1));
    assert_eq!(ran.stats.warp_insts, 3 * 4 + 3);
    assert_eq!(ran.quanta, 4);
    assert_eq!(read_global(&global, 0), 4 * 32);
}

#[test]
fn a_trap_names_kernel_instruction_line_cta_warp_lane_space_and_address() {
    let mock = Mock::new(vec![
        count_global(0),
        MockOp::Nop,
        MockOp::Trap {
            cta: [1, 1, 0],
            warp: 1,
            lane: 9,
        },
        count_global(1),
        MockOp::Exit,
    ]);
    let mut cfg = config(1, 64);
    cfg.grid = [2, 2, 1];
    cfg.threads(2);
    let trap = match run(&mock, &info(5, &[]), &global_words(2), &cfg) {
        Err(LaunchError::Trap(trap)) => *trap,
        other => panic!("expected a trap, got {other:?}"),
    };
    assert_eq!(
        trap,
        Trap {
            reason: TrapReason::AddressOutOfRange,
            kernel: "mock".into(),
            pc: 2,
            line: 12,
            inst: "op2".into(),
            cta: [1, 1, 0],
            warp: 1,
            lane: 9,
            space: Space::Shared,
            address: 0x1234,
            surface: None,
        }
    );
    assert!(trap.to_string().contains("address out of range"));
}

#[test]
fn the_watchdog_ends_an_endless_loop_and_names_the_stuck_warps() {
    let mock = Mock::new(vec![branch(0, |_, _, _| true), MockOp::Exit]);
    for threads in [1, 2] {
        let mut cfg = config(2, 40);
        cfg.threads(threads)
            .timeout(Some(Duration::from_millis(200)));
        let started = Instant::now();
        let report = watchdog(run(&mock, &info(2, &[]), &global_words(1), &cfg));
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            report.cause.starts_with("no completion after 0.2s"),
            "{}",
            report.cause
        );
        let named: Vec<([u32; 3], u32)> = report.stuck.iter().map(|w| (w.cta, w.warp)).collect();
        assert_eq!(
            named,
            vec![
                ([0, 0, 0], 0),
                ([0, 0, 0], 1),
                ([1, 0, 0], 0),
                ([1, 0, 0], 1)
            ]
        );
        assert_eq!(
            report.stuck[0].groups,
            vec![(0, FULL, "running".to_string())]
        );
        assert_eq!(
            report.stuck[1].groups,
            vec![(0, 0xff, "running".to_string())]
        );
        assert_eq!(report.stuck[0].insts, vec![(10, "op0".to_string())]);
        assert!(report
            .to_string()
            .contains("running at instruction 0 (line 10: `op0`)"));
    }
}

#[test]
fn a_panicking_backend_is_an_internal_error_not_a_crash() {
    let mock = Mock::new(vec![MockOp::Nop, MockOp::Panic, MockOp::Exit]);
    for threads in [1, 2] {
        let mut cfg = config(4, 32);
        cfg.threads(threads);
        match run(&mock, &info(3, &[]), &global_words(1), &cfg) {
            Err(LaunchError::Config(message)) => {
                assert!(
                    message.contains("internal error") && message.contains("mock backend bug"),
                    "{message}"
                )
            }
            other => panic!("expected an internal error, got {other:?}"),
        }
    }
}

#[test]
fn a_backend_breaking_the_reconverge_contract_is_an_internal_error() {
    let mock = Mock::new(vec![MockOp::BogusReconverge, MockOp::Exit]);
    match run(&mock, &info(2, &[]), &global_words(1), &config(1, 32)) {
        Err(LaunchError::Config(message)) => {
            assert!(message.contains("no reconvergence point"), "{message}")
        }
        other => panic!("expected an internal error, got {other:?}"),
    }
}

// ---- determinism and threads -----------------------------------------------------------------

/// Divergence, a grid-wide spin lock (global word 3), a barrier and global atomics across
/// several CTAs.
fn busy_program() -> (Vec<MockOp>, KernelInfo) {
    let (mut ops, _) = spin_lock_program(LockWord::Global(3));
    ops.pop(); // drop the final EXIT of the lock program (pc 5)
    ops.extend([
        MockOp::Bar(0),                          // 5
        branch(9, |w, _, l| tid(w, l) % 3 == 0), // 6
        lane(|w, env, l| {
            gword(env, 1).fetch_add(tid(w, l), Ordering::Relaxed);
        }), // 7
        branch(10, |_, _, _| true),              // 8
        lane(|_, env, _| {
            gword(env, 2).fetch_add(1, Ordering::Relaxed);
        }), // 9
        MockOp::Exit,                            // 10: join
    ]);
    (ops, info(11, &[(1, 2), (6, 10)]))
}

#[test]
fn deterministic_mode_repeats_the_same_schedule_and_results() {
    let mut runs = Vec::new();
    for _ in 0..2 {
        let (ops, info) = busy_program();
        let mock = Mock::new(ops);
        let global = global_words(4);
        let mut cfg = config(6, 80);
        cfg.deterministic(true).threads(4);
        let stats = run(&mock, &info, &global, &cfg).unwrap();
        assert_eq!(stats.threads, 1);
        let memory: Vec<u32> = (0..3).map(|i| read_global(&global, i)).collect();
        runs.push((
            mock.calls(),
            memory,
            stats.stats,
            stats.quanta,
            stats.dissolved_joins,
        ));
    }
    assert_eq!(runs[0], runs[1]);
    assert_eq!(runs[0].1[0], 6 * 80);
}

#[test]
fn several_threads_give_the_same_totals() {
    let expected_sum: u32 = 64 * (0..96).filter(|t| t % 3 != 0).sum::<u32>();
    let expected_thirds = 64 * (0..96).filter(|t| t % 3 == 0).count() as u32;
    let mut per_cta_work = Vec::new();
    for threads in [1, 3, 4] {
        let (ops, info) = busy_program();
        let mock = Mock::new(ops);
        let global = global_words(4);
        let mut cfg = config(64, 96);
        cfg.threads(threads);
        let stats = run(&mock, &info, &global, &cfg).unwrap();
        assert_eq!(read_global(&global, 0), 64 * 96, "threads={threads}");
        assert_eq!(read_global(&global, 1), expected_sum, "threads={threads}");
        assert_eq!(
            read_global(&global, 2),
            expected_thirds,
            "threads={threads}"
        );
        assert_eq!(
            (stats.ctas, stats.lanes, stats.threads),
            (64, 64 * 96, threads)
        );
        per_cta_work.push(stats.barrier_releases);
    }
    assert!(per_cta_work.iter().all(|&b| b == 64));
}

// ---- launch configuration --------------------------------------------------------------------

#[test]
fn invalid_launch_shapes_are_rejected_with_a_reason() {
    let mock = Mock::new(vec![MockOp::Exit]);
    let global = global_words(1);
    let check = |cfg: &LaunchConfig, kernel: &Kernel, needle: &str| match launch(
        kernel,
        &info(1, &[]),
        &mock,
        &global,
        &[],
        &[],
        cfg,
    ) {
        Err(LaunchError::Config(message)) => {
            assert!(message.contains(needle), "{message} lacks {needle}")
        }
        other => panic!("expected a configuration error, got {other:?}"),
    };
    let k = kernel(1);
    let mut cfg = config(1, 32);
    cfg.grid = [1, 0, 1];
    check(&cfg, &k, "grid (1,0,1) has a zero dimension");
    let mut cfg = config(1, 32);
    cfg.block = [0, 1, 1];
    check(&cfg, &k, "block (0,1,1) has a zero dimension");
    let mut cfg = config(1, 32);
    cfg.block = [33, 32, 1];
    check(
        &cfg,
        &k,
        "block (33,32,1) has 1056 threads; a CTA has at most 1024",
    );
    let mut cfg = config(1, 32);
    cfg.block = [u32::MAX, u32::MAX, u32::MAX];
    check(&cfg, &k, "a CTA has at most 1024");
    let mut cfg = config(1, 32);
    cfg.shared_bytes = SHARED_WINDOW_BYTES + 1;
    check(&cfg, &k, "exceed the 16777216-byte (16 MB) shared window");
    let mut cfg = config(1, 32);
    cfg.grid = [u32::MAX, u32::MAX, u32::MAX];
    check(&cfg, &k, "more CTAs than a 64-bit count holds");
    let mut bad = kernel(1);
    bad.warp_size = 0;
    check(&config(1, 32), &bad, "warp size 0");
    let mut empty = kernel(1);
    empty.insts.clear();
    check(&config(1, 32), &empty, "has no instructions");
}

#[test]
fn threads_are_capped_at_the_number_of_ctas_and_zero_means_every_core() {
    let mock = Mock::new(vec![MockOp::Exit]);
    let mut cfg = config(2, 32);
    cfg.threads(16);
    assert_eq!(
        run(&mock, &info(1, &[]), &global_words(1), &cfg)
            .unwrap()
            .threads,
        2
    );
    cfg.threads(0);
    cfg.grid = [1, 1, 1];
    assert_eq!(
        run(&mock, &info(1, &[]), &global_words(1), &cfg)
            .unwrap()
            .threads,
        1
    );
}

#[test]
fn shared_memory_is_private_to_each_cta_and_starts_zeroed() {
    // Each CTA adds 1 to shared word 0 per lane, then reports it; reused windows must be zeroed.
    let mock = Mock::new(vec![
        lane(|_, env, _| {
            sword(env, 0).fetch_add(1, Ordering::Relaxed);
        }),
        MockOp::Bar(0),
        lane(|w, env, l| {
            if tid(w, l) == 0 {
                gword(env, 1 + env.ctaid[0])
                    .store(sword(env, 0).load(Ordering::Relaxed), Ordering::Relaxed);
            }
        }),
        MockOp::Exit,
    ]);
    let global = global_words(1 + 12);
    let mut cfg = config(12, 64);
    cfg.threads(2);
    run(&mock, &info(4, &[]), &global, &cfg).unwrap();
    for cta in 0..12 {
        assert_eq!(read_global(&global, 1 + cta), 64, "CTA {cta}");
    }
}

// ---- several warps per call (issue 14, item 4) -------------------------------------------------

/// A run of warps the batch entry was offered: `(CTA, first warp, warps offered, warps run)`.
type Batch = ([u32; 3], u32, usize, usize);

/// The mock behind the batch entry ([`WarpRunner::run_warps`]), recording each batch.
/// `one_by_one`: the entry runs the first warp it is offered and returns its event untaken, as
/// the scheduler ran warps before batches; otherwise it is the trait's default (warp by warp
/// while the scheduler takes the events).
struct Batching<'a> {
    mock: &'a Mock,
    one_by_one: bool,
    batches: Mutex<Vec<Batch>>,
}

impl WarpRunner for Batching<'_> {
    fn run_group(
        &self,
        warp: &mut WarpState,
        env: &CtaEnv,
        pc: u32,
        mask: u32,
        stop_pc: Option<u32>,
    ) -> GroupExit {
        self.mock.run_group(warp, env, pc, mask, stop_pc)
    }

    unsafe fn run_warps(
        &self,
        cache: &mut crate::exec::RunnerCache,
        run: &mut dyn crate::exec::WarpRun<'_>,
        env: &CtaEnv,
    ) -> (usize, Option<GroupExit>) {
        let (first, offered) = (run.state(0).warp_id, run.groups().len());
        let (ran, exit) = if self.one_by_one {
            let crate::exec::GroupAt { pc, mask } = run.groups()[0];
            let exit = self.mock.run_group(run.state(0), env, pc, mask, None);
            (1, (exit != GroupExit::Exited).then_some(exit))
        } else {
            // SAFETY: this function's contract is `run_warps_each`'s.
            unsafe { crate::exec::run_warps_each(self, cache, run, env) }
        };
        self.batches
            .lock()
            .unwrap()
            .push((env.ctaid, first, offered, ran));
        (ran, exit)
    }
}

/// Everything a launch of the mock shows: the backend calls and instructions in order, global
/// memory, the counters (warp counters; CTAs finished, quanta, yields, divergences,
/// reconvergences, dissolved joins, barrier releases, spins) and the trap or error.
#[derive(Debug, PartialEq)]
struct Outcome {
    calls: Vec<Call>,
    executed: Vec<Executed>,
    memory: Vec<u32>,
    counters: (Stats, [u64; 8]),
    trap: Option<Trap>,
    error: Option<String>,
}

fn outcome(
    mock: &Mock,
    runner: &dyn WarpRunner,
    info: &KernelInfo,
    words: u64,
    cfg: &LaunchConfig,
) -> Outcome {
    let kernel = kernel(mock.ops.len());
    let global = global_words(words);
    let (ran, error) = match launch_counted((&kernel, info, runner), (&global, &[], &[]), cfg) {
        Ok(stats) => (stats, None),
        Err(failed) => (failed.ran, Some(failed.error)),
    };
    Outcome {
        calls: mock.calls(),
        executed: mock.executed.lock().unwrap().clone(),
        memory: (0..words).map(|i| read_global(&global, i)).collect(),
        counters: (
            ran.stats.clone(),
            [
                ran.ctas,
                ran.quanta,
                ran.yields,
                ran.divergences,
                ran.reconvergences,
                ran.dissolved_joins,
                ran.barrier_releases,
                ran.spins,
            ],
        ),
        trap: match &error {
            Some(LaunchError::Trap(trap)) => Some((**trap).clone()),
            _ => None,
        },
        error: error.map(|e| e.to_string()),
    }
}

/// Runs the program `ops()` (deterministic) with batches and one warp per backend call, checks
/// that both show exactly the same, and returns the outcome and the batches.
fn batched_and_one_by_one(
    ops: impl Fn() -> Vec<MockOp>,
    info: &KernelInfo,
    words: u64,
    cfg: &LaunchConfig,
) -> (Outcome, Vec<Batch>) {
    let mut cfg = cfg.clone();
    cfg.deterministic(true);
    let [batched, one_by_one] = [false, true].map(|one_by_one| {
        let mock = Mock::new(ops());
        let runner = Batching {
            mock: &mock,
            one_by_one,
            batches: Mutex::new(Vec::new()),
        };
        let outcome = outcome(&mock, &runner, info, words, &cfg);
        (outcome, runner.batches.into_inner().unwrap())
    });
    assert_eq!(batched.0, one_by_one.0);
    batched
}

/// [`config`] with light barrier phases off: every quantum is one general round, whose runs
/// of light warps go to the batch entry (the tests of batches; a CTA whose warps are all light
/// otherwise runs in light phases, which call the backend warp by warp, see
/// `light_phases_make_the_calls_and_counts_of_general_rounds`).
fn general_rounds(grid: u32, block: u32) -> LaunchConfig {
    let mut c = config(grid, block);
    c.light_phases(0);
    c
}

/// `(warp, pc)` of each backend call.
fn warp_pcs(outcome: &Outcome) -> Vec<(u32, u32)> {
    outcome.calls.iter().map(|c| (c.warp, c.pc)).collect()
}

#[test]
fn a_batch_goes_on_past_a_barrier_arrival_and_the_released_warp_runs_in_the_next() {
    let ops = || {
        vec![
            branch(2, |w, _, _| w.warp_id != 2), // 0: every warp but warp 2 skips the barrier
            MockOp::Bar(0),                      // 1
            count_global(0),                     // 2
            MockOp::Exit,                        // 3
        ]
    };
    let (out, batches) = batched_and_one_by_one(ops, &info(4, &[]), 1, &general_rounds(1, 192));
    // Warps 0-5 run in one call: the scheduler takes warp 2's arrival and the run goes on (no
    // barrier can release while warps 3-5 have not run). Warp 5's exit releases it, and warp 2
    // runs on in a run of its own.
    assert_eq!(batches, vec![([0; 3], 0, 6, 6), ([0; 3], 2, 1, 1)]);
    assert_eq!(
        warp_pcs(&out),
        vec![(0, 0), (1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (2, 2)]
    );
    assert_eq!(out.memory, vec![192]);
    assert_eq!(out.counters.0.warp_insts, 5 * 3 + 4);
    assert_eq!(out.counters.1, [1, 2, 0, 0, 0, 0, 1, 0]);
}

#[test]
fn a_warp_that_reconverged_before_a_barrier_runs_in_batches_after_it() {
    let ops = || {
        vec![
            branch(2, |w, _, l| w.warp_id == 1 && l < 16), // 0: warp 1 splits
            count_global(0),                               // 1
            MockOp::Bar(0),                                // 2: join of 0
            count_global(0),                               // 3
            MockOp::Exit,                                  // 4
        ]
    };
    let (out, batches) =
        batched_and_one_by_one(ops, &info(5, &[(0, 2)]), 1, &general_rounds(1, 128));
    // Quantum 1: warp 0 arrives and the run goes on to warp 1, which splits; warps 2 and 3
    // arrive in a run of their own. Quanta 2 and 3: warp 1's lanes meet at the join, one group
    // again (quantum 2), and arrive (quantum 3). The release makes every warp light at pc 3:
    // warps 2 and 3 run to exit in that quantum in one call, warps 0 and 1 in the next, in
    // one call too (warp 1 is light again).
    assert_eq!(
        batches,
        vec![
            ([0; 3], 0, 4, 2),
            ([0; 3], 2, 2, 2),
            ([0; 3], 2, 2, 2),
            ([0; 3], 0, 2, 2)
        ]
    );
    assert_eq!(
        warp_pcs(&out)[4..],
        [(1, 1), (1, 2), (2, 3), (3, 3), (0, 3), (1, 3)]
    );
    assert_eq!(out.memory, vec![3 * 32 + 16 + 4 * 32]);
    assert_eq!(out.counters.1[1..7], [4, 0, 1, 1, 0, 1]);
}

#[test]
fn a_warp_released_from_a_barrier_runs_on_after_it_diverges_as_before() {
    // One warp: a barrier, then a branch that splits it (join at 3). After the release the warp
    // is light; its divergence runs on with the fall-through group in the same turn, as the
    // general path does for a warp's only group (a launch group's first run does not).
    let ops = || {
        vec![
            MockOp::Bar(0),              // 0
            branch(3, |_, _, l| l < 16), // 1: lanes 0-15 jump to the join
            count_global(0),             // 2
            MockOp::Exit,                // 3: join of 1
        ]
    };
    let (out, _) = batched_and_one_by_one(ops, &info(4, &[(1, 3)]), 1, &general_rounds(1, 32));
    // Quantum 1: the barrier (released at once). Quantum 2: pc 1 splits, the fall-through
    // group runs pc 2 and parks at the join, which completes. Quantum 3: pc 3 exits.
    assert_eq!(warp_pcs(&out), vec![(0, 0), (0, 1), (0, 2), (0, 3)]);
    assert_eq!(out.counters.1[1], 3, "quanta");
    assert_eq!(out.memory, vec![16]);
}

/// A backend whose warp 1 loses lanes on the way to a yield (they exited, the event's mask
/// leaves them out), while warp 0 waits at the barrier both reach at pc 1; after it, pc 2 exits.
struct LanesExitBeforeAYield;

impl WarpRunner for LanesExitBeforeAYield {
    fn run_group(
        &self,
        warp: &mut WarpState,
        _env: &CtaEnv,
        pc: u32,
        mask: u32,
        _stop_pc: Option<u32>,
    ) -> GroupExit {
        match (pc, warp.warp_id) {
            (0, 1) => {
                warp.exited |= mask & 0xffff_0000;
                GroupExit::Yield {
                    pc: 1,
                    mask: mask & 0xffff,
                }
            }
            (0 | 1, _) => GroupExit::Barrier { pc: 1, mask, id: 0 },
            _ => {
                warp.exited |= mask;
                GroupExit::Exited
            }
        }
    }
}

#[test]
fn lanes_that_exit_before_a_yield_no_longer_hold_up_a_barrier() {
    // Warp 0 arrives (32 lanes) in the same run in which warp 1 yields with 16 lanes left: the
    // barrier must release when those 16 arrive, not wait for the 16 that exited.
    let global = global_words(1);
    let stats = launch(
        &kernel(3),
        &info(3, &[]),
        &LanesExitBeforeAYield,
        &global,
        &[],
        &[],
        &config(1, 64),
    )
    .unwrap();
    assert_eq!((stats.ctas, stats.barrier_releases), (1, 1));
}

#[test]
fn a_batch_stops_at_the_warp_that_diverges_and_the_next_batch_starts_after_it() {
    let ops = || {
        vec![
            branch(2, |w, _, l| w.warp_id == 1 && l < 16), // 0: warp 1 splits
            count_global(0),                               // 1
            MockOp::Exit,                                  // 2: join
        ]
    };
    let (out, batches) =
        batched_and_one_by_one(ops, &info(3, &[(0, 2)]), 1, &general_rounds(1, 128));
    assert_eq!(batches, vec![([0; 3], 0, 4, 2), ([0; 3], 2, 2, 2)]);
    assert_eq!(
        warp_pcs(&out),
        vec![(0, 0), (1, 0), (2, 0), (3, 0), (1, 1), (1, 2)]
    );
    assert_eq!(out.memory, vec![3 * 32 + 16]);
    assert_eq!(out.counters.1, [1, 3, 0, 1, 1, 0, 0, 0]);
}

#[test]
fn a_batch_stops_at_the_warp_that_traps_and_the_report_names_it() {
    let ops = || {
        vec![
            count_global(0),                    // 0
            branch(3, |w, _, _| w.warp_id < 3), // 1: warps 0-2 exit at once
            MockOp::Trap {
                cta: [1, 0, 0],
                warp: 3,
                lane: 5,
            }, // 2
            MockOp::Exit,                       // 3
        ]
    };
    let (out, batches) = batched_and_one_by_one(ops, &info(4, &[]), 1, &general_rounds(2, 160));
    // CTA 0 runs in one call; in CTA 1 the call stops at warp 3, and warp 4 never runs.
    assert_eq!(batches, vec![([0; 3], 0, 5, 5), ([1, 0, 0], 0, 5, 4)]);
    assert!(!out.calls.iter().any(|c| c.cta == [1, 0, 0] && c.warp == 4));
    let trap = out.trap.expect("CTA 1 traps");
    assert_eq!(
        (trap.cta, trap.warp, trap.lane, trap.pc),
        ([1, 0, 0], 3, 5, 2)
    );
    assert_eq!(out.memory, vec![160 + 128]);
    // CTA 0: 3 warps × 3 instructions + 2 × 4; CTA 1: 3 × 3 + 3.
    assert_eq!(out.counters.0.warp_insts, 17 + 12);
    assert_eq!(out.counters.1[..2], [1, 2]);
}

#[test]
fn batches_give_the_schedule_and_counters_of_one_warp_per_call() {
    // 6 CTAs of 80 threads (two full warps and a partial one): a lock, a barrier, divergence.
    let (out, batches) =
        batched_and_one_by_one(|| busy_program().0, &busy_program().1, 4, &config(6, 80));
    assert_eq!(out.memory[0], 6 * 80);
    assert!(!batches.is_empty());
    let (out, _) = batched_and_one_by_one(
        || spin_lock_program(LockWord::Shared).0,
        &spin_lock_program(LockWord::Shared).1,
        1,
        &config(2, 96),
    );
    assert_eq!(out.memory[0], 2 * 96);
}

/// A kernel in which warps 0-2 of every CTA exit at once, warp 3 diverges, warps 3-7 meet at a
/// barrier, and in the trapping variant lane 2 of warp 4 of CTA 2 stores out of range.
const BATCH_MIX: &str = "
.kernel mix
.grid 4
.block 256
.shared 64
.buffer out u32[1024] = 0
        S2R R0, SR_TID.X ;
        S2R R1, SR_CTAID.X ;
        IMAD R3, R1, c[0x0][0x0], R0 ;
        ISETP.EQ.U32.AND P2, PT, R3, TRAP_AT, PT ;
        SEL R5, R3, 0x100000, !P2 ;
        IMAD.WIDE.U32 R4, R5, 0x4, c[0x0][out] ;
        STG.E [R4.64], R3 ;
        ISETP.LT.U32.AND P0, PT, R0, 0x60, PT ;
        @P0 EXIT ;
        ISETP.LT.U32.AND P1, PT, R0, 0x70, PT ;
        @P1 BRA skip ;
        ATOMS.ADD RZ, [RZ], R0 ;
skip:
        BAR.SYNC 0x0 ;
        LDS R6, [RZ] ;
        STG.E [R4.64], R6 ;
        EXIT ;
";

#[test]
fn the_jit_runs_batches_as_the_interpreter_runs_warps() {
    use crate::engine::{Backend, Config, Engine, Overrides};
    // 0x282 = 642: CTA 2, thread 130 (warp 4, lane 2); 0x1000 is no thread.
    for (trap_at, traps) in [("0x1000", false), ("0x282", true)] {
        let mut c = Config::default();
        c.threads(1).deterministic(true);
        let engine = Engine::new(&c);
        let source = BATCH_MIX.replace("TRAP_AT", trap_at);
        let module = engine.load("batch_mix.s", &source).unwrap();
        let run = |backend| {
            let report = module
                .run_with("mix", &Overrides::default(), backend, true)
                .unwrap();
            let mut launch = report.launch.clone();
            launch.wall = Duration::ZERO;
            let buffers: Vec<_> = report.buffers.iter().map(|b| format!("{b:?}")).collect();
            (
                format!("{launch:?}"),
                buffers,
                format!("{:?}", report.failure),
            )
        };
        let (jit, interp) = (run(Backend::Jit), run(Backend::Interp));
        assert_eq!(jit, interp, "trap at {trap_at}");
        assert_eq!(jit.2.contains("warp: 4, lane: 2"), traps, "{}", jit.2);
    }
}

// ---- fresh CTAs back to back (`fresh.rs`) ------------------------------------------------------

/// What a deterministic launch did, as far as a scheduler can tell it apart: every call and
/// executed instruction in order, the counters, the result, and global memory.
#[derive(Debug, PartialEq)]
struct Observed {
    calls: Vec<Call>,
    executed: Vec<Executed>,
    counts: [u64; 9],
    error: Option<String>,
    memory: Vec<u32>,
}

/// Runs `program()` deterministically on `grid` CTAs of `block` threads, with `shared_bytes`
/// of shared memory (none lets the worker run fresh CTAs back to back), and how many CTAs ran
/// their first quantum that way.
fn observe(
    program: fn() -> Vec<MockOp>,
    (grid, block, shared_bytes): (u32, u32, u32),
    words: u64,
) -> (Observed, u64) {
    let mock = Mock::new(program());
    let kernel = kernel(mock.ops.len());
    let mut cfg = config(grid, block);
    cfg.shared_bytes = shared_bytes;
    cfg.deterministic(true);
    let global = global_words(words);
    let info = info(mock.ops.len(), &[]);
    let (ran, error) = match launch_counted((&kernel, &info, &mock), (&global, &[], &[]), &cfg) {
        Ok(ran) => (ran, None),
        Err(failed) => (failed.ran, Some(failed.error.to_string())),
    };
    let observed = Observed {
        calls: mock.calls(),
        executed: mock.executed.lock().unwrap().clone(),
        counts: [
            ran.ctas,
            ran.stats.warp_insts,
            ran.quanta,
            ran.yields,
            ran.divergences,
            ran.reconvergences,
            ran.barrier_releases,
            ran.spins,
            ran.resident_limit,
        ],
        error,
        memory: (0..words).map(|i| read_global(&global, i)).collect(),
    };
    (observed, ran.fresh_ctas)
}

/// Warps that exit at once, with CTAs among them whose warp 1 diverges (CTA ≡ 1 mod 3), that
/// wait at a barrier (≡ 2 mod 4), or whose warps loop and yield (≡ 3 mod 5).
fn mixed_first_quanta() -> Vec<MockOp> {
    vec![
        branch(3, |w, env, l| {
            env.ctaid[0] % 3 == 1 && w.warp_id == 1 && l < 16
        }), // 0
        MockOp::Nop,                                                      // 1
        MockOp::Nop,                                                      // 2
        branch(5, |_, env, _| env.ctaid[0] % 4 != 2),                     // 3
        MockOp::Bar(0),                                                   // 4
        lane(|w, _, l| set_reg(w, 0, l, reg(w, 0, l) + 1)),               // 5
        branch(5, |w, env, l| env.ctaid[0] % 5 == 3 && reg(w, 0, l) < 3), // 6
        lane(|w, env, l| {
            let slot = 1 + env.ctaid[0] * 96 + tid(w, l);
            gword(env, slot).fetch_add(reg(w, 0, l), Ordering::Relaxed);
        }), // 7
        count_global(0),                                                  // 8
        MockOp::Exit,                                                     // 9
    ]
}

#[test]
fn fresh_ctas_back_to_back_make_the_calls_a_resident_cta_would() {
    let shape = |shared| (20, 96, shared);
    let (resident, none) = observe(mixed_first_quanta, shape(256), 1 + 20 * 96);
    let (fresh, ran_fresh) = observe(mixed_first_quanta, shape(0), 1 + 20 * 96);
    assert_eq!(none, 0, "a kernel with shared memory is never run fresh");
    // Every CTA's first quantum ran in a run of fresh CTAs (those that stopped became
    // resident), and the backend saw exactly the same calls.
    assert_eq!(ran_fresh, 20);
    assert_eq!(fresh, resident);
    assert_eq!(fresh.error, None);
    assert_eq!(fresh.memory[0], 20 * 96);
    for cta in 0..20u32 {
        let looped = if cta % 5 == 3 { 3 } else { 1 };
        for t in 0..96 {
            let slot = (1 + cta * 96 + t) as usize;
            assert_eq!(fresh.memory[slot], looped, "CTA {cta} thread {t}");
        }
    }
    let [_, _, _, yields, divergences, _, barriers, _, _] = fresh.counts;
    assert!(
        yields > 0 && divergences > 0 && barriers > 0,
        "{:?}",
        fresh.counts
    );
}

/// CTA 3 traps in warp 1 lane 5, after warp 0 of it exited: the run of fresh CTAs stops at
/// its warp 1.
fn trap_in_a_later_warp() -> Vec<MockOp> {
    vec![
        count_global(0),
        MockOp::Trap {
            cta: [3, 0, 0],
            warp: 1,
            lane: 5,
        },
        MockOp::Exit,
    ]
}

#[test]
fn a_trap_in_a_run_of_fresh_ctas_is_reported_as_a_resident_ctas_would_be() {
    let (resident, _) = observe(trap_in_a_later_warp, (6, 64, 256), 1);
    let (fresh, ran_fresh) = observe(trap_in_a_later_warp, (6, 64, 0), 1);
    assert_eq!(
        ran_fresh, 4,
        "CTAs 0..=2 finished, CTA 3 stopped at its trap"
    );
    assert_eq!(fresh, resident);
    let error = fresh.error.as_deref().expect("CTA 3 traps");
    assert!(
        error.contains("warp 1") && error.contains("lane 5"),
        "{error}"
    );
    // Three CTAs of 64 threads finished; CTA 3's warp 0 exited before warp 1 trapped.
    assert_eq!(fresh.counts[0], 3);
    assert_eq!(fresh.memory[0], 3 * 64 + 64);
}

#[test]
fn ctas_that_stop_in_a_run_of_fresh_ctas_still_wait_for_a_later_cta() {
    // CTAs 0..=38 spin until CTA 39 raises the flag: each one stops the run it started in,
    // becomes resident, and the worker grows its residency until CTA 39 runs.
    let program = || inter_cta_flag_program(39);
    let (resident, _) = observe(program, (40, 32, 256), 2);
    let (fresh, ran_fresh) = observe(program, (40, 32, 0), 2);
    assert!(ran_fresh > 0);
    assert_eq!(fresh, resident);
    assert_eq!(fresh.memory[0], 39 * 32);
}

// ---- light barrier phases (`cta.rs`, `light_phases`) -------------------------------------------

fn exit_lanes(cond: impl Fn(&WarpState, &CtaEnv, u32) -> bool + Send + Sync + 'static) -> MockOp {
    MockOp::ExitLanes(Box::new(cond))
}

/// Four barrier phases with light warps throughout: lanes leave without diverging before the
/// first barrier (so arrivals carry fewer lanes than the warp had), warp 1 leaves after it,
/// the second phase waits at barrier 1, and one lane of each warp leaves before the third.
fn phases_program() -> (Vec<MockOp>, KernelInfo) {
    let ops = vec![
        count_global(0),                                             // 0
        exit_lanes(|w, env, l| (tid(w, l) + env.ctaid[0]) % 7 == 3), // 1
        MockOp::Bar(0),                                              // 2
        branch(9, |w, _, _| w.warp_id == 1),                         // 3: warp 1 leaves
        count_global(1),                                             // 4
        MockOp::Bar(1),                                              // 5
        exit_lanes(|w, _, l| l == w.warp_id),                        // 6
        count_global(2),                                             // 7
        MockOp::Bar(0),                                              // 8
        MockOp::Exit,                                                // 9
    ];
    (ops, info(10, &[]))
}

/// [`phases_program`]'s three counts for `grid` CTAs of `block` threads, thread by thread.
fn phases_expected(grid: u32, block: u32) -> Vec<u32> {
    let mut counts = vec![0; 3];
    for cta in 0..grid {
        for t in 0..block {
            let (warp, lane) = (t / 32, t % 32);
            counts[0] += 1;
            if (t + cta) % 7 == 3 || warp == 1 {
                continue;
            }
            counts[1] += 1;
            if lane != warp {
                counts[2] += 1;
            }
        }
    }
    counts
}

/// A lane traps in the second phase of CTA 0 (warp 2, lane 3).
fn trap_in_a_later_phase() -> (Vec<MockOp>, KernelInfo) {
    let ops = vec![
        count_global(0), // 0
        MockOp::Bar(0),  // 1
        MockOp::Trap {
            cta: [0, 0, 0],
            warp: 2,
            lane: 3,
        }, // 2
        count_global(1), // 3
        MockOp::Bar(0),  // 4
        MockOp::Exit,    // 5
    ];
    (ops, info(6, &[]))
}

/// After a first phase in which warp 2 loses its lanes 16-31 without diverging, warp 1 waits
/// at barrier 1 and the others at barrier 0: a deadlock found at the end of the second phase,
/// whose report counts the live lanes that retired in light phases.
fn deadlock_in_a_later_phase() -> (Vec<MockOp>, KernelInfo) {
    deadlock_after(16, false)
}

/// [`deadlock_in_a_later_phase`] with no lane lost before the first barrier, but warp 3
/// exiting in the second phase.
fn deadlock_after_an_exit() -> (Vec<MockOp>, KernelInfo) {
    deadlock_after(0, true)
}

/// [`deadlock_in_a_later_phase`] in which warp 2 loses `lost` lanes and warp 3 exits or not.
fn deadlock_after(lost: u32, warp3_exits: bool) -> (Vec<MockOp>, KernelInfo) {
    let ops = vec![
        count_global(0),                                             // 0
        exit_lanes(move |w, _, l| w.warp_id == 2 && l >= 32 - lost), // 1
        MockOp::Bar(0),                                              // 2
        branch(7, |w, _, _| w.warp_id == 1),                         // 3
        branch(8, move |w, _, _| w.warp_id == 3 && warp3_exits),     // 4
        MockOp::Bar(0),                                              // 5
        MockOp::Exit,                                                // 6
        MockOp::Bar(1),                                              // 7
        MockOp::Exit,                                                // 8
    ];
    (ops, info(9, &[]))
}

/// Warp 0 exits in the first phase; in the second, warp 1 loops (a uniform backward branch:
/// a yield) and warp 2 splits, so the phase stops at a warp after a finished one.
fn stop_after_a_finished_warp() -> (Vec<MockOp>, KernelInfo) {
    let ops = vec![
        branch(8, |w, _, _| w.warp_id == 0), // 0: warp 0 leaves
        MockOp::Bar(0),                      // 1
        lane(|w, _, l| set_reg(w, 0, l, reg(w, 0, l) + 1)), // 2
        branch(2, |w, _, l| w.warp_id == 1 && reg(w, 0, l) < 3), // 3: warp 1 loops
        branch(6, |w, _, l| w.warp_id == 2 && l < 8), // 4: warp 2 splits
        count_global(1),                     // 5
        count_global(0),                     // 6: join
        MockOp::Bar(0),                      // 7
        MockOp::Exit,                        // 8
    ];
    (ops, info(9, &[(4, 6)]))
}

/// Runs `program` deterministically with at most `phases` light phases a quantum.
fn with_phases(
    program: fn() -> (Vec<MockOp>, KernelInfo),
    (grid, block): (u32, u32),
    phases: u32,
) -> Outcome {
    let (ops, info) = program();
    let mock = Mock::new(ops);
    let mut cfg = config(grid, block);
    cfg.deterministic(true).light_phases(phases);
    outcome(&mock, &mock, &info, 4, &cfg)
}

/// Everything but the number of quanta and the order in which CTAs took turns: each CTA's calls
/// and executed instructions in order, memory, the other counters, the error.
fn per_cta(out: &Outcome) -> impl PartialEq + std::fmt::Debug {
    let mut calls = out.calls.clone();
    calls.sort_by_key(|c| c.cta);
    let mut executed = out.executed.clone();
    executed.sort_by_key(|e| e.cta);
    let mut counters = out.counters.clone();
    counters.1[1] = 0;
    (
        calls,
        executed,
        out.memory.clone(),
        counters,
        out.trap.clone(),
        out.error.clone(),
    )
}

#[test]
fn light_phases_make_the_calls_and_counts_of_general_rounds() {
    type Program = fn() -> (Vec<MockOp>, KernelInfo);
    let busy: Program = busy_program;
    let lock: Program = || spin_lock_program(LockWord::Shared);
    let cases: [(&str, Program, bool); 8] = [
        ("phases", phases_program, true),
        ("busy", busy, true),
        ("lock", lock, true),
        ("barriers", || hist_like_program(20), true),
        ("trap", trap_in_a_later_phase, false),
        ("deadlock", deadlock_in_a_later_phase, false),
        ("exit, then deadlock", deadlock_after_an_exit, false),
        (
            "stop after a finished warp",
            stop_after_a_finished_warp,
            true,
        ),
    ];
    for (name, program, finishes) in cases {
        // Three warps a CTA go in a phase table on the stack, four on the heap (see
        // `STACK_PHASE_WARPS`).
        for shape in [(1, 96), (1, 80), (3, 80), (2, 128)] {
            let general = with_phases(program, shape, 0);
            // One phase a quantum is exactly one general round a quantum, call for call.
            assert_eq!(with_phases(program, shape, 1), general, "{name} {shape:?}");
            let light = with_phases(program, shape, LIGHT_PHASES_PER_QUANTUM);
            assert!(
                light.counters.1[1] <= general.counters.1[1],
                "{name} {shape:?}"
            );
            // More phases a quantum only let a CTA run on before the next takes its turn (a
            // failing launch stops at a different point of the other CTAs).
            if finishes || shape.0 == 1 {
                assert_eq!(per_cta(&light), per_cta(&general), "{name} {shape:?}");
            }
            assert_eq!(
                light.error.is_none(),
                finishes,
                "{name} {shape:?}: {:?}",
                light.error
            );
        }
    }
    let out = with_phases(phases_program, (3, 80), LIGHT_PHASES_PER_QUANTUM);
    assert_eq!(out.memory[..3], phases_expected(3, 80));
    // Four phases a CTA, in one quantum each; three releases a CTA.
    assert_eq!((out.counters.1[1], out.counters.1[6]), (3, 9));
    let general = with_phases(phases_program, (3, 80), 0);
    assert_eq!((general.counters.1[1], general.counters.1[6]), (12, 9));
    let trap = with_phases(trap_in_a_later_phase, (3, 96), LIGHT_PHASES_PER_QUANTUM).trap;
    let trap = trap.expect("CTA 0 traps");
    assert_eq!(
        (trap.cta, trap.warp, trap.lane, trap.pc),
        ([0, 0, 0], 2, 3, 2)
    );
    for (program, live) in [
        (deadlock_in_a_later_phase as Program, 112),
        (deadlock_after_an_exit, 96),
    ] {
        let deadlock = with_phases(program, (1, 128), LIGHT_PHASES_PER_QUANTUM);
        let cause = deadlock.error.expect("a deadlock");
        let waits = format!("{} at barrier 0, 32 at barrier 1 of {live} live", live - 32);
        assert!(cause.contains(&waits), "{cause}");
    }
}

/// `barriers` barriers in a row, each lane counting every phase in global word 0.
fn hist_like_program(barriers: usize) -> (Vec<MockOp>, KernelInfo) {
    let mut ops = Vec::new();
    for _ in 0..barriers {
        ops.push(count_global(0));
        ops.push(MockOp::Bar(0));
    }
    ops.push(count_global(0));
    ops.push(MockOp::Exit);
    let n = ops.len();
    (ops, info(n, &[]))
}

/// [`hist_like_program`] with 16 barriers, in whose third phase warp 1 splits (no
/// reconvergence point) and both sides reach the barrier, where they merge, in one general
/// round.
fn diverging_in_the_third_phase() -> (Vec<MockOp>, KernelInfo) {
    let (mut ops, _) = hist_like_program(16);
    // pc 4 counts and pc 5 waits: the split goes around the count.
    ops.splice(
        4..4,
        [
            branch(6, |w, _, l| w.warp_id == 1 && l < 16), // 4
            count_global(1),                               // 5
        ],
    );
    let n = ops.len();
    (ops, info(n, &[]))
}

#[test]
fn a_quantum_runs_a_light_ctas_barrier_phases_up_to_the_limit() {
    // 17 phases, the third a general round: it counts towards the quantum's eight.
    let out = with_phases(
        diverging_in_the_third_phase,
        (2, 64),
        LIGHT_PHASES_PER_QUANTUM,
    );
    assert_eq!((out.memory[0], out.memory[1]), (2 * 64 * 17, 2 * (64 - 16)));
    assert_eq!((out.counters.1[1], out.counters.1[3]), (2 * 3, 2));

    // 21 phases a CTA: three quanta of at most eight.
    let program = || hist_like_program(20);
    for (phases, quanta) in [(LIGHT_PHASES_PER_QUANTUM, 3), (5, 5), (1, 21), (0, 21)] {
        let out = with_phases(program, (2, 64), phases);
        assert_eq!(out.memory[0], 2 * 64 * 21, "{phases}");
        assert_eq!(out.counters.1[1], 2 * quanta, "{phases} phases a quantum");
        assert_eq!(out.counters.1[6], 2 * 20, "{phases}");
    }
}

#[test]
fn batches_in_the_rest_of_a_phase_give_the_calls_of_one_warp_per_call() {
    // Light phases on: the phase that warp 1's split interrupts goes on in a general round,
    // whose runs of light warps go to the batch entry.
    let info = diverging_in_the_third_phase().1;
    let (out, batches) = batched_and_one_by_one(
        || diverging_in_the_third_phase().0,
        &info,
        2,
        &config(2, 128),
    );
    assert!(!batches.is_empty());
    assert_eq!(out.memory[0], 2 * 128 * 17);
    let (_, batches) = batched_and_one_by_one(
        || stop_after_a_finished_warp().0,
        &stop_after_a_finished_warp().1,
        2,
        &config(2, 128),
    );
    assert!(!batches.is_empty());
}

#[test]
fn fresh_ctas_go_on_into_light_phases_as_resident_ones() {
    // A fresh CTA's first round is the run of fresh CTAs and the general round after it; a
    // resident CTA's is a light phase. Both then go on with the same phases in the quantum.
    for program in [
        (|| phases_program().0) as fn() -> Vec<MockOp>,
        || hist_like_program(20).0,
        || stop_after_a_finished_warp().0,
    ] {
        let (resident, _) = observe(program, (5, 96, 256), 4);
        let (fresh, ran_fresh) = observe(program, (5, 96, 0), 4);
        assert_eq!(ran_fresh, 5);
        assert_eq!(fresh, resident);
        assert_eq!(fresh.error, None);
    }
}

/// Warp 0 keeps only lane 0 on its way to the barrier; warp 1 has one lane.
fn one_lane_each_at_a_barrier() -> Vec<MockOp> {
    vec![
        exit_lanes(|w, _, l| w.warp_id == 0 && l >= 1), // 0
        count_global(0),                                // 1
        MockOp::Bar(0),                                 // 2
        count_global(0),                                // 3
        MockOp::Exit,                                   // 4
    ]
}

#[test]
fn an_arrival_counts_only_the_lanes_that_arrived() {
    // Counting warp 0's 32 lanes instead of the one that arrived would release the barrier
    // before warp 1 arrives (two releases instead of one), in a resident CTA and in a fresh
    // one's first quantum (whose arrival is applied as a light warp's step).
    for shared in [256, 0] {
        let (out, _) = observe(one_lane_each_at_a_barrier, (3, 33, shared), 1);
        assert_eq!(out.error, None);
        assert_eq!(out.memory[0], 3 * 2 * 2, "shared {shared}");
        assert_eq!(out.counts[6], 3, "one release a CTA (shared {shared})");
    }
}
