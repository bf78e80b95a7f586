//! The Cranelift warp compiler: each validated kernel becomes native code that runs one group
//! of one warp from a resume point until the next event the scheduler must see. A kernel is one
//! function, or for long kernels one function per chunk of ~1024 instructions
//! (`translate::Plan`: register allocation costs more than linear time in a function's
//! length); `JitKernel::run_group` follows control from chunk to chunk itself.
//!
//! * [`compile`] translates `(Kernel, KernelInfo)` into a [`JitKernel`], which implements
//!   [`WarpRunner`] with exactly the behaviour the reference interpreter has: the same
//!   [`GroupExit`] events, the same traps (first faulting lane in lane order, earlier lanes'
//!   effects kept), the same counters. A kernel is compiled once and reused for every launch;
//!   the `JitKernel` owns its code and frees it on drop.
//! * [`dump_clif`] returns the Cranelift IR text of the function (`atomjit dump clif`).
//!
//! The generated function and its context ABI are described in `warp_ctx.rs`; the shape of the code
//! (entry dispatch, per-instruction blocks, lane loops) in `translate/mod.rs`; memory checks,
//! the host-atomic lowering table and the memory-order mapping in `translate/memory.rs`;
//! warp-collective ops (`SHFL`, `REDUX`, `MATCH`) and the broadcast of uniform registers in
//! `translate/warp.rs`. Rare conversions and fused multiply-adds that Cranelift cannot do
//! exactly (directed rounding, 16-bit and packed-half types) call into `slow.rs` once per
//! warp-instruction, which computes each lane with [`crate::sem::convert::convert`] or
//! [`crate::sem::float::fma_ty`]. The one per-lane call back
//! into Rust is the new-value computation of atomics on `f16`, `bf16`, `f16x2` and `bf16x2` (no
//! host arithmetic for them), made inside the generated CAS loop through `WarpCtx::rmw_value`
//! ([`crate::sem::atomic::rmw_value`]); the memory checks and the host CAS stay in the code.
//! Slow paths call the semantics library [`crate::sem`], the definitions the interpreter uses,
//! and never define a value function of their own; the JIT's tests check its inline code
//! against the same definitions.

#![deny(clippy::wildcard_enum_match_arm)]

mod slow;
mod translate;
mod warp_ctx;

#[cfg(test)]
#[allow(clippy::wildcard_enum_match_arm)] // a test matches the variant it expects
mod tests;

use crate::exec::{
    run_fresh_each, run_phases_each, run_phases_with, run_warps_each, CtaEnv, FreshRun, FreshWarps,
    GroupAt, GroupExit, PhaseGroup, PhasesRun, RunnerCache, Split, TrapInfo, TrapReason, WarpRun,
    WarpRunner, WarpState, WARP_STRIDE,
};
use crate::ir::surface::FastSurface;
use crate::ir::Kernel;
use crate::valid::KernelInfo;
use cranelift_codegen::ir::types::{I32, I64};
use cranelift_codegen::ir::{AbiParam, Function, Signature, UserFuncName};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use slow::SideTables;
use std::sync::{Mutex, OnceLock};
use warp_ctx::{Event, WarpCtx, NO_STOP};

/// Why a kernel could not be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JitError {
    /// The kernel uses a form the compiler does not implement (and no validator table accepts
    /// yet).
    #[error("kernel `{kernel}`, instruction {pc}: the JIT does not support {what}")]
    Unsupported {
        kernel: String,
        pc: u32,
        what: String,
    },
    /// The [`KernelInfo`] handed to the compiler is not the validator's proof for this kernel
    /// ([`KernelInfo::is_for`]): the generated code relies on what validation proved (register
    /// and predicate ranges, constant-bank reads, operand shapes), so it compiles only a kernel
    /// together with its own proof.
    #[error("kernel `{kernel}`: the kernel info is not the validator's proof for this kernel (validate the kernel, then compile it with its own info)")]
    NotValidated { kernel: String },
    /// The translator broke one of its own invariants (a compiler bug).
    #[error("kernel `{kernel}`, instruction {pc}: internal compiler error: {what}")]
    Internal {
        kernel: String,
        pc: u32,
        what: String,
    },
    /// The host ISA could not be set up.
    #[error("cannot set up the host code generator: {0}")]
    Host(String),
    /// Cranelift rejected the function (a compiler bug).
    #[error("code generation failed for kernel `{kernel}`: {message}")]
    Codegen { kernel: String, message: String },
}

type EntryFn = unsafe extern "C" fn(*mut WarpCtx, u32, u32, u32) -> u32;

/// A compiled kernel: native code for one group of one warp.
pub struct JitKernel {
    /// One function per chunk of the kernel (`translate::Plan`), in pc order.
    entries: Vec<EntryFn>,
    /// The first pc of each chunk.
    chunk_starts: Vec<u32>,
    /// The code's owner; only touched again to free the code on drop.
    module: Mutex<Option<JITModule>>,
    tables: Box<SideTables>,
    num_insts: u32,
    num_regs: u32,
    num_preds: u32,
    warp_size: u32,
    /// Which pcs the compiled function can start at (`translate::resume_points`).
    resumable: Vec<bool>,
    /// `JitOptions::splits`: `run_group_splitting` lets the code run past a divergent branch.
    splits: bool,
}

impl std::fmt::Debug for JitKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitKernel")
            .field("num_insts", &self.num_insts)
            .finish_non_exhaustive()
    }
}

