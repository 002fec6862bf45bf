//! Shared memory: each simulated block's shared memory is host memory, and a shared address
//! is the generic pointer.

use crate::atomic::{Order, Scope};
use crate::sim::check::{AccessKind, report_atomic};
use core::sync::atomic::{AtomicU32, Ordering};

/// A shared-memory address: in the simulator, the generic pointer (the shared window of the
/// GPU has no twin).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SharedAddr(pub(crate) *mut u8);

impl SharedAddr {
    /// The address `bytes` further on.
    #[inline(always)]
    pub(crate) fn wrapping_add(self, bytes: u32) -> SharedAddr {
        SharedAddr(self.0.wrapping_add(bytes as usize))
    }

    /// The pointer, as a `T`.
    #[inline(always)]
    pub(crate) fn ptr<T>(self) -> *mut T {
        self.0.cast()
    }
}

/// The shared address of a generic pointer into shared memory: the pointer itself.
#[inline(always)]
pub(crate) fn cvta_to_shared<T>(p: *const T) -> SharedAddr {
    SharedAddr(p.cast_mut().cast())
}

/// The start of this block's dynamic shared memory.
///
/// # Safety
/// As [`crate::shared::dynamic_shared`].
#[inline(always)]
pub(crate) unsafe fn dynamic_shared_base<T>() -> *mut T {
    crate::sim::shared_base().cast()
}

/// `red.relaxed.cta.shared.add.u32`: a relaxed block-scope add, reported to the checker.
///
/// # Safety
/// `addr` is a 4-byte aligned word of this block's shared memory, only accessed atomically.
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn red_relaxed_cta_shared_add_u32(addr: SharedAddr, val: u32) {
    let p = addr.ptr::<u32>();
    // SAFETY: the caller's contract: a valid, aligned, shared word.
    let a = unsafe { AtomicU32::from_ptr(p) };
    report_atomic(
        AccessKind::Rmw,
        p as usize,
        4,
        Order::Relaxed,
        Scope::Block,
        || a.fetch_add(val, Ordering::Relaxed),
    );
}
