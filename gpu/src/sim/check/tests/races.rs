//! Races and their absence, without synchronization: plain, atomic, scoped, of any width; how
//! findings are counted and bounded.

use super::*;

#[test]
fn the_lost_update_is_a_data_race_with_both_lines() {
    // The race lesson's `add_one`: two threads of different blocks, `x[0] += 1` each.
    let (checker, l) = launch(2, 1);
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(1, 0)]);
    let x = Bytes::global(X, 4);
    let (load, store) = add_one(&mut a, x, Mode::Plain);
    add_one(&mut b, x, Mode::Plain);
    let r = finish(&checker, l, [a, b]);
    let (ld, st) = (load.line(), store.line());
    // b's load after a's store (read-after-write), b's store after a's store (write-after-
    // write). a's store made a's load forgotten: whatever would race with the load races with
    // the store.
    assert_eq!(
        found(&r),
        [
            (FindingKind::DataRace, ld, st),
            (FindingKind::DataRace, st, st)
        ],
        "{r}"
    );
    let raw = r
        .findings
        .iter()
        .find(|f| f.second.kind == AccessKind::Load);
    let raw = raw.expect("a read-after-write finding");
    assert_eq!(
        (raw.first.thread, raw.second.thread),
        (tid(0, 0), tid(1, 0))
    );
    assert_eq!(
        (raw.first.kind, raw.first.mode),
        (AccessKind::Store, Mode::Plain)
    );
    assert_eq!((raw.second.bytes, raw.second.site), (x, load));
    assert!(r.findings.iter().all(|f| f.count == 1));
}

#[test]
fn device_scope_atomic_adds_do_not_race() {
    let (checker, l) = launch(2, 2);
    let mut ts = threads(&l, [tid(0, 0), tid(0, 1), tid(1, 0), tid(1, 1)]);
    for t in &mut ts {
        atomic_add(t, Bytes::global(X, 4), Order::Relaxed, ThreadScope::Device);
    }
    let r = finish(&checker, l, ts);
    assert!(r.is_clean(), "{r}");
    assert_eq!(r.events, 4);
}

#[test]
fn a_block_scope_counter_shared_by_two_blocks_is_a_scope_race() {
    let (checker, l) = launch(2, 1);
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(1, 0)]);
    let x = Bytes::global(X, 4);
    let first = atomic_add(&mut a, x, Order::Relaxed, ThreadScope::Block);
    let second = atomic_add(&mut b, x, Order::Relaxed, ThreadScope::Block);
    let r = finish(&checker, l, [a, b]);
    assert_eq!(
        found(&r),
        [(FindingKind::ScopeRace, first.line(), second.line())],
        "{r}"
    );
    let f = &r.findings[0];
    let cta = Mode::rmw(Order::Relaxed, ThreadScope::Block);
    assert_eq!((f.first.mode, f.second.mode), (cta, cta));
}

#[test]
fn a_block_scope_counter_within_one_block_does_not_race() {
    let (checker, l) = launch(2, 2);
    let [mut a, mut b] = threads(&l, [tid(1, 0), tid(1, 1)]);
    // (In global memory: a shared word would be read uninitialized by the first add.)
    let x = Bytes::global(X, 4);
    atomic_add(&mut a, x, Order::Relaxed, ThreadScope::Block);
    atomic_add(&mut b, x, Order::Relaxed, ThreadScope::Block);
    let r = finish(&checker, l, [a, b]);
    assert!(r.is_clean(), "{r}");
}

#[test]
fn one_narrow_scope_is_enough_for_a_scope_race() {
    // A device-scope add and a block-scope one across blocks: the block-scope one does not
    // include the other thread, whichever comes first.
    for narrow_first in [true, false] {
        let (checker, l) = launch(2, 1);
        let [mut a, mut b] = threads(&l, [tid(0, 0), tid(1, 0)]);
        let x = Bytes::global(X, 4);
        let (sa, sb) = if narrow_first {
            (ThreadScope::Block, ThreadScope::Device)
        } else {
            (ThreadScope::Device, ThreadScope::Block)
        };
        atomic_add(&mut a, x, Order::Relaxed, sa);
        atomic_add(&mut b, x, Order::Relaxed, sb);
        let r = finish(&checker, l, [a, b]);
        assert_eq!(r.of_kind(FindingKind::ScopeRace).count(), 1, "{r}");
    }
}

