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
//! blocks occupy, it never starts, and nobody leaves. `gridsync`'s `DeviceGridBarrier::launch`
//! (and `launch_grid_synced!`) checks the grid against the occupancy calculator (blocks per SM
//! × SMs) before every launch; a launch made another way is not checked. A cooperative launch
//! is also refused by the driver when the grid is too large. Past the bound, a block that never
//! comes is a timeout, not a hang.
//!
//! The progression that leads here, from the article's counter barrier, is in
//! [`crate::lessons::barrier`].

use crate::atomic::{LoadOrder, Order, Scope, StoreOrder, fetch_add, load, red_add};
use crate::index::{block_rank_in_grid, blocks_per_grid, thread_rank_in_block};
use crate::mem::Ptr;
use crate::sync::{sync_threads, sync_threads_or};
use crate::time::{globaltimer_ns, nanosleep};

/// Bit 31 of the arrival word: flips once per barrier, when the last block arrives.
pub const GENERATION_BIT: u32 = 0x8000_0000;

/// How long a block may wait at a grid barrier before giving up, when the host does not say:
/// far above any real barrier (microseconds), well below the simulator's 20 s deadlock limit
/// for the threads waiting at `sync_threads` behind the waiting thread.
pub const DEFAULT_TIMEOUT_NS: u64 = 1_000_000_000;

/// Polls of the arrival word between two looks at the clock and the error word: the clock and
/// the error word cost a load each, and a barrier usually completes in far fewer polls.
const POLLS_PER_CHECK: u32 = 32;

/// The most groups of the two-level barrier: one 128-byte line each.
pub const MAX_GROUPS: usize = 256;

/// How the blocks of a grid arrive at a [`GridBarrier`] — the state holds it as a word
/// ([`GridBarrierState::group_blocks`], [`Arrival::to_word`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The device chooses by the grid's size: one level below [`TWO_LEVEL_FROM_BLOCKS`]
    /// blocks, groups of [`DEFAULT_GROUP_BLOCKS`] from there. The default.
    Auto,
    /// One level: every block adds to the grid's word.
    OneLevel,
    /// In groups of this many blocks — one level where that is one block, the whole grid or
    /// more than [`MAX_GROUPS`] groups.
    Groups(u32),
}

/// [`Arrival::Auto`]'s word.
const ARRIVAL_AUTO: u32 = 0;
/// [`Arrival::OneLevel`]'s word.
const ARRIVAL_ONE_LEVEL: u32 = u32::MAX;

impl Arrival {
    /// The state's word for it: 0 for [`Arrival::Auto`], `u32::MAX` for one level, else the
    /// blocks per group (a group of at most one block is one level).
    pub const fn to_word(self) -> u32 {
        match self {
            Arrival::Auto => ARRIVAL_AUTO,
            Arrival::OneLevel | Arrival::Groups(0 | 1) => ARRIVAL_ONE_LEVEL,
            Arrival::Groups(g) => g,
        }
    }

    /// The arrival a state's word holds.
    #[inline(always)]
    pub const fn from_word(word: u32) -> Arrival {
        match word {
            ARRIVAL_AUTO => Arrival::Auto,
            ARRIVAL_ONE_LEVEL => Arrival::OneLevel,
            g => Arrival::Groups(g),
        }
    }

    /// The blocks per group it gives at `blocks` blocks: `None` for one level.
    #[inline(always)]
    pub const fn group_size(self, blocks: u32) -> Option<u32> {
        group_size_of(self.to_word(), blocks)
    }
}

/// [`Arrival::group_size`] of a state's word: what the device computes once per launch,
/// straight from the word.
#[inline(always)]
const fn group_size_of(word: u32, blocks: u32) -> Option<u32> {
    let g = match word {
        ARRIVAL_AUTO if blocks >= TWO_LEVEL_FROM_BLOCKS => DEFAULT_GROUP_BLOCKS,
        ARRIVAL_AUTO | ARRIVAL_ONE_LEVEL => return None,
        g => g,
    };
    if g <= 1 || g >= blocks || blocks.div_ceil(g) as usize > MAX_GROUPS {
        None
    } else {
        Some(g)
    }
}

