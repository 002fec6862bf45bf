//! Histograms of 16-bit values: 65 536 bins, too many for one block's shared memory.
//!
//! Three kernels (device code and the table of what each changes:
//! `gpu/src/lessons/histogram/wide.rs`): one global atomic per value ([`WideKernel::Global`]);
//! privatized bin ranges, the input read once per range ([`WideKernel::Ranges`]); and one
//! histogram per thread block cluster, spread over its blocks' shared memory and counted through
//! distributed shared memory ([`WideKernel::Cluster`], sm_90). Every result is compared with
//! [`histogram_u16_cpu`], exactly.
//!
//! For other projects: [`histogram_u16`] and [`histogram_u16_of_buffer`].

use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::grid::grid_stride_config;
use crate::runtime::launch::Target;
use crate::runtime::timer::Timer;
use gpu::LaunchConfig;
use gpu::lessons::histogram::{U16_BINS, WIDE_THREADS_PER_BLOCK};
use serde::Serialize;

/// Bins of a 16-bit histogram.
pub const BINS: usize = U16_BINS as usize;

/// Bins per block of [`WideKernel::Ranges`]: 128 KiB of `u32` counters, so two ranges (the
/// input read twice) and one block per SM.
pub const RANGE_BINS: u32 = 1 << 15;

/// The cluster sizes [`WideKernel::Cluster`] runs with: powers of two, each block holding
/// `65 536 / n` bins (128 KiB at 2, 16 KiB at 16; 16 is past the portable 8).
pub const CLUSTER_SIZES: [u32; 4] = [2, 4, 8, 16];

/// Values per launch at most: the shared-memory counters are `u32`, and no block or cluster
/// counts more than the launch's values. A longer input is counted in launches of this many.
pub const MAX_VALUES_PER_LAUNCH: usize = u32::MAX as usize;

/// Threads per block on the simulator (a cluster of 16 blocks, twice, is 2 048 OS threads).
pub const SIM_THREADS_PER_BLOCK: u32 = 64;

/// The kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WideKernel {
    /// `histogram_u16_global`: a global atomic per value.
    Global,
    /// `histogram_u16_ranges`: [`RANGE_BINS`] per block, the grid's y picking the range.
    Ranges,
    /// `histogram_u16_cluster` in clusters of this many blocks (one of [`CLUSTER_SIZES`]).
    Cluster(u32),
}

impl WideKernel {
    /// Every kernel, every cluster size.
    pub const ALL: [WideKernel; 6] = [
        WideKernel::Global,
        WideKernel::Ranges,
        WideKernel::Cluster(2),
        WideKernel::Cluster(4),
        WideKernel::Cluster(8),
        WideKernel::Cluster(16),
    ];

    /// The kernel's entry point.
    pub const fn name(self) -> &'static str {
        match self {
            WideKernel::Global => "histogram_u16_global",
            WideKernel::Ranges => "histogram_u16_ranges",
            WideKernel::Cluster(_) => "histogram_u16_cluster",
        }
    }

    /// The name with its cluster size, for tables: `histogram_u16_cluster×4`.
    pub const fn label(self) -> &'static str {
        match self {
            WideKernel::Cluster(2) => "histogram_u16_cluster×2",
            WideKernel::Cluster(4) => "histogram_u16_cluster×4",
            WideKernel::Cluster(8) => "histogram_u16_cluster×8",
            WideKernel::Cluster(16) => "histogram_u16_cluster×16",
            k => k.name(),
        }
    }

    /// Whether the kernel needs sm_90 (clusters).
    pub const fn needs_clusters(self) -> bool {
        matches!(self, WideKernel::Cluster(_))
    }

    /// Dynamic shared memory per block.
    const fn shared_bytes(self) -> u32 {
        match self {
            WideKernel::Global => 0,
            WideKernel::Ranges => 4 * RANGE_BINS,
            WideKernel::Cluster(n) => 4 * U16_BINS / n,
        }
    }
}

/// Whether `target` runs clusters: the simulator, or a GPU of compute capability 9.0 or later.
pub fn has_clusters(target: &Target) -> bool {
    target.has_kernel(gpu::Kernel::HistogramU16Cluster)
}

