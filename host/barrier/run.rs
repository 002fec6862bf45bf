//! One X→P→X run per variant: launch, time, compare with the CPU.

use super::{Variant, WrongRun, rel_error, wrong_runs, xpx_cpu, xpx_cpu_f64};
use crate::primitives::barrier::DeviceGridBarrier;
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::graph::Graph;
use crate::runtime::grid::check_coresident;
use crate::runtime::launch::{LaunchMode, Target, launch_on_stream};
use crate::runtime::memory::{Footprint, check_elements};
use crate::runtime::stats::Stats;
use crate::runtime::timer::Timer;
use gpu::LaunchConfig;
use gpu::lessons::barrier as k;
use serde::Serialize;

/// The largest `W`: every thread sums all `W` values twice per iteration.
pub const MAX_LEN: usize = 1 << 20;

/// The most X→P→X iterations per run (the many-launch variant queues two launches each).
pub const MAX_ITERATIONS: u32 = 1_000_000;
/// The most timed runs per variant.
pub const MAX_REPEATS: u32 = 1000;

/// What [`run`] runs.
#[derive(Clone, Debug, Serialize)]
pub struct BarrierOptions {
    /// Blocks of the grid.
    pub blocks: u32,
    /// Threads per block.
    pub threads: u32,
    /// `W`: values in `X` and in `P`.
    pub len: usize,
    /// X→P→X rounds per launch (per graph, per many-launch run).
    pub iterations: u32,
    /// The seed of `X₀`.
    pub seed: u64,
    /// Timed runs of each correct variant (GPU only); the median is reported.
    pub repeats: u32,
    /// The variants to run, in order.
    pub variants: Vec<Variant>,
}

impl Default for BarrierOptions {
    /// The article's experiment: 2 × 64 threads, `W = 128`, 100 iterations, every variant.
    fn default() -> BarrierOptions {
        BarrierOptions {
            blocks: super::SOURCE_BLOCKS,
            threads: super::SOURCE_THREADS,
            len: super::SOURCE_LEN,
            iterations: super::SOURCE_ITERATIONS,
            seed: super::DEFAULT_SEED,
            repeats: 10,
            variants: Variant::ALL.to_vec(),
        }
    }
}

/// One variant's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct VariantRun {
    /// The variant.
    pub variant: Variant,
    /// Its name.
    pub name: &'static str,
    /// The kernel(s) it launched.
    pub kernel: &'static str,
    /// Whether it must be right.
    pub must_be_correct: bool,
    /// Whether `X` came back with the CPU's bits.
    pub matches_cpu: bool,
    /// Where it did not: runs of consecutive wrong indices.
    pub wrong: Vec<WrongRun>,
    /// Wrong elements in all.
    pub wrong_elements: usize,
    /// For the broken variants, the wrong runs after a single iteration (a separate launch):
    /// where the article saw its runs of 32 and of a block.
    pub first_iteration_wrong: Vec<WrongRun>,
    /// Its `X` against the float64 iteration (largest error over largest value).
    pub rel_error_f64: f64,
    /// What the launch reported instead of finishing, if anything (a barrier timeout).
    pub launch_error: Option<String>,
    /// Microseconds per iteration (GPU; the median of the timed runs).
    pub us_per_iteration: Option<Stats>,
}

/// The whole experiment.
#[derive(Clone, Debug, Serialize)]
pub struct BarrierReport {
    /// Where it ran.
    pub target: String,
    /// What ran.
    pub options: BarrierOptions,
    /// The most blocks of `options.threads` that fit on the device at once (the grid barrier's
    /// limit).
    pub coresident_blocks: u32,
    /// The `f32` CPU iteration against the `f64` one.
    pub cpu_rel_error_f64: f64,
    /// Every variant that ran.
    pub runs: Vec<VariantRun>,
}

/// The buffers of one experiment: `X` (reset to `X₀` before each run), `P`, and the barrier.
struct Xpx<'t> {
    target: &'t Target,
    x0: Vec<f32>,
    x: Buffer<f32>,
    p: Buffer<f32>,
    barrier: DeviceGridBarrier,
    cfg: LaunchConfig,
    iterations: u32,
}

