//! The grid barrier, run and checked: the article's X→P→X iteration with every kernel of
//! `gpu/src/lessons/barrier.rs`, one launch against many, and where the broken ones go wrong.
//!
//! Source: the article on synchronizing all threads of a grid (ru): 2 blocks × 64 threads,
//! `W = 128`, 100 iterations; without a barrier `X` goes wrong in runs of 32 elements, with
//! `sync_threads` only in whole blocks; one launch with a barrier (SKL) against two launches per
//! iteration (MKL), timed against the number of blocks.
//!
//! Every variant starts from the same `X₀` and is compared with [`xpx_cpu`], the same
//! arithmetic in the same order on the CPU: the correct ones must give the same bits. The
//! float64 reference ([`xpx_cpu_f64`]) says how far `f32` rounding alone moves the result.

mod run;

pub use run::{
    BarrierOptions, BarrierReport, MAX_ITERATIONS, MAX_LEN, MAX_REPEATS, VariantRun, run,
    run_variant,
};

use serde::Serialize;

/// The article's grid: 2 blocks of 64 threads.
pub const SOURCE_BLOCKS: u32 = 2;
/// The article's block size.
pub const SOURCE_THREADS: u32 = 64;
/// The article's `N`: 128 values of `X` and of `P`.
pub const SOURCE_LEN: usize = 128;
/// The article's 100 iterations per measurement.
pub const SOURCE_ITERATIONS: u32 = 100;
/// The seed of `X₀`.
pub const DEFAULT_SEED: u64 = 0x6261_7272_6965_7200;

/// How the two stages of an iteration are kept apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Variant {
    /// Two kernels per iteration, queued by the host: the end of a kernel is the barrier.
    ManyLaunches,
    /// The same kernels, captured once as a CUDA graph and launched as one.
    Graph,
    /// One launch, [`gpu::grid::GridBarrier`] between the stages.
    GridBarrier,
    /// One cooperative launch (`cuLaunchCooperativeKernel`), the same barrier.
    Cooperative,
    /// The article's counter barrier with the `volatile` spin: right at one barrier; reused, a
    /// waiter can miss the counter's brief zero and wait until the timeout.
    Article,
    /// No barrier: wrong in runs of a warp.
    NoBarrier,
    /// `sync_threads` only: wrong in runs of a block.
    SyncThreads,
    /// The article's counter spinning on a plain load, which the compiler hoists.
    PlainSpin,
    /// A counter that never resets: right once, then lets every block through.
    CountToN,
}

impl Variant {
    /// Every variant, the correct ones first.
    pub const ALL: [Variant; 9] = [
        Variant::ManyLaunches,
        Variant::Graph,
        Variant::GridBarrier,
        Variant::Cooperative,
        Variant::Article,
        Variant::NoBarrier,
        Variant::SyncThreads,
        Variant::PlainSpin,
        Variant::CountToN,
    ];

    /// The short name the CLI prints.
    pub const fn name(self) -> &'static str {
        match self {
            Variant::ManyLaunches => "many launches",
            Variant::Graph => "CUDA graph",
            Variant::GridBarrier => "GridBarrier",
            Variant::Cooperative => "GridBarrier, cooperative",
            Variant::Article => "article's counter",
            Variant::NoBarrier => "no barrier",
            Variant::SyncThreads => "sync_threads only",
            Variant::PlainSpin => "plain-load spin",
            Variant::CountToN => "counter, no reset",
        }
    }

    /// The kernel(s) it runs.
    pub const fn kernel(self) -> &'static str {
        match self {
            Variant::ManyLaunches | Variant::Graph => "xpx_stage_p + xpx_stage_x",
            Variant::GridBarrier | Variant::Cooperative => "xpx_grid_barrier",
            Variant::Article => "xpx_article",
            Variant::NoBarrier => "xpx_no_barrier",
            Variant::SyncThreads => "xpx_sync_threads",
            Variant::PlainSpin => "xpx_plain_spin",
            Variant::CountToN => "xpx_count_to_n",
        }
    }

    /// Whether it must give the CPU's bits. The others may, by luck of timing, and are shown
    /// going wrong where they do.
    pub const fn correct(self) -> bool {
        matches!(
            self,
            Variant::ManyLaunches | Variant::Graph | Variant::GridBarrier | Variant::Cooperative
        )
    }

    /// Whether it needs a GPU (the graph and the cooperative launch are driver features).
    pub const fn gpu_only(self) -> bool {
        matches!(self, Variant::Graph | Variant::Cooperative)
    }
}