impl Drop for JitKernel {
    fn drop(&mut self) {
        let module = match self.module.get_mut() {
            Ok(m) => m.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(module) = module {
            // SAFETY: `&mut self` proves no `run_group` call is executing this code, and the
            // entry pointer dies with `self`, so nothing can call into the freed memory.
            unsafe { module.free_memory() };
        }
    }
}

/// The host ISA, built once per process (detecting CPU features takes longer than compiling a
/// small kernel). `opt_level=speed` always: `none` was measured to compile long kernels more
/// slowly, because register allocation then sees the dead and duplicated values the e-graph
/// pass would have removed.
pub(crate) fn host_isa() -> Result<OwnedTargetIsa, JitError> {
    static ISA: OnceLock<Result<OwnedTargetIsa, String>> = OnceLock::new();
    ISA.get_or_init(|| {
        let mut flags = settings::builder();
        let set = |f: &mut settings::Builder, k: &str, v: &str| {
            f.set(k, v).map_err(|e| format!("{k}={v}: {e}"))
        };
        set(&mut flags, "opt_level", "speed")?;
        set(&mut flags, "use_colocated_libcalls", "false")?;
        set(&mut flags, "is_pic", "false")?;
        // The verifier costs compile time; debug builds keep it as a check on the translator.
        set(
            &mut flags,
            "enable_verifier",
            if cfg!(debug_assertions) {
                "true"
            } else {
                "false"
            },
        )?;
        let isa = cranelift_native::builder().map_err(|e| e.to_string())?;
        isa.finish(settings::Flags::new(flags))
            .map_err(|e| e.to_string())
    })
    .clone()
    .map_err(JitError::Host)
}

fn signature(isa: &OwnedTargetIsa) -> Signature {
    let mut sig = Signature::new(isa.default_call_conv());
    sig.params.push(AbiParam::new(I64));
    sig.params.push(AbiParam::new(I32));
    sig.params.push(AbiParam::new(I32));
    sig.params.push(AbiParam::new(I32));
    sig.returns.push(AbiParam::new(I32));
    sig
}

/// Builds the Cranelift functions of `kernel`, one per chunk of `plan` (not yet compiled).
fn build_functions(
    kernel: &Kernel,
    info: &KernelInfo,
    isa: &OwnedTargetIsa,
    tables: &mut SideTables,
    plan: &translate::Plan,
) -> Result<Vec<Function>, JitError> {
    if !info.is_for(kernel) {
        return Err(JitError::NotValidated {
            kernel: kernel.name.clone(),
        });
    }
    tables.num_regs = kernel.num_regs;
    // Validation guarantees every constant operand lies inside the kernel's bank.
    tables.cbank_needed = u64::from(info.cbank_bytes());
    tables.const_banks = kernel.launch.const_banks.clone();
    let mut funcs = Vec::with_capacity(plan.starts.len());
    let mut fb_ctx = FunctionBuilderContext::new();
    for chunk in 0..plan.starts.len() {
        let name = if chunk == 0 {
            kernel.name.clone()
        } else {
            format!("{}_chunk{chunk}", kernel.name)
        };
        let mut func = Function::with_name_signature(UserFuncName::testcase(&name), signature(isa));
        let builder = FunctionBuilder::new(&mut func, &mut fb_ctx);
        translate::Translator::build(
            builder,
            kernel,
            info,
            tables,
            isa.frontend_config(),
            plan,
            chunk,
        )?;
        funcs.push(func);
    }
    Ok(funcs)
}

/// The Cranelift IR of `kernel`'s warp functions (one per chunk), as text (before
/// optimisation).
pub fn dump_clif(kernel: &Kernel, info: &KernelInfo) -> Result<String, JitError> {
    dump_clif_with(kernel, info, JitOptions::default())
}

/// [`dump_clif`] with explicit [`JitOptions`] (their chunk size and code-generation choices).
pub fn dump_clif_with(
    kernel: &Kernel,
    info: &KernelInfo,
    options: JitOptions,
) -> Result<String, JitError> {
    let isa = host_isa()?;
    let mut tables = SideTables::default();
    let plan = translate::Plan::new(kernel, info, &options);
    let funcs = build_functions(kernel, info, &isa, &mut tables, &plan)?;
    Ok(funcs.iter().map(|f| f.display().to_string()).collect())
}

/// The host machine code of `kernel`'s warp functions after optimisation and register
/// allocation, as Cranelift's disassembly of its lowered code (for `atomjit dump asm`).
pub fn dump_asm(kernel: &Kernel, info: &KernelInfo) -> Result<String, JitError> {
    let isa = host_isa()?;
    let mut tables = SideTables::default();
    let plan = translate::Plan::new(kernel, info, &JitOptions::default());
    let mut text = String::new();
    for func in build_functions(kernel, info, &isa, &mut tables, &plan)? {
        let mut ctx = cranelift_codegen::Context::for_function(func);
        ctx.set_disasm(true);
        let mut ctrl = cranelift_codegen::control::ControlPlane::default();
        let compiled = ctx
            .compile(&*isa, &mut ctrl)
            .map_err(|e| JitError::Codegen {
                kernel: kernel.name.clone(),
                message: format!("{:?}", e.inner),
            })?;
        text.push_str(compiled.vcode.as_deref().unwrap_or_default());
    }
    Ok(text)
}

/// Compiles `kernel` (validated, with its `info`) to native code, on the calling thread.
pub fn compile(kernel: &Kernel, info: &KernelInfo) -> Result<JitKernel, JitError> {
    compile_chunked_on(kernel, info, translate::CHUNK_INSTS, 1)
}

/// [`compile`] with the chunks' code generation spread over up to `threads` threads (the engine
/// passes its worker count). The code is the same as [`compile`]'s, laid out in the same order.
pub fn compile_on(
    kernel: &Kernel,
    info: &KernelInfo,
    threads: usize,
) -> Result<JitKernel, JitError> {
    compile_chunked_on(kernel, info, translate::CHUNK_INSTS, threads)
}

/// [`compile`] with chunks of `chunk_insts` instructions (tests use tiny chunks to run every
/// path across chunk boundaries).
pub fn compile_chunked(
    kernel: &Kernel,
    info: &KernelInfo,
    chunk_insts: usize,
) -> Result<JitKernel, JitError> {
    compile_with(
        kernel,
        info,
        JitOptions {
            chunk_insts,
            ..JitOptions::default()
        },
    )
}

/// One chunk's machine code, generated off the module ([`codegen_chunk`]).
struct ChunkCode {
    alignment: u64,
    bytes: Vec<u8>,
    relocs: Vec<cranelift_module::ModuleReloc>,
}

/// Generates the machine code of one chunk's function, which the module will know as `id`:
/// what `JITModule::define_function` does before it copies the code into the module, without
/// the module, so chunks can be compiled on several threads. Chunks never call each other
/// (control moves between them through `Continue` and `JitKernel::enter`), so their code is
/// independent; relocations only name library calls.
fn codegen_chunk(
    isa: &OwnedTargetIsa,
    func: Function,
    id: cranelift_module::FuncId,
    kernel: &str,
) -> Result<ChunkCode, JitError> {
    let mut ctx = cranelift_codegen::Context::for_function(func);
    let mut ctrl = cranelift_codegen::control::ControlPlane::default();
    let alignment = match ctx.compile(&**isa, &mut ctrl) {
        Ok(compiled) => u64::from(compiled.buffer.alignment),
        Err(e) => {
            let message = if let cranelift_codegen::CodegenError::Verifier(errs) = e.inner {
                cranelift_codegen::print_errors::pretty_verifier_error(e.func, None, errs)
            } else {
                e.inner.to_string()
            };
            return Err(JitError::Codegen {
                kernel: kernel.to_string(),
                message,
            });
        }
    };
    let compiled = ctx.compiled_code().ok_or_else(|| JitError::Codegen {
        kernel: kernel.to_string(),
        message: "no code after a successful compilation".to_string(),
    })?;
    let relocs = compiled
        .buffer
        .relocs()
        .iter()
        .map(|r| cranelift_module::ModuleReloc::from_mach_reloc(r, &ctx.func, id))
        .collect();
    Ok(ChunkCode {
        alignment,
        bytes: compiled.code_buffer().to_vec(),
        relocs,
    })
}

/// Generates the code of every function, on up to `threads` scoped threads that take chunks
/// in turn from a shared counter; the results come back in chunk order.
fn codegen_all(
    isa: &OwnedTargetIsa,
    funcs: Vec<(Function, cranelift_module::FuncId)>,
    kernel: &str,
    threads: usize,
) -> Result<Vec<ChunkCode>, JitError> {
    let threads = threads.min(funcs.len()).max(1);
    if threads == 1 {
        return funcs
            .into_iter()
            .map(|(func, id)| codegen_chunk(isa, func, id, kernel))
            .collect();
    }
    let n = funcs.len();
    let work: Vec<Mutex<Option<(Function, cranelift_module::FuncId)>>> =
        funcs.into_iter().map(|f| Mutex::new(Some(f))).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<Result<ChunkCode, JitError>>> = (0..n).map(|_| None).collect();
    let done: Vec<Vec<(usize, Result<ChunkCode, JitError>)>> = std::thread::scope(|scope| {
        let worker = || {
            let mut mine = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(slot) = work.get(i) else { break };
                let taken = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some((func, id)) = taken {
                    let result = codegen_chunk(isa, func, id, kernel);
                    let failed = result.is_err();
                    mine.push((i, result));
                    if failed {
                        // Stop the others early: the kernel will not be compiled.
                        next.store(n, std::sync::atomic::Ordering::Relaxed);
                        break;
                    }
                }
            }
            mine
        };
        let handles: Vec<_> = (0..threads).map(|_| scope.spawn(worker)).collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    for (i, result) in done.into_iter().flatten() {
        results[i] = Some(result);
    }
    // The first error in chunk order (a later chunk may have failed first), or every chunk.
    let mut codes = Vec::with_capacity(n);
    for result in results {
        match result {
            Some(r) => codes.push(r?),
            None => {
                return Err(JitError::Internal {
                    kernel: kernel.to_string(),
                    pc: 0,
                    what: "a chunk was not compiled after another failed".to_string(),
                })
            }
        }
    }
    Ok(codes)
}

/// [`compile_chunked`] with the chunks' code generation spread over up to `threads` threads.
pub fn compile_chunked_on(
    kernel: &Kernel,
    info: &KernelInfo,
    chunk_insts: usize,
    threads: usize,
) -> Result<JitKernel, JitError> {
    compile_with(
        kernel,
        info,
        JitOptions {
            chunk_insts,
            threads,
            ..JitOptions::default()
        },
    )
}

/// Code-generation choices that never change a kernel's results, only how fast it gets them
/// (tests and benches compare the two sides of each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JitOptions {
    /// Instructions per compiled function ([`compile_chunked`]).
    pub chunk_insts: usize,
    /// Threads that generate the chunks' code ([`compile_on`]); 1: the calling thread.
    pub threads: usize,
    /// Warp-aggregated atomics (`translate::memory`, "Warp aggregation"): when every executing
    /// lane of an integer add/sub/and/or/xor/min/max on global memory names one address, one
    /// host atomic does the warp's update. See [`Aggregation`].
    pub warp_aggregation: Aggregation,
    /// SIMD lanes (`translate::simd`): the pure 32-bit register work of fused regions runs
    /// four lanes at a time as `i32x4` code. On by default; `ATOMJIT_SIMD=off` (or `0`,
    /// `false`, `no`) turns it off.
    pub simd: bool,
    /// Running past divergent branches ([`crate::exec::WarpRunner::run_group_splitting`]):
    /// where the scheduler would run a divergent branch's fall-through lanes next anyway, the
    /// code goes on with them instead of returning (a lock handed from lane to lane of a warp
    /// costs one call per hand-over instead of two). On by default; `ATOMJIT_SPLIT=off` (or
    /// `0`, `false`, `no`) turns it off to compare.
    pub splits: bool,
}

/// Which atomics [`JitOptions::warp_aggregation`] aggregates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Aggregation {
    /// None: every lane performs its own host atomic.
    Off,
    /// **The default.** Atomics whose address is warp-invariant (`valid::uniform`): the
    /// compiler knows every executing lane names one address, so the warp's update is one
    /// host atomic with no run-time test (with a warp-invariant operand, no lane loop at all).
    Proven,
    /// Also atomics whose address is not proved invariant, tested at run time by comparing
    /// the executing lanes' addresses. Such an atomic cannot be fused with the instructions
    /// around it, which on one host thread costs more than the locked instructions it saves
    /// when the addresses differ (`docs/performance.md`), so it is not the default.
    Runtime,
}

