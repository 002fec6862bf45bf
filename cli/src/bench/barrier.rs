//! `gridsync bench barrier`: what one grid barrier costs, against what a kernel boundary costs.
//!
//! At two grids of 128-thread blocks — one block per SM, and the largest grid the device holds
//! at once — it times `rounds` bare [`gpu::grid::GridBarrier`]s in one launch (plain and
//! cooperative), `rounds` empty kernels of the same grid launched back to back, and a CUDA graph of
//! `rounds` of them; each figure is the median over the trials of one launch's (or graph's) event
//! time over `rounds`. A barrier is latency, not bandwidth: the anchors are the kernel
//! boundary it replaces and CUDA C++'s `this_grid().sync()` (`scripts/reference_barrier.cu`).

use super::{Stats, require_gpu};
use gpu::LaunchConfig;
use gpu::grid::{Arrival, DEFAULT_GROUP_BLOCKS, PollSleep};
use gridsync::primitives::barrier::DeviceGridBarrier;
use gridsync::runtime::device::Gpu;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::graph::Graph;
use gridsync::runtime::grid::check_coresident;
use gridsync::runtime::launch::{LaunchMode, Target, launch_on_stream};
use gridsync::runtime::timer::Timer;
use serde::Serialize;

/// Threads per block of the benchmark's grids (the CUDA references use the same).
pub const THREADS: u32 = 128;
/// Barriers (or kernels) per timed launch (or graph) by default.
pub const DEFAULT_ROUNDS: u32 = 1000;
/// Timed trials per figure by default.
pub const DEFAULT_TRIALS: u32 = 10;
/// The most rounds per launch: a graph of this many empty kernels is already large.
pub const MAX_ROUNDS: u32 = 100_000;
/// The most trials per figure.
pub const MAX_TRIALS: u32 = 1000;

/// One grid's figures, microseconds per barrier or per kernel boundary.
#[derive(Clone, Debug, Serialize)]
pub struct BarrierCost {
    /// Blocks of the grid.
    pub blocks: u32,
    /// What the grid is: "1 block per SM" or "largest co-resident".
    pub what: &'static str,
    /// A `GridBarrier` in a plain launch.
    pub grid_barrier_us: Stats,
    /// A `GridBarrier` in a cooperative launch.
    pub cooperative_us: Stats,
    /// An empty kernel launched after another on one stream.
    pub empty_launch_us: Stats,
    /// An empty kernel after another inside one CUDA graph.
    pub graph_kernel_us: Stats,
}

/// One arrival layout at one grid: microseconds per barrier.
#[derive(Clone, Debug, Serialize)]
pub struct GroupCost {
    /// Blocks of the grid.
    pub blocks: u32,
    /// Blocks per group asked for (`None`: one level).
    pub group_blocks: Option<u32>,
    /// Blocks per group the barrier used: `None` for one level (asked for, or more groups than
    /// [`gpu::grid::MAX_GROUPS`]).
    pub effective_group_blocks: Option<u32>,
    /// Nanoseconds between polls.
    pub poll_sleep_ns: u32,
    /// A `GridBarrier` in a plain launch.
    pub us: Stats,
}

/// The layouts the benchmark tries at each grid: group sizes without sleeping, then sleeps
/// between polls with groups of [`gpu::grid::DEFAULT_GROUP_BLOCKS`].
pub const LAYOUTS: [(Arrival, u32); 10] = [
    (Arrival::OneLevel, 0),
    (Arrival::Groups(4), 0),
    (Arrival::Groups(8), 0),
    (Arrival::Groups(16), 0),
    (Arrival::Groups(32), 0),
    (Arrival::Groups(64), 0),
    (Arrival::Groups(DEFAULT_GROUP_BLOCKS), 20),
    (Arrival::Groups(DEFAULT_GROUP_BLOCKS), 50),
    (Arrival::Groups(DEFAULT_GROUP_BLOCKS), 100),
    (Arrival::Groups(DEFAULT_GROUP_BLOCKS), 200),
];

