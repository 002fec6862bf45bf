//! CPU references for the neighbor lists, and the one pair rule every kernel must reproduce.
//!
//! The GPU's lists must equal these exactly, so the arithmetic is fixed in [`is_neighbor`]:
//! differences, the minimum image, squares and sums in the coordinates' own precision `T`, in
//! one order, with no fused multiply-add. [`half_pairs`] is the book's O(N²) CPU version;
//! [`cell_list`](super::cell_list::cell_list) is the O(N) one for large N.
//!
//! Both count before they fill, so no row can overflow, and refuse a list of more than
//! [`MAX_ENTRIES`] entries — or one the host cannot hold — with an error naming the count.

mod entries;
mod real;

pub(crate) use entries::{EntryBudget, crowd_entries, extent_sq, too_many};
pub use entries::{MAX_ENTRIES, check_entries, check_entry_count};

/// The most atoms a neighbor list holds, on the CPU and on the GPU: atoms are indexed in `u32`,
/// and `u32::MAX` is left free — an unwritten slot of the padded lists holds it, and the cell
/// starts and CSR offsets hold one value more than there are atoms.
pub const MAX_ATOMS: usize = u32::MAX as usize - 1;

/// Refuses more than [`MAX_ATOMS`] atoms.
///
/// # Errors
/// [`Error::TooLarge`] naming the count and the limit.
pub fn check_atom_count(atoms: u64) -> Result<()> {
    Error::check_index_limit(atoms, MAX_ATOMS as u64, "atoms", || {
        format!("{atoms} atoms")
    })
}
pub use real::Real;

use super::list::NeighborList;
use crate::runtime::error::{Error, Result};
use entries::refuse_crowds;

/// Coordinates of N atoms as separate arrays (structure of arrays, as the kernels read them);
/// `z` is `None` in 2-D. All arrays must have the same length.
#[derive(Clone, Copy, Debug)]
pub struct Coords<'a, T> {
    /// x of every atom.
    pub x: &'a [T],
    /// y of every atom.
    pub y: &'a [T],
    /// z of every atom, or `None` for 2-D atoms.
    pub z: Option<&'a [T]>,
}

impl<T: Real> Coords<'_, T> {
    /// How many atoms (the length of `x`).
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there are no atoms.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// 2 or 3.
    pub fn dims(&self) -> usize {
        if self.z.is_some() { 3 } else { 2 }
    }

    /// Atom `i` as `[x, y, z]` in `f64` (z = 0 in 2-D).
    pub fn point(&self, i: usize) -> [f64; 3] {
        let z = self.z.map_or(0.0, |z| z[i].to_f64());
        [self.x[i].to_f64(), self.y[i].to_f64(), z]
    }

    /// Checks what both references need: equal lengths, at most [`MAX_ATOMS`] atoms (indices
    /// are `u32`), finite coordinates and, for a periodic box, [`validate_periodic`].
    ///
    /// # Errors
    /// [`Error::TooLarge`] past [`MAX_ATOMS`]; [`Error::InvalidInput`] naming any other problem
    /// and, for a coordinate, the atom.
    pub fn validate(&self, cutoff: &Cutoff<T>) -> Result<()> {
        let n = self.len();
        if self.y.len() != n || self.z.is_some_and(|z| z.len() != n) {
            return Err(Error::InvalidInput(format!(
                "coordinate arrays differ in length: x {n}, y {}, z {:?}",
                self.y.len(),
                self.z.map(<[T]>::len)
            )));
        }
        check_atom_count(n as u64)?;
        if let Some(i) = (0..n).find(|&i| self.point(i).iter().any(|v| !v.is_finite())) {
            let [x, y, z] = self.point(i);
            return Err(Error::InvalidInput(format!(
                "atom {i} has a coordinate that is not finite: ({x}, {y}, {z})"
            )));
        }
        validate_periodic(self, cutoff)
    }
}

/// The neighbor criterion: the squared cutoff and, for a periodic box, its sides.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cutoff<T> {
    /// `cutoff * cutoff` computed in `T` (as the book's `cutoff_square`).
    pub cutoff_sq: T,
    /// The box's sides `[x, y, z]` for the minimum image; the third is unused in 2-D.
    pub periodic: Option<[T; 3]>,
}

impl<T: Real> Cutoff<T> {
    /// The criterion for `cutoff` (rounded to `T`, then squared in `T`), periodic in a box of
    /// sides `periodic` (rounded to `T`) when given. The sides are checked against the atoms
    /// by [`validate_periodic`], which knows whether z is used.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the cutoff is not finite and positive.
    pub fn new(cutoff: f64, periodic: Option<[f64; 3]>) -> Result<Self> {
        if !(cutoff.is_finite() && cutoff > 0.0) {
            return Err(Error::InvalidInput(format!(
                "cutoff {cutoff}: must be a finite number above 0"
            )));
        }
        let c = T::from_f64(cutoff);
        Ok(Cutoff {
            cutoff_sq: c * c,
            periodic: periodic.map(|sides| sides.map(T::from_f64)),
        })
    }

