//! Unit tests of the GEMM engine: the loop kernel and faer agree on every stride pattern,
//! column-major outputs are computed through the transposed problem, and every kernel adds
//! into C when asked.

use super::batch::{PreparedGemm, faer_gemm, loop_gemm, run_batch};
use super::nano_sized;
use super::operand::{Accum, BatchSpec, MatMut, MatRef, MatSpec};
use crate::Par;

pub(super) fn fill(n: usize, seed: u64) -> Vec<f64> {
    (0..n).map(|i| ((i as u64 * 2_654_435_761 + seed) % 1000) as f64 / 500.0 - 1.0).collect()
}

#[test]
fn loop_kernel_and_faer_agree() {
    let (m, n, k) = (3, 4, 2);
    let a = fill(m * k, 1);
    let b = fill(k * n, 2);
    for (ars, acs) in [(k, 1), (1, m)] {
        for (crs, ccs) in [(n, 1), (1, m)] {
            let asp = MatSpec { rows: m, cols: k, rs: ars, cs: acs };
            let bsp = MatSpec { rows: k, cols: n, rs: n, cs: 1 };
            let csp = MatSpec { rows: m, cols: n, rs: crs, cs: ccs };
            let spec = BatchSpec { batch: 1, a: asp, b: bsp, c: csp, sa: 0, sb: 0, sc: 0 };
            let (ra, rb) = (MatRef::new(&a, 0), MatRef::new(&b, 0));
            let mut looped = vec![0.0; m * n];
            loop_gemm(MatMut::new(&mut looped, 0), csp, ra, asp, rb, bsp, Accum::Replace);
            let mut batched = vec![0.0; m * n];
            run_batch(&spec, MatMut::new(&mut batched, 0), ra, rb, Accum::Replace, Par::Seq);
            let mut big = vec![0.0; m * n];
            faer_gemm(MatMut::new(&mut big, 0), csp, ra, asp, rb, bsp, Par::Seq);
            for ((x, y), z) in looped.iter().zip(&big).zip(&batched) {
                assert!((x - y).abs() < 1e-12 && (z - y).abs() < 1e-12);
            }
        }
    }
}

/// The naive triple loop over strided operands: the reference.
pub(super) fn reference(
    m: usize,
    n: usize,
    k: usize,
    a: (&[f64], usize, usize),
    b: (&[f64], usize, usize),
) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|p| a.0[i * a.1 + p * a.2] * b.0[p * b.1 + j * b.2]).sum();
        }
    }
    c
}

