//! Surface address rules (`ir::Address::Surface`, `004_16d4664d52412e92.txt`): the coordinate
//! and handle registers, the space and the shape of the access. The op×size table of surface
//! atomics lives with the other tables in `atomics.rs`.

use super::{rules, Diagnostics};
use crate::ir::surface::{SurfaceAddress, SurfaceHandle};
use crate::ir::{AtomicInst, AtomicOp, Dialect, Inst, MemAccess, Operand, Space, Ty};

/// The largest `#tsPtrIdxU13` word index.
const MAX_WORD_INDEX: u32 = (1 << 13) - 1;

/// The rules of a surface address on `access` (`sass`: the kernel is SASS, whose register
/// alignment and encoding rules apply; `atomic`: the access is an atomic's).
#[allow(clippy::too_many_arguments)]
pub fn check_address(
    d: &mut Diagnostics,
    sass: bool,
    pc: u32,
    inst: &Inst,
    access: &MemAccess,
    s: &SurfaceAddress,
    atomic: bool,
) {
    if s.format_sign && !(atomic && matches!(access.ty, Ty::U32 | Ty::U64)) {
        d.error(
            pc,
            inst,
            format!(
                "a format-signed size (.SD32/.SD64) on a {} access of {}",
                if atomic { "atomic" } else { "non-atomic" },
                access.ty.name()
            ),
            rules::SURFACE_FORMAT_SIGN,
        );
    }
    if let SurfaceHandle::Bank { offset, .. } = s.handle {
        if sass && (offset % 4 != 0 || offset / 4 > MAX_WORD_INDEX) {
            d.error(
                pc,
                inst,
                format!(
                    "the handle at byte {offset:#x} of the constant bank is not a 13-bit word index"
                ),
                rules::SURFACE_TS_PTR_IDX,
            );
        }
    }
    if access.space != Space::Global {
        d.error(
            pc,
            inst,
            format!(
                "a surface access lands in global memory, not {} memory",
                access.space.name()
            ),
            rules::SURFACE_GLOBAL,
        );
    }
    if access.is_vector() || access.ty == Ty::B128 {
        d.error(
            pc,
            inst,
            "a surface access moves one element of at most 8 bytes".to_string(),
            rules::SURFACE_ONE_ELEMENT,
        );
    }
    if s.coords.is_rz() {
        d.error(
            pc,
            inst,
            "the coordinate register Ra cannot be RZ".to_string(),
            rules::SURFACE_NOT_RZ,
        );
    } else if sass {
        let n = s.dim.coords();
        let align = match n {
            1 => 1,
            2 => 2,
            _ => 4,
        };
        if s.coords.0 % align != 0 {
            d.error(
                pc,
                inst,
                format!(
                    "a .{} access reads {n} coordinates from R{}, which must be a multiple of {align}",
                    s.dim.sass_name(),
                    s.coords.0
                ),
                rules::SURFACE_COORDS_ALIGNED,
            );
        }
    }
    if s.handle == SurfaceHandle::Reg(crate::ir::Reg::RZ) {
        d.error(
            pc,
            inst,
            "the handle register Rc cannot be RZ".to_string(),
            rules::SURFACE_NOT_RZ,
        );
    }
}

/// The rules of a surface atomic beyond its op×size row: CAS's compare and swap values in one
/// register vector, and (SASS) the sparse predicate with an immediate handle only on CAS.
pub fn check_atomic(
    d: &mut Diagnostics,
    dialect: Dialect,
    pc: u32,
    inst: &Inst,
    a: &AtomicInst,
    s: &SurfaceAddress,
) {
    if a.op == AtomicOp::Cas {
        let words = a.access.ty.regs();
        match (a.src, a.src2) {
            (Operand::Reg(rb), Some(Operand::Reg(rc))) if rc == rb.word(words) => {
                let align = 2 * words;
                if dialect == Dialect::Sass && !rb.is_rz() && rb.0 % align != 0 {
                    d.error(
                        pc,
                        inst,
                        format!(
                            "the compare and swap values are a vec{} from R{}, which must be a multiple of {align}",
                            2 * words,
                            rb.0
                        ),
                        rules::SUATOM_CAS_VECTOR,
                    );
                }
            }
            _ => d.error(
                pc,
                inst,
                "a surface CAS takes its swap value from the registers after its compare value (Rb+1, or Rb+2 for 64 bits)".to_string(),
                rules::SUATOM_CAS_VECTOR,
            ),
        }
    }
    let immediate = matches!(s.handle, SurfaceHandle::Bank { .. });
    if dialect == Dialect::Sass && !s.sparse.is_pt() && immediate && a.op != AtomicOp::Cas {
        d.error(
            pc,
            inst,
            format!(
                "a sparse predicate with an immediate handle on .{}",
                a.op.name().to_ascii_uppercase()
            ),
            rules::SUATOM_SPARSE_IMMEDIATE,
        );
    }
}
