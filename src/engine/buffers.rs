//! Buffer contents: turning initialisers into bytes, and bytes back into typed elements.
//!
//! A [`Buffer`] a run reports holds its bytes in [`Bytes`]: the frozen device memory of the
//! finished launch itself (no copy), or bytes of its own.

use crate::exec::memory::FrozenMemory;
use crate::exec::random::SplitMix64;
use crate::exec::GlobalMemory;
use crate::ir::surface::{Element, SurfaceLayout, SurfaceShape};
use crate::ir::{Init, Scalar, Ty};
use std::sync::Arc;

/// The contents of one buffer after (or before) a launch: its element type and raw
/// little-endian bytes.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Buffer {
    pub name: String,
    #[serde(serialize_with = "serialize_ty")]
    pub elem: Ty,
    /// Device address the buffer had during the launch.
    pub address: u64,
    #[serde(skip)]
    pub bytes: Bytes,
}

/// A buffer's raw bytes: read-only, a `[u8]` through `Deref`. Either a vector of their own or
/// a view of a finished launch's device memory, which stays allocated while any view of it
/// lives (cloning a view shares the memory). Build one from a `Vec<u8>` with `into()`.
#[derive(Clone, Default)]
pub struct Bytes(Storage);

#[derive(Clone)]
enum Storage {
    Owned(Vec<u8>),
    /// `len` bytes at device address `address` of `memory` (checked when made).
    Device {
        memory: Arc<FrozenMemory>,
        address: u64,
        len: u64,
    },
}

impl Default for Storage {
    fn default() -> Self {
        Storage::Owned(Vec::new())
    }
}

impl Bytes {
    /// A view of the `len` bytes at device address `address` of `memory`; `None` if they are
    /// not all inside it.
    pub fn view(memory: Arc<FrozenMemory>, address: u64, len: u64) -> Option<Bytes> {
        memory.bytes(address, len)?;
        Some(Bytes(Storage::Device {
            memory,
            address,
            len,
        }))
    }

    /// The bytes as a vector (copied if they are a view of device memory).
    pub fn into_vec(self) -> Vec<u8> {
        match self.0 {
            Storage::Owned(v) => v,
            Storage::Device { .. } => self.to_vec(),
        }
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            Storage::Owned(v) => v,
            Storage::Device {
                memory,
                address,
                len,
            } => memory
                .bytes(*address, *len)
                .expect("a view is checked when it is made"),
        }
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl From<Vec<u8>> for Bytes {
    fn from(v: Vec<u8>) -> Bytes {
        Bytes(Storage::Owned(v))
    }
}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

impl PartialEq for Bytes {
    fn eq(&self, other: &Bytes) -> bool {
        **self == **other
    }
}

impl Eq for Bytes {}

impl PartialEq<[u8]> for Bytes {
    fn eq(&self, other: &[u8]) -> bool {
        **self == *other
    }
}

impl PartialEq<Vec<u8>> for Bytes {
    fn eq(&self, other: &Vec<u8>) -> bool {
        **self == **other
    }
}

fn serialize_ty<S: serde::Serializer>(ty: &Ty, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(ty.name())
}

impl Buffer {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.bytes.len() / self.elem.bytes() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Element `i` as a [`Scalar`] (integers exactly, floats as f64).
    pub fn get(&self, i: usize) -> Option<Scalar> {
        let size = self.elem.bytes() as usize;
        let raw = self.bytes.get(i * size..(i + 1) * size)?;
        let mut word = [0u8; 8];
        word[..size].copy_from_slice(raw);
        Some(decode(self.elem, u64::from_le_bytes(word)))
    }

    /// All elements as scalars.
    pub fn values(&self) -> impl Iterator<Item = Scalar> + '_ {
        (0..self.len()).map(|i| self.get(i).expect("index in range"))
    }

