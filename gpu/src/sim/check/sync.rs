//! What a release leaves behind for an acquire to take: at an atomic location, in a barrier's
//! phase, in the order of `fence.sc`s.
//!
//! A release is kept with the two facts scope inclusion needs (PTX ISA, Memory Consistency
//! Model: "Release and acquire patterns", "Synchronizes-with", "Morally strong operations"):
//! its *reach*, the instance of the release's scope around the releasing thread (an acquiring
//! thread outside it is not in the release's scope), and the *block* of the releasing thread
//! (the acquire's scope, taken by the acquiring thread, must include it). Releases with the same
//! reach from the same block are joined into one clock: an acquire accepts all of them or none.

use super::clock::{Meter, SyncClock, VectorClock};
use super::shape::{Instance, Shape, ThreadId, ThreadScope};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// One set of releases an acquire may take.
#[derive(Clone, Debug)]
struct Release {
    reach: Instance,
    from: Instance,
    clock: Arc<SyncClock>,
}

/// The releases an acquire at one place may take.
#[derive(Debug, Default)]
pub(super) struct Releases(Vec<Release>);

impl Releases {
    /// Forgets every release (an atomic store, not a read-modify-write, starts the location
    /// afresh: a later reader reads it, not the writes before it).
    pub(super) fn clear(&mut self) {
        self.0.clear();
    }

    /// Adds a release of `clock` reaching `reach`, made by a thread of block `from`.
    pub(super) fn add(&mut self, reach: Instance, from: Instance, clock: &Arc<SyncClock>) {
        match self
            .0
            .iter_mut()
            .find(|r| r.reach == reach && r.from == from)
        {
            Some(r) if Arc::ptr_eq(&r.clock, clock) => {}
            Some(r) => SyncClock::join(&mut r.clock, clock.clock()),
            None => self.0.push(Release {
                reach,
                from,
                clock: Arc::clone(clock),
            }),
        }
    }

    /// As [`Releases::add`], for a clock not yet kept anywhere.
    pub(super) fn add_clock(
        &mut self,
        reach: Instance,
        from: Instance,
        clock: &VectorClock,
        meter: &Arc<Meter>,
    ) {
        match self
            .0
            .iter_mut()
            .find(|r| r.reach == reach && r.from == from)
        {
            Some(r) => SyncClock::join(&mut r.clock, clock),
            None => self.0.push(Release {
                reach,
                from,
                clock: SyncClock::new(clock.clone(), meter),
            }),
        }
    }

    /// Joins into `into` every release that thread `me`, acquiring at `scope`, synchronizes
    /// with: `me` lies in its reach, and its block lies in `me`'s `scope`.
    pub(super) fn acquire(
        &self,
        shape: &Shape,
        me: ThreadId,
        scope: ThreadScope,
        into: &mut VectorClock,
    ) {
        let mine = shape.instance(me, scope);
        for r in &self.0 {
            if Self::accepts(shape, r, me, mine) {
                into.join(r.clock.clock());
            }
        }
    }

    /// The releases thread `me` may synchronize with through a relaxed read that a later
    /// acquire fence completes: those whose reach holds `me`. Whether the read's and the fence's
    /// scopes include their threads is decided at the fence ([`Pending`]).
    pub(super) fn reaching(&self, shape: &Shape, me: ThreadId) -> impl Iterator<Item = Kept<'_>> {
        let block = shape.block_instance(me);
        self.0
            .iter()
            .filter(move |r| shape.within(block, r.reach))
            .map(|r| Kept {
                from: r.from,
                clock: &r.clock,
            })
    }

    fn accepts(shape: &Shape, r: &Release, me: ThreadId, mine: Instance) -> bool {
        shape.within(shape.block_instance(me), r.reach) && shape.within(r.from, mine)
    }
}

/// A release as a relaxed read met it: who made it, and its clock.
pub(super) struct Kept<'a> {
    pub(super) from: Instance,
    pub(super) clock: &'a Arc<SyncClock>,
}

/// What a thread's relaxed reads met, for its next acquire fence to take: per scope of the read
/// and block of the releasing thread, the join of the releases met.
#[derive(Debug, Default)]
pub(super) struct Pending(Vec<Met>);

/// One entry of [`Pending`].
#[derive(Debug)]
struct Met {
    read: ThreadScope,
    from: Instance,
    /// The join of the releases met.
    clock: Arc<SyncClock>,
    /// The last release joined in. Holding it keeps it shared, so its location cannot change it
    /// in place: the same pointer is the same clock, and a spin that meets it again and again
    /// (a failed compare-and-swap, a relaxed poll) joins it once.
    last: Arc<SyncClock>,
}

