// The sm_90 ring the pipeline twins share (histogram.cu's histogram_pipeline, reduce_pipeline.cu's
// reduce_pipeline_sum_*): gridsync's BulkRing<STAGES> (gpu/src/primitives/pipeline.rs: for_block,
// produce_tiles, consume_tiles, produce, drain), its waits MBarrier::wait_parity
// (gpu/src/primitives/mbarrier.rs), over one function per PTX instruction, each the string
// gridsync's seam writes (gpu/src/seam/ptx/mbarrier.rs, async_copy.rs).
//
// The ring, in the block's shared memory: STAGES full barriers, STAGES empty barriers (8 bytes
// each), then STAGES stages of stage_bytes. Warp 0 is the producer: its lane 0 streams the
// block's tiles — tile blockIdx.x, then every gridDim.x-th — into the stages. Fill k goes to
// stage k mod STAGES and is that stage's (k / STAGES)-th phase, so every parity is
// (k / STAGES) & 1. Full counts 1 arrival (the producer's arrive.expect_tx of the tile's bytes)
// and the bytes the bulk copy completes on it; empty counts one arrival per consumer thread.
// From the second round the producer first waits on the stage's empty barrier (the parity of
// the previous round); after its last fill it drains the last STAGES fills, so that no copy
// lands in the shared memory of an exited block. The other warps consume: each waits on the
// fill's full barrier, votes so that one lane's timeout ends the whole warp's loop, reads the
// stage, fences its reads against the copy engine's next writes and arrives on the empty
// barrier. Every wait is bounded: try_wait.parity polled until %globaltimer has moved
// timeout_ns, a stall setting TIMED_OUT in the error word; a launch shape that cannot hold the
// ring sets BAD_LAUNCH.
//
// Written with inline PTX (`asm volatile` with a memory clobber: Rust's asm! without `nomem`
// clobbers memory); the error word through libcu++'s atomic_ref, as gridsync's
// `atom.relaxed.gpu.or.b32`.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda/atomic>

#include "device.cuh"

namespace twin {

// async_copy.rs's BULK_MAX_BYTES and mbarrier.rs's MAX_COUNT: what one phase can count.
constexpr unsigned BULK_MAX_BYTES = ((1u << 20) - 1) & ~15u;
constexpr unsigned MBARRIER_MAX_COUNT = (1u << 20) - 1;
// pipeline::error_bits.
constexpr unsigned TIMED_OUT = 1, BAD_LAUNCH = 2;
// mbarrier::DEFAULT_TIMEOUT_NS: the bound of every wait on a stage (what the hosts pass).
constexpr unsigned long long DEFAULT_TIMEOUT_NS = 1000000000ull;

// ---- mbarrier and bulk copy, one function per instruction ------------------------------------

// PipelineError::record: sets `bit` in the launch's error word.
// Scope: device. Ordering: relaxed (a flag read after the launch, ordering nothing).
// CUDA: atomicOr. PTX: `atom.relaxed.gpu.or.b32`.
__device__ __forceinline__ void record(unsigned* err, unsigned bit) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*err).fetch_or(
        bit, cuda::memory_order_relaxed);
}

// This thread's generic-proxy accesses to shared memory before the async proxy's after it: a
// barrier's initialization before the copy engine completes bytes on it, a consumer's reads of
// a stage before the next copy into it. Not a barrier: it orders this thread's accesses only.
// Scope: block. PTX: `fence.proxy.async.shared::cta` (sm_90).
__device__ __forceinline__ void fence_proxy_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// The barrier at shared address `bar`, expecting `count` arrivals per phase, in phase 0.
// PTX: `mbarrier.init.shared::cta.b64` (sm_80).
__device__ __forceinline__ void mbarrier_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// One arrival. Scope: block. Ordering: release (this thread's accesses before it happen before
// the phase's acquiring waiters go on). PTX: `mbarrier.arrive.release.cta.shared::cta.b64`
// (sm_90). The token goes to a register of the asm's own: these arrivals are waited on by
// parity (gridsync drops it too: `let _ = … .arrive(…)`).
__device__ __forceinline__ void mbarrier_arrive(unsigned bar) {
    asm volatile(
        "{ .reg .b64 state; mbarrier.arrive.release.cta.shared::cta.b64 state, [%0], %1; }"
        ::"r"(bar), "r"(1u) : "memory");
}

