//! The simulator's barrier: a counting barrier that threads can also *leave*.
//!
//! On the GPU a thread that has exited no longer takes part in `__syncthreads`; the barrier
//! releases when every thread still running has arrived. Here `leave` lowers the count the
//! same way. A wait that outlasts [`WAIT_LIMIT`](super::WAIT_LIMIT) is a deadlock (a barrier in a
//! branch some threads skip, a divergent warp operation): the waiting thread records it and
//! unwinds instead of hanging the process.

use super::{Abort, Launch, SimError, WAIT_LIMIT};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How often a waiting thread looks at the launch's abort flag.
const POLL: Duration = Duration::from_millis(20);

struct State {
    live: u32,
    arrived: u32,
    generation: u64,
    /// Whether any thread arrived at this generation with its predicate set.
    any: bool,
    /// `any` of the generation that released last: what its waiters return. It cannot change
    /// before they read it, since the next release needs each of them to arrive again.
    released_any: bool,
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
        let mut s = self.lock();
        s.arrived += 1;
        s.any |= predicate;
        if self.release_if_complete(&mut s) {
            return s.released_any;
        }
        let generation = s.generation;
        let deadline = Instant::now() + WAIT_LIMIT;
        loop {
            s = self
                .cv
                .wait_timeout(s, POLL)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
            if s.generation != generation {
                return s.released_any;
            }
            let timed_out = Instant::now() > deadline;
            if timed_out || launch.aborted() {
                s.arrived -= 1;
                drop(s);
                if timed_out {
                    launch.fail(SimError::Deadlock(what));
                }
                std::panic::resume_unwind(Box::new(Abort));
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

    /// The barrier's identity in a weak launch's scheduler.
    pub(super) fn key(&self) -> usize {
        self as *const SimBarrier as usize
    }

    /// A thread is done (exited or unwound): the barrier stops waiting for it. Returns whether
    /// that opened it.
    pub(super) fn leave(&self) -> bool {
        let mut s = self.lock();
        s.live = s.live.saturating_sub(1);
        self.release_if_complete(&mut s)
    }
}
