//! Atomics, the PTX side: one inline-PTX instruction per operation, type, scope and ordering.
//!
//! Each function takes the scope and ordering as values; it is `#[inline(always)]`, so with the
//! constants a kernel passes the `match` folds away and one instruction remains. A kernel that
//! passes them at run time (the atomics check) gets every variant, which is how the PTX tests
//! see every qualifier in the built PTX.

use crate::atomic::{LoadOrder, Order, Scope, StoreOrder};
use core::arch::asm;

/// Expands `$m!(sem, scope, …)` for the one (scope, order) pair given.
macro_rules! by_rmw_order {
    ($scope:expr, $order:expr, $m:ident!($($a:tt)*)) => {
        match ($scope, $order) {
            (Scope::Block, Order::Relaxed) => $m!("relaxed", "cta", $($a)*),
            (Scope::Block, Order::Acquire) => $m!("acquire", "cta", $($a)*),
            (Scope::Block, Order::Release) => $m!("release", "cta", $($a)*),
            (Scope::Block, Order::AcqRel) => $m!("acq_rel", "cta", $($a)*),
            (Scope::Device, Order::Relaxed) => $m!("relaxed", "gpu", $($a)*),
            (Scope::Device, Order::Acquire) => $m!("acquire", "gpu", $($a)*),
            (Scope::Device, Order::Release) => $m!("release", "gpu", $($a)*),
            (Scope::Device, Order::AcqRel) => $m!("acq_rel", "gpu", $($a)*),
            (Scope::System, Order::Relaxed) => $m!("relaxed", "sys", $($a)*),
            (Scope::System, Order::Acquire) => $m!("acquire", "sys", $($a)*),
            (Scope::System, Order::Release) => $m!("release", "sys", $($a)*),
            (Scope::System, Order::AcqRel) => $m!("acq_rel", "sys", $($a)*),
        }
    };
}

/// Expands `$m!(sem, scope, …)` for a two-ordering instruction (`ld`, `st`, `red`).
macro_rules! by_two_orders {
    ($scope:expr, $order:expr, $weak:path, $strong:path, $strong_sem:literal, $m:ident!($($a:tt)*)) => {
        match ($scope, $order) {
            (Scope::Block, $weak) => $m!("relaxed", "cta", $($a)*),
            (Scope::Block, $strong) => $m!($strong_sem, "cta", $($a)*),
            (Scope::Device, $weak) => $m!("relaxed", "gpu", $($a)*),
            (Scope::Device, $strong) => $m!($strong_sem, "gpu", $($a)*),
            (Scope::System, $weak) => $m!("relaxed", "sys", $($a)*),
            (Scope::System, $strong) => $m!($strong_sem, "sys", $($a)*),
        }
    };
}

macro_rules! atom_asm {
    ($sem:literal, $sc:literal, $op:literal, $ty:literal, $reg:ident, $old:ident, $addr:ident, $val:ident) => {
        asm!(
            concat!("atom.", $sem, ".", $sc, ".", $op, ".", $ty, " {0}, [{1}], {2};"),
            out($reg) $old, in(reg64) $addr, in($reg) $val, options(nostack)
        )
    };
}

macro_rules! cas_asm {
    ($sem:literal, $sc:literal, $ty:literal, $reg:ident, $old:ident, $addr:ident, $cmp:ident, $val:ident) => {
        asm!(
            concat!("atom.", $sem, ".", $sc, ".cas.", $ty, " {0}, [{1}], {2}, {3};"),
            out($reg) $old, in(reg64) $addr, in($reg) $cmp, in($reg) $val, options(nostack)
        )
    };
}

macro_rules! ld_asm {
    ($sem:literal, $sc:literal, $ty:literal, $reg:ident, $out:ident, $addr:ident) => {
        asm!(
            concat!("ld.", $sem, ".", $sc, ".", $ty, " {0}, [{1}];"),
            out($reg) $out, in(reg64) $addr, options(nostack)
        )
    };
}

macro_rules! st_asm {
    ($sem:literal, $sc:literal, $ty:literal, $reg:ident, $addr:ident, $val:ident) => {
        asm!(
            concat!("st.", $sem, ".", $sc, ".", $ty, " [{0}], {1};"),
            in(reg64) $addr, in($reg) $val, options(nostack)
        )
    };
}

