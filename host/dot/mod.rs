//! The dot product of two `f32` arrays: partial sums finished on the host, finished on the GPU
//! under a lock, finished with one atomic per block, and the fast kernel.
//!
//! Source: Numba CUDA by example, part 4, example 4.6 (`dot_partial`, `dot_mutex`; `[32 * 20,
//! 256]`, `N = 10_000_000`, `a = ones`, `b = ones / N`). Device code, the progression table and
//! the source's reduction bug (fixed): `gpu/src/lessons/dot.rs`. Every result is compared with
//! [`dot_cpu`], a float64 dot on the host.

use crate::inputs::{par_map_ranges, uniform_f32};
use crate::runtime::error::{Error, Result};
use crate::runtime::grid::{SIM_BLOCKS, grid_stride_config};
use crate::runtime::launch::Target;
use crate::runtime::memory::Footprint;
use gpu::LaunchConfig;
use gpu::block_reduce::block_reduce_shared_bytes;
use gpu::lessons::dot::{BLOCKS_PER_GRID, THREADS_PER_BLOCK};
use serde::Serialize;

/// Elements on a GPU by default: the source's `N`.
pub const DEFAULT_LEN: usize = 10_000_000;
/// Elements on the simulator by default, whose threads are OS threads.
pub const SIM_DEFAULT_LEN: usize = 10_000;
/// The largest error accepted, relative to `Σ |a_i·b_i|` (the size of the sum's rounding
/// errors, whatever the cancellation): `f32` arithmetic is good to about 10⁻⁷ per operation,
/// and the longest chain of dependent additions here (a thread's loop, then ~10³ atomic adds)
/// stays well inside this.
pub const TOLERANCE: f64 = 1e-4;

/// Bytes per element the demo ([`run`]) needs: two `f32` arrays, on the host and on the device.
pub const DEMO_FOOTPRINT: Footprint = Footprint { host: 8, device: 8 };

/// The kernels, in the order of the progression.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DotKernel {
    /// `dot_partial`: one sum per block, finished on the host in float64.
    Partial,
    /// `dot_mutex`: finished on the GPU, each block adding under the mutex.
    Mutex,
    /// `dot_atomic`: finished on the GPU with one float atomic add per block.
    Atomic,
    /// `dot_vec4`: 16-byte loads, shuffle reduction, one atomic per block.
    Vec4,
}

impl DotKernel {
    /// Every kernel, in the progression's order.
    pub const ALL: [DotKernel; 4] = [
        DotKernel::Partial,
        DotKernel::Mutex,
        DotKernel::Atomic,
        DotKernel::Vec4,
    ];

    /// The kernel's PTX name.
    pub const fn name(self) -> &'static str {
        match self {
            DotKernel::Partial => gpu::Kernel::DotPartial.name(),
            DotKernel::Mutex => gpu::Kernel::DotMutex.name(),
            DotKernel::Atomic => gpu::Kernel::DotAtomic.name(),
            DotKernel::Vec4 => gpu::Kernel::DotVec4.name(),
        }
    }

    /// One line on how the blocks' sums are combined.
    pub const fn what(self) -> &'static str {
        match self {
            DotKernel::Partial => "partial sum per block, finished on the host (f64)",
            DotKernel::Mutex => "thread 0 locks the mutex, c[0] += block sum",
            DotKernel::Atomic => "thread 0 does atomicAdd(c, block sum)",
            DotKernel::Vec4 => "16-byte loads, warp-shuffle reduction, one atomicAdd per block",
        }
    }
}

