//! The production mutex: warp-cohort acquisition, acquire/release at device scope, back-off,
//! a bounded wait.

use super::{DEFAULT_TIMEOUT_NS, DeviceScope, LOCKED, LockError, LockScope, UNLOCKED};
use crate::atomic::{
    LoadOrder, Order, Scope, StoreOrder, compare_and_swap, fetch_add, load, store,
};
use crate::mem::Ptr;
use crate::time::{globaltimer_ns, nanosleep};
use crate::warp::{lane_id, shfl_sync, sync_warp};
use core::marker::PhantomData;

/// The hand-off word's value when no warp is passing the lock along.
pub const NO_TURN: u32 = u32::MAX;

/// The first back-off sleep of a waiting thread, in nanoseconds.
pub const DEFAULT_BACKOFF_MIN_NS: u32 = 8;
/// The longest back-off sleep; it doubles from the minimum up to this. Chosen from the sweep in
/// `gridsync bench mutex --sweep` (docs/perf-notes.md).
pub const DEFAULT_BACKOFF_MAX_NS: u32 = 128;

/// The device memory behind a [`Mutex`]: the lock word, the error word, and the spin bounds the
/// host chose. The host's `DeviceMutex` owns one and passes `*mut MutexState` to kernels.
///
/// Three 128-byte lines: the lock word every waiter reads; the error word, apart so that reading
/// it while waiting adds no traffic to the lock word's line; and the hand-off word the lanes of
/// the holding warp pass the lock along with.
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MutexState {
    /// [`UNLOCKED`] or [`LOCKED`].
    pub word: u32,
    /// First back-off sleep, in nanoseconds.
    pub backoff_min_ns: u32,
    /// Longest back-off sleep, in nanoseconds.
    pub backoff_max_ns: u32,
    _pad0: u32,
    /// Nanoseconds a thread may wait before giving up.
    pub timeout_ns: u64,
    _pad: [u32; 26],
    /// The number of threads that gave up (timed out, or saw the lock abandoned). Non-zero
    /// after a launch means the launch failed.
    pub timeouts: u32,
    _pad2: [u32; 31],
    /// While a warp holds the lock: the lane whose turn it is ([`NO_TURN`] otherwise).
    pub turn: u32,
    _pad3: [u32; 31],
}

const _: () = assert!(size_of::<MutexState>() == 384);

impl MutexState {
    /// An unlocked lock with these bounds.
    pub const fn new(timeout_ns: u64, backoff_min_ns: u32, backoff_max_ns: u32) -> MutexState {
        MutexState {
            word: UNLOCKED,
            backoff_min_ns,
            backoff_max_ns,
            _pad0: 0,
            timeout_ns,
            _pad: [0; 26],
            timeouts: 0,
            _pad2: [0; 31],
            turn: NO_TURN,
            _pad3: [0; 31],
        }
    }
}

impl Default for MutexState {
    fn default() -> MutexState {
        MutexState::new(
            DEFAULT_TIMEOUT_NS,
            DEFAULT_BACKOFF_MIN_NS,
            DEFAULT_BACKOFF_MAX_NS,
        )
    }
}

