//! The simulator's weak memory running real kernels: every lesson's missing fence fails there
//! and every correct variant passes, a run replays from its seed, and what the weak memory
//! cannot run is refused instead of shown wrong.

mod common;

use gpu::sim::weak::scoped;
use gridsync::Target;
use gridsync::barrier::{BarrierOptions, Variant as BarrierVariant, run as run_barrier};
use gridsync::locks::{Shape, Variant, run_variant};

/// Seeds per check: enough that the unfenced lock loses an update in several of them.
const SEEDS: u64 = 12;

fn lock_lost(variant: Variant, seed: u64) -> (u64, gpu::sim::weak::WeakStats) {
    let shape = Shape {
        blocks: 2,
        threads: 8,
    };
    let (r, stats) = scoped(seed, || {
        run_variant(&Target::Sim, variant, shape, 10, Default::default())
    });
    let r = r.unwrap_or_else(|e| panic!("{variant:?}, seed {seed}: {e}"));
    assert_eq!(r.expected, 160);
    (r.lost(), stats)
}

#[test]
fn the_unfenced_lock_loses_updates_and_every_other_lock_none() {
    let base = common::seed();
    let losing = (0..SEEDS)
        .filter(|&k| lock_lost(Variant::Unfenced, base ^ k).0 > 0)
        .count();
    assert!(
        losing >= 2,
        "the lock without fences lost updates with only {losing} of {SEEDS} seeds"
    );
    for v in Variant::ALL.into_iter().filter(|&v| v != Variant::Unfenced) {
        for k in 0..SEEDS {
            let (lost, stats) = lock_lost(v, base ^ k);
            assert_eq!(lost, 0, "{v:?}, seed {}", base ^ k);
            assert!(stats.launches >= 1 && stats.operations > 0, "{stats:?}");
        }
    }
}

#[test]
fn a_weak_run_replays_from_its_seed() {
    let seed = common::seed();
    let a = lock_lost(Variant::Unfenced, seed);
    let b = lock_lost(Variant::Unfenced, seed);
    assert_eq!(a, b, "the same seed, the same run");
    let other = (1..20)
        .map(|k| lock_lost(Variant::Unfenced, seed ^ k))
        .find(|c| *c != a);
    assert!(other.is_some(), "other seeds give other runs");
}

#[test]
fn the_articles_plain_spin_fails_and_the_correct_barriers_pass() {
    let opts = BarrierOptions {
        iterations: 4,
        repeats: 1,
        ..BarrierOptions::default()
    };
    for seed in [common::seed(), 1, 2] {
        let (r, stats) = scoped(seed, || run_barrier(&Target::Sim, &opts, |_, _| {}));
        let r = r.unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(stats.stale_loads > 0, "{stats:?}");
        for v in &r.runs {
            if v.must_be_correct {
                assert!(
                    v.matches_cpu && v.launch_error.is_none(),
                    "{} (seed {seed}): {v:?}",
                    v.name
                );
            }
        }
        let plain = r
            .runs
            .iter()
            .find(|v| v.variant == BarrierVariant::PlainSpin)
            .expect("the plain spin ran");
        assert!(
            plain.launch_error.is_some() && !plain.matches_cpu,
            "the plain spin must time out on the weak memory (seed {seed}): {plain:?}"
        );
    }
}

#[test]
fn the_sequentially_consistent_simulator_is_unchanged_outside_a_scope() {
    let (r, stats) = scoped(3, || ());
    assert_eq!((r, stats.launches), ((), 0));
    // Outside a scope the simulator is the sequentially consistent one: the lock without
    // fences loses nothing there (its CPU atomics are full barriers).
    let shape = Shape {
        blocks: 2,
        threads: 8,
    };
    let r = run_variant(
        &Target::Sim,
        Variant::Unfenced,
        shape,
        10,
        Default::default(),
    )
    .unwrap();
    assert_eq!(r.lost(), 0);
}

#[test]
fn clusters_are_refused_on_the_weak_memory() {
    use gpu::{Dim3, LaunchConfig};
    let cfg = LaunchConfig::linear(2, 32).with_cluster(Dim3::x(2));
    let (r, _) = scoped(1, || gpu::sim::launch(&cfg, || {}));
    let e = r.unwrap_err();
    assert!(e.to_string().contains("cluster"), "{e}");
}

#[test]
fn a_barrier_some_threads_skip_is_a_deadlock_on_the_weak_memory() {
    use gpu::LaunchConfig;
    use gpu::index::thread_idx_x;
    let cfg = LaunchConfig::linear(1, 4);
    let (r, _) = scoped(5, || {
        gpu::sim::launch(&cfg, || {
            if thread_idx_x() < 2 {
                // Threads 2 and 3 never reach it, but they exit, so it opens: no deadlock.
                gpu::sync::sync_threads();
            }
            if thread_idx_x() == 0 {
                // Thread 0 waits here alone while thread 1 waits at the other barrier: never.
                gpu::sync::sync_threads();
            } else if thread_idx_x() == 1 {
                gpu::warp::sync_warp(0b11);
            }
        })
    });
    let e = r.unwrap_err();
    assert!(e.to_string().contains("deadlock"), "{e}");
}

#[test]
fn a_block_scope_counter_shared_by_blocks_loses_updates_and_the_device_scope_one_none() {
    let base = common::seed();
    let mut losing = 0;
    for k in 0..SEEDS {
        let (r, stats) = scoped(base ^ k, || gridsync::race::run_shape(&Target::Sim, 3, 4));
        let r = r.unwrap_or_else(|e| panic!("seed {}: {e}", base ^ k));
        assert!(stats.launches == 3, "{stats:?}");
        // The device-scope atomic counter is exact on the weak memory too (run_shape checks it);
        // the block-scope one is atomic only within each block.
        assert_eq!(r.atomic, 12, "seed {}", base ^ k);
        assert!(r.block_scope <= 12, "seed {}: {}", base ^ k, r.block_scope);
        if r.block_scope < 12 {
            losing += 1;
        }
    }
    assert!(
        losing >= 2,
        "the block-scope counter lost updates with only {losing} of {SEEDS} seeds"
    );
}

#[test]
fn a_block_scope_counter_within_one_block_loses_nothing() {
    let base = common::seed();
    for k in 0..SEEDS {
        let (r, _) = scoped(base ^ k, || gridsync::race::run_shape(&Target::Sim, 1, 12));
        let r = r.unwrap_or_else(|e| panic!("seed {}: {e}", base ^ k));
        assert_eq!(r.block_scope, 12, "seed {}", base ^ k);
    }
}
