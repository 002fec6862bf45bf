//! `bench multi`: one GPU against every GPU of the node, for 10⁹-float sums and counts and a
//! 4 GiB byte histogram — with the input already on the devices, and with it starting in
//! pinned host memory — the combine step alone, and the host links' bound.

use super::fill::{fill_bytes, fill_floats};
use super::{Stats, require_gpu};
use gpu::lessons::reduce::SumF32InF64;
use gridsync::histogram::Bins;
use gridsync::multi::{
    Combiner, CountPlan, DeviceList, DeviceSet, HistogramPlan, Op, ReducePlan, Scattered, split,
};
use gridsync::runtime::copy;
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use gridsync::runtime::pinned::PinnedBuffer;
use serde::Serialize;
use std::time::Instant;

/// Floats of the sum and the count.
pub const DEFAULT_FLOATS: usize = 1_000_000_000;
/// Bytes of the histogram.
pub const DEFAULT_BYTES: usize = 4 << 30;

/// What [`run`] measures.
#[derive(Clone, Debug)]
pub struct MultiBenchOptions {
    /// The devices of the "all" side (the one-GPU side is the first of them).
    pub devices: DeviceList,
    /// Floats of the sum and the count.
    pub floats: usize,
    /// Bytes of the histogram.
    pub bytes: usize,
    /// Timed runs per cell.
    pub trials: u32,
    /// Combine with peer copies even where NCCL is installed.
    pub peer_copies: bool,
    /// Host threads filling the staging buffers of the uploads, in all
    /// ([`DeviceSet::set_copiers`]); `None`: the host's cores.
    pub copiers: Option<usize>,
}

impl Default for MultiBenchOptions {
    fn default() -> MultiBenchOptions {
        MultiBenchOptions {
            devices: DeviceList::All,
            floats: DEFAULT_FLOATS,
            bytes: DEFAULT_BYTES,
            trials: 10,
            peer_copies: false,
            copiers: None,
        }
    }
}

/// One operation on one set of devices.
#[derive(Clone, Debug, Serialize)]
pub struct MultiRow {
    /// `sum`, `count_above` or `histogram`.
    pub op: &'static str,
    /// Devices used.
    pub devices: usize,
    /// Bytes of input.
    pub bytes: usize,
    /// Input already on the devices: whole call (kernels, combine, result to the host), ms.
    pub resident_ms: Stats,
    /// Its throughput, GB/s of input.
    pub resident_gb_per_s: f64,
    /// The combine step alone (partials to the result on the host), ms.
    pub combine_ms: Stats,
    /// `combine_ms / resident_ms` (medians).
    pub combine_share: f64,
    /// Input starting in pinned host memory: copies to every device at once, then the call, ms.
    pub host_ms: Stats,
    /// Its throughput, GB/s of input.
    pub host_gb_per_s: f64,
    /// `host_gb_per_s` over the sum of the devices' measured host-to-device bandwidth.
    pub host_of_bus: f64,
    /// Time on one device / (devices × time here), device-resident input (1 for one device).
    pub resident_efficiency: f64,
    /// The same with the input starting in host memory.
    pub host_efficiency: f64,
}

/// The whole benchmark.
#[derive(Clone, Debug, Serialize)]
pub struct MultiBench {
    /// The devices of the "all" side.
    pub devices: Vec<String>,
    /// How the partials were combined.
    pub combine: String,
    /// Device-to-device copy bandwidth of the first device, GB/s (read + written).
    pub copy_gb_per_s: f64,
    /// Each device's host-to-device bandwidth from pinned memory, alone, GB/s.
    pub h2d_gb_per_s: Vec<f64>,
    /// One row per operation and device count.
    pub rows: Vec<MultiRow>,
}

