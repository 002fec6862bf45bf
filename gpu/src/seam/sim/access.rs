//! 32-bit loads and stores of the litmus tests on the simulator: each reported to the checker
//! (volatile as volatile, the rest as plain), then made on the weak memory in a weak launch
//! (plain as PTX's weak access, volatile as relaxed), or on the host's memory, always with a
//! host volatile access so that the host compiler keeps every one.

use crate::sim::weak::{LoadKind, StoreKind};

/// `*p`: a weak load.
///
/// # Safety
/// As [`access::load_plain`](crate::access::load_plain).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn read_u32(p: *const u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { sim_load(p, LoadKind::Weak) }
}

/// `*p = v`: a weak store.
///
/// # Safety
/// As [`access::store_plain`](crate::access::store_plain).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn write_u32(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract.
    unsafe { sim_store(p, v, StoreKind::Weak) }
}

/// `ld.u32`: a weak load.
///
/// # Safety
/// As [`access::load_plain`](crate::access::load_plain).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn ld_u32(p: *const u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { sim_load(p, LoadKind::Weak) }
}

/// `st.u32`: a weak store.
///
/// # Safety
/// As [`access::store_plain`](crate::access::store_plain).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn st_u32(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract.
    unsafe { sim_store(p, v, StoreKind::Weak) }
}

/// `ld.volatile.u32`: a relaxed load.
///
/// # Safety
/// As [`access::load_plain`](crate::access::load_plain).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn ld_volatile_u32(p: *const u32) -> u32 {
    // SAFETY: the caller's contract.
    unsafe { sim_load(p, LoadKind::Relaxed) }
}

/// `st.volatile.u32`: a relaxed store.
///
/// # Safety
/// As [`access::store_plain`](crate::access::store_plain).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn st_volatile_u32(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract.
    unsafe { sim_store(p, v, StoreKind::Relaxed) }
}

/// The simulator's side of every load here: reported to the checker in a checked launch
/// (volatile as volatile, the rest as plain), then made.
#[track_caller]
unsafe fn sim_load(p: *const u32, kind: crate::sim::weak::LoadKind) -> u32 {
    use crate::sim::weak::sched::Width;
    let volatile = kind == crate::sim::weak::LoadKind::Relaxed;
    crate::sim::check::report_access(crate::sim::check::AccessKind::Load, p as usize, 4, volatile);
    match crate::sim::weak_op(|w, me| w.load(me, p as usize, Width::W32, kind)) {
        Some(v) => v as u32,
        // SAFETY: the caller's contract.
        None => unsafe { p.read_volatile() },
    }
}

/// The simulator's side of every store here, as [`sim_load`].
#[track_caller]
unsafe fn sim_store(p: *mut u32, v: u32, kind: crate::sim::weak::StoreKind) {
    use crate::sim::weak::sched::Width;
    let volatile = kind == crate::sim::weak::StoreKind::Relaxed;
    crate::sim::check::report_access(
        crate::sim::check::AccessKind::Store,
        p as usize,
        4,
        volatile,
    );
    if crate::sim::weak_op(|w, me| w.store(me, p as usize, Width::W32, v.into(), kind)).is_none() {
        // SAFETY: the caller's contract.
        unsafe { p.write_volatile(v) }
    }
}
