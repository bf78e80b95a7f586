//! The rules the validator enforces, each as the text a [`super::ValidationError`] carries in
//! its `rule` field: a sentence quoted verbatim from a reference document, prefixed by the
//! document's file name (`000_6d05a8552870c0ae.txt: "..."`).
//!
//! Where no reference document states a rule (launch limits, the IR's own invariants), the text
//! names its real source instead: issue 2 (the user-facing contract), the IR contract in
//! `src/ir/`, or a CUDA launch limit. Keeping every rule here makes the quotes easy to audit
//! against the documents; `tests::quotes_are_verbatim` checks the document quotes.

/// Quotes `$s` from the SASS `ATOMS` document.
macro_rules! atoms_doc {
    ($s:literal) => {
        concat!("000_6d05a8552870c0ae.txt: \"", $s, "\"")
    };
}

/// Quotes `$s` from the PTX atomics ABI document.
macro_rules! ptx_abi_doc {
    ($s:literal) => {
        concat!("001_e732919ae3db9bea.txt: \"", $s, "\"")
    };
}

/// Quotes `$s` from the IR contract (for invariants no vendor document states).
macro_rules! ir_contract {
    ($file:literal, $s:literal) => {
        concat!("IR contract ", $file, ": \"", $s, "\"")
    };
}

// ---- SASS ATOMS (000) ------------------------------------------------------------------------

/// The op list of `ATOMS.op` (CAS and CAST have their own forms).
pub const ATOMS_OPS: &str = atoms_doc!(
    ".op: { .ADD, .MIN, .MAX, .INC, .DEC, .AND, .OR, .XOR, .EXCH} Operation .sz: { .U32*, .S32, .U64 } Typed bit size of memory and Rd"
);
pub const ATOMS_ROW_ADD: &str = atoms_doc!(".ADD .U32 .S32 Rd = M; M = M + Rb;");
pub const ATOMS_ROW_MIN: &str = atoms_doc!(".MIN .U32 .S32 Rd = M; M = min(M, Rb);");
pub const ATOMS_ROW_MAX: &str = atoms_doc!(".MAX .U32 .S32 Rd = M; M = max(M, Rb);");
pub const ATOMS_ROW_INC: &str = atoms_doc!(".INC .U32 Rd = M; M = (M >= Rb) ? 0 : (M + 1);");
pub const ATOMS_ROW_DEC: &str = atoms_doc!(".DEC .U32 Rd = M; M = (M == 0 || M > Rb)? Rb : M - 1;");
pub const ATOMS_ROW_AND: &str = atoms_doc!(".AND .U32 .S32 Rd = M; M = M & Rb;");
pub const ATOMS_ROW_OR: &str = atoms_doc!(".OR .U32 .S32 Rd = M; M = M | Rb;");
pub const ATOMS_ROW_XOR: &str = atoms_doc!(".XOR .U32 .S32 Rd = M; M = M ^ Rb;");
pub const ATOMS_ROW_EXCH: &str = atoms_doc!(".EXCH .U32 .S32 .U64 Rd = M; M = Rb;");
pub const ATOMS_ROW_CAS: &str = atoms_doc!(".CAS .U32 .S32 .U64 Rd = M; if (M == Rb) M = Rc;");
pub const ATOMS_ROW_CAST: &str =
    atoms_doc!(".CAST .U32 .S32 .U64 if (M == Rb) { M = Rc; Rd = 1; } else { Rd = 0 }");

/// `.SPIN` exists only on the CAST form.
pub const ATOMS_SPIN: &str = atoms_doc!(
    "One thread from each group is selected to do its ATOMS.CAST (compare & store); all other threads from that bank will immediately \"fail\""
);
/// The immediate's encoding restriction.
pub const ATOMS_IMM_LOW_BITS: &str =
    atoms_doc!("The low 2 bits of the ImmS24 or ImmU24 must always be zero.");
/// The `[ImmU24]` form.
pub const ATOMS_IMM_U24: &str =
    atoms_doc!("When Ra is RZ (or not specified), then the Imm24 is zero-extended to 32 bits.");
