//! The tutorial's experiment (`gridsync streams`): `arrays` arrays of `len` floats, array `i`
//! filled with `i + 1`, normalized on `streams` streams and on one, each way timed with events.
//!
//! Besides the tutorial's totals the report carries what explains them: each pipeline's kernels
//! timed alone, the copies timed alone (pinned, both directions, and both at once), and the
//! bound they put on any schedule — every byte must cross the bus in, every byte back out, the
//! first array cannot start back before it is all in, and the last cannot start back before
//! its sum is known.

use crate::plot::{BLUE, GREEN, ORANGE, Timeline, TimelineBar, TimelinePanel, TimelineRow};
use gridsync::normalize::transfer::{self, Direction, StreamedCopies, TransferBench};
use gridsync::normalize::{
    BatchOptions, BatchReport, Normalizer, Pipeline, Schedule, source_arrays,
};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use gridsync::runtime::memory::{Footprint, check_fits};
use gridsync::runtime::pinned::PinnedBuffer;
use gridsync::runtime::stats::Stats;
use serde::Serialize;

/// The tutorial's arrays: ten.
pub const DEFAULT_ARRAYS: usize = 10;
/// The tutorial's array length: 10⁷ floats.
pub const DEFAULT_LEN: usize = 10_000_000;
/// The simulator's default length (its threads are OS threads).
pub const SIM_DEFAULT_LEN: usize = 3_001;

/// What the experiment runs.
#[derive(Clone, Debug, Serialize)]
pub struct ExperimentOptions {
    /// Arrays.
    pub arrays: usize,
    /// Floats per array.
    pub len: usize,
    /// Streams of the many-stream runs (the one-stream run is always made too).
    pub streams: usize,
    /// Plain `Vec`s instead of pinned buffers: the copies become synchronous.
    pub pageable: bool,
    /// Runs of each configuration; the report keeps the median one.
    pub repeats: u32,
    /// The pipelines to run.
    pub pipelines: Vec<Pipeline>,
    /// The schedules of the many-stream runs.
    pub schedules: Vec<Schedule>,
}

impl Default for ExperimentOptions {
    /// The tutorial's 10 × 10⁷ on 10 streams, pinned, both pipelines, both schedules.
    fn default() -> ExperimentOptions {
        ExperimentOptions {
            arrays: DEFAULT_ARRAYS,
            len: DEFAULT_LEN,
            streams: DEFAULT_ARRAYS,
            pageable: false,
            repeats: 5,
            pipelines: Pipeline::ALL.to_vec(),
            schedules: Schedule::ALL.to_vec(),
        }
    }
}

/// One configuration's runs.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// Its options.
    pub options: BatchOptions,
    /// The total of every repeat (GPU only).
    pub total_ms: Option<Stats>,
    /// The repeat whose total was the median: sums before, events.
    pub report: BatchReport,
    /// Every array's sum afterwards, in `f64` on the host (≈ 1).
    pub new_sums: Vec<f64>,
    /// The largest `|new sum − 1|`.
    pub max_error: f64,
    /// The median, over the repeats, of this repeat's total over the copies alone timed at the
    /// end of the same round ([`ExperimentReport::streamed_copies_ms`]): the two compared round
    /// by round, so that a drift of the link between rounds would cancel (GPU, pinned memory,
    /// runs on as many streams as the copies alone).
    pub over_copies: Option<Stats>,
}

/// One pipeline's kernels timed alone on one array already on the device.
#[derive(Clone, Debug, Serialize)]
pub struct KernelTime {
    /// The pipeline.
    pub pipeline: Pipeline,
    /// Milliseconds for all its kernels.
    pub ms: Stats,
}

/// The copies timed alone, pinned, at one array's size.
#[derive(Clone, Debug, Serialize)]
pub struct CopyRates {
    /// Host to device, GB/s.
    pub h2d_gbps: f64,
    /// Device to host, GB/s.
    pub d2h_gbps: f64,
    /// Both at once (the pair's bytes over its time), GB/s.
    pub both_gbps: f64,
    /// The copy in's rate while a copy out runs, GB/s (NaN where the pair's times do not give it).
    pub both_in_gbps: f64,
    /// The copy out's rate while a copy in runs, GB/s (NaN likewise).
    pub both_out_gbps: f64,
    /// Host to device from pageable memory, GB/s.
    pub h2d_pageable_gbps: f64,
    /// Device to host into pageable memory, GB/s.
    pub d2h_pageable_gbps: f64,
}

