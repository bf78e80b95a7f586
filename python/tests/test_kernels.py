"""Launches of the kernels of examples/kernels/embedding.cu (NVRTC PTX and ptxas SASS) with
numpy arrays, device arrays and scalars. Expected values are computed here from the CUDA
source, as tests/integration/embedding.rs does in Rust."""

import numpy as np
import pytest

import atomjit
from conftest import KERNELS, PTX, SASS

M32 = 0xFFFFFFFF


def key(i, buckets, seed):
    """`fill_keys` of embedding.cu, in Python (unsigned 32-bit arithmetic)."""
    x = ((i * 2654435761) & M32) ^ seed
    x ^= x >> 15
    x = (x * 0x2C1B3C6D) & M32
    x ^= x >> 12
    return x % buckets


def u32(*values):
    """numpy scalars for a SASS listing, which declares no parameter types."""
    return [np.uint32(v) for v in values]


@pytest.mark.parametrize("file", PTX + SASS)
def test_fill_keys_updates_a_numpy_array_in_place(engine, file):
    m = engine.load(KERNELS / file)
    n, buckets, seed = 1000, 37, 0x5EED
    keys = np.full(n, 12345, dtype=np.uint32)
    scalars = [n, buckets, seed] if file in PTX else u32(n, buckets, seed)
    stats = m.launch("fill_keys", grid=8, block=128, args=[keys, *scalars])
    assert keys.tolist() == [key(i, buckets, seed) for i in range(n)]
    assert stats.ctas == 8 and stats.lanes == 1024
    assert stats.warp_instructions > 0 and stats.wall_time >= 0
    assert stats.total_atomics == 0
    # The staging buffer is gone.
    assert engine.allocations == 0


@pytest.mark.parametrize("file", PTX + SASS)
def test_device_arrays_carry_data_between_launches(engine, file):
    m = engine.load(KERNELS / file)
    n, buckets, seed = 1000, 37, 0x5EED
    keys = engine.empty(n, np.uint32)
    scalars = [n, buckets, seed] if file in PTX else u32(n, buckets, seed)
    m.launch("fill_keys", (8,), (128, 1, 1), [keys, *scalars])
    want = np.array([key(i, buckets, seed) for i in range(n)], dtype=np.uint32)
    assert np.array_equal(keys.numpy(), want)

    # A histogram made on the host, weighed by a second kernel into a u64 with atomic adds.
    hist = np.bincount(keys.numpy(), minlength=buckets).astype(np.uint32)
    h = engine.array(hist)
    total = engine.array(np.array([5], dtype=np.uint64))
    b = buckets if file in PTX else np.uint32(buckets)
    stats = m.launch("weigh", 1, 64, [h, b, total])
    # One atomic add per bucket: 37 of the 64 threads pass the bound.
    assert stats.atomics["add"] == buckets and stats.total_atomics == buckets
    weighed = sum(int(c) * (b + 1) for b, c in enumerate(hist))
    assert total.numpy().tolist() == [5 + weighed]
    assert h.numpy().tolist() == hist.tolist()  # read-only in the kernel


@pytest.mark.parametrize("file", PTX + SASS)
def test_float_scalars_and_pointers_bind_in_order(jit, file):
    m = jit.load(KERNELS / file)
    x = (np.arange(100) * 0.5).astype(np.float32)
    bias = jit.array(np.array([0.25], dtype=np.float32))
    k, n = (3.0, 90) if file in PTX else (np.float32(3.0), np.uint32(90))
    got = x.copy()
    m.launch("scale", 1, 128, [got, k, bias, n])
    want = x.copy()
    want[:90] = x[:90] * np.float32(3.0) + np.float32(0.25)
    assert np.array_equal(got, want)


def test_python_scalars_bind_by_the_declared_ptx_type(jit):
    """Every kind of scalar a PTX parameter accepts: `poke(unsigned *p, long long offset,
    unsigned value)` and `scale(float *x, float k, const float *bias, unsigned n)`."""
    m = jit.load(KERNELS / PTX[0])
    p = np.zeros(8, dtype=np.uint32)
    for offset, value in [
        (0, 7),  # Python ints: s64 and u32
        (np.int64(1), np.uint32(8)),  # numpy scalars of the declared types
        (np.uint64(2), np.int32(-1)),  # same size, other signedness: the bits
        (3, 2**32 - 1),  # the top of u32's range
        (4, np.float32(1.0)),  # any 4-byte scalar: the f32's bits
    ]:
        m.launch("poke", 1, 1, [p, offset, value])
    assert p.tolist() == [7, 8, 0xFFFFFFFF, 0xFFFFFFFF, 0x3F800000, 0, 0, 0]
    # A Python int for an f32 parameter is that number; n as an np.uint32.
    x = np.ones(4, dtype=np.float32)
    bias = jit.zeros(1, np.float32)
    m.launch("scale", 1, 32, [x, 3, bias, np.uint32(2)])
    assert x.tolist() == [3.0, 3.0, 1.0, 1.0]
    # A pointer parameter also takes a 64-bit integer: the device address of a DeviceArray.
    d = jit.zeros(2, np.uint32)
    m.launch("poke", 1, 1, [d.address, 1, 42])
    assert d.numpy().tolist() == [0, 42]


