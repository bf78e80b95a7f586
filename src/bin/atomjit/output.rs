//! Standard output that never panics: a closed pipe ends the process quietly (status 141, as a
//! shell reports SIGPIPE), any other write error with a message (status 2).

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
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(2);
    }
}
