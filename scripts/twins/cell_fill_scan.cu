// The nvcc twins of the cell list's last phases for a 2-D sheet in an open box — what `gridsync
// neighbor` builds on graphene. The build's order (host/neighbor/launch/cells.rs): bin → scan of
// the cells' counts → scatter → count → scan of the neighbor counts → fill. Twinned here:
//
// - `scan_lookback` (gpu/src/lessons/neighbor/scan.rs), both scans: the exclusive sum of `len`
//   u32 counts in one launch, with decoupled look-back. Each block takes a tile of 2048 counts by
//   a ticket (relaxed device-scope fetch-add, not blockIdx), reads its eight counts per thread
//   into registers (two 16-byte loads where counts and out are 16-byte aligned), scans the block
//   (warp shuffles, one u64 per warp in shared memory, one barrier), and its first warp
//   publishes the tile's aggregate at once in the tile's 64-bit word (flag in the top two bits,
//   sum below, one relaxed device-scope store: flag and sum cannot be seen apart), then reads
//   the words of the 128 tiles before it, four per lane, nearest first, adding aggregates back
//   to the nearest inclusive prefix (the sums saturate at 2⁶² − 1), and publishes its own
//   prefix. A wait is bounded: every 64 polls the warp reads %globaltimer, and past 1 s (or once
//   another block gave up) it counts a timeout and goes on. Each scan clears the other of two
//   alternating sets of words and tickets for the next one. The total (u64) goes to status[0],
//   the timeouts to the low half of status[1], and out[len] = the total truncated to u32.
// - `cell_fill_atoms_f32` (cells.rs), the fill in the input's atom order, and `cell_fill_f32`,
//   its sibling by sorted position: nothing written unless the scan's exact total fits the
//   buffer (`Rows::fit`, once per launch); one thread per atom i (its sorted position
//   start[cell[i]] + rank[i], by `__ldg`) or per sorted position p (i = index[p], a plain
//   load); the row offsets[i]..offsets[i + 1] (plain loads);
//   a row of at most KEEP = 8 is copied from what the count kept (kept[k * n + p], plain loads),
//   sorted in registers by 19 compare-exchanges and written; a longer row is searched again (the
//   count's 2-D open search: three row ranges of sorted positions, `__ldg` loads, no fused
//   multiply-add) and sorted in place (insertion sort up to 32, heapsort beyond).
//
// Launch shapes, as host/neighbor/launch/: the scan ⌈len / 2048⌉ blocks (one at len 0) of 256
// threads with 80 bytes of dynamic shared memory, its scratch sized for max(cells, atoms) counts
// as `CellList`'s (so each scan clears as many words of the other set); the fills ⌈n / 256⌉
// blocks of 256.
//
// The harness lays out on the host what the phases before the fill leave (as cell_count.cu
// bins): the cells of gridsync's `CellPlan` (sheet.cuh), a stable counting sort by cell (so
// rank = the atom's place among its cell's atoms in input order, one of the orders the bin's
// atomics may give), the sorted coordinates and indices, and a search of the 3×3 cells around
// each atom in the same f32 operations, giving each atom's count, its first eight neighbors in
// the count's order (kept[k * n + p]) and the expected CSR list (each row sorted). On the GPU:
// the scan of the cells' counts (checked against the host's starts), whose output is the fill's
// `start`; the scan of the neighbor counts (checked), whose offsets and total the fill reads;
// a fill into a buffer one entry short (nothing may be written); then both fills, each list
// checked entry by entry. Again on dense random points (about 20 neighbors per atom and a
// cluster of several hundred), for the rows the sheet never has: searched again and sorted by
// insertion sort or heapsort. Then the scan alone on random counts at 0, 1, 2047, 2049,
// 1 000 003 and 10⁷ counts, on totals past 2³², and on arrays off the 16-byte boundary. Exits 1
// on any difference or timeout. Timed alone, each kernel and size: 3 warm-ups, then TRIALS
// event-timed launches, the median; one JSON line each.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o cell_fill_scan cell_fill_scan.cu
//   gridsync neighbor --len 1000000 --write-xy sheet.txt --all-pairs-max-atoms 0
//   ./cell_fill_scan sheet.txt [TRIALS]
//
// Beside it, the Rust kernels' times alone, the same way on both sides (ncu flushes the caches
// before each kernel): `ncu --metrics gpu__time_duration.sum -k regex:"scan_lookback|cell_fill_"
// gridsync neighbor --input sheet.txt --all-pairs-max-atoms 0`, and the twin under the same
// `ncu -k regex:twin`. The run's scans of the cells and of the neighbor counts are told apart by
// their grids (⌈cells / 2048⌉ and ⌈atoms / 2048⌉ blocks, the twin's "blocks"). The SASS:
// ptxas -arch=sm_90 on gridsync's gpu_sm_90.ptx, entries scan_lookback, cell_fill_atoms_f32,
// cell_fill_f32.
#include <cstdint>

#include "device.cuh"
#include "sheet.cuh"
#include "twin.cuh"

using namespace twin;

constexpr unsigned THREADS_PER_BLOCK = 256;

// ---- The scan (scan.rs) --------------------------------------------------------------------

