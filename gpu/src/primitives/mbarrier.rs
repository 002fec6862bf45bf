//! `mbarrier`: a split-phase barrier object in shared memory (sm_90).
//!
//! [`sync_threads`](crate::sync::sync_threads) makes every thread of the block arrive and wait
//! in one instruction. An `mbarrier` splits the two: a thread **arrives** (and gets a token for
//! the phase it arrived at), goes on with work that does not need the others, and **waits** on
//! the token later — by then the phase has often completed and the wait costs nothing. It also
//! counts what a barrier instruction cannot: any number of expected arrivals (not only "the whole
//! block"), and a **transaction count** of bytes that asynchronous copies complete
//! ([`crate::async_copy`]), so a phase ends only when its data has landed.
//!
//! # The state machine
//!
//! An `mbarrier` is 8 bytes of shared memory, 8-byte aligned, set up by [`MBarrier::init`] with
//! the number of arrivals each phase expects. A phase completes when every expected arrival
//! has happened *and* the transaction count is back at zero; then the next phase begins, with
//! the same expected count. Phases alternate parity 0, 1, 0, … — which is all a waiter can tell
//! them apart by: waiting on the parity of a phase two phases ago looks like waiting on the
//! current one, and hangs (the lesson in `lessons::mbarrier` shows it, bounded).
//!
//! # Waiting by token or by parity
//!
//! A thread that arrives gets a [`Phase`] token and waits with [`MBarrier::wait`], which takes
//! the token by value: a token can be waited on once. A thread that waits without arriving (a
//! consumer waiting for a producer's data) keeps a [`Parity`] per barrier, starting at
//! [`Parity::FIRST`]; [`MBarrier::wait_parity`] waits for the phase of that parity and then
//! moves it to the next phase, so a loop over a ring of stages cannot wait on a stale phase.
//! Both waits are bounded: past the timeout they return [`WaitError::TimedOut`] instead of
//! hanging the GPU.
//!
//! CUDA: `cuda::barrier<thread_scope_block>` (`arrive`, `wait(token)`), `cuda::ptx::mbarrier_*`,
//! `__mbarrier_*`. PTX: `mbarrier.init`, `mbarrier.arrive`, `mbarrier.arrive_drop`,
//! `mbarrier.expect_tx`, `mbarrier.complete_tx`, `mbarrier.test_wait`, `mbarrier.try_wait`
//! (`.parity`), `fence.mbarrier_init`.
//!
//! # Safety, for every method
//!
//! - the `MBarrier` was made from an 8-byte-aligned word of this block's shared memory, inside
//!   what the launch gave, and nothing else uses those 8 bytes while it is a barrier (between
//!   `init` and `inval`);
//! - `init` happened before any other operation, and is visible to the thread (a
//!   `sync_threads` after it, or [`fence_mbarrier_init`] and a cluster barrier for other
//!   blocks of the cluster);
//! - no phase receives more arrivals than it expects (undefined on the GPU; the simulator
//!   panics).
//!
//! In the simulator the 8 bytes hold the same state in a layout of the simulator's own
//! (`sim::mbarrier`), updated by compare-and-swap.

use crate::seam::mbarrier::*;
use crate::seam::shared::SharedAddr;
use crate::seam::site::caller;
use crate::seam::spin;
use crate::time::globaltimer_ns;

/// How long [`MBarrier::wait`] and [`MBarrier::wait_parity`] wait when the kernel does not
/// say: far above any real phase (microseconds), below the simulator's 20 s deadlock limit.
pub const DEFAULT_TIMEOUT_NS: u64 = 1_000_000_000;

/// The most arrivals a phase may expect, and the largest transaction count: 2²⁰ − 1.
pub const MAX_COUNT: u32 = (1 << 20) - 1;

/// Who the arrival releases to and the wait acquires from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BarrierScope {
    /// The threads of this block (PTX `.cta`): the usual case.
    Block,
    /// The threads of this block's cluster (PTX `.cluster`): when threads of other blocks read
    /// what was written before the arrival, or wrote what is read after the wait.
    Cluster,
}

/// A wait that gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitError {
    /// The phase did not complete within the timeout: an arrival or a copy's bytes never came
    /// (a thread that exited without arriving, an `expect_tx` larger than what was copied, a
    /// wait on the wrong parity).
    TimedOut,
}

