//! The one macro every kernel is declared with.

/// Declares a kernel once for both targets.
///
/// On nvptx64 the body becomes an `extern "ptx-kernel"` entry point with an unmangled name (the
/// name the host looks up in the PTX). On the host it becomes an ordinary `unsafe fn` with the
/// same signature, which the simulator calls once per simulated GPU thread.
///
/// ```ignore
/// gpu::kernel! {
///     /// Source: ...
///     pub unsafe fn add_one(x: *mut u32) { ... }
/// }
/// ```
///
/// Parameters must be plain data with the same layout on both sides: integers, floats, raw
/// pointers, or `#[repr(C)]` structs of those.
///
/// In a crate of your own, the nvptx64 build needs `#![feature(abi_ptx)]` (for
/// `extern "ptx-kernel"`); the entry-point name is the function's name, so it must be unique
/// among the kernels of one PTX module.
#[macro_export]
macro_rules! kernel {
    ($(#[$attr:meta])* pub unsafe fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        $(#[$attr])*
        ///
        /// # Safety
        ///
        /// A kernel: launch it (`gridsync::launch!`), do not call it. Every pointer argument must
        /// be valid, for the whole grid, for the accesses the paragraphs above describe.
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub unsafe extern "ptx-kernel" fn $name($($arg: $ty),*) $body

        $(#[$attr])*
        ///
        /// # Safety
        ///
        /// A kernel: launch it (`gridsync::launch!`, on a GPU or on the simulator), do not call
        /// it outside a simulated thread, where the thread's ids exist. Every pointer argument must be valid, for the
        /// whole grid, for the accesses the paragraphs above describe.
        #[cfg(not(target_arch = "nvptx64"))]
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $name($($arg: $ty),*) $body
    };
}
