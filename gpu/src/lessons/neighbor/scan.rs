//! An exclusive prefix sum of `u32` counts over the whole device in one launch, with
//! decoupled look-back — how the counts of atoms per cell become where each cell starts, and
//! the counts of neighbors per atom where each list starts.
//!
//! Each block takes a tile of [`SCAN_TILE`] counts, scans it ([`block_exclusive_sum`]), and
//! needs one more number: the sum of every count before its tile. Waiting for the tile before it
//! to finish would chain the tiles one after another; instead every tile publishes a word as
//! soon as it can ([`LookBack`]):
//!
//! 1. **its aggregate** (flag [`SCAN_AGGREGATE`]), the sum of its own counts, right after its
//!    block scan — it needs nothing from anyone for that;
//! 2. **its inclusive prefix** (flag [`SCAN_PREFIX`]), the sum of everything up to and including
//!    its tile, once it knows its own exclusive prefix.
//!
//! To learn its exclusive prefix, a tile's first warp reads the words of the 128 tiles before it
//! at once (four per lane) and adds, nearest first, the aggregates up to the nearest tile that
//! has published its prefix (adding that prefix and stopping); with no prefix among the 128 it
//! adds all 128 aggregates and looks at the 128 before those. It waits only on a tile that has published
//! nothing yet — which is running: tiles are numbered by a ticket each block takes when it
//! starts ([`fetch_add`]), not by `blockIdx`, so a tile a block waits for was taken by a block
//! that is already resident and needs nobody to publish its aggregate. The wait is bounded all
//! the same (the crate's rule for every wait on another block): past `timeout_ns` the block
//! counts a timeout for the host and gives up.
//!
//! The flag and the sum share one 64-bit word, written and read with relaxed atomics at device
//! scope: one word cannot be seen half-written, so no fence is needed between a sum and its
//! flag. Sums saturate at [`SCAN_SUM_MAX`] (2⁶² − 1): the exact total up to there, "more than any
//! list can hold" past it. The offsets are `u32` (truncated): the host uses them only when the
//! total fits.
//!
//! The words of one scan must start at zero. Two sets alternate: each scan clears the other
//! set (and its ticket) for the next one, so no launch is spent on clearing.

use super::THREADS_PER_BLOCK;
use crate::atomic::{LoadOrder, Order, Scope, StoreOrder, fetch_add, load, store};
use crate::block_reduce::{warp_lanes, warp_mask};
use crate::block_scan::{block_exclusive_sum, block_scan_shared_bytes};
use crate::index::{block_dim_x, thread_idx_x};
use crate::lessons::reduce::Vec16;
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;
use crate::time::globaltimer_ns;
use crate::warp::{WARP_SIZE, any_sync, ballot_sync, lane_id, shfl_sync, shfl_up_sync};

/// Counts each thread of [`scan_lookback`] reads into registers, in blocks of
/// [`THREADS_PER_BLOCK`]: 16-byte loads where the counts are 16-byte aligned.
pub const SCAN_ITEMS: u32 = 8;
/// Counts per tile: one block of [`THREADS_PER_BLOCK`] threads, [`SCAN_ITEMS`] each.
pub const SCAN_TILE: u32 = THREADS_PER_BLOCK * SCAN_ITEMS;
/// The flag of a tile word that holds the tile's aggregate (the sum of its own counts).
pub const SCAN_AGGREGATE: u64 = 1 << 62;
/// The flag of a tile word that holds the tile's inclusive prefix.
pub const SCAN_PREFIX: u64 = 2 << 62;
/// The largest sum a tile word (and the total) holds; sums saturate there.
pub const SCAN_SUM_MAX: u64 = (1 << 62) - 1;
/// Polls of a tile word between two looks at the clock.
const POLLS_PER_CHECK: u32 = 64;
/// Tile words each lane of the looking warp reads at once: a window of 4 × 32 tiles.
const WINDOW_ROUNDS: usize = 4;

