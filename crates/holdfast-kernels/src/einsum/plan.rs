//! [`EinsumPlan`]: the analysis of an einsum for given operand shapes and strides, kept apart
//! from its execution so that a cache can keep it (SPEC B3). This module holds the plan's data:
//! per input its expected layout and view, per pairwise step its pre-sums, core (elementwise map
//! or prepared GEMM with operand copies and outer loops) and output size, and the finish. The
//! planner (`planner.rs`) makes it; the executor (`execute.rs`) runs it.

use holdfast_tensor::{DType, Dims, SizedLayout};

use super::blocks::Blocks;
use super::fused::Fused;
use crate::matmul::batch::PreparedGemm;
use crate::strided::{Axes, Nest};

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
    /// Nothing to contract: `out = a · b` elementwise over the union of labels, fused over
    /// `nest`, or first copying a scattered operand into the output (`copy`).
    Map { nest: Box<Nest>, copy: Option<Box<MapCopy>> },
    /// A (batched) matrix product, after optional operand copies, repeated over the `outer`
    /// loops (offsets of C, A, B in the nest's `so`, `sa`, `sb`).
    Gemm(Box<GemmCore>),
    /// Nothing to compute: the result stays deferred, the list of its operands' leaves, which
    /// the step consuming it multiplies in ([`Fused`]).
    Defer,
    /// The elementwise product of the leaves of both operands (each deferred or itself a leaf),
    /// written once.
    Fused(Box<Fused>),
}

/// An elementwise product one of whose operands is scattered against the output (strided
/// along the output's innermost axis) while the other is not. Fused, every output element would
/// gather its scattered factor from another cache line; instead the scattered operand is copied
/// into the output buffer in the output's order (the blocked strided copy keeps both sides'
/// lines in cache), and the output is then multiplied in place by the other operand, one
/// contiguous pass.
#[derive(Debug, Clone)]
pub(crate) struct MapCopy {
    /// `true` when B is the copied operand, `false` for A.
    pub(crate) b: bool,
    /// The copy of the scattered operand into the output (dense, row-major).
    pub(crate) copy: Nest,
    /// The in-place product: the output, and the other operand as the nest's `a`.
    pub(crate) product: Nest,
}

/// The data of [`Core::Gemm`] (boxed: it is much larger than a `Map`).
#[derive(Debug, Clone)]
pub(crate) struct GemmCore {
    pub(crate) a_copy: Option<CopyOp>,
    pub(crate) b_copy: Option<CopyOp>,
    pub(crate) outer: Option<Nest>,
    /// The step's product, prepared once with the plan.
    pub(crate) gemm: PreparedGemm,
    /// A large copy made block by block with the product instead (`a_copy` or `b_copy` is then
    /// `None` for that side).
    pub(crate) blocks: Option<Blocks>,
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
    /// The result's dense layout, built once: every execution's output takes a copy of it.
    pub(crate) out_layout: SizedLayout,
    pub(crate) path: Vec<(usize, usize)>,
    pub(crate) flops: u64,
}
