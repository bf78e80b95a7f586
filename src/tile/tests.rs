//! Unit tests of the tile atomics: the spec document's two examples, every rule of issue 13
//! part 2, every error path, and a differential proptest of the compiled path against the
//! reference.

use super::*;
use proptest::prelude::*;

fn eng() -> TileEngine {
    TileEngine::new(1)
}

fn opts() -> Options {
    Options::default()
}

fn arr<T: Element>(data: &mut [T]) -> ArrayView<'_> {
    let n = data.len() as u64;
    ArrayView::from_mut_slice(data, &[n]).unwrap()
}

/// Runs `f` on the engine (1 and 2 threads) and on the reference, with fresh copies of
/// `init`, and checks all three agree on the result and the final array; returns them.
fn both<T: Element + std::fmt::Debug>(
    init: &[T],
    shape: &[u64],
    f: impl Fn(Option<&TileEngine>, &ArrayView) -> Result<Tile, TileError>,
) -> Result<(Tile, Vec<T>), TileError> {
    let mut reference = init.to_vec();
    let want = f(
        None,
        &ArrayView::from_mut_slice(&mut reference, shape).unwrap(),
    );
    for threads in [1, 2] {
        let e = TileEngine::new(threads).with_parallel_threshold(1);
        let mut data = init.to_vec();
        let got = f(
            Some(&e),
            &ArrayView::from_mut_slice(&mut data, shape).unwrap(),
        );
        assert_eq!(
            got, want,
            "compiled ({threads} threads) vs reference result"
        );
        if want.is_ok() {
            let bits = |v: &[T]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(
                bits(&data),
                bits(&reference),
                "compiled ({threads} threads) vs reference array"
            );
        }
    }
    want.map(|t| (t, reference))
}

fn cas<'a>(
    e: Option<&TileEngine>,
    a: &ArrayView,
    idx: &[Operand<'a>],
    exp: &Operand<'a>,
    des: &Operand<'a>,
    o: &Options,
) -> Result<Tile, TileError> {
    match e {
        Some(e) => e.atomic_cas(a, idx, exp, des, o),
        None => reference::atomic_cas(a, idx, exp, des, o),
    }
}

fn rmw<'a>(
    e: Option<&TileEngine>,
    op: RmwOp,
    a: &ArrayView,
    idx: &[Operand<'a>],
    upd: &Operand<'a>,
    o: &Options,
) -> Result<Tile, TileError> {
    match e {
        Some(e) => e.atomic_rmw(op, a, idx, upd, o),
        None => reference::atomic_rmw(op, a, idx, upd, o),
    }
}

// ---- The document's examples ----

#[test]
fn doc_example_1d_arange32() {
    // indices = arange(32, int32); expected = full((32,), 1); desired = arange(32).
    let init: Vec<i32> = (0..32).map(|i| if i % 3 == 0 { 1 } else { 7 }).collect();
    let idx: Vec<i32> = (0..32).collect();
    let ones = vec![1i32; 32];
    let (old, after) = both(&init, &[32], |e, a| {
        cas(
            e,
            a,
            &[Operand::vec1(&idx)],
            &Operand::vec1(&ones),
            &Operand::vec1(&idx),
            &opts(),
        )
    })
    .unwrap();
    assert_eq!(old.shape, vec![32]);
    assert_eq!(old.dtype, DType::Int32);
    assert_eq!(old.to_vec::<i32>().unwrap(), init);
    let want: Vec<i32> = (0..32).map(|i| if i % 3 == 0 { i } else { 7 }).collect();
    assert_eq!(after, want);
}

#[test]
fn doc_example_2d_broadcast_indices() {
    // ind0: (M, N, 1), ind1: (M, 1, K), expected and desired: (N, K); result (M, N, K).
    let (m, n, k) = (2usize, 3usize, 4usize);
    let rows = 6u64;
    let cols = 5u64;
    let init: Vec<i64> = (0..rows * cols).map(|v| (v % 3) as i64).collect();
    let ind0: Vec<i64> = (0..m * n).map(|v| v as i64).collect(); // ind0[i, j, 0] = i*N + j
    let ind1: Vec<u32> = (0..m * k).map(|v| ((v * 3) % 5) as u32).collect(); // per (i, k)
    let expected: Vec<i64> = (0..n * k).map(|v| (v % 3) as i64).collect();
    let desired: Vec<i64> = (0..n * k).map(|v| 100 + v as i64).collect();
    let (old, after) = both(&init, &[rows, cols], |e, a| {
        cas(
            e,
            a,
            &[
                Operand::slice(&ind0, &[m, n, 1]).unwrap(),
                Operand::slice(&ind1, &[m, 1, k]).unwrap(),
            ],
            &Operand::slice(&expected, &[n, k]).unwrap(),
            &Operand::slice(&desired, &[n, k]).unwrap(),
            &opts(),
        )
    })
    .unwrap();
    assert_eq!(old.shape, vec![m, n, k]);
    // The document's pseudocode, run sequentially (with 0 <= k < K).
    let mut sim = init.clone();
    let mut want = vec![0i64; m * n * k];
    for i in 0..m {
        for j in 0..n {
            for kk in 0..k {
                let r = ind0[i * n + j] as usize;
                let c = ind1[i * k + kk] as usize;
                let actual = sim[r * cols as usize + c];
                if actual == expected[j * k + kk] {
                    sim[r * cols as usize + c] = desired[j * k + kk];
                }
                want[(i * n + j) * k + kk] = actual;
            }
        }
    }
    assert_eq!(old.to_vec::<i64>().unwrap(), want);
    assert_eq!(after, sim);
}

// ---- Rules ----

#[test]
fn bare_tile_and_scalar_indices() {
    let init = vec![10u32, 20, 30];
    let (old, after) = both(&init, &[3], |e, a| {
        rmw(
            e,
            RmwOp::Add,
            a,
            &[Operand::int(2)],
            &Operand::int(5),
            &opts(),
        )
    })
    .unwrap();
    assert_eq!(old.shape, Vec::<usize>::new());
    assert_eq!(old.to_vec::<u32>().unwrap(), vec![30]);
    assert_eq!(after, vec![10, 20, 35]);
}

