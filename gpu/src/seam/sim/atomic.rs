//! Atomics, the simulator side: each operation is the `core::sync::atomic` operation with the same
//! ordering. The scope does not change what the operation does — a CPU's caches are coherent, every
//! atomic here is as strong as a system-scoped one — so a plain launch checks a kernel's logic,
//! never whether its scopes are wide enough. In a checked launch (`sim::check::checked`) each
//! operation is reported with its kind, ordering and scope, and performed under the checker's lock
//! of its location: the checker sees a scope too narrow for the threads that share the location. In
//! a weak launch (`sim::weak::scoped`) each operation goes to the weak memory instead, which may
//! show what the PTX model allows its ordering and its scope: a block-scope read-modify-write
//! there is atomic only with its own block's, and may lose another block's update.
//!
//! Every function is `#[track_caller]`, as is every function of the atomic API above it, so a
//! finding names the kernel's line.

use crate::atomic::{LoadOrder, Order, Scope, StoreOrder};
use crate::sim::check::{AccessKind, report_atomic, report_compare_and_swap};
use crate::sim::weak::sched::Width;
use crate::sim::weak::{LoadKind, StoreKind};
use crate::sim::weak_op;
use core::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64, Ordering};

fn rmw(order: Order) -> Ordering {
    match order {
        Order::Relaxed => Ordering::Relaxed,
        Order::Acquire => Ordering::Acquire,
        Order::Release => Ordering::Release,
        Order::AcqRel => Ordering::AcqRel,
    }
}

/// The ordering of a failed compare-exchange: the load part of `order`.
fn failure(order: Order) -> Ordering {
    match order {
        Order::Relaxed | Order::Release => Ordering::Relaxed,
        Order::Acquire | Order::AcqRel => Ordering::Acquire,
    }
}

fn load_order(order: LoadOrder) -> Ordering {
    match order {
        LoadOrder::Relaxed => Ordering::Relaxed,
        LoadOrder::Acquire => Ordering::Acquire,
    }
}

fn store_order(order: StoreOrder) -> Ordering {
    match order {
        StoreOrder::Relaxed => Ordering::Relaxed,
        StoreOrder::Release => Ordering::Release,
    }
}

macro_rules! native_fns {
    ($($name:ident: $atomic:ident . $method:ident, $bits:ty as $val:ty, $w:ident, |$o:ident, $v:ident| $weak:expr;)*) => {$(
        #[inline]
        #[track_caller]
        pub(crate) unsafe fn $name(addr: *mut $bits, val: $bits, scope: Scope, order: Order) -> $bits {
            // SAFETY: the caller upholds the atomic module's contract: `addr` is valid, aligned
            // and only accessed atomically while the kernel runs.
            let a = unsafe { $atomic::from_ptr(addr.cast()) };
            // The operation — on the weak memory in a weak launch — runs inside the checker's
            // report, so that a weak launch is checked too.
            report_atomic(AccessKind::Rmw, addr as usize, size_of::<$bits>() as u32, order, scope, || {
                let weak = weak_op(|w, me| {
                    w.rmw_scoped(me, addr as usize, Width::$w, order, scope.into(), |old| {
                        let ($o, $v) = (old as $bits, val);
                        Some($weak as u64)
                    })
                });
                match weak {
                    Some(old) => old as $bits,
                    None => a.$method(val as $val, rmw(order)) as $bits,
                }
            })
        }
    )*};
}

native_fns! {
    add_u32: AtomicU32.fetch_add, u32 as u32, W32, |o, v| o.wrapping_add(v);
    add_s32: AtomicI32.fetch_add, u32 as i32, W32, |o, v| o.wrapping_add(v);
    add_u64: AtomicU64.fetch_add, u64 as u64, W64, |o, v| o.wrapping_add(v);
    exch_b32: AtomicU32.swap, u32 as u32, W32, |_o, v| v;
    exch_b64: AtomicU64.swap, u64 as u64, W64, |_o, v| v;
    min_u32: AtomicU32.fetch_min, u32 as u32, W32, |o, v| o.min(v);
    min_s32: AtomicI32.fetch_min, u32 as i32, W32, |o, v| (o as i32).min(v as i32) as u32;
    min_u64: AtomicU64.fetch_min, u64 as u64, W64, |o, v| o.min(v);
    min_s64: AtomicI64.fetch_min, u64 as i64, W64, |o, v| (o as i64).min(v as i64) as u64;
    max_u32: AtomicU32.fetch_max, u32 as u32, W32, |o, v| o.max(v);
    max_s32: AtomicI32.fetch_max, u32 as i32, W32, |o, v| (o as i32).max(v as i32) as u32;
    max_u64: AtomicU64.fetch_max, u64 as u64, W64, |o, v| o.max(v);
    max_s64: AtomicI64.fetch_max, u64 as i64, W64, |o, v| (o as i64).max(v as i64) as u64;
    and_b32: AtomicU32.fetch_and, u32 as u32, W32, |o, v| o & v;
    and_b64: AtomicU64.fetch_and, u64 as u64, W64, |o, v| o & v;
    or_b32: AtomicU32.fetch_or, u32 as u32, W32, |o, v| o | v;
    or_b64: AtomicU64.fetch_or, u64 as u64, W64, |o, v| o | v;
    xor_b32: AtomicU32.fetch_xor, u32 as u32, W32, |o, v| o ^ v;
    xor_b64: AtomicU64.fetch_xor, u64 as u64, W64, |o, v| o ^ v;
}

