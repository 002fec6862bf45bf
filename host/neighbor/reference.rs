//! CPU references for the neighbor lists, and the one pair rule every kernel must reproduce.
//!
//! The GPU's lists must equal these exactly, so the arithmetic is fixed in [`is_neighbor`]:
//! differences, the minimum image, squares and sums in the coordinates' own precision `T`, in
//! one order, with no fused multiply-add. [`half_pairs`] is the book's O(N²) CPU version;
//! [`cell_list`](super::cells::cell_list) is the O(N) one for large N.
//!
//! Both count before they fill, so no row can overflow, and refuse a list of more than
//! [`MAX_ENTRIES`] entries — or one the host cannot hold — with an error naming the count.

use super::list::NeighborList;
use crate::runtime::error::{Error, Result};
use std::fmt::Debug;
use std::ops::{Add, Mul, Neg, Range, Sub};
use std::sync::atomic::{AtomicU64, Ordering};

/// The most entries a list may have: its offsets are `u32`.
pub const MAX_ENTRIES: u64 = u32::MAX as u64;

/// The floating-point types the references run in: `f32` and `f64`.
pub trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
    + Send
    + Sync
    + Debug
    + 'static
{
    /// `v` rounded to this type.
    fn from_f64(v: f64) -> Self;
    /// This value as `f64` (exact).
    fn to_f64(self) -> f64;
    /// Zero.
    const ZERO: Self;
    /// The type's machine epsilon, as `f64`: bounds the rounding of one operation.
    const EPSILON: f64;
}

impl Real for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    const ZERO: Self = 0.0;
    const EPSILON: f64 = f32::EPSILON as f64;
}

