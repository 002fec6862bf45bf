//! `ld.global.nc` and `ld.global` on the simulator: a plain load (only read), which the checker
//! sees, from an address it holds to global memory.

macro_rules! ld_global {
    ($($name:ident: $t:ty;)*) => {$(
        /// A plain load.
        ///
        /// # Safety
        /// As [`readonly::ldg`](crate::readonly::ldg) or
        /// [`global::ldg_plain`](crate::global::ldg_plain).
        #[inline(always)]
        #[track_caller]
        pub(crate) unsafe fn $name(p: *const $t) -> $t {
            crate::sim::check::claimed_global(
                crate::sim::check::AccessKind::Load,
                p as usize,
                size_of::<$t>() as u32,
            );
            // SAFETY: the caller's contract.
            unsafe { super::mem::read(p) }
        }
    )*};
}

ld_global! {
    ld_global_nc_u32: u32;
    ld_global_nc_f32: f32;
    ld_global_nc_u64: u64;
    ld_global_nc_f64: f64;
    ld_global_u32: u32;
}
