//! [`NeighborList`]: the neighbors of every atom in compressed sparse rows (CSR).
//!
//! The book stores neighbors padded: `NN[n]` counts and `NL[n*MN + k]` indices with room for
//! `MN` per atom (or `NL[k*N + n]` in its coalesced kernel), and an atom with more than `MN`
//! neighbors writes past its row. CSR has no `MN`: row `n` is `indices[offsets[n]..offsets[n+1]]`,
//! sized after counting, so it cannot overflow. [`NeighborList::from_padded`] reads the padded
//! layouts; the book's `neighbor.txt` is in [`super::book`].

mod padded;

pub use padded::PaddedLayout;

use crate::runtime::error::{Error, Result};
use std::fmt::Write as _;
use std::ops::Range;

/// Neighbors of every atom in compressed sparse rows: the neighbors of atom `n` are
/// `indices[offsets[n]..offsets[n + 1]]`.
///
/// Invariants (checked by [`NeighborList::from_parts`]): `offsets` starts at 0, never
/// decreases and ends at `indices.len()`; every index is below the atom count and differs from
/// its row's atom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NeighborList {
    offsets: Vec<u32>,
    indices: Vec<u32>,
}

impl Default for NeighborList {
    /// No atoms.
    fn default() -> Self {
        NeighborList {
            offsets: vec![0],
            indices: Vec::new(),
        }
    }
}

impl NeighborList {
    /// A list from its CSR arrays: `offsets` (one per atom, plus one) and `indices`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `offsets` is empty, does not start at 0, decreases, or does
    /// not end at `indices.len()`, or if an index is out of range or names its own atom.
    pub fn from_parts(offsets: Vec<u32>, indices: Vec<u32>) -> Result<Self> {
        let bad = |why: String| Err(Error::InvalidInput(format!("neighbor list: {why}")));
        match (offsets.first(), offsets.last()) {
            (Some(0), Some(&last)) if last as usize == indices.len() => {}
            _ => {
                return bad(format!(
                    "offsets must start at 0 and end at the {} indices",
                    indices.len()
                ));
            }
        }
        let atoms = offsets.len() - 1;
        for (n, w) in offsets.windows(2).enumerate() {
            if w[1] < w[0] || w[1] as usize > indices.len() {
                return bad(format!("offsets decrease or pass the end at atom {n}"));
            }
            for &j in &indices[w[0] as usize..w[1] as usize] {
                if j as usize >= atoms || j as usize == n {
                    return bad(format!("atom {n} lists neighbor {j} (of {atoms} atoms)"));
                }
            }
        }
        Ok(NeighborList { offsets, indices })
    }

    /// A list built by this module's algorithms, correct by construction (checked in tests).
    pub(crate) fn from_parts_unchecked(offsets: Vec<u32>, indices: Vec<u32>) -> Self {
        debug_assert_eq!(offsets.last().map(|&l| l as usize), Some(indices.len()));
        NeighborList { offsets, indices }
    }

    /// The CSR arrays `(offsets, indices)`.
    pub fn into_parts(self) -> (Vec<u32>, Vec<u32>) {
        (self.offsets, self.indices)
    }

    /// The row starts: `atoms() + 1` values, the last equal to [`NeighborList::pairs`].
    pub fn offsets(&self) -> &[u32] {
        &self.offsets
    }

    /// All rows' neighbor indices, row after row.
    pub fn indices(&self) -> &[u32] {
        &self.indices
    }

    /// How many atoms (rows).
    pub fn atoms(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Entries in all rows: each neighboring pair counts twice, once per atom.
    pub fn pairs(&self) -> usize {
        self.indices.len()
    }

    /// The neighbors of `atom`.
    ///
    /// # Panics
    /// If `atom >= self.atoms()`, as slice indexing does.
    pub fn neighbors(&self, atom: usize) -> &[u32] {
        &self.indices[self.offsets[atom] as usize..self.offsets[atom + 1] as usize]
    }

    /// How many neighbors `atom` has.
    ///
    /// # Panics
    /// If `atom >= self.atoms()`.
    pub fn count(&self, atom: usize) -> usize {
        (self.offsets[atom + 1] - self.offsets[atom]) as usize
    }

    /// Every atom's neighbor count, in atom order (the book's `NN`).
    pub fn counts(&self) -> impl ExactSizeIterator<Item = usize> + '_ {
        self.offsets.windows(2).map(|w| (w[1] - w[0]) as usize)
    }

    /// The largest neighbor count (0 without atoms): the smallest `MN` that holds the list.
    pub fn max_count(&self) -> usize {
        self.counts().max().unwrap_or(0)
    }

    /// `histogram[c]` = how many atoms have `c` neighbors; empty without atoms.
    pub fn count_histogram(&self) -> Vec<u64> {
        let mut histogram = vec![
            0u64;
            if self.atoms() == 0 {
                0
            } else {
                self.max_count() + 1
            }
        ];
        for c in self.counts() {
            histogram[c] += 1;
        }
        histogram
    }

    /// Sorts every row's indices ascending, rows spread over the host's cores.
    pub fn sort_each(&mut self) {
        par_rows_mut(&self.offsets, &mut self.indices, |rows, entries| {
            let base = self.offsets[rows.start];
            for n in rows {
                let (a, b) = (self.offsets[n] - base, self.offsets[n + 1] - base);
                entries[a as usize..b as usize].sort_unstable();
            }
        });
    }

