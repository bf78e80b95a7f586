//! The Cranelift warp compiler. (Issue 3.)
