//! The cell geometry of the O(N) cell list ([`CellGrid`]), shared by the CPU reference
//! ([`cell_list`](super::cell_list::cell_list)) and the kernels, which bin with the same
//! arithmetic.
//!
//! Atoms are binned into cells no smaller than the cutoff, so a neighbor of an atom lies in
//! its own cell or an adjacent one: each atom tests the atoms of at most 3×3 (3-D: 3×3×3)
//! cells instead of all N.

use super::reference::{Coords, Cutoff, Real};
use crate::runtime::error::Result;

/// How much larger than the cutoff a cell is at least, relative: room for the rounding of
/// the pair rule (a pair a few ulps beyond the cutoff may pass it in `f32`).
pub const CELL_MARGIN: f64 = 1e-4;

/// A uniform grid of cells over the atoms, each at least the cutoff wide.
///
/// Cells per dimension: `r = extent / min_size`, then `floor(r / (1 + 4·ε·r))`, at least 1 —
/// `extent` being the bounding box's side (the periodic box's side when periodic), `min_size`
/// the cutoff plus [`CELL_MARGIN`] and four `T` epsilons `ε` of the largest coordinate, and
/// the `4·ε·r` term room for the rounding of the cell index below (it caps an `f32` axis near
/// 2²¹ cells). Then lowered so the total stays at most `2·N + 1` (and `u32::MAX`). 2-D atoms
/// get one cell in z.
///
/// The cell of a point, per dimension `d`, in `T` with each operation rounded (no fused
/// multiply-add): `t = (p[d] - origin[d]) * inv_size[d]`, then `min(t as u32, dims[d] - 1)`,
/// where `as` truncates toward zero and saturates (NaN and negative values give 0). Cell
/// `[cx, cy, cz]` has key `cx + nx·(cy + ny·cz)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CellGrid<T> {
    origin: [T; 3],
    inv_size: [T; 3],
    cell_size: [f64; 3],
    dims: [u32; 3],
    periodic: bool,
}

impl<T: Real> CellGrid<T> {
    /// The grid for atoms `c` under `cut`: over their bounding box, or over the periodic box.
    ///
    /// # Errors
    /// [`Coords::validate`]'s: mismatched lengths, a non-finite coordinate, an atom outside the
    /// periodic box.
    pub fn new(c: &Coords<'_, T>, cut: &Cutoff<T>) -> Result<Self> {
        c.validate(cut)?;
        let dims_used = c.dims();
        let (origin, mut extent) = match cut.periodic {
            Some(sides) => ([T::ZERO; 3], sides.map(|s| s.to_f64())),
            None => bounding_box(c),
        };
        if dims_used == 2 {
            extent[2] = 0.0;
        }
        let far = (0..dims_used)
            .map(|d| {
                origin[d]
                    .to_f64()
                    .abs()
                    .max((origin[d].to_f64() + extent[d]).abs())
            })
            .fold(0.0, f64::max);
        let min_size = cut.cutoff_sq.to_f64().sqrt() * (1.0 + CELL_MARGIN) + 4.0 * T::EPSILON * far;
        let cap = (2 * c.len() as u64 + 1).min(u64::from(u32::MAX));
        let mut n = [1u64; 3];
        for d in 0..dims_used {
            let r = extent[d] / min_size;
            // `as` saturates: an enormous extent becomes u64::MAX, then the cap applies.
            n[d] = ((r / (1.0 + 4.0 * T::EPSILON * r)).floor() as u64).max(1);
        }
        cap_cells(&mut n, cap);
        Ok(CellGrid {
            origin,
            // One cell needs no arithmetic: 0 maps every point to it.
            inv_size: std::array::from_fn(|d| {
                T::from_f64(if n[d] > 1 {
                    n[d] as f64 / extent[d]
                } else {
                    0.0
                })
            }),
            cell_size: std::array::from_fn(|d| extent[d] / n[d] as f64),
            dims: n.map(|k| k as u32),
            periodic: cut.periodic.is_some(),
        })
    }

    /// The corner the cells start from: the lowest coordinates, or 0 in a periodic box.
    pub fn origin(&self) -> [T; 3] {
        self.origin
    }

    /// Cells per length unit, the factor [`CellGrid::cell_of`] multiplies by (0 with one cell).
    pub fn inv_size(&self) -> [T; 3] {
        self.inv_size
    }

