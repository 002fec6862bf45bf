//! Histograms: every kernel against a CPU count on the simulator (odd sizes, bytes >= 128, one
//! repeated byte, odd launch shapes, misaligned input, counters folded before they overflow),
//! the generated text, and the bulk-copy pipeline's kernel. The library API beside the demo, the
//! sweep, the SVG plots, the command and the GPU at full size: `cli/tests/histogram/`.

#[path = "../common/mod.rs"]
mod common;
mod counts;
mod inputs;
mod kernels;
mod pipeline;

use counts::*;
use gridsync::histogram::{Bins, HistKernel, uniform_bytes};
use gridsync::inputs::text::{DEFAULT_TEXT_SEED, english_text};
use gridsync::runtime::wait::wait_bound;
use gridsync::{Error, LaunchConfig, Target};
