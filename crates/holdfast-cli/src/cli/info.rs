//! `holdfast info`: the machine as the engine sees it: topology (hwloc), the default domain and
//! its thread budget, the per-family fan-out thresholds and the default resource limits.
#![allow(clippy::print_stdout, reason = "the report is the program's output")]

use clap::Args;
use holdfast::ResourceLimits;
use holdfast::layers::affinity::Topology;
use holdfast::layers::kernels::Family;
use serde_json::json;

use super::backend_with_threads;
use super::error::CliError;
use super::table::Table;

/// Options of `holdfast info`.
#[derive(Debug, Clone, Args)]
pub(crate) struct InfoArgs {
    /// Thread budget of the domain to describe (default: every CPU the process may use).
    #[arg(long, value_name = "N")]
    pub(crate) threads: Option<usize>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

/// The fan-out families and their size units, in table order.
const FAMILIES: [(&str, Family, &str); 5] = [
    ("elementwise", Family::Elementwise, "output elements"),
    ("reduce", Family::Reduce, "input elements"),
    ("permute", Family::Permute, "elements"),
    ("gemm", Family::Gemm, "flops (2*batch*m*n*k)"),
    ("contraction", Family::Contraction, "flops of the whole path"),
];

/// Runs `holdfast info`.
///
/// # Errors
///
/// When the topology cannot be read or the default engine cannot be built.
pub(crate) fn run(args: &InfoArgs) -> Result<(), CliError> {
    let topology =
        Topology::get().map_err(|e| CliError::Usage(format!("cannot read the topology: {e}")))?;
    let backend = backend_with_threads(args.threads)?;
    let limits = ResourceLimits::default();
    if args.json {
        let doc = json!({
            "topology": {
                "backend": topology.backend(),
                "pus": topology.pus().to_string(),
                "pu_count": topology.pus().len(),
                "cores": topology.cores().len(),
                "allowed": topology.allowed().to_string(),
                "process_binding": topology.process_binding().to_string(),
                "numa_nodes": topology.numa_nodes().iter().map(|n| json!({"os_index": n.os_index(), "cpus": n.cpus().to_string()})).collect::<Vec<_>>(),
            },
            "domain": {
                "cpus": backend.cpus().to_string(),
                "threads": backend.threads(),
                "mode": format!("{:?}", backend.mode()),
            },
            "thresholds": FAMILIES.iter().map(|(name, family, unit)| json!({"family": name, "min_size": holdfast::layers::provider::threshold(*family), "unit": unit})).collect::<Vec<_>>(),
            "resource_limits": {
                "buffer_retention_bytes": limits.buffer_retention_bytes,
                "gemm_analysis_cache": {"max_entries": limits.gemm_analysis_cache.max_entries, "max_bytes": limits.gemm_analysis_cache.max_bytes},
                "indexed_plan_cache": {"max_entries": limits.indexed_plan_cache.max_entries, "max_bytes": limits.indexed_plan_cache.max_bytes},
            },
        });
        println!("{doc}");
        return Ok(());
    }
    println!("topology ({})", topology.backend());
    println!("  processing units  {} ({})", topology.pus().len(), topology.pus());
    println!("  physical cores    {}", topology.cores().len());
    println!("  process binding   {}", topology.process_binding());
    println!("  allowed CPUs      {} ({})", topology.allowed().len(), topology.allowed());
    for node in topology.numa_nodes() {
        println!("  NUMA node {:<7} CPUs {}", node.os_index(), node.cpus());
    }
    println!();
    println!("default domain");
    println!("  CPUs              {}", backend.cpus());
    println!("  thread budget     {}", backend.threads());
    println!("  parallel mode     {:?}", backend.mode());
    println!();
    println!(
        "fan-out thresholds (an operation below its family's threshold never installs the pool)"
    );
    let mut table = Table::new(&["family", "threshold", "unit"]);
    for (name, family, unit) in FAMILIES {
        table.row(vec![
            (*name).to_owned(),
            holdfast::layers::provider::threshold(family).to_string(),
            (*unit).to_owned(),
        ]);
    }
    for line in table.render().lines() {
        println!("  {line}");
    }
    println!();
    println!("default resource limits");
    println!("  buffer pool       {} MiB retained at most", limits.buffer_retention_bytes >> 20);
    let cache = |c: holdfast::layers::resources::CacheLimits| {
        format!("{} entries, {} KiB at most", c.max_entries, c.max_bytes >> 10)
    };
    println!("  GEMM plans        {}", cache(limits.gemm_analysis_cache));
    println!("  einsum plans      {}", cache(limits.indexed_plan_cache));
    Ok(())
}
