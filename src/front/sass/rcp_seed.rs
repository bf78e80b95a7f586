//! `MUFU.RCP` as the seed of ptxas's integer division: the one use of the multi-function unit
//! atomjit accepts, checked on each kernel once its instructions are lowered.
//!
//! # Why MUFU is refused
//!
//! `MUFU` computes hardware approximations (reciprocal, square root, exponential, sine, ...)
//! whose exact results NVIDIA does not document, so atomjit cannot reproduce them bit for bit.
//!
//! # Why this use is exact
//!
//! ptxas compiles an unsigned 32-bit division or remainder by a value known only at run time
//! (`n / d`, `n % d`, and the signed forms on absolute values) into:
//!
//! ```text
//! I2F.U32.RP R5, d ;                    x = d rounded up to f32 (I2F.RP for a signed |d|)
//! MUFU.RCP R5, R5 ;                     r ≈ 1/x
//! IADD3 R2, R5, 0xffffffe, RZ ;         y = r·2^32 − 2 ulps (on the bits: +32 to the exponent, −2)
//! F2I.FTZ.U32.TRUNC.NTZ R3, R2 ;        q0 = trunc(y)           (sm_90: VIADD R2, R5, 0xffffffe)
//! IMAD.MOV R7, RZ, RZ, -R3 ; IMAD R7, R7, d, RZ ; IMAD.HI.U32 R7, R3, R7, R2 ;   Newton step
//! IMAD.HI.U32 q, R7, n, RZ ; r = n − q·d ; two corrections `@P IADD3 r, r, -d` ...
//! ```
//!
//! Everything after the `F2I` is exact integer arithmetic. Rounding `d` up, and taking two units
//! in the last place off `r·2^32`, make the seed `q0` never exceed `2^32/d` for any reciprocal
//! within the hardware's error bound, while falling short of it by at most one (the truncation)
//! plus a relative `2^-21`; the Newton step squares the relative error and keeps the estimate
//! below `2^32/d`, so `q` falls short of `n / d` by at most 2, which the two corrections make
//! up (the tests check the seed's bounds for the reciprocal atomjit computes, and the quotients
//! and remainders of ptxas's listings on both backends). The quotient and remainder are therefore
//! exact for *every* reciprocal within the bound: that is what makes the sequence a correct
//! compilation of `/` and `%`. atomjit lowers the `MUFU.RCP` to the correctly rounded f32
//! reciprocal `1.0 / x` (round to nearest even, within half an ulp: inside the bound), so it
//! computes the exact quotient and remainder, the values the hardware computes, even though the
//! seed may differ from the hardware's in its last bits. Division by zero follows the same path:
//! `1.0 / +0.0` is `+Inf`, as the hardware's reciprocal of zero, whose biased bits are a
//! negative float that `F2I.U32` saturates to 0; the integer steps never trap, and ptxas then
//! replaces the result (`@!P LOP3.LUT q, RZ, d, RZ, 0x33`: `~d`, all ones).
//!
//! # What is checked
//!
//! The argument holds only if the reciprocal is used as above and nowhere else, so each
//! `MUFU.RCP Rd, Rs` (lowered by `super::ops` as an f32 division `1.0 / Rs`) must be the
//! second of the four instructions, with the same guard as the other three (whose predicate no
//! instruction between them writes):
//!
//! * the last write of `Rs` before it is `I2F.U32.RP Rs, ...` or `I2F.RP Rs, ...` (an unsigned
//!   or signed 32-bit integer rounded up to f32);
//! * the first instruction after it to read or write `Rd` is `IADD3 T, Rd, 0xffffffe, RZ` or
//!   `VIADD T, Rd, 0xffffffe` (no carries, no modifiers), and `Rd` is dead after it (unless `T`
//!   is `Rd`);
//! * the first instruction after that to read or write `T` is `F2I.FTZ.U32.TRUNC.NTZ D, T`,
//!   and `T` is dead after it (unless `D` is `T`).
//!
//! "Before" and "after" are straight-line code: between the `I2F` and the `F2I` no branch
//! enters (except an instruction's branch to itself, `WARPSYNC`), and between the `MUFU` and
//! the `F2I` none leaves except by `EXIT`; `BAR.SYNC` and other instructions may sit in between.
//! "Dead" is the validator's liveness (`crate::valid::flow_and_liveness`): no path reads the
//! register before every lane overwrites it. Any other `MUFU`, and a `MUFU.RCP` that fails a
//! check, is refused with the reason.

use super::super::lexer::SyntaxError;
use crate::ir::{Guard, Inst, Kernel, Op, Operand, Pred, PredSrc, Reg, Round, Src, Ty};