/// Where [`scan_lookback`]'s tiles meet, and what it leaves for the host and the next scan.
///
/// The method, decoupled look-back: each block takes a tile by a ticket, scans it, and publishes
/// its sum at once in its word (flag [`SCAN_AGGREGATE`]); its first warp then reads the words of
/// the 128 tiles before it together, adding their sums back to the nearest one that holds its
/// inclusive prefix (flag [`SCAN_PREFIX`]), and publishes its own prefix. A tile only ever waits
/// for a tile taken earlier by a running block; the wait is bounded by `timeout_ns`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LookBack {
    /// One word per tile of this scan (at least `len.div_ceil(SCAN_TILE).max(1)`), zero at the
    /// launch.
    pub words: *mut u64,
    /// This scan's tile counter, zero at the launch.
    pub ticket: *mut u32,
    /// The next scan's words, `next_len` of them: zeroed by this one.
    pub next_words: *mut u64,
    /// How many `next_words` there are.
    pub next_len: u32,
    /// The next scan's tile counter: zeroed by this one.
    pub next_ticket: *mut u32,
    /// Gets the total of the counts (saturating at [`SCAN_SUM_MAX`]).
    pub total: *mut u64,
    /// Counts the blocks that waited past `timeout_ns` for a tile before theirs (then their
    /// offsets are wrong); zero at the launch.
    pub timeouts: *mut u32,
    /// The bound of one block's wait for the tiles before it.
    pub timeout_ns: u64,
}

impl LookBack {
    /// The look-back of a scan on one of two sets of scratch that alternate: `words` holds
    /// `2 * tiles` words (set 0, then set 1) and `tickets` two counters (set 0's, then set 1's).
    /// The scan uses set `set % 2` — zero at its launch — and clears the other for the next one.
    /// `total`, `timeouts` and `timeout_ns` as the fields say.
    #[inline]
    pub fn alternating(
        (words, tickets, tiles): (*mut u64, *mut u32, usize),
        set: usize,
        total: *mut u64,
        timeouts: *mut u32,
        timeout_ns: u64,
    ) -> LookBack {
        let (this, next) = (set % 2, 1 - set % 2);
        // Set `s` is `words[s * tiles..]` and `tickets[s]`, inside the caller's buffers.
        LookBack {
            words: words.wrapping_add(this * tiles),
            ticket: tickets.wrapping_add(this),
            next_words: words.wrapping_add(next * tiles),
            next_len: tiles as u32,
            next_ticket: tickets.wrapping_add(next),
            total,
            timeouts,
            timeout_ns,
        }
    }
}

/// Bytes of dynamic shared memory [`scan_lookback`] needs in a block of `threads` threads.
pub const fn scan_shared_bytes(threads: u32) -> u32 {
    block_scan_shared_bytes::<u64>(threads) + 2 * size_of::<u64>() as u32
}

