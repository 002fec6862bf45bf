// Reference 65 536-bin histograms of 16-bit values in CUDA C++, on the same GPU and the same
// values as `gridsync bench histogram-u16` (issue 21). Input: a file of little-endian uint16
// (`gridsync histogram --bins 65536 --values N [--tokens] --write-values FILE`). Each variant
// runs on one non-blocking stream, is timed with cudaEvents after one warm-up run, and reports
// the median of 20 trials and its bandwidth (2 bytes per value), one line each:
//
//   global      one atomicAdd (unsigned long long) per value into global bins
//   cub_even    cub::DeviceHistogram::HistogramEven, 65 537 levels [0, 65 536), counters
//               unsigned int (what CUB offers for this many bins; the sum is checked in 64 bits)
//   cluster4    cg::this_cluster(): 4 blocks of 1024 threads, 16 384 bins of 64 KiB each, every
//               value counted with atomicAdd on cluster.map_shared_rank(bins, owner), the
//               non-zero bins flushed with one atomicAdd each; grid from
//               cudaOccupancyMaxActiveClusters
//
// Every variant's 65 536 counts are compared with a CPU count: "ok" or MISMATCH (exit 1).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/ref_hist16 scripts/reference_histogram_u16.cu
//   /tmp/ref_hist16 FILE       # every line starts with "ref histogram_u16"
#include <cooperative_groups.h>
#include <cub/device/device_histogram.cuh>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "reference.cuh"

namespace cg = cooperative_groups;

constexpr int BINS = 65536;
constexpr int TRIALS = 20;

__global__ void hist_global(const uint16_t* v, size_t n, unsigned long long* h) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        atomicAdd(&h[v[i]], 1ull);
}

constexpr int CLUSTER = 4;
constexpr int PER_BLOCK = BINS / CLUSTER;

__global__ void __cluster_dims__(CLUSTER, 1, 1) hist_cluster(const uint16_t* v, size_t n,
                                                             unsigned long long* h) {
    extern __shared__ unsigned int bins[];
    cg::cluster_group cluster = cg::this_cluster();
    for (int b = threadIdx.x; b < PER_BLOCK; b += blockDim.x) bins[b] = 0;
    cluster.sync();
    size_t stride = (size_t)gridDim.x * blockDim.x;
    // 8 values per 16-byte load where aligned (the buffer is), then the tail.
    const uint4* v4 = reinterpret_cast<const uint4*>(v);
    size_t n8 = n / 8;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n8; i += stride) {
        uint4 q = v4[i];
        unsigned int w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                unsigned int x = half ? (w[k] >> 16) : (w[k] & 0xffff);
                unsigned int* dst = cluster.map_shared_rank(bins, x / PER_BLOCK);
                atomicAdd(dst + (x % PER_BLOCK), 1u);
            }
        }
    }
    for (size_t i = n8 * 8 + (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        unsigned int x = v[i];
        atomicAdd(cluster.map_shared_rank(bins, x / PER_BLOCK) + (x % PER_BLOCK), 1u);
    }
    cluster.sync();
    unsigned int first = cluster.block_rank() * PER_BLOCK;
    for (int b = threadIdx.x; b < PER_BLOCK; b += blockDim.x)
        if (bins[b]) atomicAdd(&h[first + b], (unsigned long long)bins[b]);
}

