//! Acceptance of issue 8: `holdfast einsum lm_batch_likelihood_brackets_4_4d.json --inputs DIR
//! --out r.npy` writes a result equal, to 1e-12 relative, to `numpy.einsum` on the same `.npy`
//! inputs.
//!
//! Runs when `python3` with numpy is available and is skipped with a message otherwise (CI does
//! not install numpy). numpy's einsum accepts only 52 ASCII labels and this instance has 105
//! Unicode ones, so the reference follows the instance's opt_flops path pair by pair, as
//! `numpy.einsum(..., optimize=path)` would, relabelling each pairwise step to ASCII.

mod support;

use std::process::Command;

use support::{holdfast, instances_dir, s, scratch};

/// Writes one random `.npy` operand per shape of the instance (`op_000.npy`, …).
const GENERATE: &str = r#"
import json, sys
import numpy as np
inst = json.load(open(sys.argv[1]))
rng = np.random.default_rng(int(sys.argv[3]))
for i, shape in enumerate(inst["shapes"]):
    np.save(f"{sys.argv[2]}/op_{i:03d}.npy", rng.random(shape))
"#;

/// numpy.einsum along the instance's opt_flops path; compares with the result file.
const CHECK: &str = r#"
import json, os, string, sys
import numpy as np
inst = json.load(open(sys.argv[1]))
inputs, out = sys.argv[2], sys.argv[3]
spec = inst["format_string"]
lhs, rhs = spec.split("->")
terms = lhs.split(",")
files = sorted(f for f in os.listdir(inputs) if f.endswith(".npy"))
ops = [(np.load(os.path.join(inputs, f)), t) for f, t in zip(files, terms)]
assert len(ops) == len(terms)

def einsum(spec_terms, out_term, arrays):
    labels = sorted(set("".join(spec_terms) + out_term))
    ascii_of = dict(zip(labels, string.ascii_letters))
    tr = lambda t: "".join(ascii_of[c] for c in t)
    return np.einsum(",".join(tr(t) for t in spec_terms) + "->" + tr(out_term), *arrays)

for i, j in inst["paths"]["opt_flops"]["path"]:
    (a, ta), (b, tb) = ops[i], ops[j]
    rest = [t for k, (_, t) in enumerate(ops) if k not in (i, j)]
    needed = set("".join(rest) + rhs)
    keep = "".join(dict.fromkeys(c for c in ta + tb if c in needed))
    ops = [o for k, o in enumerate(ops) if k not in (i, j)] + [(einsum([ta, tb], keep, [a, b]), keep)]
assert len(ops) == 1
want = einsum([ops[0][1]], rhs, [ops[0][0]])
got = np.load(out)
assert got.dtype == np.float64, got.dtype
assert got.shape == want.shape, (got.shape, want.shape)
scale = np.max(np.abs(want))
err = np.max(np.abs(got - want)) / scale if scale > 0 else np.max(np.abs(got - want))
print(f"relative difference {err:.3e}")
sys.exit(0 if err <= 1e-12 else 1)
"#;

fn python_with_numpy() -> bool {
    Command::new("python3").args(["-c", "import numpy"]).output().is_ok_and(|o| o.status.success())
}

#[allow(clippy::unwrap_used, reason = "test helper: a failure is a failed test")]
fn python(script: &str, args: &[&str]) {
    let out = Command::new("python3").arg("-c").arg(script).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "python failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprint!("{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn lm_batch_likelihood_matches_numpy_einsum() {
    if !python_with_numpy() {
        eprintln!(
            "skipped: python3 with numpy is not available (pip install numpy to run this check)"
        );
        return;
    }
    let Some(dir) = instances_dir() else {
        eprintln!("skipped: ../shared/einsum-instances is not present");
        return;
    };
    let instance = dir.join("lm_batch_likelihood_brackets_4_4d.json");
    let work = scratch("numpy");
    let inputs = work.join("inputs");
    std::fs::create_dir_all(&inputs).unwrap();
    python(GENERATE, &[s(&instance), s(&inputs), "8"]);
    let out = work.join("r.npy");
    let run = holdfast(&[
        "einsum",
        s(&instance),
        "--inputs",
        s(&inputs),
        "--out",
        s(&out),
        "--repeat",
        "1",
        "-q",
    ]);
    assert_eq!(run.code, Some(0), "{run:?}");
    python(CHECK, &[s(&instance), s(&inputs), s(&out)]);
}
