//! Unit tests of the loop engine: axis merging and ordering, and the copy paths.

use proptest::prelude::*;

use super::tile::Tile;
use super::{Nest, Order, copy_nest_of, copy_strided, row_major};

#[test]
fn dense_axes_merge_into_one_loop() {
    let shape = [2, 3, 4];
    let so = row_major(&shape);
    let n = Nest::new(&shape, &so, &so, &[0, 0, 0], Order::Out);
    assert_eq!(n.shape.as_slice(), &[24]);
    assert_eq!((n.so[0], n.sa[0], n.sb[0]), (1, 1, 0));
}

#[test]
fn unit_axes_drop_and_transposes_do_not_merge() {
    let n = Nest::new(&[1, 3, 1, 4], &[12, 4, 4, 1], &[1, 1, 1, 3], &[0; 4], Order::Out);
    assert_eq!(n.shape.as_slice(), &[3, 4]);
    assert_eq!(n.sa.as_slice(), &[1, 3]);
    let r = Nest::new(&[3, 4], &[4, 1], &[1, 3], &[0, 0], Order::A);
    assert_eq!(r.sa.as_slice(), &[3, 1], "ordered by the read operand's strides");
}

#[test]
fn reusing_orders_run_the_axes_an_operand_lacks_innermost() {
    // Output strides 12, 4, 1; `a` lacks the outermost axis, `b` the two inner ones (merged).
    let (shape, so, sa, sb) = ([2, 3, 4], [12, 4, 1], [0, 4, 1], [1, 0, 0]);
    let out = Nest::new(&shape, &so, &sa, &sb, Order::Out);
    assert_eq!((&out.shape[..], &out.so[..]), (&[2, 12][..], &[12, 1][..]));
    let reuse_a = Nest::new(&shape, &so, &sa, &sb, Order::OutReusingA);
    assert_eq!((&reuse_a.shape[..], &reuse_a.sa[..]), (&[12, 2][..], &[1, 0][..]));
    let reuse_b = Nest::new(&shape, &so, &sa, &sb, Order::OutReusingB);
    assert_eq!((&reuse_b.shape[..], &reuse_b.sb[..]), (&[2, 12][..], &[1, 0][..]));
}

#[test]
fn empty_shapes_run_nothing() {
    let n = Nest::new(&[3, 0], &[0, 1], &[0, 1], &[0, 0], Order::Out);
    assert_eq!(n.numel(), 0);
    let mut out: [f64; 0] = [];
    n.run(&mut out, 0, &[], 0, &[], 0, &|_: &mut f64, _, _| unreachable!());
}

#[test]
fn copies_match_logical_order_on_every_path() {
    // Plain (inner unit stride), tiled (transpose), gather (many short axes), slice runs
    // (a contiguous inner run of 10 under a permuted outer pair, as in an MPS contraction),
    // a contiguous run too short for a slice copy (gathered), and a transposed 4×4 panel too
    // small to tile (gathered).
    let src: Vec<f64> = (0..2 * 3 * 40 * 50).map(f64::from).collect();
    let cases: [(&[usize], &[usize]); 6] = [
        (&[2, 3, 40, 50], &[6000, 2000, 50, 1]),
        (&[2, 3, 50, 40], &[6000, 2000, 1, 50]),
        (&[50, 40, 3, 2], &[1, 50, 2000, 6000]),
        (&[5, 12, 10], &[10, 50, 1]),
        (&[5, 12, 4], &[4, 50, 1]),
        (&[30, 4, 4], &[16, 1, 4]),
    ];
    for (shape, strides) in cases {
        check_copy(&src, 0, shape, strides);
    }
}

/// Copies the view serially and over four tasks, and checks both against the view's elements in
/// logical (row-major) order.
fn check_copy<T: Copy + PartialEq + std::fmt::Debug + holdfast_tensor::Element>(
    src: &[T],
    offset: usize,
    shape: &[usize],
    strides: &[usize],
) {
    let n: usize = shape.iter().product();
    let mut dst = vec![T::ZERO; n];
    copy_strided(src, offset, shape, strides, &mut dst, 1);
    let mut par = vec![T::ZERO; n];
    copy_strided(src, offset, shape, strides, &mut par, 4);
    let mut idx = vec![0usize; shape.len()];
    for (pos, &got) in dst.iter().enumerate() {
        let mut rem = pos;
        for a in (0..shape.len()).rev() {
            idx[a] = rem % shape[a];
            rem /= shape[a];
        }
        let want: usize = offset + idx.iter().zip(strides).map(|(i, s)| i * s).sum::<usize>();
        assert_eq!(got, src[want], "{shape:?} / {strides:?} at {pos}");
    }
    assert_eq!(dst, par, "{shape:?} / {strides:?}: serial and parallel copies differ");
}

