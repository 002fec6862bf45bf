//! `gridsync bench transfer`: host↔device copy bandwidth, from pinned and from pageable memory,
//! one direction at a time and both at once — what bounds any pipeline that streams arrays
//! through the GPU (`gridsync streams`).
//!
//! Every copy is `cuMemcpyHtoDAsync` / `cuMemcpyDtoHAsync` on a non-blocking stream, timed by
//! events on that stream; "both" queues a copy in on one stream and a copy out on another at
//! once, and times the pair from the earlier start event to the later end event. Reference:
//! `scripts/reference_streams.py` does the same with PyTorch and CuPy.

use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::device::Gpu;
use crate::runtime::enqueue;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::memory::{Footprint, check_fits};
use crate::runtime::pinned::{PinnedBuffer, is_pinned};
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
    /// For [`Direction::Both`]: when each direction's copy ended, from the pair's start.
    pub ends: Option<Ends>,
}

/// When each copy of a pair run at once ended, in milliseconds from the pair's start (medians
/// over the trials).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Ends {
    /// The copy in's end.
    pub in_ms: f64,
    /// The copy out's end.
    pub out_ms: f64,
}

/// Each direction's rate while the other one runs, in GB/s, from a pair of `bytes` copies that
/// started together and ended at `ends`, and the rates of each direction alone.
///
/// The copy that ends first ran beside the other all along: its rate is its bytes over its
/// time. The later one ran beside it until then and alone after, at its lone rate; what it
/// moved alone is taken off its bytes. `None` when the times do not fit that (a lone rate
/// slower than the pair's share, or no time at all).
pub fn concurrent_gbps(
    bytes: usize,
    ends: Ends,
    alone_in_gbps: f64,
    alone_out_gbps: f64,
) -> Option<(f64, f64)> {
    let b = bytes as f64;
    // GB/s = bytes / (ms · 10⁶).
    let first = ends.in_ms.min(ends.out_ms);
    let later = |end: f64, alone: f64| (b - alone * 1e6 * (end - first)) / (first * 1e6);
    let (r_in, r_out) = if ends.in_ms <= ends.out_ms {
        (b / (first * 1e6), later(ends.out_ms, alone_out_gbps))
    } else {
        (later(ends.in_ms, alone_in_gbps), b / (first * 1e6))
    };
    (first > 0.0 && r_in > 0.0 && r_out > 0.0 && r_in.is_finite() && r_out.is_finite())
        .then_some((r_in, r_out))
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
        self.largest(direction, pinned).map(|t| t.gb_per_s)
    }

    /// Each direction's rate while the other runs (GB/s: in, out), at the largest size
    /// measured: [`concurrent_gbps`] of the pair and the lone copies.
    pub fn concurrent_gbps(&self, pinned: bool) -> Option<(f64, f64)> {
        let both = self.largest(Direction::Both, pinned)?;
        concurrent_gbps(
            both.bytes,
            both.ends?,
            self.gbps(Direction::HostToDevice, pinned)?,
            self.gbps(Direction::DeviceToHost, pinned)?,
        )
    }

    fn largest(&self, direction: Direction, pinned: bool) -> Option<&Transfer> {
        self.transfers
            .iter()
            .filter(|t| t.direction == direction && t.pinned == pinned)
            .max_by_key(|t| t.bytes)
    }
}

/// Host memory of either kind.
enum Host<'g> {
    Pinned(PinnedBuffer<'g, u8>),
    Pageable(Vec<u8>),
}

impl Host<'_> {
    fn new<'g>(gpu: &'g Gpu, pinned: bool, bytes: usize, value: u8) -> Result<Host<'g>> {
        Ok(if pinned {
            Host::Pinned(PinnedBuffer::new(gpu, bytes, value)?)
        } else {
            Host::Pageable(vec![value; bytes])
        })
    }

    fn bytes(&mut self) -> &mut [u8] {
        match self {
            Host::Pinned(p) => p,
            Host::Pageable(v) => v,
        }
    }
}

