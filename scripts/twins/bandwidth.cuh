// The host side of the bandwidth twins (reduce, histogram, count-above, dot): gridsync's
// inputs, grid, copy roofline and trial loop, as cli/src/bench/sized.rs and host/runtime/copy.rs
// run them, and the JSON line each twin prints.
//
//   inputs   host/inputs/arrays.rs (splitmix64, uniform_f32) and host/histogram/mod.rs
//            (uniform_bytes): the same bits as gridsync's, so both sides read the same input;
//   grid     host/runtime/grid.rs (grid_stride_config): one full wave — blocks per SM from the
//            occupancy calculator × SMs — but no more blocks than the work fills. gridsync asks
//            the calculator about *its* kernel; nvcc's may use other registers, so run.sh passes
//            gridsync's grid (the `blocks` of its JSON row) and the twin launches exactly that;
//   roofline host/runtime/copy.rs: cudaMemcpyAsync device to device of 1 GiB of a non-zero
//            pattern, 2 untimed, then `trials` event-timed; read + written bytes / median;
//   trials   cli/src/bench/sized.rs: WARMUP untimed launches, then `trials` event-timed ones, each
//            after an untimed reset and followed by a check of its result; the median.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

#include "twin.cuh"

namespace twin {

// Untimed launches before the timed ones (gridsync's WARMUP).
constexpr int WARMUP = 3;
// Timed launches by default (gridsync's DEFAULT_TRIALS).
constexpr int DEFAULT_TRIALS = 20;
// Bytes of the roofline copy (gridsync's copy::DEFAULT_BYTES).
constexpr size_t COPY_BYTES = size_t(1) << 30;

// SplitMix64's finalizer of x + golden gamma (host/inputs/arrays.rs).
inline uint64_t splitmix64(uint64_t x) {
    uint64_t z = x + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// gridsync's uniform_f32(len, seed, lo, hi): value i is lo + (hi - lo) · u, u the top 24 bits of
// splitmix64(splitmix64(seed) ^ i) over 2^24 (a multiple of 2^-24, exact in f32).
inline std::vector<float> uniform_f32(size_t len, uint64_t seed, float lo, float hi) {
    std::vector<float> out(len);
    uint64_t key = splitmix64(seed);
    for (size_t i = 0; i < len; ++i) {
        float unit = float(splitmix64(key ^ uint64_t(i)) >> 40) / float(1u << 24);
        out[i] = lo + (hi - lo) * unit;
    }
    return out;
}

// gridsync's uniform_bytes(len, seed): each 8-byte group g is the little-endian bytes of
// SplitMix64's finalizer of (seed ^ g·γ) + γ, γ the golden gamma.
inline std::vector<unsigned char> uniform_bytes(size_t len, uint64_t seed) {
    std::vector<unsigned char> out(len);
    const uint64_t gamma = 0x9E3779B97F4A7C15ull;
    for (size_t g = 0; g * 8 < len; ++g) {
        uint64_t z = (seed ^ (uint64_t(g) * gamma)) + gamma;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        for (size_t k = 0; k < 8 && g * 8 + k < len; ++k) out[g * 8 + k] = (unsigned char)(z >> (8 * k));
    }
    return out;
}

// The launch shape of a grid-stride kernel over `work` items (one per thread per step):
// `blocks` if positive, else one full wave from the occupancy calculator, at most what `work`
// fills, at least one block.
template <class K>
unsigned one_wave(K kernel, size_t work, unsigned threads, unsigned shared, unsigned blocks) {
    if (blocks > 0) return blocks;
    int per_sm = 0, device = 0, sms = 0;
    TWIN_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, int(threads), shared));
    TWIN_CHECK(cudaGetDevice(&device));
    TWIN_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    size_t wave = size_t(per_sm > 0 ? per_sm : 1) * size_t(sms);
    size_t needed = (work + threads - 1) / threads;
    if (needed < 1) needed = 1;
    return unsigned(needed < wave ? needed : wave);
}

