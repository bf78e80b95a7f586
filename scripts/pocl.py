#!/usr/bin/env python3
"""Fetch PoCL (OpenCL on the CPU) for the optional PoCL peer of benches/atomics.rs, without
installing anything system-wide.

    scripts/pocl.py fetch [DIR]   apt-get download the pinned Debian 12 packages into DIR/debs,
                                  unpack them with `dpkg -x` into DIR/root and write
                                  DIR/vendors/pocl.icd (the ICD file, naming libpocl by its
                                  absolute path)
    scripts/pocl.py env [DIR]     print the shell exports that let any OpenCL program (clinfo,
                                  your own) use this PoCL: LD_LIBRARY_PATH, OCL_ICD_VENDORS

DIR defaults to $ATOMJIT_POCL, else /work/cache/pocl. The bench finds the same directory through
ATOMJIT_POCL and needs no other environment:

    scripts/pocl.py fetch && ATOMJIT_POCL=/work/cache/pocl cargo bench --bench atomics

What PoCL 3.1 needs when unpacked outside /, found by trying: its device drivers
(lib/.../pocl/libpocl-devices-*.so) and its kernel library (share/pocl/kernel-*.bc) are looked
up relative to libpocl.so.2 itself (a relocatable build), so they need no variable. The Debian
build exports only the ICD entry point, so programs call it through the ICD loader
(libOpenCL.so.1 from ocl-icd-libopencl1, also unpacked here), which OCL_ICD_VENDORS points at
DIR/vendors. libpocl.so.2's own libraries (libhwloc, libclang-cpp, libLLVM) must be found by the
dynamic linker: LD_LIBRARY_PATH for a program started from a shell, loading them by absolute
path first in the bench. PoCL compiles OpenCL C in process with libclang-cpp and links the
kernel with the system's `ld` (binutils), so the clang-15 and libclang-common-15-dev packages
libpocl2 depends on are not needed. Compiled kernels are cached in POCL_CACHE_DIR (the bench
uses DIR/kcache). The number of worker threads of PoCL's pthread device is POCL_MAX_PTHREAD_COUNT
in 3.1 (POCL_CPU_MAX_CU_COUNT in later releases). Standard library only.
"""

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Debian 12 (bookworm) packages: (package, version, SHA-256 of the .deb).
PACKAGES = [
    ("pocl-opencl-icd", "3.1-3+deb12u1",
     "8a781d26aa5ee3131d58e29b76d6e894fab676b44f6048162be7f6e24e157a98"),
    ("libpocl2", "3.1-3+deb12u1",
     "e2848ef61794c40f4d40e6403b18f71c1a1eb9e89407fce7983ff58bf2b1966e"),
    ("libpocl2-common", "3.1-3+deb12u1",
     "73554bccb6238862e301c62987765a2be2292d3cb990b091db30b76eae1db2db"),
    ("libhwloc15", "2.9.0-1",
     "4e7194b5d9adbb1a7d11a9501a4be4a4fa22876b69c73b7998056f552962c0e4"),
    ("libclang-cpp15", "1:15.0.6-4+b1",
     "1fd391c424c91b885280163727aa1b079db583f5e2ebdd350336a12de68f5448"),
    ("libllvm15", "1:15.0.6-4+b1",
     "9f0751109ba89e65b1313a4f3e34a29977a0db6fa30ed475e2c6bd555fa9e866"),
    ("ocl-icd-libopencl1", "2.3.1-1",
     "ddd8509c0430545173752bed272c7f44f8b5f7d125265b20456207aaefbb52c8"),
]

LIBDIR = Path("usr/lib/x86_64-linux-gnu")
# The directories of the shared libraries, in the order the bench loads them from.
LIBRARY_DIRS = [LIBDIR, Path("usr/lib/llvm-15/lib")]
STAMP = ".atomjit-packages"


