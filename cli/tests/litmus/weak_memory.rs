//! The catalogue against the weak memory: the weak outcome exactly where the PTX model allows
//! it (and where a scope is too narrow for the placement), the kernel's outcome keys, seeded
//! weak runs that replay.

use super::*;

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
