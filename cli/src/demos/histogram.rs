//! The `histogram` demo: the letter counts, and every kernel once over one input, checked and
//! (on a GPU) timed.

use crate::plot::BarPanel;
use gridsync::histogram::{Bins, HistKernel, HistogramLaunch, check, config_for, histogram_cpu};
use gridsync::runtime::error::Result;
use gridsync::runtime::launch::Target;
use gridsync::runtime::stats::Stats;
use gridsync::runtime::stats::TimedLaunch;
use gridsync::runtime::timer::Timer;
use serde::Serialize;

/// Timed launches per kernel in the demo (after a checked warm-up launch): a median of ten.
pub const DEMO_TRIALS: u32 = 10;

/// What [`run`] does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HistogramOptions {
    /// 128 (ASCII, as the source) or 256 bins.
    pub bins: Bins,
    /// Blocks for every kernel; `None`: each kernel's own choice ([`config_for`]).
    pub blocks: Option<u32>,
}

impl Default for HistogramOptions {
    fn default() -> HistogramOptions {
        HistogramOptions {
            bins: Bins::Ascii,
            blocks: None,
        }
    }
}

/// The counts of the letters, as the source's two bar charts show them.
#[derive(Clone, Debug, Serialize)]
pub struct LetterCounts {
    /// `a` to `z`.
    pub lowercase: Vec<(char, u64)>,
    /// `A` to `Z`.
    pub uppercase: Vec<(char, u64)>,
}

impl LetterCounts {
    /// The letters of a histogram of at least 128 bins.
    pub fn of(hist: &[u64]) -> LetterCounts {
        let pick = |range: std::ops::RangeInclusive<u8>| {
            range
                .map(|c| (c as char, hist.get(c as usize).copied().unwrap_or(0)))
                .collect()
        };
        LetterCounts {
            lowercase: pick(b'a'..=b'z'),
            uppercase: pick(b'A'..=b'Z'),
        }
    }

    /// The source's two bar charts: lower case and upper case, one y scale.
    pub fn panels(&self) -> Vec<BarPanel> {
        let panel = |title: &str, letters: &[(char, u64)]| BarPanel {
            title: title.into(),
            labels: letters.iter().map(|(c, _)| c.to_string()).collect(),
            values: letters.iter().map(|&(_, n)| n as f64).collect(),
        };
        vec![
            panel("Lowercase", &self.lowercase),
            panel("Uppercase", &self.uppercase),
        ]
    }
}

/// One kernel's run.
#[derive(Clone, Debug, Serialize)]
pub struct KernelRun {
    /// Which kernel.
    pub kernel: HistKernel,
    /// Its PTX name.
    pub name: &'static str,
    /// How it counts.
    pub what: &'static str,
    /// Its grid; the median event-timed milliseconds of [`DEMO_TRIALS`] launches (GPU only);
    /// input bytes / `ms`.
    #[serde(flatten)]
    pub launch: TimedLaunch,
}

/// What [`run`] found.
#[derive(Clone, Debug, Serialize)]
pub struct HistogramReport {
    /// Where it ran.
    pub target: String,
    /// Where the input came from.
    pub input: String,
    /// Bytes in the input.
    pub len: usize,
    /// Bins.
    pub bins: Bins,
    /// The CPU's histogram, which every kernel's equals.
    pub histogram: Vec<u64>,
    /// Bytes with no bin (`>= 128` in the ASCII histogram).
    pub skipped: u64,
    /// The letters.
    pub letters: LetterCounts,
    /// Each kernel, in the progression's order.
    pub runs: Vec<KernelRun>,
    /// How many times faster the shared-memory kernel (4.4) ran than the global one (4.3): the
    /// source measured about 3 on its GPU.
    pub shared_speedup: Option<f64>,
}

/// Runs every kernel of the progression over `data` on `target`, compares each histogram with
/// the CPU's, and times each on a GPU. `progress` is called with (kernels done, kernels).
///
/// # Errors
/// [`gridsync::Error::Mismatch`] if a kernel's histogram differs from the CPU's; as
/// [`config_for`] and [`HistogramLaunch::new`] (zero blocks, a grid too small for `u32` bins);
/// a launch or driver error (out of memory, …).
pub fn run(
    target: &Target,
    data: &[u8],
    input: &str,
    opts: &HistogramOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<HistogramReport> {
    let want = histogram_cpu(data, opts.bins);
    let src = target.upload(data)?;
    let mut timer = Timer::on(target)?;
    let mut runs = Vec::new();
    let kernels = HistKernel::available(target);
    for (k, &kernel) in kernels.iter().enumerate() {
        let cfg = config_for(target, kernel, opts.bins, data.len(), opts.blocks)?;
        let launch = HistogramLaunch::new(target, kernel, &src, data.len(), opts.bins, cfg)?;
        check(kernel, &launch.run()?, &want)?;
        let mut times = Vec::new();
        if timer.is_some() {
            for _ in 0..DEMO_TRIALS {
                times.extend(launch.launch_timed(timer.as_mut())?);
                check(kernel, &launch.result()?, &want)?;
            }
        }
        let ms = Stats::of(&times).ok().map(|s| s.median);
        runs.push(KernelRun {
            kernel,
            name: kernel.name(),
            what: kernel.what(),
            launch: TimedLaunch::new(&cfg, ms, data.len() as f64),
        });
        progress(k as u32 + 1, kernels.len() as u32);
    }
    let time = |k: HistKernel| {
        runs.iter()
            .find(|r| r.kernel == k)
            .and_then(|r| r.launch.ms)
    };
    let shared_speedup = match (time(HistKernel::Global), time(HistKernel::Shared)) {
        (Some(g), Some(s)) if s > 0.0 => Some(g / s),
        _ => None,
    };
    let counted: u64 = want.iter().sum();
    Ok(HistogramReport {
        target: target.describe(),
        input: input.to_string(),
        len: data.len(),
        bins: opts.bins,
        letters: LetterCounts::of(&want),
        skipped: data.len() as u64 - counted,
        histogram: want,
        runs,
        shared_speedup,
    })
}
