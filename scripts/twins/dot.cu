// The nvcc twin of `gridsync bench dot`'s fast kernel: `dot_vec4` (gpu/src/lessons/dot.rs;
// Split4::of_pair and grid_stride_unrolled from gpu/src/primitives/vector.rs, block_reduce_sum
// from gpu/src/primitives/block_reduce.rs).
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
//   nvcc -O3 -arch=sm_90 -lineinfo -o dot dot.cu && ./dot [N] [TRIALS] [BLOCKS]
#include "bandwidth.cuh"
#include "device.cuh"

using namespace twin;

constexpr unsigned THREADS_PER_BLOCK = 256;
constexpr int VEC4_UNROLL = 4;
// cli/src/bench/dot.rs's SEED and host/dot/mod.rs's TOLERANCE.
constexpr uint64_t SEED = 0x646f74ull;
constexpr double TOLERANCE = 1e-4;

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

int main(int argc, char** argv) {
    size_t n = arg_size(argc, argv, 1, 10000000);
    int trials = int(arg_size(argc, argv, 2, DEFAULT_TRIALS));
    unsigned want_blocks = unsigned(arg_size(argc, argv, 3, 0, false));

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

    unsigned shared = block_reduce_shared_bytes(THREADS_PER_BLOCK, sizeof(float));
    size_t work = (n + 3) / 4;
    unsigned blocks = one_wave(dot_vec4, work, THREADS_PER_BLOCK, shared, want_blocks);
    float* c = nullptr;
    TWIN_CHECK(cudaMalloc(&c, sizeof(float)));

    float got = 0.0f;
    double bound = TOLERANCE * sum_abs;
    auto ms = time_trials(
        trials, [&] { TWIN_CHECK(cudaMemset(c, 0, sizeof(float))); },
        [&] { dot_vec4<<<blocks, THREADS_PER_BLOCK, shared>>>(a, b, n, c); },
        [&] {
            TWIN_CHECK(cudaMemcpy(&got, c, sizeof got, cudaMemcpyDeviceToHost));
            if (!(std::fabs(double(got) - dot) <= bound))
                mismatch("dot_vec4 gave " + std::to_string(got) + ", the CPU " +
                         std::to_string(dot) + " (allowed error " + std::to_string(bound) + ")");
        });
    char extra[128];
    std::snprintf(extra, sizeof extra, ", \"value\": %.9g, \"rel_error\": %.3e", double(got),
                  dot == double(got) ? 0.0 : std::fabs(double(got) - dot) / std::fabs(dot));
    print_report({"dot", "dot_vec4", n, 2 * n * sizeof(float), blocks, THREADS_PER_BLOCK, shared,
                  trials, copy, extra},
                 ms);
    TWIN_CHECK(cudaFree(a));
    TWIN_CHECK(cudaFree(b));
    TWIN_CHECK(cudaFree(c));
    return 0;
}
