//! Operand rules that apply to every instruction (register and predicate ranges, SASS register
//! pairs, constant-bank reads) and the per-op rules in one pass over the op ([`check_op`]):
//! branch targets, type legality of ALU ops and conversions, which address spaces each memory
//! op may use, and memory orders (`orders.rs`).
//!
//! Operand widths come from the IR ([`crate::ir::Op::for_each_use`]), the single description of
//! what each op reads and writes.

use super::{atomics, orders, rules, Diagnostics};
use crate::ir::{
    Address, BinOp, Dialect, HalfSel, Inst, Kernel, LaunchSpec, MemAccess, Op, Operand, Role,
    Space, Src, SrcMod, Ty, UnOp,
};

/// Register and predicate ranges; SASS pair alignment.
pub fn check_registers(d: &mut Diagnostics, kernel: &Kernel, pc: u32, inst: &Inst) {
    for u in inst.op.reg_uses() {
        if u.reg.is_rz() {
            continue;
        }
        let role = match u.role {
            Role::Dst => "destination",
            Role::Src => "source",
        };
        let last = u32::from(u.reg.0) + u32::from(u.words) - 1;
        if last >= kernel.num_regs {
            d.error(
                pc,
                inst,
                format!(
                    "{role} register R{last} is outside the kernel's {} registers (a front-end bug)",
                    kernel.num_regs
                ),
                rules::REG_RANGE,
            );
        }
        if kernel.dialect == Dialect::Sass && u.words == 4 && u.reg.0 % 4 != 0 {
            d.error(
                pc,
                inst,
                format!(
                    "misaligned 128-bit {role} quad R{}: a quad starts at a multiple of 4",
                    u.reg.0
                ),
                rules::SASS_QUAD_ALIGNED,
            );
        }
        if kernel.dialect == Dialect::Sass && u.words == 2 && u.reg.0 % 2 != 0 {
            d.error(
                pc,
                inst,
                format!(
                    "misaligned 64-bit {role} pair R{}: a pair starts at an even register",
                    u.reg.0
                ),
                rules::SASS_PAIR_ALIGNED,
            );
        }
    }
    for p in inst.pred_uses() {
        if !p.is_pt() && u32::from(p.0) >= kernel.num_preds {
            d.error(
                pc,
                inst,
                format!(
                    "predicate P{} is outside the kernel's {} predicates (a front-end bug)",
                    p.0, kernel.num_preds
                ),
                rules::PRED_RANGE,
            );
        }
    }
}

/// Constant-bank reads: in bank 0 (of `cbank_bytes` bytes) or one of the kernel's other banks
/// ([`crate::ir::LaunchSpec::const_banks`]), naturally aligned, inside the bank.
pub fn check_const_operands(
    d: &mut Diagnostics,
    launch: &LaunchSpec,
    cbank_bytes: u32,
    pc: u32,
    inst: &Inst,
) {
    for u in inst.op.operand_uses() {
        let Operand::Const { bank, offset } = u.operand else {
            continue;
        };
        let width = u32::from(u.words) * 4;
        let size = if bank == 0 {
            cbank_bytes
        } else if let Some(b) = launch.const_bank(bank) {
            u32::try_from(b.bytes.len()).unwrap_or(u32::MAX)
        } else {
            d.error(
                pc,
                inst,
                format!(
                    "c[{bank:#x}][{offset:#x}]: the kernel has no constant bank {bank} (only bank 0 \
                     and the banks its listing prints, with `cuobjdump -elf -sass` or `nvdisasm` \
                     without `-c`)"
                ),
                rules::CONST_OPERAND,
            );
            continue;
        };
        if offset % width != 0 {
            d.error(
                pc,
                inst,
                format!(
                    "c[{bank:#x}][{offset:#x}]: a {width}-byte read must be {width}-byte aligned"
                ),
                rules::CONST_OPERAND,
            );
        }
        if u64::from(offset) + u64::from(width) > u64::from(size) {
            let which = if bank == 0 {
                "the constant bank".to_string()
            } else {
                format!("constant bank {bank}")
            };
            d.error(
                pc,
                inst,
                format!(
                    "c[{bank:#x}][{offset:#x}]: the {width}-byte read ends past {which} ({size:#x} bytes)"
                ),
                rules::CONST_OPERAND,
            );
        }
    }
}

/// Float types atomjit computes with.
fn is_arith_float(ty: Ty) -> bool {
    matches!(ty, Ty::F32 | Ty::F64)
}

/// Scalar float types conversions accept.
fn is_convert_float(ty: Ty) -> bool {
    matches!(ty, Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64)
}

