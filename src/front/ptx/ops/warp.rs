//! Warp-level instructions: `activemask`, `vote.sync`, `shfl.sync`, `match.sync`,
//! `redux.sync` and `bar.warp.sync`.
//!
//! # The membermask
//!
//! Each `.sync` instruction names the lanes that take part (`membermask`). On sm_70 and later
//! the hardware makes every lane of the mask arrive at the instruction before any proceeds,
//! and the PTX ISA leaves it undefined when an executing lane is not in the mask. atomjit
//! executes a collective over exactly the lanes that execute it together, and it cannot make
//! a lane that took another path wait, so it defines the case the hardware would resolve by
//! waiting (and the undefined one) as an error: **when the lanes executing the instruction
//! are not exactly `membermask`, the instruction traps** (a lane whose guard is false does not
//! execute it). The check is lowered before the instruction as
//!
//! ```text
//! sp = false                        (every lane of the group, whatever the guard)
//! t = ballot(true)                  (the executing lanes)
//! sp = t != membermask
//! @sp ld.global.u8 _, [0]           (address 0 is outside global memory: a trap)
//! ```
//!
//! so the trap is reported as an out-of-range access at address 0 by the `.sync`
//! instruction, whose text in the report ends with the note "membermask check". A launch
//! whose warps are full and converged at each `.sync` instruction (what `0xffffffff` masks
//! mean) never traps.
//!
//! Lanes of one converged group may name different masks: a cooperative-groups tile of 16
//! passes `0xffff << (laneid & 16)`, so the two halves of the warp each reduce on their own.
//! When the membermask is a register, the check is preceded by an [`Op::WarpSplit`] by it,
//! rejoining at the next instruction: the lanes naming each mask run the check and the
//! instruction as one group, and the check then holds for each tile. The split does not wait
//! for lanes of a membermask that are elsewhere: the check traps, as with an immediate mask.

use super::*;

/// The note on the check's trapping op (see the module docs).
pub const MEMBERMASK_NOTE: &str = "  // membermask check: the executing lanes are not the membermask, which atomjit does not run (see front::ptx::ops::warp)";