/// The refusal of a `MUFU` instruction at `span` (`detail`: why this one is not the division
/// seed, if it is a `MUFU.RCP`).
pub fn refusal(span: crate::ir::Span, detail: Option<&str>) -> SyntaxError {
    let mut message = "MUFU (the multi-function unit: reciprocal, square root, sine...) computes \
        hardware approximations whose exact results NVIDIA does not document, so atomjit cannot \
        reproduce them bit for bit; it accepts `MUFU.RCP` only as the seed of ptxas's integer \
        division (`I2F.U32.RP`, `MUFU.RCP`, `IADD3 ..., 0xffffffe`, `F2I.FTZ.U32.TRUNC.NTZ`), \
        whose quotient does not depend on the approximation"
        .to_string();
    if let Some(d) = detail {
        message.push_str("; here ");
        message.push_str(d);
    }
    SyntaxError::new(span, message)
        .expected("MUFU.RCP only as the seed of a 32-bit integer division or remainder")
}

/// The mnemonic of an instruction's text (after a guard), upper case.
fn mnemonic(text: &str) -> String {
    let mut words = text.split_whitespace();
    let first = words.next().unwrap_or("");
    let m = if first.starts_with('@') {
        words.next().unwrap_or("")
    } else {
        first
    };
    m.to_ascii_uppercase()
}

/// The value `1.0f32` the lowering divides.
const ONE: u64 = 0x3f80_0000;

/// The seed's bias: `+0x10000000` (32 on the exponent) and `-2` (ulps).
const BIAS: u64 = 0x0fff_fffe;

/// Checks every `MUFU.RCP` of `kernel` (see the [module docs](self)); returns an error per
/// instruction that is not the division seed, with the instruction's form for grouping.
pub fn check(kernel: &Kernel) -> Vec<(String, SyntaxError)> {
    let seeds: Vec<usize> = (0..kernel.insts.len())
        .filter(|&pc| mnemonic(&kernel.insts[pc].text) == "MUFU.RCP")
        .collect();
    if seeds.is_empty() {
        return Vec::new();
    }
    let (succ, live) = crate::valid::flow_and_liveness(kernel);
    let chain = Chain::new(kernel, &succ, &live);
    seeds
        .into_iter()
        .filter_map(|pc| {
            chain.check_seed(pc).err().map(|why| {
                let inst = &kernel.insts[pc];
                ("MUFU.RCP".to_string(), refusal(inst.span, Some(&why)))
            })
        })
        .collect()
}

/// The kernel with its control flow and liveness.
struct Chain<'k> {
    kernel: &'k Kernel,
    insts: &'k [Inst],
    succ: &'k [Vec<u32>],
    preds: Vec<Vec<u32>>,
    live: &'k crate::valid::Liveness,
}