/// The token of one arrival: which phase it arrived at. Waited on once, by value.
///
/// PTX: the 64-bit state `mbarrier.arrive` returns.
#[derive(Debug, PartialEq, Eq)]
#[must_use = "an arrival's token is what the wait for its phase needs"]
pub struct Phase {
    state: u64,
}

/// The parity of the next phase a thread waits for without arriving; see
/// [`MBarrier::wait_parity`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parity(u32);

impl Parity {
    /// The parity of a barrier's first phase, just after `init`.
    pub const FIRST: Parity = Parity(0);

    /// The parity of the `n`-th phase after `init` (counting from 0): for a ring of stages,
    /// where a stage's `round`-th fill is its barrier's `round`-th phase.
    pub const fn of_phase(n: u32) -> Parity {
        Parity(n & 1)
    }

    /// The parity bit, 0 or 1 (what `try_wait.parity` takes).
    pub const fn bit(self) -> u32 {
        self.0
    }

    /// The parity of the phase after this one.
    #[must_use]
    pub const fn next(self) -> Parity {
        Parity(self.0 ^ 1)
    }
}

/// An `mbarrier` in this block's shared memory, addressed in the shared state space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MBarrier {
    addr: SharedAddr,
}

/// `asm!` with the scope chosen by a constant `BarrierScope`: one instruction after folding.
impl MBarrier {
    /// The barrier at `p`. PTX: `cvta.to.shared.u64`.
    ///
    /// # Safety
    /// `p` is an 8-byte-aligned word of this block's shared memory.
    #[inline(always)]
    pub unsafe fn from_generic(p: *mut u64) -> MBarrier {
        MBarrier {
            addr: crate::seam::shared::cvta_to_shared(p),
        }
    }

    /// The barrier's shared address (what the asynchronous copies name it by).
    #[inline(always)]
    pub(crate) fn addr(self) -> SharedAddr {
        self.addr
    }

    /// Sets the barrier up: phase 0, `count` arrivals expected per phase, no transactions.
    /// One thread initializes; the others may use it after a `sync_threads`.
    ///
    /// Scope: block (a plain write). CUDA: `init(&bar, count)`. PTX: `mbarrier.init.shared::cta.b64`.
    ///
    /// # Safety
    /// The module's contract; `1 <= count <= MAX_COUNT`; no thread uses the barrier meanwhile.
    #[inline(always)]
    pub unsafe fn init(self, count: u32) {
        // SAFETY: the caller upholds the contract above.
        unsafe { mbarrier_init(self.addr, count) };
    }

    /// Ends the barrier's life: its 8 bytes may be used for other data after it.
    ///
    /// PTX: `mbarrier.inval.shared::cta.b64`.
    ///
    /// # Safety
    /// The module's contract; no thread uses the barrier after it (until a new `init`).
    #[inline(always)]
    pub unsafe fn inval(self) {
        // SAFETY: the caller upholds the contract above.
        unsafe { mbarrier_inval(self.addr) };
    }