/// The `[Ra + ImmS24]` form.
pub const ATOMS_IMM_S24: &str = atoms_doc!(
    "When Ra is other than RZ, then the Imm24 is sign-extended to 32 bits, and added to Ra."
);
/// `LDS`/`STS` share the window addressing and the Imm24 field of `ATOMS`.
pub const LDS_STS_IMM_U24: &str = concat!(
    "the LDS/STS analogue of ",
    atoms_doc!(
        "ATOMS uses window-specific addressing, like LDS and STS. ... When Ra is RZ (or not specified), then the Imm24 is zero-extended to 32 bits."
    )
);
pub const LDS_STS_IMM_S24: &str = concat!(
    "the LDS/STS analogue of ",
    atoms_doc!(
        "ATOMS uses window-specific addressing, like LDS and STS. ... When Ra is other than RZ, then the Imm24 is sign-extended to 32 bits, and added to Ra."
    )
);
/// Ra of a shared-window address is one 32-bit register.
pub const SHARED_BASE_32: &str = atoms_doc!(
    "The byte address is computed as the 32-bit addition of register Ra plus the immediate offset Imm24."
);
/// The CAS/CAST register pairing.
pub const ATOMS_CAS_REGS: &str = atoms_doc!(
    "in ATOMS.CAS/.CAST.32, Rb must be R2n+0(even register) and cannot be RZ, and Rc must be Rb+1 or RZ. Similarly, for ATOMS.CAS/.CAST.64, Rb must be R4n+0 (and cannot be RZ) and Rc must be Rb+2 or RZ."
);
/// Rc exists only for CAS/CAST.
pub const ATOMS_RC_ONLY_CAS: &str = atoms_doc!(
    "ATOMS.CAS performs an atomic compare-and-swap operation on shared memory. It requires one or more extra register(s) for the compare value, which are provided as Rc."
);
/// The operand syntax: Rb is a register.
pub const ATOMS_RB_REGISTER: &str = atoms_doc!("Rd, [Ra + ImmS24], Rb");
/// Register pairs are naturally aligned (atomjit applies this to every 64-bit pair in SASS).
pub const SASS_PAIR_ALIGNED: &str = concat!(
    atoms_doc!("{Rb,Rc} are expected to be consecutive registers, naturally aligned based on .sz."),
    " (applied to every 64-bit register pair of a SASS kernel)"
);
/// 128-bit operands (`LDG.E.128`, `ATOMG.E.CAS.128`) are register quads, aligned as pairs are.
pub const SASS_QUAD_ALIGNED: &str = concat!(
    atoms_doc!("{Rb,Rc} are expected to be consecutive registers, naturally aligned based on .sz."),
    " (applied to every 128-bit register quad of a SASS kernel: ptxas 12.9 writes `LDG.E.128 R16, [R4.64]` and `ATOMG.E.CAS.128.STRONG.GPU PT, R20, [R18], R8, R12`)"
);
/// The shared window bound.
pub const SHARED_WINDOW: &str =
    atoms_doc!("The address must be within the 16 MB shared memory window.");

// ---- SASS global atomics (issue 2, by analogy with 000 and 004) -----------------------------

/// `ATOMG`/`RED` sizes are not in a reference document; issue 2 lists them, and the sizes it
/// leaves open (INC, DEC, AND, OR, XOR, EXCH, CAS) follow the `ATOMS` (000) and `SUATOM` (004)
/// tables.
pub const ATOMG_ROW_ADD: &str =
    "issue 2 (SASS global atomics): \"RED.E.<op>.STRONG.<scope> ... with ADD (U32 S32 U64 F32.FTZ.RN F64.RN)\"; issue 10: ptxas 12.9 also emits ADD.F16x2.RN and ADD.BF16x2.RN (atomicAdd on __half2/__nv_bfloat162)";
pub const ATOMG_ROW_MINMAX: &str =
    "issue 2 (SASS global atomics): \"RED.E.<op>.STRONG.<scope> ... MIN/MAX (U32 S32 U64 S64)\"";
pub const ATOMG_ROW_INC: &str = concat!(
    "issue 2 (SASS global atomics) lists INC without sizes; as in ",
    atoms_doc!(".INC .U32 Rd = M; M = (M >= Rb) ? 0 : (M + 1);")
);
pub const ATOMG_ROW_DEC: &str = concat!(
    "issue 2 (SASS global atomics) lists DEC without sizes; as in ",
    atoms_doc!(".DEC .U32 Rd = M; M = (M == 0 || M > Rb)? Rb : M - 1;")
);
pub const ATOMG_ROW_BITWISE: &str = "issue 2 (SASS global atomics) lists AND, OR, XOR without sizes; as in 004_16d4664d52412e92.txt: \".AND .U32 .S32 .SD32 .U64 Rd = M; M = M & Rb;\"";
pub const ATOMG_ROW_EXCH: &str = concat!(
    "issue 2 (SASS global atomics) lists EXCH without sizes; as in ",
    atoms_doc!(".EXCH .U32 .S32 .U64 Rd = M; M = Rb;")
);
pub const ATOMG_ROW_CAS: &str = "issue 2 (SASS global atomics): \"ATOMG.E.CAS (32/64)\"";
pub const ATOMG_OPS: &str = "issue 2 (SASS global atomics): \"ATOMG.E.<op>.STRONG.<GPU|SYS|CTA>\", \"ATOMG.E.CAS (32/64)\", \"RED.E.<op>.STRONG.<scope>\" with ADD, MIN/MAX, INC, DEC, AND, OR, XOR, EXCH";
/// Global atomics take register operands.
pub const ATOMG_REGISTERS: &str =
    "issue 2 (SASS global atomics): \"ATOMG.E.ADD.STRONG.GPU PT, R0, [R2.64+0x10], R5 ;\"";

