// The nvcc twins of `gridsync streams`' kernels: normalizing an array in place, a ← a / Σa, by
// the Numba tutorial's three-kernel pipeline and by gridsync's two-kernel one
// (host/normalize/lane.rs, `Lane::queue`; `Pipeline::Source` and `Pipeline::SinglePass`):
//
// - `partial_reduce` (gpu/src/lessons/reduce/tree.rs): a float64 sum per thread over a plain
//   grid-stride `while` loop, stored as f32 in the thread's slot of blockDim.x floats of shared
//   memory, a barrier, the tree (slot tid += slot tid + offset for offset = 128, …, 1, a barrier
//   after each round; 64-bit indices, as the Rust's usize); thread 0 writes slot 0 to
//   partial_reduction[blockIdx.x];
// - `single_thread_sum` (gpu/src/lessons/normalize.rs): thread 0 of a [1, 1] launch adds the n
//   partials in order in an f32 register and stores the total once;
// - `divide_by` (normalize.rs): reads the f32 sum; a sum that is zero, infinite or NaN leaves the
//   array unchanged (`usable_divisor`, on the sum widened to double); else array[i] /= sum
//   (IEEE f32 division, `div.rn.f32` on both sides) over `index::grid_stride(size)`, a `StepBy`
//   iterator, written here the way Rust runs it: the step count fixed first (the range's length
//   over the stride, rounded up), then counted down;
// - `reduce_vec_sum_f32_in_f64` (gpu/src/lessons/reduce/vec.rs, `vec_reduce::<SumF32InF64>`):
//   the array cut as Split16 (a scalar head up to the first 16-byte boundary, a body of float4,
//   a scalar tail); head and tail by a plain counted `while` (`grid_stride_each`); the body four
//   float4 loads per step (VEC_UNROLL), each float4 ((x + y) + (z + w)) in double, the four as
//   (v0 + v1) + (v2 + v3) before joining the thread's double; then `finish_in_last_block`
//   (reduce/last_block.rs): the block's sum (block_reduce.rs: shuffles, one double per warp, one
//   barrier) to partials[blockIdx.x], `__threadfence`, a ticket (atomicInc(count, gridDim.x):
//   PTX `atom.global.inc.u32`, relaxed and device scope by default, gridsync's
//   `atom.relaxed.gpu.inc.u32`); the block that draws the last one takes an acquire fence
//   (`fence.acq_rel.gpu`), adds the partials in block order, writes the double sum and resets the
//   counter (relaxed device-scope store);
// - `divide_by_sum` (normalize.rs): reads the double sum (the same guard); r = 1 / sum once per
//   thread (`rcp.rn.f64` on both sides); each element becomes float(double(a) · r); the head
//   and tail one float at a time over `grid_stride` (a `StepBy` again), the body as float4,
//   DIVIDE_UNROLL = 4 loads issued before any of the four stores, then the rest one float4 at a
//   time.
//
// partial_reduce's body and vec_reduce (with finish_in_last_block) are reduce.cuh's, shared with
// reduce.cu and reduce_pipeline.cu; grid_stride and grid_stride_each are device.cuh's.
//
// Launch shapes, as lane.rs: the source's kernels on blocks of 256, min(⌈len / 256⌉, 32 × 40)
// of them (at least one), partial_reduce with 256 floats of dynamic shared memory,
// single_thread_sum on one thread; the single-pass kernels on blocks of 256, ⌈len / 4⌉ vectors'
// worth of blocks (at least one) but no more than a full wave of each kernel (the occupancy
// calculator's blocks per SM × SMs, asked once: `Grids::of`), the reduction with
// last_block_shared_bytes::<f64>(256) = 80 bytes (8 doubles, then 16 bytes of flag). gridsync
// asks the calculator about its own kernels; REDUCE_BLOCKS and DIVIDE_BLOCKS set the twin's
// waves to gridsync's where nvcc's registers give another (ncu's launch__grid_size below). One
// device buffer each for the array, the partials (8-byte words, f32 or f64), the ticket counter
// and the sum (an f32 in its low 4 bytes, or an f64), as `Lane`.
//
// Timing, as lane.rs's `time_pipeline` (what `gridsync streams` reports as "kernels alone"):
// gridsync's input, uniform_f32(len, 7, 0.5, 1.5) (host/inputs/arrays.rs), on the device at a
// 256-byte-aligned address; the array normalized again by every trial, never reset (after the
// first its sum is ≈ 1); event-timed on one stream; the median. One JSON line per pipeline and
// size (all its kernels between two events: gridsync's number), and one per kernel and size
// (each kernel alone between its own events, the pipeline still run in order every trial, so
// the array stays normalized). 3 warm-ups here; gridsync's `time_pipeline` takes 1. After the
// timed runs the sum word must be 1 within twice the pipeline's bound (the array was already
// normalized) and the ticket counter 0.
//
// Checked before timing, on fresh random inputs (uniform_f32 in [0.5, 1.5) of a seed drawn from
// std::random_device, printed, or SEED), at every size starting 0, 1, 2 and 3 floats past a
// 16-byte boundary (heads of 0, 3, 2 and 1), with a sentinel in the floats around the array
// that no kernel may change; each kernel launched alone and its output read back:
//
// - partial_reduce: each partial within (γ(9, u32) + γ(k, u64) + γ(256 k, u64)) · B[b] of the
//   float64 sum B[b] of its block's elements (the f32 conversion and 8 tree levels; the thread's
//   chain of k = ⌈len / (blocks · 256)⌉ double additions; the reference's own chain);
// - single_thread_sum: within γ(blocks, u32) + γ(blocks, u64) of the float64 sum of the partials
//   it read, relative to it;
// - divide_by and divide_by_sum: every element within (u32 + 2 u64) and (u32 + 4 u64) of
//   double(a) / sum (the sum the device wrote): one f32 rounding of the quotient, or of a product
//   by a rounded reciprocal;
// - reduce_vec_sum_f32_in_f64: within γ(d, u64) + 3 u64 of Neumaier's float64 sum S of the
//   array (d: the thread's scalar and vector steps, the 4 levels of a step's tree, 10 shuffle
//   levels in each block reduction, the last block's ⌈blocks / 256⌉ partials), the counter 0;
// - each pipeline end to end: every element within (e + u32) / (1 − e) + 3 u64 of a / S, e the
//   sum's bound (source: γ(9 + blocks, u32) + γ(k, u64) + 3 u64); the JSON's max_rel_error and
//   rel_bound;
// - and both divide kernels leave an array unchanged, bit for bit, when the sum is 0, ∞ or NaN.
//
// γ(d, u) = d·u / (1 − d·u) is Higham's bound for a sum whose every element passes through at
// most d roundings of unit roundoff u (u32 = 2⁻²⁴, u64 = 2⁻⁵³); every input is positive, so
// Σ|a| = Σa. Exits 1 on any mismatch, 2 on bad arguments or sizes that do not fit.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o normalize normalize.cu
//   ./normalize [SIZES] [TRIALS] [REDUCE_BLOCKS] [DIVIDE_BLOCKS] [SEED]
//     SIZES comma-separated (default 1,1000003,10000000), TRIALS 20, *_BLOCKS 0 (the occupancy
//     calculator's wave)
//
// gridsync's side, the same events (its "kernels alone" per pipeline: `kernels[]`, each
// `pipeline` "source" or "single_pass" and `ms.median`, beside the twin's pipeline rows):
//
//   gridsync --json streams --arrays 1 --streams 1 --len 10000000 --repeats 1 > streams.json
//
// Each kernel alone, the same way on both sides (ncu flushes the caches and fixes the clocks
// before each kernel; the median of each kernel's launches at the timed size's grid, the JSON's
// "blocks" — the checks' launches share it, the zero-sum ones do not):
//
//   K='regex:^(partial_reduce|single_thread_sum|divide_by(_sum)?|reduce_vec_sum_f32_in_f64)$'
//   M=gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread
//   ncu --metrics $M -k "$K" gridsync streams --arrays 1 --streams 1 --len 10000000 --repeats 1
//   ncu --metrics $M -k "$K" ./normalize 10000000 9
//
// The SASS: ptxas -arch=sm_90 on gridsync's gpu_sm_90.ptx against cuobjdump -sass of this
// binary; the kernels carry gridsync's names (here C++-mangled: _Z9divide_byPfyPKf, …).
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "bandwidth.cuh"
#include "device.cuh"
#include "reduce.cuh"

