//! The `neighbor` demo: every kernel once over one set of atoms, each checked against the CPU
//! reference and (on a GPU) timed; the book's mistake shown for what it corrupts.

use super::launch::{
    BookKernel, BookRun, CellList, CellPlan, DeviceAtoms, Padded, Precision, UNWRITTEN, rule,
};
use super::list::NeighborList;
use super::points::Atoms;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::Target;
use crate::runtime::timer::Timer;
use gpu::lessons::neighbor::{Layout, Rule};
use serde::Serialize;
use std::time::Instant;

/// What [`run`] does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NeighborOptions {
    /// Neighbors are closer than this (Å in the book).
    pub cutoff: f64,
    /// Slots per atom of the padded lists (the book's `MN`).
    pub max_neighbors: usize,
    /// `f64` kernels instead of `f32` (the book's `USE_DP`).
    pub double: bool,
    /// A periodic box's sides (minimum image), or open space.
    pub periodic: Option<[f64; 3]>,
    /// The O(N²) kernels run only up to this many atoms (they take N² steps).
    pub all_pairs_max_atoms: usize,
}

/// Atoms above which the demo skips the O(N²) kernels unless asked: 2·10⁵ atoms are about
/// 4·10¹⁰ pair checks, a few hundred ms on a GPU.
pub const ALL_PAIRS_MAX_ATOMS: usize = 200_000;

/// The simulator's limit for the O(N²) kernels: 2000 atoms are 4·10⁶ checks.
pub const SIM_ALL_PAIRS_MAX_ATOMS: usize = 2_000;

impl Default for NeighborOptions {
    fn default() -> NeighborOptions {
        NeighborOptions {
            cutoff: super::generate::DEFAULT_CUTOFF,
            max_neighbors: DEFAULT_MAX_NEIGHBORS,
            double: false,
            periodic: None,
            all_pairs_max_atoms: ALL_PAIRS_MAX_ATOMS,
        }
    }
}

/// The book's `MN`: "we set it to 10: we think no atom can have more than ten neighbors".
pub const DEFAULT_MAX_NEIGHBORS: usize = 10;

/// One kernel's run.
#[derive(Clone, Debug, Serialize)]
pub struct KernelRun {
    /// The kernel (or pipeline) in the device crate, with its precision.
    pub name: String,
    /// `"O(N²)"` or `"cells"`.
    pub method: &'static str,
    /// How the lists are stored: `"per atom"`, `"transposed"` or `"CSR"`.
    pub layout: &'static str,
    /// Equal to the CPU reference (the mistake: whether its lists happened to come out right).
    pub equal: bool,
    /// Event-timed milliseconds of one run after a warm-up (GPU only): the kernel, or the cell
    /// list's whole build from binning to the last neighbor written.
    pub ms: Option<f64>,
    /// Atoms per second at that time.
    pub atoms_per_s: Option<f64>,
}

/// What the book's mistake wrote.
#[derive(Clone, Debug, Serialize)]
pub struct Corruption {
    /// Atoms whose list differs from the reference.
    pub atoms: usize,
    /// Neighbors missing from their lists (overwritten by another thread's write).
    pub lost: usize,
    /// Counted slots never written.
    pub unwritten: usize,
    /// The first corrupted atom, as text.
    pub example: Option<String>,
}

/// What [`run`] found.
#[derive(Clone, Debug, Serialize)]
pub struct NeighborReport {
    /// Where it ran.
    pub target: String,
    /// Where the atoms came from.
    pub input: String,
    /// How many atoms.
    pub atoms: usize,
    /// 2 or 3.
    pub dims: usize,
    /// The cutoff.
    pub cutoff: f64,
    /// `"f32"` or `"f64"`.
    pub precision: &'static str,
    /// Neighbor entries (each pair counted from both sides).
    pub entries: usize,
    /// `histogram[k]`: atoms with `k` neighbors.
    pub histogram: Vec<u64>,
    /// The CPU reference used: `"all pairs"` or `"cells"`.
    pub reference: &'static str,
    /// Its wall time on the host, in ms.
    pub reference_ms: f64,
    /// Each kernel, in the progression's order.
    pub runs: Vec<KernelRun>,
    /// What the book's mistake corrupted this time (`None` when it did not run).
    pub mistake: Option<Corruption>,
    /// Kernels not run, and why.
    pub skipped: Vec<String>,
}

