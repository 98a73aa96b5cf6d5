//! Contraction paths: checking an opt_einsum-format path ([`check_path`]) and choosing one
//! greedily ([`greedy_path`]).
//!
//! A path is a list of pairs of positions in the *current* operand list: each step removes the two
//! operands and appends their contraction at the end, until one operand is left.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use smallvec::SmallVec;

use crate::KernelError;

/// Checks that `path` is valid for `n` operands and reduces them to one.
///
/// # Errors
///
/// [`KernelError::PathIndexOutOfRange`], [`KernelError::PathRepeatedIndex`] or
/// [`KernelError::IncompletePath`].
pub(crate) fn check_path(n: usize, path: &[(usize, usize)]) -> Result<(), KernelError> {
    let mut len = n;
    for (step, &(i, j)) in path.iter().enumerate() {
        for index in [i, j] {
            if index >= len {
                return Err(KernelError::PathIndexOutOfRange { step, index, len });
            }
        }
        if i == j {
            return Err(KernelError::PathRepeatedIndex { step, index: i });
        }
        len -= 1;
    }
    if len > 1 {
        return Err(KernelError::IncompletePath { remaining: len });
    }
    Ok(())
}

/// A candidate pair in the greedy search, ordered so that the heap pops the smallest cost.
#[derive(Debug, PartialEq)]
struct Candidate {
    cost: f64,
    x: usize,
    y: usize,
}

impl Eq for Candidate {}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .cost
            .total_cmp(&self.cost)
            .then_with(|| other.x.cmp(&self.x))
            .then_with(|| other.y.cmp(&self.y))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A greedy path: repeatedly contract the pair (among pairs that share a label) whose result
/// grows memory least (`size(result) − size(a) − size(b)`, opt_einsum's greedy cost); when no
/// pair shares a label, take the outer product of the two smallest operands.
///
/// `terms` are the operands' label sets (unique labels), `output` the output labels, `dims` the
/// dimension of each label id.
pub(crate) fn greedy_path(
    terms: &[Vec<u32>],
    output: &[u32],
    dims: &[usize],
) -> Vec<(usize, usize)> {
    let n = terms.len();
    if n < 2 {
        return Vec::new();
    }
    let nlabels = dims.len();
    // Operand sets by stable id (inputs first, then results); `alive` marks live ids.
    let mut sets: Vec<Vec<u32>> = terms.to_vec();
    let mut alive: Vec<bool> = vec![true; n];
    let mut count = vec![0usize; nlabels];
    let mut holders: Vec<Vec<usize>> = vec![Vec::new(); nlabels];
    for (id, t) in terms.iter().enumerate() {
        for &l in t {
            count[l as usize] += 1;
            holders[l as usize].push(id);
        }
    }
    for &l in output {
        count[l as usize] += 1;
    }
    let size = |s: &[u32]| s.iter().map(|&l| dims[l as usize] as f64).product::<f64>();
    let result_of = |a: &[u32], b: &[u32], count: &[usize]| -> Vec<u32> {
        let mut r: Vec<u32> = Vec::with_capacity(a.len() + b.len());
        for &l in a.iter().chain(b) {
            if r.contains(&l) {
                continue;
            }
            let both = usize::from(a.contains(&l)) + usize::from(b.contains(&l));
            if count[l as usize] > both {
                r.push(l);
            }
        }
        r
    };
    let mut heap = BinaryHeap::new();
    let push_pairs = |id: usize,
                      sets: &Vec<Vec<u32>>,
                      alive: &Vec<bool>,
                      holders: &Vec<Vec<usize>>,
                      count: &Vec<usize>,
                      heap: &mut BinaryHeap<Candidate>| {
        let mut partners: Vec<usize> = sets[id]
            .iter()
            .flat_map(|&l| holders[l as usize].iter().copied())
            .filter(|&o| o != id && alive[o])
            .collect();
        partners.sort_unstable();
        partners.dedup();
        for o in partners {
            let r = result_of(&sets[o], &sets[id], count);
            let cost = size(&r) - size(&sets[o]) - size(&sets[id]);
            heap.push(Candidate { cost, x: o.min(id), y: o.max(id) });
        }
    };
    for id in 0..n {
        // Pairs with lower ids only, so each pair enters once.
        let mut partners: Vec<usize> = sets[id]
            .iter()
            .flat_map(|&l| holders[l as usize].iter().copied())
            .filter(|&o| o < id)
            .collect();
        partners.sort_unstable();
        partners.dedup();
        for o in partners {
            let r = result_of(&sets[o], &sets[id], &count);
            let cost = size(&r) - size(&sets[o]) - size(&sets[id]);
            heap.push(Candidate { cost, x: o, y: id });
        }
    }
    // The current list of ids, in opt_einsum order.
    let mut list: Vec<usize> = (0..n).collect();
    let mut path = Vec::with_capacity(n - 1);
    while list.len() > 1 {
        let (x, y) = loop {
            match heap.pop() {
                Some(c) if alive[c.x] && alive[c.y] => break (c.x, c.y),
                Some(_) => {}
                None => {
                    // No pair shares a label: outer product of the two smallest.
                    let mut by_size = list.clone();
                    by_size.sort_by(|&p, &q| size(&sets[p]).total_cmp(&size(&sets[q])));
                    break (by_size[0].min(by_size[1]), by_size[0].max(by_size[1]));
                }
            }
        };
        let px = list.iter().position(|&v| v == x).unwrap_or(0);
        let py = list.iter().position(|&v| v == y).unwrap_or(0);
        path.push((px, py));
        let r = result_of(&sets[x], &sets[y], &count);
        for &l in sets[x].iter().chain(&sets[y]) {
            count[l as usize] -= 1;
        }
        for &l in &r {
            count[l as usize] += 1;
        }
        alive[x] = false;
        alive[y] = false;
        list.retain(|&v| v != x && v != y);
        let id = sets.len();
        for &l in &r {
            holders[l as usize].push(id);
        }
        sets.push(r);
        alive.push(true);
        list.push(id);
        push_pairs(id, &sets, &alive, &holders, &count, &mut heap);
    }
    path
}

/// Removes positions `i` and `j` (distinct: [`check_path`] and the greedy path guarantee it)
/// from `list`, returning them in that order: one pairwise step of a path, shared by the
/// planner (over the operands' analyses) and the executor (over their buffers).
pub(crate) fn take_pair<T>(list: &mut SmallVec<[T; 8]>, i: usize, j: usize) -> (T, T) {
    let (hi, lo) = if i > j { (i, j) } else { (j, i) };
    let h = list.remove(hi);
    let l = list.remove(lo);
    if i > j { (h, l) } else { (l, h) }
}