using namespace twin;

// gpu/src/lessons/reduce/mod.rs: the source's launch, and the single-pass kernels' blocks.
constexpr unsigned NUMBA_THREADS_PER_BLOCK = 256;
constexpr unsigned NUMBA_BLOCKS_PER_GRID = 32 * 40;
constexpr unsigned THREADS_PER_BLOCK = 256;
// log2(NUMBA_THREADS_PER_BLOCK): the rounds of partial_reduce's tree.
constexpr unsigned TREE_LEVELS = 8;
// normalize.rs's DIVIDE_UNROLL: float4 loads in flight per thread (as reduce.cuh's VEC_UNROLL).
constexpr int DIVIDE_UNROLL = 4;
// lane.rs's time_pipeline input: uniform_f32(len, 7, 0.5, 1.5).
constexpr uint64_t TIMING_SEED = 7;
constexpr float INPUT_LO = 0.5f, INPUT_HI = 1.5f;
// Floats of room after the largest array: the checks start it up to 3 floats in.
constexpr size_t SLACK = 3;
// A value no kernel writes: the floats around a checked array must keep it.
constexpr float SENTINEL = -7.0f;
// The array of the zero-sum check: four blocks of divide_by, one of divide_by_sum.
constexpr size_t GUARD_LEN = 1003;

