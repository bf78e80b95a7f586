//! The surface instructions: `SUATOM`, `SURED`, `SULD`, `SUST` (`004_16d4664d52412e92.txt`
//! documents `SUATOM`; `SURED` is its no-return form, `SULD`/`SUST` the raw loads and stores,
//! written as nvdisasm and cuobjdump print them).
//!
//! ```text
//! SUATOM.D{.BA}.dim.op{.sz}{.clamp}{.STRONG.scope} {Ps,} Rd, [Ra], Rb, handle
//! SURED.D{.BA}.dim.op{.sz}{.clamp}{.STRONG.scope}  [Ra], Rb, handle
//! SULD.D{.BA}.dim{.sz}{.clamp}{.STRONG.scope}      Rd, [Ra], handle
//! SUST.D{.BA}.dim{.sz}{.clamp}{.STRONG.scope}      [Ra], Rb, handle
//! ```
//!
//! The handle is `#tsPtrIdxU13` (a word index into the constant bank, bank 0: the document's
//! `SUATOM.D.BA.1D.U64.TRAP R2, [R3], R4, 0x100` reads `c[..][0x400]`), the same as the two
//! immediates nvdisasm prints (`0x0, 0x58`: bank 0, word 0x58), or a register (`Rc`, sm_90's
//! uniform `UR4, 0x0`: the trailing immediate must be 0). `.NEAR` is the default clamp
//! (nvdisasm prints none). The orders and scopes read as `ATOMG`'s (`SUATOM`, `SURED`) and
//! `LDG`/`STG`'s (`SULD`, `SUST`).

use super::*;
use crate::ir::surface::{Clamp, SurfaceAddress, SurfaceDim, SurfaceHandle};
use crate::ir::Address;

const MODES: &[&str] = &["D", "P"];
const DIMS: &[&str] = &["1D", "1D_BUFFER", "1D_ARRAY", "2D", "2D_ARRAY", "3D"];
const CLAMPS: &[&str] = &["IGN", "NEAR", "TRAP"];
const SUATOM_OPS: &[&str] = &[
    "ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH", "CAS",
];
const SURED_OPS: &[&str] = &[
    "ADD", "MIN", "MAX", "INC", "DEC", "AND", "OR", "XOR", "EXCH",
];
const SUATOM_SIZES: &[&str] = &["U32", "S32", "U64", "S64", "F32", "F16X2", "SD32", "SD64"];
const RAW_SIZES: &[&str] = &["U8", "S8", "U16", "S16", "32", "64", "128"];
/// The largest `#tsPtrIdxU13` (13 bits).
const MAX_WORD_INDEX: i128 = (1 << 13) - 1;

/// The modifiers every surface instruction shares.
struct Common {
    byte_x: bool,
    dim: SurfaceDim,
    clamp: Clamp,
}

