//! The Intel vISA dialect (issue 12): the text IGC dumps (`.visaasm`, `IGC_ShaderDumpEnable=1`)
//! and its assembler GenX_IR reads. This module reads that syntax into a tree with every name
//! resolved ([`ast`]) and lowers each kernel to the IR for a launch (`lower`; the execution
//! model is in `docs/visa.md`).
//!
//! * [`lex`]: tokens as IGC's lexer (`visa/CISA.l`) cuts them.
//! * [`parse`]: the grammar of IGC's reader (`visa/CISA.y`), with name resolution.
//! * [`ast`]: the tree.
//! * `names`: predefined variables, type, alignment and mask names, instruction signatures.
//! * `lower`: the IR of a kernel: GRF file, execution mask and `goto`, payload, instructions.
//!
//! # The data model
//!
//! **A general variable** (`.decl V v_type=G type=T num_elts=N`) is a byte range of the
//! thread's GRF space, `N × sizeof(T)` bytes long (`sizeof`: `ub b` 1, `uw w hf bf` 2,
//! `ud d f` 4, `uq q df` 8). An alias (`alias=<W, off>`) has no storage of its own: it names
//! the bytes of `W` from byte `off` on, reinterpreted with its own type. Chains are folded:
//! every variable knows its *root* (the variable that owns the storage) and its byte offset in
//! it ([`ast::GeneralVar::root`], [`ast::GeneralVar::root_offset`]); an alias must lie wholly
//! inside the variable it names. The predefined variables (`%null`, `%r0`, `%arg`, `%tsc`,
//! `%group_id_x`...; also reachable as `V0`..`V20`) are general variables with the types and
//! sizes of IGC's table (`%r0` is 8 dwords; `%null` is one dword that reads as nothing).
//! Predicate (`P`), address (`A`), surface (`T`) and sampler (`S`) variables are separate
//! storage classes with element counts but no bytes.
//!
//! **A region** says which elements of a general variable an operand's channels touch. The
//! vISA specification (`documentation/visa/5_operands.md`, "Region-based Addressing", in
//! intel-graphics-compiler) defines, for a source `V(R,C)<VertStride;Width,HorzStride>` and
//! execution size `E`, the first element `R × (GRF_bytes / sizeof(T)) + C` and, for row
//! `i < E / Width` and column `j < Width`, the element `first + i × VertStride + j ×
//! HorzStride`, channels counted row by row. So channel `c` (row `c / Width`, column
//! `c % Width`) reads element
//!
//! ```text
//!     R × (32 / sizeof(T)) + C + (c / Width) × VertStride + (c % Width) × HorzStride
//! ```
//!
//! of `V`, that is byte `R × 32 + C × sizeof(T) + ((c / w) × v + (c % w) × h) × sizeof(T)`:
//! a row is one GRF, 32 bytes on TGLLP (the corpus' platform; the document: "The size of a
//! row is 32 bytes, the size of a GRF"). A destination `V(R,C)<HorzStride>` is one-dimensional:
//! channel `c` writes element `first + c × HorzStride`. The parser computes the origin's byte
//! offset (in the variable and in its root: [`ast::GeneralOperand::offset`],
//! [`ast::GeneralOperand::root_offset`]) and [`ast::GeneralOperand::channel_byte`] applies the
//! formula. Legal values are the document's: VertStride 0, 1, 2, 4, 8, 16, 32; Width 1, 2, 4,
//! 8, 16; HorzStride 0, 1, 2, 4, and not 0 for a destination. A region whose channels (for the
//! instruction's execution size) would reach past the end of its variable is an error: the
//! document leaves such accesses undefined, and the lowering may rely on every channel's
//! bytes lying inside the variable.
//!
//! **Channels and the execution mask.** `(Mk, N)` runs `N` channels whose execution-mask and
//! predicate bits start at channel `4 × (k − 1)` ([`ast::ExecSize::channel_offset`]); `_NM`
//! (or `NoMask`) ignores the execution mask but keeps that offset. Regions count channels from
//! 0 whatever the mask offset: `add (M3, 8) V(1,0)<1> ...` names the second GRF of `V`
//! explicitly.
//!
//! **A raw operand** `V.off` (`V0082.64`) is different: no region, no modifier, just the
//! contiguous bytes of `V` from byte `off` on. How many bytes, and how they map to channels, is
//! the instruction's business (an `svm_atomic`'s addresses are `E` qwords, its data `E`
//! elements of the operation's width); raw operands are not shifted by the mask offset.
//! `%null.0` means "no operand". The parser checks that `off` lies inside `V` and gives its
//! byte offset in the root ([`ast::RawOperand::root_offset`]).
//!
//! **Immediates** keep the bits of one element of their type ([`ast::Immediate::bits`]): IGC
//! writes every immediate as hex bits (`0xfffffffd:d`, `0x3f800000:f`); decimal and negative
//! integers (`-1:d`), decimal floats (`1.5:f`, read as IGC does: as a double, then rounded to
//! float) and `-` before a float literal (a sign flip) are accepted too.
//!
//! # What is read
//!
//! `.version`, `.kernel`/`.global_function` (several per text), `.decl` of every class with
//! `type=`, `num_elts=`, `align=`, `alias=<V, off>`, `v_name=` and `attrs={...}`, `.input`,
//! `.parameter`, `.implicit_*`, `.kernel_attr`, `.function`, `.funcdecl`, `.file`/`.loc`,
//! `{ }` scopes, labels, and instructions: predicate `([!]P[.any|.all])`, mnemonic, `.modifier`s,
//! execution size `(Mk[_NM], N)` / `(NoMask, N)` / `(N)`, and operands — general, indirect
//! `r[A(i),off]<..>:t`, raw, typed immediates, predicates, addresses `A(i)<w>`, address-of
//! `&V[off]`, state `T(i)`, labels. Instructions with a signature in `names` (the ALU
//! operations, `cmp`, `setp`, `addr_add`, branches, `ret`, `svm_atomic`, `svm_gather`,
//! `svm_scatter`, `svm_block_ld`/`svm_block_st` (whose `(N)` counts owords), fences) have their operand count, roles and modifiers checked, and their
//! modifiers decoded ([`ast::InstKind`]). Any other mnemonic is read generically (operands by
//! form; an operand that fits no form, such as an LSC address `flat[V52+0x10]:a64`, is kept as
//! text with its brackets checked, while `NAME(r,c)<..>` or `NAME.N` naming an unknown variable
//! is still an error), so a lowering can refuse it precisely.
//!
//! `svm_atomic` takes IGC's op names (`minsint`, `maxsint`...) and the SVM_ATOMIC document's
//! (`imin`, `imax`, `predec`); the document's upper-case `SVM_ATOMIC.<op>` spelling is accepted
//! too, with op names in either case. Widths are `.16`, `.32` (the default) and `.64`.
//!
//! # Against GenX_IR
//!
//! Checked with GenX_IR 1.0.12504 (the corpus' toolchain). Accepted beyond it: indented labels
//! (`  name:`), declaration attributes in any order, and the document's `SVM_ATOMIC`,
//! `imin`/`imax`/`predec` spellings. Refused although it accepts them: `num_elts` outside the
//! document's 1..4096, an alias reaching past the end of its variable (GenX_IR only checks the
//! offset), regions past the end of a variable, a region width or destination stride of 0.
//! Not read: `%DispatchSimd`, shifts, bitwise, relational and conditional operators in integer
//! expressions, and instruction modifiers that are not a name or number (`rt_write`'s
//! `.<...>`).

