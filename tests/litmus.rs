//! Litmus tests: the catalogue agrees with the weak memory (exhaustively: every outcome it can
//! give is sequentially consistent or the test's weak outcome, and the weak outcome is reachable
//! exactly where the PTX model allows it); seeded runs never show a forbidden outcome and replay;
//! the litmus kernel places, runs and counts every instance on the simulator and the GPU.

mod common;

use gpu::sim::weak::{Mode, program};
use gridsync::Target;
use gridsync::litmus::{
    LitmusOptions, Placement, Runner, Stress, Test, Variant, Verdict, model, outcome, run,
};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

fn exhaustive(test: Test, variant: Variant) -> BTreeSet<Vec<u64>> {
    program::reachable(&test.program(variant), Mode::Weak)
}

#[test]
fn the_weak_memory_shows_a_weak_outcome_exactly_where_the_model_allows_it() {
    for test in Test::ALL {
        let sc = outcome::sc_outcomes(test);
        let weak = test.weak_outcome();
        // slot-read's outcome is the pitfall's, an interleaving; every other is weak.
        assert_eq!(
            sc.contains(&weak),
            test == Test::SlotRead,
            "{}: the counted outcome is an interleaving only for slot-read",
            test.name()
        );
        assert_eq!(weak.len(), test.digit_names().len());
        for variant in Variant::ALL {
            let seen = exhaustive(test, variant);
            for o in &seen {
                assert!(
                    sc.contains(o) || *o == weak,
                    "{} {}: {o:?} is neither an interleaving nor the weak outcome",
                    test.name(),
                    variant.name()
                );
            }
            let allowed = !test.forbidden(variant, None);
            // Plain accesses promise no coherence between threads, but the simulator reads them
            // as relaxed: CoRR's weak outcome is allowed there and never shown.
            let shown_where_allowed = !(test == Test::CoRR && variant == Variant::Plain);
            assert_eq!(
                seen.contains(&weak),
                allowed && shown_where_allowed,
                "{} {}: weak outcome reachable {} but allowed {allowed}",
                test.name(),
                variant.name(),
                seen.contains(&weak)
            );
        }
    }
}

#[test]
fn scopes_too_narrow_for_the_placement_allow_the_weak_outcome() {
    for test in [Test::MP, Test::SB, Test::WRC, Test::IRIW] {
        for v in [Variant::FenceAcqRelCta, Variant::FenceScCta] {
            for p in [Placement::SameWarp, Placement::SameBlock] {
                assert_eq!(test.forbidden(v, Some(p)), test.forbidden(v, None));
            }
            for p in [Placement::SameSm, Placement::DifferentSms] {
                assert!(
                    !test.forbidden(v, Some(p)),
                    "{} {} {p:?}",
                    test.name(),
                    v.name()
                );
            }
        }
        assert!(test.forbidden(Variant::FenceScGpu, Some(Placement::DifferentSms)));
        // Across GPUs a `.gpu` fence is out of scope too; `.sys` ones and release/acquire
        // (whose accesses are `.sys` there) are not.
        let gpus = Some(Placement::DifferentGpus);
        for v in [
            Variant::FenceAcqRelCta,
            Variant::FenceScCta,
            Variant::FenceAcqRelGpu,
            Variant::FenceScGpu,
        ] {
            assert!(
                !test.forbidden(v, gpus),
                "{} {} gpus",
                test.name(),
                v.name()
            );
        }
        for v in [
            Variant::FenceAcqRelSys,
            Variant::FenceScSys,
            Variant::ReleaseAcquire,
        ] {
            assert_eq!(test.forbidden(v, gpus), test.forbidden(v, None));
        }
    }
    // Coherence needs no fence at all; plain accesses do not even give that.
    assert!(Test::CoRR.forbidden(Variant::Relaxed, Some(Placement::DifferentSms)));
    assert!(!Test::CoRR.forbidden(Variant::Plain, None));
    assert!(Test::CoWW.forbidden(Variant::Plain, None));
}

