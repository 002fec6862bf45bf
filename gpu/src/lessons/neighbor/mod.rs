//! Neighbor lists: for every atom, the atoms closer than a cutoff — from the CUDA book's O(N²)
//! kernels to an O(N) cell list.
//!
//! Source: the CUDA book (zh), section 9.3, "building a neighbor list": the carbon atoms of a
//! polycrystalline graphene sheet, `x` and `y` in Å, neighbors below 1.9 Å; `NN[n]` counts the
//! neighbors of atom `n` and `NL[n*MN + k]` names its `k`-th, `MN` slots per atom.
//!
//! | kernel | what changed | why |
//! |---|---|---|
//! | [`find_neighbor_atomic_f32`] | the book's `find_neighbor_atomic`: half the pairs, both lists appended to with `atomicAdd`'s result as the slot | half the distance checks, but two threads may append to one atom at once: atomics |
//! | [`find_neighbor_wrong_f32`] | the book's mistake: read `NN[n1]`, write the slot, *then* `atomicAdd` | two threads read the same count and write the same slot: neighbors lost, slots never written |
//! | [`find_neighbor_no_atomic_f32`] | the book's `find_neighbor_no_atomic`: every pair checked from both sides, a count in a register, `NL[k*N + n1]` | twice the checks, no atomics, coalesced writes |
//! | [`cell_bin_f32`] … [`cell_fill_f32`] | an O(N) cell list: bin atoms into cells of at least the cutoff, scan, scatter, and search only the 3×3 (3×3×3) cells around each atom | checks ~12 candidates per atom instead of N |
//!
//! Every kernel exists in `f32` and `f64` (the book's `USE_DP`), except the mistake.
//!
//! # The pair rule
//!
//! Every kernel here and the host's CPU references decide a pair the same way ([`Rule`]):
//! `dx = x[j] - x[i]` (in a periodic box, moved by one box side to the nearest image), then
//! `d2 = dx*dx + dy*dy`, then `d2 + dz*dz` in 3-D, and `j` is a neighbor of `i` when `i != j`
//! and `d2 < cutoff²` — strictly below, as the book writes it. The same operations in the same
//! order and precision give the same bits on the GPU and the CPU (rustc does not contract them
//! into `fma`), so the lists are compared for equality, not closeness.
//!
//! # Overflow
//!
//! The book notes that an `MN` too small means memory errors. Here every write into a padded
//! list is guarded by `k < MN`; the counts keep counting past it, so the host learns each
//! atom's true count and reports the atom and the `MN` that would fit — nothing is written
//! out of bounds. The CSR path ([`cell_count_f32`], then a scan, then [`cell_fill_f32`]) sizes
//! its output exactly and cannot overflow: a fill into a buffer smaller than the total writes
//! nothing, and the host fills again once it has grown the buffer.

mod book;
mod cells;
mod scan;

pub use book::*;
pub use cells::*;
pub use scan::*;

use crate::readonly::{Ldg, ldg};
use core::ops::{Add, Mul, Neg, Sub};

/// Threads per block of every kernel here: eight warps — enough to hide the latency of the
/// loads in the search loops, small enough to fill an SM with several blocks.
pub const THREADS_PER_BLOCK: u32 = 256;

/// A coordinate type of the kernels: `f32` or `f64`.
pub trait Coord:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Neg<Output = Self>
    + Ldg
{
    /// Zero.
    const ZERO: Self;
    /// One half, for the half box side of the minimum image.
    const HALF: Self;
    /// The cell index along one axis: `(self - origin) * inv_size` truncated toward zero and
    /// clamped to `0..cells` (NaN and negative values give 0).
    fn cell(self, origin: Self, inv_size: Self, cells: u32) -> u32;
}

macro_rules! coord {
    ($($t:ty),*) => {$(
        impl Coord for $t {
            const ZERO: $t = 0.0;
            const HALF: $t = 0.5;
            #[inline(always)]
            fn cell(self, origin: $t, inv_size: $t, cells: u32) -> u32 {
                let u = (self - origin) * inv_size;
                // `as` saturates (NaN → 0), so a far-away value lands in the last cell.
                (u as u32).min(cells.saturating_sub(1))
            }
        }
    )*};
}
coord!(f32, f64);

/// The atoms' coordinates, one array per axis (the book's `d_x`, `d_y`); `z` is null for 2-D
/// points.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Atoms<T> {
    /// `x` of every atom.
    pub x: *const T,
    /// `y` of every atom.
    pub y: *const T,
    /// `z` of every atom, or null in 2-D.
    pub z: *const T,
}

