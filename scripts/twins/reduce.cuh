// What the reduction twins share (reduce.cu, normalize.cu, reduce_pipeline.cu), each the CUDA C++
// of one piece of gpu/src/lessons/reduce/, with its control flow kept:
//
//   SumF32, SumF32InF64                ops.rs: the two accumulations of a float array
//   lift_vec, combine_strided          vec.rs: a float4 as a tree of its lanes; VEC_UNROLL
//                                      vectors per step, added as a tree before joining acc
//   last_block_shared_bytes,           last_block.rs: the block's reduction, a ticket, and the
//   finish_in_last_block               last block's sum of the partials
//   vec_reduce                         vec.rs: step (e)'s body (normalize.cu's
//                                      reduce_vec_sum_f32_in_f64; reduce.cu's
//                                      reduce_vec_sum_f32 keeps a loop of its own, see there)
//   shared_tree, partial_reduce_body   tree.rs: the Numba tutorial's tree and partial_reduce
//   gamma_bound, neumaier_sum          the hosts' bounds and float64 references
//
// The kernels stay in the twins, each a line calling its body here: a twin's binary holds the
// kernels it launches and no other (their names are what ncu's filters and the SASS comparison
// look for).
#pragma once

#include <cmath>
#include <cstddef>

#include <cuda/atomic>

#include "device.cuh"

namespace twin {

// Unit roundoff of float and double: Higham's u.
constexpr double F32_UNIT = 0x1p-24, F64_UNIT = 0x1p-53;

// ---- The reductions (ops.rs) ------------------------------------------------------------------

// Σ float in float.
struct SumF32 {
    using Acc = float;
    static constexpr double unit = F32_UNIT;
    __device__ static Acc lift(float x) { return x; }
    __device__ static Acc combine(Acc a, Acc b) { return a + b; }
};

// Σ float accumulated in double: each element converted exactly, every addition in double.
struct SumF32InF64 {
    using Acc = double;
    static constexpr double unit = F64_UNIT;
    __device__ static Acc lift(float x) { return double(x); }
    __device__ static Acc combine(Acc a, Acc b) { return a + b; }
};

// ---- 16-byte loads (vec.rs) -------------------------------------------------------------------

// VEC_UNROLL: float4 loads issued back to back before any is added.
constexpr int VEC_UNROLL = 4;

// Element::tree: a float4's lanes lifted and combined as (x ∘ y) ∘ (z ∘ w).
template <class R>
__device__ __forceinline__ typename R::Acc lift_vec(float4 v) {
    return R::combine(R::combine(R::lift(v.x), R::lift(v.y)),
                      R::combine(R::lift(v.z), R::lift(v.w)));
}

// combine_strided: the vectors load(v) for v = start, start + stride, … below end into acc —
// VEC_UNROLL loads issued back to back and added as (v0 ∘ v1) ∘ (v2 ∘ v3) before joining acc,
// then the rest one at a time. Step (e)'s loop over global memory and (f)'s over a landed
// shared-memory stage.
template <class R, class Load>
__device__ __forceinline__ typename R::Acc combine_strided(typename R::Acc acc, Load load,
                                                           size_t start, size_t end,
                                                           size_t stride) {
    size_t v = start;
    while (v + (VEC_UNROLL - 1) * stride < end) {
        // Four independent loads first, so that all four are in flight at once.
        float4 v0 = load(v), v1 = load(v + stride), v2 = load(v + 2 * stride),
               v3 = load(v + 3 * stride);
        typename R::Acc left = R::combine(lift_vec<R>(v0), lift_vec<R>(v1));
        typename R::Acc right = R::combine(lift_vec<R>(v2), lift_vec<R>(v3));
        acc = R::combine(acc, R::combine(left, right));
        v += VEC_UNROLL * stride;
    }
    while (v < end) {
        acc = R::combine(acc, lift_vec<R>(load(v)));
        v += stride;
    }
    return acc;
}

// ---- finish_in_last_block (last_block.rs), for either accumulator ---------------------------

// Where finish_in_last_block keeps its "this block is last" flag: after the block reduction's
// scratch (one accumulator of acc_bytes per warp), at a multiple of 16. gridsync's takes the
// accumulator as a type parameter; here its size is an argument, since with a function template
// nvcc schedules reduce_pipeline.cu's kernels otherwise.
__host__ __device__ constexpr unsigned flag_offset(unsigned threads, unsigned acc_bytes) {
    return (block_reduce_shared_bytes(threads, acc_bytes) + 15) / 16 * 16;
}

// Bytes of dynamic shared memory finish_in_last_block needs: the scratch, rounded up to 16, then
// the flag's 16 bytes (48 for float and 80 for double at 256 threads).
__host__ __device__ constexpr unsigned last_block_shared_bytes(unsigned threads,
                                                               unsigned acc_bytes) {
    return flag_offset(threads, acc_bytes) + 16;
}

// Reduces `mine` over the block, publishes it, and in the block that finishes last combines
// every block's partial in block order and writes the result. Every thread calls it, once, at
// the end of the kernel; the counter is 0 again afterwards.
//
// Scope: device (the ticket, both fences). Ordering: partial → __threadfence → relaxed ticket in
// every block; ticket → acquire fence → block barrier → reads in the last block. CUDA: the
// threadFenceReduction sample's `__threadfence(); ticket = atomicInc(&count, gridDim.x);`.
// PTX: `membar.gl`, `atom.global.inc.u32` (relaxed, device scope: gridsync's
// `atom.relaxed.gpu.inc.u32`), `fence.acq_rel.gpu`, `bar.sync`, and `st.relaxed.gpu.b32` for the
// reset. Not a grid barrier: no block waits for another.
template <class Acc>
__device__ __forceinline__ void finish_in_last_block(Acc mine, Acc* partials, unsigned* count,
                                                     Acc* result) {
    unsigned tid = threadIdx.x;
    unsigned blocks = gridDim.x;
    unsigned* am_last = reinterpret_cast<unsigned*>(dynamic_shared<unsigned char>() +
                                                    flag_offset(blockDim.x, sizeof(Acc)));

    // PHASE 1: this block's accumulator, written to its slot; then the ticket.
    Acc block_acc = block_reduce(mine, Acc(0), Add{});
    if (tid == 0) {
        partials[blockIdx.x] = block_acc;
        // The partial is visible to every block before the ticket that says it is.
        __threadfence();
        unsigned ticket = atomicInc(count, blocks);
        bool last = ticket == blocks - 1;
        // Acquire: every other block fenced its partial before its ticket.
        if (last) cuda::atomic_thread_fence(cuda::memory_order_acq_rel, cuda::thread_scope_device);
        *am_last = last;
    }
    __syncthreads();
    if (*am_last == 0) return;

    // PHASE 2: the last block. Every partial is visible (the acquire above, then the barrier).
    Acc acc = Acc(0);
    for (unsigned i = tid; i < blocks; i += blockDim.x) acc = acc + partials[i];
    Acc total = block_reduce(acc, Acc(0), Add{});
    if (tid == 0) {
        *result = total;
        cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*count).store(
            0, cuda::memory_order_relaxed);
    }
}

