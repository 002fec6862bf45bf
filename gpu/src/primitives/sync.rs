//! Barriers and memory fences.
//!
//! The two are different things, and most synchronization bugs come from mixing them up:
//!
//! - a **barrier** ([`sync_threads`]) makes threads *wait* for each other: no thread of the block
//!   passes it until all have reached it. It also orders their memory accesses at block scope.
//! - a **fence** ([`threadfence`] and friends) makes nobody wait. It only orders *this thread's*
//!   own memory accesses: writes before the fence become visible, to observers in the fence's
//!   scope, before writes after it. A fence is how a block publishes data and then a flag; the
//!   reader still has to wait for the flag itself.

use crate::atomic::Scope;

/// Waits until every thread of the block has reached this point; memory accesses before it are
/// visible to the whole block after it.
///
/// Scope: block. Ordering: acts as a block-scope acquire-release fence for the block's threads.
/// CUDA: `__syncthreads()`. PTX: `bar.sync 0`.
///
/// Not a grid barrier: other blocks do not wait. Every thread of the block must reach the same
/// call (threads that have exited count as arrived); in a branch only some threads take, the
/// others never arrive and the block deadlocks.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads() {
    // SAFETY: `bar.sync 0` is the block barrier; the caller keeps the call uniform (above).
    unsafe { crate::seam::sync::bar_sync() }
}

/// [`sync_threads`] that also tells every thread whether *any* thread of the block arrived with
/// `predicate` true: a block-wide vote and a barrier in one instruction.
///
/// Scope: block. Ordering: as [`sync_threads`]. CUDA: `__syncthreads_or(predicate)`.
/// PTX: `bar.red.or.pred p, 0, q`.
///
/// How one thread's finding reaches its whole block without a shared-memory slot and a second
/// barrier: the grid barrier uses it to hand thread 0's timeout to every thread. The same
/// uniformity rule as [`sync_threads`] applies.
#[inline(always)]
#[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
pub fn sync_threads_or(predicate: bool) -> bool {
    // SAFETY: `bar.red.or.pred` is the block barrier with an OR reduction of one predicate per
    // thread; the caller keeps the call uniform (above).
    unsafe { crate::seam::sync::bar_red_or(predicate) }
}

macro_rules! fence_fn {
    ($(#[$doc:meta])* $name:ident, $seam:ident) => {
        $(#[$doc])*
        #[inline(always)]
        pub fn $name() {
            crate::seam::sync::$seam()
        }
    };
}

fence_fn!(
    /// Orders this thread's memory accesses as seen by the threads of its block.
    ///
    /// Scope: block. Ordering: sequentially consistent fence. CUDA: `__threadfence_block()`.
    /// PTX: `membar.cta` (the same as `fence.sc.cta` on sm_70+).
    ///
    /// A fence, not a barrier: no thread waits.
    threadfence_block, membar_cta
);
fence_fn!(
    /// Orders this thread's memory accesses as seen by every thread of the GPU.
    ///
    /// Scope: device. Ordering: sequentially consistent fence. CUDA: `__threadfence()`.
    /// PTX: `membar.gl` (the same as `fence.sc.gpu` on sm_70+).
    ///
    /// A fence, not a barrier: no thread waits. Without it, a block that writes a partial sum
    /// and then raises a flag (or releases a lock) can have the flag seen first, and the reader
    /// sums a stale value.
    threadfence, membar_gl
);
fence_fn!(
    /// Orders this thread's memory accesses as seen by the GPU, other GPUs and the host.
    ///
    /// Scope: system. Ordering: sequentially consistent fence. CUDA: `__threadfence_system()`.
    /// PTX: `membar.sys` (the same as `fence.sc.sys` on sm_70+). The most expensive fence; use it
    /// only when the host or a peer GPU reads the data while the kernel runs.
    threadfence_system, membar_sys
);
fence_fn!(
    /// Acquire-release fence at block scope. PTX: `fence.acq_rel.cta`. Cheaper than
    /// [`threadfence_block`]; enough to pair with a relaxed flag in the release/acquire pattern.
    fence_acq_rel_block, fence_acq_rel_cta
);
fence_fn!(
    /// Acquire-release fence at device scope. PTX: `fence.acq_rel.gpu`. The fence to pair with a
    /// relaxed flag or lock word shared between blocks.
    fence_acq_rel_device, fence_acq_rel_gpu
);
fence_fn!(
    /// Acquire-release fence at system scope. PTX: `fence.acq_rel.sys`.
    fence_acq_rel_system, fence_acq_rel_sys
);
fence_fn!(
    /// Sequentially consistent fence at block scope. PTX: `fence.sc.cta`.
    fence_sc_block, fence_sc_cta
);
fence_fn!(
    /// Sequentially consistent fence at device scope. PTX: `fence.sc.gpu`.
    fence_sc_device, fence_sc_gpu
);
fence_fn!(
    /// Sequentially consistent fence at system scope. PTX: `fence.sc.sys`.
    fence_sc_system, fence_sc_sys
);

/// Acquire-release fence at `scope`: [`fence_acq_rel_block`], [`fence_acq_rel_device`] or
/// [`fence_acq_rel_system`]. With a constant `scope` this folds to one instruction.
#[inline(always)]
pub fn fence_acq_rel(scope: Scope) {
    match scope {
        Scope::Block => fence_acq_rel_block(),
        Scope::Device => fence_acq_rel_device(),
        Scope::System => fence_acq_rel_system(),
    }
}

/// Sequentially consistent fence at `scope`: [`fence_sc_block`], [`fence_sc_device`] or
/// [`fence_sc_system`].
#[inline(always)]
pub fn fence_sc(scope: Scope) {
    match scope {
        Scope::Block => fence_sc_block(),
        Scope::Device => fence_sc_device(),
        Scope::System => fence_sc_system(),
    }
}
