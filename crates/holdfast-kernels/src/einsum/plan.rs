//! [`EinsumPlan`]: the analysis of an einsum for given operand shapes and strides, separate from
//! its execution so that a cache can keep it (SPEC B3).
//!
//! Planning decides, once:
//! - each input's diagonal view (repeated labels become one axis whose stride is the sum);
//! - the path (given, or greedy) and, for each pairwise step, which labels are batch (`b`), kept
//!   rows (`m`), kept columns (`n`) and contracted (`k`), and which are summed away first because
//!   only one operand has them;
//! - for a step with contracted labels, the label orders that let each operand be seen as a
//!   `batch × rows × cols` strided matrix without copying; when no order does, the cheapest
//!   of an operand copy (a permute into a dense buffer) and a loop over the leading contracted
//!   labels whose GEMMs add into one zeroed C (`GemmCore::accumulate`);
//! - each result's label order: on the last step the output's, on the others the order in which
//!   the step that consumes it (found by `lookahead.rs`) reads it without copying (batch labels,
//!   its own kept labels, the contracted labels). Candidates that write that order directly
//!   (looping over the labels that do not fit the two matrix axes, copying an operand into the
//!   order it then needs) compete with the plain dense result, which is charged the copy it will
//!   cause; the cheapest in elements moved wins;
//! - for a step with nothing to contract, an elementwise product over the union of labels, read
//!   in place through broadcast (zero) strides;
//! - the final reduction or permute into the requested output order, if any.
//!
//! Execution (`execute.rs`) then only moves data.

use holdfast_tensor::{DType, Dims, Element, TensorRead};
use smallvec::SmallVec;

use super::layout::{Choice, Form, Want, dense_len, gemm_ready};
use super::lookahead::consumers;
use super::parse::EinsumSpec;
use super::path::{check_path, greedy_path};
use crate::KernelError;
use crate::matmul::gemm::{BatchSpec, MatSpec};
use crate::strided::{Axes, Nest, Order, row_major};

/// A sum over some axes of an operand into a dense buffer (prepared loop nest).
#[derive(Debug, Clone)]
pub(crate) struct SumOp {
    pub(crate) nest: Nest,
    pub(crate) out_len: usize,
}

/// A permuting copy of an operand into a dense buffer: the source view's shape and strides,
/// already in destination order.
#[derive(Debug, Clone)]
pub(crate) struct CopyOp {
    pub(crate) shape: Axes,
    pub(crate) strides: Axes,
    pub(crate) len: usize,
}

/// The core of a pairwise step.
#[derive(Debug, Clone)]
pub(crate) enum Core {
    /// Nothing to contract: `out = a · b` elementwise over the union of labels.
    Map { nest: Box<Nest> },
    /// A (batched) matrix product, after optional operand copies, repeated over the `outer`
    /// loops (offsets of C, A, B in the nest's `so`, `sa`, `sb`).
    Gemm(Box<GemmCore>),
}

/// The data of [`Core::Gemm`] (boxed: it is much larger than a `Map`).
#[derive(Debug, Clone)]
pub(crate) struct GemmCore {
    pub(crate) a_copy: Option<CopyOp>,
    pub(crate) b_copy: Option<CopyOp>,
    pub(crate) outer: Option<Nest>,
    pub(crate) spec: BatchSpec,
    /// Some loops run over contracted labels (C's stride 0 there): C starts zeroed and every
    /// GEMM call adds its product.
    pub(crate) accumulate: bool,
}

/// One pairwise contraction step.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub(crate) i: usize,
    pub(crate) j: usize,
    pub(crate) a_sum: Option<SumOp>,
    pub(crate) b_sum: Option<SumOp>,
    pub(crate) core: Core,
    pub(crate) out_len: usize,
}

/// What happens to the last operand.
#[derive(Debug, Clone)]
pub(crate) enum Finish {
    /// It already is the output: hand its buffer over.
    Move,
    /// Permute it into the output order.
    Copy(CopyOp),
    /// Sum away labels (single-operand einsum) into the output order.
    Sum(SumOp),
}

