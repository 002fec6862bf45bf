//! Waiting: `nanosleep` as a yield or an OS sleep, and the poll loop's hooks, by which the
//! simulator's OS threads leave each other the cores.

/// The shortest `nanosleep` the simulator turns into an OS sleep; shorter ones yield.
const SIM_SLEEP_FROM_NS: u32 = 100_000;

/// The failed polls of a bounded wait that only yield; after them each sleeps [`SIM_SLEEP_US`].
const SIM_YIELDS_BEFORE_SLEEP: u32 = 64;

/// A waiting thread's sleep between polls, once it has yielded [`SIM_YIELDS_BEFORE_SLEEP`] times.
const SIM_SLEEP_US: u64 = 50;

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

/// A bound on a wait, stretched where the simulator runs slower ([`crate::sim::stretch_bound`]).
#[inline(always)]
pub(crate) fn stretch_bound(timeout_ns: u64) -> u64 {
    crate::sim::stretch_bound(timeout_ns)
}

/// Between two polls of a word another block writes: the simulator's threads share a few
/// cores, so let the blocks being waited for run.
#[inline(always)]
pub(crate) fn between_polls() {
    std::thread::yield_now();
}

/// The failed polls of one bounded wait so far.
pub(crate) struct Backoff {
    tries: u32,
}

impl Backoff {
    /// A wait that has not polled yet.
    #[inline(always)]
    pub(crate) fn new() -> Backoff {
        Backoff { tries: 0 }
    }

    /// After a poll that did not succeed. Every waiting thread is an OS thread: hundreds of
    /// them yielding in turn can starve the one they wait for (a pipeline's producer) past the
    /// bound on a busy machine. After the first tries they sleep, and leave it the cores.
    #[inline(always)]
    pub(crate) fn after_poll(&mut self) {
        if crate::sim::weak_op(|_, _| ()).is_none() {
            self.tries = self.tries.saturating_add(1);
            if self.tries > SIM_YIELDS_BEFORE_SLEEP {
                std::thread::sleep(std::time::Duration::from_micros(SIM_SLEEP_US));
            }
        }
    }
}
