//! The weak memory's scopes: what a `.cta` release, fence or read-modify-write does between
//! blocks, against the same at `.gpu` scope and within one block.

use super::chooser::Chooser;
use super::machine::{FenceKind, LoadKind, Machine, StoreKind};
use crate::atomic::Order;
use crate::sim::check::ThreadScope::{self, Block, Device};

const X: u64 = 0;
const Y: u64 = 1;

/// Picks the last choice every time: a load's newest write, a read-modify-write's oldest.
struct Last;

impl Chooser for Last {
    fn choose(&mut self, n: usize) -> usize {
        n - 1
    }
}

/// Picks the first choice every time: a load's oldest write, a read-modify-write's newest.
struct First;

impl Chooser for First {
    fn choose(&mut self, _n: usize) -> usize {
        0
    }
}

/// Two threads, in two blocks (`apart`) or in one.
fn two(apart: bool) -> Machine {
    Machine::new(2).with_blocks(if apart { 1 } else { 2 })
}

/// Message passing with a release store and an acquire load of the flag at `scope`, the data
/// relaxed: what thread 1 reads of the data after it saw the flag, reading the oldest write it
/// may.
fn mp_release_acquire(apart: bool, scope: ThreadScope) -> u64 {
    let mut m = two(apart);
    m.store_scoped(0, X, 1, StoreKind::Relaxed, Device, &mut First);
    m.store_scoped(0, Y, 1, StoreKind::Release, scope, &mut First);
    assert_eq!(m.load_scoped(1, Y, LoadKind::Acquire, scope, &mut Last), 1);
    m.load_scoped(1, X, LoadKind::Relaxed, Device, &mut First)
}

#[test]
fn a_block_scope_release_reaches_its_own_block_only() {
    assert_eq!(
        mp_release_acquire(false, Block),
        1,
        "one block: synchronized"
    );
    assert_eq!(
        mp_release_acquire(true, Device),
        1,
        "two blocks at .gpu: synchronized"
    );
    assert_eq!(
        mp_release_acquire(true, Block),
        0,
        "two blocks at .cta: the data may be stale"
    );
}

/// Message passing with relaxed accesses and fences of `scope`: what thread 1 reads of the
/// data after it saw the flag.
fn mp_fences(apart: bool, scope: ThreadScope) -> u64 {
    let mut m = two(apart);
    m.store_scoped(0, X, 1, StoreKind::Relaxed, Device, &mut First);
    m.fence_scoped(0, FenceKind::AcqRel, scope);
    m.store_scoped(0, Y, 1, StoreKind::Relaxed, Device, &mut First);
    assert_eq!(m.load_scoped(1, Y, LoadKind::Relaxed, Device, &mut Last), 1);
    m.fence_scoped(1, FenceKind::AcqRel, scope);
    m.load_scoped(1, X, LoadKind::Relaxed, Device, &mut First)
}

#[test]
fn a_block_scope_fence_orders_only_inside_its_block() {
    assert_eq!(mp_fences(false, Block), 1);
    assert_eq!(mp_fences(true, Device), 1);
    assert_eq!(mp_fences(true, Block), 0);
}

/// Store buffering with `fence.sc` of `scope`: the two loads' values, each the oldest allowed.
fn sb_sc(apart: bool, scope: ThreadScope) -> (u64, u64) {
    let mut m = two(apart);
    m.store_scoped(0, X, 1, StoreKind::Relaxed, Device, &mut First);
    m.store_scoped(1, Y, 1, StoreKind::Relaxed, Device, &mut First);
    m.fence_scoped(0, FenceKind::Sc, scope);
    m.fence_scoped(1, FenceKind::Sc, scope);
    let a = m.load_scoped(0, Y, LoadKind::Relaxed, Device, &mut First);
    let b = m.load_scoped(1, X, LoadKind::Relaxed, Device, &mut First);
    (a, b)
}

#[test]
fn block_scope_sc_fences_of_two_blocks_do_not_meet() {
    // The second fence meets the first: its thread reads the other's store.
    assert_eq!(sb_sc(false, Block).1, 1);
    assert_eq!(sb_sc(true, Device).1, 1);
    assert_eq!(
        sb_sc(true, Block),
        (0, 0),
        "SB's weak outcome, allowed at .cta"
    );
}

/// Two threads add 1 to X with read-modify-writes of `scope`, the second reading the oldest
/// write it may: X at the end.
fn two_adds(apart: bool, scope: ThreadScope) -> u64 {
    let mut m = two(apart);
    let add = |v: u64| Some(v + 1);
    m.rmw_scoped(0, X, Order::Relaxed, scope, add, &mut Last);
    m.rmw_scoped(1, X, Order::Relaxed, scope, add, &mut Last);
    m.latest(X)
}

#[test]
fn a_block_scope_counter_shared_by_two_blocks_may_lose_an_update() {
    assert_eq!(two_adds(false, Block), 2, "one block: atomic");
    assert_eq!(two_adds(true, Device), 2, "two blocks at .gpu: atomic");
    assert_eq!(
        two_adds(true, Block),
        1,
        "two blocks at .cta: one update lost"
    );
}

#[test]
fn a_lost_update_is_placed_before_the_write_it_read_past() {
    let mut m = two(true);
    let add = |v: u64| Some(v + 1);
    m.rmw_scoped(0, X, Order::Relaxed, Block, add, &mut Last);
    // Thread 1 read the initial 0 past thread 0's 1; its 1 goes between them, so the newest
    // write is still thread 0's, and a third add by thread 0 (in its own block) reads it.
    m.rmw_scoped(1, X, Order::Relaxed, Block, add, &mut Last);
    assert_eq!(
        m.rmw_scoped(0, X, Order::Relaxed, Block, add, &mut First),
        1
    );
    assert_eq!(m.latest(X), 2);
}
