//! Loads through the read-only data path: CUDA's `__ldg`, for data no thread of the launch
//! writes.
//!
//! A raw pointer in a Rust kernel is a *generic* address: LLVM emits `ld.b32 [p]`, which the
//! hardware must first classify as global, shared or local. [`ldg`] says what the programmer
//! knows — the memory is global and read-only for the whole launch — and emits
//! `ld.global.nc`, which goes through the non-coherent (texture) cache: good for values many
//! threads read, such as the coordinates every atom's search scans.
//!
//! Not a synchronization primitive: `.nc` loads may see stale data if anything writes the
//! location during the launch, so only read-only inputs qualify.
//!
//! In the simulator an [`ldg`] is a plain load of `size_of::<T>()` bytes, reported to the
//! checker as one (naming the caller's line): a write racing with it is a data race, and an
//! address in shared memory a wrong space (`FindingKind::WrongSpace`).

/// A value [`ldg`] can load: 4- or 8-byte numbers.
pub trait Ldg: Copy {
    /// See [`ldg`].
    ///
    /// # Safety
    /// As [`ldg`].
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    unsafe fn ldg(p: *const Self) -> Self;
}

macro_rules! ldg_impl {
    ($($t:ty => $seam:ident;)*) => {$(
        impl Ldg for $t {
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn ldg(p: *const $t) -> $t {
                // SAFETY: the caller's contract: `p` is a valid global address whose contents
                // no thread writes during the launch.
                unsafe { crate::seam::readonly::$seam(p) }
            }
        }
    )*};
}

ldg_impl! {
    u32 => ld_global_nc_u32;
    f32 => ld_global_nc_f32;
    u64 => ld_global_nc_u64;
    f64 => ld_global_nc_f64;
}

/// `*p`, loaded through the read-only data cache. CUDA: `__ldg(p)`. PTX: `ld.global.nc.<type>`.
///
/// # Safety
/// `p` is valid and aligned, points to global memory (not shared or local), and nothing
/// writes `*p` during the launch.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub unsafe fn ldg<T: Ldg>(p: *const T) -> T {
    // SAFETY: forwarded contract.
    unsafe { T::ldg(p) }
}