impl Pending {
    /// Remembers what a relaxed read of scope `read` met.
    pub(super) fn add(&mut self, read: ThreadScope, kept: Kept<'_>) {
        match self
            .0
            .iter_mut()
            .find(|m| m.read == read && m.from == kept.from)
        {
            Some(m) if Arc::ptr_eq(&m.last, kept.clock) => {}
            Some(m) => {
                SyncClock::join(&mut m.clock, kept.clock.clock());
                m.last = Arc::clone(kept.clock);
            }
            None => self.0.push(Met {
                read,
                from: kept.from,
                clock: Arc::clone(kept.clock),
                last: Arc::clone(kept.clock),
            }),
        }
    }

    /// An acquire fence of `scope` by `me`: joins into `into` what each read met whose
    /// releasing thread lies in both the read's scope and the fence's, and forgets it; keeps
    /// the rest for a wider fence later.
    pub(super) fn fence(
        &mut self,
        shape: &Shape,
        me: ThreadId,
        scope: ThreadScope,
        into: &mut VectorClock,
    ) {
        self.0.retain(|m| {
            let mine = shape.instance(me, scope.min(m.read));
            if shape.within(m.from, mine) {
                into.join(m.clock.clock());
                false
            } else {
                true
            }
        });
    }
}

/// What kind of synchronization object a [`SyncId`] names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SyncKind {
    /// A block's barrier (`bar.sync`, `sync_threads`).
    BlockBarrier,
    /// A warp's lanes meeting (`bar.warp.sync`, and the warp operations that synchronize).
    Warp,
    /// A cluster's barrier (`barrier.cluster.arrive` / `.wait`).
    ClusterBarrier,
    /// An `mbarrier` in shared memory.
    MBarrier,
    /// Anything else that releases into numbered phases.
    Other,
}

/// A synchronization object: what it is and which one (a block's index, an `mbarrier`'s
/// address — the caller's choice, unique among the objects of its kind in a launch).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SyncId {
    /// Its kind.
    pub kind: SyncKind,
    /// Which one.
    pub index: u64,
}

/// How many phases of one object are kept: a barrier's threads all wait on phase *k* before
/// any can arrive at *k* + 2; an `mbarrier`'s waiter tells only two phases apart by parity.
pub(super) const PHASES_KEPT: usize = 4;

const SYNC_SHARDS: usize = 64;

/// The phases kept of one object, oldest first, each with its releases.
type Phases = VecDeque<(u64, Releases)>;

/// The phases of every synchronization object of a launch, sharded by object.
pub(super) struct SyncTable {
    shards: Box<[Mutex<HashMap<SyncId, Phases>>]>,
}

impl SyncTable {
    pub(super) fn new() -> SyncTable {
        SyncTable {
            shards: (0..SYNC_SHARDS).map(|_| Mutex::default()).collect(),
        }
    }

    fn shard(&self, id: SyncId) -> MutexGuard<'_, HashMap<SyncId, Phases>> {
        let h = (id.index ^ (id.kind as u64) << 56).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 58;
        // A panic under the lock leaves at worst a phase without a release: still usable.
        self.shards[h as usize]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `f` on phase `phase` of `id`, made if new (the oldest phase kept is forgotten
    /// past [`PHASES_KEPT`]): where an arrival releases.
    pub(super) fn arrive<R>(
        &self,
        id: SyncId,
        phase: u64,
        f: impl FnOnce(&mut Releases) -> R,
    ) -> R {
        let mut shard = self.shard(id);
        let phases = shard.entry(id).or_default();
        let at = match phases.iter().position(|(p, _)| *p == phase) {
            Some(at) => at,
            None => {
                if phases.len() == PHASES_KEPT {
                    phases.pop_front();
                }
                phases.push_back((phase, Releases::default()));
                phases.len() - 1
            }
        };
        f(&mut phases[at].1)
    }

    /// Runs `f` on phase `phase` of `id` if any thread arrived at it (and it is still kept):
    /// where a wait acquires.
    pub(super) fn wait(&self, id: SyncId, phase: u64, f: impl FnOnce(&Releases)) {
        let shard = self.shard(id);
        if let Some((_, releases)) = shard
            .get(&id)
            .and_then(|phases| phases.iter().find(|(p, _)| *p == phase))
        {
            f(releases);
        }
    }
}
