//! The book's atoms: a polycrystalline graphene sheet — grains of honeycomb (bond
//! [`CC_BOND`]), each turned and shifted at random, meeting at grain boundaries.
//!
//! 1. A square sheet a little larger than `atoms` need, with grain seeds on a jittered grid
//!    (about [`ATOMS_PER_GRAIN`] atoms each); a grain is the region nearer its seed than any
//!    other (a Voronoi cell).
//! 2. The sheet is cut into tiles; for each tile, only the grains that can own part of it
//!    are considered (a seed whose nearest point of the tile is farther than another seed's
//!    farthest point owns none of it), so the work stays O(N) with hundreds of grains. Each
//!    such grain's lattice points in the tile are kept where that grain's seed is the nearest.
//! 3. Atoms of different grains closer than [`MIN_DISTANCE`] are found with the cell list and
//!    one of each such pair removed (in index order, the earlier atom stays).
//! 4. The `atoms` atoms nearest the centre (in the max norm: a square patch) are kept, in
//!    generation order (tile by tile, so nearby atoms have nearby indices).

use super::cell_list::cell_list;
use super::generate::{CC_BOND, check_atoms, unit};
use super::points::Atoms;
use super::reference::Cutoff;
use crate::runtime::error::{Error, Result};
use std::f64::consts::PI;

/// About how many atoms one grain holds.
pub const ATOMS_PER_GRAIN: usize = 20_000;

/// The fewest grains: a single crystal would have no boundary.
pub const MIN_GRAINS: usize = 2;

/// The most grains, keeping grains of a large sheet large.
pub const MAX_GRAINS: usize = 300;

/// Atoms of different grains closer than this (Å) are too close: one of them is removed.
pub const MIN_DISTANCE: f64 = 1.0;

/// Area per atom of graphene, Å²: a hexagon of side `a` (area `3√3/2·a²`) holds two atoms.
const AREA_PER_ATOM: f64 = 0.75 * 1.732_050_807_568_877_2 * CC_BOND * CC_BOND;

/// Host bytes per atom while generating: coordinates of the sheet before trimming (up to
/// twice, while tiles are joined), the cell list's working arrays, and the result.
const BYTES_PER_ATOM: u64 = 256;

/// Tiles per grain cell along each axis: small enough that most tiles meet a single grain.
const TILES_PER_GRAIN: f64 = 4.0;

/// Random streams, one per quantity.
const SEED_X: u64 = 1;
const SEED_Y: u64 = 2;
const ANGLE: u64 = 3;
const SHIFT_X: u64 = 4;
const SHIFT_Y: u64 = 5;

/// A polycrystalline graphene sheet of exactly `atoms` atoms (see the [module docs](self)),
/// a deterministic function of `seed`: nearly every atom has 3 neighbors at the book's cutoff
/// (1.9 Å), atoms at grain boundaries and the edges fewer or more. Coordinates in Å, from 0.
///
/// # Errors
/// [`Error::InvalidInput`] past [`MAX_ATOMS`](super::generate::MAX_ATOMS);
/// [`Error::TooLarge`] past host memory.
pub fn graphene(atoms: usize, seed: u64) -> Result<Atoms> {
    check_atoms(atoms, BYTES_PER_ATOM)?;
    if atoms == 0 {
        return Atoms::new2(Vec::new(), Vec::new());
    }
    let grains = (atoms / ATOMS_PER_GRAIN).clamp(MIN_GRAINS, MAX_GRAINS);
    // Boundaries remove a few percent; a larger sheet is tried in the rare case that is short.
    let mut margin = 1.15;
    for _ in 0..4 {
        // Two bonds more per side, so that even a few atoms get a whole hexagon.
        let side = (atoms as f64 * AREA_PER_ATOM * margin).sqrt() + 2.0 * CC_BOND;
        let sheet = Sheet::new(side, grains, seed);
        let (x, y) = sheet.lattice();
        let keep = far_enough(&x, &y)?;
        if keep.iter().filter(|&&k| k).count() >= atoms {
            return Ok(nearest_centre(&x, &y, &keep, atoms, side / 2.0));
        }
        margin *= 1.25;
    }
    Err(Error::InvalidInput(format!(
        "graphene of {atoms} atoms: the sheet came out too small"
    )))
}

/// One grain: a seed point and its lattice's rotation and shift.
#[derive(Clone, Copy, Debug)]
struct Grain {
    seed: [f64; 2],
    cos: f64,
    sin: f64,
    shift: [f64; 2],
}

