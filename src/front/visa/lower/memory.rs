//! `svm_*` messages and fences.
//!
//! SVM ("shared virtual memory") addresses are 64-bit virtual addresses: atomjit's global
//! device addresses, as a `.buffer` line's address arrives in the payload. Each channel's
//! address is one qword of the addresses operand (`uq` elements, channel `c` at byte `8c` of the
//! raw operand; raw operands are not shifted by the mask offset).
//!
//! `svm_atomic` follows `../shared/spec/002_ac5e42ba09aa5f7e.txt` with the operand order IGC
//! writes and reads (addresses, dst, src0, src1; `docs/visa-syntax.md`):
//!
//! | op | IR | note |
//! |---|---|---|
//! | add, sub, and, or, xor, xchg | Add, Sub, And, Or, Xor, Exch | |
//! | inc, dec | Add 1, Sub 1 | plain ±1 modulo 2^n, no bound (unlike PTX/SASS inc/dec) |
//! | min, max / imin, imax | Min, Max unsigned / signed | |
//! | cmpxchg | Cas | writes **src0** when old == **src1** |
//! | fcmpwr | FCmpWr | writes **src1** when **src0** == old, compared as floats |
//! | fmin, fmax | Min, Max on floats | IEEE minNum/maxNum, −0 < +0 |
//! | predec | Sub 1, result − 1 | stores old − 1 and returns the **new** value |
//!
//! Widths: 32 (default), `.16` (each channel's data is a dword with the value in its low 16
//! bits; the address is a word address; the returned dword has the old 16-bit value in its low
//! half and **zero** in its upper half, atomjit's choice where the document leaves it
//! unspecified) and `.64`. Channels run in increasing order (the IR's lane order), each
//! read-modify-write one host atomic; `%null` as dst returns nothing. SVM atomics are relaxed at
//! device scope: the document gives them no order, and IGC brackets C11 acquire/release atomics
//! with fences.

use super::grf::ChannelBytes;
use super::{err, GrfAccess, LResult, Lower};
use crate::front::visa::ast::{self, AtomicOp as VOp, FenceScope, Inst, OperandKind, RawOperand};
use crate::ir::{
    self, Address, AtomicInst, AtomicOp, BinOp, Guard, LinearAddress, MemAccess, MemOrder, Op,
    Operand, Pred, Reg, Scope, Space, Ty,
};

/// A raw operand of an `svm_*` instruction.
fn raw(op: &ast::Operand) -> LResult<&RawOperand> {
    match &op.kind {
        OperandKind::Raw(r) => Ok(r),
        _ => Err(err(op.span, "expected a raw operand (`V.offset`)")),
    }
}

/// `[addr + offset]` with a 64-bit address register.
fn svm_address(addr: Reg, offset: i64) -> Address {
    Address::Linear(LinearAddress {
        base: Some(addr),
        base_bits: 64,
        offset,
    })
}

fn global(ty: Ty, vector: u8, order: MemOrder, addr: Address) -> MemAccess {
    MemAccess {
        space: Space::Global,
        ty,
        vector,
        order,
        scope: Scope::Gpu,
        addr,
    }
}

impl<'k> Lower<'k> {
    /// Checks a raw operand of an `svm_*` instruction: GRF-aligned (GenX_IR's verifier rule),
    /// of an element size of `size` bytes, and large enough for `bytes`.
    fn check_raw(
        &self,
        op: &ast::Operand,
        r: &RawOperand,
        size: u32,
        bytes: u32,
        what: &str,
    ) -> LResult<()> {
        if r.offset % ast::GRF_BYTES != 0 {
            return Err(err(
                op.span,
                format!(
                    "a raw operand must be GRF-aligned (its offset {} is not a multiple of 32)",
                    r.offset
                ),
            ));
        }
        if r.ty.size() != size {
            return Err(err(
                op.span,
                format!(
                    "{what} must be a variable of {size}-byte elements (`{}` has {})",
                    r.ty.name(),
                    r.ty.size()
                ),
            ));
        }
        let var_bytes = self.k.var(r.var).general().map_or(0, |g| g.byte_size());
        if r.offset + bytes > var_bytes {
            return Err(err(
                op.span,
                format!(
                    "{what} needs {bytes} bytes from byte {}, past the end of the variable ({var_bytes} bytes)",
                    r.offset
                ),
            ));
        }
        Ok(())
    }

