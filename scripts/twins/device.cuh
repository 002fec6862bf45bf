// The device-side pieces the bandwidth twins share, each the CUDA C++ of one gridsync primitive,
// written to keep its control flow (and so its PTX) as close to the Rust as CUDA allows:
//
//   lane_id, warp_lanes, warp_mask       gpu/src/primitives/warp.rs, block_reduce.rs
//   warp_reduce, block_reduce            gpu/src/primitives/block_reduce.rs (CUB's
//                                        BLOCK_REDUCE_WARP_REDUCTIONS: shuffles, one barrier)
//   Split16<T>                           gpu/src/primitives/vector.rs (Split4, for f32) and
//                                        gpu/src/lessons/reduce/split.rs, histogram/load.rs
//   grid_stride_unrolled<UNROLL>,        gpu/src/primitives/vector.rs (strided_each, the
//   grid_stride_each, strided_each       one-at-a-time loop the two share, is the twins' own)
//   grid_stride                          gpu/src/primitives/index.rs (a StepBy, as Rust runs it)
//   atomic_add_device                    gpu/src/primitives/atomic/shorthand.rs
//   red_add_block_shared                 gpu/src/primitives/shared_atomic.rs (red_add_block)
//   global_id_x, threads_per_grid_x     gpu/src/primitives/index.rs
//   globaltimer_ns                       gpu/src/primitives/time.rs (the bound of every wait)
//
// Atomics keep gridsync's scope and order: device scope, relaxed (libcu++'s atomic_ref, which
// emits `atom.add.relaxed.gpu.*` as gridsync's `atom.relaxed.gpu.add.*`); the shared-memory
// count is the same `red.relaxed.cta.shared.add.u32` gridsync emits, written as PTX because
// CUDA C++ has no spelling of a block-scope `red` on a shared-window address.
//
// Loads are plain `ld.global` (no `__restrict__`, no `__ldg`): gridsync's `Ptr::load` is a plain
// load, so a `const __restrict__` here would give nvcc the non-coherent path gridsync lacks.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda/atomic>