impl<T: Coord> Atoms<T> {
    /// The coordinates of atom `i`, `z` read only in 3-D (`D3`; zero otherwise), through the
    /// read-only cache: no kernel here writes the atoms it searches.
    ///
    /// # Safety
    /// `i` is below the length of the arrays, which no thread writes during the launch; `z` is
    /// not null when `D3`.
    #[inline(always)]
    pub unsafe fn at<const D3: bool>(&self, i: usize) -> [T; 3] {
        // SAFETY: the caller's bound.
        unsafe {
            let z = if D3 { ldg(self.z.add(i)) } else { T::ZERO };
            [ldg(self.x.add(i)), ldg(self.y.add(i)), z]
        }
    }

    /// The coordinates of atom `i` (`z` zero in 2-D), for the kernels outside the hot loops.
    ///
    /// # Safety
    /// As [`Atoms::at`].
    #[inline(always)]
    pub unsafe fn get(&self, i: usize) -> [T; 3] {
        // SAFETY: forwarded; `z` is read only when it is there.
        unsafe {
            if self.z.is_null() {
                self.at::<false>(i)
            } else {
                self.at::<true>(i)
            }
        }
    }

    /// Whether `z` is there: the kernels take the 3-D path only then (and when the rule says
    /// 3-D), so that a null `z` is never read.
    #[inline(always)]
    pub fn is_3d(&self, rule: &Rule<T>) -> bool {
        rule.dims == 3 && !self.z.is_null()
    }
}

/// Calls `$f::<$t, D3, PERIODIC>($args)` with the two flags as constants: the pair test inside
/// the kernels' loops then has no branch on the dimension or the box, and the 2-D open-space
/// loop is the book's.
macro_rules! specialize {
    ($d3:expr, $periodic:expr, $f:ident::<$t:ty>($($arg:expr),* $(,)?)) => {
        match ($d3, $periodic) {
            (false, false) => $f::<$t, false, false>($($arg),*),
            (false, true) => $f::<$t, false, true>($($arg),*),
            (true, false) => $f::<$t, true, false>($($arg),*),
            (true, true) => $f::<$t, true, true>($($arg),*),
        }
    };
}
pub(crate) use specialize;

/// When two atoms are neighbors: [the pair rule](self#the-pair-rule).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule<T> {
    /// The cutoff squared, computed in `T` (`cutoff * cutoff`).
    pub cutoff_sq: T,
    /// The box's sides, for a periodic box (unused otherwise).
    pub side: [T; 3],
    /// 1 for a periodic box (minimum image along every axis), 0 for open space.
    pub periodic: u32,
    /// 2 or 3: whether `z` takes part.
    pub dims: u32,
}

impl<T: Coord> Rule<T> {
    /// `d` moved by one box side toward zero when it is more than half a side away: the
    /// minimum image, for coordinates inside the box.
    #[inline(always)]
    fn wrap(&self, d: T, axis: usize) -> T {
        let side = self.side[axis];
        let half = side * T::HALF;
        if d > half {
            d - side
        } else if d < -half {
            d + side
        } else {
            d
        }
    }

    /// Whether an atom at `b` is within the cutoff of one at `a` (the caller checks `i != j`),
    /// in 3-D when `D3`, in the periodic box when `PERIODIC`.
    #[inline(always)]
    pub fn within<const D3: bool, const PERIODIC: bool>(&self, a: [T; 3], b: [T; 3]) -> bool {
        let mut dx = b[0] - a[0];
        let mut dy = b[1] - a[1];
        if PERIODIC {
            dx = self.wrap(dx, 0);
            dy = self.wrap(dy, 1);
        }
        let mut d2 = dx * dx + dy * dy;
        if D3 {
            let mut dz = b[2] - a[2];
            if PERIODIC {
                dz = self.wrap(dz, 2);
            }
            d2 = d2 + dz * dz;
        }
        d2 < self.cutoff_sq
    }

    /// Whether the box is periodic.
    #[inline(always)]
    pub fn is_periodic(&self) -> bool {
        self.periodic != 0
    }
}

/// Which slot of a padded list holds neighbor `k` of atom `n`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `NL[n*MN + k]`: the book's CPU and atomic layout, and its `neighbor.txt`.
    PerAtom = 0,
    /// `NL[k*N + n]`: the book's layout without atomics: consecutive threads (atoms) write
    /// consecutive addresses.
    Transposed = 1,
}

/// The slot of neighbor `k` of atom `n` among `atoms` atoms with `mn` slots each.
#[inline(always)]
pub fn slot(layout: u32, n: usize, k: usize, atoms: usize, mn: usize) -> usize {
    if layout == Layout::Transposed as u32 {
        k * atoms + n
    } else {
        n * mn + k
    }
}
