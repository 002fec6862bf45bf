//! The checker called from real threads, all at once, as the simulator will call it: the
//! memory operations are real too, made inside [`ThreadCheck::atomic`] where they synchronize.

use super::*;
use std::sync::atomic::{AtomicU32, Ordering};

/// Runs `body` on one OS thread per thread of a `blocks` × `threads` launch, each with its
/// checker side, and returns the report.
fn run(blocks: u32, threads: u32, body: impl Fn(&mut ThreadCheck) + Sync) -> Report {
    let (checker, l) = launch(blocks, threads);
    std::thread::scope(|s| {
        for b in 0..blocks {
            for i in 0..threads {
                let mut t = l.thread(tid(b, i)).unwrap();
                let body = &body;
                s.spawn(move || body(&mut t));
            }
        }
    });
    drop(l);
    checker.report()
}

#[test]
fn the_lost_update_races_on_real_threads() {
    let x = Bytes::global(X, 4);
    let lines = std::sync::OnceLock::new();
    let r = run(4, 16, |t| {
        let (load, store) = add_one(t, x, Mode::Plain);
        lines.get_or_init(|| (load.line(), store.line()));
    });
    let &(ld, st) = lines.get().unwrap();
    assert_eq!(
        found(&r),
        [
            (FindingKind::DataRace, ld, st),
            (FindingKind::DataRace, st, st)
        ],
        "{r}"
    );
    // Every thread's store races with every other's (as far as the kept records go).
    let total: u64 = r.findings.iter().map(|f| f.count).sum();
    assert!(total >= 63, "{r}");
}

#[test]
fn atomic_adds_on_real_threads_are_clean_and_add_up() {
    let count = AtomicU32::new(0);
    let x = Bytes::of(count.as_ptr(), Space::Global);
    let r = run(4, 16, |t| {
        let site = Location::caller();
        t.atomic(
            AccessKind::Rmw,
            x,
            Order::Relaxed,
            ThreadScope::Device,
            site,
            || count.fetch_add(1, Ordering::Relaxed),
        );
    });
    assert_eq!(count.load(Ordering::Relaxed), 64);
    assert!(r.is_clean(), "{r}");
    assert_eq!(r.events, 64);
}

/// A spinlock around `counter += 1` on 16 threads of 4 blocks, its lock taken with `take` and
/// given back with `give`.
fn locked_counter(take: Order, give: Order) -> Report {
    let (lock, counter) = (AtomicU32::new(0), AtomicU32::new(0));
    let l = Bytes::of(lock.as_ptr(), Space::Global);
    let c = Bytes::of(counter.as_ptr(), Space::Global);
    let r = run(4, 4, |t| {
        let site = Location::caller();
        while !t.atomic(AccessKind::Rmw, l, take, ThreadScope::Device, site, || {
            lock.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        }) {
            std::thread::yield_now();
        }
        // The critical section: plain accesses, as the lesson's `x += 1.0`.
        plain(t, AccessKind::Load, c);
        counter.fetch_add(1, Ordering::Relaxed);
        plain(t, AccessKind::Store, c);
        let site = Location::caller();
        t.atomic(
            AccessKind::Store,
            l,
            give,
            ThreadScope::Device,
            site,
            || lock.store(0, Ordering::Release),
        );
    });
    assert_eq!(counter.load(Ordering::Relaxed), 16);
    r
}

#[test]
fn a_spinlock_with_acquire_and_release_is_clean_on_real_threads() {
    let r = locked_counter(Order::Acquire, Order::Release);
    assert!(r.is_clean(), "{r}");
}

#[test]
fn a_spinlock_without_ordering_leaves_its_critical_section_racing() {
    // The lock blog's missing `__threadfence`: the lock word is atomic, nothing else is ordered.
    let r = locked_counter(Order::Relaxed, Order::Relaxed);
    assert!(!r.findings.is_empty(), "{r}");
    assert!(
        r.findings
            .iter()
            .all(|f| f.kind == FindingKind::DataRace && f.first.mode == Mode::Plain)
    );
}

#[test]
fn message_passing_on_real_threads() {
    for (publish, observe, races) in [
        (Order::Release, Order::Acquire, false),
        (Order::Relaxed, Order::Relaxed, true),
    ] {
        let flag = AtomicU32::new(0);
        let f = Bytes::of(flag.as_ptr(), Space::Global);
        let data = Bytes::global(X, 4);
        let r = run(2, 1, |t| {
            let site = Location::caller();
            if t.id().block == 0 {
                plain(t, AccessKind::Store, data);
                t.atomic(
                    AccessKind::Store,
                    f,
                    publish,
                    ThreadScope::Device,
                    site,
                    || flag.store(1, Ordering::Release),
                );
            } else {
                while t.atomic(
                    AccessKind::Load,
                    f,
                    observe,
                    ThreadScope::Device,
                    site,
                    || flag.load(Ordering::Acquire),
                ) == 0
                {
                    std::thread::yield_now();
                }
                plain(t, AccessKind::Load, data);
            }
        });
        assert_eq!(
            !r.findings.is_empty(),
            races,
            "{publish:?}/{observe:?}: {r}"
        );
        assert!(r.findings.iter().all(|f| f.first.bytes == data));
    }
}

#[test]
fn a_block_barrier_on_real_threads() {
    const N: u32 = 32;
    for barrier_first in [true, false] {
        let barrier = std::sync::Barrier::new(N as usize);
        let bar = SyncId {
            kind: SyncKind::BlockBarrier,
            index: 0,
        };
        let s = |i: u32| Bytes::shared(X + 4 * (i % N) as usize, 4);
        let sync = |t: &mut ThreadCheck| {
            t.arrive(bar, 0, ThreadScope::Block);
            barrier.wait();
            t.wait(bar, 0, ThreadScope::Block);
        };
        let r = run(1, N, |t| {
            let i = t.id().thread;
            plain(t, AccessKind::Store, s(i));
            if barrier_first {
                sync(t);
            }
            plain(t, AccessKind::Load, s(i + 1));
            if !barrier_first {
                sync(t);
            }
        });
        if barrier_first {
            assert!(r.is_clean(), "{r}");
        } else {
            // Each neighbouring pair races once, whichever of the two came second saw it.
            // (A load that came before its neighbour's store also read the word uninitialized.)
            assert_eq!(
                r.of_kind(FindingKind::DataRace)
                    .map(|f| f.count)
                    .sum::<u64>(),
                N as u64,
                "{r}"
            );
        }
    }
}