impl<'t, 'a, 'k> InstParser<'t, 'a, 'k> {
    /// `SUATOM` (`reduction == false`) and `SURED`.
    pub(super) fn suatom(&self, reduction: bool) -> Result<Op, SyntaxError> {
        if let Some((_, span)) = self.mods.iter().find(|(m, _)| reduction && m == "CAS") {
            return Err(SyntaxError::new(
                *span,
                "SURED has no .CAS (a reduction returns nothing); use SUATOM.D...CAS",
            )
            .expected("one of .ADD .MIN .MAX .INC .DEC .AND .OR .XOR .EXCH"));
        }
        let m = self.classify(&[
            group("mode", MODES),
            group("byte addressing", &["BA"]),
            group("dimensionality", DIMS),
            group("operation", if reduction { SURED_OPS } else { SUATOM_OPS }),
            group("size", SUATOM_SIZES),
            group("flush-to-zero", &["FTZ"]),
            group("rounding", ROUNDINGS),
            group("clamp mode", CLAMPS),
            group("strength", STRONG),
            group("eviction priority", EVICTION),
        ])?;
        let common = self.common(&m, 0, 1, 2, 7)?;
        // Without an operation: ADD, as the document's example `SUATOM.D.BA.1D.U64.TRAP R2,
        // [R3], R4, 0x100` says ("Adds value found in vec2 (R4,R5)").
        let op = m[3].map_or(AtomicOp::Add, |(c, _)| atomic_op(c));
        // `.SD32`/`.SD64`: `U32`/`U64` whose signedness the surface's format gives.
        let size = m[4].map(|(c, _)| c);
        let (ty, format_sign) = match size {
            None | Some("U32") => (Ty::U32, false),
            Some("S32") => (Ty::S32, false),
            Some("U64") => (Ty::U64, false),
            Some("S64") => (Ty::S64, false),
            Some("F32") => (Ty::F32, false),
            Some("F16X2") => (Ty::F16x2, false),
            Some("SD32") => (Ty::U32, true),
            Some(_) => (Ty::U64, true),
        };
        // `.F32.FTZ.RN` (the only F32 size) and `.F16x2.FTZ.RN` (the document's `.sz` list;
        // its table writes `.F16x2.RN`): `.FTZ` flushes subnormal inputs and results, per
        // half for F16x2 (`ir::AtomicInst::ftz`, `sem::float`).
        let ftz = m[5].is_some();
        if ftz && !matches!(ty, Ty::F32 | Ty::F16x2) {
            return Err(self.modifier_error(
                &m,
                5,
                ".FTZ applies to .F32 and .F16x2 only",
                ".F32.FTZ.RN or .F16x2.FTZ.RN",
            ));
        }
        match m[6].map(|(c, _)| c) {
            Some("RN") if !ty.is_float() => {
                return Err(self.modifier_error(
                    &m,
                    6,
                    ".RN applies to the float sizes only",
                    ".F32.FTZ.RN or .F16x2.RN",
                ))
            }
            Some("RN") | None => {}
            Some(_) => {
                return Err(self.modifier_error(
                    &m,
                    6,
                    "surface float atomics round to nearest even only",
                    ".RN",
                ))
            }
        }
        let scope = m[8].map(|(c, _)| scope_of(c)).unwrap_or(Scope::Gpu);
        let compare = op == AtomicOp::Cas;
        // `{Ps,} Rd, [Ra], Rb, handle` or `[Ra], Rb, handle`; a handle is one or two operands.
        let has_ps = !reduction && self.ops.first().is_some_and(is_pred);
        let first = usize::from(has_ps);
        let form = if reduction {
            "[Ra], Rb, handle (#tsPtrIdxU13, bank and word, or Rc)"
        } else {
            "{Ps,} Rd, [Ra], Rb, handle (#tsPtrIdxU13, bank and word, or Rc)"
        };
        let fixed = first + if reduction { 2 } else { 3 };
        self.count(fixed + 1, fixed + 2, form)?;
        let sparse = if has_ps {
            self.pred_dst(0, "Ps (the sparse status predicate)")?
        } else {
            Pred::PT
        };
        let (dst, rest) = if reduction {
            (Reg::RZ, first)
        } else {
            (self.reg(first, "Rd (a register)")?, first + 1)
        };
        let coords = self.surface_coords(rest)?;
        let rb = self.reg(rest + 1, "Rb (a register)")?;
        let handle = self.surface_handle(rest + 2)?;
        // `PT` (what nvdisasm prints when no status is wanted) is no sparse predicate.
        if !sparse.is_pt() && !compare && matches!(handle, SurfaceHandle::Bank { .. }) {
            return Err(SyntaxError::new(
                self.ops[0].span,
                "SUATOM with a sparse predicate and an immediate handle exists only for .CAS (\"#tsPtrIdxU13 variant with sparse predicate is not offered for .op != CAS\")",
            )
            .expected("a register handle Rc, or no Ps"));
        }
        // CAS: "Rb contains both compare and swap values as a vec2 (for .sz 32) or vec4 (for
        // .sz 64)": the swap value is the next register (pair) after the compare value.
        let src2 = compare.then(|| Operand::Reg(rb.word(ty.regs())));
        Ok(Op::Atomic(Box::new(AtomicInst {
            access: MemAccess {
                space: Space::Global,
                ty,
                vector: 1,
                order: MemOrder::Relaxed,
                scope,
                addr: Address::Surface(SurfaceAddress {
                    coords,
                    dim: common.dim,
                    byte_x: common.byte_x,
                    clamp: common.clamp,
                    handle,
                    format_sign,
                    sparse,
                }),
            },
            op,
            dst,
            src: Operand::Reg(rb),
            src2,
            spin: false,
            ftz,
            performed: Pred::PT,
        })))
    }

