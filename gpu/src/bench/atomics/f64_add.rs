//! `double` addition from `atomicCAS` (the CUDA book's) and the native one, as kernels.

use super::UNROLL;
use crate::atomic::{self, LoadOrder, Order, Scope};
use crate::index::global_id_x;
use crate::time::globaltimer_ns;

/// `double` addition built from a compare-and-swap loop, as the CUDA book writes it:
///
/// ```c
/// __device__ double atomicAdd(double* address, double val) {
///     unsigned long long* address_as_ull = (unsigned long long*)address;
///     unsigned long long old = *address_as_ull, assumed;
///     do {
///         assumed = old;
///         old = atomicCAS(address_as_ull, assumed,
///                         __double_as_longlong(val + __longlong_as_double(assumed)));
///     } while (assumed != old);
///     return __longlong_as_double(old);
/// }
/// ```
///
/// [`atomic::fetch_update`] is that loop: read the word, compute `assumed + val`, try to swap it
/// in; if another thread changed the word meanwhile, retry with what the CAS returned. Values are
/// compared as bits, as the book's `unsigned long long` comparison does (so a NaN cannot make it
/// loop forever). Returns the value before the addition.
///
/// Scope: device. Ordering: relaxed. CUDA: the book's `atomicAdd(double*, double)`, from before
/// sm_60 had a native one. PTX: `ld.relaxed.gpu.b64`, then `atom.relaxed.gpu.cas.b64` in a loop.
///
/// Lock-free, not wait-free: of the CASes that reach the word with the same `assumed`, one
/// succeeds and the rest retry. With every thread of a GPU on one word, about one attempt in ten
/// thousand succeeds: an H200 completes ~150 thousand such additions a second against ~570
/// million native ones, and some threads none at all in 20 ms
/// ([`atomic_add_f64_via_cas_until`] bounds the wait).
///
/// # Safety
/// See the [atomic module docs](crate::atomic#safety).
// ANCHOR: cas_add
#[inline(always)]
pub unsafe fn atomic_add_f64_via_cas(address: *mut f64, val: f64) -> f64 {
    // SAFETY: forwarded contract.
    unsafe {
        atomic::fetch_update(address, Scope::Device, Order::Relaxed, |assumed| {
            assumed + val
        })
    }
}
// ANCHOR_END: cas_add

/// [`atomic_add_f64_via_cas`] with a deadline: the book's loop, which gives up — adding nothing —
/// once `%globaltimer` reaches `deadline_ns`. Returns the value before the addition, or `None`
/// if it gave up.
///
/// Scope: device. Ordering: relaxed. PTX: `ld.relaxed.gpu.b64`, then a loop of
/// `mov.u64 %globaltimer` and `atom.relaxed.gpu.cas.b64`.
///
/// A CAS loop on a word other blocks hammer is a spin that may wait on them, so timed runs bound
/// it: the project's rule for every spin loop.
///
/// # Safety
/// See the [atomic module docs](crate::atomic#safety).
#[inline(always)]
pub unsafe fn atomic_add_f64_via_cas_until(
    address: *mut f64,
    val: f64,
    deadline_ns: u64,
) -> Option<f64> {
    // SAFETY: forwarded contract.
    unsafe {
        let mut old = atomic::load(address, Scope::Device, LoadOrder::Relaxed);
        loop {
            if globaltimer_ns() >= deadline_ns {
                return None;
            }
            let assumed = old;
            old = atomic::compare_and_swap(
                address,
                assumed,
                assumed + val,
                Scope::Device,
                Order::Relaxed,
            );
            if old.to_bits() == assumed.to_bits() {
                return Some(assumed);
            }
        }
    }
}

