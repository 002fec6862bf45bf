//! The data race and its atomic fix: `add_one` vs `add_one_atomic`.
//!
//! Source: Numba CUDA by example, part 4, examples 4.1–4.2. Device code: `gpu/src/lessons/race.rs`.

use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use gpu::LaunchConfig;
use serde::Serialize;

/// The source's launch: 10 blocks…
pub const BLOCKS: u32 = 10;
/// …of 16 threads.
pub const THREADS_PER_BLOCK: u32 = 16;

/// What one run of the race demo found.
#[derive(Clone, Debug, Serialize)]
pub struct RaceReport {
    /// Where it ran.
    pub target: String,
    /// Blocks launched.
    pub blocks: u32,
    /// Threads per block.
    pub threads_per_block: u32,
    /// The count if no update were lost: blocks × threads.
    pub expected: u32,
    /// `x[0]` after `add_one` (plain load + store): below `expected` when updates were lost.
    pub racy: u32,
    /// `x[0]` after `add_one_atomic`: always `expected`.
    pub atomic: u32,
    /// `x[0]` after `add_one_block_scope` (block-scope atomics on a counter every block
    /// shares): usually `expected` on a GPU, though PTX promises nothing — a scope race, which
    /// `gridsync check race` finds.
    pub block_scope: u32,
}

impl RaceReport {
    /// Updates the racy kernel lost.
    pub fn lost(&self) -> u32 {
        self.expected - self.racy.min(self.expected)
    }
}

/// Runs both kernels at the source's shape (10 × 16).
///
/// # Errors
/// A launch or copy error; [`Error::Mismatch`] if the atomic count is wrong.
pub fn run(target: &Target) -> Result<RaceReport> {
    run_shape(target, BLOCKS, THREADS_PER_BLOCK)
}

/// Runs both kernels with `blocks` × `threads_per_block` threads, each adding one to a counter
/// that starts at zero.
///
/// # Errors
/// [`Error::InvalidInput`] for an empty or oversized launch; a launch or copy error;
/// [`Error::Mismatch`] if the atomic count is not exactly the number of threads.
pub fn run_shape(target: &Target, blocks: u32, threads_per_block: u32) -> Result<RaceReport> {
    let expected = blocks.checked_mul(threads_per_block).ok_or_else(|| {
        Error::InvalidInput(format!(
            "{blocks} × {threads_per_block} threads overflow a u32 counter"
        ))
    })?;
    let cfg = LaunchConfig::linear(blocks, threads_per_block);

    // ANCHOR: launch
    let x = target.zeros::<u32>(1)?;
    // SAFETY: `x` holds one u32, the only element either kernel touches, and lives past the
    // launch (downloads synchronize first).
    unsafe { crate::launch!(target, gpu::lessons::race::add_one, cfg, (x.ptr()))? };
    let racy = target.download(&x)?[0];

    let x = target.zeros::<u32>(1)?;
    // SAFETY: as above.
    unsafe { crate::launch!(target, gpu::lessons::race::add_one_atomic, cfg, (x.ptr()))? };
    let atomic = target.download(&x)?[0];
    // ANCHOR_END: launch

    let x = target.zeros::<u32>(1)?;
    // SAFETY: as above.
    unsafe {
        crate::launch!(
            target,
            gpu::lessons::race::add_one_block_scope,
            cfg,
            (x.ptr())
        )?
    };
    let block_scope = target.download(&x)?[0];

    if atomic != expected {
        return Err(Error::Mismatch(format!(
            "add_one_atomic counted {atomic}, expected {expected}"
        )));
    }
    Ok(RaceReport {
        target: target.describe(),
        blocks,
        threads_per_block,
        expected,
        racy,
        atomic,
        block_scope,
    })
}

/// The explanation printed under the numbers.
pub const EXPLANATION: &str = "\
`x[0] = x[0] + 1` is a load, an add and a store. Threads that load before another thread's
store all read the same old value, add one, and store the same new value: their updates
overwrite each other and are lost. The atomic version makes load-add-store one indivisible
read-modify-write in the memory system (`atom.relaxed.gpu.add.u32`), so every increment counts.
On a GPU the 16 threads of a block run in lockstep and lose nearly everything; the simulator's
OS threads interleave less, so they lose fewer — but any loss at all is the bug.
A block-scope atomic (`atomicAdd_block`, `atom.cta`) is atomic only among its block's threads:
on a counter that every block shares PTX promises nothing, though today's GPUs, which perform
global atomics at L2 whatever the scope, usually count right. No run shows that bug; the
checker does, from the scopes alone: `gridsync check race`.";