/// Every small shape (nano-gemm's range and the faer boundary around 16³), with row-major and
/// transposed operands, through a prepared plan (the cached nano-gemm plan), the per-call
/// engine (`faer_gemm`, a plan chosen per call) and the batch driver: all agree with the
/// reference, and `f32` takes the same path.
#[test]
fn prepared_and_per_call_small_products_match_the_reference() {
    use crate::matmul::MatmulPlan;
    use holdfast_tensor::Tensor;
    let sizes = [
        (1, 1, 1),
        (2, 2, 2),
        (1, 5, 3),
        (5, 1, 3),
        (3, 4, 1),
        (4, 4, 4),
        (7, 3, 5),
        (8, 8, 8),
        (16, 16, 16),
        (17, 16, 16),
        (9, 33, 2),
    ];
    for (m, n, k) in sizes {
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            let a = Tensor::from_vec(if ta { [k, m] } else { [m, k] }, fill(m * k, 3)).unwrap();
            let b = Tensor::from_vec(if tb { [n, k] } else { [k, n] }, fill(k * n, 4)).unwrap();
            let (av, bv) = (
                if ta { a.read().transpose() } else { a.read() },
                if tb { b.read().transpose() } else { b.read() },
            );
            let (as_, bs) = (av.strides().to_vec(), bv.strides().to_vec());
            let want =
                reference(m, n, k, (a.as_slice(), as_[0], as_[1]), (b.as_slice(), bs[0], bs[1]));
            let plan = MatmulPlan::new(av.layout(), bv.layout()).unwrap();
            let mut out = Tensor::<f64>::zeros([m, n]);
            for _ in 0..2 {
                plan.execute_into(&av, &bv, &mut out, Par::Seq).unwrap();
                for (x, y) in out.as_slice().iter().zip(&want) {
                    assert!((x - y).abs() < 1e-12, "prepared {m}x{n}x{k} ta={ta} tb={tb}");
                }
            }
            let asp = MatSpec { rows: m, cols: k, rs: as_[0], cs: as_[1] };
            let bsp = MatSpec { rows: k, cols: n, rs: bs[0], cs: bs[1] };
            for (crs, ccs) in [(n, 1), (1, m)] {
                let csp = MatSpec { rows: m, cols: n, rs: crs, cs: ccs };
                let mut c = vec![f64::NAN; m * n];
                let (ra, rb) = (MatRef::new(a.as_slice(), 0), MatRef::new(b.as_slice(), 0));
                faer_gemm(MatMut::new(&mut c, 0), csp, ra, asp, rb, bsp, Par::Seq);
                for i in 0..m {
                    for j in 0..n {
                        let got = c[i * crs + j * ccs];
                        assert!((got - want[i * n + j]).abs() < 1e-12, "per call {m}x{n}x{k}");
                    }
                }
            }
            let a32: Vec<f32> = a.as_slice().iter().map(|&x| x as f32).collect();
            let b32: Vec<f32> = b.as_slice().iter().map(|&x| x as f32).collect();
            let (a32, b32) = (
                Tensor::from_vec(a.shape().to_vec(), a32).unwrap(),
                Tensor::from_vec(b.shape().to_vec(), b32).unwrap(),
            );
            let (av32, bv32) = (
                if ta { a32.read().transpose() } else { a32.read() },
                if tb { b32.read().transpose() } else { b32.read() },
            );
            let mut out32 = Tensor::<f32>::zeros([m, n]);
            plan.execute_into(&av32, &bv32, &mut out32, Par::Seq).unwrap();
            for (x, y) in out32.as_slice().iter().zip(&want) {
                assert!((f64::from(*x) - y).abs() < 1e-4, "f32 {m}x{n}x{k}");
            }
        }
    }
}

#[test]
fn adding_items_sum_into_one_c_on_every_kernel() {
    // A batch whose items all write the same C (`sc == 0`) with `add`: C keeps its values and
    // gains every item's product, as einsum's loops over contracted labels need. The shapes
    // reach the plain loop (m·n·k ≤ 8, with row- and column-major B), nano-gemm, faer, and
    // an empty contraction (k = 0), which must leave C as it was.
    let batch = 3;
    for (m, n, k, b_col_major) in
        [(2, 2, 2, false), (2, 2, 2, true), (4, 4, 4, false), (20, 20, 20, false), (3, 3, 0, false)]
    {
        let a = fill(batch * m * k, 5);
        let b = fill(batch * k * n, 6);
        let (brs, bcs) = if b_col_major { (1, k) } else { (n, 1) };
        let spec = BatchSpec {
            batch,
            a: MatSpec { rows: m, cols: k, rs: k, cs: 1 },
            b: MatSpec { rows: k, cols: n, rs: brs, cs: bcs },
            c: MatSpec { rows: m, cols: n, rs: n, cs: 1 },
            sa: m * k,
            sb: k * n,
            sc: 0,
        };
        let mut c = vec![1.0; m * n];
        let (ra, rb) = (MatRef::new(&a, 0), MatRef::new(&b, 0));
        run_batch(&spec, MatMut::new(&mut c, 0), ra, rb, Accum::Add, Par::Seq);
        let mut want = vec![1.0; m * n];
        for item in 0..batch {
            let ai = (&a[item * m * k..], k, 1);
            let bi = (&b[item * k * n..], brs, bcs);
            for (w, p) in want.iter_mut().zip(reference(m, n, k, ai, bi)) {
                *w += p;
            }
        }
        for (got, want) in c.iter().zip(&want) {
            assert!((got - want).abs() < 1e-12 * want.abs().max(1.0), "{m}x{n}x{k}: {got} {want}");
        }
    }
}

