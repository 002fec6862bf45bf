//! The book's padded tables (`NN` counts, `NL` slots with room for `MN` per atom) read into
//! a [`NeighborList`].

use super::NeighborList;
use crate::runtime::error::{Error, Result};

/// How a padded table stores neighbor `k` of atom `n` among `N` atoms with room for `MN` each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaddedLayout {
    /// `NL[n*MN + k]`: the book's CPU version and its `atomicAdd` kernel.
    PerAtom,
    /// `NL[k*N + n]`: the book's kernel without atomics, whose neighboring threads write
    /// neighboring addresses (coalesced).
    Transposed,
}

impl NeighborList {
    /// Reads the book's padded table: `nn[n]` neighbors of atom `n`, stored in `nl` with room
    /// for `max_neighbors` per atom as `layout` says. Rows keep the table's order (a kernel with
    /// atomics fills them in no fixed order): call [`NeighborList::sort_each`] to compare orders.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the first atom whose count exceeds `max_neighbors` (its
    /// slots overflowed) and the `--max-neighbors` that would hold every atom; if `nl` holds
    /// fewer than `nn.len() * max_neighbors` entries; or if an index is out of range or an
    /// atom's own.
    pub fn from_padded(
        nn: &[u32],
        nl: &[u32],
        max_neighbors: usize,
        layout: PaddedLayout,
    ) -> Result<Self> {
        let atoms = nn.len();
        if let Some(n) = nn.iter().position(|&c| c as usize > max_neighbors) {
            let most = nn.iter().max().copied().unwrap_or(0);
            return Err(Error::InvalidInput(format!(
                "atom {n} has {} neighbors, more than the {max_neighbors} slots per atom \
                 (--max-neighbors {most} would hold every atom)",
                nn[n]
            )));
        }
        if atoms
            .checked_mul(max_neighbors)
            .is_none_or(|need| nl.len() < need)
        {
            return Err(Error::InvalidInput(format!(
                "padded neighbor table of {} entries is smaller than {atoms} atoms × {max_neighbors}",
                nl.len()
            )));
        }
        let mut offsets = Vec::with_capacity(atoms + 1);
        offsets.push(0u32);
        let mut total = 0u64;
        for &c in nn {
            total += u64::from(c);
            let end = u32::try_from(total).map_err(|_| {
                Error::InvalidInput(format!("{total} neighbor entries overflow a u32 offset"))
            })?;
            offsets.push(end);
        }
        let mut indices = Vec::with_capacity(total as usize);
        for (n, &c) in nn.iter().enumerate() {
            indices.extend((0..c as usize).map(|k| match layout {
                PaddedLayout::PerAtom => nl[n * max_neighbors + k],
                PaddedLayout::Transposed => nl[k * atoms + n],
            }));
        }
        NeighborList::from_parts(offsets, indices)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn square() -> NeighborList {
        // 0-1, 0-2, 1-3, 2-3: a square's edges.
        NeighborList::from_parts(vec![0, 2, 4, 6, 8], vec![2, 1, 0, 3, 0, 3, 2, 1]).unwrap()
    }

    #[test]
    fn padded_layouts_read_back_and_overflow_is_an_error() {
        let nn = [2, 2, 2, 2];
        let per_atom = [2, 1, 9, 0, 3, 9, 0, 3, 9, 2, 1, 9];
        let list = NeighborList::from_padded(&nn, &per_atom, 3, PaddedLayout::PerAtom).unwrap();
        assert_eq!(list, square());
        let transposed = [2, 0, 0, 2, 1, 3, 3, 1, 9, 9, 9, 9];
        let t = NeighborList::from_padded(&nn, &transposed, 3, PaddedLayout::Transposed).unwrap();
        assert_eq!(t, square());
        let e = NeighborList::from_padded(&[1, 4, 0, 0], &per_atom, 3, PaddedLayout::PerAtom)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("atom 1 has 4 neighbors") && e.contains("--max-neighbors 4"),
            "{e}"
        );
        assert!(NeighborList::from_padded(&nn, &per_atom[..8], 3, PaddedLayout::PerAtom).is_err());
    }
}