def default_dir():
    env = os.environ.get("ATOMJIT_POCL")
    return Path(env).expanduser() if env else Path("/work/cache/pocl")


def stamp_text():
    return "".join(f"{p} {v} {sha}\n" for p, v, sha in PACKAGES)


def deb_version(v):
    """The version as it appears in a .deb file name: the epoch's colon is %3a."""
    return v.replace(":", "%3a")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def find_deb(directory, package, version, sha):
    for path in sorted(directory.glob(f"{package}_*.deb")):
        if path.name.split("_")[1] in (version, deb_version(version)) and sha256(path) == sha:
            return path
    return None


def library_path(root):
    return ":".join(str(root / d) for d in LIBRARY_DIRS)


def fetch(base):
    root = base / "root"
    if (root / STAMP).is_file() and (root / STAMP).read_text() == stamp_text():
        print(f"PoCL complete in {base}")
        return check(base)
    debs = base / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    need = [(p, v) for p, v, sha in PACKAGES if find_deb(debs, p, v, sha) is None]
    if need:
        # apt-get download needs no root: it writes the .debs to the current directory.
        cmd = ["apt-get", "download", *[f"{p}={v}" for p, v in need]]
        print(" ".join(cmd))
        if subprocess.run(cmd, cwd=debs).returncode != 0:
            sys.exit("pocl.py: apt-get download failed. The pinned versions are those of Debian 12 "
                     "(bookworm); elsewhere put the .debs from https://snapshot.debian.org in "
                     f"{debs} and run fetch again.")
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for p, v, sha in PACKAGES:
        deb = find_deb(debs, p, v, sha)
        if deb is None:
            sys.exit(f"pocl.py: {p}_{v}: no .deb with SHA-256 {sha} in {debs}")
        print(f"unpacking {deb.name}")
        subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    # The packaged ICD file names libpocl by its full file name (libpocl.so.2.10.0) for the
    # loader to find on the system path; ours names it by absolute path.
    vendors = base / "vendors"
    vendors.mkdir(exist_ok=True)
    (vendors / "pocl.icd").write_text(f"{root / LIBDIR / 'libpocl.so.2'}\n")
    (root / STAMP).write_text(stamp_text())
    return check(base)


def check(base):
    """Every library PoCL loads resolves with the unpacked directories on LD_LIBRARY_PATH."""
    root = base / "root"
    # PoCL loads libpocl-devices-basic.so (by path) before the pthread driver that needs it.
    env = dict(os.environ,
               LD_LIBRARY_PATH=library_path(root) + ":" + str(root / LIBDIR / "pocl"))
    missing = []
    for lib in [LIBDIR / "libpocl.so.2", LIBDIR / "libOpenCL.so.1",
                LIBDIR / "pocl" / "libpocl-devices-pthread.so"]:
        out = subprocess.run(["ldd", str(root / lib)], env=env, capture_output=True, text=True)
        missing += [f"{lib}: {line.strip()}" for line in out.stdout.splitlines()
                    if "not found" in line]
    if missing:
        sys.exit("pocl.py: libraries not found:\n  " + "\n  ".join(missing))
    print(f"PoCL ready: ATOMJIT_POCL={base} cargo bench --bench atomics")
    return 0


def print_env(base):
    root = base / "root"
    if not (root / STAMP).is_file():
        sys.exit(f"pocl.py: no PoCL in {base}; run `scripts/pocl.py fetch {base}` first")
    print(f"export LD_LIBRARY_PATH={library_path(root)}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}")
    print(f"export OCL_ICD_VENDORS={base / 'vendors'}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["fetch", "env"])
    ap.add_argument("dir", nargs="?", type=Path, help="cache directory (default: $ATOMJIT_POCL "
                    "or /work/cache/pocl)")
    args = ap.parse_args()
    base = (args.dir or default_dir()).expanduser().absolute()
    return fetch(base) if args.command == "fetch" else print_env(base)


if __name__ == "__main__":
    sys.exit(main())
