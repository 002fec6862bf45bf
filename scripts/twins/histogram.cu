// The nvcc twin of `gridsync bench histogram` on its uniform random bytes (1 GiB, 128 bins, the
// bench's defaults), for the two kernels the library picks from (host/histogram/api.rs,
// fastest_kernel): `histogram_pipeline` — the library's kernel on sm_90 from 16 MiB, so the
// one the bench reports as gridsync's at 1 GiB on an H100/H200 — and `histogram_vec16`, its
// kernel below 16 MiB or before sm_90. The bench times both (it times every kernel on every
// input); run.sh compares each with its row.
//
// histogram_vec16 (gpu/src/lessons/histogram/warp.rs; load.rs for Split16, for_each_strided_byte
// and its interleaved bytes_of_four): a histogram per warp of 256 u32 bins in shared memory,
// zeroed, a barrier; the scalar head and tail one byte at a time, then the body's 16-byte loads
// four per step, issued before any byte is counted and counted interleaved (byte 0 of each
// load, then byte 1, …); each byte a `red.relaxed.cta.shared.add.u32` of 1 (ATOMS.POPC.INC);
// a barrier; thread t sums bin t over the warps in u64 and adds a non-zero sum to the global
// bin (relaxed, device scope). Blocks of 256, one full wave over len / 16 vectors, at most a
// block per 40 KiB (host/histogram/mod.rs, config_for), 8 KiB of dynamic shared memory.
//
// histogram_pipeline (gpu/src/lessons/histogram/pipeline.rs; the ring is BulkRing of
// gpu/src/primitives/pipeline.rs, its waits MBarrier::wait_parity of mbarrier.rs): 32 × 256
// u32 counters, one column per lane index, then a ring of 4 stages of 16 KiB behind 8
// mbarriers (full: count 1 and the copy's bytes; empty: count = consumer threads). Warp 0's
// lane 0 produces — tile blockIdx.x, then every gridDim.x-th, of the 16-byte-aligned body, each
// a cp.async.bulk into the next stage after an arrive.expect_tx, waiting on the stage's empty
// barrier from the second round — and drains its last fills; warps 1–16 consume — block 0's
// consumers count the head and tail from global memory; every consumer waits on the stage's
// full barrier, counts its 16-byte vectors of the stage (me, me + 512, …; four per step as in
// vec16) into word 32·byte + lane, fences the async proxy and arrives on the empty barrier.
// Every wait is bounded by timeout_ns on %globaltimer (1 s, what the host passes), a stall
// setting a bit of the error word. Then a barrier and the fold: thread t sums value t's 32
// columns (starting at column t mod 32) and adds a non-zero sum to the global bin. Blocks of
// 17 warps, one full wave (2 per SM for 96 KiB of shared memory), at most a block per tile.
//
// Input: gridsync's uniform_bytes(len, 0x686973746f677261) (bandwidth.cuh). One launch per
// measurement; bins and error word zeroed before it (untimed); every trial's 128 bins must
// equal the CPU's exactly and the error word stay 0.
//
//   nvcc -O3 -arch=sm_90 -lineinfo -o histogram histogram.cu
//   ./histogram pipeline|vec16|global|shared [BYTES] [TRIALS] [BLOCKS]
//
// The source's kernels (gpu/src/lessons/histogram/source.rs), on the same input: histogram_global
// (example 4.3: one device atomicAdd per byte below the bins) and histogram_shared (4.4: a u64
// histogram per block in shared memory with block-scope atomics, then one device atomic per
// non-zero bin per block); blocks of 128, on gridsync's grid (BLOCKS, which run.sh passes).
#include <cstring>

#include "bandwidth.cuh"
#include "device.cuh"

using namespace twin;

// gridsync's RANDOM_SEED and the bench's large size and bins.
constexpr uint64_t RANDOM_SEED = 0x686973746f677261ull;
constexpr size_t LARGE_BYTES = size_t(1) << 30;
constexpr unsigned BINS = 128;
constexpr size_t BYTES16 = 16;
constexpr int LOADS_IN_FLIGHT = 4;

