//! [`put_run`](super::put_run) against a plain copy: every start within a line, lengths around
//! whole lines, each element type, and both widths of line store.

use holdfast_tensor::{c32, c64};

use super::{fence, put_run};

#[test]
#[cfg(target_arch = "x86_64")]
fn whole_lines_by_16_byte_stores_copy_the_run_too() {
    let src: Vec<f64> = (0..300).map(|i| f64::from(i) - 0.5).collect();
    let mut dst = vec![0.0f64; 340];
    for at in 0..16 {
        for len in (0..24).chain([63, 64, 65, 300]) {
            dst.fill(-1.0);
            super::put_run_narrow(&mut dst[at..at + len], &src[..len]);
            fence();
            assert_eq!(&dst[at..at + len], &src[..len], "run at {at}, length {len}");
            assert!(dst[..at].iter().chain(&dst[at + len..]).all(|&x| x == -1.0));
        }
    }
}

/// Copies `src[..len]` into `dst` at element `at` by [`put_run`] and checks that exactly those
/// elements changed, to `src`'s values.
fn check<T: Copy + PartialEq + std::fmt::Debug + 'static>(
    dst: &mut [T],
    src: &[T],
    at: usize,
    len: usize,
    untouched: T,
) {
    dst.fill(untouched);
    put_run(&mut dst[at..at + len], &src[..len]);
    fence();
    for (i, &x) in dst.iter().enumerate() {
        if (at..at + len).contains(&i) {
            assert_eq!(x, src[i - at], "element {i} of a run at {at}, length {len}");
        } else {
            assert_eq!(x, untouched, "element {i} outside a run at {at}, length {len}");
        }
    }
}

#[test]
fn every_start_within_a_line_and_every_length_copies_exactly_the_run() {
    let src: Vec<f64> = (0..300).map(|i| f64::from(i) + 0.5).collect();
    let mut dst = vec![0.0f64; 340];
    for at in 0..16 {
        for len in (0..40).chain([63, 64, 65, 127, 128, 129, 200, 300]) {
            check(&mut dst, &src, at, len, -1.0);
        }
    }
    let src: Vec<f32> = (0..300u16).map(|i| f32::from(i) + 0.25).collect();
    let mut dst = vec![0.0f32; 340];
    for at in 0..32 {
        for len in (0..40).chain([127, 128, 129, 300]) {
            check(&mut dst, &src, at, len, -1.0);
        }
    }
    let src: Vec<c32> = (0..200u16).map(|i| c32::new(f32::from(i), -f32::from(i))).collect();
    let mut dst = vec![c32::new(0.0, 0.0); 240];
    for at in 0..16 {
        for len in (0..24).chain([63, 64, 65, 200]) {
            check(&mut dst, &src, at, len, c32::new(-1.0, -1.0));
        }
    }
}

#[test]
fn complex_f64_runs_starting_between_its_16_byte_slots_are_copied() {
    // A `c64` is aligned to 8 bytes only, so a run may start 8 bytes past a 16-byte boundary:
    // then no element starts on a line boundary and the line stores must still cover whole
    // elements' bytes. Build such slices by offsetting one `f64` into an `f64` buffer.
    let mut words = vec![0.0f64; 2 * 200 + 1];
    let src: Vec<c64> = (0..150).map(|i| c64::new(f64::from(i), 0.5 - f64::from(i))).collect();
    for skip in [0usize, 1] {
        let room = (words.len() - skip) / 2;
        // SAFETY: `c64` is `Complex<f64>`, `#[repr(C)]` of two `f64`s with the alignment of
        // `f64`; the slice covers `2 · room` initialised `f64`s of `words` from `skip`, which
        // `words` holds, and `words` is not used otherwise while it lives.
        let dst: &mut [c64] =
            unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().add(skip).cast(), room) };
        for at in 0..8 {
            for len in (0..20).chain([31, 32, 33, 150]) {
                check(dst, &src, at, len, c64::new(-1.0, -1.0));
            }
        }
    }
}

#[test]
fn other_types_and_unequal_lengths_copy_the_common_prefix() {
    let src: Vec<u16> = (0..100).collect();
    let mut dst = vec![0u16; 60];
    put_run(&mut dst, &src);
    assert_eq!(dst, src[..60]);
    let src = vec![2.0f64; 10];
    let mut dst = vec![0.0f64; 20];
    put_run(&mut dst, &src);
    fence();
    assert_eq!(&dst[..10], &src[..]);
    assert!(dst[10..].iter().all(|&x| x == 0.0));
}