impl Aggregation {
    /// From `ATOMJIT_WARP_AGG`: `off` (or `0`, `false`, `no`), `proven`, `runtime` (or `on`,
    /// `1`, `true`, `yes`, the run-time test's old spelling); anything else (or unset) is the
    /// default, [`Aggregation::Proven`].
    fn from_env() -> Aggregation {
        match std::env::var("ATOMJIT_WARP_AGG").as_deref().map(str::trim) {
            Ok("off" | "0" | "false" | "no") => Aggregation::Off,
            Ok("runtime" | "on" | "1" | "true" | "yes") => Aggregation::Runtime,
            Ok(_) | Err(_) => Aggregation::Proven,
        }
    }
}

impl Default for JitOptions {
    fn default() -> Self {
        JitOptions {
            chunk_insts: translate::CHUNK_INSTS,
            threads: 1,
            warp_aggregation: Aggregation::from_env(),
            simd: !env_off("ATOMJIT_SIMD"),
            splits: !env_off("ATOMJIT_SPLIT"),
        }
    }
}

/// Whether the environment variable `name` turns a default-on choice off (`off`, `0`,
/// `false`, `no`).
fn env_off(name: &str) -> bool {
    matches!(
        std::env::var(name).as_deref().map(str::trim),
        Ok("off" | "0" | "false" | "no")
    )
}