/// A device-scope mutex with warp-cohort acquisition and a bounded, backed-off wait: the one to
/// use.
///
/// Scope: device (every thread of the GPU; not the host) — or, as `Mutex<SystemScope>`
/// ([`Mutex::from_ptr_in`]), every GPU of the node and the host. CUDA: what
/// `cuda::binary_semaphore<thread_scope_device>` provides. PTX: the lock word is taken with
/// `atom.acquire.gpu.cas.b32` and given back with `st.release.gpu.b32`; inside a warp the lock
/// is passed lane to lane with `st.release.cta` / `ld.acquire.cta` of the hand-off word.
///
/// # Memory ordering
///
/// Everything a thread does before its [`MutexGuard`] is dropped happens-before everything the
/// next thread to hold the mutex does after [`Mutex::lock`] returns — for every thread of the
/// GPU, in any block. No fence is needed inside or around the critical section.
///
/// # How it waits
///
/// The lanes of a warp that call [`Mutex::lock`] together form a *cohort*: the lowest lane (the
/// leader) takes the lock word for all of them, then the lanes hold it one after another, in
/// lane order, each handing it to the next when its guard drops; the last one releases the
/// word. One hand-off through L2 per warp instead of one per thread — the source's per-warp
/// leader, made automatic — and the lanes never fight each other with 32 atomics on one address.
/// A guard hands the lock to the next lane through a hand-off word in memory; [`Mutex::with`],
/// which takes the critical section as a closure, hands it over at a warp barrier of the two
/// lanes instead, with no trip to memory: the faster way where a warp's lanes lock together.
///
/// The leader waits by test-and-test-and-set with exponential back-off: it sleeps (`nanosleep`,
/// doubling from `backoff_min_ns` to `backoff_max_ns`), reads the word, and tries the swap only
/// if it looks free, so thousands of waiters do not queue atomics in front of the holder's
/// release.
///
/// The wait is bounded: past `timeout_ns` a thread stops waiting, adds the threads it waited
/// for (its cohort) to the state's `timeouts` word and returns [`LockError::TimedOut`]; once any
/// thread has, others return [`LockError::Abandoned`] instead of waiting out their own
/// deadlines. The host checks the word after the launch and returns an error: a lock that is
/// never released fails the launch instead of hanging it.
///
/// Precondition: sm_70 or newer (independent thread scheduling), like every lock here. Holding
/// two guards of one mutex in one thread deadlocks until the timeout, as with any mutex.
#[derive(Clone, Copy, Debug)]
pub struct Mutex<S: LockScope = DeviceScope> {
    state: *mut MutexState,
    /// The scope of the lock word's atomics, in the type: every scope test is settled at
    /// compile time.
    _scope: PhantomData<S>,
}

/// Proof that the calling thread holds a [`Mutex`]; hands it on (or releases it) when dropped.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct MutexGuard<'a, S: LockScope = DeviceScope> {
    // Raw pointers, not `&Mutex`: a reference to the handle would make its address escape, and
    // the compiler would keep it in local memory.
    state: *mut MutexState,
    /// The lanes of this warp holding the lock in turn (just this lane outside a cohort).
    cohort: u32,
    lane: u32,
    _mutex: PhantomData<&'a Mutex<S>>,
}

/// The leader's verdict, broadcast to its cohort.
const HELD: u32 = 0;
const TIMED_OUT: u32 = 1;
const ABANDONED: u32 = 2;

impl Mutex {
    /// A handle to the mutex whose state is at `state`. The handle does not own the memory:
    /// dropping it frees nothing (the host's `DeviceMutex` does, once).
    ///
    /// # Safety
    /// `state` points to a [`MutexState`] in global memory that stays valid while this handle
    /// is used, and is accessed by kernels only through `Mutex` handles.
    #[inline(always)]
    pub unsafe fn from_ptr(state: *mut MutexState) -> Mutex {
        // SAFETY: the caller's contract.
        unsafe { Mutex::from_ptr_in(state) }
    }
}

impl<S: LockScope> Mutex<S> {
    /// A handle whose lock word is taken and released at scope `S`:
    /// `Mutex::<SystemScope>::from_ptr_in` for a mutex shared by several GPUs (its state in one
    /// GPU's memory, mapped into the others) or with the host. Everything else is as
    /// [`Mutex`]: the hand-off inside a warp stays at block scope, which is all one warp needs.
    ///
    /// Scope: `S`. PTX: `atom.acquire.sys.cas.b32` / `st.release.sys.b32` for
    /// [`SystemScope`](super::SystemScope). CUDA: `cuda::binary_semaphore<thread_scope_system>`.
    ///
    /// # Safety
    /// As [`Mutex::from_ptr`], and every thread that takes the mutex — on any GPU — is covered
    /// by `S` (a narrower scope than the threads that share the lock is a data race in the PTX
    /// memory model; `gridsync multi lock` shows what it does).
    #[inline(always)]
    pub unsafe fn from_ptr_in(state: *mut MutexState) -> Mutex<S> {
        Mutex {
            state,
            _scope: PhantomData,
        }
    }

    #[inline(always)]
    fn word(&self) -> *mut u32 {
        // SAFETY: `from_ptr`'s contract; only a field address is formed.
        unsafe { &raw mut (*self.state).word }
    }