    /// Whether `side` exceeds twice the cutoff, as `(side/2)² > cutoff_sq` in `T`.
    fn side_fits(&self, side: T) -> bool {
        let half = side * T::from_f64(0.5);
        half * half > self.cutoff_sq
    }
}

/// The minimum image of a difference `d` in a box of side `side`, without a division: a
/// difference of two coordinates in `[0, side)` needs at most one shift.
#[inline]
fn min_image<T: Real>(d: T, side: T) -> T {
    let half = side * T::from_f64(0.5);
    if d > half {
        d - side
    } else if d < -half {
        d + side
    } else {
        d
    }
}

/// THE pair rule: whether atoms `i` and `j` are neighbors.
///
/// `dx = x[j] - x[i]` (likewise `dy`, `dz`), each shifted by [`Cutoff::periodic`]'s side when
/// beyond half of it; `d2 = dx*dx + dy*dy`, then `d2 = d2 + dz*dz` in 3-D; neighbors iff
/// `d2 < cutoff_sq` (strictly) and `i != j`. Every operation is in `T`, rounded on its own
/// (no fused multiply-add), so a kernel doing the same operations gets the same answer.
///
/// # Panics
/// If `i` or `j` is out of range of the coordinates.
#[inline(always)]
pub fn is_neighbor<T: Real>(c: &Coords<'_, T>, cut: &Cutoff<T>, i: usize, j: usize) -> bool {
    if i == j {
        return false;
    }
    let mut dx = c.x[j] - c.x[i];
    let mut dy = c.y[j] - c.y[i];
    if let Some(side) = cut.periodic {
        dx = min_image(dx, side[0]);
        dy = min_image(dy, side[1]);
    }
    let mut d2 = dx * dx + dy * dy;
    if let Some(z) = c.z {
        let mut dz = z[j] - z[i];
        if let Some(side) = cut.periodic {
            dz = min_image(dz, side[2]);
        }
        d2 = d2 + dz * dz;
    }
    d2 < cut.cutoff_sq
}

/// For a periodic box: checks that every side the atoms use (z only in 3-D) is finite and
/// exceeds twice the cutoff (else the minimum image is ambiguous), and that every coordinate
/// lies in `[0, side)`. Does nothing without a box.
///
/// # Errors
/// [`Error::InvalidInput`] naming the first atom outside the box with its coordinate, or the
/// side that is too small.
pub fn validate_periodic<T: Real>(c: &Coords<'_, T>, cut: &Cutoff<T>) -> Result<()> {
    let Some(sides) = cut.periodic else {
        return Ok(());
    };
    for (d, side) in sides.iter().take(c.dims()).enumerate() {
        if !(side.to_f64().is_finite() && cut.side_fits(*side)) {
            return Err(Error::InvalidInput(format!(
                "periodic box side {} = {side:?} must be finite and more than twice the cutoff",
                ["x", "y", "z"][d]
            )));
        }
        let axis = [Some(c.x), Some(c.y), c.z][d].unwrap_or_default();
        if let Some(i) = axis.iter().position(|v| !(*v >= T::ZERO && *v < *side)) {
            return Err(Error::InvalidInput(format!(
                "atom {i}: {} = {:?} is outside the periodic box [0, {side:?})",
                ["x", "y", "z"][d],
                axis[i]
            )));
        }
    }
    Ok(())
}

