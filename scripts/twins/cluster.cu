// The nvcc twin of `gridsync bench cluster`'s cluster-barrier kernels (gpu/src/bench/cluster.rs,
// on gpu/src/primitives/cluster.rs and gpu/src/seam/ptx/cluster.rs), sm_90:
//
//   cluster_sync_bare     `rounds` × cluster_sync: barrier.cluster.arrive.release, then
//                         barrier.cluster.wait.acquire — every thread of the grid, in clusters.
//   cluster_sync_relaxed  `rounds` × barrier.cluster.arrive.relaxed, then wait.acquire: the
//                         barrier that only paces, ordering no memory.
//   cluster_split         `rounds` × arrive.release, `work` dependent integer operations
//                         (x = x · 1664525 + 1013904223 from x = the thread's global index, 32
//                         bits), wait.acquire; a store of x only if it is 0x5eed5eed, so that the
//                         work stays.
//   cluster_unsplit       the same work after a whole cluster_sync: what the split saves is the
//                         difference (the bench times it in the same row).
//
// Launch shapes and timing, as cli/src/bench/cluster.rs (`run`): clusters of 2, 4, 8 and 16
// blocks (16 with the non-portable size allowed, as host/runtime/cluster.rs allows it above 8)
// at 128 and 1024 threads per block, no shared memory, a one-dimensional grid of every cluster
// the GPU holds at once — cudaOccupancyMaxActiveClusters of cluster_sync_bare at the shape,
// for all four kernels, as gridsync asks the driver about its cluster_sync_bare — or BLOCKS
// (pass the `blocks` of gridsync's row); launched with cudaLaunchKernelEx and the
// cluster-dimension attribute (scripts/cluster_launch.cuh, shared with reference_cluster.cu), as
// gridsync's cuLaunchKernelEx. Per kernel and shape: one warm-up
// launch (the bench's; not the bandwidth benches' three), then TRIALS event-timed launches, each
// of ROUNDS barriers (1000 by default), split work SPLIT_WORK = 64; microseconds per barrier =
// ms · 1000 / ROUNDS; the median (and min, max), one JSON line per kernel and shape, its
// `field` naming the member of gridsync's row it matches (`sync_us`, `relaxed_us`, `split_us`,
// `unsplit_us`, each {median, min, max}). As gridsync's launch path, every launch of a cluster
// of more than 8 blocks first sets the kernel's non-portable attribute (host time, inside the
// events, as in gridsync's timed closure).
//
// The split's work is the same source on both sides, and both compilers fold consecutive LCG
// steps into one multiply-add: 8 per `mad` in gridsync's PTX (LLVM's unrolling), 4 in this
// twin's (nvcc 13.5), so the 64 operations are 8 and 16 dependent IMADs per round — a compiler
// difference, which is what the ratio measures.
//
// The check. A cluster barrier leaves nothing in memory to inspect after the timed launches (as
// barrier.cu inspects its arrival word), so every shape is first run, untimed, with a check
// kernel on the same arrive and wait functions, the same grid and ROUNDS rounds, once with the
// release arrival (cluster_sync_bare's and cluster_split's) and once with the relaxed one. Lane
// 0 of each warp takes two tickets per round from its cluster's word in global memory
// (`atom.add`, relaxed, device scope: one total order per word, whatever the barrier orders):
// one before it arrives and one after its wait. With n ticket-takers per cluster (the cluster's
// warps), round r's second ticket must be at least n·(2r + 1) — every warp of the cluster took
// its round-r first ticket before anyone left round r — and at most n·(2r + 3) − 2; the first at
// least n·(2r − 1) + 1 (r > 0) and at most n·(2r + 1) − 1. Every first ticket is compared before
// its warp's lane 0 arrives, so the arrival waits for the ticket's value — it cannot overtake its
// own ticket, even where the arrival is relaxed. After the launch every word must be 2·n·ROUNDS.
// A failure exits with status 1; a CUDA error with status 1 (TWIN_CHECK); bad arguments, 2.
//
// Written with inline PTX (`asm volatile` with a memory clobber, the strings gridsync's seam
// emits: Rust's asm! without `nomem` clobbers memory). cuda::ptx::barrier_cluster_arrive
// (sem_release / sem_relaxed) and barrier_cluster_wait(sem_acquire) emit the same three
// strings, but its relaxed arrival has no memory clobber, which would let the compiler move the
// check's first-ticket comparison after it; cooperative groups' this_cluster()
// .sync() emits the unqualified forms (release and acquire by default: the same barrier).
// The cluster's special registers through cuda::ptx::get_sreg_*.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o cluster cluster.cu
//   ./cluster [all [ROUNDS] [TRIALS]]                          every shape, its own grid
//   ./cluster shape CLUSTER THREADS [BLOCKS] [ROUNDS] [TRIALS]  one shape (BLOCKS 0: its own)
//   gridsync --json bench cluster --rounds 1000 --repeats 20   (rows[]: cluster_blocks,
//                                                               threads_per_block, blocks)
#include <cuda/atomic>
#include <cuda/ptx>

