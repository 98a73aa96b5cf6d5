//! Unit tests of broadcasting rules.

use super::broadcast_shapes;

#[test]
fn numpy_broadcasting() {
    let ok = |a: &[usize], b: &[usize]| broadcast_shapes(a, b).map(|d| d.to_vec());
    assert_eq!(ok(&[], &[3]), Ok(vec![3]));
    assert_eq!(ok(&[2, 1], &[1, 5]), Ok(vec![2, 5]));
    assert_eq!(ok(&[0, 1], &[3]), Ok(vec![0, 3]));
    assert!(ok(&[2, 3], &[3, 2]).is_err());
}
