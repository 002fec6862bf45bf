//! The histograms: of bytes, each kernel of the lesson, and of 16-bit values in 65 536 bins.

use super::{BLOCKS, THREADS};
use crate::check::{Case, Ran};
use gpu::LaunchConfig;
use gridsync::histogram::wide::{RANGE_BINS, WideKernel, WideLaunch};
use gridsync::histogram::{Bins, HistKernel, HistogramLaunch};
use gridsync::runtime::error::Result;
use gridsync::runtime::launch::Target;

/// The histogram kernels.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "histogram",
            K::HistogramGlobal.name(),
            Clean,
            "5003 bytes",
            "a global atomic per byte",
            |t| histogram(t, HistKernel::Global)
        ),
        case!(
            "histogram",
            K::HistogramShared.name(),
            Clean,
            "5003 bytes",
            "a shared histogram per block, barriers around it",
            |t| histogram(t, HistKernel::Shared)
        ),
        case!(
            "histogram",
            K::HistogramSharedRows.name(),
            Clean,
            "5003 bytes",
            "a row of plain stores per block",
            |t| histogram(t, HistKernel::SharedRows)
        ),
        case!(
            "histogram",
            K::HistogramSharedUnzeroed.name(),
            Uninitialized,
            "3 × 40, 5003 bytes",
            "the shared bins counted into without zeroing them first",
            unzeroed
        ),
        case!(
            "histogram",
            K::HistogramWarp.name(),
            Clean,
            "5003 bytes",
            "a histogram per warp",
            |t| histogram(t, HistKernel::Warp)
        ),
        case!(
            "histogram",
            K::HistogramVec16.name(),
            Clean,
            "5003 bytes",
            "per warp, 16-byte loads",
            |t| histogram(t, HistKernel::Vec16)
        ),
        case!(
            "histogram",
            K::HistogramLane.name(),
            Clean,
            "5003 bytes",
            "a histogram per lane",
            |t| histogram(t, HistKernel::Lane)
        ),
        case!(
            "histogram",
            K::HistogramPipeline.name(),
            Clean,
            "5003 bytes",
            "fed by a producer warp's bulk copies (sm_90)",
            |t| histogram(t, HistKernel::Pipeline)
        ),
        case!(
            "histogram",
            K::HistogramU16Global.name(),
            Clean,
            "3 × 40, 5003 u16",
            "a global atomic per value, 65 536 bins",
            |t| histogram_u16(t, WideKernel::Global)
        ),
        case!(
            "histogram",
            K::HistogramU16Ranges.name(),
            Clean,
            "3×2 × 40, 5003 u16",
            "a block per bin range, counted in shared memory, then flushed",
            |t| histogram_u16(t, WideKernel::Ranges)
        ),
        case!(
            "histogram",
            K::HistogramU16Cluster.name(),
            Clean,
            "2 clusters × 4, 5003 u16",
            "the bins spread over a cluster's blocks, counted through DSMEM (sm_90)",
            |t| histogram_u16(t, WideKernel::Cluster(4))
        ),
    ]
}

fn histogram(t: &Target, kernel: HistKernel) -> Result<Ran> {
    let len = 5003;
    let data = gridsync::histogram::uniform_bytes(len, 1);
    let buf = t.upload(&data)?;
    let cfg = gridsync::histogram::config_for(t, kernel, Bins::Byte, len, Some(BLOCKS))?;
    let got = HistogramLaunch::new(t, kernel, &buf, len, Bins::Byte, cfg)?.run()?;
    gridsync::histogram::check(
        kernel,
        &got,
        &gridsync::histogram::histogram_cpu(&data, Bins::Byte),
    )?;
    Ok(Ran::Finished)
}

/// The 65 536-bin histogram of 5003 random 16-bit values, small launches: 3 blocks of 40
/// (twice, once per bin range, for the ranges), the clusters as `wide_config` makes them.
fn histogram_u16(t: &Target, kernel: WideKernel) -> Result<Ran> {
    let len = 5003;
    let values: Vec<u16> = gridsync::histogram::uniform_bytes(2 * len, 1)
        .chunks_exact(2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .collect();
    let buf = t.upload(&values)?;
    let cfg = match kernel {
        WideKernel::Global => LaunchConfig::linear(BLOCKS, THREADS),
        WideKernel::Ranges => {
            let mut cfg = LaunchConfig::linear(BLOCKS, THREADS).with_shared_bytes(4 * RANGE_BINS);
            cfg.grid.y = gridsync::histogram::wide::BINS as u32 / RANGE_BINS;
            cfg
        }
        WideKernel::Cluster(_) => gridsync::histogram::wide::wide_config(t, kernel, len)?,
    };
    let launch = WideLaunch::new(t, kernel, &buf, len, cfg)?;
    launch.launch()?;
    let got = launch.result()?;
    gridsync::histogram::wide::check(
        kernel,
        &got,
        &gridsync::histogram::histogram_u16_cpu(&values),
    )?;
    Ok(Ran::Finished)
}

/// `histogram_shared_unzeroed` over 5003 random bytes into 256 bins: right on the simulator,
/// whose shared memory starts zeroed; the checker's business is the bins' first reads.
fn unzeroed(t: &Target) -> Result<Ran> {
    let len = 5003;
    let data = gridsync::histogram::uniform_bytes(len, 1);
    let buf = t.upload(&data)?;
    let histo = t.zeros::<u64>(256)?;
    let shared = gpu::lessons::histogram::shared_u64_bytes(256);
    let cfg = LaunchConfig::linear(BLOCKS, THREADS).with_shared_bytes(shared);
    // SAFETY: `buf` holds `len` bytes, `histo` 256 zeroed bins; the launch gives the bins'
    // shared memory.
    unsafe {
        gridsync::launch!(
            t,
            gpu::lessons::histogram::histogram_shared_unzeroed,
            cfg,
            (buf.ptr().cast_const(), len as u64, histo.ptr(), 256u32)
        )?
    };
    Ok(Ran::Finished)
}
