//! The O(N) cell list the book mentions without giving: bin the atoms into cells at least one
//! cutoff wide, so that every neighbor of an atom lies in its own cell or the next one along
//! each axis, and check only those.
//!
//! 1. [`cell_bin_f32`]: each atom finds its cell and takes a place in it with `atomicAdd` on
//!    the cell's count — its rank, from the atomic's result, as in the book's kernel;
//! 2. the scan ([`scan_lookback`](super::scan_lookback)) turns the counts into where each cell
//!    starts;
//! 3. [`cell_scatter_f32`]: each atom is copied to `start[cell] + rank`: the atoms sorted by
//!    cell, coordinates included, so that the search reads neighbors from consecutive words;
//! 4. the search, one thread per sorted atom (threads of a warp share cells, so their loads
//!    hit the same lines): [`cell_count_f32`] counts and keeps each atom's first [`KEEP`]
//!    neighbors, a scan places the lists, and [`cell_fill_f32`] writes them — copying what was
//!    kept, searching again only for longer lists (CSR, exact, cannot overflow) — or
//!    [`cell_padded_f32`] writes `MN` slots per atom in one pass, guarded.
//!
//! Each list is sorted (by atom index) by the thread that wrote it, so the result does not
//! depend on the order in which the atomics handed out ranks.

use super::{Atoms, Coord, Rule, slot, specialize};
use crate::atomic::atomic_add_device;
use crate::global::{ldg_plain, stg};
use crate::index::grid_stride;
use crate::mem::Ptr;
use crate::readonly::ldg;

/// The cells: `cells[0] × cells[1] × cells[2]` boxes from `origin`, each `1 / inv_size` wide
/// along its axis — at least the cutoff (the host adds a margin for rounding). Cell `(cx, cy,
/// cz)` has key `(cz * cells[1] + cy) * cells[0] + cx`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellGrid<T> {
    /// The corner of cell `(0, 0, 0)`.
    pub origin: [T; 3],
    /// Cells per unit length along each axis.
    pub inv_size: [T; 3],
    /// Cells along each axis (1 along `z` in 2-D); their product fits in `u32`.
    pub cells: [u32; 3],
    /// 1 when the box is periodic: the cells at either end of an axis are neighbors.
    pub periodic: u32,
}

impl<T: Coord> CellGrid<T> {
    /// The cell of a point, per axis.
    #[inline(always)]
    pub fn cell_of(&self, r: [T; 3]) -> [u32; 3] {
        let c = |a: usize| r[a].cell(self.origin[a], self.inv_size[a], self.cells[a]);
        [c(0), c(1), c(2)]
    }

    /// The key of a cell.
    #[inline(always)]
    pub fn key(&self, c: [u32; 3]) -> usize {
        (c[2] as usize * self.cells[1] as usize + c[1] as usize) * self.cells[0] as usize
            + c[0] as usize
    }

    /// The cells next to `c` along axis `a`, each once: `(first, count)`; the `k`-th is
    /// `first + k`, less one row of cells if that passes the end (only in a periodic box) —
    /// with one or two cells on the axis, all of them.
    #[inline(always)]
    pub fn around<const PERIODIC: bool>(&self, c: u32, a: usize) -> (u32, u32) {
        let n = self.cells[a];
        if n < 3 {
            (0, n)
        } else if PERIODIC {
            // From the cell before `c` (the last one, before the first): at most `n + 1`.
            (if c == 0 { n - 1 } else { c - 1 }, 3)
        } else {
            let lo = c.saturating_sub(1);
            (lo, (c + 1).min(n - 1) - lo + 1)
        }
    }
}

/// `first + k` of [`CellGrid::around`] as a cell: at most `n + 1`, so one subtraction wraps it.
#[inline(always)]
pub fn wrap<const PERIODIC: bool>(v: u32, n: u32) -> u32 {
    if PERIODIC && v >= n { v - n } else { v }
}

