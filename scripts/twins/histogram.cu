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
// gpu/src/primitives/pipeline.rs, its waits MBarrier::wait_parity of mbarrier.rs, both in
// ring.cuh, which reduce_pipeline.cu shares): 32 × 256 u32 counters, one column per lane
// index, then a ring of 4 stages of 16 KiB behind 8 mbarriers (full: count 1 and the copy's
// bytes; empty: count = consumer threads). Warp 0's
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
// The bench's other kernels of the progression, on the same input:
//
// histogram_warp (warp.rs): vec16's per-warp bins, zeroing, count and flush, without the
// 16-byte loads: a grid-stride loop over all len bytes (`grid_stride`), each step one byte load
// and one `red.relaxed.cta.shared.add.u32` of 1 (no test against bins: the flush drops the
// bins above). Blocks of 256, one full wave over len bytes (a byte per thread per step, no cap
// per block), 8 KiB of dynamic shared memory.
//
// histogram_lane (lane.rs): a histogram per lane of 128 u32 words, each two 16-bit counters (byte
// b < 128 in the low half of word b, b >= 128 in the high half of word b − 128), bin-major —
// word w of lane t is word w · blockDim.x + t, so lane t always hits bank t mod 32. Each thread
// zeroes its own words (no barrier: no other thread touches them), counts its scalar head and
// tail bytes, then its body vectors with vec16's loop (four 16-byte loads in flight, counted
// interleaved), each byte a `red.relaxed.cta.shared.add.u32` of 1 << (16 · (b >> 7)) (ATOMS.ADD),
// in rounds of at most LANE_FLUSH_LOADS = 4094 loads per thread so that no 16-bit counter
// overflows (one round below about 3 GiB on a full grid). A round ends with a barrier and the
// fold: thread t sums word t (t + blockDim.x, …) over the block's lanes from lane t, wrapping,
// the two halves apart in u32, and adds each non-zero sum below bins to its global bin
// (relaxed, device scope); another round starts with a barrier and the zeroing. Blocks of 64,
// one full wave over len / 16 vectors, 32 KiB of dynamic shared memory.
//
// Input: gridsync's uniform_bytes(len, 0x686973746f677261) (bandwidth.cuh). One launch per
// measurement; bins and error word zeroed before it (untimed); every trial's 128 bins must
// equal the CPU's exactly and the error word stay 0.
//
//   nvcc -O3 -arch=sm_90 -lineinfo -o histogram histogram.cu
//   ./histogram pipeline|vec16|warp|lane|global|shared|shared_rows [BYTES] [TRIALS] [BLOCKS]
//
// The source's kernels (gpu/src/lessons/histogram/source.rs), on the same input: histogram_global
// (example 4.3: one device atomicAdd per byte below the bins) and histogram_shared (4.4: a u64
// histogram per block in shared memory with block-scope atomics, then one device atomic per
// non-zero bin per block); blocks of 128, on gridsync's grid (BLOCKS, which run.sh passes), or
// without it config_for's, 32 blocks per SM (at most a block per 128 bytes). And the sweep's
// instrument, histogram_shared_rows: 4.4's first phase, then each non-zero bin of the block a
// plain u64 store into the block's own row, rows[blockIdx.x · bins + bin] — the same global
// writes as 4.4's flush, none contended. Its gridDim.x × 128 row bins are zeroed before each
// launch (untimed) and summed on the host before the check (HistogramLaunch::result). The bench
// does not time it (it is not in HistKernel::ALL; `gridsync histogram --sweep` does, on text),
// so without BLOCKS it takes the grid config_for gives it, which is histogram_shared's.
#include <cstring>

#include "bandwidth.cuh"
#include "device.cuh"
#include "ring.cuh"

using namespace twin;

// gridsync's RANDOM_SEED and the bench's large size and bins.
constexpr uint64_t RANDOM_SEED = 0x686973746f677261ull;
constexpr size_t LARGE_BYTES = size_t(1) << 30;
constexpr unsigned BINS = 128;
constexpr size_t BYTES16 = 16;
constexpr int LOADS_IN_FLIGHT = 4;

// ---- The byte loop the vector kernels share (load.rs) ---------------------------------------

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

// ---- histogram_warp and histogram_vec16 (warp.rs) --------------------------------------------

