//! Bad input of every kind a fuzzer found ends in a clear error, never a panic, an abort or a
//! hang: command-line values that would overflow a conversion or an allocation, device memory
//! the host cannot hold, standard output that goes away.

use super::{atomjit, temp_file};
use std::io::Read;
use std::process::{Command, Stdio};

fn counter() -> String {
    format!("{}/programs/sass/counter.s", env!("CARGO_MANIFEST_DIR"))
}

/// The exit code and stderr of a run that must fail as a usage error (2) with a message and
/// no panic.
fn assert_usage_error(args: &[&str]) -> String {
    let (code, out, err) = atomjit(args);
    assert_eq!(code, 2, "{args:?}: {out}{err}");
    assert!(!err.contains("panicked"), "{args:?}: {err}");
    assert!(!err.trim().is_empty(), "{args:?} explains itself");
    err
}

#[test]
fn seconds_must_be_finite_and_not_negative() {
    let p = counter();
    for bad in ["1e20", "inf", "nan", "-1", "x", "1e-9"] {
        let err = assert_usage_error(&["run", &p, &format!("--timeout={bad}")]);
        assert!(err.contains("--timeout"), "{err}");
        assert_usage_error(&["bench", &p, &format!("--timeout={bad}")]);
    }
    // The smallest and largest accepted values are not usage errors.
    for good in ["0", "0.001", "1e9"] {
        let (code, out, err) = atomjit(&["run", &p, "--timeout", good]);
        assert_ne!(code, 2, "--timeout {good}: {out}{err}");
    }
    let litmus = format!(
        "{}/tests/litmus/mp_relaxed.litmus",
        env!("CARGO_MANIFEST_DIR")
    );
    assert_usage_error(&["litmus", &litmus, "--timeout", "inf"]);
    assert_usage_error(&["litmus", &litmus, "--time-limit", "1e30"]);
}

#[test]
fn bench_counts_and_threads_are_bounded() {
    let p = counter();
    for args in [
        ["bench", &p, "--iterations", "18446744073709551615"],
        ["bench", &p, "--iterations", "1000000000000"],
        ["bench", &p, "--iterations", "0"],
        ["bench", &p, "--threads", "0"],
        ["run", &p, "--threads", "0"],
        ["run", &p, "--threads", "100000"],
    ] {
        assert_usage_error(&args);
    }
}

#[test]
fn bench_has_a_watchdog() {
    // A kernel that spins forever: `bench` stops it like `run` does (exit 4), instead of
    // hanging.
    let path = temp_file(
        "spin.s",
        ".kernel spin\n.shared 4\nloop:\n        LDS R0, [0x0] ;\n        \
         ISETP.EQ.U32.AND P0, PT, R0, RZ, PT ;\n        @P0 BRA loop ;\n        EXIT ;\n",
    );
    let (code, out, err) = atomjit(&["bench", &path, "--iterations", "1", "--timeout", "0.3"]);
    assert_eq!(code, 4, "{out}{err}");
    assert!(out.contains("watchdog"), "{out}{err}");
}

#[test]
fn device_memory_larger_than_the_host_is_an_error() {
    // 2^35 bytes (more than this project's machines have) and a sum past 2^64.
    for decl in [
        ".buffer x u64[4294967296] = 0",
        ".buffer x u64[2305843009213693951] = 0\n.buffer y u64[2305843009213693951] = 0",
    ] {
        let path = temp_file("huge.s", &format!(".kernel k\n{decl}\n        EXIT ;\n"));
        let (code, out, err) = atomjit(&["run", &path]);
        assert_eq!(code, 2, "{decl}: {out}{err}");
        assert!(err.contains("cannot allocate"), "{decl}: {err}");
    }
}

