//! Unit tests of the targets' verdicts: ratios, paired repetitions, missing measurements.

use super::{Medians, criterion_verdicts, einsum_verdicts, numpy_quoted};
use serde_json::json;

#[test]
fn an_empty_table_is_never_met() {
    let verdicts = super::einsum_pair(&[], "quoted medians", super::EinsumRow::speedup);
    assert!(verdicts.iter().all(|v| v.met.is_none()), "{verdicts:?}");
}

#[test]
fn the_quoted_numpy_table_parses_whole() {
    let table = numpy_quoted();
    assert_eq!(table.len(), 14, "the kernels issue quotes fourteen instances");
    assert_eq!(table[0], ("bin_matmul_256".to_owned(), 0.98));
    assert!(table.iter().all(|(_, ms)| *ms > 0.0));
}

#[test]
fn ratios_and_missing_measurements() {
    let mut m = Medians::new();
    m.insert("matmul_f64_pairs/plan_execute_into/4".into(), 36.0);
    m.insert("matmul_f64_pairs/faer_direct/4".into(), 33.0);
    m.insert("checkout/take_return".into(), 60.0);
    let v = criterion_verdicts(&m);
    let n4 = v.iter().find(|v| v.what.contains("n=4")).unwrap();
    assert_eq!(n4.met, Some(true), "{n4:?}");
    let checkout = v.iter().find(|v| v.what.contains("checkout")).unwrap();
    assert_eq!(checkout.met, Some(false));
    let n8 = v.iter().find(|v| v.what.contains("n=8")).unwrap();
    assert_eq!(n8.met, None, "a missing measurement is never met");
}

#[test]
fn repeated_pairs_give_the_median_ratio() {
    let mut m = Medians::new();
    let into = |v: &[super::Verdict]| {
        v.iter().find(|v| v.what.contains("held matmul_into")).unwrap().clone()
    };
    for (rep, held, direct) in [(1, 90.0, 40.0), (2, 60.0, 50.0), (3, 70.0, 50.0)] {
        m.insert(format!("held_session_dispatch/held_matmul_into/{rep}"), held);
        m.insert(format!("held_session_dispatch/direct_faer_into/{rep}"), direct);
    }
    // Ratios 2.25, 1.2, 1.4: the median 1.4 is met although one pair missed.
    let v = into(&criterion_verdicts(&m));
    assert_eq!(v.met, Some(true), "{v:?}");
    assert!(v.measured.contains("median of 3 side-by-side pairs 1.40x"), "{v:?}");
    m.insert("held_session_dispatch/held_matmul_into/2".into(), 100.0);
    assert_eq!(into(&criterion_verdicts(&m)).met, Some(false));
    // A missing partner ends the repetitions: none left means not measured.
    m.remove("held_session_dispatch/direct_faer_into/1");
    assert_eq!(into(&criterion_verdicts(&m)).met, None);
}

#[test]
fn repeated_pairs_give_the_median_difference() {
    let mut m = Medians::new();
    let add =
        |v: &[super::Verdict]| v.iter().find(|v| v.what.contains("held add of 2")).unwrap().clone();
    assert_eq!(add(&criterion_verdicts(&m)).met, None, "not measured");
    for (rep, held, kernel) in [(1, 90.0, 10.0), (2, 30.0, 10.0), (3, 35.0, 10.0)] {
        m.insert(format!("fixed_cost/add2_f64/held/{rep}"), held);
        m.insert(format!("fixed_cost/add2_f64/kernel/{rep}"), kernel);
    }
    // Differences 80, 20, 25: the median 25 ns is within 30 ns.
    let v = add(&criterion_verdicts(&m));
    assert_eq!(v.met, Some(true), "{v:?}");
    assert!(v.measured.contains("median of 3 side-by-side pairs 25.0 ns"), "{v:?}");
    m.insert("fixed_cost/add2_f64/held/3".into(), 50.0);
    assert_eq!(add(&criterion_verdicts(&m)).met, Some(false));
}

#[test]
fn einsum_geomean_needs_every_instance() {
    let (rows, verdicts) = einsum_verdicts(None, None, None);
    assert!(rows.iter().all(|r| r.held_ms.is_none()));
    assert!(verdicts.iter().all(|v| v.met.is_none()));
    assert_eq!(verdicts.len(), 4);
    let bench = json!({"settings": [{"threads": 1, "cases": [
        {"name": "einsum/bin_matmul_256", "ways": {"held": {"warm_median_ns": 0.49e6}}}
    ]}]});
    let now: std::collections::BTreeMap<String, f64> =
        [("bin_matmul_256".to_owned(), 0.245)].into_iter().collect();
    let (rows, verdicts) = einsum_verdicts(Some(&bench), Some(&now), None);
    let r = rows.iter().find(|r| r.name == "bin_matmul_256").unwrap();
    assert!((r.speedup().unwrap() - 2.0).abs() < 1e-9);
    assert!((r.speedup_now().unwrap() - 0.5).abs() < 1e-9);
    // holdfast's turn beside numpy, when it took one, is what numpy's time in this run divides;
    // the quoted median still divides the campaign's.
    let turn: std::collections::BTreeMap<String, f64> =
        [("bin_matmul_256".to_owned(), 0.1225)].into_iter().collect();
    let (turned, _) = einsum_verdicts(Some(&bench), Some(&now), Some(&turn));
    let t = turned.iter().find(|r| r.name == "bin_matmul_256").unwrap();
    assert!((t.speedup_now().unwrap() - 2.0).abs() < 1e-9);
    assert!((t.speedup().unwrap() - 2.0).abs() < 1e-9);
    let others = rows.iter().filter(|r| r.name != "bin_matmul_256");
    assert!(others.clone().all(|r| r.speedup_now().is_none()));
    // One instance measured of fourteen: no verdict is met or missed yet.
    assert!(verdicts.iter().all(|v| v.met.is_none()), "{verdicts:?}");
    assert!(verdicts[2].measured.contains("1 slower"), "{verdicts:?}");
}
