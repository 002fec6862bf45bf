//! One simulated thread's side of the checker: its clock, and every event it reports.
//!
//! The clock and what the thread's fences and relaxed reads have left pending are the thread's
//! own (`&mut self`): no other thread reads them, so no lock guards them. What threads share —
//! the shadow memory, the releases kept at locations and barrier phases, the order of
//! `fence.sc`s — is reached under the lock of its shard, one lock at a time.

use super::LaunchState;
use super::access::{Access, AccessKind, Bytes, FindingKind, Mode, Space};
use super::clock::{Meter, StopReason, SyncClock, VectorClock};
use super::shadow::{Cell, Record, Rules, granules};
use super::shape::{ThreadId, ThreadScope};
use super::sync::{Pending, SyncId};
use crate::atomic::Order;
use crate::sim::weak::FenceKind;
use core::panic::Location;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

/// The checker's view of one thread of a launch: made by
/// [`LaunchCheck::thread`](super::LaunchCheck::thread), used by that thread alone.
///
/// Each method reports one event; a thread's events must be reported in its program order, and
/// an event that synchronizes must be reported on the right side of what it synchronizes with:
/// an atomic through [`ThreadCheck::atomic`], which performs it; an arrival before the thread
/// arrives at the real barrier, a wait after its real wait returns.
pub struct ThreadCheck {
    launch: Arc<LaunchState>,
    me: Me,
}

/// What is the thread's own.
struct Me {
    id: ThreadId,
    slot: u32,
    clock: VectorClock,
    /// For each scope (by its number), the clock at the thread's last release fence of that
    /// scope or a wider one: what a later relaxed store releases at that scope.
    fenced: [Option<Arc<SyncClock>>; 4],
    /// What relaxed reads met, for the next acquire fence.
    pending: Pending,
    /// Per `mbarrier` (its address), the last phase a wait by parity saw complete, and where.
    waited: HashMap<usize, (u64, &'static Location<'static>)>,
    events: u64,
    forgotten: u64,
    unchecked: u64,
}

impl Me {
    /// Counts an event; whether to check it (not once checking has stopped).
    fn begin(&mut self, meter: &Meter) -> bool {
        self.events += 1;
        if meter.stopped() {
            self.unchecked += 1;
            return false;
        }
        true
    }

    /// Advances the thread's own epoch after a release.
    fn tick(&mut self, meter: &Meter) {
        if self.clock.tick(self.slot).is_none() {
            meter.stop(StopReason::ClockOverflow);
        }
    }

    /// The record of an access of this thread, for the granule bytes `check` will give it.
    fn record(
        &self,
        kind: AccessKind,
        bytes: Bytes,
        mode: Mode,
        site: &'static Location<'static>,
    ) -> Record {
        Record {
            slot: self.slot,
            clock: self.clock.get(self.slot),
            mask: 0,
            kind,
            mode,
            bytes,
            site,
        }
    }
}

/// Checks and records `access` of `me` on granule `g` (its bytes `mask` there), then runs
/// `then` under the same lock.
fn check<R>(
    launch: &LaunchState,
    me: &mut Me,
    g: (usize, u8),
    access: &Record,
    then: impl FnOnce(&mut Me, &mut Cell) -> R,
) -> R {
    check_after(launch, me, g, access, |_| (), |me, cell, ()| then(me, cell))
}

