//! The cell list's CSR lists in one launch: count, scan and fill together.
//!
//! The three-launch build ([`cell_count_f32`](super::cell_count_f32), the scan,
//! [`cell_fill_atoms_f32`](super::cell_fill_atoms_f32)) writes every atom's count and first
//! [`KEEP`] neighbors to memory, scans the counts in a launch of their own, and reads both back
//! to write the lists. Here each block takes a tile of atoms by a ticket, as the scan does
//! ([`LookBack`]): its threads search their atoms' neighbors (keeping the first [`KEEP`] in
//! shared memory), the block scans the counts, its first warp looks back for the tile's prefix,
//! and each thread writes its offset and its sorted list there. The counts and the kept
//! neighbors never leave the block.
//!
//! One thread per atom in the input's order (finding the sorted position from the bin's `cell`
//! and `rank`), because the offsets follow the atoms' indices. The host does not know the total
//! beforehand: a row is written only where it ends inside `capacity`, every offset and the total
//! always; where the total passes the capacity the host grows the buffer and runs the launch
//! again.

use super::cells::{search, write_row};
use super::scan::{TileSlots, clear_for_next, scan_shared_bytes};
use super::{CellGrid, Coord, KEEP, LookBack, Rule, Sorted, specialize};
use crate::block_scan::block_exclusive_sum;
use crate::index::{block_dim_x, thread_idx_x};
use crate::mem::Ptr;
use crate::readonly::ldg;
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;

/// Where [`cell_lists_f32`] finds each atom's sorted position, and where it writes the lists.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Lists {
    /// `cell[i]`: atom `i`'s cell, from the bin.
    pub cell: *const u32,
    /// `rank[i]`: atom `i`'s place in its cell, from the bin (its sorted position is
    /// `start[cell[i]] + rank[i]`).
    pub rank: *const u32,
    /// `n + 1` offsets: atom `i`'s list is `indices[offsets[i]..offsets[i + 1]]` (truncated to
    /// `u32`; the exact total is the look-back's).
    pub offsets: *mut u32,
    /// `capacity` words.
    pub indices: *mut u32,
    /// Words in `indices`: a row is written only where it ends inside them.
    pub capacity: u32,
}

/// Bytes of dynamic shared memory [`cell_lists_f32`] needs in a block of `threads` threads: the
/// scan's, then [`KEEP`] kept neighbors per thread.
pub const fn lists_shared_bytes(threads: u32) -> u32 {
    scan_shared_bytes(threads) + KEEP as u32 * threads * size_of::<u32>() as u32
}

/// The kernels' body: see the module.
///
/// # Safety
/// As the kernels' contract.
#[inline(always)]
unsafe fn lists<T: Coord>(
    sorted: Sorted<T>,
    n: u32,
    start: *const u32,
    grid: CellGrid<T>,
    rule: Rule<T>,
    out: Lists,
    lb: LookBack,
) {
    let n = n as usize;
    let threads = block_dim_x() as usize;
    let tiles = n.div_ceil(threads).max(1);
    let thread = thread_idx_x() as usize;
    let d3 = sorted.atoms().is_3d(&rule);
    // SAFETY: the launch gave `lists_shared_bytes`: the scan's, then the kept slots.
    let (slots, kept) = unsafe {
        (
            TileSlots::after_scratch(),
            Ptr::new(dynamic_shared::<u32>()).add(scan_shared_bytes(threads as u32) as usize / 4),
        )
    };
    // Slot `k` of this thread: consecutive threads' `k`-th slots side by side (no bank
    // conflicts).
    // SAFETY: `k < KEEP`, inside the kept slots.
    let kept_at = |k: usize| unsafe { kept.add(k * threads + thread) };
    let offsets = Ptr::new(out.offsets);
    loop {
        // SAFETY: every thread of the block is here; `lb`'s contract.
        let t = unsafe { slots.next_tile(lb, thread) };
        if t >= tiles {
            break;
        }
        // SAFETY: `lb`'s contract.
        unsafe { clear_for_next(lb, t, tiles, thread) };
        let i = t * threads + thread;
        let (mut p, mut found) = (n, 0);
        if i < n {
            // SAFETY: `i < n`; the bin's `cell` and `rank` and the starts are read-only here. A
            // position past the sorted atoms (inputs that do not belong together) finds
            // nothing.
            unsafe {
                p = (ldg(start.add(ldg(out.cell.add(i)) as usize)) + ldg(out.rank.add(i))) as usize;
                if p < n {
                    let keep = |k: usize, j: u32| {
                        if k < KEEP {
                            kept_at(k).store(j);
                        }
                    };
                    found = specialize!(
                        d3,
                        rule.is_periodic(),
                        search::<T>(sorted, start, &grid, &rule, p, keep)
                    );
                }
            }
        }
        // SAFETY: the launch gave the scratch; every thread of the block is here.
        let (before, aggregate) = unsafe { block_exclusive_sum(found as u64) };
        // SAFETY: every thread of the block is here; `lb`'s contract; `offsets` holds `n + 1`.
        let at = unsafe {
            slots.prefix(lb, (t, tiles), aggregate, thread, |total| {
                offsets.add(n).store(total as u32)
            })
        }
        .wrapping_add(before);
        if i < n {
            // SAFETY: `i < n`; row `i` is `at..at + found`, this thread's alone, written only
            // inside the capacity; the kept slots are this thread's, written above.
            unsafe {
                offsets.add(i).store(at as u32);
                if found > 0 && at + found as u64 <= out.capacity as u64 {
                    let list = Ptr::new(out.indices).add(at as usize);
                    write_row(sorted, start, &grid, &rule, d3, p, (list, found), kept_at);
                }
            }
        }
        // The next tile reuses the scratch, the slots and the kept neighbors.
        sync_threads();
    }
}

macro_rules! lists_kernels {
    ($($t:ty: $lists:ident;)*) => {$(
        kernel! {
            #[doc = concat!("Cell list, CSR in one pass (`", stringify!($t), "`): every atom's neighbors counted, scanned into `out.offsets` and written, sorted, into `out.indices` in one launch — the module's method, with [`LookBack`]'s tiles of one atom per thread.")]
            #[doc = ""]
            #[doc = "Any grid and block size its registers allow, with [`lists_shared_bytes`] of dynamic shared memory; `lb` as its fields say, with a word for each tile of `block_dim` atoms; the sorted atoms and starts from the bin, scan and scatter, none written during the launch; `out` as its fields say."]
            pub unsafe fn $lists(
                sorted: Sorted<$t>, n: u32, start: *const u32, grid: CellGrid<$t>,
                rule: Rule<$t>, out: Lists, lb: LookBack,
            ) {
                // SAFETY: the kernel's contract.
                unsafe { lists(sorted, n, start, grid, rule, out, lb) }
            }
        }
    )*};
}

lists_kernels! {
    f32: cell_lists_f32;
    f64: cell_lists_f64;
}
