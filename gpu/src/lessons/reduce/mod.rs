//! Full reductions — a sum, a minimum, a maximum of a whole array — from the sources' kernels to
//! a single pass at the memory-bandwidth roofline that gives the same bits on every run.
//!
//! Sources: the Numba tutorial, part 3 (`partial_reduce`: a tree in shared memory, partial sums
//! finished elsewhere) and the CUDA book, section 9.1 (the same tree finished on the GPU with one
//! `atomicAdd` per block; `N = 1e8` floats all `1.23`, blocks of 128, the result zeroed by a
//! wrapper before the launch).
//!
//! | kernel | what changed | why |
//! |---|---|---|
//! | (a) [`partial_reduce`] | Numba's: grid-stride sum per thread (`f64`), tree in shared memory, one partial per block; the host adds the partials | the source |
//! | (b) [`reduce_atomic`], [`reduce_atomic_f64`] | the book's: one element per thread, tree per block of 128, `atomicAdd(d_y, s_y[0])` (`*d_y` zeroed by the host) | the whole sum on the GPU — but 781 250 float atomics on one address at 10⁸, in a varying order; `f32` loses 5·10⁻³ |
//! | (c) [`reduce_warp`] | a grid-stride loop over one wave of blocks; warp shuffles + one barrier instead of the tree | about a thousand atomics for any `N`; memory-bound |
//! | (d) [`reduce_last_block_sum_f32`] (and `_in_f64`, `_kahan`) | no float atomics: each block writes its partial, `threadfence`, takes a ticket (`atomicInc`); the last block adds the partials and resets the counter | one pass, and a result that depends on the launch shape only: bit-identical across runs |
//! | (e) [`reduce_vec_sum_f32`] and the other `reduce_vec_*` | (d) with 16-byte loads, four in flight per thread, each step's vectors added as a tree | fewer instructions and more bytes in flight per thread: the copy roofline; 16× shorter rounding chains |
//! | (f) [`reduce_pipeline_sum_f32`] (and `_in_f64`, `_kahan`; sm_90) | (e)'s adding, fed by one producer thread per block whose bulk copies fill a ring of shared-memory stages (full and empty `mbarrier`s) | the copy engine holds the bytes in flight; the adding warps never wait on a load they issued |
//!
//! (e) exists for every [`Reduction`] the library exposes: Σ of `f32` (in `f32`, in `f64`, or
//! Neumaier-compensated), of `f64`, of `i32` and `u64` (wrapping), and min/max of `f32` (NaNs
//! skipped) and `i32`. The host's `gridsync::reduce::sum` and friends use it.
//!
//! Launch shapes: (a) the source's `[32 * 40, 256]` (fewer blocks if the input needs fewer);
//! (b) the book's `(N + 127) / 128` blocks of [`BOOK_BLOCK_SIZE`]; (c)–(e) one full wave of
//! blocks of [`THREADS_PER_BLOCK`] from the occupancy calculator. Every kernel's doc says how much
//! dynamic shared memory it needs.

pub mod last_block;
pub mod ops;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod pipeline;
pub mod tree;
pub mod vec;
pub mod warp;

pub use last_block::*;
pub use ops::*;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub use pipeline::*;
pub use tree::*;
pub use vec::*;
pub use warp::*;

/// The CUDA book's `BLOCK_SIZE`: threads per block of [`reduce_atomic`], a power of two for its
/// tree.
pub const BOOK_BLOCK_SIZE: u32 = 128;
/// The Numba tutorial's `threads_per_block` for [`partial_reduce`] (a power of two).
pub const NUMBA_THREADS_PER_BLOCK: u32 = 256;
/// The Numba tutorial's `blocks_per_grid = 32 * 40` for [`partial_reduce`].
pub const NUMBA_BLOCKS_PER_GRID: u32 = 32 * 40;
/// Threads per block of (c)–(e): eight warps — no partial warps, eight blocks fill an SM of
/// 2048 threads, and the last block has 256 threads to read the partials of a wave of ~1000.
pub const THREADS_PER_BLOCK: u32 = 256;
