//! The IR printer behind `atomjit dump ir` and the golden files.
//!
//! The format is stable and line-oriented:
//!
//! ```text
//! .kernel hist
//! // dialect sass, warp_size 32, num_regs 6, num_preds 1
//! .grid 64, 1, 1
//! .block 256, 1, 1
//! .shared 1024
//! .buffer data u32[16384] = random(7, 0, 256)   // c[0x0][0x160]
//! .buffer hist u32[256] = 0   // c[0x0][0x168]
//! .param n u32 = 16384   // c[0x0][0x170]
//! loop:
//!     0: s2r R0, tid.x
//!     1: @!P0 atom.shared.add.u32.relaxed.cta R0, [R1-0x190], R9 {&req_6}
//!     2: bra 0 (loop)
//! .expect sum(hist) == 16384
//! ```
//!
//! Each instruction is `guard op.modifiers operands key=value... annotations`: every field of
//! the op is printed (types, orders, scopes, `.spin`, `.ftz`, carry predicates), immediates in
//! hex (float operands also show their value), branch targets as instruction indices with the
//! label in parentheses, and the SASS scheduling annotations verbatim at the end. Boolean
//! fields print under their IR names (`shf.l.u32.high` is `ShfInst { left, high, .. }`, which
//! for a left shift is the *low* word: see [`ShfInst`]), so the dump shows the IR, not SASS.

use super::Init;
use super::{
    Address, AtomicInst, CmpOp, Expect, ExpectLhs, ExpectRhs, Guard, HalfSel, ImadMode, Inst,
    Kernel, MemAccess, Op, Operand, ParamKind, Pred, PredMove, PredSrc, Program, Reg, Round,
    Scalar, ShfInst, SpecialReg, Src, SrcMod, Ty, VoteMode,
};
use std::fmt::Write;

/// Prints every kernel of a program.
pub fn print_program(p: &Program) -> String {
    let mut out = format!("// {}\n", p.source_name);
    for k in &p.kernels {
        out.push('\n');
        out.push_str(&print_kernel(k));
    }
    out
}

/// Prints one kernel: its launch description, its instructions with their indices and labels,
/// and its expectations.
pub fn print_kernel(k: &Kernel) -> String {
    let mut out = String::new();
    let l = &k.launch;
    let _ = writeln!(out, ".kernel {}", k.name);
    let _ = writeln!(
        out,
        "// dialect {}, warp_size {}, num_regs {}, num_preds {}",
        dialect_name(k),
        k.warp_size,
        k.num_regs,
        k.num_preds
    );
    if !k.uniform.is_empty() {
        let _ = writeln!(
            out,
            "// uniform (warp-wide) registers R{}..R{}, predicates P{}..P{}",
            k.uniform.regs.start, k.uniform.regs.end, k.uniform.preds.start, k.uniform.preds.end
        );
    }
    let _ = writeln!(out, ".grid {}, {}, {}", l.grid[0], l.grid[1], l.grid[2]);
    let _ = writeln!(out, ".block {}, {}, {}", l.block[0], l.block[1], l.block[2]);
    let _ = writeln!(out, ".shared {}", l.shared_bytes);
    for p in &l.params {
        match &p.kind {
            ParamKind::Buffer { elem, len, init } => {
                let _ = write!(
                    out,
                    ".buffer {} {elem}[{len}] = {}",
                    p.name,
                    init_text(init, *elem)
                );
            }
            ParamKind::Surface(d) => {
                let _ = write!(out, ".surface {} {}", p.name, surface_text(d));
            }
            ParamKind::Scalar { ty, value } => {
                let _ = write!(out, ".param {} {ty} = {value}", p.name);
            }
            ParamKind::SurfaceAddress { surface } => {
                let _ = write!(out, ".param {} u64 = &{surface}", p.name);
            }
        }
        let _ = writeln!(out, "   // c[0x0][{:#x}]", p.cbank_offset);
    }
    for (pc, inst) in k.insts.iter().enumerate() {
        for (name, _) in k.labels.iter().filter(|(_, at)| *at as usize == pc) {
            let _ = writeln!(out, "{name}:");
        }
        let _ = writeln!(out, "{pc:>5}: {}", print_inst(k, inst));
    }
    for (name, _) in k
        .labels
        .iter()
        .filter(|(_, at)| *at as usize >= k.insts.len())
    {
        let _ = writeln!(out, "{name}:");
    }
    for e in &l.expects {
        let _ = writeln!(out, ".expect {}", expect_text(e));
    }
    out
}

