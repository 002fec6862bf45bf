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

use super::{Abort, Launch, SimError, WAIT_LIMIT};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How far past its deadline a waiter wakes, so that the deadline has passed when it looks.
pub(super) const DEADLINE_SLACK: Duration = Duration::from_millis(1);

struct State {
    live: u32,
    arrived: u32,
    generation: u64,
    /// Whether any thread arrived at this generation with its predicate set.
    any: bool,
    /// `any` of the generation that released last: what its waiters return. It cannot change
    /// before they read it, since the next release needs each of them to arrive again.
    released_any: bool,
    /// When a thread last arrived or left: a deadlock is [`WAIT_LIMIT`] without either.
    progress: Instant,
}

pub(super) struct SimBarrier {
    state: Mutex<State>,
    cv: Condvar,
}

impl SimBarrier {
    pub(super) fn new(live: u32) -> SimBarrier {
        SimBarrier {
            state: Mutex::new(State {
                live,
                arrived: 0,
                generation: 0,
                any: false,
                released_any: false,
                progress: Instant::now(),
            }),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave `State` inconsistent (every update is a
        // single field write), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn release_if_complete(&self, s: &mut State) -> bool {
        if s.arrived > 0 && s.arrived >= s.live {
            s.arrived = 0;
            s.generation += 1;
            s.released_any = std::mem::take(&mut s.any);
            self.cv.notify_all();
            true
        } else {
            false
        }
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
        if self.release_if_complete(&mut s) {
            return s.released_any;
        }
        let generation = s.generation;
        loop {
            if s.generation != generation {
                return s.released_any;
            }
            // A failing launch wakes its barriers ([`wake`](Self::wake)) under this lock, so
            // the abort flag read here cannot be set unseen before the wait below.
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
            s = self
                .cv
                .wait_timeout(s, limit - idle + DEADLINE_SLACK)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
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
        if self.release_if_complete(&mut s) {
            let any = s.released_any;
            drop(s);
            w.release(self.key());
            return any;
        }
        drop(s);
        match w.block(me, self.key(), &|| launch.aborted()) {
            // Nothing ran between the release and this read but the threads it released.
            Ok(()) => self.lock().released_any,
            Err(why) => {
                self.lock().arrived -= 1;
                launch.stuck(why, what)
            }
        }
    }

    /// Wakes every waiter to look at the launch's abort flag.
    pub(super) fn wake(&self) {
        let _s = self.lock();
        self.cv.notify_all();
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
        self.release_if_complete(&mut s)
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
