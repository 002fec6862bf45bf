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
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the caller's contract.
        return unsafe { sim_load(self.p, false) };
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the caller's contract.
        unsafe {
            self.p.read()
        }
    }

    /// A plain store: CUDA `*p = v`, PTX `st`.
    ///
    /// # Safety
    /// See the [module docs](self#safety).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn store(self, v: T) {
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the caller's contract.
        unsafe {
            sim_store(self.p, v, false)
        };
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the caller's contract.
        unsafe {
            self.p.write(v)
        }
    }

    /// A volatile load: CUDA `*(volatile T*)p`, PTX `ld.volatile`. Read from memory each time
    /// it runs; relaxed at system scope — coherent, not ordered, not an acquire.
    ///
    /// # Safety
    /// See the [module docs](self#safety).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn load_volatile(self) -> T {
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the caller's contract.
        return unsafe { sim_load(self.p, true) };
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the caller's contract.
        unsafe {
            self.p.read_volatile()
        }
    }

    /// A volatile store: PTX `st.volatile`. Not a release.
    ///
    /// # Safety
    /// See the [module docs](self#safety).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn store_volatile(self, v: T) {
        #[cfg(not(target_arch = "nvptx64"))]
        // SAFETY: the caller's contract.
        unsafe {
            sim_store(self.p, v, true)
        };
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the caller's contract.
        unsafe {
            self.p.write_volatile(v)
        }
    }
}

/// The weak memory's width for a `T`, where it has one (4 and 8 bytes).
#[cfg(not(target_arch = "nvptx64"))]
fn weak_width<T>() -> Option<crate::sim::weak::sched::Width> {
    use crate::sim::weak::sched::Width;
    match size_of::<T>() {
        4 => Some(Width::W32),
        8 => Some(Width::W64),
        _ => None,
    }
}

/// The simulator's side of a load through `p`: reported to the checker in a checked launch,
/// where the kernel made it; then, in a weak launch and for a 4- or 8-byte `T`, made on the weak
/// memory — plain as PTX's weak load (it may keep returning what it read until a fence or an
/// acquire lets it see more), volatile as relaxed; otherwise read from the host's memory.
///
/// # Safety
/// As [`Ptr::load`].
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
#[inline(always)]
unsafe fn sim_load<T: Copy>(p: *const T, volatile: bool) -> T {
    use crate::sim::check::{AccessKind, report_access};
    use crate::sim::weak::LoadKind;
    report_access(
        AccessKind::Load,
        p as usize,
        size_of::<T>() as u32,
        volatile,
    );
    let kind = if volatile {
        LoadKind::Relaxed
    } else {
        LoadKind::Weak
    };
    let weak = weak_width::<T>()
        .and_then(|width| crate::sim::weak_op(|w, me| w.load(me, p as usize, width, kind)));
    match weak {
        // SAFETY: `T` is 4 or 8 bytes of plain data (it was read from memory as such), and
        // the first `size_of::<T>()` bytes of the little-endian value are its bytes.
        Some(bits) => unsafe { core::mem::transmute_copy::<[u8; 8], T>(&bits.to_le_bytes()) },
        // SAFETY: the caller's contract.
        None if volatile => unsafe { p.read_volatile() },
        // SAFETY: the caller's contract.
        None => unsafe { p.read() },
    }
}

/// The simulator's side of a store through `p`, as [`sim_load`]: reported, then made on the
/// weak memory (which writes the host's memory too) or in the host's memory.
///
/// # Safety
/// As [`Ptr::store`].
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
#[inline(always)]
unsafe fn sim_store<T: Copy>(p: *mut T, v: T, volatile: bool) {
    use crate::sim::check::{AccessKind, report_access};
    use crate::sim::weak::StoreKind;
    report_access(
        AccessKind::Store,
        p as usize,
        size_of::<T>() as u32,
        volatile,
    );
    if let Some(width) = weak_width::<T>()
        && crate::sim::in_weak_launch()
    {
        let mut bytes = [0u8; 8];
        // SAFETY: `v` is `size_of::<T>()` (4 or 8) bytes; `bytes` holds 8.
        unsafe {
            core::ptr::copy_nonoverlapping(
                (&raw const v).cast::<u8>(),
                bytes.as_mut_ptr(),
                size_of::<T>(),
            )
        };
        let (bits, kind) = (
            u64::from_le_bytes(bytes),
            if volatile {
                StoreKind::Relaxed
            } else {
                StoreKind::Weak
            },
        );
        if crate::sim::weak_op(|w, me| w.store(me, p as usize, width, bits, kind)).is_some() {
            return;
        }
    }
    if volatile {
        // SAFETY: the caller's contract.
        unsafe { p.write_volatile(v) }
    } else {
        // SAFETY: the caller's contract.
        unsafe { p.write(v) }
    }
}
