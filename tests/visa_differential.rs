//! Differential property test for the vISA front end (issue 12): generated vISA *text* kernels
//! are loaded through the public engine API (`Engine::load_with_launch`, a launch text of
//! `.grid`/`.block`/`.buffer`/`.payload` lines as the corpus's `.launch` files have) and run on
//! the reference interpreter and on the Cranelift JIT with a deterministic schedule. Both must
//! leave identical buffers, fail identically (trap reason, instruction, CTA, warp, lane and
//! address) and report identical launch counters.
//!
//! Kernels look like what IGC writes and GenX_IR accepts (a sample was assembled with
//! `scripts/visa_corpus.py check`, see `docs/visa.md`): SIMD8, SIMD16 and SIMD32 threads,
//! several per work-group and two work-groups; ALU instructions (unsigned, signed and float
//! classes, 64-bit adds, conversions) under execution controls `(Mk, n)` and `(Mk_NM, n)` of
//! every size 1–32 the width allows, predicated `(P)`/`(!P)` by predicates that `cmp` and `setp`
//! set; divergent forward `goto`s (if and if/else shapes, uniform `(M1, 1)` branches, loop
//! breaks) and backward ones (loops with per-channel trip counts), nested; every `svm_atomic`
//! op IGC's text has a name for (predec has none, so GenX_IR would reject it) at `.16`, 32 and
//! `.64` (float ops at 16 and 32 bits), execution sizes 1, 2, 4 and 8 at any mask, `%null`
//! destinations, all channels on one address, pairs and distinct addresses, on data with NaN,
//! ±0 and extreme integers; `svm_gather`/`svm_scatter` of 1-, 4- and 8-byte blocks and
//! `svm_block_ld`/`svm_block_st`. A few addresses are made misaligned or out of range so that
//! some kernels trap. At the end every thread stores its general variables and predicates to
//! the `out` buffers, so a divergence bug shows in memory.
//!
//! Each case is generated from one `u64` seed; a failure prints the seed and the kernel's text,
//! and `ATOMJIT_VISA_DIFF_SEED=<hex seed>` reruns just that kernel.

use atomjit::engine::{Backend, Config, Engine, Failure, Overrides, RunReport};
use atomjit::exec::random::SplitMix64;
use atomjit::front::LaunchText;
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::time::Duration;

/// The `svm_atomic` ops of IGC's text (`minsint`/`maxsint` are the signed min/max), and
/// whether they are float ops (16 and 32 bits only).
const ATOMIC_OPS: &[(&str, bool)] = &[
    ("add", false),
    ("sub", false),
    ("inc", false),
    ("dec", false),
    ("min", false),
    ("max", false),
    ("minsint", false),
    ("maxsint", false),
    ("xchg", false),
    ("cmpxchg", false),
    ("and", false),
    ("or", false),
    ("xor", false),
    ("fmin", true),
    ("fmax", true),
    ("fcmpwr", true),
];

/// General variables X0..X3 (`ud`, with `d` and `f` aliases) and Q0, Q1 (`uq`): what the kernel
/// computes, stored at the end.
const NV: u32 = 4;
const NQ: u32 = 2;
/// Elements of `data` (u32), `atom` (u32) and `atom64` (u64).
const DATA_LEN: u32 = 64;
const ATOM_LEN: u32 = 64;
const ATOM64_LEN: u32 = 32;

/// Values that make atomics and comparisons interesting: small integers (so that cmpxchg and
/// fcmpwr sometimes succeed and min/max tie), extreme integers, and floats with ±0, NaNs,
/// infinities and ordinary numbers.
const SPECIAL: &[u32] = &[
    0,
    1,
    2,
    3,
    5,
    7,
    0xffff_ffff,
    0x8000_0000,
    0x7fff_ffff,
    0xffff,
    0x8000,
    0x7fc0_0000, // quiet NaN
    0x7f80_0001, // signalling NaN
    0xffc0_0000, // negative NaN
    0x3f80_0000, // 1.0
    0xbfc0_0000, // -1.5
    0x7f80_0000, // +inf
    0xff80_0000, // -inf
    0x0000_0001, // smallest denormal
    0x4000_0000, // 2.0
];

