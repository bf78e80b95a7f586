//! Straight-line blocks of the control-flow graph, the unit the register dataflows keep facts
//! for.
//!
//! A block is a maximal run of instructions `start..end` in which control can only go from one
//! instruction to the next: every instruction but the last has exactly one successor, the next
//! one, and every instruction but the first has exactly one predecessor, the previous one. A
//! dataflow fact is then stored once per block (the registers live into it, or definitely
//! written before it) and recomputed inside a block on demand, so memory is blocks × registers
//! instead of instructions × registers: the straight-line SSA code compilers emit (tens of
//! thousands of instructions and registers in a few blocks) stays small.

use super::cfg::ControlFlow;

/// The blocks of a kernel and the graph between them.
#[derive(Debug, Clone, Default)]
pub struct Blocks {
    /// Each block's instructions, `start..end`, in instruction order.
    pub ranges: Vec<std::ops::Range<usize>>,
    /// Each block's successor blocks (the virtual exit is not a block).
    pub succ: Vec<Vec<usize>>,
    /// Each block's predecessor blocks.
    pub preds: Vec<Vec<usize>>,
    /// The block of each instruction.
    pub of: Vec<u32>,
}

impl Blocks {
    /// The blocks of a kernel of `n` instructions with control flow `flow`.
    pub fn new(n: usize, flow: &ControlFlow) -> Blocks {
        let mut pred_count = vec![0u32; n];
        for succ in &flow.succ {
            for &s in succ {
                if (s as usize) < n {
                    pred_count[s as usize] += 1;
                }
            }
        }
        // A block starts at 0, at an instruction with other than one predecessor, and after an
        // instruction whose only successor is not the next one.
        let mut starts = vec![false; n];
        for pc in 0..n {
            let falls_only = flow.succ.get(pc).is_some_and(|s| s == &[pc as u32 + 1]);
            if pc == 0 || pred_count[pc] != 1 {
                starts[pc] = true;
            }
            if !falls_only && pc + 1 < n {
                starts[pc + 1] = true;
            }
        }
        let mut ranges = Vec::new();
        let mut of = vec![0u32; n];
        for pc in 0..n {
            if starts[pc] {
                ranges.push(pc..pc + 1);
            } else if let Some(last) = ranges.last_mut() {
                last.end = pc + 1;
            }
            of[pc] = (ranges.len() - 1) as u32;
        }
        let mut succ = vec![Vec::new(); ranges.len()];
        let mut preds = vec![Vec::new(); ranges.len()];
        for (b, r) in ranges.iter().enumerate() {
            let last = r.end - 1;
            for &s in flow.succ.get(last).map(Vec::as_slice).unwrap_or(&[]) {
                if (s as usize) < n {
                    let t = of[s as usize] as usize;
                    if !succ[b].contains(&t) {
                        succ[b].push(t);
                        preds[t].push(b);
                    }
                }
            }
        }
        Blocks {
            ranges,
            succ,
            preds,
            of,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(succ: Vec<Vec<u32>>) -> ControlFlow {
        ControlFlow {
            succ,
            ..ControlFlow::default()
        }
    }

    #[test]
    fn blocks_split_at_targets_and_after_branches() {
        // 0 1 2(branch to 1 or fall) 3 4(exit): blocks {0}, {1,2}, {3,4}.
        let b = Blocks::new(
            5,
            &flow(vec![vec![1], vec![2], vec![1, 3], vec![4], vec![5]]),
        );
        assert_eq!(b.ranges, vec![0..1, 1..3, 3..5]);
        assert_eq!(b.of, vec![0, 1, 1, 2, 2]);
        assert_eq!(b.succ, vec![vec![1], vec![1, 2], vec![]]);
        assert_eq!(b.preds, vec![vec![], vec![0, 1], vec![1]]);
    }

    #[test]
    fn straight_line_code_is_one_block() {
        let n = 1000;
        let succ = (0..n).map(|pc| vec![pc as u32 + 1]).collect();
        let b = Blocks::new(n, &flow(succ));
        assert_eq!(b.ranges, vec![0..n]);
    }
}