    /// `SULD` (`load`) and `SUST`: a raw load or store of one element.
    pub(super) fn surface_load_store(&self, load: bool) -> Result<Op, SyntaxError> {
        let m = self.classify(&[
            group("mode", MODES),
            group("byte addressing", &["BA"]),
            group("dimensionality", DIMS),
            group("size", RAW_SIZES),
            group("clamp mode", CLAMPS),
            group("strength", STRONG),
            group("eviction priority", EVICTION),
        ])?;
        let common = self.common(&m, 0, 1, 2, 4)?;
        let ty = match m[3].map(|(c, _)| c) {
            Some("U8") => Ty::U8,
            Some("S8") if load => Ty::S8,
            Some("U16") => Ty::U16,
            Some("S16") if load => Ty::S16,
            // A store writes the low bits: signedness has no meaning.
            Some("S8") => Ty::U8,
            Some("S16") => Ty::U16,
            Some("64") => Ty::U64,
            Some("128") => {
                return Err(self.modifier_error(
                    &m,
                    3,
                    "a 128-bit surface access: no surface element type is 16 bytes (an access moves one element)",
                    ".U8 .S8 .U16 .S16 .32 or .64",
                ))
            }
            _ => Ty::U32,
        };
        let (order, scope) = match m[5] {
            Some((c, _)) => (MemOrder::Relaxed, scope_of(c)),
            None => (MemOrder::Weak, Scope::Gpu),
        };
        let form = if load {
            "Rd, [Ra], handle (#tsPtrIdxU13, bank and word, or Rc)"
        } else {
            "[Ra], Rb, handle (#tsPtrIdxU13, bank and word, or Rc)"
        };
        self.count(3, 4, form)?;
        let (data, coords_at) = if load { (0, 1) } else { (1, 0) };
        let reg = self.reg(
            data,
            if load {
                "Rd (a register)"
            } else {
                "Rb (a register)"
            },
        )?;
        let coords = self.surface_coords(coords_at)?;
        let handle = self.surface_handle(2)?;
        let access = MemAccess {
            space: Space::Global,
            ty,
            vector: 1,
            order,
            scope,
            addr: Address::Surface(SurfaceAddress {
                coords,
                dim: common.dim,
                byte_x: common.byte_x,
                clamp: common.clamp,
                handle,
                format_sign: false,
                sparse: Pred::PT,
            }),
        };
        Ok(if load {
            Op::Load { access, dst: reg }
        } else {
            Op::Store {
                access,
                src: Operand::Reg(reg),
            }
        })
    }

    /// The mode (`.D` required), `.BA`, the dimensionality (required) and the clamp mode (the
    /// default `.NEAR`) from their groups.
    fn common(
        &self,
        m: &Chosen,
        mode: usize,
        ba: usize,
        dim: usize,
        clamp: usize,
    ) -> Result<Common, SyntaxError> {
        match self.required(m, mode, "mode (.D)")? {
            "D" => {}
            _ => {
                return Err(self.modifier_error(
                    m,
                    mode,
                    "formatted surface accesses (.P) are not supported: atomjit runs the raw .D mode (\"surface data is treated as raw data of size .sz, without any format conversion\")",
                    ".D",
                ))
            }
        }
        let dim = match self.required(
            m,
            dim,
            "dimensionality (.1D .1D_BUFFER .1D_ARRAY .2D .2D_ARRAY .3D)",
        )? {
            "1D" => SurfaceDim::D1,
            "1D_BUFFER" => SurfaceDim::D1Buffer,
            "1D_ARRAY" => SurfaceDim::D1Array,
            "2D" => SurfaceDim::D2,
            "2D_ARRAY" => SurfaceDim::D2Array,
            _ => SurfaceDim::D3,
        };
        let clamp = match m[clamp].map(|(c, _)| c) {
            Some("IGN") => Clamp::Ignore,
            Some("TRAP") => Clamp::Trap,
            _ => Clamp::Nearest,
        };
        Ok(Common {
            byte_x: m[ba].is_some(),
            dim,
            clamp,
        })
    }

