//! Overrides written as text, the way the command line gives them: `--grid X[,Y[,Z]]`,
//! `--block X[,Y[,Z]]`, `--shared BYTES`, `--set NAME=VALUE` (a buffer's initialiser or a
//! scalar parameter's value) and `--expect EXPR` (in `.expect` syntax). Errors name the flag
//! and the text they are about (`--set n=x: ...`).

use super::{Error, Module, Overrides};
use crate::front::program as directives;
use crate::ir::ParamKind;

/// The text of each override, as the command line's flags give it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OverrideArgs {
    /// `--grid`: CTAs per dimension, `X[,Y[,Z]]`.
    pub grid: Option<String>,
    /// `--block`: threads per CTA dimension, `X[,Y[,Z]]`.
    pub block: Option<String>,
    /// `--shared`: shared-memory bytes per CTA.
    pub shared: Option<u32>,
    /// `--set NAME=VALUE`, in order (a later one wins).
    pub sets: Vec<String>,
    /// `--expect EXPR`, checked after the kernel's own expectations.
    pub expects: Vec<String>,
}

fn parse_dims(text: &Option<String>, flag: &str) -> Result<Option<[u32; 3]>, Error> {
    text.as_deref()
        .map(|t| {
            directives::parse_dims(t).map_err(|e| Error::Override(format!("--{flag} {t}: {e}")))
        })
        .transpose()
}

impl Module {
    /// The overrides `args` give kernel `kernel`: shapes parsed (their limits are checked when
    /// the launch is prepared), each `--set` resolved to the buffer or scalar parameter of that
    /// name and checked against its type, each `--expect` parsed.
    pub fn overrides(&self, kernel: &str, args: &OverrideArgs) -> Result<Overrides, Error> {
        let mut o = Overrides {
            grid: parse_dims(&args.grid, "grid")?,
            block: parse_dims(&args.block, "block")?,
            shared_bytes: args.shared,
            ..Overrides::default()
        };
        let (k, _) = self.kernel(kernel)?;
        for set in &args.sets {
            let fail = |e: String| Error::Override(format!("--set {set}: {e}"));
            let (name, value) = set
                .split_once('=')
                .ok_or_else(|| fail("expected NAME=VALUE".into()))?;
            let (name, value) = (name.trim(), value.trim());
            match k
                .launch
                .params
                .iter()
                .find(|p| p.name == name)
                .map(|p| &p.kind)
            {
                Some(kind @ (ParamKind::Buffer { .. } | ParamKind::Surface(_))) => {
                    let (elem, len) = kind.elements().expect("a buffer or surface");
                    let init = directives::parse_init(value).map_err(fail)?;
                    directives::check_init(elem, len, &init).map_err(fail)?;
                    o.buffers.push((name.to_string(), init));
                }
                Some(ParamKind::SurfaceAddress { surface }) => {
                    return Err(fail(format!(
                        "`{name}` is the address of surface `{surface}`, set by the launch"
                    )))
                }
                Some(ParamKind::Scalar { ty, .. }) => {
                    let v = directives::parse_scalar(value).map_err(fail)?;
                    directives::check_value_fits(*ty, v).map_err(fail)?;
                    o.params.push((name.to_string(), v));
                }
                None => {
                    return Err(fail(format!(
                        "kernel `{kernel}` has no buffer or parameter named `{name}`"
                    )))
                }
            }
        }
        // An expectation applies to the kernels that have its buffer, checked before the run
        // like the file form (the buffer's length and element type); which kernels those are
        // is the caller's to say when none of them has it (`Module::expectation_kernels`).
        for e in &args.expects {
            let fail = |msg: String| Error::Override(format!("--expect {e}: {msg}"));
            if let Some(trap) = directives::parse_expect_trap(e) {
                o.expect_trap = Some(trap.map_err(fail)?);
                continue;
            }
            let parsed = directives::parse_expect(e).map_err(fail)?;
            if self.has_buffer(kernel, parsed.lhs.buffer()) {
                directives::check_expect(&parsed, &k.launch.params).map_err(fail)?;
                o.expects.push(parsed);
            }
        }
        Ok(o)
    }

    /// Whether kernel `kernel` has a buffer (or surface) named `name`.
    pub fn has_buffer(&self, kernel: &str, name: &str) -> bool {
        self.kernel(kernel).is_ok_and(|(k, _)| {
            k.launch
                .params
                .iter()
                .any(|p| p.name == name && p.kind.elements().is_some())
        })
    }

    /// The kernels among `kernels` that have the buffer a command-line expectation names, or
    /// why it cannot apply (it does not parse, or no kernel has the buffer).
    pub fn expectation_kernels(
        &self,
        kernels: &[&str],
        expect: &str,
    ) -> Result<Vec<String>, Error> {
        let fail = |msg: String| Error::Override(format!("--expect {expect}: {msg}"));
        // `trap REASON` applies to every kernel run.
        if let Some(trap) = directives::parse_expect_trap(expect) {
            trap.map_err(fail)?;
            return Ok(kernels.iter().map(|k| k.to_string()).collect());
        }
        let parsed = directives::parse_expect(expect).map_err(fail)?;
        let mut have = Vec::new();
        for &name in kernels {
            let (k, _) = self.kernel(name)?;
            if self.has_buffer(name, parsed.lhs.buffer()) {
                // Its index range and value type, against this kernel's buffer, before any
                // kernel runs.
                directives::check_expect(&parsed, &k.launch.params).map_err(fail)?;
                have.push(name.to_string());
            }
        }
        if have.is_empty() {
            return Err(fail(format!(
                "no kernel run has a buffer named `{}`",
                parsed.lhs.buffer()
            )));
        }
        Ok(have)
    }
}
