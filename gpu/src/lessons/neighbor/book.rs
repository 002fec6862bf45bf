//! The book's O(N²) kernels: every pair of atoms checked, with and without atomics — and the
//! mistake the book warns about.
//!
//! Shared changes from the book, all three kernels:
//!
//! - a grid-stride loop over `n1`, so that any grid covers any `N` (the book launches one thread
//!   per atom, which is what the host does here too);
//! - `NN` is zeroed by the host before the launch: the book's `d_NN[n1] = 0` at the top of
//!   `find_neighbor_atomic` races with the other threads' `atomicAdd(&d_NN[n1], 1)` — thread
//!   `n0 < n1` may add to `NN[n1]` before thread `n1` starts and zeroes it;
//! - every write into `NL` is guarded by `k < MN`, and the counts go on counting: an `MN` too
//!   small is an error the host reports, never a write out of bounds;
//! - points may be 3-D and the box periodic ([`Rule`]).

use super::{Atoms, Coord, Layout, Rule, slot, specialize};
use crate::atomic::atomic_add_device;
use crate::index::grid_stride;
use crate::mem::Ptr;

/// The book's `find_neighbor_atomic`: thread `n1` checks `n2 > n1` only, and appends to both
/// lists, taking each slot from `atomicAdd`'s result.
///
/// # Safety
/// `atoms` holds `n` atoms (`z` when `D3`), read-only; `nn` holds `n` counts, zeroed; `nl`
/// holds `n * mn` slots.
// ANCHOR: atomic
#[inline(always)]
unsafe fn find_neighbor_atomic<T: Coord, const D3: bool, const PERIODIC: bool>(
    nn: *mut u32,
    nl: *mut u32,
    atoms: Atoms<T>,
    n: u32,
    mn: u32,
    rule: Rule<T>,
) {
    let nl = Ptr::new(nl);
    let wide = mn as usize;
    for n1 in grid_stride(n as usize) {
        // SAFETY: `n1 < n` and `n2 < n`.
        let r1 = unsafe { atoms.at::<D3>(n1) };
        // Appends the pair (n1, n2) to both lists, about 3 times in 10⁶ candidates. `n2` is
        // laundered: without it LLVM strength-reduces the addresses below into 64-bit pointers
        // that every candidate advances, four pointers where the scan needs two.
        let append = |n2: u32| {
            let n2 = opaque(n2);
            // The slot is what `atomicAdd` returns: the count before this thread's add, which
            // no other thread can also receive.
            // SAFETY: `n1, n2 < n`; `NN` is only touched atomically during the launch, and
            // each slot below `mn` is written by the one thread that received its number.
            unsafe {
                let tmp1 = atomic_add_device(nn.add(n1), 1);
                if tmp1 < mn {
                    nl.add(n1 * wide + tmp1 as usize).store(n2);
                }
                let tmp2 = atomic_add_device(nn.add(n2 as usize), 1);
                if tmp2 < mn {
                    nl.add(n2 as usize * wide + tmp2 as usize).store(n1 as u32);
                }
            }
        };
        // SAFETY: `n2 < n`.
        let near = |n2: usize| rule.within::<D3, PERIODIC>(r1, unsafe { atoms.at::<D3>(n2) });
        scan_by_four(n1 as u32 + 1, n, near, |n2| append(n2 as u32));
    }
}
// ANCHOR_END: atomic

/// Calls `hit(n2)` for every `n2` in `from..to` where `near(n2)`, in order: four candidates a
/// step, their coordinates loaded before any is tested (nvcc unrolls the book's loop so; LLVM
/// does not unroll a loop that holds atomics), then one at a time for the rest. The four are
/// read from one base, `n2 + k` in `usize`: a `u32` sum widened after the add may wrap as far
/// as LLVM knows, and made each of the four addresses its own 64-bit multiply-add.
#[inline(always)]
fn scan_by_four(from: u32, to: u32, near: impl Fn(usize) -> bool, mut hit: impl FnMut(usize)) {
    // The count in `u32` (a 32-bit compare a step), the addresses from the widened base.
    let mut n2 = from;
    while to - n2 >= 4 {
        let at = n2 as usize;
        let found = [0, 1, 2, 3].map(|k| near(at + k));
        // The hits, about 3 in 10⁶ candidates, in the rare branch.
        if found[0] | found[1] | found[2] | found[3] {
            for (k, &f) in found.iter().enumerate() {
                if f {
                    hit(at + k);
                }
            }
        }
        n2 += 4;
    }
    while n2 < to {
        if near(n2 as usize) {
            hit(n2 as usize);
        }
        n2 += 1;
    }
}

