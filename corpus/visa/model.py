#!/usr/bin/env python3
"""An independent model of the vISA corpus kernels: the expected memory after each launch,
computed from the OpenCL C source (corpus/visa/*.cl) and the launch files' inputs, never from
atomjit or from IGC's output.

    python3 corpus/visa/model.py            check every .expect line of corpus/visa/*.launch
    python3 corpus/visa/model.py KERNEL     print the model's .expect lines for KERNEL

Each kernel is modelled as its work-items run one after another in id order. The corpus only
checks results that every interleaving of the atomics gives (commutative updates, multisets of
tickets, counts of compare-and-swap winners), so one order suffices; the few checks that are
order-free by construction rather than by commutativity say so where they are computed.
Floating-point special cases follow the rules written in floats.launch. Standard library only.
"""

import re
import struct
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
M32, M64, M16 = (1 << 32) - 1, (1 << 64) - 1, (1 << 16) - 1


# ---------------------------------------------------------------------------------------------
# Launch-file initialisers (docs/program-format.md)


def splitmix64(seed):
    s = seed
    while True:
        s = (s + 0x9E3779B97F4A7C15) & M64
        z = s
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        yield z ^ (z >> 31)


def random_ints(seed, lo, hi, n):
    g = splitmix64(seed)
    return [lo + ((next(g) * (hi - lo)) >> 64) for _ in range(n)]


def s32(v):
    v &= M32
    return v - (1 << 32) if v >> 31 else v


def s64(v):
    v &= M64
    return v - (1 << 64) if v >> 63 else v


def s16(v):
    v &= M16
    return v - (1 << 16) if v >> 15 else v


