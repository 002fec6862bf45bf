// The nvcc twin of `gridsync bench barrier`'s `grid_barrier_bare` (gpu/src/bench/barrier.rs):
// `rounds` bare `GridBarrier::sync`s in one plain launch (gpu/src/primitives/grid.rs), in CUDA
// C++ on `cuda::atomic_ref`.
//
// The twin, as `GridBarrier`: the state's layout (the arrival word with the settings on one
// 128-byte line, the error word on the next, 256 group words a line each); per barrier the block
// meets (`__syncthreads`), thread 0 arrives and waits, and the block meets again learning
// whether it failed (`__syncthreads_or`). Arrival: one level below 768 blocks — a release add
// to the grid word of 1, or 2³¹ − (blocks − 1) from block 0, so that the adds flip bit 31 once —
// and from 768 blocks in groups of 64 — an acq_rel add to the group's word, and the group's
// last block a release add to the grid word. Wait: acquire loads of the grid word until bit 31
// reads this barrier's generation, sleeping 100 ns between polls from 1024 blocks, the error
// word and the clock every 32 polls, a 1 s bound.
//
// Shapes and timing as `gridsync bench barrier`: 128-thread blocks, one block per SM and the
// largest grid the device holds at once (the occupancy calculator's blocks per SM × SMs);
// 1000 barriers per launch, 10 timed launches after one warm-up, the median, microseconds per
// barrier. Each launch is checked: no block gave up, and the grid word flipped once per
// barrier with no arrival left over.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o barrier barrier.cu
//   ./barrier [ROUNDS]
#include <cuda/atomic>

#include <cstring>

#include "device.cuh"
#include "twin.cuh"

using namespace twin;

constexpr unsigned THREADS = 128;
constexpr unsigned GENERATION_BIT = 0x80000000u;
constexpr unsigned MAX_GROUPS = 256;
constexpr unsigned TWO_LEVEL_FROM_BLOCKS = 768, DEFAULT_GROUP_BLOCKS = 64;
constexpr unsigned POLL_SLEEP_FROM_BLOCKS = 1024, DEFAULT_POLL_SLEEP_NS = 100;
constexpr unsigned POLLS_PER_CHECK = 32;
constexpr unsigned ARRIVAL_AUTO = 0, POLL_SLEEP_AUTO = 0xffffffffu;
constexpr unsigned long long TIMEOUT_NS = 1000000000ull;

struct alignas(128) GroupWord {
    unsigned word;
    unsigned pad[31];
};

// GridBarrierState, field for field.
struct alignas(128) State {
    unsigned arrived;
    unsigned group_blocks;
    unsigned long long timeout_ns;
    unsigned poll_sleep_ns;
    unsigned pad[27];
    unsigned timeouts;
    unsigned pad2[31];
    GroupWord groups[MAX_GROUPS];
};
static_assert(sizeof(State) == 256 + 128 * MAX_GROUPS, "GridBarrierState's layout");

using Ref = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

// `group_size_of`: 0 for one level.
__device__ __forceinline__ unsigned group_size_of(unsigned word, unsigned blocks) {
    unsigned g = word;
    if (word == ARRIVAL_AUTO) {
        if (blocks < TWO_LEVEL_FROM_BLOCKS) return 0;
        g = DEFAULT_GROUP_BLOCKS;
    }
    if (g <= 1 || g >= blocks || (blocks + g - 1) / g > MAX_GROUPS) return 0;
    return g;
}

__device__ __forceinline__ unsigned poll_sleep_of(unsigned word, unsigned blocks) {
    if (word == POLL_SLEEP_AUTO) return blocks >= POLL_SLEEP_FROM_BLOCKS ? DEFAULT_POLL_SLEEP_NS : 0;
    return word;
}

__device__ __forceinline__ unsigned arrival(bool leads, unsigned count) {
    return leads ? GENERATION_BIT - (count - 1) : 1;
}

