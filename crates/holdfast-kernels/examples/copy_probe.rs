//! Times the strided copy (`permute` of a view, pooled output) on a few layouts that pick its
//! different paths: mera_open's largest copies (many axes, huge source strides), a brackets
//! instance's copy (4×4 transposed panels under a long batch axis), small and large
//! transposes, permutation_focus's copies (many legs of dimension 2). Prints the median of 21
//! runs per layout. The source is allocated as the engine allocates operands (advised for huge
//! pages), so that the copy's TLB behaviour is the one einsum sees. An argument keeps only the
//! layouts whose name contains it; a second one, a thread count, runs each copy at
//! `Par::Rayon(THREADS)` on rayon's global pool of that many threads, every copy fanned out.
//!
//! ```text
//! cargo build --profile bench -p holdfast-kernels --example copy_probe
//! target/release/examples/copy_probe [NAME] [THREADS]
//! ```

#![allow(clippy::unwrap_used, reason = "a measurement program, not a library")]
#![allow(clippy::print_stdout, reason = "a measurement program prints its results")]

#[path = "../tests/support/pool.rs"]
mod pool;

use std::time::Instant;

use std::num::NonZeroUsize;

use holdfast_kernels::{FanOut, HeapAlloc, KernelAlloc, Par, permute::permute};
use holdfast_tensor::{Layout, TensorRead};

fn main() {
    // (name, shape, source strides): the copy makes a dense row-major tensor of `shape`.
    let cases: [(&str, &[usize], &[usize]); 12] = [
        // mera_open's three largest operand copies (steps 24 and 18 of its opt_flops path).
        ("mera24", &[3, 9, 9, 9, 9, 9, 10, 5], &[729, 81, 9, 1, 2187, 19683, 885_735, 177_147]),
        ("mera18a", &[11, 9, 10, 7, 5, 6, 22], &[415_800, 6600, 660, 59400, 132, 22, 1]),
        (
            "mera18b",
            &[7, 5, 6, 22, 3, 9, 9, 9],
            &[198, 2_020_788, 12474, 1, 673_596, 74844, 1386, 22],
        ),
        ("brackets61", &[1996, 4, 4, 4, 4], &[16, 127_744, 1, 31_936, 4]),
        ("t16x16", &[2000, 16, 16], &[256, 1, 16]),
        ("t64", &[64, 64, 128], &[64, 1, 4096]),
        ("t4x4x", &[20_000, 4, 4], &[16, 1, 4]),
        ("t8x8", &[8000, 8, 8], &[64, 1, 8]),
        ("big_t", &[1024, 1024], &[1, 1024]),
        // permutation_focus's blocked copies: dimension-2 legs, the source's contiguous legs
        // scattered through the destination's order.
        (
            "perm21",
            &[2; 21],
            &[
                262_144, 2048, 4_194_304, 2, 8, 1_048_576, 131_072, 64, 4, 32, 256, 512, 1, 1024,
                4096, 8192, 16384, 65536, 8_388_608, 524_288, 2_097_152,
            ],
        ),
        (
            "perm13",
            &[2, 2, 2, 2, 2, 2, 2, 8, 16, 2, 4, 2, 4],
            &[16, 32, 262_144, 128, 131_072, 1024, 4, 524_288, 8192, 2048, 256, 64, 1],
        ),
        // permutation_light's largest copy: a sparse source (an eighth of a larger operand's
        // lines), 64-element destination blocks.
        (
            "plight17",
            &[2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 8, 8, 2, 2, 2],
            &[
                262_144, 2048, 4_194_304, 2, 8, 1_048_576, 131_072, 64, 8_388_608, 2_097_152,
                524_288, 65536, 4096, 256, 32, 4, 1,
            ],
        ),
    ];
    let filter = std::env::args().nth(1).unwrap_or_default();
    let threads = std::env::args().nth(2).and_then(|t| t.parse::<NonZeroUsize>().ok());
    let par = threads.map_or(Par::Seq, |n| Par::Rayon(n, &FanOut::ALWAYS));
    // The kernel fans out on the pool its caller installed, here rayon's global one.
    rayon::ThreadPoolBuilder::new().num_threads(par.threads()).build_global().unwrap();
    for (name, shape, strides) in cases {
        if !name.contains(filter.as_str()) {
            continue;
        }
        let n: usize = shape.iter().product();
        let span = 1 + shape.iter().zip(strides).map(|(d, s)| (d - 1) * s).sum::<usize>();
        let mut data: Vec<f64> = HeapAlloc.take(span);
        for (i, x) in data.iter_mut().enumerate() {
            #[allow(clippy::cast_precision_loss, reason = "distinct test values")]
            let value = i as f64;
            *x = value;
        }
        let view = TensorRead::from_layout(&data, Layout::new(shape, strides, 0).unwrap()).unwrap();
        let identity: Vec<usize> = (0..shape.len()).collect();
        let mut pooled = pool::PoolAlloc::default();
        let mut times = Vec::with_capacity(21);
        for _ in 0..21 {
            let t0 = Instant::now();
            let r = permute(view.clone(), &identity, &mut pooled, par).unwrap();
            times.push(t0.elapsed().as_secs_f64());
            pooled.give(std::hint::black_box(r).into_parts().0);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        #[allow(clippy::cast_precision_loss, reason = "a timing ratio")]
        let per = median * 1e9 / n as f64;
        println!("{name:12} {:8.3} ms {per:6.2} ns/elem", median * 1e3);
    }
}
