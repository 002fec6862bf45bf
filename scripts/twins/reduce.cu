// The nvcc twin of `gridsync bench reduce`'s fast f32 sum: `reduce_vec_sum_f32`
// (gpu/src/lessons/reduce/vec.rs, `vec_reduce::<SumF32>` and `combine_strided`, finished by
// `finish_in_last_block` in gpu/src/lessons/reduce/last_block.rs; the block reduction is
// gpu/src/primitives/block_reduce.rs's `block_reduce`).
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
//   nvcc -O3 -arch=sm_90 -lineinfo -o reduce reduce.cu
//   ./reduce vec|warp [LEN] [TRIALS] [BLOCKS]
#include <cstring>

#include "bandwidth.cuh"
#include "device.cuh"

using namespace twin;

constexpr unsigned THREADS_PER_BLOCK = 256;
constexpr int VEC_UNROLL = 4;
// The CUDA book's value (gridsync's BOOK_VALUE).
constexpr float BOOK_VALUE = 1.23f;

// Where finish_in_last_block keeps its "this block is last" flag: after the scratch, at 16.
__host__ __device__ constexpr unsigned flag_offset(unsigned threads) {
    return (block_reduce_shared_bytes(threads, sizeof(float)) + 15) / 16 * 16;
}
constexpr unsigned last_block_shared_bytes(unsigned threads) { return flag_offset(threads) + 16; }

// One float4 as its lanes' tree.
__device__ __forceinline__ float lift_vec(float4 v) { return (v.x + v.y) + (v.z + v.w); }

// Reduces `mine` over the block, publishes it, and in the block that finishes last combines
// every block's partial and writes the result.
__device__ __forceinline__ void finish_in_last_block(float mine, float* partials, unsigned* count,
                                                     float* result) {
    unsigned tid = threadIdx.x;
    unsigned blocks = gridDim.x;
    unsigned* am_last = reinterpret_cast<unsigned*>(dynamic_shared<unsigned char>() +
                                                    flag_offset(blockDim.x));

    // PHASE 1: this block's sum, written to its slot; then the ticket.
    float block_acc = block_reduce(mine, 0.0f, Add{});
    if (tid == 0) {
        partials[blockIdx.x] = block_acc;
        // The partial is visible to every block before the ticket that says it is.
        __threadfence();
        unsigned ticket = atomicInc(count, blocks);
        bool last = ticket == blocks - 1;
        if (last) cuda::atomic_thread_fence(cuda::memory_order_acq_rel, cuda::thread_scope_device);
        *am_last = last;
    }
    __syncthreads();
    if (*am_last == 0) return;

    // PHASE 2: the last block adds the partials in block order.
    float acc = 0.0f;
    for (unsigned i = tid; i < blocks; i += blockDim.x) acc = acc + partials[i];
    float total = block_reduce(acc, 0.0f, Add{});
    if (tid == 0) {
        *result = total;
        cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*count).store(
            0, cuda::memory_order_relaxed);
    }
}

__global__ void reduce_vec_sum_f32(const float* x, unsigned long long n, float* partials,
                                   unsigned* count, float* result) {
    Split16<float> split(x, n);
    float acc = 0.0f;
    for (size_t k = global_id_x(); k < split.scalars(); k += threads_per_grid_x())
        acc = acc + x[split.scalar_index(k)];

    // combine_strided: four loads in flight, added as a tree, then the rest one at a time.
    size_t v = global_id_x(), end = split.body, stride = threads_per_grid_x();
    while (v + (VEC_UNROLL - 1) * stride < end) {
        float4 v0 = split.load(x, v), v1 = split.load(x, v + stride);
        float4 v2 = split.load(x, v + 2 * stride), v3 = split.load(x, v + 3 * stride);
        float left = lift_vec(v0) + lift_vec(v1);
        float right = lift_vec(v2) + lift_vec(v3);
        acc = acc + (left + right);
        v += VEC_UNROLL * stride;
    }
    while (v < end) {
        acc = acc + lift_vec(split.load(x, v));
        v += stride;
    }
    finish_in_last_block(acc, partials, count, result);
}

__global__ void reduce_warp(const float* x, unsigned long long n, float* result) {
    float s_thread = 0.0f;
    for (size_t i = global_id_x(); i < n; i += threads_per_grid_x()) s_thread += x[i];
    float block_sum = block_reduce_sum(s_thread);
    if (threadIdx.x == 0) atomic_add_device(result, block_sum);
}