// ---- SASS surface instructions (004) ----------------------------------------------------------

/// Quotes `$s` from the SASS `SUATOM` document.
macro_rules! suatom_doc {
    ($s:literal) => {
        concat!("004_16d4664d52412e92.txt: \"", $s, "\"")
    };
}

/// The op list of `SUATOM.op` (CAS has its own forms).
pub const SUATOM_OPS: &str =
    suatom_doc!(".op {.ADD, .MIN, .MAX, .INC, .DEC, .AND, .OR, .XOR, .EXCH}");
/// The `.F16x2.FTZ.RN` spelling of the document's size list, beside its table's `.F16x2.RN`.
macro_rules! with_f16x2_ftz {
    ($row:literal) => {
        concat!(
            suatom_doc!($row),
            ", ",
            suatom_doc!(".sz {.U32*, .S32, .U64, .S64, .F32.FTZ.RN, .F16x2.FTZ.RN, .SD32, .SD64}")
        )
    };
}
pub const SUATOM_ROW_ADD: &str =
    with_f16x2_ftz!(".ADD .U32 .S32 .SD32 .U64 .F32.FTZ.RN .F16x2.RN Rd = M; M = M + Rb;");
pub const SUATOM_ROW_MIN: &str =
    with_f16x2_ftz!(".MIN .U32 .S32 .SD32 .U64 .S64 .SD64 .F16x2.RN Rd = M; M = min(M, Rb);");
pub const SUATOM_ROW_MAX: &str =
    with_f16x2_ftz!(".MAX .U32 .S32 .SD32 .U64 .S64 .SD64 .F16x2.RN Rd = M; M = max(M, Rb);");
pub const SUATOM_ROW_INC: &str = suatom_doc!(".INC .U32 Rd = M; M = (M >= Rb)? 0 : (M + 1);");
pub const SUATOM_ROW_DEC: &str =
    suatom_doc!(".DEC .U32 Rd = M; M = (M == 0 || M > Rb)? Rb : M - 1;");
pub const SUATOM_ROW_AND: &str = suatom_doc!(".AND .U32 .S32 .SD32 .U64 Rd = M; M = M & Rb;");
pub const SUATOM_ROW_OR: &str = suatom_doc!(".OR .U32 .S32 .SD32 .U64 Rd = M; M = M | Rb;");
pub const SUATOM_ROW_XOR: &str = suatom_doc!(".XOR .U32 .S32 .SD32 .U64 Rd = M; M = M ^ Rb;");
pub const SUATOM_ROW_EXCH: &str = suatom_doc!(".EXCH .U32 .S32 .U64 Rd = M; M = Rb;");
pub const SUATOM_ROW_CAS: &str =
    suatom_doc!(".CAS .U32 .S32 .U64 Rd = M; if (M == Rb) M = Rb+(1or2);");
/// CAS's compare and swap values in one register vector.
pub const SUATOM_CAS_VECTOR: &str = concat!(
    suatom_doc!(
        "In case of .CAS, Rb contains both compare and swap values as a vec2 (for .sz 32) or vec4 (for .sz 64)."
    ),
    " (a vector starts at a multiple of its length, as register pairs and quads do)"
);
/// The sparse predicate with an immediate handle.
pub const SUATOM_SPARSE_IMMEDIATE: &str = suatom_doc!(
    "Note that #tsPtrIdxU13 variant with sparse predicate is not offered for .op != CAS."
);
/// The immediate handle is a 13-bit word index.
pub const SURFACE_TS_PTR_IDX: &str = suatom_doc!(
    "#tsPtrIdxU13 This immediate index (word address) is used to fetch the packed header+sampler pointer entry from constant cache."
);
/// `.SD32`/`.SD64` exist on atomics only, as the signed-by-format 32- and 64-bit sizes.
pub const SURFACE_FORMAT_SIGN: &str = concat!(
    suatom_doc!(".sz {.U32*, .S32, .U64, .S64, .F32.FTZ.RN, .F16x2.FTZ.RN, .SD32, .SD64}"),
    " (SUATOM's sizes; atomjit reads .SD32/.SD64 as 32/64 bits, signed when the surface's elements are: docs/surfaces.md)"
);
/// A surface access lands in global memory.
pub const SURFACE_GLOBAL: &str = suatom_doc!(
    "SUATOM performs an atomic operation on pitch or blocklinear surfaces in global memory."
);
/// A surface access moves one element of the surface's format.
pub const SURFACE_ONE_ELEMENT: &str = concat!(
    suatom_doc!(
        "This mode specifies that surface data is treated as raw data of size .sz, without any format conversion."
    ),
    " (atomjit: one element of the surface's format, of 1, 2, 4 or 8 bytes)"
);
/// The coordinate and handle registers.
pub const SURFACE_NOT_RZ: &str = suatom_doc!("Note: Ra/Rc cannot be RZ register.");
/// The coordinate registers' alignment.
pub const SURFACE_COORDS_ALIGNED: &str = concat!(
    suatom_doc!(
        "Ra must follow register alignment rules for given number of coordinates."
    ),
    " (as for register pairs and quads: 2 coordinates start at an even register, 3 at a multiple of 4)"
);