/// From this many blocks the automatic choice arrives in groups: below it one level is as fast
/// or faster (one arrival on the critical path instead of two; 528 blocks: 1.66 µs one level,
/// 1.70 in groups of 64 on an H200, 1.91 and 1.96 on an H100); above it the one word's queue of
/// arrivals costs more than the second hop (H100: 792 blocks 2.44 µs one level, 2.08 in groups
/// of 64; 924 blocks 2.75 and 2.13; H200, 1056 blocks: 3.04 and 1.93). docs/perf-notes.md,
/// "Grid barrier".
pub const TWO_LEVEL_FROM_BLOCKS: u32 = 768;

/// From this many blocks a waiting block sleeps between polls when the device chooses
/// ([`PollSleep::Auto`]): below it the sleep only delays the waiter (H100, 792 blocks in groups
/// of 64: 2.08 µs polling back to back, 2.13 sleeping 100 ns); from it back-to-back polls slow
/// the arrivals (2112 blocks: 3.28 µs and 2.60 on an H100, 3.31 and 2.48 on an H200).
pub const POLL_SLEEP_FROM_BLOCKS: u32 = 1024;
/// Blocks per group when the device chooses (the fastest of 16, 32 and 64 at 1056 and 2112
/// blocks; smaller groups there would be more than [`MAX_GROUPS`]).
pub const DEFAULT_GROUP_BLOCKS: u32 = 64;

/// How long a waiting block sleeps between polls of the arrival word — the state holds it as a
/// word ([`GridBarrierState::poll_sleep_ns`], [`PollSleep::to_word`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PollSleep {
    /// The device chooses by the grid's size: no sleep below [`POLL_SLEEP_FROM_BLOCKS`] blocks,
    /// [`DEFAULT_POLL_SLEEP_NS`] from there. The default.
    Auto,
    /// This many nanoseconds (0: poll back to back).
    Ns(u32),
}

/// [`PollSleep::Auto`]'s word.
const POLL_SLEEP_AUTO: u32 = u32::MAX;

impl PollSleep {
    /// The state's word for it: `u32::MAX` for [`PollSleep::Auto`], else the nanoseconds (at
    /// most `u32::MAX − 1`).
    pub const fn to_word(self) -> u32 {
        match self {
            PollSleep::Auto => POLL_SLEEP_AUTO,
            PollSleep::Ns(ns) if ns == POLL_SLEEP_AUTO => ns - 1,
            PollSleep::Ns(ns) => ns,
        }
    }

    /// The sleep a state's word holds.
    #[inline(always)]
    pub const fn from_word(word: u32) -> PollSleep {
        match word {
            POLL_SLEEP_AUTO => PollSleep::Auto,
            ns => PollSleep::Ns(ns),
        }
    }

    /// The nanoseconds it gives at `blocks` blocks.
    #[inline(always)]
    pub const fn ns(self, blocks: u32) -> u32 {
        poll_sleep_of(self.to_word(), blocks)
    }
}

/// [`PollSleep::ns`] of a state's word: what the device computes once per launch, straight
/// from the word.
#[inline(always)]
pub(crate) const fn poll_sleep_of(word: u32, blocks: u32) -> u32 {
    match word {
        POLL_SLEEP_AUTO if blocks >= POLL_SLEEP_FROM_BLOCKS => DEFAULT_POLL_SLEEP_NS,
        POLL_SLEEP_AUTO => 0,
        ns => ns,
    }
}

/// The sleep between polls of a large grid when the device chooses: with thousands of blocks
/// polling one line, back-to-back polls slow the arrivals they wait for (measured at 2112
/// blocks on an H200: 3.31 µs a barrier polling back to back, 2.48 µs sleeping 100 ns).
pub const DEFAULT_POLL_SLEEP_NS: u32 = 100;

