//! Unit tests of `CpuSet`: set algebra against `BTreeSet`, the CPU-list format, range limits.

use super::{CpuSet, CpuSetError};
use proptest::prelude::*;
use std::collections::BTreeSet;

fn cpus() -> impl Strategy<Value = BTreeSet<usize>> {
    prop::collection::btree_set(
        prop_oneof![0..8usize, 0..CpuSet::MAX_CPUS], // dense and sparse indices
        0..16,
    )
}

fn set(cpus: &BTreeSet<usize>) -> CpuSet {
    CpuSet::from_cpus(cpus.iter().copied()).unwrap()
}

proptest! {
    #[test]
    fn algebra_matches_btreeset(a in cpus(), b in cpus()) {
        let (sa, sb) = (set(&a), set(&b));
        prop_assert_eq!(sa & sb, set(&a.intersection(&b).copied().collect()));
        prop_assert_eq!(sa | sb, set(&a.union(&b).copied().collect()));
        prop_assert_eq!(sa - sb, set(&a.difference(&b).copied().collect()));
        prop_assert_eq!(sa.is_subset(&sb), a.is_subset(&b));
        prop_assert_eq!(sa.is_superset(&sb), a.is_superset(&b));
        prop_assert_eq!(sa.is_disjoint(&sb), a.is_disjoint(&b));
        prop_assert_eq!(sa.overlaps(&sb), !a.is_disjoint(&b));
        prop_assert_eq!(sa.len(), a.len());
        prop_assert_eq!(sa.first(), a.first().copied());
        prop_assert_eq!(sa.iter().collect::<Vec<_>>(), a.iter().copied().collect::<Vec<_>>());
        prop_assert_eq!(
            sa.is_superset_of_prefix(&sb, sb.significant_words()),
            sa.is_superset(&sb)
        );
    }

    #[test]
    fn text_and_words_round_trip(a in cpus()) {
        let s = set(&a);
        prop_assert_eq!(s.to_string().parse::<CpuSet>().unwrap(), s);
        prop_assert_eq!(CpuSet::from_words(&s.to_words()).unwrap(), s);
        let mut removed = s;
        for cpu in &a {
            prop_assert!(removed.remove(*cpu));
        }
        prop_assert!(removed.is_empty());
    }
}

#[test]
fn parses_sysfs_cpu_lists() {
    assert_eq!("0-3,8,10-11\n".parse::<CpuSet>().unwrap().to_string(), "0-3,8,10-11");
    assert_eq!(" 5 ".parse::<CpuSet>().unwrap(), CpuSet::from_cpus([5]).unwrap());
    assert!("".parse::<CpuSet>().unwrap().is_empty());
    assert!("\n".parse::<CpuSet>().unwrap().is_empty());
    assert!(matches!("3-1".parse::<CpuSet>(), Err(CpuSetError::Parse { .. })));
    assert!(matches!("a".parse::<CpuSet>(), Err(CpuSetError::Parse { .. })));
    assert!(matches!("1,,2".parse::<CpuSet>(), Err(CpuSetError::Parse { .. })));
    assert_eq!("0-1024".parse::<CpuSet>(), Err(CpuSetError::OutOfRange { cpu: 1024 }));
}

#[test]
fn limits() {
    assert_eq!(CpuSet::from_range(0..CpuSet::MAX_CPUS).unwrap().len(), CpuSet::MAX_CPUS);
    assert!(CpuSet::from_range(0..CpuSet::MAX_CPUS + 1).is_err());
    let mut words = [0u64; CpuSet::WORDS + 1];
    words[CpuSet::WORDS] = 2;
    assert_eq!(CpuSet::from_words(&words), Err(CpuSetError::OutOfRange { cpu: 1025 }));
    assert!(!CpuSet::new().contains(usize::MAX));
}

#[test]
fn display_and_debug() {
    let set = CpuSet::from_cpus([0, 1, 2, 3, 8, 10, 11, 1023]).unwrap();
    assert_eq!(set.to_string(), "0-3,8,10-11,1023");
    assert_eq!(CpuSet::new().to_string(), "", "the empty set is the empty CPU list");
    assert_eq!(format!("{:?}", CpuSet::from_cpus([5]).unwrap()), "CpuSet(5)");
    assert_eq!(format!("{:?}", CpuSet::new()), "CpuSet()");
}