/// Prints one instruction (without its index): guard, op, annotations.
pub fn print_inst(k: &Kernel, inst: &Inst) -> String {
    let mut out = guard_text(&inst.guard);
    out.push_str(&op_text(k, &inst.op));
    for s in &inst.sched {
        out.push(' ');
        out.push_str(s);
    }
    out
}

fn dialect_name(k: &Kernel) -> &'static str {
    match k.dialect {
        super::Dialect::Sass => "sass",
        super::Dialect::Ptx => "ptx",
        super::Dialect::Visa => "visa",
    }
}

fn guard_text(g: &Guard) -> String {
    if g.is_always() {
        String::new()
    } else {
        format!("@{}{} ", if g.negate { "!" } else { "" }, pred(g.pred))
    }
}

fn reg(r: Reg) -> String {
    if r.is_rz() {
        "RZ".to_string()
    } else {
        format!("R{}", r.0)
    }
}

fn pred(p: Pred) -> String {
    if p.is_pt() {
        "PT".to_string()
    } else {
        format!("P{}", p.0)
    }
}

fn pred_src(p: &PredSrc) -> String {
    format!("{}{}", if p.negate { "!" } else { "" }, pred(p.pred))
}

fn hex(v: i128) -> String {
    if v < 0 {
        format!("-{:#x}", -v)
    } else {
        format!("{v:#x}")
    }
}

/// An operand; `ty` decides how an immediate is shown (floats also show their value).
fn operand(o: &Operand, ty: Ty) -> String {
    match o {
        Operand::Reg(r) => reg(*r),
        Operand::Const { bank, offset } => format!("c[{bank:#x}][{offset:#x}]"),
        Operand::Imm(bits) => match ty {
            Ty::F32 => format!("{bits:#x}({:?})", f32::from_bits(*bits as u32)),
            Ty::F64 => format!("{bits:#x}({:?})", f64::from_bits(*bits)),
            Ty::F16 => format!(
                "{bits:#x}({:?})",
                half::f16::from_bits(*bits as u16).to_f32()
            ),
            Ty::BF16 => format!(
                "{bits:#x}({:?})",
                half::bf16::from_bits(*bits as u16).to_f32()
            ),
            Ty::U8
            | Ty::U16
            | Ty::U32
            | Ty::U64
            | Ty::S8
            | Ty::S16
            | Ty::S32
            | Ty::S64
            | Ty::B16
            | Ty::B32
            | Ty::B64
            | Ty::F16x2
            | Ty::BF16x2
            | Ty::B128 => format!("{bits:#x}"),
        },
    }
}

fn src(s: &Src, ty: Ty) -> String {
    let o = operand(&s.operand, ty);
    match s.modifier {
        SrcMod::None => o,
        SrcMod::Neg => format!("-{o}"),
        SrcMod::Not => format!("~{o}"),
        SrcMod::Abs => format!("|{o}|"),
        SrcMod::NegAbs => format!("-|{o}|"),
    }
}