constexpr unsigned SCAN_ITEMS = 8;
constexpr unsigned SCAN_TILE = THREADS_PER_BLOCK * SCAN_ITEMS;
constexpr uint64_t SCAN_AGGREGATE = 1ull << 62;
constexpr uint64_t SCAN_PREFIX = 2ull << 62;
constexpr uint64_t SCAN_SUM_MAX = (1ull << 62) - 1;
constexpr unsigned POLLS_PER_CHECK = 64;
constexpr unsigned WINDOW_ROUNDS = 4;
// host/neighbor/launch/scan.rs: a tile's bound on its wait, "never in practice".
constexpr uint64_t LOOK_BACK_TIMEOUT_NS = 1000000000ull;
// The kernel takes the length as u32, and out holds one value more.
constexpr size_t MAX_SCAN_LEN = 0xfffffffeu;

// gridsync's `LookBack`, field for field (64 bytes).
struct LookBack {
    uint64_t* words;
    unsigned* ticket;
    uint64_t* next_words;
    unsigned next_len;
    unsigned* next_ticket;
    uint64_t* total;
    unsigned* timeouts;
    uint64_t timeout_ns;
};

__host__ __device__ constexpr size_t div_ceil(size_t a, size_t b) { return a / b + (a % b != 0); }

__host__ __device__ constexpr unsigned block_scan_shared_bytes(unsigned threads) {
    return (threads + WARP_SIZE - 1) / WARP_SIZE * unsigned(sizeof(uint64_t));
}

// The block scan's scratch, then the tile's exclusive prefix and its ticket.
__host__ __device__ constexpr unsigned scan_shared_bytes(unsigned threads) {
    return block_scan_shared_bytes(threads) + 2 * unsigned(sizeof(uint64_t));
}

template <class T>
__device__ __forceinline__ T load_relaxed_device(T* p) {
    return cuda::atomic_ref<T, cuda::thread_scope_device>(*p).load(cuda::memory_order_relaxed);
}

template <class T>
__device__ __forceinline__ void store_relaxed_device(T* p, T v) {
    cuda::atomic_ref<T, cuda::thread_scope_device>(*p).store(v, cuda::memory_order_relaxed);
}

template <class T>
__device__ __forceinline__ T fetch_add_relaxed_device(T* p, T v) {
    return cuda::atomic_ref<T, cuda::thread_scope_device>(*p).fetch_add(
        v, cuda::memory_order_relaxed);
}

// CUB's WarpScan::InclusiveScan: five shuffles up (two shfl.sync.up.b32 each for a u64), each
// lane joining what it holds with what the lane `delta` below holds, by `op`.
template <class Op>
__device__ __forceinline__ uint64_t warp_inclusive_scan(uint64_t v, Op op) {
    unsigned mask = warp_mask(), lane = lane_id();
    uint64_t acc = v;
#pragma unroll
    for (unsigned delta = 1; delta < WARP_SIZE; delta *= 2) {
        uint64_t below = __shfl_up_sync(mask, acc, delta);
        if (lane >= delta) acc = op(acc, below);
    }
    return acc;
}

// CUB's WarpScan::InclusiveSum.
__device__ __forceinline__ uint64_t warp_inclusive_sum(uint64_t v) {
    return warp_inclusive_scan(v, Add{});
}

// gridsync's block_exclusive_sum (CUB's BLOCK_SCAN_WARP_SCANS): `before` = the sum of the
// threads below, `total` = the block's, in every thread. Every thread calls it (one barrier).
__device__ __forceinline__ void block_exclusive_sum(uint64_t v, uint64_t& before,
                                                    uint64_t& total) {
    uint64_t* scratch = dynamic_shared<uint64_t>();
    unsigned lane = lane_id();
    unsigned warp = thread_rank_in_block() / WARP_SIZE;
    unsigned warps = (threads_per_block() + WARP_SIZE - 1) / WARP_SIZE;

    // PHASE 1: each warp scans its lanes; its last existing lane publishes the warp's total.
    uint64_t inclusive = warp_inclusive_sum(v);
    uint64_t below = __shfl_up_sync(warp_mask(), inclusive, 1);
    uint64_t exclusive = lane == 0 ? 0 : below;
    if (lane == warp_lanes() - 1) scratch[warp] = inclusive;
    __syncthreads();

    // PHASE 2: the totals of the warps below this one, and of all of them.
    uint64_t b = 0, t = 0;
    for (unsigned w = 0; w < warps; ++w) {
        uint64_t s = scratch[w];
        if (w < warp) b += s;
        t += s;
    }
    before = b + exclusive;
    total = t;
}

__device__ __forceinline__ uint64_t saturating(uint64_t a, uint64_t b) {
    uint64_t s = a + b;
    return s < SCAN_SUM_MAX ? s : SCAN_SUM_MAX;
}

// The saturating sum of `v` over the warp, in every lane: an inclusive scan up, then the last
// lane's.
__device__ __forceinline__ uint64_t warp_saturating_sum(uint64_t v) {
    uint64_t acc = warp_inclusive_scan(v, saturating);
    return __shfl_sync(warp_mask(), acc, warp_lanes() - 1);
}

// The run of SCAN_ITEMS counts from `first` (zero past `end`): two 16-byte loads where aligned
// and whole, else one count at a time.
__device__ __forceinline__ void load_run(const unsigned* counts, size_t first, size_t end,
                                         bool aligned, unsigned (&mine)[SCAN_ITEMS]) {
    if (aligned && first + SCAN_ITEMS <= end) {
        const uint4* words = reinterpret_cast<const uint4*>(counts + first);
#pragma unroll
        for (unsigned w = 0; w < SCAN_ITEMS / 4; ++w) {
            uint4 four = words[w];
            mine[4 * w] = four.x, mine[4 * w + 1] = four.y;
            mine[4 * w + 2] = four.z, mine[4 * w + 3] = four.w;
        }
    } else {
#pragma unroll
        for (unsigned k = 0; k < SCAN_ITEMS; ++k)
            if (first + k < end) mine[k] = counts[first + k];
    }
}

