//! A typed pointer into device memory, whose plain and volatile loads and stores the checker
//! sees.
//!
//! On the GPU a [`Ptr`] is its raw pointer and nothing more: [`Ptr::load`] is `ptr.read()`,
//! [`Ptr::load_volatile`] is `ptr.read_volatile()` — the same PTX (`ld.global.u32`,
//! `ld.volatile.global.u32`, …) as the raw pointer gives, every method `#[inline(always)]`.
//! In the simulator each access is also reported to the checker in a checked launch
//! ([`sim::check::checked`](crate::sim::check::checked)), with its width, whether it is
//! volatile, the space the address is in (a block's shared memory, or global), and the line
//! of the kernel that made it (`#[track_caller]`).
//!
//! A Rust `*p` on a raw pointer is invisible to the checker; an access through a [`Ptr`] is
//! not. For ordered accesses use [`atomic::load`](crate::atomic::load) and
//! [`atomic::store`](crate::atomic::store).
//!
//! # Safety
//! Every access has the contract of the raw pointer's method it is: the pointer is non-null,
//! aligned for `T`, and points to global or shared memory the calling thread may access.

use crate::seam::mem as seam;

/// A pointer to a `T` in global or shared memory.
#[derive(Debug, PartialEq, Eq)]
#[repr(transparent)]
pub struct Ptr<T> {
    p: *mut T,
}

impl<T> Clone for Ptr<T> {
    #[inline(always)]
    fn clone(&self) -> Ptr<T> {
        *self
    }
}

impl<T> Copy for Ptr<T> {}

impl<T: Copy> From<*mut T> for Ptr<T> {
    #[inline(always)]
    fn from(p: *mut T) -> Ptr<T> {
        Ptr::new(p)
    }
}

impl<T: Copy> Ptr<T> {
    /// The typed pointer of `p`.
    #[inline(always)]
    pub const fn new(p: *mut T) -> Ptr<T> {
        Ptr { p }
    }

    /// The raw pointer.
    #[inline(always)]
    pub const fn as_ptr(self) -> *mut T {
        self.p
    }

    /// The null pointer (a kernel argument not used in some launches).
    #[inline(always)]
    pub const fn null() -> Ptr<T> {
        Ptr {
            p: core::ptr::null_mut(),
        }
    }

    /// Whether it is null.
    #[inline(always)]
    pub fn is_null(self) -> bool {
        self.p.is_null()
    }

    /// The pointer `count` elements further (no check, as `wrapping_add`).
    #[inline(always)]
    pub const fn wrapping_add(self, count: usize) -> Ptr<T> {
        Ptr {
            p: self.p.wrapping_add(count),
        }
    }

    /// The pointer `count` elements further: `p + count` in CUDA, `p.add(count)` in Rust.
    ///
    /// # Safety
    /// As a raw pointer's `add`: the result stays inside the allocation `self` points into.
    #[inline(always)]
    pub const unsafe fn add(self, count: usize) -> Ptr<T> {
        Ptr {
            // SAFETY: the caller's contract.
            p: unsafe { self.p.add(count) },
        }
    }

    /// The same address as a pointer to a `U` (a wider or narrower view of the same bytes).
    #[inline(always)]
    pub const fn cast<U: Copy>(self) -> Ptr<U> {
        Ptr { p: self.p.cast() }
    }

    /// A plain load: CUDA `*p`, PTX `ld` — or none, if the compiler kept an earlier value.
    /// Orders nothing; racing with a write, the value is unspecified.
    ///
    /// # Safety
    /// See the [module docs](self#safety).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn load(self) -> T {
        // SAFETY: the caller's contract.
        unsafe { seam::read(self.p) }
    }

    /// A plain store: CUDA `*p = v`, PTX `st`.
    ///
    /// # Safety
    /// See the [module docs](self#safety).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn store(self, v: T) {
        // SAFETY: the caller's contract.
        unsafe { seam::write(self.p, v) }
    }

    /// A volatile load: CUDA `*(volatile T*)p`, PTX `ld.volatile`. Read from memory each time
    /// it runs; relaxed at system scope — coherent, not ordered, not an acquire.
    ///
    /// # Safety
    /// See the [module docs](self#safety).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn load_volatile(self) -> T {
        // SAFETY: the caller's contract.
        unsafe { seam::read_volatile(self.p) }
    }

    /// A volatile store: PTX `st.volatile`. Not a release.
    ///
    /// # Safety
    /// See the [module docs](self#safety).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn store_volatile(self, v: T) {
        // SAFETY: the caller's contract.
        unsafe { seam::write_volatile(self.p, v) }
    }
}
