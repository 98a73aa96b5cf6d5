//! Execution of an [`EinsumPlan`]: moves data through the planned steps, taking every buffer from
//! the caller's allocator and giving intermediates back as soon as they are consumed (before the
//! step that consumes them takes its output, when the step reads only their presum or copy).

#[cfg(test)]
mod tests;

use holdfast_tensor::{Element, Tensor, TensorRead, record_copy};
use smallvec::SmallVec;

use super::fused::{Fused, Source};
use super::key::same_axes;
use super::outer::run_outer;
use super::path::take_pair;
use super::plan::{CopyOp, Core, EinsumPlan, Finish, GemmCore, MapCopy, Step, SumOp};
use crate::matmul::operand::{Accum, MatMut, MatRef};
use crate::reduce::run_sum;
use crate::strided::{Nest, copy_prepared, copy_strided};
use crate::{Family, KernelAlloc, KernelError, Par};

/// An operand during execution: an input's storage and offset, a dense intermediate, or a
/// deferred product (its leaves, each an input or an intermediate, `fused.rs`).
enum Buffer<'a, T> {
    Input(&'a [T], usize),
    Owned(Vec<T>),
    Deferred(Vec<Buffer<'a, T>>),
}

impl<'a, T> Buffer<'a, T> {
    /// The data and offset of an input or intermediate. A deferred product has none: the plan
    /// only hands one to a fused step, which reads its leaves (empty data here, so a broken
    /// plan panics on its first index rather than reading anything).
    fn data(&self) -> (&[T], usize) {
        match self {
            Buffer::Input(d, o) => (d, *o),
            Buffer::Owned(v) => (v, 0),
            Buffer::Deferred(_) => (&[], 0),
        }
    }

    /// This buffer's leaves appended to `out`: its own for a deferred product, else itself.
    fn into_leaves(self, out: &mut Vec<Buffer<'a, T>>) {
        match self {
            Buffer::Deferred(leaves) => out.extend(leaves),
            b => out.push(b),
        }
    }
}

/// The leaves of `a`, then those of `b`: the operands of a deferred or fused step, in order.
fn leaves_of<'a, T>(a: Buffer<'a, T>, b: Buffer<'a, T>) -> Vec<Buffer<'a, T>> {
    let mut leaves = Vec::new();
    a.into_leaves(&mut leaves);
    b.into_leaves(&mut leaves);
    leaves
}

/// The live operands of a run, inline for the common handful (no allocation per run).
type Buffers<'a, T> = SmallVec<[Buffer<'a, T>; 8]>;

fn release<T: Element, A: KernelAlloc + ?Sized>(buffer: Buffer<'_, T>, alloc: &mut A) {
    match buffer {
        Buffer::Input(..) => {}
        Buffer::Owned(v) => alloc.give(v),
        Buffer::Deferred(leaves) => leaves.into_iter().for_each(|b| release(b, alloc)),
    }
}

/// What a step reads of one operand: the operand itself, or its presum and/or its copy into
/// GEMM layout (the operand then already released).
enum Staged<'a, T> {
    Original(Buffer<'a, T>),
    Derived(Vec<T>),
}

impl<T: Element> Staged<'_, T> {
    fn data(&self) -> (&[T], usize) {
        match self {
            Staged::Original(b) => b.data(),
            Staged::Derived(v) => (v, 0),
        }
    }

    fn release<A: KernelAlloc + ?Sized>(self, alloc: &mut A) {
        match self {
            Staged::Original(b) => release(b, alloc),
            Staged::Derived(v) => alloc.give(v),
        }
    }
}

/// `buffer` summed over `sum`'s labels and copied by `copy` (either optional), releasing each
/// buffer as soon as the next stage has read it.
fn stage<'a, T: Element, A: KernelAlloc + ?Sized>(
    buffer: Buffer<'a, T>,
    sum: Option<&SumOp>,
    copy: Option<&CopyOp>,
    alloc: &mut A,
    par: Par,
) -> Staged<'a, T> {
    let mut staged = Staged::Original(buffer);
    if let Some(s) = sum {
        let (d, o) = staged.data();
        let v = run_sum_op(s, d, o, alloc, par);
        staged.release(alloc);
        staged = Staged::Derived(v);
    }
    if let Some(c) = copy {
        let (d, o) = staged.data();
        let v = run_copy(c, d, o, alloc, par);
        staged.release(alloc);
        staged = Staged::Derived(v);
    }
    staged
}