kernel! {
    /// The exclusive scan of `counts[..len]` into `out[..=len]` in one launch: `out[i]` = the
    /// sum of the counts before `i`, `out[len]` = the total (both truncated to `u32`), and the
    /// total, exact up to [`SCAN_SUM_MAX`], at `lb.total` (the method: [`LookBack`]).
    ///
    /// Any grid (one block per tile, `len.div_ceil(SCAN_TILE).max(1)` blocks, is the fastest;
    /// a block takes tiles until none are left) and any block size its registers allow (up to
    /// 1024 threads from the sm_90 build; the sm_70 and sm_80 builds take more registers, and
    /// the driver refuses a launch past them with an error), with
    /// [`scan_shared_bytes`] of dynamic shared memory; [`SCAN_ITEMS`] counts per thread held in
    /// registers in blocks of [`THREADS_PER_BLOCK`], longer runs read twice in smaller blocks.
    /// `counts` and `out` hold `len` and `len + 1` values and do not overlap; `lb` as its
    /// fields say.
    pub unsafe fn scan_lookback(counts: *const u32, len: u32, out: *mut u32, lb: LookBack) {
        let len = len as usize;
        let tile = SCAN_TILE as usize;
        let tiles = len.div_ceil(tile).max(1);
        let items = tile.div_ceil(block_dim_x() as usize);
        let thread = thread_idx_x() as usize;
        // After the block scan's scratch: the tile's exclusive prefix and its number.
        // SAFETY: the launch gave `scan_shared_bytes` bytes.
        let slots = unsafe {
            Ptr::new(dynamic_shared::<u64>())
                .add(block_scan_shared_bytes::<u64>(block_dim_x()) as usize / 8)
        };
        let (prefix_slot, ticket_slot) = (slots, unsafe { slots.add(1) });
        // Whole 16-byte words of counts and offsets where both arrays start on a boundary (a
        // run of eight starts on one then: tiles and runs are multiples of eight counts).
        let aligned = (counts as usize | out as usize).is_multiple_of(16);
        let (counts, out) = (Ptr::new(counts.cast_mut()), Ptr::new(out));
        loop {
            if thread == 0 {
                // SAFETY: the ticket is only ever accessed atomically; the slot is this
                // thread's until the barrier below.
                unsafe {
                    let t = fetch_add(lb.ticket, 1, Scope::Device, Order::Relaxed);
                    ticket_slot.store(t as u64);
                }
            }
            sync_threads();
            // SAFETY: written above, before the barrier.
            let t = unsafe { ticket_slot.load() } as usize;
            if t >= tiles {
                break;
            }
            // SAFETY: `lb`'s contract.
            unsafe { clear_for_next(lb, t, tiles, thread) };
            let end = ((t + 1) * tile).min(len);
            let first = t * tile + thread * items;
            let run = first.min(end)..(first + items).min(end);
            // The thread's run: in registers, or summed now and read again to write.
            let mut mine = [0u32; SCAN_ITEMS as usize];
            let mut sum = 0u64;
            if items == SCAN_ITEMS as usize {
                // SAFETY: in bounds (whole 16-byte words only where aligned and inside).
                unsafe { load_run(counts, first, end, aligned, &mut mine) };
                for v in &mine {
                    sum += *v as u64;
                }
            } else {
                for i in run.clone() {
                    // SAFETY: in bounds.
                    sum += unsafe { counts.add(i).load() } as u64;
                }
            }
            // SAFETY: the launch gave the scratch; every thread of the block is here.
            let (before, aggregate) = unsafe { block_exclusive_sum(sum) };
            if thread < WARP_SIZE as usize {
                // SAFETY: `lb`'s contract; the slot is read after the barrier below.
                unsafe {
                    let exclusive = look_back(lb, t, aggregate);
                    if thread == 0 {
                        prefix_slot.store(exclusive);
                        if t == tiles - 1 {
                            let total = exclusive.saturating_add(aggregate).min(SCAN_SUM_MAX);
                            Ptr::new(lb.total).store(total);
                            out.add(len).store(total as u32);
                        }
                    }
                }
            }
            sync_threads();
            // SAFETY: written before the barrier.
            let at = unsafe { prefix_slot.load() }.wrapping_add(before);
            if items == SCAN_ITEMS as usize {
                // SAFETY: in bounds; each thread writes its own run.
                unsafe { store_run(out, first, end, aligned, &mine, at) };
            } else {
                let mut at = at;
                for i in run {
                    // SAFETY: in bounds; each thread writes its own run, which `counts` does
                    // not overlap.
                    let v = unsafe {
                        out.add(i).store(at as u32);
                        counts.add(i).load()
                    };
                    at = at.wrapping_add(v as u64);
                }
            }
            // The next tile reuses the scratch and the slots.
            sync_threads();
        }
    }
}

