//! Loading a program *file* the way the command line does: the dialect from the file name
//! or its text ([`crate::front::dialect_of`]), the launch from a launch file (the `.launch` sidecar beside
//! the program, or one named) and extra lines, and the texts kept so that an error can be
//! shown against the text it points into ([`Sources::render`]).
//!
//! What a program is loaded for decides its launch ([`Purpose`]): to *inspect* it (`check`,
//! `dump`) the sidecar is used if there is one, and PTX entries may stay unbound; to *run* it
//! (`run`, `bench`) a PTX module always takes its launch (the launch file, then the lines),
//! which must bind at least one entry, and a SASS file takes one if any is given.

use super::{Engine, Error, Module};
use crate::diag;
use crate::front::{self, LaunchText};
use crate::ir::Dialect;
use std::fmt;
use std::path::{Path, PathBuf};

/// A launch line given outside any file (the command line's `--buffer DECL`, `--param DECL`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LaunchLine {
    /// `NAME TY[LEN] = INIT`: a buffer, bound to the next pointer parameter of a PTX entry.
    Buffer(String),
    /// `NAME TY = VALUE`: a scalar, bound to the next parameter of a PTX entry.
    Param(String),
    /// `OFFSET KIND`: an implicit value of a vISA kernel's payload.
    Payload(String),
}

impl LaunchLine {
    /// The line as a launch directive.
    pub fn directive(&self) -> String {
        match self {
            LaunchLine::Buffer(decl) => format!(".buffer {decl}"),
            LaunchLine::Param(decl) => format!(".param {decl}"),
            LaunchLine::Payload(decl) => format!(".payload {decl}"),
        }
    }
}

/// The launch of a program loaded to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LaunchRequest {
    /// A launch file; `None`: the program's sidecar (`NAME.launch`), if it exists.
    pub launch_file: Option<PathBuf>,
    /// Lines after the launch file's, in order (PTX parameters bind in this order).
    pub lines: Vec<LaunchLine>,
    /// The kernels `lines` are for (each gets them in a `.kernel` section, and binds them
    /// alone); empty: every kernel.
    pub kernels: Vec<String>,
}

impl LaunchRequest {
    /// The launch source the lines make, `.kernel` sections included.
    pub fn lines_text(&self) -> String {
        let lines: Vec<String> = self.lines.iter().map(LaunchLine::directive).collect();
        if lines.is_empty() || self.kernels.is_empty() {
            return lines.join("\n");
        }
        let mut out = Vec::new();
        for k in &self.kernels {
            out.push(format!(".kernel {k}"));
            out.extend(lines.iter().cloned());
        }
        out.join("\n")
    }
}

/// What a program file is loaded for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    /// `check` and `dump`: the sidecar if there is one, else no launch at all.
    Inspect,
    /// `run` and `bench`: a PTX module is always bound; a SASS file takes a launch if any is
    /// given.
    Run(LaunchRequest),
}

/// The sidecar launch file of a program: the same path with the extension `.launch`, if it
/// exists.
pub fn sidecar_of(file: &Path) -> Option<PathBuf> {
    let path = file.with_extension("launch");
    (path != file && path.is_file()).then_some(path)
}

/// The texts a program was loaded from, for showing errors that point into them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sources {
    /// The program file's name and text.
    pub file: String,
    pub source: String,
    /// Its launch sources (a launch file, the command line's lines).
    pub launch: LaunchText,
}

impl Sources {
    /// The text a located error in `name` points into: the program's or a launch source's.
    pub fn text_of(&self, name: &str) -> Option<&str> {
        if name == self.file {
            Some(&self.source)
        } else {
            self.launch.source_text(name)
        }
    }

    /// An error as the command line shows it (ending with a newline): a parse error or an
    /// unbound kernel with its line and a caret, a validation error with the rules it breaks,
    /// anything else on one line.
    pub fn render(&self, e: &Error) -> String {
        match e {
            Error::Parse(p) | Error::Unbound(p) => match self.text_of(&p.file) {
                Some(text) => diag::render_parse_error(text, p),
                None => format!("error: {p}\n"),
            },
            Error::Validation { kernel, errors } => {
                diag::render_validation_errors(&self.file, &self.source, kernel, errors)
            }
            Error::UnknownKernel(..)
            | Error::Override(_)
            | Error::Compile { .. }
            | Error::Launch(_)
            | Error::Argument(_)
            | Error::Failed { .. }
            | Error::Device(_)
            | Error::Tile(_) => format!("error: {e}\n"),
        }
    }
}

/// A program loaded from a file, with the texts it came from.
pub struct LoadedFile {
    pub module: Module,
    pub sources: Sources,
}

