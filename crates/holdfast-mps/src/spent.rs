//! [`Spent`]: tensors an algorithm is done with, kept until its next operation gives them back to
//! the session's pool in the same entry.
//!
//! A tensor dropped outside a view frees its buffer to the heap, and the next output of its size
//! then allocates again. The algorithms therefore hand every tensor they replace to a `Spent`
//! list and empty it inside an operation they run anyway, so a warm sweep or step is served by
//! the pool and the recycling costs no entry of its own (a scoped entry per operation would pay
//! for each). The list keeps its capacity: once warm, pushing allocates nothing.

use holdfast::{CpuExecSession, Element, Tensor};

/// Tensors waiting to go back to the pool.
#[derive(Debug)]
pub(crate) struct Spent<T: Element> {
    tensors: Vec<Tensor<T>>,
}

impl<T: Element> Spent<T> {
    /// An empty list with room for `capacity` tensors.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Spent { tensors: Vec::with_capacity(capacity) }
    }

    /// Keeps `tensor` for the next [`recycle_into`](Self::recycle_into).
    pub(crate) fn push(&mut self, tensor: Tensor<T>) {
        self.tensors.push(tensor);
    }

    /// Keeps every tensor of `tensors`.
    pub(crate) fn extend(&mut self, tensors: impl IntoIterator<Item = Tensor<T>>) {
        self.tensors.extend(tensors);
    }

    /// Gives every kept tensor to `view`'s pool.
    pub(crate) fn recycle_into(&mut self, view: &mut CpuExecSession<'_>) {
        for tensor in self.tensors.drain(..) {
            view.recycle(tensor);
        }
    }
}
