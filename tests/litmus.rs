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
            for placement in Placement::ALL {
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
    kernel_counts(&common::gpu(), 200_000, &Test::ALL, &Variant::ALL);
}

#[test]
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn every_lock_and_barrier_keeps_its_payload_on_the_gpu() {
    use gridsync::litmus::primitives::{PrimitiveOptions, run_all};
    let t = common::gpu();
    let opts = PrimitiveOptions {
        acquisitions: 2_000_000,
        rounds: 20_000,
        seed: common::seed(),
        ..PrimitiveOptions::for_target(&t)
    };
    let r = run_all(&t, &opts, |_| {}).unwrap();
    for p in &r.runs {
        assert!(p.uses > 0 && p.checks > 0, "{p:?}");
        if !p.primitive.broken() {
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