/// The atoms sorted by cell: where each came from, and its coordinates (`z` null in 2-D).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Sorted<T> {
    /// `index[p]`: the atom at sorted position `p`.
    pub index: *mut u32,
    /// `x` at each sorted position.
    pub x: *mut T,
    /// `y` at each sorted position.
    pub y: *mut T,
    /// `z` at each sorted position, or null in 2-D.
    pub z: *mut T,
}

impl<T: Coord> Sorted<T> {
    fn atoms(&self) -> Atoms<T> {
        Atoms {
            x: self.x,
            y: self.y,
            z: self.z,
        }
    }
}

/// Calls `emit(k, j)` for the `k`-th neighbor `j` found of the atom at sorted position `p`,
/// scanning the cells around it in key order; returns how many it found. `D3` and `PERIODIC`
/// as in [`Rule::within`].
///
/// # Safety
/// `sorted` holds `n` atoms sorted by `grid` (`z` when `D3`), `p < n`, `start` holds the
/// `cells + 1` starts; none of them is written during the launch.
#[inline(always)]
unsafe fn search<T: Coord, const D3: bool, const PERIODIC: bool>(
    sorted: Sorted<T>,
    start: *const u32,
    grid: &CellGrid<T>,
    rule: &Rule<T>,
    p: usize,
    mut emit: impl FnMut(usize, u32),
) -> usize {
    let atoms = sorted.atoms();
    // SAFETY: `p < n`.
    let me = unsafe { atoms.at::<D3>(p) };
    let c = grid.cell_of(me);
    let [nx, ny, nz] = grid.cells;
    // Counted in `u32` (a sorted position is one): 32-bit compares and adds in the hot loop.
    let mut found = 0u32;
    let (z0, cz) = if D3 {
        grid.around::<PERIODIC>(c[2], 2)
    } else {
        (0, 1)
    };
    let (y0, cy) = grid.around::<PERIODIC>(c[1], 1);
    let (x0, cx) = grid.around::<PERIODIC>(c[0], 0);
    // The cells of a row next to each other along `x` hold consecutive sorted atoms: one range
    // of positions per row (two where a periodic row wraps), not one per cell — a third of the
    // dependent loads of `start` in the search's chain.
    let end = x0 + cx;
    let first_end = if PERIODIC { end.min(nx) } else { end };
    let mut scan = |from_key: u32, to_key: u32| {
        // SAFETY: `from_key <= to_key <= cells`; `start` has one more entry than there are
        // cells.
        let (from, to) = unsafe {
            (
                ldg(start.add(from_key as usize)),
                ldg(start.add(to_key as usize)),
            )
        };
        for q in from..to {
            let q = q as usize;
            // SAFETY: `q < n`: the starts partition the sorted atoms. The atom itself passes
            // `within` (distance 0), so it is left out only among the hits, off the hot path.
            if rule.within::<D3, PERIODIC>(me, unsafe { atoms.at::<D3>(q) }) && q != p {
                emit(found as usize, unsafe { ldg(sorted.index.add(q)) });
                found += 1;
            }
        }
    };
    for dz in 0..cz {
        let z = wrap::<PERIODIC>(z0 + dz, nz);
        for dy in 0..cy {
            let row = (z * ny + wrap::<PERIODIC>(y0 + dy, ny)) * nx;
            scan(row + x0, row + first_end);
            if PERIODIC && end > nx {
                scan(row, row + end - nx);
            }
        }
    }
    found as usize
}

/// Neighbors the count pass keeps per atom ([`Kept`]): the fill copies and sorts a list this
/// short in registers instead of searching again. Graphene's atoms have three, four at a grain
/// boundary; random points at the benchmarks' density about six.
pub const KEEP: usize = 8;

