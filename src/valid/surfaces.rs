//! Surface address rules (`ir::Address::Surface`, `004_16d4664d52412e92.txt`): the coordinate
//! and handle registers, the space and the shape of the access. The op×size table of surface
//! atomics lives with the other tables in `atomics.rs`.

use super::{rules, Diagnostics};
use crate::ir::surface::{SurfaceAddress, SurfaceHandle};
use crate::ir::{Inst, MemAccess, Space, Ty};

/// The rules of a surface address on `access` (`sass`: the kernel is SASS, whose register
/// alignment rules apply).
pub fn check_address(
    d: &mut Diagnostics,
    sass: bool,
    pc: u32,
    inst: &Inst,
    access: &MemAccess,
    s: &SurfaceAddress,
) {
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
