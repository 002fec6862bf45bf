//! The primitives' stress runs keep their payload: at system scope across simulated devices,
//! and every lock and barrier on the GPU.

use super::*;

#[test]
fn system_scope_primitives_keep_their_payload_across_simulated_devices() {
    use gridsync_cli::litmus::primitives::{Primitive, PrimitiveOptions, run_all_on};
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
    let shape = gridsync_cli::litmus::primitives::PrimitiveShape::for_target(&Target::Sim);
    let amount = gridsync_cli::litmus::primitives::Amount {
        uses: 1,
        per_launch: 1,
        stress: Stress::default(),
        seed: 1,
    };
    let e = gridsync_cli::litmus::primitives::run_on(
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
fn every_lock_and_barrier_keeps_its_payload_on_the_gpu() {
    let _turn = common::whole_gpu();
    use gridsync::multi::{DeviceList, DeviceSet};
    use gridsync_cli::litmus::primitives::{Primitive, PrimitiveOptions, run_all_on};
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