fn ty_name(ty: Ty) -> String {
    ty.name().to_ascii_uppercase()
}

/// Source modifiers legal for the type the op computes in.
fn check_modifier(d: &mut Diagnostics, pc: u32, inst: &Inst, s: &Src, ty: Ty) {
    let ok = match s.modifier {
        SrcMod::None | SrcMod::Neg => true,
        SrcMod::Abs | SrcMod::NegAbs => ty.is_float(),
        SrcMod::Not => ty.is_int(),
    };
    if !ok {
        d.error(
            pc,
            inst,
            format!(
                "source modifier {:?} is invalid on a {} operand",
                s.modifier,
                ty_name(ty)
            ),
            rules::SRC_MODIFIERS,
        );
    }
}

/// The value type of a non-memory op that names `Ty::B128`, which only the 128-bit atomics take.
fn b128_outside_atomics(op: &Op) -> bool {
    let b128 = |t: &Ty| *t == Ty::B128;
    match op {
        Op::Mov { ty, .. }
        | Op::Unary { ty, .. }
        | Op::Binary { ty, .. }
        | Op::SetP { ty, .. }
        | Op::Select { ty, .. }
        | Op::Redux { ty, .. }
        | Op::Match { ty, .. }
        | Op::Bfe { ty, .. }
        | Op::Bfi { ty, .. }
        | Op::Fma { ty, .. }
        | Op::PackHalves { ty, .. }
        | Op::PackedMinMax { ty, .. } => b128(ty),
        Op::Shf(s) => b128(&s.ty),
        Op::Convert { dst_ty, src_ty, .. } => b128(dst_ty) || b128(src_ty),
        Op::Load { access, .. } | Op::Store { access, .. } => b128(&access.ty),
        Op::Nop
        | Op::ReadSpecial { .. }
        | Op::IAdd3 { .. }
        | Op::Imad { .. }
        | Op::Lea { .. }
        | Op::Lop3 { .. }
        | Op::PredLogic { .. }
        | Op::PredMove(_)
        | Op::Vote { .. }
        | Op::Atomic(_)
        | Op::Fence { .. }
        | Op::Barrier { .. }
        | Op::Branch { .. }
        | Op::Exit
        | Op::BranchConverged { .. }
        | Op::WarpSplit { .. }
        | Op::Shfl { .. }
        | Op::Prmt { .. }
        | Op::IsSpace { .. }
        | Op::PredLut { .. } => false,
    }
}

/// The shape of a (vector) access: 1, 2, 4 or 8 elements of at most 16 bytes in all (a scalar
/// `B128` atomic is its own 16 bytes); a vector store's data is in registers.
fn check_vector_shape(d: &mut Diagnostics, pc: u32, inst: &Inst, access: &MemAccess) {
    let ok = matches!(access.vector, 1 | 2 | 4 | 8)
        && (access.vector == 1 || access.ty != Ty::B128)
        && access.bytes() <= 16;
    if !ok {
        d.error(
            pc,
            inst,
            format!(
                "a vector access of {} {} elements",
                access.vector,
                ty_name(access.ty)
            ),
            rules::VECTOR_SHAPE,
        );
    }
    if let Op::Store { src, .. } = &inst.op {
        if access.is_vector() && !matches!(src, Operand::Reg(_)) {
            d.error(
                pc,
                inst,
                "a vector store's elements must be in registers".to_string(),
                rules::VECTOR_REGISTERS,
            );
        }
    }
}

