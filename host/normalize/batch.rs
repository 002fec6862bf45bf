//! [`Normalizer`]: many arrays normalized on several streams, each step bracketed by events.
//!
//! Two schedules, each array's steps bracketed by five events (`begin`, `copied_in`, `computed`,
//! `copy_out`, `end`):
//!
//! ```text
//! PerStream (the tutorial's example 3.7, buffers allocated once): array i, all on stream i mod K
//!   begin ─ copy in ─ copied_in ─ kernels ─ computed ─ copy_out ─ sum, copy out ─ end
//!
//! Staged (the default): one stream copies in, K streams compute, one stream copies out
//!   copy-in stream:   [wait: end of array i−K, whose device buffer this reuses]
//!                     begin ─ copy in ─ copied_in
//!   stream i mod K:   [wait: copied_in] kernels ─ computed
//!   copy-out stream:  [wait: computed] copy_out ─ sum, copy out ─ end
//! ```
//!
//! The total is the source's: from the first array's `begin` to the latest `end`.
//!
//! **Why staged.** The bus is the bottleneck (10 × 40 MB each way at 55 GB/s per direction on the
//! H200 measured), so the best schedule keeps both directions busy from the moment the
//! first array is in until the last one is out. Per stream, the copies of all streams start at
//! once and share the bus: every array arrives late, so its kernels and its copy back start
//! late too. Staged, the copies in run one after another at full speed, the first array is back
//! on its way out while the second comes in, and the events are honest: a copy's `begin` is
//! recorded when its stream reaches it, which is when the bus is its own, so the timeline's bars
//! show when copies ran, not when they were queued. `docs/perf-notes.md` has the measurements,
//! including a third schedule that was tried and dropped (per-stream copies chained with
//! cross-stream waits: the driver serialized pairs of streams).

use super::Pipeline;
use super::lane::{Grids, Lane};
use crate::runtime::enqueue;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::pinned::{PinnedBuffer, is_pinned};
use crate::runtime::stream::Stream;
use crate::runtime::timer::Event;
use serde::Serialize;
use std::time::Instant;

/// How the steps of different arrays are spread over streams.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// One stream copies in, `streams` streams run the kernels (array `i` on `i mod streams`, in
    /// its own device buffer), one stream copies out; events order the stages.
    #[default]
    Staged,
    /// Array `i` entirely on stream `i mod streams`: copy in, kernels, copy out — what the
    /// tutorial does.
    PerStream,
}

impl Schedule {
    /// Both.
    pub const ALL: [Schedule; 2] = [Schedule::Staged, Schedule::PerStream];

    /// `staged` or `per-stream`, as the CLI spells it.
    pub const fn label(self) -> &'static str {
        match self {
            Schedule::Staged => "staged",
            Schedule::PerStream => "per-stream",
        }
    }
}

impl std::str::FromStr for Schedule {
    type Err = Error;
    fn from_str(s: &str) -> Result<Schedule> {
        crate::runtime::error::parse_label(&Schedule::ALL, Schedule::label, "schedule", s)
    }
}

/// How a batch runs.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct BatchOptions {
    /// Streams (and device buffers); array `i` runs on stream `i mod streams`. At least 1.
    pub streams: usize,
    /// The kernels.
    pub pipeline: Pipeline,
    /// How the arrays' steps are spread over the streams.
    pub schedule: Schedule,
}

impl Default for BatchOptions {
    /// Three streams (buffers), the single-pass pipeline, staged.
    fn default() -> BatchOptions {
        BatchOptions {
            streams: 3,
            pipeline: Pipeline::SinglePass,
            schedule: Schedule::Staged,
        }
    }
}

/// One array's result.
#[derive(Clone, Debug, Serialize)]
pub struct ArrayResult {
    /// Elements.
    pub len: usize,
    /// Its sum before normalizing, as the device computed it (an `f32` widened, for the source
    /// pipeline).
    pub sum: f64,
    /// Whether the host memory was page-locked (copies asynchronous).
    pub pinned: bool,
    /// When its steps happened (GPU only).
    pub timing: Option<ArrayTiming>,
}

