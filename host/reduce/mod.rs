//! Full reductions of an array — sum, min, max — from the sources' kernels to a single pass at
//! the copy roofline, with a library API ([`sum`], [`sum_f64`], [`min`], [`max`], …).
//!
//! Sources: the Numba tutorial's `partial_reduce` (part 3) and the CUDA book's section 9.1
//! (one `atomicAdd` per block; `N = 1e8` floats all `1.23`). Device code and the progression
//! table: `gpu/src/lessons/reduce/`. The demo ([`run`], `gridsync reduce`) runs the `f32` progression
//! ([`Step`]) and the typed kernels on one input and compares every result with a CPU reference
//! in `f64` (exact for integers); [`SinglePass`] drives the single-pass kernels for any
//! [`Reduction`](gpu::lessons::reduce::Reduction); [`api`] holds the functions other projects call.
//!
//! Why 1.23 × 10⁸ in `f32` atomics goes wrong: the running total grows to 1.23·10⁸, where
//! neighbouring `f32` values are 8 apart, and each of the 781 250 block sums (157.44) added to it
//! is rounded to that grid — an error of up to 4 each time, and mostly in one direction. The
//! book's result is off by about 5·10⁻³ and, since the atomics' order changes, differs from run to
//! run. The last-block kernels add a thousand partials in a fixed order: same bits every run.

use crate::inputs::uniform_f32;
use crate::runtime::error::{Error, Result};
use crate::runtime::grid::grid_stride_config;
use crate::runtime::launch::Target;
use crate::runtime::memory::Footprint;
use gpu::LaunchConfig;
use gpu::block_reduce::block_reduce_shared_bytes;
use gpu::lessons::reduce::{
    BOOK_BLOCK_SIZE, NUMBA_BLOCKS_PER_GRID, NUMBA_THREADS_PER_BLOCK, THREADS_PER_BLOCK,
    last_block_shared_bytes,
};
use serde::Serialize;

/// Elements of the default input on a GPU: the CUDA book's `N = 1e8`.
pub const DEFAULT_LEN: usize = 100_000_000;
/// Elements of the default input on the simulator, whose threads are OS threads (the book's
/// kernel needs one thread per element: here 79 blocks, in three launches of at most 4096).
pub const SIM_DEFAULT_LEN: usize = 10_000;
/// The CUDA book's value: every element of its input is `1.23`.
pub const BOOK_VALUE: f32 = 1.23;

/// Bytes per input element the demo ([`run`]) needs: on the host the input and the wider copies
/// the typed sums are made from; on the device the input and one typed copy.
pub const DEMO_FOOTPRINT: Footprint = Footprint {
    host: 12,
    device: 8,
};

/// How the single-pass kernels accumulate a sum of `f32`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Accumulate {
    /// In `f32` registers, as the sources do.
    #[default]
    F32,
    /// In `f64`: every element converted exactly, every addition in `f64`.
    F64,
    /// In `f32` with Neumaier (improved Kahan) compensation.
    Kahan,
}

impl Accumulate {
    /// Every option.
    pub const ALL: [Accumulate; 3] = [Accumulate::F32, Accumulate::F64, Accumulate::Kahan];

    /// `f32`, `f64` or `kahan`, as the CLI spells it.
    pub const fn label(self) -> &'static str {
        match self {
            Accumulate::F32 => "f32",
            Accumulate::F64 => "f64",
            Accumulate::Kahan => "kahan",
        }
    }
}

impl std::str::FromStr for Accumulate {
    type Err = Error;
    fn from_str(s: &str) -> Result<Accumulate> {
        crate::runtime::error::parse_label(&Accumulate::ALL, Accumulate::label, "--accumulate", s)
    }
}

