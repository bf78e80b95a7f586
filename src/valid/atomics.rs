//! Atomic instruction rules: the op×size tables (one per dialect and space, as data), the
//! operand shape of each op, the Imm24 encoding restrictions of `ATOMS`, and the CAS/CAST
//! register pairing.
//!
//! A table lists, per op, the exact sizes the document allows; anything else is an error that
//! quotes the row (or the op list when the op has no row). A `(dialect, space)` without a table
//! rejects every atomic with [`rules::NO_TABLE`], so a new dialect cannot run atomics that
//! nobody checked: its front-end adds its table here.

use super::{fmt_offset, rules, Diagnostics};
use crate::ir::{Address, AtomicInst, AtomicOp, Dialect, Inst, Operand, Space, Ty};

/// One legal size of a table row: the type, whether it is the `.FTZ` form, and whether its
/// signedness comes from a surface's format (`.SD32`/`.SD64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub ty: Ty,
    /// `.FTZ` (flush subnormals): a distinct form, e.g. `F32.FTZ.RN`.
    pub ftz: bool,
    /// `.SD32`/`.SD64` (`ty` is `U32`/`U64`): signed when the surface's elements are
    /// (`ir::surface::SurfaceAddress::format_sign`).
    pub format_sign: bool,
}

impl Size {
    const fn plain(ty: Ty) -> Size {
        Size {
            ty,
            ftz: false,
            format_sign: false,
        }
    }
    const fn flushing(ty: Ty) -> Size {
        Size {
            ty,
            ftz: true,
            format_sign: false,
        }
    }
    const fn format_signed(ty: Ty) -> Size {
        Size {
            ty,
            ftz: false,
            format_sign: true,
        }
    }
    /// The PTX spelling: `.u32`, `.f16`, and for `f32` add `.f32` (flushing subnormals) or
    /// `.noftz.f32`.
    pub fn ptx_name(self) -> String {
        let base = format!(".{}", self.ty.name());
        match (self.ty, self.ftz) {
            (_, true) => format!("{base} (ftz)"),
            (Ty::F32, false) => format!(".noftz{base}"),
            _ => base,
        }
    }

    /// The spelling of `dialect`.
    pub fn name_in(self, dialect: Dialect) -> String {
        match dialect {
            Dialect::Ptx => self.ptx_name(),
            Dialect::Sass | Dialect::Visa => self.sass_name(),
        }
    }

    /// The SASS spelling: `.U32`, `.F32.FTZ.RN`, `.F64.RN`, `.SD32`.
    pub fn sass_name(self) -> String {
        if self.format_sign {
            return format!(".SD{}", self.ty.bits());
        }
        let base = format!(".{}", self.ty.name().to_ascii_uppercase());
        match (self.ty.is_float(), self.ftz) {
            (true, true) => format!("{base}.FTZ.RN"),
            (true, false) => format!("{base}.RN"),
            (false, true) => format!("{base}.FTZ"),
            (false, false) => base,
        }
    }
}

const U32: Size = Size::plain(Ty::U32);
const S32: Size = Size::plain(Ty::S32);
const U64: Size = Size::plain(Ty::U64);
const S64: Size = Size::plain(Ty::S64);
const F32_FTZ: Size = Size::flushing(Ty::F32);
const F64: Size = Size::plain(Ty::F64);

/// One row of an op×size table.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub op: AtomicOp,
    pub sizes: &'static [Size],
    /// The rule text quoting this row.
    pub rule: &'static str,
}

const fn row(op: AtomicOp, sizes: &'static [Size], rule: &'static str) -> Row {
    Row { op, sizes, rule }
}

/// The legal atomic forms of one dialect and address space.
#[derive(Debug, Clone, Copy)]
pub struct AtomicTable {
    pub dialect: Dialect,
    pub space: Space,
    /// The instruction name used in messages (`ATOMS`).
    pub mnemonic: &'static str,
    pub rows: &'static [Row],
    /// The rule quoted when the op has no row.
    pub ops_rule: &'static str,
}

impl AtomicTable {
    pub fn row(&self, op: AtomicOp) -> Option<&'static Row> {
        self.rows.iter().find(|r| r.op == op)
    }
    /// True when `op` at `size` is in the table.
    pub fn allows(&self, op: AtomicOp, size: Size) -> bool {
        self.row(op).is_some_and(|r| r.sizes.contains(&size))
    }
}