pub mod ast;
pub mod lex;
mod lower;
mod names;
pub mod parse;
#[cfg(test)]
#[allow(clippy::wildcard_enum_match_arm)] // a test matches the variant it expects
mod tests;

use crate::front::ParseError;

/// Parses a vISA text; errors name `file_name`.
pub fn parse_module(file_name: &str, source: &str) -> Result<ast::Module, ParseError> {
    parse::parse(source).map_err(|e| ParseError::from_syntax(file_name, e))
}

/// Parses a vISA text and lowers each kernel for the launch directives that reach it (see
/// [`lower`] and `docs/visa-payload.md`). Returns the program and, per kernel, the error a
/// kernel whose launch does not fit it reports when it runs (it keeps a one-`EXIT` body).
pub(crate) fn parse_with_launch(
    file_name: &str,
    source: &str,
    launch: &crate::front::launch::LaunchText,
) -> Result<(crate::ir::Program, Vec<Option<ParseError>>), ParseError> {
    parse_with_launch_promoting(file_name, source, launch, true)
}

/// [`parse_with_launch`], with variables promoted to registers only when `promote` (see
/// `lower/promote.rs`).
pub(crate) fn parse_with_launch_promoting(
    file_name: &str,
    source: &str,
    launch: &crate::front::launch::LaunchText,
    promote: bool,
) -> Result<(crate::ir::Program, Vec<Option<ParseError>>), ParseError> {
    use crate::ir::{Dialect, Inst, Kernel, Op, Program};
    let module = parse_module(file_name, source)?;
    let units: Vec<&ast::Kernel> = module
        .kernels
        .iter()
        .filter(|k| k.kind == ast::UnitKind::Kernel)
        .collect();
    let kernels = units
        .iter()
        .map(|k| Kernel {
            name: k.name.clone(),
            dialect: Dialect::Visa,
            warp_size: 32,
            insts: vec![Inst {
                op: Op::Exit,
                guard: crate::ir::Guard::ALWAYS,
                span: k.span,
                text: "EXIT".into(),
                sched: Vec::new(),
            }],
            labels: Vec::new(),
            num_regs: 0,
            num_preds: 0,
            uniform: Default::default(),
            launch: Default::default(),
            span: k.span,
        })
        .collect();
    let mut program = Program {
        source_name: file_name.to_string(),
        source: source.to_string(),
        kernels,
    };
    crate::front::launch::apply(&mut program, file_name, None, launch)?;
    let mut unbound = Vec::with_capacity(units.len());
    for (k, kernel) in units.iter().zip(program.kernels.iter_mut()) {
        if kernel.launch.shared_bytes != 0 {
            return Err(ParseError {
                file: file_name.to_string(),
                span: k.span,
                message: format!(
                    "kernel `{}`: `.shared` is not supported for vISA kernels (their shared \
                     local memory, surface T0, is not implemented yet)",
                    k.name
                ),
                expected: None,
            });
        }
        let info = lower::LaunchInfo {
            block: kernel.launch.block,
            params: &kernel.launch.params,
            payload: &kernel.launch.payload,
        };
        match lower::lower_kernel_with(k, source, &info, promote) {
            Ok(l) => {
                let (regs, preds) = crate::ir::register_counts(&l.insts);
                kernel.insts = l.insts;
                kernel.labels = l.labels;
                kernel.warp_size = l.warp_size;
                kernel.num_regs = regs;
                kernel.num_preds = preds;
                kernel.launch.shared_per_warp = l.file_bytes;
                unbound.push(None);
            }
            Err(r) if r.launch => unbound.push(Some(ParseError::from_syntax(file_name, r.error))),
            Err(r) => return Err(ParseError::from_syntax(file_name, r.error)),
        }
    }
    Ok((program, unbound))
}

