//! `holdfast einsum --spec SPEC A.npy B.npy … --out C.npy` (SPEC T8): one expression on `.npy`
//! files of every element type, C and Fortran order, the result written as numpy loads it; bad
//! files, dtypes that disagree and bad specs are one-line errors.
#![allow(clippy::unwrap_used, reason = "a failed unwrap is a failed test")]

mod support;

use std::path::Path;

use npyz::WriterBuilder;
use num_complex::Complex64;
use support::{fails_cleanly, holdfast, read_npy_f64, s, scratch, write_npy_f32, write_npy_f64};

fn write_c16(path: &Path, shape: &[u64], data: &[Complex64], order: npyz::Order) {
    let file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(shape)
        .order(order)
        .writer(file)
        .begin_nd()
        .unwrap();
    w.extend(data.iter().copied()).unwrap();
    w.finish().unwrap();
}

fn read_c16(path: &Path) -> (Vec<u64>, Vec<Complex64>) {
    let bytes = std::fs::read(path).unwrap();
    let npy = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec().unwrap())
}

#[test]
fn a_matrix_product_of_files_is_written_as_npy() {
    let dir = scratch("spec-f8");
    let (a, b, c) = (dir.join("a.npy"), dir.join("b.npy"), dir.join("c.npy"));
    write_npy_f64(&a, &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    write_npy_f64(&b, &[3, 1], &[1.0, 0.0, -1.0]);
    let run = holdfast(&["einsum", "--spec", "ij,jk->ik", s(&a), s(&b), "--out", s(&c)]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(read_npy_f64(&c), (vec![2, 1], vec![-2.0, -2.0]));
    // numpy's implicit output and an ellipsis.
    let run = holdfast(&["einsum", "--spec", "...j,j", s(&a), s(&dir.join("a.npy")), "--json"]);
    assert_ne!(run.code, Some(0), "shapes [2,3] and [2,3] under '...j,j' do not fit");
    let v = dir.join("v.npy");
    write_npy_f64(&v, &[3], &[1.0, 1.0, 1.0]);
    let run = holdfast(&["einsum", "--spec", "...j,j", s(&a), s(&v), "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["shape"], serde_json::json!([2]));
    assert_eq!(doc["dtype"], "float64");
}

#[test]
fn complex_fortran_order_operands_are_read_as_numpy_writes_them() {
    let dir = scratch("spec-c16");
    let (a, b, c) = (dir.join("a.npy"), dir.join("b.npy"), dir.join("c.npy"));
    let z = |re: f64, im: f64| Complex64::new(re, im);
    // a = [[1, i], [2, 3i]] stored column-major: a[0][0], a[1][0], a[0][1], a[1][1].
    write_c16(
        &a,
        &[2, 2],
        &[z(1.0, 0.0), z(2.0, 0.0), z(0.0, 1.0), z(0.0, 3.0)],
        npyz::Order::Fortran,
    );
    write_c16(&b, &[2], &[z(1.0, 0.0), z(0.0, -1.0)], npyz::Order::C);
    let run = holdfast(&["einsum", "--spec", "ij,j->i", s(&a), s(&b), "--out", s(&c)]);
    assert_eq!(run.code, Some(0), "{run:?}");
    // [1 + i·(-i), 2 + 3i·(-i)] = [2, 5].
    assert_eq!(read_c16(&c), (vec![2], vec![z(2.0, 0.0), z(5.0, 0.0)]));
}

#[test]
fn disagreeing_dtypes_bad_files_and_bad_specs_are_one_line_errors() {
    let dir = scratch("spec-bad");
    let (f8, f4, text) = (dir.join("f8.npy"), dir.join("f4.npy"), dir.join("text.npy"));
    write_npy_f64(&f8, &[2], &[1.0, 2.0]);
    write_npy_f32(&f4, &[2], &[1.0, 2.0]);
    std::fs::write(&text, "not an array").unwrap();
    let line = fails_cleanly(&["einsum", "--spec", "i,i", s(&f8), s(&f4)]);
    assert!(line.contains("float32") && line.contains("float64"), "{line}");
    assert!(fails_cleanly(&["einsum", "--spec", "i.,i", s(&f8), s(&f8)]).contains("ellipsis"));
    assert!(fails_cleanly(&["einsum", "--spec", "ij,i", s(&f8), s(&f8)]).contains("rank"));
    assert!(fails_cleanly(&["einsum", "--spec", "i", s(&text)]).contains("text.npy"));
    assert!(
        fails_cleanly(&["einsum", "--spec", "i", s(&dir.join("missing.npy"))])
            .contains("missing.npy")
    );
    assert!(
        fails_cleanly(&["einsum", "--spec", "i", s(&f8), "--inputs", s(&dir)]).contains("--inputs")
    );
    // f4 alone is fine: the computation runs in float32.
    let run = holdfast(&["einsum", "--spec", "i->", s(&f4), "--json"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(run.stdout.contains("float32"));
}
