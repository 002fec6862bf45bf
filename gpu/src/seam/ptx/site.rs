//! Where in a kernel an operation was made: nothing on the GPU.

/// A call site: nothing on the GPU (zero-sized: passing it costs nothing).
pub(crate) type Site = ();

/// The caller's site: nothing on the GPU.
#[inline(always)]
pub(crate) fn caller() -> Site {}
