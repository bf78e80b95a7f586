#!/usr/bin/env python3
"""Build the Intel vISA corpus with Intel's own compiler, and check vISA text with GenX_IR.

    scripts/visa_corpus.py fetch      apt-get download the pinned Debian packages and unpack them
    scripts/visa_corpus.py [build]    corpus/visa/*.cl -> corpus/visa/gen/ (.visaasm, VERSIONS,
                                      FORMS.txt, PAYLOAD.txt)
    scripts/visa_corpus.py compile F  one .cl file of your own, the corpus's way
    scripts/visa_corpus.py forms      corpus/visa/gen/FORMS.txt: every distinct instruction form
    scripts/visa_corpus.py check      assemble every tracked .visaasm with GenX_IR (vISA parser,
                                      verifier and code generator for TGLLP)

The toolchain lives in $ATOMJIT_INTEL_TOOLCHAIN (default ~/.cache/atomjit/intel): the .deb files
in debs/ and their contents unpacked with `dpkg -x` in root/. Nothing is installed system-wide;
the tools run with LD_LIBRARY_PATH pointing into root/. Standard library only. See
corpus/README.md and docs/visa-syntax.md.
"""

import argparse
import collections
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus" / "visa"
GEN = CORPUS / "gen"

# The Debian bookworm packages: (package, version, SHA-256 of the .deb). intel-opencl-icd carries
# ocloc (libocloc.so), libigc1 the compiler, libigc-tools GenX_IR; the others are the shared
# libraries those load (found with ldd): the OpenCL C front end (libigdfcl1, libopencl-clang14,
# libclang-cpp14), LLVM 14 with its SPIR-V translator and Z3, and gmmlib.
PACKAGES = [
    ("intel-opencl-icd", "22.43.24595.41-1",
     "698b08ffaec1da7821daad3965e78b1667a5e6f268fa7ccfaae24fb35c30dd08"),
    ("libigc1", "1.0.12504.6-1+deb12u1",
     "148106ff69329fb1bd0dbab83814bdd8563edee6a7c2097dc21d00e9c3818dc2"),
    ("libigc-tools", "1.0.12504.6-1+deb12u1",
     "3c45e12db6e4f12daa45fdcdf6b8902345bde1b39814ca45163cf5ed7bdd7c58"),
    ("libigdfcl1", "1.0.12504.6-1+deb12u1",
     "f36ec860a03e84764f77a6b8f1b445188fe75de635a07162c966bcfdcac6eb8b"),
    ("libigdgmm12", "22.3.3+ds1-1",
     "9591d6be5d624422ae58b9bba0e013bd6dbdd1f1420d60de4eb2cd1186f2f44a"),
    ("libopencl-clang14", "14.0.0-4",
     "cda693c0b761dd12a5e8019c2d8b965542b1deb457ae9f2522f329b5a2e70c4b"),
    ("libllvmspirvlib14", "14.0.0-5",
     "d58720cf148a8880a75618a606bfe125ff88beb1dde129b431dea5be69b60b33"),
    ("libllvm14", "1:14.0.6-12",
     "cd986403cfe53f47c41b80667f6b344c40fe35de4c5081dad9358b4c77cf64a8"),
    ("libclang-cpp14", "1:14.0.6-12",
     "964b13d74e9aece340cde93fecd2a2f18dd63afcb707a797ce7b39d430a01c46"),
    ("libz3-4", "4.8.12-3.1",
     "6221ca25ad5abcfbe1965801029d85a88b4775320384b4b716de8fab7a4d2f7a"),
]

# The libraries a stock Debian system provides (libc, libstdc++, zlib, libxml2, libedit, libffi,
# libtinfo, ICU, ...) are taken from the system; `fetch` checks with ldd that nothing is missing.
LIBDIR = Path("usr/lib/x86_64-linux-gnu")
CHECKED = ["usr/bin/ocloc", "usr/bin/GenX_IR", "usr/lib/x86_64-linux-gnu/libocloc.so",
           "usr/lib/x86_64-linux-gnu/libigc.so.1", "usr/lib/x86_64-linux-gnu/libigdfcl.so.1",
           "usr/lib/x86_64-linux-gnu/libopencl-clang.so.14"]
