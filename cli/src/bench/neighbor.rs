//! `bench neighbor`: the cell list from 10⁴ to 10⁷ graphene atoms, phase by phase, and the
//! book's O(N²) kernels up to 10⁶, in atoms per second — every list checked once against the
//! CPU first.

use super::{Stats, require_gpu};
use gpu::lessons::neighbor::Layout;
use gridsync::neighbor::generate;
use gridsync::neighbor::launch::{
    BookKernel, BookRun, CellList, CellPlan, DeviceAtoms, MAX_GPU_CHECKS, Precision, rule,
    working_bytes,
};
use gridsync::neighbor::reference::{Coords, Cutoff};
use gridsync::neighbor::{Atoms, cell_list};
use gridsync::runtime::copy::{self, CopyBench};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;
use gridsync::runtime::memory::{Footprint, check_fits};
use gridsync::runtime::timer::Event;
use serde::Serialize;

/// Atoms of the cell-list sizes.
pub const DEFAULT_CELL_ATOMS: [usize; 4] = [10_000, 100_000, 1_000_000, 10_000_000];
/// Atoms of the O(N²) sizes: the book's sheet, 10⁵ and 10⁶ (about a second per run).
pub const DEFAULT_ALL_PAIRS_ATOMS: [usize; 3] = [22_464, 100_000, 1_000_000];

/// What [`run`] measures.
#[derive(Clone, Debug, PartialEq)]
pub struct NeighborBenchOptions {
    /// Graphene sheets the cell list builds.
    pub cell_atoms: Vec<usize>,
    /// Graphene sheets the O(N²) kernels run on.
    pub all_pairs_atoms: Vec<usize>,
    /// Timed runs per cell-list size (the O(N²) kernels: at most this, fewer past 3 s).
    pub trials: u32,
    /// `f64` kernels.
    pub double: bool,
    /// Slots per atom of the padded lists.
    pub max_neighbors: usize,
    /// Bytes of the roofline copy.
    pub copy_bytes: usize,
}

impl Default for NeighborBenchOptions {
    fn default() -> NeighborBenchOptions {
        NeighborBenchOptions {
            cell_atoms: DEFAULT_CELL_ATOMS.to_vec(),
            all_pairs_atoms: DEFAULT_ALL_PAIRS_ATOMS.to_vec(),
            trials: 20,
            double: false,
            max_neighbors: gridsync::neighbor::demo::DEFAULT_MAX_NEIGHBORS,
            copy_bytes: copy::DEFAULT_BYTES,
        }
    }
}

/// Milliseconds of each phase of the CSR build (medians).
#[derive(Clone, Debug, Serialize)]
pub struct Phases {
    /// Zero the cell counts, bin every atom (`atomicAdd` per atom).
    pub bin: Stats,
    /// Scan the cell counts.
    pub scan_cells: Stats,
    /// Sort the atoms by cell.
    pub scatter: Stats,
    /// Count the neighbors (keeping each atom's first few), scan the counts.
    pub count: Stats,
    /// Write the lists and sort each, one thread per atom in the input's order
    /// (`cell_fill_atoms`, what the build uses), then read the total back.
    pub fill: Stats,
    /// The same, one thread per sorted position (`cell_fill`), timed alone (with the read-back of
    /// the total, as `fill`).
    pub fill_sorted: Stats,
}

/// One cell-list size.
#[derive(Clone, Debug, Serialize)]
pub struct CellRow {
    /// Atoms.
    pub atoms: usize,
    /// Cells.
    pub cells: usize,
    /// Neighbor entries (each pair twice).
    pub entries: u64,
    /// The whole CSR build, binning to the last neighbor written, in ms.
    pub csr_ms: Stats,
    /// The padded build, per-atom layout (the book's), in ms.
    pub padded_ms: Stats,
    /// The padded build, transposed layout, in ms.
    pub transposed_ms: Stats,
    /// The CSR build's phases.
    pub phases: Phases,
    /// Atoms per second of the CSR build.
    pub atoms_per_s: f64,
    /// Bytes the CSR build must move at least: every array each phase reads or writes, once.
    pub bytes: u64,
    /// `bytes / csr_ms` against the copy's bandwidth.
    pub fraction_of_copy: f64,
}

