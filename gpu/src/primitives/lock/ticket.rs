//! The ticket lock: fair, one atomic per acquisition.

use super::{DEFAULT_TIMEOUT_NS, LockError};
use crate::atomic::{LoadOrder, Order, Scope, StoreOrder, fetch_add, load, store};
use crate::mem::Ptr;
use crate::time::{globaltimer_ns, nanosleep};
use core::marker::PhantomData;

/// The device memory behind a [`TicketLock`].
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TicketState {
    /// The next ticket to hand out.
    pub next: u32,
    /// The ticket being served (whose holder may enter).
    pub serving: u32,
    /// Nanoseconds a thread may wait before giving up.
    pub timeout_ns: u64,
    /// Nanoseconds to sleep per ticket ahead of this one, between polls.
    pub backoff_per_ticket_ns: u32,
    _pad: [u32; 27],
    /// Threads that gave up; non-zero after a launch means the launch failed.
    pub timeouts: u32,
    _pad2: [u32; 31],
}

/// The default sleep per waiting ticket ahead, in nanoseconds: the best of the sweep in
/// `gridsync bench mutex --sweep`; a whole hand-off (~1 µs) per ticket oversleeps.
pub const DEFAULT_BACKOFF_PER_TICKET_NS: u32 = 64;

const _: () = assert!(size_of::<TicketState>() == 256);

impl TicketState {
    /// A fresh lock (ticket 0 served next) with these bounds.
    pub const fn new(timeout_ns: u64, backoff_per_ticket_ns: u32) -> TicketState {
        TicketState {
            next: 0,
            serving: 0,
            timeout_ns,
            backoff_per_ticket_ns,
            _pad: [0; 27],
            timeouts: 0,
            _pad2: [0; 31],
        }
    }
}

impl Default for TicketState {
    fn default() -> TicketState {
        TicketState::new(DEFAULT_TIMEOUT_NS, DEFAULT_BACKOFF_PER_TICKET_NS)
    }
}

/// A fair (first come, first served) device-scope lock: take a ticket with one atomic add,
/// wait until it is served.
///
/// Scope: device. PTX: `atom.relaxed.gpu.add.u32` for the ticket, `ld.acquire.gpu.u32` to wait,
/// `st.release.gpu.u32` to serve the next ticket.
///
/// # Memory ordering
///
/// As [`Mutex`](super::Mutex): the releasing thread's accesses happen-before the next ticket holder's
/// critical section (release store of `serving`, acquire load of it).
///
/// # Trade-off
///
/// Fair, and one atomic per acquisition however many wait — but the lock passes to the next
/// ticket even if that thread is asleep in its back-off, so hand-offs are slower than a
/// [`Mutex`](super::Mutex)'s. A thread that gives up leaves its ticket unserved forever, so after one timeout
/// every later ticket fails ([`LockError::Abandoned`] once seen).
#[derive(Clone, Copy, Debug)]
pub struct TicketLock {
    state: *mut TicketState,
}

/// Proof that the calling thread holds a [`TicketLock`]; serves the next ticket when dropped.
#[must_use = "the lock is released as soon as the guard is dropped"]
pub struct TicketGuard<'a> {
    serving: *mut u32,
    ticket: u32,
    _lock: PhantomData<&'a TicketLock>,
}

impl TicketLock {
    /// A handle to the lock whose state is at `state`; owns nothing.
    ///
    /// # Safety
    /// As [`Mutex::from_ptr`](super::Mutex::from_ptr), for a [`TicketState`].
    #[inline(always)]
    pub unsafe fn from_ptr(state: *mut TicketState) -> TicketLock {
        TicketLock { state }
    }

    /// Takes a ticket and waits for it to be served, sleeping in proportion to the number of
    /// tickets ahead.
    ///
    /// # Errors
    /// As [`Mutex::lock`](super::Mutex::lock).
    #[inline(always)]
    pub fn lock(&self) -> Result<TicketGuard<'_>, LockError> {
        let s = self.state;
        // SAFETY (every block below): `from_ptr`'s contract; the counters are only accessed
        // atomically, the bounds only read.
        let (timeout_ns, per_ticket) = unsafe {
            (
                Ptr::new(&raw mut (*s).timeout_ns).load(),
                Ptr::new(&raw mut (*s).backoff_per_ticket_ns).load(),
            )
        };
        let (next, serving, timeouts) = unsafe {
            (
                &raw mut (*s).next,
                &raw mut (*s).serving,
                &raw mut (*s).timeouts,
            )
        };
        let ticket = unsafe { fetch_add(next, 1, Scope::Device, Order::Relaxed) };
        // A bound of a second or more is "never in practice"; the simulator, slower, stretches it.
        let timeout_ns = crate::seam::spin::stretch_bound(timeout_ns);
        let start = globaltimer_ns();
        loop {
            let now_serving = unsafe { load(serving, Scope::Device, LoadOrder::Acquire) };
            if now_serving == ticket {
                return Ok(TicketGuard {
                    serving,
                    ticket,
                    _lock: PhantomData,
                });
            }
            if unsafe { load(timeouts, Scope::Device, LoadOrder::Relaxed) } != 0 {
                unsafe { fetch_add(timeouts, 1, Scope::Device, Order::Relaxed) };
                return Err(LockError::Abandoned);
            }
            if globaltimer_ns().wrapping_sub(start) > timeout_ns {
                unsafe { fetch_add(timeouts, 1, Scope::Device, Order::Relaxed) };
                return Err(LockError::TimedOut);
            }
            let ahead = ticket.wrapping_sub(now_serving);
            nanosleep(ahead.saturating_mul(per_ticket).min(MAX_TICKET_SLEEP_NS));
        }
    }
}

/// The longest single sleep of a ticket waiter: about 50 hand-offs.
const MAX_TICKET_SLEEP_NS: u32 = 50_000;

impl Drop for TicketGuard<'_> {
    /// Serves the next ticket: `st.release.gpu` of `ticket + 1`.
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: `from_ptr`'s contract; only the holder of `ticket` writes `serving` now.
        unsafe {
            store(
                self.serving,
                self.ticket.wrapping_add(1),
                Scope::Device,
                StoreOrder::Release,
            )
        };
    }
}
