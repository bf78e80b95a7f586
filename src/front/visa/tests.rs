//! Tests of the vISA parser: every `.visaasm` of the IGC corpus (when present) parses and
//! agrees with an independent line scan of it; hand-written snippets of every syntactic form;
//! one test per malformed construct with its message and span; and a fuzz-style test that
//! truncates and mutates texts and requires an error with a well-formed span, never a panic.

use super::ast::*;
use super::parse::parse;
use crate::front::lexer::SyntaxError;
use std::collections::HashMap;
use std::path::PathBuf;

const HEAD: &str = ".version 4.1\n.kernel \"k\"\n";

/// Declarations every snippet can use (lines 3 to 14).
const DECLS: &str = "\
.decl V32 v_type=G type=ud num_elts=16 align=hword
.decl V33 v_type=G type=uq num_elts=8 align=hword
.decl V34 v_type=G type=f num_elts=16 align=hword
.decl V35 v_type=G type=d num_elts=16 align=hword alias=<V33, 0>
.decl V36 v_type=G type=uw num_elts=16 align=hword
.decl V37 v_type=G type=ud num_elts=2 align=qword alias=<V35, 8>
.decl V38 v_type=G type=hf num_elts=16 align=hword
.decl V39 v_type=G type=df num_elts=8 align=hword
.decl P1 v_type=P num_elts=16
.decl A0 v_type=A num_elts=2
.decl S0 v_type=S num_elts=1 v_name=S000
.decl T6 v_type=T num_elts=1 v_name=T006
";

/// The line of a snippet's first body statement.
const BODY_LINE: u32 = 18;

/// A kernel holding [`DECLS`] and `body` after the `_main_0` function label.
fn module(body: &str) -> String {
    format!("{HEAD}{DECLS}.function \"_main_0\"\n\n_main_0:\n{body}\n")
}

fn parse_ok(src: &str) -> Module {
    match parse(src) {
        Ok(m) => m,
        Err(e) => panic!(
            "{}:{}: {} (expected {:?})\n{src}",
            e.span.line, e.span.col, e.message, e.expected
        ),
    }
}

fn kernel(body: &str) -> Kernel {
    parse_ok(&module(body)).kernels.remove(0)
}

/// The only instruction of `body`.
fn inst(body: &str) -> Inst {
    let k = kernel(body);
    let insts: Vec<&Inst> = k.insts().collect();
    assert_eq!(insts.len(), 1, "{body}");
    insts[0].clone()
}

fn operands(body: &str) -> Vec<OperandKind> {
    inst(body).operands.into_iter().map(|o| o.kind).collect()
}

/// 1-based line and column (in characters) of byte `at`.
fn position(src: &str, at: usize) -> (u32, u32) {
    let before = &src[..at];
    let line = before.matches('\n').count() as u32 + 1;
    let col = before[before.rfind('\n').map_or(0, |i| i + 1)..]
        .chars()
        .count() as u32
        + 1;
    (line, col)
}

/// The span is inside the text, on character boundaries, and its line and column are those
/// of its first byte.
fn assert_well_formed(src: &str, e: &SyntaxError) {
    let (s, t) = (e.span.start as usize, e.span.end as usize);
    assert!(
        s <= t && t <= src.len(),
        "span {:?} of {} bytes: {}",
        e.span,
        src.len(),
        e.message
    );
    assert!(
        src.is_char_boundary(s) && src.is_char_boundary(t),
        "{:?}",
        e.span
    );
    assert_eq!(
        position(src, s),
        (e.span.line, e.span.col),
        "line/col of {:?}: {}",
        e.span,
        e.message
    );
}

/// `src` fails with a message (or its "expected" part) containing `msg`, at a span covering exactly `text` on `line`.
fn check_err(src: &str, msg: &str, text: &str, line: u32) {
    let e = match parse(src) {
        Ok(_) => panic!("no error for `{msg}` in\n{src}"),
        Err(e) => e,
    };
    assert_well_formed(src, &e);
    let full = match &e.expected {
        Some(x) => format!("{} (expected {x})", e.message),
        None => e.message.clone(),
    };
    assert!(full.contains(msg), "{full:?} does not contain {msg:?}");
    assert_eq!(
        &src[e.span.start as usize..e.span.end as usize],
        text,
        "span of {:?}",
        e.message
    );
    assert_eq!(e.span.line, line, "line of {:?}", e.message);
}

/// A body whose instruction fails at `text` on the body's first line.
fn body_err(body: &str, msg: &str, text: &str) {
    check_err(&module(body), msg, text, BODY_LINE);
}

// ============================================================================ the corpus

/// The IGC corpus: `corpus/visa/gen` of this tree, or `$ATOMJIT_VISA_CORPUS`.
fn corpus_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("ATOMJIT_VISA_CORPUS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus/visa/gen"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        println!(
            "note: no vISA corpus at {} (it comes with the corpus branch); skipped",
            dir.display()
        );
        None
    }
}

fn corpus() -> Vec<(String, String)> {
    let Some(dir) = corpus_dir() else {
        return Vec::new();
    };
    let mut files: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("the corpus directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "visaasm"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (
                name,
                std::fs::read_to_string(&p).expect("a readable .visaasm"),
            )
        })
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .visaasm files in {}", dir.display());
    files
}

/// What a plain line scan of a `.visaasm` says, independently of the parser.
#[derive(Default, Debug)]
struct Scan {
    decls: Vec<String>,
    inputs: Vec<(String, u32, u32)>,
    /// Per instruction: the mnemonic with its modifiers (`svm_atomic.add.64`).
    insts: Vec<String>,
    /// Per `svm_atomic`: op, width, mask group, `_NM`, execution size.
    atomics: Vec<(String, u32, u32, bool, u32)>,
    simd: Option<u32>,
}

fn scan(text: &str) -> Scan {
    let mut s = Scan::default();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let t = code.trim();
        let words: Vec<&str> = t.split_whitespace().collect();
        if t.is_empty() {
            continue;
        }
        if t.starts_with(".decl") {
            s.decls.push(words[1].to_string());
        } else if t.starts_with(".input") {
            let field = |k: &str| {
                words
                    .iter()
                    .find_map(|w| w.strip_prefix(k))
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("{k} in {line}"))
            };
            s.inputs
                .push((words[1].to_string(), field("offset="), field("size=")));
        } else if let Some(v) = t.strip_prefix(".kernel_attr SimdSize=") {
            s.simd = v.trim().parse().ok();
        } else if t.starts_with('.') || !line.starts_with(char::is_whitespace) {
            // Another directive, or a label in the first column.
        } else {
            let op = if words[0].starts_with('(') {
                words[1]
            } else {
                words[0]
            };
            s.insts.push(op.to_string());
            if let Some(rest) = op.strip_prefix("svm_atomic.") {
                let mut parts = rest.split('.');
                let name = parts.next().unwrap().to_string();
                let bits = parts.next().map_or(32, |b| b.parse().unwrap());
                let exec = &t[t.find('(').unwrap() + 1..t.find(')').unwrap()];
                let (mask, size) = exec.split_once(',').unwrap();
                let nm = mask.ends_with("_NM");
                let group = mask.trim_start_matches('M').trim_end_matches("_NM");
                s.atomics.push((
                    name,
                    bits,
                    group.parse().unwrap(),
                    nm,
                    size.trim().parse().unwrap(),
                ));
            }
        }
    }
    s
}

fn full_mnemonic(i: &Inst) -> String {
    let mut m = i.mnemonic.clone();
    for md in &i.modifiers {
        m.push('.');
        m.push_str(&md.text);
    }
    m
}

