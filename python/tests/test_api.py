"""The API around launches: argument errors, device arrays, loading, program runs, errors."""

import numpy as np
import pytest

import atomjit
from conftest import KERNELS, PROGRAMS, PTX, SASS


@pytest.fixture
def ptx(jit):
    return jit.load(KERNELS / PTX[0])


def raises(exc, match):
    return pytest.raises(exc, match=match)


def test_every_argument_error(jit, ptx):
    b = jit.zeros(4, np.uint32)
    t = jit.zeros(1, np.uint64)
    with raises(atomjit.ArgumentError, r"takes 3 arguments .* passes 1"):
        ptx.launch("weigh", 1, 32, [b])
    with raises(atomjit.ArgumentError, r"`weigh_param_1`, u32\): takes a 4-byte scalar, not an array"):
        ptx.launch("weigh", 1, 32, [b, b, t])
    with raises(atomjit.ArgumentError, r"takes a 4-byte scalar, not np.uint64"):
        ptx.launch("weigh", 1, 32, [b, np.uint64(1), t])
    with raises(atomjit.ArgumentError, r"Python float for an integer parameter"):
        ptx.launch("weigh", 1, 32, [b, 1.0, t])
    with raises(atomjit.ArgumentError, r"4294967296 does not fit u32"):
        ptx.launch("weigh", 1, 32, [b, 2**32, t])
    with raises(atomjit.ArgumentError, r"-1 does not fit u32"):
        ptx.launch("weigh", 1, 32, [b, -1, t])
    with raises(atomjit.ArgumentError, r"bool"):
        ptx.launch("weigh", 1, 32, [b, True, t])
    with raises(atomjit.ArgumentError, r"cannot pass a str"):
        ptx.launch("weigh", 1, 32, [b, "1", t])
    with raises(atomjit.ArgumentError, r"cannot pass a list"):
        ptx.launch("weigh", 1, 32, [[1, 2], 1, t])
    with raises(atomjit.ArgumentError, r"args must be a list or tuple"):
        ptx.launch("weigh", 1, 32, np.zeros(3))
    with raises(atomjit.ArgumentError, r"dtype bool"):
        ptx.launch("weigh", 1, 32, [np.zeros(4, dtype=bool), 1, t])
    with raises(atomjit.ArgumentError, r"numpy scalars of dtype complex64"):
        ptx.launch("weigh", 1, 32, [b, np.complex64(1), t])
    with raises(atomjit.ArgumentError, r"another engine"):
        ptx.launch("weigh", 1, 32, [atomjit.Engine().zeros(4, np.uint32), 1, t])
    # A SASS program file: buffers only.
    hist = jit.load(PROGRAMS / "sass" / "hist_shared.s")
    with raises(atomjit.ArgumentError, r"takes a buffer .* not int"):
        hist.launch("hist", 1, 256, [b, 5])
    # A listing declares no types: bare Python scalars are ambiguous; too few arguments.
    listing = jit.load(KERNELS / SASS[0])
    with raises(atomjit.ArgumentError, r"np.uint32\(37\)"):
        listing.launch("weigh", 1, 32, [b, 37, t])
    with raises(atomjit.ArgumentError, r"reads its parameters up to c\[0x0\]\[0x"):
        listing.launch("weigh", 1, 32, [b])
    # Launch shapes.
    for grid in [0, (1, 2, 3, 4), "8", (1.5,), 2**32, True]:
        with raises(atomjit.ArgumentError, r"grid"):
            ptx.launch("weigh", grid, 32, [b, 1, t])
    with raises(atomjit.ArgumentError, r"1024"):
        ptx.launch("weigh", 1, 2048, [b, 1, t])
    with raises(atomjit.ArgumentError, r"shared"):
        ptx.launch("weigh", 1, 32, [b, 1, t], shared=-1)
    # Unknown kernels; a vISA kernel whose `.input` payload the arguments leave undescribed.
    with raises(atomjit.KernelNotFoundError, r"no kernel named `nope`.*fill_keys"):
        ptx.launch("nope", 1, 1, [])
    visa = jit.load(PROGRAMS / "visa" / "hist8.visaasm")
    with raises(atomjit.LaunchError, r"cannot take these arguments.*payload byte 160"):
        visa.launch(visa.kernels[0], 1, 8, [])
    # Nothing above wrote memory or leaked a staging buffer.
    assert b.numpy().tolist() == [0] * 4 and t.numpy().tolist() == [0]
    assert jit.allocations == 2


