//! How a contraction step lays out its operands and result for GEMM (private to the planner).
//!
//! - [`Form`]: how one operand enters a GEMM in place (loop labels and a matrix-axis tail) or
//!   that it must be copied dense.
//! - [`Want`]: the result order a step should produce: the output's on the last step, or the
//!   order the consuming step reads in place (found by the look-ahead). A result that cannot
//!   have it still orders the labels a copied operand leaves free for the copy that will read
//!   it ([`Want::arrange_tail`]).
//! - [`Choice`]: one complete layout of a step, with its estimated traffic in elements (copied
//!   elements, GEMM calls at [`GEMM_CALL_COST`] each, operand re-reads, and the copy a result in
//!   an unwanted order will cause). The planner takes the cheapest. [`Choice::k_looped`] is the
//!   one kind that loops over contracted labels (each iteration adds into C) instead of
//!   copying an operand whose contracted labels are not nested in memory;
//!   [`Choice::directed`], narrowed, loops over kept labels instead of copying an operand
//!   that holds only part of the wanted matrix axis in order.
//!
//! # Invariant
//!
//! Every layout produced here is executable as planned: each operand's contracted group and
//! matrix-axis tail are nested in its (possibly copied) memory layout with a unit stride in one
//! of them, and the result's row and column groups are nested in the result's order.

#[cfg(test)]
mod tests;

use std::ops::Range;

use super::lookahead::Consumer;
use super::planner::{Labels, Operand};

/// The result order a step should produce: the output's on the last step, or the order its
/// consumer reads without copying (batch labels, its own kept labels, then the contracted ones,
/// each group in the partner's memory order when the partner already exists).
#[derive(Debug, Clone)]
pub(super) struct Want {
    pub(super) order: Labels,
    /// Other orders the consumer reads in place (its groups swapped or arranged otherwise).
    pub(super) alternatives: Vec<Labels>,
    /// The output: only this exact order avoids a final copy.
    exact: bool,
    /// The consumer's own-kept and contracted labels, in the order it will read them.
    m: Labels,
    k: Labels,
    /// `k` is in the partner's memory order (the partner exists), not free.
    k_fixed: bool,
    /// The consumer reads the result as its A (its copy of an A ends with the contracted
    /// labels, of a B with its own kept ones).
    as_a: bool,
}

impl Want {
    pub(super) fn exact(output: &[u32]) -> Want {
        Want {
            order: output.into(),
            alternatives: Vec::new(),
            exact: true,
            m: Labels::new(),
            k: Labels::new(),
            k_fixed: false,
            as_a: false,
        }
    }

    /// The order the consumer `c` of the result of `a`·`b` reads in place; `None` when any
    /// order does (the consumer contracts nothing) or the consumer sums some labels first.
    pub(super) fn for_consumer(
        a: &Operand,
        b: &Operand,
        kept: &dyn Fn(u32) -> bool,
        c: &Consumer,
        partner: Option<&Operand>,
        dims: &[usize],
    ) -> Option<Want> {
        let mut result = Labels::new();
        for &l in a.labels.iter().chain(&b.labels) {
            if kept(l) && !result.contains(&l) {
                result.push(l);
            }
        }
        let in_p = |l: &u32| c.partner_labels.contains(l);
        let survives = |l: &u32| c.survivors.contains(l);
        if result.iter().any(|l| !in_p(l) && !survives(l)) {
            return None;
        }
        // Step class of each label, so that free groups keep runs the GEMM can write.
        let class = |l: u32| match (a.pos(l).is_some(), b.pos(l).is_some()) {
            (true, true) => 0u8,
            (true, false) => 1,
            _ => 2,
        };
        // Follow the partner's order only when it is not smaller than the result: otherwise
        // the consumer would rather copy the partner.
        let own_len = dense_len(&result, dims);
        let partner = partner.filter(|p| p.len() >= own_len);
        let group = |keep: &dyn Fn(&u32) -> bool| -> Labels {
            result.iter().copied().filter(|l| keep(l)).collect()
        };
        let batch = group(&|l| in_p(l) && survives(l));
        let k = group(&|l| in_p(l) && !survives(l));
        let m = group(&|l| !in_p(l));
        if k.is_empty() {
            return None;
        }
        let by_class = |g: &[u32], rev: bool| {
            let mut g = Labels::from_slice(g);
            // Labels of both operands first (they become loops), then one side, then the other.
            g.sort_by_key(|&l| match (class(l), rev) {
                (0, _) => 0,
                (c, false) => c,
                (c, true) => 3 - c,
            });
            g
        };
        let fixed = |g: &[u32], rev: bool| partner.map_or_else(|| by_class(g, rev), |p| p.order(g));
        let mut orders: Vec<Labels> = Vec::new();
        for rev in [false, true] {
            let bo = fixed(&batch, false);
            let (mo, ko) = (by_class(&m, rev), fixed(&k, !rev));
            orders.push(bo.iter().chain(&mo).chain(&ko).copied().collect());
            let (mo, ko) = (by_class(&m, !rev), fixed(&k, rev));
            orders.push(bo.iter().chain(&ko).chain(&mo).copied().collect());
        }
        let order = orders.remove(0);
        let k = fixed(&k, true);
        Some(Want {
            order,
            alternatives: orders,
            exact: false,
            m,
            k,
            k_fixed: partner.is_some(),
            as_a: c.as_a,
        })
    }