    /// Each cell's nominal sides (0 along an axis where all atoms share the coordinate).
    pub fn cell_size(&self) -> [f64; 3] {
        self.cell_size
    }

    /// Cells per dimension (1 in z for 2-D atoms).
    pub fn dims(&self) -> [u32; 3] {
        self.dims
    }

    /// All cells: the product of [`CellGrid::dims`], at most `2·N + 1`.
    pub fn cells(&self) -> u32 {
        self.dims[0] * self.dims[1] * self.dims[2]
    }

    /// Whether the grid wraps around (a periodic box).
    pub fn periodic(&self) -> bool {
        self.periodic
    }

    /// The cell holding `p` (z = 0 for 2-D atoms), computed as the type's doc says.
    #[inline]
    pub fn cell_of(&self, p: [T; 3]) -> [u32; 3] {
        std::array::from_fn(|d| {
            let t = (p[d] - self.origin[d]) * self.inv_size[d];
            // `f64 as u32` truncates and saturates exactly as `f32 as u32` does.
            (t.to_f64() as u32).min(self.dims[d] - 1)
        })
    }

    /// A cell's index in x-fastest order: `cx + nx·(cy + ny·cz)`.
    #[inline]
    pub fn key(&self, cell: [u32; 3]) -> u32 {
        cell[0] + self.dims[0] * (cell[1] + self.dims[1] * cell[2])
    }

    /// The distinct cells among `{c-1, c, c+1}` in every dimension around cell `key`
    /// (wrapped in a periodic box, clipped otherwise), as runs of consecutive keys
    /// `[first, last]` — cells next to each other along x are next to each other in key order,
    /// so their atoms are one range of the sorted atoms. Writes them to `out`; returns how many
    /// (at most 3×3 rows of at most 2 runs: x may wrap).
    pub(crate) fn adjacent_runs(&self, key: u32, out: &mut [[u32; 2]; 18]) -> usize {
        let [nx, ny, nz] = self.dims;
        let (cx, rest) = (key % nx, key / nx);
        let (cy, cz) = (rest % ny, rest / ny);
        let (runs, nruns) = runs_1d(cx, nx, self.periodic);
        let (ys, nys) = adjacent_1d(cy, ny, self.periodic);
        let (zs, nzs) = adjacent_1d(cz, nz, self.periodic);
        let mut len = 0;
        for &z in &zs[..nzs] {
            for &y in &ys[..nys] {
                let row = nx * (y + ny * z);
                for run in &runs[..nruns] {
                    out[len] = [row + run[0], row + run[1]];
                    len += 1;
                }
            }
        }
        len
    }
}

/// The distinct values among `c-1, c, c+1` in `0..n`: wrapped mod `n` when periodic (so one or
/// two cells are never visited twice), clipped otherwise.
fn adjacent_1d(c: u32, n: u32, periodic: bool) -> ([u32; 3], usize) {
    match (periodic, n) {
        (_, 1) => ([0; 3], 1),
        (true, 2) => ([c, 1 - c, 0], 2),
        (true, _) => ([(c + n - 1) % n, c, (c + 1) % n], 3),
        (false, _) if c == 0 => ([0, 1, 0], 2),
        (false, _) if c + 1 == n => ([c - 1, c, 0], 2),
        (false, _) => ([c - 1, c, c + 1], 3),
    }
}

/// The same cells as [`adjacent_1d`], as runs of consecutive values `[first, last]`.
fn runs_1d(c: u32, n: u32, periodic: bool) -> ([[u32; 2]; 2], usize) {
    let clipped = [c.saturating_sub(1), (c + 1).min(n - 1)];
    if !periodic || (c > 0 && c + 1 < n) {
        ([clipped, [0; 2]], 1)
    } else if n <= 3 {
        ([[0, n - 1], [0; 2]], 1)
    } else if c == 0 {
        ([[0, 1], [n - 1, n - 1]], 2)
    } else {
        ([[0, 0], [n - 2, n - 1]], 2)
    }
}

