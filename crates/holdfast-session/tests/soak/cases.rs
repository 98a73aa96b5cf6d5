//! The soak's random operations: every operation family of the view (SPEC §7) on random shapes,
//! including strided inputs, broadcasting, batched GEMM, einsum with and without a path, and
//! child entries, each with a reference result to check against.

use holdfast_session::{CpuExecSession, Tensor, TensorRead};
use holdfast_tensor::Layout;

use super::reference::{self, Expected};
use super::rng::Rng;

/// Elementwise binary kinds.
#[derive(Debug, Clone, Copy)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Div,
}

/// One operation and its inputs.
#[derive(Debug)]
pub enum Op {
    Binary(Binary, Tensor<f64>, Tensor<f64>),
    Scale(Tensor<f64>, f64),
    Sum(Tensor<f64>, Vec<usize>),
    Permute(Tensor<f64>, Vec<usize>),
    /// `a · b`; with `transposed`, `a` is stored `[k, m]` and read through a transposed view.
    Matmul {
        a: Tensor<f64>,
        b: Tensor<f64>,
        transposed: bool,
    },
    /// `a · b` into a caller-owned output of the given shape.
    MatmulInto(Tensor<f64>, Tensor<f64>, Vec<usize>),
    Einsum {
        spec: &'static str,
        operands: Vec<Tensor<f64>>,
        path: Option<Vec<(usize, usize)>>,
    },
    /// `inner`, run in a child entry derived from the view (joins the owner, never waits).
    Child(Box<Case>),
}

/// An operation with its expected result.
#[derive(Debug)]
pub struct Case {
    pub name: String,
    pub op: Op,
    pub expected: Expected,
}

/// Einsum instances: the spec the view runs, and the explicit spec of the reference.
const EINSUM: &[(&str, &str)] = &[
    ("ij,jk->ik", "ij,jk->ik"),
    ("ij,jk", "ij,jk->ik"),
    ("ij->ji", "ij->ji"),
    ("ii->", "ii->"),
    ("ii->i", "ii->i"),
    ("iij->j", "iij->j"),
    ("ij,ij->", "ij,ij->"),
    ("ij,ij->ij", "ij,ij->ij"),
    ("i,j->ij", "i,j->ij"),
    ("ijk,kl->ijl", "ijk,kl->ijl"),
    ("bij,bjk->bik", "bij,bjk->bik"),
    ("ijk->kji", "ijk->kji"),
    ("ij,kj->ik", "ij,kj->ik"),
    ("αβ,βγ->γα", "αβ,βγ->γα"),
    ("ij,jk,kl->il", "ij,jk,kl->il"),
    ("i,ij,j->", "i,ij,j->"),
    ("ab,bc,cd,de->ae", "ab,bc,cd,de->ae"),
];

fn tensor(rng: &mut Rng, shape: &[usize]) -> Tensor<f64> {
    let n = shape.iter().product();
    Tensor::from_vec(shape.to_vec(), rng.values(n)).expect("valid shape")
}

fn data(t: &Tensor<f64>) -> Vec<f64> {
    t.read().to_vec()
}

/// Knobs of the random mix.
#[derive(Debug, Clone, Copy)]
pub struct Mix {
    /// Per mille of matrix products that are large enough to fan out over the pool.
    pub large_per_mille: u32,
    /// Per mille of operations run in a child entry.
    pub child_per_mille: u32,
}

impl Case {
    /// A random case.
    pub fn random(rng: &mut Rng, mix: Mix) -> Case {
        if rng.chance(mix.child_per_mille) {
            let inner = Case::plain(rng, mix);
            let expected = inner.expected.clone();
            return Case {
                name: format!("child({})", inner.name),
                op: Op::Child(Box::new(inner)),
                expected,
            };
        }
        Case::plain(rng, mix)
    }

    fn plain(rng: &mut Rng, mix: Mix) -> Case {
        match rng.below(10) {
            0 | 1 => Case::binary(rng),
            2 => {
                let shape = [rng.range(1, 5), rng.range(1, 5)];
                let a = tensor(rng, &shape);
                let alpha = rng.unit() * 4.0;
                let expected = reference::scale(&shape, &data(&a), alpha);
                Case { name: format!("scale{shape:?}"), op: Op::Scale(a, alpha), expected }
            }
            3 => Case::sum_or_permute(rng),
            4..=6 => Case::matmul(rng, mix),
            _ => Case::einsum(rng),
        }
    }

