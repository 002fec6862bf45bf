//! `st.global` on the simulator: the plain store, which the checker sees, to an address the
//! checker holds to global memory (the plain load is with the read-only ones in
//! `readonly.rs`).

/// A plain store.
///
/// # Safety
/// As [`global::stg`](crate::global::stg).
#[inline(always)]
#[track_caller]
pub(crate) unsafe fn st_global_u32(p: *mut u32, v: u32) {
    crate::sim::check::claimed_global(crate::sim::check::AccessKind::Store, p as usize, 4);
    // SAFETY: the caller's contract.
    unsafe { super::mem::write(p, v) }
}
