//! The einsum planner: [`EinsumPlan::prepare`], from a spec and operand layouts to the plan's
//! data (`plan.rs`).
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
//!   in place through broadcast (zero) strides; a chain of such steps over large results is not
//!   written step by step but deferred and written once, by its last step (`chain.rs`);
//! - the final reduction or permute into the requested output order, if any.
//!
//! Execution (`execute.rs`) then only moves data.

use holdfast_tensor::{DType, Dims, Element, Layout, SizedLayout, TensorRead};
use smallvec::SmallVec;

use super::blocks::Blocks;
use super::chain::plan_chain;
use super::fused::Fused;
use super::layout::Want;
use super::lookahead::consumers;
use super::parse::EinsumSpec;
use super::path::{check_path, greedy_path, take_pair};
use super::plan::{CopyOp, Core, EinsumPlan, Finish, GemmCore, InputPlan, MapCopy, Step, SumOp};
use super::step::plan_step;
use crate::KernelError;
use crate::strided::{Axes, Nest, Order, row_major};

/// A list of label ids, as the planner builds and compares by the dozen for every step: inline
/// up to eight labels, so that most never touch the heap.
pub(super) type Labels = SmallVec<[u32; 8]>;

/// An operand during planning: labels (unique), dims and strides, and whether it is a dense
/// intermediate.
#[derive(Debug, Clone)]
pub(super) struct Operand {
    pub(super) labels: Labels,
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
    pub(super) fn order(&self, group: &[u32]) -> Labels {
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
    pub(super) fn dense(labels: Labels, dims: &[usize]) -> Operand {
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

pub(super) fn merge_with(
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
        let mut list: SmallVec<[Operand; 8]> = SmallVec::with_capacity(n);
        let mut views = Vec::with_capacity(n);
        for (term, &(_, strides)) in spec.inputs().iter().zip(layouts) {
            let mut op =
                Operand { labels: Labels::new(), shape: Axes::new(), strides: Axes::new() };
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
                let terms: Vec<Vec<u32>> = list.iter().map(|o| o.labels.to_vec()).collect();
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
        let terms: Vec<Vec<u32>> = list.iter().map(|o| o.labels.to_vec()).collect();
        let next = consumers(&terms, spec.output(), &path, dims.len());
        // Operand ids parallel to `list` (inputs `0..n`, the result of step `s` is `n + s`).
        let mut ids: SmallVec<[usize; 8]> = (0..n).collect();
        // Parallel to `list`: the leaves of each deferred result (`chain.rs`).
        let mut deferred: SmallVec<[Option<Vec<Operand>>; 8]> = (0..n).map(|_| None).collect();
        let mut steps = Vec::with_capacity(path.len());
        let mut flops = 0u64;
        for (s, &(i, j)) in path.iter().enumerate() {
            let (a, b) = take_pair(&mut list, i, j);
            let _ = take_pair(&mut ids, i, j);
            let (da, db) = take_pair(&mut deferred, i, j);
            for &l in a.labels.iter().chain(&b.labels) {
                count[l as usize] -= 1;
            }
            let kept = |l: u32| count[l as usize] > 0;
            let consumer = next.get(s).and_then(Option::as_ref);
            let want = match consumer {
                None => Some(Want::exact(spec.output())),
                Some(c) => {
                    let partner = ids.iter().position(|&id| id == c.partner).map(|p| &list[p]);
                    Want::for_consumer(&a, &b, &kept, c, partner, &dims)
                }
            };
            let (step, result, step_flops, leaves) =
                match plan_chain(&a, &b, da, db, &kept, consumer, want.as_ref(), &dims) {
                    Some(ch) => {
                        let step = Step {
                            i,
                            j,
                            a_sum: None,
                            b_sum: None,
                            core: ch.core,
                            out_len: ch.out_len,
                        };
                        (step, ch.result, ch.flops, ch.leaves)
                    }
                    None => {
                        let (step, result, flops) =
                            plan_step(i, j, a, b, &kept, &dims, want.as_ref());
                        (step, result, flops, None)
                    }
                };
            for &l in &result.labels {
                count[l as usize] += 1;
            }
            flops = flops.saturating_add(step_flops);
            steps.push(step);
            list.push(result);
            ids.push(n + s);
            deferred.push(leaves);
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
        let out_layout = SizedLayout::new(Layout::contiguous(&out_shape)?);
        Ok(EinsumPlan { dtype, inputs, views, steps, finish, out_layout, path, flops })
    }

    /// The result's shape.
    pub fn out_shape(&self) -> &[usize] {
        self.out_layout.layout().shape()
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

    /// Number of operand copies one execution makes: permutes before a GEMM, and scattered
    /// factors of an elementwise product (or of a chain of them) copied into its output.
    pub fn num_operand_copies(&self) -> usize {
        self.steps
            .iter()
            .map(|s| match &s.core {
                Core::Gemm(g) => usize::from(g.a_copy.is_some()) + usize::from(g.b_copy.is_some()),
                Core::Map { copy, .. } => usize::from(copy.is_some()),
                Core::Fused(f) => usize::from(f.copy.is_some()),
                Core::Defer => 0,
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
            + self
                .steps
                .iter()
                .filter(|s| matches!(s.core, Core::Map { copy: Some(_), .. }))
                .count()
                * std::mem::size_of::<MapCopy>()
            + self
                .steps
                .iter()
                .map(|s| match &s.core {
                    Core::Gemm(g) => {
                        std::mem::size_of::<GemmCore>()
                            + g.blocks.as_ref().map_or(0, Blocks::heap_bytes)
                    }
                    Core::Fused(f) => std::mem::size_of::<Fused>() + f.heap_bytes(),
                    Core::Map { .. } | Core::Defer => 0,
                })
                .sum::<usize>()
            + self.path.len() * std::mem::size_of::<(usize, usize)>()
    }
}

/// Sums away the labels of `op` that `keep` rejects, if any: the dense result keeps the other
/// labels in `op`'s order.
pub(super) fn presum(
    op: Operand,
    keep: impl Fn(u32) -> bool,
    dims: &[usize],
) -> (Operand, Option<SumOp>) {
    if op.labels.iter().all(|&l| keep(l)) {
        return (op, None);
    }
    let labels: Labels = op.labels.iter().copied().filter(|&l| keep(l)).collect();
    let out = Operand::dense(labels, dims);
    let so: Axes = op.labels.iter().map(|&l| out.stride(l)).collect();
    let zeros: Axes = SmallVec::from_elem(0, op.labels.len());
    let nest = Nest::new(&op.shape, &so, &op.strides, &zeros, Order::A);
    let sum = SumOp { nest, out_len: out.len() };
    (out, Some(sum))
}

fn plan_finish(op: &Operand, output: &[u32], dims: &[usize], borrowed: bool) -> Finish {
    let out = Operand::dense(output.into(), dims);
    if op.labels.iter().any(|l| !output.contains(l)) {
        let so: Axes = op.labels.iter().map(|&l| out.stride(l)).collect();
        let zeros: Axes = SmallVec::from_elem(0, op.labels.len());
        let nest = Nest::new(&op.shape, &so, &op.strides, &zeros, Order::A);
        return Finish::Sum(SumOp { nest, out_len: out.len() });
    }
    if !borrowed && op.labels.as_slice() == output {
        return Finish::Move;
    }
    Finish::Copy(op.copy_to(output, dims))
}