// vec_reduce, step (e)'s body: the scalar head and tail (Split16) one float at a time over
// grid_stride_each; the body VEC_UNROLL float4 per step (combine_strided); then
// finish_in_last_block. `x` holds `n` floats; the launch gives
// last_block_shared_bytes(blockDim.x, sizeof(Acc)). The closures copy `x` and `split`: captured
// by reference, they make nvcc schedule the kernel otherwise.
template <class R>
__device__ __forceinline__ void vec_reduce(const float* x, unsigned long long n,
                                           typename R::Acc* partials, unsigned* count,
                                           typename R::Acc* result) {
    using Acc = typename R::Acc;
    Split16<float> split(x, n);
    Acc acc = Acc(0);
    grid_stride_each(split.scalars(), [&acc, x, split](size_t k) {
        acc = R::combine(acc, R::lift(x[split.scalar_index(k)]));
    });
    auto load = [x, split](size_t v) { return split.load(x, v); };
    acc = combine_strided<R>(acc, load, global_id_x(), split.body, threads_per_grid_x());
    finish_in_last_block(acc, partials, count, result);
}

// ---- The Numba tutorial's tree (tree.rs) -----------------------------------------------------

// shared_tree: s[tid] += s[tid + offset] for offset = blockDim.x / 2, …, 1, a barrier after each
// round; returns s[0], the block's sum, in every thread. Indices are 64-bit, as the Rust's
// usize. Every thread has written its own slot and passed a barrier; blockDim.x is a power of
// two.
template <class T>
__device__ __forceinline__ T shared_tree(T* s) {
    size_t tid = threadIdx.x;
    size_t offset = blockDim.x >> 1;
    while (offset > 0) {
        if (tid < offset) {
            T mine = s[tid], other = s[tid + offset];
            s[tid] = mine + other;
        }
        __syncthreads();
        offset >>= 1;
    }
    return s[0];
}

// partial_reduce's body: a float64 sum per thread over a plain grid-stride `while` loop, stored
// as f32 in the thread's slot of blockDim.x floats of dynamic shared memory, a barrier, the
// tree; thread 0 writes the block's sum to partial_reduction[blockIdx.x].
__device__ __forceinline__ void partial_reduce_body(const float* array, unsigned long long size,
                                                    float* partial_reduction) {
    size_t i_start = global_id_x();
    size_t threads_per_grid = threads_per_grid_x();
    double s_thread = 0.0;
    size_t i_arr = i_start;
    while (i_arr < size) {
        s_thread += double(array[i_arr]);
        i_arr += threads_per_grid;
    }
    float* s_block = dynamic_shared<float>();
    size_t tid = threadIdx.x;
    s_block[tid] = float(s_thread);
    __syncthreads();
    float total = shared_tree(s_block);
    if (tid == 0) partial_reduction[blockIdx.x] = total;
}

// ---- host: the checks' bounds and references -------------------------------------------------

// Higham's γ_d for unit roundoff u: a sum whose every element passes through at most d roundings
// is within γ_d · Σ|x| of the exact one. Infinite (no bound) once d·u reaches 1.
inline double gamma_bound(double d, double u) {
    double du = d * u;
    return du < 1.0 ? du / (1.0 - du) : INFINITY;
}

// Neumaier's compensated float64 sum of x[..n] (within about 2·u64·Σ|x| of the exact one), and
// Σ|x|.
struct Reference {
    double sum, sum_abs;
};

inline Reference neumaier_sum(const float* x, size_t n) {
    double s = 0.0, c = 0.0, a = 0.0;
    for (size_t i = 0; i < n; ++i) {
        double v = x[i];
        double t = s + v;
        c += std::fabs(s) >= std::fabs(v) ? (s - t) + v : (v - t) + s;
        s = t;
        a += std::fabs(v);
    }
    return {s + c, a};
}

}  // namespace twin