    /// Loads each channel's 64-bit address.
    fn load_addresses(
        &mut self,
        guard: Guard,
        op: &ast::Operand,
        exec: &ast::ExecSize,
    ) -> LResult<Reg> {
        let r = raw(op)?;
        self.check_raw(op, r, 8, 8 * exec.size, "the addresses")?;
        let bytes = ChannelBytes::of_raw(&self.layout, r.root, r.root_offset, 8);
        let dst = self.temp(2);
        let access = GrfAccess::scalar(bytes, exec.channel_offset(), Ty::U64);
        self.grf_load(guard, access, dst)?;
        Ok(dst)
    }

    pub(super) fn lower_svm_atomic(&mut self, inst: &Inst, op: VOp, bits: u32) -> LResult<()> {
        let [addrs, dst, src0, src1] = self.operands::<4>(inst)?;
        let exec = self.exec_of(inst);
        if !matches!(exec.size, 1 | 2 | 4 | 8) {
            return Err(err(
                exec.span,
                format!(
                    "svm_atomic runs 1, 2, 4 or 8 channels (the SVM_ATOMIC document), not {}",
                    exec.size
                ),
            ));
        }
        let (r0, r1) = (raw(src0)?, raw(src1)?);
        let takes_src0 = !matches!(op, VOp::Inc | VOp::Dec | VOp::Predec);
        let takes_src1 = matches!(op, VOp::Cmpxchg | VOp::Fcmpwr);
        if !takes_src0 && !r0.is_null() {
            return Err(err(
                src0.span,
                format!(
                    "svm_atomic.{}: src0 must be `%null.0` (the op takes no source)",
                    op_name(op)
                ),
            ));
        }
        if takes_src0 && r0.is_null() {
            return Err(err(
                src0.span,
                format!("svm_atomic.{}: src0 is required", op_name(op)),
            ));
        }
        if !takes_src1 && !r1.is_null() {
            return Err(err(
                src1.span,
                format!(
                    "svm_atomic.{}: src1 must be `%null.0` (only cmpxchg and fcmpwr take it)",
                    op_name(op)
                ),
            ));
        }
        if takes_src1 && r1.is_null() {
            return Err(err(
                src1.span,
                format!("svm_atomic.{}: src1 is required", op_name(op)),
            ));
        }
        let float = matches!(op, VOp::Fmin | VOp::Fmax | VOp::Fcmpwr);
        let ty = match (bits, op) {
            (_, VOp::Fadd | VOp::Fsub) => {
                return Err(err(
                    inst.mnemonic_span,
                    "svm_atomic.fadd/fsub are not in the SVM_ATOMIC document (XeHP and later)",
                ))
            }
            (16, _) if float => Ty::F16,
            (32, _) if float => Ty::F32,
            (64, _) if float => Ty::F64,
            (16, VOp::IMin | VOp::IMax) => Ty::S16,
            (32, VOp::IMin | VOp::IMax) => Ty::S32,
            (64, VOp::IMin | VOp::IMax) => Ty::S64,
            (16, _) => Ty::U16,
            (64, _) => Ty::U64,
            _ => Ty::U32,
        };
        // Data: a dword per channel (a qword at .64).
        let data_bytes = if bits == 64 { 8 } else { 4 };
        let words = (data_bytes / 4) as u16;
        let g = self.guard(inst, true)?;
        let addr = self.load_addresses(g, addrs, &exec)?;
        let load_data =
            |l: &mut Self, o: &ast::Operand, r: &RawOperand, what: &str| -> LResult<Operand> {
                l.check_raw(o, r, data_bytes, data_bytes * exec.size, what)?;
                let bytes = ChannelBytes::of_raw(&l.layout, r.root, r.root_offset, data_bytes);
                let v = l.temp(words);
                let ty = if words == 2 { Ty::U64 } else { Ty::U32 };
                l.grf_load(g, GrfAccess::scalar(bytes, exec.channel_offset(), ty), v)?;
                Ok(Operand::Reg(v))
            };
        let s0 = if takes_src0 {
            Some(load_data(self, src0, r0, "src0")?)
        } else {
            None
        };
        let s1 = if takes_src1 {
            Some(load_data(self, src1, r1, "src1")?)
        } else {
            None
        };
        let rd = raw(dst)?;
        let result = if rd.is_null() {
            Reg::RZ
        } else {
            self.temp(words)
        };
        let one = Operand::Imm(1);
        let (ir_op, src, src2) = match op {
            VOp::Add => (AtomicOp::Add, s0.unwrap_or(one), None),
            VOp::Sub => (AtomicOp::Sub, s0.unwrap_or(one), None),
            VOp::Inc => (AtomicOp::Add, one, None),
            VOp::Dec | VOp::Predec => (AtomicOp::Sub, one, None),
            VOp::Min | VOp::IMin | VOp::Fmin => (AtomicOp::Min, s0.unwrap_or(one), None),
            VOp::Max | VOp::IMax | VOp::Fmax => (AtomicOp::Max, s0.unwrap_or(one), None),
            VOp::Xchg => (AtomicOp::Exch, s0.unwrap_or(one), None),
            VOp::And => (AtomicOp::And, s0.unwrap_or(one), None),
            VOp::Or => (AtomicOp::Or, s0.unwrap_or(one), None),
            VOp::Xor => (AtomicOp::Xor, s0.unwrap_or(one), None),
            // cmpxchg: new = (old == src1) ? src0 : old.
            VOp::Cmpxchg => (AtomicOp::Cas, s1.unwrap_or(one), s0),
            // fcmpwr: new = (old == src0) ? src1 : old.
            VOp::Fcmpwr => (AtomicOp::FCmpWr, s0.unwrap_or(one), s1),
            VOp::Fadd | VOp::Fsub => unreachable!("refused above"),
        };
        self.emit(
            g,
            Op::Atomic(Box::new(AtomicInst {
                access: global(ty, 1, MemOrder::Relaxed, svm_address(addr, 0)),
                op: ir_op,
                dst: result,
                src,
                src2,
                spin: false,
                ftz: false,
                performed: Pred::PT,
            })),
        );
        if result.is_rz() {
            return Ok(());
        }
        if op == VOp::Predec {
            // The new value: old − 1 in the op's width.
            self.emit(
                g,
                Op::Binary {
                    op: BinOp::Sub,
                    ty: if words == 2 { Ty::U64 } else { Ty::U32 },
                    dst: result,
                    a: Operand::Reg(result).into(),
                    b: one.into(),
                    ftz: false,
                },
            );
        }
        if bits == 16 {
            // The upper half of the returned dword: zero (module docs).
            self.emit(
                g,
                Op::Binary {
                    op: BinOp::And,
                    ty: Ty::U32,
                    dst: result,
                    a: Operand::Reg(result).into(),
                    b: Operand::Imm(0xffff).into(),
                    ftz: false,
                },
            );
        }
        self.check_raw(
            dst,
            rd,
            data_bytes,
            data_bytes * exec.size,
            "the destination",
        )?;
        let bytes = ChannelBytes::of_raw(&self.layout, rd.root, rd.root_offset, data_bytes);
        let ty = if words == 2 { Ty::U64 } else { Ty::U32 };
        let access = GrfAccess::scalar(bytes, exec.channel_offset(), ty);
        self.grf_store(g, access, Operand::Reg(result))
    }

