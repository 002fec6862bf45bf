//! A barrier over the blocks of several grids running at once — on one GPU, or one grid per GPU
//! of a node, its state in one GPU's memory mapped into the others (peer access).
//!
//! CUDA once had this as cooperative groups' `this_multi_grid().sync()` with
//! `cudaLaunchCooperativeKernelMultiDevice`; both were removed in CUDA 12. What they did is an
//! arrival counter at system scope, which is what this is: the same counting as
//! [`GridBarrier`](crate::grid::GridBarrier) (one word whose adds sum to 2³¹ per barrier, a
//! generation bit that flips at the last arrival), with the grids' blocks numbered one after
//! another and the scope a parameter.
//!
//! The scope must cover every participant: [`Scope::System`] when the grids are on different
//! GPUs. With [`Scope::Device`] across GPUs the arrivals and the polls are still atomic where
//! the word lives, but the release and acquire no longer order the blocks' other writes for a
//! thread of the other GPU — a data race in the PTX memory model (`gridsync multi barrier`
//! runs both scopes and counts what device scope breaks).

use super::atomic::{LoadOrder, Scope, StoreOrder, load, red_add};
use super::grid::{BarrierError, DEFAULT_TIMEOUT_NS, arrival, block_leader, wait_for_generation};
use super::mem::Ptr;

/// The memory behind a [`MultiGridBarrier`]: the arrival word, the number of blocks of all the
/// grids, the bound, and the error word on a line of its own.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiGridBarrierState {
    /// Low 31 bits: blocks arrived at the current barrier; bit 31: the generation. Zero before
    /// the launches.
    pub arrived: u32,
    /// Blocks of all the grids together (at least 1, below 2³¹).
    pub blocks: u32,
    /// Nanoseconds a block may wait before giving up.
    pub timeout_ns: u64,
    _pad: [u32; 28],
    /// Blocks that gave up, on any GPU. Non-zero after the launches means they failed.
    pub timeouts: u32,
    _pad2: [u32; 31],
}

const _: () = assert!(size_of::<MultiGridBarrierState>() == 256);

impl MultiGridBarrierState {
    /// A barrier for `blocks` blocks in all, none arrived, with this bound.
    pub const fn new(blocks: u32, timeout_ns: u64) -> MultiGridBarrierState {
        MultiGridBarrierState {
            arrived: 0,
            blocks,
            timeout_ns,
            _pad: [0; 28],
            timeouts: 0,
            _pad2: [0; 31],
        }
    }

    /// A barrier for `blocks` blocks with the default bound (1 s).
    pub const fn with_blocks(blocks: u32) -> MultiGridBarrierState {
        MultiGridBarrierState::new(blocks, DEFAULT_TIMEOUT_NS)
    }
}

/// A barrier for every thread of several grids, reusable any number of times in one launch.
///
/// Scope: the one given to [`MultiGridBarrier::from_ptr`]. CUDA: `this_multi_grid().sync()`
/// (CUDA 11). PTX: `bar.sync 0`; thread 0 of each block `red.release.sys.add.u32` on the
/// arrival word and polls it with `ld.acquire.sys.b32` (`.gpu` for device scope); then
/// `bar.red.or.pred` hands the verdict to the block.
///
/// # Memory ordering
///
/// With a scope that covers every grid: everything any thread of any grid did before its call
/// happens-before everything every thread of every grid does after the call returns `Ok` — the
/// chain of [`GridBarrier`](crate::grid::GridBarrier), at this scope.
///
/// # Preconditions
///
/// - every block of every grid is resident at once, and the grids run at the same time
///   (cooperative launches, issued together);
/// - every thread calls `sync` the same number of times, in uniform control flow;
/// - `rank` numbers the blocks of all grids `0..blocks` once each (grid `g`'s blocks after
///   those of grids `0..g`); the state was reset before the launches.
///
/// # Bounded
///
/// Past the state's `timeout_ns` a waiting block adds itself to the error word and returns
/// [`BarrierError::TimedOut`]; blocks that see the error word return
/// [`BarrierError::Abandoned`]; later calls fail at once. A grid that never started (its launch
/// failed) makes the others fail instead of hang.
#[derive(Debug)]
pub struct MultiGridBarrier {
    state: *mut MultiGridBarrierState,
    scope: Scope,
    /// This block's number among all grids' blocks.
    rank: u32,
    /// Blocks of all grids (read once).
    blocks: u32,
    /// Barriers entered by this handle.
    passed: u32,
    /// The generation bit when the launch began.
    start: u32,
    failed: bool,
}

impl MultiGridBarrier {
    /// A handle for the block numbered `rank` among all grids' blocks, arriving and waiting at
    /// `scope` ([`Scope::Block`], which cannot cover two blocks, is taken as
    /// [`Scope::Device`]).
    ///
    /// # Safety
    /// `state` points to a [`MultiGridBarrierState`] in memory every grid reaches (one GPU's
    /// memory, mapped into the others), reset before the launches, touched only through these
    /// handles meanwhile, one per thread; the preconditions of the type hold.
    #[inline(always)]
    pub unsafe fn from_ptr(
        state: *mut MultiGridBarrierState,
        scope: Scope,
        rank: u32,
    ) -> MultiGridBarrier {
        let scope = match scope {
            Scope::Block => Scope::Device,
            s => s,
        };
        // SAFETY: the caller's contract; `blocks` is written before the launches only, and the
        // arrival word cannot move before this block arrives (no barrier completes without it).
        let (blocks, start) = unsafe {
            (
                Ptr::new(&raw mut (*state).blocks).load(),
                load(&raw mut (*state).arrived, scope, LoadOrder::Relaxed),
            )
        };
        MultiGridBarrier {
            state,
            scope,
            rank,
            blocks,
            passed: 0,
            start: start & super::grid::GENERATION_BIT,
            failed: false,
        }
    }

    /// Waits until every thread of every grid has called `sync` as many times as this one.
    ///
    /// # Errors
    /// [`BarrierError`] if this block, or another, waited past the timeout.
    #[inline(always)]
    pub fn sync(&mut self) -> Result<(), BarrierError> {
        if self.failed {
            return Err(BarrierError::Abandoned);
        }
        self.passed = self.passed.wrapping_add(1);
        // SAFETY: `from_ptr`'s contract.
        let verdict = block_leader(|| unsafe { self.arrive_and_wait() });
        self.failed = verdict.is_err();
        verdict
    }

    /// Thread 0's part: a release add, then acquire polls until the generation flips, bounded.
    ///
    /// # Safety
    /// As [`MultiGridBarrier::from_ptr`].
    #[inline(always)]
    unsafe fn arrive_and_wait(&self) -> Result<(), BarrierError> {
        use super::grid::GENERATION_BIT;
        // SAFETY: the caller's contract; raw field pointers only.
        let (arrived, timeouts) = unsafe {
            (
                &raw mut (*self.state).arrived,
                &raw mut (*self.state).timeouts,
            )
        };
        let target = if self.passed % 2 == 1 {
            self.start ^ GENERATION_BIT
        } else {
            self.start
        };
        let add = arrival(self.rank == 0, self.blocks.max(1));
        // SAFETY: as above; the arrival word is only accessed atomically.
        unsafe { red_add(arrived, add, self.scope, StoreOrder::Release) };
        // SAFETY: as above; the bound is only read.
        unsafe {
            wait_for_generation(
                arrived,
                target,
                self.scope,
                0,
                (timeouts, &raw const (*self.state).timeout_ns),
            )
        }
    }
}
