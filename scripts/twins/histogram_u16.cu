// The nvcc twin of `gridsync bench histogram-u16`: the 65 536-bin histograms of 16-bit values
// (gpu/src/lessons/histogram/wide.rs; launched by host/histogram/wide.rs, WideLaunch and
// wide_config), on the bench's two inputs of 10⁹ values, with the bench's launch shapes. The
// bench times every kernel on every input, the cluster kernel at 2, 4, 8 and 16 blocks a
// cluster; each run of the twin times one of them, on one input or both.
//
// The loop the three kernels share (wide.rs, for_each_value; load.rs for Split16): a
// grid-stride loop over the 16-byte-aligned body of the array, 16-byte loads of eight values,
// four in flight and all issued before any value is counted — word k of each load before word
// k + 1 of any, a word's low half before its high half — then the rest one load a step; after
// the body, the scalar head (up to the first 16-byte boundary) and tail, one value a step, in
// one grid-stride loop over both.
//
// histogram_u16_global: every value a `red.relaxed.gpu.add.u64` of 1 on its global bin.
// Blocks of 1024, one full wave (occupancy × SMs), no more blocks than len / 8 threads fill.
//
// histogram_u16_ranges: block (x, y) zeroes RANGE_BINS = 32 768 u32 counters (128 KiB of
// dynamic shared memory), a barrier; counts the values of its share of the input (grid-stride
// over x) that fall in y · 32 768 .. (y + 1) · 32 768 — one unsigned compare of v − first —
// each a `red.relaxed.cta.shared.add.u32` of 1 (ATOMS.POPC.INC); a barrier; adds each non-zero
// counter to its global bin (relaxed, device scope). Grid (⌈wave / 2⌉, 2) of 1024. The
// counters' shared address is taken once, through the same opaque `cvta.to.shared` as
// gridsync's SharedU32::from_generic (shared_address_opaque says why it matters).
//
// histogram_u16_cluster: clusters of n = 2, 4, 8 or 16 blocks; block r of a cluster owns bins
// r · 65 536 / n .. (r + 1) · 65 536 / n, as many u32 counters in its dynamic shared memory.
// PHASE 1: every block zeroes its counters; a cluster barrier (barrier.cluster.arrive.release,
// barrier.cluster.wait.acquire). PHASE 2: each value is a `mapa` of its counter's address into
// the owning block, v >> (16 − log₂ n), and a `red.relaxed.cluster.shared::cluster.add.u32` of 1
// at counter v & (65 536 / n − 1). A cluster barrier. PHASE 3: every block adds its non-zero
// counters to their global bins. Grid: cudaOccupancyMaxActiveClusters clusters of n × 1024
// threads (at least one), no more than len / 8 threads fill.
//
// One timed trial is what WideLaunch::launch_timed times: the 512 KiB of global bins zeroed
// (cudaMemsetAsync; gridsync's cuMemsetD8Async) and the kernel launched, in launches of at most
// 2³² − 1 values (MAX_VALUES_PER_LAUNCH: the shared counters are u32; one launch at 10⁹), the
// zeroing and the launches between the two events. (The byte histogram's bench zeroes outside
// them; this one does not.) Each trial and warm-up is then downloaded and compared with the
// CPU's histogram, untimed.
//
// Inputs (cli/src/bench/histogram_u16.rs, Input16; host/inputs/arrays.rs): the seed
// 0x753168697374; `uniform`, value i = splitmix64(seed ^ i) >> 48; `tokens`, Zipf's law over
// 50 257 ids — u = (splitmix64(seed ^ i) >> 11) / 2⁵³, the id the first k whose cumulative
// sum of 1 / (j + 1), j ≤ k, exceeds u times the whole sum. The same bits as gridsync's; the
// `values` mode writes them out to compare with gridsync's file byte for byte.
//
// Before timing, the kernel is checked on fresh random values (a new seed each run, printed on
// a mismatch) at 0, 1, 7, 9, 1023, 65 537 and 1 000 003 values, starting 0, 1 and 5 values past
// a 16-byte boundary (a scalar head of 0, 7 and 3 values), on its own launch shape at that size
// and on the smallest grid (one block, or one cluster; and BLOCKS where given); a quarter of
// the values are the edges of the bins' ranges and blocks (0, 4095, 4096, …, 65 535). Any
// mismatch exits 1; a bad argument or a size that does not fit, 2.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o histogram_u16 histogram_u16.cu
//   ./histogram_u16 KERNEL [VALUES] [TRIALS] [BLOCKS] [INPUT]
//       KERNEL  global | ranges | cluster2 | cluster4 | cluster8 | cluster16, or gridsync's row
//               name (histogram_u16_ranges, histogram_u16_cluster×4, u16_cluster×4, …)
//       VALUES  values of each input (10⁹); TRIALS timed launches (20, after 3 warm-ups)
//       BLOCKS  gridsync's row `blocks` (0 or absent: the twin's own wave, as wide_config)
//       INPUT   uniform | tokens | both (both): one JSON line each
//   ./histogram_u16 values uniform|tokens N FILE     # the input, raw little-endian u16
//
// gridsync's side, the same sizes:
//
//   gridsync --json bench histogram-u16 --len 1000000000 --repeats 20
//
// Its rows: `inputs[i]` (`input` "uniform" or "tokens", `values`), `kernels[k]` of each: `name`
// (histogram_u16_global, histogram_u16_ranges, histogram_u16_cluster×2 … ×16), `blocks` — the
// grid's x: for the ranges the x of an (x, 2) grid, for the clusters every block, n per cluster
// — `threads_per_block`, and `ms.median`, the time to compare with this twin's `median_ms`.
// The twin prints a JSON line per input (bandwidth.cuh's report): `kernel` (gridsync's row
// name), `input`, `len`, `blocks` (the grid's x, as gridsync's), `grid_y` (2 for the ranges),
// `cluster_blocks`, `median_ms`, `gb_per_s` (2 bytes a value) and the copy roofline.
// The same input file gridsync writes: `gridsync histogram --bins 65536 --len N [--tokens]
// --write-values FILE`.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "bandwidth.cuh"
#include "device.cuh"