/// Where the count pass keeps each atom's first [`KEEP`] neighbors, for the fill:
/// `slots[k * stride + p]` is the `k`-th found of the atom at sorted position `p`, in search
/// order. Slot `k` of consecutive positions is consecutive words, so a warp's `k`-th writes
/// fill whole sectors (one sector per atom instead, tried first, wrote a few bytes of each:
/// the count pass took twice as long, `docs/perf-notes.md`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Kept {
    /// `KEEP * stride` words.
    pub slots: *mut u32,
    /// The sorted positions: `n`.
    pub stride: u32,
}

impl Kept {
    /// Slot `k` of sorted position `p`.
    ///
    /// # Safety
    /// `p < stride` and `k < KEEP`.
    #[inline(always)]
    unsafe fn at(self, p: usize, k: usize) -> Ptr<u32> {
        // SAFETY: inside the `KEEP * stride` slots, per the contract.
        unsafe { Ptr::new(self.slots).add(k * self.stride as usize + p) }
    }
}

/// Sorts eight words in registers: the 19 compare-exchanges of an optimal sorting network for
/// eight inputs (fully unrolled, no memory).
#[inline(always)]
pub fn sort8(v: &mut [u32; KEEP]) {
    macro_rules! exchange {
        ($(($a:literal, $b:literal))*) => {$(
            let (lo, hi) = (v[$a].min(v[$b]), v[$a].max(v[$b]));
            v[$a] = lo;
            v[$b] = hi;
        )*};
    }
    exchange!(
        (0, 2)(1, 3)(4, 6)(5, 7)(0, 4)(1, 5)(2, 6)(3, 7)(0, 1)(2, 3)(4, 5)(6, 7)(2, 4)(3, 5)(1, 4)(
            3, 6
        )(1, 2)(3, 4)(5, 6)
    );
}

/// The CSR rows the fill writes: `indices[offsets[i]..offsets[i + 1]]` for atom `i`. The fill
/// may run before the host knows the total: it writes nothing when the exact total (`u64`, from
/// the scan) passes `capacity` — the host reads the total afterwards, grows the buffer and fills
/// again — and so never reads offsets that wrapped past `u32`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Rows {
    /// The scan of the counts: `n + 1` offsets.
    pub offsets: *const u32,
    /// `capacity` words.
    pub indices: *mut u32,
    /// What the count pass kept.
    pub kept: Kept,
    /// The exact total of the counts, from the scan.
    pub total: *const u64,
    /// Words in `indices`.
    pub capacity: u32,
}

impl Rows {
    /// Whether the exact total fits the capacity: once per launch, before any row is written
    /// (the offsets are the exact scan only then).
    ///
    /// # Safety
    /// `total` holds the scan's total, and nothing writes it during the launch.
    #[inline(always)]
    unsafe fn fit(self) -> bool {
        // SAFETY: the caller's contract.
        unsafe { Ptr::new(self.total.cast_mut()).load() <= self.capacity as u64 }
    }
}

