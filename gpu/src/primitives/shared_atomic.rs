//! Atomics addressed in the **shared state space**: `red.shared` instead of a generic `red`.
//!
//! [`crate::atomic`] emits every operation with a generic address, so one function serves global
//! and shared memory. On an address in the shared window that costs speed: ptxas turns a generic
//! atomic into the generic `ATOM` (which must find out at run time which memory the address is
//! in), not into the shared-memory unit's own `ATOMS` (`docs/perf-notes.md`, "What the compiler
//! makes of it"). A histogram does one shared atomic per input byte, so it names the state space:
//! [`SharedU32`] holds a 32-bit shared-window address (made once per thread with
//! `cvta.to.shared`), its arithmetic is 32-bit, and [`SharedU32::red_add_block`] is one
//! `red.relaxed.cta.shared.add.u32`.
//!
//! In the simulator a [`SharedU32`] is a host pointer and the add is a relaxed
//! `AtomicU32::fetch_add`, reported to the checker in a checked launch as a block-scope
//! read-modify-write.

use crate::seam::shared::SharedAddr;

/// The address of a `u32` in this block's shared memory, in the shared state space.
///
/// Made from a generic pointer into shared memory ([`SharedU32::from_generic`], for instance
/// from [`dynamic_shared`](crate::shared::dynamic_shared)); offset with [`SharedU32::offset`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SharedU32 {
    addr: SharedAddr,
}

impl SharedU32 {
    /// The shared-window address of `p`. PTX: `cvta.to.shared.u64` and a truncation to 32 bits
    /// (shared addresses are below 2³²).
    ///
    /// # Safety
    /// `p` points into this block's shared memory (static or dynamic); a generic address of
    /// global or local memory gives a meaningless shared address.
    #[inline(always)]
    pub unsafe fn from_generic(p: *mut u32) -> SharedU32 {
        SharedU32 {
            addr: crate::seam::shared::cvta_to_shared(p),
        }
    }

    /// The shared address itself (what `mapa` maps into another block of the cluster).
    #[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
    #[inline(always)]
    pub(crate) fn addr(self) -> SharedAddr {
        self.addr
    }

    /// The address `i` words further (32-bit arithmetic on the device; no check).
    #[inline(always)]
    pub fn offset(self, i: u32) -> SharedU32 {
        SharedU32 {
            addr: self.addr.wrapping_add(i.wrapping_mul(4)),
        }
    }

    /// `*self += val`, atomically with respect to the threads of the block, without returning
    /// the old value: the thread does not wait for the add to be performed.
    ///
    /// Scope: block. Ordering: relaxed. CUDA: `atomicAdd_block` on a `__shared__` word with the
    /// result unused (nvcc makes it the same instruction). PTX: `red.relaxed.cta.shared.add.u32`
    /// (SASS: `ATOMS.ADD` into the zero register).
    ///
    /// Not a way to publish data: relaxed orders nothing else; a `sync_threads` does. Two adds of
    /// one warp instruction to one word, or to words in one bank, are performed one after the
    /// other — the cost a histogram of real text pays on its common letters.
    ///
    /// # Safety
    /// `self` is a word of this block's shared memory (inside what the launch gave), and every
    /// access to it racing with this one is atomic too.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn red_add_block(self, val: u32) {
        // SAFETY: the caller upholds the contract above.
        unsafe { crate::seam::shared::red_relaxed_cta_shared_add_u32(self.addr, val) };
    }
}