constexpr unsigned WARP_THREADS_PER_BLOCK = 256;
constexpr unsigned WARP_BINS = 256;
constexpr size_t VEC16_MIN_BYTES_PER_BLOCK = 40 << 10;

constexpr unsigned warp_shared_bytes(unsigned threads) {
    return (threads + WARP_SIZE - 1) / WARP_SIZE * WARP_BINS * 4;
}

// zero_warp_histograms, PHASE 1: zero the block's per-warp histograms (WARP_BINS u32 per warp);
// returns the shared address of this warp's. Every thread calls it (it holds a barrier).
__device__ __forceinline__ unsigned zero_warp_histograms(unsigned* s_hist) {
    unsigned words = (blockDim.x + WARP_SIZE - 1) / WARP_SIZE * WARP_BINS;
    for (unsigned k = threadIdx.x; k < words; k += blockDim.x) s_hist[k] = 0;
    __syncthreads();  // every bin is zero before any warp counts into it
    unsigned warp = threadIdx.x / WARP_SIZE;
    return shared_address(s_hist) + warp * WARP_BINS * 4;
}

// count: one byte into this warp's histogram, a red.shared of 1 (ATOMS.POPC.INC); every byte
// value has a bin, so there is no test.
__device__ __forceinline__ void count_in_warp(unsigned s_warp, unsigned byte) {
    red_add_block_shared(s_warp + byte * 4, 1);
}

// flush, PHASE 2: after a barrier, thread t sums bin t (t + blockDim.x, …) below bins over the
// warps in u64 and adds a non-zero sum to the global bin. Every thread calls it.
__device__ __forceinline__ void flush_warp_histograms(const unsigned* s_hist, unsigned bins,
                                                      unsigned long long* histo) {
    __syncthreads();  // every count is in before any thread sums
    unsigned warps = (blockDim.x + WARP_SIZE - 1) / WARP_SIZE;
    unsigned top = bins < WARP_BINS ? bins : WARP_BINS;
    for (unsigned bin = threadIdx.x; bin < top; bin += blockDim.x) {
        unsigned long long total = 0;
        for (unsigned w = 0; w < warps; ++w) total += s_hist[w * WARP_BINS + bin];
        if (total != 0) atomic_add_device(histo + bin, total);
    }
}

// histogram_warp: a grid-stride loop over every byte, one byte load and one count per step.
__global__ void histogram_warp(const unsigned char* arr, unsigned long long len,
                               unsigned long long* histo, unsigned bins) {
    unsigned* s_hist = dynamic_shared<unsigned>();
    unsigned s_warp = zero_warp_histograms(s_hist);
    for (size_t i = global_id_x(); i < len; i += threads_per_grid_x())
        count_in_warp(s_warp, arr[i]);
    flush_warp_histograms(s_hist, bins, histo);
}

// histogram_vec16: the scalar head and tail one byte at a time, the body four 16-byte loads
// per step.
__global__ void histogram_vec16(const unsigned char* arr, unsigned long long len,
                                unsigned long long* histo, unsigned bins) {
    unsigned* s_hist = dynamic_shared<unsigned>();
    unsigned s_warp = zero_warp_histograms(s_hist);
    auto count = [&](unsigned byte) { count_in_warp(s_warp, byte); };

    Split16<unsigned char> split(arr, len);
    for (size_t k = global_id_x(); k < split.scalars(); k += threads_per_grid_x())
        count(arr[split.scalar_index(k)]);
    for_each_strided_byte(reinterpret_cast<const uint4*>(arr + split.head), global_id_x(),
                          split.body, threads_per_grid_x(), count);

    flush_warp_histograms(s_hist, bins, histo);
}

// ---- histogram_lane (lane.rs) -----------------------------------------------------------------

constexpr unsigned LANE_THREADS_PER_BLOCK = 64;
constexpr unsigned LANE_WORDS = 128;
constexpr size_t LANE_COUNTER_MAX = 0xffff;
// 16-byte loads per thread between two folds: 16 × 4094 + the 30 scalar bytes fit 16 bits.
constexpr size_t LANE_FLUSH_LOADS = (LANE_COUNTER_MAX - 2 * (BYTES16 - 1)) / BYTES16;