    /// Whether some thread holds the lock right now (a relaxed load; stale the moment it
    /// returns — for diagnostics and tests, not for deciding to enter).
    #[inline(always)]
    pub fn is_locked(&self) -> bool {
        // SAFETY: `from_ptr`'s contract; the word is only accessed atomically.
        unsafe { load(self.word(), S::SCOPE, LoadOrder::Relaxed) != UNLOCKED }
    }

    #[inline(always)]
    fn guard(&self, cohort: u32, lane: u32) -> MutexGuard<'_, S> {
        MutexGuard {
            state: self.state,
            cohort,
            lane,
            _mutex: PhantomData,
        }
    }

    /// One attempt by this thread alone: the lock if it was free, `None` if held. Never waits.
    #[inline(always)]
    pub fn try_lock(&self) -> Option<MutexGuard<'_, S>> {
        let lane = lane_id();
        // Not `bool::then_some`: it builds its argument eagerly, and dropping a guard that was
        // never acquired would release another thread's lock.
        if self.try_word() {
            Some(self.guard(1 << lane, lane))
        } else {
            None
        }
    }

    #[inline(always)]
    fn try_word(&self) -> bool {
        // SAFETY: `from_ptr`'s contract; the word is only accessed atomically.
        let seen =
            unsafe { compare_and_swap(self.word(), UNLOCKED, LOCKED, S::SCOPE, Order::Acquire) };
        seen == UNLOCKED
    }

    /// Takes the lock for the calling thread; the lanes of its warp that call it together take
    /// it one after another (see [`Mutex`]).
    ///
    /// Every lane that calls `lock` at the same time must later drop its guard: the next lane
    /// of the cohort waits for it, and a cohort's guards return from `drop` together, once the
    /// last lane has released the lock (so a critical section must not wait for something a
    /// lane of its own cohort does after dropping its guard).
    ///
    /// # Errors
    /// [`LockError::TimedOut`] past the state's `timeout_ns`; [`LockError::Abandoned`] if
    /// another thread already timed out. Either way the state's `timeouts` word counts it.
    #[inline(always)]
    pub fn lock(&self) -> Result<MutexGuard<'_, S>, LockError> {
        let lane = lane_id();
        let cohort = cohort_mask(lane);
        if cohort == 1 << lane {
            return self.lock_thread();
        }
        let leader = cohort.trailing_zeros();
        let verdict = self.elect(lane, cohort);
        // Orders the leader's acquire before the followers' first read of the hand-off word.
        sync_warp(cohort);
        match verdict {
            HELD if lane == leader => Ok(self.guard(cohort, lane)),
            HELD => self.wait_turn(lane).map(|()| self.guard(cohort, lane)),
            TIMED_OUT => Err(LockError::TimedOut),
            _ => Err(LockError::Abandoned),
        }
    }

    /// Runs `f` holding the lock and returns what it returned; the lanes of the warp that call
    /// `with` together run their `f` one after another, in lane order (see [`Mutex`]).
    ///
    /// The fast way through the lock. [`Mutex::lock`]'s guard passes the lock from lane to lane
    /// through a hand-off word in memory (a block-scope release store, the next lane's acquire
    /// load); `with` knows where each lane's critical section ends, so two lanes pass it at a
    /// warp barrier of the two of them (`bar.warp.sync`, which also orders their memory
    /// accesses), with no trip to memory: a quarter to a third more critical sections per second
    /// where a warp's lanes lock together on an H100 (docs/perf-notes.md, "Locks"). A guard cannot do this: one
    /// forgotten (`mem::forget`) by a thread that then exits would leave the next lane at a
    /// barrier with an exited thread, which CUDA leaves undefined; `f` always returns.
    ///
    /// `f` must not wait for a warp-mate (a `sync_warp`, a shuffle, a vote): the mates of its
    /// cohort are waiting for it. A thread alone takes and releases the lock word as
    /// [`Mutex::lock_thread`] does.
    ///
    /// # Errors
    /// As [`Mutex::lock`]; `f` does not run.
    #[inline(always)]
    pub fn with<R>(&self, f: impl FnOnce() -> R) -> Result<R, LockError> {
        let lane = lane_id();
        let cohort = cohort_mask(lane);
        if cohort == 1 << lane {
            return self.with_thread(f);
        }
        match self.elect(lane, cohort) {
            HELD => {}
            TIMED_OUT => return Err(LockError::TimedOut),
            _ => return Err(LockError::Abandoned),
        }
        let before = cohort & ((1 << lane) - 1);
        if before != 0 {
            // The lane before this one hands the lock on at this barrier, after its `f`.
            sync_warp(1 << (31 - before.leading_zeros()) | 1 << lane);
        }
        let r = f();
        let later = lanes_after(cohort, lane);
        if later != 0 {
            sync_warp(1 << lane | 1 << later.trailing_zeros());
        } else {
            self.release_word();
        }
        // The cohort leaves together, as a guard's drop makes it (see there).
        sync_warp(cohort);
        Ok(r)
    }

    /// The cohort's leader takes the lock word for all of `cohort`; every lane of it gets the
    /// verdict: [`HELD`], [`TIMED_OUT`] or [`ABANDONED`].
    #[inline(always)]
    fn elect(&self, lane: u32, cohort: u32) -> u32 {
        let leader = cohort.trailing_zeros();
        let verdict = if lane == leader {
            match self.acquire_word(cohort.count_ones()) {
                Ok(()) => HELD,
                Err(LockError::TimedOut) => TIMED_OUT,
                Err(LockError::Abandoned) => ABANDONED,
            }
        } else {
            HELD
        };
        shfl_sync(cohort, verdict, leader)
    }

    #[inline(always)]
    fn release_word(&self) {
        // SAFETY: `from_ptr`'s contract; called by the holder only, once per acquisition.
        unsafe { release::<S>(self.state) };
    }

    /// Runs `f` holding the lock for this thread alone, with no warp cohort — [`Mutex::with`]
    /// for one thread, as [`Mutex::lock_thread`] is [`Mutex::lock`] for one: take the word, run
    /// `f`, give the word back, nothing else on the path (no guard to carry, so none of the
    /// guard's hand-off tests after the release).
    ///
    /// # Errors
    /// As [`Mutex::lock`]; `f` does not run.
    #[inline(always)]
    pub fn with_thread<R>(&self, f: impl FnOnce() -> R) -> Result<R, LockError> {
        self.acquire_word(1)?;
        let r = f();
        self.release_word();
        Ok(r)
    }

    /// Takes the lock for this thread alone, with no warp cohort: for callers whose lanes are
    /// not converged, or that aggregate their warp themselves (the per-warp leader kernel).
    ///
    /// # Errors
    /// As [`Mutex::lock`].
    #[inline(always)]
    pub fn lock_thread(&self) -> Result<MutexGuard<'_, S>, LockError> {
        let lane = lane_id();
        self.acquire_word(1).map(|()| self.guard(1 << lane, lane))
    }

    /// Test-and-test-and-set with exponential back-off, bounded. On failure counts `waiters`
    /// threads (the cohort this thread waited for) in the error word.
    #[inline(always)]
    fn acquire_word(&self, waiters: u32) -> Result<(), LockError> {
        if self.try_word() {
            return Ok(());
        }
        let s = self.state;
        // SAFETY (every block below): `from_ptr`'s contract; the words are only accessed
        // atomically, the bounds only read.
        let (timeout_ns, min_ns, max_ns) = unsafe {
            (
                Ptr::new(&raw mut (*s).timeout_ns).load(),
                Ptr::new(&raw mut (*s).backoff_min_ns).load().max(1),
                Ptr::new(&raw mut (*s).backoff_max_ns).load(),
            )
        };
        let timeouts = unsafe { &raw mut (*s).timeouts };
        let give_up = |why| {
            unsafe { fetch_add(timeouts, waiters, S::SCOPE, Order::Relaxed) };
            Err(why)
        };
        // A bound of a second or more is "never in practice"; the simulator, slower, stretches it.
        let timeout_ns = crate::seam::spin::stretch_bound(timeout_ns);
        let start = globaltimer_ns();
        let mut backoff = min_ns;
        let mut polls = 0u32;
        loop {
            nanosleep(backoff);
            backoff = backoff.saturating_mul(2).min(max_ns.max(min_ns));
            let free = unsafe { load(self.word(), S::SCOPE, LoadOrder::Relaxed) } == UNLOCKED;
            if free && self.try_word() {
                return Ok(());
            }
            // The error word and the clock every eighth poll: each is a trip the poll that
            // notices a release need not wait for, and the bound is a second or more.
            polls = polls.wrapping_add(1);
            if polls.is_multiple_of(8) {
                if unsafe { load(timeouts, S::SCOPE, LoadOrder::Relaxed) } != 0 {
                    return give_up(LockError::Abandoned);
                }
                if globaltimer_ns().wrapping_sub(start) > timeout_ns {
                    return give_up(LockError::TimedOut);
                }
            }
        }
    }

    /// A follower of the holding cohort waits for the lane before it to hand the lock on.
    #[inline(always)]
    fn wait_turn(&self, lane: u32) -> Result<(), LockError> {
        let s = self.state;
        // SAFETY (every block below): as in `acquire_word`.
        let (timeout_ns, min_ns) = unsafe {
            (
                Ptr::new(&raw mut (*s).timeout_ns).load(),
                Ptr::new(&raw mut (*s).backoff_min_ns).load(),
            )
        };
        let (turn, timeouts) = unsafe { (&raw mut (*s).turn, &raw mut (*s).timeouts) };
        let timeout_ns = crate::seam::spin::stretch_bound(timeout_ns);
        let start = globaltimer_ns();
        // Block scope: only lanes of this warp write the hand-off word while it holds the lock.
        while unsafe { load(turn, Scope::Block, LoadOrder::Acquire) } != lane {
            if globaltimer_ns().wrapping_sub(start) > timeout_ns {
                unsafe { fetch_add(timeouts, 1, S::SCOPE, Order::Relaxed) };
                return Err(LockError::TimedOut);
            }
            nanosleep(min_ns);
        }
        Ok(())
    }
}

