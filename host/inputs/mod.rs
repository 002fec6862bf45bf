//! Inputs for the demos and benchmarks: `f32` arrays read from files or generated
//! deterministically, and English-like text for the histograms.

mod arrays;
pub mod text;

pub use arrays::*;