constexpr unsigned lane_shared_bytes(unsigned threads) { return LANE_WORDS * 4 * threads; }

// Rust's usize::div_ceil: the quotient, plus one for a remainder.
__device__ __forceinline__ size_t div_ceil(size_t a, size_t b) { return a / b + (a % b != 0); }

// zero_own: this thread's LANE_WORDS words, word w of lane t at s_lanes[w · blockDim.x + t].
// Eight stores per step, as in gridsync's PTX: unrolled whole, nvcc keeps the 128 addresses
// live from the first call to the second (252 registers against 56).
__device__ __forceinline__ void zero_own(unsigned* s_lanes) {
    unsigned t = threadIdx.x, threads = blockDim.x;
#pragma unroll 8
    for (unsigned w = 0; w < LANE_WORDS; ++w) s_lanes[w * threads + t] = 0;
}

// count: byte b into this lane's word b & 127, its low half for b < 128 and its high half
// otherwise: a red.shared of 1 << (16 · (b >> 7)) (ATOMS.ADD) on a word no other thread touches.
__device__ __forceinline__ void count_in_lane(unsigned s_lane, unsigned threads, unsigned byte) {
    unsigned half = byte >> 7;
    red_add_block_shared(s_lane + (byte & 127) * threads * 4, 1u << (16 * half));
}

// flush_bin: n into global bin `bin` if n != 0 and bin < bins.
__device__ __forceinline__ void flush_bin(unsigned long long* histo, unsigned bin, unsigned n,
                                          unsigned bins) {
    if (n != 0 && bin < bins) atomic_add_device(histo + bin, (unsigned long long)n);
}

// fold: after a barrier, thread t sums word w = t, t + blockDim.x, … over the block's lanes —
// from lane t, wrapping, so a warp's 32 reads hit 32 banks — the halves apart in u32, and
// flushes bin w (the low halves) and bin w + 128 (the high halves).
__device__ __forceinline__ void fold(const unsigned* s_lanes, unsigned bins,
                                     unsigned long long* histo) {
    unsigned t = threadIdx.x, threads = blockDim.x;
    for (unsigned w = t; w < LANE_WORDS; w += threads) {
        unsigned low = 0, high = 0;  // at most 65 535 × 1024 each
        unsigned lane = t;
        for (unsigned k = 0; k < threads; ++k) {
            unsigned x = s_lanes[w * threads + lane];
            low += x & 0xffff;
            high += x >> 16;
            lane += 1;
            if (lane == threads) lane = 0;
        }
        flush_bin(histo, w, low, bins);
        flush_bin(histo, w + LANE_WORDS, high, bins);
    }
}

// histogram_lane: its own words zeroed (no barrier: nobody else touches them), the scalar head
// and tail, then the body as vec16's in rounds of at most LANE_FLUSH_LOADS loads per thread, the
// same number in every thread; each round ends with a barrier and a fold, and before the next a
// barrier and the zeroing.
__global__ void histogram_lane(const unsigned char* arr, unsigned long long len,
                               unsigned long long* histo, unsigned bins) {
    unsigned t = threadIdx.x, threads = blockDim.x;
    unsigned* s_lanes = dynamic_shared<unsigned>();
    zero_own(s_lanes);
    unsigned s_lane = shared_address(s_lanes + t);
    auto count = [&](unsigned byte) { count_in_lane(s_lane, threads, byte); };

    Split16<unsigned char> split(arr, len);
    for (size_t k = global_id_x(); k < split.scalars(); k += threads_per_grid_x())
        count(arr[split.scalar_index(k)]);
    // Thread 0 of the grid has the most loads, ⌈body / stride⌉.
    size_t stride = threads_per_grid_x();
    size_t round_span = LANE_FLUSH_LOADS * stride;
    size_t rounds = div_ceil(div_ceil(split.body, stride), LANE_FLUSH_LOADS);
    if (rounds < 1) rounds = 1;
    for (size_t r = 0; r < rounds; ++r) {
        size_t start = global_id_x() + r * round_span;
        size_t stop = start + round_span;
        if (stop < start) stop = SIZE_MAX;  // saturating
        size_t end = split.body < stop ? split.body : stop;
        for_each_strided_byte(reinterpret_cast<const uint4*>(arr + split.head), start, end,
                              stride, count);
        __syncthreads();  // every lane's counts are in before any thread sums them
        fold(s_lanes, bins, histo);
        if (r + 1 < rounds) {
            __syncthreads();  // every fold has read this lane's counters before they reset
            zero_own(s_lanes);
        }
    }
}

