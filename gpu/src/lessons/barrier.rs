//! Synchronizing every thread of a grid: from the article's counter barrier to [`GridBarrier`],
//! on the article's X→P→X iteration.
//!
//! Source: the article on synchronizing all threads of a grid (ru). Its iteration: `W` values
//! `X` and `W` values `P` in global memory; in stage (i) thread `j` sums all of `X` and writes
//! `P[j]`, in stage (ii) it sums all of `P` and writes `X[j]`; repeat. No thread may start a
//! stage before every thread has finished the one before, since it reads what all of them
//! wrote. `sync_threads` only waits for the block. The article's answers: end the kernel
//! between the stages (many launches), or build a barrier over all blocks from an atomic counter
//! in global memory, a `threadfence` and a spin on a `volatile` read (one launch).
//!
//! Here `P[j] = X[W−1−j] − ΣX/W` and `X[j] = P[(j+1) mod W] − ΣP/W`: every thread still sums
//! the whole array in the same order (so the GPU's bits equal a sequential `f32` sum on the
//! CPU), and unlike the article's all-ones weights the values never settle to one number, so a
//! stale read shows in every iteration, not only the first.
//!
//! | kernel | barrier between the stages | result |
//! |---|---|---|
//! | [`xpx_stage_p`], [`xpx_stage_x`] | the end of the kernel (many launches) | correct |
//! | [`xpx_no_barrier`] | none | wrong in runs of 32: whole warps that ran ahead |
//! | [`xpx_sync_threads`] | `sync_threads` | wrong in whole blocks: blocks do not wait for each other |
//! | [`xpx_plain_spin`] | the article's counter, spinning on a plain load | wrong: the optimizer hoisted the load out of the spin, so nobody waits |
//! | [`xpx_article`] | the article's counter (`atomicInc`, `threadfence`, `volatile` spin) | correct at one barrier; reused, a waiter that misses the counter's brief zero (the last block already arrived at the next barrier) waits for ever — here, until the timeout |
//! | [`xpx_count_to_n`] | a counter that only grows, waiting for `blocks` arrivals | correct at the first barrier, wrong from the second: it lets every block through |
//! | [`xpx_grid_barrier`] | [`GridBarrier`] | correct, reusable, bounded |
//!
//! Every barrier of the one-launch kernels spins with a deadline: past the state's `timeout_ns`
//! a block records a timeout and the kernel returns, so a broken barrier fails a launch instead
//! of hanging the GPU.

use crate::access::load_plain;
use crate::atomic::{LoadOrder, Order, Scope, atomic_inc_device, fetch_add, load};
use crate::grid::{BarrierError, GridBarrier, GridBarrierState, block_leader};
use crate::index::{blocks_per_grid, grid_stride};
use crate::mem::Ptr;
use crate::sync::{sync_threads, threadfence};
use crate::time::globaltimer_ns;
use crate::vector::{F32x4, Split4};

/// `Σ src[0..w]` in `f32`, in index order: the head one float at a time, the body four at a
/// time with 16-byte loads, the tail one at a time — the additions of a plain loop, in the
/// plain loop's order (so the same bits), with a quarter of the load instructions.
///
/// # Safety
/// `src` holds `w` floats.
#[inline(always)]
unsafe fn sum_in_order(src: Ptr<f32>, w: usize) -> f32 {
    let split = Split4::of(src.as_ptr(), w);
    let mut a = 0.0f32;
    // SAFETY (the three loops): every index is below `w`; `load` reads body element `v`.
    for k in 0..split.head {
        a += unsafe { src.add(k).load() };
    }
    for v in 0..split.body {
        let F32x4([x, y, z, t]) = unsafe { split.load(src.as_ptr(), v) };
        a += x;
        a += y;
        a += z;
        a += t;
    }
    for k in split.tail_start()..w {
        a += unsafe { src.add(k).load() };
    }
    a
}

/// Stage (i) for the elements of this thread: `P[j] = X[W−1−j] − ΣX/W`.
///
/// # Safety
/// `x` and `p` hold `w` floats each; no other thread writes `x` meanwhile.
#[inline(always)]
unsafe fn stage_p(x: Ptr<f32>, p: Ptr<f32>, w: usize) {
    for j in grid_stride(w) {
        // SAFETY: `j < w` and every index below is `< w`; the caller's contract.
        unsafe {
            let a = sum_in_order(x, w);
            let (reflected, mean) = (x.add(w - 1 - j).load(), a / w as f32);
            p.add(j).store(reflected - mean);
        }
    }
}

