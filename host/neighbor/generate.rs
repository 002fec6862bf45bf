//! Deterministic atoms for the neighbor lists: a perfect honeycomb, uniform random points,
//! and (in [`super::graphene`]) the book's polycrystalline graphene sheet. Every value is a
//! function of the seed and an index (SplitMix64), so the atoms are the same on every machine
//! (the graphene grains' orientations go through `sin` and `cos`, whose last bit may differ
//! between math libraries) and are generated in parallel.

use super::points::Atoms;
use crate::inputs::{par_chunks_mut, splitmix64};
use crate::runtime::error::{Error, Result};
use std::f64::consts::PI;

/// The carbon–carbon bond length of graphene, in Å.
pub const CC_BOND: f64 = 1.42;

/// The book's cutoff, in Å: between the first (1.42 Å) and second (2.46 Å) neighbor
/// distances of graphene.
pub const DEFAULT_CUTOFF: f64 = 1.9;

/// The most atoms a generator makes: past this the neighbor lists would not fit a GPU.
pub const MAX_ATOMS: usize = 100_000_000;

/// The mean neighbor count of [`random`] points at [`DEFAULT_CUTOFF`]: that of a dense
/// liquid, a little above graphene's 3.
pub const RANDOM_MEAN_NEIGHBORS: f64 = 6.0;

/// Refuses `atoms` past [`MAX_ATOMS`] or past host memory at `bytes_per_atom` each; the
/// option named is `--len N`.
pub(crate) fn check_atoms(atoms: usize, bytes_per_atom: u64) -> Result<()> {
    let option = format!("--len {atoms}");
    if atoms > MAX_ATOMS {
        return Err(Error::InvalidInput(format!(
            "{option}: at most {MAX_ATOMS} atoms are generated"
        )));
    }
    crate::runtime::memory::check_host(&option, (atoms as u64).saturating_mul(bytes_per_atom))
}

