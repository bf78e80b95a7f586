//! The prologue: the lowering's own registers, then the thread payload written into the
//! `.input` variables.
//!
//! The payload is IGC's OpenCL layout on TGLLP (`docs/visa-syntax.md`, `.input`; every field
//! checked against the corpus' patch tokens in `corpus/visa/gen/PAYLOAD.txt`):
//!
//! | bytes | contents |
//! |---|---|
//! | 0–31 | r0: the work-group id x, y, z at bytes 4, 24, 28; the rest 0 |
//! | from 32 | the local ids, 16-bit words per channel: x, then y, then z, one GRF per dimension (two at SIMD32); padding 0 |
//! | `ct` = 128 (SIMD8/16) or 224 (SIMD32) | global id offset x, y, z (0); local size x, y, z at `ct + 12`; 8 bytes 0 |
//! | `ct + 32` | the `.buffer` lines' 64-bit addresses, in launch order, then the `.param` values in launch order, each naturally aligned |
//! | after them | what `.payload OFFSET KIND` lines name |
//!
//! An `.input` must cover whole fields; bytes of it that no field describes are an error past
//! the arguments (the kernel reads something the launch does not say) and zero before them
//! (padding).

use super::grf::ChannelBytes;
use super::{err, GrfAccess, LResult, LaunchInfo, Lower, P_EM, R_FILE, R_LANE, R_RESUME};
use crate::front::visa::ast::{self, InputKind, Predefined, VarKind};
use crate::ir::{
    self, Guard, Inst as IrInst, Op, Operand, ParamKind, PayloadKind, Reg, SpecialReg, Ty,
};

/// One field of the payload.
#[derive(Debug, Clone, Copy)]
enum Value {
    /// Zero bytes.
    Zero,
    /// The local ids in dimension `d` of channels `first ..` (a 16-bit word per channel).
    LocalId { d: usize, first: u32 },
    /// Three `u32` from special registers.
    Special([SpecialReg; 3]),
    /// Three `u32`: the grid size in work-items.
    GlobalSize,
    /// `size` bytes of constant bank 0 from `offset` (a bound argument).
    Cbank { offset: u32 },
}

#[derive(Debug, Clone, Copy)]
struct Field {
    offset: u32,
    size: u32,
    value: Value,
    what: &'static str,
}

const TID: [SpecialReg; 3] = [SpecialReg::TidX, SpecialReg::TidY, SpecialReg::TidZ];
const NTID: [SpecialReg; 3] = [SpecialReg::NTidX, SpecialReg::NTidY, SpecialReg::NTidZ];
const NCTA: [SpecialReg; 3] = [
    SpecialReg::NCtaIdX,
    SpecialReg::NCtaIdY,
    SpecialReg::NCtaIdZ,
];

/// The payload's fields for a launch, and where the arguments end.
fn fields(simd: u32, launch: &LaunchInfo) -> LResult<(Vec<Field>, u32)> {
    let mut f = vec![
        Field {
            offset: 4,
            size: 4,
            value: Value::Special([SpecialReg::CtaIdX; 3]),
            what: "the work-group id x",
        },
        Field {
            offset: 24,
            size: 4,
            value: Value::Special([SpecialReg::CtaIdY; 3]),
            what: "the work-group id y",
        },
        Field {
            offset: 28,
            size: 4,
            value: Value::Special([SpecialReg::CtaIdZ; 3]),
            what: "the work-group id z",
        },
    ];
    // One GRF of 16-bit ids per dimension, two at SIMD32 (channels 0-15, then 16-31).
    let grf_per_dim = if simd == 32 { 64 } else { 32 };
    for d in 0..3 {
        for half in 0..simd.div_ceil(16) {
            f.push(Field {
                offset: 32 + d as u32 * grf_per_dim + 32 * half,
                size: 2 * simd.min(16),
                value: Value::LocalId {
                    d,
                    first: 16 * half,
                },
                what: ["local ids x", "local ids y", "local ids z"][d],
            });
        }
    }
    let ct = 32 + 3 * grf_per_dim;
    f.push(Field {
        offset: ct,
        size: 12,
        value: Value::Zero,
        what: "the global id offset",
    });
    f.push(Field {
        offset: ct + 12,
        size: 12,
        value: Value::Special(NTID),
        what: "the local size",
    });
    let mut next = ct + 32;
    let buffers = launch
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Buffer { .. }));
    let scalars = launch
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Scalar { .. }));
    for p in buffers.chain(scalars) {
        let size = p.cbank_size();
        next = next.div_ceil(size) * size;
        f.push(Field {
            offset: next,
            size,
            value: Value::Cbank {
                offset: p.cbank_offset,
            },
            what: "an argument",
        });
        next += size;
    }
    if let Some(p) = launch
        .params
        .iter()
        .find(|p| !matches!(p.kind, ParamKind::Buffer { .. } | ParamKind::Scalar { .. }))
    {
        return Err(err(
            p.span,
            format!("`{}`: a vISA kernel takes buffers and scalars only", p.name),
        ));
    }
    for d in launch.payload {
        if d.offset < next {
            return Err(err(
                d.span,
                format!(
                    "`.payload {} {}` overlaps the arguments, which end at byte {next}",
                    d.offset,
                    d.kind.name()
                ),
            ));
        }
        let (value, size) = match d.kind {
            PayloadKind::PrivateBase => (Value::Zero, 8),
            other => (
                match other {
                    PayloadKind::NumGroups => Value::Special(NCTA),
                    PayloadKind::GlobalSize => Value::GlobalSize,
                    PayloadKind::LocalSize | PayloadKind::EnqueuedLocalSize => Value::Special(NTID),
                    PayloadKind::GlobalIdOffset | PayloadKind::PrivateBase => Value::Zero,
                },
                12,
            ),
        };
        f.push(Field {
            offset: d.offset,
            size,
            value,
            what: "an implicit value",
        });
    }
    Ok((f, next))
}

