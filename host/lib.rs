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
//!
//! # Layout
//!
//! | module | what it holds |
//! |---|---|
//! | [`runtime`] | [`Gpu`], [`Target`], the launch path, buffers, pinned memory, streams, events and timers, PTX selection, [`Error`] |
//! | [`primitives`] | host owners of device primitives' state ([`DeviceMutex`], [`DeviceTicketLock`], [`DeviceGridBarrier`]) |
//! | topics | one module per topic, named as in [`gpu::lessons`]: [`race`], [`atomics`], [`locks`], [`count_above`], [`dot`], [`reduce`], [`histogram`], [`normalize`] (the streams topic), [`barrier`], [`neighbor`]; [`multi`] runs the library calls over every GPU of a node |
//! | [`inputs`] | input files and generators, and the CPU's parallel loops of the references |
//!
//! The reading order of the topics is on the device crate's page ([`gpu`]).
//!
//! This crate is the library only: it returns results and never prints, plots or parses a
//! command line. The `gridsync` command — demos, benchmarks, the stress runner, the litmus
//! runner, plots, the tour, `gridsync check` and `gridsync new my-kernels` (a project of your own
//! kernels) — is the crate `gridsync-cli`, built on this one.

#![deny(missing_docs)]

pub mod primitives;
pub mod runtime;

pub mod atomics;
pub mod barrier;
pub mod check;
pub mod count_above;
pub mod dot;
pub mod histogram;
pub mod locks;
pub mod mbarrier;
pub mod multi;
pub mod neighbor;
pub mod normalize;
pub mod pipeline;
pub mod race;
pub mod reduce;

pub mod inputs;

pub use gpu;
pub use gpu::{Dim3, LaunchConfig};
pub use nalgebra;
pub use primitives::barrier::DeviceGridBarrier;
pub use primitives::lock::{DeviceMutex, DeviceTicketLock, MutexBounds};
pub use runtime::buffer::{Buffer, Plain};
pub use runtime::device::{DeviceInfo, Gpu};
pub use runtime::error::{Error, Result, Room};
pub use runtime::launch::Target;
pub use runtime::module::{Module, PtxBuilds};
pub use runtime::pinned::PinnedBuffer;
pub use runtime::stream::Stream;
pub use runtime::timer::{Event, Timer, TimerGuard};
