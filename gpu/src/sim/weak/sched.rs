//! Weak launches: a real kernel run by the simulator with the weak memory, one thread at a
//! time, every choice drawn from a seeded generator — so a run that loses an update replays.
//!
//! The simulated threads are still OS threads, but only the one holding the *token* runs.
//! Every memory operation the model sees (atomics, fences, plain and volatile accesses through
//! [`access`](crate::access), `sync_threads`, warp operations) is done on the [`Machine`] and
//! then hands the token to a thread the generator picks; a thread waiting at a barrier is off
//! the list until the barrier opens. The machine keeps real memory equal to each location's
//! newest write, so host code and the kernel's unmodelled accesses (a Rust `*p`) see memory as
//! they always do; a value changed behind the machine's back becomes its newest write, seen
//! by every thread.
//!
//! A run replays exactly from its seed unless a wait bounded by the clock gives up (the clock
//! is the host's), which a correct kernel never does. Clusters are refused; an `mbarrier`'s
//! arrivals and completed waits synchronize like a barrier, and its waits hand the token on
//! between polls. A value written behind the machine's back is seen only if it differs from the
//! newest write it knows.

use super::chooser::{Chooser, Seeded};
use super::machine::{FenceKind, LoadKind, Machine, StoreKind};
use crate::atomic::Order;
use crate::sim::check::ThreadScope;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::thread::Thread;
use std::time::Duration;

/// How often a thread waiting for the token looks at the launch's abort flag unwoken: a safety
/// net, since the hand-over of the token and a failing launch both unpark it.
const POLL: Duration = Duration::from_millis(250);

/// Out of 8: how often the token stays with the thread that has it. Fewer hand-overs make a
/// run faster; the interleavings still vary at every operation.
const STAY_EIGHTHS: u64 = 6;

/// The size of an access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Width {
    /// 4 bytes.
    W32,
    /// 8 bytes.
    W64,
}

/// What the weak launches of a [`scoped`] call did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WeakStats {
    /// Launches run with the weak memory.
    pub launches: u64,
    /// Memory operations the machine performed.
    pub operations: u64,
    /// Loads that returned a value some newer write had already replaced.
    pub stale_loads: u64,
    /// Times the token went to another thread.
    pub switches: u64,
}

thread_local! {
    /// The seed of the weak launches this host thread makes, and how many it has made.
    static SCOPE: Cell<Option<(u64, u64)>> = const { Cell::new(None) };
    static STATS: Cell<WeakStats> = const { Cell::new(WeakStats { launches: 0, operations: 0, stale_loads: 0, switches: 0 }) };
}

/// Runs `f` with every simulator launch it makes on this thread using the weak memory, launch
/// `k` seeded with `Seeded::new(seed, k)`; returns `f`'s result and what the launches did.
/// Launches from other threads, and GPU launches, are not affected.
///
/// ```
/// use gpu::sim::weak::scoped;
/// let ((), stats) = scoped(7, || { /* gridsync calls on Target::Sim */ });
/// assert_eq!(stats.launches, 0);
/// ```
pub fn scoped<R>(seed: u64, f: impl FnOnce() -> R) -> (R, WeakStats) {
    /// Puts the thread's previous scope back, also if `f` panics.
    struct Restore(Option<(u64, u64)>, WeakStats);
    impl Drop for Restore {
        fn drop(&mut self) {
            SCOPE.set(self.0);
            STATS.set(self.1);
        }
    }
    let restore = Restore(SCOPE.replace(Some((seed, 0))), STATS.take());
    let r = f();
    let stats = STATS.get();
    drop(restore);
    (r, stats)
}

/// The seed of the next launch on this thread, if it is inside [`scoped`].
pub(crate) fn next_launch_seed() -> Option<Seeded> {
    let (seed, k) = SCOPE.get()?;
    SCOPE.set(Some((seed, k + 1)));
    Some(Seeded::new(seed, k))
}

struct Inner {
    machine: Machine,
    rng: Seeded,
    /// The thread allowed to run.
    token: Option<u32>,
    /// Threads waiting for the token.
    ready: BTreeSet<u32>,
    /// Threads waiting at a barrier, by the barrier's address.
    blocked: BTreeMap<usize, Vec<u32>>,
    stats: WeakStats,
}

/// The scheduler and memory of one weak launch.
pub(crate) struct WeakLaunch {
    inner: Mutex<Inner>,
    threads: Vec<OnceLock<Thread>>,
}

/// Why a weak launch cannot go on.
pub(crate) enum Stuck {
    /// Every thread left waits at a barrier.
    Deadlock,
    /// The launch was aborted by another thread.
    Aborted,
}

