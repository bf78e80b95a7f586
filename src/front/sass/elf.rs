//! Constant banks other than 0 in a listing: the `.nv.constantN.KERNEL` and `.nv.constantN`
//! sections of the cubin, which `cuobjdump -elf -sass` and full `nvdisasm` (without `-c`) print
//! and `cuobjdump -sass` / `nvdisasm -c` do not.
//!
//! ptxas puts into constant bank 2 what it generates for a kernel and cannot encode in an
//! instruction (the shared-memory offsets of `__shared__` variables, wide literals, jump
//! tables: `IMAD R4, R5, R9, c[0x2][0x0]`), into bank 3 the module's `__constant__` variables
//! with their initial values, and into bank 4 the addresses of `__device__` variables (filled
//! in by relocations when the module is loaded). Bank 0 is the launch's (geometry, ABI words,
//! parameters): atomjit builds it from the launch ([`crate::ir::CbankLayout`]), so a printed
//! bank 0 (`.nv.constant0.KERNEL`, zeros the driver overwrites) is not read.
//!
//! **cuobjdump -elf** prints, before the SASS of each cubin, an ELF dump that starts with a
//! line `64bit elf: type=2, abi=7, sm=80, ...` and runs to the `code for sm_XX` line: the
//! `Sections:` table (`Index Offset Size ES Align Type Flags Link Info Name`, sizes in hex),
//! then each section as its name alone on a line (`.nv.constant2.shared_counters`, or
//! `.section NAME` for some) followed by its contents. A constant section's contents are 32-bit
//! little-endian words, `0x00000008 0x00000000`, four to a line; a relocation section
//! `.section .rel.nv.constant4 REL` lists `OFFSET SYMBOL TYPE` lines. That dump is not SASS
//! syntax (`<0x1>`, `Attribute: EIATTR_REGCOUNT`, `DW_CFA_nop`, ...), so [`read`] takes the
//! constant sections out of it and blanks it (spaces, newlines kept, so every later line keeps
//! its position) before the listing is lexed.
//!
//! **nvdisasm** (without `-c`) prints each section as `.section .nv.constant2.NAME,"a",@progbits`
//! with `.byte`, `.short`, `.word`, `.dword`, `.zero` and `.align` lines; [`DataBuilder`] reads
//! them as the listing's statements arrive (`super::listing`).
//!
//! A section whose bytes the listing does not fix (a relocation: `.dword gvar`, or a
//! `.rel.nv.constantN` entry; a form not read here) is kept as [`SectionData::Unknown`] with
//! the reason: a kernel that reads that bank is refused with it, never given made-up bytes.

use super::super::lexer::SyntaxError;
use crate::ir::Span;
use std::collections::HashMap;

/// A constant section of the listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstSection {
    /// The bank number (`N` of `.nv.constantN`).
    pub bank: u8,
    /// The kernel of `.nv.constantN.KERNEL`; `None` for a module section (`.nv.constant3`),
    /// which every kernel of the listing sees.
    pub kernel: Option<String>,
    /// Its contents.
    pub data: SectionData,
    /// Where the section starts.
    pub span: Span,
}

/// What a listing says about a constant section's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SectionData {
    /// Every byte, from offset 0.
    Bytes(Vec<u8>),
    /// Bytes the listing does not fix, and why (a relocation, an unreadable line).
    Unknown(String),
}

/// `(bank, kernel)` of a section name `.nv.constantN` or `.nv.constantN.KERNEL`.
pub fn const_section_name(name: &str) -> Option<(u8, Option<&str>)> {
    let rest = name.strip_prefix(".nv.constant")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let bank: u8 = rest[..digits].parse().ok()?;
    match &rest[digits..] {
        "" => Some((bank, None)),
        tail => tail
            .strip_prefix('.')
            .filter(|k| !k.is_empty())
            .map(|k| (bank, Some(k))),
    }
}

/// The ELF dumps of a `cuobjdump -elf -sass` listing: the text with them blanked, and their
/// constant sections (bank 0 left out).
pub struct ElfDump {
    pub lexable: String,
    pub sections: Vec<ConstSection>,
}

/// What the lines of a dump currently belong to.
enum State {
    /// The `Sections:` table.
    Table,
    /// The words of constant section `usize` (an index into the sections).
    Words(usize),
    /// A relocation section of the constant section `(bank, kernel)`.
    Relocations(u8, Option<String>),
    /// Anything else (other sections, the symbol table, `.nv.info` attributes).
    Other,
}

