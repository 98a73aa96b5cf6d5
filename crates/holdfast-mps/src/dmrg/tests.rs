//! How far each bond is solved: the sweep's residual target from the previous sweep, its floor,
//! and a bond's bound from its start vector's residual.

use super::lanczos::Tolerance;
use super::{MAX_RESIDUAL, next_target};

#[test]
fn a_sweep_that_moved_a_lot_sets_the_loosest_target() {
    // After the first sweep the change is NaN (no energy before it).
    let t = next_target(1e-6, f64::NAN, 0.0);
    assert_eq!(t, Tolerance { target: MAX_RESIDUAL, floor: 1e-6 });
    let t = next_target(1e-6, 1.0, 0.0);
    assert_eq!(t.target, MAX_RESIDUAL);
}

#[test]
fn the_target_follows_the_square_root_of_the_change() {
    let t = next_target(1e-6, 1e-8, 0.0);
    assert!((t.target - 1e-5).abs() < 1e-18, "{t:?}");
    // A change the configured residual already resolves: the floor.
    let t = next_target(1e-6, 1e-14, 0.0);
    assert_eq!(t, Tolerance { target: 1e-6, floor: 1e-6 });
}

#[test]
fn the_truncation_raises_the_floor() {
    // A discarded weight of 1e-8: solving below 0.1 · 1e-4 buys nothing.
    let t = next_target(1e-6, 1e-14, 1e-8);
    assert!((t.floor - 1e-5).abs() < 1e-18 && t.target == t.floor, "{t:?}");
    // A floor above the loosest target still holds.
    let t = next_target(1e-6, 1.0, 1e-2);
    assert!((t.floor - 1e-2).abs() < 1e-15 && t.target == t.floor, "{t:?}");
}

#[test]
fn every_bond_makes_progress_within_the_floor() {
    let t = Tolerance { target: 1e-3, floor: 1e-6 };
    // A start far from the target: the target.
    assert_eq!(t.bound(1.0), 1e-3);
    // A start already within the target: a factor of progress still.
    assert!((t.bound(1e-4) - 5e-5).abs() < 1e-18);
    // A start within twice the floor: the floor.
    assert_eq!(t.bound(1.5e-6), 1e-6);
    // Never below the floor.
    assert_eq!(t.bound(1e-6), 1e-6);
}