    /// One arrival: the calling thread's writes before it are released, at `scope`, to the
    /// threads that wait for this phase. Returns the phase's token.
    ///
    /// Scope: `scope`. Ordering: release. CUDA: `bar.arrive()`.
    /// PTX: `mbarrier.arrive.release.{cta,cluster}.shared::cta.b64`.
    ///
    /// # Safety
    /// The module's contract.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn arrive(self, scope: BarrierScope) -> Phase {
        // SAFETY: forwarded to the caller.
        unsafe { self.arrive_count(1, scope) }
    }

    /// `count` arrivals at once (a warp's leader arriving for its 32 lanes, say).
    ///
    /// Scope: `scope`. Ordering: release. CUDA: `bar.arrive(count)`.
    /// PTX: `mbarrier.arrive.release.{cta,cluster}.shared::cta.b64 state, [bar], count`.
    ///
    /// # Safety
    /// The module's contract; `1 <= count <= MAX_COUNT`.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn arrive_count(self, count: u32, scope: BarrierScope) -> Phase {
        // SAFETY: the caller upholds the contract above.
        let state = unsafe { mbarrier_arrive(self.addr, count, scope, caller()) };
        Phase { state }
    }

    /// Arrives and leaves: this phase gets the arrival, and every later phase expects one
    /// arrival fewer. For a thread that exits or stops taking part early.
    ///
    /// Scope: `scope`. Ordering: release. CUDA: `bar.arrive_and_drop()`.
    /// PTX: `mbarrier.arrive_drop.release.{cta,cluster}.shared::cta.b64`.
    ///
    /// # Safety
    /// The module's contract.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn arrive_drop(self, scope: BarrierScope) -> Phase {
        // SAFETY: the caller upholds the contract above.
        let state = unsafe { mbarrier_arrive_drop(self.addr, scope, caller()) };
        Phase { state }
    }

    /// Expects `bytes` more of asynchronous copies in the current phase, then arrives: the
    /// phase completes when its arrivals are in *and* the copies have delivered the bytes. What
    /// the thread that issues a bulk copy calls.
    ///
    /// Scope: `scope`. Ordering: release. CUDA: `cuda::device::barrier_arrive_tx(bar, 1, bytes)`.
    /// PTX: `mbarrier.arrive.expect_tx.release.{cta,cluster}.shared::cta.b64`.
    ///
    /// # Safety
    /// The module's contract; `bytes <= MAX_COUNT`, and exactly that many bytes of copies
    /// complete on this barrier in this phase (fewer: the phase never completes).
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn arrive_expect_tx(self, bytes: u32, scope: BarrierScope) -> Phase {
        // SAFETY: the caller upholds the contract above.
        let state = unsafe { mbarrier_arrive_expect_tx(self.addr, bytes, scope, caller()) };
        Phase { state }
    }

    /// Expects `bytes` more of asynchronous copies in the current phase, without arriving.
    ///
    /// Scope: block. Ordering: relaxed. CUDA: `cuda::device::barrier_expect_tx(bar, bytes)`.
    /// PTX: `mbarrier.expect_tx.relaxed.cta.shared::cta.b64`.
    ///
    /// # Safety
    /// As [`MBarrier::arrive_expect_tx`], and the phase has an arrival still pending.
    #[inline(always)]
    pub unsafe fn expect_tx(self, bytes: u32) {
        // SAFETY: the caller upholds the contract above.
        unsafe { mbarrier_expect_tx(self.addr, bytes) };
    }

    /// Counts `bytes` as delivered, as a finished copy would: for data a thread produced
    /// itself into a phase that expects bytes.
    ///
    /// Scope: block. Ordering: relaxed. PTX: `mbarrier.complete_tx.relaxed.cta.shared::cta.b64`.
    ///
    /// # Safety
    /// The module's contract; `bytes <= MAX_COUNT`.
    #[inline(always)]
    pub unsafe fn complete_tx(self, bytes: u32) {
        // SAFETY: the caller upholds the contract above.
        unsafe { mbarrier_complete_tx(self.addr, bytes) };
    }

    /// Whether the phase of `phase` has completed, without waiting; when it has, the writes
    /// released to it are visible.
    ///
    /// Scope: `scope`. Ordering: acquire when it returns true.
    /// PTX: `mbarrier.test_wait.acquire.{cta,cluster}.shared::cta.b64`.
    ///
    /// # Safety
    /// The module's contract; `phase` came from this barrier.
    #[inline(always)]
    pub unsafe fn test_wait(self, phase: &Phase, scope: BarrierScope) -> bool {
        // SAFETY: the caller upholds the contract above.
        unsafe { mbarrier_test_wait(self.addr, phase.state, scope) }
    }

    /// Whether the phase of parity `parity` (0 or 1) has completed, after the hardware has
    /// waited a while for it: the thin instruction under [`MBarrier::wait_parity`], for a
    /// kernel that tracks the parity itself.
    ///
    /// Scope: `scope`. Ordering: acquire when it returns true.
    /// PTX: `mbarrier.try_wait.parity.acquire.{cta,cluster}.shared::cta.b64`.
    ///
    /// # Safety
    /// The module's contract.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn try_wait_parity(self, parity: u32, scope: BarrierScope) -> bool {
        // SAFETY: the caller upholds the contract above.
        unsafe { mbarrier_try_wait_parity(self.addr, parity, scope, caller()) }
    }

    /// Waits, at most `timeout_ns`, for the phase of the token `phase` to complete; then what
    /// was released to it is visible.
    ///
    /// Scope: `scope`. Ordering: acquire. CUDA: `bar.wait(std::move(token))`.
    /// PTX: a loop of `mbarrier.try_wait.acquire.{cta,cluster}.shared::cta.b64` and
    /// `%globaltimer` reads.
    ///
    /// # Errors
    /// [`WaitError::TimedOut`] past `timeout_ns` ([`DEFAULT_TIMEOUT_NS`] is a good bound).
    ///
    /// # Safety
    /// The module's contract; `phase` came from this barrier.
    #[inline(always)]
    pub unsafe fn wait(
        self,
        phase: Phase,
        scope: BarrierScope,
        timeout_ns: u64,
    ) -> Result<(), WaitError> {
        // SAFETY: forwarded to the caller.
        bounded(timeout_ns, || unsafe { self.try_wait(&phase, scope) })
    }

    /// Waits, at most `timeout_ns`, for the phase of parity `parity` to complete, then moves
    /// `parity` to the next phase. For threads that wait without arriving: a consumer of a
    /// stage that a producer fills, each keeping one [`Parity`] per barrier from
    /// [`Parity::FIRST`].
    ///
    /// Scope: `scope`. Ordering: acquire. CUDA: `bar.wait_parity(parity)`.
    /// PTX: a loop of `mbarrier.try_wait.parity.acquire.{cta,cluster}.shared::cta.b64`.
    ///
    /// # Errors
    /// [`WaitError::TimedOut`] past `timeout_ns`; `parity` is then left as it was.
    ///
    /// # Safety
    /// The module's contract.
    #[inline(always)]
    pub unsafe fn wait_parity(
        self,
        parity: &mut Parity,
        scope: BarrierScope,
        timeout_ns: u64,
    ) -> Result<(), WaitError> {
        let bit = parity.bit();
        // SAFETY: forwarded to the caller. (The polls' line, for the checker, is this one: the
        // closure cannot pass the kernel's on, and taking it along changes the PTX.)
        bounded(timeout_ns, || unsafe { self.try_wait_parity(bit, scope) })?;
        *parity = parity.next();
        Ok(())
    }

    /// `mbarrier.try_wait` with a token.
    ///
    /// # Safety
    /// As [`MBarrier::test_wait`].
    #[inline(always)]
    unsafe fn try_wait(self, phase: &Phase, scope: BarrierScope) -> bool {
        // SAFETY: forwarded to the caller.
        unsafe { mbarrier_try_wait(self.addr, phase.state, scope) }
    }

    /// One arrival at the barrier at this barrier's offset in the shared memory of the block of
    /// rank `rank` of this cluster: how a consumer in one block tells a producer in another
    /// that a stage is free. No token: the arriving thread cannot wait on a remote barrier.
    ///
    /// Scope: cluster. Ordering: release.
    /// PTX: `mapa.shared::cluster.u32` + `mbarrier.arrive.release.cluster.shared::cluster.b64 _`.
    ///
    /// # Safety
    /// The module's contract for the sibling's barrier; `rank < cluster_block_count()`, and
    /// the sibling is running.
    #[inline(always)]
    #[cfg_attr(not(target_arch = "nvptx64"), track_caller)]
    pub unsafe fn arrive_remote(self, rank: u32) {
        // SAFETY: the caller upholds the contract above.
        unsafe { mbarrier_arrive_shared_cluster(self.addr, rank, caller()) };
    }
}