namespace twin {
// Split16 over 16-bit values: eight to a vector.
template <>
struct Vec16Of<unsigned short> {
    using type = uint4;
};
}  // namespace twin

using namespace twin;

// The bench's seed, vocabulary and default size (cli/src/bench/histogram_u16.rs).
constexpr uint64_t SEED = 0x753168697374ull;
constexpr unsigned TOKEN_VOCAB = 50257;
constexpr size_t DEFAULT_VALUES = 1000000000;

// wide.rs and host/histogram/wide.rs.
constexpr unsigned U16_BINS = 1u << 16;
constexpr unsigned WIDE_THREADS_PER_BLOCK = 1024;
constexpr unsigned RANGE_BINS = 1u << 15;
constexpr unsigned RANGES = U16_BINS / RANGE_BINS;
constexpr size_t MAX_VALUES_PER_LAUNCH = 0xffffffffull;
// Values per 16-byte load: a thread's work per step in wide_config.
constexpr size_t VALUES_PER_LOAD = 8;
// Dynamic shared memory a block gets without opting in (gridsync's allow_shared_bytes opts in
// only past it).
constexpr unsigned DEFAULT_SHARED_LIMIT = 48 << 10;
// Clusters past this many blocks need the non-portable attribute (allow_cluster_size).
constexpr unsigned PORTABLE_CLUSTER_BLOCKS = 8;
// Limits of the command line: trials held in memory, and CUDA's largest grid x.
constexpr size_t MAX_TRIALS = 1 << 20;
constexpr size_t MAX_GRID_X = 0x7fffffff;

// ---- The loop every kernel shares (wide.rs, for_each_value) -----------------------------------

// f(value) for every value this thread owns: the body's 16-byte loads, four in flight, then one
// at a time; then the head and the tail one value at a time.
template <class F>
__device__ __forceinline__ void for_each_value(const unsigned short* values, size_t len, F f) {
    Split16<unsigned short> split(values, len);
    size_t stride = threads_per_grid_x();
    auto word = [&](unsigned w) {
        f(w & 0xffff);
        f(w >> 16);
    };
    size_t v = global_id_x();
    while (v + 3 * stride < split.body) {
        uint4 a = split.load(values, v), b = split.load(values, v + stride);
        uint4 c = split.load(values, v + 2 * stride), d = split.load(values, v + 3 * stride);
        // Word k of each load before word k + 1 of any: all four loads are needed at once.
#define TWIN_WORDS(k) \
    word(a.k);        \
    word(b.k);        \
    word(c.k);        \
    word(d.k);
        TWIN_WORDS(x)
        TWIN_WORDS(y)
        TWIN_WORDS(z)
        TWIN_WORDS(w)
#undef TWIN_WORDS
        v += 4 * stride;
    }
    while (v < split.body) {
        uint4 a = split.load(values, v);
        word(a.x);
        word(a.y);
        word(a.z);
        word(a.w);
        v += stride;
    }
    size_t k = global_id_x();
    while (k < split.scalars()) {
        f(values[split.scalar_index(k)]);
        k += stride;
    }
}

