//! Neighbor lists by the O(N) cell list, in `f32` and `f64`: the library's call (bin, scan,
//! scatter, count, scan, fill in atom order), the fill by sorted position, and the padded lists.

use super::neighbor::{input, reference, same};
use crate::check::{Case, Ran};
use gpu::lessons::neighbor::Layout;
use gridsync::neighbor::NeighborOptions;
use gridsync::neighbor::launch::{CellList, CellPlan, DeviceAtoms, Precision, rule};
use gridsync::neighbor::reference::Cutoff;
use gridsync::runtime::error::Result;
use gridsync::runtime::launch::Target;

/// The cell list's kernels, each phase's launches named in order.
pub(super) fn cases() -> Vec<Case> {
    vec![
        case!(
            "neighbor",
            "cell_bin_f32, scan_lookback, cell_scatter_f32, \
             cell_count_f32, cell_fill_atoms_f32",
            Clean,
            "graphene, 200 atoms",
            "the library's build: atomics bin, scans place, one thread per atom writes its list",
            |t| cells::<f32>(t, Build::Library)
        ),
        case!(
            "neighbor",
            "cell_bin_f32, scan_lookback, cell_scatter_f32, \
             cell_count_f32, cell_fill_f32",
            Clean,
            "graphene, 200 atoms",
            "the lists filled one thread per sorted position",
            |t| cells::<f32>(t, Build::SortedFill)
        ),
        case!(
            "neighbor",
            "cell_bin_f32, scan_lookback, cell_scatter_f32, \
             cell_padded_f32",
            Clean,
            "graphene, 200 atoms, 10 slots",
            "padded lists in one pass: the count and the slots of an atom by its own thread",
            |t| cells::<f32>(t, Build::Padded)
        ),
        case!(
            "neighbor",
            "cell_bin_f64, scan_lookback, cell_scatter_f64, \
             cell_count_f64, cell_fill_atoms_f64",
            Clean,
            "graphene, 200 atoms",
            "the library's build in double",
            |t| cells::<f64>(t, Build::Library)
        ),
        case!(
            "neighbor",
            "cell_bin_f64, scan_lookback, cell_scatter_f64, \
             cell_count_f64, cell_fill_f64",
            Clean,
            "graphene, 200 atoms",
            "the lists filled one thread per sorted position, in double",
            |t| cells::<f64>(t, Build::SortedFill)
        ),
        case!(
            "neighbor",
            "cell_bin_f64, scan_lookback, cell_scatter_f64, \
             cell_padded_f64",
            Clean,
            "graphene, 200 atoms, 10 slots",
            "padded lists in one pass, in double",
            |t| cells::<f64>(t, Build::Padded)
        ),
    ]
}

/// How the cell list is built.
#[derive(Clone, Copy, Debug)]
enum Build {
    /// [`gridsync::neighbor::build`]: CSR, filled in the atoms' order.
    Library,
    /// CSR, filled in the sorted order ([`CellList::fill`]).
    SortedFill,
    /// Padded lists of [`NeighborOptions::max_neighbors`] slots ([`CellList::build_padded`]).
    Padded,
}

/// The cell list in `T` over the neighbor cases' atoms, against the CPU reference in `T`.
fn cells<T: Precision>(t: &Target, build: Build) -> Result<Ran> {
    let (atoms, opts) = (input()?, NeighborOptions::default());
    let got = match build {
        Build::Library => gridsync::neighbor::build::<T>(t, &atoms, opts.cutoff, None)?,
        Build::SortedFill | Build::Padded => {
            let cut = Cutoff::<T>::new(opts.cutoff, None)?;
            let plan = CellPlan::new(&atoms, opts.cutoff, None)?;
            let device = DeviceAtoms::<T>::upload(t, &atoms)?;
            let mut cells = CellList::new(t, &device, &plan, rule(&cut, atoms.dims()))?;
            if let Build::Padded = build {
                cells
                    .build_padded(opts.max_neighbors, Layout::PerAtom)?
                    .to_list()?
            } else {
                cells.set_fill_in_atom_order(false);
                cells.build_csr()?
            }
        }
    };
    let what = format!("the cell list in {} ({build:?})", T::NAME);
    same(&got, &reference::<T>(&atoms, opts.cutoff)?, &what)
}
