//! Which left operands are read ahead, and products over them through the batch driver, serial
//! and cut over two threads, against the triple loop.

use std::num::NonZeroUsize;

use faer::MatRef;

use super::{MAX_BYTES, warm, worth};
use crate::Par;
use crate::matmul::batch::run_batch;
use crate::matmul::operand::{Accum, BatchSpec, MatMut, MatRef as Operand, MatSpec};
use crate::matmul::tests::{fill, reference};

/// A view of `data` with the given shape and strides, checked to lie inside it.
fn view(data: &[f64], rows: usize, cols: usize, rs: usize, cs: usize) -> MatRef<'_, f64> {
    assert!(rows == 0 || cols == 0 || (rows - 1) * rs + (cols - 1) * cs < data.len());
    let isz = |x: usize| isize::try_from(x).unwrap();
    // SAFETY: every position `r·rs + c·cs` with `r < rows`, `c < cols` is inside `data`
    // (asserted above), and `data` is borrowed for the view's lifetime.
    unsafe { MatRef::from_raw_parts(data.as_ptr(), rows, cols, isz(rs), isz(cs)) }
}

#[test]
fn operands_read_across_pages_are_read_ahead_and_others_are_not() {
    let data = vec![0.0f64; 100 * 4096];
    // A block of a large operand: contiguous columns a page or more apart.
    assert!(worth(view(&data, 729, 50, 1, 4096)));
    assert!(worth(view(&data, 64, 2, 1, 512)));
    // Columns closer than a page: the prefetchers follow them already.
    assert!(!worth(view(&data, 64, 50, 1, 511)));
    // Rows contiguous instead of columns.
    assert!(!worth(view(&data, 50, 729, 4096, 1)));
    // Columns shorter than eight lines, or a single column.
    assert!(!worth(view(&data, 63, 50, 1, 4096)));
    assert!(!worth(view(&data, 729, 1, 1, 4096)));
    // More than fits in cache beside the product's other blocks.
    let cols = MAX_BYTES / (8 * 729);
    assert!(worth(view(&data, 729, cols, 1, 4096)));
    assert!(!worth(view(&data, 729, cols + 1, 1, 4096)));
    // The same bytes in a narrower element type: one element per line is a different step.
    let narrow = vec![0.0f32; 50 * 8192];
    // SAFETY: positions `r + c·1024` for `r < 128`, `c < 50` are inside `narrow`.
    let f32s = unsafe { MatRef::<f32>::from_raw_parts(narrow.as_ptr(), 128, 50, 1, 1024) };
    assert!(worth(f32s));
    assert!(warm(f32s));
}

#[test]
fn an_operand_just_read_ahead_is_not_read_again() {
    let data = fill(64 * 4096, 5);
    let (a, b) = (view(&data, 729, 50, 1, 4096), view(&data[729..], 729, 50, 1, 4096));
    assert!(warm(a), "first sight");
    assert!(!warm(a), "the same operand again");
    assert!(warm(b), "another block");
    assert!(warm(a), "back to the first, after another");
    assert!(warm(view(&data, 729, 40, 1, 4096)), "a new shape is a new operand");
    assert!(warm(view(&data, 729, 50, 1, 4097)), "so is a new stride");
    // Operands not worth reading ahead are never read, and do not reset the last one.
    assert!(warm(a));
    assert!(!warm(view(&data, 729, 50, 1, 511)));
    assert!(!warm(a));
    // Each thread keeps its own.
    std::thread::scope(|s| {
        assert!(s.spawn(|| warm(a)).join().unwrap(), "another thread reads it itself");
    });
}

#[test]
fn reading_ahead_stays_inside_a_view_that_ends_its_storage() {
    // The last column ends at the last element, and starts part-way into a line.
    let data = fill(3 + 2 * 600 + 64, 7);
    let a = view(&data[3..], 64, 3, 1, 600);
    assert!(worth(a));
    assert!(warm(a));
}

#[test]
fn products_over_an_operand_read_ahead_match_the_triple_loop() {
    // `n` past the thin kernel's range, so faer computes every product after the read.
    let (m, n, k, lda) = (96, 40, 20, 600);
    let a = fill((k - 1) * lda + m, 1);
    let b = fill(k * n, 2);
    assert!(worth(view(&a, m, k, 1, lda)));
    let asp = MatSpec { rows: m, cols: k, rs: 1, cs: lda };
    let bsp = MatSpec { rows: k, cols: n, rs: n, cs: 1 };
    let csp = MatSpec { rows: m, cols: n, rs: n, cs: 1 };
    let spec = BatchSpec { batch: 1, a: asp, b: bsp, c: csp, sa: 0, sb: 0, sc: 0 };
    let want = reference(m, n, k, (&a, 1, lda), (&b, n, 1));
    let two = NonZeroUsize::new(2).unwrap();
    for par in [Par::Seq, Par::Rayon(two, &crate::FanOut::ALWAYS)] {
        let mut c = vec![0.0; m * n];
        let (ra, rb) = (Operand::new(&a, 0), Operand::new(&b, 0));
        run_batch(&spec, MatMut::new(&mut c, 0), ra, rb, Accum::Replace, par);
        for (got, want) in c.iter().zip(&want) {
            assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0), "{got} vs {want}");
        }
    }
}
