//! Launches from code: a kernel's formal parameters ([`Signature`]) and the arguments that
//! bind to them ([`Arg`]), and [`Module::launch`] (`docs/embedding.md`).
//!
//! A program file's launch declares its buffers and binds them by launch lines; a launch from
//! code passes buffers of the engine's [`Device`] memory and scalars instead,
//! and the kernel runs on that memory, which outlives the launch. Each dialect says where its
//! parameters live:
//!
//! * a PTX entry: its `.param` list, each parameter at `c[0x0][param_base + offset]`; a 64-bit
//!   integer parameter takes a buffer (its device address) or a 64-bit scalar;
//! * a SASS program file: its `.buffer` and `.param` declarations, in order, at their
//!   constant-bank offsets;
//! * a SASS listing (the compiler's output names no parameters): the arguments in order from
//!   the parameter base, each naturally aligned, which must reach as far as the kernel's code
//!   reads constant bank 0;
//! * a vISA kernel: buffers (64-bit SVM addresses) and scalars bound through IGC's payload
//!   layout exactly as `.buffer`/`.param` launch lines in the same order would be
//!   (`docs/visa.md`); the kernel is lowered again for each distinct list of argument kinds
//!   (and cached), because its payload code depends on them.

use super::{Device, DeviceBuffer, Element, Error, Failure, Module};
use crate::exec::{self, LaunchConfig, LaunchError, LaunchStats, WarpRunner};
use crate::ir::{Dialect, Init, Kernel, ParamDecl, ParamKind, Scalar, Ty};
use crate::valid::{self, KernelInfo};
use std::sync::Arc;

/// One argument of a launch from code.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arg {
    /// A device buffer: the kernel gets its 64-bit device address.
    Buffer(DeviceBuffer),
    /// A scalar of type `ty`: its low `ty.bytes()` bytes of `bits`.
    Scalar { ty: Ty, bits: u64 },
}

impl Arg {
    /// A scalar argument of a Rust value's type (`Arg::scalar(5u32)`, `Arg::scalar(1.5f32)`).
    pub fn scalar<T: Element>(value: T) -> Arg {
        Arg::Scalar {
            ty: T::DTYPE.ir_ty(),
            bits: value.to_bits(),
        }
    }

    /// The bytes the argument occupies in the constant bank.
    fn size(&self) -> u32 {
        match self {
            Arg::Buffer(_) => 8,
            Arg::Scalar { ty, .. } => ty.bytes(),
        }
    }

    fn describe(&self) -> String {
        match self {
            Arg::Buffer(b) => format!("a buffer ({} bytes at {:#x})", b.bytes(), b.address()),
            Arg::Scalar { ty, .. } => format!("a {ty} scalar"),
        }
    }
}

impl From<DeviceBuffer> for Arg {
    fn from(b: DeviceBuffer) -> Arg {
        Arg::Buffer(b)
    }
}

impl From<&DeviceBuffer> for Arg {
    fn from(b: &DeviceBuffer) -> Arg {
        Arg::Buffer(*b)
    }
}

/// What a parameter accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormalKind {
    /// A buffer only (a SASS `.buffer` declaration).
    Buffer,
    /// A scalar of the parameter's size only.
    Scalar,
    /// A buffer or a 64-bit scalar (a PTX `.u64`/`.s64`/`.b64` parameter: pointers are
    /// integers in PTX).
    BufferOrScalar,
}

/// One formal parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct FormalParam {
    pub name: String,
    /// Its declared type (a buffer's is `u64`, its device address).
    pub ty: Ty,
    /// Where it sits in constant bank 0.
    pub cbank_offset: u32,
    pub kind: FormalKind,
}

/// How a kernel's arguments bind (see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub enum Signature {
    /// Exactly these parameters, in order.
    Params(Vec<FormalParam>),
    /// A listing's: any arguments, in order from `base`, each naturally aligned, reaching at
    /// least `reads_to` (where the kernel's reads of constant bank 0 end).
    Listing { base: u32, reads_to: u32 },
    /// A vISA kernel's: buffers and scalars through the payload layout; the kernel's `.input`
    /// declarations decide how many bytes of arguments it reads.
    Payload,
    /// The kernel cannot be launched from code, and why.
    Unsupported(String),
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Signature::Params(ps) if ps.is_empty() => f.write_str("no parameters"),
            Signature::Params(ps) => {
                let list: Vec<String> = ps
                    .iter()
                    .map(|p| match p.kind {
                        FormalKind::Buffer => format!("{} (buffer)", p.name),
                        FormalKind::Scalar => format!("{} ({})", p.name, p.ty),
                        FormalKind::BufferOrScalar => format!("{} ({}, or a buffer)", p.name, p.ty),
                    })
                    .collect();
                f.write_str(&list.join(", "))
            }
            Signature::Listing { base, reads_to } => write!(
                f,
                "arguments from c[0x0][{base:#x}], reaching at least c[0x0][{reads_to:#x}] (a listing names no parameters)"
            ),
            Signature::Payload => f.write_str(
                "buffers and scalars through the payload (buffers' addresses first, then the scalars)",
            ),
            Signature::Unsupported(why) => f.write_str(why),
        }
    }
}