/// Reads the run of [`SCAN_ITEMS`] counts from `first` into `mine` (zero past `end`): as
/// 16-byte words where `aligned` and the run is whole, else one count at a time.
///
/// # Safety
/// `counts` holds `end` values; `aligned` only if `counts` is 16-byte aligned and `first` a
/// multiple of four.
#[inline(always)]
unsafe fn load_run(
    counts: Ptr<u32>,
    first: usize,
    end: usize,
    aligned: bool,
    mine: &mut [u32; SCAN_ITEMS as usize],
) {
    if aligned && first + SCAN_ITEMS as usize <= end {
        // SAFETY: whole words inside, aligned (the caller's contract).
        let words = unsafe { counts.add(first).cast::<Vec16<u32, 4>>() };
        for (w, four) in mine.chunks_exact_mut(4).enumerate() {
            // SAFETY: as above.
            four.copy_from_slice(&unsafe { words.add(w).load() }.0);
        }
    } else {
        for (k, v) in mine.iter_mut().enumerate() {
            if first + k < end {
                // SAFETY: in bounds.
                *v = unsafe { counts.add(first + k).load() };
            }
        }
    }
}

/// Writes the exclusive prefix sums of `mine` from `at` to `out[first..]` (those below
/// `end`), as [`load_run`] reads them.
///
/// # Safety
/// As [`load_run`] for `out`.
#[inline(always)]
unsafe fn store_run(
    out: Ptr<u32>,
    first: usize,
    end: usize,
    aligned: bool,
    mine: &[u32; SCAN_ITEMS as usize],
    mut at: u64,
) {
    let mut sums = [0u32; SCAN_ITEMS as usize];
    for (s, v) in sums.iter_mut().zip(mine) {
        *s = at as u32;
        at = at.wrapping_add(*v as u64);
    }
    if aligned && first + SCAN_ITEMS as usize <= end {
        // SAFETY: whole words inside, aligned (the caller's contract).
        let words = unsafe { out.add(first).cast::<Vec16<u32, 4>>() };
        for (w, four) in sums.chunks_exact(4).enumerate() {
            // SAFETY: as above.
            unsafe {
                words
                    .add(w)
                    .store(Vec16([four[0], four[1], four[2], four[3]]))
            };
        }
    } else {
        for (k, s) in sums.iter().enumerate() {
            if first + k < end {
                // SAFETY: in bounds.
                unsafe { out.add(first + k).store(*s) };
            }
        }
    }
}

/// Tile `t`'s share of clearing the next scan's words (those `t`, `t + tiles`, … below
/// `next_len`), and its ticket (tile 0). Nothing reads them during this scan.
///
/// # Safety
/// `lb`'s contract.
#[inline(always)]
unsafe fn clear_for_next(lb: LookBack, t: usize, tiles: usize, thread: usize) {
    let words = Ptr::new(lb.next_words);
    let mut k = t + tiles * thread;
    while k < lb.next_len as usize {
        // SAFETY: below `next_len`; each word is this thread's alone.
        unsafe { words.add(k).store(0) };
        k += tiles * block_dim_x() as usize;
    }
    if t == 0 && thread == 0 {
        // SAFETY: as above.
        unsafe { Ptr::new(lb.next_ticket).store(0) };
    }
}

