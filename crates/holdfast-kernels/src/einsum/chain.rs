//! Planning chains of elementwise products (`fused.rs` runs them): which steps defer their
//! result, and the step that writes it.
//!
//! A step defers when every label of both its operands survives it (nothing to contract, nothing
//! to sum), the step that consumes its result is of the same kind (the look-ahead tells: every
//! label of the result and of its partner survives there too), its result is too large to stay
//! in cache, and deferring holds no more memory than writing would: the leaves it keeps alive
//! hold at most twice its result's elements, about what the pairwise step has live (its
//! operands and its result). A step with a deferred operand that does not defer writes the
//! product of all the leaves once, in the order its consumer wants, unless that order would
//! read its largest leaf scattered (a copy of it) and the consumer is a later step, which plans
//! its own copy or loops for its operand at no more cost; then, as when no order is wanted, in
//! its largest leaf's order, which it reads in order.

use super::fused::Fused;
use super::layout::{Want, dense_len};
use super::lookahead::Consumer;
use super::plan::Core;
use super::planner::Operand;

/// The fewest elements a step's result has for the step to defer: a smaller result stays in
/// cache, where writing and reading it back costs little. (Lowered in unit tests so that small
/// chains take the path.)
const DEFER_MIN: usize = if cfg!(test) { 64 } else { 1 << 15 };

/// The most leaves a deferred result keeps: the step that writes the chain reads each of them
/// once per output element.
const MAX_LEAVES: usize = 32;

/// A step planned as part of a chain.
pub(super) struct Chained {
    pub(super) core: Core,
    /// The result as later steps see it (for a deferred one, a nominal dense layout: only its
    /// labels matter, as it is never written).
    pub(super) result: Operand,
    /// Elements the step writes (0 when it defers).
    pub(super) out_len: usize,
    /// The leaves of a deferred result, in multiplication order.
    pub(super) leaves: Option<Vec<Operand>>,
    pub(super) flops: u64,
}

/// Plans the step on `a` and `b` (with `da`, `db` their leaves when they are deferred) as part
/// of a chain, or `None` for an ordinary step (`plan_step`). `consumer` is the step that reads
/// the result (`None` on the last step), `want` the order it asks for.
#[allow(clippy::too_many_arguments, reason = "a step's operands, their leaves and its context")]
pub(super) fn plan_chain(
    a: &Operand,
    b: &Operand,
    da: Option<Vec<Operand>>,
    db: Option<Vec<Operand>>,
    kept: &dyn Fn(u32) -> bool,
    consumer: Option<&Consumer>,
    want: Option<&Want>,
    dims: &[usize],
) -> Option<Chained> {
    let deferred_in = da.is_some() || db.is_some();
    if !a.labels.iter().chain(&b.labels).all(|&l| kept(l)) {
        // A deferred result is only made for a consumer where every label survives (the
        // look-ahead sees the planner's label sets, `lookahead.rs`).
        debug_assert!(!deferred_in, "a deferred operand in a step that sums or contracts");
        return None;
    }
    let mut labels = a.labels.clone();
    labels.extend(b.labels.iter().copied().filter(|l| !a.labels.contains(l)));
    let mut leaves = da.unwrap_or_else(|| vec![a.clone()]);
    leaves.extend(db.unwrap_or_else(|| vec![b.clone()]));
    let out_len = dense_len(&labels, dims);
    let held: usize = leaves.iter().map(Operand::len).sum();
    let defer = consumer
        .is_some_and(|c| labels.iter().chain(&c.partner_labels).all(|l| c.survivors.contains(l)))
        && out_len >= DEFER_MIN
        && leaves.len() <= MAX_LEAVES
        && held <= out_len.saturating_mul(2);
    if defer {
        let result = Operand::dense(labels, dims);
        return Some(Chained {
            core: Core::Defer,
            result,
            out_len: 0,
            leaves: Some(leaves),
            flops: 0,
        });
    }
    if !deferred_in {
        return None;
    }
    // The largest leaf's memory order, then the other labels: the pass reads it in order.
    let own = || {
        let largest = leaves.iter().max_by_key(|l| l.len()).unwrap_or(a);
        let mut order = largest.order(&largest.labels);
        let rest: Vec<u32> = labels.iter().copied().filter(|l| !order.contains(l)).collect();
        order.extend(rest);
        Operand::dense(order, dims)
    };
    let wanted = want.map(|w| {
        let out = Operand::dense(w.order.clone(), dims);
        let fused = Fused::plan(&out, &leaves, dims);
        (out, fused)
    });
    // A wanted order that would cost a copy of a large leaf gives way to the leaf's order when
    // a later step consumes the result: it plans its own copy, or loops, as cheap or cheaper.
    let (out, fused) = match wanted {
        Some((out, fused)) if fused.copy.is_none() || consumer.is_none() => (out, fused),
        _ => {
            let out = own();
            let fused = Fused::plan(&out, &leaves, dims);
            (out, fused)
        }
    };
    let flops = (out_len as u64).saturating_mul(leaves.len() as u64 - 1);
    Some(Chained { core: Core::Fused(Box::new(fused)), result: out, out_len, leaves: None, flops })
}
