//! Why a target is missed: each kind of target, recognised by its text, with the page of
//! `docs/perf/` that profiles what its time or memory is made of. The report lists every missed
//! target of its run with that page and the profile's finding, so that a miss never stands
//! without its explanation. A miss with no entry here is listed as having no profile yet.

use std::fmt::Write as _;

use super::targets::Verdict;

/// One kind of target and where its profile is.
pub(crate) struct Why {
    /// A text every target of this kind contains.
    key: &'static str,
    /// The pages under `docs/perf/` (each with its section, if any; separated by ", " or
    /// " and ") holding the profile.
    page: &'static str,
    /// What the profile found.
    finding: &'static str,
}

/// The kinds of target this report checks against peers, bounds and budgets, first match wins.
const WHY: &[Why] = &[
    Why {
        key: "fixed cost of a warm held",
        page: "2026-12-04-store-forwarding-fixed-cost.md (What remains), \
               2026-12-04-einsum-result-in-place.md and \
               2026-12-05-rows-cut-over-threads.md (The report at be5038e) and \
               2026-12-05-fixed-cost-observed-by-reference.md and \
               2026-12-05-einsum-matched-lookup.md and \
               2026-12-05-gemm-bind-one-word-merge.md and \
               2026-12-06-fixed-cost-on-zen4.md and \
               2026-12-06-inlined-pool-cycle.md",
        finding: "time-sampled with perf: a caller that moves the returned 160-byte tensor out \
                  of the slot the operation wrote it to pays a memmove whose wide loads wait \
                  for the operation's last stores to reach the cache (about 11 ns of a held 2x2 \
                  product's 52 ns); the bench now observes both sides' results by reference \
                  and no longer pays that move (same binary: held add 30.7 -> 26.1 ns, \
                  einsum 35.5 -> 27.9 ns). The copies inside the operation that did the same \
                  were removed: the output layout's copy, the pool's pop (2x2 product 62 -> 52 \
                  ns, add 40 -> 37), and the einsum's two copies between result types (85-89 -> \
                  76-78 ns, then 52-54 -> 47-49 ns on a faster machine) and the held \
                  product's one (f64 2x2 36-43 -> 33-35 ns), all side by side. The \
                  einsum compared its operands' axes twice, with the plan's key and in the \
                  plan's execution; it now runs the plan it matched without the second \
                  comparison (31.1 -> 24.9 ns, same machine, side by side). The held product's \
                  plan lookup returned its seven-word bound product from two paths, so the \
                  hit path stored it and the session read it back wider than written; the \
                  paths now meet on the plan's address (c64 2x2 26.6 -> 20.3 ns, f64 2x2 \
                  24.5 -> 19.8, side by side). The stack's offset within a page moves the \
                  held side by 3-8 ns from one process to the next (measured with `setarch -R` \
                  and a padded environment; most likely a stack slot sharing its low twelve \
                  address bits with a heap line the operation reads). A 128-byte \
                  tensor (four inline axes) measured 3-5 ns less but would allocate the \
                  layouts of rank-5 and rank-6 tensors. The \
                  rest is the entry, checks, route, plan lookup and the pool's accounting, a \
                  few dozen instructions each; `matmul_into` pays none of the move. On the Intel \
                  VM first measured at be5038e (faer's 2048³ rate 0.55 of the AMD VM's) every \
                  fixed cost grew by 1.3x to 1.6x, the bare kernels beside them too (a prepared \
                  4x4 product 13.7 -> 18.1 ns), with the held path's code unchanged. On the \
                  AMD Zen 4 VM of dd3974e the five processes agree within 1.6 ns (add 35.0, \
                  einsum 36.0 ns), so there the cost is the operations' own: callgrind counts \
                  579 (add) and 350 (einsum) instructions over the kernel, about 157 of them \
                  the pool's take and give, and perf puts 4.5-4.8 ns on the bench's move of \
                  the escaped result into `recycle`, whose wide loads wait for the narrower \
                  stores that wrote it (Zen 4 forwards a store only to a load inside it). \
                  7d4d988 inlined the pool's take and give as far as a held loop's hit and \
                  `recycle` whole, so the result is read where it lies, its buffer only: add \
                  25.1 and einsum 24.9 ns in the report at 7d4d988 on that VM (instructions \
                  618 -> 559 and 769 -> 708)",
    },
    Why {
        key: "GEMM-bound time",
        page: "2026-12-02-peers.md (The GEMM bound), \
               2026-12-05-faer-panels.md (What the shares are made of) and \
               2026-12-05-streamed-output-rows.md and \
               2026-12-05-mera-open-write-bandwidth.md",
        finding: "per-step timer on the Intel VM (one thread, warm, the bound at OpenBLAS's \
                  75.3 GFLOP/s of the report at d091a0c): mera_open's last step, 729 products \
                  `729×50 · 50×81`, took 102 ms against 57 at 7797227: its products 62 ms (69 \
                  GFLOP/s) and the copy of its 344 MB output out of their scratch 31 ms by \
                  8-byte non-temporal stores. Written a whole line per 64-byte store it takes \
                  97-99 ms; a C probe writes that band pattern in 24 ms, 15 without the \
                  partial lines at each 81-element row's ends, which the neighbouring \
                  products complete later (front to back 15 ms, by ordinary stores 48). Its \
                  `990×4620 · 4620×2187` takes 303 ms against 266: faer's rate on that shape \
                  (70 GFLOP/s) and a 10 M-element copy of `B` (20 ms, about 12 GB/s), whose \
                  labels interleave with the others in the producing step's output, so no \
                  GEMM layout of that step can hold it. Three memory-bound steps with k of 56, \
                  24 and 11 take 22 ms over their bounds. Non-temporal stores in that copy \
                  saved 6 ms but only at a size bound drawn around that one copy (at 16 MiB \
                  permutation_focus lost 6 %); what is left is a faster kernel than faer's on \
                  these shapes or not writing intermediates to memory. mera_closed's shares \
                  (77-81 %) are its `399×7290 · 7290×4320` at faer's rate with its copy, and a \
                  271 MB operand streamed by `40×171 · 171×198288`. faer's x86 kernels size \
                  their blocks from the cache sizes CPUID reports (a 480 MiB L3 here), so a \
                  single-threaded product is cut into 2 KiB panels along C's contiguous \
                  dimension. On the AMD VM of the earlier reports the shares were 85.9 % and \
                  90.0 %; they move with the measured DGEMM rate, which sets the bound, as \
                  much as with holdfast's time",
    },
    Why {
        key: "2 threads vs 1",
        page: "2026-12-04-gemm-blocks-two-threads.md, \
               2026-12-03-borrowed-views-fixed-cost.md (Two threads on mera_closed), \
               2026-12-05-gm-queen-two-threads.md, \
               2026-12-05-broadcast-chains-fused.md, \
               2026-12-05-consumer-ordered-copies.md, \
               2026-12-05-rows-cut-over-threads.md and \
               2026-12-06-two-threads-by-phase.md",
        finding: "a product that fans out is cut into one independent block of output rows or \
                  columns per thread, a batch of large items that does not divide over the \
                  threads deals whole items evenly and cuts the rest, and the blocks of a \
                  blocked copy, or the positions of a loop of products, too small to fan out \
                  are dealt over the threads; a loop whose positions interleave in C is cut \
                  into blocks of C's rows. gm_queen's broadcast chain, which streamed memory \
                  that the AMD VM's second core hardly added bandwidth to, is now one fused \
                  pass of arithmetic on cached factors (1.96x on its own); its largest steps \
                  scale by 1.83-1.96x. What is left below 2x on the four instances is \
                  memory-bound \
                  steps (permutation_light: 405 small steps of about 6 µs each, below every \
                  fan-out size, and a product streaming 64 MB) and the rounds' noise: the \
                  ratio is read from rounds in turn (one thread, then two, seconds apart), \
                  going round the instances, each round printed. On the AMD Zen 4 VM the \
                  same binary read permutation_light at 1.68-1.76x and, later, at 1.91-1.96x; \
                  in a quiet phase its steps lose 3.9 ms of 76.9 against a perfect halving. \
                  On the Intel VM first \
                  measured at be5038e mera_closed read 1.68-1.92x over the report's rounds and \
                  1.88-1.90x by hand; its largest loss is a batch of 216 products \
                  `540×136 · 136×270` writing 252 MB (1.72x, 13 ms of 459). mera_open's last \
                  step writes 344 MB in bands and is bound by memory at two threads: since \
                  845f4fd it streams its output past the cache, 114 -> 92 ms at one thread, \
                  63-76 -> 57-58 ms at two once its half-row products stream too (a748100 \
                  streamed only whole ones, and the report read 1.77x)",
    },
    Why {
        key: "resident peak",
        page: "2026-12-03-peak-memory.md",
        finding: "what is resident beyond the path's largest live set: operand copies into GEMM \
                  layout (now made block by block), the pool's retained buffers (freed before a \
                  request larger than its limit) and the allocator's heap",
    },
    Why {
        key: "geometric-mean speed-up over the per-instance best peer",
        page: "2026-12-02-peers.md (Who is the best peer where)",
        finding: "JAX fuses the language-model likelihoods' chains of small contractions; TBLIS \
                  packs strided operands straight into its GEMM panels where holdfast copies \
                  them",
    },
    Why {
        key: "none slower than the best of numpy, JAX and TBLIS",
        page: "2026-12-02-peers.md (Who is the best peer where) and \
               2026-12-05-thin-products-streamed.md",
        finding: "as for the geometric mean: per instance, the peer that leads and why. The \
                  matrix chain ran at parity with JAX (0.95x to 1.08x in four reports) while \
                  faer read each large transposed matrix across all its pages once per tile of \
                  the result; its thin products now stream that matrix in address order \
                  (matmul::thin), 1.74x JAX by hand",
    },
    Why {
        key: "none slower than numpy (quoted",
        page: "2026-11-29-first-measurements.md",
        finding: "the quoted medians were measured once, at another time; the same-run ratio \
                  against numpy is the row beside it",
    },
    Why {
        key: "DMRG",
        page: "2026-12-02-dmrg-tfim-costs.md, 2026-12-02-fixed-cost-and-dmrg.md (DMRG) and \
               2026-12-06-partial-eigh-for-the-split.md",
        finding: "on the AMD Zen 4 VM a run is 53 % Lanczos products (their GEMMs at faer's \
                  54-55 GFLOP/s), 35 % splits (the density matrix's eigendecomposition at n = \
                  128 alone 25 %) and 12 % environments. Computing only the kept eigenvectors \
                  saved 2-3 % and was not merged; faer's tridiagonal reduction is a floor \
                  under any eigensolver. The ratio to quimb moves with the machine's phase, \
                  quimb's own time included (7.4-8.1 s over five reports, holdfast 1.91-1.99 s)",
    },
];

