// The nvcc twins of `gridsync bench dot`'s kernels (gpu/src/lessons/dot.rs): the source's
// `dot_partial` and `dot_atomic` (block_sum: a float64 sum per thread over a grid-stride loop,
// stored as f32, the block's tree in blockDim.x floats of shared memory; the partials to the
// host, added there in float64 after the timed launch, or one atomicAdd per block), on the
// source's grid of 32 × 20 blocks of 256; and the fast kernel `dot_vec4` (Split4::of_pair and
// grid_stride_unrolled from gpu/src/primitives/vector.rs, block_reduce_sum from
// gpu/src/primitives/block_reduce.rs), described here:
//
// Work split, as gridsync's: four f32 sums per thread (one per lane of a float4); the scalar
// head and tail (one Split shared by a and b, all head if they are misaligned unalike) into the
// first; the body with VEC4_UNROLL = 4 steps of a float4 of a and one of b each (eight 16-byte
// loads per unrolled step); the thread's sum (acc0 + acc1) + (acc2 + acc3); the block's sum
// (shuffles, one slot per warp, one barrier); thread 0 adds it to *c with one relaxed
// device-scope float atomic.
//
// Rounding, as gridsync's: Rust never contracts a * b + c into an FMA (its PTX has `mul.rn.f32`
// and `add.rn.f32`), nvcc does by default (--fmad=true); the products and sums are written with
// __fmul_rn and __fadd_rn, which nvcc never fuses, so both sides round alike.
//
// Launch shape, as host/dot/mod.rs (config_for, DotKernel::Vec4): blocks of
// THREADS_PER_BLOCK = 256, one full wave over n / 4 vectors (the occupancy calculator's, or the
// BLOCKS argument: run.sh passes gridsync's), dynamic shared memory
// block_reduce_shared_bytes::<f32>(256) = 32 bytes. Input: cli/src/bench/dot.rs's,
// a = uniform_f32(n, 0x646f74, 0, 1), b = uniform_f32(n, !0x646f74, 0, 1). One launch per
// measurement; c is zeroed before it (untimed), and every trial's result must be within
// 1e-4 · Σ|a·b| of the float64 dot (gridsync's check).
//
//   nvcc -O3 -arch=sm_90 -lineinfo -o dot dot.cu && ./dot partial|atomic|vec4 [N] [TRIALS] [BLOCKS]
#include "bandwidth.cuh"
#include "device.cuh"

using namespace twin;

constexpr unsigned THREADS_PER_BLOCK = 256;
// The source's grid for its kernels (gpu/src/lessons/dot.rs, BLOCKS_PER_GRID).
constexpr unsigned BLOCKS_PER_GRID = 32 * 20;
constexpr int VEC4_UNROLL = 4;
// cli/src/bench/dot.rs's SEED and host/dot/mod.rs's TOLERANCE.
constexpr uint64_t SEED = 0x646f74ull;
constexpr double TOLERANCE = 1e-4;

// The source kernels' shared part (gpu/src/lessons/dot.rs, block_sum): a float64 sum per thread
// over a grid-stride loop of a[i]·b[i] (the product in f32), stored as f32 in its slot of
// blockDim.x floats, then the block's tree (i = blockDim/2, …, 1: slot tid += slot tid + i, a
// barrier each round). The block's sum is slot 0, read by thread 0.
__device__ __forceinline__ float block_sum(const float* a, const float* b, unsigned long long n) {
    double s_thread = 0.0;
    for (size_t i = global_id_x(); i < n; i += threads_per_grid_x())
        s_thread += double(__fmul_rn(a[i], b[i]));
    float* s_block = dynamic_shared<float>();
    unsigned tid = threadIdx.x;
    s_block[tid] = float(s_thread);
    __syncthreads();
    for (unsigned i = blockDim.x / 2; i > 0; i /= 2) {
        if (tid < i) s_block[tid] = s_block[tid] + s_block[tid + i];
        __syncthreads();
    }
    return s_block[tid];
}

// Numba's dot_partial: the block's sum to partial_c[blockIdx.x]; the host adds them.
__global__ void dot_partial(const float* a, const float* b, unsigned long long n,
                            float* partial_c) {
    float s = block_sum(a, b, n);
    if (threadIdx.x == 0) partial_c[blockIdx.x] = s;
}

// dot_atomic: thread 0 adds the block's sum with one relaxed device-scope atomicAdd.
__global__ void dot_atomic(const float* a, const float* b, unsigned long long n, float* c) {
    float s = block_sum(a, b, n);
    if (threadIdx.x == 0) atomic_add_device(c, s);
}

