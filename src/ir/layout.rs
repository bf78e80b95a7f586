//! The constant-bank and shared-memory layout a kernel was compiled for: where the launch
//! geometry, the ABI words and the parameters sit in constant bank 0, and how much shared
//! memory the architecture reserves at the start of each CTA's window. It is a per-kernel fact
//! ([`crate::ir::LaunchSpec::layout`]): a SASS listing names its architecture (`code for
//! sm_90`, `EF_CUDA_SM90`), everything else (program files, PTX) uses the sm_70–sm_89 layout.
//!
//! The offsets were read off ptxas 12.9 output (`nvdisasm -c` of kernels that use each
//! quantity; the PTX special register or construct that makes ptxas read it is named):
//!
//! | field | sm_70–sm_89 | sm_90 | read by |
//! |---|---|---|---|
//! | block size x, y, z (`%ntid`) | `0x0`, `0x4`, `0x8` | same | `blockDim` |
//! | grid size x, y, z (`%nctaid`) | `0xc`, `0x10`, `0x14` | same | `gridDim` |
//! | generic address of the CTA's shared window (64-bit) | `0x18` | — (`SR_SWINHI`) | `cvta.shared` |
//! | generic address of the thread's local window (64-bit) | `0x20` | `0x20` | `cvta.local` |
//! | stack pointer (32-bit) | `0x28` | `0x28` | every kernel: `MOV R1, c[0x0][0x28]` |
//! | dynamic shared bytes (`%dynamic_smem_size`) | `0x2c` | `0x2c` | `extern __shared__` size |
//! | SM count (`%nsmid`) | `0x10c` | `0x10c` | |
//! | reserved shared bytes (`%total_smem_size` is `SR_SMEMSZ` minus this) | `0x114` | `0x114` | |
//! | global-memory descriptor (64-bit, `desc[UR]`) | `0x118` | `0x208` | every `.E` access |
//! | first parameter | `0x160` | `0x210` | kernel arguments |
//!
//! On sm_90 the first 1 KiB of a CTA's shared memory is reserved (`.nv.reservedSmem`, the
//! `.nv.shared.NAME` section of a kernel is 1 KiB larger than its variables), and code
//! addresses the window as `(SR_CgaCtaId << 24) + 0x400 + offset`: shared variables start at
//! offset [`CbankLayout::reserved_shared`].
//!
//! The values atomjit writes: the geometry and parameters of the launch; the shared window at
//! [`crate::ir::GENERIC_SHARED_BASE`]; a local window of 0 (atomjit has no local memory, so a
//! generic local address is unmapped and traps); the stack pointer [`STACK_TOP`]; the dynamic
//! shared bytes of the launch; one SM; the reserved bytes of the layout; a descriptor of 0 (a
//! cache policy, without effect on results).

use super::access::GENERIC_SHARED_BASE;
use std::fmt;

/// The stack pointer atomjit writes at [`CbankLayout::STACK_POINTER`]: the top of a 16 MiB
/// local window. atomjit has no local memory, so the value only has to be defined.
pub const STACK_TOP: u32 = 1 << 24;

/// One word (or pair) of the ABI area of constant bank 0 that the engine fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CbankField {
    /// Block size x, y, z: three 32-bit words.
    BlockSize,
    /// Grid size x, y, z: three 32-bit words.
    GridSize,
    /// The 64-bit generic address of the CTA's shared window (`cvta.shared` adds it).
    SharedWindow,
    /// The 64-bit generic address of the thread's local window (`cvta.local`); 0 in atomjit.
    LocalWindow,
    /// The initial stack pointer, 32 bits ([`STACK_TOP`]).
    StackPointer,
    /// `%dynamic_smem_size`, 32 bits.
    DynamicShared,
    /// `%nsmid`, 32 bits (1 in atomjit).
    SmCount,
    /// The shared bytes reserved before the kernel's own, 32 bits.
    ReservedShared,
    /// The 64-bit global-memory descriptor `.E` accesses name (`desc[UR4]`); 0 in atomjit.
    MemoryDescriptor,
}

impl CbankField {
    /// Bytes the field occupies.
    pub fn bytes(self) -> u32 {
        match self {
            CbankField::BlockSize | CbankField::GridSize => 12,
            CbankField::SharedWindow | CbankField::LocalWindow | CbankField::MemoryDescriptor => 8,
            CbankField::StackPointer
            | CbankField::DynamicShared
            | CbankField::SmCount
            | CbankField::ReservedShared => 4,
        }
    }