STAMP = ".atomjit-packages"

DEVICE = "tgllp"                 # ocloc's device name for Tiger Lake LP (Gen12LP, Xe-LP)
PLATFORM = "TGLLP"               # GenX_IR's name for the same platform
OPTIONS = ["-cl-std=CL2.0"]      # OpenCL C 2.0: C11 atomics (atomic_fetch_*, memory_order, scope)
# Stateless ("greater than 4 GB") buffers: global memory is addressed by 64-bit pointers, so
# global atomics are svm_atomic and loads/stores svm_gather/svm_scatter/svm_block_ld, not
# BTI-surface dword_atomic/gather_scaled.
INTERNAL_OPTIONS = ["-cl-intel-greater-than-4GB-buffer-required"]
DUMP_ENV = {"IGC_ShaderDumpEnable": "1"}   # plus IGC_DumpToCustomDir=<temporary directory>


def toolchain_dir():
    env = os.environ.get("ATOMJIT_INTEL_TOOLCHAIN")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "atomjit" / "intel"


def stamp_text():
    return "".join(f"{p}={v}\n" for p, v, _ in PACKAGES)


# ---------------------------------------------------------------------------------------------
# fetch


def fetch(args):
    tc = toolchain_dir()
    root = tc / "root"
    if (root / STAMP).is_file() and (root / STAMP).read_text() == stamp_text():
        print(f"toolchain complete in {tc}")
        return check_libraries(root)
    debs = tc / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    if args.deb_dir:
        for p, v, sha in PACKAGES:
            src = find_deb(Path(args.deb_dir), p, v, sha)
            if src is None:
                sys.exit(f"visa_corpus.py: no {p}_{v} .deb (SHA-256 {sha}) in {args.deb_dir}")
            if src.parent.resolve() != debs.resolve():
                shutil.copy2(src, debs / src.name)
    need = [(p, v) for p, v, sha in PACKAGES if find_deb(debs, p, v, sha) is None]
    if need:
        # apt-get download needs no root: it writes the .debs to the current directory.
        cmd = ["apt-get", "download", *[f"{p}={v}" for p, v in need]]
        print(" ".join(cmd))
        r = subprocess.run(cmd, cwd=debs)
        if r.returncode != 0:
            sys.exit("visa_corpus.py: apt-get download failed. The pinned versions are those of "
                     "Debian 12 (bookworm); on another system fetch the .debs from "
                     "https://snapshot.debian.org and pass their directory with --deb-dir.")
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for p, v, sha in PACKAGES:
        deb = find_deb(debs, p, v, sha)
        if deb is None:
            sys.exit(f"visa_corpus.py: {p}_{v}: no .deb with SHA-256 {sha} in {debs}")
        print(f"unpacking {deb.name}")
        subprocess.run(["dpkg", "-x", str(deb), str(root)], check=True)
    (root / STAMP).write_text(stamp_text())
    return check_libraries(root)


def deb_version(v):
    """The version as it appears in a .deb file name: the epoch's colon is %3a."""
    return v.replace(":", "%3a")


def find_deb(directory, package, version, sha):
    for path in sorted(directory.glob(f"{package}_*.deb")):
        if path.name.split("_")[1] in (version, deb_version(version)) and sha256(path) == sha:
            return path
    return None


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def tool_env(root):
    env = dict(os.environ)
    lib = str(root / LIBDIR)
    env["LD_LIBRARY_PATH"] = lib + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH")
                                    else "")
    return env


def check_libraries(root):
    """ldd every tool and library the corpus uses; report what the system lacks."""
    missing = collections.defaultdict(set)
    for rel in CHECKED:
        r = subprocess.run(["ldd", str(root / rel)], capture_output=True, text=True,
                           env=tool_env(root))
        for line in r.stdout.splitlines():
            if "not found" in line:
                missing[line.split()[0]].add(rel)
    if missing:
        for lib, users in sorted(missing.items()):
            print(f"missing {lib} (needed by {', '.join(sorted(users))})", file=sys.stderr)
        print("install the Debian packages that provide them (apt-file search NAME), or add "
              "them to PACKAGES in scripts/visa_corpus.py", file=sys.stderr)
        return 1
    print(f"all libraries of ocloc, GenX_IR and IGC resolve (LD_LIBRARY_PATH={root / LIBDIR})")
    return 0