/// Writes the neighbors of the atom `i` at sorted position `p` into its CSR row, sorted: copied
/// from what the count pass kept and sorted in registers when the row is at most [`KEEP`] long,
/// else searched again and sorted in place.
/// What both fill kernels do per atom.
///
/// # Safety
/// As [`search`]; `rows.offsets` holds the scan of the counts (`i + 1` is in it) and the
/// caller has checked that their total fits ([`Rows::fit`]), `rows.kept` holds the count pass's
/// slots (`stride` = `n`); row `i` is the calling thread's alone; `rows`' arrays are in global
/// memory (read and written with `ld.global` / `st.global`).
#[inline(always)]
unsafe fn fill_row<T: Coord>(
    sorted: Sorted<T>,
    start: *const u32,
    grid: &CellGrid<T>,
    rule: &Rule<T>,
    d3: bool,
    (p, i): (usize, usize),
    rows: Rows,
) {
    // SAFETY: the caller's contract.
    unsafe {
        // The rows' arrays arrive in a struct: said to be global (`ld.global`, `st.global`) for
        // the offsets, the kept slots and the short rows.
        let first = ldg_plain(rows.offsets.add(i)) as usize;
        let last = ldg_plain(rows.offsets.add(i + 1)) as usize;
        // With the total fitting, the offsets are the exact scan (`first <= last <= capacity`);
        // writes stay inside the buffer whatever they hold.
        if first > last || last > rows.capacity as usize {
            return;
        }
        let room = last - first;
        let list = Ptr::new(rows.indices).add(first);
        if room <= KEEP {
            // Unused slots sort to the end as `u32::MAX`; only the row's `room` are written.
            let mut v = [u32::MAX; KEEP];
            for (k, v) in v.iter_mut().enumerate() {
                if k < room {
                    *v = ldg_plain(rows.kept.at(p, k).as_ptr());
                }
            }
            sort8(&mut v);
            for (k, &v) in v.iter().enumerate() {
                if k < room {
                    stg(list.add(k).as_ptr(), v);
                }
            }
        } else {
            let emit = |k: usize, j: u32| {
                if k < room {
                    list.add(k).store(j);
                }
            };
            let found = specialize!(
                d3,
                rule.is_periodic(),
                search::<T>(sorted, start, grid, rule, p, emit)
            );
            sort_list(found.min(room), |k| list.add(k));
        }
    }
}

/// Sorts the `len` words at `at(0)`, …, `at(len - 1)` in place: insertion sort for the short
/// lists of real inputs, heapsort (no recursion, no scratch) for long ones.
///
/// # Safety
/// Every `at(k)`, `k < len`, is valid, distinct, and this thread's alone.
#[inline(always)]
unsafe fn sort_list(len: usize, at: impl Fn(usize) -> Ptr<u32>) {
    // SAFETY (all blocks below): indices below `len`, per the contract.
    let get = |k: usize| unsafe { at(k).load() };
    let set = |k: usize, v: u32| unsafe { at(k).store(v) };
    if len <= 32 {
        for i in 1..len {
            let v = get(i);
            let mut j = i;
            while j > 0 && get(j - 1) > v {
                set(j, get(j - 1));
                j -= 1;
            }
            set(j, v);
        }
        return;
    }
    let sift = |mut root: usize, end: usize| loop {
        let mut child = 2 * root + 1;
        if child >= end {
            break;
        }
        if child + 1 < end && get(child + 1) > get(child) {
            child += 1;
        }
        if get(root) >= get(child) {
            break;
        }
        let t = get(root);
        set(root, get(child));
        set(child, t);
        root = child;
    };
    for root in (0..len / 2).rev() {
        sift(root, len);
    }
    for end in (1..len).rev() {
        let t = get(0);
        set(0, get(end));
        set(end, t);
        sift(0, end);
    }
}