// ---- PTX atomics (the PTX ISA, not one of the reference documents) ------------------------

/// Quotes the PTX ISA's `atom`/`red` op×type table (Table 41 "Atom Scalar Type Operations" and
/// Table 42 "Red Scalar Type Operations", identical for scalar types except that `red` has no
/// `.exch`/`.cas`).
macro_rules! ptx_isa_table {
    ($s:literal) => {
        concat!(
            "PTX ISA, Table 41 \"Atom Scalar Type Operations\" (Table 42 for red): \"",
            $s,
            "\""
        )
    };
}

pub const PTX_ROW_ADD: &str = ptx_isa_table!(
    ".u32 .add ... .s32 .add ... .u64 .add ... .f32 .add{.noftz} ... .f64 .add (noftz by default) ... .f16 .f16x2 .bf16 .bf16x2 .add (requires .noftz)"
);
/// On shared memory `atom.add.f32` never flushes.
pub const PTX_ROW_ADD_SHARED: &str = concat!(
    "PTX ISA, atom: \"The atom.add.f32 operation without .noftz, flushes subnormal inputs and results to sign-preserving zero on global memory but supports subnormal inputs and results and doesn't flush them to zero on shared memory.\"; ",
    ptx_isa_table!(".u32 .add ... .s32 .add ... .u64 .add ... .f32 .add{.noftz} ... .f64 .add ... .f16 .f16x2 .bf16 .bf16x2 .add (requires .noftz)")
);
pub const PTX_ROW_MINMAX: &str =
    ptx_isa_table!(".u32 .min, .max ... .s32 .min, .max ... .u64 .min, .max ... .s64 .min, .max");
pub const PTX_ROW_INC_DEC: &str = concat!(
    ptx_isa_table!(".u32 .add, .inc, .dec, .min, .max"),
    "; \".inc and .dec are only supported for .u32 type.\""
);
pub const PTX_ROW_BITWISE: &str =
    ptx_isa_table!(".b32 .and, .or, .xor, .exch, .cas ... .b64 .and, .or, .xor, .exch, .cas");
pub const PTX_ROW_EXCH: &str = ptx_isa_table!(
    ".b32 .and, .or, .xor, .exch, .cas ... .b64 .and, .or, .xor, .exch, .cas ... .b128 .exch, .cas"
);
pub const PTX_ROW_CAS: &str = ptx_isa_table!(
    ".b16 .cas ... .b32 .and, .or, .xor, .exch, .cas ... .b64 .and, .or, .xor, .exch, .cas ... .b128 .exch, .cas"
);
/// The vector atomics of the PTX ISA (PTX ISA 8.1+, sm_90), as ptxas 12.9 accepts them.
pub const PTX_VECTOR_ATOMICS: &str = "PTX ISA, atom/red with vector type: \"atom{.sem}{.scope}{.global}.add{.level::cache_hint}.vec_32_bit.f32 ... atom{.sem}{.scope}{.global}.op.noftz{.level::cache_hint}.vec_16_bit.half_word_type ... atom{.sem}{.scope}{.global}.op.noftz{.level::cache_hint}.vec_32_bit.packed_type ... .op = { .add, .min, .max }; .half_word_type = { .f16, .bf16 }; .packed_type = { .f16x2, .bf16x2 }; .vec_16_bit = { .v2, .v4, .v8 } .vec_32_bit = { .v2, .v4 };\"; \"atom with vector type may be used only with .global space and with generic addressing where the address points to .global space.\"";
/// The vector atomics ptxas 12.9 writes for sm_90.
pub const SASS_VECTOR_ATOMICS: &str = "ptxas 12.9 for sm_90 writes the PTX vector atomics as ATOMG/REDG/ATOM/RED with .ADD.F32x2.FTZ.RN and .ADD.F32x4.FTZ.RN (float2/float4 atomicAdd), and .ADD/.MIN/.MAX on .F16x2 .F16x4 .F16x8 .BF16x2 .BF16x4 .BF16x8 (.RN), each element its own atomic (PTX ISA: \"the atomicity is guaranteed separately for each of the individual scalar elements\")";
/// 128-bit atomics need the host's 16-byte compare-and-swap.
pub const HOST_CAS128: &str = "atomjit performs a 128-bit atomic as one host 16-byte compare-and-swap (x86-64 `cmpxchg16b`), which this host does not have";
pub const PTX_OPS: &str =
    "PTX ISA, atom: \".op = { .and, .or, .xor, .cas, .exch, .add, .inc, .dec, .min, .max }\"";