/// `out = a · b` by [`MapCopy`]: the scattered operand copied into `out`, then `out`
/// multiplied in place by the other (the factors keep their order: `a · b`).
fn map_with_copy<T: Element>(
    mc: &MapCopy,
    out: &mut [T],
    (ad, ao): (&[T], usize),
    (bd, bo): (&[T], usize),
    par: Par,
) {
    let len = out.len();
    let threads = par.for_size(Family::Permute, len as u64).threads();
    let (src, off, other, oo) = if mc.b { (bd, bo, ad, ao) } else { (ad, ao, bd, bo) };
    copy_prepared(&mc.copy, src, off, out, threads);
    record_copy(len);
    let par = par.for_size(Family::Elementwise, len as u64);
    if mc.b {
        multiply_in_place(&mc.product, out, (other, oo), par, |o: &mut T, x: T, _| *o = x * *o);
    } else {
        multiply_in_place(&mc.product, out, (other, oo), par, |o: &mut T, y: T, _| *o *= y);
    }
}

/// Runs `op(out, factor, _)` over `nest` (its `a` strides are the factor's; its `b` is unused).
fn multiply_in_place<T: Element, F: Fn(&mut T, T, T) + Sync>(
    nest: &Nest,
    out: &mut [T],
    (factor, off): (&[T], usize),
    par: Par,
    op: F,
) {
    let unused = [T::ZERO];
    match par {
        Par::Seq => nest.run(out, 0, factor, off, &unused, 0, &op),
        p => nest.run_par(out, 0, factor, off, &unused, 0, &op, p.threads()),
    }
}