// The exclusive sums of `mine` from `at` into out[first..] (those below `end`), as load_run.
__device__ __forceinline__ void store_run(unsigned* out, size_t first, size_t end, bool aligned,
                                          const unsigned (&mine)[SCAN_ITEMS], uint64_t at) {
    unsigned sums[SCAN_ITEMS];
#pragma unroll
    for (unsigned k = 0; k < SCAN_ITEMS; ++k) {
        sums[k] = unsigned(at);
        at += mine[k];
    }
    if (aligned && first + SCAN_ITEMS <= end) {
        uint4* words = reinterpret_cast<uint4*>(out + first);
#pragma unroll
        for (unsigned w = 0; w < SCAN_ITEMS / 4; ++w)
            words[w] = make_uint4(sums[4 * w], sums[4 * w + 1], sums[4 * w + 2], sums[4 * w + 3]);
    } else {
#pragma unroll
        for (unsigned k = 0; k < SCAN_ITEMS; ++k)
            if (first + k < end) out[first + k] = sums[k];
    }
}

// Tile t's share of clearing the next scan's words (t, t + tiles, … below next_len), and its
// ticket (tile 0). Nothing reads them during this scan.
__device__ __forceinline__ void clear_for_next(const LookBack& lb, size_t t, size_t tiles,
                                               size_t thread) {
    for (size_t k = t + tiles * thread; k < lb.next_len; k += tiles * blockDim.x)
        lb.next_words[k] = 0;
    if (t == 0 && thread == 0) *lb.next_ticket = 0;
}

// The first warp's part of tile t: publishes the aggregate, looks back for the exclusive prefix,
// publishes the inclusive prefix and returns the exclusive one to every lane.
__device__ __forceinline__ uint64_t look_back(const LookBack& lb, size_t t, uint64_t aggregate) {
    uint64_t* words = lb.words;
    unsigned lane = lane_id();
    unsigned mask = warp_mask();
    size_t lanes = warp_lanes();
    auto publish = [&](uint64_t flag, uint64_t sum) {
        if (lane == 0) store_relaxed_device(words + t, flag | sum);
    };
    if (t == 0) {
        publish(SCAN_PREFIX, aggregate);
        return 0;
    }
    publish(SCAN_AGGREGATE, aggregate);
    uint64_t exclusive = 0;
    // The window: in round j, lane l reads tile end - 1 - (j * lanes + l).
    size_t end = t;
    unsigned polls = 0;
    bool timing = false;
    uint64_t since = 0;
    for (;;) {
        uint64_t word[WINDOW_ROUNDS];
#pragma unroll
        for (unsigned j = 0; j < WINDOW_ROUNDS; ++j) {
            size_t back = 1 + j * lanes + lane;
            // Before tile 0: nothing to add, and never reached past tile 0's prefix.
            word[j] = end >= back ? load_relaxed_device(words + (end - back)) : SCAN_PREFIX;
        }
        // The lanes that count in each round: every lane up to the nearest prefix.
        unsigned needed[WINDOW_ROUNDS];
        bool found = false;
        unsigned empty = 0;
#pragma unroll
        for (unsigned j = 0; j < WINDOW_ROUNDS; ++j) {
            unsigned prefixes = __ballot_sync(mask, (word[j] & SCAN_PREFIX) != 0);
            if (found) {
                needed[j] = 0;
            } else if (prefixes != 0) {
                found = true;
                needed[j] = unsigned((2ull << (__ffs(prefixes) - 1)) - 1) & mask;
            } else {
                needed[j] = mask;
            }
            empty |= __ballot_sync(mask, (word[j] >> 62) == 0) & needed[j];
        }
        if (empty == 0) {
            uint64_t mine = 0;
#pragma unroll
            for (unsigned j = 0; j < WINDOW_ROUNDS; ++j)
                if ((needed[j] >> lane) & 1) mine = saturating(mine, word[j] & SCAN_SUM_MAX);
            exclusive = saturating(exclusive, warp_saturating_sum(mine));
            if (found) break;
            size_t window = WINDOW_ROUNDS * lanes;
            end -= window < end ? window : end;
            continue;
        }
        // A tile in the window has published nothing yet: poll again, bounded.
        ++polls;
        if (polls % POLLS_PER_CHECK == 0) {
            uint64_t now = globaltimer_ns();
            if (!timing) since = now, timing = true;
            bool gave_up = load_relaxed_device(lb.timeouts) != 0;
            bool late = now - since > lb.timeout_ns;
            // One answer for the warp: the lanes' clocks may differ.
            if (__ballot_sync(mask, gave_up || late) != 0) {
                if (lane == 0) fetch_add_relaxed_device(lb.timeouts, 1u);
                break;
            }
        }
    }
    publish(SCAN_PREFIX, saturating(exclusive, aggregate));
    return exclusive;
}

