//! Memory accesses and the address model: what one load, store or atomic touches, and where a
//! lane's access lands.
//!
//! Every memory op carries one [`MemAccess`]: the space, the type, the memory order and scope,
//! and an [`Address`] *mode* that says how a lane computes its address: [`Address::Linear`]
//! (`[base + offset]`), [`Address::Indexed`] (`[R.X4+UR+imm]`) and [`Address::Surface`] (an
//! element of a surface by coordinates, resolved through the launch's header pool, see
//! [`super::surface`]); tile arrays will join them as a new mode, and every backend then has to
//! say what it does with it (the enum is matched exhaustively).
//!
//! # Device addresses
//!
//! * Global memory is one arena; its device addresses start at [`GLOBAL_BASE`], so address 0
//!   (a null pointer) and everything below the arena are out of range.
//! * Shared-memory addresses are byte offsets into the CTA's window.
//! * A PTX *generic* address is resolved per lane ([`resolve`]): at or above [`GLOBAL_BASE`] it
//!   is that global address; inside `GENERIC_SHARED_BASE ..+ SHARED_WINDOW_BYTES` it is the
//!   shared offset `address - GENERIC_SHARED_BASE` (PTX `cvta.shared` adds the base,
//!   `cvta.to.shared` subtracts it; `cvta.global` is the identity); anything else is in no
//!   space. The two windows never overlap.
//!
//! # Who computes what
//!
//! [`LinearAddress::form`] decides, once, which arithmetic a linear address uses in its space
//! ([`LinearForm`]); [`LinearForm::eval`] is that arithmetic on values and [`resolve`] the
//! generic windows. The interpreter calls them per lane. The JIT inlines the same forms and
//! windows as generated code (matching on [`LinearForm`], so it makes no decision of its own);
//! a future mode that the JIT does not inline calls [`MemAccess::lane_address`] and [`resolve`]
//! from its slow path. Alignment and range checks belong to the memory regions (`crate::exec`):
//! natural alignment first, then range, on the address the access itself names.

use super::limits::SHARED_WINDOW_BYTES;
pub use super::surface::SurfaceAddress;
use super::{MemOrder, Operand, Pred, Reg, Scope, Space, Ty, Use};

/// Device address of the first byte of the global arena.
pub const GLOBAL_BASE: u64 = 0x0000_7f00_0000_0000;

/// Where a CTA's shared window appears in the generic address space: the generic address of
/// shared offset `o` is `GENERIC_SHARED_BASE + o`. It lies below [`GLOBAL_BASE`], and the
/// window of [`SHARED_WINDOW_BYTES`] ends far below it.
pub const GENERIC_SHARED_BASE: u64 = 0x0000_7e00_0000_0000;

// A region offset must be aligned exactly when the device address is (the JIT's one-compare
// check and the trap reason it derives from the address rely on it).
// 16 covers the largest access (a 128-bit one).
const _: () = assert!(GLOBAL_BASE % 16 == 0 && GENERIC_SHARED_BASE % 16 == 0);
// `AtomicInst::spin` on a generic address takes the bank from the generic address.
const _: () = assert!(GENERIC_SHARED_BASE % 128 == 0);
const _: () = assert!(GENERIC_SHARED_BASE + SHARED_WINDOW_BYTES as u64 <= GLOBAL_BASE);

/// One memory access: a load's, a store's or an atomic's.
///
/// # Vector accesses
///
/// With `vector == n > 1` the access is `n` elements of `ty` at consecutive addresses (SASS
/// `LDG.E.128`, `REDG.E.ADD.F32x2`; PTX `ld.v4`, `red.v2.f32`). The whole access is
/// [`MemAccess::bytes`] long and its address must be aligned to that size (the PTX ISA: "the
/// vector's total size" is its alignment; SASS `.64`/`.128` accesses alike), checked with the
/// range of the whole access before any element is touched, so a faulting lane accesses
/// nothing. Each element is then a separate access of `ty` (the PTX memory model treats a
/// vector access as a set of scalar accesses; a vector atomic performs each element as an
/// independent atomic, in element order). The data operand holds the elements in consecutive
/// registers: element `i` in the `ty.regs()` registers from `reg + i * ty.regs()` (narrow
/// loaded elements each extended to a full register), [`MemAccess::words`] registers in all.
/// Validation allows 1, 2, 4 or 8 elements of at most 16 bytes in all, never of
/// [`Ty::B128`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MemAccess {
    /// The address space the access names (generic addresses resolve per lane).
    pub space: Space,
    /// The accessed type (of each element of a vector access): `ty.bytes()` bytes.
    pub ty: Ty,
    /// Elements accessed: 1 for a scalar access, 2, 4 or 8 for a vector access (see the type
    /// docs).
    pub vector: u8,
    /// The memory order (see [`MemOrder`] for the host lowering).
    pub order: MemOrder,
    /// The thread scope (every scope is coherent on one host; kept and reported).
    pub scope: Scope,
    /// How each lane computes the address.
    pub addr: Address,
}

