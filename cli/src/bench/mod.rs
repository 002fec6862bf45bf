//! Benchmarks: event-timed medians after warm-up, reported as tables and JSON.
//!
//! Every later benchmark reports its bandwidth against [`gridsync::runtime::copy`]'s device-to-device copy,
//! measured in the same run: the roofline of a memory-bound kernel. [`sized`] runs them: the
//! roofline, then every kernel at every size, one [`KernelTiming`] row each.

pub mod atomics;
pub mod barrier;
pub mod cluster;
pub mod count_above;
pub mod dot;
pub mod fill;
pub mod histogram;
pub mod histogram_u16;
pub mod launch;
pub mod locks;
pub mod multi;
pub mod neighbor;
pub mod reduce;
pub mod scopes;
pub mod sized;
/// The host↔device copy benchmark lives with the streams topic, whose bound it is.
pub use gridsync::normalize::transfer;

pub use sized::{KernelTiming, SizeBench, SizedBench, SizedBenchOptions, WARMUP};

pub use gridsync::runtime::stats::{Stats, require_gpu};
