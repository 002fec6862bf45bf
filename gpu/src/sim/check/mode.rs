//! Check mode: the simulator's launches followed by a [`Checker`], and the primitives' side of
//! it — where each simulated thread reports what it does.
//!
//! [`checked`] switches it on for the launches the calling host thread makes, as
//! [`weak::scoped`](crate::sim::weak::scoped) switches on the weak memory. Each such launch
//! gets one [`LaunchCheck`](super::LaunchCheck), each of its threads one
//! [`ThreadCheck`], kept in a thread-local of the simulated thread from its start to its end.
//! The primitives' simulator side reports through the functions here. While no checked launch
//! runs anywhere in the process, each is one relaxed load of a counter ([`RUNNING`]) and a
//! branch; inside one, the thread-local decides.

use super::{
    AccessKind, Bytes, Checker, FindingKind, LaunchCheck, Options, Report, Space, SyncId, SyncKind,
    ThreadCheck, ThreadId, ThreadScope,
};
use crate::LaunchConfig;
use crate::atomic::Order;
use crate::sim::SimError;
use crate::sim::weak::FenceKind;
use core::panic::Location;
use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Simulated threads of checked launches running now, in the whole process: while it is 0 a
/// report costs one load of it. A thread of a checked launch counts itself before its kernel
/// starts, so it always sees it non-zero; a thread of a plain launch that sees it non-zero
/// (another test's launch is checked) asks its thread-local and finds nothing there.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// Whether a checked launch may be running on this thread (then the thread-local says).
#[inline(always)]
fn maybe_checked() -> bool {
    RUNNING.load(Ordering::Relaxed) != 0
}

/// Whether the calling simulated thread runs in a checked launch: where every access costs the
/// checker's time, a kernel bounds its polls by count lower (a plain spin that may never end).
pub fn in_checked_launch() -> bool {
    maybe_checked() && THREAD.with(|t| t.try_borrow().is_ok_and(|c| c.is_some()))
}

/// What a simulated thread of a checked launch holds.
struct Current {
    check: ThreadCheck,
    /// Block barriers passed: the phase of the next one.
    barriers: u64,
    /// Meetings of the warp's lanes (every warp operation is one): the phase of the next.
    warp_meetings: u64,
    /// Cluster barrier phases waited for: the phase of the next arrival.
    cluster_phases: u64,
}

thread_local! {
    /// The checker of the launches this host thread makes, inside [`checked`].
    static SCOPE: RefCell<Option<Checker>> = const { RefCell::new(None) };
    /// This simulated thread's side of the checker, in a checked launch.
    static THREAD: RefCell<Option<Current>> = const { RefCell::new(None) };
}

/// Runs `f` with every simulator launch it makes on this thread followed by a checker with
/// `options`; returns `f`'s result and the checker's report of those launches. Launches from
/// other threads, and GPU launches, are not affected; a weak launch
/// ([`weak::scoped`](crate::sim::weak::scoped)) inside it is refused for now.
///
/// ```
/// use gpu::sim::check::{Options, checked};
/// let ((), report) = checked(Options::default(), || { /* gridsync calls on Target::Sim */ });
/// assert!(report.is_clean());
/// ```
pub fn checked<R>(options: Options, f: impl FnOnce() -> R) -> (R, Report) {
    /// Puts the thread's previous checker back, also if `f` panics.
    struct Restore(Option<Checker>);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPE.set(self.0.take());
        }
    }
    let checker = Checker::new(options);
    let restore = Restore(SCOPE.replace(Some(checker.clone())));
    let r = f();
    drop(restore);
    (r, checker.report())
}

/// The check of the next launch on this thread, if it is inside [`checked`].
pub(crate) fn next_launch(cfg: &LaunchConfig) -> Result<Option<LaunchCheck>, SimError> {
    let Some(checker) = SCOPE.with_borrow(Clone::clone) else {
        return Ok(None);
    };
    checker.launch(super::Shape::from_config(cfg)?).map(Some)
}