def test_numpy_arguments_must_be_updatable_in_place(jit, ptx):
    t = jit.zeros(1, np.uint64)
    strided = np.zeros(8, dtype=np.uint32)[::2]
    with raises(atomjit.ArgumentError, r"not C-contiguous"):
        ptx.launch("weigh", 1, 32, [strided, 4, t])
    fortran = np.asfortranarray(np.zeros((2, 2), dtype=np.uint32))
    with raises(atomjit.ArgumentError, r"not C-contiguous"):
        ptx.launch("weigh", 1, 32, [fortran, 4, t])
    frozen = np.zeros(4, dtype=np.uint32)
    frozen.flags.writeable = False
    with raises(atomjit.ArgumentError, r"read-only"):
        ptx.launch("weigh", 1, 32, [frozen, 4, t])
    swapped = np.zeros(4, dtype=">u4")
    with raises(atomjit.ArgumentError, r"byte order"):
        ptx.launch("weigh", 1, 32, [swapped, 4, t])
    a = np.zeros(8, dtype=np.uint32)
    with raises(atomjit.ArgumentError, r"overlaps"):
        ptx.launch("scale", 1, 32, [a[:6], 1.0, a[4:].view(np.float32), 4])
    assert jit.allocations == 1


def test_the_same_numpy_array_twice_is_one_buffer(jit, ptx):
    # scale(x, k, bias, n): bias is x[0], read by every thread before any write completes? Not
    # guaranteed; use n = 1 so that only x[0] = x[0] * 2 + x[0] runs.
    x = np.array([1.5, 7.0], dtype=np.float32)
    ptx.launch("scale", 1, 32, [x, 2.0, x, 1])
    assert x.tolist() == [4.5, 7.0]


def test_device_arrays(jit):
    a = np.arange(12, dtype=np.int16).reshape(3, 4) - 6
    d = jit.array(a)
    assert d.shape == (3, 4) and d.dtype == np.int16 and d.ndim == 2
    assert d.size == 12 and d.nbytes == 24 and len(d) == 3
    assert d.address > 0 and d.address % 8 == 0
    assert np.array_equal(d.numpy(), a) and np.array_equal(np.asarray(d), a)
    # Any strides and byte order in; native C order out.
    t = jit.array(a.T)
    assert t.shape == (4, 3) and np.array_equal(t.numpy(), a.T)
    big = jit.array(np.arange(5, dtype=">u4"))
    assert big.dtype == np.uint32 and big.numpy().tolist() == [0, 1, 2, 3, 4]
    assert jit.array([1.5, 2.5], dtype=np.float16).numpy().tolist() == [1.5, 2.5]
    # copy_from: an array of the same shape and dtype, a list, a scalar.
    d.copy_from(a[::-1].copy())
    assert np.array_equal(d.numpy(), a[::-1])
    d.copy_from(7)
    assert (d.numpy() == 7).all()
    d.copy_from([[1, 2, 3, 4]] * 3)
    assert d.numpy()[2].tolist() == [1, 2, 3, 4]
    with raises(atomjit.ArgumentError, r"shape"):
        d.copy_from(np.zeros(12, dtype=np.int16))
    with raises(atomjit.ArgumentError, r"dtype"):
        d.copy_from(np.zeros((3, 4), dtype=np.int32))
    z = jit.zeros((2, 0), np.float64)
    assert z.numpy().shape == (2, 0)
    e = jit.empty(3, np.uint64)
    assert e.numpy().tolist() == [0, 0, 0]
    with raises(atomjit.ArgumentError, r"dtype bool"):
        jit.empty(3, bool)
    with raises(atomjit.ArgumentError, r"dtype complex128"):
        jit.array(np.zeros(2, dtype=complex))


def test_freed_arrays_raise(jit, ptx):
    d = jit.array(np.arange(4, dtype=np.uint32))
    assert jit.allocations == 1
    d.free()
    assert d.freed and jit.allocations == 0
    assert "freed" in repr(d)
    for use in [d.numpy, lambda: d.address, lambda: d.copy_from([0, 0, 0, 0]), d.free]:
        with raises(atomjit.DeviceError, r"was freed"):
            use()
    t = jit.zeros(1, np.uint64)
    with raises(atomjit.DeviceError, r"was freed"):
        ptx.launch("weigh", 1, 32, [d, 4, t])
    with jit.zeros(4, np.uint32) as w:
        assert not w.freed
    assert w.freed
    # Dropping the last reference frees the memory too.
    jit.zeros(16, np.uint8)
    assert jit.allocations == 1