/// One O(N²) kernel at one size.
#[derive(Clone, Debug, Serialize)]
pub struct AllPairsRow {
    /// The kernel.
    pub kernel: String,
    /// Atoms.
    pub atoms: usize,
    /// ms per run.
    pub ms: Stats,
    /// Atoms per second.
    pub atoms_per_s: f64,
    /// Pair distances checked per second (N²/2 for the atomic kernel, N² without).
    pub checks_per_s: f64,
}

/// What [`run`] measured.
#[derive(Clone, Debug, Serialize)]
pub struct NeighborBench {
    /// The device.
    pub device: String,
    /// `"f32"` or `"f64"`.
    pub precision: &'static str,
    /// The roofline.
    pub copy: CopyBench,
    /// The cell list per size.
    pub cells: Vec<CellRow>,
    /// The O(N²) kernels per size.
    pub all_pairs: Vec<AllPairsRow>,
}

/// Runs the benchmark. `progress` gets (steps done, steps).
///
/// # Errors
/// [`Error::Unsupported`] on the simulator; [`Error::Mismatch`] if a list differs from the
/// CPU's; a driver error.
pub fn run(
    target: &Target,
    opts: &NeighborBenchOptions,
    progress: impl FnMut(u32, u32),
) -> Result<NeighborBench> {
    if opts.double {
        run_in::<f64>(target, opts, progress)
    } else {
        run_in::<f32>(target, opts, progress)
    }
}

fn run_in<T: Precision>(
    target: &Target,
    opts: &NeighborBenchOptions,
    mut progress: impl FnMut(u32, u32),
) -> Result<NeighborBench> {
    let gpu = require_gpu(target)?;
    if opts.trials == 0 {
        return Err(Error::InvalidInput("--repeats must be positive".into()));
    }
    check_sizes::<T>(target, opts)?;
    let steps = (1 + opts.cell_atoms.len() + opts.all_pairs_atoms.len()) as u32;
    progress(0, steps);
    let copy = copy::run(target, opts.copy_bytes, opts.trials, |_, _| {})?;
    progress(1, steps);
    let cutoff = generate::DEFAULT_CUTOFF;
    let cut = Cutoff::<T>::new(cutoff, None)?;
    let mut cells = Vec::new();
    let mut all_pairs = Vec::new();
    let mut done = 1;
    for &n in &opts.cell_atoms {
        let atoms = gridsync::neighbor::graphene::graphene(n, 1)?;
        cells.push(cell_row::<T>(
            target,
            &atoms,
            cutoff,
            &cut,
            opts,
            copy.gb_per_s,
        )?);
        done += 1;
        progress(done, steps);
    }
    for &n in &opts.all_pairs_atoms {
        let atoms = gridsync::neighbor::graphene::graphene(n, 1)?;
        let device = DeviceAtoms::<T>::upload(target, &atoms)?;
        let r = rule(&cut, atoms.dims());
        for kernel in [BookKernel::Atomic, BookKernel::NoAtomic] {
            let book = BookRun::new(target, &device, r, kernel, opts.max_neighbors)?;
            book.run()?.to_list()?;
            let mut samples = Vec::new();
            let budget = std::time::Instant::now();
            while samples.len() < opts.trials as usize
                && (samples.len() < 3 || budget.elapsed().as_secs_f64() < 3.0)
            {
                samples.push(timed(gpu.stream(), || book.launch())?);
            }
            let ms = Stats::of(&samples)?;
            let checks = if kernel == BookKernel::Atomic {
                (n as f64) * (n as f64 - 1.0) / 2.0
            } else {
                (n as f64) * (n as f64)
            };
            all_pairs.push(AllPairsRow {
                kernel: format!("{}_{}", kernel.name(), T::NAME),
                atoms: n,
                ms,
                atoms_per_s: n as f64 / (ms.median * 1e-3),
                checks_per_s: checks / (ms.median * 1e-3),
            });
        }
        done += 1;
        progress(done, steps);
    }
    Ok(NeighborBench {
        device: gpu.info().name.clone(),
        precision: T::NAME,
        copy,
        cells,
        all_pairs,
    })
}

