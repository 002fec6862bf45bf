//! One rank of a launched job: its GPU, its connections to the other ranks and its combiner —
//! then the same plans as a [`DeviceSet`] of one process ([`ReducePlan`], [`HistogramPlan`],
//! [`CountPlan`]) over this rank's slice, combined across the ranks.
//!
//! Each rank holds (or reads, or makes) only its slice of the input: elements
//! [`split`]`(len, world)[rank]`, so the slices of the ranks in rank order are the input, as the
//! slices of a one-process set's devices are. A file is read by byte range at an offset: no
//! rank reads the whole file.
//!
//! ```no_run
//! # fn main() -> gridsync::Result<()> {
//! use gridsync::multi::ranks::{RankOptions, discover};
//! use gridsync::multi::world::{JoinOptions, World};
//! use gridsync::multi::{Op, ReducePlan, Scattered};
//! use gridsync::gpu::lessons::reduce::SumF32InF64;
//! // Under torchrun, srun, mpirun or `gridsync launch`: who am I, which GPU, the communicator.
//! let rank = discover(&RankOptions::default())?;
//! let world = World::join(rank, &JoinOptions::default())?;
//! // My slice of a 10⁹-element input, on my GPU.
//! let mine = world.slice(1_000_000_000);
//! let x: Vec<f32> = mine.clone().map(|i| (i % 7) as f32).collect();
//! let on_gpu = Scattered::zeros(world.set(), x.len())?;
//! on_gpu.copy_from(world.set(), &x)?;
//! // The one-process plan, combined across the ranks: every rank gets the whole sum.
//! let plan = ReducePlan::<SumF32InF64>::new(world.set(), &on_gpu, Op::Sum)?;
//! let total = plan.run(world.combiner())?;
//! # let _ = total; Ok(()) }
//! ```

use super::combine::{Combiner, Op};
use super::ranks::{DEFAULT_RENDEZVOUS_TIMEOUT, Links, Rank};
use super::{
    CountPlan, DeviceList, DeviceSet, HistogramPlan, ReducePlan, Scattered, WideHistogramPlan,
    split,
};
use crate::histogram::wide::{BINS as WIDE_BINS, histogram_u16_cpu};
use crate::histogram::{Bins, histogram_cpu, uniform_bytes_range};
use crate::inputs::{
    is_raw_f32, parse_raw_f32, parse_raw_u16, uniform_f32_range, uniform_u16_range,
};
use crate::reduce::DeviceReduction;
use crate::runtime::error::{Error, Result};
use gpu::lessons::reduce::{MaxF32, MinF32, SumF32InF64};
use serde::Serialize;
use std::io::{Read, Seek, SeekFrom};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How a rank joins its job ([`World::join`]).
#[derive(Clone, Debug)]
pub struct JoinOptions {
    /// This rank's GPU; `None`: the local rank's.
    pub device: Option<u32>,
    /// A simulator instead of a GPU.
    pub simulate: bool,
    /// The bound on the rendezvous, NCCL's set-up, and every later exchange and collective.
    pub timeout: Duration,
    /// Combine on the hosts over the links even where every rank has NCCL.
    pub host_combine: bool,
}

impl Default for JoinOptions {
    /// The local rank's GPU, a 60 s bound ([`DEFAULT_RENDEZVOUS_TIMEOUT`]), NCCL where every
    /// rank has it.
    fn default() -> JoinOptions {
        JoinOptions {
            device: None,
            simulate: false,
            timeout: DEFAULT_RENDEZVOUS_TIMEOUT,
            host_combine: false,
        }
    }
}

/// One rank of a launched job, joined: its device, its links to the other ranks, its combiner.
#[derive(Debug)]
pub struct World {
    rank: Rank,
    // Dropped in this order: the communicator before the device whose context it uses.
    combiner: Combiner,
    links: Arc<Links>,
    set: DeviceSet,
}

