//! The device-wide exclusive scan of `u32` counts (`gpu::lessons::neighbor::scan_lookback`):
//! its scratch and its one launch.

use super::atoms::per_item;
use crate::runtime::buffer::Buffer;
use crate::runtime::enqueue::device_to_host;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::pinned::PinnedBuffer;
use crate::runtime::wait::wait_bound;
use gpu::LaunchConfig;
use gpu::lessons::neighbor::{LookBack, SCAN_TILE, THREADS_PER_BLOCK, scan_shared_bytes};
use std::cell::Cell;

/// The most counts one scan takes: the kernels take the length as a `u32`, and the output
/// holds one value more.
pub(super) const MAX_SCAN_LEN: usize = u32::MAX as usize - 1;

/// How long a tile may wait for the tiles before it: "never in practice" (they are running, and
/// a tile publishes its sum within microseconds), stretched under a sanitizer.
const LOOK_BACK_TIMEOUT_NS: u64 = 1_000_000_000;

/// The scratch of one device-wide scan of up to `capacity` counts: two sets of tile words and
/// tickets (each scan clears the other set for the next), and the total beside the timeout
/// count (one read for both).
pub(super) struct Scan<'a> {
    /// `2 * tiles` words: set 0, then set 1.
    words: Buffer<u64>,
    tickets: Buffer<u32>,
    tiles: usize,
    /// `[total, timeouts]`: the scan's total, and the count of tiles that timed out in its
    /// low 32 bits.
    status: Buffer<u64>,
    /// On a GPU, pinned memory the status is copied into after the kernels that read the total
    /// (one round trip to read it, where a copy into pageable memory would take two).
    report: Option<PinnedBuffer<'a, u64>>,
    /// The set the next scan uses.
    set: Cell<usize>,
    capacity: usize,
}

/// The tiles of a scan of `len` counts (one for none: it still writes the total).
fn tiles_of(len: usize) -> usize {
    len.div_ceil(SCAN_TILE as usize).max(1)
}

impl<'a> Scan<'a> {
    /// Scratch for scans of up to `capacity` counts.
    ///
    /// # Errors
    /// [`Error::TooLarge`] past [`MAX_SCAN_LEN`]; an allocation error.
    pub(super) fn new(target: &'a Target, capacity: usize) -> Result<Scan<'a>> {
        check_len(capacity)?;
        let tiles = tiles_of(capacity);
        Ok(Scan {
            words: target.zeros(2 * tiles)?,
            tickets: target.zeros(2)?,
            tiles,
            status: target.zeros(2)?,
            report: match target {
                Target::Gpu(gpu) => Some(PinnedBuffer::new(gpu, 2, 0)?),
                Target::Sim => None,
            },
            set: Cell::new(0),
            capacity,
        })
    }

    /// Queues the exclusive scan of `counts[..len]` into `out[..=len]` (`out[len]` = the total,
    /// truncated to `u32`; the exact total stays in `self.total`).
    ///
    /// # Errors
    /// [`Error::TooLarge`] past the capacity the scratch was made for; a launch error.
    ///
    /// # Safety
    /// `counts` holds at least `len` values and `out` `len + 1`, apart; both live until the scan
    /// ends.
    pub(super) unsafe fn run(
        &self,
        t: &Target,
        counts: *const u32,
        len: usize,
        out: *mut u32,
    ) -> Result<()> {
        check_len(len)?;
        if len > self.capacity {
            return Err(Error::InvalidInput(format!(
                "a scan of {len} counts in scratch for {}",
                self.capacity
            )));
        }
        let lb = LookBack::alternating(
            (self.words.ptr(), self.tickets.ptr(), self.tiles),
            self.set.get(),
            self.status.ptr(),
            // The low half of the second word (both targets are little-endian).
            self.status.ptr().wrapping_add(1).cast(),
            wait_bound(LOOK_BACK_TIMEOUT_NS),
        );
        let tiles = tiles_of(len);
        let cfg = LaunchConfig::linear(
            per_item(t, tiles * THREADS_PER_BLOCK as usize).grid.x,
            THREADS_PER_BLOCK,
        )
        .with_shared_bytes(scan_shared_bytes(THREADS_PER_BLOCK));
        // SAFETY: the caller's sizes; set `this` was cleared by the scan before (or is fresh),
        // and nothing else uses the scratch while the scan runs.
        unsafe {
            crate::launch!(
                t,
                gpu::lessons::neighbor::scan_lookback,
                cfg,
                (counts, len as u32, out, lb)
            )?;
        }
        self.set.set(1 - self.set.get());
        Ok(())
    }

    /// Where the last scan leaves its exact total, for kernels queued after it.
    pub(super) fn total_ptr(&self) -> *const u64 {
        self.status.ptr().cast_const()
    }

    /// The total of the last scan, read after the kernels queued so far (waits for them).
    ///
    /// # Errors
    /// [`Error::WaitTimeout`] if a tile waited past its bound for the tiles before it (the
    /// offsets are then wrong); a driver error.
    pub(super) fn total(&mut self, t: &Target) -> Result<u64> {
        let (total, timeouts) = match (t, self.report.as_mut()) {
            (Target::Gpu(gpu), Some(report)) => {
                // SAFETY: `report` is not touched by the host until the stream has finished
                // the copy (the synchronization right after).
                unsafe { device_to_host(gpu, gpu.stream(), &self.status, 0, report)? };
                gpu.synchronize()?;
                (report[0], report[1])
            }
            _ => match t.download(&self.status)?[..] {
                [total, timeouts] => (total, timeouts),
                ref other => {
                    return Err(Error::InvalidInput(format!(
                        "the device scan's status: {} words, not 2",
                        other.len()
                    )));
                }
            },
        };
        if timeouts != 0 {
            t.clear(&self.status)?;
            return Err(Error::WaitTimeout(
                "the device scan: a tile waited past its bound for the tiles before it".into(),
            ));
        }
        Ok(total)
    }
}

/// Refuses a scan longer than the kernels' `u32` length.
fn check_len(len: usize) -> Result<()> {
    Error::check_index_limit(len as u64, MAX_SCAN_LEN as u64, "counts", || {
        format!("a scan of {len} counts")
    })
}