// ---- Kernels --------------------------------------------------------------------------------

// normalize.rs's usable_divisor: finite and not zero.
__device__ __forceinline__ bool usable_divisor(double s) { return isfinite(s) && s != 0.0; }

// tree.rs's partial_reduce (reduce.cuh).
__global__ void partial_reduce(const float* array, unsigned long long size,
                               float* partial_reduction) {
    partial_reduce_body(array, size, partial_reduction);
}

__global__ void single_thread_sum(const float* partial_reduction, unsigned long long n,
                                  float* sum) {
    if (global_id_x() != 0) return;
    float total = 0.0f;
    for (size_t i = 0; i < n; ++i) total += partial_reduction[i];
    *sum = total;
}

__global__ void divide_by(float* array, unsigned long long size, const float* val_array) {
    float val = *val_array;
    if (!usable_divisor(double(val))) return;
    grid_stride(size, [=](size_t i) { array[i] = array[i] / val; });
}

// last_block.rs's last_block_shared_bytes::<f64>: 8 doubles of scratch, then the flag.
constexpr unsigned SINGLE_PASS_SHARED = last_block_shared_bytes(THREADS_PER_BLOCK, sizeof(double));

// vec.rs's reduce_vec_sum_f32_in_f64: vec_reduce::<SumF32InF64> (reduce.cuh).
__global__ void reduce_vec_sum_f32_in_f64(const float* x, unsigned long long n, double* partials,
                                          unsigned* count, double* result) {
    vec_reduce<SumF32InF64>(x, n, partials, count, result);
}

__device__ __forceinline__ float4 scale4(float4 a, double r) {
    return make_float4(float(double(a.x) * r), float(double(a.y) * r), float(double(a.z) * r),
                       float(double(a.w) * r));
}

__global__ void divide_by_sum(float* array, unsigned long long size, const double* sum) {
    double s = *sum;
    if (!usable_divisor(s)) return;
    double r = 1.0 / s;
    Split16<float> split(array, size);
    grid_stride(split.scalars(), [=](size_t k) {
        size_t i = split.scalar_index(k);
        array[i] = float(double(array[i]) * r);
    });
    float4* body = reinterpret_cast<float4*>(array + split.head);
    size_t stride = threads_per_grid_x();
    size_t v = global_id_x();
    // All loads of a step before any store: the stores could alias the later loads.
    while (v + (DIVIDE_UNROLL - 1) * stride < split.body) {
        float4 *p0 = body + v, *p1 = body + v + stride;
        float4 *p2 = body + v + 2 * stride, *p3 = body + v + 3 * stride;
        float4 x0 = *p0, x1 = *p1, x2 = *p2, x3 = *p3;
        *p0 = scale4(x0, r);
        *p1 = scale4(x1, r);
        *p2 = scale4(x2, r);
        *p3 = scale4(x3, r);
        v += DIVIDE_UNROLL * stride;
    }
    while (v < split.body) {
        float4 a = body[v];
        body[v] = scale4(a, r);
        v += stride;
    }
}

// ---- Launch shapes and buffers (host/normalize/lane.rs) -------------------------------------

enum class Pipeline { Source, SinglePass };

// The pipeline as gridsync's JSON spells it (`kernels[].pipeline`).
const char* label(Pipeline p) { return p == Pipeline::Source ? "source" : "single_pass"; }

// lane.rs's Grids: the most blocks each kernel is launched with.
struct Waves {
    unsigned reduce, divide, source;
    size_t partials() const { return std::max(reduce, source); }
};

Waves waves_of(unsigned reduce_blocks, unsigned divide_blocks) {
    size_t any = SIZE_MAX / 2;  // Grids::of's `usize::MAX / 2`: a full wave
    return {one_wave(reduce_vec_sum_f32_in_f64, any, THREADS_PER_BLOCK, SINGLE_PASS_SHARED,
                     reduce_blocks),
            one_wave(divide_by_sum, any, THREADS_PER_BLOCK, 0, divide_blocks),
            NUMBA_BLOCKS_PER_GRID};
}

