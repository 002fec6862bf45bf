//! Prepared plans over [`Scattered`] data: every device's kernel queued at once, the partials
//! combined on the GPUs by a [`Combiner`] — made once, run any number of times.

use super::combiner::Combiner;
use super::op::{Op, Partial};
use crate::count_above::{CountKernel, CountLaunch, config_for as count_config};
use crate::histogram::wide::{BINS as WIDE_BINS, WideLaunch, fastest_wide_kernel, wide_config};
use crate::histogram::{Bins, HistogramLaunch, config_for as hist_config, fastest_kernel};
use crate::multi::devices::{DeviceSet, Scattered};
use crate::primitives::lock::MutexBounds;
use crate::reduce::{DeviceReduction, SinglePass, SinglePassKernel};
use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;

/// What every plan holds per device: the prepared launch `L` of a device with elements, the
/// identity standing in for a device without, and the buffer NCCL leaves the result in.
struct PerDevice<'s, L, T: Plain> {
    set: &'s DeviceSet,
    launches: Vec<Option<L>>,
    empty: Vec<Option<Buffer<T>>>,
    results: Vec<Buffer<T>>,
}

impl<'s, L, T: Partial> PerDevice<'s, L, T> {
    /// `make(target, slice, len)` for every device whose slice of `x` has elements; `identity`
    /// (as long as a partial) uploaded for the others.
    fn new<I: Plain>(
        set: &'s DeviceSet,
        x: &'s Scattered<I>,
        identity: &[T],
        make: impl Fn(&'s Target, &'s Buffer<I>, usize) -> Result<L>,
    ) -> Result<PerDevice<'s, L, T>> {
        let lens = x.check_set(set)?;
        let mut launches = Vec::with_capacity(lens.len());
        let mut empty = Vec::with_capacity(lens.len());
        for ((t, part), &n) in set.targets().iter().zip(x.parts()).zip(&lens) {
            if n == 0 {
                launches.push(None);
                empty.push(Some(t.upload(identity)?));
            } else {
                launches.push(Some(make(t, part, n)?));
                empty.push(None);
            }
        }
        let results = set
            .targets()
            .iter()
            .map(|t| t.zeros(identity.len()))
            .collect::<Result<_>>()?;
        Ok(PerDevice {
            set,
            launches,
            empty,
            results,
        })
    }

    /// The devices' partials — `partial(launch)`, or the identity — combined with `op`.
    fn combine(
        &self,
        combiner: &Combiner,
        op: Op,
        partial: impl Fn(&L) -> Result<&Buffer<T>>,
    ) -> Result<Vec<T>> {
        let parts = self
            .launches
            .iter()
            .zip(&self.empty)
            .map(|(l, e)| match (l, e) {
                (Some(l), _) => partial(l),
                (None, Some(e)) => Ok(e),
                (None, None) => Err(Error::InvalidInput("a device without a partial".into())),
            })
            .collect::<Result<Vec<_>>>()?;
        let results: Vec<&Buffer<T>> = self.results.iter().collect();
        combiner.combine(self.set, &parts, &results, op)
    }
}

fn first<T: Copy>(v: Vec<T>) -> Result<T> {
    v.first()
        .copied()
        .ok_or_else(|| Error::InvalidInput("an empty result".into()))
}

/// A reduction `R` of scattered data, prepared once (kernels, scratch and result buffers on
/// every device) and run any number of times: every device reduces its slice, the partials
/// are combined with `op` on the GPUs.
pub struct ReducePlan<'s, R: DeviceReduction> {
    x: &'s Scattered<R::Item>,
    devices: PerDevice<'s, SinglePass<'s, R>, R::Out>,
    op: Op,
}

impl<'s, R: DeviceReduction<Out: Partial>> ReducePlan<'s, R> {
    /// Prepares `R` over `x`, combining with `op`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for data scattered over another set; a device's error.
    pub fn new(set: &'s DeviceSet, x: &'s Scattered<R::Item>, op: Op) -> Result<ReducePlan<'s, R>> {
        let devices = PerDevice::new(set, x, &[R::Out::identity(op)], |t, _, n| {
            SinglePass::<R>::new(t, SinglePassKernel::Vec, n, None)
        })?;
        Ok(ReducePlan { x, devices, op })
    }

    /// Every device's kernel, queued at once, then the combine.
    ///
    /// # Errors
    /// A launch, driver or NCCL error.
    pub fn run(&self, combiner: &Combiner) -> Result<R::Out> {
        for (p, part) in self.devices.launches.iter().zip(self.x.parts()) {
            if let Some(p) = p {
                p.launch(part, part.len())?;
            }
        }
        self.combine(combiner)
    }

    /// The combine step alone, over the partials the last [`ReducePlan::run`] left (to time
    /// it; the partials are not changed, so it gives the same result each time).
    ///
    /// # Errors
    /// A driver or NCCL error.
    pub fn combine(&self, combiner: &Combiner) -> Result<R::Out> {
        first(
            self.devices
                .combine(combiner, self.op, |p| Ok(p.result_buffer()))?,
        )
    }
}

