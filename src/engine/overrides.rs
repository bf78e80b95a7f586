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
        for e in &args.expects {
            o.expects.push(
                directives::parse_expect(e)
                    .map_err(|msg| Error::Override(format!("--expect {e}: {msg}")))?,
            );
        }
        Ok(o)
    }
}
