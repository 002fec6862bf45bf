//! The source's block-count sweep: the global and shared kernels at blocks = 32 × i, and why the
//! shared one slows down when given too many blocks — measured.
//!
//! Source: `for i in range(10, 1000, 5): blocks_per_grid = 32 * i`, 128 threads per block, 50
//! launches per point, a plot of both times against blocks on two y axes with a dashed line at
//! each minimum. The source explains the shared kernel's slow-down: its second phase, one global
//! atomic per bin per block, contends more as blocks are added. Here that is measured two ways
//! at every point: the number of those atomics (blocks × non-zero bins per block, counted
//! exactly on the host: [`flush_atomic_counts`]), and the time of `histogram_shared_rows`, the
//! same kernel with the atomics replaced by contention-free stores. What the shared kernel
//! loses that the instrument does not is the cost of the contended flush.

use crate::plot::{BLUE, ORANGE, RED, Series, TwoAxisChart};
use gpu::LaunchConfig;
use gpu::lessons::histogram::SOURCE_THREADS_PER_BLOCK;
use gridsync::histogram::{Bins, HistKernel, HistogramLaunch, check, histogram_cpu};
use gridsync::inputs::par_map_ranges;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use gridsync::runtime::stats::Stats;
use gridsync::runtime::timer::Timer;
use serde::Serialize;

/// The source's block counts, 32 × i for i in `range(10, 1000, step)` (the source's step is 5).
pub fn source_block_counts(step: u32) -> Vec<u32> {
    (10..1000)
        .step_by(step.max(1) as usize)
        .map(|i| 32 * i)
        .collect()
}

/// What [`sweep`] does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepOptions {
    /// Block counts to time, in order.
    pub blocks: Vec<u32>,
    /// Timed launches per kernel and block count (the source: 50); the median is kept.
    pub trials: u32,
    /// Bins.
    pub bins: Bins,
}

/// One block count.
#[derive(Clone, Debug, Serialize)]
pub struct SweepPoint {
    /// Blocks of 128 threads.
    pub blocks: u32,
    /// Median milliseconds of `histogram_global` (GPU only).
    pub global_ms: Option<f64>,
    /// Median milliseconds of `histogram_shared`.
    pub shared_ms: Option<f64>,
    /// Median milliseconds of `histogram_shared_rows` (the shared kernel without its atomics).
    pub shared_rows_ms: Option<f64>,
    /// Device atomics in the shared kernel's flush: Σ over blocks of the non-zero bins.
    pub flush_atomics: u64,
}

/// A kernel's fastest block count.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct SweepBest {
    /// Blocks.
    pub blocks: u32,
    /// Its median milliseconds.
    pub ms: f64,
}

/// The shared kernel between its best block count and the largest one, with the instrument
/// beside it: how much of its slow-down the contended flush explains.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct FlushContention {
    /// The shared kernel's best point.
    pub from: u32,
    /// The largest block count swept.
    pub to: u32,
    /// `histogram_shared` at `from` and `to`, ms.
    pub shared_ms: (f64, f64),
    /// `histogram_shared_rows` at `from` and `to`, ms.
    pub rows_ms: (f64, f64),
    /// Flush atomics at `from` and `to`.
    pub flush_atomics: (u64, u64),
    /// `shared_ms.1 - shared_ms.0`: how much slower the shared kernel got.
    pub shared_growth_ms: f64,
    /// `rows_ms.1 - rows_ms.0`: what the same kernel without the atomics gained.
    pub rows_growth_ms: f64,
    /// The time the atomics cost at `to`: `shared_ms.1 - rows_ms.1`, ms.
    pub flush_ms: f64,
    /// `flush_ms` per flush atomic at `to`, in ns.
    pub ns_per_flush_atomic: f64,
    /// `flush_ms` per block at `to`, in ns: the bins every block saw (the space, `e`) take one
    /// atomic per block, all on one address, so if those serialize this is the time of each.
    pub ns_per_block: f64,
}