#[test]
fn values_broadcast_to_index_shape() {
    // Index (2, 3); update (3,) and (1, 3) and a scalar all broadcast to it.
    let idx: Vec<i32> = vec![0, 1, 2, 3, 4, 5];
    let upd: Vec<i32> = vec![1, 10, 100];
    let init = vec![0i32; 6];
    for u in [Operand::vec1(&upd), Operand::slice(&upd, &[1, 3]).unwrap()] {
        let (_, after) = both(&init, &[6], |e, a| {
            rmw(
                e,
                RmwOp::Add,
                a,
                &[Operand::slice(&idx, &[2, 3]).unwrap()],
                &u,
                &opts(),
            )
        })
        .unwrap();
        assert_eq!(after, vec![1, 10, 100, 1, 10, 100]);
    }
}

#[test]
fn broadcast_errors_name_shapes_both_ways() {
    let mut data = vec![0i32; 8];
    let a = arr(&mut data);
    let i2: Vec<i32> = vec![0, 1];
    let i3: Vec<i32> = vec![0, 1, 2];
    let i23: Vec<i32> = vec![0; 6];
    // Index shapes (2,) and (3,) of a 2-d array do not broadcast.
    let mut d2 = vec![0i32; 16];
    let a2 = ArrayView::from_mut_slice(&mut d2, &[4, 4]).unwrap();
    let e = eng()
        .atomic_add(
            &a2,
            &[Operand::vec1(&i2), Operand::vec1(&i3)],
            &Operand::int(1),
            &opts(),
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "atomic_add: index shapes (2,), (3,) are not broadcastable to a common shape"
    );
    // An update of shape (3,) does not broadcast to the index shape (2,).
    let e = eng()
        .atomic_add(&a, &[Operand::vec1(&i2)], &Operand::vec1(&i3), &opts())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "atomic_add: Update shape (3,) is not broadcastable to the index shape (2,)"
    );
    // One way only: an expected of shape (2, 3) does not broadcast *to* the index shape (3,)
    // even though the two shapes broadcast together.
    let e = eng()
        .atomic_cas(
            &a,
            &[Operand::vec1(&i3)],
            &Operand::slice(&i23, &[2, 3]).unwrap(),
            &Operand::int(0),
            &opts(),
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "atomic_cas: Expected value shape (2, 3) is not broadcastable to the index shape (3,)"
    );
    let e = eng()
        .atomic_cas(
            &a,
            &[Operand::vec1(&i3)],
            &Operand::int(0),
            &Operand::slice(&i23, &[2, 3]).unwrap(),
            &opts(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("Desired value shape (2, 3)"), "{e}");
}

#[test]
fn rank_mismatch_is_an_error() {
    let mut d = vec![0i32; 16];
    let a = ArrayView::from_mut_slice(&mut d, &[4, 4]).unwrap();
    let i: Vec<i32> = vec![0, 1];
    let e = eng()
        .atomic_add(&a, &[Operand::vec1(&i)], &Operand::int(1), &opts())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "atomic_add: for an array of rank 2, `indices` must be a tuple of length 2; got 1 index operand(s)"
    );
    let mut d1 = vec![0i32; 4];
    let a1 = arr(&mut d1);
    let e = eng()
        .atomic_add(
            &a1,
            &[Operand::vec1(&i), Operand::vec1(&i)],
            &Operand::int(1),
            &opts(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("(or a single tile)"), "{e}");
}

#[test]
fn out_of_bounds_cas_returns_expected_and_touches_nothing() {
    // A 2-wide view in the middle of a guarded buffer; indices -1, 2 and 1<<40 are out.
    let mut buf = vec![5i64; 6];
    let base = buf[2..].as_mut_ptr();
    // SAFETY: elements 2 and 3 of `buf` are valid and only used through this view.
    let a = unsafe { ArrayView::from_raw(base.cast(), DType::Int64, &[2], &[8]) }.unwrap();
    let idx: Vec<i64> = vec![-1, 0, 2, 1 << 40, 1];
    let exp: Vec<i64> = vec![11, 5, 33, 44, 9];
    let old = eng()
        .atomic_cas(
            &a,
            &[Operand::vec1(&idx)],
            &Operand::vec1(&exp),
            &Operand::int(7),
            &opts(),
        )
        .unwrap();
    assert_eq!(old.to_vec::<i64>().unwrap(), vec![11, 5, 33, 44, 5]);
    assert_eq!(buf, vec![5, 5, 7, 5, 5, 5]);
}

#[test]
fn bounds_are_per_dimension_on_the_index_as_u64_at_the_edges() {
    // A 2×3 array: the last in-bounds index of each dimension is shape − 1; shape itself,
    // 2^63 and u64::MAX (as unsigned indices) and −1 (signed, so 2^64 − 1 as u64) are out.
    let init: Vec<i32> = (0..6).collect();
    let rows: Vec<u64> = vec![1, 2, 1 << 63, u64::MAX, 0, 1];
    let cols: Vec<i64> = vec![2, 0, 0, 0, -1, 3];
    let (old, after) = both(&init, &[2, 3], |e, a| {
        cas(
            e,
            a,
            &[Operand::vec1(&rows), Operand::vec1(&cols)],
            &Operand::int(5),
            &Operand::int(-9),
            &opts(),
        )
    })
    .unwrap();
    // Only (1, 2) is in bounds; it held 5, so it became −9. The rest return `expected`.
    assert_eq!(old.to_vec::<i32>().unwrap(), vec![5, 5, 5, 5, 5, 5]);
    assert_eq!(after, vec![0, 1, 2, 3, 4, -9]);
    // With check_bounds = false, any of them is an error and nothing is written.
    let mut data = init.clone();
    let a = ArrayView::from_mut_slice(&mut data, &[2, 3]).unwrap();
    let unchecked = Options {
        check_bounds: false,
        ..opts()
    };
    for (r, c) in [(2u64, 0i64), (1 << 63, 0), (u64::MAX, 0), (0, -1), (1, 3)] {
        let (rr, cc) = ([1u64, r], [2i64, c]);
        let e = TileEngine::new(1)
            .atomic_cas(
                &a,
                &[Operand::vec1(&rr), Operand::vec1(&cc)],
                &Operand::int(5),
                &Operand::int(-9),
                &unchecked,
            )
            .unwrap_err();
        assert!(e.to_string().contains("bounds"), "{e}");
    }
    drop(a);
    assert_eq!(data, init);
}

