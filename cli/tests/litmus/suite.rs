//! The suite on the simulator and its verdict: options checked, the coverage floor, a run of
//! too few instances failing, in the library and in the CLI's exit status.

use super::*;

#[test]
fn the_simulator_suite_passes_and_options_are_checked() {
    let t = Target::Sim;
    let opts = LitmusOptions {
        iterations: 2_000,
        weak: true,
        seed: common::seed(),
        ..LitmusOptions::for_target(&t)
    };
    let r = run(&t, &opts, |_| {}).unwrap();
    assert!(r.passed(), "forbidden outcomes: {}", r.forbidden);
    assert!(r.fell_short.is_empty(), "{:?}", r.fell_short);
    assert_eq!(r.results.len(), Test::ALL.len() * Variant::ALL.len());
    assert!(
        r.results
            .iter()
            .all(|x| x.instances == 2_000 && x.forbidden == 0)
    );
    let mp = r
        .results
        .iter()
        .find(|x| x.test == Test::MP && x.variant == Variant::Relaxed)
        .unwrap();
    assert!(mp.weak > 0 && mp.first_weak_run.is_some());
    for bad in [
        LitmusOptions {
            iterations: 0,
            ..opts.clone()
        },
        LitmusOptions {
            seconds: f64::NAN,
            ..opts.clone()
        },
        LitmusOptions {
            seconds: -1.0,
            ..opts.clone()
        },
        LitmusOptions {
            tests: vec![],
            ..opts.clone()
        },
    ] {
        assert!(matches!(
            run(&t, &bad, |_| {}),
            Err(gridsync::Error::InvalidInput(_))
        ));
    }
    for lines in [0, 1, 3, 1 << 17] {
        let stress = Stress {
            lines,
            ..Stress::default()
        };
        assert!(Runner::new(&t, stress).is_err(), "{lines} lines");
    }
}

#[test]
fn the_coverage_floor_is_a_tenth_and_forbidden_outcomes_outrank_it() {
    use gridsync_cli::litmus::{COVERAGE_FLOOR, RunVerdict, Shortfall, coverage_floor};
    assert_eq!(COVERAGE_FLOOR, 0.1);
    assert_eq!(coverage_floor(10_000_000), 1_000_000);
    assert_eq!(coverage_floor(100_000), 10_000);
    assert_eq!(coverage_floor(15), 2, "rounded up");
    assert_eq!(coverage_floor(1), 1);
    let short = [Shortfall {
        test: Test::MP,
        name: "MP".into(),
        variant: Variant::Relaxed,
        placement: None,
        instances: 3,
    }];
    assert_eq!(RunVerdict::of(0, &[]), RunVerdict::Passed);
    assert_eq!(RunVerdict::of(0, &short), RunVerdict::TooFewInstances);
    assert_eq!(RunVerdict::of(1, &short), RunVerdict::ForbiddenSeen);
}

/// A budget far too small for the iterations: every combination stops after the simulator's
/// first look at the clock (4096 runs), under the floor of a tenth of 100 000.
fn starved(t: &Target) -> LitmusOptions {
    LitmusOptions {
        tests: vec![Test::MP, Test::SB],
        variants: vec![Variant::Relaxed, Variant::ReleaseAcquire],
        iterations: 100_000,
        seconds: 1e-9,
        weak: true,
        seed: common::seed(),
        ..LitmusOptions::for_target(t)
    }
}

#[test]
fn a_run_that_ran_too_few_instances_does_not_pass() {
    use gridsync_cli::litmus::RunVerdict;
    let t = Target::Sim;
    let r = run(&t, &starved(&t), |_| {}).unwrap();
    assert_eq!(r.forbidden, 0);
    assert_eq!(r.coverage_floor, 10_000);
    assert_eq!(r.verdict, RunVerdict::TooFewInstances);
    assert!(!r.passed());
    assert_eq!(r.fell_short.len(), r.results.len(), "{:?}", r.fell_short);
    for (s, x) in r.fell_short.iter().zip(&r.results) {
        assert_eq!(
            (s.test, s.variant, s.instances),
            (x.test, x.variant, x.instances)
        );
        assert!(s.instances < 10_000, "{s:?}");
    }
    // Enough for every combination: passes, nothing fell short; each rate per second reported.
    let enough = LitmusOptions {
        iterations: 4_000,
        seconds: 600.0,
        ..starved(&t)
    };
    let r = run(&t, &enough, |_| {}).unwrap();
    assert_eq!(r.verdict, RunVerdict::Passed);
    assert!(r.passed() && r.fell_short.is_empty());
    let mp = &r.results[0];
    assert!(mp.weak > 0 && mp.weak_per_second > 0.0, "{mp:?}");
    assert!((mp.weak_per_second * mp.seconds - mp.weak as f64).abs() < 1.0);
}

#[test]
fn the_cli_exits_with_its_own_status_when_too_few_instances_ran() {
    let args = |seconds: &str, iterations: &str| {
        common::cli(&[
            "--simulate",
            "litmus",
            "--weak",
            "--test",
            "MP",
            "--variant",
            "relaxed",
            "--json",
            "--seconds",
            seconds,
            "--iterations",
            iterations,
        ])
    };
    let out = args("0.000000001", "100000");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("too few instances"), "{stderr}");
    assert!(!stderr.contains("forbidden outcomes observed"), "{stderr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "too_few_instances", "{v}");
    assert_eq!(v["coverage_floor"], 10_000);
    let short = v["fell_short"].as_array().unwrap();
    assert_eq!(short.len(), 1, "{v}");
    assert_eq!(
        (&short[0]["name"], &short[0]["variant"]),
        (&"MP".into(), &"relaxed".into())
    );
    assert!(short[0]["instances"].as_u64().unwrap() < 10_000, "{v}");
    // A normal run passes.
    let out = args("600", "2000");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "passed", "{v}");
    assert!(
        v["results"][0]["weak_per_second"].as_f64().unwrap() > 0.0,
        "{v}"
    );
}