impl World {
    /// Joins `rank`'s job: the rendezvous (bounded by `opts.timeout`, which then bounds every
    /// exchange and NCCL's set-up), then this rank's device — GPU `opts.device`, else the local
    /// rank's; a simulator with `opts.simulate` — then the combiner every rank agrees on (NCCL
    /// where every rank has it and `opts.host_combine` is off, else the host combine over the
    /// links).
    ///
    /// Every rank checks that every rank opened its device: a rank whose GPU is missing makes
    /// every rank fail at once, each saying which rank.
    ///
    /// # Errors
    /// The rendezvous's errors; a device that cannot be opened (on the rank, naming it; on the
    /// others, naming that rank); an NCCL error.
    pub fn join(rank: Rank, opts: &JoinOptions) -> Result<World> {
        let JoinOptions {
            device,
            simulate,
            timeout,
            host_combine,
        } = *opts;
        let links = Arc::new(Links::open(&rank, timeout)?);
        let ordinal = device.unwrap_or(rank.local_rank);
        let opened = DeviceSet::open(&DeviceList::Ordinals(vec![ordinal]), simulate).map_err(|e| {
            let which = match device {
                Some(_) => format!("--device {ordinal}"),
                None => format!("GPU {ordinal} (its local rank)"),
            };
            Error::InvalidInput(format!(
                "rank {} cannot open {which}: {e} — give each rank a GPU of its node (--device, \
                 or as many ranks per node as GPUs)",
                rank.rank
            ))
        });
        let failed = if opened.is_ok() {
            u64::MAX
        } else {
            u64::from(rank.rank)
        };
        let first_failed = links.all_reduce(&[failed], Op::Min)?;
        let set = match (opened, first_failed.first()) {
            (Err(e), _) => return Err(e),
            (Ok(_), Some(&r)) if r != u64::MAX => {
                return Err(Error::InvalidInput(format!(
                    "rank {r} could not open its device (its own output says why); rank {} stops \
                     with it",
                    rank.rank
                )));
            }
            (Ok(set), _) => set,
        };
        let combiner = Combiner::for_ranks(&set, links.clone(), host_combine)?;
        Ok(World {
            rank,
            set,
            links,
            combiner,
        })
    }

    /// This rank.
    pub fn rank(&self) -> &Rank {
        &self.rank
    }

    /// This rank's device, as a set of one: what the plans take.
    pub fn set(&self) -> &DeviceSet {
        &self.set
    }

    /// The connections to the other ranks (broadcasts, host-side combines, barriers).
    pub fn links(&self) -> &Links {
        &self.links
    }

    /// How partials combine across the ranks: what the plans' `run` takes.
    pub fn combiner(&self) -> &Combiner {
        &self.combiner
    }

    /// This rank's slice of `0..len`: `split(len, world)[rank]`.
    pub fn slice(&self, len: usize) -> Range<usize> {
        slice_of(len, &self.rank)
    }

    /// Every rank's `value`, in rank order, on every rank (a combine of one-hot rows: for
    /// reports, not for data).
    ///
    /// # Errors
    /// As [`Links::all_reduce`].
    pub fn gather(&self, value: f64) -> Result<Vec<f64>> {
        let mut row = vec![0.0; self.rank.world as usize];
        row[self.rank.rank as usize] = value;
        self.links.all_reduce(&row, Op::Sum)
    }
}

fn slice_of(len: usize, rank: &Rank) -> Range<usize> {
    split(len, rank.world as usize)[rank.rank as usize].clone()
}

/// Where a rank's input comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RankInput {
    /// The generated input of `gridsync multi` (seed [`super::report::SEED`]) of this many
    /// elements; each rank makes only its slice.
    Generated(usize),
    /// A file every rank can read (a shared file system, or a copy on each node): bytes for
    /// the histogram, raw little-endian `f32` (`.f32`, `.bin`) for the others. Each rank reads
    /// only its byte range.
    File(PathBuf),
}