/// Starts the calling simulated thread's side of `launch`, as thread `id`.
pub(crate) fn enter(launch: &LaunchCheck, id: ThreadId) {
    if let Ok(check) = launch.thread(id) {
        RUNNING.fetch_add(1, Ordering::Relaxed);
        THREAD.set(Some(Current {
            check,
            barriers: 0,
            warp_meetings: 0,
            cluster_phases: 0,
        }));
    }
}

/// Ends the calling simulated thread's side (its totals go to the launch's).
pub(crate) fn leave() {
    if THREAD.take().is_some() {
        RUNNING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Runs `f` on the calling thread's side, in a checked launch.
#[inline(always)]
fn with<R>(f: impl FnOnce(&mut Current) -> R) -> Option<R> {
    if !maybe_checked() {
        return None;
    }
    THREAD.with(|t| {
        let mut t = t.try_borrow_mut().ok()?;
        t.as_mut().map(f)
    })
}

/// The `width` bytes at `addr`, in the space the simulator put them in: a block's shared
/// memory, or else global memory (host memory the test or the host library allocated).
fn bytes(addr: usize, width: u32) -> Bytes {
    let space = if crate::sim::context::in_shared(addr) {
        Space::Shared
    } else {
        Space::Global
    };
    Bytes { addr, width, space }
}

/// A plain (`Plain`) or volatile (`Volatile`) load or store of `width` bytes at `addr`, made
/// where the caller was called.
#[track_caller]
#[inline(always)]
pub(crate) fn access(kind: AccessKind, addr: usize, width: u32, volatile: bool) {
    let site = Location::caller();
    with(|c| {
        let mode = if volatile {
            super::Mode::Volatile
        } else {
            super::Mode::Plain
        };
        c.check.access(kind, bytes(addr, width), mode, site)
    });
}

/// An atomic access of `width` bytes at `addr`: `op` performs it, under the checker's lock of
/// the location in a checked launch.
#[track_caller]
#[inline(always)]
pub(crate) fn atomic<R>(
    kind: AccessKind,
    addr: usize,
    width: u32,
    order: Order,
    scope: impl Into<ThreadScope>,
    op: impl FnOnce() -> R,
) -> R {
    if !maybe_checked() {
        return op();
    }
    // In a weak launch the operation runs under the checker's lock: the token stays here
    // until that lock is released.
    let _hold = crate::sim::context::HoldToken::new();
    let site = Location::caller();
    THREAD.with(|t| match t.try_borrow_mut().as_deref_mut() {
        Ok(Some(c)) => c
            .check
            .atomic(kind, bytes(addr, width), order, scope.into(), site, op),
        _ => op(),
    })
}

/// A compare-and-swap of `width` bytes at `addr`: `op` performs it and says whether it swapped
/// (one that did not is reported as a load).
#[track_caller]
#[inline(always)]
pub(crate) fn compare_and_swap<R>(
    addr: usize,
    width: u32,
    order: Order,
    scope: impl Into<ThreadScope>,
    op: impl FnOnce() -> (R, bool),
) -> R {
    if !maybe_checked() {
        return op().0;
    }
    // In a weak launch the operation runs under the checker's lock: the token stays here
    // until that lock is released.
    let _hold = crate::sim::context::HoldToken::new();
    let site = Location::caller();
    THREAD.with(|t| match t.try_borrow_mut().as_deref_mut() {
        Ok(Some(c)) => c
            .check
            .compare_and_swap(bytes(addr, width), order, scope.into(), site, op),
        _ => op().0,
    })
}

/// A fence of `kind` at `scope`.
#[inline]
pub(crate) fn fence(kind: FenceKind, scope: impl Into<ThreadScope>) {
    with(|c| c.check.fence(kind, scope.into()));
}

/// Before the block barrier: the thread arrives at its next phase.
#[inline]
#[track_caller]
pub(crate) fn barrier_arrive() {
    let site = Location::caller();
    with(|c| {
        c.check.block_barrier_site(c.barriers, site);
        let sync = block_barrier(c.check.id());
        c.check.arrive(sync, c.barriers, ThreadScope::Block);
    });
}

/// After the block barrier: the thread acquires what its phase's arrivals released.
#[inline]
pub(crate) fn barrier_leave() {
    with(|c| {
        let sync = block_barrier(c.check.id());
        c.check.wait(sync, c.barriers, ThreadScope::Block);
        c.barriers += 1;
    });
}

fn block_barrier(id: ThreadId) -> SyncId {
    SyncId {
        kind: SyncKind::BlockBarrier,
        index: u64::from(id.device) << 32 | u64::from(id.block),
    }
}

fn warp(id: ThreadId) -> SyncId {
    SyncId {
        kind: SyncKind::Warp,
        index: (u64::from(id.device) << 32 | u64::from(id.block)) << 5 | u64::from(id.thread / 32),
    }
}

/// Before a warp meeting that synchronizes (`__syncwarp`): the lane arrives at it.
#[inline]
pub(crate) fn warp_arrive() {
    with(|c| {
        let sync = warp(c.check.id());
        c.check.arrive(sync, c.warp_meetings, ThreadScope::Block);
    });
}

/// After a warp meeting: a synchronizing one (`synchronizes`) acquires what its lanes
/// released; every one counts, since every running lane of the warp takes part in each.
#[inline]
pub(crate) fn warp_met(synchronizes: bool) {
    with(|c| {
        if synchronizes {
            let sync = warp(c.check.id());
            c.check.wait(sync, c.warp_meetings, ThreadScope::Block);
        }
        c.warp_meetings += 1;
    });
}

fn cluster_barrier(cluster: u32) -> SyncId {
    SyncId {
        kind: SyncKind::ClusterBarrier,
        index: u64::from(cluster),
    }
}

/// Before `barrier.cluster.arrive` of a thread of cluster `cluster`: a release arrival
/// (`release`) releases at cluster scope; a relaxed one is not reported.
#[inline]
pub(crate) fn cluster_arrive(cluster: u32, release: bool) {
    with(|c| {
        if release {
            let phase = c.cluster_phases;
            c.check
                .arrive(cluster_barrier(cluster), phase, ThreadScope::Cluster);
        }
    });
}

/// After `barrier.cluster.wait.acquire` returned: the thread acquires what its phase's
/// release arrivals released.
#[inline]
pub(crate) fn cluster_waited(cluster: u32) {
    with(|c| {
        let phase = c.cluster_phases;
        c.check
            .wait(cluster_barrier(cluster), phase, ThreadScope::Cluster);
        c.cluster_phases += 1;
    });
}

/// What an update of an `mbarrier`'s word is, for the checker.
pub(crate) enum MBarrierUpdate {
    /// `mbarrier.init`: the count of phases starts again.
    Init,
    /// An arrival (releasing at this scope), with or without a transaction count.
    Arrive(ThreadScope),
    /// `expect_tx` or `complete_tx`: nothing released.
    Transact,
    /// A bulk copy's bytes completing: its write of these bytes, made at this site, is released
    /// to the phase.
    BulkWrite(Bytes, &'static Location<'static>),
}

fn mbarrier(addr: usize) -> SyncId {
    SyncId {
        kind: SyncKind::MBarrier,
        index: addr as u64,
    }
}

/// One update of the `mbarrier` word at `addr`: `op` makes it and returns the parity bits of
/// the word before and after. In a checked launch it runs under the launch's lock of phase
/// counts, after its arrival (or bulk write) is reported at the phase it lands in; a flip of
/// the parity counts one phase completed.
pub(crate) fn mbarrier_update(
    addr: usize,
    update: MBarrierUpdate,
    op: impl FnOnce() -> (bool, bool),
) -> (bool, bool) {
    if !maybe_checked() {
        return op();
    }
    // In a weak launch the operation runs under the checker's lock: the token stays here
    // until that lock is released.
    let _hold = crate::sim::context::HoldToken::new();
    THREAD.with(|t| match t.try_borrow_mut().as_deref_mut() {
        Ok(Some(c)) => c.check.with_mbarrier_phases(addr, |check, done| {
            match update {
                MBarrierUpdate::Arrive(scope) => check.arrive(mbarrier(addr), *done, scope),
                // The copy's bytes reach whoever waits on the phase: a sibling block's
                // threads too, for a copy into distributed shared memory.
                MBarrierUpdate::BulkWrite(at, site) => {
                    check.bulk_write(at, site, mbarrier(addr), *done, ThreadScope::Cluster)
                }
                MBarrierUpdate::Init | MBarrierUpdate::Transact => {}
            }
            let (before, after) = op();
            if let MBarrierUpdate::Init = update {
                // A new barrier starts at parity 0, but its phases are numbered on past the old
                // one's current phase (to an even number): a phase, and what was released to
                // it, is never two barriers'.
                *done = (*done + 2) & !1;
            } else if before != after {
                *done += 1;
            }
            (before, after)
        }),
        _ => op(),
    })
}

/// A test of whether the phase of parity `parity` of the `mbarrier` at `addr` completed: `op`
/// reads the word. One that says so acquires, at `scope`, what the phase's arrivals released:
/// the phase is the latest completed one of that parity (a waiter is at most one phase behind,
/// as the hardware's parity assumes). `by_parity`: the line of a wait by parity, whose
/// completion on a phase its thread had already waited for is a [`FindingKind::StaleParity`].
pub(crate) fn mbarrier_test(
    addr: usize,
    parity: bool,
    scope: impl Into<ThreadScope>,
    by_parity: Option<&'static Location<'static>>,
    op: impl FnOnce() -> bool,
) -> bool {
    if !maybe_checked() {
        return op();
    }
    // In a weak launch the operation runs under the checker's lock: the token stays here
    // until that lock is released.
    let _hold = crate::sim::context::HoldToken::new();
    THREAD.with(|t| match t.try_borrow_mut().as_deref_mut() {
        Ok(Some(c)) => c.check.with_mbarrier_phases(addr, |check, done| {
            let complete = op();
            // Phase k has parity k mod 2; the latest completed one of `parity` is below `done`.
            let latest = done.checked_sub(1).and_then(|k| {
                if (k % 2 == 1) == parity {
                    Some(k)
                } else {
                    k.checked_sub(1)
                }
            });
            if complete && let Some(k) = latest {
                check.wait(mbarrier(addr), k, scope.into());
                if let Some(site) = by_parity {
                    check.parity_waited(addr, k, site);
                }
            }
            complete
        }),
        _ => op(),
    })
}

/// A load or store of `width` bytes at `addr` that names global memory (`ld.global`,
/// `st.global`, `ld.global.nc`), made where the caller was called: in a checked launch, a
/// [`FindingKind::WrongSpace`] where `addr` is in a block's shared memory. The access itself is
/// reported on its own ([`access`]).
#[track_caller]
#[inline(always)]
pub(crate) fn claimed_global(kind: AccessKind, addr: usize, width: u32) {
    let site = Location::caller();
    with(|c| c.check.claimed_global(kind, bytes(addr, width), site));
}

/// A misuse of the `mbarrier` at `addr` at `site` that the simulator saw ([`FindingKind`]
/// `ArrivalBeyondCount`), reported in a checked launch.
pub(crate) fn mbarrier_misuse(kind: FindingKind, addr: usize, site: &'static Location<'static>) {
    with(|c| c.check.misuse(kind, addr, site));
}
