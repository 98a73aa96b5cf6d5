//! numpy's ellipsis and size-1 broadcasting, reduced to plain labels before planning.
//!
//! - [`expand_ellipsis`] rewrites every `...` of a spec into fresh labels (private-use
//!   characters the spec does not use), as many per operand as the operand has axes beyond its
//!   explicit labels, aligned from the right as numpy broadcasts them. The output's `...` takes
//!   all of them; without `->`, the output is the broadcast labels followed by the labels that
//!   appear once, sorted (numpy's implicit mode); an explicit output without `...` while
//!   operands have broadcast axes is refused, as `numpy.einsum` refuses it.
//! - [`broadcast_layouts`] lets an axis of length 1 stand for any length its label has in
//!   another operand (stride 0 over the longer length). Within one operand a repeated label's
//!   lengths must agree.
//!
//! Both run when a plan is prepared, never on a cached plan's path: the plan's key is the spec
//! as written and the operands as given.

use holdfast_tensor::Dims;
use smallvec::SmallVec;

use super::parse::EinsumSpec;
use crate::KernelError;

/// The first private-use character tried for a fresh label.
const FRESH_START: u32 = 0xE000;

/// `spec` with every `...` replaced by fresh labels for operands of ranks `ranks`, or `None`
/// when it has no `.` at all.
pub(crate) fn expand_ellipsis(spec: &str, ranks: &[usize]) -> Result<Option<String>, KernelError> {
    if !spec.contains('.') {
        return Ok(None);
    }
    let malformed =
        |position, reason| KernelError::MalformedSpec { spec: spec.to_owned(), position, reason };
    let chars: Vec<char> = spec.chars().collect();
    let arrow = chars.windows(2).position(|w| w == ['-', '>']);
    let (lhs, rhs) = match arrow {
        Some(i) => (&chars[..i], Some((i + 2, &chars[i + 2..]))),
        None => (&chars[..], None),
    };
    // Each input term as (start position, characters).
    let mut terms: Vec<(usize, &[char])> = Vec::new();
    let mut start = 0;
    for (i, &c) in lhs.iter().enumerate() {
        if c == ',' {
            terms.push((start, &lhs[start..i]));
            start = i + 1;
        }
    }
    terms.push((start, &lhs[start..]));
    if terms.len() != ranks.len() {
        return Err(KernelError::OperandCount { expected: terms.len(), actual: ranks.len() });
    }
    // Per term: where its ellipsis is, and how many axes it stands for.
    let mut ellipses: Vec<Option<(usize, usize)>> = Vec::with_capacity(terms.len());
    for (operand, (&(at, term), &rank)) in terms.iter().zip(ranks).enumerate() {
        let dots = find_ellipsis(term).map_err(|(p, reason)| malformed(at + p, reason))?;
        let explicit = term.iter().filter(|c| !c.is_whitespace() && **c != '.').count();
        match dots {
            Some(p) if rank >= explicit => ellipses.push(Some((p, rank - explicit))),
            _ if rank == explicit || dots.is_none() => ellipses.push(None),
            _ => {
                return Err(KernelError::LabelRankMismatch {
                    operand,
                    term: term.iter().collect(),
                    labels: explicit,
                    rank,
                });
            }
        }
    }
    let broadcast = ellipses.iter().flatten().map(|&(_, n)| n).max().unwrap_or(0);
    let fresh: Vec<char> = (FRESH_START..)
        .filter_map(char::from_u32)
        .filter(|c| !chars.contains(c))
        .take(broadcast)
        .collect();
    let mut out = String::with_capacity(spec.len() + 4 * broadcast * (terms.len() + 1));
    for (k, (&(_, term), ellipsis)) in terms.iter().zip(&ellipses).enumerate() {
        if k > 0 {
            out.push(',');
        }
        match *ellipsis {
            Some((p, n)) => {
                out.extend(&term[..p]);
                out.extend(&fresh[broadcast - n..]);
                out.extend(&term[p + 3..]);
            }
            None => out.extend(term.iter().filter(|&&c| c != '.')),
        }
    }
    out.push_str("->");
    match rhs {
        Some((at, term)) => match find_ellipsis(term).map_err(|(p, r)| malformed(at + p, r))? {
            Some(p) => {
                out.extend(&term[..p]);
                out.extend(&fresh);
                out.extend(&term[p + 3..]);
            }
            None if broadcast > 0 => {
                return Err(malformed(
                    at,
                    "the operands have axes under '...' but the output has no '...' for them",
                ));
            }
            None => out.extend(term),
        },
        None => {
            // numpy's implicit output: the broadcast axes, then the labels seen once, sorted.
            out.extend(&fresh);
            let labels: Vec<char> = terms
                .iter()
                .flat_map(|(_, t)| t.iter().copied())
                .filter(|c| !c.is_whitespace() && *c != '.')
                .collect();
            let mut once: Vec<char> = labels
                .iter()
                .copied()
                .filter(|c| labels.iter().filter(|d| *d == c).count() == 1)
                .collect();
            once.sort_unstable();
            out.extend(once);
        }
    }
    Ok(Some(out))
}