impl<'k> Chain<'k> {
    fn new(
        kernel: &'k Kernel,
        succ: &'k [Vec<u32>],
        live: &'k crate::valid::Liveness,
    ) -> Chain<'k> {
        let n = kernel.insts.len();
        let mut preds = vec![Vec::new(); n];
        for (pc, ss) in succ.iter().enumerate() {
            for &s in ss {
                if let Some(p) = preds.get_mut(s as usize) {
                    p.push(pc as u32);
                }
            }
        }
        Chain {
            kernel,
            insts: &kernel.insts,
            succ,
            preds,
            live,
        }
    }

    /// Control reaches `pc` only from `pc - 1` (falling through) or from `pc` itself.
    fn entered_only_in_line(&self, pc: usize) -> bool {
        pc > 0
            && self.preds[pc].contains(&(pc as u32 - 1))
            && self.preds[pc]
                .iter()
                .all(|&p| p as usize == pc || p as usize == pc - 1)
    }

    /// Control leaves `pc` only to `pc + 1`, to `pc` itself or to the exit.
    fn leaves_only_in_line(&self, pc: usize) -> bool {
        let exit = self.insts.len();
        self.succ[pc]
            .iter()
            .all(|&s| s as usize == pc + 1 || s as usize == pc || s as usize == exit)
    }

    fn touches(&self, pc: usize, r: Reg) -> bool {
        let op = &self.insts[pc].op;
        op.reads_reg(r) || op.writes_reg(r)
    }

    fn live_after(&self, pc: usize, r: Reg) -> bool {
        let r = r.0 as usize;
        self.live.is_live_after(self.kernel, pc, r)
    }

    /// The first instruction after `from` that reads or writes `r`, in straight-line code:
    /// nothing enters or leaves (but by `EXIT`) on the way.
    fn next_use(&self, from: usize, r: Reg) -> Option<usize> {
        let mut pc = from;
        loop {
            if !self.leaves_only_in_line(pc) {
                return None;
            }
            pc += 1;
            if pc >= self.insts.len() || !self.entered_only_in_line(pc) {
                return None;
            }
            if self.touches(pc, r) {
                return Some(pc);
            }
        }
    }

    /// The last instruction before `to` that writes `r`, in straight-line code: nothing
    /// enters on the way.
    fn last_write(&self, to: usize, r: Reg) -> Option<usize> {
        let mut pc = to;
        loop {
            if !self.entered_only_in_line(pc) {
                return None;
            }
            pc -= 1;
            if self.insts[pc].op.writes_reg(r) {
                return Some(pc);
            }
        }
    }

    /// Whether `MUFU.RCP` at `pc` is the division seed, or why not.
    fn check_seed(&self, pc: usize) -> Result<(), String> {
        let inst = &self.insts[pc];
        let operands = |op: &Op| {
            let Op::Binary {
                op: crate::ir::BinOp::Div,
                ty: Ty::F32,
                dst,
                a:
                    Src {
                        operand: Operand::Imm(ONE),
                        modifier: crate::ir::SrcMod::None,
                    },
                b:
                    Src {
                        operand: Operand::Reg(rs),
                        modifier: crate::ir::SrcMod::None,
                    },
                ftz: false,
            } = op
            else {
                return None;
            };
            (!dst.is_rz() && !rs.is_rz()).then_some((*dst, *rs))
        };
        let (rd, rs) =
            operands(&inst.op).ok_or("its operands are not `Rd, Rs` registers".to_string())?;
        let guard = inst.guard;
        let name = |r: Reg| format!("R{}", r.0);

        // The source: I2F.U32.RP / I2F.RP.
        let i2f = self.last_write(pc, rs).ok_or_else(|| {
            format!(
                "no `I2F.U32.RP {0}` or `I2F.RP {0}` writes its source in the straight-line code \
                 before it",
                name(rs)
            )
        })?;
        let is_i2f = matches!(
            self.insts[i2f].op,
            Op::Convert {
                dst_ty: Ty::F32,
                src_ty: Ty::U32 | Ty::S32,
                round: Round::Up,
                ..
            }
        );
        if !is_i2f {
            return Err(format!(
                "its source {} comes from `{}`, not from `I2F.U32.RP` or `I2F.RP`",
                name(rs),
                self.insts[i2f].text
            ));
        }

        // The one use of the reciprocal: IADD3 T, Rd, 0xffffffe, RZ (or VIADD).
        let add = self.next_use(pc, rd).ok_or_else(|| {
            format!(
                "its result {} is not used by an `IADD3 ..., {}, 0xffffffe, RZ` in the \
                 straight-line code after it",
                name(rd),
                name(rd)
            )
        })?;
        let biased = |op: &Op| {
            let Op::IAdd3 {
                dst,
                carry_out: [Pred::PT, Pred::PT],
                a:
                    Src {
                        operand: Operand::Reg(a),
                        modifier: crate::ir::SrcMod::None,
                    },
                b:
                    Src {
                        operand: Operand::Imm(bias),
                        modifier: crate::ir::SrcMod::None,
                    },
                c:
                    Src {
                        operand: Operand::Reg(Reg::RZ),
                        modifier: crate::ir::SrcMod::None,
                    },
                carry_in: [PredSrc::FALSE, PredSrc::FALSE],
            } = op
            else {
                return None;
            };
            (*a == rd && *bias & 0xffff_ffff == BIAS && !dst.is_rz()).then_some(*dst)
        };
        let t = biased(&self.insts[add].op).ok_or_else(|| {
            format!(
                "its result {} goes to `{}`, not to `IADD3 ..., {}, 0xffffffe, RZ`",
                name(rd),
                self.insts[add].text,
                name(rd)
            )
        })?;
        if t != rd && self.live_after(add, rd) {
            return Err(format!(
                "its result {} is read again after `{}`",
                name(rd),
                self.insts[add].text
            ));
        }

        // The biased seed's one use: F2I.FTZ.U32.TRUNC.NTZ.
        let f2i = self.next_use(add, t).ok_or_else(|| {
            format!(
                "the biased value {} is not converted by `F2I.FTZ.U32.TRUNC.NTZ` in the \
                 straight-line code after `{}`",
                name(t),
                self.insts[add].text
            )
        })?;
        let seed = |op: &Op| {
            let Op::Convert {
                dst_ty: Ty::U32,
                src_ty: Ty::F32,
                round: Round::Zero,
                ftz: true,
                dst,
                a:
                    Src {
                        operand: Operand::Reg(a),
                        modifier: crate::ir::SrcMod::None,
                    },
            } = op
            else {
                return None;
            };
            (*a == t).then_some(*dst)
        };
        let d = seed(&self.insts[f2i].op).ok_or_else(|| {
            format!(
                "the biased value {} goes to `{}`, not to `F2I.FTZ.U32.TRUNC.NTZ`",
                name(t),
                self.insts[f2i].text
            )
        })?;
        if d != t && self.live_after(f2i, t) {
            return Err(format!(
                "the biased value {} is read again after `{}`",
                name(t),
                self.insts[f2i].text
            ));
        }

        // One guard over the four, unchanged between them.
        for at in [i2f, add, f2i] {
            if self.insts[at].guard != guard {
                return Err(format!(
                    "`{}` and the `MUFU.RCP` have different guards",
                    self.insts[at].text
                ));
            }
        }
        if !guard_is_plain(guard) {
            if let Some(w) = (i2f + 1..f2i).find(|&p| writes_pred(&self.insts[p], guard.pred)) {
                return Err(format!(
                    "`{}` changes the guard between the instructions of the division",
                    self.insts[w].text
                ));
            }
        }
        Ok(())
    }
}

