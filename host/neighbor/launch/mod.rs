//! The device's neighbor kernels on a [`Target`](crate::Target): the book's O(N²) kernels
//! ([`BookRun`]) and the O(N) cell list ([`CellList`]), in `f32` or `f64` ([`Precision`]).

mod atoms;
mod book;
mod cells;
mod plan;
mod precision;
mod scan;

pub use atoms::{DeviceAtoms, MAX_ATOMS, per_item, rule};
pub use book::{BookKernel, BookRun, Padded, UNWRITTEN};
pub use cells::CellList;
pub use plan::{CELL_MARGIN, CellPlan, MAX_CELLS_PER_AXIS, MAX_GPU_CHECKS, MAX_SIM_CHECKS};
pub use precision::Precision;