/// The benchmark.
#[derive(Clone, Debug, Serialize)]
pub struct BarrierBench {
    /// The device.
    pub device: String,
    /// Barriers (kernels) per timed launch (graph).
    pub rounds: u32,
    /// Trials per figure.
    pub trials: u32,
    /// One block per SM, then the largest co-resident grid.
    pub grids: Vec<BarrierCost>,
    /// At 1, 4, 6, 7, 8 and the largest number of blocks per SM, every layout of [`LAYOUTS`].
    pub groups: Vec<GroupCost>,
}

/// Times `trials` runs of `work`, each of `rounds` steps, calling `after` (untimed) after each:
/// microseconds per step.
fn per_step(
    gpu: &Gpu,
    timer: &mut Timer,
    trials: u32,
    rounds: u32,
    mut work: impl FnMut() -> Result<()>,
    mut after: impl FnMut() -> Result<()>,
) -> Result<Stats> {
    work()?; // warm-up
    gpu.synchronize()?;
    after()?;
    let mut us = Vec::new();
    for _ in 0..trials {
        let ms = timer.time(gpu.stream(), &mut work)?;
        // Outside the timed region: a launch whose barrier timed out is an error, not a time.
        after()?;
        us.push(ms as f64 * 1e3 / rounds as f64);
    }
    Stats::of(&us)
}

/// What every figure of one run shares: the device, the rounds per launch, the trials.
struct Figures<'a> {
    gpu: &'a Gpu,
    target: &'a Target,
    trials: u32,
    rounds: u32,
}

impl Figures<'_> {
    /// `rounds` bare barriers per launch of `barrier` at `cfg` in `mode`, each of `trials`
    /// launches checked (untimed) for a timeout: microseconds per barrier.
    fn bare(
        &self,
        barrier: &DeviceGridBarrier,
        cfg: LaunchConfig,
        mode: LaunchMode,
    ) -> Result<Stats> {
        let (target, rounds) = (self.target, self.rounds);
        let mut timer = Timer::new()?;
        let launch = || {
            // SAFETY: the barrier's state is live for the launch, which `per_step` synchronizes
            // (and checks) before the state is reused.
            unsafe {
                gridsync::launch_grid_synced!(
                    target,
                    barrier,
                    gpu::bench::barrier::grid_barrier_bare,
                    cfg,
                    mode,
                    (barrier.ptr(), rounds)
                )
            }
        };
        per_step(self.gpu, &mut timer, self.trials, rounds, launch, || {
            barrier.check(target)
        })
    }

    /// `rounds` empty kernels at `cfg` launched back to back: microseconds per kernel.
    fn empty_launches(&self, timer: &mut Timer, cfg: LaunchConfig) -> Result<Stats> {
        let (target, rounds) = (self.target, self.rounds);
        per_step(
            self.gpu,
            timer,
            self.trials,
            rounds,
            || {
                for _ in 0..rounds {
                    // SAFETY: `empty` takes no arguments and touches no memory.
                    unsafe { gridsync::launch!(target, gpu::bench::launch::empty, cfg, ())? };
                }
                Ok(())
            },
            || Ok(()),
        )
    }

    /// A CUDA graph of `rounds` empty kernels at `cfg`: microseconds per kernel.
    fn graph_kernels(&self, timer: &mut Timer, cfg: LaunchConfig) -> Result<Stats> {
        let gpu = self.gpu;
        let graph = Graph::capture(gpu, |stream| {
            for _ in 0..self.rounds {
                // SAFETY: `empty` takes no arguments and touches no memory.
                unsafe { launch_on_stream(gpu, stream, "empty", cfg, (), LaunchMode::Plain)? };
            }
            Ok(())
        })?;
        per_step(
            gpu,
            timer,
            self.trials,
            self.rounds,
            || graph.launch(gpu.stream()),
            || Ok(()),
        )
    }

    /// One grid's figures: the barrier in a plain and a cooperative launch, against the
    /// kernel boundary launched and in a graph.
    fn grid_cost(
        &self,
        barrier: &DeviceGridBarrier,
        timer: &mut Timer,
        blocks: u32,
        what: &'static str,
    ) -> Result<BarrierCost> {
        let cfg = LaunchConfig::linear(blocks, THREADS);
        Ok(BarrierCost {
            blocks,
            what,
            grid_barrier_us: self.bare(barrier, cfg, LaunchMode::Plain)?,
            cooperative_us: self.bare(barrier, cfg, LaunchMode::Cooperative)?,
            empty_launch_us: self.empty_launches(timer, cfg)?,
            graph_kernel_us: self.graph_kernels(timer, cfg)?,
        })
    }

    /// The barrier at `blocks` with one arrival layout and poll sleep.
    fn layout_cost(
        &self,
        barrier: &mut DeviceGridBarrier,
        blocks: u32,
        (arrival, sleep): (Arrival, u32),
    ) -> Result<GroupCost> {
        barrier.set_arrival(arrival);
        barrier.set_poll_sleep(PollSleep::Ns(sleep));
        let cfg = LaunchConfig::linear(blocks, THREADS);
        Ok(GroupCost {
            blocks,
            group_blocks: match arrival {
                Arrival::Groups(g) => Some(g),
                _ => None,
            },
            effective_group_blocks: arrival.group_size(blocks),
            poll_sleep_ns: sleep,
            us: self.bare(barrier, cfg, LaunchMode::Plain)?,
        })
    }
}