/// What [`sweep`] found.
#[derive(Clone, Debug, Serialize)]
pub struct SweepReport {
    /// Where it ran.
    pub target: String,
    /// Where the input came from.
    pub input: String,
    /// Bytes.
    pub len: usize,
    /// Bins.
    pub bins: Bins,
    /// Threads per block (the source's 128).
    pub threads_per_block: u32,
    /// Timed launches per point.
    pub trials: u32,
    /// Every block count.
    pub points: Vec<SweepPoint>,
    /// `histogram_global`'s best (GPU only).
    pub best_global: Option<SweepBest>,
    /// `histogram_shared`'s best.
    pub best_shared: Option<SweepBest>,
    /// Why the shared kernel slows down (GPU only).
    pub contention: Option<FlushContention>,
}

/// The shared kernel's flush atomics at each of `blocks`: for a grid of `B` blocks of
/// `threads`, the grid-stride loop gives block `b` the `threads`-byte chunks `c` with
/// `c mod B = b`; a block adds each bin it saw once. Exact, from one bit set per chunk.
pub fn flush_atomic_counts(data: &[u8], threads: u32, bins: Bins, blocks: &[u32]) -> Vec<u64> {
    let threads = threads.max(1) as usize;
    let masks: Vec<[u64; 4]> = data
        .chunks(threads)
        .map(|c| {
            let mut m = [0u64; 4];
            for &b in c {
                m[b as usize / 64] |= 1 << (b % 64);
            }
            m
        })
        .collect();
    let keep = bins.count() as usize;
    par_map_ranges(blocks.len(), |r| {
        blocks[r]
            .iter()
            .map(|&grid| {
                let grid = grid.max(1) as usize;
                let mut seen = vec![[0u64; 4]; grid.min(masks.len())];
                for (c, m) in masks.iter().enumerate() {
                    let s = &mut seen[c % grid];
                    for w in 0..4 {
                        s[w] |= m[w];
                    }
                }
                seen.iter()
                    .map(|s| {
                        (0..keep)
                            .filter(|&b| s[b / 64] & (1 << (b % 64)) != 0)
                            .count() as u64
                    })
                    .sum()
            })
            .collect::<Vec<u64>>()
    })
    .into_iter()
    .flatten()
    .collect()
}

fn median(launch: &HistogramLaunch, timer: &mut Option<Timer>, trials: u32) -> Result<Option<f64>> {
    let mut ms = Vec::new();
    if timer.is_some() {
        for _ in 0..trials {
            ms.extend(launch.launch_timed(timer.as_mut())?);
        }
    }
    Ok(Stats::of(&ms).ok().map(|s| s.median))
}