/// The loop both `f64` kernels share: thread `t` adds `values[(t + k) % n_values]` for
/// `k = 0, 1, …` to `sums[t / threads_per_address]` with `add`, until it has done `iters` or
/// (`budget_ns > 0`) its budget has passed; it writes how many it did to `counts[t]` and the sum
/// of what `add` returned to `sink[t]`. `add(p, v, deadline)` returns `None` when it gave up
/// without adding, which it must do for every call once the deadline has passed.
///
/// # Safety
/// The launch contract of [`atomic_add_f64_native`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn f64_add_loop(
    sums: *mut f64,
    threads_per_address: u32,
    values: *const f64,
    n_values: u32,
    iters: u32,
    budget_ns: u64,
    counts: *mut u32,
    sink: *mut f64,
    add: impl Fn(*mut f64, f64, u64) -> Option<f64>,
) {
    if threads_per_address == 0 || n_values == 0 {
        return;
    }
    let t = global_id_x();
    let n_values = n_values as usize;
    let mut j = t % n_values;
    let deadline = match budget_ns {
        0 => u64::MAX,
        b => globaltimer_ns().saturating_add(b),
    };
    // SAFETY: the launch contract: `sums` has a word per `threads_per_address` threads, `values`
    // has `n_values` values, `counts` and `sink` one slot per thread.
    unsafe {
        let p = sums.add(t / threads_per_address as usize);
        // The next value, consumed only when it was added: the additions done are always the
        // first `done` of this thread's sequence, which is what the host's reference replays.
        let mut step = || {
            let r = add(p, *values.add(j), deadline);
            if r.is_some() {
                j += 1;
                if j == n_values {
                    j = 0;
                }
            }
            r
        };
        let (mut done, mut acc) = (0u32, 0.0f64);
        // Counts one addition's result; `false` if it gave up.
        let mut take = |r: Option<f64>| match r {
            Some(old) => {
                acc += old;
                done += 1;
                true
            }
            None => false,
        };
        let mut left = iters;
        while left > 0 {
            if budget_ns != 0 && globaltimer_ns() >= deadline {
                break;
            }
            if left >= UNROLL {
                // Four issued back to back (the native add can have them all in flight); a
                // tuple, not an array, so that they stay in registers. Once one gives up the
                // deadline has passed, so the rest give up too.
                let (a, b, c, d) = (step(), step(), step(), step());
                if !(take(a) && take(b) && take(c) && take(d)) {
                    break;
                }
                left -= UNROLL;
            } else {
                if !take(step()) {
                    break;
                }
                left -= 1;
            }
        }
        *counts.add(t) = done;
        *sink.add(t) = acc;
    }
}

kernel! {
    /// Thread `t` adds `values[(t + k) % n_values]`, `k = 0, 1, …`, to
    /// `sums[t / threads_per_address]` with the CUDA book's CAS loop
    /// ([`atomic_add_f64_via_cas`]) — `iters` of them, or (`budget_ns > 0`) as many as it
    /// completes within `budget_ns` of its start ([`atomic_add_f64_via_cas_until`]). It writes
    /// how many it did to `counts[t]`, and the sum of the values it saw before each to `sink[t]`.
    ///
    /// Source: the CUDA book, chapter 9.2, `atomicAdd` for `double` from `atomicCAS`.
    /// Launch contract: `threads_per_address ≥ 1`; `sums` has `⌈threads / threads_per_address⌉`
    /// words, `values` `n_values ≥ 1` values, `counts` and `sink` one slot per thread of the 1-D
    /// grid.
    pub unsafe fn atomic_add_f64_cas(
        sums: *mut f64, threads_per_address: u32, values: *const f64, n_values: u32, iters: u32,
        budget_ns: u64, counts: *mut u32, sink: *mut f64,
    ) {
        // SAFETY: the launch contract above is `f64_add_loop`'s; every thread touches `sums`
        // only atomically.
        unsafe {
            f64_add_loop(
                sums, threads_per_address, values, n_values, iters, budget_ns, counts, sink,
                |p, v, deadline| match deadline {
                    u64::MAX => Some(atomic_add_f64_via_cas(p, v)),
                    d => atomic_add_f64_via_cas_until(p, v, d),
                },
            )
        }
    }
}

kernel! {
    /// As [`atomic_add_f64_cas`], with the native `double` add: what changed is one
    /// `atom.relaxed.gpu.add.f64` in place of the CAS loop, which L2 performs in one step
    /// whatever the contention, and which a thread can have several of in flight. It never gives
    /// up mid-add; the budget is checked between groups of four.
    ///
    /// Source: the CUDA book, chapter 9.2 (`atomicAdd` for `double`, native since Pascal).
    /// Launch contract: as [`atomic_add_f64_cas`].
    pub unsafe fn atomic_add_f64_native(
        sums: *mut f64, threads_per_address: u32, values: *const f64, n_values: u32, iters: u32,
        budget_ns: u64, counts: *mut u32, sink: *mut f64,
    ) {
        // SAFETY: as in `atomic_add_f64_cas`.
        unsafe {
            f64_add_loop(
                sums, threads_per_address, values, n_values, iters, budget_ns, counts, sink,
                |p, v, _| Some(atomic::fetch_add(p, v, Scope::Device, Order::Relaxed)),
            )
        }
    }
}
