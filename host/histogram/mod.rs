//! Byte histograms on the GPU: the source's two kernels, three faster ones, the block-count
//! sweep, and a library call that picks the fastest.
//!
//! Source: the Numba tutorial, part 4, examples 4.3 (global atomics) and 4.4 (a shared-memory
//! histogram per block) over 128 ASCII bins, and its sweep of blocks = 32 × i. Device code and
//! the progression table: `gpu/src/lessons/histogram/`. Every kernel's histogram is compared with
//! [`histogram_cpu`], exactly.
//!
//! | kernel | [`HistKernel`] | threads per block | grid |
//! |---|---|---|---|
//! | `histogram_global` (4.3) | [`HistKernel::Global`] | 128 (the source's) | 32 × SMs (the source's rule) |
//! | `histogram_shared` (4.4) | [`HistKernel::Shared`] | 128 | 32 × SMs |
//! | `histogram_warp` | [`HistKernel::Warp`] | 256 | one full wave (occupancy) |
//! | `histogram_vec16` | [`HistKernel::Vec16`] | 256 | one full wave |
//! | `histogram_lane` | [`HistKernel::Lane`] | 64 | one full wave |
//! | `histogram_pipeline` (sm_90) | [`HistKernel::Pipeline`] | 32 + 256 | one full wave, at most a block per 8 KiB |
//!
//! [`HistKernel::SharedRows`] is the sweep's instrument (4.4 without its contended flush); it is
//! checked like the others but not part of the progression.
//!
//! 16-bit values (65 536 bins: token ids, 16-bit samples) are [`wide`]'s: global atomics,
//! privatized bin ranges, and a histogram per thread block cluster in distributed shared memory.
//!
//! For other projects: [`histogram`], [`histogram_ascii`], [`histogram_of_buffer`],
//! [`histogram_u16`] and [`histogram_u16_of_buffer`].

use crate::inputs::par_map_ranges;
use crate::runtime::error::{Error, Result};
use crate::runtime::grid::grid_stride_config;
use crate::runtime::launch::Target;
use crate::runtime::memory::Footprint;
use gpu::LaunchConfig;
use gpu::lessons::histogram::{
    self as dev, BYTES16, LANE_THREADS_PER_BLOCK, SOURCE_BLOCKS_PER_SM, SOURCE_THREADS_PER_BLOCK,
    WARP_THREADS_PER_BLOCK,
};
use serde::Serialize;

mod api;
pub mod counts_file;
mod launch;
pub mod wide;

pub use api::{
    PIPELINE_MIN_BYTES, fastest_kernel, histogram, histogram_ascii, histogram_of_buffer,
};
pub use launch::{HistogramLaunch, SHARED_LIMIT};
pub use wide::{histogram_u16, histogram_u16_cpu, histogram_u16_of_buffer};

/// Bytes of the default text on the simulator, whose threads are OS threads.
pub const SIM_DEFAULT_TEXT_BYTES: usize = 100_000;

/// Bytes per input byte the demo (`gridsync histogram`) needs: the input on the host (and the sweep's flush
/// masks, a quarter more) and on the device.
pub const DEMO_FOOTPRINT: Footprint = Footprint { host: 2, device: 1 };
/// The seed of the uniform random bytes of the benchmark.
pub const RANDOM_SEED: u64 = 0x6869_7374_6f67_7261;

/// How many bins: the source's 128 ASCII codes, or one per byte value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(into = "u32")]
pub enum Bins {
    /// 128 bins; bytes `>= 128` are skipped, as the source does.
    Ascii,
    /// 256 bins, every byte counted.
    Byte,
}

impl Bins {
    /// 128 or 256.
    pub const fn count(self) -> u32 {
        match self {
            Bins::Ascii => dev::ASCII_BINS,
            Bins::Byte => dev::BYTE_BINS,
        }
    }

    /// The bins for a count given on the command line.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for anything but 128 and 256.
    pub fn from_count(n: u32) -> Result<Bins> {
        match n {
            128 => Ok(Bins::Ascii),
            256 => Ok(Bins::Byte),
            _ => Err(Error::InvalidInput(format!(
                "{n} bins: a byte histogram has 128 bins (ASCII, as the source) or 256"
            ))),
        }
    }
}

impl From<Bins> for u32 {
    fn from(b: Bins) -> u32 {
        b.count()
    }
}

/// The kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HistKernel {
    /// `histogram_global`: example 4.3, an atomic on a global bin per byte.
    Global,
    /// `histogram_shared`: example 4.4, a shared-memory histogram per block.
    Shared,
    /// `histogram_shared_rows`: 4.4 with plain stores to a row per block instead of the final
    /// atomics — the sweep's instrument.
    SharedRows,
    /// `histogram_warp`: a `u32` histogram per warp.
    Warp,
    /// `histogram_vec16`: per warp, with 16-byte loads.
    Vec16,
    /// `histogram_lane`: a histogram per lane, 16-bit counters, 16-byte loads.
    Lane,
    /// `histogram_pipeline` (sm_90): per warp, fed by a producer warp's bulk copies into a ring
    /// of shared-memory stages.
    Pipeline,
}

