// Reference 256-bin byte histograms in CUDA C++, on the same GPU and the same bytes as
// `gridsync bench histogram --bins 256` (issue 21). Input: a file of bytes (`gridsync histogram
// --write-text FILE --bytes N` for English-like text; any file, e.g. from /dev/urandom, for
// random bytes). Each variant runs on one non-blocking stream, is timed with cudaEvents after one
// warm-up run, and reports the median of 20 trials and its read bandwidth, one line each:
//
//   cub_even   cub::DeviceHistogram::HistogramEven, 257 levels [0, 256), unsigned int counters
//   pipeline   cuda::barrier + cuda::memcpy_async: one thread per block copies 16 KiB tiles into
//              a ring of 4 shared-memory stages (bulk copies on sm_90), each with a full and an
//              empty barrier; 16 consumer warps count into 32-bit counters per lane index
//              (byte b of lane l: word 32 b + l) shared by the block's warps; the counters are
//              folded into global bins, one atomicAdd per non-zero bin per block. The design of
//              gridsync's histogram_pipeline, written with libcu++'s barrier instead of PTX.
//
// Every variant's 256 counts are compared with a CPU count: "ok" or MISMATCH (exit 1).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/ref_hist_pipe scripts/reference_histogram_pipeline.cu
//   /tmp/ref_hist_pipe FILE       # every line starts with "ref histogram_pipeline"
#include <cuda/barrier>
#include <cub/device/device_histogram.cuh>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "reference.cuh"

constexpr int BINS = 256;
constexpr int TRIALS = 20;
constexpr int STAGES = 4;
constexpr int STAGE_BYTES = 16 << 10;
constexpr int THREADS = 17 * 32;
constexpr int COLS = 32;
constexpr int COUNTER_BYTES = BINS * COLS * 4;
constexpr int SHARED = COUNTER_BYTES + STAGES * STAGE_BYTES;

using block_barrier = cuda::barrier<cuda::thread_scope_block>;

__device__ __forceinline__ void count_word(unsigned* counts, unsigned w, int lane) {
    atomicAdd(&counts[(w & 255) * COLS + lane], 1u);
    atomicAdd(&counts[((w >> 8) & 255) * COLS + lane], 1u);
    atomicAdd(&counts[((w >> 16) & 255) * COLS + lane], 1u);
    atomicAdd(&counts[(w >> 24) * COLS + lane], 1u);
}

__global__ void __launch_bounds__(THREADS) hist_pipeline(const uint8_t* x, size_t n,
                                                         unsigned long long* h) {
    extern __shared__ __align__(128) unsigned char smem[];
    __shared__ block_barrier full[STAGES], empty[STAGES];
    unsigned* counts = reinterpret_cast<unsigned*>(smem);
    unsigned char* stages = smem + COUNTER_BYTES;
    const int consumers = blockDim.x - 32;
    for (int i = threadIdx.x; i < BINS * COLS; i += blockDim.x) counts[i] = 0;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            init(&full[s], 1 + consumers);  // the producer and every consumer
            init(&empty[s], consumers + 1); // every consumer and the producer
        }
    }
    __syncthreads();
    size_t head = (16 - (reinterpret_cast<uintptr_t>(x) & 15)) & 15;
    if (head > n) head = n;
    const size_t body = (n - head) & ~size_t(15);
    const uint8_t* b = x + head;
    const size_t tiles = (body + STAGE_BYTES - 1) / STAGE_BYTES;
    if (threadIdx.x < 32) {
        if (threadIdx.x == 0) {
            int k = 0;
            for (size_t t = blockIdx.x; t < tiles; t += gridDim.x, ++k) {
                const int s = k % STAGES;
                if (k >= STAGES) empty[s].arrive_and_wait(); // the consumers read fill k - 4
                const size_t rest = body - t * STAGE_BYTES;
                const size_t bytes = rest < STAGE_BYTES ? rest : STAGE_BYTES;
                cuda::memcpy_async(stages + s * STAGE_BYTES, b + t * STAGE_BYTES,
                                   cuda::aligned_size_t<16>(bytes), full[s]);
                (void)full[s].arrive();
            }
        }
    } else {
        const int me = threadIdx.x - 32, lane = threadIdx.x & 31;
        if (blockIdx.x == 0) {
            const size_t tail = head + body;
            for (size_t i = me; i < head + (n - tail); i += consumers) {
                const size_t j = i < head ? i : tail + (i - head);
                atomicAdd(&counts[x[j] * COLS + lane], 1u);
            }
        }
        int k = 0;
        for (size_t t = blockIdx.x; t < tiles; t += gridDim.x, ++k) {
            const int s = k % STAGES;
            full[s].arrive_and_wait(); // the tile has landed
            const size_t rest = body - t * STAGE_BYTES;
            const size_t bytes = rest < STAGE_BYTES ? rest : STAGE_BYTES;
            const uint4* v = reinterpret_cast<const uint4*>(stages + s * STAGE_BYTES);
            for (size_t i = me; i < bytes / 16; i += consumers) {
                const uint4 w = v[i];
                count_word(counts, w.x, lane);
                count_word(counts, w.y, lane);
                count_word(counts, w.z, lane);
                count_word(counts, w.w, lane);
            }
            (void)empty[s].arrive();
        }
    }
    __syncthreads();
    for (int bin = threadIdx.x; bin < BINS; bin += blockDim.x) {
        unsigned long long sum = 0;
        for (int c = 0; c < COLS; ++c) sum += counts[bin * COLS + ((c + threadIdx.x) & 31)];
        if (sum) atomicAdd(&h[bin], sum);
    }
}