/// The expected layout of one input and its diagonal view.
#[derive(Debug, Clone)]
pub(crate) struct InputPlan {
    pub(crate) shape: Dims,
    pub(crate) strides: Dims,
}

/// A prepared einsum: validated operands, path and every step's analysis.
///
/// Made by [`EinsumPlan::prepare`] (or through a [`PlanStore`](super::PlanStore) by
/// [`einsum_cached`](super::einsum_cached)); run by [`EinsumPlan::execute`] on operands with the
/// same shapes and strides (offsets and storage may differ).
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{HeapAlloc, Par, einsum::EinsumPlan};
/// use holdfast_tensor::Tensor;
///
/// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
/// let b = Tensor::<f64>::from_vec([2], vec![1.0, 1.0])?;
/// let plan = EinsumPlan::prepare("ij,j->i", &[a.read(), b.read()], None)?;
/// assert_eq!(plan.out_shape(), &[2]);
/// let y = plan.execute(&[a.read(), b.read()], &mut HeapAlloc, Par::Seq)?;
/// assert_eq!(y.as_slice(), &[3.0, 7.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct EinsumPlan {
    pub(crate) dtype: DType,
    pub(crate) inputs: Vec<InputPlan>,
    /// Diagonal (or plain) view strides of each input, by its unique labels.
    pub(crate) views: Vec<(Axes, Axes)>,
    pub(crate) steps: Vec<Step>,
    pub(crate) finish: Finish,
    pub(crate) out_shape: Dims,
    pub(crate) path: Vec<(usize, usize)>,
    pub(crate) flops: u64,
}

/// An operand during planning: labels (unique), dims and strides, and whether it is a dense
/// intermediate.
#[derive(Debug, Clone)]
pub(super) struct Operand {
    pub(super) labels: Vec<u32>,
    pub(super) shape: Axes,
    pub(super) strides: Axes,
}

impl Operand {
    pub(super) fn len(&self) -> usize {
        self.shape.iter().product()
    }

    pub(super) fn pos(&self, l: u32) -> Option<usize> {
        self.labels.iter().position(|&x| x == l)
    }

    pub(super) fn stride(&self, l: u32) -> usize {
        self.pos(l).map_or(0, |p| self.strides[p])
    }

    /// `group` ordered by decreasing stride in this operand (ties keep this operand's order).
    pub(super) fn order(&self, group: &[u32]) -> Vec<u32> {
        let mut g: Vec<(usize, usize, u32)> =
            group.iter().map(|&l| (self.stride(l), self.pos(l).unwrap_or(0), l)).collect();
        g.sort_by(|x, y| y.0.cmp(&x.0).then(x.1.cmp(&y.1)));
        g.into_iter().map(|t| t.2).collect()
    }

    /// The merged (extent, stride) of `group` in this order, if its labels are nested in memory.
    pub(super) fn merge(&self, group: &[u32], dims: &[usize]) -> Option<(usize, usize)> {
        merge_with(group, dims, |l| self.stride(l))
    }

    /// A dense operand with `labels` in that order.
    pub(super) fn dense(labels: Vec<u32>, dims: &[usize]) -> Operand {
        let shape: Axes = labels.iter().map(|&l| dims[l as usize]).collect();
        let strides = row_major(&shape);
        Operand { labels, shape, strides }
    }

    /// The copy that makes this operand dense in `order`.
    pub(super) fn copy_to(&self, order: &[u32], dims: &[usize]) -> CopyOp {
        let shape: Axes = order.iter().map(|&l| dims[l as usize]).collect();
        let strides: Axes = order.iter().map(|&l| self.stride(l)).collect();
        CopyOp { len: shape.iter().product(), shape, strides }
    }
}

fn merge_with(
    group: &[u32],
    dims: &[usize],
    stride: impl Fn(u32) -> usize,
) -> Option<(usize, usize)> {
    let mut extent = 1usize;
    let mut last: Option<usize> = None;
    for &l in group {
        let d = dims[l as usize];
        if d == 1 {
            continue;
        }
        let s = stride(l);
        if last.is_some_and(|prev| prev != s * d) {
            return None;
        }
        last = Some(s);
        extent *= d;
    }
    Some((extent, last.unwrap_or(0)))
}

