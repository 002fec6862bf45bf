//! Kernels that exist to measure: the launch cost, the grid barrier, and atomic throughput and ordering cost by
//! memory, contention and scope (with the CUDA book's `double` add from `atomicCAS`).

pub mod atomics;
pub mod barrier;
pub mod launch;
