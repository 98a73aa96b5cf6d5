//! Tests of the row cut: when a loop is cut by rows of C, and that the cut gives the loop's
//! result.

use std::num::NonZeroUsize;

use holdfast_tensor::c64;

use super::{RowDeal, row_deal, run_rows};
use crate::einsum::outer::{deal, each_product, run_outer};
use crate::einsum::plan::GemmCore;
use crate::einsum::testing::values;
use crate::matmul::batch::PreparedGemm;
use crate::matmul::operand::{Accum, BatchSpec, MatRef, MatSpec};
use crate::strided::Nest;
use crate::{FanOut, Par};

/// A product of `4·8·2 = 64` flops stays on one thread; a loop of sixteen fans out.
static SMALL_ALONE: FanOut = FanOut { gemm: 1024, ..FanOut::ALWAYS };

fn two(sizes: &'static FanOut) -> Par {
    Par::Rayon(NonZeroUsize::new(2).unwrap_or(NonZeroUsize::MIN), sizes)
}

/// A call of `batch` products `m × 4 · 4 × 8` (items `sc` apart in C and 32 apart in B, rows
/// `c_rs` apart), looped over `labels` (size, C stride, B stride).
fn core(
    m: usize,
    c_rs: usize,
    batch: usize,
    sc: usize,
    labels: &[(usize, usize, usize)],
) -> (GemmCore, Nest) {
    let a = MatSpec { rows: m, cols: 4, rs: 4, cs: 1 };
    let b = MatSpec { rows: 4, cols: 8, rs: 8, cs: 1 };
    let c = MatSpec { rows: m, cols: 8, rs: c_rs, cs: 1 };
    let spec = BatchSpec { batch, a, b, c, sa: 0, sb: 32, sc };
    let gemm = PreparedGemm::new(&spec);
    let core =
        GemmCore { a_copy: None, b_copy: None, outer: None, gemm, blocks: None, accumulate: false };
    let nest = Nest {
        shape: labels.iter().map(|l| l.0).collect(),
        so: labels.iter().map(|l| l.1).collect(),
        sa: labels.iter().map(|_| 0).collect(),
        sb: labels.iter().map(|l| l.2).collect(),
    };
    (core, nest)
}

fn parts(deal: Option<RowDeal>) -> Option<(usize, usize)> {
    deal.map(|d| (d.parts, d.per))
}

#[test]
fn rows_are_cut_when_they_hold_what_lies_below_and_what_lies_above_writes_apart() {
    let par = two(&SMALL_ALONE);
    // C is [t: 4][e: 3][f: 2][g: 8]: rows 48 apart hold e (16 apart), f (the batch, 8 apart) and
    // g. The positions of e interleave with the rows, so they cannot be dealt; the rows are cut
    // in two.
    let (g, nest) = core(4, 48, 2, 8, &[(3, 16, 64)]);
    assert_eq!(parts(row_deal(&g, &nest, par)), Some((2, 2)));
    // Five rows: parts of three and two.
    let (g, nest) = core(5, 48, 2, 8, &[(3, 16, 64)]);
    assert_eq!(parts(row_deal(&g, &nest, par)), Some((2, 3)));
    // What lies below reaches the next row.
    let (g, nest) = core(4, 47, 2, 8, &[(3, 16, 64)]);
    assert_eq!(parts(row_deal(&g, &nest, par)), None);
    // A batch above the rows is left to the batch driver.
    let (g, nest) = core(4, 16, 2, 64, &[(2, 8, 64)]);
    assert_eq!(parts(row_deal(&g, &nest, par)), None);
    // A label above the rows that writes apart: three positions, each cut in two.
    let (g, nest) = core(4, 16, 1, 0, &[(3, 64, 32), (2, 8, 96)]);
    assert_eq!(parts(row_deal(&g, &nest, par)), Some((2, 2)));
    // Four positions above divide over two threads: the rows stay whole.
    let (g, nest) = core(4, 16, 1, 0, &[(4, 64, 32), (2, 8, 128)]);
    assert_eq!(parts(row_deal(&g, &nest, par)), Some((1, 4)));
    // ... unless the label above overlaps the rows.
    let (g, nest) = core(4, 16, 1, 0, &[(4, 63, 32), (2, 8, 128)]);
    assert_eq!(parts(row_deal(&g, &nest, par)), None);
    // One row, C = [3][4][3][8]: every label writes apart. Twelve blocks of the outer two are
    // enough; each block loops over the third.
    let (g, nest) = core(1, 0, 1, 0, &[(3, 96, 64), (4, 24, 16), (3, 8, 0)]);
    let cut = row_deal(&g, &nest, par).unwrap_or_else(|| panic!("no cut"));
    assert_eq!(
        (cut.parts, cut.above.shape.as_slice(), cut.below.shape.as_slice()),
        (1, &[3, 4][..], &[3][..])
    );
    // Exactly eight blocks of the outer two are enough.
    let (g, nest) = core(1, 0, 1, 0, &[(2, 96, 64), (4, 24, 16), (3, 8, 0)]);
    let cut = row_deal(&g, &nest, par).unwrap_or_else(|| panic!("no cut"));
    assert_eq!((cut.above.shape.as_slice(), cut.below.shape.as_slice()), (&[2, 4][..], &[3][..]));
    // One thread, too little work, or products that add into C: no cut.
    let (g, nest) = core(4, 48, 2, 8, &[(3, 16, 64)]);
    assert_eq!(parts(row_deal(&g, &nest, Par::Seq)), None);
    static LARGE: FanOut = FanOut { gemm: 1 << 20, ..FanOut::ALWAYS };
    assert_eq!(parts(row_deal(&g, &nest, two(&LARGE))), None);
    let mut adding = g.clone();
    adding.accumulate = true;
    assert_eq!(parts(row_deal(&adding, &nest, par)), None);
    // Products that fan out on their own, with fewer rows than columns: cutting rows would
    // read B twice, so three positions are not cut; four are dealt whole.
    let (g, nest) = core(4, 16, 1, 0, &[(3, 64, 32), (2, 8, 96)]);
    assert_eq!(parts(row_deal(&g, &nest, two(&FanOut::ALWAYS))), None);
    let (g, nest) = core(4, 16, 1, 0, &[(4, 64, 32), (2, 8, 128)]);
    assert_eq!(parts(row_deal(&g, &nest, two(&FanOut::ALWAYS))), Some((1, 4)));
}

