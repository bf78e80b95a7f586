#!/usr/bin/env python3
"""The launch lines of the vISA example programs (programs/visa/NAME.visaasm), with expectations
computed here from what each program does (the OpenCL C in its header comment) and from its
inputs, never from atomjit's output.

    python3 programs/visa/model.py          check every NAME.launch: its directive lines (comments
                                            aside) must be exactly the model's
    python3 programs/visa/model.py NAME     print the model's lines for NAME

Work-items are run one after another in id order. The launches only check results that any
order of the atomics gives: sums, counts and minima, per-lane values on per-lane addresses, and
float min/max under rules that make them order-free. Standard library only.
"""

import re
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
M16, M32, M64 = (1 << 16) - 1, (1 << 32) - 1, (1 << 64) - 1


def random_ints(seed, lo, hi, n):
    """The launch initialiser random(SEED, LO, HI) (docs/program-format.md): SplitMix64."""
    out, s = [], seed
    for _ in range(n):
        s = (s + 0x9E3779B97F4A7C15) & M64
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z ^= z >> 31
        out.append(lo + ((z * (hi - lo)) >> 64))
    return out


def listed(name, values, fmt=str, chunk=16):
    """`.expect NAME == {...}`, in slices of `chunk` elements when longer."""
    if len(values) <= chunk:
        return [f".expect {name} == {{{', '.join(map(fmt, values))}}}"]
    return [f".expect {name}[{a}..{a + chunk}] == {{{', '.join(map(fmt, values[a:a + chunk]))}}}"
            for a in range(0, len(values), chunk)]


def hex32(v):
    return f"0x{v:08x}"


def hex64(v):
    return f"0x{v:016x}"


PROGRAMS = {}


def program(fn):
    PROGRAMS[fn.__name__] = fn
    return fn


@program
def hist8():
    n, seed, mask = 128, 41, 15
    data = random_ints(seed, 0, 1000, n)
    hits, total = [0] * 16, [0] * 16
    for v in data:
        hits[v & mask] += 1
        total[v & mask] += v
    return ([".grid 4", ".block 32",
             f".buffer data u32[{n}] = random({seed}, 0, 1000)",
             ".buffer hits u32[16] = 0", ".buffer total u32[16] = 0",
             f".param mask u32 = {mask}"]
            + listed("hits", hits) + listed("total", total) + [f".expect sum(hits) == {n}"])


@program
def halves32():
    n, k = 128, 3
    own, prev, sums = list(range(n)), [0] * n, [0] * 4
    for i in range(n):
        v = (k * i + 1) & M32
        prev[i] = own[i]
        own[i] = (own[i] + v) & M32
        sums[i % 4] = (sums[i % 4] + v) & M32
    return ([".grid 2", ".block 64",
             f".buffer own u32[{n}] = iota", f".buffer prev u32[{n}] = 0",
             ".buffer sums u32[4] = 0", f".param k u32 = {k}"]
            + listed("own", own, chunk=32) + listed("prev", prev, chunk=32) + listed("sums", sums))


@program
def pred_atomics():
    n, seed = 64, 7
    x = random_ints(seed, -50, 50, n)
    own, seen, possum, nonpos = list(range(n)), [0] * n, 0, 0
    for i in range(n):
        got = -1
        if x[i] > 0:
            possum += x[i]
            got, own[i] = own[i], x[i]
        else:
            nonpos += 1
        seen[i] = got
    return ([".grid 2", ".block 32",
             f".buffer x s32[{n}] = random({seed}, -50, 50)",
             f".buffer own s32[{n}] = iota", f".buffer seen s32[{n}] = 0",
             ".buffer possum s32[1] = 0", ".buffer nonpos u32[1] = 0"]
            + listed("own", own, chunk=32) + listed("seen", seen, chunk=32)
            + [f".expect possum == {{{possum}}}", f".expect nonpos == {{{nonpos}}}"])


