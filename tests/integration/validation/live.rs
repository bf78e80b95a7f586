//! Registers live after each instruction (`live.rs`): what a later instruction may still read.

use super::*;
use atomjit::ir::{CmpOp, Reg, Space, Ty};

/// The registers live after instruction `pc`.
fn live_after(k: &Kernel, pc: usize) -> Vec<usize> {
    let info = valid(k);
    let words = info.live_after(k, pc);
    (0..k.num_regs as usize)
        .filter(|&r| words[r / 64] >> (r % 64) & 1 != 0)
        .collect()
}

#[test]
fn a_value_is_live_until_its_last_read_and_nothing_after_exit() {
    let k = sass()
        .op(mov(Ty::U32, 2, cbank(0x0))) // 0
        .op(mov(Ty::U32, 3, cbank(0x4))) // 1
        .op(mov(Ty::U32, 4, imm(1))) // 2
        .op(store(Space::Global, Ty::U32, reg(4), wide(2, 0))) // 3: reads R2:R3 and R4
        .op(exit()) // 4
        .build();
    assert_eq!(live_after(&k, 0), vec![2]);
    assert_eq!(live_after(&k, 2), vec![2, 3, 4]);
    assert_eq!(live_after(&k, 3), Vec::<usize>::new());
    assert_eq!(live_after(&k, 4), Vec::<usize>::new());
}

#[test]
fn an_unguarded_rewrite_kills_but_a_guarded_one_does_not() {
    let k = sass()
        .op(mov(Ty::U32, 1, imm(5))) // 0
        .op(isetp(CmpOp::Eq, Ty::U32, 0, reg(6), imm(0))) // 1
        .guarded(at(0), mov(Ty::U32, 1, imm(7))) // 2: lanes with !P0 keep R1 = 5
        .op(store(Space::Global, Ty::U32, reg(1), wide(2, 0))) // 3
        .op(mov(Ty::U32, 1, imm(9))) // 4: R1 rewritten before its next read
        .op(store(Space::Global, Ty::U32, reg(1), wide(2, 0))) // 5
        .op(exit())
        .build();
    // After 0, R1 must survive the guarded write at 2.
    assert!(live_after(&k, 0).contains(&1));
    assert!(live_after(&k, 1).contains(&1));
    // After 3, R1's value is dead: instruction 4 overwrites it unguarded.
    assert!(!live_after(&k, 3).contains(&1));
    assert!(live_after(&k, 4).contains(&1));
}

#[test]
fn loops_keep_loop_carried_values_live_around_the_back_edge() {
    let k = sass()
        .op(mov(Ty::U32, 0, imm(0))) // 0
        .op(iadd3(1, reg(1), reg(0), reg(Reg::RZ.0))) // 1: loop head, R1 += R0
        .op(iadd3(0, reg(0), imm(1), reg(Reg::RZ.0))) // 2
        .op(isetp(CmpOp::Lt, Ty::U32, 0, reg(0), imm(8))) // 3
        .guarded(at(0), bra(1)) // 4
        .op(store(Space::Global, Ty::U32, reg(1), wide(2, 0))) // 5
        .op(exit())
        .build();
    // At the branch both the counter and the accumulator are live (back edge and exit path).
    assert_eq!(live_after(&k, 4), vec![0, 1, 2, 3]);
    // After the store nothing is.
    assert_eq!(live_after(&k, 5), Vec::<usize>::new());
}

/// A kernel whose control runs down a chain of `links` backward branches: it jumps to the
/// last link, each link jumps to the one before it, and the first lands on a read of R1 and R2.
/// The last link writes R1 (unguarded), the middle one writes R2 under `@P0`.
///
/// ```text
/// 0: ISETP P0 = c[0x0][0x0] == 0       2: IADD3 R0 = R1 + R2       4 + 2i: link i payload
/// 1: BRA link `links - 1`              3: EXIT                     5 + 2i: BRA link i - 1 (or 2)
/// ```
pub(super) fn backward_chain(links: u32) -> Kernel {
    let mut b = sass()
        .op(isetp(CmpOp::Eq, Ty::U32, 0, cbank(0x0), imm(0)))
        .op(bra(4 + 2 * (links - 1)))
        .op(iadd3(0, reg(1), reg(2), reg(Reg::RZ.0)))
        .op(exit());
    for i in 0..links {
        b = if i == links - 1 {
            b.op(mov(Ty::U32, 1, imm(1)))
        } else if i == links / 2 {
            b.guarded(at(0), mov(Ty::U32, 2, imm(7)))
        } else {
            b.op(nop())
        };
        b = b.op(bra(if i == 0 { 2 } else { 2 + 2 * i }));
    }
    b.build()
}