impl Module {
    /// How kernel `name`'s arguments bind in [`Module::launch`].
    pub fn signature(&self, name: &str) -> Result<Signature, Error> {
        let i = self.index_of(name)?;
        let kernel = &self.program.kernels[i];
        let spec = &kernel.launch;
        let base = spec.layout.param_base();
        if let Some(Some(params)) = self.entry_params.get(i) {
            return Ok(Signature::Params(
                params
                    .iter()
                    .map(|p| FormalParam {
                        name: p.name.clone(),
                        ty: p.ty,
                        cbank_offset: base + p.offset,
                        kind: if matches!(p.ty, Ty::U64 | Ty::S64 | Ty::B64) {
                            FormalKind::BufferOrScalar
                        } else {
                            FormalKind::Scalar
                        },
                    })
                    .collect(),
            ));
        }
        Ok(match kernel.dialect {
            Dialect::Visa => Signature::Payload,
            Dialect::Ptx | Dialect::Sass if spec.params.is_empty() && spec.compiled => {
                Signature::Listing {
                    base,
                    reads_to: spec.cbank_reads,
                }
            }
            Dialect::Ptx | Dialect::Sass => {
                let mut out = Vec::new();
                for p in &spec.params {
                    let (ty, kind) = match &p.kind {
                        ParamKind::Buffer { .. } => (Ty::U64, FormalKind::Buffer),
                        ParamKind::Scalar { ty, .. } => (*ty, FormalKind::Scalar),
                        ParamKind::Surface(_) | ParamKind::SurfaceAddress { .. } => {
                            return Ok(Signature::Unsupported(format!(
                                "kernel `{name}` declares surface `{}`: surfaces live in \
                                 the program's own launch memory, so it runs with `Module::run`",
                                p.name
                            )))
                        }
                    };
                    out.push(FormalParam {
                        name: p.name.clone(),
                        ty,
                        cbank_offset: p.cbank_offset,
                        kind,
                    });
                }
                Signature::Params(out)
            }
        })
    }

