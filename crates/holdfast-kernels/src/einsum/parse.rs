//! Parsing of einsum specifications into label ids ([`parse`], [`EinsumSpec`]).
//!
//! Grammar (numpy's, with each `...` already expanded by the planner, so `.` is refused here):
//! input terms separated by `,`, then optionally `->` and the
//! output term. A label is any Unicode character except `,`, `-`, `>` and white space; white
//! space is ignored. Without `->` the output is every label that appears exactly once, in
//! code-point order (numpy's implicit mode). Labels get dense ids in order of first appearance.

use smallvec::SmallVec;

use crate::KernelError;

/// The labels of one term, as ids into [`EinsumSpec::labels`].
pub type Term = SmallVec<[u32; 8]>;

/// A parsed einsum specification.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::einsum::parse;
///
/// let spec = parse("ij,jk")?; // implicit output: "ik"
/// assert_eq!(spec.num_inputs(), 2);
/// assert_eq!(spec.output_string(), "ik");
/// assert_eq!(spec.labels(), &['i', 'j', 'k']);
/// # Ok::<(), holdfast_kernels::KernelError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EinsumSpec {
    inputs: Vec<Term>,
    output: Term,
    labels: Vec<char>,
}

impl EinsumSpec {
    /// Number of input terms (operands).
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// The input terms.
    pub fn inputs(&self) -> &[Term] {
        &self.inputs
    }

    /// The output term (explicit, or derived in implicit mode).
    pub fn output(&self) -> &[u32] {
        &self.output
    }

    /// The label characters, indexed by id.
    pub fn labels(&self) -> &[char] {
        &self.labels
    }

    /// The character of label `id`.
    pub fn label(&self, id: u32) -> char {
        self.labels.get(id as usize).copied().unwrap_or('?')
    }

    /// A term written back as a string.
    pub fn term_string(&self, term: &[u32]) -> String {
        term.iter().map(|&l| self.label(l)).collect()
    }

    /// The output term as a string.
    pub fn output_string(&self) -> String {
        self.term_string(&self.output)
    }
}

/// Parses an einsum specification.
///
/// # Errors
///
/// [`KernelError::MalformedSpec`] for a stray `-` or `>`, a second `->`, a `,` in the output, or
/// ASCII punctuation or a control character as a label (numpy's labels are `a-z` and `A-Z`;
/// the symbols opt_einsum and the einsum-benchmark instances use past those, digits and
/// non-ASCII characters, are accepted too);
/// [`KernelError::UnknownOutputLabel`] and [`KernelError::RepeatedOutputLabel`] for a bad output.
///
/// # Examples
///
/// ```
/// use holdfast_kernels::{KernelError, einsum::parse};
///
/// let spec = parse("ëÑ,Ñ0->ë0")?;
/// assert_eq!(spec.output_string(), "ë0");
/// assert!(matches!(parse("i%j"), Err(KernelError::MalformedSpec { position: 1, .. })));
/// assert!(matches!(parse("ij-k"), Err(KernelError::MalformedSpec { position: 2, .. })));
/// assert!(matches!(parse("ij->z"), Err(KernelError::UnknownOutputLabel { label: 'z' })));
/// # Ok::<(), KernelError>(())
/// ```
pub fn parse(spec: &str) -> Result<EinsumSpec, KernelError> {
    let malformed =
        |position, reason| KernelError::MalformedSpec { spec: spec.to_owned(), position, reason };
    let mut labels: Vec<char> = Vec::new();
    let mut inputs: Vec<Term> = vec![Term::new()];
    let mut output: Option<Term> = None;
    let mut chars = spec.chars().enumerate().peekable();
    while let Some((pos, c)) = chars.next() {
        match c {
            ',' if output.is_some() => return Err(malformed(pos, "',' in the output term")),
            ',' => inputs.push(Term::new()),
            '-' => match chars.next() {
                Some((_, '>')) if output.is_none() => output = Some(Term::new()),
                Some((_, '>')) => return Err(malformed(pos, "more than one '->'")),
                _ => return Err(malformed(pos, "'-' not followed by '>'")),
            },
            '>' => return Err(malformed(pos, "'>' without '-'")),
            '.' => return Err(malformed(pos, "'.' outside an ellipsis '...'")),
            c if c.is_whitespace() => {}
            c if c.is_ascii_punctuation() || c.is_ascii_control() => {
                return Err(malformed(pos, "not a label: labels are letters, digits or non-ASCII"));
            }
            c => {
                let id = match labels.iter().position(|&l| l == c) {
                    Some(i) => i,
                    None => {
                        labels.push(c);
                        labels.len() - 1
                    }
                };
                let id = u32::try_from(id).map_err(|_| malformed(pos, "too many labels"))?;
                match output.as_mut() {
                    Some(out) => out.push(id),
                    None => inputs.last_mut().map_or((), |t| t.push(id)),
                }
            }
        }
    }
    let mut count = vec![0usize; labels.len()];
    for &l in inputs.iter().flatten() {
        count[l as usize] += 1;
    }
    let output = match output {
        Some(out) => {
            let mut seen = vec![false; labels.len()];
            for &l in &out {
                if count[l as usize] == 0 {
                    return Err(KernelError::UnknownOutputLabel { label: labels[l as usize] });
                }
                if std::mem::replace(&mut seen[l as usize], true) {
                    return Err(KernelError::RepeatedOutputLabel { label: labels[l as usize] });
                }
            }
            out
        }
        None => {
            let mut once: Term = (0..labels.len())
                .filter(|&l| count[l] == 1)
                .filter_map(|l| u32::try_from(l).ok())
                .collect();
            once.sort_by_key(|&l| labels[l as usize]);
            once
        }
    };
    Ok(EinsumSpec { inputs, output, labels })
}
