// Reference neighbor lists in CUDA C++ on the same GPU as `gridsync neighbor` and
// `gridsync bench neighbor` (issue 12). Reads atoms in the xy.txt format (`x y` per line, an
// optional first line with the count; `gridsync neighbor --write-xy FILE` writes one), builds
// the lists in f32 with cutoff 1.9 (strictly below), and prints one line per measurement:
//
//   ref neighbor book_atomic     the book's find_neighbor_atomic (NN zeroed by cudaMemset,
//                                NL[n*MN + atomicAdd(&NN[n], 1)]), one thread per atom
//   ref neighbor book_no_atomic  the book's find_neighbor_no_atomic (NL[k*N + n], register count)
//   ref neighbor cub_cells       a cell list built on CUB: cell keys, cub::DeviceRadixSort of
//                                (key, index), cell ranges from the sorted keys, a count pass,
//                                cub::DeviceScan::ExclusiveSum, a fill pass with each list
//                                sorted — binning to the last neighbor written, one total read
//                                back to size the output, as gridsync's CSR build
//
// Each: the median ms of TRIALS cudaEvent-timed runs after one warm-up, the entries found, and
// atoms per second. The O(N^2) kernels are skipped above 2e6 atoms. -fmad=false keeps the
// distance arithmetic to the separate multiplies and adds the pair rule prescribes.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -fmad=false -o /tmp/ref_neighbor scripts/reference_neighbor.cu
//   /tmp/ref_neighbor xy.txt [TRIALS=20] [MN=10]
#include <cub/cub.cuh>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "reference.cuh"

static const float CUTOFF = 1.9f;
static const int BLOCK = 256;

__global__ void book_atomic(int *nn, int *nl, const float *x, const float *y, int n, int mn,
                            float cutoff_sq) {
    int n1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (n1 >= n) return;
    float x1 = x[n1], y1 = y[n1];
    for (int n2 = n1 + 1; n2 < n; ++n2) {
        float dx = x[n2] - x1, dy = y[n2] - y1;
        if (dx * dx + dy * dy < cutoff_sq) {
            int a = atomicAdd(&nn[n1], 1);
            if (a < mn) nl[n1 * mn + a] = n2;
            int b = atomicAdd(&nn[n2], 1);
            if (b < mn) nl[n2 * mn + b] = n1;
        }
    }
}

__global__ void book_no_atomic(int *nn, int *nl, const float *x, const float *y, int n, int mn,
                               float cutoff_sq) {
    int n1 = blockIdx.x * blockDim.x + threadIdx.x;
    if (n1 >= n) return;
    float x1 = x[n1], y1 = y[n1];
    int count = 0;
    for (int n2 = 0; n2 < n; ++n2) {
        float dx = x[n2] - x1, dy = y[n2] - y1;
        if (dx * dx + dy * dy < cutoff_sq && n2 != n1) {
            if (count < mn) nl[count * n + n1] = n2;
            ++count;
        }
    }
    nn[n1] = count;
}

struct Grid {
    float ox, oy, ix, iy;
    int cx, cy;
};

__device__ int cell_of(const Grid &g, float x, float y, int *cx, int *cy) {
    float u = (x - g.ox) * g.ix, v = (y - g.oy) * g.iy;
    int a = min(max((int)u, 0), g.cx - 1), b = min(max((int)v, 0), g.cy - 1);
    *cx = a;
    *cy = b;
    return b * g.cx + a;
}

__global__ void keys_kernel(const float *x, const float *y, int n, Grid g, unsigned *key,
                            unsigned *index) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int a, b;
    key[i] = cell_of(g, x[i], y[i], &a, &b);
    index[i] = i;
}

