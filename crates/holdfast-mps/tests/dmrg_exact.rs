//! DMRG against exact answers (SPEC W7): the Ising chain against its free-fermion energy (for
//! several lengths and fields, the critical point h = J among them), and the Heisenberg and XXZ
//! chains against exact diagonalisation, each run until the energy moves less than 1e-12 between
//! sweeps (30 at most). The held session, a scoped entry per operation and the naive baseline
//! agree exactly.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a failed unwrap is a failed test")]

#[path = "support/exact.rs"]
mod exact;

use holdfast::CpuBackend;
use holdfast::ResourceLimits;
use holdfast::layers::session::NaiveBaseline;
use holdfast_mps::{DmrgConfig, Model, Naive, Scoped, dmrg};

fn backend() -> CpuBackend {
    CpuBackend::builder().threads(1).private_arbiter().build().unwrap()
}

fn ground(model: Model, sites: usize, chi: usize) -> f64 {
    let backend = backend();
    let mut session = backend.open_session().unwrap();
    let config = DmrgConfig::new(vec![chi]).sweeps(30);
    let run = dmrg(&mut session, &model, sites, &config).unwrap();
    session.close().unwrap();
    run.energy
}

fn assert_close(got: f64, exact: f64, tolerance: f64, what: &str) {
    let rel = ((got - exact) / exact).abs();
    assert!(rel <= tolerance, "{what}: DMRG {got:.14} vs exact {exact:.14} (relative {rel:.1e})");
}

#[test]
fn tfim_matches_free_fermions() {
    for (sites, h) in [(12, 1.0), (20, 1.0), (16, 0.5), (16, 1.7), (10, -0.8)] {
        let exact = exact::tfim_free_fermion_energy(sites, 1.0, h);
        let e = ground(Model::Tfim { j: 1.0, h }, sites, 48);
        assert_close(e, exact, 1e-8, &format!("tfim L={sites} h={h}"));
    }
}

#[test]
fn tfim_with_another_coupling_matches_free_fermions() {
    let exact = exact::tfim_free_fermion_energy(14, 0.7, 0.7);
    assert_close(ground(Model::Tfim { j: 0.7, h: 0.7 }, 14, 48), exact, 1e-8, "tfim J=h=0.7");
}

#[test]
fn heisenberg_and_xxz_match_exact_diagonalisation() {
    for sites in [6, 10] {
        let exact = exact::ground_energy_ed(exact::Model::Heisenberg { j: 1.0 }, sites);
        assert_close(ground(Model::Heisenberg { j: 1.0 }, sites, 64), exact, 1e-8, "heisenberg");
    }
    let exact = exact::ground_energy_ed(exact::Model::Xxz { j: 1.0, delta: 0.5 }, 10);
    assert_close(ground(Model::Xxz { j: 1.0, delta: 0.5 }, 10, 64), exact, 1e-8, "xxz D=0.5");
    let exact = exact::ground_energy_ed(exact::Model::Xxz { j: 0.8, delta: 2.0 }, 8);
    assert_close(ground(Model::Xxz { j: 0.8, delta: 2.0 }, 8, 64), exact, 1e-8, "xxz J=0.8 D=2");
}

#[test]
fn the_model_exact_energy_is_the_free_fermion_value() {
    let backend = backend();
    let mut session = backend.open_session().unwrap();
    for (sites, j, h) in [(2, 1.0, 1.0), (9, 1.0, 0.3), (50, 1.0, 1.0), (30, -0.5, 2.0)] {
        let ours = Model::Tfim { j, h }.exact_energy(&mut session, sites).unwrap().unwrap();
        let reference = exact::tfim_free_fermion_energy(sites, j, h);
        assert!((ours - reference).abs() <= 1e-12 * reference.abs(), "{sites} {j} {h}");
    }
}

#[test]
fn held_scoped_and_naive_runs_agree() {
    let model = Model::Heisenberg { j: 1.0 };
    let config = DmrgConfig::new(vec![8, 16]).sweeps(3).tolerance(0.0);
    let backend = backend();
    let mut session = backend.open_session().unwrap();
    let held = dmrg(&mut session, &model, 8, &config).unwrap();
    session.close().unwrap();
    let scoped = dmrg(&mut Scoped(&backend), &model, 8, &config).unwrap();
    assert_eq!(held.energy, scoped.energy);
    let baseline = NaiveBaseline::new(&backend, ResourceLimits::default()).unwrap();
    let naive = dmrg(&mut Naive(&baseline), &model, 8, &config).unwrap();
    assert_eq!(held.energy, naive.energy);
    let stats = baseline.stats();
    assert!(stats.operations > 0 && stats.locks == stats.calls && stats.installs == stats.calls);
    assert_eq!(held.sweeps.len(), 3);
    assert_eq!(held.sweeps.iter().map(|s| s.max_bond).collect::<Vec<_>>(), vec![8, 16, 16]);
}
