//! CUDA's own names, relaxed like CUDA's: `atomic_add_block`, `atomic_add_device`,
//! `atomic_add_system`, … — one function per operation and scope, so that a kernel ported from
//! CUDA reads like its original and still shows its scope.
//!
//! CUDA's unsuffixed `atomicAdd` is the `_device` form here.

use super::{Atomic, AtomicAdd, AtomicInt, Order, Scope};

macro_rules! shorthand {
    ($($cuda:literal $bound:ident $generic:ident => $block:ident, $device:ident, $system:ident;)*) => {$(
        #[doc = concat!("CUDA `", $cuda, "_block`: [`", stringify!($generic), "`](super::", stringify!($generic), ") at block scope, relaxed.")]
        ///
        /// # Safety
        /// See the [atomic module docs](super#safety).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $block<T: $bound>(addr: *mut T, val: T) -> T {
            // SAFETY: forwarded contract.
            unsafe { super::$generic(addr, val, Scope::Block, Order::Relaxed) }
        }
        #[doc = concat!("CUDA `", $cuda, "`: [`", stringify!($generic), "`](super::", stringify!($generic), ") at device scope, relaxed.")]
        ///
        /// # Safety
        /// See the [atomic module docs](super#safety).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $device<T: $bound>(addr: *mut T, val: T) -> T {
            // SAFETY: forwarded contract.
            unsafe { super::$generic(addr, val, Scope::Device, Order::Relaxed) }
        }
        #[doc = concat!("CUDA `", $cuda, "_system`: [`", stringify!($generic), "`](super::", stringify!($generic), ") at system scope, relaxed.")]
        ///
        /// # Safety
        /// See the [atomic module docs](super#safety).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $system<T: $bound>(addr: *mut T, val: T) -> T {
            // SAFETY: forwarded contract.
            unsafe { super::$generic(addr, val, Scope::System, Order::Relaxed) }
        }
    )*};
}

shorthand! {
    "atomicAdd" AtomicAdd fetch_add => atomic_add_block, atomic_add_device, atomic_add_system;
    "atomicSub" AtomicAdd fetch_sub => atomic_sub_block, atomic_sub_device, atomic_sub_system;
    "atomicExch" Atomic exch => atomic_exch_block, atomic_exch_device, atomic_exch_system;
    "atomicMin" AtomicInt fetch_min => atomic_min_block, atomic_min_device, atomic_min_system;
    "atomicMax" AtomicInt fetch_max => atomic_max_block, atomic_max_device, atomic_max_system;
    "atomicAnd" AtomicInt fetch_and => atomic_and_block, atomic_and_device, atomic_and_system;
    "atomicOr" AtomicInt fetch_or => atomic_or_block, atomic_or_device, atomic_or_system;
    "atomicXor" AtomicInt fetch_xor => atomic_xor_block, atomic_xor_device, atomic_xor_system;
}

macro_rules! shorthand_u32 {
    ($($cuda:literal $generic:ident => $block:ident, $device:ident, $system:ident;)*) => {$(
        #[doc = concat!("CUDA `", $cuda, "_block`: [`", stringify!($generic), "`](super::", stringify!($generic), ") at block scope, relaxed.")]
        ///
        /// # Safety
        /// See the [atomic module docs](super#safety).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $block(addr: *mut u32, limit: u32) -> u32 {
            // SAFETY: forwarded contract.
            unsafe { super::$generic(addr, limit, Scope::Block, Order::Relaxed) }
        }
        #[doc = concat!("CUDA `", $cuda, "`: [`", stringify!($generic), "`](super::", stringify!($generic), ") at device scope, relaxed.")]
        ///
        /// # Safety
        /// See the [atomic module docs](super#safety).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $device(addr: *mut u32, limit: u32) -> u32 {
            // SAFETY: forwarded contract.
            unsafe { super::$generic(addr, limit, Scope::Device, Order::Relaxed) }
        }
        #[doc = concat!("CUDA `", $cuda, "_system`: [`", stringify!($generic), "`](super::", stringify!($generic), ") at system scope, relaxed.")]
        ///
        /// # Safety
        /// See the [atomic module docs](super#safety).
        #[inline(always)]
        #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
        pub unsafe fn $system(addr: *mut u32, limit: u32) -> u32 {
            // SAFETY: forwarded contract.
            unsafe { super::$generic(addr, limit, Scope::System, Order::Relaxed) }
        }
    )*};
}

shorthand_u32! {
    "atomicInc" fetch_inc => atomic_inc_block, atomic_inc_device, atomic_inc_system;
    "atomicDec" fetch_dec => atomic_dec_block, atomic_dec_device, atomic_dec_system;
}

/// CUDA `atomicCAS` at device scope, relaxed: [`compare_and_swap`](super::compare_and_swap).
///
/// # Safety
/// See the [atomic module docs](super#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn atomic_cas_device<T: Atomic>(addr: *mut T, compare: T, val: T) -> T {
    // SAFETY: forwarded contract.
    unsafe { super::compare_and_swap(addr, compare, val, Scope::Device, Order::Relaxed) }
}

/// CUDA `atomicCAS_block`: [`compare_and_swap`](super::compare_and_swap) at block scope, relaxed.
///
/// # Safety
/// See the [atomic module docs](super#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn atomic_cas_block<T: Atomic>(addr: *mut T, compare: T, val: T) -> T {
    // SAFETY: forwarded contract.
    unsafe { super::compare_and_swap(addr, compare, val, Scope::Block, Order::Relaxed) }
}

/// CUDA `atomicCAS_system`: [`compare_and_swap`](super::compare_and_swap) at system scope,
/// relaxed.
///
/// # Safety
/// See the [atomic module docs](super#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn atomic_cas_system<T: Atomic>(addr: *mut T, compare: T, val: T) -> T {
    // SAFETY: forwarded contract.
    unsafe { super::compare_and_swap(addr, compare, val, Scope::System, Order::Relaxed) }
}