/// What a generated kernel contains, for the coverage tests.
#[derive(Default, Debug)]
struct Features {
    simd: u32,
    /// `(op, bits)` of every `svm_atomic`.
    atomics: BTreeSet<(&'static str, u32)>,
    atomic_sizes: BTreeSet<u32>,
    backward_gotos: u32,
    forward_gotos: u32,
    no_mask: u32,
    predicated_atomics: u32,
    null_dst_atomics: u32,
    exec_sizes: BTreeSet<u32>,
    /// `svm_gather`/`svm_scatter`/`svm_block_*` mnemonics.
    memory: BTreeSet<String>,
    bad_addresses: u32,
}

struct Kernel {
    text: String,
    launch: String,
    features: Features,
}

struct Gen {
    rng: SplitMix64,
    /// SIMD width.
    w: u32,
    body: Vec<String>,
    labels: u32,
    /// Enclosing loops: (depth index, break label if any break was generated).
    loops: Vec<String>,
    depth: u32,
    /// Items (instructions or control structures) still to generate in the current block.
    budget: i32,
    f: Features,
    /// Bad addresses still allowed (misaligned or outside every buffer).
    bad_left: u32,
}

impl Gen {
    fn below(&mut self, n: u32) -> u32 {
        (self.rng.next() % n as u64) as u32
    }
    fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u32) as usize]
    }
    fn emit(&mut self, line: String) {
        self.body.push(format!("    {line}"));
    }
    fn label(&mut self) -> String {
        self.labels += 1;
        format!("BB_{}", self.labels)
    }
    fn place(&mut self, label: &str) {
        self.body.push(String::new());
        self.body.push(format!("{label}:"));
    }

    /// A mask offset and size: `n` channels from a multiple of 4 (aligned to `n` from 4 up)
    /// inside the thread's `w` channels, from `sizes`.
    fn exec(&mut self, sizes: &[u32]) -> (u32, u32) {
        let sizes: Vec<u32> = sizes.iter().copied().filter(|&s| s <= self.w).collect();
        let n = self.pick(&sizes);
        let step = n.max(4);
        let o = self.below(self.w.div_ceil(step).max(1)) * step;
        let o = if o + n > self.w { 0 } else { o };
        self.f.exec_sizes.insert(n);
        (o, n)
    }
    /// `(Mk, n)` or `(Mk_NM, n)`.
    fn ctrl(&mut self, o: u32, n: u32, nm: bool) -> String {
        if nm {
            self.f.no_mask += 1;
        }
        format!("(M{}{}, {n})", o / 4 + 1, if nm { "_NM" } else { "" })
    }
    fn guard(&mut self, percent: u32) -> String {
        if self.chance(percent) {
            format!(
                "({}P{}) ",
                if self.chance(50) { "!" } else { "" },
                1 + self.below(2)
            )
        } else {
            String::new()
        }
    }

    /// Kernel prologue: global id, lane, and every variable initialised in all channels.
    fn prologue(&mut self, local_size: &str) {
        let w = self.w;
        self.emit("or (M1_NM, 1) %cr0(0,0)<1> %cr0(0,0)<0;1,0> 0x4c0:ud".into());
        self.emit(format!(
            "mul (M1_NM, 1) GBASE(0,0)<1> R0(0,1)<0;1,0> {local_size}<0;1,0>"
        ));
        self.emit(format!("mov (M1, {w}) GID(0,0)<1> LID(0,0)<1;1,0>"));
        self.emit(format!(
            "and (M1, {w}) LANE(0,0)<1> GID(0,0)<1;1,0> 0x{:x}:ud",
            w - 1
        ));
        self.emit(format!(
            "add (M1, {w}) GID(0,0)<1> GID(0,0)<1;1,0> GBASE(0,0)<0;1,0>"
        ));
        // X_k = data[(gid * (2k + 1) + c) mod 64], by svm_gather in messages of up to 16.
        for k in 0..NV {
            let c = self.below(DATA_LEN);
            self.emit(format!(
                "mul (M1, {w}) IDX(0,0)<1> GID(0,0)<1;1,0> 0x{:x}:ud",
                2 * k + 1
            ));
            self.emit(format!(
                "add (M1, {w}) IDX(0,0)<1> IDX(0,0)<1;1,0> 0x{c:x}:ud"
            ));
            self.emit(format!(
                "and (M1, {w}) IDX(0,0)<1> IDX(0,0)<1;1,0> 0x{:x}:ud",
                DATA_LEN - 1
            ));
            self.emit(format!("shl (M1, {w}) IDX(0,0)<1> IDX(0,0)<1;1,0> 0x2:ud"));
            self.emit(format!(
                "add (M1, {w}) ADDR(0,0)<1> BDATA(0,0)<0;1,0> IDX(0,0)<1;1,0>"
            ));
            for chunk in 0..w.div_ceil(16) {
                let n = w.min(16);
                self.emit(format!(
                    "svm_gather.4.1 (M{}, {n}) ADDR.{} X{k}.{}",
                    chunk * 4 + 1,
                    chunk * 128,
                    chunk * 64
                ));
            }
        }
        // Q_k: X_k, with X_{k+1} as the high half.
        for k in 0..NQ {
            self.emit(format!("mov (M1, {w}) Q{k}_32(0,0)<2> X{k}(0,0)<1;1,0>"));
            self.emit(format!(
                "mov (M1, {w}) Q{k}_32(0,1)<2> X{}(0,0)<1;1,0>",
                k + 1
            ));
        }
        // The guard predicates: by setp or by a comparison.
        for p in 1..=2 {
            if self.chance(40) {
                let bits = self.rng.next() & if w == 32 { 0xffff_ffff } else { (1 << w) - 1 };
                self.emit(format!("setp (M1_NM, {w}) P{p} 0x{bits:x}:ud"));
            } else {
                let (a, b) = (self.below(NV), self.below(NV));
                self.emit(format!(
                    "cmp.lt (M1, {w}) P{p} X{a}(0,0)<1;1,0> X{b}(0,0)<1;1,0>"
                ));
            }
        }
    }

    /// `V(r,c)` of element `e` of a variable of `size`-byte elements.
    fn at(var: &str, e: u32, size: u32) -> String {
        format!("{var}({},{})", e * size / 32, (e * size % 32) / size)
    }

    /// A source operand of the `(o, n)` channels: the matching elements, or one element
    /// broadcast.
    fn src(&mut self, var: &str, o: u32, size: u32) -> String {
        if self.chance(15) {
            let e = self.below(self.w);
            format!("{}<0;1,0>", Self::at(var, e, size))
        } else {
            format!("{}<1;1,0>", Self::at(var, o, size))
        }
    }

    fn alu(&mut self) {
        let (o, n) = self.exec(&[1, 2, 4, 8, 16, 32]);
        let nm = self.chance(15);
        let ctrl = self.ctrl(o, n, nm);
        let g = self.guard(25);
        let d = self.below(NV);
        let (a, b) = (self.below(NV), self.below(NV));
        match self.below(10) {
            0..=3 => {
                // unsigned
                let op = self.pick(&["add", "mul", "and", "or", "xor", "min", "max", "shl", "shr"]);
                let sa = self.src(&format!("X{a}"), o, 4);
                let sb = if self.chance(30) {
                    format!("0x{:x}:ud", self.pick(SPECIAL))
                } else {
                    self.src(&format!("X{b}"), o, 4)
                };
                let dst = Self::at(&format!("X{d}"), o, 4);
                self.emit(format!("{g}{op} {ctrl} {dst}<1> {sa} {sb}"));
            }
            4..=5 => {
                // signed
                let op = self.pick(&["add", "mul", "min", "max", "asr", "mulh"]);
                let sa = self.src(&format!("X{a}d"), o, 4);
                let sb = if self.chance(30) {
                    format!("0x{:x}:d", self.pick(SPECIAL))
                } else {
                    self.src(&format!("X{b}d"), o, 4)
                };
                let dst = Self::at(&format!("X{d}d"), o, 4);
                self.emit(format!("{g}{op} {ctrl} {dst}<1> {sa} {sb}"));
            }
            6 => {
                // float
                let op = self.pick(&["add", "mul"]);
                let sa = self.src(&format!("X{a}f"), o, 4);
                let sb = self.src(&format!("X{b}f"), o, 4);
                let dst = Self::at(&format!("X{d}f"), o, 4);
                self.emit(format!("{g}{op} {ctrl} {dst}<1> {sa} {sb}"));
            }
            7 => {
                // conversions and selects
                let dst_ty = self.pick(&["d", "f", ""]);
                let src_ty = self.pick(&["d", "f", ""]);
                let sa = self.src(&format!("X{a}{src_ty}"), o, 4);
                let dst = Self::at(&format!("X{d}{dst_ty}"), o, 4);
                if self.chance(30) {
                    let p = 1 + self.below(2);
                    let neg = if self.chance(50) { "!" } else { "" };
                    let sb = self.src(&format!("X{b}"), o, 4);
                    let dst = Self::at(&format!("X{d}"), o, 4);
                    let sa = self.src(&format!("X{a}"), o, 4);
                    self.emit(format!("({neg}P{p}) sel {ctrl} {dst}<1> {sa} {sb}"));
                } else {
                    self.emit(format!("{g}mov {ctrl} {dst}<1> {sa}"));
                }
            }
            8 => {
                // 64-bit: add a ud to a uq, or xor two uq
                let q = self.below(NQ);
                let qa = self.below(NQ);
                let dst = Self::at(&format!("Q{q}"), o, 8);
                let sa = self.src(&format!("Q{qa}"), o, 8);
                if self.chance(50) {
                    let sb = self.src(&format!("X{b}"), o, 4);
                    self.emit(format!("{g}add {ctrl} {dst}<1> {sa} {sb}"));
                } else {
                    let qb = self.below(NQ);
                    let sb = self.src(&format!("Q{qb}"), o, 8);
                    self.emit(format!("{g}xor {ctrl} {dst}<1> {sa} {sb}"));
                }
            }
            _ => {
                // unary
                let op = self.pick(&["not", "cbit"]);
                let sa = self.src(&format!("X{a}"), o, 4);
                let dst = Self::at(&format!("X{d}"), o, 4);
                self.emit(format!("{g}{op} {ctrl} {dst}<1> {sa}"));
            }
        }
    }

    /// `cmp` into a guard predicate, in one class of operands.
    fn cmp(&mut self, p: &str, o: u32, n: u32) {
        let rel = self.pick(&["eq", "ne", "gt", "ge", "lt", "le"]);
        let ty = self.pick(&["", "d", "f"]);
        let (a, b) = (self.below(NV), self.below(NV));
        let sa = self.src(&format!("X{a}{ty}"), o, 4);
        let sb = match ty {
            "" if self.chance(40) => format!("0x{:x}:ud", self.below(8)),
            "d" if self.chance(40) => format!("0x{:x}:d", self.below(8)),
            _ => self.src(&format!("X{b}{ty}"), o, 4),
        };
        let ctrl = format!("(M{}, {n})", o / 4 + 1);
        self.emit(format!("cmp.{rel} {ctrl} {p} {sa} {sb}"));
    }

    /// Fills ADDR (all channels, no mask) with `base + index(c) × size`, index(c) one of the
    /// patterns; sometimes (a few per kernel) misaligned or far outside every buffer.
    fn addresses(&mut self, base: &str, len: u32, size: u32) {
        let w = self.w;
        let k = self.below(len);
        match self.below(4) {
            0 => {
                // one address for every channel: contention
                self.emit(format!("mov (M1_NM, {w}) IDX(0,0)<1> 0x{k:x}:ud"));
            }
            1 => {
                // pairs of channels
                self.emit(format!(
                    "shr (M1_NM, {w}) IDX(0,0)<1> LANE(0,0)<1;1,0> 0x1:ud"
                ));
                self.emit(format!(
                    "add (M1_NM, {w}) IDX(0,0)<1> IDX(0,0)<1;1,0> 0x{k:x}:ud"
                ));
            }
            2 => {
                // from the global id: threads meet on addresses
                self.emit(format!(
                    "add (M1_NM, {w}) IDX(0,0)<1> GID(0,0)<1;1,0> 0x{k:x}:ud"
                ));
            }
            _ => {
                // distinct within the thread
                self.emit(format!(
                    "add (M1_NM, {w}) IDX(0,0)<1> LANE(0,0)<1;1,0> 0x{k:x}:ud"
                ));
            }
        }
        self.emit(format!(
            "and (M1_NM, {w}) IDX(0,0)<1> IDX(0,0)<1;1,0> 0x{:x}:ud",
            len - 1
        ));
        self.emit(format!(
            "shl (M1_NM, {w}) IDX(0,0)<1> IDX(0,0)<1;1,0> 0x{:x}:ud",
            size.trailing_zeros()
        ));
        if self.bad_left > 0 && self.chance(25) {
            self.bad_left -= 1;
            self.f.bad_addresses += 1;
            let bad = if size > 1 && self.chance(50) {
                1
            } else {
                0x10_0000
            };
            let e = self.below(w);
            let dst = Self::at("IDX", e, 4);
            self.emit(format!("add (M1_NM, 1) {dst}<1> {dst}<0;1,0> 0x{bad:x}:ud"));
        }
        self.emit(format!(
            "add (M1_NM, {w}) ADDR(0,0)<1> {base}(0,0)<0;1,0> IDX(0,0)<1;1,0>"
        ));
    }

    /// A raw operand of `n` channels of `esize` bytes in a variable of `var_bytes` bytes: a
    /// GRF-aligned offset that keeps it inside.
    fn raw(&mut self, var: &str, n: u32, esize: u32, var_bytes: u32) -> String {
        let slots = (var_bytes - n * esize) / 32 + 1;
        format!("{var}.{}", self.below(slots) * 32)
    }

    fn atomic(&mut self) {
        let (op, float) = self.pick(ATOMIC_OPS);
        let bits = if float {
            self.pick(&[16, 32])
        } else {
            self.pick(&[16, 32, 64])
        };
        self.f.atomics.insert((op, bits));
        let (o, n) = self.exec(&[1, 2, 4, 8]);
        self.f.atomic_sizes.insert(n);
        let nm = self.chance(10);
        let w = self.w;
        if bits == 64 {
            self.addresses("BATOM64", ATOM64_LEN, 8);
        } else {
            self.addresses("BATOM", ATOM_LEN * 32 / bits, bits / 8);
        }
        let esize = if bits == 64 { 8 } else { 4 };
        let data = |g: &mut Gen| {
            if bits == 64 {
                let q = g.below(NQ);
                g.raw(&format!("Q{q}"), n, 8, 8 * w)
            } else {
                let v = g.below(NV);
                g.raw(&format!("X{v}"), n, 4, 4 * w)
            }
        };
        let dst = if self.chance(20) {
            self.f.null_dst_atomics += 1;
            "%null.0".to_string()
        } else {
            data(self)
        };
        let src0 = if matches!(op, "inc" | "dec") {
            "%null.0".to_string()
        } else {
            data(self)
        };
        let src1 = if matches!(op, "cmpxchg" | "fcmpwr") {
            data(self)
        } else {
            "%null.0".to_string()
        };
        let _ = esize;
        let addr = self.raw("ADDR", n, 8, 8 * w);
        let g = self.guard(35);
        if !g.is_empty() {
            self.f.predicated_atomics += 1;
        }
        let ctrl = self.ctrl(o, n, nm);
        let suffix = match bits {
            16 => ".16",
            64 => ".64",
            _ => "",
        };
        self.emit(format!(
            "{g}svm_atomic.{op}{suffix} {ctrl} {addr} {dst} {src0} {src1}"
        ));
    }

    fn memory(&mut self) {
        let w = self.w;
        match self.below(5) {
            0 | 1 => {
                // svm_gather / svm_scatter of 4-byte blocks (1 or 2 of them) or 1-byte blocks
                let scatter = self.chance(40);
                let (block, blocks): (u32, u32) =
                    self.pick(&[(4, 1), (4, 1), (4, 2), (1, 2), (1, 4)]);
                let (o, n) = self.exec(&[8, 16]);
                let n = if block == 4 && blocks == 2 {
                    8.min(n)
                } else {
                    n
                };
                let o = if o + n > w { 0 } else { o / n * n };
                let bytes = if block == 1 {
                    4 * blocks.div_ceil(4) * n
                } else {
                    block * blocks * n
                };
                if bytes > 4 * w {
                    return;
                }
                if block == 4 {
                    self.addresses("BDATA", DATA_LEN, 4);
                } else {
                    self.addresses("BDATA", DATA_LEN * 4, 1);
                }
                let v = self.below(NV);
                let data = self.raw(&format!("X{v}"), 1, bytes, 4 * w);
                let addr = self.raw("ADDR", n, 8, 8 * w);
                let g = self.guard(25);
                let nm = self.chance(10);
                let ctrl = self.ctrl(o, n, nm);
                let m = if scatter { "svm_scatter" } else { "svm_gather" };
                self.f.memory.insert(format!("{m}.{block}.{blocks}"));
                self.emit(format!("{g}{m}.{block}.{blocks} {ctrl} {addr} {data}"));
            }
            2 => {
                // svm_gather.8.1 / svm_scatter.8.1 of qwords
                let scatter = self.chance(40);
                let (o, n) = self.exec(&[8, 16]);
                self.addresses("BDATA", DATA_LEN / 2, 8);
                let q = self.below(NQ);
                let data = self.raw(&format!("Q{q}"), n, 8, 8 * w);
                let addr = self.raw("ADDR", n, 8, 8 * w);
                let g = self.guard(25);
                let ctrl = self.ctrl(o, n, false);
                let m = if scatter { "svm_scatter" } else { "svm_gather" };
                self.f.memory.insert(format!("{m}.8.1"));
                self.emit(format!("{g}{m}.8.1 {ctrl} {addr} {data}"));
            }
            _ => {
                // svm_block_ld / svm_block_st at a 16-byte aligned scalar address
                let store = self.chance(40);
                let owords = self.pick(&[1, 2, 4, 8]).min(w * 4 / 16);
                let at = self.below(DATA_LEN * 4 / 16 - owords + 1) * 16;
                let at = if self.bad_left > 0 && self.chance(25) {
                    self.bad_left -= 1;
                    self.f.bad_addresses += 1;
                    at + 0x20_0000
                } else {
                    at
                };
                self.emit("mov (M1_NM, 1) BADDR(0,0)<1> BDATA(0,0)<0;1,0>".into());
                self.emit(format!(
                    "add (M1_NM, 1) BADDR(0,0)<1> BADDR(0,0)<0;1,0> 0x{at:x}:ud"
                ));
                let v = self.below(NV);
                let m = if store {
                    "svm_block_st"
                } else {
                    "svm_block_ld"
                };
                self.f.memory.insert(m.to_string());
                self.emit(format!("{m} ({owords}) BADDR(0,0)<0;1,0> X{v}.0"));
            }
        }
    }

    /// A sequence of instructions and nested control flow.
    fn block(&mut self) {
        while self.budget > 0 {
            self.budget -= 1;
            match self.below(20) {
                0..=6 => self.alu(),
                7..=10 => self.atomic(),
                11 => self.memory(),
                12 => {
                    let (o, n) = self.exec(&[4, 8, 16, 32]);
                    let p = format!("P{}", 1 + self.below(2));
                    self.cmp(&p, o, n);
                }
                13..=15 if self.depth < 3 => self.branch(),
                16..=17 if self.depth < 3 && self.loops.len() < 2 => self.lp(),
                18 if !self.loops.is_empty() && self.depth < 3 => self.brk(),
                19 if self.depth > 0 => return,
                _ => self.alu(),
            }
        }
    }

    fn nested(&mut self, budget: i32) {
        let saved = self.budget;
        self.budget = budget;
        self.depth += 1;
        self.block();
        self.depth -= 1;
        self.budget = saved - (budget - self.budget.max(0));
    }

    /// The control predicate of the current depth (`P3`, `P4`, `P5`), set over all channels.
    fn control_pred(&mut self) -> String {
        let p = format!("P{}", 3 + self.depth);
        let w = self.w;
        self.cmp(&p, 0, w);
        p
    }

    /// if or if/else: a divergent forward goto over the "then" side, which ends with IGC's
    /// unconditional `goto (M1, 1)` over the "else" side. Sometimes a uniform branch
    /// (`(P) goto (M1, 1)`: the first channel decides).
    fn branch(&mut self) {
        let p = self.control_pred();
        let neg = if self.chance(30) { "!" } else { "" };
        let size = if self.chance(15) { 1 } else { self.w };
        let other = self.label();
        self.f.forward_gotos += 1;
        self.emit(format!("({neg}{p}) goto (M1, {size}) {other}"));
        let b = 1 + self.below(6) as i32;
        self.nested(b);
        if self.chance(60) {
            let end = self.label();
            self.f.forward_gotos += 1;
            self.emit(format!("goto (M1, 1) {end}"));
            self.place(&other);
            let b = 1 + self.below(6) as i32;
            self.nested(b);
            self.place(&end);
        } else {
            self.place(&other);
        }
    }

    /// A do-while loop with a per-channel trip count (1 to 4): a counter of its own, a
    /// backward goto with the channels whose counter is still positive.
    fn lp(&mut self) {
        let w = self.w;
        let d = self.loops.len();
        let v = self.below(NV);
        let top = self.label();
        let exit = self.label();
        self.emit(format!(
            "and (M1, {w}) CNT{d}(0,0)<1> X{v}d(0,0)<1;1,0> 0x3:d"
        ));
        self.place(&top);
        self.loops.push(exit.clone());
        let b = 2 + self.below(6) as i32;
        self.nested(b);
        self.loops.pop();
        self.emit(format!(
            "add (M1, {w}) CNT{d}(0,0)<1> CNT{d}(0,0)<1;1,0> 0xffffffff:d"
        ));
        let p = format!("P{}", 3 + self.depth);
        self.emit(format!("cmp.ge (M1, {w}) {p} CNT{d}(0,0)<1;1,0> 0x0:d"));
        self.f.backward_gotos += 1;
        self.emit(format!("({p}) goto (M1, {w}) {top}"));
        self.place(&exit);
    }

    /// A divergent break out of the innermost loop.
    fn brk(&mut self) {
        let exit = self.loops.last().unwrap().clone();
        let p = self.control_pred();
        self.f.forward_gotos += 1;
        let w = self.w;
        self.emit(format!("({p}) goto (M1, {w}) {exit}"));
    }

    /// Every thread stores X0..X3, its guard predicates (as bits 0 and 1 of a word) and Q0, Q1
    /// at `out[plane × total + gid]` / `out64[plane × total + gid]`, all channels running.
    fn epilogue(&mut self, total: u32) {
        let w = self.w;
        self.emit(format!("(P1) sel (M1, {w}) PV(0,0)<1> 0x1:ud 0x0:ud"));
        self.emit(format!("(P2) sel (M1, {w}) IDX(0,0)<1> 0x2:ud 0x0:ud"));
        self.emit(format!(
            "or (M1, {w}) PV(0,0)<1> PV(0,0)<1;1,0> IDX(0,0)<1;1,0>"
        ));
        let planes: Vec<(String, &str, u32)> = (0..NV)
            .map(|k| (format!("X{k}"), "BOUT", k))
            .chain([("PV".to_string(), "BOUT", NV)])
            .chain((0..NQ).map(|k| (format!("Q{k}"), "BOUT64", k)))
            .collect();
        for (var, base, plane) in planes {
            let size: u32 = if base == "BOUT64" { 8 } else { 4 };
            self.emit(format!(
                "add (M1, {w}) IDX(0,0)<1> GID(0,0)<1;1,0> 0x{:x}:ud",
                plane * total
            ));
            self.emit(format!(
                "shl (M1, {w}) IDX(0,0)<1> IDX(0,0)<1;1,0> 0x{:x}:ud",
                size.trailing_zeros()
            ));
            self.emit(format!(
                "add (M1, {w}) ADDR(0,0)<1> {base}(0,0)<0;1,0> IDX(0,0)<1;1,0>"
            ));
            for chunk in 0..w.div_ceil(16) {
                let n = w.min(16);
                self.emit(format!(
                    "svm_scatter.{size}.1 (M{}, {n}) ADDR.{} {var}.{}",
                    chunk * 4 + 1,
                    chunk * 128,
                    chunk * 16 * size
                ));
            }
        }
        self.emit("ret (M1, 1)".into());
    }
}

