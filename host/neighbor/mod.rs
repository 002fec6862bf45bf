//! Neighbor lists (CUDA book 9.3): for every atom, the atoms closer than a cutoff.
//!
//! The device half is [`gpu::lessons::neighbor`]: the book's O(N²) kernels with and without
//! `atomicAdd`, its warning about `atomicAdd`'s return value as a kernel that makes the
//! mistake, and an O(N) cell list. This half reads and generates atoms ([`points`], [`xy`],
//! [`generate`]), runs the kernels ([`launch`]), checks them against CPU references
//! ([`reference`](mod@reference), [`cell_list`]), and offers the library call [`neighbor_list`] over
//! `nalgebra` points, whose result is a [`NeighborList`] in compressed sparse rows.
//!
//! ```no_run
//! use gridsync::neighbor::{graphene, neighbor_list_of};
//! # fn main() -> gridsync::Result<()> {
//! let target = gridsync::Target::open(0, false)?;
//! let sheet = graphene::graphene(22_464, 1)?;
//! let list = neighbor_list_of(&target, &sheet, 1.9)?;
//! println!("{} bonds", list.pairs() / 2);
//! # Ok(()) }
//! ```

mod api;
pub mod book;
pub mod cell_list;
pub mod cells;
pub mod demo;
pub mod generate;
pub mod graphene;
pub mod launch;
pub mod list;
pub mod points;
pub mod reference;
pub mod xy;

pub use api::{NeighborPoint, build, neighbor_list, neighbor_list_periodic};
pub use demo::{NeighborOptions, NeighborReport, run};
pub use list::NeighborList;
pub use points::Atoms;

/// Atoms up to which the CPU reference is the book's all-pairs loop (half the pairs); above,
/// the CPU cell list.
pub const REFERENCE_ALL_PAIRS_MAX: usize = 4096;

/// The neighbors of `atoms` in `f32` on `target` by the cell list: [`neighbor_list`] for
/// [`Atoms`] read from a file or generated.
///
/// # Errors
/// As [`neighbor_list`].
pub fn neighbor_list_of(
    target: &crate::Target,
    atoms: &Atoms,
    cutoff: f64,
) -> crate::Result<NeighborList> {
    build::<f32>(target, atoms, cutoff, None)
}
