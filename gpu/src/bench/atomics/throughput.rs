//! The throughput kernels: one per operation, memory and scope.

use super::UNROLL;
use crate::atomic::{self, Order, Scope, StoreOrder};
use crate::index::{block_dim_x, block_idx_x, global_id_x, thread_idx_x};
use crate::shared::dynamic_shared;
use crate::sync::sync_threads;

/// Calls `op` `iters` times and sums the results with `plus`; `UNROLL` calls at a time, each
/// group summed only after all of its calls were issued.
#[inline(always)]
fn repeat<T: Copy>(iters: u32, zero: T, plus: impl Fn(T, T) -> T, mut op: impl FnMut() -> T) -> T {
    let mut acc = zero;
    for _ in 0..iters / UNROLL {
        // Evaluated left to right: four atomics issued back to back.
        let (a, b, c, d) = (op(), op(), op(), op());
        acc = plus(acc, plus(plus(a, b), plus(c, d)));
    }
    for _ in 0..iters % UNROLL {
        acc = plus(acc, op());
    }
    acc
}

/// One throughput operation: what it does to a word, and what it contributes to the sink.
trait BenchOp {
    /// The word's type.
    type Word: Copy;
    /// The word's starting value.
    const ZERO: Self::Word;
    /// Per-thread state (the CAS loop's guess).
    type State: Copy;
    /// The state's starting value.
    const START: Self::State;
    /// Applies the operation to `p` at `scope`; returns what goes into the sink.
    ///
    /// # Safety
    /// See the [atomic module docs](crate::atomic#safety).
    unsafe fn apply(p: *mut Self::Word, scope: Scope, state: &mut Self::State) -> u32;
}

/// `atomicAdd(p, 1)`: the sink sums the returned old values.
struct AddU32;
/// `atomicAdd(p, 1)` with the result unused: `red.add`. The sink counts the operations.
struct RedAddU32;
/// `atomicAdd(p, 1.0f)`: the sink sums the returned old values' bits.
struct AddF32;
/// `atomicCAS(p, guess, guess + 1)`, with `guess` the value the last attempt returned (or one
/// past it, after a success): an increment by CAS loop, each attempt counted. The sink counts
/// the successful attempts, so the words' sum must equal the sinks' sum.
struct CasU32;

impl BenchOp for AddU32 {
    type Word = u32;
    const ZERO: u32 = 0;
    type State = ();
    const START: () = ();
    #[inline(always)]
    unsafe fn apply(p: *mut u32, scope: Scope, _: &mut ()) -> u32 {
        // SAFETY: forwarded contract.
        unsafe { atomic::fetch_add(p, 1, scope, Order::Relaxed) }
    }
}

impl BenchOp for RedAddU32 {
    type Word = u32;
    const ZERO: u32 = 0;
    type State = ();
    const START: () = ();
    #[inline(always)]
    unsafe fn apply(p: *mut u32, scope: Scope, _: &mut ()) -> u32 {
        // SAFETY: forwarded contract.
        unsafe { atomic::red_add(p, 1, scope, StoreOrder::Relaxed) };
        1
    }
}

impl BenchOp for AddF32 {
    type Word = f32;
    const ZERO: f32 = 0.0;
    type State = ();
    const START: () = ();
    #[inline(always)]
    unsafe fn apply(p: *mut f32, scope: Scope, _: &mut ()) -> u32 {
        // SAFETY: forwarded contract.
        unsafe { atomic::fetch_add(p, 1.0, scope, Order::Relaxed).to_bits() }
    }
}

impl BenchOp for CasU32 {
    type Word = u32;
    const ZERO: u32 = 0;
    type State = u32;
    const START: u32 = 0;
    #[inline(always)]
    unsafe fn apply(p: *mut u32, scope: Scope, guess: &mut u32) -> u32 {
        let want = guess.wrapping_add(1);
        // SAFETY: forwarded contract.
        let seen = unsafe { atomic::compare_and_swap(p, *guess, want, scope, Order::Relaxed) };
        if seen == *guess {
            *guess = want;
            1
        } else {
            *guess = seen;
            0
        }
    }
}

/// The body of every global-memory throughput kernel.
///
/// # Safety
/// `threads_per_address ≥ 1` (else nothing happens); `words` has
/// `⌈threads / threads_per_address⌉` words, touched only atomically; `sink` one slot per thread.
#[inline(always)]
unsafe fn global_bench<O: BenchOp>(
    words: *mut O::Word,
    threads_per_address: u32,
    iters: u32,
    sink: *mut u32,
    scope: Scope,
) {
    if threads_per_address == 0 {
        return;
    }
    let t = global_id_x();
    let mut state = O::START;
    // SAFETY: the contract above.
    unsafe {
        let p = words.add(t / threads_per_address as usize);
        let acc = repeat(iters, 0u32, u32::wrapping_add, || {
            O::apply(p, scope, &mut state)
        });
        *sink.add(t) = acc;
    }
}