    /// Calls `keep_going(i, element i)` for the elements of `range` in order, until it returns
    /// false; the index where it did, or `None`. The elements are decoded by a loop made for
    /// the element type (about a nanosecond an element, where [`Buffer::get`] takes ~15), so
    /// expectations over gigabyte buffers take seconds. Panics if `range` is outside the buffer.
    pub fn scan(
        &self,
        range: std::ops::Range<usize>,
        mut keep_going: impl FnMut(usize, Scalar) -> bool,
    ) -> Option<usize> {
        let size = self.elem.bytes() as usize;
        let bytes = &self.bytes[range.start * size..range.end * size];
        macro_rules! scan_as {
            ($ty:expr, $n:literal) => {{
                for (k, chunk) in bytes.chunks_exact($n).enumerate() {
                    let mut word = [0u8; 8];
                    word[..$n].copy_from_slice(chunk);
                    if !keep_going(range.start + k, decode($ty, u64::from_le_bytes(word))) {
                        return Some(range.start + k);
                    }
                }
                None
            }};
        }
        match self.elem {
            Ty::U8 => scan_as!(Ty::U8, 1),
            Ty::S8 => scan_as!(Ty::S8, 1),
            Ty::U16 | Ty::B16 => scan_as!(Ty::U16, 2),
            Ty::S16 => scan_as!(Ty::S16, 2),
            Ty::U32 | Ty::B32 | Ty::F16x2 | Ty::BF16x2 => scan_as!(Ty::U32, 4),
            Ty::S32 => scan_as!(Ty::S32, 4),
            Ty::U64 | Ty::B64 => scan_as!(Ty::U64, 8),
            Ty::S64 => scan_as!(Ty::S64, 8),
            Ty::F16 => scan_as!(Ty::F16, 2),
            Ty::BF16 => scan_as!(Ty::BF16, 2),
            Ty::F32 => scan_as!(Ty::F32, 4),
            Ty::F64 => scan_as!(Ty::F64, 8),
            // Not a buffer element type (`Ty::is_buffer_elem`): element by element.
            Ty::B128 => range
                .clone()
                .find(|&i| !keep_going(i, self.get(i).expect("in range"))),
        }
    }

    /// The elements as `u32` (for `u32` buffers; `None` for other element types).
    pub fn as_u32(&self) -> Option<Vec<u32>> {
        (self.elem == Ty::U32).then(|| {
            self.bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                .collect()
        })
    }

    /// The elements as `u64` (for `u64` buffers).
    pub fn as_u64(&self) -> Option<Vec<u64>> {
        (self.elem == Ty::U64).then(|| {
            self.bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
                .collect()
        })
    }

    /// The elements as `i32` (for `s32` buffers).
    pub fn as_i32(&self) -> Option<Vec<i32>> {
        (self.elem == Ty::S32).then(|| {
            self.bytes
                .chunks_exact(4)
                .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
                .collect()
        })
    }
}

/// Decodes the low `elem.bytes()` bytes of `raw` as an element of type `elem`
/// ([`Scalar::from_bits`]).
#[inline]
pub fn decode(elem: Ty, raw: u64) -> Scalar {
    Scalar::from_bits(elem, raw)
}

/// Encodes `v` as an element of type `elem` ([`Scalar::to_bits`]).
#[inline]
pub fn encode(elem: Ty, v: Scalar) -> u64 {
    v.to_bits(elem)
}

/// Calls `put(i, raw)` for the elements of a buffer of `len` elements of `elem` initialised by
/// `init` (`raw` as [`encode`] gives it), in index order. A fill with zero visits nothing
/// when `skip_zero_fill` (fresh device memory is already zero).
fn for_each_element(
    elem: Ty,
    len: u64,
    init: &Init,
    skip_zero_fill: bool,
    mut put: impl FnMut(u64, u64),
) {
    match init {
        Init::Fill(v) => {
            let raw = encode(elem, *v);
            if raw != 0 || !skip_zero_fill {
                (0..len).for_each(|i| put(i, raw));
            }
        }
        Init::List(values) => {
            for (i, v) in (0..len).zip(values) {
                put(i, encode(elem, *v));
            }
            if !skip_zero_fill {
                (values.len() as u64..len).for_each(|i| put(i, 0));
            }
        }
        Init::Encoded(bytes) => {
            let size = elem.bytes() as usize;
            let mut n = 0;
            for (i, chunk) in (0..len).zip(bytes.chunks_exact(size)) {
                let mut word = [0u8; 8];
                word[..size].copy_from_slice(chunk);
                put(i, u64::from_le_bytes(word));
                n = i + 1;
            }
            if !skip_zero_fill {
                (n..len).for_each(|i| put(i, 0));
            }
        }
        Init::Iota => (0..len).for_each(|i| put(i, encode(elem, Scalar::Int(i as i128)))),
        Init::Random { seed, range } => {
            let mut rng = SplitMix64::new(*seed);
            for i in 0..len {
                let v = match (range, elem.is_float()) {
                    (Some((lo, hi)), _) => Scalar::Int(rng.next_in(*lo, *hi)),
                    (None, true) => Scalar::Float(rng.next_unit()),
                    (None, false) => Scalar::Int(rng.next() as i128),
                };
                put(i, encode(elem, v));
            }
        }
    }
}

/// The bytes of a buffer of `len` elements of `elem` initialised by `init` (for small buffers
/// and tests; device memory is initialised in place by [`initialize`]).
pub fn materialize(elem: Ty, len: u64, init: &Init) -> Vec<u8> {
    let size = elem.bytes() as usize;
    let mut bytes = vec![0u8; len as usize * size];
    for_each_element(elem, len, init, true, |i, raw| {
        let i = i as usize;
        bytes[i * size..(i + 1) * size].copy_from_slice(&raw.to_le_bytes()[..size])
    });
    bytes
}