/// Ops that do not take their instruction's guard and text (see [`Lowered::overrides`]).
type Overrides = Vec<(usize, Guard, &'static str)>;

/// The ops of the membermask check and their overrides (indices relative to the start).
fn membermask_check(lw: &mut Lowerer, mask: &Operand) -> Result<(Vec<Op>, Overrides), SyntaxError> {
    let mask = lw.src(mask, Ty::B32, Width::Exact)?;
    let t = lw.scratch()?;
    let sp = lw.regs.scratch_pred(lw.span)?;
    let ops = vec![
        Op::PredLogic {
            op: BoolOp::And,
            dst: sp,
            a: PredSrc::FALSE,
            b: PredSrc::TRUE,
        },
        Op::Vote {
            mode: VoteMode::Any,
            dst: t,
            dst_pred: Pred::PT,
            src: PredSrc::TRUE,
        },
        Op::SetP {
            cmp: CmpOp::Ne,
            ty: Ty::U32,
            combine: BoolOp::And,
            dst: sp,
            dst2: Pred::PT,
            a: Src::plain(IrOp::Reg(t)),
            b: Src::plain(mask),
            c: PredSrc::TRUE,
            chain: None,
        },
        Op::Load {
            access: MemAccess {
                space: Space::Global,
                ty: Ty::U8,
                vector: 1,
                order: MemOrder::Weak,
                scope: Scope::Gpu,
                addr: Address::absolute(0),
            },
            dst: t.word(1),
        },
    ];
    let overrides = vec![
        (0, Guard::ALWAYS, ""),
        (
            3,
            Guard {
                pred: sp,
                negate: false,
            },
            MEMBERMASK_NOTE,
        ),
    ];
    Ok((ops, overrides))
}

/// The checked lowering of a `.sync` instruction: with a register membermask, the split by
/// it (see the module docs); the membermask check; then `ops`.
fn checked(lw: &mut Lowerer, mask: &Operand, ops: Vec<Op>) -> Result<Lowered, SyntaxError> {
    let (check, mut overrides) = membermask_check(lw, mask)?;
    let mut out = Vec::new();
    let value = lw.src(mask, Ty::B32, Width::Exact)?;
    if !matches!(value, IrOp::Imm(_)) {
        // The groups rejoin at the instruction after this one (a rejoin point relative to
        // the first op, which the caller rebases).
        // A group whose membermask names lanes elsewhere does not wait: the check traps.
        out.push(Op::WarpSplit {
            mask: Src::plain(value),
            rejoin: (1 + check.len() + ops.len()) as u32,
            wait: false,
        });
        for (k, _, _) in &mut overrides {
            *k += 1;
        }
    }
    out.extend(check);
    out.extend(ops);
    Ok(Lowered {
        ops: out,
        label: None,
        overrides,
    })
}

fn need_sync(q: &mut Quals) -> Result<(), SyntaxError> {
    if q.has("sync")? {
        return Ok(());
    }
    Err(SyntaxError::new(
        q.opcode_span,
        format!(
            "`{}` without .sync is not supported (it is deprecated, and sm_70 and later need .sync with a membermask)",
            q.opcode
        ),
    )
    .expected(format!("{}.sync", q.opcode)))
}

/// A destination `d` or `d|p`: the value register and the predicate (PT without one).
fn dst_and_pred(lw: &mut Lowerer, o: &Operand, ty: Ty) -> Result<(Reg, Pred), SyntaxError> {
    match o {
        Operand::PredPair { first, second, .. } => {
            let d = lw.dst(
                &Operand::Name {
                    name: first.0.clone(),
                    negate: false,
                    span: first.1,
                },
                ty,
                Width::Exact,
            )?;
            let p = lw.pred_name(&second.0, second.1)?;
            Ok((d, p))
        }
        other @ (Operand::Name { .. }
        | Operand::Special { .. }
        | Operand::Literal { .. }
        | Operand::Address { .. }
        | Operand::Surface { .. }
        | Operand::Vector { .. }
        | Operand::Sink { .. }) => Ok((lw.dst(other, ty, Width::Exact)?, Pred::PT)),
    }
}

/// `activemask.b32 d` → `Vote` ballot of `true`: the lanes executing it.
pub(super) fn lower_activemask(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 1, "d", end)?;
    q.one_type(&[Ty::B32])?;
    let dst = lw.dst(&ops[0], Ty::B32, Width::Exact)?;
    Lowered::one(Op::Vote {
        mode: VoteMode::Any,
        dst,
        dst_pred: Pred::PT,
        src: PredSrc::TRUE,
    })
}

/// `vote.sync.ballot.b32 d, {!}a, membermask` → `Vote` with the ballot in `d`;
/// `vote.sync.{all,any,uni}.pred d, {!}a, membermask` → `Vote` `All`/`Any`/`Eq` into `d`.
pub(super) fn lower_vote(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    need_sync(q)?;
    count(q, ops, 3, "d, {!}a, membermask", end)?;
    let Some((mode, _)) = q.one_of("mode", &["all", "any", "uni", "ballot"])? else {
        return Err(SyntaxError::new(q.opcode_span, "`vote.sync` needs a mode")
            .expected(".all .any .uni .ballot"));
    };
    let tys = q.types()?;
    let src = lw.pred_src(&ops[1])?;
    let op = if mode == "ballot" {
        if !matches!(tys.as_slice(), [(Kind::Value(Ty::B32), _)]) {
            return Err(
                SyntaxError::new(q.opcode_span, "`vote.sync.ballot` takes .b32").expected(".b32"),
            );
        }
        let dst = lw.dst(&ops[0], Ty::B32, Width::Exact)?;
        Op::Vote {
            mode: VoteMode::Any,
            dst,
            dst_pred: Pred::PT,
            src,
        }
    } else {
        if !matches!(tys.as_slice(), [(Kind::Pred, _)]) {
            return Err(
                SyntaxError::new(q.opcode_span, format!("`vote.sync.{mode}` takes .pred"))
                    .expected(".pred"),
            );
        }
        let dst_pred = lw.pred_dst(&ops[0])?;
        Op::Vote {
            mode: match mode.as_str() {
                "all" => VoteMode::All,
                "any" => VoteMode::Any,
                _ => VoteMode::Eq,
            },
            dst: Reg::RZ,
            dst_pred,
            src,
        }
    };
    checked(lw, &ops[2], vec![op])
}

