//! One pairwise step of the einsum planner: which labels are batch, rows, columns and
//! contracted, how each operand is seen as a strided matrix (in place, copied, or looped over),
//! and the result's layout (see `planner.rs` for the whole plan).

use smallvec::SmallVec;

use super::blocks::{Blocks, Side, split_innermost};
use super::layout::{Choice, Form, Want, dense_len, gemm_ready};
use super::plan::{CopyOp, Core, GemmCore, MapCopy, Step};
use super::planner::{Labels, Operand, merge_with, presum};
use crate::matmul::batch::PreparedGemm;
use crate::matmul::nano_sized;
use crate::matmul::operand::{BatchSpec, MatSpec};
use crate::strided::{Axes, Nest, Order, copy_nest_of};

/// Plans one pairwise step, laying its result out as `want` asks when that pays.
#[allow(
    clippy::needless_pass_by_value,
    reason = "the operands leave the list here; copies replace them"
)]
pub(super) fn plan_step(
    i: usize,
    j: usize,
    a: Operand,
    b: Operand,
    kept: &dyn Fn(u32) -> bool,
    dims: &[usize],
    want: Option<&Want>,
) -> (Step, Operand, u64) {
    let in_b = |l: u32| b.labels.contains(&l);
    let in_a = |l: u32| a.labels.contains(&l);
    let (a, a_sum) = presum(a.clone(), |l| kept(l) || in_b(l), dims);
    let (b, b_sum) = presum(b.clone(), |l| kept(l) || in_a(l), dims);
    let batch: Labels =
        a.labels.iter().copied().filter(|&l| b.pos(l).is_some() && kept(l)).collect();
    let k: Labels = a.labels.iter().copied().filter(|&l| b.pos(l).is_some() && !kept(l)).collect();
    let m: Labels = a.labels.iter().copied().filter(|&l| b.pos(l).is_none()).collect();
    let n: Labels = b.labels.iter().copied().filter(|&l| a.pos(l).is_none()).collect();
    if k.is_empty() {
        // Elementwise product over the union of labels. With no order wanted: when B is the
        // larger operand and too large to stay in cache, B's memory order after A's own
        // labels, so that B is read in order and only A may need a copy; otherwise A's order,
        // then B's own labels.
        let labels: Labels = match want {
            Some(w) => w.order.clone(),
            None if b.len() > a.len() && b.len() >= MAP_COPY_MIN => {
                let mut l = a.order(&m);
                l.extend(b.order(&b.labels));
                l
            }
            None => {
                let mut l = a.order(&a.labels);
                l.extend(b.order(&n));
                l
            }
        };
        let out = Operand::dense(labels, dims);
        let sa: Axes = out.labels.iter().map(|&l| a.stride(l)).collect();
        let sb: Axes = out.labels.iter().map(|&l| b.stride(l)).collect();
        let nest = Nest::new(&out.shape, &out.strides, &sa, &sb, Order::Out);
        let len = out.len();
        let copy = map_copy(&nest, &out, (&sa, &sb)).map(Box::new);
        let step = Step {
            i,
            j,
            a_sum,
            b_sum,
            core: Core::Map { nest: Box::new(nest), copy },
            out_len: len,
        };
        return (step, out, len as u64);
    }
    // For each candidate order of the contracted labels (A's or B's memory order), see each
    // operand as loops × (rows × cols) matrices: the contracted group must be nested in memory;
    // of the kept rows (cols) labels, the longest nested tail forms the matrix axis and the rest
    // become loops, like the batch labels. An operand that cannot be seen so, or whose matrix
    // has no unit stride, is copied dense. Pick the candidate with the least traffic: copied
    // elements, each GEMM call as `GEMM_CALL_COST` elements, and the other operand re-read once
    // per loop over one operand's own labels. Copying instead of looping is also a candidate.
    // With a wanted result order (the output, on the last step), a result in another order
    // costs one more pass over it, and the candidates that write that order directly compete,
    // among them those that read an operand in place by narrowing its matrix axis to the part
    // it holds in the wanted order and looping over the rest, instead of copying it.
    // A candidate whose small products nano-gemm could not read in place is charged the
    // scratch copies nano-gemm would make, and competes with copying one operand so that it
    // can (`with_scratch`).
    let bo = a.order(&batch);
    let mut best: Option<Choice> = None;
    let mut offer = |c: Choice| {
        with_scratch(c, &a, &b, dims, &mut |c| {
            if best.as_ref().is_none_or(|b| c.cost < b.cost) {
                best = Some(c);
            }
        });
    };
    let target = want.map(|w| Operand::dense(w.order.clone(), dims));
    // The candidate orders of the contracted labels, each once: a candidate evaluated twice
    // costs the same and never replaces the first.
    let kos: SmallVec<[Labels; 2]> = distinct([a.order(&k), b.order(&k)]);
    for (allow_loops, ko) in [true, false].into_iter().flat_map(|l| kos.iter().map(move |k| (l, k)))
    {
        let ko = ko.clone();
        let mut fa = Form::of(&a, &a.order(&m), &ko, allow_loops, dims);
        let mut fb = Form::of(&b, &b.order(&n), &ko, allow_loops, dims);
        if allow_loops && (fa.copy || fb.copy) {
            let (mo, no) = (a.order(&m), b.order(&n));
            if let Some(c) = Choice::k_looped(&a, &b, &bo, &mo, &no, &ko, want, dims) {
                offer(c);
            }
        }
        let loops: Labels = bo.iter().chain(&fa.loops).chain(&fb.loops).copied().collect();
        let reps = |f: &Form| f.loops.iter().map(|&l| dims[l as usize]).product::<usize>();
        arrange_inner(want, &loops, (&mut fa, &a), (&mut fb, &b), dims);
        let (reps_a, reps_b) = (reps(&fa), reps(&fb));
        // The plain dense result, unless the wanted order is needed and can be written.
        let plain: Labels = loops.iter().chain(&fa.tail).chain(&fb.tail).copied().collect();
        let unwanted = want.filter(|w| !w.accepts(&plain, dims));
        let direct = target
            .as_ref()
            .filter(|o| unwanted.is_some() && gemm_ready(o, &[], &fa.tail, &fb.tail, dims));
        let (result, extra) = match (direct, unwanted) {
            (Some(o), _) => (o.labels.clone(), 0),
            (None, Some(_)) => {
                let len = dense_len(&plain, dims);
                (plain, len)
            }
            (None, None) => (plain, 0),
        };
        let a_copy = fa.copy.then(|| bo.iter().chain(&fa.tail).chain(&ko).copied().collect());
        let b_copy = fb.copy.then(|| bo.iter().chain(&ko).chain(&fb.tail).copied().collect());
        let mut c = Choice {
            cost: extra,
            ko,
            a_copy,
            b_copy,
            loops,
            k_loops: 0,
            a_tail: fa.tail,
            b_tail: fb.tail,
            result,
        };
        c.cost = c.cost.saturating_add(c.traffic(&a, &b, reps_a, reps_b, dims));
        offer(c);
    }
    if let Some(w) = want {
        let mn = (&m[..], &n[..]);
        let orders: SmallVec<[&Labels; 4]> =
            distinct(std::iter::once(&w.order).chain(&w.alternatives));
        for ko in &kos {
            for &order in &orders {
                for narrow in [(false, false), (true, false), (false, true), (true, true)] {
                    if let Some(c) = Choice::directed(&a, &b, mn, ko.clone(), order, narrow, dims) {
                        offer(c);
                    }
                }
            }
        }
    }
    let Some(ch) = best else { unreachable_step() };
    let (a_src, b_src) = (a.clone(), b.clone());
    let (a_order, b_order) = (ch.a_copy.clone(), ch.b_copy.clone());
    let accumulate = ch.k_loops > 0;
    let Laid { a, b, a_copy, b_copy, loops, result, spec, outer } = Laid::of(ch, a, b, dims);
    let outer_count = outer.as_ref().map_or(1, Nest::numel) as u64;
    let flops = 2 * spec.macs() * outer_count;
    let len = result.len();
    let gemm = PreparedGemm::new(&spec);
    // A large copy that starts with loop labels is made block by block, with the product.
    let blocks = {
        let sa = Side { source: &a_src, staged: &a, copy: a_order.as_deref() };
        let sb = Side { source: &b_src, staged: &b, copy: b_order.as_deref() };
        Blocks::plan(&loops, (&sa, &sb), &result, (spec.a, spec.b, spec.c), dims)
    };
    // A side copied block by block is not copied before the product.
    let (a_copy, b_copy) = match &blocks {
        Some(bl) => {
            (a_copy.filter(|_| !bl.blocks_side(true)), b_copy.filter(|_| !bl.blocks_side(false)))
        }
        None => (a_copy, b_copy),
    };
    let core = Core::Gemm(Box::new(GemmCore { a_copy, b_copy, outer, gemm, blocks, accumulate }));
    let step = Step { i, j, a_sum, b_sum, core, out_len: len };
    (step, result, flops)
}