    /// Arranges `tail`, the matrix-axis labels of an operand the step copies (so their order
    /// in the result is free), for a result that will not be in the wanted order: the output's
    /// labels in the output's order; for a consumer, its batch labels first and last the group
    /// its own copy of the result puts innermost (its contracted labels if it reads the result
    /// as A, its own kept ones if as B). That copy then reads runs as long as the labels of
    /// that group the tail ends with, instead of a few elements between jumps. The sort is
    /// stable: within a group, labels keep the copied operand's memory order, which its own
    /// copy reads best.
    pub(super) fn arrange_tail(&self, tail: &mut [u32]) {
        if self.exact {
            tail.sort_by_key(|l| self.order.iter().position(|o| o == l));
            return;
        }
        let (inner, middle) = if self.as_a { (&self.k, &self.m) } else { (&self.m, &self.k) };
        tail.sort_by_key(|l| u8::from(middle.contains(l)) + 2 * u8::from(inner.contains(l)));
    }

    /// True when a result laid out in `order` (dense) needs no copy: the exact order for the
    /// output; for a consumer, its own and contracted labels each nested, one with unit stride.
    pub(super) fn accepts(&self, order: &[u32], dims: &[usize]) -> bool {
        if self.exact {
            return order == self.order.as_slice();
        }
        let r = Operand::dense(order.into(), dims);
        let k = if self.k_fixed { self.k.clone() } else { r.order(&self.k) };
        match (r.merge(&r.order(&self.m), dims), r.merge(&k, dims)) {
            (Some((mx, ms)), Some((kx, ks))) => mx <= 1 || kx <= 1 || ms == 1 || ks == 1,
            _ => false,
        }
    }
}

/// Elements of a dense operand with `labels`.
pub(super) fn dense_len(labels: &[u32], dims: &[usize]) -> usize {
    labels.iter().map(|&l| dims[l as usize]).product()
}

/// One way to lay out a GEMM step: the contracted labels' order, the dense orders operands are
/// copied into (if any), the loop labels (outermost first), each operand's matrix-axis labels
/// and the result's label order, with its estimated traffic in elements.
#[derive(Debug, Clone)]
pub(super) struct Choice {
    pub(super) cost: usize,
    pub(super) ko: Labels,
    pub(super) a_copy: Option<Labels>,
    pub(super) b_copy: Option<Labels>,
    pub(super) loops: Labels,
    /// How many of the last `loops` run over contracted labels (their products add up in C).
    pub(super) k_loops: usize,
    pub(super) a_tail: Labels,
    pub(super) b_tail: Labels,
    pub(super) result: Labels,
}

impl Choice {
    /// Copied elements, GEMM calls and operand re-reads (`reps_a` loops over A's own labels
    /// re-read B, and the other way round).
    pub(super) fn traffic(
        &self,
        a: &Operand,
        b: &Operand,
        reps_a: usize,
        reps_b: usize,
        dims: &[usize],
    ) -> usize {
        let calls: usize = self.loops.iter().map(|&l| dims[l as usize]).product();
        usize::from(self.a_copy.is_some()) * a.len()
            + usize::from(self.b_copy.is_some()) * b.len()
            + calls.saturating_mul(GEMM_CALL_COST)
            // `saturating_sub`: a loop label of size 0 makes zero repetitions (found by the
            // `einsum_spec` fuzz target; tests/einsum_fuzz_regressions.rs).
            + reps_a.saturating_sub(1).saturating_mul(b.len())
            + reps_b.saturating_sub(1).saturating_mul(a.len())
    }