/// Queues one copy between all of `host` and the start of `dev` on `stream`.
///
/// # Safety
/// `host` stays where it is, neither read nor written by the host, until the copy is
/// synchronized (the caller does so before the borrow ends).
unsafe fn copy<T: Plain>(
    (gpu, stream): (&Gpu, &Stream),
    dir: Direction,
    host: &mut [T],
    dev: &Buffer<T>,
) -> Result<()> {
    // SAFETY: forwarded to the caller.
    unsafe {
        match dir {
            Direction::DeviceToHost => enqueue::device_to_host(gpu, stream, dev, 0, host),
            _ => enqueue::host_to_device(gpu, stream, host, dev, 0),
        }
    }
}

/// Median milliseconds of `trials` copies of `host` one way (after a warm-up).
fn one_way<T: Plain>(
    target: &Target,
    gpu: &Gpu,
    dir: Direction,
    (host, pinned): (&mut [T], bool),
    trials: u32,
) -> Result<Transfer> {
    let bytes = std::mem::size_of_val(host);
    let dev = target.zeros::<T>(host.len())?;
    let stream = Stream::new()?;
    let mut timer = Timer::new()?;
    let mut ms = Vec::new();
    for t in 0..=trials {
        // SAFETY: `time` synchronizes the stream before it returns.
        let x = timer.time(&stream, || unsafe { copy((gpu, &stream), dir, host, &dev) })?;
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
        ends: None,
    })
}

/// A copy in of `h_in` and a copy out into `h_out` (of the same length), on two streams at
/// once; the pair's time runs from the earlier start to the later end.
fn both_ways<T: Plain>(
    target: &Target,
    gpu: &Gpu,
    (h_in, h_out, pinned): (&mut [T], &mut [T], bool),
    trials: u32,
) -> Result<Transfer> {
    let bytes = std::mem::size_of_val(h_in);
    let dev_in = target.zeros::<T>(h_in.len())?;
    let dev_out = target.zeros::<T>(h_out.len())?;
    let (s_in, s_out) = (Stream::new()?, Stream::new()?);
    let ev: Vec<Event> = (0..4).map(|_| Event::new()).collect::<Result<_>>()?;
    let (mut ms, mut ins, mut outs) = (Vec::new(), Vec::new(), Vec::new());
    for t in 0..=trials {
        ev[0].record(&s_in)?;
        ev[1].record(&s_out)?;
        // SAFETY: both streams are synchronized below, before the next trial or the return.
        unsafe {
            copy((gpu, &s_in), Direction::HostToDevice, h_in, &dev_in)?;
            copy((gpu, &s_out), Direction::DeviceToHost, h_out, &dev_out)?;
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
            ins.push((end_in - start) as f64);
            outs.push((end_out - start) as f64);
        }
    }
    let stats = Stats::of(&ms)?;
    Ok(Transfer {
        direction: Direction::Both,
        pinned,
        bytes,
        ms: stats,
        gb_per_s: 2.0 * bytes as f64 / (stats.median * 1e6),
        ends: Some(Ends {
            in_ms: Stats::of(&ins)?.median,
            out_ms: Stats::of(&outs)?.median,
        }),
    })
}

/// The pinned copies — in, out, and both at once — measured with the caller's own page-locked
/// host memory: `h_in` is copied in, `h_out` copied over from the device (its contents are
/// lost). A pipeline's bound is best measured on the very host buffers it streams, since
/// where the page-locked memory lies (which CPU socket's memory) moves the bus rate.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for empty or unequal
/// buffers, zero trials, or host memory that is not page-locked; a driver error.
pub fn pinned_rates<T: Plain>(
    target: &Target,
    h_in: &mut [T],
    h_out: &mut [T],
    trials: u32,
) -> Result<TransferBench> {
    let gpu = require_gpu(target)?;
    gpu.make_current()?;
    if h_in.is_empty() || h_in.len() != h_out.len() || trials == 0 {
        return Err(Error::InvalidInput(
            "the copies need two host buffers of the same positive length and a trial".into(),
        ));
    }
    if !is_pinned(h_in) || !is_pinned(h_out) {
        return Err(Error::InvalidInput(
            "the pinned rates need page-locked host memory".into(),
        ));
    }
    let mut transfers = Vec::new();
    each_way(target, gpu, (h_in, h_out, true), trials, |t| {
        transfers.push(t)
    })?;
    Ok(TransferBench {
        device: target.describe(),
        transfers,
    })
}