/// Lowers the cells per dimension until their product is at most `cap`, keeping the shape.
fn cap_cells(n: &mut [u64; 3], cap: u64) {
    let product = |n: &[u64; 3]| n.iter().fold(1f64, |p, &k| p * k as f64);
    let split = n.iter().filter(|&&k| k > 1).count() as f64;
    if product(n) > cap as f64 {
        let shrink = (cap as f64 / product(n)).powf(1.0 / split.max(1.0));
        for k in n.iter_mut() {
            *k = ((*k as f64 * shrink).floor() as u64).max(1);
        }
    }
    while product(n) > cap as f64 {
        if let Some(k) = n.iter_mut().max() {
            *k = (*k - 1).max(1);
        }
    }
}

/// The lowest corner (in `T`, exact) and the sides (in `f64`) of the atoms' bounding box.
fn bounding_box<T: Real>(c: &Coords<'_, T>) -> ([T; 3], [f64; 3]) {
    let parts = crate::inputs::par_map_ranges(c.len(), |r| {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for i in r {
            let p = c.point(i);
            for d in 0..3 {
                lo[d] = lo[d].min(p[d]);
                hi[d] = hi[d].max(p[d]);
            }
        }
        (lo, hi)
    });
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for (l, h) in parts {
        for d in 0..3 {
            lo[d] = lo[d].min(l[d]);
            hi[d] = hi[d].max(h[d]);
        }
    }
    if c.is_empty() {
        return ([T::ZERO; 3], [0.0; 3]);
    }
    // The minima are coordinates converted exactly to f64, so they convert back exactly.
    (lo.map(T::from_f64), std::array::from_fn(|d| hi[d] - lo[d]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(x: &[f32], y: &[f32], periodic: Option<[f64; 3]>) -> CellGrid<f32> {
        let c = Coords { x, y, z: None };
        CellGrid::new(&c, &Cutoff::new(1.9, periodic).unwrap()).unwrap()
    }

    /// Every cell listed by `adjacent_runs` around `key`, sorted.
    fn around(g: &CellGrid<f32>, key: u32) -> Vec<u32> {
        let mut runs = [[0u32; 2]; 18];
        let len = g.adjacent_runs(key, &mut runs);
        let mut cells: Vec<u32> = runs[..len].iter().flat_map(|r| r[0]..=r[1]).collect();
        cells.sort_unstable();
        cells
    }

    #[test]
    fn cells_are_at_least_the_cutoff_and_at_most_two_per_atom() {
        let g = grid(&[0.0, 100.0], &[0.0, 1.0], None);
        assert!(g.cells() <= 5, "{:?}", g.dims());
        assert!(g.cell_size()[0] >= 1.9);
        let spot = grid(&[3.0; 10], &[3.0; 10], None);
        assert_eq!(
            (spot.dims(), spot.cell_of([3.0, 3.0, 0.0])),
            ([1, 1, 1], [0, 0, 0])
        );
        let x: Vec<f32> = (0..1000).map(|k| k as f32 * 0.1).collect();
        let g = grid(&x, &x, None);
        assert!(
            g.cells() <= 2001 && g.dims()[0] == g.dims()[1],
            "{:?}",
            g.dims()
        );
        let g = grid(&x, &[0.0; 1000], None);
        assert_eq!(
            g.dims()[0],
            (99.9f64 / (1.9 * (1.0 + CELL_MARGIN))).floor() as u32
        );
        assert_eq!(
            g.cell_of([99.9, 0.0, 0.0])[0],
            g.dims()[0] - 1,
            "the far edge clamps"
        );
        assert_eq!(g.key([1, 2, 0]), 1 + 2 * g.dims()[0]);
    }

    #[test]
    fn neighbor_cells_are_distinct_and_wrap_only_when_periodic() {
        let x: Vec<f32> = (0..100).map(|k| k as f32 * 0.2).collect();
        let open = grid(&x, &x, None);
        let n = open.dims()[0];
        assert_eq!(around(&open, 0), vec![0, 1, n, n + 1]);
        for side in [3.9, 5.8, 20.0] {
            let g = grid(&[0.0, 1.0], &[0.0, 1.0], Some([side, side, 0.0]));
            let n = g.dims()[0];
            assert!((2..=10).contains(&n), "{n}");
            let cells = around(&g, 0);
            let mut unique = cells.clone();
            unique.dedup();
            assert_eq!(cells, unique, "no cell twice");
            assert_eq!(cells.len() as u32, n.min(3) * n.min(3));
        }
    }
}
