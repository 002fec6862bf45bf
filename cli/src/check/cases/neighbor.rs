//! Neighbor lists: the book's O(N²) kernels in `f32` (its mistake among them) and in `f64`;
//! the input and the CPU reference the cell list's cases share.

use crate::check::{Case, Ran};
use gridsync::neighbor::launch::{BookKernel, BookRun, DeviceAtoms, Precision, rule};
use gridsync::neighbor::reference::{Coords, Cutoff};
use gridsync::neighbor::{Atoms, NeighborList, NeighborOptions};
use gridsync::runtime::error::{Error, Result};
use gridsync::runtime::launch::Target;

/// Atoms of every neighbor case: a graphene sheet's.
const ATOMS: usize = 200;

/// The book's kernels.
pub(super) fn cases() -> Vec<Case> {
    use gpu::Kernel as K;
    vec![
        case!(
            "neighbor",
            K::FindNeighborAtomicF32.name(),
            Clean,
            "graphene, 200 atoms",
            "the slot is atomicAdd's result",
            |t| neighbor(t, BookKernel::Atomic)
        ),
        case!(
            "neighbor",
            K::FindNeighborNoAtomicF32.name(),
            Clean,
            "graphene, 200 atoms",
            "every pair twice, a count in a register per atom",
            |t| neighbor(t, BookKernel::NoAtomic)
        ),
        case!(
            "neighbor",
            K::FindNeighborWrongF32.name(),
            DataRace,
            "graphene, 200 atoms",
            "the slot read from NN before the atomicAdd, not taken from its result",
            |t| neighbor(t, BookKernel::Wrong)
        ),
        case!(
            "neighbor",
            K::FindNeighborAtomicF64.name(),
            Clean,
            "graphene, 200 atoms",
            "the slot is atomicAdd's result, in double",
            |t| book_f64(t, BookKernel::Atomic)
        ),
        case!(
            "neighbor",
            K::FindNeighborNoAtomicF64.name(),
            Clean,
            "graphene, 200 atoms",
            "every pair twice, a count in a register per atom, in double",
            |t| book_f64(t, BookKernel::NoAtomic)
        ),
    ]
}

/// A book kernel in `f32`, through the demo's call.
fn neighbor(t: &Target, kernel: BookKernel) -> Result<Ran> {
    let atoms = input()?;
    let opts = NeighborOptions::default();
    gridsync::neighbor::demo::run_book_kernel(t, &atoms, &opts, kernel)?;
    Ok(Ran::Finished)
}

/// A book kernel in `f64`: its padded lists against the reference in `f64`.
fn book_f64(t: &Target, kernel: BookKernel) -> Result<Ran> {
    let (atoms, opts) = (input()?, NeighborOptions::default());
    let cut = Cutoff::<f64>::new(opts.cutoff, None)?;
    let device = DeviceAtoms::<f64>::upload(t, &atoms)?;
    let book = BookRun::new(
        t,
        &device,
        rule(&cut, atoms.dims()),
        kernel,
        opts.max_neighbors,
    )?;
    let got = book.run()?.to_list()?;
    same(&got, &reference::<f64>(&atoms, opts.cutoff)?, kernel.name())
}

/// The atoms of every neighbor case.
pub(super) fn input() -> Result<Atoms> {
    gridsync::neighbor::graphene::graphene(ATOMS, 1)
}

/// Every pair closer than `cutoff`, on the CPU, with the coordinates rounded to `T` as the
/// kernels read them.
pub(super) fn reference<T: Precision>(atoms: &Atoms, cutoff: f64) -> Result<NeighborList> {
    let (x, y, z) = atoms.rounded::<T>();
    let coords = Coords {
        x: &x,
        y: &y,
        z: z.as_deref(),
    };
    gridsync::neighbor::reference::half_pairs(&coords, &Cutoff::<T>::new(cutoff, None)?)
}

/// Finished if `got` is `want`, else the first difference.
pub(super) fn same(got: &NeighborList, want: &NeighborList, what: &str) -> Result<Ran> {
    match want.first_difference(got) {
        None => Ok(Ran::Finished),
        Some(diff) => Err(Error::Mismatch(format!("{what}: {diff}"))),
    }
}
