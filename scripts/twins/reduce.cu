// The nvcc twins of `gridsync bench reduce`'s f32 kernels (all but the sm_90 pipeline and the
// float64 and Kahan accumulations). The fast sum, `reduce_vec_sum_f32`
// (gpu/src/lessons/reduce/vec.rs, `vec_reduce::<SumF32>` and `combine_strided`, finished by
// `finish_in_last_block` in gpu/src/lessons/reduce/last_block.rs; the block reduction is
// gpu/src/primitives/block_reduce.rs's `block_reduce`). combine_strided, finish_in_last_block
// and the source's tree are reduce.cuh's, shared with normalize.cu and reduce_pipeline.cu; the
// grid-stride loops device.cuh's.
//
// Work split, as gridsync's: a grid-stride loop over the scalar head and tail (Split16), then
// the 16-byte body, VEC_UNROLL = 4 float4 loads issued per step and added as a tree
// ((v0 + v1) + (v2 + v3), each vector (a + b) + (c + d)) before joining the thread's sum; then
// the block's sum (shuffles, one slot per warp, one barrier), written to partials[blockIdx.x],
// __threadfence, a ticket (atomicInc(count, gridDim.x)), and the block that draws the last one
// adds the partials (acquire fence, barrier, the same block reduction), writes the result and
// resets the counter (relaxed device-scope store).
//
// Launch shape, as host/reduce/single_pass.rs: blocks of THREADS_PER_BLOCK = 256, one full wave
// over len / 4 vectors (the occupancy calculator's blocks per SM × SMs, or the BLOCKS argument:
// run.sh passes gridsync's), dynamic shared memory last_block_shared_bytes = the scratch (8
// floats) rounded up to 16, then 16 bytes of flag: 48 bytes. Input: the CUDA book's, every
// element 1.23f (host/reduce/mod.rs, book_input). One launch per measurement; the counter is
// zeroed before each (untimed, as gridsync's reset); every trial's result must be the same bits
// (gridsync's check for a deterministic kernel) and within 1e-4 of the float64 reference.
//
// reduce_warp (gpu/src/lessons/reduce/warp.rs): an f32 sum per thread over a grid-stride loop,
// the block's sum (the same block reduction), thread 0's relaxed device-scope atomicAdd into
// the result (zeroed before each launch, untimed). Blocks of 256, one full wave over len
// elements (gridsync's row's grid), block_reduce_shared_bytes::<f32>(256) = 32 bytes. Its sum
// is not deterministic (the blocks' order): every trial within 1e-3 of the float64 reference.
//
// The source's steps, each its own launch, reset and check (gpu/src/lessons/reduce/tree.rs and
// last_block.rs; shapes from host/reduce/mod.rs's shape_of and config_for and steps.rs):
//
// partial_reduce (the Numba tutorial's): a float64 sum per thread over a grid-stride loop, stored
// as f32 in the thread's slot of blockDim.x floats, a barrier, then shared_tree (slot tid += slot
// tid + offset for offset = blockDim.x / 2, …, 1, a barrier after each round; 64-bit indices, as
// the Rust's usize); thread 0 writes slot 0 to partial_reduction[blockIdx.x]. Blocks of 256, the
// source's 32 × 40 of them (fewer if len needs fewer; run.sh passes gridsync's), 256 floats of
// dynamic shared memory. Nothing is reset; after the timed launch the host downloads the
// partials and adds them in float64 in block order (untimed, as gridsync's result()). The same
// bits every trial (gridsync's check for a deterministic step).
//
// reduce_atomic (the CUDA book's, section 9.1): one element per thread (0 past the end) in its
// slot of blockDim.x floats, a barrier, the same shared_tree, thread 0's relaxed device-scope
// atomicAdd of slot 0 into the result. The book's grid: (len + 127) / 128 blocks of 128, 128
// floats of dynamic shared memory (BLOCKS, if given, must be that grid); the result is zeroed
// before each launch, untimed (gridsync's reset, the book's `*d_y = 0`).
//
// reduce_last_block_sum_f32 (step (d), last_block.rs's last_block::<SumF32>): an f32 sum per
// thread over index::grid_stride(n), `(id.min(n)..n).step_by(stride)` — a StepBy, which Rust
// runs as a step count fixed up front (the range's length over the stride, rounded up) and an
// index that moves by the stride each step; the loop below keeps that shape — then the same
// finish_in_last_block as reduce_vec_sum_f32. Launch as host/reduce/single_pass.rs
// (SinglePassKernel::LastBlock): blocks of 256, one full wave over len elements (gridsync's row's
// grid), last_block_shared_bytes = 48 bytes; the counter is zeroed before each launch (untimed).
// The same bits every trial.
//
// Bounds: the reference is 1.23f · len in float64 (Σ|x| too: every element is positive). Each
// step's result must be within γ_d · Σ|x| of it, Higham's bound for a sum in which every element
// passes through at most d roundings of unit u: γ_d = d·u / (1 − d·u), u = 2⁻²⁴ for f32, 2⁻⁵³
// for f64 (no bound once d·u ≥ 1). partial_reduce: the f32 conversion and log2(256) tree levels
// in f32, the thread's and the host's chains in f64; reduce_atomic: log2(128) tree levels and one
// rounding per block's atomic (the book's sum is 5·10⁻³ off at 10⁸, within γ ≈ 4.9·10⁻²);
// reduce_last_block_sum_f32: the thread's steps, two block reductions of 10 shuffle levels each,
// and the last block's steps over the partials.
//
//   nvcc -O3 -arch=sm_90 -lineinfo -o reduce reduce.cu
//   ./reduce vec|warp|partial|atomic|last_block [LEN] [TRIALS] [BLOCKS]
#include <cstring>