#[test]
fn a_plain_read_of_an_atomic_counter_is_a_data_race() {
    let (checker, l) = launch(2, 1);
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(1, 0)]);
    let x = Bytes::global(X, 4);
    let add = atomic_add(&mut a, x, Order::Relaxed, ThreadScope::Device);
    let read = plain(&mut b, AccessKind::Load, x);
    let r = finish(&checker, l, [a, b]);
    assert_eq!(
        found(&r),
        [(FindingKind::DataRace, add.line(), read.line())],
        "{r}"
    );
}

#[test]
fn an_atomic_covering_other_bytes_than_another_races_with_it() {
    // PTX: two strong accesses are morally strong only if they overlap completely.
    let (checker, l) = launch(2, 1);
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(1, 0)]);
    atomic_add(
        &mut a,
        Bytes::global(X, 8),
        Order::Relaxed,
        ThreadScope::Device,
    );
    atomic_add(
        &mut b,
        Bytes::global(X + 4, 4),
        Order::Relaxed,
        ThreadScope::Device,
    );
    let r = finish(&checker, l, [a, b]);
    assert_eq!(r.of_kind(FindingKind::DataRace).count(), 1, "{r}");
}

#[test]
fn an_eight_byte_write_races_with_a_read_of_its_upper_half() {
    let (checker, l) = launch(1, 2);
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(0, 1)]);
    let write = plain(&mut a, AccessKind::Store, Bytes::global(X, 8));
    let read = plain(&mut b, AccessKind::Load, Bytes::global(X + 4, 4));
    let r = finish(&checker, l, [a, b]);
    assert_eq!(
        found(&r),
        [(FindingKind::DataRace, write.line(), read.line())],
        "{r}"
    );
    let f = &r.findings[0];
    assert_eq!((f.first.bytes.width, f.second.bytes.addr), (8, X + 4));
}

#[test]
fn accesses_to_disjoint_bytes_of_one_granule_do_not_race() {
    let (checker, l) = launch(1, 2);
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(0, 1)]);
    plain(&mut a, AccessKind::Store, Bytes::global(X, 4));
    plain(&mut b, AccessKind::Load, Bytes::global(X + 4, 4));
    plain(&mut b, AccessKind::Store, Bytes::global(X + 4, 2));
    plain(&mut a, AccessKind::Store, Bytes::global(X + 3, 1));
    let r = finish(&checker, l, [a, b]);
    assert!(r.is_clean(), "{r}");
}

#[test]
fn accesses_across_granules_meet_on_the_bytes_they_share() {
    // A 16-byte vector store at an address 4 bytes into a granule spans three granules; a
    // 2-byte read of its last two bytes races with it, a read just past it does not.
    let (checker, l) = launch(1, 2);
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(0, 1)]);
    let write = plain(&mut a, AccessKind::Store, Bytes::global(X + 4, 16));
    let read = plain(&mut b, AccessKind::Load, Bytes::global(X + 18, 2));
    plain(&mut b, AccessKind::Load, Bytes::global(X + 20, 4));
    plain(&mut b, AccessKind::Load, Bytes::global(X, 4));
    let r = finish(&checker, l, [a, b]);
    assert_eq!(
        found(&r),
        [(FindingKind::DataRace, write.line(), read.line())],
        "{r}"
    );
}

