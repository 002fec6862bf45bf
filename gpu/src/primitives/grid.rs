//! The grid barrier: every thread of every block of one launch waits until all have arrived.
//!
//! CUDA has `__syncthreads` for a block and, for a grid, cooperative groups'
//! `this_grid().sync()`, which needs a cooperative launch. [`GridBarrier`] is the same barrier
//! over a state word the host owns (`gridsync::DeviceGridBarrier`), usable from a plain launch
//! or a cooperative one, reusable any number of times in one launch, and bounded: a block that
//! waits past the timeout leaves with an error instead of hanging the GPU.
//!
//! # The one precondition that no code can check on the device
//!
//! **Every block of the grid must be resident on the GPU at once.** Blocks that have arrived
//! spin until the last one does; if that one is still waiting for an SM that the spinning
//! blocks occupy, it never starts, and nobody leaves. The host checks the grid against the
//! occupancy calculator (blocks per SM × SMs) before every launch of a kernel that uses a grid
//! barrier; a cooperative launch is also refused by the driver when the grid is too large.
//!
//! The progression that leads here, from the article's counter barrier, is in
//! [`crate::lessons::barrier`].

use crate::atomic::{LoadOrder, Order, Scope, fetch_add, load};
use crate::index::{block_rank_in_grid, blocks_per_grid, thread_rank_in_block};
use crate::sync::{sync_threads, sync_threads_or};
use crate::time::globaltimer_ns;

/// Bit 31 of the arrival word: flips once per barrier, when the last block arrives.
pub const GENERATION_BIT: u32 = 0x8000_0000;

/// How long a block may wait at a grid barrier before giving up, when the host does not say:
/// far above any real barrier (microseconds), well below the simulator's 20 s deadlock limit
/// for the threads waiting at `sync_threads` behind the waiting thread.
pub const DEFAULT_TIMEOUT_NS: u64 = 1_000_000_000;

/// Polls of the arrival word between two looks at the clock and the error word: the clock and
/// the error word cost a load each, and a barrier usually completes in far fewer polls.
const POLLS_PER_CHECK: u32 = 32;

/// The device memory behind a [`GridBarrier`]: the arrival word, the error word and the bound.
///
/// Two 128-byte lines: the arrival word every block's thread 0 adds to and polls, and the
/// error word, apart so that looking at it adds no traffic to the arrival word's line.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridBarrierState {
    /// Low 31 bits: blocks that have arrived at the current barrier; bit 31
    /// ([`GENERATION_BIT`]): the barrier's generation. Zero before a launch.
    pub arrived: u32,
    _pad0: u32,
    /// Nanoseconds a block may wait before giving up.
    pub timeout_ns: u64,
    _pad: [u32; 28],
    /// Blocks that gave up. Non-zero after a launch means the launch failed.
    pub timeouts: u32,
    _pad2: [u32; 31],
}

const _: () = assert!(size_of::<GridBarrierState>() == 256);

impl GridBarrierState {
    /// A barrier no block has arrived at, with this bound.
    pub const fn new(timeout_ns: u64) -> GridBarrierState {
        GridBarrierState {
            arrived: 0,
            _pad0: 0,
            timeout_ns,
            _pad: [0; 28],
            timeouts: 0,
            _pad2: [0; 31],
        }
    }
}

impl Default for GridBarrierState {
    fn default() -> GridBarrierState {
        GridBarrierState::new(DEFAULT_TIMEOUT_NS)
    }
}

/// Why [`GridBarrier::sync`] returned without every block having arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierError {
    /// This block waited past the timeout: some block never arrived (not resident, exited
    /// early, or called the barrier fewer times).
    TimedOut,
    /// Another block already timed out, so this one did not wait; the launch is failing.
    Abandoned,
}

