//! Unit tests of the campaign report's M2 checks and of which cases count as tiny.

use super::super::Setting;
use super::super::campaign::{CaseResult, Counters, Way, WayResult};
use super::{checks, tiny};

fn case(name: &str, held: Counters) -> CaseResult {
    let way = |way, counters| WayResult { way, cold_ns: vec![], warm_ns: vec![1.0], counters };
    CaseResult {
        name: name.to_owned(),
        family: "matmul",
        ops_per_round: 1,
        rounds: 1,
        ways: vec![
            way(Way::Direct, Counters { ops: 10, ..Counters::default() }),
            way(Way::Held, held),
        ],
        max_difference: 0.0,
        digest: None,
    }
}

fn allocation_check(cases: Vec<CaseResult>) -> (bool, String) {
    let settings = [Setting { threads: 2, cpus: "0-1".to_owned(), cases }];
    let c = checks(&settings).into_iter().find(|c| c.what.contains("heap allocations")).unwrap();
    (c.met, c.detail)
}

#[test]
fn allocations_fail_inline_operations_and_are_reported_for_fanned_out_ones() {
    let inline =
        Counters { ops: 10, allocations: 1, pool_installs: Some(0), ..Counters::default() };
    let fanned =
        Counters { ops: 100, allocations: 3, pool_installs: Some(100), ..Counters::default() };
    let clean = Counters { ops: 10, pool_installs: Some(0), ..Counters::default() };
    let (met, detail) = allocation_check(vec![case("matmul/4", clean)]);
    assert!(met && detail == "every case", "{detail}");
    let (met, detail) = allocation_check(vec![case("matmul/256", fanned)]);
    assert!(met && detail.contains("fanned out") && detail.contains("matmul/256"), "{detail}");
    let (met, detail) =
        allocation_check(vec![case("matmul/4", inline), case("matmul/256", fanned)]);
    assert!(!met && detail.contains("matmul/4") && !detail.contains("matmul/256"), "{detail}");
}

#[test]
fn tiny_cases_are_the_adds_the_factorizations_and_the_small_products() {
    let mut names: Vec<String> = super::super::cases::kernel_cases(0)
        .unwrap()
        .into_iter()
        .map(|c| {
            let mut r = case(&c.name, Counters::default());
            r.family = c.family;
            r
        })
        .filter(tiny)
        .map(|r| r.name)
        .collect();
    names.sort();
    let want = ["add/1024", "add/2", "eigh/32", "matmul/16", "matmul/2", "matmul/4"];
    let want = want.iter().chain(&["matmul/8", "qr/32", "svd/32"]);
    assert_eq!(names, want.map(|s| (*s).to_owned()).collect::<Vec<_>>());
}
