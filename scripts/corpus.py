#!/usr/bin/env python3
"""Build the CUDA kernel corpus with NVIDIA's own toolchain, and check PTX with ptxas.

    scripts/corpus.py fetch       download the pinned toolchain wheels and unpack them
    scripts/corpus.py [build]     corpus/*.cu -> corpus/gen/ (PTX, SASS listings, FORMS.txt)
    scripts/corpus.py forms       every distinct SASS instruction form of corpus/gen
    scripts/corpus.py check-ptx   assemble every tracked .ptx and litmus test with ptxas

The toolchain lives in $ATOMJIT_TOOLCHAIN (default ~/.cache/atomjit/toolchain), laid out as the
unpacked wheels: an already unpacked directory works as it is. Standard library only. See
corpus/README.md.
"""

import argparse
import collections
import ctypes
import os
import re
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
GEN = CORPUS / "gen"

# The wheels that carry the tools: (distribution, version). triton carries ptxas, nvdisasm and
# cuobjdump; the nvidia-* wheels carry NVRTC and the headers it needs.
WHEELS = [
    ("triton", "3.9.0"),
    ("nvidia-cuda-nvrtc-cu12", "12.9.86"),
    ("nvidia-cuda-runtime-cu12", "12.9.79"),
    ("nvidia-cuda-cccl-cu12", "12.9.27"),
]

PLATFORMS = ["manylinux_2_28_x86_64", "manylinux2014_x86_64", "manylinux2010_x86_64"]

# (virtual architecture, [real architectures compiled from its PTX]).
TARGETS = [("compute_80", ["sm_80", "sm_86"]), ("compute_90", ["sm_90"])]

NVRTC_OPTIONS = ["-std=c++17"]  # plus --gpu-architecture and the two include directories


def toolchain_dir():
    env = os.environ.get("ATOMJIT_TOOLCHAIN")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "atomjit" / "toolchain"


def dist_info(dist, version):
    return f"{dist.replace('-', '_')}-{version}.dist-info"


# ---------------------------------------------------------------------------------------------
# fetch


def fetch(args):
    tc = toolchain_dir()
    missing = [(d, v) for d, v in WHEELS if not (tc / dist_info(d, v)).is_dir()]
    if not missing:
        print(f"toolchain complete in {tc}")
        return 0
    wheels = tc / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    have = list(wheels.glob("*.whl"))
    need = [(d, v) for d, v in missing if not find_wheel(have, d, v)]
    if need:
        # The wheels hold native binaries only, so the interpreter tag is irrelevant to us:
        # triton's is cp311, the others py3-none. Their platform tags go back to manylinux2010
        # (the NVRTC wheel), and pip matches only the platforms it is given.
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
               "--python-version", "3.11", "--dest", str(wheels)]
        for platform in PLATFORMS:
            cmd += ["--platform", platform]
        for link in args.find_links or []:
            cmd += ["--find-links", link]
        if args.find_links:
            cmd.append("--no-index")
        cmd += [f"{d}=={v}" for d, v in need]
        print(" ".join(cmd))
        subprocess.run(cmd, check=True)
        have = list(wheels.glob("*.whl"))
    for d, v in missing:
        whl = find_wheel(have, d, v)
        if whl is None:
            sys.exit(f"corpus.py: no wheel for {d}=={v} in {wheels}")
        print(f"unpacking {whl.name}")
        unpack(whl, tc)
    return 0


def find_wheel(paths, dist, version):
    prefix = f"{dist.replace('-', '_')}-{version}-"
    return next((p for p in paths if p.name.startswith(prefix)), None)


def unpack(whl, dest):
    """Extract a wheel, keeping the executable bits zipfile drops. The dist-info directory,
    which marks the wheel as unpacked, is extracted last."""
    with zipfile.ZipFile(whl) as z:
        infos = sorted(z.infolist(), key=lambda i: ".dist-info/" in i.filename)
        for info in infos:
            path = Path(z.extract(info, dest))
            mode = info.external_attr >> 16
            if mode & 0o111 and path.is_file():
                path.chmod(path.stat().st_mode | 0o111)


# ---------------------------------------------------------------------------------------------
# The tools