/// Quotes the vISA SVM_ATOMIC document.
macro_rules! svm_atomic_doc {
    ($s:literal) => {
        concat!("002_ac5e42ba09aa5f7e.txt: \"", $s, "\"")
    };
}
/// The operations of vISA `svm_atomic` (`fadd`/`fsub` belong to later platforms).
pub const VISA_SVM_OPS: &str = svm_atomic_doc!(
    "Bit[4..0]: encodes the atomic operation for this message - 0b00000: add ... 0b10010: fcmpwr"
);
/// The integer operations on 16-, 32- and 64-bit data.
pub const VISA_SVM_ROW_INT: &str = svm_atomic_doc!("{TGLLP+}Bit[6..5]: encodes the data width of the atomic operation - 0b00: 32-bit - 0b01: 16-bit - 0b10: 64-bit");
/// min/max (unsigned), imin/imax (signed), fmin/fmax (float).
pub const VISA_SVM_ROW_MINMAX: &str = svm_atomic_doc!(
    "IMIN, IMAX: type D, Q - FMAX, FMIN, FCMPWR: type F - Other operations: type UD. UQ"
);
/// fcmpwr compares floats.
pub const VISA_SVM_ROW_FCMPWR: &str = svm_atomic_doc!("FMAX, FMIN, FCMPWR: type F");

/// Quotes the PTX ISA's `sured` text.
macro_rules! ptx_sured_doc {
    ($s:literal) => {
        concat!("PTX ISA, sured: \"", $s, "\"")
    };
}
/// The operations of `sured` (ptxas 12.9 crashes on the others rather than refusing them).
pub const PTX_SURED_OPS: &str = ptx_sured_doc!(".op = { .add, .min, .max, .and, .or };");
pub const PTX_SURED_ROW_ADD: &str = concat!(
    ptx_sured_doc!("Operation add applies to .u32, .u64, and .s32 types"),
    "; sured.p.add.b32 is ptxas's SURED.D.ADD (U32)"
);
pub const PTX_SURED_ROW_MINMAX: &str = concat!(
    ptx_sured_doc!("min and max apply to .u32, .s32, .u64 and .s64 types ... For type .b32, the data is interpreted as .u32 or .s32 based on the surface sample format ... For type .b64, if the surface format contains UINT data, then .u64 is assumed; if the surface format contains SINT data, then .s64 is assumed."),
    "; ptxas writes sured.p min/max as .SD32/.SD64"
);
pub const PTX_SURED_ROW_BITWISE: &str = ptx_sured_doc!(
    "operations and and or apply to .b32 type. ... The instruction type .b64 is restricted to min and max operations."
);

// ---- PTX memory orders (001) -----------------------------------------------------------------

pub const LOAD_ORDER: &str = ptx_abi_doc!(
    "atomic_load(memory_order_seq_cst, thread_scope_<scope>) fence.sc.<scope>; ld.acquire.<scope>;"
);
pub const STORE_ORDER: &str = ptx_abi_doc!(
    "atomic_store(memory_order_seq_cst, thread_scope_<scope>) fence.sc.<scope>; st.relaxed.<scope>;"
);
pub const ATOMIC_ORDER_SEQ_CST: &str = ptx_abi_doc!(
    "atomic_<rmw op>(memory_order_seq_cst, thread_scope_<scope>) fence.sc.<scope>; atom.acquire.<scope>.<rmw op>;"
);
pub const ATOMIC_ORDER_WEAK: &str = ptx_abi_doc!(
    "atomic_<rmw op>(memory_order_relaxed, thread_scope_<scope>) atom.relaxed.<scope>.<rmw op>;"
);
pub const FENCE_ORDER: &str = ptx_abi_doc!(
    "The PTX ISA provides atomic memory operations and fences for acquire, release, acquire-release, and relaxed C++ memory ordering semantics."
);
pub const FENCE_FORMS: &str = concat!(
    ptx_abi_doc!("fence.sc.<scope>;"),
    ", \"fence.acq_rel.<scope>;\", \"fence.release.<scope>;\", \"fence.acquire.<scope>;\" (the only fences of the ABI)"
);
pub const VOLATILE_LOAD_STORE: &str = ir_contract!(
    "src/ir/ops.rs MemOrder::Volatile",
    "PTX `.volatile`: treated as relaxed at system scope."
);