/// Type legality of ALU ops, conversions, shifts; branch targets; barrier ids; memory spaces.
pub fn check_op(d: &mut Diagnostics, kernel: &Kernel, pc: u32, inst: &Inst) {
    let sass = kernel.dialect == Dialect::Sass;
    if b128_outside_atomics(&inst.op) {
        d.error(
            pc,
            inst,
            "the 128-bit type B128 outside a 128-bit atomic".to_string(),
            rules::B128_ATOMICS_ONLY,
        );
    }
    match &inst.op {
        Op::Nop | Op::Mov { .. } | Op::ReadSpecial { .. } | Op::Exit => {}
        Op::Fence { order, .. } => orders::check_fence(d, pc, inst, *order),
        Op::Shfl { b, c, .. } => {
            check_modifier(d, pc, inst, b, Ty::U32);
            check_modifier(d, pc, inst, c, Ty::U32);
        }
        Op::Redux { op, ty, .. } => {
            let ok = crate::sem::warp::REDUX_OPS.contains(op)
                && matches!(ty, Ty::U32 | Ty::S32 | Ty::B32);
            if !ok {
                let what = format!("redux.{} is not defined on {}", op.name(), ty_name(*ty));
                d.error(pc, inst, what, rules::REDUX_TYPES);
            }
        }
        Op::Match { ty, .. } => {
            if !matches!(ty, Ty::B32 | Ty::B64 | Ty::U32 | Ty::U64) {
                let what = format!("match is not defined on {}", ty_name(*ty));
                d.error(pc, inst, what, rules::MATCH_TYPES);
            }
        }
        Op::Prmt { a, b, sel, .. } => {
            for s in [a, b, sel] {
                check_modifier(d, pc, inst, s, Ty::U32);
            }
        }
        Op::Bfe {
            ty, a, pos, len, ..
        } => {
            if !matches!(ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64) {
                let what = format!("bfe is not defined on {}", ty_name(*ty));
                d.error(pc, inst, what, rules::BFE_TYPES);
            }
            check_modifier(d, pc, inst, a, *ty);
            check_modifier(d, pc, inst, pos, Ty::U32);
            check_modifier(d, pc, inst, len, Ty::U32);
        }
        Op::Bfi {
            ty,
            insert,
            base,
            pos,
            len,
            ..
        } => {
            if !(ty.is_int() && ty.bits() >= 32) {
                let what = format!("bfi is not defined on {}", ty_name(*ty));
                d.error(pc, inst, what, rules::BFI_TYPES);
            }
            check_modifier(d, pc, inst, insert, *ty);
            check_modifier(d, pc, inst, base, *ty);
            check_modifier(d, pc, inst, pos, Ty::U32);
            check_modifier(d, pc, inst, len, Ty::U32);
        }
        Op::Fma {
            ty,
            a,
            b,
            c,
            ftz,
            halves,
            ..
        } => {
            if !ty.is_float() {
                let what = format!("fma is not defined on {}", ty_name(*ty));
                d.error(pc, inst, what, rules::FMA_TYPES);
            }
            if *ftz && *ty != Ty::F32 {
                let what = format!(".FTZ on fma.{}", ty_name(*ty));
                d.error(pc, inst, what, rules::FMA_FTZ);
            }
            for s in [a, b, c] {
                check_modifier(d, pc, inst, s, *ty);
            }
            let packed = matches!(ty, Ty::F16x2 | Ty::BF16x2);
            if let Some(sel) = halves
                .iter()
                .find(|h| **h != HalfSel::H1H0)
                .filter(|_| !packed)
            {
                let what = format!("half selector .{sel} on fma.{}", ty_name(*ty));
                d.error(pc, inst, what, rules::FMA_HALVES);
            }
        }
        Op::PackedMinMax { op, ty, a, b, .. } => {
            if !matches!(op, BinOp::Min | BinOp::Max) || !matches!(ty, Ty::U16 | Ty::S16) {
                let what = format!("{op} on packed {} pairs", ty_name(*ty));
                d.error(pc, inst, what, rules::PACKED_MIN_MAX);
            }
            for s in [a, b] {
                if s.modifier != SrcMod::None {
                    let what = format!("source modifier {:?} on a packed min/max", s.modifier);
                    d.error(pc, inst, what, rules::PACKED_MIN_MAX_MODIFIERS);
                }
            }
        }
        Op::PredLut { .. } => {}
        Op::PackHalves { ty, hi, lo, .. } => {
            if !matches!(ty, Ty::F16x2 | Ty::BF16x2) {
                let what = format!("packing two f32 values into {}", ty_name(*ty));
                d.error(pc, inst, what, rules::PACK_HALVES);
            }
            check_modifier(d, pc, inst, hi, Ty::F32);
            check_modifier(d, pc, inst, lo, Ty::F32);
        }
        Op::IsSpace { space, .. } => {
            if !matches!(space, Space::Shared | Space::Global) {
                let what = format!("isspacep asks about the {} space", space.name());
                d.error(pc, inst, what, rules::IS_SPACE);
            }
        }
        Op::Unary { op, ty, a, .. } => {
            let (ok, rule) = match op {
                UnOp::Not
                | UnOp::Popc
                | UnOp::Clz
                | UnOp::Brev
                | UnOp::Bfind
                | UnOp::BfindShift => (ty.is_int(), rules::INT_OPS),
                UnOp::Neg | UnOp::Abs => (ty.is_int() || is_arith_float(*ty), rules::FLOAT_TYPES),
            };
            if !ok {
                d.error(
                    pc,
                    inst,
                    format!("{} is not defined on {}", op.name(), ty_name(*ty)),
                    rule,
                );
            }
            check_modifier(d, pc, inst, a, *ty);
        }
        Op::Binary {
            op, ty, a, b, ftz, ..
        } => {
            let (ok, rule) = match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Min | BinOp::Max => {
                    (ty.is_int() || is_arith_float(*ty), rules::FLOAT_TYPES)
                }
                BinOp::MulWide => (ty.is_int() && ty.bits() <= 32, rules::MUL_WIDE),
                // IEEE division rounded to nearest even (PTX `div.rn`) or integer division.
                BinOp::Div => (ty.is_int() || is_arith_float(*ty), rules::FLOAT_TYPES),
                BinOp::MulHi
                | BinOp::Rem
                | BinOp::And
                | BinOp::Or
                | BinOp::Xor
                | BinOp::Shl
                | BinOp::Shr => (ty.is_int(), rules::INT_OPS),
            };
            if !ok {
                d.error(
                    pc,
                    inst,
                    format!("{} is not defined on {}", op.name(), ty_name(*ty)),
                    rule,
                );
            }
            if *ftz && !ty.is_float() {
                d.error(
                    pc,
                    inst,
                    format!(".FTZ on the integer type {}", ty_name(*ty)),
                    rules::FTZ_FLOAT_ONLY,
                );
            }
            check_modifier(d, pc, inst, a, *ty);
            let b_ty = if op.b_is_shift_amount() { Ty::U32 } else { *ty };
            check_modifier(d, pc, inst, b, b_ty);
        }
        Op::IAdd3 { a, b, c, .. } | Op::Lop3 { a, b, c, .. } | Op::Imad { a, b, c, .. } => {
            for s in [a, b, c] {
                check_modifier(d, pc, inst, s, Ty::U32);
            }
        }
        Op::Lea { a, b, c, shift, .. } => {
            for s in [a, b, c] {
                check_modifier(d, pc, inst, s, Ty::U32);
            }
            if *shift > 31 {
                d.error(
                    pc,
                    inst,
                    format!("LEA shift {shift} is outside 0..=31"),
                    rules::LEA_SHIFT,
                );
            }
        }
        Op::Shf(s) => {
            if !matches!(s.ty, Ty::U32 | Ty::S32 | Ty::U64 | Ty::S64) {
                d.error(
                    pc,
                    inst,
                    format!("SHF type {} must be U32, S32, U64 or S64", ty_name(s.ty)),
                    rules::SHF_TYPES,
                );
            }
            for x in [&s.lo, &s.shift, &s.hi] {
                check_modifier(d, pc, inst, x, Ty::U32);
            }
        }
        Op::SetP {
            cmp,
            ty,
            a,
            b,
            chain,
            ..
        } => {
            if chain.is_some() && !ty.is_int() {
                d.error(
                    pc,
                    inst,
                    format!("an extended (chained) comparison in {}", ty_name(*ty)),
                    rules::SETP_CHAIN_INT,
                );
            }
            if !(ty.is_int() || is_arith_float(*ty)) {
                d.error(
                    pc,
                    inst,
                    format!("comparison in {}", ty_name(*ty)),
                    rules::FLOAT_TYPES,
                );
            }
            if cmp.is_float_only() && ty.is_int() {
                d.error(
                    pc,
                    inst,
                    format!(
                        "comparison {} exists only for floats, not {}",
                        cmp.name(),
                        ty_name(*ty)
                    ),
                    rules::FLOAT_COMPARE,
                );
            }
            check_modifier(d, pc, inst, a, *ty);
            check_modifier(d, pc, inst, b, *ty);
        }
        Op::PredLogic { .. } | Op::PredMove(_) | Op::Vote { .. } => {}
        Op::Select { ty, a, b, .. } => {
            check_modifier(d, pc, inst, a, *ty);
            check_modifier(d, pc, inst, b, *ty);
        }
        Op::Convert {
            dst_ty,
            src_ty,
            round,
            ftz,
            a,
            ..
        } => {
            let legal = |t: Ty| t.is_int() || is_convert_float(t);
            if !legal(*dst_ty) || !legal(*src_ty) {
                d.error(
                    pc,
                    inst,
                    format!(
                        "no conversion from {} to {}",
                        ty_name(*src_ty),
                        ty_name(*dst_ty)
                    ),
                    rules::CONVERT,
                );
            }
            let both_int = dst_ty.is_int() && src_ty.is_int();
            if both_int && *round != crate::ir::Round::Nearest {
                d.error(
                    pc,
                    inst,
                    format!("integer to integer conversion takes no rounding mode (got {round:?})"),
                    rules::CONVERT,
                );
            }
            if both_int && *ftz {
                d.error(
                    pc,
                    inst,
                    ".FTZ on an integer conversion".to_string(),
                    rules::FTZ_FLOAT_ONLY,
                );
            }
            check_modifier(d, pc, inst, a, *src_ty);
        }
        Op::Load { access, .. } => {
            check_vector_shape(d, pc, inst, access);
            check_space(d, pc, inst, access.space, false);
            check_address(d, sass, pc, inst, access);
            orders::check_load(d, pc, inst, access.order);
        }
        Op::Store { access, .. } => {
            check_vector_shape(d, pc, inst, access);
            check_space(d, pc, inst, access.space, true);
            check_address(d, sass, pc, inst, access);
            orders::check_store(d, pc, inst, access.order);
        }
        Op::Atomic(a) => {
            check_vector_shape(d, pc, inst, &a.access);
            check_space(d, pc, inst, a.access.space, true);
            // The Imm24 rules of ATOMS are checked with the atomic rules.
            check_address_base(d, sass, pc, inst, &a.access, true);
            orders::check_atomic(d, pc, inst, a.access.order);
        }
        Op::Barrier { id } => {
            if *id > 15 {
                d.error(
                    pc,
                    inst,
                    format!("barrier id {id} is outside 0..=15"),
                    rules::BARRIER_IDS,
                );
            }
        }
        Op::WarpSplit { rejoin, .. } => {
            if *rejoin <= pc || *rejoin as usize >= kernel.insts.len() {
                d.error(
                    pc,
                    inst,
                    format!(
                        "the split's rejoin point {rejoin} is not an instruction after it (last: {})",
                        kernel.insts.len().saturating_sub(1)
                    ),
                    rules::WARP_SPLIT_REJOIN,
                );
            }
        }
        Op::Branch { target, .. } | Op::BranchConverged { target, .. } => {
            if *target as usize >= kernel.insts.len() {
                d.error(
                    pc,
                    inst,
                    format!(
                        "branch target {target} is past the last instruction ({})",
                        kernel.insts.len().saturating_sub(1)
                    ),
                    rules::BRANCH_TARGET,
                );
            }
        }
    }
}

