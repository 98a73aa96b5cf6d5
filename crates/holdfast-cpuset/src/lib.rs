//! The CPU-set value of holdfast (layer 0).
//!
//! [`CpuSet`] is the one set of CPU indices in the workspace. Two crates of layer 1 that must not
//! know each other (SPEC L1) both speak it: `holdfast-affinity` describes topology and thread
//! bindings with it, and `holdfast-arbiter` takes it as an admission request, two requests
//! conflicting when they [overlap](CpuSet::overlaps). The session layer hands an engine's CPUs
//! from one to the other unchanged.
//!
//! # Examples
//!
//! ```
//! use holdfast_cpuset::CpuSet;
//!
//! let engine: CpuSet = "0-3".parse()?;
//! let other = CpuSet::from_cpus([3, 4])?;
//! assert!(engine.overlaps(&other)); // the arbiter would queue one behind the other
//! assert_eq!((engine - other).to_string(), "0-2");
//! # Ok::<(), holdfast_cpuset::CpuSetError>(())
//! ```

mod set;

pub use set::{CpuSet, CpuSetError};