#[test]
fn an_expectation_on_an_index_past_the_end_is_rejected() {
    let path = temp_file(
        "far.s",
        ".kernel k\n.buffer x u32[4] = 0\n        EXIT ;\n.expect x[18446744073709551615] == 0\n",
    );
    let (code, out, err) = atomjit(&["run", &path]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("outside `x`"), "{err}");
    // From the command line it is checked before the run too: a usage error (2).
    let p = counter();
    let (code, out, err) = atomjit(&["run", &p, "--expect", "count[18446744073709551615] == 0"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("index 18446744073709551615 is outside `count` (1 elements)"),
        "{err}"
    );
    assert!(!out.contains("kernel "), "nothing ran: {out}");
}

#[test]
fn a_full_standard_output_is_an_error_and_a_closed_pipe_ends_quietly() {
    let p = counter();
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full");
    if let Ok(full) = full {
        let out = Command::new(env!("CARGO_BIN_EXE_atomjit"))
            .args(["check", &p])
            .stdout(full)
            .output()
            .expect("atomjit runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("cannot write to standard output"), "{err}");
    }
    // Read one byte and close the pipe: the rest of the report has nowhere to go.
    let mut child = Command::new(env!("CARGO_BIN_EXE_atomjit"))
        .args(["run", &p])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("atomjit runs");
    let mut stdout = child.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    stdout.read_exact(&mut byte).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    // Either the report fit in the pipe before it closed (0) or the write failed (141).
    assert!(
        matches!(out.status.code(), Some(0 | 141)),
        "{:?} {err}",
        out.status
    );
}

/// Writes `bytes` to a temporary file `name` and returns its path.
fn temp_bytes(name: &str, bytes: &[u8]) -> String {
    let path = temp_file(name, "");
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn a_byte_order_mark_is_skipped() {
    let text = std::fs::read(counter()).unwrap();
    let with_bom = [&[0xef, 0xbb, 0xbf][..], &text].concat();
    let path = temp_bytes("bom.s", &with_bom);
    let (code, out, err) = atomjit(&["run", &path]);
    assert_eq!(code, 0, "{out}{err}");
}

#[test]
fn invalid_utf8_and_nul_bytes_are_errors_with_their_position() {
    let path = temp_bytes("bad.s", b".kernel k\nEXIT ;\n  \xff\xfe ;\n");
    let err = assert_usage_error(&["check", &path]);
    assert!(err.contains("invalid UTF-8 at line 3, column 3"), "{err}");
    let path = temp_bytes("nul.s", b".kernel k\nEX\0IT ;\n");
    let err = assert_usage_error(&["check", &path]);
    assert!(err.contains("a NUL byte at line 2, column 3"), "{err}");
    assert!(!err.contains('\0'), "the NUL is not echoed");
}

#[test]
fn ptx_is_recognised_by_its_text_when_the_name_does_not_say() {
    let ptx = std::fs::read_to_string(format!(
        "{}/programs/ptx/hist_shared.ptx",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let launch = std::fs::read_to_string(format!(
        "{}/programs/ptx/hist_shared.launch",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    for name in ["hist.PTX", "hist.txt", "hist"] {
        let path = temp_file(name, &ptx);
        let launch_path = temp_file("hist.launch", &launch);
        let (code, out, err) = atomjit(&["run", &path, "--launch", &launch_path]);
        assert_eq!(code, 0, "{name}: {out}{err}");
    }
}

#[test]
fn an_endless_input_is_refused_at_the_maximum_file_size() {
    if !std::path::Path::new("/dev/zero").exists() {
        return;
    }
    let err = assert_usage_error(&["check", "/dev/zero"]);
    assert!(err.contains("larger than 268435456 bytes"), "{err}");
}

#[test]
fn a_diagnostic_shows_an_excerpt_of_a_huge_line() {
    // One line of a million bytes with an unknown instruction far into it: the error names the
    // line and column and shows a few hundred bytes around it, not the line (twice).
    let mut line = String::from("        ");
    line.push_str(&"NOP ; ".repeat(100_000));
    let col = line.len() + 1;
    line.push_str(&format!("FROB{} R0 ;", "X".repeat(400_000)));
    let path = temp_file("huge.s", &format!(".kernel k\n{line}\nEXIT ;\n"));
    let err = assert_usage_error(&["check", &path]);
    assert!(err.len() < 8_000, "{} bytes of diagnostics", err.len());
    assert!(
        err.contains(&format!(":2:{col}")),
        "{}",
        &err[..err.len().min(2000)]
    );
    assert!(err.contains("FROBXXX"), "{}", &err[..err.len().min(2000)]);
    assert!(err.contains('^'), "a caret marks the spot: {err}");
}

#[test]
fn dialect_forces_the_dialect_whatever_the_name() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let ptx = std::fs::read_to_string(format!("{dir}/programs/ptx/hist_shared.ptx")).unwrap();
    let launch = std::fs::read_to_string(format!("{dir}/programs/ptx/hist_shared.launch")).unwrap();
    let path = temp_file("hist.s", &ptx);
    let launch_path = temp_file("hist.launch", &launch);
    // Named .s, it is SASS and does not parse; --dialect ptx runs it.
    assert_usage_error(&["run", &path, "--launch", &launch_path]);
    let (code, out, err) = atomjit(&["run", &path, "--launch", &launch_path, "--dialect", "ptx"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = atomjit(&["--dialect", "ptx", "check", &path]);
    assert_eq!(code, 0, "{out}{err}");
    assert_usage_error(&["run", &path, "--dialect", "cuda"]);
}

#[test]
fn device_memory_is_refused_beyond_what_is_available() {
    // A buffer of a little more than the memory available: refused before anything is
    // allocated (the run no longer copies buffers back, so the guard counts them once).
    let Some(available) = atomjit::exec::memory::available_memory() else {
        return; // not Linux: nothing to measure against
    };
    let elems = (available + (1 << 30)) / 8;
    let path = temp_file(
        "over.s",
        &format!(".kernel k\n.buffer x u64[{elems}] = 0\n        EXIT ;\n"),
    );
    let err = assert_usage_error(&["run", &path]);
    assert!(err.contains("bytes of host memory"), "{err}");
}

/// Peak resident memory (`VmHWM`) of `atomjit ARGS`, in bytes, measured by GNU time; `None`
/// where `/usr/bin/time` is missing (the test then prints why and checks nothing).
fn peak_rss(args: &[&str]) -> Option<(u64, std::time::Duration)> {
    let time = std::path::Path::new("/usr/bin/time");
    if !time.exists() || cfg!(not(target_os = "linux")) {
        eprintln!("no /usr/bin/time: peak memory not measured");
        return None;
    }
    let start = std::time::Instant::now();
    let out = Command::new(time)
        .args(["-f", "peak-kib %M"])
        .arg(env!("CARGO_BIN_EXE_atomjit"))
        .args(args)
        .output()
        .expect("time runs");
    let wall = start.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let kib: u64 = err
        .lines()
        .find_map(|l| l.strip_prefix("peak-kib "))
        .and_then(|k| k.trim().parse().ok())
        .unwrap_or_else(|| panic!("no figure from time: {err}"));
    Some((kib * 1024, wall))
}

#[test]
fn host_memory_holds_the_buffers_once() {
    // Issue 15, item 6: a 512 MiB buffer initialised with `iota` (every page written) used to
    // peak at twice its size (the arena and the copy the report read back). The report now
    // views the arena, and initialisers write it in place.
    let bytes: u64 = 512 << 20;
    let path = temp_file(
        "iota.s",
        &format!(
            ".kernel k\n.buffer a u32[{}] = iota\n.expect a[5] == 5\n        EXIT ;\n",
            bytes / 4
        ),
    );
    let Some((peak, wall)) = peak_rss(&["run", &path]) else {
        return;
    };
    eprintln!(
        "512 MiB iota buffer: peak RSS {:.0} MiB ({:.2} x the buffer), {wall:.2?}",
        peak as f64 / (1u64 << 20) as f64,
        peak as f64 / bytes as f64
    );
    assert!(
        peak < bytes * 13 / 10 + (64 << 20),
        "peak RSS {peak} bytes for a buffer of {bytes}"
    );
}

#[test]
fn an_initialiser_list_needs_memory_in_proportion_to_its_text() {
    // Issue 15, item 11: a 10M-value list needed 2.1 GB (two tokens, a `Scalar` and a span a
    // value). The list is now one token, lexed again a chunk at a time and converted straight
    // into the element type's bytes. 4M values here (about 31 MB of text, 16 MB of buffer).
    let n = 4_000_000u32;
    let mut text = String::from(".kernel k\n.grid 1\n.block 1\n.buffer a u32[4000000] = {");
    for i in 0..n {
        use std::fmt::Write;
        let _ = write!(text, "{}, ", i.wrapping_mul(2_654_435_761));
    }
    text.push_str("}\n.expect a[1] == 2654435761\n        EXIT ;\n");
    let path = temp_file("list.s", &text);
    let Some((peak, wall)) = peak_rss(&["run", &path]) else {
        return;
    };
    let bytes = text.len() as u64;
    eprintln!(
        "4M-value list ({:.1} MB of text): peak RSS {:.0} MiB ({:.2} x the text), {wall:.2?}",
        bytes as f64 / 1e6,
        peak as f64 / (1u64 << 20) as f64,
        peak as f64 / bytes as f64
    );
    assert!(
        peak < bytes * 5 + (64 << 20),
        "peak RSS {peak} bytes for {bytes} bytes of text"
    );
}

#[test]
fn a_host_that_refuses_memory_gives_an_error_not_a_panic_or_a_hang() {
    // Under an address-space limit (setrlimit through the shell's `ulimit -v`, in a child
    // process), a CTA's 16 MiB shared window cannot be allocated: the launch ends with an
    // error, also with RUST_BACKTRACE set (workers that panicked used to deadlock on the
    // backtrace lock). A limit so tight that a small allocation fails elsewhere aborts the
    // process, which is Rust's policy for small allocations; the large ones are fallible.
    if !std::path::Path::new("/bin/sh").exists() || cfg!(not(target_os = "linux")) {
        return;
    }
    let path = temp_file(
        "shm.s",
        ".kernel k\n.grid 64\n.block 1024\n.shared 16777216\n.buffer out u32[1] = 0\n\
         S2R R0, SR_TID.X ;\nEXIT ;\n",
    );
    let mut clean = 0;
    for kib in [40_000, 60_000, 100_000] {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -v {kib}; exec timeout 60 {} run {path} --backend interp",
                env!("CARGO_BIN_EXE_atomjit")
            ))
            .env("RUST_BACKTRACE", "1")
            .output()
            .expect("sh runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_ne!(out.status.code(), Some(124), "{kib} KiB: hung: {err}");
        assert!(!err.contains("panicked"), "{kib} KiB: {err}");
        if out.status.code() == Some(2)
            && err.contains("cannot allocate 16777216 bytes of shared memory")
        {
            clean += 1;
        }
    }
    assert!(clean > 0, "no limit gave the allocation error");
}

#[test]
fn a_million_value_initialiser_list_and_expectations_over_it() {
    // Element i is i % 1000: the list is read into the buffer, every form of expectation reads
    // it back. The figures are printed (time in proportion to the size), not asserted.
    let n = 1_000_000u64;
    let mut text = format!(".kernel k\n.block 1\n.buffer a u32[{n}] = {{");
    for i in 0..n {
        text.push_str(&format!("{}{}", if i == 0 { "" } else { ", " }, i % 1000));
    }
    text.push_str(
        "}\nEXIT ;\n.expect a < 1000\n.expect a[999999] == 999\n.expect sum(a) == 499500000\n\
         .expect max(a) == 999\n.expect min(a) == 0\n.expect count(a, 7) == 1000\n\
         .expect a[1000..1003] == {0, 1, 2}\n",
    );
    let file = temp_file("million.s", &text);
    let started = std::time::Instant::now();
    let (code, out, err) = atomjit(&["run", &file]);
    println!(
        "{} MB of initialiser list, parsed, run and checked in {:.2} s",
        text.len() / 1_000_000,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out.matches(": ok (").count(), 7, "{out}");
    // The first element that breaks an expectation is named.
    let (code, out, err) = atomjit(&["run", &file, "--expect", "a < 999"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("expect a < 999: FAILED (expected < 999, actual a[999] = 999)"),
        "{out}"
    );
}