# ---------------------------------------------------------------------------------------------
# The tools


class Tools:
    def __init__(self, tc):
        self.root = tc / "root"
        self.ocloc = self.root / "usr/bin/ocloc"
        self.genx_ir = self.root / "usr/bin/GenX_IR"
        if not (self.root / STAMP).is_file() or (self.root / STAMP).read_text() != stamp_text():
            sys.exit(f"visa_corpus.py: no unpacked toolchain in {tc}; run "
                     "`scripts/visa_corpus.py fetch` or set ATOMJIT_INTEL_TOOLCHAIN")
        self.env = tool_env(self.root)
        self.warnings = collections.Counter()

    def run(self, cmd, cwd, extra_env=None):
        env = dict(self.env)
        env.update(extra_env or {})
        return subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                              text=True)

    def driver_version(self):
        with tempfile.TemporaryDirectory() as tmp:
            r = self.run([self.ocloc, "query", "OCL_DRIVER_VERSION"], tmp)
            path = Path(tmp, "OCL_DRIVER_VERSION")
            if r.returncode != 0 or not path.exists():
                sys.exit(f"ocloc query OCL_DRIVER_VERSION failed:\n{r.stdout}{r.stderr}")
            return path.read_text().strip("\0 \n")

    def compile(self, src, tmp):
        """ocloc with IGC's shader dumps on: {(kernel, simd): vISA text} of `src`."""
        work = Path(tmp)
        (work / src.name).write_text(src.read_text())
        dump = work / "dump"
        dump.mkdir()
        cmd = [self.ocloc, "compile", "-file", src.name, "-device", DEVICE,
               "-out_dir", "out", "-options", " ".join(OPTIONS),
               "-internal_options", " ".join(INTERNAL_OPTIONS)]
        r = self.run(cmd, work, dict(DUMP_ENV, IGC_DumpToCustomDir=str(dump)))
        messages = [l.strip() for l in (r.stdout + r.stderr).splitlines()
                    if l.strip() and l.strip() != "Build succeeded."]
        if r.returncode != 0:
            sys.exit(f"ocloc failed on {src}:\n" + "\n".join(messages))
        for m in messages:
            self.warnings[f"ocloc {src.name}: {m}"] += 1
        tokens = self.patch_tokens(work)
        kernels = {}
        for path in sorted(dump.glob("*_simd*_entry_*.visaasm")):
            simd = int(re.search(r"_simd(\d+)_entry_", path.name).group(1))
            text = path.read_text()
            m = re.search(r'^\.kernel "([^"]+)"', text, re.M)
            if not m:
                sys.exit(f"{path.name}: no .kernel line")
            attr = re.search(r"^\.kernel_attr SimdSize=(\d+)", text, re.M)
            if not attr or int(attr.group(1)) != simd:
                sys.exit(f"{path.name}: SimdSize attribute disagrees with the file name")
            key = (m.group(1), simd)
            if key in kernels:
                sys.exit(f"{src.name}: two dumps of kernel {key[0]} at SIMD{simd}")
            if key[0] not in tokens:
                sys.exit(f"{src.name}: ocloc disasm shows no patch tokens for {key[0]}")
            kernels[key] = (text, tokens[key[0]])
        if not kernels:
            sys.exit(f"{src.name}: IGC wrote no .visaasm (are the shader dumps enabled?)")
        return kernels

    def patch_tokens(self, work):
        """{kernel: [(token, bytes)]}: the patch tokens of ocloc's binary (the runtime's view of
        the payload: where each argument and implicit value lies in the cross-thread data), as
        `ocloc disasm` prints them."""
        binaries = [p for p in (work / "out").iterdir() if p.suffix != ".spv"]
        if len(binaries) != 1:
            sys.exit(f"ocloc wrote {len(binaries)} binaries in {work / 'out'}")
        r = self.run([self.ocloc, "disasm", "-file", binaries[0], "-dump", "dis"], work)
        ptm = work / "dis" / "PTM.txt"
        if not ptm.exists():
            sys.exit(f"ocloc disasm failed:\n{r.stdout}{r.stderr}")
        tokens, kernel, token = {}, None, None
        for line in ptm.read_text().splitlines():
            words = line.split()
            if words[:1] == ["KernelName"]:
                kernel = words[1]
                tokens[kernel] = []
            elif words[1:2] == ["Token"] and kernel:
                token = int(words[2])
            elif words[:1] == ["Hex"] and kernel and token is not None:
                tokens[kernel].append((token, bytes(int(b, 16) for b in words[1:])))
                token = None
        return tokens

    def report_warnings(self):
        for line, n in sorted(self.warnings.items()):
            print(f"{line}  ({n}x)" if n > 1 else line, file=sys.stderr)


