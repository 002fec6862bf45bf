//! Happens-before from synchronization: release/acquire accesses, fences, barriers, phases —
//! each with its scope.

use super::*;
use crate::sim::weak::FenceKind;

/// Message passing: `a` writes the data, then publishes the flag with `publish`; `b` reads the
/// flag with `observe`, then the data. `a` and `b` are threads `ids` of a 2 × 2 launch.
fn message_passing(
    ids: [ThreadId; 2],
    publish: impl FnOnce(&mut ThreadCheck),
    observe: impl FnOnce(&mut ThreadCheck),
) -> (Report, Site, Site) {
    let (checker, l) = launch(2, 2);
    let [mut a, mut b] = threads(&l, ids);
    let data = Bytes::global(X, 4);
    let write = plain(&mut a, AccessKind::Store, data);
    publish(&mut a);
    observe(&mut b);
    let read = plain(&mut b, AccessKind::Load, data);
    (finish(&checker, l, [a, b]), write, read)
}

fn flag(t: &mut ThreadCheck, kind: AccessKind, order: Order, scope: ThreadScope) {
    t.atomic(
        kind,
        Bytes::global(FLAG, 4),
        order,
        scope,
        Location::caller(),
        || (),
    );
}

/// What message passing finds: nothing, or the data race on the data.
fn data_race_on_data(r: &Report, write: Site, read: Site) -> bool {
    found(r) == [(FindingKind::DataRace, write.line(), read.line())]
}

const ACROSS_BLOCKS: [ThreadId; 2] = [ThreadId::new(0, 0), ThreadId::new(1, 0)];
const IN_ONE_BLOCK: [ThreadId; 2] = [ThreadId::new(1, 0), ThreadId::new(1, 1)];

#[test]
fn message_passing_with_release_and_acquire_is_clean() {
    let (r, ..) = message_passing(
        ACROSS_BLOCKS,
        |a| flag(a, AccessKind::Store, Order::Release, ThreadScope::Device),
        |b| flag(b, AccessKind::Load, Order::Acquire, ThreadScope::Device),
    );
    assert!(r.is_clean(), "{r}");
}

#[test]
fn message_passing_with_relaxed_flags_races_on_the_data() {
    let (r, write, read) = message_passing(
        ACROSS_BLOCKS,
        |a| flag(a, AccessKind::Store, Order::Relaxed, ThreadScope::Device),
        |b| flag(b, AccessKind::Load, Order::Relaxed, ThreadScope::Device),
    );
    assert!(data_race_on_data(&r, write, read), "{r}");
}

#[test]
fn a_block_scope_release_does_not_reach_another_block() {
    for (release, acquire) in [
        (ThreadScope::Block, ThreadScope::Device),
        (ThreadScope::Device, ThreadScope::Block),
    ] {
        let (r, write, read) = message_passing(
            ACROSS_BLOCKS,
            |a| flag(a, AccessKind::Store, Order::Release, release),
            |b| flag(b, AccessKind::Load, Order::Acquire, acquire),
        );
        // The data race, and the flag's scope race.
        assert!(found(&r).contains(&(FindingKind::DataRace, write.line(), read.line())));
        assert_eq!(r.of_kind(FindingKind::ScopeRace).count(), 1, "{r}");
    }
    let (r, ..) = message_passing(
        IN_ONE_BLOCK,
        |a| flag(a, AccessKind::Store, Order::Release, ThreadScope::Block),
        |b| flag(b, AccessKind::Load, Order::Acquire, ThreadScope::Block),
    );
    assert!(r.is_clean(), "{r}");
}

/// The fence-based pattern: plain write, `fence.acq_rel` (`release`), relaxed store of the flag;
/// relaxed load of the flag, `fence.acq_rel` (`acquire`), plain read.
fn fenced(ids: [ThreadId; 2], release: ThreadScope, acquire: ThreadScope) -> (Report, Site, Site) {
    message_passing(
        ids,
        |a| {
            a.fence(FenceKind::AcqRel, release);
            flag(a, AccessKind::Store, Order::Relaxed, ThreadScope::Device);
        },
        |b| {
            flag(b, AccessKind::Load, Order::Relaxed, ThreadScope::Device);
            b.fence(FenceKind::AcqRel, acquire);
        },
    )
}

#[test]
fn fences_around_relaxed_flags_synchronize() {
    let (r, ..) = fenced(ACROSS_BLOCKS, ThreadScope::Device, ThreadScope::Device);
    assert!(r.is_clean(), "{r}");
    let (r, ..) = fenced(IN_ONE_BLOCK, ThreadScope::Block, ThreadScope::Block);
    assert!(r.is_clean(), "{r}");
}