/// The kernel [`histogram_u16`] uses: the bin ranges, everywhere. Measured (`gridsync bench
/// histogram-u16`, H100, 10⁹ values): 1.03 ms on uniform values and 0.96 ms on token-like ones
/// (65–70 % of the copy roofline), against 11.0 and 22.9 ms for the cluster histogram in
/// clusters of 4 (its fastest size), 17.3 and 203 ms for global atomics, and 13.7 ms for CUB's
/// `HistogramEven` — `docs/perf-notes.md`, "65 536 bins". (The prediction had been the
/// cluster histogram.)
pub fn fastest_wide_kernel(target: &Target) -> WideKernel {
    let _ = target;
    WideKernel::Ranges
}

/// The launch shape of `kernel` over `len` values: one full wave of blocks (the occupancy
/// calculator's, or for clusters `cuOccupancyMaxActiveClusters`), no more than the input fills.
///
/// # Errors
/// [`Error::InvalidInput`] for a cluster size not in [`CLUSTER_SIZES`];
/// [`Error::Unsupported`] for clusters on a GPU below 9.0; a driver error.
pub fn wide_config(target: &Target, kernel: WideKernel, len: usize) -> Result<LaunchConfig> {
    // The simulator runs every thread as an OS thread: small blocks there.
    let threads = if target.is_sim() {
        SIM_THREADS_PER_BLOCK
    } else {
        WIDE_THREADS_PER_BLOCK
    };
    let shared = kernel.shared_bytes();
    // Eight values per thread per step (one 16-byte load).
    let work = len.div_ceil(8);
    match kernel {
        WideKernel::Global => {
            grid_stride_config(target, kernel.name(), work, threads, shared, None)
        }
        WideKernel::Ranges => {
            let ranges = U16_BINS / RANGE_BINS;
            let mut cfg = grid_stride_config(target, kernel.name(), work, threads, shared, None)?;
            cfg.grid.x = cfg.grid.x.div_ceil(ranges).max(1);
            cfg.grid.y = ranges;
            Ok(cfg)
        }
        WideKernel::Cluster(n) => {
            if !CLUSTER_SIZES.contains(&n) {
                return Err(Error::InvalidInput(format!(
                    "clusters of {n} blocks: the 16-bit histogram runs in clusters of {CLUSTER_SIZES:?}"
                )));
            }
            let cfg = LaunchConfig::linear(n, threads)
                .with_shared_bytes(shared)
                .with_cluster(n.into());
            let clusters = match target {
                // Two clusters: siblings and strangers both exist.
                Target::Sim => 2,
                Target::Gpu(gpu) => gpu.max_active_clusters(kernel.name(), &cfg)?.max(1),
            };
            let needed = work.div_ceil((n * threads) as usize).max(1);
            let clusters = (clusters as usize).min(needed) as u32;
            Ok(LaunchConfig {
                grid: (clusters * n).into(),
                ..cfg
            })
        }
    }
}

/// One kernel over one input on a target, ready to launch any number of times: the input, the
/// bins it adds to, and the launch shape.
pub struct WideLaunch<'a> {
    target: &'a Target,
    kernel: WideKernel,
    src: &'a Buffer<u16>,
    len: usize,
    out: Buffer<u64>,
    cfg: LaunchConfig,
}

