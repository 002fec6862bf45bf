// The nvcc twin of `gridsync bench locks`'s `lock_mutex` (gpu/src/lessons/locks.rs) where every
// warp has one thread — the 128×1 shape, where `Mutex::lock` takes the word for the calling
// thread alone (`lock_thread`, gpu/src/primitives/lock/mutex.rs) — beside libcu++'s
// `binary_semaphore<thread_scope_device>` doing the same work.
//
// The twin, as `Mutex`: a lock word, apart from an error word (128-byte lines); take =
// compare-and-swap 0 → 1 with acquire at device scope; if that fails, wait: sleep (`__nanosleep`,
// 8 ns doubling to 128 ns), read the word (relaxed), and swap again only if it looks free; every
// eighth poll read the error word and the clock (`%globaltimer`), give up past the bound; give
// back = store 0 with release at device scope. The critical section is `*counter += 1`, a plain
// load and store, as gridsync's.
//
// Work and shape as `gridsync bench locks`: BLOCKS blocks of one thread, each taking the lock
// ITERS = 32768 / BLOCKS times in one launch; 10 timed launches after one warm-up, the median;
// the counter checked after every launch.
//
// With `retakes`, each critical section also notes which block held the lock last: the share of
// sections whose holder held it just before ("re-takes") tells how often the thread that gave
// the lock back took it again before any waiter — one trip to L2 instead of a hand-off.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o mutex mutex.cu
//   ./mutex mutex|semaphore [BLOCKS] [retakes]
#include <cuda/atomic>
#include <cuda/semaphore>

#include <cstring>

#include "device.cuh"
#include "twin.cuh"

using namespace twin;

constexpr unsigned UNLOCKED = 0, LOCKED = 1;
constexpr unsigned BACKOFF_MIN_NS = 8, BACKOFF_MAX_NS = 128;
constexpr unsigned long long TIMEOUT_NS = 2000000000ull;

// The lock word and the error word on lines of their own, as gridsync's MutexState.
struct alignas(128) State {
    unsigned word;
    unsigned pad0[31];
    unsigned timeouts;
    unsigned pad1[31];
};

// Which block held the lock last, and how many sections found themselves there: plain words,
// touched only inside the critical section.
struct Retakes {
    unsigned last;
    unsigned count;
};

using Ref = cuda::atomic_ref<unsigned, cuda::thread_scope_device>;

__device__ __forceinline__ bool try_word(Ref word) {
    unsigned expected = UNLOCKED;
    return word.compare_exchange_strong(expected, LOCKED, cuda::memory_order_acquire,
                                        cuda::memory_order_relaxed);
}

// Mutex::lock_thread: false if the wait passed its bound or another thread gave up.
__device__ __forceinline__ bool lock(State* s) {
    Ref word(s->word), timeouts(s->timeouts);
    if (try_word(word)) return true;
    uint64_t start = globaltimer_ns();
    unsigned backoff = BACKOFF_MIN_NS;
    unsigned polls = 0;
    for (;;) {
        __nanosleep(backoff);
        backoff = min(backoff * 2, BACKOFF_MAX_NS);
        if (word.load(cuda::memory_order_relaxed) == UNLOCKED && try_word(word)) return true;
        if (++polls % 8 == 0) {
            if (timeouts.load(cuda::memory_order_relaxed) != 0) return false;
            if (globaltimer_ns() - start > TIMEOUT_NS) {
                timeouts.fetch_add(1, cuda::memory_order_relaxed);
                return false;
            }
        }
    }
}

__device__ __forceinline__ void unlock(State* s) {
    Ref(s->word).store(UNLOCKED, cuda::memory_order_release);
}

__device__ __forceinline__ void section(unsigned* counter, Retakes* r) {
    *counter += 1;
    if (r) {
        r->count += r->last == blockIdx.x;
        r->last = blockIdx.x;
    }
}

__global__ void twin_mutex(unsigned* counter, State* s, unsigned iters, Retakes* r) {
    for (unsigned i = 0; i < iters; ++i) {
        if (!lock(s)) return;
        section(counter, r);
        unlock(s);
    }
}

