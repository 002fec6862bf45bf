//! The atoms on the target, the kernels' arguments, and their launch shape.

use super::precision::Precision;
use crate::neighbor::points::Atoms;
use crate::neighbor::reference::{Cutoff, Real, check_atom_count};
use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::error::Result;
use crate::runtime::grid::SIM_BLOCKS;
use crate::runtime::launch::{KernelParam, Target};
use crate::runtime::memory::{Footprint, check_fits};
use gpu::LaunchConfig;
use gpu::lessons::neighbor::{
    self as dev, CellGrid, Kept, LookBack, Rows, Rule, Sorted, THREADS_PER_BLOCK,
};

// SAFETY: `#[repr(C)]` structs of numbers and raw pointers, the same layout on both targets.
unsafe impl<T: KernelParam> KernelParam for dev::Atoms<T> {}
// SAFETY: as above.
unsafe impl<T: KernelParam> KernelParam for Rule<T> {}
// SAFETY: as above.
unsafe impl<T: KernelParam> KernelParam for CellGrid<T> {}
// SAFETY: as above.
unsafe impl<T: KernelParam> KernelParam for Sorted<T> {}
// SAFETY: as above.
unsafe impl KernelParam for Kept {}
// SAFETY: as above.
unsafe impl KernelParam for Rows {}
// SAFETY: as above.
unsafe impl KernelParam for LookBack {}

/// The atoms' coordinates on a target, in the kernels' precision `T`.
pub struct DeviceAtoms<T: Plain> {
    x: Buffer<T>,
    y: Buffer<T>,
    z: Option<Buffer<T>>,
}

impl<T: Precision> DeviceAtoms<T> {
    /// Copies `atoms` to `target`, rounded to `T`.
    ///
    /// # Errors
    /// [`Error::TooLarge`](crate::Error::TooLarge) above
    /// [`MAX_ATOMS`](crate::neighbor::reference::MAX_ATOMS) or past the target's free memory;
    /// an allocation or copy error.
    pub fn upload(target: &Target, atoms: &Atoms) -> Result<DeviceAtoms<T>> {
        let n = atoms.len();
        check_atom_count(n as u64)?;
        let each = atoms.dims() as u64 * size_of::<T>() as u64;
        check_fits(
            target,
            &format!("{n} atoms"),
            Footprint::per_element(n as u64, 0, each),
        )?;
        let (x, y, z) = atoms.rounded::<T>();
        Ok(DeviceAtoms {
            x: target.upload(&x)?,
            y: target.upload(&y)?,
            z: match z {
                Some(z) => Some(target.upload(&z)?),
                None => None,
            },
        })
    }

    /// How many atoms.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.x.len() == 0
    }

    /// 2 or 3.
    pub fn dims(&self) -> u32 {
        if self.z.is_some() { 3 } else { 2 }
    }

    /// The kernels' view of the coordinates.
    pub fn view(&self) -> dev::Atoms<T> {
        dev::Atoms {
            x: self.x.ptr().cast_const(),
            y: self.y.ptr().cast_const(),
            z: self
                .z
                .as_ref()
                .map_or(std::ptr::null(), |z| z.ptr().cast_const()),
        }
    }
}

/// One thread per item, in blocks of [`THREADS_PER_BLOCK`] (the book launches one thread per
/// atom); on the simulator at most [`SIM_BLOCKS`] blocks, whose grid-stride loops cover the
/// rest. At least one block.
pub fn per_item(target: &Target, items: usize) -> LaunchConfig {
    let blocks = items.div_ceil(THREADS_PER_BLOCK as usize).max(1);
    let blocks = match target {
        Target::Sim => blocks.min(SIM_BLOCKS as usize),
        Target::Gpu(_) => blocks.min(i32::MAX as usize),
    };
    LaunchConfig::linear(blocks as u32, THREADS_PER_BLOCK)
}

/// The kernels' [`Rule`] for a CPU reference's [`Cutoff`]: the same squared cutoff and box, so
/// that both decide every pair alike.
pub fn rule<T: Precision>(cut: &Cutoff<T>, dims: usize) -> Rule<T> {
    Rule {
        cutoff_sq: cut.cutoff_sq,
        side: cut.periodic.unwrap_or([<T as Real>::ZERO; 3]),
        periodic: cut.periodic.is_some() as u32,
        dims: dims as u32,
    }
}
