//! Waiting: `nanosleep`, and the simulator's hooks of a poll loop, which are nothing here.

/// `nanosleep.u32 ns;`
#[inline(always)]
pub(crate) fn nanosleep(ns: u32) {
    // SAFETY: `nanosleep` only delays this thread.
    unsafe {
        core::arch::asm!("nanosleep.u32 {0};", in(reg32) ns, options(nostack));
    }
}

/// A bound on a wait, as given: the GPU runs at its own speed.
#[inline(always)]
pub(crate) fn stretch_bound(timeout_ns: u64) -> u64 {
    timeout_ns
}

/// Between two polls of a word another block writes: nothing on the GPU.
#[inline(always)]
pub(crate) fn between_polls() {}

/// The state of one bounded wait between its polls: none on the GPU.
#[cfg(target_feature = "sm_90")]
pub(crate) struct Backoff;

#[cfg(target_feature = "sm_90")]
impl Backoff {
    /// A wait that has not polled yet.
    #[inline(always)]
    pub(crate) fn new() -> Backoff {
        Backoff
    }

    /// After a poll that did not succeed: nothing on the GPU.
    #[inline(always)]
    pub(crate) fn after_poll(&mut self) {}
}