#[test]
fn out_of_bounds_rmw_returns_zero() {
    let init = vec![3u64, 4];
    let idx: Vec<i8> = vec![-1, 1, 2, 0];
    for op in RmwOp::ALL {
        let (old, after) = both(&init, &[2], |e, a| {
            rmw(
                e,
                op,
                a,
                &[Operand::vec1(&idx)],
                &Operand::typed(6u64),
                &opts(),
            )
        })
        .unwrap();
        let got = old.to_vec::<u64>().unwrap();
        assert_eq!((got[0], got[2]), (0, 0), "{op:?}");
        assert_eq!(got[1], 4, "{op:?}");
        assert_eq!(
            after[1],
            reference::rmw_bits(op, DType::UInt64, 4, 6),
            "{op:?}"
        );
    }
}

#[test]
fn negative_index_is_out_of_bounds_per_dimension() {
    // Row -1 with a column that would make the flat offset land inside the array.
    let init = vec![0i32; 12];
    let r: Vec<i32> = vec![-1, 1];
    let c: Vec<i32> = vec![5, 1];
    let (old, after) = both(&init, &[3, 4], |e, a| {
        rmw(
            e,
            RmwOp::Add,
            a,
            &[Operand::vec1(&r), Operand::vec1(&c)],
            &Operand::int(1),
            &opts(),
        )
    })
    .unwrap();
    assert_eq!(old.to_vec::<i32>().unwrap(), vec![0, 0]);
    let mut want = vec![0; 12];
    want[5] = 1;
    assert_eq!(after, want);
}

#[test]
fn check_bounds_false_out_of_bounds_is_an_error_before_any_write() {
    let mut data = vec![0i32; 4];
    let idx: Vec<i32> = vec![0, 1, 4, 2];
    let o = Options {
        check_bounds: false,
        ..opts()
    };
    for e in [Some(eng()), None] {
        let a = arr(&mut data);
        let err = match &e {
            Some(e) => e.atomic_add(&a, &[Operand::vec1(&idx)], &Operand::int(1), &o),
            None => {
                reference::atomic_rmw(RmwOp::Add, &a, &[Operand::vec1(&idx)], &Operand::int(1), &o)
            }
        }
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "atomic_add: check_bounds=False but index 4 for dimension 0 of result element (2,) is out of bounds for array dimension of size 4 (nothing was written)"
        );
    }
    assert_eq!(data, vec![0, 0, 0, 0]);
    // Negative indices are reported as written.
    let neg: Vec<i64> = vec![-3];
    let err = eng()
        .atomic_add(
            &arr(&mut data),
            &[Operand::vec1(&neg)],
            &Operand::int(1),
            &o,
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("index -3 for dimension 0"),
        "{err}"
    );
    // In bounds: runs.
    let ok: Vec<i64> = vec![3, 3];
    eng()
        .atomic_add(&arr(&mut data), &[Operand::vec1(&ok)], &Operand::int(1), &o)
        .unwrap();
    assert_eq!(data, vec![0, 0, 0, 2]);
}

#[test]
fn strided_and_negative_stride_arrays() {
    // A 3x4 array stored column-major inside a buffer of 24 (every other element), walked
    // backwards along rows: element [i, j] at byte offset (2 - i)*... via negative strides.
    let mut buf = vec![0u32; 24];
    let idx_r: Vec<u8> = vec![0, 1, 2, 2];
    let idx_c: Vec<u8> = vec![0, 3, 1, 3];
    let upd: Vec<u32> = vec![1, 2, 3, 4];
    let base_elem = 4; // element [0, 0]
                       // [i, j] at base + (-2*i + 6*j) elements: rows go backwards in steps of 2, columns by 6.
    let offs = |i: usize, j: usize| (base_elem as isize - 2 * i as isize + 6 * j as isize) as usize;
    for e in [Some(eng()), None] {
        buf.iter_mut().for_each(|v| *v = 0);
        // SAFETY: offsets 4-2i+6j for i<3, j<4 lie in 0..=22 of `buf`, used only here.
        let a = unsafe {
            ArrayView::from_raw(
                buf[base_elem..].as_mut_ptr().cast(),
                DType::UInt32,
                &[3, 4],
                &[-8, 24],
            )
        }
        .unwrap();
        let idx = [Operand::vec1(&idx_r), Operand::vec1(&idx_c)];
        rmw(
            e.as_ref(),
            RmwOp::Add,
            &a,
            &idx,
            &Operand::vec1(&upd),
            &opts(),
        )
        .unwrap();
        let mut want = vec![0u32; 24];
        for t in 0..4 {
            want[offs(idx_r[t] as usize, idx_c[t] as usize)] += upd[t];
        }
        assert_eq!(buf, want);
    }
}

#[test]
fn strided_index_and_value_views() {
    // Index tile read backwards with a stride of 2, values broadcast with a zero stride.
    let idx_buf: Vec<i16> = vec![3, -9, 2, -9, 1, -9, 0];
    let idx = TileView::from_slice_strided(&idx_buf, 6, &[4], &[-2]).unwrap(); // 0, 1, 2, 3
    let val_buf: Vec<i32> = vec![7];
    let val = TileView::from_slice_strided(&val_buf, 0, &[4], &[0]).unwrap();
    let init = vec![1i32, 2, 3, 4];
    let (old, after) = both(&init, &[4], |e, a| {
        rmw(
            e,
            RmwOp::Xchg,
            a,
            &[Operand::View(idx.clone())],
            &Operand::View(val.clone()),
            &opts(),
        )
    })
    .unwrap();
    assert_eq!(old.to_vec::<i32>().unwrap(), vec![1, 2, 3, 4]);
    assert_eq!(after, vec![7; 4]);
    assert!(TileView::from_slice_strided(&idx_buf, 6, &[4], &[2]).is_err());
}