# ---------------------------------------------------------------------------------------------
# build

# What IGC's dump could carry that depends on the machine or the run rather than on the source:
# the dump's own file name (OCL_asm<hash>), absolute paths, and `.kernel_attr OutputAsmPath`.
# None occurs with these options (a rebuild is byte-identical), but the build refuses them
# rather than commit them.
UNSTABLE = [re.compile(r"OCL_asm[0-9a-f]{16}"), re.compile(r"(?<![\w.])/(tmp|home|work|usr)/"),
            re.compile(r"OutputAsmPath")]


def sanitize(text, where):
    for pattern in UNSTABLE:
        m = pattern.search(text)
        if m:
            sys.exit(f"{where}: the dump contains {m.group(0)!r}, which a rebuild would not "
                     "reproduce; extend sanitize() in scripts/visa_corpus.py")
    return text


def header(label, kernel, simd):
    return (f"// {label} kernel {kernel} (SIMD{simd}) as IGC dumps it, by scripts/visa_corpus.py "
            f"(ocloc -device {DEVICE}, see corpus/visa/gen/VERSIONS)\n")


def compile_file(tools, src, out, written, label):
    """One .cl file -> out/STEM.KERNEL.simdN.visaasm for each kernel."""
    with tempfile.TemporaryDirectory() as tmp:
        kernels = tools.compile(src, tmp)
    payloads = []
    for (kernel, simd), (text, tokens) in sorted(kernels.items()):
        name = f"{src.stem}.{kernel}.simd{simd}.visaasm"
        text = sanitize(text, name)
        if "dword_atomic" in text or "lsc_" in text:
            sys.exit(f"{name}: a dword_atomic or lsc_* instruction: the global atomics are not "
                     "stateless svm_atomic (check INTERNAL_OPTIONS)")
        written.add(write(out / name, header(label, kernel, simd) + text))
        payloads.append(describe_payload(name, text, simd, tokens))
    return kernels, payloads


# ---------------------------------------------------------------------------------------------
# The payload: what each .input of a kernel holds

PAYLOAD_HEADER = """\
What each .input of the corpus kernels holds, from the patch tokens of ocloc's binary (the data
the OpenCL runtime uses to fill the payload), matched to the .input offsets. Written by
scripts/visa_corpus.py build; see docs/visa-syntax.md (.input).

A kernel thread starts with r0 (%r0: group id x at r0.1, y at r0.6, z at r0.7) in bytes 0-31,
then the per-thread payload: the local ids as 16-bit words, x, then y, then z, each dimension
taking one GRF (SIMD8: 8 words and padding; SIMD16: 16 words) or two (SIMD32: channels 0-15,
then 16-31). Then the cross-thread data, the same for every thread: `ct+N` below is byte N of
it. Pointer arguments come first in the cross-thread data, then the by-value arguments, each in
parameter order; implicit values fill the rest.

"""

# DATA_PARAMETER_* token types (IGC's patch_list.h) that a corpus kernel may carry.
DATA_PARAMETERS = {2: "local_size", 3: "global_size", 4: "num_groups", 5: "work_dim",
                   16: "global_id_offset", 28: "enqueued_local_size"}