macro_rules! cas_loop_fns {
    ($($name:ident: $atomic:ident, $bits:ty, $w:ident, |$old:ident, $val:ident| $new:expr;)*) => {$(
        #[inline]
        #[track_caller]
        pub(crate) unsafe fn $name(addr: *mut $bits, $val: $bits, scope: Scope, order: Order) -> $bits {
            let weak = weak_op(|w, me| {
                w.rmw_scoped(me, addr as usize, Width::$w, order, scope.into(), |old| {
                    let $old = old as $bits;
                    Some($new as u64)
                })
            });
            if let Some(old) = weak {
                return old as $bits;
            }
            // SAFETY: as in `native_fns`.
            let a = unsafe { $atomic::from_ptr(addr) };
            report_atomic(AccessKind::Rmw, addr as usize, size_of::<$bits>() as u32, order, scope, || {
                match a.fetch_update(rmw(order), failure(order), |$old| Some($new)) {
                    Ok(old) | Err(old) => old,
                }
            })
        }
    )*};
}

cas_loop_fns! {
    add_f32: AtomicU32, u32, W32, |old, val| (f32::from_bits(old) + f32::from_bits(val)).to_bits();
    add_f64: AtomicU64, u64, W64, |old, val| (f64::from_bits(old) + f64::from_bits(val)).to_bits();
    inc: AtomicU32, u32, W32, |old, val| if old >= val { 0 } else { old + 1 };
    dec: AtomicU32, u32, W32, |old, val| if old == 0 || old > val { val } else { old - 1 };
}

macro_rules! width_fns {
    ($($cas:ident, $ld:ident, $st:ident: $atomic:ident, $bits:ty, $w:ident;)*) => {$(
        #[inline]
        #[track_caller]
        pub(crate) unsafe fn $cas(addr: *mut $bits, cmp: $bits, val: $bits, scope: Scope, order: Order) -> $bits {
            // SAFETY: as in `native_fns`.
            let a = unsafe { $atomic::from_ptr(addr) };
            // A failed swap wrote nothing: the checker takes it as a load.
            let (old, swapped) = report_compare_and_swap(addr as usize, size_of::<$bits>() as u32, order, scope, || {
                let weak = weak_op(|w, me| {
                    w.rmw_scoped(me, addr as usize, Width::$w, order, scope.into(), |old| {
                        (old as $bits == cmp).then_some(val as u64)
                    })
                });
                if let Some(old) = weak {
                    let old = old as $bits;
                    return ((old, old == cmp), old == cmp);
                }
                match a.compare_exchange(cmp, val, rmw(order), failure(order)) {
                    Ok(old) => ((old, true), true),
                    Err(old) => ((old, false), false),
                }
            });
            if !swapped && !crate::sim::in_weak_launch() {
                // A failed swap is usually one turn of a spin loop: give the core to the
                // thread being waited for (a lock holder), as a GPU scheduler would issue
                // another warp. Without it a few cores full of spinners starve the holder.
                std::thread::yield_now();
            }
            old
        }

        #[inline]
        #[track_caller]
        pub(crate) unsafe fn $ld(addr: *const $bits, scope: Scope, order: LoadOrder) -> $bits {
            let kind = match order {
                LoadOrder::Relaxed => LoadKind::Relaxed,
                LoadOrder::Acquire => LoadKind::Acquire,
            };
            // SAFETY: as in `native_fns`; the load does not write through the pointer.
            let a = unsafe { $atomic::from_ptr(addr.cast_mut()) };
            let checked = match order {
                LoadOrder::Relaxed => Order::Relaxed,
                LoadOrder::Acquire => Order::Acquire,
            };
            report_atomic(AccessKind::Load, addr as usize, size_of::<$bits>() as u32, checked, scope, || {
                match weak_op(|w, me| w.load_scoped(me, addr as usize, Width::$w, kind, scope.into())) {
                    Some(v) => v as $bits,
                    None => a.load(load_order(order)),
                }
            })
        }

        #[inline]
        #[track_caller]
        pub(crate) unsafe fn $st(addr: *mut $bits, val: $bits, scope: Scope, order: StoreOrder) {
            let kind = match order {
                StoreOrder::Relaxed => StoreKind::Relaxed,
                StoreOrder::Release => StoreKind::Release,
            };
            // SAFETY: as in `native_fns`.
            let a = unsafe { $atomic::from_ptr(addr) };
            let checked = match order {
                StoreOrder::Relaxed => Order::Relaxed,
                StoreOrder::Release => Order::Release,
            };
            report_atomic(AccessKind::Store, addr as usize, size_of::<$bits>() as u32, checked, scope, || {
                if weak_op(|w, me| w.store_scoped(me, addr as usize, Width::$w, val as u64, kind, scope.into())).is_none() {
                    a.store(val, store_order(order))
                }
            })
        }
    )*};
}

width_fns! {
    cas_b32, ld_b32, st_b32: AtomicU32, u32, W32;
    cas_b64, ld_b64, st_b64: AtomicU64, u64, W64;
}

macro_rules! red_fns {
    ($($name:ident => $rmw:ident, $bits:ty;)*) => {$(
        #[inline]
        #[track_caller]
        pub(crate) unsafe fn $name(addr: *mut $bits, val: $bits, scope: Scope, order: StoreOrder) {
            let order = match order {
                StoreOrder::Relaxed => Order::Relaxed,
                StoreOrder::Release => Order::Release,
            };
            // The checker sees `red` as the read-modify-write it is.
            // SAFETY: the caller upholds the contract `$rmw` needs.
            unsafe { $rmw(addr, val, scope, order) };
        }
    )*};
}

red_fns! {
    red_add_u32 => add_u32, u32;
    red_add_s32 => add_s32, u32;
    red_add_u64 => add_u64, u64;
    red_add_f32 => add_f32, u32;
    red_add_f64 => add_f64, u64;
}