#include "bandwidth.cuh"
#include "device.cuh"
#include "reduce.cuh"

using namespace twin;

constexpr unsigned THREADS_PER_BLOCK = 256;
// The CUDA book's value (gridsync's BOOK_VALUE).
constexpr float BOOK_VALUE = 1.23f;

// vec.rs's reduce_vec_sum_f32 (vec_reduce::<SumF32>): reduce.cuh's vec_reduce but for the head
// and tail, whose loop here reads the stride again each step where vec_reduce's
// grid_stride_each (and gridsync's) reads it once. nvcc schedules the two differently, the body
// loop too: this kernel keeps its loop, and so the SASS its timings were taken with.
__global__ void reduce_vec_sum_f32(const float* x, unsigned long long n, float* partials,
                                   unsigned* count, float* result) {
    Split16<float> split(x, n);
    float acc = 0.0f;
    for (size_t k = global_id_x(); k < split.scalars(); k += threads_per_grid_x())
        acc = acc + x[split.scalar_index(k)];
    auto load = [x, split](size_t v) { return split.load(x, v); };
    acc = combine_strided<SumF32>(acc, load, global_id_x(), split.body, threads_per_grid_x());
    finish_in_last_block(acc, partials, count, result);
}

__global__ void reduce_warp(const float* x, unsigned long long n, float* result) {
    float s_thread = 0.0f;
    for (size_t i = global_id_x(); i < n; i += threads_per_grid_x()) s_thread += x[i];
    float block_sum = block_reduce_sum(s_thread);
    if (threadIdx.x == 0) atomic_add_device(result, block_sum);
}

// The source's launch shapes (gpu/src/lessons/reduce/mod.rs): NUMBA_THREADS_PER_BLOCK and
// NUMBA_BLOCKS_PER_GRID for partial_reduce, BOOK_BLOCK_SIZE for reduce_atomic.
constexpr unsigned NUMBA_THREADS_PER_BLOCK = 256;
constexpr unsigned NUMBA_BLOCKS_PER_GRID = 32 * 40;
constexpr unsigned BOOK_BLOCK_SIZE = 128;

// tree.rs's partial_reduce: a float64 sum per thread, its f32 slot, the tree, one partial per
// block (reduce.cuh); the host adds the partials.
__global__ void partial_reduce(const float* array, unsigned long long size,
                               float* partial_reduction) {
    partial_reduce_body(array, size, partial_reduction);
}