namespace twin {

constexpr unsigned WARP_SIZE = 32;
constexpr unsigned FULL_MASK = 0xffffffffu;

// The block's dynamic shared memory (every kernel here lays its own data out in it).
extern __shared__ __align__(16) unsigned char dynamic_shared_bytes[];

template <class T>
__device__ __forceinline__ T* dynamic_shared() {
    return reinterpret_cast<T*>(dynamic_shared_bytes);
}

// `%laneid`, as gridsync reads it (and CUB's LaneId).
__device__ __forceinline__ unsigned lane_id() {
    unsigned r;
    asm("mov.u32 %0, %%laneid;" : "=r"(r));
    return r;
}

__device__ __forceinline__ unsigned threads_per_block() {
    return blockDim.x * blockDim.y * blockDim.z;
}

__device__ __forceinline__ unsigned thread_rank_in_block() {
    return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ size_t global_id_x() {
    return size_t(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ size_t threads_per_grid_x() {
    return size_t(blockDim.x) * gridDim.x;
}

// `%globaltimer`, nanoseconds.
__device__ __forceinline__ uint64_t globaltimer_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The lanes of this warp that exist: 32, except in a partial last warp.
__device__ __forceinline__ unsigned warp_lanes() {
    unsigned first = thread_rank_in_block() - lane_id();
    unsigned left = threads_per_block() - first;
    return left < WARP_SIZE ? left : WARP_SIZE;
}

__device__ __forceinline__ unsigned warp_mask() {
    unsigned lanes = warp_lanes();
    return lanes == WARP_SIZE ? FULL_MASK : (1u << lanes) - 1;
}

// The reduction of `v` by `op` over the warp (offsets 16, 8, 4, 2, 1; a lane adds only what an
// existing lane sent). Defined in lane 0 only.
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
    unsigned lanes = warp_lanes();
    unsigned mask = warp_mask();
    unsigned lane = lane_id();
    T acc = v;
#pragma unroll
    for (unsigned offset = WARP_SIZE / 2; offset > 0; offset /= 2) {
        T other = __shfl_down_sync(mask, acc, offset);
        if (lane + offset < lanes) acc = op(acc, other);
    }
    return acc;
}

// Bytes of dynamic shared memory block_reduce needs: one T per warp.
__host__ __device__ constexpr unsigned block_reduce_shared_bytes(unsigned threads, unsigned size) {
    return (threads + WARP_SIZE - 1) / WARP_SIZE * size;
}

// The reduction of `v` by `op` over the block, the start of the dynamic shared memory as
// scratch. Defined in thread 0 only; every thread calls it (it holds a barrier).
template <class T, class Op>
__device__ __forceinline__ T block_reduce(T v, T identity, Op op) {
    T* scratch = dynamic_shared<T>();
    unsigned lane = lane_id();
    unsigned warp = thread_rank_in_block() / WARP_SIZE;
    unsigned warps = (threads_per_block() + WARP_SIZE - 1) / WARP_SIZE;

    // PHASE 1: each warp's reduction lands in its lane 0, which publishes it.
    T warp_acc = warp_reduce(v, op);
    if (lane == 0) scratch[warp] = warp_acc;
    __syncthreads();

    // PHASE 2: warp 0 reduces the warps' results.
    T total = identity;
    if (warp == 0) {
        T mine = lane < warps ? scratch[lane] : identity;
        total = warp_reduce(mine, op);
    }
    return total;
}

struct Add {
    template <class T>
    __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
};

// gridsync's block_reduce_sum: block_reduce with `+` and zero.
template <class T>
__device__ __forceinline__ T block_reduce_sum(T v) {
    return block_reduce(v, T(0), Add{});
}

// 16 bytes of T, as CUDA names them.
template <class T> struct Vec16Of;
template <> struct Vec16Of<float> { using type = float4; };
template <> struct Vec16Of<unsigned char> { using type = uint4; };

// `len` elements at `p` cut into a scalar head (up to the first 16-byte boundary), a body of
// whole 16-byte vectors and a scalar tail.
template <class T>
struct Split16 {
    static constexpr size_t LANES = 16 / sizeof(T);
    using Vec = typename Vec16Of<T>::type;
    size_t head, body, len;

    __device__ __forceinline__ Split16(const T* p, size_t n) {
        size_t misaligned = (reinterpret_cast<uintptr_t>(p) % 16) / sizeof(T);
        size_t h = (LANES - misaligned) % LANES;
        head = h < n ? h : n;
        body = (n - head) / LANES;
        len = n;
    }
    // Split4::of_pair: `a`'s split if `b` is misaligned alike, else all head.
    __device__ __forceinline__ static Split16 of_pair(const T* a, const T* b, size_t n) {
        if ((reinterpret_cast<uintptr_t>(a) ^ reinterpret_cast<uintptr_t>(b)) % 16 == 0)
            return Split16(a, n);
        Split16 s(a, n);
        s.head = n;
        s.body = 0;
        return s;
    }
    __device__ __forceinline__ size_t tail_start() const { return head + body * LANES; }
    __device__ __forceinline__ size_t scalars() const { return head + (len - tail_start()); }
    __device__ __forceinline__ size_t scalar_index(size_t k) const {
        return k < head ? k : tail_start() + (k - head);
    }
    // The body's v-th vector: one 16-byte plain load.
    __device__ __forceinline__ Vec load(const T* p, size_t v) const {
        return reinterpret_cast<const Vec*>(p + head)[v];
    }
};

// f(i) for i = first, first + stride, … below n, one at a time: grid_stride_each's loop and
// grid_stride_unrolled's rest.
template <class F>
__device__ __forceinline__ void strided_each(size_t first, size_t n, size_t stride, F& f) {
    size_t i = first;
    while (i < n) {
        f(i);
        i += stride;
    }
}

// f(i) for this thread's i < n of a grid-stride loop, UNROLL strides at a time, then the rest.
template <int UNROLL, class F>
__device__ __forceinline__ void grid_stride_unrolled(size_t n, F f) {
    size_t stride = threads_per_grid_x();
    size_t i = global_id_x();
    while (i + (UNROLL - 1) * stride < n) {
#pragma unroll
        for (int k = 0; k < UNROLL; ++k) f(i + k * stride);
        i += UNROLL * stride;
    }
    strided_each(i, n, stride, f);
}

// vector.rs's grid_stride_each: f(k) for this thread's k < n of a grid-stride loop, one at a time
// (the stride read once, before the first index): a plain loop, which ptxas keeps rolled, for
// the few scalars of a split's head and tail.
template <class F>
__device__ __forceinline__ void grid_stride_each(size_t n, F f) {
    size_t stride = threads_per_grid_x();
    strided_each(global_id_x(), n, stride, f);
}

// index.rs's grid_stride(n) = (global_id_x().min(n)..n).step_by(threads_per_grid_x()), f(i) for
// each index, as Rust runs a StepBy over an integer range: the step count first (the range's
// length over the stride, rounded up), then each step takes the index and moves it by the
// stride. The same indices as grid_stride_each, another loop: a count running down, whose trip
// count ptxas unrolls.
template <class F>
__device__ __forceinline__ void grid_stride(size_t n, F f) {
    size_t id = global_id_x();
    size_t next = id < n ? id : n;
    size_t stride = threads_per_grid_x();
    size_t len = n - next;
    size_t steps = len / stride + (len % stride > 0 ? 1 : 0);
    while (steps > 0) {
        size_t i = next;
        next = i + stride;
        steps -= 1;
        f(i);
    }
}

// CUDA's atomicAdd with its scope and order named: device scope, relaxed.
template <class T>
__device__ __forceinline__ void atomic_add_device(T* p, T v) {
    cuda::atomic_ref<T, cuda::thread_scope_device>(*p).fetch_add(v, cuda::memory_order_relaxed);
}

// The shared-window address of a generic pointer into this block's shared memory.
__device__ __forceinline__ unsigned shared_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// `red.relaxed.cta.shared.add.u32 [addr], v`: gridsync's SharedU32::red_add_block. With v = 1
// ptxas makes it ATOMS.POPC.INC.
__device__ __forceinline__ void red_add_block_shared(unsigned addr, unsigned v) {
    asm volatile("red.relaxed.cta.shared.add.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

}  // namespace twin
