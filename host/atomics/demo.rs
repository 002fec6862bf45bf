//! `gridsync atomics`: CUDA's table of atomic functions, each checked on the target, then the
//! CUDA book's `double` add from `atomicCAS` next to the native one — both checked, and timed
//! with and without contention where the target is a GPU.

use super::cases::CheckShape;
use super::f64_add::{self, F64Add, F64AddCheck, F64AddShape, F64AddThroughput, F64Inputs};
use super::table::{self, Row};
use super::throughput::Layout;
use super::throughput::THREADS_PER_BLOCK;
use crate::runtime::error::Result;
use crate::runtime::grid::full_gpu_blocks;
use crate::runtime::launch::Target;
use serde::Serialize;

/// The simulator's table shape: two blocks of two warps on one address (block-scope cases run
/// one block); small, since each simulated thread is an OS thread and the table runs 768 cases.
pub const SIM_TABLE_SHAPE: CheckShape = CheckShape::new(2, 64, 1);
/// The simulator's `f64` grid: 4 blocks of 64 threads, 8 additions each, no time budget.
pub const SIM_F64_SHAPE: (u32, u32, u32) = (4, 64, 8);
/// The layouts the `f64` additions are checked and timed on: every thread on one word, a warp
/// per word, a word per thread.
pub const F64_LAYOUTS: [Layout; 3] = [Layout::Grid, Layout::Warp, Layout::Thread];

/// Options for [`run`].
#[derive(Clone, Copy, Debug)]
pub struct DemoOptions {
    /// The seed of every input; the same seed replays the same inputs.
    pub seed: u64,
    /// `f64` additions per thread in the GPU checks (the simulator does [`SIM_F64_SHAPE`]'s).
    pub f64_iters: u32,
    /// Each thread's time budget in the GPU's `f64` checks and timings, in milliseconds: with
    /// every thread of the GPU on one word the CAS loop completes only about 150 thousand
    /// additions a second, so it stops at the budget (and the check covers the additions done).
    pub budget_ms: u32,
    /// Timed launches per `f64` throughput figure.
    pub trials: u32,
}

impl Default for DemoOptions {
    fn default() -> Self {
        DemoOptions {
            seed: 1,
            f64_iters: 16,
            budget_ms: 20,
            trials: 10,
        }
    }
}

/// The `f64` part of the demo.
#[derive(Clone, Debug, Serialize)]
pub struct F64Demo {
    /// Both additions × both kinds of input × every layout, against the float64 reference.
    pub checks: Vec<F64AddCheck>,
    /// Both additions on every layout, on a GPU; empty on the simulator.
    pub throughput: Vec<F64AddThroughput>,
    /// Why there is no throughput, if there is none.
    pub throughput_skipped: Option<String>,
}

/// What `gridsync atomics` shows.
#[derive(Clone, Debug, Serialize)]
pub struct AtomicsDemo {
    /// Where it ran.
    pub target: String,
    /// The seed of every input.
    pub seed: u64,
    /// The table's check shape.
    pub shape: CheckShape,
    /// One row per CUDA function.
    pub table: Vec<Row>,
    /// The `double` add two ways.
    pub f64_add: F64Demo,
}

/// Runs the demo; `progress` is called with (done, total) steps.
///
/// # Errors
/// A launch or driver error; [`crate::Error::Mismatch`] if an `f64` addition is off its
/// reference (a table case that fails is counted in its row instead).
pub fn run(
    target: &Target,
    opts: DemoOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<AtomicsDemo> {
    let (shape, (f64_blocks, f64_threads, f64_iters), budget_ns) = match target {
        Target::Sim => (SIM_TABLE_SHAPE, SIM_F64_SHAPE, 0),
        Target::Gpu(gpu) => {
            let sms = gpu.info().sm_count;
            let blocks = full_gpu_blocks(gpu, THREADS_PER_BLOCK, None)?;
            (
                CheckShape::new(sms, THREADS_PER_BLOCK, 1),
                (blocks, THREADS_PER_BLOCK, opts.f64_iters),
                opts.budget_ms as u64 * 1_000_000,
            )
        }
    };
    let cases = super::all_cases().len() as u32;
    let timed = if target.is_sim() { 0 } else { 6 };
    let total = cases + 12 + timed;
    let table = table::table(target, &shape, opts.seed, |done, _| progress(done, total))?;

    let threads = f64_blocks.saturating_mul(f64_threads);
    let mut checks = Vec::new();
    let mut step = cases;
    for layout in F64_LAYOUTS {
        let f64_shape = F64AddShape {
            blocks: f64_blocks,
            threads_per_block: f64_threads,
            threads_per_address: layout.threads_per_address(threads, f64_threads),
            iters: f64_iters,
            budget_ns,
        };
        for inputs in [F64Inputs::Integers, F64Inputs::Random] {
            for kind in F64Add::ALL {
                checks.push(f64_add::check(target, kind, inputs, &f64_shape, opts.seed)?);
                step += 1;
                progress(step, total);
            }
        }
    }
    let mut throughput = Vec::new();
    let throughput_skipped = match target {
        Target::Sim => Some("the simulator says nothing about speed".to_string()),
        Target::Gpu(_) => {
            for layout in F64_LAYOUTS {
                for kind in F64Add::ALL {
                    throughput.push(f64_add::f64_add_throughput(
                        target,
                        kind,
                        layout,
                        opts.budget_ms,
                        opts.trials,
                    )?);
                    step += 1;
                    progress(step, total);
                }
            }
            None
        }
    };
    Ok(AtomicsDemo {
        target: target.describe(),
        seed: opts.seed,
        shape,
        table,
        f64_add: F64Demo {
            checks,
            throughput,
            throughput_skipped,
        },
    })
}