macro_rules! cell_kernels {
    ($($t:ty: $bin:ident, $scatter:ident, $count:ident, $fill:ident, $fill_atoms:ident, $padded:ident;)*) => {$(
        kernel! {
            #[doc = concat!("Cell list, step 1 (`", stringify!($t), "`): `cell[i]` = atom `i`'s cell key, `rank[i]` = its place in the cell, from `atomicAdd` on `counts[cell]` (zeroed by the host).")]
            pub unsafe fn $bin(
                atoms: Atoms<$t>, n: u32, grid: CellGrid<$t>, cell: *mut u32, rank: *mut u32,
                counts: *mut u32,
            ) {
                let (cell, rank) = (Ptr::new(cell), Ptr::new(rank));
                for i in grid_stride(n as usize) {
                    // SAFETY: `i < n`; `counts` holds one count per cell, touched only
                    // atomically; `cell` and `rank` hold `n` values, each this thread's.
                    unsafe {
                        let key = grid.key(grid.cell_of(atoms.get(i)));
                        cell.add(i).store(key as u32);
                        let r = atomic_add_device(counts.add(key), 1);
                        rank.add(i).store(r);
                    }
                }
            }
        }

        kernel! {
            #[doc = concat!("Cell list, step 3 (`", stringify!($t), "`): atom `i` goes to sorted position `start[cell[i]] + rank[i]`, with its coordinates.")]
            pub unsafe fn $scatter(
                atoms: Atoms<$t>, n: u32, cell: *const u32, rank: *const u32, start: *const u32,
                sorted: Sorted<$t>,
            ) {
                let (cell, rank, start) = (Ptr::new(cell.cast_mut()), Ptr::new(rank.cast_mut()), Ptr::new(start.cast_mut()));
                for i in grid_stride(n as usize) {
                    // SAFETY: `i < n`; positions are distinct (ranks within a cell are), and a
                    // position past the sorted arrays — starts and ranks that do not belong
                    // together — is skipped rather than written.
                    unsafe {
                        let p = (start.add(cell.add(i).load() as usize).load() + rank.add(i).load()) as usize;
                        if p >= n as usize {
                            continue;
                        }
                        let r = atoms.get(i);
                        Ptr::new(sorted.index).add(p).store(i as u32);
                        Ptr::new(sorted.x).add(p).store(r[0]);
                        Ptr::new(sorted.y).add(p).store(r[1]);
                        if !sorted.z.is_null() {
                            Ptr::new(sorted.z).add(p).store(r[2]);
                        }
                    }
                }
            }
        }

        kernel! {
            #[doc = concat!("Cell list, CSR pass 1 (`", stringify!($t), "`): `counts[i]` = the number of neighbors of atom `i`, one thread per sorted atom; its first [`KEEP`] neighbors kept for the fill.")]
            pub unsafe fn $count(
                sorted: Sorted<$t>, n: u32, start: *const u32, grid: CellGrid<$t>,
                rule: Rule<$t>, counts: *mut u32, kept: Kept,
            ) {
                let d3 = sorted.atoms().is_3d(&rule);
                for p in grid_stride(n as usize) {
                    // SAFETY: `p < n`, the kernel's arrays as documented; `counts[i]` is written
                    // by the thread of the one sorted position holding `i`, and so are the kept
                    // slots of `p`.
                    unsafe {
                        // The next kept slot, a row of `stride` further each time.
                        let mut slot = kept.at(p, 0);
                        let keep = |k: usize, j: u32| {
                            if k < KEEP {
                                slot.store(j);
                                // Past the last slot after the eighth: never read then.
                                slot = slot.wrapping_add(kept.stride as usize);
                            }
                        };
                        let found = specialize!(d3, rule.is_periodic(), search::<$t>(sorted, start, &grid, &rule, p, keep));
                        let i = Ptr::new(sorted.index).add(p).load() as usize;
                        Ptr::new(counts).add(i).store(found as u32);
                    }
                }
            }
        }

        kernel! {
            #[doc = concat!("Cell list, CSR pass 2 (`", stringify!($t), "`): atom `i`'s neighbors, sorted, into its row of `rows` (a [`Rows`]), one thread per sorted atom.")]
            pub unsafe fn $fill(
                sorted: Sorted<$t>, n: u32, start: *const u32, grid: CellGrid<$t>,
                rule: Rule<$t>, rows: Rows,
            ) {
                // SAFETY: `rows.total` is the scan's, read-only here. Too small a buffer: nothing
                // written (the host fills again in a larger one).
                if !unsafe { rows.fit() } {
                    return;
                }
                let d3 = sorted.atoms().is_3d(&rule);
                for p in grid_stride(n as usize) {
                    // SAFETY: `p < n`; the total fits, so atom `i`'s range is this thread's
                    // alone, and writes stay inside it whatever the search finds.
                    unsafe {
                        let i = Ptr::new(sorted.index).add(p).load() as usize;
                        fill_row(sorted, start, &grid, &rule, d3, (p, i), rows);
                    }
                }
            }
        }

        kernel! {
            #[doc = concat!("Cell list, CSR pass 2 in atom order (`", stringify!($t), "`): as [`", stringify!($fill), "`], but thread `i` fills atom `i`'s list, finding its sorted position from `cell` and `rank`: consecutive threads write consecutive lists.")]
            pub unsafe fn $fill_atoms(
                sorted: Sorted<$t>, n: u32, start: *const u32, grid: CellGrid<$t>,
                rule: Rule<$t>, cell: *const u32, rank: *const u32, rows: Rows,
            ) {
                // SAFETY: as in the fill above.
                if !unsafe { rows.fit() } {
                    return;
                }
                let d3 = sorted.atoms().is_3d(&rule);
                for i in grid_stride(n as usize) {
                    // SAFETY: `i < n`; `start[cell[i]] + rank[i]` is atom `i`'s sorted position
                    // (below `n`); the total fits, so atom `i`'s range is this thread's alone, and
                    // writes stay inside it whatever the search finds.
                    unsafe {
                        let p = (ldg(start.add(ldg(cell.add(i)) as usize)) + ldg(rank.add(i))) as usize;
                        if p >= n as usize {
                            continue;
                        }
                        fill_row(sorted, start, &grid, &rule, d3, (p, i), rows);
                    }
                }
            }
        }

        kernel! {
            #[doc = concat!("Cell list, padded (`", stringify!($t), "`): one pass; `nn[i]` = atom `i`'s true count, its first `mn` neighbors, sorted, in `nl` in `layout` (a [`Layout`](super::Layout)).")]
            pub unsafe fn $padded(
                sorted: Sorted<$t>, n: u32, start: *const u32, grid: CellGrid<$t>,
                rule: Rule<$t>, nn: *mut u32, nl: *mut u32, mn: u32, layout: u32,
            ) {
                let (nn, nl) = (Ptr::new(nn), Ptr::new(nl));
                let (atoms, mn) = (n as usize, mn as usize);
                let d3 = sorted.atoms().is_3d(&rule);
                for p in grid_stride(atoms) {
                    // SAFETY: `p < n`; atom `i`'s slots are this thread's alone, and only slots
                    // below `mn` are written.
                    unsafe {
                        let i = Ptr::new(sorted.index).add(p).load() as usize;
                        let at = |k: usize| nl.add(slot(layout, i, k, atoms, mn));
                        let emit = |k: usize, j: u32| {
                            if k < mn {
                                at(k).store(j);
                            }
                        };
                        let found = specialize!(d3, rule.is_periodic(), search::<$t>(sorted, start, &grid, &rule, p, emit));
                        sort_list(found.min(mn), at);
                        nn.add(i).store(found as u32);
                    }
                }
            }
        }
    )*};
}

cell_kernels! {
    f32: cell_bin_f32, cell_scatter_f32, cell_count_f32, cell_fill_f32, cell_fill_atoms_f32, cell_padded_f32;
    f64: cell_bin_f64, cell_scatter_f64, cell_count_f64, cell_fill_f64, cell_fill_atoms_f64, cell_padded_f64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort8_sorts_every_input_of_zeros_and_ones_and_shuffled_lists() {
        // The 0-1 principle: a network that sorts all 256 inputs of zeros and ones sorts all.
        for bits in 0u32..256 {
            let mut v = core::array::from_fn(|k| bits >> k & 1);
            sort8(&mut v);
            assert!(v.is_sorted(), "{bits:08b}: {v:?}");
            assert_eq!(v.iter().sum::<u32>(), bits.count_ones());
        }
        // Short lists padded with u32::MAX, as the fill pads them, in a scrambled order.
        let mut seed = 0x9E37_79B9u32;
        for len in 0..=KEEP {
            let mut v = [u32::MAX; KEEP];
            for slot in &mut v[..len] {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                *slot = seed % 1000;
            }
            let mut want = v;
            want.sort_unstable();
            sort8(&mut v);
            assert_eq!(v, want);
        }
    }
}