fn address(a: &Address) -> String {
    let a = match a {
        Address::Linear(a) => a,
        // `[surf.2d.ba.trap R4..R5, c[0x0][0x160]]`, with `.sd` and `sparse=P0` when present.
        Address::Surface(sa) => {
            let last = sa.coords.word(sa.dim.coords() - 1);
            let coords = if last == sa.coords {
                reg(sa.coords)
            } else {
                format!("{}..{}", reg(sa.coords), reg(last))
            };
            let handle = operand(&sa.handle.operand(), Ty::U32);
            let mut text = format!(
                "[surf.{}{}.{}{} {coords}, {handle}]",
                sa.dim,
                if sa.byte_x { ".ba" } else { "" },
                sa.clamp.sass_name().to_ascii_lowercase(),
                if sa.format_sign { ".sd" } else { "" },
            );
            if !sa.sparse.is_pt() {
                let _ = write!(text, " sparse={}", pred(sa.sparse));
            }
            return text;
        }
        Address::Indexed(x) => {
            let wide = |bits: u8| if bits == 64 { ".64" } else { "" };
            let scale = if x.scale > 0 {
                format!(".x{}", 1u32 << x.scale)
            } else {
                String::new()
            };
            let off = x.offset as i128;
            let sign = if off < 0 { "-" } else { "+" };
            return format!(
                "[{}{}{scale}+{}{}{sign}{}]",
                reg(x.base),
                wide(x.base_bits),
                reg(x.index),
                wide(x.index_bits),
                hex(off.abs())
            );
        }
    };
    let suffix = if a.base_bits == 64 { ".64" } else { "" };
    match a.base {
        None => format!("[{}]", hex(a.offset as i128)),
        Some(b) if a.offset == 0 => format!("[{}{suffix}]", reg(b)),
        Some(b) => {
            let off = a.offset as i128;
            let sign = if off < 0 { "-" } else { "+" };
            format!("[{}{suffix}{sign}{:#x}]", reg(b), off.unsigned_abs())
        }
    }
}

fn special(sr: SpecialReg) -> &'static str {
    match sr {
        SpecialReg::TidX => "tid.x",
        SpecialReg::TidY => "tid.y",
        SpecialReg::TidZ => "tid.z",
        SpecialReg::CtaIdX => "ctaid.x",
        SpecialReg::CtaIdY => "ctaid.y",
        SpecialReg::CtaIdZ => "ctaid.z",
        SpecialReg::NTidX => "ntid.x",
        SpecialReg::NTidY => "ntid.y",
        SpecialReg::NTidZ => "ntid.z",
        SpecialReg::NCtaIdX => "nctaid.x",
        SpecialReg::NCtaIdY => "nctaid.y",
        SpecialReg::NCtaIdZ => "nctaid.z",
        SpecialReg::LaneId => "laneid",
        SpecialReg::WarpId => "warpid",
        SpecialReg::NWarpId => "nwarpid",
        SpecialReg::LanemaskEq => "lanemask_eq",
        SpecialReg::LanemaskLt => "lanemask_lt",
        SpecialReg::LanemaskLe => "lanemask_le",
        SpecialReg::LanemaskGt => "lanemask_gt",
        SpecialReg::LanemaskGe => "lanemask_ge",
        SpecialReg::ClusterCtaRank => "cluster_ctarank",
        SpecialReg::SharedWindowHi => "shared_window_hi",
    }
}

fn round(r: Round) -> &'static str {
    match r {
        Round::Nearest => "rn",
        Round::Zero => "rz",
        Round::Down => "rm",
        Round::Up => "rp",
    }
}

fn vote_mode(m: VoteMode) -> &'static str {
    match m {
        VoteMode::Any => "any",
        VoteMode::All => "all",
        VoteMode::Eq => "eq",
    }
}

fn imad_mode(m: ImadMode) -> &'static str {
    match m {
        ImadMode::Lo => "lo",
        ImadMode::Hi => "hi",
        ImadMode::Wide => "wide",
    }
}

/// `space.ty.order.scope`: the qualifiers of a memory access.
fn access_qualifiers(m: &MemAccess) -> String {
    format!("{}{}.{}.{}", m.space, vector_ty(m), m.order, m.scope)
}

/// `.ty`, or `.vN.ty` for a vector access.
fn vector_ty(m: &MemAccess) -> String {
    if m.is_vector() {
        format!(".v{}.{}", m.vector, m.ty)
    } else {
        format!(".{}", m.ty)
    }
}

