// The nvcc twin of `gridsync bench reduce`'s sm_90 kernels, step (f):
// `reduce_pipeline_sum_f32` and `reduce_pipeline_sum_f32_in_f64` (gpu/src/lessons/reduce/
// pipeline.rs, `pipeline_reduce::<SumF32>` and `::<SumF32InF64>`). The ring is `BulkRing<4>` of
// gpu/src/primitives/pipeline.rs (`for_block`, `produce_tiles`, `consume_tiles`, `produce`,
// `drain`), its waits `MBarrier::wait_parity` of gpu/src/primitives/mbarrier.rs; the stage is
// read by `combine_strided` (gpu/src/lessons/reduce/vec.rs) and the launch finished by
// `finish_in_last_block` (last_block.rs), whose block reduction is block_reduce.rs's.
//
// Work split, as gridsync's: the array is cut as Split16 — a scalar head up to the first
// 16-byte boundary, a body of whole float4, a scalar tail. The body is cut into tiles of
// STAGE_BYTES = 8 KiB (the last one shorter); block b takes tiles b, b + gridDim.x, … Warp 0 is
// the producer: its lane 0 streams the block's tiles into a ring of STAGES = 4 stages of shared
// memory, each behind two mbarriers — full (count 1: the producer's
// `mbarrier.arrive.expect_tx` of the tile's bytes, then the `cp.async.bulk` that completes them
// on it) and empty (count 256: one `mbarrier.arrive` per consumer thread). Fill k goes to stage
// k mod 4 and is that stage's (k / 4)-th phase, so every parity is (k / 4) & 1; from the
// second round the producer first waits on the stage's empty barrier (parity of the previous
// round), and after its last fill it drains the last four copies (waits on their full
// barriers) so that no copy lands in the shared memory of an exited block. Warps 1–8 consume:
// block 0's consumers add the scalar head and tail from global memory (k = me, me + 256, …);
// every consumer waits on the fill's full barrier, votes (`__ballot_sync`) so that one lane's
// timeout ends the whole warp's loop, adds its vectors of the stage (me, me + 256, …: four
// float4 per step as a tree, then one at a time — two per 8 KiB tile), fences its reads against
// the copy engine's next writes (`fence.proxy.async.shared::cta`) and arrives on the stage's
// empty barrier. Every wait is bounded: `mbarrier.try_wait.parity` polled until %globaltimer has
// moved timeout_ns (1 s, gridsync's DEFAULT_TIMEOUT_NS, what the host passes), a stall setting
// bit 1 (TIMED_OUT) of the error word; a launch shape that cannot hold the ring sets bit 2
// (BAD_LAUNCH). Then every thread, the producer warp with 0, joins finish_in_last_block: the
// block's sum (shuffles, one slot per warp, one barrier) to partials[blockIdx.x],
// `__threadfence`, a ticket (atomicInc(count, gridDim.x)); the block that draws the last one
// takes an acquire fence, adds the partials in block order, writes the result and resets the
// counter (relaxed device-scope store).
//
// The two accumulations (gpu/src/lessons/reduce/ops.rs): SumF32 adds in float; SumF32InF64
// converts each float to double (exact) and adds in double, the result a double. A float4
// becomes (x + y) + (z + w) in the accumulator's type.
//
// Launch shape, as host/reduce/single_pass.rs and mod.rs (config_for, grid_stride_config):
// blocks of THREADS_PER_BLOCK = 32 + 256; dynamic shared memory = last_block_shared_bytes (one
// accumulator per warp, rounded up to 16, then 16 bytes of flag: 64 bytes for float, 96 for
// double) + 16 × STAGES bytes of barriers + STAGES × 8 KiB = 32 896 and 32 928 bytes; one full
// wave (the occupancy calculator's blocks per SM × SMs), but no more blocks than tiles of
// len · 4 bytes, at least one — or BLOCKS, taken from gridsync's row.
//
// Timing, as cli/src/bench/sized.rs and reduce.rs: the CUDA book's input (every element 1.23f,
// host/reduce/mod.rs, book_input); 3 warm-ups then TRIALS event-timed launches, each after an
// untimed reset of the ticket counter and the error word and followed by a check — the error
// word 0, the same bits as every other trial (a deterministic kernel), and within the rounding
// bound below of the float64 reference; the median. One JSON line per kernel and size, as the
// other bandwidth twins (bandwidth.cuh's print_report).
//
// Checked before timing, on fresh random inputs (uniform in [-1, 1), gridsync's uniform_f32 of
// a seed drawn from std::random_device, printed, or SEED): lengths 1, 2, 3, 4, 5, 7, 2047,
// 2048 (one tile), 2049, 2051, 6143, 8193, 65 537, 1 000 003 and 12 345 679, each starting 0, 1
// and 3 floats past a 16-byte boundary (heads of 0, 3 and 1 floats), each on three grids — one
// block (the ring wraps over every tile), the timed run's own rule (at most a block per tile),
// and a full wave (blocks with no tile) — two launches each: the error word 0, the two results
// the same bits, each within the bound of a compensated float64 sum of the same floats.
//
// The bound: Higham's |sum − exact| ≤ γ_d · Σ|x|, γ_d = d·u / (1 − d·u), where d bounds the
// additions any element passes through — 2 in its float4's tree, 2 in the tree of four
// float4, the chain of the consumer's accumulator (2 vectors per tile × tiles per block, plus
// its scalars), 10 shuffle levels of the block's reduction, the last block's chain over the
// partials (⌈gridDim.x / 288⌉) and 10 more levels; u = 2⁻²⁴ for the float accumulation, 2⁻⁵³ for
// the double one — plus 3 · 2⁻⁵³ · Σ|x| for the reference's own error (Neumaier's sum in float64).
//
// The ring, its waits and its inline PTX (the strings gridsync's seam emits,
// gpu/src/seam/ptx/mbarrier.rs, async_copy.rs) are ring.cuh's, shared with histogram.cu's
// pipeline; the two reductions, combine_strided and finish_in_last_block (atomics and fences
// through libcu++ and atomicInc) are reduce.cuh's, shared with reduce.cu and normalize.cu.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o reduce_pipeline reduce_pipeline.cu
//   ./reduce_pipeline f32|f64|check [LEN] [TRIALS] [BLOCKS] [SEED]
//     (also pipeline_sum_f32, pipeline_sum_f32_in_f64: the names a script may derive from the rows)
//   gridsync --json bench reduce --len 100000000,1000000000 --repeats 20
//     (rows reduce_pipeline_sum_f32 and reduce_pipeline_sum_f32_in_f64; pass each row's
//     blocks as BLOCKS)
#include <cstring>
#include <random>