/// Arranges the result's innermost labels for the consumer's copy, when the consumer will copy
/// the result (its layout is not wanted) and those labels come from an operand this step copies
/// (so their order is free) that is at most half the result's size: the consumer's larger copy
/// then reads long runs ([`Want::arrange_tail`]) for a small cost in this step's smaller one.
/// `items` without repeats, in their first order.
fn distinct<A: smallvec::Array>(items: impl IntoIterator<Item = A::Item>) -> SmallVec<A>
where
    A::Item: PartialEq,
{
    let mut kept = SmallVec::new();
    for item in items {
        if !kept.contains(&item) {
            kept.push(item);
        }
    }
    kept
}

fn arrange_inner(
    want: Option<&Want>,
    loops: &[u32],
    (fa, a): (&mut Form, &Operand),
    (fb, b): (&mut Form, &Operand),
    dims: &[usize],
) {
    let plain: Labels = loops.iter().chain(&fa.tail).chain(&fb.tail).copied().collect();
    let Some(w) = want.filter(|w| !w.accepts(&plain, dims)) else { return };
    let (inner, op) = if fb.tail.is_empty() { (fa, a) } else { (fb, b) };
    if inner.copy && op.len().saturating_mul(2) <= dense_len(&plain, dims) {
        w.arrange_tail(&mut inner.tail);
    }
}

