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
//!    Points within [`MIN_DISTANCE`] of a boundary between two grains are marked: only they
//!    can be too close to an atom of another grain (a few percent of the sheet).
//! 3. Among the marked points, pairs closer than [`MIN_DISTANCE`] are found with the cell list
//!    and one of each pair removed (in index order, the earlier atom stays).
//! 4. The `atoms` atoms nearest the centre (in the max norm: a square patch) are kept, in
//!    generation order (tile by tile, so nearby atoms have nearby indices), found with a
//!    histogram of distances rather than a sort.

mod sheet;

use super::cell_list::cell_list;
use super::generate::{CC_BOND, check_atoms};
use super::points::Atoms;
use super::reference::Cutoff;
use crate::runtime::error::{Error, Result};
use sheet::{Part, Sheet};

/// About how many atoms one grain holds.
pub const ATOMS_PER_GRAIN: usize = 5_000;

/// The fewest grains: a single crystal would have no boundary.
pub const MIN_GRAINS: usize = 2;

/// The most grains, keeping grains of a large sheet large.
pub const MAX_GRAINS: usize = 300;

/// Atoms of different grains closer than this (Å) are too close: one of them is removed.
pub const MIN_DISTANCE: f64 = 1.0;

/// Area per atom of graphene, Å²: a hexagon of side `a` (area `3√3/2·a²`) holds two atoms.
const AREA_PER_ATOM: f64 = 0.75 * 1.732_050_807_568_877_2 * CC_BOND * CC_BOND;

/// Host bytes per atom while generating: the sheet before trimming (about 1.2 points per atom
/// kept, 16 bytes each), the result (16 bytes), and the cell list over the points near
/// boundaries (a few percent of the sheet), with room to spare.
const BYTES_PER_ATOM: u64 = 64;

/// A polycrystalline graphene sheet of exactly `atoms` atoms (see the [module docs](self)),
/// a deterministic function of `seed`: nearly every atom has 3 neighbors at the book's cutoff
/// (1.9 Å), atoms at grain boundaries and the edges fewer or more. Coordinates in Å, positive.
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
        let parts = Sheet::new(side, grains, seed).lattice();
        let removed = too_close(&parts)?;
        let total: usize = parts.iter().map(|p| p.x.len()).sum();
        if total - removed.len() >= atoms {
            return nearest_centre(&parts, &removed, atoms, side / 2.0);
        }
        margin *= 1.25;
    }
    Err(Error::InvalidInput(format!(
        "graphene of {atoms} atoms: the sheet came out too small"
    )))
}

/// The indices (over all parts, ascending) of the points to remove so that no two are closer
/// than [`MIN_DISTANCE`]: among the points near a boundary (the only ones that can be too close
/// to another grain's; atoms of one grain are a bond apart), in index order, a point goes if an
/// earlier one that stays is too close.
fn too_close(parts: &[Part]) -> Result<Vec<usize>> {
    let mut index = Vec::new();
    let (mut x, mut y) = (Vec::new(), Vec::new());
    let mut first = 0;
    for part in parts {
        for &k in &part.near_boundary {
            index.push(first + k as usize);
            x.push(part.x[k as usize]);
            y.push(part.y[k as usize]);
        }
        first += part.x.len();
    }
    let coords = super::reference::Coords {
        x: &x,
        y: &y,
        z: None,
    };
    let close = cell_list(&coords, &Cutoff::new(MIN_DISTANCE, None)?)?;
    let mut keep = vec![true; index.len()];
    for k in 0..index.len() {
        if keep[k] {
            for &j in close.neighbors(k).iter().filter(|&&j| j as usize > k) {
                keep[j as usize] = false;
            }
        }
    }
    Ok(index
        .into_iter()
        .zip(keep)
        .filter(|&(_, k)| !k)
        .map(|(i, _)| i)
        .collect())
}

/// Calls `f(index, x, y)` for every point of `parts` in order, skipping `removed` (ascending).
fn for_each_kept(parts: &[Part], removed: &[usize], mut f: impl FnMut(usize, f64, f64)) {
    let mut removed = removed.iter().peekable();
    let mut index = 0;
    for part in parts {
        for (&x, &y) in part.x.iter().zip(&part.y) {
            if removed.next_if_eq(&&index).is_none() {
                f(index, x, y);
            }
            index += 1;
        }
    }
}

