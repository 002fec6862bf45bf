//! `gridsync multi reduce|histogram|count-above --ranks`: the operation as one rank of a
//! launched job — this rank's slice of the input onto its GPU, the library's plans run and
//! combined across the ranks ([`World`]), every result checked on every rank against the CPU's.
//! A file is read by byte range at an offset: no rank reads the whole file.

use super::MultiOp;
use gpu::lessons::reduce::{MaxF32, MinF32, SumF32InF64};
use gridsync::count_above::count_above_cpu;
use gridsync::histogram::wide::{BINS as WIDE_BINS, histogram_u16_cpu};
use gridsync::histogram::{Bins, first_difference, histogram_cpu, uniform_bytes_range};
use gridsync::inputs::{
    MULTI_SEED, is_raw_f32, parse_raw_f32, parse_raw_u16, uniform_f32_range, uniform_u16_range,
};
use gridsync::multi::processes::World;
use gridsync::multi::{
    CountPlan, HistogramPlan, Op, ReducePlan, Scattered, WideHistogramPlan, split, sum_bound,
};
use gridsync::reduce::{DeviceReduction, max_cpu, min_cpu, sum_abs_cpu, sum_cpu};
use gridsync::runtime::buffer::Plain;
use gridsync::{Error, Result};
use serde::Serialize;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Where a rank's input comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RankInput {
    /// The generated input of `gridsync multi` (seed [`MULTI_SEED`]) of this many
    /// elements; each rank makes only its slice.
    Generated(usize),
    /// A file every rank can read (a shared file system, or a copy on each node): bytes for
    /// the histogram, raw little-endian `f32` (`.f32`, `.bin`) for the others. Each rank reads
    /// only its byte range.
    File(PathBuf),
}

/// The elements of a file of `bytes` bytes holding items of `size` bytes.
fn file_elements(path: &Path, size: usize) -> Result<usize> {
    let bytes = gridsync::runtime::memory::file_len(path)?;
    if size == 4 && !is_raw_f32(path) {
        return Err(Error::InvalidInput(format!(
            "{}: ranks read raw little-endian f32 files (.f32 or .bin) by byte range; a text \
             file cannot be cut by bytes (write it with numpy's tofile)",
            path.display()
        )));
    }
    // Every rank checks the whole file's length, not only its own range: a last, partial value
    // is refused as the single process refuses it, never dropped by the byte ranges.
    if bytes % size as u64 != 0 {
        return Err(Error::InvalidInput(format!(
            "{}: {bytes} bytes is not a whole number of {size}-byte values",
            path.display()
        )));
    }
    usize::try_from(bytes / size as u64)
        .map_err(|_| Error::InvalidInput(format!("{}: too large", path.display())))
}

/// Bytes `range` of `path` (the range checked against the file first).
pub fn read_range(path: &Path, range: Range<u64>) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let len = range.end.saturating_sub(range.start);
    gridsync::runtime::memory::check_host("this rank's byte range", len)?;
    let mut f = std::fs::File::open(path).map_err(io)?;
    let size = f.metadata().map_err(io)?.len();
    if range.end > size {
        return Err(Error::InvalidInput(format!(
            "{}: bytes {}..{} asked of a file of {size} (did it change while the job ran?)",
            path.display(),
            range.start,
            range.end
        )));
    }
    let n = usize::try_from(len)
        .map_err(|_| Error::InvalidInput(format!("{}: a range too large", path.display())))?;
    let mut out = vec![0u8; n];
    f.seek(SeekFrom::Start(range.start)).map_err(io)?;
    f.read_exact(&mut out).map_err(io)?;
    Ok(out)
}

/// One timed operation of a [`RankReport`].
#[derive(Clone, Debug, Serialize)]
pub struct RankRow {
    /// `sum`, `min`, `max`, `count_above` or `histogram`.
    pub op: &'static str,
    /// The result every rank got, as text.
    pub result: String,
    /// The CPU's (each rank's slice on its host, combined over the links), as text.
    pub expected: String,
    /// Each rank's median ms of the whole call (its kernel, the combine, the result on the
    /// host), input already on the GPUs, the ranks lined up by a barrier before each run.
    pub ms_per_rank: Vec<f64>,
    /// The slowest rank's median: the job's time.
    pub ms: f64,
    /// GB/s of input at `ms`.
    pub gb_per_s: f64,
}

