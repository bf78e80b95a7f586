//! The engine's own policy: binding, and (below) what the command line builds on.

use super::*;

/// Two entries with parameters and one without (the integration tests use it too).
const THREE_ENTRIES: &str = include_str!("../../tests/fixtures/three_entries.ptx");

fn engine() -> Engine {
    let mut config = Config::default();
    config.backend(Backend::Interp).threads(1);
    Engine::new(&config)
}

fn launch(text: &str) -> LaunchText {
    let mut launch = LaunchText::new();
    launch.push("m.launch", text);
    launch
}

#[test]
fn launch_lines_for_one_entry_bind_that_entry_only() {
    let module = engine()
        .load_with_launch(
            "m.ptx",
            THREE_ENTRIES,
            &launch(".kernel store\n.block 1\n.buffer out u32[1] = 0\n.param value u32 = 7\n.expect out[0] == 7\n"),
        )
        .unwrap();
    assert!(module.unbound("store").unwrap().is_none());
    assert!(
        module.unbound("idle").unwrap().is_none(),
        "no parameters: trivially bound"
    );
    let why = module.unbound("count").unwrap().expect("count is unbound");
    assert_eq!((why.file.as_str(), why.span.line), ("m.ptx", 14));

    let report = module.run("store", &Overrides::default()).unwrap();
    assert!(report.passed(), "{report:?}");
    assert_eq!(report.buffer("out").unwrap().as_u32().unwrap(), [7]);
    assert!(module.run("idle", &Overrides::default()).unwrap().passed());
    match module.run("count", &Overrides::default()) {
        Err(Error::Unbound(p)) => assert!(
            p.message.contains(
                "kernel `count` has 3 parameters (counter .u64, unused .u64, n .u32) but the launch binds 0"
            ),
            "{p}"
        ),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("an unbound entry must not run"),
    }
    assert!(matches!(
        module.prepare("count", &Overrides::default(), Backend::Interp, true),
        Err(Error::Unbound(_))
    ));
}

#[test]
fn lines_for_every_entry_must_bind_each_of_them() {
    // Lines outside any `.kernel` section reach every entry: `count` takes three, not two.
    let e = engine()
        .load_with_launch(
            "m.ptx",
            THREE_ENTRIES,
            &launch(".buffer out u32[1] = 0\n.param value u32 = 7\n"),
        )
        .err()
        .expect("count cannot take store's lines");
    match e {
        Error::Parse(p) => {
            assert_eq!((p.file.as_str(), p.span.line), ("m.launch", 2));
            assert!(p.message.contains("kernel `count` has 3 parameters"), "{p}");
        }
        other => panic!("{other}"),
    }
}

#[test]
fn a_launch_that_binds_nothing_runnable_is_refused_but_inspection_loads() {
    let one = "
.version 8.0
.target sm_80
.address_size 64
.visible .entry store(.param .u64 out)
{
    ret;
}
";
    match engine().load_with_launch("one.ptx", one, &launch(".grid 2\n")) {
        Err(Error::Parse(p)) => assert!(p.message.contains("but the launch binds 0"), "{p}"),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("nothing in this launch could run"),
    }
    // Without a launch (check, dump) the entry loads unbound.
    let module = engine().load("one.ptx", one).unwrap();
    assert!(module.unbound("store").unwrap().is_some());
    assert!(matches!(
        module.run("store", &Overrides::default()),
        Err(Error::Unbound(_))
    ));
    // With an entry that needs nothing, an empty launch loads the module.
    let module = engine()
        .load_with_launch("m.ptx", THREE_ENTRIES, &LaunchText::new())
        .unwrap();
    assert!(module.run("idle", &Overrides::default()).unwrap().passed());
}