template <typename F>
static float median_ms(cudaStream_t s, F launch) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    launch();
    CK(cudaStreamSynchronize(s));
    std::vector<float> ms;
    for (int t = 0; t < TRIALS; ++t) {
        CK(cudaEventRecord(a, s));
        launch();
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float m;
        CK(cudaEventElapsedTime(&m, a, b));
        ms.push_back(m);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

static bool same(const std::vector<unsigned long long>& got, const std::vector<unsigned long long>& want) {
    return got == want;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE (little-endian uint16)\n", argv[0]);
        return 2;
    }
    FILE* f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    fseek(f, 0, SEEK_END);
    size_t n = ftell(f) / 2;
    fseek(f, 0, SEEK_SET);
    std::vector<uint16_t> host(n);
    if (fread(host.data(), 2, n, f) != n) { fprintf(stderr, "short read\n"); return 2; }
    fclose(f);
    std::vector<unsigned long long> want(BINS, 0);
    for (uint16_t x : host) want[x]++;

    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    uint16_t* d_v;
    unsigned long long* d_h;
    unsigned int* d_h32;
    CK(cudaMalloc(&d_v, n * 2 + 16));
    CK(cudaMalloc(&d_h, BINS * 8));
    CK(cudaMalloc(&d_h32, BINS * 4));
    CK(cudaMemcpy(d_v, host.data(), n * 2, cudaMemcpyHostToDevice));
    double gb = 2.0 * n / 1e9;
    bool ok_all = true;
    auto report = [&](const char* name, float ms, bool ok, const char* extra) {
        printf("ref histogram_u16 %-10s values=%zu ms=%.4f GB/s=%.1f check=%s %s (%s)\n", name, n, ms,
               gb / (ms * 1e-3), ok ? "ok" : "MISMATCH", extra, prop.name);
        ok_all &= ok;
    };
    std::vector<unsigned long long> got(BINS);

    // global atomics
    {
        int blocks = prop.multiProcessorCount * 2, threads = 1024;
        auto run = [&] {
            CK(cudaMemsetAsync(d_h, 0, BINS * 8, s));
            hist_global<<<blocks, threads, 0, s>>>(d_v, n, d_h);
        };
        float ms = median_ms(s, run);
        CK(cudaMemcpy(got.data(), d_h, BINS * 8, cudaMemcpyDeviceToHost));
        char extra[64];
        snprintf(extra, sizeof extra, "grid=%dx%d", blocks, threads);
        report("global", ms, same(got, want), extra);
    }
    // CUB HistogramEven
    {
        size_t temp_bytes = 0;
        CK(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, d_v, d_h32, BINS + 1, 0, BINS,
                                               (int64_t)n, s));
        void* temp;
        CK(cudaMalloc(&temp, temp_bytes));
        auto run = [&] {
            CK(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, d_v, d_h32, BINS + 1, 0, BINS,
                                                   (int64_t)n, s));
        };
        float ms = median_ms(s, run);
        std::vector<unsigned int> g32(BINS);
        CK(cudaMemcpy(g32.data(), d_h32, BINS * 4, cudaMemcpyDeviceToHost));
        for (int b = 0; b < BINS; ++b) got[b] = g32[b];
        char extra[64];
        snprintf(extra, sizeof extra, "temp_bytes=%zu", temp_bytes);
        report("cub_even", ms, same(got, want), extra);
        CK(cudaFree(temp));
    }
    // cluster DSMEM
    {
        int threads = 1024;
        size_t shared = PER_BLOCK * 4;
        CK(cudaFuncSetAttribute(hist_cluster, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shared));
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(CLUSTER, 1, 1);
        cfg.blockDim = dim3(threads, 1, 1);
        cfg.dynamicSmemBytes = shared;
        cfg.stream = s;
        int clusters = 0;
        CK(cudaOccupancyMaxActiveClusters(&clusters, hist_cluster, &cfg));
        cfg.gridDim = dim3(CLUSTER * std::max(clusters, 1), 1, 1);
        auto run = [&] {
            CK(cudaMemsetAsync(d_h, 0, BINS * 8, s));
            CK(cudaLaunchKernelEx(&cfg, hist_cluster, (const uint16_t*)d_v, n, d_h));
        };
        float ms = median_ms(s, run);
        CK(cudaMemcpy(got.data(), d_h, BINS * 8, cudaMemcpyDeviceToHost));
        char extra[64];
        snprintf(extra, sizeof extra, "clusters=%d grid=%dx%d", clusters, cfg.gridDim.x, threads);
        report("cluster4", ms, same(got, want), extra);
    }
    return ok_all ? 0 : 1;
}