    fn binary(rng: &mut Rng) -> Case {
        let (m, n) = (rng.range(1, 6), rng.range(1, 6));
        let kind = *rng.pick(&[Binary::Add, Binary::Sub, Binary::Mul, Binary::Div]);
        let b_shape: Vec<usize> = match rng.below(5) {
            0 => vec![m, n],
            1 => vec![n],
            2 => vec![m, 1],
            3 => vec![1, n],
            _ => vec![],
        };
        let a = tensor(rng, &[m, n]);
        let b_len = b_shape.iter().product();
        let mut b_vals = rng.values(b_len);
        if matches!(kind, Binary::Div) {
            // Keep divisors away from zero: the check compares finite values.
            b_vals.iter_mut().for_each(|x| *x = 0.5 + x.abs());
        }
        let b = Tensor::from_vec(b_shape.clone(), b_vals).expect("valid shape");
        let f: fn(f64, f64) -> f64 = match kind {
            Binary::Add => |x, y| x + y,
            Binary::Sub => |x, y| x - y,
            Binary::Mul => |x, y| x * y,
            Binary::Div => |x, y| x / y,
        };
        let expected = reference::binary((&[m, n], &data(&a)), (&b_shape, &data(&b)), f);
        Case {
            name: format!("{kind:?}[{m}, {n}]x{b_shape:?}"),
            op: Op::Binary(kind, a, b),
            expected,
        }
    }

    fn sum_or_permute(rng: &mut Rng) -> Case {
        let rank = rng.range(1, 3);
        let shape: Vec<usize> = (0..rank).map(|_| rng.range(1, 5)).collect();
        let a = tensor(rng, &shape);
        let labels = ['a', 'b', 'c'];
        let input: String = labels[..rank].iter().collect();
        if rng.chance(500) {
            let axes: Vec<usize> = (0..rank).filter(|_| rng.chance(500)).collect();
            let output: String =
                (0..rank).filter(|i| !axes.contains(i)).map(|i| labels[i]).collect();
            let expected = reference::einsum(&format!("{input}->{output}"), &[(&shape, &data(&a))]);
            Case { name: format!("sum{shape:?} over {axes:?}"), op: Op::Sum(a, axes), expected }
        } else {
            let perm = rng.permutation(rank);
            let output: String = perm.iter().map(|&p| labels[p]).collect();
            let expected = reference::einsum(&format!("{input}->{output}"), &[(&shape, &data(&a))]);
            Case {
                name: format!("permute{shape:?} by {perm:?}"),
                op: Op::Permute(a, perm),
                expected,
            }
        }
    }

    fn matmul(rng: &mut Rng, mix: Mix) -> Case {
        let large = rng.chance(mix.large_per_mille);
        let dim = |rng: &mut Rng| if large { rng.range(96, 144) } else { rng.range(1, 8) };
        let (m, k, n) = (dim(rng), dim(rng), dim(rng));
        match rng.below(4) {
            0 => {
                // Batched 3-D.
                let batch = rng.range(1, 3);
                let (m, k, n) = (m.min(8), k.min(8), n.min(8));
                let a = tensor(rng, &[batch, m, k]);
                let b = tensor(rng, &[batch, k, n]);
                let expected = reference::einsum(
                    "bij,bjk->bik",
                    &[(&[batch, m, k], &data(&a)), (&[batch, k, n], &data(&b))],
                );
                let name = format!("matmul[{batch}, {m}, {k}]x[{batch}, {k}, {n}]");
                Case { name, op: Op::Matmul { a, b, transposed: false }, expected }
            }
            1 => {
                let a = tensor(rng, &[m, k]);
                let b = tensor(rng, &[k, n]);
                let expected = reference::matmul(m, k, n, &data(&a), &data(&b));
                let name = format!("matmul_into[{m}, {k}]x[{k}, {n}]");
                Case { name, op: Op::MatmulInto(a, b, vec![m, n]), expected }
            }
            2 => {
                let stored = tensor(rng, &[k, m]);
                let b = tensor(rng, &[k, n]);
                let a_logical = transposed_view(&stored).to_vec();
                let expected = reference::matmul(m, k, n, &a_logical, &data(&b));
                let name = format!("matmul[{m}, {k}]ᵀx[{k}, {n}]");
                Case { name, op: Op::Matmul { a: stored, b, transposed: true }, expected }
            }
            _ => {
                let a = tensor(rng, &[m, k]);
                let b = tensor(rng, &[k, n]);
                let expected = reference::matmul(m, k, n, &data(&a), &data(&b));
                let name = format!("matmul[{m}, {k}]x[{k}, {n}]");
                Case { name, op: Op::Matmul { a, b, transposed: false }, expected }
            }
        }
    }