// One arrival that also expects `bytes` more of the phase's transactions (a bulk copy's).
// Scope: block. Ordering: release. PTX: `mbarrier.arrive.expect_tx.release.cta.shared::cta.b64`
// (sm_90).
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile(
        "{ .reg .b64 state; "
        "mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 state, [%0], %1; }"
        ::"r"(bar), "r"(bytes) : "memory");
}

// One poll: true once the phase of parity `parity` has completed. Scope: block. Ordering:
// acquire (on true). PTX: `mbarrier.try_wait.parity.acquire.cta.shared::cta.b64` (sm_90); it
// may suspend the thread for a while before it answers false.
__device__ __forceinline__ bool mbarrier_try_wait_parity(unsigned bar, unsigned parity) {
    unsigned done;
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2; "
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    return done != 0;
}

// MBarrier::wait_parity (the `bounded` loop): one poll, then polls until done or until
// timeout_ns have passed on the global timer. False: timed out. Without the bound a lost fill
// would hang the launch instead of setting TIMED_OUT.
__device__ __forceinline__ bool wait_parity(unsigned bar, unsigned parity, uint64_t timeout_ns) {
    if (mbarrier_try_wait_parity(bar, parity)) return true;
    uint64_t start = globaltimer_ns();
    for (;;) {
        if (mbarrier_try_wait_parity(bar, parity)) return true;
        if (globaltimer_ns() - start > timeout_ns) return false;
    }
}

// The copy engine moves `bytes` (a multiple of 16, both ends 16-byte aligned) from global `src`
// to shared `dst` and completes them on the barrier `bar`.
// PTX: `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes` (sm_90).
__device__ __forceinline__ void cp_async_bulk(unsigned dst, const void* src, unsigned bytes,
                                              unsigned bar) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
        ::"r"(dst), "l"(__cvta_generic_to_global(src)), "r"(bytes), "r"(bar) : "memory");
}

// ---- BulkRing<STAGES> --------------------------------------------------------------------------

// A ring of STAGES stages of stage_bytes at base (see the header).
template <unsigned STAGES>
struct BulkRing {
    // STAGES full and STAGES empty barriers: the stages start 16-byte aligned after them.
    static constexpr unsigned BARRIER_BYTES = 16 * STAGES;

    unsigned char* base;
    unsigned stage_bytes;

    // The shared memory a ring of stages of `stage` bytes takes.
    __host__ __device__ static constexpr unsigned shared_bytes(unsigned stage) {
        return BARRIER_BYTES + STAGES * stage;
    }

    __device__ __forceinline__ unsigned full(unsigned s) const {
        return shared_address(reinterpret_cast<uint64_t*>(base) + s);
    }
    __device__ __forceinline__ unsigned empty(unsigned s) const {
        return shared_address(reinterpret_cast<uint64_t*>(base) + STAGES + s);
    }
    __device__ __forceinline__ unsigned char* stage(unsigned s) const {
        return base + BARRIER_BYTES + size_t(s) * stage_bytes;
    }

    // for_block: false (BAD_LAUNCH recorded by thread 0) if the block is not two or more whole
    // warps or the ring cannot be made; else thread 0 initializes every stage's barriers — full
    // for 1 arrival, empty for one per consumer thread — and fences them for the copy engine.
    // Every thread gets the same answer. A __syncthreads must follow before any use.
    __device__ __forceinline__ bool for_block(unsigned* err) const {
        unsigned threads = blockDim.x;
        bool bad = threads < 2 * WARP_SIZE || threads % WARP_SIZE != 0 || stage_bytes == 0 ||
                   stage_bytes % 16 != 0 || stage_bytes > BULK_MAX_BYTES ||
                   reinterpret_cast<uintptr_t>(base) % 16 != 0;
        if (bad) {
            if (threadIdx.x == 0) record(err, BAD_LAUNCH);
            return false;
        }
        if (threadIdx.x == 0) {
            unsigned consumers = threads - WARP_SIZE;
            consumers = consumers < 1 ? 1
                        : consumers > MBARRIER_MAX_COUNT ? MBARRIER_MAX_COUNT
                                                         : consumers;
            for (unsigned s = 0; s < STAGES; ++s) {
                mbarrier_init(full(s), 1);
                mbarrier_init(empty(s), consumers);
            }
            fence_proxy_async_shared();  // the copy engine completes bytes on the full barriers
        }
        return true;
    }

