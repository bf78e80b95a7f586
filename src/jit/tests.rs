//! Tests of the warp compiler.
