//! The demos whose results are figures: the barrier's block-count sweep (the article's figure
//! 5), the histogram demo and its block-count sweep, and the streams experiment with its
//! timeline. Each runs the library's calls, checks them and returns a report the binary prints
//! and plots.

pub mod barrier_sweep;
pub mod histogram;
pub mod histogram_sweep;
pub mod streams;
