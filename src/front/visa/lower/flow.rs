//! SIMD control flow: the execution mask, `goto` and `ret`.
//!
//! The vISA specification (`documentation/visa/instructions/GOTO.md`) defines `goto` per
//! channel: on a **forward** jump the enabled channels whose predicate holds stop and wait at
//! the label, the others go on; if none is left running, execution continues at the next
//! program point where some channel waits. On a **backward** jump, if any enabled channel's
//! predicate holds, execution jumps to the label with those channels, and the others wait at
//! the instruction after the goto. Execution size 1 makes the branch uniform: the predicate of
//! the first channel decides for all.
//!
//! The lowering keeps, per lane, the join point its channel waits at (`resume`): 0 while it
//! runs, `k ≥ 1` for join point `k`, [`DONE`] after `ret`. Join points are the labels forward
//! gotos target and the instruction after each backward goto, numbered in program order (the
//! one after a goto before a label at the same place), so "the next point where some channel
//! waits" is the smallest waiting `resume`: a warp-wide minimum (IR `Redux`), then a chain of
//! compares that branches to that join point's code. A join point's code reactivates the
//! channels waiting there. Every branch the lowering emits has a warp-uniform guard.

use super::{err, LResult, Lower, Target, P_EM, P_T0, R_RESUME};
use crate::front::visa::ast::{self, Inst, Kernel, LabelId, OperandKind, Stmt};
use crate::ir::{self, Guard, Op, Operand, PredSrc, Ty};
use std::collections::{HashMap, HashSet};

/// `resume` of a finished channel.
pub(super) const DONE: u32 = u32::MAX;

/// The join points of a kernel.
#[derive(Debug, Default)]
pub(super) struct Joins {
    /// Label → its join point.
    labels: HashMap<LabelId, u32>,
    /// Statement index of a backward goto → the join point after it.
    after: HashMap<usize, u32>,
    /// How many join points there are (numbered 1..=count).
    pub count: u32,
}

impl Joins {
    /// Finds the join points: the targets of forward gotos and the points after backward ones.
    pub fn find(k: &Kernel) -> LResult<Joins> {
        // (position, order at that position, what): a point after a goto at statement `s` is
        // at `s + 1`, before a label at `s + 1`.
        let mut points: Vec<(usize, u8, Option<LabelId>, Option<usize>)> = Vec::new();
        for (si, stmt) in k.stmts.iter().enumerate() {
            let Stmt::Inst(inst) = stmt else { continue };
            if inst.mnemonic != "goto" {
                continue;
            }
            let label = goto_label(inst)?;
            let at = k.label(label).stmt;
            if at > si {
                if !points.iter().any(|p| p.2 == Some(label)) {
                    points.push((at, 1, Some(label), None));
                }
            } else {
                points.push((si + 1, 0, None, Some(si)));
            }
        }
        points.sort_by_key(|p| (p.0, p.1));
        let mut joins = Joins::default();
        for (i, p) in points.iter().enumerate() {
            let id = i as u32 + 1;
            if let Some(l) = p.2 {
                joins.labels.insert(l, id);
            }
            if let Some(s) = p.3 {
                joins.after.insert(s, id);
            }
        }
        joins.count = points.len() as u32;
        Ok(joins)
    }

    /// The join point at label `l`, if a forward goto targets it.
    pub fn at_label(&self, l: LabelId) -> Option<u32> {
        self.labels.get(&l).copied()
    }
}

fn goto_label(inst: &Inst) -> LResult<LabelId> {
    match inst.operands.last().map(|o| &o.kind) {
        Some(OperandKind::Label(l)) => Ok(*l),
        _ => Err(err(inst.span, "`goto` takes a label")),
    }
}

/// The labels some `goto` of `k` targets.
pub(super) fn goto_targets(k: &Kernel) -> HashSet<LabelId> {
    k.stmts
        .iter()
        .filter_map(|s| match s {
            ast::Stmt::Inst(inst) if inst.mnemonic == "goto" => goto_label(inst).ok(),
            _ => None,
        })
        .collect()
}