/// The `atoms` kept points nearest `(centre, centre)` in the max norm (ties by index), in
/// their order: a histogram of the distances finds the ring where the count is reached, and
/// only that ring's points are sorted.
fn nearest_centre(parts: &[Part], removed: &[usize], atoms: usize, centre: f64) -> Result<Atoms> {
    const BINS: usize = 1 << 16;
    let bin_of = |x: f64, y: f64| {
        let r = (x - centre).abs().max((y - centre).abs());
        ((r / centre * BINS as f64) as usize).min(BINS - 1)
    };
    let mut histogram = vec![0usize; BINS];
    for_each_kept(parts, removed, |_, x, y| histogram[bin_of(x, y)] += 1);
    let (mut ring, mut inside) = (0, 0);
    while ring + 1 < BINS && inside + histogram[ring] < atoms {
        inside += histogram[ring];
        ring += 1;
    }
    let mut edge = Vec::new();
    for_each_kept(parts, removed, |i, x, y| {
        if bin_of(x, y) == ring {
            edge.push(((x - centre).abs().max((y - centre).abs()), i));
        }
    });
    edge.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut chosen: Vec<usize> = edge.iter().take(atoms - inside).map(|e| e.1).collect();
    chosen.sort_unstable();
    let (mut ax, mut ay) = (Vec::with_capacity(atoms), Vec::with_capacity(atoms));
    for_each_kept(parts, removed, |i, x, y| {
        let b = bin_of(x, y);
        if b < ring || (b == ring && chosen.binary_search(&i).is_ok()) {
            ax.push(x);
            ay.push(y);
        }
    });
    Atoms::new2(ax, ay)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neighbor::generate::{DEFAULT_CUTOFF, MAX_ATOMS};

    fn cut(c: f64) -> Cutoff<f64> {
        Cutoff::new(c, None).unwrap()
    }

    #[test]
    fn exactly_the_atoms_asked_for_deterministically() {
        for n in [0, 1, 2, 3, 10, 101, 4000] {
            let a = graphene(n, 5).unwrap();
            assert_eq!((a.len(), a.dims()), (n, 2));
            assert_eq!(a, graphene(n, 5).unwrap(), "the same for one seed");
        }
        assert_ne!(graphene(1000, 1).unwrap(), graphene(1000, 2).unwrap());
        assert!(graphene(MAX_ATOMS + 1, 1).is_err());
    }

    #[test]
    fn the_books_sheet_is_bonded_like_graphene() {
        let atoms = graphene(22_464, 1).unwrap();
        let list = cell_list(&atoms.coords(), &cut(DEFAULT_CUTOFF)).unwrap();
        let three = list.counts().filter(|&c| c == 3).count();
        assert!(
            three as f64 >= 0.95 * atoms.len() as f64,
            "{:?}",
            list.count_histogram()
        );
        assert!(list.max_count() <= 6, "{:?}", list.count_histogram());
        // No two atoms closer than MIN_DISTANCE, grain boundaries included.
        let close = cell_list(&atoms.coords(), &cut(MIN_DISTANCE)).unwrap();
        assert_eq!(close.pairs(), 0);
        // A square patch, not a strip.
        let span = |v: &[f64]| {
            v.iter().cloned().fold(f64::MIN, f64::max) - v.iter().cloned().fold(f64::MAX, f64::min)
        };
        let (w, h) = (span(atoms.x()), span(atoms.y()));
        assert!((w / h - 1.0).abs() < 0.05 && w > 200.0, "{w} × {h}");
    }

    #[test]
    fn grains_meet_at_boundaries() {
        // Several grains: some atoms have other than 3 neighbors inside the patch, not only at
        // its edges (a single crystal would have none).
        let atoms = graphene(60_000, 3).unwrap();
        let list = cell_list(&atoms.coords(), &cut(DEFAULT_CUTOFF)).unwrap();
        let (x, y) = (atoms.x(), atoms.y());
        let lo = x.iter().cloned().fold(f64::MAX, f64::min) + 5.0;
        let hi = x.iter().cloned().fold(f64::MIN, f64::max) - 5.0;
        let (ylo, yhi) = (
            y.iter().cloned().fold(f64::MAX, f64::min) + 5.0,
            y.iter().cloned().fold(f64::MIN, f64::max) - 5.0,
        );
        let defects = (0..atoms.len())
            .filter(|&i| x[i] > lo && x[i] < hi && y[i] > ylo && y[i] < yhi && list.count(i) != 3)
            .count();
        assert!(defects > 20, "{defects}");
    }
}
