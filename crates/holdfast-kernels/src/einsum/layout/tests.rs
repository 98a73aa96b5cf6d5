//! Unit tests of the result-order rules that do not need a whole plan.

use smallvec::smallvec;

use super::Want;
use crate::einsum::planner::Labels;

#[test]
fn a_free_tail_ends_with_the_group_the_readers_copy_puts_last() {
    // Labels 9 and 8 are the consumer's batch labels, 3 and 4 its contracted ones, 5 and 6
    // its own kept ones.
    let consumer = |as_a| Want {
        order: Labels::new(),
        alternatives: Vec::new(),
        exact: false,
        m: smallvec![5, 6],
        k: smallvec![3, 4],
        k_fixed: false,
        as_a,
    };
    let arranged = |w: &Want| {
        let mut tail = [6, 3, 9, 5, 4, 8];
        w.arrange_tail(&mut tail);
        tail
    };
    // Its copy of a B ends with its own kept labels, of an A with the contracted ones; within
    // a group the tail keeps its order.
    assert_eq!(arranged(&consumer(false)), [9, 8, 3, 4, 6, 5]);
    assert_eq!(arranged(&consumer(true)), [9, 8, 6, 5, 3, 4]);
    // The output's labels take the output's order.
    assert_eq!(arranged(&Want::exact(&[8, 3, 4, 9, 6, 5])), [8, 3, 4, 9, 6, 5]);
}