/// `ATOMS`: exactly the table of `000_6d05a8552870c0ae.txt`.
pub const SASS_SHARED: AtomicTable = AtomicTable {
    dialect: Dialect::Sass,
    space: Space::Shared,
    mnemonic: "ATOMS",
    rows: &[
        row(AtomicOp::Add, &[U32, S32], rules::ATOMS_ROW_ADD),
        row(AtomicOp::Min, &[U32, S32], rules::ATOMS_ROW_MIN),
        row(AtomicOp::Max, &[U32, S32], rules::ATOMS_ROW_MAX),
        row(AtomicOp::Inc, &[U32], rules::ATOMS_ROW_INC),
        row(AtomicOp::Dec, &[U32], rules::ATOMS_ROW_DEC),
        row(AtomicOp::And, &[U32, S32], rules::ATOMS_ROW_AND),
        row(AtomicOp::Or, &[U32, S32], rules::ATOMS_ROW_OR),
        row(AtomicOp::Xor, &[U32, S32], rules::ATOMS_ROW_XOR),
        row(AtomicOp::Exch, &[U32, S32, U64], rules::ATOMS_ROW_EXCH),
        row(AtomicOp::Cas, &[U32, S32, U64], rules::ATOMS_ROW_CAS),
        row(AtomicOp::Cast, &[U32, S32, U64], rules::ATOMS_ROW_CAST),
    ],
    ops_rule: rules::ATOMS_OPS,
};

/// The op×size rows of global and generic SASS atomics.
const SASS_GLOBAL_ROWS: &[Row] = &[
    row(
        AtomicOp::Add,
        &[U32, S32, U64, F32_FTZ, F64, F16X2, BF16X2],
        rules::ATOMG_ROW_ADD,
    ),
    row(
        AtomicOp::Min,
        &[U32, S32, U64, S64, F16X2, BF16X2],
        rules::ATOMG_ROW_MINMAX,
    ),
    row(
        AtomicOp::Max,
        &[U32, S32, U64, S64, F16X2, BF16X2],
        rules::ATOMG_ROW_MINMAX,
    ),
    row(AtomicOp::Inc, &[U32], rules::ATOMG_ROW_INC),
    row(AtomicOp::Dec, &[U32], rules::ATOMG_ROW_DEC),
    row(AtomicOp::And, &[U32, S32, U64], rules::ATOMG_ROW_BITWISE),
    row(AtomicOp::Or, &[U32, S32, U64], rules::ATOMG_ROW_BITWISE),
    row(AtomicOp::Xor, &[U32, S32, U64], rules::ATOMG_ROW_BITWISE),
    row(AtomicOp::Exch, &[U32, S32, U64], rules::ATOMG_ROW_EXCH),
    row(AtomicOp::Cas, &[U32, S32, U64], rules::ATOMG_ROW_CAS),
];

/// Generic `ATOM`: the global rows and `CAST` (ptxas's `ATOM.E.CAST.SPIN` for a generic
/// address in shared memory).
const SASS_GENERIC_ROWS: [Row; SASS_GLOBAL_ROWS.len() + 1] = {
    let mut rows =
        [row(AtomicOp::Cast, &[U32, S32, U64], rules::ATOMS_ROW_CAST); SASS_GLOBAL_ROWS.len() + 1];
    let mut i = 0;
    while i < SASS_GLOBAL_ROWS.len() {
        rows[i] = SASS_GLOBAL_ROWS[i];
        i += 1;
    }
    rows
};

/// `ATOMG`/`RED` in sm_80 syntax, as issue 2 lists them (see [`rules::ATOMG_OPS`]).
pub const SASS_GLOBAL: AtomicTable = AtomicTable {
    dialect: Dialect::Sass,
    space: Space::Global,
    mnemonic: "ATOMG",
    rows: SASS_GLOBAL_ROWS,
    ops_rule: rules::ATOMG_OPS,
};

/// `ATOM`/`RED` on generic addresses (sm_80 and later): the rows of [`SASS_GLOBAL`] and
/// `CAST`; an address that resolves to the shared window performs the same operation there.
pub const SASS_GENERIC: AtomicTable = AtomicTable {
    dialect: Dialect::Sass,
    space: Space::Generic,
    mnemonic: "ATOM",
    rows: &SASS_GENERIC_ROWS,
    ops_rule: rules::ATOMG_OPS,
};