/// Host bytes per atom besides the lists: the sheet in `f64`, its copy in the kernels'
/// precision (at most `f64`), and the CPU cell list's working arrays.
const HOST_BYTES_PER_ATOM: u64 = 16 + 16 + 56;

/// Refuses, before anything is generated or allocated, a size the host or the GPU cannot hold:
/// per atom, the coordinates and the cell list's working arrays on the GPU, and both lists —
/// the CSR one and the padded one (`max_neighbors` slots and a count, at least what the CSR list
/// takes), held at once — there and on the host, where the CPU's list, the GPU's and the padded
/// one are compared.
fn check_sizes<T>(target: &Target, opts: &NeighborBenchOptions) -> Result<()> {
    let coords = 2 * size_of::<T>() as u64;
    let list = (opts.max_neighbors as u64)
        .checked_add(1)
        .and_then(|s| s.checked_mul(4));
    let need = |n: u64, working: Option<u64>, lists: u64| -> Option<Footprint> {
        let list = list?;
        let device = working?
            .checked_add(n.checked_mul(coords)?)?
            .checked_add(n.checked_mul(list)?.checked_mul(lists.min(2))?)?;
        let host = n.checked_mul(HOST_BYTES_PER_ATOM.checked_add(lists.checked_mul(list)?)?)?;
        Some(Footprint { host, device })
    };
    for &n in &opts.cell_atoms {
        let n = n as u64;
        let working = working_bytes::<T>(n, 2, n.saturating_mul(2));
        check_fits(target, &format!("--len {n}"), need(n, working, 3))?;
    }
    for &n in &opts.all_pairs_atoms {
        check_fits(
            target,
            &format!("--all-pairs-len {n}"),
            need(n as u64, Some(0), 1),
        )?;
    }
    Ok(())
}

/// Event-timed milliseconds of `work` on `stream`.
fn timed(
    stream: &gridsync::runtime::stream::Stream,
    work: impl FnOnce() -> Result<()>,
) -> Result<f64> {
    let (start, stop) = (Event::new()?, Event::new()?);
    start.record(stream)?;
    work()?;
    stop.record(stream)?;
    stop.synchronize()?;
    Ok(stop.elapsed_ms_since(&start)? as f64)
}