/// Times `histogram_global`, `histogram_shared` and `histogram_shared_rows` at every block count
/// of `opts` (128 threads per block, as the source), each checked once against the CPU per
/// point. On the simulator nothing is timed (use a few small block counts there).
/// `progress` gets (points done, points).
///
/// # Errors
/// [`Error::InvalidInput`] for no block counts, a zero block count or zero trials;
/// [`Error::Mismatch`] if a kernel's histogram is wrong; a launch or driver error.
pub fn sweep(
    target: &Target,
    data: &[u8],
    input: &str,
    opts: &SweepOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<SweepReport> {
    if opts.blocks.is_empty() || opts.blocks.contains(&0) || opts.trials == 0 {
        return Err(Error::InvalidInput(
            "a sweep needs block counts, all positive, and at least one trial".into(),
        ));
    }
    let threads = SOURCE_THREADS_PER_BLOCK;
    let want = histogram_cpu(data, opts.bins);
    let flush = flush_atomic_counts(data, threads, opts.bins, &opts.blocks);
    let src = target.upload(data)?;
    let mut timer = Timer::on(target)?;
    let mut points = Vec::new();
    for (k, (&blocks, &flush_atomics)) in opts.blocks.iter().zip(&flush).enumerate() {
        let mut times = [None; 3];
        for (t, kernel) in [
            HistKernel::Global,
            HistKernel::Shared,
            HistKernel::SharedRows,
        ]
        .into_iter()
        .enumerate()
        {
            let shared = kernel.shared_bytes(opts.bins, threads);
            let cfg = LaunchConfig::linear(blocks, threads).with_shared_bytes(shared);
            let launch = HistogramLaunch::new(target, kernel, &src, data.len(), opts.bins, cfg)?;
            check(kernel, &launch.run()?, &want)?;
            times[t] = median(&launch, &mut timer, opts.trials)?;
        }
        points.push(SweepPoint {
            blocks,
            global_ms: times[0],
            shared_ms: times[1],
            shared_rows_ms: times[2],
            flush_atomics,
        });
        progress(k as u32 + 1, opts.blocks.len() as u32);
    }
    let best = |f: fn(&SweepPoint) -> Option<f64>| {
        points
            .iter()
            .filter_map(|p| {
                f(p).map(|ms| SweepBest {
                    blocks: p.blocks,
                    ms,
                })
            })
            .min_by(|a, b| a.ms.total_cmp(&b.ms))
    };
    let best_global = best(|p| p.global_ms);
    let best_shared = best(|p| p.shared_ms);
    let contention = best_shared.and_then(|b| contention(&points, b));
    Ok(SweepReport {
        target: target.describe(),
        input: input.to_string(),
        len: data.len(),
        bins: opts.bins,
        threads_per_block: threads,
        trials: opts.trials,
        points,
        best_global,
        best_shared,
        contention,
    })
}

fn contention(points: &[SweepPoint], best: SweepBest) -> Option<FlushContention> {
    let from = points.iter().find(|p| p.blocks == best.blocks)?;
    let to = points.iter().max_by_key(|p| p.blocks)?;
    let (s0, s1) = (from.shared_ms?, to.shared_ms?);
    let (r0, r1) = (from.shared_rows_ms?, to.shared_rows_ms?);
    let flush_ms = s1 - r1;
    Some(FlushContention {
        from: from.blocks,
        to: to.blocks,
        shared_ms: (s0, s1),
        rows_ms: (r0, r1),
        flush_atomics: (from.flush_atomics, to.flush_atomics),
        shared_growth_ms: s1 - s0,
        rows_growth_ms: r1 - r0,
        flush_ms,
        ns_per_flush_atomic: flush_ms * 1e6 / to.flush_atomics.max(1) as f64,
        ns_per_block: flush_ms * 1e6 / to.blocks.max(1) as f64,
    })
}

/// The source's plot of a sweep: the global kernel on the left axis (blue), the shared kernel
/// on the right (red), each with a dashed line at its best; the instrument dashed on the right.
pub fn sweep_chart(r: &SweepReport) -> TwoAxisChart {
    let series = |name: &str, color, dashed, mark_min, f: fn(&SweepPoint) -> Option<f64>| Series {
        name: name.into(),
        values: r.points.iter().map(|p| f(p).unwrap_or(f64::NAN)).collect(),
        color,
        dashed,
        mark_min,
    };
    TwoAxisChart {
        title: format!(
            "Histogram of {} bytes, {} bins, {} threads per block — {}",
            r.len,
            r.bins.count(),
            r.threads_per_block,
            r.target
        ),
        x_label: "Blocks per grid".into(),
        x: r.points.iter().map(|p| p.blocks as f64).collect(),
        left_label: "Time of conflicted version [ms]".into(),
        left: vec![series("histogram_global", BLUE, false, true, |p| {
            p.global_ms
        })],
        right_label: "Time of shared version [ms]".into(),
        right: vec![
            series("histogram_shared", RED, false, true, |p| p.shared_ms),
            series(
                "histogram_shared_rows (no flush atomics)",
                ORANGE,
                true,
                false,
                |p| p.shared_rows_ms,
            ),
        ],
    }
}
