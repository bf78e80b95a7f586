//! Runs every file of the litmus suite under `tests/litmus/`: no forbidden outcome may appear
//! and every histogram is non-empty. Weak outcomes are only printed (they are probabilistic).

#[test]
fn litmus_suite_has_no_forbidden_outcome() {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/litmus"));
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|e| e.to_str()) == Some("litmus"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let test =
            atomjit::litmus::parse(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let report = atomjit::litmus::run(&test, 200, 2)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        println!("{}: {:?}", path.display(), report.histogram);
        assert_eq!(report.histogram.values().sum::<u64>(), 200);
        assert!(
            !report.forbidden_seen(),
            "{}: forbidden outcome seen",
            path.display()
        );
    }
}
