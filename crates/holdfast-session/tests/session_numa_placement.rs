//! NUMA placement (SPEC F3) against the machine's real topology and the process-wide arbiter:
//! one engine per node with a pool bound to the node's CPUs, the one-node case equal to the
//! default engine, typed errors for a node without usable CPUs, and concurrent sessions on
//! different nodes.

use std::sync::Barrier;

use holdfast_affinity::{Topology, thread_binding};
use holdfast_session::{BuildError, CpuBackend};

#[test]
fn one_engine_per_node_with_its_pool_bound_to_the_nodes_cpus() {
    let nodes = Topology::get().unwrap().allowed_per_numa_node();
    let engines = CpuBackend::per_numa_node().unwrap();
    assert_eq!(engines.len(), nodes.len());
    for (engine, (node, cpus)) in engines.iter().zip(&nodes) {
        assert_eq!(engine.numa_node(), Some(*node));
        assert_eq!(engine.cpus(), cpus);
        assert_eq!(engine.threads(), cpus.len());
        if let Some(pool) = engine.domain().pool() {
            let bindings = pool.broadcast(|_| thread_binding().unwrap());
            assert!(
                bindings.iter().all(|b| b == cpus),
                "workers bound to node {node}: {bindings:?}"
            );
        }
        assert_eq!(engine.domain().unbound_workers(), 0);
    }
}

#[test]
fn a_one_node_machine_yields_one_engine_equal_to_the_default() {
    if Topology::get().unwrap().allowed_per_numa_node().len() != 1 {
        return;
    }
    let engines = CpuBackend::per_numa_node().unwrap();
    let default = CpuBackend::try_default().unwrap();
    assert_eq!(engines.len(), 1);
    let placed = &engines[0];
    assert_eq!(placed.cpus(), default.cpus());
    assert_eq!(placed.threads(), default.threads());
    assert_eq!(placed.mode(), default.mode());
    assert_eq!(default.numa_node(), None, "the default engine is not placed");
}

#[test]
fn a_node_without_usable_cpus_is_a_typed_error() {
    let nodes = Topology::get().unwrap().allowed_per_numa_node();
    let missing = nodes.iter().map(|(n, _)| n).max().unwrap() + 1;
    match CpuBackend::builder().numa_node(missing).build() {
        Err(BuildError::NumaNode { node, available }) => {
            assert_eq!(node, missing);
            assert_eq!(available, nodes.iter().map(|(n, _)| *n).collect::<Vec<_>>());
        }
        other => panic!("expected NumaNode, got {other:?}"),
    }
    // A node given together with CPUs outside it has no usable CPU either.
    let (node, cpus) = nodes[0];
    let outside =
        holdfast_affinity::CpuSet::from_cpus([(0..1024).find(|c| !cpus.contains(*c)).unwrap()])
            .unwrap();
    let err = CpuBackend::builder().cpus(outside).numa_node(node).build().unwrap_err();
    assert!(matches!(err, BuildError::NumaNode { .. }), "{err:?}");
    // The builder places with its settings: budget, arbiter.
    let one = CpuBackend::builder().numa_node(node).threads(1).build().unwrap();
    assert_eq!((one.threads(), one.numa_node(), one.cpus()), (1, Some(node), &cpus));
}

#[test]
fn sessions_on_different_nodes_run_at_the_same_time() {
    let engines = CpuBackend::per_numa_node().unwrap();
    let barrier = Barrier::new(engines.len());
    std::thread::scope(|s| {
        for engine in &engines {
            let barrier = &barrier;
            s.spawn(move || {
                // Every node's session is held at once: the process-wide arbiter never queues
                // one node behind another (their CPU sets are disjoint).
                let session = engine.try_open_session().unwrap();
                barrier.wait();
                session.close().unwrap();
            });
        }
    });
}
