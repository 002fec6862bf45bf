//! Data kept on the devices: one contiguous slice per device ([`Scattered`]), uploaded through
//! pinned staging, and prepared plans that run the single-GPU kernel on every slice at once
//! and combine the partials on the GPUs ([`Combiner`]) — the path for data that is used more
//! than once, and the one `gridsync bench multi` times.

use super::combine::{Combiner, Op, Partial};
use super::{DeviceSet, split};
use crate::count_above::{CountKernel, CountLaunch, config_for as count_config};
use crate::histogram::{Bins, HistogramLaunch, config_for as hist_config, fastest_kernel};
use crate::primitives::lock::MutexBounds;
use crate::reduce::DeviceReduction;
use crate::reduce::{SinglePass, SinglePassKernel};
use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::error::{Error, Result, check};
use crate::runtime::launch::Target;
use crate::runtime::pinned::PinnedBuffer;
use crate::runtime::timer::Event;
use cust::memory::DeviceCopy;
use cust::sys as cu;

/// Bytes per pinned staging buffer (two per device): large enough that each copy runs at the
/// link's speed, small enough to pin quickly.
pub const STAGE_BYTES: usize = 32 << 20;

/// `data`, split as [`split`] does, one slice in each device's memory.
pub struct Scattered<T: Plain> {
    parts: Vec<Buffer<T>>,
    len: usize,
}

impl<T: Plain> Scattered<T> {
    /// Zeroed slices for `len` elements over `set`.
    ///
    /// # Errors
    /// A device's error (out of memory).
    pub fn zeros(set: &DeviceSet, len: usize) -> Result<Scattered<T>> {
        let parts = set
            .targets()
            .iter()
            .zip(split(len, set.len()))
            .map(|(t, r)| t.zeros(r.len()))
            .collect::<Result<_>>()?;
        Ok(Scattered { parts, len })
    }

    /// Elements in all.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The slices, in device order.
    pub fn parts(&self) -> &[Buffer<T>] {
        &self.parts
    }

    /// Overwrites every slice from `data` (the same length), every device's copy queued at
    /// once: from page-locked memory (a [`PinnedBuffer`]) the copies run in parallel over each
    /// GPU's own link; from pageable memory the driver stages them one after another.
    /// Returns when every copy has finished.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for another length; a driver error.
    pub fn copy_from(&self, set: &DeviceSet, data: &[T]) -> Result<()> {
        if data.len() != self.len {
            return Err(Error::InvalidInput(format!(
                "copying {} elements into {} scattered ones",
                data.len(),
                self.len
            )));
        }
        let slices = split(self.len, set.len());
        for ((t, part), r) in set.targets().iter().zip(&self.parts).zip(slices) {
            match t {
                Target::Sim => t.write(part, &data[r])?,
                Target::Gpu(g) if !r.is_empty() => {
                    g.make_current()?;
                    // SAFETY: `part` owns `r.len()` elements; `data[r]` is as many readable
                    // elements, borrowed until every stream is synchronized below.
                    let code = unsafe {
                        cu::cuMemcpyHtoDAsync_v2(
                            part.ptr() as u64,
                            data[r.clone()].as_ptr().cast(),
                            r.len() * size_of::<T>(),
                            g.stream().as_raw(),
                        )
                    };
                    check(code, || {
                        format!("cuMemcpyHtoDAsync({} bytes)", r.len() * size_of::<T>())
                    })?;
                }
                Target::Gpu(_) => {}
            }
        }
        for t in set.targets() {
            t.synchronize()?;
        }
        Ok(())
    }
}

impl DeviceSet {
    /// Uploads `data` from ordinary (pageable) host memory, one slice per device, every device
    /// at once (a host thread each): each device's slice goes through two pinned staging
    /// buffers of [`STAGE_BYTES`], filled by several host threads (the host's cores shared
    /// among the devices) while the GPU's copy engine empties the other.
    ///
    /// # Errors
    /// A device's error (out of device or pinned memory).
    pub fn scatter<T: Plain + DeviceCopy>(&self, data: &[T]) -> Result<Scattered<T>> {
        let copiers = self.copiers();
        let parts = self.map_slices(data.len(), |_, t, r| upload_staged(t, &data[r], copiers))?;
        Ok(Scattered {
            parts,
            len: data.len(),
        })
    }
}

impl DeviceSet {
    /// Host threads each device's staged upload may use to fill its staging buffers: the
    /// cores shared among the devices, at most [`MAX_COPIERS`].
    pub(crate) fn copiers(&self) -> usize {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores / self.len().max(1)).clamp(1, MAX_COPIERS)
    }
}

/// Most host threads filling one device's staging buffers: one thread copies pageable memory at
/// about 5–10 GB/s, a PCIe 5 or NVLink-C2C link takes 55 GB/s and more.
pub const MAX_COPIERS: usize = 8;

/// `dst.copy_from_slice(src)` by `threads` threads.
fn par_copy<T: Copy + Send + Sync>(dst: &mut [T], src: &[T], threads: usize) {
    if threads <= 1 || src.len() < 1 << 16 {
        dst.copy_from_slice(src);
        return;
    }
    let step = src.len().div_ceil(threads);
    std::thread::scope(|s| {
        for (d, c) in dst.chunks_mut(step).zip(src.chunks(step)) {
            s.spawn(move || d.copy_from_slice(c));
        }
    });
}