#include "bandwidth.cuh"
#include "device.cuh"
#include "reduce.cuh"
#include "ring.cuh"

using namespace twin;

// ---- The ring and its launch shape (pipeline.rs; BulkRing of ring.cuh) ---------------------

// REDUCE_PIPELINE_STAGES: the fills in flight while the consumers read one stage.
constexpr unsigned STAGES = 4;
// REDUCE_PIPELINE_STAGE_BYTES: two 16-byte vectors per consumer thread of a 256-consumer block.
constexpr unsigned STAGE_BYTES = 8 << 10;
// REDUCE_PIPELINE_THREADS_PER_BLOCK: one producer warp and eight consumer warps.
constexpr unsigned CONSUMERS = 256;
constexpr unsigned THREADS_PER_BLOCK = WARP_SIZE + CONSUMERS;
constexpr size_t BYTES16 = 16;
// The CUDA book's value (gridsync's BOOK_VALUE).
constexpr float BOOK_VALUE = 1.23f;

using Ring = BulkRing<STAGES>;

// The dynamic shared memory: finish_in_last_block's scratch and flag, then the ring.
constexpr unsigned pipeline_shared_bytes(unsigned acc_bytes) {
    return last_block_shared_bytes(THREADS_PER_BLOCK, acc_bytes) + Ring::shared_bytes(STAGE_BYTES);
}

