//! Kernels that exist to measure: the launch cost, the grid barrier, the cluster barrier, and atomic throughput and ordering cost by
//! memory, contention and scope (with the CUDA book's `double` add from `atomicCAS`).

pub mod atomics;
pub mod barrier;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod cluster;
pub mod launch;