/// `v`, through a `mov` LLVM cannot see through (ptxas does, at no cost): an index used only in
/// a rare branch stops LLVM's strength reduction from turning the branch's addresses into
/// pointers that every iteration advances.
#[inline(always)]
fn opaque(v: u32) -> u32 {
    #[cfg(target_arch = "nvptx64")]
    {
        let o: u32;
        // SAFETY: a register move.
        unsafe {
            core::arch::asm!("mov.u32 {o}, {i};", o = out(reg32) o, i = in(reg32) v,
                options(pure, nomem, nostack));
        }
        o
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        v
    }
}

/// The book's mistake: `d_NL[n1*MN + d_NN[n1]] = n2; atomicAdd(&d_NN[n1], 1);` — the count
/// read for the slot is not the count the atomic increments.
///
/// # Safety
/// As [`find_neighbor_atomic`].
#[inline(always)]
unsafe fn find_neighbor_wrong<T: Coord, const D3: bool, const PERIODIC: bool>(
    nn: *mut u32,
    nl: *mut u32,
    atoms: Atoms<T>,
    n: u32,
    mn: u32,
    rule: Rule<T>,
) {
    let (n, mn) = (n as usize, mn as usize);
    // One append done wrong: between the read of `NN[a]` and the add, another thread may read
    // the same count; both write the same slot (one neighbor is lost) and both add (a slot at
    // the end is never written). The read of `NN[a]` and the write of the slot are plain, as
    // in the book: the read races with other threads' `atomicAdd`s, the write with another
    // thread's write of the same slot — data races, which the checker reports with both
    // lines.
    // ANCHOR: wrong_append
    let (nn, nl) = (Ptr::new(nn), Ptr::new(nl));
    let append = |a: usize, b: usize| {
        // SAFETY: `a < n`, `k < mn`: inside `NN` and `NL`. The races are the lesson.
        unsafe {
            let k = nn.add(a).load() as usize;
            if k < mn {
                nl.add(a * mn + k).store(b as u32);
            }
            atomic_add_device(nn.add(a).as_ptr(), 1);
        }
    };
    // ANCHOR_END: wrong_append
    for n1 in grid_stride(n) {
        // SAFETY: `n1 < n` and `n2 < n`.
        let r1 = unsafe { atoms.at::<D3>(n1) };
        for n2 in n1 + 1..n {
            if rule.within::<D3, PERIODIC>(r1, unsafe { atoms.at::<D3>(n2) }) {
                append(n1, n2);
                append(n2, n1);
            }
        }
    }
}

/// The book's `find_neighbor_no_atomic`: thread `n1` checks every `n2` and appends to its own
/// list only, counting in a register; the list is written in `layout` (the book:
/// [`Layout::Transposed`], `NL[k*N + n1]`, so that consecutive threads write consecutive words).
///
/// # Safety
/// `atoms` holds `n` atoms (`z` when `D3`), read-only; `nn` holds `n` counts; `nl` holds
/// `n * mn` slots.
#[inline(always)]
unsafe fn find_neighbor_no_atomic<T: Coord, const D3: bool, const PERIODIC: bool>(
    nn: *mut u32,
    nl: *mut u32,
    atoms: Atoms<T>,
    n: u32,
    mn: u32,
    rule: Rule<T>,
    layout: u32,
) {
    let (nn, nl) = (Ptr::new(nn), Ptr::new(nl));
    let (atoms_n, wide) = (n as usize, mn as usize);
    for n1 in grid_stride(atoms_n) {
        let mut count = 0u32;
        // SAFETY: `n1 < n` and `n2 < n`.
        let r1 = unsafe { atoms.at::<D3>(n1) };
        // Appends `n2` to atom `n1`'s list (its first `mn` neighbors) and counts it.
        let record = |n2: usize| {
            if count < mn {
                let at = slot(layout, n1, count as usize, atoms_n, wide);
                // SAFETY: `at < n * mn`; only thread `n1` writes atom `n1`'s slots.
                unsafe { nl.add(at).store(n2 as u32) };
            }
            count += 1;
        };
        // The book puts the distance test first: it is false far more often than `n2 != n1`,
        // so `&&` usually stops there. The indices compared in 32 bits (both are below `n`, a
        // `u32`): one compare instead of a 64-bit pair.
        let self_index = n1 as u32;
        // SAFETY: `n2 < n`.
        let near = |n2: usize| {
            rule.within::<D3, PERIODIC>(r1, unsafe { atoms.at::<D3>(n2) })
                && n2 as u32 != self_index
        };
        scan_by_four(0, n, near, record);
        // SAFETY: `n1 < n`; only this thread writes `NN[n1]`.
        unsafe { nn.add(n1).store(count) };
    }
}

