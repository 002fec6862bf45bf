//! Atomic throughput: how many atomic operations per second a full GPU performs, by memory
//! (shared or global), by how many threads share an address, and by scope — and CUDA's
//! `double` addition built from `atomicCAS` next to the native one.
//!
//! Source: the CUDA book, chapter 9.2 (the list of atomic functions, their `_block` / `_system`
//! forms, and `atomicAdd` for `double` written with `atomicCAS`).
//!
//! # The kernels
//!
//! | kernel | CUDA | PTX | Scope | Ordering |
//! |---|---|---|---|---|
//! | `atomic_bench_add_u32_{global_block,global_device,global_system,shared_block}` | `atomicAdd_block`, `atomicAdd`, `atomicAdd_system` | `atom.relaxed.{cta,gpu,sys}.add.u32` | as named | relaxed |
//! | `atomic_bench_red_add_u32_…` | `atomicAdd`, result unused | `red.relaxed.{cta,gpu,sys}.add.u32` | as named | relaxed |
//! | `atomic_bench_add_f32_…` | `atomicAdd(float*)` | `atom.relaxed.{cta,gpu,sys}.add.f32` | as named | relaxed |
//! | `atomic_bench_cas_u32_…` | `atomicCAS` | `atom.relaxed.{cta,gpu,sys}.cas.b32` | as named | relaxed |
//! | [`atomic_add_f64_cas`] | the book's `double atomicAdd` from `atomicCAS` | `ld.relaxed.gpu.b64`, then a loop of `atom.relaxed.gpu.cas.b64` (reading `%globaltimer` when timed) | device | relaxed |
//! | [`atomic_add_f64_native`] | `atomicAdd(double*)` (sm_60+) | `atom.relaxed.gpu.add.f64` | device | relaxed |
//!
//! The scope is part of each kernel's name and a constant in its body, so each kernel holds one
//! kind of instruction, and the PTX tests can check that the `device` kernel says `.gpu` and
//! nothing else. Ordering is relaxed throughout, as CUDA's `atomicAdd` is: a counter needs
//! atomicity, not ordering.
//!
//! # Layout: which address each thread works on
//!
//! Thread `t` works on address `t / threads_per_address` (in the grid for global memory, in its
//! block for shared memory). The host picks `threads_per_address` for the layout it measures:
//! the whole grid (every thread on one word: the most contended case there is), one block, one
//! warp (32 lanes on one word), or one thread (each its own word: no contention at all).
//!
//! Block scope on a global word that threads of *several* blocks touch is a data race under the
//! PTX memory model (block-scoped atomics are atomic only among one block's threads), so the host
//! never measures block scope with the one-address-per-grid layout.
//!
//! # Keeping the results alive
//!
//! Each thread sums what its atomics return into one register and writes it once, to its own
//! slot of `sink` — as a CUDA benchmark must, so that the compiler cannot drop the work (here the
//! inline PTX is `volatile` anyway) and so that the host can check it. Four operations are issued
//! before their results are summed (`UNROLL`; LLVM unrolls further, to 32 in a row in the sm_90
//! PTX), so that several can be in flight per thread and the measurement sees the memory
//! system's throughput rather than one round trip per operation.
//! A CAS loop cannot do that — each attempt needs the value the previous one returned — which
//! is one reason CAS-built operations are slower than native ones.
//!
//! Shared-memory kernels zero their block's words, run, and copy the words out to global
//! memory (`out[block * words_per_block + i]`), so that the host can check every count.
//! These kernels go through the generic-address atomics of [`crate::atomic`], as every kernel of
//! this crate does. `ptxas` (12.9, sm_90) keeps them generic: `ATOM.E.ADD.STRONG.SM` on a
//! shared-window address rather than the shared-memory `ATOMS`, and for `f32` add a generic
//! `ATOM.E.ADD.F32` with a fallback `ATOMS.CAST.SPIN` CAS loop for shared addresses (shared
//! memory has no float add). `docs/perf-notes.md` has what that predicts.
//!
//! The `f64` kernels are in `f64_add.rs`, the throughput kernels in `throughput.rs`; both are
//! re-exported here.

mod f64_add;
mod ordering;
mod throughput;

pub use f64_add::*;
pub use ordering::*;
pub use throughput::*;

/// Atomics each thread issues before it sums their results: enough to keep a few in flight
/// per thread, few enough to need no more registers than a handful.
pub const UNROLL: u32 = 4;
