//! Split-phase barriers (`mbarrier`, sm_90): the relay of `gpu/src/lessons/mbarrier.rs` with
//! `sync_threads`, split into arrive and wait, and the three ways to get the split wrong — each
//! run, its stale reads counted, its timeout reported, and (on a GPU) timed.
//!
//! Beyond the sources: Hopper's `mbarrier` (CUDA's `cuda::barrier`). Device code and the
//! table of what each kernel does: `gpu/src/lessons/mbarrier.rs`.

use crate::runtime::args::KernelRef;
use crate::runtime::error::{Error, Result};
use crate::runtime::grid::one_block_per_sm;
use crate::runtime::launch::Target;
use crate::runtime::timer::Timer;
use crate::runtime::wait::wait_bound;
use gpu::LaunchConfig;
use gpu::lessons::mbarrier::{RELAY_THREADS_PER_BLOCK, relay_shared_bytes};
use serde::Serialize;

/// How long the correct kernels' waits may take before they count as timed out: far above any
/// real phase (stretched under a sanitizer: [`wait_bound`]).
pub const TIMEOUT_NS: u64 = 1_000_000_000;
/// The bound of the broken kernels' waits: short, since the deadlock is certain to reach it
/// (kept short under a sanitizer too).
pub const DEADLOCK_TIMEOUT_NS: u64 = 10_000_000;
/// Timed launches per kernel on a GPU.
pub const TRIALS: u32 = 10;

/// The relay kernels, in the lesson's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RelayKernel {
    /// Write, `sync_threads`, work, read.
    SyncThreads,
    /// Write, arrive, work, wait, read.
    Split,
    /// Write, arrive, read, work, wait: the read is too early.
    NoWait,
    /// Waits by a parity it never moves on: odd rounds pass at once.
    StuckParity,
    /// Waits before arriving: a deadlock, bounded.
    WaitBeforeArrive,
}

impl RelayKernel {
    /// All, in order.
    pub const ALL: [RelayKernel; 5] = [
        RelayKernel::SyncThreads,
        RelayKernel::Split,
        RelayKernel::NoWait,
        RelayKernel::StuckParity,
        RelayKernel::WaitBeforeArrive,
    ];

    /// The kernel's name.
    pub const fn name(self) -> &'static str {
        match self {
            RelayKernel::SyncThreads => "relay_sync_threads",
            RelayKernel::Split => "relay_split",
            RelayKernel::NoWait => "relay_no_wait",
            RelayKernel::StuckParity => "relay_stuck_parity",
            RelayKernel::WaitBeforeArrive => "relay_wait_before_arrive",
        }
    }

    /// One line on what it does.
    pub const fn what(self) -> &'static str {
        match self {
            RelayKernel::SyncThreads => "write, sync_threads, work, read",
            RelayKernel::Split => "write, arrive, work, wait, read",
            RelayKernel::NoWait => "write, arrive, READ, work, wait (arriving is not waiting)",
            RelayKernel::StuckParity => {
                "waits for parity 0 every round (never moves it on): early passes, then a deadlock"
            }
            RelayKernel::WaitBeforeArrive => "waits for the phase before arriving at it",
        }
    }

    /// Whether the kernel is correct: no stale read, no timeout.
    pub const fn correct(self) -> bool {
        matches!(self, RelayKernel::SyncThreads | RelayKernel::Split)
    }
}

/// What [`run`] does.
#[derive(Clone, Copy, Debug)]
pub struct MbarrierOptions {
    /// Rounds of the relay per launch.
    pub rounds: u32,
    /// Independent operations per thread between writing and reading.
    pub work: u32,
    /// Blocks; `None`: one per SM on a GPU, 2 on the simulator.
    pub blocks: Option<u32>,
}

impl MbarrierOptions {
    /// 10 000 rounds on a GPU, 50 on the simulator; 64 operations of work.
    pub fn for_target(target: &Target) -> MbarrierOptions {
        MbarrierOptions {
            rounds: if target.is_sim() { 50 } else { 10_000 },
            work: 64,
            blocks: None,
        }
    }
}

/// One kernel's run.
#[derive(Clone, Debug, Serialize)]
pub struct RelayRun {
    /// Which kernel.
    pub kernel: RelayKernel,
    /// Its name.
    pub name: &'static str,
    /// What it does.
    pub what: &'static str,
    /// Reads of a partner's slot that found an older round's value (first launch).
    pub stale_reads: u64,
    /// Reads made: threads × rounds.
    pub reads: u64,
    /// Whether a wait gave up (the deadlock's bound).
    pub timed_out: bool,
    /// Median event time of a launch, ms (GPU, correct kernels only).
    pub ms: Option<f64>,
}