#include <climits>
#include <string>

#include "../cluster_launch.cuh"
#include "device.cuh"
#include "twin.cuh"

using namespace twin;

// cli/src/bench/cluster.rs: CLUSTER_SIZES, THREADS, DEFAULT_ROUNDS, SPLIT_WORK.
constexpr unsigned CLUSTER_SIZES[] = {2, 4, 8, 16};
constexpr unsigned THREADS[] = {128, 1024};
constexpr unsigned DEFAULT_ROUNDS = 1000;
constexpr unsigned MAX_ROUNDS = 1000000;
constexpr unsigned SPLIT_WORK = 64;
// The bench's untimed launches per kernel and shape, and its default timed ones (Repeats).
constexpr int WARMUP = 1;
constexpr int DEFAULT_TRIALS = 20;
// host/runtime/cluster.rs: PORTABLE_CLUSTER_BLOCKS, MAX_CLUSTER_BLOCKS.
constexpr unsigned PORTABLE_CLUSTER_BLOCKS = 8;
constexpr unsigned MAX_CLUSTER_BLOCKS = 16;
// The split's work (cluster.rs): one LCG step, and the value that would be stored.
constexpr unsigned LCG_MUL = 1664525u, LCG_ADD = 1013904223u, SENTINEL = 0x5eed5eedu;
// The check's ticket words: one 128-byte line per cluster.
constexpr unsigned TICKET_STRIDE = 32;

// ---- The cluster barrier, one function per instruction (seam/ptx/cluster.rs) ---------------

// cluster_arrive: this thread's writes before it are released to the cluster's waiters.
__device__ __forceinline__ void cluster_arrive() {
    asm volatile("barrier.cluster.arrive.release;" ::: "memory");
}

// cluster_arrive_relaxed: the arrival only counts.
__device__ __forceinline__ void cluster_arrive_relaxed() {
    asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}

// cluster_wait: until every running thread of the cluster has arrived; acquire.
__device__ __forceinline__ void cluster_wait() {
    asm volatile("barrier.cluster.wait.acquire;" ::: "memory");
}

__device__ __forceinline__ void cluster_sync() {
    cluster_arrive();
    cluster_wait();
}

// ---- The benchmark's kernels (bench/cluster.rs) -----------------------------------------------

__global__ void cluster_sync_bare(unsigned rounds) {
    for (unsigned r = 0; r < rounds; ++r) cluster_sync();
}

__global__ void cluster_sync_relaxed(unsigned rounds) {
    for (unsigned r = 0; r < rounds; ++r) {
        cluster_arrive_relaxed();
        cluster_wait();
    }
}

__global__ void cluster_split(unsigned rounds, unsigned work, unsigned* out) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;  // global_id_x() as u32
    for (unsigned r = 0; r < rounds; ++r) {
        cluster_arrive();
        for (unsigned w = 0; w < work; ++w) x = x * LCG_MUL + LCG_ADD;
        cluster_wait();
    }
    if (x == SENTINEL) *out = x;  // reached only for this value, so the work stays
}

