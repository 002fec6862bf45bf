//! The O(N) CPU cell list: the reference for large N, spread over the host's cores.
//!
//! Phases: key every atom by its cell of the one grid the kernels use too
//! ([`grid_for`]); sort the atoms by key with a counting sort
//! (count per cell, exclusive scan, scatter; stable, so a cell lists its atoms in index order)
//! and copy their coordinates in that order; refuse crowds; count each sorted atom's
//! neighbors; size the rows and fill them; copy each row to its atom's place and sort it.
//! Working in sorted order keeps the search's loads in consecutive memory whatever the input
//! order.

use super::cells::{count, grid_for, rounded, runs_around};
use super::list::{NeighborList, par_rows_mut};
use super::reference::{
    Coords, Cutoff, EntryBudget, MAX_ENTRIES, Real, check_entries, crowd_entries, extent_sq,
    is_neighbor, too_many,
};
use crate::inputs::{par_chunks_mut, par_map_ranges};
#[cfg(doc)]
use crate::runtime::error::Error;
use crate::runtime::error::Result;
use gpu::lessons::neighbor::{CellGrid, Coord};
use std::ops::Range;

/// Entries a counting thread adds up before reporting them to the shared budget.
const BUDGET_BATCH: u64 = 1 << 20;

/// Host bytes per atom besides the list: keys, sorted order and its inverse, counts, both
/// offsets (4 bytes each), cell starts (at most 2 per atom), and three sorted coordinates.
const BYTES_PER_ATOM: u64 = 4 * 6 + 8 + 3 * 8;

/// Every atom's neighbors under `cut` (the pair rule [`is_neighbor`]), found through a cell
/// grid in O(N) for atoms of bounded density; rows sorted. The same list as
/// [`half_pairs`](super::reference::half_pairs).
///
/// # Errors
/// [`Coords::validate`]'s errors; [`Error::TooLarge`] if the host lacks memory for the working
/// arrays or the list, or naming the entry count when the list would pass [`MAX_ENTRIES`] —
/// refused as soon as a cell's atoms alone are too many, or once the count pass passes it.
pub fn cell_list<T: Real + Coord>(c: &Coords<'_, T>, cut: &Cutoff<T>) -> Result<NeighborList> {
    c.validate(cut)?;
    let cutoff = cut.cutoff_sq.to_f64().sqrt();
    let grid = rounded(&grid_for(
        c,
        cutoff,
        cut.periodic.map(|s| s.map(T::to_f64)),
    )?);
    let n = c.len();
    if n == 0 {
        return Ok(NeighborList::default());
    }
    crate::runtime::memory::check_host(
        &format!("a cell list of {n} atoms"),
        (n as u64).saturating_mul(BYTES_PER_ATOM),
    )?;
    let bins = Bins::new(c, grid);
    bins.refuse_crowds(cut)?;

    // Count, in sorted order, stopping every thread once the total is past the limit.
    let budget = EntryBudget::default();
    let mut counts = vec![0u32; n];
    par_chunks_mut(&mut counts, |first, chunk| {
        let mut pending = 0u64;
        bins.walk(first..first + chunk.len(), cut, |k, found| {
            chunk[k - first] = found.len() as u32;
            pending += found.len() as u64;
            pending < BUDGET_BATCH || budget.add(std::mem::take(&mut pending))
        });
        budget.add(pending);
    });
    if budget.used() > MAX_ENTRIES {
        return Err(too_many(budget.used()));
    }
    let total = budget.used();
    check_entries(n, total, 2)?;

    // Fill the rows in sorted order, with the atoms' own indices.
    let sorted_offsets = exclusive_scan(counts.iter().copied());
    let mut sorted_rows = vec![0u32; total as usize];
    par_rows_mut(&sorted_offsets, &mut sorted_rows, |rows, entries| {
        let base = sorted_offsets[rows.start] as usize;
        bins.walk(rows, cut, |k, found| {
            let at = sorted_offsets[k] as usize - base;
            for (slot, &j) in entries[at..at + found.len()].iter_mut().zip(found) {
                *slot = bins.order[j as usize];
            }
            true
        });
    });

    // Back to atom order: atom `order[k]`'s row is sorted row `k`.
    let mut place = vec![0u32; n];
    for (k, &i) in bins.order.iter().enumerate() {
        place[i as usize] = k as u32;
    }
    let offsets = exclusive_scan(place.iter().map(|&k| counts[k as usize]));
    let mut indices = vec![0u32; total as usize];
    par_rows_mut(&offsets, &mut indices, |rows, entries| {
        let base = offsets[rows.start] as usize;
        for i in rows {
            let k = place[i] as usize;
            let from = &sorted_rows[sorted_offsets[k] as usize..sorted_offsets[k + 1] as usize];
            let to = &mut entries[offsets[i] as usize - base..offsets[i + 1] as usize - base];
            to.copy_from_slice(from);
            to.sort_unstable();
        }
    });
    Ok(NeighborList::from_parts_unchecked(offsets, indices))
}