fn list(values: impl Iterator<Item = String>) -> String {
    format!("{{{}}}", values.collect::<Vec<_>>().join(", "))
}

fn generate(seed: u64) -> Kernel {
    let mut g = Gen {
        rng: SplitMix64::new(seed),
        w: 8,
        body: Vec::new(),
        labels: 0,
        loops: Vec::new(),
        depth: 0,
        budget: 0,
        f: Features::default(),
        bad_left: 0,
    };
    g.w = [8, 16, 32][(seed % 3) as usize];
    g.f.simd = g.w;
    g.bad_left = u32::from(g.chance(30));
    let w = g.w;
    let threads = 2 + g.below(2);
    let block = w * threads;
    let grid = 2;
    let total = grid * block;
    // The payload (docs/visa.md): local ids x at 32 (one GRF of words, two at SIMD32), the
    // cross-thread data at 128 (224 at SIMD32) with the local size x at +12, the buffers'
    // addresses from +32, the enqueued local size after them.
    let ct = if w == 32 { 224 } else { 128 };
    let lid_bytes = if w == 32 { 64 } else { 32 };
    let buffers = ["BDATA", "BATOM", "BATOM64", "BOUT", "BOUT64"];
    let els = ct + 32 + 8 * buffers.len() as u32;
    let use_els = g.chance(50);
    let local_size = if use_els { "ELS(0,0)" } else { "HDR(0,3)" };
    g.budget = 15 + g.below(20) as i32;
    g.prologue(local_size);
    g.block();
    // whatever budget is left goes to atomics at depth 0
    while g.below(3) != 0 {
        g.atomic();
    }
    g.epilogue(total);

    let mut t = String::new();
    writeln!(t, "// atomjit visa_differential seed {seed:#x}").unwrap();
    writeln!(t, ".version 4.1").unwrap();
    writeln!(t, ".kernel \"vdiff\"").unwrap();
    writeln!(t).unwrap();
    let decl = |t: &mut String, name: &str, ty: &str, n: u32, align: &str, alias: &str| {
        writeln!(
            t,
            ".decl {name} v_type=G type={ty} num_elts={n} align={align}{alias}"
        )
        .unwrap();
    };
    decl(&mut t, "R0", "ud", 8, "hword", " alias=<%r0, 0>");
    decl(&mut t, "LID", "uw", lid_bytes / 2, "hword", "");
    decl(&mut t, "HDR", "ud", 8, "hword", "");
    decl(&mut t, "ELS", "ud", 3, "dword", "");
    for b in buffers {
        decl(&mut t, b, "uq", 1, "qword", "");
    }
    decl(&mut t, "GBASE", "ud", 1, "dword", "");
    decl(&mut t, "BADDR", "uq", 1, "qword", "");
    for v in ["GID", "LANE", "IDX", "PV"] {
        decl(&mut t, v, "ud", w, "hword", "");
    }
    for k in 0..2 {
        decl(&mut t, &format!("CNT{k}"), "d", w, "hword", "");
    }
    for k in 0..NV {
        decl(&mut t, &format!("X{k}"), "ud", w, "hword", "");
        let root = format!(" alias=<X{k}, 0>");
        decl(&mut t, &format!("X{k}d"), "d", w, "hword", &root);
        decl(&mut t, &format!("X{k}f"), "f", w, "hword", &root);
    }
    for k in 0..NQ {
        decl(&mut t, &format!("Q{k}"), "uq", w, "hword", "");
        let root = format!(" alias=<Q{k}, 0>");
        decl(&mut t, &format!("Q{k}_32"), "ud", 2 * w, "hword", &root);
    }
    decl(&mut t, "ADDR", "uq", w, "hword", "");
    for p in 1..=5 {
        writeln!(t, ".decl P{p} v_type=P num_elts={w}").unwrap();
    }
    writeln!(t, ".input LID offset=32 size={lid_bytes}").unwrap();
    writeln!(t, ".input HDR offset={ct} size=32").unwrap();
    for (i, b) in buffers.iter().enumerate() {
        writeln!(t, ".input {b} offset={} size=8", ct + 32 + 8 * i as u32).unwrap();
    }
    if use_els {
        writeln!(t, ".input ELS offset={els} size=12").unwrap();
    }
    writeln!(t, ".kernel_attr SimdSize={w}").unwrap();
    writeln!(t, ".function \"_main_0\"").unwrap();
    writeln!(t).unwrap();
    writeln!(t, "_main_0:").unwrap();
    for line in &g.body {
        writeln!(t, "{line}").unwrap();
    }

    let value = |g: &mut Gen| -> u32 {
        if g.chance(50) {
            g.pick(SPECIAL)
        } else {
            g.below(8)
        }
    };
    let data = list((0..DATA_LEN).map(|_| format!("{:#x}", value(&mut g))));
    let atom = list((0..ATOM_LEN).map(|_| format!("{:#x}", value(&mut g))));
    let atom64 = list((0..ATOM64_LEN).map(|_| {
        let hi = if g.chance(30) { value(&mut g) } else { 0 };
        format!("{:#x}", (u64::from(hi) << 32) | u64::from(value(&mut g)))
    }));
    let mut launch = String::new();
    writeln!(launch, ".grid {grid}").unwrap();
    writeln!(launch, ".block {block}").unwrap();
    if use_els {
        writeln!(launch, ".payload {els} enqueued_local_size").unwrap();
    }
    writeln!(launch, ".buffer data u32[{DATA_LEN}] = {data}").unwrap();
    writeln!(launch, ".buffer atom u32[{ATOM_LEN}] = {atom}").unwrap();
    writeln!(launch, ".buffer atom64 u64[{ATOM64_LEN}] = {atom64}").unwrap();
    writeln!(launch, ".buffer out u32[{}] = 0xdeadbeef", (NV + 1) * total).unwrap();
    writeln!(launch, ".buffer out64 u64[{}] = 0xdeadbeef", NQ * total).unwrap();
    Kernel {
        text: t,
        launch,
        features: g.f,
    }
}

