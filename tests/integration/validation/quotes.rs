//! Every quote in a rule text is verbatim from the document it names.

use atomjit::valid::rules::ALL;
use std::path::PathBuf;

/// Where the reference documents are: `$ATOMJIT_SPEC_DIR`, `spec/`, `docs/spec/`, or the shared
/// `../shared/spec/` beside the repository.
fn spec_dir() -> Option<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let candidates = [
        std::env::var_os("ATOMJIT_SPEC_DIR").map(PathBuf::from),
        Some(root.join("spec")),
        Some(root.join("docs/spec")),
        Some(root.join("../shared/spec")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|d| d.join("000_6d05a8552870c0ae.txt").is_file())
}

fn normalize(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `(file, quote)` for every `NNN_hash.txt: "quote"` in `rule`. A quote ends at a `"` followed
/// by the end, `,`, ` (` or `)`; ` ... ` inside a quote separates verbatim pieces.
fn quotes(rule: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = rule;
    while let Some(i) = rest.find(".txt: \"") {
        let file_start = rest[..i].rfind([' ', '(']).map_or(0, |j| j + 1);
        let file = format!("{}.txt", &rest[file_start..i]);
        let body = &rest[i + 7..];
        let bytes = body.as_bytes();
        let end = (0..bytes.len())
            .find(|&j| {
                bytes[j] == b'"'
                    && (j + 1 == bytes.len()
                        || matches!(bytes[j + 1], b',' | b')')
                        || body[j + 1..].starts_with(" ("))
            })
            .unwrap_or(bytes.len());
        out.push((file, body[..end].to_string()));
        rest = &body[end..];
    }
    out
}

#[test]
fn quotes_are_verbatim() {
    let Some(dir) = spec_dir() else {
        eprintln!("reference documents not found; set ATOMJIT_SPEC_DIR to check the quotes");
        return;
    };
    let mut checked = 0;
    for rule in ALL {
        for (file, quote) in quotes(rule) {
            let text = std::fs::read_to_string(dir.join(&file))
                .unwrap_or_else(|e| panic!("{file} named in {rule:?}: {e}"));
            let text = normalize(&text);
            for piece in quote.split(" ... ") {
                assert!(
                    text.contains(&normalize(piece)),
                    "{file} does not contain {piece:?} (rule {rule:?})"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 25, "only {checked} quotes found");
}

#[test]
fn quote_parsing() {
    let q = quotes(atomjit::valid::rules::SASS_PAIR_ALIGNED);
    assert_eq!(q.len(), 1);
    assert_eq!(q[0].0, "000_6d05a8552870c0ae.txt");
    assert!(q[0].1.ends_with("naturally aligned based on .sz."));
    let q = quotes(atomjit::valid::rules::ATOMS_SPIN);
    assert!(q[0].1.ends_with("will immediately \"fail\""), "{q:?}");
}
