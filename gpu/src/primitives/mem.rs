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
        {
            report(self.p, crate::sim::check::AccessKind::Load, false);
            // SAFETY: the caller's contract.
            if let Some(v) = unsafe { weak_load(self.p, false) } {
                return v;
            }
        }
        // SAFETY: the caller's contract.
        unsafe { self.p.read() }
    }

    /// A plain store: CUDA `*p = v`, PTX `st`.
    ///
    /// # Safety
    /// See the [module docs](self#safety).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn store(self, v: T) {
        #[cfg(not(target_arch = "nvptx64"))]
        {
            report(self.p, crate::sim::check::AccessKind::Store, false);
            // SAFETY: the caller's contract.
            if unsafe { weak_store(self.p, v, false) } {
                return;
            }
        }
        // SAFETY: the caller's contract.
        unsafe { self.p.write(v) }
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
        {
            report(self.p, crate::sim::check::AccessKind::Load, true);
            // SAFETY: the caller's contract.
            if let Some(v) = unsafe { weak_load(self.p, true) } {
                return v;
            }
        }
        // SAFETY: the caller's contract.
        unsafe { self.p.read_volatile() }
    }

    /// A volatile store: PTX `st.volatile`. Not a release.
    ///
    /// # Safety
    /// See the [module docs](self#safety).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn store_volatile(self, v: T) {
        #[cfg(not(target_arch = "nvptx64"))]
        {
            report(self.p, crate::sim::check::AccessKind::Store, true);
            // SAFETY: the caller's contract.
            if unsafe { weak_store(self.p, v, true) } {
                return;
            }
        }
        // SAFETY: the caller's contract.
        unsafe { self.p.write_volatile(v) }
    }
}

/// The simulator's report of an access through `p`, where the kernel made it.
#[cfg(not(target_arch = "nvptx64"))]
#[track_caller]
#[inline(always)]
fn report<T>(p: *const T, kind: crate::sim::check::AccessKind, volatile: bool) {
    crate::sim::check::report_access(kind, p as usize, size_of::<T>() as u32, volatile);
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

/// In a weak launch ([`sim::weak::scoped`](crate::sim::weak::scoped)), a load of a 4- or
/// 8-byte `T` from the weak memory — plain as PTX's weak load (it may keep returning what it
/// read until a fence or an acquire lets it see more), volatile as relaxed; `None` elsewhere,
/// and for other widths, which read the host's memory.
///
/// # Safety
/// As [`Ptr::load`].
#[cfg(not(target_arch = "nvptx64"))]
unsafe fn weak_load<T: Copy>(p: *const T, volatile: bool) -> Option<T> {
    use crate::sim::weak::LoadKind;
    let width = weak_width::<T>()?;
    let kind = if volatile {
        LoadKind::Relaxed
    } else {
        LoadKind::Weak
    };
    let bits = crate::sim::weak_op(|w, me| w.load(me, p as usize, width, kind))?;
    let bytes = bits.to_le_bytes();
    // SAFETY: `T` is 4 or 8 bytes of plain data (it was read from memory as such), and the
    // first `size_of::<T>()` bytes of the little-endian value are its bytes.
    Some(unsafe { core::mem::transmute_copy::<[u8; 8], T>(&bytes) })
}

/// In a weak launch, a store of a 4- or 8-byte `T` to the weak memory (which writes the host's
/// memory too); whether it was one.
///
/// # Safety
/// As [`Ptr::store`].
#[cfg(not(target_arch = "nvptx64"))]
unsafe fn weak_store<T: Copy>(p: *mut T, v: T, volatile: bool) -> bool {
    use crate::sim::weak::StoreKind;
    let Some(width) = weak_width::<T>() else {
        return false;
    };
    if !crate::sim::in_weak_launch() {
        return false;
    }
    let mut bytes = [0u8; 8];
    // SAFETY: `v` is `size_of::<T>()` (4 or 8) bytes; `bytes` holds 8.
    unsafe {
        core::ptr::copy_nonoverlapping(
            (&raw const v).cast::<u8>(),
            bytes.as_mut_ptr(),
            size_of::<T>(),
        )
    };
    let bits = u64::from_le_bytes(bytes);
    let kind = if volatile {
        StoreKind::Relaxed
    } else {
        StoreKind::Weak
    };
    crate::sim::weak_op(|w, me| w.store(me, p as usize, width, bits, kind)).is_some()
}
