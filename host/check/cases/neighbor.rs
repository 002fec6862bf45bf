//! Neighbor lists: the book's O(N²) kernels, its mistake among them.

use crate::check::{Case, Ran};
use crate::neighbor::NeighborOptions;
use crate::neighbor::launch::BookKernel;
use crate::runtime::error::Result;
use crate::runtime::launch::Target;

/// The neighbor kernels.
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
    ]
}

fn neighbor(t: &Target, kernel: BookKernel) -> Result<Ran> {
    let atoms = crate::neighbor::graphene::graphene(200, 1)?;
    let opts = NeighborOptions::default();
    crate::neighbor::demo::run_book_kernel(t, &atoms, &opts, kernel)?;
    Ok(Ran::Finished)
}
