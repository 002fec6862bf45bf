//! Happens-before from barriers and phases: block, cluster and warp barriers, `mbarrier`s and
//! the bulk copies that complete on them, and a launch's end.

use super::*;

/// A block of `n` threads: each writes `s[tid]`, then reads `s[(tid + 1) % n]`, with the
/// block barrier where `barrier_first` puts it — before the reads, or after them.
fn neighbours(n: u32, barrier_first: bool) -> (Report, Site, Site) {
    let (checker, l) = launch(1, n);
    let mut ts: Vec<_> = (0..n).map(|i| l.thread(tid(0, i)).unwrap()).collect();
    let s = |i: u32| Bytes::shared(X + 4 * i as usize, 4);
    let bar = SyncId {
        kind: SyncKind::BlockBarrier,
        index: 0,
    };
    let (mut write, mut read) = (Location::caller(), Location::caller());
    for (i, t) in (0..n).zip(&mut ts) {
        write = plain(t, AccessKind::Store, s(i));
    }
    let sync = |ts: &mut Vec<ThreadCheck>| {
        ts.iter_mut()
            .for_each(|t| t.arrive(bar, 0, ThreadScope::Block));
        ts.iter_mut()
            .for_each(|t| t.wait(bar, 0, ThreadScope::Block));
    };
    if barrier_first {
        sync(&mut ts);
    }
    for (i, t) in (0..n).zip(&mut ts) {
        read = plain(t, AccessKind::Load, s((i + 1) % n));
    }
    if !barrier_first {
        sync(&mut ts);
    }
    drop(ts);
    drop(l);
    (checker.report(), write, read)
}

#[test]
fn a_block_barrier_orders_shared_writes_before_other_threads_reads() {
    let (r, ..) = neighbours(32, true);
    assert!(r.is_clean(), "{r}");
}

#[test]
fn reads_before_the_block_barrier_race_with_the_writes() {
    let (r, write, read) = neighbours(32, false);
    assert_eq!(
        found(&r),
        [(FindingKind::DataRace, write.line(), read.line())],
        "{r}"
    );
    assert_eq!(r.findings[0].count, 32, "every thread's read: {r}");
    assert_eq!(r.findings[0].first.bytes.space, Space::Shared);
}

#[test]
fn a_cluster_barrier_orders_its_blocks_and_no_others() {
    // Four blocks in clusters {0, 1}, {2, 3}: block 0 writes, every block arrives at its
    // cluster's barrier and waits, then blocks 1 and 2 read.
    let checker = Checker::new(Options::default());
    let shape = Shape::new(4, 1).with_clusters(vec![0, 0, 1, 1]).unwrap();
    let l = checker.launch(shape).unwrap();
    let mut ts = threads(&l, [tid(0, 0), tid(1, 0), tid(2, 0), tid(3, 0)]);
    let x = Bytes::shared(X, 4);
    let write = plain(&mut ts[0], AccessKind::Store, x);
    let cluster = |b: u32| SyncId {
        kind: SyncKind::ClusterBarrier,
        index: b as u64 / 2,
    };
    for (b, t) in (0..4).zip(&mut ts) {
        t.arrive(cluster(b), 0, ThreadScope::Cluster);
    }
    for (b, t) in (0..4).zip(&mut ts) {
        t.wait(cluster(b), 0, ThreadScope::Cluster);
    }
    plain(&mut ts[1], AccessKind::Load, x);
    let far = plain(&mut ts[2], AccessKind::Load, x);
    let r = finish(&checker, l, ts);
    assert_eq!(
        found(&r),
        [(FindingKind::DataRace, write.line(), far.line())],
        "{r}"
    );
}

#[test]
fn an_mbarrier_phase_carries_its_arrivals_and_a_copys_bytes_to_its_waiters() {
    // Thread 0 issues a bulk copy into s[0..64] completing on the mbarrier's phase 0 and arrives;
    // thread 1 arrives and waits on phase 0, then reads the copy's bytes and thread 0's write.
    let (checker, l) = launch(1, 2);
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(0, 1)]);
    let bar = SyncId {
        kind: SyncKind::MBarrier,
        index: 0x8000,
    };
    let stage = Bytes::shared(X, 64);
    let other = Bytes::shared(FLAG, 4);
    plain(&mut a, AccessKind::Store, other);
    a.bulk_write(stage, Location::caller(), bar, 0, ThreadScope::Block);
    a.arrive(bar, 0, ThreadScope::Block);
    let late = plain(&mut a, AccessKind::Store, Bytes::shared(FLAG + 8, 4));
    b.arrive(bar, 0, ThreadScope::Block);
    b.wait(bar, 0, ThreadScope::Block);
    plain(&mut b, AccessKind::Load, Bytes::shared(X + 60, 4));
    plain(&mut b, AccessKind::Load, other);
    let read_late = plain(&mut b, AccessKind::Load, Bytes::shared(FLAG + 8, 4));
    let r = finish(&checker, l, [a, b]);
    // Only the write made after the arrival races.
    assert_eq!(
        found(&r),
        [(FindingKind::DataRace, late.line(), read_late.line())],
        "{r}"
    );
}

