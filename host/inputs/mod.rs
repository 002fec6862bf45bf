//! Inputs for the demos and benchmarks: `f32` arrays read from files or generated
//! deterministically, English-like text for the histograms, and the command line's option
//! values.

mod arrays;
pub mod options;
pub mod text;

pub use arrays::*;
