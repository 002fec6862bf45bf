//! The cells of the GPU's cell list, planned on the host: how many along each axis, how wide,
//! and how much searching they will cost — refused before launching when that is absurd.

use crate::neighbor::points::Atoms;
use crate::runtime::error::{Error, Result};
use gpu::lessons::neighbor::{CellGrid, wrap};

/// How much wider than the cutoff a cell is: room for the rounding of `(x - origin) *
/// inv_size` in `f32`, whose error in cells grows with the cells along an axis (up to about
/// `6 × cells × 2⁻²⁴`: 0.012 at [`MAX_CELLS_PER_AXIS`]). A pair below the cutoff then can never be
/// binned two cells apart.
pub const CELL_MARGIN: f64 = 1.0 / 64.0;

/// The most cells along one axis: keeps the rounding above below [`CELL_MARGIN`].
pub const MAX_CELLS_PER_AXIS: u64 = 1 << 15;

/// What the search may cost at most, in pair checks, before it is refused: about a second of
/// an H200's time (the simulator's limit is far lower, [`MAX_SIM_CHECKS`]).
pub const MAX_GPU_CHECKS: u64 = 1 << 40;

/// The simulator's limit on pair checks: seconds of one core.
pub const MAX_SIM_CHECKS: u64 = 1 << 28;

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
    /// Cells at least `cutoff` (plus [`CELL_MARGIN`]) wide over the atoms' bounding box — or
    /// over the box `periodic`, whose cells at either end are neighbors — at most about two
    /// per atom.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if a coordinate is not finite.
    pub fn new(atoms: &Atoms, cutoff: f64, periodic: Option<[f64; 3]>) -> Result<CellPlan> {
        let dims = atoms.dims();
        let axes: [Option<&[f64]>; 3] = [Some(atoms.x()), Some(atoms.y()), atoms.z()];
        let mut origin = [0.0; 3];
        let mut extent = [0.0; 3];
        for (a, axis) in axes.iter().enumerate() {
            let Some(v) = axis else { continue };
            if let Some(side) = periodic {
                extent[a] = side[a];
                continue;
            }
            let (lo, hi) = v
                .iter()
                .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &c| {
                    (lo.min(c), hi.max(c))
                });
            if !(lo.is_finite() && hi.is_finite()) && !v.is_empty() {
                return Err(Error::InvalidInput(
                    "a coordinate is not finite (NaN or infinite)".into(),
                ));
            }
            if !v.is_empty() {
                origin[a] = lo;
                extent[a] = hi - lo;
            }
        }
        let width = cutoff * (1.0 + CELL_MARGIN);
        let mut cells = [1u64; 3];
        for a in 0..dims {
            cells[a] = ((extent[a] / width).floor() as u64).clamp(1, MAX_CELLS_PER_AXIS);
        }
        // At most about two cells per atom: more only costs memory and scan time.
        let limit = (2 * atoms.len() as u64).max(1);
        while cells.iter().product::<u64>() > limit {
            let widest = (0..3).max_by_key(|&a| cells[a]).unwrap_or(0);
            cells[widest] = cells[widest].div_ceil(2);
        }
        let inv = |a: usize| {
            if extent[a] > 0.0 {
                cells[a] as f64 / extent[a]
            } else {
                0.0
            }
        };
        let grid = CellGrid {
            origin,
            inv_size: [inv(0), inv(1), inv(2)],
            cells: [cells[0] as u32, cells[1] as u32, cells[2] as u32],
            periodic: periodic.is_some() as u32,
        };
        let (checks, densest) = cost(atoms, &grid);
        Ok(CellPlan {
            grid,
            cells: cells.iter().product::<u64>() as usize,
            checks,
            densest,
        })
    }

    /// The grid in the kernels' precision.
    pub fn grid<T: super::precision::Precision>(&self) -> CellGrid<T> {
        let g = &self.grid;
        let t = |v: [f64; 3]| v.map(T::from_f64);
        CellGrid {
            origin: t(g.origin),
            inv_size: t(g.inv_size),
            cells: g.cells,
            periodic: g.periodic,
        }
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
/// own, each cell once, as the kernels scan them — and the most atoms in a cell. Atoms per cell
/// come from the `f64` coordinates (the kernels bin in their own precision; an atom on a
/// border may land one cell over, which changes the estimate by as little).
fn cost(atoms: &Atoms, grid: &CellGrid<f64>) -> (u64, u64) {
    let mut per_cell = vec![0u64; grid.cells.iter().map(|&c| c as usize).product()];
    let cells: Vec<[u32; 3]> = (0..atoms.len())
        .map(|i| grid.cell_of(atoms.point(i)))
        .collect();
    for c in &cells {
        per_cell[grid.key(*c)] += 1;
    }
    let densest = per_cell.iter().copied().max().unwrap_or(0);
    // The cells the search visits, by the device's own rule (`CellGrid::around`, `wrap`).
    let periodic = grid.periodic != 0;
    let around = |c: u32, a: usize| {
        if periodic {
            grid.around::<true>(c, a)
        } else {
            grid.around::<false>(c, a)
        }
    };
    let at = |v: u32, a: usize| {
        if periodic {
            wrap::<true>(v, grid.cells[a])
        } else {
            wrap::<false>(v, grid.cells[a])
        }
    };
    let mut checks = 0u64;
    for c in &cells {
        let ((x0, nx), (y0, ny), (z0, nz)) = (around(c[0], 0), around(c[1], 1), around(c[2], 2));
        for dz in 0..nz {
            for dy in 0..ny {
                for dx in 0..nx {
                    let key = grid.key([at(x0 + dx, 0), at(y0 + dy, 1), at(z0 + dz, 2)]);
                    checks = checks.saturating_add(per_cell[key]);
                }
            }
        }
    }
    (checks, densest)
}