impl<'k> Lower<'k> {
    /// The prologue: lane, file base, strides and ranges, then the payload and `%r0`.
    pub(super) fn prologue(&mut self, launch: &LaunchInfo) -> LResult<Vec<IrInst>> {
        // The payload code first: it may need stride registers of its own.
        let body = std::mem::take(&mut self.body);
        let fixups = std::mem::take(&mut self.fixups);
        self.next_temp = self.temp_base;
        self.text = "(payload)".into();
        self.span = self.k.span;
        let (fields, args_end) = fields(self.simd, launch)?;
        for (i, v) in self.k.vars.iter().enumerate() {
            if let VarKind::General(g) = &v.kind {
                if g.predefined == Some(Predefined::R0) && g.root.0 as usize == i {
                    let at = self.layout.root_offset(ast::VarId(i as u32));
                    self.write_fields(&fields, 0, 32, at, "%r0", 32)?;
                }
            }
        }
        for input in &self.k.inputs {
            let name = &self.k.var(input.var).name;
            if input.kind != InputKind::Input {
                return Err(err(
                    input.span,
                    "only `.input` payload declarations are supported (not `.parameter` or \
                     `.implicit_*`)",
                ));
            }
            let Some(g) = self.k.var(input.var).general() else {
                return Err(err(
                    input.span,
                    "only general variables can be payload inputs",
                ));
            };
            if input.size > g.byte_size() {
                return Err(err(
                    input.span,
                    format!(
                        "`.input {name}` is {} bytes, longer than the variable",
                        input.size
                    ),
                ));
            }
            let at = self.layout.root_offset(input.var) + g.root_offset;
            self.write_fields(&fields, input.offset, input.size, at, name, args_end)?;
        }
        let payload = std::mem::replace(&mut self.body, body);
        self.fixups = fixups;

        let mut head = Vec::new();
        let mut emit = |op: Op, guard: Guard| {
            head.push(IrInst {
                op,
                guard,
                span: self.k.span,
                text: "(prologue)".into(),
                sched: Vec::new(),
            })
        };
        emit(
            Op::ReadSpecial {
                dst: R_LANE,
                sr: SpecialReg::LaneId,
            },
            Guard::ALWAYS,
        );
        emit(
            Op::Mov {
                ty: Ty::U32,
                dst: R_RESUME,
                src: Operand::Imm(0),
            },
            Guard::ALWAYS,
        );
        emit(
            super::setp_u32(ir::CmpOp::Eq, P_EM, R_RESUME, 0),
            Guard::ALWAYS,
        );
        // The file's base, when some access goes to the file (the strides too: only file
        // addresses take them).
        if self.file_used {
            emit(
                Op::ReadSpecial {
                    dst: R_FILE,
                    sr: SpecialReg::WarpId,
                },
                Guard::ALWAYS,
            );
            emit(
                super::imad(
                    R_FILE,
                    R_FILE,
                    u64::from(self.layout.file_bytes),
                    Operand::Imm(0),
                ),
                Guard::ALWAYS,
            );
        }
        for (&stride, &r) in &self.strides {
            emit(
                super::imad(r, R_LANE, u64::from(stride), Operand::Reg(R_FILE)),
                Guard::ALWAYS,
            );
        }
        // The range predicates some instruction reads (a payload write that turned out dead,
        // or replicated, asked for lane 0's and left it unused).
        let mut read = std::collections::HashSet::new();
        for inst in self.body.iter().chain(&payload) {
            read.insert(inst.guard.pred);
            inst.op.for_each_use(|u| {
                if let ir::Use::PredSrc(p) = u {
                    read.insert(p);
                }
            });
        }
        let t = Reg(self.temp_base);
        for (&(offset, size), &p) in self.ranges.iter().filter(|(_, p)| read.contains(*p)) {
            emit(
                Op::Binary {
                    op: ir::BinOp::Sub,
                    ty: Ty::U32,
                    dst: t,
                    a: Operand::Reg(R_LANE).into(),
                    b: Operand::Imm(u64::from(offset)).into(),
                    ftz: false,
                },
                Guard::ALWAYS,
            );
            emit(
                super::setp_u32(ir::CmpOp::Lt, p, t, u64::from(size)),
                Guard::ALWAYS,
            );
        }
        head.extend(payload);
        Ok(head)
    }