// ---- Launch ----------------------------------------------------------------------------------

pub const BLOCK_LIMIT: &str =
    "issue 2 (program files): \".block 256 // threads per CTA: X[,Y[,Z]], up to 1024\"";
pub const DIMS_POSITIVE: &str =
    "issue 2 (program files): \".grid 64 // CTAs: X[,Y[,Z]]\" (every dimension is at least 1)";
pub const GRID_LIMIT: &str =
    "CUDA launch limits (compute capability 3.0 and later): grid x at most 2^31-1, grid y and z at most 65535";
pub const WARP_SIZE: &str = ir_contract!(
    "src/ir/mod.rs Kernel::warp_size",
    "Lanes per warp: 32 for SASS and PTX; 8, 16 or 32 for vISA."
);

// ---- IR contract -------------------------------------------------------------------------------

pub const EMPTY_KERNEL: &str = ir_contract!(
    "src/ir/mod.rs Kernel::insts",
    "Instructions; branch targets are indices into this vector. Execution starts at 0."
);
pub const BRANCH_TARGET: &str = EMPTY_KERNEL;
pub const WARP_SPLIT_REJOIN: &str = ir_contract!(
    "src/ir/mod.rs Op::WarpSplit",
    "Where the groups rejoin (an instruction index after this one)."
);
pub const FALL_OFF_END: &str = concat!(
    ir_contract!("src/ir/ops.rs Op::Exit", "The executing lanes finish."),
    " (a lane finishes only at EXIT: no path may run past the last instruction)"
);
pub const REG_RANGE: &str = ir_contract!(
    "src/ir/mod.rs Kernel::num_regs",
    "32-bit register slots per lane: one more than the highest register (or pair half) used."
);
pub const PRED_RANGE: &str = ir_contract!(
    "src/ir/mod.rs Kernel::num_preds",
    "Predicate registers per lane: one more than the highest predicate used (`PT` excluded)."
);
pub const CONST_OPERAND: &str = ir_contract!(
    "src/ir/mod.rs Operand::Const",
    "Validation guarantees that the bank exists, that `offset` is naturally aligned, and that the read lies inside the bank."
);
pub const SRC2_SHAPE: &str = ir_contract!(
    "src/ir/mod.rs AtomicInst::src2",
    "validation guarantees it is present exactly for those and for `FCmpWr`"
);
pub const SPIN_SHARED: &str = ir_contract!(
    "src/ir/mod.rs AtomicInst::spin",
    "`CAST.SPIN`: lanes are grouped by shared-memory bank (`(address / 4) mod 32`); shared or generic addresses only"
);
pub const CONST_READ_ONLY: &str = ir_contract!(
    "src/ir/ops.rs Space::Const",
    "The constant bank (read only)."
);
pub const ADDRESS_BASE_BITS: &str = ir_contract!(
    "src/ir/mod.rs Address::base_bits",
    "Width of the base register: 32 or 64."
);
pub const FTZ_FLOAT_ONLY: &str = ir_contract!(
    "src/ir/mod.rs Op::Binary",
    "`ftz` flushes subnormal float inputs and results to sign-preserving zero (float types only)."
);
pub const SRC_MODIFIERS: &str = ir_contract!(
    "src/ir/mod.rs Src",
    "`Neg` is two's-complement negation for integers and sign flip for floats, `Not` is bitwise complement, `Abs` absolute value (floats only)"
);
pub const INT_OPS: &str = ir_contract!(
    "src/ir/ops.rs BinOp/UnOp",
    "Integer ops wrap modulo 2^bits."
);
pub const FLOAT_TYPES: &str = "atomjit implements float arithmetic (add, sub, mul, div, min, max, neg, abs) in F32 and F64 only (IR contract src/ir/mod.rs Op::Binary: \"Float results are rounded to nearest even.\")";
pub const REDUX_TYPES: &str = ir_contract!(
    "src/ir/mod.rs Op::Redux",
    "`op` is one of `Add` (wrapping), `Min`, `Max` (compared in `ty`, `U32` or `S32`), `And`, `Or`, `Xor`."
);
pub const MATCH_TYPES: &str = ir_contract!(
    "src/ir/mod.rs Op::Match",
    "Warp match over the executing lanes (SASS `MATCH`, PTX `match.sync`) on the `ty.bits()` bit value `src` (`B32` or `B64`)."
);
pub const BFE_TYPES: &str = ir_contract!(
    "src/ir/mod.rs Op::Bfe",
    "Bit-field extract (PTX `bfe`), in `ty` (`U32`, `S32`, `U64`, `S64`)"
);
pub const BFI_TYPES: &str = ir_contract!(
    "src/ir/mod.rs Op::Bfi",
    "Bit-field insert (PTX `bfi`), in `ty` (`B32` or `B64`)"
);
pub const FMA_TYPES: &str = ir_contract!(
    "src/ir/mod.rs Op::Fma",
    "Fused multiply-add `dst = a * b + c` in the float type `ty` (`F16x2`, `BF16x2` per element, `F16`, `BF16`, `F32`, `F64`)"
);
pub const FMA_FTZ: &str = ir_contract!(
    "src/ir/mod.rs Op::Fma",
    "`ftz` flushes subnormal inputs and result to sign-preserving zero (F32 only)."
);
pub const FMA_HALVES: &str = ir_contract!(
    "src/ir/mod.rs Op::Fma",
    "a selector other than [`HalfSel::H1H0`] is only valid on `F16x2` and `BF16x2`."
);
pub const PACKED_MIN_MAX: &str = ir_contract!(
    "src/ir/mod.rs Op::PackedMinMax",
    "each half compared as `ty` (`U16` or `S16`)."
);
pub const PACKED_MIN_MAX_MODIFIERS: &str = ir_contract!(
    "src/ir/mod.rs Op::PackedMinMax",
    "The sources take no modifier."
);
pub const SETP_CHAIN_INT: &str = ir_contract!(
    "src/ir/mod.rs Op::SetP",
    "With `chain` (SASS `ISETP.EX`, integer types only)"
);
pub const PACK_HALVES: &str = ir_contract!(
    "src/ir/mod.rs Op::PackHalves",
    "`F32` to the half format of `ty` (`F16x2` or `BF16x2`)."
);
pub const IS_SPACE: &str = ir_contract!(
    "src/ir/mod.rs Op::IsSpace",
    "`space` is [`Space::Shared`] or [`Space::Global`]."
);
pub const MUL_WIDE: &str = ir_contract!(
    "src/ir/ops.rs BinOp::MulWide",
    "Double-width product: the destination is twice the type's width (a pair for 32-bit)."
);
pub const SHF_TYPES: &str = ir_contract!(
    "src/ir/mod.rs ShfInst",
    "For 32-bit types the shift amount is clamped to 32 (SASS `SHF` clamps unless `.W` wraps it mod 32); for 64-bit types it is masked to 0..=63."
);
pub const LEA_SHIFT: &str = ir_contract!("src/ir/mod.rs Op::Lea", "`shift` is 0..=31.");
pub const FLOAT_COMPARE: &str = ir_contract!(
    "src/ir/ops.rs CmpOp",
    "The `*u` forms are the float unordered comparisons (true if either input is NaN)."
);
pub const CONVERT: &str = ir_contract!(
    "src/ir/mod.rs Op::Convert",
    "Integer to integer conversions truncate or extend by the source signedness. Integer to float and float to float round by `round`."
);
pub const BARRIER_IDS: &str =
    "NVIDIA named barriers: BAR.SYNC and PTX bar.sync take a barrier id 0..15 (16 barriers per CTA)";
