//! A plan together with the operands a lookup found it for ([`Matched`]).
//!
//! [`EinsumPlan::execute`] compares its operands' element type, count, shapes and strides with
//! the plan's before it runs, so that a plan given the wrong operands fails with a typed error.
//! A plan that comes out of a [`PlanStore`](super::PlanStore) lookup has already been compared:
//! the store matched those operands against the plan's key, which holds the same shapes and
//! strides. [`Matched`] carries that fact from the lookup to the run, and the run skips the
//! second comparison, which a held einsum would otherwise pay on every call.

use holdfast_tensor::{Element, Tensor, TensorRead};

use super::plan::EinsumPlan;
use crate::{KernelAlloc, KernelError, Par};

/// A plan and the operands [`PlanStore::lookup_matched`](super::PlanStore::lookup_matched)
/// found it for. Running it does not check the operands again.
///
/// # Examples
///
/// See [`PlanStore::lookup_matched`](super::PlanStore::lookup_matched).
#[derive(Debug, Clone, Copy)]
pub struct Matched<'p, 'o, 'd, T> {
    plan: &'p EinsumPlan,
    operands: &'o [TensorRead<'d, T>],
}

impl<'p, 'o, 'd, T: Element> Matched<'p, 'o, 'd, T> {
    /// `plan` with `operands`, which the caller has matched against the plan's key.
    pub(super) fn new(plan: &'p EinsumPlan, operands: &'o [TensorRead<'d, T>]) -> Self {
        Matched { plan, operands }
    }

    /// The plan found.
    pub fn plan(&self) -> &'p EinsumPlan {
        self.plan
    }

    /// Runs the plan on the operands it was found for, as
    /// [`EinsumPlan::execute_as`] does but without comparing them with the plan again.
    ///
    /// # Errors
    ///
    /// As [`EinsumPlan::execute_as`], converted with `E::from`, except that a mismatch between
    /// operands and plan is not looked for.
    #[inline]
    pub fn execute_as<E: From<KernelError>, A: KernelAlloc + ?Sized>(
        &self,
        alloc: &mut A,
        par: Par,
    ) -> Result<Tensor<T>, E> {
        self.plan.execute_checked_as(self.operands, alloc, par)
    }
}
