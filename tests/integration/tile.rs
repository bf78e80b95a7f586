//! The tile atomics through the public API only (`atomjit::tile`), as the rest of the team
//! uses them: the document's 1-D example and a contended add from several callers.

use atomjit::tile::{ArrayView, DType, Operand, Options, RmwOp, Tile, TileEngine};

#[test]
fn document_example_1d() {
    let engine = TileEngine::new(2);
    let mut array: Vec<i32> = (0..32).map(|i| i % 2).collect();
    let indices: Vec<i32> = (0..32).collect();
    let expected = Tile::from_vec(&[32], vec![1i32; 32]).unwrap();
    let a = ArrayView::from_mut_slice(&mut array, &[32]).unwrap();
    let old = engine
        .atomic_cas(
            &a,
            &[Operand::vec1(&indices)],
            &Operand::Tile(expected),
            &Operand::vec1(&indices),
            &Options::default(),
        )
        .unwrap();
    assert_eq!(old.dtype(), DType::Int32);
    assert_eq!(old.shape(), [32]);
    assert_eq!(
        old.to_vec::<i32>().unwrap(),
        (0..32).map(|i| i % 2).collect::<Vec<_>>()
    );
    let want: Vec<i32> = (0..32).map(|i| if i % 2 == 1 { i } else { 0 }).collect();
    assert_eq!(array, want);
}

#[test]
fn contended_add_from_callers_and_engine_threads() {
    let engine = TileEngine::new(2).with_parallel_threshold(512);
    let mut cell = vec![0u32; 2];
    let a = ArrayView::from_mut_slice(&mut cell, &[2]).unwrap();
    let idx = vec![1u8; 5000];
    let mut old: Vec<u32> = std::thread::scope(|s| {
        let calls: Vec<_> = (0..3)
            .map(|_| {
                s.spawn(|| {
                    engine
                        .atomic_rmw(
                            RmwOp::Add,
                            &a,
                            &[Operand::vec1(&idx)],
                            &Operand::int(1),
                            &Options::default(),
                        )
                        .unwrap()
                        .to_vec::<u32>()
                        .unwrap()
                })
            })
            .collect();
        calls.into_iter().flat_map(|c| c.join().unwrap()).collect()
    });
    drop(a);
    old.sort();
    assert_eq!(old, (0..15000).collect::<Vec<u32>>());
    assert_eq!(cell, vec![0, 15000]);
    assert_eq!(engine.compiled_shapes(), 1);
}
