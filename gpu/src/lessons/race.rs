//! The data race, and its fix — the first demo.
//!
//! Source: Numba CUDA by example, part 4, examples 4.1 and 4.2 (`add_one` and
//! `add_one_atomic`, launched 10 blocks × 16 threads on a one-element array).
//!
//! `x[0] = x[0] + 1` is three steps: load, add, store. All 160 threads load the same old value
//! at nearly the same time, add one, and store; the stores overwrite each other, and the result
//! is far below 160 (on a GPU, often the number of blocks or close to it). An atomic add makes the
//! three steps one indivisible read-modify-write, so no update is lost: exactly 160.

use crate::atomic::{atomic_add_block, atomic_add_device};
use crate::mem::Ptr;

// ANCHOR: add_one
kernel! {
    /// Every thread adds one to `x[0]` with a plain load and store: updates are lost.
    ///
    /// Source: Numba tutorial, example 4.1, `add_one`.
    pub unsafe fn add_one(x: *mut u32) {
        let x = Ptr::new(x);
        // SAFETY: `x` points to one `u32` the host allocated. The threads race on it — that is
        // the lesson: a plain load and a plain store (`ld.u32`, `st.u32`), as the source's
        // `x[0] += 1` compiles to. Each thread loads and stores once; there is nothing for the
        // compiler to fold.
        unsafe {
            let old = x.load();
            x.store(old + 1);
        }
    }
}
// ANCHOR_END: add_one

// ANCHOR: add_one_atomic
kernel! {
    /// Every thread adds one to `x[0]` atomically: the result is exactly the thread count.
    ///
    /// Source: Numba tutorial, example 4.2, `add_one_atomic` (`cuda.atomic.add(x, 0, 1)`).
    /// What changed: one `atom.relaxed.gpu.add.u32` replaces the load and the store. Relaxed
    /// ordering and device scope are enough: the threads only need the count to be exact, not
    /// to publish anything else through it.
    pub unsafe fn add_one_atomic(x: *mut u32) {
        // SAFETY: `x` points to one `u32`, touched only atomically during the launch.
        unsafe {
            atomic_add_device(x, 1);
        }
    }
}
// ANCHOR_END: add_one_atomic

// ANCHOR: add_one_block_scope
kernel! {
    /// Every thread adds one to `x[0]` with a block-scope atomic (`atomicAdd_block`,
    /// `atom.relaxed.cta.add.u32`), though the threads of every block share the counter.
    ///
    /// What can go wrong: a `.cta` atomic is atomic only among the threads of its block. Two
    /// adds from different blocks are not *morally strong* (neither scope includes the other
    /// thread), so PTX counts them as a data race and promises no total. Today's GPUs perform
    /// global atomics at L2 whatever their scope, and the count comes out right — which is why
    /// no run on a GPU finds this; the checker does, from the scopes alone (iGUARD's scoped
    /// race). The fix is `add_one_atomic`'s device scope.
    pub unsafe fn add_one_block_scope(x: *mut u32) {
        // SAFETY: `x` points to one `u32`, touched only atomically during the launch; the
        // scope too narrow for the grid is the lesson.
        unsafe {
            atomic_add_block(x, 1);
        }
    }
}
// ANCHOR_END: add_one_block_scope