// ---- histogram_u16_global ---------------------------------------------------------------------

__global__ void histogram_u16_global(const unsigned short* values, unsigned long long len,
                                     unsigned long long* histo) {
    for_each_value(values, len, [&](unsigned v) { atomic_add_device(histo + v, 1ull); });
}

// ---- Shared counters: addressed, zeroed, and flushed (wide.rs, zero_bins and flush_bins) -------

// The shared-window address of `p`, a generic pointer into this block's shared memory: the
// `cvta.to.shared.u64` and truncation of gridsync's SharedU32::from_generic (seam/ptx/shared.rs),
// in an asm nvcc cannot see through (pure, no memory: it may still share it). twin's
// shared_address (__cvta_generic_to_shared) lets nvcc fold the dynamic shared array's symbol
// into every use, and on sm_90 ptxas then rebuilds that address inside each conditional count
// (S2UR SR_CgaCtaId, UMOV, ULEA: three more instructions per value) where gridsync keeps it in
// a register.
__device__ __forceinline__ unsigned shared_address_opaque(const void* p) {
    unsigned addr;
    asm("{ .reg .u64 s; cvta.to.shared.u64 s, %1; cvt.u32.u64 %0, s; }" : "=r"(addr) : "l"(p));
    return addr;
}

// `bins` counters of this block's dynamic shared memory set to zero (no barrier).
__device__ __forceinline__ void zero_bins(unsigned* s_bins, unsigned bins) {
    unsigned b = threadIdx.x;
    while (b < bins) {
        s_bins[b] = 0;
        b += blockDim.x;
    }
}

// After the barrier that ends the counting: each non-zero counter b added to histo[first + b].
__device__ __forceinline__ void flush_bins(const unsigned* s_bins, unsigned bins,
                                           unsigned long long* histo, unsigned first) {
    unsigned b = threadIdx.x;
    while (b < bins) {
        unsigned c = s_bins[b];
        if (c != 0) atomic_add_device(histo + (first + b), (unsigned long long)c);
        b += blockDim.x;
    }
}

// ---- histogram_u16_ranges ---------------------------------------------------------------------

__global__ void histogram_u16_ranges(const unsigned short* values, unsigned long long len,
                                     unsigned long long* histo, unsigned range_bins) {
    unsigned first = blockIdx.y * range_bins;
    unsigned* s_bins = dynamic_shared<unsigned>();
    zero_bins(s_bins, range_bins);
    __syncthreads();  // every counter is zero before any thread counts
    unsigned base = shared_address_opaque(s_bins);
    for_each_value(values, len, [&](unsigned v) {
        unsigned d = v - first;  // wraps below the range, so one compare skips both sides
        if (d < range_bins) red_add_block_shared(base + d * 4, 1);
    });
    __syncthreads();  // every count is in before any thread flushes
    flush_bins(s_bins, range_bins, histo, first);
}

// ---- histogram_u16_cluster (gpu/src/primitives/cluster.rs for the cluster pieces) -------------

// `%cluster_nctarank`: blocks in this block's cluster.
__device__ __forceinline__ unsigned cluster_block_count() {
    unsigned r;
    asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    return r;
}