impl MemAccess {
    /// Bytes the whole access covers (`ty.bytes() * vector`); its address must be a multiple.
    pub fn bytes(&self) -> u32 {
        self.ty.bytes() * u32::from(self.vector)
    }

    /// 32-bit registers of the access's data operand (`ty.regs() * vector`).
    pub fn words(&self) -> u16 {
        self.ty.regs() * u16::from(self.vector)
    }

    /// True for a vector access (more than one element).
    pub fn is_vector(&self) -> bool {
        self.vector > 1
    }

    /// The address one lane's access names, before generic resolution: `read(r, words)` is the
    /// lane's register `r` (or the pair from `r` when `words == 2`; 0 for `RZ`).
    #[inline]
    pub fn lane_address(&self, read: impl FnMut(Reg, u16) -> u64) -> u64 {
        self.addr.effective(self.space, read)
    }
}

/// An address mode: how a lane computes the address of its access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Address {
    /// `[base + offset]`: see [`LinearAddress`].
    Linear(LinearAddress),
    /// `[base.Xscale + index + offset]`: see [`IndexedAddress`].
    Indexed(IndexedAddress),
    /// An element of a surface, by coordinates: see [`SurfaceAddress`]. It has no linear form:
    /// where it lands depends on the launch's header pool, so backends resolve it per lane with
    /// [`super::surface::resolve`] (which may also make the access do nothing, or fault) before
    /// any memory check; [`Address::effective`] is never its address.
    Surface(SurfaceAddress),
}

impl Address {
    /// The absolute address `[imm]`.
    pub fn absolute(offset: i64) -> Address {
        Address::Linear(LinearAddress {
            base: None,
            base_bits: 32,
            offset,
        })
    }

    /// `[base + offset]` with a 32-bit base register.
    pub fn base32(base: Reg, offset: i64) -> Address {
        Address::Linear(LinearAddress {
            base: Some(base),
            base_bits: 32,
            offset,
        })
    }

    /// `[base.64 + offset]` with a 64-bit base register pair.
    pub fn base64(base: Reg, offset: i64) -> Address {
        Address::Linear(LinearAddress {
            base: Some(base),
            base_bits: 64,
            offset,
        })
    }

    /// The immediate offset of a linear or indexed address (a surface address has none).
    pub fn offset_mut(&mut self) -> Option<&mut i64> {
        match self {
            Address::Linear(l) => Some(&mut l.offset),
            Address::Indexed(x) => Some(&mut x.offset),
            Address::Surface(_) => None,
        }
    }

    /// The surface address, if this is one.
    pub fn surface(&self) -> Option<&SurfaceAddress> {
        match self {
            Address::Surface(s) => Some(s),
            Address::Linear(_) | Address::Indexed(_) => None,
        }
    }

    /// The predicate the address writes: a surface address's sparse status `Ps`, unless PT.
    pub fn status_pred(&self) -> Option<Pred> {
        match self {
            Address::Surface(s) if !s.sparse.is_pt() => Some(s.sparse),
            Address::Surface(_) | Address::Linear(_) | Address::Indexed(_) => None,
        }
    }

    /// The address in `space` given the lane's registers (`read` as in
    /// [`MemAccess::lane_address`]). A surface address has no linear address: this is 0 for it,
    /// an address out of every range (backends resolve surfaces before they get here).
    #[inline]
    pub fn effective(&self, space: Space, read: impl FnMut(Reg, u16) -> u64) -> u64 {
        match self {
            Address::Linear(l) => l.form(space).eval(read),
            Address::Indexed(x) => x.eval(space, read),
            Address::Surface(_) => 0,
        }
    }