fn atomic(a: &AtomicInst) -> String {
    let m = &a.access;
    let mut s = format!(
        "atom.{}.{}{}.{}.{}",
        m.space,
        a.op,
        vector_ty(m),
        m.order,
        m.scope
    );
    if a.spin {
        s.push_str(".spin");
    }
    if a.ftz {
        s.push_str(".ftz");
    }
    let _ = write!(
        s,
        " {}, {}, {}",
        reg(a.dst),
        address(&m.addr),
        operand(&a.src, m.ty)
    );
    if let Some(c) = &a.src2 {
        let _ = write!(s, ", {}", operand(c, m.ty));
    }
    if !a.performed.is_pt() {
        let _ = write!(s, " performed={}", pred(a.performed));
    }
    s
}

fn branch_target(k: &Kernel, target: u32) -> String {
    match k.label_at(target) {
        Some(name) => format!("{target} ({name})"),
        None => target.to_string(),
    }
}

fn op_text(k: &Kernel, op: &Op) -> String {
    match op {
        Op::Nop => "nop".to_string(),
        Op::Mov { ty, dst, src } => format!("mov.{ty} {}, {}", reg(*dst), operand(src, *ty)),
        Op::ReadSpecial { dst, sr } => format!("s2r {}, {}", reg(*dst), special(*sr)),
        Op::Unary { op, ty, dst, a } => {
            let name = op.name();
            format!("{name}.{ty} {}, {}", reg(*dst), src(a, *ty))
        }
        Op::Binary {
            op,
            ty,
            dst,
            a,
            b,
            ftz,
        } => {
            let b_ty = if op.b_is_shift_amount() { Ty::U32 } else { *ty };
            let ftz = if *ftz { ".ftz" } else { "" };
            format!(
                "{op}.{ty}{ftz} {}, {}, {}",
                reg(*dst),
                src(a, *ty),
                src(b, b_ty)
            )
        }
        Op::IAdd3 {
            dst,
            carry_out,
            a,
            b,
            c,
            carry_in,
        } => format!(
            "iadd3 {}, {}, {}, {} carry_out=({}, {}) carry_in=({}, {})",
            reg(*dst),
            src(a, Ty::U32),
            src(b, Ty::U32),
            src(c, Ty::U32),
            pred(carry_out[0]),
            pred(carry_out[1]),
            pred_src(&carry_in[0]),
            pred_src(&carry_in[1])
        ),
        Op::Imad {
            mode,
            signed,
            dst,
            a,
            b,
            c,
        } => {
            let c_ty = if *mode == ImadMode::Wide {
                Ty::U64
            } else {
                Ty::U32
            };
            format!(
                "imad.{}.{} {}, {}, {}, {}",
                imad_mode(*mode),
                if *signed { "s32" } else { "u32" },
                reg(*dst),
                src(a, Ty::U32),
                src(b, Ty::U32),
                src(c, c_ty)
            )
        }
        Op::Lea {
            hi,
            sx32,
            dst,
            carry_out,
            a,
            b,
            c,
            shift,
            carry_in,
        } => format!(
            "lea{}{} {}, {}, {}, {} shift={shift} carry_out={} carry_in={}",
            if *hi { ".hi" } else { "" },
            if *sx32 { ".sx32" } else { "" },
            reg(*dst),
            src(a, Ty::U32),
            src(b, Ty::U32),
            src(c, Ty::U32),
            pred(*carry_out),
            pred_src(carry_in)
        ),
        Op::Shf(ShfInst {
            left,
            wrap,
            high,
            ty,
            dst,
            lo,
            shift,
            hi,
        }) => format!(
            "shf.{}{}.{ty}{} {}, {}, {}, {}",
            if *left { "l" } else { "r" },
            if *wrap { ".wrap" } else { "" },
            if *high { ".high" } else { "" },
            reg(*dst),
            src(lo, Ty::U32),
            src(shift, Ty::U32),
            src(hi, Ty::U32)
        ),
        Op::Lop3 {
            dst,
            pred_out,
            a,
            b,
            c,
            lut,
        } => format!(
            "lop3 {}, {}, {}, {} lut={lut:#04x} pred_out={}",
            reg(*dst),
            src(a, Ty::U32),
            src(b, Ty::U32),
            src(c, Ty::U32),
            pred(*pred_out)
        ),
        Op::SetP {
            cmp,
            ty,
            combine,
            dst,
            dst2,
            a,
            b,
            c,
            chain,
        } => format!(
            "setp.{cmp}.{ty}.{combine}{} {}, {}, {}, {}, {}{}",
            if chain.is_some() { ".ex" } else { "" },
            pred(*dst),
            pred(*dst2),
            src(a, *ty),
            src(b, *ty),
            pred_src(c),
            chain
                .map(|p| format!(", {}", pred_src(&p)))
                .unwrap_or_default()
        ),
        Op::PredLogic { op, dst, a, b } => format!(
            "plogic.{op} {}, {}, {}",
            pred(*dst),
            pred_src(a),
            pred_src(b)
        ),
        Op::PredMove(PredMove::ToReg { dst, src }) => {
            format!("p2r {}, {}", reg(*dst), pred_src(src))
        }
        Op::PredMove(PredMove::FromReg { dst, src, mask }) => {
            format!(
                "r2p {}, {} mask={mask:#x}",
                pred(*dst),
                operand(src, Ty::U32)
            )
        }
        Op::Select {
            ty,
            dst,
            a,
            b,
            pred: p,
        } => {
            format!(
                "sel.{ty} {}, {}, {}, {}",
                reg(*dst),
                src(a, *ty),
                src(b, *ty),
                pred_src(p)
            )
        }
        Op::Convert {
            dst_ty,
            src_ty,
            round: r,
            ftz,
            dst,
            a,
        } => format!(
            "cvt.{dst_ty}.{src_ty}.{}{} {}, {}",
            round(*r),
            if *ftz { ".ftz" } else { "" },
            reg(*dst),
            src(a, *src_ty)
        ),
        Op::Vote {
            mode,
            dst,
            dst_pred,
            src: s,
        } => {
            format!(
                "vote.{} {}, {}, {}",
                vote_mode(*mode),
                reg(*dst),
                pred(*dst_pred),
                pred_src(s)
            )
        }
        Op::Load { access, dst } => format!(
            "ld.{} {}, {}",
            access_qualifiers(access),
            reg(*dst),
            address(&access.addr)
        ),
        Op::Store { access, src: s } => format!(
            "st.{} {}, {}",
            access_qualifiers(access),
            address(&access.addr),
            operand(s, access.ty)
        ),
        Op::Atomic(a) => atomic(a),
        Op::Fence { order, scope } => format!("fence.{order}.{scope}"),
        Op::Barrier { id } => format!("bar.sync {id}"),
        Op::Branch { target, uniform } => {
            format!(
                "bra{} {}",
                if *uniform { ".uni" } else { "" },
                branch_target(k, *target)
            )
        }
        Op::Exit => "exit".to_string(),
        Op::BranchConverged {
            target,
            mask,
            diverged,
        } => format!(
            "bra.{} {}, {}",
            if *diverged { "div" } else { "conv" },
            src(mask, Ty::U32),
            branch_target(k, *target)
        ),
        Op::WarpSplit { mask, rejoin, wait } => format!(
            "split{} {}, rejoin {}",
            if *wait { ".wait" } else { "" },
            src(mask, Ty::U32),
            branch_target(k, *rejoin)
        ),
        Op::Shfl {
            mode,
            dst,
            dst_pred,
            a,
            b,
            c,
        } => format!(
            "shfl.{mode} {}, {}, {}, {}, {}",
            reg(*dst),
            pred(*dst_pred),
            operand(a, Ty::B32),
            src(b, Ty::U32),
            src(c, Ty::U32)
        ),
        Op::Redux {
            op,
            ty,
            dst,
            src: s,
        } => format!("redux.{op}.{ty} {}, {}", reg(*dst), operand(s, *ty)),
        Op::Match {
            all,
            ty,
            dst,
            dst_pred,
            src: s,
        } => format!(
            "match.{}.{ty} {}, {}, {}",
            if *all { "all" } else { "any" },
            reg(*dst),
            pred(*dst_pred),
            operand(s, *ty)
        ),
        Op::Prmt { dst, a, b, sel } => format!(
            "prmt {}, {}, {}, {}",
            reg(*dst),
            src(a, Ty::B32),
            src(b, Ty::B32),
            src(sel, Ty::B32)
        ),
        Op::Bfe {
            ty,
            dst,
            a,
            pos,
            len,
        } => format!(
            "bfe.{ty} {}, {}, {}, {}",
            reg(*dst),
            src(a, *ty),
            src(pos, Ty::U32),
            src(len, Ty::U32)
        ),
        Op::Bfi {
            ty,
            dst,
            insert,
            base,
            pos,
            len,
        } => format!(
            "bfi.{ty} {}, {}, {}, {}, {}",
            reg(*dst),
            src(insert, *ty),
            src(base, *ty),
            src(pos, Ty::U32),
            src(len, Ty::U32)
        ),
        Op::Fma {
            ty,
            dst,
            a,
            b,
            c,
            round: r,
            ftz,
            halves,
        } => {
            // A half selector follows its operand (`r6.h0_h0`), as SASS writes it.
            let selected = |s: &Src, sel: HalfSel| match sel {
                HalfSel::H1H0 => src(s, *ty),
                HalfSel::H0H0 | HalfSel::H1H1 => format!("{}.{sel}", src(s, *ty)),
            };
            format!(
                "fma.{}{}.{ty} {}, {}, {}, {}",
                round(*r),
                if *ftz { ".ftz" } else { "" },
                reg(*dst),
                selected(a, halves[0]),
                selected(b, halves[1]),
                selected(c, halves[2])
            )
        }
        Op::PackedMinMax { op, ty, dst, a, b } => format!(
            "{op}.{ty}x2 {}, {}, {}",
            reg(*dst),
            src(a, Ty::B32),
            src(b, Ty::B32)
        ),
        Op::PackHalves { ty, dst, hi, lo } => format!(
            "cvt.rn.{ty}.f32 {}, {}, {}",
            reg(*dst),
            src(hi, Ty::F32),
            src(lo, Ty::F32)
        ),
        Op::IsSpace { space, dst, addr } => {
            format!("isspacep.{space} {}, {}", pred(*dst), address(addr))
        }
        Op::PredLut { dst, a, b, c, lut } => format!(
            "plop3 {}, {}, {}, {}, {} lut={:#04x},{:#04x}",
            pred(dst[0]),
            pred(dst[1]),
            pred_src(a),
            pred_src(b),
            pred_src(c),
            lut[0],
            lut[1]
        ),
    }
}

