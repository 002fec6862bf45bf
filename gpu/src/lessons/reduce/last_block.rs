//! (d) The single-pass reduction finished by the last block: no float atomics, so the same input
//! and launch shape give the same bits on every run.
//!
//! The story, as NVIDIA's `threadFenceReduction` sample tells it. Every block reduces its share
//! and writes its partial result to `partials[blockIdx.x]`. Then it **takes a ticket**: an atomic
//! increment of a counter, which returns how many blocks took one before it. The block that
//! draws the last ticket (`gridDim.x - 1`) knows every other block has written its partial — so
//! it reads them all, combines them in block order, writes the result and resets the counter for
//! the next launch. No block waits for another: there is no spinning and no deadlock, whatever
//! the grid and however many blocks are resident at once.
//!
//! Two fences make "has written" mean "can be read":
//! - before taking its ticket, a block's thread 0 executes [`threadfence`] (`membar.gl`): its
//!   write of the partial becomes visible to the whole GPU before its ticket does. Without it the
//!   increment can overtake the write, and the last block sums a stale partial;
//! - the thread of the last block that drew its ticket executes an acquire fence
//!   ([`fence_acq_rel_device`], `fence.acq_rel.gpu`) right after it: the ticket it read and the
//!   fence make every block's fenced partial visible to it (and drop any stale L1 line of the
//!   SM); the block barrier that follows passes that on to the block's other threads, which then
//!   read the partials.
//!
//! The combining order is the grid-stride order of each thread, then the block's fixed tree,
//! then, in the last block, partial `t`, `t + blockDim.x`, … per thread and the tree again: it
//! depends on the launch shape and the input's alignment only. Floating-point results are
//! therefore bit-identical across runs of one shape; a different grid (another GPU) may round
//! differently.

use super::ops::Reduction;
use crate::atomic::{Order, Scope, StoreOrder, fetch_inc, store};
use crate::block_reduce::{block_reduce, block_reduce_shared_bytes};
use crate::index::{block_dim_x, block_idx_x, grid_dim_x, grid_stride, thread_idx_x};
use crate::mem::Ptr;
use crate::shared::dynamic_shared;
use crate::sync::{fence_acq_rel_device, sync_threads, threadfence};

/// Bytes of dynamic shared memory [`finish_in_last_block`] needs for a block of `threads`:
/// the block reduction's scratch (one accumulator per warp), rounded up to 16, then 16 bytes
/// holding the "this block is last" flag.
pub const fn last_block_shared_bytes<A>(threads: u32) -> u32 {
    flag_offset::<A>(threads) + 16
}

const fn flag_offset<A>(threads: u32) -> u32 {
    block_reduce_shared_bytes::<A>(threads).next_multiple_of(16)
}

/// Reduces `mine` over the block, publishes the block's accumulator, and — in the block that
/// finishes last — combines every block's and writes `R::finish` of it to `*result`.
///
/// Contract: every thread of the block calls it, once, at the end of the kernel. The result is
/// written once per launch, by thread 0 of the last block; the counter is 0 again afterwards.
///
/// Scope: device (the ticket, both fences). Ordering: partial → `threadfence` → relaxed ticket
/// in every block; ticket → acquire fence → block barrier → reads in the last block. CUDA: the
/// `threadFenceReduction` sample's `__threadfence(); ticket = atomicInc(&retirementCount,
/// gridDim.x);`. PTX: `membar.gl`, `atom.relaxed.gpu.inc.u32`, `fence.acq_rel.gpu`, `bar.sync`,
/// and `st.relaxed.gpu.b32` for the reset. Not a grid barrier: no block waits for another.
///
/// # Safety
/// - `partials` has room for `gridDim.x` accumulators, and nothing else touches it meanwhile;
/// - `count` is a `u32` that is 0 when the launch starts, touched by nothing else meanwhile;
/// - `result` is valid for one write;
/// - the launch gave [`last_block_shared_bytes::<R::Acc>`] bytes of dynamic shared memory.
// ANCHOR: finish_in_last_block
#[inline(always)]
pub unsafe fn finish_in_last_block<R: Reduction>(
    mine: R::Acc,
    partials: *mut R::Acc,
    count: *mut u32,
    result: *mut R::Out,
) {
    let (partials, result) = (Ptr::new(partials), Ptr::new(result));
    let tid = thread_idx_x();
    let blocks = grid_dim_x();
    // SAFETY: the flag lies inside the launch's dynamic shared memory, after the scratch.
    let am_last = Ptr::new(unsafe {
        dynamic_shared::<u8>().add(flag_offset::<R::Acc>(block_dim_x()) as usize)
    })
    .cast::<u32>();

    // PHASE 1: this block's accumulator, written to its slot; then the ticket.
    // SAFETY: the scratch is the start of the dynamic shared memory (the caller's launch).
    let block_acc = unsafe { block_reduce(mine, R::identity(), R::combine) };
    if tid == 0 {
        // SAFETY: one slot per block, `blockIdx.x < gridDim.x`.
        unsafe { partials.add(block_idx_x() as usize).store(block_acc) };
        // Make the partial visible to every block before taking the ticket that says it is.
        threadfence();
        // `atomicInc(count, gridDim.x)`: tickets 0, 1, …, gridDim.x - 1, one per block.
        // SAFETY: `count` is touched only atomically during the launch.
        let ticket = unsafe { fetch_inc(count, blocks, Scope::Device, Order::Relaxed) };
        let last = ticket == blocks - 1;
        if last {
            // Acquire: every other block fenced its partial before its ticket, and this ticket
            // came after all of theirs; the barrier below extends this to the whole block.
            fence_acq_rel_device();
        }
        // SAFETY: the flag is this block's; the barrier below publishes it to the block.
        unsafe { am_last.store(last as u32) };
    }
    sync_threads();
    // SAFETY: written by thread 0 before the barrier; read-only until the kernel ends.
    if unsafe { am_last.load() } == 0 {
        return;
    }

    // PHASE 2: the last block. Every partial is visible (the acquire above, then the barrier).
    let mut acc = R::identity();
    let mut i = tid;
    while i < blocks {
        // SAFETY: `i < gridDim.x`; written by block `i` before its ticket (above).
        acc = R::combine(acc, unsafe { partials.add(i as usize).load() });
        i += block_dim_x();
    }
    // The barrier after the flag ordered the first reduction's scratch reads before this one.
    // SAFETY: as in phase 1.
    let total = unsafe { block_reduce(acc, R::identity(), R::combine) };
    if tid == 0 {
        // SAFETY: one write of the result; `count` is touched only atomically. Every block has
        // taken its ticket, so the reset is the counter's last change in this launch.
        unsafe {
            result.store(R::finish(total));
            store(count, 0, Scope::Device, StoreOrder::Relaxed);
        }
    }
}
// ANCHOR_END: finish_in_last_block