// ---- The byte loop both kernels share (load.rs) ----------------------------------------------

template <class F>
__device__ __forceinline__ void bytes_of(unsigned word, F& f) {
    f(word & 0xff);
    f((word >> 8) & 0xff);
    f((word >> 16) & 0xff);
    f(word >> 24);
}

// The 64 bytes of four loads, interleaved: byte 0 of each load, then byte 1 of each, …
template <class F>
__device__ __forceinline__ void bytes_of_four(uint4 a, uint4 b, uint4 c, uint4 d, F& f) {
#define TWIN_BYTE(k, shift)            \
    f((a.k >> shift) & 0xff);          \
    f((b.k >> shift) & 0xff);          \
    f((c.k >> shift) & 0xff);          \
    f((d.k >> shift) & 0xff);
#define TWIN_WORD(k)   \
    TWIN_BYTE(k, 0)    \
    TWIN_BYTE(k, 8)    \
    TWIN_BYTE(k, 16)   \
    TWIN_BYTE(k, 24)
    TWIN_WORD(x)
    TWIN_WORD(y)
    TWIN_WORD(z)
    TWIN_WORD(w)
#undef TWIN_WORD
#undef TWIN_BYTE
}

// f(byte) for every byte of p[start], p[start + stride], … below end, four loads at a time.
template <class F>
__device__ __forceinline__ void for_each_strided_byte(const uint4* p, size_t start, size_t end,
                                                      size_t stride, F f) {
    size_t v = start;
    while (v + (LOADS_IN_FLIGHT - 1) * stride < end) {
        uint4 a = p[v], b = p[v + stride];
        uint4 c = p[v + 2 * stride], d = p[v + 3 * stride];
        bytes_of_four(a, b, c, d, f);
        v += LOADS_IN_FLIGHT * stride;
    }
    while (v < end) {
        uint4 a = p[v];
        bytes_of(a.x, f);
        bytes_of(a.y, f);
        bytes_of(a.z, f);
        bytes_of(a.w, f);
        v += stride;
    }
}

// ---- histogram_vec16 (warp.rs) ----------------------------------------------------------------

constexpr unsigned WARP_THREADS_PER_BLOCK = 256;
constexpr unsigned WARP_BINS = 256;
constexpr size_t VEC16_MIN_BYTES_PER_BLOCK = 40 << 10;

constexpr unsigned warp_shared_bytes(unsigned threads) {
    return (threads + WARP_SIZE - 1) / WARP_SIZE * WARP_BINS * 4;
}

__global__ void histogram_vec16(const unsigned char* arr, unsigned long long len,
                                unsigned long long* histo, unsigned bins) {
    // PHASE 1: zero the block's per-warp histograms.
    unsigned* s_hist = dynamic_shared<unsigned>();
    unsigned words = (blockDim.x + WARP_SIZE - 1) / WARP_SIZE * WARP_BINS;
    for (unsigned k = threadIdx.x; k < words; k += blockDim.x) s_hist[k] = 0;
    __syncthreads();  // every bin is zero before any warp counts into it
    unsigned warp = threadIdx.x / WARP_SIZE;
    unsigned s_warp = shared_address(s_hist) + warp * WARP_BINS * 4;
    auto count = [&](unsigned byte) { red_add_block_shared(s_warp + byte * 4, 1); };

    Split16<unsigned char> split(arr, len);
    for (size_t k = global_id_x(); k < split.scalars(); k += threads_per_grid_x())
        count(arr[split.scalar_index(k)]);
    for_each_strided_byte(reinterpret_cast<const uint4*>(arr + split.head), global_id_x(),
                          split.body, threads_per_grid_x(), count);

    // PHASE 2: the flush.
    __syncthreads();  // every count is in before any thread sums
    unsigned warps = (blockDim.x + WARP_SIZE - 1) / WARP_SIZE;
    unsigned top = bins < WARP_BINS ? bins : WARP_BINS;
    for (unsigned bin = threadIdx.x; bin < top; bin += blockDim.x) {
        unsigned long long total = 0;
        for (unsigned w = 0; w < warps; ++w) total += s_hist[w * WARP_BINS + bin];
        if (total != 0) atomic_add_device(histo + bin, total);
    }
}

