//! Where in a kernel an operation was made: the line `#[track_caller]` gives, which the
//! checker's findings name.

use core::panic::Location;

/// A call site.
pub(crate) type Site = &'static Location<'static>;

/// The caller's site (through every `#[track_caller]` function above it: the kernel's line).
#[inline(always)]
#[track_caller]
pub(crate) fn caller() -> Site {
    Location::caller()
}