template <class F>
float median_ms(cudaStream_t s, F run) {
    run();
    CK(cudaStreamSynchronize(s));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ms(TRIALS);
    for (auto& m : ms) {
        CK(cudaEventRecord(a, s));
        run();
        CK(cudaEventRecord(b, s));
        CK(cudaEventSynchronize(b));
        CK(cudaEventElapsedTime(&m, a, b));
    }
    std::sort(ms.begin(), ms.end());
    return ms[TRIALS / 2];
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE (bytes)\n", argv[0]);
        return 2;
    }
    FILE* f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    fseek(f, 0, SEEK_END);
    const size_t n = ftell(f);
    fseek(f, 0, SEEK_SET);
    std::vector<uint8_t> host(n);
    if (fread(host.data(), 1, n, f) != n) { fprintf(stderr, "short read\n"); return 2; }
    fclose(f);
    std::vector<unsigned long long> want(BINS, 0);
    for (uint8_t c : host) want[c]++;

    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    uint8_t* d_x;
    unsigned long long* d_h;
    unsigned int* d_h32;
    CK(cudaMalloc(&d_x, n + 16));
    CK(cudaMalloc(&d_h, BINS * 8));
    CK(cudaMalloc(&d_h32, BINS * 4));
    CK(cudaMemcpy(d_x, host.data(), n, cudaMemcpyHostToDevice));
    const double gb = n / 1e9;
    bool ok_all = true;
    std::vector<unsigned long long> got(BINS);
    auto report = [&](const char* name, float ms, const char* extra) {
        const bool ok = got == want;
        printf("ref histogram_pipeline %-9s bytes=%zu ms=%.4f GB/s=%.1f check=%s %s (%s)\n", name, n,
               ms, gb / (ms * 1e-3), ok ? "ok" : "MISMATCH", extra, prop.name);
        ok_all &= ok;
    };
    {
        size_t temp_bytes = 0;
        CK(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, d_x, d_h32, BINS + 1, 0, BINS,
                                               (int64_t)n, s));
        void* temp;
        CK(cudaMalloc(&temp, temp_bytes));
        auto run = [&] {
            CK(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, d_x, d_h32, BINS + 1, 0, BINS,
                                                   (int64_t)n, s));
        };
        const float ms = median_ms(s, run);
        std::vector<unsigned int> g32(BINS);
        CK(cudaMemcpy(g32.data(), d_h32, BINS * 4, cudaMemcpyDeviceToHost));
        for (int i = 0; i < BINS; ++i) got[i] = g32[i];
        char extra[64];
        snprintf(extra, sizeof extra, "temp_bytes=%zu", temp_bytes);
        report("cub_even", ms, extra);
        CK(cudaFree(temp));
    }
    {
        CK(cudaFuncSetAttribute(hist_pipeline, cudaFuncAttributeMaxDynamicSharedMemorySize, SHARED));
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hist_pipeline, THREADS, SHARED));
        const int blocks = std::max(per_sm, 1) * prop.multiProcessorCount;
        // Timed: the kernel only (the bins add up over the trials); checked: one run after
        // zeroing them.
        auto run = [&] {
            hist_pipeline<<<blocks, THREADS, SHARED, s>>>(d_x, n, d_h);
            CK(cudaGetLastError());
        };
        const float ms = median_ms(s, run);
        CK(cudaMemsetAsync(d_h, 0, BINS * 8, s));
        run();
        CK(cudaStreamSynchronize(s));
        CK(cudaMemcpy(got.data(), d_h, BINS * 8, cudaMemcpyDeviceToHost));
        char extra[64];
        snprintf(extra, sizeof extra, "grid=%dx%d", blocks, THREADS);
        report("pipeline", ms, extra);
    }
    return ok_all ? 0 : 1;
}