#[test]
fn corpus_parses_and_agrees_with_a_line_scan() {
    let files = corpus();
    if files.is_empty() {
        return;
    }
    let mut forms: HashMap<String, usize> = HashMap::new();
    for (name, text) in &files {
        let m = parse(text).unwrap_or_else(|e| {
            panic!(
                "{name}:{}:{}: {} ({:?})",
                e.span.line, e.span.col, e.message, e.expected
            )
        });
        assert_eq!(m.kernels.len(), 1, "{name}");
        assert_eq!(
            m.version.map(|v| (v.major, v.minor)),
            Some((4, 1)),
            "{name}"
        );
        let k = &m.kernels[0];
        let s = scan(text);
        let insts: Vec<&Inst> = k.insts().collect();
        assert_eq!(insts.len(), s.insts.len(), "{name}: instruction count");
        for (i, want) in insts.iter().zip(&s.insts) {
            assert_eq!(&full_mnemonic(i), want, "{name} line {}", i.span.line);
            *forms.entry(full_mnemonic(i)).or_default() += 1;
        }
        let declared: Vec<&str> = k.declared_vars().map(|v| v.name.as_str()).collect();
        assert_eq!(declared, s.decls, "{name}: declared variables");
        let inputs: Vec<(String, u32, u32)> = k
            .inputs
            .iter()
            .map(|i| (k.var(i.var).name.clone(), i.offset, i.size))
            .collect();
        assert_eq!(inputs, s.inputs, "{name}: inputs");
        let atomics: Vec<(String, u32, u32, bool, u32)> = insts
            .iter()
            .filter_map(|i| match i.kind {
                InstKind::SvmAtomic { op, bits } => {
                    let e = i.exec.expect("an execution size");
                    Some((
                        op.igc_name().expect("IGC names its ops").to_string(),
                        bits,
                        e.mask_group,
                        e.no_mask,
                        e.size,
                    ))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            atomics, s.atomics,
            "{name}: svm_atomic op, width, mask, size"
        );
        // The SIMD width the file is named after is the kernel's.
        let simd = k
            .attrs
            .iter()
            .find(|a| a.name == "SimdSize")
            .map(|a| a.value.clone());
        assert_eq!(simd, s.simd.map(|v| AttrValue::Int(v.into())), "{name}");
        if let Some(w) = name.split('.').find_map(|p| p.strip_prefix("simd")) {
            assert_eq!(s.simd, w.parse().ok(), "{name}: SimdSize");
        }
        check_bytes_inside_roots(name, k);
    }
    check_forms_txt(&files, &forms);
    println!(
        "{} corpus kernels parsed; {} forms",
        files.len(),
        forms.len()
    );
}

/// Every channel of every general operand, and every raw operand's first byte, lies inside
/// the operand's root variable.
fn check_bytes_inside_roots(name: &str, k: &Kernel) {
    let root_size = |id: VarId| k.var(id).general().expect("a general root").byte_size();
    for i in k.insts() {
        for o in &i.operands {
            match &o.kind {
                OperandKind::General(g) if g.var != VarId::NULL => {
                    let n = i.exec.map_or(1, |e| e.size);
                    for c in 0..n {
                        assert!(
                            g.channel_byte(c) + g.ty.size() <= root_size(g.root),
                            "{name} line {}: channel {c}",
                            i.span.line
                        );
                    }
                    assert_eq!(k.var(g.root).general().unwrap().root, g.root);
                }
                OperandKind::Raw(r) if !r.is_null() => {
                    assert!(
                        r.root_offset < root_size(r.root),
                        "{name} line {}",
                        i.span.line
                    )
                }
                _ => {}
            }
        }
    }
}

/// The corpus generator's `FORMS.txt` counts every mnemonic-with-modifiers; when it describes
/// the same set of kernels, the parser's counts must equal it.
fn check_forms_txt(files: &[(String, String)], forms: &HashMap<String, usize>) {
    let Some(dir) = corpus_dir() else {
        return;
    };
    let Ok(text) = std::fs::read_to_string(dir.join("FORMS.txt")) else {
        return;
    };
    let kernels = text
        .lines()
        .next()
        .and_then(|l| l.split('(').nth(1))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse::<usize>().ok());
    if kernels != Some(files.len()) {
        println!(
            "note: FORMS.txt describes {kernels:?} kernels, not {}; not compared",
            files.len()
        );
        return;
    }
    let mut listed = HashMap::new();
    let mut in_counts = false;
    for line in text.lines() {
        if line.contains("mnemonics, with counts:") {
            in_counts = true;
            continue;
        }
        if in_counts {
            let w: Vec<&str> = line.split_whitespace().collect();
            if w.len() != 2 {
                break;
            }
            listed.insert(w[1].to_string(), w[0].parse::<usize>().expect("a count"));
        }
    }
    assert_eq!(&listed, forms, "FORMS.txt against the parsed instructions");
    println!("FORMS.txt agrees: {} forms", listed.len());
}

// ============================================================================ module syntax

#[test]
fn header_declarations_inputs_attributes() {
    let src = format!(
        "{HEAD}{DECLS}\
.decl V40 v_type=G type=UD num_elts=8 align=GRF
.decl V41 v_type=G num_elts=4 type=w alias=<V40, 4> align=word attrs={{Output, Scope=1, Note=\"x\"}}
.decl V42 v_type = G type = b num_elts = (2*8) align=16
.decl V43 v_type=G type=d num_elts=8 align=hword alias=<%r0, 0>
.decl V44 v_type=G type=ub num_elts=4 alias=<V43, 8>
.decl V45 v_type=G type=ud num_elts=1 alias=<V7, 28>
.decl V46 v_type=G type=q num_elts=%sizeof(V40)/8 align=2GRF
.input V33 offset=64 size=64
.input V40 offset=128
.implicit_LOCAL_ID V36 offset=160 size=32 attrs={{A}}
.parameter V34 size=64
.input T6 offset=196 size=4
.kernel_attr Target=\"3d\"
.kernel_attr SimdSize=16    
.kernel_attr Flag
.kernel_attr Empty=
.kernel_attr Sum=(1+2)*3
.funcdecl \"helper\"
"
    );
    let m = parse_ok(&src);
    assert_eq!(
        m.version.map(|v| (v.major, v.minor, v.span.line)),
        Some((4, 1, 1))
    );
    let k = &m.kernels[0];
    assert_eq!(
        (k.name.as_str(), k.kind, k.span.line),
        ("k", UnitKind::Kernel, 2)
    );
    let g = |n: &str| k.var(k.find_var(n).unwrap()).general().unwrap().clone();
    let v40 = g("V40");
    assert_eq!(
        (v40.ty, v40.num_elts, v40.align, v40.byte_size()),
        (ElemType::UD, 8, Some(32), 32)
    );
    let v41 = g("V41");
    assert_eq!(
        (v41.ty, v41.align, v41.alias),
        (ElemType::W, Some(2), Some((k.find_var("V40").unwrap(), 4)))
    );
    assert_eq!((v41.root, v41.root_offset), (k.find_var("V40").unwrap(), 4));
    let attrs = &k.var(k.find_var("V41").unwrap()).attrs;
    assert_eq!(
        attrs
            .iter()
            .map(|a| (a.name.as_str(), a.value.clone()))
            .collect::<Vec<_>>(),
        [
            ("Output", AttrValue::None),
            ("Scope", AttrValue::Int(1)),
            ("Note", AttrValue::Str("x".into()))
        ]
    );
    assert_eq!(
        (g("V42").ty, g("V42").num_elts, g("V42").align),
        (ElemType::B, 16, Some(16))
    );
    // Aliases of a predefined variable, through a chain and by its V number.
    let r0 = k.find_var("%r0").unwrap();
    assert_eq!(k.find_var("V7"), Some(r0));
    assert_eq!((g("V43").root, g("V43").root_offset), (r0, 0));
    assert_eq!((g("V44").root, g("V44").root_offset), (r0, 8));
    assert_eq!((g("V45").root, g("V45").root_offset), (r0, 28));
    assert_eq!((g("V46").num_elts, g("V46").align), (4, Some(64)));
    // The alias in DECLS: V37 (ud x2) at 8 of V35, itself at 0 of V33.
    assert_eq!(
        (g("V37").root, g("V37").root_offset),
        (k.find_var("V33").unwrap(), 8)
    );
    assert_eq!(g("%r0").predefined, Some(Predefined::R0));
    assert_eq!(g("%r0").byte_size(), 32);
    // Other classes.
    let kind = |n: &str| k.var(k.find_var(n).unwrap()).kind.clone();
    assert_eq!(kind("P1"), VarKind::Predicate { num_elts: 16 });
    assert_eq!(kind("A0"), VarKind::Address { num_elts: 2 });
    assert_eq!(
        kind("S0"),
        VarKind::Sampler {
            num_elts: 1,
            v_name: Some("S000".into())
        }
    );
    assert_eq!(
        kind("T6"),
        VarKind::Surface {
            num_elts: 1,
            v_name: Some("T006".into()),
            predefined: None
        }
    );
    assert_eq!(
        kind("%slm"),
        VarKind::Surface {
            num_elts: 1,
            v_name: Some("%slm".into()),
            predefined: Some(0)
        }
    );
    // Inputs, with the size from the declaration when absent.
    let inputs: Vec<(InputKind, &str, u32, u32)> = k
        .inputs
        .iter()
        .map(|i| (i.kind.clone(), k.var(i.var).name.as_str(), i.offset, i.size))
        .collect();
    assert_eq!(
        inputs,
        [
            (InputKind::Input, "V33", 64, 64),
            (InputKind::Input, "V40", 128, 32),
            (
                InputKind::Implicit("implicit_LOCAL_ID".into()),
                "V36",
                160,
                32
            ),
            (InputKind::Parameter, "V34", 0, 64),
            (InputKind::Input, "T6", 196, 4),
        ]
    );
    let attrs: Vec<(&str, AttrValue)> = k
        .attrs
        .iter()
        .map(|a| (a.name.as_str(), a.value.clone()))
        .collect();
    assert_eq!(
        attrs,
        [
            ("Target", AttrValue::Str("3d".into())),
            ("SimdSize", AttrValue::Int(16)),
            ("Flag", AttrValue::None),
            ("Empty", AttrValue::None),
            ("Sum", AttrValue::Int(9)),
        ]
    );
    assert_eq!(k.funcdecls, ["helper"]);
    assert!(k.stmts.is_empty());
}

#[test]
fn comments_labels_functions_scopes_and_several_kernels() {
    let src = "\
// a comment line
.version 4.1 // trailing
/* a block
   comment over lines */ .kernel first
.decl V32 v_type=G type=ud num_elts=8 align=hword
.decl P1 v_type=P num_elts=8
.function \"_main_0\"

_main_0:
    goto (M1, 1) later                                   /// $1
back:
    (P1) goto (M1, 8) back
    {
    .decl V32 v_type=G type=uw num_elts=16
    mov (M1, 16) V32(0,0)<1> 0x1:uw
    {
    .decl V90 v_type=G type=d num_elts=8
    mov (M1, 8) V90(0,0)<1> V32(0,0)<1;1,0>
    }
    }
  later:
    call (M1, 1) sub
    ret (M1, 1)
.function sub
sub:
    fret (M1, 1)
.kernel \"second\"
.decl V32 v_type=G type=d num_elts=1
.global_function g
";
    let m = parse_ok(src);
    assert_eq!(m.kernels.len(), 3);
    let k = &m.kernels[0];
    assert_eq!((k.name.as_str(), k.span.line), ("first", 4));
    let labels: Vec<(&str, LabelKind, u32)> = k
        .labels
        .iter()
        .map(|l| (l.name.as_str(), l.kind, l.span.line))
        .collect();
    assert_eq!(
        labels,
        [
            ("_main_0", LabelKind::Subroutine, 7),
            ("back", LabelKind::Block, 11),
            ("later", LabelKind::Block, 21),
            ("sub", LabelKind::Subroutine, 24),
        ]
    );
    // The statements: the function, its label line folded into it, the labels in place.
    let shape: Vec<String> = k
        .stmts
        .iter()
        .map(|s| match s {
            Stmt::Label(l) => format!("{}:", k.label(*l).name),
            Stmt::Function { label, .. } => format!(".function {}", k.label(*label).name),
            Stmt::Inst(i) => i.mnemonic.clone(),
        })
        .collect();
    assert_eq!(
        shape,
        [
            ".function _main_0",
            "goto",
            "back:",
            "goto",
            "mov",
            "mov",
            "later:",
            "call",
            "ret",
            ".function sub",
            "fret"
        ]
    );
    for l in &k.labels {
        assert!(
            matches!(k.stmts[l.stmt], Stmt::Label(id) | Stmt::Function { label: id, .. } if k.label(id).name == l.name)
        );
    }
    let insts: Vec<&Inst> = k.insts().collect();
    let target = |i: &Inst| match i.operands[0].kind {
        OperandKind::Label(l) => k.label(l).name.clone(),
        _ => panic!("{i:?}"),
    };
    assert_eq!(target(insts[0]), "later");
    assert_eq!(target(insts[1]), "back");
    assert_eq!(target(insts[4]), "sub");
    assert_eq!(insts[0].kind, InstKind::Branch);
    // Scopes: the inner V32 shadows the outer one; V90 is visible in its own scope only.
    let OperandKind::General(inner) = &insts[2].operands[0].kind else {
        panic!()
    };
    assert_eq!(inner.ty, ElemType::UW);
    assert_eq!(k.var(inner.var).scope, 1);
    let OperandKind::General(src) = &insts[3].operands[1].kind else {
        panic!()
    };
    assert_eq!(src.var, inner.var);
    assert_eq!(
        k.var(k.find_var("V32").unwrap()).general().unwrap().ty,
        ElemType::UD
    );
    assert_eq!(m.kernels[1].name, "second");
    assert_eq!(m.kernels[2].kind, UnitKind::GlobalFunction);
}

// ============================================================================ instructions

#[test]
fn predication_and_execution_controls() {
    let k = kernel(
        "\
    (P1) mov (M1, 16) V32(0,0)<1> 0x1:ud
    (!P1) mov (M5_NM, 8) V32(1,0)<1> 0x1:ud
    (P1.any) mov (M1_NM, 1) V32(0,0)<1> 0x1:ud
    (!P1.all) mov (NoMask, 8) V32(0,0)<1> 0x1:ud
    mov (16) V32(0,0)<1> 0x1:ud
    mov (M8, 4) V32(0,0)<1> 0x1:ud",
    );
    type Control = (Option<(bool, PredCtrl)>, u32, bool, u32, u32);
    let got: Vec<Control> = k
        .insts()
        .map(|i| {
            let e = i.exec.unwrap();
            (
                i.pred.as_ref().map(|p| (p.negate, p.ctrl)),
                e.mask_group,
                e.no_mask,
                e.size,
                e.channel_offset(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (Some((false, PredCtrl::Seq)), 1, false, 16, 0),
            (Some((true, PredCtrl::Seq)), 5, true, 8, 16),
            (Some((false, PredCtrl::Any)), 1, true, 1, 0),
            (Some((true, PredCtrl::All)), 1, true, 8, 0),
            (None, 1, false, 16, 0),
            (None, 8, false, 4, 28),
        ]
    );
    let i = k.insts().next().unwrap();
    let p = i.pred.as_ref().unwrap();
    assert_eq!(k.var(p.var).name, "P1");
    // (A `\` line continuation drops the first line's indentation.)
    assert_eq!((i.span.line, i.span.col), (BODY_LINE, 1));
    assert_eq!(module("").lines().count() as u32, BODY_LINE);
}

#[test]
fn modifiers_decode() {
    let i = inst("    add.sat (M1, 16) V34(0,0)<1> V34(0,0)<1;1,0> 0x3f800000:f");
    assert!(i.sat);
    assert_eq!((i.kind, i.modifiers.len()), (InstKind::Plain, 1));
    let rels = ["eq", "ne", "gt", "ge", "lt", "LE"];
    let want = [
        CmpRel::Eq,
        CmpRel::Ne,
        CmpRel::Gt,
        CmpRel::Ge,
        CmpRel::Lt,
        CmpRel::Le,
    ];
    for (r, w) in rels.iter().zip(want) {
        let i = inst(&format!("    cmp.{r} (M1, 16) P1 V32(0,0)<1;1,0> 0x4:ud"));
        assert_eq!(i.kind, InstKind::Cmp(w));
    }
    let i = inst("    cmp.ne (M1, 16) V32(0,0)<1> V32(0,0)<1;1,0> (-)V32(0,0)<1;1,0>");
    assert!(matches!(i.operands[0].kind, OperandKind::General(_)));
    for (m, scope, flags) in [
        ("fence_global", FenceScope::Global, 0),
        ("fence_global.E", FenceScope::Global, 1),
        ("fence_global.EL1", FenceScope::Global, 0x41),
        ("fence_local.EISCR", FenceScope::Local, 0x1f),
        ("fence_sw", FenceScope::Sw, 0),
    ] {
        let i = inst(&format!("    {m}"));
        assert_eq!(
            (i.kind, i.exec),
            (InstKind::Fence { scope, flags }, None),
            "{m}"
        );
    }
    for (m, kind) in [
        (
            "svm_gather.4.1",
            InstKind::SvmGather {
                block_bytes: 4,
                num_blocks: 1,
            },
        ),
        (
            "svm_gather.1.2",
            InstKind::SvmGather {
                block_bytes: 1,
                num_blocks: 2,
            },
        ),
        (
            "svm_scatter.8.4",
            InstKind::SvmScatter {
                block_bytes: 8,
                num_blocks: 4,
            },
        ),
    ] {
        let i = inst(&format!("    {m} (M1, 8) V33.0 V32.0"));
        assert_eq!(i.kind, kind, "{m}");
    }
    // Block accesses: `(N)` counts owords; the address is a scalar source.
    for (text, kind) in [
        (
            "svm_block_ld (2) V33(0,0)<0;1,0> V32.0",
            InstKind::SvmBlockLd {
                owords: 2,
                unaligned: false,
            },
        ),
        (
            "svm_block_st (8) V33(0,1)<0;1,0> V32.0",
            InstKind::SvmBlockSt {
                owords: 8,
                unaligned: false,
            },
        ),
        (
            "svm_block_ld.unaligned (1) V33(0,0)<0;1,0> V32.0",
            InstKind::SvmBlockLd {
                owords: 1,
                unaligned: true,
            },
        ),
    ] {
        let i = inst(&format!("    {text}"));
        assert_eq!((i.kind, i.exec), (kind, None), "{text}");
        assert!(matches!(i.operands[1].kind, OperandKind::Raw(_)));
    }
}

#[test]
fn svm_atomic_in_both_spellings() {
    let cases = [
        ("svm_atomic.add", AtomicOp::Add, 32),
        ("svm_atomic.add.64", AtomicOp::Add, 64),
        ("svm_atomic.add.32", AtomicOp::Add, 32),
        ("svm_atomic.inc.16", AtomicOp::Inc, 16),
        ("svm_atomic.minsint", AtomicOp::IMin, 32),
        ("svm_atomic.maxsint.64", AtomicOp::IMax, 64),
        ("svm_atomic.imin", AtomicOp::IMin, 32),
        ("svm_atomic.predec", AtomicOp::Predec, 32),
        ("svm_atomic.fcmpwr.16", AtomicOp::Fcmpwr, 16),
        ("SVM_ATOMIC.add", AtomicOp::Add, 32),
        ("SVM_ATOMIC.IMAX.64", AtomicOp::IMax, 64),
        ("SVM_ATOMIC.predec", AtomicOp::Predec, 32),
        ("SVM_ATOMIC.Cmpxchg", AtomicOp::Cmpxchg, 32),
        ("SVM_ATOMIC.minsint", AtomicOp::IMin, 32),
    ];
    for (m, op, bits) in cases {
        let i = inst(&format!("    (P1) {m} (M1, 8) V33.0 V32.0 V35.32 %null.0"));
        assert_eq!(i.kind, InstKind::SvmAtomic { op, bits }, "{m}");
        let raws: Vec<(VarId, u32, u32)> = i
            .operands
            .iter()
            .map(|o| match &o.kind {
                OperandKind::Raw(r) => (r.var, r.offset, r.root_offset),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(raws[2].1, 32);
        assert_eq!(raws[2].2, 32, "V35 is an alias at 0 of V33");
        assert_eq!(raws[3].0, VarId::NULL);
    }
    // The document's text form: exec size without a mask.
    let i = inst("    SVM_ATOMIC.xchg (8) V33.0 V32.0 V32.32 %null.0");
    assert_eq!(
        i.exec.map(|e| (e.mask_group, e.no_mask, e.size)),
        Some((1, false, 8))
    );
    for op in AtomicOp::ALL {
        for name in [op.igc_name(), op.doc_name()].into_iter().flatten() {
            assert_eq!(AtomicOp::from_name(name), Some(op));
        }
    }
}

#[test]
fn general_operands_regions_and_bytes() {
    let k = kernel(
        ".decl V50 v_type=G type=ud num_elts=32 align=hword
    add (M1, 4) V35(1,0)<2> (-)V50(0,4)<8;4,2> (abs)V36(0,0)<0;1,0>
    add (M1, 8) V35(0,0)<1> (-)V50(0,4)<8;4,2> (abs)V36(0,0)<0;1,0>",
    );
    let insts: Vec<&Inst> = k.insts().collect();
    let OperandKind::General(d) = &insts[0].operands[0].kind else {
        panic!()
    };
    // V35 is d x 16 aliased at 0 of V33: row 1 is byte 32.
    assert_eq!(
        (d.row, d.col, d.offset, d.root_offset, d.region),
        (1, 0, 32, 32, Region::Dst { h: 2 })
    );
    assert_eq!(
        (d.modifier, d.root),
        (SrcMod::None, k.find_var("V33").unwrap())
    );
    assert_eq!(
        (0..4).map(|c| d.channel_byte(c)).collect::<Vec<_>>(),
        [32, 40, 48, 56]
    );
    let OperandKind::General(s) = &insts[1].operands[1].kind else {
        panic!()
    };
    assert_eq!(
        (s.modifier, s.region, s.offset),
        (SrcMod::Neg, Region::Src { v: 8, w: 4, h: 2 }, 16)
    );
    // Channel c: element (c / 4) * 8 + (c % 4) * 2 past element 4.
    let elems: Vec<u32> = (0..8).map(|c| s.region.element(c)).collect();
    assert_eq!(elems, [0, 2, 4, 6, 8, 10, 12, 14]);
    assert_eq!(s.channel_byte(5), 16 + 10 * 4);
    let OperandKind::General(a) = &insts[1].operands[2].kind else {
        panic!()
    };
    assert_eq!((a.modifier, a.ty), (SrcMod::Abs, ElemType::UW));
    assert!((0..8).all(|c| a.channel_byte(c) == 0));
    let ops = operands("    not (M1, 16) V32<1> (~)V32(0,0)<1;1,0>");
    let OperandKind::General(d) = &ops[0] else {
        panic!()
    };
    assert_eq!((d.row, d.col, d.region), (0, 0, Region::Dst { h: 1 }));
    let OperandKind::General(s) = &ops[1] else {
        panic!()
    };
    assert_eq!(s.modifier, SrcMod::Not);
    let ops = operands("    mov (M1, 16) V34(0,0)<1> (-abs)V34(0,0)<1;1,0>");
    let OperandKind::General(s) = &ops[1] else {
        panic!()
    };
    assert_eq!(s.modifier, SrcMod::NegAbs);
    // A 2-D region across two GRFs: <16;8,1> with exec 16 reads elements 0..8 and 16..24.
    let k = kernel(
        ".decl V50 v_type=G type=ud num_elts=32 align=hword\n    mov (M1, 16) V32(0,0)<1> V50(0,0)<16;8,1>",
    );
    let i = k.insts().next().unwrap();
    let OperandKind::General(s) = &i.operands[1].kind else {
        panic!()
    };
    let bytes: Vec<u32> = (0..16).map(|c| s.channel_byte(c)).collect();
    assert_eq!(bytes[..9], [0, 4, 8, 12, 16, 20, 24, 28, 64]);
    assert_eq!(bytes[15], 64 + 28);
    // %null as a destination has no extent.
    let ops = operands("    mov (M1, 16) %null(0,0)<1> V32(0,0)<1;1,0>");
    let OperandKind::General(d) = &ops[0] else {
        panic!()
    };
    assert_eq!(d.var, VarId::NULL);
}

#[test]
fn raw_operands() {
    let ops = operands("    svm_scatter.4.1 (M1, 8) V33.(2*16) V37.4");
    let OperandKind::Raw(a) = &ops[0] else {
        panic!()
    };
    assert_eq!((a.offset, a.ty, a.root_offset), (32, ElemType::UQ, 32));
    let OperandKind::Raw(b) = &ops[1] else {
        panic!()
    };
    // V37 is ud x 2 at 8 of V35, itself at 0 of V33.
    assert_eq!((b.offset, b.ty, b.root_offset), (4, ElemType::UD, 12));
    assert!(!b.is_null());
}

#[test]
fn immediates() {
    let imm = |text: &str| -> Immediate {
        let ops = operands(&format!("    mov (M1, 1) V32(0,0)<1> {text}"));
        match ops[1] {
            OperandKind::Imm(i) => i,
            ref other => panic!("{other:?}"),
        }
    };
    let cases: [(&str, ElemType, u64); 20] = [
        ("0x4:ud", ElemType::UD, 4),
        ("0x4:UD", ElemType::UD, 4),
        ("-1:d", ElemType::D, 0xffff_ffff),
        ("0xfffffffd:d", ElemType::D, 0xffff_fffd),
        ("0xffffffc0:w", ElemType::W, 0xffc0),
        ("0xffff8000:w", ElemType::W, 0x8000),
        ("0xffff:uw", ElemType::UW, 0xffff),
        ("-1:q", ElemType::Q, u64::MAX),
        ("0x123456789:uq", ElemType::UQ, 0x1_2345_6789),
        ("((1+2)*3):d", ElemType::D, 9),
        ("~0:ub", ElemType::UB, 0xff),
        ("0x3f800000:f", ElemType::F, 0x3f80_0000),
        ("1.5:f", ElemType::F, 0x3fc0_0000),
        ("-2.5:f", ElemType::F, 0xc020_0000),
        ("1e+5:f", ElemType::F, 0x47c3_5000),
        ("1:f", ElemType::F, 1),
        ("-0x3f800000:f", ElemType::F, 0xbf80_0000),
        ("0x3c00:hf", ElemType::HF, 0x3c00),
        ("0x3ff0000000000000:df", ElemType::DF, 0x3ff0_0000_0000_0000),
        ("1.5:df", ElemType::DF, 0x3ff8_0000_0000_0000),
    ];
    for (text, ty, bits) in cases {
        assert_eq!(imm(text), Immediate { ty, bits }, "{text}");
    }
    assert_eq!(
        imm("0x12345678:v"),
        Immediate {
            ty: ElemType::V,
            bits: 0x1234_5678
        }
    );
    assert_eq!(
        imm("%sizeof(V33):uw"),
        Immediate {
            ty: ElemType::UW,
            bits: 64
        }
    );
    // A float immediate as IGC reads it: atof, then narrowed to float.
    assert_eq!(imm("0.1:f").bits, u64::from((0.1f64 as f32).to_bits()));
}

#[test]
fn predicate_address_indirect_state_and_other_operands() {
    let ops = operands("    mov (M1_NM, 1) V36(0,0)<1> P1");
    assert!(matches!(ops[1], OperandKind::Pred(_)));
    let ops = operands("    setp (M1_NM, 16) P1 0x0:ud");
    assert!(matches!(ops[0], OperandKind::Pred(_)));
    let k = kernel(
        "\
    addr_add (M1_NM, 1) A0(0)<1> &V32 V36(0,0)<0;1,0>
    addr_add (M1_NM, 1) A0(1)<1> &V32[8] 0x4:uw
    addr_add (M1_NM, 1) A0(1)<1> &V35+16 0x4:uw
    mov (M1, 8) V32(0,0)<1> r[A0(0),4]<8;8,1>:ud
    mov (M1, 8) V32(0,0)<1> (-)r[A0(1)]<1,0>:d
    mov (M1, 8) r[A0(1),-8]<1>:ud V32(0,0)<1;1,0>
    mov (M1_NM, 2) A0(0)<2> A0(0)<1>",
    );
    let kinds: Vec<Vec<OperandKind>> = k
        .insts()
        .map(|i| i.operands.iter().map(|o| o.kind.clone()).collect())
        .collect();
    let a0 = k.find_var("A0").unwrap();
    let v32 = k.find_var("V32").unwrap();
    let v33 = k.find_var("V33").unwrap();
    assert_eq!(
        kinds[0][0],
        OperandKind::Addr {
            var: a0,
            index: 0,
            width: 1
        }
    );
    assert_eq!(
        kinds[0][1],
        OperandKind::AddrOf {
            var: v32,
            offset: 0,
            root: v32,
            root_offset: 0
        }
    );
    assert_eq!(
        kinds[1][1],
        OperandKind::AddrOf {
            var: v32,
            offset: 8,
            root: v32,
            root_offset: 8
        }
    );
    let v35 = k.find_var("V35").unwrap();
    assert_eq!(
        kinds[2][1],
        OperandKind::AddrOf {
            var: v35,
            offset: 16,
            root: v33,
            root_offset: 16
        }
    );
    let OperandKind::Indirect(i) = &kinds[3][1] else {
        panic!()
    };
    assert_eq!(
        (i.addr, i.addr_index, i.offset, i.region, i.ty),
        (a0, 0, 4, Region::Src { v: 8, w: 8, h: 1 }, ElemType::UD)
    );
    let OperandKind::Indirect(i) = &kinds[4][1] else {
        panic!()
    };
    assert_eq!(
        (i.addr_index, i.offset, i.region, i.modifier),
        (1, 0, Region::VxH { w: 1, h: 0 }, SrcMod::Neg)
    );
    let OperandKind::Indirect(i) = &kinds[5][0] else {
        panic!()
    };
    assert_eq!((i.offset, i.region), (-8, Region::Dst { h: 1 }));
    assert_eq!(
        kinds[6][1],
        OperandKind::Addr {
            var: a0,
            index: 0,
            width: 1
        }
    );
    // Instructions without a signature are read generically.
    let k = kernel(
        "\
    lsc_load.ugm.ca.ca (M1, 16) V32:u32 flat[V33+0x100]:a64
    oword_ld (4) T6 0x0:ud V32.0
    lifetime.start V32
    movs (M1_NM, 1) T6(0) V36(0,0)<0;1,0>
    sample_3d.RGBA (M1, 16) 0x0:uw S0 T6 V32.0 \"a b\"",
    );
    let insts: Vec<&Inst> = k.insts().collect();
    assert!(insts.iter().all(|i| i.kind == InstKind::Unknown));
    assert_eq!(
        insts[0]
            .modifiers
            .iter()
            .map(|m| m.text.as_str())
            .collect::<Vec<_>>(),
        ["ugm", "ca", "ca"]
    );
    assert_eq!(
        insts[0].operands[0].kind,
        OperandKind::Other("V32:u32".into())
    );
    assert_eq!(
        insts[0].operands[1].kind,
        OperandKind::Other("flat[V33+0x100]:a64".into())
    );
    let t6 = k.find_var("T6").unwrap();
    assert_eq!(insts[1].operands[0].kind, OperandKind::Var(t6));
    assert!(matches!(insts[1].operands[2].kind, OperandKind::Raw(_)));
    assert_eq!(insts[2].operands[0].kind, OperandKind::Var(v32));
    assert_eq!(
        insts[3].operands[0].kind,
        OperandKind::State { var: t6, index: 0 }
    );
    assert_eq!(
        insts[4].operands[4].kind,
        OperandKind::Other("\"a b\"".into())
    );
}

#[test]
fn every_predefined_variable_reads() {
    for (i, name) in [
        "%null",
        "%thread_x",
        "%thread_y",
        "%group_id_x",
        "%group_id_y",
        "%group_id_z",
        "%tsc",
        "%r0",
        "%arg",
        "%retval",
        "%sp",
        "%fp",
        "%hw_id",
        "%sr0",
        "%cr0",
        "%ce0",
        "%dbg0",
        "%color",
        "%impl_arg_buf_ptr",
        "%local_id_buf_ptr",
        "%msg0",
    ]
    .iter()
    .enumerate()
    {
        for spelled in [name.to_string(), format!("V{i}")] {
            let k = kernel(&format!(
                "    mov (M1_NM, 1) V32(0,0)<1> {spelled}(0,0)<0;1,0>"
            ));
            let i0 = k.insts().next().unwrap();
            let OperandKind::General(g) = &i0.operands[1].kind else {
                panic!()
            };
            assert_eq!(
                (g.var, k.var(g.var).name.as_str()),
                (VarId(i as u32), *name)
            );
            assert!(k.var(g.var).general().unwrap().predefined.is_some());
        }
    }
    let k = kernel("    mov (M1_NM, 4) %r0(0,0)<1> %tsc(0,0)<1;1,0>");
    assert_eq!(k.insts().count(), 1);
}

// ============================================================================ errors

#[test]
fn malformed_brackets() {
    body_err("    mov (M1, 16) V32(0,0<1> 0x1:ud", "unexpected `<`", "<");
    body_err(
        "    mov (M1, 16 V32(0,0)<1> 0x1:ud",
        "unexpected `V32`",
        "V32",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1 0x1:ud",
        "unexpected `0x1`",
        "0x1",
    );
    body_err("    foo (M1, 16) bar(x V32.0", "unbalanced bracket", "(");
    body_err(
        "    foo (M1, 16) bar[x) V32.0",
        "closes the wrong bracket",
        ")",
    );
    body_err("    foo (M1, 16) x] V32.0", "without a matching `[`", "]");
    body_err("    }", "without a matching `{`", "}");
    check_err(
        &module("    {\n    mov (M1, 16) V32(0,0)<1> 0x1:ud"),
        "unclosed `{`",
        "{",
        BODY_LINE,
    );
    body_err(
        "    (P1 mov (M1, 16) V32(0,0)<1> 0x1:ud",
        "unexpected `mov`",
        "mov",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> r[A0(0),0<1;1,0>:ud",
        "unexpected `<`",
        "<",
    );
}

#[test]
fn malformed_regions() {
    body_err(
        "    mov (M1, 16) V32(0,0)<1> V32(0,0)<1;3,0>",
        "invalid region width 3",
        "3",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> V32(0,0)<1;0,0>",
        "invalid region width 0",
        "0",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> V32(0,0)<3;1,0>",
        "invalid vertical stride 3",
        "3",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> V32(0,0)<1;1,8>",
        "invalid horizontal stride 8",
        "8",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<3> V32(0,0)<1;1,0>",
        "invalid destination horizontal stride 3",
        "3",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<0> V32(0,0)<1;1,0>",
        "invalid destination horizontal stride 0",
        "0",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1;1,0> V32(0,0)<1;1,0>",
        "a destination region is `<h>`",
        "V32(0,0)<1;1,0>",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> V32(0,0)<1>",
        "a source region is `<v;w,h>`",
        "V32(0,0)<1>",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> V32(0,0)<1,0>",
        "for indirect operands only",
        "<1,0>",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> V32(0,0)",
        "unexpected the end of the line",
        "\n",
    );
    body_err(
        "    mov (M1, 16) V32(0,4)<1> V32(0,0)<1;1,0>",
        "reaches byte 80 of `V32`, which has 64 bytes",
        "V32(0,4)<1>",
    );
    body_err(
        "    mov (M1, 8) V32(0,0)<1> V32(2,0)<1;1,0>",
        "`V32(2,0)` is past the end of `V32` (64 bytes)",
        "V32(2,0)<1;1,0>",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> V36(0,0)<16;8,1>",
        "reaches byte 48 of `V36`, which has 32 bytes",
        "V36(0,0)<16;8,1>",
    );
    body_err(
        "    mov (M1, 8) V32(0,0)<1> r[A0(0),600]<1;1,0>:ud",
        "indirect offset 600 is out of range",
        "600",
    );
    body_err(
        "    mov (M1, 8) V32(0,0)<1> r[A0(2),0]<1;1,0>:ud",
        "element 2 of `A0`, which has 2",
        "2",
    );
    body_err(
        "    mov (M1, 8) r[A0(0),0]<1;1,0>:ud V32(0,0)<1;1,0>",
        "indirect destination's region is `<h>`",
        "r[A0(0),0]<1;1,0>:ud",
    );
}

#[test]
fn unknown_and_wrong_names() {
    body_err(
        "    mov (M1, 16) V32(0,0)<1> V99(0,0)<1;1,0>",
        "unknown variable `V99`",
        "V99",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> %local_id_x(0,0)<0;1,0>",
        "unknown variable `%local_id_x`",
        "%local_id_x",
    );
    body_err(
        "    (P7) mov (M1, 16) V32(0,0)<1> 0x1:ud",
        "unknown predicate variable `P7`",
        "P7",
    );
    body_err(
        "    (V32) mov (M1, 16) V32(0,0)<1> 0x1:ud",
        "`V32` is not a predicate variable",
        "V32",
    );
    body_err(
        "    (P1.none) mov (M1, 16) V32(0,0)<1> 0x1:ud",
        "unknown predicate control `.none`",
        "none",
    );
    body_err(
        "    mov (M1, 8) V32(0,0)<1> r[V32(0),0]<1;1,0>:ud",
        "`V32` is not an address variable",
        "V32",
    );
    body_err(
        "    goto (M1, 1) nowhere",
        "undefined label `nowhere`",
        "nowhere",
    );
    body_err(
        "    goto (M1, 1) _main_0",
        "`_main_0` is a subroutine label",
        "_main_0",
    );
    body_err(
        "    call (M1, 1) here\nhere:",
        "`here` is a block label",
        "here",
    );
    check_err(
        &module("here:\nhere:"),
        "label `here` is already defined (line 18)",
        "here:",
        BODY_LINE + 1,
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> &P1",
        "only general and surface variables have an address",
        "P1",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> &V32[64]",
        "address offset 64 is outside `V32`",
        "64",
    );
    body_err(
        "    svm_atomic.add (M1, 8) V33.64 %null.0 V32.0 %null.0",
        "raw operand offset 64 is past the end of `V33`",
        "V33.64",
    );
    body_err(
        "    svm_atomic.add (M1, 8) V33.0 %null.4 V32.0 %null.0",
        "`%null` must have 0 as offset",
        "4",
    );
    body_err(
        "    svm_atomic.add (M1, 8) V33.0 P1 V32.0 %null.0",
        "expected a raw operand",
        "P1",
    );
    body_err(
        "    svm_atomic.add (M1, 8) V33.0 V32(0,0)<1> V32.0 %null.0",
        "expected a raw operand",
        "V32(0,0)<1>",
    );
    body_err(
        "    svm_atomic.add (M1, 8) V33.0 %null.0 V32.0",
        "unexpected the end of the line",
        "\n",
    );
    body_err(
        "    svm_atomic.add (M1, 8) V33.0 %null.0 V32.0 %null.0 V32.0",
        "too many operands: `svm_atomic` takes 4",
        "V32",
    );
    body_err(
        "    svm_atomic.nand (M1, 8) V33.0 %null.0 V32.0 %null.0",
        "unknown atomic operation `nand`",
        ".nand",
    );
    body_err(
        "    svm_atomic (M1, 8) V33.0 %null.0 V32.0 %null.0",
        "needs an operation",
        "svm_atomic",
    );
    body_err(
        "    svm_atomic.add.8 (M1, 8) V33.0 %null.0 V32.0 %null.0",
        "unknown atomic width `8`",
        ".8",
    );
    body_err(
        "    svm_atomic.add.64.16 (M1, 8) V33.0 %null.0 V32.0 %null.0",
        "nothing more",
        ".16",
    );
    body_err(
        "    svm_gather.2.1 (M1, 8) V33.0 V32.0",
        "invalid block size `2`",
        ".2",
    );
    body_err(
        "    svm_block_ld (3) V33(0,0)<0;1,0> V32.0",
        "invalid oword count 3",
        "3",
    );
    body_err(
        "    svm_block_ld (M1, 8) V33(0,0)<0;1,0> V32.0",
        "the number of owords",
        "M1",
    );
    body_err(
        "    (P1) svm_block_st (2) V33(0,0)<0;1,0> V32.0",
        "cannot be predicated",
        "(P1)",
    );
    body_err(
        "    cmp (M1, 16) P1 V32(0,0)<1;1,0> 0x4:ud",
        "needs a relation",
        "cmp",
    );
    body_err(
        "    cmp.xx (M1, 16) P1 V32(0,0)<1;1,0> 0x4:ud",
        "unknown comparison `xx`",
        ".xx",
    );
    body_err(
        "    (P1) cmp.eq (M1, 16) P1 V32(0,0)<1;1,0> 0x4:ud",
        "`cmp` cannot be predicated",
        "(P1)",
    );
    body_err(
        "    add.foo (M1, 16) V32(0,0)<1> V32(0,0)<1;1,0> 0x4:ud",
        "`add` takes no modifier `.foo` (only `.sat`)",
        ".foo",
    );
    body_err("    fence_global.X", "invalid fence options `X`", ".X");
    body_err(
        "    fence_global (M1, 1)",
        "takes no execution size",
        "(M1, 1)",
    );
    body_err(
        "    add V32(0,0)<1> V32(0,0)<1;1,0> 0x4:ud",
        "unexpected `V32`",
        "V32",
    );
    body_err(
        "    add (M1, 3) V32(0,0)<1> V32(0,0)<1;1,0> 0x4:ud",
        "invalid execution size 3",
        "3",
    );
    body_err(
        "    add (M9, 8) V32(0,0)<1> V32(0,0)<1;1,0> 0x4:ud",
        "unknown execution mask `M9`",
        "M9",
    );
    body_err(
        "    add (M1, 8) 0x4:ud V32(0,0)<1;1,0> 0x4:ud",
        "an immediate cannot be a destination",
        "0x4:ud",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> V32",
        "`(row,col)` and a region",
        "\n",
    );
    body_err(
        "    mov (M1, 16) V32(0,0)<1> 0x1:ud extra",
        "too many operands",
        "extra",
    );
}

#[test]
fn unknown_variables_in_instructions_without_a_signature() {
    body_err(
        "    lsc_load.ugm (M1, 16) V99(0,0)<1> flat[V33]:a64",
        "unknown variable `V99`",
        "V99",
    );
    body_err(
        "    oword_ld (4) T6 0x0:ud V99.0",
        "unknown variable `V99`",
        "V99",
    );
    // Text that is no variable operand stays text.
    let i = inst("    lsc_load.ugm (M1, 16) V99:u32 bti(0x10)[V33]:a32");
    assert_eq!(i.operands[0].kind, OperandKind::Other("V99:u32".into()));
    assert_eq!(
        i.operands[1].kind,
        OperandKind::Other("bti(0x10)[V33]:a32".into())
    );
}

#[test]
fn malformed_declarations() {
    let decl = |d: &str, msg: &str, text: &str| {
        check_err(&format!("{HEAD}{DECLS}{d}\n"), msg, text, 15);
    };
    decl(
        ".decl V32 v_type=G type=ud num_elts=1",
        "`V32` is already declared (line 3)",
        "V32",
    );
    decl(
        ".decl V7 v_type=G type=ud num_elts=1",
        "`V7` is a predefined variable (`%r0`)",
        "V7",
    );
    decl(
        ".decl TSS v_type=T num_elts=1",
        "`TSS` is a predefined variable",
        "TSS",
    );
    decl(
        ".decl %r0 v_type=G type=ud num_elts=1",
        "`%` names are predefined",
        "%r0",
    );
    decl(
        ".decl V90 v_type=G type=xx num_elts=1",
        "unknown type `xx`",
        "xx",
    );
    decl(
        ".decl V90 v_type=G type=bool num_elts=16",
        "cannot have type `bool`",
        "bool",
    );
    decl(
        ".decl V90 v_type=G type=v num_elts=16",
        "cannot have type `v`",
        "v",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=0",
        "num_elts=0 is out of range for a general variable (1 to 4096)",
        "0",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=70000",
        "num_elts=70000 is out of range",
        "70000",
    );
    decl(
        ".decl V90 v_type=P num_elts=3",
        "num_elts=3 is out of range for a predicate variable",
        "3",
    );
    decl(
        ".decl V90 v_type=A num_elts=17",
        "out of range for an address variable (1 to 16)",
        "17",
    );
    decl(
        ".decl V90 v_type=X num_elts=1",
        "unknown variable class `X`",
        "X",
    );
    decl(
        ".decl V90 type=ud num_elts=1",
        "has no `v_type=`",
        ".decl V90 type=ud num_elts=1",
    );
    decl(
        ".decl V90 v_type=G type=ud",
        "has no `num_elts=`",
        ".decl V90 v_type=G type=ud",
    );
    decl(
        ".decl V90 v_type=G num_elts=1",
        "has no `type=`",
        ".decl V90 v_type=G num_elts=1",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=1 type=d",
        "`type=` given twice",
        "type",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=1 colour=red",
        "unknown declaration attribute `colour=`",
        "colour",
    );
    decl(
        ".decl V90 v_type=P num_elts=1 type=ud",
        "`type=` is not allowed for a predicate variable",
        "ud",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=1 align=bytes",
        "unknown alignment `bytes`",
        "bytes",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=1 align=3",
        "invalid alignment 3",
        "3",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=1 alias=<V91, 0>",
        "alias of an unknown variable `V91`",
        "V91",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=1 alias=<P1, 0>",
        "`P1` is not a general variable",
        "P1",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=16 alias=<V32, 4>",
        "alias past the end of `V32`: 64 bytes at offset 4 of a 64-byte variable",
        "V32",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=1 alias=<V37, 8>",
        "alias past the end of `V37`",
        "V37",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=2 alias=<%r0, 28>",
        "alias past the end of `%r0`",
        "%r0",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=1 alias=<V32 0>",
        "unexpected `0`",
        "0",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=1 alias=<V32, 0",
        "unexpected the end of the line",
        "\n",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=1 attrs={A, B",
        "unexpected the end of the line",
        "\n",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=(2",
        "unexpected the end of the line",
        "\n",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=2/0",
        "division by zero",
        "0",
    );
    decl(
        ".decl V90 v_type=G type=ud num_elts=0xffffffffffffffff*16",
        "out of range (more than 64 bits)",
        "0xffffffffffffffff*16",
    );
    decl(
        ".input V99 offset=0 size=4",
        "unknown variable `V99`",
        "V99",
    );
    decl(".input P1 offset=0 size=4", "cannot be an input", "P1");
    decl(
        ".input V32 offset=70000",
        "offset must be from 0 to 65535",
        "70000",
    );
    decl(
        ".parameter V32 offset=0 size=4",
        "unknown input attribute `offset=`",
        "offset",
    );
    decl(".kernel_attr", "unexpected the end of the line", "\n");
    decl(".kernel_attr X=\"a", "newline in a string literal", "\n");
    decl(
        ".frobnicate",
        "unknown directive `.frobnicate`",
        ".frobnicate",
    );
    decl(".version 4.2", "`.version` inside a kernel", ".version");
}

#[test]
fn malformed_immediates_and_module_structure() {
    body_err(
        "    mov (M1, 1) V32(0,0)<1> 0x10000:w",
        "65536 does not fit in `w` (16 bits)",
        "0x10000:w",
    );
    body_err(
        "    mov (M1, 1) V32(0,0)<1> 0x100000000:ud",
        "does not fit in `ud`",
        "0x100000000:ud",
    );
    body_err(
        "    mov (M1, 1) V32(0,0)<1> 0x1:xx",
        "unknown type `xx`",
        "xx",
    );
    body_err(
        "    mov (M1, 1) V32(0,0)<1> 0x1:bool",
        "cannot have type `bool`",
        "0x1:bool",
    );
    body_err(
        "    mov (M1, 1) V32(0,0)<1> 0x1: ud",
        "unexpected `ud`",
        "ud",
    );
    body_err(
        "    mov (M1, 1) V32(0,0)<1> 0x1",
        "unexpected the end of the line",
        "\n",
    );
    body_err(
        "    mov (M1, 1) V32(0,0)<1> (1+2):f",
        "float literal or the hexadecimal bits",
        "(1+2):f",
    );
    body_err(
        "    mov (M1, 1) V32(0,0)<1> 0x10000:hf",
        "does not fit in the 16 bits of `hf`",
        "0x10000:hf",
    );
    body_err(
        "    mov (M1, 1) V32(0,0)<1> 0x1:bf",
        "no `bf` immediates",
        "0x1:bf",
    );
    body_err(
        "    mov (M1, 1) V32(0,0)<1> \"s\"",
        "unexpected a string literal",
        "\"s\"",
    );
    body_err(
        "    mov (M1, 1) V32(0,0)<1> 0x1:ud # c",
        "unexpected character `#`",
        "#",
    );
    check_err(
        "    mov (M1, 1) V32(0,0)<1> 0x1:ud\n",
        "an instruction outside a kernel",
        "mov",
        1,
    );
    check_err(
        ".decl V1 v_type=G type=ud num_elts=1\n",
        "`.decl` outside a kernel",
        ".decl",
        1,
    );
    check_err(
        ".version 4.1\n.version 4.1\n",
        "a second `.version` (the first is on line 1)",
        ".version",
        2,
    );
    check_err(".version 4.1.2\n", "unexpected `.`", ".", 1);
    check_err(
        ".version 300.1\n",
        "the major version must be at most 255",
        "300",
        1,
    );
    check_err(
        ".kernel \"k\"\n.kernel \"k\"\n",
        "`k` is already defined (line 1)",
        "\"k\"",
        2,
    );
    check_err(".kernel \"k\n", "newline in a string literal", "\n", 1);
    check_err(".kernel \"k\" x\n", "unexpected `x`", "x", 1);
    check_err(
        ".kernel k\n/* open\n",
        "unterminated block comment",
        "/*",
        2,
    );
    check_err(
        ".kernel k\n.function \"f\"\nf:\nf:\n",
        "label `f` is already defined (line 2)",
        "f:",
        4,
    );
}

#[test]
fn errors_render_with_file_line_column_and_a_caret() {
    let src = module("    mov (M1, 16) V32(0,0)<1> V99(0,0)<1;1,0>");
    let e = super::parse_module("k.visaasm", &src).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("k.visaasm:{BODY_LINE}:30: unknown variable `V99`")
    );
    let shown = crate::diag::render_parse_error(&src, &e);
    assert!(shown.contains("k.visaasm:18:30"), "{shown}");
    assert!(shown.contains("^^^"), "{shown}");
}

// ============================================================================ robustness

/// SplitMix64: a small deterministic generator for the mutations.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The parser's answer to `src` is a module or an error with a well-formed span.
fn survives(src: &str) {
    if let Err(e) = parse(src) {
        assert_well_formed(src, &e);
    }
}

#[test]
fn truncated_and_mutated_texts_give_errors_not_panics() {
    let mut seeds: Vec<String> = corpus().into_iter().map(|(_, t)| t).collect();
    seeds.push(module(
        "\
    (P1.any) svm_atomic.add.64 (M1, 8) V33.0 V32.0 V35.32 %null.0
    add.sat (M5_NM, 8) V35(1,2)<2> (-)V32(0,4)<8;4,2> 0x3f800000:f
    mov (M1, 8) V32(0,0)<1> r[A0(0),4]<8;8,1>:ud
    addr_add (M1_NM, 1) A0(1)<1> &V32[8] 0x4:uw
    lsc_load.ugm (M1, 16) V32:u32 flat[V33+0x100]:a64
    {
    .decl V90 v_type=G type=d num_elts=8 alias=<V32, 4>
    }
    goto (M1, 1) _L
_L:
    ret (M1, 1)",
    ));
    const NOISE: &[&str] = &[
        "(", ")", "<", ">", "[", "]", "{", "}", ",", ";", ":", ".", "=", "-", "!", "~", "&", "\"",
        "/*", "//", "%", " ", "\n", "0x", "9", "V32", "r[", "%null", "(-)", "é", "\t",
    ];
    let mut rng = Rng(0x5eed);
    for seed in &seeds {
        survives(seed);
        // Truncations at evenly spread points (on character boundaries).
        let n = seed.len();
        for k in 0..=60 {
            let mut at = n * k / 60;
            while !seed.is_char_boundary(at) {
                at -= 1;
            }
            survives(&seed[..at]);
        }
        // Mutations: delete, duplicate or insert noise at random points.
        for _ in 0..150 {
            let mut s = seed.clone();
            for _ in 0..1 + rng.below(3) {
                let mut at = rng.below(s.len() + 1);
                while !s.is_char_boundary(at) {
                    at -= 1;
                }
                match rng.below(3) {
                    0 => {
                        let mut end = (at + 1 + rng.below(8)).min(s.len());
                        while !s.is_char_boundary(end) {
                            end += 1;
                        }
                        s.replace_range(at..end, "");
                    }
                    1 => {
                        let mut end = (at + 1 + rng.below(16)).min(s.len());
                        while !s.is_char_boundary(end) {
                            end += 1;
                        }
                        let piece = s[at..end].to_string();
                        s.insert_str(at, &piece);
                    }
                    _ => s.insert_str(at, NOISE[rng.below(NOISE.len())]),
                }
            }
            survives(&s);
        }
    }
}
