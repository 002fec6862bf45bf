// Reference cluster-barrier costs in CUDA C++ on the same GPU as `gridsync bench cluster`
// (issue 21): `cg::this_cluster().sync()` 1000 times per launch, and the split form
// (`barrier_arrive()`, `barrier_wait()`), for clusters of 2, 4, 8 and 16 blocks (16 with the
// non-portable size allowed) at 128 and 1024 threads per block, over every cluster the GPU holds
// at once (cudaOccupancyMaxActiveClusters). Event-timed, one warm-up launch, the median of 20
// launches divided by 1000, one line each:
//
//   ref cluster sync  cluster=N threads=T blocks=B us_per_barrier=...
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/ref_cluster scripts/reference_cluster.cu
//   /tmp/ref_cluster
#include <cooperative_groups.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cluster_launch.cuh"
#include "reference.cuh"

namespace cg = cooperative_groups;

constexpr int ROUNDS = 1000;
constexpr int TRIALS = 20;

__global__ void sync_loop(int rounds) {
    cg::cluster_group c = cg::this_cluster();
    for (int r = 0; r < rounds; ++r) c.sync();
}

__global__ void split_loop(int rounds) {
    cg::cluster_group c = cg::this_cluster();
    for (int r = 0; r < rounds; ++r) {
        auto token = c.barrier_arrive();
        c.barrier_wait(std::move(token));
    }
}

template <typename K>
static void measure(const char* name, K kernel, int n, int threads, cudaStream_t s) {
    CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    ClusterLaunch launch(n, n, threads, s);
    cudaLaunchConfig_t& cfg = launch.config;
    int clusters = 0;
    CK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg));
    cfg.gridDim = dim3(n * std::max(clusters, 1), 1, 1);
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaLaunchKernelEx(&cfg, kernel, ROUNDS));
    CK(cudaStreamSynchronize(s));
    std::vector<float> us;
    for (int t = 0; t < TRIALS; ++t) {
        CK(cudaEventRecord(a, s));
        CK(cudaLaunchKernelEx(&cfg, kernel, ROUNDS));
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        us.push_back(ms * 1e3f / ROUNDS);
    }
    std::sort(us.begin(), us.end());
    printf("ref cluster %-5s cluster=%d threads=%d blocks=%d us_per_barrier=%.4f\n", name, n, threads,
           cfg.gridDim.x, us[us.size() / 2]);
}

int main() {
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int n : {2, 4, 8, 16})
        for (int threads : {128, 1024}) {
            measure("sync", sync_loop, n, threads, s);
            measure("split", split_loop, n, threads, s);
        }
    return 0;
}
