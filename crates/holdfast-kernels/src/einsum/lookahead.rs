//! Look-ahead over a contraction path on label sets only: for each step, the later step that
//! consumes its result, the partner it meets there and the labels that survive that step. The
//! planner uses it to lay an intermediate out the way its consumer reads it (batch labels, then
//! its own kept labels, then the contracted ones), so that the consumer needs no permuting copy.
//!
//! # Invariant
//!
//! Label sets here are exactly those the planner computes: a step's result holds the labels of
//! its two operands that another live operand or the output still holds.

/// Where a step's result goes.
#[derive(Debug, Clone)]
pub(super) struct Consumer {
    /// Operand id of the partner (inputs are `0..n`, the result of step `s` is `n + s`).
    pub(super) partner: usize,
    /// The partner's labels (unique).
    pub(super) partner_labels: Vec<u32>,
    /// Labels of the consumer step's result.
    pub(super) survivors: Vec<u32>,
    /// The result is the consumer step's A (its first operand), not its B.
    pub(super) as_a: bool,
}

/// For each step of `path` over operands with label sets `terms`, its result's consumer (`None`
/// for the last step). `path` must be valid (checked by the caller).
pub(super) fn consumers(
    terms: &[Vec<u32>],
    output: &[u32],
    path: &[(usize, usize)],
    num_labels: usize,
) -> Vec<Option<Consumer>> {
    let n = terms.len();
    let mut count = vec![0usize; num_labels];
    for &l in terms.iter().flatten().chain(output) {
        count[l as usize] += 1;
    }
    let mut labels: Vec<Vec<u32>> = terms.to_vec();
    let mut live: Vec<usize> = (0..n).collect();
    // (a id, b id, result labels) of every step.
    let mut steps: Vec<(usize, usize, Vec<u32>)> = Vec::with_capacity(path.len());
    for &(i, j) in path {
        let (hi, lo) = if i > j { (i, j) } else { (j, i) };
        let h = live.remove(hi);
        let l = live.remove(lo);
        let (x, y) = if i > j { (h, l) } else { (l, h) };
        for &lab in labels[x].iter().chain(&labels[y]) {
            count[lab as usize] -= 1;
        }
        let mut result: Vec<u32> = Vec::new();
        for &lab in labels[x].iter().chain(&labels[y]) {
            if count[lab as usize] > 0 && !result.contains(&lab) {
                result.push(lab);
            }
        }
        for &lab in &result {
            count[lab as usize] += 1;
        }
        live.push(labels.len());
        labels.push(result.clone());
        steps.push((x, y, result));
    }
    let mut out: Vec<Option<Consumer>> = vec![None; path.len()];
    for (t, (x, y, result)) in steps.iter().enumerate() {
        for (me, other, as_a) in [(*x, *y, true), (*y, *x, false)] {
            if let Some(s) = me.checked_sub(n) {
                out[s] = Some(Consumer {
                    partner: other,
                    partner_labels: labels[other].clone(),
                    survivors: result.clone(),
                    as_a,
                });
            }
        }
        debug_assert!(t < path.len());
    }
    out
}
