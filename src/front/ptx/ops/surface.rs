//! Surface instructions on surface objects: `sured.b`/`sured.p`, `suld.b` and `sust.b`.
//!
//! ```text
//! sured.{b,p}.op.geom.ctype.clamp   [surf, coords], c
//! suld.b.geom{.cop}{.v2,.v4}.dtype.clamp  d, [surf, coords]
//! sust.b.geom{.cop}{.v2,.v4}.dtype.clamp  [surf, coords], c
//! ```
//!
//! `surf` is a `.u64` register holding a surface object: the kernel parameter a launch binds a
//! `.surface` to, whose value is the surface's handle (`docs/surfaces.md`). Each instruction
//! lowers to the IR's surface access ([`Address::Surface`]) exactly as ptxas's SASS for it
//! (`SURED`/`SULD`/`SUST`, see `front::sass::ops::surface`), so a kernel behaves the same from
//! its PTX and from its SASS:
//!
//! * **Coordinates** are `.s32`: `.1d` a register or `{x}`, `.2d` `{x, y}`, `.3d` `{x, y, z, _}`
//!   (a four-element vector whose last element is ignored), `.a1d` `{layer, x}`, `.a2d`
//!   `{layer, x, y, _}` (`suld`/`sust` only). ptxas takes vectors of 1, 2 or 4 elements with
//!   at least the ones the geometry uses and ignores the rest. They are moved into staging
//!   words [`COORDS`]… in the IR's order (x, y, then z or the layer).
//! * **`.b`** addresses x in bytes (`.BA`); **`.p`** (`sured` only) in elements, and its `.b32`/
//!   `.b64` data is signed when the surface's format is (`.SD32`/`.SD64`) for min and max,
//!   as ptxas maps them (`sured.p.max.2d.b32` → `SURED.D.2D.MAX.SD32`; add, and, or are the
//!   same for either signedness and ptxas gives them no `.SD`).
//! * **Clamp modes** are required (ptxas: "Clamp modifier required"): `.trap` → `.TRAP`,
//!   `.clamp` → `.NEAR`, `.zero` → `.IGN`.
//! * **Orders**: ptxas makes every `sured` `.STRONG.SYS` (relaxed, system scope), and `suld`/
//!   `sust` `.STRONG.SM` (relaxed, CTA scope) except with `.cg`, `.cv` (loads) and `.cg`, `.wt`
//!   (stores), which it makes `.STRONG.SYS`; atomjit uses the same orders and scopes.
//! * **Vectors** of `suld`/`sust` move one element of the surface of the vector's whole size
//!   (`.v2.b32` is one 8-byte access, `SUST.D.BA.1D.64`); the parts are unpacked and packed
//!   with shifts and masks. 16-byte vectors are refused: no surface format atomjit has is 16
//!   bytes (as for `SULD.128`).
//!
//! The operations and types are the ones ptxas accepts (checked against ptxas 12.9): `sured.b`
//! add on `.u32 .s32 .u64`, min and max on `.u32 .s32 .u64 .s64`, and and or on `.b32`;
//! `sured.p` add, min, max, and, or on `.b32` and min and max on `.b64`; `suld.b`/`sust.b` on
//! `.b8 .b16 .b32 .b64`. `sust.p` (a formatted store), `suq` and `.surfref` variables are
//! refused.

use super::*;
use crate::ir::surface::{Clamp, SurfaceAddress, SurfaceDim, SurfaceHandle};

/// The first of the staging words that hold the coordinates (three words, clear of the data's).
const COORDS: u16 = 12;
/// The first of the two staging words that hold a packed vector.
const PACKED: u16 = 0;
/// The staging word that holds one part while a vector is packed.
const PART: u16 = 4;

