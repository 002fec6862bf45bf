//! `st.global` and `ld.global` on the simulator: the plain accesses, which the checker sees.

macro_rules! global_access {
    ($($st:ident, $ld:ident: $t:ty;)*) => {$(
        /// A plain store.
        ///
        /// # Safety
        /// As [`global::stg`](crate::global::stg).
        #[inline(always)]
        #[track_caller]
        pub(crate) unsafe fn $st(p: *mut $t, v: $t) {
            // SAFETY: the caller's contract.
            unsafe { super::mem::write(p, v) }
        }

        /// A plain load.
        ///
        /// # Safety
        /// As [`global::ldg_plain`](crate::global::ldg_plain).
        #[inline(always)]
        #[track_caller]
        pub(crate) unsafe fn $ld(p: *const $t) -> $t {
            // SAFETY: the caller's contract.
            unsafe { super::mem::read(p) }
        }
    )*};
}

global_access! {
    st_global_u32, ld_global_u32: u32;
    st_global_f32, ld_global_f32: f32;
    st_global_f64, ld_global_f64: f64;
}