/// What one rank's run found, the same on every rank.
#[derive(Clone, Debug, Serialize)]
pub struct RankReport {
    /// The operation.
    pub op: MultiOp,
    /// Ranks in the job.
    pub world: u32,
    /// Which convention gave the ranks (`options`, `torchrun`, `slurm`, `openmpi`).
    pub source: &'static str,
    /// This rank's device (rank 0's in the printed report).
    pub device: String,
    /// How the partials were combined.
    pub combine: String,
    /// The generated input's seed, or the file.
    pub input: String,
    /// Elements of the whole input (floats, or bytes for the histogram).
    pub len: usize,
    /// Elements of each rank's slice.
    pub slices: Vec<usize>,
    /// Bytes each rank read from the file (0 for a generated input).
    pub bytes_read: Vec<u64>,
    /// The timed operations.
    pub rows: Vec<RankRow>,
    /// Σ (reduce).
    pub sum: Option<f64>,
    /// The smallest (reduce; NaN for no elements, `null` in JSON).
    pub min: Option<f32>,
    /// The largest (reduce).
    pub max: Option<f32>,
    /// Elements above the threshold (count-above).
    pub count: Option<u64>,
    /// The bins (histogram).
    pub bins: Option<Vec<u64>>,
}

/// This rank's part of the input, and how the runs are timed.
struct Slice {
    /// The bytes read from the file (`None`: the generated input).
    raw: Option<Vec<u8>>,
    /// This rank's elements.
    mine: Range<usize>,
    /// Bytes of the whole input, for GB/s.
    bytes_total: usize,
    /// Timed runs of each operation.
    repeats: u32,
}

/// Runs `op` as one rank of `world`: this rank's slice of `input` onto its device, the plans
/// run `repeats` times each (after a warm-up) and combined across the ranks, every result
/// checked on every rank against the CPU's result of the same slices combined over the links
/// (exactly for integers, min and max; within the `f64` bound for sums). `bins` is for the
/// histogram (128, 256, or 65 536 over 16-bit values), `threshold` for count-above.
///
/// # Errors
/// [`Error::Mismatch`] if a result differs from the CPU's; [`Error::InvalidInput`] for a file
/// that cannot be cut into ranges (text floats, a length not a whole number of floats) or
/// whose size the ranks disagree on, and for lock and barrier; a device, link or NCCL error.
pub fn run(
    world: &World,
    op: MultiOp,
    input: &RankInput,
    bins: u32,
    threshold: f32,
    repeats: u32,
) -> Result<RankReport> {
    let wide = op == MultiOp::Histogram && bins as usize == WIDE_BINS;
    let byte_bins = match (op, wide) {
        (MultiOp::Histogram, false) => Bins::from_count(bins).map_err(|_| {
            Error::InvalidInput(format!(
                "{bins} bins: 128 (ASCII bytes), 256 (bytes) or 65536 (16-bit values)"
            ))
        })?,
        _ => Bins::Byte,
    };
    let size = match (op, wide) {
        (MultiOp::Histogram, true) => 2,
        (MultiOp::Histogram, false) => 1,
        _ => 4,
    };
    let len = match input {
        RankInput::Generated(n) => *n,
        RankInput::File(p) => file_elements(p, size)?,
    };
    same_length(world, len)?;
    let mine = world.slice(len);
    let (raw, read) = match input {
        RankInput::Generated(_) => (None, 0),
        RankInput::File(p) => {
            let r = (mine.start * size) as u64..(mine.end * size) as u64;
            let bytes = read_range(p, r)?;
            let n = bytes.len() as u64;
            (Some(bytes), n)
        }
    };
    let mut report = header(world, op, input, len, read)?;
    let slice = Slice {
        raw,
        mine,
        bytes_total: len * size,
        repeats,
    };
    match op {
        MultiOp::Histogram if wide => wide_histogram(world, slice, &mut report)?,
        MultiOp::Histogram => byte_histogram(world, slice, byte_bins, &mut report)?,
        MultiOp::CountAbove => count(world, slice, threshold, &mut report)?,
        MultiOp::Reduce => reduce(world, slice, &mut report)?,
        MultiOp::Lock | MultiOp::Barrier => return Err(super::not_data(op)),
    }
    Ok(report)
}

/// Every rank must cut the same input: a rank that sees another file stops the job.
fn same_length(world: &World, len: usize) -> Result<()> {
    let lens = world
        .links()
        .all_reduce(&[len as u64, u64::MAX - len as u64], Op::Max)?;
    if lens[0] != len as u64 || u64::MAX - lens[1] != len as u64 {
        return Err(Error::InvalidInput(format!(
            "the ranks see inputs of different lengths (this rank {len}; from {} to {}): the \
             same --len, or the same file on every node?",
            u64::MAX - lens[1],
            lens[0]
        )));
    }
    Ok(())
}