/// Gives the lock word of `state` back (`st.release` at `S`'s scope).
///
/// # Safety
/// `state` is the state of a live `Mutex`, and the caller holds its lock (once per
/// acquisition).
#[inline(always)]
unsafe fn release<S: LockScope>(state: *mut MutexState) {
    // SAFETY: the caller's contract; the lock word is only accessed atomically.
    unsafe {
        store(
            &raw mut (*state).word,
            UNLOCKED,
            S::SCOPE,
            StoreOrder::Release,
        )
    };
}

/// The lanes of this warp calling the same `lock` now. On the simulator, whose warp operations
/// need every lane of the warp, each thread is its own cohort.
#[inline(always)]
fn cohort_mask(lane: u32) -> u32 {
    crate::seam::warp::converged_mask(lane)
}

/// The lanes of `cohort` above `lane` (bits 0..=lane cleared): those the lock goes to next.
#[inline(always)]
fn lanes_after(cohort: u32, lane: u32) -> u32 {
    cohort & !(u32::MAX >> (31 - lane))
}

impl<S: LockScope> Drop for MutexGuard<'_, S> {
    /// Hands the lock to the next lane of the cohort (`st.release.cta` of the hand-off word),
    /// or, from the last lane, releases it (`st.release.gpu` of [`UNLOCKED`], `.sys` for a
    /// system-scope mutex).
    #[inline(always)]
    fn drop(&mut self) {
        let later = lanes_after(self.cohort, self.lane);
        let s = self.state;
        // SAFETY (each block): the state of a live `Mutex` (the guard borrows it); only the
        // holder — the guard's owner — writes the hand-off word and the lock word now.
        if later != 0 {
            unsafe {
                store(
                    &raw mut (*s).turn,
                    later.trailing_zeros(),
                    Scope::Block,
                    StoreOrder::Release,
                )
            };
        } else if self.cohort != 1 << self.lane {
            // The last lane of a cohort.
            unsafe {
                store(
                    &raw mut (*s).turn,
                    NO_TURN,
                    Scope::Block,
                    StoreOrder::Relaxed,
                );
                release::<S>(s);
            }
        } else {
            // A thread alone: the release and nothing else (docs/perf-notes.md, "Locks").
            unsafe { release::<S>(s) };
            return;
        }
        // The cohort leaves together, so that lanes which loop back to `lock` call it together
        // again and stay one cohort. Without this the first lane out would come back alone,
        // spin against its own warp's hold, and the warp would splinter into single lanes.
        sync_warp(self.cohort);
    }
}
