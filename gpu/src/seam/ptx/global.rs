//! `st.global` for [`global::stg`](crate::global::stg) (its loads, `ld.global`, are beside
//! the read-only ones in `readonly.rs`).

macro_rules! st_global {
    ($($name:ident: $t:ty => $ty:literal, $reg:ident;)*) => {$(
        #[doc = concat!("`st.global.", $ty, " [p], v;`")]
        ///
        /// # Safety
        /// As [`global::stg`](crate::global::stg).
        #[inline(always)]
        pub(crate) unsafe fn $name(p: *mut $t, v: $t) {
            // SAFETY: the caller's contract: `p` is a valid global address.
            unsafe {
                core::arch::asm!(
                    concat!("st.global.", $ty, " [{0}], {1};"),
                    in(reg64) p, in($reg) v, options(nostack, preserves_flags)
                )
            };
        }
    )*};
}

st_global! {
    st_global_u32: u32 => "u32", reg32;
    st_global_f32: f32 => "f32", reg32;
    st_global_f64: f64 => "f64", reg64;
}