/// `sured.{b,p}.op.geom.ctype.clamp [surf, coords], c` → a returnless `Atomic`.
pub(in crate::front::ptx) fn lower_sured(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    let formatted = addressing(q, true)?;
    let names = &[
        "add", "min", "max", "and", "or", "xor", "inc", "dec", "exch", "cas",
    ];
    let Some((op_name, op_span)) = q.one_of("operation", names)? else {
        return Err(
            SyntaxError::new(q.opcode_span, "`sured` needs an operation")
                .expected(".add .min .max .and .or"),
        );
    };
    if !matches!(op_name.as_str(), "add" | "min" | "max" | "and" | "or") {
        return Err(SyntaxError::new(
            op_span,
            format!("`sured` has no .{op_name} (ptxas does not assemble it)"),
        )
        .expected(".add .min .max .and .or"));
    }
    let op = AtomicOp::from_name(&op_name).unwrap_or(AtomicOp::Add);
    let dim = geometry(q, false)?;
    let clamp = clamp_mode(q)?;
    let ptx_ty = q.one_type(&[Ty::U32, Ty::S32, Ty::B32, Ty::U64, Ty::S64, Ty::B64])?;
    let min_max = matches!(op, AtomicOp::Min | AtomicOp::Max);
    let legal: &[Ty] = match (formatted, op_name.as_str()) {
        (false, "add") => &[Ty::U32, Ty::S32, Ty::U64],
        (false, "min" | "max") => &[Ty::U32, Ty::S32, Ty::U64, Ty::S64],
        (false, _) => &[Ty::B32],
        (true, "min" | "max") => &[Ty::B32, Ty::B64],
        (true, _) => &[Ty::B32],
    };
    if !legal.contains(&ptx_ty) {
        return Err(SyntaxError::new(
            q.opcode_span,
            format!(
                "ptxas rejects `sured.{}.{op_name}.{}` (\"Incorrect type '.{}' for operation '.{op_name}'\")",
                if formatted { "p" } else { "b" },
                type_name(ptx_ty),
                type_name(ptx_ty)
            ),
        )
        .expected(
            legal
                .iter()
                .map(|t| format!(".{}", type_name(*t)))
                .collect::<Vec<_>>()
                .join(" "),
        ));
    }
    // `.b32`/`.b64` are unsigned data; `.p` min/max take their signedness from the surface.
    let ty = if ptx_ty == Ty::B32 {
        Ty::U32
    } else if ptx_ty == Ty::B64 {
        Ty::U64
    } else {
        ptx_ty
    };
    count(q, ops, 2, "[surf, coordinates], c", end)?;
    let (addr, mut out) = surface_address(
        lw,
        &ops[0],
        Target {
            dim,
            byte_x: !formatted,
            clamp,
            format_sign: formatted && min_max,
        },
    )?;
    let src = lw.src(&ops[1], ty, Width::Exact)?;
    out.push(Op::Atomic(Box::new(AtomicInst {
        access: MemAccess {
            space: Space::Global,
            ty,
            vector: 1,
            order: MemOrder::Relaxed,
            scope: Scope::Sys,
            addr,
        },
        op,
        dst: Reg::RZ,
        src,
        src2: None,
        spin: false,
        ftz: false,
        performed: Pred::PT,
    })));
    Lowered::ops(out)
}

/// `suld.b.geom{.cop}{.vec}.dtype.clamp d, [surf, coords]` → `Load` of one surface element.
pub(in crate::front::ptx) fn lower_suld(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    let raw = RawAccess::parse(q, true)?;
    count(q, ops, 2, "d, [surf, coordinates]", end)?;
    let elems = data_elements(q, &ops[0], raw.n)?;
    let mut dsts = Vec::new();
    for e in &elems {
        dsts.push(lw.data_reg(e, raw.elem)?);
    }
    let (addr, mut out) = surface_address(lw, &ops[1], raw.target)?;
    let access = raw.access(addr);
    if raw.n == 1 {
        out.push(Op::Load {
            access,
            dst: dsts[0].0,
        });
    } else {
        let t = lw.staging()?;
        out.push(Op::Load {
            access,
            dst: t.word(PACKED),
        });
        let bits = raw.elem.bits();
        for (k, &(dst, _)) in dsts.iter().enumerate() {
            if dst.is_rz() {
                continue;
            }
            let at = k as u32 * bits;
            let word = IrOp::Reg(t.word(PACKED + (at / 32) as u16));
            if bits == 32 {
                out.push(element_mov(1, dst, word));
            } else {
                out.push(binary(
                    BinOp::Shr,
                    Ty::U32,
                    dst,
                    word.into(),
                    imm(at % 32),
                    false,
                ));
                out.push(binary(
                    BinOp::And,
                    Ty::U32,
                    dst,
                    IrOp::Reg(dst).into(),
                    imm((1 << bits) - 1),
                    false,
                ));
            }
        }
    }
    // A 64-bit register of a narrower element: the `.b` data zero-extends.
    for &(dst, widened) in &dsts {
        if widened {
            out.push(Op::Mov {
                ty: Ty::U32,
                dst: dst.word(1),
                src: IrOp::Reg(Reg::RZ),
            });
        }
    }
    Lowered::ops(out)
}