/// The copies of a whole many-stream pipeline with its kernels left out: array `i` copied in
/// and straight back out on stream `i mod streams`, into a device buffer per stream (stream
/// order keeps array `i + streams` off the buffer until array `i` is out), every stream started
/// together. Milliseconds from the first copy's start to the last copy's end, over `trials`
/// runs after one warm-up.
///
/// This is what the bus gives that schedule's copies: a pipeline on as many streams only adds
/// its kernels and their dependencies, so no run of it can end earlier (beyond noise). One pair
/// of copies (`both` of [`pinned_rates`]) does not measure that: the copy engines overlap many
/// streams' copies in each direction more than one copy each way shows.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for no arrays, arrays of
/// different or zero length, zero streams or trials, or host memory that is not page-locked
/// (pageable copies would run one after another); a driver error.
pub fn streamed_copies<T: Plain>(
    target: &Target,
    arrays: &mut [&mut [T]],
    streams: usize,
    trials: u32,
) -> Result<Stats> {
    require_gpu(target)?;
    let len = arrays.first().map_or(0, |a| a.len());
    if streams == 0 || trials == 0 {
        return Err(Error::InvalidInput(SHAPE.into()));
    }
    check_arrays(arrays, len)?;
    let copies = StreamedCopies::new(target, len, streams.min(arrays.len()))?;
    copies.time(arrays)?;
    let ms = (0..trials)
        .map(|_| copies.time(arrays))
        .collect::<Result<Vec<_>>>()?;
    Stats::of(&ms)
}

/// The copies of [`streamed_copies`] made ready once (a device buffer, a stream and an end
/// event per stream) and timed pass by pass: for a caller that times them between other work,
/// with nothing allocated or warmed up again in between.
pub struct StreamedCopies<'t, T: Plain> {
    gpu: &'t Gpu,
    device: Vec<Buffer<T>>,
    lanes: Vec<Stream>,
    start: Event,
    ends: Vec<Event>,
}

impl<'t, T: Plain> StreamedCopies<'t, T> {
    /// A device buffer of `len` elements, a stream and an end event for each of `streams`.
    ///
    /// # Errors
    /// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for a zero length or
    /// zero streams; a driver error (out of device memory among them).
    pub fn new(target: &'t Target, len: usize, streams: usize) -> Result<Self> {
        let gpu = require_gpu(target)?;
        gpu.make_current()?;
        if len == 0 || streams == 0 {
            return Err(Error::InvalidInput(SHAPE.into()));
        }
        Ok(StreamedCopies {
            gpu,
            device: (0..streams)
                .map(|_| target.zeros::<T>(len))
                .collect::<Result<_>>()?,
            lanes: (0..streams).map(|_| Stream::new()).collect::<Result<_>>()?,
            start: Event::new()?,
            ends: (0..streams).map(|_| Event::new()).collect::<Result<_>>()?,
        })
    }