/// Lowers kernel `kernel` of a vISA text again for a launch from code (`engine::Module::launch`):
/// `params` are the arguments as parameters (buffers and scalars, in argument order, their
/// constant-bank offsets assigned), `payload` the implicit values the kernel was loaded with,
/// `block` the work-group size. Returns the kernel, or the error at the kernel (a work-group
/// that is not whole threads, arguments that do not cover its `.input` payload).
pub(crate) fn lower_for_arguments(
    file_name: &str,
    source: &str,
    kernel: &str,
    block: [u32; 3],
    params: &[crate::ir::ParamDecl],
    payload: &[crate::ir::PayloadDecl],
) -> Result<crate::ir::Kernel, ParseError> {
    use crate::ir::{Dialect, Kernel, LaunchSpec};
    let module = parse_module(file_name, source)?;
    let k = module
        .kernels
        .iter()
        .find(|k| k.kind == ast::UnitKind::Kernel && k.name == kernel)
        .ok_or_else(|| ParseError {
            file: file_name.to_string(),
            span: Default::default(),
            message: format!("no vISA kernel named `{kernel}`"),
            expected: None,
        })?;
    let info = lower::LaunchInfo {
        block,
        params,
        payload,
    };
    let l = lower::lower_kernel(k, source, &info)
        .map_err(|r| ParseError::from_syntax(file_name, r.error))?;
    let (regs, preds) = crate::ir::register_counts(&l.insts);
    Ok(Kernel {
        name: k.name.clone(),
        dialect: Dialect::Visa,
        warp_size: l.warp_size,
        insts: l.insts,
        labels: l.labels,
        num_regs: regs,
        num_preds: preds,
        uniform: Default::default(),
        launch: LaunchSpec {
            block,
            params: params.to_vec(),
            payload: payload.to_vec(),
            shared_per_warp: l.file_bytes,
            ..Default::default()
        },
        span: k.span,
    })
}