/// Finds the ELF dumps of `source` (see the [module docs](self)); `None` when it has none.
pub fn read(source: &str) -> Result<Option<ElfDump>, SyntaxError> {
    let mut lexable = String::with_capacity(source.len());
    let mut sections: Vec<ConstSection> = Vec::new();
    // Per dump: section sizes from the table, and relocations by target section.
    let mut sizes: HashMap<String, u64> = HashMap::new();
    let mut relocations: Vec<(u8, Option<String>, String)> = Vec::new();
    let mut in_dump = false;
    let mut found = false;
    // The first section of the current dump.
    let mut first = 0;
    let mut state = State::Other;
    let mut offset = 0usize;
    for (index, line) in source.split_inclusive('\n').enumerate() {
        let span = Span {
            start: offset as u32,
            end: (offset + line.trim_end().len()) as u32,
            line: index as u32 + 1,
            col: 1,
        };
        offset += line.len();
        let trimmed = line.trim();
        if trimmed.starts_with("64bit elf:") || trimmed.starts_with("32bit elf:") {
            finish_dump(&mut sections[first..], &sizes, &relocations)?;
            sizes.clear();
            relocations.clear();
            first = sections.len();
            in_dump = true;
            found = true;
            state = State::Other;
        } else if in_dump && (trimmed.starts_with("code for ") || trimmed.starts_with("Fatbin ")) {
            finish_dump(&mut sections[first..], &sizes, &relocations)?;
            sizes.clear();
            relocations.clear();
            in_dump = false;
        }
        if !in_dump {
            lexable.push_str(line);
            continue;
        }
        // Blank the line byte for byte (spans are byte offsets), keeping its newline.
        lexable.extend(line.bytes().map(|b| if b == b'\n' { '\n' } else { ' ' }));
        let toks: Vec<&str> = trimmed.split_whitespace().collect();
        if toks.is_empty() {
            if matches!(state, State::Table) {
                state = State::Other;
            }
            continue;
        }
        if toks == ["Sections:"] {
            state = State::Table;
            continue;
        }
        // A section header: its name alone, or `.section NAME [TYPE]`.
        let header = match toks.as_slice() {
            [name] if name.starts_with('.') => Some(*name),
            [".section", name, ..] => Some(*name),
            _ => None,
        };
        if let Some(name) = header {
            state = section_state(name, span, &mut sections)?;
            continue;
        }
        match &state {
            State::Table => {
                // `c  c08  8  0  4  PROGBITS  42  0  10  .nv.constant2.shared_counters`
                if let (10.., Some(name), Some(size)) = (
                    toks.len(),
                    toks.last().filter(|n| n.starts_with('.')),
                    toks.get(2).and_then(|s| u64::from_str_radix(s, 16).ok()),
                ) {
                    sizes.insert(name.to_string(), size);
                }
            }
            State::Words(i) => {
                let words: Option<Vec<u32>> = toks.iter().map(|t| hex_word(t)).collect();
                let section = &mut sections[*i];
                match (words, &mut section.data) {
                    (Some(words), SectionData::Bytes(bytes)) => {
                        bytes.extend(words.iter().flat_map(|w| w.to_le_bytes()));
                    }
                    (Some(_), SectionData::Unknown(_)) => {}
                    (None, _) => {
                        // Not a line of words: the section's contents ended (a dump too short
                        // for the table's size is caught when the dump ends).
                        state = State::Other;
                    }
                }
            }
            State::Relocations(bank, kernel) => {
                // `0x0    gvar    R_CUDA_64`
                if let [at, symbol, ..] = toks.as_slice() {
                    if at.starts_with("0x") {
                        relocations.push((*bank, kernel.clone(), symbol.to_string()));
                    }
                }
            }
            State::Other => {}
        }
    }
    if in_dump {
        finish_dump(&mut sections[first..], &sizes, &relocations)?;
    }
    Ok(found.then_some(ElfDump { lexable, sections }))
}

/// The state after the header of section `name`: a new constant section's words, the
/// relocations of one, or anything else.
fn section_state(
    name: &str,
    span: Span,
    sections: &mut Vec<ConstSection>,
) -> Result<State, SyntaxError> {
    let target = name
        .strip_prefix(".rel")
        .map(|r| r.strip_prefix('a').unwrap_or(r));
    if let Some((bank, kernel)) = target.and_then(const_section_name) {
        return Ok(State::Relocations(bank, kernel.map(str::to_string)));
    }
    let Some((bank, kernel)) = const_section_name(name) else {
        return Ok(State::Other);
    };
    if bank == 0 {
        // The launch's bank: atomjit builds it from the launch (module docs).
        return Ok(State::Other);
    }
    let kernel = kernel.map(str::to_string);
    if let Some(prev) = sections
        .iter()
        .find(|s| s.bank == bank && s.kernel == kernel)
    {
        return Err(SyntaxError::new(
            span,
            format!(
                "section `{name}` appears twice (first on line {}): a listing of several cubins must be split, one file per cubin",
                prev.span.line
            ),
        ));
    }
    sections.push(ConstSection {
        bank,
        kernel,
        data: SectionData::Bytes(Vec::new()),
        span,
    });
    Ok(State::Words(sections.len() - 1))
}