    /// `[Ra]`: the first coordinate register (the others follow it).
    fn surface_coords(&self, i: usize) -> Result<Reg, SyntaxError> {
        let op = self.operand(i, "[Ra] (the coordinates)")?;
        // Ra is a vector register: each lane has its own coordinates.
        if let Some(t) = op
            .toks
            .iter()
            .find(|t| t.is_word() && t.text.starts_with("UR"))
        {
            return Err(SyntaxError::new(
                t.span,
                format!(
                    "the coordinates come from a vector register, not the uniform `{}`",
                    t.text
                ),
            )
            .expected("[Ra]"));
        }
        match parse_operand(op, self.params())? {
            Parsed::Mem {
                base: Some((reg, false)),
                offset: 0,
                scale: 0,
                index: None,
            } => Ok(reg),
            Parsed::Mem { .. } => Err(SyntaxError::new(
                op.span,
                "a surface address is its first coordinate register alone",
            )
            .expected("[Ra]")),
            other @ (Parsed::Reg { .. }
            | Parsed::Pred(_)
            | Parsed::Imm(_)
            | Parsed::Const { .. }
            | Parsed::Special(_)
            | Parsed::Name(_)) => Err(SyntaxError::new(
                op.span,
                format!("expected the coordinates [Ra], found {}", other.describe()),
            )
            .expected("[Ra]")),
        }
    }

    /// The handle from operand `i` on (the last one or two operands): `#tsPtrIdxU13`, `bank,
    /// word`, `Rc` or `Rc, 0x0`.
    fn surface_handle(&self, i: usize) -> Result<SurfaceHandle, SyntaxError> {
        let first = self.operand(i, "the handle")?;
        let second = self.ops.get(i + 1);
        let imm = |op: &RawOperand, max: i128, what: &str| -> Result<Option<u32>, SyntaxError> {
            match parse_operand(op, self.params())? {
                Parsed::Imm(imm) => match imm.lit.value {
                    Scalar::Int(v) if (0..=max).contains(&v) => Ok(Some(v as u32)),
                    Scalar::Int(_) | Scalar::Float(_) => Err(SyntaxError::new(
                        op.span,
                        format!("{what} must be 0..={max:#x}"),
                    )
                    .expected(format!("0..={max:#x}"))),
                },
                Parsed::Reg { .. } => Ok(None),
                other @ (Parsed::Pred(_)
                | Parsed::Const { .. }
                | Parsed::Mem { .. }
                | Parsed::Special(_)
                | Parsed::Name(_)) => Err(SyntaxError::new(
                    op.span,
                    format!("expected {what}, found {}", other.describe()),
                )
                .expected("an immediate or a register")),
            }
        };
        match (
            imm(first, MAX_WORD_INDEX, "the handle's word index")?,
            second,
        ) {
            // `#tsPtrIdxU13`: bank 0 (the document's bank "is determined by bundle state").
            (Some(word), None) => Ok(SurfaceHandle::Bank {
                bank: 0,
                offset: 4 * word,
            }),
            // nvdisasm's `bank, word`.
            (Some(bank), Some(op)) => {
                let bank = u8::try_from(bank).map_err(|_| {
                    SyntaxError::new(first.span, "the constant bank must be 0..=0xff")
                        .expected("0x0")
                })?;
                match imm(op, MAX_WORD_INDEX, "the handle's word index")? {
                    Some(word) => Ok(SurfaceHandle::Bank {
                        bank,
                        offset: 4 * word,
                    }),
                    None => Err(SyntaxError::new(
                        op.span,
                        "after the constant bank comes the handle's word index",
                    )
                    .expected("an immediate 0..=0x1fff")),
                }
            }
            (None, second) => {
                let rc = self.reg(i, "Rc (the handle register)")?;
                if let Some(op) = second {
                    // sm_90 prints `UR4, 0x0`; no other value has been seen and the document
                    // does not define one, so it is refused rather than ignored.
                    if imm(op, 0, "the immediate after a handle register")? != Some(0) {
                        return Err(SyntaxError::new(
                            op.span,
                            "only 0x0 may follow a handle register",
                        )
                        .expected("0x0"));
                    }
                }
                Ok(SurfaceHandle::Reg(rc))
            }
        }
    }
}