impl<'k> Lower<'k> {
    /// The code of join point `j`: the channels waiting here run again.
    pub(super) fn join_code(&mut self, j: u32) {
        self.join_pos.insert(j, self.body.len());
        self.emit_always(super::setp_u32(ir::CmpOp::Eq, P_T0, R_RESUME, u64::from(j)));
        self.emit(
            Guard {
                pred: P_T0,
                negate: false,
            },
            Op::Mov {
                ty: Ty::U32,
                dst: R_RESUME,
                src: Operand::Imm(0),
            },
        );
        self.update_mask();
    }

    /// `em = (resume == 0)`. Every change of the execution mask goes through here, so from here
    /// on channels may be missing (`em_whole` ends).
    fn update_mask(&mut self) {
        self.em_whole = false;
        self.emit_always(super::setp_u32(ir::CmpOp::Eq, P_EM, R_RESUME, 0));
    }

    /// If no channel runs: continue at the earliest join point where some channel waits, or
    /// end the thread if every channel is done.
    fn resume_if_idle(&mut self) {
        self.emit_always(Op::Vote {
            mode: ir::VoteMode::Any,
            dst: ir::Reg::RZ,
            dst_pred: P_T0,
            src: PredSrc {
                pred: P_EM,
                negate: false,
            },
        });
        let skip = self.body.len();
        self.emit_branch(
            Guard {
                pred: P_T0,
                negate: false,
            },
            Target::Body(0),
        );
        // min over lanes of resume − 1: running lanes (0) wrap to the largest value.
        let m = self.temp(1);
        self.emit_always(Op::Binary {
            op: ir::BinOp::Sub,
            ty: Ty::U32,
            dst: m,
            a: Operand::Reg(R_RESUME).into(),
            b: Operand::Imm(1).into(),
            ftz: false,
        });
        self.emit_always(Op::Redux {
            op: ir::BinOp::Min,
            ty: Ty::U32,
            dst: m,
            src: Operand::Reg(m),
        });
        for j in 1..=self.joins.count {
            self.emit_always(super::setp_u32(ir::CmpOp::Eq, P_T0, m, u64::from(j - 1)));
            self.emit_branch(
                Guard {
                    pred: P_T0,
                    negate: false,
                },
                Target::Join(j),
            );
        }
        // Every channel is done.
        self.emit_always(Op::Exit);
        let after = self.body.len();
        if let Some(f) = self.fixups.iter_mut().find(|(at, _)| *at == skip) {
            f.1 = Target::Body(after);
        }
    }

    /// `ret`, and the end of the code: the running channels are done.
    pub(super) fn finish_channels(&mut self) {
        if self.em_whole {
            // Every channel runs, so every channel is done and none waits: the thread ends.
            self.em_whole = false;
            self.emit_always(Op::Exit);
            return;
        }
        self.emit(
            Guard {
                pred: P_EM,
                negate: false,
            },
            Op::Mov {
                ty: Ty::U32,
                dst: R_RESUME,
                src: Operand::Imm(u64::from(DONE)),
            },
        );
        self.update_mask();
        self.resume_if_idle();
        // Unreachable: resume_if_idle always branches or exits when no channel runs, and none
        // runs here. Kept so the kernel cannot run past its end.
        self.emit_always(Op::Exit);
    }

    pub(super) fn lower_branch(&mut self, si: usize, inst: &Inst) -> LResult<()> {
        match inst.mnemonic.as_str() {
            "goto" => self.lower_goto(si, inst),
            other => Err(err(
                inst.mnemonic_span,
                format!(
                    "`{other}` is not supported yet (of the branches only `goto` and `ret` are)"
                ),
            )),
        }
    }

