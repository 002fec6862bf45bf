//! What a kernel of yours may call: the building blocks every lesson is made of, grouped by the
//! level they work at. Each is written once for the GPU and the simulator, over the crate's
//! private seam (`src/seam/`), which alone touches `core::arch::nvptx` or inline PTX: one
//! wrapper per PTX instruction, and its simulator twin.
//!
//! | level | module | what |
//! |---|---|---|
//! | thread | [`index`] | ids (`threadIdx`, `blockIdx`, …), grid-stride ranges |
//! | thread | [`time`] | clocks, `nanosleep`, deadlines for bounded spins |
//! | thread | [`vector`] | 16-byte loads with an aligned head, body and tail |
//! | thread | [`readonly`] | loads through the read-only data cache (`__ldg`) |
//! | thread | [`global`] | plain loads and stores to memory known to be global (`ld.global`, `st.global`) |
//! | thread | [`access`] | plain and volatile loads and stores, one instruction each, where written |
//! | thread | [`mem`] | [`mem::Ptr`]: a typed pointer whose plain and volatile accesses the checker sees |
//! | memory model | [`atomic`] | every CUDA atomic, scope and ordering in the name or the type |
//! | memory model | [`sync`] | fences per scope, and `sync_threads`, the block barrier |
//! | warp | [`warp`] | lane id, active mask, vote, shuffles, warp barrier |
//! | block | [`shared`] | dynamic shared memory |
//! | block | [`mbarrier`] | split-phase barrier objects in shared memory, with transaction counts (sm_90) |
//! | block | [`async_copy`] | asynchronous copies: `cp.async` (sm_80), bulk copies completing on an `mbarrier` (sm_90) |
//! | block | [`pipeline`] | a ring of stages one thread fills with bulk copies while the block reads the others (sm_90) |
//! | block | [`shared_atomic`] | atomics addressed in the shared state space (`red.shared`) |
//! | block | [`block_reduce`] | warp and block sums (CUB's `WarpReduce` / `BlockReduce`) |
//! | block | [`block_scan`] | warp and block prefix sums (CUB's `WarpScan` / `BlockScan`) |
//! | cluster | [`cluster`] | thread block clusters: the cluster barrier, distributed shared memory (sm_90) |
//! | device | [`lock`] | the sources' spinlock, [`lock::Mutex`] and [`lock::TicketLock`] |
//! | grid | [`grid`] | [`grid::GridBarrier`]: every thread of the launch waits for all |
//! | node | [`multi_grid`] | [`multi_grid::MultiGridBarrier`]: the grids of several GPUs wait for each other (system scope) |
//!
//! Each is re-exported at the crate root: `gpu::atomic` is `gpu::primitives::atomic`.
//!
//! What needs sm_90 (Hopper) is compiled into the sm_90 PTX only — and always for the
//! simulator — behind `cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))`: a
//! kernel of yours that uses it goes behind the same `cfg`.

pub mod access;
pub mod async_copy;
pub mod atomic;
pub mod block_reduce;
pub mod block_scan;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod cluster;
pub mod global;
pub mod grid;
pub mod index;
pub mod lock;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod mbarrier;
pub mod mem;
pub mod multi_grid;
#[cfg(any(not(target_arch = "nvptx64"), target_feature = "sm_90"))]
pub mod pipeline;
pub mod readonly;
pub mod shared;
pub mod shared_atomic;
pub mod sync;
pub mod time;
pub mod vector;
pub mod warp;
