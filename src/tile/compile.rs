//! The compiled path: one Cranelift function per call shape ([`Key`]), which runs the result
//! elements `[start, end)` of a call described by a parameter block ([`pack_params`]).
//!
//! ```text
//! fn(params: *const u64, start: u64, end: u64)
//!   coord = unravel(start); p_j = ptr_j + Σ coord[d]·stride_jd     (once per chunk)
//! body:
//!   idx_k = load(p_k) as u64 (sign-extended if signed)             (one per array dim)
//!   in = ∧ idx_k < shape_k
//!   in ? old = ATOMIC(base + Σ idx_k·astride_k, values...) : old = fallback
//!   *res++ = old
//!   i++; bump the innermost coordinate, carrying outwards; pointers follow
//! ```
//!
//! Zero strides (broadcast dimensions) are part of the key and emit no pointer arithmetic.
//! Every atomic is a Cranelift `atomic_rmw`/`atomic_cas`/`atomic_load`: sequentially
//! consistent, which is a valid strengthening of every order cuTile accepts (`RELAXED`,
//! `ACQUIRE`, `RELEASE`, `ACQ_REL`) at every scope, as the PTX lowering does it. Integer add,
//! exchange, min/max and the bitwise ops are `atomic_rmw` (x86-64 lowers add and exchange to
//! `lock xadd`/`xchg`, the others to a `lock cmpxchg` loop); float add is a CAS loop on the bit
//! pattern, 16-bit floats computing the sum through the same Rust function the reference uses.
//! CAS compares bit patterns.

use super::reference::{add_bf16_bits, add_f16_bits};
use super::{DType, Kind, Prepared, RmwOp, TileError};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::types::{F32, F64, I16, I32, I64, I8};
use cranelift_codegen::ir::{
    AbiParam, AtomicRmwOp, BlockArg, Function, InstBuilder, MemFlagsData, Signature, Type,
    UserFuncName, Value,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use std::sync::Mutex;

/// What a compiled function is specialised on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Key {
    kind: Kind,
    dtype: DType,
    array_rank: usize,
    result_rank: usize,
    index_dtypes: Vec<DType>,
    values: usize,
    /// Per input (indices, then values), per result dimension: the stride is zero.
    zero: Vec<Vec<bool>>,
}

impl Key {
    pub fn of(p: &Prepared) -> Key {
        Key {
            kind: p.kind,
            dtype: p.dtype,
            array_rank: p.array_shape.len(),
            result_rank: p.shape.len(),
            index_dtypes: p.indices.iter().map(|i| i.dtype).collect(),
            values: p.values.len(),
            zero: p
                .indices
                .iter()
                .chain(&p.values)
                .map(|i| i.strides.iter().map(|&s| s == 0).collect())
                .collect(),
        }
    }
}

/// Word offsets in the parameter block.
struct Layout {
    r: usize,
    a: usize,
}

impl Layout {
    const BASE: usize = 0;
    const OUT: usize = 1;
    fn shape(&self, d: usize) -> usize {
        2 + d
    }
    fn array_shape(&self, k: usize) -> usize {
        2 + self.r + 2 * k
    }
    fn array_stride(&self, k: usize) -> usize {
        3 + self.r + 2 * k
    }
    fn input_ptr(&self, j: usize) -> usize {
        2 + self.r + 2 * self.a + j * (1 + self.r)
    }
    fn input_stride(&self, j: usize, d: usize) -> usize {
        self.input_ptr(j) + 1 + d
    }
    fn words(&self, inputs: usize) -> usize {
        self.input_ptr(inputs)
    }
}

/// The parameter block of `p` writing its results to `out`.
pub(crate) fn pack_params(p: &Prepared, out: *mut u8) -> Vec<u64> {
    let l = Layout {
        r: p.shape.len(),
        a: p.array_shape.len(),
    };
    let inputs: Vec<_> = p.indices.iter().chain(&p.values).collect();
    let mut w = vec![0u64; l.words(inputs.len())];
    w[Layout::BASE] = p.base as u64;
    w[Layout::OUT] = out as u64;
    for (d, &n) in p.shape.iter().enumerate() {
        w[l.shape(d)] = n as u64;
    }
    for k in 0..l.a {
        w[l.array_shape(k)] = p.array_shape[k];
        w[l.array_stride(k)] = p.array_strides[k] as u64;
    }
    for (j, input) in inputs.iter().enumerate() {
        w[l.input_ptr(j)] = input.ptr as u64;
        for (d, &s) in input.strides.iter().enumerate() {
            w[l.input_stride(j, d)] = s as u64;
        }
    }
    w
}