// ---- histogram_pipeline (pipeline.rs, BulkRing) -----------------------------------------------

constexpr int PIPELINE_STAGES = 4;
constexpr unsigned PIPELINE_STAGE_BYTES = 16 << 10;
constexpr unsigned PIPELINE_THREADS_PER_BLOCK = 17 * WARP_SIZE;
constexpr unsigned PIPELINE_COLUMNS = WARP_SIZE;
constexpr unsigned COUNTER_BYTES = 256 * PIPELINE_COLUMNS * 4;
constexpr unsigned BARRIER_BYTES = 16 * PIPELINE_STAGES;
constexpr unsigned BULK_MAX_BYTES = ((1u << 20) - 1) & ~15u;
constexpr unsigned MBARRIER_MAX_COUNT = (1u << 20) - 1;
constexpr unsigned TIMED_OUT = 1, BAD_LAUNCH = 2;  // pipeline::error_bits
constexpr uint64_t DEFAULT_TIMEOUT_NS = 1000000000ull;

constexpr unsigned pipeline_shared_bytes() {
    return COUNTER_BYTES + BARRIER_BYTES + PIPELINE_STAGES * PIPELINE_STAGE_BYTES;
}

__device__ __forceinline__ void record(unsigned* err, unsigned bit) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*err).fetch_or(
        bit, cuda::memory_order_relaxed);
}

__device__ __forceinline__ void fence_proxy_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ uint64_t globaltimer_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ void mbarrier_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbarrier_arrive(unsigned bar) {
    uint64_t state;
    asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(state) : "r"(bar), "r"(1u) : "memory");
    (void)state;  // the token: these arrivals are waited on by parity
}

__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned bar, unsigned bytes) {
    uint64_t state;
    asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %0, [%1], %2;"
                 : "=l"(state) : "r"(bar), "r"(bytes) : "memory");
    (void)state;  // the token: these arrivals are waited on by parity
}

__device__ __forceinline__ bool mbarrier_try_wait_parity(unsigned bar, unsigned parity) {
    unsigned done;
    asm volatile(
        "{ .reg .pred p; mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2; "
        "selp.u32 %0, 1, 0, p; }"
        : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    return done != 0;
}

// MBarrier::wait_parity: one poll, then polls until done or timeout_ns on the global timer.
__device__ __forceinline__ bool wait_parity(unsigned bar, unsigned parity, uint64_t timeout_ns) {
    if (mbarrier_try_wait_parity(bar, parity)) return true;
    uint64_t start = globaltimer_ns();
    for (;;) {
        if (mbarrier_try_wait_parity(bar, parity)) return true;
        if (globaltimer_ns() - start > timeout_ns) return false;
    }
}

__device__ __forceinline__ void cp_async_bulk(unsigned dst, const void* src, unsigned bytes,
                                              unsigned bar) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
        ::"r"(dst), "l"(__cvta_generic_to_global(src)), "r"(bytes), "r"(bar) : "memory");
}

// A ring of PIPELINE_STAGES stages of stage_bytes after 2 × STAGES mbarriers (full, empty).
struct BulkRing {
    unsigned char* base;
    unsigned stage_bytes;

    __device__ __forceinline__ unsigned full(int s) const {
        return shared_address(reinterpret_cast<uint64_t*>(base) + s);
    }
    __device__ __forceinline__ unsigned empty(int s) const {
        return shared_address(reinterpret_cast<uint64_t*>(base) + PIPELINE_STAGES + s);
    }
    __device__ __forceinline__ unsigned char* stage(int s) const {
        return base + BARRIER_BYTES + size_t(s) * stage_bytes;
    }

