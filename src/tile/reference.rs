//! The reference implementation: the same validation as the engine, then one plain Rust loop
//! over the result's elements in C order, each element one compare-and-swap loop on
//! `std::sync::atomic` with the new value computed by [`rmw_bits`]. Clear rather than fast; the
//! compiled path is tested against it.

use super::{
    for_each_coord, index_as_u64, prepare_cas, prepare_rmw, read_bits, ArrayView, DType, Input,
    Kind, Operand, Options, Prepared, RmwOp, Tile, TileError,
};
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, Ordering::SeqCst};

/// [`super::TileEngine::atomic_cas`], by the reference loop.
pub fn atomic_cas(
    array: &ArrayView,
    indices: &[Operand],
    expected: &Operand,
    desired: &Operand,
    opts: &Options,
) -> Result<Tile, TileError> {
    Ok(run(&prepare_cas(array, indices, expected, desired, opts)?))
}

/// [`super::TileEngine::atomic_rmw`], by the reference loop.
pub fn atomic_rmw(
    op: RmwOp,
    array: &ArrayView,
    indices: &[Operand],
    update: &Operand,
    opts: &Options,
) -> Result<Tile, TileError> {
    Ok(run(&prepare_rmw(op, array, indices, update, opts)?))
}

fn element(input: &Input, coord: &[usize]) -> u64 {
    let off: i64 = coord
        .iter()
        .zip(&input.strides)
        .map(|(&c, &s)| c as i64 * s)
        .sum();
    // SAFETY: inputs come from views (whose contract makes every element readable) or owned
    // one-element buffers read with zero strides.
    unsafe { read_bits(input.ptr.offset(off as isize), input.dtype) }
}

fn run(p: &Prepared) -> Tile {
    let mut out = Tile::zeros(p.dtype, &p.shape);
    let mut results = vec![0u64; p.len()];
    for_each_coord(&p.shape, |i, coord| {
        let vals: Vec<u64> = p.values.iter().map(|v| element(v, coord)).collect();
        let mut offset: i64 = 0;
        let mut in_bounds = true;
        for (dim, ind) in p.indices.iter().enumerate() {
            let idx = index_as_u64(ind.dtype, element(ind, coord));
            if idx >= p.array_shape[dim] {
                in_bounds = false;
            } else {
                offset += idx as i64 * p.array_strides[dim];
            }
        }
        results[i] = if !in_bounds {
            match p.kind {
                Kind::Cas => vals[0],
                Kind::Rmw(_) => 0,
            }
        } else {
            // SAFETY: every index is inside its dimension, so the element is part of the array,
            // valid and accessed only atomically (`ArrayView`'s contract); aligned (checked).
            let ptr = unsafe { p.base.offset(offset as isize) };
            // SAFETY: as above.
            unsafe {
                atomic_update(ptr, p.dtype, |old| match p.kind {
                    Kind::Cas => (old == vals[0]).then_some(vals[1]),
                    Kind::Rmw(op) => Some(rmw_bits(op, p.dtype, old, vals[0])),
                })
            }
        };
    });
    for (i, r) in results.into_iter().enumerate() {
        out.set_bits(i, r);
    }
    out
}

/// Atomically replaces the element at `ptr` by `f(old)` (when `Some`), returning `old`.
///
/// # Safety
/// `ptr` must be valid, aligned for `dtype` and accessed by others only atomically.
unsafe fn atomic_update(ptr: *mut u8, dtype: DType, f: impl Fn(u64) -> Option<u64>) -> u64 {
    macro_rules! cas_loop {
        ($atomic:ty, $t:ty) => {{
            // SAFETY: the caller's contract.
            let a = unsafe { <$atomic>::from_ptr(ptr.cast()) };
            let mut old = a.load(SeqCst);
            loop {
                let Some(new) = f(old as u64) else {
                    break old as u64;
                };
                match a.compare_exchange(old, new as $t, SeqCst, SeqCst) {
                    Ok(_) => break old as u64,
                    Err(now) => old = now,
                }
            }
        }};
    }
    match dtype.size() {
        2 => cas_loop!(AtomicU16, u16),
        4 => cas_loop!(AtomicU32, u32),
        8 => cas_loop!(AtomicU64, u64),
        _ => unreachable!("no atomic accepts 1-byte dtypes"),
    }
}

/// The new bit pattern of an element of `dtype` holding `old` after `op` with `upd`.
/// Integer add wraps; float add is IEEE round-to-nearest-even in the element's format
/// (16-bit floats are added in f32 and rounded once more, which is exact: f32 has more than
/// 2p+2 significant bits for p = 11 and p = 8); min/max compare signed or unsigned by dtype.
pub fn rmw_bits(op: RmwOp, dtype: DType, old: u64, upd: u64) -> u64 {
    let mask = if dtype.size() == 8 {
        u64::MAX
    } else {
        (1u64 << (dtype.size() * 8)) - 1
    };
    let sx = |v: u64| -> i64 {
        let sh = 64 - dtype.size() as u32 * 8;
        ((v << sh) as i64) >> sh
    };
    let r = match op {
        RmwOp::Xchg => upd,
        RmwOp::Add => match dtype {
            DType::Float32 => {
                (f32::from_bits(old as u32) + f32::from_bits(upd as u32)).to_bits() as u64
            }
            DType::Float64 => (f64::from_bits(old) + f64::from_bits(upd)).to_bits(),
            DType::Float16 => add_f16_bits(old as u32, upd as u32) as u64,
            DType::BFloat16 => add_bf16_bits(old as u32, upd as u32) as u64,
            _ => old.wrapping_add(upd),
        },
        RmwOp::Min if dtype.is_signed() => {
            if sx(upd) < sx(old) {
                upd
            } else {
                old
            }
        }
        RmwOp::Max if dtype.is_signed() => {
            if sx(upd) > sx(old) {
                upd
            } else {
                old
            }
        }
        RmwOp::Min => old.min(upd),
        RmwOp::Max => old.max(upd),
        RmwOp::And => old & upd,
        RmwOp::Or => old | upd,
        RmwOp::Xor => old ^ upd,
    };
    r & mask
}

/// float16 add on bit patterns (in f32, rounded once to float16; see [`rmw_bits`]). Called by
/// compiled code inside its CAS loop.
pub(crate) extern "C" fn add_f16_bits(old: u32, upd: u32) -> u32 {
    let a = half::f16::from_bits(old as u16).to_f32();
    let b = half::f16::from_bits(upd as u16).to_f32();
    half::f16::from_f32(a + b).to_bits() as u32
}

/// bfloat16 add on bit patterns, as [`add_f16_bits`].
pub(crate) extern "C" fn add_bf16_bits(old: u32, upd: u32) -> u32 {
    let a = half::bf16::from_bits(old as u16).to_f32();
    let b = half::bf16::from_bits(upd as u16).to_f32();
    half::bf16::from_f32(a + b).to_bits() as u32
}
