//! Waiting: `nanosleep`, and the simulator's hooks of a poll loop, which are nothing here.

/// `nanosleep.u32 ns;`
#[inline(always)]
pub(crate) fn nanosleep(ns: u32) {
    // SAFETY: `nanosleep` only delays this thread.
    unsafe {
        core::arch::asm!("nanosleep.u32 {0};", in(reg32) ns, options(nostack));
    }
}

/// Between two polls of a word another block writes: nothing on the GPU.
#[inline(always)]
pub(crate) fn between_polls() {}
