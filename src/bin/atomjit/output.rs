//! Output that never panics. Standard output: a closed pipe ends the process quietly (status
//! 141, as a shell reports SIGPIPE), any other write error with a message (status 2). Standard
//! error: a diagnostic that cannot be written (a full device, a closed pipe) is dropped, since
//! there is nowhere left to report it; the exit status still says what happened.

/// `println!` on standard output, through [`write_stdout`].
macro_rules! outln {
    () => {
        $crate::output::write_stdout(format_args!("\n"))
    };
    ($($t:tt)*) => {
        $crate::output::write_stdout(format_args!("{}\n", format_args!($($t)*)))
    };
}

/// `print!` on standard output, through [`write_stdout`].
macro_rules! out {
    ($($t:tt)*) => {
        $crate::output::write_stdout(format_args!($($t)*))
    };
}

/// Writes `args` to standard output, or ends the process (see the module docs).
pub fn write_stdout(args: std::fmt::Arguments) {
    use std::io::Write;
    if let Err(e) = std::io::stdout().lock().write_fmt(args) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        write_stderr(format_args!(
            "error: cannot write to standard output: {e}\n"
        ));
        std::process::exit(2);
    }
}

/// `eprintln!` on standard error, through [`write_stderr`].
macro_rules! errln {
    () => {
        $crate::output::write_stderr(format_args!("\n"))
    };
    ($($t:tt)*) => {
        $crate::output::write_stderr(format_args!("{}\n", format_args!($($t)*)))
    };
}

/// `eprint!` on standard error, through [`write_stderr`].
macro_rules! err {
    ($($t:tt)*) => {
        $crate::output::write_stderr(format_args!($($t)*))
    };
}

/// Writes `args` to standard error, dropping them if that fails (see the module docs).
pub fn write_stderr(args: std::fmt::Arguments) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_fmt(args);
}