/// The experiment's result.
#[derive(Clone, Debug, Serialize)]
pub struct ExperimentReport {
    /// Where it ran.
    pub device: String,
    /// What ran.
    pub options: ExperimentOptions,
    /// Every configuration: per pipeline, the many-stream runs then the one-stream run.
    pub runs: Vec<Run>,
    /// The kernels alone (GPU only).
    pub kernels: Vec<KernelTime>,
    /// The copies alone (GPU only).
    pub copies: Option<CopyRates>,
    /// The least time any schedule can take, from [`ExperimentReport::copies`] and the kernels.
    pub bound_ms: Option<f64>,
    /// The many-stream runs' copies alone: every array in and straight back out on the same
    /// streams, from the same pinned arrays, no kernels (GPU, pinned memory only;
    /// [`StreamedCopies`], made and warmed up once, one pass at the end of each round). No run
    /// on as many streams can end earlier.
    pub streamed_copies_ms: Option<Stats>,
}

impl ExperimentReport {
    /// The run of `pipeline` on `streams` streams with `schedule` (any schedule for one stream).
    pub fn run(&self, pipeline: Pipeline, streams: usize, schedule: Schedule) -> Option<&Run> {
        self.runs.iter().find(|r| {
            r.options.pipeline == pipeline
                && r.options.streams == streams
                && (streams == 1 || r.options.schedule == schedule)
        })
    }
}

/// The host arrays, pinned or not.
enum Arrays<'g> {
    Pinned(Vec<PinnedBuffer<'g, f32>>),
    Pageable(Vec<Vec<f32>>),
}

impl Arrays<'_> {
    /// Refills array `i` with `i + 1`, as the tutorial makes them.
    fn refill(&mut self) {
        let fill = |i: usize, a: &mut [f32]| a.fill((i + 1) as f32);
        match self {
            Arrays::Pinned(v) => v.iter_mut().enumerate().for_each(|(i, a)| fill(i, a)),
            Arrays::Pageable(v) => v.iter_mut().enumerate().for_each(|(i, a)| fill(i, a)),
        }
    }

    fn slices(&mut self) -> Vec<&mut [f32]> {
        match self {
            Arrays::Pinned(v) => v.iter_mut().map(|a| &mut a[..]).collect(),
            Arrays::Pageable(v) => v.iter_mut().map(|a| &mut a[..]).collect(),
        }
    }
}