    /// The layout that writes the result in `target` order: the innermost run of target labels
    /// of one operand and the run of the other's before it are the matrix axes, every label
    /// before them a loop. Operands that cannot be read so are copied into the order they need.
    /// `None` when the innermost target label is a batch label.
    ///
    /// `narrow` (for A, for B) instead keeps an operand that cannot be read with its whole run
    /// uncopied when its contracted labels are nested: its matrix axis becomes the largest
    /// part of the run it reads in place, of at least [`NARROW_MIN`] elements, and the run's
    /// other labels become loops. `None` also when narrowing changes nothing.
    #[allow(clippy::too_many_arguments, reason = "two operands, their label groups and the target")]
    pub(super) fn directed(
        a: &Operand,
        b: &Operand,
        (m, n): (&[u32], &[u32]),
        ko: Labels,
        target: &[u32],
        narrow: (bool, bool),
        dims: &[usize],
    ) -> Option<Choice> {
        // 0: batch, 1: rows (A only), 2: cols (B only).
        let class = |l: u32| -> u8 {
            if m.contains(&l) {
                1
            } else if n.contains(&l) {
                2
            } else {
                0
            }
        };
        let last = class(*target.last()?);
        if last == 0 {
            return None;
        }
        let run =
            |end: usize, c: u8| target[..end].iter().rev().take_while(|&&l| class(l) == c).count();
        let r1 = run(target.len(), last);
        let r2 = run(target.len() - r1, 3 - last);
        let split = target.len() - r1 - r2;
        let (inner, outer) = (&target[target.len() - r1..], &target[split..target.len() - r1]);
        let (rows, cols) = if last == 1 { (inner, outer) } else { (outer, inner) };
        let fits = |op: &Operand, own: &[u32]| match (op.merge(own, dims), op.merge(&ko, dims)) {
            (Some((rx, rs)), Some((kx, ks))) => rx <= 1 || kx <= 1 || rs == 1 || ks == 1,
            _ => false,
        };
        // The part of `run` that `op` reads as its matrix axis: all of it, or when narrowed the
        // largest sub-run that fits (the whole run when none does or `op` is copied anyway).
        let part = |op: &Operand, run: &[u32], narrow: bool| -> Range<usize> {
            if !narrow || fits(op, run) || op.merge(&ko, dims).is_none() {
                return 0..run.len();
            }
            let spans = (0..run.len()).flat_map(|x| (x + 1..=run.len()).map(move |y| x..y));
            spans
                .filter(|r| fits(op, &run[r.clone()]))
                .map(|r| (dense_len(&run[r.clone()], dims), r))
                .filter(|(len, _)| *len >= NARROW_MIN)
                .max_by_key(|(len, _)| *len)
                .map_or(0..run.len(), |(_, r)| r)
        };
        let (pa, pb) = (part(a, rows, narrow.0), part(b, cols, narrow.1));
        if (narrow.0 || narrow.1) && pa == (0..rows.len()) && pb == (0..cols.len()) {
            return None;
        }
        // The labels of a run left out of its part loop, after the target's leading labels.
        let mut prefix = Labels::from_slice(&target[..split]);
        for (run, p) in [(rows, &pa), (cols, &pb)] {
            prefix.extend(run[..p.start].iter().chain(&run[p.end..]).copied());
        }
        let (rows, cols) = (&rows[pa], &cols[pb]);
        let a_copy = (!fits(a, rows)).then(|| {
            prefix.iter().filter(|&&l| a.pos(l).is_some()).chain(rows).chain(&ko).copied().collect()
        });
        let b_copy = (!fits(b, cols)).then(|| {
            prefix.iter().filter(|&&l| b.pos(l).is_some()).chain(&ko).chain(cols).copied().collect()
        });
        let reps = |c: u8| {
            prefix.iter().filter(|&&l| class(l) == c).map(|&l| dims[l as usize]).product::<usize>()
        };
        let mut choice = Choice {
            cost: 0,
            ko,
            a_copy,
            b_copy,
            loops: prefix.clone(),
            k_loops: 0,
            a_tail: rows.into(),
            b_tail: cols.into(),
            result: target.into(),
        };
        choice.cost = choice.traffic(a, b, reps(1), reps(2), dims);
        Some(choice)
    }

