//! Whole SASS listings as NVIDIA's tools print them: `cuobjdump [-elf] -sass FILE` and
//! `nvdisasm [-c] FILE` (CUDA 12.x).
//!
//! **cuobjdump** prints, per architecture, `code for sm_80`, then per function
//! `Function : NAME`, `.headerflags @"... EF_CUDA_SM80 ..."`, the instructions with their
//! address prefixes `/*0040*/` and encoding comments (the second 64-bit word of an instruction
//! alone on the next line), and `..........` after the last one. Fatbinary headers
//! (`Fatbin elf code:`, `arch = sm_80`, `code version = [1,7]`, `host = linux`,
//! `compile_size = 64bit`) are read for the architecture or skipped.
//!
//! **nvdisasm** prints `.headerflags` and `.elftype`, then ELF sections: `.section
//! .text.NAME,"ax",@progbits` holds function `NAME` (with `.sectionflags`, `.sectioninfo`,
//! `.align`, `.global`, `.weak`, `.type`, `.size`, `.other NAME,@"STO_CUDA_ENTRY STV_DEFAULT"`
//! for an entry), the labels `NAME:` and `.text.NAME:`, branch labels `.L_x_N:`, branch targets
//! `` `(.L_x_1) `` and device functions inside the section (`.type $NAME$callee,@function`,
//! `$NAME$callee:`). Without `-c`, data sections follow (`.nv.info*`, `.nv.constant0.NAME`,
//! `.nv.shared.NAME`, `.debug_frame`, `.nv.callgraph` ...): their contents (`.byte`, `.word`,
//! `.zero`, `.L_N:` labels, ...) are skipped, except that `.nv.shared.NAME`'s `.zero N` is the
//! function's static shared memory (with the reserved bytes on sm_90), and that the constant
//! sections other than bank 0 (`.nv.constant2.NAME`, `.nv.constant3`) are read as the
//! function's constant banks ([`super::elf`]). The trailing `SYMBOLS` part (`.type
//! .nv.reservedSmem.offset0,@object`, `.size ...`) is skipped too.
//!
//! **cuobjdump -elf -sass** prints an ELF dump before the SASS of each cubin; [`super::elf`]
//! takes its constant sections out and blanks it before the listing is lexed, so what is left
//! is cuobjdump's SASS listing. A kernel gets the module's banks (`.nv.constantN`) and its own
//! (`.nv.constantN.NAME`, which win); bank 0 is the launch's, never the listing's.
//!
//! Every entry function becomes a kernel of its name (mangled C++ names included); a function
//! that is not an entry (an `.other` line without `STO_CUDA_ENTRY`) is only a call target
//! ([`super::calls`]). The architecture (`code for sm_XX`, `EF_CUDA_SMXX`, `arch = sm_XX`)
//! decides each kernel's constant-bank layout ([`crate::ir::CbankLayout`]); without one the
//! layout is sm_80's. Since a listing declares no buffers, its kernels are launched like PTX
//! entries, from launch files and `--buffer`/`--param` lines ([`crate::front::launch`]).
//!
//! An instruction atomjit cannot lower does not stop the listing: the kernel is reported
//! [`Broken`](super::Broken) with every such form, and the other kernels still run.

use super::super::lexer::{SyntaxError, TokKind, Token};
use super::elf::{const_section_name, ConstSection, DataBuilder, SectionData};
use super::{finish_kernel, KernelDraft, ParsedFile, PendingInst, Statement};
use crate::ir::{CbankLayout, ConstBank, Inst, Operand, Program, Span};
use std::collections::{BTreeMap, HashMap};

/// True when the statements are a tool's listing rather than a program file: no `.kernel`,
/// and a line only a listing has (`code for`, `Function :`, `.headerflags`, `.section`,
/// `.elftype`, `Fatbin`).
pub(super) fn is_listing(statements: &[Statement<'_, '_>]) -> bool {
    let mut listing = false;
    for s in statements {
        let t = &s.toks;
        let Some(first) = t.first() else { continue };
        if !first.is_word() {
            continue;
        }
        let word = first.text;
        if word.eq_ignore_ascii_case(".kernel") {
            return false;
        }
        listing |= (word == "code" && t.get(1).is_some_and(|t| t.text == "for"))
            || (word == "Function" && t.get(1).is_some_and(|t| t.is_punct(":")))
            || word == "Fatbin"
            || word == ".headerflags"
            || word == ".section"
            || word == ".elftype";
    }
    listing
}