@program
def counter16():
    n = 64
    bins, bin_old = [0xfffe] * 16, [0] * n
    words, word_old = list(range(n)), [0] * n
    for i in range(n):
        # inc.16 and add.16 return the old 16-bit value, zero-extended to the dword.
        bin_old[i] = bins[i % 16]
        bins[i % 16] = (bins[i % 16] + 1) & M16
        word_old[i] = words[i]
        words[i] = (words[i] + (0x1fff0 & M16)) & M16   # the low half of the source dword
    # Each bin is hit by four work-items in different threads: which one sees which old value
    # depends on the order, so bin_old is checked as a multiset.
    olds = sorted(set(bin_old))
    return ([".grid 2", ".block 32",
             ".buffer bins u16[16] = 0xfffe", f".buffer bin_old u32[{n}] = 0xffffffff",
             f".buffer words u16[{n}] = iota", f".buffer word_old u32[{n}] = 0xffffffff"]
            + listed("bins", bins, lambda v: f"0x{v:04x}")
            + [f".expect count(bin_old, {hex32(v)}) == {bin_old.count(v)}" for v in olds]
            + listed("words", words, lambda v: f"0x{v:04x}") + listed("word_old", word_old))


@program
def cmpxchg64():
    n = 64
    own, seen, locks, won = list(range(n)), [M64] * n, [0] * 4, [M64] * n
    for i in range(n):
        cmp = i
        if i % 4 == 1:
            cmp ^= 1 << 40
        if i % 4 == 3:
            cmp ^= 1
        seen[i] = own[i]
        if own[i] == cmp:                           # all 64 bits
            own[i] = 0xc0de000000000000 | i
        won[i] = locks[i % 4]
        if locks[i % 4] == 0:
            locks[i % 4] = (i + 1) << 32
    # Which work-item takes a lock depends on the order: exactly one per lock sees 0, and every
    # lock ends holding (j + 1) << 32 for some work-item j < 64.
    return ([".grid 2", ".block 32",
             f".buffer own u64[{n}] = iota", f".buffer seen u64[{n}] = 0xffffffffffffffff",
             ".buffer locks u64[4] = 0", f".buffer won u64[{n}] = 0xffffffffffffffff"]
            + listed("own", own, hex64, chunk=8) + listed("seen", seen, chunk=32)
            + [f".expect count(won, 0) == {won.count(0)}",
               f".expect min(locks) >= {hex64(1 << 32)}", f".expect max(locks) <= {hex64(n << 32)}",
               f".expect max(won) <= {hex64(n << 32)}"])


# Floats as bit patterns: the buffers are u32 because .expect compares floats as numbers
# (-0 == +0, any NaN == any NaN).

