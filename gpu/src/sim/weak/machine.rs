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
//! "promising" semantics of C++, without promises), with PTX's scopes on top:
//!
//! - the threads are grouped into blocks ([`Machine::with_blocks`]; one block unless said, so
//!   that every scope covers every thread); two threads' *nearness* is the narrowest scope
//!   holding both — the block for two threads of one block, the GPU for two of a launch's
//!   blocks (a launch without clusters makes each block its own cluster);
//! - a message carries its view once per nearness: a release at scope `S` gives its view to
//!   readers near enough to be inside `S`, and nothing to the others; a fence of scope `F`
//!   releases to, and acquires from, threads inside `F` only; a `fence.sc` meets only the
//!   earlier `fence.sc`s whose scopes and its own hold each other's thread;
//! - a read-modify-write is atomic only with the writes whose scopes and its own hold each
//!   other's thread: a block-scope `atom.add` may read past an update of another block that it
//!   does not see, and both updates then land, one of them lost (the scope race of a `.cta`
//!   counter shared by blocks).
//!
//! Each behaviour it shows is one the PTX memory model allows for the accesses given; it does
//! not show them all: load buffering (a store becoming visible before an earlier load of its
//! own thread) needs the litmus runner's out-of-order issue on top, and a read-modify-write
//! passes on the views of the write it read as if the reader were as near to that write's
//! thread as to its own (more synchronization than the model promises, never less).

use super::chooser::Chooser;
use super::view::{Loc, Stamp, View};
use crate::atomic::Order;
use crate::sim::check::ThreadScope;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The nearnesses of two threads, as scope levels: block, cluster, GPU, system.
const LEVELS: usize = 4;

/// A view for each nearness of a reader to the writer (indexed by [`ThreadScope`] as a
/// number): what a reader that near adopts. Narrower nearness never gets less.
type Views = [Arc<View>; LEVELS];

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
    /// What it gives a reader, by the reader's nearness to the writer.
    views: Views,
    /// Written by a read-modify-write: nothing may be placed between it and the write before,
    /// for read-modify-writes whose scopes hold each other's thread.
    rmw: bool,
    /// The writing thread (`None`: an initial value, or a write nobody modelled).
    from: Option<usize>,
    /// The scope of the write.
    scope: ThreadScope,
}

#[derive(Clone, Debug, Default)]
struct ThreadViews {
    /// What the thread may read now.
    cur: View,
    /// By nearness to their writers, the views of the messages its relaxed reads met: what an
    /// acquire fence adopts (one of scope `F` from nearness up to `F`).
    acq: [View; LEVELS],
    /// By nearness, `cur` as of the last release fence whose scope reaches that far: what its
    /// relaxed stores carry.
    rel: Views,
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
    /// Threads per block: thread `t` is in block `t / per_block`.
    per_block: usize,
    /// The views `fence.sc`s left, keyed by (the fence's scope, a nearness up to it, the
    /// fencing thread's group at that nearness): a later `fence.sc` meets those whose scope and
    /// its own hold each other's thread.
    sc: BTreeMap<(ThreadScope, ThreadScope, usize), View>,
    /// Per barrier (`sync_threads`, a warp's rendezvous): the views its arrivals brought.
    barriers: BTreeMap<usize, View>,
    place_anywhere: bool,
    trace: Option<Vec<Event>>,
    /// The view that gives nothing, shared.
    nothing: Arc<View>,
}

impl Machine {
    /// A memory for `threads` threads, every location 0 until [`init`](Self::init) says
    /// otherwise. Stores go after every write of their location.
    pub fn new(threads: usize) -> Machine {
        Machine {
            timelines: BTreeMap::new(),
            threads: vec![ThreadViews::default(); threads],
            per_block: threads.max(1),
            sc: BTreeMap::new(),
            barriers: BTreeMap::new(),
            place_anywhere: false,
            trace: None,
            nothing: Arc::new(View::new()),
        }
    }

    /// Groups the threads into blocks of `per_block` (thread `t` in block `t / per_block`), each
    /// its own cluster, all on one GPU: what the scopes of their operations hold.
    pub fn with_blocks(mut self, per_block: usize) -> Machine {
        self.per_block = per_block.max(1);
        self
    }