class Tools:
    def __init__(self, tc):
        self.tc = tc
        self.bin = tc / "triton" / "backends" / "nvidia" / "bin"
        self.include = [tc / "nvidia" / "cuda_runtime" / "include",
                        tc / "nvidia" / "cuda_cccl" / "include"]
        lib = tc / "nvidia" / "cuda_nvrtc" / "lib" / "libnvrtc.so.12"
        for path in [self.bin / "ptxas", lib, *self.include]:
            if not path.exists():
                sys.exit(f"corpus.py: {path} is missing; run `scripts/corpus.py fetch` "
                         "or set ATOMJIT_TOOLCHAIN to an unpacked toolchain")
        # libnvrtc finds libnvrtc-builtins beside it through its RUNPATH ($ORIGIN).
        self.nvrtc = ctypes.CDLL(str(lib))
        self.warnings = collections.Counter()   # the tools' messages, shown once at the end

    def tool(self, name, *args, cwd=None):
        """Run a tool; return its standard output; exit with its messages if it fails."""
        r = subprocess.run([str(self.bin / name), *map(str, args)], cwd=cwd,
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{name} {' '.join(map(str, args))} failed:\n{r.stderr}{r.stdout}")
        for line in r.stderr.splitlines():
            if line.strip():
                self.warnings[line.strip()] += 1
        return r.stdout

    def report_warnings(self):
        for line, n in sorted(self.warnings.items()):
            print(f"{line}  ({n}x)" if n > 1 else line, file=sys.stderr)

    def version(self, name):
        """The last line of `tool --version` naming the release ("Cuda compilation tools, ...")."""
        out = subprocess.run([str(self.bin / name), "--version"], capture_output=True,
                             text=True, check=True).stdout
        return next(line for line in out.splitlines() if line.startswith("Cuda compilation"))

    def nvrtc_version(self):
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.check(self.nvrtc.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "version")
        return f"{major.value}.{minor.value}"

    def check(self, status, what):
        if status != 0:
            self.nvrtc.nvrtcGetErrorString.restype = ctypes.c_char_p
            sys.exit(f"nvrtc {what}: {self.nvrtc.nvrtcGetErrorString(status).decode()}")

    def compile_ptx(self, name, source, arch):
        """NVRTC: CUDA C++ source text -> PTX text."""
        lib, prog = self.nvrtc, ctypes.c_void_p()
        self.check(lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), name.encode(),
                                          0, None, None), "create")
        try:
            opts = [f"--gpu-architecture={arch}", *NVRTC_OPTIONS]
            opts += [f"-I{d}" for d in self.include]
            argv = (ctypes.c_char_p * len(opts))(*(o.encode() for o in opts))
            status = lib.nvrtcCompileProgram(prog, len(opts), argv)
            size = ctypes.c_size_t()
            lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetProgramLog(prog, log)
            if status != 0:
                sys.exit(f"nvrtc {name} ({arch}):\n{log.value.decode()}")
            for line in log.value.decode().splitlines():
                if line.strip():
                    self.warnings[f"nvrtc {name}: {line.strip()}"] += 1
            lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
            ptx = ctypes.create_string_buffer(size.value)
            self.check(lib.nvrtcGetPTX(prog, ptx), "get PTX")
            return ptx.value.decode()
        finally:
            lib.nvrtcDestroyProgram(ctypes.byref(prog))


# ---------------------------------------------------------------------------------------------
# build


# A constant-bank operand of a bank other than 0 (`c[0x2][0x0]`, `c[0x3][R4]`).
OTHER_BANK = re.compile(r"\bc\[0x0*[1-9a-fA-F][0-9a-fA-F]*\]\[")


def listing(tools, tmp, cubin, plain, full):
    """The listing of `cubin` as `plain` prints it (`cuobjdump -sass`, `nvdisasm -c`), or, when
    its code reads a constant bank other than 0, whose contents those do not print, as `full`
    does (`cuobjdump -elf -sass`, `nvdisasm`): with the cubin's sections, so that the listing
    carries the bank."""
    text = tools.tool(*plain, cubin, cwd=tmp)
    if OTHER_BANK.search(text):
        text = tools.tool(*full, cubin, cwd=tmp)
    return text


def compile_file(tools, src, out, written, label):
    """NVRTC, ptxas, cuobjdump and nvdisasm for one .cu file: into `out`, as
    STEM.compute_80.ptx, STEM.compute_90.ptx and STEM.sm_XX.{cuobjdump,nvdisasm}.sass."""
    stem = src.stem
    nvrtc = tools.nvrtc_version()
    with tempfile.TemporaryDirectory() as tmp:
        for virtual, reals in TARGETS:
            ptx = tools.compile_ptx(src.name, src.read_text(), virtual)
            header = (f"// {label} for {virtual}, by scripts/corpus.py: NVRTC "
                      f"{nvrtc}, {' '.join(NVRTC_OPTIONS)} (see corpus/gen/VERSIONS)\n")
            ptx_name = f"{stem}.{virtual}.ptx"
            written.add(write(out / ptx_name, header + ptx))
            # ptxas reads the PTX from the temp directory under a relative name, so no
            # path of this machine reaches the cubin (and from it the listings).
            Path(tmp, ptx_name).write_text(header + ptx)
            for real in reals:
                cubin = f"{stem}.{real}.cubin"
                tools.tool("ptxas", f"-arch={real}", "--warn-on-spills",
                           "--warn-on-local-memory-usage", "-o", cubin, ptx_name, cwd=tmp)
                sass = listing(tools, tmp, cubin, ["cuobjdump", "-sass"],
                               ["cuobjdump", "-elf", "-sass"])
                written.add(write(out / f"{stem}.{real}.cuobjdump.sass", sass))
                sass = listing(tools, tmp, cubin, ["nvdisasm", "-c"], ["nvdisasm"])
                written.add(write(out / f"{stem}.{real}.nvdisasm.sass", sass))