    // Fill k: wait for the stage to be released (from the second round), then the copy.
    // Returns 0 or an error bit.
    __device__ __forceinline__ unsigned produce(unsigned k, const unsigned char* src,
                                                unsigned bytes, uint64_t timeout_ns) const {
        int s = k % PIPELINE_STAGES;
        unsigned round = k / PIPELINE_STAGES;
        if (round > 0 && !wait_parity(empty(s), (round - 1) & 1, timeout_ns)) return TIMED_OUT;
        unsigned char* dst = stage(s);
        bool ok = bytes <= stage_bytes &&
                  ((reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src)) % 16) == 0 &&
                  bytes != 0 && bytes % 16 == 0 && bytes <= BULK_MAX_BYTES;
        if (ok) {
            mbarrier_arrive_expect_tx(full(s), bytes);
            cp_async_bulk(shared_address(dst), src, bytes, full(s));
            return 0;
        }
        mbarrier_arrive(full(s));
        return BAD_LAUNCH;
    }

    // Waits for the last min(fills, STAGES) fills to land.
    __device__ __forceinline__ unsigned drain(unsigned fills, uint64_t timeout_ns) const {
        unsigned result = 0;
        for (unsigned k = fills > PIPELINE_STAGES ? fills - PIPELINE_STAGES : 0; k < fills; ++k)
            if (!wait_parity(full(k % PIPELINE_STAGES), (k / PIPELINE_STAGES) & 1, timeout_ns))
                result = TIMED_OUT;
        return result;
    }

    // Warp 0: lane 0 fills the ring with this block's tiles, then drains it.
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

    // Warps 1…: each tile of this block, once landed, read(stage, bytes), then released.
    template <class Read>
    __device__ __forceinline__ void consume_tiles(size_t bytes, uint64_t timeout_ns, unsigned* err,
                                                  Read read) const {
        size_t stage = stage_bytes;
        size_t tiles = (bytes + stage - 1) / stage;
        unsigned k = 0;
        size_t tile = blockIdx.x;
        while (tile < tiles) {
            int s = k % PIPELINE_STAGES;
            bool landed = wait_parity(full(s), (k / PIPELINE_STAGES) & 1, timeout_ns);
            if (__ballot_sync(FULL_MASK, !landed) != 0) {
                if (!landed) record(err, TIMED_OUT);
                break;
            }
            size_t left = bytes - tile * stage;
            read(static_cast<const unsigned char*>(this->stage(s)), left < stage ? left : stage);
            // This thread's reads of the stage before the copy engine's next writes into it.
            fence_proxy_async_shared();
            mbarrier_arrive(empty(k % PIPELINE_STAGES));
            k += 1;
            tile += gridDim.x;
        }
    }
};

__global__ void histogram_pipeline(const unsigned char* arr, unsigned long long len,
                                   unsigned long long* histo, unsigned bins,
                                   unsigned long long timeout_ns, unsigned* err) {
    unsigned threads = blockDim.x;
    // BulkRing::for_block: the shape checked, the barriers initialized by thread 0.
    BulkRing ring{dynamic_shared<unsigned char>() + COUNTER_BYTES, PIPELINE_STAGE_BYTES};
    bool bad = threads < 2 * WARP_SIZE || threads % WARP_SIZE != 0 ||
               ring.stage_bytes == 0 || ring.stage_bytes % 16 != 0 ||
               ring.stage_bytes > BULK_MAX_BYTES || reinterpret_cast<uintptr_t>(ring.base) % 16 != 0;
    if (bad) {
        if (threadIdx.x == 0) record(err, BAD_LAUNCH);
        return;
    }
    if (threadIdx.x == 0) {
        unsigned consumers = threads - WARP_SIZE;
        consumers = consumers < 1 ? 1 : (consumers > MBARRIER_MAX_COUNT ? MBARRIER_MAX_COUNT : consumers);
        for (int s = 0; s < PIPELINE_STAGES; ++s) {
            mbarrier_init(ring.full(s), 1);
            mbarrier_init(ring.empty(s), consumers);
        }
        fence_proxy_async_shared();  // the copy engine must see the barriers initialized
    }
    unsigned* s_counts = dynamic_shared<unsigned>();
    for (unsigned w = threadIdx.x; w < COUNTER_BYTES / 4; w += threads) s_counts[w] = 0;
    __syncthreads();  // the counters are zero and the ring's barriers initialized

    Split16<unsigned char> split(arr, len);
    const unsigned char* body = arr + split.head;
    size_t body_bytes = split.body * BYTES16;

    if (threadIdx.x < WARP_SIZE) {
        // PHASE: produce.
        ring.produce_tiles(body, body_bytes, timeout_ns, err);
    } else {
        // PHASE: consume. This lane's column: word 32·byte + lane.
        size_t me = threadIdx.x - WARP_SIZE, consumers = threads - WARP_SIZE;
        unsigned s_lane = shared_address(s_counts + lane_id());
        auto count = [&](unsigned byte) {
            red_add_block_shared(s_lane + byte * PIPELINE_COLUMNS * 4, 1);
        };
        if (blockIdx.x == 0) {
            for (size_t k = me; k < split.scalars(); k += consumers)
                count(arr[split.scalar_index(k)]);
        }
        ring.consume_tiles(body_bytes, timeout_ns, err, [&](const unsigned char* stage, size_t bytes) {
            for_each_strided_byte(reinterpret_cast<const uint4*>(stage), me, bytes / BYTES16,
                                  consumers, count);
        });
    }
    __syncthreads();  // every lane's counts are in before any thread sums them

    // The fold: value w's 32 columns, from column t mod 32.
    unsigned t = threadIdx.x;
    unsigned top = bins < 256 ? bins : 256;
    for (unsigned w = t; w < top; w += threads) {
        unsigned long long total = 0;
        for (unsigned k = 0; k < PIPELINE_COLUMNS; ++k) {
            unsigned column = (t + k) % PIPELINE_COLUMNS;
            total += s_counts[w * PIPELINE_COLUMNS + column];
        }
        if (total != 0) atomic_add_device(histo + w, total);
    }
}