// The device-to-device copy's GB/s (read + written), gridsync's roofline.
inline double copy_gb_per_s(size_t bytes, int trials) {
    size_t words = bytes / 4;
    std::vector<uint32_t> pattern(words);
    for (size_t i = 0; i < words; ++i) pattern[i] = uint32_t(i) * 2654435761u;
    uint32_t *src = nullptr, *dst = nullptr;
    TWIN_CHECK(cudaMalloc(&src, words * 4));
    TWIN_CHECK(cudaMalloc(&dst, words * 4));
    TWIN_CHECK(cudaMemcpy(src, pattern.data(), words * 4, cudaMemcpyHostToDevice));
    TWIN_CHECK(cudaMemset(dst, 0, words * 4));
    auto copy = [&] { TWIN_CHECK(cudaMemcpyAsync(dst, src, words * 4, cudaMemcpyDeviceToDevice)); };
    for (int i = 0; i < 2; ++i) copy();
    TWIN_CHECK(cudaDeviceSynchronize());
    std::vector<double> ms;
    for (int t = 0; t < trials; ++t) ms.push_back(event_ms(copy));
    TWIN_CHECK(cudaFree(src));
    TWIN_CHECK(cudaFree(dst));
    return 2.0 * double(words * 4) / (median(ms) * 1e-3) / 1e9;
}

// WARMUP + trials rounds of reset() (untimed), launch() (event-timed), check() (untimed: it
// downloads and compares the result, exiting non-zero on a mismatch). Returns the timed ms.
template <class Reset, class Launch, class Check>
std::vector<double> time_trials(int trials, Reset reset, Launch launch, Check check) {
    std::vector<double> ms;
    for (int t = 0; t < WARMUP + trials; ++t) {
        reset();
        double m = event_ms([&] {
            launch();
            TWIN_CHECK(cudaGetLastError());
        });
        check();
        if (t >= WARMUP) ms.push_back(m);
    }
    return ms;
}

// What every twin reports; `extra` is more JSON members, each starting with ", ".
struct Report {
    const char* twin;
    const char* kernel;
    size_t len;
    size_t bytes;
    unsigned blocks;
    unsigned threads;
    unsigned shared;
    int trials;
    double copy_gb_per_s;
    std::string extra;
};

inline void print_report(const Report& r, const std::vector<double>& ms) {
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    double med = median(ms);
    double gb = double(r.bytes) / (med * 1e-3) / 1e9;
    std::printf(
        "{\"twin\": \"%s\", \"device\": \"%s\", \"len\": %zu, \"bytes\": %zu, \"median_ms\": %.6f, "
        "\"min_ms\": %.6f, \"max_ms\": %.6f, \"trials\": %d, \"gb_per_s\": %.3f, "
        "\"copy_gb_per_s\": %.3f, \"fraction_of_copy\": %.4f, \"kernel\": \"%s\", "
        "\"shape\": \"%u × %u\", \"blocks\": %u, \"threads_per_block\": %u, \"shared_bytes\": %u%s}\n",
        r.twin, device_name(), r.len, r.bytes, med, sorted.front(), sorted.back(), r.trials, gb,
        r.copy_gb_per_s, gb / r.copy_gb_per_s, r.kernel, r.blocks, r.threads, r.blocks, r.threads,
        r.shared, r.extra.c_str());
}

// argv[i] as a size, or `fallback` if absent; exits on a malformed or non-positive value
// where `positive`.
inline size_t arg_size(int argc, char** argv, int i, size_t fallback, bool positive = true) {
    if (argc <= i) return fallback;
    char* end = nullptr;
    unsigned long long v = std::strtoull(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || (positive && v == 0)) {
        std::fprintf(stderr, "argument %d: `%s` is not a %s integer\n", i, argv[i],
                     positive ? "positive" : "non-negative");
        std::exit(2);
    }
    return size_t(v);
}

// Exits with status 1 and `what` on a wrong result.
inline void mismatch(const std::string& what) {
    std::fprintf(stderr, "mismatch: %s\n", what.c_str());
    std::exit(1);
}

}  // namespace twin
