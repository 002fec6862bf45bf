//! The typed pointer's accesses on the simulator: each reported to the checker where the
//! kernel made it (`#[track_caller]`), then made on the weak memory in a weak launch, or on
//! the host's memory.

/// A plain load of `*p`.
///
/// # Safety
/// As [`Ptr::load`](crate::mem::Ptr::load).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn read<T: Copy>(p: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { load(p, false) }
}

/// A plain store to `*p`.
///
/// # Safety
/// As [`Ptr::store`](crate::mem::Ptr::store).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn write<T: Copy>(p: *mut T, v: T) {
    // SAFETY: the caller's contract.
    unsafe { store(p, v, false) }
}

/// A volatile load of `*p`: relaxed on the weak memory.
///
/// # Safety
/// As [`Ptr::load`](crate::mem::Ptr::load).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn read_volatile<T: Copy>(p: *const T) -> T {
    // SAFETY: the caller's contract.
    unsafe { load(p, true) }
}

/// A volatile store to `*p`: relaxed on the weak memory.
///
/// # Safety
/// As [`Ptr::store`](crate::mem::Ptr::store).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn write_volatile<T: Copy>(p: *mut T, v: T) {
    // SAFETY: the caller's contract.
    unsafe { store(p, v, true) }
}

/// The weak memory's width for a `T`, where it has one (4 and 8 bytes).
fn weak_width<T>() -> Option<crate::sim::weak::sched::Width> {
    use crate::sim::weak::sched::Width;
    match size_of::<T>() {
        4 => Some(Width::W32),
        8 => Some(Width::W64),
        _ => None,
    }
}

/// A load through `p`: reported to the checker in a checked launch,
/// where the kernel made it; then, in a weak launch and for a 4- or 8-byte `T`, made on the weak
/// memory — plain as PTX's weak load (it may keep returning what it read until a fence or an
/// acquire lets it see more), volatile as relaxed; otherwise read from the host's memory.
///
/// # Safety
/// As [`Ptr::load`](crate::mem::Ptr::load).
#[track_caller]
#[inline(always)]
unsafe fn load<T: Copy>(p: *const T, volatile: bool) -> T {
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

/// A store through `p`, as [`load`]: reported, then made on the
/// weak memory (which writes the host's memory too) or in the host's memory.
///
/// # Safety
/// As [`Ptr::store`](crate::mem::Ptr::store).
#[track_caller]
#[inline(always)]
unsafe fn store<T: Copy>(p: *mut T, v: T, volatile: bool) {
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