__global__ void cluster_unsplit(unsigned rounds, unsigned work, unsigned* out) {
    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned r = 0; r < rounds; ++r) {
        cluster_sync();
        for (unsigned w = 0; w < work; ++w) x = x * LCG_MUL + LCG_ADD;
    }
    if (x == SENTINEL) *out = x;
}

// ---- The check (see the header) ---------------------------------------------------------------

using TicketRef = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

// A ticket outside [lo, hi]: counted in bad[0], the earliest such round kept in bad[1].
__device__ __forceinline__ void expect_between(unsigned ticket, unsigned lo, unsigned hi,
                                               unsigned round, unsigned* bad) {
    if (ticket < lo || ticket > hi) {
        atomicAdd(bad, 1u);
        atomicMin(bad + 1, round);
    }
}

template <bool RELAXED>
__global__ void twin_cluster_barrier_check(unsigned rounds, unsigned* tickets, unsigned* bad) {
    // n: the cluster's ticket-takers, one per warp.
    unsigned n = cuda::ptx::get_sreg_cluster_nctarank() * (blockDim.x / WARP_SIZE);
    TicketRef ticket(tickets[cuda::ptx::get_sreg_clusterid_x() * TICKET_STRIDE]);
    bool taker = lane_id() == 0;
    for (unsigned r = 0; r < rounds; ++r) {
        if (taker) {
            unsigned first = ticket.fetch_add(1, cuda::memory_order_relaxed);
            expect_between(first, r == 0 ? 0 : n * (2 * r - 1) + 1, n * (2 * r + 1) - 1, r, bad);
        }
        if (RELAXED)
            cluster_arrive_relaxed();
        else
            cluster_arrive();
        cluster_wait();
        if (taker) {
            unsigned second = ticket.fetch_add(1, cuda::memory_order_relaxed);
            expect_between(second, n * (2 * r + 1), n * (2 * r + 3) - 2, r, bad);
        }
    }
}

// ---- host -------------------------------------------------------------------------------------

struct Shape {
    unsigned cluster, threads, blocks;
};

// gridsync's allow_cluster_size: clusters above the portable 8 blocks need the kernel's consent.
template <class... Params>
void allow_cluster(void (*kernel)(Params...), unsigned cluster) {
    if (cluster > PORTABLE_CLUSTER_BLOCKS)
        TWIN_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}

// A launch of `s.blocks` blocks in clusters of `s.cluster`: cudaLaunchKernelEx with the
// cluster-dimension attribute, on the default stream.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), const Shape& s, Args... args) {
    allow_cluster(kernel, s.cluster);
    ClusterLaunch in_clusters(s.cluster, s.blocks, s.threads);
    TWIN_CHECK(cudaLaunchKernelEx(&in_clusters.config, kernel, args...));
}

// Gpu::max_active_clusters: the clusters of cluster_sync_bare at `cluster` × `threads` that can
// be resident at once (the grid is ignored), at least 1.
unsigned max_active_clusters(unsigned cluster, unsigned threads) {
    allow_cluster(cluster_sync_bare, cluster);
    ClusterLaunch one(cluster, cluster, threads);
    int clusters = 0;
    TWIN_CHECK(cudaOccupancyMaxActiveClusters(&clusters, cluster_sync_bare, &one.config));
    return clusters > 1 ? unsigned(clusters) : 1u;
}