/// Stage (ii) for the elements of this thread: `X[j] = P[(j+1) mod W] − ΣP/W`.
///
/// # Safety
/// As [`stage_p`], with the roles of `x` and `p` swapped.
#[inline(always)]
unsafe fn stage_x(x: Ptr<f32>, p: Ptr<f32>, w: usize) {
    for j in grid_stride(w) {
        // SAFETY: as in `stage_p`.
        unsafe {
            let a = sum_in_order(p, w);
            // `(j + 1) mod W` without `%`, whose divide-by-zero check would pull a panic into
            // the PTX (the compiler cannot see that `j < w` makes `w` non-zero).
            let next = if j + 1 == w { 0 } else { j + 1 };
            let (shifted, mean) = (p.add(next).load(), a / w as f32);
            x.add(j).store(shifted - mean);
        }
    }
}

// ANCHOR: xpx_rounds
/// `iterations` rounds of X→P→X in one launch, `barrier` between the stages and after each
/// round (the next stage (i) reads all of `X`). Stops at the first barrier that fails.
///
/// # Safety
/// As [`stage_p`]; `barrier` is called by every thread the same number of times.
#[inline(always)]
unsafe fn xpx_rounds(
    x: *mut f32,
    p: *mut f32,
    w: usize,
    iterations: u32,
    mut barrier: impl FnMut() -> Result<(), BarrierError>,
) {
    let (x, p) = (Ptr::new(x), Ptr::new(p));
    for _ in 0..iterations {
        // SAFETY: forwarded to the caller.
        unsafe { stage_p(x, p, w) };
        if barrier().is_err() {
            return;
        }
        // SAFETY: forwarded to the caller.
        unsafe { stage_x(x, p, w) };
        if barrier().is_err() {
            return;
        }
    }
}
// ANCHOR_END: xpx_rounds

kernel! {
    /// Stage (i) alone: the first of the two kernels per iteration of the many-launch version.
    /// The end of a kernel is a grid barrier: the next launch on the stream starts after every
    /// thread of this one has finished, with all its writes visible.
    ///
    /// Source: the article's MKL (multi kernel launch).
    pub unsafe fn xpx_stage_p(x: *mut f32, p: *mut f32, w: u64) {
        // SAFETY: the host passes two arrays of `w` floats.
        unsafe { stage_p(Ptr::new(x), Ptr::new(p), w as usize) }
    }
}

kernel! {
    /// Stage (ii) alone: the second kernel per iteration of the many-launch version.
    ///
    /// Source: the article's MKL.
    pub unsafe fn xpx_stage_x(x: *mut f32, p: *mut f32, w: u64) {
        // SAFETY: as `xpx_stage_p`.
        unsafe { stage_x(Ptr::new(x), Ptr::new(p), w as usize) }
    }
}

kernel! {
    /// Both stages in one launch with no barrier between them: a warp that reaches stage (ii)
    /// before another warp has written its part of `P` sums stale values, and all 32 of its
    /// elements of `X` come out wrong together — the article's runs of 32.
    ///
    /// Source: the article's first kernel. Broken on purpose.
    pub unsafe fn xpx_no_barrier(x: *mut f32, p: *mut f32, w: u64, iterations: u32) {
        // SAFETY: as `xpx_stage_p`; the missing barrier is the lesson, and the host expects
        // wrong values.
        unsafe { xpx_rounds(x, p, w as usize, iterations, || Ok(())) }
    }
}

kernel! {
    /// `sync_threads` between the stages: each block now agrees with itself, and when `X` is
    /// wrong, a whole block's elements are wrong — the article's second finding.
    ///
    /// Source: the article's kernel with `__syncthreads()`. Broken on purpose.
    pub unsafe fn xpx_sync_threads(x: *mut f32, p: *mut f32, w: u64, iterations: u32) {
        // SAFETY: as `xpx_no_barrier`.
        unsafe {
            xpx_rounds(x, p, w as usize, iterations, || {
                sync_threads();
                Ok(())
            })
        }
    }
}

/// Polls of a spin between two looks at the clock.
const POLLS_PER_CHECK: u32 = 32;