# ---------------------------------------------------------------------------------------------
# Floats as bit patterns


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def bits_f32(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def f16_bits(x):
    return struct.unpack("<H", struct.pack("<e", x))[0]


def bits_f16(b):
    return struct.unpack("<e", struct.pack("<H", b))[0]


def is_nan(x):
    return x != x


def pick(kind, o_bits, s_bits, decode, sign_bit):
    """The operand (as bits) that fmin (kind "min") or fmax ("max") of (old, src) leaves in
    memory under floats.launch's rules: a NaN operand is missing data, so the other operand wins;
    -0 is below +0; otherwise the smaller (larger) value."""
    fo, fs = decode(o_bits), decode(s_bits)
    if is_nan(fo):
        return s_bits
    if is_nan(fs):
        return o_bits
    if fo == fs:
        if fo == 0 and o_bits != s_bits:          # -0 against +0
            old_negative = bool(o_bits & sign_bit)
            return o_bits if old_negative == (kind == "min") else s_bits
        return o_bits
    smaller, larger = (o_bits, s_bits) if fo < fs else (s_bits, o_bits)
    return smaller if kind == "min" else larger


# ---------------------------------------------------------------------------------------------
# .expect lines


def fmt(v):
    if isinstance(v, float):
        if is_nan(v):
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    return str(v)


def expect_list(name, values, chunk=32):
    """NAME == {...}, or NAME[a..b] == {...} lines of at most `chunk` values."""
    if len(values) <= chunk:
        return [f"{name} == {{{', '.join(fmt(v) for v in values)}}}"]
    return [f"{name}[{a}..{min(a + chunk, len(values))}] == "
            f"{{{', '.join(fmt(v) for v in values[a:a + chunk])}}}"
            for a in range(0, len(values), chunk)]


def hexes(values, width=8):
    return [f"0x{v:0{width}x}" for v in values]


def expect_hex(name, values, width=8, chunk=16):
    lines = []
    if len(values) <= chunk:
        return [f"{name} == {{{', '.join(hexes(values, width))}}}"]
    for a in range(0, len(values), chunk):
        b = min(a + chunk, len(values))
        lines.append(f"{name}[{a}..{b}] == {{{', '.join(hexes(values[a:b], width))}}}")
    return lines


KERNELS = {}


def kernel(fn):
    KERNELS[fn.__name__] = fn
    return fn


# ---------------------------------------------------------------------------------------------
# int32.cl


@kernel
def add_sub():
    n = 128
    own, low, shared = list(range(n)), [1] * n, [0] * 16
    out, out_low = [0] * n, [0] * n
    for i in range(n):
        out[i] = own[i]; own[i] = (own[i] + i + 1) & M32
        out_low[i] = low[i]; low[i] = (low[i] - 3) & M32
        shared[i % 8] = (shared[i % 8] + i + 1) & M32
        shared[8 + i % 8] = (shared[8 + i % 8] - i) & M32
    return (expect_list("own", own) + [f"low == 0x{low[0]:08x}"] + expect_list("shared", shared)
            + expect_list("out", out) + ["out_low == 1"])


@kernel
def inc_dec():
    n = 128
    counters = [0, 0, 0, 0, 100, 100, 100, 100]
    tickets, downs = [0] * n, [0] * n
    for i in range(n):
        tickets[i] = counters[i % 4]; counters[i % 4] += 1
        downs[i] = counters[4 + i % 4]; counters[4 + i % 4] -= 1
    # Which lane gets which ticket depends on the order; the multiset does not.
    return (expect_list("counters", counters) +
            [f"sum(tickets) == {sum(tickets)}", f"count(tickets, 0) == {tickets.count(0)}",
             f"max(tickets) == {max(tickets)}", f"sum(downs) == {sum(downs)}",
             f"min(downs) == {min(downs)}", f"max(downs) == {max(downs)}",
             "wrap_inc == 0", "wrap_dec == 0xffffffff"])


@kernel
def min_max():
    n = 128
    umm = [M32] * 4 + [0] * 4
    smm = [2**31 - 1] * 4 + [-2**31] * 4
    own_u, own_s = list(range(n)), list(range(n))
    out_u, out_s = [0] * n, [0] * n
    for i in range(n):
        v = (i * 37) % 101 - 50
        uv = v & M32
        umm[i % 4] = min(umm[i % 4], uv)
        umm[4 + i % 4] = max(umm[4 + i % 4], uv)
        smm[i % 4] = min(smm[i % 4], v)
        smm[4 + i % 4] = max(smm[4 + i % 4], v)
        out_u[i] = own_u[i]; own_u[i] = min(own_u[i], uv)
        out_s[i] = own_s[i]; own_s[i] = max(own_s[i], v)
    return (expect_hex("umm", umm) + expect_list("smm", smm) + expect_list("own_u", own_u)
            + expect_list("own_s", own_s) + expect_list("out_u", out_u)
            + expect_list("out_s", out_s))


@kernel
def xchg_cmpxchg():
    n = 128
    own, slots, cas, locks = list(range(n)), [5, 6, 7, 8], list(range(n)), [0] * 4
    out, taken, seen, won = ([0] * n for _ in range(4))
    for i in range(n):
        out[i] = own[i]; own[i] = 1000 + i
        taken[i] = slots[i % 4]; slots[i % 4] = 77
        seen[i] = cas[i]
        if cas[i] == (i if i % 3 == 0 else i + 1):
            cas[i] = 5000 + i
        won[i] = locks[i % 4]
        if locks[i % 4] == 0:
            locks[i % 4] = 9
    # taken: each slot gives its initial value to exactly one lane and 77 to the others.
    return (expect_list("own", own) + ["slots == 77"] + expect_list("cas", cas)
            + ["locks == 9"] + expect_list("out", out)
            + [f"count(taken, 77) == {taken.count(77)}", f"sum(taken) == {sum(taken)}"]
            + expect_list("seen", seen)
            + [f"count(won, 0) == {won.count(0)}", f"count(won, 9) == {won.count(9)}"])


@kernel
def bitwise():
    n = 128
    masks = [M32] * 4 + [0] * 8
    own = list(range(3 * n))
    out = [0] * (3 * n)
    for i in range(n):
        masks[i % 4] &= ~(1 << (i % 32)) & M32
        masks[4 + i % 4] |= 1 << ((i * 7) % 32)
        masks[8 + i % 4] ^= (i * 0x01010101) & M32
        out[i] = own[i]; own[i] &= 0xF0
        out[n + i] = own[n + i]; own[n + i] |= 0x100
        out[2 * n + i] = own[2 * n + i]; own[2 * n + i] ^= 0x5555
    return expect_hex("masks", masks) + expect_list("own", own) + expect_list("out", out)


# ---------------------------------------------------------------------------------------------
# widths.cl


@kernel
def add_sub64():
    n = 64
    own, low = list(range(n)), [0] * n
    acc = [0xFFFFFFFF] * 4 + [0] * 4
    out, out_low = [0] * n, [0] * n
    for i in range(n):
        out[i] = own[i]; own[i] = (own[i] + 0xFFFFFFFF + i) & M64
        out_low[i] = low[i]; low[i] = (low[i] - 1) & M64
        acc[i % 4] = (acc[i % 4] + 0x100000001 * (i + 1)) & M64
        acc[4 + i % 4] = (acc[4 + i % 4] - (i << 31)) & M64
    return (expect_list("own", own) + ["low == 0xffffffffffffffff"]
            + expect_hex("acc", acc, 16) + expect_list("out", out) + ["out_low == 0"])


@kernel
def min_max64():
    n = 128
    smm = [2**63 - 1] * 4 + [-2**63] * 4
    umm = [M64] * 4 + [0] * 4
    own = list(range(n))
    out = [0] * n
    for i in range(n):
        v = ((i * 37) % 101 - 50) * 0x100000001
        smm[i % 4] = min(smm[i % 4], v)
        smm[4 + i % 4] = max(smm[4 + i % 4], v)
        umm[i % 4] = min(umm[i % 4], v & M64)
        umm[4 + i % 4] = max(umm[4 + i % 4], v & M64)
        out[i] = own[i]; own[i] = max(own[i], v)
    return (expect_list("smm", smm) + expect_hex("umm", umm, 16) + expect_list("own", own)
            + expect_list("out", out))


def cmpxchg64_init():
    return [(i << 32) | 5 for i in range(64)]


@kernel
def cmpxchg64():
    n = 64
    own = cmpxchg64_init()
    expected = list(own)
    locks = [0, 0]
    seen, won = [0] * n, [0] * n
    for i in range(n):
        cmp = expected[i] if i % 2 == 0 else expected[i] ^ (1 << 40)
        seen[i] = own[i]
        if own[i] == cmp:
            own[i] = 0xA000000000000000 | i
        won[i] = locks[i % 2]
        if locks[i % 2] == 0:
            locks[i % 2] = 0x100000000
    return (expect_hex("own", own, 16) + ["locks == 0x100000000"] + expect_hex("seen", seen, 16)
            + [f"count(won, 0) == {won.count(0)}",
               f"count(won, 0x100000000) == {won.count(0x100000000)}"])


@kernel
def inc_dec_bits64():
    n = 128
    counters = [0] * 4
    tickets = [0] * n
    masks = [M64] * 4 + [0] * 8
    own = list(range(n))
    out = [0] * n
    for i in range(n):
        tickets[i] = counters[i % 4]; counters[i % 4] += 1
        masks[i % 4] &= ~(1 << (i % 64)) & M64
        masks[4 + i % 4] |= 1 << ((i * 7) % 64)
        masks[8 + i % 4] ^= (i * 0x0101010101010101) & M64
        out[i] = own[i]; own[i] = ~i & M64
    return (expect_list("counters", counters)
            + [f"sum(tickets) == {sum(tickets)}", f"count(tickets, 0) == {tickets.count(0)}",
               f"max(tickets) == {max(tickets)}", "wrap_inc == 0",
               "wrap_dec == 0xffffffffffffffff"]
            + expect_hex("masks", masks, 16) + expect_hex("own", own, 16)
            + expect_list("out", out))


@kernel
def atomics16():
    n = 128
    w = [j & M16 for j in range(13 * n)]
    old = [0] * (13 * n)
    for i in range(n):
        def op(k, f):
            old[k * n + i] = w[k * n + i]
            w[k * n + i] = f(w[k * n + i]) & M16
        op(0, lambda x: x + 0x8000 + i)
        op(1, lambda x: x - (2 * i + 1))
        op(2, lambda x: 0x7000 + i)
        op(3, lambda x: min(s16(x), -i))
        op(4, lambda x: min(x, 0xFFFF - i))
        op(5, lambda x: max(s16(x), s16(0x8000 | i)))
        op(6, lambda x: max(x, 0x8000 | i))
        op(7, lambda x: x & 0x0FF0)
        op(8, lambda x: x | 0xA000)
        op(9, lambda x: x ^ 0xFFFF)
        op(10, lambda x: x + 1)
        op(11, lambda x: x - 1)
        cmp = (12 * n + i if i % 2 == 0 else 0) & M16
        op(12, lambda x: (0xC000 | i) if x == cmp else x)
    return expect_hex("words", w, 4, 32) + expect_list("old", old)


@kernel
def counter16():
    n = 256
    data = random_ints(11, 0, 1000, n)
    bins = [0] * 32
    wraps = [0xFFF0, 0xFFF0]
    for i in range(n):
        bins[data[i] % 32] = (bins[data[i] % 32] + 1) & M16
        wraps[i % 2] = (wraps[i % 2] + 1) & M16
    return expect_list("bins", bins) + expect_hex("wraps", wraps, 4)


# ---------------------------------------------------------------------------------------------
# floats.cl (the tables are shared with floats.launch through the functions below)

NAN = float("nan")
INF = float("inf")

# (old, src) pairs of fmin_fmax_table; the both-NaN case is left out (which NaN comes back is
# not specified anywhere this corpus could cite), and so are denormals. -NAN is the negative
# quiet NaN 0xffc00000.
FMINMAX_CASES = [
    (1.0, 2.0), (2.0, 1.0), (-0.0, 0.0), (0.0, -0.0),
    (NAN, 1.0), (1.0, NAN), (-INF, 5.0), (INF, -1.0),
    (-1.5, -1.5), (-0.0, -0.0), (0.0, 0.0), (NAN, -0.0),
    (-0.0, NAN), (-INF, NAN), (NAN, INF), (3.0, -3.0),
    ("-NAN", 2.0), (1e30, -1e30), (-2.5, -0.0), (0.0, -2.5),
    (0.25, 0.5), (-0.25, -0.5), (7.0, 7.0), (INF, INF),
    (-INF, -INF), (INF, -INF), (100.0, 99.0), (-100.0, -99.0),
    (0.0, 1e-30), (-1e-30, -0.0), (65504.0, 65505.0), (-3.0, NAN),
]


def f32_case_bits(v):
    if v == "-NAN":
        return 0xFFC00000
    return 0x7FC00000 if is_nan(v) else f32_bits(v)


@kernel
def fmin_fmax_table():
    olds = [f32_case_bits(o) for o, _ in FMINMAX_CASES]
    srcs = [f32_case_bits(s) for _, s in FMINMAX_CASES]
    mins = [pick("min", o, s, bits_f32, 1 << 31) for o, s in zip(olds, srcs)]
    maxs = [pick("max", o, s, bits_f32, 1 << 31) for o, s in zip(olds, srcs)]
    return (expect_hex("mins", mins) + expect_hex("maxs", maxs) + expect_hex("old_min", olds)
            + expect_hex("old_max", olds))


# (memory, compare, new value) triples of fcmpwr_table.
FCMPWR_CASES = [
    (1.0, 1.0, 2.0), (1.0, 1.5, 2.0), (-0.0, 0.0, 3.0), (0.0, -0.0, 3.0),
    (NAN, NAN, 4.0), (INF, INF, 5.0), (-INF, INF, 6.0), (0.1, 0.1, -7.0),
    (-2.0, -2.0, 0.0), (2.0, -2.0, 9.0), (-0.0, -0.0, 10.0), (1e-30, 1e-30, 11.0),
    (NAN, 1.0, 12.0), (1.0, NAN, 13.0), (123.5, 123.5, -0.0), (-5.0, 5.0, 15.0),
]


def fcmpwr_bits():
    return ([f32_case_bits(m) for m, _, _ in FCMPWR_CASES],
            [f32_case_bits(c) for _, c, _ in FCMPWR_CASES],
            [f32_case_bits(v) for _, _, v in FCMPWR_CASES])


@kernel
def fcmpwr_table():
    mem, cmp, val = fcmpwr_bits()
    fmem, imem = [], []
    for m, c, v in zip(mem, cmp, val):
        # fcmpwr: a float comparison (-0 == +0, NaN equals nothing); cmpxchg: bits.
        fmem.append(v if bits_f32(m) == bits_f32(c) else m)
        imem.append(v if m == c else m)
    return (expect_hex("fmem", fmem) + expect_hex("imem", imem) + expect_hex("old_f", mem)
            + expect_hex("old_i", mem))


def reduce_inputs():
    return [((i * 37) % 101 - 50) * 0.25 for i in range(128)]


@kernel
def fmin_fmax_reduce():
    x = reduce_inputs()
    bmin, bmax = [INF] * 8, [-INF] * 8
    for i, v in enumerate(x):
        bmin[i % 8] = min(bmin[i % 8], v)
        bmax[i % 8] = max(bmax[i % 8], v)
    return (expect_list("bucket_min", bmin) + expect_list("bucket_max", bmax)
            + expect_list("total", [min(x), max(x)]))


# (old, src) pairs of half_table as binary16 bit patterns, each used by two lanes; cas starts
# equal to mins and is compared with src.
HALF_CASES = [
    (0x3C00, 0x4000), (0x4000, 0x3C00), (0x8000, 0x0000), (0x0000, 0x8000),
    (0x7E00, 0x3C00), (0x3C00, 0x7E00), (0xFC00, 0x4500), (0x7C00, 0xBC00),
    (0xBE00, 0xBE00), (0x8000, 0x8000), (0x4200, 0xC200), (0x3800, 0x3400),
    (0x7BFF, 0xFBFF), (0x7E00, 0x8000), (0xC000, 0xC000), (0x0400, 0x0000),
]


@kernel
def half_table():
    cases = HALF_CASES * 2
    olds = [o for o, _ in cases]
    mins = [pick("min", o, s, bits_f16, 1 << 15) for o, s in cases]
    maxs = [pick("max", o, s, bits_f16, 1 << 15) for o, s in cases]
    # fcmpwr.16 with the new value -2.0 (0xc000): a float comparison, as for 32 bits.
    cas = [0xC000 if bits_f16(o) == bits_f16(s) else o for o, s in cases]
    return (expect_hex("mins", mins, 4) + expect_hex("maxs", maxs, 4)
            + expect_hex("cas", cas, 4) + expect_hex("old", olds * 3, 4))


# ---------------------------------------------------------------------------------------------
# control.cl


@kernel
def if_else():
    n = 128
    data = random_ints(5, 0, 1000, n)
    counters = [0] * 8
    odd, even = [M32] * n, [M32] * n
    for i, v in enumerate(data):
        if v & 1:
            odd[i] = counters[i % 4]; counters[i % 4] += 1
        else:
            even[i] = counters[4 + i % 4]; counters[4 + i % 4] += v
    n_odd = sum(1 for v in data if v & 1)
    return (expect_list("counters", counters)
            + [f"count(odd_tickets, 0xffffffff) == {n - n_odd}",
               f"sum(odd_tickets) == {sum(odd)}",
               f"count(even_old, 0xffffffff) == {n_odd}"])


@kernel
def lane_loops():
    n = 64
    data = random_ints(7, 0, 1000, n)
    acc = [0] * 8
    trips = []
    for i, v in enumerate(data):
        for k in range(v % 7):
            acc[(i + k) % 8] += k + 1
        trips.append(v % 7)
    return expect_list("acc", acc) + expect_list("trips", trips)


@kernel
def cas_loop_add():
    sums = [0.0] * 4
    for i in range(128):
        sums[i % 4] += float(i)
    # retries counts failed compare-and-swaps, which depends on the schedule: not checked.
    return expect_list("sums", sums)


@kernel
def nested_break():
    n = 128
    data = random_ints(9, 0, 65536, n)
    masks, bins = [0] * 8, [0] * 16
    for i, v in enumerate(data):
        for k in range(16):
            if v >> k == 0:
                break
            if (v >> k) & 1:
                if k & 1:
                    masks[i % 8] |= 1 << k
                else:
                    bins[k] += 1
    return expect_hex("masks", masks) + expect_list("bins", bins)


@kernel
def early_exit():
    n, limit = 128, 100
    data = random_ints(13, 0, 1000, n)
    total, maxima, own = 0, [0] * 3, [0] * n
    for i in range(limit):
        total += data[i]
        maxima[i % 3] = max(maxima[i % 3], data[i])
        own[i] += 1
    return ([f"sum == {{{total}}}"] + expect_list("maxima", maxima)
            + ["own[0..100] == 1", "own[100..128] == 0"])


# ---------------------------------------------------------------------------------------------
# patterns.cl


@kernel
def block_io():
    data = random_ints(29, 0, 1000, 64)
    hist = [0] * 16
    for v in data:
        hist[v % 16] += 1
    return expect_list("hist", hist) + expect_list("out", [2 * v for v in data])


@kernel
def histogram():
    data = random_ints(23, 0, 1000, 256)
    hist = [0] * 64
    for v in data:
        hist[v % 64] += 1
    return expect_list("hist", hist) + ["total == {256}"]


@kernel
def aggregated():
    n = 128
    c = [0, 0, 1000, 1000, M32, 0, 0, M32, 0]
    s = [2**31 - 1, -2**31]
    q = 0
    for i in range(n):
        c[0] += 1
        c[1] += i
        c[2] = (c[2] - 2) & M32
        c[3] = (c[3] - 1) & M32
        c[4] = min(c[4], i + 5)
        c[5] = max(c[5], i)
        c[6] |= 1 << (i % 32)
        c[7] &= ~(1 << (i % 29)) & M32
        c[8] ^= i
        s[0] = min(s[0], 40 - i)
        s[1] = max(s[1], i - 40)
        q = (q + (i << 32)) & M64
    return [f"c == {{{', '.join(hexes(c))}}}", f"s == {{{s[0]}, {s[1]}}}", f"q == {{{q}}}"]


@kernel
def uniform_tickets():
    n = 64
    # Tickets 0..n-1 in some order; slot t holds the id of the work-item that got ticket t.
    return ["counter == {64}", f"sum(slots) == {sum(range(n))}", "min(slots) == 0",
            f"max(slots) == {n - 1}", "count(slots, 0xffffffff) == 0"]


@kernel
def compact():
    data = random_ints(3, -1000, 1000, 256)
    kept = [v for v in data if v % 3 == 0]       # Python's % agrees with C's for "== 0"
    k = len(kept)
    return [f"count == {{{k}}}", f"count(out, -1) == {256 - k}", f"out[{k}..256] == -1",
            f"sum(out) == {sum(kept) - (256 - k)}", f"min(out) == {min(min(kept), -1)}",
            f"max(out) == {max(kept)}"]


@kernel
def stack_alloc():
    n = 64
    return ["top == {0}", f"sum(stack) == {sum(range(n))}", "min(stack) == 0",
            f"max(stack) == {n - 1}"]


@kernel
def argmax64():
    x = random_ints(17, 0, 100000, 256)
    packed = [(v << 32) | (M32 - i) for i, v in enumerate(x)]
    best = [max(packed)] + [max(packed[j::4]) for j in range(4)]
    return expect_hex("best", best, 16)


@kernel
def c11_atomics():
    n = 128
    u = list(range(6 * n))
    s = [2**31 - 1] * 4 + [-2**31] * 4
    q = [0, 0]
    out = [0] * (4 * n)
    for i in range(n):
        out[i] = u[i]; u[i] += 1
        u[n + i % 4] = (u[n + i % 4] - i) & M32
        u[n + 4 + i % 4] |= 1 << (i % 32)
        s[i % 4] = min(s[i % 4], i - 64)
        s[4 + i % 4] = max(s[4 + i % 4], 64 - i)
        q[i % 2] = (q[i % 2] + (i << 33)) & M64
        u[2 * n + i] = 3 * i
        out[n + i] = u[3 * n + i]
        out[2 * n + i] = u[4 * n + i]; u[4 * n + i] = 7 * i
        expected = 5 * n + i if i % 2 == 0 else i
        if u[5 * n + i] == expected:
            u[5 * n + i] = 0xC0000000 | i
        else:
            expected = u[5 * n + i]
        out[3 * n + i] = expected
    return (expect_list("u", u) + expect_list("s", s) + expect_list("q", q)
            + expect_list("out", out))


# ---------------------------------------------------------------------------------------------
# Checking the launch files


def launch_expects():
    """{kernel: [expect text]} from corpus/visa/*.launch, comments stripped."""
    found = {}
    for path in sorted(HERE.glob("*.launch")):
        current = None
        for line in path.read_text().splitlines():
            line = line.split("//")[0].strip()
            m = re.match(r"\.kernel\s+(\S+)", line)
            if m:
                current = m.group(1)
                found.setdefault(current, [])
            elif line.startswith(".expect") and current:
                found[current].append(re.sub(r"\s+", " ", line[len(".expect"):].strip()))
    return found


def main():
    if len(sys.argv) > 1:
        for name in sys.argv[1:]:
            for line in KERNELS[name]():
                print(f".expect {line}")
        return 0
    found = launch_expects()
    bad = 0
    for name, fn in KERNELS.items():
        want = [re.sub(r"\s+", " ", e) for e in fn()]
        have = found.get(name)
        if have is None:
            print(f"MISSING {name}: no .kernel section in corpus/visa/*.launch")
            bad += 1
        elif have != want:
            print(f"DIFFER  {name}:")
            for e in want:
                if e not in have:
                    print(f"  model:  .expect {e}")
            for e in have:
                if e not in want:
                    print(f"  launch: .expect {e}")
            bad += 1
        else:
            print(f"ok      {name} ({len(want)} expectations)")
    for name in sorted(set(found) - set(KERNELS)):
        print(f"EXTRA   {name}: not modelled")
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
