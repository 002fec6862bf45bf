//! gridsync: GPU synchronization primitives — scoped atomics, locks, fences, reductions,
//! histograms, a grid-wide barrier, streams and events — with kernels written in pure Rust.
//!
//! The kernels live in the device crate [`gpu`] (compiled to PTX by the build script and
//! embedded here). This crate opens a GPU ([`Gpu`]), launches kernels on it or on the CPU
//! simulator ([`Target`], [`launch!`]), times them ([`Timer`]) and exposes each topic as safe
//! functions checked against CPU references.
//!
//! ```no_run
//! # fn main() -> gridsync::Result<()> {
//! let target = gridsync::Target::open(0, false)?;
//! let race = gridsync::race::run(&target)?;
//! assert_eq!(race.atomic, 160);
//! # Ok(()) }
//! ```

pub mod atomics;
pub mod bench;
pub mod buffer;
pub mod count_above;
pub mod device;
pub mod dot;
pub mod error;
pub mod grid;
pub mod histogram;
pub mod input;
pub mod launch;
pub mod lock;
pub mod mutex;
pub mod normalize;
pub mod pinned;
pub mod plot;
pub mod ptx;
pub mod race;
pub mod reduce;
pub mod stream;
pub mod text;
pub mod timer;

pub use buffer::{Buffer, Plain};
pub use device::{DeviceInfo, Gpu};
pub use error::{Error, Result};
pub use gpu;
pub use gpu::{Dim3, LaunchConfig};
pub use launch::Target;
pub use lock::{DeviceMutex, DeviceTicketLock, MutexBounds};
pub use pinned::PinnedBuffer;
pub use stream::Stream;
pub use timer::{Event, Timer, TimerGuard};