/// Runs the benchmark; `progress` is called with (figures done, figures).
///
/// # Errors
/// [`Error::Unsupported`] on the simulator or a device without cooperative launch;
/// [`Error::InvalidInput`] for zero rounds or trials; [`Error::BarrierTimeout`] if a barrier
/// gave up; a driver error.
pub fn run(
    target: &Target,
    rounds: u32,
    trials: u32,
    mut progress: impl FnMut(u32, u32),
) -> Result<BarrierBench> {
    let gpu = require_gpu(target)?;
    if rounds == 0 || trials == 0 || rounds > MAX_ROUNDS || trials > MAX_TRIALS {
        return Err(Error::InvalidInput(format!(
            "the rounds ({rounds}) and the trials ({trials}) must be between 1 and {MAX_ROUNDS} \
             and {MAX_TRIALS}: every round is a barrier, a queued launch and a graph node"
        )));
    }
    let sms = gpu.info().sm_count;
    let largest = check_coresident(
        target,
        "grid_barrier_bare",
        &LaunchConfig::linear(1, THREADS),
    )?;
    let mut barrier = DeviceGridBarrier::new(target)?;
    let mut timer = Timer::new()?;
    let figures = Figures {
        gpu,
        target,
        trials,
        rounds,
    };
    let shapes = [(sms, "1 block per SM"), (largest, "largest co-resident")];
    // The layouts at 1, 4, 6, 7 and 8 blocks per SM and at the largest grid: around where the
    // automatic choice switches.
    let group_grids = [
        sms,
        (4 * sms).min(largest),
        (6 * sms).min(largest),
        (7 * sms).min(largest),
        (8 * sms).min(largest),
        largest,
    ];
    let steps = (shapes.len() + group_grids.len() * LAYOUTS.len()) as u32;
    let mut grids = Vec::new();
    for (i, &(blocks, what)) in shapes.iter().enumerate() {
        grids.push(figures.grid_cost(&barrier, &mut timer, blocks, what)?);
        progress(i as u32 + 1, steps);
    }
    let mut groups = Vec::new();
    for &blocks in &group_grids {
        for &layout in &LAYOUTS {
            groups.push(figures.layout_cost(&mut barrier, blocks, layout)?);
            progress(groups.len() as u32 + shapes.len() as u32, steps);
        }
    }
    barrier.set_arrival(Arrival::Auto);
    barrier.set_poll_sleep(PollSleep::Auto);
    Ok(BarrierBench {
        device: gpu.info().name.clone(),
        rounds,
        trials,
        grids,
        groups,
    })
}