// ---- The kernels (pipeline.rs) ----------------------------------------------------------------

// pipeline_reduce: the ring after the last block's scratch; warp 0 produces, warps 1… consume
// (block 0's also take the scalar head and tail); then every thread joins finish_in_last_block.
template <class R>
__device__ __forceinline__ void pipeline_reduce(const float* x, unsigned long long n,
                                                typename R::Acc* partials, unsigned* count,
                                                typename R::Acc* result, uint64_t timeout_ns,
                                                unsigned* err) {
    using Acc = typename R::Acc;
    unsigned threads = blockDim.x;
    Ring ring{dynamic_shared<unsigned char>() + last_block_shared_bytes(threads, sizeof(Acc)),
              STAGE_BYTES};
    if (!ring.for_block(err)) return;
    __syncthreads();  // the ring's barriers are initialized before anyone uses them

    Split16<float> split(x, n);
    size_t body_bytes = split.body * BYTES16;
    const unsigned char* body = reinterpret_cast<const unsigned char*>(x + split.head);
    Acc acc = Acc(0);

    if (threadIdx.x < WARP_SIZE) {
        // PHASE: produce.
        ring.produce_tiles(body, body_bytes, timeout_ns, err);
    } else {
        // PHASE: consume.
        size_t me = threadIdx.x - WARP_SIZE;
        size_t consumers = threads - WARP_SIZE;
        if (blockIdx.x == 0) {
            for (size_t k = me; k < split.scalars(); k += consumers)
                acc = R::combine(acc, R::lift(x[split.scalar_index(k)]));
        }
        ring.consume_tiles(body_bytes, timeout_ns, err,
                           [&](const unsigned char* stage, size_t bytes) {
                               const float4* p = reinterpret_cast<const float4*>(stage);
                               auto load = [p](size_t v) { return p[v]; };
                               acc = combine_strided<R>(acc, load, me, bytes / BYTES16, consumers);
                           });
    }
    // The block reduction's scratch is another region than the ring; finish_in_last_block has
    // its own barriers.
    finish_in_last_block(acc, partials, count, result);
}

__global__ void reduce_pipeline_sum_f32(const float* x, unsigned long long n, float* partials,
                                        unsigned* count, float* result,
                                        unsigned long long timeout_ns, unsigned* err) {
    pipeline_reduce<SumF32>(x, n, partials, count, result, timeout_ns, err);
}

__global__ void reduce_pipeline_sum_f32_in_f64(const float* x, unsigned long long n,
                                               double* partials, unsigned* count, double* result,
                                               unsigned long long timeout_ns, unsigned* err) {
    pipeline_reduce<SumF32InF64>(x, n, partials, count, result, timeout_ns, err);
}

// ---- host -------------------------------------------------------------------------------------

template <class R>
using KernelOf = void (*)(const float*, unsigned long long, typename R::Acc*, unsigned*,
                          typename R::Acc*, unsigned long long, unsigned*);

template <class R>
KernelOf<R> kernel_of();
template <>
KernelOf<SumF32> kernel_of<SumF32>() { return reduce_pipeline_sum_f32; }
template <>
KernelOf<SumF32InF64> kernel_of<SumF32InF64>() { return reduce_pipeline_sum_f32_in_f64; }

// The kernel's name, as gridsync's row spells it.
template <class R>
const char* name_of();
template <>
const char* name_of<SumF32>() { return "reduce_pipeline_sum_f32"; }
template <>
const char* name_of<SumF32InF64>() { return "reduce_pipeline_sum_f32_in_f64"; }

size_t div_ceil(size_t a, size_t b) { return a / b + (a % b != 0); }

