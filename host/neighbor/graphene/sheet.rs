//! The sheet before cleaning: grain seeds on a jittered grid, and every grain's lattice
//! points in the region it owns, generated tile by tile (steps 1 and 2 of the
//! [parent module](super)).

use super::{AREA_PER_ATOM, MIN_DISTANCE};
use crate::neighbor::generate::{CC_BOND, unit};
use std::f64::consts::PI;

/// Tiles per grain cell along each axis: small enough that most tiles meet a single grain.
const TILES_PER_GRAIN: f64 = 4.0;

/// Random streams, one per quantity.
const SEED_X: u64 = 1;
const SEED_Y: u64 = 2;
const ANGLE: u64 = 3;
const SHIFT_X: u64 = 4;
const SHIFT_Y: u64 = 5;

/// The points of a run of tiles, and which of them lie near a grain boundary.
#[derive(Debug, Default)]
pub(super) struct Part {
    pub(super) x: Vec<f64>,
    pub(super) y: Vec<f64>,
    /// Indices into `x` and `y` of the points within [`MIN_DISTANCE`] of another grain's region.
    pub(super) near_boundary: Vec<u32>,
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
pub(super) struct Sheet {
    side: f64,
    gx: usize,
    gy: usize,
    grains: Vec<Grain>,
    tiles: usize,
}

impl Sheet {
    /// A square of side `side` with about `grains` grains (a `gx × gy` grid), from `seed`.
    pub(super) fn new(side: f64, grains: usize, seed: u64) -> Sheet {
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

    /// Every grain's lattice points in the region it owns, tile by tile, on every core: one
    /// [`Part`] per core, in tile order.
    pub(super) fn lattice(&self) -> Vec<Part> {
        let total = self.tiles * self.tiles;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per = total.div_ceil(cores).max(1);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..total)
                .step_by(per)
                .map(|first| s.spawn(move || self.part(first..(first + per).min(total))))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                .collect()
        })
    }

    /// The points of tiles `range` (row-major tile indices).
    fn part(&self, range: std::ops::Range<usize>) -> Part {
        let tile_area = (self.side / self.tiles as f64).powi(2);
        // Reserved from the density, so the vectors do not grow (and copy) as they fill.
        let expected = (range.len() as f64 * tile_area / AREA_PER_ATOM * 1.02) as usize;
        let mut part = Part {
            x: Vec::with_capacity(expected),
            y: Vec::with_capacity(expected),
            near_boundary: Vec::new(),
        };
        let mut owners = Vec::new();
        for t in range {
            let (tx, ty) = (t % self.tiles, t / self.tiles);
            let lo = [self.edge(tx), self.edge(ty)];
            let hi = [self.edge(tx + 1), self.edge(ty + 1)];
            // Grains owning points within MIN_DISTANCE of the tile: those a point of the tile
            // can be too close to.
            let reach = |v: [f64; 2], by: f64| v.map(|c| c + by);
            self.candidates(
                reach(lo, -MIN_DISTANCE),
                reach(hi, MIN_DISTANCE),
                &mut owners,
            );
            for &g in &owners {
                self.grain_points(g, lo, hi, &owners, &mut part);
            }
        }
        part
    }

    /// The grains that can own part of the rectangle `[lo, hi)` into `out`.
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
    /// `owners` is `g`'s, appended to `part`, marked when within [`MIN_DISTANCE`] of the
    /// bisector between `g`'s seed and another owner's.
    fn grain_points(
        &self,
        g: usize,
        lo: [f64; 2],
        hi: [f64; 2],
        owners: &[usize],
        part: &mut Part,
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
        let dist = |p: [f64; 2], s: [f64; 2]| (p[0] - s[0]).powi(2) + (p[1] - s[1]).powi(2);
        for i in (imin.floor() as i64 - 1)..=(imax.ceil() as i64 + 1) {
            for j in (jmin.floor() as i64 - 1)..=(jmax.ceil() as i64 + 1) {
                for basis in [0.0, a] {
                    let (lx, ly) = (1.5 * a * (i + j) as f64 + basis, h * (i - j) as f64);
                    let p = [
                        gr.shift[0] + gr.cos * lx - gr.sin * ly,
                        gr.shift[1] + gr.sin * lx + gr.cos * ly,
                    ];
                    if !(p[0] >= lo[0] && p[0] < hi[0] && p[1] >= lo[1] && p[1] < hi[1]) {
                        continue;
                    }
                    let mine = dist(p, gr.seed);
                    let (mut owned, mut near_boundary) = (true, false);
                    for &o in owners.iter().filter(|&&o| o != g) {
                        let s = self.grains[o].seed;
                        let theirs = dist(p, s);
                        // Ties go to the lower grain index, the same in every tile.
                        if (theirs, o) < (mine, g) {
                            owned = false;
                            break;
                        }
                        // p's distance to the seeds' bisector is (theirs − mine) / (2·|s − seed|);
                        // 1 % more than MIN_DISTANCE is room for rounding.
                        let bisector = 2.0 * dist(gr.seed, s).sqrt() * MIN_DISTANCE * 1.01;
                        near_boundary |= theirs - mine < bisector;
                    }
                    if !owned {
                        continue;
                    }
                    if near_boundary {
                        part.near_boundary.push(part.x.len() as u32);
                    }
                    part.x.push(p[0]);
                    part.y.push(p[1]);
                }
            }
        }
    }
}