    /// What the field holds, for messages and documentation.
    pub fn describe(self) -> &'static str {
        match self {
            CbankField::BlockSize => "the block size x, y, z",
            CbankField::GridSize => "the grid size x, y, z",
            CbankField::SharedWindow => "the generic address of the shared window",
            CbankField::LocalWindow => "the generic address of the local window",
            CbankField::StackPointer => "the stack pointer",
            CbankField::DynamicShared => "the dynamic shared-memory size",
            CbankField::SmCount => "the SM count",
            CbankField::ReservedShared => "the reserved shared-memory size",
            CbankField::MemoryDescriptor => "the global-memory descriptor",
        }
    }
}

/// The layout of constant bank 0 and of the shared window for one architecture (see the
/// module docs). Defined by the SM version; [`CbankLayout::default`] is sm_80.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CbankLayout {
    /// The SM version (`80` for sm_80): 70 to 90 (anything the tables above cover).
    sm: u32,
}

impl Default for CbankLayout {
    fn default() -> Self {
        CbankLayout::SM80
    }
}

impl fmt::Display for CbankLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sm_{}", self.sm)
    }
}

impl CbankLayout {
    /// sm_80 (the layout of sm_70 to sm_89, and of program files and PTX).
    pub const SM80: CbankLayout = CbankLayout { sm: 80 };
    /// sm_90.
    pub const SM90: CbankLayout = CbankLayout { sm: 90 };
    /// The oldest and newest SM versions whose layout is known.
    pub const SUPPORTED: (u32, u32) = (70, 90);
    /// Offset of the stack pointer (every architecture).
    pub const STACK_POINTER: u32 = 0x28;

    /// The layout of SM version `sm` (`80` for sm_80, `90` for sm_90 and sm_90a); an error
    /// naming the supported range otherwise.
    pub fn for_sm(sm: u32) -> Result<CbankLayout, String> {
        let (lo, hi) = CbankLayout::SUPPORTED;
        if (lo..=hi).contains(&sm) {
            Ok(CbankLayout { sm })
        } else {
            Err(format!(
                "sm_{sm} is not supported: atomjit knows the constant-bank layout of sm_{lo} to sm_{hi}"
            ))
        }
    }

    /// The SM version.
    pub fn sm(self) -> u32 {
        self.sm
    }

    /// True for sm_90 and later (Hopper): parameters at `0x210`, a reserved 1 KiB of shared
    /// memory, the shared window through `SR_SWINHI` and `SR_CgaCtaId`.
    pub fn is_hopper(self) -> bool {
        self.sm >= 90
    }

    /// Offset of the first kernel parameter.
    pub fn param_base(self) -> u32 {
        if self.is_hopper() {
            0x210
        } else {
            0x160
        }
    }

    /// Shared-memory bytes reserved at the start of every CTA's window (1 KiB on sm_90).
    pub fn reserved_shared(self) -> u32 {
        if self.is_hopper() {
            0x400
        } else {
            0
        }
    }

    /// Where `field` sits, or `None` if this architecture has no such word.
    pub fn offset(self, field: CbankField) -> Option<u32> {
        match field {
            CbankField::BlockSize => Some(0x0),
            CbankField::GridSize => Some(0xc),
            CbankField::SharedWindow => (!self.is_hopper()).then_some(0x18),
            CbankField::LocalWindow => Some(0x20),
            CbankField::StackPointer => Some(CbankLayout::STACK_POINTER),
            CbankField::DynamicShared => Some(0x2c),
            CbankField::SmCount => Some(0x10c),
            CbankField::ReservedShared => Some(0x114),
            CbankField::MemoryDescriptor => Some(if self.is_hopper() { 0x208 } else { 0x118 }),
        }
    }

    /// Every field of the ABI area, in offset order.
    pub const FIELDS: [CbankField; 9] = [
        CbankField::BlockSize,
        CbankField::GridSize,
        CbankField::SharedWindow,
        CbankField::LocalWindow,
        CbankField::StackPointer,
        CbankField::DynamicShared,
        CbankField::SmCount,
        CbankField::ReservedShared,
        CbankField::MemoryDescriptor,
    ];

