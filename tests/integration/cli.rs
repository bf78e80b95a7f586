//! The command line: exit codes, rendered diagnostics, reports, JSON, overrides.

use super::{atomjit, temp_file};

fn program(name: &str) -> String {
    format!("{}/programs/sass/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn run_prints_launch_atomics_and_expectations() {
    let (code, out, err) = atomjit(&["run", &program("ring_inc.s"), "--backend", "interp"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("kernel ring: grid 2x1x1, block 100x1x1, shared 4 B, 200 threads"),
        "{out}"
    );
    assert!(out.contains("atomics: 400 (add 200, inc 200)"), "{out}");
    assert!(out.contains("expect final == 4: ok"), "{out}");
    assert!(out.contains("wall time"), "{out}");
}

#[test]
fn failed_expectation_exits_1_with_expected_and_actual() {
    let (code, out, _) = atomjit(&[
        "run",
        &program("ring_inc.s"),
        "--backend",
        "interp",
        "--expect",
        "final == 5",
    ]);
    assert_eq!(code, 1);
    assert!(
        out.contains("expect final == 5: FAILED (expected == 5, actual final[0] = 4)"),
        "{out}"
    );
}

#[test]
fn parse_error_exits_2_with_location_and_caret() {
    let path = temp_file(
        "bad.s",
        ".kernel k\n  MOV R1, 0x1 ;\n  ATOMS.FROB R0, [0x0], R1 ;\n  EXIT ;\n",
    );
    let (code, _, err) = atomjit(&["check", &path]);
    assert_eq!(code, 2);
    assert!(err.contains(":3:"), "file:line:col in {err}");
    assert!(
        err.contains("ATOMS.FROB R0, [0x0], R1"),
        "the line in {err}"
    );
    assert!(err.contains('^'), "a caret in {err}");
}

#[test]
fn validation_error_exits_2_and_quotes_the_rule() {
    let path = temp_file(
        "bad.s",
        ".kernel k\n.shared 16\n  ATOMS.ADD.U64 R0, [0x0], R2 ;\n  EXIT ;\n",
    );
    let (code, _, err) = atomjit(&["run", &path]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("000_6d05a8552870c0ae.txt"), "{err}");
    assert!(err.contains(":3:"), "{err}");
}

#[test]
fn trap_exits_3() {
    let path = temp_file(
        "trap.s",
        ".kernel k\n.block 1\n.shared 4\n  ATOMS.ADD RZ, [0x4], R0 ;\n  EXIT ;\n",
    );
    let (code, out, _) = atomjit(&["run", &path, "--backend", "interp"]);
    assert_eq!(code, 3);
    assert!(out.contains("address out of range"), "{out}");
    assert!(out.contains("line 4"), "{out}");
}

#[test]
fn watchdog_exits_4() {
    let path = temp_file("loop.s", ".kernel k\nloop:\n  BRA loop ;\n  EXIT ;\n");
    let (code, out, _) = atomjit(&["run", &path, "--backend", "interp", "--timeout", "0.3"]);
    assert_eq!(code, 4, "{out}");
    assert!(out.contains("watchdog"), "{out}");
}

#[test]
fn usage_errors_exit_2() {
    let ring = program("ring_inc.s");
    for args in [
        vec!["run", "/nonexistent/prog.s"],
        vec!["run", ring.as_str(), "--kernel", "nope"],
        vec!["run", ring.as_str(), "--grid", "0"],
        vec!["run", ring.as_str(), "--block", "2048"],
        vec!["run", ring.as_str(), "--set", "slots"],
        vec!["run", ring.as_str(), "--set", "nothere=1"],
        vec!["run", ring.as_str(), "--expect", "sum(slots) =="],
        vec!["run", ring.as_str(), "--dump", "nothere"],
        vec!["frobnicate"],
    ] {
        let (code, out, err) = atomjit(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(!err.is_empty(), "{args:?} explains itself");
    }
}

#[test]
fn json_report_and_dump() {
    let (code, out, _) = atomjit(&[
        "run",
        &program("minmax.s"),
        "--backend",
        "interp",
        "--json",
        "--dump",
        "res",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v[0]["kernel"], "minmax");
    assert_eq!(v[0]["atomics"]["min"], 64);
    assert_eq!(
        v[0]["buffers"]["res"],
        serde_json::json!([4294967280u64, 0, 15, 4294967295u64])
    );
    assert_eq!(v[0]["exit_code"], 0);
}

#[test]
fn overrides_from_the_command_line() {
    let (code, out, _) = atomjit(&[
        "run",
        &program("hist_shared.s"),
        "--backend",
        "interp",
        "--grid",
        "2",
        "--set",
        "data=7",
        "--expect",
        "hist[7] == 512",
        "--expect",
        "sum(hist) == 512",
    ]);
    // The file's own `sum(hist) == 16384` fails with 2 CTAs; the extra ones hold.
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("expect hist[7] == 512: ok"), "{out}");
    assert!(out.contains("expect sum(hist) == 512: ok"), "{out}");
}

#[test]
fn check_and_dump_ir() {
    let (code, out, _) = atomjit(&["check", &program("cast_spin.s")]);
    assert_eq!(code, 0);
    assert!(out.contains("cast_spin"), "{out}");
    let (code, out, _) = atomjit(&["dump", "ir", &program("cast_spin.s")]);
    assert_eq!(code, 0);
    assert!(out.to_lowercase().contains("cast"), "{out}");
    assert!(out.contains("spin"), "{out}");
}

#[test]
fn diagnostics_that_cannot_be_written_do_not_panic() {
    // Standard error on a full device (`2>/dev/full`) and on a pipe whose reader is gone
    // (`2>&1 | head -0`): the error is dropped, the exit status still says what happened.
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    let Ok(full) = full else {
        return; // not Linux: no /dev/full to write to
    };
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_atomjit"))
        .args(["run", "missing.s"])
        .stderr(full)
        .status()
        .expect("atomjit runs");
    assert_eq!(status.code(), Some(2), "a missing file is a usage error");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_atomjit"))
        .args(["run", "missing.s"])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("atomjit runs");
    drop(child.stderr.take()); // the reader goes away before anything is written
    let status = child.wait().expect("atomjit exits");
    assert_eq!(status.code(), Some(2));
}

#[test]
fn command_line_expectations_and_dumps_are_checked_before_the_run() {
    let p = program("hist_shared.s");
    for (args, want) in [
        (
            vec!["--expect", "nosuch == 1"],
            "no kernel run has a buffer named `nosuch`",
        ),
        (
            vec!["--expect", "hist[99999] == 1"],
            "index 99999 is outside `hist`",
        ),
        (
            vec!["--dump", "nosuch"],
            "no kernel run has a buffer named `nosuch`",
        ),
    ] {
        let mut all = vec!["run", p.as_str()];
        all.extend(args.iter().copied());
        let (code, out, err) = atomjit(&all);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!out.contains("kernel "), "{args:?}: nothing ran: {out}");
    }
    // An index past the end of a later kernel's buffer is found before the first kernel runs.
    let edges = program("atomics_edges.s");
    let (code, out, err) = atomjit(&["run", &edges, "--expect", "g[100] == 1"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("index 100 is outside `g`"), "{err}");
    assert!(!out.contains("kernel "), "nothing ran: {out}");
    // In a file of two kernels, an expectation and a dump apply to the one with the buffer.
    let (code, out, err) = atomjit(&[
        "run",
        &edges,
        "--backend",
        "interp",
        "--expect",
        "g[0] >= 0",
        "--dump",
        "g",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches("expect g[0] >= 0: ok").count(), 1, "{out}");
    assert_eq!(out.matches("  g u32[43] = {").count(), 1, "{out}");
}

#[test]
fn contradictory_or_empty_options_are_usage_errors() {
    let p = program("hist_shared.s");
    let (code, _, err) = atomjit(&["run", &p, "--deterministic", "--threads", "4"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--deterministic runs on one host thread"),
        "{err}"
    );
    // A kernel named twice runs once, with the command line's launch lines once.
    let (code, out, err) = atomjit(&["run", &p, "--kernel", "hist", "--kernel", "hist"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches("kernel hist:").count(), 1, "{out}");
    let litmus = format!(
        "{}/tests/litmus/mp_fence_sc.litmus",
        env!("CARGO_MANIFEST_DIR")
    );
    let (code, _, err) = atomjit(&["litmus", &litmus, "--stop-after", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--stop-after must be at least 1"), "{err}");
}

#[test]
fn diff_reports_the_shared_outcome_with_the_runs_status_json_and_dumps() {
    // Both backends trap the same way: they agree, and the exit status is the trap's.
    let trap = super::temp_file(
        "trap.s",
        ".kernel k\n.block 1\n.buffer out u32[1] = 7\nSTG.E [RZ.64], RZ ;\nEXIT ;\n",
    );
    let (code, out, err) = atomjit(&["run", &trap, "--diff", "--dump", "out"]);
    assert_eq!(code, 3, "{out}{err}");
    assert!(
        out.contains("agree (memory, statistics, traps): both failed: trap"),
        "{out}"
    );
    assert!(out.contains("  out u32[1] = {7}"), "{out}");
    // Runs stopped by the time limit are not compared: the diff is inconclusive.
    let spin = super::temp_file(
        "spin.s",
        ".kernel k\n.block 1\n.buffer out u32[1] = 0\nL:\nIADD3 R0, R0, 0x1, RZ ;\nBRA L ;\n",
    );
    let (code, out, err) = atomjit(&["run", &spin, "--diff", "--timeout", "0.2"]);
    assert_eq!(code, 4, "{out}{err}");
    assert!(
        out.contains("inconclusive: interp reached the time limit, jit reached the time limit"),
        "{out}"
    );
    // JSON: the verdict with both reports.
    let (code, out, err) = atomjit(&["run", &program("ring_inc.s"), "--diff", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v[0]["agree"], serde_json::Value::Bool(true), "{out}");
    assert_eq!(v[0]["interp"]["backend"], "interp", "{out}");
    assert_eq!(v[0]["jit"]["backend"], "jit", "{out}");
}

#[test]
fn the_watchdog_tells_a_deadlock_from_a_time_limit() {
    // A time limit: the launch was still running, which the report must not call a deadlock.
    let spin = super::temp_file(
        "spin.s",
        ".kernel k\n.block 1\nL:\nIADD3 R0, R0, 0x1, RZ ;\nBRA L ;\n",
    );
    let (code, out, err) = atomjit(&["run", &spin, "--timeout", "0.2"]);
    assert_eq!(code, 4, "{out}{err}");
    let all = format!("{out}{err}");
    assert!(
        all.contains("reached the time limit while still progressing"),
        "{all}"
    );
    assert!(all.contains("0 of 1 CTAs finished"), "{all}");
    assert!(!all.contains("stopped making progress"), "{all}");
    // Spinning on a flag nobody raises: the time limit, with every CTA waiting.
    let flag = super::temp_file(
        "flag.s",
        ".kernel k\n.block 1\n.buffer flag u32[1] = 0\n\
         IMAD.WIDE.U32 R4, RZ, 0x4, c[0x0][flag] ;\nL:\nLDG.E.STRONG.GPU R1, [R4.64] ;\n\
         ISETP.EQ.AND P0, PT, R1, RZ, PT ;\n@P0 BRA L ;\nEXIT ;\n",
    );
    let (code, out, err) = atomjit(&["run", &flag, "--timeout", "0.2", "--json"]);
    assert_eq!(code, 4, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let watchdog = &v[0]["failure"]["watchdog"];
    assert_eq!(watchdog["kind"], "time_limit", "{out}");
    assert_eq!(watchdog["progressing"], false, "{out}");
    assert!(
        watchdog["cause"]
            .as_str()
            .expect("a cause")
            .contains("every resident CTA was waiting"),
        "{out}"
    );
    // The loads it spun on are counted, although the launch did not finish.
    assert!(
        v[0]["warp_instructions"].as_u64().expect("a count") > 0,
        "{out}"
    );
    let (_, out, _) = atomjit(&["run", &flag, "--timeout", "0.2"]);
    assert!(
        out.contains("reached the time limit without progress"),
        "{out}"
    );
    // A grid no host finishes in the time, of CTAs that each finish at once: progressing.
    let many = super::temp_file("many.s", ".kernel k\n.grid 2147483647\n.block 32\nEXIT ;\n");
    let (code, out, err) = atomjit(&["run", &many, "--timeout", "0.2", "--threads", "2"]);
    assert_eq!(code, 4, "{out}{err}");
    assert!(
        out.contains("reached the time limit while still progressing"),
        "{out}"
    );
    assert!(out.contains("CTAs were still running"), "{out}");
    // A deadlock: the two warps of a CTA wait at different barriers, each of which needs
    // every thread of the CTA.
    let stuck = super::temp_file(
        "stuck.s",
        ".kernel k\n.block 64\nS2R R0, SR_TID.X ;\nISETP.GE.U32.AND P0, PT, R0, 0x20, PT ;\n\
         @P0 BRA `(.L_x_1) ;\nBAR.SYNC 0x0 ;\nEXIT ;\n.L_x_1:\nBAR.SYNC 0x1 ;\nEXIT ;\n",
    );
    let (code, out, err) = atomjit(&["run", &stuck, "--timeout", "5"]);
    let all = format!("{out}{err}");
    assert_eq!(code, 4, "{all}");
    assert!(all.contains("stopped making progress: deadlock"), "{all}");
}

#[test]
fn reports_after_a_trap_count_what_ran() {
    // Every CTA adds 1 per thread, then CTA 7 stores to address 0 and traps.
    let trap = super::temp_file(
        "trap.s",
        ".kernel k\n.grid 8\n.block 32\n.buffer counter u32[1] = 0\n\
         MOV R6, 0x1 ;\nIMAD.WIDE.U32 R4, RZ, 0x4, c[0x0][counter] ;\n\
         RED.E.ADD.STRONG.GPU [R4.64], R6 ;\nS2R R2, SR_CTAID.X ;\n\
         ISETP.NE.AND P0, PT, R2, 0x7, PT ;\n@P0 EXIT ;\nSTG.E [RZ.64], RZ ;\nEXIT ;\n",
    );
    for backend in ["jit", "interp"] {
        let args = ["run", &trap, "--deterministic", "--backend", backend];
        let (code, out, err) = atomjit(&[&args[..], &["--json", "--dump", "counter"]].concat());
        assert_eq!(code, 3, "{backend}: {out}{err}");
        let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
        assert!(v[0]["failure"]["trap"].is_object(), "{backend}: {out}");
        // The deterministic run finishes CTAs 0-6, and CTA 7 adds before it traps.
        assert_eq!(v[0]["buffers"]["counter"][0], 256, "{backend}: {out}");
        assert_eq!(v[0]["atomics"]["add"], 256, "{backend}: {out}");
        // Six warp instructions in each CTA that exits at `@P0 EXIT`, seven in the one that
        // traps at the store.
        assert_eq!(v[0]["warp_instructions"], 7 * 6 + 7, "{backend}: {out}");
        assert_eq!(v[0]["host_threads"], 1, "{backend}: {out}");
        let (_, out, _) = atomjit(&args);
        assert!(
            out.contains("before it stopped: 7 CTAs finished, 49 warp instructions, 256 atomics"),
            "{backend}: {out}"
        );
    }
}

#[test]
fn litmus_json_keeps_the_files_that_failed() {
    let good = format!(
        "{}/tests/litmus/mp_fence_sc.litmus",
        env!("CARGO_MANIFEST_DIR")
    );
    let bad = super::temp_file("bad.litmus", "garbage\n");
    let (code, out, err) = atomjit(&["litmus", &good, &bad, "--iterations", "20", "--json"]);
    assert_eq!(code, 2, "{out}{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let files = v.as_array().expect("an array");
    assert_eq!(files.len(), 2, "{out}");
    assert_eq!(files[0]["file"], good.as_str());
    assert_eq!(files[1]["file"], bad.as_str());
    assert_eq!(files[1]["exit_code"], 2);
    // Litmus files are read as program files are: an endless one is refused.
    if std::path::Path::new("/dev/zero").exists() {
        let (code, _, err) = atomjit(&["litmus", "/dev/zero"]);
        assert_eq!(code, 2);
        assert!(err.contains("larger than"), "{err}");
    }
    assert!(
        files[1]["error"]
            .as_str()
            .unwrap()
            .contains("missing `.ptx` line"),
        "{out}"
    );
}

#[test]
fn a_kernel_too_large_for_the_jit_runs_on_the_interpreter_and_says_so() {
    let n = atomjit::engine::JIT_MAX_INSTS + 1;
    let body = "IADD3 R0, R0, 0x1, RZ ;\n".repeat(n);
    let src = format!(
        ".kernel big\n.block 1\n.buffer out u32[1] = 0\n{body}STG.E [R2.64], R0 ;\nEXIT ;\n\
         .expect out == {n}\n"
    );
    let src = src.replace(
        "STG.E [R2.64], R0 ;",
        "MOV R2, c[0x0][out] ;\nMOV R3, c[0x0][out+0x4] ;\nSTG.E [R2.64], R0 ;",
    );
    let path = super::temp_file("big.s", &src);
    let (code, out, err) = atomjit(&["run", &path, "--backend", "jit"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("backend interp"), "{out}");
    assert!(
        out.contains("more than the JIT compiles within its budget"),
        "{out}"
    );
    let (code, out, err) = atomjit(&["run", &path, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["backend"], "interp");
    assert!(v[0]["fallback"].as_str().unwrap().contains("instructions"));
}

#[test]
fn a_kernel_over_the_compile_budget_of_a_short_timeout_runs_on_the_interpreter_and_says_so() {
    let src = super::engine::generated_kernel(3000);
    let path = super::temp_file("budget.s", &src);
    let (code, out, err) = atomjit(&["run", &path, "--backend", "jit", "--timeout", "0.05"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("backend interp"), "{out}");
    assert!(
        out.contains("note: kernel `gen` has 3004 instructions, estimated to take 0.150 s"),
        "{out}"
    );
    assert!(out.contains("0.050 s time limit"), "{out}");
    let (code, out, err) = atomjit(&["run", &path, "--timeout", "0.05", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["backend"], "interp");
    assert!(v[0]["fallback"]
        .as_str()
        .unwrap()
        .contains("compile budget"));
    // No limit: the JIT compiles it.
    let (code, out, err) = atomjit(&["run", &path, "--timeout", "0", "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["backend"], "jit");
    assert!(v[0]["fallback"].is_null(), "{out}");
}