def compile_cmd(args):
    """`compile FILE.cu [--out DIR]`: a user's own kernels, the corpus's way."""
    tools = Tools(toolchain_dir())
    src = Path(args.file)
    out = Path(args.out) if args.out else src.parent
    out.mkdir(parents=True, exist_ok=True)
    written = set()
    compile_file(tools, src, out, written, src.name)
    for path in sorted(written):
        print(path)
    tools.report_warnings()
    return 0


def build(args):
    tools = Tools(toolchain_dir())
    sources = sorted(CORPUS.glob("*.cu"))
    if not sources:
        sys.exit("corpus.py: no corpus/*.cu")
    GEN.mkdir(exist_ok=True)
    nvrtc = tools.nvrtc_version()
    written = set()
    for src in sources:
        compile_file(tools, src, GEN, written, f"corpus/{src.name}")
        print(f"built {src.name}")
    versions = [
        "Generated by scripts/corpus.py build; the listings are exactly as the tools print them.",
        "",
        *(f"wheel {d}=={v}" for d, v in WHEELS),
        "",
        f"NVRTC {nvrtc} (nvidia-cuda-nvrtc-cu12), options: --gpu-architecture=ARCH "
        f"{' '.join(NVRTC_OPTIONS)} -I<cuda_runtime/include> -I<cuda_cccl/include>",
        f"ptxas: {tools.version('ptxas')}; options: -arch=ARCH --warn-on-spills "
        "--warn-on-local-memory-usage",
        f"cuobjdump: {tools.version('cuobjdump')}; options: -sass (-elf -sass when the code "
        "reads a constant bank other than 0)",
        f"nvdisasm: {tools.version('nvdisasm')}; options: -c (none when the code reads a "
        "constant bank other than 0)",
        "",
        "compute_80 PTX -> sm_80, sm_86; compute_90 PTX -> sm_90",
    ]
    written.add(write(GEN / "VERSIONS", "\n".join(versions) + "\n"))
    written.add(write(GEN / "FORMS.txt", format_forms(collect_forms())))
    for stale in set(GEN.iterdir()) - written:
        print(f"removing stale {stale.relative_to(ROOT)}")
        stale.unlink()
    tools.report_warnings()
    return 0


def write(path, text):
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------------------------
# forms

# One instruction of a cuobjdump listing: /*0040*/ {@P0} MNEMONIC.MODS operands ; /* enc */
INSN = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*(?:\.[\w.]+)?)"
                  r"\s*(.*?)\s*;")


def operand_shape(op):
    """An operand with registers and numbers replaced by their kinds."""
    op = re.sub(r"\.reuse\b", "", op.strip())
    op = re.sub(r"\bSR_\w+(\.\w+)?", "SR", op)
    op = re.sub(r"\bURZ\b", "URZ", op)
    op = re.sub(r"\bUR\d+\b", "UR", op)
    op = re.sub(r"\bUP\d+\b", "UP", op)
    op = re.sub(r"\bR\d+\b", "R", op)
    op = re.sub(r"\bP\d+\b", "P", op)
    op = re.sub(r"\bB\d+\b", "B", op)
    # Numbers, but not register suffixes such as the .64 of R2.64.
    op = re.sub(r"(?<![\w.])-?(0x[0-9a-fA-F]+|\d+(\.\d+)?(e[+-]?\d+)?|\+?QNAN|\+?INF)\b",
                "I", op)
    return re.sub(r"\s+", " ", op)


def split_operands(text):
    """Operands separated by commas outside brackets."""
    ops, depth, cur = [], 0, ""
    for ch in text:
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth -= 1
        if ch == "," and depth == 0:
            ops.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        ops.append(cur)
    return ops


def collect_forms():
    """{(mnemonic, shape): Counter(listing stem -> count)} over the cuobjdump listings (the
    nvdisasm listings hold the same instructions)."""
    forms = collections.defaultdict(collections.Counter)
    for path in sorted(GEN.glob("*.cuobjdump.sass")):
        listing = path.name.removesuffix(".cuobjdump.sass")
        for line in path.read_text().splitlines():
            m = INSN.match(line)
            if m:
                shape = ", ".join(operand_shape(o) for o in split_operands(m.group(3)))
                forms[(m.group(2), shape)][listing] += 1
    return forms