    /// The narrowest scope that holds threads `a` and `b`.
    fn nearness(&self, a: usize, b: usize) -> ThreadScope {
        if a / self.per_block == b / self.per_block {
            ThreadScope::Block
        } else {
            ThreadScope::Device
        }
    }

    /// Thread `t`'s group at nearness `level` (its block, or everyone).
    fn group(&self, t: usize, level: ThreadScope) -> usize {
        match level {
            ThreadScope::Block | ThreadScope::Cluster => t / self.per_block,
            ThreadScope::Device | ThreadScope::System => 0,
        }
    }

    /// How near a reader `t` is to the writer of `m`, for the views `m` gives: a write nobody
    /// modelled gives nothing but itself.
    fn reach(&self, t: usize, m: &Message) -> Option<ThreadScope> {
        m.from.map(|w| self.nearness(t, w))
    }

    /// Whether an access of `t` at `scope` and the write `m` are morally strong with each
    /// other as far as scopes go: each scope holds the other's thread.
    fn strong_with(&self, t: usize, scope: ThreadScope, m: &Message) -> bool {
        self.reach(t, m)
            .is_none_or(|near| near <= scope && near <= m.scope)
    }

    /// The views a write by `t` at `scope` carries: `base[level]` to readers inside `scope`,
    /// nothing to the others.
    fn views_of(&self, scope: ThreadScope, base: impl Fn(usize) -> Arc<View>) -> Views {
        std::array::from_fn(|l| {
            if l <= scope as usize {
                base(l)
            } else {
                Arc::clone(&self.nothing)
            }
        })
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
                views: Default::default(),
                rmw: false,
                from: None,
                scope: ThreadScope::System,
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
    /// load, the write its last plain load of `loc` read, while its view still allows it. As
    /// [`load_scoped`](Self::load_scoped) at system scope.
    pub fn load(&mut self, t: usize, loc: Loc, kind: LoadKind, ch: &mut impl Chooser) -> u64 {
        self.load_scoped(t, loc, kind, ThreadScope::System, ch)
    }

    /// Thread `t` loads `loc` with `kind` at `scope` (a plain or volatile load: system). What
    /// the write read gives, it gives only if the two are inside each other's scopes.
    pub fn load_scoped(
        &mut self,
        t: usize,
        loc: Loc,
        kind: LoadKind,
        scope: ThreadScope,
        ch: &mut impl Chooser,
    ) -> u64 {
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
        let m = tl[i].clone();
        let gives = self.gives(t, scope, &m);
        let th = &mut self.threads[t];
        th.cur.raise(loc, m.stamp);
        if let Some((near, view)) = gives {
            th.acq[near as usize].join(&view);
            if kind == LoadKind::Acquire {
                th.cur.join(&view);
            }
        }
        if kind == LoadKind::Weak {
            th.sticky.raise(loc, m.stamp + 1);
        }
        self.log(Event::Load {
            thread: t,
            loc,
            value: m.value,
            stamp: m.stamp,
            stale,
        });
        m.value
    }

    /// What reading `m` with an access of `t` at `scope` gives: the nearness and the view, if
    /// the two are inside each other's scopes.
    fn gives(&self, t: usize, scope: ThreadScope, m: &Message) -> Option<(ThreadScope, Arc<View>)> {
        let near = self.reach(t, m)?;
        self.strong_with(t, scope, m)
            .then(|| (near, Arc::clone(&m.views[near as usize])))
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
            views: Default::default(),
            rmw: false,
            from: None,
            scope: ThreadScope::System,
        });
        for th in &mut self.threads {
            th.cur.raise(loc, stamp);
        }
    }

    /// Thread `t` stores `value` to `loc`: after every write it has seen, and — when stores may
    /// be placed anywhere — possibly before newer ones, as `ch` picks. As
    /// [`store_scoped`](Self::store_scoped) at system scope.
    pub fn store(
        &mut self,
        t: usize,
        loc: Loc,
        value: u64,
        kind: StoreKind,
        ch: &mut impl Chooser,
    ) {
        self.store_scoped(t, loc, value, kind, ThreadScope::System, ch);
    }

    /// Thread `t` stores `value` to `loc` with `kind` at `scope` (a plain or volatile store:
    /// system): a release gives its thread's view to readers inside `scope`, a relaxed store
    /// what its thread's release fences released to them.
    pub fn store_scoped(
        &mut self,
        t: usize,
        loc: Loc,
        value: u64,
        kind: StoreKind,
        scope: ThreadScope,
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
        self.threads[t].cur.raise(loc, stamp);
        let th = &self.threads[t];
        let views = match kind {
            StoreKind::Release => {
                let all = Arc::new(th.cur.clone());
                self.views_of(scope, |_| Arc::clone(&all))
            }
            StoreKind::Weak | StoreKind::Relaxed => {
                self.views_of(scope, |l| Arc::clone(&th.rel[l]))
            }
        };
        self.timeline(loc).insert(
            i + 1,
            Message {
                stamp,
                value,
                views,
                rmw: false,
                from: Some(t),
                scope,
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
    /// of the newest write), writes `f`'s value right after it. Returns the value read. As
    /// [`rmw_scoped`](Self::rmw_scoped) at system scope, where every write is the newest's
    /// equal.
    pub fn rmw(
        &mut self,
        t: usize,
        loc: Loc,
        order: Order,
        f: impl FnOnce(u64) -> Option<u64>,
    ) -> u64 {
        self.rmw_scoped(t, loc, order, ThreadScope::System, f, &mut Newest)
    }

    /// [`rmw`](Self::rmw) at `scope`: atomic with the writes whose scope and its own hold each
    /// other's thread. It reads the newest write, or — where the newest ones are writes it is
    /// not atomic with (another block's, for a block-scope one) — one before them from its
    /// view onwards, as `ch` picks, and its write goes right after the one it read: the writes
    /// it read past stay after it, and one update is lost.
    pub fn rmw_scoped(
        &mut self,
        t: usize,
        loc: Loc,
        order: Order,
        scope: ThreadScope,
        f: impl FnOnce(u64) -> Option<u64>,
        ch: &mut impl Chooser,
    ) -> u64 {
        let floor = self.threads[t].cur.get(loc);
        self.init(loc, 0);
        let tl = &self.timelines[&loc];
        let last = tl.len() - 1;
        // The newest write, and each older one it may read instead: every write after it is
        // one this read-modify-write is not atomic with, and there is room for a write after it.
        let mut can = vec![last];
        let mut i = last;
        while i > 0 && !self.strong_with(t, scope, &tl[i]) && tl[i - 1].stamp >= floor {
            i -= 1;
            if tl[i + 1].stamp - tl[i].stamp >= 2 {
                can.push(i);
            }
        }
        let i = can[ch.choose(can.len())];
        let read = tl[i].clone();
        let next_stamp = tl.get(i + 1).map(|m| m.stamp);
        let acquire = matches!(order, Order::Acquire | Order::AcqRel);
        let release = matches!(order, Order::Release | Order::AcqRel);
        let gives = self.gives(t, scope, &read);
        let th = &mut self.threads[t];
        th.cur.raise(loc, read.stamp);
        if let Some((near, view)) = &gives {
            th.acq[*near as usize].join(view);
            if acquire {
                th.cur.join(view);
            }
        }
        let new = f(read.value);
        if let Some(value) = new {
            let stamp = match next_stamp {
                None => read.stamp + GAP,
                Some(next) => read.stamp + (next - read.stamp) / 2,
            };
            th.cur.raise(loc, stamp);
            // A release sequence: the write passes on what the write it read gave (to the
            // nearest reader, the most), beside its own.
            let carried = gives.map(|_| Arc::clone(&read.views[0]));
            let th = &self.threads[t];
            let own = |l: usize| {
                let mut v = if release {
                    th.cur.clone()
                } else {
                    (*th.rel[l]).clone()
                };
                if let Some(c) = &carried {
                    v.join(c);
                }
                Arc::new(v)
            };
            let views = self.views_of(scope, own);
            self.timelines.get_mut(&loc).expect("initialized").insert(
                i + 1,
                Message {
                    stamp,
                    value,
                    views,
                    rmw: true,
                    from: Some(t),
                    scope,
                },
            );
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
    /// after it. As [`barrier_arrive_scoped`](Self::barrier_arrive_scoped) at system scope.
    pub fn barrier_arrive(&mut self, t: usize, key: usize) {
        self.barrier_arrive_scoped(t, key, ThreadScope::System);
    }

    /// [`barrier_arrive`](Self::barrier_arrive) of a barrier whose participants are inside
    /// `scope` (a block barrier's: the block).
    pub fn barrier_arrive_scoped(&mut self, t: usize, key: usize, scope: ThreadScope) {
        self.fence_scoped(t, FenceKind::AcqRel, scope);
        let cur = self.threads[t].cur.clone();
        self.barriers.entry(key).or_default().join(&cur);
    }

    /// Thread `t` leaves the barrier `key`: it adopts what every thread that arrived there has
    /// seen. The view is never reset: a thread leaving late may also learn of a later arrival,
    /// which only makes it stronger. As [`barrier_leave_scoped`](Self::barrier_leave_scoped) at
    /// system scope.
    pub fn barrier_leave(&mut self, t: usize, key: usize) {
        self.barrier_leave_scoped(t, key, ThreadScope::System);
    }

    /// [`barrier_leave`](Self::barrier_leave) of a barrier whose participants are inside
    /// `scope`: what the thread's relaxed stores carry afterwards reaches that far.
    pub fn barrier_leave_scoped(&mut self, t: usize, key: usize, scope: ThreadScope) {
        if let Some(v) = self.barriers.get(&key) {
            let v = v.clone();
            let th = &mut self.threads[t];
            th.cur.join(&v);
            let now = Arc::new(th.cur.clone());
            for rel in &mut th.rel[..=scope as usize] {
                *rel = Arc::clone(&now);
            }
        }
    }

    /// Thread `t` executes a fence. As [`fence_scoped`](Self::fence_scoped) at system scope.
    pub fn fence(&mut self, t: usize, kind: FenceKind) {
        self.fence_scoped(t, kind, ThreadScope::System);
    }

    /// Thread `t` executes a fence of `kind` at `scope`: it acquires what its relaxed reads met
    /// of writers inside `scope`, releases to readers inside `scope`, and a `fence.sc` meets the
    /// earlier ones whose scopes and its own hold each other's thread.
    pub fn fence_scoped(&mut self, t: usize, kind: FenceKind, scope: ThreadScope) {
        let reach = scope as usize;
        if kind != FenceKind::Release {
            let ThreadViews { cur, acq, .. } = &mut self.threads[t];
            for v in &acq[..=reach] {
                cur.join(v);
            }
        }
        if kind == FenceKind::Sc {
            // An earlier fence.sc of scope s1 by u is met when u is inside this one's scope and
            // this thread inside s1: u and t share their group at nearness min(s1, scope), which
            // is where u's fence left its view under s1.
            let mut met = View::new();
            for s1 in ThreadScope::ALL {
                let near = s1.min(scope);
                if let Some(v) = self.sc.get(&(s1, near, self.group(t, near))) {
                    met.join(v);
                }
            }
            self.threads[t].cur.join(&met);
            let cur = self.threads[t].cur.clone();
            for near in ThreadScope::ALL.into_iter().filter(|n| *n <= scope) {
                let key = (scope, near, self.group(t, near));
                self.sc.entry(key).or_default().join(&cur);
            }
        }
        if kind != FenceKind::Acquire {
            let th = &mut self.threads[t];
            let now = Arc::new(th.cur.clone());
            for rel in &mut th.rel[..=reach] {
                *rel = Arc::clone(&now);
            }
        }
        self.log(Event::Fence { thread: t, kind });
    }
}

/// Always the newest: the only choice a system-scope read-modify-write has.
struct Newest;

impl Chooser for Newest {
    fn choose(&mut self, _n: usize) -> usize {
        0
    }
}