/// `sust.b.geom{.cop}{.vec}.dtype.clamp [surf, coords], c` → `Store` of one surface element.
pub(in crate::front::ptx) fn lower_sust(
    lw: &mut Lowerer,
    q: &mut Quals,
    ops: &[Operand],
    end: Span,
) -> Result<Lowered, SyntaxError> {
    let raw = RawAccess::parse(q, false)?;
    count(q, ops, 2, "[surf, coordinates], c", end)?;
    let elems = data_elements(q, &ops[1], raw.n)?;
    let mut srcs = Vec::new();
    for e in &elems {
        // A register at least as wide as the element stores its low bits (ptxas takes
        // `sust.b.1d.b32 [s, {x}], %rd1`, refuses a 32-bit register for `.b64`).
        srcs.push(if let Operand::Name { .. } = e {
            IrOp::Reg(lw.data_reg(e, raw.elem)?.0)
        } else {
            lw.src(e, raw.elem, Width::WiderTo32)?
        });
    }
    let (addr, mut out) = surface_address(lw, &ops[0], raw.target)?;
    let access = raw.access(addr);
    let bits = raw.elem.bits();
    let regs = all_registers(&srcs);
    let src = if raw.n == 1 {
        srcs[0]
    } else if let Some(first) = regs
        .filter(|r| bits == 32 && consecutive(r, 1))
        .map(|r| r[0])
    {
        IrOp::Reg(first)
    } else {
        let t = lw.staging()?;
        if bits == 32 {
            for (k, src) in srcs.into_iter().enumerate() {
                out.push(element_mov(1, t.word(PACKED + k as u16), src));
            }
        } else {
            let words = (raw.n as u32 * bits).div_ceil(32);
            for w in 0..words as u16 {
                out.push(element_mov(1, t.word(PACKED + w), IrOp::Imm(0)));
            }
            let part = t.word(PART);
            let mask = (1u64 << bits) - 1;
            for (k, src) in srcs.into_iter().enumerate() {
                let at = k as u32 * bits;
                let word = t.word(PACKED + (at / 32) as u16);
                // word |= (src & mask) << (at % 32), an immediate folded.
                let shifted = match src {
                    IrOp::Imm(v) => IrOp::Imm((v & mask) << (at % 32)),
                    other @ (IrOp::Reg(_) | IrOp::Const { .. }) => {
                        out.push(binary(
                            BinOp::And,
                            Ty::U32,
                            part,
                            other.into(),
                            IrOp::Imm(mask).into(),
                            false,
                        ));
                        out.push(binary(
                            BinOp::Shl,
                            Ty::U32,
                            part,
                            IrOp::Reg(part).into(),
                            imm(at % 32),
                            false,
                        ));
                        IrOp::Reg(part)
                    }
                };
                out.push(binary(
                    BinOp::Or,
                    Ty::U32,
                    word,
                    IrOp::Reg(word).into(),
                    shifted.into(),
                    false,
                ));
            }
        }
        IrOp::Reg(t.word(PACKED))
    };
    out.push(Op::Store { access, src });
    Lowered::ops(out)
}

/// The data elements of `suld`/`sust`: as for `ld`/`st`, and ptxas also takes a scalar's
/// register in braces (`suld.b.1d.b32.trap {%r1}, [s, {x}]`).
fn data_elements<'o>(q: &Quals, o: &'o Operand, n: usize) -> Result<Vec<&'o Operand>, SyntaxError> {
    if let Operand::Vector { elems, .. } = o {
        if n == 1 && elems.len() == 1 {
            return Ok(vec![&elems[0]]);
        }
    }
    elements(q, o, n)
}

/// An immediate source.
fn imm(v: u32) -> Src {
    IrOp::Imm(u64::from(v)).into()
}

/// What a surface access needs besides its handle and coordinates.
#[derive(Clone, Copy)]
struct Target {
    dim: SurfaceDim,
    byte_x: bool,
    clamp: Clamp,
    format_sign: bool,
}

/// The qualifiers of `suld.b`/`sust.b`: the element type and count, the order and scope, and
/// the surface addressing.
struct RawAccess {
    elem: Ty,
    n: usize,
    scope: Scope,
    target: Target,
}