#[test]
fn a_copys_bytes_alone_release_nothing_the_issuer_writes_after_them() {
    // No arrival by the issuing thread: the phase completes on the copy's bytes (and the other
    // thread's arrival), so the waiter sees the copy, not what the issuer wrote next.
    let (checker, l) = launch(1, 2);
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(0, 1)]);
    let bar = SyncId {
        kind: SyncKind::MBarrier,
        index: 0x8000,
    };
    let copy = Location::caller();
    a.bulk_write(Bytes::shared(X, 16), copy, bar, 3, ThreadScope::Block);
    let after = plain(&mut a, AccessKind::Store, Bytes::shared(FLAG, 4));
    b.arrive(bar, 3, ThreadScope::Block);
    b.wait(bar, 3, ThreadScope::Block);
    plain(&mut b, AccessKind::Load, Bytes::shared(X, 16));
    let read = plain(&mut b, AccessKind::Load, Bytes::shared(FLAG, 4));
    // Waiting on another phase acquires nothing: the copy's bytes race too.
    b.wait(bar, 4, ThreadScope::Block);
    let r = finish(&checker, l, [a, b]);
    assert_eq!(
        found(&r),
        [(FindingKind::DataRace, after.line(), read.line())],
        "{r}"
    );
    let (checker, l) = launch(1, 2);
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(0, 1)]);
    a.bulk_write(Bytes::shared(X, 16), copy, bar, 3, ThreadScope::Block);
    b.wait(bar, 2, ThreadScope::Block);
    let early = plain(&mut b, AccessKind::Load, Bytes::shared(X, 16));
    let r = finish(&checker, l, [a, b]);
    assert_eq!(
        found(&r),
        [(FindingKind::DataRace, copy.line(), early.line())],
        "{r}"
    );
    assert_eq!(r.findings[0].first.mode, Mode::BulkCopy);
}

#[test]
fn a_copys_bytes_do_not_pass_on_what_its_issuer_acquired() {
    // Thread 2 writes y and meets thread 0 at a barrier; thread 0 then issues a copy completing
    // on the mbarrier; thread 1, waiting on the mbarrier, sees the copy but not y.
    let (checker, l) = launch(1, 3);
    let [mut a, mut b, mut c] = threads(&l, [tid(0, 0), tid(0, 1), tid(0, 2)]);
    let (bar, mbar) = (
        SyncId {
            kind: SyncKind::Other,
            index: 1,
        },
        SyncId {
            kind: SyncKind::MBarrier,
            index: 2,
        },
    );
    let y = Bytes::shared(FLAG, 4);
    let write = plain(&mut c, AccessKind::Store, y);
    c.arrive(bar, 0, ThreadScope::Block);
    a.wait(bar, 0, ThreadScope::Block);
    a.bulk_write(
        Bytes::shared(X, 16),
        Location::caller(),
        mbar,
        0,
        ThreadScope::Block,
    );
    b.wait(mbar, 0, ThreadScope::Block);
    plain(&mut b, AccessKind::Load, Bytes::shared(X, 16));
    let read = plain(&mut b, AccessKind::Load, y);
    let r = finish(&checker, l, [a, b, c]);
    assert_eq!(
        found(&r),
        [(FindingKind::DataRace, write.line(), read.line())],
        "{r}"
    );
}

#[test]
fn a_warp_sync_orders_only_the_lanes_that_take_part() {
    let (checker, l) = launch(1, 3);
    let mut ts = threads(&l, [tid(0, 0), tid(0, 1), tid(0, 2)]);
    let warp = SyncId {
        kind: SyncKind::Warp,
        index: 0,
    };
    let x = Bytes::shared(X, 4);
    let write = plain(&mut ts[0], AccessKind::Store, x);
    // Lanes 0 and 1 meet; lane 2 does not.
    for t in &mut ts[..2] {
        t.arrive(warp, 0, ThreadScope::Block);
    }
    for t in &mut ts[..2] {
        t.wait(warp, 0, ThreadScope::Block);
    }
    plain(&mut ts[1], AccessKind::Load, x);
    let outside = plain(&mut ts[2], AccessKind::Load, x);
    let r = finish(&checker, l, ts);
    assert_eq!(
        found(&r),
        [(FindingKind::DataRace, write.line(), outside.line())],
        "{r}"
    );
}

#[test]
fn a_launchs_end_orders_it_before_the_next() {
    let checker = Checker::new(Options::default());
    let x = Bytes::global(X, 4);
    let l = checker.launch(Shape::new(2, 1)).unwrap();
    let [mut a] = threads(&l, [tid(0, 0)]);
    plain(&mut a, AccessKind::Store, x);
    drop((a, l));
    let l = checker.launch(Shape::new(2, 1)).unwrap();
    let [mut b] = threads(&l, [tid(1, 0)]);
    plain(&mut b, AccessKind::Load, x);
    drop((b, l));
    let r = checker.report();
    assert!(r.is_clean(), "{r}");
    assert_eq!((r.launches, r.events), (2, 2));
}