// tree.rs's reduce_atomic (book_reduce::<f32>): one element per thread, the tree, thread 0's
// relaxed device-scope atomicAdd.
__global__ void reduce_atomic(const float* d_x, float* d_y, unsigned long long n_total) {
    size_t tid = threadIdx.x;
    size_t bid = blockIdx.x;
    size_t n = bid * blockDim.x + tid;
    float* s_y = dynamic_shared<float>();
    s_y[tid] = n < n_total ? d_x[n] : 0.0f;
    __syncthreads();
    float block_sum = shared_tree(s_y);
    if (tid == 0) atomic_add_device(d_y, block_sum);
}

// last_block.rs's reduce_last_block_sum_f32 (last_block::<SumF32>): an f32 sum per thread over
// grid_stride(n) (device.cuh: a step count running down, as StepBy's next() runs), then
// finish_in_last_block.
__global__ void reduce_last_block_sum_f32(const float* x, unsigned long long n, float* partials,
                                          unsigned* count, float* result) {
    float acc = 0.0f;
    grid_stride(n, [&](size_t i) { acc = acc + x[i]; });
    finish_in_last_block(acc, partials, count, result);
}

unsigned log2_of(unsigned power_of_two) {
    unsigned k = 0;
    while ((1u << k) < power_of_two) ++k;
    return k;
}

// The JSON members of a result: its value, its error relative to `expected`, and the bound.
std::string value_members(double value, double expected, double bound) {
    char extra[192];
    std::snprintf(extra, sizeof extra,
                  ", \"value\": %.17g, \"rel_error\": %.3e, \"rel_bound\": %.3e", value,
                  std::fabs(value - expected) / expected, bound);
    return extra;
}

void check_within(const char* kernel, double value, double expected, double bound) {
    double rel = std::fabs(value - expected) / expected;
    if (!(rel <= bound))
        mismatch(std::string(kernel) + " gave " + std::to_string(value) + ", float64 " +
                 std::to_string(expected) + " (relative error " + std::to_string(rel) +
                 ", allowed " + std::to_string(bound) + ")");
}

// A deterministic step's results: every trial's bits must be the first's.
template <class T>
struct SameBits {
    T first{};
    bool have = false;
    void check(const char* kernel, T value) {
        if (!have) {
            first = value;
            have = true;
        } else if (std::memcmp(&first, &value, sizeof value) != 0) {
            mismatch(std::string(kernel) + " gave different bits on one input");
        }
    }
};

// (a): the source's grid, nothing to reset, the host's float64 sum of the partials untimed.
int run_partial(size_t len, int trials, unsigned want_blocks, double copy, const float* x,
                double expected) {
    unsigned threads = NUMBA_THREADS_PER_BLOCK;
    unsigned shared = threads * unsigned(sizeof(float));
    // config_for: the source's grid, fewer blocks if len needs fewer, at least one.
    size_t needed = (len + threads - 1) / threads;
    if (needed > NUMBA_BLOCKS_PER_GRID) needed = NUMBA_BLOCKS_PER_GRID;
    if (needed < 1) needed = 1;
    unsigned blocks = want_blocks ? want_blocks : unsigned(needed);
    // The f32 conversion and the tree's levels; the thread's float64 chain and the host's.
    size_t per_thread = (len + size_t(blocks) * threads - 1) / (size_t(blocks) * threads);
    double bound = gamma_bound(1 + log2_of(threads), F32_UNIT) +
                   gamma_bound(double(per_thread) + blocks, F64_UNIT);
    float* partials = nullptr;
    TWIN_CHECK(cudaMalloc(&partials, blocks * sizeof(float)));
    TWIN_CHECK(cudaMemset(partials, 0, blocks * sizeof(float)));
    std::vector<float> host(blocks);
    double value = 0.0;
    SameBits<double> same;
    auto ms = time_trials(
        trials, [] {},
        [&] { partial_reduce<<<blocks, threads, shared>>>(x, len, partials); },
        [&] {
            TWIN_CHECK(cudaMemcpy(host.data(), partials, blocks * sizeof(float),
                                  cudaMemcpyDeviceToHost));
            value = 0.0;
            for (float p : host) value += double(p);
            same.check("partial_reduce", value);
            check_within("partial_reduce", value, expected, bound);
        });
    print_report({"reduce", "partial_reduce", len, len * sizeof(float), blocks, threads, shared,
                  trials, copy, value_members(value, expected, bound)},
                 ms);
    TWIN_CHECK(cudaFree(partials));
    return 0;
}

