//! Prepared plans over [`Scattered`] data: every device's kernel queued at once, the partials
//! combined on the GPUs by a [`Combiner`] — made once, run any number of times.

use super::combine::{Combiner, Op, Partial};
use super::{DeviceSet, Scattered};
use crate::count_above::{CountKernel, CountLaunch, config_for as count_config};
use crate::histogram::{Bins, HistogramLaunch, config_for as hist_config, fastest_kernel};
use crate::primitives::lock::MutexBounds;
use crate::reduce::{DeviceReduction, SinglePass, SinglePassKernel};
use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::error::{Error, Result};

/// A value per device to stand for a device with an empty slice.
fn identity_parts<T: Plain>(
    set: &DeviceSet,
    lens: &[usize],
    value: &[T],
) -> Result<Vec<Option<Buffer<T>>>> {
    set.targets()
        .iter()
        .zip(lens)
        .map(|(t, &n)| {
            if n == 0 {
                t.upload(value).map(Some)
            } else {
                Ok(None)
            }
        })
        .collect()
}

/// Each device's partial: its launch's buffer, or the identity for an empty slice.
fn pick<'a, T: Plain>(
    launched: impl Iterator<Item = Option<&'a Buffer<T>>>,
    empty: &'a [Option<Buffer<T>>],
) -> Result<Vec<&'a Buffer<T>>> {
    launched
        .zip(empty)
        .map(|(l, e)| {
            l.or(e.as_ref())
                .ok_or_else(|| Error::InvalidInput("a device without a partial".into()))
        })
        .collect()
}

/// A result buffer of `len` per device, where NCCL leaves the combined values.
fn result_buffers<T: Plain>(set: &DeviceSet, len: usize) -> Result<Vec<Buffer<T>>> {
    set.targets().iter().map(|t| t.zeros(len)).collect()
}

fn refs<T: Plain>(v: &[Buffer<T>]) -> Vec<&Buffer<T>> {
    v.iter().collect()
}

/// A reduction `R` of scattered data, prepared once (kernels, scratch and result buffers on
/// every device) and run any number of times: every device reduces its slice, the partials
/// are combined with `op` on the GPUs.
pub struct ReducePlan<'s, R: DeviceReduction> {
    set: &'s DeviceSet,
    x: &'s Scattered<R::Item>,
    passes: Vec<Option<SinglePass<'s, R>>>,
    empty: Vec<Option<Buffer<R::Out>>>,
    results: Vec<Buffer<R::Out>>,
    op: Op,
}

impl<'s, R: DeviceReduction<Out: Partial>> ReducePlan<'s, R> {
    /// Prepares `R` over `x`, combining with `op`.
    ///
    /// # Errors
    /// A device's error.
    pub fn new(set: &'s DeviceSet, x: &'s Scattered<R::Item>, op: Op) -> Result<ReducePlan<'s, R>> {
        let lens = x.check_set(set)?;
        let passes = set
            .targets()
            .iter()
            .zip(&lens)
            .map(|(t, &n)| {
                (n > 0)
                    .then(|| SinglePass::<R>::new(t, SinglePassKernel::Vec, n, None))
                    .transpose()
            })
            .collect::<Result<_>>()?;
        let empty = identity_parts(set, &lens, &[R::Out::identity(op)])?;
        Ok(ReducePlan {
            set,
            x,
            passes,
            empty,
            results: result_buffers(set, 1)?,
            op,
        })
    }

    /// Every device's kernel, queued at once, then the combine.
    ///
    /// # Errors
    /// A launch, driver or NCCL error.
    pub fn run(&self, combiner: &Combiner) -> Result<R::Out> {
        for (p, part) in self.passes.iter().zip(self.x.parts()) {
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
        let parts = pick(
            self.passes
                .iter()
                .map(|p| p.as_ref().map(SinglePass::result_buffer)),
            &self.empty,
        )?;
        let out = combiner.combine(self.set, &parts, &refs(&self.results), self.op)?;
        out.first()
            .copied()
            .ok_or_else(|| Error::InvalidInput("no result".into()))
    }
}

