//! Bit manipulation and fused multiply-add: `shf`, `prmt`, `bfe`, `bfi`, `bfind`, `fma` and
//! float `mad`.

use super::*;

/// `shf.{l,r}.{wrap,clamp}.b32 d, a, b, c` → `Shf`: the funnel shift of the 64-bit `b:a`
/// (`a` the low word) by `c` (`.wrap`: `c & 31`; `.clamp`: `min(c, 32)`); `shf.l` keeps the
/// high word of the left shift, `shf.r` the low word of the right shift (PTX ISA `shf`).
pub(super) fn lower_shf(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 4, "d, a, b, c", end)?;
    let Some((dir, _)) = q.one_of("direction", &["l", "r"])? else {
        return Err(SyntaxError::new(q.opcode_span, "`shf` needs .l or .r").expected(".l .r"));
    };
    let Some((mode, _)) = q.one_of("mode", &["wrap", "clamp"])? else {
        return Err(
            SyntaxError::new(q.opcode_span, "`shf` needs .wrap or .clamp").expected(".wrap .clamp"),
        );
    };
    q.one_type(&[Ty::B32])?;
    let dst = lw.dst(&ops[0], Ty::B32, Width::Exact)?;
    let lo = lw.src_plain(&ops[1], Ty::B32)?;
    let hi = lw.src_plain(&ops[2], Ty::B32)?;
    let shift = lw.src_plain(&ops[3], Ty::B32)?;
    let left = dir == "l";
    Lowered::one(Op::Shf(ShfInst {
        left,
        wrap: mode == "wrap",
        high: left,
        ty: Ty::U32,
        dst,
        lo,
        shift,
        hi,
    }))
}

/// `prmt.b32 d, a, b, c` → `Prmt` (the general byte-selector form). The modes `.f4e .b4e .rc8
/// .ecl .ecr .rc16` are rejected.
pub(super) fn lower_prmt(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    if let Some((m, span)) = q.one_of("mode", &["f4e", "b4e", "rc8", "ecl", "ecr", "rc16"])? {
        return Err(q.unsupported(
            span,
            &format!(".{m}: atomjit does not implement the prmt modes, only the general form `prmt.b32 d, a, b, c`"),
        ));
    }
    count(q, ops, 4, "d, a, b, c", end)?;
    q.one_type(&[Ty::B32])?;
    let dst = lw.dst(&ops[0], Ty::B32, Width::Exact)?;
    let a = lw.src_plain(&ops[1], Ty::B32)?;
    let b = lw.src_plain(&ops[2], Ty::B32)?;
    let sel = lw.src_plain(&ops[3], Ty::B32)?;
    Lowered::one(Op::Prmt { dst, a, b, sel })
}

/// `bfe.{u32,s32,u64,s64} d, a, b, c` → `Bfe` (start `b`, length `c`, both `.u32`).
pub(super) fn lower_bfe(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 4, "d, a, b, c", end)?;
    let ty = q.one_type(&[Ty::U32, Ty::S32, Ty::U64, Ty::S64])?;
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    let pos = lw.src_plain(&ops[2], Ty::U32)?;
    let len = lw.src_plain(&ops[3], Ty::U32)?;
    Lowered::one(Op::Bfe {
        ty,
        dst,
        a,
        pos,
        len,
    })
}

/// `bfi.{b32,b64} f, a, b, c, d` → `Bfi`: `b` with `d` bits from bit `c` replaced by `a`.
pub(super) fn lower_bfi(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 5, "f, a, b, c, d", end)?;
    let ty = q.one_type(&[Ty::B32, Ty::B64])?;
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    let insert = lw.src_plain(&ops[1], ty)?;
    let base = lw.src_plain(&ops[2], ty)?;
    let pos = lw.src_plain(&ops[3], Ty::U32)?;
    let len = lw.src_plain(&ops[4], Ty::U32)?;
    Lowered::one(Op::Bfi {
        ty,
        dst,
        insert,
        base,
        pos,
        len,
    })
}

/// `bfind{.shiftamt}.{u32,s32,u64,s64} d, a` → `Unary Bfind` / `BfindShift` (a `.u32`
/// result, `0xffffffff` when there is no such bit).
pub(super) fn lower_bfind(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 2, "d, a", end)?;
    let shift = q.has("shiftamt")?;
    let ty = q.one_type(&[Ty::U32, Ty::S32, Ty::U64, Ty::S64])?;
    let dst = lw.dst(&ops[0], Ty::U32, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    Lowered::one(Op::Unary {
        op: if shift { UnOp::BfindShift } else { UnOp::Bfind },
        ty,
        dst,
        a,
    })
}

/// `fma.rnd{.ftz}.type d, a, b, c` and float `mad.rnd{.ftz}.type` → `Fma`: `a * b + c`
/// rounded once. `.f32`/`.f64` take `.rn .rz .rm .rp` (required); `.f16 .f16x2 .bf16 .bf16x2`
/// only `.rn`. `.ftz` only on `.f32`; `.sat`, `.relu` and `.oob` are rejected.
pub(super) fn lower_fma(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    count(q, ops, 4, "d, a, b, c", end)?;
    if let Some((m, span)) = q.one_of("clamp", &["sat", "relu", "oob"])? {
        return Err(q.unsupported(span, &format!(".{m} on fma is not supported")));
    }
    let ty = q.one_type(&[Ty::F32, Ty::F64, Ty::F16, Ty::F16x2, Ty::BF16, Ty::BF16x2])?;
    let rnd = q.one_of("rounding mode", &["rn", "rz", "rm", "rp"])?;
    let Some((r, rspan)) = rnd else {
        return Err(SyntaxError::new(
            q.opcode_span,
            format!(
                "`{}.{}` needs a rounding qualifier",
                q.opcode,
                type_name(ty)
            ),
        )
        .expected(".rn .rz .rm .rp"));
    };
    let round = round_of(&r);
    if round != Round::Nearest && !matches!(ty, Ty::F32 | Ty::F64) {
        return Err(SyntaxError::new(
            rspan,
            format!("`.{r}`: fma.{} rounds only to nearest (.rn)", type_name(ty)),
        ));
    }
    let ftz = q.has("ftz")?;
    if ftz && ty != Ty::F32 {
        return Err(SyntaxError::new(
            q.opcode_span,
            format!("`.ftz` applies to fma.f32 only, not .{}", type_name(ty)),
        ));
    }
    let dst = lw.dst(&ops[0], ty, Width::Exact)?;
    let a = lw.src_plain(&ops[1], ty)?;
    let b = lw.src_plain(&ops[2], ty)?;
    let c = lw.src_plain(&ops[3], ty)?;
    Lowered::one(Op::Fma {
        ty,
        dst,
        a,
        b,
        c,
        round,
        ftz,
        halves: crate::ir::HalfSel::AS_READ,
    })
}