// Thread 0's arrival and wait; false if it gave up.
__device__ __forceinline__ bool arrive_and_wait(State* s, unsigned group, unsigned sleep_ns,
                                                unsigned target) {
    Ref arrived(s->arrived), timeouts(s->timeouts);
    unsigned blocks = gridDim.x, me = blockIdx.x;
    if (group == 0) {
        arrived.fetch_add(arrival(me == 0, blocks), cuda::memory_order_release);
    } else {
        unsigned g = me / group, first = g * group;
        unsigned size = blocks - first < group ? blocks - first : group;
        unsigned add = arrival(me == first, size);
        unsigned old = Ref(s->groups[g].word).fetch_add(add, cuda::memory_order_acq_rel);
        if (((old + add) ^ old) & GENERATION_BIT) {
            unsigned groups = (blocks + group - 1) / group;
            arrived.fetch_add(arrival(g == 0, groups), cuda::memory_order_release);
        }
    }
    unsigned polls = 0;
    uint64_t start = 0;
    for (;;) {
        if ((arrived.load(cuda::memory_order_acquire) & GENERATION_BIT) == target) return true;
        if (sleep_ns > 0) __nanosleep(sleep_ns);
        if (++polls % POLLS_PER_CHECK == 0) {
            uint64_t now = globaltimer_ns();
            if (start == 0) start = now;
            if (timeouts.load(cuda::memory_order_relaxed) != 0) return false;
            if (now - start > TIMEOUT_NS) {
                timeouts.fetch_add(1, cuda::memory_order_relaxed);
                return false;
            }
        }
    }
}

__global__ void twin_grid_barrier(State* s, unsigned rounds) {
    unsigned blocks = gridDim.x;
    unsigned group = group_size_of(s->group_blocks, blocks);
    unsigned sleep_ns = poll_sleep_of(s->poll_sleep_ns, blocks);
    unsigned start = Ref(s->arrived).load(cuda::memory_order_relaxed) & GENERATION_BIT;
    for (unsigned passed = 1; passed <= rounds; ++passed) {
        unsigned target = passed % 2 ? start ^ GENERATION_BIT : start;
        __syncthreads();
        int failed = 0;
        if (threadIdx.x == 0) failed = !arrive_and_wait(s, group, sleep_ns, target);
        if (__syncthreads_or(failed)) return;
    }
}

int main(int argc, char** argv) {
    unsigned rounds = argc > 1 ? unsigned(std::atoi(argv[1])) : 1000;
    if (rounds < 1 || rounds > 100000) {
        std::fprintf(stderr, "usage: %s [ROUNDS 1..100000]\n", argv[0]);
        return 2;
    }
    int dev = 0, sms = 0, per_sm = 0;
    TWIN_CHECK(cudaGetDevice(&dev));
    TWIN_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    TWIN_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, twin_grid_barrier, THREADS, 0));
    State* state;
    TWIN_CHECK(cudaMalloc(&state, sizeof(State)));
    State host;
    std::memset(&host, 0, sizeof host);
    host.group_blocks = ARRIVAL_AUTO;
    host.poll_sleep_ns = POLL_SLEEP_AUTO;
    host.timeout_ns = TIMEOUT_NS;
    struct Grid {
        unsigned blocks;
        const char* what;
    };
    Grid grids[] = {{unsigned(sms), "1 block per SM"}, {unsigned(sms * per_sm), "largest co-resident"}};
    for (const Grid& g : grids) {
        TWIN_CHECK(cudaMemcpy(state, &host, sizeof host, cudaMemcpyHostToDevice));
        std::vector<double> us;
        for (int trial = 0; trial < 11; ++trial) {
            unsigned before = 0;
            TWIN_CHECK(cudaMemcpy(&before, &state->arrived, 4, cudaMemcpyDeviceToHost));
            double ms = event_ms([&] { twin_grid_barrier<<<g.blocks, THREADS>>>(state, rounds); });
            TWIN_CHECK(cudaGetLastError());
            unsigned after = 0, errors = 0;
            TWIN_CHECK(cudaMemcpy(&after, &state->arrived, 4, cudaMemcpyDeviceToHost));
            TWIN_CHECK(cudaMemcpy(&errors, &state->timeouts, 4, cudaMemcpyDeviceToHost));
            unsigned expect = rounds % 2 ? before ^ GENERATION_BIT : before;
            if (errors != 0 || after != expect) {
                std::fprintf(stderr, "%u blocks: %u gave up; arrival word %08x, expected %08x\n",
                             g.blocks, errors, after, expect);
                return 1;
            }
            if (trial > 0) us.push_back(ms * 1e3 / rounds);
        }
        std::printf("{\"twin\":\"grid_barrier_bare\",\"device\":\"%s\",\"blocks\":%u,\"what\":\"%s\","
                    "\"threads\":%u,\"rounds\":%u,\"us_per_barrier\":%.4f}\n",
                    device_name(), g.blocks, g.what, THREADS, rounds, median(us));
    }
    return 0;
}