/// The `f32` progression, (a) to (e) of `gpu/src/lessons/reduce/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// (a) `partial_reduce`: Numba's tree; the host adds the partials in `f64`.
    Partial,
    /// (b) `reduce_atomic`: the book's tree per 128 elements and one `atomicAdd` per block.
    Atomic,
    /// (c) `reduce_warp`: grid-stride loop, shuffles, one `atomicAdd` per block.
    Warp,
    /// (d) `reduce_last_block_sum_f32*`: single pass, the last block adds the partials.
    LastBlock,
    /// (e) `reduce_vec_sum_f32*`: (d) with 16-byte loads.
    Vec,
    /// (f) `reduce_pipeline_sum_f32*` (sm_90): (e)'s adding fed by bulk copies into a ring of
    /// shared-memory stages.
    Pipeline,
}

impl Step {
    /// Every step, in order.
    pub const ALL: [Step; 6] = [
        Step::Partial,
        Step::Atomic,
        Step::Warp,
        Step::LastBlock,
        Step::Vec,
        Step::Pipeline,
    ];

    /// The steps that run on `target` (the pipeline needs sm_90).
    pub fn available(target: &Target) -> Vec<Step> {
        Step::ALL
            .into_iter()
            .filter(|s| target.has_kernel(s.kernel(Accumulate::F32)))
            .collect()
    }

    /// The kernel this step launches with accumulation `acc` (which only (d) and (e) take).
    pub const fn kernel(self, acc: Accumulate) -> gpu::Kernel {
        use gpu::Kernel as K;
        match (self, acc) {
            (Step::Partial, _) => K::PartialReduce,
            (Step::Atomic, _) => K::ReduceAtomic,
            (Step::Warp, _) => K::ReduceWarp,
            (Step::LastBlock, Accumulate::F32) => K::ReduceLastBlockSumF32,
            (Step::LastBlock, Accumulate::F64) => K::ReduceLastBlockSumF32InF64,
            (Step::LastBlock, Accumulate::Kahan) => K::ReduceLastBlockSumF32Kahan,
            (Step::Vec, Accumulate::F32) => K::ReduceVecSumF32,
            (Step::Vec, Accumulate::F64) => K::ReduceVecSumF32InF64,
            (Step::Vec, Accumulate::Kahan) => K::ReduceVecSumF32Kahan,
            (Step::Pipeline, Accumulate::F32) => K::ReducePipelineSumF32,
            (Step::Pipeline, Accumulate::F64) => K::ReducePipelineSumF32InF64,
            (Step::Pipeline, Accumulate::Kahan) => K::ReducePipelineSumF32Kahan,
        }
    }

    /// Whether `--accumulate` applies (the single-pass steps).
    pub const fn takes_accumulate(self) -> bool {
        matches!(self, Step::LastBlock | Step::Vec | Step::Pipeline)
    }

    /// Whether the result is the same bits on every run of one launch shape (no float atomics).
    pub const fn deterministic(self) -> bool {
        !matches!(self, Step::Atomic | Step::Warp)
    }

    /// How many different results, bit for bit, `values` (of repeated runs of kernel `name` on
    /// one input) holds.
    ///
    /// # Errors
    /// [`Error::Mismatch`] naming the kernel if the step is [`Step::deterministic`] and gave
    /// more than one.
    pub fn distinct_results(self, name: &str, values: &[f64]) -> Result<usize> {
        let mut bits: Vec<u64> = values.iter().map(|v| v.to_bits()).collect();
        bits.sort_unstable();
        bits.dedup();
        if self.deterministic() && bits.len() > 1 {
            return Err(Error::Mismatch(format!(
                "{name} is deterministic by construction, yet gave {} different results on one \
                 input",
                bits.len()
            )));
        }
        Ok(bits.len())
    }

    /// One line on how it reduces.
    pub const fn what(self) -> &'static str {
        match self {
            Step::Partial => "Numba: tree per block, partials added by the host",
            Step::Atomic => "book: 1 element/thread, tree per 128, atomicAdd per block",
            Step::Warp => "grid-stride, shuffles, atomicAdd per block",
            Step::LastBlock => "single pass: partials, threadfence, ticket, last block adds",
            Step::Vec => "single pass, 16-byte loads, 4 in flight per thread",
            Step::Pipeline => "single pass, bulk copies into 4 shared stages (sm_90)",
        }
    }
}

