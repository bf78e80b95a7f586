//! Runs every file of the litmus suite under `tests/litmus/`: no forbidden outcome may appear.

use atomjit::litmus::{self, Options};

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
        let name = path.display().to_string();
        let test = litmus::parse(&text).unwrap_or_else(|e| panic!("{name}:{e}"));
        let options = Options {
            iterations: 2000,
            ..Options::default()
        };
        let report = litmus::run(&test, &name, &options).unwrap_or_else(|e| panic!("{name}: {e}"));
        println!("{name}: {:?}", report.histogram());
        assert_eq!(report.iterations, 2000);
        assert!(!report.forbidden_seen(), "{name}: forbidden outcome seen");
    }
}