fn run(k: &Kernel, backend: Backend) -> Result<RunReport, String> {
    run_lowered(k, backend, true)
}

/// Runs `k` on `backend`; `promoted`: with the variables accessed one element per channel in
/// registers (what every load does), else with every variable in the GRF file.
fn run_lowered(k: &Kernel, backend: Backend, promoted: bool) -> Result<RunReport, String> {
    let mut config = Config::default();
    config
        .backend(backend)
        .deterministic(true)
        .threads(1)
        .timeout(Some(Duration::from_secs(30)));
    let mut launch = LaunchText::new();
    launch.push("launch", &k.launch);
    let engine = Engine::new(&config);
    let module = if promoted {
        engine.load_with_launch("generated.visaasm", &k.text, &launch)
    } else {
        let program = atomjit::front::parse_visa_unpromoted("generated.visaasm", &k.text, &launch)
            .map_err(|e| format!("load without promotion: {e}"))?;
        engine.load_program(program)
    }
    .map_err(|e| format!("load: {e}"))?;
    module
        .run("vdiff", &Overrides::default())
        .map_err(|e| format!("run on {backend}: {e}"))
}

/// A failure with the instruction index left out (promotion and the lowering's shortcuts
/// change how many IR instructions a vISA instruction takes, not which one traps).
fn located(f: &Option<Failure>) -> String {
    match f {
        Some(Failure::Trap(t)) => {
            let mut t = (**t).clone();
            t.pc = 0;
            format!("{t:?}")
        }
        other => describe(other),
    }
}

