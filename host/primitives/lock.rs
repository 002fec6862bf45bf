//! Host-side owners of device locks: [`DeviceMutex`] and [`DeviceTicketLock`].
//!
//! # The bug this makes impossible
//!
//! The blog's `CudaKernelLock` held a `cudaMalloc`'d word and freed it in its destructor. Passed
//! to a kernel *by value*, the kernel's copy was destroyed when the kernel returned — freeing
//! the word — so the second launch used a dangling pointer. Here:
//!
//! - a [`DeviceLock`] is the one owner of its device memory and is neither `Clone` nor `Copy`;
//!   it frees the memory once, when it is dropped on the host;
//! - kernels receive only [`DeviceLock::ptr`], a raw pointer, and build a non-owning handle from
//!   it on the device (`gpu::lock::Mutex::from_ptr`), which has no destructor that frees
//!   anything; a guard's drop only *releases* the lock;
//! - the borrow checker keeps the lock alive for as long as any launch that uses it can run:
//!   the launch helpers take `&DeviceLock` and [`DeviceLock::check`] synchronizes before
//!   reading the state.
//!
//! So one lock can be passed to any number of launches, and is checked after each with
//! [`DeviceLock::check`]: still unlocked, and no thread timed out.

use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::wait::wait_bound;
use gpu::lock::{MutexState, TicketState, UNLOCKED};
use std::time::Duration;

// SAFETY: `#[repr(C)]` structs of u32/u64 with every padding byte an explicit field; all-zero
// and every other bit pattern are valid (the kernels treat any word as a lock state).
unsafe impl Plain for MutexState {}
// SAFETY: as above.
unsafe impl Plain for TicketState {}

/// The device-side state of a lock type, as the host reads it back.
pub trait LockState: Plain + Default {
    /// The lock's name in messages.
    const NAME: &'static str;
    /// Whether no thread holds the lock.
    fn is_free(&self) -> bool;
    /// How many threads gave up waiting.
    fn timeouts(&self) -> u32;
}

impl LockState for MutexState {
    const NAME: &'static str = "mutex";
    fn is_free(&self) -> bool {
        self.word == UNLOCKED
    }
    fn timeouts(&self) -> u32 {
        self.timeouts
    }
}

impl LockState for TicketState {
    const NAME: &'static str = "ticket lock";
    fn is_free(&self) -> bool {
        self.next == self.serving
    }
    fn timeouts(&self) -> u32 {
        self.timeouts
    }
}

/// A lock in device memory, owned by the host. See the [module docs](self).
pub struct DeviceLock<S: LockState> {
    state: Buffer<S>,
    initial: S,
}

/// A [`gpu::lock::Mutex`] owned by the host.
pub type DeviceMutex = DeviceLock<MutexState>;
/// A [`gpu::lock::TicketLock`] owned by the host.
pub type DeviceTicketLock = DeviceLock<TicketState>;

/// How long a device thread may wait for a lock, and how it backs off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MutexBounds {
    /// Past this wait a thread gives up and the launch fails with [`Error::LockTimeout`]. A
    /// timeout of a second or more is stretched under a sanitizer ([`wait_bound`]); a shorter
    /// one is kept as given.
    pub timeout: Duration,
    /// First back-off sleep, nanoseconds.
    pub backoff_min_ns: u32,
    /// Longest back-off sleep, nanoseconds (at most 1 ms, `nanosleep`'s limit).
    pub backoff_max_ns: u32,
}

impl Default for MutexBounds {
    fn default() -> MutexBounds {
        MutexBounds {
            timeout: Duration::from_nanos(gpu::lock::DEFAULT_TIMEOUT_NS),
            backoff_min_ns: gpu::lock::DEFAULT_BACKOFF_MIN_NS,
            backoff_max_ns: gpu::lock::DEFAULT_BACKOFF_MAX_NS,
        }
    }
}

impl MutexBounds {
    /// The device state these bounds describe, its timeout through [`wait_bound`].
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero timeout, a back-off of more than 1 ms, or a minimum
    /// above the maximum.
    pub fn state(&self) -> Result<MutexState> {
        let timeout_ns = timeout_ns(self.timeout)?;
        if self.backoff_min_ns == 0
            || self.backoff_min_ns > self.backoff_max_ns
            || self.backoff_max_ns > 1_000_000
        {
            return Err(Error::InvalidInput(format!(
                "back-off from {} ns to {} ns: need 1 ≤ min ≤ max ≤ 1000000 (nanosleep's limit)",
                self.backoff_min_ns, self.backoff_max_ns
            )));
        }
        Ok(MutexState::new(
            timeout_ns,
            self.backoff_min_ns,
            self.backoff_max_ns,
        ))
    }
}