    /// The layout that loops over the leading contracted labels of `ko` when the whole group is
    /// not nested in both operands, so that neither is copied: every iteration adds one GEMM's
    /// product into the same C (zeroed first). The shortest such prefix wins; `None` when no
    /// suffix of `ko` lets both operands be read in place. `batch`, `m` and `n` are the batch
    /// and each operand's own kept labels in memory order; the result is laid out plainly
    /// (batch and kept loops, A's tail, B's tail) and charged one copy if `want` rejects it.
    #[allow(clippy::too_many_arguments, reason = "two operands, their label groups and the want")]
    pub(super) fn k_looped(
        a: &Operand,
        b: &Operand,
        batch: &[u32],
        m: &[u32],
        n: &[u32],
        ko: &[u32],
        want: Option<&Want>,
        dims: &[usize],
    ) -> Option<Choice> {
        (1..ko.len()).find_map(|t| {
            let (kl, kt) = ko.split_at(t);
            let fa = Form::of(a, m, kt, true, dims);
            let fb = Form::of(b, n, kt, true, dims);
            if fa.copy || fb.copy {
                return None;
            }
            let mut loops: Labels =
                batch.iter().chain(&fa.loops).chain(&fb.loops).copied().collect();
            let result: Labels = loops.iter().chain(&fa.tail).chain(&fb.tail).copied().collect();
            let result_len = dense_len(&result, dims);
            let unwanted = want.is_some_and(|w| !w.accepts(&result, dims));
            // C is read back and written again once per extra iteration: with a short inner
            // contraction that traffic outweighs the copy it saves.
            let k_reps = dense_len(kl, dims);
            let reread = k_reps.saturating_sub(1).saturating_mul(result_len);
            let reps = |f: &Form| dense_len(&f.loops, dims);
            let (reps_a, reps_b) = (reps(&fa), reps(&fb));
            loops.extend_from_slice(kl);
            let mut c = Choice {
                cost: 0,
                ko: kt.into(),
                a_copy: None,
                b_copy: None,
                loops,
                k_loops: kl.len(),
                a_tail: fa.tail,
                b_tail: fb.tail,
                result,
            };
            c.cost = c
                .traffic(a, b, reps_a, reps_b, dims)
                .saturating_add(reread)
                .saturating_add(if unwanted { result_len } else { 0 });
            Some(c)
        })
    }
}

/// A GEMM call costs about as much as copying this many elements.
pub(super) const GEMM_CALL_COST: usize = 64;

/// The shortest matrix axis an operand is narrowed to ([`Choice::directed`]). Many products
/// of narrower matrices cost more than their calls and the copy they save suggest: faer's
/// blocking no longer pays, and the result is written in scattered short runs.
const NARROW_MIN: usize = 256;

/// How an operand enters a GEMM: loop labels, the matrix-axis tail of its kept labels, and
/// whether it must be copied dense first.
#[derive(Debug, Clone)]
pub(super) struct Form {
    pub(super) loops: Labels,
    pub(super) tail: Labels,
    pub(super) copy: bool,
}

impl Form {
    /// `kept` are the operand's own kept labels in its memory order, `k` the contracted labels
    /// in the chosen order; without `allow_loops` every kept label must be a matrix axis.
    pub(super) fn of(
        op: &Operand,
        kept: &[u32],
        k: &[u32],
        allow_loops: bool,
        dims: &[usize],
    ) -> Form {
        let dense = Form { loops: Labels::new(), tail: kept.into(), copy: true };
        let Some((kx, ks)) = op.merge(k, dims) else {
            return dense;
        };
        // The longest tail of `kept` that is nested in memory.
        let t =
            (0..=kept.len()).find(|&t| op.merge(&kept[t..], dims).is_some()).unwrap_or(kept.len());
        let (rx, rs) = op.merge(&kept[t..], dims).unwrap_or((1, 0));
        let unit = rx <= 1 || kx <= 1 || rs == 1 || ks == 1;
        if !unit || (t > 0 && !allow_loops) {
            return dense;
        }
        Form { loops: kept[..t].into(), tail: kept[t..].into(), copy: false }
    }
}

/// True when `op` can be seen in place as a batch of `rows × cols` matrices: each group's labels
/// are nested in memory, and one of the two matrix axes has unit stride (faer, and any GEMM,
/// is slow on matrices strided along both axes) unless the matrix is a vector.
pub(super) fn gemm_ready(
    op: &Operand,
    batch: &[u32],
    rows: &[u32],
    cols: &[u32],
    dims: &[usize],
) -> bool {
    let (Some(_), Some((r, rs)), Some((c, cs))) =
        (op.merge(batch, dims), op.merge(rows, dims), op.merge(cols, dims))
    else {
        return false;
    };
    r <= 1 || c <= 1 || rs == 1 || cs == 1
}
