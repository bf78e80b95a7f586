//! Warp-collective ops ([`crate::ir::Op::Shfl`], `Redux`, `Match`) as pure functions of lane
//! ids, masks and values: the one statement of their semantics the interpreter and the JIT
//! both call.

use crate::ir::{BinOp, ShflMode, Ty};

/// The source lane of [`crate::ir::Op::Shfl`] for lane `lane`, and whether it is in range
/// (the PTX ISA's `shfl.sync` pseudo-code; `lane` itself when not).
pub fn shfl_source(mode: ShflMode, lane: u32, b: u32, c: u32) -> (u32, bool) {
    let lane = (lane & 31) as i32;
    let bval = (b & 31) as i32;
    let cval = (c & 31) as i32;
    let segmask = (c >> 8 & 31) as i32;
    let max_lane = (lane & segmask) | (cval & !segmask);
    let min_lane = lane & segmask;
    let (j, valid) = match mode {
        ShflMode::Up => {
            let j = lane - bval;
            (j, j >= max_lane)
        }
        ShflMode::Down => {
            let j = lane + bval;
            (j, j <= max_lane)
        }
        ShflMode::Bfly => {
            let j = lane ^ bval;
            (j, j <= max_lane)
        }
        ShflMode::Idx => {
            let j = min_lane | (bval & !segmask);
            (j, j <= max_lane)
        }
    };
    if valid {
        (j as u32, true)
    } else {
        (lane as u32, false)
    }
}

/// [`crate::ir::Op::Redux`]: `op` folded over `values` in `ty` (`U32` or `S32`). `values` is
/// never empty when a lane executes the op; an empty fold returns the op's identity.
pub fn redux(op: BinOp, ty: Ty, values: impl Iterator<Item = u32>) -> u32 {
    let signed = ty.is_signed_int();
    let fold = |acc: u32, v: u32| match op {
        BinOp::Min if signed => (acc as i32).min(v as i32) as u32,
        BinOp::Max if signed => (acc as i32).max(v as i32) as u32,
        BinOp::Min => acc.min(v),
        BinOp::Max => acc.max(v),
        BinOp::And => acc & v,
        BinOp::Or => acc | v,
        BinOp::Xor => acc ^ v,
        // `Add`; validation admits no other op.
        BinOp::Add
        | BinOp::Sub
        | BinOp::Mul
        | BinOp::MulHi
        | BinOp::MulWide
        | BinOp::Div
        | BinOp::Rem
        | BinOp::Shl
        | BinOp::Shr => acc.wrapping_add(v),
    };
    let identity = match op {
        BinOp::Min if signed => i32::MAX as u32,
        BinOp::Max if signed => i32::MIN as u32,
        BinOp::Min | BinOp::And => u32::MAX,
        BinOp::Add
        | BinOp::Sub
        | BinOp::Mul
        | BinOp::MulHi
        | BinOp::MulWide
        | BinOp::Div
        | BinOp::Rem
        | BinOp::Max
        | BinOp::Or
        | BinOp::Xor
        | BinOp::Shl
        | BinOp::Shr => 0,
    };
    values.fold(identity, fold)
}

/// The binary ops [`crate::ir::Op::Redux`] accepts.
pub const REDUX_OPS: &[BinOp] = &[
    BinOp::Add,
    BinOp::Min,
    BinOp::Max,
    BinOp::And,
    BinOp::Or,
    BinOp::Xor,
];

/// [`crate::ir::Op::Match`] for one lane: `(dst, dst_pred)` given this lane's value, the
/// executing lanes `exec` and each lane's value (`value_of(lane)` is only asked for lanes of
/// `exec`).
pub fn match_lanes(all: bool, own: u64, exec: u32, value_of: impl Fn(u32) -> u64) -> (u32, bool) {
    let same = (0..32)
        .filter(|&l| exec >> l & 1 == 1 && value_of(l) == own)
        .fold(0u32, |m, l| m | 1 << l);
    if all {
        let every = same == exec;
        (if every { exec } else { 0 }, every)
    } else {
        (same, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_modes_follow_the_ptx_pseudo_code() {
        // Full warp: c = 0x1f for idx/down/bfly, 0 for up (the forms CUDA's __shfl_*_sync use).
        assert_eq!(shfl_source(ShflMode::Idx, 5, 17, 0x1f), (17, true));
        assert_eq!(shfl_source(ShflMode::Idx, 5, 33, 0x1f), (1, true));
        assert_eq!(shfl_source(ShflMode::Down, 30, 4, 0x1f), (30, false));
        assert_eq!(shfl_source(ShflMode::Down, 3, 4, 0x1f), (7, true));
        assert_eq!(shfl_source(ShflMode::Up, 3, 4, 0), (3, false));
        assert_eq!(shfl_source(ShflMode::Up, 9, 4, 0), (5, true));
        assert_eq!(shfl_source(ShflMode::Bfly, 6, 1, 0x1f), (7, true));
        // Width 8 (__shfl_sync(m, v, src, 8) gives c = ((32-8)<<8) | 0x1f = 0x181f).
        assert_eq!(shfl_source(ShflMode::Idx, 13, 2, 0x181f), (10, true));
        assert_eq!(shfl_source(ShflMode::Down, 14, 2, 0x181f), (14, false));
        assert_eq!(shfl_source(ShflMode::Down, 13, 2, 0x181f), (15, true));
        // __shfl_up_sync with width 8: c = (32-8)<<8 = 0x1800.
        assert_eq!(shfl_source(ShflMode::Up, 9, 2, 0x1800), (9, false));
        assert_eq!(shfl_source(ShflMode::Up, 10, 2, 0x1800), (8, true));
    }

    #[test]
    fn redux_folds_with_signedness() {
        let v = [3u32, (-5i32) as u32, 7];
        assert_eq!(redux(BinOp::Add, Ty::U32, v.into_iter()), 5);
        assert_eq!(redux(BinOp::Min, Ty::S32, v.into_iter()), (-5i32) as u32);
        assert_eq!(redux(BinOp::Min, Ty::U32, v.into_iter()), 3);
        assert_eq!(redux(BinOp::Max, Ty::U32, v.into_iter()), (-5i32) as u32);
        assert_eq!(redux(BinOp::Max, Ty::S32, v.into_iter()), 7);
        assert_eq!(
            redux(BinOp::Xor, Ty::U32, v.into_iter()),
            3 ^ (-5i32) as u32 ^ 7
        );
        assert_eq!(redux(BinOp::And, Ty::U32, [].into_iter()), u32::MAX);
    }

    #[test]
    fn match_any_and_all() {
        let values = [1u64, 2, 1, 3];
        let exec = 0b1111;
        assert_eq!(
            match_lanes(false, 1, exec, |l| values[l as usize]),
            (0b0101, true)
        );
        assert_eq!(
            match_lanes(true, 1, exec, |l| values[l as usize]),
            (0, false)
        );
        assert_eq!(
            match_lanes(true, 1, 0b0101, |l| values[l as usize]),
            (0b0101, true)
        );
    }
}
