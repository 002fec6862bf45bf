//! (f) The single-pass reduction fed by a producer/consumer pipeline (sm_90): one thread of each
//! block streams the block's tiles into a ring of shared-memory stages with bulk copies; the
//! other warps reduce the stages that have landed; the last block finishes as in (d) and (e).

use super::last_block::{finish_in_last_block, last_block_shared_bytes};
use super::ops::{Element, Reduction};
use super::vec::combine_strided;
use crate::index::{block_dim_x, block_idx_x, thread_idx_x};
use crate::mem::Ptr;
use crate::pipeline::BulkRing;
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;
use crate::vector::Split16;
use crate::warp::WARP_SIZE;

/// Stages in the ring of the (f) kernels.
pub const REDUCE_PIPELINE_STAGES: usize = 4;

/// Bytes per stage: 8 KiB, two 16-byte vectors per consumer thread of a 256-consumer block.
pub const REDUCE_PIPELINE_STAGE_BYTES: u32 = 8 << 10;

/// Threads per block of the (f) kernels: one producer warp and eight consumer warps.
pub const REDUCE_PIPELINE_THREADS_PER_BLOCK: u32 = WARP_SIZE + 256;

/// Dynamic shared memory of the (f) kernel of accumulator `A` for blocks of `threads`: the
/// last block's scratch, then the ring.
pub const fn reduce_pipeline_shared_bytes<A>(threads: u32) -> u32 {
    last_block_shared_bytes::<A>(threads)
        + BulkRing::<REDUCE_PIPELINE_STAGES>::shared_bytes(REDUCE_PIPELINE_STAGE_BYTES)
}

/// (f)'s body. The producer (thread 0) starts the bulk copy of each of the block's tiles of
/// [`REDUCE_PIPELINE_STAGE_BYTES`] (tile `blockIdx.x`, then every `gridDim.x`-th) into the ring;
/// each consumer thread combines its vectors of a landed stage four at a time, as (e) does its
/// loads, and releases the stage itself after a proxy fence (one arrival per consumer thread).
/// Block 0's consumers
/// also take the scalar head and tail. Then every thread, the producer warp with the identity,
/// joins [`finish_in_last_block`]. A wait on a stage gives up past `timeout_ns` and sets a bit
/// of `err`.
///
/// # Safety
/// `x` holds `n` elements; `err` a zeroed `u32`; the rest as [`finish_in_last_block`], with
/// [`reduce_pipeline_shared_bytes`] of dynamic shared memory.
#[inline(always)]
unsafe fn pipeline_reduce<R: Reduction>(
    x: *const R::Item,
    n: u64,
    partials: *mut R::Acc,
    count: *mut u32,
    result: *mut R::Out,
    timeout_ns: u64,
    err: *mut u32,
) {
    let threads = block_dim_x();
    // SAFETY: the ring follows the last block's scratch, within the launch's shared memory;
    // every thread calls it; `err` is the launch's error word.
    let ring = unsafe {
        BulkRing::<REDUCE_PIPELINE_STAGES>::for_block(
            dynamic_shared::<u8>().add(last_block_shared_bytes::<R::Acc>(threads) as usize),
            REDUCE_PIPELINE_STAGE_BYTES,
            err,
        )
    };
    let Some(ring) = ring else { return };
    sync_threads(); // the ring's barriers are initialized before anyone uses them

    let x = Ptr::new(x.cast_mut());
    let split = Split16::<<R::Item as Element>::Vec16>::of(x.as_ptr(), n as usize);
    let body_bytes = split.body * 16;
    // SAFETY: `x + head` is 16-byte aligned; the body follows it.
    let body = unsafe { x.add(split.head) }.as_ptr().cast::<u8>();
    let mut acc = R::identity();

    if thread_idx_x() < WARP_SIZE {
        // PHASE: produce.
        // SAFETY: after the barrier; the body is 16-byte aligned, a multiple of 16 bytes,
        // read-only during the launch.
        unsafe { ring.produce_tiles(body, body_bytes, timeout_ns, err) };
    } else {
        // PHASE: consume.
        let me = (thread_idx_x() - WARP_SIZE) as usize;
        let consumers = (threads - WARP_SIZE) as usize;
        if block_idx_x() == 0 {
            let mut k = me;
            while k < split.scalars() {
                // SAFETY: `scalar_index(k) < n`.
                acc = R::combine(acc, R::lift(unsafe { x.add(split.scalar_index(k)).load() }));
                k += consumers;
            }
        }
        let read = |stage: *const u8, bytes: usize| {
            let stage = Ptr::new(stage.cast_mut()).cast::<<R::Item as Element>::Vec16>();
            // SAFETY (every load): `v < bytes / 16`, inside the landed stage.
            let load = |v: usize| unsafe { stage.add(v).load() };
            acc = combine_strided::<R>(acc, load, me, bytes / 16, consumers);
        };
        // SAFETY: after the barrier; the stage holds the tile's bytes while `read` runs.
        unsafe { ring.consume_tiles(body_bytes, timeout_ns, err, read) };
    }
    // The block reduction's scratch is another region than the ring: no ordering needed
    // between the two; `finish_in_last_block` has its own barriers.
    // SAFETY: forwarded; every thread of the block calls it once.
    unsafe { finish_in_last_block::<R>(acc, partials, count, result) }
}

