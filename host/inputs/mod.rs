//! Inputs for the demos and benchmarks: `f32` arrays read from files or generated
//! deterministically, English-like text for the histograms, and the CPU's parallel loops.

mod arrays;
pub mod text;

pub use arrays::*;

/// The seed of `gridsync multi`'s generated inputs: every rank of a launched job makes its own
/// slice of the same input with it, and the tests make the whole input to check the ranks'
/// results.
pub const MULTI_SEED: u64 = 0x6d75_6c74_6967_7075;
