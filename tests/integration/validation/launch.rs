//! Launch-shape rules, for the declared shape and for command-line overrides.

use super::*;
use atomjit::valid::{check_launch, rules};

#[test]
fn block_limits() {
    assert!(check_launch([1, 1, 1], [1024, 1, 1], 0).is_ok());
    assert!(check_launch([1, 1, 1], [32, 32, 1], 0).is_ok());
    assert!(check_launch([1, 1, 1], [1, 1, 1], 0).is_ok());
    let e = check_launch([1, 1, 1], [1025, 1, 1], 0).unwrap_err();
    assert!(
        e.contains("1025 threads") && e.contains(rules::BLOCK_LIMIT),
        "{e}"
    );
    let e = check_launch([1, 1, 1], [32, 32, 2], 0).unwrap_err();
    assert!(e.contains("2048 threads"), "{e}");
    // The product must not overflow.
    let e = check_launch([1, 1, 1], [u32::MAX; 3], 0).unwrap_err();
    assert!(e.contains("a CTA has at most 1024"), "{e}");
    for block in [[0, 1, 1], [1, 0, 1], [1, 1, 0]] {
        let e = check_launch([1, 1, 1], block, 0).unwrap_err();
        assert!(
            e.contains("block") && e.contains("is 0") && e.contains(rules::DIMS_POSITIVE),
            "{e}"
        );
    }
}

#[test]
fn grid_limits() {
    assert!(check_launch([(1 << 31) - 1, 65535, 65535], [32, 1, 1], 0).is_ok());
    let e = check_launch([1 << 31, 1, 1], [32, 1, 1], 0).unwrap_err();
    assert!(
        e.contains("grid x dimension 2147483648 exceeds 2147483647")
            && e.contains(rules::GRID_LIMIT),
        "{e}"
    );
    let e = check_launch([1, 65536, 1], [32, 1, 1], 0).unwrap_err();
    assert!(e.contains("grid y dimension 65536 exceeds 65535"), "{e}");
    let e = check_launch([1, 1, 65536], [32, 1, 1], 0).unwrap_err();
    assert!(e.contains("grid z dimension 65536 exceeds 65535"), "{e}");
    for grid in [[0, 1, 1], [1, 0, 1], [1, 1, 0]] {
        let e = check_launch(grid, [32, 1, 1], 0).unwrap_err();
        assert!(e.contains("grid") && e.contains("is 0"), "{e}");
    }
}

#[test]
fn shared_window_is_16_mib() {
    assert!(check_launch([1, 1, 1], [32, 1, 1], 16 << 20).is_ok());
    let e = check_launch([1, 1, 1], [32, 1, 1], (16 << 20) + 1).unwrap_err();
    assert!(
        e.contains("16 MiB")
            && e.contains("The address must be within the 16 MB shared memory window."),
        "{e}"
    );
}

#[test]
fn every_problem_is_listed() {
    let e = check_launch([0, 1, 1], [2048, 1, 1], u32::MAX).unwrap_err();
    assert_eq!(e.matches("(rule: ").count(), 3, "{e}");
}

#[test]
fn the_declared_launch_is_validated() {
    let k = sass()
        .launch(|l| {
            l.grid = [1, 70000, 1];
            l.shared_bytes = 32 << 20;
        })
        .op(exit())
        .build();
    let errs = errors(&k);
    assert_eq!(errs.len(), 2, "{errs:#?}");
    assert!(errs.iter().all(|e| e.pc.is_none() && e.span == k.span));
    assert_eq!(errs[0].rule, rules::GRID_LIMIT);
    assert_eq!(errs[1].rule, rules::SHARED_WINDOW);
}

#[test]
fn warp_size_fits_the_dialect() {
    let k = sass().warp_size(16).op(exit()).build();
    let errs = errors(&k);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].rule, rules::WARP_SIZE);
    assert!(errs[0].message.contains("warp size 16"));
    for n in [8, 16, 32] {
        valid(
            &builder(atomjit::ir::Dialect::Visa)
                .warp_size(n)
                .op(exit())
                .build(),
        );
    }
    let k = builder(atomjit::ir::Dialect::Visa)
        .warp_size(64)
        .op(exit())
        .build();
    assert_eq!(errors(&k)[0].rule, rules::WARP_SIZE);
}

#[test]
fn parameters_are_aligned_and_disjoint() {
    let mut k = sass()
        .buffer("a", atomjit::ir::Ty::U32, 4)
        .scalar("n", atomjit::ir::Ty::U32, 1)
        .op(exit())
        .build();
    valid(&k);
    k.launch.params[1].cbank_offset = 0x164; // overlaps the buffer address
    let errs = errors(&k);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(errs[0].message.contains("overlaps"), "{errs:#?}");
    k.launch.params[1].cbank_offset = 0x16a; // misaligned
    let errs = errors(&k);
    assert!(errs[0].message.contains("not 4-byte aligned"), "{errs:#?}");
    k.launch.params[0].cbank_offset = 0x100; // inside the ABI area
    k.launch.params[1].cbank_offset = 0x168;
    let errs = errors(&k);
    assert!(
        errs[0].message.contains("overlaps the geometry"),
        "{errs:#?}"
    );
}