/// `Const` is read only; `Generic` is PTX only.
fn check_space(d: &mut Diagnostics, pc: u32, inst: &Inst, space: Space, writes: bool) {
    match space {
        Space::Global | Space::Shared => {}
        Space::Const => {
            if writes {
                d.error(
                    pc,
                    inst,
                    "the constant bank is read only: no stores or atomics".to_string(),
                    rules::CONST_READ_ONLY,
                );
            }
        }
        // Generic addresses: PTX's, and SASS `LD`/`ST`/`ATOM`/`RED` (sm_70 on).
        Space::Generic => {}
    }
}

/// Base width; a SASS shared-window base is one 32-bit register.
/// `atomic`: the access is an atomic's (surface `.SD32`/`.SD64` exist only there).
fn check_address_base(
    d: &mut Diagnostics,
    sass: bool,
    pc: u32,
    inst: &Inst,
    access: &MemAccess,
    atomic: bool,
) {
    match &access.addr {
        Address::Surface(s) => super::surfaces::check_address(d, sass, pc, inst, access, s, atomic),
        Address::Indexed(x) => {
            let widths_ok = [x.base_bits, x.index_bits]
                .iter()
                .all(|b| *b == 32 || *b == 64);
            if !widths_ok || x.scale > 4 {
                d.error(
                    pc,
                    inst,
                    format!(
                        "indexed address widths {}/{} must be 32 or 64 and the scale 2^{} at most 16",
                        x.base_bits, x.index_bits, x.scale
                    ),
                    rules::ADDRESS_BASE_BITS,
                );
            }
        }
        Address::Linear(addr) => {
            if addr.base_bits != 32 && addr.base_bits != 64 {
                d.error(
                    pc,
                    inst,
                    format!("address base width {} must be 32 or 64", addr.base_bits),
                    rules::ADDRESS_BASE_BITS,
                );
            } else if sass
                && access.space == Space::Shared
                && addr.base_bits == 64
                && !addr.is_absolute()
            {
                d.error(
                    pc,
                    inst,
                    format!(
                        "a shared-memory address base is one 32-bit register, not the pair R{}.64",
                        addr.base.map_or(0, |r| r.0)
                    ),
                    rules::SHARED_BASE_32,
                );
            }
        }
    }
}

/// Address rules of loads and stores: the base, and the Imm24 range of SASS `LDS`/`STS`.
fn check_address(d: &mut Diagnostics, sass: bool, pc: u32, inst: &Inst, access: &MemAccess) {
    check_address_base(d, sass, pc, inst, access, false);
    if sass && access.space == Space::Shared {
        atomics::check_imm24(d, pc, inst, &access.addr, false);
    }
}