/// Runs every kernel over `atoms` on `target` in the precision `opts` asks for, checks each
/// against the CPU reference, and times each on a GPU. Returns the report and the reference
/// list. `progress` is called with (steps done, steps).
///
/// # Errors
/// [`Error::InvalidInput`] for a bad cutoff, box or coordinate; [`Error::TooManyNeighbors`] if
/// an atom has more neighbors than `max_neighbors` (the padded lists hold that many; nothing is
/// written past them); [`Error::Mismatch`] if a correct kernel's lists differ from the CPU's; a
/// driver error.
pub fn run(
    target: &Target,
    atoms: &Atoms,
    input: &str,
    opts: &NeighborOptions,
    progress: &mut dyn FnMut(u32, u32),
) -> Result<(NeighborReport, NeighborList)> {
    if opts.double {
        run_in::<f64>(target, atoms, input, opts, progress)
    } else {
        run_in::<f32>(target, atoms, input, opts, progress)
    }
}

/// One of the book's O(N²) kernels in `f32` over `atoms` (at most
/// [`REFERENCE_ALL_PAIRS_MAX`](super::REFERENCE_ALL_PAIRS_MAX)), checked against the CPU's
/// all-pairs reference: whether its lists are the reference's. For the mistake
/// ([`BookKernel::Wrong`]) a difference is its bug showing, not an error: it returns whether its
/// lists happened to come out right.
///
/// # Errors
/// As [`run`]; [`Error::Mismatch`] if a correct kernel's lists differ from the reference.
pub fn run_book_kernel(
    target: &Target,
    atoms: &Atoms,
    opts: &NeighborOptions,
    kernel: BookKernel,
) -> Result<bool> {
    let checked = super::api::Checked::<f32>::new(target, atoms, opts.cutoff, opts.periodic)?;
    let (cut, coords) = (&checked.cut, checked.coords());
    let expected = super::reference::half_pairs(&coords, cut)?;
    let device = DeviceAtoms::<f32>::upload(target, atoms)?;
    let rule = rule(cut, atoms.dims());
    let padded = BookRun::new(target, &device, rule, kernel, opts.max_neighbors)?.run()?;
    if kernel == BookKernel::Wrong {
        return Ok(corruption(&padded, &expected).atoms == 0);
    }
    check(&padded.to_list()?, &expected, kernel.name())?;
    Ok(true)
}

/// [`run`] in one precision: the reference, the book's kernels, then the cell lists.
fn run_in<T: Precision>(
    target: &Target,
    atoms: &Atoms,
    input: &str,
    opts: &NeighborOptions,
    progress: &mut dyn FnMut(u32, u32),
) -> Result<(NeighborReport, NeighborList)> {
    let checked = super::api::Checked::<T>::new(target, atoms, opts.cutoff, opts.periodic)?;
    let (cut, plan, coords) = (&checked.cut, &checked.plan, checked.coords());

    progress(0, STEPS);
    let start = Instant::now();
    let all_pairs_ref = atoms.len() <= super::REFERENCE_ALL_PAIRS_MAX;
    let expected = if all_pairs_ref {
        super::reference::half_pairs(&coords, cut)?
    } else {
        super::cell_list::cell_list(&coords, cut)?
    };
    let reference_ms = start.elapsed().as_secs_f64() * 1e3;
    progress(1, STEPS);

    let device = DeviceAtoms::<T>::upload(target, atoms)?;
    let mut demo = Demo {
        target,
        device: &device,
        rule: rule(cut, atoms.dims()),
        expected: &expected,
        opts,
        timer: Timer::on(target)?,
        runs: Vec::new(),
    };
    let (skipped, mistake) = demo.book_kernels(progress)?;
    demo.cell_lists(plan, progress)?;
    let runs = demo.runs;

    let report = NeighborReport {
        target: target.describe(),
        input: input.to_string(),
        atoms: atoms.len(),
        dims: atoms.dims(),
        cutoff: opts.cutoff,
        precision: T::NAME,
        entries: expected.pairs(),
        histogram: expected.count_histogram(),
        reference: if all_pairs_ref { "all pairs" } else { "cells" },
        reference_ms,
        runs,
        mistake,
        skipped,
    };
    Ok((report, expected))
}