impl HistKernel {
    /// The progression, in order (without the instrument).
    pub const ALL: [HistKernel; 6] = [
        HistKernel::Global,
        HistKernel::Shared,
        HistKernel::Warp,
        HistKernel::Vec16,
        HistKernel::Lane,
        HistKernel::Pipeline,
    ];

    /// The progression's kernels that run on `target` (the pipeline needs sm_90).
    pub fn available(target: &Target) -> Vec<HistKernel> {
        HistKernel::ALL
            .into_iter()
            .filter(|k| target.has_kernel(k.kernel()))
            .collect()
    }

    /// The device kernel.
    pub const fn kernel(self) -> gpu::Kernel {
        match self {
            HistKernel::Global => gpu::Kernel::HistogramGlobal,
            HistKernel::Shared => gpu::Kernel::HistogramShared,
            HistKernel::SharedRows => gpu::Kernel::HistogramSharedRows,
            HistKernel::Warp => gpu::Kernel::HistogramWarp,
            HistKernel::Vec16 => gpu::Kernel::HistogramVec16,
            HistKernel::Lane => gpu::Kernel::HistogramLane,
            HistKernel::Pipeline => gpu::Kernel::HistogramPipeline,
        }
    }

    /// The kernel's PTX name.
    pub const fn name(self) -> &'static str {
        self.kernel().name()
    }

    /// One line on how it counts.
    pub const fn what(self) -> &'static str {
        match self {
            HistKernel::Global => "atomicAdd on a global bin per byte (Numba 4.3)",
            HistKernel::Shared => "u64 bins per block in shared memory, then global (Numba 4.4)",
            HistKernel::SharedRows => "4.4 with plain stores to a row per block (instrument)",
            HistKernel::Warp => "u32 bins per warp, red.shared (ATOMS.POPC.INC)",
            HistKernel::Vec16 => "per warp, 16-byte loads (4 in flight per thread)",
            HistKernel::Lane => "16-bit bins per lane, bank-conflict-free, 16-byte loads",
            HistKernel::Pipeline => "per warp, fed by bulk copies into 4 stages (sm_90)",
        }
    }

    /// Threads per block it is launched with.
    pub const fn threads_per_block(self) -> u32 {
        match self {
            HistKernel::Global | HistKernel::Shared | HistKernel::SharedRows => {
                SOURCE_THREADS_PER_BLOCK
            }
            HistKernel::Warp | HistKernel::Vec16 => WARP_THREADS_PER_BLOCK,
            HistKernel::Lane => LANE_THREADS_PER_BLOCK,
            HistKernel::Pipeline => dev::PIPELINE_THREADS_PER_BLOCK,
        }
    }

    /// Dynamic shared memory per block for `bins` and blocks of `threads`.
    pub const fn shared_bytes(self, bins: Bins, threads: u32) -> u32 {
        match self {
            HistKernel::Global => 0,
            HistKernel::Shared | HistKernel::SharedRows => dev::shared_u64_bytes(bins.count()),
            HistKernel::Warp | HistKernel::Vec16 => dev::warp_shared_bytes(threads),
            HistKernel::Lane => dev::lane_shared_bytes(threads),
            HistKernel::Pipeline => dev::pipeline_shared_bytes(threads),
        }
    }

    /// Whether it reads 16 bytes per step of its grid-stride loop.
    const fn vectorized(self) -> bool {
        matches!(self, HistKernel::Vec16 | HistKernel::Lane)
    }
}