/// `data` uploaded to `t` through two pinned buffers used in turn, each filled by `copiers`
/// host threads (small inputs directly).
pub(crate) fn upload_staged<T: Plain + DeviceCopy>(
    t: &Target,
    data: &[T],
    copiers: usize,
) -> Result<Buffer<T>> {
    let chunk = (STAGE_BYTES / size_of::<T>().max(1)).max(1);
    let gpu = match t {
        Target::Gpu(g) if data.len() > 2 * chunk => g,
        _ => return t.upload(data),
    };
    let buf = t.zeros::<T>(data.len())?;
    let mut stages = [
        PinnedBuffer::new(gpu, chunk, data[0])?,
        PinnedBuffer::new(gpu, chunk, data[0])?,
    ];
    let done = [Event::new()?, Event::new()?];
    for (i, part) in data.chunks(chunk).enumerate() {
        let b = i % 2;
        if i >= 2 {
            // The copy that last read this stage has finished.
            done[b].synchronize()?;
        }
        par_copy(&mut stages[b][..part.len()], part, copiers);
        let bytes = std::mem::size_of_val(part);
        gpu.make_current()?;
        // SAFETY: the destination is inside `buf` (chunk `i` of `data.len()` elements); the
        // stage holds `part`, is page-locked, and is not written again until `done[b]` says
        // this copy is over (or freed before the synchronize below).
        let code = unsafe {
            cu::cuMemcpyHtoDAsync_v2(
                buf.ptr() as u64 + (i * chunk * size_of::<T>()) as u64,
                stages[b].as_ptr().cast(),
                bytes,
                gpu.stream().as_raw(),
            )
        };
        check(code, || format!("cuMemcpyHtoDAsync({bytes} bytes)"))?;
        done[b].record(gpu.stream())?;
    }
    gpu.synchronize()?;
    Ok(buf)
}

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

fn part_lens<T: Plain>(x: &Scattered<T>) -> Vec<usize> {
    x.parts.iter().map(Buffer::len).collect()
}

/// A reduction `R` of scattered data, prepared once (kernels, scratch and result buffers on
/// every device) and run any number of times: every device reduces its slice, the partials
/// are combined with `op` on the GPUs.
pub struct ReducePlan<'s, R: DeviceReduction> {
    set: &'s DeviceSet,
    x: &'s Scattered<R::Item>,
    passes: Vec<Option<SinglePass<'s, R>>>,
    empty: Vec<Option<Buffer<R::Out>>>,
    op: Op,
}

impl<'s, R: DeviceReduction<Out: Partial>> ReducePlan<'s, R> {
    /// Prepares `R` over `x`, combining with `op`.
    ///
    /// # Errors
    /// A device's error.
    pub fn new(set: &'s DeviceSet, x: &'s Scattered<R::Item>, op: Op) -> Result<ReducePlan<'s, R>> {
        let lens = part_lens(x);
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
        let empty = identity_parts(set, &lens, &[R::finish(R::identity())])?;
        Ok(ReducePlan {
            set,
            x,
            passes,
            empty,
            op,
        })
    }

    /// Every device's kernel, queued at once, then the combine.
    ///
    /// # Errors
    /// A launch, driver or NCCL error.
    pub fn run(&self, combiner: &Combiner) -> Result<R::Out> {
        for (p, part) in self.passes.iter().zip(&self.x.parts) {
            if let Some(p) = p {
                p.launch(part, part.len())?;
            }
        }
        self.combine(combiner)
    }

    /// The combine step alone, over the partials the last [`ReducePlan::run`] left (to time
    /// it; with NCCL the partials are replaced by the result).
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
        Ok(combiner.combine(self.set, &parts, self.op)?[0])
    }
}

/// A histogram of scattered bytes, prepared once: every device counts its slice, the bins are
/// added on the GPUs.
pub struct HistogramPlan<'s> {
    set: &'s DeviceSet,
    launches: Vec<Option<HistogramLaunch<'s>>>,
    empty: Vec<Option<Buffer<u64>>>,
    bins: Bins,
}

impl<'s> HistogramPlan<'s> {
    /// Prepares the fastest histogram kernel over every slice of `x`.
    ///
    /// # Errors
    /// A device's error.
    pub fn new(set: &'s DeviceSet, x: &'s Scattered<u8>, bins: Bins) -> Result<HistogramPlan<'s>> {
        let lens = part_lens(x);
        let mut launches = Vec::new();
        for ((t, part), &n) in set.targets().iter().zip(&x.parts).zip(&lens) {
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
        let out = combiner.combine(self.set, &pick(bins.into_iter(), &self.empty)?, Op::Sum)?;
        debug_assert_eq!(out.len(), self.bins.count() as usize);
        Ok(out)
    }
}

/// A count of scattered elements above a threshold, prepared once.
pub struct CountPlan<'s> {
    set: &'s DeviceSet,
    launches: Vec<Option<CountLaunch<'s>>>,
    empty: Vec<Option<Buffer<u64>>>,
}

impl<'s> CountPlan<'s> {
    /// Prepares the fastest counting kernel over every slice of `x`.
    ///
    /// # Errors
    /// A device's error.
    pub fn new(set: &'s DeviceSet, x: &'s Scattered<f32>, threshold: f32) -> Result<CountPlan<'s>> {
        let lens = part_lens(x);
        let mut launches = Vec::new();
        for ((t, part), &n) in set.targets().iter().zip(&x.parts).zip(&lens) {
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
        Ok(combiner.combine(self.set, &pick(counts, &self.empty)?, Op::Sum)?[0])
    }
}