fn cell_row<T: Precision>(
    target: &Target,
    atoms: &Atoms,
    cutoff: f64,
    cut: &Cutoff<T>,
    opts: &NeighborBenchOptions,
    copy_gb_s: f64,
) -> Result<CellRow> {
    let Target::Gpu(gpu) = target else {
        return Err(Error::Unsupported("benchmarks need a GPU".into()));
    };
    let stream = gpu.stream();
    let plan = CellPlan::new(atoms, cutoff, None)?;
    plan.check_cost(MAX_GPU_CHECKS)?;
    let device = DeviceAtoms::<T>::upload(target, atoms)?;
    let mut list = CellList::new(target, &device, &plan, rule(cut, atoms.dims()))?;
    // Checked once against the CPU before anything is timed.
    let (x, y, _) = atoms.rounded::<T>();
    let expected = cell_list::cell_list(
        &Coords {
            x: &x,
            y: &y,
            z: None,
        },
        cut,
    )?;
    let got = list.build_csr()?;
    if let Some(d) = expected.first_difference(&got) {
        return Err(Error::Mismatch(format!(
            "the cell list at {} atoms: {d}",
            atoms.len()
        )));
    }
    let padded = list.build_padded(opts.max_neighbors, Layout::PerAtom)?;
    padded.to_list()?;

    let trials = opts.trials as usize;
    let mut csr = Vec::new();
    let mut phase: [Vec<f64>; 5] = Default::default();
    let events: Vec<Event> = (0..6).map(|_| Event::new()).collect::<Result<_>>()?;
    let mut total = 0;
    for _ in 0..trials {
        events[0].record(stream)?;
        list.bin()?;
        events[1].record(stream)?;
        list.scan_cells()?;
        events[2].record(stream)?;
        list.scatter()?;
        events[3].record(stream)?;
        list.count()?;
        events[4].record(stream)?;
        total = list.fill()?;
        events[5].record(stream)?;
        events[5].synchronize()?;
        for (k, p) in phase.iter_mut().enumerate() {
            p.push(events[k + 1].elapsed_ms_since(&events[k])? as f64);
        }
        csr.push(events[5].elapsed_ms_since(&events[0])? as f64);
    }
    // The fill in sorted order, timed alone after the same first phases, and checked.
    let mut fill_sorted = Vec::new();
    list.set_fill_in_atom_order(false);
    for _ in 0..trials {
        list.bin()?;
        list.scan_cells()?;
        list.scatter()?;
        list.count()?;
        fill_sorted.push(timed(stream, || list.fill().map(drop))?);
    }
    list.set_fill_in_atom_order(true);
    if let Some(d) = expected.first_difference(&list.csr(total as usize)?) {
        return Err(Error::Mismatch(format!(
            "the cell list filled in sorted order: {d}"
        )));
    }
    let mut padded_ms = Vec::new();
    let mut transposed_ms = Vec::new();
    for _ in 0..trials {
        padded_ms.push(timed(stream, || {
            list.launch_padded(opts.max_neighbors, Layout::PerAtom)
        })?);
        transposed_ms.push(timed(stream, || {
            list.launch_padded(opts.max_neighbors, Layout::Transposed)
        })?);
    }
    let csr_ms = Stats::of(&csr)?;
    let bytes = compulsory_bytes(
        atoms.len() as u64,
        plan.cells as u64,
        total,
        atoms.dims() as u64,
        size_of::<T>() as u64,
    );
    Ok(CellRow {
        atoms: atoms.len(),
        cells: plan.cells,
        entries: total,
        phases: Phases {
            bin: Stats::of(&phase[0])?,
            scan_cells: Stats::of(&phase[1])?,
            scatter: Stats::of(&phase[2])?,
            count: Stats::of(&phase[3])?,
            fill: Stats::of(&phase[4])?,
            fill_sorted: Stats::of(&fill_sorted)?,
        },
        atoms_per_s: atoms.len() as f64 / (csr_ms.median * 1e-3),
        bytes,
        fraction_of_copy: bytes as f64 / (csr_ms.median * 1e-3) / (copy_gb_s * 1e9),
        csr_ms,
        padded_ms: Stats::of(&padded_ms)?,
        transposed_ms: Stats::of(&transposed_ms)?,
    })
}

/// The bytes a CSR build must move at least, if every array each phase touches were read or
/// written exactly once: `n` atoms of `dims` coordinates of `s` bytes, `cells` cells,
/// `entries` neighbor entries. The search's re-reads of the cells around each atom hit in cache
/// and are not counted.
///
/// - bin: coordinates in, cell and rank out (8), each cell's count zeroed and added to (8);
/// - scan of the cells: counts in, starts out, tile offsets added (16 per cell);
/// - scatter: coordinates, cell, rank and start in (12 + coordinates), index and coordinates out;
/// - count: sorted coordinates and index in, the count out, each cell's start read (8 + 4/cell),
///   then the scan of the counts (16);
/// - fill: sorted coordinates, index and two offsets in, the entries out.
pub fn compulsory_bytes(n: u64, cells: u64, entries: u64, dims: u64, s: u64) -> u64 {
    let coords = dims * s;
    let bin = n * (coords + 8) + 8 * cells;
    let scan_cells = 16 * cells;
    let scatter = n * (2 * coords + 16);
    let count = n * (coords + 8) + 4 * cells + 16 * n;
    let fill = n * (coords + 12) + 4 * cells + 4 * entries;
    bin + scan_cells + scatter + count + fill
}
