//! How each variant of the litmus kernel loads, stores, fences and performs its
//! read-modify-writes: one type per variant, so each is compiled into a kernel body of its own
//! and the racing section holds nothing but its instructions.

use super::{OP_ADD, OP_CAS, OP_EXCH, OP_LOAD, OP_RED, OP_STORE};
use crate::access::{load_volatile, load_weak, store_volatile, store_weak};
use crate::atomic::{
    LoadOrder, Order, Scope, StoreOrder, compare_and_swap, exch, fetch_add, load, red_add, store,
};
use crate::sync::{
    fence_acq_rel_block, fence_acq_rel_device, fence_acq_rel_system, fence_sc_block,
    fence_sc_device, fence_sc_system,
};

/// How a variant loads, stores and fences; its read-modify-writes are atomics,
/// acquire-release for the release/acquire variant, relaxed for the others (atomics have no
/// plain or volatile form). The atomic accesses and read-modify-writes are at scope `s`:
/// [`Scope::Device`] on one GPU, [`Scope::System`] across GPUs (a constant in each kernel
/// body, so the racing section holds one instruction per access).
pub(super) trait Access {
    /// The read-modify-writes' ordering.
    const RMW: Order = Order::Relaxed;
    /// The load.
    unsafe fn ld(p: *mut u32, s: Scope) -> u32;
    /// The store.
    unsafe fn st(p: *mut u32, v: u32, s: Scope);
    /// What goes between a thread's two operations.
    fn between();

    /// Operation `kind` on `p` with `value` at scope `s`; what it read (0 for stores).
    #[inline(always)]
    unsafe fn op(kind: u32, p: *mut u32, value: u32, s: Scope) -> u32 {
        let red = match Self::RMW {
            Order::AcqRel | Order::Release => StoreOrder::Release,
            _ => StoreOrder::Relaxed,
        };
        // SAFETY: `p` is one of the instance's locations.
        unsafe {
            match kind {
                OP_STORE => {
                    Self::st(p, value, s);
                    0
                }
                OP_LOAD => Self::ld(p, s),
                OP_ADD => fetch_add(p, value, s, Self::RMW),
                OP_RED => {
                    red_add(p, value, s, red);
                    0
                }
                OP_EXCH => exch(p, value, s, Self::RMW),
                OP_CAS => compare_and_swap(p, 1, value, s, Self::RMW),
                _ => 0,
            }
        }
    }
}

macro_rules! access {
    ($($name:ident $(($order:ident))?: ld |$p:ident, $s:ident| $ld:expr, st |$q:ident, $v:ident, $t:ident| $st:expr, between $f:expr;)*) => {$(
        pub(super) struct $name;
        impl Access for $name {
            $(const RMW: Order = Order::$order;)?
            #[inline(always)]
            #[allow(unused_variables)]
            unsafe fn ld($p: *mut u32, $s: Scope) -> u32 {
                // SAFETY: `p` is one of the instance's locations.
                unsafe { $ld }
            }
            #[inline(always)]
            #[allow(unused_variables)]
            unsafe fn st($q: *mut u32, $v: u32, $t: Scope) {
                // SAFETY: as above.
                unsafe { $st }
            }
            #[inline(always)]
            fn between() {
                $f
            }
        }
    )*};
}

// ANCHOR: variants
access! {
    Plain: ld |p, s| load_weak(p), st |p, v, s| store_weak(p, v), between ();
    Volatile: ld |p, s| load_volatile(p), st |p, v, s| store_volatile(p, v), between ();
    Relaxed: ld |p, s| load(p, s, LoadOrder::Relaxed), st |p, v, s| store(p, v, s, StoreOrder::Relaxed), between ();
    RelAcq(AcqRel): ld |p, s| load(p, s, LoadOrder::Acquire), st |p, v, s| store(p, v, s, StoreOrder::Release), between ();
    AcqRelCta: ld |p, s| Relaxed::ld(p, s), st |p, v, s| Relaxed::st(p, v, s), between fence_acq_rel_block();
    AcqRelGpu: ld |p, s| Relaxed::ld(p, s), st |p, v, s| Relaxed::st(p, v, s), between fence_acq_rel_device();
    AcqRelSys: ld |p, s| Relaxed::ld(p, s), st |p, v, s| Relaxed::st(p, v, s), between fence_acq_rel_system();
    ScCta: ld |p, s| Relaxed::ld(p, s), st |p, v, s| Relaxed::st(p, v, s), between fence_sc_block();
    ScGpu: ld |p, s| Relaxed::ld(p, s), st |p, v, s| Relaxed::st(p, v, s), between fence_sc_device();
    ScSys: ld |p, s| Relaxed::ld(p, s), st |p, v, s| Relaxed::st(p, v, s), between fence_sc_system();
}
// ANCHOR_END: variants