/// `X₀`: `w` values uniform in [-1, 1), the same for a seed on every machine.
pub fn initial_x(w: usize, seed: u64) -> Vec<f32> {
    crate::inputs::uniform_f32(w, seed, -1.0, 1.0)
}

/// One stage on the CPU, exactly as the kernels compute it: `out[j] = src[perm(j)] − Σsrc / W`
/// with the sum in `f32`, in index order.
fn stage_cpu(src: &[f32], out: &mut [f32], perm: impl Fn(usize) -> usize) {
    let w = src.len();
    let mut a = 0.0f32;
    for v in src {
        a += v;
    }
    let mean = a / w as f32;
    for (j, o) in out.iter_mut().enumerate() {
        *o = src[perm(j)] - mean;
    }
}

/// `iterations` rounds of X→P→X on the CPU in `f32`, the kernels' operations in the kernels'
/// order: what every correct variant must reproduce bit for bit.
pub fn xpx_cpu(x0: &[f32], iterations: u32) -> Vec<f32> {
    let w = x0.len();
    let mut x = x0.to_vec();
    let mut p = vec![0.0f32; w];
    for _ in 0..iterations {
        stage_cpu(&x, &mut p, |j| w - 1 - j);
        stage_cpu(&p, &mut x, |j| (j + 1) % w);
    }
    x
}

/// The same iteration in `f64`: the exact answer the `f32` one approximates.
pub fn xpx_cpu_f64(x0: &[f32], iterations: u32) -> Vec<f64> {
    let w = x0.len();
    let mut x: Vec<f64> = x0.iter().map(|&v| v as f64).collect();
    let mut p = vec![0.0f64; w];
    for _ in 0..iterations {
        let mean = x.iter().sum::<f64>() / w as f64;
        for j in 0..w {
            p[j] = x[w - 1 - j] - mean;
        }
        let mean = p.iter().sum::<f64>() / w as f64;
        for j in 0..w {
            x[j] = p[(j + 1) % w] - mean;
        }
    }
    x
}

/// A run of consecutive wrong elements: `[start, start + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WrongRun {
    /// The first wrong index.
    pub start: usize,
    /// How many in a row.
    pub len: usize,
}

/// The indices where `got` and `want` differ in their bits, as runs of consecutive indices.
pub fn wrong_runs(got: &[f32], want: &[f32]) -> Vec<WrongRun> {
    let mut runs: Vec<WrongRun> = Vec::new();
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.to_bits() == w.to_bits() {
            continue;
        }
        match runs.last_mut() {
            Some(r) if r.start + r.len == i => r.len += 1,
            _ => runs.push(WrongRun { start: i, len: 1 }),
        }
    }
    runs
}

/// The largest `|got − exact|` over the largest `|exact|`: the `f32` iteration's error.
pub fn rel_error(got: &[f32], exact: &[f64]) -> f64 {
    let scale = exact
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()))
        .max(f64::MIN_POSITIVE);
    got.iter()
        .zip(exact)
        .map(|(&g, &e)| (g as f64 - e).abs())
        .fold(0.0, f64::max)
        / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_iteration_moves_every_value_and_stays_near_the_f64_one() {
        let x0 = initial_x(128, DEFAULT_SEED);
        let x = xpx_cpu(&x0, 100);
        let exact = xpx_cpu_f64(&x0, 100);
        assert!(rel_error(&x, &exact) < 1e-4, "{}", rel_error(&x, &exact));
        // No fixed point: one more iteration changes the values.
        let y = xpx_cpu(&x0, 101);
        assert!(wrong_runs(&y, &x).iter().map(|r| r.len).sum::<usize>() > 100);
    }

    #[test]
    fn wrong_elements_come_as_runs() {
        let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b = [1.0f32, 0.0, 0.0, 4.0, 0.0, 6.0];
        assert_eq!(
            wrong_runs(&a, &b),
            [WrongRun { start: 1, len: 2 }, WrongRun { start: 4, len: 1 }]
        );
        assert!(wrong_runs(&a, &a).is_empty());
    }
}