def argument_info(tokens):
    """{argument number: (name, type)} from the KERNEL_ARGUMENT_INFO tokens (26)."""
    info = {}
    for token, data in tokens:
        if token != 26 or len(data) < 24:
            continue
        number, *sizes = (int.from_bytes(data[k:k + 4], "little") for k in range(0, 24, 4))
        strings, pos = [], 24
        for size in sizes:
            strings.append(data[pos:pos + size].split(b"\0")[0].decode())
            pos += size
        _, _, name, type_name, _ = strings
        info[number] = (name, type_name.split(";")[0])
    return info


def describe_payload(name, text, simd, tokens):
    """The kernel's .input lines, each with what it holds."""
    inputs = [(m.group(1), int(m.group(2)), int(m.group(3))) for m in
              re.finditer(r"^\.input (\S+) offset=(\d+) size=(\d+)", text, re.M)]
    args = argument_info(tokens)
    per_dim = 2 if simd == 32 else 1            # GRFs of local ids per dimension
    ct = 32 + 3 * per_dim * 32                  # where the cross-thread data starts
    fields = []                                 # (cross-thread offset, size, what)
    for token, data in tokens:
        word = [int.from_bytes(data[k:k + 4], "little") for k in range(0, len(data) - 3, 4)]
        if token == 30:                         # STATELESS_GLOBAL_MEMORY_OBJECT_KERNEL_ARGUMENT
            number, _, offset, size = word[:4]
            arg_name, arg_type = args.get(number, ("?", "?"))
            fields.append((offset, size, f"arg {number} {arg_name} ({arg_type}, 64-bit address)"))
        elif token == 38:                       # ALLOCATE_STATELESS_PRIVATE_MEMORY
            _, offset, size, per_thread = word[:4]
            fields.append((offset, size, f"private_base (64-bit address of the private memory, "
                                         f"{per_thread} bytes per work-item)"))
        elif token == 17:                       # DATA_PARAMETER_BUFFER
            kind, number, offset, size, source = word[:5]
            if kind == 1:                       # DATA_PARAMETER_KERNEL_ARGUMENT
                arg_name, arg_type = args.get(number, ("?", "?"))
                fields.append((offset, size, f"arg {number} {arg_name} ({arg_type}, by value)"))
            else:
                what = DATA_PARAMETERS.get(kind, f"data parameter {kind}")
                fields.append((offset, size, f"{what}.{'xyz'[source // 4]}"))
    lines = [f"{name}: SIMD{simd}, cross-thread data from byte {ct} (r{ct // 32})"]
    for var, offset, size in sorted(inputs, key=lambda t: t[1]):
        if offset < ct:
            grf = offset // 32 - 1
            dim, half = divmod(grf, per_dim)
            if offset % 32 or size != 32 or dim > 2:
                sys.exit(f"{name}: unexpected per-thread .input {var} offset={offset}")
            first, count = 16 * half, min(simd, 16)
            what = (f"local_id_{'xyz'[dim]} of channels {first}-{first + count - 1} "
                    f"({count} words" + (", then padding)" if count < 16 else ")"))
        else:
            inside = [(o, s, w) for o, s, w in fields if offset <= ct + o < offset + size]
            if not inside:
                sys.exit(f"{name}: no patch token describes .input {var} offset={offset}")
            what = ", ".join(f"{w} at ct+{o}" + (f" ({s} bytes)" if s not in (4, 8) else "")
                             for o, s, w in sorted(inside))
        lines.append(f"  .input {var:<6} offset={offset:<4} size={size:<3} {what}")
    return "\n".join(lines) + "\n"


def compile_cmd(args):
    tools = Tools(toolchain_dir())
    src = Path(args.file)
    out = Path(args.out) if args.out else src.parent
    out.mkdir(parents=True, exist_ok=True)
    written = set()
    _, payloads = compile_file(tools, src, out, written, src.name)
    for path in sorted(written):
        print(path)
    if args.payload:
        print()
        print("\n".join(payloads), end="")
    tools.report_warnings()
    return 0