impl RawAccess {
    fn parse(q: &mut Quals, load: bool) -> Result<RawAccess, SyntaxError> {
        addressing(q, false)?;
        let dim = geometry(q, true)?;
        let cops: &[&str] = if load {
            &["ca", "cg", "cs", "cv"]
        } else {
            &["wb", "cg", "cs", "wt"]
        };
        // ptxas's scopes: `.STRONG.SYS` for the operators that bypass the L1, else `.STRONG.SM`.
        let scope = match q.one_of("cache operator", cops)? {
            Some((c, _)) if matches!(c.as_str(), "cg" | "cv" | "wt") => Scope::Sys,
            _ => Scope::Cta,
        };
        let n = vector_width(q)?;
        let Some((dtype, _)) = q.one_of("data type", &["b8", "b16", "b32", "b64"])? else {
            return Err(SyntaxError::new(
                q.opcode_span,
                format!(
                    "`{}.b` takes one of .b8 .b16 .b32 .b64 (ptxas: \"Unexpected instruction types\")",
                    q.opcode
                ),
            )
            .expected(".b8 .b16 .b32 .b64"));
        };
        let elem = match dtype.as_str() {
            "b8" => Ty::U8,
            "b16" => Ty::U16,
            "b32" => Ty::U32,
            _ => Ty::U64,
        };
        let bytes = elem.bytes() as usize * n;
        if bytes > 8 {
            return Err(q.unsupported(
                q.opcode_span,
                &format!(
                    "a {bytes}-byte surface access (`.v{n}.{dtype}`): no surface format atomjit has is larger than 8 bytes, and an access moves one element"
                ),
            ));
        }
        let clamp = clamp_mode(q)?;
        Ok(RawAccess {
            elem,
            n,
            scope,
            target: Target {
                dim,
                byte_x: true,
                clamp,
                format_sign: false,
            },
        })
    }

    /// The access: one element of the vector's whole size.
    fn access(&self, addr: Address) -> MemAccess {
        let ty = match self.elem.bytes() as usize * self.n {
            1 => Ty::U8,
            2 => Ty::U16,
            4 => Ty::U32,
            _ => Ty::U64,
        };
        MemAccess {
            space: Space::Global,
            ty,
            vector: 1,
            order: MemOrder::Relaxed,
            scope: self.scope,
            addr,
        }
    }
}

/// `.b` (byte addressing: `false`) or `.p` (element addressing: `true`, `sured` only).
fn addressing(q: &mut Quals, p_ok: bool) -> Result<bool, SyntaxError> {
    match q.one_of("addressing", &["b", "p"])? {
        Some((m, _)) if m == "b" => Ok(false),
        Some(_) if p_ok => Ok(true),
        Some((_, span)) => Err(q.unsupported(
            span,
            "formatted surface accesses (`.p`) are not supported: atomjit's surfaces hold raw data, accessed with `.b`",
        )),
        None => Err(SyntaxError::new(
            q.opcode_span,
            format!("`{}` needs .b (byte addressing){}", q.opcode, if p_ok { " or .p" } else { "" }),
        )
        .expected(if p_ok { ".b .p" } else { ".b" })),
    }
}

/// `.1d .2d .3d`, and `.a1d .a2d` where `arrays`.
fn geometry(q: &mut Quals, arrays: bool) -> Result<SurfaceDim, SyntaxError> {
    let all = &["1d", "2d", "3d", "a1d", "a2d"];
    let allowed = if arrays {
        "1d .2d .3d .a1d .a2d"
    } else {
        "1d .2d .3d"
    };
    match q.one_of("geometry", all)? {
        Some((g, span)) => match g.as_str() {
            "1d" => Ok(SurfaceDim::D1),
            "2d" => Ok(SurfaceDim::D2),
            "3d" => Ok(SurfaceDim::D3),
            "a1d" if arrays => Ok(SurfaceDim::D1Array),
            "a2d" if arrays => Ok(SurfaceDim::D2Array),
            _ => Err(SyntaxError::new(
                span,
                format!(
                    "ptxas rejects .{g} on `{}` (\"Illegal modifier\")",
                    q.opcode
                ),
            )
            .expected(format!(".{allowed}"))),
        },
        None => Err(
            SyntaxError::new(q.opcode_span, format!("`{}` needs a geometry", q.opcode))
                .expected(format!(".{allowed}")),
        ),
    }
}