/// True for cuobjdump's function terminator `..........` (only `..` tokens).
pub fn is_terminator(toks: &[Token]) -> bool {
    !toks.is_empty()
        && toks
            .iter()
            .all(|t| t.kind == TokKind::Punct && t.text == "..")
}

/// The SM version in a word such as `sm_80`, `sm_90a`, `EF_CUDA_SM80`.
fn sm_of(word: &str) -> Option<u32> {
    let digits = word
        .strip_prefix("sm_")
        .or_else(|| word.strip_prefix("EF_CUDA_SM"))?;
    let n: String = digits.chars().take_while(char::is_ascii_digit).collect();
    n.parse().ok()
}

fn layout_at(sm: u32, span: Span) -> Result<CbankLayout, SyntaxError> {
    CbankLayout::for_sm(sm).map_err(|m| {
        SyntaxError::new(span, m).expected(format!(
            "code for sm_{} to sm_{}",
            CbankLayout::SUPPORTED.0,
            CbankLayout::SUPPORTED.1
        ))
    })
}

/// The architecture of a `.headerflags @"... EF_CUDA_SM80 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM80)"`
/// line (the real one, not the virtual one in parentheses).
pub fn headerflags_layout(toks: &[Token]) -> Result<Option<CbankLayout>, SyntaxError> {
    let mut depth = 0;
    for t in toks {
        if t.is_punct("(") {
            depth += 1;
        } else if t.is_punct(")") {
            depth -= 1;
        } else if depth == 0 && t.is_word() && t.text.starts_with("EF_CUDA_SM") {
            if let Some(sm) = sm_of(t.text) {
                return layout_at(sm, t.span).map(Some);
            }
        }
    }
    Ok(None)
}

/// Directives a listing's text prints that say nothing atomjit needs.
const SKIPPED: &[&str] = &[
    ".elftype",
    ".align",
    ".sectionflags",
    ".sectioninfo",
    ".sectionentsize",
    ".global",
    ".weak",
    ".size",
    ".zero",
    ".target",
    ".address_size",
];

/// What the statements currently belong to.
enum Place {
    /// Before any function, or after `..........`.
    Outside,
    /// The code of function `usize` (an index into the drafts).
    Code(usize),
    /// A data section.
    Data(Data),
}

/// The data sections whose contents matter.
enum Data {
    /// `.nv.shared.NAME`: its `.zero N` is the function's static shared memory.
    Shared(String),
    /// `.nv.constantN.NAME` or `.nv.constantN` (N > 0), read as it comes ([`super::elf`]).
    Const(DataBuilder),
    /// Any other section (`.nv.info*`, `.nv.constant0.NAME`, `.debug_frame`, ...): skipped.
    Other,
}

struct Listing<'s, 'a> {
    /// The text the tokens were lexed from.
    source: &'a str,
    drafts: Vec<KernelDraft<'s, 'a>>,
    by_name: HashMap<String, usize>,
    /// The architecture in force, and where it was named.
    layout: Option<CbankLayout>,
    /// Per function name: whether an `.other` line says it is an entry.
    entry: HashMap<String, bool>,
    /// Per function name: its `.nv.shared.NAME` size.
    shared: HashMap<String, (u64, Span)>,
    /// The constant sections other than bank 0 read so far (`cuobjdump -elf`'s first).
    consts: Vec<ConstSection>,
    place: Place,
}