// The most additions any element of x[..n] passes through in a launch of `blocks`, for an
// array starting `misaligned` floats past a 16-byte boundary (see the header).
double depth(size_t n, size_t misaligned, unsigned blocks) {
    size_t head = (4 - misaligned % 4) % 4;
    if (head > n) head = n;
    size_t body = (n - head) / 4;
    size_t scalars = n - body * 4;
    size_t tiles = div_ceil(body * BYTES16, STAGE_BYTES);
    size_t vectors_per_tile = div_ceil(STAGE_BYTES / BYTES16, CONSUMERS);
    size_t chain = div_ceil(tiles, blocks) * vectors_per_tile + div_ceil(scalars, CONSUMERS);
    return 4.0 + double(chain) + 10.0 + double(div_ceil(blocks, THREADS_PER_BLOCK)) + 10.0;
}

// The error allowed against the float64 reference, as a multiple of Σ|x|.
template <class R>
double bound_of(size_t n, size_t misaligned, unsigned blocks) {
    return gamma_bound(depth(n, misaligned, blocks), R::unit) + 3 * F64_UNIT;
}

// One kernel's device buffers for a grid of up to `blocks`: partials, counter, result, error.
template <class R>
struct Buffers {
    using Acc = typename R::Acc;
    Acc* partials = nullptr;
    Acc* result = nullptr;
    unsigned* count = nullptr;
    unsigned* err = nullptr;

    explicit Buffers(unsigned blocks) {
        TWIN_CHECK(cudaMalloc(&partials, size_t(blocks) * sizeof(Acc)));
        TWIN_CHECK(cudaMalloc(&result, sizeof(Acc)));
        TWIN_CHECK(cudaMalloc(&count, sizeof(unsigned)));
        TWIN_CHECK(cudaMalloc(&err, sizeof(unsigned)));
    }
    ~Buffers() {
        TWIN_CHECK(cudaFree(partials));
        TWIN_CHECK(cudaFree(result));
        TWIN_CHECK(cudaFree(count));
        TWIN_CHECK(cudaFree(err));
    }
    Buffers(const Buffers&) = delete;
    Buffers& operator=(const Buffers&) = delete;

    // SinglePass::reset: the ticket counter and the error word zeroed (untimed).
    void reset() const {
        TWIN_CHECK(cudaMemset(count, 0, sizeof(unsigned)));
        TWIN_CHECK(cudaMemset(err, 0, sizeof(unsigned)));
    }
    void launch(const float* x, size_t n, unsigned blocks) const {
        kernel_of<R>()<<<blocks, THREADS_PER_BLOCK, pipeline_shared_bytes(sizeof(Acc))>>>(
            x, n, partials, count, result, DEFAULT_TIMEOUT_NS, err);
    }
    // SinglePass::result: the value, after the error word says there is one.
    double result_or_exit(const std::string& what) const {
        Acc value{};
        unsigned e = 0;
        TWIN_CHECK(cudaMemcpy(&value, result, sizeof value, cudaMemcpyDeviceToHost));
        TWIN_CHECK(cudaMemcpy(&e, err, sizeof e, cudaMemcpyDeviceToHost));
        if (e != 0)
            mismatch(what + ": the error word is " + std::to_string(e) +
                     (e & TIMED_OUT ? " (a stage's wait timed out)" : " (bad launch)"));
        return double(value);
    }
};

// The timed run's grid: `blocks` if positive, else one full wave, at most a block per tile of
// len · 4 bytes (host/reduce/single_pass.rs: work = tiles × threads).
template <class R>
unsigned grid_for(size_t len, unsigned blocks) {
    size_t work = div_ceil(len * sizeof(float), STAGE_BYTES) * THREADS_PER_BLOCK;
    unsigned shared = pipeline_shared_bytes(sizeof(typename R::Acc));
    return one_wave(kernel_of<R>(), work, THREADS_PER_BLOCK, shared, blocks);
}

void check_within(const std::string& what, double value, double expected, double sum_abs,
                  double bound) {
    double err = std::fabs(value - expected);
    if (!(err <= bound * sum_abs)) {
        char line[256];
        std::snprintf(line, sizeof line,
                      "%s gave %.17g, float64 %.17g: error %.3e · Σ|x|, allowed %.3e",
                      what.c_str(), value, expected, sum_abs > 0 ? err / sum_abs : err, bound);
        mismatch(line);
    }
}

