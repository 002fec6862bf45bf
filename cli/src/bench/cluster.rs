//! `gridsync bench cluster`: what one cluster barrier costs (sm_90) — `cluster_sync` (arrive
//! with release, wait with acquire), the relaxed arrival, and the split barrier with work between
//! the arrival and the wait — for clusters of 2, 4, 8 and 16 blocks at 128 and 1024 threads per
//! block, over a full grid of resident clusters (`cuOccupancyMaxActiveClusters`).
//!
//! Then the cluster-aware grid barrier (`gpu::cluster::ClusterGridBarrier`: the cluster barrier,
//! then one arrival per cluster at the grid word) against `gpu::grid::GridBarrier` on the same
//! number of blocks, at about one block per SM and at the largest co-resident clustered grid.
//!
//! Each figure: `rounds` barriers in one launch, event-timed, the median of `trials` launches
//! after one warm-up, divided by `rounds` (the launch itself, a few µs, spread over them).
//! Reference in the same session: `scripts/reference_cluster.cu` (`cg::this_cluster().sync()`).

use super::{Stats, require_gpu};
use gpu::LaunchConfig;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use gridsync::runtime::timer::Timer;
use serde::Serialize;

/// Cluster sizes measured.
pub const CLUSTER_SIZES: [u32; 4] = [2, 4, 8, 16];
/// Threads per block measured: a small block, and a full one.
pub const THREADS: [u32; 2] = [128, 1024];
/// Barriers per launch by default.
pub const DEFAULT_ROUNDS: u32 = 1000;
/// Independent operations per thread between arrival and wait in the split figure.
pub const SPLIT_WORK: u32 = 64;

/// One shape.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterRow {
    /// Blocks per cluster.
    pub cluster_blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Blocks in the grid (resident clusters × cluster size).
    pub blocks: u32,
    /// `cluster_sync`: µs per barrier.
    pub sync_us: Stats,
    /// Relaxed arrival, acquire wait: µs per barrier.
    pub relaxed_us: Stats,
    /// Split barrier with [`SPLIT_WORK`] operations between arrival and wait: µs per round.
    pub split_us: Stats,
    /// The same work with the barrier in one piece (sync, then the work): µs per round.
    pub unsplit_us: Stats,
}

/// The cluster-aware grid barrier against the grid barrier at one grid.
#[derive(Clone, Debug, Serialize)]
pub struct GridRow {
    /// Blocks per cluster.
    pub cluster_blocks: u32,
    /// What the grid is: "about 1 block per SM" or "largest co-resident".
    pub what: &'static str,
    /// Blocks in the grid.
    pub blocks: u32,
    /// `ClusterGridBarrier` (cluster barrier, one arrival per cluster): µs per barrier.
    pub cluster_grid_us: Stats,
    /// `GridBarrier` over the same blocks, launched without clusters: µs per barrier.
    pub grid_us: Stats,
}

/// The benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct ClusterBench {
    /// The device.
    pub device: String,
    /// Barriers per launch.
    pub rounds: u32,
    /// Every shape.
    pub rows: Vec<ClusterRow>,
    /// The cluster-aware grid barrier, blocks of [`GRID_THREADS`] threads.
    pub grid_rows: Vec<GridRow>,
}

/// Threads per block of the grid-barrier comparison (as `gridsync bench barrier`).
pub const GRID_THREADS: u32 = 128;