def build(args):
    tools = Tools(toolchain_dir())
    sources = sorted(CORPUS.glob("*.cl"))
    if not sources:
        sys.exit("visa_corpus.py: no corpus/visa/*.cl")
    GEN.mkdir(exist_ok=True)
    written = set()
    payloads = []
    for src in sources:
        kernels, more = compile_file(tools, src, GEN, written, f"corpus/visa/{src.name}")
        payloads += more
        print(f"built {src.name}: " + ", ".join(f"{k} (SIMD{s})" for k, s in sorted(kernels)))
    versions = [
        "Generated by scripts/visa_corpus.py build. Each .visaasm is IGC's shader dump "
        "(IGC_ShaderDumpEnable=1) as written, after one `//` line naming its source.",
        "",
        *(f"deb {p}={v} sha256:{sha}" for p, v, sha in PACKAGES),
        "",
        f"ocloc query OCL_DRIVER_VERSION: {tools.driver_version()}",
        f"ocloc compile -file FILE.cl -device {DEVICE} -options \"{' '.join(OPTIONS)}\" "
        f"-internal_options \"{' '.join(INTERNAL_OPTIONS)}\"",
        "environment: " + " ".join(f"{k}={v}" for k, v in DUMP_ENV.items())
        + " IGC_DumpToCustomDir=<temporary directory>",
        f"GenX_IR FILE.visaasm -platform {PLATFORM}   (scripts/visa_corpus.py check)",
    ]
    written.add(write(GEN / "VERSIONS", "\n".join(versions) + "\n"))
    written.add(write(GEN / "FORMS.txt", format_forms(collect_forms())))
    written.add(write(GEN / "PAYLOAD.txt", PAYLOAD_HEADER + "\n".join(payloads)))
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

# An instruction line of IGC's vISA text: optional predicate, mnemonic with its dotted
# modifiers, an optional execution control, operands, then IGC's ` /// $N` instruction id.
INSN = re.compile(r"^\s+(\((?:!)?\w+(?:\.(?:any|all))?\)\s+)?([a-z_][a-z0-9_]*(?:\.[\w.]+)?)"
                  r"\s*(\((?:M\d(?:_NM)?, )?\d+\))?\s*(.*?)\s*(///.*)?$")


def operand_shape(op):
    """An operand with names and numbers replaced by their kinds."""
    op = op.strip()
    if re.fullmatch(r"%null\.0", op):
        return "%null.0"
    m = re.fullmatch(r"(\((?:-|abs|-abs|~)\))?(\S+?)\((\d+),(\d+)\)(<[\d;,]+>)?", op)
    if m:   # regioned general operand V(r,c)<region>
        mod, var, _, _, region = m.groups()
        kind = var if var.startswith("%") else "V"
        return f"{mod or ''}{kind}(r,c){region or ''}"
    m = re.fullmatch(r"(\S+)\.(\d+)", op)
    if m:   # raw operand V.byte_offset
        var = m.group(1)
        return f"{var if var.startswith('%') else 'V'}.off"
    m = re.fullmatch(r"-?(0x[0-9a-fA-F]+|\d+(\.\d+)?(e[+-]?\d+)?)(:\w+)", op)
    if m:
        return f"imm{m.group(4)}"
    if re.fullmatch(r"!?P\d+", op):
        return "P"
    if re.fullmatch(r"[A-Za-z_$@?][\w$@?-]*", op):
        return "label"
    return op


def collect_forms():
    """{(predicate kind, mnemonic, exec control kind, operand shapes): Counter(file -> count)}."""
    forms = collections.defaultdict(collections.Counter)
    for path in sorted(GEN.glob("*.visaasm")):
        stem = path.name.removesuffix(".visaasm")
        in_body = False
        for line in path.read_text().splitlines():
            if line.startswith(".function"):
                in_body = True
                continue
            if not in_body or not line.startswith("    "):
                continue
            m = INSN.match(line)
            if not m:
                forms[("?", line.strip(), "", "")][stem] += 1
                continue
            pred, mnemonic, exec_ctl, operands, _ = m.groups()
            pred_kind = ""
            if pred:
                p = pred.strip()[1:-1]
                pred_kind = "(" + ("!" if p.startswith("!") else "") + "P" + \
                    ("." + p.split(".")[1] if "." in p else "") + ") "
            ctl = ""
            if exec_ctl:
                em = re.fullmatch(r"\((?:(M\d)(_NM)?, )?(\d+)\)", exec_ctl)
                ctl = f"({'Mk' + (em.group(2) or '') + ', ' if em.group(1) else ''}{em.group(3)})"
            shapes = " ".join(operand_shape(o) for o in split_operands(operands))
            forms[(pred_kind, mnemonic, ctl, shapes)][stem] += 1
    return forms


