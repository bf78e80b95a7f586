#!/usr/bin/env python3
"""Generates programs/sass/atomics_edges.s: one thread runs every ATOMS op and size, and every
ATOMG/RED op and type, on edge values, and stores each returned value and each memory value
afterwards. The expectations are computed here, by an independent model written straight from
the formulas of ../shared/spec/000_6d05a8552870c0ae.txt (the table "Supported Atomic Operations")
and IEEE arithmetic, not from atomjit's output.

Run: python3 programs/gen/atomics_edges.py > programs/sass/atomics_edges.s
"""
import struct

M32, M64 = (1 << 32) - 1, (1 << 64) - 1


def s32(x):
    x &= M32
    return x - (1 << 32) if x >> 31 else x


def s64(x):
    x &= M64
    return x - (1 << 64) if x >> 63 else x


def model(op, sz, m, b, c=None):
    """(returned Rd, new M) per the document's table."""
    mask = M64 if sz in ("U64", "S64") else M32
    sgn = s64 if mask == M64 else s32
    signed = sz.startswith("S")
    if op == "ADD":
        return m, (m + b) & mask
    if op == "MIN":
        return m, (b if (sgn(b) < sgn(m) if signed else b < m) else m)
    if op == "MAX":
        return m, (b if (sgn(b) > sgn(m) if signed else b > m) else m)
    if op == "INC":
        return m, 0 if m >= b else (m + 1) & mask
    if op == "DEC":
        return m, b if (m == 0 or m > b) else m - 1
    if op == "AND":
        return m, m & b
    if op == "OR":
        return m, m | b
    if op == "XOR":
        return m, m ^ b
    if op == "EXCH":
        return m, b
    if op == "CAS":
        return m, c if m == b else m
    if op == "CAST":
        return (1, c) if m == b else (0, m)
    raise ValueError(op)


def f32bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


# (op, size, M, b, c) for shared memory: every row of the document's table, at its edges.
SHARED = [
    ("ADD", "U32", 0xFFFFFFFF, 1, None), ("ADD", "U32", 5, 7, None), ("ADD", "S32", 0x7FFFFFFF, 1, None),
    ("ADD", "S32", 0xFFFFFFFF, 0xFFFFFFFF, None),
    ("MIN", "U32", 0x80000000, 1, None), ("MIN", "S32", 0x80000000, 1, None), ("MIN", "S32", 0, 0xFFFFFFFF, None),
    ("MIN", "U32", 0, 0xFFFFFFFF, None),
    ("MAX", "U32", 1, 0xFFFFFFFF, None), ("MAX", "S32", 1, 0xFFFFFFFF, None), ("MAX", "S32", 0x7FFFFFFF, 0x80000000, None),
    ("MAX", "U32", 0x7FFFFFFF, 0x80000000, None),
    ("INC", "U32", 5, 5, None), ("INC", "U32", 5, 10, None), ("INC", "U32", 7, 0, None), ("INC", "U32", 0, 0, None),
    ("INC", "U32", 0xFFFFFFFF, 0xFFFFFFFF, None), ("INC", "U32", 0xFFFFFFFE, 0xFFFFFFFF, None), ("INC", "U32", 10, 3, None),
    ("DEC", "U32", 0, 7, None), ("DEC", "U32", 10, 7, None), ("DEC", "U32", 7, 7, None), ("DEC", "U32", 1, 0, None),
    ("DEC", "U32", 0, 0, None), ("DEC", "U32", 0xFFFFFFFF, 0xFFFFFFFF, None), ("DEC", "U32", 1, 0xFFFFFFFF, None),
    ("AND", "U32", 0xF0F0F0F0, 0x0FF00FF0, None), ("AND", "S32", 0x80000001, 0xFFFFFFFF, None),
    ("OR", "U32", 0xF0F0F0F0, 0x0FF00FF0, None), ("OR", "S32", 0x80000000, 1, None),
    ("XOR", "U32", 0xF0F0F0F0, 0x0FF00FF0, None), ("XOR", "S32", 0xFFFFFFFF, 0x80000000, None),
    ("EXCH", "U32", 0xDEADBEEF, 0x12345678, None), ("EXCH", "S32", 0x80000000, 0x7FFFFFFF, None),
    ("EXCH", "U64", 0x0123456789ABCDEF, 0xFEDCBA9876543210, None),
    ("CAS", "U32", 42, 42, 99), ("CAS", "U32", 42, 41, 99), ("CAS", "S32", 0xFFFFFFFF, 0xFFFFFFFF, 0x80000000),
    ("CAS", "U64", 0x100000002, 0x100000002, 0xFFFFFFFF00000000), ("CAS", "U64", 0x100000002, 0x000000002, 7),
    ("CAS", "U64", 0x100000002, 0x100000003, 7),
    ("CAST", "U32", 0, 0, 1), ("CAST", "U32", 1, 0, 1), ("CAST", "S32", 0x80000000, 0x80000000, 5),
    ("CAST", "U64", 0x200000000, 0x200000000, 3), ("CAST", "U64", 0x200000000, 0, 3),
    ("CAST.SPIN", "U32", 0, 0, 9), ("CAST.SPIN", "U32", 3, 0, 9),
]

