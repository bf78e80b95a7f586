//! The vISA name tables: predefined variables, type and alignment names, execution masks,
//! fence options, and the operand signatures of the instructions the parser knows.
//!
//! Facts from IGC's sources and the vISA documentation (`documentation/visa/` in
//! intel-graphics-compiler), restated: the predefined variables and their types and element
//! counts follow `visa/PreDefinedVars.cpp` (the vISA 3.4+ numbering V0..V19 that IGC 1.0.12504
//! dumps, plus `%msg0`, V20, which that table predates: three dwords, as IGC's finalizer
//! declares it); signatures follow the instruction rules of `visa/CISA.y`.

use super::ast::{ElemType, FenceScope, LabelKind, Predefined};

/// A predefined general variable: its `%` name, type and element count.
pub(crate) struct PredefinedVar {
    pub name: &'static str,
    pub which: Predefined,
    pub ty: ElemType,
    pub num_elts: u32,
}

const fn pv(name: &'static str, which: Predefined, ty: ElemType, num_elts: u32) -> PredefinedVar {
    PredefinedVar {
        name,
        which,
        ty,
        num_elts,
    }
}

/// The predefined general variables in their `Vn` order (`%null` is V0, `%msg0` V20).
/// `%local_id_x`-style names of older vISA versions are not among them: GenX_IR 1.0.12504
/// rejects them in a `.version 4.1` text ("unbound identifier").
pub(crate) const PREDEFINED: [PredefinedVar; 21] = [
    pv("%null", Predefined::Null, ElemType::UD, 1),
    pv("%thread_x", Predefined::ThreadX, ElemType::UW, 1),
    pv("%thread_y", Predefined::ThreadY, ElemType::UW, 1),
    pv("%group_id_x", Predefined::GroupIdX, ElemType::UD, 1),
    pv("%group_id_y", Predefined::GroupIdY, ElemType::UD, 1),
    pv("%group_id_z", Predefined::GroupIdZ, ElemType::UD, 1),
    pv("%tsc", Predefined::Tsc, ElemType::UD, 5),
    pv("%r0", Predefined::R0, ElemType::UD, 8),
    pv("%arg", Predefined::Arg, ElemType::UD, 256),
    pv("%retval", Predefined::Retval, ElemType::UD, 96),
    pv("%sp", Predefined::Sp, ElemType::UQ, 1),
    pv("%fp", Predefined::Fp, ElemType::UQ, 1),
    pv("%hw_id", Predefined::HwId, ElemType::UD, 1),
    pv("%sr0", Predefined::Sr0, ElemType::UD, 4),
    pv("%cr0", Predefined::Cr0, ElemType::UD, 1),
    pv("%ce0", Predefined::Ce0, ElemType::UD, 1),
    pv("%dbg0", Predefined::Dbg0, ElemType::UD, 2),
    pv("%color", Predefined::Color, ElemType::UW, 1),
    pv(
        "%impl_arg_buf_ptr",
        Predefined::ImplArgBufPtr,
        ElemType::UQ,
        1,
    ),
    pv(
        "%local_id_buf_ptr",
        Predefined::LocalIdBufPtr,
        ElemType::UQ,
        1,
    ),
    pv("%msg0", Predefined::Msg0, ElemType::UD, 3),
];

/// The predefined surfaces T0..T5 by the names operands use (their `v_name`s in IGC's dumps).
pub(crate) const PREDEFINED_SURFACES: [&str; 6] = ["%slm", "T1", "T2", "TSS", "%bss", "%scratch"];

/// What a declaration's `type=` accepts, for error messages.
pub(crate) const DECL_TYPES: &str = "ud, d, uw, w, ub, b, uq, q, f, df, hf or bf";
/// What an immediate's `:type` accepts, for error messages.
pub(crate) const IMM_TYPES: &str = "ud, d, uw, w, ub, b, uq, q, f, df, hf, v, uv or vf";
/// The atomic operation names, for error messages.
pub(crate) const ATOMIC_OPS: &str = "add, sub, inc, dec, min, max, xchg, cmpxchg, and, or, xor, \
     minsint/imin, maxsint/imax, predec, fmax, fmin, fcmpwr";