/// One array's events, in milliseconds since the batch's first `begin` event.
#[derive(Clone, Debug, Serialize)]
pub struct ArrayTiming {
    /// The stream it ran on.
    pub stream: usize,
    /// Its copy in started.
    pub begin_ms: f64,
    /// Its copy in finished; the kernels started.
    pub copied_in_ms: f64,
    /// Its kernels (and the 8-byte copy of its sum) finished.
    pub computed_ms: f64,
    /// Its copy out started.
    pub copy_out_ms: f64,
    /// Its copy out finished.
    pub end_ms: f64,
    /// Host wall-clock milliseconds spent issuing its work (large when copies are synchronous).
    pub issue_ms: f64,
}

impl ArrayTiming {
    /// The copy in's duration.
    pub fn copy_in(&self) -> f64 {
        self.copied_in_ms - self.begin_ms
    }
    /// The kernels' duration.
    pub fn kernels(&self) -> f64 {
        self.computed_ms - self.copied_in_ms
    }
    /// The copy out's duration.
    pub fn copy_out(&self) -> f64 {
        self.end_ms - self.copy_out_ms
    }
}

/// One stream's span.
#[derive(Clone, Debug, Serialize)]
pub struct StreamTiming {
    /// Its index.
    pub stream: usize,
    /// The arrays it ran.
    pub arrays: Vec<usize>,
    /// Its first `begin`.
    pub begin_ms: f64,
    /// Its last `end`.
    pub end_ms: f64,
}

/// The batch's timing (GPU only).
#[derive(Clone, Debug, Serialize)]
pub struct BatchTiming {
    /// First `begin` to latest `end`: the tutorial's total.
    pub total_ms: f64,
    /// The array whose `end` came last (the tutorial's "last stream").
    pub last_array: usize,
    /// Every stream's span.
    pub streams: Vec<StreamTiming>,
    /// Σ of every array's copy in, kernels and copy out: the total with no overlap at all.
    pub serial_ms: f64,
    /// `1 − total / serial`: the fraction of the work's time hidden by running it concurrently.
    pub overlap: f64,
    /// Σ copy-in time.
    pub copy_in_ms: f64,
    /// Σ kernel time.
    pub kernels_ms: f64,
    /// Σ copy-out time.
    pub copy_out_ms: f64,
    /// Bytes copied in per second of copy-in time, in GB/s (10⁹).
    pub h2d_gbps: f64,
    /// Bytes copied out per second of copy-out time, in GB/s.
    pub d2h_gbps: f64,
    /// Host wall-clock milliseconds from the first issue to the end of the synchronization.
    pub host_ms: f64,
}

/// A batch's results.
#[derive(Clone, Debug, Serialize)]
pub struct BatchReport {
    /// How it ran.
    pub options: BatchOptions,
    /// Per array, in the order given.
    pub arrays: Vec<ArrayResult>,
    /// The events' story (`None` on the simulator).
    pub timing: Option<BatchTiming>,
}

/// Every array's events and the batch's summary of them.
type Timings = (Vec<ArrayTiming>, BatchTiming);

const BEGIN: usize = 0;
const COPIED_IN: usize = 1;
const COMPUTED: usize = 2;
const COPY_OUT: usize = 3;
const END: usize = 4;

/// Synchronizes every stream when dropped, so that no copy into a caller's array is still in
/// flight when an error returns early.
struct SyncOnDrop<'a>(&'a [Stream]);

impl Drop for SyncOnDrop<'_> {
    fn drop(&mut self) {
        for s in self.0 {
            // An error was already returned, or is returned by the explicit synchronization.
            let _ = s.synchronize();
        }
    }
}

/// Normalizes batches of arrays of up to a fixed length on a fixed number of streams; its device
/// memory, streams, events and pinned scratch are allocated once and reused by every batch.
pub struct Normalizer<'t> {
    target: &'t Target,
    options: BatchOptions,
    capacity: usize,
    lanes: Vec<Lane>,
    streams: Vec<Stream>,
    events: Vec<[Event; 5]>,
    sums: Option<PinnedBuffer<'t, u64>>,
}