// Sorted keys -> each cell's [start, end); coordinates gathered into sorted order.
__global__ void ranges_kernel(const unsigned *key, const unsigned *index, const float *x,
                              const float *y, int n, int *start, int *end, float *sx, float *sy) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    unsigned k = key[p];
    if (p == 0 || key[p - 1] != k) start[k] = p;
    if (p == n - 1 || key[p + 1] != k) end[k] = p + 1;
    sx[p] = x[index[p]];
    sy[p] = y[index[p]];
}

template <bool FILL>
__global__ void search_kernel(const float *sx, const float *sy, const unsigned *index, int n,
                              Grid g, const int *start, const int *end, float cutoff_sq,
                              int *count, const int *offset, int *out) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    float x1 = sx[p], y1 = sy[p];
    int cx, cy;
    cell_of(g, x1, y1, &cx, &cy);
    int i = index[p], found = 0;
    int *list = FILL ? out + offset[i] : nullptr;
    for (int b = max(cy - 1, 0); b <= min(cy + 1, g.cy - 1); ++b)
        for (int a = max(cx - 1, 0); a <= min(cx + 1, g.cx - 1); ++a) {
            int c = b * g.cx + a;
            for (int q = start[c]; q < end[c]; ++q) {
                float dx = sx[q] - x1, dy = sy[q] - y1;
                if (q != p && dx * dx + dy * dy < cutoff_sq) {
                    if (FILL) list[found] = index[q];
                    ++found;
                }
            }
        }
    if (FILL) {
        for (int s = 1; s < found; ++s) {  // insertion sort: a few entries per atom
            int v = list[s], t = s;
            while (t > 0 && list[t - 1] > v) { list[t] = list[t - 1]; --t; }
            list[t] = v;
        }
    } else {
        count[i] = found;
    }
}

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : 0.5f * (v[m - 1] + v[m]);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s xy.txt [TRIALS] [MN]\n", argv[0]);
        return 2;
    }
    int trials = argc > 2 ? atoi(argv[2]) : 20, mn = argc > 3 ? atoi(argv[3]) : 10;
    std::ifstream in(argv[1]);
    std::vector<float> hx, hy;
    std::string line;
    bool first = true;
    while (std::getline(in, line)) {
        std::istringstream w(line);
        std::vector<double> v;
        double d;
        while (w >> d) v.push_back(d);
        if (v.size() == 1 && first) { first = false; continue; }  // the count line
        first = false;
        if (v.size() >= 2) { hx.push_back((float)v[0]); hy.push_back((float)v[1]); }
    }
    int n = (int)hx.size();
    float cutoff_sq = CUTOFF * CUTOFF;
    float *x, *y, *sx, *sy;
    int *nn, *nl;
    CK(cudaMalloc(&x, n * 4)); CK(cudaMalloc(&y, n * 4));
    CK(cudaMalloc(&sx, n * 4)); CK(cudaMalloc(&sy, n * 4));
    CK(cudaMemcpy(x, hx.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(y, hy.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMalloc(&nn, n * 4)); CK(cudaMalloc(&nl, (size_t)n * mn * 4));
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    int blocks = (n + BLOCK - 1) / BLOCK;
    auto time = [&](auto &&work) {
        work();
        CK(cudaDeviceSynchronize());
        std::vector<float> ms;
        for (int t = 0; t < trials; ++t) {
            CK(cudaEventRecord(e0));
            work();
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float m;
            CK(cudaEventElapsedTime(&m, e0, e1));
            ms.push_back(m);
        }
        return median(ms);
    };
    auto entries = [&]() {
        std::vector<int> h(n);
        CK(cudaMemcpy(h.data(), nn, n * 4, cudaMemcpyDeviceToHost));
        long long s = 0;
        for (int c : h) s += c;
        return s;
    };
    if (n <= 2000000) {
        float ms = time([&] {
            CK(cudaMemsetAsync(nn, 0, n * 4));
            book_atomic<<<blocks, BLOCK>>>(nn, nl, x, y, n, mn, cutoff_sq);
        });
        printf("ref neighbor book_atomic atoms=%d ms=%.4f entries=%lld atoms_per_s=%.3e\n", n, ms,
               entries(), n / (ms * 1e-3));
        ms = time([&] { book_no_atomic<<<blocks, BLOCK>>>(nn, nl, x, y, n, mn, cutoff_sq); });
        printf("ref neighbor book_no_atomic atoms=%d ms=%.4f entries=%lld atoms_per_s=%.3e\n", n,
               ms, entries(), n / (ms * 1e-3));
    }

    // The cells: at least the cutoff plus 1/64 wide over the bounding box, at most 2 per atom.
    float lox = *std::min_element(hx.begin(), hx.end()), hix = *std::max_element(hx.begin(), hx.end());
    float loy = *std::min_element(hy.begin(), hy.end()), hiy = *std::max_element(hy.begin(), hy.end());
    double width = CUTOFF * (1.0 + 1.0 / 64.0);
    long long cx = std::max(1LL, (long long)((hix - lox) / width));
    long long cy = std::max(1LL, (long long)((hiy - loy) / width));
    while (cx * cy > 2LL * n) { if (cx >= cy) cx = (cx + 1) / 2; else cy = (cy + 1) / 2; }
    Grid g{lox, loy, (float)(cx / (double)(hix - lox)), (float)(cy / (double)(hiy - loy)), (int)cx, (int)cy};
    int cells = (int)(cx * cy);
    int bits = 1;
    while ((1LL << bits) < cells) ++bits;
    unsigned *key, *key2, *index, *index2;
    int *start, *end, *count, *offset, *out;
    long long *total_dev;
    CK(cudaMalloc(&key, n * 4)); CK(cudaMalloc(&key2, n * 4));
    CK(cudaMalloc(&index, n * 4)); CK(cudaMalloc(&index2, n * 4));
    CK(cudaMalloc(&start, cells * 4)); CK(cudaMalloc(&end, cells * 4));
    CK(cudaMalloc(&count, (n + 1) * 4)); CK(cudaMalloc(&offset, (n + 1) * 4));
    CK(cudaMalloc(&total_dev, 8));
    size_t sort_bytes = 0, scan_bytes = 0;
    cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, key, key2, index, index2, n, 0, bits);
    cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, count, offset, n + 1);
    void *temp;
    CK(cudaMalloc(&temp, std::max(sort_bytes, scan_bytes)));
    size_t capacity = (size_t)n * 8;
    CK(cudaMalloc(&out, capacity * 4));
    int total = 0;
    float ms = time([&] {
        keys_kernel<<<blocks, BLOCK>>>(x, y, n, g, key, index);
        size_t b = sort_bytes;
        cub::DeviceRadixSort::SortPairs(temp, b, key, key2, index, index2, n, 0, bits);
        CK(cudaMemsetAsync(start, 0, cells * 4));
        CK(cudaMemsetAsync(end, 0, cells * 4));
        ranges_kernel<<<blocks, BLOCK>>>(key2, index2, x, y, n, start, end, sx, sy);
        search_kernel<false><<<blocks, BLOCK>>>(sx, sy, index2, n, g, start, end, cutoff_sq, count, nullptr, nullptr);
        CK(cudaMemsetAsync(count + n, 0, 4));
        b = scan_bytes;
        cub::DeviceScan::ExclusiveSum(temp, b, count, offset, n + 1);
        CK(cudaMemcpy(&total, offset + n, 4, cudaMemcpyDeviceToHost));
        if ((size_t)total > capacity) { fprintf(stderr, "output too small\n"); exit(2); }
        search_kernel<true><<<blocks, BLOCK>>>(sx, sy, index2, n, g, start, end, cutoff_sq, nullptr, offset, out);
    });
    printf("ref neighbor cub_cells atoms=%d ms=%.4f entries=%d atoms_per_s=%.3e cells=%d\n", n, ms,
           total, n / (ms * 1e-3), cells);
    return 0;
}