/// Polls `done` until it says so or `timeout_ns` have passed on the global timer.
#[inline(always)]
fn bounded(timeout_ns: u64, mut done: impl FnMut() -> bool) -> Result<(), WaitError> {
    if done() {
        return Ok(());
    }
    let timeout_ns = spin::stretch_bound(timeout_ns);
    let start = globaltimer_ns();
    let mut backoff = spin::Backoff::new();
    loop {
        if done() {
            return Ok(());
        }
        if globaltimer_ns().wrapping_sub(start) > timeout_ns {
            return Err(WaitError::TimedOut);
        }
        backoff.after_poll();
    }
}

/// Makes this thread's `mbarrier` initializations visible to the other blocks of the cluster
/// and to the asynchronous proxy (the copy engine) before a cluster barrier: the barrier's
/// own release does not cover them.
///
/// Scope: cluster. Ordering: release. CUDA: `cuda::ptx::fence_mbarrier_init`.
/// PTX: `fence.mbarrier_init.release.cluster`.
///
/// Needed only when a barrier is used from other blocks (a remote arrival, a multicast copy);
/// within one block `sync_threads` after `init` is enough.
#[inline(always)]
pub fn fence_mbarrier_init() {
    crate::seam::sync::fence_mbarrier_init_release_cluster()
}