/// `[0, c0, c0 + c1, …]`; the caller has checked that the total fits `u32`.
fn exclusive_scan(counts: impl ExactSizeIterator<Item = u32>) -> Vec<u32> {
    let mut out = Vec::with_capacity(counts.len() + 1);
    let mut sum = 0u32;
    out.push(0);
    for k in counts {
        sum += k;
        out.push(sum);
    }
    out
}

/// The atoms sorted by cell.
struct Bins<T> {
    grid: CellGrid<T>,
    /// `start[key]..start[key + 1]`: the sorted positions of cell `key`'s atoms.
    start: Vec<u32>,
    /// `order[k]`: the atom at sorted position `k`.
    order: Vec<u32>,
    x: Vec<T>,
    y: Vec<T>,
    z: Option<Vec<T>>,
}

impl<T: Real + Coord> Bins<T> {
    /// Keys the atoms (in parallel) and sorts them by key with a stable counting sort.
    fn new(c: &Coords<'_, T>, grid: CellGrid<T>) -> Self {
        let mut keys = vec![0u32; c.len()];
        par_chunks_mut(&mut keys, |first, chunk| {
            for (k, key) in chunk.iter_mut().enumerate() {
                let i = first + k;
                let z = c.z.map_or(<T as Real>::ZERO, |z| z[i]);
                // Below `MAX_CELLS`, a u32 (`grid_for`).
                *key = grid.key(grid.cell_of([c.x[i], c.y[i], z])) as u32;
            }
        });
        // Counting sort: `start[key + 1]` counts the cell, the scan makes it the cell's end,
        // and filling from the back (atoms in reverse) leaves it at the cell's start — stable,
        // without a second cursor array.
        let mut start = vec![0u32; count(&grid) + 1];
        for &key in &keys {
            start[key as usize + 1] += 1;
        }
        for k in 1..start.len() {
            start[k] += start[k - 1];
        }
        let mut order = vec![0u32; c.len()];
        for (i, &key) in keys.iter().enumerate().rev() {
            let end = &mut start[key as usize + 1];
            *end -= 1;
            order[*end as usize] = i as u32;
        }
        // Each `start[key + 1]` now holds cell `key`'s start; shift them into place.
        start.copy_within(1.., 0);
        if let Some(last) = start.last_mut() {
            *last = c.len() as u32;
        }
        let gather = |v: &[T]| order.iter().map(|&i| v[i as usize]).collect::<Vec<T>>();
        Bins {
            x: gather(c.x),
            y: gather(c.y),
            z: c.z.map(gather),
            grid,
            start,
            order,
        }
    }

    /// The cell whose key is `key` (`key` = `(cz·ny + cy)·nx + cx`).
    fn cell_of_key(&self, key: usize) -> [u32; 3] {
        let [nx, ny, _] = self.grid.cells.map(|c| c as usize);
        [key % nx, key / nx % ny, key / nx / ny].map(|c| c as u32)
    }