/// `0x0000000a`: one word of a cuobjdump section dump.
fn hex_word(t: &str) -> Option<u32> {
    let digits = t.strip_prefix("0x")?;
    (digits.len() == 8)
        .then(|| u32::from_str_radix(digits, 16).ok())
        .flatten()
}

/// At the end of one dump: cuts each constant section of it to the size the table gives (the
/// words may pad the last one), refuses a dump shorter than that size, and marks the sections
/// with relocations.
fn finish_dump(
    sections: &mut [ConstSection],
    sizes: &HashMap<String, u64>,
    relocations: &[(u8, Option<String>, String)],
) -> Result<(), SyntaxError> {
    for s in sections.iter_mut() {
        let name = match &s.kernel {
            Some(k) => format!(".nv.constant{}.{k}", s.bank),
            None => format!(".nv.constant{}", s.bank),
        };
        if let Some((_, _, symbol)) = relocations
            .iter()
            .find(|(b, k, _)| *b == s.bank && *k == s.kernel)
        {
            s.data = SectionData::Unknown(format!(
                "`{name}` holds the address of `{symbol}`, which the CUDA driver fills in when \
                 it loads the module (a relocation) and a listing cannot give"
            ));
            continue;
        }
        let SectionData::Bytes(bytes) = &mut s.data else {
            continue;
        };
        let Some(&size) = sizes.get(&name) else {
            continue;
        };
        if (bytes.len() as u64) < size {
            return Err(SyntaxError::new(
                s.span,
                format!(
                    "`{name}` is {size:#x} bytes in the section table, but its dump has {:#x}",
                    bytes.len()
                ),
            )
            .expected("the section's words, as `cuobjdump -elf` prints them"));
        }
        bytes.truncate(size as usize);
    }
    Ok(())
}

/// Reads one nvdisasm constant section from its data statements (`.byte 0x08, 0x00`,
/// `.short`, `.word`, `.dword`, `.zero N`, `.align N`), checking each `/*0010*/` offset.
#[derive(Debug)]
pub struct DataBuilder {
    pub section: ConstSection,
}

impl DataBuilder {
    pub fn new(bank: u8, kernel: Option<String>, span: Span) -> DataBuilder {
        DataBuilder {
            section: ConstSection {
                bank,
                kernel,
                data: SectionData::Bytes(Vec::new()),
                span,
            },
        }
    }

    /// Marks the section's bytes unknown, for `why` (a directive of the section atomjit does
    /// not read), unless they already are.
    pub fn refuse(&mut self, why: String) {
        let name = match &self.section.kernel {
            Some(k) => format!(".nv.constant{}.{k}", self.section.bank),
            None => format!(".nv.constant{}", self.section.bank),
        };
        self.unknown(format!("`{name}`: {why}"));
    }

    /// Marks the section unknown, for `why`, unless it already is.
    fn unknown(&mut self, why: String) {
        if let SectionData::Bytes(_) = self.section.data {
            self.section.data = SectionData::Unknown(why);
        }
    }

