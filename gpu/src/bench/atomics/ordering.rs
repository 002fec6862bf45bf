//! What *ordering* costs at each scope: the relaxed atomics of [`super`] cost the same at block,
//! device and system scope (all are performed in L2), so scope shows up, where the hardware
//! makes it show up, in release stores, acquire-release read-modify-writes and fences.
//!
//! Every thread repeats one operation `iters` times on its own word (no contention, so only the
//! ordering's cost is measured): `kind` picks it.
//!
//! | kind | operation | PTX |
//! |---|---|---|
//! | [`ORDERING_RELAXED_STORE`] | relaxed store (the baseline) | `st.relaxed.<scope>` |
//! | [`ORDERING_RELEASE_STORE`] | release store | `st.release.<scope>` |
//! | [`ORDERING_ACQ_REL_ADD`] | acquire-release add | `atom.acq_rel.<scope>.add.u32` |
//! | [`ORDERING_FENCE_SC`] | relaxed store, then a sequentially consistent fence | `fence.sc.<scope>` |
//!
//! A release must wait until the thread's earlier writes are visible to the whole scope: for
//! block scope that is the SM's own L1, for device scope L2, for system scope everything up to
//! the host's memory system, which is the expensive one.

use crate::atomic::{Order, Scope, StoreOrder, fetch_add, store};
use crate::index::global_id_x;
use crate::sync::fence_sc;

/// `kind`: a relaxed store (the baseline).
pub const ORDERING_RELAXED_STORE: u32 = 0;
/// `kind`: a release store.
pub const ORDERING_RELEASE_STORE: u32 = 1;
/// `kind`: an acquire-release fetch-add.
pub const ORDERING_ACQ_REL_ADD: u32 = 2;
/// `kind`: a relaxed store followed by `fence.sc`.
pub const ORDERING_FENCE_SC: u32 = 3;

/// The body shared by the three kernels; `scope` is a constant in each.
///
/// # Safety
/// `slots` has one `u32` per thread of the grid.
#[inline(always)]
unsafe fn ordering_body(slots: *mut u32, iters: u32, kind: u32, scope: Scope) {
    // SAFETY: one slot per thread, touched only by this thread.
    let slot = unsafe { slots.add(global_id_x()) };
    for k in 0..iters {
        // SAFETY: as above; every access to the slot is atomic.
        unsafe {
            match kind {
                ORDERING_RELAXED_STORE => store(slot, k, scope, StoreOrder::Relaxed),
                ORDERING_RELEASE_STORE => store(slot, k, scope, StoreOrder::Release),
                ORDERING_ACQ_REL_ADD => {
                    fetch_add(slot, 1, scope, Order::AcqRel);
                }
                _ => {
                    store(slot, k, scope, StoreOrder::Relaxed);
                    fence_sc(scope);
                }
            }
        }
    }
}

macro_rules! ordering_kernel {
    ($name:ident, $scope:expr, $what:literal) => {
        kernel! {
            #[doc = concat!("Each thread repeats `kind`'s operation `iters` times on its own word, at ", $what, " scope.")]
            ///
            /// `slots` holds one `u32` per thread of the grid.
            pub unsafe fn $name(slots: *mut u32, iters: u32, kind: u32) {
                // SAFETY: forwarded to the launch's contract.
                unsafe { ordering_body(slots, iters, kind, $scope) }
            }
        }
    };
}

ordering_kernel!(ordering_cost_block, Scope::Block, "block");
ordering_kernel!(ordering_cost_device, Scope::Device, "device");
ordering_kernel!(ordering_cost_system, Scope::System, "system");