/// The position of the one `...` of `term`, if any; an error for a second ellipsis or a `.`
/// outside one.
fn find_ellipsis(term: &[char]) -> Result<Option<usize>, (usize, &'static str)> {
    let mut found = None;
    let mut i = 0;
    while i < term.len() {
        if term[i] == '.' {
            if term.get(i..i + 3) != Some(&['.', '.', '.'][..]) {
                return Err((i, "'.' outside an ellipsis '...'"));
            }
            if found.is_some() {
                return Err((i, "more than one '...' in a term"));
            }
            found = Some(i);
            i += 3;
        } else {
            i += 1;
        }
    }
    Ok(found)
}

/// Operand layouts with every length-1 axis stretched (stride 0) to its label's length in the
/// other operands, or `None` when no axis needs it.
///
/// # Errors
///
/// [`KernelError::LabelDimensionMismatch`] for two lengths of one label that are neither equal
/// nor 1 (or unequal within one operand); [`KernelError::LabelRankMismatch`] for a term whose
/// length is not its operand's rank.
pub(crate) fn broadcast_layouts(
    spec: &EinsumSpec,
    layouts: &[(&[usize], &[usize])],
) -> Result<Option<Vec<(Dims, Dims)>>, KernelError> {
    let mut dims: Vec<Option<usize>> = vec![None; spec.labels().len()];
    let mut stretch = false;
    for (operand, (term, &(shape, _))) in spec.inputs().iter().zip(layouts).enumerate() {
        if term.len() != shape.len() {
            return Err(KernelError::LabelRankMismatch {
                operand,
                term: spec.term_string(term),
                labels: term.len(),
                rank: shape.len(),
            });
        }
        let mut own: SmallVec<[(u32, usize); 8]> = SmallVec::new();
        for (&l, &d) in term.iter().zip(shape) {
            let mismatch = |first| KernelError::LabelDimensionMismatch {
                label: spec.label(l),
                first,
                second: d,
                operand,
            };
            if let Some(&(_, first)) = own.iter().find(|(m, _)| *m == l)
                && first != d
            {
                return Err(mismatch(first));
            }
            own.push((l, d));
            dims[l as usize] = match dims[l as usize] {
                None => Some(d),
                Some(first) if first == d => Some(d),
                Some(1) => {
                    stretch = true;
                    Some(d)
                }
                Some(first) if d == 1 => {
                    stretch = true;
                    Some(first)
                }
                Some(first) => return Err(mismatch(first)),
            };
        }
    }
    if !stretch {
        return Ok(None);
    }
    let adjusted = spec
        .inputs()
        .iter()
        .zip(layouts)
        .map(|(term, &(shape, strides))| {
            let mut s: Dims = SmallVec::from_slice(shape);
            let mut st: Dims = SmallVec::from_slice(strides);
            for (axis, &l) in term.iter().enumerate() {
                let want = dims[l as usize].unwrap_or(s[axis]);
                if s[axis] == 1 && want != 1 {
                    s[axis] = want;
                    st[axis] = 0;
                }
            }
            (s, st)
        })
        .collect();
    Ok(Some(adjusted))
}