// ---- histogram_pipeline (pipeline.rs, BulkRing of ring.cuh) ----------------------------------

constexpr unsigned PIPELINE_STAGES = 4;
constexpr unsigned PIPELINE_STAGE_BYTES = 16 << 10;
constexpr unsigned PIPELINE_THREADS_PER_BLOCK = 17 * WARP_SIZE;
constexpr unsigned PIPELINE_COLUMNS = WARP_SIZE;
constexpr unsigned COUNTER_BYTES = 256 * PIPELINE_COLUMNS * 4;
using Ring = BulkRing<PIPELINE_STAGES>;

constexpr unsigned pipeline_shared_bytes() {
    return COUNTER_BYTES + Ring::shared_bytes(PIPELINE_STAGE_BYTES);
}

__global__ void histogram_pipeline(const unsigned char* arr, unsigned long long len,
                                   unsigned long long* histo, unsigned bins,
                                   unsigned long long timeout_ns, unsigned* err) {
    unsigned threads = blockDim.x;
    // BulkRing::for_block: the shape checked, the barriers initialized by thread 0.
    Ring ring{dynamic_shared<unsigned char>() + COUNTER_BYTES, PIPELINE_STAGE_BYTES};
    if (!ring.for_block(err)) return;
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

// ---- The source's kernels (gpu/src/lessons/histogram/source.rs) ----------------------------

// Example 4.3: a grid-stride loop, one relaxed device-scope atomicAdd per byte below bins.
__global__ void histogram_global(const unsigned char* arr, unsigned long long len,
                                 unsigned long long* histo, unsigned bins) {
    for (size_t i = global_id_x(); i < len; i += threads_per_grid_x()) {
        unsigned byte = arr[i];
        if (byte < bins) atomic_add_device(histo + byte, 1ull);
    }
}

// block_histogram, example 4.4's first phase (histogram_shared and histogram_shared_rows): a
// u64 histogram per block in shared memory, zeroed with a block-stride loop, a barrier,
// block-scope atomics in the grid-stride loop, a barrier. Returns the block's bins.
__device__ __forceinline__ unsigned long long* block_histogram(const unsigned char* arr,
                                                               unsigned long long len,
                                                               unsigned bins) {
    unsigned long long* local = dynamic_shared<unsigned long long>();
    for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (size_t i = global_id_x(); i < len; i += threads_per_grid_x()) {
        unsigned byte = arr[i];
        if (byte < bins) atomicAdd_block(local + byte, 1ull);
    }
    __syncthreads();
    return local;
}

// Example 4.4: block_histogram, then one device atomic per non-zero bin per block.
__global__ void histogram_shared(const unsigned char* arr, unsigned long long len,
                                 unsigned long long* histo, unsigned bins) {
    unsigned long long* local = block_histogram(arr, len, bins);
    for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) {
        unsigned long long count = local[b];
        if (count != 0) atomic_add_device(histo + b, count);
    }
}

// The sweep's instrument: block_histogram, then each non-zero bin a plain store into the
// block's own row, rows[blockIdx.x · bins + bin]: histogram_shared's writes, none contended.
__global__ void histogram_shared_rows(const unsigned char* arr, unsigned long long len,
                                      unsigned long long* rows, unsigned bins) {
    unsigned long long* local = block_histogram(arr, len, bins);
    size_t row = size_t(blockIdx.x) * bins;
    for (unsigned b = threadIdx.x; b < bins; b += blockDim.x) {
        unsigned long long count = local[b];
        if (count != 0) rows[row + b] = count;
    }
}

// ---- host -------------------------------------------------------------------------------------

// The source's kernels' blocks (SOURCE_THREADS_PER_BLOCK) and, without gridsync's grid, its
// blocks per SM (SOURCE_BLOCKS_PER_SM).
constexpr unsigned SOURCE_THREADS_PER_BLOCK = 128;
constexpr unsigned SOURCE_BLOCKS_PER_SM = 32;

