"""atomjit: run GPU shader programs (PTX, SASS, vISA) on the CPU, with numpy arrays in and out.

::

    import numpy as np
    import atomjit

    engine = atomjit.Engine()
    module = engine.load("examples/kernels/embedding.compute_80.ptx")
    keys = np.zeros(1000, dtype=np.uint32)
    stats = module.launch("fill_keys", grid=8, block=128,
                          args=[keys, np.uint32(1000), np.uint32(37), np.uint32(0x5eed)])
    print(keys[:8], stats.wall_time)

An :class:`Engine` holds the settings (backend, host threads, determinism, watchdog) and the
device memory; :meth:`Engine.load` gives a :class:`Module`, whose kernels run either from code
(:meth:`Module.launch`, on :class:`DeviceArray` s and numpy arrays) or with a program file's own
launch, buffers and expectations (:meth:`Module.run`). See ``docs/python.md``.

Tile atomics (``atomjit.tile``) join the package once the Rust tile module lands: they work in
place on numpy arrays and on :class:`DeviceArray` s, through the same extension module.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, Optional, Union

import numpy as np

from . import _atomjit, errors
from .errors import (
    ArgumentError,
    CompileError,
    DeviceError,
    Error,
    KernelNotFoundError,
    TileError,
    LaunchError,
    ParseError,
    TrapError,
    ValidationError,
    WatchdogError,
)

__version__ = _atomjit.__version__

__all__ = [
    "Engine",
    "Module",
    "DeviceArray",
    "LaunchStats",
    "RunReport",
    "Expectation",
    "Signature",
    "Param",
    "Error",
    "ParseError",
    "ValidationError",
    "CompileError",
    "KernelNotFoundError",
    "DeviceError",
    "TileError",
    "LaunchError",
    "ArgumentError",
    "TrapError",
    "WatchdogError",
]

# numpy dtypes device arrays and scalars may have, and the atomjit type of each.
_TY_OF_DTYPE = {
    np.dtype(np.uint8): "u8",
    np.dtype(np.int8): "s8",
    np.dtype(np.uint16): "u16",
    np.dtype(np.int16): "s16",
    np.dtype(np.uint32): "u32",
    np.dtype(np.int32): "s32",
    np.dtype(np.uint64): "u64",
    np.dtype(np.int64): "s64",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
}

# The numpy dtype of a program buffer of each atomjit type (raw bits where numpy has no such
# type: bf16, the packed pairs, b128).
_DTYPE_OF_TY = {ty: dtype for dtype, ty in _TY_OF_DTYPE.items()}
_DTYPE_OF_TY.update(
    {
        "b16": np.dtype(np.uint16),
        "b32": np.dtype(np.uint32),
        "b64": np.dtype(np.uint64),
        "bf16": np.dtype(np.uint16),
        "f16x2": np.dtype(np.uint32),
        "bf16x2": np.dtype(np.uint32),
        "b128": np.dtype("V16"),
    }
)

_TY_BYTES = {
    "u8": 1, "s8": 1, "u16": 2, "s16": 2, "b16": 2, "f16": 2, "bf16": 2,
    "u32": 4, "s32": 4, "b32": 4, "f32": 4, "f16x2": 4, "bf16x2": 4,
    "u64": 8, "s64": 8, "b64": 8, "f64": 8, "b128": 16,
}  # fmt: skip

_FLOAT_FORMAT = {"f16": "<e", "f32": "<f", "f64": "<d"}


def _dtype_name(dtype: np.dtype) -> str:
    return str(dtype) if dtype.isnative else dtype.str


def _device_dtype(dtype: Any) -> np.dtype:
    """``dtype`` as a numpy dtype device memory holds, or ArgumentError."""
    try:
        d = np.dtype(dtype)
    except TypeError as e:
        raise ArgumentError(f"not a numpy dtype: {dtype!r} ({e})") from None
    if d.newbyteorder("=") not in _TY_OF_DTYPE:
        names = ", ".join(str(t) for t in _TY_OF_DTYPE)
        raise ArgumentError(f"dtype {_dtype_name(d)} is not one device memory holds ({names})")
    return d


def _bytes_view(array: np.ndarray) -> np.ndarray:
    """The bytes of a C-contiguous array as a one-dimensional uint8 view (no copy)."""
    return array.reshape(-1).view(np.uint8)


class LaunchStats:
    """What a launch did: counters and wall time.

    Attributes:
        wall_time: seconds the launch took.
        host_threads: host worker threads used.
        ctas: CTAs (thread blocks) run.
        lanes: threads launched.
        warp_instructions: warp-instructions executed (one per instruction per warp group).
        atomics: lane atomic operations by op name (``"add"``, ``"cas"``, ...), zeros included.
        cas_failures: CAS lanes whose comparison failed.
        spin_fast_fails: ``CAST.SPIN`` lanes that fast-failed.
        quanta, yields, divergences, reconvergences, barrier_releases: scheduler counters.
    """

    wall_time: float
    host_threads: int
    ctas: int
    lanes: int
    warp_instructions: int
    atomics: dict
    cas_failures: int
    spin_fast_fails: int
    quanta: int
    yields: int
    divergences: int
    reconvergences: int
    barrier_releases: int

    @classmethod
    def _from_json(cls, d: Union[str, dict]) -> "LaunchStats":
        if isinstance(d, str):
            d = json.loads(d)
        s = cls.__new__(cls)
        d = dict(d)
        s.wall_time = d.pop("wall_seconds")
        for k, v in d.items():
            setattr(s, k, v)
        return s

    @property
    def total_atomics(self) -> int:
        """Lane atomic operations of every kind."""
        return sum(self.atomics.values())

    def as_dict(self) -> dict:
        """Every counter, by attribute name."""
        return dict(vars(self))

    def __repr__(self) -> str:
        return (
            f"LaunchStats(ctas={self.ctas}, lanes={self.lanes}, "
            f"warp_instructions={self.warp_instructions}, atomics={self.total_atomics}, "
            f"wall_time={self.wall_time:.6f})"
        )


class Param(NamedTuple):
    """One formal parameter of a kernel.

    ``type`` is its declared atomjit type (``"u32"``, ``"f32"``, ...; a buffer's is ``"u64"``,
    its device address), ``offset`` its place in constant bank 0, and ``accepts`` what binds to
    it: ``"buffer"``, ``"scalar"`` or ``"buffer_or_scalar"`` (a PTX 64-bit integer: pointers
    are integers in PTX).
    """

    name: str
    type: str
    offset: int
    accepts: str


class Signature:
    """How a kernel's launch arguments bind (:meth:`Module.signature`).

    ``kind`` is one of:

    * ``"params"``: exactly the parameters in ``params`` (a PTX entry's ``.param`` list, a SASS
      program file's declarations), in order;
    * ``"listing"``: a compiler's SASS listing names no parameters: any arguments, in order from
      constant-bank offset ``base``, each naturally aligned, reaching at least ``reads_to``;
    * ``"payload"``: a vISA kernel: buffers and scalars in order through IGC's payload layout
      (buffers' addresses first, then the scalars), as ``.buffer``/``.param`` launch lines;
    * ``"unsupported"``: the kernel cannot be launched from code (``str()`` says why).
    """

    def __init__(self, raw: tuple):
        self.kind: str = raw[0]
        self._text: str = raw[1]
        self.params: Optional[list[Param]] = None
        self.base: Optional[int] = None
        self.reads_to: Optional[int] = None
        if self.kind == "params":
            self.params = [Param(*p) for p in raw[2]]
        elif self.kind == "listing":
            self.base, self.reads_to = raw[2], raw[3]

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Signature({self.kind}: {self._text})"


class Expectation(NamedTuple):
    """The verdict on one ``.expect`` line: its text, source line (0 when given to
    :meth:`Module.run`), whether it passed, and what was expected and found."""

    text: str
    line: int
    passed: bool
    expected: str
    actual: str


class RunReport:
    """What :meth:`Module.run` did and left behind.

    Attributes:
        kernel, backend: the kernel and the backend that ran it (``fallback`` says why that is
            not the engine's, or is None).
        grid, block, shared_bytes, deterministic: the launch as it ran.
        stats: :class:`LaunchStats` (of what ran before it stopped, after a failure).
        buffers: every buffer after the launch, by name, as numpy arrays (also after a trap:
            whatever the kernel wrote). ``bf16``, packed pairs and ``b128`` come as raw bits.
        addresses: each buffer's device address during the launch.
        expectations: a list of :class:`Expectation` (after a failure, only ``.expect trap``).
        failure: the :class:`TrapError` or :class:`WatchdogError` (not raised), or None.
        expected_trap: the launch trapped as its ``.expect trap`` line said it would.
        passed: the launch completed (or trapped as expected) and every expectation held.
    """

    def __init__(self, report: str, buffers: list):
        d = json.loads(report)
        self.kernel: str = d["kernel"]
        self.backend: str = d["backend"]
        self.fallback: Optional[str] = d["fallback"]
        self.grid = tuple(d["grid"])
        self.block = tuple(d["block"])
        self.shared_bytes: int = d["shared_bytes"]
        self.deterministic: bool = d["deterministic"]
        self.stats = LaunchStats._from_json(d["stats"])
        self.expectations = [
            Expectation(e["text"], e["line"], e["passed"], e["expected"], e["actual"])
            for e in d["expectations"]
        ]
        self.failure: Optional[LaunchError] = (
            None if d["failure"] is None else errors._failure(json.dumps(d["failure"]))
        )
        self.expected_trap: bool = d["expected_trap"]
        self.passed: bool = d["passed"]
        self.buffers: dict[str, np.ndarray] = {}
        self.addresses: dict[str, int] = {}
        for name, ty, address, data in buffers:
            self.buffers[name] = np.frombuffer(data, dtype=_DTYPE_OF_TY[ty]).copy()
            self.addresses[name] = address

    def raise_for_failure(self) -> None:
        """Raises :attr:`failure` unless the launch completed or trapped as expected."""
        if self.failure is not None and not self.expected_trap:
            raise self.failure

    def __repr__(self) -> str:
        state = "passed" if self.passed else "failed"
        return f"RunReport(kernel={self.kernel!r}, {state}, buffers={list(self.buffers)})"


class DeviceArray:
    """An array in an engine's device memory, which outlives launches: kernels see it at
    :attr:`address` (a PTX pointer parameter, a SASS constant-bank word).

    Made by :meth:`Engine.array`, :meth:`Engine.empty` and :meth:`Engine.zeros`. Its memory is
    freed by :meth:`free`, at the end of a ``with`` block, or when the object is garbage
    collected; afterwards every use raises :class:`DeviceError`.
    """

    def __init__(self, engine: "Engine", buffer: Any, shape: tuple, dtype: np.dtype):
        self._engine = engine
        self._buffer = buffer
        self._shape = shape
        self._dtype = dtype

    @property
    def shape(self) -> tuple:
        """The array's shape."""
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        """The element type, a numpy dtype."""
        return self._dtype

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        return int(np.prod(self._shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        """The length in bytes."""
        return self.size * self._dtype.itemsize

    @property
    def engine(self) -> "Engine":
        """The engine whose device memory holds the array."""
        return self._engine

    @property
    def freed(self) -> bool:
        """True once the array's memory is freed."""
        return self._buffer.freed

    @property
    def address(self) -> int:
        """The device address kernels see; raises :class:`DeviceError` once freed."""
        self._check()
        return self._buffer.address

    def _check(self) -> None:
        if self._buffer.freed:
            raise DeviceError(f"the device array ({self._describe()}) was freed")

    def _describe(self) -> str:
        return f"shape {self._shape}, dtype {_dtype_name(self._dtype)}"

    def numpy(self) -> np.ndarray:
        """A new numpy array holding a copy of the device memory."""
        self._check()
        out = np.empty(self._shape, dtype=self._dtype)
        self._buffer.read(_bytes_view(out), 0)
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """``np.asarray(device_array)``: :meth:`numpy`, converted to ``dtype`` if given."""
        out = self.numpy()
        return out if dtype is None else out.astype(dtype, copy=False)

    def copy_from(self, data: Any) -> None:
        """Overwrites the device memory with ``data``: a numpy array of the same shape and
        dtype (any strides), or anything ``np.asarray(data, dtype=self.dtype)`` turns into an
        array of that shape (a list, a scalar broadcast to every element)."""
        self._check()
        if isinstance(data, np.ndarray):
            if data.dtype.newbyteorder("=") != self._dtype:
                raise ArgumentError(
                    f"copy_from: the array's dtype is {_dtype_name(data.dtype)}, the device "
                    f"array's {self._dtype}"
                )
            src = data
        else:
            src = np.asarray(data, dtype=self._dtype)
            if src.ndim == 0:
                src = np.broadcast_to(src, self._shape)
        if src.shape != self._shape:
            raise ArgumentError(
                f"copy_from: the data's shape is {src.shape}, the device array's {self._shape}"
            )
        src = np.ascontiguousarray(src, dtype=self._dtype)
        self._buffer.write(_bytes_view(src), 0)

    def free(self) -> None:
        """Frees the device memory; a second call (or any use afterwards) raises
        :class:`DeviceError`."""
        self._check()
        self._buffer.free()

    def __enter__(self) -> "DeviceArray":
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self._buffer.freed:
            self._buffer.free()

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d device array")
        return self._shape[0]

    def __repr__(self) -> str:
        if self._buffer.freed:
            return f"DeviceArray({self._describe()}, freed)"
        return f"DeviceArray({self._describe()}, address={self._buffer.address:#x})"


def _shape_of(shape: Any) -> tuple:
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    try:
        shape = tuple(int(d) for d in shape)
    except TypeError:
        raise ArgumentError(f"not a shape: {shape!r}") from None
    if any(d < 0 for d in shape):
        raise ArgumentError(f"negative dimension in shape {shape}")
    return shape


def _dims(value: Any, what: str) -> list:
    """A launch dimension (an int, or a tuple of 1 to 3 ints) as [x, y, z]."""
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        dims = [int(value)]
    elif isinstance(value, (tuple, list)) and 1 <= len(value) <= 3:
        dims = list(value)
    else:
        raise ArgumentError(f"{what} must be an int or a tuple of 1 to 3 ints, not {value!r}")
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 1 <= d < 2**32:
            raise ArgumentError(
                f"{what} {tuple(dims)}: each dimension must be an int from 1 to 2**32 - 1"
            )
    return [int(d) for d in dims] + [1] * (3 - len(dims))


def _int_bits(value: int, ty: str, what: str) -> int:
    """A Python int as the bits of an integer of type ``ty``, range-checked."""
    n = 8 * _TY_BYTES[ty]
    if ty[0] == "u":
        lo, hi = 0, 2**n
    elif ty[0] == "s":
        lo, hi = -(2 ** (n - 1)), 2 ** (n - 1)
    else:  # untyped bits: either reading
        lo, hi = -(2 ** (n - 1)), 2**n
    if not lo <= value < hi:
        raise ArgumentError(f"{what}: {value} does not fit {ty} ({lo} to {hi - 1})")
    return value & (2**n - 1)


def _float_bits(value: float, ty: str, what: str) -> int:
    try:
        return int.from_bytes(struct.pack(_FLOAT_FORMAT[ty], value), "little")
    except (OverflowError, struct.error):
        raise ArgumentError(f"{what}: {value} does not fit {ty}") from None


class Module:
    """A loaded program: its kernels parsed and validated (each compiled on first use).

    Made by :meth:`Engine.load`.
    """

    def __init__(self, engine: "Engine", raw: Any):
        self._engine = engine
        self._raw = raw
        self._signatures: dict[str, Signature] = {}

    @property
    def engine(self) -> "Engine":
        """The engine that loaded the module."""
        return self._engine

    @property
    def name(self) -> str:
        """The name the program was loaded under (its path, or the ``name`` given)."""
        return self._raw.name

    @property
    def kernels(self) -> list[str]:
        """Kernel names, in file order."""
        return self._raw.kernels

    @property
    def dialect(self) -> str:
        """The program's dialect: ``"ptx"``, ``"sass"`` or ``"visa"``."""
        return self._raw.dialect

    def signature(self, kernel: str) -> Signature:
        """How ``kernel``'s arguments bind in :meth:`launch` (see :class:`Signature`); raises
        :class:`KernelNotFoundError` for an unknown name."""
        sig = self._signatures.get(kernel)
        if sig is None:
            sig = self._signatures[kernel] = Signature(self._raw.signature(kernel))
        return sig

    def launch(
        self,
        kernel: str,
        grid: Union[int, tuple],
        block: Union[int, tuple],
        args: Sequence = (),
        shared: int = 0,
    ) -> LaunchStats:
        """Launches ``kernel`` on device memory and returns its :class:`LaunchStats`.

        ``grid`` CTAs of ``block`` threads each (an int, or a tuple of up to three), with
        ``shared`` bytes of dynamic shared memory per CTA (after the kernel's static shared
        variables). ``args`` bind in order to the kernel's :meth:`signature`:

        * a :class:`DeviceArray` passes its device address (to a pointer parameter);
        * a numpy array is copied to device memory for the launch and copied back into the same
          array afterwards (also after a trap), so it must be C-contiguous and writeable, of a
          dtype device memory holds; the same array given twice is one buffer;
        * a numpy scalar (``np.uint32(5)``, ``np.float32(1.5)``, ``np.int64(-1)``) passes its
          bits; its size must be the parameter's;
        * a Python ``int`` or ``float`` binds where the parameter's declared type says what it
          is: an integer type takes an int (range-checked), ``f16``/``f32``/``f64`` an int or a
          float. A SASS listing declares no types, so there pass numpy scalars.

        Raises :class:`ArgumentError` for arguments or shapes that do not fit,
        :class:`TrapError` or :class:`WatchdogError` when the launch does not complete (device
        memory holds whatever the kernel wrote; the engine and its arrays stay usable),
        :class:`DeviceError` for a freed array and :class:`KernelNotFoundError`.
        """
        sig = self.signature(kernel)
        grid3 = _dims(grid, "grid")
        block3 = _dims(block, "block")
        if isinstance(shared, bool) or not isinstance(shared, (int, np.integer)) or not (
            0 <= shared < 2**32
        ):
            raise ArgumentError(f"shared must be a number of bytes, not {shared!r}")
        if sig.kind == "unsupported":
            raise LaunchError(str(sig))
        if isinstance(args, (np.ndarray, DeviceArray, str, bytes)) or not isinstance(
            args, Sequence
        ):
            raise ArgumentError(
                f"kernel `{kernel}`: args must be a list or tuple of arguments, not "
                f"{type(args).__name__}"
            )
        if sig.params is not None and len(args) != len(sig.params):
            n = len(sig.params)
            raise ArgumentError(
                f"kernel `{kernel}` takes {n} argument{'' if n == 1 else 's'} ({sig}) but "
                f"the launch passes {len(args)}"
            )
        staged: list[tuple[np.ndarray, DeviceArray]] = []
        try:
            raw = []
            for i, a in enumerate(args):
                param = sig.params[i] if sig.params is not None else None
                raw.append(self._argument(kernel, i, a, param, staged))
            stats = self._raw.launch(kernel, grid3, block3, int(shared), raw)
        finally:
            for host, device in staged:
                if not device.freed:
                    host[...] = device.numpy()
                    device.free()
        return LaunchStats._from_json(stats)

    def _argument(
        self,
        kernel: str,
        i: int,
        a: Any,
        param: Optional[Param],
        staged: list,
    ) -> Any:
        """Argument ``i`` as the extension module takes it: a buffer or ``(type, bits)``."""
        what = f"kernel `{kernel}`, argument {i}" + (f" (`{param.name}`, {param.type})" if param else "")
        is_buffer = isinstance(a, (DeviceArray, np.ndarray))
        if param is not None:
            if is_buffer and param.accepts == "scalar":
                raise ArgumentError(f"{what}: takes a {_TY_BYTES[param.type]}-byte scalar, not an array")
            if not is_buffer and param.accepts == "buffer":
                raise ArgumentError(f"{what}: takes a buffer (a DeviceArray or numpy array), not {type(a).__name__}")
        if isinstance(a, DeviceArray):
            if a._engine._raw is not self._engine._raw:
                raise ArgumentError(f"{what}: the DeviceArray belongs to another engine")
            a._check()
            return a._buffer
        if isinstance(a, np.ndarray):
            return self._stage(what, a, staged)
        if isinstance(a, (bool, np.bool_)):
            raise ArgumentError(f"{what}: a bool says nothing about its width; pass np.uint8, np.uint32, ...")
        if isinstance(a, np.generic):
            dtype = a.dtype.newbyteorder("=")
            ty = _TY_OF_DTYPE.get(dtype)
            if ty is None:
                raise ArgumentError(f"{what}: numpy scalars of dtype {a.dtype} cannot be passed")
            if param is not None and _TY_BYTES[ty] != _TY_BYTES[param.type]:
                raise ArgumentError(
                    f"{what}: takes a {_TY_BYTES[param.type]}-byte scalar, not np.{dtype} "
                    f"({_TY_BYTES[ty]} bytes)"
                )
            return (ty, int.from_bytes(np.asarray(a, dtype=dtype).tobytes(), "little"))
        if isinstance(a, (int, float)):
            if param is None:
                raise ArgumentError(
                    f"{what}: a SASS listing or a vISA payload declares no parameter types, so a Python "
                    f"{type(a).__name__} is ambiguous; pass a numpy scalar such as "
                    f"np.uint32({a!r}) or np.float32({a!r})"
                )
            ty = param.type
            if ty in _FLOAT_FORMAT:
                return (ty, _float_bits(float(a), ty, what))
            if ty[0] in "usb" and ty not in ("bf16", "b128") and isinstance(a, int):
                return (ty, _int_bits(a, ty, what))
            if isinstance(a, float) and ty[0] in "usb" and ty not in ("bf16", "bf16x2", "b128"):
                raise ArgumentError(
                    f"{what}: a Python float for an integer parameter; pass an int, or a numpy "
                    f"scalar of the bits you mean"
                )
            raise ArgumentError(
                f"{what}: a Python {type(a).__name__} is ambiguous for a {ty} parameter; pass "
                f"a numpy scalar of the bits you mean (np.uint{8 * _TY_BYTES[ty]}(...))"
            )
        raise ArgumentError(
            f"{what}: cannot pass a {type(a).__name__} (pass a DeviceArray, a numpy array, a "
            f"numpy scalar, an int or a float)"
        )

    def _stage(self, what: str, a: np.ndarray, staged: list) -> Any:
        """A numpy argument copied to device memory for the launch (copied back after)."""
        for host, device in staged:
            if host is a:
                return device._buffer
            if np.may_share_memory(host, a):
                raise ArgumentError(
                    f"{what}: the array overlaps another array argument; pass the same array "
                    f"object, or DeviceArrays"
                )
        if not a.flags.c_contiguous:
            raise ArgumentError(
                f"{what}: the numpy array is not C-contiguous, so it cannot be updated in place; "
                f"pass np.ascontiguousarray(a) (and read the result from it) or a DeviceArray"
            )
        if not a.flags.writeable:
            raise ArgumentError(
                f"{what}: the numpy array is read-only, so the kernel's writes cannot be copied "
                f"back; pass a writeable copy or a DeviceArray"
            )
        if not a.dtype.isnative:
            raise ArgumentError(f"{what}: the numpy array's byte order is not the host's ({a.dtype.str})")
        if a.dtype not in _TY_OF_DTYPE:
            raise ArgumentError(f"{what}: dtype {a.dtype} is not one device memory holds")
        device = self._engine.array(a)
        staged.append((a, device))
        return device._buffer

    def run(
        self,
        kernel: Optional[str] = None,
        *,
        grid: Union[int, tuple, None] = None,
        block: Union[int, tuple, None] = None,
        shared: Optional[int] = None,
        set: Optional[dict] = None,
        expect: Union[str, Sequence[str], None] = None,
    ) -> RunReport:
        """Runs ``kernel`` (may be omitted when the module has one) with the program's own
        launch: its declared (or launch-file) grid, block, buffers and initialisers, then
        checks its ``.expect`` lines, like ``atomjit run``. Returns a :class:`RunReport`; a trap
        or watchdog is reported in :attr:`RunReport.failure`, not raised.

        ``grid``, ``block`` and ``shared`` override the declared shape; ``set`` maps buffer and
        scalar parameter names to new values (a number, a list or 1-D array of elements, or an
        initialiser in launch syntax such as ``"iota"`` or ``"random(9, 0, 16)"``), like
        ``--set``; ``expect`` adds expectations in ``.expect`` syntax.
        """
        if kernel is None:
            if len(self.kernels) != 1:
                raise ArgumentError(
                    f"the module has {len(self.kernels)} kernels ({', '.join(self.kernels)}): "
                    f"name the one to run"
                )
            kernel = self.kernels[0]
        dims = [None if d is None else ",".join(map(str, _dims(d, w))) for d, w in ((grid, "grid"), (block, "block"))]
        sets = [f"{name}={_init_text(name, v)}" for name, v in (set or {}).items()]
        expects = [expect] if isinstance(expect, str) else list(expect or [])
        report, buffers = self._raw.run(kernel, dims[0], dims[1], shared, sets, expects)
        return RunReport(report, buffers)

    def __repr__(self) -> str:
        return f"Module({self.name!r}, {self.dialect}, kernels={self.kernels})"


def _scalar_text(name: str, v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        raise ArgumentError(f"set `{name}`: a bool is not a value")
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    raise ArgumentError(f"set `{name}`: cannot use a {type(v).__name__} as a value")


def _init_text(name: str, v: Any) -> str:
    """A value of ``Module.run(set=...)`` in launch syntax."""
    if isinstance(v, str):
        return v
    if isinstance(v, (np.ndarray, list, tuple)):
        items = np.asarray(v).reshape(-1).tolist() if isinstance(v, np.ndarray) else v
        return "{" + ", ".join(_scalar_text(name, x) for x in items) + "}"
    return _scalar_text(name, v)


class Engine:
    """The root of the API: settings and device memory.

    Args:
        backend: ``"jit"`` (Cranelift-compiled native code, the default) or ``"interp"`` (the
            reference interpreter).
        threads: host worker threads, 1 to 1024 (None: every core).
        deterministic: one host thread in a fixed CTA/warp/lane order, so results are
            bit-identical run to run.
        timeout: the watchdog's limit per launch in seconds (None or 0: no limit).
    """

    def __init__(
        self,
        backend: str = "jit",
        threads: Optional[int] = None,
        deterministic: bool = False,
        timeout: Optional[float] = 60.0,
    ):
        try:
            self._raw = _atomjit.Engine(backend, threads, bool(deterministic), timeout)
        except ValueError as e:
            raise ArgumentError(str(e)) from None

    @property
    def backend(self) -> str:
        """The execution backend: ``"jit"`` or ``"interp"``."""
        return self._raw.backend

    @property
    def threads(self) -> int:
        """Host worker threads."""
        return self._raw.threads

    @property
    def deterministic(self) -> bool:
        """Whether launches run in a fixed order on one host thread."""
        return self._raw.deterministic

    @property
    def timeout(self) -> Optional[float]:
        """The watchdog's limit in seconds, or None."""
        return self._raw.timeout

    @property
    def allocations(self) -> int:
        """The number of live device allocations."""
        return self._raw.live_buffers()

    def load(
        self,
        source: Union[str, os.PathLike],
        name: Optional[str] = None,
        launch: Union[str, os.PathLike, Sequence[str], bool, None] = None,
    ) -> Module:
        """Parses and validates a program and returns its :class:`Module`.

        ``source`` is a path (a :class:`pathlib.Path`, or a string without a line break) or the
        program's text (a string with line breaks). The dialect comes from the file name —
        ``name`` if given, else the path — (``.ptx`` PTX; ``.s``/``.sass`` SASS; ``.visaasm``,
        ``.visa``, ``.isa`` vISA), or else from the text.

        ``launch`` gives the launch directives :meth:`Module.run` uses (``.grid``,
        ``.buffer``, ``.param``, ``.expect`` lines; for PTX they bind each entry's ``.param``
        list): their text, a list of lines, or a path to a launch file. By default a program
        file's sidecar (``NAME.launch`` beside it) is used if it exists; ``launch=False`` loads
        without one. :meth:`Module.launch` does not need a launch.

        Raises :class:`ParseError` or :class:`ValidationError` with the rendered message (line,
        caret, rule), ``FileNotFoundError``/``OSError`` for a file that cannot be read.
        """
        if isinstance(source, os.PathLike) or (isinstance(source, str) and "\n" not in source):
            path = Path(source)
            if not path.is_file():
                raise FileNotFoundError(f"no program file {str(path)!r} (pass text with line breaks to load text)")
            text = _atomjit.read_text(str(path))
            name = str(path) if name is None else name
            sidecar = path.with_suffix(".launch")
            if launch is None and sidecar != path and sidecar.is_file():
                launch = sidecar
        elif isinstance(source, str):
            text = source
            name = "<text>" if name is None else name
        else:
            raise TypeError(f"load: source must be a path or program text, not {type(source).__name__}")
        sources = None
        if isinstance(launch, os.PathLike):
            sources = [(str(launch), _atomjit.read_text(str(launch)))]
        elif isinstance(launch, str):
            sources = [("launch", launch)]
        elif isinstance(launch, Sequence) and not isinstance(launch, (bytes, bool)):
            sources = [("launch", "\n".join(launch))]
        elif launch not in (None, False):
            raise TypeError(f"load: launch must be text, lines, a path or False, not {type(launch).__name__}")
        return Module(self, self._raw.load(name, text, sources))

    def empty(self, shape: Any, dtype: Any = np.float64) -> DeviceArray:
        """A new :class:`DeviceArray` of ``shape`` and ``dtype`` (uint8 to uint64, int8 to
        int64, float16, float32, float64). Device memory is always zeroed when allocated, so
        this is :meth:`zeros`."""
        shape = _shape_of(shape)
        dtype = _device_dtype(dtype).newbyteorder("=")
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        return DeviceArray(self, self._raw.alloc(nbytes), shape, dtype)

    def zeros(self, shape: Any, dtype: Any = np.float64) -> DeviceArray:
        """A new zero-filled :class:`DeviceArray` of ``shape`` and ``dtype``."""
        return self.empty(shape, dtype)

    def array(self, data: Any, dtype: Any = None) -> DeviceArray:
        """A new :class:`DeviceArray` holding a copy of ``data`` (a numpy array of any strides
        and byte order, or anything ``np.asarray`` takes), converted to ``dtype`` if given."""
        a = np.asarray(data, dtype=dtype)
        d = _device_dtype(a.dtype).newbyteorder("=")
        a = np.ascontiguousarray(a, dtype=d)
        device = self.empty(a.shape, d)
        device._buffer.write(_bytes_view(a), 0)
        return device

    def __repr__(self) -> str:
        return (
            f"Engine(backend={self.backend!r}, threads={self.threads}, "
            f"deterministic={self.deterministic}, timeout={self.timeout})"
        )


from . import tile  # noqa: E402  (it imports Engine and DeviceArray from here)
