"""atomjit.tile: cuTile's bulk atomics on numpy arrays and device arrays. Expected values come
from the cuTile document's pseudocode and from sequential numpy models, not from atomjit."""

import numpy as np
import pytest

import atomjit
from atomjit.tile import (
    MemoryOrder,
    MemoryScope,
    atomic_add,
    atomic_and,
    atomic_cas,
    atomic_max,
    atomic_min,
    atomic_or,
    atomic_xchg,
    atomic_xor,
)


@pytest.fixture(params=[1, 2])
def eng(request):
    return atomjit.Engine(threads=request.param)


def test_the_documents_1d_example(eng):
    # indices = arange(32), expected = full(32, 1), desired = arange(32).
    array = np.array([1, 0, 1, 5] * 8, dtype=np.int32)
    before = array.copy()
    indices = np.arange(32, dtype=np.int32)
    old = atomic_cas(array, indices, np.full((32,), 1, dtype=np.int32),
                     np.arange(32, dtype=np.int32), engine=eng)
    assert old.dtype == np.int32 and old.shape == (32,)
    np.testing.assert_array_equal(old, before)
    np.testing.assert_array_equal(array, np.where(before == 1, np.arange(32), before))


def test_the_documents_2d_example(eng):
    M, N, K = 3, 4, 5
    rng = np.random.default_rng(7)
    array = rng.integers(0, 3, size=(6, 7)).astype(np.int64)
    ind0 = rng.integers(-1, 7, size=(M, N, 1))      # some out of bounds (shape[0] = 6)
    ind1 = rng.integers(0, 8, size=(M, 1, K))       # some out of bounds (shape[1] = 7)
    expected = rng.integers(0, 3, size=(N, K)).astype(np.int64)
    desired = rng.integers(10, 20, size=(N, K)).astype(np.int64)
    model = array.copy()
    want = np.empty((M, N, K), dtype=np.int64)
    # The pseudocode, sequentially (no index repeats would make order matter here only
    # through earlier writes, which the sequential model reproduces for one thread).
    for i in range(M):
        for j in range(N):
            for k in range(K):
                a, b = ind0[i, j, 0], ind1[i, 0, k]
                if 0 <= a < 6 and 0 <= b < 7:
                    actual = model[a, b]
                    if actual == expected[j, k]:
                        model[a, b] = desired[j, k]
                    want[i, j, k] = actual
                else:
                    want[i, j, k] = expected[j, k]
    e1 = atomjit.Engine(threads=1)
    old = atomic_cas(array, (ind0, ind1), expected, desired, engine=e1)
    np.testing.assert_array_equal(old, want)
    np.testing.assert_array_equal(array, model)


def test_rmw_ops_match_numpy_models(eng):
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 50, size=400)
    vals = rng.integers(-1000, 1000, size=400).astype(np.int32)
    for fn, ufunc in [(atomic_add, np.add), (atomic_min, np.minimum), (atomic_max, np.maximum),
                      (atomic_and, np.bitwise_and), (atomic_or, np.bitwise_or),
                      (atomic_xor, np.bitwise_xor)]:
        a = rng.integers(-100, 100, size=50).astype(np.int32)
        model = a.copy()
        ufunc.at(model, idx, vals)
        fn(a, idx, vals, engine=eng)
        np.testing.assert_array_equal(a, model, err_msg=fn.__name__)


def test_contended_adds_return_a_permutation(eng):
    n = 50_000
    a = np.zeros(1, dtype=np.uint64)
    old = atomic_add(a, np.zeros(n, dtype=np.int64), 1, engine=eng)
    assert a[0] == n
    np.testing.assert_array_equal(np.sort(old), np.arange(n, dtype=np.uint64))


def test_strided_arrays_and_broadcast_updates(eng):
    base = np.zeros((6, 8), dtype=np.float32)
    view = base[::2, 1::3]                    # shape (3, 3), strided
    old = atomic_add(view, (np.arange(3)[:, None], np.arange(3)[None, :]), np.float32(0.5),
                     engine=eng)
    assert old.shape == (3, 3) and (old == 0).all()
    want = np.zeros((6, 8), dtype=np.float32)
    want[::2, 1::3] = 0.5
    np.testing.assert_array_equal(base, want)
    # A reversed view: index 0 is the last element.
    r = np.arange(10, dtype=np.int64)
    atomic_xchg(r[::-1], 0, -5, engine=eng)
    assert r[9] == -5