impl<'a> WideLaunch<'a> {
    /// Prepares `kernel` over the first `len` values of `src`, with `cfg`
    /// ([`wide_config`]).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `len` exceeds the buffer; [`Error::Unsupported`] for
    /// clusters where there are none; a driver error allocating the bins.
    pub fn new(
        target: &'a Target,
        kernel: WideKernel,
        src: &'a Buffer<u16>,
        len: usize,
        cfg: LaunchConfig,
    ) -> Result<WideLaunch<'a>> {
        src.check_prefix(len, || format!("{len} values asked"))?;
        if kernel.needs_clusters() && !has_clusters(target) {
            return Err(Error::Unsupported(format!(
                "{}: thread block clusters need compute capability 9.0 (sm_90)",
                kernel.label()
            )));
        }
        Ok(WideLaunch {
            target,
            kernel,
            src,
            len,
            out: target.zeros::<u64>(BINS)?,
            cfg,
        })
    }

    /// The launch shape.
    pub fn config(&self) -> LaunchConfig {
        self.cfg
    }

    /// Zeroes the bins and queues the kernel (in launches of at most
    /// [`MAX_VALUES_PER_LAUNCH`] values).
    ///
    /// # Errors
    /// A launch or driver error.
    pub fn launch(&self) -> Result<()> {
        self.target.clear(&self.out)?;
        let mut start = 0;
        loop {
            // An empty input still launches once (and counts nothing).
            let n = (self.len - start).min(MAX_VALUES_PER_LAUNCH);
            // SAFETY: `start + n <= len <= src.len()` values are read; `out` holds `BINS` bins,
            // touched only atomically; the shared memory and cluster are in `cfg`.
            unsafe {
                let values = self.src.ptr().cast_const().add(start);
                let (len, histo) = (n as u64, self.out.ptr());
                match self.kernel {
                    WideKernel::Global => crate::launch!(
                        self.target,
                        gpu::lessons::histogram::histogram_u16_global,
                        self.cfg,
                        (values, len, histo)
                    ),
                    WideKernel::Ranges => crate::launch!(
                        self.target,
                        gpu::lessons::histogram::histogram_u16_ranges,
                        self.cfg,
                        (values, len, histo, RANGE_BINS)
                    ),
                    WideKernel::Cluster(_) => crate::launch!(
                        self.target,
                        gpu::lessons::histogram::histogram_u16_cluster,
                        self.cfg,
                        (values, len, histo)
                    ),
                }?;
            }
            start += n;
            if start >= self.len {
                break;
            }
        }
        Ok(())
    }

    /// [`WideLaunch::launch`] timed with `timer` on a GPU: the event time in ms, `None` on the
    /// simulator or without a timer.
    ///
    /// # Errors
    /// As [`WideLaunch::launch`].
    pub fn launch_timed(&self, timer: Option<&mut Timer>) -> Result<Option<f64>> {
        Timer::time_if(self.target, timer, || self.launch())
    }

    /// The bins' buffer on the device (the plans combine it where it is).
    pub(crate) fn bins_buffer(&self) -> &Buffer<u64> {
        &self.out
    }

    /// The bins after the last launch (waits for it).
    ///
    /// # Errors
    /// A driver error, including a fault of the kernel.
    pub fn result(&self) -> Result<Vec<u64>> {
        self.target.synchronize()?;
        self.target.download(&self.out)
    }
}

/// The histogram of `values`, counted on the CPU: the reference.
pub fn histogram_u16_cpu(values: &[u16]) -> Vec<u64> {
    let partial = crate::inputs::par_map_ranges(values.len(), |range| {
        let mut h = vec![0u64; BINS];
        for &v in &values[range] {
            h[v as usize] += 1;
        }
        h
    });
    let mut h = vec![0u64; BINS];
    for p in partial {
        for (a, b) in h.iter_mut().zip(p) {
            *a += b;
        }
    }
    h
}

/// Checks a kernel's histogram against the reference, naming the first bin that differs.
///
/// # Errors
/// [`Error::Mismatch`].
pub fn check(kernel: WideKernel, got: &[u64], want: &[u64]) -> Result<()> {
    if got.len() != want.len() {
        return Err(Error::Mismatch(format!(
            "{}: {} bins, not {}",
            kernel.label(),
            got.len(),
            want.len()
        )));
    }
    match got.iter().zip(want).position(|(g, w)| g != w) {
        None => Ok(()),
        Some(b) => Err(Error::Mismatch(format!(
            "{}: bin {b} holds {}, the CPU counted {}",
            kernel.label(),
            got[b],
            want[b]
        ))),
    }
}

/// The 65 536-bin histogram of the first `len` values of `buf`, which is on `target`, with
/// [`fastest_wide_kernel`]. Exactly the CPU's counts.
///
/// # Errors
/// [`Error::InvalidInput`] if `len` exceeds the buffer; a launch or driver error.
pub fn histogram_u16_of_buffer(target: &Target, buf: &Buffer<u16>, len: usize) -> Result<Vec<u64>> {
    let kernel = fastest_wide_kernel(target);
    let cfg = wide_config(target, kernel, len)?;
    let launch = WideLaunch::new(target, kernel, buf, len, cfg)?;
    launch.launch()?;
    launch.result()
}

/// The number of each 16-bit value in `values` (65 536 bins), counted on `target` (a GPU, or the
/// simulator): token ids, 16-bit samples. Exactly what a CPU loop counts.
///
/// ```no_run
/// # fn main() -> gridsync::Result<()> {
/// let target = gridsync::Target::open(0, false)?;
/// let counts = gridsync::histogram::histogram_u16(&target, &[7, 50_000, 7])?;
/// assert_eq!((counts[7], counts[50_000]), (2, 1));
/// # Ok(()) }
/// ```
///
/// # Errors
/// A driver error: the device memory cannot hold `values`, or the GPU fails.
pub fn histogram_u16(target: &Target, values: &[u16]) -> Result<Vec<u64>> {
    let buf = target.upload(values)?;
    histogram_u16_of_buffer(target, &buf, values.len())
}