#[test]
fn a_later_write_forgets_an_earlier_one_only_on_its_own_bytes() {
    // a writes 8 bytes, then (ordered after it, same thread) 4 of them again: the other 4 still
    // remember the first write, and a read of them by b races with it.
    let (checker, l) = launch(1, 2);
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(0, 1)]);
    let wide = plain(&mut a, AccessKind::Store, Bytes::global(X, 8));
    let narrow = plain(&mut a, AccessKind::Store, Bytes::global(X, 4));
    let upper = plain(&mut b, AccessKind::Load, Bytes::global(X + 4, 4));
    let lower = plain(&mut b, AccessKind::Load, Bytes::global(X, 2));
    let r = finish(&checker, l, [a, b]);
    assert_eq!(
        found(&r),
        [
            (FindingKind::DataRace, wide.line(), upper.line()),
            (FindingKind::DataRace, narrow.line(), lower.line()),
        ],
        "{r}"
    );
}

#[test]
fn a_wider_atomic_does_not_make_a_narrower_earlier_one_forgotten() {
    // Block 0's thread adds at block scope, then at device scope; block 1's device-scope add
    // still races with the first: the second one's scope would have included it.
    let (checker, l) = launch(2, 1);
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(1, 0)]);
    let x = Bytes::global(X, 4);
    let narrow = atomic_add(&mut a, x, Order::Relaxed, ThreadScope::Block);
    atomic_add(&mut a, x, Order::Relaxed, ThreadScope::Device);
    let other = atomic_add(&mut b, x, Order::Relaxed, ThreadScope::Device);
    let r = finish(&checker, l, [a, b]);
    assert_eq!(
        found(&r),
        [(FindingKind::ScopeRace, narrow.line(), other.line())],
        "{r}"
    );
}

#[test]
fn one_finding_per_pair_of_lines_counts_its_repeats() {
    let (checker, l) = launch(1, 8);
    let x = Bytes::global(X, 4);
    let mut ts = threads(&l, std::array::from_fn::<_, 8, _>(|i| tid(0, i as u32)));
    for t in &mut ts {
        atomic_add(t, x, Order::Relaxed, ThreadScope::Device);
    }
    let read = plain(&mut ts[0], AccessKind::Load, x);
    let r = finish(&checker, l, ts);
    assert_eq!(r.findings.len(), 1, "{r}");
    // Seven other threads' adds, each unordered with thread 0's read.
    assert_eq!(r.findings[0].count, 7);
    assert_eq!(r.findings[0].second.site, read);
}

#[test]
fn findings_past_the_bound_are_counted_not_kept() {
    let checker = Checker::new(Options {
        max_findings: 3,
        ..Options::default()
    });
    let l = checker.launch(Shape::new(1, 2)).unwrap();
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(0, 1)]);
    let x = Bytes::global(X, 4);
    let write = plain(&mut a, AccessKind::Store, x);
    // Five reads on five different columns: five pairs of sites.
    let sites: [Site; 5] = [
        Location::caller(),
        Location::caller(),
        Location::caller(),
        Location::caller(),
        Location::caller(),
    ];
    for site in sites {
        b.access(AccessKind::Load, x, Mode::Plain, site);
    }
    let r = finish(&checker, l, [a, b]);
    assert_eq!((r.findings.len(), r.dropped), (3, 2), "{r}");
    assert!(r.findings.iter().all(|f| f.first.site == write));
    assert!(!r.is_clean());
}

#[test]
fn volatile_counts_as_relaxed_at_system_scope_or_as_plain() {
    for (volatile, races) in [(VolatileAs::RelaxedSystem, 0), (VolatileAs::Plain, 1)] {
        let checker = Checker::new(Options {
            volatile,
            ..Options::default()
        });
        let l = checker.launch(Shape::new(2, 1)).unwrap();
        let [mut a, mut b] = threads(&l, [tid(0, 0), tid(1, 0)]);
        let x = Bytes::global(X, 4);
        // The grid-barrier article: an atomic add, and a volatile spin on the same counter.
        atomic_add(&mut a, x, Order::Relaxed, ThreadScope::Device);
        b.access(AccessKind::Load, x, Mode::Volatile, Location::caller());
        let r = finish(&checker, l, [a, b]);
        assert_eq!(r.findings.len(), races, "{volatile:?}: {r}");
    }
}

