//! How many events a second one thread reports: a measure, never an assertion (see
//! `docs/checker.md` for the figures of a release build).

use super::*;
use crate::sim::weak::FenceKind;
use std::time::Instant;

/// Reports `rounds` × (a plain store and load of each of `words` words, a relaxed atomic add,
/// a release fence, an acquire load) from one thread, and returns events per second.
fn events_per_second(words: usize, rounds: usize) -> f64 {
    let (checker, l) = launch(1, 2);
    let [mut t] = threads(&l, [tid(0, 0)]);
    let site = Location::caller();
    let start = Instant::now();
    for _ in 0..rounds {
        for w in 0..words {
            let x = Bytes::global(X + 4 * w, 4);
            t.access(AccessKind::Store, x, Mode::Plain, site);
            t.access(AccessKind::Load, x, Mode::Plain, site);
        }
        let flag = Bytes::global(FLAG, 4);
        t.atomic(
            AccessKind::Rmw,
            flag,
            Order::Relaxed,
            ThreadScope::Device,
            site,
            || (),
        );
        t.fence(FenceKind::Release, ThreadScope::Device);
        t.atomic(
            AccessKind::Load,
            flag,
            Order::Acquire,
            ThreadScope::Device,
            site,
            || (),
        );
    }
    let secs = start.elapsed().as_secs_f64();
    let r = finish(&checker, l, [t]);
    let events = (rounds * (2 * words + 3)) as u64;
    assert_eq!(r.events, events);
    assert!(r.is_clean(), "{r}");
    events as f64 / secs
}

#[test]
fn event_rate() {
    // Small enough for a debug build's test run.
    let rate = events_per_second(256, 40);
    eprintln!("checker: {rate:.0} events/s on one thread (this build)");
}

#[test]
#[ignore = "a measurement: cargo test --release -p gridsync-gpu --lib event_rate -- --ignored --nocapture"]
fn event_rate_release() {
    for (words, rounds) in [(1024, 2000), (1 << 18, 8)] {
        let rate = events_per_second(words, rounds);
        eprintln!(
            "checker: {words} words × {rounds} rounds: {:.1} M events/s",
            rate / 1e6
        );
    }
}