const B16: Size = Size::plain(Ty::B16);
const B32: Size = Size::plain(Ty::B32);
const B64: Size = Size::plain(Ty::B64);
const F32: Size = Size::plain(Ty::F32);
const F16: Size = Size::plain(Ty::F16);
const F16X2: Size = Size::plain(Ty::F16x2);
const BF16: Size = Size::plain(Ty::BF16);
const BF16X2: Size = Size::plain(Ty::BF16x2);

/// The PTX op×type rows shared by every space; `add` differs by space (see the tables).
macro_rules! ptx_rows {
    ($add:expr, $add_rule:expr) => {
        &[
            row(AtomicOp::Add, $add, $add_rule),
            row(AtomicOp::Min, &[U32, S32, U64, S64], rules::PTX_ROW_MINMAX),
            row(AtomicOp::Max, &[U32, S32, U64, S64], rules::PTX_ROW_MINMAX),
            row(AtomicOp::Inc, &[U32], rules::PTX_ROW_INC_DEC),
            row(AtomicOp::Dec, &[U32], rules::PTX_ROW_INC_DEC),
            row(AtomicOp::And, &[B32, B64], rules::PTX_ROW_BITWISE),
            row(AtomicOp::Or, &[B32, B64], rules::PTX_ROW_BITWISE),
            row(AtomicOp::Xor, &[B32, B64], rules::PTX_ROW_BITWISE),
            row(AtomicOp::Exch, &[B32, B64], rules::PTX_ROW_EXCH),
            row(AtomicOp::Cas, &[B16, B32, B64], rules::PTX_ROW_CAS),
        ]
    };
}

/// PTX `atom`/`red` on `.global`: Table 41 of the PTX ISA. `add.f32` flushes subnormals
/// (`ftz`) unless `.noftz` (PTX ISA 9.4) is given, so both forms are listed; the 16-bit float
/// adds require `.noftz` (no `ftz` form).
pub const PTX_GLOBAL: AtomicTable = AtomicTable {
    dialect: Dialect::Ptx,
    space: Space::Global,
    mnemonic: "atom.global",
    rows: ptx_rows!(
        &[U32, S32, U64, F32_FTZ, F32, F64, F16, F16X2, BF16, BF16X2],
        rules::PTX_ROW_ADD
    ),
    ops_rule: rules::PTX_OPS,
};

/// PTX `atom`/`red` on `.shared`: as global, except that `add.f32` never flushes.
pub const PTX_SHARED: AtomicTable = AtomicTable {
    dialect: Dialect::Ptx,
    space: Space::Shared,
    mnemonic: "atom.shared",
    rows: ptx_rows!(
        &[U32, S32, U64, F32, F64, F16, F16X2, BF16, BF16X2],
        rules::PTX_ROW_ADD_SHARED
    ),
    ops_rule: rules::PTX_OPS,
};

/// PTX `atom`/`red` on generic addresses: as global (an `ftz` `add.f32` flushes only on
/// addresses that resolve to global memory, the IR's generic FTZ rule).
pub const PTX_GENERIC: AtomicTable = AtomicTable {
    dialect: Dialect::Ptx,
    space: Space::Generic,
    mnemonic: "atom",
    rows: ptx_rows!(
        &[U32, S32, U64, F32_FTZ, F32, F64, F16, F16X2, BF16, BF16X2],
        rules::PTX_ROW_ADD
    ),
    ops_rule: rules::PTX_OPS,
};

const SD32: Size = Size::format_signed(Ty::U32);
const SD64: Size = Size::format_signed(Ty::U64);
const F16X2_FTZ: Size = Size::flushing(Ty::F16x2);

