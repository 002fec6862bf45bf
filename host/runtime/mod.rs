//! The runtime every topic stands on: a GPU and its context ([`device::Gpu`]), where kernels run
//! ([`launch::Target`], [`launch!`](crate::launch!)), device buffers, pinned host memory,
//! streams, events and timers, CUDA graphs, thread block cluster launches, the choice of PTX
//! build, grid sizing, summaries of measurements, the bounds of device waits (stretched under a
//! sanitizer), and the one error type.

pub mod args;
pub mod buffer;
pub mod cluster;
pub mod copy;
pub mod device;
pub mod enqueue;
pub mod error;
pub mod graph;
pub mod grid;
pub mod launch;
mod macros;
pub mod memory;
pub mod module;
pub mod peer;
pub mod pinned;
pub mod ptx;
pub mod stats;
pub mod stream;
pub mod timer;
pub mod wait;