    /// Launches kernel `name` on the engine's device memory: `grid` CTAs of `block` threads,
    /// `shared` bytes of dynamic shared memory per CTA (after the kernel's static shared
    /// variables; for a hand-written SASS kernel, after its declared `.shared` window), with
    /// `args` bound to its [`Module::signature`]. Returns the launch's statistics, or
    /// [`Error::Failed`] with its trap or watchdog report; either way the engine and its memory
    /// stay usable, holding whatever the kernel wrote.
    pub fn launch(
        &self,
        name: &str,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        args: &[Arg],
    ) -> Result<LaunchStats, Error> {
        let i = self.index_of(name)?;
        if let Some(b) = &self.broken[i] {
            return Err(Error::Launch(format!(
                "kernel `{name}` cannot run: {}",
                b.to_string().trim_end()
            )));
        }
        if let Some(first) = self.unsupported.get(i).and_then(|u| u.first()) {
            return Err(Error::Launch(format!(
                "kernel `{name}` cannot run: {}",
                first.message
            )));
        }
        if let Some(Arg::Scalar { ty, .. }) = args
            .iter()
            .find(|a| matches!(a, Arg::Scalar { ty, .. } if ty.bytes() > 8))
        {
            return Err(Error::Argument(format!(
                "kernel `{name}`: a {ty} scalar argument is wider than the 64 bits a scalar \
                 argument carries"
            )));
        }
        // The shape first: a vISA kernel is lowered for it.
        valid::check_launch(grid, block, 0).map_err(Error::Launch)?;
        let signature = self.signature(name)?;
        let variant;
        let (kernel, info, runner, placed, window): (&Kernel, &KernelInfo, _, _, u64) =
            if signature == Signature::Payload {
                if shared != 0 {
                    // As for launch lines (`front::visa`): SLM (surface T0) is not implemented.
                    return Err(Error::Launch(format!(
                        "kernel `{name}` is a vISA kernel: shared local memory is not \
                         supported yet, so `shared` must be 0 (not {shared})"
                    )));
                }
                variant = self.visa_variant(i, block, args)?;
                let spec = &variant.kernel.launch;
                let threads: u64 = block.iter().map(|&d| u64::from(d)).product();
                let warp = u64::from(variant.kernel.warp_size);
                if threads % warp != 0 {
                    return Err(Error::Launch(format!(
                        "kernel `{name}` is SIMD{warp}: its work-group size ({threads}) must be \
                         a multiple of {warp}, so that every thread has all its channels"
                    )));
                }
                let placed: Vec<(u32, Arg)> = spec
                    .params
                    .iter()
                    .zip(args)
                    .map(|(p, a)| (p.cbank_offset, *a))
                    .collect();
                let window = u64::from(shared) + threads / warp * u64::from(spec.shared_per_warp);
                (
                    &variant.kernel,
                    &variant.info,
                    Arc::clone(&variant.runner),
                    placed,
                    window,
                )
            } else {
                let kernel = &self.program.kernels[i];
                let spec = &kernel.launch;
                let placed = bind(name, &signature, args)?;
                // The window: the kernel's static part, then the dynamic bytes asked for.
                let static_shared = if kernel.dialect == Dialect::Sass && !spec.compiled {
                    spec.shared_bytes
                } else {
                    spec.static_shared
                };
                let runner = self.runner_for(i, self.engine.config().backend)?;
                let window = u64::from(static_shared) + u64::from(shared);
                (kernel, &self.infos[i], runner, placed, window)
            };
        let spec = &kernel.launch;
        let window = u32::try_from(window).map_err(|_| {
            Error::Launch(format!(
                "kernel `{name}`: {window} bytes of shared memory do not fit a window"
            ))
        })?;
        valid::check_launch(grid, block, window).map_err(Error::Launch)?;

        let device: &Device = self.engine.device();
        let memory = device.global();
        let mut end = spec.layout.param_base();
        end = end.max(spec.cbank_reads);
        for (offset, arg) in &placed {
            end = end.max(offset + arg.size());
        }
        let mut cbank = vec![0u8; end as usize];
        let abi = spec.layout.abi_area(block, grid, shared);
        cbank[..abi.len()].copy_from_slice(&abi);
        for (offset, arg) in &placed {
            let raw = match arg {
                Arg::Buffer(b) => {
                    memory.host_range(*b).map_err(|e| {
                        Error::Launch(format!("kernel `{name}`: a buffer argument: {e}"))
                    })?;
                    b.address()
                }
                Arg::Scalar { bits, .. } => *bits,
            };
            let at = *offset as usize;
            let size = arg.size() as usize;
            cbank[at..at + size].copy_from_slice(&raw.to_le_bytes()[..size]);
        }

        let config = LaunchConfig {
            grid,
            block,
            shared_bytes: window,
            threads: self.engine.config().threads,
            deterministic: self.engine.config().deterministic,
            timeout: self.engine.config().timeout,
            light_phases: exec::LIGHT_PHASES_PER_QUANTUM,
        };
        let outcome = exec::launch_counted(
            (kernel, info, runner.as_ref()),
            (memory.memory(), &cbank, &[]),
            &config,
        );
        outcome.map_err(|failed| {
            let exec::FailedLaunch { error, ran } = *failed;
            let failure = match error {
                LaunchError::Trap(t) => Failure::Trap(t),
                LaunchError::Watchdog(w) => Failure::Watchdog(w),
                LaunchError::Config(msg) => return Error::Launch(msg),
            };
            Error::Failed {
                kernel: name.to_string(),
                failure,
                ran: Box::new(ran),
            }
        })
    }
}

/// A vISA kernel lowered for one list of argument kinds, validated and prepared for the
/// engine's backend.
pub(super) struct VisaVariant {
    kernel: Kernel,
    info: KernelInfo,
    runner: Arc<dyn WarpRunner>,
}

/// What a vISA variant depends on: the kernel and each argument's kind (a buffer, or a
/// scalar's type).
pub(super) type VariantKey = (usize, Vec<Option<Ty>>);

