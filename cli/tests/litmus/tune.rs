//! Tuning the stress: within its budget on the simulator, trials ranked by a lower bound of
//! enough weak outcomes, the CLI's tuning and its refusals.

use super::*;

#[test]
fn tuning_runs_on_the_simulator_within_its_budget() {
    use gridsync_cli::litmus::tune::{TuneOptions, tune};
    let t = Target::Sim;
    // Few stress accesses: the simulator's launches are slow, and this checks the search, not
    // the rates.
    let opts = TuneOptions {
        seconds: 2.0,
        seed: common::seed(),
        start: Stress {
            iters: 8,
            ..Stress::default()
        },
        ..TuneOptions::for_target(&t)
    };
    let began = Instant::now();
    let mut seen = 0;
    let r = tune(&t, &opts, |_| seen += 1).unwrap();
    let took = began.elapsed().as_secs_f64();
    assert_eq!(seen, r.trials.len());
    // A second trial, unless the machine is so loaded that the first launch outlasted the
    // whole budget (it finishes its launch).
    assert!(
        r.trials.len() >= 2 || r.trials[0].seconds >= opts.seconds,
        "{:?}",
        r.trials
    );
    let last = r.trials.last().unwrap().seconds;
    // The trial running when the time is up finishes its launch; setting up a trial is quick.
    assert!(
        took <= opts.seconds + last + 1.0,
        "{took} s of {}",
        opts.seconds
    );
    assert!((r.seconds - took).abs() < 0.5);
    assert_eq!(r.start().stress, opts.start);
    assert!(r.start().changed.is_none());
    assert!(r.best < r.trials.len());
    for (i, x) in r.trials.iter().enumerate() {
        assert!(x.instances > 0 && x.seconds > 0.0, "{x:?}");
        // The simulated kernel's memory is sequentially consistent: MP is never weak there.
        assert_eq!(x.weak, 0, "{x:?}");
        assert!(
            r.trials[..i].iter().all(|y| y.stress != x.stress),
            "a set tried twice"
        );
        if i > 0 {
            assert!(x.changed.is_some(), "{x:?}");
        }
    }
    assert_eq!(r.best, 0, "no weak outcome anywhere: the start stays best");
}

/// A trial of `weak` in `instances`, as `tune` records it.
fn trial(weak: u64, instances: u64) -> gridsync_cli::litmus::tune::Trial {
    use gridsync_cli::litmus::tune::wilson_lower;
    gridsync_cli::litmus::tune::Trial {
        stress: Stress::default(),
        changed: None,
        instances,
        weak,
        weak_rate: weak as f64 / instances as f64,
        weak_rate_low: wilson_lower(weak, instances),
        weak_per_second: 0.0,
        seconds: 1.0,
    }
}

/// A short trial's few weak outcomes do not win the search: a trial is ranked only with
/// `MIN_TRIAL_WEAK` of them, and then by its rate's 95% lower bound (Wilson).
#[test]
fn tuning_ranks_trials_by_a_lower_bound_of_enough_weak_outcomes() {
    use gridsync_cli::litmus::tune::{MIN_TRIAL_WEAK, best_of, wilson_lower};
    // Known values: 10 in 100 → [0.0552, 0.1744]; nothing ran, or nothing seen, → 0.
    assert!((wilson_lower(10, 100) - 0.0552).abs() < 1e-4);
    assert_eq!(wilson_lower(0, 0), 0.0);
    assert_eq!(wilson_lower(0, 1_000_000), 0.0);
    // The bound is below the rate, and closes on it as the instances grow.
    for (weak, instances) in [(1, 3), (10, 1000), (1_500_000, 100_000_000)] {
        let t = trial(weak, instances);
        assert!(
            t.weak_rate_low > 0.0 && t.weak_rate_low < t.weak_rate,
            "{t:?}"
        );
    }
    assert!(trial(1_500_000, 100_000_000).weak_rate_low > 0.998 * 1.5e-2);

    // The tuned defaults' start on an H100: 1.5·10⁻² in 10⁸.
    let long = trial(1_500_000, 100_000_000);
    // One weak in three instances: a rate of 0.33, but one event.
    let lucky = trial(1, 3);
    assert_eq!(lucky.score(), None);
    assert_eq!(best_of(&[long.clone(), lucky.clone()]), 0);
    // Just enough weak outcomes, at a measured rate above the start's but with a lower bound
    // below it: not better.
    let thin = trial(MIN_TRIAL_WEAK, 600);
    assert!(thin.weak_rate > long.weak_rate && thin.score() < long.score());
    assert_eq!(best_of(&[long.clone(), thin]), 0);
    // A clearly higher rate on as many instances wins, the earliest of equals.
    let better = trial(2_000_000, 100_000_000);
    assert_eq!(best_of(&[long.clone(), better.clone(), better.clone()]), 1);
    // A start too thin to rank loses to any ranked trial; where none is ranked, it stays.
    assert_eq!(
        best_of(&[trial(3, 1000), trial(MIN_TRIAL_WEAK, 10_000_000)]),
        1
    );
    assert_eq!(best_of(&[trial(3, 1000), trial(9, 10)]), 0);
    assert_eq!(best_of(&[trial(0, 1000), trial(0, 10)]), 0);
}

#[test]
fn the_cli_tunes_and_refuses_bad_stressing_options() {
    let v = common::cli_json(&[
        "--simulate",
        "litmus",
        "--tune",
        "--seconds",
        "1",
        "--stress-iters",
        "8",
        "--json",
    ]);
    assert_eq!(v["options"]["test"], "MP", "{v}");
    assert_eq!(v["options"]["placement"], "different_sms", "{v}");
    assert_eq!(v["trials"][0]["stress"]["iters"], 8, "{v}");
    assert_eq!(v["trials"][0]["weak_rate_low"].as_f64(), Some(0.0), "{v}");
    assert!(v["best"].as_u64().is_some(), "{v}");
    let out = common::cli(&["--simulate", "litmus", "--tune", "--seconds", "0.5"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("best options: --sm-order"),
        "{text}"
    );
    for (args, says) in [
        (
            &["--sm-order", "diagonal"][..],
            "adjacent, spread, shuffled",
        ),
        (&["--stress-pattern", "store"], "store-store, store-load"),
        (&["--spin-up", "maybe"], "on or off"),
        (&["--stress-blocks", "many"], "or auto"),
        (&["--preset", "loud", "--tune"], "no stress preset"),
        (
            &["--stress-lines", "3", "--tune"],
            "--stress-lines must be a power of two",
        ),
        (
            &["--stride", "8"],
            "the simulator's litmus programs have none",
        ),
        (
            &["--tune", "--test", "MP", "--test", "SB"],
            "give --test once",
        ),
        (&["--tune", "--weak"], "--weak is for the tests' programs"),
        (
            &["--primitives", "--sm-order", "spread"],
            "--stress-iters and --stress-lines only",
        ),
    ] {
        let mut all = vec!["--simulate", "litmus"];
        all.extend_from_slice(args);
        let out = common::cli(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} accepted");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