/// [`compile`] with explicit [`JitOptions`]. Translation to Cranelift IR stays on the calling
/// thread (it fills the kernel's side tables in chunk order); code generation, most of the
/// cost, runs chunk by chunk on up to `options.threads` threads; the code is then copied into
/// one module in chunk order, so the result does not depend on the thread count.
pub fn compile_with(
    kernel: &Kernel,
    info: &KernelInfo,
    options: JitOptions,
) -> Result<JitKernel, JitError> {
    let isa = host_isa()?;
    let mut tables = Box::new(SideTables::default());
    let plan = translate::Plan::new(kernel, info, &options);
    let funcs = build_functions(kernel, info, &isa, &mut tables, &plan)?;
    let codegen = |e: &dyn std::fmt::Display| JitError::Codegen {
        kernel: kernel.name.clone(),
        message: e.to_string(),
    };

    let mut module = JITModule::new(JITBuilder::with_isa(isa.clone(), default_libcall_names()));
    let mut declared = Vec::with_capacity(funcs.len());
    for (i, func) in funcs.into_iter().enumerate() {
        let id = module
            .declare_function(&format!("warp{i}"), Linkage::Local, &func.signature)
            .map_err(|e| codegen(&e))?;
        declared.push((func, id));
    }
    let ids: Vec<_> = declared.iter().map(|&(_, id)| id).collect();
    let codes = codegen_all(&isa, declared, &kernel.name, options.threads)?;
    for (&id, code) in ids.iter().zip(&codes) {
        module
            .define_function_bytes(id, code.alignment, &code.bytes, &code.relocs)
            .map_err(|e| codegen(&e))?;
    }
    module.finalize_definitions().map_err(|e| codegen(&e))?;
    let entries = ids
        .iter()
        .map(|&id| {
            let code = module.get_finalized_function(id);
            // SAFETY: `code` is a finalized function declared with `signature()`, which is
            // `(i64, i32, i32, i32) -> i32` in the host's default C calling convention,
            // matching `EntryFn`. The code stays mapped until `module` is freed in `Drop`.
            unsafe { std::mem::transmute::<*const u8, EntryFn>(code) }
        })
        .collect();
    Ok(JitKernel {
        entries,
        chunk_starts: plan.starts.iter().map(|&s| s as u32).collect(),
        module: Mutex::new(Some(module)),
        tables,
        num_insts: kernel.insts.len() as u32,
        num_regs: kernel.num_regs,
        num_preds: kernel.num_preds,
        warp_size: kernel.warp_size,
        resumable: plan.resume,
        splits: options.splits,
    })
}

/// A zero-padded copy of the constant bank, used only when the bank handed to `run_group` is
/// shorter than the kernel's reads (validation against the launch makes this unreachable).
fn padded_cbank(cbank: &[u8], needed: u64) -> Vec<u8> {
    let mut v = cbank.to_vec();
    v.resize(needed as usize, 0);
    v
}

/// What a [`WarpCtx`] is built from, besides the warp: two calls with equal keys get the same
/// context except for the per-warp fields (registers, predicates, counters, warp index, exited
/// lanes), which [`JitKernel::call`] sets on every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CtxKey {
    kernel: *const JitKernel,
    tables: *const SideTables,
    warp_size: u32,
    shared: (*const u8, usize),
    global: (*const u8, usize),
    cbank: (*const u8, usize),
    surfaces: (*const crate::ir::surface::SurfaceHeader, usize),
    ctaid: [u32; 3],
    ntid: [u32; 3],
    nctaid: [u32; 3],
}

/// A [`WarpCtx`] kept in a CTA's [`RunnerCache`] between calls, with the key it was built for
/// (checked once per quantum by `prepare_cta`, not per call).
struct CachedCtx {
    key: CtxKey,
    /// False after `prepare_cta` saw an environment it does not cache for.
    valid: bool,
    ctx: WarpCtx,
    /// What `ctx.surfaces_fast` points to (`fast_surfaces` of the pool it was built for;
    /// checked against the headers whenever the context is reused).
    _fast: Vec<FastSurface>,
}

/// The fast forms of a pool's headers, then one more with `dim` 0 (`FastSurface::NONE`): the
/// generated code reads entry `min(index, len)` for any header index, so its reads stay in the
/// vector however Cranelift moves them (they are movable loads, which it may hoist above the
/// bounds test), and an index past the pool takes the resolver's path.
fn fast_surfaces(pool: &[crate::ir::surface::SurfaceHeader]) -> Vec<FastSurface> {
    pool.iter()
        .map(FastSurface::of)
        .chain([FastSurface::NONE])
        .collect()
}

/// Whether `fast` holds the fast forms of `pool` (a cached context's copy is checked against
/// the headers it is about to serve again: they might be other headers at the same address).
fn fast_surfaces_match(fast: &[FastSurface], pool: &[crate::ir::surface::SurfaceHeader]) -> bool {
    fast.len() == pool.len() + 1 && fast.iter().zip(pool).all(|(f, h)| *f == FastSurface::of(h))
}

