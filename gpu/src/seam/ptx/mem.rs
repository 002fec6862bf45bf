//! The typed pointer's accesses: the compiler's own load or store of a `T` (`ld.global.u32`,
//! `ld.volatile.shared.u64`, …, as the raw pointer gives), no `asm!`.

/// A plain load of `*p`.
///
/// # Safety
/// As [`Ptr::load`](crate::mem::Ptr::load).
#[inline(always)]
pub(crate) unsafe fn read<T: Copy>(p: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { p.read() }
}

/// A plain store to `*p`.
///
/// # Safety
/// As [`Ptr::store`](crate::mem::Ptr::store).
#[inline(always)]
pub(crate) unsafe fn write<T: Copy>(p: *mut T, v: T) {
    // SAFETY: the caller's contract.
    unsafe { p.write(v) }
}

/// A volatile load of `*p` (`ld.volatile`).
///
/// # Safety
/// As [`Ptr::load`](crate::mem::Ptr::load).
#[inline(always)]
pub(crate) unsafe fn read_volatile<T: Copy>(p: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { p.read_volatile() }
}

/// A volatile store to `*p` (`st.volatile`).
///
/// # Safety
/// As [`Ptr::store`](crate::mem::Ptr::store).
#[inline(always)]
pub(crate) unsafe fn write_volatile<T: Copy>(p: *mut T, v: T) {
    // SAFETY: the caller's contract.
    unsafe { p.write_volatile(v) }
}
