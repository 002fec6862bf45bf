//! Waiting: `nanosleep` as a yield or an OS sleep, and the poll loop's hooks, by which the
//! simulator's OS threads leave each other the cores.

/// The shortest `nanosleep` the simulator turns into an OS sleep; shorter ones yield.
const SIM_SLEEP_FROM_NS: u32 = 100_000;

/// `nanosleep`: a yield, or an OS sleep for long ones.
#[inline(always)]
pub(crate) fn nanosleep(ns: u32) {
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

/// Between two polls of a word another block writes: the simulator's threads share a few
/// cores, so let the blocks being waited for run.
#[inline(always)]
pub(crate) fn between_polls() {
    std::thread::yield_now();
}
