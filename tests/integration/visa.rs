//! Intel vISA (issue 12): the IGC corpus (`corpus/visa/gen/*.visaasm`, compiled from
//! `corpus/visa/*.cl` by `scripts/visa_corpus.py`) runs on both backends and meets the
//! expectations its launch files derive from the OpenCL sources (`corpus/visa/model.py`); the
//! launch files' `.payload` lines agree with the payload the binaries describe
//! (`PAYLOAD.txt`); hand-written kernels check the `svm_atomic` rules and the errors the
//! documents name.

use super::*;
use atomjit::front::LaunchText;

const FAMILIES: &[&str] = &["control", "floats", "int32", "patterns", "widths"];

fn root() -> &'static str {
    env!("CARGO_MANIFEST_DIR")
}

/// `(kernel, its launch section)` of a family's launch file (the lines before the first
/// `.kernel` are comments).
fn sections(family: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(format!("{}/corpus/visa/{family}.launch", root())).unwrap();
    let mut out: Vec<(String, String)> = Vec::new();
    for line in text.lines() {
        if let Some(k) = line.trim().strip_prefix(".kernel ") {
            out.push((k.trim().to_string(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

fn corpus_file(family: &str, kernel: &str) -> String {
    let dir = format!("{}/corpus/visa/gen", root());
    let prefix = format!("{family}.{kernel}.simd");
    let name = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .find(|n| n.starts_with(&prefix) && n.ends_with(".visaasm"))
        .unwrap_or_else(|| panic!("no listing for {family}.{kernel}"));
    format!("{dir}/{name}")
}

fn run_visa(backend: Backend, path: &str, launch: &str, kernel: &str) -> RunReport {
    let text = std::fs::read_to_string(path).unwrap();
    let mut l = LaunchText::new();
    l.push("launch", launch);
    let module = engine(backend, 1, true)
        .load_with_launch(path, &text, &l)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    module
        .run(kernel, &Overrides::default())
        .unwrap_or_else(|e| panic!("{path} on {backend}: {e}"))
}

fn check_family(family: &str) {
    for (kernel, launch) in sections(family) {
        let path = corpus_file(family, &kernel);
        let interp = run_visa(Backend::Interp, &path, &launch, &kernel);
        let jit = run_visa(Backend::Jit, &path, &launch, &kernel);
        for (r, backend) in [(&interp, "interp"), (&jit, "jit")] {
            assert!(
                r.passed(),
                "{path} on {backend}: {:?} {:?}",
                r.failure.as_ref().map(|f| f.to_string()),
                r.expectations
                    .iter()
                    .filter(|e| !e.passed)
                    .collect::<Vec<_>>()
            );
            assert!(
                !r.expectations.is_empty(),
                "{path}: no expectations checked"
            );
        }
        for (a, b) in interp.buffers.iter().zip(&jit.buffers) {
            assert_eq!(
                a.bytes, b.bytes,
                "{path}: the backends leave different `{}`",
                a.name
            );
        }
    }
}

#[test]
fn corpus_control() {
    check_family("control");
}

#[test]
fn corpus_floats() {
    check_family("floats");
}

#[test]
fn corpus_int32() {
    check_family("int32");
}

#[test]
fn corpus_patterns() {
    check_family("patterns");
}

#[test]
fn corpus_widths() {
    check_family("widths");
}

/// Every implicit input `PAYLOAD.txt` lists after the arguments has its `.payload` line in the
/// kernel's launch section, and no other `.payload` line exists.
#[test]
fn payload_lines_match_the_binaries() {
    let payload =
        std::fs::read_to_string(format!("{}/corpus/visa/gen/PAYLOAD.txt", root())).unwrap();
    let mut expected: Vec<(String, String)> = Vec::new();
    let mut current = String::new();
    for line in payload.lines() {
        if let Some(name) = line
            .split(".visaasm:")
            .next()
            .filter(|_| line.contains(".visaasm:"))
        {
            let mut parts = name.split('.');
            let (fam, k) = (parts.next().unwrap(), parts.next().unwrap());
            current = format!("{fam}.{k}");
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() != Some(&".input") || words.len() < 5 {
            continue;
        }
        let offset = words[2].trim_start_matches("offset=");
        let kind = words[4].split('.').next().unwrap();
        let implicit = matches!(
            kind,
            "num_groups" | "global_size" | "local_size" | "enqueued_local_size" | "private_base"
        );
        // The header input at ct+0 starts with global_id_offset and is not a `.payload` line.
        if implicit {
            expected.push((current.clone(), format!(".payload {offset} {kind}")));
        }
    }
    let mut found: Vec<(String, String)> = Vec::new();
    for fam in FAMILIES {
        for (kernel, body) in sections(fam) {
            for line in body.lines().filter(|l| l.starts_with(".payload")) {
                found.push((format!("{fam}.{kernel}"), line.trim().to_string()));
            }
        }
    }
    expected.sort();
    found.sort();
    assert!(!expected.is_empty());
    assert_eq!(found, expected);
}

// ---------------------------------------------------------------------------------------------
// Hand-written kernels

/// A SIMD8 kernel: OFF = 4 × local id x; ADDR = buffer `a` + OFF, OUT = buffer `b` + OFF, then
/// `body`. Work-group 8 (one thread), one work-group unless the launch says otherwise.
fn kernel(body: &str) -> String {
    format!(
        r#".version 4.1
.kernel "k"
.decl LID v_type=G type=uw num_elts=16 align=hword
.decl A v_type=G type=uq num_elts=1 align=qword
.decl B v_type=G type=uq num_elts=1 align=qword
.decl OFF v_type=G type=ud num_elts=8 align=hword
.decl ADDR v_type=G type=uq num_elts=8 align=hword
.decl OUT v_type=G type=uq num_elts=8 align=hword
.decl VAL v_type=G type=ud num_elts=8 align=hword
.decl CMP v_type=G type=ud num_elts=8 align=hword
.decl OLD v_type=G type=ud num_elts=8 align=hword
.decl W64 v_type=G type=uq num_elts=8 align=hword
.decl P1 v_type=P num_elts=8
.input LID offset=32 size=16
.input A offset=160 size=8
.input B offset=168 size=8
.kernel_attr SimdSize=8
.function "_main_0"

_main_0:
    shl (M1, 8) OFF(0,0)<1> LID(0,0)<1;1,0> 0x2:ud
    mov (M1, 8) ADDR(0,0)<1> OFF(0,0)<1;1,0>
    add (M1, 8) ADDR(0,0)<1> ADDR(0,0)<1;1,0> A(0,0)<0;1,0>
    mov (M1, 8) OUT(0,0)<1> OFF(0,0)<1;1,0>
    add (M1, 8) OUT(0,0)<1> OUT(0,0)<1;1,0> B(0,0)<0;1,0>
{body}
    ret (M1, 1)
"#
    )
}

fn run_text(source: &str, launch: &str) -> Result<RunReport, String> {
    let mut results = Vec::new();
    for backend in [Backend::Interp, Backend::Jit] {
        let mut l = LaunchText::new();
        l.push("launch", launch);
        let module = engine(backend, 1, true)
            .load_with_launch("k.visaasm", source, &l)
            .map_err(|e| e.to_string())?;
        results.push(
            module
                .run("k", &Overrides::default())
                .map_err(|e| e.to_string())?,
        );
    }
    let jit = results.pop().unwrap();
    let interp = results.pop().unwrap();
    for (a, b) in interp.buffers.iter().zip(&jit.buffers) {
        assert_eq!(
            a.bytes, b.bytes,
            "the backends leave different `{}`",
            a.name
        );
    }
    assert_eq!(
        interp.failure.as_ref().map(|f| f.to_string()),
        jit.failure.as_ref().map(|f| f.to_string())
    );
    Ok(jit)
}

fn passes(body: &str, launch: &str) -> RunReport {
    let r = run_text(&kernel(body), launch).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        r.passed(),
        "{:?} {:?}",
        r.failure.map(|f| f.to_string()),
        r.expectations
            .iter()
            .filter(|e| !e.passed)
            .collect::<Vec<_>>()
    );
    r
}

fn refused(body: &str, launch: &str, why: &str) {
    match run_text(&kernel(body), launch) {
        Err(e) => assert!(e.contains(why), "expected `{why}` in: {e}"),
        Ok(r) => panic!("ran ({:?}), expected an error with `{why}`", r.failure),
    }
}

const ONE_THREAD: &str = ".block 8\n";

/// predec stores old − 1 and returns the new value; channels go in ascending order.
#[test]
fn predec_returns_the_new_value() {
    passes(
        "    mov (M1, 8) ADDR(0,0)<1> A(0,0)<0;1,0>\n    SVM_ATOMIC.predec (M1, 8) ADDR.0 OLD.0 %null.0 %null.0\n    svm_scatter.4.1 (M1, 8) OUT.0 OLD.0",
        &format!("{ONE_THREAD}.buffer a u32[1] = 100\n.buffer b u32[8] = 0\n.expect a == 92\n.expect b == {{99, 98, 97, 96, 95, 94, 93, 92}}\n"),
    );
}

/// inc/dec are plain ±1 with wrap-around (no bound operand, unlike CUDA's).
#[test]
fn inc_and_dec_wrap() {
    passes(
        "    svm_atomic.inc (M1, 8) ADDR.0 OLD.0 %null.0 %null.0\n    svm_scatter.4.1 (M1, 8) OUT.0 OLD.0\n    svm_atomic.dec (M1, 8) OUT.0 %null.0 %null.0 %null.0",
        &format!("{ONE_THREAD}.buffer a u32[8] = 0xffffffff\n.buffer b u32[8] = 0\n.expect a == 0\n.expect b == 0xfffffffe\n"),
    );
}

/// cmpxchg writes src0 when the old value equals src1; fcmpwr writes src1 when src0 equals
/// the old value, comparing floats (+0 == -0, NaN equal to nothing).
#[test]
fn compare_operand_orders() {
    // a: {5, 7, 5, 7, ...}; cmpxchg(new = 9, compare = 5) swaps the 5s.
    passes(
        "    mov (M1, 8) VAL(0,0)<1> 0x9:ud\n    mov (M1, 8) CMP(0,0)<1> 0x5:ud\n    svm_atomic.cmpxchg (M1, 8) ADDR.0 OLD.0 VAL.0 CMP.0\n    svm_scatter.4.1 (M1, 8) OUT.0 OLD.0",
        &format!("{ONE_THREAD}.buffer a u32[8] = {{5, 7, 5, 7, 5, 7, 5, 7}}\n.buffer b u32[8] = 0\n.expect a == {{9, 7, 9, 7, 9, 7, 9, 7}}\n.expect b == {{5, 7, 5, 7, 5, 7, 5, 7}}\n"),
    );
    // a: {+0, -0, NaN, 1.0, ...}; fcmpwr(compare = -0.0 (src0), new = 2.0 (src1)).
    passes(
        "    mov (M1, 8) CMP(0,0)<1> 0x80000000:ud\n    mov (M1, 8) VAL(0,0)<1> 0x40000000:ud\n    svm_atomic.fcmpwr (M1, 8) ADDR.0 OLD.0 CMP.0 VAL.0",
        &format!("{ONE_THREAD}.buffer a u32[8] = {{0, 0x80000000, 0x7fc00000, 0x3f800000, 0, 0x80000000, 0x7fc00000, 0x3f800000}}\n.buffer b u32[8] = 0\n.expect a == {{0x40000000, 0x40000000, 0x7fc00000, 0x3f800000, 0x40000000, 0x40000000, 0x7fc00000, 0x3f800000}}\n"),
    );
}

/// A 16-bit atomic returns the old word in the low half of the dword and zero above it.
#[test]
fn sixteen_bit_results_have_a_zero_upper_half() {
    // Words at byte offsets 2c (lid × 2): each channel adds 1 to its own word.
    passes(
        "    shl (M1, 8) OFF(0,0)<1> LID(0,0)<1;1,0> 0x1:ud\n    mov (M1, 8) ADDR(0,0)<1> OFF(0,0)<1;1,0>\n    add (M1, 8) ADDR(0,0)<1> ADDR(0,0)<1;1,0> A(0,0)<0;1,0>\n    mov (M1, 8) VAL(0,0)<1> 0xffff0001:ud\n    svm_atomic.add.16 (M1, 8) ADDR.0 OLD.0 VAL.0 %null.0\n    svm_scatter.4.1 (M1, 8) OUT.0 OLD.0",
        &format!("{ONE_THREAD}.buffer a u16[8] = 0xfffe\n.buffer b u32[8] = 7\n.expect a == 0xffff\n.expect b == 0xfffe\n"),
    );
}

/// A misaligned SVM address is a trap, not a wrong answer.
#[test]
fn misaligned_addresses_trap() {
    let r = run_text(
        &kernel("    add (M1, 8) ADDR(0,0)<1> ADDR(0,0)<1;1,0> 0x2:uq\n    svm_atomic.add (M1, 8) ADDR.0 %null.0 OFF.0 %null.0"),
        &format!("{ONE_THREAD}.buffer a u32[16] = 0\n.buffer b u32[8] = 0\n"),
    )
    .unwrap();
    let failure = r.failure.map(|f| f.to_string()).unwrap_or_default();
    assert!(failure.contains("misaligned"), "{failure}");
}

/// The document's operand rules are errors at load.
#[test]
fn operand_rules_are_enforced() {
    let launch = format!("{ONE_THREAD}.buffer a u32[8] = 0\n.buffer b u32[8] = 0\n");
    refused(
        "    svm_atomic.inc (M1, 8) ADDR.0 OLD.0 VAL.0 %null.0",
        &launch,
        "src0 must be `%null.0`",
    );
    refused(
        "    svm_atomic.add (M1, 8) ADDR.0 OLD.0 VAL.0 CMP.0",
        &launch,
        "src1 must be `%null.0`",
    );
    refused(
        "    svm_atomic.cmpxchg (M1, 8) ADDR.0 OLD.0 VAL.0 %null.0",
        &launch,
        "src1 is required",
    );
    refused(
        "    svm_atomic.add (M1, 8) ADDR.0 OLD.0 %null.0 %null.0",
        &launch,
        "src0 is required",
    );
    refused(
        "    svm_atomic.add.64 (M1, 8) ADDR.0 OLD.0 VAL.0 %null.0",
        &launch,
        "8-byte elements",
    );
    refused(
        "    svm_atomic.add (M1, 8) OFF.0 OLD.0 VAL.0 %null.0",
        &launch,
        "the addresses must be a variable of 8-byte elements",
    );
    refused(
        "    svm_atomic.add (M2, 8) ADDR.0 OLD.0 VAL.0 %null.0",
        &launch,
        "do not exist in a SIMD8 thread",
    );
    refused(
        "    svm_atomic.add (M1, 8) ADDR.32 OLD.0 VAL.0 %null.0",
        &launch,
        "past the end of the variable",
    );
}

/// Launch errors name what is missing.
#[test]
fn launch_errors() {
    refused(
        "",
        ".block 12\n.buffer a u32[8] = 0\n.buffer b u32[8] = 0\n",
        "must be a multiple of 8",
    );
    refused(
        "",
        ".block 8\n.buffer a u32[8] = 0\n",
        "does not say what payload byte 168",
    );
    let no_simd = kernel("").replace(".kernel_attr SimdSize=8\n", "");
    let e = run_text(
        &no_simd,
        ".block 8\n.buffer a u32[8] = 0\n.buffer b u32[8] = 0\n",
    )
    .unwrap_err();
    assert!(e.contains("SimdSize"), "{e}");
    // `.payload` belongs to vISA launches only.
    let ptx = ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry e()\n{\n ret;\n}\n";
    let mut l = LaunchText::new();
    l.push("launch", ".payload 200 local_size\n");
    let e = engine(Backend::Interp, 1, true)
        .load_with_launch("e.ptx", ptx, &l)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("not vISA"), "{e}");
}

/// A goto whose channels all leave resumes at the earliest waiting point: the if/else shape
/// IGC emits with a uniform `goto (M1, 1)` over the other side.
#[test]
fn divergent_if_else() {
    // Channels with an even lid write 1, odd ones 2, then everyone adds 10.
    passes(
        "    and (M1, 8) VAL(0,0)<1> LID(0,0)<1;1,0> 0x1:uw\n    cmp.eq (M1, 8) P1 VAL(0,0)<1;1,0> 0x0:ud\n    (P1) goto (M1, 8) EVEN\n    mov (M1, 8) CMP(0,0)<1> 0x2:ud\n    goto (M1, 1) JOIN\nEVEN:\n    mov (M1, 8) CMP(0,0)<1> 0x1:ud\nJOIN:\n    add (M1, 8) CMP(0,0)<1> CMP(0,0)<1;1,0> 0xa:ud\n    svm_scatter.4.1 (M1, 8) OUT.0 CMP.0",
        &format!("{ONE_THREAD}.buffer a u32[8] = 0\n.buffer b u32[8] = 0\n.expect b == {{11, 12, 11, 12, 11, 12, 11, 12}}\n"),
    );
}

/// A backward goto loops with the channels that branch; the others wait after it.
#[test]
fn divergent_loop() {
    // Channel c adds 1 to a[c] lid + 1 times.
    passes(
        "    mov (M1, 8) VAL(0,0)<1> LID(0,0)<1;1,0>\n    mov (M1, 8) CMP(0,0)<1> 0x1:ud\nTOP:\n    svm_atomic.add (M1, 8) ADDR.0 %null.0 CMP.0 %null.0\n    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> 0xffffffff:ud\n    cmp.ne (M1, 8) P1 VAL(0,0)<1;1,0> 0xffffffff:ud\n    (P1) goto (M1, 8) TOP\n    svm_scatter.4.1 (M1, 8) OUT.0 CMP.0",
        &format!("{ONE_THREAD}.buffer a u32[8] = 0\n.buffer b u32[8] = 0\n.expect a == {{1, 2, 3, 4, 5, 6, 7, 8}}\n.expect b == 1\n"),
    );
}

/// A `goto` moves only running channels, even under `_NM`: channels waiting elsewhere stay
/// where they wait.
#[test]
fn no_mask_goto_moves_only_running_channels() {
    passes(
        "    mov (M1, 8) CMP(0,0)<1> 0x0:ud\n    cmp.lt (M1, 8) P1 LID(0,0)<1;1,0> 0x4:uw\n    (P1) goto (M1, 8) A\n    setp (M1_NM, 8) P1 0xff:ud\n    (P1) goto (M1_NM, 8) B\nA:\n    add (M1, 8) CMP(0,0)<1> CMP(0,0)<1;1,0> 0x1:ud\nB:\n    add (M1, 8) CMP(0,0)<1> CMP(0,0)<1;1,0> 0xa:ud\n    svm_scatter.4.1 (M1, 8) OUT.0 CMP.0",
        &format!("{ONE_THREAD}.buffer a u32[8] = 0\n.buffer b u32[8] = 0\n.expect b == {{11, 11, 11, 11, 10, 10, 10, 10}}\n"),
    );
}

/// `%cr0` takes only the retain-denormals bits IGC sets: a rounding-mode write is refused, not
/// ignored.
#[test]
fn control_register_writes() {
    let launch = format!("{ONE_THREAD}.buffer a u32[8] = 0\n.buffer b u32[8] = 0\n");
    passes(
        "    or (M1_NM, 1) %cr0(0,0)<1> %cr0(0,0)<0;1,0> 0x4c0:ud",
        &launch,
    );
    refused(
        "    or (M1_NM, 1) %cr0(0,0)<1> %cr0(0,0)<0;1,0> 0x30:ud",
        &launch,
        "`%cr0` may only be written",
    );
    refused(
        "    mov (M1_NM, 1) %cr0(0,0)<1> 0x0:ud",
        &launch,
        "`%cr0` may only be written",
    );
}

/// A sub-width execution size with a mask offset: raw operands are not shifted by the offset,
/// so channels 4-7 of `(M2, 4)` use elements 0-3 of the address and data operands.
#[test]
fn raw_operands_are_not_shifted_by_the_mask_offset() {
    passes(
        "    mov (M1, 8) VAL(0,0)<1> 0x1:ud\n    svm_atomic.add (M2, 4) ADDR.0 %null.0 VAL.0 %null.0\n    svm_atomic.add (M1_NM, 1) ADDR.0 %null.0 VAL.0 %null.0",
        &format!("{ONE_THREAD}.buffer a u32[8] = 0\n.buffer b u32[8] = 0\n.expect a == {{2, 1, 1, 1, 0, 0, 0, 0}}\n"),
    );
}

/// A SIMD32 kernel may use every execution mask there is: the 31 `(Mk, n)` of sizes 1 to 32
/// (offsets 0, 4, … 28, aligned to the size from 4 up). Each adds 1 to the channels it names,
/// so channel c counts the masks covering it: 6 when c % 4 = 0, 5 when 1, else 4. (atomjit
/// kept 28 mask predicates and refused such a kernel, which GenX_IR accepts, with "too many
/// distinct execution masks"; found by `tests/visa_differential.rs`.)
#[test]
fn every_execution_mask_in_one_kernel() {
    let mut adds = String::new();
    for n in [1u32, 2, 4, 8, 16, 32] {
        for o in (0..32).step_by(n.max(4) as usize) {
            let (row, col) = (o / 8, o % 8);
            adds.push_str(&format!(
                "    add (M{}, {n}) V({row},{col})<1> V({row},{col})<1;1,0> 0x1:ud\n",
                o / 4 + 1
            ));
        }
    }
    assert_eq!(adds.lines().count(), 31);
    let source = format!(
        r#".version 4.1
.kernel "k"
.decl LID v_type=G type=uw num_elts=32 align=hword
.decl A v_type=G type=uq num_elts=1 align=qword
.decl B v_type=G type=uq num_elts=1 align=qword
.decl OFF v_type=G type=ud num_elts=32 align=hword
.decl OUT v_type=G type=uq num_elts=32 align=hword
.decl V v_type=G type=ud num_elts=32 align=hword
.input LID offset=32 size=64
.input A offset=256 size=8
.input B offset=264 size=8
.kernel_attr SimdSize=32
.function "_main_0"

_main_0:
    shl (M1, 32) OFF(0,0)<1> LID(0,0)<1;1,0> 0x2:ud
    mov (M1, 32) OUT(0,0)<1> OFF(0,0)<1;1,0>
    add (M1, 32) OUT(0,0)<1> OUT(0,0)<1;1,0> B(0,0)<0;1,0>
    mov (M1_NM, 32) V(0,0)<1> 0x0:ud
{adds}    svm_scatter.4.1 (M1, 16) OUT.0 V.0
    svm_scatter.4.1 (M5, 16) OUT.128 V.64
    ret (M1, 1)
"#
    );
    let want: Vec<String> = (0..32)
        .map(|c| ["6", "5", "4", "4"][c % 4].to_string())
        .collect();
    let r = run_text(
        &source,
        &format!(
            ".block 32\n.buffer a u32[32] = 0\n.buffer b u32[32] = 0\n.expect b == {{{}}}\n",
            want.join(", ")
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.passed(), "{:?}", r.buffer("b").unwrap().as_u32());
}

/// Runs `body` (in [`kernel`]) on the interpreter as loaded, with the variables accessed one
/// element per channel in registers, and with every variable in the GRF file; the two must
/// leave the same buffers and failure, and the launch's expectations must hold.
fn same_in_registers_and_file(body: &str, launch: &str) {
    same_text_in_registers_and_file(&kernel(body), launch);
}

/// Variables in registers (`docs/visa.md`, "Performance") where every access is one element
/// per channel, and in the GRF file where one is not. Each case is a way a variable's bytes are
/// reached other than by its own channel: a `uq` variable read through a `ud` alias (element
/// `2k` is the low word of `Q[k]`), a broadcast `<0;1,0>` of another channel's element, and a
/// block load whose scalar address operand every loading channel reads.
#[test]
fn variables_in_registers_only_where_no_channel_reaches_anothers_element() {
    let both = |body: &str, expect: &str| {
        let launch = format!("{ONE_THREAD}.buffer a u32[8] = 0\n.buffer b u32[8] = 0\n{expect}\n");
        same_in_registers_and_file(body, &launch);
    };
    both(
        "    mov (M1, 8) W64(0,0)<1> OFF(0,0)<1;1,0>\n    svm_scatter.4.1 (M1, 8) OUT.0 W64.0",
        ".expect b == {0, 0, 4, 0, 8, 0, 12, 0}",
    );
    both(
        "    mov (M1, 8) VAL(0,0)<1> OFF(0,0)<1;1,0>\n    mov (M1, 8) CMP(0,0)<1> VAL(0,3)<0;1,0>\n    svm_scatter.4.1 (M1, 8) OUT.0 CMP.0",
        ".expect b == 12",
    );
    // The block load's two owords are loaded by channels 0 and 1, both from the address in
    // `W64`'s first element; with `W64` in registers, channel 1 would load from `a + 4`.
    both(
        "    svm_scatter.4.1 (M1, 8) ADDR.0 OFF.0\n    mov (M1, 8) W64(0,0)<1> ADDR(0,0)<1;1,0>\n    svm_block_ld (2) W64(0,0)<0;1,0> CMP.0\n    svm_scatter.4.1 (M1, 8) OUT.0 CMP.0",
        ".expect b == {0, 4, 8, 12, 16, 20, 24, 28}",
    );
}

/// A SIMD8 kernel with scalars `S` (one `ud`), `S2` (two `ud`), `Q` (one `uq`), a per-lane `ud`
/// `VAL`, narrow per-lane `SW` (`w`) and `SB` (`b`), and `OUT` (each channel's address in `b`),
/// whose `body` ends by scattering `VAL` to `b`.
fn scalar_kernel(body: &str) -> String {
    format!(
        r#".version 4.1
.kernel "k"
.decl R0 v_type=G type=ud num_elts=8 align=hword alias=<%r0, 0>
.decl LID v_type=G type=uw num_elts=16 align=hword
.decl B v_type=G type=uq num_elts=1 align=qword
.decl S v_type=G type=ud num_elts=1 align=dword
.decl S2 v_type=G type=ud num_elts=2 align=qword
.decl Q v_type=G type=uq num_elts=1 align=qword
.decl VAL v_type=G type=ud num_elts=8 align=hword
.decl SW v_type=G type=w num_elts=8 align=hword
.decl SB v_type=G type=b num_elts=8 align=hword
.decl UW v_type=G type=uw num_elts=8 alias=<SW, 0>
.decl OFF v_type=G type=ud num_elts=8 align=hword
.decl OUT v_type=G type=uq num_elts=8 align=hword
.decl P1 v_type=P num_elts=8
.input LID offset=32 size=16
.input B offset=160 size=8
.kernel_attr SimdSize=8
.function "_main_0"

_main_0:
    shl (M1, 8) OFF(0,0)<1> LID(0,0)<1;1,0> 0x2:ud
    mov (M1, 8) VAL(0,0)<1> LID(0,0)<1;1,0>
{body}
    shl (M1_NM, 1) S(0,0)<1> R0(0,1)<0;1,0> 0x5:ud
    shl (M1, 8) OFF(0,0)<1> OFF(0,0)<1;1,0> 0x0:ud
    add (M1, 8) OFF(0,0)<1> OFF(0,0)<1;1,0> S(0,0)<0;1,0>
    mov (M1, 8) OUT(0,0)<1> OFF(0,0)<1;1,0>
    add (M1, 8) OUT(0,0)<1> OUT(0,0)<1;1,0> B(0,0)<0;1,0>
    svm_scatter.4.1 (M1, 8) OUT.0 VAL.0
    ret (M1, 1)
"#
    )
}

/// Runs `source` on the interpreter with the variables that can be in registers in registers,
/// and with every variable in the GRF file; the two must leave the same buffers and failure,
/// both backends must agree (`run_text`), and the launch's expectations must hold.
fn same_text_in_registers_and_file(source: &str, launch: &str) -> RunReport {
    let mut l = LaunchText::new();
    l.push("launch", launch);
    let engine = engine(Backend::Interp, 1, true);
    let promoted = engine
        .load_with_launch("k.visaasm", source, &l)
        .unwrap_or_else(|e| panic!("{e}"))
        .run("k", &Overrides::default())
        .unwrap();
    let program = atomjit::front::parse_visa_unpromoted("k.visaasm", source, &l).unwrap();
    let file = engine
        .load_program(program)
        .unwrap()
        .run("k", &Overrides::default())
        .unwrap();
    for (a, b) in promoted.buffers.iter().zip(&file.buffers) {
        assert_eq!(a.bytes, b.bytes, "promotion changed `{}`", a.name);
    }
    assert_eq!(
        promoted.failure.as_ref().map(|f| f.to_string()),
        file.failure.as_ref().map(|f| f.to_string())
    );
    let r = run_text(source, launch).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        r.passed(),
        "{:?} {:?}",
        r.failure.map(|f| f.to_string()),
        r.expectations
            .iter()
            .filter(|e| !e.passed)
            .collect::<Vec<_>>()
    );
    r
}

/// The IR kernel `source` lowers to with `launch`.
fn lowered_kernel(source: &str, launch: &str) -> atomjit::ir::Kernel {
    let mut l = LaunchText::new();
    l.push("launch", launch);
    let launched =
        atomjit::front::parse_with_launch("k.visaasm", source, atomjit::ir::Dialect::Visa, &l)
            .unwrap_or_else(|e| panic!("{e}"));
    launched.program.kernels.into_iter().next().unwrap()
}

/// Scalars in registers (`docs/visa.md`, "Performance"): a variable every access of which
/// reads or writes one whole element that all its lanes name alike, and which only
/// replicable instructions write (execution size 1, no predicate, `_NM` or before the first
/// `goto`, sources immediates or general operands), is one register per element in every
/// lane, written by every lane. Each case is checked against the GRF file model with the
/// expected values worked out by hand. Two work-groups of one thread: the group id is in
/// `R0(0,1)`, and each group scatters to its own eight words of `b` (`S` = group id × 32).
#[test]
fn scalars_in_registers_match_the_file_and_are_computed_by_every_lane() {
    let launch = |expect: &str| {
        format!(".grid 2\n.block 8\n.buffer b u32[16] = 0\n.expect b == {{{expect}}}\n")
    };
    let lanes = |f: &dyn Fn(u32, u32) -> u32| {
        (0..2)
            .flat_map(|g| (0..8).map(move |c| (g, c)))
            .map(|(g, c)| f(g, c).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    // A scalar from the group id, written twice, and a two-element one written element by
    // element at another channel (`M2_NM`: lane 4 computes it), each broadcast to every
    // channel: VAL = c + (g + 1) + 3 + 7.
    let chain = "    add (M1_NM, 1) Q(0,0)<1> R0(0,1)<0;1,0> 0x1:ud\n    mov (M2_NM, 1) S2(0,1)<1> 0x3:ud\n    mov (M1_NM, 1) S2(0,0)<1> 0x7:ud\n    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> Q(0,0)<0;1,0>\n    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> S2(0,1)<0;1,0>\n    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> S2(0,0)<0;1,0>";
    let source = scalar_kernel(chain);
    same_text_in_registers_and_file(&source, &launch(&lanes(&|g, c| c + g + 11)));
    // Every variable is in registers: no shared memory, and the uniform ones are written by
    // unguarded instructions, so no execution-mask predicate guards their writes.
    let k = lowered_kernel(&source, ".grid 2\n.block 8\n.buffer b u32[16] = 0\n");
    assert_eq!(k.launch.shared_per_warp, 0, "{}", k.launch.shared_per_warp);
    assert!(
        !k.insts.iter().any(|i| matches!(&i.op, atomjit::ir::Op::Load { access, .. } | atomjit::ir::Op::Store { access, .. } if access.space == atomjit::ir::Space::Shared)),
        "a GRF file access is left"
    );

    // A work-group that is not whole threads is refused also when the kernel has no shared
    // memory (the engine used to tell vISA kernels by their register files in the window).
    for backend in [Backend::Interp, Backend::Jit] {
        let mut l = LaunchText::new();
        l.push("launch", ".grid 2\n.block 8\n.buffer b u32[16] = 0\n");
        let module = engine(backend, 1, true)
            .load_with_launch("k.visaasm", &source, &l)
            .unwrap_or_else(|e| panic!("{e}"));
        let overrides = Overrides {
            block: Some([12, 1, 1]),
            ..Overrides::default()
        };
        let e = module.run("k", &overrides).err().map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("must be a multiple of 8")),
            "{e:?}"
        );
    }

    // A predicated write is not replicable: `S2` stays in the file, and only lane 0's
    // predicate decides (P1 is set in channel 0 for group 0 only): VAL = c + 3 in group 0.
    let predicated = "    cmp.eq (M1, 8) P1 R0(0,1)<0;1,0> LID(0,0)<1;1,0>\n    (P1) mov (M1_NM, 1) S2(0,0)<1> 0x3:ud\n    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> S2(0,0)<0;1,0>";
    same_text_in_registers_and_file(
        &scalar_kernel(predicated),
        &launch(&lanes(&|g, c| if g == 0 { c + 3 } else { c })),
    );

    // After a `goto`, a write without `_NM` is not certain to run: here channel 0 waits at
    // `L1` while the others write, so the write does not happen, and `S2` (in the file, not
    // replicated) stays 0: VAL = c. A `_NM` write there runs in channel 0 whatever its mask:
    // S2 = 3 and VAL = c + 3.
    for (control, add) in [("M1", 0), ("M1_NM", 3)] {
        let after_goto = format!("    cmp.eq (M1, 8) P1 LID(0,0)<1;1,0> 0x0:uw\n    (P1) goto (M1, 8) L1\n    mov ({control}, 1) S2(0,0)<1> 0x3:ud\nL1:\n    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> S2(0,0)<0;1,0>");
        same_text_in_registers_and_file(
            &scalar_kernel(&after_goto),
            &launch(&lanes(&|_, c| c + add)),
        );
    }

    // A replicable write whose source is a per-lane variable's element (channel 0 reads
    // element 0 of `VAL`, its own): replicated, every lane would read its own element, so `S`
    // is not uniform and every channel sees `VAL[0]` = 0: VAL = c + 0.
    let from_lane = "    mov (M1_NM, 1) S2(0,0)<1> VAL(0,0)<0;1,0>\n    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> S2(0,0)<0;1,0>";
    same_text_in_registers_and_file(&scalar_kernel(from_lane), &launch(&lanes(&|_, c| c)));
    // The same from another channel's element (`VAL(0,5)`, which keeps `VAL` in the file):
    // uniform, VAL = c + 5.
    let from_file = "    mov (M1_NM, 1) S2(0,0)<1> VAL(0,5)<0;1,0>\n    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> S2(0,0)<0;1,0>";
    same_text_in_registers_and_file(&scalar_kernel(from_file), &launch(&lanes(&|_, c| c + 5)));

    // A read of half a `uq` scalar (its high word through a `ud` view of the same bytes is not
    // one whole element): Q stays in the file. Q = 0x1_0000_0002 + g; VAL = c + 1.
    let half = "    mov (M1_NM, 1) Q(0,0)<1> 0x100000002:uq\n    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> Q(0,0)<0;1,0>\n    mov (M1, 8) VAL(0,0)<1> LID(0,0)<1;1,0>\n    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> S2(0,1)<0;1,0>\n    mov (M1_NM, 1) S2(0,0)<1> 0x1:ud\n    mov (M1_NM, 1) S2(0,1)<1> 0x1:ud\n    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> S2(0,1)<0;1,0>";
    same_text_in_registers_and_file(&scalar_kernel(half), &launch(&lanes(&|_, c| c + 1)));
}

/// Narrow per-lane variables in registers: a `w` and a `b` variable are held zero-extended,
/// a store keeps the low bits, and a load extends them by the access's type (a `w` read is
/// sign-extended, a `uw` view of the same bytes zero-extended).
#[test]
fn narrow_variables_in_registers_truncate_and_extend_as_the_file_does() {
    let launch =
        |expect: &str| format!(".block 8\n.buffer b u32[8] = 0\n.expect b == {{{expect}}}\n");
    let lanes = |f: &dyn Fn(u32) -> u32| {
        (0..8)
            .map(|c| f(c).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    // SW = low 16 bits of 0x18000 + c = 0x8000 + c: read as `w`, -32768 + c.
    let word = "    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> 0x18000:ud\n    mov (M1, 8) SW(0,0)<1> VAL(0,0)<1;1,0>\n    mov (M1, 8) VAL(0,0)<1> SW(0,0)<1;1,0>";
    same_text_in_registers_and_file(&scalar_kernel(word), &launch(&lanes(&|c| 0xffff_8000 + c)));
    // The same bytes read through a `uw` view: zero-extended, 0x8000 + c.
    same_text_in_registers_and_file(
        &scalar_kernel(&word.replace("SW(0,0)<1;1,0>", "UW(0,0)<1;1,0>")),
        &launch(&lanes(&|c| 0x8000 + c)),
    );
    // The same from 0x17fff + c: channel 0 keeps 0x7fff, positive.
    same_text_in_registers_and_file(
        &scalar_kernel(&word.replace("0x18000", "0x17fff")),
        &launch(&lanes(&|c| {
            if c == 0 {
                0x7fff
            } else {
                0xffff_8000 + c - 1
            }
        })),
    );
    // SB = low 8 bits of 0x1fe + c: 0xfe, 0xff, 0, 1, ...; read as `b`, sign-extended.
    let byte = "    add (M1, 8) VAL(0,0)<1> VAL(0,0)<1;1,0> 0x1fe:ud\n    mov (M1, 8) SB(0,0)<1> VAL(0,0)<1;1,0>\n    mov (M1, 8) VAL(0,0)<1> SB(0,0)<1;1,0>";
    same_text_in_registers_and_file(
        &scalar_kernel(byte),
        &launch(&lanes(&|c| ((0xfe + c) as u8 as i8) as i32 as u32)),
    );
}

/// `ret` with channels waiting at a later label ends only the running channels (atomjit ends
/// the whole thread at a `ret` only where no `goto` or join point comes before it, when every
/// channel runs).
#[test]
fn ret_with_channels_waiting_ends_only_the_running_ones() {
    same_in_registers_and_file(
        "    mov (M1, 8) VAL(0,0)<1> 0x1:ud\n    cmp.lt (M1, 8) P1 OFF(0,0)<1;1,0> 0x10:ud\n    (P1) goto (M1, 8) LOW\n    ret (M1, 1)\nLOW:\n    svm_scatter.4.1 (M1, 8) OUT.0 VAL.0",
        &format!("{ONE_THREAD}.buffer a u32[8] = 0\n.buffer b u32[8] = 0\n.expect b == {{1, 1, 1, 1, 0, 0, 0, 0}}\n"),
    );
}

/// A SIMD16 `svm_atomic` issued as two 8-channel messages, as IGC writes it, runs as one
/// fused region on the JIT (the second message's channels all follow the first's); a fault in
/// the second message leaves exactly what running the messages one after the other leaves:
/// the whole first message and the second's channels before the faulting one.
#[test]
fn a_fault_in_the_second_message_finds_the_first_done() {
    // Channel c adds 1 at A + 4c, except channels with bit 1 and bit 3 set (10, 11, 14, 15),
    // whose offsets get 2^29 added: channel 10, in the second message, faults first.
    let source = r#".version 4.1
.kernel "k"
.decl LID v_type=G type=uw num_elts=16 align=hword
.decl A v_type=G type=uq num_elts=1 align=qword
.decl OFF v_type=G type=ud num_elts=16 align=hword
.decl BAD v_type=G type=ud num_elts=16 align=hword
.decl T v_type=G type=ud num_elts=16 align=hword
.decl ADDR v_type=G type=uq num_elts=16 align=hword
.decl ONE v_type=G type=ud num_elts=16 align=hword
.input LID offset=32 size=32
.input A offset=160 size=8
.kernel_attr SimdSize=16
.function "_main_0"

_main_0:
    and (M1, 16) BAD(0,0)<1> LID(0,0)<1;1,0> 0x2:ud
    shr (M1, 16) T(0,0)<1> LID(0,0)<1;1,0> 0x2:ud
    and (M1, 16) BAD(0,0)<1> BAD(0,0)<1;1,0> T(0,0)<1;1,0>
    shl (M1, 16) BAD(0,0)<1> BAD(0,0)<1;1,0> 0x1c:ud
    shl (M1, 16) OFF(0,0)<1> LID(0,0)<1;1,0> 0x2:ud
    add (M1, 16) OFF(0,0)<1> OFF(0,0)<1;1,0> BAD(0,0)<1;1,0>
    mov (M1, 16) ADDR(0,0)<1> OFF(0,0)<1;1,0>
    add (M1, 16) ADDR(0,0)<1> ADDR(0,0)<1;1,0> A(0,0)<0;1,0>
    mov (M1, 16) ONE(0,0)<1> 0x1:ud
    svm_atomic.add (M1, 8) ADDR.0 %null.0 ONE.0 %null.0
    svm_atomic.add (M3, 8) ADDR.64 %null.0 ONE.32 %null.0
    ret (M1, 1)
"#;
    // Both backends leave the same buffer (`run_text` compares them) and count the same
    // atomics: the ten channels before the fault.
    let launch = ".block 16\n.buffer a u32[16] = 0\n";
    let r = run_text(source, launch).unwrap();
    for backend in [Backend::Interp, Backend::Jit] {
        let mut l = LaunchText::new();
        l.push("launch", launch);
        let module = engine(backend, 1, true)
            .load_with_launch("k.visaasm", source, &l)
            .unwrap();
        let report = module.run("k", &Overrides::default()).unwrap();
        let atomics: u64 = report.launch.stats.atomics.iter().sum();
        assert_eq!(atomics, 10, "{backend}");
    }
    let failure = r.failure.map(|f| f.to_string()).unwrap_or_default();
    assert!(failure.contains("lane 10"), "{failure}");
    assert!(failure.contains("(M3, 8)"), "{failure}");
    let words: Vec<u32> = r.buffers[0]
        .bytes
        .chunks(4)
        .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
        .collect();
    let expected: Vec<u32> = (0..16).map(|c| u32::from(c < 10)).collect();
    assert_eq!(words, expected);
}
