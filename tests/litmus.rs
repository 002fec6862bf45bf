//! Litmus tests: the catalogue agrees with the weak memory (exhaustively: every outcome it can
//! give is sequentially consistent or the test's weak outcome, and the weak outcome is reachable
//! exactly where the PTX model allows it); seeded runs never show a forbidden outcome and replay;
//! the litmus kernel places, runs and counts every instance on the simulator and the GPU.

mod common;

use gpu::lessons::litmus::{
    LITMUS_MAX_THREADS, LitmusLaunch, PLACE_DIFFERENT_SMS, SM_ORDER_ADJACENT, SM_ORDER_SHUFFLED,
    SM_ORDER_SPREAD, STRESS_STORE_LOAD, SmGroups,
};
use gpu::sim::weak::{Mode, program};
use gridsync::Target;
use gridsync::litmus::{
    LitmusOptions, Placement, Runner, SmOrder, Stress, StressPattern, Test, Variant, Verdict,
    model, outcome, run,
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

/// Every instance of every round counted, nothing forbidden, at every placement. On the
/// simulator none of its two blocks per SM stresses (`auto`): the default's one stressing block
/// would leave one to test, and the placement `sm` could form no instance of two threads.
fn kernel_counts(target: &Target, instances: u64, tests: &[Test], variants: &[Variant]) {
    let stress = Stress {
        iters: 8,
        stress_blocks: if target.is_sim() {
            None
        } else {
            Stress::DEFAULT.stress_blocks
        },
        ..Stress::default()
    };
    kernel_counts_with(
        target,
        stress,
        instances,
        tests,
        variants,
        &Placement::ONE_GPU,
    );
}

/// [`kernel_counts`] with `stress`, at `placements`.
fn kernel_counts_with(
    target: &Target,
    stress: Stress,
    instances: u64,
    tests: &[Test],
    variants: &[Variant],
    placements: &[Placement],
) {
    let runner = Runner::new(target, stress).unwrap();
    let tt = runner.test_blocks_per_sm();
    let far = Instant::now() + Duration::from_secs(600);
    for &test in tests {
        for &variant in variants {
            for &placement in placements {
                let seen = runner
                    .run(test, variant, placement, instances, far, common::seed())
                    .unwrap();
                let n: u64 = seen.counts.iter().sum();
                let where_ = format!(
                    "{} {} {placement:?} {stress:?}",
                    test.name(),
                    variant.name()
                );
                // At `sm` an instance's threads are testing blocks of one SM.
                let placeable = placement != Placement::SameSm || test.threads() <= tt as usize;
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
                        "{where_}: {tt} testing blocks per SM cannot hold more roles"
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

/// Every stressing parameter's values on the simulator's kernel: every instance counted, as
/// many in every round as the groups of SMs the order forms (four SMs of two blocks: two groups
/// of two, one of three or four), nothing forbidden.
#[test]
fn every_stressing_parameter_places_and_counts_every_instance_on_the_simulator() {
    let base = Stress {
        iters: 4,
        ..Stress::default()
    };
    let mut settings: Vec<Stress> = SmOrder::ALL
        .map(|sm_order| Stress { sm_order, ..base })
        .to_vec();
    settings.extend(StressPattern::ALL.map(|pattern| Stress {
        pattern,
        pre_iters: 4,
        ..base
    }));
    settings.push(Stress {
        spin_up: false,
        stride_words: 4,
        ..base
    });
    // Every block testing (`auto` on the simulator's two per SM), and the legacy preset.
    settings.push(Stress {
        stress_blocks: None,
        ..base
    });
    settings.push(Stress {
        stress_blocks: Some(1),
        lines: 2,
        ..Stress::LEGACY
    });
    let far = Instant::now() + Duration::from_secs(600);
    let seed = common::seed();
    for stress in settings {
        let runner = Runner::new(&Target::Sim, stress).unwrap();
        let tt = u64::from(runner.test_blocks_per_sm());
        assert_eq!(
            tt,
            if stress.stress_blocks == Some(1) {
                1
            } else {
                2
            },
            "{stress:?}"
        );
        for (test, groups) in [(Test::MP, 2), (Test::WRC, 1), (Test::IRIW, 1)] {
            let seen = runner
                .run(
                    test,
                    Variant::Relaxed,
                    Placement::DifferentSms,
                    1,
                    far,
                    seed,
                )
                .unwrap();
            let n: u64 = seen.counts.iter().sum();
            assert_eq!(
                n,
                seen.rounds * groups * tt * 128,
                "{} {stress:?}",
                test.name()
            );
            let t = outcome::tally_keys(
                test,
                Variant::Relaxed,
                Some(Placement::DifferentSms),
                &seen.counts,
            );
            assert!(t.iter().all(|o| o.verdict != Verdict::Forbidden), "{t:?}");
        }
    }
}

#[test]
fn stressing_parameters_out_of_range_are_refused_naming_the_option() {
    use gridsync::litmus::tune::{TuneOptions, tune};
    use gridsync::litmus::{MAX_STRESS_ITERS, MAX_STRESS_LINES, MAX_STRIDE_WORDS};
    let t = Target::Sim;
    let d = Stress::default();
    for (bad, option) in [
        (Stress { lines: 3, ..d }, "--stress-lines"),
        (Stress { lines: 1, ..d }, "--stress-lines"),
        (
            Stress {
                lines: MAX_STRESS_LINES * 2,
                ..d
            },
            "--stress-lines",
        ),
        (
            Stress {
                stride_words: 0,
                ..d
            },
            "--stride",
        ),
        (
            Stress {
                stride_words: MAX_STRIDE_WORDS + 1,
                ..d
            },
            "--stride",
        ),
        (
            Stress {
                iters: MAX_STRESS_ITERS + 1,
                ..d
            },
            "--stress-iters",
        ),
        (
            Stress {
                pre_iters: MAX_STRESS_ITERS + 1,
                ..d
            },
            "--pre-stress",
        ),
        // The simulator holds two blocks per SM: two stressing leave none to test.
        (
            Stress {
                stress_blocks: Some(2),
                ..d
            },
            "--stress-blocks",
        ),
    ] {
        for e in [
            Runner::new(&t, bad).err(),
            tune(
                &t,
                &TuneOptions {
                    start: bad,
                    seconds: 1.0,
                    ..TuneOptions::for_target(&t)
                },
                |_| {},
            )
            .err(),
        ] {
            let e = e.unwrap_or_else(|| panic!("{bad:?} accepted"));
            assert!(matches!(e, gridsync::Error::InvalidInput(_)), "{e:?}");
            assert!(e.to_string().contains(option), "{option}: {e}");
        }
    }
    assert_eq!(Stress::preset("legacy").unwrap(), Stress::LEGACY);
    assert_eq!(Stress::LEGACY.sm_order, SmOrder::Adjacent);
    assert!(
        Stress::preset("loud")
            .unwrap_err()
            .to_string()
            .contains("default, legacy")
    );
    for bad in [
        TuneOptions {
            seconds: 0.0,
            ..TuneOptions::for_target(&t)
        },
        TuneOptions {
            seconds: f64::NAN,
            ..TuneOptions::for_target(&t)
        },
        TuneOptions {
            placement: Placement::DifferentGpus,
            ..TuneOptions::for_target(&t)
        },
    ] {
        assert!(
            matches!(
                tune(&t, &bad, |_| {}),
                Err(gridsync::Error::InvalidInput(_))
            ),
            "{bad:?}"
        );
    }
}

/// A report saved before the stressing parameters beyond iterations, lines and stride existed
/// reads back with the kernel's parameters of then.
#[test]
fn old_stress_reads_as_the_legacy_parameters() {
    let old: Stress =
        serde_json::from_str(r#"{"iters": 64, "lines": 64, "stride_words": 32}"#).unwrap();
    assert_eq!(old, Stress::LEGACY);
}

/// The help's defaults are `Stress::DEFAULT`'s (clap's `[default: …]` of these options is
/// written by hand, as the options are `Option`s over a preset).
#[test]
fn the_help_states_the_default_stressing_parameters() {
    let out = common::cli(&["litmus", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{help}");
    for (option, value) in Stress::DEFAULT.options() {
        let flag = format!("--{option} ");
        let line = help
            .lines()
            .find(|l| l.trim_start().starts_with(&flag))
            .unwrap_or_else(|| panic!("{flag}not in the help: {help}"));
        assert!(
            line.trim_end().ends_with(&format!("[default: {value}]")),
            "{option}: {line}"
        );
    }
    assert_eq!(
        Stress::DEFAULT.flags(),
        "--sm-order spread --stress-iters 64 --stress-lines 2 --stress-pattern load-store \
         --pre-stress 0 --stride 64 --stress-blocks 1 --spin-up on"
    );
}

#[test]
fn tuning_runs_on_the_simulator_within_its_budget() {
    use gridsync::litmus::tune::{TuneOptions, tune};
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
fn trial(weak: u64, instances: u64) -> gridsync::litmus::tune::Trial {
    use gridsync::litmus::tune::wilson_lower;
    gridsync::litmus::tune::Trial {
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
    use gridsync::litmus::tune::{MIN_TRIAL_WEAK, best_of, wilson_lower};
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
    let out = common::cli(&[
        "--simulate",
        "litmus",
        "--tune",
        "--seconds",
        "1",
        "--stress-iters",
        "8",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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

/// A launch of the litmus kernel across `sms` SMs in `order`, for [`SmGroups`] alone.
fn sm_launch(sms: u32, order: u32, seed: u32) -> LitmusLaunch {
    let null = core::ptr::null_mut();
    LitmusLaunch {
        program: core::ptr::null(),
        locations: null,
        start: null,
        regs: null,
        scratch: null,
        sm_tickets: null,
        counts: core::ptr::null_mut(),
        errors: null,
        variant: 0,
        placement: PLACE_DIFFERENT_SMS,
        iterations: 1,
        seed,
        sms,
        test_blocks_per_sm: 1,
        slot_bits: 1,
        stride_words: 32,
        stress_iters: 0,
        stress_lines: 2,
        stress_pattern: STRESS_STORE_LOAD,
        pre_stress_iters: 0,
        sm_order: order,
        spin_up: 1,
        max_instances: 1,
        spin_polls: 1,
        gpu: 0,
        gpus: 1,
        multi: core::ptr::null_mut(),
    }
}

/// The launch's order of the SMs: every order is a bijection between the SMs it places and the
/// positions `0..positions()`, `at` its inverse, with whole groups only — for every SM count up
/// to 200, every test size and many launches.
#[test]
fn every_order_of_the_sms_is_a_bijection_onto_whole_groups() {
    for order in [SM_ORDER_ADJACENT, SM_ORDER_SPREAD, SM_ORDER_SHUFFLED] {
        for sms in 1..=200u32 {
            for threads in 1..=LITMUS_MAX_THREADS {
                for seed in 0..8u32 {
                    let o = SmGroups::of(
                        &sm_launch(sms, order, seed.wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995),
                        threads,
                    );
                    let len = o.positions();
                    if order == SM_ORDER_SPREAD {
                        assert!(len <= sms && len.is_multiple_of(threads));
                    } else {
                        assert_eq!(len, sms);
                    }
                    let mut taken = [false; 200];
                    let mut placed = 0;
                    for s in 0..sms {
                        if let Some(p) = o.position(s) {
                            assert!(p < len, "{order} {sms} {threads}: {s} at {p}");
                            assert!(!taken[p as usize], "{order} {sms} {threads}: {p} twice");
                            taken[p as usize] = true;
                            assert_eq!(o.at(p), s, "{order} {sms} {threads} {seed}");
                            placed += 1;
                        }
                    }
                    assert_eq!(placed, len, "{order} {sms} {threads}");
                }
            }
        }
    }
}

#[test]
fn shuffled_orders_differ_between_launches_and_pair_sms_that_are_not_neighbours() {
    let sms = 132;
    let partners: Vec<u32> = (0..16u32)
        .map(|seed| {
            let o = SmGroups::of(
                &sm_launch(
                    sms,
                    SM_ORDER_SHUFFLED,
                    seed.wrapping_mul(0x9e37_79b9) ^ 0x5bd1_e995,
                ),
                2,
            );
            let p = o.position(0).unwrap_or(0);
            o.at(p ^ 1)
        })
        .collect();
    let distinct = partners
        .iter()
        .enumerate()
        .filter(|(i, p)| !partners[..*i].contains(p))
        .count();
    assert!(distinct > 8, "SM 0's partners in 16 launches: {partners:?}");
    assert!(partners.iter().any(|&p| p > 1), "{partners:?}");
}