fn scalar_list(values: &[Scalar]) -> String {
    let items: Vec<String> = values.iter().map(|v| v.to_string()).collect();
    format!("{{{}}}", items.join(", "))
}

fn init_text(init: &Init, elem: super::Ty) -> String {
    match init {
        Init::Fill(v) => v.to_string(),
        Init::List(values) => scalar_list(values),
        Init::Encoded(bytes) => {
            let size = elem.bytes() as usize;
            let values: Vec<Scalar> = bytes
                .chunks_exact(size)
                .map(|c| {
                    let mut word = [0u8; 8];
                    word[..size].copy_from_slice(c);
                    Scalar::from_bits(elem, u64::from_le_bytes(word))
                })
                .collect();
            scalar_list(&values)
        }
        Init::Iota => "iota".to_string(),
        Init::Random { seed, range: None } => format!("random({seed})"),
        Init::Random {
            seed,
            range: Some((lo, hi)),
        } => format!("random({seed}, {lo}, {hi})"),
    }
}

fn cmp_text(c: CmpOp) -> &'static str {
    match c {
        CmpOp::Eq => "==",
        CmpOp::Ne => "!=",
        CmpOp::Lt => "<",
        CmpOp::Le => "<=",
        CmpOp::Gt => ">",
        CmpOp::Ge => ">=",
        CmpOp::Equ
        | CmpOp::Neu
        | CmpOp::Ltu
        | CmpOp::Leu
        | CmpOp::Gtu
        | CmpOp::Geu
        | CmpOp::Num
        | CmpOp::Nan => c.name(),
    }
}