def test_out_of_bounds_and_negative_indices(eng):
    a = np.arange(4, dtype=np.int32)
    old = atomic_cas(a, np.array([-1, 4, 2]), np.array([7, 8, 2], dtype=np.int32), 99,
                     engine=eng)
    np.testing.assert_array_equal(old, [7, 8, 2])
    np.testing.assert_array_equal(a, [0, 1, 99, 3])
    old = atomic_add(a, np.array([-1, 100]), 1, engine=eng)
    np.testing.assert_array_equal(old, [0, 0])
    with pytest.raises(atomjit.TileError, match="out of bounds|bounds"):
        atomic_add(a, np.array([0, 5]), 1, check_bounds=False, engine=eng)
    np.testing.assert_array_equal(a, [0, 1, 99, 3])   # nothing was touched


def test_float_cas_compares_bit_patterns(eng):
    nan1 = np.frombuffer(np.uint32(0x7FC00001).tobytes(), dtype=np.float32)[0]
    a = np.array([np.nan, 0.0, -0.0], dtype=np.float32)
    old = atomic_cas(a, np.arange(3), np.array([nan1, -0.0, -0.0], dtype=np.float32),
                     np.float32(1.0), engine=eng)
    assert np.isnan(old[0])
    # Another NaN payload and +0.0 vs -0.0 differ; -0.0 == -0.0 bitwise.
    assert np.isnan(a[0]) and np.signbit(a[1]) == False and a[2] == 1.0  # noqa: E712


def test_errors(eng):
    a = np.zeros(8, dtype=np.int32)
    with pytest.raises(atomjit.TileError, match="broadcast"):
        atomic_add(a, np.zeros(3, dtype=np.int64), np.ones(4, dtype=np.int32), engine=eng)
    with pytest.raises(atomjit.TileError):
        atomic_add(a, (np.zeros(2, dtype=np.int64), np.zeros(2, dtype=np.int64)), 1, engine=eng)
    with pytest.raises(atomjit.TileError):
        atomic_min(np.zeros(4, dtype=np.float32), np.arange(4), 1.0, engine=eng)
    with pytest.raises(atomjit.TileError, match="WEAK"):
        atomic_add(a, 0, 1, memory_order=MemoryOrder.WEAK, engine=eng)
    with pytest.raises(atomjit.TileError):
        atomic_add(a, 0, 1, memory_scope=MemoryScope.NONE, engine=eng)
    with pytest.raises(atomjit.TileError):
        atomic_add(a, np.array([0.5]), 1, engine=eng)
    ro = np.zeros(4, dtype=np.int32)
    ro.flags.writeable = False
    with pytest.raises(atomjit.ArgumentError, match="read-only"):
        atomic_add(ro, 0, 1, engine=eng)
    with pytest.raises(atomjit.ArgumentError, match="shares memory"):
        atomic_add(a, a[:2], 1, engine=eng)
    with pytest.raises(atomjit.ArgumentError):
        atomic_add([1, 2, 3], 0, 1, engine=eng)
    # Every order and scope cuTile accepts runs.
    for order in (MemoryOrder.RELAXED, MemoryOrder.ACQUIRE, MemoryOrder.RELEASE,
                  MemoryOrder.ACQ_REL):
        for scope in (MemoryScope.BLOCK, MemoryScope.DEVICE, MemoryScope.SYS):
            atomic_add(a, 0, 1, memory_order=order, memory_scope=scope, engine=eng)
    assert a[0] == 12


def test_device_arrays_share_memory_with_kernels():
    e = atomjit.Engine(threads=2)
    m = e.load(str(__import__("conftest").KERNELS / "embedding.compute_80.ptx"))
    keys = e.zeros((1000,), np.uint32)
    m.launch("fill_keys", 4, 256, [keys, 1000, 37, 7])
    hist = e.zeros((37,), np.uint32)
    k = keys.numpy()
    old = atomic_add(hist, k, 1)
    np.testing.assert_array_equal(hist.numpy(), np.bincount(k, minlength=37))
    assert old.shape == (1000,)
    total = e.zeros((1,), np.uint64)
    m.launch("weigh", 1, 64, [hist, 37, total])
    counts = np.bincount(k, minlength=37).astype(np.uint64)
    assert total.numpy()[0] == (counts * np.arange(1, 38, dtype=np.uint64)).sum()
    hist.free()
    with pytest.raises(atomjit.DeviceError):
        atomic_add(hist, k, 1)