#[test]
fn float_cas_compares_bit_patterns() {
    let nan1 = f32::from_bits(0x7fc0_0001);
    let nan2 = f32::from_bits(0x7fc0_0002);
    let init = vec![nan1, 0.0f32, -0.0, nan1];
    let idx: Vec<i32> = vec![0, 1, 2, 3];
    let exp = vec![nan2, -0.0f32, -0.0, nan1];
    let (old, after) = both(&init, &[4], |e, a| {
        cas(
            e,
            a,
            &[Operand::vec1(&idx)],
            &Operand::vec1(&exp),
            &Operand::float(9.0),
            &opts(),
        )
    })
    .unwrap();
    let bits: Vec<u32> = old
        .to_vec::<f32>()
        .unwrap()
        .iter()
        .map(|f| f.to_bits())
        .collect();
    assert_eq!(bits, vec![nan1.to_bits(), 0, 0x8000_0000, nan1.to_bits()]);
    let after_bits: Vec<u32> = after.iter().map(|f| f.to_bits()).collect();
    // Different NaN payloads differ; +0.0 and -0.0 differ; -0.0 and the same NaN match.
    assert_eq!(
        after_bits,
        vec![nan1.to_bits(), 0, 9f32.to_bits(), 9f32.to_bits()]
    );
}

#[test]
fn duplicate_indices_all_take_effect() {
    let idx: Vec<u64> = vec![1; 1000];
    // Single-threaded, in C order: old values 0, 1, ..., 999 exactly, as the reference.
    for e in [Some(eng()), None] {
        let mut data = vec![0i64; 3];
        let old = rmw(
            e.as_ref(),
            RmwOp::Add,
            &arr(&mut data),
            &[Operand::vec1(&idx)],
            &Operand::int(1),
            &opts(),
        )
        .unwrap();
        assert_eq!(old.to_vec::<i64>().unwrap(), (0..1000).collect::<Vec<_>>());
        assert_eq!(data, vec![0, 1000, 0]);
    }
    // Split across threads: none is lost.
    let e = TileEngine::new(2).with_parallel_threshold(1);
    let mut data = vec![0i64; 3];
    let old = e
        .atomic_add(
            &arr(&mut data),
            &[Operand::vec1(&idx)],
            &Operand::int(1),
            &opts(),
        )
        .unwrap();
    let mut got = old.to_vec::<i64>().unwrap();
    got.sort();
    assert_eq!(got, (0..1000).collect::<Vec<_>>());
    assert_eq!(data, vec![0, 1000, 0]);
    // Duplicate CAS: exactly one of the equal elements wins.
    let mut data = vec![0u32; 1];
    let idx0 = vec![0u32; 64];
    let des: Vec<u32> = (1..=64).collect();
    let old = e
        .atomic_cas(
            &arr(&mut data),
            &[Operand::vec1(&idx0)],
            &Operand::int(0),
            &Operand::vec1(&des),
            &opts(),
        )
        .unwrap();
    let old = old.to_vec::<u32>().unwrap();
    let winners: Vec<usize> = (0..64).filter(|&i| old[i] == 0).collect();
    assert_eq!(winners.len(), 1);
    assert_eq!(data[0], des[winners[0]]);
    assert!(old.iter().all(|&o| o == 0 || o == data[0]));
}

#[test]
fn contended_add_old_values_are_a_permutation() {
    // 4 callers x 2 engine threads, N = 4 x 20000 adds of 1 on one element.
    let e = TileEngine::new(2).with_parallel_threshold(1000);
    let mut cell = vec![0u64; 1];
    let a = arr(&mut cell);
    let idx = vec![0i32; 20000];
    let mut all: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| {
                s.spawn(|| {
                    e.atomic_add(&a, &[Operand::vec1(&idx)], &Operand::int(1), &opts())
                        .unwrap()
                })
            })
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().unwrap().to_vec::<u64>().unwrap())
            .collect()
    });
    drop(a);
    all.sort();
    assert_eq!(all, (0..80000).collect::<Vec<u64>>());
    assert_eq!(cell[0], 80000);
}

