//! Neighbor lists by the O(N) cell list, in `f32` and `f64`: the library's call (bin, scan,
//! scatter, then count, scan and fill in one launch), the three-launch CSR build filled in atom
//! order and by sorted position, and the padded lists.

use super::neighbor::{input, reference, same};
use crate::check::{Case, Expect, Ran};
use gpu::lessons::neighbor::Layout;
use gridsync::neighbor::NeighborOptions;
use gridsync::neighbor::launch::{CellList, CellPlan, CsrMethod, DeviceAtoms, Precision, rule};
use gridsync::neighbor::reference::Cutoff;
use gridsync::runtime::error::Result;
use gridsync::runtime::launch::Target;

/// The input of every case here.
const SHEET: &str = "graphene, 200 atoms";

/// The cell list's kernels, each phase's launches named in order.
pub(super) fn cases() -> Vec<Case> {
    let case = |kernel, shape, why, run| Case {
        topic: "neighbor",
        kernel,
        expect: Expect::Clean,
        shape,
        why,
        not_on_weak: None,
        run,
    };
    vec![
        case(
            "cell_bin_f32, scan_lookback, cell_scatter_f32, cell_lists_f32",
            SHEET,
            "the library's build: atomics bin, a scan places, one launch counts, scans and fills",
            |t| cells::<f32>(t, Build::Library),
        ),
        case(
            "cell_bin_f32, scan_lookback, cell_scatter_f32, \
             cell_count_f32, scan_lookback, cell_fill_atoms_f32",
            SHEET,
            "count, scan, then one thread per atom writes its list",
            |t| cells::<f32>(t, Build::Csr(CsrMethod::FillInAtomOrder)),
        ),
        case(
            "cell_bin_f32, scan_lookback, cell_scatter_f32, \
             cell_count_f32, scan_lookback, cell_fill_f32",
            SHEET,
            "the lists filled one thread per sorted position",
            |t| cells::<f32>(t, Build::Csr(CsrMethod::FillSorted)),
        ),
        case(
            "cell_bin_f32, scan_lookback, cell_scatter_f32, cell_padded_f32",
            "graphene, 200 atoms, 10 slots",
            "padded lists in one pass: the count and the slots of an atom by its own thread",
            |t| cells::<f32>(t, Build::Padded),
        ),
        case(
            "cell_bin_f64, scan_lookback, cell_scatter_f64, cell_lists_f64",
            SHEET,
            "the library's build in double",
            |t| cells::<f64>(t, Build::Library),
        ),
        case(
            "cell_bin_f64, scan_lookback, cell_scatter_f64, \
             cell_count_f64, scan_lookback, cell_fill_atoms_f64",
            SHEET,
            "count, scan, fill in atom order, in double",
            |t| cells::<f64>(t, Build::Csr(CsrMethod::FillInAtomOrder)),
        ),
        case(
            "cell_bin_f64, scan_lookback, cell_scatter_f64, \
             cell_count_f64, scan_lookback, cell_fill_f64",
            SHEET,
            "the lists filled one thread per sorted position, in double",
            |t| cells::<f64>(t, Build::Csr(CsrMethod::FillSorted)),
        ),
        case(
            "cell_bin_f64, scan_lookback, cell_scatter_f64, cell_padded_f64",
            "graphene, 200 atoms, 10 slots",
            "padded lists in one pass, in double",
            |t| cells::<f64>(t, Build::Padded),
        ),
    ]
}

/// How the cell list is built.
#[derive(Clone, Copy, Debug)]
enum Build {
    /// [`gridsync::neighbor::build`]: CSR in one pass.
    Library,
    /// CSR by the given method ([`CellList::set_csr_method`]).
    Csr(CsrMethod),
    /// Padded lists of [`NeighborOptions::max_neighbors`] slots ([`CellList::build_padded`]).
    Padded,
}

/// The cell list in `T` over the neighbor cases' atoms, against the CPU reference in `T`.
fn cells<T: Precision>(t: &Target, build: Build) -> Result<Ran> {
    let (atoms, opts) = (input()?, NeighborOptions::default());
    let got = match build {
        Build::Library => gridsync::neighbor::build::<T>(t, &atoms, opts.cutoff, None)?,
        Build::Csr(_) | Build::Padded => {
            let cut = Cutoff::<T>::new(opts.cutoff, None)?;
            let plan = CellPlan::new(&atoms, opts.cutoff, None)?;
            let device = DeviceAtoms::<T>::upload(t, &atoms)?;
            let mut cells = CellList::new(t, &device, &plan, rule(&cut, atoms.dims()))?;
            match build {
                Build::Csr(method) => {
                    cells.set_csr_method(method);
                    cells.build_csr()?
                }
                _ => cells
                    .build_padded(opts.max_neighbors, Layout::PerAtom)?
                    .to_list()?,
            }
        }
    };
    let what = format!("the cell list in {} ({build:?})", T::NAME);
    same(&got, &reference::<T>(&atoms, opts.cutoff)?, &what)
}
