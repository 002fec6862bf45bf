//! The simulator's allocations, for out-of-bounds accesses: each buffer the host library makes
//! on the simulator registers its bytes and the guard zone behind them, and an access of a
//! checked launch that starts in a guard zone — past a buffer's end, before the next
//! allocation — is reported with its line (memcheck's finding, here without a GPU).
//!
//! Only what was registered is judged: memory a test allocated itself is neither inside nor
//! outside anything, and its accesses are not bounds-checked. The guard zone is part of the
//! allocation, so an access past the end lands in it instead of in other host memory: the
//! simulator reports it, and nothing else is overwritten.

use std::collections::BTreeMap;
use std::sync::{PoisonError, RwLock};

/// Every registered allocation: its first byte → (its length in bytes, the end of its guard
/// zone).
static ALLOCATIONS: RwLock<BTreeMap<usize, (usize, usize)>> = RwLock::new(BTreeMap::new());

/// A registered allocation; dropping it forgets it.
#[derive(Debug)]
pub struct Allocation {
    start: usize,
}

/// Registers the `bytes` bytes at `start`, followed by `guard` bytes of the same allocation
/// that no access may touch. Keep the [`Allocation`] as long as the memory.
pub fn allocation(start: usize, bytes: usize, guard: usize) -> Allocation {
    let end = start.saturating_add(bytes).saturating_add(guard);
    ALLOCATIONS
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(start, (bytes, end));
    Allocation { start }
}

impl Drop for Allocation {
    fn drop(&mut self) {
        ALLOCATIONS
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.start);
    }
}

/// Where an access of `width` bytes at `addr` overruns a registered allocation: the
/// allocation's first byte and length, when the access starts inside the allocation or its
/// guard zone and does not end inside its bytes.
pub(super) fn overrun(addr: usize, width: u32) -> Option<(usize, usize)> {
    let all = ALLOCATIONS.read().unwrap_or_else(PoisonError::into_inner);
    let (&start, &(bytes, end)) = all.range(..=addr).next_back()?;
    let inside = addr.checked_add(width as usize)? <= start + bytes;
    (addr < end && !inside).then_some((start, bytes))
}