#[test]
fn each_rmw_op_on_signed_unsigned_and_float() {
    // Signed min/max compare as signed, unsigned as unsigned; integer add wraps.
    let idx: Vec<i32> = vec![0, 1];
    type OpCase = (RmwOp, Vec<i32>, Vec<i32>, Vec<i32>);
    let cases: Vec<OpCase> = vec![
        (RmwOp::Min, vec![5, -5], vec![-7, 3], vec![-7, -5]),
        (RmwOp::Max, vec![5, -5], vec![-7, 3], vec![5, 3]),
        (RmwOp::Add, vec![i32::MAX, 1], vec![1, 2], vec![i32::MIN, 3]),
        (
            RmwOp::And,
            vec![0b1100, -1],
            vec![0b1010, 7],
            vec![0b1000, 7],
        ),
        (RmwOp::Or, vec![0b1100, 0], vec![0b1010, 7], vec![0b1110, 7]),
        (
            RmwOp::Xor,
            vec![0b1100, -1],
            vec![0b1010, 7],
            vec![0b0110, -8],
        ),
        (RmwOp::Xchg, vec![1, 2], vec![3, 4], vec![3, 4]),
    ];
    for (op, init, upd, want) in cases {
        let (old, after) = both(&init, &[2], |e, a| {
            rmw(
                e,
                op,
                a,
                &[Operand::vec1(&idx)],
                &Operand::vec1(&upd),
                &opts(),
            )
        })
        .unwrap();
        assert_eq!(old.to_vec::<i32>().unwrap(), init, "{op:?}");
        assert_eq!(after, want, "{op:?}");
    }
    let init = vec![5u32, u32::MAX];
    let upd = vec![u32::MAX, 1u32];
    let (_, after) = both(&init, &[2], |e, a| {
        rmw(
            e,
            RmwOp::Min,
            a,
            &[Operand::vec1(&idx)],
            &Operand::vec1(&upd),
            &opts(),
        )
    })
    .unwrap();
    assert_eq!(after, vec![5, 1]);
    let (_, after) = both(&init, &[2], |e, a| {
        rmw(
            e,
            RmwOp::Max,
            a,
            &[Operand::vec1(&idx)],
            &Operand::vec1(&upd),
            &opts(),
        )
    })
    .unwrap();
    assert_eq!(after, vec![u32::MAX, u32::MAX]);
    // Float adds, every float dtype.
    let (_, after) = both(&[1.5f64, -0.0], &[2], |e, a| {
        rmw(
            e,
            RmwOp::Add,
            a,
            &[Operand::vec1(&idx)],
            &Operand::float(0.25),
            &opts(),
        )
    })
    .unwrap();
    assert_eq!(after, vec![1.75, 0.25]);
    let (_, after) = both(&[1.5f32, 1e30], &[2], |e, a| {
        rmw(
            e,
            RmwOp::Add,
            a,
            &[Operand::vec1(&idx)],
            &Operand::float(1e30),
            &opts(),
        )
    })
    .unwrap();
    assert_eq!(after, vec![1e30f32 + 1.5, 2e30]);
    let h = half::f16::from_f32;
    let (old, after) = both(&[h(1.0), h(65504.0)], &[2], |e, a| {
        rmw(
            e,
            RmwOp::Add,
            a,
            &[Operand::vec1(&idx)],
            &Operand::float(0.5),
            &opts(),
        )
    })
    .unwrap();
    assert_eq!(old.to_vec::<half::f16>().unwrap(), vec![h(1.0), h(65504.0)]);
    assert_eq!(after, vec![h(1.5), h(65504.0)]); // 65504.5 rounds back to 65504
    let bf = half::bf16::from_f32;
    let (_, after) = both(&[bf(256.0), bf(1.0)], &[2], |e, a| {
        rmw(
            e,
            RmwOp::Add,
            a,
            &[Operand::vec1(&idx)],
            &Operand::float(1.0),
            &opts(),
        )
    })
    .unwrap();
    assert_eq!(after, vec![bf(256.0), bf(2.0)]); // 257 is a tie in bfloat16: to even
}

#[test]
fn dtype_tables_per_op() {
    // Which array dtypes each op accepts: cuTile's tables, nothing more.
    for dtype in DType::ALL {
        let mut buf = vec![0u64; 1];
        // SAFETY: one 8-byte element, used only here; every dtype fits and is aligned.
        let a = unsafe { ArrayView::from_raw(buf.as_mut_ptr().cast(), dtype, &[1], &[8]) }.unwrap();
        let idx = [Operand::int(0)];
        let r = eng().atomic_cas(&a, &idx, &Operand::int(0), &Operand::int(0), &opts());
        assert_eq!(r.is_ok(), CAS_DTYPES.contains(&dtype), "cas {dtype}: {r:?}");
        for op in RmwOp::ALL {
            let upd = if dtype.is_float() {
                Operand::float(1.0)
            } else {
                Operand::Scalar(ScalarValue::Bool(true))
            };
            let upd = if op.is_bitwise() && dtype.is_integer() {
                Operand::Tile(Tile::zeros(dtype, &[]))
            } else {
                upd
            };
            let r = eng().atomic_rmw(op, &a, &idx, &upd, &opts());
            let accepted = !matches!(r, Err(TileError::UnsupportedDType { .. }));
            assert_eq!(
                accepted,
                op.dtypes().contains(&dtype),
                "{op:?} {dtype}: {r:?}"
            );
        }
    }
    let mut d = vec![0f32; 2];
    let e = eng()
        .atomic_min(
            &arr(&mut d),
            &[Operand::int(0)],
            &Operand::float(1.0),
            &opts(),
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "atomic_min: unsupported array dtype float32 (cuTile's atomic_min accepts int32, int64, uint32, uint64)"
    );
    let mut h = vec![half::f16::ZERO; 2];
    let e = eng()
        .atomic_cas(
            &arr(&mut h),
            &[Operand::int(0)],
            &Operand::float(0.0),
            &Operand::float(1.0),
            &opts(),
        )
        .unwrap_err();
    assert!(
        e.to_string().contains("unsupported array dtype float16"),
        "{e}"
    );
}

#[test]
fn implicit_casts_follow_cutile() {
    let idx = [Operand::int(0)];
    let mut d64 = vec![0i64; 1];
    let mut d32 = vec![0i32; 1];
    let mut df32 = vec![0f32; 1];
    let mut du32 = vec![0u32; 1];
    // Tiles: widening within a category and into a stronger category is fine.
    assert!(eng()
        .atomic_add(&arr(&mut d64), &idx, &Operand::typed(5i32), &opts())
        .is_ok());
    assert_eq!(d64, vec![5]);
    assert!(eng()
        .atomic_add(&arr(&mut df32), &idx, &Operand::typed(3i64), &opts())
        .is_ok());
    assert_eq!(df32, vec![3.0]);
    // Narrowing, signed <-> unsigned, float into int: refused.
    let e = eng()
        .atomic_add(&arr(&mut d32), &idx, &Operand::typed(5i64), &opts())
        .unwrap_err();
    assert_eq!(e.to_string(), "atomic_add: Update is incompatible with the target dtype: cannot implicitly cast int64 to int32");
    assert!(eng()
        .atomic_add(&arr(&mut d64), &idx, &Operand::typed(5u32), &opts())
        .is_err());
    assert!(eng()
        .atomic_add(&arr(&mut df32), &idx, &Operand::typed(1f64), &opts())
        .is_err());
    assert!(eng()
        .atomic_xchg(&arr(&mut d32), &idx, &Operand::typed(1f32), &opts())
        .is_err());
    // Constants: category may not be stronger, integers must fit.
    let e = eng()
        .atomic_add(&arr(&mut d32), &idx, &Operand::float(1.5), &opts())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Update is incompatible with the target dtype: cannot implicitly cast 1.5 to int32"
    );
    let e = eng()
        .atomic_add(&arr(&mut d32), &idx, &Operand::int(1 << 31), &opts())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Update is incompatible with the target dtype: 2147483648 is out of range of int32"
    );
    assert!(eng()
        .atomic_add(&arr(&mut du32), &idx, &Operand::int(-1), &opts())
        .is_err());
    assert!(eng()
        .atomic_add(
            &arr(&mut du32),
            &idx,
            &Operand::int(u32::MAX as i128),
            &opts()
        )
        .is_ok());
    assert!(eng()
        .atomic_add(&arr(&mut d64), &idx, &Operand::int(1 << 64), &opts())
        .is_err());
    // CAS casts expected and desired the same way.
    let mut df64 = vec![2.0f64];
    let old = eng()
        .atomic_cas(
            &arr(&mut df64),
            &idx,
            &Operand::int(2),
            &Operand::typed(7i32),
            &opts(),
        )
        .unwrap();
    assert_eq!(old.to_vec::<f64>().unwrap(), vec![2.0]);
    assert_eq!(df64, vec![7.0]);
    // Bitwise ops: the update dtype must equal the array's; a constant has its default dtype
    // (int32 if it fits), so it works on int32 arrays only.
    assert!(eng()
        .atomic_or(&arr(&mut d32), &idx, &Operand::int(6), &opts())
        .is_ok());
    assert_eq!(d32, vec![6]);
    let e = eng()
        .atomic_or(&arr(&mut d64), &idx, &Operand::int(6), &opts())
        .unwrap_err();
    assert_eq!(e.to_string(), "atomic_or: bitwise atomic read-modify-write operations require the update dtype (int32) to exactly match the target dtype (int64)");
    assert!(eng()
        .atomic_and(&arr(&mut d64), &idx, &Operand::typed(6i32), &opts())
        .is_err());
    assert!(eng()
        .atomic_xor(&arr(&mut d64), &idx, &Operand::typed(6i64), &opts())
        .is_ok());
}