impl JitKernel {
    fn ctx_key(&self, env: &CtaEnv) -> CtxKey {
        let shared = env.shared.region();
        let global = env.global.region();
        CtxKey {
            kernel: self,
            tables: &*self.tables,
            warp_size: self.warp_size,
            shared: (shared.as_ptr(), shared.len() as usize),
            global: (global.as_ptr(), global.len() as usize),
            cbank: (env.cbank.as_ptr(), env.cbank.len()),
            surfaces: (env.surfaces.as_ptr(), env.surfaces.len()),
            ctaid: env.ctaid,
            ntid: env.ntid,
            nctaid: env.nctaid,
        }
    }

    /// The call context for the CTA of `env`, with `cbank` as the bank operand reads use (the
    /// bank itself, or a padded copy that outlives the context's use) and `fast` the fast
    /// forms of `env.surfaces` (likewise outliving it). The per-warp fields are left null/zero
    /// for [`JitKernel::call`] to set.
    fn build_ctx(&self, env: &CtaEnv, cbank: &[u8], fast: &[FastSurface]) -> WarpCtx {
        let ntid = env.ntid.map(|n| n.max(1));
        let threads = ntid.iter().map(|&n| u64::from(n)).product::<u64>();
        let warp_size = self.warp_size.clamp(1, 32);
        let nwarps = threads
            .div_ceil(u64::from(warp_size))
            .min(u64::from(u32::MAX)) as u32;
        let shared = env.shared.region();
        let global = env.global.region();
        WarpCtx {
            regs: std::ptr::null_mut(),
            preds: std::ptr::null_mut(),
            shared_base: shared.as_ptr(),
            shared_limit: warp_ctx::limits(shared.len()),
            global_base: global.as_ptr(),
            global_limit: warp_ctx::limits(global.len()),
            cbank: cbank.as_ptr(),
            // Loads in the constant space are checked against the bank as given (a padded copy
            // only serves operand reads).
            cbank_limit: warp_ctx::limits(env.cbank.len() as u64),
            stats: std::ptr::null_mut(),
            tables: &*self.tables,
            slow_lanes: slow::slow_lanes,
            ctaid: env.ctaid,
            ntid,
            nctaid: env.nctaid,
            warp_id: 0,
            nwarps,
            warp_size,
            exited: 0,
            out_a: 0,
            out_b: 0,
            out_c: 0,
            out_d: 0,
            out_addr: 0,
            out_insts: 0,
            rmw_value: slow::rmw_value,
            surfaces: env.surfaces.as_ptr(),
            surfaces_len: env.surfaces.len(),
            surface_lane: slow::surface_lane,
            surface_signed: 0,
            surface_fault: None,
            split_ok: 0,
            spin_exits: [NO_STOP; 2],
            split_out: [0; 4],
            wide_cas_chunks: 0,
            surfaces_fast: fast.as_ptr(),
        }
    }

    #[inline(always)]
    /// Whether the compiled function can run a group at `pc` (if not, the interpreter runs it),
    /// after making sure the warp's files are as large as the generated code assumes.
    fn prepare_warp(&self, warp: &mut WarpState, pc: u32) -> bool {
        if !self.resumable(pc) {
            return false;
        }
        self.ensure_files(warp);
        true
    }

    /// Whether the compiled function can start a group at `pc`. The scheduler only starts
    /// groups at branch targets, fall-throughs, barrier resumptions and reconvergence points;
    /// any other pc is outside the compiled entry table, and the reference interpreter runs
    /// that group instead (same semantics).
    #[inline(always)]
    fn resumable(&self, pc: u32) -> bool {
        self.resumable.get(pc as usize).copied().unwrap_or(true)
    }

    /// The generated code indexes registers and predicates without bounds checks: makes sure
    /// the warp's files are as large as the kernel's (they are for a warp created for it).
    #[inline(always)]
    fn ensure_files(&self, warp: &mut WarpState) {
        let reg_words = self.num_regs as usize * WARP_STRIDE;
        if warp.regs.len() < reg_words || warp.preds.len() < self.num_preds as usize {
            self.grow_files(warp);
        }
    }

    /// Grows a warp's register and predicate files to the kernel's sizes (zero-filled).
    #[cold]
    #[inline(never)]
    fn grow_files(&self, warp: &mut WarpState) {
        let reg_words = self.num_regs as usize * WARP_STRIDE;
        if warp.regs.len() < reg_words {
            warp.regs.resize(reg_words, 0);
        }
        if warp.preds.len() < self.num_preds as usize {
            warp.preds.resize(self.num_preds as usize, 0);
        }
    }

    #[inline(always)]
    /// Runs the compiled function on `ctx` (built by [`JitKernel::build_ctx`] for `env`) for
    /// the lanes `mask` of `warp` from `pc`, after setting the per-warp fields of `ctx`.
    fn call(
        &self,
        ctx: &mut WarpCtx,
        warp: &mut WarpState,
        env: &CtaEnv,
        pc: u32,
        mask: u32,
        stop_pc: Option<u32>,
    ) -> GroupExit {
        let code = self.run_code(ctx, warp, pc, mask, stop_pc);
        self.event(code, ctx, warp, env, (pc, mask, stop_pc))
    }

