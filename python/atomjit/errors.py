"""The exceptions atomjit raises.

Every one derives from :class:`atomjit.Error`::

    Error
    ├── ParseError            the program or its launch text does not parse
    ├── ValidationError       a kernel breaks a rule of its dialect's documents
    ├── CompileError          the JIT could not compile a kernel
    ├── KernelNotFoundError   (also a LookupError) no kernel of that name
    ├── DeviceError           device memory: a freed array, memory exhausted, a range
    ├── TileError             (also a ValueError) a tile atomic's shapes, dtypes, order or scope
    └── LaunchError           a launch was refused or did not complete
        ├── ArgumentError     (also a ValueError) arguments, shapes or overrides that do not fit
        ├── TrapError         the program faulted (misaligned or out-of-range address, ...)
        └── WatchdogError     the launch deadlocked or reached the engine's time limit

The extension module raises them by name, so the names and constructors here are part of the
contract with ``python/src/lib.rs``.
"""

from __future__ import annotations

import json
from typing import Any, Optional

__all__ = [
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


class Error(Exception):
    """Base class of every atomjit error; ``message`` is the full text."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ParseError(Error):
    """A program or launch text does not parse; ``message`` shows the line and a caret, as the
    command line does."""


class ValidationError(Error):
    """A kernel breaks a rule of its dialect's documents; ``message`` lists each rule with the
    instruction that breaks it."""


class CompileError(Error):
    """The JIT backend could not compile a kernel (use ``Engine(backend="interp")``)."""


class KernelNotFoundError(Error, LookupError):
    """A module has no kernel of the given name; the message lists the kernels it has."""


class DeviceError(Error):
    """Device memory: an access to a freed :class:`DeviceArray`, an allocation the host cannot
    hold, or a copy that does not fit."""


class TileError(Error, ValueError):
    """A tile atomic (``atomjit.tile``) refused its arguments: shapes that do not broadcast,
    an index rank that is not the array's, a dtype the operation does not take or cannot cast,
    an unsupported order or scope, an out-of-bounds index with ``check_bounds=False``."""


class LaunchError(Error):
    """A launch was refused (the kernel cannot run from code, a shared-memory window too
    large) or did not complete (see :class:`TrapError`, :class:`WatchdogError`)."""


class ArgumentError(LaunchError, ValueError):
    """Launch arguments that do not fit the kernel's parameters (count, kind, size, a Python
    scalar whose type the parameter does not say), an array that cannot be passed in place, a
    bad launch shape, or an override of ``Module.run`` that does not apply."""


class TrapError(LaunchError):
    """The program faulted; device memory holds whatever it wrote before, and the engine and its
    arrays stay usable.

    Attributes:
        reason: the trap's name (``"address_out_of_range"``, ``"misaligned_address"``, ...).
        reason_text: the reason in words.
        kernel: the kernel's name.
        message: the full report (reason, address, instruction, line, CTA, warp, lane).
        pc: the index of the faulting instruction.
        line: its 1-based source line.
        instruction: its source text.
        cta: the CTA's ``(x, y, z)`` index.
        warp, lane: the faulting warp of the CTA and lane of the warp.
        space: the memory space (``"global"``, ``"shared"``, ...).
        address: the faulting address.
        surface: for a surface access, ``{"index": ..., "coords": [...]}``; else None.
        stats: :class:`atomjit.LaunchStats` of what ran before the trap.
    """

    def __init__(self, message: str, **fields: Any):
        super().__init__(message)
        self.reason: str = fields.get("reason", "")
        self.reason_text: str = fields.get("reason_text", "")
        self.kernel: str = fields.get("kernel", "")
        self.pc: int = fields.get("pc", 0)
        self.line: int = fields.get("line", 0)
        self.instruction: str = fields.get("inst", "")
        self.cta: tuple = tuple(fields.get("cta", (0, 0, 0)))
        self.warp: int = fields.get("warp", 0)
        self.lane: int = fields.get("lane", 0)
        self.space: str = fields.get("space", "")
        self.address: int = fields.get("address", 0)
        self.surface: Optional[dict] = fields.get("surface")
        self.stats = fields.get("stats")


class WatchdogError(LaunchError):
    """The watchdog stopped a launch: a deadlock (``kind == "deadlock"``: every warp waits) or
    the engine's time limit (``kind == "time_limit"``; ``progressing`` says whether it was still
    moving).

    Attributes: ``kernel``, ``kind``, ``progressing``, ``cause`` (what the watchdog saw, in
    words), ``stuck`` (per stuck warp: CTA, warp and where its lanes wait), ``message`` (the
    full report) and ``stats`` (:class:`atomjit.LaunchStats` of what ran).
    """

    def __init__(self, message: str, **fields: Any):
        super().__init__(message)
        self.kernel: str = fields.get("kernel", "")
        self.kind: str = fields.get("kind", "")
        self.progressing: bool = fields.get("progressing", False)
        self.cause: str = fields.get("cause", "")
        self.stuck: list = fields.get("stuck", [])
        self.stats = fields.get("stats")


def _failure(text: str) -> LaunchError:
    """The exception for a failed launch, from the extension module's JSON report (not
    raised: ``Module.launch`` raises it, ``Module.run`` reports it as ``RunReport.failure``)."""
    from . import LaunchStats  # the package imports this module first

    fields = json.loads(text)
    fields["stats"] = LaunchStats._from_json(fields["stats"])
    message = fields.pop("message")
    if fields.pop("failure") == "trap":
        return TrapError(message, **fields)
    return WatchdogError(message, **fields)