def split_operands(text):
    """Operands separated by spaces outside brackets (regions contain commas)."""
    ops, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([<":
            depth += 1
        elif ch in ")]>":
            depth -= 1
        if ch == " " and depth == 0:
            if cur:
                ops.append(cur)
            cur = ""
        else:
            cur += ch
    if cur:
        ops.append(cur)
    return ops


def format_forms(forms):
    rows = sorted(forms.items(), key=lambda kv: (kv[0][1], -sum(kv[1].values()), kv[0]))
    mnemonics = collections.Counter()
    for (_, mnemonic, _, _), files in forms.items():
        mnemonics[mnemonic] += sum(files.values())
    exec_sizes = collections.defaultdict(set)
    for (_, mnemonic, ctl, _), files in forms.items():
        exec_sizes[mnemonic.split(".")[0]].add(ctl)
    stems = sorted({f for files in forms.values() for f in files})
    out = [f"{len(rows)} distinct vISA instruction forms in corpus/visa/gen/*.visaasm "
           f"({len(stems)} kernels), grouped by mnemonic.",
           "Form: [(P)|(!P)|(P.any)...] mnemonic.modifiers (Mk[_NM], N) operand shapes, where "
           "V(r,c)<...> is a regioned general operand, V.off a raw operand with a byte offset, "
           "imm:T a typed immediate, P a predicate variable, label a label, %name a predefined "
           "variable. Mk is any of M1..M8.",
           "Then the count and the kernels it occurs in (all: every kernel; more than 6: "
           "their number).",
           "",
           f"{len(mnemonics)} mnemonics, with counts:"]
    for mnemonic, n in sorted(mnemonics.items()):
        out.append(f"  {n:6}  {mnemonic}")
    out.append("")
    out.append("Execution controls by opcode (without modifiers):")
    for op, ctls in sorted(exec_sizes.items()):
        out.append(f"  {op:<14} {' '.join(sorted(c for c in ctls if c)) or '(none)'}")
    out.append("")
    last = None
    for (pred, mnemonic, ctl, shapes), files in rows:
        if mnemonic != last:
            out.append(f"{mnemonic}:")
            last = mnemonic
        names = sorted(files)
        if names == stems:
            where = "all"
        elif len(names) > 6:
            where = f"{len(names)} kernels"
        else:
            where = " ".join(names)
        form = f"{pred}{mnemonic} {ctl} {shapes}".replace("  ", " ").strip()
        out.append(f"  {sum(files.values()):6}  {form}")
        out.append(f"          in {where}")
    return "\n".join(out) + "\n"


def forms(args):
    """Rewrite corpus/visa/gen/FORMS.txt from the committed .visaasm files (build does too)."""
    if not list(GEN.glob("*.visaasm")):
        sys.exit("visa_corpus.py: no .visaasm in corpus/visa/gen; run `scripts/visa_corpus.py "
                 "build`")
    text = format_forms(collect_forms())
    write(GEN / "FORMS.txt", text)
    print(f"wrote {(GEN / 'FORMS.txt').relative_to(ROOT)}: {text.splitlines()[0]}")
    return 0


# ---------------------------------------------------------------------------------------------
# check


SKIP_MARKER = re.compile(r"^// GenX_IR: skip\b(.*)$", re.M)


def check(args):
    """GenX_IR on every tracked .visaasm under corpus/visa/gen and programs/visa. GenX_IR parses
    the text, runs the vISA verifier (on unless -noverifyCISA) and compiles the kernel for the
    platform. It prints its own command line first. A parse error or a verifier error exits 1
    (the verifier's messages go to INPUT.errors.txt); region bounds warnings and internal
    asserts such as "Invalid emask for SIMD8 inst" are only printed and exit 0. Anything printed
    besides the command line counts as a failure, as does a nonzero exit status.

    A file with a line `// GenX_IR: skip (REASON)` is not given to GenX_IR: it uses one of
    atomjit's extensions to the text (programs/visa/predec_stack.visaasm, whose
    `SVM_ATOMIC.predec` IGC's grammar has no spelling for). It is listed as skipped."""
    tools = Tools(toolchain_dir())
    if args.files:
        files = args.files
    else:
        files = subprocess.run(["git", "ls-files", "corpus/visa/gen/*.visaasm",
                                "programs/visa/*.visaasm"], cwd=ROOT, capture_output=True,
                               text=True, check=True).stdout.split()
    if not files:
        sys.exit("visa_corpus.py: no tracked .visaasm files (build and commit the corpus first)")
    failures = skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in files:
            path = (ROOT / name).resolve() if not Path(name).is_absolute() else Path(name)
            skip = SKIP_MARKER.search(path.read_text())
            if skip:
                skipped += 1
                print(f"skip {name}: {skip.group(1).strip()}")
                continue
            # GenX_IR writes NAME.isa (the vISA binary) into the current directory.
            local = Path(tmp, "input.visaasm")
            local.write_text(path.read_text())
            r = tools.run([tools.genx_ir, local.name, "-platform", PLATFORM], tmp)
            lines = [l for l in (r.stdout + r.stderr).splitlines()
                     if l.strip() and not l.startswith(str(tools.genx_ir))]
            # The verifier reports its errors in INPUT.errors.txt and only points to it.
            errors = Path(tmp, "input.errors.txt")
            if errors.exists():
                lines += [l.rstrip() for l in errors.read_text().splitlines()
                          if l.strip() and not set(l.strip()) <= set("-/\\")]
            messages = "\n".join(lines).replace(local.name, name)
            if r.returncode != 0 or lines:
                failures += 1
                print(f"FAIL {name} (exit {r.returncode})\n{indent(messages)}")
            else:
                print(f"ok   {name}")
            for leftover in Path(tmp).iterdir():
                leftover.unlink()
    checked = len(files) - skipped
    print(f"{checked - failures} of {checked} vISA files pass GenX_IR -platform {PLATFORM}"
          + (f" ({skipped} skipped: atomjit extensions)" if skipped else ""))
    return 1 if failures else 0


def indent(text):
    return "\n".join("    " + line for line in text.splitlines())


# ---------------------------------------------------------------------------------------------


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--toolchain", metavar="DIR",
                   help="the toolchain directory (default: $ATOMJIT_INTEL_TOOLCHAIN, else "
                        "~/.cache/atomjit/intel)")
    sub = p.add_subparsers(dest="command")
    f = sub.add_parser("fetch", help="download and unpack the pinned Debian packages")
    f.add_argument("--deb-dir", metavar="DIR",
                   help="take the .deb files from DIR instead of apt-get download")
    sub.add_parser("build", help="compile corpus/visa/*.cl into corpus/visa/gen (the default)")
    c = sub.add_parser("compile", help="compile one .cl file to .visaasm files")
    c.add_argument("file", metavar="FILE.cl")
    c.add_argument("--out", metavar="DIR", help="output directory (default: beside FILE)")
    c.add_argument("--payload", action="store_true",
                   help="also print what each .input holds (as gen/PAYLOAD.txt does)")
    sub.add_parser("forms", help="write corpus/visa/gen/FORMS.txt, the distinct instruction "
                                 "forms of corpus/visa/gen")
    k = sub.add_parser("check", help="run GenX_IR on every tracked .visaasm")
    k.add_argument("files", nargs="*", metavar="FILE.visaasm",
                   help="check these files instead of the tracked ones")
    args = p.parse_args()
    if args.toolchain:
        os.environ["ATOMJIT_INTEL_TOOLCHAIN"] = args.toolchain
    command = {"fetch": fetch, "build": build, None: build, "forms": forms, "check": check,
               "compile": compile_cmd}[args.command]
    return command(args)


if __name__ == "__main__":
    sys.exit(main())