/// A bounded spin: calls `done` until it returns true, giving up past `timeout_ns` (and
/// recording it in `timeouts`) or as soon as another block has.
///
/// # Safety
/// `timeouts` points to a live `u32` used only atomically.
#[inline(always)]
unsafe fn spin_until(
    mut done: impl FnMut() -> bool,
    timeouts: *mut u32,
    timeout_ns: u64,
) -> Result<(), BarrierError> {
    let start = globaltimer_ns();
    let mut polls = 0u32;
    while !done() {
        #[cfg(not(target_arch = "nvptx64"))]
        std::thread::yield_now();
        polls += 1;
        if polls.is_multiple_of(POLLS_PER_CHECK) {
            // SAFETY: the caller's contract.
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
    Ok(())
}

/// The article's `SyncWholeDevice`, with one of its two spins.
///
/// Every thread fences; thread 0 of each block increments the counter with
/// `atomicInc(count, blocks − 1)`, which wraps it to 0 at the last arrival — that zero is the
/// release — fences again and, unless it was last, spins until the counter reads 0; then the
/// block meets at `sync_threads`. Two changes from the article, each needed on sm_70 and newer
/// and said where it is made: `sync_threads` *before* the arrival (the article's thread 0 could
/// arrive while other warps of its block were still writing — its `threadfence` orders only
/// the caller's own writes), and a `threadfence` *after* the spin (a volatile load is relaxed, so
/// without it the block's later loads could be served from a stale L1 line). The counter
/// starts at 0: the host zeroes it before the launch instead of the article's
/// `InitSyncWholeDevice`, whose store could erase a fast block's arrival.
///
/// `volatile_spin` chooses the spin: a volatile load (the article's fix) or a plain load (the
/// article's first try, which the compiler "optimized").
///
/// # Safety
/// `state` is a live [`GridBarrierState`], zeroed before the launch; every block is resident.
// ANCHOR: article_sync
#[inline(always)]
unsafe fn article_sync(
    state: *mut GridBarrierState,
    volatile_spin: bool,
) -> Result<(), BarrierError> {
    // The article's fence by every thread: `membar.gl` is `fence.sc.gpu`, so each thread's own
    // writes are performed at device scope before it reaches the block barrier below.
    threadfence();
    block_leader(|| {
        // SAFETY: the caller's contract.
        let (count, timeouts, timeout_ns) = unsafe { counter(state) };
        let last = blocks_per_grid() - 1;
        // SAFETY: as above.
        let oldc = unsafe { atomic_inc_device(count, last) };
        threadfence();
        let verdict = if oldc == last {
            Ok(())
        } else if volatile_spin {
            // SAFETY: as above; the volatile load is read again on every poll.
            unsafe {
                spin_until(
                    || Ptr::new(count).load_volatile() == 0,
                    timeouts,
                    timeout_ns,
                )
            }
        } else {
            // SAFETY: as above. A plain load of memory another block writes is a data race:
            // the compiler may assume nobody else writes it, load once, and never look again —
            // which is what the PTX of `xpx_plain_spin` shows it doing.
            unsafe { plain_spin(count, timeouts) }
        };
        threadfence();
        verdict
    })
}
// ANCHOR_END: article_sync

/// The counter, the error word and the bound of the state the lesson's barriers use.
///
/// # Safety
/// `state` is a live [`GridBarrierState`].
#[inline(always)]
unsafe fn counter(state: *mut GridBarrierState) -> (*mut u32, *mut u32, u64) {
    // SAFETY: the caller's contract; raw field pointers only, no reference, and `timeout_ns`
    // is set by the host before the launch and only read during it.
    unsafe {
        (
            &raw mut (*state).arrived,
            &raw mut (*state).timeouts,
            Ptr::new(&raw mut (*state).timeout_ns).load(),
        )
    }
}

/// The article's first spin, `while (count != 0);`, on a plain load, bounded by a count of
/// polls (not the clock, whose reads would stop the compiler from moving the load): the load
/// is loop-invariant to the compiler, so it is read once, before the loop.
///
/// # Safety
/// As [`article_sync`].
#[inline(always)]
unsafe fn plain_spin(count: *mut u32, timeouts: *mut u32) -> Result<(), BarrierError> {
    let mut polls = 0u64;
    let limit = plain_spin_polls();
    // `load_plain` is `*count`: the compiler sees nothing that could change it in the loop.
    // SAFETY: the caller's contract (the race is the lesson).
    while unsafe { load_plain(count) } != 0 {
        polls += 1;
        if polls > limit {
            // SAFETY: as above.
            unsafe { fetch_add(timeouts, 1, Scope::Device, Order::Relaxed) };
            return Err(BarrierError::TimedOut);
        }
    }
    Ok(())
}

/// The bound of [`plain_spin`]: far more polls than a real barrier needs.
const PLAIN_SPIN_POLLS: u64 = 1 << 24;
/// The bound in a weak launch of the simulator, whose polls are far slower, and where a plain
/// spin reads its first value for ever, as the GPU's hoisted load does.
#[cfg(not(target_arch = "nvptx64"))]
const WEAK_PLAIN_SPIN_POLLS: u64 = 1 << 14;

/// [`PLAIN_SPIN_POLLS`], or [`WEAK_PLAIN_SPIN_POLLS`] in a weak or a checked launch (where
/// every poll is also an event of the checker's).
#[inline(always)]
fn plain_spin_polls() -> u64 {
    #[cfg(not(target_arch = "nvptx64"))]
    if crate::sim::in_weak_launch() || crate::sim::check::in_checked_launch() {
        return WEAK_PLAIN_SPIN_POLLS;
    }
    PLAIN_SPIN_POLLS
}

kernel! {
    /// The article's counter barrier spinning on a plain load. In Rust, as with the article's
    /// nvcc, the spin does not survive the optimizer: nothing in the loop can change `*count` as
    /// far as the compiler knows, so the load moves out of the loop (look for the one
    /// `ld.global` before it in the PTX) and the barrier waits for nobody.
    ///
    /// Source: the article's first `SyncWholeDevice`. Broken on purpose.
    pub unsafe fn xpx_plain_spin(x: *mut f32, p: *mut f32, w: u64, iterations: u32, state: *mut GridBarrierState) {
        // SAFETY: the host passes two arrays of `w` floats and a zeroed state; the broken spin
        // is the lesson.
        unsafe { xpx_rounds(x, p, w as usize, iterations, || article_sync(state, false)) }
    }
}

kernel! {
    /// The article's counter barrier with the `volatile` spin (`ld.volatile.global`): correct at
    /// one barrier. It looks reusable, since `atomicInc` wraps the counter back to 0 at each
    /// last arrival, but the release is a *moment* of zero: a waiter that polls only after the
    /// last block has already arrived at the next barrier (and made the counter 1) never sees
    /// it and waits for ever — here, until the timeout. The simulator shows it at once with one
    /// thread per block, as `gridsync check` runs it: the block that made the zero goes on to
    /// the next barrier before the others, yielding between polls, look again. With larger
    /// blocks the zero lasts while the block passes its own `__syncthreads`, and most runs pass;
    /// on a GPU a waiter usually polls while the last block computes its next stage, and the bug
    /// waits for a bad day. [`GridBarrier`]'s
    /// generation bit cannot be missed: it stays flipped until every block has arrived again.
    ///
    /// Source: the article's `SyncWholeDevice` with `volatile unsigned int count`. Broken when
    /// reused.
    pub unsafe fn xpx_article(x: *mut f32, p: *mut f32, w: u64, iterations: u32, state: *mut GridBarrierState) {
        // SAFETY: the host passes two arrays of `w` floats and a zeroed state.
        unsafe { xpx_rounds(x, p, w as usize, iterations, || article_sync(state, true)) }
    }
}

/// A counter that only grows: thread 0 of each block adds 1 and waits until it reads at least
/// `blocks`. Correct once; from the second call on the counter already holds `blocks`, so it
/// waits for nobody.
///
/// # Safety
/// As [`article_sync`].
#[inline(always)]
unsafe fn count_to_n(state: *mut GridBarrierState) -> Result<(), BarrierError> {
    block_leader(|| {
        // SAFETY: the caller's contract.
        let (count, timeouts, timeout_ns) = unsafe { counter(state) };
        let n = blocks_per_grid();
        // SAFETY: as above.
        unsafe { fetch_add(count, 1, Scope::Device, Order::Release) };
        // SAFETY: as above.
        let arrived = || unsafe { load(count, Scope::Device, LoadOrder::Acquire) } >= n;
        // SAFETY: as above.
        unsafe { spin_until(arrived, timeouts, timeout_ns) }
    })
}

kernel! {
    /// A barrier that counts arrivals up to `blocks` and never resets: right at the first
    /// barrier of the launch, and from the second on every block passes at once — the classic
    /// mistake of a barrier called twice in one launch without a reset or a generation.
    ///
    /// Broken on purpose (from its second barrier).
    pub unsafe fn xpx_count_to_n(x: *mut f32, p: *mut f32, w: u64, iterations: u32, state: *mut GridBarrierState) {
        // SAFETY: the host passes two arrays of `w` floats and a zeroed state.
        unsafe { xpx_rounds(x, p, w as usize, iterations, || count_to_n(state)) }
    }
}

// ANCHOR: grid_barrier
kernel! {
    /// Both stages in one launch with [`GridBarrier`] between them: correct, reusable without
    /// a reset, bounded. The library's way.
    pub unsafe fn xpx_grid_barrier(x: *mut f32, p: *mut f32, w: u64, iterations: u32, state: *mut GridBarrierState) {
        // SAFETY: the host passes a live barrier state, zeroed for this launch.
        let mut barrier = unsafe { GridBarrier::from_ptr(state) };
        // SAFETY: two arrays of `w` floats; every thread calls the barrier equally often.
        unsafe { xpx_rounds(x, p, w as usize, iterations, || barrier.sync()) }
    }
}
// ANCHOR_END: grid_barrier
