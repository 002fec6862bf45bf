//! The simulator's barrier: a counting barrier that threads can also *leave*.
//!
//! On the GPU a thread that has exited no longer takes part in `__syncthreads`; the barrier
//! releases when every thread still running has arrived. Here `leave` lowers the count the
//! same way. A barrier that no thread has arrived at or left for [`WAIT_LIMIT`](super::WAIT_LIMIT)
//! while threads wait at it is a deadlock (a barrier in a branch some threads skip, a divergent
//! warp operation): a waiting thread records it and unwinds instead of hanging the process.
//! The limit counts from the barrier's last progress, not from each waiter's arrival: the threads
//! of a large block that a busy host runs slowly keep arriving, and that is not a deadlock
//! however long it takes.
//!
//! A waiter first yields its core a few times ([`YIELDS`]), looking at the generation after
//! each: on a host with fewer cores than threads the others it waits for run meanwhile, and
//! most barriers (a warp operation is two) open within those turns. Then it parks on its own
//! OS thread's parker; the release unparks the parked ones after letting go of the lock, and a
//! woken waiter sees the new generation in an atomic, without taking the lock again. Measured
//! on 2 cores: `tests/reduce.rs` 65 s with a condition variable's `notify_all` (every waiter
//! woken at once, to queue for the lock it must take back), 66 s parking at once, 36 s
//! yielding first.

use super::{Abort, Launch, SimError, WAIT_LIMIT};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// The turns a waiter yields before it parks: past 4 the time hardly changes (16 and 64 the
/// same), and a block's waiters all yielding on and on would starve the thread still to come.
const YIELDS: u32 = 16;

/// How far past its deadline a waiter wakes, so that the deadline has passed when it looks.
pub(super) const DEADLINE_SLACK: Duration = Duration::from_millis(1);

struct State {
    live: u32,
    arrived: u32,
    /// Whether any thread arrived at this generation with its predicate set.
    any: bool,
    /// When a thread last arrived or left: a deadlock is [`WAIT_LIMIT`] without either.
    progress: Instant,
    /// The threads parked at this generation, to unpark at its release.
    waiters: Vec<Thread>,
}

pub(super) struct SimBarrier {
    state: Mutex<State>,
    /// Releases so far: written under the lock, read without it by parked waiters.
    generation: AtomicU64,
    /// `any` of the generation that released last: what its waiters return. It cannot change
    /// before they read it, since the next release needs each of them to arrive again.
    released_any: AtomicBool,
}

