//! Kernel arguments: the values a kernel may take ([`KernelParam`]) and argument lists as
//! tuples ([`KernelArgs`]), which give the driver its parameter array and the simulator its
//! call.

use std::ffi::c_void;

/// A value that can be passed to a kernel: the same bytes mean the same thing on the host and
/// the device (integers, floats, raw pointers).
///
/// # Safety
/// The type is plain data whose layout is identical on `x86_64` and `nvptx64`: numbers, raw
/// pointers, fieldless `#[repr(u32)]` enums (safe host code makes only their variants), and
/// `#[repr(C)]` structs of them. No references and nothing with interior
/// mutability (`Cell`, `&T`): the simulator hands copies of the arguments to many host threads
/// at once, which is sound only for values whose sharing nothing in the type system guards —
/// what a raw pointer then reaches is the kernel's contract.
pub unsafe trait KernelParam: Copy {}

macro_rules! kernel_params {
    ($($t:ty),*) => {$(
        // SAFETY: primitive numbers have the same layout on both targets.
        unsafe impl KernelParam for $t {}
    )*};
}
kernel_params!(u8, u16, u32, i32, u64, i64, f32, f64);
// SAFETY: `#[repr(u32)]` enums, the same `u32` on both targets; safe host code can only make
// their variants.
unsafe impl KernelParam for gpu::atomic::Scope {}
// SAFETY: `#[repr(C)]` structs of raw pointers and `u32`s, the same layout on both targets (the
// litmus runner's and the lock stress's launch records, whose kernels are in the device crate).
unsafe impl KernelParam for gpu::lessons::litmus::LitmusLaunch {}
// SAFETY: as above.
unsafe impl KernelParam for gpu::checks::sync_stress::StressLocks {}
// SAFETY: as above.
unsafe impl KernelParam for gpu::checks::sync_stress::LockStressLaunch {}
// SAFETY: as above.
unsafe impl KernelParam for gpu::checks::sync_stress::BarrierStressLaunch {}
// SAFETY: pointers are 64-bit addresses on both targets.
unsafe impl<T> KernelParam for *mut T {}
// SAFETY: as above.
unsafe impl<T> KernelParam for *const T {}

/// A kernel's argument list, as a tuple of [`KernelParam`]s (only tuples: the trait is sealed,
/// so that every `KernelArgs` is plain data, which the simulated threads' sharing of the
/// arguments relies on).
pub trait KernelArgs: Copy + sealed::Sealed {
    /// The host-side signature of a kernel taking these arguments.
    type Fn: Copy + Send + Sync;
    /// Calls `f` with a pointer to each argument, as `cuLaunchKernel` wants them.
    fn with_params<R>(&self, f: impl FnOnce(&mut [*mut c_void]) -> R) -> R;
    /// Calls the kernel body with these arguments (one simulated thread's work).
    ///
    /// # Safety
    /// The kernel's own contract for its arguments.
    unsafe fn call(self, kernel: Self::Fn);
}

mod sealed {
    /// Implemented for the tuples of [`KernelParam`](super::KernelParam)s alone.
    pub trait Sealed {}
}

macro_rules! kernel_args {
    ($(($($t:ident $i:tt),*))*) => {$(
        impl<$($t: KernelParam),*> sealed::Sealed for ($($t,)*) {}
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
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10)
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11)
}

/// A kernel as a value: its PTX entry point's name and the host function the simulator runs,
/// typed by its argument list — what [`launch!`](crate::launch!) takes from a path, kept in a
/// constant where code chooses among kernels (one per precision, say). Make one with
/// [`kernel_ref!`](crate::kernel_ref!), launch it with [`Target::launch_ref`].
///
/// [`Target::launch_ref`]: crate::Target::launch_ref
pub struct KernelRef<A: KernelArgs> {
    /// The PTX entry point (kernels are `#[no_mangle]`).
    pub name: &'static str,
    /// The same kernel built for the host.
    pub function: A::Fn,
}

impl<A: KernelArgs> Clone for KernelRef<A> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<A: KernelArgs> Copy for KernelRef<A> {}

impl<A: KernelArgs> std::fmt::Debug for KernelRef<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KernelRef({})", self.name)
    }
}

/// A kernel's arguments handed to several host threads at once: the simulated threads of one
/// launch, or the host threads that run one grid per simulated device.
///
/// The bound is on the `Sync` impl, not on the type, so that a test can ask whether
/// `SharedArgs<&Cell<u32>>` is `Sync` (it is not).
#[derive(Clone, Copy)]
pub struct SharedArgs<A>(pub A);

// SAFETY: `A` is a tuple of `KernelParam`s (`KernelArgs` is sealed to those): numbers, raw
// pointers and `#[repr(C)]` structs of them, no references and no interior mutability (the
// trait's contract). Sharing them shares copies of numbers and addresses; what a thread may do
// through an address is the kernel's contract, which the caller of every launch vouches for
// (launches are `unsafe`), and every launch joins its threads before it returns.
unsafe impl<A: KernelArgs> Sync for SharedArgs<A> {}

impl<A: KernelArgs> SharedArgs<A> {
    /// The arguments (a method, so that a closure captures the whole wrapper, not its field).
    pub fn get(&self) -> A {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::SharedArgs;
    use std::cell::Cell;
    use std::marker::PhantomData;

    /// `Probe::<T>::new().is_sync()` is true exactly when `T: Sync`: the inherent method, which
    /// needs the bound, wins over the trait's where the bound holds.
    struct Probe<T>(PhantomData<T>);
    trait NotSync {
        fn is_sync(&self) -> bool {
            false
        }
    }
    impl<T> NotSync for Probe<T> {}
    impl<T: Sync> Probe<T> {
        fn is_sync(&self) -> bool {
            true
        }
    }

    #[test]
    fn shared_args_are_sync_only_for_plain_kernel_arguments() {
        assert!(Probe::<SharedArgs<(*mut u32, u32, f64)>>(PhantomData).is_sync());
        assert!(Probe::<SharedArgs<(*const f32,)>>(PhantomData).is_sync());
        // A reference to a `Cell` would let threads race on it: not `Sync`.
        assert!(!Probe::<SharedArgs<(&Cell<u32>,)>>(PhantomData).is_sync());
        assert!(!Probe::<SharedArgs<&Cell<u32>>>(PhantomData).is_sync());
        assert!(!Probe::<SharedArgs<&[*mut u32]>>(PhantomData).is_sync());
    }
}