#[test]
fn non_integer_indices_are_errors() {
    let mut d = vec![0i32; 4];
    let fidx = vec![0.0f32];
    let e = eng()
        .atomic_add(
            &arr(&mut d),
            &[Operand::vec1(&fidx)],
            &Operand::int(1),
            &opts(),
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "atomic_add: index 0 has non-integer data type float32"
    );
    let e = eng()
        .atomic_add(
            &arr(&mut d),
            &[Operand::float(1.0)],
            &Operand::int(1),
            &opts(),
        )
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("non-integer data type float32 (constant 1.0)"),
        "{e}"
    );
    let bidx = vec![true];
    assert!(eng()
        .atomic_add(
            &arr(&mut d),
            &[Operand::vec1(&bidx)],
            &Operand::int(1),
            &opts()
        )
        .is_err());
    // Every integer dtype is accepted, unsigned ones too.
    let u: Vec<u16> = vec![3];
    eng()
        .atomic_add(
            &arr(&mut d),
            &[Operand::vec1(&u)],
            &Operand::int(1),
            &opts(),
        )
        .unwrap();
    assert_eq!(d, vec![0, 0, 0, 1]);
}

#[test]
fn orders_and_scopes() {
    let mut d = vec![0i32; 1];
    let idx = [Operand::int(0)];
    for order in [
        MemoryOrder::Relaxed,
        MemoryOrder::Acquire,
        MemoryOrder::Release,
        MemoryOrder::AcqRel,
    ] {
        for scope in [MemoryScope::Block, MemoryScope::Device, MemoryScope::System] {
            let o = Options {
                memory_order: order,
                memory_scope: Some(scope),
                ..opts()
            };
            eng()
                .atomic_add(&arr(&mut d), &idx, &Operand::int(1), &o)
                .unwrap();
        }
    }
    assert_eq!(d, vec![12]);
    let weak = Options {
        memory_order: MemoryOrder::Weak,
        memory_scope: None,
        ..opts()
    };
    let e = eng()
        .atomic_add(&arr(&mut d), &idx, &Operand::int(1), &weak)
        .unwrap_err();
    assert_eq!(e.to_string(), "atomic_add: invalid memory order MemoryOrder.WEAK, expected one of MemoryOrder.RELAXED, MemoryOrder.ACQUIRE, MemoryOrder.RELEASE, MemoryOrder.ACQ_REL");
    let none = Options {
        memory_scope: None,
        ..opts()
    };
    let e = eng()
        .atomic_cas(
            &arr(&mut d),
            &idx,
            &Operand::int(0),
            &Operand::int(1),
            &none,
        )
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "atomic_cas: MemoryOrder.ACQ_REL memory ordering requires a memory scope"
    );
    let cluster = Options {
        memory_scope: Some(MemoryScope::Cluster),
        ..opts()
    };
    let e = eng()
        .atomic_xchg(&arr(&mut d), &idx, &Operand::int(0), &cluster)
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("invalid memory scope MemoryScope.CLUSTER"),
        "{e}"
    );
    assert_eq!(d, vec![12]);
    assert_eq!(
        Options::default(),
        Options {
            check_bounds: true,
            memory_order: MemoryOrder::AcqRel,
            memory_scope: Some(MemoryScope::Device)
        }
    );
}

#[test]
fn misaligned_views_are_refused() {
    let mut buf = vec![0u64; 4];
    let p = buf.as_mut_ptr().cast::<u8>();
    // SAFETY: these constructors only check the layout here (they fail before any use).
    unsafe {
        let e = ArrayView::from_raw(p.add(2), DType::Int32, &[2], &[4]).unwrap_err();
        assert!(
            e.to_string()
                .contains("not aligned to its int32 element size (4 bytes)"),
            "{e}"
        );
        let e = ArrayView::from_raw(p, DType::Int64, &[2], &[12]).unwrap_err();
        assert!(
            e.to_string()
                .contains("stride 12 of dimension 0 is not a multiple"),
            "{e}"
        );
        assert!(ArrayView::from_raw(p, DType::Int64, &[2, 2], &[8]).is_err());
        assert!(TileView::from_raw(p.add(1), DType::Int16, &[1], &[2]).is_err());
    }
}