// `%cluster_ctarank`: this block's rank in its cluster.
__device__ __forceinline__ unsigned cluster_block_rank() {
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// Every thread of every block of the cluster arrives (release) and waits (acquire): gridsync's
// cluster_sync, as its PTX spells it.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

// `mapa.shared::cluster.u32`: the address of the same shared-memory word in block `rank` of
// the cluster (ClusterU32::map).
__device__ __forceinline__ unsigned map_shared_rank(unsigned addr, unsigned rank) {
    unsigned r;
    asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
    return r;
}

// `red.relaxed.cluster.shared::cluster.add.u32`: ClusterU32::red_add_cluster.
__device__ __forceinline__ void red_add_cluster_shared(unsigned addr, unsigned v) {
    asm volatile("red.relaxed.cluster.shared::cluster.add.u32 [%0], %1;" ::"r"(addr), "r"(v)
                 : "memory");
}

__global__ void histogram_u16_cluster(const unsigned short* values, unsigned long long len,
                                      unsigned long long* histo) {
    unsigned n = cluster_block_count();
    unsigned log2_n = __popc(~n & (n - 1));  // Rust's trailing_zeros: 32 for 0
    // Shifts masked to 31, as rustc's release build emits them.
    unsigned per_block = U16_BINS >> (log2_n & 31);
    unsigned owner_shift = 16 - log2_n;
    unsigned* s_bins = dynamic_shared<unsigned>();
    // PHASE 1: zero this block's counters; no block counts into a sibling's before they are.
    zero_bins(s_bins, per_block);
    cluster_sync();
    // PHASE 2: count each value in the block that owns its bin.
    unsigned base = shared_address_opaque(s_bins);
    for_each_value(values, len, [&](unsigned v) {
        unsigned owner = v >> (owner_shift & 31);
        unsigned bin = v & (per_block - 1);
        red_add_cluster_shared(map_shared_rank(base + bin * 4, owner), 1);
    });
    // Every count has landed, and no block leaves while a sibling may still count into it.
    cluster_sync();
    // PHASE 3: this block's counters into their global bins.
    flush_bins(s_bins, per_block, histo, cluster_block_rank() * per_block);
}

// ---- host: kernels, launch shapes and the launch ---------------------------------------------

enum class Kind { Global, Ranges, Cluster };

// Each kernel a run can time: its argument, gridsync's row name (WideKernel::label), its
// cluster size.
struct Choice {
    const char* arg;
    const char* label;
    Kind kind;
    unsigned cluster;
};
constexpr Choice CHOICES[] = {
    {"global", "histogram_u16_global", Kind::Global, 1},
    {"ranges", "histogram_u16_ranges", Kind::Ranges, 1},
    {"cluster2", "histogram_u16_cluster×2", Kind::Cluster, 2},
    {"cluster4", "histogram_u16_cluster×4", Kind::Cluster, 4},
    {"cluster8", "histogram_u16_cluster×8", Kind::Cluster, 8},
    {"cluster16", "histogram_u16_cluster×16", Kind::Cluster, 16},
};

// The choice `arg` names: its short name, gridsync's row name, or that name without
// `histogram_` (what a script's ${kernel#histogram_} leaves); null if none.
const Choice* find_choice(const std::string& arg) {
    for (const Choice& c : CHOICES) {
        std::string label = c.label;
        if (arg == c.arg || arg == label || arg == label.substr(std::strlen("histogram_")))
            return &c;
    }
    return nullptr;
}

size_t div_ceil(size_t a, size_t b) { return a / b + (a % b != 0); }

// Dynamic shared memory per block (WideKernel::shared_bytes).
unsigned shared_bytes(const Choice& c) {
    switch (c.kind) {
        case Kind::Global: return 0;
        case Kind::Ranges: return 4 * RANGE_BINS;
        case Kind::Cluster: return 4 * U16_BINS / c.cluster;
    }
    return 0;
}

// Opts `kernel` in to `bytes` of dynamic shared memory past the default, as allow_shared_bytes.
template <class K>
void allow_shared_bytes(K kernel, unsigned bytes) {
    if (bytes > DEFAULT_SHARED_LIMIT)
        TWIN_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        int(bytes)));
}

// One kernel's launch shape: grid (blocks, grid_y), in clusters of `cluster` blocks for the
// cluster kernel.
struct Plan {
    const Choice* choice;
    unsigned blocks, grid_y, threads, shared;