// lane.rs's blocks_for: `threads`-thread blocks for `work` items, at most `max`, at least one.
unsigned blocks_for(size_t work, unsigned threads, unsigned max) {
    size_t b = (work + threads - 1) / threads;
    return unsigned(std::min(std::max(b, size_t(1)), size_t(max)));
}

// lane.rs's Lane: the array and the scratch of both pipelines' reductions.
struct Lane {
    float* data;         // capacity floats
    uint64_t* partials;  // waves.partials() words: f32 partials or f64 ones
    unsigned* count;     // the ticket counter, 0 between launches
    uint64_t* sum;       // an f32 in its low 4 bytes, or an f64
    Waves waves;
};

// One kernel of a pipeline over one array: its shape, the bytes it moves, and its launch.
struct Launch {
    const char* kernel;
    unsigned blocks, threads, shared;
    size_t bytes;
    std::function<void()> queue;
};

// lane.rs's Lane::queue: the launches of `p` over the `len` floats at `x`.
std::vector<Launch> launches(Pipeline p, const Lane& lane, float* x, size_t len) {
    unsigned long long n = len;
    if (p == Pipeline::Source) {
        unsigned threads = NUMBA_THREADS_PER_BLOCK;
        unsigned blocks = blocks_for(len, threads, lane.waves.source);
        unsigned shared = threads * unsigned(sizeof(float));
        float* partials = reinterpret_cast<float*>(lane.partials);
        float* sum = reinterpret_cast<float*>(lane.sum);
        return {{"partial_reduce", blocks, threads, shared, 4 * len,
                 [=] { partial_reduce<<<blocks, threads, shared>>>(x, n, partials); }},
                {"single_thread_sum", 1, 1, 0, 4 * size_t(blocks),
                 [=] { single_thread_sum<<<1, 1>>>(partials, blocks, sum); }},
                {"divide_by", blocks, threads, 0, 8 * len,
                 [=] { divide_by<<<blocks, threads>>>(x, n, sum); }}};
    }
    unsigned threads = THREADS_PER_BLOCK;
    size_t work = (len + 3) / 4;
    unsigned reduce = blocks_for(work, threads, lane.waves.reduce);
    unsigned divide = blocks_for(work, threads, lane.waves.divide);
    double* partials = reinterpret_cast<double*>(lane.partials);
    double* sum = reinterpret_cast<double*>(lane.sum);
    unsigned* count = lane.count;
    return {{"reduce_vec_sum_f32_in_f64", reduce, threads, SINGLE_PASS_SHARED, 4 * len,
             [=] {
                 reduce_vec_sum_f32_in_f64<<<reduce, threads, SINGLE_PASS_SHARED>>>(
                     x, n, partials, count, sum);
             }},
            {"divide_by_sum", divide, threads, 0, 8 * len,
             [=] { divide_by_sum<<<divide, threads>>>(x, n, sum); }}};
}

// ---- Bounds ---------------------------------------------------------------------------------

size_t div_ceil(size_t a, size_t b) { return (a + b - 1) / b; }

// The source pipeline's sum, relative to Σ|a|: the f32 conversion, the tree and the one thread's
// chain in f32; each thread's chain in f64.
double source_sum_bound(size_t len, unsigned blocks) {
    size_t per_thread = div_ceil(len, size_t(blocks) * NUMBA_THREADS_PER_BLOCK);
    double f32 = gamma_bound(1 + TREE_LEVELS + blocks, F32_UNIT);
    double f64 = gamma_bound(double(per_thread), F64_UNIT);
    return f32 + f64 + f32 * f64;
}

// reduce_vec_sum_f32_in_f64's sum of `len` floats whose body is `body` float4, relative to Σ|a|.
double single_pass_sum_bound(size_t len, size_t body, unsigned blocks) {
    size_t stride = size_t(blocks) * THREADS_PER_BLOCK;
    double d = double(div_ceil(len - 4 * body, stride)) + 4 + double(div_ceil(body, stride)) +
               10 + double(div_ceil(blocks, THREADS_PER_BLOCK)) + 10;
    return gamma_bound(d, F64_UNIT);
}

// Split16::of's body, from the address as the device sees it.
size_t body_of(const float* p, size_t len) {
    size_t misaligned = (reinterpret_cast<uintptr_t>(p) % 16) / sizeof(float);
    size_t head = std::min((4 - misaligned) % 4, len);
    return (len - head) / 4;
}