/// A layout made concrete: the operands as the GEMM reads them (dense copies where the choice
/// copies), the copies, the loops, the result, and the batched product with the loops around
/// it.
struct Laid {
    a: Operand,
    b: Operand,
    a_copy: Option<CopyOp>,
    b_copy: Option<CopyOp>,
    loops: Labels,
    result: Operand,
    spec: BatchSpec,
    outer: Option<Nest>,
}

impl Laid {
    fn of(ch: Choice, a: Operand, b: Operand, dims: &[usize]) -> Laid {
        let (spec, outer) = product_of(&ch, (&a, &b), dims);
        let (a, a_copy) = match &ch.a_copy {
            Some(order) => (Operand::dense(order.clone(), dims), Some(a.copy_to(order, dims))),
            None => (a, None),
        };
        let (b, b_copy) = match &ch.b_copy {
            Some(order) => (Operand::dense(order.clone(), dims), Some(b.copy_to(order, dims))),
            None => (b, None),
        };
        let result = Operand::dense(ch.result, dims);
        Laid { a, b, a_copy, b_copy, loops: ch.loops, result, spec, outer }
    }
}

/// The batched product a layout runs on operands `a` and `b` (as they are before its copies),
/// and the loops iterated around it, found without making the copies or the result.
fn product_of(
    ch: &Choice,
    (a, b): (&Operand, &Operand),
    dims: &[usize],
) -> (BatchSpec, Option<Nest>) {
    // A copied operand is dense in its copy's order, as is the result in its own.
    let dense = |order: &[u32], l: u32| {
        order.iter().position(|&x| x == l).map_or(0, |p| dense_len(&order[p + 1..], dims))
    };
    let sa = |l: u32| ch.a_copy.as_deref().map_or_else(|| a.stride(l), |o| dense(o, l));
    let sb = |l: u32| ch.b_copy.as_deref().map_or_else(|| b.stride(l), |o| dense(o, l));
    let sc = |l: u32| dense(&ch.result, l);
    let g = |group: &[u32], stride: &dyn Fn(u32) -> usize| {
        merge_with(group, dims, stride).unwrap_or((1, 0))
    };
    let (mm, a_sm) = g(&ch.a_tail, &sa);
    let (kk, a_sk) = g(&ch.ko, &sa);
    let (_, b_sk) = g(&ch.ko, &sb);
    let (nn, b_sn) = g(&ch.b_tail, &sb);
    let (_, c_sm) = g(&ch.a_tail, &sc);
    let (_, c_sn) = g(&ch.b_tail, &sc);
    let strides =
        |stride: &dyn Fn(u32) -> usize| -> Axes { ch.loops.iter().map(|&l| stride(l)).collect() };
    let loop_shape: Axes = ch.loops.iter().map(|&l| dims[l as usize]).collect();
    // The larger operand's part that one product reads is read again, from cache, by the
    // products that loop over labels it lacks when those loops run innermost.
    let order = if a.len() >= b.len() { Order::OutReusingA } else { Order::OutReusingB };
    let nest = Nest::new(&loop_shape, &strides(&sc), &strides(&sa), &strides(&sb), order);
    // The innermost loop becomes the GEMM batch (so a plain batch can fan out); the others
    // are iterated around it.
    let (outer, (nb, sc, sa, sb)) = split_innermost(&nest);
    let spec = BatchSpec {
        batch: nb,
        a: MatSpec { rows: mm, cols: kk, rs: a_sm, cs: a_sk },
        b: MatSpec { rows: kk, cols: nn, rs: b_sk, cs: b_sn },
        c: MatSpec { rows: mm, cols: nn, rs: c_sm, cs: c_sn },
        sa,
        sb,
        sc,
    };
    (spec, outer)
}