#[test]
fn liveness_travels_down_a_long_chain_of_backward_branches() {
    const LINKS: u32 = 3000;
    let k = backward_chain(LINKS);
    let info = valid(&k);
    let live = |pc: usize| -> Vec<usize> {
        (0..k.num_regs as usize)
            .filter(|&r| info.live_after(&k, pc)[r / 64] >> (r % 64) & 1 != 0)
            .collect()
    };
    // R2 is never written unguarded, so it is live from the start; R1 from its write on.
    assert_eq!(live(0), vec![2]);
    assert_eq!(live(1), vec![2]);
    assert_eq!(live(2), Vec::<usize>::new());
    assert_eq!(live(3), Vec::<usize>::new());
    for pc in 4..k.insts.len() {
        assert_eq!(live(pc), vec![1, 2], "after {pc}");
    }
}

#[test]
fn per_instruction_and_per_range_liveness_agree_on_every_program() {
    // The facts are kept per block and replayed: asking one instruction at a time and asking
    // for a whole range (what the JIT does) must give the same sets.
    for path in crate::program_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.to_string_lossy().to_string();
        let Ok(program) = atomjit::front::parse(&name, &text, atomjit::front::dialect_for(&name))
        else {
            continue; // PTX modules need their launch; the SASS programs are enough here
        };
        for k in &program.kernels {
            let Ok(info) = atomjit::valid::validate(k) else {
                continue;
            };
            let n = k.insts.len();
            let all = info.live_after_range(k, 0..n);
            for (pc, live) in all.iter().enumerate() {
                assert_eq!(&info.live_after(k, pc), live, "{name} `{}` pc {pc}", k.name);
            }
            let tail = info.live_after_range(k, n / 2..n);
            assert_eq!(&all[n / 2..], &tail[..], "{name} `{}`", k.name);
        }
    }
}

/// A PTX kernel of `depth` nested loops; loop `l` reads `carried` registers at its top that are
/// written only at its bottom, so their liveness has to travel around every back edge of the
/// nest (the shape whose validation once grew as the cube of nesting × registers).
fn nested_loops_ptx(depth: usize, carried: usize) -> String {
    let regs = depth * carried + 1;
    let mut s = format!(
        ".version 7.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 out)\n{{\n\
         .reg .u32 %r<{regs}>;\n.reg .u32 %i<{depth}>;\n.reg .pred %p<{depth}>;\n.reg .u64 %rd<1>;\n\
         ld.param.u64 %rd0, [out];\nmov.u32 %r0, 0;\n"
    );
    for l in 0..depth {
        s += &format!("mov.u32 %i{l}, 0;\nL{l}:\n");
        for k in 0..carried {
            s += &format!("add.u32 %r0, %r0, %r{};\n", 1 + l * carried + k);
        }
    }
    for l in (0..depth).rev() {
        for k in 0..carried {
            s += &format!("add.u32 %r{}, %r0, %i{l};\n", 1 + l * carried + k);
        }
        s += &format!("add.u32 %i{l}, %i{l}, 1;\nsetp.lt.u32 %p{l}, %i{l}, 2;\n@%p{l} bra L{l};\n");
    }
    s + "st.global.u32 [%rd0], %r0;\nret;\n}\n"
}

#[test]
fn nested_loops_validate_in_proportion_to_their_size() {
    // Figures printed (`--nocapture`), not asserted: time grows about linearly with the size.
    for (depth, carried) in [(250, 20), (500, 20), (1000, 20)] {
        let text = nested_loops_ptx(depth, carried);
        let program = atomjit::front::parse("nest.ptx", &text, Dialect::Ptx).expect("parses");
        let kernel = &program.kernels[0];
        let started = std::time::Instant::now();
        let info = valid(kernel);
        println!(
            "{depth} nested loops x {carried} carried registers: {} KB of PTX, {} instructions, validated in {:.3} s",
            text.len() / 1000,
            kernel.insts.len(),
            started.elapsed().as_secs_f64()
        );
        // Every carried register is read (at its loop's top) before anything writes it.
        let read_first = info.written_before_read().iter().filter(|w| !**w).count();
        assert_eq!(read_first, depth * carried, "{depth} x {carried}");
        // After `mov.u32 %i0, 0` every carried register is live (each is read around its
        // loop before it is written), with %r0, %i0 and the two words of %rd0.
        let top = kernel
            .insts
            .iter()
            .position(|i| i.text.starts_with("mov.u32 %i0,"))
            .expect("`mov.u32 %i0, 0`");
        let live: u32 = info
            .live_after(kernel, top)
            .iter()
            .map(|w| w.count_ones())
            .sum();
        assert_eq!(live as usize, depth * carried + 4, "{depth} x {carried}");
    }
}