// ---- Checks ---------------------------------------------------------------------------------

struct Case {
    size_t len, offset;
    uint64_t seed;
};

[[noreturn]] void fail(const Case& c, const char* kernel, const std::string& what) {
    char where[160];
    std::snprintf(where, sizeof where, "%s at len %zu, offset %zu, seed %" PRIu64 ": ", kernel,
                  c.len, c.offset, c.seed);
    mismatch(where + what);
    std::exit(1);
}

template <class T>
T download_one(const void* p) {
    T v;
    TWIN_CHECK(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost));
    return v;
}

// |got − want| ≤ bound, or the case fails.
void expect_within(const Case& c, const char* kernel, const char* what, double got, double want,
                   double bound) {
    if (!(std::fabs(got - want) <= bound)) {
        char msg[256];
        std::snprintf(msg, sizeof msg, "%s %.17g, float64 %.17g (allowed error %.3e)", what, got,
                      want, bound);
        fail(c, kernel, msg);
    }
}

// The device's whole buffer after a pipeline: the sentinel around the array, each element within
// `step_rel` of a / `sum` (what the divide kernel saw) — and, returned, the largest error
// relative to a / `exact` (the pipeline end to end).
double check_divided(const Case& c, const char* kernel, const std::vector<float>& a,
                     const std::vector<float>& whole, double sum, double step_rel, double exact) {
    for (size_t i = 0; i < whole.size(); ++i) {
        bool inside = i >= c.offset && i < c.offset + c.len;
        if (!inside && std::memcmp(&whole[i], &SENTINEL, sizeof(float)) != 0)
            fail(c, kernel, "wrote float " + std::to_string(i) + " of the buffer, outside the "
                            "array");
    }
    double worst = 0.0;
    for (size_t i = 0; i < c.len; ++i) {
        double y = whole[c.offset + i], q = double(a[i]) / sum;
        if (!(std::fabs(y - q) <= step_rel * q)) {
            char what[96];
            std::snprintf(what, sizeof what, "element %zu: a = %.9g, sum %.17g:", i, double(a[i]),
                          sum);
            expect_within(c, kernel, what, y, q, step_rel * q);
        }
        worst = std::max(worst, std::fabs(y - double(a[i]) / exact) / (double(a[i]) / exact));
    }
    return worst;
}

struct Checked {
    double max_rel_error = 0.0, rel_bound = 0.0;
};

// The source pipeline, kernel by kernel, on one case.
void check_source(const Lane& lane, const Case& c, const std::vector<float>& a,
                  std::vector<float>& whole, double exact, Checked& out) {
    float* x = lane.data + c.offset;
    auto steps = launches(Pipeline::Source, lane, x, c.len);
    unsigned blocks = steps[0].blocks;
    size_t stride = size_t(blocks) * NUMBA_THREADS_PER_BLOCK, per_thread = div_ceil(c.len, stride);

    steps[0].queue();
    TWIN_CHECK(cudaGetLastError());
    std::vector<float> partials(blocks);
    TWIN_CHECK(cudaMemcpy(partials.data(), lane.partials, blocks * sizeof(float),
                          cudaMemcpyDeviceToHost));
    std::vector<double> want(blocks, 0.0);
    for (size_t i = 0; i < c.len; ++i) want[(i % stride) / NUMBA_THREADS_PER_BLOCK] += a[i];
    double tree = gamma_bound(1 + TREE_LEVELS, F32_UNIT);
    double chain = gamma_bound(double(per_thread), F64_UNIT);
    double block_rel = tree + chain + tree * chain +
                       gamma_bound(double(per_thread) * NUMBA_THREADS_PER_BLOCK, F64_UNIT);
    for (unsigned b = 0; b < blocks; ++b) {
        std::string what = "block " + std::to_string(b) + "'s partial";
        expect_within(c, "partial_reduce", what.c_str(), partials[b], want[b], block_rel * want[b]);
    }

    steps[1].queue();
    TWIN_CHECK(cudaGetLastError());
    double sum = download_one<float>(lane.sum), of_partials = 0.0;
    for (float p : partials) of_partials += p;
    expect_within(c, "single_thread_sum", "the sum of the partials", sum, of_partials,
                  (gamma_bound(blocks, F32_UNIT) + gamma_bound(blocks, F64_UNIT)) * of_partials);
    double e = source_sum_bound(c.len, blocks) + 3 * F64_UNIT;
    expect_within(c, "single_thread_sum", "the array's sum", sum, exact, e * exact);

    steps[2].queue();
    TWIN_CHECK(cudaGetLastError());
    TWIN_CHECK(cudaMemcpy(whole.data(), lane.data, whole.size() * sizeof(float),
                          cudaMemcpyDeviceToHost));
    double worst = check_divided(c, "divide_by", a, whole, sum, F32_UNIT + 2 * F64_UNIT, exact);
    double bound = (e + F32_UNIT) / (1 - e) + 3 * F64_UNIT;
    if (!(worst <= bound))
        fail(c, "source pipeline", "an element " + std::to_string(worst) +
                                       " off a / Σa, relatively; allowed " + std::to_string(bound));
    out.max_rel_error = std::max(out.max_rel_error, worst);
    out.rel_bound = std::max(out.rel_bound, bound);
}

