//! The litmus kernel places and counts every instance: on the simulator, across simulated
//! devices, and on the GPU(s).

use super::*;

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
#[cfg_attr(gridsync_no_driver, ignore = "no NVIDIA driver found at build time")]
fn the_kernel_runs_every_test_and_variant_across_the_gpus() {
    let _turn = common::whole_gpu();
    use gridsync::multi::{DeviceList, DeviceSet};
    use gridsync_cli::litmus::run_on;
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