    fn coords(&self) -> Coords<'_, T> {
        Coords {
            x: &self.x,
            y: &self.y,
            z: self.z.as_deref(),
        }
    }

    /// Refuses a list that the atoms of single cells already make too long: `k` atoms closer
    /// than the cutoff to each other give `k·(k−1)` entries, found in O(N) instead of O(k²).
    fn refuse_crowds(&self, cut: &Cutoff<T>) -> Result<()> {
        let coords = self.coords();
        let cells = self.start.len() - 1;
        let bound: u64 = par_map_ranges(cells, |keys| {
            keys.map(|key| {
                let atoms = self.start[key] as usize..self.start[key + 1] as usize;
                if atoms.len() < 2 {
                    return 0;
                }
                let k = atoms.len() as u64;
                crowd_entries(k, extent_sq(&coords, atoms), cut)
            })
            .fold(0u64, u64::saturating_add)
        })
        .into_iter()
        .fold(0, u64::saturating_add);
        if bound > MAX_ENTRIES {
            return Err(too_many(bound));
        }
        Ok(())
    }

    /// Calls `visit(k, found)` for each sorted position `k` in `range` with the sorted
    /// positions of its neighbors, cell by cell; stops when `visit` returns false.
    fn walk(
        &self,
        range: Range<usize>,
        cut: &Cutoff<T>,
        mut visit: impl FnMut(usize, &[u32]) -> bool,
    ) {
        let coords = self.coords();
        let mut runs = [[0u32; 2]; 18];
        let mut spans = [(0u32, 0u32); 18];
        let mut found = Vec::new();
        // The cell of the first position; later ones follow in key order.
        let mut key = self
            .start
            .partition_point(|&s| s as usize <= range.start)
            .max(1)
            - 1;
        let mut around = 0;
        let mut around_key = usize::MAX;
        for k in range {
            while self.start[key + 1] as usize <= k {
                key += 1;
            }
            if around_key != key {
                around = runs_around(&self.grid, self.cell_of_key(key), &mut runs);
                for (span, run) in spans.iter_mut().zip(&runs[..around]) {
                    *span = (self.start[run[0] as usize], self.start[run[1] as usize + 1]);
                }
                around_key = key;
            }
            found.clear();
            for &(a, b) in &spans[..around] {
                for j in a..b {
                    if is_neighbor(&coords, cut, k, j as usize) {
                        found.push(j);
                    }
                }
            }
            if !visit(k, &found) {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neighbor::reference::half_pairs;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    /// `n` points uniform in a box of side `side` (as `T`), 2-D or 3-D.
    fn points<T: Real>(n: usize, dims: usize, side: f64, seed: u64) -> [Vec<T>; 3] {
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut axis = |used: bool| -> Vec<T> {
            (0..if used { n } else { 0 })
                .map(|_| T::from_f64(rng.random::<f64>() * side).min_below(side))
                .collect()
        };
        [axis(true), axis(true), axis(dims == 3)]
    }

    trait Below {
        fn min_below(self, side: f64) -> Self;
    }
    impl<T: Real> Below for T {
        /// Keeps a value rounded up to the side inside `[0, side)`.
        fn min_below(self, side: f64) -> T {
            if self.to_f64() < side { self } else { T::ZERO }
        }
    }

    fn view<T>(p: &[Vec<T>; 3]) -> Coords<'_, T> {
        Coords {
            x: &p[0],
            y: &p[1],
            z: (!p[2].is_empty()).then_some(&p[2][..]),
        }
    }

    fn agree<T: Real + Coord>(c: &Coords<'_, T>, cut: &Cutoff<T>) -> NeighborList {
        let want = half_pairs(c, cut).unwrap();
        let got = cell_list(c, cut).unwrap();
        assert_eq!(want.first_difference(&got), None);
        assert_eq!(want, got, "rows sorted the same way");
        got
    }

    #[test]
    fn matches_half_pairs_on_random_points() {
        for dims in [2, 3] {
            for n in [0, 1, 2, 31, 33, 1007] {
                // About six neighbors per atom at cutoff 1.9.
                let side =
                    (n.max(1) as f64 * if dims == 2 { 1.9 } else { 4.8 }).powf(1.0 / dims as f64);
                let p32 = points::<f32>(n, dims, side, n as u64);
                let list = agree(&view(&p32), &Cutoff::new(1.9, None).unwrap());
                assert_eq!(list.atoms(), n);
                let p64 = points::<f64>(n, dims, side, n as u64 + 1);
                agree(&view(&p64), &Cutoff::new(1.9, None).unwrap());
            }
        }
    }

    #[test]
    fn matches_half_pairs_in_periodic_boxes() {
        for dims in [2, 3] {
            // 3.9 is just over twice the cutoff: two cells per axis, each visited once.
            for side in [3.9, 5.0, 7.7, 20.0] {
                let p = points::<f32>(300, dims, side, side as u64);
                let list = agree(&view(&p), &Cutoff::new(1.9, Some([side; 3])).unwrap());
                assert!(list.pairs() > 0);
                let p = points::<f64>(200, dims, side, 7);
                agree(&view(&p), &Cutoff::new(1.9, Some([side; 3])).unwrap());
            }
        }
    }

    #[test]
    fn matches_on_awkward_layouts() {
        let cut = Cutoff::<f32>::new(1.9, None).unwrap();
        // Atoms exactly one cutoff apart along x, far from the origin (f32 rounding).
        let x: Vec<f32> = (0..200).map(|k| 1.0e5 + k as f32 * 1.9).collect();
        agree(
            &Coords {
                x: &x,
                y: &[7.0; 200],
                z: None,
            },
            &cut,
        );
        // Two tight clusters far apart: the capped grid makes coarse cells.
        let p = points::<f32>(400, 2, 10.0, 3);
        let x: Vec<f32> = p[0]
            .iter()
            .enumerate()
            .map(|(i, &v)| v + (i % 2) as f32 * 1e6)
            .collect();
        agree(
            &Coords {
                x: &x,
                y: &p[1],
                z: None,
            },
            &cut,
        );
        // Coincident atoms: every pair.
        let spot = [2.0f32; 50];
        let list = agree(
            &Coords {
                x: &spot,
                y: &spot,
                z: Some(&spot),
            },
            &cut,
        );
        assert_eq!(list.pairs(), 50 * 49);
    }

    #[test]
    fn a_crowd_is_refused_without_counting_it() {
        let cut = Cutoff::<f64>::new(1.9, None).unwrap();
        let spot = vec![1.0f64; 100_000];
        let e = cell_list(
            &Coords {
                x: &spot,
                y: &spot,
                z: None,
            },
            &cut,
        )
        .unwrap_err();
        // The exact k·(k−1) shows the crowd was refused before any pair was counted.
        assert!(e.to_string().contains("at least 9999900000 entries"), "{e}");
        let e = cell_list(
            &Coords {
                x: &[0.0, f64::INFINITY],
                y: &[0.0; 2],
                z: None,
            },
            &cut,
        );
        assert!(e.unwrap_err().to_string().contains("atom 1"));
    }
}