/// [`check`], with `first` run under the granule's lock before the access is checked: it may
/// settle what the access was (a compare-and-swap that failed read and wrote nothing).
fn check_after<X, R>(
    launch: &LaunchState,
    me: &mut Me,
    (g, mask): (usize, u8),
    access: &Record,
    first: impl FnOnce(&mut Record) -> X,
    then: impl FnOnce(&mut Me, &mut Cell, X) -> R,
) -> R {
    let mut new = Record { mask, ..*access };
    let rules = Rules {
        shape: &launch.shape,
        volatile: launch.options.volatile,
        cap: launch.options.records_per_granule.max(1),
    };
    let shown = |r: &Record| Access {
        thread: launch.shape.thread_of(r.slot),
        site: r.site,
        kind: r.kind,
        bytes: r.bytes,
        mode: r.mode,
    };
    launch.shadow.with_cell(g, &launch.meter, |cell| {
        let x = first(&mut new);
        let second = shown(&new);
        let mut race = |r: &Record, k: FindingKind| launch.findings.race(k, shown(r), second);
        let (forgotten, grown) = cell.access(&new, &me.clock, &rules, &mut race);
        me.forgotten += forgotten;
        launch.meter.shadow(grown);
        then(me, cell, x)
    })
}

impl ThreadCheck {
    pub(super) fn new(launch: Arc<LaunchState>, id: ThreadId, slot: u32) -> ThreadCheck {
        ThreadCheck {
            launch,
            me: Me {
                id,
                slot,
                clock: VectorClock::start(slot),
                fenced: Default::default(),
                pending: Pending::default(),
                waited: HashMap::new(),
                events: 0,
                forgotten: 0,
                unchecked: 0,
            },
        }
    }

    /// The thread.
    pub fn id(&self) -> ThreadId {
        self.me.id
    }

    /// Runs `f` with the count of completed phases of the `mbarrier` at `addr`, under the
    /// launch's lock of those counts: the simulator updates the barrier's word inside `f`, so
    /// that the count and the word move together and every thread numbers a phase alike.
    pub(crate) fn with_mbarrier_phases<R>(
        &mut self,
        addr: usize,
        f: impl FnOnce(&mut ThreadCheck, &mut u64) -> R,
    ) -> R {
        let launch = Arc::clone(&self.launch);
        let mut phases = launch
            .mbarrier_phases
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f(self, phases.entry(addr).or_insert(0))
    }

    /// A load, store or read-modify-write of `at` made with `mode`, at `site`.
    ///
    /// An atomic reported here synchronizes as [`ThreadCheck::atomic`] does, but the memory
    /// operation itself is not made under the checker's lock; report real atomics through
    /// [`ThreadCheck::atomic`].
    pub fn access(
        &mut self,
        kind: AccessKind,
        at: Bytes,
        mode: Mode,
        site: &'static Location<'static>,
    ) {
        if let Mode::Atomic { order, scope } = mode {
            return self.atomic(kind, at, order, scope, site, || ());
        }
        self.bounds(kind, at, mode, site);
        let (launch, me) = (&*self.launch, &mut self.me);
        if me.begin(&launch.meter) && at.width > 0 {
            let access = me.record(kind, at, mode, site);
            for g in granules(at) {
                check(launch, me, g, &access, |_, _| {});
            }
        }
    }

    /// An atomic load, store or read-modify-write of `at`, with `order` at `scope`, at `site`:
    /// checks it, runs `op` (the memory operation itself) under the lock of `at`'s shadow, and
    /// synchronizes — acquires from the releases kept at `at`, releases into them — so that what
    /// the checker sees of the location is in the order its memory went through. `op` must not
    /// block.
    pub fn atomic<R>(
        &mut self,
        kind: AccessKind,
        at: Bytes,
        order: Order,
        scope: ThreadScope,
        site: &'static Location<'static>,
        op: impl FnOnce() -> R,
    ) -> R {
        self.atomic_as(kind, at, order, scope, site, || (op(), kind))
    }

    /// A compare-and-swap of `at`, as [`ThreadCheck::atomic`]: `op` performs it and says
    /// whether it swapped. One that did is a read-modify-write; one that did not wrote nothing
    /// and is a load, with the load half of `order`.
    pub fn compare_and_swap<R>(
        &mut self,
        at: Bytes,
        order: Order,
        scope: ThreadScope,
        site: &'static Location<'static>,
        op: impl FnOnce() -> (R, bool),
    ) -> R {
        self.atomic_as(AccessKind::Rmw, at, order, scope, site, || {
            let (r, swapped) = op();
            (
                r,
                if swapped {
                    AccessKind::Rmw
                } else {
                    AccessKind::Load
                },
            )
        })
    }

