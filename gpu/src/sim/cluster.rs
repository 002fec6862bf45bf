//! Thread block clusters in the simulator: the split cluster barrier, and the blocks of a
//! cluster reaching each other's shared memory.
//!
//! Every block of a simulated grid runs at once, so a cluster's blocks are co-scheduled as on
//! the GPU without anything more. What clusters add is the hardware barrier over all the
//! cluster's threads — split in two, `barrier.cluster.arrive` and `barrier.cluster.wait` — and
//! `mapa`, which turns an address of this block's shared memory into the same address in a
//! sibling's.

use super::barrier::DEADLINE_SLACK;
use super::{Abort, Launch, SimError, WAIT_LIMIT};
use std::cell::Cell;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

struct State {
    /// Threads of the cluster still running.
    live: u32,
    /// Arrivals at the current phase.
    arrived: u32,
    /// Phases completed so far.
    phase: u64,
    /// When a thread last arrived or left: a deadlock is [`WAIT_LIMIT`] without either, as at
    /// the block barrier.
    progress: Instant,
}

/// A barrier whose arrival and wait are two calls, as `barrier.cluster.arrive` and
/// `barrier.cluster.wait` are: a thread arrives, may do other work, then waits for the phase it
/// arrived at to complete. Threads that exit stop counting, as on the GPU.
pub(super) struct SplitBarrier {
    state: Mutex<State>,
    cv: Condvar,
}

thread_local! {
    /// The phase this thread arrived at and has not yet waited for.
    static ARRIVED_AT: Cell<Option<u64>> = const { Cell::new(None) };
}

impl SplitBarrier {
    pub(super) fn new(live: u32) -> SplitBarrier {
        SplitBarrier {
            state: Mutex::new(State {
                live,
                arrived: 0,
                phase: 0,
                progress: Instant::now(),
            }),
            cv: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every update is a field write or two under the lock: a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn complete_if_all(&self, s: &mut State) {
        if s.arrived > 0 && s.arrived >= s.live {
            s.arrived = 0;
            s.phase += 1;
            self.cv.notify_all();
        }
    }

    /// The calling thread arrives at the current phase.
    ///
    /// # Panics
    /// If it arrived before and has not waited since: on the GPU a second arrival before the
    /// wait is undefined behaviour.
    pub(super) fn arrive(&self) {
        if ARRIVED_AT.get().is_some() {
            panic!(
                "barrier.cluster.arrive twice without a barrier.cluster.wait between \
                 (undefined behaviour on the GPU)"
            );
        }
        let mut s = self.lock();
        ARRIVED_AT.set(Some(s.phase));
        s.arrived += 1;
        s.progress = Instant::now();
        self.complete_if_all(&mut s);
    }

    /// Waits until the phase the calling thread arrived at has completed; unwinds with
    /// [`Abort`] on deadlock or when the launch aborts.
    ///
    /// # Panics
    /// If the thread did not arrive first (undefined behaviour on the GPU).
    pub(super) fn wait(&self, launch: &Launch) {
        let Some(phase) = ARRIVED_AT.take() else {
            panic!(
                "barrier.cluster.wait without a barrier.cluster.arrive before it (undefined \
                 behaviour on the GPU)"
            );
        };
        let mut s = self.lock();
        while s.phase == phase {
            // A failing launch wakes this barrier under its lock: see `SimBarrier::wait`.
            let idle = s.progress.elapsed();
            if idle > WAIT_LIMIT {
                drop(s);
                launch.fail(SimError::Deadlock("the cluster barrier"));
                std::panic::resume_unwind(Box::new(Abort));
            }
            if launch.aborted() {
                drop(s);
                std::panic::resume_unwind(Box::new(Abort));
            }
            s = self
                .cv
                .wait_timeout(s, WAIT_LIMIT - idle + DEADLINE_SLACK)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Wakes every waiter to look at the launch's abort flag.
    pub(super) fn wake(&self) {
        let _s = self.lock();
        self.cv.notify_all();
    }

    /// A thread is done (exited or unwound): the barrier stops waiting for it, and an arrival it
    /// made at the current phase no longer counts.
    pub(super) fn leave(&self) {
        let mut s = self.lock();
        s.live = s.live.saturating_sub(1);
        s.progress = Instant::now();
        if ARRIVED_AT.take() == Some(s.phase) {
            s.arrived -= 1;
        }
        self.complete_if_all(&mut s);
    }
}
