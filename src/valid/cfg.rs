//! The control-flow graph over instruction indices and its post-dominator tree.
//!
//! # Graph
//!
//! Nodes are the instructions `0..n` plus a virtual exit node `n`. Edges:
//! * an unguarded `EXIT` goes to the exit node; a guarded `EXIT` goes to the exit node *and*
//!   falls through (the lanes whose guard is false continue); `@!PT EXIT` only falls through;
//! * an unguarded `BRA` goes to its target; a guarded `BRA` to its target and the next
//!   instruction; `@!PT BRA` never branches and only falls through;
//! * every other instruction falls through (its guard does not change control flow).
//!
//! A fall-through past the last instruction is recorded in [`ControlFlow::falls_off`] (a
//! validation error when reachable) and, so that the analysis stays total on bad input, drawn as
//! an edge to the exit node. Branch targets outside the kernel (also an error) draw no edge.
//!
//! # Post-dominators
//!
//! Immediate post-dominators are the immediate dominators of the reverse graph rooted at the exit
//! node, computed with the iterative algorithm of Cooper, Harvey and Kennedy ("A Simple, Fast
//! Dominance Algorithm", 2001): number the nodes in post-order of a depth-first search from the
//! root, then repeatedly set each node's dominator to the intersection (walk up by post-order
//! number) of its processed predecessors until nothing changes. Nodes that cannot reach exit
//! (infinite loops, and code that only leads into them) are not in the reverse graph from exit;
//! their post-dominator is `None`. The reconvergence point of a divergent branch is its
//! immediate post-dominator: the first instruction every path from the branch must pass through.

use crate::ir::{Control, Kernel};

/// Control-flow facts of one kernel.
#[derive(Debug, Clone, Default)]
pub struct ControlFlow {
    /// Successors of each instruction; the value `n` (the instruction count) is the virtual exit.
    pub succ: Vec<Vec<u32>>,
    /// Instruction `pc` can fall through past the last instruction.
    pub falls_off: Vec<bool>,
    /// Instruction `pc` is reachable from the entry (instruction 0).
    pub reachable: Vec<bool>,
    /// Immediate post-dominator of each instruction: `Some(n)` is the virtual exit; `None` when
    /// the instruction cannot reach exit.
    pub ipdom: Vec<Option<u32>>,
}

/// Where control can go after instruction `pc`: `(successors, falls_off)`.
fn successors(kernel: &Kernel, pc: usize) -> (Vec<u32>, bool) {
    let n = kernel.insts.len();
    let inst = &kernel.insts[pc];
    let guard = inst.guard;
    // (branch target, falls through, goes to exit)
    let (target, falls, exits) = match inst.op.control() {
        Control::Exit => {
            if guard.is_never() {
                (None, true, false)
            } else if guard.is_always() {
                (None, false, true)
            } else {
                (None, true, true)
            }
        }
        Control::Branch { target } => {
            if guard.is_never() {
                (None, true, false)
            } else if guard.is_always() {
                (Some(target), false, false)
            } else {
                (Some(target), true, false)
            }
        }
        Control::UniformBranch { target } => {
            if guard.is_never() {
                (None, true, false)
            } else {
                (Some(target), true, false)
            }
        }
        // The lanes that do not continue execute the split again.
        Control::Split { .. } => {
            if guard.is_never() {
                (None, true, false)
            } else {
                (Some(pc as u32), true, false)
            }
        }
        Control::Next | Control::Barrier => (None, true, false),
    };
    let exit = n as u32;
    let mut succ = Vec::with_capacity(2);
    let mut falls_off = false;
    if let Some(t) = target {
        if (t as usize) < n {
            succ.push(t);
        }
    }
    if falls {
        if pc + 1 < n {
            succ.push(pc as u32 + 1);
        } else {
            falls_off = true;
            succ.push(exit);
        }
    }
    if exits {
        succ.push(exit);
    }
    succ.sort_unstable();
    succ.dedup();
    (succ, falls_off)
}

/// Builds the graph and computes reachability and immediate post-dominators.
pub fn analyze(kernel: &Kernel) -> ControlFlow {
    let n = kernel.insts.len();
    let (succ, falls_off): (Vec<Vec<u32>>, Vec<bool>) =
        (0..n).map(|pc| successors(kernel, pc)).unzip();

    let mut reachable = vec![false; n];
    let mut stack = Vec::new();
    if n > 0 {
        reachable[0] = true;
        stack.push(0usize);
    }
    while let Some(v) = stack.pop() {
        for &s in &succ[v] {
            let s = s as usize;
            if s < n && !reachable[s] {
                reachable[s] = true;
                stack.push(s);
            }
        }
    }

    let ipdom = post_dominators(&succ, n);
    ControlFlow {
        succ,
        falls_off,
        reachable,
        ipdom,
    }
}