    fn einsum(rng: &mut Rng) -> Case {
        let &(spec, explicit) = rng.pick(EINSUM);
        let (inputs, _) = explicit.split_once("->").expect("explicit");
        let mut labels: Vec<(char, usize)> = Vec::new();
        let mut shapes = Vec::new();
        for term in inputs.split(',') {
            let mut shape = Vec::new();
            for c in term.chars() {
                let d = match labels.iter().find(|(l, _)| *l == c) {
                    Some(&(_, d)) => d,
                    None => {
                        let d = rng.range(1, 4);
                        labels.push((c, d));
                        d
                    }
                };
                shape.push(d);
            }
            shapes.push(shape);
        }
        let operands: Vec<Tensor<f64>> = shapes.iter().map(|s| tensor(rng, s)).collect();
        let datas: Vec<Vec<f64>> = operands.iter().map(data).collect();
        let refs: Vec<(&[usize], &[f64])> =
            shapes.iter().zip(&datas).map(|(s, d)| (s.as_slice(), d.as_slice())).collect();
        let expected = reference::einsum(explicit, &refs);
        let path =
            (operands.len() >= 2 && rng.chance(500)).then(|| random_path(rng, operands.len()));
        let name = format!("einsum {spec} {shapes:?} path {path:?}");
        Case { name, op: Op::Einsum { spec, operands, path }, expected }
    }

    /// Runs the operation on `v`.
    pub fn run(&self, v: &mut CpuExecSession<'_>) -> Result<Tensor<f64>, String> {
        let e = |e: holdfast_session::OpError| format!("{}: {e}", self.name);
        match &self.op {
            Op::Binary(kind, a, b) => match kind {
                Binary::Add => v.add(a.read(), b.read()),
                Binary::Sub => v.sub(a.read(), b.read()),
                Binary::Mul => v.mul(a.read(), b.read()),
                Binary::Div => v.div(a.read(), b.read()),
            }
            .map_err(e),
            Op::Scale(a, alpha) => v.scale(a.read(), *alpha).map_err(e),
            Op::Sum(a, axes) => v.sum(a.read(), axes).map_err(e),
            Op::Permute(a, perm) => v.permute(a.read(), perm).map_err(e),
            Op::Matmul { a, b, transposed } => {
                let a = if *transposed { transposed_view(a) } else { a.read() };
                v.matmul(a, b.read()).map_err(e)
            }
            Op::MatmulInto(a, b, shape) => {
                let mut out = Tensor::zeros(shape.clone());
                v.matmul_into(a.read(), b.read(), &mut out).map_err(e)?;
                Ok(out)
            }
            Op::Einsum { spec, operands, path } => {
                let reads: Vec<TensorRead<'_, f64>> = operands.iter().map(Tensor::read).collect();
                match path {
                    Some(path) => v.einsum_with_path(spec, &reads, path),
                    None => v.einsum(spec, &reads),
                }
                .map_err(e)
            }
            Op::Child(inner) => {
                let child = v.child_execution();
                child
                    .with_backend_session(|cv| inner.run(cv))
                    .map_err(|err| format!("{}: child entry refused: {err}", self.name))?
            }
        }
    }

    /// Runs the operation and checks its result.
    pub fn run_checked(&self, v: &mut CpuExecSession<'_>) -> Result<Tensor<f64>, String> {
        let out = self.run(v)?;
        self.expected.check(&self.name, out.shape(), &out.read().to_vec())?;
        Ok(out)
    }
}

/// A random opt_einsum-format path for `n` operands.
fn random_path(rng: &mut Rng, n: usize) -> Vec<(usize, usize)> {
    let mut path = Vec::new();
    for count in (2..=n).rev() {
        let i = rng.below(count);
        let mut j = rng.below(count - 1);
        if j >= i {
            j += 1;
        }
        path.push((i.min(j), i.max(j)));
    }
    path
}

/// `t` (stored `[k, m]`) read as its transpose `[m, k]`, through strides (no copy).
fn transposed_view(t: &Tensor<f64>) -> TensorRead<'_, f64> {
    let layout = Layout::contiguous(t.shape())
        .and_then(|l| l.permuted(&[1, 0]))
        .expect("a rank-2 layout transposes");
    TensorRead::from_layout(t.as_slice(), layout).expect("the layout fits its storage")
}