/// The elements of a file of `bytes` bytes holding items of `size` bytes.
fn file_elements(path: &Path, size: usize) -> Result<usize> {
    let bytes = std::fs::metadata(path)
        .map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?
        .len();
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
    crate::runtime::memory::check_host("this rank's byte range", len)?;
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
    pub op: super::report::MultiOp,
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

/// Runs `op` as one rank of `world`: this rank's slice of `input` onto its device, the plans
/// run `repeats` times each (after a warm-up) and combined across the ranks, every result
/// checked on every rank against the CPU's result of the same slices combined over the links
/// (exactly for integers, min and max; within the `f64` bound for sums). `bins` is for the
/// histogram (128, 256, or 65 536 over 16-bit values), `threshold` for count-above.
///
/// # Errors
/// [`Error::Mismatch`] if a result differs from the CPU's; [`Error::InvalidInput`] for a file
/// that cannot be cut into ranges (text floats, a length not a whole number of floats) or
/// whose size the ranks disagree on; a device, link or NCCL error.
pub fn run(
    world: &World,
    op: super::report::MultiOp,
    input: &RankInput,
    bins: u32,
    threshold: f32,
    repeats: u32,
) -> Result<RankReport> {
    use super::report::{MultiOp, SEED};
    let wide = op == MultiOp::Histogram && bins as usize == WIDE_BINS;
    let byte_bins = match (op, wide) {
        (MultiOp::Histogram, false) => Some(Bins::from_count(bins).map_err(|_| {
            Error::InvalidInput(format!(
                "{bins} bins: 128 (ASCII bytes), 256 (bytes) or 65536 (16-bit values)"
            ))
        })?),
        _ => None,
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
    // Every rank must cut the same input: a rank that sees another file stops the job.
    let lens = world
        .links
        .all_reduce(&[len as u64, u64::MAX - len as u64], Op::Max)?;
    if lens[0] != len as u64 || u64::MAX - lens[1] != len as u64 {
        return Err(Error::InvalidInput(format!(
            "the ranks see inputs of different lengths (this rank {len}; from {} to {}): the \
             same --len, or the same file on every node?",
            u64::MAX - lens[1],
            lens[0]
        )));
    }
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
    let mut report = RankReport {
        op,
        world: world.rank.world,
        source: world.rank.source,
        device: world.set.describe(),
        combine: world.combiner.describe(),
        input: match input {
            RankInput::Generated(_) => format!("generated, seed {SEED:#x}"),
            RankInput::File(p) => p.display().to_string(),
        },
        len,
        slices: split(len, world.rank.world as usize)
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
    };
    let bytes_total = len * size;
    match op {
        MultiOp::Histogram if wide => {
            let data: Vec<u16> = match raw {
                Some(b) => parse_raw_u16(&b).map_err(Error::InvalidInput)?,
                None => uniform_u16_range(mine, SEED),
            };
            let want = world.links.all_reduce(&histogram_u16_cpu(&data), Op::Sum)?;
            let x = Scattered::<u16>::zeros(&world.set, data.len())?;
            x.copy_from(&world.set, &data)?;
            drop(data);
            let plan = WideHistogramPlan::new(&world.set, &x)?;
            let (row, got) = histogram_row(world, "values", bytes_total, repeats, &want, || {
                plan.run(&world.combiner)
            })?;
            report.rows.push(row);
            report.bins = Some(got);
        }
        MultiOp::Histogram => {
            let bins = byte_bins.unwrap_or(Bins::Byte);
            let data = match raw {
                Some(b) => b,
                None => uniform_bytes_range(mine, SEED),
            };
            let want = world
                .links
                .all_reduce(&histogram_cpu(&data, bins), Op::Sum)?;
            let x = Scattered::<u8>::zeros(&world.set, data.len())?;
            x.copy_from(&world.set, &data)?;
            drop(data);
            let plan = HistogramPlan::new(&world.set, &x, bins)?;
            let (row, got) = histogram_row(world, "bytes", bytes_total, repeats, &want, || {
                plan.run(&world.combiner)
            })?;
            report.rows.push(row);
            report.bins = Some(got);
        }
        MultiOp::CountAbove | MultiOp::Reduce => {
            let data: Vec<f32> = match raw {
                Some(b) => parse_raw_f32(&b).map_err(Error::InvalidInput)?,
                None if op == MultiOp::Reduce => uniform_f32_range(mine, SEED, -1.0, 1.0),
                None => uniform_f32_range(mine, SEED, 0.0, 1.0),
            };
            let x = Scattered::<f32>::zeros(&world.set, data.len())?;
            x.copy_from(&world.set, &data)?;
            if op == MultiOp::CountAbove {
                let local = crate::count_above::count_above_cpu(&data, threshold);
                drop(data);
                let want = world.links.all_reduce(&[local], Op::Sum)?[0];
                let plan = CountPlan::new(&world.set, &x, threshold)?;
                let (row, got) = timed(world, "count_above", bytes_total, repeats, || {
                    let c = plan.run(&world.combiner)?;
                    if c != want {
                        return Err(Error::Mismatch(format!(
                            "rank {}: count {c}, CPU {want}",
                            world.rank.rank
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
            } else {
                let local = [
                    crate::reduce::sum_cpu(&data),
                    crate::reduce::sum_abs_cpu(&data),
                ];
                let lo = data.iter().copied().fold(f32::NAN, f32::min);
                let hi = data.iter().copied().fold(f32::NAN, f32::max);
                drop(data);
                let sums = world.links.all_reduce(&local, Op::Sum)?;
                let (want_sum, abs) = (sums[0], sums[1]);
                let want_min = world.links.all_reduce(&[lo], Op::Min)?[0];
                let want_max = world.links.all_reduce(&[hi], Op::Max)?[0];
                let bound = super::sum_bound(abs, world.rank.world as usize);
                let who = world.rank.rank;
                let plan = ReducePlan::<SumF32InF64>::new(&world.set, &x, Op::Sum)?;
                let (row, s) = timed(world, "sum", bytes_total, repeats, || {
                    let s = plan.run(&world.combiner)?;
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
                let (row, m) =
                    extreme_row::<MinF32>(world, &x, Op::Min, want_min, bytes_total, repeats)?;
                report.rows.push(row);
                report.min = Some(m);
                let (row, m) =
                    extreme_row::<MaxF32>(world, &x, Op::Max, want_max, bytes_total, repeats)?;
                report.rows.push(row);
                report.max = Some(m);
            }
        }
    }
    Ok(report)
}

/// The timed row of a histogram whose plan `run` gives the bins, each run checked against the
/// CPU's `want`; `unit` names what is counted.
fn histogram_row(
    world: &World,
    unit: &str,
    bytes: usize,
    repeats: u32,
    want: &[u64],
    run: impl Fn() -> Result<Vec<u64>>,
) -> Result<(RankRow, Vec<u64>)> {
    let (row, got) = timed(world, "histogram", bytes, repeats, || {
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
    bytes: usize,
    repeats: u32,
) -> Result<(RankRow, f32)> {
    let name = if op == Op::Min { "min" } else { "max" };
    let plan = ReducePlan::<R>::new(&world.set, x, op)?;
    let (row, m) = timed(world, name, bytes, repeats, || {
        let m = plan.run(&world.combiner)?;
        if m != want && !(m.is_nan() && want.is_nan()) {
            return Err(Error::Mismatch(format!(
                "rank {}: {name} {m}, CPU {want}",
                world.rank.rank
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
    if got == want {
        return Ok(());
    }
    let b = (0..got.len().max(want.len()))
        .find(|&b| got.get(b) != want.get(b))
        .unwrap_or(0);
    Err(Error::Mismatch(format!(
        "rank {}: bin {b} = {:?}, CPU {:?}",
        world.rank.rank,
        got.get(b),
        want.get(b)
    )))
}

/// Runs `call` once to warm up, then `repeats` times, every rank lined up by a barrier before
/// each; returns the row (each rank's median, the slowest) and the last result.
fn timed<R>(
    world: &World,
    op: &'static str,
    bytes: usize,
    repeats: u32,
    call: impl Fn() -> Result<R>,
) -> Result<(RankRow, R)> {
    let mut last = call()?;
    let mut ms = Vec::new();
    for _ in 0..repeats.max(1) {
        world.links.barrier()?;
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
            gb_per_s: bytes as f64 / (slowest.max(f64::MIN_POSITIVE) * 1e6),
        },
        last,
    ))
}