/// The dominator tree of the reachable instructions, numbered for constant-time queries:
/// instruction `a` dominates `b` when every path from the entry (instruction 0) to `b` passes
/// through `a`.
#[derive(Debug, Clone)]
pub struct Dominators {
    /// Entry and exit time of each instruction in a depth-first walk of the tree; `None` for
    /// unreachable instructions.
    span: Vec<Option<(u32, u32)>>,
}

impl Dominators {
    /// Computes the tree with [`post_dominators`] on the reversed graph: the dominators of the
    /// forward graph rooted at a virtual entry `n` whose only edge goes to instruction 0 (edges
    /// to the virtual exit are dropped; they cannot change who dominates an instruction).
    pub fn of(flow: &ControlFlow) -> Dominators {
        let n = flow.succ.len();
        let mut reversed: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (v, ss) in flow.succ.iter().enumerate() {
            for &s in ss {
                if (s as usize) < n {
                    reversed[s as usize].push(v as u32);
                }
            }
        }
        if n > 0 {
            reversed[0].push(n as u32);
        }
        let idom = post_dominators(&reversed, n);
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n + 1];
        for (v, d) in idom.iter().enumerate() {
            if let Some(d) = d {
                children[*d as usize].push(v as u32);
            }
        }
        let mut span = vec![None; n];
        let mut clock = 0u32;
        let mut enter = vec![0u32; n + 1];
        let mut stack: Vec<(usize, usize)> = vec![(n, 0)];
        while let Some(&mut (v, ref mut next)) = stack.last_mut() {
            if let Some(&c) = children[v].get(*next) {
                *next += 1;
                enter[c as usize] = clock;
                clock += 1;
                stack.push((c as usize, 0));
            } else {
                if v < n {
                    span[v] = Some((enter[v], clock));
                }
                stack.pop();
            }
        }
        Dominators { span }
    }

    /// Whether `a` dominates `b` and is not `b`. False when either is unreachable.
    pub fn strictly_dominates(&self, a: usize, b: usize) -> bool {
        match (self.span[a], self.span[b]) {
            (Some((a_in, a_out)), Some((b_in, b_out))) => a != b && a_in <= b_in && b_out <= a_out,
            _ => false,
        }
    }
}

/// Immediate post-dominators of nodes `0..n` in the graph `succ` whose exit node is `n`.
fn post_dominators(succ: &[Vec<u32>], n: usize) -> Vec<Option<u32>> {
    let exit = n;
    // Predecessors in the forward graph are the successors in the reverse graph.
    let mut pred: Vec<Vec<u32>> = vec![Vec::new(); n + 1];
    for (v, ss) in succ.iter().enumerate() {
        for &s in ss {
            pred[s as usize].push(v as u32);
        }
    }

    // Post-order of a depth-first search of the reverse graph from exit (iterative).
    const UNVISITED: usize = usize::MAX;
    let mut po_num = vec![UNVISITED; n + 1];
    let mut order: Vec<usize> = Vec::with_capacity(n + 1);
    let mut visited = vec![false; n + 1];
    let mut stack: Vec<(usize, usize)> = vec![(exit, 0)];
    visited[exit] = true;
    while let Some(&mut (v, ref mut next)) = stack.last_mut() {
        if let Some(&p) = pred[v].get(*next) {
            *next += 1;
            let p = p as usize;
            if !visited[p] {
                visited[p] = true;
                stack.push((p, 0));
            }
        } else {
            po_num[v] = order.len();
            order.push(v);
            stack.pop();
        }
    }

    let mut idom: Vec<Option<usize>> = vec![None; n + 1];
    idom[exit] = Some(exit);
    let intersect = |idom: &[Option<usize>], mut a: usize, mut b: usize| -> usize {
        while a != b {
            while po_num[a] < po_num[b] {
                // Every processed node has a dominator that is processed too.
                a = idom[a].unwrap_or(exit);
            }
            while po_num[b] < po_num[a] {
                b = idom[b].unwrap_or(exit);
            }
        }
        a
    };
    let mut changed = true;
    while changed {
        changed = false;
        // Reverse post-order, skipping the root (the last node in post-order).
        for &v in order.iter().rev().skip(1) {
            let mut new_idom: Option<usize> = None;
            for &s in &succ[v] {
                let s = s as usize;
                if idom[s].is_none() {
                    continue;
                }
                new_idom = Some(match new_idom {
                    None => s,
                    Some(cur) => intersect(&idom, s, cur),
                });
            }
            if new_idom.is_some() && idom[v] != new_idom {
                idom[v] = new_idom;
                changed = true;
            }
        }
    }
    idom.truncate(n);
    idom.into_iter().map(|d| d.map(|x| x as u32)).collect()
}
