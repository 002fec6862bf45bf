//! How large a neighbor list may grow, and the checks that refuse one too large before it
//! is built — or, for a crowd of atoms, before it is even counted.

use super::{Coords, Cutoff, Real};
use crate::runtime::error::{Error, Result};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// The most entries a list may have: its offsets are `u32`.
pub const MAX_ENTRIES: u64 = u32::MAX as u64;

/// Refuses a list of more than [`MAX_ENTRIES`] entries before it is built.
///
/// # Errors
/// [`Error::TooLarge`] naming the count and the limit.
pub fn check_entry_count(entries: u64) -> Result<()> {
    Error::check_index_limit(entries, MAX_ENTRIES, "entries", || {
        "the neighbor list".into()
    })
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
pub(super) fn refuse_crowds<T: Real>(k: u64, diag_sq: f64, cut: &Cutoff<T>) -> Result<()> {
    match crowd_entries(k, diag_sq, cut) {
        e if e > MAX_ENTRIES => Err(too_many(e)),
        _ => Ok(()),
    }
}

/// Checks a counted list of `total` entries over `atoms` atoms: at most [`MAX_ENTRIES`], and
/// room in host memory for `copies` lists of that size (an algorithm may build one in a
/// working order, then copy it).
///
/// # Errors
/// [`Error::TooLarge`] naming the count past [`MAX_ENTRIES`], or when the host lacks the
/// memory.
pub fn check_entries(atoms: usize, total: u64, copies: u64) -> Result<()> {
    check_entry_count(total)?;
    let bytes = (total + atoms as u64 + 1).saturating_mul(4 * copies);
    crate::runtime::memory::check_host(
        &format!("a neighbor list of {atoms} atoms and {total} entries"),
        bytes,
    )
}

/// The error for a list found, while counting, to pass [`MAX_ENTRIES`]: `at_least` entries,
/// a lower bound where the count stopped early.
pub(crate) fn too_many(at_least: u64) -> Error {
    Error::TooLarge {
        option: format!(
            "the neighbor list (at least {at_least} entries: lower the cutoff or spread the atoms)"
        ),
        needed: at_least,
        room: crate::runtime::error::Room::Indices("entries"),
        available: MAX_ENTRIES,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::neighbor::reference::half_pairs;

    fn coords<'a, T>(x: &'a [T], y: &'a [T]) -> Coords<'a, T> {
        Coords { x, y, z: None }
    }

    #[test]
    fn a_crowd_on_one_spot_is_refused_at_once() {
        let cut = Cutoff::<f32>::new(1.9, None).unwrap();
        let spot = vec![3.0f32; 100_000];
        let e = half_pairs(&coords(&spot, &spot), &cut)
            .unwrap_err()
            .to_string();
        // The exact k·(k−1) shows the crowd was refused before any pair was counted.
        assert!(e.contains("at least 9999900000 entries"), "{e}");
        let budget = EntryBudget::default();
        assert!(budget.add(MAX_ENTRIES) && !budget.add(1));
        assert!(check_entries(10, MAX_ENTRIES + 1, 1).is_err());
    }
}