    /// Calls `f` with a [`Use::Src`] for every register the address reads.
    pub fn for_each_source(&self, f: &mut impl FnMut(Use)) {
        match self {
            Address::Linear(l) => {
                if let Some(base) = l.base {
                    f(Use::Src {
                        operand: Operand::Reg(base),
                        words: l.base_words(),
                    });
                }
            }
            Address::Indexed(x) => {
                f(Use::Src {
                    operand: Operand::Reg(x.base),
                    words: u16::from(x.base_bits / 32),
                });
                f(Use::Src {
                    operand: Operand::Reg(x.index),
                    words: u16::from(x.index_bits / 32),
                });
            }
            // Each coordinate is one word (their alignment is a surface rule, not a pair's),
            // then the handle.
            Address::Surface(s) => {
                for i in 0..s.dim.coords() {
                    f(Use::Src {
                        operand: Operand::Reg(s.coords.word(i)),
                        words: 1,
                    });
                }
                f(Use::Src {
                    operand: s.handle.operand(),
                    words: 1,
                });
            }
        }
    }
}

/// `[base.Xscale + index + offset]`: SASS's register-plus-uniform-register forms
/// (`[R2.X4+UR4]`, `[R0+UR6+0x10]`, `[R2.64+UR4]`).
///
/// The address is `(base << scale) + index + offset`, each register zero-extended to 64 bits
/// when it is 32 bits wide, summed modulo 2^64; in the shared space the sum is taken modulo
/// 2^32 (the shared window is addressed with 32 bits, as in [`LinearAddress`]). Either
/// register may be `RZ` (zero). Validation guarantees `base_bits` and `index_bits` are 32 or
/// 64 and `scale` is at most 4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct IndexedAddress {
    /// The scaled register (the low register of a pair when 64 bits wide).
    pub base: Reg,
    /// Width of `base`: 32 or 64.
    pub base_bits: u8,
    /// `base` is shifted left by this many bits (`.X4` is 2, `.X8` 3, `.X16` 4).
    pub scale: u8,
    /// The added register, typically a uniform register (the low register of a pair).
    pub index: Reg,
    /// Width of `index`: 32 or 64.
    pub index_bits: u8,
    /// The immediate offset.
    pub offset: i64,
}

impl IndexedAddress {
    /// The address in `space` (see the type docs); `read` as in [`MemAccess::lane_address`].
    #[inline]
    pub fn eval(&self, space: Space, mut read: impl FnMut(Reg, u16) -> u64) -> u64 {
        let mut word = |r: Reg, bits: u8| {
            if r.is_rz() {
                0
            } else if bits == 64 {
                read(r, 2)
            } else {
                read(r, 1) & 0xffff_ffff
            }
        };
        let base = word(self.base, self.base_bits);
        let index = word(self.index, self.index_bits);
        let sum = (base << self.scale)
            .wrapping_add(index)
            .wrapping_add(self.offset as u64);
        match space {
            Space::Shared => sum & 0xffff_ffff,
            Space::Global | Space::Generic | Space::Const => sum,
        }
    }
}

/// `[base + offset]`.
///
/// The effective address depends on the space and the base width ([`LinearAddress::form`]):
/// * Shared (`ATOMS`, `LDS`, `STS` and PTX `.shared` with a 32-bit base): if `base` is `None`
///   or `RZ`, the address is `offset` zero-extended (the `[ImmU24]` form). Otherwise it is the
///   32-bit wrapping sum of the base register and `offset` sign-extended to 32 bits
///   (`[Ra + ImmS24]`), per `000_6d05a8552870c0ae.txt`.
/// * 64-bit bases (`[R2.64 + 0x10]`, PTX `%rd` registers): the 64-bit wrapping sum of the
///   register pair and `offset`.
/// * 32-bit bases in global space: the base is zero-extended to 64 bits, then `offset` added.
///
/// Validation guarantees `base_bits` is 32 or 64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinearAddress {
    /// The base register (the low register of a pair for a 64-bit base); `None` or `RZ` for an
    /// absolute address.
    pub base: Option<Reg>,
    /// Width of the base register: 32 or 64.
    pub base_bits: u8,
    /// The immediate offset.
    pub offset: i64,
}

/// The arithmetic of a linear address in its space (see [`LinearAddress`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinearForm {
    /// A constant address.
    Absolute(u64),
    /// `(Ra + offset) mod 2^32`, zero-extended: a 32-bit base in the shared window.
    Wrap32 {
        /// The base register.
        base: Reg,
        /// The offset as a 32-bit word (sign-extended to 32 bits, then wrapped).
        offset: u32,
    },
    /// `zext64(Ra) + offset mod 2^64`: a 32-bit base outside the shared window.
    Extend32 {
        /// The base register.
        base: Reg,
        /// The offset as a 64-bit word.
        offset: u64,
    },
    /// `(Ra+1:Ra) + offset mod 2^64`: a 64-bit base pair.
    Pair64 {
        /// The low register of the pair.
        base: Reg,
        /// The offset as a 64-bit word.
        offset: u64,
    },
}