    /// The compiled code's part of [`JitKernel::call`]: sets the per-warp fields of `ctx`,
    /// runs the code from `pc` for the lanes `mask` and returns its event code, with the
    /// exited lanes copied back into `warp`. `ctx` was built for the environment of the call
    /// (see the safety comment below).
    #[inline(always)]
    fn run_code(
        &self,
        ctx: &mut WarpCtx,
        warp: &mut WarpState,
        pc: u32,
        mask: u32,
        stop_pc: Option<u32>,
    ) -> u32 {
        ctx.regs = warp.regs.as_mut_ptr();
        ctx.preds = warp.preds.as_mut_ptr();
        ctx.stats = &mut warp.stats;
        ctx.warp_id = warp.warp_id;
        ctx.exited = warp.exited;
        // A reused context starts every call as a fresh one would.
        (ctx.out_a, ctx.out_b, ctx.out_c, ctx.out_d) = (0, 0, 0, 0);
        (ctx.out_addr, ctx.out_insts) = (0, 0);
        (ctx.surface_signed, ctx.surface_fault) = (0, None);
        let pc_arg = pc.min(self.num_insts);
        // SAFETY: `ctx` points at live, correctly sized memory for the whole call: the register
        // file (`num_regs * 32` words, ensured by `prepare_warp`), the predicate file, and the
        // warp's counters (set just above from `warp`, borrowed for the call); the shared
        // window, the global arena and the constant bank of `env` (`run_group` built `ctx` for
        // `env` just now; the contracts of `run_group_prepared`, `run_group_splitting` and
        // `run_warps` say `prepare_cta` last saw an equal `env`, and `prepare_cta` rebuilds the
        // context unless its `CtxKey` shows it was built for the same regions at the same
        // addresses and lengths; `run_fresh_ctas` calls `prepare_cta` itself for its first CTA
        // and then changes only `ctaid`, the one field in which its CTAs' environments differ;
        // the generated code checks every device access against the limits in `ctx` before
        // touching memory; the bank is at least `cbank_needed` bytes or a padded copy
        // the caller keeps alive; `surfaces_fast` points to the `surfaces_len + 1` fast forms
        // built with the context, kept beside it, and checked against the pool's headers
        // when it is reused, and the generated code reads entry `min(index, surfaces_len)`).
        // `pc_arg` is at most the instruction count (the
        // implicit-exit block). The regions are accessed with plain moves while other
        // threads may use host atomics on them, which is what `Region` is designed for (every
        // access is naturally aligned and single-copy atomic on the host).
        let code = unsafe { self.enter(ctx, pc_arg, mask, stop_pc.unwrap_or(NO_STOP)) };
        warp.exited = ctx.exited;
        code
    }

    /// The [`GroupExit`] of the event `code` that [`JitKernel::run_code`] returned after
    /// running the group `(pc, mask, stop_pc)` of `warp`, from the payload in `ctx`.
    #[inline(always)]
    fn event(
        &self,
        code: u32,
        ctx: &mut WarpCtx,
        warp: &mut WarpState,
        env: &CtaEnv,
        (pc, mask, stop_pc): (u32, u32, Option<u32>),
    ) -> GroupExit {
        // The generated code stored each payload word by itself: read each by itself, so that
        // the compiler does not join two into one wider load, which the host cannot forward
        // from the two narrower stores (a stall of some ten cycles per event).
        let out = |field: &u32| {
            // SAFETY: a reference to a field of `ctx`: valid, aligned and initialised.
            unsafe { std::ptr::read_volatile(field) }
        };
        match Event::from_code(code) {
            Some(Event::Exited) => GroupExit::Exited,
            Some(Event::Yield) => GroupExit::Yield {
                pc: out(&ctx.out_a),
                mask: out(&ctx.out_b),
            },
            Some(Event::Diverge) => {
                let branch_pc = out(&ctx.out_a);
                GroupExit::Diverge(Split {
                    branch_pc,
                    taken_pc: out(&ctx.out_b),
                    taken: out(&ctx.out_c),
                    fall_pc: branch_pc + 1,
                    fall: out(&ctx.out_d),
                })
            }
            Some(Event::Barrier) => GroupExit::Barrier {
                pc: out(&ctx.out_a),
                mask: out(&ctx.out_b),
                id: out(&ctx.out_c),
            },
            Some(Event::Reconverge) => GroupExit::Reconverge {
                mask: out(&ctx.out_b),
            },
            // Only a pc outside the entry table gets here, on the first call of `enter`
            // (nothing ran; a `Continue` pc is always a chunk's entry); the generated code
            // returns no other code.
            Some(Event::NotResumable) | None => {
                crate::interp::run_group(warp, env, pc, mask, stop_pc)
            }
            Some(Event::Interpret) => {
                crate::interp::run_group(warp, env, out(&ctx.out_a), out(&ctx.out_b), stop_pc)
            }
            // `enter` follows every `Continue`: running this group on the interpreter from
            // `pc` would repeat what the earlier chunks did, so this is a backend bug, which
            // the scheduler catches and reports as an internal error.
            Some(Event::Continue) => panic!("a chunk's `Continue` escaped `JitKernel::enter`"),
            Some(Event::Trap) => match self.tables.trap_sites.get(ctx.out_a as usize) {
                Some(site) => {
                    if let Some((op, elements)) = site.atomic {
                        // The lanes before the faulting one performed the atomic (each of its
                        // elements).
                        let below = 1u32.checked_shl(ctx.out_b).map_or(u32::MAX, |b| b - 1);
                        warp.stats.atomics[op.index()] +=
                            u64::from((ctx.out_c & below).count_ones() * elements);
                    }
                    // A surface site: the resolver recorded the reason, surface and coordinates.
                    let surface = if site.surface {
                        ctx.surface_fault.take()
                    } else {
                        None
                    };
                    let reason = match surface {
                        Some((reason, _)) => reason,
                        None if ctx.out_addr % u64::from(site.size.max(1)) != 0 => {
                            TrapReason::MisalignedAddress
                        }
                        None => TrapReason::AddressOutOfRange,
                    };
                    GroupExit::Trap(TrapInfo {
                        reason,
                        pc: site.pc,
                        lane: ctx.out_b,
                        space: site.space,
                        address: ctx.out_addr,
                        surface: surface.map(|(_, s)| s),
                    })
                }
                // The generated code only reports sites it registered: a backend bug, which the
                // scheduler catches and reports as an internal error.
                None => panic!(
                    "the compiled code reported trap site {} of {}",
                    ctx.out_a,
                    self.tables.trap_sites.len()
                ),
            },
        }
    }
}

