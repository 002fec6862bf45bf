//! The weak memory: every write kept in its location's coherence order, and per thread the
//! views that say which of them the thread may still read.
//!
//! A load may return any write of its location from the thread's view onwards — the newest, or
//! one the newest has not yet replaced *for this thread*: a stale value, what a GPU's L1 cache
//! or a write still on its way through the memory system shows. Coherence holds (a thread never
//! reads an older write after a newer one of the same location), and synchronization raises
//! views:
//!
//! - every message (write) carries a view: a relaxed store the writer's view as of its last
//!   release fence, a release store the writer's whole current view;
//! - an acquire load adopts the view of the message it read; a relaxed load only remembers it,
//!   and adopts it at the thread's next acquire (or acquire-release, or SC) fence;
//! - an SC fence also meets every earlier SC fence through one global view, which is what
//!   forbids SB's and IRIW's weak outcomes once fences are SC;
//! - a read-modify-write reads the newest write and places its own right after it (atomicity);
//!   its message also carries the view of the write it read (release sequences).
//!
//! This is the view-based operational semantics of release/acquire memory models (as in the
//! "promising" semantics of C++, without promises), with every scope taken as covering every
//! thread. Each behaviour it shows is one the PTX memory model allows for the accesses given;
//! it does not show them all: scopes too narrow for their threads behave here as if wide
//! enough, and load buffering (a store becoming visible before an earlier load of its own
//! thread) needs the litmus runner's out-of-order issue on top.

use super::chooser::Chooser;
use super::view::{Loc, Stamp, View};
use crate::atomic::Order;
use std::collections::BTreeMap;

/// The stamp distance between a write and one appended after it: room for stores placed in
/// between later.
const GAP: Stamp = 1 << 32;

/// How a load is performed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LoadKind {
    /// A plain load (PTX `ld` or `ld.weak`): racing with a write, the model promises nothing;
    /// here it reads like a relaxed load.
    Weak,
    /// `ld.relaxed` or `ld.volatile` (which PTX treats as relaxed at system scope).
    Relaxed,
    /// `ld.acquire`: later accesses of the thread see what the writer saw.
    Acquire,
}

/// How a store is performed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StoreKind {
    /// A plain store (PTX `st` or `st.weak`); here like a relaxed one.
    Weak,
    /// `st.relaxed` or `st.volatile`: carries the view of the thread's last release fence.
    Relaxed,
    /// `st.release`: carries the thread's whole view.
    Release,
}

/// A fence's ordering (its scope is taken as covering every thread).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FenceKind {
    /// The acquire half: adopt the views of the messages read so far.
    Acquire,
    /// The release half: later relaxed stores carry the current view.
    Release,
    /// `fence.acq_rel`: both halves.
    AcqRel,
    /// `fence.sc` (`membar`): both halves, and meets every earlier SC fence.
    Sc,
}

/// One step of a run, as recorded when tracing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// A load read `value`, written by the write at `stamp`; `stale` if a newer write existed.
    Load {
        /// The thread.
        thread: usize,
        /// The location.
        loc: Loc,
        /// The value read.
        value: u64,
        /// The stamp of the write read.
        stamp: Stamp,
        /// Whether the location had a newer write at the time.
        stale: bool,
    },
    /// A store placed at `stamp`; `before_newer` if it went before a write already there.
    Store {
        /// The thread.
        thread: usize,
        /// The location.
        loc: Loc,
        /// The value written.
        value: u64,
        /// Its place in the location's coherence order.
        stamp: Stamp,
        /// Whether it was placed before a newer write of another thread.
        before_newer: bool,
    },
    /// A read-modify-write read `old` and wrote `new` (`None`: a compare-and-swap that failed).
    Rmw {
        /// The thread.
        thread: usize,
        /// The location.
        loc: Loc,
        /// The value read.
        old: u64,
        /// The value written, if any.
        new: Option<u64>,
    },
    /// A fence.
    Fence {
        /// The thread.
        thread: usize,
        /// Its ordering.
        kind: FenceKind,
    },
}

#[derive(Clone, Debug)]
struct Message {
    stamp: Stamp,
    value: u64,
    view: View,
    /// Written by a read-modify-write: nothing may be placed between it and the write before.
    rmw: bool,
}

#[derive(Clone, Debug, Default)]
struct ThreadViews {
    /// What the thread may read now.
    cur: View,
    /// `cur` joined with the views of every message it read: what an acquire fence adopts.
    acq: View,
    /// `cur` as of the last release fence: what its relaxed stores carry.
    rel: View,
    /// The write each location's last plain load read: plain loads keep returning it while
    /// the thread's view allows (a value kept in a register or an L1 line), so a plain spin
    /// with no fence in it never sees a new value — as on a GPU, where the compiler hoists the
    /// load or the SM's L1 keeps the line.
    sticky: View,
}