fn expect_text(e: &Expect) -> String {
    let lhs = match &e.lhs {
        ExpectLhs::Element { buffer, index } => format!("{buffer}[{index}]"),
        ExpectLhs::Range { buffer, start, end } => format!("{buffer}[{start}..{end}]"),
        ExpectLhs::Whole { buffer } => buffer.clone(),
        ExpectLhs::Sum { buffer } => format!("sum({buffer})"),
        ExpectLhs::Min { buffer } => format!("min({buffer})"),
        ExpectLhs::Max { buffer } => format!("max({buffer})"),
        ExpectLhs::Count { buffer, value } => format!("count({buffer}, {value})"),
    };
    let rhs = match &e.rhs {
        ExpectRhs::Scalar(v) => v.to_string(),
        ExpectRhs::List(values) => scalar_list(values),
    };
    format!("{lhs} {} {rhs}", cmp_text(e.cmp))
}

/// A surface declaration after its name, as a program file writes it.
fn surface_text(d: &super::surface::SurfaceDecl) -> String {
    use super::surface::{SurfaceDim, SurfaceLayout};
    let sh = &d.shape;
    let extent = match sh.dim {
        SurfaceDim::D1 | SurfaceDim::D1Buffer | SurfaceDim::D1Array => format!("{}", sh.width),
        SurfaceDim::D2 | SurfaceDim::D2Array => format!("{},{}", sh.width, sh.height),
        SurfaceDim::D3 => format!("{},{},{}", sh.width, sh.height, sh.depth),
    };
    let mut t = format!("{} {}[{extent}]", sh.dim, d.elem);
    if sh.dim.is_array() {
        t += &format!(" layers {}", sh.layers);
    }
    t += &match d.layout {
        SurfaceLayout::Pitch { pitch } => format!(" pitch({pitch})"),
        SurfaceLayout::BlockLinear {
            log_height,
            log_depth,
        } => format!(" blocklinear({},{})", 1u32 << log_height, 1u32 << log_depth),
    };
    if d.disabled {
        t += " disabled";
    }
    if !d.sparse.is_empty() {
        let pages: Vec<String> = d.sparse.iter().map(|p| p.to_string()).collect();
        t += &format!(" sparse {}", pages.join(","));
    }
    t + &format!(" = {}", init_text(&d.init, d.elem))
}

