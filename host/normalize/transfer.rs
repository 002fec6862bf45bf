//! `gridsync bench transfer`: host↔device copy bandwidth, from pinned and from pageable memory,
//! one direction at a time and both at once — what bounds any pipeline that streams arrays
//! through the GPU (`gridsync streams`).
//!
//! Every copy is `cuMemcpyHtoDAsync` / `cuMemcpyDtoHAsync` on a non-blocking stream, timed by
//! events on that stream; "both" queues a copy in on one stream and a copy out on another at
//! once, and times the pair from the earlier start event to the later end event. Reference:
//! `scripts/reference_streams.py` does the same with PyTorch and CuPy.

use crate::runtime::buffer::Buffer;
use crate::runtime::device::Gpu;
use crate::runtime::enqueue;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::memory::{Footprint, check_fits};
use crate::runtime::pinned::PinnedBuffer;
use crate::runtime::stats::{Stats, require_gpu};
use crate::runtime::stream::Stream;
use crate::runtime::timer::{Event, Timer};
use serde::Serialize;

/// Default copy sizes: one of the tutorial's arrays (10⁷ floats) and ten of them.
pub const DEFAULT_SIZES: [usize; 2] = [40_000_000, 400_000_000];

/// Which way a copy goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Host to device.
    HostToDevice,
    /// Device to host.
    DeviceToHost,
    /// One copy each way at the same time, on two streams.
    Both,
}

impl Direction {
    /// `H→D`, `D→H`, `both`.
    pub const fn label(self) -> &'static str {
        match self {
            Direction::HostToDevice => "H→D",
            Direction::DeviceToHost => "D→H",
            Direction::Both => "both",
        }
    }
}

/// One measured copy.
#[derive(Clone, Debug, Serialize)]
pub struct Transfer {
    /// Which way.
    pub direction: Direction,
    /// Page-locked host memory (else pageable).
    pub pinned: bool,
    /// Bytes per copy (each way, for [`Direction::Both`]).
    pub bytes: usize,
    /// Milliseconds per copy (per pair, for both).
    pub ms: Stats,
    /// Bytes moved per second at the median, in GB/s (10⁹; both directions' bytes for both).
    pub gb_per_s: f64,
}

/// The transfer benchmark's result.
#[derive(Clone, Debug, Serialize)]
pub struct TransferBench {
    /// The device.
    pub device: String,
    /// Every copy measured.
    pub transfers: Vec<Transfer>,
}

impl TransferBench {
    /// The median bandwidth of one kind of copy at the largest size measured.
    pub fn gbps(&self, direction: Direction, pinned: bool) -> Option<f64> {
        self.transfers
            .iter()
            .filter(|t| t.direction == direction && t.pinned == pinned)
            .max_by_key(|t| t.bytes)
            .map(|t| t.gb_per_s)
    }
}

/// Host memory of either kind.
enum Host<'g> {
    Pinned(PinnedBuffer<'g, u8>),
    Pageable(Vec<u8>),
}

impl Host<'_> {
    fn ptr(&mut self) -> *mut u8 {
        match self {
            Host::Pinned(p) => p.as_mut_ptr(),
            Host::Pageable(v) => v.as_mut_ptr(),
        }
    }
}

/// Queues one copy of `bytes` on `stream`.
///
/// # Safety
/// `host` and `dev` hold `bytes` bytes and outlive the copy (the caller synchronizes).
unsafe fn copy(
    (gpu, stream): (&Gpu, &Stream),
    dir: Direction,
    host: *mut u8,
    dev: &Buffer<u8>,
    bytes: usize,
) -> Result<()> {
    // SAFETY: forwarded to the caller.
    unsafe {
        let host = std::slice::from_raw_parts_mut(host, bytes);
        match dir {
            Direction::DeviceToHost => enqueue::device_to_host(gpu, stream, dev, 0, host),
            _ => enqueue::host_to_device(gpu, stream, host, dev, 0),
        }
    }
}

