//! The O(N) cell list on a target: bin, scan, scatter, then search into CSR (count, scan,
//! fill) or into padded lists (one pass). Each phase is a method, so that the benchmark can
//! time them one by one; [`CellList::build_csr`] and [`CellList::build_padded`] run them all.

use super::atoms::{DeviceAtoms, per_item};
use super::book::Padded;
use super::precision::Precision;
use super::scan::Scan;
use crate::neighbor::cells::CellPlan;
use crate::neighbor::list::NeighborList;
use crate::neighbor::reference::check_entry_count;
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::memory::{Footprint, check_fits};
use gpu::lessons::neighbor::{CellGrid, Layout, Rule, Sorted};

/// A cell list over the atoms on a target, its buffers allocated once.
pub struct CellList<'a, T: Precision> {
    target: &'a Target,
    atoms: &'a DeviceAtoms<T>,
    grid: CellGrid<T>,
    rule: Rule<T>,
    cells: usize,
    cell: Buffer<u32>,
    rank: Buffer<u32>,
    cell_counts: Buffer<u32>,
    cell_start: Buffer<u32>,
    index: Buffer<u32>,
    sorted: [Buffer<T>; 3],
    counts: Buffer<u32>,
    offsets: Buffer<u32>,
    indices: Option<Buffer<u32>>,
    /// `NN` and `NL` of the padded search, for the `mn` they were made for.
    padded: Option<(Buffer<u32>, Buffer<u32>, usize)>,
    fill_in_atom_order: bool,
    scan: Scan,
}

/// GPU bytes of a cell list over `n` atoms in `dims` dimensions of `T`-sized coordinates with
/// `cells` cells, besides the atoms themselves and the list it writes: five words per atom
/// (cell, rank, sorted index, count, offset), the sorted coordinates, and two words per cell
/// (count, start). `None` where it overflows.
pub fn working_bytes<T>(n: u64, dims: u64, cells: u64) -> Option<u64> {
    let per_atom = 5 * 4 + dims * size_of::<T>() as u64;
    n.checked_mul(per_atom)?.checked_add(cells.checked_mul(8)?)
}