/// The launch shape for `kernel` over `n` elements: the source's `[32 * 20, 256]` for the
/// source's three kernels (on the simulator, [`SIM_BLOCKS`] × 256), one full wave for
/// `dot_vec4` (`blocks_per_sm` per SM if given; it applies to `dot_vec4` only).
///
/// # Errors
/// A driver error from the occupancy query.
pub fn config_for(
    target: &Target,
    kernel: DotKernel,
    n: usize,
    blocks_per_sm: Option<u32>,
) -> Result<LaunchConfig> {
    match kernel {
        DotKernel::Vec4 => {
            let shared = block_reduce_shared_bytes::<f32>(THREADS_PER_BLOCK);
            let work = n.div_ceil(4);
            grid_stride_config(
                target,
                kernel.name(),
                work,
                THREADS_PER_BLOCK,
                shared,
                blocks_per_sm,
            )
        }
        _ => {
            let blocks = if target.is_sim() {
                SIM_BLOCKS
            } else {
                BLOCKS_PER_GRID
            };
            let shared = THREADS_PER_BLOCK * size_of::<f32>() as u32;
            Ok(LaunchConfig::linear(blocks, THREADS_PER_BLOCK).with_shared_bytes(shared))
        }
    }
}

/// The source's data: `a = 1`, `b = 1/N` (computed in float64, stored as float32, as
/// `(np.ones(N) / N).astype(np.float32)` does). The exact dot is `N · f32(1/N)` ≈ 1.
pub fn source_data(n: usize) -> (Vec<f32>, Vec<f32>) {
    let b = (1.0 / n.max(1) as f64) as f32;
    (vec![1.0; n], vec![b; n])
}

/// Random data: `a` and `b` uniform in `[-1, 1)` from `seed`.
pub fn random_data(n: usize, seed: u64) -> (Vec<f32>, Vec<f32>) {
    let a = uniform_f32(n, seed, -1.0, 1.0);
    let b = uniform_f32(n, seed ^ 0x5bd1_e995_5bd1_e995, -1.0, 1.0);
    (a, b)
}

/// A float64 dot on the host, and the sum of the products' magnitudes (the scale of the
/// rounding error any summation order makes).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CpuDot {
    /// `Σ a_i·b_i` in float64.
    pub dot: f64,
    /// `Σ |a_i·b_i|` in float64.
    pub sum_abs: f64,
}

/// [`CpuDot`] of `a` and `b` (the shorter length), computed on every core.
pub fn dot_cpu(a: &[f32], b: &[f32]) -> CpuDot {
    let n = a.len().min(b.len());
    let parts = par_map_ranges(n, |r| {
        a[r.clone()]
            .iter()
            .zip(&b[r])
            .fold((0.0f64, 0.0f64), |(s, m), (&x, &y)| {
                let p = x as f64 * y as f64;
                (s + p, m + p.abs())
            })
    });
    let (dot, sum_abs) = parts
        .into_iter()
        .fold((0.0, 0.0), |(s, m), (ps, pm)| (s + ps, m + pm));
    CpuDot { dot, sum_abs }
}

/// `|result − exact| / |exact|` (0 when both are 0).
pub fn rel_error(result: f64, exact: f64) -> f64 {
    if result == exact {
        0.0
    } else {
        (result - exact).abs() / exact.abs()
    }
}

/// Checks a kernel's result against the CPU's within [`TOLERANCE`] · `Σ |a_i·b_i|`.
///
/// # Errors
/// [`Error::Mismatch`] if it is further off (or not a number).
pub fn check(kernel: DotKernel, result: f64, cpu: &CpuDot) -> Result<()> {
    let bound = TOLERANCE * cpu.sum_abs;
    let within = (result - cpu.dot).abs() <= bound;
    if within {
        return Ok(());
    }
    Err(Error::Mismatch(format!(
        "{} gave {result}, the CPU {} (allowed error {bound:e})",
        kernel.name(),
        cpu.dot
    )))
}

/// Bandwidth in GB/s of reading two arrays of `n` floats in `ms` milliseconds.
pub fn read_gb_per_s(n: usize, ms: f64) -> f64 {
    8.0 * n as f64 / (ms * 1e-3) / 1e9
}

mod launch;
mod report;
pub use launch::DotLaunch;
pub use report::{DotReport, DotRun, run};
