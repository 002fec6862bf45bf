//! `gridsync bench atomics`: atomic operations per second on a full GPU — shared against global
//! memory, one contended address against spread ones, block against device against system
//! scope — and the `double` add from `atomicCAS` against the native one.
//!
//! Every configuration of [`all_configs`] runs on the full-GPU shape (SM count × blocks per SM ×
//! 256 threads, each doing `iters` operations): one checked launch on zeroed words
//! ([`throughput::check`]: every count must come out exact, so a measurement of a kernel that
//! does the wrong thing cannot pass), two warm-up launches, then `trials` event-timed launches.
//! ops/s = threads × iters / median time. The words are not reset between timed launches; what
//! they hold does not change the work.
//!
//! The ratios state what scope costs: for each operation and layout, system/device and
//! device/block throughput on global memory, and shared/global at block scope.
//!
//! The `double` adds ([`f64_add_throughput`]) run for a time budget instead of a number of
//! operations: with every thread of a GPU on one word the CAS loop completes only about 150
//! thousand additions a second (H200), so a fixed count would take minutes; each launch reports
//! how many additions its threads completed.

use super::{Stats, require_gpu};
use gpu::atomic::Scope;
use gridsync::atomics::throughput::{
    self, BenchOp, Layout, Memory, ThroughputConfig, ThroughputShape, all_configs,
};
use gridsync::runtime::device::Gpu;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use gridsync::runtime::timer::Timer;
use serde::Serialize;

pub use gridsync::atomics::f64_add::{F64AddThroughput, f64_add_throughput};
pub use gridsync::atomics::throughput::{THREADS_PER_BLOCK, WARMUPS};
pub use gridsync::runtime::grid::full_gpu_blocks;

/// Options for [`run`].
#[derive(Clone, Copy, Debug)]
pub struct AtomicsBenchOptions {
    /// Operations per thread per launch.
    pub iters: u32,
    /// Timed launches per configuration.
    pub trials: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Blocks per SM; `None`: as many as the SM holds (`max_threads_per_sm / threads_per_block`).
    pub blocks_per_sm: Option<u32>,
}

impl Default for AtomicsBenchOptions {
    fn default() -> Self {
        AtomicsBenchOptions {
            iters: 64,
            trials: 10,
            threads_per_block: THREADS_PER_BLOCK,
            blocks_per_sm: None,
        }
    }
}

/// One measured configuration.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// What was measured.
    #[serde(flatten)]
    pub config: ThroughputConfig,
    /// The instruction, as the kernel's PTX spells it: `atom.relaxed.gpu.add.u32`.
    pub ptx: String,
    /// Threads sharing each word.
    pub threads_per_address: u32,
    /// Words in use (in all blocks, for shared memory).
    pub words: usize,
    /// Operations per launch (CAS: attempts).
    pub ops_per_launch: u64,
    /// Milliseconds per launch.
    pub ms: Stats,
    /// Operations per second at the median time.
    pub ops_per_s: f64,
    /// CAS only: the fraction of attempts that succeeded, in the checked launch.
    pub cas_success: Option<f64>,
}

/// What scope and memory cost, for one operation and layout: ratios of ops/s.
#[derive(Clone, Debug, Serialize)]
pub struct Ratios {
    /// The operation.
    pub op: BenchOp,
    /// The layout.
    pub layout: Layout,
    /// Global memory, system scope over device scope (below 1: system is slower).
    pub system_over_device: Option<f64>,
    /// Global memory, device scope over block scope.
    pub device_over_block: Option<f64>,
    /// Block scope, shared memory over global memory.
    pub shared_over_global: Option<f64>,
}

/// The benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct AtomicsBench {
    /// The device.
    pub device: String,
    /// The grid and the operations per thread.
    pub shape: ThroughputShape,
    /// Timed launches per configuration.
    pub trials: u32,
    /// One per configuration.
    pub rows: Vec<Row>,
    /// Per operation and layout.
    pub ratios: Vec<Ratios>,
}

/// Times `launch` `trials` times on the GPU's stream after [`WARMUPS`] untimed launches;
/// milliseconds.
fn time_launches(gpu: &Gpu, trials: u32, mut launch: impl FnMut() -> Result<()>) -> Result<Stats> {
    for _ in 0..WARMUPS {
        launch()?;
    }
    gpu.synchronize()?;
    let mut timer = Timer::new()?;
    let mut ms = Vec::new();
    for _ in 0..trials {
        ms.push(timer.time(gpu.stream(), &mut launch)? as f64);
    }
    Stats::of(&ms)
}

/// The PTX of `config`'s kernel: `atom.relaxed.gpu.add.u32`.
pub fn ptx_of(config: &ThroughputConfig) -> String {
    let (kind, rest) = config.op.ptx().split_once('.').unwrap_or(("atom", ""));
    format!("{kind}.relaxed.{}.{rest}", config.scope.ptx())
}

/// Runs every configuration; `progress` is called with (done, total) configurations.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for zero iters or trials or a
/// bad shape; [`Error::Mismatch`] if a checked launch counts wrong; a driver error.
pub fn run(
    target: &Target,
    opts: AtomicsBenchOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<AtomicsBench> {
    let gpu = require_gpu(target)?;
    if opts.trials == 0 {
        return Err(Error::InvalidInput("trials must be positive".into()));
    }
    let shape = ThroughputShape {
        blocks: full_gpu_blocks(gpu, opts.threads_per_block, opts.blocks_per_sm)?,
        threads_per_block: opts.threads_per_block,
        iters: opts.iters,
    };
    let configs = all_configs();
    let mut rows = Vec::with_capacity(configs.len());
    for (k, config) in configs.iter().enumerate() {
        let checked = throughput::check(target, config, &shape)?;
        let bufs = throughput::buffers(target, config, &shape)?;
        let ms = time_launches(gpu, opts.trials, || {
            throughput::launch(target, config, &shape, &bufs)
        })?;
        rows.push(Row {
            config: *config,
            ptx: ptx_of(config),
            threads_per_address: config.threads_per_address(&shape),
            words: checked.words,
            ops_per_launch: shape.ops(),
            ms,
            ops_per_s: shape.ops() as f64 / (ms.median * 1e-3),
            cas_success: checked.cas_success,
        });
        progress(k as u32 + 1, configs.len() as u32);
    }
    let ratios = ratios(&rows);
    Ok(AtomicsBench {
        device: target.describe(),
        shape,
        trials: opts.trials,
        rows,
        ratios,
    })
}

/// The ratios of [`Ratios`] for every operation and layout that has at least one.
pub fn ratios(rows: &[Row]) -> Vec<Ratios> {
    let rate = |op, memory, scope, layout| {
        rows.iter()
            .find(|r| {
                r.config
                    == ThroughputConfig {
                        op,
                        memory,
                        scope,
                        layout,
                    }
            })
            .map(|r| r.ops_per_s)
    };
    let over = |a: Option<f64>, b: Option<f64>| Some(a? / b?);
    let mut out = Vec::new();
    for op in BenchOp::ALL {
        for layout in Layout::ALL {
            let global = |s| rate(op, Memory::Global, s, layout);
            let r = Ratios {
                op,
                layout,
                system_over_device: over(global(Scope::System), global(Scope::Device)),
                device_over_block: over(global(Scope::Device), global(Scope::Block)),
                shared_over_global: over(
                    rate(op, Memory::Shared, Scope::Block, layout),
                    global(Scope::Block),
                ),
            };
            if r.system_over_device.is_some()
                || r.device_over_block.is_some()
                || r.shared_over_global.is_some()
            {
                out.push(r);
            }
        }
    }
    out
}