__global__ void scan_lookback_twin(const unsigned* counts, unsigned len32, unsigned* out,
                                   LookBack lb) {
    size_t len = len32;
    size_t tile = SCAN_TILE;
    size_t tiles = max(div_ceil(len, tile), size_t(1));
    size_t items = div_ceil(tile, blockDim.x);
    size_t thread = threadIdx.x;
    uint64_t* slots = dynamic_shared<uint64_t>() + block_scan_shared_bytes(blockDim.x) / 8;
    uint64_t* prefix_slot = slots;
    uint64_t* ticket_slot = slots + 1;
    // Whole 16-byte words where both arrays start on a boundary (runs start on one then).
    bool aligned = ((reinterpret_cast<uintptr_t>(counts) | reinterpret_cast<uintptr_t>(out)) %
                    16) == 0;
    for (;;) {
        if (thread == 0) *ticket_slot = fetch_add_relaxed_device(lb.ticket, 1u);
        __syncthreads();
        size_t t = *ticket_slot;
        if (t >= tiles) break;
        clear_for_next(lb, t, tiles, thread);
        size_t end = (t + 1) * tile < len ? (t + 1) * tile : len;
        size_t first = t * tile + thread * items;
        size_t run_from = first < end ? first : end;
        size_t run_to = first + items < end ? first + items : end;
        // The thread's run: in registers, or summed now and read again to write.
        unsigned mine[SCAN_ITEMS] = {};
        uint64_t sum = 0;
        if (items == SCAN_ITEMS) {
            load_run(counts, first, end, aligned, mine);
#pragma unroll
            for (unsigned k = 0; k < SCAN_ITEMS; ++k) sum += mine[k];
        } else {
            for (size_t i = run_from; i < run_to; ++i) sum += counts[i];
        }
        uint64_t before, aggregate;
        block_exclusive_sum(sum, before, aggregate);
        if (thread < WARP_SIZE) {
            uint64_t exclusive = look_back(lb, t, aggregate);
            if (thread == 0) {
                *prefix_slot = exclusive;
                if (t == tiles - 1) {
                    uint64_t total = exclusive + aggregate;
                    if (total < exclusive) total = ~0ull;
                    total = total < SCAN_SUM_MAX ? total : SCAN_SUM_MAX;
                    *lb.total = total;
                    out[len] = unsigned(total);
                }
            }
        }
        __syncthreads();
        uint64_t at = *prefix_slot + before;
        if (items == SCAN_ITEMS) {
            store_run(out, first, end, aligned, mine, at);
        } else {
            for (size_t i = run_from; i < run_to; ++i) {
                out[i] = unsigned(at);
                at += counts[i];
            }
        }
        // The next tile reuses the scratch and the slots.
        __syncthreads();
    }
}

// ---- The fill (cells.rs), 2-D open box -----------------------------------------------------

constexpr unsigned KEEP = 8;

struct Sorted {
    const unsigned* index;
    const float* x;
    const float* y;
};

// gridsync's `Kept` and `Rows`, field for field.
struct Kept {
    const unsigned* slots;
    unsigned stride;
};

struct Rows {
    const unsigned* offsets;
    unsigned* indices;
    Kept kept;
    const uint64_t* total;
    unsigned capacity;
};

// CellGrid::around in an open box: (first, count) of the cells next to c along an axis.
__device__ __forceinline__ void around(unsigned c, unsigned n, unsigned& first,
                                       unsigned& count) {
    if (n < 3) {
        first = 0, count = n;
    } else {
        unsigned lo = c > 0 ? c - 1 : 0;
        first = lo;
        count = (c + 1 < n - 1 ? c + 1 : n - 1) - lo + 1;
    }
}

// search::<f32, false, false>: emit(k, j) for the k-th neighbor j of sorted position p, over
// one range of sorted positions per row of cells; returns how many.
template <class Emit>
__device__ __forceinline__ unsigned search(Sorted s, const unsigned* start, const Grid& grid,
                                           float cutoff_sq, size_t p, Emit emit) {
    float mx = __ldg(s.x + p), my = __ldg(s.y + p);
    unsigned cx = cell_of(mx, grid.origin[0], grid.inv_size[0], grid.cells[0]);
    unsigned cy = cell_of(my, grid.origin[1], grid.inv_size[1], grid.cells[1]);
    unsigned nx = grid.cells[0];
    unsigned found = 0;
    unsigned y0, cy_around, x0, cx_around;
    around(cy, grid.cells[1], y0, cy_around);
    around(cx, nx, x0, cx_around);
    unsigned end = x0 + cx_around;
    for (unsigned dy = 0; dy < cy_around; ++dy) {
        unsigned row = (y0 + dy) * nx;
        unsigned from = __ldg(start + row + x0), to = __ldg(start + row + end);
        for (unsigned q = from; q < to; ++q) {
            float dx = __ldg(s.x + q) - mx, dyv = __ldg(s.y + q) - my;
            float d2 = __fadd_rn(__fmul_rn(dx, dx), __fmul_rn(dyv, dyv));
            if (d2 < cutoff_sq && q != p) {
                emit(found, __ldg(s.index + q));
                ++found;
            }
        }
    }
    return found;
}

// sort8: the 19 compare-exchanges of an optimal network for eight inputs, in registers.
__device__ __forceinline__ void sort8(unsigned (&v)[KEEP]) {
    constexpr int pairs[19][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}, {0, 4}, {1, 5}, {2, 6},
                                  {3, 7}, {0, 1}, {2, 3}, {4, 5}, {6, 7}, {2, 4}, {3, 5},
                                  {1, 4}, {3, 6}, {1, 2}, {3, 4}, {5, 6}};