    /// One data statement: `directive` (`.byte`, ...) with its `values` (the words between the
    /// commas: numbers, or a symbol for a relocation), at offset `address` if the listing
    /// gives one. `line` names the statement in reasons. Returns false for a directive that is
    /// not data.
    pub fn statement(
        &mut self,
        directive: &str,
        values: &[&str],
        address: Option<u64>,
        line: u32,
    ) -> bool {
        let name = match &self.section.kernel {
            Some(k) => format!(".nv.constant{}.{k}", self.section.bank),
            None => format!(".nv.constant{}", self.section.bank),
        };
        let width = match directive {
            ".byte" => 1,
            ".short" => 2,
            ".word" => 4,
            ".dword" => 8,
            ".zero" | ".align" => 0,
            _ => return false,
        };
        let SectionData::Bytes(bytes) = &mut self.section.data else {
            return true;
        };
        if let Some(at) = address {
            if at != bytes.len() as u64 {
                let why = format!(
                    "`{name}` gives data at offset {at:#x} on line {line}, after {:#x} bytes",
                    bytes.len()
                );
                self.unknown(why);
                return true;
            }
        }
        let number = |v: &str| match super::super::program::number_word(v) {
            Some(Ok(lit)) => match lit.value {
                crate::ir::Scalar::Int(i) => u64::try_from(i).ok(),
                crate::ir::Scalar::Float(_) => None,
            },
            _ => None,
        };
        if width == 0 {
            let n = match values {
                [v] => number(v),
                _ => None,
            };
            match (directive, n) {
                (".zero", Some(n))
                    if n <= (MAX_BANK_BYTES - bytes.len().min(MAX_BANK_BYTES)) as u64 =>
                {
                    bytes.resize(bytes.len() + n as usize, 0)
                }
                (".align", Some(n)) if n.is_power_of_two() && n <= 1 << 12 => {
                    let len = bytes.len().next_multiple_of(n as usize);
                    bytes.resize(len, 0);
                }
                _ => {
                    let why = format!(
                        "`{name}` has `{directive} {}` on line {line}, which atomjit cannot read",
                        values.join(" ")
                    );
                    self.unknown(why);
                }
            }
            return true;
        }
        let mut out = Vec::new();
        for v in values {
            match number(v) {
                Some(n) if width == 8 || n >> (8 * width) == 0 => {
                    out.extend_from_slice(&n.to_le_bytes()[..width]);
                }
                _ => {
                    let why = format!(
                        "`{name}` holds `{directive} {}` on line {line}: a value the CUDA driver \
                         fills in when it loads the module (a relocation) or one atomjit cannot \
                         read, which a listing cannot give",
                        values.join(", ")
                    );
                    self.unknown(why);
                    return true;
                }
            }
        }
        if bytes.len() + out.len() > MAX_BANK_BYTES {
            self.unknown(format!(
                "`{name}` grows past {MAX_BANK_BYTES} bytes on line {line}, more than a constant bank holds"
            ));
            return true;
        }
        bytes.extend_from_slice(&out);
        true
    }
}