/// A type name in lower case, or IGC's upper-case spelling.
pub(crate) fn type_by_name(name: &str) -> Option<ElemType> {
    let lower = name.to_ascii_lowercase();
    if name != lower && name != name.to_ascii_uppercase() && name != "Bool" {
        return None;
    }
    Some(match lower.as_str() {
        "ud" => ElemType::UD,
        "d" => ElemType::D,
        "uw" => ElemType::UW,
        "w" => ElemType::W,
        "ub" => ElemType::UB,
        "b" => ElemType::B,
        "uq" => ElemType::UQ,
        "q" => ElemType::Q,
        "f" => ElemType::F,
        "df" => ElemType::DF,
        "hf" => ElemType::HF,
        "bf" => ElemType::BF,
        "bool" => ElemType::Bool,
        "v" => ElemType::V,
        "uv" => ElemType::UV,
        "vf" => ElemType::VF,
        _ => return None,
    })
}

/// An `align=` name in bytes (a GRF is [`super::ast::GRF_BYTES`]).
pub(crate) fn align_bytes(name: &str) -> Option<u32> {
    Some(match name {
        "byte" => 1,
        "word" => 2,
        "dword" => 4,
        "qword" => 8,
        "oword" => 16,
        "GRF" | "hword" => 32,
        "GRFx2" | "2GRF" | "wordx32" | "32word" => 64,
        "wordx64" | "64word" => 128,
        _ => return None,
    })
}

/// An execution mask name: `(k, no_mask)` for `Mk`, `Mk_NM` and `NoMask` (= `M1_NM`).
pub(crate) fn emask(name: &str) -> Option<(u32, bool)> {
    if name == "NoMask" {
        return Some((1, true));
    }
    let rest = name.strip_prefix('M')?;
    let (digit, nm) = match rest.strip_suffix("_NM") {
        Some(d) => (d, true),
        None => (rest, false),
    };
    match digit {
        "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" => Some((digit.parse().ok()?, nm)),
        _ => None,
    }
}

/// A fence option group (`E`, `EL1`, `EISCR`...): letters E, I, S, C, R, then `L1`, each at
/// most once and in that order (IGC's lexer pattern), encoded as IGC's lexer does.
pub(crate) fn fence_flags(text: &str) -> Option<u8> {
    let mut flags = 0u8;
    let mut rest = text;
    for (letter, bit) in [("E", 0), ("I", 1), ("S", 2), ("C", 3), ("R", 4), ("L1", 6)] {
        if let Some(r) = rest.strip_prefix(letter) {
            flags |= 1 << bit;
            rest = r;
        }
    }
    (rest.is_empty() && !text.is_empty()).then_some(flags)
}

/// What an operand position takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// A destination vector operand: `V(r,c)<h>`, `r[A(i),o]<h>:t`, a predicate, `A(i)<w>`.
    Dst,
    /// A source vector operand: `V(r,c)<v;w,h>`, indirect, immediate, predicate, address,
    /// address-of.
    Src,
    /// A raw operand `V.off`.
    Raw,
    /// A label of the kind.
    Label(LabelKind),
}

/// How a role reads in an error message.
pub(crate) fn role_expectation(role: Role) -> String {
    match role {
        Role::Dst => "a destination operand such as `V(0,0)<1>`".to_string(),
        Role::Src => "a source operand such as `V(0,0)<1;1,0>` or `0x1:ud`".to_string(),
        Role::Raw => "a raw operand such as `V.0` or `%null.0`".to_string(),
        Role::Label(LabelKind::Block) => "a block label".to_string(),
        Role::Label(LabelKind::Subroutine) => "a subroutine label".to_string(),
    }
}

/// Which decoding an instruction's modifiers get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    /// Modifiers: at most `.sat` (when [`Signature::sat`]).
    Plain,
    /// A label operand; no modifiers.
    Branch,
    /// `.OP[.WIDTH]`.
    SvmAtomic,
    /// `.BLOCK_BYTES.NUM_BLOCKS`.
    SvmGatherScatter,
    /// `[.aligned|.unaligned] (OWORDS)`: no execution size.
    SvmBlock,
    /// `.REL`.
    Cmp,
    /// `[.OPTIONS]`.
    Fence(FenceScope),
}

/// An instruction's shape: operands, whether it has an execution size, may be predicated and
/// may saturate.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Signature {
    pub operands: &'static [Role],
    pub exec: bool,
    pub pred: bool,
    pub sat: bool,
    pub class: Class,
}

const D: Role = Role::Dst;
const S: Role = Role::Src;
const R: Role = Role::Raw;

