//! Paths in opt_einsum's general format ([`pairs_of_steps`]): each step names one or more
//! positions in the current operand list; those operands are removed, contracted together, and
//! the result is appended at the end. A one-operand step sums that operand's own labels (or only
//! moves it to the end); a step of three or more contracts them all at once.
//!
//! The executor runs pairs. A general path becomes an equivalent pair path: an n-operand step is
//! `n - 1` pairs in a row, each folding the next operand into the running result; a one-operand
//! step needs no pair at all, because a label summed early is summed by the first pair that
//! meets its operand just the same (and the final reduction handles a last operand alone). Only
//! the positions change: the translation follows both lists, the caller's (where a one-operand
//! step moves its operand to the end) and the executor's (where it stays), step by step.

use smallvec::SmallVec;

use crate::KernelError;

/// The pair path that contracts `operands` operands as the general path `steps` does.
///
/// # Errors
///
/// [`KernelError::EmptyPathStep`] for a step naming no operand,
/// [`KernelError::PathIndexOutOfRange`] and [`KernelError::PathRepeatedIndex`] for a position
/// past the current list or named twice in one step, [`KernelError::IncompletePath`] when more
/// than one operand is left at the end.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::einsum::pairs_of_steps;
///
/// // opt_einsum's `[(1,), (0, 1, 2)]` on three operands: operand 1 moves to the end (the
/// // executor leaves it where it is), then all three are contracted: operands 0 and 2 first,
/// // then their result (now at position 1) with operand 1 (at 0).
/// let steps: [&[usize]; 2] = [&[1], &[0, 1, 2]];
/// assert_eq!(pairs_of_steps(3, &steps)?.as_slice(), &[(0, 2), (1, 0)]);
/// # Ok::<(), holdfast_kernels::KernelError>(())
/// ```
pub fn pairs_of_steps(
    operands: usize,
    steps: &[&[usize]],
) -> Result<SmallVec<[(usize, usize); 16]>, KernelError> {
    // Operand identities: 0..operands for the inputs, then one per pair's result.
    let mut caller: SmallVec<[usize; 16]> = (0..operands).collect();
    let mut executor = caller.clone();
    let mut next = operands;
    let mut pairs = SmallVec::new();
    for (step, positions) in steps.iter().enumerate() {
        if positions.is_empty() {
            return Err(KernelError::EmptyPathStep { step });
        }
        let len = caller.len();
        for (k, &index) in positions.iter().enumerate() {
            if index >= len {
                return Err(KernelError::PathIndexOutOfRange { step, index, len });
            }
            if positions[..k].contains(&index) {
                return Err(KernelError::PathRepeatedIndex { step, index });
            }
        }
        let mut ids: SmallVec<[usize; 8]> = positions.iter().map(|&p| caller[p]).collect();
        caller.retain(|id| !ids.contains(id));
        let mut acc = ids.remove(0);
        for id in ids {
            let (i, j) = (position(&executor, acc), position(&executor, id));
            pairs.push((i, j));
            executor.retain(|e| *e != acc && *e != id);
            executor.push(next);
            acc = next;
            next += 1;
        }
        caller.push(acc);
    }
    if caller.len() > 1 {
        return Err(KernelError::IncompletePath { remaining: caller.len() });
    }
    Ok(pairs)
}

/// Where `id` is in `list` (always present: both lists hold the same identities).
fn position(list: &[usize], id: usize) -> usize {
    list.iter().position(|&e| e == id).unwrap_or(usize::MAX)
}