    /// [`ThreadCheck::atomic`], with `op` also saying what the access turned out to be (`kind`
    /// is what it is reported as until then, on the other granules of a misaligned one).
    fn atomic_as<R>(
        &mut self,
        kind: AccessKind,
        at: Bytes,
        order: Order,
        scope: ThreadScope,
        site: &'static Location<'static>,
        op: impl FnOnce() -> (R, AccessKind),
    ) -> R {
        self.bounds(kind, at, Mode::Atomic { order, scope }, site);
        let (launch, me) = (&*self.launch, &mut self.me);
        if !me.begin(&launch.meter) || at.width == 0 {
            return op().0;
        }
        let access = me.record(kind, at, Mode::Atomic { order, scope }, site);
        let mut rest = granules(at);
        let first = rest.next().expect("a non-empty access has a granule");
        // A misaligned atomic (undefined on the GPU) crossing granules: the others are only
        // checked.
        for g in rest {
            check(launch, me, g, &access, |_, _| {});
        }
        let shape = &launch.shape;
        // The operation runs first, under the location's lock: every atomic of the location
        // takes that lock, so acquiring after it sees exactly the releases it read.
        let perform = |record: &mut Record| {
            let (result, kind) = op();
            record.kind = kind;
            (result, kind)
        };
        let (result, kind) = check_after(launch, me, first, &access, perform, |me, cell, done| {
            let kind = done.1;
            let (kept, grown) = cell.location(at);
            launch.meter.shadow(grown);
            let acquires =
                kind != AccessKind::Store && matches!(order, Order::Acquire | Order::AcqRel);
            let releases =
                kind != AccessKind::Load && matches!(order, Order::Release | Order::AcqRel);
            if kind != AccessKind::Store {
                if acquires {
                    kept.acquire(shape, me.id, scope, &mut me.clock);
                } else {
                    for r in kept.reaching(shape, me.id) {
                        me.pending.add(scope, r);
                    }
                }
            }
            if kind == AccessKind::Store {
                kept.clear();
            }
            if kind != AccessKind::Load {
                let from = shape.block_instance(me.id);
                if releases {
                    kept.add_clock(shape.instance(me.id, scope), from, &me.clock, &launch.meter);
                } else {
                    for (level, fence) in me.fenced.iter().enumerate() {
                        if let Some(c) = fence {
                            let wide = scope.min(ThreadScope::ALL[level]);
                            kept.add(shape.instance(me.id, wide), from, c);
                        }
                    }
                }
            }
            done
        });
        if kind != AccessKind::Load && matches!(order, Order::Release | Order::AcqRel) {
            me.tick(&launch.meter);
        }
        result
    }

    /// A fence of `kind` at `scope` (`fence.acq_rel`, `fence.sc`, `membar`; the acquire and
    /// release halves apart where a model needs them).
    ///
    /// The release half makes this thread's later relaxed stores and read-modify-writes release
    /// what preceded the fence, to threads in both the fence's and the store's scope; the
    /// acquire half makes the thread acquire what its earlier relaxed reads met, from threads in
    /// both the read's and the fence's scope. A `fence.sc` also synchronizes with every earlier
    /// `fence.sc` whose scope and its own include each other's thread (PTX's Fence-SC order).
    pub fn fence(&mut self, kind: FenceKind, scope: ThreadScope) {
        let (launch, me) = (&*self.launch, &mut self.me);
        if !me.begin(&launch.meter) {
            return;
        }
        let shape = &launch.shape;
        if kind != FenceKind::Release {
            me.pending.fence(shape, me.id, scope, &mut me.clock);
        }
        if kind == FenceKind::Sc {
            let mut sc = launch.sc.lock().unwrap_or_else(PoisonError::into_inner);
            sc.acquire(shape, me.id, scope, &mut me.clock);
            let from = shape.block_instance(me.id);
            sc.add_clock(shape.instance(me.id, scope), from, &me.clock, &launch.meter);
        }
        if kind != FenceKind::Acquire {
            let snapshot = SyncClock::new(me.clock.clone(), &launch.meter);
            for fenced in &mut me.fenced[..=scope as usize] {
                *fenced = Some(Arc::clone(&snapshot));
            }
            me.tick(&launch.meter);
        }
    }