/// Threads per block of `kernel`, and the dynamic shared memory of the kernels that are not
/// single-pass (whose shared memory depends on their accumulator).
pub fn shape_of(kernel: gpu::Kernel) -> (u32, u32) {
    use gpu::Kernel as K;
    let threads = match kernel {
        K::PartialReduce => NUMBA_THREADS_PER_BLOCK,
        K::ReduceAtomic | K::ReduceAtomicF64 => BOOK_BLOCK_SIZE,
        K::ReducePipelineSumF32 | K::ReducePipelineSumF32InF64 | K::ReducePipelineSumF32Kahan => {
            gpu::lessons::reduce::REDUCE_PIPELINE_THREADS_PER_BLOCK
        }
        _ => THREADS_PER_BLOCK,
    };
    let shared = match kernel {
        K::PartialReduce | K::ReduceAtomic => threads * size_of::<f32>() as u32,
        K::ReduceAtomicF64 => threads * size_of::<f64>() as u32,
        K::ReduceWarp => block_reduce_shared_bytes::<f32>(threads),
        _ => 0,
    };
    (threads, shared)
}

/// The launch shape of the grid-stride kernels (a), (c), (d), (e) over `work` items per thread
/// step: one full wave of blocks (or `blocks_per_sm` per SM) on a GPU, the source's 32 × 40
/// blocks for (a), a few blocks on the simulator. `shared_bytes`: the single-pass kernels' shared
/// memory ([`single_pass_shared_bytes`]; 0 for the others, whose shared memory is fixed).
///
/// # Errors
/// A driver error from the occupancy query.
pub fn config_for(
    target: &Target,
    kernel: gpu::Kernel,
    work: usize,
    shared_bytes: u32,
    blocks_per_sm: Option<u32>,
) -> Result<LaunchConfig> {
    let (threads, own_shared) = shape_of(kernel);
    let shared = own_shared.max(shared_bytes);
    if kernel == gpu::Kernel::PartialReduce && !target.is_sim() {
        let blocks = work
            .div_ceil(threads as usize)
            .clamp(1, NUMBA_BLOCKS_PER_GRID as usize);
        return Ok(LaunchConfig::linear(blocks as u32, threads).with_shared_bytes(shared));
    }
    grid_stride_config(target, kernel.name(), work, threads, shared, blocks_per_sm)
}

/// Dynamic shared memory of a single-pass kernel whose accumulator is `A`.
pub const fn single_pass_shared_bytes<A>() -> u32 {
    last_block_shared_bytes::<A>(THREADS_PER_BLOCK)
}

/// The book's input: `len` copies of [`BOOK_VALUE`].
pub fn book_input(len: usize) -> Vec<f32> {
    vec![BOOK_VALUE; len]
}

/// `len` floats uniform in `[-1, 1)` (`signed`) or `[0, 1)`, a deterministic function of `seed`.
pub fn random_input(len: usize, seed: u64, signed: bool) -> Vec<f32> {
    let lo = if signed { -1.0 } else { 0.0 };
    uniform_f32(len, seed, lo, 1.0)
}

pub mod api;
mod cpu;
mod kernels;
mod report;
mod single_pass;
mod steps;
mod types;

pub use api::{max, max_i32, min, min_i32, sum, sum_f64, sum_i32, sum_u64, sum_with};
pub use cpu::{
    Compensated, max_cpu, min_cpu, relative_error, sum_abs_cpu, sum_cpu, sum_i32_wrapping,
    sum_u64_wrapping,
};
pub use kernels::DeviceReduction;
pub use report::{ReduceOptions, ReduceReport, StepRun, run};
pub use single_pass::{SinglePass, SinglePassKernel};
pub use steps::StepLaunch;
pub use types::{TypeRun, Value, derived_i32, derived_u64};
