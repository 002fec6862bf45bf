//! `gridsync bench scopes`: what ordering costs at block, device and system scope.
//!
//! `bench atomics` shows relaxed read-modify-writes cost the same at every scope (they are all
//! performed in L2). Ordering is where scope matters: a release store, an acquire-release add or
//! a `fence.sc` must wait until the thread's earlier writes are visible to the whole scope. This
//! runs `gpu::bench::atomics::ordering_cost_{block,device,system}` on the full-GPU shape (SM count
//! × 4 blocks × 256 threads), each thread repeating one operation `iters` times on its own word,
//! event-timed medians after a warm-up. ops/s = threads × iters / median time.

use super::{Stats, require_gpu};
use gpu::LaunchConfig;
use gpu::atomic::Scope;
use gpu::bench::atomics::{
    ORDERING_ACQ_REL_ADD, ORDERING_FENCE_SC, ORDERING_RELAXED_STORE, ORDERING_RELEASE_STORE,
};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use gridsync::runtime::timer::Timer;
use serde::Serialize;

/// Blocks per SM of the full-GPU shape.
const BLOCKS_PER_SM: u32 = 4;
/// Threads per block.
const THREADS: u32 = 256;

/// The operations measured, with their `kind` and name.
pub const KINDS: [(u32, &str); 4] = [
    (ORDERING_RELAXED_STORE, "relaxed store"),
    (ORDERING_RELEASE_STORE, "release store"),
    (ORDERING_ACQ_REL_ADD, "acq_rel add"),
    (ORDERING_FENCE_SC, "store + fence.sc"),
];

/// One operation at one scope.
#[derive(Clone, Debug, Serialize)]
pub struct ScopeCell {
    /// The operation.
    pub op: &'static str,
    /// `block`, `device` or `system`.
    pub scope: &'static str,
    /// Milliseconds per launch.
    pub ms: Stats,
    /// Operations per second (all threads), in billions.
    pub g_ops_per_s: f64,
    /// Nanoseconds per operation for one thread (time / iters).
    pub ns_per_op_per_thread: f64,
}

/// The benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct ScopesBench {
    /// The device.
    pub device: String,
    /// Threads launched.
    pub threads: u64,
    /// Operations per thread per launch.
    pub iters: u32,
    /// Every operation at every scope.
    pub cells: Vec<ScopeCell>,
}

impl ScopesBench {
    /// Throughput at `a` over throughput at `b` for `op` (e.g. device over system): how many
    /// times cheaper `a` is.
    pub fn ratio(&self, op: &str, a: &str, b: &str) -> Option<f64> {
        let get = |s: &str| {
            self.cells
                .iter()
                .find(|c| c.op == op && c.scope == s)
                .map(|c| c.g_ops_per_s)
        };
        Some(get(a)? / get(b)?)
    }
}

fn scope_name(s: Scope) -> &'static str {
    match s {
        Scope::Block => "block",
        Scope::Device => "device",
        Scope::System => "system",
    }
}

/// Runs the benchmark.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for zero iterations or
/// trials; launch errors.
pub fn run(
    target: &Target,
    iters: u32,
    trials: u32,
    mut progress: impl FnMut(u32, u32),
) -> Result<ScopesBench> {
    let gpu = require_gpu(target)?;
    if iters == 0 || trials == 0 {
        return Err(Error::InvalidInput(
            "iterations and trials must be positive".into(),
        ));
    }
    let cfg = LaunchConfig::linear(gpu.info().sm_count * BLOCKS_PER_SM, THREADS);
    let threads = cfg.grid.count() * cfg.block.count();
    let slots = target.zeros::<u32>(threads as usize)?;
    let s = slots.ptr();
    let mut timer = Timer::new()?;
    let mut cells = Vec::new();
    let total = (KINDS.len() * Scope::ALL.len()) as u32;
    for (kind, op) in KINDS {
        for scope in Scope::ALL {
            let launch = || {
                // SAFETY: `slots` has one u32 per thread of `cfg` and outlives the timed
                // launches (the timer waits for each).
                unsafe {
                    match scope {
                        Scope::Block => gridsync::launch!(
                            target,
                            gpu::bench::atomics::ordering_cost_block,
                            cfg,
                            (s, iters, kind)
                        ),
                        Scope::Device => gridsync::launch!(
                            target,
                            gpu::bench::atomics::ordering_cost_device,
                            cfg,
                            (s, iters, kind)
                        ),
                        Scope::System => gridsync::launch!(
                            target,
                            gpu::bench::atomics::ordering_cost_system,
                            cfg,
                            (s, iters, kind)
                        ),
                    }
                }
            };
            launch()?;
            target.synchronize()?;
            let mut ms = Vec::new();
            for _ in 0..trials {
                ms.push(timer.time(gpu.stream(), launch)? as f64);
            }
            let stats = Stats::of(&ms)?;
            cells.push(ScopeCell {
                op,
                scope: scope_name(scope),
                ms: stats,
                g_ops_per_s: threads as f64 * iters as f64 / (stats.median * 1e-3) / 1e9,
                ns_per_op_per_thread: stats.median * 1e6 / iters as f64,
            });
            progress(cells.len() as u32, total);
        }
    }
    Ok(ScopesBench {
        device: target.describe(),
        threads,
        iters,
        cells,
    })
}