fn guard_is_plain(g: Guard) -> bool {
    g.pred.is_pt()
}

fn writes_pred(inst: &Inst, p: Pred) -> bool {
    let mut found = false;
    inst.op.for_each_use(|u| {
        if let crate::ir::Use::PredDst(d) = u {
            found |= d == p;
        }
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::BinOp;
    use crate::sem::{alu, convert};

    /// The seed `q0` both backends compute for divisor `d` (each step with the semantics
    /// library they share): `I2F.U32.RP`, the lowered `MUFU.RCP`, the `IADD3` bias,
    /// `F2I.FTZ.U32.TRUNC.NTZ`. Returns the intermediate bits too.
    fn seed(d: u32) -> (u64, u64, u64, u32) {
        let x = convert::convert(Ty::F32, Ty::U32, Round::Up, false, u64::from(d));
        let r = alu::binary(BinOp::Div, Ty::F32, ONE, x, false) as u64;
        let y = (r + BIAS) & 0xffff_ffff;
        let q0 = convert::convert(Ty::U32, Ty::F32, Round::Zero, true, y) as u32;
        (x, r, y, q0)
    }

    #[test]
    fn the_steps_are_exact_ieee_operations() {
        // I2F.U32.RP rounds up (2^24 + 1 has no f32; the next one up is 2^24 + 2) and
        // 0xffffffff becomes 2^32.
        assert_eq!(seed(0x0100_0001).0, u64::from(16_777_218f32.to_bits()));
        assert_eq!(seed(u32::MAX).0, u64::from(4_294_967_296f32.to_bits()));
        // 1/0 is +Inf; its biased bits are a negative float, which F2I.U32 saturates to 0.
        assert_eq!(seed(0), (0, 0x7f80_0000, 0x8f7f_fffe, 0));
        // 1/1 = 1.0 (0x3f800000); biased, 2^32 minus two ulps (0x4f7ffffe = 4294966784).
        assert_eq!(
            seed(1),
            (0x3f80_0000, 0x3f80_0000, 0x4f7f_fffe, 0xffff_fe00)
        );
        // F2I.FTZ.U32.TRUNC.NTZ: NaN to 0, saturation, truncation.
        let f2i =
            |bits: u32| convert::convert(Ty::U32, Ty::F32, Round::Zero, true, u64::from(bits));
        assert_eq!(f2i(f32::NAN.to_bits()), 0);
        assert_eq!(f2i(f32::INFINITY.to_bits()), u64::from(u32::MAX));
        assert_eq!(f2i((-1.5f32).to_bits()), 0);
        assert_eq!(f2i(4_294_967_040f32.to_bits()), 0xffff_ff00);
        assert_eq!(f2i(2.999_999_8f32.to_bits()), 2);
    }

    #[test]
    fn the_seed_never_exceeds_two_to_the_32_over_d() {
        // The module docs' premise for the correctly rounded reciprocal: q0 <= 2^32 / d, and
        // short of it by at most 1 (the truncation) plus a relative 2^-21.
        let mut divisors: Vec<u32> = (1..=4096).collect();
        for k in 0..32 {
            let p = 1u32 << k;
            divisors.extend([p - 1, p, p.wrapping_add(1), p | (p >> 1)]);
        }
        let mut state = 0x1234_5678_9abc_def0u64;
        for _ in 0..200_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            divisors.push(((state >> 32) as u32) >> (state % 32));
        }
        for d in divisors.into_iter().filter(|&d| d != 0) {
            let q0 = u64::from(seed(d).3);
            let product = q0 * u64::from(d);
            assert!(product <= 1 << 32, "d = {d:#x}: q0 = {q0:#x} overshoots");
            // 2^32/d - q0 <= 1 + 2^-21 * 2^32/d, multiplied by d.
            assert!(
                (1u64 << 32) - product <= u64::from(d) + (1 << 11),
                "d = {d:#x}: q0 = {q0:#x} is too far below 2^32/d"
            );
        }
    }
}