    // produce: fill k — from the second round, wait for the consumers' release of the stage's
    // previous fill; then arrive.expect_tx and the bulk copy, or (a refused copy) a plain
    // arrival so that no consumer waits for it. Returns 0 or an error bit.
    __device__ __forceinline__ unsigned produce(unsigned k, const unsigned char* src,
                                                unsigned bytes, uint64_t timeout_ns) const {
        unsigned s = k % STAGES, round = k / STAGES;
        if (round > 0 && !wait_parity(empty(s), (round - 1) & 1, timeout_ns)) return TIMED_OUT;
        unsigned char* dst = stage(s);
        bool ok = bytes <= stage_bytes &&
                  ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) % 16) ==
                      0 &&
                  bytes != 0 && bytes % 16 == 0 && bytes <= BULK_MAX_BYTES;
        if (ok) {
            mbarrier_arrive_expect_tx(full(s), bytes);
            cp_async_bulk(shared_address(dst), src, bytes, full(s));
            return 0;
        }
        mbarrier_arrive(full(s));
        return BAD_LAUNCH;
    }

    // drain: waits for the last min(fills, STAGES) fills to land (the earlier ones landed
    // before their stages were refilled).
    __device__ __forceinline__ unsigned drain(unsigned fills, uint64_t timeout_ns) const {
        unsigned result = 0;
        for (unsigned k = fills > STAGES ? fills - STAGES : 0; k < fills; ++k)
            if (!wait_parity(full(k % STAGES), (k / STAGES) & 1, timeout_ns)) result = TIMED_OUT;
        return result;
    }

    // produce_tiles, every lane of warp 0: lane 0 fills the ring with this block's tiles of
    // src[..bytes] (tile blockIdx.x, then every gridDim.x-th), then drains it; the warp meets
    // at the end.
    __device__ __forceinline__ void produce_tiles(const unsigned char* src, size_t bytes,
                                                  uint64_t timeout_ns, unsigned* err) const {
        if (lane_id() == 0) {
            size_t stage = stage_bytes;
            size_t tiles = (bytes + stage - 1) / stage;
            unsigned k = 0;
            size_t tile = blockIdx.x;
            while (tile < tiles) {
                size_t left = bytes - tile * stage;
                unsigned len = unsigned(left < stage ? left : stage);
                unsigned e = produce(k, src + tile * stage, len, timeout_ns);
                if (e) {
                    record(err, e);
                    break;
                }
                k += 1;
                tile += gridDim.x;
            }
            unsigned e = drain(k, timeout_ns);
            if (e) record(err, e);
        }
        __syncwarp(FULL_MASK);
    }

    // consume_tiles, every thread of the consumer warps: for each of this block's tiles, wait
    // for it to land (a timeout in any lane ends the warp's loop), read(stage, tile_bytes), fence
    // the reads against the copy engine's next writes, and release the stage — one arrival per
    // thread.
    template <class Read>
    __device__ __forceinline__ void consume_tiles(size_t bytes, uint64_t timeout_ns, unsigned* err,
                                                  Read read) const {
        size_t stage = stage_bytes;
        size_t tiles = (bytes + stage - 1) / stage;
        unsigned k = 0;
        size_t tile = blockIdx.x;
        while (tile < tiles) {
            unsigned s = k % STAGES;
            bool landed = wait_parity(full(s), (k / STAGES) & 1, timeout_ns);
            if (__ballot_sync(FULL_MASK, !landed) != 0) {
                if (!landed) record(err, TIMED_OUT);
                break;
            }
            size_t left = bytes - tile * stage;
            read(static_cast<const unsigned char*>(this->stage(s)), left < stage ? left : stage);
            // This thread's reads of the stage (generic proxy) before the copy engine's next
            // writes into it (async proxy), then its own arrival.
            fence_proxy_async_shared();
            mbarrier_arrive(empty(s));
            k += 1;
            tile += gridDim.x;
        }
    }
};

}  // namespace twin