impl SimBarrier {
    pub(super) fn new(live: u32) -> SimBarrier {
        SimBarrier {
            state: Mutex::new(State {
                live,
                arrived: 0,
                any: false,
                progress: Instant::now(),
                waiters: Vec::new(),
            }),
            generation: AtomicU64::new(0),
            released_any: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave `State` inconsistent (every update is a
        // single field write), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Opens the barrier if every live thread has arrived: the threads to unpark, once the
    /// lock is let go.
    fn release_if_complete(&self, s: &mut State) -> Option<Vec<Thread>> {
        if s.arrived > 0 && s.arrived >= s.live {
            s.arrived = 0;
            self.released_any
                .store(std::mem::take(&mut s.any), Ordering::Relaxed);
            // Release: a waiter that reads the new generation reads `released_any` too, and
            // everything the arrivals wrote before they arrived.
            self.generation.fetch_add(1, Ordering::Release);
            Some(std::mem::take(&mut s.waiters))
        } else {
            None
        }
    }

    /// Once the generation a waiter arrived at has been released: what it returns (whether
    /// any thread arrived with its predicate set). `None` while it is still open.
    fn released_since(&self, generation: u64) -> Option<bool> {
        // Acquire: pairs with the release's increment, so `released_any` and everything the
        // arrivals wrote before they arrived are seen.
        (self.generation.load(Ordering::Acquire) != generation)
            .then(|| self.released_any.load(Ordering::Relaxed))
    }

    /// Waits for every live thread; unwinds with [`Abort`] on deadlock or when the launch aborts.
    /// Returns whether any thread arrived with `predicate` set (`__syncthreads_or`).
    pub(super) fn wait(&self, launch: &Launch, what: &'static str, predicate: bool) -> bool {
        self.wait_within(launch, what, predicate, WAIT_LIMIT)
    }

    /// [`wait`](Self::wait), a deadlock after `limit` without progress.
    fn wait_within(
        &self,
        launch: &Launch,
        what: &'static str,
        predicate: bool,
        limit: Duration,
    ) -> bool {
        let mut s = self.lock();
        s.arrived += 1;
        s.any |= predicate;
        s.progress = Instant::now();
        if let Some(woken) = self.release_if_complete(&mut s) {
            drop(s);
            woken.iter().for_each(Thread::unpark);
            return self.released_any.load(Ordering::Relaxed);
        }
        let generation = self.generation.load(Ordering::Relaxed);
        drop(s);
        for _ in 0..YIELDS {
            std::thread::yield_now();
            if let Some(any) = self.released_since(generation) {
                return any;
            }
        }
        s = self.lock();
        if let Some(any) = self.released_since(generation) {
            return any;
        }
        s.waiters.push(std::thread::current());
        loop {
            // A failing launch wakes its barriers ([`wake`](Self::wake)) under this lock, so
            // the abort flag read here cannot be set unseen before the park below: the wake
            // unparks this thread, and the park returns at once.
            let idle = s.progress.elapsed();
            let timed_out = idle > limit;
            if timed_out || launch.aborted() {
                s.arrived -= 1;
                drop(s);
                if timed_out {
                    launch.fail(SimError::Deadlock(what));
                }
                std::panic::resume_unwind(Box::new(Abort));
            }
            drop(s);
            // A park can also return for no reason, or for a token another wait left: each
            // return looks at the generation again.
            std::thread::park_timeout(limit - idle + DEADLINE_SLACK);
            if let Some(any) = self.released_since(generation) {
                return any;
            }
            s = self.lock();
            if let Some(any) = self.released_since(generation) {
                return any;
            }
        }
    }

    /// [`wait`](Self::wait) in a weak launch, as thread `me`: the thread holding the token
    /// arrives; the last to arrive opens the barrier for the others (they become ready to run),
    /// the others give the token away until it opens.
    pub(super) fn wait_weak(
        &self,
        launch: &Launch,
        w: &super::weak::sched::WeakLaunch,
        me: u32,
        what: &'static str,
        predicate: bool,
    ) -> bool {
        let mut s = self.lock();
        s.arrived += 1;
        s.any |= predicate;
        // No thread of a weak launch parks here: nobody to unpark.
        if self.release_if_complete(&mut s).is_some() {
            drop(s);
            w.release(self.key());
            return self.released_any.load(Ordering::Relaxed);
        }
        drop(s);
        match w.block(me, self.key(), &|| launch.aborted()) {
            // Nothing ran between the release and this read but the threads it released.
            Ok(()) => self.released_any.load(Ordering::Relaxed),
            Err(why) => {
                self.lock().arrived -= 1;
                launch.stuck(why, what)
            }
        }
    }

    /// Wakes every waiter to look at the launch's abort flag.
    pub(super) fn wake(&self) {
        let s = self.lock();
        s.waiters.iter().for_each(Thread::unpark);
    }

    /// The barrier's identity in a weak launch's scheduler.
    pub(super) fn key(&self) -> usize {
        self as *const SimBarrier as usize
    }

    /// A thread is done (exited or unwound): the barrier stops waiting for it. Returns whether
    /// that opened it.
    pub(super) fn leave(&self) -> bool {
        let mut s = self.lock();
        s.live = s.live.saturating_sub(1);
        s.progress = Instant::now();
        let woken = self.release_if_complete(&mut s);
        drop(s);
        woken.map(|w| w.iter().for_each(Thread::unpark)).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LaunchConfig;

    /// Threads arrive `gaps` apart at a barrier whose deadlock limit is `limit`: whether every
    /// one got through, and the launch's error.
    fn arrive_apart(gaps: &[Duration], limit: Duration) -> (bool, Option<SimError>) {
        let launch = Launch::new(&LaunchConfig::linear(1, gaps.len() as u32 + 1), None, None);
        let barrier = SimBarrier::new(gaps.len() as u32 + 1);
        let after: Vec<Duration> = std::iter::once(Duration::ZERO)
            .chain(gaps.iter().scan(Duration::ZERO, |t, g| {
                *t += *g;
                Some(*t)
            }))
            .collect();
        let through = std::thread::scope(|scope| {
            let threads: Vec<_> = after
                .into_iter()
                .map(|after| {
                    let (launch, barrier) = (&launch, &barrier);
                    scope.spawn(move || {
                        std::thread::sleep(after);
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            barrier.wait_within(launch, "a test barrier", false, limit)
                        }))
                        .is_ok()
                    })
                })
                .collect();
            threads.into_iter().all(|t| t.join().unwrap())
        });
        let error = launch.error.lock().unwrap().take();
        (through, error)
    }

    #[test]
    fn a_barrier_still_being_reached_is_not_a_deadlock() {
        // Each gap is well under the limit, the whole wait well over it: a block that a busy
        // host runs slowly.
        let gap = Duration::from_millis(200);
        let (through, error) = arrive_apart(&[gap; 4], Duration::from_millis(500));
        assert!(through, "{error:?}");
        assert!(error.is_none(), "{error:?}");
    }

    #[test]
    fn a_barrier_nobody_reaches_for_the_limit_is_a_deadlock() {
        let (through, error) = arrive_apart(
            &[Duration::from_millis(10), Duration::from_millis(900)],
            Duration::from_millis(300),
        );
        assert!(!through);
        assert!(
            matches!(error, Some(SimError::Deadlock("a test barrier"))),
            "{error:?}"
        );
    }

    #[test]
    fn a_failing_launch_wakes_its_waiters_at_once() {
        // A thread waits at its block's barrier (the deadlock limit is 20 s); another fails the
        // launch. The waiter must unwind at once, not when its limit ends.
        let launch = Launch::new(&LaunchConfig::linear(1, 2), None, None);
        let waited = std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let start = Instant::now();
                let through = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    launch.blocks[0]
                        .barrier()
                        .wait(&launch, "a test barrier", false)
                }))
                .is_ok();
                (through, start.elapsed())
            });
            std::thread::sleep(Duration::from_millis(100));
            launch.fail(SimError::Panicked("the other thread".into()));
            waiter.join().unwrap()
        });
        assert!(
            !waited.0,
            "the waiter went through a barrier its partner never reached"
        );
        assert!(
            waited.1 < Duration::from_secs(5),
            "woken after {:?}",
            waited.1
        );
        assert_eq!(
            launch.error.lock().unwrap().take(),
            Some(SimError::Panicked("the other thread".into()))
        );
    }
}