/// One group's arrival word, alone on its 128-byte line.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupWord {
    /// Low 31 bits: the group's blocks arrived at the current barrier; bit 31: the generation.
    pub word: u32,
    _pad: [u32; 31],
}

/// The device memory behind a [`GridBarrier`]: the arrival word, the error word, the bound, and
/// the group words of the two-level arrival.
///
/// The arrival word's line (with the settings, read once per launch) is the one every block's
/// thread 0 adds to (or the last block of each group) and polls; the error word has a line of
/// its own, so that looking at it adds no traffic to the arrival word's; and each group's word
/// has its own line.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GridBarrierState {
    /// Low 31 bits: blocks (or groups) that have arrived at the current barrier; bit 31
    /// ([`GENERATION_BIT`]): the barrier's generation. Zero before a launch.
    pub arrived: u32,
    /// How the blocks arrive, as [`Arrival::to_word`] writes it.
    pub group_blocks: u32,
    /// Nanoseconds a block may wait before giving up.
    pub timeout_ns: u64,
    /// How long a waiting thread 0 sleeps between polls, as [`PollSleep::to_word`] writes it.
    pub poll_sleep_ns: u32,
    _pad: [u32; 27],
    /// Blocks that gave up. Non-zero after a launch means the launch failed.
    pub timeouts: u32,
    _pad2: [u32; 31],
    /// The groups' arrival words. Zero before a launch.
    pub groups: [GroupWord; MAX_GROUPS],
}

const _: () = assert!(size_of::<GridBarrierState>() == 256 + 128 * MAX_GROUPS);