#[test]
fn huge_broadcast_result_is_refused() {
    let one = vec![0i32];
    let a = TileView::from_slice_strided(&one, 0, &[1 << 40, 1], &[0, 0]).unwrap();
    let b = TileView::from_slice_strided(&one, 0, &[1, 1 << 40], &[0, 0]).unwrap();
    let mut d = vec![0i32; 4];
    let a2 = ArrayView::from_mut_slice(&mut d, &[2, 2]).unwrap();
    let e = eng()
        .atomic_add(
            &a2,
            &[Operand::View(a), Operand::View(b)],
            &Operand::int(1),
            &opts(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("does not fit in memory"), "{e}");
}

#[test]
fn rank0_array_and_empty_tiles() {
    let init = vec![41i32];
    let (old, after) = both(&init, &[], |e, a| {
        rmw(e, RmwOp::Add, a, &[], &Operand::int(1), &opts())
    })
    .unwrap();
    assert_eq!(old.shape, Vec::<usize>::new());
    assert_eq!(old.to_vec::<i32>().unwrap(), vec![41]);
    assert_eq!(after, vec![42]);
    let none: Vec<i32> = vec![];
    let (old, after) = both(&[1i32, 2], &[2], |e, a| {
        rmw(
            e,
            RmwOp::Add,
            a,
            &[Operand::vec1(&none)],
            &Operand::int(1),
            &opts(),
        )
    })
    .unwrap();
    assert!(old.is_empty());
    assert_eq!(after, vec![1, 2]);
}

#[test]
fn each_call_shape_compiles_once() {
    let e = eng();
    let mut d = vec![0i32; 8];
    let i1: Vec<i32> = vec![0, 1, 2];
    let i2: Vec<i32> = vec![3, 4, 5];
    let u: Vec<i32> = vec![1, 2, 3];
    e.atomic_add(
        &arr(&mut d),
        &[Operand::vec1(&i1)],
        &Operand::vec1(&u),
        &opts(),
    )
    .unwrap();
    e.atomic_add(
        &arr(&mut d),
        &[Operand::vec1(&i2)],
        &Operand::vec1(&u),
        &opts(),
    )
    .unwrap();
    assert_eq!(e.compiled_shapes(), 1);
    // A broadcast update (zero stride) is another shape; so is another op or index dtype.
    e.atomic_add(
        &arr(&mut d),
        &[Operand::vec1(&i2)],
        &Operand::int(1),
        &opts(),
    )
    .unwrap();
    assert_eq!(e.compiled_shapes(), 2);
    e.atomic_max(
        &arr(&mut d),
        &[Operand::vec1(&i2)],
        &Operand::int(1),
        &opts(),
    )
    .unwrap();
    let i3: Vec<u8> = vec![7];
    e.atomic_max(
        &arr(&mut d),
        &[Operand::vec1(&i3)],
        &Operand::int(1),
        &opts(),
    )
    .unwrap();
    assert_eq!(e.compiled_shapes(), 4);
    e.atomic_max(
        &arr(&mut d),
        &[Operand::vec1(&i3)],
        &Operand::int(5),
        &opts(),
    )
    .unwrap();
    assert_eq!(e.compiled_shapes(), 4);
    assert_eq!(d, vec![1, 2, 3, 2, 3, 4, 0, 5]);
}

#[test]
fn large_tiles_split_across_threads() {
    let n = 1 << 16;
    let idx: Vec<u32> = (0..n as u32).collect();
    let init = vec![0u32; n];
    let (old, after) = both(&init, &[n as u64], |e, a| {
        rmw(
            e,
            RmwOp::Add,
            a,
            &[Operand::vec1(&idx)],
            &Operand::vec1(&idx),
            &opts(),
        )
    })
    .unwrap();
    assert_eq!(old.to_vec::<u32>().unwrap(), init);
    assert_eq!(after, idx);
}

// ---- Differential: compiled vs reference ----

#[derive(Debug, Clone)]
struct Case {
    kind: Kind,
    dtype: DType,
    array_shape: Vec<u64>,
    /// Array strides in elements (may be negative); the buffer is large enough.
    array_strides: Vec<i64>,
    /// Per index operand: dtype, shape (broadcastable to the result), values.
    indices: Vec<(DType, Vec<usize>, Vec<i64>)>,
    /// Per value operand: shape, dtype, raw values (small ints), or a scalar.
    values: Vec<(Option<Vec<usize>>, DType, Vec<i64>)>,
    init: Vec<i64>,
    check_bounds: bool,
}

fn sub_shape(result: &[usize], mask: u32, drop_lead: usize) -> Vec<usize> {
    result
        .iter()
        .enumerate()
        .skip(drop_lead.min(result.len()))
        .map(|(d, &n)| if mask & (1 << d) != 0 { 1 } else { n })
        .collect()
}

fn case() -> impl Strategy<Value = Case> {
    let kinds = prop_oneof![
        Just(Kind::Cas),
        Just(Kind::Rmw(RmwOp::Xchg)),
        Just(Kind::Rmw(RmwOp::Add)),
        Just(Kind::Rmw(RmwOp::Min)),
        Just(Kind::Rmw(RmwOp::Max)),
        Just(Kind::Rmw(RmwOp::And)),
        Just(Kind::Rmw(RmwOp::Or)),
        Just(Kind::Rmw(RmwOp::Xor)),
    ];
    (
        kinds,
        0usize..8,
        proptest::collection::vec(1u64..5, 1..4),
        proptest::collection::vec(prop_oneof![9 => 1usize..6, 1 => Just(0usize)], 0..4),
        any::<u64>(),
        any::<bool>(),
    )
        .prop_map(
            |(kind, dsel, array_shape, result_shape, seed, check_bounds)| {
                let supported: &[DType] = match kind {
                    Kind::Cas => CAS_DTYPES,
                    Kind::Rmw(op) => op.dtypes(),
                };
                let dtype = supported[dsel % supported.len()];
                let mut g = crate::exec::random::SplitMix64::new(seed);
                let mut pick = |lo: i128, hi: i128| g.next_in(lo, hi) as i64;
                let rank = array_shape.len();
                let array_strides: Vec<i64> = {
                    // C-order strides times a factor in {1, 2}, sign flipped at random.
                    let mut s = 1i64;
                    let mut out = vec![0; rank];
                    for d in (0..rank).rev() {
                        let f = pick(1, 3);
                        let sign = if pick(0, 2) == 0 { 1 } else { -1 };
                        out[d] = sign * s * f;
                        s *= array_shape[d] as i64 * f;
                    }
                    out
                };
                let int_dtypes = [
                    DType::Int8,
                    DType::Int16,
                    DType::Int32,
                    DType::Int64,
                    DType::UInt8,
                    DType::UInt16,
                    DType::UInt32,
                    DType::UInt64,
                ];
                let indices = (0..rank)
                    .map(|d| {
                        let it = int_dtypes[pick(0, 8) as usize];
                        // The first index often spans the whole result shape; masks set a
                        // dimension to 1 with probability 1/4; leading dimensions drop rarely.
                        let (mask, drop) = if d == 0 && pick(0, 2) == 0 {
                            (0, 0)
                        } else {
                            (pick(0, 16) & pick(0, 16), pick(0, 3) * pick(0, 2))
                        };
                        let shape = sub_shape(&result_shape, mask as u32, drop as usize);
                        let n: usize = shape.iter().product();
                        let negative = it.is_signed() && (check_bounds || pick(0, 8) == 0);
                        let lo = if negative { -1 } else { 0 };
                        let over = if check_bounds { 2 } else { pick(0, 8) / 7 };
                        let hi = array_shape[d] as i128 + over as i128;
                        let vals = (0..n).map(|_| pick(lo, hi)).collect();
                        (it, shape, vals)
                    })
                    .collect();
                let nvals = if kind == Kind::Cas { 2 } else { 1 };
                let values = (0..nvals)
                    .map(|_| {
                        let scalar = pick(0, 4) == 0;
                        let (mask, drop) = (pick(0, 16) & pick(0, 16), pick(0, 3) * pick(0, 2));
                        let shape =
                            (!scalar).then(|| sub_shape(&result_shape, mask as u32, drop as usize));
                        let n: usize = shape.as_ref().map_or(1, |s| s.iter().product());
                        let vals = (0..n).map(|_| pick(-3, 4)).collect();
                        (shape, dtype, vals)
                    })
                    .collect();
                let total: i64 = array_shape
                    .iter()
                    .zip(&array_strides)
                    .map(|(&n, &s)| (n as i64 - 1) * s.abs())
                    .sum::<i64>()
                    + 1;
                let init = (0..total).map(|_| pick(-3, 4)).collect();
                Case {
                    kind,
                    dtype,
                    array_shape,
                    array_strides,
                    indices,
                    values,
                    init,
                    check_bounds,
                }
            },
        )
}

fn num_bits(dtype: DType, v: i64) -> u64 {
    if dtype.is_float() {
        dtype::encode(dtype::Num::Float(v as f64 * 0.5), dtype)
    } else {
        dtype::encode(dtype::Num::Int(v as i128), dtype)
    }
}

fn run_case(c: &Case, engine: Option<&TileEngine>) -> (Result<Tile, TileError>, Vec<u64>) {
    let size = c.dtype.size();
    let mut buf = Tile::zeros(c.dtype, &[c.init.len()]);
    for (i, &v) in c.init.iter().enumerate() {
        buf.set_bits(i, num_bits(c.dtype, v));
    }
    // Element [0, ...] sits where every negative stride still stays inside the buffer.
    let origin: i64 = c
        .array_shape
        .iter()
        .zip(&c.array_strides)
        .filter(|(_, &s)| s < 0)
        .map(|(&n, &s)| (n as i64 - 1) * -s)
        .sum();
    let byte_strides: Vec<i64> = c.array_strides.iter().map(|&s| s * size as i64).collect();
    let idx_tiles: Vec<Tile> = c
        .indices
        .iter()
        .map(|(dt, shape, vals)| {
            let mut t = Tile::zeros(*dt, shape);
            for (i, &v) in vals.iter().enumerate() {
                t.set_bits(i, dtype::encode(dtype::Num::Int(v as i128), *dt));
            }
            t
        })
        .collect();
    let val_ops: Vec<Operand> = c
        .values
        .iter()
        .map(|(shape, dt, vals)| match shape {
            None if dt.is_float() => Operand::float(vals[0] as f64 * 0.5),
            None if c.kind == Kind::Rmw(RmwOp::And)
                || c.kind == Kind::Rmw(RmwOp::Or)
                || c.kind == Kind::Rmw(RmwOp::Xor) =>
            {
                let mut t = Tile::zeros(*dt, &[]);
                t.set_bits(0, num_bits(*dt, vals[0]));
                Operand::Tile(t)
            }
            None => Operand::int(if dt.is_signed() {
                vals[0] as i128
            } else {
                vals[0].unsigned_abs() as i128
            }),
            Some(shape) => {
                let mut t = Tile::zeros(*dt, shape);
                for (i, &v) in vals.iter().enumerate() {
                    t.set_bits(i, num_bits(*dt, v));
                }
                Operand::Tile(t)
            }
        })
        .collect();
    let idx_ops: Vec<Operand> = idx_tiles.iter().map(|t| Operand::View(t.view())).collect();
    let o = Options {
        check_bounds: c.check_bounds,
        ..opts()
    };
    let r = {
        // SAFETY: `origin` plus any in-bounds combination of strides stays inside `buf`
        // (built from the same strides), used only through this view.
        let a = unsafe {
            ArrayView::from_raw(
                buf.as_mut_ptr().add(origin as usize * size),
                c.dtype,
                &c.array_shape,
                &byte_strides,
            )
        }
        .unwrap();
        match c.kind {
            Kind::Cas => cas(engine, &a, &idx_ops, &val_ops[0], &val_ops[1], &o),
            Kind::Rmw(op) => rmw(engine, op, &a, &idx_ops, &val_ops[0], &o),
        }
    };
    (r, buf.bits_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]
    #[test]
    fn compiled_matches_reference(c in case()) {
        let e = TileEngine::new(1);
        let want = run_case(&c, None);
        let got = run_case(&c, Some(&e));
        prop_assert_eq!(&got.0, &want.0, "{:?}", c);
        prop_assert_eq!(&got.1, &want.1, "{:?}", c);
    }
}