#[test]
fn keys_decode_as_the_kernel_encodes_them() {
    use gpu::lessons::litmus::{LITMUS_INVALID_KEY, LITMUS_KEYS};
    assert_eq!(outcome::decode(1 + 3 * 2, 2), Some(vec![1, 2]));
    assert_eq!(outcome::decode(0, 4), Some(vec![0, 0, 0, 0]));
    assert_eq!(outcome::decode(LITMUS_INVALID_KEY, 2), None);
    assert_eq!(outcome::decode(9, 2), None, "a digit past the test's");
    const { assert!(LITMUS_KEYS > LITMUS_INVALID_KEY) };
    let t = outcome::tally_keys(Test::MP, Variant::Relaxed, Some(Placement::SameSm), &{
        let mut c = vec![0u64; LITMUS_KEYS as usize];
        c[1] = 5; // r0=1 r1=0: the weak outcome
        c[4] = 7; // r0=1 r1=1
        c[LITMUS_INVALID_KEY as usize] = 1;
        c
    });
    assert_eq!(t.len(), 3);
    assert_eq!((t[0].count, t[0].verdict), (7, Verdict::Sc));
    assert_eq!(
        (t[1].count, t[1].verdict, t[1].text.as_str()),
        (5, Verdict::WeakAllowed, "1:r0=1 1:r1=0")
    );
    assert_eq!((t[2].count, t[2].verdict), (1, Verdict::Forbidden));
}

#[test]
fn seeded_weak_runs_show_mp_sb_lb_and_replay_them() {
    let far = Instant::now() + Duration::from_secs(600);
    for (test, bad) in [
        (Test::MP, Variant::Relaxed),
        (Test::SB, Variant::FenceAcqRelGpu),
        (Test::LB, Variant::Volatile),
    ] {
        let seed = common::seed();
        let runs = model::run_seeded(test, bad, Mode::Weak, 20_000, seed, far);
        let &(count, first) = runs.outcomes.get(&test.weak_outcome()).unwrap_or_else(|| {
            panic!(
                "{} {}: no weak outcome in 20 000 runs",
                test.name(),
                bad.name()
            )
        });
        assert!(count > 20, "{}: {count}", test.name());
        let steps = model::replay(test, bad, Mode::Weak, seed, first);
        let want = outcome::text(test, Some(&test.weak_outcome()));
        assert_eq!(
            steps.last().map(String::as_str),
            Some(format!("outcome: {want}").as_str())
        );
    }
    // The SC memory never shows them.
    for test in [Test::MP, Test::SB, Test::LB] {
        let runs = model::run_seeded(test, Variant::Relaxed, Mode::Sc, 5_000, 1, far);
        assert!(!runs.outcomes.contains_key(&test.weak_outcome()));
    }
}

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
    use gridsync::litmus::{COVERAGE_FLOOR, RunVerdict, Shortfall, coverage_floor};
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
    use gridsync::litmus::RunVerdict;
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

/// Every instance of every round counted, nothing forbidden, at every placement.
fn kernel_counts(target: &Target, instances: u64, tests: &[Test], variants: &[Variant]) {
    let runner = Runner::new(
        target,
        Stress {
            iters: 8,
            ..Stress::default()
        },
    )
    .unwrap();
    let far = Instant::now() + Duration::from_secs(600);
    for &test in tests {
        for &variant in variants {
            for placement in Placement::ONE_GPU {
                let seen = runner
                    .run(test, variant, placement, instances, far, common::seed())
                    .unwrap();
                let n: u64 = seen.counts.iter().sum();
                let where_ = format!("{} {} {placement:?}", test.name(), variant.name());
                let placeable =
                    !(target.is_sim() && placement == Placement::SameSm && test.threads() > 2);
                if placeable {
                    assert!(n >= instances, "{where_}: {n} instances");
                    assert_eq!(
                        n % seen.rounds,
                        0,
                        "{where_}: every round has as many instances"
                    );
                } else {
                    assert_eq!(
                        n, 0,
                        "{where_}: two blocks per SM cannot hold more than two roles"
                    );
                }
                let t = outcome::tally_keys(test, variant, Some(placement), &seen.counts);
                let bad: Vec<_> = t
                    .iter()
                    .filter(|o| o.verdict == Verdict::Forbidden)
                    .collect();
                assert!(bad.is_empty(), "{where_}: {bad:?}");
                assert_eq!(seen.blocks_off_table, 0);
            }
        }
    }
}