ADDR_FORMS = ["[0x8]", "[R30-0x8]", "[R29+0x8]", "[RZ+0x8]"]


def words(v, n):
    return [(v >> (32 * i)) & M32 for i in range(n)]


def emit_mov(lines, reg, value, n):
    for i, w in enumerate(words(value, n)):
        lines.append(f"        MOV R{reg + i}, {w:#x} ;")


def main():
    out = []
    expect = []
    lines = []
    off = 0
    for i, (op, sz, m, b, c) in enumerate(SHARED):
        wide = sz == "U64"
        n = 2 if wide else 1
        rd, m_after = model(op.split(".")[0], sz, m, b, c)
        suffix = f".{op}" + ("" if sz == "U32" and i % 2 else f".{sz}")
        if sz == "U32" and i % 4 == 3:
            suffix = f".{op}.32"
        if wide and i % 2:
            suffix = f".{op}.64"
        addr = ADDR_FORMS[i % len(ADDR_FORMS)]
        lines.append(f"        // ATOMS{suffix}: M = {m:#x}, Rb = {b:#x}" + (f", Rc = {c:#x}" if c is not None else ""))
        emit_mov(lines, 2, m, n)
        lines.append(f"        STS{'.64' if wide else ''} [0x8], R2 ;")
        if c is None:
            emit_mov(lines, 8, b, n)
            lines.append(f"        ATOMS{suffix} R4, {addr}, R8 ;")
        else:
            emit_mov(lines, 8, b, n)
            emit_mov(lines, 10 if wide else 9, c, n)
            lines.append(f"        ATOMS{suffix} R4, {addr}, R8, {'R10' if wide else 'R9'} ;")
        lines.append(f"        LDS{'.64' if wide else ''} R6, [0x8] ;")
        for j in range(n):
            lines.append(f"        STG.E [R20.64+{(off + j) * 4:#x}], R{4 + j} ;")
        for j in range(n):
            lines.append(f"        STG.E [R20.64+{(off + n + j) * 4:#x}], R{6 + j} ;")
        # CAST returns 1/0 in the whole destination: a 64-bit CAST writes 0 to the high word.
        expect += words(rd, n) + words(m_after, n)
        off += 2 * n

    # Global memory: ATOMG (returns the old value) and RED (no result) on buffer g.
    g_lines = []
    g_expect = []
    goff = 0  # next free word of g
    roff = 0  # next free word of gres
    global_cases = [
        ("ATOMG", "ADD", "", 0xFFFFFFFF, 1, None, 1),
        ("ATOMG", "ADD", ".64", 0xFFFFFFFF, 1, None, 2),
        ("ATOMG", "ADD", ".S32", 0x7FFFFFFF, 1, None, 1),
        ("ATOMG", "MIN", ".S32", 0x80000000, 1, None, 1),
        ("ATOMG", "MIN", ".U64", 0x100000000, 0xFFFFFFFF, None, 2),
        ("ATOMG", "MIN", ".S64", 1, M64, None, 2),
        ("ATOMG", "MAX", ".S64", M64, 1, None, 2),
        ("ATOMG", "MAX", ".U64", M64, 1, None, 2),
        ("ATOMG", "MAX", ".S32", 0xFFFFFFFF, 0, None, 1),
        ("ATOMG", "INC", "", 3, 3, None, 1),
        ("ATOMG", "DEC", "", 0, 3, None, 1),
        ("ATOMG", "AND", "", 0xFF00FF00, 0x0FF00FF0, None, 1),
        ("ATOMG", "OR", ".64", 0xFF00000000, 0xFF, None, 2),
        ("ATOMG", "XOR", "", 0xFFFFFFFF, 0x0F0F0F0F, None, 1),
        ("ATOMG", "EXCH", ".64", 0x1122334455667788, 0x99, None, 2),
        ("ATOMG", "CAS", "", 5, 5, 6, 1),
        ("ATOMG", "CAS", ".64", 0x500000005, 0x500000005, 0x600000006, 2),
        ("ATOMG", "ADD", ".F32.FTZ.RN", f32bits(1.5), f32bits(2.25), None, 1),
        ("ATOMG", "ADD", ".F32.FTZ.RN", 0x00000001, 0x00000000, None, 1),
        ("ATOMG", "ADD", ".F32.FTZ.RN", 0x80000000, 0x807FFFFF, None, 1),
        ("ATOMG", "ADD", ".F64.RN", f64bits(0.1), f64bits(0.2), None, 2),
        ("RED", "ADD", "", 10, 5, None, 1),
        ("RED", "MIN", ".S32", 0, 0xFFFFFFFF, None, 1),
        ("RED", "MAX", ".U64", 0x100000000, 0xFFFFFFFF, None, 2),
        ("RED", "INC", "", 9, 9, None, 1),
        ("RED", "DEC", "", 0, 9, None, 1),
        ("RED", "XOR", "", 0xAAAAAAAA, 0xFFFFFFFF, None, 1),
        ("RED", "EXCH", "", 1, 2, None, 1),
        ("RED", "ADD", ".F32.FTZ.RN", f32bits(1.0), f32bits(2.0 ** -24), None, 1),
    ]
    for kind, op, sz, m, b, c, n in global_cases:
        if n == 2 and goff % 2:
            goff += 1  # 64-bit atomics need 8-byte alignment
        off_b = goff * 4
        if sz.startswith(".F32"):
            fm, fb = struct.unpack("<f", struct.pack("<I", m))[0], struct.unpack("<f", struct.pack("<I", b))[0]
            # FTZ: subnormal inputs and result flush to sign-preserving zero; then IEEE RN add.
            flush = lambda bits, v: (-0.0 if bits >> 31 else 0.0) if (bits & 0x7F800000) == 0 else v
            r = struct.unpack("<f", struct.pack("<f", flush(m, fm) + flush(b, fb)))[0]
            rb = f32bits(r)
            if (rb & 0x7F800000) == 0:
                rb &= 0x80000000
            rd, m_after = m, rb
        elif sz.startswith(".F64"):
            fm, fb = struct.unpack("<d", struct.pack("<Q", m))[0], struct.unpack("<d", struct.pack("<Q", b))[0]
            rd, m_after = m, f64bits(fm + fb)
        else:
            base = {"": "U32", ".64": "U64", ".S32": "S32", ".U64": "U64", ".S64": "S64"}[sz]
            rd, m_after = model(op, base, m, b, c)
        g_lines.append(f"        // {kind}.E.{op}{sz}: M = {m:#x}, operand {b:#x}" + (f", swap {c:#x}" if c is not None else ""))
        emit_mov(g_lines, 2, m, n)
        g_lines.append(f"        STG.E{'.64' if n == 2 else ''} [R22.64+{off_b:#x}], R2 ;")
        emit_mov(g_lines, 8, b, n)
        if kind == "RED":
            g_lines.append(f"        RED.E.{op}{sz}.STRONG.GPU [R22.64+{off_b:#x}], R8 ;")
        elif c is not None:
            emit_mov(g_lines, 10, c, n)
            g_lines.append(f"        ATOMG.E.{op}{sz}.STRONG.GPU PT, R4, [R22.64+{off_b:#x}], R8, R10 ;")
        else:
            g_lines.append(f"        ATOMG.E.{op}{sz}.STRONG.GPU PT, R4, [R22.64+{off_b:#x}], R8 ;")
        g_lines.append(f"        LDG.E{'.64' if n == 2 else ''} R6, [R22.64+{off_b:#x}] ;")
        # Results go to gres: [returned value (0 for RED), memory after], n words each.
        for j in range(n):
            src = "RZ" if kind == "RED" else f"R{4 + j}"
            g_lines.append(f"        STG.E [R24.64+{(roff + j) * 4:#x}], {src} ;")
        for j in range(n):
            g_lines.append(f"        STG.E [R24.64+{(roff + n + j) * 4:#x}], R{6 + j} ;")
        g_expect += words(0 if kind == "RED" else rd, n) + words(m_after, n)
        goff += n
        roff += 2 * n

    print("// GENERATED by programs/gen/atomics_edges.py — do not edit; edit the generator.")
    print("// One thread runs every ATOMS op and size (000_6d05a8552870c0ae.txt, table \"Supported")
    print("// Atomic Operations\") and every ATOMG/RED op and type on edge values: 0, maxima, sign")
    print("// boundaries, INC/DEC with Rb = 0, Rb = max, M > Rb, M == Rb, CAS/CAST success and failure")
    print("// (64-bit compares that differ only in the high word), F32 FTZ on subnormal inputs. Each case")
    print("// stores the returned value and the memory word afterwards; the expected lists come from the")
    print("// generator's own model of the document's formulas.")
    print(".kernel atoms_edges")
    print(".grid 1")
    print(".block 1")
    print(".shared 16")
    print(f".buffer out u32[{len(expect)}] = 0")
    print("        MOV R20, c[0x0][out] ;")
    print("        MOV R21, c[0x0][out+0x4] ;")
    print("        MOV R30, 0x10 ;")
    print("        MOV R29, RZ ;")
    print("\n".join(lines))
    print("        EXIT ;")
    print(".expect out == {" + ", ".join(str(v) for v in expect) + "}")
    print()
    print(".kernel global_edges")
    print(".grid 1")
    print(".block 1")
    print(f".buffer g u32[{goff}] = 0")
    print(f".buffer gres u32[{len(g_expect)}] = 0")
    print("        MOV R22, c[0x0][g] ;")
    print("        MOV R23, c[0x0][g+0x4] ;")
    print("        MOV R24, c[0x0][gres] ;")
    print("        MOV R25, c[0x0][gres+0x4] ;")
    print("\n".join(g_lines))
    print("        EXIT ;")
    print(".expect gres == {" + ", ".join(str(v) for v in g_expect) + "}")


main()