/// The launch counters that do not depend on time or the host.
fn counters(r: &RunReport) -> String {
    let l = &r.launch;
    format!(
        "{:?} ctas {} lanes {} quanta {} yields {} divergences {} reconvergences {} dissolved {} barriers {} spins {}",
        l.stats,
        l.ctas,
        l.lanes,
        l.quanta,
        l.yields,
        l.divergences,
        l.reconvergences,
        l.dissolved_joins,
        l.barrier_releases,
        l.spins
    )
}

fn describe(f: &Option<Failure>) -> String {
    match f {
        None => "finished".into(),
        Some(Failure::Trap(t)) => format!("{t:?}"),
        Some(Failure::Watchdog(w)) => format!("watchdog: {w}"),
    }
}

/// The first element in which two runs' buffers differ, in words naming the runs `names`.
fn buffer_difference(x: &RunReport, y: &RunReport, names: (&str, &str)) -> Option<String> {
    let (a, b) = x
        .buffers
        .iter()
        .zip(&y.buffers)
        .find(|(a, b)| a.bytes != b.bytes)?;
    let i = (0..a.bytes.len()).find(|&i| a.bytes[i] != b.bytes[i])? / a.elem.bytes() as usize;
    Some(format!(
        "buffer `{}` differs first at element {i}: {} {:?}, {} {:?}",
        a.name,
        names.0,
        a.get(i),
        names.1,
        b.get(i)
    ))
}