/// The sheet: a square of side `side` with a jittered grid of `gx × gy` grain seeds.
struct Sheet {
    side: f64,
    gx: usize,
    gy: usize,
    grains: Vec<Grain>,
    tiles: usize,
}

impl Sheet {
    fn new(side: f64, grains: usize, seed: u64) -> Sheet {
        let gx = ((grains as f64).sqrt().round() as usize).max(1);
        let gy = grains.div_ceil(gx);
        let (w, h) = (side / gx as f64, side / gy as f64);
        let grains = (0..gx * gy)
            .map(|g| {
                let k = g as u64;
                let angle = 2.0 * PI * unit(seed, ANGLE, k);
                Grain {
                    seed: [
                        ((g % gx) as f64 + unit(seed, SEED_X, k)) * w,
                        ((g / gx) as f64 + unit(seed, SEED_Y, k)) * h,
                    ],
                    cos: angle.cos(),
                    sin: angle.sin(),
                    // Any shift within a lattice period: every translation of the honeycomb.
                    shift: [
                        3.0 * CC_BOND * unit(seed, SHIFT_X, k),
                        3f64.sqrt() * CC_BOND * unit(seed, SHIFT_Y, k),
                    ],
                }
            })
            .collect();
        let tiles = ((side / w.min(h) * TILES_PER_GRAIN).ceil() as usize).max(1);
        Sheet {
            side,
            gx,
            gy,
            grains,
            tiles,
        }
    }

    /// Where tile boundary `t` lies along an axis: the last is the sheet's side exactly.
    fn edge(&self, t: usize) -> f64 {
        if t >= self.tiles {
            self.side
        } else {
            t as f64 * self.side / self.tiles as f64
        }
    }

    /// Every grain's lattice points in the grains it owns, tile by tile, on every core.
    fn lattice(&self) -> (Vec<f64>, Vec<f64>) {
        let total = self.tiles * self.tiles;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per = total.div_ceil(cores).max(1);
        let parts: Vec<(Vec<f64>, Vec<f64>)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..total)
                .step_by(per)
                .map(|first| s.spawn(move || self.tiles_points(first..(first + per).min(total))))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        });
        let len = parts.iter().map(|p| p.0.len()).sum();
        let (mut x, mut y) = (Vec::with_capacity(len), Vec::with_capacity(len));
        for (px, py) in parts {
            x.extend_from_slice(&px);
            y.extend_from_slice(&py);
        }
        (x, y)
    }

    /// The points of tiles `range` (row-major tile indices).
    fn tiles_points(&self, range: std::ops::Range<usize>) -> (Vec<f64>, Vec<f64>) {
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let mut owners = Vec::new();
        for t in range {
            let (tx, ty) = (t % self.tiles, t / self.tiles);
            let lo = [self.edge(tx), self.edge(ty)];
            let hi = [self.edge(tx + 1), self.edge(ty + 1)];
            self.candidates(lo, hi, &mut owners);
            for &g in &owners {
                self.grain_points(g, lo, hi, &owners, &mut x, &mut y);
            }
        }
        (x, y)
    }

    /// The grains that can own part of the tile `[lo, hi)` into `out`.
    fn candidates(&self, lo: [f64; 2], hi: [f64; 2], out: &mut Vec<usize>) {
        let near = |s: [f64; 2]| -> f64 {
            (0..2)
                .map(|d| (lo[d] - s[d]).max(s[d] - hi[d]).max(0.0).powi(2))
                .sum()
        };
        let far = |s: [f64; 2]| -> f64 {
            (0..2)
                .map(|d| (s[d] - lo[d]).abs().max((hi[d] - s[d]).abs()).powi(2))
                .sum()
        };
        let (w, h) = (self.side / self.gx as f64, self.side / self.gy as f64);
        let cell = |v: f64, size: f64, n: usize| ((v / size).max(0.0) as usize).min(n - 1);
        let centre = [(lo[0] + hi[0]) / 2.0, (lo[1] + hi[1]) / 2.0];
        let home = cell(centre[1], h, self.gy) * self.gx + cell(centre[0], w, self.gx);
        // No seed farther than the home seed's farthest corner can matter.
        let reach = far(self.grains[home].seed).sqrt();
        let (x0, x1) = (
            cell(lo[0] - reach, w, self.gx),
            cell(hi[0] + reach, w, self.gx),
        );
        let (y0, y1) = (
            cell(lo[1] - reach, h, self.gy),
            cell(hi[1] + reach, h, self.gy),
        );
        let window = (y0..=y1).flat_map(|j| (x0..=x1).map(move |i| j * self.gx + i));
        let bound = window
            .clone()
            .map(|g| far(self.grains[g].seed))
            .fold(f64::INFINITY, f64::min);
        out.clear();
        out.extend(window.filter(|&g| near(self.grains[g].seed) <= bound));
    }

    /// Grain `g`'s lattice points inside the tile `[lo, hi)` whose nearest seed among
    /// `owners` is `g`'s, appended to `x` and `y`.
    fn grain_points(
        &self,
        g: usize,
        lo: [f64; 2],
        hi: [f64; 2],
        owners: &[usize],
        x: &mut Vec<f64>,
        y: &mut Vec<f64>,
    ) {
        let gr = self.grains[g];
        let a = CC_BOND;
        let h = 0.5 * 3f64.sqrt() * a;
        // Lattice coordinates: position = shift + R·(i·a1 + j·a2 + basis), a1 = (1.5a, h),
        // a2 = (1.5a, −h), basis (0, 0) or (a, 0). The tile's corners bound i and j.
        let (mut imin, mut imax, mut jmin, mut jmax) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for corner in [
            [lo[0], lo[1]],
            [hi[0], lo[1]],
            [lo[0], hi[1]],
            [hi[0], hi[1]],
        ] {
            let (dx, dy) = (corner[0] - gr.shift[0], corner[1] - gr.shift[1]);
            let (qx, qy) = (gr.cos * dx + gr.sin * dy, -gr.sin * dx + gr.cos * dy);
            let (s, d) = (qx / (1.5 * a), qy / h);
            let (i, j) = ((s + d) / 2.0, (s - d) / 2.0);
            (imin, imax, jmin, jmax) = (imin.min(i), imax.max(i), jmin.min(j), jmax.max(j));
        }
        let dist = |p: [f64; 2], o: usize| {
            let s = self.grains[o].seed;
            (p[0] - s[0]).powi(2) + (p[1] - s[1]).powi(2)
        };
        for i in (imin.floor() as i64 - 1)..=(imax.ceil() as i64 + 1) {
            for j in (jmin.floor() as i64 - 1)..=(jmax.ceil() as i64 + 1) {
                for basis in [0.0, a] {
                    let lx = 1.5 * a * (i + j) as f64 + basis;
                    let ly = h * (i - j) as f64;
                    let p = [
                        gr.shift[0] + gr.cos * lx - gr.sin * ly,
                        gr.shift[1] + gr.sin * lx + gr.cos * ly,
                    ];
                    if !(p[0] >= lo[0] && p[0] < hi[0] && p[1] >= lo[1] && p[1] < hi[1]) {
                        continue;
                    }
                    // Ties go to the lower grain index, the same in every tile.
                    let mine = dist(p, g);
                    if owners
                        .iter()
                        .any(|&o| o != g && (dist(p, o), o) < (mine, g))
                    {
                        continue;
                    }
                    x.push(p[0]);
                    y.push(p[1]);
                }
            }
        }
    }
}