/// The profile of the target described by `what`, if one is recorded.
pub(crate) fn why_of(what: &str) -> Option<&'static Why> {
    WHY.iter().find(|w| what.contains(w.key))
}

/// The report's section on missed targets: each with its profile's page and finding. Empty when
/// every measured target is met.
pub(crate) fn render(verdicts: &[Verdict]) -> String {
    let missed: Vec<&Verdict> = verdicts.iter().filter(|v| v.met == Some(false)).collect();
    let mut s = String::new();
    if missed.is_empty() {
        return s;
    }
    let _ = writeln!(s, "\n### Why the missed targets are missed\n");
    let _ = writeln!(
        s,
        "Each missed target of this run, with the page of `docs/perf/` that profiles it and what \
         the profile found.\n"
    );
    for v in missed {
        match why_of(&v.what) {
            Some(w) => {
                let _ = writeln!(s, "- **{}**: {}. `docs/perf/{}`.", v.what, w.finding, w.page);
            }
            None => {
                let _ = writeln!(s, "- **{}**: no profile recorded yet.", v.what);
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(what: &str, met: Option<bool>) -> Verdict {
        Verdict {
            issue: "peers".to_owned(),
            what: what.to_owned(),
            measured: "x".to_owned(),
            target: "y".to_owned(),
            met,
        }
    }

    #[test]
    fn every_missed_target_is_listed_with_its_page_or_as_unprofiled() {
        let s = render(&[
            verdict("fixed cost of a warm held f64 matmul 2x2 (held - prepared plan)", Some(false)),
            verdict("2 threads vs 1 on the four largest instances", Some(true)),
            verdict("something new", Some(false)),
            verdict("resident peak of holdfast einsum", None),
        ]);
        assert!(s.contains("2026-12-04-store-forwarding-fixed-cost.md"), "{s}");
        assert!(s.contains("**something new**: no profile recorded yet."), "{s}");
        assert!(!s.contains("2 threads"), "met targets are not listed: {s}");
        assert!(!s.contains("resident peak"), "unmeasured targets are not listed: {s}");
        assert!(render(&[verdict("a", Some(true))]).is_empty());
    }

    #[test]
    fn every_page_exists() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/perf");
        for w in WHY {
            for page in w.page.split(" and ").flat_map(|p| p.split(", ")) {
                let file = page.split(" (").next().unwrap_or(page);
                assert!(root.join(file).is_file(), "docs/perf/{file} (for \"{}\")", w.key);
            }
        }
    }
}
