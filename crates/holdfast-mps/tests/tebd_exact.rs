//! TEBD against exact state-vector evolution (SPEC W7): `⟨Z_i⟩`, `⟨X_i⟩` and the energy within
//! the Trotter error, the error shrinking as `dt²` (second order), energy conservation of real
//! time, and imaginary time reaching the ground state.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "a failed unwrap is a failed test")]

#[path = "support/exact.rs"]
mod exact;

use holdfast::CpuBackend;
use holdfast_mps::tebd::{InitialState, TebdConfig, TebdRun, tebd};
use holdfast_mps::{DmrgConfig, Model, dmrg};

fn run(model: Model, sites: usize, init: InitialState, config: &TebdConfig) -> TebdRun {
    let backend = CpuBackend::builder().threads(1).private_arbiter().build().unwrap();
    let mut session = backend.open_session().unwrap();
    let run = tebd(&mut session, &model, sites, init, config).unwrap();
    session.close().unwrap();
    run
}

fn reference_model(model: Model) -> exact::Model {
    match model {
        Model::Tfim { j, h } => exact::Model::Tfim { j, h },
        Model::Heisenberg { j } => exact::Model::Heisenberg { j },
        Model::Xxz { j, delta } => exact::Model::Xxz { j, delta },
    }
}

/// The state vector of a product state, bit i of the index = site i, set = down.
fn product_vector(sites: usize, site: impl Fn(usize) -> [f64; 2]) -> Vec<(f64, f64)> {
    (0..1usize << sites)
        .map(|index| {
            let amp: f64 = (0..sites).map(|i| site(i)[(index >> i) & 1]).product();
            (amp, 0.0)
        })
        .collect()
}

/// The largest deviation of TEBD's final `⟨Z_i⟩` and `⟨X_i⟩` from the exact evolution.
fn observable_error(model: Model, sites: usize, init: InitialState, dt: f64, time: f64) -> f64 {
    let config = TebdConfig::new(dt, time).bond_dim(64).cutoff(0.0);
    let tebd_run = run(model, sites, init, &config);
    let site = |i: usize| match init {
        InitialState::Up => [1.0, 0.0],
        InitialState::Neel => {
            if i.is_multiple_of(2) {
                [1.0, 0.0]
            } else {
                [0.0, 1.0]
            }
        }
        InitialState::Plus => [std::f64::consts::FRAC_1_SQRT_2; 2],
    };
    let psi =
        exact::evolve_exact(reference_model(model), sites, &product_vector(sites, site), time, 200);
    let last = tebd_run.steps.last().unwrap();
    let mut worst: f64 = 0.0;
    for i in 0..sites {
        worst = worst.max((last.z[i] - exact::expect_z(sites, &psi, i)).abs());
        worst = worst.max((last.x[i] - exact::expect_x(sites, &psi, i)).abs());
    }
    let e = exact::energy(reference_model(model), sites, &psi);
    worst.max((last.energy - e).abs() / sites as f64)
}

#[test]
fn real_time_matches_exact_evolution_to_second_order() {
    let cases = [
        (Model::Tfim { j: 1.0, h: 0.7 }, 8, InitialState::Up),
        (Model::Heisenberg { j: 1.0 }, 8, InitialState::Neel),
        (Model::Xxz { j: 1.0, delta: 0.5 }, 6, InitialState::Plus),
    ];
    for (model, sites, init) in cases {
        let coarse = observable_error(model, sites, init, 0.04, 1.0);
        let fine = observable_error(model, sites, init, 0.02, 1.0);
        assert!(fine < 2e-3, "{model:?}: error {fine} at dt = 0.02");
        // Second order: halving dt divides the error by about four.
        let ratio = coarse / fine;
        assert!(
            (3.0..5.5).contains(&ratio),
            "{model:?}: errors {coarse} and {fine} (ratio {ratio})"
        );
    }
}

#[test]
fn real_time_conserves_the_energy_and_starts_at_time_zero() {
    let model = Model::Tfim { j: 1.0, h: 1.3 };
    let r = run(model, 10, InitialState::Plus, &TebdConfig::new(0.02, 1.0).bond_dim(32));
    assert_eq!(r.steps.len(), 51);
    assert_eq!(r.steps[0].time, 0.0);
    assert!(r.steps[0].entropy.iter().all(|&s| s == 0.0), "a product state has no entanglement");
    let e0 = r.steps[0].energy;
    // For all +X, <H> = -h L exactly.
    assert!((e0 + 13.0).abs() < 1e-12, "{e0}");
    for s in &r.steps {
        assert!((s.energy - e0).abs() < 1e-3, "energy drifted to {} at t = {}", s.energy, s.time);
    }
    assert!(r.steps.last().unwrap().entropy.iter().any(|&s| s > 0.01), "the quench entangles");
}

#[test]
fn imaginary_time_reaches_the_ground_state() {
    let model = Model::Heisenberg { j: 1.0 };
    let config = TebdConfig::new(0.05, 8.0).imaginary(true).bond_dim(32);
    let r = run(model, 8, InitialState::Neel, &config);
    let exact = exact::ground_energy_ed(exact::Model::Heisenberg { j: 1.0 }, 8);
    let last = r.steps.last().unwrap();
    // Trotter error of imaginary time: O(dt²) in the energy.
    assert!((last.energy - exact).abs() < 2e-3, "{} vs {exact}", last.energy);
    assert!(r.steps.windows(2).all(|w| w[1].energy <= w[0].energy + 1e-9), "energy decreases");
    // And DMRG agrees with ED far more closely.
    let backend = CpuBackend::builder().threads(1).private_arbiter().build().unwrap();
    let mut session = backend.open_session().unwrap();
    let d = dmrg(&mut session, &model, 8, &DmrgConfig::new(vec![32])).unwrap();
    assert!((d.energy - exact).abs() < 1e-9);
}