/// Steps of [`run`]'s progress: the reference, the book's four kernels, the cell lists.
const STEPS: u32 = 6;

/// One demo's kernels over the atoms on the device, each checked against `expected` and
/// timed on a GPU; `runs` collects them in the progression's order.
struct Demo<'a, T: Precision> {
    target: &'a Target,
    device: &'a DeviceAtoms<T>,
    rule: Rule<T>,
    expected: &'a NeighborList,
    opts: &'a NeighborOptions,
    timer: Option<Timer>,
    runs: Vec<KernelRun>,
}

impl<T: Precision> Demo<'_, T> {
    /// The most atoms the O(N²) kernels run on here: the option, and on the simulator at most
    /// [`SIM_ALL_PAIRS_MAX_ATOMS`].
    fn all_pairs_limit(&self) -> usize {
        if self.target.is_sim() {
            self.opts.all_pairs_max_atoms.min(SIM_ALL_PAIRS_MAX_ATOMS)
        } else {
            self.opts.all_pairs_max_atoms
        }
    }

    /// The book's O(N²) kernels, the mistake among them, each skipped with why where it
    /// cannot run: returns the skipped and what the mistake corrupted.
    fn book_kernels(
        &mut self,
        progress: &mut dyn FnMut(u32, u32),
    ) -> Result<(Vec<String>, Option<Corruption>)> {
        let (n, limit) = (self.device.len(), self.all_pairs_limit());
        let mut skipped = Vec::new();
        let mut mistake = None;
        for (step, kernel) in BookKernel::ALL.into_iter().enumerate() {
            if kernel == BookKernel::Wrong && T::WRONG.is_none() {
                skipped.push(format!("{}: shown in f32 only", kernel.name()));
            } else if n > limit {
                skipped.push(format!(
                    "{}_{}: O(N²), {n} atoms is above the limit of {limit} (--all-pairs-max-atoms)",
                    kernel.name(),
                    T::NAME
                ));
            } else {
                let corrupted = self.book_kernel(kernel)?;
                if kernel == BookKernel::Wrong {
                    mistake = corrupted;
                }
            }
            progress(step as u32 + 2, STEPS);
        }
        Ok((skipped, mistake))
    }

    /// One book kernel, run, timed and checked; for the mistake, what it corrupted instead
    /// of an error.
    fn book_kernel(&mut self, kernel: BookKernel) -> Result<Option<Corruption>> {
        let (target, n) = (self.target, self.device.len());
        let book = BookRun::new(
            target,
            self.device,
            self.rule,
            kernel,
            self.opts.max_neighbors,
        )?;
        let padded = book.run()?;
        let ms = time(target, &mut self.timer, || book.launch())?;
        let layout = kernel.layout();
        let mut mistake = None;
        let equal = if kernel == BookKernel::Wrong {
            let c = corruption(&padded, self.expected);
            let equal = c.atoms == 0;
            mistake = Some(c);
            equal
        } else {
            check(&padded.to_list()?, self.expected, kernel.name())?;
            true
        };
        self.runs.push(kernel_run(
            format!("{}_{}", kernel.name(), T::NAME),
            "O(N²)",
            layout_name(layout),
            equal,
            ms,
            n,
        ));
        Ok(mistake)
    }

    /// The cell list built as CSR (filled in atom order, then not) and padded in both
    /// layouts, each checked and timed.
    fn cell_lists(&mut self, plan: &CellPlan, progress: &mut dyn FnMut(u32, u32)) -> Result<()> {
        let (target, expected, n) = (self.target, self.expected, self.device.len());
        let mut cells = CellList::new(target, self.device, plan, self.rule)?;
        cells.set_fill_in_atom_order(true);
        check(
            &cells.build_csr()?,
            expected,
            "the cell list (CSR, filled in atom order)",
        )?;
        cells.set_fill_in_atom_order(false);
        let list = cells.build_csr()?;
        check(&list, expected, "the cell list (CSR)")?;
        let ms = time(target, &mut self.timer, || cells.launch_csr().map(drop))?;
        self.runs.push(kernel_run(
            format!("cell list (CSR), {}", T::NAME),
            "cells",
            "CSR",
            true,
            ms,
            n,
        ));
        progress(5, STEPS);
        let mn = self.opts.max_neighbors;
        for layout in [Layout::PerAtom, Layout::Transposed] {
            let padded = cells.build_padded(mn, layout)?;
            check(&padded.to_list()?, expected, "the cell list (padded)")?;
            let ms = time(target, &mut self.timer, || cells.launch_padded(mn, layout))?;
            self.runs.push(kernel_run(
                format!("cell list (padded), {}", T::NAME),
                "cells",
                layout_name(layout),
                true,
                ms,
                n,
            ));
        }
        progress(6, STEPS);
        Ok(())
    }
}