macro_rules! red_asm {
    ($sem:literal, $sc:literal, $op:literal, $ty:literal, $reg:ident, $addr:ident, $val:ident) => {
        asm!(
            concat!("red.", $sem, ".", $sc, ".", $op, ".", $ty, " [{0}], {1};"),
            in(reg64) $addr, in($reg) $val, options(nostack)
        )
    };
}

macro_rules! rmw_fns {
    ($($name:ident: $op:literal $ty:literal $bits:ty, $reg:ident;)*) => {$(
        #[inline(always)]
        pub(crate) unsafe fn $name(addr: *mut $bits, val: $bits, scope: Scope, order: Order) -> $bits {
            let old: $bits;
            // SAFETY: the caller upholds the atomic module's contract for `addr`.
            unsafe { by_rmw_order!(scope, order, atom_asm!($op, $ty, $reg, old, addr, val)) };
            old
        }
    )*};
}

rmw_fns! {
    add_u32: "add" "u32" u32, reg32;
    add_s32: "add" "s32" u32, reg32;
    add_u64: "add" "u64" u64, reg64;
    add_f32: "add" "f32" u32, reg32;
    add_f64: "add" "f64" u64, reg64;
    exch_b32: "exch" "b32" u32, reg32;
    exch_b64: "exch" "b64" u64, reg64;
    min_u32: "min" "u32" u32, reg32;
    min_s32: "min" "s32" u32, reg32;
    min_u64: "min" "u64" u64, reg64;
    min_s64: "min" "s64" u64, reg64;
    max_u32: "max" "u32" u32, reg32;
    max_s32: "max" "s32" u32, reg32;
    max_u64: "max" "u64" u64, reg64;
    max_s64: "max" "s64" u64, reg64;
    and_b32: "and" "b32" u32, reg32;
    and_b64: "and" "b64" u64, reg64;
    or_b32: "or" "b32" u32, reg32;
    or_b64: "or" "b64" u64, reg64;
    xor_b32: "xor" "b32" u32, reg32;
    xor_b64: "xor" "b64" u64, reg64;
}

rmw_fns! {
    inc: "inc" "u32" u32, reg32;
    dec: "dec" "u32" u32, reg32;
}

macro_rules! width_fns {
    ($($cas:ident, $ld:ident, $st:ident: $ty:literal $bits:ty, $reg:ident;)*) => {$(
        #[inline(always)]
        pub(crate) unsafe fn $cas(addr: *mut $bits, cmp: $bits, val: $bits, scope: Scope, order: Order) -> $bits {
            let old: $bits;
            // SAFETY: the caller upholds the atomic module's contract for `addr`.
            unsafe { by_rmw_order!(scope, order, cas_asm!($ty, $reg, old, addr, cmp, val)) };
            old
        }

        #[inline(always)]
        pub(crate) unsafe fn $ld(addr: *const $bits, scope: Scope, order: LoadOrder) -> $bits {
            let out: $bits;
            // SAFETY: the caller upholds the atomic module's contract for `addr`.
            unsafe {
                by_two_orders!(scope, order, LoadOrder::Relaxed, LoadOrder::Acquire, "acquire",
                    ld_asm!($ty, $reg, out, addr))
            };
            out
        }

        #[inline(always)]
        pub(crate) unsafe fn $st(addr: *mut $bits, val: $bits, scope: Scope, order: StoreOrder) {
            // SAFETY: the caller upholds the atomic module's contract for `addr`.
            unsafe {
                by_two_orders!(scope, order, StoreOrder::Relaxed, StoreOrder::Release, "release",
                    st_asm!($ty, $reg, addr, val))
            }
        }
    )*};
}

width_fns! {
    cas_b32, ld_b32, st_b32: "b32" u32, reg32;
    cas_b64, ld_b64, st_b64: "b64" u64, reg64;
}

macro_rules! red_fns {
    ($($name:ident: $ty:literal $bits:ty, $reg:ident;)*) => {$(
        #[inline(always)]
        pub(crate) unsafe fn $name(addr: *mut $bits, val: $bits, scope: Scope, order: StoreOrder) {
            // SAFETY: the caller upholds the atomic module's contract for `addr`.
            unsafe {
                by_two_orders!(scope, order, StoreOrder::Relaxed, StoreOrder::Release, "release",
                    red_asm!("add", $ty, $reg, addr, val))
            }
        }
    )*};
}

red_fns! {
    red_add_u32: "u32" u32, reg32;
    red_add_s32: "s32" u32, reg32;
    red_add_u64: "u64" u64, reg64;
    red_add_f32: "f32" u32, reg32;
    red_add_f64: "f64" u64, reg64;
}
