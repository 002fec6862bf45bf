//! Loads through the read-only data cache: `ld.global.nc`.

macro_rules! ld_global_nc {
    ($($name:ident: $t:ty => $ty:literal, $reg:ident;)*) => {$(
        #[doc = concat!("`ld.global.nc.", $ty, " v, [p];`")]
        ///
        /// # Safety
        /// As [`readonly::ldg`](crate::readonly::ldg).
        #[inline(always)]
        pub(crate) unsafe fn $name(p: *const $t) -> $t {
            let v: $t;
            // SAFETY: the caller's contract: `p` is a valid global address whose contents no
            // thread writes during the launch.
            unsafe {
                core::arch::asm!(
                    concat!("ld.global.nc.", $ty, " {0}, [{1}];"),
                    out($reg) v, in(reg64) p, options(pure, readonly, nostack)
                )
            };
            v
        }
    )*};
}

ld_global_nc! {
    ld_global_nc_u32: u32 => "u32", reg32;
    ld_global_nc_f32: f32 => "f32", reg32;
    ld_global_nc_u64: u64 => "u64", reg64;
    ld_global_nc_f64: f64 => "f64", reg64;
}