/// `shfl.sync.{up,down,bfly,idx}.b32 d{|p}, a, b, c, membermask` → `Shfl`.
pub(super) fn lower_shfl(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    need_sync(q)?;
    count(q, ops, 5, "d{|p}, a, b, c, membermask", end)?;
    let Some((mode, _)) = q.one_of("mode", &["up", "down", "bfly", "idx"])? else {
        return Err(SyntaxError::new(q.opcode_span, "`shfl.sync` needs a mode")
            .expected(".up .down .bfly .idx"));
    };
    q.one_type(&[Ty::B32])?;
    let (dst, dst_pred) = dst_and_pred(lw, &ops[0], Ty::B32)?;
    let a = lw.src(&ops[1], Ty::B32, Width::Exact)?;
    let b = lw.src_plain(&ops[2], Ty::B32)?;
    let c = lw.src_plain(&ops[3], Ty::B32)?;
    let mode = match mode.as_str() {
        "up" => ShflMode::Up,
        "down" => ShflMode::Down,
        "bfly" => ShflMode::Bfly,
        _ => ShflMode::Idx,
    };
    let op = Op::Shfl {
        mode,
        dst,
        dst_pred,
        a,
        b,
        c,
    };
    checked(lw, &ops[4], vec![op])
}

/// `match.{any,all}.sync.{b32,b64} d{|p}, a, membermask` → `Match` (`d` is a .b32 lane mask).
pub(super) fn lower_match(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    let Some((mode, _)) = q.one_of("mode", &["any", "all"])? else {
        return Err(
            SyntaxError::new(q.opcode_span, "`match` needs .any or .all").expected(".any .all"),
        );
    };
    need_sync(q)?;
    count(q, ops, 3, "d{|p}, a, membermask", end)?;
    let ty = q.one_type(&[Ty::B32, Ty::B64])?;
    let all = mode == "all";
    let (dst, dst_pred) = dst_and_pred(lw, &ops[0], Ty::B32)?;
    if !all && dst_pred != Pred::PT {
        return Err(SyntaxError::new(
            ops[0].span(),
            "`match.any` has no predicate destination",
        ));
    }
    let src = lw.src(&ops[1], ty, Width::Exact)?;
    let op = Op::Match {
        all,
        ty,
        dst,
        dst_pred,
        src,
    };
    checked(lw, &ops[2], vec![op])
}

/// `redux.sync.{add,min,max}.{u32,s32}` and `redux.sync.{and,or,xor}.b32 d, a, membermask` →
/// `Redux`.
pub(super) fn lower_redux(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    need_sync(q)?;
    count(q, ops, 3, "d, a, membermask", end)?;
    let Some((name, span)) = q.one_of("operation", &["add", "min", "max", "and", "or", "xor"])?
    else {
        return Err(
            SyntaxError::new(q.opcode_span, "`redux.sync` needs an operation")
                .expected(".add .min .max .and .or .xor"),
        );
    };
    let (op, types): (BinOp, &[Ty]) = match name.as_str() {
        "add" => (BinOp::Add, &[Ty::U32, Ty::S32]),
        "min" => (BinOp::Min, &[Ty::U32, Ty::S32]),
        "max" => (BinOp::Max, &[Ty::U32, Ty::S32]),
        "and" => (BinOp::And, &[Ty::B32]),
        "or" => (BinOp::Or, &[Ty::B32]),
        _ => (BinOp::Xor, &[Ty::B32]),
    };
    let _ = span;
    let ty = q.one_type(types)?;
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    let src = lw.src(&ops[1], ty, Width::Exact)?;
    let op = Op::Redux { op, ty, dst, src };
    checked(lw, &ops[2], vec![op])
}

/// `bar.warp.sync membermask`: the lanes of the mask synchronise; atomjit's lanes of a warp
/// execute together, so this is the membermask check alone.
pub(super) fn lower_bar_warp(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 1, "membermask", end)?;
    q.has("warp")?;
    if !q.has("sync")? {
        return Err(
            SyntaxError::new(q.opcode_span, "`bar.warp` needs .sync").expected("bar.warp.sync")
        );
    }
    checked(lw, &ops[0], Vec::new())
}