#[test]
fn vector_products_run_nano_gemm_directly() {
    // Einsum hands over row-vector, column-vector and rank-1 products with stride 0 along their
    // length-1 axes. nano-gemm runs a product directly only with unit row strides in the output
    // and the left operand; length-1 axes must not keep it from doing so, and the products must
    // stay exact. (m, n, k) with C, A, B strides as einsum's batch loops make them.
    type Strides = [(usize, usize); 3];
    let cases: [((usize, usize, usize), Strides); 4] = [
        ((1, 16, 11), [(0, 1), (0, 1), (1, 11)]),
        ((1, 1, 11), [(0, 0), (0, 1), (1, 0)]),
        ((12, 1, 7), [(1, 0), (7, 1), (1, 0)]),
        ((6, 5, 1), [(5, 1), (0, 0), (0, 1)]),
    ];
    for ((m, n, k), [c, a, b]) in cases {
        let signed = |(r, s): (usize, usize)| (r.cast_signed(), s.cast_signed());
        let shape = super::nano::NanoShape::new((m, n, k), signed(c), signed(a), signed(b));
        assert!(shape.col_major(), "{m}x{n}x{k}: {shape:?}");
        let len = |rows: usize, cols: usize, (rs, cs): (usize, usize)| {
            (rows - 1) * rs + (cols - 1) * cs + 1
        };
        let (av, bv) = (fill(len(m, k, a), 7), fill(len(k, n, b), 8));
        let spec = BatchSpec {
            batch: 1,
            a: MatSpec { rows: m, cols: k, rs: a.0, cs: a.1 },
            b: MatSpec { rows: k, cols: n, rs: b.0, cs: b.1 },
            c: MatSpec { rows: m, cols: n, rs: c.0, cs: c.1 },
            sa: 0,
            sb: 0,
            sc: 0,
        };
        let mut out = vec![0.0; len(m, n, c)];
        let (ra, rb) = (MatRef::new(&av, 0), MatRef::new(&bv, 0));
        run_batch(&spec, MatMut::new(&mut out, 0), ra, rb, Accum::Replace, Par::Seq);
        let want = reference(m, n, k, (&av, a.0, a.1), (&bv, b.0, b.1));
        for i in 0..m {
            for j in 0..n {
                let (got, want) = (out[i * c.0 + j * c.1], want[i * n + j]);
                assert!((got - want).abs() < 1e-12 * want.abs().max(1.0), "{m}x{n}x{k}");
            }
        }
    }
}

#[test]
fn long_vector_products_go_to_faer_and_stay_exact() {
    // nano-gemm runs a product with a long dimension under a single row or column through
    // scalar kernels; such products go to faer's matrix-vector paths, small ones stay on
    // nano-gemm. (m, n, k), row-major operands.
    let dense = |rows: usize, cols: usize| MatSpec { rows, cols, rs: cols, cs: 1 };
    let cases = [((1, 1, 4096), false), ((1, 4096, 1), false), ((3, 1, 1024), false)];
    let small = [((1, 1, 64), true), ((4, 4, 4), true), ((16, 16, 16), true), ((1, 64, 64), true)];
    for ((m, n, k), nano) in cases.into_iter().chain(small) {
        let views = super::bridge::FaerViews::new(dense(m, k), dense(k, n), dense(m, n));
        assert_eq!(views.nano_plans().is_some(), nano, "{m}x{n}x{k}");
        let (av, bv) = (fill(m * k, 3), fill(k * n, 4));
        let spec = BatchSpec {
            batch: 1,
            a: dense(m, k),
            b: dense(k, n),
            c: dense(m, n),
            sa: 0,
            sb: 0,
            sc: 0,
        };
        let mut out = vec![0.0; m * n];
        let (ra, rb) = (MatRef::new(&av, 0), MatRef::new(&bv, 0));
        run_batch(&spec, MatMut::new(&mut out, 0), ra, rb, Accum::Replace, Par::Seq);
        let want = reference(m, n, k, (&av, k, 1), (&bv, n, 1));
        for (got, want) in out.iter().zip(&want) {
            assert!((got - want).abs() < 1e-12 * want.abs().max(1.0), "{m}x{n}x{k}");
        }
    }
}

