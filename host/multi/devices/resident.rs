//! Data kept on the devices: one contiguous slice per device ([`Scattered`]), uploaded through
//! pinned staging or copied from pinned memory on every link at once — the input of the plans
//! ([`ReducePlan`](crate::multi::ReducePlan) and the others), for data used more than once.

use super::{DeviceSet, split};
use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::enqueue;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::memory::Footprint;
use crate::runtime::pinned::PinnedBuffer;
use crate::runtime::timer::Event;
use cust::memory::DeviceCopy;

/// Bytes per pinned staging buffer (two per device): large enough that each copy runs at the
/// link's speed, small enough to pin quickly.
pub const STAGE_BYTES: usize = 32 << 20;

/// `data`, split as [`split`] does, one slice in each device's memory.
pub struct Scattered<T: Plain> {
    parts: Vec<Buffer<T>>,
    len: usize,
    /// The devices the parts are on (`None`: a simulator), to refuse another set.
    devices: Vec<Option<u32>>,
}

impl<T: Plain> Scattered<T> {
    /// Zeroed slices for `len` elements over `set`.
    ///
    /// # Errors
    /// A device's error (out of memory).
    pub fn zeros(set: &DeviceSet, len: usize) -> Result<Scattered<T>> {
        let each = Footprint {
            host: 0,
            device: size_of::<T>() as u64,
        };
        let slices = split(len, set.len());
        for (t, r) in set.targets().iter().zip(&slices) {
            crate::runtime::memory::check_elements(t, "a slice of", r.len(), each)?;
        }
        let parts = set
            .targets()
            .iter()
            .zip(slices)
            .map(|(t, r)| t.zeros(r.len()))
            .collect::<Result<_>>()?;
        Ok(Scattered {
            parts,
            len,
            devices: set.ordinals(),
        })
    }

    /// The slices' lengths, after checking that `set` is the set they were made on.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for another set.
    pub(crate) fn check_set(&self, set: &DeviceSet) -> Result<Vec<usize>> {
        if set.ordinals() != self.devices {
            return Err(Error::InvalidInput(format!(
                "data scattered over {} device(s) used with another set ({})",
                self.devices.len(),
                set.describe()
            )));
        }
        Ok(self.parts.iter().map(Buffer::len).collect())
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
        self.check_set(set)?;
        let queued = self.queue_copies(set, data);
        // On success, or when a device refused its copy, every copy already queued reads
        // `data` until its stream is synchronized: wait for all of them either way.
        let mut done = queued;
        for t in set.targets() {
            done = done.and(t.synchronize());
        }
        done
    }

    fn queue_copies(&self, set: &DeviceSet, data: &[T]) -> Result<()> {
        let slices = split(self.len, set.len());
        for ((t, part), r) in set.targets().iter().zip(&self.parts).zip(slices) {
            match t {
                Target::Sim => t.write(part, &data[r])?,
                Target::Gpu(g) if !r.is_empty() => {
                    // SAFETY: `data[r]` is borrowed until every stream is synchronized below.
                    unsafe { enqueue::host_to_device(g, g.stream(), &data[r], part, 0)? };
                }
                Target::Gpu(_) => {}
            }
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
            devices: self.ordinals(),
        })
    }
}

impl DeviceSet {
    /// Host threads each device's staged upload may use to fill its staging buffers: the
    /// total set by [`DeviceSet::set_copiers`], or else the host's cores, shared among the
    /// devices, at least one and at most [`MAX_COPIERS`] each.
    pub(crate) fn copiers(&self) -> usize {
        let total = self.copiers.unwrap_or_else(|| {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            cores.min(MAX_COPIERS * self.len())
        });
        (total / self.len().max(1)).clamp(1, MAX_COPIERS)
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
    let each = Footprint {
        host: 0,
        device: size_of::<T>() as u64,
    };
    crate::runtime::memory::check_elements(t, "a slice of", data.len(), each)?;
    let chunk = (STAGE_BYTES / size_of::<T>().max(1)).max(1);
    let gpu = match (t, data.first()) {
        (Target::Gpu(g), Some(&first)) if data.len() > 2 * chunk => (g, first),
        _ => return t.upload(data),
    };
    let (gpu, first) = gpu;
    let buf = t.zeros::<T>(data.len())?;
    let mut stages = [
        PinnedBuffer::new(gpu, chunk, first)?,
        PinnedBuffer::new(gpu, chunk, first)?,
    ];
    let done = [Event::new()?, Event::new()?];
    let queued = (|| -> Result<()> {
        for (i, part) in data.chunks(chunk).enumerate() {
            let b = i % 2;
            if i >= 2 {
                // The copy that last read this stage has finished.
                done[b].synchronize()?;
            }
            par_copy(&mut stages[b][..part.len()], part, copiers);
            // SAFETY: the stage holds `part`, is page-locked, and is not written again until
            // `done[b]` says this copy is over, nor freed before the synchronize below.
            unsafe {
                let staged = &stages[b][..part.len()];
                enqueue::host_to_device(gpu, gpu.stream(), staged, &buf, i * chunk)?;
            }
            done[b].record(gpu.stream())?;
        }
        Ok(())
    })();
    // Whether or not every chunk was queued, the copies queued read the stages and write
    // `buf`: they end before either is freed.
    let synced = gpu.synchronize();
    queued.and(synced).map(|()| buf)
}