impl Xpx<'_> {
    fn w(&self) -> u64 {
        self.x0.len() as u64
    }

    /// `X ← X₀`, `P ← 0` and the barrier reset, before the next launch: a variant that does
    /// not use the barrier must not report what the one before it left there.
    fn reset(&self) -> Result<()> {
        self.barrier.reset(self.target)?;
        self.target.write(&self.x, &self.x0)?;
        self.target.write(&self.p, &vec![0.0; self.x0.len()])
    }

    /// Queues one run of `variant`, `n` iterations. A graph, where given, replaces the many
    /// launches (it holds its own iteration count).
    fn launch(&self, variant: Variant, graph: Option<&Graph>, n: u32) -> Result<()> {
        let (t, x, p, w) = (self.target, self.x.ptr(), self.p.ptr(), self.w());
        let (cfg, bar, state) = (self.cfg, &self.barrier, self.barrier.ptr());
        // The one-launch kernels with a barrier share their arguments; the path gives both the
        // PTX name and the function, as `launch!` does.
        macro_rules! one_launch {
            ($kernel:path, $mode:expr) => {
                crate::launch_grid_synced!(t, bar, $kernel, cfg, $mode, (x, p, w, n, state))
            };
        }
        // SAFETY (every launch below): `x` and `p` hold `w` floats each and `state` is the
        // barrier's live state; the buffers outlive the launches, which the caller synchronizes.
        unsafe {
            match variant {
                Variant::ManyLaunches => {
                    for _ in 0..n {
                        crate::launch!(t, k::xpx_stage_p, cfg, (x, p, w))?;
                        crate::launch!(t, k::xpx_stage_x, cfg, (x, p, w))?;
                    }
                    Ok(())
                }
                Variant::Graph => match (graph, t) {
                    (Some(g), Target::Gpu(gpu)) => g.launch(gpu.stream()),
                    _ => Err(Error::Unsupported("a CUDA graph needs a GPU".into())),
                },
                Variant::NoBarrier => crate::launch!(t, k::xpx_no_barrier, cfg, (x, p, w, n)),
                Variant::SyncThreads => {
                    crate::launch!(t, k::xpx_sync_threads, cfg, (x, p, w, n))
                }
                Variant::GridBarrier => one_launch!(k::xpx_grid_barrier, LaunchMode::Plain),
                Variant::Cooperative => {
                    one_launch!(k::xpx_grid_barrier, LaunchMode::Cooperative)
                }
                Variant::Article => one_launch!(k::xpx_article, LaunchMode::Plain),
                Variant::PlainSpin => one_launch!(k::xpx_plain_spin, LaunchMode::Plain),
                Variant::CountToN => one_launch!(k::xpx_count_to_n, LaunchMode::Plain),
            }
        }
    }

    /// Where a broken variant goes wrong in one iteration, as the article looked: later
    /// iterations mix every value into every other, and the runs blur.
    fn first_iteration(&self, variant: Variant) -> Result<Vec<WrongRun>> {
        self.reset()?;
        self.launch(variant, None, 1)?;
        self.target.synchronize()?;
        match self.barrier.check(self.target) {
            Ok(()) | Err(Error::BarrierTimeout { .. }) => {}
            Err(e) => return Err(e),
        }
        let got = self.target.download(&self.x)?;
        Ok(wrong_runs(&got, &xpx_cpu(&self.x0, 1)))
    }

    /// The many-launch iteration captured once as a graph of `2 × iterations` kernels.
    fn capture(&self) -> Result<Graph> {
        let Target::Gpu(gpu) = self.target else {
            return Err(Error::Unsupported("a CUDA graph needs a GPU".into()));
        };
        let (x, p, w) = (self.x.ptr(), self.p.ptr(), self.w());
        Graph::capture(gpu, |stream| {
            for _ in 0..self.iterations {
                for name in ["xpx_stage_p", "xpx_stage_x"] {
                    // SAFETY: as in `launch`; the graph is launched only while the buffers live.
                    unsafe {
                        launch_on_stream(gpu, stream, name, self.cfg, (x, p, w), LaunchMode::Plain)?
                    };
                }
            }
            Ok(())
        })
    }

    /// Runs `variant` once for its result, then `repeats` more times for its time (correct
    /// variants on a GPU only).
    fn run(
        &self,
        variant: Variant,
        want: &[f32],
        exact: &[f64],
        repeats: u32,
    ) -> Result<VariantRun> {
        let graph = match variant {
            Variant::Graph => Some(self.capture()?),
            _ => None,
        };
        self.reset()?;
        self.launch(variant, graph.as_ref(), self.iterations)?;
        self.target.synchronize()?;
        let launch_error = match self.barrier.check(self.target) {
            Ok(()) => None,
            Err(e @ Error::BarrierTimeout { .. }) if !variant.correct() => Some(e.to_string()),
            Err(e) => return Err(e),
        };
        let got = self.target.download(&self.x)?;
        let wrong = wrong_runs(&got, want);
        let wrong_elements = wrong.iter().map(|r| r.len).sum();
        if variant.correct() && wrong_elements > 0 {
            return Err(Error::Mismatch(format!(
                "{} ({}) left {wrong_elements} of {} values of X different from the CPU's, first \
                 at index {}",
                variant.name(),
                variant.kernel(),
                got.len(),
                wrong[0].start
            )));
        }
        let us_per_iteration = match self.target {
            Target::Gpu(gpu) if variant.correct() && repeats > 0 => {
                let mut timer = Timer::new()?;
                let mut us = Vec::new();
                for _ in 0..repeats {
                    self.reset()?;
                    let ms = timer.time(gpu.stream(), || {
                        self.launch(variant, graph.as_ref(), self.iterations)
                    })?;
                    self.barrier.check(self.target)?;
                    us.push(ms as f64 * 1e3 / self.iterations.max(1) as f64);
                }
                Some(Stats::of(&us)?)
            }
            _ => None,
        };
        let first_iteration_wrong = if variant.correct() {
            Vec::new()
        } else {
            self.first_iteration(variant)?
        };
        Ok(VariantRun {
            variant,
            name: variant.name(),
            kernel: variant.kernel(),
            must_be_correct: variant.correct(),
            matches_cpu: wrong_elements == 0,
            wrong,
            wrong_elements,
            first_iteration_wrong,
            rel_error_f64: rel_error(&got, exact),
            launch_error,
            us_per_iteration,
        })
    }
}