/// The report without its rows: the job, the input, and the bytes each rank `read`.
fn header(
    world: &World,
    op: MultiOp,
    input: &RankInput,
    len: usize,
    read: u64,
) -> Result<RankReport> {
    let me = world.rank();
    Ok(RankReport {
        op,
        world: me.world,
        source: me.source,
        device: world.set().describe(),
        combine: world.combiner().describe(),
        input: match input {
            RankInput::Generated(_) => format!("generated, seed {MULTI_SEED:#x}"),
            RankInput::File(p) => p.display().to_string(),
        },
        len,
        slices: split(len, me.world as usize)
            .iter()
            .map(Range::len)
            .collect(),
        bytes_read: world
            .gather(read as f64)?
            .into_iter()
            .map(|b| b as u64)
            .collect(),
        rows: Vec::new(),
        sum: None,
        min: None,
        max: None,
        count: None,
        bins: None,
    })
}

/// The histogram of 65 536 bins over 16-bit values.
fn wide_histogram(world: &World, mut slice: Slice, report: &mut RankReport) -> Result<()> {
    let data: Vec<u16> = match slice.raw.take() {
        Some(b) => parse_raw_u16(&b).map_err(Error::InvalidInput)?,
        None => uniform_u16_range(slice.mine.clone(), MULTI_SEED),
    };
    let want = world
        .links()
        .all_reduce(&histogram_u16_cpu(&data), Op::Sum)?;
    let x = on_devices(world, &data)?;
    drop(data);
    let plan = WideHistogramPlan::new(world.set(), &x)?;
    let (row, got) = histogram_row(world, "values", &slice, &want, || {
        plan.run(world.combiner())
    })?;
    report.rows.push(row);
    report.bins = Some(got);
    Ok(())
}

/// The histogram of bytes, in `bins`.
fn byte_histogram(
    world: &World,
    mut slice: Slice,
    bins: Bins,
    report: &mut RankReport,
) -> Result<()> {
    let data = match slice.raw.take() {
        Some(b) => b,
        None => uniform_bytes_range(slice.mine.clone(), MULTI_SEED),
    };
    let want = world
        .links()
        .all_reduce(&histogram_cpu(&data, bins), Op::Sum)?;
    let x = on_devices(world, &data)?;
    drop(data);
    let plan = HistogramPlan::new(world.set(), &x, bins)?;
    let (row, got) = histogram_row(world, "bytes", &slice, &want, || plan.run(world.combiner()))?;
    report.rows.push(row);
    report.bins = Some(got);
    Ok(())
}

/// `data` on this rank's devices, a slice each, copied from `data` as it is.
fn on_devices<T: Plain>(world: &World, data: &[T]) -> Result<Scattered<T>> {
    let x = Scattered::zeros(world.set(), data.len())?;
    x.copy_from(world.set(), data)?;
    Ok(x)
}

/// This rank's floats: read from the file, or generated in `[lo, hi)`.
fn floats(slice: &mut Slice, lo: f32, hi: f32) -> Result<Vec<f32>> {
    match slice.raw.take() {
        Some(b) => parse_raw_f32(&b).map_err(Error::InvalidInput),
        None => Ok(uniform_f32_range(slice.mine.clone(), MULTI_SEED, lo, hi)),
    }
}

/// The floats above `threshold`.
fn count(world: &World, mut slice: Slice, threshold: f32, report: &mut RankReport) -> Result<()> {
    let data = floats(&mut slice, 0.0, 1.0)?;
    let x = on_devices(world, &data)?;
    let local = count_above_cpu(&data, threshold);
    drop(data);
    let want = world.links().all_reduce(&[local], Op::Sum)?[0];
    let plan = CountPlan::new(world.set(), &x, threshold)?;
    let (row, got) = timed(world, "count_above", &slice, || {
        let c = plan.run(world.combiner())?;
        if c != want {
            return Err(Error::Mismatch(format!(
                "rank {}: count {c}, CPU {want}",
                world.rank().rank
            )));
        }
        Ok(c)
    })?;
    report.rows.push(RankRow {
        result: format!("{got} above {threshold}"),
        expected: format!("{want}"),
        ..row
    });
    report.count = Some(got);
    Ok(())
}