// The lengths of the check: tiny, around one tile (2048 floats), not a multiple of one, many.
constexpr size_t CHECK_LENS[] = {1,    2,    3,    4,     5,         7,        2047,    2048,
                                 2049, 2051, 6143, 8193, 65537, 1000003, 12345679};
constexpr size_t CHECK_OFFSETS[] = {0, 1, 3};
constexpr size_t CHECK_MAX_LEN = 12345679;
constexpr size_t CHECK_PAD = 3;

// The check on fresh random floats (see the header): returns the number of cases passed;
// exits non-zero on the first failure.
template <class R>
int check_random(uint64_t seed) {
    std::vector<float> host = uniform_f32(CHECK_MAX_LEN + CHECK_PAD, seed, -1.0f, 1.0f);
    float* x = nullptr;
    TWIN_CHECK(cudaMalloc(&x, host.size() * sizeof(float)));
    TWIN_CHECK(cudaMemcpy(x, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
    unsigned full_wave = one_wave(kernel_of<R>(), size_t(1) << 40, THREADS_PER_BLOCK,
                                  pipeline_shared_bytes(sizeof(typename R::Acc)), 0);
    Buffers<R> buf(full_wave);
    int cases = 0;
    for (size_t len : CHECK_LENS) {
        for (size_t offset : CHECK_OFFSETS) {
            Reference ref = neumaier_sum(host.data() + offset, len);
            double expected = ref.sum, sum_abs = ref.sum_abs;
            size_t misaligned = (reinterpret_cast<uintptr_t>(x + offset) % 16) / sizeof(float);
            unsigned grids[] = {1, grid_for<R>(len, 0), full_wave};
            for (unsigned blocks : grids) {
                std::string what = std::string(name_of<R>()) + " on " + std::to_string(len) +
                                   " random floats at offset " + std::to_string(offset) + ", " +
                                   std::to_string(blocks) + " blocks, seed " +
                                   std::to_string(seed);
                double bound = bound_of<R>(len, misaligned, blocks);
                double first = 0.0;
                for (int launch = 0; launch < 2; ++launch) {
                    buf.reset();
                    buf.launch(x + offset, len, blocks);
                    TWIN_CHECK(cudaGetLastError());
                    TWIN_CHECK(cudaDeviceSynchronize());
                    double value = buf.result_or_exit(what);
                    check_within(what, value, expected, sum_abs, bound);
                    if (launch == 0) first = value;
                    else if (std::memcmp(&first, &value, sizeof value) != 0)
                        mismatch(what + ": two launches gave different bits");
                }
                ++cases;
            }
        }
    }
    TWIN_CHECK(cudaFree(x));
    return cases;
}

// The timed run on the book's input: gridsync's trials (bandwidth.cuh's time_trials), each
// checked; one JSON line.
template <class R>
int run_timed(size_t len, int trials, unsigned want_blocks, uint64_t seed, int cases) {
    // Sizes checked before anything is allocated: the input and the copy roofline's two buffers.
    size_t free_bytes = 0, total_bytes = 0;
    TWIN_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (len > (SIZE_MAX - 2 * COPY_BYTES) / sizeof(float) ||
        len * sizeof(float) + 2 * COPY_BYTES > free_bytes) {
        std::fprintf(stderr,
                     "%zu floats (and the 2 GiB of the copy) do not fit in %zu free bytes\n", len,
                     free_bytes);
        return 2;
    }
    unsigned blocks = grid_for<R>(len, want_blocks);
    unsigned shared = pipeline_shared_bytes(sizeof(typename R::Acc));

    double copy = copy_gb_per_s(COPY_BYTES, trials);

    float* x = nullptr;
    {
        std::vector<float> host(len, BOOK_VALUE);
        TWIN_CHECK(cudaMalloc(&x, len * sizeof(float)));
        TWIN_CHECK(cudaMemcpy(x, host.data(), len * sizeof(float), cudaMemcpyHostToDevice));
    }
    // float64, exact: 1.23f has 24 significant bits; every element is positive, so Σ|x| is it.
    double expected = double(BOOK_VALUE) * double(len);
    double bound = bound_of<R>(len, (reinterpret_cast<uintptr_t>(x) % 16) / sizeof(float), blocks);
    std::string what =
        std::string(name_of<R>()) + " on the book's " + std::to_string(len) + " floats";

    Buffers<R> buf(blocks);
    double value = 0.0, first = 0.0;
    bool have = false;
    auto ms = time_trials(
        trials, [&] { buf.reset(); }, [&] { buf.launch(x, len, blocks); },
        [&] {
            value = buf.result_or_exit(what);
            check_within(what, value, expected, expected, bound);
            if (!have) {
                first = value;
                have = true;
            } else if (std::memcmp(&first, &value, sizeof value) != 0) {
                mismatch(what + ": the trials gave different bits");
            }
        });
    char extra[320];
    std::snprintf(extra, sizeof extra,
                  ", \"value\": %.17g, \"rel_error\": %.3e, \"rel_bound\": %.3e, "
                  "\"stages\": %u, \"stage_bytes\": %u, \"checked_cases\": %d, "
                  "\"check_seed\": %llu",
                  value, std::fabs(value - expected) / expected, bound, STAGES, STAGE_BYTES, cases,
                  (unsigned long long)seed);
    print_report({"reduce", name_of<R>(), len, len * sizeof(float), blocks, THREADS_PER_BLOCK,
                  shared, trials, copy, extra},
                 ms);
    TWIN_CHECK(cudaFree(x));
    return 0;
}

int main(int argc, char** argv) {
    std::string which = argc > 1 ? argv[1] : "";
    if (which == "pipeline_sum_f32") which = "f32";
    if (which == "pipeline_sum_f32_in_f64") which = "f64";
    if (which != "f32" && which != "f64" && which != "check") {
        std::fprintf(stderr, "usage: %s f32|f64|check [LEN] [TRIALS] [BLOCKS] [SEED]\n", argv[0]);
        return 2;
    }
    size_t len = arg_size(argc, argv, 2, 100000000);
    // Range-checked before they are narrowed.
    size_t trials_arg = arg_size(argc, argv, 3, DEFAULT_TRIALS);
    size_t blocks_arg = arg_size(argc, argv, 4, 0, false);
    uint64_t seed = argc > 5 ? arg_size(argc, argv, 5, 0, false)
                             : (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    if (trials_arg > 100000 || blocks_arg > 0x7fffffffu) {
        std::fprintf(stderr, "TRIALS is at most 100000 and BLOCKS at most 2^31 - 1\n");
        return 2;
    }
    int trials = int(trials_arg);
    unsigned want_blocks = unsigned(blocks_arg);

    int device = 0, major = 0;
    TWIN_CHECK(cudaGetDevice(&device));
    TWIN_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    if (major < 9) {
        std::fprintf(stderr, "the pipeline needs compute capability 9.0 (bulk copies completing "
                             "on an mbarrier); %s is %d.x\n", device_name(), major);
        return 2;
    }

    if (which == "check") {
        int f32 = check_random<SumF32>(seed);
        int f64 = check_random<SumF32InF64>(seed);
        std::printf("{\"twin\": \"reduce\", \"device\": \"%s\", \"check\": \"passed\", "
                    "\"kernels\": [\"%s\", \"%s\"], \"cases\": [%d, %d], \"seed\": %llu}\n",
                    device_name(), name_of<SumF32>(), name_of<SumF32InF64>(), f32, f64,
                    (unsigned long long)seed);
        return 0;
    }
    if (which == "f32") {
        int cases = check_random<SumF32>(seed);
        return run_timed<SumF32>(len, trials, want_blocks, seed, cases);
    }
    int cases = check_random<SumF32InF64>(seed);
    return run_timed<SumF32InF64>(len, trials, want_blocks, seed, cases);
}