/// Runs seed's kernel on both backends; `Ok(trapped)` when they agree.
fn check_seed(seed: u64) -> Result<bool, TestCaseError> {
    let k = generate(seed);
    let fail = |what: String| {
        TestCaseError::fail(format!(
            "seed {seed:#x}: {what}\n--- kernel ---\n{}--- launch ---\n{}",
            k.text, k.launch
        ))
    };
    let interp = run(&k, Backend::Interp).map_err(fail)?;
    let jit = run(&k, Backend::Jit).map_err(fail)?;
    if matches!(interp.failure, Some(Failure::Watchdog(_))) {
        return Err(fail(format!("watchdog: {}", describe(&interp.failure))));
    }
    let same_failure = match (&interp.failure, &jit.failure) {
        (None, None) => true,
        (Some(Failure::Trap(a)), Some(Failure::Trap(b))) => a == b,
        _ => false,
    };
    if !same_failure {
        return Err(fail(format!(
            "outcomes differ\n interp: {}\n jit:    {}",
            describe(&interp.failure),
            describe(&jit.failure)
        )));
    }
    if let Some(d) = buffer_difference(&interp, &jit, ("interp", "jit")) {
        return Err(fail(d));
    }
    let (ci, cj) = (counters(&interp), counters(&jit));
    if ci != cj {
        return Err(fail(format!(
            "launch counters differ\n interp: {ci}\n jit:    {cj}"
        )));
    }
    // Variables in registers must be indistinguishable from variables in the GRF file.
    let file = run_lowered(&k, Backend::Interp, false).map_err(fail)?;
    if located(&file.failure) != located(&interp.failure) {
        return Err(fail(format!(
            "promotion changed the outcome\n in registers: {}\n in the file:  {}",
            describe(&interp.failure),
            describe(&file.failure)
        )));
    }
    if let Some(d) = buffer_difference(&interp, &file, ("in registers", "in the file")) {
        return Err(fail(format!("promotion changed a buffer: {d}")));
    }
    Ok(interp.failure.is_some())
}