/// `SUATOM`/`SURED` (surface addresses): exactly the table of `004_16d4664d52412e92.txt`, with
/// `.F16x2.FTZ.RN` (its `.sz` list's spelling) beside `.F16x2.RN` (its table's) wherever F16x2
/// is allowed: the flushing form flushes subnormal halves (`ir::AtomicInst::ftz`).
pub const SASS_SURFACE: AtomicTable = AtomicTable {
    dialect: Dialect::Sass,
    space: Space::Global,
    mnemonic: "SUATOM",
    rows: &[
        row(
            AtomicOp::Add,
            &[U32, S32, SD32, U64, F32_FTZ, F16X2, F16X2_FTZ],
            rules::SUATOM_ROW_ADD,
        ),
        row(
            AtomicOp::Min,
            &[U32, S32, SD32, U64, S64, SD64, F16X2, F16X2_FTZ],
            rules::SUATOM_ROW_MIN,
        ),
        row(
            AtomicOp::Max,
            &[U32, S32, SD32, U64, S64, SD64, F16X2, F16X2_FTZ],
            rules::SUATOM_ROW_MAX,
        ),
        row(AtomicOp::Inc, &[U32], rules::SUATOM_ROW_INC),
        row(AtomicOp::Dec, &[U32], rules::SUATOM_ROW_DEC),
        row(AtomicOp::And, &[U32, S32, SD32, U64], rules::SUATOM_ROW_AND),
        row(AtomicOp::Or, &[U32, S32, SD32, U64], rules::SUATOM_ROW_OR),
        row(AtomicOp::Xor, &[U32, S32, SD32, U64], rules::SUATOM_ROW_XOR),
        row(AtomicOp::Exch, &[U32, S32, U64], rules::SUATOM_ROW_EXCH),
        row(AtomicOp::Cas, &[U32, S32, U64], rules::SUATOM_ROW_CAS),
    ],
    ops_rule: rules::SUATOM_OPS,
};

/// PTX `sured` (surface addresses), as ptxas 12.9 accepts it: `sured.b` with its types, and
/// `sured.p` on `.b32` (add, and, or: `U32`; min, max: `SD32`) and `.b64` (min, max: `SD64`).
/// `.b32` bitwise data is `U32`, as ptxas's `SURED.D.AND` has it.
pub const PTX_SURFACE: AtomicTable = AtomicTable {
    dialect: Dialect::Ptx,
    space: Space::Global,
    mnemonic: "sured",
    rows: &[
        row(AtomicOp::Add, &[U32, S32, U64], rules::PTX_SURED_ROW_ADD),
        row(
            AtomicOp::Min,
            &[U32, S32, U64, S64, SD32, SD64],
            rules::PTX_SURED_ROW_MINMAX,
        ),
        row(
            AtomicOp::Max,
            &[U32, S32, U64, S64, SD32, SD64],
            rules::PTX_SURED_ROW_MINMAX,
        ),
        row(AtomicOp::And, &[U32], rules::PTX_SURED_ROW_BITWISE),
        row(AtomicOp::Or, &[U32], rules::PTX_SURED_ROW_BITWISE),
    ],
    ops_rule: rules::PTX_SURED_OPS,
};

const U16: Size = Size::plain(Ty::U16);
const S16: Size = Size::plain(Ty::S16);

/// vISA `svm_atomic` (`002_ac5e42ba09aa5f7e.txt`) as the vISA front end lowers it: `inc`,
/// `dec` and `predec` are `Add`/`Sub` of 1, `cmpxchg` is `Cas`; every op at 16, 32 and 64 bits.
pub const VISA_SVM: AtomicTable = AtomicTable {
    dialect: Dialect::Visa,
    space: Space::Global,
    mnemonic: "svm_atomic",
    rows: &[
        row(AtomicOp::Add, &[U16, U32, U64], rules::VISA_SVM_ROW_INT),
        row(AtomicOp::Sub, &[U16, U32, U64], rules::VISA_SVM_ROW_INT),
        row(
            AtomicOp::Min,
            &[U16, U32, U64, S16, S32, S64, F16, F32, F64],
            rules::VISA_SVM_ROW_MINMAX,
        ),
        row(
            AtomicOp::Max,
            &[U16, U32, U64, S16, S32, S64, F16, F32, F64],
            rules::VISA_SVM_ROW_MINMAX,
        ),
        row(AtomicOp::And, &[U16, U32, U64], rules::VISA_SVM_ROW_INT),
        row(AtomicOp::Or, &[U16, U32, U64], rules::VISA_SVM_ROW_INT),
        row(AtomicOp::Xor, &[U16, U32, U64], rules::VISA_SVM_ROW_INT),
        row(AtomicOp::Exch, &[U16, U32, U64], rules::VISA_SVM_ROW_INT),
        row(AtomicOp::Cas, &[U16, U32, U64], rules::VISA_SVM_ROW_INT),
        row(
            AtomicOp::FCmpWr,
            &[F16, F32, F64],
            rules::VISA_SVM_ROW_FCMPWR,
        ),
    ],
    ops_rule: rules::VISA_SVM_OPS,
};