impl JitKernel {
    /// Runs the compiled code from `pc`: the function of `pc`'s chunk, then, while control
    /// moves to another chunk (`Continue`), that chunk's function. Returns the first other
    /// event code.
    ///
    /// # Safety
    /// As for a call of one entry function: `ctx` is a live, correctly built context for this
    /// kernel (see `call`), and `pc <= num_insts`.
    #[inline(always)]
    unsafe fn enter(&self, ctx: &mut WarpCtx, mut pc: u32, mut mask: u32, stop: u32) -> u32 {
        loop {
            let chunk = self
                .chunk_starts
                .partition_point(|&s| s <= pc)
                .saturating_sub(1);
            // SAFETY: per this function's contract; every entry has the same contract, and a
            // `Continue` pc is a chunk start below `num_insts`.
            let code = unsafe { (self.entries[chunk])(ctx, pc, mask, stop) };
            if code != Event::Continue as u32 {
                return code;
            }
            (pc, mask) = (ctx.out_a, ctx.out_b);
        }
    }

    #[cold]
    #[inline(never)]
    fn run_group_cold(
        &self,
        warp: &mut WarpState,
        env: &CtaEnv,
        pc: u32,
        mask: u32,
        stop_pc: Option<u32>,
    ) -> GroupExit {
        self.run_group(warp, env, pc, mask, stop_pc)
    }
}

impl WarpRunner for JitKernel {
    fn run_group(
        &self,
        warp: &mut WarpState,
        env: &CtaEnv,
        pc: u32,
        mask: u32,
        stop_pc: Option<u32>,
    ) -> GroupExit {
        if stop_pc == Some(pc) {
            return GroupExit::Reconverge { mask };
        }
        if !self.prepare_warp(warp, pc) {
            return crate::interp::run_group(warp, env, pc, mask, stop_pc);
        }
        let padded;
        let cbank = if (env.cbank.len() as u64) < self.tables.cbank_needed {
            padded = padded_cbank(env.cbank, self.tables.cbank_needed);
            &padded[..]
        } else {
            env.cbank
        };
        let fast = fast_surfaces(env.surfaces);
        let mut ctx = self.build_ctx(env, cbank, &fast);
        self.call(&mut ctx, warp, env, pc, mask, stop_pc)
    }

    /// Builds the invariant part of the call context (memory regions and their limits,
    /// constant bank, launch geometry, slow-path pointers) for the CTA of `env`, unless `cache`
    /// holds one built for the same regions and geometry (`CtxKey`). A bank that needs
    /// padding (never for a validated launch) is not cached: its groups take `run_group`.
    fn prepare_cta(&self, cache: &mut RunnerCache, env: &CtaEnv) {
        if (env.cbank.len() as u64) < self.tables.cbank_needed {
            if let Some(cached) = cache.get_mut::<CachedCtx>() {
                cached.valid = false;
            }
            return;
        }
        let key = self.ctx_key(env);
        let fresh = || {
            let fast = fast_surfaces(env.surfaces);
            let ctx = self.build_ctx(env, env.cbank, &fast);
            // `ctx` points into `fast`'s heap buffer, which moving the vector keeps.
            CachedCtx {
                key,
                valid: true,
                ctx,
                _fast: fast,
            }
        };
        match cache.get_mut::<CachedCtx>() {
            Some(cached)
                if cached.valid
                    && cached.key == key
                    && fast_surfaces_match(&cached._fast, env.surfaces) => {}
            // The next CTA of the same launch in this slot: only the CTA index differs.
            Some(cached)
                if cached.valid
                    && CtxKey {
                        ctaid: key.ctaid,
                        ..cached.key
                    } == key
                    && fast_surfaces_match(&cached._fast, env.surfaces) =>
            {
                cached.key.ctaid = key.ctaid;
                cached.ctx.ctaid = key.ctaid;
            }
            // Another launch or kernel: rebuild in place, without reallocating.
            Some(cached) => *cached = fresh(),
            None => {
                cache.set(fresh());
            }
        }
    }

    /// As `run_group`, with the context `prepare_cta` left in `cache`: only the per-warp
    /// fields are set per call.
    unsafe fn run_group_prepared(
        &self,
        cache: &mut RunnerCache,
        warp: &mut WarpState,
        env: &CtaEnv,
        pc: u32,
        mask: u32,
        stop_pc: Option<u32>,
    ) -> GroupExit {
        let cached = match cache.get_mut::<CachedCtx>() {
            Some(cached) if cached.valid && stop_pc != Some(pc) && self.prepare_warp(warp, pc) => {
                cached
            }
            // Not prepared, at its own stop pc, or not a resume point: `run_group` handles
            // each exactly as before.
            _ => return self.run_group_cold(warp, env, pc, mask, stop_pc),
        };
        // The caller's contract (prepare_cta saw an `env` equal to this one) makes the cached
        // context exactly the one `run_group` would build, so `call`'s requirements hold.
        self.call(&mut cached.ctx, warp, env, pc, mask, stop_pc)
    }

    /// `run_group_prepared`, with `ctx.split_ok` set for the call (and cleared after it): the
    /// generated code records in `ctx.split_out` the first divergent branch it runs past,
    /// and what it returns is then the fall-through lanes' event.
    unsafe fn run_group_splitting(
        &self,
        cache: &mut RunnerCache,
        warp: &mut WarpState,
        env: &CtaEnv,
        pc: u32,
        mask: u32,
        spin_exits: &[u32],
    ) -> (Option<Split>, GroupExit) {
        let cached = match cache.get_mut::<CachedCtx>() {
            Some(cached) if self.splits && cached.valid && self.prepare_warp(warp, pc) => cached,
            _ => {
                // SAFETY: this function's contract is `run_group_prepared`'s.
                let exit = unsafe { self.run_group_prepared(cache, warp, env, pc, mask, None) };
                return (None, exit);
            }
        };
        let ctx = &mut cached.ctx;
        ctx.split_ok = 1;
        ctx.spin_exits = [
            spin_exits.first().copied().unwrap_or(NO_STOP),
            spin_exits.get(1).copied().unwrap_or(NO_STOP),
        ];
        // As in `run_group_prepared`: the caller's contract makes the cached context the one
        // `run_group` would build.
        let code = self.run_code(ctx, warp, pc, mask, None);
        let split = (ctx.split_ok == 0).then(|| {
            let [branch_pc, taken_pc, taken, fall] = ctx.split_out;
            Split {
                branch_pc,
                taken_pc,
                taken,
                fall_pc: branch_pc + 1,
                fall,
            }
        });
        ctx.split_ok = 0;
        let group = match split {
            Some(s) => (s.fall_pc, s.fall, None),
            None => (pc, mask, None),
        };
        (split, self.event(code, ctx, warp, env, group))
    }