/// Row-major strides of `dims`, read in the order `perm`: the view of a dense tensor of `dims`
/// whose axes are permuted.
fn permuted(dims: &[usize], perm: &[usize]) -> (Vec<usize>, Vec<usize>) {
    let dense = row_major(dims);
    (perm.iter().map(|&p| dims[p]).collect(), perm.iter().map(|&p| dense[p]).collect())
}

#[test]
fn two_sided_tiles_copy_every_element_once() {
    // Each view takes the tiled path (checked below) in a different shape of tile: rows of two
    // destination axes and a blocked column axis with a short last block (mera_open's largest
    // copy, scaled down), rows and columns of several dimension-2 legs, a column axis within a
    // cache line but not the most contiguous.
    let cases: [(&[usize], &[usize]); 3] = [
        (&[3, 9, 9, 9, 10, 5], &[5, 4, 3, 2, 1, 0]),
        (&[2, 2, 2, 2, 2, 2, 2, 2, 2, 2], &[9, 1, 7, 3, 5, 0, 8, 2, 6, 4]),
        (&[4, 2, 3, 5, 4, 2, 2], &[4, 1, 0, 5, 2, 6, 3]),
    ];
    for (dims, perm) in cases {
        let n: usize = dims.iter().product();
        let src: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let (shape, strides) = permuted(dims, perm);
        assert!(
            Tile::of::<f64>(&copy_nest_of(&shape, &strides)).is_some(),
            "{shape:?} / {strides:?} should be tiled"
        );
        check_copy(&src, 0, &shape, &strides);
    }
    // A broadcast axis among the columns, and an offset into the source.
    let src: Vec<f64> = (0..1000).map(f64::from).collect();
    let (shape, strides) = ([6, 30, 3, 3], [1, 0, 90, 30]);
    assert!(Tile::of::<f64>(&copy_nest_of(&shape, &strides)).is_some());
    check_copy(&src, 7, &shape, &strides);
}

#[test]
fn tile_columns_extend_the_contiguous_source_run() {
    // mera_open's step-18 copy, scaled down: the destination's innermost block (the four `n`
    // axes) and the source's unit-stride axis form a contiguous source run, and each further
    // `k` axis is strided by exactly that run's length. Taking them as columns makes a tile
    // read one contiguous source block instead of short runs far apart.
    // Batched 4×4 transposes: the destination's block is the source's contiguous block, and
    // the batch axis extends it (one column, where no axis is local).
    let cases: [(&[usize], &[usize], usize); 2] =
        [(&[2, 2, 3, 2, 3, 3, 3, 4], &[5, 0, 3, 7, 1, 2, 4, 6], 4), (&[30, 4, 4], &[0, 2, 1], 1)];
    for (dims, perm, columns) in cases {
        let (shape, strides) = permuted(dims, perm);
        let tile = Tile::of::<f64>(&copy_nest_of(&shape, &strides));
        assert_eq!(tile.map(|t| t.column_axes()), Some(columns), "{shape:?} / {strides:?}");
        let n: usize = dims.iter().product();
        let src: Vec<f64> = (0..n + 3).map(|i| i as f64).collect();
        check_copy(&src, 3, &shape, &strides);
    }
}

#[test]
fn tiles_are_left_to_other_paths_where_they_do_not_help() {
    // A long destination row (a plain transpose), batched 16×16 transposes (one row axis
    // against one whole unit-stride axis: the panels' case, though the batch axis extends the
    // source run), and a contiguous copy.
    for (shape, strides) in [
        (vec![64, 200], vec![1, 64]),
        (vec![20, 16, 16], vec![256, 1, 16]),
        (vec![5, 6, 7], vec![42, 7, 1]),
    ] {
        assert_eq!(Tile::of::<f64>(&copy_nest_of(&shape, &strides)), None, "{shape:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// Any permutation of a dense tensor of short axes, seen from an offset, copies exactly.
    #[test]
    fn permuted_views_copy_exactly(
        dims in proptest::collection::vec(1usize..7, 1..8),
        seed in any::<u64>(),
        offset in 0usize..5,
    ) {
        let mut perm: Vec<usize> = (0..dims.len()).collect();
        let mut state = seed;
        for i in (1..perm.len()).rev() {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let j = usize::try_from(state >> 33).unwrap_or(0) % (i + 1);
            perm.swap(i, j);
        }
        let n: usize = dims.iter().product();
        let src: Vec<f64> = (0..n + offset).map(|i| i as f64).collect();
        let (shape, strides) = permuted(&dims, &perm);
        check_copy(&src, offset, &shape, &strides);
    }
}