impl GridBarrierState {
    /// A barrier no block has arrived at, with this bound and the device's choice of groups.
    pub const fn new(timeout_ns: u64) -> GridBarrierState {
        GridBarrierState {
            arrived: 0,
            group_blocks: Arrival::Auto.to_word(),
            timeout_ns,
            poll_sleep_ns: PollSleep::Auto.to_word(),
            _pad: [0; 27],
            timeouts: 0,
            _pad2: [0; 31],
            groups: [GroupWord {
                word: 0,
                _pad: [0; 31],
            }; MAX_GROUPS],
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
/// PTX: `bar.sync 0`; then thread 0 of each block `red.release.gpu.add.u32` on the arrival
/// word (with groups: `atom.acq_rel` on its group's word, then the last of the group
/// `red.release` on the grid's) and polls the grid word with
/// `ld.acquire.gpu.b32`; then `bar.red.or.pred` hands its verdict to the block.
///
/// # Memory ordering
///
/// Everything any thread of the grid did before its call happens-before everything every thread
/// does after the call returns `Ok`. The chain: `bar.sync` makes the block's writes visible to
/// its thread 0 (block scope, cumulative); thread 0's add releases them at device scope; the
/// other blocks' thread 0 acquire them with the load that sees the generation flip; the
/// block barrier after it (`bar.red`) hands them on to their block. No `threadfence` is needed
/// before or after.
///
/// # How it counts
///
/// One 32-bit word. Thread 0 of every block adds 1, except block 0, which adds
/// `2³¹ − (blocks − 1)`: the adds of one barrier sum to exactly 2³¹, so the low 31 bits return
/// to zero and bit 31 flips exactly once, at the last arrival, whatever the order. The word
/// starts at zero in every launch, so before barrier `k` the bit is `(k − 1) mod 2`: each
/// thread 0 counts its barriers and waits until the bit reads `k mod 2`. The bit cannot
/// flip back before every block (the slowest waiter included) has arrived at the *next*
/// barrier, so a block that races ahead cannot release anyone early, and no reset is needed
/// between barriers.
///
/// # Preconditions
///
/// - every block of the grid is resident at once (module docs; `DeviceGridBarrier::launch`
///   checks it);
/// - every thread of every block calls `sync` the same number of times, in uniform control flow
///   (as `sync_threads` requires within a block);
/// - fewer than 2³¹ blocks; the state starts zeroed for each launch (the host resets it).
///
/// # Example
///
/// ```ignore
/// kernel! {
///     pub unsafe fn two_phases(data: *mut f32, state: *mut GridBarrierState) {
///         let mut barrier = unsafe { GridBarrier::from_ptr(state) };
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
/// [`BarrierError::Abandoned`]; every later call of the same handle fails at once, without
/// arriving. The kernel should return on an error; the host sees the error word and reports a
/// timeout.
///
/// `Ok` says only that this block saw the generation flip. Once any block has timed out, the
/// count no longer means that every block arrived (a block that gave up never adds itself to
/// a later barrier, and one that checked the error word just before it was set may still be
/// released): an `Ok` from a later `sync`, in any block, proves nothing. Only the host's
/// `DeviceGridBarrier::check`, which reads the error word after the launch, decides whether the
/// launch's results can be used.
///
/// # Arrival in groups
///
/// With thousands of blocks the one arrival word is a queue: every add to it is served one
/// after another at the L2 slice that owns it. From [`TWO_LEVEL_FROM_BLOCKS`] blocks (or as the
/// state's `group_blocks` says) blocks arrive in groups: each adds to its group's word (same
/// scheme, its own line), and only the last of each group adds to the grid word, so the longest
/// queue is a group or the number of groups, not the grid. Everyone still waits on the grid
/// word.
#[derive(Debug)]
pub struct GridBarrier {
    state: *mut GridBarrierState,
    /// Blocks per group of this launch's arrival, 0 for one level: read once, in `from_ptr`,
    /// not at every barrier (after an acquire the load would go to L2 each time).
    group: u32,
    /// Barriers this handle has entered in this launch. The grid word's generation bit flips
    /// once per barrier, so barrier `passed` is complete when the bit reads `start` flipped
    /// `passed` times: the waiter knows what to wait for without the old value of an atomic,
    /// and can arrive with a `red` that does not wait for an answer.
    passed: u32,
    /// The grid word's generation bit when the launch began (read in `from_ptr`, before this
    /// block arrives anywhere: no barrier completes without it, so the bit cannot have moved).
    start: u32,
    /// A barrier of this handle failed: every later call fails at once, without arriving (an
    /// arrival would be counted toward a barrier the failed blocks never reach).
    failed: bool,
    /// Nanoseconds between polls (read once, like `group`).
    sleep_ns: u32,
}

impl GridBarrier {
    /// A handle to the barrier whose state is at `state`. It owns nothing: dropping it frees
    /// nothing (the host's owner does, once).
    ///
    /// # Safety
    ///
    /// `state` points to a [`GridBarrierState`] in device memory (global memory on a GPU) that
    /// lives for the whole launch, was reset for it (counts and error word zero; the host's
    /// owner does it), and is touched only through `GridBarrier` handles meanwhile — one handle
    /// per thread per launch, made before the first barrier (a second one would count barriers
    /// from zero again).
    #[inline(always)]
    pub unsafe fn from_ptr(state: *mut GridBarrierState) -> GridBarrier {
        // SAFETY: the caller's contract; the host wrote `group_blocks` before the launch and
        // nothing writes it during one.
        let (group_blocks, sleep_ns) = unsafe {
            (
                Ptr::new(&raw mut (*state).group_blocks).load(),
                Ptr::new(&raw mut (*state).poll_sleep_ns).load(),
            )
        };
        // SAFETY: as above; the arrival word is only ever accessed atomically.
        let start = unsafe { load(&raw mut (*state).arrived, Scope::Device, LoadOrder::Relaxed) };
        let blocks = blocks_per_grid();
        GridBarrier {
            state,
            group: group_size_of(group_blocks, blocks).unwrap_or(0),
            passed: 0,
            start: start & GENERATION_BIT,
            failed: false,
            sleep_ns: poll_sleep_of(sleep_ns, blocks),
        }
    }

    /// Waits until every thread of the grid has called `sync` as many times as this thread
    /// (see the type's docs for the ordering it gives and the preconditions).
    ///
    /// # Errors
    /// [`BarrierError`] if this block, or another, waited past the timeout. Every thread of the
    /// block gets the same answer.
    #[inline(always)]
    pub fn sync(&mut self) -> Result<(), BarrierError> {
        if self.failed {
            return Err(BarrierError::Abandoned);
        }
        self.passed = self.passed.wrapping_add(1);
        // SAFETY: `from_ptr`'s contract: the state is live device memory used only through
        // these handles.
        let verdict = block_leader(|| unsafe { self.arrive_and_wait() });
        self.failed = verdict.is_err();
        verdict
    }

    /// Thread 0's part: arrive with a release add (through the block's group where there are
    /// groups), wait with acquire loads for the generation this barrier flips to, bounded.
    ///
    /// # Safety
    /// As [`GridBarrier::from_ptr`].
    #[inline(always)]
    unsafe fn arrive_and_wait(&self) -> Result<(), BarrierError> {
        // SAFETY: the caller's contract; raw field pointers, no reference to shared memory.
        let (arrived, timeouts) = unsafe {
            (
                &raw mut (*self.state).arrived,
                &raw mut (*self.state).timeouts,
            )
        };
        let blocks = blocks_per_grid();
        let me = block_rank_in_grid();
        let target = generation_after(self.start, self.passed);
        match self.group {
            0 => {
                // Release: the block's writes (handed to this thread by `bar.sync`). A `red`:
                // nothing comes back, so thread 0 starts polling at once — and when it is the
                // last to arrive, its first poll (ordered after its own add) already sees the
                // flip, one round trip to L2 instead of two.
                // SAFETY: as above; arrival words are only ever accessed atomically.
                unsafe {
                    red_add(
                        arrived,
                        arrival(me == 0, blocks),
                        Scope::Device,
                        StoreOrder::Release,
                    )
                };
            }
            g => {
                let group = me / g;
                let first = group * g;
                let size = if blocks - first < g {
                    blocks - first
                } else {
                    g
                };
                // SAFETY: as above; `group < MAX_GROUPS` (`group_size`), so the line is inside
                // the array (a raw offset: an index would bring a bounds check and a panic path).
                let word = unsafe {
                    let line = (&raw mut (*self.state).groups)
                        .cast::<GroupWord>()
                        .add(group as usize);
                    &raw mut (*line).word
                };
                let add = arrival(me == first, size);
                // Acquire and release: the group's last block carries every member's writes on
                // to the grid word. An `atom`: the old value says who is last.
                // SAFETY: as above.
                let old = unsafe { fetch_add(word, add, Scope::Device, Order::AcqRel) };
                if (old.wrapping_add(add) ^ old) & GENERATION_BIT != 0 {
                    // The last of the group: the group arrives at the grid word (release is
                    // cumulative: it carries what the group add acquired).
                    let top = arrival(group == 0, blocks.div_ceil(g));
                    // SAFETY: as above.
                    unsafe { red_add(arrived, top, Scope::Device, StoreOrder::Release) };
                }
            }
        }
        // SAFETY: as above; the bound is only read.
        unsafe {
            wait_for_generation(
                arrived,
                target,
                Scope::Device,
                self.sleep_ns,
                (timeouts, &raw const (*self.state).timeout_ns),
            )
        }
    }
}

/// Thread 0's wait at a barrier: polls `arrived` with acquire loads at `scope` until its
/// generation bit reads `target`, sleeping `sleep_ns` between polls (0: back to back). Every
/// [`POLLS_PER_CHECK`] polls it looks at the error word and the clock: another block's timeout
/// ends the wait with [`BarrierError::Abandoned`], and past the bound at `timeout_ns` it adds
/// itself to the error word and returns [`BarrierError::TimedOut`].
///
/// Ordering: the load that sees the flip synchronizes with every arrival's release (at
/// `scope`). Shared by [`GridBarrier`] and
/// [`MultiGridBarrier`](crate::multi_grid::MultiGridBarrier).
///
/// # Safety
/// `arrived` and `timeouts` are live words only ever accessed atomically; `timeout_ns` is
/// readable and not written during the wait.
#[inline(always)]
pub(crate) unsafe fn wait_for_generation(
    arrived: *mut u32,
    target: u32,
    scope: Scope,
    sleep_ns: u32,
    (timeouts, timeout_ns): (*mut u32, *const u64),
) -> Result<(), BarrierError> {
    let mut start = None;
    let mut polls = 0u32;
    loop {
        // SAFETY (every block below): the caller's contract.
        let now = unsafe { load(arrived, scope, LoadOrder::Acquire) };
        if now & GENERATION_BIT == target {
            return Ok(());
        }
        if sleep_ns > 0 {
            nanosleep(sleep_ns);
        }
        crate::seam::spin::between_polls();
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(POLLS_PER_CHECK) {
            // The clock and the error word only on the slow path: a barrier that completes
            // within a few polls pays for neither.
            let now_ns = globaltimer_ns();
            let since = *start.get_or_insert(now_ns);
            if unsafe { load(timeouts, scope, LoadOrder::Relaxed) } != 0 {
                return Err(BarrierError::Abandoned);
            }
            // A bound of a second or more is "never in practice"; the simulator stretches it.
            let waited = now_ns.wrapping_sub(since);
            if waited
                > crate::seam::spin::stretch_bound(unsafe {
                    Ptr::new(timeout_ns.cast_mut()).load()
                })
            {
                unsafe { fetch_add(timeouts, 1, scope, Order::Relaxed) };
                return Err(BarrierError::TimedOut);
            }
        }
    }
}

/// The shape of a grid barrier inside a block: the block meets (`bar.sync`), thread 0 alone runs
/// `leader` (arrive and wait for the other blocks), and the block meets again, every thread
/// learning whether thread 0 failed (`bar.red.or`). Threads other than 0 only learn that the
/// block failed, not how ([`BarrierError::Abandoned`]).
///
/// Scope: block. Ordering: as two [`sync_threads`]: what the block wrote before is visible to
/// thread 0 in `leader`, and what thread 0 acquired in `leader` to the block after.
/// CUDA: `__syncthreads(); if (threadIdx.x == 0) {…} __syncthreads_or(failed)`.
/// PTX: `bar.sync 0` … `bar.red.or.pred`. Every thread of the block must call it, in uniform
/// control flow, as [`sync_threads`].
#[inline(always)]
pub fn block_leader(leader: impl FnOnce() -> Result<(), BarrierError>) -> Result<(), BarrierError> {
    sync_threads();
    let mut verdict = Ok(());
    // Thread 0 is lane 0; saying so tells ptxas that one lane of its warp runs `leader`, whose
    // atomics it would otherwise wrap in a warp aggregation on the barrier's critical path
    // (docs/perf-notes.md, "Grid barrier").
    if crate::seam::warp::leads_block(thread_rank_in_block()) {
        verdict = leader();
    }
    if sync_threads_or(verdict.is_err()) {
        Err(verdict.err().unwrap_or(BarrierError::Abandoned))
    } else {
        Ok(())
    }
}

/// The grid word's generation bit once barrier `passed` (counting from 1) is complete, for a
/// word whose bit was `start` when the launch began: it flips once per barrier.
#[inline(always)]
pub(crate) const fn generation_after(start: u32, passed: u32) -> u32 {
    if passed % 2 == 1 {
        start ^ GENERATION_BIT
    } else {
        start
    }
}

/// What an arriving block adds to a word that `count` blocks (or groups) arrive at: 1, or for
/// the one that `leads`, `2³¹ − (count − 1)`, so that the adds sum to exactly 2³¹.
#[inline(always)]
pub(crate) const fn arrival(leads: bool, count: u32) -> u32 {
    if leads {
        GENERATION_BIT - (count - 1)
    } else {
        1
    }
}