/// The bound the device gets for `timeout`: [`wait_bound`] of its nanoseconds.
fn timeout_ns(timeout: Duration) -> Result<u64> {
    let ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
    if ns == 0 {
        return Err(Error::InvalidInput(
            "a lock timeout of zero would fail every contended acquisition".into(),
        ));
    }
    Ok(wait_bound(ns))
}

impl<S: LockState> DeviceLock<S> {
    /// A fresh, unlocked lock in `initial`'s state on `target`, taken as it is: unlike the
    /// constructors from bounds, it does not stretch the timeout under a sanitizer.
    ///
    /// # Errors
    /// A driver error (out of memory, …).
    pub fn with_state(target: &Target, initial: S) -> Result<DeviceLock<S>> {
        Ok(DeviceLock {
            state: target.upload(&[initial])?,
            initial,
        })
    }

    /// The pointer kernels take. Valid while `self` lives; the kernel must not outlive it,
    /// which [`DeviceLock::check`] (it synchronizes) and dropping after it guarantee.
    pub fn ptr(&self) -> *mut S {
        self.state.ptr()
    }

    /// The state as it is now (waits for queued kernels first).
    ///
    /// # Errors
    /// A driver error, including a fault of a kernel that used the lock.
    pub fn read(&self, target: &Target) -> Result<S> {
        super::read_state(target, &self.state, "a lock")
    }

    /// Waits for the kernels using the lock and checks what they left: no thread gave up, and
    /// the lock is free.
    ///
    /// # Errors
    /// [`Error::LockTimeout`] if threads gave up waiting; [`Error::LockHeld`] if the lock is
    /// still held; a driver error.
    pub fn check(&self, target: &Target) -> Result<()> {
        let s = self.read(target)?;
        if s.timeouts() > 0 {
            return Err(Error::LockTimeout {
                lock: S::NAME,
                threads: s.timeouts(),
            });
        }
        if !s.is_free() {
            return Err(Error::LockHeld(S::NAME));
        }
        Ok(())
    }

    /// Puts the lock back in its initial state (after a failed launch, say).
    ///
    /// # Errors
    /// A driver error.
    pub fn reset(&self, target: &Target) -> Result<()> {
        target.write(&self.state, &[self.initial])
    }
}

impl DeviceMutex {
    /// An unlocked mutex with the default bounds (a 2 s timeout, stretched under a sanitizer).
    ///
    /// # Errors
    /// A driver error (out of memory, …).
    pub fn new(target: &Target) -> Result<DeviceMutex> {
        DeviceMutex::with_bounds(target, MutexBounds::default())
    }

    /// An unlocked mutex with these bounds.
    ///
    /// # Errors
    /// As [`MutexBounds::state`]; a driver error.
    pub fn with_bounds(target: &Target, bounds: MutexBounds) -> Result<DeviceMutex> {
        DeviceLock::with_state(target, bounds.state()?)
    }
}

impl DeviceTicketLock {
    /// A fresh ticket lock with the default bounds (a 2 s timeout, stretched under a sanitizer).
    ///
    /// # Errors
    /// A driver error (out of memory, …).
    pub fn new(target: &Target) -> Result<DeviceTicketLock> {
        let default = TicketState::default();
        DeviceTicketLock::with_bounds(
            target,
            Duration::from_nanos(default.timeout_ns),
            default.backoff_per_ticket_ns,
        )
    }

    /// A fresh ticket lock that gives up after `timeout` (stretched under a sanitizer where it
    /// is a second or more: [`wait_bound`]), sleeping `backoff_per_ticket_ns` per
    /// waiting ticket ahead between polls.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a zero timeout; a driver error.
    pub fn with_bounds(
        target: &Target,
        timeout: Duration,
        backoff_per_ticket_ns: u32,
    ) -> Result<DeviceTicketLock> {
        let state = TicketState::new(timeout_ns(timeout)?, backoff_per_ticket_ns);
        DeviceLock::with_state(target, state)
    }
}