/// The lesson's result.
#[derive(Clone, Debug, Serialize)]
pub struct MbarrierReport {
    /// Where it ran.
    pub target: String,
    /// Blocks.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// Rounds per launch.
    pub rounds: u32,
    /// Operations of independent work per round.
    pub work: u32,
    /// Every kernel.
    pub runs: Vec<RelayRun>,
}

/// Queues one launch of `kernel` with `opts`, counting into `words` (stale reads, timed out,
/// sink).
fn launch(
    target: &Target,
    kernel: RelayKernel,
    cfg: LaunchConfig,
    opts: &MbarrierOptions,
    words: &crate::Buffer<u32>,
) -> Result<()> {
    let timeout = wait_bound(if kernel.correct() {
        TIMEOUT_NS
    } else {
        DEADLOCK_TIMEOUT_NS
    });
    let (stale, err, sink) = (
        words.ptr(),
        words.ptr().wrapping_add(1),
        words.ptr().wrapping_add(2),
    );
    let (rounds, work) = (opts.rounds, opts.work);
    use gpu::lessons::mbarrier as k;
    let relay: KernelRef<(u32, u32, u64, *mut u32, *mut u32, *mut u32)> = match kernel {
        RelayKernel::SyncThreads => crate::kernel_ref!(k::relay_sync_threads),
        RelayKernel::Split => crate::kernel_ref!(k::relay_split),
        RelayKernel::NoWait => crate::kernel_ref!(k::relay_no_wait),
        RelayKernel::StuckParity => crate::kernel_ref!(k::relay_stuck_parity),
        RelayKernel::WaitBeforeArrive => crate::kernel_ref!(k::relay_wait_before_arrive),
    };
    // SAFETY: `words` holds the three words the kernels touch (atomically, but for the sink);
    // the shared memory is in `cfg`.
    unsafe { target.launch_ref(relay, cfg, (rounds, work, timeout, stale, err, sink)) }
}

/// Runs every relay kernel once, checked, and times the correct ones on a GPU.
///
/// # Errors
/// [`Error::Unsupported`] below compute capability 9.0; [`Error::InvalidInput`] for zero
/// rounds or blocks; [`Error::Mismatch`] if a correct kernel read a stale slot or timed out, or
/// the deadlock did not time out; a launch or driver error.
pub fn run(target: &Target, opts: &MbarrierOptions) -> Result<MbarrierReport> {
    run_kernels(target, opts, &RelayKernel::ALL)
}

/// [`run`] with only `kernels`, in their order (the checker runs each on its own).
///
/// # Errors
/// As [`run`].
pub fn run_kernels(
    target: &Target,
    opts: &MbarrierOptions,
    kernels: &[RelayKernel],
) -> Result<MbarrierReport> {
    target.require_kernel(
        gpu::Kernel::RelaySplit,
        "the mbarrier lesson needs compute capability 9.0 (sm_90)",
    )?;
    let blocks = opts.blocks.unwrap_or_else(|| one_block_per_sm(target));
    if opts.rounds == 0 || blocks == 0 {
        return Err(Error::InvalidInput(
            "rounds and blocks must be positive".into(),
        ));
    }
    let threads = if target.is_sim() {
        64
    } else {
        RELAY_THREADS_PER_BLOCK
    };
    let cfg = LaunchConfig::linear(blocks, threads).with_shared_bytes(relay_shared_bytes(threads));
    let words = target.zeros::<u32>(3)?;
    let mut timer = Timer::on(target)?;
    let mut runs = Vec::new();
    for &kernel in kernels {
        target.clear(&words)?;
        launch(target, kernel, cfg, opts, &words)?;
        target.synchronize()?;
        let w = target.download(&words)?;
        let (stale_reads, timed_out) = (w[0] as u64, w[1] != 0);
        let reads = blocks as u64 * threads as u64 * opts.rounds as u64;
        if kernel.correct() && (stale_reads > 0 || timed_out) {
            return Err(Error::Mismatch(format!(
                "{}: {stale_reads} stale reads, timed out: {timed_out}",
                kernel.name()
            )));
        }
        if kernel == RelayKernel::WaitBeforeArrive && !timed_out {
            return Err(Error::Mismatch(
                "relay_wait_before_arrive did not time out: its wait cannot complete".into(),
            ));
        }
        let ms = if kernel.correct() {
            Timer::median_ms_if(target, timer.as_mut(), TRIALS, || {
                launch(target, kernel, cfg, opts, &words)
            })?
        } else {
            None
        };
        runs.push(RelayRun {
            kernel,
            name: kernel.name(),
            what: kernel.what(),
            stale_reads,
            reads,
            timed_out,
            ms,
        });
    }
    Ok(MbarrierReport {
        target: target.describe(),
        blocks,
        threads_per_block: threads,
        rounds: opts.rounds,
        work: opts.work,
        runs,
    })
}
