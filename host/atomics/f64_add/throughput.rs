//! The `double` additions timed on a full GPU: each thread adds for a time budget (with every
//! thread of a GPU on one word the CAS loop completes only about 150 thousand additions a
//! second on an H200, so a fixed count would take minutes), and each launch reports how many
//! additions its threads completed. `gridsync atomics` shows it; `gridsync bench atomics` runs it.

use super::{F64Add, F64AddBuffers, F64AddShape, F64Inputs, launch, values};
use crate::atomics::throughput::{Layout, THREADS_PER_BLOCK, WARMUPS};
use crate::runtime::error::{Error, Result};
use crate::runtime::grid::full_gpu_blocks;
use crate::runtime::launch::Target;
use crate::runtime::stats::{Stats, require_gpu};
use crate::runtime::timer::Timer;
use serde::Serialize;

/// Throughput of one `double` addition on one layout.
#[derive(Clone, Debug, Serialize)]
pub struct F64AddThroughput {
    /// Which addition.
    pub kind: F64Add,
    /// Threads per word: the whole grid, a warp, or one.
    pub layout: Layout,
    /// The grid and each thread's time budget.
    pub shape: F64AddShape,
    /// Milliseconds per launch.
    pub ms: Stats,
    /// Additions per second, one figure per timed launch: the additions the threads report,
    /// over the launch's event time (a CAS loop's failed attempts not counted).
    pub adds_per_s: Stats,
    /// The fewest additions one thread completed, in the last launch: 0 means some thread never
    /// got its CAS in.
    pub min_adds_per_thread: u32,
    /// The most additions one thread completed, in the last launch.
    pub max_adds_per_thread: u32,
}

/// Times `kind` on the full-GPU grid with `layout` ([`Layout::Grid`], [`Layout::Warp`] or
/// [`Layout::Thread`]): every thread adds for `budget_ms` (a CAS loop gives up mid-add at the
/// deadline), `trials` timed launches after [`WARMUPS`]. The values are the integers of
/// [`F64Inputs::Integers`].
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for zero trials or budget,
/// the [`Layout::Block`] layout or a bad shape; a driver error.
pub fn f64_add_throughput(
    target: &Target,
    kind: F64Add,
    layout: Layout,
    budget_ms: u32,
    trials: u32,
) -> Result<F64AddThroughput> {
    let gpu = require_gpu(target)?;
    if trials == 0 || budget_ms == 0 || layout == Layout::Block {
        return Err(Error::InvalidInput(
            "f64 add throughput: trials and the budget must be positive; layouts grid, warp or thread"
                .into(),
        ));
    }
    let blocks = full_gpu_blocks(gpu, THREADS_PER_BLOCK, None)?;
    let threads = u32::try_from(blocks as u64 * THREADS_PER_BLOCK as u64)
        .map_err(|_| Error::InvalidInput(format!("{blocks} blocks: too many threads")))?;
    let shape = F64AddShape {
        blocks,
        threads_per_block: THREADS_PER_BLOCK,
        threads_per_address: layout.threads_per_address(threads, THREADS_PER_BLOCK),
        // The budget ends every thread's run; a count fits a u32 at any speed.
        iters: u32::MAX,
        budget_ns: budget_ms as u64 * 1_000_000,
    };
    let values = values(F64Inputs::Integers, 1);
    let bufs = F64AddBuffers::new(target, &shape, &values)?;
    for _ in 0..WARMUPS {
        launch(target, kind, &shape, &bufs)?;
    }
    gpu.synchronize()?;
    let mut timer = Timer::new()?;
    let (mut ms, mut rates) = (Vec::new(), Vec::new());
    let mut counts = Vec::new();
    for _ in 0..trials {
        let t = timer.time(gpu.stream(), || launch(target, kind, &shape, &bufs))? as f64;
        counts = target.download(&bufs.counts)?;
        let adds: u64 = counts.iter().map(|&c| c as u64).sum();
        ms.push(t);
        rates.push(adds as f64 / (t * 1e-3));
    }
    Ok(F64AddThroughput {
        kind,
        layout,
        shape,
        ms: Stats::of(&ms)?,
        adds_per_s: Stats::of(&rates)?,
        min_adds_per_thread: counts.iter().copied().min().unwrap_or(0),
        max_adds_per_thread: counts.iter().copied().max().unwrap_or(0),
    })
}