#[cfg(test)]
mod tests {
    use crate::front::parse;
    use crate::ir::{print_inst, print_program, Dialect, Guard, Inst, Op, Pred, Span};

    const SOURCE: &str = "\
.kernel hist
.grid 64
.block 16,16
.shared 1024
.buffer data u32[16] = random(7, 0, 256)
.buffer f f32[4] = {1.5, -2, inf}
.param n u8 = 200
.param x f64 = 2.5
loop:
    /*0000*/ S2R R0, SR_TID.X ;
    @!P0 ATOMS.CAST.SPIN.U32 R2, [R1 - 400], R4, R5 {&req_6} {?WAIT4_END_GROUP} ;
    ATOMS.ADD.U32 RZ, [0x10], R8 ;
    ATOMG.E.ADD.F32.FTZ.RN.STRONG.SYS PT, R6, [R2.64+0x10], R5 ;
    RED.E.ADD.STRONG.GPU [R4.64], R11 ;
    MOV R1, c[0x0][n] ;
    IADD3.X R5, P1, R2, -R5, ~RZ, P0, !PT ;
    IMAD.WIDE.U32 R2, R0, 0x4, c[0x0][0x160] ;
    LEA.HI.X.SX32 R3, R0, c[0x0][0x164], 0x1, P0 ;
    SHF.L.U32 R0, R1, 0x2, RZ ;
    LOP3.LUT P1, R0, R1, 0xff, RZ, 0xc0, !PT ;
    ISETP.GE.U32.OR P0, PT, R0, -0x1, !P1 ;
    SEL R0, R1, 0x5, P0 ;
    POPC R0, ~R1 ;
    VOTE.ANY R0, PT, P0 ;
    LDS.S16 R0, [R1+0x2] ;
    STG.E.64.STRONG.GPU [R2.64], R4 ;
    FADD.FTZ R0, -|R1|, 0.5 ;
    F2I.U32.TRUNC.NTZ R0, R1 ;
    I2F.U32.RP R0, R1 ;
    MEMBAR.SC.GPU ;
    BAR.SYNC 0x1 ;
    @P0 BRA.U loop ;
    EXIT ;
end:
.expect data[0..4] != 3
.expect f == {1.5, -2, inf, 0}
.expect count(data, 5) >= 1
.expect data[2] < 256
";