    /// One pass: array `i` copied in and straight back out on stream `i mod streams`, every
    /// stream started together. Milliseconds from the first copy's start to the last copy's
    /// end.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for no arrays, an array of another length than the buffers', or
    /// host memory that is not page-locked; a driver error.
    pub fn time(&self, arrays: &mut [&mut [T]]) -> Result<f64> {
        check_arrays(arrays, self.device[0].len())?;
        self.gpu.make_current()?;
        let (lanes, k) = (&self.lanes, self.lanes.len());
        self.start.record(&lanes[0])?;
        for lane in &lanes[1..] {
            lane.wait_event(&self.start)?;
        }
        let queued = (|| -> Result<()> {
            for (i, a) in arrays.iter_mut().enumerate() {
                let (lane, dev) = (&lanes[i % k], &self.device[i % k]);
                // SAFETY: every stream is synchronized below, before the arrays are touched
                // again or the call returns (also after an error here); on one stream the copy
                // out of array `i` follows its copy in, and array `i + k`'s copy in follows both.
                unsafe {
                    copy((self.gpu, lane), Direction::HostToDevice, a, dev)?;
                    copy((self.gpu, lane), Direction::DeviceToHost, a, dev)?;
                }
            }
            for (lane, end) in lanes.iter().zip(&self.ends) {
                end.record(lane)?;
            }
            Ok(())
        })();
        for lane in lanes {
            lane.synchronize()?;
        }
        queued?;
        let mut last = 0f64;
        for end in &self.ends {
            last = last.max(end.elapsed_ms_since(&self.start)? as f64);
        }
        Ok(last)
    }
}

/// What [`streamed_copies`] refuses: no arrays, arrays of different or zero length, zero
/// streams or trials.
const SHAPE: &str = "the streamed copies need arrays of one positive length, a stream and a trial";

/// Arrays [`StreamedCopies`] can take: at least one, all of `len` (positive) elements, all
/// page-locked (pageable copies would run one after another).
fn check_arrays<T: Plain>(arrays: &[&mut [T]], len: usize) -> Result<()> {
    if len == 0 || arrays.is_empty() || arrays.iter().any(|a| a.len() != len) {
        return Err(Error::InvalidInput(SHAPE.into()));
    }
    if arrays.iter().any(|a| !is_pinned(a)) {
        return Err(Error::InvalidInput(
            "the streamed copies need page-locked host memory".into(),
        ));
    }
    Ok(())
}

/// The copies in, out and both at once, from pageable host memory of their own: [`run`] for
/// one size and pageable memory only (what a caller that measured its own pinned memory with
/// [`pinned_rates`] still lacks).
///
/// # Errors
/// As [`run`].
pub fn pageable_rates(target: &Target, bytes: usize, trials: u32) -> Result<TransferBench> {
    run_kinds(target, &[bytes], trials, &[false], |_, _| {})
}

/// The three measurements of one kind of host memory: `h_in` copied in, `h_out` copied over
/// from the device, then both at once; each handed to `done` as it is made.
fn each_way<T: Plain>(
    target: &Target,
    gpu: &Gpu,
    (h_in, h_out, pinned): (&mut [T], &mut [T], bool),
    trials: u32,
    mut done: impl FnMut(Transfer),
) -> Result<()> {
    done(one_way(
        target,
        gpu,
        Direction::HostToDevice,
        (&mut *h_in, pinned),
        trials,
    )?);
    done(one_way(
        target,
        gpu,
        Direction::DeviceToHost,
        (&mut *h_out, pinned),
        trials,
    )?);
    done(both_ways(target, gpu, (h_in, h_out, pinned), trials)?);
    Ok(())
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
    progress: impl FnMut(u32, u32),
) -> Result<TransferBench> {
    run_kinds(target, sizes, trials, &[true, false], progress)
}

/// [`run`] for the kinds of host memory in `kinds` (`true`: pinned).
fn run_kinds(
    target: &Target,
    sizes: &[usize],
    trials: u32,
    kinds: &[bool],
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
    let steps = (sizes.len() * kinds.len() * 3) as u32;
    let mut transfers = Vec::new();
    for &bytes in sizes {
        for &pinned in kinds {
            let mut h_in = Host::new(gpu, pinned, bytes, 1)?;
            let mut h_out = Host::new(gpu, pinned, bytes, 0)?;
            let pair = (h_in.bytes(), h_out.bytes(), pinned);
            each_way(target, gpu, pair, trials, |t| {
                transfers.push(t);
                progress(transfers.len() as u32, steps);
            })?;
        }
    }
    Ok(TransferBench {
        device: target.describe(),
        transfers,
    })
}