pub const PREDEC_PENDING: &str = ir_contract!(
    "src/ir/ops.rs AtomicOp::PreDec",
    "Its exact formula is fixed together with the vISA dialect; until then validation rejects it."
);
pub const VECTOR_SHAPE: &str = ir_contract!(
    "src/ir/access.rs MemAccess",
    "Validation allows 1, 2, 4 or 8 elements of at most 16 bytes in all, never of [`Ty::B128`]."
);
pub const VECTOR_REGISTERS: &str = ir_contract!(
    "src/ir/mod.rs Op::Store",
    "a vector access stores each element from its registers (`src` is then a register: validation)"
);
pub const B128_ATOMICS_ONLY: &str = ir_contract!(
    "src/ir/types.rs Ty::B128",
    "Only the 128-bit atomics take it (`Exch` and `Cas`: SASS `ATOMG.E.CAS.128`, PTX `atom.cas.b128`), each one indivisible 16-byte host atomic; validation rejects it everywhere else."
);
pub const NO_TABLE: &str = "atomjit has no op×size table for this dialect and space yet (tables are added with their dialect's front-end); the op cannot be checked, so it is rejected";

/// Every rule text above, for audits (`tests::quotes` checks each quoted sentence).
pub const ALL: &[&str] = &[
    ATOMS_OPS,
    ATOMS_ROW_ADD,
    ATOMS_ROW_MIN,
    ATOMS_ROW_MAX,
    ATOMS_ROW_INC,
    ATOMS_ROW_DEC,
    ATOMS_ROW_AND,
    ATOMS_ROW_OR,
    ATOMS_ROW_XOR,
    ATOMS_ROW_EXCH,
    ATOMS_ROW_CAS,
    ATOMS_ROW_CAST,
    ATOMS_SPIN,
    ATOMS_IMM_LOW_BITS,
    ATOMS_IMM_U24,
    ATOMS_IMM_S24,
    LDS_STS_IMM_U24,
    LDS_STS_IMM_S24,
    SHARED_BASE_32,
    ATOMS_CAS_REGS,
    ATOMS_RC_ONLY_CAS,
    ATOMS_RB_REGISTER,
    SASS_PAIR_ALIGNED,
    SASS_QUAD_ALIGNED,
    SHARED_WINDOW,
    ATOMG_ROW_ADD,
    ATOMG_ROW_MINMAX,
    ATOMG_ROW_INC,
    ATOMG_ROW_DEC,
    ATOMG_ROW_BITWISE,
    ATOMG_ROW_EXCH,
    ATOMG_ROW_CAS,
    ATOMG_OPS,
    ATOMG_REGISTERS,
    PTX_ROW_ADD,
    PTX_ROW_ADD_SHARED,
    PTX_ROW_MINMAX,
    PTX_ROW_INC_DEC,
    PTX_ROW_BITWISE,
    PTX_ROW_EXCH,
    PTX_ROW_CAS,
    PTX_OPS,
    PTX_SURED_OPS,
    PTX_SURED_ROW_ADD,
    PTX_SURED_ROW_MINMAX,
    VISA_SVM_OPS,
    VISA_SVM_ROW_INT,
    VISA_SVM_ROW_MINMAX,
    VISA_SVM_ROW_FCMPWR,
    PTX_SURED_ROW_BITWISE,
    PTX_VECTOR_ATOMICS,
    SASS_VECTOR_ATOMICS,
    HOST_CAS128,
    LOAD_ORDER,
    STORE_ORDER,
    ATOMIC_ORDER_SEQ_CST,
    ATOMIC_ORDER_WEAK,
    FENCE_ORDER,
    FENCE_FORMS,
    VOLATILE_LOAD_STORE,
    BLOCK_LIMIT,
    DIMS_POSITIVE,
    GRID_LIMIT,
    WARP_SIZE,
    EMPTY_KERNEL,
    BRANCH_TARGET,
    WARP_SPLIT_REJOIN,
    FALL_OFF_END,
    REG_RANGE,
    PRED_RANGE,
    CONST_OPERAND,
    SRC2_SHAPE,
    SPIN_SHARED,
    CONST_READ_ONLY,
    ADDRESS_BASE_BITS,
    FTZ_FLOAT_ONLY,
    SRC_MODIFIERS,
    INT_OPS,
    FLOAT_TYPES,
    MUL_WIDE,
    SHF_TYPES,
    LEA_SHIFT,
    FLOAT_COMPARE,
    CONVERT,
    BARRIER_IDS,
    PREDEC_PENDING,
    VECTOR_SHAPE,
    VECTOR_REGISTERS,
    B128_ATOMICS_ONLY,
    NO_TABLE,
    SUATOM_OPS,
    SUATOM_ROW_ADD,
    SUATOM_ROW_MIN,
    SUATOM_ROW_MAX,
    SUATOM_ROW_INC,
    SUATOM_ROW_DEC,
    SUATOM_ROW_AND,
    SUATOM_ROW_OR,
    SUATOM_ROW_XOR,
    SUATOM_ROW_EXCH,
    SUATOM_ROW_CAS,
    SUATOM_CAS_VECTOR,
    SUATOM_SPARSE_IMMEDIATE,
    SURFACE_TS_PTR_IDX,
    SURFACE_FORMAT_SIGN,
    SURFACE_GLOBAL,
    SURFACE_ONE_ELEMENT,
    SURFACE_NOT_RZ,
    SURFACE_COORDS_ALIGNED,
];