/// A barrier for every thread of the grid, reusable any number of times in one launch.
///
/// Scope: device (all blocks of the launch). CUDA: cooperative groups' `this_grid().sync()`.
/// PTX: `bar.sync 0`; then thread 0 of each block `atom.release.gpu.add.u32` on the arrival
/// word and polls it with `ld.acquire.gpu.b32`; then `bar.red.or.pred` hands its verdict to the
/// block.
///
/// # Memory ordering
///
/// Everything any thread of the grid did before its call happens-before everything every thread
/// does after the call returns `Ok`. The chain: `bar.sync` makes the block's writes visible to
/// its thread 0 (block scope, cumulative); thread 0's add releases them at device scope; the
/// other blocks' thread 0 acquire them with the load that sees the generation flip; their
/// `bar.sync` hands them on to their block. No `threadfence` is needed before or after.
///
/// # How it counts
///
/// One 32-bit word. Thread 0 of every block adds 1, except block 0, which adds
/// `2³¹ − (blocks − 1)`: the adds of one barrier sum to exactly 2³¹, so the low 31 bits return
/// to zero and bit 31 flips exactly once, at the last arrival, whatever the order. Each thread 0
/// remembers the bit it saw when it added and waits until the word's bit differs. The bit cannot
/// flip back before every block (the slowest waiter included) has arrived at the *next*
/// barrier, so a block that races ahead cannot release anyone early, and no reset is needed
/// between barriers.
///
/// # Preconditions
///
/// - every block of the grid is resident at once (module docs; the host checks it);
/// - every thread of every block calls `sync` the same number of times, in uniform control flow
///   (as `sync_threads` requires within a block);
/// - fewer than 2³¹ blocks; the state starts zeroed for each launch (the host resets it).
///
/// # Example
///
/// ```ignore
/// kernel! {
///     pub unsafe fn two_phases(data: *mut f32, state: *mut GridBarrierState) {
///         let barrier = unsafe { GridBarrier::from_ptr(state) };
///         // phase 1: every block writes its part of `data`
///         if barrier.sync().is_err() {
///             return; // a block never arrived; the host reports the timeout
///         }
///         // phase 2: any thread reads any block's part
///     }
/// }
/// ```
///
/// On the host: `DeviceGridBarrier::new(&target)?`, then `launch_grid_synced!` (which checks
/// that the grid fits at once and resets the state), then `barrier.check(&target)?`.
///
/// # Bounded
///
/// Past `timeout_ns` a waiting block adds itself to the error word and returns
/// [`BarrierError::TimedOut`] to all its threads; blocks that see the error word set return
/// [`BarrierError::Abandoned`], and every later call returns at once. The kernel should return
/// on an error; the host sees the error word and reports a timeout.
#[derive(Clone, Copy, Debug)]
pub struct GridBarrier {
    state: *mut GridBarrierState,
}

impl GridBarrier {
    /// A handle to the barrier whose state is at `state`. It owns nothing: dropping it frees
    /// nothing (the host's owner does, once).
    ///
    /// # Safety
    ///
    /// `state` points to a [`GridBarrierState`] in device memory (global memory on a GPU) that
    /// lives for the whole launch and is touched only through `GridBarrier` handles meanwhile.
    #[inline(always)]
    pub unsafe fn from_ptr(state: *mut GridBarrierState) -> GridBarrier {
        GridBarrier { state }
    }

    /// Waits until every thread of the grid has called `sync` as many times as this thread
    /// (see the type's docs for the ordering it gives and the preconditions).
    ///
    /// # Errors
    /// [`BarrierError`] if this block, or another, waited past the timeout. Every thread of the
    /// block gets the same answer.
    #[inline(always)]
    pub fn sync(&self) -> Result<(), BarrierError> {
        sync_threads();
        let mut verdict = Ok(());
        if thread_rank_in_block() == 0 {
            // SAFETY: `from_ptr`'s contract: the state is live device memory used only through
            // these handles.
            verdict = unsafe { self.arrive_and_wait() };
        }
        if sync_threads_or(verdict.is_err()) {
            // Threads other than 0 only learn that the block failed, not how.
            Err(verdict.err().unwrap_or(BarrierError::Abandoned))
        } else {
            Ok(())
        }
    }

    /// Thread 0's part: arrive with a release add, wait with acquire loads, bounded.
    ///
    /// # Safety
    /// As [`GridBarrier::from_ptr`].
    #[inline(always)]
    unsafe fn arrive_and_wait(&self) -> Result<(), BarrierError> {
        // SAFETY: the caller's contract; raw field pointers, no reference to shared memory.
        let (arrived, timeouts, timeout_ns) = unsafe {
            (
                &raw mut (*self.state).arrived,
                &raw mut (*self.state).timeouts,
                (*self.state).timeout_ns,
            )
        };
        // SAFETY: as above; the error word is only ever accessed atomically.
        if unsafe { load(timeouts, Scope::Device, LoadOrder::Relaxed) } != 0 {
            return Err(BarrierError::Abandoned);
        }
        let add = if block_rank_in_grid() == 0 {
            GENERATION_BIT - (blocks_per_grid() - 1)
        } else {
            1
        };
        // Release: the block's writes (handed to this thread by `bar.sync`) before the arrival.
        // SAFETY: as above; the arrival word is only ever accessed atomically.
        let old = unsafe { fetch_add(arrived, add, Scope::Device, Order::Release) };
        let start = globaltimer_ns();
        let mut polls = 0u32;
        loop {
            // Acquire: the load that sees the flip synchronizes with every block's release add.
            // SAFETY: as above.
            let now = unsafe { load(arrived, Scope::Device, LoadOrder::Acquire) };
            if (now ^ old) & GENERATION_BIT != 0 {
                return Ok(());
            }
            // The simulator's threads share a few cores: let the blocks being waited for run.
            #[cfg(not(target_arch = "nvptx64"))]
            std::thread::yield_now();
            polls += 1;
            if polls.is_multiple_of(POLLS_PER_CHECK) {
                // SAFETY: as above.
                if unsafe { load(timeouts, Scope::Device, LoadOrder::Relaxed) } != 0 {
                    return Err(BarrierError::Abandoned);
                }
                if globaltimer_ns().wrapping_sub(start) > timeout_ns {
                    // SAFETY: as above.
                    unsafe { fetch_add(timeouts, 1, Scope::Device, Order::Relaxed) };
                    return Err(BarrierError::TimedOut);
                }
            }
        }
    }
}
