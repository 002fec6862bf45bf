// The nvcc twins of `gridsync bench count-above`'s kernels (gpu/src/lessons/count_above.rs):
// `gt_thr_cnt_atomic` (a grid-stride loop, one relaxed device-scope atomicAdd(cnt, 1) per
// element above), `gt_thr_cnt_warp` (the warp steps over 32-element windows with one bound for
// all its lanes, votes with __ballot_sync over the warp's existing lanes, lane 0 adds the
// popcount), `gt_thr_cnt_block` (a u32 count per thread over a grid-stride loop, the block's
// u64 sum, one atomic per block), and the fast kernel `gt_thr_cnt_vec4` (Split4 and
// grid_stride_unrolled from gpu/src/primitives/vector.rs, block_reduce_sum from
// gpu/src/primitives/block_reduce.rs), described here:
//
// Work split, as gridsync's: a u32 count per thread — a grid-stride loop over the scalar head
// and tail, then the float4 body with VEC4_UNROLL = 4 loads per step (grid_stride_unrolled:
// four strides of straight-line code, then the rest one at a time), each float counted when
// strictly above the threshold (a NaN never counts); the block's sum as a u64 (shuffles, one
// slot per warp, one barrier); thread 0 adds a non-zero total to *cnt with one relaxed
// device-scope atomic.
//
// Launch shape, as host/count_above/mod.rs (config_for): blocks of THREADS_PER_BLOCK = 256, one
// full wave over len / 4 vectors (len elements for the other three; the occupancy calculator's,
// or the BLOCKS argument: run.sh passes gridsync's), dynamic shared memory
// block_reduce_shared_bytes::<u64>(256) = 64 bytes for block and vec4, none for the others.
// Input: gridsync's default_input, uniform_f32(len, 0x6774746872636e74, 0, 1); threshold 0.5.
// One launch per measurement; the counter is zeroed before it (cudaMemsetAsync, queued and not
// timed, as gridsync's clear), and every trial's count must equal the CPU's exactly.
//
//   nvcc -O3 -arch=sm_90 -lineinfo -o count_above count_above.cu
//   ./count_above atomic|warp|block|vec4 [LEN] [TRIALS] [BLOCKS]
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

__global__ void gt_thr_cnt_atomic(const float* src, unsigned long long len, float thr,
                                  unsigned long long* cnt) {
    for (size_t i = global_id_x(); i < len; i += threads_per_grid_x())
        if (above(src[i], thr)) atomic_add_device(cnt, 1ull);
}

__global__ void gt_thr_cnt_warp(const float* src, unsigned long long len, float thr,
                                unsigned long long* cnt) {
    unsigned lane = lane_id(), mask = warp_mask();
    size_t stride = threads_per_grid_x();
    // The warp's first thread: the same `base` in every lane.
    for (size_t base = global_id_x() - lane; base < len; base += stride) {
        size_t i = base + lane;
        bool mine = i < len && above(src[i], thr);
        unsigned votes = __ballot_sync(mask, mine);
        if (lane == 0 && votes != 0) atomic_add_device(cnt, (unsigned long long)__popc(votes));
    }
}

__global__ void gt_thr_cnt_block(const float* src, unsigned long long len, float thr,
                                 unsigned long long* cnt) {
    unsigned count = 0;
    for (size_t i = global_id_x(); i < len; i += threads_per_grid_x()) count += above(src[i], thr);
    unsigned long long total = block_reduce_sum<unsigned long long>(count);
    if (threadIdx.x == 0 && total != 0) atomic_add_device(cnt, total);
}

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

using CountKernel = void (*)(const float*, unsigned long long, float, unsigned long long*);

int main(int argc, char** argv) {
    std::string which = argc > 1 ? argv[1] : "vec4";
    CountKernel kernel = which == "atomic" ? gt_thr_cnt_atomic
                         : which == "warp"  ? gt_thr_cnt_warp
                         : which == "block" ? gt_thr_cnt_block
                         : which == "vec4"  ? gt_thr_cnt_vec4
                                            : nullptr;
    if (kernel == nullptr) {
        std::fprintf(stderr, "usage: %s atomic|warp|block|vec4 [LEN] [TRIALS] [BLOCKS]\n", argv[0]);
        return 2;
    }
    std::string name = "gt_thr_cnt_" + which;
    size_t len = arg_size(argc, argv, 2, 10000000);
    int trials = int(arg_size(argc, argv, 3, DEFAULT_TRIALS));
    unsigned want_blocks = unsigned(arg_size(argc, argv, 4, 0, false));

    double copy = copy_gb_per_s(COPY_BYTES, trials);

    unsigned long long expected = 0;
    float* src = nullptr;
    {
        std::vector<float> data = uniform_f32(len, DEFAULT_SEED, 0.0f, 1.0f);
        for (float x : data) expected += x > DEFAULT_THRESHOLD;
        TWIN_CHECK(cudaMalloc(&src, len * sizeof(float)));
        TWIN_CHECK(cudaMemcpy(src, data.data(), len * sizeof(float), cudaMemcpyHostToDevice));
    }

    bool reduces = which == "block" || which == "vec4";
    unsigned shared =
        reduces ? block_reduce_shared_bytes(THREADS_PER_BLOCK, sizeof(unsigned long long)) : 0;
    size_t work = which == "vec4" ? (len + 3) / 4 : len;
    unsigned blocks = one_wave(kernel, work, THREADS_PER_BLOCK, shared, want_blocks);
    unsigned long long* cnt = nullptr;
    TWIN_CHECK(cudaMalloc(&cnt, sizeof *cnt));

    unsigned long long got = 0;
    auto ms = time_trials(
        trials, [&] { TWIN_CHECK(cudaMemsetAsync(cnt, 0, sizeof *cnt)); },
        [&] { kernel<<<blocks, THREADS_PER_BLOCK, shared>>>(src, len, DEFAULT_THRESHOLD, cnt); },
        [&] {
            TWIN_CHECK(cudaMemcpy(&got, cnt, sizeof got, cudaMemcpyDeviceToHost));
            if (got != expected)
                mismatch(name + " counted " + std::to_string(got) + " of " +
                         std::to_string(len) + ", the CPU " + std::to_string(expected));
        });
    char extra[96];
    std::snprintf(extra, sizeof extra, ", \"count\": %llu, \"threshold\": %g", got,
                  double(DEFAULT_THRESHOLD));
    print_report({"count-above", name.c_str(), len, len * sizeof(float), blocks,
                  THREADS_PER_BLOCK, shared, trials, copy, extra},
                 ms);
    TWIN_CHECK(cudaFree(src));
    TWIN_CHECK(cudaFree(cnt));
    return 0;
}