// The check kernel at `s` over `rounds`; exits 1 unless every ticket was in its window and
// every cluster's word ended at 2·n·rounds.
void check(const Shape& s, unsigned rounds, bool relaxed) {
    unsigned clusters = s.blocks / s.cluster;
    unsigned n = s.cluster * (s.threads / WARP_SIZE);
    size_t words = size_t(clusters) * TICKET_STRIDE;
    unsigned *tickets = nullptr, *bad = nullptr;
    TWIN_CHECK(cudaMalloc(&tickets, words * sizeof(unsigned)));
    TWIN_CHECK(cudaMalloc(&bad, 2 * sizeof(unsigned)));
    TWIN_CHECK(cudaMemset(tickets, 0, words * sizeof(unsigned)));
    unsigned bad_init[2] = {0, UINT_MAX};
    TWIN_CHECK(cudaMemcpy(bad, bad_init, sizeof bad_init, cudaMemcpyHostToDevice));
    if (relaxed)
        launch(twin_cluster_barrier_check<true>, s, rounds, tickets, bad);
    else
        launch(twin_cluster_barrier_check<false>, s, rounds, tickets, bad);
    TWIN_CHECK(cudaGetLastError());
    TWIN_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> got(words);
    unsigned bad_host[2] = {0, 0};
    TWIN_CHECK(cudaMemcpy(got.data(), tickets, words * sizeof(unsigned), cudaMemcpyDeviceToHost));
    TWIN_CHECK(cudaMemcpy(bad_host, bad, sizeof bad_host, cudaMemcpyDeviceToHost));
    TWIN_CHECK(cudaFree(tickets));
    TWIN_CHECK(cudaFree(bad));
    const char* arrival = relaxed ? "relaxed" : "release";
    if (bad_host[0] != 0) {
        std::fprintf(stderr,
                     "cluster barrier (%s arrival), clusters of %u × %u threads, %u blocks: %u "
                     "tickets out of their window, the first in round %u — a warp left a round "
                     "before every warp of its cluster had arrived\n",
                     arrival, s.cluster, s.threads, s.blocks, bad_host[0], bad_host[1]);
        std::exit(1);
    }
    unsigned expect = 2 * n * rounds;
    for (unsigned c = 0; c < clusters; ++c) {
        unsigned value = got[size_t(c) * TICKET_STRIDE];
        if (value != expect) {
            std::fprintf(stderr,
                         "cluster barrier (%s arrival), clusters of %u × %u threads: cluster %u "
                         "took %u tickets, expected %u\n",
                         arrival, s.cluster, s.threads, c, value, expect);
            std::exit(1);
        }
    }
}

// One warm-up launch, then `trials` event-timed ones: µs per barrier of each.
template <class Launch>
std::vector<double> time_us(Launch launch_once, unsigned rounds, int trials) {
    for (int w = 0; w < WARMUP; ++w) {
        launch_once();
        TWIN_CHECK(cudaGetLastError());
    }
    TWIN_CHECK(cudaDeviceSynchronize());
    std::vector<double> us;
    for (int t = 0; t < trials; ++t) {
        double ms = event_ms([&] { launch_once(); });
        TWIN_CHECK(cudaGetLastError());
        us.push_back(ms * 1e3 / rounds);
    }
    TWIN_CHECK(cudaDeviceSynchronize());
    return us;
}

void print_row(const char* kernel, const char* field, const Shape& s, unsigned max_clusters,
               unsigned rounds, unsigned work, int trials, const std::vector<double>& us) {
    std::vector<double> sorted = us;
    std::sort(sorted.begin(), sorted.end());
    std::printf("{\"twin\": \"cluster\", \"device\": \"%s\", \"kernel\": \"%s\", "
                "\"field\": \"%s\", "
                "\"cluster_blocks\": %u, \"threads_per_block\": %u, \"blocks\": %u, "
                "\"max_active_clusters\": %u, \"rounds\": %u, \"work\": %u, \"trials\": %d, "
                "\"median_us\": %.4f, \"min_us\": %.4f, \"max_us\": %.4f, "
                "\"checked\": \"release and relaxed arrivals, %u rounds\"}\n",
                device_name(), kernel, field, s.cluster, s.threads, s.blocks, max_clusters, rounds,
                work, trials, median(us), sorted.front(), sorted.back(), rounds);
}