/// A histogram of scattered bytes, prepared once: every device counts its slice, the bins are
/// added on the GPUs.
pub struct HistogramPlan<'s> {
    devices: PerDevice<'s, HistogramLaunch<'s>, u64>,
}

impl<'s> HistogramPlan<'s> {
    /// Prepares the fastest histogram kernel over every slice of `x`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for data scattered over another set; a device's error.
    pub fn new(set: &'s DeviceSet, x: &'s Scattered<u8>, bins: Bins) -> Result<HistogramPlan<'s>> {
        let zeros = vec![0u64; bins.count() as usize];
        let devices = PerDevice::new(set, x, &zeros, |t, part, n| {
            let kernel = fastest_kernel(t, n);
            let cfg = hist_config(t, kernel, bins, n, None)?;
            HistogramLaunch::new(t, kernel, part, n, bins, cfg)
        })?;
        Ok(HistogramPlan { devices })
    }

    /// Every device's count, queued at once, then the bins added.
    ///
    /// # Errors
    /// A launch, driver or NCCL error.
    pub fn run(&self, combiner: &Combiner) -> Result<Vec<u64>> {
        for l in self.devices.launches.iter().flatten() {
            l.reset()?;
            l.launch()?;
        }
        self.combine(combiner)
    }

    /// The combine step alone (as [`ReducePlan::combine`]).
    ///
    /// # Errors
    /// A driver or NCCL error.
    pub fn combine(&self, combiner: &Combiner) -> Result<Vec<u64>> {
        self.devices.combine(combiner, Op::Sum, |l| {
            l.bins_buffer()
                .ok_or_else(|| Error::InvalidInput("a histogram kernel with per-block rows".into()))
        })
    }
}

/// A 65 536-bin histogram of scattered 16-bit values (token ids, samples), prepared once: every
/// device counts its slice with the fastest wide kernel, the 65 536 counts are added on the GPUs
/// (512 KiB per device through the combine).
pub struct WideHistogramPlan<'s> {
    devices: PerDevice<'s, WideLaunch<'s>, u64>,
}

impl<'s> WideHistogramPlan<'s> {
    /// Prepares the fastest 65 536-bin kernel over every slice of `x`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for data scattered over another set; a device's error.
    pub fn new(set: &'s DeviceSet, x: &'s Scattered<u16>) -> Result<WideHistogramPlan<'s>> {
        let zeros = vec![0u64; WIDE_BINS];
        let devices = PerDevice::new(set, x, &zeros, |t, part, n| {
            let kernel = fastest_wide_kernel(t);
            let cfg = wide_config(t, kernel, n)?;
            WideLaunch::new(t, kernel, part, n, cfg)
        })?;
        Ok(WideHistogramPlan { devices })
    }

    /// Every device's count, queued at once, then the bins added.
    ///
    /// # Errors
    /// A launch, driver or NCCL error.
    pub fn run(&self, combiner: &Combiner) -> Result<Vec<u64>> {
        for l in self.devices.launches.iter().flatten() {
            l.launch()?;
        }
        self.combine(combiner)
    }

    /// The combine step alone (as [`ReducePlan::combine`]).
    ///
    /// # Errors
    /// A driver or NCCL error.
    pub fn combine(&self, combiner: &Combiner) -> Result<Vec<u64>> {
        self.devices
            .combine(combiner, Op::Sum, |l| Ok(l.bins_buffer()))
    }
}

/// A count of scattered elements above a threshold, prepared once.
pub struct CountPlan<'s> {
    devices: PerDevice<'s, CountLaunch<'s>, u64>,
}

impl<'s> CountPlan<'s> {
    /// Prepares the fastest counting kernel over every slice of `x`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for data scattered over another set; a device's error.
    pub fn new(set: &'s DeviceSet, x: &'s Scattered<f32>, threshold: f32) -> Result<CountPlan<'s>> {
        let devices = PerDevice::new(set, x, &[0u64], |t, part, n| {
            let kernel = CountKernel::Vec4;
            let cfg = count_config(t, kernel, n, None)?;
            CountLaunch::new(t, kernel, part, n, threshold, cfg, MutexBounds::default())
        })?;
        Ok(CountPlan { devices })
    }

    /// Every device's count, queued at once, then the counts added.
    ///
    /// # Errors
    /// A launch, driver or NCCL error.
    pub fn run(&self, combiner: &Combiner) -> Result<u64> {
        for l in self.devices.launches.iter().flatten() {
            l.reset()?;
            l.launch()?;
        }
        self.combine(combiner)
    }

    /// The combine step alone (as [`ReducePlan::combine`]).
    ///
    /// # Errors
    /// A driver or NCCL error.
    pub fn combine(&self, combiner: &Combiner) -> Result<u64> {
        first(
            self.devices
                .combine(combiner, Op::Sum, |l| Ok(l.count_buffer()))?,
        )
    }
}
