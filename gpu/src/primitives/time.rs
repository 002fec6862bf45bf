//! Clocks and sleeping, for back-off and for bounded spins.
//!
//! A spin loop that waits on another block must be bounded (a block that is never scheduled
//! would otherwise hang the GPU): read [`globaltimer_ns`] when the wait begins and give up past a
//! deadline. [`nanosleep`] between tries frees the issue slots the spinning warp would burn.

/// Suspends the calling thread for about `ns` nanoseconds (0 to 1 ms; the hardware may wake it
/// earlier or later).
///
/// CUDA: `__nanosleep(ns)`. PTX: `nanosleep.u32` (sm_70+). In the simulator: the OS thread
/// yields below 100 µs and sleeps from 100 µs up.
#[inline(always)]
pub fn nanosleep(ns: u32) {
    crate::seam::spin::nanosleep(ns)
}

/// Nanoseconds from a clock shared by every multiprocessor of the GPU.
///
/// PTX: `mov.u64 %r, %globaltimer;`. It ticks coarsely (about every microsecond on recent
/// GPUs) but is comparable across blocks, which `clock64` is not. In the simulator: nanoseconds of
/// the host's monotonic clock.
#[inline(always)]
pub fn globaltimer_ns() -> u64 {
    crate::seam::sreg::globaltimer()
}

/// This multiprocessor's cycle counter.
///
/// CUDA: `clock64()`. PTX: `mov.u64 %r, %clock64;`. Counts cycles of the SM the thread runs on:
/// differences are meaningful within one thread, not across blocks. In the simulator:
/// nanoseconds of the host's monotonic clock.
#[inline(always)]
pub fn clock64() -> u64 {
    crate::seam::sreg::clock64()
}
