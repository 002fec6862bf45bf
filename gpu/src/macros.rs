//! The one macro every kernel is declared with.

/// Declares a kernel once for both targets.
///
/// On nvptx64 the body becomes an `extern "ptx-kernel"` entry point with an unmangled name (the
/// name the host looks up in the PTX). On the host it becomes an ordinary `unsafe fn` with the
/// same signature, which the simulator calls once per simulated GPU thread.
///
/// ```ignore
/// kernel! {
///     /// Source: ...
///     pub unsafe fn add_one(x: *mut u32) { ... }
/// }
/// ```
///
/// Parameters must be plain data with the same layout on both sides: integers, floats, raw
/// pointers, or `#[repr(C)]` structs of those.
#[macro_export]
macro_rules! kernel {
    ($(#[$attr:meta])* pub unsafe fn $name:ident($($arg:ident : $ty:ty),* $(,)?) $body:block) => {
        $(#[$attr])*
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($arg: $ty),*) $body

        $(#[$attr])*
        #[cfg(not(target_arch = "nvptx64"))]
        pub unsafe fn $name($($arg: $ty),*) $body
    };
}