/// nano-gemm's scratch copies count this many times their elements: it moves them one at a
/// time through strided loops on every product, where an operand copy is one pass of the
/// blocked permute over the whole operand.
const SCRATCH_WEIGHT: usize = 2;

/// Elements nano-gemm would move through scratch, weighted, over all the products of `ch`.
fn scratch_traffic(ch: &Choice, a: &Operand, b: &Operand, dims: &[usize]) -> usize {
    // The matrices' extents do not depend on the layout: most products are too large for
    // nano-gemm whatever it is.
    let extent = |group: &[u32]| dense_len(group, dims);
    if !nano_sized(extent(&ch.a_tail), extent(&ch.b_tail), extent(&ch.ko)) {
        return 0;
    }
    let (spec, outer) = product_of(ch, (a, b), dims);
    let per_item = PreparedGemm::nano_scratch_of(&spec);
    if per_item == 0 {
        return 0;
    }
    let calls = outer.as_ref().map_or(1, Nest::numel).saturating_mul(spec.batch);
    calls.saturating_mul(per_item).saturating_mul(SCRATCH_WEIGHT)
}

/// Hands `take` `ch` charged the scratch traffic of its products, and, when there is any, the
/// variants that copy one operand with its matrix-axis tail innermost (nano-gemm then reads it
/// in place when the result's matching axis has unit stride), each charged its copy.
fn with_scratch(
    mut ch: Choice,
    a: &Operand,
    b: &Operand,
    dims: &[usize],
    take: &mut dyn FnMut(Choice),
) {
    let extra = scratch_traffic(&ch, a, b, dims);
    if extra == 0 {
        take(ch);
        return;
    }
    let mut variants: SmallVec<[Choice; 2]> = SmallVec::new();
    for copy_a in [true, false] {
        let (op, tail, copied) =
            if copy_a { (a, &ch.a_tail, &ch.a_copy) } else { (b, &ch.b_tail, &ch.b_copy) };
        let order: Labels = (ch.loops.iter().filter(|&&l| op.pos(l).is_some()))
            .chain(&ch.ko)
            .chain(tail)
            .copied()
            .collect();
        if order.len() != op.labels.len() || copied.as_ref() == Some(&order) {
            continue;
        }
        let mut v = ch.clone();
        v.cost = v.cost.saturating_add(if copied.is_some() { 0 } else { op.len() });
        if copy_a {
            v.a_copy = Some(order);
        } else {
            v.b_copy = Some(order);
        }
        let e = scratch_traffic(&v, a, b, dims);
        if e < extra {
            v.cost = v.cost.saturating_add(e);
            variants.push(v);
        }
    }
    ch.cost = ch.cost.saturating_add(extra);
    take(ch);
    variants.into_iter().for_each(take);
}