    // The cluster launch: cudaLaunchKernelEx with the cluster's dimension.
    cudaLaunchConfig_t cluster_config(cudaLaunchAttribute* attr, unsigned grid) const {
        cudaLaunchConfig_t cfg = {};
        cfg.gridDim = dim3(grid);
        cfg.blockDim = dim3(threads);
        cfg.dynamicSmemBytes = shared;
        cfg.stream = 0;
        attr->id = cudaLaunchAttributeClusterDimension;
        attr->val.clusterDim.x = choice->cluster;
        attr->val.clusterDim.y = 1;
        attr->val.clusterDim.z = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        return cfg;
    }

    // WideLaunch::launch: the bins zeroed, then the kernel over at most MAX_VALUES_PER_LAUNCH
    // values a launch (one launch for an empty input), all queued on the default stream.
    void launch(const unsigned short* values, size_t len, unsigned long long* histo) const {
        TWIN_CHECK(cudaMemsetAsync(histo, 0, U16_BINS * sizeof *histo));
        size_t start = 0;
        for (;;) {
            size_t n = std::min(len - start, MAX_VALUES_PER_LAUNCH);
            const unsigned short* v = values + start;
            switch (choice->kind) {
                case Kind::Global:
                    histogram_u16_global<<<blocks, threads, shared>>>(v, n, histo);
                    TWIN_CHECK(cudaGetLastError());
                    break;
                case Kind::Ranges:
                    histogram_u16_ranges<<<dim3(blocks, grid_y), threads, shared>>>(v, n, histo,
                                                                                   RANGE_BINS);
                    TWIN_CHECK(cudaGetLastError());
                    break;
                case Kind::Cluster: {
                    cudaLaunchAttribute attr;
                    cudaLaunchConfig_t cfg = cluster_config(&attr, blocks);
                    TWIN_CHECK(cudaLaunchKernelEx(&cfg, histogram_u16_cluster, v,
                                                  (unsigned long long)n, histo));
                    break;
                }
            }
            start += n;
            if (start >= len) break;
        }
    }
};

// Exits with status 2 and `what`: a bad argument, or a size that does not fit.
[[noreturn]] void refuse(const std::string& what) {
    std::fprintf(stderr, "%s\n", what.c_str());
    std::exit(2);
}

