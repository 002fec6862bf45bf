//! The checker, for your tests: every access a kernel makes on the simulator followed with its
//! happens-before, and each data race, scope race or wait that cannot complete reported with the
//! lines of both sides — on a machine without a GPU.
//!
//! The checker itself lives in the device crate's simulator ([`gpu::sim::check`]; the design,
//! with its rules and their PTX sections, in `docs/checker.md`). This module is its host side:
//! [`checked`] and [`assert_race_free`] run your own launches on [`Target::Sim`] under it, in a
//! `cargo test`. (`gridsync check`, every lesson and library kernel under it, is the command's.)
//!
//! ```
//! use gridsync::{LaunchConfig, Target};
//! let target = Target::Sim;
//! let x = target.zeros::<u32>(1).unwrap();
//! let cfg = LaunchConfig::linear(2, 16);
//! // `add_one` is a plain load and store of `x[0]` by every thread: a data race.
//! let (result, report) = gridsync::check::checked(gridsync::check::Options::DEFAULT, || {
//!     // SAFETY: `x` holds the one u32 the kernel touches.
//!     unsafe { gridsync::launch!(&target, gridsync::gpu::lessons::race::add_one, cfg, (x.ptr())) }
//! });
//! result.unwrap();
//! assert!(!report.is_clean());
//! println!("{report}"); // data race: plain store … at gpu/src/lessons/race.rs:… and …
//! ```
//!
//! What the checker sees: every access through [`gpu::mem::Ptr`], the atomics, fences and
//! barriers of [`gpu`] — not a raw `*p`, which a kernel of yours should not use on device
//! memory if it wants to be checked.
//!
//! [`Target::Sim`]: crate::Target::Sim

pub use gpu::sim::check::{
    Access, Finding, FindingKind, Options, Report, StopReason, VolatileAs, checked,
};

/// Runs `f` — launches on [`Target::Sim`](crate::Target::Sim) — under the checker with [`Options::DEFAULT`], and
/// panics with every finding, both lines each, if it found anything or could not check
/// everything. For tests of your own kernels:
///
/// ```should_panic
/// use gridsync::{LaunchConfig, Target};
/// let target = Target::Sim;
/// let x = target.zeros::<u32>(1).unwrap();
/// gridsync::check::assert_race_free(|| {
///     // SAFETY: `x` holds the one u32 the kernel touches.
///     unsafe {
///         gridsync::launch!(&target, gridsync::gpu::lessons::race::add_one,
///             LaunchConfig::linear(2, 16), (x.ptr()))
///     }
/// })
/// .unwrap();
/// ```
///
/// # Panics
/// If the report is not clean (the panic message is the report).
#[track_caller]
pub fn assert_race_free<R>(f: impl FnOnce() -> R) -> R {
    let (r, report) = checked(Options::DEFAULT, f);
    if !report.is_clean() {
        panic!("the checker found races:\n{report}");
    }
    r
}