/// Runs the benchmark.
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::InvalidInput`] for empty sizes or zero
/// trials, or inputs the host or a device cannot hold; [`Error::Mismatch`] if a result differs
/// from the CPU's; a driver or NCCL error.
pub fn run(opts: &MultiBenchOptions, mut progress: impl FnMut(u32, u32)) -> Result<MultiBench> {
    if opts.floats == 0 || opts.bytes == 0 || opts.trials == 0 {
        return Err(Error::InvalidInput(
            "sizes and trials must be positive".into(),
        ));
    }
    let (all, one) = open_sides(opts)?;
    let host_bytes = opts.bytes.max(opts.floats.saturating_mul(4));
    check_memory(&all, host_bytes)?;
    let gpu0 = require_gpu(&all.targets()[0])?;
    let copy = copy::run(&all.targets()[0], copy::DEFAULT_BYTES, 10, |_, _| {})?;
    // One pinned allocation holds the floats, then the bytes.
    let mut pinned = PinnedBuffer::new(gpu0, host_bytes, 0u8)?;
    let h2d = host_to_device(&all, &pinned[..host_bytes / all.len()])?;
    let sets: Vec<&DeviceSet> = if all.len() > 1 {
        vec![&one, &all]
    } else {
        vec![&one]
    };
    let combiners = combiners_for(&sets, opts.peer_copies)?;
    let cells = 3 * sets.len() as u32;
    let mut done = 0;
    let mut tick = || {
        done += 1;
        progress(done, cells);
    };
    let floats = as_floats(&mut pinned, opts.floats)?;
    let mut rows = float_rows(&sets, &combiners, floats, all.len(), opts.trials, &mut tick)?;
    let bytes = &mut pinned[..opts.bytes];
    rows.extend(histogram_rows(
        &sets,
        &combiners,
        bytes,
        opts.trials,
        &mut tick,
    )?);
    add_efficiencies(&mut rows, &h2d);
    Ok(MultiBench {
        devices: all.targets().iter().map(Target::describe).collect(),
        combine: combiners.last().map(Combiner::describe).unwrap_or_default(),
        copy_gb_per_s: copy.gb_per_s,
        h2d_gb_per_s: h2d,
        rows,
    })
}

/// The two sides compared: every device asked for, and the first of them alone (both with
/// the copier threads asked for).
fn open_sides(opts: &MultiBenchOptions) -> Result<(DeviceSet, DeviceSet)> {
    let mut all = DeviceSet::open(&opts.devices, false)?;
    let first = match &all.targets()[0] {
        Target::Gpu(g) => g.info().ordinal,
        Target::Sim => return Err(Error::Unsupported("benchmarks need a GPU".into())),
    };
    let mut one = DeviceSet::open(&DeviceList::Ordinals(vec![first]), false)?;
    if let Some(c) = opts.copiers {
        all.set_copiers(c);
        one.set_copiers(c);
    }
    Ok((all, one))
}

/// Refuses an input of `host_bytes` that the host cannot pin or a device cannot hold.
fn check_memory(all: &DeviceSet, host_bytes: usize) -> Result<()> {
    gridsync::runtime::memory::check_host("the pinned input", host_bytes as u64)?;
    // Device 0 holds the whole input for the one-GPU side, every device its slice for the
    // other: refuse before pinning gigabytes of host memory.
    let each = gridsync::runtime::memory::Footprint { host: 0, device: 1 };
    for (d, (t, r)) in all
        .targets()
        .iter()
        .zip(split(host_bytes, all.len()))
        .enumerate()
    {
        let bytes = if d == 0 { host_bytes } else { r.len() };
        gridsync::runtime::memory::check_elements(t, "--len/--bytes: bytes of input", bytes, each)?;
    }
    Ok(())
}

/// How each set combines its partials: peer copies if asked, else the best it has.
fn combiners_for(sets: &[&DeviceSet], peer_copies: bool) -> Result<Vec<Combiner>> {
    sets.iter()
        .map(|s| {
            if peer_copies {
                Ok(Combiner::peer_copies())
            } else {
                Combiner::open(s)
            }
        })
        .collect()
}

/// The sum and the count on each set, over `floats` (filled here), checked against the CPU;
/// `tick` after each row.
fn float_rows(
    sets: &[&DeviceSet],
    combiners: &[Combiner],
    floats: &mut [f32],
    devices: usize,
    trials: u32,
    tick: &mut dyn FnMut(),
) -> Result<Vec<MultiRow>> {
    let mut rows = Vec::new();
    fill_floats(floats);
    let floats = &*floats;
    let want_sum = gridsync::reduce::sum_cpu(floats);
    let sum_bound = gridsync::multi::sum_bound(gridsync::reduce::sum_abs_cpu(floats), devices);
    let threshold = gridsync::count_above::DEFAULT_THRESHOLD;
    let want_count = gridsync::count_above::count_above_cpu(floats, threshold);
    for (set, combiner) in sets.iter().zip(combiners) {
        let x = Scattered::<f32>::zeros(set, floats.len())?;
        x.copy_from(set, floats)?;
        let plan = ReducePlan::<SumF32InF64>::new(set, &x, Op::Sum)?;
        let check = |s: f64| {
            if (s - want_sum).abs() > sum_bound {
                return Err(Error::Mismatch(format!(
                    "sum {s}, CPU {want_sum} (bound {sum_bound:.3e})"
                )));
            }
            Ok(())
        };
        rows.push(measure(
            "sum",
            set,
            &x,
            floats,
            trials,
            || plan.run(combiner).and_then(check),
            || plan.combine(combiner).map(drop),
        )?);
        tick();
        let plan = CountPlan::new(set, &x, threshold)?;
        let check = |c: u64| {
            if c != want_count {
                return Err(Error::Mismatch(format!("count {c}, CPU {want_count}")));
            }
            Ok(())
        };
        rows.push(measure(
            "count_above",
            set,
            &x,
            floats,
            trials,
            || plan.run(combiner).and_then(check),
            || plan.combine(combiner).map(drop),
        )?);
        tick();
    }
    Ok(rows)
}

/// The byte histogram on each set, over `bytes` (filled here), checked against the CPU;
/// `tick` after each row.
fn histogram_rows(
    sets: &[&DeviceSet],
    combiners: &[Combiner],
    bytes: &mut [u8],
    trials: u32,
    tick: &mut dyn FnMut(),
) -> Result<Vec<MultiRow>> {
    let mut rows = Vec::new();
    fill_bytes(bytes);
    let bytes = &*bytes;
    let want = gridsync::histogram::histogram_cpu(bytes, Bins::Byte);
    for (set, combiner) in sets.iter().zip(combiners) {
        let x = Scattered::<u8>::zeros(set, bytes.len())?;
        x.copy_from(set, bytes)?;
        let plan = HistogramPlan::new(set, &x, Bins::Byte)?;
        let check = |h: Vec<u64>| {
            if h[..] != want[..] {
                return Err(Error::Mismatch("histogram differs from the CPU's".into()));
            }
            Ok(())
        };
        rows.push(measure(
            "histogram",
            set,
            &x,
            bytes,
            trials,
            || plan.run(combiner).and_then(check),
            || plan.combine(combiner).map(drop),
        )?);
        tick();
    }
    Ok(rows)
}

/// Fills in each row's efficiencies against the one-device row of its operation, and its
/// share of the host links' bandwidth `h2d` (GB/s per device).
fn add_efficiencies(rows: &mut [MultiRow], h2d: &[f64]) {
    for i in 0..rows.len() {
        let r = &rows[i];
        let base = rows
            .iter()
            .find(|b| b.op == r.op && b.devices == 1)
            .map(|b| (b.resident_ms.median, b.host_ms.median));
        let bus: f64 = h2d[..r.devices].iter().sum();
        let (res_eff, host_eff) = base.map_or((1.0, 1.0), |(res1, host1)| {
            let n = r.devices as f64;
            (
                res1 / (n * r.resident_ms.median),
                host1 / (n * r.host_ms.median),
            )
        });
        let r = &mut rows[i];
        r.resident_efficiency = res_eff;
        r.host_efficiency = host_eff;
        r.host_of_bus = r.host_gb_per_s / bus.max(f64::MIN_POSITIVE);
    }
}

/// Times one operation: `run` on device-resident input (after two warm-ups), `combine` alone,
/// and the copy from `host` (pinned) followed by `run`.
fn measure<T: gridsync::runtime::buffer::Plain>(
    op: &'static str,
    set: &DeviceSet,
    x: &Scattered<T>,
    host: &[T],
    trials: u32,
    run: impl Fn() -> Result<()>,
    combine: impl Fn() -> Result<()>,
) -> Result<MultiRow> {
    run()?;
    run()?;
    let time = |f: &dyn Fn() -> Result<()>| -> Result<Stats> {
        let mut v = Vec::new();
        for _ in 0..trials {
            let t = Instant::now();
            f()?;
            v.push(t.elapsed().as_secs_f64() * 1e3);
        }
        Stats::of(&v)
    };
    let resident = time(&run)?;
    // Over the partials the last run left (the all-reduce is out of place: they are combined
    // again unchanged).
    let combine_only = time(&combine)?;
    let host_ms = time(&|| {
        x.copy_from(set, host)?;
        run()
    })?;
    let bytes = std::mem::size_of_val(host);
    let gbps = |ms: f64| bytes as f64 / (ms * 1e6);
    Ok(MultiRow {
        op,
        devices: set.len(),
        bytes,
        resident_gb_per_s: gbps(resident.median),
        combine_share: combine_only.median / resident.median,
        combine_ms: combine_only,
        host_gb_per_s: gbps(host_ms.median),
        host_ms,
        resident_ms: resident,
        host_of_bus: 0.0,
        resident_efficiency: 1.0,
        host_efficiency: 1.0,
    })
}

/// Each device's pinned host-to-device bandwidth alone, copying `sample` (GB/s, median of 5).
fn host_to_device(set: &DeviceSet, sample: &[u8]) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for t in set.targets() {
        let one = DeviceSet::open(
            &DeviceList::Ordinals(vec![require_gpu(t)?.info().ordinal]),
            false,
        )?;
        let buf = Scattered::<u8>::zeros(&one, sample.len())?;
        let mut v = Vec::new();
        for _ in 0..5 {
            let s = Instant::now();
            buf.copy_from(&one, sample)?;
            v.push(s.elapsed().as_secs_f64());
        }
        out.push(sample.len() as f64 / Stats::of(&v)?.median / 1e9);
    }
    Ok(out)
}

/// The first `n` floats of `pinned`'s bytes.
fn as_floats<'a>(pinned: &'a mut PinnedBuffer<'_, u8>, n: usize) -> Result<&'a mut [f32]> {
    let bytes = &mut pinned[..n * 4];
    if bytes.as_ptr().align_offset(align_of::<f32>()) != 0 {
        return Err(Error::InvalidInput(
            "pinned memory not aligned for floats".into(),
        ));
    }
    // SAFETY: `n * 4` bytes, 4-byte aligned (checked; pinned allocations are page-aligned),
    // every bit pattern a valid f32, borrowed mutably for the result's lifetime.
    Ok(unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<f32>(), n) })
}