/// Runs the experiment; `progress(done, total)` after each run.
///
/// # Errors
/// [`Error::InvalidInput`] for zero arrays, length, streams or repeats, no pipelines or
/// schedules, or arrays that do not fit; a driver error.
pub fn run(
    target: &Target,
    options: &ExperimentOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<ExperimentReport> {
    let o = options;
    if o.arrays == 0 || o.len == 0 || o.streams == 0 || o.repeats == 0 {
        return Err(Error::InvalidInput(
            "arrays, length, streams and repeats must all be at least 1".into(),
        ));
    }
    if o.pipelines.is_empty() || o.schedules.is_empty() {
        return Err(Error::InvalidInput(
            "at least one pipeline and one schedule".into(),
        ));
    }
    let streams = o.streams.min(o.arrays);
    let configs = configurations(o, streams);
    check_room(target, o, &configs, streams)?;
    let mut arrays = match target {
        Target::Gpu(gpu) if !o.pageable => Arrays::Pinned(
            (0..o.arrays)
                .map(|i| PinnedBuffer::new(gpu, o.len, (i + 1) as f32))
                .collect::<Result<_>>()?,
        ),
        _ => Arrays::Pageable(source_arrays(o.arrays, o.len)),
    };
    // Every configuration once per round, then the copies alone once: the repeats of all of
    // them interleaved, so that each run and the copies alone meet the same state of the link.
    // The progress count saturates: a run of billions of repeats is the caller's to ask for.
    let per_round = configs.len() as u32;
    let steps = per_round
        .saturating_mul(o.repeats)
        .saturating_add(2 * u32::from(!target.is_sim()));
    let mut normalizers = configs
        .iter()
        .map(|&config| Normalizer::new(target, o.len, config))
        .collect::<Result<Vec<_>>>()?;
    // The copies alone: their buffers, streams and events made once and warmed up once, so
    // that a round times one pass of copies and nothing else.
    let alone = if matches!(arrays, Arrays::Pinned(_)) {
        let alone = StreamedCopies::new(target, o.len, streams)?;
        alone.time(&mut arrays.slices())?;
        Some(alone)
    } else {
        None
    };
    let mut results: Vec<Vec<Repeat>> = configs.iter().map(|_| Vec::new()).collect();
    let mut copies_alone = Vec::new();
    for round in 0..o.repeats {
        for (k, normalizer) in normalizers.iter_mut().enumerate() {
            results[k].push(run_once(&mut arrays, normalizer)?);
            progress(
                round.saturating_mul(per_round).saturating_add(k as u32 + 1),
                steps,
            );
        }
        if let Some(alone) = &alone {
            copies_alone.push(alone.time(&mut arrays.slices())?);
        }
    }
    drop((normalizers, alone));
    let streamed_copies_ms = Stats::of(&copies_alone).ok();
    let runs = configs
        .into_iter()
        .zip(results)
        .map(|(config, repeats)| {
            let paired = (config.streams == streams).then_some(&copies_alone[..]);
            median_run(config, repeats, paired)
        })
        .collect();
    let (kernels, copies, bound_ms) = match target {
        Target::Sim => (Vec::new(), None, None),
        Target::Gpu(_) => {
            let kernels = o
                .pipelines
                .iter()
                .map(|&p| time_kernels(target, p, o.len, 20))
                .collect::<Result<Vec<_>>>()?;
            progress(steps - 1, steps);
            let copies = copy_rates(target, &mut arrays, o.len * 4)?;
            progress(steps, steps);
            let fastest = kernels.iter().map(|k| k.ms.median).fold(f64::MAX, f64::min);
            let bound = bound_ms(&copies, o.arrays, o.len * 4, fastest);
            (kernels, Some(copies), Some(bound))
        }
    };
    Ok(ExperimentReport {
        device: target.describe(),
        options: o.clone(),
        runs,
        kernels,
        copies,
        bound_ms,
        streamed_copies_ms,
    })
}

/// Every configuration the options ask for: each pipeline on `streams` streams in each schedule
/// (where `streams` > 1), then on one stream.
fn configurations(o: &ExperimentOptions, streams: usize) -> Vec<BatchOptions> {
    let mut configs = Vec::new();
    for &pipeline in &o.pipelines {
        if streams > 1 {
            for &schedule in &o.schedules {
                configs.push(BatchOptions {
                    streams,
                    pipeline,
                    schedule,
                });
            }
        }
        configs.push(BatchOptions {
            streams: 1,
            pipeline,
            schedule: Schedule::PerStream,
        });
    }
    configs
}

/// Refuses options whose arrays and lanes do not fit ([`check_fits`]). Every array on the host.
/// On a GPU, a lane per stream of every configuration (they run in turn, round after round)
/// beside the copies alone's buffer per stream; the kernels-alone timing's two arrays come
/// after the lanes are freed. The simulator has no lanes.
fn check_room(
    target: &Target,
    o: &ExperimentOptions,
    configs: &[BatchOptions],
    streams: usize,
) -> Result<()> {
    let need = (|| {
        let array = (o.len as u64).checked_mul(4)?;
        let lanes = match target {
            Target::Sim => 0,
            Target::Gpu(_) => configs
                .iter()
                .try_fold(0u64, |sum, c| sum.checked_add(c.streams as u64))?,
        };
        let device = lanes
            .checked_add(streams as u64)?
            .max((streams as u64).checked_add(2)?);
        Some(Footprint {
            host: (o.arrays as u64).checked_add(2)?.checked_mul(array)?,
            device: device.checked_mul(array)?,
        })
    })();
    let option = format!(
        "--arrays {} --len {} --streams {} ({} pipeline(s), {} schedule(s): a lane per stream \
         of each)",
        o.arrays,
        o.len,
        o.streams,
        o.pipelines.len(),
        o.schedules.len()
    );
    check_fits(target, &option, need)
}

/// One repeat: its report and every array's sum afterwards.
type Repeat = (BatchReport, Vec<f64>);

/// One run of `normalizer`'s configuration on freshly filled arrays.
fn run_once(arrays: &mut Arrays<'_>, normalizer: &mut Normalizer<'_>) -> Result<Repeat> {
    arrays.refill();
    let report = normalizer.run(&mut arrays.slices())?;
    let new_sums = arrays
        .slices()
        .iter()
        .map(|a| a.iter().map(|&v| v as f64).sum())
        .collect();
    Ok((report, new_sums))
}

/// A configuration's repeats, the median one kept; with `paired`, the copies alone of each
/// round, each repeat's total over its round's copies.
fn median_run(config: BatchOptions, mut results: Vec<Repeat>, paired: Option<&[f64]>) -> Run {
    let totals: Vec<f64> = results
        .iter()
        .filter_map(|(r, _)| r.timing.as_ref().map(|t| t.total_ms))
        .collect();
    let total_ms = Stats::of(&totals).ok();
    let over_copies = paired.filter(|c| c.len() == totals.len()).and_then(|c| {
        let ratios: Vec<f64> = totals.iter().zip(c).map(|(t, c)| t / c).collect();
        Stats::of(&ratios).ok()
    });
    let pick = match total_ms {
        Some(s) => results
            .iter()
            .position(|(r, _)| r.timing.as_ref().is_some_and(|t| t.total_ms >= s.median))
            .unwrap_or(0),
        None => 0,
    };
    let (report, new_sums) = results.swap_remove(pick);
    let max_error = new_sums.iter().map(|s| (s - 1.0).abs()).fold(0.0, f64::max);
    Run {
        options: config,
        total_ms,
        report,
        new_sums,
        max_error,
        over_copies,
    }
}

/// One pipeline's kernels on one device-resident array, event-timed on the library's stream.
fn time_kernels(
    target: &Target,
    pipeline: Pipeline,
    len: usize,
    trials: u32,
) -> Result<KernelTime> {
    Ok(KernelTime {
        pipeline,
        ms: gridsync::normalize::time_pipeline(target, pipeline, len, trials)?,
    })
}

/// The copies alone, at one array's size: with the experiment's own first two arrays where
/// they are pinned (the rate depends on where the page-locked memory lies), and the pageable
/// rates from buffers of their own.
fn copy_rates(target: &Target, arrays: &mut Arrays<'_>, bytes: usize) -> Result<CopyRates> {
    let (pinned, pageable) = match arrays {
        Arrays::Pinned(v) if v.len() >= 2 => {
            let (first, rest) = v.split_at_mut(1);
            let own = transfer::pinned_rates(target, &mut first[0], &mut rest[0], 7)?;
            (own, transfer::pageable_rates(target, bytes, 5)?)
        }
        _ => {
            let both = transfer::run(target, &[bytes], 5, |_, _| {})?;
            (both.clone(), both)
        }
    };
    let rate = |b: &TransferBench, d, pinned| b.gbps(d, pinned).unwrap_or(f64::NAN);
    let (both_in_gbps, both_out_gbps) =
        pinned.concurrent_gbps(true).unwrap_or((f64::NAN, f64::NAN));
    Ok(CopyRates {
        h2d_gbps: rate(&pinned, Direction::HostToDevice, true),
        d2h_gbps: rate(&pinned, Direction::DeviceToHost, true),
        both_gbps: rate(&pinned, Direction::Both, true),
        both_in_gbps,
        both_out_gbps,
        h2d_pageable_gbps: rate(&pageable, Direction::HostToDevice, false),
        d2h_pageable_gbps: rate(&pageable, Direction::DeviceToHost, false),
    })
}

/// The least time any schedule can take for `n` arrays of `bytes`, from the copy rates
/// measured alone and at once, and one array's kernels.
///
/// Each direction moves `n · bytes`. Time splits into stretches where only the copy in runs,
/// only the copy out runs, or both run (each at its rate beside the other, which need not be
/// half the pair's: a link often favours one direction). Before the first copy out can start,
/// the first array must be all in and its kernels done; after the last copy in, the last
/// array's kernels and copy out remain — so each lone stretch is at least one array's copy
/// plus the kernels. Both at once moves more bytes a second than either alone, so the least
/// total keeps the stretch of both as long as those two floors allow; its length is set by the
/// direction that would run out of bytes first. With equal shares this is the first array in
/// alone, the other `n − 1` both ways at the pair's rate, the kernels, and the last array out
/// alone. Where the shares are not known (NaN), they are taken as equal halves of
/// [`CopyRates::both_gbps`].
pub fn bound_ms(c: &CopyRates, n: usize, bytes: usize, kernel_ms: f64) -> f64 {
    let kernel_ms = if kernel_ms.is_finite() {
        kernel_ms.max(0.0)
    } else {
        0.0
    };
    let (one, all) = (bytes as f64, (n * bytes) as f64);
    let (a_in, a_out) = (c.h2d_gbps * 1e6, c.d2h_gbps * 1e6); // bytes per ms
    let (b_in, b_out) = if c.both_in_gbps.is_finite() && c.both_out_gbps.is_finite() {
        (c.both_in_gbps * 1e6, c.both_out_gbps * 1e6)
    } else {
        (c.both_gbps * 0.5e6, c.both_gbps * 0.5e6)
    };
    // Each lone stretch moves at least one array plus what fits beside the kernels.
    let (floor_in, floor_out) = (one + kernel_ms * a_in, one + kernel_ms * a_out);
    let both_ms = ((all - floor_in) / b_in)
        .min((all - floor_out) / b_out)
        .max(0.0);
    let total = |both: f64| both + (all - b_in * both) / a_in + (all - b_out * both) / a_out;
    // Running both at once only pays where it beats the two directions one after the other.
    total(both_ms).min(total(0.0))
}

/// The timeline of `pipeline`'s runs — the many-stream runs, then the one-stream run — on one
/// time axis: a row per array, its copy in, kernels and copy out as bars. `None` on the
/// simulator (no events).
pub fn timeline(report: &ExperimentReport, pipeline: Pipeline) -> Option<Timeline> {
    let panels: Vec<TimelinePanel> = report
        .runs
        .iter()
        .filter(|r| r.options.pipeline == pipeline)
        .filter_map(|r| {
            let timing = r.report.timing.as_ref()?;
            let title = match r.options.streams {
                1 => format!("1 stream: {:.2} ms", timing.total_ms),
                k => format!(
                    "{k} streams, {}: {:.2} ms, overlap {:.0}%",
                    r.options.schedule.label(),
                    timing.total_ms,
                    (100.0 * timing.overlap).max(0.0_f64)
                ),
            };
            let rows = r
                .report
                .arrays
                .iter()
                .enumerate()
                .filter_map(|(i, a)| {
                    let t = a.timing.as_ref()?;
                    let bar = |start_ms, end_ms, kind| TimelineBar {
                        start_ms,
                        end_ms,
                        kind,
                    };
                    Some(TimelineRow {
                        label: format!("array {i} · stream {}", t.stream),
                        bars: vec![
                            bar(t.begin_ms, t.copied_in_ms, 0),
                            bar(t.copied_in_ms, t.computed_ms, 1),
                            bar(t.copy_out_ms, t.end_ms, 2),
                        ],
                    })
                })
                .collect();
            Some(TimelinePanel { title, rows })
        })
        .collect();
    if panels.is_empty() {
        return None;
    }
    let o = &report.options;
    Some(Timeline {
        title: format!(
            "{} × {} floats normalized, {} pipeline, {} host memory — {}",
            o.arrays,
            o.len,
            pipeline.label(),
            if o.pageable { "pageable" } else { "pinned" },
            report.device
        ),
        legend: vec![
            ("copy in (H→D)".into(), BLUE),
            ("kernels".into(), ORANGE),
            ("copy out (D→H)".into(), GREEN),
        ],
        panels,
        x_label: "milliseconds since the first begin event".into(),
    })
}