#[test]
fn a_block_scope_fence_across_blocks_leaves_the_data_racing() {
    for (release, acquire) in [
        (ThreadScope::Block, ThreadScope::Device),
        (ThreadScope::Device, ThreadScope::Block),
    ] {
        let (r, write, read) = fenced(ACROSS_BLOCKS, release, acquire);
        assert!(
            data_race_on_data(&r, write, read),
            "{release:?} {acquire:?}: {r}"
        );
    }
}

#[test]
fn a_fence_orders_nothing_on_the_wrong_side() {
    // The release fence after the flag's store, or the acquire fence before the flag's load:
    // nothing is ordered.
    let (r, write, read) = message_passing(
        ACROSS_BLOCKS,
        |a| {
            flag(a, AccessKind::Store, Order::Relaxed, ThreadScope::Device);
            a.fence(FenceKind::Release, ThreadScope::Device);
        },
        |b| {
            b.fence(FenceKind::Acquire, ThreadScope::Device);
            flag(b, AccessKind::Load, Order::Relaxed, ThreadScope::Device);
        },
    );
    assert!(data_race_on_data(&r, write, read), "{r}");
}

#[test]
fn a_relaxed_read_modify_write_continues_a_release_sequence_and_a_store_ends_it() {
    for (middle, races) in [(AccessKind::Rmw, false), (AccessKind::Store, true)] {
        let (checker, l) = launch(3, 1);
        let [mut a, mut m, mut b] = threads(&l, [tid(0, 0), tid(1, 0), tid(2, 0)]);
        let data = Bytes::global(X, 4);
        let write = plain(&mut a, AccessKind::Store, data);
        flag(
            &mut a,
            AccessKind::Store,
            Order::Release,
            ThreadScope::Device,
        );
        flag(&mut m, middle, Order::Relaxed, ThreadScope::Device);
        flag(
            &mut b,
            AccessKind::Load,
            Order::Acquire,
            ThreadScope::Device,
        );
        let read = plain(&mut b, AccessKind::Load, data);
        let r = finish(&checker, l, [a, m, b]);
        assert_eq!(data_race_on_data(&r, write, read), races, "{middle:?}: {r}");
        assert_eq!(r.findings.len(), races as usize, "{r}");
    }
}

#[test]
fn sc_fences_synchronize_in_the_order_they_ran_within_their_scope() {
    for (scope, races) in [(ThreadScope::Device, false), (ThreadScope::Block, true)] {
        let (r, write, read) = message_passing(
            ACROSS_BLOCKS,
            |a| a.fence(FenceKind::Sc, scope),
            |b| b.fence(FenceKind::Sc, scope),
        );
        assert_eq!(data_race_on_data(&r, write, read), races, "{scope:?}: {r}");
    }
}

#[test]
fn cluster_scope_atomics_are_morally_strong_within_the_cluster_only() {
    let checker = Checker::new(Options::default());
    let shape = Shape::new(4, 1).with_clusters(vec![0, 0, 1, 1]).unwrap();
    let l = checker.launch(shape).unwrap();
    let mut ts = threads(&l, [tid(0, 0), tid(1, 0), tid(2, 0)]);
    // Global memory: the first add of a shared word would read it uninitialized.
    let x = Bytes::global(X, 4);
    atomic_add(&mut ts[0], x, Order::Relaxed, ThreadScope::Cluster);
    atomic_add(&mut ts[1], x, Order::Relaxed, ThreadScope::Cluster);
    let r = finish(&checker, l, ts);
    assert!(r.is_clean(), "{r}");
    let l = checker.launch(Shape::new(4, 1).with_clusters(vec![0, 0, 1, 1]).unwrap());
    let l = l.unwrap();
    let mut ts = threads(&l, [tid(0, 0), tid(2, 0)]);
    atomic_add(&mut ts[0], x, Order::Relaxed, ThreadScope::Cluster);
    atomic_add(&mut ts[1], x, Order::Relaxed, ThreadScope::Cluster);
    let r = finish(&checker, l, ts);
    assert_eq!(r.of_kind(FindingKind::ScopeRace).count(), 1, "{r}");
}

#[test]
fn device_scope_does_not_reach_another_gpu() {
    let other_gpu = ThreadId {
        device: 1,
        block: 0,
        thread: 0,
    };
    let x = Bytes {
        addr: X,
        width: 4,
        space: Space::Host,
    };
    for (scope, races) in [(ThreadScope::System, 0), (ThreadScope::Device, 1)] {
        let checker = Checker::new(Options::default());
        let l = checker.launch(Shape::new(1, 1).with_devices(2)).unwrap();
        let mut ts = threads(&l, [tid(0, 0), other_gpu]);
        atomic_add(&mut ts[0], x, Order::Relaxed, scope);
        atomic_add(&mut ts[1], x, Order::Relaxed, scope);
        let r = finish(&checker, l, ts);
        assert_eq!(
            r.of_kind(FindingKind::ScopeRace).count(),
            races,
            "{scope:?}: {r}"
        );
    }
}
