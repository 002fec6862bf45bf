//! `st.global` for [`global::stg`](crate::global::stg) (its load, `ld.global`, is beside the
//! read-only ones in `readonly.rs`).

/// `st.global.u32 [p], v;`
///
/// # Safety
/// As [`global::stg`](crate::global::stg).
#[inline(always)]
pub(crate) unsafe fn st_global_u32(p: *mut u32, v: u32) {
    // SAFETY: the caller's contract: `p` is a valid global address.
    unsafe {
        core::arch::asm!(
            "st.global.u32 [{0}], {1};",
            in(reg64) p, in(reg32) v, options(nostack, preserves_flags)
        )
    };
}