using Sem = cuda::binary_semaphore<cuda::thread_scope_device>;

__global__ void twin_semaphore(unsigned* counter, Sem* sem, unsigned iters, Retakes* r) {
    for (unsigned i = 0; i < iters; ++i) {
        sem->acquire();
        section(counter, r);
        sem->release();
    }
}

int main(int argc, char** argv) {
    if (argc < 2 || (std::strcmp(argv[1], "mutex") != 0 && std::strcmp(argv[1], "semaphore") != 0)) {
        std::fprintf(stderr, "usage: %s mutex|semaphore [BLOCKS] [retakes]\n", argv[0]);
        return 2;
    }
    bool is_mutex = std::strcmp(argv[1], "mutex") == 0;
    int blocks = argc > 2 ? std::atoi(argv[2]) : 128;
    bool count_retakes = argc > 3 && std::strcmp(argv[3], "retakes") == 0;
    if (blocks < 1 || blocks > 65535) {
        std::fprintf(stderr, "BLOCKS must be 1..65535, not %d\n", blocks);
        return 2;
    }
    unsigned iters = std::max(1u, 32768u / unsigned(blocks));
    unsigned* counter;
    State* state;
    Sem* sem;
    Retakes* retakes = nullptr;
    TWIN_CHECK(cudaMalloc(&counter, 4));
    TWIN_CHECK(cudaMalloc(&state, sizeof(State)));
    TWIN_CHECK(cudaMalloc(&sem, sizeof(Sem)));
    TWIN_CHECK(cudaMemset(state, 0, sizeof(State)));
    Sem host_sem(1);
    TWIN_CHECK(cudaMemcpy(sem, &host_sem, sizeof(Sem), cudaMemcpyHostToDevice));
    if (count_retakes) TWIN_CHECK(cudaMalloc(&retakes, sizeof(Retakes)));
    auto launch = [&] {
        if (is_mutex) {
            twin_mutex<<<blocks, 1>>>(counter, state, iters, retakes);
        } else {
            twin_semaphore<<<blocks, 1>>>(counter, sem, iters, retakes);
        }
    };
    std::vector<double> ms;
    double share = 0;
    unsigned long long sections = (unsigned long long)blocks * iters;
    for (int trial = 0; trial < 11; ++trial) {
        TWIN_CHECK(cudaMemset(counter, 0, 4));
        if (retakes) TWIN_CHECK(cudaMemset(retakes, 0xff, 4));
        if (retakes) TWIN_CHECK(cudaMemset(&retakes->count, 0, 4));
        double t = event_ms(launch);
        TWIN_CHECK(cudaGetLastError());
        unsigned got = 0, errors = 0;
        TWIN_CHECK(cudaMemcpy(&got, counter, 4, cudaMemcpyDeviceToHost));
        TWIN_CHECK(cudaMemcpy(&errors, &state->timeouts, 4, cudaMemcpyDeviceToHost));
        if (got != sections || errors != 0) {
            std::fprintf(stderr, "%s: counter %u of %llu, %u timed out\n", argv[1], got, sections,
                         errors);
            return 1;
        }
        if (retakes) {
            Retakes r;
            TWIN_CHECK(cudaMemcpy(&r, retakes, sizeof r, cudaMemcpyDeviceToHost));
            share = double(r.count) / double(sections);
        }
        if (trial > 0) ms.push_back(t);
    }
    double med = median(ms);
    std::printf("{\"twin\":\"%s\",\"device\":\"%s\",\"shape\":\"%dx1\",\"iters\":%u,"
                "\"median_ms\":%.4f,\"mega_per_s\":%.4f",
                is_mutex ? "lock_mutex (lock_thread)" : "libcu++ binary_semaphore<device>",
                device_name(), blocks, iters, med, double(sections) / (med * 1e-3) / 1e6);
    if (count_retakes) std::printf(",\"retakes\":%.4f", share);
    std::printf("}\n");
    return 0;
}
