// The nvcc twins of `gridsync bench locks`'s locks (gpu/src/lessons/locks.rs,
// gpu/src/primitives/lock/): `lock_mutex` (`Mutex::lock` and its guard), `lock_mutex_with`
// (`Mutex::with`), `lock_warp_leader` and `lock_ticket`, at any shape, beside libcu++'s
// `binary_semaphore<thread_scope_device>` doing the same work.
//
// The twin, as `Mutex`: a lock word, apart from an error word (128-byte lines); take =
// compare-and-swap 0 → 1 with acquire at device scope; if that fails, wait: sleep (`__nanosleep`,
// 8 ns doubling to 128 ns), read the word (relaxed), and swap again only if it looks free; every
// eighth poll read the error word and the clock (`%globaltimer`), give up past the bound; give
// back = store 0 with release at device scope. The critical section is `*counter += 1`, a plain
// load and store, as gridsync's. `mutex`, as `Mutex::lock`: the lanes that call it together are
// a cohort; the lowest takes the word for all (the others learn the verdict by a shuffle); the
// others wait for their turn in the hand-off word (block-scope acquire polls, 8 ns apart); the
// guard's drop stores the next lane's number (block-scope release), or, in the last lane,
// clears the word and gives the lock back; the cohort then leaves together. A lane alone takes
// and gives back the word (`lock_thread`'s path, the 128×1 shape).
//
// `ticket`, as `TicketLock` (`lock_ticket`): take a ticket with a relaxed fetch-add of `next`;
// wait until `serving` (acquire) reaches it, sleeping 64 ns per ticket ahead (at most 50 µs),
// reading the error word and the clock on every poll; give back = store ticket + 1 to
// `serving` with release. `leader`, as `lock_warp_leader`: the lowest active lane takes the
// mutex alone (`lock_thread`), shuffles the verdict, the lanes run their sections in lane
// order with a `__syncwarp(mask)` after each turn, and the leader gives the word back.
//
// `with`, as `Mutex::with`: the lanes that call it together (`__activemask`) are a cohort; the
// lowest takes the word for all of them and shuffles the verdict; each lane after the first
// waits at a `__syncwarp` of two lanes — itself and the lane before — which that lane calls
// after its critical section; the last lane gives the word back; the cohort leaves together
// (`__syncwarp(cohort)`). A lane alone takes and gives back the word as `mutex` does.
//
// Work and shape as `gridsync bench locks`: BLOCKS × THREADS threads, each taking the lock
// ITERS = max(1, 32768 / threads) times in one launch; 10 timed launches after one warm-up, the
// median; the counter checked after every launch.
//
// With `retakes`, each critical section also notes which block held the lock last: the share of
// sections whose holder held it just before ("re-takes") tells how often the thread that gave
// the lock back took it again before any waiter — one trip to L2 instead of a hand-off.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o mutex mutex.cu
//   ./mutex mutex|with|leader|ticket|semaphore [BLOCKS [THREADS]] [retakes]
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
    unsigned turn;  // the guard's hand-off word: the lane whose turn it is, or NO_TURN
    unsigned pad2[31];
};

constexpr unsigned NO_TURN = 0xffffffffu;

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