#[test]
fn nano_scratch_counts_what_nano_gemm_copies() {
    use super::nano::NanoShape;
    let (n, s) = (16usize, 16isize);
    let row = (s, 1);
    let col = (1, s);
    // Row-major everywhere: the transposed product is column-major, read in place.
    assert_eq!(NanoShape::new((n, n, n), row, row, row).scratch_elements(), 0);
    // A column-major left operand and output: in place as given.
    assert_eq!(NanoShape::new((n, n, n), col, col, row).scratch_elements(), 0);
    // Both operands with the contracted axis innermost: the left operand of the orientation
    // with a column-major output is copied on every run.
    assert_eq!(NanoShape::new((n, n, n), row, row, col).scratch_elements(), n * n);
    // An output with no unit stride is also computed in scratch and added back.
    let spread = (2 * s, 2);
    assert_eq!(NanoShape::new((n, n, n), spread, row, col).scratch_elements(), 3 * n * n);
    // A row (m = 1) never needs scratch.
    assert_eq!(NanoShape::new((1, n, n), row, row, col).scratch_elements(), 0);
}

#[test]
fn nano_scratch_is_zero_for_products_too_large_for_nano_gemm() {
    // The planner skips the scratch estimate of a layout whose product is not `nano_sized`
    // (its extents do not depend on the layout): that is right only if such a product never
    // has any, in any orientation, layout or batch.
    let sizes = [1usize, 2, 7, 16, 17, 40, 64, 65, 300];
    let mut counted = 0;
    let triples =
        sizes.iter().flat_map(|&m| sizes.iter().flat_map(move |&n| sizes.map(|k| (m, n, k))));
    for (m, n, k) in triples {
        for (ar, br, cr) in
            [(true, true, true), (true, true, false), (false, false, true), (false, true, false)]
        {
            for batch in [1, 3] {
                let mat = |rows: usize, cols: usize, row_major: bool| {
                    let (rs, cs) = if row_major { (2 * cols, 2) } else { (1, rows) };
                    MatSpec { rows, cols, rs, cs }
                };
                let spec = BatchSpec {
                    batch,
                    a: mat(m, k, ar),
                    b: mat(k, n, br),
                    c: mat(m, n, cr),
                    sa: 0,
                    sb: 0,
                    sc: 2 * m * n,
                };
                let per_item = PreparedGemm::nano_scratch_of(&spec);
                if nano_sized(m, n, k) {
                    counted += per_item;
                } else {
                    assert_eq!(per_item, 0, "{m}x{n}x{k}, batch {batch}");
                }
            }
        }
    }
    // Products nano-gemm takes do count their scratch (a C with no unit stride, among others).
    assert!(counted > 0);
}