/// Checks the options and the grid: empty shapes, and a grid larger than the device holds at
/// once (their blocks could never all arrive at a grid barrier) are refused before anything
/// runs.
fn check_options(target: &Target, o: &BarrierOptions) -> Result<(LaunchConfig, u32)> {
    if o.blocks == 0 || o.threads == 0 || o.len == 0 || o.iterations == 0 {
        return Err(Error::InvalidInput(
            "blocks, threads, the length W and the iterations must all be at least 1".into(),
        ));
    }
    if o.iterations > MAX_ITERATIONS || o.repeats > MAX_REPEATS {
        return Err(Error::InvalidInput(format!(
            "{} iterations and {} repeats: at most {MAX_ITERATIONS} iterations (two launches \
             each in the many-launch variant) and {MAX_REPEATS} repeats",
            o.iterations, o.repeats
        )));
    }
    if o.len > MAX_LEN {
        return Err(Error::InvalidInput(format!(
            "W = {}: at most {MAX_LEN} values (every thread sums all of them, twice per \
             iteration: W² additions per stage, and a stage longer than the barrier's timeout \
             would read as a block that never arrived)",
            o.len
        )));
    }
    // X₀, the two CPU iterations (f32 and f64, with their second arrays), the downloads.
    let per_value = Footprint {
        host: 48,
        device: 8,
    };
    check_elements(target, "--len", o.len, per_value)?;
    let cfg = LaunchConfig::linear(o.blocks, o.threads);
    let limit = check_coresident(target, "xpx_grid_barrier", &cfg)?;
    Ok((cfg, limit))
}

/// Runs one variant on its own (the sweep's step).
///
/// # Errors
/// As [`run`].
pub fn run_variant(target: &Target, o: &BarrierOptions, variant: Variant) -> Result<VariantRun> {
    let (cfg, _) = check_options(target, o)?;
    let x0 = super::initial_x(o.len, o.seed);
    let want = xpx_cpu(&x0, o.iterations);
    let exact = xpx_cpu_f64(&x0, o.iterations);
    let xpx = prepare(target, x0, cfg, o.iterations)?;
    xpx.run(variant, &want, &exact, o.repeats)
}

fn prepare(target: &Target, x0: Vec<f32>, cfg: LaunchConfig, iterations: u32) -> Result<Xpx<'_>> {
    Ok(Xpx {
        target,
        x: target.upload(&x0)?,
        p: target.zeros(x0.len())?,
        x0,
        barrier: DeviceGridBarrier::new(target)?,
        cfg,
        iterations,
    })
}

/// Runs every variant of `opts` on `target`, checks each against the CPU, times the correct
/// ones on a GPU. `progress` is called with (variants done, variants). The graph and the
/// cooperative launch are skipped on the simulator.
///
/// # Errors
/// [`Error::InvalidInput`] for an empty shape or a grid larger than the device holds at once;
/// [`Error::Mismatch`] if a correct variant's `X` differs from the CPU's; a barrier timeout of
/// a correct variant; a launch or driver error.
pub fn run(
    target: &Target,
    opts: &BarrierOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<BarrierReport> {
    let (cfg, coresident_blocks) = check_options(target, opts)?;
    let x0 = super::initial_x(opts.len, opts.seed);
    let want = xpx_cpu(&x0, opts.iterations);
    let exact = xpx_cpu_f64(&x0, opts.iterations);
    let cpu_rel_error_f64 = rel_error(&want, &exact);
    let xpx = prepare(target, x0, cfg, opts.iterations)?;
    let variants: Vec<Variant> = opts
        .variants
        .iter()
        .copied()
        .filter(|v| !(target.is_sim() && v.gpu_only()))
        .collect();
    let mut runs = Vec::new();
    for (i, &variant) in variants.iter().enumerate() {
        runs.push(xpx.run(variant, &want, &exact, opts.repeats)?);
        progress(i as u32 + 1, variants.len() as u32);
    }
    Ok(BarrierReport {
        target: target.describe(),
        options: opts.clone(),
        coresident_blocks,
        cpu_rel_error_f64,
        runs,
    })
}