// config_for's grid for the source's kernels: `blocks` if positive, else SOURCE_BLOCKS_PER_SM
// per SM, at most what `len` bytes fill at one per thread, at least one block.
unsigned source_grid(size_t len, unsigned threads, unsigned blocks) {
    if (blocks > 0) return blocks;
    int device = 0, sms = 0;
    TWIN_CHECK(cudaGetDevice(&device));
    TWIN_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    size_t wave = size_t(SOURCE_BLOCKS_PER_SM) * size_t(sms);
    size_t needed = (len + threads - 1) / threads;
    if (needed < 1) needed = 1;
    return unsigned(needed < wave ? needed : wave);
}

// Every kernel but the pipeline: (arr, len, histo or rows, bins).
using PlainKernel = void (*)(const unsigned char*, unsigned long long, unsigned long long*,
                             unsigned);

int main(int argc, char** argv) {
    std::string which = argc > 1 ? argv[1] : "";
    bool pipeline = which == "pipeline";
    bool rows = which == "shared_rows";
    bool source = which == "global" || which == "shared" || rows;
    // Picked once, by name, as the launch below and the grid's occupancy need it.
    PlainKernel plain = which == "vec16"         ? histogram_vec16
                        : which == "warp"        ? histogram_warp
                        : which == "lane"        ? histogram_lane
                        : which == "global"      ? histogram_global
                        : which == "shared"      ? histogram_shared
                        : which == "shared_rows" ? histogram_shared_rows
                                                 : nullptr;
    if (!pipeline && plain == nullptr) {
        std::fprintf(stderr,
                     "usage: %s pipeline|vec16|warp|lane|global|shared|shared_rows [BYTES] "
                     "[TRIALS] [BLOCKS]\n",
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

    // config_for's shapes (host/histogram/mod.rs).
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
        shared = which == "global" ? 0 : BINS * unsigned(sizeof(unsigned long long));
        blocks = source_grid(len, threads, want_blocks);
    } else if (which == "lane") {
        threads = LANE_THREADS_PER_BLOCK;
        shared = lane_shared_bytes(threads);
        size_t work = (len + BYTES16 - 1) / BYTES16;
        blocks = one_wave(plain, work, threads, shared, want_blocks);
    } else if (which == "warp") {
        threads = WARP_THREADS_PER_BLOCK;
        shared = warp_shared_bytes(threads);
        blocks = one_wave(plain, len, threads, shared, want_blocks);
    } else {
        threads = WARP_THREADS_PER_BLOCK;
        shared = warp_shared_bytes(threads);
        size_t work = (len + BYTES16 - 1) / BYTES16;
        blocks = one_wave(plain, work, threads, shared, want_blocks);
        if (want_blocks == 0) {
            size_t wanted = (len + VEC16_MIN_BYTES_PER_BLOCK - 1) / VEC16_MIN_BYTES_PER_BLOCK;
            if (wanted < 1) wanted = 1;
            if (wanted < blocks) blocks = unsigned(wanted);
        }
    }
    // The bins, or for histogram_shared_rows a row of bins per block, summed on the host.
    size_t out_len = rows ? size_t(blocks) * BINS : BINS;
    unsigned long long* histo = nullptr;
    unsigned* err = nullptr;
    TWIN_CHECK(cudaMalloc(&histo, out_len * sizeof *histo));
    TWIN_CHECK(cudaMalloc(&err, sizeof *err));

    std::vector<unsigned long long> out(out_len), got(BINS);
    auto ms = time_trials(
        trials,
        [&] {
            TWIN_CHECK(cudaMemset(err, 0, sizeof *err));
            TWIN_CHECK(cudaMemset(histo, 0, out_len * sizeof *histo));
        },
        [&] {
            if (pipeline)
                histogram_pipeline<<<blocks, threads, shared>>>(arr, len, histo, BINS,
                                                                DEFAULT_TIMEOUT_NS, err);
            else
                plain<<<blocks, threads, shared>>>(arr, len, histo, BINS);
        },
        [&] {
            TWIN_CHECK(cudaMemcpy(out.data(), histo, out_len * sizeof *histo,
                                  cudaMemcpyDeviceToHost));
            std::fill(got.begin(), got.end(), 0ull);
            for (size_t k = 0; k < out_len; ++k) got[k % BINS] += out[k];
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