__global__ void dot_vec4(const float* a, const float* b, unsigned long long n, float* c) {
    Split16<float> split = Split16<float>::of_pair(a, b, n);
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    size_t k = global_id_x();
    while (k < split.scalars()) {
        size_t i = split.scalar_index(k);
        acc[0] = __fadd_rn(acc[0], __fmul_rn(a[i], b[i]));
        k += threads_per_grid_x();
    }
    grid_stride_unrolled<VEC4_UNROLL>(split.body, [&](size_t v) {
        float4 x = split.load(a, v), y = split.load(b, v);
        acc[0] = __fadd_rn(acc[0], __fmul_rn(x.x, y.x));
        acc[1] = __fadd_rn(acc[1], __fmul_rn(x.y, y.y));
        acc[2] = __fadd_rn(acc[2], __fmul_rn(x.z, y.z));
        acc[3] = __fadd_rn(acc[3], __fmul_rn(x.w, y.w));
    });
    float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    float total = block_reduce_sum(s);
    if (threadIdx.x == 0) atomic_add_device(c, total);
}

using DotKernel = void (*)(const float*, const float*, unsigned long long, float*);

int main(int argc, char** argv) {
    std::string which = argc > 1 ? argv[1] : "vec4";
    DotKernel kernel = which == "partial"  ? dot_partial
                       : which == "atomic" ? dot_atomic
                       : which == "vec4"   ? dot_vec4
                                           : nullptr;
    if (kernel == nullptr) {
        std::fprintf(stderr, "usage: %s partial|atomic|vec4 [N] [TRIALS] [BLOCKS]\n", argv[0]);
        return 2;
    }
    std::string name = "dot_" + which;
    size_t n = arg_size(argc, argv, 2, 10000000);
    int trials = int(arg_size(argc, argv, 3, DEFAULT_TRIALS));
    unsigned want_blocks = unsigned(arg_size(argc, argv, 4, 0, false));

    double copy = copy_gb_per_s(COPY_BYTES, trials);

    double dot = 0.0, sum_abs = 0.0;
    float *a = nullptr, *b = nullptr;
    {
        std::vector<float> ha = uniform_f32(n, SEED, 0.0f, 1.0f);
        std::vector<float> hb = uniform_f32(n, ~SEED, 0.0f, 1.0f);
        for (size_t i = 0; i < n; ++i) {
            double p = double(ha[i]) * double(hb[i]);
            dot += p;
            sum_abs += std::fabs(p);
        }
        TWIN_CHECK(cudaMalloc(&a, n * sizeof(float)));
        TWIN_CHECK(cudaMalloc(&b, n * sizeof(float)));
        TWIN_CHECK(cudaMemcpy(a, ha.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        TWIN_CHECK(cudaMemcpy(b, hb.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    }

    // The source's kernels: the source's grid (BLOCKS_PER_GRID, or gridsync's row), a float
    // per thread of shared memory; dot_vec4: one full wave over n / 4 vectors.
    bool vec4 = which == "vec4";
    unsigned shared = vec4 ? block_reduce_shared_bytes(THREADS_PER_BLOCK, sizeof(float))
                           : THREADS_PER_BLOCK * unsigned(sizeof(float));
    unsigned blocks = vec4 ? one_wave(dot_vec4, (n + 3) / 4, THREADS_PER_BLOCK, shared, want_blocks)
                           : (want_blocks ? want_blocks : BLOCKS_PER_GRID);
    float* c = nullptr;
    TWIN_CHECK(cudaMalloc(&c, blocks * sizeof(float)));

    float got = 0.0f;
    double bound = TOLERANCE * sum_abs;
    std::vector<float> partials(blocks);
    auto ms = time_trials(
        trials, [&] { TWIN_CHECK(cudaMemset(c, 0, sizeof(float))); },
        [&] { kernel<<<blocks, THREADS_PER_BLOCK, shared>>>(a, b, n, c); },
        [&] {
            if (which == "partial") {
                TWIN_CHECK(cudaMemcpy(partials.data(), c, blocks * sizeof(float),
                                      cudaMemcpyDeviceToHost));
                double sum = 0.0;
                for (float p : partials) sum += double(p);
                got = float(sum);
            } else {
                TWIN_CHECK(cudaMemcpy(&got, c, sizeof got, cudaMemcpyDeviceToHost));
            }
            if (!(std::fabs(double(got) - dot) <= bound))
                mismatch(name + " gave " + std::to_string(got) + ", the CPU " +
                         std::to_string(dot) + " (allowed error " + std::to_string(bound) + ")");
        });
    char extra[128];
    std::snprintf(extra, sizeof extra, ", \"value\": %.9g, \"rel_error\": %.3e", double(got),
                  dot == double(got) ? 0.0 : std::fabs(double(got) - dot) / std::fabs(dot));
    print_report({"dot", name.c_str(), n, 2 * n * sizeof(float), blocks, THREADS_PER_BLOCK,
                  shared, trials, copy, extra},
                 ms);
    TWIN_CHECK(cudaFree(a));
    TWIN_CHECK(cudaFree(b));
    TWIN_CHECK(cudaFree(c));
    return 0;
}