    /// `svm_gather.B.N` / `svm_scatter.B.N` (`SVM_GATHER.md`, `SVM_SCATTER.md`): each enabled
    /// channel reads or writes `N` blocks of `B` bytes from its address. With 4- and 8-byte
    /// blocks, block `j` of channel `c` is element `j × n + c` of the data (`n` channels); with
    /// 1-byte blocks channel `c` owns a dword (two for 8 blocks) whose bytes are its blocks in
    /// order (a gather zeroes the bytes past them).
    pub(super) fn lower_svm_gather_scatter(
        &mut self,
        inst: &Inst,
        block: u32,
        blocks: u32,
        scatter: bool,
    ) -> LResult<()> {
        let [addrs, data] = self.operands::<2>(inst)?;
        let exec = self.exec_of(inst);
        let n = exec.size;
        if !matches!(block, 1 | 4 | 8) || !matches!(blocks, 1 | 2 | 4 | 8) {
            return Err(err(
                inst.mnemonic_span,
                "block size must be 1, 4 or 8 and block count 1, 2, 4 or 8",
            ));
        }
        let g = self.guard(inst, true)?;
        let addr = self.load_addresses(g, addrs, &exec)?;
        let r = raw(data)?;
        if r.is_null() {
            return Err(err(data.span, "the data operand cannot be `%null`"));
        }
        let what = if scatter {
            "the source"
        } else {
            "the destination"
        };
        let mem_order = MemOrder::Weak;
        if block == 1 {
            let dwords = blocks.div_ceil(4);
            let stride = 4 * dwords;
            self.check_raw_bytes(data, r, stride * n, what)?;
            for d in 0..dwords {
                let bytes =
                    ChannelBytes::of_raw(&self.layout, r.root, r.root_offset + 4 * d, stride);
                let grf = GrfAccess::scalar(bytes, exec.channel_offset(), Ty::U32);
                let acc = self.temp(1);
                let t = self.temp(1);
                let in_dword = blocks.min(4);
                if scatter {
                    self.grf_load(g, grf, acc)?;
                    for j in 0..in_dword {
                        self.emit(g, shift(BinOp::Shr, t, acc, 8 * j));
                        self.emit(
                            g,
                            Op::Store {
                                access: global(
                                    Ty::U8,
                                    1,
                                    mem_order,
                                    svm_address(addr, i64::from(4 * d + j)),
                                ),
                                src: Operand::Reg(t),
                            },
                        );
                    }
                } else {
                    self.emit(
                        g,
                        Op::Mov {
                            ty: Ty::U32,
                            dst: acc,
                            src: Operand::Imm(0),
                        },
                    );
                    for j in 0..in_dword {
                        self.emit(
                            g,
                            Op::Load {
                                access: global(
                                    Ty::U8,
                                    1,
                                    mem_order,
                                    svm_address(addr, i64::from(4 * d + j)),
                                ),
                                dst: t,
                            },
                        );
                        self.emit(g, shift(BinOp::Shl, t, t, 8 * j));
                        self.emit(
                            g,
                            Op::Binary {
                                op: BinOp::Or,
                                ty: Ty::U32,
                                dst: acc,
                                a: Operand::Reg(acc).into(),
                                b: Operand::Reg(t).into(),
                                ftz: false,
                            },
                        );
                    }
                    self.grf_store(g, grf, Operand::Reg(acc))?;
                }
            }
            return Ok(());
        }
        self.check_raw_bytes(data, r, block * blocks * n, what)?;
        let ty = if block == 8 { Ty::U64 } else { Ty::U32 };
        let v = self.temp(if block == 8 { 2 } else { 1 });
        for j in 0..blocks {
            let bytes =
                ChannelBytes::of_raw(&self.layout, r.root, r.root_offset + j * n * block, block);
            let grf = GrfAccess::scalar(bytes, exec.channel_offset(), ty);
            let mem = global(ty, 1, mem_order, svm_address(addr, i64::from(j * block)));
            if scatter {
                self.grf_load(g, grf, v)?;
                self.emit(
                    g,
                    Op::Store {
                        access: mem,
                        src: Operand::Reg(v),
                    },
                );
            } else {
                self.emit(
                    g,
                    Op::Load {
                        access: mem,
                        dst: v,
                    },
                );
                self.grf_store(g, grf, Operand::Reg(v))?;
            }
        }
        Ok(())
    }

