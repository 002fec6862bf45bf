//! Plain and volatile loads and stores of global or shared memory, each exactly one PTX
//! instruction where it is written.
//!
//! A Rust `*p` is a plain access the compiler may merge, hoist out of a loop or drop — which is
//! the grid-barrier article's bug. These functions are what a litmus test needs instead: the
//! access the hardware performs, at the place in the program it is written, with the ordering
//! PTX gives it:
//!
//! | function | PTX | memory model |
//! |---|---|---|
//! | [`load_weak`], [`store_weak`] | `ld.u32`, `st.u32` (`.weak`, the default) | no ordering; racing with a write, no guarantee at all |
//! | [`load_volatile`], [`store_volatile`] | `ld.volatile.u32`, `st.volatile.u32` | relaxed at system scope: coherent, not ordered |
//! | [`load_plain`], [`store_plain`] | whatever the compiler makes of `*p` | as weak, and the compiler may also merge, hoist or drop it |
//!
//! For ordered accesses use [`atomic::load`](crate::atomic::load) and
//! [`atomic::store`](crate::atomic::store), which take a scope and an ordering.
//!
//! In the simulator all are host accesses, reported to the checker in a checked launch
//! ([`sim::check::checked`](crate::sim::check::checked); `#[track_caller]`, so a finding names
//! the kernel's line) — except in a weak launch
//! ([`sim::weak::scoped`](crate::sim::weak::scoped)), where they go to the weak memory: volatile
//! ones as relaxed, weak and plain ones as plain (a plain load keeps returning the value it last
//! read until a fence or an acquire lets it see more, as a hoisted load or an L1 line does).
//! [`load_plain`] and [`store_plain`] exist for that: a kernel's `*p` written with them runs
//! exactly as before on the GPU, and the weak simulator can show what its races do.
//!
//! # Safety
//! `p` is non-null, aligned to 4 bytes, and points to global or shared memory the calling
//! thread may access.

use crate::seam::access as seam;

/// Loads `*p` as a Rust `*p` does: a plain load the compiler may merge with others, hoist out
/// of a loop or drop.
///
/// Scope: none. Ordering: none. CUDA: a load through a non-`volatile` pointer. PTX: `ld` (or
/// none at all, if the compiler kept an earlier value).
///
/// # Safety
/// See the [module docs](self#safety); a racing write makes the value unspecified.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_plain(p: *const u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { seam::read_u32(p) }
}

/// Stores `v` to `*p` as a Rust `*p = v` does.
///
/// Scope: none. Ordering: none. CUDA: a store through a non-`volatile` pointer. PTX: `st`.
///
/// # Safety
/// See the [module docs](self#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn store_plain(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract.
    unsafe { seam::write_u32(p, v) }
}

/// Loads `*p` with a plain (weak) load the compiler keeps where it is written.
///
/// Scope: none. Ordering: none — a weak load racing with another thread's store may return
/// anything the model allows, and on a GPU usually a value from this SM's L1 cache. CUDA: a load
/// through a non-`volatile` pointer. PTX: `ld.u32`.
///
/// # Safety
/// See the [module docs](self#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_weak(p: *const u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { seam::ld_u32(p) }
}

/// Stores `v` to `*p` with a plain (weak) store the compiler keeps where it is written.
///
/// Scope: none. Ordering: none. CUDA: a store through a non-`volatile` pointer. PTX: `st.u32`.
///
/// # Safety
/// See the [module docs](self#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn store_weak(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract.
    unsafe { seam::st_u32(p, v) }
}

/// Loads `*p` with a volatile load: read again from memory every time it is executed.
///
/// Scope: system. Ordering: relaxed — coherent (never an older value after a newer one), but
/// nothing orders it against this thread's other accesses. CUDA: a load through a `volatile`
/// pointer. PTX: `ld.volatile.u32`.
///
/// Not an acquire: the sources' `volatile` flag spin still needs a fence after it.
///
/// # Safety
/// See the [module docs](self#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn load_volatile(p: *const u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { seam::ld_volatile_u32(p) }
}

/// Stores `v` to `*p` with a volatile store.
///
/// Scope: system. Ordering: relaxed. CUDA: a store through a `volatile` pointer.
/// PTX: `st.volatile.u32`.
///
/// Not a release: data written before it may become visible after it.
///
/// # Safety
/// See the [module docs](self#safety).
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn store_volatile(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract.
    unsafe { seam::st_volatile_u32(p, v) }
}