impl EinsumPlan {
    /// Prepares the einsum `spec` for operands with the shapes and strides of `operands`
    /// (their data is not read), following `path` or a greedy path when `None`.
    ///
    /// # Errors
    ///
    /// Every validation error of [`einsum`](super::einsum): malformed spec, operand count,
    /// label/rank mismatch, conflicting dimensions for a label, bad path.
    pub fn prepare<T: Element>(
        spec: &str,
        operands: &[TensorRead<'_, T>],
        path: Option<&[(usize, usize)]>,
    ) -> Result<Self, KernelError> {
        let ranks: SmallVec<[usize; 8]> = operands.iter().map(TensorRead::rank).collect();
        let expanded = super::broadcast::expand_ellipsis(spec, &ranks)?;
        let parsed = super::parse(expanded.as_deref().unwrap_or(spec))?;
        let layouts: Vec<(&[usize], &[usize])> =
            operands.iter().map(|o| (o.shape(), o.strides())).collect();
        if layouts.len() != parsed.num_inputs() {
            return Err(KernelError::OperandCount {
                expected: parsed.num_inputs(),
                actual: layouts.len(),
            });
        }
        let Some(stretched) = super::broadcast::broadcast_layouts(&parsed, &layouts)? else {
            return Self::prepare_parsed(&parsed, T::DTYPE, &layouts, path);
        };
        // Planned on the stretched layouts (stride 0 over broadcast axes), checked at execution
        // against the operands as given.
        let views: Vec<(&[usize], &[usize])> =
            stretched.iter().map(|(s, st)| (&s[..], &st[..])).collect();
        let mut plan = Self::prepare_parsed(&parsed, T::DTYPE, &views, path)?;
        for (input, &(shape, strides)) in plan.inputs.iter_mut().zip(&layouts) {
            input.shape = SmallVec::from_slice(shape);
            input.strides = SmallVec::from_slice(strides);
        }
        Ok(plan)
    }

    /// [`prepare`](Self::prepare) from a parsed spec, an element type and operand
    /// `(shape, strides)` pairs.
    ///
    /// # Errors
    ///
    /// As [`prepare`](Self::prepare).
    pub fn prepare_parsed(
        spec: &EinsumSpec,
        dtype: DType,
        layouts: &[(&[usize], &[usize])],
        path: Option<&[(usize, usize)]>,
    ) -> Result<Self, KernelError> {
        let n = spec.num_inputs();
        if layouts.len() != n {
            return Err(KernelError::OperandCount { expected: n, actual: layouts.len() });
        }
        // Label dimensions, checked across operands.
        let mut dims: Vec<Option<usize>> = vec![None; spec.labels().len()];
        for (operand, (term, &(shape, strides))) in spec.inputs().iter().zip(layouts).enumerate() {
            if term.len() != shape.len() || strides.len() != shape.len() {
                return Err(KernelError::LabelRankMismatch {
                    operand,
                    term: spec.term_string(term),
                    labels: term.len(),
                    rank: shape.len(),
                });
            }
            for (&l, &d) in term.iter().zip(shape) {
                match dims[l as usize] {
                    None => dims[l as usize] = Some(d),
                    Some(first) if first != d => {
                        return Err(KernelError::LabelDimensionMismatch {
                            label: spec.label(l),
                            first,
                            second: d,
                            operand,
                        });
                    }
                    Some(_) => {}
                }
            }
        }
        let dims: Vec<usize> = dims.into_iter().map(|d| d.unwrap_or(1)).collect();
        let out_shape: Dims = spec.output().iter().map(|&l| dims[l as usize]).collect();
        if out_shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).is_none() {
            return Err(KernelError::SizeOverflow { shape: out_shape.to_vec() });
        }
        // Diagonal views: unique labels in first-appearance order, strides summed.
        let mut list: Vec<Operand> = Vec::with_capacity(n);
        let mut views = Vec::with_capacity(n);
        for (term, &(_, strides)) in spec.inputs().iter().zip(layouts) {
            let mut op = Operand { labels: Vec::new(), shape: Axes::new(), strides: Axes::new() };
            for (&l, &s) in term.iter().zip(strides) {
                match op.pos(l) {
                    Some(p) => op.strides[p] += s,
                    None => {
                        op.labels.push(l);
                        op.shape.push(dims[l as usize]);
                        op.strides.push(s);
                    }
                }
            }
            views.push((op.shape.clone(), op.strides.clone()));
            list.push(op);
        }
        let path: Vec<(usize, usize)> = match path {
            Some(p) => {
                check_path(n, p)?;
                p.to_vec()
            }
            None => {
                let terms: Vec<Vec<u32>> = list.iter().map(|o| o.labels.clone()).collect();
                greedy_path(&terms, spec.output(), &dims)
            }
        };
        // How many live operands (plus the output) hold each label.
        let mut count = vec![0usize; dims.len()];
        for op in &list {
            for &l in &op.labels {
                count[l as usize] += 1;
            }
        }
        for &l in spec.output() {
            count[l as usize] += 1;
        }
        let terms: Vec<Vec<u32>> = list.iter().map(|o| o.labels.clone()).collect();
        let next = consumers(&terms, spec.output(), &path, dims.len());
        // Operand ids parallel to `list` (inputs `0..n`, the result of step `s` is `n + s`).
        let mut ids: Vec<usize> = (0..n).collect();
        let mut steps = Vec::with_capacity(path.len());
        let mut flops = 0u64;
        for (s, &(i, j)) in path.iter().enumerate() {
            let (a, b) = take_pair(&mut list, i, j);
            let (hi, lo) = if i > j { (i, j) } else { (j, i) };
            ids.remove(hi);
            ids.remove(lo);
            for &l in a.labels.iter().chain(&b.labels) {
                count[l as usize] -= 1;
            }
            let kept = |l: u32| count[l as usize] > 0;
            let want = match next.get(s).and_then(Option::as_ref) {
                None => Some(Want::exact(spec.output())),
                Some(c) => {
                    let partner = ids.iter().position(|&id| id == c.partner).map(|p| &list[p]);
                    Want::for_consumer(&a, &b, &kept, c, partner, &dims)
                }
            };
            let (step, result, step_flops) = plan_step(i, j, a, b, &kept, &dims, want.as_ref());
            for &l in &result.labels {
                count[l as usize] += 1;
            }
            flops = flops.saturating_add(step_flops);
            steps.push(step);
            list.push(result);
            ids.push(n + s);
        }
        let single_input = n == 1;
        let finish = match list.pop() {
            Some(op) => plan_finish(&op, spec.output(), &dims, single_input),
            // n == 0 is impossible: the parser always yields at least one term.
            None => Finish::Move,
        };
        let inputs = layouts
            .iter()
            .map(|&(shape, strides)| InputPlan {
                shape: SmallVec::from_slice(shape),
                strides: SmallVec::from_slice(strides),
            })
            .collect();
        Ok(EinsumPlan { dtype, inputs, views, steps, finish, out_shape, path, flops })
    }