/// Every instance counted at the placement across GPUs, on `targets`; nothing forbidden.
fn kernel_counts_across(targets: &[Target], instances: u64, tests: &[Test], variants: &[Variant]) {
    let stress = Stress {
        iters: 8,
        ..Stress::default()
    };
    let runner = Runner::across(targets, stress).unwrap();
    assert_eq!(runner.gpus() as usize, targets.len());
    let far = Instant::now() + Duration::from_secs(600);
    for &test in tests {
        for &variant in variants {
            let where_ = format!(
                "{} {} across {} devices",
                test.name(),
                variant.name(),
                targets.len()
            );
            let seen = runner
                .run(
                    test,
                    variant,
                    Placement::DifferentGpus,
                    instances,
                    far,
                    common::seed(),
                )
                .unwrap_or_else(|e| panic!("{where_}: {e}"));
            let n: u64 = seen.counts.iter().sum();
            assert!(n >= instances, "{where_}: {n} instances");
            assert_eq!(
                n % seen.rounds,
                0,
                "{where_}: every round has as many instances"
            );
            let t =
                outcome::tally_keys(test, variant, Some(Placement::DifferentGpus), &seen.counts);
            let bad: Vec<_> = t
                .iter()
                .filter(|o| o.verdict == Verdict::Forbidden)
                .collect();
            assert!(bad.is_empty(), "{where_}: {bad:?}");
            assert_eq!(seen.blocks_off_table, 0, "{where_}");
        }
    }
    // Each runner refuses the other's placement.
    let far = Instant::now() + Duration::from_secs(60);
    assert!(
        runner
            .run(Test::MP, Variant::Relaxed, Placement::SameWarp, 1, far, 1)
            .is_err()
    );
}

#[test]
fn the_kernel_places_instances_across_simulated_devices() {
    let set = gridsync::multi::DeviceSet::simulated(2).unwrap();
    kernel_counts_across(
        set.targets(),
        1,
        &[Test::MP, Test::IRIW, Test::MpLock],
        &[Variant::Relaxed],
    );
    let one = Runner::new(&Target::Sim, Stress::default()).unwrap();
    let far = Instant::now() + Duration::from_secs(60);
    assert!(
        one.run(
            Test::MP,
            Variant::Relaxed,
            Placement::DifferentGpus,
            1,
            far,
            1
        )
        .is_err()
    );
    assert!(Runner::across(&set.targets()[..1], Stress::default()).is_err());
}