def format_forms(forms):
    rows = sorted(forms.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))
    mnemonics = sorted({m.split(".")[0] for m, _ in forms})
    stems = sorted({f.rsplit(".", 1)[0] for files in forms.values() for f in files})
    out = [f"{len(rows)} distinct SASS instruction forms in corpus/gen/*.cuobjdump.sass (the "
           "nvdisasm listings hold the same instructions), by count.",
           "Form: mnemonic with its modifiers, then the operand shape: R register, RZ, P "
           "predicate, PT, UR/UP uniform register/predicate, B barrier, I immediate, "
           "SR special register, c[I][I] constant.",
           "Then the architectures and the corpus files it occurs in (all: every file).",
           f"{len(mnemonics)} mnemonics: {' '.join(mnemonics)}", ""]
    for (mnemonic, shape), files in rows:
        archs = sorted({f.rsplit(".", 1)[1] for f in files})
        names = sorted({f.rsplit(".", 1)[0] for f in files})
        where = "all" if names == stems else " ".join(names)
        form = f"{mnemonic} {shape}".rstrip()
        out.append(f"{sum(files.values()):6}  {form:<56} {','.join(archs):<17} {where}")
    return "\n".join(out) + "\n"


def forms(args):
    if not list(GEN.glob("*.cuobjdump.sass")):
        sys.exit("corpus.py: no listings in corpus/gen; run `scripts/corpus.py build`")
    sys.stdout.write(format_forms(collect_forms()))
    return 0


# ---------------------------------------------------------------------------------------------
# check-ptx


def check_ptx(args):
    tools = Tools(toolchain_dir())
    files = subprocess.run(["git", "ls-files", "*.ptx"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    units = [(f, (ROOT / f).read_text()) for f in files]
    for litmus in sorted((ROOT / "tests" / "litmus").glob("*.litmus")):
        lines = litmus.read_text().splitlines(keepends=True)
        start = next((i for i, l in enumerate(lines) if l.strip() == ".ptx"), None)
        if start is None:
            units.append((str(litmus.relative_to(ROOT)), None))
            continue
        # Blank lines in place of the header keep ptxas' line numbers those of the file.
        units.append((str(litmus.relative_to(ROOT)), "\n" * (start + 1) + "".join(lines[start + 1:])))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in units:
            if text is None:
                print(f"FAIL {name}: no `.ptx` line")
                failures += 1
                continue
            arch = ptxas_arch(text)
            src = Path(tmp, "input.ptx")
            src.write_text(text)
            r = subprocess.run([str(tools.bin / "ptxas"), f"-arch={arch}", "-o",
                                str(Path(tmp, "out.cubin")), str(src)],
                               capture_output=True, text=True)
            messages = (r.stderr + r.stdout).replace(str(src), name).strip()
            if r.returncode != 0:
                failures += 1
                print(f"FAIL {name} ({arch})\n{indent(messages)}")
            elif messages:
                print(f"ok   {name} ({arch}), with messages:\n{indent(messages)}")
            else:
                print(f"ok   {name} ({arch})")
    print(f"{len(units) - failures} of {len(units)} PTX modules assemble")
    return 1 if failures else 0


def ptxas_arch(ptx):
    """The module's .target architecture, or sm_80 when ptxas 12.9 no longer takes it."""
    m = re.search(r"^\s*\.target\s+(sm_(\d+)\w*)", ptx, re.M)
    if not m or int(m.group(2)) < 50:
        return "sm_80"
    return m.group(1)


def indent(text):
    return "\n".join("    " + line for line in text.splitlines())


# ---------------------------------------------------------------------------------------------


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--toolchain", metavar="DIR",
                   help="the unpacked toolchain (default: $ATOMJIT_TOOLCHAIN, else "
                        "~/.cache/atomjit/toolchain)")
    sub = p.add_subparsers(dest="command")
    f = sub.add_parser("fetch", help="download and unpack the pinned toolchain wheels")
    f.add_argument("--find-links", action="append", metavar="DIR",
                   help="take the wheels from DIR instead of the package index (repeatable)")
    sub.add_parser("build", help="compile corpus/*.cu into corpus/gen (the default)")
    c = sub.add_parser("compile", help="compile one .cu file to PTX and SASS listings")
    c.add_argument("file", metavar="FILE.cu")
    c.add_argument("--out", metavar="DIR", help="output directory (default: beside FILE)")
    sub.add_parser("forms", help="print the distinct SASS instruction forms of corpus/gen")
    sub.add_parser("check-ptx", help="run ptxas on every tracked .ptx and litmus test")
    args = p.parse_args()
    if args.toolchain:
        os.environ["ATOMJIT_TOOLCHAIN"] = args.toolchain
    command = {"fetch": fetch, "build": build, None: build, "forms": forms,
               "check-ptx": check_ptx, "compile": compile_cmd}[args.command]
    return command(args)


if __name__ == "__main__":
    sys.exit(main())
