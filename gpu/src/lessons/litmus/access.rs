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

/// How a variant loads, stores and fences; its read-modify-writes are device-scope atomics,
/// acquire-release for the release/acquire variant, relaxed for the others (atomics have no
/// plain or volatile form).
pub(super) trait Access {
    /// The read-modify-writes' ordering.
    const RMW: Order = Order::Relaxed;
    /// The load.
    unsafe fn ld(p: *mut u32) -> u32;
    /// The store.
    unsafe fn st(p: *mut u32, v: u32);
    /// What goes between a thread's two operations.
    fn between();

    /// Operation `kind` on `p` with `value`; what it read (0 for stores).
    #[inline(always)]
    unsafe fn op(kind: u32, p: *mut u32, value: u32) -> u32 {
        let red = match Self::RMW {
            Order::AcqRel | Order::Release => StoreOrder::Release,
            _ => StoreOrder::Relaxed,
        };
        // SAFETY: `p` is one of the instance's locations.
        unsafe {
            match kind {
                OP_STORE => {
                    Self::st(p, value);
                    0
                }
                OP_LOAD => Self::ld(p),
                OP_ADD => fetch_add(p, value, Scope::Device, Self::RMW),
                OP_RED => {
                    red_add(p, value, Scope::Device, red);
                    0
                }
                OP_EXCH => exch(p, value, Scope::Device, Self::RMW),
                OP_CAS => compare_and_swap(p, 1, value, Scope::Device, Self::RMW),
                _ => 0,
            }
        }
    }
}

macro_rules! access {
    ($($name:ident $(($order:ident))?: ld |$p:ident| $ld:expr, st |$q:ident, $v:ident| $st:expr, between $f:expr;)*) => {$(
        pub(super) struct $name;
        impl Access for $name {
            $(const RMW: Order = Order::$order;)?
            #[inline(always)]
            unsafe fn ld($p: *mut u32) -> u32 {
                // SAFETY: `p` is one of the instance's locations.
                unsafe { $ld }
            }
            #[inline(always)]
            unsafe fn st($q: *mut u32, $v: u32) {
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

access! {
    Plain: ld |p| load_weak(p), st |p, v| store_weak(p, v), between ();
    Volatile: ld |p| load_volatile(p), st |p, v| store_volatile(p, v), between ();
    Relaxed: ld |p| load(p, Scope::Device, LoadOrder::Relaxed), st |p, v| store(p, v, Scope::Device, StoreOrder::Relaxed), between ();
    RelAcq(AcqRel): ld |p| load(p, Scope::Device, LoadOrder::Acquire), st |p, v| store(p, v, Scope::Device, StoreOrder::Release), between ();
    AcqRelCta: ld |p| Relaxed::ld(p), st |p, v| Relaxed::st(p, v), between fence_acq_rel_block();
    AcqRelGpu: ld |p| Relaxed::ld(p), st |p, v| Relaxed::st(p, v), between fence_acq_rel_device();
    AcqRelSys: ld |p| Relaxed::ld(p), st |p, v| Relaxed::st(p, v), between fence_acq_rel_system();
    ScCta: ld |p| Relaxed::ld(p), st |p, v| Relaxed::st(p, v), between fence_sc_block();
    ScGpu: ld |p| Relaxed::ld(p), st |p, v| Relaxed::st(p, v), between fence_sc_device();
    ScSys: ld |p| Relaxed::ld(p), st |p, v| Relaxed::st(p, v), between fence_sc_system();
}