/// `.trap` / `.clamp` / `.zero`, required (ptxas: "Clamp modifier required").
fn clamp_mode(q: &mut Quals) -> Result<Clamp, SyntaxError> {
    match q.one_of("clamp mode", &["trap", "clamp", "zero"])? {
        Some((c, _)) => Ok(match c.as_str() {
            "trap" => Clamp::Trap,
            "clamp" => Clamp::Nearest,
            _ => Clamp::Ignore,
        }),
        None => Err(SyntaxError::new(
            q.opcode_span,
            format!(
                "`{}` needs a clamp mode (ptxas: \"Clamp modifier required\")",
                q.opcode
            ),
        )
        .expected(".trap .clamp .zero")),
    }
}

/// The IR surface address of `[surf, coords]`, and the moves that stage its coordinates.
fn surface_address(
    lw: &mut Lowerer,
    o: &Operand,
    target: Target,
) -> Result<(Address, Vec<Op>), SyntaxError> {
    let Operand::Surface {
        handle: (name, name_span),
        coords,
        ..
    } = o
    else {
        return Err(SyntaxError::new(
            o.span(),
            format!(
                "expected a surface operand `[surf, {{x, ...}}]`, found {}",
                o.describe()
            ),
        )
        .expected("`[%rd1, {%r1, %r2}]`"));
    };
    if !lw.regs.is_register(name) {
        return Err(SyntaxError::new(
            *name_span,
            format!(
                "`{name}` is not a register: the surface must be a .u64 register holding a surface object (a kernel parameter read with ld.param)"
            ),
        )
        .expected("a .u64 register (ptxas: \".surfref or .u64 register expected\")"));
    }
    let handle_op = Operand::Name {
        name: name.clone(),
        negate: false,
        span: *name_span,
    };
    let (handle, handle_ty, _) = lw.value_reg(&handle_op)?;
    if handle_ty.bits() != 64 {
        return Err(SyntaxError::new(
            *name_span,
            format!(
                "the surface must be a .u64 register holding a surface object; `{name}` is .{}",
                type_name(handle_ty)
            ),
        )
        .expected("a .u64 register (ptxas: \".surfref or .u64 register expected\")"));
    }
    let elems: Vec<&Operand> = if let Operand::Vector { elems, .. } = coords.as_ref() {
        elems.iter().collect()
    } else {
        vec![coords.as_ref()]
    };
    if elems.len() == 3 {
        return Err(SyntaxError::new(
            coords.span(),
            "ptxas rejects a coordinate vector of 3 elements (\"Illegal vector size: 3\"); .3d and .a2d take four, the last ignored",
        )
        .expected("{x, y, z, _w}"));
    }
    // The PTX element each IR coordinate (x, y, z or layer) comes from.
    let order: &[usize] = match target.dim {
        SurfaceDim::D1 | SurfaceDim::D1Buffer => &[0],
        SurfaceDim::D2 => &[0, 1],
        SurfaceDim::D3 => &[0, 1, 2],
        SurfaceDim::D1Array => &[1, 0],
        SurfaceDim::D2Array => &[1, 2, 0],
    };
    if elems.len() < order.len() {
        return Err(SyntaxError::new(
            coords.span(),
            format!(
                "this geometry takes {} coordinates, found {}",
                order.len(),
                elems.len()
            ),
        )
        .expected(match target.dim {
            SurfaceDim::D1 | SurfaceDim::D1Buffer => "{x}",
            SurfaceDim::D2 => "{x, y}",
            SurfaceDim::D3 => "{x, y, z, _w}",
            SurfaceDim::D1Array => "{layer, x}",
            SurfaceDim::D2Array => "{layer, x, y, _z}",
        }));
    }
    let mut out = Vec::new();
    let t = lw.staging()?;
    for (i, &from) in order.iter().enumerate() {
        let value = lw.src(elems[from], Ty::S32, Width::Exact)?;
        out.push(element_mov(1, t.word(COORDS + i as u16), value));
    }
    // The elements beyond the geometry's are ignored, but must still be operands ptxas takes.
    for e in &elems[order.len()..] {
        lw.src(e, Ty::S32, Width::Exact)?;
    }
    Ok((
        Address::Surface(SurfaceAddress {
            coords: t.word(COORDS),
            dim: target.dim,
            byte_x: target.byte_x,
            clamp: target.clamp,
            handle: SurfaceHandle::Reg(handle),
            format_sign: target.format_sign,
            sparse: Pred::PT,
        }),
        out,
    ))
}