#pragma unroll
    for (int e = 0; e < 19; ++e) {
        unsigned a = v[pairs[e][0]], b = v[pairs[e][1]];
        v[pairs[e][0]] = min(a, b);
        v[pairs[e][1]] = max(a, b);
    }
}

// sort_list: insertion sort up to 32 words, heapsort beyond, in place in global memory.
__device__ __forceinline__ void sort_list(size_t len, unsigned* list) {
    if (len <= 32) {
        for (size_t i = 1; i < len; ++i) {
            unsigned v = list[i];
            size_t j = i;
            while (j > 0 && list[j - 1] > v) {
                list[j] = list[j - 1];
                --j;
            }
            list[j] = v;
        }
        return;
    }
    auto sift = [&](size_t root, size_t end) {
        for (;;) {
            size_t child = 2 * root + 1;
            if (child >= end) break;
            if (child + 1 < end && list[child + 1] > list[child]) ++child;
            if (list[root] >= list[child]) break;
            unsigned t = list[root];
            list[root] = list[child];
            list[child] = t;
            root = child;
        }
    };
    for (size_t root = len / 2; root-- > 0;) sift(root, len);
    for (size_t end = len - 1; end >= 1; --end) {
        unsigned t = list[0];
        list[0] = list[end];
        list[end] = t;
        sift(0, end);
    }
}

// Rows::fit: the exact total fits the buffer (then the offsets are the exact scan).
__device__ __forceinline__ bool fit(const Rows& rows) { return *rows.total <= rows.capacity; }

// fill_row: atom i's row, sorted, from sorted position p.
__device__ __forceinline__ void fill_row(Sorted s, const unsigned* start, const Grid& grid,
                                         float cutoff_sq, size_t p, size_t i, const Rows& rows) {
    size_t first = rows.offsets[i], last = rows.offsets[i + 1];
    if (first > last || last > rows.capacity) return;
    size_t room = last - first;
    unsigned* list = rows.indices + first;
    if (room <= KEEP) {
        // Unused slots sort to the end as 0xffffffff; only the row's `room` are written.
        unsigned v[KEEP];
#pragma unroll
        for (unsigned k = 0; k < KEEP; ++k)
            v[k] = k < room ? rows.kept.slots[k * size_t(rows.kept.stride) + p] : 0xffffffffu;
        sort8(v);
#pragma unroll
        for (unsigned k = 0; k < KEEP; ++k)
            if (k < room) list[k] = v[k];
    } else {
        auto emit = [&](unsigned k, unsigned j) {
            if (k < room) list[k] = j;
        };
        unsigned found = search(s, start, grid, cutoff_sq, p, emit);
        sort_list(found < room ? found : room, list);
    }
}

__global__ void cell_fill_atoms_twin(Sorted s, unsigned n, const unsigned* start, Grid grid,
                                     float cutoff_sq, const unsigned* cell, const unsigned* rank,
                                     Rows rows) {
    if (!fit(rows)) return;
    for (size_t i = global_id_x(); i < n; i += threads_per_grid_x()) {
        size_t p = unsigned(__ldg(start + __ldg(cell + i)) + __ldg(rank + i));
        if (p >= n) continue;
        fill_row(s, start, grid, cutoff_sq, p, i, rows);
    }
}

__global__ void cell_fill_twin(Sorted s, unsigned n, const unsigned* start, Grid grid,
                               float cutoff_sq, Rows rows) {
    if (!fit(rows)) return;
    for (size_t p = global_id_x(); p < n; p += threads_per_grid_x())
        fill_row(s, start, grid, cutoff_sq, p, s.index[p], rows);
}

// ---- Host --------------------------------------------------------------------------------