/// Never called: the candidate list above is never empty.
fn unreachable_step() -> ! {
    unreachable!("two candidate orders are always evaluated")
}

/// The fewest elements of an operand worth copying into the order a pass reads it in, when the
/// pass would read it scattered: a smaller operand (under 256 KiB of `f64`) stays in cache
/// through the scattered pass, which then costs less than a copy first. Elementwise products
/// ([`MAP_COPY_MIN`]) and fused chains ([`Fused`](super::fused::Fused), their largest leaf)
/// both follow it.
pub(super) const SCATTERED_COPY_MIN: usize = 1 << 15;

/// The least output elements for which an elementwise product copies its scattered operand
/// first ([`MapCopy`]): [`SCATTERED_COPY_MIN`]. (The crate's unit tests lower it, so their
/// small products take the path.)
const MAP_COPY_MIN: usize = if cfg!(test) { 1 } else { SCATTERED_COPY_MIN };

/// A run of an operand along the output shorter than this many elements (a cache line of
/// `f64`) makes it scattered: each run then costs a line of its own.
const MAP_RUN: usize = 8;

/// The [`MapCopy`] of an elementwise product over `nest` (output `out`, dense; operand strides
/// `sa`, `sb` in the output's label order), when exactly one operand is scattered: not
/// broadcast along the nest's innermost axis, and contiguous there for less than a cache line
/// (strided, or a short run whose next element in the output's order is elsewhere).
fn map_copy(nest: &Nest, out: &Operand, (sa, sb): (&[usize], &[usize])) -> Option<MapCopy> {
    let last = nest.shape.len().checked_sub(1)?;
    if out.len() < MAP_COPY_MIN {
        return None;
    }
    let scattered = |s: &Axes| {
        if s[last] == 0 {
            return false;
        }
        // The operand's contiguous run along the output's innermost axes.
        let mut run = 1;
        for k in (0..=last).rev() {
            if s[k] != run {
                break;
            }
            run *= nest.shape[k];
        }
        run < MAP_RUN
    };
    let b = match (scattered(&nest.sa), scattered(&nest.sb)) {
        (false, true) => true,
        (true, false) => false,
        _ => return None,
    };
    let (copied, other) = if b { (sb, sa) } else { (sa, sb) };
    let zeros: Axes = Axes::from_elem(0, out.shape.len());
    Some(MapCopy {
        b,
        copy: copy_nest_of(&out.shape, copied),
        product: Nest::new(&out.shape, &out.strides, other, &zeros, Order::Out),
    })
}