impl Real for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    const ZERO: Self = 0.0;
    const EPSILON: f64 = f64::EPSILON;
}

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

    /// Checks what both references need: equal lengths, at most `u32::MAX` atoms (indices are
    /// `u32`), finite coordinates and, for a periodic box, [`validate_periodic`].
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the problem and, for a coordinate, the atom.
    pub fn validate(&self, cutoff: &Cutoff<T>) -> Result<()> {
        let n = self.len();
        if self.y.len() != n || self.z.is_some_and(|z| z.len() != n) {
            return Err(Error::InvalidInput(format!(
                "coordinate arrays differ in length: x {n}, y {}, z {:?}",
                self.y.len(),
                self.z.map(<[T]>::len)
            )));
        }
        if u32::try_from(n).is_err() {
            return Err(Error::InvalidInput(format!(
                "{n} atoms: neighbor indices are u32, at most {} atoms",
                u32::MAX
            )));
        }
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
    /// sides `periodic` (rounded to `T`) when given.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the cutoff is not finite and positive, or a side is not
    /// finite and larger than twice the cutoff (the minimum image would be ambiguous).
    pub fn new(cutoff: f64, periodic: Option<[f64; 3]>) -> Result<Self> {
        if !(cutoff.is_finite() && cutoff > 0.0) {
            return Err(Error::InvalidInput(format!(
                "cutoff {cutoff}: must be a finite number above 0"
            )));
        }
        let c = T::from_f64(cutoff);
        let periodic = periodic.map(|sides| sides.map(T::from_f64));
        let this = Cutoff {
            cutoff_sq: c * c,
            periodic,
        };
        if let Some(sides) = periodic {
            for (d, side) in sides.iter().enumerate() {
                if !side.to_f64().is_finite() || !this.side_fits(*side) {
                    return Err(Error::InvalidInput(format!(
                        "periodic box side {} = {side:?} must be finite and more than twice \
                         the cutoff {cutoff}",
                        ["x", "y", "z"][d]
                    )));
                }
            }
        }
        Ok(this)
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

/// For a periodic box: checks that every coordinate lies in `[0, side)` and every side exceeds
/// twice the cutoff. Does nothing without a box.
///
/// # Errors
/// [`Error::InvalidInput`] naming the first atom outside the box with its coordinate, or the
/// side that is too small.
pub fn validate_periodic<T: Real>(c: &Coords<'_, T>, cut: &Cutoff<T>) -> Result<()> {
    let Some(sides) = cut.periodic else {
        return Ok(());
    };
    for (d, side) in sides.iter().take(c.dims()).enumerate() {
        if !cut.side_fits(*side) {
            return Err(Error::InvalidInput(format!(
                "periodic box side {side:?} is not more than twice the cutoff"
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
/// [`cell_list`](super::cells::cell_list) beyond.
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
            return Err(too_many(&format!("at least {total}")));
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

/// The squared diagonal of the bounding box of atoms `atoms`, in `f64` (0 for none).
pub(crate) fn extent_sq<T: Real>(c: &Coords<'_, T>, atoms: Range<usize>) -> f64 {
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for i in atoms {
        let p = c.point(i);
        for d in 0..3 {
            lo[d] = lo[d].min(p[d]);
            hi[d] = hi[d].max(p[d]);
        }
    }
    (0..3).map(|d| (hi[d] - lo[d]).max(0.0).powi(2)).sum()
}

/// Entries that `k` atoms inside a box of squared diagonal `diag_sq` certainly produce: all
/// `k·(k−1)` when the diagonal is below the cutoff by more than `T`'s rounding (1e-4 is
/// thousands of `f32` epsilons), else 0. A lower bound, so a crowd is refused before a count
/// pass that would take `k²` steps.
pub(crate) fn crowd_entries<T: Real>(k: u64, diag_sq: f64, cut: &Cutoff<T>) -> u64 {
    if diag_sq < cut.cutoff_sq.to_f64() * (1.0 - 1e-4) {
        k.saturating_mul(k.saturating_sub(1))
    } else {
        0
    }
}

/// Refuses `k` atoms within one box of squared diagonal `diag_sq` if they alone make more
/// than [`MAX_ENTRIES`] entries.
fn refuse_crowds<T: Real>(k: u64, diag_sq: f64, cut: &Cutoff<T>) -> Result<()> {
    match crowd_entries(k, diag_sq, cut) {
        e if e > MAX_ENTRIES => Err(too_many(&format!("at least {e}"))),
        _ => Ok(()),
    }
}

/// Checks a counted list of `total` entries over `atoms` atoms: at most [`MAX_ENTRIES`], and
/// room in host memory for `copies` lists of that size (an algorithm may build one in a
/// working order, then copy it).
///
/// # Errors
/// [`Error::InvalidInput`] naming the count past [`MAX_ENTRIES`]; [`Error::TooLarge`] naming
/// it when the host lacks the memory.
pub fn check_entries(atoms: usize, total: u64, copies: u64) -> Result<()> {
    if total > MAX_ENTRIES {
        return Err(too_many(&total.to_string()));
    }
    let bytes = (total + atoms as u64 + 1).saturating_mul(4 * copies);
    crate::runtime::memory::check_host(
        &format!("a neighbor list of {atoms} atoms and {total} entries"),
        bytes,
    )
}

/// The error for a list past [`MAX_ENTRIES`]; `what` is the count as known ("at least 5e9").
pub(crate) fn too_many(what: &str) -> Error {
    Error::InvalidInput(format!(
        "the neighbor list would have {what} entries, more than the {MAX_ENTRIES} its u32 \
         offsets can index: lower the cutoff or spread the atoms"
    ))
}

/// Counts entries from many threads and says when they pass [`MAX_ENTRIES`], so a count pass
/// over a crowd stops early instead of running for minutes.
#[derive(Debug, Default)]
pub(crate) struct EntryBudget {
    used: AtomicU64,
}

impl EntryBudget {
    /// Adds `k` entries; false once the total has passed [`MAX_ENTRIES`] (for every thread).
    pub(crate) fn add(&self, k: u64) -> bool {
        self.used.fetch_add(k, Ordering::Relaxed).saturating_add(k) <= MAX_ENTRIES
    }

    /// The entries added so far.
    pub(crate) fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }
}