    fn lower_goto(&mut self, si: usize, inst: &Inst) -> LResult<()> {
        let label = goto_label(inst)?;
        let exec = self.exec_of(inst);
        if self.k.label(label).kind != ast::LabelKind::Block {
            return Err(err(inst.span, "`goto` must target a block label"));
        }
        // Which channels branch: the enabled ones whose predicate holds; at size 1, the first
        // channel's predicate decides for every running channel.
        let taken = if exec.size == 1 {
            let p = match &inst.pred {
                None => None,
                Some(p) => {
                    let pred = self.pred_of(p.var, p.span)?;
                    let off = exec.channel_offset();
                    let bits = self.channel_bits(pred, off, 1);
                    let bit = match p.ctrl {
                        // `.any`/`.all` of one channel is its bit.
                        ast::PredCtrl::Seq | ast::PredCtrl::Any | ast::PredCtrl::All => bits,
                    };
                    self.emit_always(super::setp_u32(ir::CmpOp::Ne, super::P_T1, bit, 0));
                    Some(PredSrc {
                        pred: super::P_T1,
                        negate: p.negate,
                    })
                }
            };
            let mut terms = vec![PredSrc {
                pred: P_EM,
                negate: false,
            }];
            terms.extend(p);
            self.conjunction(&terms, super::P_GUARD)
        } else {
            let g = self.guard(inst, true)?;
            if exec.no_mask {
                // Only running channels branch, mask control or not: a waiting or finished
                // channel must not be moved.
                let terms = [
                    PredSrc {
                        pred: g.pred,
                        negate: g.negate,
                    },
                    PredSrc {
                        pred: P_EM,
                        negate: false,
                    },
                ];
                self.conjunction(&terms, super::P_GUARD)
            } else {
                g
            }
        };
        let taken = PredSrc {
            pred: taken.pred,
            negate: taken.negate,
        };
        let forward = self.k.label(label).stmt > si;
        if forward {
            let j = self
                .joins
                .at_label(label)
                .expect("every forward goto's label is a join point");
            self.emit(
                Guard {
                    pred: taken.pred,
                    negate: taken.negate,
                },
                Op::Mov {
                    ty: Ty::U32,
                    dst: R_RESUME,
                    src: Operand::Imm(u64::from(j)),
                },
            );
            self.update_mask();
            self.resume_if_idle();
        } else {
            let j = *self
                .joins
                .after
                .get(&si)
                .expect("every backward goto has a join point after it");
            // Any channel taking it?
            self.emit_always(Op::Vote {
                mode: ir::VoteMode::Any,
                dst: ir::Reg::RZ,
                dst_pred: P_T0,
                src: taken,
            });
            // Running channels that do not branch wait after the goto (only if the jump happens).
            self.emit_always(Op::PredLogic {
                op: ir::BoolOp::And,
                dst: super::P_T1,
                a: PredSrc {
                    pred: P_EM,
                    negate: false,
                },
                b: PredSrc {
                    pred: taken.pred,
                    negate: !taken.negate,
                },
            });
            self.emit_always(Op::PredLogic {
                op: ir::BoolOp::And,
                dst: super::P_T1,
                a: PredSrc {
                    pred: super::P_T1,
                    negate: false,
                },
                b: PredSrc {
                    pred: P_T0,
                    negate: false,
                },
            });
            self.emit(
                Guard {
                    pred: super::P_T1,
                    negate: false,
                },
                Op::Mov {
                    ty: Ty::U32,
                    dst: R_RESUME,
                    src: Operand::Imm(u64::from(j)),
                },
            );
            self.update_mask();
            self.emit_branch(
                Guard {
                    pred: P_T0,
                    negate: false,
                },
                Target::Label(label),
            );
            self.join_code(j);
        }
        Ok(())
    }

    /// `ret (M1, 1)`.
    pub(super) fn lower_ret(&mut self, inst: &Inst) -> LResult<()> {
        if inst.pred.is_some() {
            return Err(err(inst.span, "a predicated `ret` is not supported yet"));
        }
        self.finish_channels();
        Ok(())
    }
}