/// The size of a constant bank (64 KiB): a section claiming more is not one atomjit reads.
const MAX_BANK_BYTES: usize = 64 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_names() {
        assert_eq!(
            const_section_name(".nv.constant2.shared_counters"),
            Some((2, Some("shared_counters")))
        );
        assert_eq!(const_section_name(".nv.constant3"), Some((3, None)));
        assert_eq!(
            const_section_name(".nv.constant0._Z3fooPi"),
            Some((0, Some("_Z3fooPi")))
        );
        assert_eq!(const_section_name(".nv.constant"), None);
        assert_eq!(const_section_name(".nv.constant2."), None);
        assert_eq!(const_section_name(".nv.constant999.k"), None);
        assert_eq!(const_section_name(".nv.shared.k"), None);
    }

    #[test]
    fn a_blanked_dump_keeps_every_byte_offset_of_the_listing() {
        // Spans are byte offsets: a non-ASCII dump line must blank to as many bytes.
        let source =
            "64bit elf: type=2, abi=7, sm=80\n\u{e9}\u{e9}\n\n\tcode for sm_80\n  EXIT ;\n";
        let dump = read(source).unwrap().expect("a dump");
        assert_eq!(dump.lexable.len(), source.len());
        let at = source.find("code for").unwrap();
        assert_eq!(&dump.lexable[at..], &source[at..]);
    }

    #[test]
    fn a_section_cannot_grow_past_a_constant_bank() {
        let mut d = DataBuilder::new(2, Some("k".into()), Span::default());
        assert!(d.statement(".zero", &["65536"], None, 1));
        assert!(matches!(d.section.data, SectionData::Bytes(ref b) if b.len() == 65536));
        assert!(d.statement(".byte", &["1"], None, 2));
        assert!(
            matches!(d.section.data, SectionData::Unknown(ref why) if why.contains("65536 bytes"))
        );
        let mut d = DataBuilder::new(2, Some("k".into()), Span::default());
        assert!(d.statement(".zero", &["65537"], None, 1));
        assert!(matches!(d.section.data, SectionData::Unknown(_)));
    }

    #[test]
    fn data_statements_fill_the_section_in_order() {
        let mut d = DataBuilder::new(2, Some("k".into()), Span::default());
        assert!(d.statement(".align", &["4"], None, 1));
        assert!(d.statement(".byte", &["0x08", "0x00"], Some(0), 2));
        assert!(d.statement(".short", &["0x0102"], Some(2), 3));
        assert!(d.statement(".word", &["0x0a0b0c0d"], Some(4), 4));
        assert!(d.statement(".zero", &["4"], None, 5));
        assert!(d.statement(".align", &["8"], None, 6));
        assert!(d.statement(".dword", &["0x1122334455667788"], Some(16), 7));
        assert!(!d.statement(".sectionflags", &[], None, 8));
        assert_eq!(
            d.section.data,
            SectionData::Bytes(vec![
                8, 0, 2, 1, 0xd, 0xc, 0xb, 0xa, 0, 0, 0, 0, 0, 0, 0, 0, 0x88, 0x77, 0x66, 0x55,
                0x44, 0x33, 0x22, 0x11
            ])
        );
    }

    #[test]
    fn relocations_and_misplaced_data_make_the_section_unknown() {
        let mut d = DataBuilder::new(4, None, Span::default());
        d.statement(".dword", &["gvar"], Some(0), 9);
        let SectionData::Unknown(why) = &d.section.data else {
            panic!("{:?}", d.section.data)
        };
        assert!(why.contains("`.dword gvar` on line 9"), "{why}");
        assert!(why.contains("relocation"), "{why}");
        let mut d = DataBuilder::new(2, Some("k".into()), Span::default());
        d.statement(".byte", &["0x01"], Some(4), 3);
        assert!(matches!(d.section.data, SectionData::Unknown(_)));
        let mut d = DataBuilder::new(2, Some("k".into()), Span::default());
        d.statement(".byte", &["0x100"], None, 3);
        assert!(matches!(d.section.data, SectionData::Unknown(_)));
    }

    const DUMP: &str = "\n64bit elf: type=2, abi=7, sm=80, toolkit=129, flags = 0x500550\n\
Sections:\n\
Index Offset   Size ES Align        Type    Flags Link     Info Name\n\
    c    c08      6  0  4        PROGBITS       42    0       10 .nv.constant2.k\n\
    d    c10    170  0  4        PROGBITS       42    0       10 .nv.constant0.k\n\
    e    c20      8  0  8        PROGBITS        2    0        0 .nv.constant4\n\
\n\
.section .symtab\n\
 index           value           size      info    other  shndx    name  \n\
\n\
.nv.constant2.k\n\
0x00000008 0x0000ffee \n\
\n\
.nv.constant0.k\n\
0x00000000 0x00000000 0x00000000 0x00000000\n\
\n\
.nv.constant4\n\
0x00000000 0x00000000 \n\
\n\
.section .rel.nv.constant4\tREL\n\
0x0    gvar    R_CUDA_64\n\
\n\
.nv.info.k\n\
\t<0x1>\n\
\tAttribute:\tEIATTR_CUDA_API_VERSION\n\
\n\
\tcode for sm_80\n\
\t\tFunction : k\n";

    #[test]
    fn a_cuobjdump_elf_dump_gives_its_constant_sections_and_is_blanked() {
        let dump = read(DUMP).unwrap().unwrap();
        assert_eq!(dump.lexable.len(), DUMP.len());
        assert_eq!(
            dump.lexable.lines().count(),
            DUMP.lines().count(),
            "newlines kept"
        );
        let code = dump.lexable.find("code for sm_80").unwrap();
        assert_eq!(code, DUMP.find("code for sm_80").unwrap());
        assert!(dump.lexable[..code].trim().is_empty());
        assert_eq!(dump.sections.len(), 2, "{:?}", dump.sections);
        // Cut to the table's 6 bytes; bank 0 left out.
        assert_eq!(dump.sections[0].bank, 2);
        assert_eq!(dump.sections[0].kernel.as_deref(), Some("k"));
        assert_eq!(
            dump.sections[0].data,
            SectionData::Bytes(vec![8, 0, 0, 0, 0xee, 0xff])
        );
        assert_eq!(dump.sections[0].span.line, 12);
        assert_eq!(
            (dump.sections[1].bank, dump.sections[1].kernel.as_deref()),
            (4, None)
        );
        let SectionData::Unknown(why) = &dump.sections[1].data else {
            panic!("{:?}", dump.sections[1])
        };
        assert!(why.contains("`gvar`"), "{why}");
        // No dump: nothing to do.
        assert!(read("\tcode for sm_80\n").unwrap().is_none());
    }

    #[test]
    fn a_dump_shorter_than_its_section_is_an_error() {
        let short = DUMP.replace("0x00000008 0x0000ffee", "0x00000008");
        let e = read(&short).err().unwrap();
        assert!(
            e.message.contains("0x6 bytes in the section table"),
            "{e:?}"
        );
        assert_eq!(e.span.line, 12);
        let twice = DUMP.replace(".nv.constant0.k\n0x", ".nv.constant2.k\n0x");
        let e = read(&twice).err().unwrap();
        assert!(e.message.contains("appears twice"), "{e:?}");
    }
}