type EntryFn = unsafe extern "C" fn(*const u64, u64, u64);

/// A compiled call shape.
pub(crate) struct Compiled {
    entry: EntryFn,
    /// The code's owner; only touched again to free the code on drop.
    module: Mutex<Option<JITModule>>,
}

impl Drop for Compiled {
    fn drop(&mut self) {
        let module = match self.module.get_mut() {
            Ok(m) => m.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(module) = module {
            // SAFETY: `&mut self` proves no call is executing this code, and the entry pointer
            // dies with `self`.
            unsafe { module.free_memory() };
        }
    }
}

impl Compiled {
    pub fn new(key: &Key) -> Result<Compiled, TileError> {
        let isa = crate::jit::host_isa().map_err(|e| TileError::Codegen(e.to_string()))?;
        let mut sig = Signature::new(isa.default_call_conv());
        for _ in 0..3 {
            sig.params.push(AbiParam::new(I64));
        }
        let func = build(key, sig.clone(), isa.frontend_config());
        let codegen = |e: &dyn std::fmt::Display| TileError::Codegen(e.to_string());
        let mut module = JITModule::new(JITBuilder::with_isa(isa.clone(), default_libcall_names()));
        let id = module
            .declare_function("tile", Linkage::Local, &sig)
            .map_err(|e| codegen(&e))?;
        let mut ctx = module.make_context();
        ctx.func = func;
        module
            .define_function(id, &mut ctx)
            .map_err(|e| codegen(&format!("{e:?}")))?;
        module.finalize_definitions().map_err(|e| codegen(&e))?;
        let code = module.get_finalized_function(id);
        // SAFETY: `code` is the finalized function declared with `sig`, `(i64, i64, i64)` in
        // the host's default C calling convention, which is `EntryFn`; it stays mapped until
        // `module` is freed in `Drop`.
        let entry = unsafe { std::mem::transmute::<*const u8, EntryFn>(code) };
        Ok(Compiled {
            entry,
            module: Mutex::new(Some(module)),
        })
    }

    /// Runs result elements `[start, end)`.
    ///
    /// # Safety
    /// `params` must be [`pack_params`] of a validated call of this key, whose array, inputs
    /// and output buffer are alive; concurrent calls must cover disjoint ranges.
    pub unsafe fn call(&self, params: &[u64], start: u64, end: u64) {
        // SAFETY: the caller's contract; the code reads `params` and the inputs, stores to the
        // output range, and touches the array only at in-bounds indices.
        unsafe { (self.entry)(params.as_ptr(), start, end) }
    }
}

fn int_type(d: DType) -> Type {
    match d.size() {
        1 => I8,
        2 => I16,
        4 => I32,
        _ => I64,
    }
}

fn arg(v: Value) -> BlockArg {
    BlockArg::Value(v)
}

/// The Cranelift function of `key`.
fn build(
    key: &Key,
    sig: Signature,
    frontend: cranelift_codegen::isa::TargetFrontendConfig,
) -> Function {
    let mut func = Function::with_name_signature(UserFuncName::testcase("tile_atomic"), sig);
    let mut fbc = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fbc);
    let l = Layout {
        r: key.result_rank,
        a: key.array_rank,
    };
    let (r, a) = (l.r, l.a);
    let n_inputs = a + key.values;
    // Parameters and inputs are aligned (checked by the views) and valid: trusted.
    let flags = MemFlagsData::trusted();
    let it = int_type(key.dtype);
    let esize = key.dtype.size() as i64;