// A step that adds into one float, zeroed before each launch (untimed): `launch(result)` timed
// over `trials`, the float checked against `expected` within `bound` after each, the report
// named `name`.
template <class Launch>
int time_one_float(const char* name, Launch launch, size_t len, unsigned blocks,
                   unsigned threads, unsigned shared, int trials, double copy, double expected,
                   double bound) {
    float* result = nullptr;
    TWIN_CHECK(cudaMalloc(&result, sizeof(float)));
    float value = 0.0f;
    auto ms = time_trials(
        trials, [&] { TWIN_CHECK(cudaMemset(result, 0, sizeof(float))); },
        [&] { launch(result); },
        [&] {
            TWIN_CHECK(cudaMemcpy(&value, result, sizeof(float), cudaMemcpyDeviceToHost));
            check_within(name, double(value), expected, bound);
        });
    print_report({"reduce", name, len, len * sizeof(float), blocks, threads, shared, trials,
                  copy, value_members(double(value), expected, bound)},
                 ms);
    TWIN_CHECK(cudaFree(result));
    return 0;
}

// (b): the book's grid, one element per thread; the result zeroed before each launch, untimed.
int run_atomic(size_t len, int trials, unsigned want_blocks, double copy, const float* x,
               double expected) {
    unsigned threads = BOOK_BLOCK_SIZE;
    unsigned shared = threads * unsigned(sizeof(float));
    size_t book_blocks = (len + threads - 1) / threads;
    if (book_blocks > 0x7fffffffu) {
        std::fprintf(stderr, "%zu elements need more than 2^31 - 1 blocks of %u\n", len, threads);
        return 2;
    }
    unsigned blocks = unsigned(book_blocks);
    if (want_blocks && want_blocks != blocks) {
        std::fprintf(stderr, "reduce_atomic launches the book's grid, %u blocks for %zu elements, "
                             "not %u\n", blocks, len, want_blocks);
        return 2;
    }
    // The tree's levels, then one rounding per block's atomic on the running total.
    double bound = gamma_bound(double(log2_of(threads)) + blocks, F32_UNIT);
    auto launch = [&](float* d_y) { reduce_atomic<<<blocks, threads, shared>>>(x, d_y, len); };
    return time_one_float("reduce_atomic", launch, len, blocks, threads, shared, trials, copy,
                          expected, bound);
}

// A step finished by the last block: `launch(partials, count, result)` timed over `trials`, the
// ticket counter zeroed before each launch (untimed), the result's bits the same every trial
// and within `bound` of `expected`, the report named `name`.
template <class Launch>
int time_last_block(const char* name, Launch launch, size_t len, unsigned blocks,
                    unsigned shared, int trials, double copy, double expected, double bound) {
    float *partials = nullptr, *result = nullptr;
    unsigned* count = nullptr;
    TWIN_CHECK(cudaMalloc(&partials, blocks * sizeof(float)));
    TWIN_CHECK(cudaMalloc(&result, sizeof(float)));
    TWIN_CHECK(cudaMalloc(&count, sizeof(unsigned)));
    TWIN_CHECK(cudaMemset(count, 0, sizeof(unsigned)));
    float value = 0.0f;
    SameBits<float> same;
    auto ms = time_trials(
        trials, [&] { TWIN_CHECK(cudaMemset(count, 0, sizeof(unsigned))); },
        [&] { launch(partials, count, result); },
        [&] {
            TWIN_CHECK(cudaMemcpy(&value, result, sizeof(float), cudaMemcpyDeviceToHost));
            same.check(name, value);
            check_within(name, double(value), expected, bound);
        });
    print_report({"reduce", name, len, len * sizeof(float), blocks, THREADS_PER_BLOCK, shared,
                  trials, copy, value_members(double(value), expected, bound)},
                 ms);
    TWIN_CHECK(cudaFree(partials));
    TWIN_CHECK(cudaFree(result));
    TWIN_CHECK(cudaFree(count));
    return 0;
}