/// Where the elements of a buffer sit in its allocation: one after the other, or where a
/// surface's layout puts them (element `i` in logical order: x fastest, then y, z, layer).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Placement {
    /// Element `i` at byte `i * size`.
    Linear,
    /// Element `i` where `layout` puts it in a surface of `shape`.
    Surface {
        shape: SurfaceShape,
        layout: SurfaceLayout,
    },
}

impl Placement {
    /// The byte offset of element `i` (of `size` bytes) from the allocation's start.
    pub fn offset(&self, size: u32, i: u64) -> u64 {
        match self {
            Placement::Linear => i * u64::from(size),
            Placement::Surface { shape, layout } => {
                let (w, h, d) = (
                    u64::from(shape.width),
                    u64::from(shape.height),
                    u64::from(shape.depth),
                );
                let e = Element {
                    x: (i % w) as u32,
                    y: (i / w % h) as u32,
                    z: (i / (w * h) % d) as u32,
                    layer: (i / (w * h * d)) as u32,
                };
                layout.offset(shape, e)
            }
        }
    }

    /// Bytes the allocation of `len` elements of `size` bytes needs.
    pub fn bytes(&self, size: u32, len: u64) -> u64 {
        match self {
            Placement::Linear => len.saturating_mul(u64::from(size)),
            Placement::Surface { shape, layout } => layout.total_bytes(shape),
        }
    }
}

/// Writes the initial value of a buffer of `len` elements of `elem` at device address
/// `address`, where `placement` puts its elements (no copy of the whole buffer is made).
/// `fresh`: the memory is known to be zero, so zero elements need no store. A linear buffer
/// is encoded into a small staging block and copied a block at a time (`atomjit bench`
/// restores its buffers before every launch: element by element, 2^20 random 64-bit values
/// took ~4 ms, several times the launch they prepared); a surface element by element.
pub fn initialize(
    global: &GlobalMemory,
    address: u64,
    placement: &Placement,
    elem: Ty,
    len: u64,
    init: &Init,
    fresh: bool,
) {
    let size = elem.bytes();
    match placement {
        Placement::Linear => {
            let mut staged = Staged::new(global, address, size);
            for_each_element(elem, len, init, fresh, |i, raw| staged.put(i, raw));
            staged.flush();
        }
        Placement::Surface { .. } => for_each_element(elem, len, init, fresh, |i, raw| {
            global.write_element(address + placement.offset(size, i), size, raw)
        }),
    }
}

/// Consecutive elements of a linear buffer encoded into a block of bytes, written to device
/// memory when the block is full or the next element does not follow the last.
struct Staged<'a> {
    global: &'a GlobalMemory,
    /// The buffer's device address.
    address: u64,
    /// Bytes an element.
    size: usize,
    /// The index of the first staged element.
    first: u64,
    /// The index the next element must have to be staged after the others.
    next: u64,
    /// Bytes staged.
    len: usize,
    /// The staged bytes, with room for one whole 8-byte word past the last element.
    block: Box<[u8; Staged::BLOCK + 8]>,
}

impl<'a> Staged<'a> {
    /// Bytes staged before a write: large enough that the copy's setup is noise, small
    /// enough to stay in the first-level cache.
    const BLOCK: usize = 16 << 10;