/// Median milliseconds of `trials` copies of `bytes` one way (after a warm-up).
fn one_way(
    target: &Target,
    gpu: &Gpu,
    dir: Direction,
    pinned: bool,
    bytes: usize,
    trials: u32,
) -> Result<Transfer> {
    let target_dev = target.zeros::<u8>(bytes)?;
    let mut host = if pinned {
        Host::Pinned(PinnedBuffer::new(gpu, bytes, 1u8)?)
    } else {
        Host::Pageable(vec![1u8; bytes])
    };
    let stream = Stream::new()?;
    let mut timer = Timer::new()?;
    let p = host.ptr();
    let mut ms = Vec::new();
    for t in 0..=trials {
        // SAFETY: `p` and the device buffer hold `bytes` bytes; `time` synchronizes.
        let x = timer.time(&stream, || unsafe {
            copy((gpu, &stream), dir, p, &target_dev, bytes)
        })?;
        if t > 0 {
            ms.push(x as f64);
        }
    }
    let stats = Stats::of(&ms)?;
    Ok(Transfer {
        direction: dir,
        pinned,
        bytes,
        ms: stats,
        gb_per_s: bytes as f64 / (stats.median * 1e6),
    })
}

/// A copy in and a copy out of `bytes` each, on two streams at once; the pair's time runs from
/// the earlier start to the later end.
fn both_ways(
    target: &Target,
    gpu: &Gpu,
    pinned: bool,
    bytes: usize,
    trials: u32,
) -> Result<Transfer> {
    let dev_in = target.zeros::<u8>(bytes)?;
    let dev_out = target.zeros::<u8>(bytes)?;
    let (mut h_in, mut h_out) = if pinned {
        (
            Host::Pinned(PinnedBuffer::new(gpu, bytes, 1u8)?),
            Host::Pinned(PinnedBuffer::new(gpu, bytes, 0u8)?),
        )
    } else {
        (
            Host::Pageable(vec![1u8; bytes]),
            Host::Pageable(vec![0u8; bytes]),
        )
    };
    let (s_in, s_out) = (Stream::new()?, Stream::new()?);
    let ev: Vec<Event> = (0..4).map(|_| Event::new()).collect::<Result<_>>()?;
    let (p_in, p_out) = (h_in.ptr(), h_out.ptr());
    let mut ms = Vec::new();
    for t in 0..=trials {
        ev[0].record(&s_in)?;
        ev[1].record(&s_out)?;
        // SAFETY: every buffer holds `bytes` bytes and outlives the copies, which are
        // synchronized below before the next trial or the drop.
        unsafe {
            copy((gpu, &s_in), Direction::HostToDevice, p_in, &dev_in, bytes)?;
            copy(
                (gpu, &s_out),
                Direction::DeviceToHost,
                p_out,
                &dev_out,
                bytes,
            )?;
        }
        ev[2].record(&s_in)?;
        ev[3].record(&s_out)?;
        s_in.synchronize()?;
        s_out.synchronize()?;
        let start = ev[0].elapsed_ms_since(&ev[1])?.min(0.0); // ev0 − ev1, ≤ 0 if ev0 first
        let end_in = ev[2].elapsed_ms_since(&ev[1])?;
        let end_out = ev[3].elapsed_ms_since(&ev[1])?;
        if t > 0 {
            ms.push((end_in.max(end_out) - start) as f64);
        }
    }
    let stats = Stats::of(&ms)?;
    Ok(Transfer {
        direction: Direction::Both,
        pinned,
        bytes,
        ms: stats,
        gb_per_s: 2.0 * bytes as f64 / (stats.median * 1e6),
    })
}

/// Measures every direction, pinned and pageable, at each size in `sizes` (bytes).
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for no sizes, a zero size
/// or zero trials, or buffers that do not fit; a driver error.
pub fn run(
    target: &Target,
    sizes: &[usize],
    trials: u32,
    mut progress: impl FnMut(u32, u32),
) -> Result<TransferBench> {
    let gpu = require_gpu(target)?;
    if sizes.is_empty() || sizes.contains(&0) || trials == 0 {
        return Err(Error::InvalidInput(
            "transfer sizes and the trial count must be positive".into(),
        ));
    }
    // Both ways at once: two buffers of the largest size on each side.
    let largest = *sizes.iter().max().unwrap_or(&0) as u64;
    check_fits(
        target,
        &format!("--bytes {largest}"),
        Footprint::per_element(largest, 2, 2),
    )?;
    let steps = (sizes.len() * 6) as u32;
    let mut transfers = Vec::new();
    for &bytes in sizes {
        for pinned in [true, false] {
            for dir in [Direction::HostToDevice, Direction::DeviceToHost] {
                transfers.push(one_way(target, gpu, dir, pinned, bytes, trials)?);
                progress(transfers.len() as u32, steps);
            }
            transfers.push(both_ways(target, gpu, pinned, bytes, trials)?);
            progress(transfers.len() as u32, steps);
        }
    }
    Ok(TransferBench {
        device: target.describe(),
        transfers,
    })
}