impl<'s, 'a> Listing<'s, 'a> {
    fn function(&mut self, name: &str, span: Span) -> Result<usize, SyntaxError> {
        if let Some(&i) = self.by_name.get(name) {
            return Err(SyntaxError::new(
                span,
                format!(
                    "function `{name}` appears twice (first on line {}): a listing of several architectures must be split, one file per architecture",
                    self.drafts[i].span.line
                ),
            ));
        }
        let mut d = KernelDraft::new(name.to_string(), span);
        if let Some(layout) = self.layout {
            d.launch.set_layout(layout);
        }
        self.drafts.push(d);
        self.by_name.insert(name.to_string(), self.drafts.len() - 1);
        Ok(self.drafts.len() - 1)
    }

    /// Moves to `place`, keeping the constant section that ends here.
    fn set_place(&mut self, place: Place) -> Result<(), SyntaxError> {
        if let Place::Data(Data::Const(done)) = std::mem::replace(&mut self.place, place) {
            let s = done.section;
            if let Some(prev) = self
                .consts
                .iter()
                .find(|c| c.bank == s.bank && c.kernel == s.kernel)
            {
                return Err(SyntaxError::new(
                    s.span,
                    format!(
                        "constant bank {} of {} appears twice (first on line {}): a listing of several cubins must be split, one file per cubin",
                        s.bank,
                        s.kernel.as_deref().map_or("the module".to_string(), |k| format!("`{k}`")),
                        prev.span.line
                    ),
                ));
            }
            self.consts.push(s);
        }
        Ok(())
    }

    fn set_layout(&mut self, layout: CbankLayout) {
        self.layout = Some(layout);
        if let Place::Code(i) = self.place {
            self.drafts[i].launch.set_layout(layout);
        }
    }

    fn directive(
        &mut self,
        toks: &'s [Token<'a>],
        address: Option<u64>,
    ) -> Result<(), SyntaxError> {
        let d = toks[0];
        let word = d.text;
        let arg = toks.get(1).filter(|t| t.is_word());
        if let Place::Data(Data::Const(data)) = &mut self.place {
            // `.byte 0x08, 0x00, ...`: the words between the commas.
            let mut values: Vec<&str> = Vec::new();
            let mut current: Option<(u32, u32)> = None;
            for t in &toks[1..] {
                if t.is_punct(",") {
                    values.extend(
                        current
                            .take()
                            .map(|(a, b)| &self.source[a as usize..b as usize]),
                    );
                } else {
                    current = Some(match current {
                        Some((a, _)) => (a, t.span.end),
                        None => (t.span.start, t.span.end),
                    });
                }
            }
            values.extend(current.map(|(a, b)| &self.source[a as usize..b as usize]));
            if data.statement(word, &values, address, d.span.line) {
                return Ok(());
            }
        }
        match word {
            ".headerflags" => {
                if let Some(layout) = headerflags_layout(toks)? {
                    self.set_layout(layout);
                }
            }
            ".section" => {
                let Some(name) = arg else {
                    return Err(SyntaxError::new(d.span, "`.section` needs a name"));
                };
                let place = if let Some(f) = name.text.strip_prefix(".text.") {
                    let i = match self.by_name.get(f) {
                        Some(&i) => i,
                        None => self.function(f, name.span)?,
                    };
                    Place::Code(i)
                } else if let Some(f) = name.text.strip_prefix(".nv.shared.") {
                    Place::Data(Data::Shared(f.to_string()))
                } else if let Some((bank @ 1.., kernel)) = const_section_name(name.text) {
                    Place::Data(Data::Const(DataBuilder::new(
                        bank,
                        kernel.map(str::to_string),
                        name.span,
                    )))
                } else {
                    Place::Data(Data::Other)
                };
                self.set_place(place)?;
            }
            ".zero" => {
                if let (Place::Data(Data::Shared(f)), Some(n)) = (&self.place, arg) {
                    let bytes = super::super::program::number_word(n.text)
                        .and_then(Result::ok)
                        .and_then(|lit| match lit.value {
                            crate::ir::Scalar::Int(i) => u64::try_from(i).ok(),
                            crate::ir::Scalar::Float(_) => None,
                        });
                    if let Some(b) = bytes {
                        self.shared.insert(f.clone(), (b, n.span));
                    }
                }
            }
            ".other" => {
                if let Some(name) = arg {
                    let entry = toks
                        .iter()
                        .any(|t| t.is_word() && t.text == "STO_CUDA_ENTRY");
                    self.entry.insert(name.text.to_string(), entry);
                }
            }
            ".type" => {
                // `.type NAME,@function` inside a function's code starts a device function.
                let function = toks.iter().any(|t| t.is_word() && t.text == "function");
                if let (Place::Code(i), Some(name), true) = (&self.place, arg, function) {
                    if name.text != self.drafts[*i].name {
                        self.drafts[*i].function_labels.push(name.text.to_string());
                    }
                }
            }
            _ if SKIPPED.contains(&word) => {}
            _ => {
                if let Place::Data(Data::Const(data)) = &mut self.place {
                    // Whatever it means, the bytes after it are not known.
                    data.refuse(format!(
                        "its section has `{word}` on line {}, which atomjit does not read",
                        d.span.line
                    ));
                    return Ok(());
                }
                if matches!(self.place, Place::Data(_)) {
                    return Ok(());
                }
                return Err(SyntaxError::new(
                    d.span,
                    format!("unknown directive `{word}` in a listing"),
                )
                .expected("an instruction, a label or a directive cuobjdump or nvdisasm prints"));
            }
        }
        Ok(())
    }

    fn label(&mut self, label: &'s Token<'a>) -> Result<(), SyntaxError> {
        let Place::Code(i) = self.place else {
            return Ok(());
        };
        let draft = &mut self.drafts[i];
        // The function's own symbol and section labels mark its start.
        if label.text == draft.name
            || label.text.strip_prefix(".text.") == Some(draft.name.as_str())
        {
            return Ok(());
        }
        if let Some(prev) = draft.label_at.get(label.text) {
            return Err(SyntaxError::new(
                label.span,
                format!(
                    "duplicate label `{}` (first defined on line {})",
                    label.text, prev.line
                ),
            ));
        }
        let pc = draft.insts.len() as u32;
        draft.label_at.insert(label.text, label.span);
        draft.labels.push((label.text.to_string(), pc, label.span));
        Ok(())
    }
}

