//! The atoms on the target, and the one place that maps a precision to its kernels.

use crate::neighbor::points::Atoms;
use crate::neighbor::reference::{Cutoff, Real};
use crate::runtime::buffer::{Buffer, Plain};
use crate::runtime::error::{Error, Result};
use crate::runtime::grid::SIM_BLOCKS;
use crate::runtime::launch::{KernelParam, Target};
use gpu::LaunchConfig;
use gpu::lessons::neighbor::{self as dev, CellGrid, Coord, Rule, Sorted, THREADS_PER_BLOCK};

// SAFETY: `#[repr(C)]` structs of numbers and raw pointers, the same layout on both targets.
unsafe impl<T: KernelParam> KernelParam for dev::Atoms<T> {}
// SAFETY: as above.
unsafe impl<T: KernelParam> KernelParam for Rule<T> {}
// SAFETY: as above.
unsafe impl<T: KernelParam> KernelParam for CellGrid<T> {}
// SAFETY: as above.
unsafe impl<T: KernelParam> KernelParam for Sorted<T> {}

/// The most atoms a device list holds: indices and counts are `u32`.
pub const MAX_ATOMS: usize = u32::MAX as usize - 1;

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
    /// [`Error::InvalidInput`] above [`MAX_ATOMS`]; an allocation or copy error.
    pub fn upload(target: &Target, atoms: &Atoms) -> Result<DeviceAtoms<T>> {
        if atoms.len() > MAX_ATOMS {
            return Err(Error::InvalidInput(format!(
                "{} atoms: the device lists hold at most {MAX_ATOMS}",
                atoms.len()
            )));
        }
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

/// A precision the kernels come in: `f32` or `f64`. Each method queues one kernel of the
/// device's [`neighbor`](gpu::lessons::neighbor) module with the arguments in its order.
///
/// # Safety (every method)
/// The kernel's contract for its arguments, as [`Target::launch`].
#[allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
pub trait Precision: Plain + KernelParam + Coord + Real {
    /// `"f32"` or `"f64"`.
    const NAME: &'static str;
    /// `find_neighbor_atomic_*`.
    unsafe fn atomic(
        t: &Target,
        c: LaunchConfig,
        nn: *mut u32,
        nl: *mut u32,
        a: dev::Atoms<Self>,
        n: u32,
        mn: u32,
        r: Rule<Self>,
    ) -> Result<()>;
    /// `find_neighbor_no_atomic_*`.
    unsafe fn no_atomic(
        t: &Target,
        c: LaunchConfig,
        nn: *mut u32,
        nl: *mut u32,
        a: dev::Atoms<Self>,
        n: u32,
        mn: u32,
        r: Rule<Self>,
        layout: u32,
    ) -> Result<()>;
    /// `find_neighbor_wrong_*` ([`Error::Unsupported`] but in `f32`).
    unsafe fn wrong(
        t: &Target,
        c: LaunchConfig,
        nn: *mut u32,
        nl: *mut u32,
        a: dev::Atoms<Self>,
        n: u32,
        mn: u32,
        r: Rule<Self>,
    ) -> Result<()>;
    /// `cell_bin_*`.
    unsafe fn bin(
        t: &Target,
        c: LaunchConfig,
        a: dev::Atoms<Self>,
        n: u32,
        g: CellGrid<Self>,
        cell: *mut u32,
        rank: *mut u32,
        counts: *mut u32,
    ) -> Result<()>;
    /// `cell_scatter_*`.
    unsafe fn scatter(
        t: &Target,
        c: LaunchConfig,
        a: dev::Atoms<Self>,
        n: u32,
        cell: *const u32,
        rank: *const u32,
        start: *const u32,
        s: Sorted<Self>,
    ) -> Result<()>;
    /// `cell_count_*`.
    unsafe fn count(
        t: &Target,
        c: LaunchConfig,
        s: Sorted<Self>,
        n: u32,
        start: *const u32,
        g: CellGrid<Self>,
        r: Rule<Self>,
        counts: *mut u32,
    ) -> Result<()>;
    /// `cell_fill_*`.
    unsafe fn fill(
        t: &Target,
        c: LaunchConfig,
        s: Sorted<Self>,
        n: u32,
        start: *const u32,
        g: CellGrid<Self>,
        r: Rule<Self>,
        offsets: *const u32,
        indices: *mut u32,
    ) -> Result<()>;
    /// `cell_fill_atoms_*`.
    unsafe fn fill_atoms(
        t: &Target,
        c: LaunchConfig,
        s: Sorted<Self>,
        n: u32,
        start: *const u32,
        g: CellGrid<Self>,
        r: Rule<Self>,
        cell: *const u32,
        rank: *const u32,
        offsets: *const u32,
        indices: *mut u32,
    ) -> Result<()>;
    /// `cell_padded_*`.
    unsafe fn padded(
        t: &Target,
        c: LaunchConfig,
        s: Sorted<Self>,
        n: u32,
        start: *const u32,
        g: CellGrid<Self>,
        r: Rule<Self>,
        nn: *mut u32,
        nl: *mut u32,
        mn: u32,
        layout: u32,
    ) -> Result<()>;
}

macro_rules! precision {
    ($t:ident, $wrong:ident, $atomic:ident, $no_atomic:ident, $bin:ident, $scatter:ident, $count:ident, $fill:ident, $fill_atoms:ident, $padded:ident) => {
        impl Precision for $t {
            const NAME: &'static str = stringify!($t);
            unsafe fn atomic(
                t: &Target,
                c: LaunchConfig,
                nn: *mut u32,
                nl: *mut u32,
                a: dev::Atoms<$t>,
                n: u32,
                mn: u32,
                r: Rule<$t>,
            ) -> Result<()> {
                // SAFETY: forwarded to the caller.
                unsafe {
                    crate::launch!(t, gpu::lessons::neighbor::$atomic, c, (nn, nl, a, n, mn, r))
                }
            }
            unsafe fn no_atomic(
                t: &Target,
                c: LaunchConfig,
                nn: *mut u32,
                nl: *mut u32,
                a: dev::Atoms<$t>,
                n: u32,
                mn: u32,
                r: Rule<$t>,
                layout: u32,
            ) -> Result<()> {
                // SAFETY: forwarded to the caller.
                unsafe {
                    crate::launch!(
                        t,
                        gpu::lessons::neighbor::$no_atomic,
                        c,
                        (nn, nl, a, n, mn, r, layout)
                    )
                }
            }
            unsafe fn wrong(
                t: &Target,
                c: LaunchConfig,
                nn: *mut u32,
                nl: *mut u32,
                a: dev::Atoms<$t>,
                n: u32,
                mn: u32,
                r: Rule<$t>,
            ) -> Result<()> {
                wrong!($t, $wrong, t, c, (nn, nl, a, n, mn, r))
            }
            unsafe fn bin(
                t: &Target,
                c: LaunchConfig,
                a: dev::Atoms<$t>,
                n: u32,
                g: CellGrid<$t>,
                cell: *mut u32,
                rank: *mut u32,
                counts: *mut u32,
            ) -> Result<()> {
                // SAFETY: forwarded to the caller.
                unsafe {
                    crate::launch!(
                        t,
                        gpu::lessons::neighbor::$bin,
                        c,
                        (a, n, g, cell, rank, counts)
                    )
                }
            }
            unsafe fn scatter(
                t: &Target,
                c: LaunchConfig,
                a: dev::Atoms<$t>,
                n: u32,
                cell: *const u32,
                rank: *const u32,
                start: *const u32,
                s: Sorted<$t>,
            ) -> Result<()> {
                // SAFETY: forwarded to the caller.
                unsafe {
                    crate::launch!(
                        t,
                        gpu::lessons::neighbor::$scatter,
                        c,
                        (a, n, cell, rank, start, s)
                    )
                }
            }
            unsafe fn count(
                t: &Target,
                c: LaunchConfig,
                s: Sorted<$t>,
                n: u32,
                start: *const u32,
                g: CellGrid<$t>,
                r: Rule<$t>,
                counts: *mut u32,
            ) -> Result<()> {
                // SAFETY: forwarded to the caller.
                unsafe {
                    crate::launch!(
                        t,
                        gpu::lessons::neighbor::$count,
                        c,
                        (s, n, start, g, r, counts)
                    )
                }
            }
            unsafe fn fill(
                t: &Target,
                c: LaunchConfig,
                s: Sorted<$t>,
                n: u32,
                start: *const u32,
                g: CellGrid<$t>,
                r: Rule<$t>,
                offsets: *const u32,
                indices: *mut u32,
            ) -> Result<()> {
                // SAFETY: forwarded to the caller.
                unsafe {
                    crate::launch!(
                        t,
                        gpu::lessons::neighbor::$fill,
                        c,
                        (s, n, start, g, r, offsets, indices)
                    )
                }
            }
            unsafe fn fill_atoms(
                t: &Target,
                c: LaunchConfig,
                s: Sorted<$t>,
                n: u32,
                start: *const u32,
                g: CellGrid<$t>,
                r: Rule<$t>,
                cell: *const u32,
                rank: *const u32,
                offsets: *const u32,
                indices: *mut u32,
            ) -> Result<()> {
                // SAFETY: forwarded to the caller.
                unsafe {
                    crate::launch!(
                        t,
                        gpu::lessons::neighbor::$fill_atoms,
                        c,
                        (s, n, start, g, r, cell, rank, offsets, indices)
                    )
                }
            }
            unsafe fn padded(
                t: &Target,
                c: LaunchConfig,
                s: Sorted<$t>,
                n: u32,
                start: *const u32,
                g: CellGrid<$t>,
                r: Rule<$t>,
                nn: *mut u32,
                nl: *mut u32,
                mn: u32,
                layout: u32,
            ) -> Result<()> {
                // SAFETY: forwarded to the caller.
                unsafe {
                    crate::launch!(
                        t,
                        gpu::lessons::neighbor::$padded,
                        c,
                        (s, n, start, g, r, nn, nl, mn, layout)
                    )
                }
            }
        }
    };
}

/// The mistake exists in `f32` only.
macro_rules! wrong {
    (f32, $kernel:ident, $t:expr, $c:expr, $args:tt) => {
        // SAFETY: forwarded to the caller.
        unsafe { crate::launch!($t, gpu::lessons::neighbor::$kernel, $c, $args) }
    };
    (f64, $kernel:ident, $t:expr, $c:expr, $args:tt) => {{
        let _ = ($t, $c, $args);
        Err(Error::Unsupported(
            "the book's mistake is shown in f32 only".into(),
        ))
    }};
}

precision!(
    f32,
    find_neighbor_wrong_f32,
    find_neighbor_atomic_f32,
    find_neighbor_no_atomic_f32,
    cell_bin_f32,
    cell_scatter_f32,
    cell_count_f32,
    cell_fill_f32,
    cell_fill_atoms_f32,
    cell_padded_f32
);
precision!(
    f64,
    none,
    find_neighbor_atomic_f64,
    find_neighbor_no_atomic_f64,
    cell_bin_f64,
    cell_scatter_f64,
    cell_count_f64,
    cell_fill_f64,
    cell_fill_atoms_f64,
    cell_padded_f64
);

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