    /// Writes the payload bytes `from .. from + len` to the file bytes from `at`.
    fn write_fields(
        &mut self,
        fields: &[Field],
        from: u32,
        len: u32,
        at: u32,
        name: &str,
        args_end: u32,
    ) -> LResult<()> {
        let end = from + len;
        let mut covered = vec![false; len as usize];
        for f in fields {
            let f_end = f.offset + f.size;
            if f_end <= from || f.offset >= end {
                continue;
            }
            if f.offset < from || f_end > end {
                return Err(err(
                    self.input_span(name),
                    format!(
                        "`.input {name}` (payload bytes {from}..{end}) covers part of {} \
                         (bytes {}..{f_end}): an input must hold whole fields",
                        f.what, f.offset
                    ),
                ));
            }
            for b in f.offset..f_end {
                covered[(b - from) as usize] = true;
            }
            self.write_field(f, at + (f.offset - from))?;
        }
        // Uncovered bytes: padding before the end of the arguments, an error after it.
        let mut b = 0;
        while b < len {
            if covered[b as usize] {
                b += 1;
                continue;
            }
            if from + b >= args_end {
                return Err(SyntaxError {
                    expected: Some(
                        "a `.payload OFFSET KIND` line in the launch (KIND: num_groups, \
                         global_size, local_size, enqueued_local_size, global_id_offset), or \
                         the argument's `.buffer`/`.param` line"
                            .into(),
                    ),
                    ..err(
                        self.input_span(name),
                        format!(
                            "the launch does not say what payload byte {} of `.input {name}` \
                             holds (the arguments end at byte {args_end})",
                            from + b
                        ),
                    )
                });
            }
            let lane0 = self.uniform_write(true)?;
            let stored = if b % 4 == 0 && b + 4 <= len && (b..b + 4).all(|x| !covered[x as usize]) {
                self.store_imm(lane0, Ty::U32, 0, at + b).map(|()| 4)
            } else {
                self.store_imm(lane0, Ty::U8, 0, at + b).map(|()| 1)
            };
            self.replicating = false;
            b += stored?;
        }
        Ok(())
    }

    fn input_span(&self, name: &str) -> ir::Span {
        self.k
            .inputs
            .iter()
            .find(|i| self.k.var(i.var).name == name)
            .map_or(self.k.span, |i| i.span)
    }

    /// Starts a payload write of a value lane 0 writes for the thread, and gives its guard:
    /// when the value is the same in every lane (`uniform`) and what it writes is a uniform
    /// variable, the write runs replicated, unguarded ([`super::promote`]); else in lane 0.
    fn uniform_write(&mut self, uniform: bool) -> LResult<Guard> {
        self.inst_id = self.next_payload_write;
        self.next_payload_write += 1;
        if uniform {
            self.replicable.insert(self.inst_id);
        }
        self.replicating = self.promotion.replicated(self.inst_id);
        if self.replicating {
            return Ok(Guard::ALWAYS);
        }
        Ok(Guard {
            pred: self.range_pred(0, 1)?,
            negate: false,
        })
    }

    /// Stores `src` as `ty` at byte `at` of the file, the same bytes for every lane of `guard`.
    fn store_at(&mut self, guard: Guard, ty: Ty, src: Operand, at: u32) -> LResult<()> {
        let bytes = ChannelBytes::Linear {
            first: at,
            stride: 0,
        };
        self.grf_store(guard, GrfAccess::scalar(bytes, 0, ty), src)
    }