    let entry = b.create_block();
    let body = b.create_block();
    let do_op = b.create_block();
    let oob = b.create_block();
    let next = b.create_block();
    let exit = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry)[0];
    let start = b.block_params(entry)[1];
    let end = b.block_params(entry)[2];
    let ld =
        |b: &mut FunctionBuilder, word: usize| b.ins().load(I64, flags, params, (word * 8) as i32);

    let base = ld(&mut b, Layout::BASE);
    let out = ld(&mut b, Layout::OUT);
    let shape: Vec<Value> = (0..r).map(|d| ld(&mut b, l.shape(d))).collect();
    let ashape: Vec<Value> = (0..a).map(|k| ld(&mut b, l.array_shape(k))).collect();
    let astride: Vec<Value> = (0..a).map(|k| ld(&mut b, l.array_stride(k))).collect();
    let strides: Vec<Vec<Option<Value>>> = (0..n_inputs)
        .map(|j| {
            (0..r)
                .map(|d| (!key.zero[j][d]).then(|| ld(&mut b, l.input_stride(j, d))))
                .collect()
        })
        .collect();

    let coord: Vec<Variable> = (0..r).map(|_| b.declare_var(I64)).collect();
    let ptrs: Vec<Variable> = (0..n_inputs).map(|_| b.declare_var(I64)).collect();
    let i_var = b.declare_var(I64);
    let res_var = b.declare_var(I64);

    // Unravel `start` into coordinates, and place every input pointer there.
    let mut rem = start;
    let mut coords = vec![start; r];
    for d in (0..r).rev() {
        coords[d] = b.ins().urem(rem, shape[d]);
        rem = b.ins().udiv(rem, shape[d]);
        b.def_var(coord[d], coords[d]);
    }
    for j in 0..n_inputs {
        let mut p = ld(&mut b, l.input_ptr(j));
        for d in 0..r {
            if let Some(s) = strides[j][d] {
                let off = b.ins().imul(coords[d], s);
                p = b.ins().iadd(p, off);
            }
        }
        b.def_var(ptrs[j], p);
    }
    let res0 = b.ins().imul_imm_s(start, esize);
    let res0 = b.ins().iadd(out, res0);
    b.def_var(res_var, res0);
    b.def_var(i_var, start);
    let empty = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, start, end);
    b.ins().brif(empty, exit, &[], body, &[]);

    // body: indices, bounds, values.
    b.switch_to_block(body);
    let mut idx = Vec::with_capacity(a);
    let mut in_bounds: Option<Value> = None;
    for k in 0..a {
        let p = b.use_var(ptrs[k]);
        let d = key.index_dtypes[k];
        let v = match d.size() {
            8 => b.ins().load(I64, flags, p, 0),
            1 if d.is_signed() => b.ins().sload8(I64, flags, p, 0),
            1 => b.ins().uload8(I64, flags, p, 0),
            2 if d.is_signed() => b.ins().sload16(I64, flags, p, 0),
            2 => b.ins().uload16(I64, flags, p, 0),
            _ if d.is_signed() => b.ins().sload32(flags, p, 0),
            _ => b.ins().uload32(flags, p, 0),
        };
        let ok = b.ins().icmp(IntCC::UnsignedLessThan, v, ashape[k]);
        in_bounds = Some(match in_bounds {
            Some(acc) => b.ins().band(acc, ok),
            None => ok,
        });
        idx.push(v);
    }
    let vals: Vec<Value> = (0..key.values)
        .map(|v| {
            let p = b.use_var(ptrs[a + v]);
            b.ins().load(it, flags, p, 0)
        })
        .collect();
    match in_bounds {
        Some(c) => {
            b.ins().brif(c, do_op, &[], oob, &[]);
        }
        None => {
            b.ins().jump(do_op, &[]);
        }
    }

    // do_op: the atomic.
    b.switch_to_block(do_op);
    let mut addr = base;
    for k in 0..a {
        let off = b.ins().imul(idx[k], astride[k]);
        addr = b.ins().iadd(addr, off);
    }
    let old = emit_atomic(&mut b, key, it, addr, &vals);
    let res = b.use_var(res_var);
    b.ins().store(flags, old, res, 0);
    b.ins().jump(next, &[]);

    // oob: CAS returns its expected element, the others zero.
    b.switch_to_block(oob);
    let fallback = match key.kind {
        Kind::Cas => vals[0],
        Kind::Rmw(_) => b.ins().iconst(it, 0),
    };
    let res = b.use_var(res_var);
    b.ins().store(flags, fallback, res, 0);
    b.ins().jump(next, &[]);

    // next: advance i, the result pointer and the coordinates.
    b.switch_to_block(next);
    let i = b.use_var(i_var);
    let i1 = b.ins().iadd_imm_s(i, 1);
    b.def_var(i_var, i1);
    let res = b.use_var(res_var);
    let res1 = b.ins().iadd_imm_s(res, esize);
    b.def_var(res_var, res1);
    let done = b.ins().icmp(IntCC::UnsignedGreaterThanOrEqual, i1, end);
    if r == 0 {
        b.ins().jump(exit, &[]);
    } else {
        let carry: Vec<_> = (0..r).map(|_| b.create_block()).collect();
        b.ins().brif(done, exit, &[], carry[r - 1], &[]);
        for d in (0..r).rev() {
            b.switch_to_block(carry[d]);
            let c = b.use_var(coord[d]);
            let c1 = b.ins().iadd_imm_s(c, 1);
            b.def_var(coord[d], c1);
            for j in 0..n_inputs {
                if let Some(s) = strides[j][d] {
                    let p = b.use_var(ptrs[j]);
                    let p1 = b.ins().iadd(p, s);
                    b.def_var(ptrs[j], p1);
                }
            }
            let wrap = b.create_block();
            let inside = b.ins().icmp(IntCC::UnsignedLessThan, c1, shape[d]);
            b.ins().brif(inside, body, &[], wrap, &[]);
            b.switch_to_block(wrap);
            let zero = b.ins().iconst(I64, 0);
            b.def_var(coord[d], zero);
            for j in 0..n_inputs {
                if let Some(s) = strides[j][d] {
                    let p = b.use_var(ptrs[j]);
                    let back = b.ins().imul(s, shape[d]);
                    let p1 = b.ins().isub(p, back);
                    b.def_var(ptrs[j], p1);
                }
            }
            if d == 0 {
                // Only after the last element, which `done` already caught.
                b.ins().jump(exit, &[]);
            } else {
                b.ins().jump(carry[d - 1], &[]);
            }
        }
    }

    b.switch_to_block(exit);
    b.ins().return_(&[]);
    b.seal_all_blocks();
    b.finalize(frontend);
    func
}

