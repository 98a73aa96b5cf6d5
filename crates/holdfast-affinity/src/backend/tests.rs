//! Unit tests of the backend layer: the fallback's kernel-word conversion, and that the active
//! backend's binding calls are counted.

use super::system_calls;

#[cfg(all(not(feature = "hwloc"), target_os = "linux"))]
#[test]
fn kernel_words_round_trip() {
    use super::linux::{from_longs, to_longs};
    use holdfast_cpuset::CpuSet;

    let set = CpuSet::from_cpus([0, 31, 32, 63, 64, 1023]).unwrap();
    assert_eq!(from_longs(&to_longs(&set)), set);
    assert_eq!(to_longs(&set)[0] & 1, 1);
}

#[test]
fn reads_and_writes_are_counted() {
    let before = system_calls();
    let binding = super::thread_binding().unwrap();
    super::bind_thread(&binding).unwrap();
    let after = system_calls();
    assert_eq!((after.reads - before.reads, after.writes - before.writes), (1, 1));
}
