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
use crate::runtime::args::KernelRef;
use crate::runtime::buffer::Buffer;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::{KernelArgs, Target};
use crate::runtime::memory::{Footprint, check_fits};
use gpu::lessons::neighbor::{CellGrid, KEEP, Kept, Layout, Rows, Rule, Sorted};

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
    /// The count pass's first [`KEEP`] neighbors of each sorted atom, for the fill.
    kept: Buffer<u32>,
    offsets: Buffer<u32>,
    indices: Option<Buffer<u32>>,
    /// `NN` and `NL` of the padded search, for the `mn` they were made for.
    padded: Option<(Buffer<u32>, Buffer<u32>, usize)>,
    fill_in_atom_order: bool,
    scan: Scan<'a>,
}

/// GPU bytes of a cell list over `n` atoms in `dims` dimensions of `T`-sized coordinates with
/// `cells` cells, besides the atoms themselves and the list it writes: five words per atom
/// (cell, rank, sorted index, count, offset), the [`KEEP`] kept neighbors, the sorted
/// coordinates, and two words per cell (count, start). `None` where it overflows.
pub fn working_bytes<T>(n: u64, dims: u64, cells: u64) -> Option<u64> {
    let per_atom = (5 + KEEP as u64) * 4 + dims * size_of::<T>() as u64;
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
            // Within the working bytes checked above.
            kept: target.zeros(n * KEEP)?,
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

    /// Launches `kernel` with `args` over one thread per atom ([`per_item`]), as every phase
    /// does.
    ///
    /// # Safety
    /// As [`Target::launch_ref`] for `args`.
    unsafe fn per_atom<A: KernelArgs>(&self, kernel: KernelRef<A>, args: A) -> Result<()> {
        let shape = per_item(self.target, self.atoms.len());
        // SAFETY: forwarded to the caller.
        unsafe { self.target.launch_ref(kernel, shape, args) }
    }

    fn kept(&self) -> Kept {
        Kept {
            slots: self.kept.ptr(),
            stride: self.n(),
        }
    }

    /// Phase 1, bin: every atom's cell and rank in it.
    ///
    /// # Errors
    /// A launch error.
    pub fn bin(&self) -> Result<()> {
        self.target.clear(&self.cell_counts)?;
        // SAFETY: `atoms` holds `n` atoms; `cell` and `rank` `n` values; `cell_counts` one per
        // cell of `grid`, zeroed above — all owned or borrowed by `self`.
        unsafe {
            self.per_atom(
                T::BIN,
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
        // SAFETY: `cell`/`rank` from `bin`, `cell_start` from `scan_cells`, so every sorted
        // position is distinct and below `n`; the sorted arrays hold `n` values (z only in 3-D).
        unsafe {
            self.per_atom(
                T::SCATTER,
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

    /// Phase 4 (CSR), count: every atom's number of neighbors (its first [`KEEP`] kept for the
    /// fill), then their scan into offsets. Queued; [`CellList::fill`] reads the total.
    ///
    /// # Errors
    /// A launch error.
    pub fn count(&self) -> Result<()> {
        // SAFETY: the sorted atoms and starts from the phases before; `counts` holds `n`,
        // `kept` `KEEP * n`, `offsets` `n + 1`.
        unsafe {
            self.per_atom(
                T::COUNT,
                (
                    self.sorted(),
                    self.n(),
                    self.cell_start.ptr().cast_const(),
                    self.grid,
                    self.rule,
                    self.counts.ptr(),
                    self.kept(),
                ),
            )?;
            self.scan.run(
                self.target,
                self.counts.ptr().cast_const(),
                self.atoms.len(),
                self.offsets.ptr(),
            )
        }
    }

    /// Phase 5 (CSR), fill: every atom's neighbors, sorted, at its offset (from
    /// [`CellList::count`]), one thread per atom in the input's order or per sorted position
    /// ([`CellList::set_fill_in_atom_order`]). Fills the indices buffer it has before the total
    /// is known (the kernel writes nothing if the total passes it), reads the total, and only
    /// where the total passed the buffer grows it and fills again — so a build the size of an
    /// earlier one waits once, at the end. Returns the total.
    ///
    /// # Errors
    /// [`Error::TooLarge`] if the total does not fit `u32` offsets or GPU memory; a launch or
    /// driver error.
    pub fn fill(&mut self) -> Result<u64> {
        let capacity = self.room();
        if capacity > 0 {
            self.launch_fill()?;
        }
        let total = self.scan.total(self.target)?;
        if total > capacity as u64 {
            self.grow_indices(total)?;
            self.launch_fill()?;
        }
        Ok(total)
    }

    /// Queues the fill kernel of the chosen order into the indices buffer it has.
    fn launch_fill(&self) -> Result<()> {
        let (indices, capacity) = self
            .indices
            .as_ref()
            .map_or((std::ptr::null_mut(), 0), |b| {
                (b.ptr(), b.len().min(u32::MAX as usize) as u32)
            });
        let rows = Rows {
            offsets: self.offsets.ptr().cast_const(),
            indices,
            kept: self.kept(),
            total: self.scan.total_ptr(),
            capacity,
        };
        let (sorted, n, start) = (self.sorted(), self.n(), self.cell_start.ptr().cast_const());
        // SAFETY: `offsets`, the scan's total and `kept` from `count`; the kernel writes nothing
        // unless the total fits `capacity`, the indices' length, and then each atom's row (the
        // exact scan, rows apart) by one thread; `cell` and `rank` from `bin`, `cell_start` from
        // `scan_cells`.
        unsafe {
            if self.fill_in_atom_order {
                self.per_atom(
                    T::FILL_ATOMS,
                    (
                        sorted,
                        n,
                        start,
                        self.grid,
                        self.rule,
                        self.cell.ptr().cast_const(),
                        self.rank.ptr().cast_const(),
                        rows,
                    ),
                )
            } else {
                self.per_atom(T::FILL, (sorted, n, start, self.grid, self.rule, rows))
            }
        }
    }

    /// Makes room for `entries` neighbor entries before the first build, so that its fill can
    /// run before the total is known (later builds reuse the last build's room): for a caller
    /// who knows about how many neighbors to expect. Too little room costs a second fill, never
    /// a wrong list.
    ///
    /// # Errors
    /// As [`CellList::fill`]'s growing of the buffer.
    pub fn reserve_entries(&mut self, entries: u64) -> Result<()> {
        if entries > self.room() as u64 {
            self.grow_indices(entries)?;
        }
        Ok(())
    }

    /// Entries the indices buffer holds (0 before the first fill).
    fn room(&self) -> usize {
        self.indices.as_ref().map_or(0, Buffer::len)
    }

    /// Replaces the indices buffer with one of `total` entries.
    fn grow_indices(&mut self, total: u64) -> Result<()> {
        check_entry_count(total)?;
        self.indices = None;
        check_fits(
            self.target,
            &format!("a neighbor list of {total} entries"),
            Footprint::per_element(total, 0, 4),
        )?;
        self.indices = Some(self.target.zeros(total as usize)?);
        Ok(())
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
    /// the entries. Waits for the total after the fill ([`CellList::fill`]).
    ///
    /// # Errors
    /// As the phases.
    pub fn launch_csr(&mut self) -> Result<u64> {
        self.bin()?;
        self.scan_cells()?;
        self.scatter()?;
        self.count()?;
        self.fill()
    }

    /// Whether [`CellList::fill`] writes the lists one thread per atom in the input's order
    /// (`cell_fill_atoms_*`, the default: 20 % faster on graphene, `docs/perf-notes.md`) rather
    /// than per sorted position (`cell_fill_*`).
    pub fn set_fill_in_atom_order(&mut self, yes: bool) {
        self.fill_in_atom_order = yes;
    }

    /// The CSR list of the last [`CellList::fill`], which returned `total` (waits for it).
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
        // SAFETY: sizes checked above; the sorted atoms and starts from the phases before.
        unsafe {
            self.per_atom(
                T::PADDED,
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