// Every kernel at one shape: the checks, then the four timings, one JSON line each.
void run_shape(Shape s, unsigned rounds, int trials) {
    unsigned max_clusters = max_active_clusters(s.cluster, s.threads);
    if (s.blocks == 0) s.blocks = max_clusters * s.cluster;
    check(s, rounds, false);
    check(s, rounds, true);

    unsigned* out = nullptr;
    TWIN_CHECK(cudaMalloc(&out, sizeof(unsigned)));
    TWIN_CHECK(cudaMemset(out, 0, sizeof(unsigned)));
    auto sync_us = time_us([&] { launch(cluster_sync_bare, s, rounds); }, rounds, trials);
    auto relaxed_us = time_us([&] { launch(cluster_sync_relaxed, s, rounds); }, rounds, trials);
    auto split_us =
        time_us([&] { launch(cluster_split, s, rounds, SPLIT_WORK, out); }, rounds, trials);
    auto unsplit_us =
        time_us([&] { launch(cluster_unsplit, s, rounds, SPLIT_WORK, out); }, rounds, trials);
    TWIN_CHECK(cudaFree(out));

    print_row("cluster_sync_bare", "sync_us", s, max_clusters, rounds, 0, trials, sync_us);
    print_row("cluster_sync_relaxed", "relaxed_us", s, max_clusters, rounds, 0, trials, relaxed_us);
    print_row("cluster_split", "split_us", s, max_clusters, rounds, SPLIT_WORK, trials, split_us);
    print_row("cluster_unsplit", "unsplit_us", s, max_clusters, rounds, SPLIT_WORK, trials,
              unsplit_us);
    std::fflush(stdout);
}

// argv[i] as an unsigned in [lo, hi], or `fallback` if absent; exits 2 otherwise.
unsigned arg_in(int argc, char** argv, int i, unsigned fallback, unsigned lo, unsigned hi) {
    if (argc <= i) return fallback;
    char* end = nullptr;
    unsigned long long v = std::strtoull(argv[i], &end, 10);
    if (end == argv[i] || *end != '\0' || v < lo || v > hi) {
        std::fprintf(stderr, "argument %d: `%s` is not an integer in %u..%u\n", i, argv[i], lo, hi);
        std::exit(2);
    }
    return unsigned(v);
}

int usage(const char* me) {
    std::fprintf(stderr,
                 "usage: %s [all [ROUNDS] [TRIALS]]\n"
                 "       %s shape CLUSTER THREADS [BLOCKS] [ROUNDS] [TRIALS]\n",
                 me, me);
    return 2;
}

int main(int argc, char** argv) {
    std::string mode = argc > 1 ? argv[1] : "all";
    if (mode != "all" && mode != "shape") return usage(argv[0]);

    int device = 0, major = 0;
    TWIN_CHECK(cudaGetDevice(&device));
    TWIN_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
    if (major < 9) {
        std::fprintf(stderr, "thread block clusters need compute capability 9.0; %s is %d.x\n",
                     device_name(), major);
        return 2;
    }

    if (mode == "all") {
        unsigned rounds = arg_in(argc, argv, 2, DEFAULT_ROUNDS, 1, MAX_ROUNDS);
        int trials = int(arg_in(argc, argv, 3, DEFAULT_TRIALS, 1, 100000));
        for (unsigned cluster : CLUSTER_SIZES)
            for (unsigned threads : THREADS) run_shape({cluster, threads, 0}, rounds, trials);
        return 0;
    }
    if (argc < 4) return usage(argv[0]);
    Shape s;
    s.cluster = arg_in(argc, argv, 2, 0, 1, MAX_CLUSTER_BLOCKS);
    s.threads = arg_in(argc, argv, 3, 0, WARP_SIZE, 1024);
    s.blocks = arg_in(argc, argv, 4, 0, 0, INT_MAX);
    unsigned rounds = arg_in(argc, argv, 5, DEFAULT_ROUNDS, 1, MAX_ROUNDS);
    int trials = int(arg_in(argc, argv, 6, DEFAULT_TRIALS, 1, 100000));
    // Checked before anything is allocated or launched: whole warps (the check's ticket-takers)
    // and whole clusters.
    if (s.threads % WARP_SIZE != 0 || s.blocks % s.cluster != 0) {
        std::fprintf(stderr, "THREADS must be whole warps and BLOCKS whole clusters of %u\n",
                     s.cluster);
        return 2;
    }
    run_shape(s, rounds, trials);
    return 0;
}
