// Reference grid-barrier costs in CUDA C++ on the same GPU as `gridsync bench barrier` and
// `gridsync barrier` (issue 11). Everything runs on one non-blocking stream, is timed with
// cudaEvents after one warm-up run, and reports the median of 15 trials, one line each:
//
// 1. Bare barrier, 128 threads per block, at one block per SM and at the largest co-resident
//    grid (cudaOccupancyMaxActiveBlocksPerMultiprocessor x SMs):
//      grid_sync     cg::this_grid().sync(), 1000 per cudaLaunchCooperativeKernel  us_per_barrier
//      counter       hand-written sense-bit counter barrier (atomicAdd, volatile spin,
//                    __threadfence), 1000 per cooperative launch                  us_per_barrier
//      graph_empty   one CUDA graph (stream capture) of 1000 empty kernels         us_per_kernel
//      launch_empty  1000 empty kernels queued back to back on the stream          us_per_launch
//    (the barrier rows include one launch, amortized over the 1000 barriers)
// 2. X->P->X, W = 128 floats, 100 iterations, at SMs x 128 and 2 x 64; per thread j < W
//    (grid-stride), a = X[0] + X[1] + ... + X[W-1] summed in order in f32, then
//      stage (i)  P[j] = X[W-1-j] - a / W          stage (ii)  a = sum of P; X[j] = P[(j+1)%W] - a / W
//      xpx_launches   two kernels per iteration queued on the stream (200)     us_per_iteration
//      xpx_graph      one CUDA graph of those 200 kernels                      us_per_iteration
//      xpx_grid_sync  one cooperative launch, this_grid().sync() after each stage
//      xpx_counter    one cooperative launch, the counter barrier after each stage
//      xpx_check      variants=ok if the four final X are bit-identical, cpu=ok if they also
//                     equal a host emulation (same sequential f32 sums; -fmad=false keeps the
//                     device arithmetic to plain adds, IEEE divides and subtractions)
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -fmad=false -o /tmp/ref_barrier scripts/reference_barrier.cu
//   /tmp/ref_barrier           # every line starts with "ref barrier"; exit status 1 on MISMATCH
#include <cooperative_groups.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "reference.cuh"

namespace cg = cooperative_groups;

constexpr int kBarriers = 1000;  // barriers per launch; kernels per graph and per queue
constexpr int kTrials = 15;      // timed trials after the warm-up; the median is reported
constexpr int kLen = 128;        // W
constexpr int kIters = 100;      // X->P->X iterations
constexpr int kThreads = 128;    // block size of the bare-barrier measurements
constexpr unsigned kSense = 0x80000000u;

// ---------------------------------------------------------------------------------------------
// The counter barrier: one 32-bit word, zero in its low 31 bits between barriers. Block 0's
// thread 0 adds 0x80000000 - (nblocks - 1), every other block's thread 0 adds 1, so one
// barrier's arrivals sum to exactly 0x80000000: the low 31 bits come back to 0 (no reset, ever)
// and bit 31 (the sense) flips exactly once, at the last arrival; no partial sum can carry into
// it earlier. Each arriver spins until bit 31 differs from the value its own add returned. The
// bit cannot flip back before every block (the slowest waiter included) has arrived at the next
// barrier, so the barrier is reusable within a launch, and the word is valid for the next launch
// as it stands. Ordering is the pre-sm_70 recipe: __syncthreads so the whole block has finished
// the phase, __threadfence before the arrival (release, cumulative over what the block wrote),
// a volatile spin (ld.volatile: never hoisted or merged), __threadfence after it (acquire side),
// and __syncthreads to let the block's other threads go. Needs all blocks co-resident: it is
// only launched through cudaLaunchCooperativeKernel, which refuses grids that do not fit.
// ---------------------------------------------------------------------------------------------
__device__ __forceinline__ void counter_sync(unsigned* word) {
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned add = blockIdx.x == 0 ? kSense - (gridDim.x - 1) : 1u;
        __threadfence();
        const unsigned old = atomicAdd(word, add);
        const volatile unsigned* v = word;
        while (((*v ^ old) & kSense) == 0) {
        }
        __threadfence();
    }
    __syncthreads();
}

struct GridSync {
    __device__ void operator()() const { cg::this_grid().sync(); }
};
struct CounterSync {
    unsigned* word;
    __device__ void operator()() const { counter_sync(word); }
};

__global__ void empty_kernel() {}

template <class Bar>
__global__ void bare_kernel(int n, Bar bar) {
    for (int i = 0; i < n; ++i) bar();
}