    fn new(global: &'a GlobalMemory, address: u64, size: u32) -> Staged<'a> {
        Staged {
            global,
            address,
            size: size as usize,
            first: 0,
            next: 0,
            len: 0,
            block: Box::new([0; Staged::BLOCK + 8]),
        }
    }

    /// Stages element `i`, whose bits are the low bytes of `raw`.
    #[inline]
    fn put(&mut self, i: u64, raw: u64) {
        if self.len >= Staged::BLOCK || i != self.next {
            self.flush();
            self.first = i;
        }
        // All eight bytes: the ones past the element are overwritten by the next one or
        // never written out.
        self.block[self.len..self.len + 8].copy_from_slice(&raw.to_le_bytes());
        self.len += self.size;
        self.next = i + 1;
    }

    /// Writes the staged elements.
    fn flush(&mut self) {
        if self.len > 0 {
            let at = self.address + self.first * self.size as u64;
            self.global.write(at, &self.block[..self.len]);
            self.len = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_decodes_what_get_decodes_and_stops_where_told() {
        for &elem in Ty::ALL.iter().filter(|t| t.is_buffer_elem()) {
            // Bytes that make negative, large, NaN and subnormal elements in every type.
            let bytes: Vec<u8> = (0..40u32).map(|i| (i * 0x3b + 0x81) as u8).collect();
            let len = bytes.len() / elem.bytes() as usize;
            let buf = Buffer {
                name: "b".into(),
                elem,
                address: 0,
                bytes: bytes[..len * elem.bytes() as usize].to_vec().into(),
            };
            let mut seen = Vec::new();
            let stopped = buf.scan(1..len, |i, v| {
                seen.push((i, v));
                i + 2 < len
            });
            assert_eq!(stopped, Some(len - 2), "{elem}");
            let want: Vec<(usize, Scalar)> =
                (1..len - 1).map(|i| (i, buf.get(i).unwrap())).collect();
            // NaN != NaN: compare the debug text.
            assert_eq!(format!("{seen:?}"), format!("{want:?}"), "{elem}");
            assert_eq!(buf.scan(0..len, |_, _| true), None, "{elem}");
        }
    }

    #[test]
    fn initialising_in_place_writes_what_materialize_computes() {
        let inits = [
            Init::Fill(Scalar::Int(0)),
            Init::Fill(Scalar::Int(-3)),
            Init::Fill(Scalar::Float(1.5)),
            Init::List(vec![Scalar::Int(7), Scalar::Int(-1)]),
            Init::Encoded(vec![
                3, 0, 0, 0, 0, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            ]),
            Init::Iota,
            Init::Random {
                seed: 5,
                range: Some((-4, 9)),
            },
            Init::Random {
                seed: 6,
                range: None,
            },
        ];
        for elem in [Ty::U8, Ty::S16, Ty::U32, Ty::F32, Ty::U64, Ty::F64] {
            // 40,000 elements: several staging blocks, the last one partly filled.
            for (init, len) in inits.iter().flat_map(|i| [(i, 13), (i, 40_000)]) {
                let bytes = len * elem.bytes() as u64;
                let (g, addrs) = GlobalMemory::with_allocations(&[bytes]);
                // Dirty memory first: a reset must overwrite every element, zeros too.
                g.write(addrs[0], &vec![0xa5; bytes as usize]);
                initialize(&g, addrs[0], &Placement::Linear, elem, len, init, false);
                let mut got = vec![0; bytes as usize];
                g.read(addrs[0], &mut got);
                assert_eq!(got, materialize(elem, len, init), "{elem:?} {init:?}");
                // Fresh memory may skip the zeros and must end up the same.
                let (g, addrs) = GlobalMemory::with_allocations(&[bytes]);
                initialize(&g, addrs[0], &Placement::Linear, elem, len, init, true);
                g.read(addrs[0], &mut got);
                assert_eq!(got, materialize(elem, len, init), "fresh {elem:?} {init:?}");
            }
        }
    }

    #[test]
    fn fill_list_iota() {
        assert_eq!(
            materialize(Ty::U16, 3, &Init::Fill(Scalar::Int(0x102))),
            vec![2, 1, 2, 1, 2, 1]
        );
        assert_eq!(
            materialize(
                Ty::S8,
                4,
                &Init::List(vec![Scalar::Int(-1), Scalar::Int(2)])
            ),
            vec![0xff, 2, 0, 0]
        );
        assert_eq!(
            materialize(Ty::U8, 258, &Init::Iota)[256..],
            [0, 1],
            "narrow iota wraps"
        );
        let f = materialize(Ty::F32, 1, &Init::Fill(Scalar::Float(1.5)));
        assert_eq!(f, 1.5f32.to_le_bytes());
        let h = materialize(Ty::F16, 1, &Init::Fill(Scalar::Float(1.0)));
        assert_eq!(h, [0x00, 0x3c], "f16 1.0 is 0x3c00");
    }

    #[test]
    fn random_in_range_is_reproducible() {
        let init = Init::Random {
            seed: 7,
            range: Some((0, 256)),
        };
        let a = materialize(Ty::U32, 1000, &init);
        assert_eq!(a, materialize(Ty::U32, 1000, &init));
        let buf = Buffer {
            name: "d".into(),
            elem: Ty::U32,
            address: 0,
            bytes: a.into(),
        };
        assert!(buf.as_u32().unwrap().iter().all(|&v| v < 256));
        // The first element follows the documented mapping of SplitMix64's first value.
        let first = SplitMix64::new(7).next();
        assert_eq!(
            buf.as_u32().unwrap()[0] as u128,
            (first as u128 * 256) >> 64
        );
    }

    #[test]
    fn decode_sign_extends() {
        assert_eq!(decode(Ty::S16, 0xffff), Scalar::Int(-1));
        assert_eq!(decode(Ty::U16, 0xffff), Scalar::Int(65535));
        assert_eq!(decode(Ty::F64, 2.5f64.to_bits()), Scalar::Float(2.5));
    }
}
