//! Producer/consumer pipelines (sm_90): the transform of `gpu/src/lessons/pipeline.rs` with both
//! waits, without the consumers' wait for a tile to land, and without the producer's wait for a
//! stage to be read — each run on random words, its wrong words counted against the CPU, its
//! timeouts reported, and (on a GPU) the correct one timed against the device-to-device copy.
//!
//! Beyond the sources: Hopper's bulk copies completing on an `mbarrier` (CUDA's
//! `cuda::memcpy_async` with `cuda::barrier`, or `cuda::pipeline`). Device code and the table of
//! what each kernel does: `gpu/src/lessons/pipeline.rs`.

use crate::runtime::args::KernelRef;
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::grid::one_block_per_sm;
use crate::runtime::launch::Target;
use crate::runtime::timer::Timer;
use crate::runtime::wait::wait_bound;
use gpu::LaunchConfig;
use gpu::lessons::pipeline::{
    LESSON_THREADS_PER_BLOCK, LESSON_TILE_WORDS, lesson_shared_bytes, pipeline_mix,
};
use serde::Serialize;

/// The bound of the correct kernel's waits: far above any real copy (stretched under a
/// sanitizer: [`wait_bound`]).
pub const TIMEOUT_NS: u64 = 1_000_000_000;
/// The bound of the broken kernels' waits: short, since a consumer that fell behind waits for
/// a phase that already passed (kept short under a sanitizer too: the timeout is the lesson).
pub const BROKEN_TIMEOUT_NS: u64 = 10_000_000;
/// The most dependent operations per word `--work` may ask for: at the default size about a
/// second of computing per launch on an H100.
pub const MAX_WORK: u32 = 1_000_000;
/// Timed launches of the correct kernel on a GPU.
pub const TRIALS: u32 = 10;

/// The lesson's kernels, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PipelineKernel {
    /// Both waits.
    Transform,
    /// The consumers read before the copy lands.
    NoFullWait,
    /// The producer refills a stage the consumers are reading.
    NoEmptyWait,
}

impl PipelineKernel {
    /// All, in order.
    pub const ALL: [PipelineKernel; 3] = [
        PipelineKernel::Transform,
        PipelineKernel::NoFullWait,
        PipelineKernel::NoEmptyWait,
    ];

    /// The kernel's name.
    pub const fn name(self) -> &'static str {
        match self {
            PipelineKernel::Transform => "pipeline_transform",
            PipelineKernel::NoFullWait => "pipeline_no_full_wait",
            PipelineKernel::NoEmptyWait => "pipeline_no_empty_wait",
        }
    }

    /// One line on what it does.
    pub const fn what(self) -> &'static str {
        match self {
            PipelineKernel::Transform => {
                "consumers wait for the copy (full), producer for the reads (empty)"
            }
            PipelineKernel::NoFullWait => "consumers read the stage before the copy lands",
            PipelineKernel::NoEmptyWait => {
                "producer waits for its own copy, not the reads: overwrites a stage in use"
            }
        }
    }

    /// Whether the kernel is correct.
    pub const fn correct(self) -> bool {
        matches!(self, PipelineKernel::Transform)
    }
}

/// What [`run`] does.
#[derive(Clone, Copy, Debug)]
pub struct PipelineOptions {
    /// Tiles of 4 KiB to transform.
    pub tiles: u32,
    /// Dependent operations per word (the consumers' work).
    pub work: u32,
    /// Blocks; `None`: one per SM on a GPU, 2 on the simulator.
    pub blocks: Option<u32>,
    /// Seed of the random words.
    pub seed: u64,
}

impl PipelineOptions {
    /// 64 tiles per SM on a GPU (34.6 MB on an H100), 16 on the simulator; 16 operations.
    pub fn for_target(target: &Target) -> PipelineOptions {
        let tiles = match target {
            Target::Sim => 16,
            Target::Gpu(g) => 64 * g.info().sm_count,
        };
        PipelineOptions {
            tiles,
            work: 16,
            blocks: None,
            seed: 0x7069_7065,
        }
    }
}

/// One kernel's run.
#[derive(Clone, Debug, Serialize)]
pub struct PipelineRun {
    /// Which kernel.
    pub kernel: PipelineKernel,
    /// Its name.
    pub name: &'static str,
    /// What it does.
    pub what: &'static str,
    /// Output words that differ from the CPU's (first launch).
    pub wrong_words: u64,
    /// Words transformed.
    pub words: u64,
    /// Whether a wait gave up.
    pub timed_out: bool,
    /// Median event time of a launch, ms (GPU, the correct kernel only).
    pub ms: Option<f64>,
    /// Its rate: bytes read and written per second, GB/s.
    pub gb_per_s: Option<f64>,
}

/// The lesson's result.
#[derive(Clone, Debug, Serialize)]
pub struct PipelineReport {
    /// Where it ran.
    pub target: String,
    /// Blocks.
    pub blocks: u32,
    /// Threads per block: one producer warp, the rest consumers.
    pub threads_per_block: u32,
    /// Tiles of [`LESSON_TILE_WORDS`] words.
    pub tiles: u32,
    /// Dependent operations per word.
    pub work: u32,
    /// Every kernel.
    pub runs: Vec<PipelineRun>,
    /// The device-to-device copy of the same bytes, GB/s read + written (GPU only).
    pub copy_gb_per_s: Option<f64>,
}