fn cases() -> u32 {
    if std::env::var_os("ATOMJIT_VISA_DIFF_SEED").is_some() {
        return 1;
    }
    std::env::var("ATOMJIT_VISA_DIFF_CASES").map_or(200, |n| {
        n.parse()
            .expect("ATOMJIT_VISA_DIFF_CASES is a number of cases")
    })
}

proptest! {
    // 200 cases by default (about 15 s); `ATOMJIT_VISA_DIFF_CASES=N` for a longer sweep; one
    // with `ATOMJIT_VISA_DIFF_SEED`.
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn interpreter_and_jit_agree_on_visa(seed in any::<u64>()) {
        if let Ok(only) = std::env::var("ATOMJIT_VISA_DIFF_SEED") {
            let only = u64::from_str_radix(only.trim_start_matches("0x"), 16)
                .expect("ATOMJIT_VISA_DIFF_SEED is hex");
            check_seed(only)?;
        } else {
            check_seed(seed)?;
        }
    }
}

/// `ATOMJIT_VISA_DIFF_DUMP=DIR` writes the kernels of seeds 0..20 (0..N with
/// `ATOMJIT_VISA_DIFF_DUMP_SEEDS=N`) as `DIR/seed_S.visaasm` with `.launch` sidecars, for
/// `scripts/visa_corpus.py check DIR/*.visaasm`, which assembles them with GenX_IR (and for
/// `atomjit run DIR/seed_S.visaasm`).
#[test]
fn dump_sample_kernels() {
    let Some(dir) = std::env::var_os("ATOMJIT_VISA_DIFF_DUMP") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    std::fs::create_dir_all(&dir).unwrap();
    let seeds: u64 = std::env::var("ATOMJIT_VISA_DIFF_DUMP_SEEDS").map_or(20, |n| {
        n.parse().expect("ATOMJIT_VISA_DIFF_DUMP_SEEDS is a number")
    });
    for seed in 0..seeds {
        let k = generate(seed);
        std::fs::write(dir.join(format!("seed_{seed}.visaasm")), &k.text).unwrap();
        std::fs::write(dir.join(format!("seed_{seed}.launch")), &k.launch).unwrap();
    }
}