    /// The result's shape.
    pub fn out_shape(&self) -> &[usize] {
        &self.out_shape
    }

    /// The contraction path the plan follows (opt_einsum format).
    pub fn path(&self) -> &[(usize, usize)] {
        &self.path
    }

    /// Estimated floating-point operations of one execution.
    pub fn flops(&self) -> u64 {
        self.flops
    }

    /// Number of pairwise steps.
    pub fn num_steps(&self) -> usize {
        self.steps.len()
    }

    /// Number of operand copies (permutes before a GEMM) one execution makes.
    pub fn num_operand_copies(&self) -> usize {
        self.steps
            .iter()
            .map(|s| match &s.core {
                Core::Gemm(g) => usize::from(g.a_copy.is_some()) + usize::from(g.b_copy.is_some()),
                Core::Map { .. } => 0,
            })
            .sum()
    }

    /// The element type the plan was prepared for.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// Approximate heap and inline size of the plan, in bytes (for byte-bounded caches).
    pub fn approx_bytes(&self) -> usize {
        let axes = std::mem::size_of::<Axes>();
        std::mem::size_of::<Self>()
            + self.inputs.len() * std::mem::size_of::<InputPlan>()
            + self.views.len() * 2 * axes
            + self.steps.len() * (std::mem::size_of::<Step>() + 2 * std::mem::size_of::<SumOp>())
            + self.path.len() * std::mem::size_of::<(usize, usize)>()
    }
}

