//! The cells of the O(N) cell list — one grid, planned on the host, for the kernels and the
//! CPU cell list alike: how many cells along each axis, how wide, which cells an atom searches,
//! and what the search will cost (refused before launching when that is absurd).
//!
//! Atoms are binned into cells at least one cutoff wide (plus [`CELL_MARGIN`]), so a neighbor
//! of an atom lies in its own cell or the next one along each axis: each atom tests the atoms
//! of at most 3×3 (3-D: 3×3×3) cells instead of all N. The grid is the device's own
//! [`CellGrid`], binned by its `cell_of` and searched by its `around` and [`wrap`], so that the
//! kernels, the CPU reference and the host's cost estimate follow one rule.

use super::points::Atoms;
use super::reference::{Coords, Real, check_atom_count};
use crate::inputs::par_map_ranges;
use crate::runtime::error::{Error, Result};
use gpu::lessons::neighbor::{CellGrid, Coord, wrap};

/// How much wider than the cutoff a cell is: room for the rounding of `(x - origin) *
/// inv_size` in `f32`, whose error in cells grows with the cells along an axis (up to about
/// `6 × cells × 2⁻²⁴`: 0.012 at [`MAX_CELLS_PER_AXIS`]), and for the pair rule's own rounding
/// (a pair a few ulps beyond the cutoff may pass it). A pair that passes the rule then can never
/// be binned two cells apart.
pub const CELL_MARGIN: f64 = 1.0 / 64.0;

/// The most cells along one axis: keeps the rounding above below [`CELL_MARGIN`].
pub const MAX_CELLS_PER_AXIS: u64 = 1 << 15;

/// The most cells in all: the kernels key cells, and the scan counts them, in `u32`, and the
/// cell starts hold one more value than there are cells.
pub const MAX_CELLS: u64 = u32::MAX as u64 - 1;

/// What the search may cost at most, in pair checks, before it is refused: about a second of
/// an H200's time (the simulator's limit is far lower, [`MAX_SIM_CHECKS`]).
pub const MAX_GPU_CHECKS: u64 = 1 << 40;

/// The simulator's limit on pair checks: seconds of one core.
pub const MAX_SIM_CHECKS: u64 = 1 << 28;

/// Cells along each axis for `atoms` atoms spanning `extent` (the box's sides, `z` unused when
/// `dims` is 2): as many as fit cells at least `cutoff × (1 + CELL_MARGIN)` wide, at most
/// [`MAX_CELLS_PER_AXIS`] along an axis, and — halving the axis with the most until it holds —
/// at most two per atom (more only cost memory and scan time) and [`MAX_CELLS`] in all.
pub fn cells_per_axis(extent: [f64; 3], dims: usize, cutoff: f64, atoms: u64) -> [u64; 3] {
    let width = cutoff * (1.0 + CELL_MARGIN);
    let mut cells = [1u64; 3];
    for a in 0..dims.min(3) {
        // `as` saturates: an enormous or infinite extent becomes u64::MAX, then the clamp.
        cells[a] = ((extent[a] / width).floor() as u64).clamp(1, MAX_CELLS_PER_AXIS);
    }
    let limit = atoms.saturating_mul(2).clamp(1, MAX_CELLS);
    while cells.iter().product::<u64>() > limit {
        let widest = (0..3).max_by_key(|&a| cells[a]).unwrap_or(0);
        cells[widest] = cells[widest].div_ceil(2);
    }
    cells
}

/// The grid for `atoms` atoms over the box from `origin` with sides `extent`
/// ([`cells_per_axis`]); `periodic` when the cells at either end of an axis are neighbors.
///
/// # Errors
/// [`Error::TooLarge`] past [`MAX_ATOMS`](super::reference::MAX_ATOMS) atoms: the kernels index atoms in `u32`.
pub fn grid_over(
    origin: [f64; 3],
    extent: [f64; 3],
    dims: usize,
    cutoff: f64,
    atoms: u64,
    periodic: bool,
) -> Result<CellGrid<f64>> {
    check_atom_count(atoms)?;
    let cells = cells_per_axis(extent, dims, cutoff, atoms);
    // One cell needs no arithmetic: 0 maps every point to it.
    let inv = |a: usize| {
        if cells[a] > 1 && extent[a] > 0.0 {
            cells[a] as f64 / extent[a]
        } else {
            0.0
        }
    };
    Ok(CellGrid {
        origin,
        inv_size: [inv(0), inv(1), inv(2)],
        cells: cells.map(|c| c as u32),
        periodic: periodic as u32,
    })
}