// The warp-shuffle step: its own launch, reset and check (not deterministic: a bound).
int run_warp(size_t len, int trials, unsigned want_blocks, double copy, const float* x,
             double expected) {
    unsigned shared = block_reduce_shared_bytes(THREADS_PER_BLOCK, sizeof(float));
    unsigned blocks = one_wave(reduce_warp, len, THREADS_PER_BLOCK, shared, want_blocks);
    float* result = nullptr;
    TWIN_CHECK(cudaMalloc(&result, sizeof(float)));
    float value = 0.0f;
    auto ms = time_trials(
        trials, [&] { TWIN_CHECK(cudaMemset(result, 0, sizeof(float))); },
        [&] { reduce_warp<<<blocks, THREADS_PER_BLOCK, shared>>>(x, len, result); },
        [&] {
            TWIN_CHECK(cudaMemcpy(&value, result, sizeof(float), cudaMemcpyDeviceToHost));
            double rel = std::fabs(double(value) - expected) / expected;
            if (!(rel <= 1e-3))
                mismatch("reduce_warp gave " + std::to_string(value) + ", float64 " +
                         std::to_string(expected));
        });
    char extra[160];
    std::snprintf(extra, sizeof extra, ", \"value\": %.9g, \"rel_error\": %.3e", double(value),
                  std::fabs(double(value) - expected) / expected);
    print_report({"reduce", "reduce_warp", len, len * sizeof(float), blocks, THREADS_PER_BLOCK,
                  shared, trials, copy, extra},
                 ms);
    TWIN_CHECK(cudaFree(result));
    return 0;
}

int main(int argc, char** argv) {
    std::string which = argc > 1 ? argv[1] : "vec";
    if (which != "vec" && which != "warp") {
        std::fprintf(stderr, "usage: %s vec|warp [LEN] [TRIALS] [BLOCKS]\n", argv[0]);
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
    if (which == "warp") {
        int rc = run_warp(len, trials, want_blocks, copy, x, expected);
        TWIN_CHECK(cudaFree(x));
        return rc;
    }

    unsigned shared = last_block_shared_bytes(THREADS_PER_BLOCK);
    size_t work = (len + 3) / 4;
    unsigned blocks = one_wave(reduce_vec_sum_f32, work, THREADS_PER_BLOCK, shared, want_blocks);
    float *partials = nullptr, *result = nullptr;
    unsigned* count = nullptr;
    TWIN_CHECK(cudaMalloc(&partials, blocks * sizeof(float)));
    TWIN_CHECK(cudaMalloc(&result, sizeof(float)));
    TWIN_CHECK(cudaMalloc(&count, sizeof(unsigned)));
    TWIN_CHECK(cudaMemset(count, 0, sizeof(unsigned)));

    uint32_t first_bits = 0;
    bool have_first = false;
    float value = 0.0f;
    auto ms = time_trials(
        trials, [&] { TWIN_CHECK(cudaMemset(count, 0, sizeof(unsigned))); },
        [&] {
            reduce_vec_sum_f32<<<blocks, THREADS_PER_BLOCK, shared>>>(x, len, partials, count,
                                                                     result);
        },
        [&] {
            TWIN_CHECK(cudaMemcpy(&value, result, sizeof(float), cudaMemcpyDeviceToHost));
            uint32_t bits;
            std::memcpy(&bits, &value, sizeof bits);
            if (!have_first) {
                first_bits = bits;
                have_first = true;
            }
            if (bits != first_bits) mismatch("reduce_vec_sum_f32 gave different bits on one input");
            double rel = std::fabs(double(value) - expected) / expected;
            if (!(rel <= 1e-4))
                mismatch("reduce_vec_sum_f32 gave " + std::to_string(value) + ", float64 " +
                         std::to_string(expected));
        });
    char extra[160];
    std::snprintf(extra, sizeof extra, ", \"value\": %.9g, \"rel_error\": %.3e", double(value),
                  std::fabs(double(value) - expected) / expected);
    print_report({"reduce", "reduce_vec_sum_f32", len, len * sizeof(float), blocks,
                  THREADS_PER_BLOCK, shared, trials, copy, extra},
                 ms);
    TWIN_CHECK(cudaFree(x));
    TWIN_CHECK(cudaFree(partials));
    TWIN_CHECK(cudaFree(result));
    TWIN_CHECK(cudaFree(count));
    return 0;
}
