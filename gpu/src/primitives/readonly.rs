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
//! checker as one (naming the caller's line): a write racing with it is a data race.

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
    ($($t:ty => $ty:literal, $reg:ident;)*) => {$(
        impl Ldg for $t {
            #[inline(always)]
            #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
            unsafe fn ldg(p: *const $t) -> $t {
                #[cfg(target_arch = "nvptx64")]
                {
                    let v: $t;
                    // SAFETY: the caller's contract: `p` is a valid global address whose
                    // contents no thread writes during the launch.
                    unsafe {
                        core::arch::asm!(
                            concat!("ld.global.nc.", $ty, " {0}, [{1}];"),
                            out($reg) v, in(reg64) p, options(pure, readonly, nostack)
                        )
                    };
                    v
                }
                #[cfg(not(target_arch = "nvptx64"))]
                // SAFETY: as above; on the host a plain load (only read), which the checker
                // sees.
                unsafe {
                    crate::mem::Ptr::new(p.cast_mut()).load()
                }
            }
        }
    )*};
}

ldg_impl! {
    u32 => "u32", reg32;
    f32 => "f32", reg32;
    u64 => "u64", reg64;
    f64 => "f64", reg64;
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