impl LinearAddress {
    /// True when the base is absent or RZ (the absolute `[ImmU24]` form).
    pub fn is_absolute(&self) -> bool {
        self.base.is_none_or(Reg::is_rz)
    }

    /// Registers the base occupies: 2 for a 64-bit base, else 1.
    pub fn base_words(&self) -> u16 {
        if self.base_bits == 64 {
            2
        } else {
            1
        }
    }

    /// Which arithmetic computes this address in `space`.
    #[inline]
    pub fn form(&self, space: Space) -> LinearForm {
        let offset = self.offset as u64;
        match self.base.filter(|b| !b.is_rz()) {
            None => LinearForm::Absolute(match space {
                Space::Shared => offset & 0xffff_ffff,
                Space::Global | Space::Generic | Space::Const => offset,
            }),
            Some(base) if self.base_bits == 64 => LinearForm::Pair64 { base, offset },
            Some(base) => match space {
                Space::Shared => LinearForm::Wrap32 {
                    base,
                    offset: self.offset as i32 as u32,
                },
                Space::Global | Space::Generic | Space::Const => {
                    LinearForm::Extend32 { base, offset }
                }
            },
        }
    }
}

impl LinearForm {
    /// The address, reading the base with `read(base, words)` (one word, or the pair).
    #[inline]
    pub fn eval(self, read: impl FnOnce(Reg, u16) -> u64) -> u64 {
        match self {
            LinearForm::Absolute(a) => a,
            LinearForm::Wrap32 { base, offset } => {
                u64::from((read(base, 1) as u32).wrapping_add(offset))
            }
            LinearForm::Extend32 { base, offset } => {
                (read(base, 1) & 0xffff_ffff).wrapping_add(offset)
            }
            LinearForm::Pair64 { base, offset } => read(base, 2).wrapping_add(offset),
        }
    }
}

/// Where an address of `space` lands: for a concrete space, that space at that address; for a
/// generic address, the window it falls in (see the module docs), or `None` when it falls in
/// neither (an out-of-range access).
#[inline]
pub fn resolve(space: Space, address: u64) -> Option<(Space, u64)> {
    match space {
        Space::Global | Space::Shared | Space::Const => Some((space, address)),
        Space::Generic => {
            if address >= GLOBAL_BASE {
                Some((Space::Global, address))
            } else if (GENERIC_SHARED_BASE..GENERIC_SHARED_BASE + u64::from(SHARED_WINDOW_BYTES))
                .contains(&address)
            {
                Some((Space::Shared, address - GENERIC_SHARED_BASE))
            } else {
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generic_addresses_resolve_to_one_window() {
        let g = Space::Generic;
        assert_eq!(
            resolve(g, GLOBAL_BASE + 8),
            Some((Space::Global, GLOBAL_BASE + 8))
        );
        assert_eq!(
            resolve(g, GENERIC_SHARED_BASE + 8),
            Some((Space::Shared, 8))
        );
        assert_eq!(
            resolve(g, GENERIC_SHARED_BASE + SHARED_WINDOW_BYTES as u64),
            None
        );
        assert_eq!(resolve(g, GENERIC_SHARED_BASE - 1), None);
        assert_eq!(resolve(g, 0), None);
        assert_eq!(resolve(Space::Shared, 5), Some((Space::Shared, 5)));
    }

    #[test]
    fn linear_forms_follow_space_and_base_width() {
        let r = Reg(4);
        let reads = |v: u64| move |_: Reg, words: u16| if words == 2 { v } else { v & 0xffff_ffff };
        // [Ra + ImmS24] in shared memory wraps in 32 bits.
        let a = Address::base32(r, -0x10);
        assert_eq!(a.effective(Space::Shared, reads(8)), 0xffff_fff8);
        // The same in global memory: zero-extended base, 64-bit sum.
        assert_eq!(
            a.effective(Space::Global, reads(8)),
            8u64.wrapping_sub(0x10)
        );
        // A pair base adds in 64 bits.
        let w = Address::base64(r, 0x10);
        assert_eq!(
            w.effective(Space::Global, reads(GLOBAL_BASE)),
            GLOBAL_BASE + 0x10
        );
        // Absolute: the ImmU24 form is zero-extended in shared memory.
        assert_eq!(
            Address::absolute(-4).effective(Space::Shared, |_, _| unreachable!()),
            0xffff_fffc
        );
        assert_eq!(
            Address::base32(Reg::RZ, 0x20).effective(Space::Shared, |_, _| unreachable!()),
            0x20
        );
    }
}