/// Σ (within [`sum_bound`]), min and max (exactly).
fn reduce(world: &World, mut slice: Slice, report: &mut RankReport) -> Result<()> {
    let data = floats(&mut slice, -1.0, 1.0)?;
    let x = on_devices(world, &data)?;
    let local = [sum_cpu(&data), sum_abs_cpu(&data)];
    let lo = min_cpu(&data).unwrap_or(f32::NAN);
    let hi = max_cpu(&data).unwrap_or(f32::NAN);
    drop(data);
    let links = world.links();
    let sums = links.all_reduce(&local, Op::Sum)?;
    let (want_sum, abs) = (sums[0], sums[1]);
    let want_min = links.all_reduce(&[lo], Op::Min)?[0];
    let want_max = links.all_reduce(&[hi], Op::Max)?[0];
    let who = world.rank().rank;
    let bound = sum_bound(abs, world.rank().world as usize);
    let plan = ReducePlan::<SumF32InF64>::new(world.set(), &x, Op::Sum)?;
    let (row, s) = timed(world, "sum", &slice, || {
        let s = plan.run(world.combiner())?;
        if (s - want_sum).abs() > bound || s.is_nan() != want_sum.is_nan() {
            return Err(Error::Mismatch(format!(
                "rank {who}: Σ {s}, CPU {want_sum} (bound {bound:.3e})"
            )));
        }
        Ok(s)
    })?;
    report.rows.push(RankRow {
        result: format!("{s:.9e}"),
        expected: format!("{want_sum:.9e} (bound {bound:.1e})"),
        ..row
    });
    report.sum = Some(s);
    let (row, m) = extreme_row::<MinF32>(world, &x, Op::Min, want_min, &slice)?;
    report.rows.push(row);
    report.min = Some(m);
    let (row, m) = extreme_row::<MaxF32>(world, &x, Op::Max, want_max, &slice)?;
    report.rows.push(row);
    report.max = Some(m);
    Ok(())
}

/// The timed row of a histogram whose plan `run` gives the bins, each run checked against the
/// CPU's `want`; `unit` names what is counted.
fn histogram_row(
    world: &World,
    unit: &str,
    slice: &Slice,
    want: &[u64],
    run: impl Fn() -> Result<Vec<u64>>,
) -> Result<(RankRow, Vec<u64>)> {
    let (row, got) = timed(world, "histogram", slice, || {
        let h = run()?;
        same_bins(world, &h, want)?;
        Ok(h)
    })?;
    let total: u64 = got.iter().sum();
    let row = RankRow {
        result: format!("{} bins, {total} {unit} counted", got.len()),
        expected: format!("{} bins, equal", want.len()),
        ..row
    };
    Ok((row, got))
}

/// The timed row of the minimum or maximum `R` of `x` (`op` says which), each run checked
/// against the CPU's `want` exactly (NaN for no number on either side).
fn extreme_row<R: DeviceReduction<Item = f32, Out = f32>>(
    world: &World,
    x: &Scattered<f32>,
    op: Op,
    want: f32,
    slice: &Slice,
) -> Result<(RankRow, f32)> {
    let name = if op == Op::Min { "min" } else { "max" };
    let plan = ReducePlan::<R>::new(world.set(), x, op)?;
    let (row, m) = timed(world, name, slice, || {
        let m = plan.run(world.combiner())?;
        if m != want && !(m.is_nan() && want.is_nan()) {
            return Err(Error::Mismatch(format!(
                "rank {}: {name} {m}, CPU {want}",
                world.rank().rank
            )));
        }
        Ok(m)
    })?;
    let row = RankRow {
        result: format!("{m}"),
        expected: format!("{want}"),
        ..row
    };
    Ok((row, m))
}

/// `got` against the CPU's bins, naming the first that differs.
fn same_bins(world: &World, got: &[u64], want: &[u64]) -> Result<()> {
    let Some(b) = first_difference(got, want) else {
        return Ok(());
    };
    Err(Error::Mismatch(format!(
        "rank {}: bin {b} = {:?}, CPU {:?}",
        world.rank().rank,
        got.get(b),
        want.get(b)
    )))
}

/// Runs `call` once to warm up, then `repeats` times, every rank lined up by a barrier before
/// each; returns the row (each rank's median, the slowest) and the last result.
fn timed<R>(
    world: &World,
    op: &'static str,
    slice: &Slice,
    call: impl Fn() -> Result<R>,
) -> Result<(RankRow, R)> {
    let mut last = call()?;
    let mut ms = Vec::new();
    for _ in 0..slice.repeats.max(1) {
        world.links().barrier()?;
        let t = Instant::now();
        last = call()?;
        ms.push(t.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    let ms_per_rank = world.gather(ms[ms.len() / 2])?;
    let slowest = ms_per_rank.iter().copied().fold(0.0, f64::max);
    Ok((
        RankRow {
            op,
            result: String::new(),
            expected: String::new(),
            ms_per_rank,
            ms: slowest,
            gb_per_s: slice.bytes_total as f64 / (slowest.max(f64::MIN_POSITIVE) * 1e6),
        },
        last,
    ))
}
