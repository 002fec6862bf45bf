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
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `nanosleep` only delays this thread.
    unsafe {
        core::arch::asm!("nanosleep.u32 {0};", in(reg32) ns, options(nostack));
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // In a weak launch only one thread runs at a time: sleeping would only delay it. The
        // token goes to another thread instead.
        if crate::sim::weak_op(|_, _| ()).is_some() {
            return;
        }
        // Short waits only yield: an OS sleep lasts at least the timer slack (~50 µs), far past
        // what a back-off asks for, and a lock handed to a sleeping thread would wait that long.
        if ns >= SIM_SLEEP_FROM_NS {
            std::thread::sleep(std::time::Duration::from_nanos(ns as u64));
        } else {
            std::thread::yield_now();
        }
    }
}

/// From this many nanoseconds the simulator's [`nanosleep`] really sleeps.
#[cfg(not(target_arch = "nvptx64"))]
const SIM_SLEEP_FROM_NS: u32 = 100_000;

/// Nanoseconds from a clock shared by every multiprocessor of the GPU.
///
/// PTX: `mov.u64 %r, %globaltimer;`. It ticks coarsely (about every microsecond on recent
/// GPUs) but is comparable across blocks, which `clock64` is not. In the simulator: nanoseconds of
/// the host's monotonic clock.
#[inline(always)]
pub fn globaltimer_ns() -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let t: u64;
        // SAFETY: reading a special register has no preconditions. Not `pure`: every read
        // must happen, or a wait loop would never see time pass.
        unsafe {
            core::arch::asm!("mov.u64 {0}, %globaltimer;", out(reg64) t, options(nostack));
        }
        t
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::sim::host_clock_ns()
    }
}

/// This multiprocessor's cycle counter.
///
/// CUDA: `clock64()`. PTX: `mov.u64 %r, %clock64;`. Counts cycles of the SM the thread runs on:
/// differences are meaningful within one thread, not across blocks. In the simulator:
/// nanoseconds of the host's monotonic clock.
#[inline(always)]
pub fn clock64() -> u64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let t: u64;
        // SAFETY: reading a special register has no preconditions.
        unsafe {
            core::arch::asm!("mov.u64 {0}, %clock64;", out(reg64) t, options(nostack));
        }
        t
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        crate::sim::host_clock_ns()
    }
}