/// The first warp's part of tile `t`: publishes the tile's `aggregate`, looks back over the
/// tiles before it for its exclusive prefix, publishes its inclusive prefix and returns the
/// exclusive one (to every lane). Tile 0 publishes its prefix at once.
///
/// # Safety
/// Every lane of the block's first warp calls it; `lb`'s contract.
#[inline(always)]
unsafe fn look_back(lb: LookBack, t: usize, aggregate: u64) -> u64 {
    let words = Ptr::new(lb.words);
    let lane = lane_id();
    let (mask, lanes) = (warp_mask(), warp_lanes() as usize);
    let publish = |flag: u64, sum: u64| {
        if lane == 0 {
            // SAFETY: `t` is below the number of tiles; words are only ever accessed
            // atomically during the scan.
            unsafe {
                store(
                    words.add(t).as_ptr(),
                    flag | sum,
                    Scope::Device,
                    StoreOrder::Relaxed,
                )
            };
        }
    };
    if t == 0 {
        publish(SCAN_PREFIX, aggregate);
        return 0;
    }
    publish(SCAN_AGGREGATE, aggregate);
    let mut exclusive = 0u64;
    // The window: in round `j`, lane `l` reads tile `end - 1 - (j * lanes + l)`: nearest first,
    // each round's reads side by side.
    let mut end = t;
    let (mut polls, mut since) = (0u32, None);
    loop {
        let mut word = [0u64; WINDOW_ROUNDS];
        for (j, w) in word.iter_mut().enumerate() {
            *w = match end.checked_sub(1 + j * lanes + lane as usize) {
                // SAFETY: below `t`.
                Some(i) => unsafe {
                    load(words.add(i).as_ptr(), Scope::Device, LoadOrder::Relaxed)
                },
                // Before tile 0: nothing to add, and never reached past tile 0's prefix.
                None => SCAN_PREFIX,
            };
        }
        // The lanes that count in each round: every lane up to the nearest prefix.
        let mut needed = [0u32; WINDOW_ROUNDS];
        let mut found = false;
        let mut empty = 0u32;
        for j in 0..WINDOW_ROUNDS {
            let prefixes = ballot_sync(mask, word[j] & SCAN_PREFIX != 0);
            needed[j] = if found {
                0
            } else if prefixes != 0 {
                found = true;
                (((2u64 << prefixes.trailing_zeros()) - 1) as u32) & mask
            } else {
                mask
            };
            empty |= ballot_sync(mask, word[j] >> 62 == 0) & needed[j];
        }
        if empty == 0 {
            let mut mine = 0u64;
            for j in 0..WINDOW_ROUNDS {
                if needed[j] >> lane & 1 != 0 {
                    mine = saturating(mine, word[j] & SCAN_SUM_MAX);
                }
            }
            exclusive = saturating(exclusive, warp_saturating_sum(mine));
            if found {
                break;
            }
            end -= (WINDOW_ROUNDS * lanes).min(end);
            continue;
        }
        // A tile in the window has published nothing yet: poll again, bounded.
        crate::seam::spin::between_polls();
        polls = polls.wrapping_add(1);
        if polls.is_multiple_of(POLLS_PER_CHECK) {
            let now = globaltimer_ns();
            let since = *since.get_or_insert(now);
            // SAFETY: the count is only ever accessed atomically.
            let gave_up = unsafe { load(lb.timeouts, Scope::Device, LoadOrder::Relaxed) } != 0;
            let late = now.wrapping_sub(since) > crate::seam::spin::stretch_bound(lb.timeout_ns);
            // One answer for the warp: the lanes' clocks may differ.
            if any_sync(mask, gave_up || late) {
                if lane == 0 {
                    // SAFETY: as above.
                    unsafe { fetch_add(lb.timeouts, 1, Scope::Device, Order::Relaxed) };
                }
                break;
            }
        }
    }
    publish(SCAN_PREFIX, saturating(exclusive, aggregate));
    exclusive
}

/// `a + b`, at most [`SCAN_SUM_MAX`] (both at most that: no `u64` overflow).
#[inline(always)]
fn saturating(a: u64, b: u64) -> u64 {
    (a + b).min(SCAN_SUM_MAX)
}

/// The saturating sum of `v` over the warp's lanes, in every lane (each `v` at most
/// [`SCAN_SUM_MAX`]): an inclusive scan up the lanes (each lane reads only lanes below it,
/// which exist in a partial warp too), then the last lane's sum to all.
#[inline(always)]
fn warp_saturating_sum(v: u64) -> u64 {
    let (mask, lane) = (warp_mask(), lane_id());
    let mut acc = v;
    let mut delta = 1;
    while delta < WARP_SIZE {
        let below = shfl_up_sync(mask, acc, delta);
        if lane >= delta {
            acc = saturating(acc, below);
        }
        delta *= 2;
    }
    shfl_sync(mask, acc, warp_lanes() - 1)
}