def f32(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def is_nan(b):
    return f32(b) != f32(b)


def fminmax_rule(kind, old, src):
    """What fmin ("min") or fmax ("max") of the memory value `old` and the source `src` stores
    (bit patterns), under IEEE 754-2008 minNum/maxNum with -0 below +0."""
    if is_nan(old) and is_nan(src):
        # IEEE leaves the bits of this NaN open; atomjit's written rule (src/sem/float.rs, "NaN
        # results are canonical") is the canonical NaN, sign 0 and all other bits 1.
        return 0x7fffffff
    if is_nan(old):
        return src
    if is_nan(src):
        return old
    # Order by value, then -0 before +0; ties of equal bits do not matter.
    key = lambda b: (f32(b), 0 if b >> 31 else 1)
    lo, hi = sorted([old, src], key=key)
    return lo if kind == "min" else hi


def fcmpwr_rule(old, cmp, new):
    """fcmpwr: store `new` where the comparand equals the old value as floats."""
    return new if f32(cmp) == f32(old) else old


P0, N0, NAN, NNAN, INF, NINF = 0x00000000, 0x80000000, 0x7fc00000, 0xffc00000, 0x7f800000, 0xff800000

# (memory a_i, source/comparand b_i)
FM_CASES = [
    (P0, N0), (N0, P0), (NAN, bits(1.0)), (bits(2.0), NAN),
    (NAN, NAN), (NINF, N0), (INF, bits(3.5)), (bits(-1.5), bits(-1.5)),
    (bits(0.5), bits(-0.25)), (NNAN, bits(-3.0)), (N0, N0), (P0, P0),
    (INF, INF), (N0, NAN), (bits(1.0), 0x3f800001), (bits(100.0), bits(-100.0)),
]
FM_ZEROS = [P0, NAN, N0, P0, NAN, P0, N0, P0, NAN, P0, P0, N0, NAN, N0, P0, P0]


@program
def fminmax():
    a = [c[0] for c in FM_CASES]
    b = [c[1] for c in FM_CASES]
    newv = [bits(10.0 + i) for i in range(16)]
    mins, maxs, cas, old = list(a), list(a), list(a), [0] * 48
    red = [P0, N0]
    for i in range(16):
        old[i], mins[i] = mins[i], fminmax_rule("min", mins[i], b[i])
        old[16 + i], maxs[i] = maxs[i], fminmax_rule("max", maxs[i], b[i])
        old[32 + i], cas[i] = cas[i], fcmpwr_rule(cas[i], b[i], newv[i])
        red[0] = fminmax_rule("min", red[0], FM_ZEROS[i])
        red[1] = fminmax_rule("max", red[1], FM_ZEROS[i])

    def buf(name, values):
        return f".buffer {name} u32[{len(values)}] = {{{', '.join(map(hex32, values))}}}"

    return ([".grid 1", ".block 16", buf("mins", a), buf("maxs", a), buf("cas", a),
             buf("src", b), buf("newv", newv), buf("zeros", FM_ZEROS), buf("red", [P0, N0]),
             ".buffer old u32[48] = 0"]
            + listed("mins", mins, hex32) + listed("maxs", maxs, hex32)
            + listed("cas", cas, hex32) + listed("red", red, hex32) + listed("old", old, hex32))


@program
def predec_stack():
    n = 64
    top, stack, popped, counter, dec_old = n, list(range(n)), [M32] * n, n, [0] * n
    for i in range(n):
        top = (top - 1) & M32          # predec: store old - 1 ...
        slot = top                     # ... and return the new value
        popped[i], stack[slot] = stack[slot], M32
        dec_old[i] = counter           # dec returns the old value
        counter = (counter - 1) & M32
    # Which work-item pops which slot depends on the order; the multisets do not.
    return ([".grid 2", ".block 32",
             f".buffer top u32[1] = {n}", f".buffer stack u32[{n}] = iota",
             f".buffer popped u32[{n}] = 0xffffffff",
             f".buffer counter u32[1] = {n}", f".buffer dec_old u32[{n}] = 0",
             f".expect top == {{{top}}}", f".expect stack == {hex32(stack[0])}"]
            + [f".expect {f}(popped) == {g(popped)}" for f, g in (("sum", sum), ("min", min),
                                                                   ("max", max))]
            + [f".expect counter == {{{counter}}}"]
            + [f".expect {f}(dec_old) == {g(dec_old)}" for f, g in (("sum", sum), ("min", min),
                                                                     ("max", max))])


def directives(path):
    """The directive lines of a launch file, without comments, spaces normalised."""
    out = []
    for line in path.read_text().splitlines():
        line = re.sub(r"\s+", " ", line.split("//")[0]).strip()
        if line:
            out.append(line)
    return out


def main():
    if len(sys.argv) > 1:
        for name in sys.argv[1:]:
            print("\n".join(PROGRAMS[name]()))
        return 0
    bad = 0
    for name, fn in PROGRAMS.items():
        launch = HERE / f"{name}.launch"
        want = [re.sub(r"\s+", " ", l) for l in fn()]
        have = directives(launch) if launch.is_file() else None
        if have == want:
            print(f"ok      {name} ({sum(l.startswith('.expect') for l in want)} expectations)")
            continue
        bad += 1
        print(f"DIFFER  {name}" if have is not None else f"MISSING {launch.name}")
        for l in want:
            if have is not None and l not in have:
                print(f"  model:  {l}")
        for l in have or []:
            if l not in want:
                print(f"  launch: {l}")
    for launch in sorted(HERE.glob("*.launch")):
        if launch.stem not in PROGRAMS:
            print(f"EXTRA   {launch.name}: not modelled")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