macro_rules! pipeline_kernels {
    ($($(#[$doc:meta])* $name:ident: $r:ty;)*) => {$(
        kernel! {
            $(#[$doc])*
            ///
            /// Arguments: as [`reduce_vec_sum_f32`](super::reduce_vec_sum_f32), then
            /// `timeout_ns`, the bound of every wait on a stage (the host passes
            /// [`DEFAULT_TIMEOUT_NS`](crate::mbarrier::DEFAULT_TIMEOUT_NS), stretched under a
            /// sanitizer), and `err`, one zeroed `u32` ([`error_bits`](crate::pipeline::error_bits):
            /// a set bit means no result — a wait that timed out among them). Blocks of
            /// at least two whole warps ([`REDUCE_PIPELINE_THREADS_PER_BLOCK`]); dynamic shared
            /// memory [`reduce_pipeline_shared_bytes`]`::<Acc>(blockDim.x)`.
            pub unsafe fn $name(
                x: *const <$r as Reduction>::Item,
                n: u64,
                partials: *mut <$r as Reduction>::Acc,
                count: *mut u32,
                result: *mut <$r as Reduction>::Out,
                timeout_ns: u64,
                err: *mut u32,
            ) {
                // SAFETY: forwarded to the launch's contract.
                unsafe { pipeline_reduce::<$r>(x, n, partials, count, result, timeout_ns, err) }
            }
        }
    )*};
}

pipeline_kernels! {
    /// Σ `f32` in `f32`: (e) fed by a pipeline of bulk copies (sm_90).
    ///
    /// What changed from (e): the threads that add no longer load. One thread per block starts
    /// a bulk copy of each 8 KiB tile into a ring of four shared-memory stages, each guarded by
    /// a full `mbarrier` (the copy's bytes complete it) and an empty one (the consumer warps
    /// arrive when they have read it); eight warps add the landed stages. The bytes in flight
    /// are the copy engine's, three tiles per block, whatever the adding threads' registers.
    /// The order of additions depends on the launch shape only: deterministic, like (e).
    reduce_pipeline_sum_f32: super::ops::SumF32;
    /// Σ `f32` accumulated in `f64`, fed by the pipeline.
    reduce_pipeline_sum_f32_in_f64: super::ops::SumF32InF64;
    /// Σ `f32` with Neumaier-compensated `f32` accumulators, fed by the pipeline.
    reduce_pipeline_sum_f32_kahan: super::ops::SumF32Kahan;
}
