//! The device's neighbor kernels on a [`Target`](crate::Target): the book's O(N²) kernels
//! ([`BookRun`]) and the O(N) cell list ([`CellList`]), in `f32` or `f64` ([`Precision`]).

mod atoms;
mod book;
mod cells;
mod precision;
mod scan;

pub use crate::neighbor::cells::{
    CELL_MARGIN, CellPlan, MAX_CELLS, MAX_CELLS_PER_AXIS, MAX_GPU_CHECKS, MAX_SIM_CHECKS,
};
pub use crate::neighbor::reference::MAX_ATOMS;
pub use atoms::{DeviceAtoms, per_item, rule};
pub use book::{BookKernel, BookRun, Padded, UNWRITTEN};
pub use cells::{CellList, working_bytes};
pub use precision::Precision;