const fn sig(operands: &'static [Role], pred: bool, sat: bool, class: Class) -> Signature {
    Signature {
        operands,
        exec: true,
        pred,
        sat,
        class,
    }
}

/// The signature of `mnemonic`, or `None` for an instruction read generically. The forms are
/// `visa/CISA.y`'s: unary, binary, ternary and quaternary ALU operations (`.sat`, predicable),
/// `addc`/`subb` (two destinations), `cmp` (no predicate; a predicate or general destination),
/// `setp`, `addr_add`, branches, `ret`, the SVM scattered and block accesses and the fences.
pub(crate) fn signature(mnemonic: &str) -> Option<Signature> {
    const UNARY: &[&str] = &[
        "mov", "not", "cbit", "fbh", "fbl", "bfrev", "inv", "log", "exp", "sqrt", "rsqrt", "sin",
        "cos", "sqrtm", "frc", "lzd", "rndd", "rndu", "rnde", "rndz", "asin", "acos", "atan",
    ];
    const BINARY: &[&str] = &[
        "add", "avg", "dp2", "dp3", "dp4", "dph", "line", "mul", "mulh", "sad2", "plane", "pow",
        "div", "mod", "divm", "and", "or", "xor", "shl", "shr", "asr", "rol", "ror", "sel", "min",
        "max",
    ];
    const TERNARY: &[&str] = &["mad", "lrp", "sad2add", "madw", "dp4a", "bfe"];
    let plain = Class::Plain;
    Some(match mnemonic {
        m if UNARY.contains(&m) => sig(&[D, S], true, true, plain),
        m if BINARY.contains(&m) => sig(&[D, S, S], true, true, plain),
        m if TERNARY.contains(&m) => sig(&[D, S, S, S], true, true, plain),
        "bfi" => sig(&[D, S, S, S, S], true, true, plain),
        "addc" | "subb" => sig(&[D, D, S, S], true, false, plain),
        "cmp" => sig(&[D, S, S], false, false, Class::Cmp),
        "setp" => sig(&[D, S], false, false, plain),
        "addr_add" => sig(&[D, S, S], false, false, plain),
        "goto" | "jmp" => sig(&[Role::Label(LabelKind::Block)], true, false, Class::Branch),
        "call" | "fccall" => sig(
            &[Role::Label(LabelKind::Subroutine)],
            true,
            false,
            Class::Branch,
        ),
        "ret" | "fret" => sig(&[], true, false, plain),
        "svm_atomic" | "SVM_ATOMIC" => sig(&[R, R, R, R], true, false, Class::SvmAtomic),
        "svm_gather" | "svm_scatter" => sig(&[R, R], true, false, Class::SvmGatherScatter),
        "svm_block_ld" | "svm_block_st" => Signature {
            operands: &[S, R],
            exec: false,
            pred: false,
            sat: false,
            class: Class::SvmBlock,
        },
        "fence_global" | "fence_local" | "fence_sw" => Signature {
            operands: &[],
            exec: false,
            pred: false,
            sat: false,
            class: Class::Fence(match mnemonic {
                "fence_global" => FenceScope::Global,
                "fence_local" => FenceScope::Local,
                _ => FenceScope::Sw,
            }),
        },
        "barrier" | "yield" | "sampler_cache_flush" => Signature {
            operands: &[],
            exec: false,
            pred: false,
            sat: false,
            class: plain,
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables() {
        assert_eq!(emask("M5_NM"), Some((5, true)));
        assert_eq!(emask("M8"), Some((8, false)));
        assert_eq!(emask("NoMask"), Some((1, true)));
        assert_eq!(emask("M9"), None);
        assert_eq!(emask("M0"), None);
        assert_eq!(fence_flags("E"), Some(1));
        assert_eq!(fence_flags("EL1"), Some(0x41));
        assert_eq!(fence_flags("EISCRL1"), Some(0x5f));
        assert_eq!(fence_flags("LE"), None);
        assert_eq!(fence_flags("EE"), None);
        assert_eq!(type_by_name("UD"), Some(ElemType::UD));
        assert_eq!(type_by_name("Ud"), None);
        assert_eq!(type_by_name("xx"), None);
        assert_eq!(align_bytes("wordx32"), Some(64));
        assert_eq!(PREDEFINED[7].name, "%r0");
        assert_eq!(PREDEFINED[20].name, "%msg0");
    }
}