/// (d)'s body: a grid-stride loop of scalar loads, then [`finish_in_last_block`].
///
/// # Safety
/// `x` holds `n` elements; the rest as [`finish_in_last_block`].
#[inline(always)]
unsafe fn last_block<R: Reduction>(
    x: *const R::Item,
    n: u64,
    partials: *mut R::Acc,
    count: *mut u32,
    result: *mut R::Out,
) {
    let x = Ptr::new(x.cast_mut());
    let mut acc = R::identity();
    for i in grid_stride(n as usize) {
        // SAFETY: `i < n`.
        acc = R::combine(acc, R::lift(unsafe { x.add(i).load() }));
    }
    // SAFETY: forwarded.
    unsafe { finish_in_last_block::<R>(acc, partials, count, result) }
}

macro_rules! last_block_kernels {
    ($($(#[$doc:meta])* $name:ident: $r:ty;)*) => {$(
        kernel! {
            $(#[$doc])*
            ///
            /// Arguments: `x` holds `n` elements; `partials` room for `gridDim.x` accumulators;
            /// `count` a `u32`, 0 before the first launch (each launch leaves it 0); `result`
            /// one value. Dynamic shared memory: `last_block_shared_bytes::<Acc>(blockDim.x)`;
            /// any grid, any block size.
            pub unsafe fn $name(
                x: *const <$r as Reduction>::Item,
                n: u64,
                partials: *mut <$r as Reduction>::Acc,
                count: *mut u32,
                result: *mut <$r as Reduction>::Out,
            ) {
                // SAFETY: forwarded to the launch's contract.
                unsafe { last_block::<$r>(x, n, partials, count, result) }
            }
        }
    )*};
}

last_block_kernels! {
    /// Σ `f32` in `f32` registers, single pass, finished by the last block.
    ///
    /// What changed from [`reduce_warp`](super::reduce_warp): no `atomicAdd` on the result. Each
    /// block writes its sum to `partials`, fences, takes a ticket; the last block adds the
    /// partials in block order (the [`last_block`](super::last_block) module docs tell the story). Same speed — one
    /// partial per block either way — and now the same bits on every run.
    reduce_last_block_sum_f32: super::ops::SumF32;
    /// [`reduce_last_block_sum_f32`] accumulating in `f64`: every element converted (exactly)
    /// and every addition in `f64`; the result is an `f64`.
    reduce_last_block_sum_f32_in_f64: super::ops::SumF32InF64;
    /// [`reduce_last_block_sum_f32`] with Neumaier-compensated `f32` accumulators
    /// ([`Neumaier`](super::ops::Neumaier)): `f32` registers, nearly `f64` accuracy.
    reduce_last_block_sum_f32_kahan: super::ops::SumF32Kahan;
}