/// A number uniform in `[0, 1)` (53 bits), from `seed`, a `stream` (one per quantity) and an
/// index.
pub(crate) fn unit(seed: u64, stream: u64, index: u64) -> f64 {
    let h = splitmix64(splitmix64(seed ^ splitmix64(stream)) ^ index);
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A perfect single-crystal honeycomb (bond [`CC_BOND`]) of exactly `atoms` atoms in a
/// near-square patch: rows of zigzag chains along x, filled row by row from the bottom left,
/// the last row cut short where the count ends. Every atom away from the edges has 3
/// neighbors at [`DEFAULT_CUTOFF`]; coordinates start at 0.
///
/// # Errors
/// [`Error::InvalidInput`] past [`MAX_ATOMS`]; [`Error::TooLarge`] past host memory.
pub fn honeycomb(atoms: usize) -> Result<Atoms> {
    check_atoms(atoms, 16)?;
    let a = CC_BOND;
    // A row holds `2·cells` atoms in `3a·cells` of x; rows are `(√3/2)·a` apart. A square:
    // 3a·cells ≈ (√3/2)·a·rows with rows ≈ atoms / (2·cells), so cells² ≈ atoms / (4√3).
    let cells = ((atoms as f64 / (4.0 * 3f64.sqrt())).sqrt().ceil() as usize).max(1);
    let per_row = 2 * cells;
    let mut x = vec![0.0; atoms];
    let mut y = vec![0.0; atoms];
    par_chunks_mut(&mut x, |first, chunk| {
        for (k, v) in chunk.iter_mut().enumerate() {
            let (row, col) = ((first + k) / per_row, (first + k) % per_row);
            // Even rows: atoms at 3a·c and 3a·c + a; odd rows shifted by 1.5a.
            let shift = if row % 2 == 1 { 1.5 * a } else { 0.0 };
            *v = 3.0 * a * (col / 2) as f64 + a * (col % 2) as f64 + shift;
        }
    });
    par_chunks_mut(&mut y, |first, chunk| {
        for (k, v) in chunk.iter_mut().enumerate() {
            *v = ((first + k) / per_row) as f64 * 0.5 * 3f64.sqrt() * a;
        }
    });
    Atoms::new2(x, y)
}

/// The side of the square (`dims` 2) or cube (`dims` 3; any other value is taken as 2) in
/// which `atoms` uniform points have about [`RANDOM_MEAN_NEIGHBORS`] neighbors each at
/// [`DEFAULT_CUTOFF`] (ignoring the edges): the density times the cutoff circle's area (or
/// sphere's volume) is that mean. 0 for no atoms.
pub fn random_box_side(atoms: usize, dims: usize) -> f64 {
    let rc = DEFAULT_CUTOFF;
    if dims == 3 {
        let density = RANDOM_MEAN_NEIGHBORS / (4.0 / 3.0 * PI * rc.powi(3));
        (atoms as f64 / density).cbrt()
    } else {
        let density = RANDOM_MEAN_NEIGHBORS / (PI * rc * rc);
        (atoms as f64 / density).sqrt()
    }
}

/// `atoms` points uniform in `[0, side)` per axis, `side` being [`random_box_side`], in 2-D or
/// 3-D; a deterministic function of `seed`. Every coordinate is below `side`, so the points
/// also fit a periodic box of that side.
///
/// # Errors
/// [`Error::InvalidInput`] if `dims` is not 2 or 3, or past [`MAX_ATOMS`];
/// [`Error::TooLarge`] past host memory.
pub fn random(atoms: usize, dims: usize, seed: u64) -> Result<Atoms> {
    if !(2..=3).contains(&dims) {
        return Err(Error::InvalidInput(format!(
            "random points in {dims} dimensions: expected 2 or 3"
        )));
    }
    check_atoms(atoms, 8 * dims as u64)?;
    let side = random_box_side(atoms, dims);
    let axis = |stream: u64| {
        let mut v = vec![0.0; atoms];
        par_chunks_mut(&mut v, |first, chunk| {
            for (k, c) in chunk.iter_mut().enumerate() {
                // The product can round up to `side` itself; keep it inside the box.
                *c = (unit(seed, stream, (first + k) as u64) * side).min(side.next_down());
            }
        });
        v
    };
    if dims == 3 {
        Atoms::new3(axis(0), axis(1), axis(2))
    } else {
        Atoms::new2(axis(0), axis(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neighbor::cell_list::cell_list;
    use crate::neighbor::reference::Cutoff;
    use approx::assert_relative_eq;

    fn cutoff() -> Cutoff<f64> {
        Cutoff::new(DEFAULT_CUTOFF, None).unwrap()
    }

    #[test]
    fn honeycomb_interior_atoms_have_three_neighbors() {
        for n in [0, 1, 2, 7, 1000] {
            assert_eq!(honeycomb(n).unwrap().len(), n);
        }
        let atoms = honeycomb(2000).unwrap();
        let list = cell_list(&atoms.coords(), &cutoff()).unwrap();
        let (x, y) = (atoms.x(), atoms.y());
        let (xmax, ymax) = (
            x.iter().cloned().fold(0.0, f64::max),
            y.iter().cloned().fold(0.0, f64::max),
        );
        let mut interior = 0;
        for i in 0..atoms.len() {
            if x[i] > 2.0 && x[i] < xmax - 2.0 && y[i] > 2.0 && y[i] < ymax - 2.0 {
                assert_eq!(list.count(i), 3, "atom {i} at ({}, {})", x[i], y[i]);
                interior += 1;
            }
        }
        assert!(interior > 1500, "{interior}");
        assert!(
            list.max_count() == 3 && (xmax / ymax - 1.0).abs() < 0.2,
            "{xmax} × {ymax}"
        );
    }

    #[test]
    fn random_points_fill_their_box_with_about_six_neighbors() {
        assert!(random(10, 4, 1).is_err());
        assert!(random(MAX_ATOMS + 1, 2, 1).is_err());
        for dims in [2, 3] {
            let atoms = random(20_000, dims, 7).unwrap();
            assert_eq!(atoms, random(20_000, dims, 7).unwrap(), "deterministic");
            assert_ne!(atoms, random(20_000, dims, 8).unwrap());
            let side = random_box_side(20_000, dims);
            assert!(atoms.x().iter().all(|&v| (0.0..side).contains(&v)));
            let list = cell_list(&atoms.coords(), &cutoff()).unwrap();
            let mean = list.pairs() as f64 / atoms.len() as f64;
            // The atoms near the faces have fewer neighbors: a little below 6.
            assert_relative_eq!(mean, RANDOM_MEAN_NEIGHBORS, max_relative = 0.15);
        }
        assert_eq!(random_box_side(0, 2), 0.0);
    }
}
