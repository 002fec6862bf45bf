// The nvcc twin of `gridsync bench count-above`'s fast kernel: `gt_thr_cnt_vec4`
// (gpu/src/lessons/count_above.rs; Split4 and grid_stride_unrolled from
// gpu/src/primitives/vector.rs, block_reduce_sum from gpu/src/primitives/block_reduce.rs).
//
// Work split, as gridsync's: a u32 count per thread — a grid-stride loop over the scalar head
// and tail, then the float4 body with VEC4_UNROLL = 4 loads per step (grid_stride_unrolled:
// four strides of straight-line code, then the rest one at a time), each float counted when
// strictly above the threshold (a NaN never counts); the block's sum as a u64 (shuffles, one
// slot per warp, one barrier); thread 0 adds a non-zero total to *cnt with one relaxed
// device-scope atomic.
//
// Launch shape, as host/count_above/mod.rs (config_for): blocks of THREADS_PER_BLOCK = 256, one
// full wave over len / 4 vectors (the occupancy calculator's, or the BLOCKS argument: run.sh
// passes gridsync's), dynamic shared memory block_reduce_shared_bytes::<u64>(256) = 64 bytes.
// Input: gridsync's default_input, uniform_f32(len, 0x6774746872636e74, 0, 1); threshold 0.5.
// One launch per measurement; the counter is zeroed before it (cudaMemsetAsync, queued and not
// timed, as gridsync's clear), and every trial's count must equal the CPU's exactly.
//
//   nvcc -O3 -arch=sm_90 -lineinfo -o count_above count_above.cu && ./count_above [LEN] [TRIALS] [BLOCKS]
#include "bandwidth.cuh"
#include "device.cuh"

using namespace twin;

constexpr unsigned THREADS_PER_BLOCK = 256;
constexpr int VEC4_UNROLL = 4;
// gridsync's DEFAULT_SEED and DEFAULT_THRESHOLD.
constexpr uint64_t DEFAULT_SEED = 0x6774746872636e74ull;
constexpr float DEFAULT_THRESHOLD = 0.5f;

// Whether x counts: strictly above thr, and never NaN.
__device__ __forceinline__ unsigned above(float x, float thr) { return x > thr; }

__global__ void gt_thr_cnt_vec4(const float* src, unsigned long long len, float thr,
                                unsigned long long* cnt) {
    Split16<float> split(src, len);
    unsigned count = 0;
    for (size_t k = global_id_x(); k < split.scalars(); k += threads_per_grid_x())
        count += above(src[split.scalar_index(k)], thr);
    grid_stride_unrolled<VEC4_UNROLL>(split.body, [&](size_t v) {
        float4 x = split.load(src, v);
        count += above(x.x, thr) + above(x.y, thr) + above(x.z, thr) + above(x.w, thr);
    });
    unsigned long long total = block_reduce_sum<unsigned long long>(count);
    if (threadIdx.x == 0 && total != 0) atomic_add_device(cnt, total);
}

int main(int argc, char** argv) {
    size_t len = arg_size(argc, argv, 1, 10000000);
    int trials = int(arg_size(argc, argv, 2, DEFAULT_TRIALS));
    unsigned want_blocks = unsigned(arg_size(argc, argv, 3, 0, false));

    double copy = copy_gb_per_s(COPY_BYTES, trials);

    unsigned long long expected = 0;
    float* src = nullptr;
    {
        std::vector<float> data = uniform_f32(len, DEFAULT_SEED, 0.0f, 1.0f);
        for (float x : data) expected += x > DEFAULT_THRESHOLD;
        TWIN_CHECK(cudaMalloc(&src, len * sizeof(float)));
        TWIN_CHECK(cudaMemcpy(src, data.data(), len * sizeof(float), cudaMemcpyHostToDevice));
    }

    unsigned shared = block_reduce_shared_bytes(THREADS_PER_BLOCK, sizeof(unsigned long long));
    size_t work = (len + 3) / 4;
    unsigned blocks = one_wave(gt_thr_cnt_vec4, work, THREADS_PER_BLOCK, shared, want_blocks);
    unsigned long long* cnt = nullptr;
    TWIN_CHECK(cudaMalloc(&cnt, sizeof *cnt));

    unsigned long long got = 0;
    auto ms = time_trials(
        trials, [&] { TWIN_CHECK(cudaMemsetAsync(cnt, 0, sizeof *cnt)); },
        [&] {
            gt_thr_cnt_vec4<<<blocks, THREADS_PER_BLOCK, shared>>>(src, len, DEFAULT_THRESHOLD, cnt);
        },
        [&] {
            TWIN_CHECK(cudaMemcpy(&got, cnt, sizeof got, cudaMemcpyDeviceToHost));
            if (got != expected)
                mismatch("gt_thr_cnt_vec4 counted " + std::to_string(got) + " of " +
                         std::to_string(len) + ", the CPU " + std::to_string(expected));
        });
    char extra[96];
    std::snprintf(extra, sizeof extra, ", \"count\": %llu, \"threshold\": %g", got,
                  double(DEFAULT_THRESHOLD));
    print_report({"count-above", "gt_thr_cnt_vec4", len, len * sizeof(float), blocks,
                  THREADS_PER_BLOCK, shared, trials, copy, extra},
                 ms);
    TWIN_CHECK(cudaFree(src));
    TWIN_CHECK(cudaFree(cnt));
    return 0;
}