#[test]
fn products_cut_into_blocks_over_threads_match_the_reference() {
    // With more than one thread a product is cut into blocks of its output's rows (m >= n) or
    // columns (n > m) on 16-element edges, each block one single-threaded faer call; below 32
    // rows and columns faer's own parallelism runs it. Both orientations of C, edges that are
    // not multiples of 16, two and three parts, and `Accum::Add` (C keeps its values).
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    for (m, n, k) in [(70, 33, 9), (33, 70, 9), (31, 20, 5), (96, 96, 17), (17, 200, 3), (40, 1, 6)]
    {
        let a = fill(m * k, 7);
        let b = fill(k * n, 8);
        for c_col_major in [false, true] {
            let (crs, ccs) = if c_col_major { (1, m) } else { (n, 1) };
            let spec = BatchSpec {
                batch: 1,
                a: MatSpec { rows: m, cols: k, rs: k, cs: 1 },
                b: MatSpec { rows: k, cols: n, rs: 1, cs: k },
                c: MatSpec { rows: m, cols: n, rs: crs, cs: ccs },
                sa: 0,
                sb: 0,
                sc: 0,
            };
            let product = reference(m, n, k, (&a, k, 1), (&b, 1, k));
            for threads in [2, 3] {
                let par = Par::Rayon(
                    std::num::NonZeroUsize::new(threads).unwrap(),
                    &crate::FanOut::ALWAYS,
                );
                let mut c = vec![1.0; m * n];
                let (ra, rb) = (MatRef::new(&a, 0), MatRef::new(&b, 0));
                pool.install(|| run_batch(&spec, MatMut::new(&mut c, 0), ra, rb, Accum::Add, par));
                for i in 0..m {
                    for j in 0..n {
                        let (got, want) = (c[i * crs + j * ccs], 1.0 + product[i * n + j]);
                        assert!(
                            (got - want).abs() < 1e-12 * want.abs().max(1.0),
                            "{m}x{n}x{k} col-major C {c_col_major}, {threads} threads, ({i}, {j})"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn cuts_fall_on_aligned_edges_inside_the_dimension() {
    use super::split::cut;
    assert_eq!(cut(100, 1, 2), 48);
    assert_eq!(cut(4320, 1, 2), 2160);
    assert_eq!(cut(33, 1, 2), 16);
    assert_eq!(cut(40, 1, 3), 16);
    assert_eq!(cut(10, 1, 2), 0);
    assert_eq!(cut(96, 1, 3), 32);
    assert_eq!((cut(100, 0, 1), cut(0, 1, 2), cut(7, 1, 0)), (0, 0, 0));
}

#[test]
fn uneven_batches_of_large_items_match_the_reference() {
    // A batch whose items do not divide evenly over the threads, each item large enough to fan
    // out: whole items per thread, then each left-over item cut into blocks. Every item's block
    // of C (with a gap between blocks) must hold its own product, added to what C held.
    let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().unwrap();
    let (m, n, k) = (40, 20, 6);
    for (batch, threads) in [(3, 2), (5, 2), (7, 3), (4, 3)] {
        let a = fill(batch * m * k, 9);
        let b = fill(batch * k * n, 10);
        let sc = m * n + 5;
        let spec = BatchSpec {
            batch,
            a: MatSpec { rows: m, cols: k, rs: k, cs: 1 },
            b: MatSpec { rows: k, cols: n, rs: n, cs: 1 },
            c: MatSpec { rows: m, cols: n, rs: n, cs: 1 },
            sa: m * k,
            sb: k * n,
            sc,
        };
        let par = Par::Rayon(std::num::NonZeroUsize::new(threads).unwrap(), &crate::FanOut::ALWAYS);
        let mut c = vec![2.0; batch * sc];
        let (ra, rb) = (MatRef::new(&a, 0), MatRef::new(&b, 0));
        pool.install(|| run_batch(&spec, MatMut::new(&mut c, 0), ra, rb, Accum::Add, par));
        for item in 0..batch {
            let want = reference(m, n, k, (&a[item * m * k..], k, 1), (&b[item * k * n..], n, 1));
            let got = &c[item * sc..item * sc + m * n];
            for (g, w) in got.iter().zip(&want) {
                assert!((g - (w + 2.0)).abs() < 1e-12 * w.abs().max(1.0), "{batch} on {threads}");
            }
            assert!(c[item * sc + m * n..(item + 1) * sc].iter().all(|&x| x == 2.0), "gap kept");
        }
    }
}
