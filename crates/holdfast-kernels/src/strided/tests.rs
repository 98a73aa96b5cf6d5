//! Unit tests of the loop engine: axis merging and ordering, and the copy paths.

use super::{Nest, Order, copy_strided, row_major};

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
        let n: usize = shape.iter().product();
        let mut dst = vec![0.0; n];
        copy_strided(&src, 0, shape, strides, &mut dst, 1);
        let mut par = vec![0.0; n];
        copy_strided(&src, 0, shape, strides, &mut par, 4);
        let mut idx = vec![0usize; shape.len()];
        for (pos, &got) in dst.iter().enumerate() {
            let mut rem = pos;
            for a in (0..shape.len()).rev() {
                idx[a] = rem % shape[a];
                rem /= shape[a];
            }
            let want: usize = idx.iter().zip(strides).map(|(i, s)| i * s).sum();
            assert_eq!(got, src[want], "{shape:?} at {pos}");
        }
        assert_eq!(dst, par);
    }
}
