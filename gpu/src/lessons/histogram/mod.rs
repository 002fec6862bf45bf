//! Byte histograms: from one global atomic per byte to a contention-free histogram per lane.
//!
//! Source: the Numba tutorial, part 4 — example 4.3 (`kernel_histogram`: a grid-stride loop
//! and `cuda.atomic.add` on 128 global bins, bytes `>= 128` skipped), example 4.4
//! (`kernel_histogram_shared`: a per-block histogram in shared memory, then one global atomic
//! per bin per block) and the block-count sweep that shows 4.4 slowing down when given too many
//! blocks. The kernels after 4.4 follow the source's own warning that natural text is not
//! uniform: a few bytes (`' '`, `e`, `t`) take a large share of it, so atomics on their bins
//! serialize, and the cure is to privatize further — per warp, then per lane.
//!
//! Every kernel takes `(arr, len, histo, bins)`: `len` bytes at `arr`, `bins` zeroed `u64` at
//! `histo` (the source's `int64`), and `bins` = 128 (ASCII, bytes `>= 128` skipped, as the
//! source) or 256 (every byte). Global bins are `u64`: a `u32` bin would overflow past 4 GiB of
//! one byte value. Each kernel covers any `len` with any grid (grid-stride loops).
//!
//! | kernel | what changed | why it is faster |
//! |---|---|---|
//! | [`histogram_global`] | 4.3: `atomicAdd` on a global bin per byte | — (one L2 atomic per byte; the common letters' bins serialize) |
//! | [`histogram_shared`] | 4.4: a `u64` histogram per block in shared memory, block-scope atomics, then one global atomic per non-zero bin | atomics in the SM, contended only within the block; but the final atomics grow with the grid |
//! | [`histogram_warp`] | a `u32` histogram per warp, `red.shared.add` of 1 | no 64-bit CAS loop; lanes on one bin combined in one step (`ATOMS.POPC.INC`); nothing to wait for |
//! | [`histogram_vec16`] | the same with 16-byte loads, four in flight ([`for_each_body_byte`]) | one load per 16 bytes, 64 bytes in flight per thread |
//! | [`histogram_lane`] | a histogram per lane, 16-bit counters, bin-major (lane `t` always in bank `t mod 32`) | no bank conflict for any data: one pass per warp instruction |
//! | [`histogram_pipeline`] (sm_90) | 32-bit counters per lane *index*, shared by the block's warps; fed by a producer warp's bulk copies into a ring of shared-memory stages (full and empty `mbarrier`s) | no bank conflict for any data at four instructions per byte, 32 KiB per block: many counting warps; the copy engine holds the bytes in flight |
//!
//! Past 256 bins: [`wide`] — 65 536 bins of 16-bit values, where a block's shared memory is
//! too small and a cluster's is not (sm_90): global atomics, privatized bin ranges, and one
//! histogram per cluster in distributed shared memory.
//!
//! [`histogram_shared_rows`] is an instrument for the sweep: 4.4 with its final atomics replaced
//! by plain stores to a row per block, so the difference between the two is the cost of the
//! contended flush.
//!
//! Block sizes (the host's choice, each kernel works with any): [`SOURCE_THREADS_PER_BLOCK`] for
//! the source's kernels, [`WARP_THREADS_PER_BLOCK`] and [`LANE_THREADS_PER_BLOCK`] for the others.
//! Dynamic shared memory per block: [`shared_u64_bytes`], [`warp_shared_bytes`],
//! [`lane_shared_bytes`].

mod lane;
mod load;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
mod pipeline;
mod source;
mod warp;
pub mod wide;

pub use lane::{LANE_COUNTER_MAX, LANE_FLUSH_LOADS, LANE_WORDS, histogram_lane, lane_shared_bytes};
pub use load::{
    BYTES16, ByteSplit, Bytes16, LOADS_IN_FLIGHT, for_each_body_byte, for_each_strided_byte,
};
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub use pipeline::{
    PIPELINE_COLUMNS, PIPELINE_STAGE_BYTES, PIPELINE_STAGES, PIPELINE_THREADS_PER_BLOCK,
    histogram_pipeline, pipeline_shared_bytes,
};
pub use source::{
    histogram_global, histogram_shared, histogram_shared_rows, histogram_shared_unzeroed,
    shared_u64_bytes,
};
pub use warp::{WARP_BINS, histogram_vec16, histogram_warp, warp_shared_bytes};
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub use wide::histogram_u16_cluster;
pub use wide::{U16_BINS, WIDE_THREADS_PER_BLOCK, histogram_u16_global, histogram_u16_ranges};

/// The source's bins: the 128 ASCII codes. Bytes `>= 128` (UTF-8's multi-byte sequences) are
/// skipped, as the source's `if arr[iarr] < 128` does.
pub const ASCII_BINS: u32 = 128;

/// One bin per byte value.
pub const BYTE_BINS: u32 = 256;

/// Threads per block of the source's kernels: the source's `threads_per_block = 128`, which is
/// also what 4.4's `histo_local[cuda.threadIdx.x] = 0` (one bin per thread) needs for 128 bins.
pub const SOURCE_THREADS_PER_BLOCK: u32 = 128;

/// Blocks per SM the source launches (`blocks_per_grid = 32 × SM count`, "a multiple of 32 × the
/// number of SMs, as the previous tutorial suggested"); the sweep varies it.
pub const SOURCE_BLOCKS_PER_SM: u32 = 32;

/// Threads per block of [`histogram_warp`] and [`histogram_vec16`]: eight warps, so a block's
/// histograms take 8 KiB of shared memory and eight blocks fill a 2048-thread SM.
pub const WARP_THREADS_PER_BLOCK: u32 = 256;

/// Threads per block of [`histogram_lane`]: two warps, 32 KiB of lane counters — under the
/// 48 KiB a block gets without opting in. Shared memory, not threads, bounds its occupancy:
/// about six blocks (12 warps) per 228 KiB SM.
pub const LANE_THREADS_PER_BLOCK: u32 = 64;

/// Whether `byte` has a bin: below 128 in the ASCII histogram, always in the 256-bin one.
#[inline(always)]
fn in_bins(byte: u32, bins: u32) -> bool {
    byte < bins
}