#[test]
fn concurrent_readers_past_the_bound_are_forgotten_and_counted() {
    let checker = Checker::new(Options {
        records_per_granule: 2,
        ..Options::default()
    });
    let l = checker.launch(Shape::new(1, 5)).unwrap();
    let mut ts = threads(&l, std::array::from_fn::<_, 5, _>(|i| tid(0, i as u32)));
    let x = Bytes::global(X, 4);
    for t in &mut ts[..4] {
        plain(t, AccessKind::Load, x);
    }
    // The two newest reads are still there to race with the write.
    plain(&mut ts[4], AccessKind::Store, x);
    let r = finish(&checker, l, ts);
    assert_eq!((r.forgotten, r.findings[0].count), (2, 2), "{r}");
}

#[test]
fn checking_stops_at_the_shadow_bound_and_says_so() {
    let checker = Checker::new(Options {
        shadow_bytes: 4096,
        ..Options::default()
    });
    let l = checker.launch(Shape::new(1, 1)).unwrap();
    let [mut t] = threads(&l, [tid(0, 0)]);
    for i in 0..1000 {
        plain(&mut t, AccessKind::Store, Bytes::global(X + 8 * i, 8));
    }
    let r = finish(&checker, l, [t]);
    assert!(
        matches!(r.stopped, Some(StopReason::ShadowBytes { limit: 4096 })),
        "{r}"
    );
    assert!(r.unchecked > 0 && r.unchecked < 1000, "{r}");
    assert!(!r.is_clean());
}

/// A spin's load, repeated: `times` plain loads of `x` from one line.
fn spin_reads(t: &mut ThreadCheck, x: Bytes, times: usize) -> Site {
    let site: Site = Location::caller();
    for _ in 0..times {
        t.access(AccessKind::Load, x, Mode::Plain, site);
    }
    site
}

#[test]
fn a_repeated_access_at_one_epoch_is_checked_once_and_races_as_the_first_did() {
    let (checker, l) = launch(1, 2);
    let x = Bytes::global(X, 4);
    let [mut reader, mut writer] = threads(&l, [tid(0, 0), tid(0, 1)]);
    let read = spin_reads(&mut reader, x, 5);
    let write = plain(&mut writer, AccessKind::Store, x);
    // Later repeats, still at the reader's epoch: the write races with them as with the first.
    spin_reads(&mut reader, x, 5);
    let r = finish(&checker, l, [reader, writer]);
    assert_eq!(
        found(&r),
        [(
            FindingKind::DataRace,
            read.line().min(write.line()),
            read.line().max(write.line())
        )],
        "{r}"
    );
    // Every repeat, before the write and after it, is the first read's record: the race is
    // found once, when the write meets that record.
    assert_eq!(r.findings[0].count, 1, "{r}");
    assert_eq!(r.events, 11, "every repeat is still counted as an event");
}

#[test]
fn a_repeat_after_a_release_is_checked_again() {
    let (checker, l) = launch(2, 1);
    let (x, flag) = (Bytes::global(X, 4), Bytes::global(FLAG, 4));
    let [mut a, mut b] = threads(&l, [tid(0, 0), tid(1, 0)]);
    // Thread a reads x, releases through `flag`, and reads x again from the same line: the
    // second read is a new epoch. b acquires the flag and writes x: ordered after the first
    // read, not after the second.
    let site: Site = Location::caller();
    a.access(AccessKind::Load, x, Mode::Plain, site);
    a.atomic(
        AccessKind::Store,
        flag,
        Order::Release,
        ThreadScope::Device,
        site,
        || (),
    );
    a.access(AccessKind::Load, x, Mode::Plain, site);
    b.atomic(
        AccessKind::Load,
        flag,
        Order::Acquire,
        ThreadScope::Device,
        site,
        || (),
    );
    let write = plain(&mut b, AccessKind::Store, x);
    let r = finish(&checker, l, [a, b]);
    assert_eq!(r.of_kind(FindingKind::DataRace).count(), 1, "{r}");
    assert_eq!(r.findings[0].count, 1, "{r}");
    assert!(r.findings.iter().any(|f| f.second.site == write), "{r}");
}
