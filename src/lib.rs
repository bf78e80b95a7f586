//! atomjit: a JIT instruction interpreter for GPU shader programs built around atomic memory
//! operations.
//!
//! Source text in a GPU dialect is parsed by [`front`] into the one IR of [`ir`], checked by
//! [`valid`] (which also computes the control-flow facts backends need), and executed by
//! [`exec`] with a backend: the reference interpreter [`interp`] or the Cranelift compiler
//! [`jit`]. What each op computes on values (integer and float arithmetic, conversions, atomic
//! read-modify-writes, source modifiers) is defined once, in the semantics library [`sem`],
//! which both backends call. [`engine`] is the embedding API the command line is built on. [`cxx_atomics`] maps C++
//! atomic operations onto PTX per the ABI document and runs them.
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
pub mod valid;