// X->P->X stages. No __restrict__/__ldg: in the fused kernels X and P are rewritten between
// barriers of one launch, so they must not go through the non-coherent read-only path.
__device__ __forceinline__ void stage_p(const float* X, float* P, int W) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < W; j += gridDim.x * blockDim.x) {
        float a = X[0];
        for (int k = 1; k < W; ++k) a += X[k];
        P[j] = X[W - 1 - j] - a / W;
    }
}
__device__ __forceinline__ void stage_x(const float* P, float* X, int W) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < W; j += gridDim.x * blockDim.x) {
        float a = P[0];
        for (int k = 1; k < W; ++k) a += P[k];
        X[j] = P[(j + 1) % W] - a / W;
    }
}

__global__ void xpx_stage_p(const float* X, float* P, int W) { stage_p(X, P, W); }
__global__ void xpx_stage_x(const float* P, float* X, int W) { stage_x(P, X, W); }

// One launch, two barriers per iteration: after (i), and after (ii) because the next (i)
// reads all of X.
template <class Bar>
__global__ void xpx_fused(float* X, float* P, int W, int iters, Bar bar) {
    for (int it = 0; it < iters; ++it) {
        stage_p(X, P, W);
        bar();
        stage_x(P, X, W);
        bar();
    }
}

static void xpx_cpu(std::vector<float>& X, int W, int iters) {
    std::vector<float> P(W);
    for (int it = 0; it < iters; ++it) {
        float a = X[0];
        for (int k = 1; k < W; ++k) a += X[k];
        for (int j = 0; j < W; ++j) P[j] = X[W - 1 - j] - a / W;
        a = P[0];
        for (int k = 1; k < W; ++k) a += P[k];
        for (int j = 0; j < W; ++j) X[j] = P[(j + 1) % W] - a / W;
    }
}

// ---------------------------------------------------------------------------------------------
// Host helpers
// ---------------------------------------------------------------------------------------------
struct Timer {
    cudaStream_t s;
    cudaEvent_t a, b;
    // prep() runs outside the timed region (before the start event) on the same stream.
    template <class Prep, class Body>
    double median_ms(Prep prep, Body body) {
        prep();
        body();  // warm-up
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(s));
        std::vector<float> ms;
        for (int t = 0; t < kTrials; ++t) {
            prep();
            CK(cudaEventRecord(a, s));
            body();
            CK(cudaEventRecord(b, s));
            CK(cudaGetLastError());
            CK(cudaEventSynchronize(b));
            float x = 0;
            CK(cudaEventElapsedTime(&x, a, b));
            ms.push_back(x);
        }
        std::sort(ms.begin(), ms.end());
        return ms[ms.size() / 2];
    }
};

template <class... A>
static void coop(void (*kernel)(A...), int blocks, int threads, cudaStream_t s, A... args) {
    void* params[] = {&args...};
    CK(cudaLaunchCooperativeKernel((const void*)kernel, dim3(blocks), dim3(threads), params, 0,
                                   s));
}

template <class Enqueue>
static cudaGraphExec_t capture(cudaStream_t s, Enqueue enqueue) {
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    enqueue();
    CK(cudaGetLastError());
    CK(cudaStreamEndCapture(s, &graph));
    CK(cudaGraphInstantiateWithFlags(&exec, graph, 0));
    CK(cudaGraphDestroy(graph));
    CK(cudaGraphUpload(exec, s));
    return exec;
}