// wide_config's shape of `c` over `len` values: BLOCKS where given (gridsync's row), else one
// full wave — for the ranges halved over x, for the clusters cuOccupancyMaxActiveClusters —
// no more than len / 8 threads fill, at least one block (one cluster).
Plan plan_for(const Choice& c, size_t len, unsigned want_blocks) {
    Plan p{&c, 0, 1, WIDE_THREADS_PER_BLOCK, shared_bytes(c)};
    size_t work = div_ceil(len, VALUES_PER_LOAD);
    switch (c.kind) {
        case Kind::Global:
            p.blocks = one_wave(histogram_u16_global, work, p.threads, p.shared, want_blocks);
            break;
        case Kind::Ranges: {
            allow_shared_bytes(histogram_u16_ranges, p.shared);
            p.grid_y = RANGES;
            if (want_blocks > 0) {
                p.blocks = want_blocks;
            } else {
                unsigned wave = one_wave(histogram_u16_ranges, work, p.threads, p.shared, 0);
                p.blocks = std::max(1u, unsigned(div_ceil(wave, RANGES)));
            }
            break;
        }
        case Kind::Cluster: {
            unsigned n = c.cluster;
            allow_shared_bytes(histogram_u16_cluster, p.shared);
            if (n > PORTABLE_CLUSTER_BLOCKS)
                TWIN_CHECK(cudaFuncSetAttribute(histogram_u16_cluster,
                                                cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
            if (want_blocks > 0) {
                if (want_blocks % n != 0)
                    refuse("BLOCKS " + std::to_string(want_blocks) + " is not a whole number of " +
                           "clusters of " + std::to_string(n));
                p.blocks = want_blocks;
                break;
            }
            // The probe's grid is one cluster, as Gpu::max_active_clusters asks.
            cudaLaunchAttribute attr;
            cudaLaunchConfig_t probe = p.cluster_config(&attr, n);
            int clusters = 0;
            TWIN_CHECK(cudaOccupancyMaxActiveClusters(&clusters, histogram_u16_cluster, &probe));
            size_t fit = size_t(std::max(clusters, 1));
            size_t needed = std::max<size_t>(div_ceil(work, size_t(n) * p.threads), 1);
            p.blocks = unsigned(std::min(fit, needed)) * n;
            break;
        }
    }
    return p;
}

// ---- host: inputs and the CPU's histogram -----------------------------------------------------

enum class Input { Uniform, Tokens };

const char* input_name(Input input) { return input == Input::Uniform ? "uniform" : "tokens"; }

// 0..len cut into one range per core, at least 65 536 long (chunk_len).
std::vector<std::pair<size_t, size_t>> core_ranges(size_t len) {
    size_t cores = std::max(1u, std::thread::hardware_concurrency());
    size_t chunk = std::max<size_t>(div_ceil(len, cores), size_t(1) << 16);
    std::vector<std::pair<size_t, size_t>> ranges;
    for (size_t start = 0; start < len; start += chunk)
        ranges.push_back({start, std::min(start + chunk, len)});
    return ranges;
}

// f(r, start, end) for each range r of core_ranges(len), a thread each.
template <class F>
void par_ranges(size_t len, F f) {
    std::vector<std::pair<size_t, size_t>> ranges = core_ranges(len);
    std::vector<std::thread> threads;
    for (size_t r = 0; r < ranges.size(); ++r)
        threads.emplace_back(f, r, ranges[r].first, ranges[r].second);
    for (std::thread& t : threads) t.join();
}

// gridsync's uniform_u16(len, seed) or zipf_u16(len, seed, TOKEN_VOCAB).
std::vector<unsigned short> input_values(Input input, size_t len) {
    std::vector<unsigned short> out(len);
    if (input == Input::Uniform) {
        par_ranges(len, [&](size_t, size_t start, size_t end) {
            for (size_t i = start; i < end; ++i)
                out[i] = (unsigned short)(splitmix64(SEED ^ uint64_t(i)) >> 48);
        });
        return out;
    }
    // The law's cumulative sums, 1 / (k + 1) added in order in f64.
    std::vector<double> cdf(TOKEN_VOCAB);
    double total = 0.0;
    for (unsigned k = 0; k < TOKEN_VOCAB; ++k) {
        total += 1.0 / double(k + 1);
        cdf[k] = total;
    }
    par_ranges(len, [&](size_t, size_t start, size_t end) {
        for (size_t i = start; i < end; ++i) {
            double u = double(splitmix64(SEED ^ uint64_t(i)) >> 11) / double(uint64_t(1) << 53);
            // partition_point(c <= u · total): the first sum past it.
            size_t id = size_t(std::upper_bound(cdf.begin(), cdf.end(), u * total) - cdf.begin());
            out[i] = (unsigned short)std::min<size_t>(id, TOKEN_VOCAB - 1);
        }
    });
    return out;
}

// The CPU's histogram, on every core (histogram_u16_cpu).
std::vector<unsigned long long> cpu_histogram(const unsigned short* values, size_t len) {
    std::vector<std::vector<unsigned long long>> parts(core_ranges(len).size());
    par_ranges(len, [&](size_t r, size_t start, size_t end) {
        parts[r].assign(U16_BINS, 0);
        for (size_t i = start; i < end; ++i) parts[r][values[i]] += 1;
    });
    std::vector<unsigned long long> total(U16_BINS, 0);
    for (const auto& p : parts)
        for (unsigned b = 0; b < U16_BINS; ++b) total[b] += p[b];
    return total;
}

// check: the bins at `histo` against `want`, naming the first that differs.
void check_bins(const std::string& what, const unsigned long long* histo,
                const std::vector<unsigned long long>& want) {
    std::vector<unsigned long long> got(U16_BINS);
    TWIN_CHECK(cudaMemcpy(got.data(), histo, U16_BINS * sizeof *histo, cudaMemcpyDeviceToHost));
    for (unsigned b = 0; b < U16_BINS; ++b)
        if (got[b] != want[b])
            mismatch(what + ": bin " + std::to_string(b) + " holds " + std::to_string(got[b]) +
                     ", the CPU counted " + std::to_string(want[b]));
}

// ---- host: sizes ------------------------------------------------------------------------------

// Bytes the host can still give: MemAvailable (0 where it cannot be read: no check).
size_t host_available_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    size_t kib = 0;
    while (meminfo >> key) {
        if (key == "MemAvailable:" && (meminfo >> kib)) return kib * 1024;
        meminfo.ignore(1 << 10, '\n');
    }
    return 0;
}

// Refuses `bytes` of host memory and `device_bytes` of GPU memory for `what` where either
// exceeds nine tenths of what is free (gridsync's memory checks keep a tenth to spare); no GPU
// memory asked, no GPU query.
void check_fits(const std::string& what, size_t bytes, size_t device_bytes) {
    size_t host = host_available_bytes();
    if (host > 0 && bytes > host / 10 * 9)
        refuse(what + ": needs " + std::to_string(bytes) + " bytes of host memory, " +
               std::to_string(host) + " available");
    if (device_bytes == 0) return;
    size_t free = 0, total = 0;
    TWIN_CHECK(cudaMemGetInfo(&free, &total));
    if (device_bytes > free / 10 * 9)
        refuse(what + ": needs " + std::to_string(device_bytes) + " bytes of GPU memory, " +
               std::to_string(free) + " free of " + std::to_string(total));
}

// ---- host: the check on fresh random values ---------------------------------------------------

// The kernel on fresh random values at small and odd sizes, misaligned starts, its own shape
// and the smallest grid (and BLOCKS where given); exits 1 on the first wrong bin.
void self_check(const Choice& c, unsigned want_blocks) {
    const size_t sizes[] = {0, 1, 7, 9, 1023, 65537, 1000003};
    const size_t offsets[] = {0, 1, 5};  // values past a 16-byte boundary
    // The edges of the ranges' and the cluster blocks' bins.
    const unsigned short edges[] = {0, 1, 4095, 4096, 8191, 8192, 16383, 16384, 32767, 32768,
                                    49151, 49152, 65534, 65535};
    const size_t max_len = 1000003, slack = 8;
    std::random_device device;
    uint64_t seed = (uint64_t(device()) << 32) ^ device();
    std::mt19937_64 rng(seed);

    unsigned short* buf = nullptr;
    unsigned long long* histo = nullptr;
    TWIN_CHECK(cudaMalloc(&buf, (max_len + slack) * sizeof *buf));
    TWIN_CHECK(cudaMalloc(&histo, U16_BINS * sizeof *histo));
    for (size_t len : sizes) {
        for (size_t offset : offsets) {
            std::vector<unsigned short> values(len);
            for (size_t i = 0; i < len; ++i) {
                uint64_t r = rng();
                values[i] = (r & 3) == 0 ? edges[(r >> 2) % (sizeof edges / sizeof *edges)]
                                         : (unsigned short)(r >> 48);
            }
            std::vector<unsigned long long> want = cpu_histogram(values.data(), len);
            if (len > 0)
                TWIN_CHECK(cudaMemcpy(buf + offset, values.data(), len * sizeof *buf,
                                      cudaMemcpyHostToDevice));
            unsigned smallest = c.kind == Kind::Cluster ? c.cluster : 1;
            std::vector<unsigned> grids = {0, smallest};
            if (want_blocks > 0) grids.push_back(want_blocks);
            for (unsigned blocks : grids) {
                Plan p = plan_for(c, len, blocks);
                p.launch(buf + offset, len, histo);
                TWIN_CHECK(cudaDeviceSynchronize());
                check_bins(std::string(c.label) + " on " + std::to_string(len) +
                               " random values from value " + std::to_string(offset) + ", " +
                               std::to_string(p.blocks) + "×" + std::to_string(p.grid_y) +
                               " blocks (seed " + std::to_string(seed) + ")",
                           histo, want);
            }
        }
    }
    TWIN_CHECK(cudaFree(buf));
    TWIN_CHECK(cudaFree(histo));
}

// ---- main -------------------------------------------------------------------------------------

// `values uniform|tokens N FILE`: the input, raw little-endian u16, as --write-values writes it.
int write_values(int argc, char** argv) {
    std::string which = argc > 2 ? argv[2] : "";
    if (argc != 5 || (which != "uniform" && which != "tokens"))
        refuse(std::string("usage: ") + argv[0] + " values uniform|tokens N FILE");
    size_t len = arg_size(argc, argv, 3, 0, false);
    if (len > SIZE_MAX / 4) refuse("N: too many values");
    check_fits("N " + std::to_string(len), 2 * len, 0);
    std::vector<unsigned short> values =
        input_values(which == "uniform" ? Input::Uniform : Input::Tokens, len);
    FILE* f = std::fopen(argv[4], "wb");
    if (f == nullptr) refuse(std::string(argv[4]) + ": " + std::strerror(errno));
    size_t wrote = std::fwrite(values.data(), sizeof values[0], len, f);
    if (std::fclose(f) != 0 || wrote != len)
        refuse(std::string(argv[4]) + ": write failed");
    return 0;
}

int main(int argc, char** argv) {
    std::string which = argc > 1 ? argv[1] : "";
    if (which == "values") return write_values(argc, argv);
    const Choice* choice = find_choice(which);
    if (choice == nullptr)
        refuse(std::string("usage: ") + argv[0] +
               " global|ranges|cluster2|cluster4|cluster8|cluster16 [VALUES] [TRIALS] [BLOCKS] "
               "[uniform|tokens|both]\n       " +
               argv[0] + " values uniform|tokens N FILE");
    size_t len = arg_size(argc, argv, 2, DEFAULT_VALUES);
    size_t trials_arg = arg_size(argc, argv, 3, DEFAULT_TRIALS);
    size_t blocks_arg = arg_size(argc, argv, 4, 0, false);
    if (trials_arg > MAX_TRIALS) refuse("TRIALS: at most " + std::to_string(MAX_TRIALS));
    if (blocks_arg > MAX_GRID_X) refuse("BLOCKS: at most " + std::to_string(MAX_GRID_X));
    int trials = int(trials_arg);
    unsigned want_blocks = unsigned(blocks_arg);
    std::string input_arg = argc > 5 ? argv[5] : "both";
    std::vector<Input> inputs;
    if (input_arg == "uniform" || input_arg == "both") inputs.push_back(Input::Uniform);
    if (input_arg == "tokens" || input_arg == "both") inputs.push_back(Input::Tokens);
    if (inputs.empty()) refuse("INPUT: uniform, tokens or both, not `" + input_arg + "`");

    if (choice->kind == Kind::Cluster) {
        int device = 0, clusters = 0;
        TWIN_CHECK(cudaGetDevice(&device));
        TWIN_CHECK(cudaDeviceGetAttribute(&clusters, cudaDevAttrClusterLaunch, device));
        if (!clusters) refuse(std::string(choice->label) + ": clusters need sm_90");
    }
    // The sizes, before anything of them is allocated: the values on the host and their CPU
    // histogram's per-thread bins; on the GPU, the values and the bins.
    if (len > SIZE_MAX / 4) refuse("VALUES: too many values");
    size_t bytes = 2 * len;
    size_t cpu_bins = size_t(std::max(1u, std::thread::hardware_concurrency())) * U16_BINS * 8;
    check_fits("VALUES " + std::to_string(len), bytes + cpu_bins, bytes + U16_BINS * 8);

    self_check(*choice, want_blocks);

    double copy = copy_gb_per_s(COPY_BYTES, trials);
    Plan plan = plan_for(*choice, len, want_blocks);

    unsigned short* values = nullptr;
    unsigned long long* histo = nullptr;
    TWIN_CHECK(cudaMalloc(&values, bytes));
    TWIN_CHECK(cudaMalloc(&histo, U16_BINS * sizeof *histo));
    for (Input input : inputs) {
        std::vector<unsigned long long> want;
        {
            std::vector<unsigned short> data = input_values(input, len);
            want = cpu_histogram(data.data(), len);
            TWIN_CHECK(cudaMemcpy(values, data.data(), bytes, cudaMemcpyHostToDevice));
        }
        std::string what = std::string(choice->label) + " on " + input_name(input);
        auto ms = time_trials(
            trials, [] {}, [&] { plan.launch(values, len, histo); },
            [&] { check_bins(what, histo, want); });
        char extra[160];
        std::snprintf(extra, sizeof extra,
                      ", \"input\": \"%s\", \"values\": %zu, \"grid_y\": %u, "
                      "\"cluster_blocks\": %u, \"bins\": %u",
                      input_name(input), len, plan.grid_y, choice->cluster, U16_BINS);
        print_report({"histogram_u16", choice->label, len, bytes, plan.blocks, plan.threads,
                      plan.shared, trials, copy, extra},
                     ms);
        std::fflush(stdout);
    }
    TWIN_CHECK(cudaFree(values));
    TWIN_CHECK(cudaFree(histo));
    return 0;
}