/// A weak memory shared by `threads` threads; see the [module docs](self).
#[derive(Clone, Debug)]
pub struct Machine {
    timelines: BTreeMap<Loc, Vec<Message>>,
    threads: Vec<ThreadViews>,
    sc: View,
    /// Per barrier (`sync_threads`, a warp's rendezvous): the views its arrivals brought.
    barriers: BTreeMap<usize, View>,
    place_anywhere: bool,
    trace: Option<Vec<Event>>,
}

impl Machine {
    /// A memory for `threads` threads, every location 0 until [`init`](Self::init) says
    /// otherwise. Stores go after every write of their location.
    pub fn new(threads: usize) -> Machine {
        Machine {
            timelines: BTreeMap::new(),
            threads: vec![ThreadViews::default(); threads],
            sc: View::new(),
            barriers: BTreeMap::new(),
            place_anywhere: false,
            trace: None,
        }
    }

    /// Lets a store be placed anywhere after the writes its thread has seen, also before newer
    /// writes of other threads (the coherence order need not follow the time stores were
    /// issued): what 2+2W, R and S need to show their weak outcomes.
    pub fn place_stores_anywhere(mut self, yes: bool) -> Machine {
        self.place_anywhere = yes;
        self
    }

    /// Records every step from now on (see [`trace`](Self::trace)).
    pub fn record(mut self) -> Machine {
        self.trace = Some(Vec::new());
        self
    }

    /// The steps recorded so far (empty unless [`record`](Self::record) was called).
    pub fn trace(&self) -> &[Event] {
        self.trace.as_deref().unwrap_or(&[])
    }

    /// Gives `loc` its initial value, if nothing has been written there yet.
    pub fn init(&mut self, loc: Loc, value: u64) {
        self.timelines.entry(loc).or_insert_with(|| {
            vec![Message {
                stamp: 0,
                value,
                view: View::new(),
                rmw: false,
            }]
        });
    }

    /// The newest write of `loc`: its value once every thread has finished.
    pub fn latest(&self, loc: Loc) -> u64 {
        self.timelines
            .get(&loc)
            .and_then(|t| t.last())
            .map_or(0, |m| m.value)
    }

    /// The number of threads.
    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    fn timeline(&mut self, loc: Loc) -> &mut Vec<Message> {
        self.init(loc, 0);
        self.timelines.get_mut(&loc).expect("just initialized")
    }

    fn log(&mut self, e: Event) {
        if let Some(t) = &mut self.trace {
            t.push(e);
        }
    }

    /// Thread `t` loads `loc`: any write from its view onwards, picked by `ch` — for a plain
    /// load, the write its last plain load of `loc` read, while its view still allows it.
    pub fn load(&mut self, t: usize, loc: Loc, kind: LoadKind, ch: &mut impl Chooser) -> u64 {
        let floor = self.threads[t].cur.get(loc);
        let kept = self.threads[t].sticky.get(loc);
        let tl = self.timeline(loc);
        let first = tl.partition_point(|m| m.stamp < floor);
        // `sticky` holds stamp + 1, so that 0 means "none" even for the initial write.
        let held = (kind == LoadKind::Weak && kept > floor)
            .then(|| tl.binary_search_by_key(&(kept - 1), |m| m.stamp).ok())
            .flatten();
        let i = match held {
            Some(i) => i,
            None => first + ch.choose(tl.len() - first),
        };
        let stale = i + 1 < tl.len();
        let (stamp, value, view) = (tl[i].stamp, tl[i].value, tl[i].view.clone());
        let th = &mut self.threads[t];
        th.cur.raise(loc, stamp);
        th.acq.join(&view);
        th.acq.raise(loc, stamp);
        if kind == LoadKind::Acquire {
            th.cur.join(&view);
        }
        if kind == LoadKind::Weak {
            th.sticky.raise(loc, stamp + 1);
        }
        self.log(Event::Load {
            thread: t,
            loc,
            value,
            stamp,
            stale,
        });
        value
    }

    /// A write nobody modelled (host code, or a kernel's plain Rust access) left `value` at
    /// `loc`: it becomes the newest write, and every thread's view moves past the older ones —
    /// stronger than any GPU, so never a behaviour the model forbids.
    pub fn overwrite(&mut self, loc: Loc, value: u64) {
        let tl = self.timeline(loc);
        let stamp = tl.last().map_or(0, |m| m.stamp) + GAP;
        tl.push(Message {
            stamp,
            value,
            view: View::new(),
            rmw: false,
        });
        for th in &mut self.threads {
            th.cur.raise(loc, stamp);
        }
    }