/// The grid over atoms `c` for neighbors closer than `cutoff`: over their bounding box, or over
/// the periodic box of sides `periodic` (corner at the origin).
///
/// # Errors
/// [`Error::TooLarge`] past [`MAX_ATOMS`](super::reference::MAX_ATOMS) atoms; [`Error::InvalidInput`] if a coordinate is
/// not finite.
pub fn grid_for<T: Real>(
    c: &Coords<'_, T>,
    cutoff: f64,
    periodic: Option<[f64; 3]>,
) -> Result<CellGrid<f64>> {
    let (origin, extent) = match periodic {
        Some(sides) => ([0.0; 3], sides),
        None => bounding_box(c)?,
    };
    grid_over(
        origin,
        extent,
        c.dims(),
        cutoff,
        c.len() as u64,
        periodic.is_some(),
    )
}

/// `grid` with its origin and cell sizes rounded to `T`, the precision of the coordinates it
/// bins (the margin covers the rounding).
pub fn rounded<T: Real>(grid: &CellGrid<f64>) -> CellGrid<T> {
    CellGrid {
        origin: grid.origin.map(T::from_f64),
        inv_size: grid.inv_size.map(T::from_f64),
        cells: grid.cells,
        periodic: grid.periodic,
    }
}

/// All cells of `grid`: the product of its cells per axis, at most [`MAX_CELLS`].
pub fn count<T>(grid: &CellGrid<T>) -> usize {
    grid.cells.iter().map(|&c| c as usize).product()
}

/// The lowest corner and the sides of the atoms' bounding box, in `f64` (exact for `T`'s
/// values), computed over the host's cores.
///
/// # Errors
/// [`Error::InvalidInput`] if a coordinate is not finite.
fn bounding_box<T: Real>(c: &Coords<'_, T>) -> Result<([f64; 3], [f64; 3])> {
    if c.is_empty() {
        return Ok(([0.0; 3], [0.0; 3]));
    }
    let parts = par_map_ranges(c.len(), |r| {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        let mut finite = true;
        for i in r {
            let p = c.point(i);
            for d in 0..3 {
                // `min` and `max` skip a NaN: it is looked for on its own.
                finite &= p[d].is_finite();
                lo[d] = lo[d].min(p[d]);
                hi[d] = hi[d].max(p[d]);
            }
        }
        (lo, hi, finite)
    });
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for (l, h, finite) in parts {
        if !finite {
            return Err(Error::InvalidInput(
                "a coordinate is not finite (NaN or infinite)".into(),
            ));
        }
        for d in 0..3 {
            lo[d] = lo[d].min(l[d]);
            hi[d] = hi[d].max(h[d]);
        }
    }
    Ok((lo, std::array::from_fn(|d| hi[d] - lo[d])))
}

/// The cells the search around cell `c` visits — along each axis [`CellGrid::around`]'s cells,
/// wrapped by [`wrap`], as the kernels visit them — as runs of consecutive keys `[first,
/// last]`: cells next to each other along x are next to each other in key order, so their
/// atoms are one range of the atoms sorted by cell. Writes them to `out`; returns how many (at
/// most 3×3 rows of at most 2 runs: x may wrap).
pub fn runs_around<T: Coord>(grid: &CellGrid<T>, c: [u32; 3], out: &mut [[u32; 2]; 18]) -> usize {
    let periodic = grid.periodic != 0;
    let around = |a: usize| {
        if periodic {
            grid.around::<true>(c[a], a)
        } else {
            grid.around::<false>(c[a], a)
        }
    };
    let at = |v: u32, a: usize| {
        if periodic {
            wrap::<true>(v, grid.cells[a])
        } else {
            wrap::<false>(v, grid.cells[a])
        }
    };
    let [nx, ny, _] = grid.cells;
    let ((x0, cx), (y0, cy), (z0, cz)) = (around(0), around(1), around(2));
    // Along x: one run, or two where it passes the last cell and wraps to the first.
    let last = x0 + cx - 1;
    let (xs, nxs) = if last < nx {
        ([[x0, last], [0; 2]], 1)
    } else {
        ([[x0, nx - 1], [0, last - nx]], 2)
    };
    let mut len = 0;
    for dz in 0..cz {
        for dy in 0..cy {
            let row = (at(z0 + dz, 2) * ny + at(y0 + dy, 1)) * nx;
            for run in &xs[..nxs] {
                out[len] = [row + run[0], row + run[1]];
                len += 1;
            }
        }
    }
    len
}

/// The cells for some atoms, and the cost of searching them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellPlan {
    /// The cells, in `f64` (see [`CellPlan::grid`] for the kernels' precision).
    pub grid: CellGrid<f64>,
    /// How many cells.
    pub cells: usize,
    /// Pair checks the search makes: for every atom, the atoms of the cells around it.
    pub checks: u64,
    /// The most atoms in one cell.
    pub densest: u64,
}