/// Runs the benchmark; `progress` gets (shapes done, shapes).
///
/// # Errors
/// [`Error::Unsupported`] on the simulator or below compute capability 9.0;
/// [`Error::InvalidInput`] for zero rounds or trials; a driver error.
pub fn run(
    target: &Target,
    rounds: u32,
    trials: u32,
    mut progress: impl FnMut(u32, u32),
) -> Result<ClusterBench> {
    let gpu = require_gpu(target)?;
    if rounds == 0 || trials == 0 || rounds > 1_000_000 {
        return Err(Error::InvalidInput(format!(
            "rounds ({rounds}) must be 1 to 1000000 and trials ({trials}) positive"
        )));
    }
    let (major, minor) = gpu.info().compute_capability;
    if major < 9 {
        return Err(Error::Unsupported(format!(
            "thread block clusters need compute capability 9.0; this GPU is {major}.{minor}"
        )));
    }
    let mut timer = Timer::new()?;
    let out = target.zeros::<u32>(1)?;
    let mut rows = Vec::new();
    let shapes = CLUSTER_SIZES.len() * THREADS.len();
    for (k, (&n, &threads)) in CLUSTER_SIZES
        .iter()
        .flat_map(|n| THREADS.iter().map(move |t| (n, t)))
        .enumerate()
    {
        let probe = LaunchConfig::linear(n, threads).with_cluster(n.into());
        let clusters = gpu.max_active_clusters("cluster_sync_bare", &probe)?.max(1);
        let cfg = LaunchConfig {
            grid: (clusters * n).into(),
            ..probe
        };
        let mut time = |launch: &mut dyn FnMut() -> Result<()>| -> Result<Stats> {
            launch()?;
            target.synchronize()?;
            let mut us = Vec::new();
            for _ in 0..trials {
                let ms = timer.time(gpu.stream(), &mut *launch)?;
                us.push(ms as f64 * 1e3 / rounds as f64);
            }
            target.synchronize()?;
            Stats::of(&us)
        };
        // SAFETY (every launch below): the kernels take no memory but `out`, one word, and the
        // cluster shape was checked by the launch path.
        let sync_us = time(&mut || unsafe {
            gridsync::launch!(
                target,
                gpu::bench::cluster::cluster_sync_bare,
                cfg,
                (rounds,)
            )
        })?;
        let relaxed_us = time(&mut || unsafe {
            gridsync::launch!(
                target,
                gpu::bench::cluster::cluster_sync_relaxed,
                cfg,
                (rounds,)
            )
        })?;
        let split_us = time(&mut || unsafe {
            gridsync::launch!(
                target,
                gpu::bench::cluster::cluster_split,
                cfg,
                (rounds, SPLIT_WORK, out.ptr())
            )
        })?;
        let unsplit_us = time(&mut || unsafe {
            gridsync::launch!(
                target,
                gpu::bench::cluster::cluster_unsplit,
                cfg,
                (rounds, SPLIT_WORK, out.ptr())
            )
        })?;
        rows.push(ClusterRow {
            cluster_blocks: n,
            threads_per_block: threads,
            blocks: cfg.grid.x,
            sync_us,
            relaxed_us,
            split_us,
            unsplit_us,
        });
        progress(k as u32 + 1, shapes as u32);
    }
    let grid_rows = grid_rows(target, gpu, rounds, trials)?;
    Ok(ClusterBench {
        device: target.describe(),
        rounds,
        rows,
        grid_rows,
    })
}

/// [`ClusterGridBarrier`](gpu::cluster::ClusterGridBarrier) against
/// [`GridBarrier`](gpu::grid::GridBarrier) on the same number of blocks: for each cluster size,
/// about one block per SM (the largest multiple of the cluster size up to the SM count, capped
/// by what fits) and the largest co-resident clustered grid.
fn grid_rows(
    target: &Target,
    gpu: &gridsync::runtime::device::Gpu,
    rounds: u32,
    trials: u32,
) -> Result<Vec<GridRow>> {
    use gridsync::primitives::barrier::DeviceGridBarrier;
    use gridsync::runtime::launch::LaunchMode;
    let barrier = DeviceGridBarrier::new(target)?;
    let mut timer = Timer::new()?;
    let mut time = |launch: &mut dyn FnMut() -> Result<()>| -> Result<Stats> {
        launch()?;
        target.synchronize()?;
        barrier.check(target)?;
        let mut us = Vec::new();
        for _ in 0..trials {
            let ms = timer.time(gpu.stream(), &mut *launch)?;
            barrier.check(target)?; // a timed-out barrier is an error, not a time
            us.push(ms as f64 * 1e3 / rounds as f64);
        }
        Stats::of(&us)
    };
    let sms = gpu.info().sm_count;
    let mut rows = Vec::new();
    for &n in &CLUSTER_SIZES {
        let probe = LaunchConfig::linear(n, GRID_THREADS).with_cluster(n.into());
        let clusters = gpu
            .max_active_clusters("grid_barrier_cluster_bare", &probe)?
            .max(1);
        let shapes = [
            ((sms / n).clamp(1, clusters) * n, "about 1 block per SM"),
            (clusters * n, "largest co-resident"),
        ];
        for (blocks, what) in shapes {
            let clustered = LaunchConfig {
                grid: blocks.into(),
                ..probe
            };
            let plain = LaunchConfig::linear(blocks, GRID_THREADS);
            // SAFETY (both): the barrier's state is live for the launch, which `time`
            // synchronizes and checks before the state is reused.
            let cluster_grid_us = time(&mut || unsafe {
                gridsync::launch_grid_synced!(
                    target,
                    barrier,
                    gpu::bench::barrier::grid_barrier_cluster_bare,
                    clustered,
                    LaunchMode::Plain,
                    (barrier.ptr(), rounds)
                )
            })?;
            let grid_us = time(&mut || unsafe {
                gridsync::launch_grid_synced!(
                    target,
                    barrier,
                    gpu::bench::barrier::grid_barrier_bare,
                    plain,
                    LaunchMode::Plain,
                    (barrier.ptr(), rounds)
                )
            })?;
            rows.push(GridRow {
                cluster_blocks: n,
                what,
                blocks,
                cluster_grid_us,
                grid_us,
            });
        }
    }
    Ok(rows)
}
