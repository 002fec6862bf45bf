//! The data-parallel calls: each device's slice through the single-GPU call, then the
//! partials combined in device order.

use crate::count_above::{CountKernel, CountLaunch, config_for};
use crate::histogram::Bins;
use crate::multi::devices::{DeviceSet, upload_staged};
use crate::primitives::lock::MutexBounds;
use crate::reduce::DeviceReduction;
use crate::reduce::api::reduce_buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use gpu::lessons::reduce::{MaxF32, MinF32, SumF32InF64};

/// Σ `data`, each device accumulating its slice in `f64` (the kernel of
/// [`reduce::sum_with`](crate::reduce::sum_with) `F64`), the partials added in device order in
/// `f64`. Empty: 0.
///
/// # Errors
/// A device's error (out of memory, a fault).
pub fn sum(set: &DeviceSet, data: &[f32]) -> Result<f64> {
    let copiers = set.copiers();
    let partials = set.map_slices(data.len(), |_, t, r| {
        reduce_staged::<SumF32InF64>(t, &data[r], copiers)
    })?;
    Ok(partials.into_iter().flatten().sum())
}

/// Σ (as [`sum`]), min and max (as [`min`] and [`max`]) of `data`, each device's slice
/// uploaded once and reduced three times on the device. Empty data: `(0, NaN, NaN)`.
///
/// # Errors
/// A device's error.
pub fn sum_min_max(set: &DeviceSet, data: &[f32]) -> Result<(f64, f32, f32)> {
    let copiers = set.copiers();
    let partials = set.map_slices(data.len(), |_, t, r| {
        if r.is_empty() {
            return Ok(None);
        }
        let x = upload_staged(t, &data[r], copiers)?;
        Ok(Some((
            reduce_buffer::<SumF32InF64>(t, &x)?,
            reduce_buffer::<MinF32>(t, &x)?,
            reduce_buffer::<MaxF32>(t, &x)?,
        )))
    })?;
    Ok(partials
        .into_iter()
        .flatten()
        .fold((0.0, f32::NAN, f32::NAN), |(s, lo, hi), (ps, plo, phi)| {
            (s + ps, lo.min(plo), hi.max(phi))
        }))
}

/// The smallest element, exactly (NaNs skipped, as [`reduce::min`](crate::reduce::min)).
///
/// # Errors
/// [`Error::InvalidInput`] for empty data; a device's error.
pub fn min(set: &DeviceSet, data: &[f32]) -> Result<f32> {
    extreme::<MinF32>(set, data, "minimum", f32::min)
}

/// The largest element, exactly (NaNs skipped, as [`reduce::max`](crate::reduce::max)).
///
/// # Errors
/// As [`min`].
pub fn max(set: &DeviceSet, data: &[f32]) -> Result<f32> {
    extreme::<MaxF32>(set, data, "maximum", f32::max)
}

fn extreme<R: DeviceReduction<Item = f32, Out = f32>>(
    set: &DeviceSet,
    data: &[f32],
    what: &str,
    pick: fn(f32, f32) -> f32,
) -> Result<f32> {
    if data.is_empty() {
        return Err(Error::InvalidInput(format!("the {what} of no elements")));
    }
    let copiers = set.copiers();
    // Empty slices (more devices than elements) have no extreme: they take no part.
    let partials = set.map_slices(data.len(), |_, t, r| {
        reduce_staged::<R>(t, &data[r], copiers)
    })?;
    // `f32::min`/`max` skip a NaN operand, as the kernels do.
    Ok(partials.into_iter().flatten().fold(f32::NAN, pick))
}

/// `R` over one device's slice, uploaded through pinned staging; `None` for an empty slice.
fn reduce_staged<R: DeviceReduction<Item = f32>>(
    t: &Target,
    data: &[f32],
    copiers: usize,
) -> Result<Option<R::Out>> {
    if data.is_empty() {
        return Ok(None);
    }
    let x = upload_staged(t, data, copiers)?;
    reduce_buffer::<R>(t, &x).map(Some)
}

/// The number of each byte value in `data`, each device counting its slice, the counts added:
/// exactly what one device (or a CPU loop) counts.
///
/// # Errors
/// A device's error.
pub fn histogram(set: &DeviceSet, data: &[u8]) -> Result<[u64; 256]> {
    counts_in(set, data, Bins::Byte)
}

/// The number of each ASCII code in `data` (bytes ≥ 128 not counted), over every device.
///
/// # Errors
/// As [`histogram`].
pub fn histogram_ascii(set: &DeviceSet, data: &[u8]) -> Result<[u64; 128]> {
    counts_in(set, data, Bins::Ascii)
}

/// The `N` counts of `bins` (`N` is `bins.count()`) over `data`, each device counting its
/// slice, the counts added.
fn counts_in<const N: usize>(set: &DeviceSet, data: &[u8], bins: Bins) -> Result<[u64; N]> {
    let copiers = set.copiers();
    let mut out = [0u64; N];
    add_counts(
        &mut out,
        set.map_slices(data.len(), |_, t, r| {
            count_bytes(t, &data[r], bins, copiers)
        })?,
    );
    Ok(out)
}

fn count_bytes(t: &Target, data: &[u8], bins: Bins, copiers: usize) -> Result<Vec<u64>> {
    if data.is_empty() {
        return Ok(vec![0; bins.count() as usize]);
    }
    let buf = upload_staged(t, data, copiers)?;
    crate::histogram::histogram_of_buffer(t, &buf, data.len(), bins)
}

fn add_counts(out: &mut [u64], partials: Vec<Vec<u64>>) {
    for p in partials {
        for (o, c) in out.iter_mut().zip(p) {
            *o += c;
        }
    }
}

/// How many elements of `data` are above `threshold` (NaN never is), each device counting its
/// slice with the fastest counting kernel, the counts added.
///
/// # Errors
/// A device's error.
pub fn count_above(set: &DeviceSet, data: &[f32], threshold: f32) -> Result<u64> {
    let copiers = set.copiers();
    let partials = set.map_slices(data.len(), |_, t, r| {
        if r.is_empty() {
            return Ok(0);
        }
        let slice = &data[r];
        let src = upload_staged(t, slice, copiers)?;
        let kernel = CountKernel::Vec4;
        let cfg = config_for(t, kernel, slice.len(), None)?;
        CountLaunch::new(
            t,
            kernel,
            &src,
            slice.len(),
            threshold,
            cfg,
            MutexBounds::default(),
        )?
        .run()
    })?;
    Ok(partials.into_iter().sum())
}