// A device array of `len` T (room for one at len 0), freed with its owner.
template <class T>
struct DeviceArray {
    T* ptr = nullptr;
    size_t len = 0;
    explicit DeviceArray(size_t n) : len(n) {
        TWIN_CHECK(cudaMalloc(&ptr, std::max<size_t>(n, 1) * sizeof(T)));
    }
    ~DeviceArray() { cudaFree(ptr); }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    void upload(const std::vector<T>& v) {
        TWIN_CHECK(cudaMemcpy(ptr, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    }
    std::vector<T> download(size_t n) const {
        std::vector<T> v(n);
        TWIN_CHECK(cudaMemcpy(v.data(), ptr, n * sizeof(T), cudaMemcpyDeviceToHost));
        return v;
    }
};

// False (with a message) when `bytes` do not fit the device's free memory.
static bool fits(const char* what, unsigned long long bytes) {
    size_t free = 0, total = 0;
    TWIN_CHECK(cudaMemGetInfo(&free, &total));
    if (bytes > free) {
        std::fprintf(stderr, "%s: %llu bytes, %zu free\n", what, bytes, free);
        return false;
    }
    return true;
}

static size_t tiles_of(size_t len) { return std::max<size_t>(div_ceil(len, SCAN_TILE), 1); }

// gridsync's `Scan`: two sets of tile words and tickets for scans of up to `capacity` counts,
// and the status [total, timeouts].
struct ScanScratch {
    size_t tiles;
    DeviceArray<uint64_t> words, status;
    DeviceArray<unsigned> tickets;
    int set = 0;
    explicit ScanScratch(size_t capacity)
        : tiles(tiles_of(capacity)), words(2 * tiles), status(2), tickets(2) {
        TWIN_CHECK(cudaMemset(words.ptr, 0, 2 * tiles * sizeof(uint64_t)));
        TWIN_CHECK(cudaMemset(status.ptr, 0, 2 * sizeof(uint64_t)));
        TWIN_CHECK(cudaMemset(tickets.ptr, 0, 2 * sizeof(unsigned)));
    }
    static unsigned long long bytes(size_t capacity) { return 16ull * tiles_of(capacity) + 32; }
    // Queues the scan of counts[..len] into out[..=len], as Scan::run.
    void run(const unsigned* counts, size_t len, unsigned* out) {
        int next = 1 - set;
        LookBack lb{words.ptr + set * tiles, tickets.ptr + set,    words.ptr + next * tiles,
                    unsigned(tiles),         tickets.ptr + next,   status.ptr,
                    reinterpret_cast<unsigned*>(status.ptr + 1),   LOOK_BACK_TIMEOUT_NS};
        unsigned blocks = unsigned(tiles_of(len));
        scan_lookback_twin<<<blocks, THREADS_PER_BLOCK, scan_shared_bytes(THREADS_PER_BLOCK)>>>(
            counts, unsigned(len), out, lb);
        TWIN_CHECK(cudaGetLastError());
        set = next;
    }
    // The last scan's total; false (with a message) if a tile timed out.
    bool total(uint64_t& t) const {
        std::vector<uint64_t> s = status.download(2);
        if (unsigned(s[1]) != 0) {
            std::fprintf(stderr, "scan_lookback_twin: %u tiles waited past their bound\n",
                         unsigned(s[1]));
            return false;
        }
        t = s[0];
        return true;
    }
};

// The host's exclusive scan: `len + 1` offsets truncated to u32; returns the exact total.
static uint64_t host_scan(const unsigned* counts, size_t len, std::vector<unsigned>& out) {
    out.resize(len + 1);
    uint64_t at = 0;
    for (size_t i = 0; i < len; ++i) out[i] = unsigned(at), at += counts[i];
    out[len] = unsigned(at);
    return at;
}

// The device's out[..=len] and total against the host's scan of counts[..len].
static bool check_scan(const ScanScratch& s, const char* what, const unsigned* counts,
                       size_t len, const unsigned* d_out) {
    std::vector<unsigned> want;
    uint64_t want_total = std::min(host_scan(counts, len, want), SCAN_SUM_MAX), total = 0;
    if (!s.total(total)) return false;
    std::vector<unsigned> got(len + 1);
    TWIN_CHECK(cudaMemcpy(got.data(), d_out, (len + 1) * 4, cudaMemcpyDeviceToHost));
    size_t bad = 0, first_bad = len + 1;
    for (size_t i = 0; i <= len; ++i)
        if (got[i] != want[i]) first_bad = std::min(first_bad, i), ++bad;
    if (bad != 0 || total != want_total) {
        std::fprintf(stderr,
                     "scan_lookback_twin (%s, %zu counts): %zu offsets differ (first at %zu), "
                     "total %llu, expected %llu\n",
                     what, len, bad, first_bad, (unsigned long long)total,
                     (unsigned long long)want_total);
        return false;
    }
    return true;
}

// Median milliseconds of `launch` alone: 3 warm-ups, then `trials` event-timed launches.
template <class F>
static double time_alone(int trials, F launch) {
    for (int w = 0; w < 3; ++w) launch();
    TWIN_CHECK(cudaDeviceSynchronize());
    std::vector<double> ms;
    for (int t = 0; t < trials; ++t) ms.push_back(event_ms(launch));
    TWIN_CHECK(cudaDeviceSynchronize());
    return median(ms);
}

static void print_scan(const char* input, size_t len, double ms) {
    std::printf("{\"twin\":\"scan_lookback\",\"input\":\"%s\",\"device\":\"%s\",\"len\":%zu,"
                "\"blocks\":%zu,\"median_ms\":%.5f}\n",
                input, device_name(), len, tiles_of(len), ms);
}

// What the phases before the fill leave, laid out on the host, and the expected CSR list.
struct Built {
    size_t n = 0;
    Grid grid{};
    unsigned long long cells = 0;
    std::vector<unsigned> cell, rank, cell_counts, start, index, counts, kept;
    std::vector<float> sx, sy;
    std::vector<unsigned> offsets, indices;  // the expected list
};

// Bins (a stable counting sort by cell) and searches the 3×3 cells around each atom, cell by
// cell, in the f32 operations of the pair rule; false (with a message) if not twinned.
static bool build_on_host(const std::vector<float>& x, const std::vector<float>& y, Built& b) {
    if (!plan_grid(x, y, b.grid, b.cells)) return false;
    size_t n = b.n = x.size();
    const Grid& g = b.grid;
    b.cell.resize(n), b.rank.resize(n), b.index.resize(n), b.sx.resize(n), b.sy.resize(n);
    b.cell_counts.assign(b.cells, 0);
    for (size_t i = 0; i < n; ++i) {
        unsigned cx = cell_of(x[i], g.origin[0], g.inv_size[0], g.cells[0]);
        unsigned cy = cell_of(y[i], g.origin[1], g.inv_size[1], g.cells[1]);
        b.cell[i] = cy * g.cells[0] + cx;
        b.rank[i] = b.cell_counts[b.cell[i]]++;
    }
    host_scan(b.cell_counts.data(), b.cells, b.start);
    for (size_t i = 0; i < n; ++i) {
        size_t p = b.start[b.cell[i]] + b.rank[i];
        b.index[p] = unsigned(i), b.sx[p] = x[i], b.sy[p] = y[i];
    }
    float cutoff_sq = float(CUTOFF * CUTOFF);
    b.counts.assign(n, 0);
    b.kept.assign(n * KEEP, 0);
    std::vector<std::vector<unsigned>> lists(n);
    for (size_t p = 0; p < n; ++p) {
        unsigned cx = cell_of(b.sx[p], g.origin[0], g.inv_size[0], g.cells[0]);
        unsigned cy = cell_of(b.sy[p], g.origin[1], g.inv_size[1], g.cells[1]);
        unsigned i = b.index[p], found = 0;
        for (unsigned ry = cy > 0 ? cy - 1 : 0; ry <= std::min(cy + 1, g.cells[1] - 1); ++ry) {
            for (unsigned rx = cx > 0 ? cx - 1 : 0; rx <= std::min(cx + 1, g.cells[0] - 1);
                 ++rx) {
                unsigned key = ry * g.cells[0] + rx;
                for (unsigned q = b.start[key]; q < b.start[key + 1]; ++q) {
                    volatile float dx = b.sx[q] - b.sx[p], dy = b.sy[q] - b.sy[p];
                    volatile float xx = dx * dx, yy = dy * dy;
                    volatile float d2 = xx + yy;
                    if (d2 < cutoff_sq && q != p) {
                        if (found < KEEP) b.kept[found * n + p] = b.index[q];
                        lists[i].push_back(b.index[q]);
                        ++found;
                    }
                }
            }
        }
        b.counts[i] = found;
    }
    uint64_t entries = host_scan(b.counts.data(), n, b.offsets);
    if (entries > 0xffffffffull) {
        std::fprintf(stderr, "%llu neighbor entries: more than u32 offsets hold\n",
                     (unsigned long long)entries);
        return false;
    }
    b.indices.reserve(entries);
    for (auto& l : lists) {
        std::sort(l.begin(), l.end());
        b.indices.insert(b.indices.end(), l.begin(), l.end());
    }
    return true;
}

// Both scans and both fills on `b`, each checked; timed when `trials` > 0. False on a
// difference.
static bool run_cell_list(const char* name, const Built& b, int trials) {
    size_t n = b.n, entries = b.indices.size(), cells = b.cells;
    unsigned long long bytes = n * (2 * 4ull + 5 * 4ull + 4ull * KEEP) + 4ull +
                               (2 * cells + 1) * 4ull + entries * 4ull +
                               ScanScratch::bytes(std::max<size_t>(cells, n));
    if (cells > MAX_SCAN_LEN) {
        std::fprintf(stderr, "%s: %zu cells, more than one scan takes (%zu)\n", name, cells,
                     MAX_SCAN_LEN);
        return false;
    }
    if (!fits(name, bytes)) return false;
    DeviceArray<float> sx(n), sy(n);
    DeviceArray<unsigned> index(n), cell(n), rank(n), cell_counts(cells), start(cells + 1);
    DeviceArray<unsigned> counts(n), offsets(n + 1), kept(n * KEEP), indices(entries);
    sx.upload(b.sx), sy.upload(b.sy), index.upload(b.index), cell.upload(b.cell);
    rank.upload(b.rank), cell_counts.upload(b.cell_counts), counts.upload(b.counts);
    kept.upload(b.kept);
    ScanScratch scan(std::max<size_t>(cells, n));

    // The scans: the cells' counts into the starts, the neighbor counts into the offsets (the
    // fill reads the latter's total).
    scan.run(cell_counts.ptr, cells, start.ptr);
    if (!check_scan(scan, "cell counts", b.cell_counts.data(), cells, start.ptr)) return false;
    scan.run(counts.ptr, n, offsets.ptr);
    if (!check_scan(scan, "neighbor counts", b.counts.data(), n, offsets.ptr)) return false;

    Sorted s{index.ptr, sx.ptr, sy.ptr};
    float cutoff_sq = float(CUTOFF * CUTOFF);
    unsigned blocks = unsigned(std::max<size_t>(div_ceil(n, THREADS_PER_BLOCK), 1));
    auto rows = [&](size_t capacity) {
        return Rows{offsets.ptr, indices.ptr, Kept{kept.ptr, unsigned(n)}, scan.status.ptr,
                    unsigned(capacity)};
    };
    auto fill_atoms = [&](size_t capacity) {
        cell_fill_atoms_twin<<<blocks, THREADS_PER_BLOCK>>>(s, unsigned(n), start.ptr, b.grid,
                                                             cutoff_sq, cell.ptr, rank.ptr,
                                                             rows(capacity));
    };
    auto fill_sorted = [&](size_t capacity) {
        cell_fill_twin<<<blocks, THREADS_PER_BLOCK>>>(s, unsigned(n), start.ptr, b.grid,
                                                       cutoff_sq, rows(capacity));
    };

    // A buffer one entry short: nothing written.
    if (entries > 0) {
        TWIN_CHECK(cudaMemset(indices.ptr, 0xff, entries * 4));
        fill_atoms(entries - 1);
        fill_sorted(entries - 1);
        TWIN_CHECK(cudaGetLastError());
        std::vector<unsigned> got = indices.download(entries);
        size_t written = entries - std::count(got.begin(), got.end(), 0xffffffffu);
        if (written != 0) {
            std::fprintf(stderr, "%s: a fill into %zu of %zu entries wrote %zu\n", name,
                         entries - 1, entries, written);
            return false;
        }
    }
    auto check_and_time = [&](const char* kernel, auto launch) {
        TWIN_CHECK(cudaMemset(indices.ptr, 0xff, std::max<size_t>(entries, 1) * 4));
        launch(entries);
        TWIN_CHECK(cudaGetLastError());
        std::vector<unsigned> got = indices.download(entries);
        size_t bad = 0;
        for (size_t e = 0; e < entries; ++e) bad += got[e] != b.indices[e];
        if (bad != 0) {
            std::fprintf(stderr, "%s twin (%s): %zu of %zu entries differ from the host's list\n",
                         kernel, name, bad, entries);
            return false;
        }
        if (trials > 0) {
            double ms = time_alone(trials, [&] { launch(entries); });
            std::printf("{\"twin\":\"%s\",\"input\":\"%s\",\"device\":\"%s\",\"atoms\":%zu,"
                        "\"entries\":%zu,\"blocks\":%u,\"median_ms\":%.5f}\n",
                        kernel, name, device_name(), n, entries, blocks, ms);
        }
        return true;
    };
    if (!check_and_time("cell_fill_atoms_f32", fill_atoms) ||
        !check_and_time("cell_fill_f32", fill_sorted))
        return false;
    if (trials > 0) {
        double cells_ms = time_alone(trials, [&] { scan.run(cell_counts.ptr, cells, start.ptr); });
        if (!check_scan(scan, "cell counts", b.cell_counts.data(), cells, start.ptr)) return false;
        double counts_ms = time_alone(trials, [&] { scan.run(counts.ptr, n, offsets.ptr); });
        if (!check_scan(scan, "neighbor counts", b.counts.data(), n, offsets.ptr)) return false;
        print_scan("cell counts", cells, cells_ms);
        print_scan("neighbor counts", n, counts_ms);
    }
    return true;
}

// splitmix64, for reproducible random inputs.
static uint64_t next_random(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// 40 000 points uniform in a 150 Å square (about 20 neighbors each below 1.9 Å) and 400 in a
// 3 Å square (several hundred each): rows the fill searches again and sorts in place.
static void dense_points(std::vector<float>& x, std::vector<float>& y) {
    uint64_t state = 0x63656c6c5f66696cull;
    auto uniform = [&](double side) {
        return float(side * double(next_random(state) >> 11) * 0x1p-53);
    };
    for (int i = 0; i < 40000; ++i) x.push_back(uniform(150.0)), y.push_back(uniform(150.0));
    for (int i = 0; i < 400; ++i) x.push_back(70 + uniform(3.0)), y.push_back(70 + uniform(3.0));
}

// The scan alone on random counts: lengths around the tile and past it.
struct ScanCase {
    size_t len;
    bool full_range;  // counts anywhere in u32 (totals past 2³²), else below 16
    bool misaligned;  // counts and out one word past a 16-byte boundary
    bool timed;
};

static bool run_random_scan(const ScanCase& c, int trials) {
    size_t pad = c.misaligned ? 1 : 0;
    if (c.len > MAX_SCAN_LEN ||
        !fits("random scan", (2 * (c.len + pad) + 1) * 4ull + ScanScratch::bytes(c.len)))
        return false;
    uint64_t state = 0x7363616e ^ c.len;
    std::vector<unsigned> counts(c.len + pad);
    for (auto& v : counts) v = unsigned(next_random(state) >> 32) & (c.full_range ? ~0u : 15u);
    DeviceArray<unsigned> d_counts(c.len + pad), d_out(c.len + 1 + pad);
    d_counts.upload(counts);
    ScanScratch scan(c.len);
    const unsigned* in = d_counts.ptr + pad;
    unsigned* out = d_out.ptr + pad;
    char what[64];
    std::snprintf(what, sizeof what, "random%s%s", c.full_range ? ", 32-bit" : "",
                  c.misaligned ? ", off 16 bytes" : "");
    scan.run(in, c.len, out);
    if (!check_scan(scan, what, counts.data() + pad, c.len, out)) return false;
    if (c.timed && trials > 0) {
        double ms = time_alone(trials, [&] { scan.run(in, c.len, out); });
        if (!check_scan(scan, what, counts.data() + pad, c.len, out)) return false;
        print_scan(what, c.len, ms);
    }
    return true;
}

int main(int argc, char** argv) {
    int trials = 0;
    if (!sheet_arguments(argc, argv, trials)) return 2;
    std::vector<float> x, y;
    Built sheet;
    if (!read_sheet(argv[1], x, y) || !build_on_host(x, y, sheet)) return 1;
    if (!run_cell_list("sheet", sheet, trials)) return 1;

    std::vector<float> dx, dy;
    dense_points(dx, dy);
    Built dense;
    if (!build_on_host(dx, dy, dense) || !run_cell_list("dense", dense, 0)) return 1;

    const ScanCase cases[] = {
        {0, false, false, true},        {1, false, false, true},
        {2047, false, false, true},     {2049, false, false, true},
        {1000003, false, false, true},  {10000000, false, false, true},
        {2049, true, false, false},     {10000000, true, false, false},
        {100003, false, true, false},
    };
    for (const ScanCase& c : cases)
        if (!run_random_scan(c, trials)) return 1;
    return 0;
}
