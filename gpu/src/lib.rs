//! gridsync's device crate.
//!
//! On `nvptx64-nvidia-cuda` this is a `#![no_std]` crate whose kernels become PTX. On the host
//! the same source compiles with `std`, and [`sim`] runs every kernel body on OS threads — one
//! thread per GPU thread — so that the logic of each kernel can be tested, and a race watched,
//! without a GPU.
//!
//! # Layout
//!
//! | folder | what it holds |
//! |---|---|
//! | [`primitives`] | what a kernel of yours may call, by level: thread ([`index`], [`time`], [`vector`]), memory model ([`atomic`], [`sync`]), warp ([`warp`]), block ([`shared`], [`shared_atomic`], [`block_reduce`], [`block_scan`], [`mbarrier`], [`async_copy`], [`pipeline`]), cluster ([`cluster`]), device ([`lock`]), grid ([`grid`]); re-exported here |
//! | [`lessons`] | the sources' topics, one module each, each a graded progression of kernels |
//! | [`checks`], [`bench`](mod@bench) | kernels that exist only to check the primitives against a model, or to measure them |
//! | [`sim`] | the CPU simulator (host only) |
//! | `kernel/` | [`kernel!`], the one list of kernels ([`Kernel`]), launch shapes ([`LaunchConfig`]) |
//!
//! Kernels call primitives, never the reverse. Only the primitives' seam (`src/seam/`, private)
//! touches `core::arch::nvptx` or inline PTX: each primitive is one PTX wrapper per instruction
//! there and its twin on the simulator, and the typed primitives above are written once for both.
//!
//! # Reading order
//!
//! Each topic's host half has the same name in the `gridsync` crate (`gridsync::race`, …), and
//! `gridsync <topic>` runs it.
//!
//! 1. [`lessons::race`] — `x[0] += 1` from 160 threads loses updates; one atomic add does not
//!    (Numba tutorial part 4, 4.1–4.2).
//! 2. [`atomic`], then [`checks::atomics`] and [`bench::atomics`](mod@bench::atomics) — every CUDA atomic with its
//!    scope and ordering, checked against a sequential model; what scope costs; `double` add
//!    from `atomicCAS` (CUDA book ch. 9).
//! 3. [`lock`], then [`lessons::locks`] — the CAS spinlock, the missing fence, intra-warp
//!    deadlock, a mutex that cannot hang (Numba part 4, 4.5; the CUDA lock blog).
//! 4. [`lessons::count_above`] and [`lessons::dot`] — from a lock per element to one atomic per
//!    block (the lock blog's `GtThrCntKernel`; Numba part 4, 4.6).
//! 5. [`block_reduce`], then [`lessons::reduce`] — tree, `atomicAdd` per block, shuffles, a
//!    deterministic last-block single pass (Numba part 3; CUDA book 9.1).
//! 6. [`shared`], [`shared_atomic`], then [`lessons::histogram`] — global atomics, privatized in
//!    shared memory, per warp, per lane (Numba part 4, 4.3–4.4).
//! 7. [`lessons::normalize`] — the kernels of the streams topic; the streams and events
//!    themselves are host code, `gridsync::normalize` (Numba part 3, 3.1–3.7).
//! 8. [`grid`], then [`lessons::barrier`] — a barrier over every block of a launch: the
//!    article's counter, the spin the compiler removes, the barrier that works once, and
//!    [`grid::GridBarrier`]; one launch against many on the X→P→X iteration (the grid-barrier
//!    article, ru).
//! 9. [`mbarrier`], [`async_copy`] and [`cluster`] (sm_90), then [`lessons::mbarrier`] —
//!    split-phase barriers: arrive, work, wait; reading before the wait, a parity never moved
//!    on, waiting before arriving; then [`lessons::histogram::wide`], where a cluster's
//!    distributed shared memory holds 65 536 bins (beyond the sources: Hopper).
//! 10. [`pipeline`] (sm_90), then [`lessons::pipeline`] — producer/consumer pipelines: bulk
//!     copies into a ring of stages, a full and an empty `mbarrier` per stage; reading before
//!     the copy lands, refilling a stage still being read; then the ring in the byte histogram
//!     ([`lessons::histogram::histogram_pipeline`]) and the reduction
//!     ([`lessons::reduce::reduce_pipeline_sum_f32`]) (beyond the sources: Hopper).
//! 11. [`atomic`] again, [`block_scan`], then [`lessons::neighbor`] — neighbor lists: the
//!     book's O(N²) kernels with and without `atomicAdd`, the mistake of not using
//!     `atomicAdd`'s result as the slot, and an O(N) cell list (bin, scan, scatter, search)
//!     (CUDA book 9.3).
//! 12. [`access`], then [`lessons::litmus`] — litmus tests: the memory model tested on the GPU
//!     under stress, the sources' pitfalls among them; and [`sim::weak`], the simulator's weak
//!     memory, on which a missing fence fails without a GPU (beyond the sources).
//!
//! Every kernel is declared with [`kernel!`], listed once in `Kernel`, and says which source
//! it comes from.
//!
//! # Your own kernels
//!
//! A `no_std` crate of your own kernels depends on this crate (package `gridsync-gpu`, default
//! features) for the primitives only: gridsync's own kernels, their list `Kernel` and the
//! [`lessons`](#layout) are behind the feature `kernels`, off by default, so your PTX holds
//! your kernels alone. Start the crate with
//! `#![cfg_attr(target_arch = "nvptx64", no_std, feature(abi_ptx))]`, declare each kernel with
//! `gpu::kernel!`, build it with `gridsync-builder` and launch it with `gridsync::launch!` —
//! on a GPU, or on the simulator, which calls the same function on the host. The panic handler
//! the device needs is this crate's.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        asm_experimental_arch,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        core_intrinsics
    )
)]
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]
#![deny(missing_docs)]
// The docs guide a reader through gridsync's own kernels; built without them (feature
// `kernels` off, as in a crate of your own kernels) those links have nothing to point at.
#![cfg_attr(not(feature = "kernels"), allow(rustdoc::broken_intra_doc_links))]

#[macro_use]
mod kernel;
#[cfg(feature = "kernels")]
pub use kernel::Kernel;
pub use kernel::{Dim3, LaunchConfig};

pub mod primitives;
mod seam;
pub use primitives::{
    access, async_copy, atomic, block_reduce, block_scan, global, grid, index, lock, mem,
    multi_grid, readonly, shared, shared_atomic, sync, time, vector, warp,
};
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub use primitives::{cluster, mbarrier, pipeline};

#[cfg(feature = "kernels")]
pub mod lessons;

#[cfg(feature = "kernels")]
pub mod bench;
#[cfg(feature = "kernels")]
pub mod checks;

#[cfg(not(target_arch = "nvptx64"))]
pub mod sim;

/// A kernel that panics traps: the launch fails with `CUDA_ERROR_ILLEGAL_INSTRUCTION` and the
/// host sees an error. There is no unwinding on the device.
#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; it has no preconditions.
    unsafe { core::arch::nvptx::trap() }
}