impl CellPlan {
    /// The grid over `atoms` ([`grid_for`]) and what searching it costs.
    ///
    /// # Errors
    /// As [`grid_for`].
    pub fn new(atoms: &Atoms, cutoff: f64, periodic: Option<[f64; 3]>) -> Result<CellPlan> {
        let grid = grid_for(&atoms.coords(), cutoff, periodic)?;
        let (checks, densest) = cost(atoms, &grid);
        Ok(CellPlan {
            grid,
            cells: count(&grid),
            checks,
            densest,
        })
    }

    /// The grid in the kernels' precision.
    pub fn grid<T: Real>(&self) -> CellGrid<T> {
        rounded(&self.grid)
    }

    /// Refuses a search that would make more than `limit` pair checks.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the densest cell and the cost.
    pub fn check_cost(&self, limit: u64) -> Result<()> {
        if self.checks <= limit {
            return Ok(());
        }
        Err(Error::InvalidInput(format!(
            "the atoms are too crowded for a neighbor search: {} atoms share one cell of the \
             cutoff's size, and the search would check {:.2e} pairs (the limit is {:.2e}); \
             are many atoms on one spot, or is the cutoff far larger than their spacing?",
            self.densest, self.checks as f64, limit as f64
        )))
    }
}

/// Pair checks of the search over `grid` — for every atom, the atoms of the cells around its
/// own ([`runs_around`]) — and the most atoms in a cell. Atoms per cell come from the `f64`
/// coordinates (the kernels bin in their own precision; an atom on a border may land one cell
/// over, which changes the estimate by as little).
fn cost(atoms: &Atoms, grid: &CellGrid<f64>) -> (u64, u64) {
    let mut per_cell = vec![0u64; count(grid) + 1];
    let cells: Vec<[u32; 3]> = (0..atoms.len())
        .map(|i| grid.cell_of(atoms.point(i)))
        .collect();
    for c in &cells {
        per_cell[grid.key(*c) + 1] += 1;
    }
    let densest = per_cell.iter().copied().max().unwrap_or(0);
    // Running totals: the atoms of a run of keys are one subtraction.
    for k in 1..per_cell.len() {
        per_cell[k] += per_cell[k - 1];
    }
    let mut runs = [[0u32; 2]; 18];
    let mut checks = 0u64;
    for &c in &cells {
        let len = runs_around(grid, c, &mut runs);
        for &[first, last] in &runs[..len] {
            checks = checks.saturating_add(per_cell[last as usize + 1] - per_cell[first as usize]);
        }
    }
    (checks, densest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neighbor::reference::MAX_ATOMS;

    fn grid(x: &[f32], y: &[f32], periodic: Option<[f64; 3]>) -> CellGrid<f32> {
        let c = Coords { x, y, z: None };
        rounded(&grid_for(&c, 1.9, periodic).unwrap())
    }

    /// Every cell listed by `runs_around` around `c`, sorted.
    fn around(g: &CellGrid<f32>, c: [u32; 3]) -> Vec<u32> {
        let mut runs = [[0u32; 2]; 18];
        let len = runs_around(g, c, &mut runs);
        let mut cells: Vec<u32> = runs[..len].iter().flat_map(|r| r[0]..=r[1]).collect();
        cells.sort_unstable();
        cells
    }

    #[test]
    fn cells_are_at_least_the_cutoff_and_at_most_two_per_atom() {
        let g = grid(&[0.0, 100.0], &[0.0, 1.0], None);
        assert!(count(&g) <= 4, "{:?}", g.cells);
        assert!(100.0 / g.cells[0] as f64 >= 1.9);
        let spot = grid(&[3.0; 10], &[3.0; 10], None);
        assert_eq!(
            (spot.cells, spot.cell_of([3.0, 3.0, 0.0])),
            ([1, 1, 1], [0, 0, 0])
        );
        let x: Vec<f32> = (0..1000).map(|k| k as f32 * 0.1).collect();
        let g = grid(&x, &x, None);
        assert!(count(&g) <= 2000, "{:?}", g.cells);
        assert!(
            g.cells[..2].iter().all(|&c| 99.9 / c as f64 >= 1.9),
            "{:?}",
            g.cells
        );
        let g = grid(&x, &[0.0; 1000], None);
        let width = 1.9 * (1.0 + CELL_MARGIN);
        assert_eq!(g.cells[0], (99.9f32 as f64 / width).floor() as u32);
        assert_eq!(
            g.cell_of([99.9, 0.0, 0.0])[0],
            g.cells[0] - 1,
            "the far edge clamps"
        );
        assert_eq!(g.key([1, 2, 0]), 1 + 2 * g.cells[0] as usize);
    }

    #[test]
    fn neighbor_cells_are_distinct_and_wrap_only_when_periodic() {
        let x: Vec<f32> = (0..100).map(|k| k as f32 * 0.2).collect();
        let open = grid(&x, &x, None);
        let n = open.cells[0];
        assert_eq!(around(&open, [0, 0, 0]), vec![0, 1, n, n + 1]);
        for side in [3.9, 5.8, 7.7, 20.0] {
            let g = grid(&[0.0, 1.0], &[0.0, 1.0], Some([side, side, 0.0]));
            let n = g.cells[0];
            assert!((2..=10).contains(&n), "{n}");
            for c in [[0, 0, 0], [n - 1, n - 1, 0], [1, n - 1, 0]] {
                let cells = around(&g, c);
                let mut unique = cells.clone();
                unique.dedup();
                assert_eq!(cells, unique, "no cell twice");
                assert_eq!(cells.len() as u32, n.min(3) * n.min(3), "{c:?}");
            }
        }
    }

    #[test]
    fn runs_around_are_the_cells_next_to_each_cell_each_once() {
        // The rule, independently: along each axis the cells at most one away (modulo the
        // axis in a periodic box), every cell where the axis has fewer than three.
        let near = |k: u32, c: u32, n: u32, periodic: bool| {
            let d = k.abs_diff(c);
            n < 3 || d <= 1 || (periodic && n - d <= 1)
        };
        for periodic in [false, true] {
            for n in 1..=6u32 {
                for nz in [1u32, 4] {
                    let g = CellGrid::<f64> {
                        origin: [0.0; 3],
                        inv_size: [1.0; 3],
                        cells: [n, n + 1, nz],
                        periodic: periodic as u32,
                    };
                    let all = |a: usize| 0..g.cells[a];
                    for c in all(2)
                        .flat_map(|z| all(1).flat_map(move |y| all(0).map(move |x| [x, y, z])))
                    {
                        let mut runs = [[0u32; 2]; 18];
                        let len = runs_around(&g, c, &mut runs);
                        let mut got: Vec<u32> =
                            runs[..len].iter().flat_map(|r| r[0]..=r[1]).collect();
                        got.sort_unstable();
                        let mut want: Vec<u32> = Vec::new();
                        for z in all(2).filter(|&z| near(z, c[2], g.cells[2], periodic)) {
                            for y in all(1).filter(|&y| near(y, c[1], g.cells[1], periodic)) {
                                for x in all(0).filter(|&x| near(x, c[0], g.cells[0], periodic)) {
                                    want.push(g.key([x, y, z]) as u32);
                                }
                            }
                        }
                        want.sort_unstable();
                        assert_eq!(
                            got, want,
                            "cell {c:?} of {:?}, periodic {periodic}",
                            g.cells
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn huge_counts_keep_every_key_in_u32() {
        // 3-D, past 2³¹ atoms: the cell cap of two per atom alone would pass u32.
        for atoms in [1u64 << 31, 3_000_000_000, MAX_ATOMS as u64] {
            let cells = cells_per_axis([1e7; 3], 3, 1.0, atoms);
            let all: u64 = cells.iter().product();
            assert!((1..=MAX_CELLS).contains(&all), "{cells:?}");
            let g = grid_over([0.0; 3], [1e7; 3], 3, 1.0, atoms, false).unwrap();
            let last = g.cells.map(|c| c - 1);
            assert!(g.key(last) < u32::MAX as usize);
            assert!(count(&g) as u64 <= MAX_CELLS);
        }
        // Past the atoms a u32 index names: refused, naming the limit, nothing allocated.
        let e = grid_over([0.0; 3], [1e7; 3], 3, 1.0, 1 << 32, false).unwrap_err();
        assert!(
            matches!(e, Error::TooLarge { available, .. } if available == MAX_ATOMS as u64),
            "{e}"
        );
        assert!(e.to_string().contains(&MAX_ATOMS.to_string()), "{e}");
        // Few atoms: never more than two cells each.
        assert_eq!(
            cells_per_axis([1e7; 3], 3, 1.0, 4).iter().product::<u64>(),
            8
        );
        assert_eq!(cells_per_axis([1e7; 3], 3, 1.0, 0), [1, 1, 1]);
    }

    #[test]
    fn a_coordinate_that_is_not_finite_is_refused() {
        for bad in [f32::NAN, f32::INFINITY] {
            let c = Coords {
                x: &[0.0, bad],
                y: &[0.0, 0.0],
                z: None,
            };
            assert!(grid_for(&c, 1.9, None).is_err());
        }
    }
}