/// `n` random words, a deterministic function of `seed`.
fn random_words(n: usize, seed: u64) -> Vec<u32> {
    let mut z = seed;
    (0..n)
        .map(|_| {
            z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut v = z;
            v = (v ^ (v >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            v = (v ^ (v >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (v ^ (v >> 31)) as u32
        })
        .collect()
}

/// Queues one launch of `kernel`.
fn launch(
    target: &Target,
    kernel: PipelineKernel,
    cfg: LaunchConfig,
    (x, out, err): (&Buffer<u32>, &Buffer<u32>, &Buffer<u32>),
    work: u32,
) -> Result<()> {
    let timeout = wait_bound(if kernel.correct() {
        TIMEOUT_NS
    } else {
        BROKEN_TIMEOUT_NS
    });
    let (xp, op, ep, n) = (x.ptr().cast_const(), out.ptr(), err.ptr(), x.len() as u64);
    use gpu::lessons::pipeline as k;
    let transform: KernelRef<(*const u32, *mut u32, u64, u32, u64, *mut u32)> = match kernel {
        PipelineKernel::Transform => crate::kernel_ref!(k::pipeline_transform),
        PipelineKernel::NoFullWait => crate::kernel_ref!(k::pipeline_no_full_wait),
        PipelineKernel::NoEmptyWait => crate::kernel_ref!(k::pipeline_no_empty_wait),
    };
    // SAFETY: `x` and `out` hold `n` words each (device allocations: 16-byte aligned), `err` one
    // word touched atomically; the shared memory is in `cfg`.
    unsafe { target.launch_ref(transform, cfg, (xp, op, n, work, timeout, ep)) }
}

/// Runs every kernel once, checked against the CPU, and times the correct one on a GPU.
///
/// # Errors
/// [`Error::Unsupported`] below compute capability 9.0; [`Error::InvalidInput`] for zero tiles
/// or blocks or more than [`MAX_WORK`] operations per word; [`Error::TooLarge`] for more tiles
/// than fit in memory; [`Error::Mismatch`] if the correct kernel
/// wrote a wrong word or timed out; a launch or driver error.
pub fn run(target: &Target, opts: &PipelineOptions) -> Result<PipelineReport> {
    run_kernels(target, opts, &PipelineKernel::ALL)
}

/// [`run`] with only `kernels`, in their order (the checker runs each on its own).
///
/// # Errors
/// As [`run`].
pub fn run_kernels(
    target: &Target,
    opts: &PipelineOptions,
    kernels: &[PipelineKernel],
) -> Result<PipelineReport> {
    target.require_kernel(
        gpu::Kernel::PipelineTransform,
        "the pipeline lesson needs compute capability 9.0 (bulk copies completing on an mbarrier)",
    )?;
    let blocks = opts.blocks.unwrap_or_else(|| one_block_per_sm(target));
    if opts.tiles == 0 || blocks == 0 {
        return Err(Error::InvalidInput(
            "tiles and blocks must be positive".into(),
        ));
    }
    if opts.work > MAX_WORK {
        return Err(Error::InvalidInput(format!(
            "--work {}: at most {MAX_WORK} operations per word (a launch would run for hours)",
            opts.work
        )));
    }
    let n = opts.tiles as usize * LESSON_TILE_WORDS as usize;
    // Input, expected and downloaded words on the host; input and output on the device (and
    // the copy's two buffers of the same size, one at a time after them).
    crate::runtime::memory::check_fits(
        target,
        &format!("--tiles {}", opts.tiles),
        crate::runtime::memory::Footprint::per_element(n as u64, 12, 8),
    )?;
    // A tail that is not a whole tile nor a whole 16 bytes: the last tile is short, and its
    // last word comes from global memory.
    let n = n - 3;
    let input = random_words(n, opts.seed);
    let want: Vec<u32> = input.iter().map(|&v| pipeline_mix(v, opts.work)).collect();
    let threads = LESSON_THREADS_PER_BLOCK;
    let cfg = LaunchConfig::linear(blocks, threads).with_shared_bytes(lesson_shared_bytes());
    let x = target.upload(&input)?;
    let out = target.zeros::<u32>(n)?;
    let err = target.zeros::<u32>(1)?;
    let mut timer = Timer::on(target)?;
    let bytes = 8.0 * n as f64; // read and written
    let mut runs = Vec::new();
    for &kernel in kernels {
        target.clear(&out)?;
        target.clear(&err)?;
        launch(target, kernel, cfg, (&x, &out, &err), opts.work)?;
        let got = target.download(&out)?;
        let timed_out = target.download(&err)?[0] != 0;
        let wrong_words = got.iter().zip(&want).filter(|(g, w)| g != w).count() as u64;
        if kernel.correct() && (wrong_words > 0 || timed_out) {
            return Err(Error::Mismatch(format!(
                "{}: {wrong_words} wrong words, timed out: {timed_out}",
                kernel.name()
            )));
        }
        let ms = if kernel.correct() {
            Timer::median_ms_if(target, timer.as_mut(), TRIALS, || {
                launch(target, kernel, cfg, (&x, &out, &err), opts.work)
            })?
        } else {
            None
        };
        runs.push(PipelineRun {
            kernel,
            name: kernel.name(),
            what: kernel.what(),
            wrong_words,
            words: n as u64,
            timed_out,
            ms,
            gb_per_s: ms.map(|ms| bytes / (ms * 1e-3) / 1e9),
        });
    }
    drop((x, out));
    let copy_gb_per_s = match target {
        Target::Gpu(_) => {
            Some(crate::runtime::copy::run(target, 4 * n, TRIALS, |_, _| {})?.gb_per_s)
        }
        Target::Sim => None,
    };
    Ok(PipelineReport {
        target: target.describe(),
        blocks,
        threads_per_block: threads,
        tiles: opts.tiles,
        work: opts.work,
        runs,
        copy_gb_per_s,
    })
}