/// Which atoms stay so that no two are closer than [`MIN_DISTANCE`]: in index order, an atom
/// stays unless an earlier one that stayed is too close (atoms of one grain are a bond apart,
/// so only pairs across a boundary are found).
fn far_enough(x: &[f64], y: &[f64]) -> Result<Vec<bool>> {
    let coords = super::reference::Coords { x, y, z: None };
    let close = cell_list(&coords, &Cutoff::new(MIN_DISTANCE, None)?)?;
    let mut keep = vec![true; x.len()];
    for i in 0..x.len() {
        if keep[i] {
            for &j in close.neighbors(i).iter().filter(|&&j| j as usize > i) {
                keep[j as usize] = false;
            }
        }
    }
    Ok(keep)
}

/// The `atoms` kept atoms nearest `(centre, centre)` in the max norm (ties by index), in
/// their original order.
fn nearest_centre(x: &[f64], y: &[f64], keep: &[bool], atoms: usize, centre: f64) -> Atoms {
    let mut by_distance: Vec<(f64, u32)> = (0..x.len())
        .filter(|&i| keep[i])
        .map(|i| ((x[i] - centre).abs().max((y[i] - centre).abs()), i as u32))
        .collect();
    let order = |a: &(f64, u32), b: &(f64, u32)| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1));
    if atoms < by_distance.len() {
        by_distance.select_nth_unstable_by(atoms - 1, order);
    }
    let mut chosen = vec![false; x.len()];
    for &(_, i) in &by_distance[..atoms] {
        chosen[i as usize] = true;
    }
    let pick = |v: &[f64]| (0..v.len()).filter(|&i| chosen[i]).map(|i| v[i]).collect();
    Atoms::new2(pick(x), pick(y)).unwrap_or_default()
}