/// A histogram of scattered bytes, prepared once: every device counts its slice, the bins are
/// added on the GPUs.
pub struct HistogramPlan<'s> {
    set: &'s DeviceSet,
    launches: Vec<Option<HistogramLaunch<'s>>>,
    empty: Vec<Option<Buffer<u64>>>,
    results: Vec<Buffer<u64>>,
    bins: Bins,
}

impl<'s> HistogramPlan<'s> {
    /// Prepares the fastest histogram kernel over every slice of `x`.
    ///
    /// # Errors
    /// A device's error.
    pub fn new(set: &'s DeviceSet, x: &'s Scattered<u8>, bins: Bins) -> Result<HistogramPlan<'s>> {
        let lens = x.check_set(set)?;
        let mut launches = Vec::new();
        for ((t, part), &n) in set.targets().iter().zip(x.parts()).zip(&lens) {
            launches.push(if n == 0 {
                None
            } else {
                let kernel = fastest_kernel(n);
                let cfg = hist_config(t, kernel, bins, n, None)?;
                Some(HistogramLaunch::new(t, kernel, part, n, bins, cfg)?)
            });
        }
        let zeros = vec![0u64; bins.count() as usize];
        let empty = identity_parts(set, &lens, &zeros)?;
        Ok(HistogramPlan {
            set,
            launches,
            empty,
            results: result_buffers(set, bins.count() as usize)?,
            bins,
        })
    }

    /// Every device's count, queued at once, then the bins added.
    ///
    /// # Errors
    /// A launch, driver or NCCL error.
    pub fn run(&self, combiner: &Combiner) -> Result<Vec<u64>> {
        for l in self.launches.iter().flatten() {
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
        let mut bins = Vec::with_capacity(self.launches.len());
        for l in &self.launches {
            bins.push(match l {
                Some(l) => Some(l.bins_buffer().ok_or_else(|| {
                    Error::InvalidInput("a histogram kernel with per-block rows".into())
                })?),
                None => None,
            });
        }
        let parts = pick(bins.into_iter(), &self.empty)?;
        let out = combiner.combine(self.set, &parts, &refs(&self.results), Op::Sum)?;
        debug_assert_eq!(out.len(), self.bins.count() as usize);
        Ok(out)
    }
}

/// A count of scattered elements above a threshold, prepared once.
pub struct CountPlan<'s> {
    set: &'s DeviceSet,
    launches: Vec<Option<CountLaunch<'s>>>,
    empty: Vec<Option<Buffer<u64>>>,
    results: Vec<Buffer<u64>>,
}

impl<'s> CountPlan<'s> {
    /// Prepares the fastest counting kernel over every slice of `x`.
    ///
    /// # Errors
    /// A device's error.
    pub fn new(set: &'s DeviceSet, x: &'s Scattered<f32>, threshold: f32) -> Result<CountPlan<'s>> {
        let lens = x.check_set(set)?;
        let mut launches = Vec::new();
        for ((t, part), &n) in set.targets().iter().zip(x.parts()).zip(&lens) {
            launches.push(if n == 0 {
                None
            } else {
                let kernel = CountKernel::Vec4;
                let cfg = count_config(t, kernel, n, None)?;
                Some(CountLaunch::new(
                    t,
                    kernel,
                    part,
                    n,
                    threshold,
                    cfg,
                    MutexBounds::default(),
                )?)
            });
        }
        let empty = identity_parts(set, &lens, &[0u64])?;
        Ok(CountPlan {
            set,
            launches,
            empty,
            results: result_buffers(set, 1)?,
        })
    }

    /// Every device's count, queued at once, then the counts added.
    ///
    /// # Errors
    /// A launch, driver or NCCL error.
    pub fn run(&self, combiner: &Combiner) -> Result<u64> {
        for l in self.launches.iter().flatten() {
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
        let counts = self
            .launches
            .iter()
            .map(|l| l.as_ref().map(CountLaunch::count_buffer));
        let parts = pick(counts, &self.empty)?;
        let out = combiner.combine(self.set, &parts, &refs(&self.results), Op::Sum)?;
        out.first()
            .copied()
            .ok_or_else(|| Error::InvalidInput("no result".into()))
    }
}
