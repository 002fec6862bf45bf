//! Kernels that exist to check the primitives, not to teach a topic: each records what every
//! thread saw, so that the tests can compare the GPU and the simulator with a CPU model.

pub mod atomics;
pub mod barrier;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod hopper;
pub mod primitives;
pub mod sync_stress;
