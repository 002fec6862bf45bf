//! The stressing parameters: every value places and counts every instance, values out of range
//! are refused naming the option, old reports read back, the help states the defaults.

use super::*;

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
    use gridsync_cli::litmus::tune::{TuneOptions, tune};
    use gridsync_cli::litmus::{MAX_STRESS_ITERS, MAX_STRESS_LINES, MAX_STRIDE_WORDS};
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
