//! Loads from global memory: through the read-only data cache (`ld.global.nc`, for
//! [`readonly::ldg`](crate::readonly::ldg)) and plain (`ld.global`, for
//! [`global::ldg_plain`](crate::global::ldg_plain)).

macro_rules! ld_global {
    ($safety:literal, $opts:tt: $($name:ident: $t:ty => $insn:literal, $reg:ident;)*) => {$(
        #[doc = concat!("`", $insn, " v, [p];`")]
        ///
        /// # Safety
        #[doc = concat!("As ", $safety, ".")]
        #[inline(always)]
        pub(crate) unsafe fn $name(p: *const $t) -> $t {
            let v: $t;
            // SAFETY: the caller's contract: `p` is a valid global address (and, for
            // `ld.global.nc`, its contents no thread writes during the launch).
            unsafe {
                core::arch::asm!(
                    concat!($insn, " {0}, [{1}];"),
                    out($reg) v, in(reg64) p, options $opts
                )
            };
            v
        }
    )*};
}

ld_global! {
    "[`readonly::ldg`](crate::readonly::ldg)", (pure, readonly, nostack):
    ld_global_nc_u32: u32 => "ld.global.nc.u32", reg32;
    ld_global_nc_f32: f32 => "ld.global.nc.f32", reg32;
    ld_global_nc_u64: u64 => "ld.global.nc.u64", reg64;
    ld_global_nc_f64: f64 => "ld.global.nc.f64", reg64;
}

// Not `pure`: other threads may write the location between two loads.
ld_global! {
    "[`global::ldg_plain`](crate::global::ldg_plain)", (readonly, nostack, preserves_flags):
    ld_global_u32: u32 => "ld.global.u32", reg32;
}
