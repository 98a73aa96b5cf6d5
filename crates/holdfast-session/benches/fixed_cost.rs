//! `fixed_cost`: the fixed cost of a warm held operation (SPEC N3): the held session's operation,
//! its output served by the pool and recycled, beside the same kernel writing into a
//! preallocated buffer, in one run at one thread.
//!
//! | case | kernel into a buffer | held |
//! |---|---|---|
//! | `add2_f64` | the two sums written into a caller slice | `add` of two 2-element tensors |
//! | `matmul{2,4}_{f64,c64}` | a prepared `MatmulPlan::execute_into` | `matmul` |
//! | `einsum_ij_jk_4_f64` | the same prepared 4 × 4 product | `einsum("ij,jk->ik")` |
//!
//! Both sides observe their result by reference, `black_box(&out)` and `black_box(&result)`, so
//! neither pays a copy of it: passing the returned `Result` by value to `black_box` would move
//! the 160-byte tensor into a new stack slot, a `memcpy` whose wide loads wait for the
//! operation's last stores, which the kernel side does not pay. (A caller pays that move only
//! where its compiled code copies the tensor out of the slot the operation wrote it to.)
//!
//! Each case runs as `fixed_cost/<case>/kernel/R` and `fixed_cost/<case>/held/R`, back to back,
//! `R` = 1 to 5; `cargo xtask bench-report` takes the median of the five differences, so a drift
//! of this shared machine's speed between two measurements does not decide it. It runs each `R`
//! in a process of its own (criterion filter `/R$`): the held side moves by a few nanoseconds
//! with where the kernel places the process's stack, so one process's placement does not decide
//! it either.
//!
//! Run: `cargo bench -p holdfast-session --bench fixed_cost`.
#![allow(clippy::unwrap_used, reason = "benchmark setup: a failure should stop the run loudly")]

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime,
};
use holdfast_kernels::Par;
use holdfast_kernels::matmul::MatmulPlan;
use holdfast_session::{CpuBackend, CpuHeldSession, Element, Tensor, c64};

/// Side-by-side repetitions of each (kernel, held) pair.
const REPETITIONS: usize = 5;

fn square<T: Element>(n: usize, of: impl Fn(usize) -> T) -> Tensor<T> {
    Tensor::from_vec([n, n], (0..n * n).map(of).collect()).unwrap()
}

/// The pairs of one case: `kernel` into a buffer, then `held` through the session.
fn pairs(
    g: &mut BenchmarkGroup<'_, WallTime>,
    case: &str,
    mut kernel: impl FnMut(),
    mut held: impl FnMut(),
) {
    for rep in 1..=REPETITIONS {
        g.bench_function(format!("{case}/kernel/{rep}"), |b| b.iter(&mut kernel));
        g.bench_function(format!("{case}/held/{rep}"), |b| b.iter(&mut held));
    }
}

/// A prepared product of two `n × n` matrices into a buffer against the held session's
/// `matmul`, or its `einsum("ij,jk->ik")` when `einsum` is set.
fn product_case<T: Element>(
    g: &mut BenchmarkGroup<'_, WallTime>,
    session: &mut CpuHeldSession<'_>,
    case: &str,
    (n, einsum): (usize, bool),
    of: impl Fn(usize) -> T,
) {
    let (a, b) = (square(n, &of), square(n, |i| of(i + 1)));
    let mut out = Tensor::<T>::zeros([n, n]);
    let plan = MatmulPlan::new(a.layout(), b.layout()).unwrap();
    let kernel = || {
        plan.execute_into(&black_box(&a).read(), &b.read(), &mut out, Par::Seq).unwrap();
        black_box(&out);
    };
    let held = || {
        session.with_session(|v| {
            let (a, b) = (black_box(&a).read(), b.read());
            let c = if einsum { v.einsum("ij,jk->ik", &[a, b]) } else { v.matmul(a, b) };
            black_box(&c);
            v.recycle(c.unwrap());
        });
    };
    pairs(g, case, kernel, held);
}

fn fixed_cost(c: &mut Criterion) {
    let backend = CpuBackend::builder().threads(1).private_arbiter().build().unwrap();
    let mut session = backend.open_session().unwrap();
    let mut g = c.benchmark_group("fixed_cost");
    g.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(1));

    let (x, y) = (
        Tensor::from_vec([2], vec![1.0f64, 2.0]).unwrap(),
        Tensor::from_vec([2], vec![3.0f64, 4.0]).unwrap(),
    );
    let mut sum = [0.0f64; 2];
    let kernel = || {
        let (x, y) = (black_box(&x).as_slice(), y.as_slice());
        sum.iter_mut().zip(x.iter().zip(y)).for_each(|(s, (p, q))| *s = p + q);
        black_box(&sum);
    };
    let held = || {
        session.with_session(|v| {
            let c = v.add(black_box(&x).read(), y.read());
            black_box(&c);
            v.recycle(c.unwrap());
        });
    };
    pairs(&mut g, "add2_f64", kernel, held);

    #[allow(clippy::cast_precision_loss, reason = "small indices")]
    let real = |i: usize| i as f64 * 0.25;
    #[allow(clippy::cast_precision_loss, reason = "small indices")]
    let complex = |i: usize| c64::new(i as f64 * 0.25, 1.0 - i as f64 * 0.125);
    product_case(&mut g, &mut session, "matmul2_f64", (2, false), real);
    product_case(&mut g, &mut session, "matmul4_f64", (4, false), real);
    product_case(&mut g, &mut session, "matmul2_c64", (2, false), complex);
    product_case(&mut g, &mut session, "matmul4_c64", (4, false), complex);
    product_case(&mut g, &mut session, "einsum_ij_jk_4_f64", (4, true), real);
    g.finish();
    session.close().unwrap();
}

criterion_group!(benches, fixed_cost);
criterion_main!(benches);
