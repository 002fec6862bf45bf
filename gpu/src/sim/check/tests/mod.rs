//! The checker's tests: synthetic event sequences, each a small kernel written as the events
//! the simulator would report for it — single-threaded with explicit thread ids where only the
//! order matters, on real threads where the concurrency does.

mod barriers;
mod races;
mod rate;
mod shape;
mod sync;
mod threads;

use super::*;
use crate::atomic::Order;
use core::panic::Location;

/// A source line of the test, as `#[track_caller]` gives it to the simulator.
type Site = &'static Location<'static>;

/// Thread `thread` of block `block` (device 0).
fn tid(block: u32, thread: u32) -> ThreadId {
    ThreadId::new(block, thread)
}

/// A checker with the default options, and a launch of `blocks` × `threads`.
fn launch(blocks: u32, threads: u32) -> (Checker, LaunchCheck) {
    let checker = Checker::new(Options::default());
    let launch = checker
        .launch(Shape::new(blocks, threads))
        .expect("a valid shape");
    (checker, launch)
}

/// The checker's sides of the threads `ids` of `launch`.
fn threads<const N: usize>(launch: &LaunchCheck, ids: [ThreadId; N]) -> [ThreadCheck; N] {
    ids.map(|id| launch.thread(id).expect("a thread of the launch"))
}

/// Ends the launch (dropping it and its threads) and returns the checker's report.
fn finish<const N: usize>(checker: &Checker, launch: LaunchCheck, ts: [ThreadCheck; N]) -> Report {
    drop(ts);
    drop(launch);
    checker.report()
}

/// Each finding as (kind, the two source lines, lower first), sorted.
fn found(report: &Report) -> Vec<(FindingKind, u32, u32)> {
    let mut v: Vec<_> = report
        .findings
        .iter()
        .map(|f| {
            let (a, b) = (f.first.site.line(), f.second.site.line());
            (f.kind, a.min(b), a.max(b))
        })
        .collect();
    v.sort();
    v
}

/// `x[0] += 1` as the race lesson's kernel does it — a load, then a store of the value plus
/// one — made with `mode`. Returns the two lines.
fn add_one(t: &mut ThreadCheck, x: Bytes, mode: Mode) -> (Site, Site) {
    let load: Site = Location::caller();
    t.access(AccessKind::Load, x, mode, load);
    let store: Site = Location::caller();
    t.access(AccessKind::Store, x, mode, store);
    (load, store)
}

/// `atomicAdd(x, 1)` with `order` at `scope`, on the caller's line. Returns it.
#[track_caller]
fn atomic_add(t: &mut ThreadCheck, x: Bytes, order: Order, scope: ThreadScope) -> Site {
    let site: Site = Location::caller();
    t.atomic(AccessKind::Rmw, x, order, scope, site, || ());
    site
}

/// A plain access of `x`, on the caller's line. Returns it.
#[track_caller]
fn plain(t: &mut ThreadCheck, kind: AccessKind, x: Bytes) -> Site {
    let site: Site = Location::caller();
    t.access(kind, x, Mode::Plain, site);
    site
}

/// An address of global memory: the simulator's are host addresses; the checker only compares
/// them.
const X: usize = 0x1000;
/// Another, in another granule.
const FLAG: usize = 0x2000;
