"""cuTile's bulk tile atomics (``cuda.tile.atomic_*``) on numpy arrays and device arrays.

The functions have cuTile's signatures, so the atomic calls of cuTile code can be tried on a
CPU::

    from atomjit.tile import atomic_cas, MemoryOrder, MemoryScope
    old = atomic_cas(arr, (i0, i1), expected, desired, check_bounds=True,
                     memory_order=MemoryOrder.ACQ_REL, memory_scope=MemoryScope.DEVICE)

``array`` is updated in place: a numpy array (any strides; writeable, aligned, native byte
order) or an :class:`atomjit.DeviceArray`. ``indices`` is a tuple with one entry per
dimension (a bare index for a 1-d array); each entry is an integer numpy array or a Python
int, and they broadcast (NumPy rules) to the common index shape. ``expected``, ``desired`` and
``update`` are numpy arrays, numpy scalars or Python numbers broadcasting *to* that shape, cast
to the array's dtype by cuTile's implicit-cast rules. The result is a new numpy array of the
index shape holding each element's old value (an out-of-bounds element: ``expected`` for CAS,
zero for the others). Every rule and its source is in ``docs/tile.md``; errors raise
:class:`atomjit.TileError` (a ``ValueError``).

Each element's operation is one host atomic; the call as a whole is not atomic. Each distinct
call shape is compiled once (Cranelift) and cached; large tiles are split across host threads.
Calls on numpy arrays run on a default engine (every core), or on ``engine=``.
"""

from __future__ import annotations

import enum
from typing import Any, Optional

import numpy as np

from . import _atomjit
from .errors import ArgumentError

__all__ = [
    "MemoryOrder",
    "MemoryScope",
    "atomic_cas",
    "atomic_xchg",
    "atomic_add",
    "atomic_min",
    "atomic_max",
    "atomic_and",
    "atomic_or",
    "atomic_xor",
]


class MemoryOrder(enum.Enum):
    """``cuda.tile.MemoryOrder``. Atomics refuse ``WEAK``; every other order runs as a
    sequentially consistent host atomic (a valid strengthening)."""

    WEAK = "weak"
    RELAXED = "relaxed"
    ACQUIRE = "acquire"
    RELEASE = "release"
    ACQ_REL = "acq_rel"


class MemoryScope(enum.Enum):
    """``cuda.tile.MemoryScope``. Atomics need a scope other than ``NONE``; ``BLOCK``,
    ``DEVICE`` and ``SYS`` all span the host's one memory."""

    NONE = "none"
    BLOCK = "block"
    DEVICE = "device"
    SYS = "sys"


_default = None


def _default_engine():
    global _default
    if _default is None:
        from . import Engine

        _default = Engine()
    return _default


def _operand(x: Any) -> Any:
    """A value as the extension takes it: numpy arrays and Python numbers as they are, a
    numpy scalar as a 0-d array (it keeps its dtype, unlike a Python number)."""
    if isinstance(x, np.generic):
        return np.asarray(x)
    if isinstance(x, (np.ndarray, bool, int, float)):
        return x
    raise ArgumentError(
        f"expected a numpy array, a numpy scalar or a Python number, not {type(x).__name__}"
    )


def _call(op, array, indices, values, check_bounds, memory_order, memory_scope, engine):
    from . import DeviceArray

    if not isinstance(indices, tuple):
        indices = (indices,)
    idx = [_operand(i) for i in indices]
    vals = [_operand(v) for v in values]
    if not isinstance(memory_order, MemoryOrder):
        raise ArgumentError(f"memory_order must be a MemoryOrder, not {memory_order!r}")
    if memory_scope is not None and not isinstance(memory_scope, MemoryScope):
        raise ArgumentError(f"memory_scope must be a MemoryScope, not {memory_scope!r}")
    scope = None if memory_scope in (None, MemoryScope.NONE) else memory_scope.value
    order = memory_order.value
    if isinstance(array, DeviceArray):
        array._check()
        dtype = _TILE_DTYPE.get(array.dtype)
        if dtype is None:
            raise ArgumentError(f"tile atomics take no device arrays of dtype {array.dtype}")
        return _atomjit.tile_atomic_device(
            array.engine._raw, op, array._buffer, list(array.shape), dtype, idx, vals,
            bool(check_bounds), order, scope,
        )
    if not isinstance(array, np.ndarray):
        raise ArgumentError(
            f"the array must be a numpy array or a DeviceArray, not {type(array).__name__}"
        )
    if not array.flags.aligned:
        raise ArgumentError("the numpy array is not aligned to its element size")
    for v in idx + vals:
        if isinstance(v, np.ndarray) and np.may_share_memory(v, array):
            raise ArgumentError(
                "an index or value tile shares memory with the array it updates; pass a copy"
            )
    raw = (engine or _default_engine())._raw
    return _atomjit.tile_atomic(
        raw, op, array, idx, vals, bool(check_bounds), order, scope
    )


_TILE_DTYPE = {
    np.dtype(t): name
    for t, name in [
        (np.bool_, "bool"), (np.int8, "int8"), (np.int16, "int16"), (np.int32, "int32"),
        (np.int64, "int64"), (np.uint8, "uint8"), (np.uint16, "uint16"),
        (np.uint32, "uint32"), (np.uint64, "uint64"), (np.float16, "float16"),
        (np.float32, "float32"), (np.float64, "float64"),
    ]
}


def atomic_cas(array, indices, expected, desired, /, *, check_bounds=True,
               memory_order=MemoryOrder.ACQ_REL, memory_scope=MemoryScope.DEVICE,
               engine=None):
    """Bulk compare-and-swap: where ``array[index]`` equals ``expected`` (bit patterns, so
    NaN payloads and the signs of zero count), it becomes ``desired``. Returns the old values
    (``expected`` where an index is out of bounds)."""
    return _call("cas", array, indices, (expected, desired), check_bounds, memory_order,
                 memory_scope, engine)


def _rmw(op: str, doc: str):
    def f(array, indices, update, /, *, check_bounds=True, memory_order=MemoryOrder.ACQ_REL,
          memory_scope=MemoryScope.DEVICE, engine=None):
        return _call(op, array, indices, (update,), check_bounds, memory_order, memory_scope,
                     engine)

    f.__name__ = f.__qualname__ = f"atomic_{op}"
    f.__doc__ = (
        f"Bulk atomic {doc}: each ``array[index]`` is updated with the corresponding element "
        f"of ``update``. Returns the old values (zero where an index is out of bounds)."
    )
    return f


atomic_xchg = _rmw("xchg", "exchange (the element becomes ``update``)")
atomic_add = _rmw("add", "addition (integers wrap; floats round to nearest even)")
atomic_min = _rmw("min", "minimum (32- and 64-bit integers)")
atomic_max = _rmw("max", "maximum (32- and 64-bit integers)")
atomic_and = _rmw("and", "bitwise and (32- and 64-bit integers, the array's dtype exactly)")
atomic_or = _rmw("or", "bitwise or (32- and 64-bit integers, the array's dtype exactly)")
atomic_xor = _rmw("xor", "bitwise xor (32- and 64-bit integers, the array's dtype exactly)")
