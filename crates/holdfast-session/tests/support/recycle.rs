//! [`RecycleOnDrop`], shared by the fault tests and the soak: an output given back to the pool
//! from a drop, as a careless caller might do during an unwind.

use holdfast_session::{CpuExecSession, Tensor};

/// Recycles `out` into the view's pool when dropped (also while a panic unwinds).
pub(crate) struct RecycleOnDrop<'v, 's> {
    pub(crate) view: &'v mut CpuExecSession<'s>,
    pub(crate) out: Option<Tensor<f64>>,
}

impl Drop for RecycleOnDrop<'_, '_> {
    fn drop(&mut self) {
        if let Some(out) = self.out.take() {
            self.view.recycle(out);
        }
    }
}