// ---- host -------------------------------------------------------------------------------------

// ---- The source's kernels (gpu/src/lessons/histogram/source.rs) ----------------------------

// Example 4.3: a grid-stride loop, one relaxed device-scope atomicAdd per byte below bins.
__global__ void histogram_global(const unsigned char* arr, unsigned long long len,
                                 unsigned long long* histo, unsigned bins) {
    for (size_t i = global_id_x(); i < len; i += threads_per_grid_x()) {
        unsigned byte = arr[i];
        if (byte < bins) atomic_add_device(histo + byte, 1ull);
    }
}

// Example 4.4: a u64 histogram per block in shared memory (zeroed with a block-stride loop, a
// barrier, block-scope atomics in the grid-stride loop, a barrier), then one device atomic per
// non-zero bin per block.
__global__ void histogram_shared(const unsigned char* arr, unsigned long long len,
                                 unsigned long long* histo, unsigned bins) {
    unsigned long long* local = dynamic_shared<unsigned long long>();
    for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (size_t i = global_id_x(); i < len; i += threads_per_grid_x()) {
        unsigned byte = arr[i];
        if (byte < bins) atomicAdd_block(local + byte, 1ull);
    }
    __syncthreads();
    for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) {
        unsigned long long count = local[b];
        if (count != 0) atomic_add_device(histo + b, count);
    }
}

// The source's kernels' blocks (SOURCE_THREADS_PER_BLOCK) and, without gridsync's grid, its
// blocks per SM (SOURCE_BLOCKS_PER_SM).
constexpr unsigned SOURCE_THREADS_PER_BLOCK = 128;