/// The body of every shared-memory throughput kernel: the block's words live in dynamic shared
/// memory, zeroed first and copied out to `out[block * words_per_block ..]` last.
///
/// # Safety
/// `threads_per_address ≥ 1` (else nothing happens); the launch gives
/// `⌈block_dim / threads_per_address⌉` words of dynamic shared memory per block; `out` has that
/// many words per block, `sink` one slot per thread.
#[inline(always)]
unsafe fn shared_bench<O: BenchOp>(
    out: *mut O::Word,
    threads_per_address: u32,
    iters: u32,
    sink: *mut u32,
) {
    if threads_per_address == 0 {
        return;
    }
    let tid = thread_idx_x() as usize;
    let words_per_block = block_dim_x().div_ceil(threads_per_address) as usize;
    let mut state = O::START;
    // SAFETY: the contract above; the barriers separate the plain zeroing and copying from the
    // atomics, and every thread of the block reaches both (no thread returns in between).
    unsafe {
        let s_words = dynamic_shared::<O::Word>();
        if tid < words_per_block {
            *s_words.add(tid) = O::ZERO;
        }
        sync_threads();
        let p = s_words.add(tid / threads_per_address as usize);
        let acc = repeat(iters, 0u32, u32::wrapping_add, || {
            O::apply(p, Scope::Block, &mut state)
        });
        sync_threads();
        if tid < words_per_block {
            *out.add(block_idx_x() as usize * words_per_block + tid) = *s_words.add(tid);
        }
        *sink.add(global_id_x()) = acc;
    }
}

/// Declares the four kernels of one operation: global memory at each scope, shared at block.
macro_rules! bench_kernels {
    ($($op:ident, $word:ty, $what:literal, $cuda:literal, $kind:literal, $insn:literal:
       $block:ident, $device:ident, $system:ident, $shared:ident;)*) => {$(
        kernel! {
            #[doc = concat!("Throughput of ", $what, " on global memory at **block** scope: each thread does `iters` of them on `words[t / threads_per_address]` and writes its sum to `sink[t]`.")]
            ///
            #[doc = concat!("CUDA: `", $cuda, "_block`. PTX: `", $kind, ".relaxed.cta.", $insn, "`. Block scope is only correct when one block alone touches each word: launch with `threads_per_address` ≤ the block size.")]
            pub unsafe fn $block(words: *mut $word, threads_per_address: u32, iters: u32, sink: *mut u32) {
                // SAFETY: the launch contract of `global_bench`.
                unsafe { global_bench::<$op>(words, threads_per_address, iters, sink, Scope::Block) }
            }
        }
        kernel! {
            #[doc = concat!("As the block-scope kernel, at **device** scope. CUDA: `", $cuda, "`. PTX: `", $kind, ".relaxed.gpu.", $insn, "`.")]
            pub unsafe fn $device(words: *mut $word, threads_per_address: u32, iters: u32, sink: *mut u32) {
                // SAFETY: the launch contract of `global_bench`.
                unsafe { global_bench::<$op>(words, threads_per_address, iters, sink, Scope::Device) }
            }
        }
        kernel! {
            #[doc = concat!("As the block-scope kernel, at **system** scope. CUDA: `", $cuda, "_system`. PTX: `", $kind, ".relaxed.sys.", $insn, "`.")]
            pub unsafe fn $system(words: *mut $word, threads_per_address: u32, iters: u32, sink: *mut u32) {
                // SAFETY: the launch contract of `global_bench`.
                unsafe { global_bench::<$op>(words, threads_per_address, iters, sink, Scope::System) }
            }
        }
        kernel! {
            #[doc = concat!("Throughput of ", $what, " on **shared** memory at block scope; the block's words are copied out to `out[block * words_per_block ..]` at the end.")]
            ///
            #[doc = concat!("CUDA: `", $cuda, "_block` on `__shared__` words. PTX: `", $kind, ".relaxed.cta.", $insn, "`. Launch with `⌈block_dim / threads_per_address⌉` words of dynamic shared memory.")]
            pub unsafe fn $shared(out: *mut $word, threads_per_address: u32, iters: u32, sink: *mut u32) {
                // SAFETY: the launch contract of `shared_bench`.
                unsafe { shared_bench::<$op>(out, threads_per_address, iters, sink) }
            }
        }
    )*};
}

bench_kernels! {
    AddU32, u32, "`u32` atomic add", "atomicAdd", "atom", "add.u32":
        atomic_bench_add_u32_global_block, atomic_bench_add_u32_global_device,
        atomic_bench_add_u32_global_system, atomic_bench_add_u32_shared_block;
    RedAddU32, u32, "`u32` reduction (add, no result)", "atomicAdd", "red", "add.u32":
        atomic_bench_red_add_u32_global_block, atomic_bench_red_add_u32_global_device,
        atomic_bench_red_add_u32_global_system, atomic_bench_red_add_u32_shared_block;
    AddF32, f32, "`f32` atomic add", "atomicAdd", "atom", "add.f32":
        atomic_bench_add_f32_global_block, atomic_bench_add_f32_global_device,
        atomic_bench_add_f32_global_system, atomic_bench_add_f32_shared_block;
    CasU32, u32, "`u32` compare-and-swap (an increment loop; every attempt counts)", "atomicCAS", "atom", "cas.b32":
        atomic_bench_cas_u32_global_block, atomic_bench_cas_u32_global_device,
        atomic_bench_cas_u32_global_system, atomic_bench_cas_u32_shared_block;
}
