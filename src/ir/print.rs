//! The IR printer behind `atomjit dump ir`. (Being written: issue 2.)