int main(int argc, char** argv) {
    std::string which = argc > 1 ? argv[1] : "";
    bool pipeline = which == "pipeline";
    bool source = which == "global" || which == "shared";
    if (!pipeline && !source && which != "vec16") {
        std::fprintf(stderr, "usage: %s pipeline|vec16|global|shared [BYTES] [TRIALS] [BLOCKS]\n",
                     argv[0]);
        return 2;
    }
    std::string name = "histogram_" + which;
    size_t len = arg_size(argc, argv, 2, LARGE_BYTES);
    int trials = int(arg_size(argc, argv, 3, DEFAULT_TRIALS));
    unsigned want_blocks = unsigned(arg_size(argc, argv, 4, 0, false));

    double copy = copy_gb_per_s(COPY_BYTES, trials);

    std::vector<unsigned long long> want(BINS, 0);
    unsigned char* arr = nullptr;
    {
        std::vector<unsigned char> data = uniform_bytes(len, RANDOM_SEED);
        for (unsigned char b : data)
            if (b < BINS) want[b] += 1;
        TWIN_CHECK(cudaMalloc(&arr, len));
        TWIN_CHECK(cudaMemcpy(arr, data.data(), len, cudaMemcpyHostToDevice));
    }

    unsigned threads, shared, blocks;
    if (pipeline) {
        threads = PIPELINE_THREADS_PER_BLOCK;
        shared = pipeline_shared_bytes();
        TWIN_CHECK(cudaFuncSetAttribute(histogram_pipeline,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, int(shared)));
        // A block per tile at most: the unit of its work is a stage's worth of bytes.
        size_t work = (len + PIPELINE_STAGE_BYTES - 1) / PIPELINE_STAGE_BYTES * threads;
        blocks = one_wave(histogram_pipeline, work, threads, shared, want_blocks);
    } else if (source) {
        threads = SOURCE_THREADS_PER_BLOCK;
        shared = which == "shared" ? BINS * unsigned(sizeof(unsigned long long)) : 0;
        if (want_blocks == 0) {
            std::fprintf(stderr, "%s needs gridsync's BLOCKS\n", name.c_str());
            return 2;
        }
        blocks = want_blocks;
    } else {
        threads = WARP_THREADS_PER_BLOCK;
        shared = warp_shared_bytes(threads);
        size_t work = (len + BYTES16 - 1) / BYTES16;
        blocks = one_wave(histogram_vec16, work, threads, shared, want_blocks);
        if (want_blocks == 0) {
            size_t wanted = (len + VEC16_MIN_BYTES_PER_BLOCK - 1) / VEC16_MIN_BYTES_PER_BLOCK;
            if (wanted < 1) wanted = 1;
            if (wanted < blocks) blocks = unsigned(wanted);
        }
    }
    unsigned long long* histo = nullptr;
    unsigned* err = nullptr;
    TWIN_CHECK(cudaMalloc(&histo, BINS * sizeof *histo));
    TWIN_CHECK(cudaMalloc(&err, sizeof *err));

    std::vector<unsigned long long> got(BINS);
    auto ms = time_trials(
        trials,
        [&] {
            TWIN_CHECK(cudaMemset(err, 0, sizeof *err));
            TWIN_CHECK(cudaMemset(histo, 0, BINS * sizeof *histo));
        },
        [&] {
            if (pipeline)
                histogram_pipeline<<<blocks, threads, shared>>>(arr, len, histo, BINS,
                                                                DEFAULT_TIMEOUT_NS, err);
            else if (which == "global")
                histogram_global<<<blocks, threads, shared>>>(arr, len, histo, BINS);
            else if (which == "shared")
                histogram_shared<<<blocks, threads, shared>>>(arr, len, histo, BINS);
            else
                histogram_vec16<<<blocks, threads, shared>>>(arr, len, histo, BINS);
        },
        [&] {
            TWIN_CHECK(cudaMemcpy(got.data(), histo, BINS * sizeof *histo, cudaMemcpyDeviceToHost));
            unsigned e = 0;
            TWIN_CHECK(cudaMemcpy(&e, err, sizeof e, cudaMemcpyDeviceToHost));
            if (e != 0) mismatch("histogram_pipeline's error word is " + std::to_string(e));
            for (unsigned b = 0; b < BINS; ++b)
                if (got[b] != want[b])
                    mismatch(name + ": bin " + std::to_string(b) + " is " + std::to_string(got[b]) +
                             ", the CPU's " + std::to_string(want[b]));
        });
    char extra[64];
    std::snprintf(extra, sizeof extra, ", \"bins\": %u, \"input\": \"large_random\"", BINS);
    print_report({"histogram", name.c_str(), len, len,
                  blocks, threads, shared, trials, copy, extra},
                 ms);
    TWIN_CHECK(cudaFree(arr));
    TWIN_CHECK(cudaFree(histo));
    TWIN_CHECK(cudaFree(err));
    return 0;
}