    /// The first atom whose neighbor set in `other` differs from this one's (this one is the
    /// expected list), compared as sets (order-insensitive), e.g.
    /// `"atom 17: expected [1, 2, 3], got [1, 2] (missing 3)"`; `None` where they agree.
    pub fn first_difference(&self, other: &Self) -> Option<String> {
        if self.atoms() != other.atoms() {
            return Some(format!(
                "expected {} atoms, got {}",
                self.atoms(),
                other.atoms()
            ));
        }
        // Each range reports its first difference; the first range's that has one wins.
        crate::inputs::par_map_ranges(self.atoms(), |range| {
            range.into_iter().find_map(|n| {
                row_difference(n, self.neighbors(n).to_vec(), other.neighbors(n).to_vec())
            })
        })
        .into_iter()
        .flatten()
        .next()
    }
}

/// The message for atom `n` if its sorted rows differ, naming what is missing and extra.
fn row_difference(n: usize, mut want: Vec<u32>, mut got: Vec<u32>) -> Option<String> {
    want.sort_unstable();
    got.sort_unstable();
    if want == got {
        return None;
    }
    let missing: Vec<u32> = want.iter().filter(|j| !got.contains(j)).copied().collect();
    let extra: Vec<u32> = got.iter().filter(|j| !want.contains(j)).copied().collect();
    let mut notes = Vec::new();
    if !missing.is_empty() {
        notes.push(format!("missing {}", join(&missing)));
    }
    if !extra.is_empty() {
        notes.push(format!("extra {}", join(&extra)));
    }
    if notes.is_empty() {
        notes.push("repeated entries".to_string());
    }
    Some(format!(
        "atom {n}: expected [{}], got [{}] ({})",
        join(&want),
        join(&got),
        notes.join("; ")
    ))
}

/// `"1, 2, 3"`, cut after a screenful (an atom on a crowded spot can have millions).
fn join(v: &[u32]) -> String {
    const SHOWN: usize = 24;
    let mut s = String::new();
    for (k, j) in v.iter().take(SHOWN).enumerate() {
        let _ = write!(s, "{}{j}", if k == 0 { "" } else { ", " });
    }
    if v.len() > SHOWN {
        let _ = write!(s, ", … ({} in all)", v.len());
    }
    s
}

/// Runs `f(rows, entries)` on the rows of a CSR split into about four chunks per core, where
/// `entries` is the part of `indices` holding exactly those rows.
pub(crate) fn par_rows_mut(
    offsets: &[u32],
    indices: &mut [u32],
    f: impl Fn(Range<usize>, &mut [u32]) + Sync,
) {
    // Small lists are not worth a thread; big ones get a few chunks per core for balance.
    const MIN_ROWS: usize = 1 << 14;
    let rows = offsets.len().saturating_sub(1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per_chunk = rows.div_ceil(cores * 4).max(MIN_ROWS);
    std::thread::scope(|s| {
        let mut rest = indices;
        let mut start = 0;
        while start < rows {
            let end = (start + per_chunk).min(rows);
            let len = (offsets[end] - offsets[start]) as usize;
            let (chunk, tail) = std::mem::take(&mut rest).split_at_mut(len);
            rest = tail;
            let f = &f;
            s.spawn(move || f(start..end, chunk));
            start = end;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square() -> NeighborList {
        // 0-1, 0-2, 1-3, 2-3: a square's edges.
        NeighborList::from_parts(vec![0, 2, 4, 6, 8], vec![2, 1, 0, 3, 0, 3, 2, 1]).unwrap()
    }

    #[test]
    fn parts_are_validated() {
        assert!(NeighborList::from_parts(vec![], vec![]).is_err());
        assert!(NeighborList::from_parts(vec![1], vec![]).is_err());
        assert!(NeighborList::from_parts(vec![0, 2, 1], vec![1]).is_err());
        assert!(
            NeighborList::from_parts(vec![0, 1], vec![0]).is_err(),
            "self"
        );
        assert!(
            NeighborList::from_parts(vec![0, 1, 1], vec![2]).is_err(),
            "range"
        );
        let empty = NeighborList::from_parts(vec![0], vec![]).unwrap();
        assert_eq!((empty.atoms(), empty.pairs(), empty.max_count()), (0, 0, 0));
        assert_eq!(empty, NeighborList::default());
        assert!(empty.count_histogram().is_empty());
    }

    #[test]
    fn rows_counts_and_histogram() {
        let mut list = square();
        assert_eq!((list.atoms(), list.pairs(), list.max_count()), (4, 8, 2));
        assert_eq!(list.neighbors(0), &[2, 1]);
        list.sort_each();
        assert_eq!(list.neighbors(0), &[1, 2]);
        assert_eq!(list.counts().collect::<Vec<_>>(), vec![2; 4]);
        assert_eq!(list.count_histogram(), vec![0, 0, 4]);
    }

    #[test]
    fn differences_are_sets_and_named() {
        let a = square();
        let mut b = a.clone();
        b.sort_each();
        assert_eq!(a.first_difference(&b), None, "order does not matter");
        let c = NeighborList::from_parts(vec![0, 2, 3, 5, 7], vec![1, 2, 0, 0, 3, 2, 1]).unwrap();
        let msg = a.first_difference(&c).unwrap();
        assert_eq!(msg, "atom 1: expected [0, 3], got [0] (missing 3)");
        let d = NeighborList::from_parts(vec![0, 2, 5, 7, 9], vec![1, 2, 0, 3, 3, 0, 3, 2, 1]);
        let msg = a.first_difference(&d.unwrap()).unwrap();
        assert!(msg.contains("atom 1") && msg.contains("repeated"), "{msg}");
        assert!(a.first_difference(&NeighborList::default()).is_some());
    }
}
