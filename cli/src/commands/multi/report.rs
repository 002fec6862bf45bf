//! `gridsync multi reduce|histogram|count-above`: one operation over a generated input on one
//! device and on the whole set, checked against the CPU, timed on the host three ways: the
//! input already on the devices (the operation itself, as a launched job's ranks time it), the
//! upload, and the whole library call from host memory (upload included).

use super::MultiOp;
use gpu::lessons::reduce::{MaxF32, MinF32, SumF32InF64};
use gridsync::count_above::{DEFAULT_THRESHOLD, count_above_cpu};
use gridsync::histogram::{Bins, histogram_cpu, uniform_bytes};
use gridsync::inputs::{MULTI_SEED, uniform_f32};
use gridsync::multi::{
    Combiner, CountPlan, DeviceSet, HistogramPlan, Op, ReducePlan, Scattered, split, sum_bound,
};
use gridsync::reduce::{max_cpu, min_cpu, sum_abs_cpu, sum_cpu};
use gridsync::{Error, Result};
use serde::Serialize;
use std::time::Instant;

/// What [`run`] found.
#[derive(Clone, Debug, Serialize)]
pub struct MultiReport {
    /// The devices, in order.
    pub devices: Vec<String>,
    /// The operation.
    pub op: MultiOp,
    /// Elements of the input (floats, or bytes for the histogram).
    pub len: usize,
    /// Elements of each device's slice.
    pub slices: Vec<usize>,
    /// The result over all devices, as text.
    pub result: String,
    /// The CPU's, as text.
    pub expected: String,
    /// Wall ms of the operation on the first device alone, its input already in the device's
    /// memory (median of `repeats`): the kernels and the combine, as a rank of a launched job
    /// times it.
    pub one_device_ms: f64,
    /// The same on every device at once, each holding its slice.
    pub all_devices_ms: f64,
    /// `one_device_ms / (devices × all_devices_ms)`: 1 for perfect scaling.
    pub scaling_efficiency: f64,
    /// Wall ms of the input's upload from host memory to the first device, its allocation
    /// included (median).
    pub upload_one_device_ms: f64,
    /// Wall ms of the uploads to every device at once, each its slice (median).
    pub upload_all_devices_ms: f64,
    /// Wall ms of one whole library call from host memory (upload included) on the first
    /// device (median): what a caller of `multi::sum_min_max` and the like waits for.
    pub whole_call_one_device_ms: f64,
    /// The same on every device.
    pub whole_call_all_devices_ms: f64,
    /// `whole_call_one_device_ms / (devices × whole_call_all_devices_ms)`.
    pub whole_call_efficiency: f64,
    /// How the partials of the resident runs were combined.
    pub combine: String,
    /// How the whole calls combine: the partials read back and added on the host.
    pub whole_call_combine: &'static str,
}

/// The timings of one device set: the resident run, the upload, the whole call.
struct Timed {
    resident_ms: f64,
    upload_ms: f64,
    whole_ms: f64,
    combine: String,
}

/// Finishes the timings of one device set: `upload_ms` (measured by the caller, which
/// prepared the plans `resident` runs), then `resident` (the operation on the input already on
/// the devices) and `whole` (the library call from host memory), each the median of `repeats`
/// runs, every result through `check`. Returns them with the resident run's last result.
fn timed<R>(
    repeats: u32,
    upload_ms: f64,
    combiner: &Combiner,
    mut resident: impl FnMut() -> Result<R>,
    mut whole: impl FnMut() -> Result<R>,
    check: impl Fn(&R) -> Result<()>,
) -> Result<(Timed, R)> {
    let (resident_ms, result) = time(repeats, || {
        let r = resident()?;
        check(&r)?;
        Ok(r)
    })?;
    let (whole_ms, r) = time(repeats, &mut whole)?;
    check(&r)?;
    let timings = Timed {
        resident_ms,
        upload_ms,
        whole_ms,
        combine: combiner.describe(),
    };
    Ok((timings, result))
}

/// `data` scattered over `set`.
fn scatter<T: gridsync::Plain + cust::memory::DeviceCopy>(
    set: &DeviceSet,
    data: &[T],
) -> Result<Scattered<T>> {
    let x = Scattered::<T>::zeros(set, data.len())?;
    x.copy_from(set, data)?;
    Ok(x)
}

/// The result over all devices and the CPU's, as text, and the timings of the first device
/// alone and of the whole set.
type Compared = (String, String, Timed, Timed);

/// Runs `op` over a generated input of `len` elements on the first device of `set` and on all
/// of it, checks every result against the CPU, and times both (`repeats` runs each, the
/// median): the operation on input already on the devices first, then the upload, then the
/// whole call from host memory.
///
/// # Errors
/// [`Error::Mismatch`] if a result differs from the CPU's (beyond the float bound for sums); a
/// device's error; NCCL installed but failing; [`Error::InvalidInput`] for lock and barrier,
/// which are no operations over data.
pub fn run(set: &DeviceSet, op: MultiOp, len: usize, repeats: u32) -> Result<MultiReport> {
    let first = set.first_alone()?;
    let (result, expected, one, all) = match op {
        MultiOp::Reduce => reduce(set, &first, len, repeats)?,
        MultiOp::Histogram => histogram(set, &first, len, repeats)?,
        MultiOp::CountAbove => count(set, &first, len, repeats)?,
        MultiOp::Lock | MultiOp::Barrier => return Err(super::not_data(op)),
    };
    let n = set.len() as f64;
    Ok(MultiReport {
        devices: set.targets().iter().map(|t| t.describe()).collect(),
        op,
        len,
        slices: split(len, set.len()).iter().map(|r| r.len()).collect(),
        result,
        expected,
        one_device_ms: one.resident_ms,
        all_devices_ms: all.resident_ms,
        scaling_efficiency: one.resident_ms / (n * all.resident_ms),
        upload_one_device_ms: one.upload_ms,
        upload_all_devices_ms: all.upload_ms,
        whole_call_one_device_ms: one.whole_ms,
        whole_call_all_devices_ms: all.whole_ms,
        whole_call_efficiency: one.whole_ms / (n * all.whole_ms),
        combine: all.combine,
        whole_call_combine: "host: the partials read back and added in device order",
    })
}