/// Rows, row stride, batch, item stride and loop labels of [`core`].
type Case = (usize, usize, usize, usize, &'static [(usize, usize, usize)]);

#[test]
fn a_loop_cut_by_rows_writes_what_the_loop_writes() {
    let cases: [Case; 4] = [
        (5, 48, 2, 8, &[(3, 16, 64)]),
        (1, 0, 1, 0, &[(3, 96, 64), (4, 24, 16), (3, 8, 0)]),
        (4, 16, 1, 0, &[(3, 64, 32), (2, 8, 96)]),
        (7, 16, 1, 0, &[(3, 112, 32), (2, 8, 128)]),
    ];
    for (m, c_rs, batch, sc, labels) in cases {
        let (g, nest) = core(m, c_rs, batch, sc, labels);
        let Some(cut) = row_deal(&g, &nest, two(&SMALL_ALONE)) else { panic!("{labels:?}") };
        let a = values(m * 4, 1);
        let b = values(512, 2);
        let len = nest.shape.iter().zip(&nest.so).map(|(&d, &s)| (d - 1) * s).sum::<usize>()
            + g.gemm.c_span();
        // Elements no product writes keep their value (NaN): both runs leave them alone.
        let (mut want, mut got) = (vec![f64::NAN; len], vec![f64::NAN; len]);
        let ops = || (MatRef::new(&a, 0), MatRef::new(&b, 0));
        each_product(&g.gemm, &nest, &mut want, 0, ops(), Accum::Replace, Par::Seq);
        run_rows(&g, &cut, &mut got, ops(), Accum::Replace);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got), bits(&want), "{labels:?}");
        // Adding keeps its meaning: every element gets its products once.
        let (mut want2, mut got2) = (want.clone(), got.clone());
        each_product(&g.gemm, &nest, &mut want2, 0, ops(), Accum::Add, Par::Seq);
        run_rows(&g, &cut, &mut got2, ops(), Accum::Add);
        assert_eq!(bits(&got2), bits(&want2), "{labels:?}");
    }
}

#[test]
fn the_outer_loop_runs_cut_by_rows_when_its_positions_cannot_be_dealt() {
    // Step 14 of mera_open in small: C is [t: 5][e: 3][f: 2][g: 8], e loops and f is the batch.
    let (g, nest) = core(5, 48, 2, 8, &[(3, 16, 64)]);
    let par = two(&SMALL_ALONE);
    assert_eq!(deal(&g, &nest, par), None);
    assert!(row_deal(&g, &nest, par).is_some());
    let len = 5 * 48;
    let a: Vec<c64> =
        values(20, 3).iter().zip(values(20, 4)).map(|(&r, i)| c64::new(r, i)).collect();
    let b: Vec<c64> =
        values(512, 5).iter().zip(values(512, 6)).map(|(&r, i)| c64::new(r, i)).collect();
    let ops = || (MatRef::new(&a, 0), MatRef::new(&b, 0));
    let (mut want, mut got) = (vec![c64::new(0.0, 0.0); len], vec![c64::new(0.0, 0.0); len]);
    each_product(&g.gemm, &nest, &mut want, 0, ops(), Accum::Replace, Par::Seq);
    run_outer(&g, &nest, &mut got, ops(), Accum::Replace, par);
    assert_eq!(got, want);
    // Three positions of the outermost label do not share out evenly over two threads: twelve
    // blocks of the outer two labels do.
    let (g3, nest3) = core(1, 0, 1, 0, &[(3, 96, 64), (4, 24, 16), (3, 8, 0)]);
    assert!(deal(&g3, &nest3, par).is_some());
    let (mut want3, mut got3) = (vec![c64::new(0.0, 0.0); 288], vec![c64::new(0.0, 0.0); 288]);
    each_product(&g3.gemm, &nest3, &mut want3, 0, ops(), Accum::Replace, Par::Seq);
    run_outer(&g3, &nest3, &mut got3, ops(), Accum::Replace, par);
    assert_eq!(got3, want3);
    // Every element of C is some product's: none is left at its start value.
    let mut nan = vec![c64::new(f64::NAN, 0.0); len];
    run_outer(&g, &nest, &mut nan, ops(), Accum::Replace, par);
    assert!(nan.iter().all(|z| !z.re.is_nan()));
}