/// Why a program file did not load.
#[derive(Debug)]
pub enum LoadError {
    /// A file could not be read: the message says which and why.
    Read(String),
    /// The program or its launch does not parse or validate.
    Invalid { error: Error, sources: Box<Sources> },
}

impl LoadError {
    /// The error as the command line shows it (see [`Sources::render`]).
    pub fn render(&self) -> String {
        match self {
            LoadError::Read(message) => format!("error: {message}\n"),
            LoadError::Invalid { error, sources } => sources.render(error),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Read(message) => f.write_str(message),
            LoadError::Invalid { error, .. } => write!(f, "{error}"),
        }
    }
}

impl std::error::Error for LoadError {}

/// The largest program or launch file atomjit reads (256 MiB): a larger one, or an endless
/// stream such as `/dev/zero`, is refused once this much has been read.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// Reads a text file: at most [`MAX_FILE_BYTES`], a UTF-8 byte-order mark skipped, and invalid
/// UTF-8 or a NUL byte refused with its line and column.
fn read(path: &Path, what: &str) -> Result<String, LoadError> {
    read_text_file(path, what).map_err(LoadError::Read)
}

/// `read` for any text file atomjit takes (program, launch, litmus): the text, or a message
/// `cannot read WHAT PATH: WHY`.
pub fn read_text_file(path: &Path, what: &str) -> Result<String, String> {
    use std::io::Read;
    let fail = |why: String| format!("cannot read {what}{}: {why}", path.display());
    let file = std::fs::File::open(path).map_err(|e| fail(e.to_string()))?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(e.to_string()))?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(fail(format!(
            "it is larger than {MAX_FILE_BYTES} bytes, the most atomjit reads"
        )));
    }
    decode_text(bytes).map_err(fail)
}

/// The text of a file's bytes: a UTF-8 byte-order mark skipped; invalid UTF-8 and NUL bytes
/// (which no assembly text holds) are errors naming their line and column (1-based, the column
/// in bytes).
pub fn decode_text(mut bytes: Vec<u8>) -> Result<String, String> {
    if bytes.starts_with(&[0xef, 0xbb, 0xbf]) {
        bytes.drain(..3);
    }
    if let Some(nul) = bytes.iter().position(|&b| b == 0) {
        return Err(format!(
            "a NUL byte at {}: not a text file",
            line_col(&bytes, nul)
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        format!("invalid UTF-8 at {}", line_col(e.as_bytes(), offset))
    })
}

/// "line L, column C" of byte `offset` of `bytes` (1-based; the column counts bytes).
fn line_col(bytes: &[u8], offset: usize) -> String {
    let before = &bytes[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let col = offset
        - before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1)
        + 1;
    format!("line {line}, column {col}")
}

impl Engine {
    /// Reads and loads the program file `file` for `purpose` (see the [module docs](self)).
    pub fn load_file(&self, file: &str, purpose: &Purpose) -> Result<LoadedFile, LoadError> {
        self.load_file_as(file, purpose, None)
    }

    /// [`Engine::load_file`] in `dialect` when given (the command line's `--dialect`), else
    /// the dialect of the file's name or text ([`front::dialect_of`]).
    pub fn load_file_as(
        &self,
        file: &str,
        purpose: &Purpose,
        dialect: Option<Dialect>,
    ) -> Result<LoadedFile, LoadError> {
        let path = Path::new(file);
        let mut sources = Sources {
            file: file.to_string(),
            source: read(path, "")?,
            launch: LaunchText::new(),
        };
        let (launch_file, lines, bind) = match purpose {
            Purpose::Inspect => (None, String::new(), false),
            Purpose::Run(request) => (request.launch_file.clone(), request.lines_text(), true),
        };
        if let Some(launch_path) = launch_file.or_else(|| sidecar_of(path)) {
            let text = read(&launch_path, "launch file ")?;
            sources.launch.push(&launch_path.to_string_lossy(), &text);
        }
        if !lines.is_empty() {
            sources.launch.push("command line", &lines);
        }
        let dialect = dialect.unwrap_or_else(|| front::dialect_of(file, &sources.source));
        let with_launch = (bind && dialect == Dialect::Ptx) || !sources.launch.is_empty();
        let loaded = self.load_text(
            file,
            &sources.source,
            dialect,
            with_launch.then_some(&sources.launch),
        );
        match loaded {
            Ok(module) => Ok(LoadedFile { module, sources }),
            Err(error) => Err(LoadError::Invalid {
                error,
                sources: Box::new(sources),
            }),
        }
    }
}
