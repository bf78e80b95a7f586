"""Shared fixtures: the repository's paths and engines on each backend."""

from pathlib import Path

import pytest

import atomjit

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "examples" / "kernels"
PROGRAMS = ROOT / "programs"

# NVRTC's and ptxas' output for examples/kernels/embedding.cu: the PTX binds by its .param
# list, the SASS listings by layout (they name no parameters).
PTX = ["embedding.compute_80.ptx", "embedding.compute_90.ptx"]
SASS = ["embedding.sm_80.cuobjdump.sass", "embedding.sm_90.cuobjdump.sass"]


@pytest.fixture(params=["jit", "interp"])
def engine(request):
    """An engine on each backend, two host threads, a 20 s watchdog."""
    return atomjit.Engine(backend=request.param, threads=2, timeout=20.0)


@pytest.fixture
def jit():
    """A JIT engine (for tests about the API rather than execution)."""
    return atomjit.Engine(threads=2, timeout=20.0)
