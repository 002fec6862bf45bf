//! The one place that maps a precision to its kernels: [`Precision`], implemented for `f32`
//! and `f64`, one [`KernelRef`] per kernel of the device's
//! [`neighbor`](gpu::lessons::neighbor) module, launched with
//! [`Target::launch_ref`](crate::Target::launch_ref). Each kernel's arguments are written once,
//! in the type aliases below, in the kernel's order.

use crate::neighbor::reference::Real;
use crate::runtime::args::KernelRef;
use crate::runtime::buffer::Plain;
use crate::runtime::launch::KernelParam;
use gpu::lessons::neighbor::{self as dev, CellGrid, Coord, Kept, Rows, Rule, Sorted};

/// `find_neighbor_atomic_*` and the mistake `find_neighbor_wrong_*`: `nn`, `nl`, the atoms,
/// `n`, `mn`, the rule.
pub type BookArgs<T> = (*mut u32, *mut u32, dev::Atoms<T>, u32, u32, Rule<T>);
/// `find_neighbor_no_atomic_*`: as [`BookArgs`], then the layout.
pub type NoAtomicArgs<T> = (*mut u32, *mut u32, dev::Atoms<T>, u32, u32, Rule<T>, u32);
/// `cell_bin_*`: the atoms, `n`, the grid, `cell`, `rank`, the cells' counts.
pub type BinArgs<T> = (
    dev::Atoms<T>,
    u32,
    CellGrid<T>,
    *mut u32,
    *mut u32,
    *mut u32,
);
/// `cell_scatter_*`: the atoms, `n`, `cell`, `rank`, the cells' starts, the sorted atoms.
pub type ScatterArgs<T> = (
    dev::Atoms<T>,
    u32,
    *const u32,
    *const u32,
    *const u32,
    Sorted<T>,
);
/// `cell_count_*`: the sorted atoms, `n`, the cells' starts, the grid, the rule, the counts,
/// the kept neighbors.
pub type CountArgs<T> = (
    Sorted<T>,
    u32,
    *const u32,
    CellGrid<T>,
    Rule<T>,
    *mut u32,
    Kept,
);
/// `cell_fill_*`: as [`CountArgs`] up to the rule, then the rows.
pub type FillArgs<T> = (Sorted<T>, u32, *const u32, CellGrid<T>, Rule<T>, Rows);
/// `cell_fill_atoms_*`: as [`FillArgs`], with `cell` and `rank` before the rows.
pub type FillAtomsArgs<T> = (
    Sorted<T>,
    u32,
    *const u32,
    CellGrid<T>,
    Rule<T>,
    *const u32,
    *const u32,
    Rows,
);
/// `cell_padded_*`: as [`CountArgs`] up to the rule, then `nn`, `nl`, `mn` and the layout.
pub type PaddedArgs<T> = (
    Sorted<T>,
    u32,
    *const u32,
    CellGrid<T>,
    Rule<T>,
    *mut u32,
    *mut u32,
    u32,
    u32,
);

/// A precision the kernels come in: `f32` or `f64`, and its kernel of each step.
pub trait Precision: Plain + KernelParam + Coord + Real {
    /// `"f32"` or `"f64"`.
    const NAME: &'static str;
    /// `find_neighbor_atomic_*`.
    const ATOMIC: KernelRef<BookArgs<Self>>;
    /// `find_neighbor_no_atomic_*`.
    const NO_ATOMIC: KernelRef<NoAtomicArgs<Self>>;
    /// `find_neighbor_wrong_*`: the book's mistake, shown in `f32` only.
    const WRONG: Option<KernelRef<BookArgs<Self>>>;
    /// `cell_bin_*`.
    const BIN: KernelRef<BinArgs<Self>>;
    /// `cell_scatter_*`.
    const SCATTER: KernelRef<ScatterArgs<Self>>;
    /// `cell_count_*`.
    const COUNT: KernelRef<CountArgs<Self>>;
    /// `cell_fill_*`.
    const FILL: KernelRef<FillArgs<Self>>;
    /// `cell_fill_atoms_*`.
    const FILL_ATOMS: KernelRef<FillAtomsArgs<Self>>;
    /// `cell_padded_*`.
    const PADDED: KernelRef<PaddedArgs<Self>>;
}

macro_rules! precision {
    ($t:ident, $wrong:expr, $atomic:ident, $no_atomic:ident, $bin:ident, $scatter:ident, $count:ident, $fill:ident, $fill_atoms:ident, $padded:ident) => {
        impl Precision for $t {
            const NAME: &'static str = stringify!($t);
            const ATOMIC: KernelRef<BookArgs<$t>> =
                crate::kernel_ref!(gpu::lessons::neighbor::$atomic);
            const NO_ATOMIC: KernelRef<NoAtomicArgs<$t>> =
                crate::kernel_ref!(gpu::lessons::neighbor::$no_atomic);
            const WRONG: Option<KernelRef<BookArgs<$t>>> = $wrong;
            const BIN: KernelRef<BinArgs<$t>> = crate::kernel_ref!(gpu::lessons::neighbor::$bin);
            const SCATTER: KernelRef<ScatterArgs<$t>> =
                crate::kernel_ref!(gpu::lessons::neighbor::$scatter);
            const COUNT: KernelRef<CountArgs<$t>> =
                crate::kernel_ref!(gpu::lessons::neighbor::$count);
            const FILL: KernelRef<FillArgs<$t>> = crate::kernel_ref!(gpu::lessons::neighbor::$fill);
            const FILL_ATOMS: KernelRef<FillAtomsArgs<$t>> =
                crate::kernel_ref!(gpu::lessons::neighbor::$fill_atoms);
            const PADDED: KernelRef<PaddedArgs<$t>> =
                crate::kernel_ref!(gpu::lessons::neighbor::$padded);
        }
    };
}

precision!(
    f32,
    Some(crate::kernel_ref!(
        gpu::lessons::neighbor::find_neighbor_wrong_f32
    )),
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
    None,
    find_neighbor_atomic_f64,
    find_neighbor_no_atomic_f64,
    cell_bin_f64,
    cell_scatter_f64,
    cell_count_f64,
    cell_fill_f64,
    cell_fill_atoms_f64,
    cell_padded_f64
);