/// The table of an atomic on `access`: a surface address has its own (SASS `SUATOM`, PTX
/// `sured`); otherwise the `(dialect, space)` table.
pub fn table_for(dialect: Dialect, access: &crate::ir::MemAccess) -> Option<&'static AtomicTable> {
    match (&access.addr, dialect) {
        (Address::Surface(_), Dialect::Sass) => Some(&SASS_SURFACE),
        (Address::Surface(_), Dialect::Ptx) => Some(&PTX_SURFACE),
        (Address::Surface(_), Dialect::Visa) => None,
        (Address::Linear(_) | Address::Indexed(_), _) => table(dialect, access.space),
    }
}

/// Every table, looked up by `(dialect, space)`.
pub const TABLES: &[AtomicTable] = &[
    SASS_SHARED,
    SASS_GLOBAL,
    SASS_GENERIC,
    PTX_GLOBAL,
    PTX_SHARED,
    PTX_GENERIC,
    VISA_SVM,
];

/// The table for atomics of `dialect` in `space`, if one exists.
pub fn table(dialect: Dialect, space: Space) -> Option<&'static AtomicTable> {
    TABLES
        .iter()
        .find(|t| t.dialect == dialect && t.space == space)
}

/// The smallest and largest offset of the `ATOMS` 24-bit immediate forms.
pub const IMM_U24_MAX: i64 = (1 << 24) - 1;
pub const IMM_S24_MIN: i64 = -(1 << 23);
pub const IMM_S24_MAX: i64 = (1 << 23) - 1;

/// One legal vector atomic: the op, the element type, whether it flushes subnormals, and the
/// element counts.
struct VectorForm {
    dialect: Dialect,
    ops: &'static [AtomicOp],
    ty: Ty,
    ftz: bool,
    counts: &'static [u8],
}

const ADD: &[AtomicOp] = &[AtomicOp::Add];
const ADD_MIN_MAX: &[AtomicOp] = &[AtomicOp::Add, AtomicOp::Min, AtomicOp::Max];

const fn vector_form(
    dialect: Dialect,
    ops: &'static [AtomicOp],
    ty: Ty,
    ftz: bool,
    counts: &'static [u8],
) -> VectorForm {
    VectorForm {
        dialect,
        ops,
        ty,
        ftz,
        counts,
    }
}

/// The vector atomics ([`rules::PTX_VECTOR_ATOMICS`], [`rules::SASS_VECTOR_ATOMICS`]): PTX's
/// `.v2`/`.v4` `add.f32` (which flushes subnormals on global memory, as `atom.add.f32` does),
/// `.v2`/`.v4`/`.v8` of `.f16`/`.bf16` and `.v2`/`.v4` of `.f16x2`/`.bf16x2` with `add`, `min`,
/// `max` (`.noftz`); SASS's `F32x2`/`F32x4` adds and the `F16x4`/`F16x8` (BF16) forms, which
/// are vectors of 2 or 4 packed pairs.
const VECTOR_FORMS: &[VectorForm] = &[
    vector_form(Dialect::Ptx, ADD, Ty::F32, true, &[2, 4]),
    vector_form(Dialect::Ptx, ADD_MIN_MAX, Ty::F16, false, &[2, 4, 8]),
    vector_form(Dialect::Ptx, ADD_MIN_MAX, Ty::BF16, false, &[2, 4, 8]),
    vector_form(Dialect::Ptx, ADD_MIN_MAX, Ty::F16x2, false, &[2, 4]),
    vector_form(Dialect::Ptx, ADD_MIN_MAX, Ty::BF16x2, false, &[2, 4]),
    vector_form(Dialect::Sass, ADD, Ty::F32, true, &[2, 4]),
    vector_form(Dialect::Sass, ADD_MIN_MAX, Ty::F16x2, false, &[2, 4]),
    vector_form(Dialect::Sass, ADD_MIN_MAX, Ty::BF16x2, false, &[2, 4]),
];

