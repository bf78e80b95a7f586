//! The Cranelift warp compiler. (Issue 3.)

/// Placeholder until the JIT lands.
pub fn dump_clif(
    _kernel: &crate::ir::Kernel,
    _info: &crate::valid::KernelInfo,
) -> Result<String, String> {
    Err("the JIT backend is not available yet".into())
}
