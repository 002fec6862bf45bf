//! `st.global` and `ld.global` for the [`global`](crate::global) accesses.

macro_rules! global_access {
    ($($st:ident, $ld:ident: $t:ty => $ty:literal, $reg:ident;)*) => {$(
        #[doc = concat!("`st.global.", $ty, " [p], v;`")]
        ///
        /// # Safety
        /// As [`global::stg`](crate::global::stg).
        #[inline(always)]
        pub(crate) unsafe fn $st(p: *mut $t, v: $t) {
            // SAFETY: the caller's contract: `p` is a valid global address.
            unsafe {
                core::arch::asm!(
                    concat!("st.global.", $ty, " [{0}], {1};"),
                    in(reg64) p, in($reg) v, options(nostack, preserves_flags)
                )
            };
        }

        #[doc = concat!("`ld.global.", $ty, " v, [p];`")]
        ///
        /// # Safety
        /// As [`global::ldg_plain`](crate::global::ldg_plain).
        #[inline(always)]
        pub(crate) unsafe fn $ld(p: *const $t) -> $t {
            let v: $t;
            // SAFETY: the caller's contract: `p` is a valid global address.
            unsafe {
                core::arch::asm!(
                    concat!("ld.global.", $ty, " {0}, [{1}];"),
                    out($reg) v, in(reg64) p, options(readonly, nostack, preserves_flags)
                )
            };
            v
        }
    )*};
}

global_access! {
    st_global_u32, ld_global_u32: u32 => "u32", reg32;
    st_global_f32, ld_global_f32: f32 => "f32", reg32;
    st_global_f64, ld_global_f64: f64 => "f64", reg64;
}