    fn check_raw_bytes(
        &self,
        op: &ast::Operand,
        r: &RawOperand,
        bytes: u32,
        what: &str,
    ) -> LResult<()> {
        self.check_raw(op, r, r.ty.size(), bytes, what)
    }

    /// `svm_block_ld (n) addr data` / `svm_block_st`: `n` owords (16 bytes each) at a 16-byte
    /// aligned address, whatever the execution mask (`SVM_BLOCK_LD.md`). Lane `i < n` moves
    /// oword `i`.
    pub(super) fn lower_svm_block(
        &mut self,
        inst: &Inst,
        owords: u32,
        unaligned: bool,
        store: bool,
    ) -> LResult<()> {
        let [addr_op, data] = self.operands::<2>(inst)?;
        if unaligned {
            return Err(err(
                inst.mnemonic_span,
                "`.unaligned` block accesses are not supported yet",
            ));
        }
        if !matches!(owords, 1 | 2 | 4 | 8) || owords > self.simd {
            return Err(err(inst.span, "the oword count must be 1, 2, 4 or 8"));
        }
        let OperandKind::General(ga) = &addr_op.kind else {
            return Err(err(addr_op.span, "the address is a scalar `uq` operand"));
        };
        if ga.ty.size() != 8 {
            return Err(err(
                addr_op.span,
                "the address must be a 64-bit (`uq`) operand",
            ));
        }
        let r = raw(data)?;
        self.check_raw_bytes(
            data,
            r,
            16 * owords,
            if store {
                "the source"
            } else {
                "the destination"
            },
        )?;
        let one = ast::ExecSize {
            mask_group: 1,
            no_mask: true,
            size: 1,
            span: inst.span,
        };
        let lanes = self.range_pred(0, owords)?;
        let g = Guard {
            pred: lanes,
            negate: false,
        };
        let addr = self.load_source(g, addr_op, &one, super::alu::ExecTy::Int(64), true)?;
        let Operand::Reg(addr) = addr.operand else {
            return Err(err(addr_op.span, "the address must be a variable"));
        };
        // addr + 16 × lane.
        let lane16 = self.temp(1);
        self.emit(g, shift(BinOp::Shl, lane16, super::R_LANE, 4));
        let wide = self.temp(2);
        self.emit(
            g,
            Op::Convert {
                dst_ty: Ty::U64,
                src_ty: Ty::U32,
                round: ir::Round::Nearest,
                ftz: false,
                dst: wide,
                a: Operand::Reg(lane16).into(),
            },
        );
        self.emit(
            g,
            Op::Binary {
                op: BinOp::Add,
                ty: Ty::U64,
                dst: wide,
                a: Operand::Reg(wide).into(),
                b: Operand::Reg(addr).into(),
                ftz: false,
            },
        );
        let bytes = ChannelBytes::of_raw(&self.layout, r.root, r.root_offset, 16);
        let grf = GrfAccess {
            vector: 4,
            ..GrfAccess::scalar(bytes, 0, Ty::U32)
        };
        let v = self.temp(4);
        let mem = global(Ty::U32, 4, MemOrder::Weak, svm_address(wide, 0));
        if store {
            self.grf_load(g, grf, v)?;
            self.emit(
                g,
                Op::Store {
                    access: mem,
                    src: Operand::Reg(v),
                },
            );
        } else {
            self.emit(
                g,
                Op::Load {
                    access: mem,
                    dst: v,
                },
            );
            self.grf_store(g, grf, Operand::Reg(v))?;
        }
        Ok(())
    }

    /// `fence_global`, `fence_local`, `fence_sw`. One coherent host memory has no caches to
    /// flush or invalidate, so the option letters (commit, L1 flush...) add nothing to a
    /// sequentially consistent fence, which is at least as strong as any vISA fence; a
    /// software fence only keeps the compiler from moving accesses across it.
    pub(super) fn lower_fence(&mut self, scope: FenceScope, _flags: u8) -> LResult<()> {
        let (order, scope) = match scope {
            FenceScope::Global => (MemOrder::SeqCst, Scope::Gpu),
            FenceScope::Local => (MemOrder::SeqCst, Scope::Cta),
            FenceScope::Sw => (MemOrder::AcqRel, Scope::Cta),
        };
        self.emit_always(Op::Fence { order, scope });
        Ok(())
    }
}

fn op_name(op: VOp) -> &'static str {
    op.igc_name().or(op.doc_name()).unwrap_or("?")
}

fn shift(op: BinOp, dst: Reg, a: Reg, by: u32) -> Op {
    Op::Binary {
        op,
        ty: Ty::U32,
        dst,
        a: Operand::Reg(a).into(),
        b: Operand::Imm(u64::from(by)).into(),
        ftz: false,
    }
}