    /// The groups of a run of warps, with the context `prepare_cta` left in `cache`: one
    /// downcast of the cache and one check of its validity per run; per warp, its pc's
    /// resumability, the warp's files' sizes, its fields of the context, the call, and the
    /// event check. An event other than an exit is decoded as `call` does and offered to the
    /// scheduler; a pc outside the entry table runs on the interpreter, as in
    /// `run_group_prepared`; a cache `run_group_prepared` would not use runs warp by warp
    /// through it.
    unsafe fn run_warps(
        &self,
        cache: &mut RunnerCache,
        run: &mut dyn WarpRun<'_>,
        env: &CtaEnv,
    ) -> (usize, Option<GroupExit>) {
        match cache.get_mut::<CachedCtx>() {
            Some(cached) if cached.valid => {
                let ctx = &mut cached.ctx;
                let groups = run.groups();
                for (i, &GroupAt { pc, mask }) in groups.iter().enumerate() {
                    let warp = run.state(i);
                    // (Every launch group starts at pc 0, and pc 0 is an entry: only a warp
                    // released from a barrier needs the table.)
                    let exit = if pc == 0 || self.resumable(pc) {
                        self.ensure_files(warp);
                        // As in `run_group_prepared`: the caller's contract makes the cached
                        // context the one `run_group` would build.
                        let code = self.run_code(ctx, warp, pc, mask, None);
                        if code == Event::Exited as u32 {
                            continue;
                        }
                        self.event(code, ctx, warp, env, (pc, mask, None))
                    } else {
                        self.run_group_cold(warp, env, pc, mask, None)
                    };
                    if exit != GroupExit::Exited && !run.pass(i, &exit) {
                        return (i + 1, Some(exit));
                    }
                }
                (groups.len(), None)
            }
            // SAFETY: this function's contract is `run_group_prepared`'s.
            _ => unsafe { run_warps_each(self, cache, run, env) },
        }
    }

    /// One downcast of the cache and one check of its validity for all the phases, and each
    /// warp's files made large enough once; per group, its pc's resumability (every pc a phase
    /// starts at, pc 0 or the instruction after a barrier, is an entry, but a release can
    /// only say so through the table), its fields of the context, the call and, for anything
    /// but an exit, the event's decoding. A cache `run_group_prepared` would not use runs the
    /// default way through it.
    unsafe fn run_phases(
        &self,
        cache: &mut RunnerCache,
        env: &CtaEnv,
        (states, groups): (&mut [Option<&mut WarpState>], &mut [PhaseGroup]),
        limit: u32,
    ) -> PhasesRun {
        match cache.get_mut::<CachedCtx>() {
            Some(cached) if cached.valid => {
                for state in states.iter_mut().flatten() {
                    self.ensure_files(state);
                }
                let ctx = &mut cached.ctx;
                run_phases_with(states, groups, limit, |warp, pc, mask| {
                    if pc != 0 && !self.resumable(pc) {
                        return self.run_group_cold(warp, env, pc, mask, None);
                    }
                    // As in `run_group_prepared`: the caller's contract makes the cached
                    // context the one `run_group` would build.
                    let code = self.run_code(ctx, warp, pc, mask, None);
                    if code == Event::Exited as u32 {
                        return GroupExit::Exited;
                    }
                    self.event(code, ctx, warp, env, (pc, mask, None))
                })
            }
            // SAFETY: this function's contract is `run_group_prepared`'s.
            _ => unsafe { run_phases_each(self, cache, env, (states, groups), limit) },
        }
    }

    /// One `prepare_cta` for the first CTA and one downcast of the cache per call; per CTA only
    /// the context's `ctaid` changes (every other field of the key is the same for every CTA
    /// of the run, so the context is the one `prepare_cta` would build); per warp the state's
    /// recycling, its fields of the context, the call and the event check.
    fn run_fresh_ctas(
        &self,
        cache: &mut RunnerCache,
        run: &mut dyn FreshRun,
        env: &CtaEnv,
    ) -> (u64, Option<(u64, usize, GroupExit)>) {
        let mut finished = 0;
        let Some((mut linear, mut ctaid)) = run.next_cta() else {
            return (0, None);
        };
        self.prepare_cta(cache, &CtaEnv { ctaid, ..*env });
        let cached = match cache.get_mut::<CachedCtx>() {
            Some(cached) if cached.valid => cached,
            // A bank shorter than the kernel reads (validation makes this unreachable): CTA
            // by CTA through `run_group`, as the trait's default would.
            _ => return run_fresh_each(self, cache, run, env, Some((linear, ctaid))),
        };
        loop {
            cached.key.ctaid = ctaid;
            cached.ctx.ctaid = ctaid;
            let FreshWarps {
                groups,
                state: warp,
                zero,
            } = run.warps();
            for (w, &GroupAt { pc, mask }) in groups.iter().enumerate() {
                warp.recycle(w as u32, mask, zero);
                self.ensure_files(warp);
                // `pc` is 0, an entry. The context is the one `prepare_cta` would build for
                // this CTA (see above), so `run_code`'s requirements hold.
                let code = self.run_code(&mut cached.ctx, warp, pc, mask, None);
                if code == Event::Exited as u32 {
                    continue;
                }
                let env = CtaEnv { ctaid, ..*env };
                let exit = self.event(code, &mut cached.ctx, warp, &env, (pc, mask, None));
                if exit != GroupExit::Exited {
                    return (finished, Some((linear, w, exit)));
                }
            }
            finished += 1;
            match run.next_cta() {
                Some(next) => (linear, ctaid) = next,
                None => return (finished, None),
            }
        }
    }
}