/// Checks one atomic instruction (everything but orders, register ranges and pair alignment,
/// which apply to all instructions and live in `operands` and `orders`).
pub fn check(
    d: &mut Diagnostics,
    kernel: &crate::ir::Kernel,
    pc: u32,
    inst: &Inst,
    a: &AtomicInst,
) {
    let dialect = kernel.dialect;
    if a.access.ty == Ty::B128 {
        check_b128(d, dialect, pc, inst, a);
    } else if a.access.is_vector() {
        check_vector(d, dialect, pc, inst, a);
    } else {
        check_table(d, dialect, pc, inst, a);
    }
    check_shape(d, pc, inst, a);
    if let Some(s) = a.access.addr.surface() {
        super::surfaces::check_atomic(d, dialect, pc, inst, a, s);
    }
    if dialect == Dialect::Sass {
        // The document's `ATOMS.CAS` register pairing (Rb even, Rc = Rb + 1) is its
        // architecture's encoding, which hand-written SASS follows; ptxas 12.9 names Rb and Rc
        // freely for sm_80, sm_86 and sm_90 (`ATOMS.CAS R8, [0xb0], R13, R12`, `ATOMS.CAS R26,
        // [R8], R27, R26`: Rc has its own field), so compiler listings keep only the rules that
        // hold for every register.
        let paired = !kernel.launch.compiled;
        check_sass_registers(d, pc, inst, a, paired);
        if a.access.space == Space::Shared {
            check_imm24(d, pc, inst, &a.access.addr, true);
        }
    }
}

fn mnemonic(dialect: Dialect, space: Space) -> String {
    match table(dialect, space) {
        Some(t) => t.mnemonic.to_string(),
        None => format!("atom.{}", space.name()),
    }
}

/// The 128-bit atomics ([`Ty::B128`]): exchange and compare-and-swap, scalar, on a host with a
/// 16-byte compare-and-swap; the operands are register quads.
fn check_b128(d: &mut Diagnostics, dialect: Dialect, pc: u32, inst: &Inst, a: &AtomicInst) {
    let op_name = match dialect {
        Dialect::Ptx => a.op.name().to_string(),
        Dialect::Sass | Dialect::Visa => a.op.name().to_ascii_uppercase(),
    };
    let rule = match dialect {
        Dialect::Ptx => rules::PTX_ROW_CAS,
        Dialect::Sass | Dialect::Visa => rules::B128_ATOMICS_ONLY,
    };
    if !matches!(a.op, AtomicOp::Exch | AtomicOp::Cas) {
        d.error(
            pc,
            inst,
            format!("a 128-bit atomic .{op_name}: the 128-bit atomics are .exch and .cas only"),
            rule,
        );
    }
    if a.access.is_vector() || a.ftz {
        d.error(
            pc,
            inst,
            "a 128-bit atomic is one scalar access without .ftz".to_string(),
            rule,
        );
    }
    let registers = [Some(a.src), a.src2]
        .into_iter()
        .flatten()
        .all(|o| matches!(o, Operand::Reg(_)));
    if !registers {
        d.error(
            pc,
            inst,
            "the operands of a 128-bit atomic are register quads".to_string(),
            rules::B128_ATOMICS_ONLY,
        );
    }
    if !crate::exec::memory::has_cas128() {
        d.error(
            pc,
            inst,
            "128-bit atomics are not supported on this host".to_string(),
            rules::HOST_CAS128,
        );
    }
}

/// A vector atomic: one of [`VECTOR_FORMS`], in the global space or at a generic address, with
/// a register operand.
fn check_vector(d: &mut Diagnostics, dialect: Dialect, pc: u32, inst: &Inst, a: &AtomicInst) {
    let m = &a.access;
    let rule = match dialect {
        Dialect::Ptx => rules::PTX_VECTOR_ATOMICS,
        Dialect::Sass | Dialect::Visa => rules::SASS_VECTOR_ATOMICS,
    };
    let form = format!(
        "{}.v{}.{}{}",
        a.op.name(),
        m.vector,
        m.ty.name(),
        if a.ftz { " (ftz)" } else { "" }
    );
    let legal = VECTOR_FORMS.iter().any(|f| {
        f.dialect == dialect
            && f.ops.contains(&a.op)
            && f.ty == m.ty
            && f.ftz == a.ftz
            && f.counts.contains(&m.vector)
    });
    if !legal {
        d.error(pc, inst, format!("{form} is not a vector atomic"), rule);
    }
    if !matches!(m.space, Space::Global | Space::Generic) {
        d.error(
            pc,
            inst,
            format!(
                "a vector atomic ({form}) on {} memory: vector atomics are for global memory only",
                m.space.name()
            ),
            rule,
        );
    }
    if !matches!(a.src, Operand::Reg(_)) || a.src2.is_some() {
        d.error(
            pc,
            inst,
            format!("a vector atomic ({form}) takes one operand vector, in registers"),
            rules::VECTOR_REGISTERS,
        );
    }
}