/// The book's CPU algorithm, O(N²): for each `n1`, every `n2 > n1`; a pair goes into both
/// rows. A first pass counts, a second fills the rows it sized. Rows come out sorted: atom
/// `m` receives the `n1 < m` in increasing order, then its own `n2 > m` in increasing order.
/// Meant for small N (the book's 22 464 atoms take about a second); use
/// [`cell_list`](super::cell_list::cell_list) beyond.
///
/// # Errors
/// [`Coords::validate`]'s errors; [`check_entries`]'s when the list would be too large.
pub fn half_pairs<T: Real>(c: &Coords<'_, T>, cut: &Cutoff<T>) -> Result<NeighborList> {
    c.validate(cut)?;
    let n = c.len();
    // All atoms within one cutoff of each other: every ordered pair is an entry.
    refuse_crowds(n as u64, extent_sq(c, 0..n), cut)?;
    let mut nn = vec![0u32; n];
    let mut total = 0u64;
    for n1 in 0..n {
        for n2 in n1 + 1..n {
            if is_neighbor(c, cut, n1, n2) {
                nn[n1] += 1;
                nn[n2] += 1;
                total += 2;
            }
        }
        // Checked per row, so a crowd is refused within seconds, not after the whole pass.
        if total > MAX_ENTRIES {
            return Err(too_many(total));
        }
    }
    check_entries(n, total, 1)?;
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0u32);
    let mut end = 0u32;
    for &k in &nn {
        end += k;
        offsets.push(end);
    }
    let mut cursor: Vec<u32> = offsets[..n].to_vec();
    let mut indices = vec![0u32; total as usize];
    for n1 in 0..n {
        for n2 in n1 + 1..n {
            if is_neighbor(c, cut, n1, n2) {
                indices[cursor[n1] as usize] = n2 as u32;
                cursor[n1] += 1;
                indices[cursor[n2] as usize] = n1 as u32;
                cursor[n2] += 1;
            }
        }
    }
    Ok(NeighborList::from_parts_unchecked(offsets, indices))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn coords<'a, T>(x: &'a [T], y: &'a [T]) -> Coords<'a, T> {
        Coords { x, y, z: None }
    }

    #[test]
    fn cutoffs_and_boxes_are_validated() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(Cutoff::<f32>::new(bad, None).is_err(), "{bad}");
        }
        let p = coords(&[0.0, 1.0], &[0.0, 1.0]);
        let small = Cutoff::<f64>::new(1.9, Some([3.8, 10.0, 10.0])).unwrap();
        let e = validate_periodic(&p, &small).unwrap_err().to_string();
        assert!(e.contains("side x = 3.8"), "side = 2·cutoff: {e}");
        let open_y = Cutoff::<f64>::new(1.9, Some([3.9, f64::INFINITY, 0.0])).unwrap();
        assert!(validate_periodic(&p, &open_y).is_err());
        // z is unused by 2-D atoms: any value.
        validate_periodic(&p, &Cutoff::<f64>::new(1.9, Some([3.9, 4.0, 0.0])).unwrap()).unwrap();
        let cut = Cutoff::<f64>::new(1.0, Some([4.0, 4.0, 4.0])).unwrap();
        let e = validate_periodic(&coords(&[0.0, 1.0, 4.0], &[0.0; 3]), &cut).unwrap_err();
        assert!(e.to_string().contains("atom 2: x = 4.0"), "{e}");
        assert!(validate_periodic(&coords(&[0.0, 3.9], &[-0.1, 0.0]), &cut).is_err());
    }

    #[test]
    fn the_rule_is_strictly_below_the_cutoff() {
        // 1.5 and 2.25 are exact in binary: the pair at exactly the cutoff is not a neighbor.
        let cut = Cutoff::<f32>::new(1.5, None).unwrap();
        let c = coords(
            &[0.0f32, 1.5, 1.5, 0.0],
            &[0.0f32, 0.0, 1.4999999, 1.4999999],
        );
        assert!(!is_neighbor(&c, &cut, 0, 1));
        assert!(is_neighbor(&c, &cut, 1, 2));
        assert!(is_neighbor(&c, &cut, 0, 3));
        assert!(!is_neighbor(&c, &cut, 0, 0), "never its own neighbor");
        let list = half_pairs(&c, &cut).unwrap();
        assert_eq!(list.neighbors(0), &[3]);
        assert_eq!(list.neighbors(1), &[2]);
    }

    #[test]
    fn the_minimum_image_wraps_each_axis() {
        let cut = Cutoff::<f64>::new(1.0, Some([10.0, 10.0, 10.0])).unwrap();
        let c = Coords {
            x: &[0.2, 9.7, 5.0],
            y: &[5.0, 5.0, 5.0],
            z: Some(&[0.1, 0.1, 9.8]),
        };
        assert!(is_neighbor(&c, &cut, 0, 1) && is_neighbor(&c, &cut, 1, 0));
        assert!(!is_neighbor(&c, &cut, 0, 2));
        let open = Cutoff::<f64>::new(1.0, None).unwrap();
        assert!(!is_neighbor(&c, &open, 0, 1));
    }

    #[test]
    fn half_pairs_fills_both_rows_sorted() {
        let cut = Cutoff::<f64>::new(1.9, None).unwrap();
        // Coincident atoms are neighbors of each other (distance 0 < cutoff).
        let c = coords(&[0.0, 5.0, 1.0, 0.0, 0.0], &[0.0, 5.0, 0.0, 0.0, 0.0]);
        let list = half_pairs(&c, &cut).unwrap();
        assert_eq!(list.neighbors(0), &[2, 3, 4]);
        assert_eq!(list.neighbors(1), &[] as &[u32]);
        assert_eq!(list.neighbors(3), &[0, 2, 4]);
        assert_eq!(list.pairs(), 12);
        assert_eq!(
            half_pairs(&coords::<f64>(&[], &[]), &cut).unwrap().atoms(),
            0
        );
        let one = half_pairs(&coords(&[1.0], &[2.0]), &cut).unwrap();
        assert_eq!((one.atoms(), one.pairs()), (1, 0));
    }

    #[test]
    fn bad_coordinates_are_named() {
        let cut = Cutoff::<f32>::new(1.9, None).unwrap();
        let e = half_pairs(&coords(&[0.0, 1.0, f32::NAN], &[0.0; 3]), &cut).unwrap_err();
        assert!(e.to_string().contains("atom 2"), "{e}");
        let e = half_pairs(&coords(&[0.0, 1.0], &[0.0]), &cut).unwrap_err();
        assert!(e.to_string().contains("differ in length"), "{e}");
    }
}