def test_scalar_encodings_follow_ieee_and_twos_complement():
    """The bits a Python scalar becomes (checked against IEEE 754 and two's complement)."""
    assert atomjit._float_bits(1.5, "f16", "x") == 0x3E00
    assert atomjit._float_bits(-2.0, "f32", "x") == 0xC0000000
    assert atomjit._float_bits(0.1, "f64", "x") == 0x3FB999999999999A
    assert atomjit._int_bits(-1, "s64", "x") == 2**64 - 1
    assert atomjit._int_bits(-2, "b32", "x") == 0xFFFFFFFE
    assert atomjit._int_bits(2**32 - 1, "b32", "x") == 0xFFFFFFFF
    with pytest.raises(atomjit.ArgumentError):
        atomjit._float_bits(1e6, "f16", "x")


@pytest.mark.parametrize("file", PTX + SASS)
def test_a_trap_raises_and_the_engine_stays_usable(engine, file):
    m = engine.load(KERNELS / file)
    scalar = (lambda t, v: v) if file in PTX else (lambda t, v: t(v))
    p = engine.zeros(4, np.uint32)
    m.launch("poke", 1, 1, [p, scalar(np.int64, 3), scalar(np.uint32, 9)])
    # Far past the device memory: every thread's store faults.
    with pytest.raises(atomjit.TrapError) as info:
        m.launch("poke", 1, 32, [p, scalar(np.int64, 1 << 40), scalar(np.uint32, 1)])
    t = info.value
    assert isinstance(t, atomjit.LaunchError) and isinstance(t, atomjit.Error)
    assert t.reason == "address_out_of_range"
    assert t.kernel == "poke"
    assert t.space == "global"
    assert t.address == p.address + 4 * (1 << 40)
    assert t.cta == (0, 0, 0) and t.warp == 0 and 0 <= t.lane < 32
    assert t.line > 0
    assert ("st.global" in t.instruction) if file in PTX else ("STG" in t.instruction)
    assert "poke" in t.message and "address out of range" in t.message
    assert str(t) == t.message
    assert isinstance(t.stats, atomjit.LaunchStats)
    # A negative offset from the first allocation lands below device memory: a trap too. (NVRTC
    # declares `long long offset` as `.param .u64`, so a negative Python int does not fit; the
    # bits of an np.int64 do.)
    with pytest.raises(atomjit.TrapError):
        m.launch("poke", 1, 1, [p, np.int64(-1), scalar(np.uint32, 1)])
    # A numpy argument is still copied back, and its staging buffer freed.
    host = np.array([1, 2], dtype=np.uint32)
    with pytest.raises(atomjit.TrapError):
        m.launch("poke", 1, 1, [host, scalar(np.int64, 1 << 40), scalar(np.uint32, 1)])
    assert host.tolist() == [1, 2]
    # Memory and engine are intact.
    assert p.numpy().tolist() == [0, 0, 0, 9]
    m.launch("poke", 1, 1, [p, scalar(np.int64, 0), scalar(np.uint32, 7)])
    assert p.numpy().tolist() == [7, 0, 0, 9]
    assert engine.allocations == 1


SPIN = """.version 8.8
.target sm_80
.address_size 64
.visible .entry spin(.param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<3>;
  ld.param.u32 %r1, [n];
  mov.u32 %r2, 0;
$L_loop:
  add.u32 %r2, %r2, 1;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra $L_loop;
  ret;
}
"""


def test_the_watchdog_stops_an_endless_kernel():
    e = atomjit.Engine(threads=2, timeout=0.3)
    m = e.load(SPIN, name="spin.ptx")
    assert m.launch("spin", 1, 32, [0]).ctas == 1  # n == 0: no loop
    with pytest.raises(atomjit.WatchdogError) as info:
        m.launch("spin", 2, 32, [1])
    w = info.value
    assert isinstance(w, atomjit.LaunchError)
    assert w.kind == "time_limit" and w.progressing
    assert w.kernel == "spin"
    assert "spin" in w.message and w.stuck
    assert w.stats.warp_instructions > 0
    assert m.launch("spin", 1, 32, [0]).ctas == 1


def test_a_sass_program_file_runs_on_device_arrays(engine):
    from conftest import PROGRAMS

    m = engine.load(PROGRAMS / "sass" / "hist_shared.s")
    assert str(m.signature("hist")) == "data (buffer), hist (buffer)"
    data = (np.arange(16384, dtype=np.uint32) * 7 + np.arange(16384, dtype=np.uint32) // 3) % 256
    hist = engine.zeros(256, np.uint32)
    # Its declared `.shared 1024` is the window: no dynamic bytes needed.
    m.launch("hist", 64, 256, [data, hist])
    assert np.array_equal(hist.numpy(), np.bincount(data, minlength=256))


def test_signatures():
    e = atomjit.Engine()
    sig = e.load(KERNELS / PTX[0]).signature("scale")
    assert sig.kind == "params"
    assert [(p.name, p.type, p.offset, p.accepts) for p in sig.params] == [
        ("scale_param_0", "u64", 0x160, "buffer_or_scalar"),
        ("scale_param_1", "f32", 0x168, "scalar"),
        ("scale_param_2", "u64", 0x170, "buffer_or_scalar"),
        ("scale_param_3", "u32", 0x178, "scalar"),
    ]
    listing = e.load(KERNELS / SASS[1]).signature("weigh")
    assert listing.kind == "listing" and listing.params is None
    assert listing.base == 0x210 and listing.reads_to > 0x210