fn check_table(d: &mut Diagnostics, dialect: Dialect, pc: u32, inst: &Inst, a: &AtomicInst) {
    let size = Size {
        ty: a.access.ty,
        ftz: a.ftz,
        format_sign: a.access.addr.surface().is_some_and(|s| s.format_sign),
    };
    let op_name = |op: AtomicOp| match dialect {
        Dialect::Ptx => op.name().to_string(),
        Dialect::Sass | Dialect::Visa => op.name().to_ascii_uppercase(),
    };
    // SASS `SURED` is `SUATOM` without a destination: the table is SUATOM's, the name its own.
    let table_name = |t: &AtomicTable| {
        if dialect == Dialect::Sass && t.mnemonic == "SUATOM" && a.dst.is_rz() {
            "SURED".to_string()
        } else {
            t.mnemonic.to_string()
        }
    };
    let form = format!(
        "{}.{}{}",
        table_for(dialect, &a.access).map_or_else(|| mnemonic(dialect, a.access.space), table_name),
        op_name(a.op),
        size.name_in(dialect)
    );
    if a.op == AtomicOp::PreDec {
        d.error(
            pc,
            inst,
            format!("{form}: the vISA pre-decrement atomic is not supported yet"),
            rules::PREDEC_PENDING,
        );
        return;
    }
    let Some(table) = table_for(dialect, &a.access) else {
        d.error(
            pc,
            inst,
            format!(
                "{form}: no atomic op×size table for {dialect:?} {} memory",
                a.access.space.name()
            ),
            rules::NO_TABLE,
        );
        return;
    };
    match table.row(a.op) {
        None => d.error(
            pc,
            inst,
            format!(
                "{form}: {} has no .{} operation",
                table_name(table),
                op_name(a.op)
            ),
            table.ops_rule,
        ),
        Some(row) if !row.sizes.contains(&size) => {
            let allowed: Vec<String> = row.sizes.iter().map(|s| s.name_in(dialect)).collect();
            d.error(
                pc,
                inst,
                format!(
                    "{form} is not in the op×size table: {}.{} supports only {}",
                    table_name(table),
                    op_name(a.op),
                    allowed.join(" ")
                ),
                row.rule,
            );
        }
        Some(_) => {}
    }
}

/// `src2` exactly for the three-operand ops; `.SPIN` only on shared-memory CAST.
fn check_shape(d: &mut Diagnostics, pc: u32, inst: &Inst, a: &AtomicInst) {
    let needs_src2 = a.op.has_swap_operand();
    let op = a.op.name().to_ascii_uppercase();
    match (needs_src2, a.src2.is_some()) {
        (true, false) => d.error(
            pc,
            inst,
            format!("atomic .{op} needs a second operand (the swap value Rc)"),
            rules::SRC2_SHAPE,
        ),
        (false, true) => d.error(
            pc,
            inst,
            format!(
                "atomic .{op} takes no second operand (Rc exists only for CAS, CAST and FCMPWR)"
            ),
            rules::ATOMS_RC_ONLY_CAS,
        ),
        (true, true) | (false, false) => {}
    }
    if a.spin && a.op != AtomicOp::Cast {
        d.error(
            pc,
            inst,
            format!(".SPIN is only valid on CAST, not on .{op}"),
            rules::ATOMS_SPIN,
        );
    }
    if a.spin && !matches!(a.access.space, Space::Shared | Space::Generic) {
        d.error(
            pc,
            inst,
            format!(
                ".SPIN groups lanes by shared-memory bank; it is invalid on {} memory",
                a.access.space.name()
            ),
            rules::SPIN_SHARED,
        );
    }
}

