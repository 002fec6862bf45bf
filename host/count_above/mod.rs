//! Counting the `f32` elements above a threshold, five ways: a lock per element, an atomic per
//! element, one atomic per warp, one per block, and the fast one with 16-byte loads.
//!
//! Source: the CUDA lock blog's `GtThrCntKernel` (zh). Device code and the progression table:
//! `gpu/src/lessons/count_above.rs`. Every kernel's count is compared with [`count_above_cpu`] (NaN never
//! counts). The lock kernel costs about a microsecond per element above the threshold on a GPU,
//! so [`run`] gives it only the first [`LOCK_PREFIX`] elements unless asked for all of them.

use crate::inputs::{par_map_ranges, uniform_f32};
use crate::primitives::lock::MutexBounds;
use crate::runtime::error::Result;
use crate::runtime::grid::grid_stride_config;
use crate::runtime::launch::Target;
use crate::runtime::memory::Footprint;
use gpu::LaunchConfig;
use gpu::block_reduce::block_reduce_shared_bytes;
use gpu::lessons::count_above::THREADS_PER_BLOCK;
use serde::Serialize;
use std::time::Duration;

/// Elements of the default input on a GPU: the size the timing target is for.
pub const DEFAULT_LEN: usize = 10_000_000;
/// Elements of the default input on the simulator, whose threads are OS threads.
pub const SIM_DEFAULT_LEN: usize = 10_000;
/// The default threshold: half of the default input (uniform in `[0, 1)`) is above it.
pub const DEFAULT_THRESHOLD: f32 = 0.5;
/// The seed of the default input.
pub const DEFAULT_SEED: u64 = 0x6774_7468_7263_6e74;
/// Elements the lock kernel gets by default: about 50 000 lock hand-offs, some tens of
/// milliseconds on a GPU, where all 10⁷ would take seconds.
pub const LOCK_PREFIX: usize = 100_000;

/// Bytes per input element the demo ([`run`]) needs: the input, on the host and on the device.
pub const DEMO_FOOTPRINT: Footprint = Footprint { host: 4, device: 4 };
/// How long one thread may wait for the lock, per element above the threshold in the lock
/// kernel's range (a thread may wait for every other critical section): generous for a GPU's
/// ~1 µs hand-off, and for the simulator's sleeping OS threads.
const LOCK_WAIT_PER_ELEMENT: [Duration; 2] = [Duration::from_micros(10), Duration::from_millis(1)];

/// The kernels, in the order of the progression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CountKernel {
    /// `gt_thr_cnt_mutex`: the blog's lock around `*cnt += 1`.
    Mutex,
    /// `gt_thr_cnt_atomic`: one atomic per element above.
    Atomic,
    /// `gt_thr_cnt_warp`: one atomic per warp (ballot + popcount).
    Warp,
    /// `gt_thr_cnt_block`: one atomic per block (block reduction).
    Block,
    /// `gt_thr_cnt_vec4`: the block kernel with 16-byte loads.
    Vec4,
}

impl CountKernel {
    /// Every kernel, in the progression's order.
    pub const ALL: [CountKernel; 5] = [
        CountKernel::Mutex,
        CountKernel::Atomic,
        CountKernel::Warp,
        CountKernel::Block,
        CountKernel::Vec4,
    ];

    /// The kernel's PTX name.
    pub const fn name(self) -> &'static str {
        match self {
            CountKernel::Mutex => gpu::Kernel::GtThrCntMutex.name(),
            CountKernel::Atomic => gpu::Kernel::GtThrCntAtomic.name(),
            CountKernel::Warp => gpu::Kernel::GtThrCntWarp.name(),
            CountKernel::Block => gpu::Kernel::GtThrCntBlock.name(),
            CountKernel::Vec4 => gpu::Kernel::GtThrCntVec4.name(),
        }
    }

    /// One line on how it counts.
    pub const fn what(self) -> &'static str {
        match self {
            CountKernel::Mutex => "lock, *cnt += 1, unlock, per element above",
            CountKernel::Atomic => "atomicAdd(cnt, 1) per element above",
            CountKernel::Warp => "ballot + popcount, one atomicAdd per warp",
            CountKernel::Block => "count per thread, block reduction, one atomicAdd per block",
            CountKernel::Vec4 => "as block, with 16-byte loads (4 in flight per thread)",
        }
    }

    /// Dynamic shared memory per block.
    const fn shared_bytes(self) -> u32 {
        match self {
            CountKernel::Block | CountKernel::Vec4 => {
                block_reduce_shared_bytes::<u64>(THREADS_PER_BLOCK)
            }
            _ => 0,
        }
    }

    /// Items one thread handles per step of the grid-stride loop over `len` floats.
    const fn work(self, len: usize) -> usize {
        match self {
            CountKernel::Vec4 => len.div_ceil(4),
            _ => len,
        }
    }
}

/// The launch shape [`run`] uses for `kernel` over `len` floats: one full wave of blocks of
/// [`THREADS_PER_BLOCK`] (or `blocks_per_sm` per SM), no more than `len` needs.
///
/// # Errors
/// A driver error from the occupancy query.
pub fn config_for(
    target: &Target,
    kernel: CountKernel,
    len: usize,
    blocks_per_sm: Option<u32>,
) -> Result<LaunchConfig> {
    let (name, work, shared) = (kernel.name(), kernel.work(len), kernel.shared_bytes());
    grid_stride_config(target, name, work, THREADS_PER_BLOCK, shared, blocks_per_sm)
}

/// How many elements of `data` are above `threshold` (NaN never is), counted on every core.
pub fn count_above_cpu(data: &[f32], threshold: f32) -> u64 {
    par_map_ranges(data.len(), |r| {
        data[r].iter().filter(|&&x| x > threshold).count() as u64
    })
    .into_iter()
    .sum()
}

/// The default input: `len` floats uniform in `[0, 1)`, the same on every machine.
pub fn default_input(len: usize) -> Vec<f32> {
    uniform_f32(len, DEFAULT_SEED, 0.0, 1.0)
}

/// The lock bounds for counting `above` elements under the lock: every thread may wait for
/// all of them.
pub fn lock_bounds(target: &Target, above: u64) -> MutexBounds {
    let per = LOCK_WAIT_PER_ELEMENT[target.is_sim() as usize];
    let default = MutexBounds::default();
    let timeout = per.saturating_mul(above.min(u32::MAX as u64) as u32);
    MutexBounds {
        timeout: timeout.max(default.timeout),
        ..default
    }
}

/// Bandwidth in GB/s of reading `elements` floats in `ms` milliseconds.
pub fn read_gb_per_s(elements: usize, ms: f64) -> f64 {
    4.0 * elements as f64 / (ms * 1e-3) / 1e9
}

mod launch;
mod report;
pub use launch::CountLaunch;
pub use report::{CountAboveReport, CountOptions, CountRun, run};