    fn store_imm(&mut self, guard: Guard, ty: Ty, value: u64, at: u32) -> LResult<()> {
        self.store_at(guard, ty, Operand::Imm(value), at)
    }

    fn store_reg(&mut self, guard: Guard, ty: Ty, r: Reg, at: u32) -> LResult<()> {
        self.store_at(guard, ty, Operand::Reg(r), at)
    }

    fn write_field(&mut self, f: &Field, at: u32) -> LResult<()> {
        let uniform = match f.value {
            Value::LocalId { .. } => false,
            Value::Special(srs) => srs.iter().all(|sr| sr.is_warp_uniform()),
            Value::Zero | Value::GlobalSize | Value::Cbank { .. } => true,
        };
        let lane0 = self.uniform_write(uniform)?;
        let written = self.write_field_value(f, at, lane0);
        self.replicating = false;
        written
    }

    /// [`Self::write_field`]'s code, `lane0` the guard of a value lane 0 writes. Every value
    /// written gets its own scratch registers (written once each when replicated).
    fn write_field_value(&mut self, f: &Field, at: u32, lane0: Guard) -> LResult<()> {
        match f.value {
            Value::Zero => {
                for i in 0..f.size / 4 {
                    self.store_imm(lane0, Ty::U32, 0, at + 4 * i)?;
                }
            }
            Value::LocalId { d, first } => {
                // Lane `first + c` writes its id at word c.
                let t = self.temp(1);
                let lanes = Guard {
                    pred: self.range_pred(first, f.size / 2)?,
                    negate: false,
                };
                self.emit(lanes, Op::ReadSpecial { dst: t, sr: TID[d] });
                let bytes = ChannelBytes::Linear {
                    first: at,
                    stride: 2,
                };
                let access = GrfAccess::scalar(bytes, first, Ty::U16);
                self.grf_store(lanes, access, Operand::Reg(t))?;
            }
            Value::Special(srs) => {
                for (i, sr) in srs.iter().enumerate().take((f.size / 4) as usize) {
                    let t = self.temp(1);
                    self.emit(lane0, Op::ReadSpecial { dst: t, sr: *sr });
                    self.store_reg(lane0, Ty::U32, t, at + 4 * i as u32)?;
                }
            }
            Value::GlobalSize => {
                for i in 0..3 {
                    let t = self.temp(1);
                    let u = self.temp(1);
                    self.emit(
                        lane0,
                        Op::ReadSpecial {
                            dst: t,
                            sr: NTID[i],
                        },
                    );
                    self.emit(
                        lane0,
                        Op::ReadSpecial {
                            dst: u,
                            sr: NCTA[i],
                        },
                    );
                    self.emit(
                        lane0,
                        Op::Imad {
                            mode: ir::ImadMode::Lo,
                            signed: false,
                            dst: t,
                            a: Operand::Reg(u).into(),
                            b: Operand::Reg(t).into(),
                            c: Operand::Imm(0).into(),
                        },
                    );
                    self.store_reg(lane0, Ty::U32, t, at + 4 * i as u32)?;
                }
            }
            Value::Cbank { offset } => match f.size {
                8 => {
                    let t = self.temp(2);
                    self.emit(
                        lane0,
                        Op::Mov {
                            ty: Ty::U64,
                            dst: t,
                            src: Operand::Const { bank: 0, offset },
                        },
                    );
                    self.store_reg(lane0, Ty::U64, t, at)?;
                }
                4 => {
                    let t = self.temp(1);
                    self.emit(
                        lane0,
                        Op::Mov {
                            ty: Ty::U32,
                            dst: t,
                            src: Operand::Const { bank: 0, offset },
                        },
                    );
                    self.store_reg(lane0, Ty::U32, t, at)?;
                }
                size => {
                    // A byte or a half: the aligned dword around it, shifted down.
                    let t = self.temp(1);
                    self.emit(
                        lane0,
                        Op::Mov {
                            ty: Ty::U32,
                            dst: t,
                            src: Operand::Const {
                                bank: 0,
                                offset: offset & !3,
                            },
                        },
                    );
                    self.emit(
                        lane0,
                        Op::Binary {
                            op: ir::BinOp::Shr,
                            ty: Ty::U32,
                            dst: t,
                            a: Operand::Reg(t).into(),
                            b: Operand::Imm(u64::from(8 * (offset & 3))).into(),
                            ftz: false,
                        },
                    );
                    self.store_reg(lane0, if size == 2 { Ty::U16 } else { Ty::U8 }, t, at)?;
                }
            },
        }
        Ok(())
    }
}

use crate::front::lexer::SyntaxError;