impl WeakLaunch {
    /// A launch of `threads` threads in blocks of `per_block` (what scopes hold); the first to
    /// run is drawn from `rng`.
    pub(crate) fn new(threads: u32, per_block: u32, mut rng: Seeded) -> WeakLaunch {
        let mut ready: BTreeSet<u32> = (0..threads).collect();
        let first = pick(&mut rng, &ready);
        if let Some(f) = first {
            ready.remove(&f);
        }
        WeakLaunch {
            inner: Mutex::new(Inner {
                machine: Machine::new(threads as usize).with_blocks(per_block as usize),
                rng,
                token: first,
                ready,
                blocked: BTreeMap::new(),
                stats: WeakStats {
                    launches: 1,
                    ..WeakStats::default()
                },
            }),
            threads: (0..threads).map(|_| OnceLock::new()).collect(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Thread `me` is about to start: remembered so it can be woken.
    pub(crate) fn register(&self, me: u32) {
        let _ = self.threads[me as usize].set(std::thread::current());
    }

    /// Adds this launch's figures to the thread's [`scoped`] totals (called by the launching
    /// thread when the launch is over).
    pub(crate) fn report(&self) {
        let s = self.lock().stats;
        STATS.set({
            let mut t = STATS.get();
            t.launches += s.launches;
            t.operations += s.operations;
            t.stale_loads += s.stale_loads;
            t.switches += s.switches;
            t
        });
    }

    /// Wakes every registered thread to look at the launch's abort flag.
    pub(crate) fn wake_all(&self) {
        for t in self.threads.iter().filter_map(OnceLock::get) {
            t.unpark();
        }
    }

    /// Waits until `me` holds the token.
    pub(crate) fn wait_turn(&self, me: u32, aborted: &dyn Fn() -> bool) -> Result<(), Stuck> {
        loop {
            if self.lock().token == Some(me) {
                return Ok(());
            }
            if aborted() {
                return Err(Stuck::Aborted);
            }
            std::thread::park_timeout(POLL);
        }
    }

    /// Hands the token from `me` to `next` (waking it) under `g`.
    fn hand_to(&self, g: &mut Inner, me: u32, next: Option<u32>) {
        g.token = next;
        if let Some(n) = next
            && n != me
        {
            g.stats.switches += 1;
            if let Some(t) = self.threads[n as usize].get() {
                t.unpark();
            }
        }
    }

    /// `me` gives the token to a thread the generator picks (maybe itself), and waits for it
    /// back.
    pub(crate) fn switch(&self, me: u32, aborted: &dyn Fn() -> bool) -> Result<(), Stuck> {
        {
            let mut g = self.lock();
            let g = &mut *g;
            let next = if g.rng.next_u64() % 8 < STAY_EIGHTHS {
                Some(me)
            } else {
                g.ready.insert(me);
                let n = pick(&mut g.rng, &g.ready);
                if let Some(n) = n {
                    g.ready.remove(&n);
                }
                n
            };
            self.hand_to(g, me, next);
        }
        self.wait_turn(me, aborted)
    }

    /// `me` waits at the barrier at `key` (it arrived and the barrier is not complete): off
    /// the list until [`release`](Self::release), the token to another thread meanwhile.
    pub(crate) fn block(
        &self,
        me: u32,
        key: usize,
        aborted: &dyn Fn() -> bool,
    ) -> Result<(), Stuck> {
        {
            let mut g = self.lock();
            let g = &mut *g;
            g.blocked.entry(key).or_default().push(me);
            let Some(next) = pick(&mut g.rng, &g.ready) else {
                g.token = None;
                return Err(Stuck::Deadlock);
            };
            g.ready.remove(&next);
            self.hand_to(g, me, Some(next));
        }
        self.wait_turn(me, aborted)
    }

    /// The barrier at `key` opened: its waiters may run again.
    pub(crate) fn release(&self, key: usize) {
        let mut g = self.lock();
        if let Some(waiters) = g.blocked.remove(&key) {
            g.ready.extend(waiters);
        }
    }

    /// `me` has finished: the token goes to another thread. Returns `Err` if the threads left
    /// all wait at barriers that can no longer open.
    pub(crate) fn exit(&self, me: u32) -> Result<(), Stuck> {
        let mut g = self.lock();
        let g = &mut *g;
        g.ready.remove(&me);
        if g.token != Some(me) {
            return Ok(());
        }
        let next = pick(&mut g.rng, &g.ready);
        if let Some(n) = next {
            g.ready.remove(&n);
        }
        self.hand_to(g, me, next);
        if next.is_none() && g.blocked.values().any(|w| !w.is_empty()) {
            return Err(Stuck::Deadlock);
        }
        Ok(())
    }

    /// Runs `op` on the machine for `me`, with real memory at `addr` brought in first (a value
    /// changed behind the machine's back becomes its newest write).
    fn with_machine<R>(
        &self,
        addr: Option<(usize, Width)>,
        op: impl FnOnce(&mut Machine, &mut Seeded) -> R,
    ) -> R {
        let mut g = self.lock();
        let g = &mut *g;
        if let Some((a, w)) = addr {
            // SAFETY: the caller's address, valid for a `w` access (the atomic module's
            // contract); only the token holder runs, so nothing races with it.
            let real = unsafe { read(a, w) };
            g.machine.init(a as u64, real);
            if g.machine.latest(a as u64) != real {
                g.machine.overwrite(a as u64, real);
            }
        }
        g.stats.operations += 1;
        op(&mut g.machine, &mut g.rng)
    }

    /// A load by `me` of the `w` bytes at `addr`, at system scope.
    pub(crate) fn load(&self, me: u32, addr: usize, w: Width, kind: LoadKind) -> u64 {
        self.load_scoped(me, addr, w, kind, ThreadScope::System)
    }

    /// A load by `me` of the `w` bytes at `addr`, at `scope`.
    pub(crate) fn load_scoped(
        &self,
        me: u32,
        addr: usize,
        w: Width,
        kind: LoadKind,
        scope: ThreadScope,
    ) -> u64 {
        let (v, stale) = self.with_machine(Some((addr, w)), |m, rng| {
            let v = m.load_scoped(me as usize, addr as u64, kind, scope, rng);
            (v, v != m.latest(addr as u64))
        });
        if stale {
            self.lock().stats.stale_loads += 1;
        }
        v
    }

    /// A store by `me` at system scope; real memory gets the value (every store goes after
    /// the others).
    pub(crate) fn store(&self, me: u32, addr: usize, w: Width, value: u64, kind: StoreKind) {
        self.store_scoped(me, addr, w, value, kind, ThreadScope::System);
    }

    /// A store by `me` at `scope`; real memory gets the newest write.
    pub(crate) fn store_scoped(
        &self,
        me: u32,
        addr: usize,
        w: Width,
        value: u64,
        kind: StoreKind,
        scope: ThreadScope,
    ) {
        self.with_machine(Some((addr, w)), |m, rng| {
            m.store_scoped(me as usize, addr as u64, value, kind, scope, rng);
            // SAFETY: as in `with_machine`.
            unsafe { write(addr, w, m.latest(addr as u64)) };
        });
    }

    /// A read-modify-write by `me` at `scope`; returns the value read. Real memory gets the
    /// newest write (which a narrow one that read past another block's update is not).
    pub(crate) fn rmw_scoped(
        &self,
        me: u32,
        addr: usize,
        w: Width,
        order: Order,
        scope: ThreadScope,
        f: impl FnOnce(u64) -> Option<u64>,
    ) -> u64 {
        self.with_machine(Some((addr, w)), |m, rng| {
            let old = m.rmw_scoped(me as usize, addr as u64, order, scope, f, rng);
            // SAFETY: as in `with_machine`.
            unsafe { write(addr, w, m.latest(addr as u64)) };
            old
        })
    }

    /// `me` arrives at the barrier at `key`, whose participants are inside `scope`.
    pub(crate) fn barrier_arrive(&self, me: u32, key: usize, scope: ThreadScope) {
        self.with_machine(None, |m, _| {
            m.barrier_arrive_scoped(me as usize, key, scope)
        });
    }

    /// `me` leaves the barrier at `key`, whose participants are inside `scope`.
    pub(crate) fn barrier_leave(&self, me: u32, key: usize, scope: ThreadScope) {
        self.with_machine(None, |m, _| m.barrier_leave_scoped(me as usize, key, scope));
    }

    /// A fence by `me` at `scope`.
    pub(crate) fn fence_scoped(&self, me: u32, kind: FenceKind, scope: ThreadScope) {
        self.with_machine(None, |m, _| m.fence_scoped(me as usize, kind, scope));
    }
}

/// A thread of `ready`, drawn from `rng`.
fn pick(rng: &mut Seeded, ready: &BTreeSet<u32>) -> Option<u32> {
    let n = ready.len();
    if n == 0 {
        return None;
    }
    ready.iter().nth(rng.choose(n)).copied()
}

/// Reads `w` bytes at `a`.
///
/// # Safety
/// `a` is valid and aligned for the read, and nothing writes it meanwhile.
unsafe fn read(a: usize, w: Width) -> u64 {
    // SAFETY: the caller's contract.
    unsafe {
        match w {
            Width::W32 => u64::from((a as *const u32).read_volatile()),
            Width::W64 => (a as *const u64).read_volatile(),
        }
    }
}

/// Writes the low `w` bytes of `v` at `a`.
///
/// # Safety
/// As [`read`], for a write.
unsafe fn write(a: usize, w: Width, v: u64) {
    // SAFETY: the caller's contract.
    unsafe {
        match w {
            Width::W32 => (a as *mut u32).write_volatile(v as u32),
            Width::W64 => (a as *mut u64).write_volatile(v),
        }
    }
}