impl<'t> Normalizer<'t> {
    /// Allocates `options.streams` streams, each with a device array of `capacity` floats.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for zero streams or capacity, or if the arrays do not fit in the
    /// GPU's free memory; a driver error.
    pub fn new(
        target: &'t Target,
        capacity: usize,
        options: BatchOptions,
    ) -> Result<Normalizer<'t>> {
        if options.streams == 0 || capacity == 0 {
            return Err(Error::InvalidInput(format!(
                "a normalizer needs at least one stream and one element (got {} streams of {capacity})",
                options.streams
            )));
        }
        let bytes = (options.streams as u64).saturating_mul((capacity as u64).saturating_mul(4));
        if let Target::Gpu(gpu) = target
            && let Some(why) = crate::runtime::memory::does_not_fit(gpu, bytes)?
        {
            return Err(Error::InvalidInput(format!(
                "{} streams × {capacity} floats: {why}; use fewer streams",
                options.streams
            )));
        }
        let grids = Grids::of(target)?;
        let (lanes, streams) = match target {
            Target::Gpu(_) => (
                (0..options.streams)
                    .map(|_| Lane::new(target, capacity, grids))
                    .collect::<Result<_>>()?,
                // The compute streams, then the staged schedule's copy-in and copy-out streams.
                (0..options.streams + 2)
                    .map(|_| Stream::new())
                    .collect::<Result<_>>()?,
            ),
            // The simulator runs one array at a time, in a buffer of its own length.
            Target::Sim => (vec![Lane::new(target, 0, grids)?], Vec::new()),
        };
        Ok(Normalizer {
            target,
            options,
            capacity,
            lanes,
            streams,
            events: Vec::new(),
            sums: None,
        })
    }

    /// The longest array it takes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Normalizes every array in place and reports each one's sum and, on a GPU, its events.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if there are no arrays, or one is empty or longer than the
    /// capacity (before anything runs), or if some array's sum is zero, infinite or NaN (those
    /// arrays are left unchanged, the others normalized); a driver error. Every copy has finished
    /// when this returns, with or without an error.
    pub fn run(&mut self, arrays: &mut [&mut [f32]]) -> Result<BatchReport> {
        if arrays.is_empty() {
            return Err(Error::InvalidInput("no arrays to normalize".into()));
        }
        for (i, a) in arrays.iter().enumerate() {
            if a.is_empty() {
                return Err(Error::InvalidInput(format!(
                    "array {i} is empty: its sum is 0, and dividing by it is undefined"
                )));
            }
            if a.len() > self.capacity {
                return Err(Error::InvalidInput(format!(
                    "array {i} has {} elements, more than this normalizer's {}",
                    a.len(),
                    self.capacity
                )));
            }
        }
        let (sums, timing) = match self.target {
            Target::Sim => (self.run_sim(arrays)?, None),
            Target::Gpu(gpu) => {
                let (sums, timing) = self.run_gpu(gpu, arrays)?;
                (sums, Some(timing))
            }
        };
        let results: Vec<ArrayResult> = arrays
            .iter()
            .zip(&sums)
            .enumerate()
            .map(|(i, (a, &sum))| ArrayResult {
                len: a.len(),
                sum,
                pinned: self.target.is_sim() || is_pinned(a),
                timing: timing.as_ref().map(|(t, _)| t[i].clone()),
            })
            .collect();
        let bad: Vec<String> = results
            .iter()
            .enumerate()
            .filter(|(_, r)| !gpu::lessons::normalize::usable_divisor(r.sum))
            .map(|(i, r)| format!("array {i} sums to {}", r.sum))
            .collect();
        if !bad.is_empty() {
            return Err(Error::InvalidInput(format!(
                "{}: such an array cannot be normalized and was left unchanged",
                bad.join(", ")
            )));
        }
        Ok(BatchReport {
            options: self.options,
            arrays: results,
            timing: timing.map(|(_, b)| b),
        })
    }

    /// The simulator: one array after another, through buffers of their own length.
    fn run_sim(&mut self, arrays: &mut [&mut [f32]]) -> Result<Vec<f64>> {
        let (target, lane, pipeline) = (self.target, &self.lanes[0], self.options.pipeline);
        let mut sums = Vec::with_capacity(arrays.len());
        for a in arrays.iter_mut() {
            let buf = target.upload(a)?;
            lane.queue(target, None, pipeline, &buf, a.len())?;
            a.copy_from_slice(&target.download(&buf)?);
            sums.push(Lane::decode_sum(pipeline, target.download(&lane.sum)?[0]));
        }
        Ok(sums)
    }

    /// The GPU: everything queued on the streams, then one synchronization.
    fn run_gpu(
        &mut self,
        gpu: &'t crate::Gpu,
        arrays: &mut [&mut [f32]],
    ) -> Result<(Vec<f64>, Timings)> {
        gpu.make_current()?;
        while self.events.len() < arrays.len() {
            self.events.push([
                Event::new()?,
                Event::new()?,
                Event::new()?,
                Event::new()?,
                Event::new()?,
            ]);
        }
        if self.sums.as_ref().is_none_or(|s| s.len() < arrays.len()) {
            self.sums = Some(PinnedBuffer::new(gpu, arrays.len(), 0u64)?);
        }
        let sums_ptr = self
            .sums
            .as_mut()
            .map_or(std::ptr::null_mut(), |s| s.as_mut_ptr());
        let k = self.lanes.len();
        let (target, pipeline, schedule) =
            (self.target, self.options.pipeline, self.options.schedule);
        // The copy streams of the staged schedule follow the `k` compute streams.
        let (copy_in, copy_out) = (&self.streams[k], &self.streams[k + 1]);
        let mut issue_ms = Vec::with_capacity(arrays.len());
        let start = Instant::now();
        {
            let _sync = SyncOnDrop(&self.streams);
            // ANCHOR: schedule
            for (i, a) in arrays.iter_mut().enumerate() {
                let t = Instant::now();
                let (compute, lane, ev) =
                    (&self.streams[i % k], &self.lanes[i % k], &self.events[i]);
                let (s_in, s_out) = match schedule {
                    Schedule::PerStream => (compute, compute),
                    Schedule::Staged => (copy_in, copy_out),
                };
                if schedule == Schedule::Staged && i >= k {
                    // The device buffer is the one array `i - k` used: wait until it is out.
                    s_in.wait_event(&self.events[i - k][END])?;
                }
                ev[BEGIN].record(s_in)?;
                // SAFETY: `a` is borrowed for the whole call and every stream is synchronized
                // (by `_sync`, even on an error) before it returns, so the copy never outlives
                // the memory; no other array's work touches the lane's buffer until this
                // array's `end` (stream order, or the wait above).
                unsafe { enqueue::host_to_device(gpu, s_in, a, &lane.data, 0)? };
                ev[COPIED_IN].record(s_in)?;
                if s_in.as_raw() != compute.as_raw() {
                    compute.wait_event(&ev[COPIED_IN])?;
                }
                if let Err(e) = lane.queue(target, Some(compute), pipeline, &lane.data, a.len()) {
                    let _ = compute.synchronize();
                    let _ = lane.reset(target);
                    return Err(e);
                }
                ev[COMPUTED].record(compute)?;
                if s_out.as_raw() != compute.as_raw() {
                    s_out.wait_event(&ev[COMPUTED])?;
                }
                ev[COPY_OUT].record(s_out)?;
                // ANCHOR_END: schedule
                // SAFETY: `sums` holds at least `arrays.len()` words, pinned, owned by `self`
                // (not reallocated during the batch) and read only after synchronization, each
                // word by one copy; the lane's sum is written before `computed`, which this
                // stream has reached.
                unsafe {
                    let sum = std::slice::from_raw_parts_mut(sums_ptr.add(i), 1);
                    enqueue::device_to_host(gpu, s_out, &lane.sum, 0, sum)?;
                }
                // SAFETY: as the copy in; the device array holds the normalized `a.len()` floats
                // once `computed` is reached.
                unsafe { enqueue::device_to_host(gpu, s_out, &lane.data, 0, a)? };
                ev[END].record(s_out)?;
                issue_ms.push(t.elapsed().as_secs_f64() * 1e3);
            }
            for s in &self.streams {
                s.synchronize()?;
            }
        }
        let host_ms = start.elapsed().as_secs_f64() * 1e3;
        let sums_host = self.sums.as_deref().unwrap_or(&[]);
        let sums = (0..arrays.len())
            .map(|i| Lane::decode_sum(pipeline, sums_host[i]))
            .collect();
        let timing = self.timings(arrays, &issue_ms, host_ms)?;
        Ok((sums, timing))
    }

    /// Reads every event against the first `begin`.
    fn timings(&self, arrays: &[&mut [f32]], issue_ms: &[f64], host_ms: f64) -> Result<Timings> {
        let k = self.lanes.len();
        let origin = &self.events[0][BEGIN];
        let at = |e: &Event| -> Result<f64> { Ok(e.elapsed_ms_since(origin)? as f64) };
        let mut per_array = Vec::with_capacity(arrays.len());
        for (i, ev) in self.events[..arrays.len()].iter().enumerate() {
            per_array.push(ArrayTiming {
                stream: i % k,
                begin_ms: at(&ev[BEGIN])?,
                copied_in_ms: at(&ev[COPIED_IN])?,
                computed_ms: at(&ev[COMPUTED])?,
                copy_out_ms: at(&ev[COPY_OUT])?,
                end_ms: at(&ev[END])?,
                issue_ms: issue_ms[i],
            });
        }
        let (last_array, total_ms) =
            per_array
                .iter()
                .map(|t| t.end_ms)
                .enumerate()
                .fold(
                    (0, f64::MIN),
                    |best, (i, e)| if e > best.1 { (i, e) } else { best },
                );
        let streams = (0..k.min(arrays.len()))
            .map(|s| {
                let mine: Vec<usize> = (s..arrays.len()).step_by(k).collect();
                StreamTiming {
                    stream: s,
                    begin_ms: mine
                        .iter()
                        .map(|&i| per_array[i].begin_ms)
                        .fold(f64::MAX, f64::min),
                    end_ms: mine
                        .iter()
                        .map(|&i| per_array[i].end_ms)
                        .fold(f64::MIN, f64::max),
                    arrays: mine,
                }
            })
            .collect();
        let sum_of = |f: fn(&ArrayTiming) -> f64| per_array.iter().map(f).sum::<f64>();
        let (copy_in_ms, kernels_ms, copy_out_ms) = (
            sum_of(ArrayTiming::copy_in),
            sum_of(ArrayTiming::kernels),
            sum_of(ArrayTiming::copy_out),
        );
        let serial_ms = copy_in_ms + kernels_ms + copy_out_ms;
        let bytes: f64 = arrays.iter().map(|a| a.len() as f64 * 4.0).sum();
        let gbps = |ms: f64| {
            if ms > 0.0 {
                bytes / (ms * 1e6)
            } else {
                f64::NAN
            }
        };
        let batch = BatchTiming {
            total_ms,
            last_array,
            streams,
            serial_ms,
            overlap: if serial_ms > 0.0 {
                1.0 - total_ms / serial_ms
            } else {
                0.0
            },
            copy_in_ms,
            kernels_ms,
            copy_out_ms,
            h2d_gbps: gbps(copy_in_ms),
            d2h_gbps: gbps(copy_out_ms),
            host_ms,
        };
        Ok((per_array, batch))
    }
}

/// Normalizes every array in place on `options.streams` streams (at most one per array) and
/// reports each one's sum and events; allocates what it needs for this one call (reuse a
/// [`Normalizer`] to allocate once).
///
/// Pass pinned arrays ([`PinnedBuffer`]) for the copies to overlap; pageable ones work, but
/// their copies hold the host and so serialize ([`ArrayResult::pinned`] says which was which).
///
/// # Errors
/// As [`Normalizer::new`] and [`Normalizer::run`].
pub fn normalize_batch(
    target: &Target,
    arrays: &mut [&mut [f32]],
    options: &BatchOptions,
) -> Result<BatchReport> {
    let capacity = arrays.iter().map(|a| a.len()).max().unwrap_or(0).max(1);
    let options = BatchOptions {
        streams: options.streams.min(arrays.len().max(1)),
        ..*options
    };
    Normalizer::new(target, capacity, options)?.run(arrays)
}
