//! Plain accesses to memory known to be global: `ld.global` and `st.global`.
//!
//! A raw pointer in a Rust kernel is a *generic* address. Pointers passed as a kernel's own
//! parameters are known to be global (rustc's NVPTX backend converts them with
//! `cvta.to.global` and emits `ld.global` / `st.global`), but a pointer read from a struct
//! argument or from memory is not: LLVM emits the generic `ld` / `st`, which the hardware must
//! first classify (SASS `LD.E` / `ST.E` where nvcc, which proves such pointers global, emits
//! `LDG.E` / `STG.E`). [`ldg_plain`] and [`stg`] say what the programmer knows.
//!
//! Not synchronization: plain (weak) accesses, as [`Ptr::load`](crate::mem::Ptr::load) and
//! [`Ptr::store`](crate::mem::Ptr::store). In the simulator each is the plain access, reported
//! to the checker as one; given an address in shared memory, the checker reports a wrong
//! space (`FindingKind::WrongSpace`).

/// A value [`stg`] and [`ldg_plain`] move: `u32`, what the cell list's fills need (another
/// type is one more `impl` beside it, over its own `st.global` / `ld.global` in the seam).
pub trait Global: Copy {
    /// See [`stg`].
    ///
    /// # Safety
    /// As [`stg`].
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn stg(p: *mut Self, v: Self);
    /// See [`ldg_plain`].
    ///
    /// # Safety
    /// As [`ldg_plain`].
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn ldg_plain(p: *const Self) -> Self;
}

impl Global for u32 {
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn stg(p: *mut u32, v: u32) {
        // SAFETY: the caller's contract.
        unsafe { crate::seam::global::st_global_u32(p, v) }
    }
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn ldg_plain(p: *const u32) -> u32 {
        // SAFETY: the caller's contract.
        unsafe { crate::seam::readonly::ld_global_u32(p) }
    }
}

/// `*p = v`, a plain store to global memory. PTX: `st.global.<type>`.
///
/// # Safety
/// As [`Ptr::store`](crate::mem::Ptr::store), and `p` points to global memory.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn stg<T: Global>(p: *mut T, v: T) {
    // SAFETY: forwarded contract.
    unsafe { T::stg(p, v) }
}

/// `*p`, a plain load from global memory (coherent, unlike [`ldg`](crate::readonly::ldg)).
/// PTX: `ld.global.<type>`.
///
/// # Safety
/// As [`Ptr::load`](crate::mem::Ptr::load), and `p` points to global memory.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn ldg_plain<T: Global>(p: *const T) -> T {
    // SAFETY: forwarded contract.
    unsafe { T::ldg_plain(p) }
}