// The single-pass pipeline, kernel by kernel, on one case.
void check_single_pass(const Lane& lane, const Case& c, const std::vector<float>& a,
                       std::vector<float>& whole, double exact, Checked& out) {
    float* x = lane.data + c.offset;
    auto steps = launches(Pipeline::SinglePass, lane, x, c.len);
    double e = single_pass_sum_bound(c.len, body_of(x, c.len), steps[0].blocks) + 3 * F64_UNIT;

    steps[0].queue();
    TWIN_CHECK(cudaGetLastError());
    double sum = download_one<double>(lane.sum);
    expect_within(c, "reduce_vec_sum_f32_in_f64", "the array's sum", sum, exact, e * exact);
    if (download_one<unsigned>(lane.count) != 0)
        fail(c, "reduce_vec_sum_f32_in_f64", "left the ticket counter non-zero");

    steps[1].queue();
    TWIN_CHECK(cudaGetLastError());
    TWIN_CHECK(cudaMemcpy(whole.data(), lane.data, whole.size() * sizeof(float),
                          cudaMemcpyDeviceToHost));
    double worst =
        check_divided(c, "divide_by_sum", a, whole, sum, F32_UNIT + 4 * F64_UNIT, exact);
    double bound = (e + F32_UNIT + 4 * F64_UNIT) / (1 - e) + 3 * F64_UNIT;
    if (!(worst <= bound))
        fail(c, "single-pass pipeline", "an element " + std::to_string(worst) +
                                            " off a / Σa, relatively; allowed " +
                                            std::to_string(bound));
    out.max_rel_error = std::max(out.max_rel_error, worst);
    out.rel_bound = std::max(out.rel_bound, bound);
}

// Both pipelines on fresh random arrays of `len` floats starting 0–3 floats in.
void check_size(const Lane& lane, size_t len, uint64_t seed, Checked out[2]) {
    std::vector<float> whole(len + SLACK);
    for (size_t offset = 0; offset <= SLACK; ++offset) {
        Case c{len, offset, seed ^ (uint64_t(len) << 2 | offset)};
        std::vector<float> a = uniform_f32(len, c.seed, INPUT_LO, INPUT_HI);
        double exact = neumaier_sum(a.data(), len).sum;
        auto upload = [&] {
            std::fill(whole.begin(), whole.end(), SENTINEL);
            std::copy(a.begin(), a.end(), whole.begin() + offset);
            TWIN_CHECK(cudaMemcpy(lane.data, whole.data(), whole.size() * sizeof(float),
                                  cudaMemcpyHostToDevice));
        };
        upload();
        check_source(lane, c, a, whole, exact, out[0]);
        upload();
        check_single_pass(lane, c, a, whole, exact, out[1]);
    }
}

// normalize.rs's guard: a sum of 0, ∞ or NaN leaves the array unchanged, in both divide kernels.
void check_unusable_sums(const Lane& lane, uint64_t seed) {
    const size_t len = GUARD_LEN, offset = 1;
    Case c{len, offset, seed};
    std::vector<float> a = uniform_f32(len + SLACK, seed, INPUT_LO, INPUT_HI), back(len + SLACK);
    const double bad[] = {0.0, INFINITY, NAN};
    for (Pipeline p : {Pipeline::Source, Pipeline::SinglePass}) {
        Launch divide = launches(p, lane, lane.data + offset, len).back();
        for (double s : bad) {
            TWIN_CHECK(cudaMemcpy(lane.data, a.data(), a.size() * sizeof(float),
                                  cudaMemcpyHostToDevice));
            uint64_t word = 0;
            float s32 = float(s);
            if (p == Pipeline::Source) std::memcpy(&word, &s32, sizeof s32);
            else std::memcpy(&word, &s, sizeof s);
            TWIN_CHECK(cudaMemcpy(lane.sum, &word, sizeof word, cudaMemcpyHostToDevice));
            divide.queue();
            TWIN_CHECK(cudaGetLastError());
            TWIN_CHECK(cudaMemcpy(back.data(), lane.data, back.size() * sizeof(float),
                                  cudaMemcpyDeviceToHost));
            if (std::memcmp(a.data(), back.data(), a.size() * sizeof(float)) != 0)
                fail(c, divide.kernel, "changed the array though the sum was " + std::to_string(s));
        }
    }
}