/// The per-element atomic at `addr`, returning the old bit pattern.
fn emit_atomic(b: &mut FunctionBuilder, key: &Key, it: Type, addr: Value, vals: &[Value]) -> Value {
    // In-bounds array elements are aligned (checked by `ArrayView`) and valid: trusted.
    let flags = MemFlagsData::trusted();
    let op = match key.kind {
        Kind::Cas => return b.ins().atomic_cas(flags, addr, vals[0], vals[1]),
        Kind::Rmw(op) => op,
    };
    let upd = vals[0];
    let signed = key.dtype.is_signed();
    let rmw = match op {
        RmwOp::Xchg => AtomicRmwOp::Xchg,
        RmwOp::Add if key.dtype.is_float() => return float_add_loop(b, key.dtype, it, addr, upd),
        RmwOp::Add => AtomicRmwOp::Add,
        RmwOp::Min if signed => AtomicRmwOp::Smin,
        RmwOp::Min => AtomicRmwOp::Umin,
        RmwOp::Max if signed => AtomicRmwOp::Smax,
        RmwOp::Max => AtomicRmwOp::Umax,
        RmwOp::And => AtomicRmwOp::And,
        RmwOp::Or => AtomicRmwOp::Or,
        RmwOp::Xor => AtomicRmwOp::Xor,
    };
    b.ins().atomic_rmw(it, flags, rmw, addr, upd)
}

/// `old = atomic_load; loop { new = old + upd; actual = cas(old, new); if actual == old break;
/// old = actual }`.
fn float_add_loop(
    b: &mut FunctionBuilder,
    dtype: DType,
    it: Type,
    addr: Value,
    upd: Value,
) -> Value {
    let flags = MemFlagsData::trusted();
    let first = b.ins().atomic_load(it, flags, addr);
    let head = b.create_block();
    let done = b.create_block();
    b.append_block_param(head, it);
    b.append_block_param(done, it);
    b.ins().jump(head, &[arg(first)]);
    b.switch_to_block(head);
    let old = b.block_params(head)[0];
    let new = match dtype {
        DType::Float32 | DType::Float64 => {
            let ft = if dtype == DType::Float32 { F32 } else { F64 };
            let x = b.ins().bitcast(ft, MemFlagsData::new(), old);
            let y = b.ins().bitcast(ft, MemFlagsData::new(), upd);
            let s = b.ins().fadd(x, y);
            b.ins().bitcast(it, MemFlagsData::new(), s)
        }
        _ => {
            // float16/bfloat16: no host arithmetic; the sum comes from the reference's function.
            let f: extern "C" fn(u32, u32) -> u32 = if dtype == DType::Float16 {
                add_f16_bits
            } else {
                add_bf16_bits
            };
            let call_conv = b.func.signature.call_conv;
            let mut sig = Signature::new(call_conv);
            sig.params.push(AbiParam::new(I32));
            sig.params.push(AbiParam::new(I32));
            sig.returns.push(AbiParam::new(I32));
            let sig = b.import_signature(sig);
            let callee = b.ins().iconst(I64, f as usize as i64);
            let x = b.ins().uextend(I32, old);
            let y = b.ins().uextend(I32, upd);
            let call = b.ins().call_indirect(sig, callee, &[x, y]);
            let s = b.inst_results(call)[0];
            b.ins().ireduce(it, s)
        }
    };
    let actual = b.ins().atomic_cas(flags, addr, old, new);
    let same = b.ins().icmp(IntCC::Equal, actual, old);
    b.ins().brif(same, done, &[arg(old)], head, &[arg(actual)]);
    b.switch_to_block(done);
    b.block_params(done)[0]
}
