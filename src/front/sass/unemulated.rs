//! Architecture features atomjit does not emulate, in one table. An instruction of one of
//! these families is an error that names the feature, never a silent no-op, whatever the
//! instruction tables of [`super::ops`] come to accept.

use super::super::lexer::{SyntaxError, Token};

/// Mnemonics (without modifiers) and the feature each belongs to.
pub const UNEMULATED: &[(&str, &str)] = &[
    // Tensor Memory Accelerator (sm_90): bulk tensor copies between global and shared memory.
    (
        "UTMALDG",
        "the Tensor Memory Accelerator (TMA tensor loads)",
    ),
    (
        "UTMASTG",
        "the Tensor Memory Accelerator (TMA tensor stores)",
    ),
    (
        "UTMAREDG",
        "the Tensor Memory Accelerator (TMA tensor reductions)",
    ),
    ("UTMAPF", "the Tensor Memory Accelerator (TMA prefetch)"),
    (
        "UTMACCTL",
        "the Tensor Memory Accelerator (TMA descriptor cache control)",
    ),
    (
        "UTMACMDFLUSH",
        "the Tensor Memory Accelerator (TMA command flush)",
    ),
    ("UBLKCP", "TMA bulk copies (cp.async.bulk)"),
    ("UBLKRED", "TMA bulk reductions (cp.reduce.async.bulk)"),
    ("UBLKPF", "TMA bulk prefetch"),
    // Thread-block clusters (sm_90).
    ("UCGABAR_ARV", "cluster barriers (barrier.cluster.arrive)"),
    ("UCGABAR_WAIT", "cluster barriers (barrier.cluster.wait)"),
    ("UCGABAR", "cluster barriers"),
    (
        "MAPA",
        "distributed shared memory (mapa: another CTA's shared window)",
    ),
    // Asynchronous transaction barriers (sm_90 mbarrier with transaction counts).
    (
        "SYNCS",
        "asynchronous transaction barriers (mbarrier try_wait / expect_tx)",
    ),
    // Tensor cores.
    ("HGMMA", "warpgroup tensor-core MMA (wgmma)"),
    ("IGMMA", "warpgroup tensor-core MMA (wgmma)"),
    ("QGMMA", "warpgroup tensor-core MMA (wgmma)"),
    ("BGMMA", "warpgroup tensor-core MMA (wgmma)"),
    ("WARPGROUP", "warpgroup synchronisation (wgmma)"),
    // Tensor memory (sm_100).
    ("UTCMMA", "tensor memory (tcgen05.mma)"),
    ("UTCBAR", "tensor memory (tcgen05.commit)"),
    ("LDTM", "tensor memory (tcgen05.ld)"),
    ("STTM", "tensor memory (tcgen05.st)"),
    ("UTCATOMSWS", "tensor memory allocation (tcgen05.alloc)"),
];

/// The mnemonic word of an instruction statement (after a guard `@P0` / `@!P0`).
pub fn mnemonic<'t, 'a>(toks: &'t [Token<'a>]) -> Option<&'t Token<'a>> {
    let mut i = 0;
    if toks.first().is_some_and(|t| t.is_punct("@")) {
        i = 1;
        if toks.get(1).is_some_and(|t| t.is_punct("!")) {
            i += 1;
        }
        i += 1;
    }
    toks.get(i).filter(|t| t.is_word())
}

/// The form of an instruction for grouping errors: its mnemonic word, upper case.
pub fn form(toks: &[Token]) -> String {
    mnemonic(toks)
        .map(|t| t.text.to_ascii_uppercase())
        .unwrap_or_else(|| toks.first().map_or(String::new(), |t| t.text.to_string()))
}

/// An error if the instruction belongs to a feature of [`UNEMULATED`].
pub fn check(toks: &[Token]) -> Option<SyntaxError> {
    let word = mnemonic(toks)?;
    let upper = word.text.to_ascii_uppercase();
    let base = upper.split('.').next().unwrap_or("");
    let (name, feature) = UNEMULATED.iter().find(|(m, _)| *m == base)?;
    Some(
        SyntaxError::new(
            word.span,
            format!("`{name}` uses {feature}, which atomjit does not emulate"),
        )
        .expected("code without TMA, clusters, tensor cores or tensor memory"),
    )
}
