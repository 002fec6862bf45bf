//! The device-wide exclusive scan of `u32` counts (`gpu::lessons::neighbor::scan_*`): its
//! scratch and its three launches.

use super::atoms::per_item;
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use gpu::LaunchConfig;
use gpu::block_scan::block_scan_shared_bytes;
use gpu::lessons::neighbor::{SCAN_TILE, THREADS_PER_BLOCK};

/// The most counts one scan takes: the kernels take the length as a `u32`, and the output
/// holds one value more.
pub(super) const MAX_SCAN_LEN: usize = u32::MAX as usize - 1;

/// The scratch of one device-wide scan of up to `capacity` counts.
pub(super) struct Scan {
    tile_sums: Buffer<u64>,
    total: Buffer<u64>,
    capacity: usize,
}

impl Scan {
    /// Scratch for scans of up to `capacity` counts.
    ///
    /// # Errors
    /// [`Error::TooLarge`] past [`MAX_SCAN_LEN`]; an allocation error.
    pub(super) fn new(target: &Target, capacity: usize) -> Result<Scan> {
        check_len(capacity)?;
        Ok(Scan {
            tile_sums: target.zeros(capacity.div_ceil(SCAN_TILE as usize).max(1))?,
            total: target.zeros(1)?,
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
        let tiles = len.div_ceil(SCAN_TILE as usize);
        let shared = block_scan_shared_bytes::<u64>(THREADS_PER_BLOCK);
        let (n, sums, total) = (len as u32, self.tile_sums.ptr(), self.total.ptr());
        let tiles_cfg = LaunchConfig::linear(
            per_item(t, tiles * THREADS_PER_BLOCK as usize).grid.x,
            THREADS_PER_BLOCK,
        )
        .with_shared_bytes(shared);
        let one = LaunchConfig::linear(1, THREADS_PER_BLOCK).with_shared_bytes(shared);
        // SAFETY: the caller's sizes; `tile_sums` holds one value per tile, `total` one.
        unsafe {
            crate::launch!(
                t,
                gpu::lessons::neighbor::scan_tiles,
                tiles_cfg,
                (counts, n, out, sums)
            )?;
            crate::launch!(
                t,
                gpu::lessons::neighbor::scan_tile_sums,
                one,
                (sums, tiles as u32, total, out, n)
            )?;
            crate::launch!(
                t,
                gpu::lessons::neighbor::scan_add,
                per_item(t, len),
                (out, n, sums.cast_const())
            )
        }
    }

    /// Where the last scan leaves its exact total, for kernels queued after it.
    pub(super) fn total_ptr(&self) -> *const u64 {
        self.total.ptr().cast_const()
    }

    /// The total of the last scan (waits for it).
    pub(super) fn total(&self, t: &Target) -> Result<u64> {
        t.synchronize()?;
        Ok(t.download(&self.total)?[0])
    }
}

/// Refuses a scan longer than the kernels' `u32` length.
fn check_len(len: usize) -> Result<()> {
    Error::check_index_limit(len as u64, MAX_SCAN_LEN as u64, "counts", || {
        format!("a scan of {len} counts")
    })
}