    /// Arrives at phase `phase` of `sync`, releasing to the threads of `scope` that wait on
    /// the phase: a block barrier's arrival (`scope` block), a warp's, a cluster barrier's
    /// `barrier.cluster.arrive.release` (cluster), an `mbarrier.arrive` (its scope). A relaxed
    /// arrival releases nothing and is not reported.
    pub fn arrive(&mut self, sync: SyncId, phase: u64, scope: ThreadScope) {
        let (launch, me) = (&*self.launch, &mut self.me);
        if !me.begin(&launch.meter) {
            return;
        }
        let shape = &launch.shape;
        launch.syncs.arrive(sync, phase, |kept| {
            let from = shape.block_instance(me.id);
            kept.add_clock(shape.instance(me.id, scope), from, &me.clock, &launch.meter);
        });
        me.tick(&launch.meter);
    }

    /// A wait by parity at `site` saw phase `phase` of the `mbarrier` at `addr` complete. If
    /// this thread's last such wait saw the same phase, its parity was not moved on: a
    /// [`FindingKind::StaleParity`] between the two waits.
    pub fn parity_waited(&mut self, addr: usize, phase: u64, site: &'static Location<'static>) {
        let earlier = self.me.waited.insert(addr, (phase, site));
        if let Some((seen, before)) = earlier
            && seen == phase
        {
            let at = |site| self.mbarrier_access(AccessKind::MBarrierWait, addr, site);
            let (first, second) = (at(before), at(site));
            self.launch
                .findings
                .race(FindingKind::StaleParity, first, second);
        }
    }

    /// A misuse of the `mbarrier` at `addr` by this thread at `site` (an arrival beyond the
    /// phase's count): the finding `kind`, both sides the arrival.
    pub fn misuse(&mut self, kind: FindingKind, addr: usize, site: &'static Location<'static>) {
        let a = self.mbarrier_access(AccessKind::MBarrierArrive, addr, site);
        self.launch.findings.race(kind, a, a);
    }

    /// This thread's `kind` of the `mbarrier` at `addr` at `site`, as a finding shows it.
    fn mbarrier_access(
        &self,
        kind: AccessKind,
        addr: usize,
        site: &'static Location<'static>,
    ) -> Access {
        self.own(kind, Bytes::shared(addr, 8), Mode::Plain, site)
    }

    /// An access of this thread's, as a finding shows it.
    fn own(
        &self,
        kind: AccessKind,
        bytes: Bytes,
        mode: Mode,
        site: &'static Location<'static>,
    ) -> Access {
        Access {
            thread: self.me.id,
            site,
            kind,
            bytes,
            mode,
        }
    }

    /// Reports a load or store that names global memory made to `at` in shared memory
    /// ([`FindingKind::WrongSpace`]).
    pub fn claimed_global(&self, kind: AccessKind, at: Bytes, site: &'static Location<'static>) {
        if at.space != Space::Shared {
            return;
        }
        let access = self.own(kind, at, Mode::Plain, site);
        self.launch
            .findings
            .race(FindingKind::WrongSpace, access, access);
    }

