//! The `multi` demo: one operation over a generated input on one device and on the whole set,
//! checked against the CPU, timed on the host (input starting in host memory: the uploads are
//! part of the time).

use super::{DeviceSet, split};
use crate::histogram::histogram_cpu;
use crate::inputs::uniform_f32;
use crate::runtime::error::{Error, Result};
use serde::Serialize;
use std::time::Instant;

/// The operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MultiOp {
    /// Σ in `f64` accumulation, min and max of uniform floats.
    Reduce,
    /// A 256-bin histogram of uniform bytes.
    Histogram,
    /// Floats above 0.5.
    CountAbove,
}

/// The seed of the generated inputs.
pub const SEED: u64 = 0x6d75_6c74_6967_7075;

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
    /// Wall ms on the first device alone, upload included (median of `repeats`).
    pub one_device_ms: f64,
    /// Wall ms on every device at once, uploads included.
    pub all_devices_ms: f64,
    /// `one_device_ms / (devices × all_devices_ms)`.
    pub scaling_efficiency: f64,
    /// How the partials were combined.
    pub combine: &'static str,
}

/// Runs `op` over a generated input of `len` elements on the first device of `set` and on all
/// of it, checks both against the CPU, and times both (`repeats` runs each, the median).
///
/// # Errors
/// [`Error::Mismatch`] if a result differs from the CPU's (beyond the float bound for sums); a
/// device's error.
pub fn run(set: &DeviceSet, op: MultiOp, len: usize, repeats: u32) -> Result<MultiReport> {
    let first = DeviceSet {
        targets: vec![clone_target(&set.targets()[0])?],
        copiers: set.copiers,
    };
    let (result, expected, one, all) = match op {
        MultiOp::Reduce => {
            let x = uniform_f32(len, SEED, -1.0, 1.0);
            let cpu: f64 = x.iter().map(|&v| v as f64).sum();
            let abs: f64 = x.iter().map(|&v| v.abs() as f64).sum();
            let go = |s: &DeviceSet| super::sum_min_max(s, &x);
            let (one, r1) = time(repeats, || go(&first))?;
            let (all, r) = time(repeats, || go(set))?;
            // The f64 accumulation's bound (reduce docs) is far below 1e-9 of Σ|x|.
            let bound = 1e-9 * abs;
            for (name, got) in [("one device", r1), ("all devices", r)] {
                if (got.0 - cpu).abs() > bound {
                    return Err(Error::Mismatch(format!(
                        "{name}: Σ = {} against the CPU's {cpu}",
                        got.0
                    )));
                }
            }
            let cmin = x.iter().copied().fold(f32::NAN, f32::min);
            let cmax = x.iter().copied().fold(f32::NAN, f32::max);
            if !x.is_empty() && (r.1 != cmin || r.2 != cmax) {
                return Err(Error::Mismatch(format!(
                    "min/max {}/{} against the CPU's {cmin}/{cmax}",
                    r.1, r.2
                )));
            }
            (
                format!("Σ {:.9e}, min {}, max {}", r.0, r.1, r.2),
                format!("Σ {cpu:.9e}, min {cmin}, max {cmax}"),
                one,
                all,
            )
        }
        MultiOp::Histogram => {
            let bytes = crate::histogram::uniform_bytes(len, SEED);
            let cpu = histogram_cpu(&bytes, crate::histogram::Bins::Byte);
            let (one, h1) = time(repeats, || super::histogram(&first, &bytes))?;
            let (all, h) = time(repeats, || super::histogram(set, &bytes))?;
            if h1[..] != cpu[..] || h[..] != cpu[..] {
                return Err(Error::Mismatch("a histogram differs from the CPU's".into()));
            }
            let total: u64 = h.iter().sum();
            (
                format!("256 bins, {total} bytes counted"),
                format!("256 bins, {} bytes, equal", cpu.iter().sum::<u64>()),
                one,
                all,
            )
        }
        MultiOp::CountAbove => {
            let x = uniform_f32(len, SEED, 0.0, 1.0);
            let cpu = crate::count_above::count_above_cpu(&x, 0.5);
            let (one, c1) = time(repeats, || super::count_above(&first, &x, 0.5))?;
            let (all, c) = time(repeats, || super::count_above(set, &x, 0.5))?;
            if c1 != cpu || c != cpu {
                return Err(Error::Mismatch(format!(
                    "counts {c1} and {c} against the CPU's {cpu}"
                )));
            }
            (format!("{c} above 0.5"), format!("{cpu}"), one, all)
        }
    };
    Ok(MultiReport {
        devices: set.targets().iter().map(|t| t.describe()).collect(),
        op,
        len,
        slices: split(len, set.len()).iter().map(|r| r.len()).collect(),
        result,
        expected,
        one_device_ms: one,
        all_devices_ms: all,
        scaling_efficiency: one / (set.len() as f64 * all),
        combine: "host: the partials read back and added in device order",
    })
}

/// Opens the same device again (a simulator, or the GPU of the same ordinal).
fn clone_target(t: &crate::Target) -> Result<crate::Target> {
    match t {
        crate::Target::Sim => Ok(crate::Target::Sim),
        crate::Target::Gpu(g) => crate::Target::open(g.info().ordinal, false),
    }
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