    const DUMP: &str = "\
// t.s

.kernel hist
// dialect sass, warp_size 32, num_regs 12, num_preds 2
.grid 64, 1, 1
.block 16, 16, 1
.shared 1024
.buffer data u32[16] = random(7, 0, 256)   // c[0x0][0x160]
.buffer f f32[4] = {1.5, -2.0, inf}   // c[0x0][0x168]
.param n u8 = 200   // c[0x0][0x170]
.param x f64 = 2.5   // c[0x0][0x178]
loop:
    0: s2r R0, tid.x
    1: @!P0 atom.shared.cast.u32.relaxed.cta.spin R2, [R1-0x190], R4, R5 {&req_6} {?WAIT4_END_GROUP}
    2: atom.shared.add.u32.relaxed.cta RZ, [0x10], R8
    3: atom.global.add.f32.relaxed.sys.ftz R6, [R2.64+0x10], R5
    4: atom.generic.add.u32.relaxed.gpu RZ, [R4.64], R11
    5: mov.u32 R1, c[0x0][0x170]
    6: iadd3 R5, R2, -R5, ~RZ carry_out=(P1, PT) carry_in=(P0, !PT)
    7: imad.wide.u32 R2, R0, 0x4, c[0x0][0x160]
    8: lea.hi.sx32 R3, R0, c[0x0][0x164], RZ shift=1 carry_out=PT carry_in=P0
    9: shf.l.u32 R0, R1, 0x2, RZ
   10: lop3 R0, R1, 0xff, RZ lut=0xc0 pred_out=P1
   11: setp.ge.u32.or P0, PT, R0, 0xffffffff, !P1
   12: sel.u32 R0, R1, 0x5, P0
   13: popc.u32 R0, ~R1
   14: vote.any R0, PT, P0
   15: ld.shared.s16.weak.cta R0, [R1+0x2]
   16: st.global.u64.relaxed.gpu [R2.64], R4
   17: add.f32.ftz R0, -|R1|, 0x3f000000(0.5)
   18: cvt.u32.f32.rz R0, R1
   19: cvt.f32.u32.rp R0, R1
   20: fence.sc.gpu
   21: bar.sync 1
   22: @P0 bra.uni 0 (loop)
   23: exit
end:
.expect data[0..4] != 3
.expect f == {1.5, -2, inf, 0}
.expect count(data, 5) >= 1
.expect data[2] < 256
";

    #[test]
    fn program_dump_shows_every_field() {
        let p = parse("t.s", SOURCE, Dialect::Sass).unwrap();
        let dump = print_program(&p);
        if dump != DUMP {
            for (got, want) in dump.lines().zip(DUMP.lines()) {
                assert_eq!(got, want);
            }
            assert_eq!(dump, DUMP);
        }
    }

    #[test]
    fn instruction_text_without_labels_or_kernel_context() {
        let mut k = parse("t.s", "BRA x\nx: EXIT", Dialect::Sass)
            .unwrap()
            .kernels
            .remove(0);
        assert_eq!(print_inst(&k, &k.insts[0]), "bra 1 (x)");
        k.labels.clear();
        assert_eq!(print_inst(&k, &k.insts[0]), "bra 1");
        let never = Inst {
            op: Op::Exit,
            guard: Guard {
                pred: Pred::PT,
                negate: true,
            },
            span: Span::default(),
            text: String::new(),
            sched: vec![],
        };
        assert_eq!(print_inst(&k, &never), "@!PT exit");
    }
}