/// Removes positions `i` and `j` (distinct, checked) from `list`, returning them in that order.
fn take_pair(list: &mut Vec<Operand>, i: usize, j: usize) -> (Operand, Operand) {
    let (hi, lo) = if i > j { (i, j) } else { (j, i) };
    let h = list.remove(hi);
    let l = list.remove(lo);
    if i > j { (h, l) } else { (l, h) }
}

/// Sums away the labels of `op` that `keep` rejects, if any: the dense result keeps the other
/// labels in `op`'s order.
fn presum(op: Operand, keep: impl Fn(u32) -> bool, dims: &[usize]) -> (Operand, Option<SumOp>) {
    if op.labels.iter().all(|&l| keep(l)) {
        return (op, None);
    }
    let labels: Vec<u32> = op.labels.iter().copied().filter(|&l| keep(l)).collect();
    let out = Operand::dense(labels, dims);
    let so: Axes = op.labels.iter().map(|&l| out.stride(l)).collect();
    let zeros: Axes = SmallVec::from_elem(0, op.labels.len());
    let nest = Nest::new(&op.shape, &so, &op.strides, &zeros, Order::A);
    let sum = SumOp { nest, out_len: out.len() };
    (out, Some(sum))
}

/// Plans one pairwise step, laying its result out as `want` asks when that pays.
#[allow(
    clippy::needless_pass_by_value,
    reason = "the operands leave the list here; copies replace them"
)]
fn plan_step(
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
    let batch: Vec<u32> =
        a.labels.iter().copied().filter(|&l| b.pos(l).is_some() && kept(l)).collect();
    let k: Vec<u32> =
        a.labels.iter().copied().filter(|&l| b.pos(l).is_some() && !kept(l)).collect();
    let m: Vec<u32> = a.labels.iter().copied().filter(|&l| b.pos(l).is_none()).collect();
    let n: Vec<u32> = b.labels.iter().copied().filter(|&l| a.pos(l).is_none()).collect();
    if k.is_empty() {
        // Elementwise product over the union of labels.
        let labels: Vec<u32> = match want {
            Some(w) => w.order.clone(),
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
        let step =
            Step { i, j, a_sum, b_sum, core: Core::Map { nest: Box::new(nest) }, out_len: len };
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
    // costs one more pass over it, and the candidates that write that order directly compete.
    let bo = a.order(&batch);
    let mut best: Option<Choice> = None;
    let mut offer = |c: Choice| {
        if best.as_ref().is_none_or(|b| c.cost < b.cost) {
            best = Some(c);
        }
    };
    let target = want.map(|w| Operand::dense(w.order.clone(), dims));
    for (ko, allow_loops) in
        [(a.order(&k), true), (b.order(&k), true), (a.order(&k), false), (b.order(&k), false)]
    {
        let fa = Form::of(&a, &a.order(&m), &ko, allow_loops, dims);
        let fb = Form::of(&b, &b.order(&n), &ko, allow_loops, dims);
        if allow_loops && (fa.copy || fb.copy) {
            let (mo, no) = (a.order(&m), b.order(&n));
            if let Some(c) = Choice::k_looped(&a, &b, &bo, &mo, &no, &ko, want, dims) {
                offer(c);
            }
        }
        let loops: Vec<u32> = bo.iter().chain(&fa.loops).chain(&fb.loops).copied().collect();
        let reps = |f: &Form| f.loops.iter().map(|&l| dims[l as usize]).product::<usize>();
        let (reps_a, reps_b) = (reps(&fa), reps(&fb));
        // The plain dense result, unless the wanted order is needed and can be written.
        let plain: Vec<u32> = loops.iter().chain(&fa.tail).chain(&fb.tail).copied().collect();
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
        for ko in [a.order(&k), b.order(&k)] {
            for order in std::iter::once(&w.order).chain(&w.alternatives) {
                if let Some(c) = Choice::directed(&a, &b, &m, &n, ko.clone(), order, dims) {
                    offer(c);
                }
            }
        }
    }
    let Some(ch) = best else { unreachable_step() };
    let (a, a_copy) = match &ch.a_copy {
        Some(order) => (Operand::dense(order.clone(), dims), Some(a.copy_to(order, dims))),
        None => (a, None),
    };
    let (b, b_copy) = match &ch.b_copy {
        Some(order) => (Operand::dense(order.clone(), dims), Some(b.copy_to(order, dims))),
        None => (b, None),
    };
    let Choice { ko, loops, k_loops, a_tail, b_tail, result, .. } = ch;
    let result = Operand::dense(result, dims);
    let g = |op: &Operand, group: &[u32]| op.merge(group, dims).unwrap_or((1, 0));
    let (mm, a_sm) = g(&a, &a_tail);
    let (kk, a_sk) = g(&a, &ko);
    let (_, b_sk) = g(&b, &ko);
    let (nn, b_sn) = g(&b, &b_tail);
    let (_, c_sm) = g(&result, &a_tail);
    let (_, c_sn) = g(&result, &b_tail);
    let loop_shape: Axes = loops.iter().map(|&l| dims[l as usize]).collect();
    let lc: Axes = loops.iter().map(|&l| result.stride(l)).collect();
    let la: Axes = loops.iter().map(|&l| a.stride(l)).collect();
    let lb: Axes = loops.iter().map(|&l| b.stride(l)).collect();
    let nest = Nest::new(&loop_shape, &lc, &la, &lb, Order::Out);
    // The innermost loop becomes the GEMM batch (so a plain batch can fan out); the others are
    // iterated around it.
    let (outer, (nb, sc, sa, sb)) = match nest.shape.len() {
        0 => (None, (1, 0, 0, 0)),
        r => {
            let inner = (nest.shape[r - 1], nest.so[r - 1], nest.sa[r - 1], nest.sb[r - 1]);
            let outer = (r > 1).then(|| Nest {
                shape: nest.shape[..r - 1].into(),
                so: nest.so[..r - 1].into(),
                sa: nest.sa[..r - 1].into(),
                sb: nest.sb[..r - 1].into(),
            });
            (outer, inner)
        }
    };
    let spec = BatchSpec {
        batch: nb,
        a: MatSpec { rows: mm, cols: kk, rs: a_sm, cs: a_sk },
        b: MatSpec { rows: kk, cols: nn, rs: b_sk, cs: b_sn },
        c: MatSpec { rows: mm, cols: nn, rs: c_sm, cs: c_sn },
        sa,
        sb,
        sc,
    };
    let outer_count = outer.as_ref().map_or(1, Nest::numel) as u64;
    let flops = 2 * spec.macs() * outer_count;
    let len = result.len();
    let accumulate = k_loops > 0;
    let core = Core::Gemm(Box::new(GemmCore { a_copy, b_copy, outer, spec, accumulate }));
    let step = Step { i, j, a_sum, b_sum, core, out_len: len };
    (step, result, flops)
}

/// Never called: the candidate list above is never empty.
fn unreachable_step() -> ! {
    unreachable!("two candidate orders are always evaluated")
}

fn plan_finish(op: &Operand, output: &[u32], dims: &[usize], borrowed: bool) -> Finish {
    let out = Operand::dense(output.to_vec(), dims);
    if op.labels.iter().any(|l| !output.contains(l)) {
        let so: Axes = op.labels.iter().map(|&l| out.stride(l)).collect();
        let zeros: Axes = SmallVec::from_elem(0, op.labels.len());
        let nest = Nest::new(&op.shape, &so, &op.strides, &zeros, Order::A);
        return Finish::Sum(SumOp { nest, out_len: out.len() });
    }
    if !borrowed && op.labels == output {
        return Finish::Move;
    }
    Finish::Copy(op.copy_to(output, dims))
}