// ---- Timing ---------------------------------------------------------------------------------

void upload_timing_input(const Lane& lane, const std::vector<float>& input) {
    TWIN_CHECK(cudaMemcpy(lane.data, input.data(), input.size() * sizeof(float),
                          cudaMemcpyHostToDevice));
}

// `p` on gridsync's input of `len` floats: the pipeline between two events, then each kernel
// between its own; one JSON line each.
void time_pipeline(const Lane& lane, Pipeline p, const std::vector<float>& input, int trials,
                   double copy, const Checked& checked, uint64_t seed) {
    size_t len = input.size();
    auto steps = launches(p, lane, lane.data, len);
    auto queue_all = [&] {
        for (const Launch& s : steps) {
            s.queue();
            TWIN_CHECK(cudaGetLastError());
        }
    };

    upload_timing_input(lane, input);
    std::vector<double> whole_ms;
    for (int t = 0; t < WARMUP + trials; ++t) {
        double m = event_ms(queue_all);
        if (t >= WARMUP) whole_ms.push_back(m);
    }
    // The last trial summed an array the trials before had normalized: Σ ≈ 1.
    double sum = p == Pipeline::Source ? double(download_one<float>(lane.sum))
                                       : download_one<double>(lane.sum);
    double e = p == Pipeline::Source ? source_sum_bound(len, steps[0].blocks)
                                     : single_pass_sum_bound(len, len / 4, steps[0].blocks);
    Case c{len, 0, TIMING_SEED};
    expect_within(c, label(p), "the sum after the timed runs", sum, 1.0, 2 * e + 4 * F32_UNIT);
    if (download_one<unsigned>(lane.count) != 0)
        fail(c, label(p), "left the ticket counter non-zero");

    upload_timing_input(lane, input);
    std::vector<std::vector<double>> step_ms(steps.size());
    for (int t = 0; t < WARMUP + trials; ++t) {
        for (size_t k = 0; k < steps.size(); ++k) {
            double m = event_ms([&] {
                steps[k].queue();
                TWIN_CHECK(cudaGetLastError());
            });
            if (t >= WARMUP) step_ms[k].push_back(m);
        }
    }

    std::string kernels, shapes;
    size_t bytes = 0;
    for (size_t k = 0; k < steps.size(); ++k) {
        const Launch& s = steps[k];
        std::string extra = std::string(", \"pipeline\": \"") + label(p) + "\"";
        print_report({"normalize", s.kernel, len, s.bytes, s.blocks, s.threads, s.shared, trials,
                      copy, extra},
                     step_ms[k]);
        kernels += (k ? "+" : "") + std::string(s.kernel);
        shapes += (k ? ", " : "") + std::to_string(s.blocks) + " × " + std::to_string(s.threads);
        bytes += s.bytes;
    }
    std::sort(whole_ms.begin(), whole_ms.end());
    double med = median(whole_ms), gb = double(bytes) / (med * 1e-3) / 1e9;
    std::printf(
        "{\"twin\": \"normalize\", \"device\": \"%s\", \"len\": %zu, \"bytes\": %zu, "
        "\"median_ms\": %.6f, \"min_ms\": %.6f, \"max_ms\": %.6f, \"trials\": %d, "
        "\"gb_per_s\": %.3f, \"copy_gb_per_s\": %.3f, \"fraction_of_copy\": %.4f, "
        "\"kernel\": \"%s\", \"pipeline\": \"%s\", \"shape\": \"%s\", \"max_rel_error\": %.3e, "
        "\"rel_bound\": %.3e, \"seed\": %" PRIu64 "}\n",
        device_name(), len, bytes, med, whole_ms.front(), whole_ms.back(), trials, gb, copy,
        gb / copy, kernels.c_str(), label(p), shapes.c_str(), checked.max_rel_error,
        checked.rel_bound, seed);
}

// ---- Arguments ------------------------------------------------------------------------------