int main() {
    CK(cudaSetDevice(0));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    if (!prop.cooperativeLaunch) {
        fprintf(stderr, "device 0 does not support cooperative launch\n");
        return 2;
    }
    const int sms = prop.multiProcessorCount;
    int occ_grid = 0, occ_counter = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_grid, bare_kernel<GridSync>, kThreads, 0));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ_counter, bare_kernel<CounterSync>,
                                                     kThreads, 0));
    const int per_sm = std::min(occ_grid, occ_counter);
    printf("ref barrier device name=\"%s\" cc=%d.%d sms=%d coresident_blocks_per_sm=%d\n",
           prop.name, prop.major, prop.minor, sms, per_sm);
    fflush(stdout);

    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    Timer tm{s};
    CK(cudaEventCreate(&tm.a));
    CK(cudaEventCreate(&tm.b));
    unsigned* word;  // the counter barrier's word, on its own 256-byte allocation
    CK(cudaMalloc(&word, 256));
    CK(cudaMemset(word, 0, 256));
    auto nothing = [] {};

    // 1. Bare barriers.
    const int bare_shapes[] = {sms, per_sm * sms};
    for (int blocks : bare_shapes) {
        double ms = tm.median_ms(nothing, [&] {
            coop(bare_kernel<GridSync>, blocks, kThreads, s, kBarriers, GridSync{});
        });
        printf("ref barrier grid_sync blocks=%d threads=%d us_per_barrier=%.3f\n", blocks,
               kThreads, ms * 1e3 / kBarriers);
        ms = tm.median_ms(nothing, [&] {
            coop(bare_kernel<CounterSync>, blocks, kThreads, s, kBarriers, CounterSync{word});
        });
        printf("ref barrier counter blocks=%d threads=%d us_per_barrier=%.3f\n", blocks,
               kThreads, ms * 1e3 / kBarriers);

        auto empties = [&] {
            for (int i = 0; i < kBarriers; ++i) empty_kernel<<<blocks, kThreads, 0, s>>>();
        };
        cudaGraphExec_t exec = capture(s, empties);
        ms = tm.median_ms(nothing, [&] { CK(cudaGraphLaunch(exec, s)); });
        CK(cudaGraphExecDestroy(exec));
        printf("ref barrier graph_empty blocks=%d threads=%d us_per_kernel=%.3f\n", blocks,
               kThreads, ms * 1e3 / kBarriers);
        ms = tm.median_ms(nothing, empties);
        printf("ref barrier launch_empty blocks=%d threads=%d us_per_launch=%.3f\n", blocks,
               kThreads, ms * 1e3 / kBarriers);
        fflush(stdout);
    }

    // 2. X->P->X.
    const int W = kLen, iters = kIters;
    const size_t bytes = sizeof(float) * W;
    std::vector<float> x0(W);
    for (int i = 0; i < W; ++i) x0[i] = (float)std::sin((double)i);
    std::vector<float> want = x0;
    xpx_cpu(want, W, iters);
    float *X0, *X, *P;
    CK(cudaMalloc(&X0, bytes));
    CK(cudaMalloc(&X, bytes));
    CK(cudaMalloc(&P, bytes));
    CK(cudaMemcpy(X0, x0.data(), bytes, cudaMemcpyHostToDevice));

    bool all_ok = true;
    const int xpx_shapes[][2] = {{sms, 128}, {2, 64}};
    for (const auto& shape : xpx_shapes) {
        const int blocks = shape[0], threads = shape[1];
        auto reset = [&] {  // every trial starts from the same X; P starts at a 0 sentinel
            CK(cudaMemcpyAsync(X, X0, bytes, cudaMemcpyDeviceToDevice, s));
            CK(cudaMemsetAsync(P, 0, bytes, s));
        };
        auto queue = [&] {
            for (int it = 0; it < iters; ++it) {
                xpx_stage_p<<<blocks, threads, 0, s>>>(X, P, W);
                xpx_stage_x<<<blocks, threads, 0, s>>>(P, X, W);
            }
        };
        std::vector<std::vector<float>> got;
        auto report = [&](const char* name, double ms) {
            printf("ref barrier %s blocks=%d threads=%d iterations=%d len=%d us_per_iteration=%.3f\n",
                   name, blocks, threads, iters, W, ms * 1e3 / iters);
            fflush(stdout);
            std::vector<float> h(W);
            CK(cudaMemcpy(h.data(), X, bytes, cudaMemcpyDeviceToHost));  // X after the last trial
            got.push_back(h);
        };

        report("xpx_launches", tm.median_ms(reset, queue));
        cudaGraphExec_t exec = capture(s, queue);
        report("xpx_graph", tm.median_ms(reset, [&] { CK(cudaGraphLaunch(exec, s)); }));
        CK(cudaGraphExecDestroy(exec));
        report("xpx_grid_sync", tm.median_ms(reset, [&] {
                   coop(xpx_fused<GridSync>, blocks, threads, s, X, P, W, iters, GridSync{});
               }));
        report("xpx_counter", tm.median_ms(reset, [&] {
                   coop(xpx_fused<CounterSync>, blocks, threads, s, X, P, W, iters,
                        CounterSync{word});
               }));

        bool same = true;
        for (const auto& g : got) same = same && memcmp(g.data(), got[0].data(), bytes) == 0;
        const bool cpu = memcmp(got[0].data(), want.data(), bytes) == 0;
        all_ok = all_ok && same && cpu;
        printf("ref barrier xpx_check blocks=%d threads=%d iterations=%d len=%d variants=%s cpu=%s\n",
               blocks, threads, iters, W, same ? "ok" : "MISMATCH", cpu ? "ok" : "MISMATCH");
        fflush(stdout);
    }

    CK(cudaDeviceSynchronize());
    return all_ok ? 0 : 1;
}
