//! The one place that maps a precision to its kernels: [`Precision`], implemented for `f32`
//! and `f64`, each method one `launch!` of the device's
//! [`neighbor`](gpu::lessons::neighbor) module.

use crate::neighbor::reference::Real;
use crate::runtime::buffer::Plain;
use crate::runtime::error::{Error, Result};
use crate::runtime::launch::{KernelParam, Target};
use gpu::LaunchConfig;
use gpu::lessons::neighbor::{self as dev, CellGrid, Coord, Rule, Sorted};

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