/// Σ, min and max of uniform floats in [-1, 1).
fn reduce(set: &DeviceSet, first: &DeviceSet, len: usize, repeats: u32) -> Result<Compared> {
    let x = uniform_f32(len, MULTI_SEED, -1.0, 1.0);
    let cpu = sum_cpu(&x);
    let cmin = min_cpu(&x).unwrap_or(f32::NAN);
    let cmax = max_cpu(&x).unwrap_or(f32::NAN);
    let bound = sum_bound(sum_abs_cpu(&x), set.len());
    let check = |got: &(f64, f32, f32)| {
        if (got.0 - cpu).abs() > bound {
            return Err(Error::Mismatch(format!(
                "Σ = {} against the CPU's {cpu}",
                got.0
            )));
        }
        let same = |a: f32, b: f32| a == b || (a.is_nan() && b.is_nan());
        if !same(got.1, cmin) || !same(got.2, cmax) {
            return Err(Error::Mismatch(format!(
                "min/max {}/{} against the CPU's {cmin}/{cmax}",
                got.1, got.2
            )));
        }
        Ok(())
    };
    let go = |s: &DeviceSet| {
        let (upload_ms, on) = time(repeats, || scatter(s, &x))?;
        let c = Combiner::open(s)?;
        let sum = ReducePlan::<SumF32InF64>::new(s, &on, Op::Sum)?;
        let lo = ReducePlan::<MinF32>::new(s, &on, Op::Min)?;
        let hi = ReducePlan::<MaxF32>::new(s, &on, Op::Max)?;
        timed(
            repeats,
            upload_ms,
            &c,
            || Ok((sum.run(&c)?, lo.run(&c)?, hi.run(&c)?)),
            || gridsync::multi::sum_min_max(s, &x),
            check,
        )
    };
    let ((one, _), (all, r)) = (go(first)?, go(set)?);
    Ok((
        format!("Σ {:.9e}, min {}, max {}", r.0, r.1, r.2),
        format!("Σ {cpu:.9e}, min {cmin}, max {cmax}"),
        one,
        all,
    ))
}

/// A 256-bin histogram of uniform bytes.
fn histogram(set: &DeviceSet, first: &DeviceSet, len: usize, repeats: u32) -> Result<Compared> {
    let bytes = uniform_bytes(len, MULTI_SEED);
    let cpu = histogram_cpu(&bytes, Bins::Byte);
    let check = |h: &Vec<u64>| {
        if h[..] != cpu[..] {
            return Err(Error::Mismatch("a histogram differs from the CPU's".into()));
        }
        Ok(())
    };
    let go = |s: &DeviceSet| {
        let (upload_ms, on) = time(repeats, || scatter(s, &bytes))?;
        let c = Combiner::open(s)?;
        let plan = HistogramPlan::new(s, &on, Bins::Byte)?;
        timed(
            repeats,
            upload_ms,
            &c,
            || plan.run(&c),
            || gridsync::multi::histogram(s, &bytes).map(|h| h.to_vec()),
            check,
        )
    };
    let ((one, _), (all, h)) = (go(first)?, go(set)?);
    let total: u64 = h.iter().sum();
    Ok((
        format!("256 bins, {total} bytes counted"),
        format!("256 bins, {} bytes, equal", cpu.iter().sum::<u64>()),
        one,
        all,
    ))
}

/// Uniform floats in [0, 1) above the count-above topic's threshold.
fn count(set: &DeviceSet, first: &DeviceSet, len: usize, repeats: u32) -> Result<Compared> {
    let x = uniform_f32(len, MULTI_SEED, 0.0, 1.0);
    let cpu = count_above_cpu(&x, DEFAULT_THRESHOLD);
    let check = |c: &u64| {
        if *c != cpu {
            return Err(Error::Mismatch(format!(
                "count {c} against the CPU's {cpu}"
            )));
        }
        Ok(())
    };
    let go = |s: &DeviceSet| {
        let (upload_ms, on) = time(repeats, || scatter(s, &x))?;
        let c = Combiner::open(s)?;
        let plan = CountPlan::new(s, &on, DEFAULT_THRESHOLD)?;
        timed(
            repeats,
            upload_ms,
            &c,
            || plan.run(&c),
            || gridsync::multi::count_above(s, &x, DEFAULT_THRESHOLD),
            check,
        )
    };
    let ((one, _), (all, c)) = (go(first)?, go(set)?);
    Ok((
        format!("{c} above {DEFAULT_THRESHOLD}"),
        format!("{cpu}"),
        one,
        all,
    ))
}

/// The median wall ms of `repeats` runs of `work`, and its last result.
fn time<R>(repeats: u32, mut work: impl FnMut() -> Result<R>) -> Result<(f64, R)> {
    let mut ms = Vec::new();
    let mut last = None;
    for _ in 0..repeats.max(1) {
        let start = Instant::now();
        last = Some(work()?);
        ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    ms.sort_by(f64::total_cmp);
    let r = last.ok_or_else(|| Error::InvalidInput("no runs".into()))?;
    Ok((ms[ms.len() / 2], r))
}