impl<'a, T: Precision> CellList<'a, T> {
    /// Allocates the buffers for `plan`'s cells over `atoms`.
    ///
    /// # Errors
    /// [`Error::TooLarge`] if they do not fit in the target's free memory (checked before
    /// anything is allocated); an allocation error.
    pub fn new(
        target: &'a Target,
        atoms: &'a DeviceAtoms<T>,
        plan: &CellPlan,
        rule: Rule<T>,
    ) -> Result<CellList<'a, T>> {
        let n = atoms.len();
        let bytes = working_bytes::<T>(n as u64, atoms.dims() as u64, plan.cells as u64);
        check_fits(
            target,
            &format!("a cell list of {n} atoms"),
            bytes.map(|device| Footprint { host: 0, device }),
        )?;
        let z = if atoms.dims() == 3 { n } else { 0 };
        Ok(CellList {
            target,
            atoms,
            grid: plan.grid::<T>(),
            rule,
            cells: plan.cells,
            cell: target.zeros(n)?,
            rank: target.zeros(n)?,
            cell_counts: target.zeros(plan.cells)?,
            cell_start: target.zeros(plan.cells + 1)?,
            index: target.zeros(n)?,
            sorted: [target.zeros(n)?, target.zeros(n)?, target.zeros(z)?],
            counts: target.zeros(n)?,
            offsets: target.zeros(n + 1)?,
            indices: None,
            padded: None,
            fill_in_atom_order: true,
            scan: Scan::new(target, plan.cells.max(n))?,
        })
    }

    fn n(&self) -> u32 {
        self.atoms.len() as u32
    }

    fn sorted(&self) -> Sorted<T> {
        Sorted {
            index: self.index.ptr(),
            x: self.sorted[0].ptr(),
            y: self.sorted[1].ptr(),
            z: if self.atoms.dims() == 3 {
                self.sorted[2].ptr()
            } else {
                std::ptr::null_mut()
            },
        }
    }

    /// Phase 1, bin: every atom's cell and rank in it.
    ///
    /// # Errors
    /// A launch error.
    pub fn bin(&self) -> Result<()> {
        let t = self.target;
        t.clear(&self.cell_counts)?;
        // SAFETY: `atoms` holds `n` atoms; `cell` and `rank` `n` values; `cell_counts` one per
        // cell of `grid`, zeroed above — all owned or borrowed by `self`.
        unsafe {
            t.launch_ref(
                T::BIN,
                per_item(t, self.atoms.len()),
                (
                    self.atoms.view(),
                    self.n(),
                    self.grid,
                    self.cell.ptr(),
                    self.rank.ptr(),
                    self.cell_counts.ptr(),
                ),
            )
        }
    }

    /// Phase 2, scan: where each cell's atoms start.
    ///
    /// # Errors
    /// A launch error.
    pub fn scan_cells(&self) -> Result<()> {
        // SAFETY: `cell_counts` holds `cells` values, `cell_start` one more.
        unsafe {
            self.scan.run(
                self.target,
                self.cell_counts.ptr().cast_const(),
                self.cells,
                self.cell_start.ptr(),
            )
        }
    }

    /// Phase 3, scatter: the atoms sorted by cell, with their coordinates.
    ///
    /// # Errors
    /// A launch error.
    pub fn scatter(&self) -> Result<()> {
        let t = self.target;
        // SAFETY: `cell`/`rank` from `bin`, `cell_start` from `scan_cells`, so every sorted
        // position is distinct and below `n`; the sorted arrays hold `n` values (z only in 3-D).
        unsafe {
            t.launch_ref(
                T::SCATTER,
                per_item(t, self.atoms.len()),
                (
                    self.atoms.view(),
                    self.n(),
                    self.cell.ptr().cast_const(),
                    self.rank.ptr().cast_const(),
                    self.cell_start.ptr().cast_const(),
                    self.sorted(),
                ),
            )
        }
    }

    /// Phase 4 (CSR), count: every atom's number of neighbors, then their scan into offsets.
    /// Returns the total (waits for it).
    ///
    /// # Errors
    /// A launch error.
    pub fn count(&self) -> Result<u64> {
        let t = self.target;
        // SAFETY: the sorted atoms and starts from the phases before; `counts` holds `n`,
        // `offsets` `n + 1`.
        unsafe {
            t.launch_ref(
                T::COUNT,
                per_item(t, self.atoms.len()),
                (
                    self.sorted(),
                    self.n(),
                    self.cell_start.ptr().cast_const(),
                    self.grid,
                    self.rule,
                    self.counts.ptr(),
                ),
            )?;
            self.scan.run(
                t,
                self.counts.ptr().cast_const(),
                self.atoms.len(),
                self.offsets.ptr(),
            )?;
        }
        self.scan.total(t)
    }

    /// Phase 5 (CSR), fill: every atom's neighbors, sorted, at its offset. `total` is what
    /// [`CellList::count`] returned.
    ///
    /// # Errors
    /// [`Error::TooLarge`] if `total` does not fit `u32` offsets or GPU memory; a launch error.
    pub fn fill(&mut self, total: u64) -> Result<()> {
        let indices = self.indices_for(total)?;
        let t = self.target;
        // SAFETY: `offsets` from `count`, whose last entry is `total` ≤ the indices' length;
        // each atom's range is written by one thread and stays inside it.
        unsafe {
            t.launch_ref(
                T::FILL,
                per_item(t, self.atoms.len()),
                (
                    self.sorted(),
                    self.n(),
                    self.cell_start.ptr().cast_const(),
                    self.grid,
                    self.rule,
                    self.offsets.ptr().cast_const(),
                    indices,
                ),
            )
        }
    }

    /// The indices buffer, grown to hold `total` entries.
    fn indices_for(&mut self, total: u64) -> Result<*mut u32> {
        check_entry_count(total)?;
        let total = total as usize;
        if self.indices.as_ref().is_none_or(|b| b.len() < total) {
            self.indices = None;
            check_fits(
                self.target,
                &format!("a neighbor list of {total} entries"),
                Footprint::per_element(total as u64, 0, 4),
            )?;
            self.indices = Some(self.target.zeros(total)?);
        }
        Ok(self
            .indices
            .as_ref()
            .map_or(std::ptr::null_mut(), |b| b.ptr()))
    }

    /// [`CellList::fill`] with one thread per atom in the input's order instead of per sorted
    /// position: consecutive threads write consecutive lists, each searching from its atom's
    /// sorted position (from `cell` and `rank`). What the benchmark weighs against `fill`.
    ///
    /// # Errors
    /// As [`CellList::fill`].
    pub fn fill_atoms(&mut self, total: u64) -> Result<()> {
        let indices = self.indices_for(total)?;
        let t = self.target;
        // SAFETY: as `fill`; `cell` and `rank` from `bin`, `cell_start` from `scan_cells`.
        unsafe {
            t.launch_ref(
                T::FILL_ATOMS,
                per_item(t, self.atoms.len()),
                (
                    self.sorted(),
                    self.n(),
                    self.cell_start.ptr().cast_const(),
                    self.grid,
                    self.rule,
                    self.cell.ptr().cast_const(),
                    self.rank.ptr().cast_const(),
                    self.offsets.ptr().cast_const(),
                    indices,
                ),
            )
        }
    }

    /// Every phase into CSR, then the list.
    ///
    /// # Errors
    /// As the phases; a driver error.
    pub fn build_csr(&mut self) -> Result<NeighborList> {
        let total = self.launch_csr()?;
        self.csr(total as usize)
    }

    /// Every phase into CSR, without reading the list back (what the benchmark times); returns
    /// the entries. Waits once, for the total, before the fill.
    ///
    /// # Errors
    /// As the phases.
    pub fn launch_csr(&mut self) -> Result<u64> {
        self.bin()?;
        self.scan_cells()?;
        self.scatter()?;
        let total = self.count()?;
        if self.fill_in_atom_order {
            self.fill_atoms(total)?;
        } else {
            self.fill(total)?;
        }
        Ok(total)
    }

    /// Whether the CSR builds fill the lists one thread per atom in the input's order
    /// ([`CellList::fill_atoms`], the default: 20 % faster on graphene, `docs/perf-notes.md`)
    /// rather than per sorted position ([`CellList::fill`]).
    pub fn set_fill_in_atom_order(&mut self, yes: bool) {
        self.fill_in_atom_order = yes;
    }

    /// The CSR list of the last [`CellList::fill`] of `total` entries (waits for it).
    ///
    /// # Errors
    /// A driver error; [`Error::Mismatch`] if the arrays are not a valid list.
    pub fn csr(&self, total: usize) -> Result<NeighborList> {
        let t = self.target;
        t.synchronize()?;
        let offsets = t.download(&self.offsets)?;
        let mut indices = match &self.indices {
            Some(b) => t.download(b)?,
            None => Vec::new(),
        };
        indices.truncate(total);
        NeighborList::from_parts(offsets, indices)
            .map_err(|e| Error::Mismatch(format!("the cell list's CSR: {e}")))
    }

    /// Phase 4 (padded), one pass: true counts into `nn`, the first `mn` neighbors of each atom,
    /// sorted, into `nl` (`n * mn` slots) in `layout`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the buffers are too small; a launch error.
    pub fn padded(
        &self,
        nn: &Buffer<u32>,
        nl: &Buffer<u32>,
        mn: usize,
        layout: Layout,
    ) -> Result<()> {
        let n = self.atoms.len();
        if nn.len() < n || n.checked_mul(mn).is_none_or(|s| nl.len() < s) || mn > u32::MAX as usize
        {
            return Err(Error::InvalidInput(format!(
                "padded lists for {n} atoms × {mn} slots: buffers too small"
            )));
        }
        let t = self.target;
        // SAFETY: sizes checked above; the sorted atoms and starts from the phases before.
        unsafe {
            t.launch_ref(
                T::PADDED,
                per_item(t, n),
                (
                    self.sorted(),
                    self.n(),
                    self.cell_start.ptr().cast_const(),
                    self.grid,
                    self.rule,
                    nn.ptr(),
                    nl.ptr(),
                    mn as u32,
                    layout as u32,
                ),
            )
        }
    }

    /// Every phase into padded lists of `mn` slots per atom (allocated on the first call for
    /// this `mn`, every slot [`UNWRITTEN`](super::UNWRITTEN)), then what they hold.
    ///
    /// # Errors
    /// As the phases; a driver error.
    pub fn build_padded(&mut self, mn: usize, layout: Layout) -> Result<Padded> {
        let t = self.target;
        let n = self.atoms.len();
        if self.padded.as_ref().is_none_or(|p| p.2 != mn) {
            let slots = n
                .checked_mul(mn)
                .ok_or_else(|| Error::InvalidInput(format!("{n} atoms × {mn} slots overflows")))?;
            self.padded = None;
            check_fits(
                t,
                &format!("padded lists of {n} atoms × {mn} slots"),
                Footprint::per_element(slots as u64 + n as u64, 0, 4),
            )?;
            self.padded = Some((t.zeros(n)?, t.zeros(slots)?, mn));
        }
        let Some((nn, nl, _)) = &self.padded else {
            return Err(Error::InvalidInput("the padded lists are missing".into()));
        };
        t.fill_bytes(nl, 0xFF)?;
        self.bin()?;
        self.scan_cells()?;
        self.scatter()?;
        self.padded(nn, nl, mn, layout)?;
        t.synchronize()?;
        Ok(Padded {
            nn: t.download(nn)?,
            nl: t.download(nl)?,
            mn,
            layout,
        })
    }

    /// [`CellList::build_padded`] without reading the lists back: what the benchmark times.
    ///
    /// # Errors
    /// As the phases.
    pub fn launch_padded(&mut self, mn: usize, layout: Layout) -> Result<()> {
        if self.padded.as_ref().is_none_or(|p| p.2 != mn) {
            self.build_padded(mn, layout)?;
        }
        let Some((nn, nl, _)) = &self.padded else {
            return Err(Error::InvalidInput("the padded lists are missing".into()));
        };
        self.bin()?;
        self.scan_cells()?;
        self.scatter()?;
        self.padded(nn, nl, mn, layout)
    }
}