[[noreturn]] void usage(const char* argv0, const std::string& why) {
    if (!why.empty()) std::fprintf(stderr, "%s\n", why.c_str());
    std::fprintf(stderr,
                 "usage: %s [SIZES] [TRIALS] [REDUCE_BLOCKS] [DIVIDE_BLOCKS] [SEED]\n"
                 "  SIZES comma-separated floats per array (default 1,1000003,10000000); TRIALS "
                 "1-100000 (20);\n  *_BLOCKS the single-pass kernels' full waves, 0 = the "
                 "occupancy calculator's (0); SEED the checks' (random)\n",
                 argv0);
    std::exit(2);
}

// `text` as an unsigned integer in [lo, hi], or the usage.
uint64_t parse_number(const char* argv0, const std::string& text, const char* name, uint64_t lo,
                      uint64_t hi) {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || text[0] == '-' || *end != '\0' || errno == ERANGE || v < lo || v > hi)
        usage(argv0, std::string(name) + ": `" + text + "` is not an integer in [" +
                         std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
}

int main(int argc, char** argv) {
    if (argc > 6) usage(argv[0], "too many arguments");
    std::vector<size_t> sizes;
    {
        std::string list = argc > 1 ? argv[1] : "1,1000003,10000000";
        size_t at = 0;
        do {
            size_t comma = list.find(',', at);
            std::string item = list.substr(at, comma == std::string::npos ? comma : comma - at);
            // 4·(len + SLACK) bytes must not overflow; the device check below is the real bound.
            sizes.push_back(parse_number(argv[0], item, "SIZES", 1, SIZE_MAX / 8));
            at = comma == std::string::npos ? comma : comma + 1;
        } while (at != std::string::npos);
    }
    int trials = int(argc > 2 ? parse_number(argv[0], argv[2], "TRIALS", 1, 100000)
                                 : DEFAULT_TRIALS);
    unsigned reduce_blocks =
        unsigned(argc > 3 ? parse_number(argv[0], argv[3], "REDUCE_BLOCKS", 0, INT_MAX) : 0);
    unsigned divide_blocks =
        unsigned(argc > 4 ? parse_number(argv[0], argv[4], "DIVIDE_BLOCKS", 0, INT_MAX) : 0);
    uint64_t seed = argc > 5 ? parse_number(argv[0], argv[5], "SEED", 0, UINT64_MAX)
                             : (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();

    // Sizes checked before anything is allocated: the largest array, its slack, the scratch and
    // the roofline copy's two buffers (freed before the lane is allocated) must fit.
    size_t capacity = std::max(*std::max_element(sizes.begin(), sizes.end()), GUARD_LEN) + SLACK;
    Waves waves = waves_of(reduce_blocks, divide_blocks);
    size_t free_bytes = 0, total_bytes = 0;
    TWIN_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    size_t lane_bytes = capacity * sizeof(float) + waves.partials() * 8 + 64;
    if (std::max(lane_bytes, 2 * COPY_BYTES) > free_bytes)
        usage(argv[0], "the largest size needs " + std::to_string(lane_bytes) +
                           " bytes of device memory (the roofline copy " +
                           std::to_string(2 * COPY_BYTES) + "); " + std::to_string(free_bytes) +
                           " are free");

    double copy = copy_gb_per_s(COPY_BYTES, trials);

    Lane lane{nullptr, nullptr, nullptr, nullptr, waves};
    TWIN_CHECK(cudaMalloc(&lane.data, capacity * sizeof(float)));
    TWIN_CHECK(cudaMalloc(&lane.partials, waves.partials() * 8));
    TWIN_CHECK(cudaMalloc(&lane.count, sizeof(unsigned)));
    TWIN_CHECK(cudaMalloc(&lane.sum, 8));
    TWIN_CHECK(cudaMemset(lane.partials, 0, waves.partials() * 8));
    TWIN_CHECK(cudaMemset(lane.count, 0, sizeof(unsigned)));
    TWIN_CHECK(cudaMemset(lane.sum, 0, 8));

    check_unusable_sums(lane, seed);
    for (size_t len : sizes) {
        Checked checked[2];
        check_size(lane, len, seed, checked);
        std::vector<float> input = uniform_f32(len, TIMING_SEED, INPUT_LO, INPUT_HI);
        time_pipeline(lane, Pipeline::Source, input, trials, copy, checked[0], seed);
        time_pipeline(lane, Pipeline::SinglePass, input, trials, copy, checked[1], seed);
    }

    TWIN_CHECK(cudaFree(lane.data));
    TWIN_CHECK(cudaFree(lane.partials));
    TWIN_CHECK(cudaFree(lane.count));
    TWIN_CHECK(cudaFree(lane.sum));
    return 0;
}