/// Milliseconds of one `work` between two events (GPU), or `None` on the simulator.
fn time(
    target: &Target,
    timer: &mut Option<Timer>,
    work: impl FnOnce() -> Result<()>,
) -> Result<Option<f64>> {
    match (target, timer) {
        (Target::Gpu(gpu), Some(timer)) => Ok(Some(timer.time(gpu.stream(), work)? as f64)),
        _ => Ok(None),
    }
}

fn kernel_run(
    name: String,
    method: &'static str,
    layout: &'static str,
    equal: bool,
    ms: Option<f64>,
    atoms: usize,
) -> KernelRun {
    KernelRun {
        name,
        method,
        layout,
        equal,
        ms,
        atoms_per_s: ms
            .filter(|&ms| ms > 0.0)
            .map(|ms| atoms as f64 / (ms * 1e-3)),
    }
}

/// The layout's name in reports.
pub fn layout_name(layout: Layout) -> &'static str {
    match layout {
        Layout::PerAtom => "per atom",
        Layout::Transposed => "transposed",
    }
}

fn check(got: &NeighborList, expected: &NeighborList, what: &str) -> Result<()> {
    match expected.first_difference(got) {
        None => Ok(()),
        Some(diff) => Err(Error::Mismatch(format!("{what}: {diff}"))),
    }
}

/// Compares what the mistake wrote with the reference, atom by atom.
pub fn corruption(padded: &Padded, expected: &NeighborList) -> Corruption {
    let mut c = Corruption {
        atoms: 0,
        lost: 0,
        unwritten: 0,
        example: None,
    };
    for n in 0..padded.nn.len() {
        let mut slots: Vec<u32> = padded.slots(n).collect();
        let want = expected.neighbors(n);
        let unwritten = slots.iter().filter(|&&j| j == UNWRITTEN).count();
        let lost = want.iter().filter(|j| !slots.contains(j)).count();
        if unwritten == 0 && lost == 0 && slots.len() == want.len() {
            continue;
        }
        c.atoms += 1;
        c.lost += lost;
        c.unwritten += unwritten;
        if c.example.is_none() {
            let shown: Vec<String> = slots
                .iter()
                .map(|&j| {
                    if j == UNWRITTEN {
                        "(never written)".into()
                    } else {
                        j.to_string()
                    }
                })
                .collect();
            slots.sort_unstable();
            c.example = Some(format!(
                "atom {n}: counted {}, slots [{}], but its neighbors are {:?}",
                padded.nn[n],
                shown.join(", "),
                want
            ));
        }
    }
    c
}
