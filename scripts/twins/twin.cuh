// What every nvcc twin of a gridsync kernel shares: error checks, host and event timing, and
// the median of a set of trials, reported as one JSON line a script can read beside
// `gridsync bench … --json`.
//
// Each twin does the same work as gridsync's benchmark of the same name: the same inputs,
// launch shape, warm-up, trial count and statistic (the median), so that a ratio of the two
// compares the compilers and the launch paths, not the methods.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

// Exits with the CUDA error's name and where it happened.
#define TWIN_CHECK(call)                                                                    \
    do {                                                                                    \
        cudaError_t err_ = (call);                                                          \
        if (err_ != cudaSuccess) {                                                          \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
                         cudaGetErrorString(err_));                                         \
            std::exit(1);                                                                   \
        }                                                                                   \
    } while (0)

namespace twin {

// The median of `xs` (the mean of the two middle ones for an even count).
inline double median(std::vector<double> xs) {
    std::sort(xs.begin(), xs.end());
    size_t n = xs.size();
    if (n == 0) return 0.0;
    return n % 2 ? xs[n / 2] : 0.5 * (xs[n / 2 - 1] + xs[n / 2]);
}

// Host wall time of `f`, microseconds.
template <class F>
double host_us(F f) {
    auto start = std::chrono::steady_clock::now();
    f();
    auto end = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::micro>(end - start).count();
}

// Event-timed `f` on the default stream, milliseconds.
template <class F>
double event_ms(F f) {
    cudaEvent_t a, b;
    TWIN_CHECK(cudaEventCreate(&a));
    TWIN_CHECK(cudaEventCreate(&b));
    TWIN_CHECK(cudaEventRecord(a));
    f();
    TWIN_CHECK(cudaEventRecord(b));
    TWIN_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    TWIN_CHECK(cudaEventElapsedTime(&ms, a, b));
    TWIN_CHECK(cudaEventDestroy(a));
    TWIN_CHECK(cudaEventDestroy(b));
    return ms;
}

// The device's name, for the report.
inline const char* device_name() {
    static cudaDeviceProp p;
    int d = 0;
    TWIN_CHECK(cudaGetDevice(&d));
    TWIN_CHECK(cudaGetDeviceProperties(&p, d));
    return p.name;
}

}  // namespace twin
