//! atomjit: a JIT instruction interpreter for GPU shader programs built around atomic memory
//! operations.
//!
//! Source text in a GPU dialect is parsed by [`front`] into the one IR of [`ir`] (or a program
//! is built in code with [`ir::build`]), checked by [`valid`] (whose [`valid::KernelInfo`] is
//! the proof backends rely on), and executed by [`exec`] with a backend: the reference
//! interpreter [`interp`] or the Cranelift compiler [`jit`]. The IR owns what an op is (what it
//! reads and writes, [`ir::Op::for_each_use`]; where a memory access lands,
//! [`ir::MemAccess`]); what each op computes on values (integer and float arithmetic,
//! conversions, atomic read-modify-writes, source modifiers) is defined once, in the semantics
//! library [`sem`], which both backends call. [`engine`] is the embedding API and owns policy
//! (loading, overrides, diffs, benchmarks, reports); the command line is a thin client of it.
//! [`litmus`] runs memory-model litmus tests, and [`cxx_atomics`] maps C++ atomic operations
//! onto PTX per the ABI document and runs them. [`tile`] runs cuTile's bulk tile atomics
//! (`atomic_cas`, `atomic_add`, ...) on host arrays, one compiled loop per call shape.
//!
//! ```text
//! prog.s --front--> ir::Program --valid--> (Kernel, KernelInfo) --interp | jit--> exec::launch
//! ```

pub mod cxx_atomics;
pub mod diag;
pub mod engine;
pub mod exec;
pub mod front;
pub mod interp;
pub mod ir;
pub mod jit;
pub mod litmus;
pub mod sem;
pub mod tile;
pub mod valid;