// Mutex::acquire_word: false if the wait passed its bound (then `waiters` are counted as given
// up) or another thread gave up.
__device__ __forceinline__ bool lock(State* s, unsigned waiters = 1) {
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
                timeouts.fetch_add(waiters, cuda::memory_order_relaxed);
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

using BlockRef = cuda::atomic_ref<unsigned, cuda::thread_scope_block>;

// Mutex::lock with its guard: the cohort's leader takes the word, and the lanes pass the lock
// in lane order through the hand-off word (block-scope release, the next lane's acquire polls,
// 8 ns apart, the clock read at each); the last lane clears the word and gives the lock back,
// and the cohort leaves together. A lane alone takes and gives back the word. Returns the
// cohort (0 if the lock was not taken).
__device__ __forceinline__ unsigned guard_lock(State* s) {
    unsigned lane = lane_id(), cohort = __activemask();
    if (cohort == 1u << lane) return lock(s) ? cohort : 0;
    unsigned leader = __ffs(cohort) - 1;
    unsigned lost = 0;
    if (lane == leader) lost = lock(s, __popc(cohort)) ? 0 : 1;
    lost = __shfl_sync(cohort, lost, leader);
    __syncwarp(cohort);
    if (lost != 0) return 0;
    if (lane != leader) {
        BlockRef turn(s->turn);
        uint64_t start = globaltimer_ns();
        while (turn.load(cuda::memory_order_acquire) != lane) {
            if (globaltimer_ns() - start > TIMEOUT_NS) {
                Ref(s->timeouts).fetch_add(1, cuda::memory_order_relaxed);
                return 0;
            }
            __nanosleep(BACKOFF_MIN_NS);
        }
    }
    return cohort;
}

// The guard's drop: three branches, then the cohort leaves together.
__device__ __forceinline__ void guard_unlock(State* s, unsigned cohort) {
    unsigned lane = lane_id();
    unsigned later = cohort & ~(0xffffffffu >> (31 - lane));
    BlockRef turn(s->turn);
    if (later != 0) {
        turn.store(__ffs(later) - 1, cuda::memory_order_release);
    } else if (cohort != 1u << lane) {
        turn.store(NO_TURN, cuda::memory_order_relaxed);
        unlock(s);
    } else {
        unlock(s);
        return;
    }
    __syncwarp(cohort);
}

__global__ void twin_mutex(unsigned* counter, State* s, unsigned iters, Retakes* r) {
    for (unsigned i = 0; i < iters; ++i) {
        unsigned cohort = guard_lock(s);
        if (cohort == 0) return;
        section(counter, r);
        guard_unlock(s, cohort);
    }
}

// Mutex::with: `f` runs holding the lock, the cohort's lanes one after another.
template <class F>
__device__ __forceinline__ bool with_lock(State* s, F f) {
    unsigned lane = lane_id();
    unsigned cohort = __activemask();
    if (cohort == 1u << lane) {
        if (!lock(s)) return false;
        f();
        unlock(s);
        return true;
    }
    unsigned leader = __ffs(cohort) - 1;
    unsigned lost = 0;
    if (lane == leader) lost = lock(s, __popc(cohort)) ? 0 : 1;
    if (__shfl_sync(cohort, lost, leader) != 0) return false;
    unsigned before = cohort & ((1u << lane) - 1);
    if (before != 0) __syncwarp(1u << (31 - __clz(before)) | 1u << lane);
    f();
    unsigned later = cohort & ~(0xffffffffu >> (31 - lane));
    if (later != 0) {
        __syncwarp(1u << lane | 1u << (__ffs(later) - 1));
    } else {
        unlock(s);
    }
    __syncwarp(cohort);
    return true;
}

__global__ void twin_with(unsigned* counter, State* s, unsigned iters, Retakes* r) {
    for (unsigned i = 0; i < iters; ++i) {
        if (!with_lock(s, [&] { section(counter, r); })) return;
    }
}

__global__ void twin_leader(unsigned* counter, State* s, unsigned iters, Retakes* r) {
    for (unsigned i = 0; i < iters; ++i) {
        unsigned mask = __activemask();
        unsigned leader = __ffs(mask) - 1, lane = lane_id();
        bool held = lane == leader && lock(s);
        if (__shfl_sync(mask, unsigned(held), leader) == 0) return;
        for (unsigned turn = 0; turn < 32; ++turn) {
            if (mask & (1u << turn)) {
                if (lane == turn) section(counter, r);
                __syncwarp(mask);
            }
        }
        if (held) unlock(s);
    }
}

constexpr unsigned TICKET_NS = 64, MAX_TICKET_SLEEP_NS = 50000;

// TicketState: the two counters on one line, the error word on another.
struct alignas(128) TicketState {
    unsigned next;
    unsigned serving;
    unsigned pad0[30];
    unsigned timeouts;
    unsigned pad1[31];
};

__global__ void twin_ticket(unsigned* counter, TicketState* t, unsigned iters, Retakes* r) {
    Ref next(t->next), serving(t->serving), timeouts(t->timeouts);
    for (unsigned i = 0; i < iters; ++i) {
        unsigned ticket = next.fetch_add(1, cuda::memory_order_relaxed);
        uint64_t start = globaltimer_ns();
        for (;;) {
            unsigned now = serving.load(cuda::memory_order_acquire);
            if (now == ticket) break;
            if (timeouts.load(cuda::memory_order_relaxed) != 0 ||
                globaltimer_ns() - start > TIMEOUT_NS) {
                timeouts.fetch_add(1, cuda::memory_order_relaxed);
                return;
            }
            __nanosleep(min((ticket - now) * TICKET_NS, MAX_TICKET_SLEEP_NS));
        }
        section(counter, r);
        serving.store(ticket + 1, cuda::memory_order_release);
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
    const char* mode = argc > 1 ? argv[1] : "";
    bool is_mutex = std::strcmp(mode, "mutex") == 0, is_with = std::strcmp(mode, "with") == 0;
    bool is_leader = std::strcmp(mode, "leader") == 0, is_ticket = std::strcmp(mode, "ticket") == 0;
    if (!is_mutex && !is_with && !is_leader && !is_ticket && std::strcmp(mode, "semaphore") != 0) {
        std::fprintf(stderr,
                     "usage: %s mutex|with|leader|ticket|semaphore [BLOCKS [THREADS]] [retakes]\n",
                     argv[0]);
        return 2;
    }
    int blocks = 128, threads = 1, numbers = 0;
    bool count_retakes = false;
    for (int a = 2; a < argc; ++a) {
        if (std::strcmp(argv[a], "retakes") == 0) {
            count_retakes = true;
        } else if (numbers++ == 0) {
            blocks = std::atoi(argv[a]);
        } else {
            threads = std::atoi(argv[a]);
        }
    }
    if (blocks < 1 || blocks > 65535 || threads < 1 || threads > 1024) {
        std::fprintf(stderr, "BLOCKS must be 1..65535 and THREADS 1..1024\n");
        return 2;
    }
    unsigned long long all = (unsigned long long)blocks * threads;
    unsigned iters = unsigned(std::max(1ull, 32768ull / all));
    unsigned* counter;
    State* state;
    Sem* sem;
    TicketState* ticket;
    Retakes* retakes = nullptr;
    TWIN_CHECK(cudaMalloc(&counter, 4));
    TWIN_CHECK(cudaMalloc(&state, sizeof(State)));
    TWIN_CHECK(cudaMalloc(&sem, sizeof(Sem)));
    TWIN_CHECK(cudaMemset(state, 0, sizeof(State)));
    TWIN_CHECK(cudaMemset(&state->turn, 0xff, 4));
    TWIN_CHECK(cudaMalloc(&ticket, sizeof(TicketState)));
    TWIN_CHECK(cudaMemset(ticket, 0, sizeof(TicketState)));
    Sem host_sem(1);
    TWIN_CHECK(cudaMemcpy(sem, &host_sem, sizeof(Sem), cudaMemcpyHostToDevice));
    if (count_retakes) TWIN_CHECK(cudaMalloc(&retakes, sizeof(Retakes)));
    auto launch = [&] {
        if (is_mutex) {
            twin_mutex<<<blocks, threads>>>(counter, state, iters, retakes);
        } else if (is_with) {
            twin_with<<<blocks, threads>>>(counter, state, iters, retakes);
        } else if (is_leader) {
            twin_leader<<<blocks, threads>>>(counter, state, iters, retakes);
        } else if (is_ticket) {
            twin_ticket<<<blocks, threads>>>(counter, ticket, iters, retakes);
        } else {
            twin_semaphore<<<blocks, threads>>>(counter, sem, iters, retakes);
        }
    };
    std::vector<double> ms;
    double share = 0;
    unsigned long long sections = all * iters;
    for (int trial = 0; trial < 11; ++trial) {
        TWIN_CHECK(cudaMemset(counter, 0, 4));
        if (retakes) TWIN_CHECK(cudaMemset(retakes, 0xff, 4));
        if (retakes) TWIN_CHECK(cudaMemset(&retakes->count, 0, 4));
        double t = event_ms(launch);
        TWIN_CHECK(cudaGetLastError());
        unsigned got = 0, errors = 0;
        TWIN_CHECK(cudaMemcpy(&got, counter, 4, cudaMemcpyDeviceToHost));
        TWIN_CHECK(cudaMemcpy(&errors, is_ticket ? &ticket->timeouts : &state->timeouts, 4,
                              cudaMemcpyDeviceToHost));
        if (got != sections || errors != 0) {
            std::fprintf(stderr, "%s: counter %u of %llu, %u timed out\n", mode, got, sections,
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
    std::printf("{\"twin\":\"%s\",\"device\":\"%s\",\"shape\":\"%dx%d\",\"iters\":%u,"
                "\"median_ms\":%.4f,\"mega_per_s\":%.4f",
                is_mutex  ? "lock_mutex (Mutex::lock and its guard)"
                : is_with   ? "lock_mutex_with (Mutex::with)"
                : is_leader ? "lock_warp_leader"
                : is_ticket ? "lock_ticket (TicketLock)"
                            : "libcu++ binary_semaphore<device>",
                device_name(), blocks, threads, iters, med, double(sections) / (med * 1e-3) / 1e6);
    if (count_retakes) std::printf(",\"retakes\":%.4f", share);
    std::printf("}\n");
    return 0;
}