macro_rules! book_kernels {
    ($($t:ty: $atomic:ident, $no_atomic:ident;)*) => {$(
        kernel! {
            #[doc = concat!("The book's `find_neighbor_atomic` in `", stringify!($t), "`: half the pairs, both lists appended to at the slot `atomicAdd` returns, [`Layout::PerAtom`].")]
            ///
            /// Source: CUDA book 9.3.2, `find_neighbor_atomic(d_NN, d_NL, d_x, d_y, N,
            /// cutoff_square)`. What changed: see [the module](super). `nn` (zeroed by the host)
            /// gets every atom's true count, `nl` (`n * mn` slots) the first `mn` neighbors.
            pub unsafe fn $atomic(
                nn: *mut u32, nl: *mut u32, atoms: Atoms<$t>, n: u32, mn: u32, rule: Rule<$t>,
            ) {
                // SAFETY: forwarded kernel contract.
                unsafe {
                    specialize!(atoms.is_3d(&rule), rule.is_periodic(), find_neighbor_atomic::<$t>(nn, nl, atoms, n, mn, rule))
                }
            }
        }

        kernel! {
            #[doc = concat!("The book's `find_neighbor_no_atomic` in `", stringify!($t), "`: all pairs from both sides, a register count, no atomics; `layout` is a [`Layout`] (the book's is `Transposed`).")]
            ///
            /// Source: CUDA book 9.3.3, `find_neighbor_no_atomic`. What changed: see [the
            /// module](super); the layout is a parameter, so that the cost of the per-atom
            /// layout can be measured against the book's transposed one.
            pub unsafe fn $no_atomic(
                nn: *mut u32, nl: *mut u32, atoms: Atoms<$t>, n: u32, mn: u32, rule: Rule<$t>,
                layout: u32,
            ) {
                // SAFETY: forwarded kernel contract.
                unsafe {
                    specialize!(atoms.is_3d(&rule), rule.is_periodic(), find_neighbor_no_atomic::<$t>(nn, nl, atoms, n, mn, rule, layout))
                }
            }
        }
    )*};
}

book_kernels! {
    f32: find_neighbor_atomic_f32, find_neighbor_no_atomic_f32;
    f64: find_neighbor_atomic_f64, find_neighbor_no_atomic_f64;
}

kernel! {
    /// The mistake the book warns about, for teaching: the slot is read from `NN[n1]` before the
    /// `atomicAdd`, not taken from its result. Lists come out with neighbors lost and slots
    /// never written whenever two threads append to one atom at once ([`Layout::PerAtom`]).
    ///
    /// Source: CUDA book 9.3.2, "`d_NL[n1*MN+d_NN[n1]]=n2; atomicAdd(&d_NN[n1],1);` — that is
    /// badly wrong". The counts in `nn` are right (every add happens); the lists are not.
    pub unsafe fn find_neighbor_wrong_f32(
        nn: *mut u32, nl: *mut u32, atoms: Atoms<f32>, n: u32, mn: u32, rule: Rule<f32>,
    ) {
        // SAFETY: forwarded kernel contract.
        unsafe {
            specialize!(atoms.is_3d(&rule), rule.is_periodic(), find_neighbor_wrong::<f32>(nn, nl, atoms, n, mn, rule))
        }
    }
}

/// The layout the atomic kernels write: per atom, as the book's.
pub const ATOMIC_LAYOUT: Layout = Layout::PerAtom;
