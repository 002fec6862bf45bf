//! The sources' topics, one module each, in reading order. Each is a graded progression of
//! small kernels: the source's kernel as written first, then one change at a time, each saying
//! what changed and why. The host half of every topic has the same name in the `gridsync`
//! crate, which runs the kernels, checks them against the CPU and times them.
//!
//! The reading order, with what each teaches and where it comes from, is on the
//! [crate page](crate#reading-order).

pub mod barrier;
pub mod count_above;
pub mod dot;
pub mod histogram;
pub mod litmus;
pub mod locks;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod mbarrier;
pub mod neighbor;
pub mod normalize;
pub mod peer;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod pipeline;
pub mod race;
pub mod reduce;