/// The launch shape for `kernel` over `len` bytes: `blocks` blocks if given; else the source's
/// rule for the source's kernels ([`SOURCE_BLOCKS_PER_SM`] × SMs) and one full wave for the
/// others — never more blocks than the input fills, at least one, and on the simulator at most
/// [`crate::runtime::grid::SIM_BLOCKS`].
///
/// # Errors
/// [`Error::InvalidInput`] for zero blocks; a driver error from the occupancy query.
pub fn config_for(
    target: &Target,
    kernel: HistKernel,
    bins: Bins,
    len: usize,
    blocks: Option<u32>,
) -> Result<LaunchConfig> {
    let threads = kernel.threads_per_block();
    let shared = kernel.shared_bytes(bins, threads);
    if let Some(blocks) = blocks {
        if blocks == 0 {
            return Err(Error::InvalidInput(
                "a launch needs at least one block".into(),
            ));
        }
        return Ok(LaunchConfig::linear(blocks, threads).with_shared_bytes(shared));
    }
    let work = if kernel == HistKernel::Pipeline {
        // A block per tile at most: the unit of its work is a stage's worth of bytes.
        len.div_ceil(dev::PIPELINE_STAGE_BYTES as usize) * threads as usize
    } else if kernel.vectorized() {
        len.div_ceil(BYTES16)
    } else {
        len
    };
    let per_sm = match kernel {
        HistKernel::Global | HistKernel::Shared | HistKernel::SharedRows => {
            Some(SOURCE_BLOCKS_PER_SM)
        }
        _ => None,
    };
    let mut cfg = grid_stride_config(target, kernel.name(), work, threads, shared, per_sm)?;
    if kernel == HistKernel::Vec16 {
        // Every block ends by adding its bins into the global ones, and the bins every block
        // has seen (the space, `e`) take one atomic per block on one address: below a full wave
        // of work that flush, not the reading, sets the time. Measured at 5.6 MB (H200): 660
        // blocks 0.0115 ms, 396 0.0100, 198 0.0085, 132 0.0080, 66 0.0091.
        let wanted = len.div_ceil(VEC16_MIN_BYTES_PER_BLOCK).max(1);
        cfg.grid.x = cfg.grid.x.min(u32::try_from(wanted).unwrap_or(u32::MAX));
    }
    Ok(cfg)
}

/// The fewest bytes a `histogram_vec16` block is given when the input is small: about 40 KiB,
/// the 132-block grid that measured fastest on the 5.6 MB text.
pub const VEC16_MIN_BYTES_PER_BLOCK: usize = 40 << 10;

/// The histogram of `data` in `bins` bins (bytes `>= bins` skipped), counted on every core.
pub fn histogram_cpu(data: &[u8], bins: Bins) -> Vec<u64> {
    let parts = par_map_ranges(data.len(), |r| {
        // Four sub-histograms, so that runs of one byte do not serialize on one counter.
        let mut h = [[0u64; 256]; 4];
        let chunks = data[r].chunks_exact(4);
        let rest = chunks.remainder();
        for c in chunks {
            for (k, &b) in c.iter().enumerate() {
                h[k][b as usize] += 1;
            }
        }
        for &b in rest {
            h[0][b as usize] += 1;
        }
        (0..256)
            .map(|b| h.iter().map(|s| s[b]).sum())
            .collect::<Vec<u64>>()
    });
    let mut out = vec![0u64; bins.count() as usize];
    for p in parts {
        for (o, v) in out.iter_mut().zip(p) {
            *o += v;
        }
    }
    out
}

/// `len` uniform random bytes, a deterministic function of `seed` and the index (each 8-byte
/// group is one SplitMix64 hash of its index), generated on every core.
pub fn uniform_bytes(len: usize, seed: u64) -> Vec<u8> {
    uniform_bytes_range(0..len, seed)
}

/// Bytes `range` of the input [`uniform_bytes`] makes with `seed`, without the others: one
/// rank's slice of an input that no process holds whole.
pub fn uniform_bytes_range(range: std::ops::Range<usize>, seed: u64) -> Vec<u8> {
    let hash = |group: u64| {
        let mut z =
            (seed ^ group.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)).to_le_bytes()
    };
    let mut out = vec![0u8; range.len()];
    crate::inputs::par_chunks_mut(&mut out, |at, chunk| {
        let start = range.start + at;
        // Bytes before the chunk's first 8-byte group boundary, then whole groups.
        let head = (8 - start % 8) % 8;
        let (first, rest) = chunk.split_at_mut(head.min(chunk.len()));
        for (k, b) in first.iter_mut().enumerate() {
            let i = start + k;
            *b = hash(i as u64 / 8)[i % 8];
        }
        let base = (start + first.len()) as u64 / 8;
        for (g, group) in rest.chunks_mut(8).enumerate() {
            let h = hash(base + g as u64);
            group.copy_from_slice(&h[..group.len()]);
        }
    });
    out
}

/// GB/s of reading `bytes` in `ms` milliseconds.
pub fn read_gb_per_s(bytes: usize, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e-3) / 1e9
}

/// The first bin at which two histograms differ (a bin only one of them has counts as
/// differing), or `None` if they are equal.
pub fn first_difference(got: &[u64], want: &[u64]) -> Option<usize> {
    (0..got.len().max(want.len())).find(|&b| got.get(b) != want.get(b))
}

/// Checks a kernel's histogram against the CPU's.
///
/// # Errors
/// [`Error::Mismatch`] naming the first bin that differs.
pub fn check(kernel: HistKernel, got: &[u64], want: &[u64]) -> Result<()> {
    let Some(first) = first_difference(got, want) else {
        return Ok(());
    };
    Err(Error::Mismatch(format!(
        "{}: bin {first} holds {:?}, the CPU's {:?} ({} bins against {})",
        kernel.name(),
        got.get(first),
        want.get(first),
        got.len(),
        want.len()
    )))
}