#[test]
fn system_scope_primitives_keep_their_payload_across_simulated_devices() {
    use gridsync::litmus::primitives::{Primitive, PrimitiveOptions, run_all_on};
    let set = gridsync::multi::DeviceSet::simulated(2).unwrap();
    let opts = PrimitiveOptions {
        primitives: vec![
            Primitive::MutexSystem,
            Primitive::MultiGridSystem,
            Primitive::Ticket,
        ],
        weak: false,
        seed: common::seed(),
        ..PrimitiveOptions::for_target(&set.targets()[0])
    };
    let r = run_all_on(set.targets(), &opts, |_| {}).unwrap();
    // Each on one device, then the two that span devices across both (not the ticket lock).
    let ran: Vec<_> = r.runs.iter().map(|p| (p.primitive, p.devices)).collect();
    assert_eq!(
        ran,
        [
            (Primitive::MutexSystem, 1),
            (Primitive::MultiGridSystem, 1),
            (Primitive::Ticket, 1),
            (Primitive::MutexSystem, 2),
            (Primitive::MultiGridSystem, 2),
        ]
    );
    for p in &r.runs {
        assert!(p.clean() && p.uses > 0 && p.checks > 0, "{p:?}");
        if p.devices == 2 {
            let per = if p.primitive.is_lock() {
                opts.acquisitions
            } else {
                opts.rounds
            };
            assert!(p.uses >= per, "{p:?}");
        }
    }
    assert!(r.passed());
    // Only those that can span grids run across devices.
    let far = Instant::now() + Duration::from_secs(60);
    let shape = gridsync::litmus::primitives::PrimitiveShape::for_target(&Target::Sim);
    let amount = gridsync::litmus::primitives::Amount {
        uses: 1,
        per_launch: 1,
        stress: Stress::default(),
        seed: 1,
    };
    let e = gridsync::litmus::primitives::run_on(
        set.targets(),
        Primitive::GridBarrier,
        shape,
        amount,
        far,
    )
    .unwrap_err();
    assert!(e.to_string().contains("does not run across"), "{e}");
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn the_kernel_runs_every_test_and_variant_across_the_gpus() {
    let _turn = common::whole_gpu();
    use gridsync::litmus::run_on;
    use gridsync::multi::{DeviceList, DeviceSet};
    let set = DeviceSet::open(&DeviceList::All, false).unwrap();
    let opts = LitmusOptions {
        placements: vec![Placement::DifferentGpus],
        iterations: 100_000,
        ..LitmusOptions::for_target(&set.targets()[0])
    };
    if set.len() < 2 {
        // One GPU: the placement is refused, not run on one.
        let e = run_on(set.targets(), &opts, |_| {}).unwrap_err();
        assert!(e.to_string().contains("two or more GPUs"), "{e}");
        return;
    }
    kernel_counts_across(set.targets(), 100_000, &Test::ALL, &Variant::ALL);
    // Through `run_on`: the two-thread test across the GPUs, the one-thread test on the first
    // GPU — both by the kernel (its rounds counted), never by the simulator's programs.
    let opts = LitmusOptions {
        tests: vec![Test::CoWW, Test::MP],
        variants: vec![Variant::Relaxed],
        ..opts
    };
    let r = run_on(set.targets(), &opts, |_| {}).unwrap();
    assert!(r.passed());
    let ran: Vec<_> = r.results.iter().map(|x| (x.test, x.placement)).collect();
    assert_eq!(
        ran,
        [
            (Test::CoWW, None),
            (Test::MP, Some(Placement::DifferentGpus))
        ]
    );
    for x in &r.results {
        assert!(x.rounds > 0 && x.instances >= 100_000, "{x:?}");
    }
}

#[test]
fn the_kernel_places_and_counts_every_instance_on_the_simulator() {
    kernel_counts(
        &Target::Sim,
        1,
        &[Test::MP, Test::IRIW, Test::MpLock, Test::SlotRead],
        &[Variant::Relaxed, Variant::FenceScGpu],
    );
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn the_kernel_runs_every_test_variant_and_placement_on_the_gpu() {
    let _turn = common::whole_gpu();
    kernel_counts(&common::gpu(), 200_000, &Test::ALL, &Variant::ALL);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn every_lock_and_barrier_keeps_its_payload_on_the_gpu() {
    let _turn = common::whole_gpu();
    use gridsync::litmus::primitives::{Primitive, PrimitiveOptions, run_all_on};
    use gridsync::multi::{DeviceList, DeviceSet};
    // Every GPU: with two or more, the primitives that span GPUs run across them too.
    let set = DeviceSet::open(&DeviceList::All, false).unwrap();
    let t = &set.targets()[0];
    let opts = PrimitiveOptions {
        acquisitions: 2_000_000,
        rounds: 20_000,
        seed: common::seed(),
        ..PrimitiveOptions::for_target(t)
    };
    let r = run_all_on(set.targets(), &opts, |_| {}).unwrap();
    let across = r.runs.iter().filter(|p| p.devices > 1).count();
    let expected = if set.len() > 1 {
        Primitive::ACROSS_GPUS.len()
    } else {
        0
    };
    assert_eq!(across, expected, "{:?}", r.runs);
    assert!(r.passed(), "{:?}", r.runs);
    for p in &r.runs {
        assert!(p.uses > 0 && p.checks > 0, "{p:?}");
        if p.primitive.must_hold(p.devices) {
            assert!(p.clean(), "{p:?}");
            assert!(
                p.uses
                    >= if p.primitive.is_lock() {
                        2_000_000
                    } else {
                        20_000
                    },
                "{p:?}"
            );
        }
    }
}