/// Where the instructions' reads of constant bank 0 end.
fn cbank_reads(insts: &[Inst]) -> u32 {
    insts
        .iter()
        .flat_map(|i| i.op.operand_uses())
        .filter_map(|u| {
            let Operand::Const { bank: 0, offset } = u.operand else {
                return None;
            };
            offset.checked_add(u32::from(u.words) * 4)
        })
        .max()
        .unwrap_or(0)
}

/// Parses a listing (see the [module docs](self)): `lexed` is the text the statements were
/// lexed from (`source` with a `cuobjdump -elf` dump blanked), `consts` the constant sections
/// of that dump ([`super::elf`]).
pub(super) fn parse<'s, 'a>(
    file_name: &str,
    source: &str,
    lexed: &'a str,
    statements: &'s [Statement<'_, 'a>],
    consts: Vec<ConstSection>,
) -> Result<ParsedFile, SyntaxError> {
    let mut l = Listing {
        source: lexed,
        drafts: Vec::new(),
        by_name: HashMap::new(),
        layout: None,
        entry: HashMap::new(),
        shared: HashMap::new(),
        consts,
        place: Place::Outside,
    };
    for stmt in statements {
        let mut toks: &'s [Token<'a>] = &stmt.toks;
        let Some(first) = toks.first() else { continue };
        let second = toks.get(1);
        // cuobjdump headers.
        if first.is_word() && first.text == "code" && second.is_some_and(|t| t.text == "for") {
            if let Some(arch) = toks.get(2) {
                if let Some(sm) = sm_of(arch.text) {
                    l.set_layout(layout_at(sm, arch.span)?);
                }
            }
            l.set_place(Place::Outside)?;
            continue;
        }
        if first.is_word() && first.text == "Function" && second.is_some_and(|t| t.is_punct(":")) {
            let Some(name) = toks.get(2).filter(|t| t.is_word()) else {
                return Err(SyntaxError::new(first.span, "`Function :` needs a name"));
            };
            let i = l.function(name.text, name.span)?;
            l.set_place(Place::Code(i))?;
            continue;
        }
        if is_terminator(toks) {
            l.set_place(Place::Outside)?;
            continue;
        }
        if first.is_word() && first.text == "Fatbin" {
            l.set_place(Place::Outside)?;
            continue;
        }
        if toks.iter().all(|t| t.is_punct("==")) {
            continue;
        }
        if first.is_word() && second.is_some_and(|t| t.is_punct("=")) {
            // Fatbinary header lines: `arch = sm_80`, `code version = [1,7]`, `host = linux`.
            if first.text == "arch" {
                if let Some(sm) = toks.get(2).and_then(|t| sm_of(t.text)) {
                    l.set_layout(layout_at(sm, toks[2].span)?);
                }
            }
            continue;
        }
        if first.is_word() && first.text == "code" && second.is_some_and(|t| t.text == "version") {
            continue;
        }
        // Labels.
        while toks.len() >= 2 && toks[0].is_word() && toks[1].is_punct(":") {
            l.label(&toks[0])?;
            toks = &toks[2..];
        }
        let Some(first) = toks.first() else { continue };
        if first.is_word() && first.text.starts_with('.') {
            l.directive(toks, stmt.address)?;
            continue;
        }
        match l.place {
            Place::Code(i) => l.drafts[i].insts.push(PendingInst {
                toks,
                address: stmt.address,
            }),
            Place::Data(_) => {}
            Place::Outside => {
                return Err(SyntaxError::new(
                    first.span,
                    format!("{} outside any function of the listing", first.describe()),
                )
                .expected(
                    "`Function : NAME` (cuobjdump) or `.section .text.NAME` (nvdisasm) first",
                ))
            }
        }
    }
    if l.drafts.is_empty() {
        return Err(SyntaxError::new(
            Span {
                start: 0,
                end: 0,
                line: 1,
                col: 1,
            },
            "the listing has no functions",
        )
        .expected("`Function : NAME` (cuobjdump) or `.section .text.NAME` (nvdisasm)"));
    }
    l.set_place(Place::Outside)?;
    // Static shared memory from `.nv.shared.NAME` (it includes the reserved bytes), and the
    // constant banks: the module's (`.nv.constantN`), then the function's own
    // (`.nv.constantN.NAME`) in their place.
    for d in &mut l.drafts {
        d.entry = l.entry.get(&d.name).copied().unwrap_or(true);
        if let Some(&(bytes, span)) = l.shared.get(&d.name) {
            d.launch.set_listing_shared(bytes, span)?;
        }
        let mut banks: BTreeMap<u8, &SectionData> = BTreeMap::new();
        for s in l.consts.iter().filter(|s| s.kernel.is_none()) {
            banks.insert(s.bank, &s.data);
        }
        for s in &l.consts {
            if s.kernel.as_deref() == Some(d.name.as_str()) {
                banks.insert(s.bank, &s.data);
            }
        }
        let mut known = Vec::new();
        for (&bank, data) in &banks {
            match data {
                SectionData::Bytes(bytes) => known.push(ConstBank {
                    bank,
                    bytes: bytes.clone(),
                }),
                SectionData::Unknown(why) => d.unknown_banks.push((bank, why.clone())),
            }
        }
        d.launch.set_const_banks(known);
    }
    let mut kernels = Vec::new();
    let mut broken = Vec::new();
    for index in 0..l.drafts.len() {
        if !l.drafts[index].entry {
            continue;
        }
        let (mut kernel, b) = finish_kernel(&l.drafts, index, source)?;
        kernel.launch.cbank_reads = cbank_reads(&kernel.insts);
        kernels.push(kernel);
        broken.push(b);
    }
    if kernels.is_empty() {
        return Err(
            SyntaxError::new(l.drafts[0].span, "the listing has no entry function")
                .expected("a function whose `.other` line says STO_CUDA_ENTRY"),
        );
    }
    Ok(ParsedFile {
        program: Program {
            source_name: file_name.to_string(),
            source: source.to_string(),
            kernels,
        },
        broken,
    })
}
