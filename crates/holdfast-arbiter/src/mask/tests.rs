//! Unit tests of `CpuMask`: construction limits, the conflict relation and formatting.

use super::{CpuMask, CpuMaskError};
use proptest::prelude::*;
use std::collections::BTreeSet;

#[test]
fn out_of_range_is_rejected() {
    assert_eq!(
        CpuMask::from_cpus([CpuMask::MAX_CPUS]),
        Err(CpuMaskError::OutOfRange { cpu: CpuMask::MAX_CPUS })
    );
    let mut words = vec![0u64; CpuMask::WORDS + 2];
    words[CpuMask::WORDS + 1] = 0b100;
    assert_eq!(
        CpuMask::from_words(&words),
        Err(CpuMaskError::OutOfRange { cpu: (CpuMask::WORDS + 1) * 64 + 2 })
    );
    words[CpuMask::WORDS + 1] = 0;
    words[0] = 1;
    assert_eq!(CpuMask::from_words(&words).map(|m| m.len()), Ok(1));
}

#[test]
fn display_is_a_cpu_list() {
    let mask = CpuMask::from_cpus([0, 1, 2, 3, 8, 10, 11, 1023]).unwrap();
    assert_eq!(mask.to_string(), "0-3,8,10-11,1023");
    assert_eq!(CpuMask::EMPTY.to_string(), "(empty)");
    assert_eq!(format!("{:?}", CpuMask::from_cpus([5]).unwrap()), "CpuMask(5)");
}

fn cpus() -> impl Strategy<Value = BTreeSet<usize>> {
    prop::collection::btree_set(0..CpuMask::MAX_CPUS, 0..12)
}

proptest! {
    #[test]
    fn set_relations_match_btreeset(a in cpus(), b in cpus()) {
        let ma = CpuMask::from_cpus(a.iter().copied()).unwrap();
        let mb = CpuMask::from_cpus(b.iter().copied()).unwrap();
        prop_assert_eq!(ma.overlaps(&mb), !a.is_disjoint(&b));
        prop_assert_eq!(ma.is_subset(&mb), a.is_subset(&b));
        prop_assert_eq!(ma.len(), a.len());
        prop_assert_eq!(ma.is_empty(), a.is_empty());
        prop_assert_eq!(ma.iter().collect::<Vec<_>>(), a.iter().copied().collect::<Vec<_>>());
        prop_assert_eq!(CpuMask::from_words(ma.words()).unwrap(), ma);
    }
}
