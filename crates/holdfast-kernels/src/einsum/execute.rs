//! Execution of an [`EinsumPlan`]: moves data through the planned steps, taking every buffer from
//! the caller's allocator and giving intermediates back as soon as they are consumed.

use holdfast_tensor::{Element, Tensor, TensorRead, record_copy};
use smallvec::SmallVec;

use super::path::take_pair;
use super::plan::{CopyOp, Core, EinsumPlan, Finish, SumOp};
use crate::matmul::operand::{Accum, MatMut, MatRef};
use crate::reduce::run_sum;
use crate::strided::copy_strided;
use crate::{Family, KernelAlloc, KernelError, Par};

/// An operand during execution: an input's storage and offset, or a dense intermediate.
enum Buffer<'a, T> {
    Input(&'a [T], usize),
    Owned(Vec<T>),
}

impl<T> Buffer<'_, T> {
    fn data(&self) -> (&[T], usize) {
        match self {
            Buffer::Input(d, o) => (d, *o),
            Buffer::Owned(v) => (v, 0),
        }
    }
}

/// The live operands of a run, inline for the common handful (no allocation per run).
type Buffers<'a, T> = SmallVec<[Buffer<'a, T>; 8]>;

fn release<T: Element, A: KernelAlloc + ?Sized>(buffer: Buffer<'_, T>, alloc: &mut A) {
    if let Buffer::Owned(v) = buffer {
        alloc.give(v);
    }
}

fn run_copy<T: Element, A: KernelAlloc + ?Sized>(
    op: &CopyOp,
    src: &[T],
    off: usize,
    alloc: &mut A,
    par: Par,
) -> Vec<T> {
    let mut buf = alloc.take::<T>(op.len);
    let threads = par.for_size(Family::Permute, op.len as u64).threads();
    copy_strided(src, off, &op.shape, &op.strides, &mut buf, threads);
    record_copy(op.len);
    buf
}

fn run_sum_op<T: Element, A: KernelAlloc + ?Sized>(
    op: &SumOp,
    src: &[T],
    off: usize,
    alloc: &mut A,
    par: Par,
) -> Vec<T> {
    let mut buf = alloc.take_zeroed::<T>(op.out_len);
    run_sum(&op.nest, src, off, &mut buf, alloc, par);
    buf
}

impl EinsumPlan {
    /// Runs the plan on `operands`, which must have the shapes and strides the plan was
    /// prepared for. Output and intermediates come from `alloc`; intermediates go back to it.
    ///
    /// # Errors
    ///
    /// [`KernelError::PlanMismatch`] for operands of another element type, count, shape or
    /// strides.
    pub fn execute<T: Element, A: KernelAlloc + ?Sized>(
        &self,
        operands: &[TensorRead<'_, T>],
        alloc: &mut A,
        par: Par,
    ) -> Result<Tensor<T>, KernelError> {
        if T::DTYPE != self.dtype {
            return Err(KernelError::PlanMismatch { reason: "element type" });
        }
        if operands.len() != self.inputs.len() {
            return Err(KernelError::PlanMismatch { reason: "operand count" });
        }
        for (op, want) in operands.iter().zip(&self.inputs) {
            if op.shape() != &want.shape[..] || op.strides() != &want.strides[..] {
                return Err(KernelError::PlanMismatch { reason: "operand shape or strides" });
            }
        }
        let par = par.for_size(Family::Contraction, self.flops);
        let mut list: Buffers<'_, T> =
            operands.iter().map(|o| Buffer::Input(o.storage(), o.offset())).collect();
        for step in &self.steps {
            let (sa, sb) = take_pair(&mut list, step.i, step.j);
            let a_pre = step.a_sum.as_ref().map(|s| {
                let (d, o) = sa.data();
                run_sum_op(s, d, o, alloc, par)
            });
            let b_pre = step.b_sum.as_ref().map(|s| {
                let (d, o) = sb.data();
                run_sum_op(s, d, o, alloc, par)
            });
            let (a, ao) = a_pre.as_deref().map_or_else(|| sa.data(), |v| (v, 0));
            let (b, bo) = b_pre.as_deref().map_or_else(|| sb.data(), |v| (v, 0));
            let mut out = match &step.core {
                // C collects the sum of the loop's products.
                Core::Gemm(g) if g.accumulate => alloc.take_zeroed::<T>(step.out_len),
                _ => alloc.take::<T>(step.out_len),
            };
            match &step.core {
                Core::Map { nest } => {
                    let op = |o: &mut T, x: T, y: T| *o = x * y;
                    match par.for_size(Family::Elementwise, step.out_len as u64) {
                        Par::Seq => nest.run(&mut out, 0, a, ao, b, bo, &op),
                        p => nest.run_par(&mut out, 0, a, ao, b, bo, &op, p.threads()),
                    }
                }
                Core::Gemm(g) => {
                    let (a_copy, b_copy, outer, gemm) = (&g.a_copy, &g.b_copy, &g.outer, &g.gemm);
                    let accum = if g.accumulate { Accum::Add } else { Accum::Replace };
                    let a_tmp = a_copy.as_ref().map(|c| run_copy(c, a, ao, alloc, par));
                    let b_tmp = b_copy.as_ref().map(|c| run_copy(c, b, bo, alloc, par));
                    let (a, ao) = a_tmp.as_deref().map_or((a, ao), |v| (v, 0));
                    let (b, bo) = b_tmp.as_deref().map_or((b, bo), |v| (v, 0));
                    let (a, b) = (MatRef::new(a, ao), MatRef::new(b, bo));
                    match outer {
                        None => gemm.run(MatMut::new(&mut out, 0), a, b, accum, par),
                        Some(nest) => nest.for_each_offset(|pc, pa, pb| {
                            let c = MatMut::new(&mut out, pc);
                            gemm.run(c, a.shifted(pa), b.shifted(pb), accum, par);
                        }),
                    }
                    for t in [a_tmp, b_tmp].into_iter().flatten() {
                        alloc.give(t);
                    }
                }
            }
            for t in [a_pre, b_pre].into_iter().flatten() {
                alloc.give(t);
            }
            release(sa, alloc);
            release(sb, alloc);
            list.push(Buffer::Owned(out));
        }
        let last = list.pop().ok_or(KernelError::PlanMismatch { reason: "no operand" })?;
        let buf = match (&self.finish, last) {
            (Finish::Move, Buffer::Owned(v)) => v,
            (Finish::Move, Buffer::Input(..)) => {
                // Planned only for intermediates (an input is always copied or summed).
                return Err(KernelError::PlanMismatch { reason: "final operand is an input" });
            }
            (Finish::Copy(c), slot) => {
                let (d, o) = slot.data();
                let v = run_copy(c, d, o, alloc, par);
                release(slot, alloc);
                v
            }
            (Finish::Sum(s), slot) => {
                let (d, o) = slot.data();
                let v = run_sum_op(s, d, o, alloc, par);
                release(slot, alloc);
                v
            }
        };
        Ok(Tensor::from_shape_vec(&self.out_shape, buf)?)
    }
}