// (d): one full wave over len elements, the counter zeroed before each launch, untimed.
int run_last_block(size_t len, int trials, unsigned want_blocks, double copy, const float* x,
                   double expected) {
    unsigned shared = last_block_shared_bytes(THREADS_PER_BLOCK, sizeof(float));
    unsigned blocks =
        one_wave(reduce_last_block_sum_f32, len, THREADS_PER_BLOCK, shared, want_blocks);
    // The thread's steps, its block's reduction (5 + 5 shuffle levels), the last block's steps
    // over the partials and its reduction.
    size_t threads = size_t(blocks) * THREADS_PER_BLOCK;
    size_t per_thread = (len + threads - 1) / threads;
    size_t per_partial = (blocks + THREADS_PER_BLOCK - 1) / THREADS_PER_BLOCK;
    double bound = gamma_bound(double(per_thread) + 10 + double(per_partial) + 10, F32_UNIT);
    auto launch = [&](float* partials, unsigned* count, float* result) {
        reduce_last_block_sum_f32<<<blocks, THREADS_PER_BLOCK, shared>>>(x, len, partials, count,
                                                                        result);
    };
    return time_last_block("reduce_last_block_sum_f32", launch, len, blocks, shared, trials,
                           copy, expected, bound);
}

// The warp-shuffle step: its own launch, reset and check (not deterministic: a bound).
int run_warp(size_t len, int trials, unsigned want_blocks, double copy, const float* x,
             double expected) {
    unsigned shared = block_reduce_shared_bytes(THREADS_PER_BLOCK, sizeof(float));
    unsigned blocks = one_wave(reduce_warp, len, THREADS_PER_BLOCK, shared, want_blocks);
    auto launch = [&](float* result) {
        reduce_warp<<<blocks, THREADS_PER_BLOCK, shared>>>(x, len, result);
    };
    // A bound, not the bits: the blocks' atomics land in any order.
    return time_one_float("reduce_warp", launch, len, blocks, THREADS_PER_BLOCK, shared, trials,
                          copy, expected, 1e-3);
}

int main(int argc, char** argv) {
    std::string which = argc > 1 ? argv[1] : "vec";
    if (which != "vec" && which != "warp" && which != "partial" && which != "atomic" &&
        which != "last_block") {
        std::fprintf(stderr,
                     "usage: %s vec|warp|partial|atomic|last_block [LEN] [TRIALS] [BLOCKS]\n",
                     argv[0]);
        return 2;
    }
    size_t len = arg_size(argc, argv, 2, 100000000);
    int trials = int(arg_size(argc, argv, 3, DEFAULT_TRIALS));
    unsigned want_blocks = unsigned(arg_size(argc, argv, 4, 0, false));

    double copy = copy_gb_per_s(COPY_BYTES, trials);

    std::vector<float> host(len, BOOK_VALUE);
    double expected = double(BOOK_VALUE) * double(len);  // float64, exact enough: the reference
    float* x = nullptr;
    TWIN_CHECK(cudaMalloc(&x, len * sizeof(float)));
    TWIN_CHECK(cudaMemcpy(x, host.data(), len * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<float>().swap(host);
    if (which != "vec") {
        auto run = which == "warp"      ? run_warp
                   : which == "partial" ? run_partial
                   : which == "atomic"  ? run_atomic
                                        : run_last_block;
        int rc = run(len, trials, want_blocks, copy, x, expected);
        TWIN_CHECK(cudaFree(x));
        return rc;
    }

    unsigned shared = last_block_shared_bytes(THREADS_PER_BLOCK, sizeof(float));
    size_t work = (len + 3) / 4;
    unsigned blocks = one_wave(reduce_vec_sum_f32, work, THREADS_PER_BLOCK, shared, want_blocks);
    auto launch = [&](float* partials, unsigned* count, float* result) {
        reduce_vec_sum_f32<<<blocks, THREADS_PER_BLOCK, shared>>>(x, len, partials, count,
                                                                 result);
    };
    int rc = time_last_block("reduce_vec_sum_f32", launch, len, blocks, shared, trials, copy,
                             expected, 1e-4);
    TWIN_CHECK(cudaFree(x));
    return rc;
}