/// The product of the leaves of `a` and `b` (in that order) into a buffer of `len` from
/// `alloc`, every intermediate among them given back after.
fn run_fused<T: Element, A: KernelAlloc + ?Sized>(
    f: &Fused,
    a: Buffer<'_, T>,
    b: Buffer<'_, T>,
    len: usize,
    alloc: &mut A,
    par: Par,
) -> Vec<T> {
    let leaves = leaves_of(a, b);
    let mut out = alloc.take::<T>(len);
    let mut pre: SmallVec<[Vec<T>; 4]> = SmallVec::new();
    {
        let data: SmallVec<[(&[T], usize); 16]> = leaves.iter().map(Buffer::data).collect();
        for (members, kernel) in &f.pre {
            let mut buf = alloc.take::<T>(kernel.len());
            let own: SmallVec<[(&[T], usize); 16]> = members.iter().map(|&m| data[m]).collect();
            let threads = par.for_size(Family::Elementwise, kernel.len() as u64).threads();
            kernel.run(&mut buf, &own, threads);
            pre.push(buf);
        }
        let main: SmallVec<[(&[T], usize); 16]> = f
            .sources
            .iter()
            .map(|s| match *s {
                Source::Leaf(k) => data[k],
                Source::Pre(g) => (&pre[g][..], 0),
            })
            .collect();
        if let Some((k, nest)) = &f.copy {
            let (src, off) = data[*k];
            copy_prepared(
                nest,
                src,
                off,
                &mut out,
                par.for_size(Family::Permute, len as u64).threads(),
            );
            record_copy(len);
        }
        let threads = par.for_size(Family::Elementwise, len as u64).threads();
        f.main.run(&mut out, &main, threads);
    }
    pre.into_iter().for_each(|v| alloc.give(v));
    leaves.into_iter().for_each(|b| release(b, alloc));
    out
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
        self.execute_as(operands, alloc, par)
    }

    /// [`execute`](Self::execute), its error converted to the caller's type `E` where it
    /// arises. A plan of one product then writes its tensor straight into the caller's result:
    /// a kernel error mapped afterwards would copy the tensor from one result type to the other,
    /// a move a small product would pay on every call.
    ///
    /// # Errors
    ///
    /// As [`execute`](Self::execute), converted with `E::from`.
    ///
    /// # Examples
    ///
    /// ```
    /// use holdfast_kernels::einsum::EinsumPlan;
    /// use holdfast_kernels::{HeapAlloc, KernelError, Par};
    /// use holdfast_tensor::Tensor;
    ///
    /// #[derive(Debug)]
    /// struct MyError(KernelError);
    /// impl From<KernelError> for MyError {
    ///     fn from(e: KernelError) -> Self {
    ///         MyError(e)
    ///     }
    /// }
    ///
    /// let a = Tensor::<f64>::from_vec([2, 2], vec![1.0, 2.0, 3.0, 4.0])?;
    /// let ops = [a.read(), a.read()];
    /// let plan = EinsumPlan::prepare("ij,jk->ik", &ops, None)?;
    /// let c: Result<Tensor<f64>, MyError> = plan.execute_as(&ops, &mut HeapAlloc, Par::Seq);
    /// assert_eq!(c.map_err(|e| e.0)?.as_slice(), &[7.0, 10.0, 15.0, 22.0]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn execute_as<E: From<KernelError>, T: Element, A: KernelAlloc + ?Sized>(
        &self,
        operands: &[TensorRead<'_, T>],
        alloc: &mut A,
        par: Par,
    ) -> Result<Tensor<T>, E> {
        self.check_operands(operands)?;
        self.execute_checked_as(operands, alloc, par)
    }

    /// [`execute_as`](Self::execute_as) on operands already found to have the element type,
    /// count, shapes and strides the plan was made for.
    #[inline]
    pub(super) fn execute_checked_as<E: From<KernelError>, T: Element, A: KernelAlloc + ?Sized>(
        &self,
        operands: &[TensorRead<'_, T>],
        alloc: &mut A,
        par: Par,
    ) -> Result<Tensor<T>, E> {
        let par = par.for_size(Family::Contraction, self.flops);
        match self.single_product() {
            Some((step, gemm)) => self.execute_single_product(step, gemm, operands, alloc, par),
            None => self.execute_steps(operands, alloc, par).map_err(E::from),
        }
    }

    /// That `operands` have the element type, count, shapes and strides the plan was made for.
    fn check_operands<T: Element>(
        &self,
        operands: &[TensorRead<'_, T>],
    ) -> Result<(), KernelError> {
        if T::DTYPE != self.dtype {
            return Err(KernelError::PlanMismatch { reason: "element type" });
        }
        if operands.len() != self.inputs.len() {
            return Err(KernelError::PlanMismatch { reason: "operand count" });
        }
        for (op, want) in operands.iter().zip(&self.inputs) {
            if !same_axes(op.shape(), op.strides(), &want.shape, &want.strides) {
                return Err(KernelError::PlanMismatch { reason: "operand shape or strides" });
            }
        }
        Ok(())
    }

    /// [`execute`](Self::execute)'s general path, on checked operands: every step in order
    /// through the list of buffers, then the finish. Out of line: a single product's path
    /// stays small.
    #[inline(never)]
    fn execute_steps<T: Element, A: KernelAlloc + ?Sized>(
        &self,
        operands: &[TensorRead<'_, T>],
        alloc: &mut A,
        par: Par,
    ) -> Result<Tensor<T>, KernelError> {
        let mut list: Buffers<'_, T> =
            operands.iter().map(|o| Buffer::Input(o.storage(), o.offset())).collect();
        for step in &self.steps {
            let (sa, sb) = take_pair(&mut list, step.i, step.j);
            let (a_copy, b_copy) = match &step.core {
                Core::Gemm(g) => (g.a_copy.as_ref(), g.b_copy.as_ref()),
                Core::Defer => {
                    list.push(Buffer::Deferred(leaves_of(sa, sb)));
                    continue;
                }
                Core::Fused(f) => {
                    let out = run_fused(f, sa, sb, step.out_len, alloc, par);
                    list.push(Buffer::Owned(out));
                    continue;
                }
                Core::Map { .. } => (None, None),
            };
            // Each operand's presum and GEMM-layout copy run before the output is taken, and an
            // intermediate goes back to the allocator as soon as the step no longer reads it,
            // so the output can reuse its buffer.
            let a = stage(sa, step.a_sum.as_ref(), a_copy, alloc, par);
            let b = stage(sb, step.b_sum.as_ref(), b_copy, alloc, par);
            let ((ad, ao), (bd, bo)) = (a.data(), b.data());
            let mut out = match &step.core {
                // C collects the sum of the loop's products.
                Core::Gemm(g) if g.accumulate => alloc.take_zeroed::<T>(step.out_len),
                _ => alloc.take::<T>(step.out_len),
            };
            match &step.core {
                Core::Map { nest, copy: None } => {
                    let op = |o: &mut T, x: T, y: T| *o = x * y;
                    match par.for_size(Family::Elementwise, step.out_len as u64) {
                        Par::Seq => nest.run(&mut out, 0, ad, ao, bd, bo, &op),
                        p => nest.run_par(&mut out, 0, ad, ao, bd, bo, &op, p.threads()),
                    }
                }
                Core::Map { copy: Some(mc), .. } => {
                    map_with_copy(mc, &mut out, (ad, ao), (bd, bo), par);
                }
                // Run above, before staging.
                Core::Defer | Core::Fused(_) => {}
                Core::Gemm(g) => {
                    let accum = if g.accumulate { Accum::Add } else { Accum::Replace };
                    let (a, b) = (MatRef::new(ad, ao), MatRef::new(bd, bo));
                    match (&g.blocks, &g.outer) {
                        (Some(blocks), _) => {
                            blocks.run(&mut out, (ad, ao), (bd, bo), accum, alloc, par);
                        }
                        (None, None) => g.gemm.run(MatMut::new(&mut out, 0), a, b, accum, par),
                        (None, Some(nest)) => run_outer(g, nest, &mut out, (a, b), accum, par),
                    }
                }
            }
            a.release(alloc);
            b.release(alloc);
            list.push(Buffer::Owned(out));
        }
        let last = list.pop().ok_or(KernelError::PlanMismatch { reason: "no operand" })?;
        let buf = match (&self.finish, last) {
            (Finish::Move, Buffer::Owned(v)) => v,
            (Finish::Move, deferred @ Buffer::Deferred(_)) => {
                // The last step has no consumer, so it never defers.
                release(deferred, alloc);
                return Err(KernelError::PlanMismatch { reason: "final operand is deferred" });
            }
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
        Ok(Tensor::from_sized_layout(buf, &self.out_layout)?)
    }

    /// The plan's only step when it is a product of the two inputs as they are (no presum,
    /// no copy, no blocks) whose output is the result: the executor's general list of buffers
    /// and stages is then skipped, which is most of a small contraction's cost.
    fn single_product(&self) -> Option<(&Step, &GemmCore)> {
        match (&self.steps[..], &self.finish) {
            ([step], Finish::Move) => match &step.core {
                Core::Gemm(g)
                    if step.a_sum.is_none()
                        && step.b_sum.is_none()
                        && g.a_copy.is_none()
                        && g.b_copy.is_none()
                        && g.blocks.is_none() =>
                {
                    Some((step, g))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// [`execute`](Self::execute) for a plan [`single_product`](Self::single_product) accepts:
    /// the same product on the same operands, into one buffer from `alloc`.
    #[inline]
    fn execute_single_product<E: From<KernelError>, T: Element, A: KernelAlloc + ?Sized>(
        &self,
        step: &Step,
        g: &GemmCore,
        operands: &[TensorRead<'_, T>],
        alloc: &mut A,
        par: Par,
    ) -> Result<Tensor<T>, E> {
        let missing = || KernelError::PlanMismatch { reason: "operand count" };
        let (a, b) =
            (operands.get(step.i).ok_or_else(missing)?, operands.get(step.j).ok_or_else(missing)?);
        let (a, b) = (MatRef::new(a.storage(), a.offset()), MatRef::new(b.storage(), b.offset()));
        let (mut out, accum) = if g.accumulate {
            (alloc.take_zeroed::<T>(step.out_len), Accum::Add)
        } else {
            (alloc.take::<T>(step.out_len), Accum::Replace)
        };
        match &g.outer {
            None => g.gemm.run(MatMut::new(&mut out, 0), a, b, accum, par),
            Some(nest) => run_outer(g, nest, &mut out, (a, b), accum, par),
        }
        Tensor::from_sized_layout_with(out, &self.out_layout, |e| E::from(KernelError::from(e)))
    }
}