impl Module {
    /// Kernel `i` (a vISA kernel) lowered for `args`, from the cache or made now.
    fn visa_variant(
        &self,
        i: usize,
        block: [u32; 3],
        args: &[Arg],
    ) -> Result<Arc<VisaVariant>, Error> {
        let kinds: Vec<Option<Ty>> = args
            .iter()
            .map(|a| match a {
                Arg::Buffer(_) => None,
                Arg::Scalar { ty, .. } => Some(*ty),
            })
            .collect();
        let key = (i, kinds);
        if let Some(v) = self.lock_variants().get(&key) {
            return Ok(Arc::clone(v));
        }
        let kernel = &self.program.kernels[i];
        let mut params: Vec<ParamDecl> = args
            .iter()
            .enumerate()
            .map(|(n, a)| ParamDecl {
                name: format!("arg{n}"),
                kind: match a {
                    Arg::Buffer(b) => ParamKind::Buffer {
                        elem: Ty::U8,
                        len: b.bytes().max(1),
                        init: Init::Fill(Scalar::Int(0)),
                    },
                    Arg::Scalar { ty, .. } => ParamKind::Scalar {
                        ty: *ty,
                        value: Scalar::Int(0),
                    },
                },
                cbank_offset: 0,
                span: kernel.span,
            })
            .collect();
        crate::front::program::assign_cbank_offsets(&mut params, kernel.launch.layout.param_base());
        let lowered = crate::front::visa::lower_for_arguments(
            &self.program.source_name,
            &self.program.source,
            &kernel.name,
            block,
            &params,
            &kernel.launch.payload,
        )
        .map_err(|e| {
            Error::Argument(format!(
                "kernel `{}` cannot take these arguments: {}",
                kernel.name, e.message
            ))
        })?;
        let info = valid::validate(&lowered).map_err(|errors| Error::Validation {
            kernel: lowered.name.clone(),
            errors,
        })?;
        // As for every kernel: one too large for the JIT's budget runs on the interpreter.
        let backend = self
            .engine
            .backend_for(&lowered, self.engine.config().backend)
            .0;
        let runner = self
            .engine
            .make_runner(&lowered, &info, backend)
            .map_err(|message| Error::Compile {
                kernel: lowered.name.clone(),
                message,
            })?;
        let variant = Arc::new(VisaVariant {
            kernel: lowered,
            info,
            runner,
        });
        self.lock_variants().insert(key, Arc::clone(&variant));
        Ok(variant)
    }
}

/// Where each argument goes in constant bank 0, or why they do not fit the signature.
fn bind(name: &str, signature: &Signature, args: &[Arg]) -> Result<Vec<(u32, Arg)>, Error> {
    let refuse = |msg: String| Error::Argument(format!("kernel `{name}`: {msg}"));
    match signature {
        Signature::Unsupported(why) => Err(Error::Launch(why.clone())),
        Signature::Payload => unreachable!("vISA arguments bind through their variant"),
        Signature::Params(params) => {
            if params.len() != args.len() {
                return Err(refuse(format!(
                    "it takes {} argument{} ({signature}) but the launch passes {}",
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    args.len()
                )));
            }
            params
                .iter()
                .zip(args)
                .map(|(p, a)| {
                    let fits = match (p.kind, a) {
                        (FormalKind::Buffer | FormalKind::BufferOrScalar, Arg::Buffer(_)) => true,
                        (
                            FormalKind::Scalar | FormalKind::BufferOrScalar,
                            Arg::Scalar { ty, .. },
                        ) => ty.bytes() == p.ty.bytes(),
                        (FormalKind::Scalar, Arg::Buffer(_))
                        | (FormalKind::Buffer, Arg::Scalar { .. }) => false,
                    };
                    if fits {
                        Ok((p.cbank_offset, *a))
                    } else {
                        let wants = match p.kind {
                            FormalKind::Buffer => "a buffer".to_string(),
                            FormalKind::Scalar => format!("a {}-byte scalar", p.ty.bytes()),
                            FormalKind::BufferOrScalar => {
                                format!("a buffer or a {}-byte scalar", p.ty.bytes())
                            }
                        };
                        Err(refuse(format!(
                            "parameter `{}` ({}) takes {wants}, not {}",
                            p.name,
                            p.ty,
                            a.describe()
                        )))
                    }
                })
                .collect()
        }
        Signature::Listing { base, reads_to } => {
            let mut next = *base;
            let mut out = Vec::with_capacity(args.len());
            for a in args {
                let size = a.size();
                next = next.div_ceil(size) * size;
                out.push((next, *a));
                next += size;
            }
            if next < *reads_to {
                return Err(refuse(format!(
                    "its code reads its parameters up to c[0x0][{reads_to:#x}], but the \
                     arguments end at c[0x0][{next:#x}]"
                )));
            }
            Ok(out)
        }
    }
}
