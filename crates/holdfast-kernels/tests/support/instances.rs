//! Loading of the einsum benchmark instances (`../shared/einsum-instances/*.json`), shared by the
//! instance tests, the einsum bench and the `einsum_instances` example.

#![allow(dead_code, reason = "each user needs a different part")]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test support: a failed unwrap is a failed test"
)]

use std::path::PathBuf;

/// One instance: spec, operand shapes and its two opt_einsum paths.
#[derive(Debug, Clone)]
pub(crate) struct Instance {
    pub(crate) name: String,
    pub(crate) spec: String,
    pub(crate) shapes: Vec<Vec<usize>>,
    pub(crate) opt_flops: Vec<(usize, usize)>,
    pub(crate) opt_size: Vec<(usize, usize)>,
}

/// The numpy reference time of `name` in ms, if listed: numpy 2.4 + opt_einsum 3.4, one
/// thread, the `opt_flops` path, as quoted in the kernels issue. The table lives in
/// `scripts/numpy-quoted-ms.json`, which `cargo xtask bench-report` reads too.
pub(crate) fn numpy_ms(name: &str) -> Option<f64> {
    let table: Vec<(String, f64)> =
        serde_json::from_str(include_str!("../../../../scripts/numpy-quoted-ms.json")).unwrap();
    table.into_iter().find(|(n, _)| n == name).map(|(_, ms)| ms)
}

/// The instance folder: `$HOLDFAST_EINSUM_INSTANCES`, or `../shared/einsum-instances` beside
/// the repository; `None` when absent.
pub(crate) fn instances_dir() -> Option<PathBuf> {
    let dir =
        std::env::var_os("HOLDFAST_EINSUM_INSTANCES").map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/einsum-instances")
        });
    dir.is_dir().then_some(dir)
}

fn path_of(v: &serde_json::Value) -> Vec<(usize, usize)> {
    v["path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let p = p.as_array().unwrap();
            (p[0].as_u64().unwrap() as usize, p[1].as_u64().unwrap() as usize)
        })
        .collect()
}

/// Every instance in the folder, sorted by name (empty when the folder is absent).
pub(crate) fn load_all() -> Vec<Instance> {
    let Some(dir) = instances_dir() else { return Vec::new() };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
            Instance {
                name: v["name"].as_str().unwrap().to_owned(),
                spec: v["format_string"].as_str().unwrap().to_owned(),
                shapes: v["shapes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| {
                        s.as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect()
                    })
                    .collect(),
                opt_flops: path_of(&v["paths"]["opt_flops"]),
                opt_size: path_of(&v["paths"]["opt_size"]),
            }
        })
        .collect()
}
