//! The library call: the neighbors of `nalgebra` points on a target, as a sorted CSR list.

use super::launch::{
    CellList, CellPlan, DeviceAtoms, MAX_GPU_CHECKS, MAX_SIM_CHECKS, Precision, rule,
};
use super::list::NeighborList;
use super::points::Atoms;
use super::reference::{Coords, Cutoff};
use crate::runtime::error::Result;
use crate::runtime::launch::Target;
use nalgebra::{Point2, Point3, Scalar};

/// A point [`neighbor_list`] takes: `nalgebra`'s `Point2` or `Point3` of `f32` or `f64`. The
/// kernels run in the points' own precision.
pub trait NeighborPoint: Copy {
    /// `f32` or `f64`.
    type Real: Precision;
    /// The points as [`Atoms`].
    fn atoms(points: &[Self]) -> Atoms;
}

impl<T: Precision + Scalar> NeighborPoint for Point2<T> {
    type Real = T;
    fn atoms(points: &[Self]) -> Atoms {
        Atoms::from_points2(points)
    }
}

impl<T: Precision + Scalar> NeighborPoint for Point3<T> {
    type Real = T;
    fn atoms(points: &[Self]) -> Atoms {
        Atoms::from_points3(points)
    }
}

/// The neighbors of every point — the points closer than `cutoff` (strictly), itself excluded —
/// as a CSR list whose rows are sorted, built on `target` by the O(N) cell list.
///
/// ```no_run
/// use gridsync::nalgebra::Point2;
/// # fn main() -> gridsync::Result<()> {
/// let target = gridsync::Target::open(0, false)?;
/// let points = [Point2::new(0.0f32, 0.0), Point2::new(1.42, 0.0), Point2::new(9.0, 9.0)];
/// let list = gridsync::neighbor::neighbor_list(&target, &points, 1.9)?;
/// assert_eq!(list.neighbors(0), &[1]);
/// assert!(list.neighbors(2).is_empty());
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`Error::InvalidInput`](crate::Error::InvalidInput) for a cutoff that is not finite and
/// positive, a coordinate that is not finite (naming the point), or points so crowded that the
/// search would take more than about a second ([`MAX_GPU_CHECKS`] pair checks — for instance
/// 10⁶ points on one spot); [`Error::TooLarge`](crate::Error::TooLarge) if the list has more
/// than 2³² − 1 entries or does not fit in GPU memory; a driver error.
pub fn neighbor_list<P: NeighborPoint>(
    target: &Target,
    points: &[P],
    cutoff: f64,
) -> Result<NeighborList> {
    build::<P::Real>(target, &P::atoms(points), cutoff, None)
}

/// [`neighbor_list`] in a periodic box of sides `sides` (`[x, y]` used in 2-D) with its corner
/// at the origin: distances by the minimum image, for simulations with periodic boundaries.
///
/// # Errors
/// As [`neighbor_list`]; [`Error::InvalidInput`](crate::Error::InvalidInput) if a side is not
/// larger than twice the cutoff or a point lies outside `[0, side)`.
pub fn neighbor_list_periodic<P: NeighborPoint>(
    target: &Target,
    points: &[P],
    cutoff: f64,
    sides: [f64; 3],
) -> Result<NeighborList> {
    build::<P::Real>(target, &P::atoms(points), cutoff, Some(sides))
}

/// The cell list on `target` over `atoms` in precision `T`: the list, checked for sizes and
/// inputs first.
///
/// # Errors
/// As [`neighbor_list_periodic`].
pub fn build<T: Precision>(
    target: &Target,
    atoms: &Atoms,
    cutoff: f64,
    periodic: Option<[f64; 3]>,
) -> Result<NeighborList> {
    let checked = Checked::<T>::new(target, atoms, cutoff, periodic)?;
    let device = DeviceAtoms::<T>::upload(target, atoms)?;
    let rule = rule(&checked.cut, atoms.dims());
    let mut cells = CellList::new(target, &device, &checked.plan, rule)?;
    cells.build_csr()
}

/// What the library call and the demo check before anything runs on a target, with what they
/// computed on the way: finite coordinates (in the kernels' precision too: a finite `f64` may
/// round to an infinite `f32`), a cutoff and box that make sense, and cells whose search costs
/// at most what the target can do in about a second.
pub(crate) struct Checked<T> {
    /// The pair rule's cutoff (and box) in `T`.
    pub cut: Cutoff<T>,
    /// The coordinates rounded to `T`: `x`, `y`, and `z` in 3-D.
    pub rounded: (Vec<T>, Vec<T>, Option<Vec<T>>),
    /// The cells.
    pub plan: CellPlan,
}

impl<T: Precision> Checked<T> {
    /// Checks `atoms` under `cutoff` (and the box `periodic`) for `target`.
    ///
    /// # Errors
    /// As [`neighbor_list_periodic`].
    pub fn new(
        target: &Target,
        atoms: &Atoms,
        cutoff: f64,
        periodic: Option<[f64; 3]>,
    ) -> Result<Checked<T>> {
        atoms.check_finite()?;
        let cut = Cutoff::<T>::new(cutoff, periodic)?;
        let rounded = atoms.rounded::<T>();
        let checked = Checked {
            cut,
            rounded,
            plan: CellPlan::new(atoms, cutoff, periodic)?,
        };
        checked.coords().validate(&checked.cut)?;
        checked.plan.check_cost(if target.is_sim() {
            MAX_SIM_CHECKS
        } else {
            MAX_GPU_CHECKS
        })?;
        Ok(checked)
    }

    /// The rounded coordinates as the CPU references read them.
    pub fn coords(&self) -> Coords<'_, T> {
        Coords {
            x: &self.rounded.0,
            y: &self.rounded.1,
            z: self.rounded.2.as_deref(),
        }
    }
}
