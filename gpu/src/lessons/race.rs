//! The data race, and its fix — the first demo.
//!
//! Source: Numba CUDA by example, part 4, examples 4.1 and 4.2 (`add_one` and
//! `add_one_atomic`, launched 10 blocks × 16 threads on a one-element array).
//!
//! `x[0] = x[0] + 1` is three steps: load, add, store. All 160 threads load the same old value
//! at nearly the same time, add one, and store; the stores overwrite each other, and the result
//! is far below 160 (on a GPU, often the number of blocks or close to it). An atomic add makes the
//! three steps one indivisible read-modify-write, so no update is lost: exactly 160.

use crate::atomic::atomic_add_device;
use crate::mem::Ptr;

// ANCHOR: add_one
kernel! {
    /// Every thread adds one to `x[0]` with a plain load and store: updates are lost.
    ///
    /// Source: Numba tutorial, example 4.1, `add_one`.
    pub unsafe fn add_one(x: *mut u32) {
        let x = Ptr::new(x);
        // SAFETY: `x` points to one `u32` the host allocated. The threads race on it — that is
        // the lesson — so the accesses are volatile: each thread really loads and stores once,
        // as the source's compiled code does, instead of the compiler folding them. (Through a
        // `Ptr`, so that the checker sees both.)
        unsafe {
            let old = x.load_volatile();
            x.store_volatile(old + 1);
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
