//! Kernel arguments: the values a kernel may take ([`KernelParam`]) and argument lists as
//! tuples ([`KernelArgs`]), which give the driver its parameter array and the simulator its
//! call.

use std::ffi::c_void;

/// A value that can be passed to a kernel: the same bytes mean the same thing on the host and
/// the device (integers, floats, raw pointers).
///
/// # Safety
/// The type is plain data whose layout is identical on `x86_64` and `nvptx64`.
pub unsafe trait KernelParam: Copy {}

macro_rules! kernel_params {
    ($($t:ty),*) => {$(
        // SAFETY: primitive numbers have the same layout on both targets.
        unsafe impl KernelParam for $t {}
    )*};
}
kernel_params!(u8, u16, u32, i32, u64, i64, f32, f64);
// SAFETY: pointers are 64-bit addresses on both targets.
unsafe impl<T> KernelParam for *mut T {}
// SAFETY: as above.
unsafe impl<T> KernelParam for *const T {}

/// A kernel's argument list, as a tuple of [`KernelParam`]s.
pub trait KernelArgs: Copy {
    /// The host-side signature of a kernel taking these arguments.
    type Fn: Copy;
    /// Calls `f` with a pointer to each argument, as `cuLaunchKernel` wants them.
    fn with_params<R>(&self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R;
    /// Calls the kernel body with these arguments (one simulated thread's work).
    ///
    /// # Safety
    /// The kernel's own contract for its arguments.
    unsafe fn call(self, kernel: Self::Fn);
}

macro_rules! kernel_args {
    ($(($($t:ident $i:tt),*))*) => {$(
        impl<$($t: KernelParam),*> KernelArgs for ($($t,)*) {
            type Fn = unsafe fn($($t),*);
            fn with_params<R>(&self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R {
                let mut params: [*mut c_void; 0 $(+ { let _ = $i; 1 })*] =
                    [$(&self.$i as *const $t as *mut c_void),*];
                f(&mut params)
            }
            unsafe fn call(self, kernel: Self::Fn) {
                // SAFETY: forwarded to the caller.
                unsafe { kernel($(self.$i),*) }
            }
        }
    )*};
}

kernel_args! {
    ()
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9)
}