    /// Reports an access of global memory that overruns a buffer the simulator allocated
    /// ([`FindingKind::OutOfBounds`]).
    fn bounds(&self, kind: AccessKind, at: Bytes, mode: Mode, site: &'static Location<'static>) {
        if at.space != Space::Global {
            return;
        }
        let Some((start, len)) = super::bounds::overrun(at.addr, at.width) else {
            return;
        };
        let access = self.own(kind, at, mode, site);
        let buffer = Access {
            bytes: Bytes::global(start, len.min(u32::MAX as usize) as u32),
            ..access
        };
        self.launch
            .findings
            .race(FindingKind::OutOfBounds, buffer, access);
    }

    /// Notes that this thread arrives at phase `phase` of its block's barrier from `site`: a
    /// thread of the block that arrived at the same phase from another call site is a
    /// [`FindingKind::BarrierDivergence`].
    pub fn block_barrier_site(&mut self, phase: u64, site: &'static Location<'static>) {
        let launch = &*self.launch;
        let block = launch.shape.instance(self.me.id, ThreadScope::Block);
        let mut sites = launch
            .barrier_sites
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let entry = sites.entry(block).or_insert((phase, self.me.id, site));
        if entry.0 != phase {
            *entry = (phase, self.me.id, site);
        } else if site_differs(entry.2, site) {
            let at = |thread, site| Access {
                thread,
                site,
                kind: AccessKind::Barrier,
                bytes: Bytes::shared(0, 0),
                mode: Mode::Plain,
            };
            let (first, second) = (at(entry.1, entry.2), at(self.me.id, site));
            drop(sites);
            launch
                .findings
                .race(FindingKind::BarrierDivergence, first, second);
        }
    }

    /// Waits for phase `phase` of `sync` to complete, acquiring at `scope` what every arrival
    /// at it released: a block barrier's or warp's threads leaving it, a cluster barrier's
    /// `wait.acquire`, an `mbarrier` wait that saw the phase complete.
    pub fn wait(&mut self, sync: SyncId, phase: u64, scope: ThreadScope) {
        let (launch, me) = (&*self.launch, &mut self.me);
        if !me.begin(&launch.meter) {
            return;
        }
        let shape = &launch.shape;
        launch.syncs.wait(sync, phase, |kept| {
            kept.acquire(shape, me.id, scope, &mut me.clock)
        });
    }

    /// A write of `at` by a bulk copy this thread issued (at `site`), which completes its bytes
    /// on phase `phase` of the `mbarrier` `completes`: a thread that waits on that phase sees the
    /// copy's writes. The transaction bytes release nothing else of this thread's — only the
    /// copy's writes, and what this thread did before issuing the copy.
    pub fn bulk_write(
        &mut self,
        at: Bytes,
        site: &'static Location<'static>,
        completes: SyncId,
        phase: u64,
        scope: ThreadScope,
    ) {
        let (launch, me) = (&*self.launch, &mut self.me);
        if !me.begin(&launch.meter) || at.width == 0 {
            return;
        }
        let access = me.record(AccessKind::Store, at, Mode::BulkCopy, site);
        for g in granules(at) {
            check(launch, me, g, &access, |_, _| {});
        }
        let shape = &launch.shape;
        let mut copy = VectorClock::default();
        copy.join_entry(me.slot, me.clock.get(me.slot));
        launch.syncs.arrive(completes, phase, |kept| {
            let from = shape.block_instance(me.id);
            kept.add_clock(shape.instance(me.id, scope), from, &copy, &launch.meter);
        });
        me.tick(&launch.meter);
    }
}

impl Drop for ThreadCheck {
    fn drop(&mut self) {
        let (l, me) = (&self.launch, &self.me);
        l.events.fetch_add(me.events, Ordering::Relaxed);
        l.forgotten.fetch_add(me.forgotten, Ordering::Relaxed);
        l.unchecked.fetch_add(me.unchecked, Ordering::Relaxed);
    }
}

/// Whether two call sites are different places in the source.
fn site_differs(a: &Location<'_>, b: &Location<'_>) -> bool {
    (a.file(), a.line(), a.column()) != (b.file(), b.line(), b.column())
}