/// SASS atomics take register operands; `ATOMS.CAS/.CAST` pair Rb and Rc.
fn check_sass_registers(d: &mut Diagnostics, pc: u32, inst: &Inst, a: &AtomicInst, paired: bool) {
    let register_rule = match a.access.space {
        Space::Shared => rules::ATOMS_RB_REGISTER,
        Space::Global | Space::Generic | Space::Const => rules::ATOMG_REGISTERS,
    };
    // `ATOMS.POPC.INC.32 RZ, [a]` has no Rb: it lowers to an add of the immediate 1.
    let popc_inc = a.access.space == Space::Shared
        && a.op == AtomicOp::Add
        && a.dst.is_rz()
        && a.src == Operand::Imm(1);
    let rb = match a.src {
        Operand::Reg(r) => Some(r),
        Operand::Imm(_) if popc_inc => None,
        Operand::Imm(_) | Operand::Const { .. } => {
            d.error(
                pc,
                inst,
                "the atomic operand Rb must be a register".to_string(),
                register_rule,
            );
            None
        }
    };
    let rc = match a.src2 {
        Some(Operand::Reg(r)) => Some(r),
        Some(Operand::Imm(_) | Operand::Const { .. }) => {
            d.error(
                pc,
                inst,
                "the atomic operand Rc must be a register".to_string(),
                register_rule,
            );
            None
        }
        None => None,
    };
    let is_cas = matches!(a.op, AtomicOp::Cas | AtomicOp::Cast);
    // `ATOMS.CAS.128` (sm_90) names its quads freely, like every sm_90 `ATOMS.CAS`.
    if !(is_cas && a.access.space == Space::Shared && paired && a.access.ty != Ty::B128) {
        // ATOMG.CAS takes independent compare and swap registers; only the pair alignment of
        // 64-bit values applies (checked for every instruction in `operands`).
        return;
    }
    let (Some(rb), Some(_)) = (rb, a.src2) else {
        return;
    };
    let wide = a.access.ty.regs() == 2;
    let (align, step, size) = if wide { (4, 2, ".64") } else { (2, 1, ".32") };
    let op = a.op.name().to_ascii_uppercase();
    if rb.is_rz() {
        d.error(
            pc,
            inst,
            format!("ATOMS.{op}{size}: Rb cannot be RZ"),
            rules::ATOMS_CAS_REGS,
        );
        return;
    }
    if rb.0 % align != 0 {
        d.error(
            pc,
            inst,
            format!(
                "ATOMS.{op}{size}: Rb is R{}, but must be a multiple of {align} (R{align}n+0)",
                rb.0
            ),
            rules::ATOMS_CAS_REGS,
        );
    }
    if let Some(rc) = rc {
        let expected = u32::from(rb.0) + step;
        if !rc.is_rz() && u32::from(rc.0) != expected {
            d.error(
                pc,
                inst,
                format!(
                    "ATOMS.{op}{size}: Rc is R{}, but must be R{expected} (Rb+{step}) or RZ",
                    rc.0
                ),
                rules::ATOMS_CAS_REGS,
            );
        }
    }
}

/// The Imm24 field of `ATOMS` (`atomic == true`) and of `LDS`/`STS` (the range only).
pub fn check_imm24(d: &mut Diagnostics, pc: u32, inst: &Inst, addr: &Address, atomic: bool) {
    let (u24_rule, s24_rule) = if atomic {
        (rules::ATOMS_IMM_U24, rules::ATOMS_IMM_S24)
    } else {
        (rules::LDS_STS_IMM_U24, rules::LDS_STS_IMM_S24)
    };
    let (off, absolute) = match addr {
        Address::Linear(addr) => (addr.offset, addr.is_absolute()),
        Address::Indexed(x) => (x.offset, false),
        // A surface access is global (`surfaces::check_address`): no window immediate.
        Address::Surface(_) => return,
    };
    if absolute {
        if !(0..=IMM_U24_MAX).contains(&off) {
            d.error(
                pc,
                inst,
                format!("absolute shared address {} does not fit the 24-bit unsigned immediate (0..=0xffffff)", fmt_offset(off)),
                u24_rule,
            );
        }
    } else if !(IMM_S24_MIN..=IMM_S24_MAX).contains(&off) {
        d.error(
            pc,
            inst,
            format!(
                "offset {} does not fit the 24-bit signed immediate (-0x800000..=0x7fffff)",
                fmt_offset(off)
            ),
            s24_rule,
        );
    }
    if atomic && off & 3 != 0 {
        d.error(
            pc,
            inst,
            format!(
                "the immediate offset {} has non-zero low 2 bits",
                fmt_offset(off)
            ),
            rules::ATOMS_IMM_LOW_BITS,
        );
    }
}