/// Seeds the coverage tests look at.
const COVERAGE_SEEDS: std::ops::Range<u64> = 0..100;

/// The generator cannot silently lose coverage: over a fixed set of seeds every svm_atomic op
/// at every width it has, every SIMD width, every atomic execution size, `_NM` controls,
/// predicated atomics, `%null` destinations, backward and forward gotos and every memory
/// instruction occur.
#[test]
fn generated_kernels_cover_every_atomic_op_width_and_control() {
    let mut atomics = BTreeSet::new();
    let mut simd = BTreeSet::new();
    let mut sizes = BTreeSet::new();
    let mut exec_sizes = BTreeSet::new();
    let mut memory = BTreeSet::new();
    let (mut backward, mut forward, mut nm, mut predicated, mut null) = (0, 0, 0, 0, 0);
    for seed in COVERAGE_SEEDS {
        let f = generate(seed).features;
        atomics.extend(f.atomics);
        simd.insert(f.simd);
        sizes.extend(f.atomic_sizes);
        exec_sizes.extend(f.exec_sizes);
        memory.extend(f.memory);
        backward += f.backward_gotos;
        forward += f.forward_gotos;
        nm += f.no_mask;
        predicated += f.predicated_atomics;
        null += f.null_dst_atomics;
    }
    for &(op, float) in ATOMIC_OPS {
        let widths: &[u32] = if float { &[16, 32] } else { &[16, 32, 64] };
        for &bits in widths {
            assert!(
                atomics.contains(&(op, bits)),
                "svm_atomic.{op} at {bits} bits never generated"
            );
        }
    }
    assert_eq!(simd, BTreeSet::from([8, 16, 32]));
    assert_eq!(sizes, BTreeSet::from([1, 2, 4, 8]));
    assert_eq!(exec_sizes, BTreeSet::from([1, 2, 4, 8, 16, 32]));
    for m in [
        "svm_gather.4.1",
        "svm_scatter.4.1",
        "svm_gather.4.2",
        "svm_gather.1.2",
        "svm_scatter.1.4",
        "svm_gather.8.1",
        "svm_scatter.8.1",
        "svm_block_ld",
        "svm_block_st",
    ] {
        assert!(memory.contains(m), "{m} never generated: {memory:?}");
    }
    assert!(backward >= 20, "only {backward} backward gotos");
    assert!(forward >= 40, "only {forward} forward gotos");
    assert!(nm >= 40, "only {nm} no-mask controls");
    assert!(predicated >= 40, "only {predicated} predicated atomics");
    assert!(null >= 20, "only {null} atomics with a %null destination");
}

/// Some kernels trap (a misaligned or out-of-range address), most finish: run on the
/// interpreter and the JIT, they agree either way.
#[test]
fn generated_kernels_cover_traps() {
    let mut trapped = 0;
    let mut finished = 0;
    for seed in COVERAGE_SEEDS.step_by(2) {
        match check_seed(seed) {
            Ok(true) => trapped += 1,
            Ok(false) => finished += 1,
            Err(e) => panic!("{e}"),
        }
    }
    eprintln!("{trapped} of 50 kernels trapped, {finished} finished");
    assert!(trapped >= 3, "only {trapped} of 50 kernels trapped");
    assert!(finished >= 35, "only {finished} of 50 kernels finished");
}
