//! `st.global` on the simulator: the plain store, which the checker sees (the plain loads are
//! with the read-only ones in `readonly.rs`).

macro_rules! st_global {
    ($($name:ident: $t:ty;)*) => {$(
        /// A plain store.
        ///
        /// # Safety
        /// As [`global::stg`](crate::global::stg).
        #[inline(always)]
        #[track_caller]
        pub(crate) unsafe fn $name(p: *mut $t, v: $t) {
            // SAFETY: the caller's contract.
            unsafe { super::mem::write(p, v) }
        }
    )*};
}

st_global! {
    st_global_u32: u32;
    st_global_f32: f32;
    st_global_f64: f64;
}