    /// Thread `t` stores `value` to `loc`: after every write it has seen, and — when stores may
    /// be placed anywhere — possibly before newer ones, as `ch` picks.
    pub fn store(
        &mut self,
        t: usize,
        loc: Loc,
        value: u64,
        kind: StoreKind,
        ch: &mut impl Chooser,
    ) {
        let floor = self.threads[t].cur.get(loc);
        let anywhere = self.place_anywhere;
        let tl = self.timeline(loc);
        let last = tl.len() - 1;
        // The gaps a new write may go into: after a write the thread has seen, never between a
        // read-modify-write and the write it read, and only where stamps leave room.
        let mut after: Vec<usize> = Vec::new();
        if anywhere {
            let first = tl.partition_point(|m| m.stamp < floor);
            after.extend((first..last).filter(|&i| {
                let next = &tl[i + 1];
                !next.rmw && next.stamp - tl[i].stamp >= 2
            }));
        }
        after.push(last);
        let i = after[ch.choose(after.len())];
        let stamp = if i == last {
            tl[last].stamp + GAP
        } else {
            tl[i].stamp + (tl[i + 1].stamp - tl[i].stamp) / 2
        };
        let th = &mut self.threads[t];
        th.cur.raise(loc, stamp);
        let view = match kind {
            StoreKind::Release => th.cur.clone(),
            StoreKind::Weak | StoreKind::Relaxed => th.rel.with(loc, stamp),
        };
        self.timeline(loc).insert(
            i + 1,
            Message {
                stamp,
                value,
                view,
                rmw: false,
            },
        );
        self.log(Event::Store {
            thread: t,
            loc,
            value,
            stamp,
            before_newer: i != last,
        });
    }

    /// Thread `t` performs a read-modify-write of `loc` with `order`: reads the newest write,
    /// and unless `f` returns `None` (a compare-and-swap that failed, which is then only a load
    /// of the newest write), writes `f`'s value right after it. Returns the value read.
    pub fn rmw(
        &mut self,
        t: usize,
        loc: Loc,
        order: Order,
        f: impl FnOnce(u64) -> Option<u64>,
    ) -> u64 {
        let tl = self.timeline(loc);
        let read = tl
            .last()
            .expect("a timeline starts with its initial write")
            .clone();
        let acquire = matches!(order, Order::Acquire | Order::AcqRel);
        let release = matches!(order, Order::Release | Order::AcqRel);
        let th = &mut self.threads[t];
        th.cur.raise(loc, read.stamp);
        th.acq.join(&read.view);
        th.acq.raise(loc, read.stamp);
        if acquire {
            th.cur.join(&read.view);
        }
        let new = f(read.value);
        if let Some(value) = new {
            let stamp = read.stamp + GAP;
            th.cur.raise(loc, stamp);
            let mut view = if release {
                th.cur.clone()
            } else {
                th.rel.with(loc, stamp)
            };
            view.join(&read.view);
            self.timeline(loc).push(Message {
                stamp,
                value,
                view,
                rmw: true,
            });
        }
        self.log(Event::Rmw {
            thread: t,
            loc,
            old: read.value,
            new,
        });
        read.value
    }

    /// Thread `t` arrives at the barrier `key` (`bar.sync`, `bar.warp.sync`): an
    /// acquire-release fence, and what it has seen goes to the threads that leave the barrier
    /// after it.
    pub fn barrier_arrive(&mut self, t: usize, key: usize) {
        self.fence(t, FenceKind::AcqRel);
        let cur = self.threads[t].cur.clone();
        self.barriers.entry(key).or_default().join(&cur);
    }

    /// Thread `t` leaves the barrier `key`: it adopts what every thread that arrived there has
    /// seen (a barrier synchronizes its participants, at the scope taken as everyone's here).
    /// The view is never reset: a thread leaving late may also learn of a later arrival, which
    /// only makes it stronger.
    pub fn barrier_leave(&mut self, t: usize, key: usize) {
        if let Some(v) = self.barriers.get(&key) {
            let v = v.clone();
            let th = &mut self.threads[t];
            th.cur.join(&v);
            th.acq.join(&v);
            th.rel = th.cur.clone();
        }
    }

    /// Thread `t` executes a fence.
    pub fn fence(&mut self, t: usize, kind: FenceKind) {
        let th = &mut self.threads[t];
        if kind != FenceKind::Release {
            let acq = th.acq.clone();
            th.cur.join(&acq);
        }
        if kind == FenceKind::Sc {
            th.cur.join(&self.sc);
            self.sc = th.cur.clone();
        }
        if kind != FenceKind::Acquire {
            th.rel = th.cur.clone();
        }
        self.log(Event::Fence { thread: t, kind });
    }
}