    /// The ABI area of constant bank 0 for a launch: `block`, `grid` and `dynamic_shared`
    /// bytes of dynamic shared memory; every field of [`CbankLayout::FIELDS`] this architecture
    /// has, at its offset, little-endian; the rest zero. Its length is [`Self::param_base`].
    pub fn abi_area(self, block: [u32; 3], grid: [u32; 3], dynamic_shared: u32) -> Vec<u8> {
        let mut bank = vec![0u8; self.param_base() as usize];
        for field in CbankLayout::FIELDS {
            let Some(offset) = self.offset(field) else {
                continue;
            };
            let words: Vec<u64> = match field {
                CbankField::BlockSize => block.iter().map(|&v| u64::from(v)).collect(),
                CbankField::GridSize => grid.iter().map(|&v| u64::from(v)).collect(),
                CbankField::SharedWindow => vec![GENERIC_SHARED_BASE],
                CbankField::LocalWindow | CbankField::MemoryDescriptor => vec![0],
                CbankField::StackPointer => vec![u64::from(STACK_TOP)],
                CbankField::DynamicShared => vec![u64::from(dynamic_shared)],
                CbankField::SmCount => vec![1],
                CbankField::ReservedShared => vec![u64::from(self.reserved_shared())],
            };
            let each = (field.bytes() as usize) / words.len();
            for (i, w) in words.iter().enumerate() {
                let at = offset as usize + i * each;
                bank[at..at + each].copy_from_slice(&w.to_le_bytes()[..each]);
            }
        }
        bank
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(bank: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(bank[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn offsets_are_those_ptxas_reads() {
        // nvdisasm of ptxas 12.9 output: `c[0x0][0x160]` / `c[0x0][0x210]` are the first
        // parameter, `ULDC.64 UR4, c[0x0][0x118]` / `c[0x0][0x208]` the descriptor.
        assert_eq!(CbankLayout::SM80.param_base(), 0x160);
        assert_eq!(CbankLayout::SM90.param_base(), 0x210);
        let m = CbankField::MemoryDescriptor;
        assert_eq!(CbankLayout::SM80.offset(m), Some(0x118));
        assert_eq!(CbankLayout::SM90.offset(m), Some(0x208));
        assert_eq!(
            CbankLayout::SM80.offset(CbankField::SharedWindow),
            Some(0x18)
        );
        assert_eq!(CbankLayout::SM90.offset(CbankField::SharedWindow), None);
        assert_eq!(CbankLayout::SM90.reserved_shared(), 1024);
        assert_eq!(CbankLayout::SM80.reserved_shared(), 0);
        assert_eq!(CbankLayout::for_sm(86).unwrap().param_base(), 0x160);
        assert!(CbankLayout::for_sm(100).unwrap_err().contains("sm_100"));
        assert!(CbankLayout::for_sm(60).is_err());
    }

    #[test]
    fn fields_do_not_overlap_and_end_below_the_parameters() {
        for layout in [CbankLayout::SM80, CbankLayout::SM90] {
            let mut spans: Vec<(u32, u32)> = CbankLayout::FIELDS
                .iter()
                .filter_map(|&f| layout.offset(f).map(|o| (o, o + f.bytes())))
                .collect();
            spans.sort();
            for w in spans.windows(2) {
                assert!(w[0].1 <= w[1].0, "{layout}: {w:?}");
            }
            assert!(spans.last().unwrap().1 <= layout.param_base());
        }
    }

    #[test]
    fn abi_area_holds_the_launch() {
        let bank = CbankLayout::SM80.abi_area([64, 2, 1], [7, 1, 3], 96);
        assert_eq!(bank.len(), 0x160);
        let words: Vec<u32> = (0..6).map(|i| word(&bank, 4 * i)).collect();
        assert_eq!(words, [64, 2, 1, 7, 1, 3]);
        let window = u64::from_le_bytes(bank[0x18..0x20].try_into().unwrap());
        assert_eq!(window, GENERIC_SHARED_BASE);
        assert_eq!(word(&bank, 0x28), STACK_TOP);
        assert_eq!(word(&bank, 0x2c), 96);
        assert_eq!(word(&bank, 0x10c), 1);
        let bank = CbankLayout::SM90.abi_area([32, 1, 1], [1, 1, 1], 0);
        assert_eq!(bank.len(), 0x210);
        assert_eq!(word(&bank, 0x18), 0);
        assert_eq!(word(&bank, 0x114), 1024);
    }
}