def test_a_program_file_runs_with_its_own_launch(engine):
    m = engine.load(PROGRAMS / "sass" / "hist_shared.s")
    r = m.run()
    assert r.kernel == "hist" and r.backend == engine.backend
    assert r.passed and r.failure is None
    assert r.grid == (64, 1, 1) and r.block == (256, 1, 1)
    assert [e.text for e in r.expectations] == ["sum(hist) == 16384", "max(hist) < 16384"]
    assert all(e.passed for e in r.expectations)
    data, hist = r.buffers["data"], r.buffers["hist"]
    assert data.dtype == np.uint32 and data.shape == (16384,) and data.max() < 256
    assert np.array_equal(hist, np.bincount(data, minlength=256))
    assert r.stats.atomics["add"] == 16384 + 64 * 256  # ATOMS.ADD per element, RED per bin
    # Overrides: new data, fewer CTAs, an expectation that fails.
    r = m.run("hist", grid=1, set={"data": "iota"})
    assert r.buffers["data"][:512].tolist() == list(range(512))
    assert r.buffers["hist"].tolist() == [1] * 256  # CTA 0 reads data[0..256]
    every = np.arange(16384, dtype=np.uint32) % 256
    r = m.run("hist", grid=2, set={"data": every}, expect=["hist[0] == 1", "hist[1] == 2"])
    assert r.grid == (2, 1, 1)
    assert r.buffers["hist"].tolist() == [2] * 256
    assert [e.passed for e in r.expectations][-2:] == [False, True]
    assert not r.passed
    r = m.run(set={"data": np.full(16384, 3, dtype=np.uint32)})
    assert r.buffers["hist"][3] == 16384 and r.buffers["hist"].sum() == 16384
    with raises(atomjit.ArgumentError, r"no buffer or parameter named `nope`"):
        m.run(set={"nope": 1})


def test_a_ptx_program_runs_with_its_sidecar_launch(jit):
    m = jit.load(PROGRAMS / "ptx" / "hist_shared.ptx")
    r = m.run()
    assert r.passed and r.grid == (17, 1, 1)
    data = r.buffers["data"]
    assert np.array_equal(r.buffers["hist"], np.bincount(data, minlength=256))
    # Without the sidecar a PTX entry has no launch to run, but launches from code.
    bare = jit.load(PROGRAMS / "ptx" / "hist_shared.ptx", launch=False)
    with raises(atomjit.ParseError, r"param"):
        bare.run()
    # A launch given as text.
    text = (PROGRAMS / "ptx" / "hist_shared.launch").read_text().replace("4096", "512")
    r = jit.load(PROGRAMS / "ptx" / "hist_shared.ptx", launch=text).run()
    assert r.buffers["data"].shape == (512,) and r.buffers["hist"].sum() == 512


def test_an_expected_trap_is_reported_not_raised(jit):
    r = jit.load(PROGRAMS / "sass" / "surf_trap.s").run()
    assert isinstance(r.failure, atomjit.TrapError)
    assert r.failure.reason == "surface_out_of_bounds" and r.failure.surface is not None
    assert r.expected_trap and r.passed
    r.raise_for_failure()  # expected: nothing raised


def test_parse_and_validation_errors_are_rendered(jit):
    with raises(atomjit.ParseError, r"unknown instruction `FROB`") as info:
        jit.load(".kernel k\n        FROB R0 ;\n", name="bad.s")
    assert "bad.s:2" in info.value.message and "^" in info.value.message
    bad_pair = """.kernel k
.grid 1
.block 32
.buffer out u64[32] = 0
        S2R R0, SR_TID.X ;
        IMAD.WIDE.U32 R4, R0, 0x8, c[0x0][out] ;
        MOV R3, 0x1 ;
        RED.E.ADD.64.STRONG.GPU [R4.64], R3 ;
        EXIT ;
"""
    with raises(atomjit.ValidationError, r"misaligned 64-bit source pair R3") as info:
        jit.load(bad_pair, name="pair.s")
    assert "pair.s:8" in info.value.message and "rule:" in info.value.message
    with pytest.raises(FileNotFoundError):
        jit.load("no/such/file.ptx")


def test_engine_settings():
    e = atomjit.Engine(backend="interp", threads=3, deterministic=True, timeout=None)
    assert (e.backend, e.threads, e.deterministic, e.timeout) == ("interp", 3, True, None)
    assert atomjit.Engine(timeout=2.5).timeout == 2.5
    with raises(atomjit.ArgumentError, r"unknown backend `gpu`"):
        atomjit.Engine(backend="gpu")
    with raises(atomjit.ArgumentError, r"threads must be 1 to 1024"):
        atomjit.Engine(threads=0)
    with raises(atomjit.ArgumentError, r"timeout"):
        atomjit.Engine(timeout=-1.0)
    m = e.load(KERNELS / PTX[0])
    assert m.dialect == "ptx" and m.kernels == ["fill_keys", "weigh", "scale", "poke"]
    assert "interp" in repr(e)


def test_a_visa_kernel_launches_with_numpy_arrays(jit):
    # hist8 (programs/visa/model.py): hits[v & mask] += 1, total[v & mask] += v, SIMD8.
    visa = jit.load(PROGRAMS / "visa" / "hist8.visaasm")
    assert visa.signature(visa.kernels[0]).kind == "payload"
    data = (np.arange(128, dtype=np.uint32) * 37 + 11) % 1000
    hits = np.zeros(16, dtype=np.uint32)
    total = np.zeros(16, dtype=np.uint32)
    visa.launch(visa.kernels[0], 4, 32, [data, hits, total, np.uint32(15)])
    np.testing.assert_array_equal(hits, np.bincount(data & 15, minlength=16))
    np.testing.assert_array_equal(total, np.bincount(data & 15, weights=data, minlength=16))
