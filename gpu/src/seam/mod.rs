//! The seam: the one place where the device crate chooses between the GPU and the simulator.
//!
//! Each primitive is written twice, once per target, and nowhere else:
//!
//! - `ptx` (built for `nvptx64`): one `#[inline(always)]` function per PTX instruction
//!   form, named after it (`mbarrier_try_wait_parity`, `cp_async_ca_shared_global_4`,
//!   `shfl_sync_idx_b32`, `fence_acq_rel_gpu`, …), whose body is the `asm!` block (or the
//!   `core::arch::nvptx` intrinsic, or the raw access) and nothing more, as CCCL's
//!   `cuda::ptx` has them. `#[inline(always)]` is what keeps the PTX of every kernel what it
//!   was when the `asm!` stood in the primitive itself;
//! - `sim` (built for the host): its twin, with the same name and signature, which runs the
//!   operation on the CPU simulator ([`crate::sim`]): it reports the access, fence or barrier
//!   to the checker, sends it to the weak memory in a weak launch, and otherwise does it on the
//!   host. Every twin that reports to the checker is `#[track_caller]`, as is the typed layer
//!   above it on the host, so a finding names the kernel's line.
//!
//! This module selects one of the two by `target_arch`; the typed layer
//! ([`primitives`](crate::primitives): [`atomic`](crate::atomic), [`mem::Ptr`](crate::mem::Ptr),
//! `MBarrier`, `cp_async_*`, …) calls `crate::seam::<topic>::<instruction>` and is written once,
//! with no target `cfg` in its bodies. What is left there is availability (items that need
//! sm_80 or sm_90 are gated on `target_feature`) and `#[cfg_attr(not(target_arch = "nvptx64"),
//! track_caller)]`, which must not reach the device (it would put `Location` constants into the
//! PTX).
//!
//! The topics, the same on both sides:
//!
//! | topic | what |
//! |---|---|
//! | `sreg` | special registers: thread, block, grid and cluster ids, `%laneid`, `%smid`, clocks |
//! | `spin` | `nanosleep`, and the poll loop's hooks |
//! | `sync` | `bar.sync`, `bar.red.or`, `membar`, `fence` per scope, proxy and `mbarrier_init` fences |
//! | `warp` | `activemask`, `bar.warp.sync`, `vote.sync.ballot`, `shfl.sync` |
//! | `atomic` | `atom`, `red`, `ld.relaxed/.acquire`, `st.relaxed/.release`, per type, scope and ordering |
//! | `access` | 32-bit plain and volatile `ld`/`st`, one instruction each where written |
//! | `mem` | the typed pointer's accesses: the compiler's own loads and stores of any `T` |
//! | `readonly` | `ld.global.nc` |
//! | `shared` | dynamic shared memory, the shared window's addresses (`cvta.to.shared`), `red.shared` |
//! | `mbarrier` | `mbarrier.*` (sm_90) |
//! | `async_copy` | `cp.async` (sm_80), `cp.async.bulk` (sm_90) |
//! | `cluster` | `barrier.cluster`, `mapa`, distributed shared memory accesses (sm_90) |
//! | `site` | the kernel's line an operation was made at: nothing on the GPU, `Location` on the simulator |
//!
//! Beside the instructions, the few things that differ by target without being one: the
//! shared address (`shared::SharedAddr`: the 32-bit shared window on the GPU, the host
//! pointer in the simulator), the hooks of a bounded poll loop (`spin::stretch_bound`,
//! `spin::between_polls`, `spin::Backoff`: nothing on the GPU; on the simulator a longer bound
//! and yields or sleeps, since its OS threads must leave each other the cores) and
//! `warp::converged_mask` (the active mask on the GPU; the thread alone on the simulator, whose
//! warp operations need every live lane).
//!
//! The seam is `pub(crate)`: the typed layer is the API. A wrapper's contract is the typed
//! layer's, and its twin is only as faithful as the simulator's model of the instruction; a
//! public instruction-per-function layer would be a second API to document and keep working
//! on both targets.
//!
//! Raw `*p` on device memory lives only here.

#[cfg(target_arch = "nvptx64")]
mod ptx;
#[cfg(target_arch = "nvptx64")]
pub(crate) use ptx::*;

#[cfg(not(target_arch = "nvptx64"))]
mod sim;
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) use sim::*;
